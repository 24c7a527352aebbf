//! The data-source seam: what a memtable, an sstable, a merged set of them (and, later, the
//! row cache) each are to the read path — a source of partitions in token order, each one a
//! partition tombstone, a static row, range tombstones and a stream of clustering rows.
//!
//! Contract every [`PartitionSource`] keeps:
//! - what it yields is *data*, tombstones included and nothing reconciled away: merging the
//!   partitions of several sources ([`super::merge`]) gives what one source holding all their
//!   writes would give;
//! - a partition's rows come in clustering order (reversed when the query says so), only rows
//!   in the query's slice, each key once; the range tombstones are those intersecting the
//!   slice (all of them with [`SourceQuery::full_header`]); the static row is present only
//!   when the query asks for it;
//! - a scan ([`PartitionScan`]) yields partitions in token order (then key bytes), each key
//!   once, starting at the position it was given;
//! - the skipping hints ([`PartitionSource::timestamp_bound`], [`PartitionSource::skippable`],
//!   [`PartitionSource::may_hold`]) are conservative: a source that cannot tell answers so
//!   that it is read.
//!
//! Row streams are lazy: a reader that stops after `LIMIT` rows leaves the rest unread.

use crate::error::Result;
use crate::io::Wait;
use crate::metrics::ReadKind;
use crate::model::{ClusteringKey, DecoratedKey, DeletionTime, PartitionPos, RangeTombstone};
use crate::model::{Row, Slice};

/// A partition's clustering rows as a source yields them: in read order, lazily.
pub type RowStream = Box<dyn Iterator<Item = Result<(ClusteringKey, Row)>> + Send>;

/// What a read asks of each source.
#[derive(Debug, Clone, Copy)]
pub struct SourceQuery<'a> {
    /// The clustering rows wanted.
    pub slice: &'a Slice,
    /// Rows in reverse clustering order.
    pub reversed: bool,
    /// Whether the static row is wanted.
    pub include_static: bool,
    /// The whole header: the static row and every range tombstone of the partition, not
    /// only those intersecting the slice, and no source skipped by its clustering range
    /// (the row cache fills a partition's header once for every later slice).
    pub full_header: bool,
    /// Who pays for the I/O (queries or compaction).
    pub kind: ReadKind,
    /// Whether sstables look the partition's index page up in the index-page cache, and add
    /// it there (see [`crate::cache::index_pages`]): a query's, unless it bypasses the
    /// cache (`BYPASS CACHE`, a table with `caching = {'enabled': 'false'}`).
    pub index_cache: bool,
    /// About how many rows the reader will take (its `LIMIT`): a source may copy that many
    /// first and the rest only when asked, and may then end its stream with
    /// [`crate::Error::SourceChanged`] (see `Snapshot::read_consulting`). `None`: every row.
    pub row_budget: Option<usize>,
    /// Whether the sources may wait for the disk (see [`crate::io`]); under [`Wait::Never`]
    /// a read missing the page cache is [`crate::Error::WouldBlock`].
    pub wait: Wait,
    /// The traced request's events (see [`crate::trace`]); `None` when not traced.
    pub trace: Option<&'a crate::trace::Trace>,
}

impl<'a> SourceQuery<'a> {
    /// Whether a range tombstone belongs in the view.
    pub fn wants(&self, rt: &RangeTombstone) -> bool {
        self.full_header || self.slice.intersects(&rt.range)
    }

    /// Whether the static row belongs in the view.
    pub fn wants_static(&self) -> bool {
        self.full_header || self.include_static
    }

    /// Everything a partition holds, forward: what compaction and flush read.
    pub fn whole(slice: &'a Slice, kind: ReadKind, wait: Wait) -> Self {
        SourceQuery {
            slice,
            reversed: false,
            include_static: true,
            full_header: true,
            kind,
            index_cache: false,
            row_budget: None,
            wait,
            trace: None,
        }
    }
}

/// One source's view of one partition.
pub struct SourcePartition {
    /// Partition tombstone.
    pub deletion: Option<DeletionTime>,
    /// Static row (only when the query asked for it).
    pub static_row: Option<Row>,
    /// Range tombstones intersecting the query's slice.
    pub range_tombstones: Vec<RangeTombstone>,
    /// Clustering rows in the slice, in read order.
    pub rows: RowStream,
    /// Bytes the source stores the partition in (an sstable's uncompressed partition
    /// length; 0 for memory): what compaction's progress and throttle count.
    pub stored_bytes: u64,
}

impl SourcePartition {
    /// A partition whose rows are already in memory, in read order.
    pub fn from_rows(
        deletion: Option<DeletionTime>,
        static_row: Option<Row>,
        range_tombstones: Vec<RangeTombstone>,
        rows: Vec<(ClusteringKey, Row)>,
    ) -> Self {
        SourcePartition {
            deletion,
            static_row,
            range_tombstones,
            rows: Box::new(rows.into_iter().map(Ok)),
            stored_bytes: 0,
        }
    }
}

/// A source of partitions (the seam).
pub trait PartitionSource: Send + Sync {
    /// The newest timestamp the source may hold. The merge reads sources newest first and
    /// skips one whose every write is older than a partition tombstone it already holds;
    /// `i64::MAX` when the source cannot promise a bound.
    fn timestamp_bound(&self) -> i64 {
        i64::MAX
    }

    /// True when the source can hold nothing `q` wants from any partition (no partition
    /// tombstone, static row not wanted, every row and range-tombstone bound outside the
    /// slice).
    fn skippable(&self, _q: &SourceQuery<'_>) -> bool {
        false
    }

    /// False only when the source surely lacks `key` (key range, bloom filter). `hash` is
    /// `murmur3_x64_128(key, 0)`, computed once per read.
    fn may_hold(&self, _key: &DecoratedKey, _hash: (u64, u64)) -> bool {
        true
    }

    /// One partition, `None` when the source does not hold it.
    fn partition(
        &self,
        key: &DecoratedKey,
        hash: (u64, u64),
        q: &SourceQuery<'_>,
    ) -> Result<Option<SourcePartition>>;

    /// The partitions from `start` on, in token order; their reads wait for the disk as
    /// `wait` says.
    fn scan_partitions(
        &self,
        start: &PartitionPos,
        kind: ReadKind,
        wait: Wait,
    ) -> Box<dyn PartitionScan>;

    /// For a source in front of sstables (the row cache): the sstables its reads have gone
    /// to so far, each counted once per read that missed (ScyllaDB's `sstables_per_read`
    /// counts a cache hit as none). Other sources are read directly: 0.
    fn sstables_read(&self) -> usize {
        0
    }

    /// What a trace calls the source ("memtable", "sstable 12", "row cache"). Asked only
    /// when a request is traced.
    fn trace_label(&self) -> String {
        "source".into()
    }
}

/// A scan over one source: peek at the next key, then open or skip that partition.
pub trait PartitionScan: Send {
    /// The next partition's key, not consumed; `None` at the end.
    fn peek(&mut self) -> Result<Option<&DecoratedKey>>;

    /// Opens the peeked partition and moves past it; `None` at the end. A scan may reuse
    /// read-ahead state of the previous partition's row stream once that stream is dropped.
    fn open(&mut self, q: &SourceQuery<'_>) -> Result<Option<SourcePartition>>;

    /// Moves past the peeked partition without reading it.
    fn skip(&mut self);
}
