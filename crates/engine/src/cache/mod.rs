//! The row cache: a read-through mirror of a table's sstables, kept in memory row by row
//! (ScyllaDB's design; see `docs/architecture.md`).
//!
//! **Contract.** From the outside a table's cache holds exactly what its sstables hold (the
//! merged set [`crate::read::Snapshot`] of them): a read through [`source::CachedSource`] gives what the
//! sstables give. Inside, it holds a subset — some partitions, some of their rows — and knows
//! which intervals are complete (*continuous*, see [`partition`]): a read that stays within
//! them touches no sstable, including "this partition does not exist" (a partition known
//! empty) and "no rows before this one" (a `LIMIT 1` at a partition's head).
//!
//! **Population.** A read that finds a gap reads the sources from there to the end of its
//! slice, inserting the rows it pulls and marking continuous exactly the interval it covered
//! (up to the last row pulled when a `LIMIT` stops it early). Every change of a table's
//! sstable set (and every memtable switch) advances the table's *phase*; a read carries the
//! phase of the snapshot it started on, and populates only while that is still the table's
//! phase and no flush is being merged in — otherwise it counts a mispopulation and only reads
//! (its sstables may lack data a flush has since moved from a memtable into the cache).
//!
//! **Flush.** Switching the active memtable out *seals* it ([`RowCache::seal`]): the phase
//! advances, and the new table state carries it, so a read knows whether its snapshot holds
//! that memtable sealed (whole) or still active (taking writes). [`RowCache::begin_update`]
//! advances the phase and blocks population; the flushed memtable is merged into cached
//! partitions where they are continuous ([`RowCache::apply_flushed`]; partitions not cached
//! are skipped without being copied), at most [`MERGE_BATCH`] rows per lock hold: the merge
//! yields between rows, so no cache user — a read of any table, an index-page lookup, a
//! writer giving way — waits behind a whole partition, let alone a whole memtable (seed 004's
//! preemptible merge); [`RowCache::end_update`] advances the phase again once the new
//! sstables are published.
//! Readers that still see the memtable see its data twice meanwhile, which reconciliation
//! makes harmless.
//!
//! **Isolation.** One lock (the tracker's) covers every table's cache and the LRU. Readers
//! copy rows out in batches under it; a partition is changed only under it — a flushed
//! partition in several holds of [`MERGE_BATCH`] rows. A flush merge may bring into the
//! cache a write that a read begun *before the memtable was sealed* does not see (it arrived
//! in the memtable after the read looked there); such a read, copying the cache batch by
//! batch, could see part of that write. So a read uses the cache only if it began after the
//! memtable being (or last) merged was sealed, and after the last invalidation
//! (`read_floor`); otherwise it continues from its own sstables. A read begun after the seal
//! sees the whole memtable in its snapshot, so whatever the merge adds to the cache it sees
//! anyway — also between two batches of one partition, when the cache holds part of a
//! flushed write: the rest comes from the memtable, and reconciliation makes the rows seen
//! twice harmless. Reads served by the cache during a flush merge therefore see all of a
//! write or none, without MVCC versions. Only reads that straddle a memtable switch *and*
//! the merge that follows read their sstables (ScyllaDB's MVCC versions avoid even that).
//! Population is stopped during the merge, so between two batches only eviction touches the
//! partition; it only removes entries (breaking continuity around them), and when it
//! removed the whole partition the rest of its merge is dropped — the sstables about to be
//! published hold it. A reader between batches may also find what it had not read yet
//! evicted: it continues from the sstables too (its position is a clustering position,
//! never a reference).
//!
//! **Eviction.** One LRU for every table's entries (rows and dummies), most recent last;
//! inserting and reading count as uses. Past the limit (the byte budget, less what memtables
//! need; below), entries are evicted one at a
//! time from the LRU's old end — each step is bounded work, whatever the partition's size —
//! breaking the continuity next to the evicted entry; a partition left without entries goes.
//!
//! **Index pages.** The same LRU and budget hold sstables' partition-index pages
//! ([`index_pages`]), bounded to `index_fraction` of the budget (ScyllaDB's
//! `index_cache_fraction`, 0.2 by default), so a cold point read of a small partition costs
//! its data chunk alone. Only point reads that use the cache use them: not `BYPASS CACHE`,
//! not a table with caching disabled, not scans or compaction. Pages are immutable, so they
//! need no phase: an sstable's pages go when its reader is dropped ([`IndexPageCache`]).
//!
//! **Memory shared with memtables.** The node's memory for data is `row_cache_size` plus
//! `memtable_space`: memtables normally stay below `memtable_space` (flushes start there) and
//! the cache fills its budget. When writes outpace flushes, memtables grow past
//! `memtable_space` (up to twice it, where writers wait for flushes, as they always have);
//! the database then hands the excess to [`CacheTracker::give_way`], and the cache's limit
//! becomes its budget minus that excess, so cache and memtables together stay within the sum
//! (the cache shrinks to nothing at worst). The cache gives way, never the writer:
//! `give_way` stores the excess in an atomic and evicts only if it gets the lock without
//! waiting (`try_lock`), at most [`GIVE_WAY_STEPS`] entries — bounded work that keeps up
//! with memtable growth, since one write adds about one row and every eviction frees at
//! least an entry's overhead. When the lock is busy the holder (a read populating, a flush
//! merging) evicts down to the same limit before it lets go, so the cache catches up at once.
//! When flushes free memtable memory, the excess falls and the cache may grow again.

