//! Histograms: the ones sstable statistics keep, whose buckets also serve request latencies.
//!
//! * [`EstimatedHistogram`] is Cassandra's `EstimatedHistogram`: fixed buckets whose upper bounds
//!   start at 1 and grow by ×1.2 (rounded, at least +1), plus one overflow bucket. Used for
//!   partition sizes and cell counts; `nodetool tablehistograms`-style percentiles come from it.
//!   A value `v` goes to the first bucket whose bound is `>= v`; percentiles report that bound,
//!   so they over-estimate by at most 20 %.
//! * [`TombstoneHistogram`] is the bounded streaming histogram (Ben-Haim & Tom-Tov, "A Streaming
//!   Parallel Decision Tree Algorithm") Cassandra keeps of tombstones' local deletion times, with
//!   at most 100 bins and times rounded up to 60 s as `StreamingTombstoneHistogramBuilder` does.
//!   Compaction asks it how many tombstones became droppable before `gc_before`.
//!
//! Invariants: an `EstimatedHistogram`'s bounds are a pure function of its bucket count (so they
//! are not stored); a `TombstoneHistogram` holds at most `max_bins` bins with strictly increasing
//! points and non-zero counts.

use crate::error::CorruptionKind;

/// Bucket count Cassandra uses by default (and for sizes here).
pub const SIZE_BUCKETS: usize = 90;
/// Bucket count Cassandra uses for per-partition cell counts.
pub const COUNT_BUCKETS: usize = 114;
/// Upper bound on bucket counts accepted by `decode`: 1.2^n outgrows u64 at n ≈ 244.
const MAX_BUCKETS: usize = 240;

fn bucket_offsets(count: usize) -> Vec<u64> {
    let mut v = Vec::with_capacity(count);
    let mut last = 1u64;
    for i in 0..count {
        if i > 0 {
            let next = (last as f64 * 1.2).round() as u64;
            // Rounding keeps small values equal; every bucket must be wider than the last.
            last = if next <= last { last + 1 } else { next };
        }
        v.push(last);
    }
    v
}

/// Cassandra's estimated histogram (see module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EstimatedHistogram {
    offsets: Vec<u64>,
    /// `offsets.len() + 1` counters; the last one counts values above the largest bound.
    buckets: Vec<u64>,
}

impl EstimatedHistogram {
    /// A histogram with `bucket_count` bounded buckets (clamped to 1..=240) plus overflow.
    pub fn new(bucket_count: usize) -> Self {
        let offsets = bucket_offsets(bucket_count.clamp(1, MAX_BUCKETS));
        let buckets = vec![0; offsets.len() + 1];
        EstimatedHistogram { offsets, buckets }
    }

    fn index(&self, value: u64) -> usize {
        self.offsets.partition_point(|&o| o < value)
    }

    /// Records one value.
    pub fn add(&mut self, value: u64) {
        self.add_n(value, 1);
    }

    /// Records `n` occurrences of `value`.
    pub fn add_n(&mut self, value: u64, n: u64) {
        let i = self.index(value);
        if let Some(b) = self.buckets.get_mut(i) {
            *b = b.saturating_add(n);
        }
    }

