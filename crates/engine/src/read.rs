//! The read path: a table's sources merged into what a reader sees.
//!
//! It is built in separate steps over one seam ([`source`]): every source — memtable,
//! sstable, and the merged set itself — yields partitions as data (tombstones included) in
//! token order, each a stream of rows in clustering order; [`merge`] reconciles several
//! sources' views of one partition into one, still data (compaction's view stops there);
//! [`live`] applies the tombstones and keeps what is live (a query's view).
//!
//! Sources are consulted newest-first by maximum timestamp; once a partition tombstone newer
//! than everything a source holds is known, that source is skipped (its data is shadowed).
//! SSTables are also skipped by key range and bloom filter, and — when the read does not need
//! the static row or partition-level tombstones — by their clustering range. Rows are merged
//! lazily in clustering order (or reversed), so a `LIMIT` stops reading early.

pub mod live;
pub mod merge;
pub mod source;

use crate::error::{Error, Result};
use crate::io::Wait;
use crate::memtable::Memtable;
use crate::metrics::ReadKind;
use crate::model::{
    CellCounts, ClusteringKey, ColumnId, DecoratedKey, NowSecs, Partition, PartitionPos, Row,
    Slice, Token,
};
use crate::sstable::reader::SSTable;
use crate::trace::{self, Trace};
use merge::MergedPartition;
use source::{PartitionScan, PartitionSource, SourcePartition, SourceQuery};
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
    /// Read past the row cache, neither consulting nor populating it (ScyllaDB's
    /// `SELECT … BYPASS CACHE`).
    pub bypass_cache: bool,
    /// Whether the read may wait for the disk (see [`crate::io`]).
    pub wait: Wait,
    /// Where a traced request's events go (see [`crate::trace`]); `None` when not traced.
    pub trace: Option<Trace>,
}

