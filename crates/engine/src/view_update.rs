//! View updates: what one write to a base table does to each of its materialized views —
//! Cassandra's `ViewUpdateGenerator`, as a pure function of the base rows before and after
//! the write (read under the partition's lock by the storage proxy) and the write itself.
//!
//! For each base row the write touches (its rows; every row it deletes by partition or range):
//! - the row's *view entry* exists when the row is live and every `IS NOT NULL` column of the
//!   view (every view key column at least) is set; its key is built from the row's values;
//! - an entry that goes away, or whose key changes, gets a row deletion at a timestamp that
//!   covers everything the old entry holds (the write's, or the newest of the old row's data
//!   if that is newer), so no stale cell survives;
//! - a new entry (no entry before, or a different key) is the whole row: every selected live
//!   cell with its TTL, and a row marker with the base row's liveness (the view key's regular
//!   column's own timestamp and TTL when there is one, so the entry expires with it);
//! - an entry keeping its key gets the write itself translated: its cells and cell deletions,
//!   its row deletion, and the partition or range deletions covering the row as a row
//!   deletion, plus the new marker.
//!
//! Known departure from Cassandra (which uses *shadowable* deletions, not built here): when
//! a view key has a base regular column, the cells of a new entry are written at no less
//! than the entry's timestamp, so that an entry going back to an earlier key is not hidden
//! by that key's earlier deletion; `WRITETIME` in such a view can show the entry's time.

use crate::error::{Error, Result};
use crate::model::cell::{Cell, DeletionTime, LivenessInfo, NowSecs};
use crate::model::key::{ClusteringKey, DecoratedKey};
use crate::model::partition::{covering_deletion, Partition};
use crate::model::row::{ColumnData, ColumnId, Row};
use crate::model::token::{composite_partition_key, split_composite_partition_key};
use crate::model::Mutation;
use crate::schema::{ColumnKind, TableSchema};
use bytes::Bytes;
use std::collections::BTreeMap;

/// The live rows of one base partition, by clustering key.
pub type LiveRows = BTreeMap<ClusteringKey, Row>;

/// One write to a base partition: the update, and the partition's live rows before and after
/// it (only the rows the update touches need be there).
pub struct BaseWrite<'a> {
    /// The partition.
    pub key: &'a DecoratedKey,
    /// The update.
    pub update: &'a Partition,
    /// Live rows before the update.
    pub before: &'a LiveRows,
    /// Live rows after it.
    pub after: &'a LiveRows,
    /// The update's newest timestamp.
    pub timestamp: i64,
    /// Now (for deletions' local times).
    pub now: NowSecs,
}

/// Where a view's columns come from in its base.
struct Mapping<'a> {
    base: &'a TableSchema,
    view: &'a TableSchema,
    /// `(base column id, view column id)` of the view's non-key columns.
    regular: Vec<(ColumnId, ColumnId)>,
    /// Base columns that must be set for a row to have an entry.
    not_null: Vec<ColumnId>,
    /// The base regular column in the view's key, if any.
    key_regular: Option<ColumnId>,
}

