//! The server's side of cluster membership ([`cairn_cluster::membership`]): the addresses
//! the node advertises, what the node tells its peers about itself ([`NodeProbe`]), and the
//! forwarding of membership changes to drivers as TOPOLOGY_CHANGE and STATUS_CHANGE events.
//!
//! Invariant: an advertised address is never a wildcard (0.0.0.0 or ::) — drivers and peers
//! would connect to themselves (CASSANDRA-11181, ScyllaDB #11201). As in Cassandra,
//! `listen_address` is never one, and a wildcard `rpc_address` needs `broadcast_rpc_address`.

use crate::config::{self, Config};
use crate::protocol::{Event, EventBus, StatusChangeType, TopologyChangeType};
use crate::StartError;
use cairn_cluster::identity::TokenConfig;
use cairn_cluster::membership::{EventKind, LocalNode, Membership, MembershipConfig, NodeStatus};
use cairn_cluster::snitch::Location;
use cairn_engine::Database;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// What a node tells its peers about itself. The executor comes after membership (it needs
/// the node's tokens), so it is set once it exists.
pub(crate) struct NodeProbe {
    pub(crate) db: Arc<Database>,
    pub(crate) executor: OnceLock<Arc<cairn_cql::exec::Executor>>,
}

impl LocalNode for NodeProbe {
    fn status(&self) -> NodeStatus {
        NodeStatus {
            schema_version: self.executor.get().map(|e| e.catalog().schema_version()),
            load: crate::rest::node_api::live_disk_bytes(&self.db),
            view_builds: self.executor.get().map_or_else(Vec::new, |e| {
                cairn_cluster::proxy::view_status::local_reports(e.proxy().views())
            }),
        }
    }

    fn user_data(&self) -> Option<String> {
        self.db.tables().iter().find_map(|t| {
            let s = t.schema();
            if s.keyspace.starts_with("system") {
                return None;
            }
            let has = t.memtable_bytes() > 0 || t.stats().is_ok_and(|st| st.sstable_count > 0);
            has.then(|| format!("{}.{}", s.keyspace, s.name))
        })
    }

    fn schema_applied(&self) -> u64 {
        self.executor
            .get()
            .map_or(0, |e| e.catalog().applied_version())
    }
}

fn ip_of(what: &str, host: &str) -> Result<IpAddr, StartError> {
    config::socket_addr(host, 0)
        .map(|a| a.ip())
        .map_err(|source| StartError::Listen {
            what: "cluster address",
            addr: format!("{what} {host}"),
            source,
        })
}

/// Cassandra's checks, with its words: no wildcard is ever advertised.
fn check_addresses(
    listen: IpAddr,
    broadcast: IpAddr,
    rpc: IpAddr,
    rpc_set: bool,
) -> Result<(), StartError> {
    let refuse = |m: String| Err(StartError::Cluster(cairn_cluster::Error::Config(m)));
    if listen.is_unspecified() {
        return refuse(format!(
            "listen_address cannot be a wildcard address ({listen})!"
        ));
    }
    if broadcast.is_unspecified() {
        return refuse(format!(
            "broadcast_address cannot be a wildcard address ({broadcast})!"
        ));
    }
    if rpc.is_unspecified() {
        return refuse(if rpc_set {
            format!("broadcast_rpc_address cannot be a wildcard address ({rpc})!")
        } else {
            format!(
                "If rpc_address is set to a wildcard address ({rpc}), then you must set \
                 broadcast_rpc_address to a value other than {rpc}"
            )
        });
    }
    Ok(())
}

