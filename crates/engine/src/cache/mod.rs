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
//! partitions where they are continuous ([`RowCache::apply_flushed`], one partition per lock
//! hold, so readers interleave; partitions not cached are skipped without being copied);
//! [`RowCache::end_update`] advances the phase again once the new sstables are published.
//! Readers that still see the memtable see its data twice meanwhile, which reconciliation
//! makes harmless.
//!
//! **Isolation.** One lock (the tracker's) covers every table's cache and the LRU. Readers
//! copy rows out in batches under it; a partition is changed only under it, one whole
//! partition update at a time. A flush merge may bring into the cache a write that a read
//! begun *before the memtable was sealed* does not see (it arrived in the memtable after the
//! read looked there); such a read, copying the cache batch by batch, could see part of that
//! write. So a read uses the cache only if it began after the memtable being (or last)
//! merged was sealed, and after the last invalidation (`read_floor`); otherwise it continues
//! from its own sstables. A read begun after the seal sees the whole memtable in its
//! snapshot, so whatever the merge adds to the cache it sees anyway: reads served by the
//! cache during a flush merge see all of a write or none, without MVCC versions. Only reads
//! that straddle a memtable switch *and* the merge that follows read their sstables
//! (ScyllaDB's MVCC versions avoid even that). A reader between batches may also find what it
//! had not read yet evicted: it continues from the sstables too (its position is a clustering
//! position, never a reference).
//!
//! **Eviction.** One LRU for every table's entries (rows and dummies), most recent last;
//! inserting and reading count as uses. Past the byte budget, entries are evicted one at a
//! time from the LRU's old end — each step is bounded work, whatever the partition's size —
//! breaking the continuity next to the evicted entry; a partition left without entries goes.

pub mod lru;
pub mod partition;
pub mod source;

use crate::model::DecoratedKey;
use lru::Lru;
use parking_lot::Mutex;
use partition::{CachedPartition, Ctx, EntryRef};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
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
}

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
    lru: Lru<EntryRef>,
    bytes: usize,
    budget: usize,
    stats: CacheStats,
}

/// The cache of every table of a database: one byte budget and one LRU.
pub struct CacheTracker {
    inner: Mutex<Inner>,
    next_table: AtomicU64,
}

impl std::fmt::Debug for CacheTracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheTracker")
            .field("stats", &self.stats())
            .finish()
    }
}

impl CacheTracker {
    /// A cache holding at most `budget` bytes.
    pub fn new(budget: usize) -> Arc<Self> {
        Arc::new(CacheTracker {
            inner: Mutex::new(Inner {
                tables: HashMap::new(),
                lru: Lru::default(),
                bytes: 0,
                budget,
                stats: CacheStats::default(),
            }),
            next_table: AtomicU64::new(1),
        })
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
        s
    }

    /// Evicts every entry of every table, one eviction step at a time from the LRU's old end
    /// (counted as evictions, not removals: ScyllaDB's reclaim of all cache memory).
    pub fn evict_all(&self) {
        // Evicting keeps what stays cached true to the sstables, so unlike invalidation it
        // leaves the phase alone: a read in flight may populate again.
        let mut g = self.inner.lock();
        while g.evict_one() {}
    }
}

impl Inner {
    /// Applies a partition operation's accounting, then evicts down to the budget.
    fn settle(&mut self, bytes: isize, row_insertions: u64) {
        self.bytes = self.bytes.saturating_add_signed(bytes);
        self.stats.row_insertions += row_insertions;
        while self.bytes > self.budget {
            if !self.evict_one() {
                break;
            }
        }
    }

    /// One eviction step: the least recently used entry. Bounded work.
    fn evict_one(&mut self) -> bool {
        let Some(r) = self.lru.pop_oldest() else {
            return false;
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
    pub fn apply_flushed(&self, key: &DecoratedKey, p: crate::model::Partition) {
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
        let merged = cached.apply_flushed(
            p.deletion,
            p.static_row,
            &p.range_tombstones,
            p.rows.into_iter(),
            &mut ctx,
        );
        stats.partition_merges += 1;
        stats.rows_merged_from_memtable += merged;
        let (bytes, ins) = (ctx.bytes, ctx.row_insertions);
        g.settle(bytes, ins);
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

impl Drop for RowCache {
    fn drop(&mut self) {
        let mut g = self.tracker.inner.lock();
        g.clear_table(self.slot);
        g.tables.remove(&self.slot);
    }
}
