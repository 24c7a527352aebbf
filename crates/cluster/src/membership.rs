//! Membership: the node's place in the cluster — finding the ring through the seeds, forming
//! or joining the Raft group (group 0), its entry in the ring, and the [`TopologyHandle`]
//! everything else reads.
//!
//! [`Membership::start`] owns internode messaging, liveness and group 0; the server only
//! starts it and shuts it down. What it does on start:
//!
//! - **restart** (the group is in the node's log already): rejoins it from the log — never
//!   initializes again; if its ring entry is missing or stale (new address, a crash in the
//!   middle of joining) it is proposed again in the background;
//! - **no seeds, or only itself**: forms a group of one and enters the ring as `Normal`;
//! - **seeds**: discovery (ScyllaDB's design): it asks every other seed whether it is in a
//!   group. If one is, the node joins through it; if none is, the seed with the smallest
//!   group id forms the group once every seed has answered — so nodes started at once with
//!   the same seed list form exactly one group — and the others find it and join. A node
//!   that is not a seed never forms a group.
//! - **joining**: refused when any member holds user data (joining would need streaming,
//!   which does not exist yet: the node would own ranges whose data it does not have) or
//!   cannot be asked. Otherwise a member makes it a learner then a voter (on the leader);
//!   the node chooses its tokens against the ring read from the group, proposes itself
//!   `Joining` (with the state version it read, so two joiners never choose against the same
//!   ring), then `Normal`.
//!
//! Each member's ring entry is `node/<host id>` in the group's replicated dictionary
//! ([`MemberEntry`], JSON). The topology is rebuilt from the entries and liveness whenever
//! either changes, swapped whole, and each change a driver cares about is published
//! ([`MembershipEvent`]: NEW_NODE, REMOVED_NODE, UP, DOWN). Peers' statuses (schema
//! version, load, view builds) are polled every few seconds for `system.peers`, nodetool and
//! `system_distributed.view_build_status`.
//!
//! Invariants: a node initializes a group only when it has none and discovery says it must;
//! it never enters a ring holding data; the topology always holds the local node.

use crate::error::{Error, Result};
use crate::identity::{self, NodeIdentity, TokenConfig};
use crate::liveness::{Liveness, LivenessConfig, Status};
use crate::messaging::{Handler, Messaging, MessagingConfig, Verb};
use crate::node::{Endpoint, HostId};
use crate::raft::command::{Command, CommandResult, Op, ReplicatedState};
use crate::raft::{node_id, Group0, NodeId, RaftSettings};
use crate::ring::TokenRing;
use crate::snitch::Location;
use crate::tokens;
use crate::topology::{Member, MemberState, Topology, TopologyHandle};
use bytes::Bytes;
use cairn_engine::model::Token;
use parking_lot::RwLock;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

/// The prefix of members' keys in the replicated dictionary.
const NODE_PREFIX: &str = "node/";

/// What this node says about itself to a peer that asks (`system.peers`, nodetool).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeStatus {
    /// Its schema version (a UUID's bytes), once it serves CQL.
    pub schema_version: Option<[u8; 16]>,
    /// Bytes of live sstables (nodetool's load).
    pub load: f64,
    /// Its builds of materialized views (`proxy::view_status`); absent from a node that
    /// does not report them.
    #[serde(default)]
    pub view_builds: Vec<ViewBuildReport>,
}

/// One view's build on the node reporting it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewBuildReport {
    /// The view's id, 32 hex digits.
    pub view: String,
    /// Finished (SUCCESS) or not (STARTED).
    pub built: bool,
}

/// What membership asks of the node it runs in.
pub trait LocalNode: Send + Sync + 'static {
    /// The node's schema version and load.
    fn status(&self) -> NodeStatus;
    /// The first table outside the system keyspaces that holds data (`ks.table`), if any.
    fn user_data(&self) -> Option<String>;
    /// The version of group 0's state the node's schema has been brought to (its catalog
    /// applied every schema entry up to it).
    fn schema_applied(&self) -> u64;
}

