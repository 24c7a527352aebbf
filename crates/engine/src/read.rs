//! The read path: merge a partition from memtables and sstables, apply every tombstone,
//! keep what is live, and scan partitions in token order.
//!
//! Sources are consulted newest-first by maximum timestamp; once a partition tombstone newer
//! than everything an sstable holds is known, that sstable is skipped (its data is shadowed).
//! SSTables are also skipped by key range and bloom filter, and — when the read does not need
//! the static row or partition-level tombstones — by their clustering range. Rows are merged
//! lazily in clustering order (or reversed), so a `LIMIT` stops reading early.

use crate::error::Result;
use crate::memtable::{MemPartition, Memtable};
use crate::metrics::ReadKind;
use crate::model::partition::covering_deletion;
use crate::model::{
    CellCounts, ClusteringKey, ColumnId, DecoratedKey, DeletionTime, NowSecs, Partition,
    PartitionPos, RangeTombstone, Row, Slice, Token,
};
use crate::sstable::reader::{DataCursor, IndexEntry, IndexScanner, RowIter, SSTable};
use std::collections::HashMap;
use std::ops::Bound;
use std::sync::Arc;

/// What to read from a partition.
#[derive(Debug, Clone)]
pub struct ReadCommand {
    /// Clustering rows wanted.
    pub slice: Slice,
    /// Columns wanted (sorted ids); `None` for all.
    pub columns: Option<Vec<ColumnId>>,
    /// Read clustering rows in reverse order.
    pub reversed: bool,
    /// Stop after this many live rows.
    pub limit: Option<usize>,
    /// "Now" for TTL expiry.
    pub now: NowSecs,
    /// Whether the static row is wanted.
    pub include_static: bool,
}

impl ReadCommand {
    /// Every row and column of a partition at `now`.
    pub fn all(now: NowSecs) -> Self {
        ReadCommand {
            slice: Slice::all(),
            columns: None,
            reversed: false,
            limit: None,
            now,
            include_static: true,
        }
    }
}

/// The live content of one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionResult {
    /// Partition key.
    pub key: DecoratedKey,
    /// Live static row.
    pub static_row: Option<Row>,
    /// Live rows in the requested order.
    pub rows: Vec<(ClusteringKey, Row)>,
}

/// What one single-partition read did, for the table's metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadCounts {
    /// SSTables consulted: those whose key range and bloom filter admit the key
    /// (ScyllaDB's `sstables_per_read`).
    pub sstables: usize,
    /// Live cells and tombstones the merge visited (see `Snapshot::merge`).
    pub cells: CellCounts,
}

/// A consistent view of a table's sources.
#[derive(Clone)]
pub struct Snapshot {
    /// Memtables, newest first.
    pub memtables: Vec<Arc<Memtable>>,
    /// SSTables.
    pub sstables: Vec<Arc<SSTable>>,
    /// What dropped columns left (see [`crate::schema::TableSchema::hidden_cells`]): removed
    /// before liveness is decided.
    pub hidden_columns: Arc<[(ColumnId, i64)]>,
}

/// Where a partition's rows come from during a merge.
enum RowStream {
    /// Rows copied out of a memtable, already in read order.
    Memtable(std::vec::IntoIter<(ClusteringKey, Row)>),
    /// Rows read lazily from an sstable (with the sstable's generation).
    SSTable(u64, Box<RowIter>),
}

impl Iterator for RowStream {
    type Item = Result<(ClusteringKey, Row)>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            RowStream::Memtable(it) => it.next().map(Ok),
            RowStream::SSTable(_, it) => it.next(),
        }
    }
}

/// Scan cursors kept per sstable generation across the partitions of a scan.
type Cursors = HashMap<u64, DataCursor>;

