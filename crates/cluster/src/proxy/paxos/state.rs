//! A replica's Paxos state: for each partition some round touched, the highest ballot it
//! promised, the last proposal it accepted and the last proposal it saw committed.
//!
//! The state is kept in a node-local engine table, `system.paxos` (made on first use), one
//! row per partition keyed by the table id and the partition key, so a promise or an
//! acceptance survives a crash exactly as a write does (the commitlog's `commitlog_sync`):
//! a replica that forgot a promise after a restart could accept a lower ballot and break
//! the protocol. Each phase is a read-modify-write of the partition's row under the
//! replica's partition lock, so concurrent rounds on one replica see each other's changes.
//! Each takes the executor's wait mode: under `Wait::Never` a phase that would wait (the lock,
//! the disk, memtable space, the table's creation) is `WouldBlock` with nothing written, and
//! runs again where it may wait.
//! A commit applies the committed update and records it in one `Database::apply` (one
//! commitlog record): a replica never holds the update without knowing it was committed,
//! nor the reverse.
//!
//! Every cell is written with its ballot's time as timestamp and an accepted or committed
//! proposal is one cell (ballot, then update), so the table's own reconciliation keeps the
//! highest ballot even for rows written twice with one timestamp (byte order is ballot
//! order). Rows expire after `max(3 h, gc_grace_seconds)` of the table, as Cassandra's do:
//! a round older than that is over.

use super::super::locks::PartitionLocks;
use super::ballot::{Ballot, BALLOT_BYTES};
use crate::error::{Error, Result};
use bytes::Bytes;
use cairn_engine::model::mutation::{decode_batch, encode_batch};
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{
    Cell, ClusteringKey, ColumnData, DecoratedKey, Mutation, Partition, Row,
};
use cairn_engine::schema::{ColumnKind, TableSchema};
use cairn_engine::table::Table;
use cairn_engine::{Database, ReadCommand, Wait};
use parking_lot::{Mutex, MutexGuard};
use std::sync::Arc;

const KEYSPACE: &str = "system";
const TABLE: &str = "paxos";
const COL_PROMISED: u32 = 1;
const COL_ACCEPTED: u32 = 2;
const COL_COMMITTED: u32 = 3;
/// The shortest life of a partition's state (Cassandra's 3 hours).
const MIN_TTL_SECS: u32 = 3 * 3600;

/// A proposal: a ballot and the update it carries (mutations in the commitlog's encoding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    /// Its ballot.
    pub ballot: Ballot,
    /// The update (one partition's mutations, `encode_batch`).
    pub update: Bytes,
}

impl Proposal {
    /// The proposal's mutations (of `table`, for the error).
    pub fn mutations(&self, table: u128) -> Result<Vec<Mutation>> {
        decode_batch(&self.update).map_err(|e| Error::PaxosDecode {
            what: "update",
            table,
            message: format!("{e:?}"),
        })
    }

    /// A proposal of `mutations` at `ballot`.
    pub fn of(ballot: Ballot, mutations: &[Mutation]) -> Proposal {
        let mut out = Vec::new();
        encode_batch(mutations, &mut out);
        Proposal {
            ballot,
            update: Bytes::from(out),
        }
    }

    fn cell_value(&self) -> Bytes {
        let mut out = Vec::with_capacity(BALLOT_BYTES + self.update.len());
        out.extend_from_slice(&self.ballot.to_bytes());
        out.extend_from_slice(&self.update);
        Bytes::from(out)
    }

    fn from_cell(value: &Bytes) -> Option<Proposal> {
        Some(Proposal {
            ballot: Ballot::from_bytes(value)?,
            update: value.slice(BALLOT_BYTES..),
        })
    }
}

/// A replica's answer to a prepare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrepareAnswer {
    /// The ballot is the highest seen: promised, with what was accepted and committed.
    Promise {
        /// The last proposal accepted, if any.
        accepted: Option<Proposal>,
        /// The last proposal committed, if any.
        committed: Option<Proposal>,
    },
    /// A higher or equal ballot was promised before.
    Rejected {
        /// That ballot.
        promised: Ballot,
    },
}

/// One partition's state.
#[derive(Debug, Default)]
struct State {
    promised: Ballot,
    accepted: Option<Proposal>,
    committed: Option<Proposal>,
}

/// This node's Paxos state (see the module doc).
pub struct PaxosState {
    db: Arc<Database>,
    table: Mutex<Option<Arc<Table>>>,
    locks: PartitionLocks,
}

impl PaxosState {
    /// The state kept in `db`.
    pub fn new(db: Arc<Database>) -> PaxosState {
        PaxosState {
            db,
            table: Mutex::new(None),
            locks: PartitionLocks::default(),
        }
    }

    /// Answers a prepare of `ballot` for partition `key` of table `table`.
    pub fn prepare(
        &self,
        table: u128,
        key: &DecoratedKey,
        ballot: Ballot,
        wait: Wait,
    ) -> Result<PrepareAnswer> {
        let _lock = self.lock(table, key, wait)?;
        let store = self.store(wait)?;
        let row_key = row_key(table, key);
        let state = self.load(&store, &row_key, wait)?;
        if ballot <= state.promised {
            return Ok(PrepareAnswer::Rejected {
                promised: state.promised,
            });
        }
        let cells = [(COL_PROMISED, Bytes::copy_from_slice(&ballot.to_bytes()))];
        let write = self.state_write(&store, table, &row_key, ballot, &cells);
        self.db.apply(vec![write], wait)?;
        Ok(PrepareAnswer::Promise {
            accepted: state.accepted,
            committed: state.committed,
        })
    }

