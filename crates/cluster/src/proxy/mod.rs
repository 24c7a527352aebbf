//! The storage proxy: the one door between statement execution and storage.
//!
//! Statement execution (`cairn-cql`) plans a statement into engine mutations or read
//! commands and hands them here with the request's consistency level: [`StorageProxy::mutate`]
//! for writes, [`StorageProxy::read`] for one partition, [`StorageProxy::scan`] for a token
//! range. The proxy finds each token's replicas from the [`Topology`](crate::topology) and the
//! keyspace's replication ([`StorageProxy::set_replication`], kept current by the catalog),
//! checks that the level can be reached ([`availability`]) — the protocol's Unavailable
//! otherwise, counted in [`ProxyMetrics`] — and runs the request.
//!
//! Without [`RemoteReplicas`] the only replica the proxy can reach is its own node, so a
//! replica on another node counts as down: on a node alone this is exactly Cassandra's
//! behaviour (a keyspace with `replication_factor: 3` answers ONE but not QUORUM), and the
//! check costs no allocation. With them it is the coordinator: writes go to every replica up
//! and wait for the level (`write.rs`), single-partition reads take data
//! from one replica and digests from the others and repair on a mismatch (`read.rs`), range
//! scans are cut at the ring's tokens and read piece by piece (`scan.rs`); the replica side
//! answers in [`replica`]. Conditional writes and serial reads run a Paxos round across the
//! partition's replicas ([`paxos`]; on a node alone, the same request with one replica).
//! Counter writes are led by this node ([`StorageProxy::mutate_counters`], `counter.rs`):
//! each delta becomes this node's resulting shard under the partition's lock, then an
//! ordinary write.
//!
//! Waiting follows the executor's convention (`cairn_engine::io::Wait`): the mutation and read
//! paths take the request's mode and a request that would wait — for the disk, or for other
//! nodes — returns `WouldBlock` with nothing done; the server reruns it where it may block
//! (its blocking pool: never a reactor thread). A write whose caller can await gives
//! [`Acks`] ([`StorageProxy::mutate_or_defer`]): then only this node's share must not wait,
//! and the wait for the other replicas is handed back as a future — the server awaits it on
//! the request's task. Reads still wait on the blocking pool.
//!
//! Invariants: a mutation is applied only when every one of its tokens passed the check; on
//! each replica all of a call's mutations it holds are applied in one `Database::apply` (one
//! commitlog record); a read runs only when its token (a scan: each piece) passed.

pub mod availability;
mod counter;
mod deferred;
mod link;
mod locks;
pub mod paxos;
mod read;
pub mod replica;
mod scan;
mod view_builds;
pub mod view_status;
pub mod views;
pub(crate) mod write;

use crate::consistency::{Consistency, Unavailable, WriteType};
use crate::error::{Error, Result};
use crate::fault::FailedRequest;
use crate::messaging::Messaging;
use crate::placement::ReplicationStrategy;
use crate::topology::{Topology, TopologyHandle};
use availability::Replica;
use cairn_engine::model::{DecoratedKey, Mutation, PartitionPos, Token};
use cairn_engine::read::ScanIter;
use cairn_engine::table::Table;
use cairn_engine::{Database, PartitionResult, ReadCommand, Trace, Wait};
pub use deferred::{Deferred, PendingRead, Prefetched};
pub use locks::PartitionLocks;
use parking_lot::RwLock;
pub use paxos::{CasDecision, CasRound};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What a request does, for the metrics it counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// A write.
    Write,
    /// A single-partition read.
    Read,
    /// A range read.
    Range,
    /// A conditional write (Paxos in a cluster).
    Cas,
    /// A read at SERIAL or LOCAL_SERIAL, or a conditional write's read of the current values.
    CasRead,
    /// A counter write (counted with the writes).
    Counter,
}

