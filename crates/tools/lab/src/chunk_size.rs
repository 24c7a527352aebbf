//! `cairn lab chunk-size`: how the compression chunk size trades read amplification for
//! metadata memory with small partitions.
//!
//! Small single-row partitions (300 B – 1 KiB of corpus text each) are written through a
//! [`Database`] into four LZ4 tables with chunk sizes 1, 4, 16 and 64 KiB and flushed to
//! sstables. Then uniform random single-partition reads run against each table, and the
//! table's I/O counters give bytes, chunks and index pages read per read. The in-memory
//! metadata (chunk offsets + index summary + bloom filter) is reported per GiB of data.
//!
//! Those reads run without a cache. Then the database is reopened with a row cache (so its
//! index-page cache is on) and the same reads run twice from the sstables, bypassing the row
//! cache: the first pass warms the index pages, the second gives bytes read per read with
//! the index-page cache warm (`bytes_read_per_read_warm_index`): the data chunk alone.

use super::{corpus, fresh_dir, plot};
use anyhow::{Context, Result};
use cairn_engine::model::clustering::{ClusteringLayout, Order};
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{Cell, ColumnData, DecoratedKey, LivenessInfo, Mutation, Partition, Row};
use cairn_engine::schema::compression::{Codec, CompressionParams};
use cairn_engine::schema::{ColumnKind, TableSchema};
use cairn_engine::{Database, DatabaseConfig, ReadCommand, Wait};
use clap::Args;
use rand::{Rng, SeedableRng};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Arguments of `cairn lab chunk-size`.
#[derive(Args, Debug)]
pub struct ChunkSizeArgs {
    /// Output directory.
    #[arg(long, default_value = "lab-out/chunk-size")]
    out: PathBuf,
    /// Data per table in MiB (payload).
    #[arg(long, default_value_t = 64)]
    mib: usize,
    /// Random reads per table.
    #[arg(long, default_value_t = 20000)]
    reads: usize,
    /// Corpus file (default: the Debian changelogs under /usr/share/doc).
    #[arg(long)]
    corpus: Option<PathBuf>,
}

const CHUNKS_KB: [u32; 4] = [1, 4, 16, 64];
const KEYSPACE: &str = "lab";
const GIB: f64 = (1u64 << 30) as f64;
/// The row cache of the warm-index passes: 20% of it (the index pages' share) holds every
/// index page of the four tables at the default size many times over.
const WARM_CACHE_BYTES: usize = 256 << 20;

/// One table's measurements.
struct ChunkResult {
    chunk_kb: u32,
    reads: usize,
    partitions: usize,
    bytes_read_per_read: f64,
    /// The same reads with the index-page cache warm.
    bytes_read_per_read_warm_index: f64,
    /// Index pages read per read with the cache warm (0 when it holds them all).
    index_pages_per_read_warm: f64,
    chunks_per_read: f64,
    index_pages_per_read: f64,
    partition_bytes_mean: f64,
    /// Mean text payload per partition.
    payload_bytes_mean: f64,
    metadata_bytes_per_gib: f64,
    offsets_per_gib: f64,
    summary_per_gib: f64,
    bloom_per_gib: f64,
    data_bytes: u64,
    uncompressed_bytes: u64,
    sstables: usize,
}

fn schema(name: &str, chunk_kb: u32) -> TableSchema {
    let mut s = TableSchema::new(KEYSPACE, name)
        .with_column("a", CqlType::Int, ColumnKind::PartitionKey)
        .with_clustering("b", CqlType::Int, Order::Asc)
        .with_column("c", CqlType::Text, ColumnKind::Regular);
    s.options.compression = CompressionParams {
        codec: Codec::Lz4,
        chunk_length: chunk_kb * 1024,
        crc_check_chance: 1.0,
    };
    s
}

fn pk(a: i32) -> DecoratedKey {
    DecoratedKey::new(a.to_be_bytes().to_vec().into())
}

