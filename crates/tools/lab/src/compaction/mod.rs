//! `cairn lab compaction`: write and space amplification of the compaction strategies
//! (seeds 000 and 003), measured on the real engine.
//!
//! Each run opens a fresh embedded [`Database`](cairn_engine::Database) with one table
//! `(a int, b int, c blob, PRIMARY KEY (a, b))` under one strategy, writes one workload at a
//! paced rate, and samples the table every 0.5 s:
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
//!
//! The pieces: `args` (the options and shared names), `setup` (strategies, workloads,
//! sizes, schema and database configuration), `clock`, `workload` (the operations and
//! their live units), `measure` (samples and amplification figures), `run` (the
//! calibration and one run on the real engine), `simulate` (the pure simulator beside
//! it), `report` (CSVs, markdown, charts) and `replot`; [`run()`](fn@run) here only
//! dispatches.

mod args;
mod clock;
mod measure;
mod replot;
mod report;
mod run;
mod setup;
mod simulate;
mod workload;

pub use args::CompactionArgs;

use anyhow::{Context, Result};
use args::MB;
use replot::replot;
use report::write_outputs;
use run::{calibrate, pairs, run_one};
use setup::{parse_list, Sizes, Strategy, Workload};
use simulate::simulate;
use std::fmt::Write as _;

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
