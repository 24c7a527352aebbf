//! One cached partition: its header (partition tombstone, static row, every range tombstone)
//! and some of its rows, with *continuity*: which intervals of clustering positions are
//! completely known.
//!
//! Positions are clustering keys with a weight: `before(k) < at(k) < after(k)`, and no other
//! key lies between `at(k)` and `after(k)`. Rows sit at `at` positions; dummies (entries
//! without a row) at `before`/`after` positions mark the bounds of what reads covered.
//!
//! Invariants:
//! - an entry's `continuous` flag says the open interval between the previous entry and it
//!   holds no row the cache lacks; the interval before the first entry is never continuous;
//! - a row entry holds the row's complete data (the sstables' merge, plus what flushes merged
//!   in); a dummy says nothing of its own position (no row can sit at `before`/`after`);
//! - the header is complete: the partition tombstone, the static row and every range
//!   tombstone of the partition (a read fills it with [`SourceQuery::full_header`]), so a
//!   read served from continuous intervals needs nothing else.
//!
//! [`SourceQuery::full_header`]: crate::read::source::SourceQuery::full_header

pub use super::key::Position;
use super::key::{EntryRef, Evictable};
use super::lru::Lru;
use crate::model::{ClusteringKey, DecoratedKey, DeletionTime, RangeTombstone, Row};
use std::collections::BTreeMap;
use std::ops::Bound;

/// One entry: a row, or a dummy bound.
pub struct Entry {
    row: Option<Row>,
    continuous: bool,
    lru: usize,
    bytes: usize,
}

/// Bytes an entry costs besides its key and row: the tree slot, the LRU node (with its copy
/// of the partition key's handle and position).
const ENTRY_OVERHEAD: usize = 160;

/// Bytes a partition costs besides its key, static row and range tombstones.
const PARTITION_OVERHEAD: usize = 160;

/// Where the changes of one cache operation are accounted.
pub struct Ctx<'a> {
    /// The shared LRU.
    pub lru: &'a mut Lru<Evictable>,
    /// The table's slot.
    pub table: u64,
    /// The partition.
    pub key: &'a DecoratedKey,
    /// Bytes added (negative: freed).
    pub bytes: isize,
    /// Rows inserted.
    pub row_insertions: u64,
}

impl<'a> Ctx<'a> {
    /// An operation on partition `key` of table slot `table`, nothing accounted yet.
    pub fn new(lru: &'a mut Lru<Evictable>, table: u64, key: &'a DecoratedKey) -> Self {
        Ctx {
            lru,
            table,
            key,
            bytes: 0,
            row_insertions: 0,
        }
    }

    fn charge(&mut self, n: usize) {
        self.bytes += isize::try_from(n).unwrap_or(isize::MAX);
    }

    fn refund(&mut self, n: usize) {
        self.bytes -= isize::try_from(n).unwrap_or(isize::MAX);
    }
}

/// How a walk over the cache ended.
#[derive(Debug, PartialEq, Eq)]
pub enum WalkEnd {
    /// The whole interval was continuous.
    Done,
    /// The batch is full; continue from this position (exclusive).
    More(Position),
    /// The cache does not know what follows this position (exclusive).
    Gap(Position),
}

/// A cached partition.
#[derive(Default)]
pub struct CachedPartition {
    /// Partition tombstone.
    pub deletion: Option<DeletionTime>,
    /// Static row.
    pub static_row: Option<Row>,
    /// Every range tombstone of the partition.
    pub range_tombstones: Vec<RangeTombstone>,
    entries: BTreeMap<Position, Entry>,
    header_bytes: usize,
}

fn row_bytes(pos: &Position, row: Option<&Row>) -> usize {
    ENTRY_OVERHEAD + pos.key().len() + row.map_or(0, Row::heap_size)
}

impl CachedPartition {
    /// A partition with this header and no rows known; charges its header.
    pub fn new(
        deletion: Option<DeletionTime>,
        static_row: Option<Row>,
        range_tombstones: Vec<RangeTombstone>,
        ctx: &mut Ctx<'_>,
    ) -> Self {
        let mut p = CachedPartition {
            deletion,
            static_row,
            range_tombstones,
            entries: BTreeMap::new(),
            header_bytes: 0,
        };
        p.recharge_header(ctx);
        p
    }

    fn recharge_header(&mut self, ctx: &mut Ctx<'_>) {
        let now = PARTITION_OVERHEAD
            + ctx.key.key.len()
            + self.static_row.as_ref().map_or(0, Row::heap_size)
            + self
                .range_tombstones
                .iter()
                .map(|rt| 48 + rt.range.start.len() + rt.range.end.len())
                .sum::<usize>();
        ctx.refund(self.header_bytes);
        ctx.charge(now);
        self.header_bytes = now;
    }

