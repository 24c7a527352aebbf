//! The index-page cache: partition-index pages of sstables, kept in the row cache's LRU and
//! charged to its byte budget (ScyllaDB's index cache with `index_cache_fraction`).
//!
//! A point lookup in an sstable costs an index page (about 4 KiB) plus the data chunk; with
//! the page cached it costs the chunk alone, which is what makes small chunks pay off.
//!
//! Invariants:
//! - every cached page is in two lists: the shared LRU (as [`Evictable::IndexPage`]), where
//!   it ages with the rows and is evicted from the old end like them, and this store's own
//!   `order`, least recently used first, from which pages are evicted whenever their bytes
//!   pass their bound (a fraction of the budget) — so index pages never crowd out more than
//!   that fraction of the cache, however hot they are;
//! - a page is found only under its sstable's tracker number, issued when the sstable opened
//!   and never reused; the sstable's pages go when its reader is dropped (after compaction,
//!   DROP or TRUNCATE released it), so no page outlives the file it came from;
//! - a page is kept as its verified body, as on disk: a point lookup scans it without
//!   decoding the other entries, as it scans a page read from disk, and a page costs its own
//!   size plus a fixed overhead (decoded entries would cost 64 bytes of handles each, three
//!   times a small entry, so the fraction would hold a third as many pages).

use super::key::{Evictable, PageKey};
use super::lru::Lru;
use bytes::Bytes;
use std::collections::HashMap;

/// Bytes a page costs besides its body: the maps' slots and the two LRU nodes.
const PAGE_OVERHEAD: usize = 160;

struct Cached {
    body: Bytes,
    /// Handle in the shared LRU.
    lru: usize,
    /// Handle in `order`.
    order: usize,
    bytes: usize,
}

/// Counters of the index-page cache (ScyllaDB's `sstables_index_page_cache_*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IndexPageStats {
    /// Lookups that found their page cached.
    pub hits: u64,
    /// Lookups that had to read their page.
    pub misses: u64,
    /// Pages inserted.
    pub populations: u64,
    /// Pages evicted (from the shared LRU's old end, or to keep within the fraction).
    pub evictions: u64,
    /// Pages cached now.
    pub pages: u64,
    /// Bytes the cached pages are charged now.
    pub bytes: u64,
}

/// The cached pages of every sstable.
#[derive(Default)]
pub struct IndexPages {
    sstables: HashMap<u64, HashMap<u32, Cached>>,
    /// Index pages only, least recently used first.
    order: Lru<PageKey>,
    bytes: usize,
    stats: IndexPageStats,
}

impl IndexPages {
    /// The page `key`, marked used in both lists; counts a hit or a miss.
    pub fn get(&mut self, key: PageKey, lru: &mut Lru<Evictable>) -> Option<Bytes> {
        let found = self
            .sstables
            .get(&key.sstable)
            .and_then(|pages| pages.get(&key.page));
        match found {
            Some(c) => {
                lru.touch(c.lru);
                self.order.touch(c.order);
                self.stats.hits += 1;
                Some(c.body.clone())
            }
            None => {
                self.stats.misses += 1;
                None
            }
        }
    }

    /// Caches the page body `body` as the most recently used, unless it is there already or
    /// alone would pass `limit`; then evicts the oldest pages while the pages hold more than
    /// `limit`. Returns the bytes charged (negative: freed).
    pub fn insert(
        &mut self,
        key: PageKey,
        body: Bytes,
        limit: usize,
        lru: &mut Lru<Evictable>,
    ) -> isize {
        let bytes = PAGE_OVERHEAD + body.len();
        let pages = self.sstables.entry(key.sstable).or_default();
        if bytes > limit || pages.contains_key(&key.page) {
            if pages.is_empty() {
                self.sstables.remove(&key.sstable);
            }
            return 0;
        }
        let cached = Cached {
            body,
            lru: lru.push(Evictable::IndexPage(key)),
            order: self.order.push(key),
            bytes,
        };
        pages.insert(key.page, cached);
        self.bytes += bytes;
        self.stats.populations += 1;
        let mut charged = signed(bytes);
        while self.bytes > limit {
            let Some(oldest) = self.order.pop_oldest() else {
                break;
            };
            charged -= signed(self.remove(oldest, lru));
            self.stats.evictions += 1;
        }
        charged
    }

