//! The compaction manager: runs strategies' jobs on background threads.
//!
//! Tables are *submitted* (after each flush, periodically, on demand); a worker takes a
//! table, asks its strategy for a job over the sstables no other job holds, registers the
//! job's inputs (so no two jobs ever share an sstable) and runs it, then asks again. Workers
//! never run in the request path. Strategies get parallel jobs on
//! disjoint sstables, up to `concurrent_compactors` jobs in all.
//!
//! Pacing: every job draws from one [`Throttle`] (`compaction_throughput_mb_per_sec`), and
//! the [`super::controller`] turns the node's backlog into the workers' CPU
//! priority every 250 ms, so compaction keeps up under sustained writes without starving
//! foreground work when it is not behind.
//!
//! Major compactions run on the caller's thread through the same registration, so they never
//! touch an sstable a regular job holds. A running job can be stopped; a dropped table's jobs
//! stop at their next partition.

use super::controller;
use super::describe;
use super::history::HistoryLog;
use super::job::{self, JobEnv, JobReport};
use super::purge::PurgePolicy;
use super::state::{CompactionState, TableStates};
use super::strategy::{CompactionOptions, Job, JobKind, SSTableInfo, StrategyState};
use super::throttle::Throttle;
use crate::error::{Error, Result};
use crate::table::Table;
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Finished jobs kept for `compactionhistory` (in memory, and at most twice as many in the
/// history file).
pub const HISTORY_LEN: usize = 1000;

/// Seconds since the epoch as compaction sees them: TTL expiry, `gc_before`, sstable ages.
/// Tests substitute their own clock.
#[derive(Clone)]
pub struct Clock(pub Arc<dyn Fn() -> u64 + Send + Sync>);

impl Clock {
    /// The system clock.
    pub fn system() -> Self {
        Clock(Arc::new(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        }))
    }

    /// Now, in seconds since the epoch.
    pub fn now(&self) -> u64 {
        (self.0)()
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::system()
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Clock({})", self.now())
    }
}

/// Manager settings (Cassandra's names).
#[derive(Debug, Clone)]
pub struct ManagerConfig {
    /// `concurrent_compactors`: worker threads (jobs running at once).
    pub concurrent_compactors: usize,
    /// `compaction_throughput_mb_per_sec` in bytes per second; 0 = unlimited.
    pub throughput_bytes_per_sec: u64,
    /// How often every table is submitted even without flushes (ScyllaDB: 1 h).
    pub periodic_interval: Duration,
    /// Memory the backlog is normalised by (the memtable space).
    pub backlog_normalization_bytes: u64,
    /// Whether the backlog controller adjusts the workers' priority.
    pub controller: bool,
    /// Whether strategies' jobs run by themselves (`nodetool enable/disableautocompaction`);
    /// major compactions and explicit jobs run either way.
    pub autocompaction: bool,
    /// The clock.
    pub clock: Clock,
    /// Where finished jobs are recorded so the history survives a restart (the database
    /// sets `compaction_history.log` in its data directory); `None`: memory only.
    pub history_file: Option<std::path::PathBuf>,
}

impl Default for ManagerConfig {
    fn default() -> Self {
        ManagerConfig {
            concurrent_compactors: 2,
            throughput_bytes_per_sec: 0,
            periodic_interval: Duration::from_secs(60),
            backlog_normalization_bytes: 256 << 20,
            controller: true,
            autocompaction: true,
            clock: Clock::system(),
            history_file: None,
        }
    }
}

/// Lists the tables to submit periodically.
pub type TableLister = Box<dyn Fn() -> Vec<Arc<Table>> + Send + Sync>;

/// A job in progress (for `compactionstats`).
#[derive(Debug, Clone)]
pub struct RunningJob {
    /// Job id.
    pub id: u64,
    /// Keyspace.
    pub keyspace: String,
    /// Table.
    pub table: String,
    /// Why it runs.
    pub kind: JobKind,
    /// Input generations.
    pub inputs: Vec<u64>,
    /// Uncompressed bytes to process.
    pub total_bytes: u64,
    /// Uncompressed bytes processed so far.
    pub done_bytes: u64,
    /// Running for.
    pub elapsed: Duration,
}