/// Runs the lab.
pub fn run(args: ChunkSizeArgs) -> Result<()> {
    let corpus = corpus::load(args.corpus.as_deref(), (args.mib << 20).max(1 << 20))?;
    println!("corpus: {} bytes", corpus.len());
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);

    // Partition payloads: consecutive corpus slices of 300..=1024 bytes, wrapping around.
    let target = args.mib << 20;
    let mut values = Vec::new();
    let (mut pos, mut total) = (0usize, 0usize);
    while total < target {
        let len = rng.gen_range(300..=1024usize);
        if pos + len > corpus.len() {
            pos = 0;
        }
        let end = (pos + len).min(corpus.len());
        values.push(corpus::text(&corpus[pos..end]));
        total += end - pos;
        pos = end;
    }
    println!("{} partitions, {} payload bytes", values.len(), total);

    let db_dir = args.out.join("db");
    fresh_dir(&db_dir)?;
    let mut cfg = DatabaseConfig::new(&db_dir);
    cfg.commitlog_segment_size = 32 << 20;
    let db = Database::open(cfg)?;
    let ck = ClusteringLayout {
        columns: vec![(CqlType::Int, Order::Asc)],
    }
    .encode_key(&[&0i32.to_be_bytes()])
    .map_err(|e| anyhow::anyhow!("encoding clustering key: {e:?}"))?;

    let mut results = Vec::new();
    // Each table's read keys, for the warm-index passes.
    let mut keys: Vec<Vec<i32>> = Vec::new();
    for chunk_kb in CHUNKS_KB {
        let name = format!("t{chunk_kb}k");
        let id = db.create_table(schema(&name, chunk_kb))?.schema().id;
        for (a, v) in values.iter().enumerate() {
            let mut p = Partition::default();
            p.rows.insert(
                ck.clone(),
                Row {
                    marker: Some(LivenessInfo::live(1)),
                    deletion: None,
                    columns: vec![(
                        2,
                        ColumnData::Simple(Cell::live(1, v.clone().into_bytes().into())),
                    )],
                },
            );
            db.apply(
                vec![Mutation {
                    table: id,
                    key: pk(a as i32),
                    update: p,
                }],
                Wait::Allowed,
            )?;
        }
        db.flush(KEYSPACE, &name)?;
        let table = db.table(KEYSPACE, &name).context("table vanished")?;
        let before = table.stats()?;
        let mut found = 0usize;
        let picks: Vec<i32> = (0..args.reads)
            .map(|_| rng.gen_range(0..values.len()) as i32)
            .collect();
        for &a in &picks {
            if db
                .read(KEYSPACE, &name, &pk(a), &ReadCommand::all(0, Wait::Allowed))?
                .is_some()
            {
                found += 1;
            }
        }
        anyhow::ensure!(
            found == args.reads,
            "only {found} of {} reads found their partition",
            args.reads
        );
        let after = table.stats()?;
        let reads = args.reads.max(1) as f64;
        // Per GiB of payload, which is the same for every table (the sstables' uncompressed
        // length varies with the chunk size).
        let data_gib = total.max(1) as f64 / GIB;
        let (offsets, summary, bloom) = after.metadata_memory;
        let r = ChunkResult {
            chunk_kb,
            reads: args.reads,
            partitions: values.len(),
            bytes_read_per_read: (after.query_bytes_read - before.query_bytes_read) as f64 / reads,
            bytes_read_per_read_warm_index: 0.0,
            index_pages_per_read_warm: 0.0,
            chunks_per_read: (after.chunks_read - before.chunks_read) as f64 / reads,
            index_pages_per_read: (after.index_pages_read - before.index_pages_read) as f64 / reads,
            // Serialized partition size, from the sstables' partition-size histogram.
            partition_bytes_mean: after.partition_sizes.mean() as f64,
            payload_bytes_mean: total as f64 / values.len() as f64,
            metadata_bytes_per_gib: (offsets + summary + bloom) as f64 / data_gib,
            offsets_per_gib: offsets as f64 / data_gib,
            summary_per_gib: summary as f64 / data_gib,
            bloom_per_gib: bloom as f64 / data_gib,
            data_bytes: after.live_disk_bytes,
            uncompressed_bytes: after.uncompressed_data_bytes,
            sstables: after.sstable_count,
        };
        println!(
            "chunk {:>2} KiB: {:.0} B/read, {:.2} chunks/read, {:.2} index pages/read, partition {:.0} B, metadata {:.0} B/GiB ({} sstables)",
            chunk_kb, r.bytes_read_per_read, r.chunks_per_read, r.index_pages_per_read, r.partition_bytes_mean, r.metadata_bytes_per_gib, r.sstables
        );
        results.push(r);
        keys.push(picks);
    }
    drop(db);

    // The same reads with the index-page cache warm.
    let mut cfg = DatabaseConfig::new(&db_dir);
    cfg.row_cache_bytes = WARM_CACHE_BYTES;
    let db = Database::open(cfg)?;
    for (r, picks) in results.iter_mut().zip(&keys) {
        let name = format!("t{}k", r.chunk_kb);
        let table = db.table(KEYSPACE, &name).context("table vanished")?;
        let read_all = || -> Result<()> {
            // From the sstables, past the row cache (which would answer repeated reads), with
            // the index-page cache.
            let mut snapshot = table.snapshot_uncached();
            snapshot.index_cache = true;
            for &a in picks {
                anyhow::ensure!(
                    snapshot
                        .read(&pk(a), &ReadCommand::all(0, Wait::Allowed))?
                        .is_some(),
                    "partition {a} vanished"
                );
            }
            Ok(())
        };
        read_all()?;
        let before = table.stats()?;
        read_all()?;
        let after = table.stats()?;
        let reads = picks.len().max(1) as f64;
        r.bytes_read_per_read_warm_index =
            (after.query_bytes_read - before.query_bytes_read) as f64 / reads;
        r.index_pages_per_read_warm =
            (after.index_pages_read - before.index_pages_read) as f64 / reads;
        println!(
            "chunk {:>2} KiB, index pages cached: {:.0} B/read, {:.3} index pages/read",
            r.chunk_kb, r.bytes_read_per_read_warm_index, r.index_pages_per_read_warm
        );
    }
    drop(db);
    let _ = std::fs::remove_dir_all(&db_dir);
    write_reports(&args.out, &results)?;
    println!("wrote {}", args.out.display());
    Ok(())
}

