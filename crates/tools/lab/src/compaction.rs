//! `cairn lab compaction`: write and space amplification of the compaction strategies
//! (seeds 000 and 003), measured on the real engine.
//!
//! Each run opens a fresh embedded [`Database`] with one table `(a int, b int, c blob,
//! PRIMARY KEY (a, b))` under one strategy, writes one workload at a paced rate, and samples
//! the table every 0.5 s:
//!
//! * `disk_bytes` = every sstable file in the table directory (live, awaiting deletion and
//!   compaction outputs in progress) — what `du` sees;
//! * `live_bytes` = the size on disk the data written so far would have if fully compacted.
//!   At the end of each run a major compaction measures the fully compacted size `F` of the
//!   final dataset; a sample's live bytes are `F × units(t) / units(end)`, where units are
//!   distinct rows written (append, overwrite, write-delete) or bytes not yet expired
//!   (timeseries);
//! * pending compactions (the strategy's estimate), live sstables, level-0 sstables (LCS; 0
//!   for the other strategies) and compaction output bytes per second.
//!
//! Space amplification = disk bytes / live bytes: peak over the samples once the live data is
//! at least half its final size, final after the writes stopped and compaction went idle.
//! Write amplification = (commitlog + flush + compaction bytes written) / user bytes, where
//! user bytes are the key and value bytes of each write (key bytes of each delete); the
//! final major compaction is not counted.
//!
//! Workloads: `append` (new keys), `overwrite` (a dataset rewritten in a fresh random order
//! per pass), `write-delete` (seed 003: random upserts over a fixed population, every fifth
//! operation a partition or row tombstone of a written key), `timeseries` (time-ordered rows
//! with a TTL on an accelerated virtual clock so TWCS windows close and expire within the
//! run). `--sustained SECS` runs write-delete (and timeseries for TWCS) for a fixed time per
//! strategy and reports the trend of pending compactions.

use super::{fresh_dir, plot};
use crate::sim::{self, SimConfig};
use anyhow::{anyhow, bail, Context, Result};
use bytes::Bytes;
use cairn_engine::compaction::manager::{Clock, ManagerConfig};
use cairn_engine::compaction::strategy::CompactionOptions;
use cairn_engine::model::clustering::{ClusteringLayout, Order};
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{
    Cell, ClusteringKey, ColumnData, DecoratedKey, DeletionTime, LivenessInfo, Mutation, Partition,
    Row,
};
use cairn_engine::schema::{ColumnKind, TableSchema};
use cairn_engine::table::Table;
use cairn_engine::{Database, DatabaseConfig};
use clap::Args;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, RngCore, SeedableRng};
use std::collections::VecDeque;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const MB: f64 = 1e6;
const KEYSPACE: &str = "lab";
const TABLE: &str = "c";
/// Rows per partition in write-delete (so row tombstones have neighbours).
const ROWS_PER_PARTITION: u32 = 4;
/// Series (partitions) in the timeseries workload.
const SERIES: u32 = 64;

/// Options of `cairn lab compaction`.
#[derive(Args, Debug)]
pub struct CompactionArgs {
    /// Output directory.
    #[arg(long, default_value = "lab-out/compaction")]
    out: PathBuf,
    /// Workloads, comma-separated: append, overwrite, write-delete, timeseries, or all.
    #[arg(long, default_value = "all")]
    workloads: String,
    /// Strategies, comma-separated: stcs, lcs, lcs-dynamic, ics, ics-goal, twcs, or all.
    /// TWCS runs only on timeseries, and timeseries only with TWCS and STCS, unless
    /// --all-pairs.
    #[arg(long, default_value = "all")]
    strategies: String,
    /// Run every selected strategy on every selected workload.
    #[arg(long)]
    all_pairs: bool,
    /// Smaller sizes (a few minutes in all).
    #[arg(long)]
    quick: bool,
    /// User write rate in MB/s (10^6 B); 0 = half the flush capacity measured at the start.
    #[arg(long, default_value_t = 0.0)]
    rate_mb: f64,
    /// Overwrite dataset / write-delete key population, MB (default 200; quick 50).
    #[arg(long)]
    dataset_mb: Option<u64>,
    /// Times the overwrite dataset is written in all (default 11; quick 5).
    #[arg(long)]
    passes: Option<u32>,
    /// MB of new keys in append (default 1000; quick 200).
    #[arg(long)]
    append_mb: Option<u64>,
    /// MB of operations in write-delete (default 400; quick 100).
    #[arg(long)]
    write_delete_mb: Option<u64>,
    /// MB written in timeseries (default 400; quick 100).
    #[arg(long)]
    timeseries_mb: Option<u64>,
    /// Virtual one-minute TWCS windows the timeseries run spans.
    #[arg(long, default_value_t = 20)]
    ts_windows: u32,
    /// TTL of timeseries rows, in windows.
    #[arg(long, default_value_t = 4)]
    ts_ttl_windows: u32,
    /// Memtable flush threshold, MiB.
    #[arg(long, default_value_t = 10)]
    memtable_mb: usize,
    /// `sstable_size_in_mb` of LCS and ICS.
    #[arg(long, default_value_t = 10)]
    sstable_mb: u32,
    /// Value bytes per row.
    #[arg(long, default_value_t = 1024)]
    value_bytes: usize,
    /// `min_sstable_size` (bytes) for the size tiers of STCS, ICS, LCS's L0 and TWCS.
    #[arg(long, default_value_t = 1 << 20)]
    min_sstable_size: u64,
    /// Seconds to let compaction finish after the writes before giving up.
    #[arg(long, default_value_t = 300)]
    settle_secs: u64,
    /// Sustained mode: write-delete (and timeseries for TWCS) for this many seconds per
    /// strategy, reporting the trend of pending compactions, instead of the sized runs.
    #[arg(long)]
    sustained: Option<u64>,
    /// Also run the engine's pure simulator on the overwrite workload and print it.
    #[arg(long)]
    simulate: bool,
    /// Instead of running anything, redraw the charts into --out from the `compaction.csv`
    /// (or `sustained.csv`) of earlier runs (comma-separated output directories), e.g. runs
    /// made one strategy at a time.
    #[arg(long)]
    replot: Option<String>,
    /// MB written unpaced, without compaction, to measure the flush capacity (default 400;
    /// quick 200).
    #[arg(long)]
    calibrate_mb: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Strategy {
    Stcs,
    Lcs,
    LcsDynamic,
    Ics,
    IcsGoal,
    Twcs,
}

impl Strategy {
    const ALL: [Strategy; 6] = [
        Strategy::Stcs,
        Strategy::Lcs,
        Strategy::LcsDynamic,
        Strategy::Ics,
        Strategy::IcsGoal,
        Strategy::Twcs,
    ];

    fn name(self) -> &'static str {
        match self {
            Strategy::Stcs => "STCS",
            Strategy::Lcs => "LCS",
            Strategy::LcsDynamic => "LCS-dynamic",
            Strategy::Ics => "ICS",
            Strategy::IcsGoal => "ICS-goal-1.25",
            Strategy::Twcs => "TWCS",
        }
    }

