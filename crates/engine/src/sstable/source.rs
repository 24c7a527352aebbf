//! An sstable as a source of partitions ([`crate::read::source`]).
//!
//! It gives the merge every hint it can skip it by: its newest timestamp, its key range and
//! bloom filter, and — when it holds no partition tombstone — its clustering range. A point
//! read costs one index page, then the chunk(s) the partition's header and rows lie in; the rows
//! are read lazily ([`RowIter`]). A scan walks the index in key order and keeps one read-ahead
//! cursor for the whole scan: a partition's row stream hands the cursor back to the scan when
//! it is dropped, so the next partition continues in the chunk already decompressed.

use super::reader::{DataCursor, IndexEntry, IndexScanner, RowIter, SSTable};
use crate::error::Result;
use crate::io::Wait;
use crate::metrics::ReadKind;
use crate::model::{ClusteringKey, DecoratedKey, PartitionPos, Row};
use crate::read::source::{PartitionScan, PartitionSource, SourcePartition, SourceQuery};
use parking_lot::Mutex;
use std::sync::Arc;

impl PartitionSource for Arc<SSTable> {
    fn timestamp_bound(&self) -> i64 {
        self.stats.max_timestamp
    }

    fn skippable(&self, q: &SourceQuery<'_>) -> bool {
        !q.include_static
            && !q.full_header
            && self.stats.max_partition_deletion == i64::MIN
            && !self.stats.max_clustering.is_empty()
            && !q
                .slice
                .overlaps_keys(&self.stats.min_clustering, &self.stats.max_clustering)
    }

    fn may_hold(&self, key: &DecoratedKey, hash: (u64, u64)) -> bool {
        SSTable::may_contain(self, key, hash)
    }

    fn trace_label(&self) -> String {
        format!("sstable {}", self.generation)
    }

    fn partition(
        &self,
        key: &DecoratedKey,
        hash: (u64, u64),
        q: &SourceQuery<'_>,
    ) -> Result<Option<SourcePartition>> {
        if !SSTable::may_contain(self, key, hash) {
            return Ok(None);
        }
        let Some(entry) = self.find_admitted(key, q.kind, q.index_cache, q.wait)? else {
            return Ok(None);
        };
        let mut cur = self.cursor(q.kind, q.wait);
        let mut p = open(self, &entry, q, &mut cur)?;
        p.rows = Box::new(self.rows(&entry, q.slice, q.reversed, cur));
        Ok(Some(p))
    }

    fn scan_partitions(
        &self,
        start: &PartitionPos,
        kind: ReadKind,
        wait: Wait,
    ) -> Box<dyn PartitionScan> {
        Box::new(SSTableScan {
            index: SSTable::scan(self, start, kind, wait),
            peeked: None,
            cursor: Arc::new(Mutex::new(Some(self.scan_cursor(kind, wait)))),
            kind,
            wait,
        })
    }
}

/// Reads a partition's header with `cur`: the view, its rows still empty.
fn open(
    sst: &SSTable,
    entry: &IndexEntry,
    q: &SourceQuery<'_>,
    cur: &mut DataCursor,
) -> Result<SourcePartition> {
    let header = sst.read_header(entry, cur)?;
    let mut p = SourcePartition::from_rows(
        header.deletion,
        if q.wants_static() {
            header.static_row
        } else {
            None
        },
        header
            .range_tombstones
            .into_iter()
            .filter(|rt| q.wants(rt))
            .collect(),
        Vec::new(),
    );
    p.stored_bytes = entry.len;
    Ok(p)
}

/// Where a scan keeps its read-ahead cursor while a partition's row stream borrows it.
type CursorSlot = Arc<Mutex<Option<DataCursor>>>;

/// A scan of one sstable's partitions.
struct SSTableScan {
    index: IndexScanner,
    peeked: Option<IndexEntry>,
    cursor: CursorSlot,
    kind: ReadKind,
    wait: Wait,
}

impl PartitionScan for SSTableScan {
    fn peek(&mut self) -> Result<Option<&DecoratedKey>> {
        if self.peeked.is_none() {
            self.peeked = self.index.next_entry()?;
        }
        Ok(self.peeked.as_ref().map(|e| &e.key))
    }

    fn open(&mut self, q: &SourceQuery<'_>) -> Result<Option<SourcePartition>> {
        self.peek()?;
        let Some(entry) = self.peeked.take() else {
            return Ok(None);
        };
        let sst = Arc::clone(self.index.sstable());
        // The previous partition's stream gave the cursor back when it was dropped; one still
        // alive (a caller holding two partitions of one scan) leaves a fresh cursor to this one.
        let mut cur = self
            .cursor
            .lock()
            .take()
            .unwrap_or_else(|| sst.scan_cursor(self.kind, self.wait));
        let mut p = open(&sst, &entry, q, &mut cur)?;
        p.rows = Box::new(ScanRows {
            it: Some(sst.rows(&entry, q.slice, q.reversed, cur)),
            slot: Arc::clone(&self.cursor),
        });
        Ok(Some(p))
    }

    fn skip(&mut self) {
        self.peeked = None;
    }
}

/// A scanned partition's rows; gives the cursor back to the scan when dropped.
struct ScanRows {
    it: Option<RowIter>,
    slot: CursorSlot,
}

impl Iterator for ScanRows {
    type Item = Result<(ClusteringKey, Row)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.it.as_mut()?.next()
    }
}

impl Drop for ScanRows {
    fn drop(&mut self) {
        if let Some(it) = self.it.take() {
            *self.slot.lock() = Some(it.into_cursor());
        }
    }
}
