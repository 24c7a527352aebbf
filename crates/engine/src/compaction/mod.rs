//! Compaction: strategies decide, the manager schedules, the job merges and swaps.
//!
//! * [`strategy`] — pure decisions. A strategy looks at a description of a table's sstable
//!   set ([`strategy::SSTableInfo`]) and returns the next [`strategy::Job`], with no I/O, so
//!   every rule is unit-tested and simulated from text.
//! * The job (merge inputs, purge what may be purged, write outputs split into fragments,
//!   swap them in atomically through a transaction log) is shared by every strategy.
//! * The manager runs jobs on background threads, never in the request path.

pub mod strategy;
