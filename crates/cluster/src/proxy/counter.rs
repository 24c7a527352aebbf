//! Counter writes: this node leads each increment (Cassandra's `CounterMutation`).
//!
//! Statement execution hands [`StorageProxy::mutate_counters`] mutations whose live simple
//! cells are *deltas* (a `bigint`, 8 bytes big-endian: `c = c + 3` is `3`, `c = c - 3` is
//! `-3`); tombstones (`DELETE`) pass as they are. For each partition, under its counter lock,
//! the leader reads its own current shard of every cell the mutations increment
//! ([`crate::proxy`]'s local read, tombstones applied), makes the next shard — its clock
//! advanced, its value plus the delta, `cairn_engine::model::counter` — and applies an
//! ordinary mutation carrying that *resulting* shard as a counter cell. So the commitlog
//! holds results, not deltas: replaying it after a crash, or a replica receiving the same
//! write twice, merges the same shard again and counts nothing twice.
//!
//! Invariants:
//! - a partition's counters are read and written under one lock held from the read to the
//!   apply, so two increments of one cell never read the same shard;
//! - a shard's clock is `max(previous clock + 1, write timestamp)` and the cell's timestamp
//!   is at least its clock: a deletion at `D` then shadows exactly the shards written at or
//!   before `D` (`Cell::shadow_shards`), whichever leaders wrote them and whenever versions
//!   are merged, and a later increment starts from zero with a clock above `D`;
//! - several increments of one cell in one request (a counter batch) each advance the clock,
//!   so the cell's final shard carries their sum;
//! - under `Wait::Never` a request spanning several partitions is refused before anything is
//!   read (`WouldBlock`): its rerun must not apply a partition twice. Partitions are applied
//!   one after the other, each its own commitlog record (Cassandra's counter batches are not
//!   atomic either).
//!
//! In a ring the leader is one of the partition's replicas up: this node when it is one, else
//! one chosen by the coordinator (a replica in its data center first) and sent the deltas
//! with the `COUNTER_MUTATION` verb (the replica side is [`serve_leader`]). The leader
//! resolves the deltas as above, then writes the result through the ordinary write path: its
//! own replica and the others (which merge the shard into theirs), waiting for the level. A
//! leader that finds itself no longer a replica (the ring changed) refuses rather than
//! forward again.

use super::{Acks, Operation, RemoteReplicas, StorageProxy};
use crate::consistency::{Consistency, WriteTimeout, WriteType};
use crate::error::{Error, Result};
use crate::messaging::Verb;
use crate::topology::Topology;
use bytes::Bytes;
use cairn_engine::model::counter::{self, Shard};
use cairn_engine::model::mutation::{decode_batch, encode_batch};
use cairn_engine::model::{
    Cell, ClusteringKey, ClusteringRange, ColumnData, ColumnId, Mutation, Row, Slice,
};
use cairn_engine::table::Table;
use cairn_engine::{ReadCommand, Trace, Wait};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;

impl StorageProxy {
    /// Applies counter mutations at `cl`, led by this node or by a replica (see the module
    /// doc); the wait for other replicas may be left in `acks` as
    /// [`StorageProxy::mutate_or_defer`] does.
    pub fn mutate_counters(
        &self,
        mutations: Vec<Mutation>,
        cl: Consistency,
        wait: Wait,
        acks: Option<&Acks>,
        trace: Option<&Trace>,
    ) -> Result<()> {
        self.counter_write(mutations, cl, wait, acks, trace, false)
    }

