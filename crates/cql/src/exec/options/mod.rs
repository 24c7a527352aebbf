//! Table options: CQL `WITH` properties into the engine's [`TableOptions`], checked as
//! Cassandra 5.0's `TableAttributes` / `TableParams` check them, and back into what
//! `system_schema.tables` and DESCRIBE show.
//!
//! Every option Cassandra 5.0 accepts is accepted, and each is either acted on or kept and
//! shown back:
//! - acted on (typed in the engine): `compaction`, `compression`, `crc_check_chance`,
//!   `bloom_filter_fp_chance`, `gc_grace_seconds`, `default_time_to_live`, `comment`, and
//!   ScyllaDB's `tombstone_gc`;
//! - kept in their canonical spelling (`TableOptions::extra`), with nothing to act on yet on
//!   one node: `caching` ([`caching`]; its `enabled` turns the row cache off for the table), `speculative_retry` /
//!   `additional_write_policy` ([`speculative_retry`]: one node never speculates),
//!   `read_repair`, `min_index_interval` / `max_index_interval` (Cairn's index has no
//!   sampling), `memtable_flush_period_in_ms`, `cdc` (accepted as by a Cassandra node with
//!   `cdc_enabled: false`), `allow_auto_snapshot`, `incremental_backups`;
//! - as in Cassandra, `memtable` accepts only `'default'`, `extensions` is accepted and ignored,
//!   and `id` sets the new table's id;
//! - ScyllaDB's `paxos_grace_seconds` and Cassandra 3's `read_repair_chance` /
//!   `dclocal_read_repair_chance` are accepted for old scripts (deliberate: ScyllaDB users).
//!
//! Checks run in Cassandra's order: [`check_values`] reads every value (a value that cannot be
//! read is reported before the statement looks at its table, as Cassandra does), then
//! [`apply`] refuses unknown properties, checks the given values on their own, applies them
//! and checks the result as a whole (`max_index_interval` against the table's
//! `min_index_interval`, …).

pub mod caching;
pub mod speculative_retry;

use super::properties::Properties;
use crate::ast::Property;
use crate::error::{Error, Result};
use crate::values::format::java_double_string as double_to_string;
use caching::Caching;
use cairn_engine::compaction::strategy::{CompactionOptions, StrategyOptions};
use cairn_engine::schema::compression::CompressionParams;
use cairn_engine::schema::{TableOptions, TombstoneGcMode, CACHING_ENABLED};
use speculative_retry::Policy;

/// Every property Cassandra 5.0 accepts for a table.
const KNOWN: [&str; 21] = [
    "allow_auto_snapshot",
    "bloom_filter_fp_chance",
    "caching",
    "comment",
    "compaction",
    "compression",
    "memtable",
    "default_time_to_live",
    "extensions",
    "gc_grace_seconds",
    "incremental_backups",
    "max_index_interval",
    "memtable_flush_period_in_ms",
    "min_index_interval",
    "speculative_retry",
    "additional_write_policy",
    "crc_check_chance",
    "cdc",
    "read_repair",
    "auto_repair",
    "id",
];

/// ScyllaDB's and Cassandra 3's options, accepted besides [`KNOWN`].
const COMPATIBILITY: [&str; 4] = [
    "tombstone_gc",
    "paxos_grace_seconds",
    "read_repair_chance",
    "dclocal_read_repair_chance",
];

/// Options kept as text, with the defaults shown when they were never set.
const TEXT_OPTIONS: [(&str, &str); 6] = [
    ("speculative_retry", "99p"),
    ("additional_write_policy", "99p"),
    ("memtable_flush_period_in_ms", "0"),
    ("min_index_interval", "128"),
    ("max_index_interval", "2048"),
    ("read_repair", "BLOCKING"),
];

/// Cassandra's `Attributes.MAX_TTL` (20 years).
const MAX_TTL: i32 = 630_720_000;

