//! What a compaction keeps of a merged partition: shadowed data goes, expired cells become
//! tombstones, and tombstones go once they are both old enough and provably useless.
//!
//! A tombstone (partition, range, row, complex-column or cell deletion, or an expired cell or
//! row marker) is *purgeable* when
//! 1. its local deletion time is before `gc_before` (`gc_grace_seconds` ago for the `timeout`
//!    mode of `tombstone_gc`, now for `immediate`, never for `disabled`), and
//! 2. its timestamp is below `max_purgeable`: the smallest timestamp any source *outside* the
//!    job (another sstable whose bloom filter admits the key, a memtable holding the key) may
//!    hold for this partition. Data those sources hold with an older timestamp would come back
//!    to life if the tombstone went.
//!
//! Data shadowed by a deletion in the merged partition is always dropped: whatever shadows it
//! stays (or is purged only under the rule above, with the data it shadowed gone too).
//! `max_purgeable` is computed lazily — only for partitions that have a candidate — because it
//! probes bloom filters.

use crate::model::cell::{Cell, DeletionTime, NowSecs};
use crate::model::partition::covering_deletion;
use crate::model::row::{ColumnData, Row};
use crate::model::Partition;

/// When tombstones may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PurgePolicy {
    /// "Now" for TTL expiry.
    pub now: NowSecs,
    /// Deletions made before this time may be purged; `None` disables purging.
    pub gc_before: Option<u32>,
}

/// What compacting one partition removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PurgeCounts {
    /// Tombstones of every kind dropped.
    pub tombstones_purged: u64,
    /// Expired cells turned into tombstones (and maybe then purged).
    pub expired_cells: u64,
}

/// Lazily computed `max_purgeable` (see the module docs).
struct MaxPurgeable<F: FnMut() -> i64> {
    compute: F,
    value: Option<i64>,
}

impl<F: FnMut() -> i64> MaxPurgeable<F> {
    fn get(&mut self) -> i64 {
        *self.value.get_or_insert_with(&mut self.compute)
    }
}

struct Purger<F: FnMut() -> i64> {
    policy: PurgePolicy,
    max_purgeable: MaxPurgeable<F>,
    counts: PurgeCounts,
}

impl<F: FnMut() -> i64> Purger<F> {
    /// Cassandra's `shouldPurge(timestamp, localDeletionTime)`.
    fn can_purge(&mut self, timestamp: i64, local_deletion_time: u32) -> bool {
        let old_enough = self
            .policy
            .gc_before
            .is_some_and(|g| local_deletion_time < g);
        if old_enough && timestamp < self.max_purgeable.get() {
            self.counts.tombstones_purged += 1;
            true
        } else {
            false
        }
    }

    fn purge_deletion(&mut self, d: &mut Option<DeletionTime>) {
        if let Some(del) = *d {
            if self.can_purge(del.marked_at, del.local_deletion_time) {
                *d = None;
            }
        }
    }

    /// Returns the cell to keep, if any: expired cells become tombstones dated at their write
    /// time (`expiry − ttl`), as Cassandra's `Cell.purge` does.
    fn purge_cell(&mut self, c: Cell) -> Option<Cell> {
        if c.is_live(self.policy.now) {
            return Some(c);
        }
        if self.can_purge(c.timestamp, c.local_deletion_time) {
            return None;
        }
        if c.is_expiring() {
            self.counts.expired_cells += 1;
            return Some(Cell {
                timestamp: c.timestamp,
                ttl: 0,
                local_deletion_time: c.local_deletion_time.saturating_sub(c.ttl),
                value: bytes::Bytes::new(),
                counter: false,
            });
        }
        Some(c)
    }

