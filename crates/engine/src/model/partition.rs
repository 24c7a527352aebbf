//! Partitions: the unit of a mutation, of a memtable entry and of an sstable record.
//!
//! A [`Partition`] holds one partition's partition deletion, static row, range tombstones and
//! clustering rows, as *data* — tombstones included. Merging two partitions is reconciliation:
//! it never loses information, so merging a mutation into a memtable, or sources at read time,
//! gives the same result in any order (merge is commutative and associative).
//!
//! Range tombstones are kept as a list rather than normalised into disjoint intervals: a row is
//! shadowed by the strongest tombstone covering it, which reads compute directly.

use super::cell::DeletionTime;
use super::key::{ClusteringKey, ClusteringRange};
use super::row::{ColumnData, Row};
use std::collections::BTreeMap;

/// A deletion of every row whose clustering key lies in `range`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RangeTombstone {
    /// The covered clustering positions.
    pub range: ClusteringRange,
    /// The deletion.
    pub deletion: DeletionTime,
}

/// One partition's data (or an update to it).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Partition {
    /// Partition tombstone.
    pub deletion: Option<DeletionTime>,
    /// The static row, when the partition has static data.
    pub static_row: Option<Row>,
    /// Range tombstones, in no particular order.
    pub range_tombstones: Vec<RangeTombstone>,
    /// Clustering rows by key.
    pub rows: BTreeMap<ClusteringKey, Row>,
}

impl Partition {
    /// Sets every write of the update to timestamp `ts` and every deletion to `ts - 1`, so that
    /// the update's own writes win over its own deletions (Cassandra's `withUpdatedTimestamps`,
    /// which a Paxos commit applies with the ballot's time).
    pub fn set_timestamps(&mut self, ts: i64) {
        let del = |d: &mut DeletionTime| d.marked_at = ts.saturating_sub(1);
        if let Some(d) = self.deletion.as_mut() {
            del(d);
        }
        for rt in &mut self.range_tombstones {
            del(&mut rt.deletion);
        }
        let row = |r: &mut Row| {
            if let Some(m) = r.marker.as_mut() {
                m.timestamp = ts;
            }
            if let Some(d) = r.deletion.as_mut() {
                del(d);
            }
            for (_, data) in &mut r.columns {
                match data {
                    ColumnData::Simple(c) => c.timestamp = ts,
                    ColumnData::Complex(cc) => {
                        if let Some(d) = cc.deletion.as_mut() {
                            del(d);
                        }
                        for (_, c) in &mut cc.cells {
                            c.timestamp = ts;
                        }
                    }
                }
            }
        };
        if let Some(s) = self.static_row.as_mut() {
            row(s);
        }
        for r in self.rows.values_mut() {
            row(r);
        }
    }

    /// True when the partition carries nothing.
    pub fn is_empty(&self) -> bool {
        self.deletion.is_none()
            && self.static_row.as_ref().is_none_or(Row::is_empty)
            && self.range_tombstones.is_empty()
            && self.rows.is_empty()
    }

    /// Merges `other` into `self` (reconciliation).
    pub fn merge(&mut self, other: Partition) {
        self.merge_growth(other);
    }

    /// Merges `other` into `self` and returns how much [`Partition::heap_size`] grew, or 0
    /// when it shrank: what a memtable must charge for the write. An overwritten cell costs
    /// only the difference, since the value it replaces is dropped.
    pub fn merge_growth(&mut self, other: Partition) -> usize {
        let mut growth: i64 = 0;
        let size = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        self.deletion = DeletionTime::max(self.deletion, other.deletion);
        match (&mut self.static_row, other.static_row) {
            (Some(mine), Some(theirs)) => {
                growth -= size(mine.heap_size());
                mine.merge(theirs);
                growth += size(mine.heap_size());
            }
            (mine @ None, theirs) => {
                growth += size(theirs.as_ref().map_or(0, Row::heap_size));
                *mine = theirs;
            }
            (Some(_), None) => {}
        }
        for rt in other.range_tombstones {
            if !self.range_tombstones.contains(&rt) {
                growth += size(range_tombstone_size(&rt));
                self.range_tombstones.push(rt);
            }
        }
        if self.rows.is_empty() {
            growth += size(other.rows.iter().map(row_entry_size).sum());
            self.rows = other.rows;
        } else {
            for (key, row) in other.rows {
                match self.rows.entry(key) {
                    std::collections::btree_map::Entry::Occupied(mut e) => {
                        growth -= size(e.get().heap_size());
                        e.get_mut().merge(row);
                        growth += size(e.get().heap_size());
                    }
                    std::collections::btree_map::Entry::Vacant(e) => {
                        growth += size(row_entry_size((e.key(), &row)));
                        e.insert(row);
                    }
                }
            }
        }
        usize::try_from(growth).unwrap_or(0)
    }

