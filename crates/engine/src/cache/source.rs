//! The cache as a source of partitions: reads served from continuous intervals, gaps read
//! through to the sstables and populated (see the module doc of [`super`]).

use super::key::Evictable;
use super::lru::Lru;
use super::partition::{CachedPartition, Ctx, Position, WalkEnd};
use super::{CacheStats, Inner, RowCache};
use crate::error::Result;
use crate::io::Wait;
use crate::metrics::ReadKind;
use crate::model::key::after_prefix;
use crate::model::{ClusteringKey, ClusteringRange, DecoratedKey, DeletionTime, PartitionPos};
use crate::model::{RangeTombstone, Row, Slice};
use crate::read::source::SourceQuery;
use crate::read::source::{PartitionScan, PartitionSource, RowStream, SourcePartition};
use crate::read::Snapshot;
use crate::trace::{self, Trace};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Rows copied out of the cache per lock hold: a few first (a `LIMIT 1` copies little), then
/// more.
const BATCHES: [usize; 3] = [4, 16, 64];

/// A table's cache in front of the sstables of one snapshot.
pub struct CachedSource {
    cache: Arc<RowCache>,
    /// The phase the snapshot was taken in: the read populates only while it is current.
    phase: u64,
    /// The sstables the cache mirrors (no memtables).
    underlying: Snapshot,
    /// The sstables reads through this source went to (see `sstables_read`).
    sstables_read: Arc<AtomicUsize>,
}

impl CachedSource {
    /// The cache of `underlying`'s table, as of `phase`.
    pub fn new(cache: Arc<RowCache>, phase: u64, underlying: Snapshot) -> Self {
        CachedSource {
            cache,
            phase,
            underlying,
            sstables_read: Arc::new(AtomicUsize::new(0)),
        }
    }
}

/// A partition's complete header, as read from the sstables.
#[derive(Clone)]
struct Header {
    deletion: Option<DeletionTime>,
    static_row: Option<Row>,
    range_tombstones: Vec<RangeTombstone>,
}

impl RowCache {
    /// Runs `f` on the table's cached partition `key` under the lock, creating it from
    /// `header` when absent, if the read of `phase` may still populate; counts a
    /// mispopulation otherwise. Returns false when it may not.
    fn populate(
        &self,
        phase: u64,
        key: &DecoratedKey,
        header: &Header,
        f: impl FnOnce(&mut CachedPartition, &mut Ctx<'_>),
    ) -> bool {
        let mut g = self.tracker.inner.lock();
        let Inner {
            tables, lru, stats, ..
        } = &mut *g;
        let Some(t) = tables.get_mut(&self.slot) else {
            return false;
        };
        if !t.may_populate(phase) {
            stats.mispopulations += 1;
            return false;
        }
        let mut ctx = Ctx::new(lru, self.slot, key);
        let p = t.partitions.entry(key.clone()).or_insert_with(|| {
            stats.partition_insertions += 1;
            CachedPartition::new(
                header.deletion,
                header.static_row.clone(),
                header.range_tombstones.clone(),
                &mut ctx,
            )
        });
        f(p, &mut ctx);
        let (bytes, ins) = (ctx.bytes, ctx.row_insertions);
        g.settle(bytes, ins);
        true
    }
}

impl PartitionSource for CachedSource {
    fn sstables_read(&self) -> usize {
        self.sstables_read.load(Ordering::Relaxed)
    }

    fn trace_label(&self) -> String {
        "row cache".into()
    }

