//! View updates: what one write to a base table does to each of its materialized views —
//! Cassandra's `ViewUpdateGenerator` (and `TableViews.generateViewUpdates`), as a pure
//! function of the base rows before and after the write (read under the partition's lock by
//! the storage proxy) and the write itself.
//!
//! A view row *mirrors* its base row, as in Cassandra: its marker, row deletion and cells
//! (tombstones and expired cells included) are the base row's, so a view row dies and comes
//! back exactly when its base row does, whatever order the writes arrive in. The rows given
//! are therefore the base rows as *data* ([`base_rows`]): what tombstones shadow removed, the
//! covering partition or range deletion folded into the row deletion, tombstones kept.
//!
//! For each base row the write touches (its rows; every row it deletes by partition or
//! range), the action follows Cassandra's `updateAction`:
//! - a view keyed by the base key only: the entry exists while the base row has live data
//!   (new entry, updated entry, old entry deleted, or nothing);
//! - a view keyed by a base regular column `K` (*strict liveness*, see
//!   [`crate::schema::TableSchema::strict_liveness`]): the entry exists while `K`'s cell is
//!   live, its marker is that cell's liveness, and a changed value of `K` switches entries.
//!
//! A new entry is the whole base row; an updated entry gets the marker, the row deletion and
//! the cells that changed; an old entry gets the row deletion and the changed cells, and —
//! when what made it live (its marker, `K`'s cell, an unselected column) is newer than the
//! row deletion — an *expired* marker at that time ([`LivenessInfo::expired`]), which
//! retires the entry without shadowing cells: an entry that comes back later (`K` set back
//! to its old value, a marker written with an older timestamp) is live again with every cell
//! it should show. Cassandra 3.0 used *shadowable* row deletions for this; 3.11 and later
//! (5.0 included) write the expired marker, and so does Cairn.
//!
//! An empty value as a view's partition key (an empty text) is kept, as Cassandra keeps it:
//! the empty key's token is the ring's minimum.

use crate::error::{Error, Result};
use crate::model::cell::{Cell, DeletionTime, LivenessInfo, NowSecs};
use crate::model::key::{ClusteringKey, DecoratedKey};
use crate::model::partition::{covering_deletion, Partition};
use crate::model::row::{ColumnData, ColumnId, Row};
use crate::model::token::{composite_partition_key, split_composite_partition_key};
use crate::model::Mutation;
use crate::schema::view::EntryRows;
use crate::schema::{ColumnKind, TableSchema};
use bytes::Bytes;
use std::collections::BTreeMap;

/// Rows of one base partition by clustering key, as data ([`base_rows`]).
pub type BaseRows = BTreeMap<ClusteringKey, Row>;

/// The name [`BaseRows`] had when the rows were live rows only.
pub type LiveRows = BaseRows;

/// One write to a base partition: the update, and the partition's rows before and after it
/// as data ([`base_rows`]; only the rows the update touches need be there).
pub struct BaseWrite<'a> {
    /// The partition.
    pub key: &'a DecoratedKey,
    /// The update.
    pub update: &'a Partition,
    /// Rows before the update.
    pub before: &'a BaseRows,
    /// Rows after it.
    pub after: &'a BaseRows,
    /// The update's newest timestamp.
    pub timestamp: i64,
    /// Now (for liveness, deletions' local times and expired markers).
    pub now: NowSecs,
}

/// The rows of `data` (one base partition as data, e.g. `Table::read_data`'s answer, maybe
/// merged with an update) as view maintenance reads them: each row with what the partition
/// deletion, the range tombstones, its own deletion, complex deletions and `hidden_columns`
/// (dropped columns, [`TableSchema::hidden_cells`]) shadow removed, and the covering deletion
/// kept as its row deletion; rows left with nothing dropped. The static row, when `data`
/// has one, is the row at [`ClusteringKey::empty`] (no clustering row of a table with static
/// columns has that key): only an index on a static column reads it.
pub fn base_rows(data: Partition, hidden_columns: &[(ColumnId, i64)]) -> BaseRows {
    let mut out = BaseRows::new();
    if let Some(mut row) = data.static_row {
        // Only the partition deletion covers the static row.
        let deletion = DeletionTime::max(row.deletion, data.deletion);
        if let Some(d) = deletion {
            row.apply_deletion(d);
        }
        row.deletion = deletion;
        row.remove_columns(hidden_columns);
        drop_shadowed_elements(&mut row);
        if !row.is_empty() {
            out.insert(ClusteringKey::empty(), row);
        }
    }
    for (ck, mut row) in data.rows {
        let covering = DeletionTime::max(
            data.deletion,
            covering_deletion(&data.range_tombstones, ck.as_bytes()),
        );
        let own = row.deletion;
        let deletion = DeletionTime::max(own, covering);
        if let Some(d) = deletion {
            row.apply_deletion(d);
        }
        row.deletion = deletion;
        row.remove_columns(hidden_columns);
        drop_shadowed_elements(&mut row);
        if !row.is_empty() {
            out.insert(ck, row);
        }
    }
    out
}

/// Removes the collection cells their column's deletion shadows.
fn drop_shadowed_elements(row: &mut Row) {
    for (_, c) in &mut row.columns {
        if let ColumnData::Complex(cc) = c {
            if let Some(d) = cc.deletion {
                cc.cells.retain(|(_, c)| !d.deletes(c.timestamp));
            }
        }
    }
}