    /// Bytes charged for the partition (header and entries).
    pub fn bytes(&self) -> usize {
        self.header_bytes + self.entries.values().map(|e| e.bytes).sum::<usize>()
    }

    /// Number of entries (rows and dummies).
    pub fn entry_count(&self) -> usize {
        self.entries.len()
    }

    /// Number of rows.
    pub fn row_count(&self) -> usize {
        self.entries.values().filter(|e| e.row.is_some()).count()
    }

    /// Reads forward from `from` (exclusive) up to `hi` (exclusive), at most `max_rows` rows,
    /// while the cache is continuous. Touches what it passes in the LRU.
    pub fn walk_forward(
        &self,
        from: &Position,
        hi: &Position,
        max_rows: usize,
        lru: &mut Lru<Evictable>,
        out: &mut Vec<(ClusteringKey, Row)>,
    ) -> WalkEnd {
        let mut c = from.clone();
        let mut taken = 0;
        for (pos, e) in self
            .entries
            .range((Bound::Included(from), Bound::Unbounded))
        {
            if pos == from {
                // A dummy at `from` bounds the interval the walk relies on: it is used too.
                lru.touch(e.lru);
                continue;
            }
            if !e.continuous {
                return WalkEnd::Gap(c);
            }
            lru.touch(e.lru);
            if pos >= hi {
                return WalkEnd::Done;
            }
            if let Some(row) = &e.row {
                out.push((ClusteringKey(pos.key().clone()), row.clone()));
                taken += 1;
            }
            c = pos.clone();
            if taken >= max_rows {
                return WalkEnd::More(c);
            }
        }
        WalkEnd::Gap(c)
    }

    /// Reads backward from `from` (exclusive) down to `lo` (inclusive), at most `max_rows`
    /// rows, while the cache is continuous.
    pub fn walk_reverse(
        &self,
        from: &Position,
        lo: &Position,
        max_rows: usize,
        lru: &mut Lru<Evictable>,
        out: &mut Vec<(ClusteringKey, Row)>,
    ) -> WalkEnd {
        let mut c = from.clone();
        let mut taken = 0;
        loop {
            // The interval just below `c` is known when the first entry at or after `c` is
            // continuous (its interval reaches down to the entry before `c`).
            let cover = self
                .entries
                .range((Bound::Included(&c), Bound::Unbounded))
                .next()
                .filter(|(_, e)| e.continuous);
            // The entry whose interval the walk relies on is used too.
            if let Some((_, e)) = cover {
                lru.touch(e.lru);
            }
            let covers = cover.is_some();
            let prev = self
                .entries
                .range((Bound::Unbounded, Bound::Excluded(&c)))
                .next_back();
            let (Some((pos, e)), true) = (prev, covers) else {
                return WalkEnd::Gap(c);
            };
            lru.touch(e.lru);
            if pos <= lo {
                return WalkEnd::Done;
            }
            if let Some(row) = &e.row {
                out.push((ClusteringKey(pos.key().clone()), row.clone()));
                taken += 1;
            }
            c = pos.clone();
            if taken >= max_rows {
                return WalkEnd::More(c);
            }
        }
    }

    /// Inserts a row read from the sources (or merges it into the one cached: the data is
    /// the same, or the cached one also holds what a flush merged in). A new entry's interval
    /// stays as it was: continuity is [`CachedPartition::mark`]'s.
    pub fn insert_row(&mut self, key: &ClusteringKey, row: Row, ctx: &mut Ctx<'_>) {
        let pos = Position::at(key);
        let continuous = self.is_continuous_at(&pos);
        match self.entries.get_mut(&pos) {
            Some(e) => {
                let mut merged = row;
                if let Some(old) = e.row.take() {
                    merged.merge(old);
                }
                e.row = Some(merged);
                ctx.refund(e.bytes);
                e.bytes = row_bytes(&pos, e.row.as_ref());
                ctx.charge(e.bytes);
                ctx.lru.touch(e.lru);
            }
            None => {
                self.insert_entry(pos, Some(row), continuous, ctx);
                ctx.row_insertions += 1;
            }
        }
    }

    fn insert_entry(
        &mut self,
        pos: Position,
        row: Option<Row>,
        continuous: bool,
        ctx: &mut Ctx<'_>,
    ) {
        let bytes = row_bytes(&pos, row.as_ref());
        let lru = ctx.lru.push(Evictable::Row(EntryRef {
            table: ctx.table,
            key: ctx.key.clone(),
            pos: pos.clone(),
        }));
        ctx.charge(bytes);
        self.entries.insert(
            pos,
            Entry {
                row,
                continuous,
                lru,
                bytes,
            },
        );
    }

