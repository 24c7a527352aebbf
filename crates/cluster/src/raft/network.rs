//! Raft's messages over internode messaging (`RAFT` verb, JSON bodies).
//!
//! A request body is a [`RaftRpc`]; the answer is the receiving Raft's result, serialized
//! with its error. A peer that cannot be reached or does not answer in time is
//! `Unreachable` to openraft (it backs off and retries); an answer that cannot be decoded is
//! a network error.

use super::command::{Command, CommandResult};
use super::types::TypeConfig;
use crate::messaging::{Messaging, Verb};
use bytes::Bytes;
use openraft::error::{
    InstallSnapshotError, NetworkError, RPCError, RaftError, RemoteError, Unreachable,
};
use openraft::network::{RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use openraft::BasicNode;
use serde::{Deserialize, Serialize};
use std::net::IpAddr;
use std::sync::Arc;

type NodeId = u64;

/// A message of the Raft group.
#[derive(Debug, Serialize, Deserialize)]
pub enum RaftRpc {
    /// Log replication and heartbeats.
    Append(AppendEntriesRequest<TypeConfig>),
    /// Elections.
    Vote(VoteRequest<NodeId>),
    /// A snapshot chunk.
    Snapshot(InstallSnapshotRequest<TypeConfig>),
    /// A command proposed on a node that is not the leader, forwarded to it.
    Propose(Command),
    /// Make a node a voting member (a joining node's request, forwarded to the leader);
    /// answered with `Result<(), String>`.
    AddVoter {
        /// Its id in the group.
        id: NodeId,
        /// Its address.
        address: String,
    },
}

/// The answer to a forwarded [`RaftRpc::Propose`]: the result, or why it was not committed.
pub type ProposeAnswer = Result<CommandResult, String>;

/// Makes a [`Peer`] per target node.
pub struct Network {
    pub(super) messaging: Arc<Messaging>,
}

/// The connection to one node of the group.
pub struct Peer {
    messaging: Arc<Messaging>,
    target: NodeId,
    address: Option<IpAddr>,
}

impl RaftNetworkFactory<TypeConfig> for Network {
    type Network = Peer;

    async fn new_client(&mut self, target: NodeId, node: &BasicNode) -> Peer {
        Peer {
            messaging: Arc::clone(&self.messaging),
            target,
            address: node.addr.parse().ok(),
        }
    }
}

impl Peer {
    /// Sends `rpc` and decodes the answer as `Result<T, E>` (the remote Raft's result).
    async fn call<T, E>(
        &self,
        rpc: &RaftRpc,
        option: &RPCOption,
    ) -> Result<T, RPCError<NodeId, BasicNode, E>>
    where
        T: serde::de::DeserializeOwned,
        E: std::error::Error + serde::de::DeserializeOwned,
    {
        let Some(address) = self.address else {
            let e = std::io::Error::other(format!("node {} has no address", self.target));
            return Err(RPCError::Unreachable(Unreachable::new(&e)));
        };
        let body = serde_json::to_vec(rpc).map_err(|e| RPCError::Network(NetworkError::new(&e)))?;
        let answer = self
            .messaging
            .request(address, Verb::Raft, Bytes::from(body), option.hard_ttl())
            .await
            .map_err(|e| RPCError::Unreachable(Unreachable::new(&e)))?;
        let result: Result<T, E> = serde_json::from_slice(&answer)
            .map_err(|e| RPCError::Network(NetworkError::new(&e)))?;
        result.map_err(|e| RPCError::RemoteError(RemoteError::new(self.target, e)))
    }
}

impl RaftNetwork<TypeConfig> for Peer {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<NodeId>, RPCError<NodeId, BasicNode, RaftError<NodeId>>> {
        self.call(&RaftRpc::Append(rpc), &option).await
    }

    async fn install_snapshot(
        &mut self,
        rpc: InstallSnapshotRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<
        InstallSnapshotResponse<NodeId>,
        RPCError<NodeId, BasicNode, RaftError<NodeId, InstallSnapshotError>>,
    > {
        self.call(&RaftRpc::Snapshot(rpc), &option).await
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<NodeId>,
        option: RPCOption,
    ) -> Result<VoteResponse<NodeId>, RPCError<NodeId, BasicNode, RaftError<NodeId>>> {
        self.call(&RaftRpc::Vote(rpc), &option).await
    }
}
