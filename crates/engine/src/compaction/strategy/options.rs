//! The CQL `compaction = {...}` map: parsing, validation, defaults and display.
//!
//! Options Cassandra 5.0 knows are accepted, refused and worded as Cassandra does
//! (`CompactionParams`, `AbstractCompactionStrategy.validateOptions`,
//! `SizeTieredCompactionStrategyOptions`, `LeveledCompactionStrategy`,
//! `TimeWindowCompactionStrategyOptions`), in Cassandra's order: the class, the common
//! options, the strategy's own, then whatever key the strategy did not claim
//! (`Properties specified [...] are not understood by ...`), then min/max_threshold. What
//! Cassandra lacks comes from ScyllaDB, with ScyllaDB's validation: the incremental (ICS) and
//! null strategies, STCS's `min_sstable_age` and `cold_reads_to_omit`, TWCS's
//! `enable_optimized_twcs_queries`; `dynamic_level_bytes` is Cairn's own (LCS). Accepted
//! without effect on one node, as their meaning needs repair or is logging only:
//! `only_purge_repaired_tombstones`, `provide_overlapping_tombstones`, `log_all`,
//! `single_sstable_uplevel`.
//!
//! Invariants of a parsed [`CompactionOptions`]:
//! - `tombstone_threshold >= 0.0` (above 1.0 no sstable qualifies),
//!   `2 <= min_threshold <= max_threshold`;
//! - size-tier options: `bucket_low < bucket_high`, `min_sstable_size >= 0`;
//! - `sstable_size_in_mb > 0`, LCS `fanout_size > 0`; ICS `space_amplification_goal` in
//!   `(1.0, 2.0]`;
//! - `CompactionOptions::from_map(&o.to_map()) == Ok(o)` (the round trip `system_schema` relies on).

use crate::error::OptionError;
use crate::java::{double_to_string, hash_map_order, parse_double};

/// The prefix Cassandra class names carry; accepted and stripped.
pub const CLASS_PREFIX: &str = "org.apache.cassandra.db.compaction.";

const MIB: u64 = 1024 * 1024;

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
    fn name(self) -> &'static str {
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
    fn secs(self) -> u64 {
        match self {
            WindowUnit::Minutes => 60,
            WindowUnit::Hours => 3600,
            WindowUnit::Days => 86_400,
        }
    }

    fn name(self) -> &'static str {
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
    fn name(self) -> &'static str {
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

    /// The window outputs are split by.
    pub fn time_window(&self) -> super::TimeWindow {
        super::TimeWindow {
            secs: self.window_secs(),
            resolution: self.timestamp_resolution,
        }
    }

    /// Start (seconds since the epoch) of the window a write timestamp falls in.
    pub fn window_start(&self, timestamp: i64) -> i64 {
        self.time_window().start(timestamp)
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

/// A table's parsed compaction options.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionOptions {
    pub common: CommonOptions,
    pub strategy: StrategyOptions,
}

impl Default for CompactionOptions {
    /// STCS with every default: what a table without a `compaction` map gets.
    fn default() -> Self {
        CompactionOptions {
            common: CommonOptions::default(),
            strategy: StrategyOptions::SizeTiered(TierOptions::stcs()),
        }
    }
}

fn invalid(option: &'static str, message: String) -> OptionError {
    OptionError::Invalid { option, message }
}

/// Looks up keys and remembers which were consumed (Cassandra's "unchecked options").
struct Map<'a> {
    entries: &'a [(String, String)],
    used: Vec<bool>,
}

impl<'a> Map<'a> {
    fn new(entries: &'a [(String, String)]) -> Self {
        Map {
            entries,
            used: vec![false; entries.len()],
        }
    }

