//! The merge step: several sources' views of one partition become one, still as data.
//!
//! Partition tombstones keep the newest, static rows and equal-keyed rows reconcile
//! ([`Row::merge`]), range tombstones are gathered. Nothing is shadowed or dropped here:
//! applying tombstones and keeping what is live are the next steps ([`super::live`]), and
//! compaction, which must keep tombstones, stops after this one. Rows are merged lazily, a
//! k-way merge of the sources' streams in read order, so a reader that stops early leaves the
//! rest of every stream unread.

use super::source::{RowStream, SourcePartition};
use crate::error::Result;
use crate::model::{ClusteringKey, DeletionTime, Partition, RangeTombstone, Row};

/// One partition merged from any number of sources.
pub struct MergedPartition {
    /// Newest partition tombstone of the sources.
    pub deletion: Option<DeletionTime>,
    /// Reconciled static row.
    pub static_row: Option<Row>,
    /// Every source's range tombstones.
    pub range_tombstones: Vec<RangeTombstone>,
    /// The merged row stream.
    pub rows: RowMerger,
    /// Sources added.
    pub sources: usize,
}

impl MergedPartition {
    /// An empty merge, rows in reverse clustering order when `reversed`.
    pub fn new(reversed: bool) -> Self {
        MergedPartition {
            deletion: None,
            static_row: None,
            range_tombstones: Vec::new(),
            rows: RowMerger::new(reversed),
            sources: 0,
        }
    }

    /// Adds one source's view. Every stream added must be in the same read order.
    pub fn add(&mut self, p: SourcePartition) {
        self.deletion = DeletionTime::max(self.deletion, p.deletion);
        merge_static(&mut self.static_row, p.static_row);
        self.range_tombstones.extend(p.range_tombstones);
        self.rows.push(p.rows);
        self.sources += 1;
    }

    /// The merge as one source's view (the merged set is itself a source).
    pub fn into_source(self) -> SourcePartition {
        SourcePartition {
            deletion: self.deletion,
            static_row: self.static_row,
            range_tombstones: self.range_tombstones,
            rows: Box::new(self.rows),
            stored_bytes: 0,
        }
    }

    /// Reads every row: the whole merged partition, tombstones included (compaction's view).
    pub fn into_partition(self) -> Result<Partition> {
        let mut rows = std::collections::BTreeMap::new();
        for r in self.rows {
            let (k, row) = r?;
            rows.insert(k, row);
        }
        Ok(Partition {
            deletion: self.deletion,
            static_row: self.static_row,
            range_tombstones: self.range_tombstones,
            rows,
        })
    }
}

/// Reconciles `next` into the static row gathered so far.
fn merge_static(acc: &mut Option<Row>, next: Option<Row>) {
    match (acc.as_mut(), next) {
        (Some(a), Some(b)) => a.merge(b),
        (None, Some(b)) => *acc = Some(b),
        _ => {}
    }
}

/// K-way merge of row streams sorted in the same direction; equal keys are reconciled.
///
/// A linear pick over the heads rather than a heap: a read merges a handful of sources, where
/// a scan of a few heads beats a heap's bookkeeping.
pub struct RowMerger {
    streams: Vec<RowStream>,
    heads: Vec<Option<(ClusteringKey, Row)>>,
    reversed: bool,
    primed: bool,
}

impl RowMerger {
    fn new(reversed: bool) -> Self {
        RowMerger {
            streams: Vec::new(),
            heads: Vec::new(),
            reversed,
            primed: false,
        }
    }

    fn push(&mut self, stream: RowStream) {
        self.streams.push(stream);
        self.heads.push(None);
    }

    fn advance(&mut self, i: usize) -> Result<()> {
        if let (Some(head), Some(stream)) = (self.heads.get_mut(i), self.streams.get_mut(i)) {
            *head = stream.next().transpose()?;
        }
        Ok(())
    }

    /// The next merged row in read order.
    pub fn next_row(&mut self) -> Result<Option<(ClusteringKey, Row)>> {
        if !self.primed {
            for i in 0..self.streams.len() {
                self.advance(i)?;
            }
            self.primed = true;
        }
        let mut best: Option<(usize, &ClusteringKey)> = None;
        for (i, h) in self.heads.iter().enumerate() {
            let Some((k, _)) = h else { continue };
            let better = best.is_none_or(|(_, bk)| if self.reversed { k > bk } else { k < bk });
            if better {
                best = Some((i, k));
            }
        }
        let Some((b, _)) = best else { return Ok(None) };
        let Some((key, mut row)) = self.heads.get_mut(b).and_then(Option::take) else {
            return Ok(None);
        };
        self.advance(b)?;
        for i in 0..self.heads.len() {
            let same = self
                .heads
                .get(i)
                .is_some_and(|h| h.as_ref().is_some_and(|h| h.0 == key));
            if same {
                if let Some((_, other)) = self.heads.get_mut(i).and_then(Option::take) {
                    row.merge(other);
                }
                self.advance(i)?;
            }
        }
        Ok(Some((key, row)))
    }
}

impl Iterator for RowMerger {
    type Item = Result<(ClusteringKey, Row)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_row().transpose()
    }
}
