//! What a run measures: the 0.5 s samples taken beside the writes, and the amplification
//! figures computed from them (see the module docs of [`super`]).

use super::args::MB;
use super::setup::Strategy;
use anyhow::Result;
use cairn_engine::table::Table;
use cairn_engine::Database;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One 0.5 s sample.
#[derive(Clone, Debug)]
pub(super) struct Sample {
    pub(super) t_s: f64,
    pub(super) disk_bytes: u64,
    pub(super) live_units: u64,
    pub(super) pending: u64,
    pub(super) sstables: usize,
    pub(super) unleveled: usize,
    pub(super) compaction_bytes_per_s: f64,
    /// Whether the writes were still running.
    pub(super) writing: bool,
    /// Bytes of live sstables (disk_bytes minus files awaiting deletion and outputs in
    /// progress).
    pub(super) live_sstable_bytes: u64,
    /// Jobs running on the table.
    pub(super) running: usize,
    /// User bytes written so far (a stall of the writer, and its catch-up, show here).
    pub(super) user_bytes: u64,
    /// Bytes of live level-0 sstables (LCS's L0; every sstable for the other strategies).
    pub(super) l0_bytes: u64,
    /// Bytes of the largest run of live sstables (fragments sharing a run id).
    pub(super) largest_run_bytes: u64,
    /// Bytes of live sstables that running jobs hold as inputs.
    pub(super) held_bytes: u64,
    /// Bytes of every file in the table directory, as `du` sees them: `disk_bytes` plus the
    /// outputs still being written (which `disk_bytes`, from the engine's counters, leaves
    /// out) and the transaction logs.
    pub(super) dir_bytes: u64,
}

/// A finished job: (kind, inputs, bytes in, bytes out, level, start ms since the run
/// began, duration s).
pub(super) type JobRecord = (String, usize, u64, u64, u32, i64, f64);

/// What one run measured.
#[derive(Clone, Debug)]
pub(super) struct RunResult {
    pub(super) strategy: Strategy,
    pub(super) workload: String,
    pub(super) samples: Vec<Sample>,
    /// Fully compacted size of the final data.
    pub(super) compacted_bytes: u64,
    pub(super) live_units_end: u64,
    pub(super) user_bytes: u64,
    pub(super) commitlog_bytes: u64,
    pub(super) flush_bytes: u64,
    pub(super) compaction_bytes: u64,
    pub(super) flushes: u64,
    pub(super) ops: u64,
    pub(super) write_secs: f64,
    pub(super) settle_secs: f64,
    pub(super) settled: bool,
    pub(super) final_disk_bytes: u64,
    /// Finished jobs before the major compaction.
    pub(super) history: Vec<JobRecord>,
}

impl RunResult {
    pub(super) fn live_bytes(&self, s: &Sample) -> f64 {
        if self.live_units_end == 0 {
            return 0.0;
        }
        self.compacted_bytes as f64 * s.live_units as f64 / self.live_units_end as f64
    }

    pub(super) fn write_amp(&self) -> f64 {
        (self.commitlog_bytes + self.flush_bytes + self.compaction_bytes) as f64
            / self.user_bytes.max(1) as f64
    }

    pub(super) fn write_amp_no_log(&self) -> f64 {
        (self.flush_bytes + self.compaction_bytes) as f64 / self.user_bytes.max(1) as f64
    }

    pub(super) fn peak_space_amp(&self) -> f64 {
        let half = self.compacted_bytes as f64 * 0.5;
        self.samples
            .iter()
            .filter(|s| self.live_bytes(s) >= half)
            .map(|s| s.disk_bytes as f64 / self.live_bytes(s))
            .fold(0.0, f64::max)
    }

    /// Peak space amplification by the table directory's size (`dir_bytes`: outputs still
    /// being written included).
    pub(super) fn peak_space_amp_du(&self) -> f64 {
        let half = self.compacted_bytes as f64 * 0.5;
        self.samples
            .iter()
            .filter(|s| self.live_bytes(s) >= half)
            .map(|s| s.dir_bytes as f64 / self.live_bytes(s))
            .fold(0.0, f64::max)
    }

    pub(super) fn final_space_amp(&self) -> f64 {
        self.final_disk_bytes as f64 / self.compacted_bytes.max(1) as f64
    }

    pub(super) fn ops_per_s(&self) -> f64 {
        self.ops as f64 / self.write_secs.max(1e-9)
    }

    /// Pending compactions during the writes: mean, max, and the least-squares slope (per
    /// minute) over the second half.
    pub(super) fn pending_trend(&self) -> (f64, u64, f64) {
        let w: Vec<&Sample> = self.samples.iter().filter(|s| s.writing).collect();
        if w.is_empty() {
            return (0.0, 0, 0.0);
        }
        let mean = w.iter().map(|s| s.pending as f64).sum::<f64>() / w.len() as f64;
        let max = w.iter().map(|s| s.pending).max().unwrap_or(0);
        let half = &w[w.len() / 2..];
        (mean, max, slope(half, |s| s.pending as f64) * 60.0)
    }
}