    /// The shared LRU evicted page `key` (already out of it): drops the page. Returns the
    /// bytes freed.
    pub fn evicted(&mut self, key: PageKey) -> usize {
        let Some(c) = self.take(key) else {
            return 0;
        };
        self.order.remove(c.order);
        self.stats.evictions += 1;
        c.bytes
    }

    /// Drops every page of `sstable` (its reader is gone). Returns the bytes freed.
    pub fn drop_sstable(&mut self, sstable: u64, lru: &mut Lru<Evictable>) -> usize {
        let Some(pages) = self.sstables.remove(&sstable) else {
            return 0;
        };
        let mut freed = 0;
        for c in pages.into_values() {
            lru.remove(c.lru);
            self.order.remove(c.order);
            freed += c.bytes;
        }
        self.bytes -= freed;
        freed
    }

    /// Drops every page. Returns the bytes freed.
    pub fn clear(&mut self, lru: &mut Lru<Evictable>) -> usize {
        let ids: Vec<u64> = self.sstables.keys().copied().collect();
        ids.into_iter().map(|id| self.drop_sstable(id, lru)).sum()
    }

    /// Bytes the cached pages are charged.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The counters, with the current sizes.
    pub fn stats(&self) -> IndexPageStats {
        IndexPageStats {
            pages: self.order.len() as u64,
            bytes: self.bytes as u64,
            ..self.stats
        }
    }

    /// Removes page `key` (already out of `order`) from the maps and the shared LRU.
    fn remove(&mut self, key: PageKey, lru: &mut Lru<Evictable>) -> usize {
        match self.take(key) {
            Some(c) => {
                lru.remove(c.lru);
                c.bytes
            }
            None => 0,
        }
    }

    fn take(&mut self, key: PageKey) -> Option<Cached> {
        let pages = self.sstables.get_mut(&key.sstable)?;
        let c = pages.remove(&key.page);
        if pages.is_empty() {
            self.sstables.remove(&key.sstable);
        }
        if let Some(c) = &c {
            self.bytes -= c.bytes;
        }
        c
    }
}

fn signed(n: usize) -> isize {
    isize::try_from(n).unwrap_or(isize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(n: usize) -> Bytes {
        Bytes::from(vec![7u8; n])
    }

    fn key(sstable: u64, page: u32) -> PageKey {
        PageKey { sstable, page }
    }

    #[test]
    fn pages_stay_within_their_limit_oldest_first() {
        let mut lru = Lru::default();
        let mut pages = IndexPages::default();
        let one = PAGE_OVERHEAD + 1000;
        let limit = one * 3;
        for p in 0..3 {
            assert_eq!(
                pages.insert(key(1, p), page(1000), limit, &mut lru),
                signed(one)
            );
        }
        assert!(pages.get(key(1, 0), &mut lru).is_some());
        // A fourth page evicts the least recently used one: page 1 (page 0 was just used).
        assert_eq!(pages.insert(key(1, 3), page(1000), limit, &mut lru), 0);
        assert!(pages.bytes() <= limit);
        assert!(pages.get(key(1, 1), &mut lru).is_none());
        assert!(pages.get(key(1, 0), &mut lru).is_some());
        assert_eq!(lru.len(), 3, "the evicted page left the shared LRU too");
        // A page larger than the limit is not cached at all.
        assert_eq!(pages.insert(key(2, 0), page(limit), limit, &mut lru), 0);
        assert!(pages.get(key(2, 0), &mut lru).is_none());
        // The shared LRU's eviction and a dropped sstable free their bytes.
        let Some(Evictable::IndexPage(k)) = lru.pop_oldest() else {
            panic!("the oldest entry is a page");
        };
        assert_eq!(pages.evicted(k), one);
        assert_eq!(pages.drop_sstable(1, &mut lru), 2 * one);
        assert_eq!((pages.bytes(), lru.len()), (0, 0));
        let s = pages.stats();
        assert_eq!((s.populations, s.evictions, s.pages), (4, 2, 0));
    }
}