    /// Adds `other`'s counts. With a different bucket layout each of `other`'s buckets is added
    /// at its upper bound (its overflow to this overflow).
    pub fn merge(&mut self, other: &EstimatedHistogram) {
        if self.offsets == other.offsets {
            for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
                *a = a.saturating_add(*b);
            }
            return;
        }
        for (i, &n) in other.buckets.iter().enumerate() {
            let v = other.offsets.get(i).copied().unwrap_or(u64::MAX);
            self.add_n(v, n);
        }
    }

    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.buckets.iter().fold(0u64, |a, &b| a.saturating_add(b))
    }

    /// True if some value exceeded the largest bound.
    pub fn is_overflowed(&self) -> bool {
        self.buckets.last().is_some_and(|&n| n > 0)
    }

    /// The bound of the bucket holding the `p`-quantile (`p` in 0..=1); 0 when empty,
    /// `u64::MAX` when it lies in the overflow bucket (where Cassandra throws).
    pub fn percentile(&self, p: f64) -> u64 {
        bucket_percentile(&self.offsets, &self.buckets, p)
    }

    /// Lower bound of the lowest non-empty bucket (0 when empty), as Cassandra's `min()`.
    pub fn min(&self) -> u64 {
        bucket_min(&self.offsets, &self.buckets)
    }

    /// Upper bound of the highest non-empty bucket (0 when empty, `u64::MAX` if overflowed).
    pub fn max(&self) -> u64 {
        bucket_max(&self.offsets, &self.buckets)
    }

    /// Mean taking each value as its bucket's bound, rounded up (Cassandra's `mean()`);
    /// 0 when empty, `u64::MAX` if overflowed.
    pub fn mean(&self) -> u64 {
        if self.is_overflowed() {
            return u64::MAX;
        }
        let (mut sum, mut n) = (0u128, 0u128);
        for (o, &c) in self.offsets.iter().zip(&self.buckets) {
            sum += u128::from(*o) * u128::from(c);
            n += u128::from(c);
        }
        if n == 0 {
            0
        } else {
            u64::try_from(sum.div_ceil(n)).unwrap_or(u64::MAX)
        }
    }

    /// `(upper bound, count)` per bucket, the overflow bucket last with bound `u64::MAX`.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.buckets
            .iter()
            .enumerate()
            .map(|(i, &n)| (self.offsets.get(i).copied().unwrap_or(u64::MAX), n))
    }

    /// Serialises as `u32 bucket_count | (bucket_count + 1) × u64 count`, little-endian.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.offsets.len() as u32).to_le_bytes());
        for b in &self.buckets {
            out.extend_from_slice(&b.to_le_bytes());
        }
    }

    /// Parses [`EstimatedHistogram::encode`]'s output.
    pub fn decode(bytes: &[u8]) -> Result<Self, CorruptionKind> {
        let (n, rest) = bytes
            .split_first_chunk::<4>()
            .ok_or(CorruptionKind::Truncated)?;
        let n = u32::from_le_bytes(*n) as usize;
        if n == 0 || n > MAX_BUCKETS {
            return Err(CorruptionKind::Invalid("histogram bucket count"));
        }
        let need = (n + 1) * 8;
        if rest.len() < need {
            return Err(CorruptionKind::Truncated);
        }
        if rest.len() > need {
            return Err(CorruptionKind::Invalid("trailing bytes after histogram"));
        }
        let buckets = rest.chunks_exact(8).map(le_u64).collect();
        Ok(EstimatedHistogram {
            offsets: bucket_offsets(n),
            buckets,
        })
    }
}

/// The bound of the bucket holding the `p`-quantile of bucketed counts — `counts[i]` counts
/// values up to `bounds[i]`, the last count (index `bounds.len()`) those above every bound —
/// as Cassandra reports percentiles: 0 when empty, `u64::MAX` in the overflow bucket. Shared
/// by [`EstimatedHistogram`] and the engine's request histograms.
pub fn bucket_percentile(bounds: &[u64], counts: &[u64], p: f64) -> u64 {
    let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
    let total = counts.iter().fold(0u64, |a, &b| a.saturating_add(b));
    let target = (total as f64 * p).ceil() as u64;
    if target == 0 {
        return 0;
    }
    let mut seen = 0u64;
    for (i, &n) in counts.iter().enumerate() {
        seen = seen.saturating_add(n);
        if seen >= target {
            return bounds.get(i).copied().unwrap_or(u64::MAX);
        }
    }
    0
}

/// Lower bound of the lowest non-empty bucket (0 when empty), as Cassandra's `min()`.
pub fn bucket_min(bounds: &[u64], counts: &[u64]) -> u64 {
    match counts.iter().position(|&n| n > 0) {
        Some(0) | None => 0,
        Some(i) => bounds.get(i - 1).map_or(u64::MAX, |b| b + 1),
    }
}

/// Upper bound of the highest non-empty bucket (0 when empty, `u64::MAX` if overflowed).
pub fn bucket_max(bounds: &[u64], counts: &[u64]) -> u64 {
    match counts.iter().rposition(|&n| n > 0) {
        None => 0,
        Some(i) => bounds.get(i).copied().unwrap_or(u64::MAX),
    }
}

fn le_u64(c: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(c.get(..8).unwrap_or(&[0; 8]));
    u64::from_le_bytes(b)
}

/// Default bin limit (Cassandra's `MAX_BIN_SIZE` for tombstone histograms).
pub const TOMBSTONE_MAX_BINS: u32 = 100;
/// Default rounding of deletion times, in seconds.
pub const TOMBSTONE_ROUND_SECS: u32 = 60;

/// Streaming histogram of tombstone local deletion times (see module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TombstoneHistogram {
    max_bins: u32,
    round_secs: u32,
    /// `(point, count)`, points strictly increasing, counts > 0, at most `max_bins` entries.
    bins: Vec<(u32, u64)>,
}