/// Membership's settings.
#[derive(Debug, Clone)]
pub struct MembershipConfig {
    /// Where the identity (host id, tokens) and group 0 (`group0/`) are kept.
    pub data_dir: PathBuf,
    /// `cluster_name`.
    pub cluster_name: String,
    /// `listen_address`: messaging listens here and sends from here.
    pub listen: IpAddr,
    /// `broadcast_address`: the address peers know this node by.
    pub broadcast: IpAddr,
    /// `broadcast_rpc_address`: the address clients reach it at.
    pub rpc_address: IpAddr,
    /// Its native-protocol port.
    pub native_port: u16,
    /// `storage_port` (the same on every node).
    pub storage_port: u16,
    /// `seed_provider`'s seeds; empty: a cluster of one that listens for no peers
    /// (messaging then takes any free port, so nodes alone never compete for one).
    pub seeds: Vec<IpAddr>,
    /// Ports the node binds itself after membership starts (native, REST, Prometheus): a free
    /// port taken for messaging is never one of them, or the node would refuse its own start.
    pub reserved_ports: Vec<u16>,
    /// `num_tokens`, `initial_token`.
    pub tokens: TokenConfig,
    /// Data center and rack.
    pub location: Location,
    /// Liveness timing.
    pub liveness: LivenessConfig,
    /// Raft timing.
    pub raft: RaftSettings,
    /// How long discovery and joining may take before the node gives up.
    pub join_timeout: Duration,
    /// Between two polls of the peers' statuses.
    pub status_interval: Duration,
    /// Messaging's TLS (`server_encryption_options`); `None`: plaintext.
    pub tls: Option<crate::tls::InternodeTls>,
}

/// A member's entry in the group (`node/<host id>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberEntry {
    /// Host id (UUID text).
    pub host_id: String,
    /// `broadcast_address`.
    pub address: IpAddr,
    /// `broadcast_rpc_address`.
    pub rpc_address: IpAddr,
    /// Native-protocol port.
    pub native_port: u16,
    /// Tokens.
    pub tokens: Vec<i64>,
    /// Data center.
    pub datacenter: String,
    /// Rack.
    pub rack: String,
    /// State.
    pub state: MemberState,
}

impl MemberEntry {
    fn to_member(&self, up: bool) -> Option<Member> {
        Some(Member {
            endpoint: Endpoint {
                host_id: HostId::parse(&self.host_id)?,
                address: self.address,
                datacenter: self.datacenter.clone(),
                rack: self.rack.clone(),
            },
            rpc_address: self.rpc_address,
            native_port: self.native_port,
            tokens: self.tokens.iter().map(|t| Token(*t)).collect(),
            state: self.state,
            up,
        })
    }
}

/// The members' entries in `state`, by host id text.
pub fn entries(state: &ReplicatedState) -> Vec<MemberEntry> {
    state
        .entries
        .range(NODE_PREFIX.to_string()..)
        .take_while(|(k, _)| k.starts_with(NODE_PREFIX))
        .filter_map(|(k, v)| match serde_json::from_str(v) {
            Ok(e) => Some(e),
            Err(e) => {
                tracing::error!("group 0 entry {k} cannot be read: {e}");
                None
            }
        })
        .collect()
}

/// What changed in the cluster, for drivers (the CQL server's TOPOLOGY_CHANGE and
/// STATUS_CHANGE events).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MembershipEvent {
    /// What happened.
    pub kind: EventKind,
    /// The member's client address.
    pub rpc_address: IpAddr,
    /// Its native-protocol port.
    pub native_port: u16,
}

/// What happened to a member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// It entered the ring (NEW_NODE).
    NewNode,
    /// It left the ring (REMOVED_NODE).
    RemovedNode,
    /// It is up (UP).
    Up,
    /// It is down (DOWN).
    Down,
}

/// The statuses of the peers, as last polled (by address).
#[derive(Debug, Clone, Default)]
pub struct PeerStatuses(Arc<RwLock<HashMap<IpAddr, NodeStatus>>>);

impl PeerStatuses {
    /// The last status `peer` reported, if any.
    pub fn get(&self, peer: IpAddr) -> Option<NodeStatus> {
        self.0.read().get(&peer).cloned()
    }
}