    fn parse(s: &str) -> Result<Strategy> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "stcs" => Strategy::Stcs,
            "lcs" => Strategy::Lcs,
            "lcs-dynamic" | "lcs-dyn" => Strategy::LcsDynamic,
            "ics" => Strategy::Ics,
            "ics-goal" | "ics-goal-1.25" => Strategy::IcsGoal,
            "twcs" => Strategy::Twcs,
            other => bail!("unknown strategy {other:?}"),
        })
    }

    fn is_leveled(self) -> bool {
        matches!(self, Strategy::Lcs | Strategy::LcsDynamic)
    }

    /// The table's CQL compaction map.
    fn options(self, a: &CompactionArgs) -> Vec<(String, String)> {
        let size = a.sstable_mb.to_string();
        let min = a.min_sstable_size.to_string();
        let kv: Vec<(&str, &str)> = match self {
            Strategy::Stcs => vec![
                ("class", "SizeTieredCompactionStrategy"),
                ("min_sstable_size", &min),
            ],
            Strategy::Lcs => vec![
                ("class", "LeveledCompactionStrategy"),
                ("sstable_size_in_mb", &size),
                ("min_sstable_size", &min),
            ],
            Strategy::LcsDynamic => vec![
                ("class", "LeveledCompactionStrategy"),
                ("sstable_size_in_mb", &size),
                ("min_sstable_size", &min),
                ("dynamic_level_bytes", "true"),
            ],
            Strategy::Ics => vec![
                ("class", "IncrementalCompactionStrategy"),
                ("sstable_size_in_mb", &size),
                ("min_sstable_size", &min),
            ],
            Strategy::IcsGoal => vec![
                ("class", "IncrementalCompactionStrategy"),
                ("sstable_size_in_mb", &size),
                ("min_sstable_size", &min),
                ("space_amplification_goal", "1.25"),
            ],
            Strategy::Twcs => vec![
                ("class", "TimeWindowCompactionStrategy"),
                ("compaction_window_unit", "MINUTES"),
                ("compaction_window_size", "1"),
                ("min_sstable_size", &min),
            ],
        };
        kv.into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Workload {
    Append,
    Overwrite,
    WriteDelete,
    Timeseries,
}

impl Workload {
    const ALL: [Workload; 4] = [
        Workload::Append,
        Workload::Overwrite,
        Workload::WriteDelete,
        Workload::Timeseries,
    ];

    fn name(self) -> &'static str {
        match self {
            Workload::Append => "append",
            Workload::Overwrite => "overwrite",
            Workload::WriteDelete => "write-delete",
            Workload::Timeseries => "timeseries",
        }
    }

    fn parse(s: &str) -> Result<Workload> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "append" => Workload::Append,
            "overwrite" => Workload::Overwrite,
            "write-delete" | "writedelete" => Workload::WriteDelete,
            "timeseries" | "time-series" => Workload::Timeseries,
            other => bail!("unknown workload {other:?}"),
        })
    }
}

fn parse_list<T: Copy>(s: &str, all: &[T], parse: fn(&str) -> Result<T>) -> Result<Vec<T>> {
    if s.trim().eq_ignore_ascii_case("all") {
        return Ok(all.to_vec());
    }
    s.split(',')
        .filter(|x| !x.trim().is_empty())
        .map(parse)
        .collect()
}

/// Seconds since the epoch as the engine's compaction sees them; runs faster than real time
/// for the timeseries workload, and can be frozen once the writes stop.
struct VirtualClock {
    base_secs: f64,
    start: Instant,
    speed: f64,
    /// Frozen virtual time in ms (0 = running).
    frozen_ms: AtomicU64,
}

impl VirtualClock {
    fn new(speed: f64) -> Self {
        let base_secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        VirtualClock {
            base_secs,
            start: Instant::now(),
            speed,
            frozen_ms: AtomicU64::new(0),
        }
    }

    fn now_f64(&self) -> f64 {
        let f = self.frozen_ms.load(Ordering::Relaxed);
        if f != 0 {
            return f as f64 / 1000.0;
        }
        self.base_secs + self.start.elapsed().as_secs_f64() * self.speed
    }

    fn now_secs(&self) -> u32 {
        self.now_f64() as u32
    }

    fn now_micros(&self) -> i64 {
        (self.now_f64() * 1e6) as i64
    }

    fn freeze(&self) {
        let ms = (self.now_f64() * 1000.0) as u64;
        self.frozen_ms.store(ms.max(1), Ordering::Relaxed);
    }
}

/// One operation of a workload.
struct Op {
    mutation: Mutation,
    user_bytes: u64,
}

/// Builds the rows and tombstones.
struct Builder {
    table: u128,
    layout: ClusteringLayout,
    pool: Bytes,
    value_bytes: usize,
    rng: StdRng,
}

impl Builder {
    fn ck(&self, b: u32) -> Result<ClusteringKey> {
        Ok(self.layout.encode_key(&[&b.to_be_bytes()])?)
    }

    fn value(&mut self) -> Bytes {
        let off = self.rng.gen_range(0..self.pool.len() - self.value_bytes);
        self.pool.slice(off..off + self.value_bytes)
    }

    fn pk(a: u32) -> DecoratedKey {
        DecoratedKey::new(Bytes::copy_from_slice(&a.to_be_bytes()))
    }

    fn upsert(&mut self, a: u32, b: u32, ts: i64, ttl: Option<(u32, u32)>) -> Result<Op> {
        let value = self.value();
        let (marker, cell) = match ttl {
            Some((ttl, now)) => (
                LivenessInfo::expiring(ts, ttl, now),
                Cell::expiring(ts, ttl, now, value),
            ),
            None => (LivenessInfo::live(ts), Cell::live(ts, value)),
        };
        let mut p = Partition::default();
        p.rows.insert(
            self.ck(b)?,
            Row {
                marker: Some(marker),
                deletion: None,
                columns: vec![(2, ColumnData::Simple(cell))],
            },
        );
        Ok(Op {
            mutation: Mutation {
                table: self.table,
                key: Self::pk(a),
                update: p,
            },
            user_bytes: 8 + self.value_bytes as u64,
        })
    }

    fn delete(&mut self, a: u32, row: Option<u32>, ts: i64, now: u32) -> Result<Op> {
        let dt = DeletionTime {
            marked_at: ts,
            local_deletion_time: now,
        };
        let mut p = Partition::default();
        let user_bytes = match row {
            None => {
                p.deletion = Some(dt);
                4
            }
            Some(b) => {
                p.rows.insert(
                    self.ck(b)?,
                    Row {
                        marker: None,
                        deletion: Some(dt),
                        columns: Vec::new(),
                    },
                );
                8
            }
        };
        Ok(Op {
            mutation: Mutation {
                table: self.table,
                key: Self::pk(a),
                update: p,
            },
            user_bytes,
        })
    }
}