/// The coordinator's counters, with ScyllaDB's names (`scylla_storage_proxy_coordinator_*`).
#[derive(Debug, Default)]
pub struct ProxyMetrics {
    /// `write_unavailable`: writes refused for too few replicas up.
    pub write_unavailable: AtomicU64,
    /// `read_unavailable`: single-partition reads refused so.
    pub read_unavailable: AtomicU64,
    /// `range_unavailable`: range reads refused so.
    pub range_unavailable: AtomicU64,
    /// `cas_write_unavailable`: conditional writes refused so.
    pub cas_write_unavailable: AtomicU64,
    /// `cas_read_unavailable`: serial reads refused so.
    pub cas_read_unavailable: AtomicU64,
    /// `write_timeouts`: writes whose replicas did not answer in time for the level.
    pub write_timeouts: AtomicU64,
    /// `write_errors`: writes refused by replicas beyond what the level allows (Cairn's name;
    /// ScyllaDB counts them per cause).
    pub write_failures: AtomicU64,
    /// `read_timeouts`: reads whose replicas did not answer in time.
    pub read_timeouts: AtomicU64,
    /// `read_errors`: reads a replica failed (Cairn's name: ScyllaDB counts them per cause).
    pub read_failures: AtomicU64,
    /// `foreground_read_repairs`: reads that found replicas disagreeing and repaired them
    /// before answering.
    pub foreground_read_repairs: AtomicU64,
    /// `replica_received_mutations`: mutations this node applied for a coordinator.
    pub replica_received_mutations: AtomicU64,
    /// `reads_on_request_task` (Cairn's): single-partition reads whose replicas were awaited
    /// on the request's task (`deferred.rs`), not on a blocking thread.
    pub reads_on_request_task: AtomicU64,
    /// `cas_write_timeouts`: conditional writes that timed out (their round, or its commit).
    pub cas_write_timeouts: AtomicU64,
    /// `cas_read_timeouts`: serial reads that timed out.
    pub cas_read_timeouts: AtomicU64,
    /// `cas_write_contention`: conditional writes' rounds that lost to another and started
    /// over (ScyllaDB keeps a histogram of them per request).
    pub cas_write_contention: AtomicU64,
    /// `cas_read_contention`: the same for serial reads.
    pub cas_read_contention: AtomicU64,
    /// `cas_write_unfinished_commit`: earlier rounds' accepted proposals a conditional write
    /// found and committed before its own.
    pub cas_write_unfinished_commit: AtomicU64,
    /// `cas_read_unfinished_commit`: the same for serial reads.
    pub cas_read_unfinished_commit: AtomicU64,
    /// `cas_write_condition_not_met`: conditional writes refused because a condition did
    /// not hold.
    pub cas_write_condition_not_met: AtomicU64,
}

/// How the proxy reaches the other replicas.
pub struct RemoteReplicas {
    /// Internode messaging.
    pub messaging: Arc<Messaging>,
    /// The runtime its messages are sent from.
    pub runtime: tokio::runtime::Handle,
    /// `write_request_timeout`: how long a write waits for its level.
    pub write_timeout: Duration,
    /// `read_request_timeout`: how long a read waits for its level (and its repairs).
    pub read_timeout: Duration,
    /// `cas_contention_timeout`: how long a conditional write or serial read may keep losing
    /// its Paxos round to others.
    pub cas_contention_timeout: Duration,
}

/// A write's wait for its consistency level, to be awaited before the request answers.
pub type PendingAck = std::pin::Pin<Box<dyn std::future::Future<Output = Result<()>> + Send>>;

/// Where a request's waits for other replicas are left for it to await on its task: a
/// write's [`PendingAck`] ([`StorageProxy::mutate_or_defer`]), a read's [`PendingRead`] and
/// the answers of reads it awaited ([`StorageProxy::read_or_defer`], `deferred.rs`).
#[derive(Default)]
pub struct Acks {
    write: parking_lot::Mutex<Option<PendingAck>>,
    read: parking_lot::Mutex<Option<PendingRead>>,
    answers: parking_lot::Mutex<Vec<deferred::Prefetched>>,
}

impl Acks {
    /// The write's wait, if the request left one.
    pub fn take(&self) -> Option<PendingAck> {
        self.write.lock().take()
    }

    /// Whether the request left nothing to await (no write's acknowledgements, no read).
    pub fn is_empty(&self) -> bool {
        self.write.lock().is_none() && self.read.lock().is_none()
    }

    fn put(&self, ack: PendingAck) {
        *self.write.lock() = Some(ack);
    }
}

impl std::fmt::Debug for Acks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Acks")
    }
}

/// Which replicas a request may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// Only this node's (reads, until the coordinator reads from others).
    Local,
    /// Any replica up, when the proxy has [`RemoteReplicas`].
    Cluster,
}