    /// Drops what `shadow` (partition or range deletion) and the row's own deletion shadow,
    /// then purges the row's tombstones. Returns false when nothing is left.
    fn compact_row(&mut self, row: &mut Row, shadow: Option<DeletionTime>) -> bool {
        if let Some(d) = shadow {
            row.apply_deletion(d);
        }
        if let Some(own) = row.deletion {
            row.apply_deletion(own);
            // `apply_deletion` drops the row's deletion when it does not supersede the one
            // applied, and a deletion never supersedes itself: put it back.
            row.deletion = Some(own);
        }
        if let Some(m) = row.marker {
            if !m.is_live(self.policy.now) && self.can_purge(m.timestamp, m.local_expiration_time) {
                row.marker = None;
            }
        }
        self.purge_deletion(&mut row.deletion);
        let columns = std::mem::take(&mut row.columns);
        for (id, data) in columns {
            match data {
                ColumnData::Simple(c) => {
                    if let Some(c) = self.purge_cell(c) {
                        row.columns.push((id, ColumnData::Simple(c)));
                    }
                }
                ColumnData::Complex(mut cc) => {
                    if let Some(d) = cc.deletion {
                        cc.cells.retain(|(_, c)| !d.deletes(c.timestamp));
                    }
                    self.purge_deletion(&mut cc.deletion);
                    let cells = std::mem::take(&mut cc.cells);
                    for (path, c) in cells {
                        if let Some(c) = self.purge_cell(c) {
                            cc.cells.push((path, c));
                        }
                    }
                    if !cc.cells.is_empty() || cc.deletion.is_some() {
                        row.columns.push((id, ColumnData::Complex(cc)));
                    }
                }
            }
        }
        !row.is_empty()
    }
}

