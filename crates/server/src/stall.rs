//! The stall detector: how long the reactor (tokio's worker threads) keeps runnable tasks
//! waiting, ScyllaDB's `blocked_reactor_notify_ms` and `scylla_reactor_stalls`.
//!
//! A watchdog thread pings a heartbeat task on the runtime every `tick` (a quarter of the
//! threshold, at least 250 µs) and waits for the answer. The time from ping to answer is how
//! long a task that just became runnable waited for a reactor thread: near zero on a healthy
//! runtime, the remaining length of the block when every worker that could run it is stuck
//! in a task that does not yield (a blocking call, a long computation). Waits of at least the
//! threshold are counted and recorded in a histogram; while a wait lasts, the watchdog logs
//! "reactor stalled for N ms" at the threshold, then at 2×, 4×, … (as Seastar re-arms its
//! timer), at most `reports_per_minute` times a minute, the rest counted as suppressed.
//!
//! What it sees: a task woken from outside the runtime is queued for any worker, so a block
//! is measured when it holds up the runtime — all workers busy, or a single-worker runtime —
//! which is when requests queue behind it. One worker blocked while another is idle and
//! steals its queue is not a stall for the node's clients, and is not reported. Resolution:
//! a stall is measured from the first ping it delays, so its recorded length may be short by
//! up to one tick (a quarter of the threshold).
//!
//! Cost: one wake-up of a worker thread per tick (160 a second at the default 25 ms; 4000 at
//! 1 ms, for labs only).
//!
//! Invariant: only the watchdog thread writes the statistics; the heartbeat only stamps its
//! answer. Stopping (or dropping) the detector ends both; so does the runtime shutting down.

use cairn_engine::metrics::{latency_bounds, AtomicHistogram, HistogramSnapshot};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// ScyllaDB's default threshold (`blocked_reactor_notify_ms`).
pub const DEFAULT_THRESHOLD: Duration = Duration::from_millis(25);
/// ScyllaDB's default `blocked_reactor_reports_per_minute`.
pub const DEFAULT_REPORTS_PER_MINUTE: u32 = 5;
/// The smallest ping interval: finer ticks would cost CPU for no useful resolution.
const MIN_TICK: Duration = Duration::from_micros(250);

/// What the detector measured so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StallStats {
    /// Stalls of at least the threshold (ScyllaDB's `reactor_stalls` count).
    pub stalls: u64,
    /// Stall reports logged (ScyllaDB's `stall_detector_reported`).
    pub reported: u64,
    /// Reports over the per-minute budget, counted but not logged.
    pub suppressed: u64,
    /// The longest stall, in µs.
    pub worst_micros: u64,
    /// Stall lengths in µs.
    pub histogram: HistogramSnapshot,
    /// The threshold now in force.
    pub threshold: Duration,
}

struct Shared {
    name: String,
    epoch: Instant,
    threshold_micros: AtomicU64,
    reports_per_minute: u32,
    /// µs since `epoch` when the heartbeat last answered (u64::MAX: not yet).
    answered_at: AtomicU64,
    wake: Notify,
    stop: AtomicBool,
    stalls: AtomicU64,
    reported: AtomicU64,
    suppressed: AtomicU64,
    worst_micros: AtomicU64,
    histogram: AtomicHistogram,
}

impl Shared {
    fn now_micros(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_micros()).unwrap_or(u64::MAX)
    }
}