/// Between statement execution and storage (see the module doc).
pub struct StorageProxy {
    db: Arc<Database>,
    topology: TopologyHandle,
    /// Each keyspace's replication, by name; the catalog keeps it current.
    keyspaces: RwLock<HashMap<String, Arc<ReplicationStrategy>, foldhash::fast::RandomState>>,
    /// The other replicas, when the node is in a cluster (none: only itself is reachable).
    remote: Option<RemoteReplicas>,
    metrics: Arc<ProxyMetrics>,
    /// This node's Paxos ballots.
    ballots: paxos::ballot::Ballots,
    /// Rounds this node coordinates, one at a time per partition.
    cas_locks: PartitionLocks,
    /// Counter increments this node leads, one at a time per partition (`counter.rs`).
    counter_locks: PartitionLocks,
    /// This node's Paxos state, as a replica.
    paxos: paxos::state::PaxosState,
    /// Materialized views' maintenance on this node's writes.
    views: Arc<views::Views>,
    /// How this node records its events of coordinators' traced requests (set once the
    /// node's tracing has started; until then they are not recorded).
    replica_tracing: std::sync::OnceLock<Arc<dyn replica::ReplicaTracing>>,
}

impl StorageProxy {
    /// A proxy over the local database, placing replicas on `topology`.
    pub fn new(db: Arc<Database>, topology: TopologyHandle) -> StorageProxy {
        let ballots = paxos::ballot::Ballots::new(topology.get().local_id().0);
        let views = Arc::new(views::Views::new(Arc::clone(&db)));
        StorageProxy {
            paxos: paxos::state::PaxosState::new(Arc::clone(&db)),
            views,
            db,
            topology,
            keyspaces: RwLock::new(HashMap::default()),
            remote: None,
            metrics: Arc::default(),
            ballots,
            cas_locks: PartitionLocks::default(),
            counter_locks: PartitionLocks::default(),
            replica_tracing: std::sync::OnceLock::new(),
        }
    }

    /// Sets how this node records its own events of coordinators' traced requests (once:
    /// a second call is ignored).
    pub fn set_replica_tracing(&self, tracing: Arc<dyn replica::ReplicaTracing>) {
        let _ = self.replica_tracing.set(tracing);
    }

    /// This node's trace of a coordinator's session `session`, if the node traces.
    fn replica_trace(&self, session: crate::messaging::SessionId) -> Option<Trace> {
        self.replica_tracing.get().map(|t| t.replica_trace(session))
    }

    /// Coordinates: writes, reads, scans and Paxos rounds go to the other replicas too (those
    /// the topology shows up).
    pub fn with_remote(mut self, remote: RemoteReplicas) -> StorageProxy {
        self.remote = Some(remote);
        self
    }

    /// Whether the proxy coordinates other nodes' replicas (a node with seeds): only then
    /// can a write wait for other nodes, and [`StorageProxy::mutate_or_defer`] defer it.
    pub fn coordinates(&self) -> bool {
        self.remote.is_some()
    }

    /// The database underneath.
    pub fn db(&self) -> &Arc<Database> {
        &self.db
    }

    /// The topology replicas are placed on.
    pub fn topology(&self) -> &TopologyHandle {
        &self.topology
    }

    /// This node's Paxos state as a replica.
    pub fn paxos_state(&self) -> &paxos::state::PaxosState {
        &self.paxos
    }

    /// Materialized views' maintenance (the catalog tells it which tables have views).
    pub fn views(&self) -> &views::Views {
        &self.views
    }

    /// The counters.
    pub fn metrics(&self) -> &ProxyMetrics {
        &self.metrics
    }

    /// Sets (or changes) how a keyspace is replicated.
    pub fn set_replication(&self, keyspace: &str, strategy: ReplicationStrategy) {
        self.keyspaces
            .write()
            .insert(keyspace.to_string(), Arc::new(strategy));
    }

    /// Forgets a dropped keyspace.
    pub fn drop_keyspace(&self, keyspace: &str) {
        self.keyspaces.write().remove(keyspace);
    }

    /// How a keyspace is replicated. A keyspace the proxy was not told of is local to the
    /// node (as the node-local system keyspaces are).
    pub fn replication(&self, keyspace: &str) -> Arc<ReplicationStrategy> {
        self.keyspaces
            .read()
            .get(keyspace)
            .cloned()
            .unwrap_or_else(|| Arc::new(ReplicationStrategy::Local))
    }

    /// Applies `mutations` at `cl`: each token's replicas are checked first, then all of them
    /// are applied together (one commitlog record).
    pub fn mutate(&self, mutations: Vec<Mutation>, cl: Consistency, wait: Wait) -> Result<()> {
        let op = Operation::Write;
        self.mutate_as(mutations, cl, op, wait, None, None)
    }

    /// [`StorageProxy::mutate`], except that under `Wait::Never` a write that must wait for
    /// other replicas is not refused when the caller gives `acks`: this node's share is
    /// applied (unless that would wait: then `WouldBlock`, nothing done), the others are
    /// sent theirs, and the wait for the level is left in `acks` for the caller to await
    /// before it answers — the request's task waits, no thread does. A traced request's
    /// `trace` hears of the replicas written to and of the local commitlog and memtables.
    pub fn mutate_or_defer(
        &self,
        mutations: Vec<Mutation>,
        cl: Consistency,
        wait: Wait,
        acks: Option<&Acks>,
        trace: Option<&Trace>,
    ) -> Result<()> {
        self.mutate_as(mutations, cl, Operation::Write, wait, acks, trace)
    }