    /// Answers a proposal: accepted (and recorded) unless a higher ballot was promised.
    pub fn propose(
        &self,
        table: u128,
        key: &DecoratedKey,
        proposal: &Proposal,
        wait: Wait,
    ) -> Result<bool> {
        let _lock = self.lock(table, key, wait)?;
        let store = self.store(wait)?;
        let row_key = row_key(table, key);
        let state = self.load(&store, &row_key, wait)?;
        if proposal.ballot < state.promised {
            return Ok(false);
        }
        let cells = [
            (
                COL_PROMISED,
                Bytes::copy_from_slice(&proposal.ballot.to_bytes()),
            ),
            (COL_ACCEPTED, proposal.cell_value()),
        ];
        let write = self.state_write(&store, table, &row_key, proposal.ballot, &cells);
        self.db.apply(vec![write], wait)?;
        Ok(true)
    }

    /// Applies a committed proposal and records it, in one commitlog record, through `apply`
    /// (the proxy's `apply_local`: with the view updates of a table that has views).
    pub fn commit(
        &self,
        table: u128,
        key: &DecoratedKey,
        proposal: &Proposal,
        wait: Wait,
        apply: &crate::proxy::write::LocalApply<'_>,
    ) -> Result<()> {
        let mut mutations = proposal.mutations(table)?;
        let _lock = self.lock(table, key, wait)?;
        let store = self.store(wait)?;
        let row_key = row_key(table, key);
        let cells = [(COL_COMMITTED, proposal.cell_value())];
        mutations.push(self.state_write(&store, table, &row_key, proposal.ballot, &cells));
        apply(mutations, wait, None)?;
        Ok(())
    }

    fn lock(&self, table: u128, key: &DecoratedKey, wait: Wait) -> Result<MutexGuard<'_, ()>> {
        self.locks
            .lock(table, key, wait)
            .ok_or(Error::Engine(cairn_engine::Error::WouldBlock))
    }

    /// The state table, made on first use (which waits for the disk).
    fn store(&self, wait: Wait) -> Result<Arc<Table>> {
        let mut slot = self.table.lock();
        if let Some(t) = slot.as_ref() {
            return Ok(Arc::clone(t));
        }
        if matches!(wait, Wait::Never) {
            return Err(Error::Engine(cairn_engine::Error::WouldBlock));
        }
        let table = match self.db.table(KEYSPACE, TABLE) {
            Some(t) => t,
            None => self.db.create_table(
                TableSchema::new(KEYSPACE, TABLE)
                    .with_column("row_key", CqlType::Blob, ColumnKind::PartitionKey)
                    .with_column("promised", CqlType::Blob, ColumnKind::Regular)
                    .with_column("accepted", CqlType::Blob, ColumnKind::Regular)
                    .with_column("committed", CqlType::Blob, ColumnKind::Regular),
            )?,
        };
        *slot = Some(Arc::clone(&table));
        Ok(table)
    }

    fn load(&self, store: &Table, row_key: &DecoratedKey, wait: Wait) -> Result<State> {
        let cmd = ReadCommand::all(now_secs(), wait);
        let Some(p) = store.read(row_key, &cmd)? else {
            return Ok(State::default());
        };
        let Some((_, row)) = p.rows.first() else {
            return Ok(State::default());
        };
        let value = |id| row.cell(id).map(|c| &c.value);
        Ok(State {
            promised: value(COL_PROMISED)
                .and_then(|v| Ballot::from_bytes(v))
                .unwrap_or(Ballot::NONE),
            accepted: value(COL_ACCEPTED).and_then(Proposal::from_cell),
            committed: value(COL_COMMITTED).and_then(Proposal::from_cell),
        })
    }

    /// A write of `cells` to a partition's state row at `ballot`'s time.
    fn state_write(
        &self,
        store: &Table,
        table: u128,
        row_key: &DecoratedKey,
        ballot: Ballot,
        cells: &[(u32, Bytes)],
    ) -> Mutation {
        let gc_grace = self
            .db
            .table_by_id(table)
            .map_or(0, |t| t.schema().options.gc_grace_seconds);
        let ttl = gc_grace.max(MIN_TTL_SECS);
        let now = now_secs();
        let mut row = Row::default();
        for (id, value) in cells {
            let cell = Cell::expiring(ballot.micros, ttl, now, value.clone());
            row.columns.push((*id, ColumnData::Simple(cell)));
        }
        let mut update = Partition::default();
        update.rows.insert(ClusteringKey::empty(), row);
        Mutation {
            table: store.schema().id,
            key: row_key.clone(),
            update,
        }
    }
}

/// The state row's key: the table id, then the partition key.
fn row_key(table: u128, key: &DecoratedKey) -> DecoratedKey {
    let mut out = Vec::with_capacity(16 + key.key.len());
    out.extend_from_slice(&table.to_le_bytes());
    out.extend_from_slice(&key.key);
    DecoratedKey::new(Bytes::from(out))
}

fn now_secs() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs().min(u64::from(u32::MAX - 1)) as u32)
}
