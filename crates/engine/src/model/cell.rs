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

/// The TTL that marks a row marker *expired at write* (Cassandra's
/// `LivenessInfo.EXPIRED_LIVENESS_TTL`): view maintenance writes one where an entry goes away
/// but must not shadow the entry's cells or a newer marker (see [`LivenessInfo::expired`]).
pub const EXPIRED_LIVENESS_TTL: u32 = i32::MAX as u32;

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

    /// A marker expired from the start (Cassandra's `ExpiredLivenessInfo`): it wins over
    /// older markers like any marker, keeps nothing alive, and (unlike a row deletion)
    /// shadows no cell and no newer marker. A view entry that goes away while its cells may
    /// come back with an older marker (a view keyed by a base regular column whose value
    /// changes back, strict liveness) is retired this way. Purged like an expired marker,
    /// `gc_grace_seconds` after `now`.
    pub fn expired(timestamp: i64, now: NowSecs) -> Self {
        LivenessInfo {
            timestamp,
            ttl: EXPIRED_LIVENESS_TTL,
            local_expiration_time: now,
        }
    }

    /// True when the marker has a TTL.
    pub fn is_expiring(&self) -> bool {
        self.ttl > 0
    }

    /// True for a marker made by [`LivenessInfo::expired`].
    pub fn is_expired(&self) -> bool {
        self.ttl == EXPIRED_LIVENESS_TTL
    }

    /// True when the marker still makes its row live at `now`.
    pub fn is_live(&self, now: NowSecs) -> bool {
        !self.is_expiring() || (!self.is_expired() && now < self.local_expiration_time)
    }

    /// Cassandra's `LivenessInfo.supersedes`.
    pub fn supersedes(&self, other: &LivenessInfo) -> bool {
        if self.timestamp != other.timestamp {
            return self.timestamp > other.timestamp;
        }
        if self.is_expired() != other.is_expired() {
            return self.is_expired();
        }
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
    /// The CQL-serialized value; empty for tombstones. A counter cell's is its shards
    /// ([`super::counter`]).
    pub value: Bytes,
    /// A live counter cell: `value` is a counter context, and two versions reconcile by
    /// merging their shards ([`Cell::reconcile`]). A counter's deletion is a plain tombstone.
    pub counter: bool,
}

impl Cell {
    /// A live, non-expiring cell.
    pub fn live(timestamp: i64, value: Bytes) -> Self {
        Cell {
            timestamp,
            ttl: 0,
            local_deletion_time: NO_DELETION_TIME,
            value,
            counter: false,
        }
    }

    /// A live counter cell holding the counter context `shards` ([`super::counter`]).
    pub fn counter(timestamp: i64, shards: Bytes) -> Self {
        Cell {
            timestamp,
            ttl: 0,
            local_deletion_time: NO_DELETION_TIME,
            value: shards,
            counter: true,
        }
    }

    /// A cell that expires `ttl` seconds after `now`.
    pub fn expiring(timestamp: i64, ttl: u32, now: NowSecs, value: Bytes) -> Self {
        Cell {
            timestamp,
            ttl,
            local_deletion_time: expiry(now, ttl),
            value,
            counter: false,
        }
    }