pub mod index_pages;
pub mod key;
pub mod lru;
pub mod partition;
pub mod source;

use crate::model::DecoratedKey;
use index_pages::{IndexPageStats, IndexPages};
use key::{Evictable, PageKey};
use lru::Lru;
use parking_lot::Mutex;
use partition::{CachedPartition, Ctx};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// Counters of the whole cache (ScyllaDB's `scylla_cache_*` meanings).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Reads started through the cache.
    pub reads: u64,
    /// Reads that had to read from sstables.
    pub reads_with_misses: u64,
    /// Partitions found in the cache.
    pub partition_hits: u64,
    /// Partitions not found in the cache.
    pub partition_misses: u64,
    /// Rows read from the cache.
    pub row_hits: u64,
    /// Rows read from the sstables by reads through the cache.
    pub row_misses: u64,
    /// Partitions inserted.
    pub partition_insertions: u64,
    /// Rows inserted.
    pub row_insertions: u64,
    /// Rows evicted.
    pub row_evictions: u64,
    /// Partitions evicted (their last entry went).
    pub partition_evictions: u64,
    /// Partitions removed by invalidation.
    pub partition_removals: u64,
    /// Rows removed by invalidation.
    pub row_removals: u64,
    /// Cached partitions a flush merged into.
    pub partition_merges: u64,
    /// Rows a flush merged in.
    pub rows_merged_from_memtable: u64,
    /// Populations skipped because the sstable set changed under the read.
    pub mispopulations: u64,
    /// Partitions cached now.
    pub partitions: u64,
    /// Rows cached now.
    pub rows: u64,
    /// Bytes used now.
    pub bytes_used: u64,
    /// The budget.
    pub bytes_total: u64,
    /// The limit now: the budget minus what memtables hold past their space (see the module
    /// doc).
    pub bytes_limit: u64,
    /// The index-page cache's counters (its bytes are part of `bytes_used`).
    pub index_pages: IndexPageStats,
    /// The most index pages may take: the budget's `index_fraction`.
    pub index_bytes_total: u64,
}

/// Rows of a flushed partition merged per lock hold ([`RowCache::apply_flushed`]).
pub const MERGE_BATCH: usize = 64;

/// Entries one [`CacheTracker::give_way`] evicts at most.
pub const GIVE_WAY_STEPS: usize = 32;

/// ScyllaDB's default `index_cache_fraction`: index pages may hold at most this share of the
/// cache's budget.
pub const DEFAULT_INDEX_FRACTION: f64 = 0.2;

/// One table's part of the cache.
#[derive(Default)]
struct TableCache {
    /// Advanced by every change of the table's sstable set and every memtable switch.
    phase: u64,
    /// Flushes being merged in (population waits for none).
    updating: u32,
    /// Reads of an older phase may not read the cache (see [`TableCache::may_read`]).
    read_floor: u64,
    /// The phases memtables were sealed in, oldest first, not merged in yet.
    sealed: VecDeque<u64>,
    partitions: BTreeMap<DecoratedKey, CachedPartition>,
}

