//! The parsed compaction options: what every strategy has ([`CommonOptions`]) and each
//! strategy's own ([`TierOptions`], [`LcsOptions`], [`IcsOptions`], [`TwcsOptions`]), with
//! their defaults.

/// The prefix Cassandra class names carry; accepted and stripped.
pub const CLASS_PREFIX: &str = "org.apache.cassandra.db.compaction.";

/// A mebibyte: `sstable_size_in_mb` and friends count in them.
pub(super) const MIB: u64 = 1024 * 1024;

/// Options every strategy has.
#[derive(Debug, Clone, PartialEq)]
pub struct CommonOptions {
    /// Droppable-tombstone ratio that makes a single-sstable tombstone compaction worth it.
    pub tombstone_threshold: f64,
    /// An sstable must be at least this old (seconds) before a tombstone compaction.
    pub tombstone_compaction_interval_secs: u64,
    /// Skip the droppable-ratio check of tombstone compactions (the age check stays), as
    /// ScyllaDB's `worth_dropping_tombstones` does.
    pub unchecked_tombstone_compaction: bool,
    /// `false`: no automatic compaction (major compaction still runs).
    pub enabled: bool,
    /// Fewest sstables (runs for ICS) a size tier must hold to be compacted.
    pub min_threshold: u32,
    /// Most sstables (runs) one tier compaction takes.
    pub max_threshold: u32,
    /// TWCS only (always false for the others): whether `tombstone_threshold` or
    /// `tombstone_compaction_interval` was given explicitly. TWCS only does tombstone
    /// compactions then, and `to_map` only shows them then.
    pub tombstone_options_explicit: bool,
    /// Cassandra's `only_purge_repaired_tombstones` (kept; one node has nothing to repair).
    pub only_purge_repaired_tombstones: bool,
    /// Cassandra's `provide_overlapping_tombstones` (kept; reads never need them here).
    pub provide_overlapping_tombstones: OverlappingTombstones,
    /// Cassandra's `log_all` (kept; Cairn has no compaction log).
    pub log_all: bool,
}

impl Default for CommonOptions {
    fn default() -> Self {
        CommonOptions {
            tombstone_threshold: 0.2,
            tombstone_compaction_interval_secs: 86_400,
            unchecked_tombstone_compaction: false,
            enabled: true,
            min_threshold: 4,
            max_threshold: 32,
            tombstone_options_explicit: false,
            only_purge_repaired_tombstones: false,
            provide_overlapping_tombstones: OverlappingTombstones::None,
            log_all: false,
        }
    }
}

/// Cassandra's `provide_overlapping_tombstones` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverlappingTombstones {
    None,
    Row,
    Cell,
}

impl OverlappingTombstones {
    pub(super) fn name(self) -> &'static str {
        match self {
            OverlappingTombstones::None => "NONE",
            OverlappingTombstones::Row => "ROW",
            OverlappingTombstones::Cell => "CELL",
        }
    }
}

/// Size-tier options (STCS, the L0 fallback of LCS, the windows of TWCS, ICS tiers of runs).
#[derive(Debug, Clone, PartialEq)]
pub struct TierOptions {
    /// Sstables (runs) below this many data bytes all count as one "small" tier.
    pub min_sstable_size: u64,
    /// STCS: small sstables are only lumped together when none was written this recently.
    pub min_sstable_age_secs: u64,
    /// A file joins a tier when its size is above `avg * bucket_low` ...
    pub bucket_low: f64,
    /// ... and below `avg * bucket_high`.
    pub bucket_high: f64,
    /// Parsed and validated for compatibility, unused (as in ScyllaDB).
    pub cold_reads_to_omit: f64,
}

impl TierOptions {
    /// STCS defaults.
    pub fn stcs() -> Self {
        TierOptions {
            min_sstable_size: 50 * MIB,
            min_sstable_age_secs: 3600,
            bucket_low: 0.5,
            bucket_high: 1.5,
            cold_reads_to_omit: 0.05,
        }
    }

    /// ICS defaults (tiers twice as fine: √2 around the average). Scylla's literals are the
    /// rounded 0.7071 / 1.4142, which is what users see and set, so those exact values are kept.
    #[allow(clippy::approx_constant)]
    pub fn ics() -> Self {
        TierOptions {
            bucket_low: 0.7071,
            bucket_high: 1.4142,
            ..Self::stcs()
        }
    }
}