impl ReadCommand {
    /// Every row and column of a partition at `now`, read waiting as `wait` says.
    pub fn all(now: NowSecs, wait: Wait) -> Self {
        ReadCommand {
            slice: Slice::all(),
            columns: None,
            reversed: false,
            limit: None,
            now,
            include_static: true,
            bypass_cache: false,
            wait,
            trace: None,
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

/// The live content of `data` (one partition as data, e.g. several replicas' answers
/// reconciled) as `cmd` selects it: tombstones applied, dropped columns' cells removed
/// and strict liveness kept (`rules`), expired cells gone, rows cut to the limit; `None` when nothing live is
/// selected.
pub fn live_of(
    key: &DecoratedKey,
    data: Partition,
    cmd: &ReadCommand,
    rules: live::LiveRules<'_>,
) -> Result<Option<PartitionResult>> {
    live_of_counting(key, data, cmd, rules, &mut CellCounts::default())
}

/// [`live_of`], adding the live cells and tombstones it visited to `counts`.
pub fn live_of_counting(
    key: &DecoratedKey,
    data: Partition,
    cmd: &ReadCommand,
    rules: live::LiveRules<'_>,
    counts: &mut CellCounts,
) -> Result<Option<PartitionResult>> {
    let rows: Vec<(ClusteringKey, Row)> = if cmd.reversed {
        data.rows.into_iter().rev().collect()
    } else {
        data.rows.into_iter().collect()
    };
    let mut merged = MergedPartition::new(cmd.reversed);
    merged.add(SourcePartition::from_rows(
        data.deletion,
        data.static_row.filter(|_| cmd.include_static),
        data.range_tombstones,
        rows.into_iter()
            .filter(|(k, _)| cmd.slice.contains(k.as_bytes()))
            .collect(),
    ));
    live::live_partition(key, merged, cmd, rules, counts)
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
    /// The table's strict liveness ([`live::LiveRules::strict_liveness`]).
    pub strict_liveness: bool,
    /// The row cache in front of `sstables` (reading through to them): when set,
    /// single-partition reads consult it instead of the sstables. Scans read the sstables.
    pub cache: Option<Arc<dyn PartitionSource>>,
    /// Whether single-partition reads of the sstables use the index-page cache
    /// ([`crate::cache::index_pages`]): on in a table's cached snapshot, off in one that
    /// bypasses the cache.
    pub index_cache: bool,
}

impl ReadCommand {
    /// What this command asks of each source.
    pub fn source_query(&self) -> SourceQuery<'_> {
        SourceQuery {
            slice: &self.slice,
            reversed: self.reversed,
            include_static: self.include_static,
            full_header: false,
            kind: ReadKind::Query,
            // The snapshot decides (`Snapshot::index_cache`).
            index_cache: false,
            // The merge looks one row past each row it returns (to order the sources).
            row_budget: self.limit.map(|l| l.saturating_add(1)),
            wait: self.wait,
            trace: self.trace.as_ref(),
        }
    }
}

impl Snapshot {
    /// What decides liveness in this table's reads.
    pub fn live_rules(&self) -> live::LiveRules<'_> {
        live::LiveRules {
            hidden_columns: &self.hidden_columns,
            strict_liveness: self.strict_liveness,
        }
    }

    /// Reads one partition; `None` when nothing live is selected.
    pub fn read(&self, key: &DecoratedKey, cmd: &ReadCommand) -> Result<Option<PartitionResult>> {
        Ok(self.read_consulting(key, cmd)?.0)
    }

    /// One partition as data: merged from every source, tombstones included, restricted to
    /// the command's slice (and static row) but not cut to its limit — what a replica answers
    /// a coordinator, who reconciles several replicas' answers and keeps what is live
    /// ([`live_of`]). `None` when no source holds anything of it.
    pub fn read_data(&self, key: &DecoratedKey, cmd: &ReadCommand) -> Result<Option<Partition>> {
        let hash = crate::model::token::murmur3_x64_128(&key.key, 0);
        let q = SourceQuery {
            index_cache: self.index_cache,
            row_budget: None,
            ..cmd.source_query()
        };
        let merged = self.merge_partition(key, hash, &q, None)?;
        let p = merged.into_partition()?;
        Ok((!p.is_empty()).then_some(p))
    }

    /// The sources, memtables first (newest first), then sstables.
    fn source(&self, i: usize) -> Option<&dyn PartitionSource> {
        match self.memtables.get(i) {
            Some(m) => Some(m),
            None => self
                .sstables
                .get(i - self.memtables.len())
                .map(|s| s as &dyn PartitionSource),
        }
    }

    fn source_count(&self) -> usize {
        self.memtables.len() + self.sstables.len()
    }

    /// The sources of a single-partition read: the memtables, then the cache when there is
    /// one, else the sstables.
    fn point_sources(&self) -> Vec<&dyn PartitionSource> {
        let mut out: Vec<&dyn PartitionSource> = Vec::with_capacity(self.source_count());
        out.extend(self.memtables.iter().map(|m| m as &dyn PartitionSource));
        match &self.cache {
            Some(c) => out.push(c.as_ref()),
            None => out.extend(self.sstables.iter().map(|s| s as &dyn PartitionSource)),
        }
        out
    }

    /// [`Snapshot::read`], also returning what the read consulted and visited.
    pub fn read_consulting(
        &self,
        key: &DecoratedKey,
        cmd: &ReadCommand,
    ) -> Result<(Option<PartitionResult>, ReadCounts)> {
        let hash = crate::model::token::murmur3_x64_128(&key.key, 0);
        let q = SourceQuery {
            index_cache: self.index_cache,
            ..cmd.source_query()
        };
        let (result, mut counts) = match self.read_once(key, hash, cmd, &q) {
            // A memtable took a write between the rows a `LIMIT` read copied first and the
            // rest it turned out to need: read again, copying whole slices (see
            // `SourceQuery::row_budget`), so the read sees each partition as of one instant.
            Err(Error::SourceChanged) => {
                let whole = SourceQuery {
                    row_budget: None,
                    ..q
                };
                self.read_once(key, hash, cmd, &whole)?
            }
            other => other?,
        };
        if let Some(cache) = &self.cache {
            // The rows are all read now: what the cache's misses took from sstables.
            counts.sstables = cache.sstables_read();
        }
        Ok((result, counts))
    }

    /// One attempt of [`Snapshot::read_consulting`].
    fn read_once(
        &self,
        key: &DecoratedKey,
        hash: (u64, u64),
        cmd: &ReadCommand,
        q: &SourceQuery<'_>,
    ) -> Result<(Option<PartitionResult>, ReadCounts)> {
        let mut counts = ReadCounts::default();
        let merged = self.merge_partition(key, hash, q, Some(&mut counts))?;
        let result = live::live_partition(key, merged, cmd, self.live_rules(), &mut counts.cells)?;
        Ok((result, counts))
    }

    /// The sources whose key range and bloom filter admit `key` (memtables always do).
    pub fn sources_admitting(&self, key: &DecoratedKey, hash: (u64, u64)) -> usize {
        self.point_sources()
            .into_iter()
            .filter(|s| s.may_hold(key, hash))
            .count()
    }

    /// Merges one partition from every source that may hold it, newest first, skipping the
    /// sources a partition tombstone already read shadows (see the module doc). `counts`,
    /// when given, receives the sstables consulted.
    fn merge_partition(
        &self,
        key: &DecoratedKey,
        hash: (u64, u64),
        q: &SourceQuery<'_>,
        counts: Option<&mut ReadCounts>,
    ) -> Result<MergedPartition> {
        let m = self.memtables.len();
        let sources = self.point_sources();
        let mut order: Vec<&dyn PartitionSource> = Vec::with_capacity(sources.len());
        for (i, s) in sources.into_iter().enumerate() {
            if i < m || s.may_hold(key, hash) {
                order.push(s);
            } else {
                trace::event(q.trace, || {
                    format!("Bloom filter allows skipping {}", s.trace_label())
                });
            }
        }
        if let Some(c) = counts {
            c.sstables = if self.cache.is_some() {
                0
            } else {
                order.len() - m
            };
        }
        // Stable: memtables (no timestamp bound) stay first, in their order.
        order.sort_by_key(|s| std::cmp::Reverse(s.timestamp_bound()));
        let mut merged = MergedPartition::new(q.reversed);
        for src in order {
            if shadowed(&merged, src) {
                trace::event(q.trace, || {
                    format!(
                        "Skipped {}: its data is older than the partition tombstone",
                        src.trace_label()
                    )
                });
                continue;
            }
            if src.skippable(q) {
                trace::event(q.trace, || {
                    format!("Skipped {}: no row in the slice", src.trace_label())
                });
                continue;
            }
            let p = src.partition(key, hash, q)?;
            if let Some(t) = q.trace {
                t.event(match &p {
                    Some(p) if p.stored_bytes > 0 => format!(
                        "Reading partition from {}: {} bytes in its data file",
                        src.trace_label(),
                        p.stored_bytes
                    ),
                    Some(_) => format!("Partition found in {}", src.trace_label()),
                    None => format!("Partition not in {}", src.trace_label()),
                });
            }
            if let Some(p) = p {
                merged.add(p);
            }
        }
        Ok(merged)
    }

    /// Scans partitions in token order from `start`, up to and including `end_token`.
    pub fn scan(
        &self,
        start: PartitionPos,
        end_token: Option<Token>,
        cmd: ReadCommand,
    ) -> ScanIter {
        ScanIter {
            merge: self.merging_scan(&start, ReadKind::Query, cmd.wait),
            end_token,
            cmd,
            done: false,
            on_error: None,
        }
    }

    /// Up to `max` partitions from `start` to `end_token` (inclusive), each as data —
    /// tombstones included, restricted to the command's slice, not cut to its limit: what a
    /// replica answers a coordinator's range read. The flag says whether partitions remain
    /// past the last one returned.
    pub fn scan_data(
        &self,
        start: &PartitionPos,
        end_token: Option<Token>,
        cmd: &ReadCommand,
        max: usize,
    ) -> Result<(Vec<(DecoratedKey, Partition)>, bool)> {
        let mut merge = self.merging_scan(start, ReadKind::Query, cmd.wait);
        let q = SourceQuery {
            row_budget: None,
            ..cmd.source_query()
        };
        let mut out = Vec::new();
        loop {
            let past_end = merge
                .peek()?
                .is_none_or(|k| end_token.is_some_and(|t| k.token > t));
            if past_end {
                return Ok((out, false));
            }
            if out.len() >= max.max(1) {
                return Ok((out, true));
            }
            let Some((key, merged)) = merge.open_merged(&q)? else {
                return Ok((out, false));
            };
            let p = merged.into_partition()?;
            if !p.is_empty() {
                out.push((key, p));
            }
        }
    }

    fn merging_scan(&self, start: &PartitionPos, kind: ReadKind, wait: Wait) -> MergingScan {
        let scans = (0..self.source_count())
            .filter_map(|i| self.source(i))
            .map(|s| s.scan_partitions(start, kind, wait))
            .collect();
        MergingScan {
            snapshot: self.clone(),
            scans,
            peeked: None,
        }
    }
}

/// True when every write `src` holds is older than the partition tombstone merged so far.
fn shadowed(merged: &MergedPartition, src: &dyn PartitionSource) -> bool {
    merged
        .deletion
        .is_some_and(|d| src.timestamp_bound() <= d.marked_at)
}

/// The merged set of a snapshot is itself a source: what it yields is every source's data
/// reconciled, tombstones still in (the row cache reads through it).
impl PartitionSource for Snapshot {
    fn partition(
        &self,
        key: &DecoratedKey,
        hash: (u64, u64),
        q: &SourceQuery<'_>,
    ) -> Result<Option<SourcePartition>> {
        let merged = self.merge_partition(key, hash, q, None)?;
        Ok((merged.sources > 0).then(|| merged.into_source()))
    }

