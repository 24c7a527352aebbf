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
//! Today the proxy is the local implementation: the only replica it can reach is its own node,
//! so a replica on another node counts as down. On a node alone this is exactly Cassandra's
//! behaviour (a keyspace with `replication_factor: 3` answers ONE but not QUORUM), and in a
//! ring of several nodes it keeps the node from answering for data it does not hold: a request
//! whose replicas are elsewhere is refused with Unavailable rather than served from the wrong
//! node. The coordinator (sending to remote replicas over messaging, waiting for the level,
//! digests and read repair) comes behind these same methods.
//!
//! Waiting follows the executor's convention (`cairn_engine::io::Wait`): the mutation and read
//! paths take the request's mode and a request that would wait returns `WouldBlock` with
//! nothing done; the server reruns it where it may block.
//!
//! Invariants: a mutation is applied only when every one of its tokens passed the check, and
//! all of a call's mutations are applied in one `Database::apply` (one commitlog record); a
//! read runs only when its token passed.

pub mod availability;
pub mod replica;
mod write;

use crate::consistency::{Consistency, Unavailable, WriteType};
use crate::error::{Error, Result};
use crate::messaging::Messaging;
use crate::placement::ReplicationStrategy;
use crate::topology::{Topology, TopologyHandle};
use availability::Replica;
use cairn_engine::model::{DecoratedKey, Mutation, PartitionPos, Token};
use cairn_engine::read::ScanIter;
use cairn_engine::table::Table;
use cairn_engine::{Database, PartitionResult, ReadCommand, Wait};
use parking_lot::RwLock;
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
    /// `replica_received_mutations`: mutations this node applied for a coordinator.
    pub replica_received_mutations: AtomicU64,
}

/// How the proxy reaches the other replicas.
pub struct RemoteReplicas {
    /// Internode messaging.
    pub messaging: Arc<Messaging>,
    /// The runtime its messages are sent from.
    pub runtime: tokio::runtime::Handle,
    /// `write_request_timeout`: how long a write waits for its level.
    pub write_timeout: Duration,
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
    keyspaces: RwLock<HashMap<String, Arc<ReplicationStrategy>>>,
    /// The other replicas, when the node is in a cluster (none: only itself is reachable).
    remote: Option<RemoteReplicas>,
    metrics: ProxyMetrics,
}

impl StorageProxy {
    /// A proxy over the local database, placing replicas on `topology`.
    pub fn new(db: Arc<Database>, topology: TopologyHandle) -> StorageProxy {
        StorageProxy {
            db,
            topology,
            keyspaces: RwLock::new(HashMap::new()),
            remote: None,
            metrics: ProxyMetrics::default(),
        }
    }

    /// Sends writes to the other replicas too (those the topology shows up). Reads still
    /// need the local replica: the coordinator's reads (digests, read repair) are to come.
    pub fn with_remote(mut self, remote: RemoteReplicas) -> StorageProxy {
        self.remote = Some(remote);
        self
    }

    /// The database underneath.
    pub fn db(&self) -> &Arc<Database> {
        &self.db
    }

    /// The topology replicas are placed on.
    pub fn topology(&self) -> &TopologyHandle {
        &self.topology
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
        self.mutate_as(mutations, cl, op, wait)
    }

    /// [`StorageProxy::mutate`] for a conditional write's commit (counted as CAS).
    pub fn commit(&self, mutations: Vec<Mutation>, cl: Consistency, wait: Wait) -> Result<()> {
        self.mutate_as(mutations, cl, Operation::Cas, wait)
    }

