//! Keys: decorated partition keys (a key with its token), clustering keys and clustering bounds.
//!
//! Invariants:
//! - Partitions are ordered by [`DecoratedKey`]: token first (signed), then the serialized
//!   key bytes (unsigned). This is the order of memtables, sstables and range scans.
//! - A [`ClusteringKey`] is a *byte-comparable* encoding of the clustering values
//!   (see [`super::clustering`]): comparing two keys with `memcmp` gives the table's clustering
//!   order, including per-column DESC and type-aware ordering. Every component starts with
//!   [`COMPONENT_MARKER`]; so the encoding of a prefix is a byte-prefix of every key that
//!   extends it.
//! - A position *between* keys is a plain byte string in the same order ([`ClusteringPos`]):
//!   `enc(P)` sits before every key with prefix `P`, `enc(P) + AFTER_PREFIX` after all of them,
//!   the empty string before every key, and `[0xFF]` after every key.

use super::token::{token_of, Token};
use bytes::Bytes;

/// The byte every encoded clustering component starts with.
pub const COMPONENT_MARKER: u8 = 0x10;
/// Appended to a prefix to make the position just after every key extending it.
pub const AFTER_PREFIX: u8 = 0x20;
/// The position after every clustering key.
pub const TOP: u8 = 0xFF;

/// A partition key together with its token; the sort key of partitions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DecoratedKey {
    /// Murmur3 token of `key`.
    pub token: Token,
    /// The serialized partition key (single value, or the composite encoding).
    pub key: Bytes,
}

impl DecoratedKey {
    /// Hashes `key` and decorates it with its token.
    pub fn new(key: Bytes) -> Self {
        let token = token_of(&key);
        DecoratedKey { token, key }
    }
}

impl PartialOrd for DecoratedKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for DecoratedKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.token
            .cmp(&other.token)
            .then_with(|| self.key.as_ref().cmp(other.key.as_ref()))
    }
}

/// A position in the partition order used to start or resume a range scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartitionPos {
    /// Before every partition whose token is `>= token`.
    TokenStart(Token),
    /// Right after the given partition (resume a scan after it).
    After(DecoratedKey),
    /// At the given partition, inclusive.
    At(DecoratedKey),
}

impl PartitionPos {
    /// True when `key` lies at or after this position.
    pub fn admits(&self, key: &DecoratedKey) -> bool {
        match self {
            PartitionPos::TokenStart(t) => key.token >= *t,
            PartitionPos::After(k) => key > k,
            PartitionPos::At(k) => key >= k,
        }
    }
}

/// A byte-comparable clustering key (all components present).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ClusteringKey(pub Bytes);

impl ClusteringKey {
    /// The key of a table without clustering columns.
    pub fn empty() -> Self {
        ClusteringKey(Bytes::new())
    }
    /// The encoded bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

/// A position between clustering keys (see the module docs).
pub type ClusteringPos = Bytes;

/// A half-open interval `[start, end)` of clustering positions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClusteringRange {
    /// Inclusive lower position.
    pub start: ClusteringPos,
    /// Exclusive upper position.
    pub end: ClusteringPos,
}

impl ClusteringRange {
    /// Every clustering key.
    pub fn all() -> Self {
        ClusteringRange {
            start: Bytes::new(),
            end: Bytes::from_static(&[TOP]),
        }
    }

    /// Every key that extends the encoded prefix `prefix` (a whole key selects one row).
    pub fn prefix(prefix: &[u8]) -> Self {
        ClusteringRange {
            start: Bytes::copy_from_slice(prefix),
            end: after_prefix(prefix),
        }
    }

    /// Builds a range from encoded prefix bounds, as CQL slices give them.
    /// `None` means unbounded on that side.
    pub fn from_bounds(start: Option<(&[u8], bool)>, end: Option<(&[u8], bool)>) -> Self {
        let start = match start {
            None => Bytes::new(),
            Some((p, true)) => Bytes::copy_from_slice(p),
            Some((p, false)) => after_prefix(p),
        };
        let end = match end {
            None => Bytes::from_static(&[TOP]),
            Some((p, true)) => after_prefix(p),
            Some((p, false)) => Bytes::copy_from_slice(p),
        };
        ClusteringRange { start, end }
    }

    /// True when `key` lies in the range.
    pub fn contains(&self, key: &[u8]) -> bool {
        key >= self.start.as_ref() && key < self.end.as_ref()
    }

    /// True when no key can lie in the range.
    pub fn is_empty(&self) -> bool {
        self.start >= self.end
    }

    /// True when the two ranges share at least one position.
    pub fn intersects(&self, other: &ClusteringRange) -> bool {
        self.start < other.end && other.start < self.end
    }

    /// True when some key in `[min, max]` (inclusive keys) may lie in the range.
    pub fn overlaps_keys(&self, min: &[u8], max: &[u8]) -> bool {
        max >= self.start.as_ref() && min < self.end.as_ref()
    }
}

