//! Cells, row liveness and deletion times, and how two versions of each reconcile.
//!
//! Times: write timestamps are microseconds since the epoch (`i64`), as CQL `USING TIMESTAMP`
//! gives them; local deletion / expiry times are seconds since the epoch (`u32`), as Cassandra
//! 5 stores them. Reconciliation follows Cassandra's `Cells.reconcile` and
//! `LivenessInfo.supersedes` exactly, so replicas of either system would agree with us.

use bytes::Bytes;
use std::cmp::Ordering;

/// Seconds since the epoch, "now" for TTL and tombstone decisions.
pub type NowSecs = u32;

/// `local_deletion_time` of a cell that never expires and is not deleted.
pub const NO_DELETION_TIME: u32 = u32::MAX;

/// A deletion: everything written at or before `marked_at` is shadowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeletionTime {
    /// Write timestamp of the deletion (µs).
    pub marked_at: i64,
    /// When the deletion was made (s); decides when it may be purged.
    pub local_deletion_time: u32,
}

impl DeletionTime {
    /// True when this deletion wins over `other` (higher timestamp, then later local time).
    pub fn supersedes(&self, other: &DeletionTime) -> bool {
        self.marked_at > other.marked_at
            || (self.marked_at == other.marked_at
                && self.local_deletion_time > other.local_deletion_time)
    }

    /// True when data written at `timestamp` is shadowed by this deletion.
    pub fn deletes(&self, timestamp: i64) -> bool {
        timestamp <= self.marked_at
    }

    /// The winner of two optional deletions.
    pub fn max(a: Option<DeletionTime>, b: Option<DeletionTime>) -> Option<DeletionTime> {
        match (a, b) {
            (Some(x), Some(y)) => Some(if y.supersedes(&x) { y } else { x }),
            (x, None) => x,
            (None, y) => y,
        }
    }
}

/// The liveness of a row's primary key: the "row marker" an `INSERT` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LivenessInfo {
    /// Write timestamp (µs).
    pub timestamp: i64,
    /// TTL in seconds, 0 when the marker does not expire.
    pub ttl: u32,
    /// Expiry time (s) when `ttl > 0`, else [`NO_DELETION_TIME`].
    pub local_expiration_time: u32,
}

impl LivenessInfo {
    /// A marker that never expires.
    pub fn live(timestamp: i64) -> Self {
        LivenessInfo {
            timestamp,
            ttl: 0,
            local_expiration_time: NO_DELETION_TIME,
        }
    }

    /// A marker that expires `ttl` seconds after `now`.
    pub fn expiring(timestamp: i64, ttl: u32, now: NowSecs) -> Self {
        LivenessInfo {
            timestamp,
            ttl,
            local_expiration_time: expiry(now, ttl),
        }
    }

    /// True when the marker has a TTL.
    pub fn is_expiring(&self) -> bool {
        self.ttl > 0
    }

    /// True when the marker still makes its row live at `now`.
    pub fn is_live(&self, now: NowSecs) -> bool {
        !self.is_expiring() || now < self.local_expiration_time
    }

    /// Cassandra's `LivenessInfo.supersedes`.
    pub fn supersedes(&self, other: &LivenessInfo) -> bool {
        if self.timestamp != other.timestamp {
            return self.timestamp > other.timestamp;
        }
        // An expired-at-write marker (Cassandra's EXPIRED_LIVENESS_TTL) never arises here, so
        // the tie rules reduce to: both expiring or both not → later expiry wins; else the
        // expiring one wins.
        if self.is_expiring() == other.is_expiring() {
            return self.local_expiration_time > other.local_expiration_time;
        }
        self.is_expiring()
    }
}

/// `now + ttl`, saturating below [`NO_DELETION_TIME`].
pub fn expiry(now: NowSecs, ttl: u32) -> u32 {
    now.saturating_add(ttl).min(NO_DELETION_TIME - 1)
}

/// One version of one simple column's value (or its deletion).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Cell {
    /// Write timestamp (µs).
    pub timestamp: i64,
    /// TTL in seconds; 0 for non-expiring cells and for tombstones.
    pub ttl: u32,
    /// Expiry time for expiring cells, deletion time for tombstones, else [`NO_DELETION_TIME`].
    pub local_deletion_time: u32,
    /// The CQL-serialized value; empty for tombstones.
    pub value: Bytes,
}

impl Cell {
    /// A live, non-expiring cell.
    pub fn live(timestamp: i64, value: Bytes) -> Self {
        Cell {
            timestamp,
            ttl: 0,
            local_deletion_time: NO_DELETION_TIME,
            value,
        }
    }