/// The smallest false-positive chance Cassandra's bloom filters support
/// (`BloomCalculations.minSupportedBloomFilterFpChance()`).
const MIN_BLOOM_FP_CHANCE: f64 = 6.71e-5;

/// Which statement the properties belong to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Create,
    Alter,
}

fn set_extra(o: &mut TableOptions, key: &str, value: String) {
    o.extra.retain(|(k, _)| k != key);
    o.extra.push((key.to_string(), value));
}

fn unset_extra(o: &mut TableOptions, key: &str) {
    o.extra.retain(|(k, _)| k != key);
}

/// A stored text option.
pub fn extra<'a>(o: &'a TableOptions, key: &str) -> Option<&'a str> {
    o.extra
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// Reads every given value into `o` (Cassandra's `TableAttributes.build`), in Cassandra's
/// order, refusing values that cannot be read; ranges are [`validate`]'s.
fn build(o: &mut TableOptions, props: &[Property]) -> Result<()> {
    let p = Properties(props);
    if let Some(v) = p.boolean("allow_auto_snapshot")? {
        flag(o, "allow_auto_snapshot", v, true);
    }
    if let Some(v) = p.double("bloom_filter_fp_chance")? {
        o.bloom_filter_fp_chance = v;
    }
    if let Some(m) = p.map("caching")? {
        let c = Caching::from_map(m)?;
        set_extra(o, "caching.keys", c.keys_str().into());
        set_extra(o, "caching.rows_per_partition", c.rows_str());
        if c.enabled {
            unset_extra(o, CACHING_ENABLED);
        } else {
            set_extra(o, CACHING_ENABLED, "false".into());
        }
    }
    if let Some(v) = p.string("comment")? {
        o.comment = v.to_string();
    }
    if let Some(m) = p.map("compaction")? {
        // The engine takes an empty map for "never set"; Cassandra wants a class.
        if m.is_empty() {
            return Err(Error::Configuration(
                "Missing sub-option 'class' for the 'compaction' option".into(),
            ));
        }
        CompactionOptions::from_map(m).map_err(|e| Error::Configuration(e.to_string()))?;
        o.compaction = m.to_vec();
    }
    if let Some(m) = p.map("compression")? {
        let crc = o.compression.crc_check_chance;
        o.compression =
            CompressionParams::from_options(m).map_err(|e| Error::Configuration(e.to_string()))?;
        // `crc_check_chance` is a table option of its own: a new compression map keeps it.
        if !m.iter().any(|(k, _)| k == "crc_check_chance") {
            o.compression.crc_check_chance = crc;
        }
    }
    if let Some(v) = p.string("memtable")? {
        if v != "default" {
            return Err(Error::Configuration(format!(
                "Memtable configuration \"{v}\" not found."
            )));
        }
    }
    if let Some(v) = p.int("default_time_to_live")? {
        o.default_time_to_live = v.max(0).unsigned_abs();
        set_extra(o, "default_time_to_live", v.to_string());
    }
    if let Some(v) = p.int("gc_grace_seconds")? {
        o.gc_grace_seconds = v.max(0).unsigned_abs();
        set_extra(o, "gc_grace_seconds", v.to_string());
    }
    if let Some(v) = p.boolean("incremental_backups")? {
        flag(o, "incremental_backups", v, true);
    }
    for key in [
        "max_index_interval",
        "memtable_flush_period_in_ms",
        "min_index_interval",
    ] {
        if let Some(v) = p.int(key)? {
            set_extra(o, key, v.to_string());
        }
    }
    for key in ["speculative_retry", "additional_write_policy"] {
        if let Some(v) = p.string(key)? {
            set_extra(o, key, Policy::parse(v)?.to_string());
        }
    }
    if let Some(v) = p.double("crc_check_chance")? {
        o.compression.crc_check_chance = v;
    }
    if let Some(v) = p.boolean("cdc")? {
        flag(o, "cdc", v, false);
    }
    if let Some(v) = p.string("read_repair")? {
        let upper = v.to_uppercase();
        if !matches!(upper.as_str(), "BLOCKING" | "NONE") {
            // Cassandra answers with a server error carrying this text.
            return Err(Error::Configuration(format!(
                "No enum constant org.apache.cassandra.service.reads.repair.ReadRepairStrategy.{upper}"
            )));
        }
        set_extra(o, "read_repair", upper);
    }
    if let Some(m) = p.map("tombstone_gc")? {
        for (k, v) in m {
            match k.as_str() {
                "mode" => {
                    o.tombstone_gc = TombstoneGcMode::parse(v).ok_or_else(|| {
                        Error::Configuration(format!("Invalid tombstone_gc mode: {v}"))
                    })?;
                }
                "propagation_delay_in_seconds" => {
                    v.parse::<u64>().map_err(|_| {
                        Error::Configuration(format!("Invalid propagation_delay_in_seconds: {v}"))
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
    for key in [
        "paxos_grace_seconds",
        "read_repair_chance",
        "dclocal_read_repair_chance",
    ] {
        if let Some(v) = p.string(key)? {
            set_extra(o, key, v.to_string());
        }
    }
    Ok(())
}

/// Stores a boolean option, only when it differs from its default (as Cassandra writes
/// `allow_auto_snapshot` and `incremental_backups` to its schema tables).
fn flag(o: &mut TableOptions, key: &str, value: bool, default: bool) {
    if value == default {
        unset_extra(o, key);
    } else {
        set_extra(o, key, value.to_string());
    }
}

/// A boolean option's value.
pub fn flag_value(o: &TableOptions, key: &str) -> bool {
    match extra(o, key) {
        Some(v) => v == "true",
        None => !matches!(key, "cdc"),
    }
}

/// An `int` option kept as text (its default when never set).
fn int_option(o: &TableOptions, key: &str) -> i64 {
    text_option(o, key).parse().unwrap_or(0)
}

/// Cassandra's `TableParams.validate`, on the options as they would be.
fn validate(o: &TableOptions) -> Result<()> {
    let fail = |m: String| Err(Error::Configuration(m));
    // The compaction and compression maps were checked as they were read.
    let bloom = o.bloom_filter_fp_chance;
    if !(bloom > MIN_BLOOM_FP_CHANCE && bloom <= 1.0) {
        return fail(format!(
            "bloom_filter_fp_chance must be larger than {} and less than or equal to 1.0 (got {})",
            double_to_string(MIN_BLOOM_FP_CHANCE),
            double_to_string(bloom)
        ));
    }
    let crc = o.compression.crc_check_chance;
    if !(0.0..=1.0).contains(&crc) {
        return fail(format!(
            "crc_check_chance must be larger than or equal to 0 and smaller than or equal to 1.0 (got {})",
            double_to_string(crc)
        ));
    }
    let ttl = extra(o, "default_time_to_live")
        .and_then(|v| v.parse::<i64>().ok())
        .unwrap_or(i64::from(o.default_time_to_live));
    if ttl < 0 {
        return fail(format!(
            "default_time_to_live must be greater than or equal to 0 (got {ttl})"
        ));
    }
    if ttl > i64::from(MAX_TTL) {
        return fail(format!(
            "default_time_to_live must be less than or equal to {MAX_TTL} (got {ttl})"
        ));
    }
    let gc = extra(o, "gc_grace_seconds")
        .and_then(|v| v.parse::<i64>().ok())
        .unwrap_or(i64::from(o.gc_grace_seconds));
    if gc < 0 {
        return fail(format!(
            "gc_grace_seconds must be greater than or equal to 0 (got {gc})"
        ));
    }
    let min_index = int_option(o, "min_index_interval");
    if min_index < 1 {
        return fail(format!(
            "min_index_interval must be greater than or equal to 1 (got {min_index})"
        ));
    }
    let max_index = int_option(o, "max_index_interval");
    if max_index < min_index {
        return fail(format!(
            "max_index_interval must be greater than or equal to min_index_interval ({min_index}) (got {max_index})"
        ));
    }
    let flush = int_option(o, "memtable_flush_period_in_ms");
    if flush < 0 {
        return fail(format!(
            "memtable_flush_period_in_ms must be greater than or equal to 0 (got {flush})"
        ));
    }
    Ok(())
}

/// Reads every value of `props` as Cassandra does before it looks at the schema, reporting
/// values that cannot be read (a bad integer, an unknown compaction class, …).
pub fn check_values(props: &[Property]) -> Result<()> {
    build(&mut TableOptions::default(), props)
}

/// Applies the `WITH` properties of CREATE or ALTER TABLE to `o`. On error `o` may be half
/// changed: the caller drops it.
pub fn apply(o: &mut TableOptions, props: &[Property], target: Target) -> Result<()> {
    let p = Properties(props);
    let mut known: Vec<&str> = KNOWN.to_vec();
    known.extend(COMPATIBILITY);
    p.check_known(&known)?;
    if p.has("auto_repair") {
        return Err(Error::Configuration(
            "auto_repair option is not supported unless auto-repair is enabled with -Dcassandra.autorepair.enable=true".into(),
        ));
    }
    if target == Target::Alter && p.has("id") {
        return Err(Error::Configuration("Cannot alter table id.".into()));
    }
    // The given values on their own, then as they change the table.
    let mut alone = TableOptions::default();
    build(&mut alone, props)?;
    validate(&alone)?;
    build(o, props)?;
    // A new table's default false-positive chance follows its strategy (Cassandra's
    // `CompactionParams.defaultBloomFilterFbChance`): 0.1 for LCS. Set once, at creation.
    if target == Target::Create && !p.has("bloom_filter_fp_chance") {
        let leveled = CompactionOptions::from_map(&o.compaction)
            .is_ok_and(|c| matches!(c.strategy, StrategyOptions::Leveled(_)));
        if leveled {
            o.bloom_filter_fp_chance = 0.1;
        }
    }
    validate(o)?;
    // Only values in range are stored in the typed fields; the text copies are not needed.
    unset_extra(o, "default_time_to_live");
    unset_extra(o, "gc_grace_seconds");
    Ok(())
}

/// The table id `WITH id = '…'` asks for, if any.
pub fn table_id(props: &[Property]) -> Result<Option<u128>> {
    let Some(v) = Properties(props).string("id")? else {
        return Ok(None);
    };
    crate::values::temporal::parse_uuid(v)
        .map(|b| Some(u128::from_be_bytes(b)))
        .ok_or_else(|| Error::Configuration("Invalid table id".into()))
}

/// A table id in its UUID text form.
pub fn uuid_string(id: u128) -> String {
    crate::values::temporal::format_uuid(&id.to_be_bytes())
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

/// The table's caching settings.
pub fn caching(o: &TableOptions) -> Caching {
    Caching::from_stored(
        o.cache_enabled(),
        extra(o, "caching.keys"),
        extra(o, "caching.rows_per_partition"),
    )
}

/// The `caching` map shown back.
pub fn caching_map(o: &TableOptions) -> Vec<(String, String)> {
    caching(o).to_map()
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::ast::PropertyValue;

    fn props(pairs: &[(&str, &str)]) -> Vec<Property> {
        pairs
            .iter()
            .map(|(k, v)| Property {
                name: k.to_string(),
                value: PropertyValue::Simple(v.to_string()),
            })
            .collect()
    }

    fn err(o: &mut TableOptions, pairs: &[(&str, &str)]) -> String {
        apply(o, &props(pairs), Target::Alter)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn numbers_are_read_then_checked() {
        let mut o = TableOptions::default();
        assert_eq!(
            err(&mut o, &[("gc_grace_seconds", "1.5")]),
            "Invalid integer value 1.5 for 'gc_grace_seconds'"
        );
        assert_eq!(
            err(&mut o, &[("gc_grace_seconds", "-1")]),
            "gc_grace_seconds must be greater than or equal to 0 (got -1)"
        );
        assert_eq!(
            err(&mut o, &[("default_time_to_live", "630720001")]),
            "default_time_to_live must be less than or equal to 630720000 (got 630720001)"
        );
        assert_eq!(
            err(&mut o, &[("bloom_filter_fp_chance", "0")]),
            "bloom_filter_fp_chance must be larger than 6.71E-5 and less than or equal to 1.0 (got 0.0)"
        );
        assert_eq!(
            err(&mut o, &[("crc_check_chance", "1.5")]),
            "crc_check_chance must be larger than or equal to 0 and smaller than or equal to 1.0 (got 1.5)"
        );
        assert_eq!(
            err(&mut o, &[("max_index_interval", "64")]),
            "max_index_interval must be greater than or equal to min_index_interval (128) (got 64)"
        );
        assert_eq!(err(&mut o, &[("foo", "1")]), "Unknown property 'foo'");
        assert_eq!(
            err(&mut o, &[("memtable", "skiplist")]),
            "Memtable configuration \"skiplist\" not found."
        );
        assert_eq!(
            err(&mut o, &[("cdc", "maybe")]),
            "Invalid boolean value maybe for 'cdc'. Positive values can be '1', 'true' or 'yes'. Negative values can be '0', 'false' or 'no'."
        );
        assert_eq!(err(&mut o, &[("id", "5")]), "Cannot alter table id.");
    }

    #[test]
    fn altered_values_are_checked_against_the_table() {
        let mut o = TableOptions::default();
        assert_eq!(
            err(&mut o, &[("min_index_interval", "4096")]),
            "max_index_interval must be greater than or equal to min_index_interval (4096) (got 2048)"
        );
        let mut o = TableOptions::default();
        apply(
            &mut o,
            &props(&[
                ("max_index_interval", "4096"),
                ("min_index_interval", "256"),
            ]),
            Target::Alter,
        )
        .unwrap();
        assert_eq!(
            err(&mut o, &[("max_index_interval", "128")]),
            "max_index_interval must be greater than or equal to min_index_interval (256) (got 128)"
        );
    }

    #[test]
    fn kept_options_are_shown_canonically() {
        let mut o = TableOptions::default();
        apply(
            &mut o,
            &props(&[
                ("speculative_retry", "min(99.50P, 50ms)"),
                ("additional_write_policy", "always"),
                ("read_repair", "none"),
                ("cdc", "yes"),
                ("allow_auto_snapshot", "false"),
                ("incremental_backups", "true"),
                ("memtable", "default"),
                ("extensions", "ignored"),
            ]),
            Target::Create,
        )
        .unwrap();
        assert_eq!(text_option(&o, "speculative_retry"), "MIN(99.5p,50ms)");
        assert_eq!(text_option(&o, "additional_write_policy"), "ALWAYS");
        assert_eq!(text_option(&o, "read_repair"), "NONE");
        assert!(flag_value(&o, "cdc"));
        assert!(!flag_value(&o, "allow_auto_snapshot"));
        assert!(flag_value(&o, "incremental_backups"));
        assert_eq!(extra(&o, "incremental_backups"), None);
    }

    #[test]
    fn table_ids() {
        let id = "5a1c395e-b41f-11e5-9f22-ba0be0483c18";
        let p = props(&[("id", id)]);
        let parsed = table_id(&p).unwrap().unwrap();
        assert_eq!(uuid_string(parsed), id);
        assert_eq!(
            table_id(&props(&[("id", "5")])).unwrap_err().to_string(),
            "Invalid table id"
        );
    }
}