    fn mutate_as(
        &self,
        mutations: Vec<Mutation>,
        cl: Consistency,
        op: Operation,
        wait: Wait,
        acks: Option<&Acks>,
        trace: Option<&Trace>,
    ) -> Result<()> {
        let topology = self.topology.get();
        // Whether another node may hold some of them: then each mutation's targets are kept.
        let alone = self.remote.is_none() || topology.ring().endpoints().len() <= 1;
        let mut plans = Vec::with_capacity(if alone { 0 } else { mutations.len() });
        let mut checked: Option<(u128, Arc<ReplicationStrategy>)> = None;
        for m in &mutations {
            let strategy = match &checked {
                Some((table, s)) if *table == m.table => Arc::clone(s),
                _ => {
                    let Some(t) = self.db.table_by_id(m.table) else {
                        // The engine names the missing table when it applies.
                        return Ok(self.db.apply_traced(mutations, wait, trace)?);
                    };
                    let s = self.replication(&t.schema().keyspace);
                    checked = Some((m.table, Arc::clone(&s)));
                    s
                }
            };
            let token = m.key.token;
            if alone {
                self.check(&topology, &strategy, token, cl, op, Reach::Local, None)?;
            } else {
                let targets = self.cluster_targets(&topology, &strategy, token, cl, op)?;
                plans.push(write::Planned { strategy, targets });
            }
        }
        if alone {
            let write_type = write_type(op, mutations.len());
            let strategy = checked.map(|(_, s)| s);
            return self.views.apply(mutations, wait, trace).map_err(|e| {
                let request = FailedRequest::Write(write_type);
                local_failure(e, request, cl, strategy.as_deref(), &topology)
            });
        }
        let ring = topology.ring();
        let local = ring.position(topology.local_id());
        let remote = match &self.remote {
            Some(r)
                if plans
                    .iter()
                    .any(|p| p.targets.iter().any(|&t| Some(t) != local)) =>
            {
                r
            }
            // Only this node holds them.
            _ => return Ok(self.apply_local(mutations, wait, trace)?),
        };
        let deferred = matches!(wait, Wait::Never) && acks.is_some();
        if matches!(wait, Wait::Never) && !deferred {
            // Waiting for other nodes blocks the thread: refuse before anything is applied.
            return Err(Error::Engine(cairn_engine::Error::WouldBlock));
        }
        let write_type = write_type(op, mutations.len());
        let topology = Arc::clone(&topology);
        let apply = |m: Vec<Mutation>, w: Wait, t: Option<&Trace>| self.apply_local(m, w, t);
        let pending = write::start(
            &apply, topology, mutations, plans, cl, write_type, remote, wait, trace,
        )?;
        let metrics = Arc::clone(&self.metrics);
        let counted = async move {
            let r = pending.await;
            match &r {
                Err(Error::WriteTimeout(_)) => {
                    metrics.write_timeouts.fetch_add(1, Ordering::Relaxed);
                }
                Err(Error::WriteFailure(_)) => {
                    metrics.write_failures.fetch_add(1, Ordering::Relaxed);
                }
                _ => {}
            }
            r
        };
        match acks {
            Some(acks) if deferred => {
                acks.put(Box::pin(counted));
                Ok(())
            }
            // Called where the thread may block (the server's blocking pool).
            _ => remote.runtime.block_on(counted),
        }
    }

    /// Reads one partition of `table` at `cl` (`cmd` carries the wait mode). At SERIAL or
    /// LOCAL_SERIAL the read is a Paxos round in a cluster (see [`paxos`]), counted as one.
    pub fn read(
        &self,
        table: &Table,
        key: &DecoratedKey,
        cmd: &ReadCommand,
        cl: Consistency,
    ) -> Result<Option<PartitionResult>> {
        if !cl.is_serial() {
            return self.read_as(table, key, cmd, cl, Operation::Read);
        }
        if self.in_cluster(&self.topology.get()) {
            return self.serial_read(table, key, cmd, cl);
        }
        self.read_as(table, key, cmd, cl, Operation::CasRead)
    }

