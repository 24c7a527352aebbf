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
//!   deletion, plus the new marker — except in a view keyed by a base regular column, where
//!   the entry lives only as long as that column's value (Cassandra's strict liveness): there
//!   it is written whole, every cell expiring no later than the key column, with the write's
//!   cell deletions.
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
            let b = base
                .column(name)
                .ok_or_else(|| invalid("a view restricts a column its base table lacks"))?;
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
            let Some(c) = self.base.column(name) else {
                return computed_value(self.view, name, pk_values);
            };
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
        // An empty view partition key: skipped. Cassandra keeps such a row (at the ring's
        // minimum token, readable by a scan): tests/diff/FINDINGS.md F83, open.
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
            let ts = row
                .marker
                .map_or(cell.timestamp, |m| m.timestamp.max(cell.timestamp));
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

    /// The view's columns of base row `row`, ids translated, timestamps at least `floor`,
    /// and expiring no later than `cap` (`(ttl, expiry)`) when given.
    fn columns(
        &self,
        row: &Row,
        floor: i64,
        cap: Option<(u32, u32)>,
    ) -> Vec<(ColumnId, ColumnData)> {
        let capped = |c: &mut Cell| {
            if let Some((ttl, exp)) = cap {
                if !c.is_tombstone() && (c.ttl == 0 || c.local_deletion_time > exp) {
                    c.ttl = ttl;
                    c.local_deletion_time = exp;
                }
            }
        };
        let mut out: Vec<(ColumnId, ColumnData)> = Vec::new();
        for (base_id, view_id) in &self.regular {
            let Some((_, data)) = row.columns.iter().find(|(id, _)| id == base_id) else {
                continue;
            };
            let mut data = data.clone();
            match &mut data {
                ColumnData::Simple(c) => {
                    c.timestamp = c.timestamp.max(floor);
                    capped(c);
                }
                ColumnData::Complex(cc) => {
                    for (_, c) in &mut cc.cells {
                        c.timestamp = c.timestamp.max(floor);
                        capped(c);
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
    let mut ts = i64::MIN;
    row.for_each_timestamp(|t| ts = ts.max(t));
    ts
}

/// The value of a view key column that is no base column: a secondary index's
/// [`IDX_TOKEN`](crate::schema::index::IDX_TOKEN), the base partition key's token as a bigint.
fn computed_value(view: &TableSchema, name: &str, pk_values: &[Bytes]) -> Option<Bytes> {
    if name != crate::schema::index::IDX_TOKEN || !view.is_index() {
        return None;
    }
    let key = composite_partition_key(&pk_values.iter().map(|b| b.as_ref()).collect::<Vec<_>>());
    let token = crate::model::token::token_of(&key);
    Some(Bytes::copy_from_slice(&token.0.to_be_bytes()))
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
        // An entry keyed by a regular column lives only as long as that column's value
        // (Cassandra's strict liveness): its cells expire with it, so it is always written
        // whole.
        let cap = match (map.key_regular, marker) {
            (Some(_), Some(m)) if m.ttl > 0 => Some((m.ttl, m.local_expiration_time)),
            _ => None,
        };
        let same = old.as_ref() == Some(&(pk.clone(), vck.clone()));
        if same && map.key_regular.is_none() {
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
                row.columns = map.columns(update_row, i64::MIN, None);
            } else {
                row.deletion = covering;
            }
            put(pk, vck, row);
        } else {
            let floor = match (map.key_regular, marker) {
                (Some(_), Some(m)) if !same => m.timestamp,
                _ => i64::MIN,
            };
            let mut row = Row {
                marker,
                deletion: None,
                columns: map.columns(after, floor, cap),
            };
            if same {
                // The write's own deletions of the entry and its cells.
                row.deletion = DeletionTime::max(
                    write.update.deletion,
                    covering_deletion(&write.update.range_tombstones, ck.as_bytes()),
                );
                if let Some(update_row) = write.update.rows.get(ck) {
                    row.deletion = DeletionTime::max(row.deletion, update_row.deletion);
                    let mut deletions = Row {
                        columns: map.columns(update_row, i64::MIN, None),
                        ..Row::default()
                    };
                    deletions.columns.retain(|(_, d)| match d {
                        ColumnData::Simple(c) => c.is_tombstone(),
                        ColumnData::Complex(cc) => cc.deletion.is_some(),
                    });
                    for (_, d) in &mut deletions.columns {
                        if let ColumnData::Complex(cc) = d {
                            cc.cells.clear();
                        }
                    }
                    row.merge(deletions);
                }
            }
            put(pk, vck, row);
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::model::types::CqlType;
    use crate::schema::view::ViewDef;

    fn int(v: i32) -> Bytes {
        Bytes::copy_from_slice(&v.to_be_bytes())
    }

    /// `t (pk int, ck int, v int, w int, PRIMARY KEY (pk, ck))` and its view keyed
    /// `(v, pk, ck)` selecting every column.
    fn schemas() -> (TableSchema, TableSchema) {
        let base = TableSchema::new("ks", "t")
            .with_column("pk", CqlType::Int, ColumnKind::PartitionKey)
            .with_column("ck", CqlType::Int, ColumnKind::Clustering)
            .with_column("v", CqlType::Int, ColumnKind::Regular)
            .with_column("w", CqlType::Int, ColumnKind::Regular);
        let mut view = TableSchema::new("ks", "mv")
            .with_column("v", CqlType::Int, ColumnKind::PartitionKey)
            .with_column("pk", CqlType::Int, ColumnKind::Clustering)
            .with_column("ck", CqlType::Int, ColumnKind::Clustering)
            .with_column("w", CqlType::Int, ColumnKind::Regular);
        ViewDef {
            base: "t".into(),
            include_all_columns: true,
            where_clause: String::new(),
            not_null: vec!["v".into(), "pk".into(), "ck".into()],
        }
        .store(&mut view.options);
        (base, view)
    }

    fn ck(schema: &TableSchema, vals: &[i32]) -> ClusteringKey {
        let b: Vec<Bytes> = vals.iter().map(|v| int(*v)).collect();
        let refs: Vec<&[u8]> = b.iter().map(|b| b.as_ref()).collect();
        schema.clustering_layout().encode_key(&refs).unwrap()
    }

    /// A base row with a marker at `ts` (if `marker`), `v` and `w` at `ts` when given.
    fn row(ts: i64, marker: bool, v: Option<i32>, w: Option<i32>) -> Row {
        let mut columns = Vec::new();
        if let Some(v) = v {
            columns.push((2, ColumnData::Simple(Cell::live(ts, int(v)))));
        }
        if let Some(w) = w {
            columns.push((3, ColumnData::Simple(Cell::live(ts, int(w)))));
        }
        Row {
            marker: marker.then(|| LivenessInfo::live(ts)),
            deletion: None,
            columns,
        }
    }

    /// What a case expects of the view: `(v, deleted?, w)` per view row.
    type Expect = Vec<(i32, bool, Option<i32>)>;

    /// A case: its name, the base row before, the update, the base row after, the view rows.
    type Case = (&'static str, Option<Row>, Row, Option<Row>, Expect);

    fn run(before: Option<Row>, update: Row, after: Option<Row>) -> Expect {
        let (base, view) = schemas();
        let key = DecoratedKey::new(int(1));
        let k = ck(&base, &[7]);
        let mut up = Partition::default();
        up.rows.insert(k.clone(), update);
        let b: LiveRows = before.into_iter().map(|r| (k.clone(), r)).collect();
        let a: LiveRows = after.into_iter().map(|r| (k.clone(), r)).collect();
        let write = BaseWrite {
            key: &key,
            update: &up,
            before: &b,
            after: &a,
            timestamp: 20,
            now: 1000,
        };
        let mut out: Expect = Vec::new();
        for m in view_mutations(&base, &view, &write).unwrap() {
            let v = i32::from_be_bytes(m.key.key.as_ref().try_into().unwrap());
            for (vck, r) in &m.update.rows {
                assert_eq!(*vck, ck(&view, &[1, 7]), "view clustering is (pk, ck)");
                let w = r
                    .cell(3)
                    .filter(|c| !c.is_tombstone())
                    .map(|c| i32::from_be_bytes(c.value.as_ref().try_into().unwrap()));
                out.push((v, r.deletion.is_some(), w));
            }
        }
        out.sort();
        out
    }

    #[test]
    fn view_updates_follow_viewupdategenerator() {
        let cases: Vec<Case> = vec![
            (
                "insert creates the entry",
                None,
                row(20, true, Some(5), Some(9)),
                Some(row(20, true, Some(5), Some(9))),
                vec![(5, false, Some(9))],
            ),
            (
                "insert without the view key column: no entry",
                None,
                row(20, true, None, Some(9)),
                Some(row(20, true, None, Some(9))),
                vec![],
            ),
            (
                "update of another column keeps the key",
                Some(row(10, true, Some(5), Some(9))),
                row(20, false, None, Some(8)),
                Some({
                    let mut r = row(10, true, Some(5), None);
                    r.columns
                        .push((3, ColumnData::Simple(Cell::live(20, int(8)))));
                    r
                }),
                vec![(5, false, Some(8))],
            ),
            (
                "key change: old entry deleted, new one whole",
                Some(row(10, true, Some(5), Some(9))),
                row(20, false, Some(6), None),
                Some({
                    let mut r = row(10, true, None, Some(9));
                    r.columns
                        .insert(0, (2, ColumnData::Simple(Cell::live(20, int(6)))));
                    r
                }),
                vec![(5, true, None), (6, false, Some(9))],
            ),
            (
                "view key set to null: entry deleted",
                Some(row(10, true, Some(5), Some(9))),
                {
                    let mut r = Row::default();
                    r.columns
                        .push((2, ColumnData::Simple(Cell::tombstone(20, 1000))));
                    r
                },
                Some(row(10, true, None, Some(9))),
                vec![(5, true, None)],
            ),
            (
                "row deleted: entry deleted",
                Some(row(10, true, Some(5), Some(9))),
                Row {
                    deletion: Some(DeletionTime {
                        marked_at: 20,
                        local_deletion_time: 1000,
                    }),
                    ..Row::default()
                },
                None,
                vec![(5, true, None)],
            ),
        ];
        for (name, before, update, after, expect) in cases {
            assert_eq!(run(before, update, after), expect, "{name}");
        }
    }

    #[test]
    fn old_entry_deletion_covers_its_newest_cell() {
        let (base, view) = schemas();
        let key = DecoratedKey::new(int(1));
        let k = ck(&base, &[7]);
        // w was written at 50, after the key change's own timestamp (20).
        let mut before_row = row(10, true, Some(5), None);
        before_row
            .columns
            .push((3, ColumnData::Simple(Cell::live(50, int(9)))));
        let mut up = Partition::default();
        up.rows.insert(k.clone(), row(20, false, Some(6), None));
        let before: LiveRows = [(k.clone(), before_row)].into();
        let after: LiveRows = [(k.clone(), row(20, true, Some(6), Some(9)))].into();
        let write = BaseWrite {
            key: &key,
            update: &up,
            before: &before,
            after: &after,
            timestamp: 20,
            now: 1000,
        };
        let muts = view_mutations(&base, &view, &write).unwrap();
        let old = muts.iter().find(|m| m.key.key == int(5)).unwrap();
        let d = old.update.rows.values().next().unwrap().deletion.unwrap();
        assert_eq!(d.marked_at, 50);
    }
}
