//! Cassandra's guards on batches (`BatchStatement.verifyBatchSize` / `verifyBatchType` and the
//! gc_grace_seconds check): a batch over `batch_size_fail_threshold` is refused with "Batch too
//! large"; one over `batch_size_warn_threshold`, an unlogged batch over more than
//! `unlogged_batch_across_partitions_warn_threshold` partitions, and a logged batch on a table
//! with `gc_grace_seconds = 0` are applied with Cassandra's warnings for the client.
//!
//! The size is Cassandra's `IMutation.dataSize`, computed from the mutations the batch makes:
//! per partition 8 bytes of deletion info, 21 for an absent static row, and per row its
//! clustering values, 8 bytes of liveness (20 when it expires), 13 of row deletion and its
//! cells (20 bytes each plus value and path — a set element or map key serialized, a list's
//! 16-byte id; a collection adds 12 for its deletion). Range
//! tombstone bounds count their encoded length, an approximation of Cassandra's value bytes.
//! As in Cassandra, sizes are checked only for batches spanning more than one partition
//! (mutations of one keyspace and partition key count once).

use super::Executor;
use crate::ast::BatchKind;
use crate::error::{Error, Result};
use crate::identifier::quote_identifier;
use cairn_engine::java::{self, hash_set_order};
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{ColumnData, Mutation, Row};
use cairn_engine::schema::TableSchema;
use std::collections::hash_map::Entry;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

/// The thresholds (Cassandra's configuration keys and defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchLimits {
    /// `batch_size_warn_threshold`, bytes (5 KiB).
    pub warn_bytes: u64,
    /// `batch_size_fail_threshold`, bytes (50 KiB).
    pub fail_bytes: u64,
    /// `unlogged_batch_across_partitions_warn_threshold` (10).
    pub unlogged_partitions_warn: u64,
}

impl Default for BatchLimits {
    fn default() -> Self {
        BatchLimits {
            warn_bytes: 5 << 10,
            fail_bytes: 50 << 10,
            unlogged_partitions_warn: 10,
        }
    }
}

/// Bytes of a row's liveness info (Cassandra's `LivenessInfo.dataSize`).
const LIVENESS: u64 = 8;
const EXPIRING_LIVENESS: u64 = 20;
/// `Row.Deletion.dataSize`, counted even when the row is not deleted.
const ROW_DELETION: u64 = 13;
/// A cell's timestamp, ttl and local deletion time.
const CELL: u64 = 20;
/// A collection's deletion (`DeletionTime.dataSize`).
const COMPLEX_DELETION: u64 = 12;
/// `Rows.EMPTY_STATIC_ROW.dataSize()`.
const EMPTY_STATIC_ROW: u64 = LIVENESS + ROW_DELETION;
/// The partition deletion's timestamp.
const PARTITION_DELETION: u64 = 8;
/// Per range tombstone: its timestamp and deletion time (plus its bounds).
const RANGE_TOMBSTONE: u64 = 12;

