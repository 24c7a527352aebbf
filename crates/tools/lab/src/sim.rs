//! A compaction simulator (after mini-lsm's `compaction-simulator`): no I/O, only sstable
//! descriptions, to compare strategies' write and space amplification.
//!
//! Model: the key space is split into `buckets` equal buckets (each `dataset / buckets` bytes
//! of live data). The workload rewrites the whole dataset `passes` times, each pass in a fresh
//! random bucket order, flushing an sstable every `flush_mib`. An sstable holds a set of
//! `(bucket, sequence)` entries; a compaction keeps the newest entry per bucket (the older are
//! overwritten data), splits its output at the job's `max_output_bytes`, and is applied at
//! once. After every flush the strategy is asked for jobs until it has none (quiescence).
//!
//! A flush is written as the run of fragments the strategy asks for
//! ([`CompactionOptions::flush_fragments`]), as the engine writes it.
//!
//! **Timed mode** (`compaction_speed`): jobs take time. Each of `compactors` jobs processes
//! `compaction_speed` input bytes per user byte written (compaction throughput over the write
//! rate) while flushes keep coming; the strategy is asked whenever a flush lands or a job ends
//! and a compactor is free, and sees what running jobs hold (`state.compacting`). A job works
//! through the key space at a steady pace, so at a fraction `f` of its input it has written
//! the first `f` of its output: incremental jobs commit each full output fragment and release
//! the inputs it covers (every key ≤ the fragment's last key, as `job.rs` does), others swap
//! everything at the end. Space is sampled four times per flush and counts what a job has
//! written so far beside what it still holds — the shape of the lab's disk samples, where
//! instant jobs see only the space *between* jobs.
//!
//! **Contended CPU** (`contention`, timed mode only): the compactors share their cores with
//! other work, and their speed follows the priority the backlog controller gives them, as in
//! the engine: the strategy's backlog over the memtable space (taken as 4 flushes, the lab's
//! setting) → [`controller::shares`] → [`controller::nice_for_shares`]; a thread of nice `n`
//! (CFS weight 1.25⁻ⁿ of a nice-0 thread's) beside `c` nice-0 threads' worth of runnable work
//! gets `w / (w + c)` of its core, so `compaction_speed` is then the speed on an idle core.
//!
//! Reported:
//! * write amplification = (bytes flushed + bytes written by compactions) / user bytes;
//! * space amplification = bytes of all sstables / live bytes, peak (instant mode: including a
//!   job's output beside its inputs — one fragment for incremental jobs; timed mode: every
//!   sample) and final. The peak is taken from the second pass on, once the dataset exists.
//!
//! Invariant: the simulator only applies jobs the strategy returned, and checks that their
//! inputs exist.

use std::collections::HashSet;

use bytes::Bytes;

use cairn_engine::compaction::controller;
use cairn_engine::compaction::strategy::{
    ics, CompactionOptions, Job, JobKind, SSTableInfo, StrategyState,
};
use cairn_engine::metrics::histogram::TombstoneHistogram;
use cairn_engine::model::{DecoratedKey, Token};

const MIB: u64 = 1024 * 1024;

/// Workload parameters.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Live dataset size (MiB).
    pub dataset_mib: u64,
    /// Key-space buckets (the granularity of keys and overwrites).
    pub buckets: u32,
    /// Bytes per flushed sstable (MiB).
    pub flush_mib: u64,
    /// How many times the dataset is written.
    pub passes: u32,
    /// Seed of the write order.
    pub seed: u64,
    /// Timed mode (module docs): input bytes each compactor processes per user byte written.
    /// `None`: every job is applied at once, right after the flush that prompted it.
    pub compaction_speed: Option<f64>,
    /// Jobs running at once in the timed mode (`concurrent_compactors`).
    pub compactors: usize,
    /// Writes every flush as one sstable whatever the strategy asks (how the engine flushed
    /// before ICS flushes became runs of fragments), to compare the two.
    pub flush_as_one: bool,
    /// Timed mode on a contended CPU (module docs): nice-0 threads' worth of other runnable
    /// work on each compactor's core. `None`: every job runs at `compaction_speed`.
    pub contention: Option<f64>,
    /// With `contention`: leave a running cross-tier job's remaining input out of the ICS
    /// backlog (ScyllaDB's same-tier formula; how the engine counted before), to compare.
    pub same_tier_backlog_only: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            dataset_mib: 1024,
            buckets: 1024,
            flush_mib: 64,
            passes: 6,
            seed: 1,
            compaction_speed: None,
            compactors: 2,
            flush_as_one: false,
            contention: None,
            same_tier_backlog_only: false,
        }
    }
}

