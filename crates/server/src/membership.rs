//! The server's side of cluster membership ([`cairn_cluster::membership`]): the addresses
//! the node advertises, what the node tells its peers about itself ([`NodeProbe`]), and the
//! forwarding of membership changes to drivers as TOPOLOGY_CHANGE and STATUS_CHANGE events.
//!
//! Invariant: an advertised address is never a wildcard (0.0.0.0 or ::) — drivers and peers
//! would connect to themselves (CASSANDRA-11181, ScyllaDB #11201); a wildcard
//! `listen_address` or `rpc_address` needs its `broadcast_…` twin, as in Cassandra.

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

fn advertised(
    what: &str,
    set: Option<&String>,
    fallback: IpAddr,
    fallback_key: &str,
) -> Result<IpAddr, StartError> {
    let ip = match set {
        Some(host) => ip_of(what, host)?,
        None => fallback,
    };
    if ip.is_unspecified() {
        return Err(StartError::Cluster(cairn_cluster::Error::Config(format!(
            "{what} is {ip}, a wildcard: peers and drivers cannot reach a node there. Set \
             {what} to this node's address (needed when {fallback_key} is a wildcard)"
        ))));
    }
    Ok(ip)
}

/// Starts membership for the node `cfg` describes, serving CQL at `native`; returns once
/// the node is in the ring.
pub(crate) async fn start(
    cfg: &Config,
    data_dir: std::path::PathBuf,
    location: Location,
    native: SocketAddr,
    probe: Arc<NodeProbe>,
) -> Result<Arc<Membership>, StartError> {
    let listen = ip_of("listen_address", &cfg.listen_address)?;
    let broadcast = advertised(
        "broadcast_address",
        cfg.broadcast_address.as_ref(),
        listen,
        "listen_address",
    )?;
    let rpc_address = advertised(
        "broadcast_rpc_address",
        cfg.broadcast_rpc_address.as_ref(),
        native.ip(),
        "rpc_address",
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
