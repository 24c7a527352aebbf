//! The vocabulary of a compaction decision: what a strategy is shown — each live sstable
//! ([`SSTableInfo`]) and the table's state besides the set ([`StrategyState`]) — and what it
//! answers ([`Job`], of a [`JobKind`]), and the [`Strategy`] trait every strategy implements.
//! Shared by every strategy, the manager and the simulator.

use super::options::{self, CommonOptions};
use crate::model::DecoratedKey;

/// What a strategy knows about one live sstable.
#[derive(Debug, Clone, PartialEq)]
pub struct SSTableInfo {
    /// The sstable's generation (its identity in jobs).
    pub generation: u64,
    /// Level (leveled compaction); 0 for flushes and for strategies without levels.
    pub level: u32,
    /// Run identifier: the fragments of one run share it (incremental compaction).
    pub run_id: u128,
    /// Bytes on disk (all components).
    pub disk_bytes: u64,
    /// Bytes of uncompressed data: what size tiers and levels are measured in.
    pub data_bytes: u64,
    /// First partition key.
    pub first_key: DecoratedKey,
    /// Last partition key.
    pub last_key: DecoratedKey,
    /// Smallest write timestamp (µs).
    pub min_timestamp: i64,
    /// Largest write timestamp (µs).
    pub max_timestamp: i64,
    /// Largest local deletion / expiry time in seconds (0 when it holds none); with
    /// `live_cells == 0` and this `< gc_before`, the sstable is fully expired.
    pub max_local_deletion_time: u32,
    /// Whether the sstable holds no live data at all (only tombstones and expiring cells).
    pub fully_expiring: bool,
    /// Seconds since the epoch when the sstable was written.
    pub created_at: u64,
    /// Tombstones and expiring cells whose deletion time is before each bin point, as
    /// `(deletion_time_secs, count)` bins (see `sstable::histogram::TombstoneHistogram`).
    pub tombstone_drop_times: crate::metrics::histogram::TombstoneHistogram,
    /// Cells (incl. tombstones) in the sstable: the denominator of the droppable ratio.
    pub cell_count: u64,
}

impl SSTableInfo {
    /// Estimated fraction of the sstable's cells that are tombstones droppable at `gc_before`
    /// (Cassandra's `getEstimatedDroppableTombstoneRatio`).
    pub fn droppable_tombstone_ratio(&self, gc_before: u32) -> f64 {
        if self.cell_count == 0 {
            return 0.0;
        }
        self.tombstone_drop_times.sum_before(gc_before) / self.cell_count as f64
    }
}

/// What kind of work a job is; the manager and statistics report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobKind {
    /// A strategy's regular merge (tier, level promotion, window).
    Regular,
    /// One sstable rewritten to drop tombstones (droppable ratio ≥ tombstone_threshold).
    Tombstone,
    /// Cross-tier job to meet ICS's `space_amplification_goal`.
    SpaceAmplification,
    /// Fully expired sstables deleted without being read (TWCS and any strategy).
    DropExpired,
    /// Major compaction requested by an operator.
    Major,
}

/// A unit of compaction work.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// Generations of the input sstables; never empty, never shared with a running job.
    pub inputs: Vec<u64>,
    /// Level the outputs get.
    pub output_level: u32,
    /// Outputs are split once an sstable holds this many uncompressed data bytes
    /// (`u64::MAX`: one output). Splits happen on partition boundaries.
    pub max_output_bytes: u64,
    /// Release each input as soon as the outputs cover its last key, instead of at the end
    /// (incremental compaction), so temporary space is a few fragments.
    pub incremental: bool,
    /// Split outputs by the time window of each partition's newest write timestamp (TWCS
    /// keeps windows apart); `None`: no split by time.
    pub time_window: Option<TimeWindow>,
    /// Why the job runs.
    pub kind: JobKind,
}

/// A TWCS time window: its length and the unit of the write timestamps it buckets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeWindow {
    /// Window length in seconds (≥ 1).
    pub secs: u64,
    /// Unit of the timestamps (`timestamp_resolution`).
    pub resolution: options::TimestampResolution,
}

impl TimeWindow {
    /// The window TWCS's options split outputs by.
    pub fn of(o: &options::TwcsOptions) -> Self {
        TimeWindow {
            secs: o.window_secs(),
            resolution: o.timestamp_resolution,
        }
    }

    /// Start (seconds since the epoch) of the window a write timestamp falls in.
    pub fn start(&self, timestamp: i64) -> i64 {
        let secs = self.resolution.to_secs(timestamp);
        let w = i64::try_from(self.secs.max(1)).unwrap_or(i64::MAX);
        secs - secs.rem_euclid(w)
    }
}

