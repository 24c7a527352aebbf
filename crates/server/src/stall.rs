//! The stall detector: how long a reactor thread (a tokio worker) stays inside one task poll
//! without coming back to its scheduler — ScyllaDB's `blocked_reactor_notify_ms`,
//! `scylla_reactor_stalls` and `stall_detector_reported`.
//!
//! Seastar arms a timer when a task starts and reports when it fires before the task
//! finished. Tokio has no stable per-poll hooks, so the tasks the server spawns are
//! *instrumented* instead: [`spawn`] wraps a future so that every poll stamps the thread's
//! `Worker` record — a sequence number made odd on entry and even on exit, the start time
//! and the kind of task ([`TaskKind`]). A watchdog thread per detector samples the records
//! of its runtime's threads every `tick` (a quarter of the threshold, at least 250 µs): a
//! record that stays odd with the same sequence number is one poll still running. When it
//! has run for the threshold the watchdog logs "Reactor stalled for N ms on THREAD running
//! TASK", then again at 2×, 4×, … (as Seastar re-arms its timer), at most
//! `reports_per_minute` times a minute, the rest counted as suppressed. When the poll ends,
//! a length of at least the threshold is counted and recorded in the histogram.
//!
//! What it sees: each thread on its own, so one worker blocked while the others keep
//! serving is a stall (its connections wait, even if the node as a whole answers). Only
//! instrumented polls are timed: every task of the CQL server (accept loop, connections,
//! statements that leave the inline path) and of the REST and metrics servers. Resolution:
//! a stall's recorded length runs from its exact start to the last sample that still saw it,
//! so it may be short by up to one tick.
//!
//! Cost: per poll, a clock read and three relaxed stores into the thread's own record (a
//! nested instrumented poll only checks the parity). When idle: one wake-up of the watchdog
//! thread per tick (160 a second at the default 25 ms; 4000 at 1 ms, for labs only), which
//! reads a few atomics; the runtime's threads are never woken.
//!
//! Invariants: a thread's record is written only by that thread; the statistics only by the
//! watchdog. Records live in a process-wide registry (a thread belongs to one runtime; the
//! record keeps that runtime's id), added on a thread's first instrumented poll and removed
//! when the thread exits. Stopping (or dropping) the detector ends its watchdog; so does its
//! runtime shutting down.

use cairn_engine::metrics::{latency_bounds, AtomicHistogram, HistogramSnapshot};
use parking_lot::Mutex;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// ScyllaDB's default threshold (`blocked_reactor_notify_ms`).
pub const DEFAULT_THRESHOLD: Duration = Duration::from_millis(25);
/// ScyllaDB's default `blocked_reactor_reports_per_minute`.
pub const DEFAULT_REPORTS_PER_MINUTE: u32 = 5;
/// The smallest sampling interval: finer ticks would cost CPU for no useful resolution.
const MIN_TICK: Duration = Duration::from_micros(250);

/// What an instrumented task runs: named in stall reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum TaskKind {
    /// The CQL server's accept loop.
    CqlAccept = 0,
    /// A CQL connection: reads frames, runs statements inline, writes replies.
    CqlConnection = 1,
    /// A CQL statement that left the inline path (its own task).
    CqlStatement = 2,
    /// The accept loop of the REST API or the Prometheus endpoint.
    HttpAccept = 3,
    /// A REST or Prometheus HTTP connection.
    HttpConnection = 4,
    /// Anything else.
    Other = 5,
}

impl TaskKind {
    const ALL: [TaskKind; 6] = [
        TaskKind::CqlAccept,
        TaskKind::CqlConnection,
        TaskKind::CqlStatement,
        TaskKind::HttpAccept,
        TaskKind::HttpConnection,
        TaskKind::Other,
    ];

    /// How reports name it.
    pub fn name(self) -> &'static str {
        match self {
            TaskKind::CqlAccept => "the CQL accept loop",
            TaskKind::CqlConnection => "a CQL connection",
            TaskKind::CqlStatement => "a CQL statement task",
            TaskKind::HttpAccept => "an HTTP accept loop",
            TaskKind::HttpConnection => "an HTTP connection",
            TaskKind::Other => "a task",
        }
    }

    fn from_u8(v: u8) -> TaskKind {
        TaskKind::ALL
            .get(usize::from(v))
            .copied()
            .unwrap_or(TaskKind::Other)
    }
}