pub(super) fn slope(samples: &[&Sample], y: impl Fn(&Sample) -> f64) -> f64 {
    let n = samples.len() as f64;
    if samples.len() < 2 {
        return 0.0;
    }
    let mx = samples.iter().map(|s| s.t_s).sum::<f64>() / n;
    let my = samples.iter().map(|s| y(s)).sum::<f64>() / n;
    let (mut num, mut den) = (0.0, 0.0);
    for s in samples {
        num += (s.t_s - mx) * (y(s) - my);
        den += (s.t_s - mx) * (s.t_s - mx);
    }
    if den > 0.0 {
        num / den
    } else {
        0.0
    }
}

/// Shared between the writer and the sampler.
#[derive(Default)]
pub(super) struct Progress {
    pub(super) user_bytes: AtomicU64,
    pub(super) live_units: AtomicU64,
    pub(super) writing: AtomicBool,
    pub(super) stop: AtomicBool,
}

pub(super) fn sampler(
    db: Arc<Database>,
    table: Arc<Table>,
    strategy: Strategy,
    label: String,
    progress: Arc<Progress>,
) -> Result<Vec<Sample>> {
    let t0 = Instant::now();
    let mut samples = Vec::new();
    let mut last_comp = 0u64;
    let mut last_t = 0.0;
    let mut tick = 0u64;
    while !progress.stop.load(Ordering::Relaxed) {
        let st = table.stats()?;
        let cs = db.compaction().table_stats(&table)?;
        let t = t0.elapsed().as_secs_f64();
        let rate = if t > last_t {
            st.compaction_bytes_written.saturating_sub(last_comp) as f64 / (t - last_t)
        } else {
            0.0
        };
        last_comp = st.compaction_bytes_written;
        last_t = t;
        let unleveled = if strategy.is_leveled() {
            cs.sstables_per_level.first().copied().unwrap_or(0)
        } else {
            0
        };
        let writing = progress.writing.load(Ordering::Relaxed);
        let (l0_bytes, largest_run_bytes, held_bytes) = set_shape(&db, &table);
        samples.push(Sample {
            t_s: t,
            disk_bytes: st.total_disk_bytes,
            live_units: progress.live_units.load(Ordering::Relaxed),
            pending: cs.pending,
            sstables: st.sstable_count,
            unleveled,
            compaction_bytes_per_s: rate,
            writing,
            live_sstable_bytes: st.live_disk_bytes,
            running: cs.running,
            user_bytes: progress.user_bytes.load(Ordering::Relaxed),
            l0_bytes,
            largest_run_bytes,
            held_bytes,
            dir_bytes: dir_bytes(table.dir()),
        });
        if tick.is_multiple_of(2) {
            println!(
                "[{label}] t={t:6.1}s {} user={:7.1}MB disk={:7.1}MB pending={:3} sstables={:3}{} compaction={:6.1}MB/s",
                if writing { "writing " } else { "settling" },
                progress.user_bytes.load(Ordering::Relaxed) as f64 / MB,
                st.total_disk_bytes as f64 / MB,
                cs.pending,
                st.sstable_count,
                if strategy.is_leveled() { format!(" L0={unleveled:3}") } else { String::new() },
                rate / MB
            );
        }
        tick += 1;
        let next = Duration::from_millis(500 * tick);
        let el = t0.elapsed();
        if next > el {
            std::thread::sleep(next - el);
        }
    }
    Ok(samples)
}

/// The shape of the live set for the diagnostics: bytes in level 0, in the largest run, and
/// held by running jobs.
pub(super) fn set_shape(db: &Database, table: &Table) -> (u64, u64, u64) {
    let held: std::collections::HashSet<u64> = db
        .compaction()
        .running()
        .into_iter()
        .flat_map(|j| j.inputs)
        .collect();
    let st = table.state();
    let mut runs: std::collections::HashMap<u128, u64> = std::collections::HashMap::new();
    let (mut l0, mut held_bytes) = (0, 0);
    for s in &st.sstables {
        let b = s.disk_bytes();
        if s.stats.level == 0 {
            l0 += b;
        }
        if held.contains(&s.generation) {
            held_bytes += b;
        }
        *runs.entry(s.stats.run_id).or_default() += b;
    }
    let largest = runs.values().copied().max().unwrap_or(0);
    (l0, largest, held_bytes)
}

/// Bytes of the files in `dir` (0 for what cannot be read: a file deleted between the listing
/// and its size).
pub(super) fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(|e| e.ok()?.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}