impl TableCache {
    /// True when a read of `phase` may populate the cache: the sstable set is still the
    /// read's, and no flush is being merged in.
    fn may_populate(&self, phase: u64) -> bool {
        self.phase == phase && self.updating == 0
    }

    /// True when a read of `phase` may read from the cache: it began after the memtable
    /// last merged in (or being merged in) was sealed, so it sees that memtable whole and
    /// what the merge adds to the cache is already in its view; and after the last
    /// invalidation.
    fn may_read(&self, phase: u64) -> bool {
        phase >= self.read_floor
    }
}

struct Inner {
    tables: HashMap<u64, TableCache>,
    index: IndexPages,
    lru: Lru<Evictable>,
    /// Bytes of rows, partitions and index pages.
    bytes: usize,
    budget: usize,
    /// Bytes memtables hold past their space, given way by the cache (shared with the tracker,
    /// which writers update without the lock).
    pressure: Arc<AtomicUsize>,
    index_fraction: f64,
    stats: CacheStats,
}

/// The cache of every table of a database: one byte budget and one LRU.
pub struct CacheTracker {
    inner: Mutex<Inner>,
    pressure: Arc<AtomicUsize>,
    next_table: AtomicU64,
    next_sstable: AtomicU64,
}

impl std::fmt::Debug for CacheTracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheTracker")
            .field("stats", &self.stats())
            .finish()
    }
}

impl CacheTracker {
    /// A cache holding at most `budget` bytes, of which index pages at most
    /// [`DEFAULT_INDEX_FRACTION`].
    pub fn new(budget: usize) -> Arc<Self> {
        Self::with_index_fraction(budget, DEFAULT_INDEX_FRACTION)
    }

    /// A cache holding at most `budget` bytes, of which index pages at most `index_fraction`
    /// (clamped to `0..=1`; 0 caches no index page).
    pub fn with_index_fraction(budget: usize, index_fraction: f64) -> Arc<Self> {
        let pressure = Arc::new(AtomicUsize::new(0));
        Arc::new(CacheTracker {
            inner: Mutex::new(Inner {
                tables: HashMap::new(),
                index: IndexPages::default(),
                lru: Lru::default(),
                bytes: 0,
                budget,
                pressure: Arc::clone(&pressure),
                index_fraction: index_fraction.clamp(0.0, 1.0),
                stats: CacheStats::default(),
            }),
            pressure,
            next_table: AtomicU64::new(1),
            next_sstable: AtomicU64::new(1),
        })
    }

    /// Memtables hold `memtable_excess` bytes past their space: the cache's limit becomes its
    /// budget minus that. Never waits: evicts at most [`GIVE_WAY_STEPS`] entries, and only if
    /// the lock is free (see the module doc).
    pub fn give_way(&self, memtable_excess: usize) {
        // Every write calls this: in the common case (memtables within their space, as they
        // were) it only reads the atomic, so writers share no written cache line and no lock.
        if self.pressure.load(Ordering::Relaxed) != memtable_excess {
            self.pressure.store(memtable_excess, Ordering::Relaxed);
        }
        if memtable_excess == 0 {
            // The limit is the budget, which every operation under the lock already keeps.
            return;
        }
        if let Some(mut g) = self.inner.try_lock() {
            for _ in 0..GIVE_WAY_STEPS {
                if g.bytes <= g.limit() || !g.evict_one() {
                    break;
                }
            }
        }
    }