/// One thread's poll record (see the module docs).
struct Worker {
    /// Odd while the thread is inside an instrumented poll; +1 on entry, +1 on exit.
    seq: AtomicU64,
    /// When the current poll started, µs since [`epoch`].
    started: AtomicU64,
    /// The [`TaskKind`] being polled.
    task: AtomicU8,
    /// The thread's name and OS id, for reports.
    thread: String,
    /// The runtime the thread belongs to (`None`: polled outside any runtime).
    runtime: Option<tokio::runtime::Id>,
}

/// The records of every thread that has polled an instrumented task and not exited.
static REGISTRY: Mutex<Vec<Arc<Worker>>> = Mutex::new(Vec::new());
/// Bumped on every change of [`REGISTRY`], so watchdogs refresh their copy only then.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// Removes the thread's record when the thread exits.
struct Registration(Arc<Worker>);

impl Drop for Registration {
    fn drop(&mut self) {
        REGISTRY.lock().retain(|w| !Arc::ptr_eq(w, &self.0));
        GENERATION.fetch_add(1, Ordering::Release);
    }
}

thread_local! {
    static WORKER: Registration = register();
}

fn register() -> Registration {
    let t = std::thread::current();
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() };
    let worker = Arc::new(Worker {
        seq: AtomicU64::new(0),
        started: AtomicU64::new(0),
        task: AtomicU8::new(TaskKind::Other as u8),
        thread: format!("{} (tid {tid})", t.name().unwrap_or("unnamed thread")),
        runtime: tokio::runtime::Handle::try_current().ok().map(|h| h.id()),
    });
    REGISTRY.lock().push(Arc::clone(&worker));
    GENERATION.fetch_add(1, Ordering::Release);
    Registration(worker)
}

/// The process-wide time origin of poll stamps.
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn now_micros() -> u64 {
    u64::try_from(epoch().elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// Marks the calling thread as inside a poll of `task`; `None` when it already is (a nested
/// instrumented future: the outer poll is the one timed).
fn enter(task: TaskKind) -> Option<PollGuard> {
    WORKER
        .try_with(|r| {
            let w = &r.0;
            // Only this thread writes its record, so a load and a store suffice (no RMW).
            let seq = w.seq.load(Ordering::Relaxed);
            if seq & 1 == 1 {
                return None;
            }
            w.task.store(task as u8, Ordering::Relaxed);
            w.started.store(now_micros(), Ordering::Relaxed);
            // Release: a watchdog that sees the odd number sees the stamps above.
            w.seq.store(seq + 1, Ordering::Release);
            Some(PollGuard)
        })
        .ok()
        .flatten()
}

/// Ends the poll [`enter`] began, also when the poll panics.
struct PollGuard;

impl Drop for PollGuard {
    fn drop(&mut self) {
        let _ = WORKER.try_with(|r| {
            let seq = r.0.seq.load(Ordering::Relaxed);
            r.0.seq.store(seq + 1, Ordering::Release);
        });
    }
}

pin_project_lite::pin_project! {
    /// A future whose polls the stall detector times (see [`instrument`]).
    pub struct Instrumented<F> {
        #[pin]
        inner: F,
        task: TaskKind,
    }
}

impl<F: Future> Future for Instrumented<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let _guard = enter(*this.task);
        this.inner.poll(cx)
    }
}

/// Wraps `fut` so that each of its polls is timed by the stall detector of the runtime that
/// polls it.
pub fn instrument<F: Future>(task: TaskKind, fut: F) -> Instrumented<F> {
    Instrumented { inner: fut, task }
}

/// `tokio::spawn` of an instrumented future: how the server starts its tasks.
pub fn spawn<F>(task: TaskKind, fut: F) -> tokio::task::JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    tokio::spawn(instrument(task, fut))
}

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
    /// Threads of the runtime watched now (those that have polled an instrumented task).
    pub threads: usize,
}

struct Shared {
    name: String,
    runtime: tokio::runtime::Id,
    threshold_micros: AtomicU64,
    reports_per_minute: u32,
    stop: AtomicBool,
    threads: AtomicU64,
    stalls: AtomicU64,
    reported: AtomicU64,
    suppressed: AtomicU64,
    worst_micros: AtomicU64,
    histogram: AtomicHistogram,
}