/// The position just after every key that extends `prefix`.
pub fn after_prefix(prefix: &[u8]) -> Bytes {
    let mut v = Vec::with_capacity(prefix.len() + 1);
    v.extend_from_slice(prefix);
    v.push(AFTER_PREFIX);
    Bytes::from(v)
}

/// Which clustering rows a read wants: a sorted, non-overlapping list of ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slice {
    ranges: Vec<ClusteringRange>,
}

impl Slice {
    /// Every row.
    pub fn all() -> Self {
        Slice {
            ranges: vec![ClusteringRange::all()],
        }
    }

    /// Builds a slice from any ranges: empties are dropped, the rest sorted and merged.
    pub fn new(mut ranges: Vec<ClusteringRange>) -> Self {
        ranges.retain(|r| !r.is_empty());
        ranges.sort_by(|a, b| a.start.cmp(&b.start));
        let mut merged: Vec<ClusteringRange> = Vec::with_capacity(ranges.len());
        for r in ranges {
            match merged.last_mut() {
                Some(last) if r.start <= last.end => {
                    if r.end > last.end {
                        last.end = r.end;
                    }
                }
                _ => merged.push(r),
            }
        }
        Slice { ranges: merged }
    }

    /// The ranges, sorted and disjoint.
    pub fn ranges(&self) -> &[ClusteringRange] {
        &self.ranges
    }

    /// True when `key` is selected.
    pub fn contains(&self, key: &[u8]) -> bool {
        // Ranges are sorted: find the last range starting at or before `key`.
        let idx = self.ranges.partition_point(|r| r.start.as_ref() <= key);
        idx > 0 && self.ranges[idx - 1].contains(key)
    }

    /// True when the slice selects nothing.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// True when the slice may select a key in `[min, max]`.
    pub fn overlaps_keys(&self, min: &[u8], max: &[u8]) -> bool {
        self.ranges.iter().any(|r| r.overlaps_keys(min, max))
    }

    /// True when the slice may select a key in the range.
    pub fn intersects(&self, range: &ClusteringRange) -> bool {
        self.ranges.iter().any(|r| r.intersects(range))
    }

    /// The smallest start and largest end of the slice.
    pub fn bounds(&self) -> Option<(&[u8], &[u8])> {
        match (self.ranges.first(), self.ranges.last()) {
            (Some(f), Some(l)) => Some((f.start.as_ref(), l.end.as_ref())),
            _ => None,
        }
    }

    /// Restricts the slice to positions strictly after the key `after` (forward paging), or
    /// strictly before it when `reversed`.
    pub fn resume_after(&self, key: &[u8], reversed: bool) -> Slice {
        let ranges = self
            .ranges
            .iter()
            .filter_map(|r| {
                let mut r = r.clone();
                if reversed {
                    if r.end.as_ref() > key {
                        r.end = Bytes::copy_from_slice(key);
                    }
                } else {
                    let mut next = key.to_vec();
                    next.push(0);
                    let next = Bytes::from(next);
                    if r.start < next {
                        r.start = next;
                    }
                }
                (!r.is_empty()).then_some(r)
            })
            .collect();
        Slice { ranges }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comp(v: &[u8]) -> Vec<u8> {
        let mut out = vec![COMPONENT_MARKER];
        out.extend_from_slice(v);
        out
    }

    #[test]
    fn prefix_range_covers_extensions_only() {
        let p = comp(&[5]);
        let mut k1 = p.clone();
        k1.extend(comp(&[1]));
        let mut k2 = comp(&[6]);
        k2.extend(comp(&[0]));
        let r = ClusteringRange::prefix(&p);
        assert!(r.contains(&p));
        assert!(r.contains(&k1));
        assert!(!r.contains(&k2));
    }

    #[test]
    fn slice_merges_and_resumes() {
        let a = comp(&[1]);
        let b = comp(&[3]);
        let c = comp(&[5]);
        let s = Slice::new(vec![
            ClusteringRange::from_bounds(Some((&b, true)), Some((&c, true))),
            ClusteringRange::from_bounds(Some((&a, true)), Some((&b, true))),
        ]);
        assert_eq!(s.ranges().len(), 1);
        assert!(s.contains(&a) && s.contains(&c));
        let resumed = s.resume_after(&b, false);
        assert!(!resumed.contains(&b) && resumed.contains(&c));
        let back = s.resume_after(&b, true);
        assert!(!back.contains(&b) && back.contains(&a) && !back.contains(&c));
    }

    #[test]
    fn exclusive_bounds() {
        let a = comp(&[1]);
        let c = comp(&[5]);
        let r = ClusteringRange::from_bounds(Some((&a, false)), Some((&c, false)));
        assert!(!r.contains(&a));
        assert!(!r.contains(&c));
        assert!(r.contains(&comp(&[3])));
    }
}