/// Leveled compaction options.
#[derive(Debug, Clone, PartialEq)]
pub struct LcsOptions {
    /// Target size of each sstable of levels ≥ 1.
    pub sstable_size_in_mb: u32,
    /// Size tiers used for STCS in L0.
    pub tiers: TierOptions,
    /// Cairn's option (RocksDB's `level_compaction_dynamic_level_bytes`): level targets are
    /// computed down from the last level's actual size, so the last level holds ~90 % of the data.
    pub dynamic_level_bytes: bool,
    /// Cassandra's `fanout_size`: each level holds this many times the one above it.
    pub fanout_size: u32,
    /// Cassandra's `single_sstable_uplevel` (kept; an optimisation of Cassandra's compaction
    /// task that Cairn's does not need).
    pub single_sstable_uplevel: bool,
}

impl LcsOptions {
    /// Cassandra's default `fanout_size`.
    pub const DEFAULT_FANOUT: u32 = 10;

    /// `fanout_size`, as a `u64` for size arithmetic.
    pub fn fanout(&self) -> u64 {
        u64::from(self.fanout_size.max(1))
    }

    /// `sstable_size_in_mb` in bytes.
    pub fn sstable_size(&self) -> u64 {
        u64::from(self.sstable_size_in_mb)
            .saturating_mul(MIB)
            .max(1)
    }
}

/// Incremental compaction options.
#[derive(Debug, Clone, PartialEq)]
pub struct IcsOptions {
    /// Fragment size: outputs are split into sstables of this many MiB.
    pub sstable_size_in_mb: u32,
    /// Size tiers of runs.
    pub tiers: TierOptions,
    /// Largest tolerated `(S0 + S1) / S0` of the two largest tiers; `None`: no goal.
    pub space_amplification_goal: Option<f64>,
}

impl IcsOptions {
    /// `sstable_size_in_mb` in bytes.
    pub fn fragment_size(&self) -> u64 {
        u64::from(self.sstable_size_in_mb)
            .saturating_mul(MIB)
            .max(1)
    }
}

/// Unit of `compaction_window_size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowUnit {
    Minutes,
    Hours,
    Days,
}

impl WindowUnit {
    pub(super) fn secs(self) -> u64 {
        match self {
            WindowUnit::Minutes => 60,
            WindowUnit::Hours => 3600,
            WindowUnit::Days => 86_400,
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            WindowUnit::Minutes => "MINUTES",
            WindowUnit::Hours => "HOURS",
            WindowUnit::Days => "DAYS",
        }
    }
}

/// Unit of the write timestamps TWCS buckets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimestampResolution {
    Seconds,
    Milliseconds,
    Microseconds,
    Nanoseconds,
}

impl TimestampResolution {
    pub(super) fn name(self) -> &'static str {
        match self {
            TimestampResolution::Seconds => "SECONDS",
            TimestampResolution::Milliseconds => "MILLISECONDS",
            TimestampResolution::Microseconds => "MICROSECONDS",
            TimestampResolution::Nanoseconds => "NANOSECONDS",
        }
    }

    /// Converts a timestamp in this resolution to whole seconds (floor).
    pub fn to_secs(self, ts: i64) -> i64 {
        match self {
            TimestampResolution::Seconds => ts,
            TimestampResolution::Milliseconds => ts.div_euclid(1_000),
            TimestampResolution::Microseconds => ts.div_euclid(1_000_000),
            TimestampResolution::Nanoseconds => ts.div_euclid(1_000_000_000),
        }
    }
}

/// Time-window compaction options.
#[derive(Debug, Clone, PartialEq)]
pub struct TwcsOptions {
    pub window_unit: WindowUnit,
    pub window_size: u32,
    pub timestamp_resolution: TimestampResolution,
    /// How often (seconds) ScyllaDB looks for fully expired sstables; kept for display (Cairn
    /// looks every time it is asked, which is cheap here).
    pub expired_sstable_check_frequency_secs: u64,
    /// Kept for display; reads decide this elsewhere.
    pub enable_optimized_twcs_queries: bool,
    /// `unsafe_aggressive_sstable_expiration`, when given (accepted, not acted on).
    pub unsafe_aggressive_sstable_expiration: Option<bool>,
    /// Size tiers inside the newest window.
    pub tiers: TierOptions,
}

impl TwcsOptions {
    /// Window length in seconds.
    pub fn window_secs(&self) -> u64 {
        self.window_unit
            .secs()
            .saturating_mul(u64::from(self.window_size))
            .max(1)
    }
}

/// The strategy a table uses, with its own options.
#[derive(Debug, Clone, PartialEq)]
pub enum StrategyOptions {
    /// `NullCompactionStrategy` (and the deprecated `InMemoryCompactionStrategy`): never compacts.
    Null,
    SizeTiered(TierOptions),
    Leveled(LcsOptions),
    Incremental(IcsOptions),
    TimeWindow(TwcsOptions),
}