    fn counter_write(
        &self,
        mutations: Vec<Mutation>,
        cl: Consistency,
        wait: Wait,
        acks: Option<&Acks>,
        trace: Option<&Trace>,
        forwarded: bool,
    ) -> Result<()> {
        let topology = self.topology.get();
        let groups = by_partition(mutations);
        if matches!(wait, Wait::Never) && groups.len() > 1 {
            return Err(Error::Engine(cairn_engine::Error::WouldBlock));
        }
        let local = topology.local_id().0;
        for group in groups {
            let Some(first) = group.first() else {
                continue;
            };
            let Some(table) = self.db.table_by_id(first.table) else {
                // The engine names the missing table when it applies.
                return self.mutate_as(group, cl, Operation::Counter, wait, acks, trace);
            };
            if let (true, Some(remote)) = (self.in_cluster(&topology), &self.remote) {
                let strategy = self.replication(&table.schema().keyspace);
                let token = first.key.token;
                let targets =
                    self.cluster_targets(&topology, &strategy, token, cl, Operation::Counter)?;
                let me = topology.ring().position(topology.local_id());
                if !targets.iter().any(|&t| Some(t) == me) {
                    if forwarded {
                        return Err(Error::CountersLeader);
                    }
                    if matches!(wait, Wait::Never) {
                        // Waiting for the leader blocks the thread: refuse before anything.
                        return Err(Error::Engine(cairn_engine::Error::WouldBlock));
                    }
                    let dc = topology.local().map(|m| m.endpoint.datacenter.clone());
                    let block_for = cl.block_for(&strategy, dc.as_deref().unwrap_or(""));
                    // No replica's address known (the ring changed under us): the level
                    // cannot be met — never a guessed address.
                    let leader = leader_of(&topology, &targets, dc.as_deref()).ok_or(
                        crate::consistency::Unavailable {
                            consistency: cl,
                            required: block_for,
                            alive: 0,
                            datacenter: None,
                        },
                    )?;
                    forward(remote, leader, &group, cl, block_for, trace)?;
                    continue;
                }
            }
            let key = first.key.clone();
            let Some(_lock) = self.counter_locks.lock(first.table, &key, wait) else {
                return Err(Error::Engine(cairn_engine::Error::WouldBlock));
            };
            let resolved = resolve(&table, group, &local, wait, trace)?;
            self.mutate_as(resolved, cl, Operation::Counter, wait, acks, trace)?;
        }
        Ok(())
    }
}

/// The replica to lead an increment: the first of `targets` (replicas up, in placement
/// order) in this node's data center, else the first.
fn leader_of(topology: &Topology, targets: &[usize], dc: Option<&str>) -> Option<IpAddr> {
    let ring = topology.ring();
    let endpoint = |i: usize| ring.endpoints().get(i);
    targets
        .iter()
        .filter_map(|&i| endpoint(i))
        .find(|e| Some(e.datacenter.as_str()) == dc)
        .or_else(|| targets.iter().find_map(|&i| endpoint(i)))
        .map(|e| e.address)
}

/// Sends one partition's deltas to `leader` and waits for its answer (the leader waits for
/// the level; this node waits for the leader, twice the write timeout at most).
fn forward(
    remote: &RemoteReplicas,
    leader: IpAddr,
    group: &[Mutation],
    cl: Consistency,
    block_for: usize,
    trace: Option<&Trace>,
) -> Result<()> {
    let mut body = cl.code().to_be_bytes().to_vec();
    encode_batch(group, &mut body);
    let timeout = remote.write_timeout.saturating_mul(2);
    let body = Bytes::from(body);
    let verb = Verb::CounterMutation;
    let request = remote
        .messaging
        .request_traced(leader, verb, body, timeout, trace.cloned());
    match remote.runtime.block_on(request) {
        Ok(_) => Ok(()),
        Err(Error::Timeout { .. }) => Err(Error::WriteTimeout(WriteTimeout {
            consistency: cl,
            received: 0,
            block_for,
            write_type: WriteType::Counter,
        })),
        Err(e) => Err(e),
    }
}

/// The leader's side of `COUNTER_MUTATION`: the body decoded and the increments led here,
/// on the blocking pool (reading the shards and waiting for the replicas may block).
pub(super) async fn serve_leader(
    proxy: Arc<StorageProxy>,
    from: IpAddr,
    body: Bytes,
    trace: Option<Trace>,
) -> std::result::Result<Bytes, String> {
    let (code, rest) = match body.as_ref() {
        [a, b, ..] => (u16::from_be_bytes([*a, *b]), body.slice(2..)),
        _ => return Err(format!("undecodable counter mutation from {from}")),
    };
    let cl = Consistency::from_code(code)
        .ok_or_else(|| format!("counter mutation from {from}: bad consistency {code}"))?;
    let mutations = decode_batch(&rest)
        .map_err(|e| format!("undecodable counter mutation from {from}: {e:?}"))?;
    tokio::task::spawn_blocking(move || {
        proxy.counter_write(mutations, cl, Wait::Allowed, None, trace.as_ref(), true)
    })
    .await
    .map_err(|e| format!("counter mutation task failed: {e}"))?
    .map_err(|e| e.to_string())?;
    Ok(Bytes::new())
}

/// The mutations grouped by (table, partition), in the order their partitions first appear.
fn by_partition(mutations: Vec<Mutation>) -> Vec<Vec<Mutation>> {
    let mut groups: Vec<Vec<Mutation>> = Vec::new();
    for m in mutations {
        match groups.iter_mut().find(|g| {
            g.first()
                .is_some_and(|f| f.table == m.table && f.key == m.key)
        }) {
            Some(g) => g.push(m),
            None => groups.push(vec![m]),
        }
    }
    groups
}