/// Checks a (non-conditional) batch's mutations; returns the warnings to send with its result.
pub fn check(ex: &Executor, kind: BatchKind, mutations: &[Mutation]) -> Result<Vec<String>> {
    let limits = ex.batch_limits();
    let cat = ex.catalog();
    let schemas: Vec<Option<Arc<TableSchema>>> = mutations
        .iter()
        .map(|m| cat.db().table_by_id(m.table).map(|t| t.schema()))
        .collect();
    let name = |s: &TableSchema| {
        format!(
            "{}.{}",
            quote_identifier(&s.keyspace),
            quote_identifier(&s.name)
        )
    };
    let mut warnings = Vec::new();
    if kind == BatchKind::Logged {
        let zero_gc = names(
            schemas
                .iter()
                .flatten()
                .filter(|s| s.options.gc_grace_seconds == 0)
                .map(|s| name(s)),
        );
        if !zero_gc.is_empty() {
            warnings.push(format!(
                "Executing a LOGGED BATCH on table{} {}, configured with a gc_grace_seconds of 0. The gc_grace_seconds is used to TTL batchlog entries, so setting gc_grace_seconds too low on tables involved in an atomic batch might cause batchlog entries to expire before being replayed.",
                plural(zero_gc.len()),
                list(&zero_gc)
            ));
        }
    }
    // Cassandra's mutations: one per keyspace and partition key.
    let partitions: BTreeSet<(&str, &[u8])> = mutations
        .iter()
        .zip(&schemas)
        .map(|(m, s)| {
            (
                s.as_ref().map_or("", |s| s.keyspace.as_str()),
                m.key.key.as_ref(),
            )
        })
        .collect();
    if partitions.len() <= 1 {
        return Ok(warnings);
    }
    // Cassandra lists tables in the order it iterates its mutations; worked out only for a
    // warning (the order's search is quadratic in the batch's partitions).
    let tables = || {
        let mut seen = HashSet::new();
        names(
            mutation_order(mutations, &schemas)
                .into_iter()
                .filter(|&i| seen.insert(mutations[i].table))
                .filter_map(|i| schemas[i].as_deref())
                .map(name),
        )
    };
    let size: u64 = mutations
        .iter()
        .zip(&schemas)
        .map(|(m, s)| data_size(m, s.as_deref()))
        .sum();
    if size > limits.warn_bytes {
        if size > limits.fail_bytes {
            return Err(Error::Invalid("Batch too large".into()));
        }
        warnings.push(format!(
            "Batch for {} is of size {size}, exceeding specified threshold of {} by {}.",
            list(&tables()),
            limits.warn_bytes,
            size - limits.warn_bytes
        ));
    }
    if kind == BatchKind::Unlogged {
        let keys: BTreeSet<&[u8]> = mutations.iter().map(|m| m.key.key.as_ref()).collect();
        if keys.len() as u64 > limits.unlogged_partitions_warn {
            let tables = tables();
            warnings.push(format!(
                "Unlogged batch covering {} partitions detected against table{} {}. You should use a logged batch for atomicity, or asynchronous writes for performance.",
                keys.len(),
                plural(tables.len()),
                list(&tables)
            ));
        }
    }
    Ok(warnings)
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The order Cassandra's `BatchUpdatesCollector` yields the batch's mutations in: by
/// keyspace, then by partition key, each in the order of a `java.util.HashMap` that started
/// with room for one entry (keys hashed as `ByteBuffer.hashCode` does); the tables of one
/// partition (ordered by their random ids in Cassandra) in the batch's order.
fn mutation_order(mutations: &[Mutation], schemas: &[Option<Arc<TableSchema>>]) -> Vec<usize> {
    let keyspace = |i: usize| schemas[i].as_deref().map_or("", |s| s.keyspace.as_str());
    // Where each keyspace and each (keyspace, key) first appears, and how many distinct keys
    // each keyspace has.
    let mut keyspaces: HashMap<&str, usize> = HashMap::new();
    let mut keys: HashMap<(&str, &[u8]), usize> = HashMap::new();
    let mut keys_in: HashMap<&str, usize> = HashMap::new();
    for (i, m) in mutations.iter().enumerate() {
        let ks = keyspace(i);
        let next = keyspaces.len();
        keyspaces.entry(ks).or_insert(next);
        let next = keys.len();
        if let Entry::Vacant(e) = keys.entry((ks, m.key.key.as_ref())) {
            e.insert(next);
            *keys_in.entry(ks).or_default() += 1;
        }
    }
    let ks_cap = java::grown_capacity(2, keyspaces.len());
    let mut order: Vec<usize> = (0..mutations.len()).collect();
    order.sort_by_cached_key(|&i| {
        let ks = keyspace(i);
        let key = mutations[i].key.key.as_ref();
        let in_ks = keys_in.get(ks).copied().unwrap_or(0);
        (
            java::bucket(java::string_hash(ks), ks_cap),
            keyspaces.get(ks).copied(),
            java::bucket(java::byte_buffer_hash(key), java::grown_capacity(2, in_ks)),
            keys.get(&(ks, key)).copied(),
        )
    });
    order
}

/// Distinct table names, in the order they first appear.
fn names(all: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in all {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// A set of names as Cassandra prints its `HashSet` (`[a, b]`, in the set's order; names
/// sharing a bucket keep the order of the batch's statements, an approximation of
/// Cassandra's insertion order).
fn list(names: &[String]) -> String {
    let v: Vec<&str> = names.iter().map(String::as_str).collect();
    format!("[{}]", hash_set_order(&v).join(", "))
}

/// Cassandra's `PartitionUpdate.dataSize` of one mutation.
fn data_size(m: &Mutation, schema: Option<&TableSchema>) -> u64 {
    let p = &m.update;
    let layout = schema.map(TableSchema::clustering_layout);
    let mut size = PARTITION_DELETION;
    for rt in &p.range_tombstones {
        size += RANGE_TOMBSTONE + (rt.range.start.len() + rt.range.end.len()) as u64;
    }
    size += p
        .static_row
        .as_ref()
        .map_or(EMPTY_STATIC_ROW, |r| row_size(r, 0, schema));
    for (key, row) in &p.rows {
        let clustering: u64 = layout
            .as_ref()
            .and_then(|l| l.decode(key.as_bytes()).ok())
            .map_or(key.as_bytes().len() as u64, |values| {
                values.iter().map(|v| v.len() as u64).sum()
            });
        size += row_size(row, clustering, schema);
    }
    size
}

/// A collection cell's path as Cassandra holds it: the serialized set element or map key
/// (Cairn keeps them byte-comparable), a list's 16-byte time UUID.
fn path_size(ty: Option<&CqlType>, path: &[u8]) -> u64 {
    match ty {
        Some(t @ (CqlType::Set(_) | CqlType::Map(_, _))) => {
            crate::values::collections::path_element(t, path).map_or(path.len(), |e| e.len()) as u64
        }
        _ => path.len() as u64,
    }
}

fn row_size(row: &Row, clustering: u64, schema: Option<&TableSchema>) -> u64 {
    let liveness = match &row.marker {
        Some(m) if m.ttl > 0 => EXPIRING_LIVENESS,
        _ => LIVENESS,
    };
    let cells: u64 = row
        .columns
        .iter()
        .map(|(id, data)| match data {
            ColumnData::Simple(c) => CELL + c.value.len() as u64,
            ColumnData::Complex(cc) => {
                let ty = schema.and_then(|s| s.column_by_id(*id)).map(|c| &c.ty);
                COMPLEX_DELETION
                    + cc.cells
                        .iter()
                        .map(|(path, c)| CELL + path_size(ty, path) + c.value.len() as u64)
                        .sum::<u64>()
            }
        })
        .sum();
    clustering + liveness + ROW_DELETION + cells
}
