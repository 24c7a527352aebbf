//! Rows: a row marker, a row deletion and the cells of its columns.
//!
//! A row is *live* at `now` when its marker is live or any of its cells is live; a row whose
//! cells were all deleted and that has no marker disappears (Cassandra's semantics: `UPDATE`
//! writes cells only, `INSERT` also writes the marker). Columns are kept sorted by
//! [`ColumnId`], one entry per column.

use super::cell::{Cell, DeletionTime, LivenessInfo, NowSecs};
use bytes::Bytes;

/// A column's stable id inside its table (never reused after a drop).
pub type ColumnId = u32;

/// The data of one column in one row.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ColumnData {
    /// A single-valued column.
    Simple(Cell),
    /// A multi-cell column (non-frozen collection or UDT): cells keyed by path.
    Complex(ComplexColumn),
}

/// The cells of a multi-cell column, sorted by path, with the column's own deletion.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ComplexColumn {
    /// Deletes every cell of the column written at or before it.
    pub deletion: Option<DeletionTime>,
    /// `(path, cell)` pairs sorted by path bytes.
    pub cells: Vec<(Bytes, Cell)>,
}

/// What a read visited: live cells, and tombstones of every kind (partition, range, row,
/// column and cell deletions, and expired cells). Cassandra's and ScyllaDB's per-read
/// "live scanned" and "tombstone scanned" figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CellCounts {
    /// Live cells.
    pub live: u64,
    /// Tombstones.
    pub tombstones: u64,
}

/// A clustering row (or the static row).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Row {
    /// Primary-key liveness written by `INSERT`.
    pub marker: Option<LivenessInfo>,
    /// Row tombstone.
    pub deletion: Option<DeletionTime>,
    /// Column data sorted by column id.
    pub columns: Vec<(ColumnId, ColumnData)>,
}

impl ColumnData {
    /// Merges two versions of the same column.
    pub fn merge(self, other: ColumnData) -> ColumnData {
        match (self, other) {
            (ColumnData::Simple(a), ColumnData::Simple(b)) => {
                ColumnData::Simple(Cell::reconcile(a, b))
            }
            (ColumnData::Complex(a), ColumnData::Complex(b)) => ColumnData::Complex(a.merge(b)),
            // A column cannot change between simple and complex; keep the newest-looking side.
            (a, b) => {
                if b.max_timestamp() > a.max_timestamp() {
                    b
                } else {
                    a
                }
            }
        }
    }

    fn max_timestamp(&self) -> i64 {
        match self {
            ColumnData::Simple(c) => c.timestamp,
            ColumnData::Complex(c) => c
                .cells
                .iter()
                .map(|(_, c)| c.timestamp)
                .chain(c.deletion.map(|d| d.marked_at))
                .max()
                .unwrap_or(i64::MIN),
        }
    }

    /// Visits every timestamp the column carries (cells and deletions).
    pub fn for_each_timestamp(&self, f: &mut impl FnMut(i64)) {
        match self {
            ColumnData::Simple(c) => f(c.timestamp),
            ColumnData::Complex(c) => {
                if let Some(d) = c.deletion {
                    f(d.marked_at);
                }
                for (_, cell) in &c.cells {
                    f(cell.timestamp);
                }
            }
        }
    }

    /// Number of cells (a complex column counts each element).
    pub fn cell_count(&self) -> usize {
        match self {
            ColumnData::Simple(_) => 1,
            ColumnData::Complex(c) => c.cells.len(),
        }
    }
}

impl ComplexColumn {
    /// Merges two versions: the deletion that wins, and cells reconciled by path.
    pub fn merge(self, other: ComplexColumn) -> ComplexColumn {
        let deletion = DeletionTime::max(self.deletion, other.deletion);
        let mut cells = Vec::with_capacity(self.cells.len() + other.cells.len());
        let mut a = self.cells.into_iter().peekable();
        let mut b = other.cells.into_iter().peekable();
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) => match x.0.cmp(&y.0) {
                    std::cmp::Ordering::Less => a.next(),
                    std::cmp::Ordering::Greater => b.next(),
                    std::cmp::Ordering::Equal => match (a.next(), b.next()) {
                        (Some((p, x)), Some((_, y))) => Some((p, Cell::reconcile(x, y))),
                        _ => None,
                    },
                },
                (Some(_), None) => a.next(),
                (None, Some(_)) => b.next(),
                (None, None) => None,
            };
            match next {
                Some(c) => cells.push(c),
                None => break,
            }
        }
        ComplexColumn { deletion, cells }
    }
}