impl Default for TombstoneHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl TombstoneHistogram {
    /// 100 bins, times rounded up to 60 s.
    pub fn new() -> Self {
        Self::with_params(TOMBSTONE_MAX_BINS, TOMBSTONE_ROUND_SECS)
    }

    /// Custom bin limit and rounding (both at least 1).
    pub fn with_params(max_bins: u32, round_secs: u32) -> Self {
        TombstoneHistogram {
            max_bins: max_bins.max(1),
            round_secs: round_secs.max(1),
            bins: Vec::new(),
        }
    }

    /// Rounds up to a multiple of `round_secs`, saturating: rounding up never makes a tombstone
    /// look droppable earlier than it is.
    fn round_up(&self, t: u32) -> u32 {
        match t % self.round_secs {
            0 => t,
            d => t.saturating_add(self.round_secs - d),
        }
    }

    /// Records `count` tombstones deleted at `time_secs`.
    pub fn add(&mut self, time_secs: u32, count: u64) {
        if count == 0 {
            return;
        }
        let p = self.round_up(time_secs);
        self.insert(p, count);
    }

    fn insert(&mut self, p: u32, count: u64) {
        match self.bins.binary_search_by_key(&p, |&(q, _)| q) {
            Ok(i) => {
                if let Some(b) = self.bins.get_mut(i) {
                    b.1 = b.1.saturating_add(count);
                }
            }
            Err(i) => {
                self.bins.insert(i, (p, count));
                if self.bins.len() > self.max_bins as usize {
                    self.merge_closest();
                }
            }
        }
    }

    /// Replaces the two adjacent bins with the smallest gap by one at their weighted mean
    /// (rounded up, for the same reason as [`Self::round_up`]).
    fn merge_closest(&mut self) {
        let Some(i) = (0..self.bins.len().saturating_sub(1)).min_by_key(|&i| {
            match (self.bins.get(i), self.bins.get(i + 1)) {
                (Some(a), Some(b)) => b.0 - a.0,
                _ => u32::MAX,
            }
        }) else {
            return;
        };
        let (Some(&(p1, c1)), Some(&(p2, c2))) = (self.bins.get(i), self.bins.get(i + 1)) else {
            return;
        };
        let total = u128::from(c1) + u128::from(c2);
        let weighted = u128::from(p1) * u128::from(c1) + u128::from(p2) * u128::from(c2);
        // Between p1 and p2, so it fits in u32 and keeps the points ordered.
        let p = u32::try_from(weighted.div_ceil(total)).unwrap_or(p2);
        self.bins.remove(i + 1);
        if let Some(b) = self.bins.get_mut(i) {
            *b = (p, c1.saturating_add(c2));
        }
    }

    /// Adds `other`'s bins.
    pub fn merge(&mut self, other: &TombstoneHistogram) {
        for &(p, c) in &other.bins {
            self.add(p, c);
        }
    }

    /// `(point, count)` bins in time order.
    pub fn bins(&self) -> &[(u32, u64)] {
        &self.bins
    }

    /// Total tombstones recorded.
    pub fn total(&self) -> u64 {
        self.bins.iter().fold(0u64, |a, b| a.saturating_add(b.1))
    }

    /// Estimated number of tombstones with deletion time `<= t` (Ben-Haim & Tom-Tov's "sum",
    /// as Cassandra's `StreamingTombstoneHistogram.sum`): all bins left of `t`, half the bin at
    /// or below `t`, and a trapezoid interpolated towards the next bin.
    pub fn sum_before(&self, t: u32) -> f64 {
        let next = self.bins.partition_point(|&(p, _)| p <= t);
        if next == self.bins.len() {
            return self.total() as f64;
        }
        let Some(i) = next.checked_sub(1) else {
            return 0.0;
        };
        let (Some(&(pi, mi)), Some(&(pn, mn))) = (self.bins.get(i), self.bins.get(next)) else {
            return 0.0;
        };
        let (mi, mn) = (mi as f64, mn as f64);
        let weight = f64::from(t - pi) / f64::from(pn - pi);
        let mb = mi + (mn - mi) * weight;
        let before: f64 = self.bins.iter().take(i).map(|&(_, c)| c as f64).sum();
        before + mi / 2.0 + (mi + mb) * weight / 2.0
    }

