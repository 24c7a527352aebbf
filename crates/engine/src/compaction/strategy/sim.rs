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
//! Reported:
//! * write amplification = (bytes flushed + bytes written by compactions) / user bytes;
//! * space amplification = bytes of all sstables / live bytes, peak (including a running job's
//!   output beside its inputs — one fragment for incremental jobs) and final. The peak is
//!   taken from the second pass on, once the dataset exists.
//!
//! Invariant: the simulator only applies jobs the strategy returned, and checks that their
//! inputs exist.

use std::collections::HashSet;

use bytes::Bytes;

use super::{CompactionOptions, Job, JobKind, SSTableInfo, StrategyState};
use crate::model::{DecoratedKey, Token};
use crate::sstable::histogram::TombstoneHistogram;

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
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            dataset_mib: 1024,
            buckets: 1024,
            flush_mib: 64,
            passes: 6,
            seed: 1,
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
            "{:<22} {:>6.2} {:>9.2} {:>9.2} {:>10.2} {:>7} {:>9}{}",
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
        "{:<22} {:>6} {:>9} {:>9} {:>10} {:>7} {:>9}\n",
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

    fn total_bytes(&self) -> u64 {
        self.ssts.iter().map(|s| s.info.data_bytes).sum()
    }

    fn infos(&self) -> Vec<SSTableInfo> {
        self.ssts.iter().map(|s| s.info.clone()).collect()
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
        let per_output = if job.max_output_bytes == u64::MAX {
            all.len().max(1)
        } else {
            ((job.max_output_bytes / self.bucket_bytes.max(1)) as usize).max(1)
        };
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

/// Runs the overwrite workload under `opts`.
pub fn simulate(name: &str, opts: &CompactionOptions, cfg: &SimConfig) -> SimReport {
    const MIB: u64 = 1024 * 1024;
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
    let mut rng = Rng(cfg.seed.max(1));
    let mut state = StrategyState::default();
    let mut seq = 0u64;
    let mut written_buckets: HashSet<u32> = HashSet::new();
    let (mut user, mut compacted, mut jobs) = (0u64, 0u64, 0u64);
    let mut peak: f64 = 0.0;
    let (mut sa_sum, mut sa_n) = (0.0f64, 0u32);
    let mut runaway = false;
    for pass in 0..cfg.passes {
        let mut order: Vec<u32> = (0..buckets).collect();
        rng.shuffle(&mut order);
        for chunk in order.chunks(per_flush) {
            let mut entries: Vec<(u32, u64)> = chunk
                .iter()
                .map(|&b| {
                    seq += 1;
                    (b, seq)
                })
                .collect();
            entries.sort_unstable();
            written_buckets.extend(chunk.iter().copied());
            // An hour per flush, so "recently written" rules (min_sstable_age, tombstone
            // intervals) see sstables as settled.
            sim.now += 3600;
            sim.next_run += 1;
            let run = sim.next_run;
            if let Some(s) = sim.make(entries, 0, run) {
                user += s.info.data_bytes;
                sim.ssts.push(s);
            }
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
    /// Before them the simulator gave WA 5.06 (without the log) at peak 1.53.
    #[test]
    fn ics_goal_on_the_lab_overwrite_shape() {
        let cfg = SimConfig {
            dataset_mib: 203,
            buckets: 4096,
            flush_mib: 8,
            passes: 11,
            seed: 3,
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
        assert!(goal.write_amp < 4.0, "{}", goal.row());
        assert!(goal.peak_space_amp < 1.6, "{}", goal.row());
        // The goal costs some writes over plain ICS, and buys most of the space back.
        assert!(
            goal.write_amp < ics.write_amp + 0.5,
            "{}\n{}",
            goal.row(),
            ics.row()
        );
        assert!(goal.peak_space_amp < ics.peak_space_amp / 2.0);
    }
}