impl Row {
    /// True when the row carries nothing at all.
    pub fn is_empty(&self) -> bool {
        self.marker.is_none() && self.deletion.is_none() && self.columns.is_empty()
    }

    /// Merges another version of the same row into this one.
    pub fn merge(&mut self, other: Row) {
        self.marker = match (self.marker, other.marker) {
            (Some(a), Some(b)) => Some(if b.supersedes(&a) { b } else { a }),
            (a, None) => a,
            (None, b) => b,
        };
        self.deletion = DeletionTime::max(self.deletion, other.deletion);
        if other.columns.is_empty() {
            return;
        }
        if self.columns.is_empty() {
            self.columns = other.columns;
            return;
        }
        let mine = std::mem::take(&mut self.columns);
        // Usually both sides carry the same columns: size for that, not for the sum.
        let mut out = Vec::with_capacity(mine.len().max(other.columns.len()));
        let mut a = mine.into_iter().peekable();
        let mut b = other.columns.into_iter().peekable();
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) => match x.0.cmp(&y.0) {
                    std::cmp::Ordering::Less => a.next(),
                    std::cmp::Ordering::Greater => b.next(),
                    std::cmp::Ordering::Equal => match (a.next(), b.next()) {
                        (Some((id, x)), Some((_, y))) => Some((id, x.merge(y))),
                        _ => None,
                    },
                },
                (Some(_), None) => a.next(),
                (None, Some(_)) => b.next(),
                (None, None) => None,
            };
            match next {
                Some(c) => out.push(c),
                None => break,
            }
        }
        self.columns = out;
    }

    /// Removes everything `deletion` shadows (data written at or before it).
    pub fn apply_deletion(&mut self, deletion: DeletionTime) {
        if let Some(m) = self.marker {
            if deletion.deletes(m.timestamp) {
                self.marker = None;
            }
        }
        if let Some(d) = self.deletion {
            if !d.supersedes(&deletion) {
                // The outer deletion covers the row's own; the row's is redundant.
                self.deletion = None;
            }
        }
        self.columns.retain_mut(|(_, data)| match data {
            ColumnData::Simple(c) if c.counter => c.shadow_shards(deletion),
            ColumnData::Simple(c) => !deletion.deletes(c.timestamp),
            ColumnData::Complex(cc) => {
                cc.cells.retain(|(_, c)| !deletion.deletes(c.timestamp));
                if let Some(d) = cc.deletion {
                    if !d.supersedes(&deletion) {
                        cc.deletion = None;
                    }
                }
                !cc.cells.is_empty() || cc.deletion.is_some()
            }
        });
    }

    /// What a reader sees at `now`: shadowed, deleted and expired data removed, the row's own
    /// deletion applied. Returns `None` when nothing live remains.
    pub fn into_live(self, now: NowSecs) -> Option<Row> {
        self.into_live_counting(now, &mut CellCounts::default())
    }

    /// [`Row::into_live`], also counting what the row held into `counts`: its live cells, and
    /// its tombstones — the row deletion, each column deletion, each deleted or expired cell.
    /// Cells the row's own deletion shadows are in neither count (a merge has dropped them).
    pub fn into_live_counting(mut self, now: NowSecs, counts: &mut CellCounts) -> Option<Row> {
        if let Some(d) = self.deletion.take() {
            counts.tombstones += 1;
            self.apply_deletion(d);
        }
        let mut count = |live: bool| {
            if live {
                counts.live += 1;
            } else {
                counts.tombstones += 1;
            }
            live
        };
        self.columns.retain_mut(|(_, data)| match data {
            ColumnData::Simple(c) => count(c.is_live(now)),
            ColumnData::Complex(cc) => {
                if let Some(d) = cc.deletion.take() {
                    count(false);
                    cc.cells.retain(|(_, c)| !d.deletes(c.timestamp));
                }
                cc.cells.retain(|(_, c)| count(c.is_live(now)));
                !cc.cells.is_empty()
            }
        });
        let marker_live = self.marker.is_some_and(|m| m.is_live(now));
        if !marker_live {
            self.marker = None;
        }
        (marker_live || !self.columns.is_empty()).then_some(self)
    }

    /// Removes what dropped columns left behind: for each `(column id, bound)` (sorted by id),
    /// the column's cells written at or before `bound` (`i64::MAX`: all of them). They are not
    /// data any more: they neither show nor keep a row alive.
    pub fn remove_columns(&mut self, hidden: &[(ColumnId, i64)]) {
        if hidden.is_empty() {
            return;
        }
        self.columns.retain_mut(|(id, data)| {
            let Ok(i) = hidden.binary_search_by_key(id, |(h, _)| *h) else {
                return true;
            };
            let bound = hidden[i].1;
            match data {
                ColumnData::Simple(c) => c.timestamp > bound,
                ColumnData::Complex(cc) => {
                    cc.cells.retain(|(_, c)| c.timestamp > bound);
                    if cc.deletion.is_some_and(|d| d.marked_at <= bound) {
                        cc.deletion = None;
                    }
                    !cc.cells.is_empty() || cc.deletion.is_some()
                }
            }
        });
    }

    /// Keeps only the listed columns (sorted ids); the marker is kept.
    pub fn retain_columns(&mut self, wanted: &[ColumnId]) {
        self.columns
            .retain(|(id, _)| wanted.binary_search(id).is_ok());
    }

    /// The cell of a simple column.
    pub fn cell(&self, id: ColumnId) -> Option<&Cell> {
        match self.columns.binary_search_by_key(&id, |(c, _)| *c) {
            Ok(i) => match &self.columns[i].1 {
                ColumnData::Simple(c) => Some(c),
                ColumnData::Complex(_) => None,
            },
            Err(_) => None,
        }
    }

    /// Visits every timestamp in the row (marker, deletion, cells).
    pub fn for_each_timestamp(&self, mut f: impl FnMut(i64)) {
        if let Some(m) = self.marker {
            f(m.timestamp);
        }
        if let Some(d) = self.deletion {
            f(d.marked_at);
        }
        for (_, c) in &self.columns {
            c.for_each_timestamp(&mut f);
        }
    }

    /// Number of cells in the row.
    pub fn cell_count(&self) -> usize {
        self.columns.iter().map(|(_, c)| c.cell_count()).sum()
    }

    /// Approximate heap bytes, for memtable accounting.
    pub fn heap_size(&self) -> usize {
        let mut n = std::mem::size_of::<Row>()
            + self.columns.capacity() * std::mem::size_of::<(ColumnId, ColumnData)>();
        for (_, c) in &self.columns {
            match c {
                ColumnData::Simple(cell) => n += cell.value.len(),
                ColumnData::Complex(cc) => {
                    n += cc.cells.capacity() * std::mem::size_of::<(Bytes, Cell)>();
                    for (p, cell) in &cc.cells {
                        n += p.len() + cell.value.len();
                    }
                }
            }
        }
        n
    }
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn row(marker: Option<i64>, cells: &[(ColumnId, i64)]) -> Row {
        Row {
            marker: marker.map(LivenessInfo::live),
            deletion: None,
            columns: cells
                .iter()
                .map(|(id, ts)| {
                    (
                        *id,
                        ColumnData::Simple(Cell::live(*ts, Bytes::from(ts.to_string()))),
                    )
                })
                .collect(),
        }
    }

    #[test]
    fn dropped_columns_hide_their_cells_up_to_the_drop() {
        // Column 1 dropped for good; column 2 re-added after a drop at 5.
        let mut r = row(None, &[(1, 9), (2, 4), (3, 1)]);
        r.remove_columns(&[(1, i64::MAX), (2, 5)]);
        let ids: Vec<_> = r.columns.iter().map(|c| c.0).collect();
        assert_eq!(ids, vec![3]);
        let mut r = row(None, &[(1, 9), (2, 6)]);
        r.remove_columns(&[(1, i64::MAX), (2, 5)]);
        let ids: Vec<_> = r.columns.iter().map(|c| c.0).collect();
        assert_eq!(ids, vec![2]);
        // A row alive only through a dropped column is not live any more.
        let mut r = row(None, &[(1, 9)]);
        r.remove_columns(&[(1, i64::MAX)]);
        assert!(r.into_live(0).is_none());
    }

    #[test]
    fn merge_interleaves_columns() {
        let mut a = row(Some(1), &[(1, 1), (3, 5)]);
        a.merge(row(None, &[(2, 2), (3, 7)]));
        let ids: Vec<_> = a.columns.iter().map(|c| c.0).collect();
        assert_eq!(ids, vec![1, 2, 3]);
        assert_eq!(a.cell(3).map(|c| c.timestamp), Some(7));
    }

    #[test]
    fn row_deletion_hides_older_data_only() {
        let mut r = row(Some(1), &[(1, 1), (2, 9)]);
        r.deletion = Some(DeletionTime {
            marked_at: 5,
            local_deletion_time: 0,
        });
        let live = r.into_live(0).expect("cell 2 is newer than the deletion");
        assert!(live.marker.is_none());
        assert_eq!(live.columns.len(), 1);
    }

    #[test]
    fn row_without_marker_and_cells_is_dead() {
        let mut r = row(None, &[]);
        r.columns
            .push((1, ColumnData::Simple(Cell::tombstone(3, 0))));
        assert!(r.into_live(0).is_none());
        assert!(row(Some(1), &[]).into_live(0).is_some());
    }

    #[test]
    fn expired_cells_vanish() {
        let mut r = row(None, &[]);
        r.columns.push((
            1,
            ColumnData::Simple(Cell::expiring(1, 10, 100, Bytes::from_static(b"x"))),
        ));
        assert!(r.clone().into_live(105).is_some());
        assert!(r.into_live(110).is_none());
    }

    #[test]
    fn counting_sees_live_cells_and_every_kind_of_tombstone() {
        // Row deletion at 5: cell 1 (ts 1) is shadowed, counted in neither; cell 2 (ts 9) is
        // live; cell 3 is a tombstone; cell 4 expired; column 5 is a collection with its own
        // deletion (at 7, shadowing its element at 6) and one live element (ts 8).
        let mut r = row(Some(1), &[(1, 1), (2, 9)]);
        r.deletion = Some(DeletionTime {
            marked_at: 5,
            local_deletion_time: 0,
        });
        r.columns
            .push((3, ColumnData::Simple(Cell::tombstone(9, 0))));
        r.columns.push((
            4,
            ColumnData::Simple(Cell::expiring(9, 10, 100, Bytes::from_static(b"x"))),
        ));
        r.columns.push((
            5,
            ColumnData::Complex(ComplexColumn {
                deletion: Some(DeletionTime {
                    marked_at: 7,
                    local_deletion_time: 0,
                }),
                cells: vec![
                    (Bytes::from_static(b"a"), Cell::live(6, Bytes::new())),
                    (Bytes::from_static(b"b"), Cell::live(8, Bytes::new())),
                ],
            }),
        ));
        let mut counts = CellCounts::default();
        let live = r.clone().into_live_counting(200, &mut counts).unwrap();
        assert_eq!(
            counts,
            CellCounts {
                live: 2,
                // row deletion, cell tombstone, expired cell, collection deletion
                tombstones: 4,
            }
        );
        assert_eq!(Some(live), r.into_live(200));
        // Counts accumulate over rows.
        row(None, &[(1, 1)]).into_live_counting(0, &mut counts);
        assert_eq!(counts.live, 3);
    }
}