/// What a run measured.
#[derive(Debug, Clone)]
pub struct SimReport {
    pub name: String,
    pub user_bytes: u64,
    pub compacted_bytes: u64,
    pub jobs: u64,
    pub write_amp: f64,
    pub peak_space_amp: f64,
    /// Mean over the quiescent states after each flush (from the second pass on).
    pub mean_space_amp: f64,
    pub final_space_amp: f64,
    pub final_sstables: usize,
    /// Quiescence was cut short (a strategy that never stops proposing jobs).
    pub runaway: bool,
}

impl SimReport {
    /// One row of [`table`].
    pub fn row(&self) -> String {
        format!(
            "{:<30} {:>6.2} {:>9.2} {:>9.2} {:>10.2} {:>7} {:>9}{}",
            self.name,
            self.write_amp,
            self.peak_space_amp,
            self.mean_space_amp,
            self.final_space_amp,
            self.jobs,
            self.final_sstables,
            if self.runaway { "  (runaway)" } else { "" }
        )
    }
}

/// A header and one row per report.
pub fn table(reports: &[SimReport]) -> String {
    let mut out = format!(
        "{:<30} {:>6} {:>9} {:>9} {:>10} {:>7} {:>9}\n",
        "strategy", "WA", "peak SA", "mean SA", "final SA", "jobs", "sstables"
    );
    for r in reports {
        out.push_str(&r.row());
        out.push('\n');
    }
    out
}

/// xorshift64*: a dependency-free generator, good enough for shuffling.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
}

fn bucket_key(b: u32) -> DecoratedKey {
    DecoratedKey {
        token: Token(i64::from(b)),
        key: Bytes::copy_from_slice(&b.to_be_bytes()),
    }
}

struct SimSstable {
    info: SSTableInfo,
    /// `(bucket, sequence)`, sorted by bucket, one entry per bucket.
    entries: Vec<(u32, u64)>,
}

struct Sim {
    ssts: Vec<SimSstable>,
    bucket_bytes: u64,
    next_gen: u64,
    next_run: u128,
    now: u64,
}

impl Sim {
    fn make(&mut self, entries: Vec<(u32, u64)>, level: u32, run_id: u128) -> Option<SimSstable> {
        let (first, last) = (entries.first()?.0, entries.last()?.0);
        let min_ts = entries.iter().map(|e| e.1).min()?;
        let max_ts = entries.iter().map(|e| e.1).max()?;
        self.next_gen += 1;
        let bytes = entries.len() as u64 * self.bucket_bytes;
        Some(SimSstable {
            info: SSTableInfo {
                generation: self.next_gen,
                level,
                run_id,
                disk_bytes: bytes,
                data_bytes: bytes,
                first_key: bucket_key(first),
                last_key: bucket_key(last),
                min_timestamp: i64::try_from(min_ts).unwrap_or(i64::MAX),
                max_timestamp: i64::try_from(max_ts).unwrap_or(i64::MAX),
                max_local_deletion_time: 0,
                fully_expiring: false,
                created_at: self.now,
                tombstone_drop_times: TombstoneHistogram::new(),
                cell_count: entries.len() as u64,
            },
            entries,
        })
    }

    /// Adds a flush of `entries` (sorted by bucket) as the run of fragments the strategy
    /// asks for; returns its bytes.
    fn flush(&mut self, entries: Vec<(u32, u64)>, opts: &CompactionOptions, as_one: bool) -> u64 {
        let bytes = entries.len() as u64 * self.bucket_bytes;
        let n = if as_one {
            1
        } else {
            opts.flush_fragments(bytes).max(1)
        };
        let per = entries.len().div_ceil(n).max(1);
        self.next_run += 1;
        let run = self.next_run;
        let mut written = 0;
        for chunk in entries.chunks(per) {
            if let Some(s) = self.make(chunk.to_vec(), 0, run) {
                written += s.info.data_bytes;
                self.ssts.push(s);
            }
        }
        written
    }