/// A running stall detector for one tokio runtime.
pub struct StallDetector {
    shared: Arc<Shared>,
    watchdog: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl StallDetector {
    /// Starts watching the runtime behind `handle`. `name` identifies it in logs; a zero
    /// `threshold` is raised to 1 ms.
    pub fn start(
        handle: &tokio::runtime::Handle,
        name: impl Into<String>,
        threshold: Duration,
        reports_per_minute: u32,
    ) -> std::io::Result<StallDetector> {
        let shared = Arc::new(Shared {
            name: name.into(),
            epoch: Instant::now(),
            threshold_micros: AtomicU64::new(threshold_micros(threshold)),
            reports_per_minute,
            answered_at: AtomicU64::new(u64::MAX),
            wake: Notify::new(),
            stop: AtomicBool::new(false),
            stalls: AtomicU64::new(0),
            reported: AtomicU64::new(0),
            suppressed: AtomicU64::new(0),
            worst_micros: AtomicU64::new(0),
            histogram: AtomicHistogram::new(latency_bounds()),
        });
        let hb = Arc::clone(&shared);
        handle.spawn(async move {
            // If the runtime shuts down first, the task is dropped: the watchdog must stop
            // rather than report the silence as a stall that never ends.
            let _stop_watchdog = StopOnDrop(Arc::clone(&hb));
            loop {
                hb.wake.notified().await;
                if hb.stop.load(Ordering::Relaxed) {
                    return;
                }
                hb.answered_at.store(hb.now_micros(), Ordering::Release);
            }
        });
        let wd = Arc::clone(&shared);
        let watchdog = std::thread::Builder::new()
            .name("stall-detector".into())
            .spawn(move || watchdog(&wd))?;
        Ok(StallDetector {
            shared,
            watchdog: Mutex::new(Some(watchdog)),
        })
    }

    /// The threshold in force.
    pub fn threshold(&self) -> Duration {
        Duration::from_micros(self.shared.threshold_micros.load(Ordering::Relaxed))
    }

    /// Changes the threshold (a lab sets 1 ms); applies from the next ping.
    pub fn set_threshold(&self, threshold: Duration) {
        self.shared
            .threshold_micros
            .store(threshold_micros(threshold), Ordering::Relaxed);
    }

    /// What was measured so far.
    pub fn stats(&self) -> StallStats {
        let s = &self.shared;
        StallStats {
            stalls: s.stalls.load(Ordering::Relaxed),
            reported: s.reported.load(Ordering::Relaxed),
            suppressed: s.suppressed.load(Ordering::Relaxed),
            worst_micros: s.worst_micros.load(Ordering::Relaxed),
            histogram: s.histogram.snapshot(),
            threshold: self.threshold(),
        }
    }

    /// Stops the watchdog and the heartbeat (also done on drop).
    pub fn stop(&self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.wake.notify_one();
        if let Some(w) = self.watchdog.lock().take() {
            let _ = w.join();
        }
    }
}

impl Drop for StallDetector {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Stops the watchdog when the heartbeat task ends or is dropped with its runtime.
struct StopOnDrop(Arc<Shared>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop.store(true, Ordering::Relaxed);
    }
}

fn threshold_micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX).max(1000)
}

/// Per-minute log budget (ScyllaDB's `blocked_reactor_reports_per_minute`).
struct ReportBudget {
    window_start: Instant,
    used: u32,
    per_minute: u32,
}

impl ReportBudget {
    fn take(&mut self) -> bool {
        if self.window_start.elapsed() >= Duration::from_secs(60) {
            self.window_start = Instant::now();
            self.used = 0;
        }
        self.used += 1;
        self.used <= self.per_minute
    }
}

