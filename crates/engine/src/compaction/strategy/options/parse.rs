//! Parsing each group of options out of a [`Map`], with Cassandra's (or, for what
//! Cassandra lacks, ScyllaDB's) validation and error texts, in Cassandra's order.

use super::map::{cassandra_boolean, fmt_f64, invalid, not_an_int, Map};
use super::types::{
    CommonOptions, LcsOptions, OverlappingTombstones, TierOptions, TimestampResolution,
    TwcsOptions, WindowUnit, CLASS_PREFIX, MIB,
};
use crate::error::OptionError;
use crate::java::{double_to_string, parse_double};

/// Cassandra's `AbstractCompactionStrategy.validateOptions`, and `CompactionParams.create`'s
/// reading of `enabled` and `provide_overlapping_tombstones`.
pub(super) fn parse_common(m: &mut Map<'_>) -> Result<CommonOptions, OptionError> {
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
pub(super) fn parse_thresholds(m: &mut Map<'_>, c: &mut CommonOptions) -> Result<(), OptionError> {
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
pub(super) fn parse_tiers(
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
pub(super) fn parse_leveled(m: &mut Map<'_>) -> Result<(u32, u32, bool), OptionError> {
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
pub(super) fn parse_fragment_size(m: &mut Map<'_>, default: u32) -> Result<u32, OptionError> {
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
pub(super) enum Class {
    Null,
    SizeTiered,
    Leveled,
    Incremental,
    TimeWindow,
}

impl Class {
    pub(super) fn simple_name(self) -> &'static str {
        match self {
            Class::Null => "NullCompactionStrategy",
            Class::SizeTiered => "SizeTieredCompactionStrategy",
            Class::Leveled => "LeveledCompactionStrategy",
            Class::Incremental => "IncrementalCompactionStrategy",
            Class::TimeWindow => "TimeWindowCompactionStrategy",
        }
    }
}

pub(super) fn parse_class(name: &str) -> Result<Class, OptionError> {
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

/// TWCS's options (`TimeWindowCompactionStrategyOptions.validateOptions`), then its size tiers.
/// Units are upper case in Cassandra (which refuses `days`); lower case is accepted too, as
/// tables created by earlier Cairn versions may have it.
pub(super) fn parse_twcs(m: &mut Map<'_>) -> Result<TwcsOptions, OptionError> {
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