    fn total_bytes(&self) -> u64 {
        self.ssts.iter().map(|s| s.info.data_bytes).sum()
    }

    fn infos(&self) -> Vec<SSTableInfo> {
        self.ssts.iter().map(|s| s.info.clone()).collect()
    }

    /// Entries per output sstable of `job`, whose merged output holds `len` entries.
    fn entries_per_output(&self, job: &Job, len: usize) -> usize {
        if job.max_output_bytes == u64::MAX {
            len.max(1)
        } else {
            ((job.max_output_bytes / self.bucket_bytes.max(1)) as usize).max(1)
        }
    }

    /// Applies `job`; returns the bytes it wrote, or `None` if an input is missing.
    fn apply(&mut self, job: &Job, state: &mut StrategyState) -> Option<u64> {
        let wanted: HashSet<u64> = job.inputs.iter().copied().collect();
        let (inputs, rest): (Vec<SimSstable>, Vec<SimSstable>) = std::mem::take(&mut self.ssts)
            .into_iter()
            .partition(|s| wanted.contains(&s.info.generation));
        self.ssts = rest;
        if inputs.len() != wanted.len() {
            return None;
        }
        let infos: Vec<SSTableInfo> = inputs.iter().map(|s| s.info.clone()).collect();
        state.record_compaction(&infos);
        if job.kind == JobKind::DropExpired {
            return Some(0);
        }
        let mut all: Vec<(u32, u64)> = inputs.into_iter().flat_map(|s| s.entries).collect();
        // Newest first within a bucket, then keep the first of each bucket.
        all.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        all.dedup_by_key(|e| e.0);
        let per_output = self.entries_per_output(job, all.len());
        self.next_run += 1;
        let run = self.next_run;
        let mut written = 0;
        for chunk in all.chunks(per_output) {
            if let Some(s) = self.make(chunk.to_vec(), job.output_level, run) {
                written += s.info.data_bytes;
                self.ssts.push(s);
            }
        }
        Some(written)
    }
}

/// The workload's flushes in order: `(pass, entries)`, each `per_flush` buckets of one pass
/// (a fresh random order per pass) with increasing sequence numbers, sorted by bucket.
fn flushes(cfg: &SimConfig, per_flush: usize) -> Vec<(u32, Vec<(u32, u64)>)> {
    let buckets = cfg.buckets.max(1);
    let mut rng = Rng(cfg.seed.max(1));
    let mut seq = 0u64;
    let mut out = Vec::new();
    for pass in 0..cfg.passes {
        let mut order: Vec<u32> = (0..buckets).collect();
        rng.shuffle(&mut order);
        for chunk in order.chunks(per_flush.max(1)) {
            let mut entries: Vec<(u32, u64)> = chunk
                .iter()
                .map(|&b| {
                    seq += 1;
                    (b, seq)
                })
                .collect();
            entries.sort_unstable();
            out.push((pass, entries));
        }
    }
    out
}