/// What a write does to a base row's view entry (Cassandra's `UpdateAction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    None,
    New,
    Delete,
    Update,
    Switch,
}

/// Where a view's columns come from in its base.
struct Mapping<'a> {
    base: &'a TableSchema,
    view: &'a TableSchema,
    /// `(base column id, view column id)` of the view's non-key columns.
    regular: Vec<(ColumnId, ColumnId)>,
    /// Whether the view selects every base column.
    include_all: bool,
    /// The base regular column in the view's key, if any (a static column for an index on
    /// one).
    key_regular: Option<ColumnId>,
    /// Which base rows have entries: the static row's entry is keyed by the partition only.
    entry_rows: EntryRows,
    now: NowSecs,
}

impl<'a> Mapping<'a> {
    fn new(base: &'a TableSchema, view: &'a TableSchema, now: NowSecs) -> Result<Mapping<'a>> {
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
        // `IS NOT NULL` on a column outside the view's key filters nothing (Cassandra's
        // restriction makes no row filter); the key columns are checked by the action.
        let key_regular = view.view_key_regular(base);
        Ok(Mapping {
            base,
            view,
            regular,
            include_all: def.include_all_columns,
            key_regular: key_regular.map(|c| c.id),
            entry_rows: view.entry_rows(base),
            now,
        })
    }

    fn selected(&self, base_id: ColumnId) -> Option<ColumnId> {
        self.regular
            .iter()
            .find(|(b, _)| *b == base_id)
            .map(|(_, v)| *v)
    }

    fn cell_live(&self, c: Option<&Cell>) -> bool {
        c.is_some_and(|c| c.is_live(self.now))
    }

    /// Cassandra's `Row.hasLiveData` for a base row (never strict).
    fn has_live_data(&self, row: &Row) -> bool {
        if row.marker.is_some_and(|m| m.is_live(self.now)) {
            return true;
        }
        row.columns.iter().any(|(_, d)| match d {
            ColumnData::Simple(c) => c.is_live(self.now),
            ColumnData::Complex(cc) => cc.cells.iter().any(|(_, c)| c.is_live(self.now)),
        })
    }

    /// Cassandra's `updateAction`.
    fn action(&self, existing: &Row, merged: &Row) -> Action {
        let Some(k) = self.key_regular else {
            return match (self.has_live_data(existing), self.has_live_data(merged)) {
                (true, true) => Action::Update,
                (true, false) => Action::Delete,
                (false, true) => Action::New,
                (false, false) => Action::None,
            };
        };
        let before = simple_cell(existing, k);
        let after = simple_cell(merged, k);
        if before == after {
            return if self.cell_live(before) {
                Action::Update
            } else {
                Action::None
            };
        }
        if !self.cell_live(before) {
            return if self.cell_live(after) {
                Action::New
            } else {
                Action::None
            };
        }
        match (before, after) {
            (Some(b), Some(a)) if self.cell_live(Some(a)) => {
                if b.value == a.value {
                    Action::Update
                } else {
                    Action::Switch
                }
            }
            _ => Action::Delete,
        }
    }

    /// The view key of base row `row` at `ck` (which has an entry: its key columns set).
    fn entry_key(
        &self,
        pk_values: &[Bytes],
        ck: &ClusteringKey,
        row: &Row,
    ) -> Result<Option<(DecoratedKey, ClusteringKey)>> {
        self.entry_key_of(pk_values, ck, row, None)
    }

    /// [`Self::entry_key`], with the view's partition key `element` when given (a collection
    /// index's entry: the element, not a base column's value).
    fn entry_key_of(
        &self,
        pk_values: &[Bytes],
        ck: &ClusteringKey,
        row: &Row,
        element: Option<&[Bytes]>,
    ) -> Result<Option<(DecoratedKey, ClusteringKey)>> {
        let ck_values = self.base.clustering_layout().decode(ck.as_bytes())?;
        let value_of = |name: &str| -> Option<Bytes> {
            let Some(c) = self.base.column(name) else {
                return computed_value(self.view, name, pk_values);
            };
            match c.kind {
                ColumnKind::PartitionKey => {
                    let i = self
                        .base
                        .columns_of(ColumnKind::PartitionKey)
                        .position(|p| p.id == c.id)?;
                    pk_values.get(i).cloned()
                }
                ColumnKind::Clustering => {
                    let i = self
                        .base
                        .columns_of(ColumnKind::Clustering)
                        .position(|p| p.id == c.id)?;
                    ck_values.get(i).cloned()
                }
                _ => simple_cell(row, c.id)
                    .filter(|c| !c.is_tombstone())
                    .map(|c| c.value.clone()),
            }
        };
        let mut pk = Vec::new();
        match element {
            Some(e) => pk.extend_from_slice(e),
            None => {
                for c in self.view.columns_of(ColumnKind::PartitionKey) {
                    match value_of(&c.name) {
                        Some(v) => pk.push(v),
                        None => return Ok(None),
                    }
                }
            }
        }
        // The static row's entry stops before the base clustering columns (a prefix of its
        // partition's row entries, so it sorts just before them).
        let static_row = ck.as_bytes().is_empty() && self.entry_rows != EntryRows::Clustering;
        let mut cks = Vec::new();
        for c in self.view.columns_of(ColumnKind::Clustering) {
            let base_clustering = self
                .base
                .column(&c.name)
                .is_some_and(|b| b.kind == ColumnKind::Clustering);
            if static_row && base_clustering {
                break;
            }
            match value_of(&c.name) {
                Some(v) => cks.push(v),
                None => return Ok(None),
            }
        }
        let key = match pk.as_slice() {
            [one] => one.clone(),
            many => composite_partition_key(&many.iter().map(|b| b.as_ref()).collect::<Vec<_>>()),
        };
        let refs: Vec<&[u8]> = cks.iter().map(|b| b.as_ref()).collect();
        let layout = self.view.clustering_layout();
        let ck = if static_row {
            ClusteringKey(Bytes::from(layout.encode_prefix(&refs)?))
        } else {
            layout.encode_key(&refs)?
        };
        Ok(Some((DecoratedKey::new(key), ck)))
    }

    /// Cassandra's `computeLivenessInfoForEntry`: the marker of the entry of base row `row`.
    fn liveness(&self, row: &Row) -> Option<LivenessInfo> {
        if let Some(k) = self.key_regular {
            return simple_cell(row, k).map(|c| LivenessInfo {
                timestamp: c.timestamp,
                ttl: c.ttl,
                local_expiration_time: if c.ttl > 0 {
                    c.local_deletion_time
                } else {
                    crate::model::cell::NO_DELETION_TIME
                },
            });
        }
        if self.include_all {
            return row.marker;
        }
        // Some base columns are not selected: a live one keeps the entry alive as the base
        // row's marker would (CASSANDRA-11500).
        let base = row.marker;
        let mut timestamp = base.map_or(i64::MIN, |m| m.timestamp);
        let mut non_expiring = false;
        let mut latest_expiring: Option<&Cell> = None;
        for (id, data) in &row.columns {
            if self.selected(*id).is_some() {
                continue;
            }
            let cells: Vec<&Cell> = match data {
                ColumnData::Simple(c) => vec![c],
                ColumnData::Complex(cc) => cc.cells.iter().map(|(_, c)| c).collect(),
            };
            for c in cells {
                if !c.is_live(self.now) {
                    continue;
                }
                timestamp = timestamp.max(c.timestamp);
                if !c.is_expiring() {
                    non_expiring = true;
                } else if latest_expiring
                    .is_none_or(|l| c.local_deletion_time > l.local_deletion_time)
                {
                    latest_expiring = Some(c);
                }
            }
        }
        let base_live = base.is_some_and(|m| m.is_live(self.now));
        if (base_live && base.is_some_and(|m| !m.is_expiring())) || non_expiring {
            return Some(LivenessInfo::live(timestamp));
        }
        let Some(latest) = latest_expiring else {
            return base;
        };
        match base {
            Some(m) if base_live && latest.local_deletion_time <= m.local_expiration_time => {
                Some(m)
            }
            _ => Some(LivenessInfo {
                timestamp,
                ttl: latest.ttl,
                local_expiration_time: latest.local_deletion_time,
            }),
        }
    }

    /// Cassandra's `computeTimestampForEntryDeletion`.
    fn entry_deletion_timestamp(&self, existing: &Row, merged: &Row) -> i64 {
        let deletion = merged.deletion.map_or(i64::MIN, |d| d.marked_at);
        if let Some(k) = self.key_regular {
            return match simple_cell(existing, k) {
                Some(c) if !merged.deletion.is_some_and(|d| d.deletes(c.timestamp)) => c.timestamp,
                _ => deletion,
            };
        }
        let mut ts = deletion.max(existing.marker.map_or(i64::MIN, |m| m.timestamp));
        if self.include_all {
            return ts;
        }
        for (id, data) in &existing.columns {
            if self.selected(*id).is_some() {
                continue;
            }
            match data {
                ColumnData::Simple(c) => ts = ts.max(c.timestamp),
                ColumnData::Complex(cc) => {
                    for (_, c) in &cc.cells {
                        ts = ts.max(c.timestamp);
                    }
                }
            }
        }
        ts
    }

    /// Every selected column of `row`, ids translated (Cassandra's `addColumnData` over the
    /// row): tombstones and complex deletions included.
    fn all_columns(&self, row: &Row) -> Vec<(ColumnId, ColumnData)> {
        let mut out: Vec<(ColumnId, ColumnData)> = row
            .columns
            .iter()
            .filter_map(|(id, d)| self.selected(*id).map(|v| (v, d.clone())))
            .collect();
        out.sort_by_key(|(id, _)| *id);
        out
    }

    /// The selected columns of `merged` that differ from `existing` (Cassandra's
    /// `addDifferentCells`), ids translated.
    fn different_columns(&self, existing: &Row, merged: &Row) -> Vec<(ColumnId, ColumnData)> {
        let mut out: Vec<(ColumnId, ColumnData)> = Vec::new();
        for (id, data) in &merged.columns {
            let Some(view_id) = self.selected(*id) else {
                continue;
            };
            let old = existing
                .columns
                .iter()
                .find(|(c, _)| c == id)
                .map(|(_, d)| d);
            match (data, old) {
                (_, None) => out.push((view_id, data.clone())),
                (d, Some(o)) if d == o => {}
                (ColumnData::Complex(m), Some(ColumnData::Complex(o))) => {
                    let deletion = match (m.deletion, o.deletion) {
                        (Some(md), Some(od)) if md.supersedes(&od) => Some(md),
                        (Some(md), None) => Some(md),
                        _ => None,
                    };
                    let cells: Vec<(Bytes, Cell)> = m
                        .cells
                        .iter()
                        .filter(|(p, c)| !o.cells.iter().any(|(op, oc)| op == p && oc == c))
                        .cloned()
                        .collect();
                    if deletion.is_some() || !cells.is_empty() {
                        out.push((
                            view_id,
                            ColumnData::Complex(crate::model::ComplexColumn { deletion, cells }),
                        ));
                    }
                }
                (d, Some(_)) => out.push((view_id, d.clone())),
            }
        }
        out.sort_by_key(|(id, _)| *id);
        out
    }
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

