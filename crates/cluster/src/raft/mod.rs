//! Raft for schema and topology: the cluster's "group 0" (ScyllaDB's name for it).
//!
//! Every node is a member of one Raft group, run by `openraft` (an existing, tested
//! implementation: Cairn writes no consensus of its own). What the group replicates is a
//! small versioned dictionary ([`command`]): schema and topology are entries of it, changed
//! only by commands committed to the log and applied on every node in the same order — so
//! after a DDL every node holds the same schema, and a change proposed while a majority is
//! unreachable fails instead of diverging.
//!
//! The pieces: [`log_store`] (the log and vote on disk), [`state_machine`] (the dictionary
//! and membership, with snapshots), [`network`] (Raft's messages over internode messaging).
//! [`Group0`] ties them together: any node may propose a command — one that is not the
//! leader forwards it to the leader it knows.
//!
//! Node ids: openraft names members by a `u64`; Cairn uses the first 8 bytes of the host id
//! ([`node_id`]), a random UUID, so two nodes colliding is as likely as two random 64-bit
//! numbers being equal. The member's address (`BasicNode::addr`) is its `listen_address`.

pub mod command;
pub mod log_store;
pub mod network;
pub mod state_machine;
pub mod types;

pub use types::{NodeId, TypeConfig};

use crate::error::{Error, Result};
use crate::messaging::{Handler, Messaging, Verb};
use crate::node::HostId;
use bytes::Bytes;
use command::{Command, CommandResult, ReplicatedState};
use network::{Network, ProposeAnswer, RaftRpc};
use openraft::error::{ClientWriteError, RaftError};
use openraft::{BasicNode, ChangeMembers, Raft};
use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The group id of the node with `host_id`.
pub fn node_id(host_id: HostId) -> NodeId {
    let mut b = [0; 8];
    b.copy_from_slice(&host_id.0[..8]);
    u64::from_be_bytes(b)
}

/// The group's timing and snapshots.
#[derive(Debug, Clone, Copy)]
pub struct RaftSettings {
    /// Between two heartbeats of the leader.
    pub heartbeat: Duration,
    /// A follower that hears no leader for a random time in `[election, 2 × election)`
    /// starts an election.
    pub election: Duration,
    /// A snapshot is taken after this many entries, and the log before it purged.
    pub snapshot_after: u64,
}

impl Default for RaftSettings {
    fn default() -> Self {
        RaftSettings {
            heartbeat: Duration::from_millis(250),
            election: Duration::from_millis(1500),
            snapshot_after: 1000,
        }
    }
}

/// This node's member of the group.
pub struct Group0 {
    raft: Raft<TypeConfig>,
    state: Arc<parking_lot::RwLock<ReplicatedState>>,
    versions: Arc<tokio::sync::watch::Sender<u64>>,
    messaging: Arc<Messaging>,
    /// One membership change at a time on this node: openraft refuses a second while one
    /// is in progress, and joiners arriving together would otherwise retry each other out.
    changes: Arc<tokio::sync::Mutex<()>>,
}

fn raft_error(e: impl std::fmt::Display) -> Error {
    Error::Raft(e.to_string())
}

impl Group0 {
    /// Starts this node's member (`id`), keeping its log and snapshots in `dir`, talking
    /// through `messaging` (whose `RAFT` verb it serves from now on).
    pub async fn start(
        id: NodeId,
        dir: &Path,
        messaging: Arc<Messaging>,
        settings: RaftSettings,
    ) -> Result<Group0> {
        let io = |e: std::io::Error| Error::Io {
            path: dir.to_path_buf(),
            source: e,
        };
        let log = log_store::LogStore::open(&dir.join("log")).map_err(io)?;
        let sm = state_machine::StateMachine::open(dir).map_err(io)?;
        let state = Arc::clone(&sm.state);
        let versions = Arc::clone(&sm.versions);
        let config = openraft::Config {
            cluster_name: "cairn-group0".into(),
            heartbeat_interval: settings.heartbeat.as_millis() as u64,
            election_timeout_min: settings.election.as_millis() as u64,
            election_timeout_max: 2 * settings.election.as_millis() as u64,
            snapshot_policy: openraft::SnapshotPolicy::LogsSinceLast(settings.snapshot_after),
            max_in_snapshot_log_to_keep: 0,
            ..Default::default()
        }
        .validate()
        .map_err(raft_error)?;
        let network = Network {
            messaging: Arc::clone(&messaging),
        };
        // openraft re-applies the log up to the saved committed id here, so the state (the
        // ring entries, the schema) is there before the node serves.
        let raft = Raft::new(id, Arc::new(config), network, log, sm)
            .await
            .map_err(raft_error)?;
        let changes = Arc::new(tokio::sync::Mutex::new(()));
        messaging.register(Verb::Raft, rpc_handler(raft.clone(), Arc::clone(&changes)));
        Ok(Group0 {
            raft,
            state,
            versions,
            messaging,
            changes,
        })
    }