/// Runs the overwrite workload under `opts` (timed when `cfg.compaction_speed` is set).
pub fn simulate(name: &str, opts: &CompactionOptions, cfg: &SimConfig) -> SimReport {
    if let Some(speed) = cfg.compaction_speed {
        return simulate_timed(name, opts, cfg, speed);
    }
    let buckets = cfg.buckets.max(1);
    let bucket_bytes = (cfg.dataset_mib * MIB / u64::from(buckets)).max(1);
    let per_flush = ((cfg.flush_mib * MIB / bucket_bytes) as usize).max(1);
    let mut sim = Sim {
        ssts: Vec::new(),
        bucket_bytes,
        next_gen: 0,
        next_run: 0,
        now: 1_000_000,
    };
    let mut state = StrategyState::default();
    let mut written_buckets: HashSet<u32> = HashSet::new();
    let (mut user, mut compacted, mut jobs) = (0u64, 0u64, 0u64);
    let mut peak: f64 = 0.0;
    let (mut sa_sum, mut sa_n) = (0.0f64, 0u32);
    let mut runaway = false;
    for (pass, entries) in flushes(cfg, per_flush) {
        written_buckets.extend(entries.iter().map(|e| e.0));
        // An hour per flush, so "recently written" rules (min_sstable_age, tombstone
        // intervals) see sstables as settled.
        sim.now += 3600;
        user += sim.flush(entries, opts, cfg.flush_as_one);
        let live = (written_buckets.len() as u64 * bucket_bytes) as f64;
        let mut rounds = 0;
        loop {
            state.now = sim.now;
            let infos = sim.infos();
            let Some(job) = opts.choose(&infos, &state) else {
                break;
            };
            rounds += 1;
            if rounds > 10_000 {
                runaway = true;
                break;
            }
            let before = sim.total_bytes();
            let Some(out) = sim.apply(&job, &mut state) else {
                runaway = true;
                break;
            };
            jobs += 1;
            compacted += out;
            // While the job runs its inputs are all still there; an incremental job only
            // holds about one output fragment beside what it has not yet released.
            let temp = if job.incremental {
                out.min(job.max_output_bytes)
            } else {
                out
            };
            if pass > 0 {
                peak = peak.max((before + temp) as f64 / live);
            }
        }
        if pass > 0 {
            let sa = sim.total_bytes() as f64 / live;
            peak = peak.max(sa);
            sa_sum += sa;
            sa_n += 1;
        }
    }
    let live = (written_buckets.len() as u64 * bucket_bytes).max(1) as f64;
    SimReport {
        name: name.to_string(),
        user_bytes: user,
        compacted_bytes: compacted,
        jobs,
        write_amp: (user + compacted) as f64 / user.max(1) as f64,
        peak_space_amp: peak,
        mean_space_amp: if sa_n == 0 {
            0.0
        } else {
            sa_sum / f64::from(sa_n)
        },
        final_space_amp: sim.total_bytes() as f64 / live,
        final_sstables: sim.ssts.len(),
        runaway,
    }
}

/// A job in progress (timed mode).
struct TimedJob {
    job: Job,
    /// The inputs as they were when the job started (LCS's round robin records them).
    described: Vec<SSTableInfo>,
    /// Inputs not yet released.
    held: Vec<u64>,
    /// The merged output in key order (newest entry per bucket).
    out: Vec<(u32, u64)>,
    /// Entries per output sstable.
    per_output: usize,
    /// Entries already committed as output sstables.
    committed: usize,
    run: u128,
    /// Input bytes to process, and processed so far.
    in_bytes: f64,
    done: f64,
}

impl TimedJob {
    /// Output entries written so far: the job works through the key space at a steady pace.
    fn written(&self) -> usize {
        if self.in_bytes <= 0.0 {
            return self.out.len();
        }
        let f = (self.done / self.in_bytes).clamp(0.0, 1.0);
        ((f * self.out.len() as f64) as usize).min(self.out.len())
    }

    fn finished(&self) -> bool {
        self.done >= self.in_bytes
    }
}

impl Sim {
    /// Starts `job`: merges its inputs, which stay live until released. `None` if an input is
    /// missing.
    fn start(&mut self, job: Job) -> Option<TimedJob> {
        let wanted: HashSet<u64> = job.inputs.iter().copied().collect();
        let inputs: Vec<&SimSstable> = self
            .ssts
            .iter()
            .filter(|s| wanted.contains(&s.info.generation))
            .collect();
        if inputs.len() != wanted.len() {
            return None;
        }
        let described: Vec<SSTableInfo> = inputs.iter().map(|s| s.info.clone()).collect();
        let in_bytes = inputs.iter().map(|s| s.info.data_bytes).sum::<u64>() as f64;
        let mut out: Vec<(u32, u64)> = if job.kind == JobKind::DropExpired {
            Vec::new()
        } else {
            inputs
                .iter()
                .flat_map(|s| s.entries.iter().copied())
                .collect()
        };
        out.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        out.dedup_by_key(|e| e.0);
        let per_output = self.entries_per_output(&job, out.len());
        self.next_run += 1;
        Some(TimedJob {
            held: job.inputs.clone(),
            done: if job.kind == JobKind::DropExpired {
                in_bytes
            } else {
                0.0
            },
            job,
            described,
            out,
            per_output,
            committed: 0,
            run: self.next_run,
            in_bytes,
        })
    }

