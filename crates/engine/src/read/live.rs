//! The last two steps of a read: apply tombstones to merged data, then keep what is live.
//!
//! [`Shadowing`] removes from a row what the partition tombstone, the range tombstones
//! covering its key and dropped columns hide; the row is still data (its own deletion and
//! expired cells stay). [`live_partition`] then turns a merged partition into the rows a
//! reader sees at `now`: live cells only, the selected columns, at most `limit` rows — pulling
//! rows from the merge one at a time, so a `LIMIT` stops the sources early.

use super::merge::MergedPartition;
use super::{PartitionResult, ReadCommand};
use crate::error::Result;
use crate::model::partition::covering_deletion;
use crate::model::{CellCounts, ColumnId, DecoratedKey, DeletionTime, RangeTombstone, Row};

/// What shadows the rows of one merged partition.
pub struct Shadowing<'a> {
    /// The partition tombstone.
    pub deletion: Option<DeletionTime>,
    /// Range tombstones (those intersecting the read's slice).
    pub range_tombstones: &'a [RangeTombstone],
    /// Dropped columns' leftovers (see [`crate::schema::TableSchema::hidden_cells`]).
    pub hidden_columns: &'a [(ColumnId, i64)],
}

impl Shadowing<'_> {
    /// Removes what is shadowed from a clustering row at `key`.
    pub fn apply(&self, key: &[u8], row: &mut Row) {
        let shadow =
            DeletionTime::max(self.deletion, covering_deletion(self.range_tombstones, key));
        if let Some(d) = shadow {
            row.apply_deletion(d);
        }
        row.remove_columns(self.hidden_columns);
    }

    /// Removes what is shadowed from the static row (range tombstones never cover it).
    pub fn apply_static(&self, row: &mut Row) {
        if let Some(d) = self.deletion {
            row.apply_deletion(d);
        }
        row.remove_columns(self.hidden_columns);
    }
}

/// What decides, beyond tombstones and expiry, whether a row is live for one table.
#[derive(Debug, Clone, Copy, Default)]
pub struct LiveRules<'a> {
    /// Dropped columns' leftovers (see [`crate::schema::TableSchema::hidden_cells`]).
    pub hidden_columns: &'a [(ColumnId, i64)],
    /// Cassandra's *strict liveness* (`TableMetadata.enforceStrictLiveness`, a materialized
    /// view keyed by a base regular column): a row is live only while its marker is — its
    /// cells alone keep nothing alive (see [`crate::schema::TableSchema::strict_liveness`]).
    pub strict_liveness: bool,
}

/// The live content of a merged partition; `None` when nothing live is selected.
///
/// `counts` receives what was visited: the partition tombstone, the range tombstones (one
/// each), and each merged row's live cells and tombstones — rows up to the one that completed
/// the limit, after shadowing (shadowed data is not visited: the covering tombstone stands for
/// it).
pub fn live_partition(
    key: &DecoratedKey,
    merged: MergedPartition,
    cmd: &ReadCommand,
    rules: LiveRules<'_>,
    counts: &mut CellCounts,
) -> Result<Option<PartitionResult>> {
    let MergedPartition {
        deletion,
        static_row,
        range_tombstones,
        rows: mut merger,
        ..
    } = merged;
    let shadowing = Shadowing {
        deletion,
        range_tombstones: &range_tombstones,
        hidden_columns: rules.hidden_columns,
    };
    counts.tombstones += u64::from(deletion.is_some()) + range_tombstones.len() as u64;
    let static_row = static_row.and_then(|mut s| {
        shadowing.apply_static(&mut s);
        let mut live = s.into_live_counting(cmd.now, counts)?;
        if let Some(cols) = &cmd.columns {
            live.retain_columns(cols);
        }
        (!live.columns.is_empty()).then_some(live)
    });
    let mut rows = Vec::new();
    let limit = cmd.limit.unwrap_or(usize::MAX);
    while rows.len() < limit {
        let Some((ck, mut row)) = merger.next_row()? else {
            break;
        };
        shadowing.apply(&ck.0, &mut row);
        if let Some(mut live) = row.into_live_counting(cmd.now, counts) {
            if rules.strict_liveness && live.marker.is_none() {
                continue;
            }
            if let Some(cols) = &cmd.columns {
                live.retain_columns(cols);
            }
            rows.push((ck, live));
        }
    }
    if static_row.is_none() && rows.is_empty() {
        return Ok(None);
    }
    Ok(Some(PartitionResult {
        key: key.clone(),
        static_row,
        rows,
    }))
}