    fn read_as(
        &self,
        table: &Table,
        key: &DecoratedKey,
        cmd: &ReadCommand,
        cl: Consistency,
        op: Operation,
    ) -> Result<Option<PartitionResult>> {
        let strategy = self.replication(&table.schema().keyspace);
        let topology = self.topology.get();
        let ring = topology.ring();
        let remote = match &self.remote {
            // (A serial level reaches here only on a node alone: in a cluster a round reads
            // at its quorum level.)
            Some(r) if ring.endpoints().len() > 1 => r,
            _ => {
                self.check(&topology, &strategy, key.token, cl, op, Reach::Local, None)?;
                return table.read(key, cmd).map_err(|e| {
                    local_failure(e, FailedRequest::Read, cl, Some(&strategy), &topology)
                });
            }
        };
        let targets = self.cluster_targets(&topology, &strategy, key.token, cl, op)?;
        let (mut contacts, mut spares) = contacts(&topology, targets, cl, &strategy);
        if let [only] = contacts.as_slice() {
            if only.local {
                match table.read(key, cmd) {
                    // This node's copy cannot be read: another replica answers instead.
                    Err(e) if e.storage_fault().is_some() && !spares.is_empty() => {
                        contacts = vec![spares.remove(0)];
                    }
                    r => return Ok(r?),
                }
            }
        }
        if matches!(cmd.wait, Wait::Never) {
            // Waiting for other nodes blocks the thread: refuse before anything is read.
            return Err(Error::Engine(cairn_engine::Error::WouldBlock));
        }
        let coordination = read::Coordination {
            table,
            proxy: self,
            link: link::Link {
                messaging: &remote.messaging,
                runtime: &remote.runtime,
                timeout: remote.read_timeout,
                trace: cmd.trace.as_ref(),
            },
        };
        let mut result = read::coordinate(&coordination, key, cmd, cl, &contacts);
        // Replicas that failed (a storage fault, most often) are replaced by replicas up that
        // were not asked, while there are enough of them; each try uses some up.
        loop {
            let failed: Vec<std::net::IpAddr> = match &result {
                Err(Error::ReadFailure(f)) => f.failures.iter().map(|(a, _)| *a).collect(),
                // This node's own copy failed (read in place, not through messaging).
                Err(Error::Engine(e)) if e.storage_fault().is_some() => contacts
                    .iter()
                    .filter(|c| c.local)
                    .map(|c| c.address)
                    .collect(),
                _ => break,
            };
            let is_failed = |c: &read::Contact| failed.contains(&c.address);
            let replaced = contacts.iter().filter(|c| is_failed(c)).count();
            if replaced == 0 || replaced > spares.len() {
                break;
            }
            let mut instead = spares.drain(..replaced);
            contacts = contacts
                .into_iter()
                .map(|c| match is_failed(&c) {
                    true => instead.next().unwrap_or(c),
                    false => c,
                })
                .collect();
            drop(instead);
            result = read::coordinate(&coordination, key, cmd, cl, &contacts);
        }
        match result {
            Ok((result, outcome)) => {
                if outcome.repaired {
                    let repairs = &self.metrics.foreground_read_repairs;
                    repairs.fetch_add(1, Ordering::Relaxed);
                }
                Ok(result)
            }
            Err(e) => {
                match &e {
                    Error::ReadTimeout(_) => &self.metrics.read_timeouts,
                    _ => &self.metrics.read_failures,
                }
                .fetch_add(1, Ordering::Relaxed);
                Err(e)
            }
        }
    }