    /// Commits `r`'s output up to entry `upto` as output sstables, releasing (incremental
    /// jobs) each input whose last key the committed output covers; returns the bytes written.
    fn commit(&mut self, r: &mut TimedJob, upto: usize) -> u64 {
        let mut written = 0;
        while r.committed < upto {
            let end = (r.committed + r.per_output).min(upto);
            let chunk = r.out.get(r.committed..end).unwrap_or_default().to_vec();
            r.committed = end;
            let last = chunk.last().map(|e| e.0);
            if let Some(s) = self.make(chunk, r.job.output_level, r.run) {
                written += s.info.data_bytes;
                self.ssts.push(s);
            }
            if let (true, Some(last)) = (r.job.incremental, last) {
                let covered: HashSet<u64> = self
                    .ssts
                    .iter()
                    .filter(|s| {
                        r.held.contains(&s.info.generation)
                            && s.entries.last().is_some_and(|e| e.0 <= last)
                    })
                    .map(|s| s.info.generation)
                    .collect();
                self.ssts.retain(|s| !covered.contains(&s.info.generation));
                r.held.retain(|g| !covered.contains(g));
            }
        }
        written
    }

    /// Bytes on disk: live sstables and what running jobs have written but not committed.
    fn disk_bytes(&self, running: &[TimedJob]) -> u64 {
        let pending: usize = running.iter().map(|r| r.written() - r.committed).sum();
        self.total_bytes() + pending as u64 * self.bucket_bytes
    }
}

/// What the timed mode counts as it goes.
#[derive(Default)]
struct Tally {
    compacted: u64,
    jobs: u64,
    runaway: bool,
}

/// Brings what the strategy sees of running jobs up to date.
fn observe(sim: &Sim, running: &[TimedJob], state: &mut StrategyState) {
    state.now = sim.now;
    state.compacting = running
        .iter()
        .flat_map(|r| r.held.iter().copied())
        .collect();
    state.running_jobs = running.len();
    state.running_kinds = running.iter().map(|r| r.job.kind).collect();
}

/// The share of its core a compactor gets on a contended CPU (module docs): 1 without
/// contention.
fn core_share(
    sim: &Sim,
    running: &[TimedJob],
    opts: &CompactionOptions,
    state: &mut StrategyState,
    cfg: &SimConfig,
) -> f64 {
    let Some(c) = cfg.contention else {
        return 1.0;
    };
    observe(sim, running, state);
    let set = sim.infos();
    let mut backlog = opts.backlog(&set, state);
    if cfg.same_tier_backlog_only {
        backlog -= ics::cross_tier_remaining(&set, state) as f64;
    }
    let memory = (4 * cfg.flush_mib * MIB).max(1) as f64;
    let nice = controller::nice_for_shares(controller::shares(backlog / memory));
    let w = 1.25f64.powi(-nice);
    w / (w + c.max(0.0))
}

/// Starts jobs while a compactor is free and the strategy has one.
fn schedule(
    sim: &mut Sim,
    running: &mut Vec<TimedJob>,
    opts: &CompactionOptions,
    state: &mut StrategyState,
    compactors: usize,
    tally: &mut Tally,
) {
    while running.len() < compactors.max(1) {
        observe(sim, running, state);
        let Some(job) = opts.choose(&sim.infos(), state) else {
            return;
        };
        let Some(r) = sim.start(job) else {
            tally.runaway = true;
            return;
        };
        running.push(r);
    }
}