/// The entries a collection index of `kind` on column `column` has for base row `row`: the
/// view partition key of each (the element's key, value, or both), with the liveness of its
/// cell (an element's own timestamp and TTL). A value held by several cells (a list's
/// repeated element) lives while one of them does: the newest timestamp, and no TTL when one
/// cell has none, else the latest expiry. Cells dead at `now` give no entry.
pub fn element_keys(
    kind: crate::schema::index::IndexKind,
    column: &crate::schema::ColumnDef,
    row: &Row,
    now: NowSecs,
) -> BTreeMap<Vec<Bytes>, LivenessInfo> {
    use crate::schema::index::IndexKind;
    let mut out: BTreeMap<Vec<Bytes>, LivenessInfo> = BTreeMap::new();
    let Some((_, ColumnData::Complex(cc))) = row.columns.iter().find(|(c, _)| *c == column.id)
    else {
        return out;
    };
    // A set's elements are its cells' paths (their values are empty); a list's paths are
    // its cells' timeuuids, a map's its keys.
    let is_set = matches!(column.ty, crate::model::types::CqlType::Set(_));
    for (path, cell) in &cc.cells {
        if !cell.is_live(now) {
            continue;
        }
        let key = match kind {
            IndexKind::Keys => vec![path.clone()],
            IndexKind::Values if is_set => vec![path.clone()],
            IndexKind::Values => vec![cell.value.clone()],
            IndexKind::Entries => vec![path.clone(), cell.value.clone()],
            IndexKind::Simple | IndexKind::Full => continue,
        };
        let liveness = LivenessInfo {
            timestamp: cell.timestamp,
            ttl: cell.ttl,
            local_expiration_time: if cell.ttl > 0 {
                cell.local_deletion_time
            } else {
                crate::model::cell::NO_DELETION_TIME
            },
        };
        out.entry(key)
            .and_modify(|l| {
                let timestamp = l.timestamp.max(liveness.timestamp);
                *l = if !l.is_expiring() || !liveness.is_expiring() {
                    LivenessInfo::live(timestamp)
                } else if liveness.local_expiration_time > l.local_expiration_time {
                    LivenessInfo {
                        timestamp,
                        ..liveness
                    }
                } else {
                    LivenessInfo { timestamp, ..*l }
                };
            })
            .or_insert(liveness);
    }
    out
}

