//! Byte accounting: what the engine wrote and read, by purpose, per table.
//!
//! Counted at the point of I/O (every `write`, every `pread`), never estimated, so write,
//! space and read amplification are measurements. The histograms (request latencies, and
//! the partition sizes and tombstone drop times sstables record) are in [`histogram`].

pub mod histogram;

use histogram::{bucket_max, bucket_min, bucket_percentile};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why bytes were written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    /// Commitlog records.
    Commitlog = 0,
    /// Memtable flushes.
    Flush = 1,
    /// Compaction output.
    Compaction = 2,
    /// Anything else (schema, metadata).
    Other = 3,
}

/// Why bytes were read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadKind {
    /// Serving reads.
    Query = 0,
    /// Compaction input.
    Compaction = 1,
    /// Anything else (startup, tools).
    Other = 2,
}

/// Per-table I/O counters, shared by the table's sstables: bytes, chunks and index pages,
/// and what the bloom filters' "maybe" turned out to be when the index was read.
#[derive(Debug, Default)]
pub struct IoCounters {
    written: [AtomicU64; 4],
    read: [AtomicU64; 3],
    chunks_read: AtomicU64,
    index_pages_read: AtomicU64,
    obsolete_bytes: AtomicU64,
    /// Point lookups the bloom filter admitted and the index confirmed.
    bloom_true_positives: AtomicU64,
    /// Point lookups the bloom filter admitted but the partition was absent.
    bloom_false_positives: AtomicU64,
    /// `bloom_true_positives` when the "recent" figures were last taken.
    bloom_true_mark: AtomicU64,
    /// `bloom_false_positives` when the "recent" figures were last taken.
    bloom_false_mark: AtomicU64,
}

/// How much `counter` grew since `mark` was last moved, moving `mark` to its value. The mark
/// only moves forward, so of two concurrent callers each growth is reported by one.
fn take_since(counter: &AtomicU64, mark: &AtomicU64) -> u64 {
    let now = counter.load(Ordering::Relaxed);
    now.saturating_sub(mark.fetch_max(now, Ordering::Relaxed))
}

impl IoCounters {
    /// Counts bytes written.
    pub fn add_written(&self, kind: WriteKind, bytes: u64) {
        self.written[kind as usize].fetch_add(bytes, Ordering::Relaxed);
    }
    /// Counts bytes read.
    pub fn add_read(&self, kind: ReadKind, bytes: u64) {
        self.read[kind as usize].fetch_add(bytes, Ordering::Relaxed);
    }
    /// Counts one data chunk read from disk.
    pub fn add_chunk_read(&self) {
        self.chunks_read.fetch_add(1, Ordering::Relaxed);
    }
    /// Counts one index page (partition index or row index) read from disk.
    pub fn add_index_page_read(&self) {
        self.index_pages_read.fetch_add(1, Ordering::Relaxed);
    }
    /// Counts what the index said of a key the bloom filter admitted: present (a true
    /// positive) or absent (a false positive, an index page read for nothing).
    pub fn add_bloom_outcome(&self, present: bool) {
        let c = if present {
            &self.bloom_true_positives
        } else {
            &self.bloom_false_positives
        };
        c.fetch_add(1, Ordering::Relaxed);
    }
    /// Bloom filter answers confirmed by the index.
    pub fn bloom_true_positives(&self) -> u64 {
        self.bloom_true_positives.load(Ordering::Relaxed)
    }
    /// Bloom filter answers the index contradicted.
    pub fn bloom_false_positives(&self) -> u64 {
        self.bloom_false_positives.load(Ordering::Relaxed)
    }
    /// Cassandra's "recent" bloom filter false positives: those since the previous call of
    /// this or of [`IoCounters::take_recent_bloom_outcomes`]. Taking them resets them, as
    /// Cassandra's `getRecentBloomFilterFalsePositives` does.
    pub fn take_recent_bloom_false_positives(&self) -> u64 {
        take_since(&self.bloom_false_positives, &self.bloom_false_mark)
    }
    /// `(false, true)` positives since the previous "recent" call (Cassandra's
    /// `RecentBloomFilterFalseRatio` is `false / (false + true)` of these); resets both.
    pub fn take_recent_bloom_outcomes(&self) -> (u64, u64) {
        (
            take_since(&self.bloom_false_positives, &self.bloom_false_mark),
            take_since(&self.bloom_true_positives, &self.bloom_true_mark),
        )
    }
    /// Bytes written for `kind`.
    pub fn written(&self, kind: WriteKind) -> u64 {
        self.written[kind as usize].load(Ordering::Relaxed)
    }
    /// Bytes read for `kind`.
    pub fn read(&self, kind: ReadKind) -> u64 {
        self.read[kind as usize].load(Ordering::Relaxed)
    }
    /// Data chunks read.
    pub fn chunks_read(&self) -> u64 {
        self.chunks_read.load(Ordering::Relaxed)
    }
    /// Index pages read.
    pub fn index_pages_read(&self) -> u64 {
        self.index_pages_read.load(Ordering::Relaxed)
    }
    /// Counts an sstable's bytes as obsolete: marked deleted, files still on disk (a reader
    /// holds it). Space used (total) = live + obsolete, known without listing directories.
    pub fn add_obsolete(&self, bytes: u64) {
        self.obsolete_bytes.fetch_add(bytes, Ordering::Relaxed);
    }
    /// The files of an obsolete sstable are gone.
    pub fn remove_obsolete(&self, bytes: u64) {
        // Saturating: a racing reader of the counter must never see a wrapped value.
        let _ = self
            .obsolete_bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
                Some(v.saturating_sub(bytes))
            });
    }
    /// Bytes of sstables marked deleted whose files are still on disk.
    pub fn obsolete_bytes(&self) -> u64 {
        self.obsolete_bytes.load(Ordering::Relaxed)
    }
}

