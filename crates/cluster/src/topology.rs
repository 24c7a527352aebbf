//! The cluster as one node knows it: every member, its tokens and state, and which peers are
//! up — the one view the storage proxy, the system tables (`system.peers`), the REST API and
//! driver events read.
//!
//! A [`Topology`] is an immutable snapshot; a [`TopologyHandle`] holds the current one and is
//! swapped whole when the membership (kept in the Raft group) or a peer's liveness changes, so
//! a reader never sees half a change. A node alone is a topology of one member
//! ([`Topology::single`]).
//!
//! Invariants: exactly one member is the local node; host ids and addresses are unique; the
//! ring ([`Topology::ring`]) holds the members that own tokens (state
//! [`MemberState::Normal`]; joining and left members own nothing yet or any more).

use crate::error::Result;
use crate::node::{Endpoint, HostId};
use crate::ring::TokenRing;
use cairn_engine::model::Token;
use parking_lot::RwLock;
use std::net::IpAddr;
use std::sync::Arc;

/// Where a member is in its life in the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum MemberState {
    /// Taking its tokens; owns nothing yet.
    Joining,
    /// Owns its tokens.
    Normal,
    /// Gone from the ring (removed or decommissioned); kept so its host id is not reused.
    Left,
}

/// One member of the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Host id, address (`broadcast_address`), data center and rack.
    pub endpoint: Endpoint,
    /// The address clients reach it at (`rpc_address` / `broadcast_rpc_address`).
    pub rpc_address: IpAddr,
    /// Its native-protocol port.
    pub native_port: u16,
    /// Its vnode tokens.
    pub tokens: Vec<Token>,
    /// Where it is in its life.
    pub state: MemberState,
    /// Whether this node currently sees it up (the local node always is).
    pub up: bool,
}

impl Member {
    /// A node alone in its ring, as an executor embedded without a node (tests, examples,
    /// tools) runs: `host_id` at `address` in `datacenter1` / `rack1`, native port 9042, one
    /// token (0), normal and up.
    pub fn alone(host_id: HostId, address: IpAddr) -> Member {
        Member {
            endpoint: Endpoint {
                host_id,
                address,
                datacenter: "datacenter1".into(),
                rack: "rack1".into(),
            },
            rpc_address: address,
            native_port: 9042,
            tokens: vec![Token(0)],
            state: MemberState::Normal,
            up: true,
        }
    }
}

/// A snapshot of the cluster's membership as this node sees it.
#[derive(Debug, Clone)]
pub struct Topology {
    local: HostId,
    members: Vec<Member>,
    ring: TokenRing,
}

impl Topology {
    /// A topology of members (one of which is `local`); the ring is built from the
    /// [`MemberState::Normal`] ones. Refused when two members share a token.
    pub fn new(local: HostId, members: Vec<Member>) -> Result<Topology> {
        let ring = TokenRing::new(
            members
                .iter()
                .filter(|m| m.state == MemberState::Normal)
                .map(|m| (m.endpoint.clone(), m.tokens.clone()))
                .collect(),
        )?;
        Ok(Topology {
            local,
            members,
            ring,
        })
    }

    /// A cluster of one: the local node, owning its tokens.
    pub fn single(local: Member) -> Result<Topology> {
        let id = local.endpoint.host_id;
        Topology::new(id, vec![local])
    }

    /// The local node's host id.
    pub fn local_id(&self) -> HostId {
        self.local
    }

    /// The local member, if it is in the topology (it always is once the node has started).
    pub fn local(&self) -> Option<&Member> {
        self.member(self.local)
    }

    /// Every member, the local one included, in no particular order.
    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// The members other than the local node (what `system.peers` lists), left ones excluded.
    pub fn peers(&self) -> impl Iterator<Item = &Member> {
        self.members
            .iter()
            .filter(move |m| m.endpoint.host_id != self.local && m.state != MemberState::Left)
    }

    /// The member with this host id.
    pub fn member(&self, id: HostId) -> Option<&Member> {
        self.members.iter().find(|m| m.endpoint.host_id == id)
    }

    /// The ring of the members owning tokens.
    pub fn ring(&self) -> &TokenRing {
        &self.ring
    }

    /// Whether the member with this host id is up as this node sees it (unknown ones are
    /// not).
    pub fn is_up(&self, id: HostId) -> bool {
        id == self.local || self.member(id).is_some_and(|m| m.up)
    }
}

/// The current topology, swapped whole on every change.
#[derive(Debug, Clone)]
pub struct TopologyHandle(Arc<RwLock<Arc<Topology>>>);

impl TopologyHandle {
    /// A handle holding `topology`.
    pub fn new(topology: Topology) -> TopologyHandle {
        TopologyHandle(Arc::new(RwLock::new(Arc::new(topology))))
    }

    /// The current snapshot.
    pub fn get(&self) -> Arc<Topology> {
        Arc::clone(&self.0.read())
    }

    /// Replaces the snapshot.
    pub fn set(&self, topology: Topology) {
        *self.0.write() = Arc::new(topology);
    }
}

/// Messaging's TLS policy asks the current topology where a peer is.
impl crate::tls::PeerLocations for TopologyHandle {
    fn location(&self, peer: IpAddr) -> Option<crate::snitch::Location> {
        let topology = self.get();
        let member = topology
            .members()
            .iter()
            .find(|m| m.endpoint.address == peer)?;
        Some(crate::snitch::Location {
            datacenter: member.endpoint.datacenter.clone(),
            rack: member.endpoint.rack.clone(),
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::node::test_endpoint;

    fn member(n: u8, tokens: &[i64], state: MemberState) -> Member {
        Member {
            endpoint: test_endpoint(n),
            rpc_address: IpAddr::from([127, 0, 0, n]),
            native_port: 9042,
            tokens: tokens.iter().map(|t| Token(*t)).collect(),
            state,
            up: false,
        }
    }

    #[test]
    fn the_ring_holds_normal_members_and_peers_exclude_the_local_node() {
        let t = Topology::new(
            HostId([1; 16]),
            vec![
                member(1, &[10], MemberState::Normal),
                member(2, &[20], MemberState::Normal),
                member(3, &[], MemberState::Joining),
                member(4, &[40], MemberState::Left),
            ],
        )
        .unwrap();
        assert_eq!(t.ring().endpoints().len(), 2);
        let peers: Vec<_> = t.peers().map(|m| m.endpoint.address).collect();
        assert_eq!(
            peers,
            vec![IpAddr::from([127, 0, 0, 2]), IpAddr::from([127, 0, 0, 3])]
        );
        assert!(t.is_up(HostId([1; 16])), "the local node is always up");
        assert!(!t.is_up(HostId([2; 16])));
        assert!(!t.is_up(HostId([9; 16])));
    }

    #[test]
    fn a_handle_swaps_whole_snapshots() {
        let h =
            TopologyHandle::new(Topology::single(member(1, &[10], MemberState::Normal)).unwrap());
        let before = h.get();
        h.set(
            Topology::new(
                HostId([1; 16]),
                vec![
                    member(1, &[10], MemberState::Normal),
                    member(2, &[20], MemberState::Normal),
                ],
            )
            .unwrap(),
        );
        assert_eq!(before.members().len(), 1, "a reader keeps its snapshot");
        assert_eq!(h.get().members().len(), 2);
    }
}