    fn partition(
        &self,
        key: &DecoratedKey,
        hash: (u64, u64),
        q: &SourceQuery<'_>,
    ) -> Result<Option<SourcePartition>> {
        let mut ranges: Vec<ClusteringRange> = q.slice.ranges().to_vec();
        if q.reversed {
            ranges.reverse();
        }
        let mut rows = CacheRows {
            cache: Arc::clone(&self.cache),
            phase: self.phase,
            key: key.clone(),
            hash,
            underlying: self.underlying.clone(),
            sstables_read: Arc::clone(&self.sstables_read),
            reversed: q.reversed,
            cursor: first_cursor(ranges.first(), q.reversed),
            ranges,
            range_idx: 0,
            buf: VecDeque::new(),
            mode: Mode::Cache,
            header: None,
            missed: false,
            populating: true,
            batches: 0,
            wait: q.wait,
            trace: q.trace.cloned(),
        };
        // `None`: the cache does not serve this read; `Some(None)`: a partition miss. A hit
        // copies its first batch of rows under the same lock hold.
        let cached = {
            let mut g = self.cache.tracker.inner.lock();
            let Inner {
                tables, lru, stats, ..
            } = &mut *g;
            stats.reads += 1;
            match tables.get(&self.cache.slot) {
                Some(t) if t.may_read(self.phase) => {
                    let hit = t.partitions.get(key).map(|p| {
                        rows.walk(Some(p), lru, stats);
                        Header {
                            deletion: p.deletion,
                            static_row: p.static_row.clone(),
                            range_tombstones: p.range_tombstones.clone(),
                        }
                    });
                    if hit.is_some() {
                        stats.partition_hits += 1;
                    } else {
                        stats.partition_misses += 1;
                    }
                    trace::event(q.trace, || {
                        String::from(if hit.is_some() {
                            "Row cache hit"
                        } else {
                            "Row cache miss"
                        })
                    });
                    Some(hit)
                }
                _ => {
                    // Read from the sstables, and not populated: a mispopulation.
                    stats.reads_with_misses += 1;
                    stats.mispopulations += 1;
                    None
                }
            }
        };
        let Some(cached) = cached else {
            // The cache has moved past this read's snapshot (a flush is merging, or merged, a
            // memtable the snapshot does not hold): the snapshot's own sstables answer.
            trace::event(q.trace, || {
                "Row cache bypassed (a flush is merging into it): reading the sstables".into()
            });
            self.sstables_read.fetch_add(
                self.underlying.sources_admitting(key, hash),
                Ordering::Relaxed,
            );
            return self.underlying.partition(key, hash, q);
        };
        let header = match cached {
            Some(h) => h,
            None => {
                let Some(p) = rows.open_underlying(q.slice.clone())? else {
                    // Known absent from here on: an empty partition, every row known.
                    let absent = Header {
                        deletion: None,
                        static_row: None,
                        range_tombstones: Vec::new(),
                    };
                    let all = ClusteringRange::all();
                    self.cache.populate(self.phase, key, &absent, |p, ctx| {
                        p.mark(
                            Position::before(&all.start),
                            Position::before(&all.end),
                            ctx,
                        );
                    });
                    return Ok(None);
                };
                p
            }
        };
        Ok(Some(SourcePartition {
            deletion: header.deletion,
            static_row: header.static_row.filter(|_| q.include_static),
            range_tombstones: header
                .range_tombstones
                .into_iter()
                .filter(|rt| q.wants(rt))
                .collect(),
            rows: Box::new(rows),
            stored_bytes: 0,
        }))
    }