    /// A newly opened sstable's handle on the index-page cache.
    pub fn index_pages(self: &Arc<Self>) -> IndexPageCache {
        IndexPageCache {
            tracker: Arc::clone(self),
            sstable: self.next_sstable.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// A new table's cache.
    pub fn table(self: &Arc<Self>) -> RowCache {
        let slot = self.next_table.fetch_add(1, Ordering::Relaxed);
        self.inner.lock().tables.insert(slot, TableCache::default());
        RowCache {
            tracker: Arc::clone(self),
            slot,
        }
    }

    /// The counters, with the current sizes.
    pub fn stats(&self) -> CacheStats {
        let g = self.inner.lock();
        let mut s = g.stats;
        s.partitions = g.tables.values().map(|t| t.partitions.len() as u64).sum();
        s.rows = g
            .tables
            .values()
            .flat_map(|t| t.partitions.values())
            .map(|p| p.row_count() as u64)
            .sum();
        s.bytes_used = g.bytes as u64;
        s.bytes_total = g.budget as u64;
        s.bytes_limit = g.limit() as u64;
        s.index_pages = g.index.stats();
        s.index_bytes_total = (g.budget as f64 * g.index_fraction) as u64;
        s
    }

    /// Evicts every entry of every table and every index page, one eviction step at a time
    /// from the LRU's old end (counted as evictions, not removals: ScyllaDB's reclaim of all
    /// cache memory).
    pub fn evict_all(&self) {
        // Evicting keeps what stays cached true to the sstables, so unlike invalidation it
        // leaves the phase alone: a read in flight may populate again.
        let mut g = self.inner.lock();
        while g.evict_one() {}
    }

    /// Drops every cached index page (ScyllaDB's `drop_sstable_caches`; Cassandra's
    /// `invalidatekeycache`, the key cache being what index pages stand in for). Rows are
    /// each table's to invalidate (`Table::invalidate_cache`), with their phases.
    pub fn drop_index_pages(&self) {
        let mut g = self.inner.lock();
        let Inner { index, lru, .. } = &mut *g;
        let freed = index.clear(lru);
        g.bytes = g.bytes.saturating_sub(freed);
    }
}

impl Inner {
    /// The budget less what memtables hold past their space.
    fn limit(&self) -> usize {
        self.budget
            .saturating_sub(self.pressure.load(Ordering::Relaxed))
    }

    /// Applies a partition operation's accounting, then evicts down to the limit.
    fn settle(&mut self, bytes: isize, row_insertions: u64) {
        self.bytes = self.bytes.saturating_add_signed(bytes);
        self.stats.row_insertions += row_insertions;
        let limit = self.limit();
        while self.bytes > limit {
            if !self.evict_one() {
                break;
            }
        }
    }

    /// The most bytes index pages may hold: their fraction of the limit.
    fn index_limit(&self) -> usize {
        // Exact for any budget a machine has (below 2^53 bytes).
        (self.limit() as f64 * self.index_fraction) as usize
    }

    /// One eviction step: the least recently used entry. Bounded work.
    fn evict_one(&mut self) -> bool {
        let r = match self.lru.pop_oldest() {
            None => return false,
            Some(Evictable::IndexPage(k)) => {
                let freed = self.index.evicted(k);
                self.bytes = self.bytes.saturating_sub(freed);
                return true;
            }
            Some(Evictable::Row(r)) => r,
        };
        let Inner {
            tables, lru, stats, ..
        } = self;
        let mut ctx = Ctx::new(lru, r.table, &r.key);
        if let Some(t) = tables.get_mut(&r.table) {
            let emptied = match t.partitions.get_mut(&r.key) {
                Some(p) => {
                    if p.evict(&r.pos, &mut ctx) {
                        stats.row_evictions += 1;
                    }
                    p.entry_count() == 0
                }
                None => false,
            };
            if emptied {
                if let Some(p) = t.partitions.remove(&r.key) {
                    p.refund_header(&mut ctx);
                    stats.partition_evictions += 1;
                }
            }
        }
        let freed = ctx.bytes;
        self.bytes = self.bytes.saturating_add_signed(freed);
        true
    }

    fn clear_table(&mut self, slot: u64) {
        let Some(t) = self.tables.get_mut(&slot) else {
            return;
        };
        t.phase += 1;
        // Reads begun before may not read what reads after it populate (new sstables).
        t.read_floor = t.phase;
        let parts = std::mem::take(&mut t.partitions);
        let mut freed = 0isize;
        for (key, p) in parts {
            let mut ctx = Ctx::new(&mut self.lru, slot, &key);
            let (rows, _) = p.release(&mut ctx);
            freed += ctx.bytes;
            self.stats.row_removals += rows;
            self.stats.partition_removals += 1;
        }
        self.bytes = self.bytes.saturating_add_signed(freed);
    }
}

/// One table's cache: a handle on the tracker. Dropping it removes the table's entries.
pub struct RowCache {
    tracker: Arc<CacheTracker>,
    slot: u64,
}

impl RowCache {
    /// The table's current phase (see the module doc).
    pub fn phase(&self) -> u64 {
        self.tracker
            .inner
            .lock()
            .tables
            .get(&self.slot)
            .map_or(0, |t| t.phase)
    }

    /// Advances the phase: the sstable set is about to change without changing what it
    /// holds (compaction). Returns the new phase, which the new table state carries.
    pub fn advance_phase(&self) -> u64 {
        let mut g = self.tracker.inner.lock();
        match g.tables.get_mut(&self.slot) {
            Some(t) => {
                t.phase += 1;
                t.phase
            }
            None => 0,
        }
    }

    /// The active memtable is sealed (switched out for flushing): advances the phase, which
    /// the new table state carries, and returns it. Reads of this phase or later see the
    /// sealed memtable whole, so they may read the cache while it is merged in.
    pub fn seal(&self) -> u64 {
        let mut g = self.tracker.inner.lock();
        match g.tables.get_mut(&self.slot) {
            Some(t) => {
                t.phase += 1;
                t.sealed.push_back(t.phase);
                t.phase
            }
            None => 0,
        }
    }

    /// A flush starts merging the oldest sealed memtable in: population stops until
    /// [`RowCache::end_update`], and reads begun before that memtable was sealed stop reading
    /// the cache (it may gain writes their view of the memtable lacks).
    pub fn begin_update(&self) {
        let mut g = self.tracker.inner.lock();
        if let Some(t) = g.tables.get_mut(&self.slot) {
            t.phase += 1;
            t.updating += 1;
            let sealed = t.sealed.pop_front().unwrap_or(t.phase);
            t.read_floor = t.read_floor.max(sealed);
        }
    }

    /// Whether the partition is cached (a flush merges only into cached partitions).
    pub fn holds(&self, key: &DecoratedKey) -> bool {
        self.tracker
            .inner
            .lock()
            .tables
            .get(&self.slot)
            .is_some_and(|t| t.partitions.contains_key(key))
    }

    /// The flush is published; returns the new phase.
    pub fn end_update(&self) -> u64 {
        let mut g = self.tracker.inner.lock();
        match g.tables.get_mut(&self.slot) {
            Some(t) => {
                t.updating = t.updating.saturating_sub(1);
                t.phase += 1;
                t.phase
            }
            None => 0,
        }
    }

    /// Merges one flushed partition into the cache where it is cached (see
    /// [`CachedPartition::apply_flushed`]); a partition not cached is left to the sstables.
    /// Takes the lock once per [`MERGE_BATCH`] rows, so a large partition holds up no other
    /// cache user for long (see the module doc's "Flush" and "Isolation"); stops early when
    /// eviction removed the partition between batches (the sstables have the rest).
    pub fn apply_flushed(&self, key: &DecoratedKey, p: crate::model::Partition) {
        let mut header = Some((p.deletion, p.static_row, p.range_tombstones));
        let mut rows = p.rows.into_iter().peekable();
        loop {
            let mut g = self.tracker.inner.lock();
            let Inner {
                tables, lru, stats, ..
            } = &mut *g;
            let Some(cached) = tables
                .get_mut(&self.slot)
                .and_then(|t| t.partitions.get_mut(key))
            else {
                return;
            };
            let mut ctx = Ctx::new(lru, self.slot, key);
            // The header goes in with the first batch; later batches bring rows only.
            let first = header.is_some();
            let (deletion, static_row, range_tombstones) = header.take().unwrap_or_default();
            let merged = cached.apply_flushed(
                deletion,
                static_row,
                &range_tombstones,
                rows.by_ref().take(MERGE_BATCH),
                &mut ctx,
            );
            stats.partition_merges += u64::from(first);
            stats.rows_merged_from_memtable += merged;
            let (bytes, ins) = (ctx.bytes, ctx.row_insertions);
            g.settle(bytes, ins);
            if rows.peek().is_none() {
                return;
            }
        }
    }

    /// Drops everything cached for the table (TRUNCATE, DROP, sstables loaded from outside,
    /// an operator's invalidation); returns the new phase, which the table state must carry
    /// for reads to populate again.
    pub fn invalidate(&self) -> u64 {
        let mut g = self.tracker.inner.lock();
        g.clear_table(self.slot);
        g.tables.get(&self.slot).map_or(0, |t| t.phase)
    }

    /// The tracker.
    pub fn tracker(&self) -> &Arc<CacheTracker> {
        &self.tracker
    }
}

/// One sstable's handle on the index-page cache ([`index_pages`]); dropping it (with the
/// sstable's reader) drops the sstable's pages.
pub struct IndexPageCache {
    tracker: Arc<CacheTracker>,
    sstable: u64,
}

impl IndexPageCache {
    /// The body of page `page` of the sstable's partition index, if cached (counted as a hit
    /// or a miss).
    pub fn get(&self, page: u32) -> Option<bytes::Bytes> {
        let key = PageKey {
            sstable: self.sstable,
            page,
        };
        let mut g = self.tracker.inner.lock();
        let Inner { index, lru, .. } = &mut *g;
        index.get(key, lru)
    }

    /// Caches page `page`'s verified body, then evicts down to the budget.
    pub fn insert(&self, page: u32, body: bytes::Bytes) {
        let key = PageKey {
            sstable: self.sstable,
            page,
        };
        let mut g = self.tracker.inner.lock();
        let limit = g.index_limit();
        let Inner { index, lru, .. } = &mut *g;
        let bytes = index.insert(key, body, limit, lru);
        g.settle(bytes, 0);
    }
}

impl IndexPageCache {
    /// Drops every cached page of the sstable (its table stopped using the cache).
    pub fn clear(&self) {
        let mut g = self.tracker.inner.lock();
        let Inner { index, lru, .. } = &mut *g;
        let freed = index.drop_sstable(self.sstable, lru);
        g.bytes = g.bytes.saturating_sub(freed);
    }
}

impl Drop for IndexPageCache {
    fn drop(&mut self) {
        self.clear();
    }
}

impl std::fmt::Debug for IndexPageCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "IndexPageCache({})", self.sstable)
    }
}