struct Running {
    id: u64,
    table: Arc<Table>,
    job: Job,
    total_bytes: u64,
    progress: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    started: Instant,
}

/// Node-wide counters.
#[derive(Debug, Clone, Default)]
pub struct ManagerStats {
    /// Jobs finished.
    pub completed: u64,
    /// Jobs failed.
    pub failed: u64,
    /// Jobs stopped on request.
    pub stopped: u64,
    /// Jobs running now.
    pub active: usize,
    /// Sum over tables of the strategies' pending estimates.
    pub pending: u64,
    /// Bytes read by finished jobs (on disk).
    pub bytes_in: u64,
    /// Bytes written by finished jobs (on disk).
    pub bytes_out: u64,
    /// The controller's current shares (50–1000).
    pub shares: f64,
    /// Normalised backlog behind the shares.
    pub normalized_backlog: f64,
}

/// One table's compaction figures.
#[derive(Debug, Clone, Default)]
pub struct TableCompactionStats {
    /// The strategy's estimate of jobs still to run.
    pub pending: u64,
    /// Jobs running.
    pub running: usize,
    /// Jobs finished.
    pub completed: u64,
    /// Jobs failed.
    pub failed: u64,
    /// The strategy's backlog (bytes of rewrite work).
    pub backlog: f64,
    /// Live sstables per level (index = level).
    pub sstables_per_level: Vec<usize>,
    /// Live sstables.
    pub live_sstables: usize,
    /// The strategy's class name.
    pub strategy: String,
}

struct Shared {
    config: ManagerConfig,
    queue: Mutex<VecDeque<Arc<Table>>>,
    wake: Condvar,
    throttle: Throttle,
    running: Mutex<Vec<Running>>,
    history: Mutex<VecDeque<JobReport>>,
    /// The history on disk, when there is one.
    history_log: Mutex<Option<HistoryLog>>,
    totals: Mutex<ManagerStats>,
    next_id: AtomicU64,
    closed: AtomicBool,
    autocompaction: AtomicBool,
    lister: TableLister,
    worker_tids: Mutex<Vec<i32>>,
    /// Every table's compaction bookkeeping.
    states: TableStates,
    /// f64 bits of the controller's current shares.
    shares: AtomicU64,
    normalized_backlog: AtomicU64,
}

/// The compaction manager of a database.
pub struct CompactionManager {
    shared: Arc<Shared>,
    threads: Mutex<Vec<std::thread::JoinHandle<()>>>,
}

impl CompactionManager {
    /// Starts the workers (and the controller).
    pub fn start(config: ManagerConfig, lister: TableLister) -> Result<CompactionManager> {
        // The history is a diagnostic: a file that cannot be read or written is reported and
        // the manager keeps its history in memory only, rather than refusing to start.
        let (history_log, history) = match &config.history_file {
            None => (None, VecDeque::new()),
            Some(path) => match HistoryLog::open(path, HISTORY_LEN) {
                Ok((log, h)) => (Some(log), h),
                Err(e) => {
                    tracing::warn!("compaction history not persisted: {e}");
                    (None, VecDeque::new())
                }
            },
        };
        let shared = Arc::new(Shared {
            throttle: Throttle::new(config.throughput_bytes_per_sec),
            queue: Mutex::new(VecDeque::new()),
            wake: Condvar::new(),
            running: Mutex::new(Vec::new()),
            history: Mutex::new(history),
            history_log: Mutex::new(history_log),
            totals: Mutex::new(ManagerStats::default()),
            next_id: AtomicU64::new(1),
            closed: AtomicBool::new(false),
            autocompaction: AtomicBool::new(config.autocompaction),
            lister,
            worker_tids: Mutex::new(Vec::new()),
            states: TableStates::default(),
            shares: AtomicU64::new(1000f64.to_bits()),
            normalized_backlog: AtomicU64::new(0f64.to_bits()),
            config,
        });
        let mut threads = Vec::new();
        for i in 0..shared.config.concurrent_compactors.max(1) {
            let s = Arc::clone(&shared);
            threads.push(
                std::thread::Builder::new()
                    .name(format!("compaction-{i}"))
                    .spawn(move || worker(&s))
                    .map_err(|e| Error::io("compaction thread", e))?,
            );
        }
        if shared.config.controller {
            let s = Arc::clone(&shared);
            threads.push(
                std::thread::Builder::new()
                    .name("compaction-controller".into())
                    .spawn(move || control_loop(&s))
                    .map_err(|e| Error::io("compaction controller thread", e))?,
            );
        }
        Ok(CompactionManager {
            shared,
            threads: Mutex::new(threads),
        })
    }

