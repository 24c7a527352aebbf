//! Replica placement: which nodes hold a token's replicas, exactly as Cassandra computes it.
//!
//! Drivers compute replicas themselves, from `system_schema.keyspaces.replication` and the
//! token map, and send each request to a replica; placement that differs from Cassandra's
//! would send requests to nodes that must forward them. So the rules here are Cassandra 5.0's
//! (`SimpleStrategy`, `NetworkTopologyStrategy.calculateNaturalReplicas`), replica order
//! included (the first replica is the token range's primary owner):
//!
//! - **SimpleStrategy**: walk the ring clockwise from the first token at or after the key's
//!   token and take the first `replication_factor` distinct nodes.
//! - **NetworkTopologyStrategy**: one walk for all data centers. In each data center with a
//!   factor, a node is taken when it is the first seen of its rack; a node of a rack already
//!   used is taken only while the data center has fewer racks than its factor, and only
//!   `factor − racks` such repeats in all — so replicas spread over racks first. A data center
//!   with fewer nodes than its factor gets all of them. Data centers named in the options but
//!   absent from the ring get nothing.
//! - **LocalStrategy** (the `system` keyspaces): every node holds its own copy; the replica
//!   is the node asking.
//!
//! The options are validated where the keyspace is created (`cairn-cql`'s `replication`);
//! here a strategy is already a list of numbers.

use crate::node::HostId;
use crate::ring::TokenRing;
use cairn_engine::model::Token;
use std::collections::{HashMap, HashSet};

/// A keyspace's replication strategy, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplicationStrategy {
    /// `SimpleStrategy`: `replication_factor` distinct nodes clockwise.
    Simple {
        /// Replicas.
        replication_factor: usize,
    },
    /// `NetworkTopologyStrategy`: per data center, a factor.
    NetworkTopology {
        /// (data center, replicas); data centers with 0 are left out.
        datacenters: Vec<(String, usize)>,
    },
    /// `LocalStrategy`: the local node only.
    Local,
}

impl ReplicationStrategy {
    /// The replicas of `token` on `ring`, as indexes into [`TokenRing::endpoints`], the
    /// primary first. `local` is the node asking (the replica of a `Local` keyspace).
    pub fn replicas(&self, ring: &TokenRing, token: Token, local: Option<HostId>) -> Vec<usize> {
        match self {
            ReplicationStrategy::Simple { replication_factor } => {
                simple(ring, token, *replication_factor)
            }
            ReplicationStrategy::NetworkTopology { datacenters } => {
                network_topology(ring, token, datacenters)
            }
            ReplicationStrategy::Local => {
                local.and_then(|h| ring.position(h)).into_iter().collect()
            }
        }
    }

    /// Replicas the strategy asks for in total (Cassandra's `getReplicationFactor`).
    pub fn replication_factor(&self) -> usize {
        match self {
            ReplicationStrategy::Simple { replication_factor } => *replication_factor,
            ReplicationStrategy::NetworkTopology { datacenters } => {
                datacenters.iter().map(|(_, rf)| rf).sum()
            }
            ReplicationStrategy::Local => 1,
        }
    }
}

fn simple(ring: &TokenRing, token: Token, rf: usize) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::with_capacity(rf);
    for (_, e) in ring.walk(token) {
        if out.len() >= rf {
            break;
        }
        if !out.contains(&e) {
            out.push(e);
        }
    }
    out
}

/// One data center's filling state (Cassandra's `DatacenterEndpoints`).
struct Filling {
    /// Replicas still wanted here.
    left: usize,
    /// Nodes of racks already used that may still be taken.
    rack_repeats: isize,
}