/// Upper bounds of Cassandra's `EstimatedHistogram` with `n` buckets (1, 2, 3, …, each ×1.2
/// rounded and at least +1): latencies in microseconds use 90 of them (up to 25 s), as
/// Cassandra's latency histograms do.
fn estimated_bounds(n: usize) -> Vec<u64> {
    crate::metrics::histogram::EstimatedHistogram::new(n)
        .buckets()
        .map(|(bound, _)| bound)
        .filter(|&b| b != u64::MAX)
        .collect()
}

/// Bounds of the latency histograms (µs): Cassandra's 90 estimated-histogram buckets.
pub fn latency_bounds() -> &'static [u64] {
    static BOUNDS: std::sync::OnceLock<Vec<u64>> = std::sync::OnceLock::new();
    BOUNDS.get_or_init(|| estimated_bounds(90))
}

/// Bounds of the sstables-per-read histogram: 0 (a read served by memtables alone), then
/// the first 30 estimated-histogram buckets (1, 2, …, 446).
pub fn sstables_per_read_bounds() -> &'static [u64] {
    static BOUNDS: std::sync::OnceLock<Vec<u64>> = std::sync::OnceLock::new();
    BOUNDS.get_or_init(|| {
        let mut b = vec![0];
        b.extend(estimated_bounds(30));
        b
    })
}

/// A histogram updated lock-free from any thread: one `fetch_add` on the bucket and one on
/// the sum per recording. Reading it (a [`HistogramSnapshot`]) is not atomic across buckets;
/// a snapshot taken during recordings may miss the newest ones, never invents any.
///
/// Invariant: `counts.len() == bounds.len() + 1` (the last bucket counts values above the
/// largest bound), and `bounds` is strictly increasing.
pub struct AtomicHistogram {
    bounds: &'static [u64],
    counts: Box<[AtomicU64]>,
    sum: AtomicU64,
}

impl std::fmt::Debug for AtomicHistogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AtomicHistogram")
            .field("count", &self.snapshot().count())
            .finish()
    }
}

impl AtomicHistogram {
    /// An empty histogram over `bounds` (strictly increasing upper bounds).
    pub fn new(bounds: &'static [u64]) -> Self {
        AtomicHistogram {
            bounds,
            counts: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(),
            sum: AtomicU64::new(0),
        }
    }

    /// Records `n` occurrences of `value`.
    pub fn record_n(&self, value: u64, n: u64) {
        let i = self.bounds.partition_point(|&b| b < value);
        if let Some(c) = self.counts.get(i) {
            c.fetch_add(n, Ordering::Relaxed);
        }
        self.sum
            .fetch_add(value.saturating_mul(n), Ordering::Relaxed);
    }

    /// Records one value.
    pub fn record(&self, value: u64) {
        self.record_n(value, 1);
    }