impl Drop for RowCache {
    fn drop(&mut self) {
        let mut g = self.tracker.inner.lock();
        g.clear_table(self.slot);
        g.tables.remove(&self.slot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(n: usize) -> bytes::Bytes {
        bytes::Bytes::from(vec![1u8; n])
    }

    /// A 100 000-byte cache whose pages may fill it, holding ten pages of 5 000 bytes.
    fn ten_pages() -> (Arc<CacheTracker>, IndexPageCache) {
        let tracker = CacheTracker::with_index_fraction(100_000, 1.0);
        let pages = tracker.index_pages();
        for p in 0..10 {
            pages.insert(p, body(5000));
        }
        (tracker, pages)
    }

    #[test]
    fn memtable_pressure_shrinks_the_limit_and_evicts() {
        let (tracker, pages) = ten_pages();
        let full = tracker.stats();
        assert_eq!(full.index_pages.pages, 10);
        tracker.give_way(60_000);
        let s = tracker.stats();
        assert_eq!(s.bytes_limit, 40_000);
        assert!(s.bytes_used <= s.bytes_limit, "{s:?}");
        assert!(s.index_pages.pages < 10);
        // The least recently used pages went first.
        assert!(pages.get(0).is_none());
        assert!(pages.get(9).is_some());
        // Pressure gone: the cache may grow again.
        tracker.give_way(0);
        pages.insert(20, body(5000));
        assert_eq!(tracker.stats().bytes_limit, 100_000);
        assert!(pages.get(20).is_some());
    }

    #[test]
    fn giving_way_never_waits_for_the_lock() {
        let (tracker, pages) = ten_pages();
        {
            // The lock is held (here by this very thread, so waiting would never end): the
            // writer's call returns at once, having only recorded the pressure.
            let _held = tracker.inner.lock();
            tracker.give_way(90_000);
        }
        let s = tracker.stats();
        assert_eq!((s.bytes_limit, s.index_pages.pages), (10_000, 10));
        // The next operation under the lock evicts down to the limit.
        pages.insert(10, body(10));
        let s = tracker.stats();
        assert!(s.bytes_used <= 10_000, "{s:?}");
    }
}