/// Starts membership for the node `cfg` describes, serving CQL at `native` (and binding the
/// `reserved_ports` itself afterwards), its messaging over `tls` when set; returns once the
/// node is in the ring.
pub(crate) async fn start(
    cfg: &Config,
    data_dir: std::path::PathBuf,
    location: Location,
    native: SocketAddr,
    reserved_ports: Vec<u16>,
    probe: Arc<NodeProbe>,
    tls: Option<cairn_cluster::tls::InternodeTls>,
) -> Result<Arc<Membership>, StartError> {
    let listen = ip_of("listen_address", &cfg.listen_address)?;
    let broadcast = match &cfg.broadcast_address {
        Some(host) => ip_of("broadcast_address", host)?,
        None => listen,
    };
    let rpc_address = match &cfg.broadcast_rpc_address {
        Some(host) => ip_of("broadcast_rpc_address", host)?,
        None => native.ip(),
    };
    check_addresses(
        listen,
        broadcast,
        rpc_address,
        cfg.broadcast_rpc_address.is_some(),
    )?;
    let seeds = cfg
        .seeds
        .iter()
        .map(|s| ip_of("seed", s))
        .collect::<Result<Vec<_>, _>>()?;
    let config = MembershipConfig {
        data_dir,
        cluster_name: cfg.cluster_name.clone(),
        listen,
        broadcast,
        rpc_address,
        native_port: native.port(),
        storage_port: cfg.storage_port,
        seeds,
        reserved_ports,
        tokens: TokenConfig {
            num_tokens: cfg.num_tokens as usize,
            initial_token: cfg.initial_token.clone(),
        },
        location,
        liveness: Default::default(),
        raft: Default::default(),
        // Joining waits for the seeds to start too (a fresh cluster's nodes start in any
        // order), but not forever.
        join_timeout: Duration::from_secs(120),
        status_interval: Duration::from_secs(5),
        tls,
    };
    Ok(Membership::start(config, probe).await?)
}

/// Publishes every membership change to drivers until the node stops.
pub(crate) fn forward_events(
    membership: &Membership,
    events: EventBus,
) -> tokio::task::JoinHandle<()> {
    let mut changes = membership.subscribe();
    tokio::spawn(async move {
        loop {
            let change = match changes.recv().await {
                Ok(c) => c,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                    tracing::warn!("{n} membership events were not sent to drivers");
                    continue;
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            };
            let address = SocketAddr::new(change.rpc_address, change.native_port);
            let topology = |change| Event::TopologyChange { change, address };
            let status = |change| Event::StatusChange { change, address };
            events.publish(match change.kind {
                EventKind::NewNode => topology(TopologyChangeType::NewNode),
                EventKind::RemovedNode => topology(TopologyChangeType::RemovedNode),
                EventKind::Up => status(StatusChangeType::Up),
                EventKind::Down => status(StatusChangeType::Down),
            });
        }
    })
}

/// How long a node that applied another node's schema change waits for the peers' versions.
const SCHEMA_SETTLE: Duration = Duration::from_secs(2);

/// Applies group 0's schema whenever its state changes (another node's schema change, or
/// this node catching up), and publishes what changed to drivers as SCHEMA_CHANGE events,
/// until the node stops.
pub(crate) fn follow_schema(
    membership: &Arc<Membership>,
    executor: Arc<cairn_cql::exec::Executor>,
    events: EventBus,
) -> tokio::task::JoinHandle<()> {
    let mut versions = membership.group().versions();
    let membership = Arc::downgrade(membership);
    tokio::spawn(async move {
        while versions.changed().await.is_ok() {
            let executor = Arc::clone(&executor);
            let synced = tokio::task::spawn_blocking(move || {
                let changes = executor.sync_schema()?;
                Ok::<_, cairn_cql::Error>((changes, executor.catalog().applied_version()))
            })
            .await;
            match synced {
                Ok(Ok((changes, version))) => {
                    for c in &changes {
                        events.publish(Event::SchemaChange(crate::cql::schema_change(c)));
                    }
                    // Drivers connected here check agreement in this node's system.peers:
                    // ask the peers for their versions now rather than at the next poll.
                    if let (false, Some(m)) = (changes.is_empty(), membership.upgrade()) {
                        m.await_schema(version, SCHEMA_SETTLE).await;
                    }
                }
                Ok(Err(e)) => tracing::error!("the schema from group 0 could not be applied: {e}"),
                Err(e) => tracing::error!("applying the schema from group 0 failed: {e}"),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_wildcard_is_advertised() {
        let any = IpAddr::from([0, 0, 0, 0]);
        let one = IpAddr::from([127, 0, 0, 1]);
        assert!(check_addresses(one, one, one, false).is_ok());
        let e = |r: Result<(), StartError>| r.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e(check_addresses(any, one, one, false))
            .contains("listen_address cannot be a wildcard address (0.0.0.0)!"));
        assert!(e(check_addresses(one, any, one, false))
            .contains("broadcast_address cannot be a wildcard address"));
        assert!(e(check_addresses(one, one, any, false)).contains(
            "If rpc_address is set to a wildcard address (0.0.0.0), then you must set \
             broadcast_rpc_address to a value other than 0.0.0.0"
        ));
        assert!(e(check_addresses(one, one, any, true))
            .contains("broadcast_rpc_address cannot be a wildcard address"));
    }
}
