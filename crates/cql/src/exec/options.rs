//! Table options: CQL `WITH` properties into the engine's [`TableOptions`], and back into
//! what `system_schema.tables` shows.
//!
//! Options the engine acts on are typed (compression, compaction, bloom filter, gc grace,
//! default TTL, tombstone_gc, comment); the others Cassandra users set (caching,
//! speculative_retry, …) are validated and kept as text so they are shown back unchanged.

use crate::ast::{Property, PropertyValue};
use crate::error::{Error, Result};
use cairn_engine::compaction::strategy::CompactionOptions;
use cairn_engine::schema::{TableOptions, TombstoneGcMode};
use cairn_engine::sstable::compression::CompressionParams;

/// Default `caching`, as Cassandra shows it.
pub const DEFAULT_CACHING: [(&str, &str); 2] = [("keys", "ALL"), ("rows_per_partition", "NONE")];

/// Options kept as text, with their defaults.
const TEXT_OPTIONS: [(&str, &str); 5] = [
    ("speculative_retry", "99p"),
    ("memtable_flush_period_in_ms", "0"),
    ("min_index_interval", "128"),
    ("max_index_interval", "2048"),
    ("read_repair", "BLOCKING"),
];

fn simple(p: &Property) -> Result<&str> {
    match &p.value {
        PropertyValue::Simple(s) => Ok(s),
        PropertyValue::Map(_) => Err(Error::Invalid(format!(
            "Invalid value for property '{}'. It should be a string",
            p.name
        ))),
    }
}

fn map(p: &Property) -> Result<&[(String, String)]> {
    match &p.value {
        PropertyValue::Map(m) => Ok(m),
        PropertyValue::Simple(_) => Err(Error::Invalid(format!(
            "Invalid value for property '{}'. It should be a map",
            p.name
        ))),
    }
}

fn int(p: &Property, min: i64, max: i64) -> Result<i64> {
    let s = simple(p)?;
    let v: i64 = s.parse().map_err(|_| {
        Error::Syntax(crate::error::SyntaxError {
            line: 0,
            column: 0,
            offset: 0,
            message: format!("Invalid integer value {s} for '{}'", p.name),
        })
    })?;
    if v < min || v > max {
        return Err(Error::Configuration(format!(
            "{} must be between {min} and {max} (got {v})",
            p.name
        )));
    }
    Ok(v)
}

fn set_extra(o: &mut TableOptions, key: &str, value: String) {
    o.extra.retain(|(k, _)| k != key);
    o.extra.push((key.to_string(), value));
}