/// What the rest of the node reads of the cluster: the topology and the peers' statuses.
#[derive(Debug, Clone)]
pub struct ClusterView {
    /// The membership.
    pub topology: TopologyHandle,
    /// The peers' statuses.
    pub statuses: PeerStatuses,
}

/// A membership request (`MEMBERSHIP` verb, JSON).
#[derive(Debug, Serialize, Deserialize)]
enum Request {
    /// Discovery: is the receiver in a group? (From node `id`.)
    Discover { id: NodeId },
    /// Make node `id` at `address` a voting member of the group.
    Join { id: NodeId, address: IpAddr },
    /// The receiver's status.
    Status,
    /// The receiver's status once its schema has been brought to group 0's state `version`
    /// (or after `wait_ms`, whichever comes first).
    StatusAt { version: u64, wait_ms: u64 },
    /// The receiver's first table holding user data.
    UserData,
}

/// The answer to [`Request::Discover`].
#[derive(Debug, Serialize, Deserialize)]
enum Discovered {
    /// In a group whose ring members are at these addresses.
    InGroup { members: Vec<IpAddr> },
    /// In no group yet; its group id.
    Alone { id: NodeId },
}

/// This node's membership.
pub struct Membership {
    /// Itself, for the tasks it spawns (they hold it weakly: dropping it ends them).
    me: std::sync::Weak<Membership>,
    config: MembershipConfig,
    host_id: HostId,
    messaging: Arc<Messaging>,
    liveness: Arc<Liveness>,
    group: Arc<Group0>,
    topology: TopologyHandle,
    statuses: PeerStatuses,
    events: broadcast::Sender<MembershipEvent>,
    tasks: parking_lot::Mutex<Vec<JoinHandle<()>>>,
}

fn request_body(r: &Request) -> Result<Bytes> {
    serde_json::to_vec(r)
        .map(Bytes::from)
        .map_err(|e| Error::Raft(e.to_string()))
}

impl Membership {
    /// Starts messaging, liveness and group 0, and finds this node's place in the ring (see
    /// the module doc); returns once the node is in it.
    pub async fn start(
        config: MembershipConfig,
        local: Arc<dyn LocalNode>,
    ) -> Result<Arc<Membership>> {
        let mut mc = MessagingConfig::new(config.listen, config.cluster_name.clone());
        mc.tls = config.tls.clone();
        mc.port = if config.seeds.is_empty() {
            0
        } else {
            config.storage_port
        };
        // A free port the node means to bind itself is set aside (held until the end, so the
        // next try gets another) and messaging started again.
        let mut set_aside = Vec::new();
        let messaging = loop {
            let m = Messaging::start(mc.clone()).await?;
            let port = m.local_addr().port();
            if mc.port != 0 || !config.reserved_ports.contains(&port) || set_aside.len() >= 8 {
                break Arc::new(m);
            }
            set_aside.push(m);
        };
        drop(set_aside);
        let dir = config.data_dir.clone();
        let host_id = blocking(move || {
            std::fs::create_dir_all(&dir).map_err(|source| Error::Io {
                path: dir.clone(),
                source,
            })?;
            identity::load_or_create_host_id(&dir)
        })
        .await?;
        let id = node_id(host_id);
        let group = Arc::new(
            Group0::start(
                id,
                &config.data_dir.join("group0"),
                Arc::clone(&messaging),
                config.raft,
            )
            .await?,
        );
        let liveness = Arc::new(Liveness::new(Arc::clone(&messaging), config.liveness));
        let saved = {
            let dir = config.data_dir.clone();
            blocking(move || identity::saved_tokens(&dir)).await?
        };
        let local_member = Member {
            endpoint: Endpoint {
                host_id,
                address: config.broadcast,
                datacenter: config.location.datacenter.clone(),
                rack: config.location.rack.clone(),
            },
            rpc_address: config.rpc_address,
            native_port: config.native_port,
            tokens: saved.clone().unwrap_or_default(),
            state: MemberState::Joining,
            up: true,
        };
        let topology = TopologyHandle::new(Topology::single(local_member)?);
        messaging.set_peer_locations(Some(Arc::new(topology.clone())));
        let m = Arc::new_cyclic(|me| Membership {
            me: me.clone(),
            host_id,
            messaging: Arc::clone(&messaging),
            liveness,
            group,
            topology,
            statuses: PeerStatuses::default(),
            events: broadcast::channel(1024).0,
            tasks: parking_lot::Mutex::new(Vec::new()),
            config,
        });
        messaging.register(Verb::Membership, handler(Arc::downgrade(&m), local));
        let result = m.enter().await;
        if let Err(e) = result {
            m.shutdown().await;
            return Err(e);
        }
        m.rebuild(&mut None);
        let tasks = vec![
            tokio::spawn(maintain(Arc::downgrade(&m))),
            tokio::spawn(poll_statuses(Arc::downgrade(&m))),
        ];
        m.tasks.lock().extend(tasks);
        Ok(m)
    }