/// Lets every running job process `bytes` more input; commits what they sealed and finishes
/// those done. Returns whether any job finished.
fn advance(
    sim: &mut Sim,
    running: &mut Vec<TimedJob>,
    state: &mut StrategyState,
    bytes: f64,
    tally: &mut Tally,
) -> bool {
    let mut any = false;
    let mut i = 0;
    while i < running.len() {
        let Some(r) = running.get_mut(i) else { break };
        r.done += bytes;
        if r.finished() {
            let mut r = running.swap_remove(i);
            let len = r.out.len();
            tally.compacted += sim.commit(&mut r, len);
            let held: HashSet<u64> = r.held.iter().copied().collect();
            sim.ssts.retain(|s| !held.contains(&s.info.generation));
            state.record_compaction(&r.described);
            tally.jobs += 1;
            any = true;
            continue;
        }
        if r.job.incremental {
            let upto = r.written() / r.per_output * r.per_output;
            if upto > r.committed {
                tally.compacted += sim.commit(r, upto);
            }
        }
        i += 1;
    }
    any
}

/// The timed mode (module docs).
fn simulate_timed(name: &str, opts: &CompactionOptions, cfg: &SimConfig, speed: f64) -> SimReport {
    /// Samples (and compaction steps) per flush.
    const STEPS: u64 = 4;
    let buckets = cfg.buckets.max(1);
    let bucket_bytes = (cfg.dataset_mib * MIB / u64::from(buckets)).max(1);
    let per_flush = ((cfg.flush_mib * MIB / bucket_bytes) as usize).max(1);
    let mut sim = Sim {
        ssts: Vec::new(),
        bucket_bytes,
        next_gen: 0,
        next_run: 0,
        now: 1_000_000,
    };
    let step_bytes = (per_flush as u64 * bucket_bytes) as f64 / STEPS as f64 * speed.max(0.0);
    let mut state = StrategyState::default();
    let mut running: Vec<TimedJob> = Vec::new();
    let mut tally = Tally::default();
    let mut written_buckets: HashSet<u32> = HashSet::new();
    let mut user = 0u64;
    let mut peak: f64 = 0.0;
    let (mut sa_sum, mut sa_n) = (0.0f64, 0u32);
    for (pass, entries) in flushes(cfg, per_flush) {
        let live = (written_buckets.len() as u64 * bucket_bytes).max(1) as f64;
        for _ in 0..STEPS {
            // An hour per flush, as in the instant mode.
            sim.now += 3600 / STEPS;
            let share = core_share(&sim, &running, opts, &mut state, cfg);
            if advance(
                &mut sim,
                &mut running,
                &mut state,
                step_bytes * share,
                &mut tally,
            ) {
                schedule(
                    &mut sim,
                    &mut running,
                    opts,
                    &mut state,
                    cfg.compactors,
                    &mut tally,
                );
            }
            if pass > 0 {
                peak = peak.max(sim.disk_bytes(&running) as f64 / live);
            }
        }
        written_buckets.extend(entries.iter().map(|e| e.0));
        user += sim.flush(entries, opts, cfg.flush_as_one);
        schedule(
            &mut sim,
            &mut running,
            opts,
            &mut state,
            cfg.compactors,
            &mut tally,
        );
        if pass > 0 {
            let sa = sim.disk_bytes(&running) as f64 / live;
            peak = peak.max(sa);
            sa_sum += sa;
            sa_n += 1;
        }
    }
    // The writes are over: let compaction finish (bounded, in case a strategy never stops).
    let mut steps = 0u64;
    loop {
        schedule(
            &mut sim,
            &mut running,
            opts,
            &mut state,
            cfg.compactors,
            &mut tally,
        );
        if running.is_empty() || tally.runaway || step_bytes <= 0.0 {
            break;
        }
        let share = core_share(&sim, &running, opts, &mut state, cfg);
        advance(
            &mut sim,
            &mut running,
            &mut state,
            step_bytes * share,
            &mut tally,
        );
        sim.now += 3600 / STEPS;
        steps += 1;
        if steps > 1_000_000 {
            tally.runaway = true;
            break;
        }
    }
    let live = (written_buckets.len() as u64 * bucket_bytes).max(1) as f64;
    SimReport {
        name: name.to_string(),
        user_bytes: user,
        compacted_bytes: tally.compacted,
        jobs: tally.jobs,
        write_amp: (user + tally.compacted) as f64 / user.max(1) as f64,
        peak_space_amp: peak,
        mean_space_amp: if sa_n == 0 {
            0.0
        } else {
            sa_sum / f64::from(sa_n)
        },
        final_space_amp: sim.total_bytes() as f64 / live,
        final_sstables: sim.ssts.len(),
        runaway: tally.runaway,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn opts(spec: &str) -> CompactionOptions {
        let map: Vec<(String, String)> = spec
            .split_whitespace()
            .filter_map(|w| w.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        CompactionOptions::from_map(&map).unwrap()
    }

    /// Prints the amplification table of the overwrite workload (`--nocapture` to see it) and
    /// checks loose properties only.
    #[test]
    fn overwrite_workload_amplification() {
        let cfg = SimConfig::default();
        let runs = [
            ("STCS", "class=SizeTieredCompactionStrategy"),
            ("LCS", "class=LeveledCompactionStrategy sstable_size_in_mb=8"),
            (
                "LCS-dynamic",
                "class=LeveledCompactionStrategy sstable_size_in_mb=8 dynamic_level_bytes=true",
            ),
            ("ICS", "class=IncrementalCompactionStrategy sstable_size_in_mb=16"),
            (
                "ICS goal 1.25",
                "class=IncrementalCompactionStrategy sstable_size_in_mb=16 space_amplification_goal=1.25",
            ),
        ];
        let reports: Vec<SimReport> = runs
            .iter()
            .map(|(n, s)| simulate(n, &opts(s), &cfg))
            .collect();
        println!(
            "overwrite workload: {} MiB rewritten {} times, {} MiB flushes\n{}",
            cfg.dataset_mib,
            cfg.passes,
            cfg.flush_mib,
            table(&reports)
        );
        let by = |n: &str| reports.iter().find(|r| r.name == n).unwrap();
        for r in &reports {
            assert!(!r.runaway, "{} never quiesced", r.name);
            assert!(r.write_amp >= 1.0, "{}", r.row());
            assert!(r.final_space_amp >= 0.99, "{}", r.row());
        }
        // Dynamic levels keep ~90 % of the data in the last level.
        assert!(
            by("LCS-dynamic").final_space_amp < 1.25,
            "{}",
            by("LCS-dynamic").row()
        );
        assert!(
            by("LCS-dynamic").final_space_amp <= by("LCS").final_space_amp + 0.01,
            "{}\n{}",
            by("LCS-dynamic").row(),
            by("LCS").row()
        );
        // The space goal and incremental release cap what STCS lets grow.
        assert!(by("ICS goal 1.25").peak_space_amp < by("STCS").peak_space_amp);
        // Leveled writes more than tiered.
        assert!(by("LCS").write_amp > by("STCS").write_amp);
    }
}

#[cfg(test)]
mod lab_shape {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn opts(spec: &str) -> CompactionOptions {
        let map: Vec<(String, String)> = spec
            .split_whitespace()
            .filter_map(|w| w.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        CompactionOptions::from_map(&map).unwrap()
    }

    /// The lab's overwrite shape (`cairn lab compaction`: ~203 MiB rewritten 11 times, 8 MiB
    /// flushes, 10 MiB fragments), where issue 3's bar asks ICS with goal 1.25 for peak SA ≤
    /// 1.6 and WA ≤ 5.5 with the log (≤ ~4.45 without it). Pins the two ICS changes: the
    /// cross-tier job absorbs every smaller run, and waits for a same-tier job to fall due.
    /// Before them the simulator gave WA 5.06 (without the log) at peak 1.53; with them 3.70
    /// at 1.59, and 4.26 at 1.46 once the wait was bounded at 1.5 × the goal's excess
    /// instead of twice it (`ics::URGENT_EXCESS`, for the peak of jobs that take time).
    #[test]
    fn ics_goal_on_the_lab_overwrite_shape() {
        let cfg = SimConfig {
            dataset_mib: 203,
            buckets: 4096,
            flush_mib: 8,
            passes: 11,
            seed: 3,
            ..SimConfig::default()
        };
        let base = "sstable_size_in_mb=10 min_sstable_size=1048576";
        let ics = simulate(
            "ICS",
            &opts(&format!("class=IncrementalCompactionStrategy {base}")),
            &cfg,
        );
        let goal = simulate(
            "ICS-goal-1.25",
            &opts(&format!(
                "class=IncrementalCompactionStrategy {base} space_amplification_goal=1.25"
            )),
            &cfg,
        );
        println!("{}", table(&[ics.clone(), goal.clone()]));
        assert!(!goal.runaway);
        assert!(goal.write_amp < 4.4, "{}", goal.row());
        assert!(goal.peak_space_amp < 1.6, "{}", goal.row());
        // The goal costs some writes over plain ICS, and buys most of the space back.
        assert!(
            goal.write_amp < ics.write_amp + 1.0,
            "{}\n{}",
            goal.row(),
            ics.row()
        );
        assert!(goal.peak_space_amp < ics.peak_space_amp / 2.0);
    }

    /// The same shape with jobs that take time (two compactors, each processing 4 bytes of
    /// input per byte written: 40 MB/s at the lab's 10 MB/s), ICS with goal 1.25. Flushes
    /// written as one whole-ring sstable are held by the cross-tier job that absorbs them
    /// until its very end, beside its complete output and the flushes written meanwhile; as
    /// runs of fragments (what the engine writes for ICS) they go as the output passes them.
    /// Pins that the fragments lower the peak without costing writes.
    #[test]
    fn ics_goal_timed_flush_fragments() {
        let cfg = SimConfig {
            dataset_mib: 203,
            buckets: 4096,
            flush_mib: 8,
            passes: 11,
            seed: 3,
            compaction_speed: Some(4.0),
            ..SimConfig::default()
        };
        let o = opts(
            "class=IncrementalCompactionStrategy sstable_size_in_mb=10 \
             min_sstable_size=1048576 space_amplification_goal=1.25",
        );
        let whole = simulate(
            "whole flushes",
            &o,
            &SimConfig {
                flush_as_one: true,
                ..cfg.clone()
            },
        );
        let fragments = simulate("flush fragments", &o, &cfg);
        println!("{}", table(&[whole.clone(), fragments.clone()]));
        assert!(!whole.runaway && !fragments.runaway);
        assert!(
            fragments.peak_space_amp < whole.peak_space_amp - 0.1,
            "{}\n{}",
            fragments.row(),
            whole.row()
        );
        assert!(
            (fragments.write_amp - whole.write_amp).abs() < 0.3,
            "{}\n{}",
            fragments.row(),
            whole.row()
        );
        assert!(fragments.final_space_amp < 1.3, "{}", fragments.row());
    }

    /// The contended mode only scales the compactors' speed: with no other work on their
    /// cores they run at `compaction_speed` whatever their nice value, as in the plain timed
    /// mode; with other work they get less done per flush, and hold more.
    #[test]
    fn contention_scales_the_timed_mode() {
        let cfg = SimConfig {
            dataset_mib: 64,
            buckets: 1024,
            flush_mib: 4,
            passes: 4,
            seed: 3,
            compaction_speed: Some(4.0),
            ..SimConfig::default()
        };
        let o = opts(
            "class=IncrementalCompactionStrategy sstable_size_in_mb=4 \
             min_sstable_size=1048576 space_amplification_goal=1.25",
        );
        let plain = simulate("plain", &o, &cfg);
        let idle = simulate(
            "idle cores",
            &o,
            &SimConfig {
                contention: Some(0.0),
                ..cfg.clone()
            },
        );
        let busy = simulate(
            "busy cores",
            &o,
            &SimConfig {
                contention: Some(1.0),
                ..cfg.clone()
            },
        );
        println!("{}", table(&[plain.clone(), idle.clone(), busy.clone()]));
        assert_eq!(
            (plain.compacted_bytes, plain.jobs, plain.peak_space_amp),
            (idle.compacted_bytes, idle.jobs, idle.peak_space_amp)
        );
        assert!(
            busy.mean_space_amp > plain.mean_space_amp,
            "{}\n{}",
            busy.row(),
            plain.row()
        );
    }
}