    fn mutate_as(
        &self,
        mutations: Vec<Mutation>,
        cl: Consistency,
        op: Operation,
        wait: Wait,
    ) -> Result<()> {
        let topology = self.topology.get();
        let mut plans = Vec::with_capacity(mutations.len());
        let mut checked: Option<(u128, Arc<ReplicationStrategy>)> = None;
        for m in &mutations {
            let strategy = match &checked {
                Some((table, s)) if *table == m.table => Arc::clone(s),
                _ => {
                    let Some(t) = self.db.table_by_id(m.table) else {
                        // The engine names the missing table when it applies.
                        return Ok(self.db.apply(mutations, wait)?);
                    };
                    let s = self.replication(&t.schema().keyspace);
                    checked = Some((m.table, Arc::clone(&s)));
                    s
                }
            };
            let targets = self.check(&topology, &strategy, m.key.token, cl, op, Reach::Cluster)?;
            plans.push(write::Planned { strategy, targets });
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
            _ => return Ok(self.db.apply(mutations, wait)?),
        };
        if matches!(wait, Wait::Never) {
            // Waiting for other nodes blocks the thread: refuse before anything is applied.
            return Err(Error::Engine(cairn_engine::Error::WouldBlock));
        }
        let write_type = match op {
            Operation::Cas => WriteType::Cas,
            _ if mutations.len() > 1 => WriteType::UnloggedBatch,
            _ => WriteType::Simple,
        };
        let local_dc = topology
            .local()
            .map_or("", |m| m.endpoint.datacenter.as_str());
        let target = write::Remote {
            messaging: &remote.messaging,
            runtime: &remote.runtime,
            timeout: remote.write_timeout,
        };
        let r = write::write(
            &self.db, ring, local, local_dc, mutations, &plans, cl, write_type, &target,
        );
        match &r {
            Err(Error::WriteTimeout(_)) => {
                self.metrics.write_timeouts.fetch_add(1, Ordering::Relaxed);
            }
            Err(Error::WriteFailure(_)) => {
                self.metrics.write_failures.fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        }
        r
    }

    /// Reads one partition of `table` at `cl` (`cmd` carries the wait mode). At SERIAL or
    /// LOCAL_SERIAL the read is a Paxos read in a cluster, counted as one.
    pub fn read(
        &self,
        table: &Table,
        key: &DecoratedKey,
        cmd: &ReadCommand,
        cl: Consistency,
    ) -> Result<Option<PartitionResult>> {
        let op = if cl.is_serial() {
            Operation::CasRead
        } else {
            Operation::Read
        };
        self.read_as(table, key, cmd, cl, op)
    }

    /// A conditional write's read of the current values, at its `serial` level (its Paxos
    /// round, in a cluster); counted with conditional writes.
    pub fn read_for_condition(
        &self,
        table: &Table,
        key: &DecoratedKey,
        cmd: &ReadCommand,
        serial: Consistency,
    ) -> Result<Option<PartitionResult>> {
        self.read_as(table, key, cmd, serial, Operation::Cas)
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
        self.check(
            &self.topology.get(),
            &strategy,
            key.token,
            cl,
            op,
            Reach::Local,
        )?;
        Ok(table.read(key, cmd)?)
    }

    /// Scans `table` of `keyspace` from `start` to `end` (the end of the ring when `None`) at
    /// `cl`. Every range of the ring the scan may cover must reach the level.
    pub fn scan(
        &self,
        keyspace: &str,
        table: &str,
        start: PartitionPos,
        end: Option<Token>,
        cmd: ReadCommand,
        cl: Consistency,
    ) -> Result<ScanIter> {
        let strategy = self.replication(keyspace);
        let topology = self.topology.get();
        let ring = topology.ring();
        let op = Operation::Range;
        if ring.endpoints().len() <= 1 {
            self.check(&topology, &strategy, Token(0), cl, op, Reach::Local)?;
        } else {
            // Each range is checked at its end token, which the range's replicas hold.
            for (range, _) in ring.ranges() {
                self.check(&topology, &strategy, range.end, cl, op, Reach::Local)?;
            }
        }
        Ok(self.db.scan(keyspace, table, start, end, cmd)?)
    }

    /// Checks that a read of `keyspace` at `cl` could be served, without reading: for the
    /// system tables a node builds from its own metadata (their keyspaces are local to each
    /// node, so the levels needing more than one replica are refused as Cassandra refuses
    /// them).
    pub fn check_reachable(&self, keyspace: &str, cl: Consistency) -> Result<()> {
        let strategy = self.replication(keyspace);
        let topology = self.topology.get();
        let token = Token(0);
        self.check(
            &topology,
            &strategy,
            token,
            cl,
            Operation::Read,
            Reach::Local,
        )
        .map(|_| ())
    }

    /// Checks that `token`'s replicas can serve `cl` from here; the replicas that can be
    /// used (ring endpoint indexes).
    fn check(
        &self,
        topology: &Topology,
        strategy: &ReplicationStrategy,
        token: Token,
        cl: Consistency,
        op: Operation,
        reach: Reach,
    ) -> Result<Vec<usize>> {
        let local = topology.local_id();
        let local_dc = topology
            .local()
            .map_or("", |m| m.endpoint.datacenter.as_str());
        let ring = topology.ring();
        let found = strategy.replicas(ring, token, Some(local));
        let reachable = |id| {
            id == local || (reach == Reach::Cluster && self.remote.is_some() && topology.is_up(id))
        };
        let mut targets = Vec::with_capacity(found.len());
        let replicas: Vec<Replica<'_>> = found
            .iter()
            .filter_map(|&i| ring.endpoints().get(i).map(|e| (i, e)))
            .map(|(i, e)| {
                let up = reachable(e.host_id);
                if up {
                    targets.push(i);
                }
                Replica {
                    datacenter: e.datacenter.as_str(),
                    up,
                }
            })
            .collect();
        let result = availability::check(cl, strategy, local_dc, &replicas).and_then(|_| {
            // ANY passes with no replica up (a coordinator would keep a hint), but the write
            // still needs a replica here to land on.
            if replicas.iter().any(|r| r.up) {
                Ok(targets)
            } else {
                Err(Unavailable {
                    consistency: cl,
                    required: 1,
                    alive: 0,
                    datacenter: None,
                })
            }
        });
        result.map_err(|u| {
            let counter = match op {
                Operation::Write => &self.metrics.write_unavailable,
                Operation::Read => &self.metrics.read_unavailable,
                Operation::Range => &self.metrics.range_unavailable,
                Operation::Cas => &self.metrics.cas_write_unavailable,
                Operation::CasRead => &self.metrics.cas_read_unavailable,
            };
            counter.fetch_add(1, Ordering::Relaxed);
            Error::Unavailable(u)
        })
    }
}