    /// The current topology.
    pub fn topology(&self) -> TopologyHandle {
        self.topology.clone()
    }

    /// What the rest of the node reads.
    pub fn view(&self) -> ClusterView {
        ClusterView {
            topology: self.topology.clone(),
            statuses: self.statuses.clone(),
        }
    }

    /// Every change from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<MembershipEvent> {
        self.events.subscribe()
    }

    /// The host id.
    pub fn host_id(&self) -> HostId {
        self.host_id
    }

    /// Group 0 (the lead's schema-over-Raft work proposes through it).
    pub fn group(&self) -> &Arc<Group0> {
        &self.group
    }

    /// Internode messaging (the storage proxy registers its verbs on it).
    pub fn messaging(&self) -> &Arc<Messaging> {
        &self.messaging
    }

    /// How many of group 0's voters are up (this node counts as up), and how many there are:
    /// a change commits only while more than half are up.
    pub fn voters_up(&self) -> (usize, usize) {
        let (nodes, voters) = self.group.members();
        let local = node_id(self.host_id);
        let up = voters
            .iter()
            .filter(|id| {
                **id == local
                    || nodes
                        .get(id)
                        .is_some_and(|a| self.liveness.status(*a) == Some(Status::Up))
            })
            .count();
        (up, voters.len())
    }

    /// Asks every peer that is up for its status once its schema has reached group 0's
    /// `version` (each waits at most `wait`), and records the answers — so that
    /// `system.peers` shows the new schema version on this node as soon as the peers have it,
    /// and drivers waiting for schema agreement find it at once.
    pub async fn await_schema(&self, version: u64, wait: Duration) {
        let Ok(ask) = request_body(&Request::StatusAt {
            version,
            wait_ms: wait.as_millis() as u64,
        }) else {
            return;
        };
        let mut asks = tokio::task::JoinSet::new();
        for peer in self.topology.get().peers().filter(|p| p.up) {
            let peer = peer.endpoint.address;
            let messaging = Arc::clone(&self.messaging);
            let ask = ask.clone();
            asks.spawn(async move {
                let timeout = wait + Duration::from_secs(1);
                let answer = messaging
                    .request(peer, Verb::Membership, ask, timeout)
                    .await;
                (peer, answer)
            });
        }
        while let Some(Ok((peer, answer))) = asks.join_next().await {
            match answer.map(|b| serde_json::from_slice::<NodeStatus>(&b)) {
                Ok(Ok(status)) => {
                    self.statuses.0.write().insert(peer, status);
                }
                Ok(Err(e)) => tracing::debug!("node {peer}: status not readable: {e}"),
                Err(e) => tracing::debug!("node {peer}: no status after a schema change: {e}"),
            }
        }
    }

    /// Stops the background tasks, group 0 and messaging.
    pub async fn shutdown(&self) {
        for t in self.tasks.lock().drain(..) {
            t.abort();
        }
        self.messaging.unregister(Verb::Membership);
        self.group.shutdown().await;
        self.messaging.shutdown();
    }

    /// Restart, form or join (module doc).
    async fn enter(&self) -> Result<()> {
        let id = node_id(self.host_id);
        // Kept tokens are checked against the configuration on every start (a changed
        // `num_tokens` is refused, a later `initial_token` ignored with a warning).
        if self.saved_tokens().await?.is_some() {
            let dir = self.config.data_dir.clone();
            let config = self.config.tokens.clone();
            let (_, warnings) = blocking(move || {
                NodeIdentity::load_or_create(&dir, &config, &TokenRing::default())
            })
            .await?;
            for w in warnings {
                tracing::warn!("{w}");
            }
        }
        if self.group.is_initialized().await? {
            tracing::info!("group 0: rejoining from this node's log");
            // Only when the entry needs changing does the node need a quorum; it does not
            // wait for one to start.
            let state = self.group.state();
            let saved = self.saved_tokens().await?;
            let current = self.my_entry(&state);
            let wanted = saved.map(|t| self.entry(t, MemberState::Normal));
            if current.is_none() || wanted.is_none() || current != wanted {
                let weak = self.me.clone();
                self.tasks.lock().push(tokio::spawn(async move {
                    loop {
                        let Some(m) = weak.upgrade() else { return };
                        match m.register(true).await {
                            Ok(()) => return,
                            Err(e) => tracing::warn!("group 0: updating this node's entry: {e}"),
                        }
                        drop(m);
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                }));
            }
            return Ok(());
        }
        let me = self.config.broadcast;
        let others: Vec<IpAddr> = self
            .config
            .seeds
            .iter()
            .copied()
            .filter(|s| *s != me)
            .collect();
        if others.is_empty() {
            tracing::info!("group 0: no other seeds; forming a group of one");
            self.group.initialize(&[(id, me)]).await?;
            return self.register(false).await;
        }
        let is_seed = self.config.seeds.contains(&me);
        let deadline = tokio::time::Instant::now() + self.config.join_timeout;
        let ask = request_body(&Request::Discover { id })?;
        let mut waiting_for = String::new();
        loop {
            let mut alone = Vec::new();
            let mut in_group = None;
            let mut silent = Vec::new();
            for seed in &others {
                let answer = self
                    .messaging
                    .request(*seed, Verb::Membership, ask.clone(), Duration::from_secs(1))
                    .await
                    .and_then(|b| {
                        serde_json::from_slice::<Discovered>(&b).map_err(|e| Error::Remote {
                            peer: *seed,
                            verb: "MEMBERSHIP",
                            message: e.to_string(),
                        })
                    });
                match answer {
                    Ok(Discovered::InGroup { members }) => {
                        in_group = Some((*seed, members));
                        break;
                    }
                    Ok(Discovered::Alone { id }) => alone.push(id),
                    Err(e) => silent.push(format!("{seed} ({e})")),
                }
            }
            if let Some((via, members)) = in_group {
                return self.join(via, members).await;
            }
            // Someone may have added this node meanwhile (it asked before and gave up).
            if self.group.is_initialized().await? {
                return self.register(true).await;
            }
            if silent.is_empty() && is_seed && alone.iter().all(|other| id < *other) {
                tracing::info!("group 0: every seed answered, none in a group, this one the smallest; forming the group");
                self.group.initialize(&[(id, me)]).await?;
                return self.register(false).await;
            }
            let now = if silent.is_empty() {
                "a seed with a smaller id to form the group".to_string()
            } else {
                format!("seeds {}", silent.join(", "))
            };
            if now != waiting_for {
                tracing::info!("group 0: discovery waiting for {now}");
                waiting_for = now;
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(Error::Config(format!(
                    "could not find or form the cluster through seeds {:?} within {:?}: waiting for {waiting_for}",
                    self.config.seeds, self.config.join_timeout
                )));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Joins the group `via` is in, whose ring members are `members`.
    async fn join(&self, via: IpAddr, members: Vec<IpAddr>) -> Result<()> {
        let ask = request_body(&Request::UserData)?;
        for peer in members
            .iter()
            .copied()
            .filter(|p| *p != self.config.broadcast)
        {
            let answer = self
                .messaging
                .request(peer, Verb::Membership, ask.clone(), Duration::from_secs(5))
                .await;
            let refuse = |why: String| {
                Err(Error::Config(format!(
                    "cannot join the ring: {why}. Joining a ring that holds data needs streaming, \
                     which Cairn does not have yet; the node would own ranges without their data"
                )))
            };
            match answer.map(|b| serde_json::from_slice::<Option<String>>(&b)) {
                Ok(Ok(None)) => {}
                Ok(Ok(Some(table))) => {
                    return refuse(format!("node {peer} holds data (table {table})"))
                }
                Ok(Err(e)) => {
                    return refuse(format!("node {peer} answered what it holds with {e}"))
                }
                Err(e) => {
                    return refuse(format!("node {peer} cannot say whether it holds data: {e}"))
                }
            }
        }
        tracing::info!("group 0: joining through {via}");
        let body = request_body(&Request::Join {
            id: node_id(self.host_id),
            address: self.config.broadcast,
        })?;
        let answer = self
            .messaging
            .request(via, Verb::Membership, body, self.config.join_timeout)
            .await?;
        let answer: std::result::Result<(), String> =
            serde_json::from_slice(&answer).map_err(|e| Error::Raft(e.to_string()))?;
        answer.map_err(|e| Error::Raft(format!("node {via} could not add this node: {e}")))?;
        self.register(true).await
    }

    async fn saved_tokens(&self) -> Result<Option<Vec<Token>>> {
        let dir = self.config.data_dir.clone();
        blocking(move || identity::saved_tokens(&dir)).await
    }

    /// This node's entry with `tokens` in `state`.
    fn entry(&self, tokens: Vec<Token>, state: MemberState) -> MemberEntry {
        MemberEntry {
            host_id: self.host_id.to_string(),
            address: self.config.broadcast,
            rpc_address: self.config.rpc_address,
            native_port: self.config.native_port,
            tokens: tokens.iter().map(|t| t.0).collect(),
            datacenter: self.config.location.datacenter.clone(),
            rack: self.config.location.rack.clone(),
            state,
        }
    }

    fn my_entry(&self, state: &ReplicatedState) -> Option<MemberEntry> {
        let key = format!("{NODE_PREFIX}{}", self.host_id);
        state
            .entries
            .get(&key)
            .and_then(|v| serde_json::from_str(v).ok())
    }

    /// Puts this node's entry in the ring: its tokens (kept ones, or chosen against the
    /// group's ring), `Joining` first when `joining`, then `Normal`.
    async fn register(&self, joining: bool) -> Result<()> {
        let timeout = self.config.join_timeout;
        let key = format!("{NODE_PREFIX}{}", self.host_id);
        let deadline = tokio::time::Instant::now() + timeout;
        let tokens = loop {
            // The state as of the leader's latest commit: wait for this node to apply it.
            let state = self.group.state();
            if let Some(e) = self.my_entry(&state) {
                break e.tokens.iter().map(|t| Token(*t)).collect::<Vec<_>>();
            }
            let saved = self.saved_tokens().await?;
            let tokens = match saved {
                Some(t) => t,
                None => match &self.config.tokens.initial_token {
                    Some(text) => tokens::parse_initial_tokens(text)?,
                    None => {
                        // Every member's tokens, joining ones included: two nodes joining
                        // at once never choose against the same ring (the version check).
                        let ring = TokenRing::new(
                            entries(&state)
                                .iter()
                                .filter(|e| e.state != MemberState::Left)
                                .filter_map(|e| e.to_member(false))
                                .map(|m| (m.endpoint, m.tokens))
                                .collect(),
                        )?;
                        tokens::allocate(&ring, self.host_id, self.config.tokens.num_tokens)
                    }
                },
            };
            let first = if joining {
                MemberState::Joining
            } else {
                MemberState::Normal
            };
            let value = serde_json::to_string(&self.entry(tokens.clone(), first))
                .map_err(|e| Error::Raft(e.to_string()))?;
            let cmd = Command {
                expect_version: Some(state.version),
                ops: vec![Op::Put {
                    key: key.clone(),
                    value,
                }],
            };
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match self.group.propose(cmd, left).await? {
                CommandResult::Applied { version } => {
                    self.group.wait_for_version(version, left).await?;
                    break tokens;
                }
                CommandResult::Conflict { version } => {
                    // Another change came first: read the ring again once it is applied.
                    self.group.wait_for_version(version, left).await?;
                }
            }
        };
        // The tokens are the node's from now on: keep them (and check num_tokens against
        // kept ones, as a restart does).
        let dir = self.config.data_dir.clone();
        let mut config = self.config.tokens.clone();
        let text: Vec<String> = tokens.iter().map(|t| t.to_string()).collect();
        if self.saved_tokens().await?.is_none() {
            config.initial_token = Some(text.join(","));
        }
        let (identity, warnings) =
            blocking(move || NodeIdentity::load_or_create(&dir, &config, &TokenRing::default()))
                .await?;
        for w in warnings {
            tracing::warn!("{w}");
        }
        let wanted = self.entry(identity.tokens, MemberState::Normal);
        if self.my_entry(&self.group.state()).as_ref() != Some(&wanted) {
            let value = serde_json::to_string(&wanted).map_err(|e| Error::Raft(e.to_string()))?;
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let cmd = Command {
                expect_version: None,
                ops: vec![Op::Put { key, value }],
            };
            if let CommandResult::Applied { version } = self.group.propose(cmd, left).await? {
                self.group.wait_for_version(version, left).await?;
            }
        }
        tracing::info!("group 0: this node is in the ring (Normal)");
        Ok(())
    }

    /// Rebuilds the topology from the group's entries and liveness; publishes what changed
    /// since `last` (the version and liveness seen then).
    fn rebuild(&self, last: &mut Option<Arc<Topology>>) {
        let state = self.group.state();
        let mut members = Vec::new();
        let mut local_seen = false;
        for e in entries(&state) {
            let Some(host) = HostId::parse(&e.host_id) else {
                continue;
            };
            let local = host == self.host_id;
            local_seen |= local;
            if !local {
                if e.state == MemberState::Left {
                    self.liveness.forget(e.address);
                } else {
                    self.liveness.watch(e.address);
                }
            }
            let up = local || self.liveness.status(e.address) == Some(Status::Up);
            if let Some(m) = e.to_member(up) {
                members.push(m);
            }
        }
        if !local_seen {
            if let Some(m) = self.topology.get().local().cloned() {
                members.push(m);
            }
        }
        let topology = match Topology::new(self.host_id, members) {
            Ok(t) => t,
            Err(e) => {
                tracing::error!("the ring in group 0 cannot be used: {e}");
                return;
            }
        };
        if let Some(before) = last.as_ref() {
            for ev in changes(before, &topology) {
                tracing::info!("{:?} {}", ev.kind, ev.rpc_address);
                let _ = self.events.send(ev);
            }
        }
        self.topology.set(topology);
        *last = Some(self.topology.get());
    }
}

/// What drivers are told of the change from `before` to `after`.
fn changes(before: &Topology, after: &Topology) -> Vec<MembershipEvent> {
    let mut out = Vec::new();
    let event = |kind, m: &Member| MembershipEvent {
        kind,
        rpc_address: m.rpc_address,
        native_port: m.native_port,
    };
    for m in after.peers() {
        let id = m.endpoint.host_id;
        let old = before.member(id).filter(|o| o.state != MemberState::Left);
        let was_normal = old.is_some_and(|o| o.state == MemberState::Normal);
        if m.state == MemberState::Normal && !was_normal {
            out.push(event(EventKind::NewNode, m));
        }
        let was_up = old.is_some_and(|o| o.up);
        if m.up != was_up && (old.is_some() || m.up) {
            out.push(event(if m.up { EventKind::Up } else { EventKind::Down }, m));
        }
    }
    for m in before.peers() {
        let gone = after
            .member(m.endpoint.host_id)
            .is_none_or(|n| n.state == MemberState::Left);
        if gone {
            out.push(event(EventKind::RemovedNode, m));
        }
    }
    out
}

/// Rebuilds the topology when the group's state or a peer's liveness changes.
async fn maintain(weak: std::sync::Weak<Membership>) {
    let (mut changes, mut version) = match weak.upgrade() {
        Some(m) => (m.liveness.subscribe(), m.group.state().version),
        None => return,
    };
    let mut last = weak.upgrade().map(|m| m.topology.get());
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let liveness_changed = tokio::select! {
            r = changes.recv() => !matches!(r, Err(broadcast::error::RecvError::Closed)),
            _ = tick.tick() => false,
        };
        let Some(m) = weak.upgrade() else { return };
        let now = m.group.state().version;
        if liveness_changed || now != version {
            version = now;
            m.rebuild(&mut last);
        }
    }
}

/// Polls the statuses of the peers that are up: every `status_interval`, and within a
/// second for a peer that came up with none known yet.
async fn poll_statuses(weak: std::sync::Weak<Membership>) {
    let Ok(ask) = request_body(&Request::Status) else {
        return;
    };
    let mut polled: HashMap<IpAddr, tokio::time::Instant> = HashMap::new();
    loop {
        let Some(m) = weak.upgrade() else { return };
        let interval = m.config.status_interval;
        let due: Vec<IpAddr> = m
            .topology
            .get()
            .peers()
            .filter(|p| p.up)
            .map(|p| p.endpoint.address)
            .filter(|a| polled.get(a).is_none_or(|t| t.elapsed() >= interval))
            .collect();
        for peer in due {
            let answer = m
                .messaging
                .request(peer, Verb::Membership, ask.clone(), interval)
                .await;
            if let Ok(Ok(status)) = answer.map(|b| serde_json::from_slice::<NodeStatus>(&b)) {
                m.statuses.0.write().insert(peer, status);
                polled.insert(peer, tokio::time::Instant::now());
            }
        }
        drop(m);
        tokio::time::sleep(Duration::from_secs(1).min(interval)).await;
    }
}

/// Serves the `MEMBERSHIP` verb.
fn handler(weak: std::sync::Weak<Membership>, local: Arc<dyn LocalNode>) -> Handler {
    Arc::new(move |_from: IpAddr, body: Bytes| {
        let weak = weak.clone();
        let local = Arc::clone(&local);
        Box::pin(async move {
            let request: Request = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
            let m = weak.upgrade().ok_or("shutting down")?;
            let answer = match request {
                Request::Discover { .. } => {
                    let discovered = if m.group.is_initialized().await.map_err(|e| e.to_string())? {
                        let members = entries(&m.group.state())
                            .into_iter()
                            .filter(|e| e.state != MemberState::Left)
                            .map(|e| e.address)
                            .collect();
                        Discovered::InGroup { members }
                    } else {
                        Discovered::Alone {
                            id: node_id(m.host_id),
                        }
                    };
                    serde_json::to_vec(&discovered)
                }
                Request::Join { id, address } => {
                    let r = m
                        .group
                        .add_voter(id, address, m.config.join_timeout)
                        .await
                        .map_err(|e| e.to_string());
                    serde_json::to_vec(&r)
                }
                Request::Status => serde_json::to_vec(&local.status()),
                Request::StatusAt { version, wait_ms } => {
                    let deadline = tokio::time::Instant::now() + Duration::from_millis(wait_ms);
                    let mut versions = m.group.versions();
                    drop(m);
                    // The schema follows the group's state a moment after it is applied:
                    // look again at every new version, and every few milliseconds.
                    while local.schema_applied() < version && tokio::time::Instant::now() < deadline
                    {
                        let _ = tokio::time::timeout_at(
                            deadline.min(tokio::time::Instant::now() + Duration::from_millis(5)),
                            versions.changed(),
                        )
                        .await;
                    }
                    serde_json::to_vec(&local.status())
                }
                Request::UserData => {
                    let local = Arc::clone(&local);
                    let found = tokio::task::spawn_blocking(move || local.user_data())
                        .await
                        .map_err(|e| e.to_string())?;
                    serde_json::to_vec(&found)
                }
            };
            answer.map(Bytes::from).map_err(|e| e.to_string())
        })
    })
}

/// Runs blocking file work off the reactor.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::Config(format!("a blocking task failed: {e}")))?
}
