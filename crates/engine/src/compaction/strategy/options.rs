//! The CQL `compaction = {...}` map: parsing, validation, defaults and display.
//!
//! Names, defaults and error texts are ScyllaDB's (`compaction/compaction_strategy.cc`,
//! `size_tiered_compaction_strategy.cc`, `leveled_compaction_strategy.cc`,
//! `incremental_compaction_strategy.cc`, `time_window_compaction_strategy.cc`), because drivers
//! and test suites match on them. Validation follows Scylla's order: the common options first,
//! then the strategy's own, then whatever key nobody claimed is reported as unknown.
//!
//! Invariants of a parsed [`CompactionOptions`]:
//! - `0.0 <= tombstone_threshold <= 1.0`, `tombstone_compaction_interval_secs > 0`,
//!   `min_threshold >= 2`, `max_threshold >= 2`;
//! - size-tier options: `0 < bucket_low < 1 < bucket_high`;
//! - `sstable_size_in_mb > 0`; ICS `space_amplification_goal` in `(1.0, 2.0]`;
//! - `CompactionOptions::from_map(&o.to_map()) == Ok(o)` (the round trip `system_schema` relies on).

use crate::error::OptionError;

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
}

impl LcsOptions {
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
    Microseconds,
    Milliseconds,
}

impl TimestampResolution {
    fn name(self) -> &'static str {
        match self {
            TimestampResolution::Microseconds => "MICROSECONDS",
            TimestampResolution::Milliseconds => "MILLISECONDS",
        }
    }

    /// Converts a timestamp in this resolution to whole seconds (floor).
    pub fn to_secs(self, ts: i64) -> i64 {
        match self {
            TimestampResolution::Microseconds => ts.div_euclid(1_000_000),
            TimestampResolution::Milliseconds => ts.div_euclid(1_000),
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

/// Looks up keys and remembers which were consumed, like Scylla's `unchecked_options`.
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

    fn has(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _)| k == key)
    }

    /// Keys nobody claimed, formatted as Scylla prints a `std::map` (sorted).
    fn unknown(&self) -> Option<String> {
        let mut rest: Vec<(&str, &str)> = self
            .entries
            .iter()
            .zip(&self.used)
            .filter(|(_, used)| !**used)
            .map(|((k, v), _)| (k.as_str(), v.as_str()))
            .collect();
        if rest.is_empty() {
            return None;
        }
        rest.sort();
        rest.dedup_by(|a, b| a.0 == b.0);
        let body: Vec<String> = rest.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        Some(format!("{{{}}}", body.join(", ")))
    }

    fn long(&mut self, key: &'static str, default: i64) -> Result<i64, OptionError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => v
                .trim()
                .parse::<i64>()
                .map_err(|_| invalid(key, format!("Invalid long value {v} for '{key}'"))),
        }
    }

    fn int(&mut self, key: &'static str, default: i64) -> Result<i64, OptionError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => v
                .trim()
                .parse::<i32>()
                .map(i64::from)
                .map_err(|_| invalid(key, format!("Invalid integer value {v} for '{key}'"))),
        }
    }

    fn double(&mut self, key: &'static str, default: f64) -> Result<f64, OptionError> {
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

    /// Scylla accepts exactly `true` / `false` here.
    fn boolean(&mut self, key: &'static str, default: bool) -> Result<bool, OptionError> {
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
}

/// Formats a float the way the messages and `to_map` show it (`0.5`, `1.4142`, `2`).
fn fmt_f64(x: f64) -> String {
    format!("{x}")
}

fn parse_common(m: &mut Map<'_>) -> Result<CommonOptions, OptionError> {
    let d = CommonOptions::default();
    let explicit = m.has("tombstone_threshold") || m.has("tombstone_compaction_interval");
    let tombstone_threshold = m.double("tombstone_threshold", d.tombstone_threshold)?;
    if !(0.0..=1.0).contains(&tombstone_threshold) {
        return Err(invalid(
            "tombstone_threshold",
            format!(
                "tombstone_threshold value ({}) must be between 0.0 and 1.0",
                fmt_f64(tombstone_threshold)
            ),
        ));
    }
    let interval = m.long(
        "tombstone_compaction_interval",
        d.tombstone_compaction_interval_secs as i64,
    )?;
    if interval <= 0 {
        // Scylla prints the value as a millisecond duration.
        return Err(invalid(
            "tombstone_compaction_interval",
            format!(
                "tombstone_compaction_interval value ({}ms) must be positive",
                i128::from(interval) * 1000
            ),
        ));
    }
    let unchecked = m.boolean("unchecked_tombstone_compaction", false)?;
    let enabled = m.boolean("enabled", true)?;
    Ok(CommonOptions {
        tombstone_threshold,
        tombstone_compaction_interval_secs: interval.unsigned_abs(),
        unchecked_tombstone_compaction: unchecked,
        enabled,
        tombstone_options_explicit: explicit,
        ..d
    })
}

fn parse_thresholds(m: &mut Map<'_>, c: &mut CommonOptions) -> Result<(), OptionError> {
    for (key, slot) in [
        ("min_threshold", &mut c.min_threshold),
        ("max_threshold", &mut c.max_threshold),
    ] {
        let v = m.long(key, i64::from(*slot))?;
        if v < 2 {
            return Err(invalid(
                key,
                format!("{key} value ({v}) must be bigger or equal to 2"),
            ));
        }
        *slot = u32::try_from(v).unwrap_or(u32::MAX);
    }
    Ok(())
}

/// Size-tier options; `cold_reads` says whether `cold_reads_to_omit` is a known key.
fn parse_tiers(
    m: &mut Map<'_>,
    defaults: TierOptions,
    age: bool,
    cold_reads: bool,
) -> Result<TierOptions, OptionError> {
    let min_size = m.long("min_sstable_size", defaults.min_sstable_size as i64)?;
    if min_size < 0 {
        return Err(invalid(
            "min_sstable_size",
            format!("min_sstable_size value ({min_size}) must be non negative"),
        ));
    }
    let min_age = if age {
        let v = m.long("min_sstable_age", defaults.min_sstable_age_secs as i64)?;
        if v < 0 {
            return Err(invalid(
                "min_sstable_age",
                format!("min_sstable_age value ({v}) must be non negative"),
            ));
        }
        v.unsigned_abs()
    } else {
        defaults.min_sstable_age_secs
    };
    let low = m.double("bucket_low", defaults.bucket_low)?;
    if low <= 0.0 || low >= 1.0 {
        return Err(invalid(
            "bucket_low",
            format!(
                "bucket_low value ({}) must be between 0.0 and 1.0",
                fmt_f64(low)
            ),
        ));
    }
    let high = m.double("bucket_high", defaults.bucket_high)?;
    if high <= 1.0 {
        return Err(invalid(
            "bucket_high",
            format!(
                "bucket_high value ({}) must be greater than 1.0",
                fmt_f64(high)
            ),
        ));
    }
    // Unreachable with the two checks above (low < 1 < high), kept because Scylla has it.
    if high <= low {
        return Err(invalid(
            "bucket_high",
            format!(
                "bucket_high value ({}) is less than or equal to the bucket_low value ({})",
                fmt_f64(high),
                fmt_f64(low)
            ),
        ));
    }
    let cold = if cold_reads {
        let v = m.double("cold_reads_to_omit", defaults.cold_reads_to_omit)?;
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

fn parse_sstable_size(m: &mut Map<'_>, default: u32) -> Result<u32, OptionError> {
    let v = m.int("sstable_size_in_mb", i64::from(default))?;
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

fn parse_class(name: &str) -> Result<Class, OptionError> {
    let short = name.strip_prefix(CLASS_PREFIX).unwrap_or(name);
    match short {
        "NullCompactionStrategy" | "InMemoryCompactionStrategy" => Ok(Class::Null),
        "SizeTieredCompactionStrategy" => Ok(Class::SizeTiered),
        "LeveledCompactionStrategy" => Ok(Class::Leveled),
        "IncrementalCompactionStrategy" => Ok(Class::Incremental),
        "TimeWindowCompactionStrategy" => Ok(Class::TimeWindow),
        _ => Err(invalid(
            "class",
            format!("Unable to find compaction strategy class '{name}'"),
        )),
    }
}

impl CompactionOptions {
    /// Parses a CQL compaction map. An empty map gives STCS with defaults.
    pub fn from_map(map: &[(String, String)]) -> Result<CompactionOptions, OptionError> {
        if map.is_empty() {
            return Ok(CompactionOptions::default());
        }
        let mut m = Map::new(map);
        let class = match m.take("class") {
            Some(c) => parse_class(c.trim())?,
            None => {
                return Err(invalid(
                    "class",
                    "Missing sub-option 'class' for the 'compaction' option.".to_string(),
                ))
            }
        };
        let mut common = parse_common(&mut m)?;
        let strategy = match class {
            // Scylla validates nothing else for these, unknown keys included.
            Class::Null => {
                return Ok(CompactionOptions {
                    common,
                    strategy: StrategyOptions::Null,
                })
            }
            Class::SizeTiered => {
                let t = parse_tiers(&mut m, TierOptions::stcs(), true, true)?;
                parse_thresholds(&mut m, &mut common)?;
                StrategyOptions::SizeTiered(t)
            }
            Class::Leveled => {
                let size = parse_sstable_size(&mut m, 160)?;
                let tiers = parse_tiers(&mut m, TierOptions::stcs(), true, true)?;
                parse_thresholds(&mut m, &mut common)?;
                let dynamic = m.boolean("dynamic_level_bytes", false)?;
                StrategyOptions::Leveled(LcsOptions {
                    sstable_size_in_mb: size,
                    tiers,
                    dynamic_level_bytes: dynamic,
                })
            }
            Class::Incremental => {
                // `cold_reads_to_omit` is not an ICS key, so it ends up reported as unknown.
                let tiers = parse_tiers(&mut m, TierOptions::ics(), true, false)?;
                let size = parse_sstable_size(&mut m, 1000)?;
                let goal = match m.take("space_amplification_goal") {
                    None => None,
                    Some(_) => {
                        let g = m.double("space_amplification_goal", 0.0)?;
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
                parse_thresholds(&mut m, &mut common)?;
                StrategyOptions::Incremental(IcsOptions {
                    sstable_size_in_mb: size,
                    tiers,
                    space_amplification_goal: goal,
                })
            }
            Class::TimeWindow => StrategyOptions::TimeWindow(parse_twcs(&mut m, &mut common)?),
        };
        // Only TWCS acts on (and shows) whether the tombstone options were explicit; keeping
        // the flag for the others would make equal options compare different.
        if !matches!(strategy, StrategyOptions::TimeWindow(_)) {
            common.tombstone_options_explicit = false;
        }
        if let Some(rest) = m.unknown() {
            return Err(invalid(
                "compaction",
                format!("Invalid compaction strategy options {rest} for chosen strategy type"),
            ));
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

fn parse_twcs(m: &mut Map<'_>, common: &mut CommonOptions) -> Result<TwcsOptions, OptionError> {
    // Scylla's names are upper case; Cassandra upper-cases what it is given, so both spellings
    // are accepted and the canonical one is shown.
    let window_unit = match m.take("compaction_window_unit") {
        None => WindowUnit::Days,
        Some(v) => match v.trim().to_ascii_uppercase().as_str() {
            "MINUTES" => WindowUnit::Minutes,
            "HOURS" => WindowUnit::Hours,
            "DAYS" => WindowUnit::Days,
            _ => {
                return Err(invalid(
                    "compaction_window_unit",
                    format!("Invalid window unit {v} for compaction_window_unit"),
                ))
            }
        },
    };
    let window_size = match m.take("compaction_window_size") {
        None => 1,
        Some(v) => v.trim().parse::<i32>().map_err(|_| {
            invalid(
                "compaction_window_size",
                format!("Invalid integer value {v} for compaction_window_size"),
            )
        })?,
    };
    if window_size <= 0 {
        return Err(invalid(
            "compaction_window_size",
            format!("compaction_window_size value ({window_size}) must be greater than 1"),
        ));
    }
    let expired_check = match m.take("expired_sstable_check_frequency_seconds") {
        None => 600,
        Some(v) => v.trim().parse::<i64>().map_err(|_| {
            invalid(
                "expired_sstable_check_frequency_seconds",
                format!("Invalid long value {v} for expired_sstable_check_frequency_seconds"),
            )
        })?,
    };
    let timestamp_resolution = match m.take("timestamp_resolution") {
        None => TimestampResolution::Microseconds,
        Some(v) => match v.trim().to_ascii_uppercase().as_str() {
            "MICROSECONDS" => TimestampResolution::Microseconds,
            "MILLISECONDS" => TimestampResolution::Milliseconds,
            _ => {
                return Err(invalid(
                    "timestamp_resolution",
                    format!("Invalid timestamp resolution {v} for timestamp_resolution"),
                ))
            }
        },
    };
    let optimized = m.boolean("enable_optimized_twcs_queries", true)?;
    let unsafe_aggressive = match m.take("unsafe_aggressive_sstable_expiration") {
        None => None,
        Some(_) => Some(m.boolean("unsafe_aggressive_sstable_expiration", false)?),
    };
    let tiers = parse_tiers(m, TierOptions::stcs(), true, true)?;
    parse_thresholds(m, common)?;
    Ok(TwcsOptions {
        window_unit,
        window_size: window_size.unsigned_abs(),
        timestamp_resolution,
        expired_sstable_check_frequency_secs: expired_check.max(0).unsigned_abs(),
        enable_optimized_twcs_queries: optimized,
        unsafe_aggressive_sstable_expiration: unsafe_aggressive,
        tiers,
    })
}