    /// Serialises as `u32 max_bins | u32 round_secs | u32 n | n × (u32 point, u64 count)`,
    /// little-endian.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.max_bins.to_le_bytes());
        out.extend_from_slice(&self.round_secs.to_le_bytes());
        out.extend_from_slice(&(self.bins.len() as u32).to_le_bytes());
        for &(p, c) in &self.bins {
            out.extend_from_slice(&p.to_le_bytes());
            out.extend_from_slice(&c.to_le_bytes());
        }
    }

    /// Parses [`TombstoneHistogram::encode`]'s output, checking the invariants.
    pub fn decode(bytes: &[u8]) -> Result<Self, CorruptionKind> {
        let mut words = [0u32; 3];
        let mut rest = bytes;
        for w in &mut words {
            let (h, r) = rest
                .split_first_chunk::<4>()
                .ok_or(CorruptionKind::Truncated)?;
            *w = u32::from_le_bytes(*h);
            rest = r;
        }
        let [max_bins, round_secs, n] = words;
        if max_bins == 0 || round_secs == 0 || n > max_bins {
            return Err(CorruptionKind::Invalid("tombstone histogram header"));
        }
        let need = n as usize * 12;
        if rest.len() < need {
            return Err(CorruptionKind::Truncated);
        }
        if rest.len() > need {
            return Err(CorruptionKind::Invalid(
                "trailing bytes after tombstone histogram",
            ));
        }
        let mut bins: Vec<(u32, u64)> = Vec::with_capacity(n as usize);
        for c in rest.chunks_exact(12) {
            let (p, cnt) = c.split_at(4);
            let mut pb = [0u8; 4];
            pb.copy_from_slice(p);
            let p = u32::from_le_bytes(pb);
            let cnt = le_u64(cnt);
            if cnt == 0 || bins.last().is_some_and(|&(q, _)| q >= p) {
                return Err(CorruptionKind::Invalid("tombstone histogram bin"));
            }
            bins.push((p, cnt));
        }
        Ok(TombstoneHistogram {
            max_bins,
            round_secs,
            bins,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn offsets_match_cassandra() {
        let h = EstimatedHistogram::new(SIZE_BUCKETS);
        let o: Vec<u64> = h.buckets().map(|b| b.0).collect();
        // Cassandra's EstimatedHistogram.newOffsets(90, false) starts like this.
        assert_eq!(
            &o[..20],
            &[1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 17, 20, 24, 29, 35, 42, 50, 60, 72]
        );
        assert_eq!(o.len(), SIZE_BUCKETS + 1);
        assert_eq!(*o.last().unwrap(), u64::MAX);
        assert!(o.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(
            EstimatedHistogram::new(COUNT_BUCKETS).buckets().count(),
            115
        );
    }

    #[test]
    fn estimated_stats() {
        let mut h = EstimatedHistogram::new(SIZE_BUCKETS);
        assert_eq!(
            (h.count(), h.min(), h.max(), h.mean(), h.percentile(0.5)),
            (0, 0, 0, 0, 0)
        );
        for v in 1..=100u64 {
            h.add(v);
        }
        assert_eq!(h.count(), 100);
        assert_eq!(h.min(), 0); // 1 is in the first bucket, whose lower bound is 0
        assert_eq!(h.max(), 103);
        // Bucket bounds over-estimate by at most 20 %.
        for p in [0.5, 0.75, 0.95, 0.99, 1.0] {
            let exact = (100.0 * p) as u64;
            let est = h.percentile(p);
            assert!(
                est >= exact && est as f64 <= exact as f64 * 1.2 + 1.0,
                "{p}: {est}"
            );
        }
        assert_eq!(h.percentile(0.0), 0);
        let m = h.mean();
        assert!((50..=61).contains(&m), "{m}");
        let mut g = EstimatedHistogram::new(SIZE_BUCKETS);
        g.add(1000);
        assert_eq!(g.min(), 925);
        assert_eq!(g.max(), 1109);
        h.merge(&g);
        assert_eq!(h.count(), 101);
        assert_eq!(h.max(), 1109);
        // Overflow.
        h.add(u64::MAX / 2);
        assert!(h.is_overflowed());
        assert_eq!(h.max(), u64::MAX);
        assert_eq!(h.mean(), u64::MAX);
        assert_eq!(h.percentile(1.0), u64::MAX);
        assert_eq!(h.percentile(0.5), 60);
        // Merging a different layout re-buckets at the bounds.
        let mut small = EstimatedHistogram::new(10);
        small.merge(&g);
        assert!(small.is_overflowed());
        let mut big = EstimatedHistogram::new(COUNT_BUCKETS);
        big.merge(&g);
        assert_eq!(big.max(), 1109);
    }

    #[test]
    fn estimated_encode_decode() {
        let mut h = EstimatedHistogram::new(COUNT_BUCKETS);
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        for _ in 0..10_000 {
            h.add(rng.gen_range(0..1_000_000));
        }
        let mut buf = Vec::new();
        h.encode(&mut buf);
        assert_eq!(EstimatedHistogram::decode(&buf).unwrap(), h);
        for cut in [0, 3, 4, buf.len() - 1] {
            assert!(EstimatedHistogram::decode(&buf[..cut]).is_err());
        }
        let mut bad = buf.clone();
        bad[0..4].copy_from_slice(&100_000u32.to_le_bytes());
        assert!(EstimatedHistogram::decode(&bad).is_err());
        buf.push(0);
        assert!(EstimatedHistogram::decode(&buf).is_err());
    }

    #[test]
    fn tombstone_rounding_and_exact_sums() {
        let mut h = TombstoneHistogram::new();
        h.add(1, 1);
        h.add(60, 2);
        h.add(61, 3);
        h.add(0, 0); // ignored
        assert_eq!(h.bins(), &[(60, 3), (120, 3)]);
        assert_eq!(h.total(), 6);
        assert_eq!(h.sum_before(59), 0.0);
        // At a bin: everything before plus half of it (the estimator's convention).
        assert_eq!(h.sum_before(60), 1.5);
        assert_eq!(h.sum_before(120), 6.0);
        assert_eq!(h.sum_before(u32::MAX), 6.0);
        let mid = h.sum_before(90);
        assert!(mid > 1.5 && mid < 6.0, "{mid}");
        h.add(u32::MAX - 5, 1);
        assert_eq!(h.bins().last(), Some(&(u32::MAX, 1)));
    }

    #[test]
    fn tombstone_bounded_and_accurate() {
        let mut h = TombstoneHistogram::new();
        let mut rng = rand::rngs::StdRng::seed_from_u64(2);
        let base = 1_700_000_000u32;
        let mut times = Vec::new();
        for _ in 0..100_000 {
            let t = base + rng.gen_range(0..30 * 86_400);
            times.push(t);
            h.add(t, 1);
        }
        assert!(h.bins().len() <= 100);
        assert_eq!(h.total(), 100_000);
        assert!(h.bins().windows(2).all(|w| w[0].0 < w[1].0));
        // Estimates within 3 % of the total of the truth at several cut points.
        for day in [1u32, 5, 10, 15, 20, 29] {
            let cut = base + day * 86_400;
            let exact = times.iter().filter(|&&t| t <= cut).count() as f64;
            let est = h.sum_before(cut);
            assert!(
                (est - exact).abs() < 3000.0,
                "day {day}: est {est} exact {exact}"
            );
        }
        // Merge of two halves behaves like one histogram.
        let (mut a, mut b) = (TombstoneHistogram::new(), TombstoneHistogram::new());
        for (i, &t) in times.iter().enumerate() {
            if i % 2 == 0 {
                a.add(t, 1)
            } else {
                b.add(t, 1)
            }
        }
        a.merge(&b);
        assert_eq!(a.total(), 100_000);
        assert!(a.bins().len() <= 100);
        let cut = base + 15 * 86_400;
        assert!((a.sum_before(cut) - h.sum_before(cut)).abs() < 3000.0);
    }

    #[test]
    fn tombstone_encode_decode() {
        let mut h = TombstoneHistogram::new();
        for t in 0..500u32 {
            h.add(t * 97, u64::from(t % 5 + 1));
        }
        let mut buf = Vec::new();
        h.encode(&mut buf);
        assert_eq!(TombstoneHistogram::decode(&buf).unwrap(), h);
        for cut in [0, 4, 11, 12, buf.len() - 1] {
            assert!(TombstoneHistogram::decode(&buf[..cut]).is_err());
        }
        // Unordered bins are rejected.
        let mut bad = buf.clone();
        bad[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(TombstoneHistogram::decode(&bad).is_err());
        // More bins than the limit.
        let mut bad = buf.clone();
        bad[0..4].copy_from_slice(&1u32.to_le_bytes());
        assert!(TombstoneHistogram::decode(&bad).is_err());
        let empty = TombstoneHistogram::new();
        let mut buf = Vec::new();
        empty.encode(&mut buf);
        assert_eq!(TombstoneHistogram::decode(&buf).unwrap(), empty);
        assert_eq!(empty.sum_before(100), 0.0);
    }
}
