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
//!
//! The pieces: `types` (the parsed options and their defaults), `map` (reading the map,
//! Cassandra's number and boolean forms), `parse` (each group of options, validated);
//! [`CompactionOptions::from_map`] and [`CompactionOptions::to_map`] here put them in order.

mod map;
mod parse;
mod types;

pub use types::{
    CommonOptions, IcsOptions, LcsOptions, OverlappingTombstones, StrategyOptions, TierOptions,
    TimestampResolution, TwcsOptions, WindowUnit, CLASS_PREFIX,
};

use crate::error::OptionError;
use map::{fmt_f64, invalid, Map};
use parse::{
    parse_class, parse_common, parse_fragment_size, parse_leveled, parse_thresholds, parse_tiers,
    parse_twcs, Class,
};

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