    /// The strongest range tombstone covering `key`, if any.
    pub fn range_deletion_at(&self, key: &[u8]) -> Option<DeletionTime> {
        covering_deletion(&self.range_tombstones, key)
    }

    /// Visits every timestamp the partition carries.
    pub fn for_each_timestamp(&self, mut f: impl FnMut(i64)) {
        if let Some(d) = self.deletion {
            f(d.marked_at);
        }
        for rt in &self.range_tombstones {
            f(rt.deletion.marked_at);
        }
        if let Some(s) = &self.static_row {
            s.for_each_timestamp(&mut f);
        }
        for row in self.rows.values() {
            row.for_each_timestamp(&mut f);
        }
    }

    /// Number of cells (static and clustering rows).
    pub fn cell_count(&self) -> usize {
        self.static_row.as_ref().map_or(0, Row::cell_count)
            + self.rows.values().map(Row::cell_count).sum::<usize>()
    }

    /// Approximate heap bytes, for memtable accounting.
    pub fn heap_size(&self) -> usize {
        std::mem::size_of::<Partition>()
            + self.static_row.as_ref().map_or(0, Row::heap_size)
            + self
                .range_tombstones
                .iter()
                .map(range_tombstone_size)
                .sum::<usize>()
            + self.rows.iter().map(row_entry_size).sum::<usize>()
    }
}

/// Heap bytes of one range tombstone in a partition.
fn range_tombstone_size(rt: &RangeTombstone) -> usize {
    std::mem::size_of::<RangeTombstone>() + 16 + rt.range.start.len() + rt.range.end.len()
}

/// Heap bytes of one clustering row in a partition's map: key, row and a share of the
/// BTreeMap's nodes.
fn row_entry_size((key, row): (&ClusteringKey, &Row)) -> usize {
    const BTREE_ENTRY_OVERHEAD: usize = 32;
    key.0.len() + row.heap_size() + BTREE_ENTRY_OVERHEAD
}

/// The strongest deletion among `tombstones` covering `key`.
pub fn covering_deletion(tombstones: &[RangeTombstone], key: &[u8]) -> Option<DeletionTime> {
    tombstones
        .iter()
        .filter(|rt| rt.range.contains(key))
        .fold(None, |acc, rt| DeletionTime::max(acc, Some(rt.deletion)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cell::LivenessInfo;
    use bytes::Bytes;

    fn key(b: u8) -> ClusteringKey {
        ClusteringKey(Bytes::from(vec![crate::model::key::COMPONENT_MARKER, b]))
    }

    fn marker_row(ts: i64) -> Row {
        Row {
            marker: Some(LivenessInfo::live(ts)),
            ..Row::default()
        }
    }

    #[test]
    fn set_timestamps_puts_deletions_just_below_the_writes() {
        let mut p = Partition {
            deletion: Some(DeletionTime {
                marked_at: 100,
                local_deletion_time: 1,
            }),
            ..Partition::default()
        };
        p.rows.insert(key(1), marker_row(100));
        p.set_timestamps(50);
        assert_eq!(p.deletion.map(|d| d.marked_at), Some(49));
        let row = p
            .rows
            .get(&key(1))
            .and_then(|r| r.marker)
            .map(|m| m.timestamp);
        assert_eq!(row, Some(50));
        // The update's own row survives its own partition deletion.
        assert!(p.deletion.is_some_and(|d| !d.deletes(50)));
    }

    #[test]
    fn merge_is_order_independent() {
        let mut a = Partition::default();
        a.rows.insert(key(1), marker_row(1));
        a.deletion = Some(DeletionTime {
            marked_at: 0,
            local_deletion_time: 1,
        });
        let mut b = Partition::default();
        b.rows.insert(key(1), marker_row(5));
        b.rows.insert(key(2), marker_row(2));
        b.range_tombstones.push(RangeTombstone {
            range: ClusteringRange::prefix(&key(2).0),
            deletion: DeletionTime {
                marked_at: 3,
                local_deletion_time: 1,
            },
        });
        let mut ab = a.clone();
        ab.merge(b.clone());
        let mut ba = b;
        ba.merge(a);
        assert_eq!(ab, ba);
        assert_eq!(
            ab.range_deletion_at(&key(2).0).map(|d| d.marked_at),
            Some(3)
        );
        assert_eq!(ab.range_deletion_at(&key(1).0), None);
    }
}