impl<'a> Mapping<'a> {
    fn new(base: &'a TableSchema, view: &'a TableSchema) -> Result<Mapping<'a>> {
        let def = view
            .view()
            .ok_or_else(|| invalid("materialized view update on a table that is not a view"))?;
        let base_id = |name: &str| {
            base.column(name)
                .map(|c| c.id)
                .ok_or_else(|| invalid("a view column is missing from its base table"))
        };
        let mut regular = Vec::new();
        for c in &view.columns {
            if matches!(c.kind, ColumnKind::Regular | ColumnKind::Static) {
                regular.push((base_id(&c.name)?, c.id));
            }
        }
        let mut not_null = Vec::new();
        for name in &def.not_null {
            let b = base.column(name).ok_or_else(|| invalid("a view restricts a column its base table lacks"))?;
            if b.kind == ColumnKind::Regular {
                not_null.push(b.id);
            }
        }
        Ok(Mapping {
            base,
            view,
            regular,
            not_null,
            key_regular: view.view_key_regular(base).map(|c| c.id),
        })
    }

    /// The view key of base row `row` at `ck`, when the row has an entry.
    fn entry_key(
        &self,
        pk_values: &[Bytes],
        ck: &ClusteringKey,
        row: Option<&Row>,
    ) -> Result<Option<(DecoratedKey, ClusteringKey)>> {
        let Some(row) = row else { return Ok(None) };
        if self
            .not_null
            .iter()
            .any(|id| simple_value(row, *id).is_none())
        {
            return Ok(None);
        }
        let ck_values = self.base.clustering_layout().decode(ck.as_bytes())?;
        let mut pk_i = 0;
        let mut ck_i = 0;
        let mut value_of = |name: &str| -> Option<Bytes> {
            let c = self.base.column(name)?;
            match c.kind {
                ColumnKind::PartitionKey => {
                    let i = self
                        .base
                        .columns_of(ColumnKind::PartitionKey)
                        .position(|p| p.id == c.id)?;
                    pk_i += 1;
                    pk_values.get(i).cloned()
                }
                ColumnKind::Clustering => {
                    let i = self
                        .base
                        .columns_of(ColumnKind::Clustering)
                        .position(|p| p.id == c.id)?;
                    ck_i += 1;
                    ck_values.get(i).cloned()
                }
                _ => simple_value(row, c.id).cloned(),
            }
        };
        let mut pk = Vec::new();
        for c in self.view.columns_of(ColumnKind::PartitionKey) {
            match value_of(&c.name) {
                Some(v) => pk.push(v),
                None => return Ok(None),
            }
        }
        let mut cks = Vec::new();
        for c in self.view.columns_of(ColumnKind::Clustering) {
            match value_of(&c.name) {
                Some(v) => cks.push(v),
                None => return Ok(None),
            }
        }
        let key = match pk.as_slice() {
            [one] => one.clone(),
            many => composite_partition_key(&many.iter().map(|b| b.as_ref()).collect::<Vec<_>>()),
        };
        // A view partition key cannot be empty (Cassandra skips such rows too).
        if key.is_empty() {
            return Ok(None);
        }
        let refs: Vec<&[u8]> = cks.iter().map(|b| b.as_ref()).collect();
        let ck = self.view.clustering_layout().encode_key(&refs)?;
        Ok(Some((DecoratedKey::new(key), ck)))
    }

    /// The view row marker for base row `row`.
    fn liveness(&self, row: &Row) -> Option<LivenessInfo> {
        if let Some(cell) = self.key_regular.and_then(|id| simple_cell(row, id)) {
            let ts = row.marker.map_or(cell.timestamp, |m| m.timestamp.max(cell.timestamp));
            return Some(if cell.ttl > 0 {
                LivenessInfo {
                    timestamp: ts,
                    ttl: cell.ttl,
                    local_expiration_time: cell.local_deletion_time,
                }
            } else {
                LivenessInfo::live(ts)
            });
        }
        if row.marker.is_some() {
            return row.marker;
        }
        // A row made by UPDATE (no marker) lives by its cells: the newest one stands for it,
        // so a view selecting none of them still shows the row.
        let mut newest: Option<&Cell> = None;
        for (_, data) in &row.columns {
            let cells: Vec<&Cell> = match data {
                ColumnData::Simple(c) => vec![c],
                ColumnData::Complex(cc) => cc.cells.iter().map(|(_, c)| c).collect(),
            };
            for c in cells {
                if newest.is_none_or(|n| c.timestamp > n.timestamp) {
                    newest = Some(c);
                }
            }
        }
        newest.map(|c| LivenessInfo {
            timestamp: c.timestamp,
            ttl: c.ttl,
            local_expiration_time: if c.ttl > 0 {
                c.local_deletion_time
            } else {
                crate::model::cell::NO_DELETION_TIME
            },
        })
    }

    /// The view's columns of base row `row`, ids translated, timestamps at least `floor`.
    fn columns(&self, row: &Row, floor: i64) -> Vec<(ColumnId, ColumnData)> {
        let mut out: Vec<(ColumnId, ColumnData)> = Vec::new();
        for (base_id, view_id) in &self.regular {
            let Some((_, data)) = row.columns.iter().find(|(id, _)| id == base_id) else {
                continue;
            };
            let mut data = data.clone();
            if floor > i64::MIN {
                match &mut data {
                    ColumnData::Simple(c) => c.timestamp = c.timestamp.max(floor),
                    ColumnData::Complex(cc) => {
                        for (_, c) in &mut cc.cells {
                            c.timestamp = c.timestamp.max(floor);
                        }
                    }
                }
            }
            out.push((*view_id, data));
        }
        out.sort_by_key(|(id, _)| *id);
        out
    }
}