    /// Forms the group from `members` (id → address), on a group never initialized; a
    /// group that already is keeps its membership.
    pub async fn initialize(&self, members: &[(NodeId, IpAddr)]) -> Result<()> {
        if self.raft.is_initialized().await.map_err(raft_error)? {
            return Ok(());
        }
        let members: BTreeMap<NodeId, BasicNode> = members
            .iter()
            .map(|(id, ip)| (*id, BasicNode::new(ip.to_string())))
            .collect();
        match self.raft.initialize(members).await {
            Ok(()) => Ok(()),
            // Another member initialized it first: the same group.
            Err(RaftError::APIError(openraft::error::InitializeError::NotAllowed(_))) => Ok(()),
            Err(e) => Err(raft_error(e)),
        }
    }

    /// Commits `cmd` (on the leader, forwarded there from any other node) and returns what
    /// applying it did; fails if no leader commits it within `timeout`.
    pub async fn propose(&self, cmd: Command, timeout: Duration) -> Result<CommandResult> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let attempt = tokio::time::timeout(left, self.raft.client_write(cmd.clone())).await;
            let leader = match attempt {
                Err(_) => return Err(Error::Raft(format!("no commit within {timeout:?}"))),
                Ok(Ok(r)) => return Ok(r.data),
                Ok(Err(RaftError::APIError(ClientWriteError::ForwardToLeader(f)))) => f.leader_node,
                Ok(Err(e)) => return Err(raft_error(e)),
            };
            let Some(address) = leader.and_then(|n| n.addr.parse::<IpAddr>().ok()) else {
                // No leader known yet (an election is on): try again shortly.
                tokio::time::sleep(Duration::from_millis(50).min(left)).await;
                if tokio::time::Instant::now() >= deadline {
                    return Err(Error::Raft(format!("no leader within {timeout:?}")));
                }
                continue;
            };
            let body = serde_json::to_vec(&RaftRpc::Propose(cmd.clone())).map_err(raft_error)?;
            let answer = self
                .messaging
                .request(address, Verb::Raft, Bytes::from(body), left)
                .await?;
            let answer: ProposeAnswer = serde_json::from_slice(&answer).map_err(raft_error)?;
            return answer.map_err(Error::Raft);
        }
    }

    /// Whether this node's member belongs to a group already (it initialized one, joined
    /// one, or has one in its log from an earlier start).
    pub async fn is_initialized(&self) -> Result<bool> {
        self.raft.is_initialized().await.map_err(raft_error)
    }

    /// The group's members as this node knows them (id → address), and which of them vote.
    pub fn members(&self) -> (BTreeMap<NodeId, IpAddr>, BTreeSet<NodeId>) {
        let metrics = self.raft.metrics();
        let m = metrics.borrow();
        let nodes = m
            .membership_config
            .nodes()
            .filter_map(|(id, n)| Some((*id, n.addr.parse().ok()?)))
            .collect();
        (nodes, m.membership_config.voter_ids().collect())
    }

    /// Makes node `id` at `address` a voting member: first a learner brought up to date, then
    /// a voter (openraft's joint-consensus membership change), on the leader — forwarded
    /// there from any other member. Nothing to do when it already votes.
    pub async fn add_voter(&self, id: NodeId, address: IpAddr, timeout: Duration) -> Result<()> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let attempt = tokio::time::timeout(left, async {
                let _one = self.changes.lock().await;
                add_voter_here(&self.raft, id, address).await
            })
            .await;
            let retry = match attempt {
                Err(_) => {
                    return Err(Error::Raft(format!(
                        "no membership change within {timeout:?}"
                    )))
                }
                Ok(Ok(())) => return Ok(()),
                Ok(Err(AddVoterError::Forward(Some(leader)))) => {
                    let body = serde_json::to_vec(&RaftRpc::AddVoter {
                        id,
                        address: address.to_string(),
                    })
                    .map_err(raft_error)?;
                    match self
                        .messaging
                        .request(leader, Verb::Raft, Bytes::from(body), left)
                        .await
                    {
                        Ok(answer) => {
                            let answer: std::result::Result<(), String> =
                                serde_json::from_slice(&answer).map_err(raft_error)?;
                            match answer {
                                Ok(()) => return Ok(()),
                                Err(e) => e,
                            }
                        }
                        Err(e) => e.to_string(),
                    }
                }
                Ok(Err(AddVoterError::Forward(None))) => "no leader known yet".to_string(),
                Ok(Err(AddVoterError::Retry(e))) => e,
                Ok(Err(AddVoterError::Fatal(e))) => return Err(Error::Raft(e)),
            };
            // An election, or another membership change in progress: try again shortly.
            if tokio::time::Instant::now() >= deadline {
                return Err(Error::Raft(format!(
                    "node {address} could not be added to the group within {timeout:?}: {retry}"
                )));
            }
            tokio::time::sleep(Duration::from_millis(100).min(left)).await;
        }
    }

    /// The replicated state as this node has applied it.
    pub fn state(&self) -> ReplicatedState {
        self.state.read().clone()
    }

    /// The leader this node knows of.
    pub async fn leader(&self) -> Option<NodeId> {
        self.raft.current_leader().await
    }

    /// Waits until this node has applied the state's version `version` (or `timeout`).
    pub async fn wait_for_version(&self, version: u64, timeout: Duration) -> Result<()> {
        let mut versions = self.versions.subscribe();
        let reached = tokio::time::timeout(timeout, async {
            versions.wait_for(|v| *v >= version).await.is_ok()
        })
        .await;
        match reached {
            Ok(true) => Ok(()),
            Ok(false) => Err(Error::Raft("the group is shutting down".into())),
            Err(_) => Err(Error::Raft(format!(
                "version {version} not applied within {timeout:?}"
            ))),
        }
    }

    /// The state's version as this node applies it: changes whenever a command is applied
    /// or a snapshot installed.
    pub fn versions(&self) -> tokio::sync::watch::Receiver<u64> {
        self.versions.subscribe()
    }

    pub async fn shutdown(&self) {
        self.messaging.unregister(Verb::Raft);
        let _ = self.raft.shutdown().await;
    }
}

