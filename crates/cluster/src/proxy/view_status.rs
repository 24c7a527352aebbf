//! Where each materialized view's build stands on every node of the ring — what Cassandra
//! keeps in the replicated `system_distributed.view_build_status` (one row per view and host:
//! STARTED when the host's build starts, SUCCESS when it ends), read by that table, REST
//! `view_build_statuses` and `nodetool viewbuildstatus`.
//!
//! How a node's status reaches the others: **the peers' status poll** of membership
//! ([`NodeStatus::view_builds`], asked over the `MEMBERSHIP` verb every `status_interval`,
//! within a second of a peer coming up), not a replicated table. Why: each node already
//! answers that poll with its schema version and load, and its build state is one node's own
//! (kept in its data directory, `view_builds.rs`) — a table written through the proxy would
//! need a replicated system keyspace, which the ring does not have (its shared state is
//! group 0's log, for the schema and the members). The cost is lag: a peer's change shows
//! here after its next poll (5 s by default), as Cassandra's row shows once its write lands.
//!
//! What each node shows, for a view this node knows:
//! - itself: its build state now (STARTED until its build ends, then SUCCESS);
//! - a peer (a ring member, up or down) whose last polled status lists the view: that status.
//!   A peer that went down keeps its last polled status, as Cassandra shows a down host's last
//!   written row; a node restarted while a peer is down has no status for it and shows none;
//! - a peer whose last status does not list the view (polled before the view reached it, or
//!   before its build started): no row, as a Cassandra host that has not written one yet.
//!
//! Statuses name views by id (hex), so a view dropped and created again under its name is
//! never confused with the old one.

use super::views::Views;
use crate::membership::{ClusterView, ViewBuildReport};
use crate::node::HostId;
use std::net::IpAddr;

/// A view's build on one host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostBuild {
    /// The host's id.
    pub host_id: HostId,
    /// Its address.
    pub address: IpAddr,
    /// Whether its build finished (SUCCESS) or not (STARTED).
    pub built: bool,
}

impl HostBuild {
    /// Cassandra's status text.
    pub fn status(&self) -> &'static str {
        if self.built {
            "SUCCESS"
        } else {
            "STARTED"
        }
    }
}

/// How a view id is written in a node's status.
fn view_key(id: u128) -> String {
    format!("{id:032x}")
}

/// This node's builds of materialized views (not indexes), for its status.
pub fn local_reports(views: &Views) -> Vec<ViewBuildReport> {
    views
        .known()
        .iter()
        .filter(|v| v.index().is_none())
        .map(|v| ViewBuildReport {
            view: view_key(v.id),
            built: views.is_built(v.id),
        })
        .collect()
}

/// View `view`'s build on every host with a status for it (see the module doc), this node
/// first; `local` is this node's id and address, for a node without a cluster (`cluster`
/// `None`), which shows only itself.
pub fn ring_builds(
    views: &Views,
    view: u128,
    cluster: Option<&ClusterView>,
    local: (HostId, IpAddr),
) -> Vec<HostBuild> {
    let mut out = vec![HostBuild {
        host_id: local.0,
        address: local.1,
        built: views.is_built(view),
    }];
    let Some(cluster) = cluster else {
        return out;
    };
    let topology = cluster.topology.get();
    let key = view_key(view);
    for m in topology.peers() {
        let Some(status) = cluster.statuses.get(m.endpoint.address) else {
            continue;
        };
        if let Some(r) = status.view_builds.iter().find(|r| r.view == key) {
            out.push(HostBuild {
                host_id: m.endpoint.host_id,
                address: m.endpoint.address,
                built: r.built,
            });
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::membership::NodeStatus;

    #[test]
    fn a_status_without_view_builds_reads_as_none_and_reports_round_trip() {
        // A node that does not report builds (an older one) still answers the poll.
        let old: NodeStatus =
            serde_json::from_str(r#"{"schema_version":null,"load":1.0}"#).unwrap();
        assert!(old.view_builds.is_empty());
        let status = NodeStatus {
            view_builds: vec![ViewBuildReport {
                view: view_key(0xabc),
                built: true,
            }],
            ..NodeStatus::default()
        };
        let back: NodeStatus =
            serde_json::from_slice(&serde_json::to_vec(&status).unwrap()).unwrap();
        assert_eq!(back, status);
        assert_eq!(back.view_builds[0].view, format!("{:032x}", 0xabcu128));
    }
}