fn network_topology(ring: &TokenRing, token: Token, datacenters: &[(String, usize)]) -> Vec<usize> {
    // Nodes and racks per data center, among the nodes that own tokens (Cassandra's
    // topology of the token metadata).
    let mut owning: HashSet<usize> = HashSet::new();
    for (_, e) in ring.tokens() {
        owning.insert(*e);
    }
    let mut nodes: HashMap<&str, usize> = HashMap::new();
    let mut racks: HashMap<&str, HashSet<&str>> = HashMap::new();
    for &i in &owning {
        let e = &ring.endpoints()[i];
        *nodes.entry(e.datacenter.as_str()).or_default() += 1;
        racks
            .entry(e.datacenter.as_str())
            .or_default()
            .insert(e.rack.as_str());
    }
    let mut filling: HashMap<&str, Filling> = HashMap::new();
    for (dc, rf) in datacenters {
        let node_count = nodes.get(dc.as_str()).copied().unwrap_or(0);
        if *rf == 0 || node_count == 0 {
            continue;
        }
        let rack_count = racks.get(dc.as_str()).map_or(0, HashSet::len);
        filling.insert(
            dc.as_str(),
            Filling {
                left: (*rf).min(node_count),
                rack_repeats: *rf as isize - rack_count as isize,
            },
        );
    }
    let mut to_fill = filling.len();
    let mut out: Vec<usize> = Vec::new();
    // Racks used so far, by (data center, rack), shared by all data centers as in Cassandra.
    let mut seen_racks: HashSet<(&str, &str)> = HashSet::new();
    for (_, i) in ring.walk(token) {
        if to_fill == 0 {
            break;
        }
        let e = &ring.endpoints()[i];
        let Some(f) = filling.get_mut(e.datacenter.as_str()) else {
            continue;
        };
        if f.left == 0 || out.contains(&i) {
            continue;
        }
        if seen_racks.insert((e.datacenter.as_str(), e.rack.as_str())) {
            // The first node of its rack.
        } else if f.rack_repeats <= 0 {
            // Every replica left must go to a rack not used yet.
            continue;
        } else {
            f.rack_repeats -= 1;
        }
        out.push(i);
        f.left -= 1;
        if f.left == 0 {
            to_fill -= 1;
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::node::Endpoint;

    /// A ring from (node number, dc, rack, tokens).
    fn ring(nodes: &[(u8, &str, &str, &[i64])]) -> TokenRing {
        TokenRing::new(
            nodes
                .iter()
                .map(|(n, dc, rack, ts)| {
                    (
                        Endpoint {
                            host_id: HostId([*n; 16]),
                            address: std::net::IpAddr::from([127, 0, 0, *n]),
                            datacenter: dc.to_string(),
                            rack: rack.to_string(),
                        },
                        ts.iter().map(|t| Token(*t)).collect(),
                    )
                })
                .collect(),
        )
        .unwrap()
    }

    /// Replicas as node numbers (index + 1, as the rings below number them).
    fn numbers(v: Vec<usize>) -> Vec<usize> {
        v.into_iter().map(|i| i + 1).collect()
    }

    #[test]
    fn simple_takes_distinct_nodes_clockwise() {
        let r = ring(&[
            (1, "dc1", "r1", &[0, 300]),
            (2, "dc1", "r1", &[100]),
            (3, "dc1", "r1", &[200]),
        ]);
        let s = |rf, t| {
            numbers(
                ReplicationStrategy::Simple {
                    replication_factor: rf,
                }
                .replicas(&r, Token(t), None),
            )
        };
        assert_eq!(s(2, 50), [2, 3]);
        assert_eq!(s(3, 250), [1, 2, 3]); // 300 (node 1), wrap: 0 (node 1 again), 100, 200
        assert_eq!(s(2, 0), [1, 2]);
        assert_eq!(s(5, 150), [3, 1, 2]); // more than the nodes: all of them
        assert_eq!(s(1, 301), [1]);
    }

    #[test]
    fn network_topology_spreads_over_racks_first() {
        // dc1: nodes 1,2 in r1, node 3 in r2; walk from 0: 1(r1) 2(r1) 3(r2).
        let r = ring(&[
            (1, "dc1", "r1", &[10]),
            (2, "dc1", "r1", &[20]),
            (3, "dc1", "r2", &[30]),
            (4, "dc2", "r1", &[15]),
        ]);
        let nts = |dcs: &[(&str, usize)], t| {
            numbers(
                ReplicationStrategy::NetworkTopology {
                    datacenters: dcs.iter().map(|(d, n)| (d.to_string(), *n)).collect(),
                }
                .replicas(&r, Token(t), None),
            )
        };
        // RF 2 with 2 racks: no repeat allowed, node 2 is skipped for node 3.
        assert_eq!(nts(&[("dc1", 2)], 0), [1, 3]);
        // RF 3 with 2 racks: one repeat allowed, taken as soon as met.
        assert_eq!(nts(&[("dc1", 3)], 0), [1, 2, 3]);
        // Both data centers in one walk, in ring order.
        assert_eq!(nts(&[("dc1", 2), ("dc2", 1)], 0), [1, 4, 3]);
        // A data center absent from the ring gets nothing; one with fewer nodes gets all.
        assert_eq!(nts(&[("dc3", 3), ("dc2", 3)], 0), [4]);
        assert_eq!(nts(&[("dc1", 0)], 0), Vec::<usize>::new());
    }

    #[test]
    fn network_topology_rack_names_are_per_datacenter() {
        // Rack r1 exists in both data centers: using dc1's r1 does not use dc2's.
        let r = ring(&[
            (1, "dc1", "r1", &[10]),
            (2, "dc2", "r1", &[20]),
            (3, "dc2", "r2", &[30]),
        ]);
        let s = ReplicationStrategy::NetworkTopology {
            datacenters: vec![("dc1".into(), 1), ("dc2".into(), 2)],
        };
        assert_eq!(numbers(s.replicas(&r, Token(0), None)), [1, 2, 3]);
        assert_eq!(s.replication_factor(), 3);
    }

    #[test]
    fn local_is_the_asking_node() {
        let r = ring(&[(1, "dc1", "r1", &[10]), (2, "dc1", "r1", &[20])]);
        let s = ReplicationStrategy::Local;
        assert_eq!(
            numbers(s.replicas(&r, Token(0), Some(HostId([2; 16])))),
            [2]
        );
        assert!(s.replicas(&r, Token(0), None).is_empty());
    }
}