    fn scan_partitions(
        &self,
        start: &PartitionPos,
        kind: ReadKind,
        wait: Wait,
    ) -> Box<dyn PartitionScan> {
        Box::new(self.merging_scan(start, kind, wait))
    }
}

/// A scan merging every source's scan: each step takes the smallest next key over the sources
/// and merges that partition from those holding it, newest first.
pub struct MergingScan {
    snapshot: Snapshot,
    /// One scan per source, in [`Snapshot::source`] order.
    scans: Vec<Box<dyn PartitionScan>>,
    peeked: Option<DecoratedKey>,
}

impl MergingScan {
    fn next_key(&mut self) -> Result<Option<DecoratedKey>> {
        let mut next: Option<&DecoratedKey> = None;
        for sc in &mut self.scans {
            if let Some(k) = sc.peek()? {
                if next.is_none_or(|n| k < n) {
                    next = Some(k);
                }
            }
        }
        Ok(next.cloned())
    }

    /// Merges the peeked partition; `None` at the end.
    fn open_merged(
        &mut self,
        q: &SourceQuery<'_>,
    ) -> Result<Option<(DecoratedKey, MergedPartition)>> {
        let key = match self.peeked.take() {
            Some(k) => k,
            None => match self.next_key()? {
                Some(k) => k,
                None => return Ok(None),
            },
        };
        let mut holding = Vec::new();
        for (i, sc) in self.scans.iter_mut().enumerate() {
            if sc.peek()?.is_some_and(|k| *k == key) {
                holding.push(i);
            }
        }
        let snap = &self.snapshot;
        holding
            .sort_by_key(|&i| std::cmp::Reverse(snap.source(i).map_or(0, |s| s.timestamp_bound())));
        let mut merged = MergedPartition::new(q.reversed);
        for i in holding {
            let (Some(src), Some(sc)) = (snap.source(i), self.scans.get_mut(i)) else {
                continue;
            };
            if shadowed(&merged, src) || src.skippable(q) {
                sc.skip();
            } else if let Some(p) = sc.open(q)? {
                merged.add(p);
            }
        }
        Ok(Some((key, merged)))
    }
}

impl PartitionScan for MergingScan {
    fn peek(&mut self) -> Result<Option<&DecoratedKey>> {
        if self.peeked.is_none() {
            self.peeked = self.next_key()?;
        }
        Ok(self.peeked.as_ref())
    }