fn simple_cell(row: &Row, id: ColumnId) -> Option<&Cell> {
    match row.columns.iter().find(|(c, _)| *c == id) {
        Some((_, ColumnData::Simple(c))) => Some(c),
        _ => None,
    }
}

fn invalid(what: &'static str) -> Error {
    Error::InvalidMutation(what)
}

/// The mutations of `view` (a view of `base`) that `write` makes, at most two rows per base
/// row (the old entry's retirement, the new or changed entry).
pub fn view_mutations(
    base: &TableSchema,
    view: &TableSchema,
    write: &BaseWrite<'_>,
) -> Result<Vec<Mutation>> {
    let map = Mapping::new(base, view, write.now)?;
    let pk_count = base.columns_of(ColumnKind::PartitionKey).count();
    let pk_values: Vec<Bytes> = if pk_count == 1 {
        vec![write.key.key.clone()]
    } else {
        split_composite_partition_key(&write.key.key, pk_count)?
    };
    // The rows the write touches: its own, and every row its deletions reach; the static row
    // (the empty key, see [`base_rows`]) only for an index that has entries for it.
    let static_key = ClusteringKey::empty();
    let has_clustering = base.columns_of(ColumnKind::Clustering).next().is_some();
    let broad = write.update.deletion.is_some() || !write.update.range_tombstones.is_empty();
    let mut touched: Vec<&ClusteringKey> = write.update.rows.keys().collect();
    if write.update.static_row.is_some() {
        touched.push(&static_key);
    }
    if broad {
        touched.extend(write.before.keys());
    }
    touched.sort();
    touched.dedup();
    touched.retain(|ck| {
        !has_clustering
            || match map.entry_rows {
                EntryRows::Clustering => !ck.as_bytes().is_empty(),
                EntryRows::Static => ck.as_bytes().is_empty(),
                EntryRows::Both => true,
            }
    });
    // Rows whose key the view's WHERE clause excludes are never in it.
    let filter = view.view_filter();
    if !filter.is_empty() {
        let layout = base.clustering_layout();
        touched.retain(|ck| {
            layout
                .decode(&ck.0)
                .is_ok_and(|values| base.base_key_matches(&filter, &pk_values, &values))
        });
    }
    let elements = view
        .index()
        .map(|d| d.kind())
        .filter(|k| k.per_element())
        .map(|kind| -> Result<_> {
            let column = view
                .columns_of(ColumnKind::PartitionKey)
                .next()
                .and_then(|c| base.column(&c.name))
                .ok_or_else(|| invalid("a collection index's column is missing from its base"))?;
            Ok((kind, column))
        })
        .transpose()?;
    let mut out: Vec<Mutation> = Vec::new();
    let mut put = |key: DecoratedKey, ck: ClusteringKey, row: Row| {
        if row.is_empty() {
            return;
        }
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
    let empty = Row::default();
    for ck in touched {
        let existing = write.before.get(ck).unwrap_or(&empty);
        let Some(merged) = write.after.get(ck) else {
            continue;
        };
        if let Some((kind, column)) = elements {
            // One entry per element: those the write adds or changes the liveness of, those
            // it removes retired as a view entry is.
            let old = element_keys(kind, column, existing, write.now);
            let new = element_keys(kind, column, merged, write.now);
            let row_deletion = merged.deletion.map_or(i64::MIN, |d| d.marked_at);
            for (element, liveness) in &new {
                if old.get(element) == Some(liveness) {
                    continue;
                }
                if let Some((pk, vck)) = map.entry_key_of(&pk_values, ck, merged, Some(element))? {
                    let row = Row {
                        marker: Some(*liveness),
                        deletion: merged.deletion,
                        columns: Vec::new(),
                    };
                    put(pk, vck, row);
                }
            }
            for (element, liveness) in &old {
                if new.contains_key(element) {
                    continue;
                }
                if let Some((pk, vck)) =
                    map.entry_key_of(&pk_values, ck, existing, Some(element))?
                {
                    let ts = liveness.timestamp;
                    let row = Row {
                        marker: (ts > row_deletion).then(|| LivenessInfo::expired(ts, write.now)),
                        deletion: merged.deletion,
                        columns: Vec::new(),
                    };
                    put(pk, vck, row);
                }
            }
            continue;
        }
        let action = map.action(existing, merged);
        if matches!(action, Action::New | Action::Switch) {
            if let Some((pk, vck)) = map.entry_key(&pk_values, ck, merged)? {
                put(
                    pk,
                    vck,
                    Row {
                        marker: map.liveness(merged),
                        deletion: merged.deletion,
                        columns: map.all_columns(merged),
                    },
                );
            }
        }
        if matches!(action, Action::Delete | Action::Switch) {
            if let Some((pk, vck)) = map.entry_key(&pk_values, ck, existing)? {
                let ts = map.entry_deletion_timestamp(existing, merged);
                let row_deletion = merged.deletion.map_or(i64::MIN, |d| d.marked_at);
                put(
                    pk,
                    vck,
                    Row {
                        marker: (ts > row_deletion).then(|| LivenessInfo::expired(ts, write.now)),
                        deletion: merged.deletion,
                        columns: map.different_columns(existing, merged),
                    },
                );
            }
        }
        if action == Action::Update {
            if let Some((pk, vck)) = map.entry_key(&pk_values, ck, merged)? {
                put(
                    pk,
                    vck,
                    Row {
                        marker: map.liveness(merged),
                        deletion: merged.deletion,
                        columns: map.different_columns(existing, merged),
                    },
                );
            }
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
        let b: BaseRows = before.into_iter().map(|r| (k.clone(), r)).collect();
        let a: BaseRows = after.into_iter().map(|r| (k.clone(), r)).collect();
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
                let retired = r.deletion.is_some() || r.marker.is_some_and(|m| m.is_expired());
                out.push((v, retired, w));
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
                Some(Row {
                    deletion: Some(DeletionTime {
                        marked_at: 20,
                        local_deletion_time: 1000,
                    }),
                    ..Row::default()
                }),
                vec![(5, true, None)],
            ),
        ];
        for (name, before, update, after, expect) in cases {
            assert_eq!(run(before, update, after), expect, "{name}");
        }
    }

    #[test]
    fn old_entry_retired_by_an_expired_marker_at_its_key_cell() {
        let (base, view) = schemas();
        let key = DecoratedKey::new(int(1));
        let k = ck(&base, &[7]);
        // w was written at 50, after the key change's own timestamp (20): the old entry is
        // retired at its key cell's time (10), shadowing none of its cells.
        let mut before_row = row(10, true, Some(5), None);
        before_row
            .columns
            .push((3, ColumnData::Simple(Cell::live(50, int(9)))));
        let mut up = Partition::default();
        up.rows.insert(k.clone(), row(20, false, Some(6), None));
        let before: BaseRows = [(k.clone(), before_row)].into();
        let after: BaseRows = [(k.clone(), row(20, true, Some(6), Some(9)))].into();
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
        let r = old.update.rows.values().next().unwrap();
        assert_eq!(r.deletion, None);
        assert_eq!(r.marker, Some(LivenessInfo::expired(10, 1000)));
    }

    #[test]
    fn base_rows_apply_covering_deletions_and_keep_tombstones() {
        let (base, _) = schemas();
        let del = |t: i64| DeletionTime {
            marked_at: t,
            local_deletion_time: 1000,
        };
        let mut p = Partition {
            deletion: Some(del(15)),
            ..Partition::default()
        };
        // Row 7: a marker and v at 10 (shadowed by the partition deletion), w deleted at 20.
        let mut r = row(10, true, Some(5), None);
        r.columns
            .push((3, ColumnData::Simple(Cell::tombstone(20, 1000))));
        p.rows.insert(ck(&base, &[7]), r);
        // Row 8: wholly shadowed: only the covering deletion is left.
        p.rows
            .insert(ck(&base, &[8]), row(12, true, Some(1), Some(1)));
        let rows = base_rows(p, &[]);
        let r7 = &rows[&ck(&base, &[7])];
        assert_eq!(r7.marker, None);
        assert_eq!(r7.deletion, Some(del(15)));
        assert_eq!(r7.columns.len(), 1);
        assert!(r7.cell(3).is_some_and(|c| c.is_tombstone()));
        let r8 = &rows[&ck(&base, &[8])];
        assert!(r8.columns.is_empty() && r8.marker.is_none());
        assert_eq!(r8.deletion, Some(del(15)));
    }

    #[test]
    fn an_older_marker_after_the_last_cell_deletion_brings_the_entry_back() {
        // F84, in a view keyed by the base key only: v written at 100, deleted at 300; a
        // marker at 200 comes last. The entry is made whole: the marker and v's tombstone.
        let (base, _) = schemas();
        let mut view = TableSchema::new("ks", "by_ck")
            .with_column("ck", CqlType::Int, ColumnKind::PartitionKey)
            .with_column("pk", CqlType::Int, ColumnKind::Clustering)
            .with_column("v", CqlType::Int, ColumnKind::Regular)
            .with_column("w", CqlType::Int, ColumnKind::Regular);
        ViewDef {
            base: "t".into(),
            include_all_columns: true,
            where_clause: String::new(),
            not_null: vec!["pk".into(), "ck".into()],
        }
        .store(&mut view.options);
        let key = DecoratedKey::new(int(1));
        let k = ck(&base, &[7]);
        let before_row = Row {
            columns: vec![(2, ColumnData::Simple(Cell::tombstone(300, 1000)))],
            ..Row::default()
        };
        let mut after_row = before_row.clone();
        after_row.marker = Some(LivenessInfo::live(200));
        let mut up = Partition::default();
        up.rows.insert(
            k.clone(),
            Row {
                marker: Some(LivenessInfo::live(200)),
                ..Row::default()
            },
        );
        let before: BaseRows = [(k.clone(), before_row)].into();
        let after: BaseRows = [(k.clone(), after_row)].into();
        let write = BaseWrite {
            key: &key,
            update: &up,
            before: &before,
            after: &after,
            timestamp: 200,
            now: 1000,
        };
        let muts = view_mutations(&base, &view, &write).unwrap();
        assert_eq!(muts.len(), 1);
        assert_eq!(muts[0].key.key, int(7));
        let r = muts[0].update.rows.values().next().unwrap();
        assert_eq!(r.marker, Some(LivenessInfo::live(200)));
        assert_eq!(r.deletion, None);
        let v_id = view.column("v").unwrap().id;
        assert!(r
            .cell(v_id)
            .is_some_and(|c| c.is_tombstone() && c.timestamp == 300));
    }

    /// `t (pk int, ck int, m map<int, int>)` and the hidden view of its `kind` index on m.
    fn collection_schemas(kind: &str) -> (TableSchema, TableSchema) {
        use crate::schema::index::{IndexDef, IDX_TOKEN, IDX_VALUE};
        let base = TableSchema::new("ks", "t")
            .with_column("pk", CqlType::Int, ColumnKind::PartitionKey)
            .with_column("ck", CqlType::Int, ColumnKind::Clustering)
            .with_column(
                "m",
                CqlType::Map(Box::new(CqlType::Int), Box::new(CqlType::Int)),
                ColumnKind::Regular,
            );
        let mut ix = TableSchema::new("ks", "t_m_idx_index").with_column(
            "m",
            CqlType::Blob,
            ColumnKind::PartitionKey,
        );
        if kind == "entries" {
            ix = ix.with_column(IDX_VALUE, CqlType::Int, ColumnKind::PartitionKey);
        }
        ix = ix
            .with_column(IDX_TOKEN, CqlType::Bigint, ColumnKind::Clustering)
            .with_column("pk", CqlType::Int, ColumnKind::Clustering)
            .with_column("ck", CqlType::Int, ColumnKind::Clustering);
        ViewDef {
            base: "t".into(),
            include_all_columns: false,
            where_clause: "m IS NOT NULL".into(),
            not_null: vec!["m".into()],
        }
        .store(&mut ix.options);
        IndexDef {
            name: "t_m_idx".into(),
            target: format!("{kind}(m)"),
            local: false,
            class: None,
            options: Vec::new(),
        }
        .store(&mut ix.options);
        ix.set_view_base(&base);
        (base, ix)
    }

    /// A row whose map m holds `(key, value, timestamp, ttl)` cells (a TTL'd cell expires
    /// at 2000).
    fn map_row(cells: &[(i32, i32, i64, u32)]) -> Row {
        let cells = cells
            .iter()
            .map(|(k, v, ts, ttl)| {
                let mut c = Cell::live(*ts, int(*v));
                if *ttl > 0 {
                    c.ttl = *ttl;
                    c.local_deletion_time = 2000;
                }
                (int(*k), c)
            })
            .collect();
        Row {
            marker: Some(LivenessInfo::live(1)),
            deletion: None,
            columns: vec![(
                2,
                ColumnData::Complex(crate::model::ComplexColumn {
                    deletion: None,
                    cells,
                }),
            )],
        }
    }

    /// The index rows a write makes: `(element key, retired?, marker timestamp, ttl)`.
    type Entries = Vec<(Vec<i32>, bool, i64, u32)>;

    fn run_collection(kind: &str, before: Option<Row>, after: Option<Row>) -> Entries {
        let (base, ix) = collection_schemas(kind);
        let key = DecoratedKey::new(int(1));
        let k = ck(&base, &[7]);
        let mut up = Partition::default();
        up.rows.insert(k.clone(), Row::default());
        let b: BaseRows = before.into_iter().map(|r| (k.clone(), r)).collect();
        let a: BaseRows = after.into_iter().map(|r| (k.clone(), r)).collect();
        let write = BaseWrite {
            key: &key,
            update: &up,
            before: &b,
            after: &a,
            timestamp: 20,
            now: 1000,
        };
        let mut out = Entries::new();
        for m in view_mutations(&base, &ix, &write).unwrap() {
            let parts = if kind == "entries" {
                split_composite_partition_key(&m.key.key, 2).unwrap()
            } else {
                vec![m.key.key.clone()]
            };
            let element: Vec<i32> = parts
                .iter()
                .map(|b| i32::from_be_bytes(b.as_ref().try_into().unwrap()))
                .collect();
            for (vck, r) in &m.update.rows {
                let values = ix.clustering_layout().decode(vck.as_bytes()).unwrap();
                assert_eq!(values[1..], [int(1), int(7)], "clustered by token, pk, ck");
                let marker = r.marker.unwrap();
                let retired = marker.is_expired() || r.deletion.is_some();
                out.push((element.clone(), retired, marker.timestamp, marker.ttl));
            }
        }
        out.sort();
        out
    }

    #[test]
    fn collection_indexes_make_one_entry_per_element() {
        let retired_ttl = LivenessInfo::expired(0, 0).ttl;
        #[allow(clippy::type_complexity)]
        let cases: Vec<(&str, &str, Option<Row>, Option<Row>, Entries)> = vec![
            (
                "new row: an entry per key",
                "keys",
                None,
                Some(map_row(&[(1, 10, 5, 0), (2, 20, 6, 0)])),
                vec![(vec![1], false, 5, 0), (vec![2], false, 6, 0)],
            ),
            (
                "values: a repeated value is one entry, its newest cell's time",
                "values",
                None,
                Some(map_row(&[(1, 10, 5, 0), (2, 10, 6, 0)])),
                vec![(vec![10], false, 6, 0)],
            ),
            (
                "entries: an entry per pair",
                "entries",
                None,
                Some(map_row(&[(1, 10, 5, 0)])),
                vec![(vec![1, 10], false, 5, 0)],
            ),
            (
                "an element's TTL is its entry's",
                "keys",
                None,
                Some(map_row(&[(1, 10, 5, 30)])),
                vec![(vec![1], false, 5, 30)],
            ),
            (
                "unchanged elements write nothing; a removed one is retired at its time",
                "keys",
                Some(map_row(&[(1, 10, 5, 0), (2, 20, 6, 0)])),
                Some(map_row(&[(1, 10, 5, 0)])),
                vec![(vec![2], true, 6, retired_ttl)],
            ),
            (
                "a changed value switches the values and entries, not the key",
                "entries",
                Some(map_row(&[(1, 10, 5, 0)])),
                Some(map_row(&[(1, 11, 8, 0)])),
                vec![
                    (vec![1, 10], true, 5, retired_ttl),
                    (vec![1, 11], false, 8, 0),
                ],
            ),
            (
                "a value still held by another cell stays",
                "values",
                Some(map_row(&[(1, 10, 5, 0), (2, 10, 5, 0)])),
                Some(map_row(&[(2, 10, 5, 0)])),
                vec![],
            ),
            (
                "an expired element gives no entry",
                "keys",
                None,
                Some({
                    let mut r = map_row(&[(1, 10, 5, 1)]);
                    if let ColumnData::Complex(cc) = &mut r.columns[0].1 {
                        cc.cells[0].1.local_deletion_time = 999;
                    }
                    r
                }),
                vec![],
            ),
        ];
        for (name, kind, before, after, want) in cases {
            assert_eq!(run_collection(kind, before, after), want, "{name}");
        }
    }

    /// An index on a static column: the static row (the empty key) gives one entry per
    /// partition, keyed by the value, clustered by token and partition key; clustering rows
    /// give none.
    #[test]
    fn static_column_index_has_one_entry_per_partition() {
        use crate::schema::index::{IndexDef, IDX_TOKEN};
        let base = TableSchema::new("ks", "t")
            .with_column("pk", CqlType::Int, ColumnKind::PartitionKey)
            .with_column("ck", CqlType::Int, ColumnKind::Clustering)
            .with_column("s", CqlType::Int, ColumnKind::Static)
            .with_column("v", CqlType::Int, ColumnKind::Regular);
        let mut ix = TableSchema::new("ks", "t_s_idx_index")
            .with_column("s", CqlType::Int, ColumnKind::PartitionKey)
            .with_column(IDX_TOKEN, CqlType::Bigint, ColumnKind::Clustering)
            .with_column("pk", CqlType::Int, ColumnKind::Clustering);
        ViewDef {
            base: "t".into(),
            include_all_columns: false,
            where_clause: "s IS NOT NULL".into(),
            not_null: vec!["s".into()],
        }
        .store(&mut ix.options);
        IndexDef {
            name: "t_s_idx".into(),
            target: "s".into(),
            local: false,
            class: None,
            options: Vec::new(),
        }
        .store(&mut ix.options);
        ix.set_view_base(&base);
        assert!(ix.needs_static_row(&base));
        let key = DecoratedKey::new(int(1));
        let static_row = |ts: i64, v: i32| Row {
            marker: None,
            deletion: None,
            columns: vec![(2, ColumnData::Simple(Cell::live(ts, int(v))))],
        };
        // The update sets s to 6 (it was 5) and writes a clustering row.
        let mut data = Partition {
            static_row: Some(static_row(10, 5)),
            ..Partition::default()
        };
        let before = base_rows(data.clone(), &[]);
        let mut up = Partition {
            static_row: Some(static_row(20, 6)),
            ..Partition::default()
        };
        up.rows.insert(ck(&base, &[7]), row(20, true, None, None));
        data.merge(up.clone());
        let after = base_rows(data, &[]);
        assert!(after.contains_key(&ClusteringKey::empty()));
        let write = BaseWrite {
            key: &key,
            update: &up,
            before: &before,
            after: &after,
            timestamp: 20,
            now: 1000,
        };
        let mut got: Vec<(i32, bool)> = Vec::new();
        for m in view_mutations(&base, &ix, &write).unwrap() {
            for (vck, r) in &m.update.rows {
                let values = ix.clustering_layout().decode(vck.as_bytes()).unwrap();
                assert_eq!(values[1], int(1), "clustered by token, then pk only");
                let v = i32::from_be_bytes(m.key.key.as_ref().try_into().unwrap());
                got.push((v, r.marker.is_some_and(|m| m.is_expired())));
            }
        }
        got.sort();
        assert_eq!(got, vec![(5, true), (6, false)]);
        // A plain view never sees the static row.
        let (vbase, view) = schemas();
        assert!(!view.needs_static_row(&vbase));
    }

    /// An index on a partition key column: the static row has an entry of its own, keyed by
    /// the token and the base partition key only (a prefix of the rows' entries, sorting
    /// before them), live while the static row has live data.
    #[test]
    fn partition_key_column_index_has_an_entry_for_the_static_row() {
        use crate::schema::index::{IndexDef, IDX_TOKEN};
        use crate::schema::view::EntryRows;
        let base = TableSchema::new("ks", "t")
            .with_column("a", CqlType::Int, ColumnKind::PartitionKey)
            .with_column("b", CqlType::Int, ColumnKind::PartitionKey)
            .with_column("ck", CqlType::Int, ColumnKind::Clustering)
            .with_column("s", CqlType::Int, ColumnKind::Static);
        let mut ix = TableSchema::new("ks", "t_a_idx_index")
            .with_column("a", CqlType::Int, ColumnKind::PartitionKey)
            .with_column(IDX_TOKEN, CqlType::Bigint, ColumnKind::Clustering)
            .with_column("b", CqlType::Int, ColumnKind::Clustering)
            .with_column("ck", CqlType::Int, ColumnKind::Clustering);
        ViewDef {
            base: "t".into(),
            include_all_columns: false,
            where_clause: "a IS NOT NULL".into(),
            not_null: vec!["a".into()],
        }
        .store(&mut ix.options);
        IndexDef {
            name: "t_a_idx".into(),
            target: "a".into(),
            local: false,
            class: None,
            options: Vec::new(),
        }
        .store(&mut ix.options);
        ix.set_view_base(&base);
        assert_eq!(ix.entry_rows(&base), EntryRows::Both);
        let key = DecoratedKey::new(composite_partition_key(&[&int(1), &int(2)]));
        let static_row = |ts: i64| Row {
            marker: None,
            deletion: None,
            columns: vec![(3, ColumnData::Simple(Cell::live(ts, int(9))))],
        };
        // (update's static row, its rows) → the entries written: (clustering values, expired).
        type Case = (Option<Row>, Vec<i32>, Vec<(usize, bool)>);
        let cases: Vec<(&str, Option<Row>, Case)> = vec![
            (
                "a static row alone",
                None,
                (Some(static_row(10)), vec![], vec![(2, false)]),
            ),
            (
                "with a row",
                None,
                (Some(static_row(10)), vec![7], vec![(2, false), (3, false)]),
            ),
            (
                "a row beside a static row",
                Some(static_row(5)),
                (None, vec![7], vec![(3, false)]),
            ),
            (
                "the static cell deleted",
                Some(static_row(5)),
                (
                    Some(Row {
                        marker: None,
                        deletion: None,
                        columns: vec![(3, ColumnData::Simple(Cell::tombstone(10, 1000)))],
                    }),
                    vec![],
                    vec![(2, true)],
                ),
            ),
        ];
        for (name, existing, (static_up, rows, want)) in cases {
            let data = Partition {
                static_row: existing,
                ..Partition::default()
            };
            let before = base_rows(data.clone(), &[]);
            let mut up = Partition {
                static_row: static_up,
                ..Partition::default()
            };
            for c in rows {
                up.rows.insert(ck(&base, &[c]), row(10, true, None, None));
            }
            let mut merged = data;
            merged.merge(up.clone());
            let after = base_rows(merged, &[]);
            let write = BaseWrite {
                key: &key,
                update: &up,
                before: &before,
                after: &after,
                timestamp: 10,
                now: 1000,
            };
            let mut got = Vec::new();
            for m in view_mutations(&base, &ix, &write).unwrap() {
                assert_eq!(m.key.key, int(1), "{name}");
                for (vck, r) in &m.update.rows {
                    let values = ix.clustering_layout().decode(vck.as_bytes()).unwrap();
                    assert_eq!(
                        values[1],
                        int(2),
                        "{name}: the other key column follows the token"
                    );
                    got.push((values.len(), r.marker.is_some_and(|m| m.is_expired())));
                }
            }
            // The static row's entry (2 values) sorts first: its key is a prefix.
            assert_eq!(got, want, "{name}");
        }
    }
}