fn watchdog(s: &Shared) {
    let mut budget = ReportBudget {
        window_start: Instant::now(),
        used: 0,
        per_minute: s.reports_per_minute,
    };
    while !s.stop.load(Ordering::Relaxed) {
        let threshold = s.threshold_micros.load(Ordering::Relaxed);
        let tick = Duration::from_micros(threshold / 4).max(MIN_TICK);
        let sent = s.now_micros();
        s.answered_at.store(u64::MAX, Ordering::Release);
        s.wake.notify_one();
        let mut report_at = threshold;
        let answered = loop {
            // The heartbeat stamps its own answer, so the tick sets only how soon a stall
            // in progress is reported, not how precisely it is measured.
            std::thread::sleep(tick);
            if s.stop.load(Ordering::Relaxed) {
                return;
            }
            let a = s.answered_at.load(Ordering::Acquire);
            if a != u64::MAX {
                break a;
            }
            let waited = s.now_micros().saturating_sub(sent);
            if waited >= report_at {
                s.reported.fetch_add(1, Ordering::Relaxed);
                if budget.take() {
                    tracing::warn!(
                        "Reactor stalled for {} ms on {} (threshold {} ms; {} stalls so far, worst {} ms)",
                        waited / 1000,
                        s.name,
                        threshold as f64 / 1000.0,
                        s.stalls.load(Ordering::Relaxed),
                        s.worst_micros.load(Ordering::Relaxed) / 1000
                    );
                } else {
                    s.suppressed.fetch_add(1, Ordering::Relaxed);
                }
                report_at = report_at.saturating_mul(2);
            }
        };
        let stalled = answered.saturating_sub(sent);
        if stalled >= threshold {
            s.stalls.fetch_add(1, Ordering::Relaxed);
            s.histogram.record(stalled);
            if stalled > s.worst_micros.fetch_max(stalled, Ordering::Relaxed) {
                tracing::warn!(
                    "Reactor stall of {:.1} ms on {} is the worst so far (threshold {} ms)",
                    stalled as f64 / 1000.0,
                    s.name,
                    threshold as f64 / 1000.0
                );
            }
        }
        // Pause until the next ping, waking early to stop promptly.
        let rest = tick.saturating_sub(Duration::from_micros(s.now_micros().saturating_sub(sent)));
        if !rest.is_zero() && !s.stop.load(Ordering::Relaxed) {
            std::thread::sleep(rest);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_blocking_task_is_detected_and_counted() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let d =
            StallDetector::start(rt.handle(), "test runtime", Duration::from_millis(5), 5).unwrap();
        assert_eq!(d.threshold(), Duration::from_millis(5));
        // (No assertion that a quiet runtime never stalls: on a loaded test machine a wake-up
        // can really wait for a CPU longer than 5 ms.)
        // A task that blocks its reactor thread for 80 ms.
        rt.block_on(async {
            tokio::spawn(async { std::thread::sleep(Duration::from_millis(80)) })
                .await
                .unwrap();
        });
        std::thread::sleep(Duration::from_millis(30));
        let s = d.stats();
        assert!(s.stalls >= 1, "{s:?}");
        assert!(s.worst_micros >= 60_000, "{s:?}");
        assert_eq!(s.histogram.count(), s.stalls);
        // Logged at 5, 10, 20, 40 ms: 4 reports, within the budget of 5 a minute.
        assert!(s.reported >= 3, "{s:?}");
        assert_eq!(s.suppressed, s.reported.saturating_sub(5));
        d.set_threshold(Duration::from_millis(1));
        assert_eq!(d.stats().threshold, Duration::from_millis(1));
        d.stop();
    }

    #[test]
    fn a_runtime_shutting_down_is_not_a_stall() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let d =
            StallDetector::start(rt.handle(), "short-lived", Duration::from_millis(2), 5).unwrap();
        rt.block_on(async { tokio::time::sleep(Duration::from_millis(20)).await });
        drop(rt);
        std::thread::sleep(Duration::from_millis(50));
        // The watchdog has stopped: nothing more is counted or reported.
        let before = d.stats();
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(d.stats(), before);
    }

    #[test]
    fn every_busy_worker_blocked_is_a_stall() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let d =
            StallDetector::start(rt.handle(), "two workers", Duration::from_millis(10), 5).unwrap();
        rt.block_on(async {
            let a = tokio::spawn(async { std::thread::sleep(Duration::from_millis(60)) });
            let b = tokio::spawn(async { std::thread::sleep(Duration::from_millis(60)) });
            let _ = (a.await, b.await);
        });
        std::thread::sleep(Duration::from_millis(20));
        assert!(d.stats().stalls >= 1, "{:?}", d.stats());
    }
}