    /// Scans `table` of `keyspace` from `start` to `end` (the end of the ring when `None`) at
    /// `cl`: every piece of the ring the scan covers must reach the level; pieces whose
    /// replicas are on other nodes are read from them (see `scan.rs`).
    pub fn scan(
        &self,
        keyspace: &str,
        table: &str,
        start: PartitionPos,
        end: Option<Token>,
        cmd: ReadCommand,
        cl: Consistency,
    ) -> Result<Scan<'_>> {
        let strategy = self.replication(keyspace);
        let topology = self.topology.get();
        let ring = topology.ring();
        let op = Operation::Range;
        let (remote, t) = match (&self.remote, self.db.table(keyspace, table)) {
            (Some(r), Some(t)) if ring.endpoints().len() > 1 => (r, t),
            _ => {
                if ring.endpoints().len() <= 1 {
                    self.check(&topology, &strategy, Token(0), cl, op, Reach::Local, None)?;
                } else {
                    // Each range is checked at its end token, which the range's replicas
                    // hold.
                    for (range, _) in ring.ranges() {
                        let end = range.end;
                        self.check(&topology, &strategy, end, cl, op, Reach::Local, None)?;
                    }
                }
                return Ok(Scan::Local(self.db.scan(keyspace, table, start, end, cmd)?));
            }
        };
        let tokens: Vec<Token> = ring.tokens().iter().map(|(t, _)| *t).collect();
        let mut pieces = Vec::new();
        for (from, last, owner) in scan::cut(&tokens, &start, end.unwrap_or(Token(i64::MAX))) {
            let targets = self.cluster_targets(&topology, &strategy, owner, cl, op)?;
            pieces.push(scan::Piece {
                start: from,
                end: last,
                contacts: contacts(&topology, targets, cl, &strategy).0,
            });
        }
        let all_local = pieces
            .iter()
            .all(|p| matches!(p.contacts.as_slice(), [only] if only.local));
        if !all_local && matches!(cmd.wait, Wait::Never) {
            // Waiting for other nodes blocks the thread: refuse before anything is read.
            return Err(Error::Engine(cairn_engine::Error::WouldBlock));
        }
        let reach = scan::Reach {
            table: t,
            proxy: self,
            messaging: &remote.messaging,
            runtime: &remote.runtime,
            timeout: remote.read_timeout,
            repairs: &self.metrics.foreground_read_repairs,
        };
        Ok(Scan::Ring(scan::RingScan::new(reach, cmd, cl, pieces)))
    }

    /// Checks that a read of `keyspace` at `cl` could be served, without reading: for the
    /// system tables a node builds from its own metadata (their keyspaces are local to each
    /// node, so the levels needing more than one replica are refused as Cassandra refuses
    /// them).
    pub fn check_reachable(&self, keyspace: &str, cl: Consistency) -> Result<()> {
        let strategy = self.replication(keyspace);
        let topology = self.topology.get();
        let token = Token(0);
        let op = Operation::Read;
        self.check(&topology, &strategy, token, cl, op, Reach::Local, None)
    }

    /// Checks that `token`'s replicas can serve `cl` from here, pushing the replicas that can
    /// be used (ring endpoint indexes) to `targets` when given.
    #[allow(clippy::too_many_arguments)] // one check's whole question
    fn check(
        &self,
        topology: &Topology,
        strategy: &ReplicationStrategy,
        token: Token,
        cl: Consistency,
        op: Operation,
        reach: Reach,
        targets: Option<&mut Vec<usize>>,
    ) -> Result<()> {
        let local = topology.local_id();
        let ring = topology.ring();
        let result = match ring.endpoints() {
            // A node alone: every token's replicas are the same — itself, if the strategy
            // places any replica in its data center — and nothing needs to be allocated.
            [only] if only.host_id == local => {
                let dc = only.datacenter.as_str();
                let holds = match strategy {
                    ReplicationStrategy::Simple { replication_factor } => *replication_factor > 0,
                    ReplicationStrategy::NetworkTopology { datacenters } => {
                        datacenters.iter().any(|(d, rf)| d == dc && *rf > 0)
                    }
                    ReplicationStrategy::Local => true,
                };
                let me = [Replica {
                    datacenter: dc,
                    up: true,
                }];
                let replicas: &[Replica<'_>] = if holds { &me } else { &[] };
                if let Some(t) = targets.filter(|_| holds) {
                    t.push(0);
                }
                decide(cl, strategy, dc, replicas)
            }
            _ => {
                let local_dc = topology
                    .local()
                    .map_or("", |m| m.endpoint.datacenter.as_str());
                let found = strategy.replicas(ring, token, Some(local));
                let reachable = |id| {
                    id == local
                        || (reach == Reach::Cluster && self.remote.is_some() && topology.is_up(id))
                };
                let mut targets = targets;
                let replicas: Vec<Replica<'_>> = found
                    .iter()
                    .filter_map(|&i| ring.endpoints().get(i).map(|e| (i, e)))
                    .map(|(i, e)| {
                        let up = reachable(e.host_id);
                        if let Some(t) = targets.as_deref_mut().filter(|_| up) {
                            t.push(i);
                        }
                        Replica {
                            datacenter: e.datacenter.as_str(),
                            up,
                        }
                    })
                    .collect();
                decide(cl, strategy, local_dc, &replicas)
            }
        };
        result.map_err(|u| {
            let counter = match op {
                Operation::Write | Operation::Counter => &self.metrics.write_unavailable,
                Operation::Read => &self.metrics.read_unavailable,
                Operation::Range => &self.metrics.range_unavailable,
                Operation::Cas => &self.metrics.cas_write_unavailable,
                Operation::CasRead => &self.metrics.cas_read_unavailable,
            };
            counter.fetch_add(1, Ordering::Relaxed);
            Error::Unavailable(u)
        })
    }
    /// Applies this node's share of a write as a base replica: the mutations with the view
    /// updates whose paired view replica is this node, in one commitlog record; the other
    /// view updates are sent to their replicas, not awaited (`views.rs`).
    pub fn apply_local(
        &self,
        mutations: Vec<Mutation>,
        wait: Wait,
        trace: Option<&Trace>,
    ) -> cairn_engine::Result<()> {
        if !self.views.any() {
            return self.db.apply_traced(mutations, wait, trace);
        }
        let topology = self.topology.get();
        let Some(remote) = self
            .remote
            .as_ref()
            .filter(|_| topology.ring().endpoints().len() > 1)
        else {
            return self.views.apply(mutations, wait, trace);
        };
        let route = |base: &Mutation, view: &Mutation| self.view_replica(&topology, base, view);
        let sends = self.views.apply_with(mutations, wait, trace, &route)?;
        self.send_view_updates(&topology, remote, sends, trace);
        Ok(())
    }

    /// Fills view `view` of base table `base_id` from this node's base rows (a view created
    /// on a table with data), on the calling thread, which may block: see
    /// `views::Views::build`. Returns the number of base partitions read.
    pub fn build_view(
        &self,
        base_id: u128,
        view: &cairn_engine::schema::TableSchema,
    ) -> cairn_engine::Result<u64> {
        let topology = self.topology.get();
        match self
            .remote
            .as_ref()
            .filter(|_| topology.ring().endpoints().len() > 1)
        {
            None => self.views.build(base_id, view, &|_, _| None, &|_| {}),
            Some(remote) => {
                let route = |b: &Mutation, v: &Mutation| self.view_replica(&topology, b, v);
                let send = |sends| self.send_view_updates(&topology, remote, sends, None);
                self.views.build(base_id, view, &route, &send)
            }
        }
    }

    /// Sends view updates to their view replicas, not awaited (a failure is logged); a
    /// traced request's `trace` hears of each message, which carries its session.
    fn send_view_updates(
        &self,
        topology: &Topology,
        remote: &RemoteReplicas,
        sends: Vec<(usize, Mutation)>,
        trace: Option<&Trace>,
    ) {
        let endpoints = topology.ring().endpoints();
        let mut by_target: HashMap<usize, Vec<Mutation>> = HashMap::new();
        for (t, m) in sends {
            by_target.entry(t).or_default().push(m);
        }
        for (t, share) in by_target {
            let Some(peer) = endpoints.get(t).map(|e| e.address) else {
                continue;
            };
            let mut body = Vec::new();
            cairn_engine::model::mutation::encode_batch(&share, &mut body);
            let verb = crate::messaging::Verb::Mutation;
            let (messaging, timeout) = (Arc::clone(&remote.messaging), remote.write_timeout);
            let trace = trace.cloned();
            remote.runtime.spawn(async move {
                let r = messaging
                    .request_traced(peer, verb, body.into(), timeout, trace)
                    .await;
                if let Err(e) = r {
                    tracing::warn!("view update to {peer} failed: {e}");
                }
            });
        }
    }

    /// The paired view replica of a view update `view` made by base mutation `base` (ring
    /// endpoint index; `None`: this node), as Cassandra's `ViewUtils.getViewNaturalEndpoint`
    /// pairs them: in this node's data center, a node that is a replica of both keeps its
    /// own; the others are paired in order, the i-th remaining base replica with the i-th
    /// remaining view replica.
    fn view_replica(&self, topology: &Topology, base: &Mutation, view: &Mutation) -> Option<usize> {
        let keyspace = self.db.table_by_id(view.table)?.schema().keyspace.clone();
        let strategy = self.replication(&keyspace);
        let ring = topology.ring();
        let local_id = topology.local_id();
        let local = ring.position(local_id)?;
        let endpoints = ring.endpoints();
        let dc = &endpoints.get(local)?.datacenter;
        let in_dc = |v: Vec<usize>| -> Vec<usize> {
            v.into_iter()
                .filter(|&i| endpoints.get(i).is_some_and(|e| e.datacenter == *dc))
                .collect()
        };
        let mut base_replicas = in_dc(strategy.replicas(ring, base.key.token, Some(local_id)));
        let mut view_replicas = in_dc(strategy.replicas(ring, view.key.token, Some(local_id)));
        if view_replicas.contains(&local) {
            return None;
        }
        let shared: Vec<usize> = base_replicas
            .iter()
            .copied()
            .filter(|i| view_replicas.contains(i))
            .collect();
        base_replicas.retain(|i| !shared.contains(i));
        view_replicas.retain(|i| !shared.contains(i));
        let i = base_replicas.iter().position(|&b| b == local)?;
        view_replicas.get(i).copied()
    }

    /// [`StorageProxy::check`] across the cluster: `token`'s replicas that are up and can
    /// be used (ring endpoint indexes), or Unavailable.
    fn cluster_targets(
        &self,
        topology: &Topology,
        strategy: &ReplicationStrategy,
        token: Token,
        cl: Consistency,
        op: Operation,
    ) -> Result<Vec<usize>> {
        let mut targets = Vec::new();
        let reach = Reach::Cluster;
        self.check(topology, strategy, token, cl, op, reach, Some(&mut targets))?;
        Ok(targets)
    }
}