/// Compacts a merged partition in place (see the module docs). `max_purgeable` is called at
/// most once, and only when something is old enough to be purged. Returns what was removed;
/// the partition may end up empty, in which case it should not be written.
pub fn compact_partition(
    p: &mut Partition,
    policy: PurgePolicy,
    max_purgeable: impl FnMut() -> i64,
) -> PurgeCounts {
    let mut purger = Purger {
        policy,
        max_purgeable: MaxPurgeable {
            compute: max_purgeable,
            value: None,
        },
        counts: PurgeCounts::default(),
    };
    let pd = p.deletion;
    // Range tombstones the partition deletion covers are redundant.
    if let Some(pd) = pd {
        p.range_tombstones.retain(|rt| rt.deletion.supersedes(&pd));
    }
    if let Some(mut s) = p.static_row.take() {
        if purger.compact_row(&mut s, pd) {
            p.static_row = Some(s);
        }
    }
    let rows = std::mem::take(&mut p.rows);
    for (key, mut row) in rows {
        let shadow = DeletionTime::max(pd, covering_deletion(&p.range_tombstones, &key.0));
        if purger.compact_row(&mut row, shadow) {
            p.rows.insert(key, row);
        }
    }
    let rts = std::mem::take(&mut p.range_tombstones);
    for rt in rts {
        if !purger.can_purge(rt.deletion.marked_at, rt.deletion.local_deletion_time) {
            p.range_tombstones.push(rt);
        }
    }
    purger.purge_deletion(&mut p.deletion);
    purger.counts
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::model::cell::LivenessInfo;
    use crate::model::key::{ClusteringKey, ClusteringRange, COMPONENT_MARKER};
    use crate::model::partition::RangeTombstone;
    use bytes::Bytes;

    fn ck(b: u8) -> ClusteringKey {
        ClusteringKey(Bytes::from(vec![COMPONENT_MARKER, b]))
    }

    fn row(ts: i64) -> Row {
        Row {
            marker: Some(LivenessInfo::live(ts)),
            deletion: None,
            columns: vec![(
                1,
                ColumnData::Simple(Cell::live(ts, Bytes::from_static(b"v"))),
            )],
        }
    }

    fn del(ts: i64, ldt: u32) -> DeletionTime {
        DeletionTime {
            marked_at: ts,
            local_deletion_time: ldt,
        }
    }

    const NOW: u32 = 1_000_000;

    fn policy(gc_before: Option<u32>) -> PurgePolicy {
        PurgePolicy {
            now: NOW,
            gc_before,
        }
    }

    #[test]
    fn partition_deletion_drops_older_rows_and_stays_until_gc() {
        let mut p = Partition::default();
        p.rows.insert(ck(1), row(10));
        p.rows.insert(ck(2), row(30));
        p.deletion = Some(del(20, NOW - 10));
        let c = compact_partition(&mut p, policy(Some(NOW - 100)), || i64::MAX);
        assert_eq!(c.tombstones_purged, 0);
        assert_eq!(p.rows.len(), 1);
        assert!(p.rows.contains_key(&ck(2)));
        assert!(p.deletion.is_some());
    }

    #[test]
    fn purgeable_only_below_max_purgeable() {
        let make = || Partition {
            deletion: Some(del(20, NOW - 1000)),
            ..Default::default()
        };
        let mut p = make();
        compact_partition(&mut p, policy(Some(NOW)), || 15);
        assert!(
            p.deletion.is_some(),
            "an outside source may hold data at ts 15..20"
        );
        let mut p = make();
        compact_partition(&mut p, policy(Some(NOW)), || 21);
        assert!(p.is_empty());
        let mut p = make();
        compact_partition(&mut p, policy(None), || i64::MAX);
        assert!(p.deletion.is_some(), "tombstone_gc disabled");
    }

    #[test]
    fn max_purgeable_is_not_computed_without_candidates() {
        let mut p = Partition::default();
        p.rows.insert(ck(1), row(10));
        p.deletion = Some(del(5, NOW - 10));
        compact_partition(&mut p, policy(Some(NOW - 100)), || {
            panic!("no tombstone is old enough")
        });
    }

    #[test]
    fn expired_cells_become_tombstones_then_go() {
        let mut p = Partition::default();
        let mut r = row(10);
        r.columns = vec![(
            1,
            ColumnData::Simple(Cell::expiring(10, 100, NOW - 200, Bytes::from_static(b"x"))),
        )];
        r.marker = None;
        p.rows.insert(ck(1), r);
        let mut q = p.clone();
        let c = compact_partition(&mut p, policy(Some(NOW - 1000)), || i64::MAX);
        assert_eq!(c.expired_cells, 1);
        let ColumnData::Simple(cell) = &p.rows[&ck(1)].columns[0].1 else {
            panic!()
        };
        assert!(cell.is_tombstone());
        assert_eq!(cell.local_deletion_time, NOW - 200);
        compact_partition(&mut q, policy(Some(NOW)), || i64::MAX);
        assert!(q.is_empty());
    }

    #[test]
    fn range_tombstones_shadow_and_purge() {
        let mut p = Partition::default();
        p.rows.insert(ck(1), row(10));
        p.rows.insert(ck(5), row(10));
        p.range_tombstones.push(RangeTombstone {
            range: ClusteringRange {
                start: ck(0).0,
                end: ck(3).0,
            },
            deletion: del(11, NOW - 50),
        });
        let mut q = p.clone();
        compact_partition(&mut p, policy(Some(NOW - 100)), || i64::MAX);
        assert_eq!(p.rows.keys().cloned().collect::<Vec<_>>(), vec![ck(5)]);
        assert_eq!(p.range_tombstones.len(), 1);
        compact_partition(&mut q, policy(Some(NOW)), || i64::MAX);
        assert_eq!(q.range_tombstones.len(), 0);
        assert_eq!(q.rows.len(), 1);
    }

    #[test]
    fn row_deletion_keeps_newer_cells() {
        let mut p = Partition::default();
        let mut r = row(10);
        r.columns.push((
            2,
            ColumnData::Simple(Cell::live(30, Bytes::from_static(b"n"))),
        ));
        r.deletion = Some(del(20, NOW - 5));
        p.rows.insert(ck(1), r);
        compact_partition(&mut p, policy(Some(NOW - 100)), || i64::MAX);
        let r = &p.rows[&ck(1)];
        assert!(r.marker.is_none());
        assert_eq!(r.columns.len(), 1);
        assert_eq!(r.columns[0].0, 2);
        assert!(r.deletion.is_some());
    }
}