    /// The value of `key` (the last one if repeated), marking every occurrence as known.
    fn take(&mut self, key: &str) -> Option<&'a str> {
        let mut found = None;
        for (i, (k, v)) in self.entries.iter().enumerate() {
            if k == key {
                if let Some(u) = self.used.get_mut(i) {
                    *u = true;
                }
                found = Some(v.as_str());
            }
        }
        found
    }

    /// The value of `key` without claiming it.
    fn peek(&self, key: &str) -> Option<&'a str> {
        self.entries
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn has(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _)| k == key)
    }

    /// Keys nobody claimed, as Cassandra lists them (`[a, b]`, in the order of its hash map
    /// of the `entries` options the strategy was given).
    fn unknown(&self, entries: usize) -> Option<String> {
        let mut rest: Vec<&str> = Vec::new();
        for ((k, _), used) in self.entries.iter().zip(&self.used) {
            if !*used && !rest.contains(&k.as_str()) {
                rest.push(k);
            }
        }
        if rest.is_empty() {
            return None;
        }
        Some(format!("[{}]", hash_map_order(&rest, entries).join(", ")))
    }

    /// A Java `long` (`Long.parseLong`), with Cassandra's message.
    fn long(&mut self, key: &'static str, default: i64) -> Result<i64, OptionError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => v.parse::<i64>().map_err(|_| not_an_int(key, v)),
        }
    }

    /// A Java `int` (`Integer.parseInt`), with Cassandra's message.
    fn int(&mut self, key: &'static str, default: i64) -> Result<i64, OptionError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => v
                .parse::<i32>()
                .map(i64::from)
                .map_err(|_| not_an_int(key, v)),
        }
    }

    /// A Java `double` (`Double.parseDouble`), with `what` naming the type in the message.
    fn double(&mut self, key: &'static str, default: f64, what: &str) -> Result<f64, OptionError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => parse_double(v)
                .ok_or_else(|| invalid(key, format!("{v} is not a parsable {what} for {key}"))),
        }
    }

    /// ScyllaDB's options (Cassandra has none of these): exactly `true` / `false`.
    fn scylla_boolean(&mut self, key: &'static str, default: bool) -> Result<bool, OptionError> {
        match self.take(key) {
            None => Ok(default),
            Some("true") => Ok(true),
            Some("false") => Ok(false),
            Some(v) => Err(invalid(
                key,
                format!("{key} value ({v}) must be \"true\" or \"false\""),
            )),
        }
    }

    /// ScyllaDB's options: a finite double.
    fn scylla_double(&mut self, key: &'static str, default: f64) -> Result<f64, OptionError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => match v.trim().parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(x),
                _ => Err(invalid(
                    key,
                    format!("Invalid double value {v} for '{key}'"),
                )),
            },
        }
    }
}

fn not_an_int(key: &'static str, v: &str) -> OptionError {
    invalid(key, format!("{v} is not a parsable int (base10) for {key}"))
}

/// Cassandra's check of a boolean option: `true` or `false`, any case.
fn cassandra_boolean(
    m: &mut Map<'_>,
    key: &'static str,
    message: impl Fn(&str) -> String,
) -> Result<Option<bool>, OptionError> {
    match m.take(key) {
        None => Ok(None),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(Some(true)),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(Some(false)),
        Some(v) => Err(invalid(key, message(v))),
    }
}

/// Formats a float the way `to_map` shows it (`0.5`, `1.4142`, `2`).
fn fmt_f64(x: f64) -> String {
    format!("{x}")
}