fn write_reports(out: &Path, results: &[ChunkResult]) -> Result<()> {
    let mut csv = String::from(
        "chunk_kb,reads,bytes_read_per_read,partition_bytes_mean,metadata_bytes_per_gib,chunks_per_read,index_pages_per_read,payload_bytes_mean,offsets_bytes_per_gib,summary_bytes_per_gib,bloom_bytes_per_gib,partitions,live_disk_bytes,uncompressed_data_bytes,sstables,bytes_read_per_read_warm_index\n",
    );
    let mut md = String::from(
        "| chunk KiB | reads | bytes read / read | bytes read / read, index pages cached | chunks / read | index pages / read | partition bytes (mean) | read amplification | metadata B / GiB | offsets B / GiB | summary B / GiB | bloom B / GiB |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in results {
        writeln!(
            csv,
            "{},{},{:.1},{:.1},{:.0},{:.3},{:.3},{:.1},{:.0},{:.0},{:.0},{},{},{},{},{:.1}",
            r.chunk_kb,
            r.reads,
            r.bytes_read_per_read,
            r.partition_bytes_mean,
            r.metadata_bytes_per_gib,
            r.chunks_per_read,
            r.index_pages_per_read,
            r.payload_bytes_mean,
            r.offsets_per_gib,
            r.summary_per_gib,
            r.bloom_per_gib,
            r.partitions,
            r.data_bytes,
            r.uncompressed_bytes,
            r.sstables,
            r.bytes_read_per_read_warm_index
        )?;
        writeln!(
            md,
            "| {} | {} | {:.0} | {:.0} | {:.2} | {:.2} | {:.0} | {:.1}x | {:.0} | {:.0} | {:.0} | {:.0} |",
            r.chunk_kb,
            r.reads,
            r.bytes_read_per_read,
            r.bytes_read_per_read_warm_index,
            r.chunks_per_read,
            r.index_pages_per_read,
            r.partition_bytes_mean,
            r.bytes_read_per_read / r.partition_bytes_mean.max(1.0),
            r.metadata_bytes_per_gib,
            r.offsets_per_gib,
            r.summary_per_gib,
            r.bloom_per_gib
        )?;
    }
    md.push_str(
        "\nbytes read / read = query bytes read (data chunks + index pages) per uniform random single-partition read, no cache; \
         index pages cached = the same reads again with the index-page cache warm (the row cache bypassed); \
         metadata = chunk offsets + index summary + bloom filter, per GiB of payload (text) data.\n",
    );
    std::fs::write(out.join("chunk-size.csv"), csv).context("writing chunk-size.csv")?;
    std::fs::write(out.join("chunk-size.md"), md).context("writing chunk-size.md")?;

    let xs: Vec<f64> = results.iter().map(|r| r.chunk_kb as f64).collect();
    plot::line_chart(
        &out.join("chunk-size-read"),
        &plot::LineChart {
            title: "Bytes read per small-partition read",
            x_label: "chunk KiB (log scale)",
            y_label: "bytes",
            xs: &xs,
            series: &[
                plot::Series {
                    label: "bytes read / read".into(),
                    values: results.iter().map(|r| r.bytes_read_per_read).collect(),
                },
                plot::Series {
                    label: "bytes read / read, index pages cached".into(),
                    values: results
                        .iter()
                        .map(|r| r.bytes_read_per_read_warm_index)
                        .collect(),
                },
                plot::Series {
                    label: "partition bytes (mean)".into(),
                    values: results.iter().map(|r| r.partition_bytes_mean).collect(),
                },
            ],
        },
    )?;
    plot::line_chart(
        &out.join("chunk-size-metadata"),
        &plot::LineChart {
            title: "In-memory metadata per GiB of data",
            x_label: "chunk KiB (log scale)",
            y_label: "KiB per GiB",
            xs: &xs,
            series: &[
                plot::Series {
                    label: "total".into(),
                    values: results
                        .iter()
                        .map(|r| r.metadata_bytes_per_gib / 1024.0)
                        .collect(),
                },
                plot::Series {
                    label: "chunk offsets".into(),
                    values: results.iter().map(|r| r.offsets_per_gib / 1024.0).collect(),
                },
                plot::Series {
                    label: "summary".into(),
                    values: results.iter().map(|r| r.summary_per_gib / 1024.0).collect(),
                },
                plot::Series {
                    label: "bloom".into(),
                    values: results.iter().map(|r| r.bloom_per_gib / 1024.0).collect(),
                },
            ],
        },
    )?;
    Ok(())
}