    /// A cell tombstone made at `now`.
    pub fn tombstone(timestamp: i64, now: NowSecs) -> Self {
        Cell {
            timestamp,
            ttl: 0,
            local_deletion_time: now,
            value: Bytes::new(),
            counter: false,
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

    /// Cassandra's `Cells.reconcile`: which of two versions survives — for counters
    /// (`resolveCounter`) their merge.
    pub fn reconcile(a: Cell, b: Cell) -> Cell {
        if a.counter || b.counter {
            return Self::reconcile_counter(a, b);
        }
        if Self::wins(&a, &b) {
            a
        } else {
            b
        }
    }

    /// Applies `deletion` to a live counter cell shard by shard: keeps the shards whose clock
    /// is above the deletion's time and says whether any is left. A shard's clock is at least
    /// the timestamp it was written at (the leader makes it so, `cairn_cluster::proxy`'s
    /// counter write), so the shards a deletion shadows are exactly those written at or
    /// before it — whichever versions were merged first: shadowing by clock commutes with
    /// merging by clock, and reads and compaction merge before they shadow. A whole cell at
    /// or before the deletion goes at once (its timestamp is its shards' highest clock).
    pub fn shadow_shards(&mut self, deletion: DeletionTime) -> bool {
        if deletion.deletes(self.timestamp) {
            return false;
        }
        let at = deletion.marked_at;
        if super::counter::shards(&self.value).all(|s| s.clock > at) {
            return true;
        }
        let kept: Vec<super::counter::Shard> = super::counter::shards(&self.value)
            .filter(|s| s.clock > at)
            .collect();
        self.value = super::counter::encode(&kept);
        !kept.is_empty()
    }

    /// Cassandra's `Cells.resolveCounter`: a counter's tombstone wins over any live version
    /// whatever the timestamps (a deleted counter stays deleted; two tombstones: the newer),
    /// two live versions merge their shards (per counter id the higher clock, see
    /// [`super::counter::merge`]) under the newer timestamp. Timestamps never decide between
    /// two live versions, so a shard applied twice counts once.
    fn reconcile_counter(a: Cell, b: Cell) -> Cell {
        let (a_dead, b_dead) = (a.is_tombstone(), b.is_tombstone());
        if a_dead {
            return if !b_dead || a.timestamp > b.timestamp {
                a
            } else {
                b
            };
        }
        if b_dead {
            return b;
        }
        if !(a.counter && b.counter) {
            // A plain live cell beside a counter cannot come from CQL (a column is a counter
            // or not); keep the regular rule rather than read one as the other.
            return if Self::wins(&a, &b) { a } else { b };
        }
        let value = super::counter::merge(&a.value, &b.value);
        Cell::counter(a.timestamp.max(b.timestamp), value)
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

    /// Counter cells (Cassandra's `Cells.resolveCounter`), each case reconciled both ways.
    #[test]
    fn counter_reconcile_table() {
        use crate::model::counter::{encode, total, Shard};
        let c = |ts: i64, shards: &[(u8, i64, i64)]| {
            let s: Vec<Shard> = shards
                .iter()
                .map(|&(n, clock, value)| Shard {
                    id: [n; 16],
                    clock,
                    value,
                })
                .collect();
            Cell::counter(ts, encode(&s))
        };
        let dead = |ts: i64| Cell::tombstone(ts, 100);
        let cases: Vec<(Cell, Cell, Cell)> = vec![
            // Shards merge by clock; the newer timestamp is kept, not the newer value.
            (c(5, &[(1, 2, 10)]), c(9, &[(1, 1, 3)]), c(9, &[(1, 2, 10)])),
            (
                c(5, &[(1, 2, 10)]),
                c(5, &[(2, 1, 3)]),
                c(5, &[(1, 2, 10), (2, 1, 3)]),
            ),
            // The same shard twice counts once.
            (c(5, &[(1, 4, 7)]), c(5, &[(1, 4, 7)]), c(5, &[(1, 4, 7)])),
            // A tombstone wins over a live counter, even an older one.
            (dead(3), c(9, &[(1, 9, 9)]), dead(3)),
            (dead(9), c(3, &[(1, 9, 9)]), dead(9)),
            // Two tombstones: the newer.
            (dead(3), dead(4), dead(4)),
        ];
        for (a, b, want) in cases {
            assert_eq!(
                Cell::reconcile(a.clone(), b.clone()),
                want,
                "{a:?} vs {b:?}"
            );
            assert_eq!(
                Cell::reconcile(b.clone(), a.clone()),
                want,
                "{b:?} vs {a:?}"
            );
        }
        let merged = Cell::reconcile(c(1, &[(1, 3, 4), (2, 1, 1)]), c(2, &[(2, 2, 5)]));
        assert_eq!(total(&merged.value), 9);
    }

    /// A deletion shadows a merged counter shard by shard, and doing so before or after
    /// merging gives the same cell.
    #[test]
    fn counter_deletion_shadows_by_clock() {
        use crate::model::counter::{encode, total, Shard};
        let c = |ts: i64, n: u8, clock: i64, value: i64| {
            Cell::counter(
                ts,
                encode(&[Shard {
                    id: [n; 16],
                    clock,
                    value,
                }]),
            )
        };
        let d = DeletionTime {
            marked_at: 100,
            local_deletion_time: 0,
        };
        // Node 1 counted 10 before the deletion, node 2 counted 1 after it.
        let old = c(90, 1, 90, 10);
        let new = c(150, 2, 150, 1);
        let mut merged = Cell::reconcile(old.clone(), new.clone());
        assert!(merged.shadow_shards(d));
        assert_eq!(total(&merged.value), 1);
        let mut first = old;
        assert!(!first.shadow_shards(d));
        let mut second = new.clone();
        assert!(second.shadow_shards(d));
        assert_eq!(merged.value, second.value);
        // A cell wholly before the deletion goes.
        let mut gone = c(100, 1, 100, 3);
        assert!(!gone.shadow_shards(d));
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
    fn expired_marker_wins_ties_and_keeps_nothing_alive() {
        let e = LivenessInfo::expired(5, 100);
        assert!(e.is_expired());
        assert!(!e.is_live(0) && !e.is_live(100) && !e.is_live(NO_DELETION_TIME - 1));
        // Cassandra's `supersedes`: the timestamp first, then the expired marker on a tie.
        assert!(e.supersedes(&LivenessInfo::live(5)));
        assert!(!LivenessInfo::live(5).supersedes(&e));
        assert!(e.supersedes(&LivenessInfo::expiring(5, 10, 100)));
        assert!(LivenessInfo::live(6).supersedes(&e));
        assert!(!e.supersedes(&LivenessInfo::live(6)));
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