/// A cell of a partition: its row (`None`: the static row) and column.
type CellAt = (Option<ClusteringKey>, ColumnId);

/// One partition's counter mutations with every delta replaced by this node's resulting
/// shard, read from `table` (the caller holds the partition's counter lock); a traced
/// request's `trace` hears of the read.
fn resolve(
    table: &Table,
    mut group: Vec<Mutation>,
    local: &[u8; 16],
    wait: Wait,
    trace: Option<&Trace>,
) -> Result<Vec<Mutation>> {
    let Some(key) = group.first().map(|m| m.key.clone()) else {
        return Ok(group);
    };
    let increments = |row: &Row| {
        row.columns
            .iter()
            .any(|(_, d)| matches!(d, ColumnData::Simple(c) if !c.is_tombstone() && !c.counter))
    };
    let mut ranges = Vec::new();
    let mut include_static = false;
    for m in &group {
        include_static |= m.update.static_row.as_ref().is_some_and(increments);
        for (ck, row) in &m.update.rows {
            if increments(row) {
                ranges.push(ClusteringRange::prefix(&ck.0));
            }
        }
    }
    if ranges.is_empty() && !include_static {
        // Deletions only: nothing to read.
        return Ok(group);
    }
    let mut cmd = ReadCommand::all(now_secs(), wait);
    cmd.slice = Slice::new(ranges);
    cmd.include_static = include_static;
    cmd.trace = trace.cloned();
    let current = table.read(&key, &cmd)?;
    let mut shards: HashMap<CellAt, Shard> = HashMap::new();
    if let Some(p) = &current {
        let mut note = |ck: Option<ClusteringKey>, row: &Row| {
            for (id, data) in &row.columns {
                if let ColumnData::Simple(c) = data {
                    if let Some(s) = c
                        .counter
                        .then(|| counter::shard_of(&c.value, local))
                        .flatten()
                    {
                        shards.insert((ck.clone(), *id), s);
                    }
                }
            }
        };
        if let Some(s) = &p.static_row {
            note(None, s);
        }
        for (ck, row) in &p.rows {
            note(Some(ck.clone()), row);
        }
    }
    // Every increment of one cell in the group is one update, as Cassandra merges a batch's
    // statements per partition before it counts: the deltas are summed first, then the cell
    // gets one new shard (one clock step), the same in each statement that names it. Two steps
    // would put the second clock after the request's timestamp, so a deletion at that
    // timestamp would no longer shadow the cell.
    let mut deltas: HashMap<CellAt, i64> = HashMap::new();
    for_each_increment(&mut group, |at, cell| {
        let delta: [u8; 8] =
            cell.value.as_ref().try_into().map_err(|_| {
                cairn_engine::Error::InvalidMutation("counter delta is not 8 bytes")
            })?;
        let sum = deltas.entry(at).or_insert(0);
        *sum = sum.wrapping_add(i64::from_be_bytes(delta));
        Ok(())
    })?;
    let mut updated: HashMap<CellAt, Shard> = HashMap::new();
    for_each_increment(&mut group, |at, cell| {
        let shard = *updated.entry(at.clone()).or_insert_with(|| {
            let previous = shards.get(&at).copied();
            Shard {
                id: *local,
                clock: previous
                    .map_or(1, |p| p.clock.saturating_add(1))
                    .max(cell.timestamp),
                value: previous
                    .map_or(0, |p| p.value)
                    .wrapping_add(deltas.get(&at).copied().unwrap_or(0)),
            }
        });
        *cell = Cell::counter(cell.timestamp.max(shard.clock), counter::encode(&[shard]));
        Ok(())
    })?;
    Ok(group)
}

/// Calls `f` on every increment (a live cell not yet a counter shard) of `group`, static rows
/// first within each mutation.
fn for_each_increment(
    group: &mut [Mutation],
    mut f: impl FnMut(CellAt, &mut Cell) -> Result<()>,
) -> Result<()> {
    for m in group {
        if let Some(row) = m.update.static_row.as_mut() {
            for (id, data) in &mut row.columns {
                if let ColumnData::Simple(c) = data {
                    if !c.is_tombstone() && !c.counter {
                        f((None, *id), c)?;
                    }
                }
            }
        }
        for (ck, row) in &mut m.update.rows {
            for (id, data) in &mut row.columns {
                if let ColumnData::Simple(c) = data {
                    if !c.is_tombstone() && !c.counter {
                        f((Some(ck.clone()), *id), c)?;
                    }
                }
            }
        }
    }
    Ok(())
}

pub(super) fn now_secs() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs().min(u64::from(u32::MAX - 1)) as u32)
}