/// Cassandra's `AbstractCompactionStrategy.validateOptions`, and `CompactionParams.create`'s
/// reading of `enabled` and `provide_overlapping_tombstones`.
fn parse_common(m: &mut Map<'_>) -> Result<CommonOptions, OptionError> {
    let d = CommonOptions::default();
    let explicit = m.has("tombstone_threshold") || m.has("tombstone_compaction_interval");
    let overlapping = match m.take("provide_overlapping_tombstones") {
        None => OverlappingTombstones::None,
        Some(v) => match v.to_uppercase().as_str() {
            "NONE" => OverlappingTombstones::None,
            "ROW" => OverlappingTombstones::Row,
            "CELL" => OverlappingTombstones::Cell,
            upper => {
                return Err(invalid(
                    "provide_overlapping_tombstones",
                    format!("Invalid value {upper} for 'provide_overlapping_tombstones' compaction sub-option - must be one of the following [NONE, ROW, CELL]."),
                ))
            }
        },
    };
    let tombstone_threshold = match m.take("tombstone_threshold") {
        None => d.tombstone_threshold,
        Some(v) => {
            // A Java float, and Cassandra's message says "int".
            let x = parse_double(v)
                .filter(|x| !x.is_nan())
                .ok_or_else(|| not_an_int("tombstone_threshold", v))?;
            if x < 0.0 {
                return Err(invalid(
                    "tombstone_threshold",
                    format!("tombstone_threshold must be greater than 0, but was {x:.6}"),
                ));
            }
            x
        }
    };
    let interval = m.long(
        "tombstone_compaction_interval",
        d.tombstone_compaction_interval_secs as i64,
    )?;
    if interval < 0 {
        return Err(invalid(
            "tombstone_compaction_interval",
            format!("tombstone_compaction_interval must be greater than 0, but was {interval}"),
        ));
    }
    let unchecked = cassandra_boolean(m, "unchecked_tombstone_compaction", |v| {
        format!("'unchecked_tombstone_compaction' should be either 'true' or 'false', not '{v}'")
    })?;
    let log_all = cassandra_boolean(m, "log_all", |v| {
        format!("'log_all' should either be 'true' or 'false', not {v}")
    })?;
    let enabled = cassandra_boolean(m, "enabled", |v| {
        format!("enabled should either be 'true' or 'false', not {v}")
    })?;
    // Read as Java's `Boolean.parseBoolean`: anything but `true` is false.
    let only_repaired = m
        .take("only_purge_repaired_tombstones")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    Ok(CommonOptions {
        tombstone_threshold,
        tombstone_compaction_interval_secs: interval.unsigned_abs(),
        unchecked_tombstone_compaction: unchecked.unwrap_or(false),
        enabled: enabled.unwrap_or(true),
        tombstone_options_explicit: explicit,
        only_purge_repaired_tombstones: only_repaired,
        provide_overlapping_tombstones: overlapping,
        log_all: log_all.unwrap_or(false),
        ..d
    })
}

/// `CompactionParams.validate`'s thresholds, checked after the strategy's options.
fn parse_thresholds(m: &mut Map<'_>, c: &mut CommonOptions) -> Result<(), OptionError> {
    let mut values = [i64::from(c.min_threshold), i64::from(c.max_threshold)];
    for (key, slot) in [("min_threshold", 0), ("max_threshold", 1)] {
        if let Some(v) = m.take(key) {
            // `StringUtils.isNumeric`: digits only (so no sign).
            let numeric = !v.is_empty() && v.chars().all(|c| c.is_ascii_digit());
            // Cassandra fails with a server error on a number beyond an int; refused as
            // not an integer here.
            match v.parse::<i32>() {
                Ok(n) if numeric => values[slot] = i64::from(n),
                _ => {
                    return Err(invalid(
                        key,
                        format!(
                        "Invalid value {v} for '{key}' compaction sub-option - must be an integer"
                    ),
                    ))
                }
            }
        }
    }
    let [min, max] = values;
    if min <= 0 || max <= 0 {
        return Err(invalid(
            "min_threshold",
            "Disabling compaction by setting compaction thresholds to 0 has been removed, set the compaction option 'enabled' to false instead.".into(),
        ));
    }
    if min <= 1 {
        return Err(invalid(
            "min_threshold",
            format!("Min compaction threshold cannot be less than 2 (got {min})"),
        ));
    }
    if min > max {
        return Err(invalid(
            "min_threshold",
            format!("Min compaction threshold (got {min}) cannot be greater than max compaction threshold (got {max})"),
        ));
    }
    c.min_threshold = u32::try_from(min).unwrap_or(u32::MAX);
    c.max_threshold = u32::try_from(max).unwrap_or(u32::MAX);
    Ok(())
}