    /// True when `pos` (not an entry's own) lies in a continuous interval.
    fn is_continuous_at(&self, pos: &Position) -> bool {
        self.entries
            .range((Bound::Excluded(pos), Bound::Unbounded))
            .next()
            .is_some_and(|(_, e)| e.continuous)
    }

    /// Marks `[lo, hi)` completely known: every row in it is cached. Dummies are put at the
    /// bounds when no entry is there.
    pub fn mark(&mut self, lo: Position, hi: Position, ctx: &mut Ctx<'_>) {
        if lo >= hi {
            return;
        }
        if !self.entries.contains_key(&lo) {
            // Nothing precedes a partition's start: a dummy there is continuous, so that
            // evicting it (it is used only by reads from the head) keeps the head known.
            let continuous =
                lo == Position::before(&bytes::Bytes::new()) || self.is_continuous_at(&lo);
            self.insert_entry(lo.clone(), None, continuous, ctx);
        }
        if !self.entries.contains_key(&hi) {
            self.insert_entry(hi.clone(), None, true, ctx);
        }
        for (_, e) in self
            .entries
            .range_mut((Bound::Excluded(&lo), Bound::Included(&hi)))
        {
            e.continuous = true;
        }
    }

    /// Merges a flushed memtable's partition in: its header always (the header is complete,
    /// and merging is reconciliation), its rows where the cache is continuous or holds the
    /// row; rows elsewhere are dropped (the sstables have them). Returns the rows merged.
    pub fn apply_flushed(
        &mut self,
        deletion: Option<DeletionTime>,
        static_row: Option<Row>,
        range_tombstones: &[RangeTombstone],
        rows: impl Iterator<Item = (ClusteringKey, Row)>,
        ctx: &mut Ctx<'_>,
    ) -> u64 {
        self.deletion = DeletionTime::max(self.deletion, deletion);
        if let Some(s) = static_row {
            match &mut self.static_row {
                Some(mine) => mine.merge(s),
                None => self.static_row = Some(s),
            }
        }
        for rt in range_tombstones {
            if !self.range_tombstones.contains(rt) {
                self.range_tombstones.push(rt.clone());
            }
        }
        self.recharge_header(ctx);
        let mut merged = 0;
        for (k, row) in rows {
            let pos = Position::at(&k);
            if self.entries.contains_key(&pos) || self.is_continuous_at(&pos) {
                self.insert_row(&k, row, ctx);
                merged += 1;
            }
        }
        merged
    }

    /// Evicts the entry at `pos`: the interval it stood in is no longer known (a dummy's
    /// two intervals become one, known only if both were). Returns true for a row.
    pub fn evict(&mut self, pos: &Position, ctx: &mut Ctx<'_>) -> bool {
        let Some(e) = self.entries.remove(pos) else {
            return false;
        };
        ctx.refund(e.bytes);
        if let Some((_, next)) = self
            .entries
            .range_mut((Bound::Excluded(pos), Bound::Unbounded))
            .next()
        {
            next.continuous = next.continuous && e.continuous && e.row.is_none();
        }
        e.row.is_some()
    }

    /// Drops every entry from the LRU and refunds the whole partition (it is removed).
    pub fn release(self, ctx: &mut Ctx<'_>) -> (u64, u64) {
        let rows = self.row_count() as u64;
        for e in self.entries.values() {
            ctx.lru.remove(e.lru);
            ctx.refund(e.bytes);
        }
        ctx.refund(self.header_bytes);
        (rows, self.entries.len() as u64)
    }