    fn scan_partitions(
        &self,
        start: &PartitionPos,
        kind: ReadKind,
        wait: Wait,
    ) -> Box<dyn PartitionScan> {
        // Scans read the sstables (partition-level continuity is not kept yet).
        self.underlying.scan_partitions(start, kind, wait)
    }
}

fn first_cursor(range: Option<&ClusteringRange>, reversed: bool) -> Position {
    match (range, reversed) {
        (Some(r), false) => Position::before(&r.start),
        (Some(r), true) => Position::before(&r.end),
        (None, _) => Position::before(&bytes::Bytes::new()),
    }
}

enum Mode {
    /// Copying from the cache.
    Cache,
    /// The cache ended at the cursor: the sources are read once the rows copied before the
    /// gap are consumed (a `LIMIT` satisfied by them reads no sstable).
    Gap,
    /// Reading the sources.
    Underlying(RowStream),
    Done,
}

/// A partition's rows read through the cache.
struct CacheRows {
    cache: Arc<RowCache>,
    phase: u64,
    key: DecoratedKey,
    hash: (u64, u64),
    underlying: Snapshot,
    sstables_read: Arc<AtomicUsize>,
    reversed: bool,
    /// The slice's ranges in read order.
    ranges: Vec<ClusteringRange>,
    range_idx: usize,
    /// Everything of the current range before it (in read order) was returned; exclusive.
    cursor: Position,
    buf: VecDeque<(ClusteringKey, Row)>,
    mode: Mode,
    /// The complete header, once the sstables were read.
    header: Option<Header>,
    missed: bool,
    /// False once a population was refused: the read only reads from then on.
    populating: bool,
    /// Batches copied from the cache so far.
    batches: usize,
    /// Whether reading the sources may wait (the read's mode).
    wait: Wait,
    /// The traced request's events, when it is traced.
    trace: Option<Trace>,
}

impl CacheRows {
    /// Reads the sources from the cursor to the end of the slice, switching to them; returns
    /// the partition's complete header (`None`: the sources do not hold the partition).
    fn open_underlying(&mut self, rest: Slice) -> Result<Option<Header>> {
        if !self.missed {
            self.missed = true;
            self.cache.tracker.inner.lock().stats.reads_with_misses += 1;
            let admitting = self.underlying.sources_admitting(&self.key, self.hash);
            self.sstables_read.fetch_add(admitting, Ordering::Relaxed);
            trace::event(self.trace.as_ref(), || {
                format!("Rows not in the row cache: reading through to {admitting} sstables")
            });
        }
        let q = SourceQuery {
            slice: &rest,
            reversed: self.reversed,
            include_static: true,
            full_header: true,
            kind: ReadKind::Query,
            index_cache: self.underlying.index_cache,
            row_budget: None,
            wait: self.wait,
            trace: self.trace.as_ref(),
        };
        match self.underlying.partition(&self.key, self.hash, &q)? {
            Some(p) => {
                let header = Header {
                    deletion: p.deletion,
                    static_row: p.static_row,
                    range_tombstones: p.range_tombstones,
                };
                self.header = Some(header.clone());
                self.mode = Mode::Underlying(p.rows);
                Ok(Some(header))
            }
            None => {
                self.mode = Mode::Done;
                Ok(None)
            }
        }
    }

    /// The part of the slice not read yet: the current range from the cursor, and the rest.
    fn remaining(&self) -> Slice {
        let mut out = Vec::new();
        for (i, r) in self.ranges.iter().enumerate().skip(self.range_idx) {
            let mut r = r.clone();
            if i == self.range_idx {
                // Rows up to the cursor are filtered out as they come (see `skip`).
                if self.reversed {
                    r.end = after_prefix(&self.cursor_key());
                } else {
                    r.start = self.cursor_key();
                }
            }
            out.push(r);
        }
        Slice::new(out)
    }

    fn cursor_key(&self) -> bytes::Bytes {
        self.cursor.key().clone()
    }

    /// True for a row the read has passed already.
    fn passed(&self, k: &ClusteringKey) -> bool {
        let at = Position::at(k);
        if self.reversed {
            at >= self.cursor
        } else {
            at <= self.cursor
        }
    }