/// Size-tier options: Cassandra's (`min_sstable_size`, `bucket_low`, `bucket_high`), and
/// ScyllaDB's `min_sstable_age` and (when `cold_reads`) `cold_reads_to_omit`.
fn parse_tiers(
    m: &mut Map<'_>,
    defaults: TierOptions,
    cold_reads: bool,
) -> Result<TierOptions, OptionError> {
    let min_size = m.long("min_sstable_size", defaults.min_sstable_size as i64)?;
    if min_size < 0 {
        return Err(invalid(
            "min_sstable_size",
            format!("min_sstable_size must be non negative: {min_size}"),
        ));
    }
    let low = m.double("bucket_low", defaults.bucket_low, "float")?;
    let high = m.double("bucket_high", defaults.bucket_high, "float")?;
    if high <= low {
        return Err(invalid(
            "bucket_high",
            format!(
                "bucket_high value ({}) is less than or equal to the bucket_low value ({})",
                double_to_string(high),
                double_to_string(low)
            ),
        ));
    }
    let min_age = match m.peek("min_sstable_age") {
        None => defaults.min_sstable_age_secs,
        Some(_) => {
            let v = match m
                .take("min_sstable_age")
                .map(str::trim)
                .map(str::parse::<i64>)
            {
                Some(Ok(v)) => v,
                _ => {
                    let raw = m.peek("min_sstable_age").unwrap_or_default();
                    return Err(invalid(
                        "min_sstable_age",
                        format!("Invalid long value {raw} for 'min_sstable_age'"),
                    ));
                }
            };
            if v < 0 {
                return Err(invalid(
                    "min_sstable_age",
                    format!("min_sstable_age value ({v}) must be non negative"),
                ));
            }
            v.unsigned_abs()
        }
    };
    let cold = if cold_reads {
        let v = m.scylla_double("cold_reads_to_omit", defaults.cold_reads_to_omit)?;
        if !(0.0..=1.0).contains(&v) {
            return Err(invalid(
                "cold_reads_to_omit",
                format!(
                    "cold_reads_to_omit value ({}) must be between 0.0 and 1.0",
                    fmt_f64(v)
                ),
            ));
        }
        v
    } else {
        defaults.cold_reads_to_omit
    };
    Ok(TierOptions {
        min_sstable_size: min_size.unsigned_abs(),
        min_sstable_age_secs: min_age,
        bucket_low: low,
        bucket_high: high,
        cold_reads_to_omit: cold,
    })
}

/// LCS's `sstable_size_in_mb` and `fanout_size` (`LeveledCompactionStrategy.validateOptions`).
fn parse_leveled(m: &mut Map<'_>) -> Result<(u32, u32, bool), OptionError> {
    let given = m.peek("sstable_size_in_mb").is_some();
    let size = m.int("sstable_size_in_mb", 160)?;
    if size < 1 {
        return Err(invalid(
            "sstable_size_in_mb",
            format!("sstable_size_in_mb must be larger than 0, but was {size}"),
        ));
    }
    let fanout = m.int("fanout_size", i64::from(LcsOptions::DEFAULT_FANOUT))?;
    if fanout < 1 {
        return Err(invalid(
            "fanout_size",
            format!("fanout_size must be larger than 0, but was {fanout}"),
        ));
    }
    // The largest level (of 9) must fit a long; Cassandra checks this with a size of 1 MiB
    // when none is given.
    let checked_size = if given { size.unsigned_abs() } else { 1 };
    let max_bytes = u128::from(fanout.unsigned_abs())
        .checked_pow(8)
        .and_then(|p| p.checked_mul(u128::from(checked_size) * u128::from(MIB)));
    if max_bytes.is_none_or(|b| b > i64::MAX as u128) {
        return Err(invalid(
            "sstable_size_in_mb",
            format!(
                "At most {} bytes may be in a compaction level; your maxSSTableSize must be absurdly high to compute {}",
                i64::MAX,
                max_bytes.map_or_else(|| "more".to_string(), |b| b.to_string())
            ),
        ));
    }
    // Read and kept (Java's `Boolean.parseBoolean`), not validated, as in Cassandra.
    let uplevel = m
        .take("single_sstable_uplevel")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    Ok((
        u32::try_from(size).unwrap_or(u32::MAX),
        u32::try_from(fanout).unwrap_or(u32::MAX),
        uplevel,
    ))
}

/// ICS's fragment size (ScyllaDB's option and text).
fn parse_fragment_size(m: &mut Map<'_>, default: u32) -> Result<u32, OptionError> {
    let v = match m.take("sstable_size_in_mb") {
        None => i64::from(default),
        Some(v) => v.trim().parse::<i32>().map(i64::from).map_err(|_| {
            invalid(
                "sstable_size_in_mb",
                format!("Invalid integer value {v} for 'sstable_size_in_mb'"),
            )
        })?,
    };
    if v <= 0 {
        return Err(invalid(
            "sstable_size_in_mb",
            format!("sstable_size_in_mb value ({v}) must be positive"),
        ));
    }
    Ok(u32::try_from(v).unwrap_or(u32::MAX))
}

#[derive(Clone, Copy, PartialEq)]
enum Class {
    Null,
    SizeTiered,
    Leveled,
    Incremental,
    TimeWindow,
}