/// A stored text option, or its default.
pub fn extra<'a>(o: &'a TableOptions, key: &str) -> Option<&'a str> {
    o.extra
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// Applies `WITH` properties (CREATE or ALTER TABLE).
pub fn apply(o: &mut TableOptions, props: &[Property]) -> Result<()> {
    for p in props {
        match p.name.as_str() {
            "compaction" => {
                let m = map(p)?.to_vec();
                CompactionOptions::from_map(&m).map_err(|e| Error::Configuration(e.to_string()))?;
                o.compaction = m;
            }
            "compression" => {
                let m = map(p)?;
                o.compression = CompressionParams::from_options(m)
                    .map_err(|e| Error::Configuration(e.to_string()))?;
            }
            "crc_check_chance" => {
                let s = simple(p)?;
                let v: f64 = s.parse().unwrap_or(-1.0);
                if !(0.0..=1.0).contains(&v) {
                    return Err(Error::Configuration(
                        "crc_check_chance should be between 0.0 and 1.0".into(),
                    ));
                }
                o.compression.crc_check_chance = v;
            }
            "bloom_filter_fp_chance" => {
                let s = simple(p)?;
                let v: f64 = s.parse().unwrap_or(-1.0);
                if !(v > 0.0 && v <= 1.0) {
                    return Err(Error::Configuration(format!(
                        "bloom_filter_fp_chance must be larger than 0.0 and less than or equal to 1.0 (got {s})"
                    )));
                }
                o.bloom_filter_fp_chance = v;
            }
            "gc_grace_seconds" => o.gc_grace_seconds = int(p, 0, i64::from(i32::MAX))? as u32,
            "default_time_to_live" => {
                o.default_time_to_live = int(p, 0, 630_720_000)? as u32;
            }
            "comment" => o.comment = simple(p)?.to_string(),
            "caching" => {
                let m = map(p)?;
                for (k, v) in m {
                    match k.as_str() {
                        "keys" | "rows_per_partition" | "enabled" => {}
                        _ => {
                            return Err(Error::Configuration(format!(
                                "Invalid caching sub-option '{k}'"
                            )))
                        }
                    }
                    set_extra(o, &format!("caching.{k}"), v.clone());
                }
            }
            "tombstone_gc" => {
                for (k, v) in map(p)? {
                    match k.as_str() {
                        "mode" => {
                            o.tombstone_gc = TombstoneGcMode::parse(v).ok_or_else(|| {
                                Error::Configuration(format!("Invalid tombstone_gc mode: {v}"))
                            })?;
                        }
                        "propagation_delay_in_seconds" => {
                            v.parse::<u64>().map_err(|_| {
                                Error::Configuration(format!(
                                    "Invalid propagation_delay_in_seconds: {v}"
                                ))
                            })?;
                            set_extra(o, "tombstone_gc.propagation_delay_in_seconds", v.clone());
                        }
                        _ => {
                            return Err(Error::Configuration(format!(
                                "Invalid tombstone_gc option: {k}"
                            )))
                        }
                    }
                }
            }
            "memtable_flush_period_in_ms" => {
                set_extra(o, &p.name, int(p, 0, i64::from(i32::MAX))?.to_string());
            }
            "min_index_interval" | "max_index_interval" => {
                set_extra(o, &p.name, int(p, 1, i64::from(i32::MAX))?.to_string());
            }
            "speculative_retry" | "read_repair" | "additional_write_policy" => {
                set_extra(o, &p.name, simple(p)?.to_string());
            }
            // Accepted for compatibility with older scripts; no effect on one node.
            "read_repair_chance" | "dclocal_read_repair_chance" | "cdc" | "paxos_grace_seconds" => {
                set_extra(
                    o,
                    &p.name,
                    simple(p).map(str::to_string).unwrap_or_default(),
                );
            }
            other => {
                return Err(Error::Syntax(crate::error::SyntaxError {
                    line: 0,
                    column: 0,
                    offset: 0,
                    message: format!("Unknown property '{other}'"),
                }))
            }
        }
    }
    Ok(())
}

/// The `compaction` map shown back as Cassandra shows it: the class (fully qualified), the
/// options the user gave, and min/max_threshold.
pub fn compaction_map(o: &TableOptions) -> Vec<(String, String)> {
    let mut m: Vec<(String, String)> = o.compaction.clone();
    if !m.iter().any(|(k, _)| k == "class") {
        m.push(("class".into(), "SizeTieredCompactionStrategy".into()));
    }
    for (k, v) in m.iter_mut() {
        if k == "class" && !v.contains('.') {
            *v = format!("org.apache.cassandra.db.compaction.{v}");
        }
    }
    for (k, d) in [("max_threshold", "32"), ("min_threshold", "4")] {
        if !m.iter().any(|(x, _)| x == k) {
            m.push((k.into(), d.into()));
        }
    }
    m.sort();
    m
}

/// The `caching` map shown back.
pub fn caching_map(o: &TableOptions) -> Vec<(String, String)> {
    DEFAULT_CACHING
        .iter()
        .map(|(k, d)| {
            let v = extra(o, &format!("caching.{k}")).unwrap_or(d);
            (k.to_string(), v.to_string())
        })
        .collect()
}

/// A text option shown back, with its default.
pub fn text_option(o: &TableOptions, key: &str) -> String {
    extra(o, key)
        .map(str::to_string)
        .or_else(|| {
            TEXT_OPTIONS
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, d)| d.to_string())
        })
        .unwrap_or_default()
}