    /// The counts so far.
    pub fn snapshot(&self) -> HistogramSnapshot {
        HistogramSnapshot {
            bounds: self.bounds.to_vec(),
            counts: self
                .counts
                .iter()
                .map(|c| c.load(Ordering::Relaxed))
                .collect(),
            sum: self.sum.load(Ordering::Relaxed),
        }
    }
}

/// Length of one period of a [`WindowedHistogram`].
pub const WINDOW_PERIOD: std::time::Duration = std::time::Duration::from_secs(30);
/// Periods in a [`WindowedHistogram`]'s window: the current one and the nine before it, so the
/// window spans the last 4.5 to 5 minutes (Cassandra's "last five minutes").
pub const WINDOW_PERIODS: u64 = 10;

/// An [`AtomicHistogram`] that also answers for the last five minutes, as Cassandra's
/// decaying histograms behind nodetool's "(last five minutes)" figures do.
///
/// Time is cut into periods of [`WINDOW_PERIOD`] from the histogram's creation. The first
/// recording of a period snapshots the cumulative counts (a *mark*) before adding its own
/// value; a period without recordings gets no mark. The counts recorded since the start of
/// period `p` are then the cumulative counts minus the first mark at or after `p` — a period
/// without a mark recorded nothing, so no later mark is wrong for it — and none when there is
/// no such mark. The window is the current period and the nine before it.
///
/// On the recording path this costs one relaxed load and a compare besides the recording;
/// the mark (a lock and a snapshot) is taken once per period. Invariants: marks are in
/// increasing period order and `period` is the period of the newest; marks older than the
/// window are dropped. Recordings racing the first one of a period may land before its mark
/// and be left out of the windows starting then: a few values, never an invented one.
pub struct WindowedHistogram {
    total: AtomicHistogram,
    origin: std::time::Instant,
    /// Period of the newest mark, plus one (0: no recording yet).
    period: AtomicU64,
    /// `(period + 1, cumulative counts, cumulative sum)` at the start of each period that
    /// had recordings, oldest first.
    marks: parking_lot::Mutex<std::collections::VecDeque<(u64, Vec<u64>, u64)>>,
}

impl std::fmt::Debug for WindowedHistogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WindowedHistogram")
            .field("total", &self.total)
            .finish()
    }
}

impl WindowedHistogram {
    /// An empty histogram over `bounds` (strictly increasing upper bounds).
    pub fn new(bounds: &'static [u64]) -> Self {
        Self::starting_at(bounds, std::time::Instant::now())
    }

    /// An empty histogram whose first period starts at `origin`.
    fn starting_at(bounds: &'static [u64], origin: std::time::Instant) -> Self {
        WindowedHistogram {
            total: AtomicHistogram::new(bounds),
            origin,
            period: AtomicU64::new(0),
            marks: parking_lot::Mutex::new(std::collections::VecDeque::new()),
        }
    }

    /// The period `at` falls in, plus one (so that 0 can mean "none").
    fn period_of(&self, at: std::time::Instant) -> u64 {
        at.saturating_duration_since(self.origin).as_secs() / WINDOW_PERIOD.as_secs() + 1
    }

    /// Records `value`, observed at `at` (a clock reading the caller already has).
    #[inline]
    pub fn record(&self, value: u64, at: std::time::Instant) {
        let p = self.period_of(at);
        if self.period.load(Ordering::Relaxed) < p {
            self.mark(p);
        }
        self.total.record(value);
    }

    /// Takes period `p`'s mark, unless a recording of `p` or later already did. A recording
    /// that arrives late for an older period just counts in the current one.
    #[cold]
    fn mark(&self, p: u64) {
        let mut marks = self.marks.lock();
        if self.period.load(Ordering::Relaxed) >= p {
            return;
        }
        let snap = self.total.snapshot();
        marks.push_back((p, snap.counts, snap.sum));
        // Windows start at most WINDOW_PERIODS - 1 periods before the current one.
        while marks.front().is_some_and(|m| m.0 + WINDOW_PERIODS <= p) {
            marks.pop_front();
        }
        self.period.store(p, Ordering::Relaxed);
    }

    /// Everything recorded since creation.
    pub fn total(&self) -> HistogramSnapshot {
        self.total.snapshot()
    }

    /// The sum of everything recorded since creation.
    pub fn total_sum(&self) -> u64 {
        self.total.sum.load(Ordering::Relaxed)
    }