/// A workload's state: produces operations and tracks its live units.
struct Generator {
    workload: Workload,
    builder: Builder,
    clock: Arc<VirtualClock>,
    /// Operations produced.
    ops: u64,
    /// User bytes after which the workload ends (None: runs until stopped).
    limit_bytes: Option<u64>,
    user_bytes: u64,
    /// Last timestamp given (timestamps strictly increase).
    last_ts: i64,
    // overwrite
    rows: u32,
    order: Vec<u32>,
    pos: usize,
    // distinct rows written (overwrite, write-delete)
    seen: Vec<bool>,
    distinct: u64,
    written_partitions: Vec<u32>,
    partition_seen: Vec<bool>,
    // timeseries: (virtual second, bytes) not yet expired
    ttl_secs: u32,
    recent: VecDeque<(u32, u64)>,
    recent_bytes: u64,
}

impl Generator {
    fn ts(&mut self) -> i64 {
        let t = self.clock.now_micros().max(self.last_ts + 1);
        self.last_ts = t;
        t
    }

    /// Live units so far (see the module docs).
    fn live_units(&self) -> u64 {
        match self.workload {
            Workload::Append => self.ops,
            Workload::Overwrite | Workload::WriteDelete => self.distinct,
            Workload::Timeseries => self.recent_bytes,
        }
    }

    fn mark(&mut self, idx: usize) {
        if let Some(s) = self.seen.get_mut(idx) {
            if !*s {
                *s = true;
                self.distinct += 1;
            }
        }
    }

    fn next(&mut self) -> Result<Option<Op>> {
        if let Some(limit) = self.limit_bytes {
            if self.user_bytes >= limit {
                return Ok(None);
            }
        }
        let ts = self.ts();
        let op = match self.workload {
            Workload::Append => {
                let a = self.ops as u32;
                self.builder.upsert(a, 0, ts, None)?
            }
            Workload::Overwrite => {
                if self.pos == self.order.len() {
                    self.order = (0..self.rows).collect();
                    self.order.shuffle(&mut self.builder.rng);
                    self.pos = 0;
                }
                let a = self.order[self.pos];
                self.pos += 1;
                self.mark(a as usize);
                self.builder.upsert(a, 0, ts, None)?
            }
            Workload::WriteDelete => {
                let partitions = self.rows / ROWS_PER_PARTITION;
                if self.ops % 5 == 4 && !self.written_partitions.is_empty() {
                    let i = self.builder.rng.gen_range(0..self.written_partitions.len());
                    let a = self.written_partitions[i];
                    let now = self.clock.now_secs();
                    if (self.ops / 5).is_multiple_of(2) {
                        self.builder.delete(a, None, ts, now)?
                    } else {
                        let b = self.builder.rng.gen_range(0..ROWS_PER_PARTITION);
                        self.builder.delete(a, Some(b), ts, now)?
                    }
                } else {
                    let a = self.builder.rng.gen_range(0..partitions.max(1));
                    let b = self.builder.rng.gen_range(0..ROWS_PER_PARTITION);
                    let idx = (a * ROWS_PER_PARTITION + b) as usize;
                    if let Some(seen) = self.partition_seen.get_mut(a as usize) {
                        if !*seen {
                            *seen = true;
                            self.written_partitions.push(a);
                        }
                    }
                    self.mark(idx);
                    self.builder.upsert(a, b, ts, None)?
                }
            }
            Workload::Timeseries => {
                let a = (self.ops % u64::from(SERIES)) as u32;
                let b = (self.ops / u64::from(SERIES)) as u32;
                let now = self.clock.now_secs();
                let op = self.builder.upsert(a, b, ts, Some((self.ttl_secs, now)))?;
                match self.recent.back_mut() {
                    Some((s, n)) if *s == now => *n += op.user_bytes,
                    _ => self.recent.push_back((now, op.user_bytes)),
                }
                self.recent_bytes += op.user_bytes;
                while let Some(&(s, n)) = self.recent.front() {
                    if s + self.ttl_secs <= now {
                        self.recent.pop_front();
                        self.recent_bytes -= n;
                    } else {
                        break;
                    }
                }
                op
            }
        };
        self.ops += 1;
        self.user_bytes += op.user_bytes;
        Ok(Some(op))
    }
}

/// One 0.5 s sample.
#[derive(Clone, Debug)]
struct Sample {
    t_s: f64,
    disk_bytes: u64,
    live_units: u64,
    pending: u64,
    sstables: usize,
    unleveled: usize,
    compaction_bytes_per_s: f64,
    /// Whether the writes were still running.
    writing: bool,
    /// Bytes of live sstables (disk_bytes minus files awaiting deletion and outputs in
    /// progress).
    live_sstable_bytes: u64,
    /// Jobs running on the table.
    running: usize,
    /// User bytes written so far (a stall of the writer, and its catch-up, show here).
    user_bytes: u64,
    /// Bytes of live level-0 sstables (LCS's L0; every sstable for the other strategies).
    l0_bytes: u64,
    /// Bytes of the largest run of live sstables (fragments sharing a run id).
    largest_run_bytes: u64,
    /// Bytes of live sstables that running jobs hold as inputs.
    held_bytes: u64,
    /// Bytes of every file in the table directory, as `du` sees them: `disk_bytes` plus the
    /// outputs still being written (which `disk_bytes`, from the engine's counters, leaves
    /// out) and the transaction logs.
    dir_bytes: u64,
}

/// What one run measured.
#[derive(Clone, Debug)]
struct RunResult {
    strategy: Strategy,
    workload: String,
    samples: Vec<Sample>,
    /// Fully compacted size of the final data.
    compacted_bytes: u64,
    live_units_end: u64,
    user_bytes: u64,
    commitlog_bytes: u64,
    flush_bytes: u64,
    compaction_bytes: u64,
    flushes: u64,
    ops: u64,
    write_secs: f64,
    settle_secs: f64,
    settled: bool,
    final_disk_bytes: u64,
    /// Finished jobs before the major compaction: (kind, inputs, bytes in, bytes out, level,
    /// start ms since the run began, duration s).
    history: Vec<(String, usize, u64, u64, u32, i64, f64)>,
}

impl RunResult {
    fn live_bytes(&self, s: &Sample) -> f64 {
        if self.live_units_end == 0 {
            return 0.0;
        }
        self.compacted_bytes as f64 * s.live_units as f64 / self.live_units_end as f64
    }

    fn write_amp(&self) -> f64 {
        (self.commitlog_bytes + self.flush_bytes + self.compaction_bytes) as f64
            / self.user_bytes.max(1) as f64
    }

    fn write_amp_no_log(&self) -> f64 {
        (self.flush_bytes + self.compaction_bytes) as f64 / self.user_bytes.max(1) as f64
    }

