//! Cassandra's guards on batches (`BatchStatement.verifyBatchSize` / `verifyBatchType` and the
//! gc_grace_seconds check): a batch over `batch_size_fail_threshold` is refused with "Batch too
//! large"; one over `batch_size_warn_threshold`, an unlogged batch over more than
//! `unlogged_batch_across_partitions_warn_threshold` partitions, and a logged batch on a table
//! with `gc_grace_seconds = 0` are applied with Cassandra's warnings for the client.
//!
//! The size is Cassandra's `IMutation.dataSize`, computed from the mutations the batch makes:
//! per partition 8 bytes of deletion info, 21 for an absent static row, and per row its
//! clustering values, 8 bytes of liveness (20 when it expires), 13 of row deletion and its
//! cells (20 bytes each plus value and path; a collection adds 12 for its deletion). Range
//! tombstone bounds count their encoded length, an approximation of Cassandra's value bytes.
//! As in Cassandra, sizes are checked only for batches spanning more than one partition
//! (mutations of one keyspace and partition key count once).

use super::Executor;
use crate::ast::BatchKind;
use crate::error::{Error, Result};
use crate::parser::quote_identifier;
use cairn_engine::model::{ColumnData, Mutation, Row};
use cairn_engine::schema::TableSchema;
use std::collections::BTreeSet;
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
        let zero_gc: BTreeSet<String> = schemas
            .iter()
            .flatten()
            .filter(|s| s.options.gc_grace_seconds == 0)
            .map(|s| name(s))
            .collect();
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
    let tables: BTreeSet<String> = schemas.iter().flatten().map(|s| name(s)).collect();
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
            list(&tables),
            limits.warn_bytes,
            size - limits.warn_bytes
        ));
    }
    if kind == BatchKind::Unlogged {
        let keys: BTreeSet<&[u8]> = mutations.iter().map(|m| m.key.key.as_ref()).collect();
        if keys.len() as u64 > limits.unlogged_partitions_warn {
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

/// A set as Java prints it (`[a, b]`); sorted here, where Cassandra's order is its hash set's.
fn list(names: &BTreeSet<String>) -> String {
    let v: Vec<&str> = names.iter().map(String::as_str).collect();
    format!("[{}]", v.join(", "))
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
        .map_or(EMPTY_STATIC_ROW, |r| row_size(r, 0));
    for (key, row) in &p.rows {
        let clustering: u64 = layout
            .as_ref()
            .and_then(|l| l.decode(key.as_bytes()).ok())
            .map_or(key.as_bytes().len() as u64, |values| {
                values.iter().map(|v| v.len() as u64).sum()
            });
        size += row_size(row, clustering);
    }
    size
}

fn row_size(row: &Row, clustering: u64) -> u64 {
    let liveness = match &row.marker {
        Some(m) if m.ttl > 0 => EXPIRING_LIVENESS,
        _ => LIVENESS,
    };
    let cells: u64 = row
        .columns
        .iter()
        .map(|(_, data)| match data {
            ColumnData::Simple(c) => CELL + c.value.len() as u64,
            ColumnData::Complex(cc) => {
                COMPLEX_DELETION
                    + cc.cells
                        .iter()
                        .map(|(path, c)| CELL + (path.len() + c.value.len()) as u64)
                        .sum::<u64>()
            }
        })
        .sum();
    clustering + liveness + ROW_DELETION + cells
}