    /// What was recorded in the window ending in the period of `now`: the last 4.5 to 5
    /// minutes.
    pub fn recent(&self, now: std::time::Instant) -> HistogramSnapshot {
        let first = self.period_of(now).saturating_sub(WINDOW_PERIODS - 1);
        let marks = self.marks.lock();
        let mut s = self.total.snapshot();
        match marks.iter().find(|m| m.0 >= first) {
            Some((_, counts, sum)) => {
                for (c, m) in s.counts.iter_mut().zip(counts) {
                    *c = c.saturating_sub(*m);
                }
                s.sum = s.sum.saturating_sub(*sum);
            }
            None => {
                s.counts.iter_mut().for_each(|c| *c = 0);
                s.sum = 0;
            }
        }
        s
    }
}

/// A histogram's counts at one instant: what Prometheus, the REST API and nodetool show.
///
/// Invariant: `counts.len() == bounds.len() + 1`; `counts[i]` counts values in
/// `(bounds[i-1], bounds[i]]`, the last one values above every bound.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HistogramSnapshot {
    /// Upper bounds of the buckets, strictly increasing.
    pub bounds: Vec<u64>,
    /// Counts per bucket, the overflow bucket last.
    pub counts: Vec<u64>,
    /// Sum of the recorded values (for sstable histograms: estimated from bucket bounds).
    pub sum: u64,
}

impl From<&crate::metrics::histogram::EstimatedHistogram> for HistogramSnapshot {
    /// An sstable histogram; its sum is estimated by taking each value as its bucket's bound.
    fn from(h: &crate::metrics::histogram::EstimatedHistogram) -> Self {
        let mut s = HistogramSnapshot::default();
        for (bound, n) in h.buckets() {
            if bound != u64::MAX {
                s.bounds.push(bound);
                s.sum = s.sum.saturating_add(bound.saturating_mul(n));
            }
            s.counts.push(n);
        }
        s
    }
}

impl HistogramSnapshot {
    /// Rebuilds a snapshot from its parts, checking the invariant (for clients of the REST API).
    pub fn from_parts(bounds: Vec<u64>, counts: Vec<u64>, sum: u64) -> Option<Self> {
        let increasing = bounds.windows(2).all(|w| w[0] < w[1]);
        (increasing && counts.len() == bounds.len() + 1).then_some(HistogramSnapshot {
            bounds,
            counts,
            sum,
        })
    }

    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.counts.iter().fold(0u64, |a, &b| a.saturating_add(b))
    }

    /// The bound of the bucket holding the `p`-quantile (`p` in 0..=1), as Cassandra reports
    /// percentiles: 0 when empty, `u64::MAX` in the overflow bucket.
    pub fn percentile(&self, p: f64) -> u64 {
        bucket_percentile(&self.bounds, &self.counts, p)
    }

    /// Lower bound of the lowest non-empty bucket (0 when empty).
    pub fn min(&self) -> u64 {
        bucket_min(&self.bounds, &self.counts)
    }

    /// Upper bound of the highest non-empty bucket (0 when empty, `u64::MAX` if overflowed).
    pub fn max(&self) -> u64 {
        bucket_max(&self.bounds, &self.counts)
    }

    /// Mean of the recorded values (0 when empty).
    pub fn mean(&self) -> f64 {
        match self.count() {
            0 => 0.0,
            n => self.sum as f64 / n as f64,
        }
    }

    /// Adds `other`'s counts; both must share bounds (else `other` is ignored and `false`
    /// returned).
    pub fn merge(&mut self, other: &HistogramSnapshot) -> bool {
        if self.bounds.is_empty() && self.counts.is_empty() {
            *self = other.clone();
            return true;
        }
        if self.bounds != other.bounds {
            return false;
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a = a.saturating_add(*b);
        }
        self.sum = self.sum.saturating_add(other.sum);
        true
    }
}

/// Bounds of the per-read scanned-cells histograms: 0, then the first 60 estimated-histogram
/// buckets (1, 2, …, 105 778: past Cassandra's default tombstone failure threshold of 100 000).
pub fn scanned_bounds() -> &'static [u64] {
    static BOUNDS: std::sync::OnceLock<Vec<u64>> = std::sync::OnceLock::new();
    BOUNDS.get_or_init(|| {
        let mut b = vec![0];
        b.extend(estimated_bounds(60));
        b
    })
}