/// The protocol's write type of a write of `mutations` partitions.
fn write_type(op: Operation, mutations: usize) -> WriteType {
    match op {
        Operation::Cas => WriteType::Cas,
        Operation::Counter => WriteType::Counter,
        _ if mutations > 1 => WriteType::UnloggedBatch,
        _ => WriteType::Simple,
    }
}

/// A local engine error as the client sees it: a storage fault of this node's replica is the
/// protocol's ReadFailure / WriteFailure at the request's level, naming this node; anything
/// else the engine's error.
fn local_failure(
    e: cairn_engine::Error,
    request: FailedRequest,
    cl: Consistency,
    strategy: Option<&ReplicationStrategy>,
    topology: &Topology,
) -> Error {
    let (dc, address) = topology.local().map_or(("", None), |m| {
        (m.endpoint.datacenter.as_str(), Some(m.endpoint.address))
    });
    let block_for = strategy.map_or(1, |s| cl.block_for(s, dc));
    let replica = address.unwrap_or(std::net::IpAddr::from([127, 0, 0, 1]));
    crate::fault::storage_failure(&e, request, cl, 0, block_for, replica)
        .unwrap_or(Error::Engine(e))
}

/// The replicas a read at `cl` contacts among `targets` (ring endpoint indexes of replicas
/// up): this node first, then its data center, then the others (placement order kept); only
/// the local data center's for a data-center-local level; as many as the level waits for.
/// The replicas a read at `cl` contacts (this node first, then its data center's, as many
/// as the level needs), and the other replicas up it may use instead of one that fails.
fn contacts(
    topology: &Topology,
    mut targets: Vec<usize>,
    cl: Consistency,
    strategy: &ReplicationStrategy,
) -> (Vec<read::Contact>, Vec<read::Contact>) {
    let ring = topology.ring();
    let local = ring.position(topology.local_id());
    let local_dc = topology
        .local()
        .map_or("", |m| m.endpoint.datacenter.as_str());
    let dc_of = |t: usize| {
        ring.endpoints()
            .get(t)
            .map_or("", |e| e.datacenter.as_str())
    };
    targets.sort_by_key(|&t| (Some(t) != local, dc_of(t) != local_dc));
    if cl.is_datacenter_local() {
        targets.retain(|&t| dc_of(t) == local_dc);
    }
    let spares = targets.split_off(cl.block_for(strategy, local_dc).max(1).min(targets.len()));
    let contact = |t: &usize| {
        ring.endpoints().get(*t).map(|e| read::Contact {
            address: e.address,
            local: Some(*t) == local,
        })
    };
    (
        targets.iter().filter_map(contact).collect(),
        spares.iter().filter_map(contact).collect(),
    )
}

/// A range scan's partitions, in token order: a local scan, or one coordinated across the
/// ring.
#[allow(clippy::large_enum_variant)] // one per scan, on the stack: no allocation to save
pub enum Scan<'a> {
    /// Every piece on this node.
    Local(ScanIter),
    /// Pieces on other nodes too.
    Ring(scan::RingScan<'a>),
}

impl Iterator for Scan<'_> {
    type Item = Result<PartitionResult>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Scan::Local(s) => s.next().map(|r| r.map_err(Error::from)),
            Scan::Ring(s) => s.next(),
        }
    }
}

/// [`availability::check`], and one replica up at least: ANY passes with none (a
/// coordinator would keep a hint), but a write still needs a replica to land on.
fn decide(
    cl: Consistency,
    strategy: &ReplicationStrategy,
    local_dc: &str,
    replicas: &[Replica<'_>],
) -> std::result::Result<(), Unavailable> {
    availability::check(cl, strategy, local_dc, replicas)?;
    if replicas.iter().any(|r| r.up) {
        Ok(())
    } else {
        Err(Unavailable {
            consistency: cl,
            required: 1,
            alive: 0,
            datacenter: None,
        })
    }
}