/// Why adding a voter on this node did not complete.
enum AddVoterError {
    /// This node is not the leader: the leader's address, if known.
    Forward(Option<IpAddr>),
    /// Worth retrying (another membership change in progress, a lost leadership).
    Retry(String),
    /// Not worth retrying.
    Fatal(String),
}

/// Adds `id` as a learner, then makes it a voter, if this node is the leader.
async fn add_voter_here(
    raft: &Raft<TypeConfig>,
    id: NodeId,
    address: IpAddr,
) -> std::result::Result<(), AddVoterError> {
    let classify = |e: RaftError<NodeId, ClientWriteError<NodeId, BasicNode>>| match e {
        RaftError::APIError(ClientWriteError::ForwardToLeader(f)) => {
            AddVoterError::Forward(f.leader_node.and_then(|n| n.addr.parse::<IpAddr>().ok()))
        }
        RaftError::APIError(ClientWriteError::ChangeMembershipError(e)) => {
            AddVoterError::Retry(e.to_string())
        }
        RaftError::Fatal(e) => AddVoterError::Fatal(e.to_string()),
    };
    if raft
        .metrics()
        .borrow()
        .membership_config
        .voter_ids()
        .any(|v| v == id)
    {
        return Ok(());
    }
    raft.add_learner(id, BasicNode::new(address.to_string()), true)
        .await
        .map_err(classify)?;
    let voters: BTreeSet<NodeId> = [id].into_iter().collect();
    raft.change_membership(ChangeMembers::AddVoterIds(voters), false)
        .await
        .map_err(classify)?;
    Ok(())
}

/// Serves the `RAFT` verb: Raft's own messages, and commands forwarded to this node.
fn rpc_handler(raft: Raft<TypeConfig>, changes: Arc<tokio::sync::Mutex<()>>) -> Handler {
    Arc::new(move |_from: IpAddr, body: Bytes| {
        let raft = raft.clone();
        let changes = Arc::clone(&changes);
        Box::pin(async move {
            let rpc: RaftRpc = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
            let answer = match rpc {
                RaftRpc::Append(r) => serde_json::to_vec(&raft.append_entries(r).await),
                RaftRpc::Vote(r) => serde_json::to_vec(&raft.vote(r).await),
                RaftRpc::Snapshot(r) => serde_json::to_vec(&raft.install_snapshot(r).await),
                RaftRpc::AddVoter { id, address } => {
                    let answer: std::result::Result<(), String> = match address.parse() {
                        Ok(ip) => {
                            let _one = changes.lock().await;
                            add_voter_here(&raft, id, ip).await
                        }
                        .map_err(|e| match e {
                            AddVoterError::Forward(_) => "not the leader any more".to_string(),
                            AddVoterError::Retry(e) | AddVoterError::Fatal(e) => e,
                        }),
                        Err(_) => Err(format!("`{address}` is not an address")),
                    };
                    serde_json::to_vec(&answer)
                }
                RaftRpc::Propose(cmd) => {
                    let answer: ProposeAnswer = raft
                        .client_write(cmd)
                        .await
                        .map(|r| r.data)
                        .map_err(|e| e.to_string());
                    serde_json::to_vec(&answer)
                }
            };
            answer.map(Bytes::from).map_err(|e| e.to_string())
        })
    })
}
