//! `cairn lab ...`: reproducible measurements of the storage engine.
//!
//! Each lab writes a CSV file, a markdown table and PNG + SVG charts into its output
//! directory and prints progress lines as it goes.

pub mod backup;
pub mod cache;
pub mod chunk_size;
pub mod compaction;
pub mod compression;
pub mod corpus;
pub mod plot;
pub mod sim;
pub mod write;

use clap::Subcommand;

/// The available labs.
#[derive(Subcommand, Debug)]
pub enum LabCommand {
    /// Codec x chunk size: flush time, on-disk size, scan time, stalls.
    Compression(compression::CompressionArgs),
    /// Chunk size vs bytes read per small-partition read and metadata memory.
    ChunkSize(chunk_size::ChunkSizeArgs),
    /// Compaction strategies' write and space amplification (seeds 000, 003).
    Compaction(compaction::CompactionArgs),
    /// Embedded write throughput and CPU per insert, periodic and batch commitlog modes.
    Write(write::WriteArgs),
    /// Seed 004's row-cache experiment through CQL on a real node: head reads while ten
    /// writers prepend rows, flushes and a forced invalidation; CPU per cached SELECT.
    Cache(cache::CacheArgs),
    /// Snapshot of a large table and refresh speed against the disk (issue 21).
    Backup(backup::BackupArgs),
}

/// Runs one lab.
pub fn run(cmd: LabCommand) -> anyhow::Result<()> {
    match cmd {
        LabCommand::Compression(a) => compression::run(a),
        LabCommand::ChunkSize(a) => chunk_size::run(a),
        LabCommand::Write(a) => write::run(a),
        LabCommand::Compaction(a) => compaction::run(a),
        LabCommand::Backup(a) => backup::run(a),
        LabCommand::Cache(a) => cache::run(a),
    }
}

/// Mean and (sample) standard deviation.
pub fn mean_std(xs: &[f64]) -> (f64, f64) {
    if xs.is_empty() {
        return (0.0, 0.0);
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// A fresh, empty directory (removed first if it exists).
pub fn fresh_dir(path: &std::path::Path) -> anyhow::Result<()> {
    if path.exists() {
        std::fs::remove_dir_all(path)
            .map_err(|e| anyhow::anyhow!("removing {}: {e}", path.display()))?;
    }
    std::fs::create_dir_all(path)
        .map_err(|e| anyhow::anyhow!("creating {}: {e}", path.display()))?;
    Ok(())
}