fn slice_of(p: &MemPartition, cmd: &ReadCommand) -> Partition {
    let mut out = Partition {
        deletion: p.deletion(),
        static_row: if cmd.include_static {
            p.static_row().cloned()
        } else {
            None
        },
        range_tombstones: p
            .range_tombstones()
            .iter()
            .filter(|rt| cmd.slice.intersects(&rt.range))
            .cloned()
            .collect(),
        rows: Default::default(),
    };
    for r in cmd.slice.ranges() {
        let lo = ClusteringKey(r.start.clone());
        let hi = ClusteringKey(r.end.clone());
        if lo >= hi {
            continue;
        }
        let rows = p.rows_in(Bound::Included(&lo), Bound::Excluded(&hi));
        for (k, row) in rows {
            out.rows.insert(k.clone(), row.clone());
        }
    }
    out
}

impl Snapshot {
    /// Reads one partition; `None` when nothing live is selected.
    pub fn read(&self, key: &DecoratedKey, cmd: &ReadCommand) -> Result<Option<PartitionResult>> {
        Ok(self.read_consulting(key, cmd)?.0)
    }

    /// [`Snapshot::read`], also returning what the read consulted and visited.
    pub fn read_consulting(
        &self,
        key: &DecoratedKey,
        cmd: &ReadCommand,
    ) -> Result<(Option<PartitionResult>, ReadCounts)> {
        let hash = crate::model::token::murmur3_x64_128(&key.key, 0);
        let mut sstables: Vec<(Arc<SSTable>, Option<IndexEntry>)> = self
            .sstables
            .iter()
            .filter(|s| s.may_contain(key, hash))
            .map(|s| (Arc::clone(s), None))
            .collect();
        sstables.sort_by_key(|s| std::cmp::Reverse(s.0.stats.max_timestamp));
        let mut counts = ReadCounts {
            sstables: sstables.len(),
            cells: CellCounts::default(),
        };
        let result = self.merge(key, sstables, cmd, None, &mut counts.cells)?;
        Ok((result, counts))
    }