    fn peak_space_amp(&self) -> f64 {
        let half = self.compacted_bytes as f64 * 0.5;
        self.samples
            .iter()
            .filter(|s| self.live_bytes(s) >= half)
            .map(|s| s.disk_bytes as f64 / self.live_bytes(s))
            .fold(0.0, f64::max)
    }

    /// Peak space amplification by the table directory's size (`dir_bytes`: outputs still
    /// being written included).
    fn peak_space_amp_du(&self) -> f64 {
        let half = self.compacted_bytes as f64 * 0.5;
        self.samples
            .iter()
            .filter(|s| self.live_bytes(s) >= half)
            .map(|s| s.dir_bytes as f64 / self.live_bytes(s))
            .fold(0.0, f64::max)
    }

    fn final_space_amp(&self) -> f64 {
        self.final_disk_bytes as f64 / self.compacted_bytes.max(1) as f64
    }

    fn ops_per_s(&self) -> f64 {
        self.ops as f64 / self.write_secs.max(1e-9)
    }

    /// Pending compactions during the writes: mean, max, and the least-squares slope (per
    /// minute) over the second half.
    fn pending_trend(&self) -> (f64, u64, f64) {
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

fn slope(samples: &[&Sample], y: impl Fn(&Sample) -> f64) -> f64 {
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

/// Sizes in effect.
struct Sizes {
    dataset: u64,
    passes: u32,
    append: u64,
    write_delete: u64,
    timeseries: u64,
    calibrate: u64,
}

impl Sizes {
    fn new(a: &CompactionArgs) -> Self {
        let q = a.quick;
        let m = |v: Option<u64>, full: u64, quick: u64| {
            (v.unwrap_or(if q { quick } else { full }) as f64 * MB) as u64
        };
        Sizes {
            dataset: m(a.dataset_mb, 200, 50),
            passes: a.passes.unwrap_or(if q { 5 } else { 11 }),
            append: m(a.append_mb, 1000, 200),
            write_delete: m(a.write_delete_mb, 400, 100),
            timeseries: m(a.timeseries_mb, 400, 100),
            calibrate: m(a.calibrate_mb, 400, 200),
        }
    }
}

fn schema(options: Vec<(String, String)>, gc_grace: Option<u32>) -> TableSchema {
    let mut s = TableSchema::new(KEYSPACE, TABLE)
        .with_column("a", CqlType::Int, ColumnKind::PartitionKey)
        .with_clustering("b", CqlType::Int, Order::Asc)
        .with_column("c", CqlType::Blob, ColumnKind::Regular);
    s.options.compaction = options;
    if let Some(g) = gc_grace {
        s.options.gc_grace_seconds = g;
    }
    s
}

fn db_config(dir: &Path, a: &CompactionArgs, clock: Option<Arc<VirtualClock>>) -> DatabaseConfig {
    let mut cfg = DatabaseConfig::new(dir);
    cfg.memtable_flush_threshold = a.memtable_mb << 20;
    cfg.memtable_total_space = 4 * (a.memtable_mb << 20);
    cfg.compaction = ManagerConfig {
        backlog_normalization_bytes: cfg.memtable_total_space as u64,
        ..ManagerConfig::default()
    };
    if let Some(c) = clock {
        cfg.compaction.clock = Clock(Arc::new(move || u64::from(c.now_secs())));
    }
    cfg
}

fn random_pool(rng: &mut StdRng, value_bytes: usize) -> Bytes {
    let mut v = vec![0u8; (1 << 20) + value_bytes + 1];
    rng.fill_bytes(&mut v);
    Bytes::from(v)
}

/// Writes `calibrate` bytes of new keys unpaced with autocompaction off; returns user bytes
/// per second until everything is flushed.
fn calibrate(a: &CompactionArgs, sizes: &Sizes) -> Result<f64> {
    let dir = a.out.join("db-calibrate");
    fresh_dir(&dir)?;
    let mut cfg = db_config(&dir, a, None);
    cfg.compaction.autocompaction = false;
    let db = Database::open(cfg).context("opening calibration database")?;
    let table = db.create_table(schema(Strategy::Stcs.options(a), None))?;
    let mut rng = StdRng::seed_from_u64(7);
    let clock = Arc::new(VirtualClock::new(1.0));
    let mut gen = generator(
        Workload::Append,
        &table,
        a,
        sizes,
        Some(sizes.calibrate),
        &clock,
        &mut rng,
    )?;
    let t0 = Instant::now();
    while let Some(op) = gen.next()? {
        db.apply(vec![op.mutation])?;
    }
    db.flush(KEYSPACE, TABLE)?;
    let secs = t0.elapsed().as_secs_f64();
    let rate = gen.user_bytes as f64 / secs;
    let st = table.stats()?;
    println!(
        "calibration: {:.0} MB of new rows written and flushed in {secs:.2} s = {:.1} MB/s \
         ({} flushes, {:.1} MB each)",
        gen.user_bytes as f64 / MB,
        rate / MB,
        st.flushes,
        st.flush_bytes_written as f64 / st.flushes.max(1) as f64 / MB
    );
    drop(table);
    drop(db);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(rate)
}

fn generator(
    w: Workload,
    table: &Arc<Table>,
    a: &CompactionArgs,
    sizes: &Sizes,
    limit: Option<u64>,
    clock: &Arc<VirtualClock>,
    rng: &mut StdRng,
) -> Result<Generator> {
    let schema = table.schema();
    let rows = match w {
        Workload::Overwrite => (sizes.dataset / a.value_bytes as u64).max(1) as u32,
        Workload::WriteDelete => {
            let parts = (sizes.dataset / (a.value_bytes as u64 * u64::from(ROWS_PER_PARTITION)))
                .max(1) as u32;
            parts * ROWS_PER_PARTITION
        }
        _ => 0,
    };
    let ttl_secs = a.ts_ttl_windows.max(1) * 60;
    Ok(Generator {
        workload: w,
        builder: Builder {
            table: schema.id,
            layout: ClusteringLayout::new(vec![(CqlType::Int, Order::Asc)]),
            pool: random_pool(rng, a.value_bytes),
            value_bytes: a.value_bytes,
            rng: StdRng::seed_from_u64(rng.gen()),
        },
        clock: Arc::clone(clock),
        ops: 0,
        limit_bytes: limit,
        user_bytes: 0,
        last_ts: 0,
        rows,
        order: Vec::new(),
        pos: 0,
        seen: vec![false; rows as usize],
        distinct: 0,
        written_partitions: Vec::new(),
        partition_seen: vec![false; (rows / ROWS_PER_PARTITION) as usize],
        ttl_secs,
        recent: VecDeque::new(),
        recent_bytes: 0,
    })
}

/// Shared between the writer and the sampler.
#[derive(Default)]
struct Progress {
    user_bytes: AtomicU64,
    live_units: AtomicU64,
    writing: AtomicBool,
    stop: AtomicBool,
}

fn sampler(
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
fn set_shape(db: &Database, table: &Table) -> (u64, u64, u64) {
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
fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(|e| e.ok()?.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// Waits until compaction has nothing running, queued or pending (or the timeout).
fn settle(db: &Database, table: &Arc<Table>, timeout: Duration) -> Result<bool> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let idle = db.compaction().wait_idle(left);
        let pending = db.compaction().table_stats(table)?.pending;
        if idle && pending == 0 {
            return Ok(true);
        }
        if Instant::now() >= deadline {
            return Ok(false);
        }
        db.compaction().submit(table);
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Waits (up to 10 s) for deleted sstable files to go: total disk bytes == live bytes.
fn wait_deletions(table: &Table) -> Result<u64> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let st = table.stats()?;
        if st.total_disk_bytes <= st.live_disk_bytes || Instant::now() >= deadline {
            return Ok(st.total_disk_bytes);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One strategy on one workload. `duration` bounds the writes by time instead of size.
fn run_one(
    a: &CompactionArgs,
    sizes: &Sizes,
    strategy: Strategy,
    workload: Workload,
    rate: f64,
    duration: Option<f64>,
) -> Result<RunResult> {
    let wl_name = match duration {
        Some(_) => format!("sustained-{}", workload.name()),
        None => workload.name().to_string(),
    };
    let label = format!("{} {}", strategy.name(), wl_name);
    let dir = a.out.join(format!("db-{}-{}", strategy.name(), wl_name));
    fresh_dir(&dir)?;
    let limit = match (duration, workload) {
        (Some(_), _) => None,
        (None, Workload::Append) => Some(sizes.append),
        (None, Workload::Overwrite) => Some(sizes.dataset * u64::from(sizes.passes)),
        (None, Workload::WriteDelete) => Some(sizes.write_delete),
        (None, Workload::Timeseries) => Some(sizes.timeseries),
    };
    // Timeseries: the run spans `ts_windows` virtual minutes.
    let speed = if workload == Workload::Timeseries {
        let real_secs = match (duration, limit) {
            (Some(d), _) => d,
            (None, Some(l)) => l as f64 / rate,
            (None, None) => 60.0,
        };
        (f64::from(a.ts_windows) * 60.0 / real_secs.max(1.0)).max(1.0)
    } else {
        1.0
    };
    let clock = Arc::new(VirtualClock::new(speed));
    let cfg = db_config(&dir, a, Some(Arc::clone(&clock)));
    let db = Arc::new(Database::open(cfg).with_context(|| format!("opening {}", dir.display()))?);
    let gc = (workload == Workload::Timeseries).then_some(0);
    let opts = strategy.options(a);
    CompactionOptions::from_map(&opts).map_err(|e| anyhow!("{}: {e:?}", strategy.name()))?;
    let table = db.create_table(schema(opts, gc))?;
    let mut rng = StdRng::seed_from_u64(42);
    let mut gen = generator(workload, &table, a, sizes, limit, &clock, &mut rng)?;

    let progress = Arc::new(Progress::default());
    progress.writing.store(true, Ordering::Relaxed);
    let sampler_handle = {
        let (db, table, progress, label) = (
            Arc::clone(&db),
            Arc::clone(&table),
            Arc::clone(&progress),
            label.clone(),
        );
        std::thread::Builder::new()
            .name("lab-sampler".into())
            .spawn(move || sampler(db, table, strategy, label, progress))
            .context("starting the sampler")?
    };

    let t0 = Instant::now();
    let write_result = (|| -> Result<()> {
        loop {
            if let Some(d) = duration {
                if t0.elapsed().as_secs_f64() >= d {
                    break;
                }
            }
            let Some(op) = gen.next()? else { break };
            db.apply(vec![op.mutation])?;
            progress.user_bytes.store(gen.user_bytes, Ordering::Relaxed);
            progress
                .live_units
                .store(gen.live_units(), Ordering::Relaxed);
            // Pace: user bytes may not run ahead of rate × elapsed.
            let due = gen.user_bytes as f64 / rate;
            let el = t0.elapsed().as_secs_f64();
            if due > el + 0.002 {
                std::thread::sleep(Duration::from_secs_f64(due - el));
            }
        }
        Ok(())
    })();
    let write_secs = t0.elapsed().as_secs_f64();
    let t_end_writes = Instant::now();
    clock.freeze();
    progress.writing.store(false, Ordering::Relaxed);
    let settled = match &write_result {
        Ok(()) => {
            db.flush(KEYSPACE, TABLE)?;
            settle(&db, &table, Duration::from_secs(a.settle_secs))?
        }
        Err(_) => false,
    };
    let settle_secs = t_end_writes.elapsed().as_secs_f64();
    let final_disk_bytes = if settled {
        wait_deletions(&table)?
    } else {
        table.stats()?.total_disk_bytes
    };
    let st = table.stats()?;
    let run_start_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
        - t0.elapsed().as_millis() as i64;
    let history = db
        .compaction()
        .history()
        .into_iter()
        .filter(|j| j.table == TABLE)
        .map(|j| {
            (
                format!("{:?}", j.kind),
                j.inputs.len(),
                j.bytes_in,
                j.bytes_out,
                j.output_level,
                j.started_at_ms as i64 - run_start_ms,
                j.duration.as_secs_f64(),
            )
        })
        .collect();
    progress.stop.store(true, Ordering::Relaxed);
    let samples = sampler_handle
        .join()
        .map_err(|_| anyhow!("sampler panicked"))??;
    write_result?;
    if !settled {
        println!(
            "[{label}] compaction did not settle within {} s",
            a.settle_secs
        );
    }
    // The fully compacted size of the final data. Automatic compaction is switched off and
    // drained first: a regular job starting beside the major (LCS pushes data down even
    // with nothing pending) would keep its sstables out of it, and the "fully compacted"
    // size would count them twice.
    db.compaction().set_autocompaction(false);
    for _ in 0..2 {
        // Twice: a worker may have taken the table off the queue just before the switch.
        db.compaction()
            .wait_idle(Duration::from_secs(a.settle_secs));
        std::thread::sleep(Duration::from_millis(300));
    }
    db.compact(KEYSPACE, TABLE)?;
    let compacted_bytes = wait_deletions(&table)?;
    let r = RunResult {
        strategy,
        workload: wl_name,
        samples,
        compacted_bytes,
        live_units_end: gen.live_units(),
        user_bytes: gen.user_bytes,
        commitlog_bytes: st.commitlog_bytes_written,
        flush_bytes: st.flush_bytes_written,
        compaction_bytes: st.compaction_bytes_written,
        flushes: st.flushes,
        ops: gen.ops,
        write_secs: write_secs.max(1e-9),
        settle_secs,
        settled,
        final_disk_bytes,
        history,
    };
    println!(
        "[{label}] done: WA {:.2} (without log {:.2}), peak SA {:.2} (by directory size {:.2}), final SA {:.2}, compacted {:.1} MB, settle {:.1} s",
        r.write_amp(),
        r.write_amp_no_log(),
        r.peak_space_amp(),
        r.peak_space_amp_du(),
        r.final_space_amp(),
        r.compacted_bytes as f64 / MB,
        r.settle_secs
    );
    drop(table);
    drop(db);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(r)
}

fn pairs(a: &CompactionArgs) -> Result<Vec<(Strategy, Workload)>> {
    let strategies = parse_list(&a.strategies, &Strategy::ALL, Strategy::parse)?;
    let workloads = parse_list(&a.workloads, &Workload::ALL, Workload::parse)?;
    let mut out = Vec::new();
    for &w in &workloads {
        for &s in &strategies {
            let ok = a.all_pairs
                || match (s, w) {
                    (Strategy::Twcs, Workload::Timeseries) => true,
                    (Strategy::Twcs, _) => false,
                    (Strategy::Stcs, Workload::Timeseries) => true,
                    (_, Workload::Timeseries) => false,
                    _ => true,
                };
            if ok {
                out.push((s, w));
            }
        }
    }
    Ok(out)
}

/// Runs the lab.
pub fn run(a: CompactionArgs) -> Result<()> {
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    if let Some(dirs) = &a.replot {
        return replot(&a, dirs);
    }
    let sizes = Sizes::new(&a);
    let mut notes = String::new();
    let rate = if a.rate_mb > 0.0 {
        a.rate_mb * MB
    } else {
        let cap = calibrate(&a, &sizes)?;
        writeln!(
            notes,
            "flush capacity (unpaced new rows, no compaction): {:.1} MB/s; pace = half: {:.1} MB/s",
            cap / MB,
            cap / 2.0 / MB
        )?;
        cap / 2.0
    };
    println!("user write rate: {:.1} MB/s", rate / MB);
    writeln!(
        notes,
        "rate {:.1} MB/s, memtable {} MiB, sstable_size_in_mb {}, min_sstable_size {} B, {} B values",
        rate / MB,
        a.memtable_mb,
        a.sstable_mb,
        a.min_sstable_size,
        a.value_bytes
    )?;

    if a.simulate {
        let sim = simulate(&a, &sizes)?;
        print!("{sim}");
        std::fs::write(a.out.join("sim.txt"), &sim)?;
    }

    let mut results = Vec::new();
    if let Some(secs) = a.sustained {
        let strategies = parse_list(&a.strategies, &Strategy::ALL, Strategy::parse)?;
        for s in strategies {
            let w = if s == Strategy::Twcs {
                Workload::Timeseries
            } else {
                Workload::WriteDelete
            };
            results.push(run_one(&a, &sizes, s, w, rate, Some(secs as f64))?);
        }
    } else {
        for (s, w) in pairs(&a)? {
            results.push(run_one(&a, &sizes, s, w, rate, None)?);
        }
    }
    write_outputs(&a, &results, &notes, a.sustained.is_some())
}

/// The simulator on the overwrite shape: jobs applied at once, then timed, with each of the
/// two compactors processing `speed` bytes of input per byte the workload writes (at
/// `--rate-mb 10`, speed 4 is 40 MB/s of compaction per thread).
fn simulate(a: &CompactionArgs, sizes: &Sizes) -> Result<String> {
    let base = SimConfig {
        dataset_mib: (sizes.dataset >> 20).max(1),
        buckets: 1024,
        flush_mib: a.memtable_mb as u64,
        passes: sizes.passes,
        seed: 1,
        compaction_speed: None,
        compactors: ManagerConfig::default().concurrent_compactors,
        flush_as_one: false,
        contention: None,
        same_tier_backlog_only: false,
    };
    let mut out = String::new();
    for speed in [None, Some(6.0), Some(4.0), Some(2.5)] {
        let cfg = SimConfig {
            compaction_speed: speed,
            ..base.clone()
        };
        // Beside ICS-goal in the timed modes: what the engine did before ICS flushes became
        // runs of fragments.
        let variant = speed.is_some().then(|| {
            (
                "ICS-goal-1.25 (whole flushes)",
                SimConfig {
                    flush_as_one: true,
                    ..cfg.clone()
                },
            )
        });
        let reports = simulate_strategies(a, &cfg, variant)?;
        let mode = match speed {
            None => "jobs at once".to_string(),
            Some(x) => format!(
                "timed: {} compactors, each {x} bytes of input per byte written",
                cfg.compactors
            ),
        };
        writeln!(
            out,
            "simulator (no I/O; WA without the log): overwrite {} MiB x {} passes, {} MiB flushes; {mode}\n{}",
            cfg.dataset_mib,
            cfg.passes,
            cfg.flush_mib,
            sim::table(&reports)
        )?;
    }
    // A shared machine: the compactors' speed follows the priority the backlog controller
    // gives them against other runnable work (`SimConfig::contention`).
    for contention in [0.1, 0.2, 0.4] {
        let cfg = SimConfig {
            compaction_speed: Some(CONTENDED_SPEED),
            contention: Some(contention),
            ..base.clone()
        };
        // Beside ICS-goal: the backlog as the engine counted it before (ScyllaDB's formula).
        let variant = (
            "ICS-goal (same-tier backlog)",
            SimConfig {
                same_tier_backlog_only: true,
                ..cfg.clone()
            },
        );
        let reports = simulate_strategies(a, &cfg, Some(variant))?;
        writeln!(
            out,
            "simulator, contended CPU: each compactor {CONTENDED_SPEED} bytes of input per byte written \
             on an idle core, beside {contention} nice-0 threads' worth of other work, at the nice \
             value the backlog controller sets\n{}",
            sim::table(&reports)
        )?;
    }
    Ok(out)
}

/// Simulates every strategy but TWCS (the overwrite shape has no time windows) under `cfg`;
/// `ics_goal_variant`, when given, is simulated right after ICS-goal under its own name and
/// configuration.
fn simulate_strategies(
    a: &CompactionArgs,
    cfg: &SimConfig,
    ics_goal_variant: Option<(&str, SimConfig)>,
) -> Result<Vec<sim::SimReport>> {
    let mut reports = Vec::new();
    for s in Strategy::ALL {
        if s == Strategy::Twcs {
            continue;
        }
        let opts = CompactionOptions::from_map(&s.options(a))
            .map_err(|e| anyhow!("{}: {e:?}", s.name()))?;
        reports.push(sim::simulate(s.name(), &opts, cfg));
        if let (Strategy::IcsGoal, Some((name, variant))) = (s, &ics_goal_variant) {
            reports.push(sim::simulate(name, &opts, variant));
        }
    }
    Ok(reports)
}

/// Compaction speed on an idle core in the simulator's contended runs, in input bytes per
/// byte written: ~100 MB/s per thread at `--rate-mb 10`.
const CONTENDED_SPEED: f64 = 10.0;

fn write_outputs(
    a: &CompactionArgs,
    results: &[RunResult],
    notes: &str,
    sustained: bool,
) -> Result<()> {
    let mut csv = String::from(
        "strategy,workload,t_s,disk_bytes,live_bytes,pending,sstables,unleveled,compaction_bytes_per_s\n",
    );
    for r in results {
        for s in &r.samples {
            writeln!(
                csv,
                "{},{},{:.2},{},{:.0},{},{},{},{:.0}",
                r.strategy.name(),
                r.workload,
                s.t_s,
                s.disk_bytes,
                r.live_bytes(s),
                s.pending,
                s.sstables,
                s.unleveled,
                s.compaction_bytes_per_s
            )?;
        }
    }
    let mut amp = String::from("strategy,workload,user_bytes,commitlog_bytes,flush_bytes,compaction_bytes,write_amp,peak_space_amp,final_space_amp,ops_per_s\n");
    let mut md = format!("{notes}\n| strategy | workload | user MB | commitlog MB | flush MB | compaction MB | WA | WA w/o log | peak SA | peak SA (dir) | final SA | compacted MB | mean flush MB | ops/s | settle s | pending mean / max | pending slope (2nd half, /min) |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for r in results {
        writeln!(
            amp,
            "{},{},{},{},{},{},{:.3},{:.3},{:.3},{:.0}",
            r.strategy.name(),
            r.workload,
            r.user_bytes,
            r.commitlog_bytes,
            r.flush_bytes,
            r.compaction_bytes,
            r.write_amp(),
            r.peak_space_amp(),
            r.final_space_amp(),
            r.ops_per_s()
        )?;
        let (pm, px, ps) = r.pending_trend();
        writeln!(
            md,
            "| {} | {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.1} | {:.1} | {:.0} | {:.1}{} | {:.1} / {} | {:+.2} |",
            r.strategy.name(),
            r.workload,
            r.user_bytes as f64 / MB,
            r.commitlog_bytes as f64 / MB,
            r.flush_bytes as f64 / MB,
            r.compaction_bytes as f64 / MB,
            r.write_amp(),
            r.write_amp_no_log(),
            r.peak_space_amp(),
            r.peak_space_amp_du(),
            r.final_space_amp(),
            r.compacted_bytes as f64 / MB,
            r.flush_bytes as f64 / r.flushes.max(1) as f64 / MB,
            r.ops_per_s(),
            r.settle_secs,
            if r.settled { "" } else { " (not settled)" },
            pm,
            px,
            ps
        )?;
    }
    md.push('\n');
    md.push_str(&bars(results));
    let mut hist = String::from(
        "strategy,workload,kind,inputs,bytes_in,bytes_out,output_level,start_s,duration_s\n",
    );
    for r in results {
        for (kind, n, bi, bo, lvl, start_ms, dur) in &r.history {
            writeln!(
                hist,
                "{},{},{kind},{n},{bi},{bo},{lvl},{:.3},{dur:.3}",
                r.strategy.name(),
                r.workload,
                *start_ms as f64 / 1000.0
            )?;
        }
    }
    let mut diag = String::from("strategy,workload,t_s,disk_bytes,live_sstable_bytes,running,user_bytes,l0_bytes,largest_run_bytes,held_bytes,dir_bytes\n");
    for r in results {
        for s in &r.samples {
            writeln!(
                diag,
                "{},{},{:.2},{},{},{},{},{},{},{},{}",
                r.strategy.name(),
                r.workload,
                s.t_s,
                s.disk_bytes,
                s.live_sstable_bytes,
                s.running,
                s.user_bytes,
                s.l0_bytes,
                s.largest_run_bytes,
                s.held_bytes,
                s.dir_bytes
            )?;
        }
    }
    let prefix = if sustained { "sustained-" } else { "" };
    std::fs::write(a.out.join(format!("{prefix}history.csv")), hist)?;
    std::fs::write(a.out.join(format!("{prefix}diagnostics.csv")), diag)?;
    let (csv_name, amp_name, md_name) = if sustained {
        (
            "sustained.csv",
            "sustained-amplification.csv",
            "sustained.md",
        )
    } else {
        ("compaction.csv", "amplification.csv", "compaction.md")
    };
    std::fs::write(a.out.join(csv_name), csv)?;
    std::fs::write(a.out.join(amp_name), amp)?;
    std::fs::write(a.out.join(md_name), &md)?;
    print!("{md}");
    plots(a, results, sustained)?;
    println!("wrote {}", a.out.display());
    Ok(())
}

fn bars(results: &[RunResult]) -> String {
    let find = |s: Strategy, w: &str| results.iter().find(|r| r.strategy == s && r.workload == w);
    let mut out = String::from("| bar | measured | |\n|---|---|---|\n");
    let mut row = |bar: &str, measured: String, met: bool| {
        let _ = writeln!(
            out,
            "| {bar} | {measured} | {} |",
            if met { "met" } else { "**not met**" }
        );
    };
    if let Some(r) = find(Strategy::Stcs, "overwrite") {
        let p = r.peak_space_amp();
        row("STCS overwrite peak SA ≥ 4", format!("{p:.2}"), p >= 4.0);
    }
    if let Some(r) = find(Strategy::Lcs, "overwrite") {
        let p = r.peak_space_amp();
        row("LCS overwrite peak SA ≤ 2.5", format!("{p:.2}"), p <= 2.5);
    }
    if let (Some(l), Some(s)) = (
        find(Strategy::Lcs, "append"),
        find(Strategy::Stcs, "append"),
    ) {
        let ratio = l.write_amp() / s.write_amp();
        row(
            "LCS WA ≥ 1.5 × STCS WA on append",
            format!(
                "{:.2} / {:.2} = {ratio:.2}× (without log {:.2} / {:.2} = {:.2}×)",
                l.write_amp(),
                s.write_amp(),
                l.write_amp_no_log(),
                s.write_amp_no_log(),
                l.write_amp_no_log() / s.write_amp_no_log()
            ),
            ratio >= 1.5,
        );
    }
    if let Some(r) = find(Strategy::IcsGoal, "overwrite") {
        let (p, w) = (r.peak_space_amp(), r.write_amp());
        row(
            "ICS goal 1.25 overwrite: peak SA ≤ 1.6 and WA ≤ 5.5",
            format!("peak SA {p:.2}, WA {w:.2}"),
            p <= 1.6 && w <= 5.5,
        );
    }
    if let Some(r) = find(Strategy::LcsDynamic, "overwrite") {
        let f = r.final_space_amp();
        row(
            "LCS-dynamic overwrite final SA ≤ 1.15",
            format!("{f:.2}"),
            f <= 1.15,
        );
    }
    for r in results
        .iter()
        .filter(|r| r.workload.starts_with("sustained"))
    {
        let (mean, _max, slope) = r.pending_trend();
        let half_min = r.write_secs / 2.0 / 60.0;
        let rise = slope * half_min;
        row(
            &format!("{} sustained: pending bounded", r.strategy.name()),
            format!("slope {slope:+.2}/min over the 2nd half (rise {rise:+.1} vs mean {mean:.1})"),
            rise <= (0.25 * mean).max(2.0),
        );
    }
    out
}

fn plots(a: &CompactionArgs, results: &[RunResult], sustained: bool) -> Result<()> {
    let mut workloads: Vec<&str> = Vec::new();
    for r in results {
        if !workloads.contains(&r.workload.as_str()) {
            workloads.push(&r.workload);
        }
    }
    for w in workloads {
        let rs: Vec<&RunResult> = results.iter().filter(|r| r.workload == w).collect();
        let series = |f: &dyn Fn(&RunResult, &Sample) -> f64| -> Vec<plot::XySeries> {
            rs.iter()
                .map(|r| plot::XySeries {
                    label: r.strategy.name().to_string(),
                    points: r.samples.iter().map(|s| (s.t_s, f(r, s))).collect(),
                })
                .collect()
        };
        let mut disk = series(&|_, s| s.disk_bytes as f64 / MB);
        if let Some(r) = rs.first() {
            disk.push(plot::XySeries {
                label: format!("live data ({})", r.strategy.name()),
                points: r
                    .samples
                    .iter()
                    .map(|s| (s.t_s, r.live_bytes(s) / MB))
                    .collect(),
            });
        }
        plot::xy_chart(
            &a.out.join(format!("compaction-disk-{w}")),
            &plot::XyChart {
                title: &format!("Disk usage over time: {w}"),
                x_label: "seconds",
                y_label: "sstable bytes on disk (MB)",
                series: &disk,
            },
        )?;
        plot::xy_chart(
            &a.out.join(format!("compaction-pending-{w}")),
            &plot::XyChart {
                title: &format!("Pending compactions: {w}"),
                x_label: "seconds",
                y_label: "pending compactions",
                series: &series(&|_, s| s.pending as f64),
            },
        )?;
        let leveled: Vec<plot::XySeries> = series(&|_, s| s.unleveled as f64)
            .into_iter()
            .zip(rs.iter())
            .filter(|(_, r)| r.strategy.is_leveled())
            .map(|(s, _)| s)
            .collect();
        if !leveled.is_empty() {
            plot::xy_chart(
                &a.out.join(format!("compaction-unleveled-{w}")),
                &plot::XyChart {
                    title: &format!("Unleveled (L0) sstables: {w}"),
                    x_label: "seconds",
                    y_label: "L0 sstables",
                    series: &leveled,
                },
            )?;
        }
        if sustained {
            plot::xy_chart(
                &a.out.join(format!("compaction-throughput-{w}")),
                &plot::XyChart {
                    title: &format!("Compaction throughput: {w}"),
                    x_label: "seconds",
                    y_label: "compaction output MB/s",
                    series: &series(&|_, s| s.compaction_bytes_per_s / MB),
                },
            )?;
        }
    }
    Ok(())
}

/// One sample read back from a `compaction.csv`: `(t_s, disk MB, live MB, pending,
/// unleveled, compaction MB/s)`.
type CsvPoint = (f64, f64, f64, f64, f64, f64);

/// One strategy's samples on one workload, read back from a `compaction.csv`.
struct CsvRun {
    strategy: String,
    workload: String,
    points: Vec<CsvPoint>,
}

/// Reads the `compaction.csv` files of `dirs` (comma-separated) and draws the charts of
/// [`plots`] into `a.out`, every run of a workload in one chart.
fn replot(a: &CompactionArgs, dirs: &str) -> Result<()> {
    let mut runs: Vec<CsvRun> = Vec::new();
    for dir in dirs.split(',').filter(|d| !d.trim().is_empty()) {
        // Sized runs write compaction.csv, sustained runs sustained.csv.
        let dir = Path::new(dir.trim());
        let path = ["compaction.csv", "sustained.csv"]
            .iter()
            .map(|f| dir.join(f))
            .find(|p| p.exists())
            .unwrap_or_else(|| dir.join("compaction.csv"));
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        for (n, line) in text.lines().enumerate().skip(1) {
            let f: Vec<&str> = line.split(',').collect();
            let num = |i: usize| -> Result<f64> {
                f.get(i)
                    .and_then(|v| v.parse::<f64>().ok())
                    .with_context(|| format!("{}:{}: field {i}", path.display(), n + 1))
            };
            let (Some(strategy), Some(workload)) = (f.first(), f.get(1)) else {
                bail!("{}:{}: short line", path.display(), n + 1);
            };
            let point = (
                num(2)?,
                num(3)? / MB,
                num(4)? / MB,
                num(5)?,
                num(7)?,
                num(8)? / MB,
            );
            match runs
                .iter_mut()
                .find(|r| r.strategy == *strategy && r.workload == *workload)
            {
                Some(r) => r.points.push(point),
                None => runs.push(CsvRun {
                    strategy: strategy.to_string(),
                    workload: workload.to_string(),
                    points: vec![point],
                }),
            }
        }
    }
    let mut workloads: Vec<String> = Vec::new();
    for r in &runs {
        if !workloads.contains(&r.workload) {
            workloads.push(r.workload.clone());
        }
    }
    for w in &workloads {
        let rs: Vec<&CsvRun> = runs.iter().filter(|r| &r.workload == w).collect();
        let series = |f: &dyn Fn(&CsvPoint) -> f64| -> Vec<plot::XySeries> {
            rs.iter()
                .map(|r| plot::XySeries {
                    label: r.strategy.clone(),
                    points: r.points.iter().map(|p| (p.0, f(p))).collect(),
                })
                .collect()
        };
        let mut disk = series(&|p| p.1);
        if let Some(r) = rs.first() {
            disk.push(plot::XySeries {
                label: format!("live data ({})", r.strategy),
                points: r.points.iter().map(|p| (p.0, p.2)).collect(),
            });
        }
        let chart = |name: &str, title: &str, y: &str, s: &[plot::XySeries]| {
            plot::xy_chart(
                &a.out.join(format!("compaction-{name}-{w}")),
                &plot::XyChart {
                    title: &format!("{title}: {w}"),
                    x_label: "seconds",
                    y_label: y,
                    series: s,
                },
            )
        };
        chart(
            "disk",
            "Disk usage over time",
            "sstable bytes on disk (MB)",
            &disk,
        )?;
        chart(
            "pending",
            "Pending compactions",
            "pending compactions",
            &series(&|p| p.3),
        )?;
        let leveled: Vec<plot::XySeries> = series(&|p| p.4)
            .into_iter()
            .filter(|s| s.label.starts_with("LCS"))
            .collect();
        if !leveled.is_empty() {
            chart(
                "unleveled",
                "Unleveled (L0) sstables",
                "L0 sstables",
                &leveled,
            )?;
        }
        if w.starts_with("sustained") {
            chart(
                "throughput",
                "Compaction throughput",
                "compaction output MB/s",
                &series(&|p| p.5),
            )?;
        }
    }
    println!(
        "charts of {} runs written to {}",
        runs.len(),
        a.out.display()
    );
    Ok(())
}