    fn open(&mut self, q: &SourceQuery<'_>) -> Result<Option<SourcePartition>> {
        Ok(self.open_merged(q)?.map(|(_, m)| m.into_source()))
    }

    fn skip(&mut self) {
        let Some(key) = self.peeked.take() else {
            return;
        };
        for sc in &mut self.scans {
            if sc.peek().ok().flatten().is_some_and(|k| *k == key) {
                sc.skip();
            }
        }
    }
}

/// Partitions of a range scan, in token order: live rows only.
pub struct ScanIter {
    merge: MergingScan,
    end_token: Option<Token>,
    cmd: ReadCommand,
    done: bool,
    /// Told of the error that ends the scan (the table's fault reporting).
    on_error: Option<ErrorHook>,
}

/// What a scan tells of the error that ends it.
type ErrorHook = Box<dyn Fn(&Error) + Send + Sync>;

impl ScanIter {
    /// Calls `f` with the error that ends the scan, if one does.
    pub fn on_error(mut self, f: impl Fn(&Error) + Send + Sync + 'static) -> ScanIter {
        self.on_error = Some(Box::new(f));
        self
    }

    fn step(&mut self) -> Result<Option<PartitionResult>> {
        loop {
            let end = self.end_token;
            let past_end = self
                .merge
                .peek()?
                .is_none_or(|k| end.is_some_and(|t| k.token > t));
            if past_end {
                return Ok(None);
            }
            let q = self.cmd.source_query();
            let Some((key, merged)) = self.merge.open_merged(&q)? else {
                return Ok(None);
            };
            // Scans keep no per-read figures (Cassandra's are for single-partition reads).
            let mut counts = CellCounts::default();
            let snapshot = &self.merge.snapshot;
            if let Some(p) =
                live::live_partition(&key, merged, &self.cmd, snapshot.live_rules(), &mut counts)?
            {
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
                if let Some(f) = &self.on_error {
                    f(&e);
                }
                Some(Err(e))
            }
        }
    }
}