/// A table's request metrics, recorded at the engine's entry points (`Database::apply` for
/// writes, `Table::read` for single-partition reads). Each recording is two relaxed atomic
/// adds; nothing here takes a lock.
#[derive(Debug)]
pub struct RequestMetrics {
    /// Write latency in µs (one entry per mutation; its count is the table's write count).
    pub write_latency: AtomicHistogram,
    /// Single-partition read latency in µs (its count is the table's read count).
    pub read_latency: AtomicHistogram,
    /// SSTables a single-partition read consulted (whose key range and bloom filter admit
    /// the key).
    pub sstables_per_read: AtomicHistogram,
    /// Live cells a single-partition read visited (Cassandra's and ScyllaDB's
    /// `LiveScannedHistogram`, nodetool's "live cells per slice").
    pub live_scanned: WindowedHistogram,
    /// Tombstones a single-partition read visited: partition, range, row and cell deletions
    /// and expired cells (`TombstoneScannedHistogram`, nodetool's "tombstones per slice").
    pub tombstone_scanned: WindowedHistogram,
    /// Range scans started.
    pub range_scans: AtomicU64,
}

impl Default for RequestMetrics {
    fn default() -> Self {
        RequestMetrics {
            write_latency: AtomicHistogram::new(latency_bounds()),
            read_latency: AtomicHistogram::new(latency_bounds()),
            sstables_per_read: AtomicHistogram::new(sstables_per_read_bounds()),
            live_scanned: WindowedHistogram::new(scanned_bounds()),
            tombstone_scanned: WindowedHistogram::new(scanned_bounds()),
            range_scans: AtomicU64::new(0),
        }
    }
}