impl Class {
    fn simple_name(self) -> &'static str {
        match self {
            Class::Null => "NullCompactionStrategy",
            Class::SizeTiered => "SizeTieredCompactionStrategy",
            Class::Leveled => "LeveledCompactionStrategy",
            Class::Incremental => "IncrementalCompactionStrategy",
            Class::TimeWindow => "TimeWindowCompactionStrategy",
        }
    }
}

fn parse_class(name: &str) -> Result<Class, OptionError> {
    let short = name.strip_prefix(CLASS_PREFIX).unwrap_or(name);
    match short {
        "NullCompactionStrategy" | "InMemoryCompactionStrategy" => Ok(Class::Null),
        "SizeTieredCompactionStrategy" => Ok(Class::SizeTiered),
        "LeveledCompactionStrategy" => Ok(Class::Leveled),
        "IncrementalCompactionStrategy" => Ok(Class::Incremental),
        "TimeWindowCompactionStrategy" => Ok(Class::TimeWindow),
        _ => {
            // Cassandra qualifies a simple name before looking for it.
            let shown = if name.contains('.') {
                name.to_string()
            } else {
                format!("{CLASS_PREFIX}{name}")
            };
            Err(invalid(
                "class",
                format!("Unable to find compaction strategy class '{shown}'"),
            ))
        }
    }
}

impl CompactionOptions {
    /// Parses a CQL compaction map. An empty map gives STCS with defaults (a table that never
    /// set one); CQL refuses an empty map before it gets here, as Cassandra does.
    pub fn from_map(map: &[(String, String)]) -> Result<CompactionOptions, OptionError> {
        if map.is_empty() {
            return Ok(CompactionOptions::default());
        }
        let mut m = Map::new(map);
        let class = match m.take("class") {
            Some(c) => parse_class(c)?,
            None => {
                return Err(invalid(
                    "class",
                    "Missing sub-option 'class' for the 'compaction' option".to_string(),
                ))
            }
        };
        let mut common = parse_common(&mut m)?;
        let strategy = match class {
            // ScyllaDB validates nothing else for these, unknown keys included.
            Class::Null => {
                return Ok(CompactionOptions {
                    common,
                    strategy: StrategyOptions::Null,
                })
            }
            Class::SizeTiered => {
                StrategyOptions::SizeTiered(parse_tiers(&mut m, TierOptions::stcs(), true)?)
            }
            Class::Leveled => {
                let (size, fanout, uplevel) = parse_leveled(&mut m)?;
                let tiers = parse_tiers(&mut m, TierOptions::stcs(), true)?;
                let dynamic = m.scylla_boolean("dynamic_level_bytes", false)?;
                StrategyOptions::Leveled(LcsOptions {
                    sstable_size_in_mb: size,
                    tiers,
                    dynamic_level_bytes: dynamic,
                    fanout_size: fanout,
                    single_sstable_uplevel: uplevel,
                })
            }
            Class::Incremental => {
                // `cold_reads_to_omit` is not an ICS key, so it ends up reported as unknown.
                let tiers = parse_tiers(&mut m, TierOptions::ics(), false)?;
                let size = parse_fragment_size(&mut m, 1000)?;
                let goal = match m.peek("space_amplification_goal") {
                    None => None,
                    Some(_) => {
                        let g = m.scylla_double("space_amplification_goal", 0.0)?;
                        if g <= 1.0 || g > 2.0 {
                            return Err(invalid(
                                "space_amplification_goal",
                                format!(
                                    "space_amplification_goal value ({}) must be greater than 1.0 and less than or equal to 2.0",
                                    fmt_f64(g)
                                ),
                            ));
                        }
                        Some(g)
                    }
                };
                StrategyOptions::Incremental(IcsOptions {
                    sstable_size_in_mb: size,
                    tiers,
                    space_amplification_goal: goal,
                })
            }
            Class::TimeWindow => StrategyOptions::TimeWindow(parse_twcs(&mut m)?),
        };
        // The thresholds are every strategy's; what is left nobody knows. Cassandra's map
        // holds the options but `class`, and both thresholds (defaults added).
        let min = m.take("min_threshold").map(str::to_string);
        let max = m.take("max_threshold").map(str::to_string);
        let mut keys: Vec<&str> = map
            .iter()
            .map(|(k, _)| k.as_str())
            .filter(|k| *k != "class")
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let entries = keys.len() + usize::from(min.is_none()) + usize::from(max.is_none());
        if let Some(rest) = m.unknown(entries) {
            return Err(invalid(
                "compaction",
                format!(
                    "Properties specified {rest} are not understood by {}",
                    class.simple_name()
                ),
            ));
        }
        let mut thresholds: Vec<(String, String)> = Vec::new();
        if let Some(v) = min {
            thresholds.push(("min_threshold".into(), v));
        }
        if let Some(v) = max {
            thresholds.push(("max_threshold".into(), v));
        }
        parse_thresholds(&mut Map::new(&thresholds), &mut common)?;
        // Only TWCS acts on (and shows) whether the tombstone options were explicit; keeping
        // the flag for the others would make equal options compare different.
        if !matches!(strategy, StrategyOptions::TimeWindow(_)) {
            common.tombstone_options_explicit = false;
        }
        Ok(CompactionOptions { common, strategy })
    }

