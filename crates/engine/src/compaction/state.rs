//! Per-table compaction bookkeeping, owned by the manager: which sstables running jobs hold
//! (no two jobs ever share one), how many jobs run and of which kinds, LCS's round-robin
//! position, and the table's place in the queue.
//!
//! The manager keeps one [`CompactionState`] per table *instance*, by table id: a truncated
//! table is a new table under a new id and starts afresh; a dropped table's entry is removed
//! once its jobs have stopped ([`TableStates::forget`]).

use super::strategy::JobKind;
use crate::model::DecoratedKey;
use crate::schema::TableId;
use crate::table::Table;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

/// A table's compaction bookkeeping.
#[derive(Debug, Default)]
pub struct CompactionState {
    /// Generations held by running jobs: no two jobs ever share an sstable.
    pub compacting: std::collections::HashSet<u64>,
    /// Jobs running on the table.
    pub running: usize,
    /// What kind of job each running job is (strategies avoid starting a second cross-tier
    /// job while one runs).
    pub running_kinds: Vec<JobKind>,
    /// LCS round robin: the last key compacted out of each level.
    pub last_compacted_keys: Vec<Option<DecoratedKey>>,
    /// Jobs finished.
    pub completed: u64,
    /// Jobs failed (stopped jobs not included).
    pub failed: u64,
    /// True while the table waits in the manager's queue.
    pub queued: bool,
}

/// Every table's [`CompactionState`].
#[derive(Debug, Default)]
pub struct TableStates {
    map: Mutex<HashMap<TableId, Arc<Mutex<CompactionState>>>>,
}

impl TableStates {
    /// The state of `table` (a fresh one the first time).
    pub fn of(&self, table: &Table) -> Arc<Mutex<CompactionState>> {
        Arc::clone(self.map.lock().entry(table.schema().id).or_default())
    }

    /// Forgets a dropped table.
    pub fn forget(&self, table: &Table) {
        self.map.lock().remove(&table.schema().id);
    }
}