    /// Asks for a table to be considered for compaction (after a flush, a schema change…).
    pub fn submit(&self, table: &Arc<Table>) {
        submit(&self.shared, table);
    }

    /// Runs the table's major compaction on the calling thread (see the module docs).
    pub fn major(&self, table: &Arc<Table>) -> Result<Vec<JobReport>> {
        let jobs = {
            let cs = self.shared.states.of(table);
            let mut cs = cs.lock();
            let (opts, set, state) = describe_table(table, &cs, self.shared.config.clock.now())?;
            let jobs = opts.major(&set, &state);
            for j in &jobs {
                cs.compacting.extend(j.inputs.iter().copied());
                cs.running += 1;
                cs.running_kinds.push(j.kind);
            }
            jobs
        };
        let mut reports = Vec::new();
        let mut first_err = None;
        for j in jobs {
            match run_registered(&self.shared, table, j) {
                Ok(r) => reports.push(r),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(reports),
        }
    }

    /// Runs a given job on the calling thread (tools, tests, labs). Fails if an input is not
    /// live or is held by another job.
    pub fn run_job(&self, table: &Arc<Table>, job: Job) -> Result<JobReport> {
        {
            let cs = self.shared.states.of(table);
            let mut cs = cs.lock();
            let live = table.state();
            for g in &job.inputs {
                if cs.compacting.contains(g) || !live.sstables.iter().any(|s| s.generation == *g) {
                    return Err(Error::NotLive { generation: *g });
                }
            }
            cs.compacting.extend(job.inputs.iter().copied());
            cs.running += 1;
            cs.running_kinds.push(job.kind);
        }
        run_registered(&self.shared, table, job)
    }

    /// Stops running jobs (all, or those of one table); returns how many were told to stop.
    pub fn stop(&self, table: Option<&Arc<Table>>) -> usize {
        let running = self.shared.running.lock();
        let mut n = 0;
        for r in running.iter() {
            if table.is_none_or(|t| Arc::ptr_eq(t, &r.table)) {
                r.stop.store(true, Ordering::Relaxed);
                n += 1;
            }
        }
        n
    }

    /// Jobs running now.
    pub fn running(&self) -> Vec<RunningJob> {
        self.shared
            .running
            .lock()
            .iter()
            .map(|r| {
                let s = r.table.schema();
                RunningJob {
                    id: r.id,
                    keyspace: s.keyspace.clone(),
                    table: s.name.clone(),
                    kind: r.job.kind,
                    inputs: r.job.inputs.clone(),
                    total_bytes: r.total_bytes,
                    done_bytes: r.progress.load(Ordering::Relaxed),
                    elapsed: r.started.elapsed(),
                }
            })
            .collect()
    }

    /// Finished jobs, oldest first (at most [`HISTORY_LEN`]).
    pub fn history(&self) -> Vec<JobReport> {
        self.shared.history.lock().iter().cloned().collect()
    }

    /// One table's compaction figures.
    pub fn table_stats(&self, table: &Table) -> Result<TableCompactionStats> {
        let cs = self.shared.states.of(table);
        let cs = cs.lock();
        table_stats(&cs, table, self.shared.config.clock.now())
    }

    /// Jobs running on a table now.
    pub fn running_on(&self, table: &Table) -> usize {
        self.shared.states.of(table).lock().running
    }

    /// Forgets a dropped table's bookkeeping (once its jobs have stopped).
    pub fn forget(&self, table: &Table) {
        self.shared.states.forget(table);
    }

    /// Node-wide counters.
    pub fn stats(&self) -> ManagerStats {
        let mut s = self.counters();
        s.pending = (self.shared.lister)()
            .iter()
            .map(|t| self.table_stats(t).map_or(0, |s| s.pending))
            .sum();
        s
    }

    /// Node-wide counters without `pending` (left 0), which asks every table's strategy: for
    /// callers that already hold each table's [`TableCompactionStats`].
    pub fn counters(&self) -> ManagerStats {
        let mut s = self.shared.totals.lock().clone();
        s.active = self.shared.running.lock().len();
        s.shares = f64::from_bits(self.shared.shares.load(Ordering::Relaxed));
        s.normalized_backlog =
            f64::from_bits(self.shared.normalized_backlog.load(Ordering::Relaxed));
        s
    }

    /// `compaction_throughput_mb_per_sec` in bytes per second (0 = unlimited).
    pub fn throughput(&self) -> u64 {
        self.shared.throttle.get()
    }

    /// Turns automatic compaction on or off (`nodetool enable/disableautocompaction`).
    pub fn set_autocompaction(&self, on: bool) {
        self.shared.autocompaction.store(on, Ordering::Relaxed);
        if on {
            for t in (self.shared.lister)() {
                submit(&self.shared, &t);
            }
        }
    }

    /// Changes the throughput cap (0 = unlimited); running jobs follow at once.
    pub fn set_throughput(&self, bytes_per_sec: u64) {
        self.shared.throttle.set(bytes_per_sec);
    }

    /// Waits until no job runs and no table waits in the queue (tests and tools).
    pub fn wait_idle(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            let idle = self.shared.queue.lock().is_empty() && self.shared.running.lock().is_empty();
            if idle {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Stops the running jobs and the workers.
    pub fn shutdown(&self) {
        self.shared.closed.store(true, Ordering::Relaxed);
        self.stop(None);
        self.shared.wake.notify_all();
        for t in self.threads.lock().drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for CompactionManager {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// One table's compaction figures at `now`.
fn table_stats(cs: &CompactionState, table: &Table, now: u64) -> Result<TableCompactionStats> {
    let (opts, set, state) = describe_table(table, cs, now)?;
    let mut per_level = Vec::new();
    for s in &set {
        let l = s.level as usize;
        if per_level.len() <= l {
            per_level.resize(l + 1, 0);
        }
        if let Some(c) = per_level.get_mut(l) {
            *c += 1;
        }
    }
    Ok(TableCompactionStats {
        pending: opts.estimated_pending(&set, &state),
        running: cs.running,
        completed: cs.completed,
        failed: cs.failed,
        backlog: opts.backlog(&set, &state),
        sstables_per_level: per_level,
        live_sstables: set.len(),
        strategy: opts.class_name(),
    })
}

/// The table's strategy options, its live set described, and the strategy state.
fn describe_table(
    table: &Table,
    cs: &CompactionState,
    now: u64,
) -> Result<(CompactionOptions, Vec<SSTableInfo>, StrategyState)> {
    let schema = table.schema();
    let opts = CompactionOptions::from_map(&schema.options.compaction)?;
    let set: Vec<SSTableInfo> = table.state().sstables.iter().map(|s| describe(s)).collect();
    let state = StrategyState {
        now,
        gc_before: schema.options.tombstone_gc.gc_before(
            now.min(u64::from(u32::MAX)) as u32,
            schema.options.gc_grace_seconds,
        ),
        compacting: cs.compacting.clone(),
        running_jobs: cs.running,
        running_kinds: cs.running_kinds.clone(),
        last_compacted_keys: cs.last_compacted_keys.clone(),
        memtable_min_timestamp: memtable_min_timestamp(table),
        compact_below_min_threshold: false,
    };
    Ok((opts, set, state))
}

/// The smallest timestamp any memtable of the table holds.
fn memtable_min_timestamp(table: &Table) -> Option<i64> {
    let st = table.state();
    std::iter::once(&st.active)
        .chain(st.flushing.iter().map(|(m, _)| m))
        .filter(|m| !m.is_empty())
        .map(|m| m.min_timestamp())
        .min()
}

fn submit(shared: &Shared, table: &Arc<Table>) {
    if shared.closed.load(Ordering::Relaxed)
        || !shared.autocompaction.load(Ordering::Relaxed)
        || table.is_dropped()
    {
        return;
    }
    {
        let cs = shared.states.of(table);
        let mut cs = cs.lock();
        if cs.queued {
            return;
        }
        cs.queued = true;
    }
    shared.queue.lock().push_back(Arc::clone(table));
    shared.wake.notify_one();
}

fn worker(shared: &Arc<Shared>) {
    shared.worker_tids.lock().push(controller::current_tid());
    let mut last_periodic = Instant::now();
    loop {
        let table = {
            let mut q = shared.queue.lock();
            loop {
                if shared.closed.load(Ordering::Relaxed) {
                    return;
                }
                if let Some(t) = q.pop_front() {
                    break Some(t);
                }
                let timeout = shared
                    .config
                    .periodic_interval
                    .saturating_sub(last_periodic.elapsed());
                if timeout.is_zero() {
                    break None;
                }
                shared.wake.wait_for(&mut q, timeout);
            }
        };
        let Some(table) = table else {
            last_periodic = Instant::now();
            for t in (shared.lister)() {
                submit(shared, &t);
            }
            continue;
        };
        shared.states.of(&table).lock().queued = false;
        // Autocompaction switched off after the table was queued: no new job.
        if table.is_dropped() || !shared.autocompaction.load(Ordering::Relaxed) {
            continue;
        }
        let state = shared.states.of(&table);
        let picked = pick(&mut state.lock(), &table, shared.config.clock.now());
        let job = match picked {
            Ok(Some(job)) => job,
            Ok(None) => continue,
            Err(e) => {
                tracing::warn!("compaction of {table:?}: {e}");
                continue;
            }
        };
        // Another worker may find a parallel job on the same table.
        submit(shared, &table);
        if run_registered(shared, &table, job).is_ok() {
            submit(shared, &table);
        }
    }
}

/// Asks the table's strategy for a job and registers its inputs.
fn pick(cs: &mut CompactionState, table: &Table, now: u64) -> Result<Option<Job>> {
    let (opts, set, state) = describe_table(table, cs, now)?;
    let Some(job) = opts.choose(&set, &state) else {
        return Ok(None);
    };
    if job.inputs.is_empty() || job.inputs.iter().any(|g| cs.compacting.contains(g)) {
        tracing::error!(
            ?job,
            "strategy chose an empty job or busy sstables; ignored"
        );
        return Ok(None);
    }
    cs.compacting.extend(job.inputs.iter().copied());
    cs.running += 1;
    cs.running_kinds.push(job.kind);
    Ok(Some(job))
}

/// Runs a job whose inputs are registered, then unregisters them and records the outcome.
fn run_registered(shared: &Shared, table: &Arc<Table>, job: Job) -> Result<JobReport> {
    let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
    let stop = Arc::new(AtomicBool::new(false));
    let progress = Arc::new(AtomicU64::new(0));
    let st = table.state();
    let inputs: Vec<_> = st
        .sstables
        .iter()
        .filter(|s| job.inputs.contains(&s.generation))
        .cloned()
        .collect();
    drop(st);
    let total_bytes = inputs.iter().map(|s| s.stats.uncompressed_length).sum();
    let described: Vec<SSTableInfo> = inputs.iter().map(|s| describe(s)).collect();
    drop(inputs);
    shared.running.lock().push(Running {
        id,
        table: Arc::clone(table),
        job: job.clone(),
        total_bytes,
        progress: Arc::clone(&progress),
        stop: Arc::clone(&stop),
        started: Instant::now(),
    });
    let schema = table.schema();
    let now = shared.config.clock.now().min(u64::from(u32::MAX)) as u32;
    let env = JobEnv {
        table,
        id,
        stop: &stop,
        throttle: &shared.throttle,
        progress: &progress,
        policy: PurgePolicy {
            now,
            gc_before: schema
                .options
                .tombstone_gc
                .gc_before(now, schema.options.gc_grace_seconds),
        },
    };
    let result = job::run(&env, &job);
    shared.running.lock().retain(|r| r.id != id);
    {
        let cs = shared.states.of(table);
        let mut cs = cs.lock();
        for g in &job.inputs {
            cs.compacting.remove(g);
        }
        cs.running = cs.running.saturating_sub(1);
        if let Some(i) = cs.running_kinds.iter().position(|k| *k == job.kind) {
            cs.running_kinds.swap_remove(i);
        }
        match &result {
            Ok(_) => {
                cs.completed += 1;
                // LCS round robin: the strategy remembers where it stopped in each level.
                let mut st = StrategyState {
                    last_compacted_keys: std::mem::take(&mut cs.last_compacted_keys),
                    ..Default::default()
                };
                st.record_compaction(&described);
                cs.last_compacted_keys = st.last_compacted_keys;
            }
            Err(Error::CompactionStopped { .. }) => {}
            Err(_) => cs.failed += 1,
        }
    }
    let mut totals = shared.totals.lock();
    match &result {
        Ok(r) => {
            totals.completed += 1;
            totals.bytes_in += r.bytes_in;
            totals.bytes_out += r.bytes_out;
            drop(totals);
            let mut h = shared.history.lock();
            if h.len() >= HISTORY_LEN {
                h.pop_front();
            }
            h.push_back(r.clone());
            let mut log = shared.history_log.lock();
            if let Some(l) = log.as_mut() {
                if let Err(e) = l.append(r, h.iter()) {
                    tracing::warn!("compaction history: {e}; no longer persisted");
                    *log = None;
                }
            }
        }
        Err(Error::CompactionStopped { .. }) => {
            totals.stopped += 1;
            tracing::info!("compaction {id} of {table:?} stopped");
        }
        Err(e) => {
            totals.failed += 1;
            tracing::error!("compaction {id} of {table:?} failed: {e}");
            table.report_fault(crate::fault::Operation::Compaction { input: false }, e);
        }
    }
    result
}

/// Every 250 ms: backlog → shares → the workers' nice value.
fn control_loop(shared: &Shared) {
    // Lowering priority is only safe if it can be given back: probe on this thread first.
    let me = controller::current_tid();
    if !(controller::set_nice(me, 1) && controller::set_nice(me, 0)) {
        tracing::info!("compaction controller: thread priority cannot be raised here; workers keep normal priority");
        return;
    }
    let mut applied: Option<i32> = None;
    while !shared.closed.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(250));
        let backlog: f64 = (shared.lister)()
            .iter()
            .map(|t| {
                let cs = shared.states.of(t);
                let cs = cs.lock();
                table_stats(&cs, t, shared.config.clock.now()).map_or(0.0, |s| s.backlog)
            })
            .sum();
        let norm = backlog / shared.config.backlog_normalization_bytes.max(1) as f64;
        let shares = controller::shares(norm);
        shared.shares.store(shares.to_bits(), Ordering::Relaxed);
        shared
            .normalized_backlog
            .store(norm.to_bits(), Ordering::Relaxed);
        let nice = controller::nice_for_shares(shares);
        if applied != Some(nice) {
            for &t in shared.worker_tids.lock().iter() {
                controller::set_nice(t, nice);
            }
            applied = Some(nice);
        }
    }
}