/// What the caller tells the strategy besides the set itself.
#[derive(Debug, Clone, Default)]
pub struct StrategyState {
    /// Seconds since the epoch.
    pub now: u64,
    /// Tombstones deleted before this time (seconds) may be purged; `None` when the table's
    /// `tombstone_gc` mode is `disabled`.
    pub gc_before: Option<u32>,
    /// Generations that running jobs hold.
    pub compacting: std::collections::HashSet<u64>,
    /// Number of jobs running on the table.
    pub running_jobs: usize,
    /// The kinds of the jobs running on the table.
    pub running_kinds: Vec<JobKind>,
    /// LCS round robin: the last key compacted out of each level (index = level).
    pub last_compacted_keys: Vec<Option<DecoratedKey>>,
    /// ScyllaDB's `compaction_enforce_min_threshold: false`: when no tier reaches
    /// `min_threshold`, STCS and ICS compact any tier of two. Off by default (Cassandra's
    /// behaviour): merging pairs rewrites data ~log2 rather than ~log4 times.
    pub compact_below_min_threshold: bool,
    /// Smallest timestamp in the table's memtables (`None` when they are empty): data there
    /// may be shadowed by an expired sstable's tombstones, which then must not be dropped.
    pub memtable_min_timestamp: Option<i64>,
}

impl Job {
    /// Bytes of uncompressed data the job reads (its inputs found in `set`).
    pub fn input_bytes(&self, set: &[SSTableInfo]) -> u64 {
        set.iter()
            .filter(|s| self.inputs.binary_search(&s.generation).is_ok())
            .map(|s| s.data_bytes)
            .sum()
    }

    /// ScyllaDB's job weight for the manager (`compaction_manager.cc`): ⌊log4(input bytes +
    /// 1 MiB)⌋, and 0 for a job that only drops fully expired sstables. Two running jobs of a
    /// table should not share a weight (so small jobs are not stuck behind a big one).
    pub fn weight(&self, set: &[SSTableInfo]) -> u32 {
        if self.kind == JobKind::DropExpired {
            return 0;
        }
        let bytes = self.input_bytes(set).saturating_add(1024 * 1024);
        // ⌊log4(x)⌋ = ⌊log2(x) / 2⌋, exact in integers.
        bytes.ilog2() / 2
    }
}

impl StrategyState {
    /// Records a finished job for LCS's round robin: the largest last key among the inputs of
    /// the lowest input level becomes that level's `last_compacted_keys` entry. Call it with
    /// the job's input descriptions when the job completes.
    pub fn record_compaction(&mut self, inputs: &[SSTableInfo]) {
        let Some(level) = inputs.iter().map(|s| s.level).min() else {
            return;
        };
        let last = inputs
            .iter()
            .filter(|s| s.level == level)
            .map(|s| s.last_key.clone())
            .max();
        let l = level as usize;
        if self.last_compacted_keys.len() <= l {
            self.last_compacted_keys.resize(l + 1, None);
        }
        if let Some(slot) = self.last_compacted_keys.get_mut(l) {
            *slot = last;
        }
    }
}

/// What every strategy answers about a table's sstable set; each strategy's file implements
/// it on its options (`stcs` on `TierOptions`, `lcs`, `ics`, `twcs`, and the module's
/// `NullStrategy`). Pure: no I/O, so every rule is tested from a text description of a set.
pub trait Strategy {
    /// The next job, or `None`; never an sstable in `state.compacting`.
    fn choose(
        &self,
        set: &[SSTableInfo],
        common: &CommonOptions,
        state: &StrategyState,
    ) -> Option<Job>;

    /// The jobs of an operator's major compaction over every sstable no job holds.
    fn major(&self, set: &[SSTableInfo], state: &StrategyState) -> Vec<Job>;

    /// Estimated number of jobs still to run (`pending_compactions`).
    fn estimated_pending(&self, set: &[SSTableInfo], common: &CommonOptions) -> u64;

    /// Compaction backlog in bytes-of-work, which the controller turns into shares.
    fn backlog(&self, set: &[SSTableInfo], common: &CommonOptions, state: &StrategyState) -> f64;

    /// How many fragments (one run, split on partition boundaries in key order) a memtable
    /// flush of about `bytes` is written as; one sstable unless the strategy asks otherwise.
    fn flush_fragments(&self, _bytes: u64) -> usize {
        1
    }
}