/// The newest timestamp a row holds.
fn newest_timestamp(row: &Row) -> i64 {
    let mut ts = row.marker.map_or(i64::MIN, |m| m.timestamp);
    row.for_each_timestamp(|t| ts = ts.max(t));
    ts
}

fn simple_cell(row: &Row, id: ColumnId) -> Option<&Cell> {
    match row.columns.iter().find(|(c, _)| *c == id) {
        Some((_, ColumnData::Simple(c))) if !c.is_tombstone() => Some(c),
        _ => None,
    }
}

fn simple_value(row: &Row, id: ColumnId) -> Option<&Bytes> {
    simple_cell(row, id).map(|c| &c.value)
}

fn invalid(what: &'static str) -> Error {
    Error::InvalidMutation(what)
}

/// The mutations of `view` (a view of `base`) that `write` makes, at most two per base row
/// (the old entry's deletion, the new or changed entry).
pub fn view_mutations(
    base: &TableSchema,
    view: &TableSchema,
    write: &BaseWrite<'_>,
) -> Result<Vec<Mutation>> {
    let map = Mapping::new(base, view)?;
    let pk_count = base.columns_of(ColumnKind::PartitionKey).count();
    let pk_values: Vec<Bytes> = if pk_count == 1 {
        vec![write.key.key.clone()]
    } else {
        split_composite_partition_key(&write.key.key, pk_count)?
    };
    // The rows the write touches: its own, and every row its deletions reach.
    let broad = write.update.deletion.is_some() || !write.update.range_tombstones.is_empty();
    let mut touched: Vec<&ClusteringKey> = write.update.rows.keys().collect();
    if broad {
        touched.extend(write.before.keys());
        touched.sort();
        touched.dedup();
    }
    let mut out: Vec<Mutation> = Vec::new();
    let mut put = |key: DecoratedKey, ck: ClusteringKey, row: Row| {
        let m = match out.iter_mut().find(|m| m.key == key) {
            Some(m) => m,
            None => {
                out.push(Mutation {
                    table: view.id,
                    key,
                    update: Partition::default(),
                });
                let last = out.len() - 1;
                &mut out[last]
            }
        };
        match m.update.rows.get_mut(&ck) {
            Some(r) => r.merge(row),
            None => {
                m.update.rows.insert(ck, row);
            }
        }
    };
    for ck in touched {
        let before = write.before.get(ck);
        let after = write.after.get(ck);
        let old = map.entry_key(&pk_values, ck, before)?;
        let new = map.entry_key(&pk_values, ck, after)?;
        if let (Some((old_pk, old_ck)), Some(before)) = (&old, before) {
            if new.as_ref() != Some(&(old_pk.clone(), old_ck.clone())) {
                let marked_at = write.timestamp.max(newest_timestamp(before));
                put(
                    old_pk.clone(),
                    old_ck.clone(),
                    Row {
                        deletion: Some(DeletionTime {
                            marked_at,
                            local_deletion_time: write.now,
                        }),
                        ..Row::default()
                    },
                );
            }
        }
        let (Some((pk, vck)), Some(after)) = (new, after) else {
            continue;
        };
        let marker = map.liveness(after);
        if old.as_ref() == Some(&(pk.clone(), vck.clone())) {
            // Same entry: the write itself, translated.
            let mut row = Row {
                marker,
                ..Row::default()
            };
            let covering = DeletionTime::max(
                write.update.deletion,
                covering_deletion(&write.update.range_tombstones, ck.as_bytes()),
            );
            if let Some(update_row) = write.update.rows.get(ck) {
                row.deletion = DeletionTime::max(update_row.deletion, covering);
                row.columns = map.columns(update_row, i64::MIN);
            } else {
                row.deletion = covering;
            }
            put(pk, vck, row);
        } else {
            let floor = match (map.key_regular, marker) {
                (Some(_), Some(m)) => m.timestamp,
                _ => i64::MIN,
            };
            put(
                pk,
                vck,
                Row {
                    marker,
                    deletion: None,
                    columns: map.columns(after, floor),
                },
            );
        }
    }
    Ok(out)
}