    /// Refunds the header (the partition is removed after its last entry was evicted).
    pub fn refund_header(&self, ctx: &mut Ctx<'_>) {
        ctx.refund(self.header_bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::LivenessInfo;
    use bytes::Bytes;

    fn k(b: u8) -> ClusteringKey {
        ClusteringKey(Bytes::from(vec![0x10, b]))
    }

    fn row() -> Row {
        Row {
            marker: Some(LivenessInfo::live(1)),
            ..Row::default()
        }
    }

    fn all() -> (Position, Position) {
        let r = crate::model::ClusteringRange::all();
        (Position::before(&r.start), Position::before(&r.end))
    }

    /// Rows `[from, to]` read forward from the head, as a populating read marks them.
    fn populated(
        lru: &mut Lru<Evictable>,
        key: &DecoratedKey,
        from: u8,
        to: u8,
    ) -> CachedPartition {
        let mut ctx = Ctx::new(lru, 1, key);
        let mut p = CachedPartition::new(None, None, Vec::new(), &mut ctx);
        let (lo, _) = all();
        let mut cursor = lo;
        for b in from..=to {
            p.insert_row(&k(b), row(), &mut ctx);
            p.mark(cursor, Position::at(&k(b)), &mut ctx);
            cursor = Position::at(&k(b));
        }
        p
    }

    fn keys(rows: &[(ClusteringKey, Row)]) -> Vec<u8> {
        rows.iter()
            .filter_map(|(k, _)| k.0.get(1).copied())
            .collect()
    }

    #[test]
    fn population_marks_exactly_the_interval_read() {
        let mut lru = Lru::default();
        let key = DecoratedKey::new(Bytes::from_static(b"p"));
        // A `LIMIT 3` read from the head: rows 1..=3 and "nothing before row 1".
        let p = populated(&mut lru, &key, 1, 3);
        let (lo, hi) = all();
        let mut out = Vec::new();
        let end = p.walk_forward(&lo, &hi, 10, &mut lru, &mut out);
        assert_eq!(keys(&out), vec![1, 2, 3]);
        assert_eq!(
            end,
            WalkEnd::Gap(Position::at(&k(3))),
            "nothing known past row 3"
        );
        // Reversed from the end: unknown at once.
        let mut out = Vec::new();
        assert_eq!(
            p.walk_reverse(&hi, &lo, 10, &mut lru, &mut out),
            WalkEnd::Gap(hi.clone())
        );
        // Just past row 3 is unknown (the read stopped at row 3); below it all is known.
        let mut out = Vec::new();
        let past = Position::after(&k(3));
        assert_eq!(
            p.walk_reverse(&past, &lo, 10, &mut lru, &mut out),
            WalkEnd::Gap(past.clone())
        );
        let mut out = Vec::new();
        let from = Position::at(&k(3));
        assert_eq!(
            p.walk_reverse(&from, &lo, 10, &mut lru, &mut out),
            WalkEnd::Done
        );
        assert_eq!(keys(&out), vec![2, 1]);
    }

    #[test]
    fn evicting_a_row_breaks_continuity_next_to_it_only() {
        let mut lru = Lru::default();
        let key = DecoratedKey::new(Bytes::from_static(b"p"));
        let mut p = populated(&mut lru, &key, 1, 5);
        let mut ctx = Ctx::new(&mut lru, 1, &key);
        assert!(p.evict(&Position::at(&k(3)), &mut ctx));
        assert!(ctx.bytes < 0, "eviction refunds");
        let (lo, hi) = all();
        let mut out = Vec::new();
        let end = p.walk_forward(&lo, &hi, 10, &mut lru, &mut out);
        assert_eq!(keys(&out), vec![1, 2]);
        assert_eq!(end, WalkEnd::Gap(Position::at(&k(2))));
        // Past the hole, rows 4 and 5 are still known to follow each other.
        let mut out = Vec::new();
        let from = Position::at(&k(4));
        let to = Position::at(&k(5));
        assert_eq!(
            p.walk_forward(&from, &to, 10, &mut lru, &mut out),
            WalkEnd::Done
        );
        assert!(out.is_empty());
    }

    #[test]
    fn one_eviction_step_removes_one_entry_of_a_large_partition() {
        let mut lru = Lru::default();
        let key = DecoratedKey::new(Bytes::from_static(b"p"));
        let mut p = populated(&mut lru, &key, 0, 200);
        let before = p.entry_count();
        let oldest = match lru.pop_oldest() {
            Some(Evictable::Row(r)) => Some(r.pos),
            _ => None,
        };
        let mut ctx = Ctx::new(&mut lru, 1, &key);
        if let Some(pos) = oldest {
            p.evict(&pos, &mut ctx);
        }
        assert_eq!(p.entry_count(), before - 1);
    }

    #[test]
    fn a_flush_merges_only_where_the_cache_is_continuous() {
        let mut lru = Lru::default();
        let key = DecoratedKey::new(Bytes::from_static(b"p"));
        // Rows 10..=12 known from the head; nothing known after 12.
        let mut p = populated(&mut lru, &key, 10, 12);
        let mut ctx = Ctx::new(&mut lru, 1, &key);
        let rows = [5u8, 11, 20].into_iter().map(|b| (k(b), row()));
        let merged = p.apply_flushed(None, None, &[], rows, &mut ctx);
        assert_eq!(
            merged, 2,
            "row 5 (a known gap) and row 11 (cached); not row 20"
        );
        let (lo, hi) = all();
        let mut out = Vec::new();
        p.walk_forward(&lo, &hi, 10, &mut lru, &mut out);
        assert_eq!(keys(&out), vec![5, 10, 11, 12]);
    }
}