    /// The class name shown in `system_schema.tables.compaction`.
    pub fn class_name(&self) -> String {
        let short = match self.strategy {
            StrategyOptions::Null => return "NullCompactionStrategy".to_string(),
            StrategyOptions::SizeTiered(_) => "SizeTieredCompactionStrategy",
            StrategyOptions::Leveled(_) => "LeveledCompactionStrategy",
            StrategyOptions::Incremental(_) => "IncrementalCompactionStrategy",
            StrategyOptions::TimeWindow(_) => "TimeWindowCompactionStrategy",
        };
        format!("{CLASS_PREFIX}{short}")
    }

    /// Every option with its effective value, sorted by key (for `system_schema` display).
    /// Parsing the result gives back `self`.
    pub fn to_map(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        let mut put = |k: &str, v: String| out.push((k.to_string(), v));
        let c = &self.common;
        put("class", self.class_name());
        if self.strategy == StrategyOptions::Null {
            return out;
        }
        put("enabled", c.enabled.to_string());
        put(
            "unchecked_tombstone_compaction",
            c.unchecked_tombstone_compaction.to_string(),
        );
        // For TWCS, showing the defaults would turn tombstone compactions on when the map is
        // parsed back, so they are only shown when they were given.
        let is_twcs = matches!(self.strategy, StrategyOptions::TimeWindow(_));
        if !is_twcs || c.tombstone_options_explicit {
            put("tombstone_threshold", fmt_f64(c.tombstone_threshold));
            put(
                "tombstone_compaction_interval",
                c.tombstone_compaction_interval_secs.to_string(),
            );
        }
        put("min_threshold", c.min_threshold.to_string());
        put("max_threshold", c.max_threshold.to_string());
        // Cassandra's options without effect here: shown only when not the default.
        if c.only_purge_repaired_tombstones {
            put("only_purge_repaired_tombstones", "true".into());
        }
        if c.provide_overlapping_tombstones != OverlappingTombstones::None {
            put(
                "provide_overlapping_tombstones",
                c.provide_overlapping_tombstones.name().into(),
            );
        }
        if c.log_all {
            put("log_all", "true".into());
        }
        let tiers = |put: &mut dyn FnMut(&str, String), t: &TierOptions, cold: bool| {
            put("min_sstable_size", t.min_sstable_size.to_string());
            put("min_sstable_age", t.min_sstable_age_secs.to_string());
            put("bucket_low", fmt_f64(t.bucket_low));
            put("bucket_high", fmt_f64(t.bucket_high));
            if cold {
                put("cold_reads_to_omit", fmt_f64(t.cold_reads_to_omit));
            }
        };
        match &self.strategy {
            StrategyOptions::Null => {}
            StrategyOptions::SizeTiered(t) => tiers(&mut put, t, true),
            StrategyOptions::Leveled(l) => {
                put("sstable_size_in_mb", l.sstable_size_in_mb.to_string());
                put("dynamic_level_bytes", l.dynamic_level_bytes.to_string());
                put("fanout_size", l.fanout_size.to_string());
                if l.single_sstable_uplevel {
                    put("single_sstable_uplevel", "true".into());
                }
                tiers(&mut put, &l.tiers, true);
            }
            StrategyOptions::Incremental(i) => {
                put("sstable_size_in_mb", i.sstable_size_in_mb.to_string());
                if let Some(g) = i.space_amplification_goal {
                    put("space_amplification_goal", fmt_f64(g));
                }
                tiers(&mut put, &i.tiers, false);
            }
            StrategyOptions::TimeWindow(t) => {
                put("compaction_window_unit", t.window_unit.name().to_string());
                put("compaction_window_size", t.window_size.to_string());
                put(
                    "timestamp_resolution",
                    t.timestamp_resolution.name().to_string(),
                );
                put(
                    "expired_sstable_check_frequency_seconds",
                    t.expired_sstable_check_frequency_secs.to_string(),
                );
                put(
                    "enable_optimized_twcs_queries",
                    t.enable_optimized_twcs_queries.to_string(),
                );
                if let Some(u) = t.unsafe_aggressive_sstable_expiration {
                    put("unsafe_aggressive_sstable_expiration", u.to_string());
                }
                tiers(&mut put, &t.tiers, true);
            }
        }
        out.sort();
        out
    }
}