/// Elapsed microseconds of `start`, saturating.
pub fn micros_since(start: std::time::Instant) -> u64 {
    u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn latency_bounds_follow_cassandra() {
        let b = latency_bounds();
        assert_eq!(b.len(), 90);
        assert_eq!(&b[..10], &[1, 2, 3, 4, 5, 6, 7, 8, 10, 12]);
        assert!(b[89] > 20_000_000, "covers 20 s: {}", b[89]);
        assert_eq!(sstables_per_read_bounds()[..3], [0, 1, 2]);
    }

    #[test]
    fn records_and_reports_percentiles() {
        let h = AtomicHistogram::new(latency_bounds());
        for v in 1..=100 {
            h.record(v);
        }
        h.record_n(5000, 2);
        let s = h.snapshot();
        assert_eq!(s.count(), 102);
        assert_eq!(s.sum, 5050 + 10000);
        // The 51st value (51) lies in the bucket (50, 60].
        assert_eq!(s.percentile(0.5), 60);
        assert_eq!(s.min(), 0);
        assert!(s.max() >= 5000 && s.max() < 6000 * 12 / 10);
        assert!(s.percentile(0.99) >= 5000);
        let mut m = HistogramSnapshot::default();
        assert!(m.merge(&s) && m.merge(&s));
        assert_eq!(m.count(), 204);
        let other = AtomicHistogram::new(sstables_per_read_bounds()).snapshot();
        assert!(!m.merge(&other));
        assert_eq!(
            HistogramSnapshot::from_parts(s.bounds.clone(), s.counts.clone(), s.sum),
            Some(s.clone())
        );
        assert_eq!(
            HistogramSnapshot::from_parts(vec![2, 1], vec![0; 3], 0),
            None
        );
    }

    #[test]
    fn zero_and_overflow() {
        let h = AtomicHistogram::new(sstables_per_read_bounds());
        h.record(0);
        h.record(0);
        h.record(3);
        h.record(1_000_000);
        let s = h.snapshot();
        assert_eq!(s.counts[0], 2);
        assert_eq!(s.percentile(0.5), 0);
        assert_eq!(s.percentile(0.75), 3);
        assert_eq!(s.max(), u64::MAX);
        let empty = AtomicHistogram::new(latency_bounds()).snapshot();
        assert_eq!((empty.percentile(0.5), empty.min(), empty.max()), (0, 0, 0));
        assert_eq!(empty.mean(), 0.0);
    }

    #[test]
    fn windowed_histogram_forgets_what_is_older_than_five_minutes() {
        let t0 = std::time::Instant::now();
        let at = |secs: u64| t0 + std::time::Duration::from_secs(secs);
        let h = WindowedHistogram::starting_at(scanned_bounds(), t0);
        assert_eq!(h.recent(at(0)).count(), 0);
        h.record(5, at(1));
        h.record(7, at(40));
        h.record(9, at(50));
        let s = h.recent(at(60));
        assert_eq!((s.count(), s.sum, s.max()), (3, 21, 10));
        // 4 min 59 s after the first value: the window (periods 1..=10) still holds it.
        assert_eq!(h.recent(at(299)).count(), 3);
        // At 310 s (period 11) the window holds periods 2..=11, i.e. from 30 s on: the value
        // at 1 s is gone, those at 40 and 50 s remain.
        let s = h.recent(at(310));
        assert_eq!((s.count(), s.sum), (2, 16));
        // Long after: nothing recent, everything in the total.
        assert_eq!(h.recent(at(700)).count(), 0);
        assert_eq!((h.total().count(), h.total_sum()), (3, 21));
        // New values after a quiet spell count from their own period on.
        h.record(0, at(700));
        h.record(3, at(710));
        let s = h.recent(at(720));
        assert_eq!((s.count(), s.sum, s.max()), (2, 3, 3));
        // A recording late for an older period counts in the current one.
        h.record(1, at(100));
        assert_eq!(h.recent(at(720)).count(), 3);
        assert_eq!(h.total().count(), 6);
        // Marks older than the window are dropped.
        assert!(h
            .marks
            .lock()
            .iter()
            .all(|m| m.0 + WINDOW_PERIODS > h.period_of(at(710))));
    }

    #[test]
    fn recent_bloom_outcomes_reset_when_taken() {
        let io = IoCounters::default();
        for present in [true, true, false] {
            io.add_bloom_outcome(present);
        }
        assert_eq!(io.take_recent_bloom_outcomes(), (1, 2));
        assert_eq!(io.take_recent_bloom_outcomes(), (0, 0));
        io.add_bloom_outcome(false);
        io.add_bloom_outcome(false);
        assert_eq!(io.take_recent_bloom_false_positives(), 2);
        // The false positives were taken; the ratio's span starts there for both.
        io.add_bloom_outcome(true);
        assert_eq!(io.take_recent_bloom_outcomes(), (0, 1));
        // The totals are untouched.
        assert_eq!(
            (io.bloom_false_positives(), io.bloom_true_positives()),
            (3, 3)
        );
    }

    #[test]
    fn from_estimated_histogram() {
        let mut e = crate::metrics::histogram::EstimatedHistogram::new(150);
        e.add(100);
        e.add(1000);
        let s = HistogramSnapshot::from(&e);
        assert_eq!(s.count(), 2);
        assert_eq!(s.counts.len(), s.bounds.len() + 1);
        assert_eq!(s.percentile(0.5), e.percentile(0.5));
        assert_eq!(s.max(), e.max());
    }
}

#[cfg(test)]
mod cost {
    use super::*;

    /// What a request pays for its metrics: one `Instant` pair and a latency recording (two
    /// relaxed atomic adds), plus, for reads, the sstables-per-read recording. A measurement
    /// (`cargo test --release -p cairn-engine --lib -- --ignored --nocapture recording_cost`),
    /// not a test.
    #[test]
    #[ignore]
    fn recording_cost() {
        let m = RequestMetrics::default();
        let n = 10_000_000u64;
        let time = |f: &dyn Fn(u64)| {
            let start = std::time::Instant::now();
            for i in 0..n {
                f(i);
            }
            start.elapsed().as_nanos() as f64 / n as f64
        };
        let clock = time(&|i| {
            let t = std::time::Instant::now();
            std::hint::black_box(micros_since(t) + i);
        });
        let atomics = time(&|i| {
            m.read_latency.record(i & 1023);
            m.sstables_per_read.record(i & 3);
        });
        let both = time(&|i| {
            let t = std::time::Instant::now();
            m.read_latency.record(micros_since(t) + (i & 63));
            m.sstables_per_read.record(i & 3);
        });
        println!(
            "read-path metrics per request (single thread): clock pair {clock:.1} ns, \
             recordings {atomics:.1} ns, together {both:.1} ns"
        );
        assert_eq!(m.read_latency.snapshot().count(), 2 * n);
    }
}
