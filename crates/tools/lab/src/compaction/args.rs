//! The options of `cairn lab compaction`, and the names every piece of the lab shares.

use clap::Args;
use std::path::PathBuf;

/// A megabyte (10^6 B), the lab's unit for rates and sizes.
pub(super) const MB: f64 = 1e6;
/// The lab's keyspace and table.
pub(super) const KEYSPACE: &str = "lab";
pub(super) const TABLE: &str = "c";

/// Options of `cairn lab compaction`.
#[derive(Args, Debug)]
pub struct CompactionArgs {
    /// Output directory.
    #[arg(long, default_value = "lab-out/compaction")]
    pub(super) out: PathBuf,
    /// Workloads, comma-separated: append, overwrite, write-delete, timeseries, or all.
    #[arg(long, default_value = "all")]
    pub(super) workloads: String,
    /// Strategies, comma-separated: stcs, lcs, lcs-dynamic, ics, ics-goal, twcs, or all.
    /// TWCS runs only on timeseries, and timeseries only with TWCS and STCS, unless
    /// --all-pairs.
    #[arg(long, default_value = "all")]
    pub(super) strategies: String,
    /// Run every selected strategy on every selected workload.
    #[arg(long)]
    pub(super) all_pairs: bool,
    /// Smaller sizes (a few minutes in all).
    #[arg(long)]
    pub(super) quick: bool,
    /// User write rate in MB/s (10^6 B); 0 = half the flush capacity measured at the start.
    #[arg(long, default_value_t = 0.0)]
    pub(super) rate_mb: f64,
    /// Overwrite dataset / write-delete key population, MB (default 200; quick 50).
    #[arg(long)]
    pub(super) dataset_mb: Option<u64>,
    /// Times the overwrite dataset is written in all (default 11; quick 5).
    #[arg(long)]
    pub(super) passes: Option<u32>,
    /// MB of new keys in append (default 1000; quick 200).
    #[arg(long)]
    pub(super) append_mb: Option<u64>,
    /// MB of operations in write-delete (default 400; quick 100).
    #[arg(long)]
    pub(super) write_delete_mb: Option<u64>,
    /// MB written in timeseries (default 400; quick 100).
    #[arg(long)]
    pub(super) timeseries_mb: Option<u64>,
    /// Virtual one-minute TWCS windows the timeseries run spans.
    #[arg(long, default_value_t = 20)]
    pub(super) ts_windows: u32,
    /// TTL of timeseries rows, in windows.
    #[arg(long, default_value_t = 4)]
    pub(super) ts_ttl_windows: u32,
    /// Memtable flush threshold, MiB.
    #[arg(long, default_value_t = 10)]
    pub(super) memtable_mb: usize,
    /// `sstable_size_in_mb` of LCS and ICS.
    #[arg(long, default_value_t = 10)]
    pub(super) sstable_mb: u32,
    /// Value bytes per row.
    #[arg(long, default_value_t = 1024)]
    pub(super) value_bytes: usize,
    /// `min_sstable_size` (bytes) for the size tiers of STCS, ICS, LCS's L0 and TWCS.
    #[arg(long, default_value_t = 1 << 20)]
    pub(super) min_sstable_size: u64,
    /// Seconds to let compaction finish after the writes before giving up.
    #[arg(long, default_value_t = 300)]
    pub(super) settle_secs: u64,
    /// Sustained mode: write-delete (and timeseries for TWCS) for this many seconds per
    /// strategy, reporting the trend of pending compactions, instead of the sized runs.
    #[arg(long)]
    pub(super) sustained: Option<u64>,
    /// Also run the engine's pure simulator on the overwrite workload and print it.
    #[arg(long)]
    pub(super) simulate: bool,
    /// Instead of running anything, redraw the charts into --out from the `compaction.csv`
    /// (or `sustained.csv`) of earlier runs (comma-separated output directories), e.g. runs
    /// made one strategy at a time.
    #[arg(long)]
    pub(super) replot: Option<String>,
    /// MB written unpaced, without compaction, to measure the flush capacity (default 400;
    /// quick 200).
    #[arg(long)]
    pub(super) calibrate_mb: Option<u64>,
}