    /// Merges one partition from the memtables and the given sstables (newest first). Scans
    /// pass `cursors` so each sstable keeps one read-ahead cursor across partitions.
    ///
    /// `counts` receives what the merge visited: the partition tombstone, the range
    /// tombstones intersecting the slice (one each), and each merged row's live cells and
    /// tombstones ([`Row::into_live_counting`]) — rows up to the one that completed the
    /// limit, after shadowing by the partition and range tombstones (shadowed data is not
    /// visited: the covering tombstone stands for it).
    fn merge(
        &self,
        key: &DecoratedKey,
        sstables: Vec<(Arc<SSTable>, Option<IndexEntry>)>,
        cmd: &ReadCommand,
        mut cursors: Option<&mut Cursors>,
        counts: &mut CellCounts,
    ) -> Result<Option<PartitionResult>> {
        let mut deletion: Option<DeletionTime> = None;
        let mut static_row: Option<Row> = None;
        let mut rts: Vec<RangeTombstone> = Vec::new();
        let mut streams: Vec<RowStream> = Vec::new();

        for m in &self.memtables {
            if let Some(p) = m.with_partition(key, |p| slice_of(p, cmd)) {
                deletion = DeletionTime::max(deletion, p.deletion);
                merge_static(&mut static_row, p.static_row);
                rts.extend(p.range_tombstones);
                let rows: Vec<_> = if cmd.reversed {
                    p.rows.into_iter().rev().collect()
                } else {
                    p.rows.into_iter().collect()
                };
                streams.push(RowStream::Memtable(rows.into_iter()));
            }
        }
        for (sst, entry) in sstables {
            if deletion.is_some_and(|d| sst.stats.max_timestamp <= d.marked_at) {
                // Everything in this sstable is older than a partition tombstone we hold.
                continue;
            }
            // Skip by clustering range (rows and range-tombstone bounds) when neither the static
            // row nor a partition tombstone can matter.
            if !cmd.include_static
                && sst.stats.max_partition_deletion == i64::MIN
                && !sst.stats.max_clustering.is_empty()
                && !cmd
                    .slice
                    .overlaps_keys(&sst.stats.min_clustering, &sst.stats.max_clustering)
            {
                continue;
            }
            let entry = match entry {
                Some(e) => e,
                // Only point reads come without an entry, and they consult only the sstables
                // whose bloom filter admitted the key (`read_consulting`).
                None => match sst.find_admitted(key, ReadKind::Query)? {
                    Some(e) => e,
                    None => continue,
                },
            };
            let mut cur = match cursors.as_deref_mut() {
                Some(c) => c
                    .remove(&sst.generation)
                    .unwrap_or_else(|| sst.scan_cursor(ReadKind::Query)),
                None => sst.cursor(ReadKind::Query),
            };
            let header = sst.read_header(&entry, &mut cur)?;
            deletion = DeletionTime::max(deletion, header.deletion);
            if cmd.include_static {
                merge_static(&mut static_row, header.static_row);
            }
            rts.extend(
                header
                    .range_tombstones
                    .into_iter()
                    .filter(|rt| cmd.slice.intersects(&rt.range)),
            );
            streams.push(RowStream::SSTable(
                sst.generation,
                Box::new(sst.rows(&entry, &cmd.slice, cmd.reversed, cur)),
            ));
        }

        counts.tombstones += u64::from(deletion.is_some()) + rts.len() as u64;
        let static_row = static_row.and_then(|mut s| {
            if let Some(d) = deletion {
                s.apply_deletion(d);
            }
            s.remove_columns(&self.hidden_columns);
            let mut live = s.into_live_counting(cmd.now, counts)?;
            if let Some(cols) = &cmd.columns {
                live.retain_columns(cols);
            }
            (!live.columns.is_empty()).then_some(live)
        });

        let mut rows = Vec::new();
        let limit = cmd.limit.unwrap_or(usize::MAX);
        let mut merger = RowMerger::new(streams, cmd.reversed);
        while rows.len() < limit {
            let Some((ck, mut row)) = merger.next_row()? else {
                break;
            };
            let shadow = DeletionTime::max(deletion, covering_deletion(&rts, &ck.0));
            if let Some(d) = shadow {
                row.apply_deletion(d);
            }
            row.remove_columns(&self.hidden_columns);
            if let Some(mut live) = row.into_live_counting(cmd.now, counts) {
                if let Some(cols) = &cmd.columns {
                    live.retain_columns(cols);
                }
                rows.push((ck, live));
            }
        }
        if let Some(c) = cursors {
            for stream in merger.streams {
                if let RowStream::SSTable(generation, it) = stream {
                    c.insert(generation, it.into_cursor());
                }
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

    /// Scans partitions in token order from `start`, up to and including `end_token`.
    pub fn scan(
        &self,
        start: PartitionPos,
        end_token: Option<Token>,
        cmd: ReadCommand,
    ) -> ScanIter {
        let scanners = self
            .sstables
            .iter()
            .map(|s| (s.scan(&start, ReadKind::Query), None))
            .collect();
        ScanIter {
            snapshot: self.clone(),
            pos: start,
            end_token,
            cmd,
            scanners,
            cursors: HashMap::new(),
            done: false,
        }
    }
}

fn merge_static(acc: &mut Option<Row>, next: Option<Row>) {
    match (acc.as_mut(), next) {
        (Some(a), Some(b)) => a.merge(b),
        (None, Some(b)) => *acc = Some(b),
        _ => {}
    }
}

/// K-way merge of row streams sorted in the same direction; equal keys are reconciled.
struct RowMerger {
    streams: Vec<RowStream>,
    heads: Vec<Option<(ClusteringKey, Row)>>,
    reversed: bool,
    primed: bool,
}

impl RowMerger {
    fn new(streams: Vec<RowStream>, reversed: bool) -> Self {
        let heads = streams.iter().map(|_| None).collect();
        RowMerger {
            streams,
            heads,
            reversed,
            primed: false,
        }
    }

    fn advance(&mut self, i: usize) -> Result<()> {
        self.heads[i] = self.streams[i].next().transpose()?;
        Ok(())
    }

    fn next_row(&mut self) -> Result<Option<(ClusteringKey, Row)>> {
        if !self.primed {
            for i in 0..self.streams.len() {
                self.advance(i)?;
            }
            self.primed = true;
        }
        let mut best: Option<usize> = None;
        for (i, h) in self.heads.iter().enumerate() {
            let Some((k, _)) = h else { continue };
            best = match best {
                None => Some(i),
                Some(b) => {
                    let bk = self.heads[b].as_ref().map(|h| &h.0);
                    let better = bk.is_some_and(|bk| if self.reversed { k > bk } else { k < bk });
                    if better {
                        Some(i)
                    } else {
                        Some(b)
                    }
                }
            };
        }
        let Some(b) = best else { return Ok(None) };
        let Some((key, mut row)) = self.heads[b].take() else {
            return Ok(None);
        };
        self.advance(b)?;
        for i in 0..self.heads.len() {
            if self.heads[i].as_ref().is_some_and(|h| h.0 == key) {
                if let Some((_, other)) = self.heads[i].take() {
                    row.merge(other);
                }
                self.advance(i)?;
            }
        }
        Ok(Some((key, row)))
    }
}

/// Partitions of a range scan, in token order.
pub struct ScanIter {
    snapshot: Snapshot,
    pos: PartitionPos,
    end_token: Option<Token>,
    cmd: ReadCommand,
    scanners: Vec<(IndexScanner, Option<IndexEntry>)>,
    cursors: Cursors,
    done: bool,
}

impl ScanIter {
    fn step(&mut self) -> Result<Option<PartitionResult>> {
        loop {
            // The smallest next key over all sources.
            let mut next: Option<DecoratedKey> = None;
            for m in &self.snapshot.memtables {
                if let Some(k) = m.next_key(&self.pos) {
                    if next.as_ref().is_none_or(|n| k < *n) {
                        next = Some(k);
                    }
                }
            }
            for (sc, peeked) in &mut self.scanners {
                while peeked.as_ref().is_some_and(|e| !self.pos.admits(&e.key)) {
                    *peeked = None;
                }
                if peeked.is_none() {
                    *peeked = sc.next_entry()?;
                    while peeked.as_ref().is_some_and(|e| !self.pos.admits(&e.key)) {
                        *peeked = sc.next_entry()?;
                    }
                }
                if let Some(e) = peeked {
                    if next.as_ref().is_none_or(|n| e.key < *n) {
                        next = Some(e.key.clone());
                    }
                }
            }
            let Some(key) = next else { return Ok(None) };
            if self.end_token.is_some_and(|t| key.token > t) {
                return Ok(None);
            }
            let mut entries = Vec::new();
            for (sc, peeked) in &mut self.scanners {
                if peeked.as_ref().is_some_and(|e| e.key == key) {
                    if let Some(e) = peeked.take() {
                        entries.push((Arc::clone(sc.sstable()), Some(e)));
                    }
                }
            }
            entries.sort_by_key(|s| std::cmp::Reverse(s.0.stats.max_timestamp));
            self.pos = PartitionPos::After(key.clone());
            // Scans keep no per-read figures (Cassandra's are for single-partition reads).
            let mut counts = CellCounts::default();
            if let Some(p) = self.snapshot.merge(
                &key,
                entries,
                &self.cmd,
                Some(&mut self.cursors),
                &mut counts,
            )? {
                return Ok(Some(p));
            }
        }
    }
}

impl Iterator for ScanIter {
    type Item = Result<PartitionResult>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.step() {
            Ok(Some(p)) => Some(Ok(p)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}