    /// A cell that expires `ttl` seconds after `now`.
    pub fn expiring(timestamp: i64, ttl: u32, now: NowSecs, value: Bytes) -> Self {
        Cell {
            timestamp,
            ttl,
            local_deletion_time: expiry(now, ttl),
            value,
        }
    }

    /// A cell tombstone made at `now`.
    pub fn tombstone(timestamp: i64, now: NowSecs) -> Self {
        Cell {
            timestamp,
            ttl: 0,
            local_deletion_time: now,
            value: Bytes::new(),
        }
    }

    /// True for a deletion (not for an expiring cell).
    pub fn is_tombstone(&self) -> bool {
        self.ttl == 0 && self.local_deletion_time != NO_DELETION_TIME
    }

    /// True for a cell with a TTL.
    pub fn is_expiring(&self) -> bool {
        self.ttl > 0
    }

    /// True when the cell holds a value at `now`.
    pub fn is_live(&self, now: NowSecs) -> bool {
        if self.is_tombstone() {
            return false;
        }
        !self.is_expiring() || now < self.local_deletion_time
    }

    /// Cassandra's `Cells.resolveRegular`: which of two versions survives.
    pub fn reconcile(a: Cell, b: Cell) -> Cell {
        if Self::wins(&a, &b) {
            a
        } else {
            b
        }
    }

    /// True when `left` survives reconciliation with `right` (ties go to `left`).
    pub fn wins(left: &Cell, right: &Cell) -> bool {
        if left.timestamp != right.timestamp {
            return left.timestamp > right.timestamp;
        }
        let left_del = left.local_deletion_time != NO_DELETION_TIME;
        let right_del = right.local_deletion_time != NO_DELETION_TIME;
        if left_del || right_del {
            // Tombstones (and expiring cells, which become tombstones) beat plain live cells of
            // the same timestamp, whatever the clock says (CASSANDRA-14592).
            if left_del != right_del {
                return left_del;
            }
            let left_tomb = !left.is_expiring();
            let right_tomb = !right.is_expiring();
            if left_tomb != right_tomb {
                return left_tomb;
            }
            if left.local_deletion_time != right.local_deletion_time {
                return left.local_deletion_time > right.local_deletion_time;
            }
        }
        left.value.as_ref().cmp(right.value.as_ref()) != Ordering::Less
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &'static str) -> Bytes {
        Bytes::from_static(s.as_bytes())
    }

    #[test]
    fn higher_timestamp_wins() {
        let a = Cell::live(2, v("a"));
        let b = Cell::live(3, v("b"));
        assert_eq!(Cell::reconcile(a.clone(), b.clone()), b);
        assert_eq!(Cell::reconcile(b.clone(), a), b);
    }

    #[test]
    fn tombstone_beats_live_on_tie() {
        let live = Cell::live(5, v("z"));
        let dead = Cell::tombstone(5, 100);
        assert_eq!(Cell::reconcile(live.clone(), dead.clone()), dead);
        assert_eq!(Cell::reconcile(dead.clone(), live), dead);
    }

    #[test]
    fn expiring_beats_plain_live_and_tombstone_beats_expiring_on_tie() {
        let live = Cell::live(5, v("z"));
        let exp = Cell::expiring(5, 10, 100, v("a"));
        let dead = Cell::tombstone(5, 1);
        assert_eq!(Cell::reconcile(live, exp.clone()), exp);
        assert_eq!(Cell::reconcile(exp, dead.clone()), dead);
    }

    #[test]
    fn live_tie_goes_to_greater_value() {
        let a = Cell::live(5, v("a"));
        let b = Cell::live(5, v("b"));
        assert_eq!(Cell::reconcile(a.clone(), b.clone()), b);
        assert_eq!(Cell::reconcile(b.clone(), a), b);
    }

    #[test]
    fn expiring_ties_go_to_later_expiry() {
        let a = Cell::expiring(5, 10, 100, v("b"));
        let b = Cell::expiring(5, 20, 100, v("a"));
        assert_eq!(Cell::reconcile(a, b.clone()), b);
    }

    #[test]
    fn deletion_shadows_equal_timestamp() {
        let d = DeletionTime {
            marked_at: 10,
            local_deletion_time: 0,
        };
        assert!(d.deletes(10));
        assert!(!d.deletes(11));
    }

    #[test]
    fn liveness_ties() {
        let a = LivenessInfo::live(5);
        let b = LivenessInfo::expiring(5, 10, 100);
        assert!(b.supersedes(&a));
        assert!(!a.supersedes(&b));
        assert!(LivenessInfo::live(6).supersedes(&b));
    }
}
