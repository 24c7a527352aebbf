//! Copying a memtable partition out for a read: the whole slice, or — for a read with a row
//! budget (`LIMIT`) — that many rows first and the rest only when the merge asks, as of one
//! instant either way (the partition's version is checked between the two copies).

use super::{MemPartition, Memtable, Slot};
use crate::error::{Error, Result};
use crate::model::{ClusteringKey, ClusteringRange, DecoratedKey, Row};
use crate::read::source::{RowStream, SourcePartition, SourceQuery};
use std::ops::Bound;
use std::sync::Arc;

impl Memtable {
    /// What `q` wants of partition `key`, copied under its lock: with a `budget`, that many
    /// rows first and the rest when the reader asks ([`MemRows`]); without, every row.
    pub(super) fn view(
        &self,
        key: &DecoratedKey,
        q: &SourceQuery<'_>,
        budget: Option<usize>,
    ) -> Option<SourcePartition> {
        self.with_slot(key, |slot| {
            let p = slot.lock();
            let mut rows = MemRows {
                slot: Arc::clone(slot),
                version: p.version,
                ranges: read_order(q),
                reversed: q.reversed,
                after: None,
                buf: Vec::new().into_iter(),
                complete: false,
            };
            rows.copy(&p, budget.map(|b| b.max(1)));
            p.head_view(q, Box::new(rows))
        })
    }
}

/// The slice's ranges in the order a read visits them.
fn read_order(q: &SourceQuery<'_>) -> Vec<ClusteringRange> {
    let mut ranges = q.slice.ranges().to_vec();
    if q.reversed {
        ranges.reverse();
    }
    ranges
}

/// A memtable partition's rows copied in two steps: the rows a read is likely to need
/// first, the rest when it asks for more — provided no write came in between (the
/// partition's version is unchanged), so the reader sees the partition as of one instant.
/// Otherwise the stream ends with [`Error::SourceChanged`], and the read starts over copying
/// whole slices.
struct MemRows {
    slot: Slot,
    version: u64,
    /// The slice's ranges in read order; those before `after`'s range are done.
    ranges: Vec<ClusteringRange>,
    reversed: bool,
    /// The last row copied, and the index of its range.
    after: Option<(usize, ClusteringKey)>,
    buf: std::vec::IntoIter<(ClusteringKey, Row)>,
    /// Every row of the slice was copied.
    complete: bool,
}

impl MemRows {
    /// Copies rows after `after`, in read order, at most `limit` (all without one).
    fn copy(&mut self, p: &MemPartition, limit: Option<usize>) {
        let mut out = Vec::new();
        let first = self.after.as_ref().map_or(0, |(i, _)| *i);
        let mut last = self.after.clone();
        for (i, r) in self.ranges.iter().enumerate().skip(first) {
            let lo = ClusteringKey(r.start.clone());
            let hi = ClusteringKey(r.end.clone());
            if lo >= hi {
                continue;
            }
            // Within the range the read stopped in, only the rows past its last one.
            let resume = last
                .as_ref()
                .filter(|(j, _)| *j == i)
                .map(|(_, k)| k.clone());
            let (lo_b, hi_b) = match (&resume, self.reversed) {
                (Some(k), false) => (Bound::Excluded(k), Bound::Excluded(&hi)),
                (Some(k), true) => (Bound::Included(&lo), Bound::Excluded(k)),
                (None, _) => (Bound::Included(&lo), Bound::Excluded(&hi)),
            };
            let it = p.rows_in(lo_b, hi_b);
            let it: Box<dyn Iterator<Item = (&ClusteringKey, &Row)>> = if self.reversed {
                Box::new(it.rev())
            } else {
                Box::new(it)
            };
            for (k, row) in it {
                if limit.is_some_and(|l| out.len() >= l) {
                    self.after = last;
                    self.buf = out.into_iter();
                    return;
                }
                last = Some((i, k.clone()));
                out.push((k.clone(), row.clone()));
            }
        }
        self.complete = true;
        self.buf = out.into_iter();
    }
}

impl Iterator for MemRows {
    type Item = Result<(ClusteringKey, Row)>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(r) = self.buf.next() {
            return Some(Ok(r));
        }
        if self.complete {
            return None;
        }
        let slot = Arc::clone(&self.slot);
        let p = slot.lock();
        if p.version != self.version {
            self.complete = true;
            return Some(Err(Error::SourceChanged));
        }
        self.copy(&p, None);
        drop(p);
        self.buf.next().map(Ok)
    }
}

impl MemPartition {
    /// A source's view of the partition with `rows` as its rows: the header `q` wants.
    fn head_view(&self, q: &SourceQuery<'_>, rows: RowStream) -> SourcePartition {
        SourcePartition {
            deletion: self.head.deletion,
            static_row: if q.wants_static() {
                self.head.static_row.clone()
            } else {
                None
            },
            range_tombstones: self
                .head
                .range_tombstones
                .iter()
                .filter(|rt| q.wants(rt))
                .cloned()
                .collect(),
            rows,
            stored_bytes: 0,
        }
    }
}
