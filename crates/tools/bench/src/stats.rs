//! Counters and HDR latency histograms: per worker per interval, merged once a second by the
//! reporter into scylla-bench's per-second line, the run's totals and the HDR log.

use hdrhistogram::Histogram;

/// Kinds of operation, each with its own histograms (mixed mode reports them apart).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Write = 0,
    Read = 1,
    Delete = 2,
    Scan = 3,
}

pub const KINDS: [Kind; 4] = [Kind::Write, Kind::Read, Kind::Delete, Kind::Scan];

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Write => "write",
            Kind::Read => "read",
            Kind::Delete => "delete",
            Kind::Scan => "scan",
        }
    }
}

fn histogram() -> Histogram<u64> {
    // Nanoseconds, 3 significant digits, grows as needed.
    Histogram::new(3).expect("valid histogram")
}

/// What happened during one interval (or the whole run).
pub struct Interval {
    pub ops: u64,
    pub rows: u64,
    pub errors: u64,
    /// Latency from the moment the request was sent.
    pub raw: [Histogram<u64>; 4],
    /// Latency from the moment the request was due under `-max-rate` (coordinated omission
    /// corrected); empty without a rate limit.
    pub co: [Histogram<u64>; 4],
}

impl Default for Interval {
    fn default() -> Self {
        Interval {
            ops: 0,
            rows: 0,
            errors: 0,
            raw: std::array::from_fn(|_| histogram()),
            co: std::array::from_fn(|_| histogram()),
        }
    }
}

impl Interval {
    #[inline]
    pub fn record(&mut self, kind: Kind, rows: u64, raw_ns: u64, co_ns: Option<u64>) {
        self.ops += 1;
        self.rows += rows;
        // `record` grows the histogram (saturating_record would clamp to its current range).
        let _ = self.raw[kind as usize].record(raw_ns.max(1));
        if let Some(co) = co_ns {
            let _ = self.co[kind as usize].record(co.max(1));
        }
    }

    pub fn add(&mut self, other: &Interval) {
        self.ops += other.ops;
        self.rows += other.rows;
        self.errors += other.errors;
        for k in 0..4 {
            if !other.raw[k].is_empty() {
                let _ = self.raw[k].add(&other.raw[k]);
            }
            if !other.co[k].is_empty() {
                let _ = self.co[k].add(&other.co[k]);
            }
        }
    }

    pub fn reset(&mut self) {
        self.ops = 0;
        self.rows = 0;
        self.errors = 0;
        for h in self.raw.iter_mut().chain(self.co.iter_mut()) {
            if !h.is_empty() {
                h.reset();
            }
        }
    }

    /// All kinds in one histogram (raw, or coordinated-omission fixed when there is one).
    pub fn merged(&self, co: bool) -> Histogram<u64> {
        let mut all = histogram();
        for h in if co { &self.co } else { &self.raw } {
            if !h.is_empty() {
                let _ = all.add(h);
            }
        }
        all
    }

    pub fn has_co(&self) -> bool {
        self.co.iter().any(|h| !h.is_empty())
    }
}

/// The summary scylla-bench prints, in nanoseconds.
#[derive(Clone, Copy, Debug, Default)]
pub struct Summary {
    pub max: u64,
    pub p999: u64,
    pub p99: u64,
    pub p95: u64,
    pub p90: u64,
    pub p50: u64,
    pub mean: f64,
}

pub fn summarize(h: &Histogram<u64>) -> Summary {
    if h.is_empty() {
        return Summary::default();
    }
    Summary {
        max: h.max(),
        p999: h.value_at_quantile(0.999),
        p99: h.value_at_quantile(0.99),
        p95: h.value_at_quantile(0.95),
        p90: h.value_at_quantile(0.90),
        p50: h.value_at_quantile(0.50),
        mean: h.mean(),
    }
}