/// TWCS's options (`TimeWindowCompactionStrategyOptions.validateOptions`), then its size tiers.
/// Units are upper case in Cassandra (which refuses `days`); lower case is accepted too, as
/// tables created by earlier Cairn versions may have it.
fn parse_twcs(m: &mut Map<'_>) -> Result<TwcsOptions, OptionError> {
    let timestamp_resolution = match m.take("timestamp_resolution") {
        None => TimestampResolution::Microseconds,
        Some(v) => match v.to_ascii_uppercase().as_str() {
            "SECONDS" => TimestampResolution::Seconds,
            "MILLISECONDS" => TimestampResolution::Milliseconds,
            "MICROSECONDS" => TimestampResolution::Microseconds,
            "NANOSECONDS" => TimestampResolution::Nanoseconds,
            _ => {
                return Err(invalid(
                    "timestamp_resolution",
                    format!("{v} is not valid for timestamp_resolution"),
                ))
            }
        },
    };
    let window_unit = match m.take("compaction_window_unit") {
        None => WindowUnit::Days,
        Some(v) => match v.to_ascii_uppercase().as_str() {
            "MINUTES" => WindowUnit::Minutes,
            "HOURS" => WindowUnit::Hours,
            "DAYS" => WindowUnit::Days,
            _ => {
                return Err(invalid(
                    "compaction_window_unit",
                    format!("{v} is not valid for compaction_window_unit"),
                ))
            }
        },
    };
    let window_size = m.int("compaction_window_size", 1)?;
    if window_size < 1 {
        return Err(invalid(
            "compaction_window_size",
            format!("{window_size} must be greater than 1 for compaction_window_size"),
        ));
    }
    let expired_check = m.long("expired_sstable_check_frequency_seconds", 600)?;
    if expired_check < 0 {
        return Err(invalid(
            "expired_sstable_check_frequency_seconds",
            format!(
                "expired_sstable_check_frequency_seconds must not be negative, but was {expired_check}"
            ),
        ));
    }
    let unsafe_aggressive = match m.take("unsafe_aggressive_sstable_expiration") {
        None => None,
        Some(v) if v.eq_ignore_ascii_case("false") => Some(false),
        Some(v) if v.eq_ignore_ascii_case("true") => {
            // Cassandra's default; Cairn has no such switch to turn.
            return Err(invalid(
                "unsafe_aggressive_sstable_expiration",
                "unsafe_aggressive_sstable_expiration is requested but not allowed, restart cassandra with -Dcassandra.allow_unsafe_aggressive_sstable_expiration=true to allow it".into(),
            ));
        }
        Some(v) => {
            return Err(invalid(
                "unsafe_aggressive_sstable_expiration",
                format!("unsafe_aggressive_sstable_expiration is not 'true' or 'false' ({v})"),
            ))
        }
    };
    let tiers = parse_tiers(m, TierOptions::stcs(), true)?;
    let optimized = m.scylla_boolean("enable_optimized_twcs_queries", true)?;
    Ok(TwcsOptions {
        window_unit,
        window_size: u32::try_from(window_size).unwrap_or(u32::MAX),
        timestamp_resolution,
        expired_sstable_check_frequency_secs: expired_check.unsigned_abs(),
        enable_optimized_twcs_queries: optimized,
        unsafe_aggressive_sstable_expiration: unsafe_aggressive,
        tiers,
    })
}