    /// Populates `f` if the read still may.
    fn populate(&mut self, f: impl FnOnce(&mut CachedPartition, &mut Ctx<'_>)) {
        if !self.populating {
            return;
        }
        let Some(header) = &self.header else { return };
        self.populating = self.cache.populate(self.phase, &self.key, header, f);
    }

    /// The current range was read to its end: mark what is left of it and move on.
    fn finish_range(&mut self) {
        let Some(r) = self.ranges.get(self.range_idx).cloned() else {
            return;
        };
        let cursor = self.cursor.clone();
        if self.reversed {
            self.populate(|p, ctx| p.mark(Position::before(&r.start), cursor, ctx));
        } else {
            self.populate(|p, ctx| p.mark(cursor, Position::before(&r.end), ctx));
        }
        self.range_idx += 1;
        self.cursor = first_cursor(self.ranges.get(self.range_idx), self.reversed);
    }

    /// One row from the sources: populate it and the interval up to it.
    fn take_underlying_row(&mut self, k: ClusteringKey, row: Row) {
        while self
            .ranges
            .get(self.range_idx)
            .is_some_and(|r| !r.contains(&k.0))
        {
            self.finish_range();
        }
        let cursor = self.cursor.clone();
        let at = Position::at(&k);
        let (key, copy) = (k.clone(), row.clone());
        let reversed = self.reversed;
        self.populate(|p, ctx| {
            p.insert_row(&key, copy, ctx);
            if reversed {
                p.mark(at, cursor, ctx);
            } else {
                p.mark(cursor, at, ctx);
            }
        });
        self.cursor = Position::at(&k);
        self.cache.tracker.inner.lock().stats.row_misses += 1;
        self.buf.push_back((k, row));
    }

    /// Copies the next batch from the cache; switches to the sources at a gap.
    fn copy_from_cache(&mut self) -> Result<()> {
        let cache = Arc::clone(&self.cache);
        let mut g = cache.tracker.inner.lock();
        let Inner {
            tables, lru, stats, ..
        } = &mut *g;
        // Only while the read may: a flush merge of a memtable sealed after the read began
        // may bring writes newer than the read's snapshot, of which the read would see part.
        let p = tables
            .get(&cache.slot)
            .filter(|t| t.may_read(self.phase))
            .and_then(|t| t.partitions.get(&self.key));
        self.walk(p, lru, stats);
        Ok(())
    }

    /// Copies the next batch of rows of the current range from `p` (the read's partition in
    /// the cache, under the tracker's lock; `None`: no longer cached) and moves the cursor:
    /// to the next range when this one is done, to the cache's gap when it ends.
    fn walk(
        &mut self,
        p: Option<&CachedPartition>,
        lru: &mut Lru<Evictable>,
        stats: &mut CacheStats,
    ) {
        let Some(r) = self.ranges.get(self.range_idx) else {
            self.mode = Mode::Done;
            return;
        };
        let mut out = Vec::new();
        let batch = BATCHES.get(self.batches).copied().unwrap_or(64);
        let end = match p {
            Some(p) if self.reversed => p.walk_reverse(
                &self.cursor,
                &Position::before(&r.start),
                batch,
                lru,
                &mut out,
            ),
            Some(p) => p.walk_forward(
                &self.cursor,
                &Position::before(&r.end),
                batch,
                lru,
                &mut out,
            ),
            None => WalkEnd::Gap(self.cursor.clone()),
        };
        stats.row_hits += out.len() as u64;
        self.buf.extend(out);
        match end {
            WalkEnd::Done => {
                self.range_idx += 1;
                self.cursor = first_cursor(self.ranges.get(self.range_idx), self.reversed);
            }
            WalkEnd::More(c) => self.cursor = c,
            WalkEnd::Gap(c) => {
                self.cursor = c;
                self.mode = Mode::Gap;
            }
        }
        self.batches += 1;
    }
}

impl Iterator for CacheRows {
    type Item = Result<(ClusteringKey, Row)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(r) = self.buf.pop_front() {
                return Some(Ok(r));
            }
            match &mut self.mode {
                Mode::Done => return None,
                Mode::Gap => {
                    let rest = self.remaining();
                    if let Err(e) = self.open_underlying(rest) {
                        self.mode = Mode::Done;
                        return Some(Err(e));
                    }
                }
                Mode::Cache => {
                    if let Err(e) = self.copy_from_cache() {
                        self.mode = Mode::Done;
                        return Some(Err(e));
                    }
                }
                Mode::Underlying(stream) => match stream.next() {
                    Some(Ok((k, row))) => {
                        if !self.passed(&k) {
                            self.take_underlying_row(k, row);
                        }
                    }
                    Some(Err(e)) => {
                        self.mode = Mode::Done;
                        return Some(Err(e));
                    }
                    None => {
                        while self.range_idx < self.ranges.len() {
                            self.finish_range();
                        }
                        self.mode = Mode::Done;
                    }
                },
            }
        }
    }
}