/// A duration as Go prints it after rounding to the microsecond (scylla-bench's style):
/// `512µs`, `1.234ms`, `2.5s`.
pub fn go_duration(ns: f64) -> String {
    let us = (ns / 1000.0).round();
    if us < 1.0 {
        return if ns <= 0.0 {
            "0s".into()
        } else {
            format!("{}ns", ns.round())
        };
    }
    if us < 1000.0 {
        return format!("{us}µs");
    }
    let trim = |v: f64, digits: usize| {
        let s = format!("{v:.digits$}");
        let s = s.trim_end_matches('0').trim_end_matches('.').to_string();
        s
    };
    if us < 1_000_000.0 {
        return format!("{}ms", trim(us / 1000.0, 3));
    }
    let s = us / 1_000_000.0;
    if s < 60.0 {
        return format!("{}s", trim(s, 6));
    }
    let m = (s / 60.0).floor();
    format!("{}m{}s", m, trim(s - m * 60.0, 6))
}

/// The per-second header, as scylla-bench prints it.
pub fn header() -> String {
    format!(
        "\n{:>5} {:>7} {:>7} {:>6} {:<6} {:<6} {:<6} {:<6} {:<6} {:<6} {:<6}",
        "time",
        "ops/s",
        "rows/s",
        "errors",
        "max",
        "99.9th",
        "99th",
        "95th",
        "90th",
        "median",
        "mean"
    )
}

/// One per-second line.
pub fn line(elapsed_s: f64, ops_s: u64, rows_s: u64, errors: u64, s: &Summary) -> String {
    format!(
        "{:>5} {:>7} {:>7} {:>6} {:<6} {:<6} {:<6} {:<6} {:<6} {:<6} {:<6}",
        go_duration(elapsed_s.round() * 1e9),
        ops_s,
        rows_s,
        errors,
        go_duration(s.max as f64),
        go_duration(s.p999 as f64),
        go_duration(s.p99 as f64),
        go_duration(s.p95 as f64),
        go_duration(s.p90 as f64),
        go_duration(s.p50 as f64),
        go_duration(s.mean),
    )
}

/// The latency block of the final results.
pub fn latency_block(title: &str, s: &Summary) -> String {
    format!(
        "{title}:\n  max:\t\t {}\n  99.9th:\t {}\n  99th:\t\t {}\n  95th:\t\t {}\n  90th:\t\t {}\n  median:\t {}\n  mean:\t\t {}\n",
        go_duration(s.max as f64),
        go_duration(s.p999 as f64),
        go_duration(s.p99 as f64),
        go_duration(s.p95 as f64),
        go_duration(s.p90 as f64),
        go_duration(s.p50 as f64),
        go_duration(s.mean),
    )
}

/// One point of the time series kept for `--plot` (latencies in microseconds).
#[derive(Clone, Copy, Debug)]
pub struct Point {
    pub t: f64,
    pub ops_s: f64,
    pub rows_s: f64,
    pub max_us: f64,
    pub p999_us: f64,
    pub p99_us: f64,
    pub p90_us: f64,
    pub p50_us: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        assert_eq!(go_duration(512_300.0), "512µs");
        assert_eq!(go_duration(1_234_000.0), "1.234ms");
        assert_eq!(go_duration(2_000_000.0), "2ms");
        assert_eq!(go_duration(2.5e9), "2.5s");
        assert_eq!(go_duration(0.0), "0s");
        assert_eq!(go_duration(61e9), "1m1s");
    }

    #[test]
    fn interval_merges() {
        let mut a = Interval::default();
        a.record(Kind::Write, 1, 100_000, None);
        assert_eq!(summarize(&a.merged(false)).max / 1000, 100);
        let mut b = Interval::default();
        b.record(Kind::Read, 3, 300_000, Some(400_000));
        a.add(&b);
        assert_eq!((a.ops, a.rows), (2, 4));
        assert_eq!(a.merged(false).len(), 2);
        assert!(a.has_co());
        b.reset();
        assert_eq!(b.ops, 0);
        assert!(b.merged(false).is_empty());
    }
}
