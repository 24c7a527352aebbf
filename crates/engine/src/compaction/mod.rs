//! Compaction: strategies decide, the manager schedules, the job merges and swaps.
//!
//! * [`strategy`] — pure decisions. A strategy looks at a description of a table's sstable
//!   set ([`strategy::SSTableInfo`]) and returns the next [`strategy::Job`], with no I/O, so
//!   every rule is unit-tested and simulated from text.
//! * [`job`] — the mechanism every strategy shares: merge the inputs, [`purge`] what may be
//!   purged, write outputs split into fragments, swap them in atomically through the
//!   transaction log ([`txn`]).
//! * [`manager`] — runs jobs on background threads, never in the request path, at most one
//!   job per sstable, paced by the [`throttle`] and prioritised by the backlog [`controller`];
//!   finished jobs are recorded in [`history`], which survives restarts; each table's
//!   bookkeeping (sstables held by jobs, jobs running) is the manager's [`state`].
//! * [`flush_fragments`] — how many key-range fragments a flush is written as (the strategy's
//!   choice, which the database hands to the table's flush).

pub mod controller;
pub mod history;
pub mod job;
pub mod manager;
pub mod purge;
pub mod state;
pub mod strategy;
pub mod throttle;
pub mod txn;

use crate::sstable::reader::SSTable;
use strategy::SSTableInfo;

/// What a strategy gets to know about a live sstable.
pub fn describe(s: &SSTable) -> SSTableInfo {
    let st = &s.stats;
    SSTableInfo {
        generation: s.generation,
        level: st.level,
        run_id: st.run_id,
        disk_bytes: s.disk_bytes(),
        data_bytes: st.uncompressed_length,
        first_key: st.first_key.clone(),
        last_key: st.last_key.clone(),
        min_timestamp: st.min_timestamp,
        max_timestamp: st.max_timestamp,
        max_local_deletion_time: st.max_local_deletion_time,
        fully_expiring: st.max_local_deletion_time != crate::model::cell::NO_DELETION_TIME,
        created_at: st.created_at,
        tombstone_drop_times: st.tombstone_drop_times.clone(),
        cell_count: st.cell_count,
    }
}

/// How many fragments a flush of about `bytes` of a table with `schema` is written as (see
/// [`strategy::CompactionOptions::flush_fragments`]). Options that do not parse cannot have
/// been set on the table: one sstable then.
pub fn flush_fragments(schema: &crate::schema::TableSchema, bytes: u64) -> usize {
    strategy::CompactionOptions::from_map(&schema.options.compaction)
        .map_or(1, |o| o.flush_fragments(bytes))
}