/// A running stall detector for one tokio runtime.
pub struct StallDetector {
    shared: Arc<Shared>,
    watchdog: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl StallDetector {
    /// Starts watching the threads of the runtime behind `handle`. `name` identifies it in
    /// logs; a zero `threshold` is raised to 1 ms.
    pub fn start(
        handle: &tokio::runtime::Handle,
        name: impl Into<String>,
        threshold: Duration,
        reports_per_minute: u32,
    ) -> std::io::Result<StallDetector> {
        let shared = Arc::new(Shared {
            name: name.into(),
            runtime: handle.id(),
            threshold_micros: AtomicU64::new(threshold_micros(threshold)),
            reports_per_minute,
            stop: AtomicBool::new(false),
            threads: AtomicU64::new(0),
            stalls: AtomicU64::new(0),
            reported: AtomicU64::new(0),
            suppressed: AtomicU64::new(0),
            worst_micros: AtomicU64::new(0),
            histogram: AtomicHistogram::new(latency_bounds()),
        });
        // A task that is never woken: the runtime drops it when it shuts down, which stops
        // the watchdog (a runtime id may be reused by a later runtime).
        let on_shutdown = StopOnDrop(Arc::clone(&shared));
        handle.spawn(async move {
            let _stop_watchdog = on_shutdown;
            std::future::pending::<()>().await;
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

    /// Changes the threshold (a lab sets 1 ms); applies from the next tick.
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
            threads: usize::try_from(s.threads.load(Ordering::Relaxed)).unwrap_or(usize::MAX),
        }
    }

    /// Stops the watchdog (also done on drop).
    pub fn stop(&self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(w) = self.watchdog.lock().take() {
            w.thread().unpark();
            let _ = w.join();
        }
    }
}

impl Drop for StallDetector {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Stops the watchdog when dropped with the runtime.
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

/// The poll a watchdog is following on one thread.
struct Watched {
    /// The record's (odd) sequence number during that poll.
    seq: u64,
    started: u64,
    /// The last sample that still saw it running.
    last_seen: u64,
    task: TaskKind,
    /// The length at which it is reported next.
    report_at: u64,
}

/// A watchdog's view of one thread.
struct Watch {
    worker: Arc<Worker>,
    poll: Option<Watched>,
}

/// Reads the poll a record shows, if any: (sequence number, start, task). A seqlock read —
/// retried never, skipped when the record changed meanwhile (the next tick sees it).
fn sample(w: &Worker) -> Option<(u64, u64, TaskKind)> {
    let seq = w.seq.load(Ordering::Acquire);
    if seq & 1 == 0 {
        return None;
    }
    let started = w.started.load(Ordering::Relaxed);
    let task = TaskKind::from_u8(w.task.load(Ordering::Relaxed));
    std::sync::atomic::fence(Ordering::Acquire);
    (w.seq.load(Ordering::Relaxed) == seq).then_some((seq, started, task))
}

fn watchdog(s: &Shared) {
    let mut budget = ReportBudget {
        window_start: Instant::now(),
        used: 0,
        per_minute: s.reports_per_minute,
    };
    let mut generation = u64::MAX;
    let mut watches: Vec<Watch> = Vec::new();
    while !s.stop.load(Ordering::Relaxed) {
        let threshold = s.threshold_micros.load(Ordering::Relaxed);
        let tick = Duration::from_micros(threshold / 4).max(MIN_TICK);
        // Parked rather than slept, so that `stop` can wake it at once.
        std::thread::park_timeout(tick);
        if s.stop.load(Ordering::Relaxed) {
            return;
        }
        let g = GENERATION.load(Ordering::Acquire);
        if g != generation {
            generation = g;
            refresh(s, &mut watches);
        }
        let now = now_micros();
        for w in &mut watches {
            let current = sample(&w.worker);
            // The poll being followed has ended: it was as long as the last sample saw.
            if let Some(p) = w
                .poll
                .take_if(|p| current.is_none_or(|(seq, ..)| seq != p.seq))
            {
                let len = p.last_seen.saturating_sub(p.started);
                if len >= threshold {
                    record(s, len, threshold, &w.worker, p.task);
                }
            }
            let Some((seq, started, task)) = current else {
                continue;
            };
            let p = w.poll.get_or_insert(Watched {
                seq,
                started,
                last_seen: now,
                task,
                report_at: threshold,
            });
            p.last_seen = now;
            let running = now.saturating_sub(p.started);
            if running >= p.report_at {
                s.reported.fetch_add(1, Ordering::Relaxed);
                if budget.take() {
                    tracing::warn!(
                        "Reactor stalled for {} ms on {} of {}, running {} (threshold {} ms; {} stalls so far, worst {} ms)",
                        running / 1000,
                        w.worker.thread,
                        s.name,
                        p.task.name(),
                        threshold as f64 / 1000.0,
                        s.stalls.load(Ordering::Relaxed),
                        s.worst_micros.load(Ordering::Relaxed) / 1000
                    );
                } else {
                    s.suppressed.fetch_add(1, Ordering::Relaxed);
                }
                p.report_at = p.report_at.saturating_mul(2);
            }
        }
    }
}

/// Re-reads the registry: this runtime's threads, keeping what is known of the old ones.
fn refresh(s: &Shared, watches: &mut Vec<Watch>) {
    let workers: Vec<Arc<Worker>> = REGISTRY
        .lock()
        .iter()
        .filter(|w| w.runtime == Some(s.runtime))
        .cloned()
        .collect();
    let mut old = std::mem::take(watches);
    for worker in workers {
        let poll = old
            .iter_mut()
            .find(|w| Arc::ptr_eq(&w.worker, &worker))
            .and_then(|w| w.poll.take());
        watches.push(Watch { worker, poll });
    }
    s.threads.store(watches.len() as u64, Ordering::Relaxed);
}

fn record(s: &Shared, len: u64, threshold: u64, worker: &Worker, task: TaskKind) {
    s.stalls.fetch_add(1, Ordering::Relaxed);
    s.histogram.record(len);
    if len > s.worst_micros.fetch_max(len, Ordering::Relaxed) {
        tracing::warn!(
            "Reactor stall of {:.1} ms on {} of {}, running {}, is the worst so far (threshold {} ms)",
            len as f64 / 1000.0,
            worker.thread,
            s.name,
            task.name(),
            threshold as f64 / 1000.0
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn runtime(workers: usize) -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn a_blocking_task_is_detected_and_counted() {
        let rt = runtime(1);
        let d =
            StallDetector::start(rt.handle(), "test runtime", Duration::from_millis(5), 5).unwrap();
        assert_eq!(d.threshold(), Duration::from_millis(5));
        // (No assertion that a quiet runtime never stalls: on a loaded test machine a thread
        // can really be descheduled for longer than 5 ms in the middle of a poll.)
        // A task that blocks its reactor thread for 80 ms.
        rt.block_on(async {
            spawn(TaskKind::Other, async {
                std::thread::sleep(Duration::from_millis(80))
            })
            .await
            .unwrap();
        });
        std::thread::sleep(Duration::from_millis(30));
        let s = d.stats();
        assert!(s.stalls >= 1, "{s:?}");
        assert!(s.worst_micros >= 60_000, "{s:?}");
        assert_eq!(s.histogram.count(), s.stalls);
        assert_eq!(s.threads, 1, "{s:?}");
        // Logged at 5, 10, 20, 40 ms: 4 reports, within the budget of 5 a minute.
        assert!(s.reported >= 3, "{s:?}");
        assert_eq!(s.suppressed, s.reported.saturating_sub(5));
        d.set_threshold(Duration::from_millis(1));
        assert_eq!(d.stats().threshold, Duration::from_millis(1));
        d.stop();
    }

    #[test]
    fn one_worker_blocked_while_the_other_serves_is_a_stall() {
        let rt = runtime(2);
        let d =
            StallDetector::start(rt.handle(), "two workers", Duration::from_millis(10), 5).unwrap();
        let blocked = Arc::new(AtomicBool::new(false));
        let served_meanwhile = Arc::new(AtomicUsize::new(0));
        rt.block_on(async {
            // A task that keeps running short polls — the "other worker" serving its clients.
            let (b, n) = (blocked.clone(), served_meanwhile.clone());
            let server = spawn(TaskKind::CqlConnection, async move {
                for _ in 0..200 {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    if b.load(Ordering::Relaxed) {
                        n.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
            let (b, n) = (blocked.clone(), served_meanwhile.clone());
            let blocker = spawn(TaskKind::CqlStatement, async move {
                b.store(true, Ordering::Relaxed);
                // Blocked for at least 100 ms, and until the other worker has served at
                // least once (on a loaded machine its thread may wait that long to run).
                let started = std::time::Instant::now();
                while started.elapsed() < Duration::from_millis(100)
                    || (n.load(Ordering::Relaxed) == 0
                        && started.elapsed() < Duration::from_secs(10))
                {
                    std::thread::sleep(Duration::from_millis(5));
                }
                b.store(false, Ordering::Relaxed);
            });
            blocker.await.unwrap();
            server.await.unwrap();
        });
        std::thread::sleep(Duration::from_millis(20));
        let s = d.stats();
        // The runtime kept serving on the other thread: the old whole-runtime ping could not
        // see this block at all.
        assert!(served_meanwhile.load(Ordering::Relaxed) > 0);
        assert!(s.stalls >= 1, "{s:?}");
        assert!(s.worst_micros >= 80_000, "{s:?}");
        d.stop();
    }

    #[test]
    fn other_runtimes_are_not_watched() {
        let rt = runtime(1);
        let other = runtime(1);
        let d = StallDetector::start(rt.handle(), "quiet", Duration::from_millis(10), 5).unwrap();
        rt.block_on(async {
            spawn(TaskKind::Other, async {
                tokio::task::yield_now().await;
            })
            .await
            .unwrap();
        });
        // Another runtime's thread blocks for 150 ms; this detector does not watch it.
        other.block_on(async {
            spawn(TaskKind::Other, async {
                std::thread::sleep(Duration::from_millis(150))
            })
            .await
            .unwrap();
        });
        std::thread::sleep(Duration::from_millis(20));
        let s = d.stats();
        assert_eq!(s.threads, 1, "{s:?}");
        // (Not `stalls == 0`: the watched thread may really be descheduled mid-poll on a
        // loaded machine; but not for as long as the other runtime's block.)
        assert!(s.worst_micros < 100_000, "{s:?}");
    }

    #[test]
    fn a_runtime_shutting_down_ends_the_watchdog() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let d =
            StallDetector::start(rt.handle(), "short-lived", Duration::from_millis(2), 5).unwrap();
        rt.block_on(async { tokio::time::sleep(Duration::from_millis(20)).await });
        drop(rt);
        std::thread::sleep(Duration::from_millis(50));
        assert!(d.shared.stop.load(Ordering::Relaxed));
        let before = d.stats();
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(d.stats(), before);
    }

    #[test]
    fn a_panicking_poll_ends_its_record() {
        let rt = runtime(1);
        rt.block_on(async {
            let r = spawn(TaskKind::Other, async { panic!("on purpose") }).await;
            assert!(r.is_err());
        });
        // The worker is idle now: its record must say "not in a poll", or the detector would
        // report the panicked poll as a stall that never ends.
        let id = rt.handle().id();
        let registry = REGISTRY.lock();
        let mine: Vec<_> = registry.iter().filter(|w| w.runtime == Some(id)).collect();
        assert_eq!(mine.len(), 1);
        assert_eq!(mine[0].seq.load(Ordering::Acquire) % 2, 0);
        assert_eq!(mine[0].seq.load(Ordering::Acquire), 2);
    }

    /// What instrumenting a poll costs the request path (`--ignored --nocapture`).
    #[test]
    #[ignore]
    fn poll_cost() {
        let n = 10_000_000u32;
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut time = |instrumented: bool| {
            let t = Instant::now();
            for i in 0..n {
                let r = if instrumented {
                    let mut f = std::pin::pin!(instrument(TaskKind::Other, std::future::ready(i)));
                    f.as_mut().poll(&mut cx)
                } else {
                    let mut f = std::pin::pin!(std::future::ready(i));
                    f.as_mut().poll(&mut cx)
                };
                let _ = std::hint::black_box(r);
            }
            t.elapsed().as_nanos() as f64 / f64::from(n)
        };
        let (bare, wrapped) = (time(false), time(true));
        println!(
            "poll of a ready future: {bare:.1} ns bare, {wrapped:.1} ns instrumented: {:.1} ns per poll",
            wrapped - bare
        );
    }
}
