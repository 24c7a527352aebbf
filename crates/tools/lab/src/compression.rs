//! `cairn lab compression`: every codec x chunk size on the same text corpus.
//!
//! The corpus is cut into 1 KiB `text` cells of the table `(a int, b int, c text,
//! PRIMARY KEY (a, b))`, spread over 10 partitions (contiguous runs of the corpus, `b`
//! increasing). For each codec and chunk size the 10 partitions are written with an
//! [`SSTableWriter`] (`finish` fsyncs) `reps` times, and the resulting sstable is opened fresh
//! and fully scanned `reps` times. A raw baseline compresses/decompresses the same corpus in
//! chunk-sized pieces with the bare [`Compressor`], so engine speeds can be given as a
//! percentage of what the codec alone does. A second baseline runs the bare codec on the
//! sstable's own data stream cut at the same chunk boundaries, one pass right before each
//! flush and each scan repetition, so that on a shared machine both sides of the comparison
//! meet the same contention.

use super::{corpus, fresh_dir, mean_std, plot};
use anyhow::{Context, Result};
use cairn_engine::metrics::{IoCounters, ReadKind};
use cairn_engine::model::clustering::{ClusteringLayout, Order};
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{
    Cell, ClusteringKey, ColumnData, DecoratedKey, LivenessInfo, Partition, PartitionPos, Row,
    Slice, Token,
};
use cairn_engine::schema::compression::{Codec, CompressionParams};
use cairn_engine::sstable::compression::Compressor;
use cairn_engine::sstable::reader::SSTable;
use cairn_engine::sstable::writer::{SSTableWriter, WriterOptions};
use cairn_engine::Wait;
use clap::Args;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Arguments of `cairn lab compression`.
#[derive(Args, Debug)]
pub struct CompressionArgs {
    /// Corpus file (default: the Debian changelogs under /usr/share/doc).
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Output directory.
    #[arg(long, default_value = "lab-out/compression")]
    out: PathBuf,
    /// Repetitions of each flush and each scan.
    #[arg(long, default_value_t = 10)]
    reps: usize,
    /// Corpus size in MiB.
    #[arg(long, default_value_t = 10)]
    mib: usize,
    /// Only these codecs (labels as in the report: none, lz4, snappy, deflate, zstd-1, ...),
    /// comma-separated; default all. For quick iterations; the docs' tables use all.
    #[arg(long, value_delimiter = ',')]
    codecs: Vec<String>,
    /// Only these chunk sizes in KiB (4, 16, 64), comma-separated; default all.
    #[arg(long, value_delimiter = ',')]
    chunk_kb: Vec<u32>,
}

const PARTITIONS: usize = 10;
const ROW_BYTES: usize = 1024;
const CHUNKS_KB: [u32; 3] = [4, 16, 64];

/// The codecs measured, in report order.
fn codecs() -> Vec<Codec> {
    let mut v = vec![Codec::None, Codec::Lz4, Codec::Snappy, Codec::Deflate];
    v.extend([1, 3, 5, 7, 9].map(|level| Codec::Zstd { level }));
    v
}

/// `(codec name, level)` for the CSV.
fn codec_name(c: Codec) -> (&'static str, String) {
    match c {
        Codec::None => ("none", String::new()),
        Codec::Lz4 => ("lz4", String::new()),
        Codec::Snappy => ("snappy", String::new()),
        Codec::Deflate => ("deflate", String::new()),
        Codec::Zstd { level } => ("zstd", level.to_string()),
    }
}

fn codec_label(c: Codec) -> String {
    match codec_name(c) {
        (n, l) if l.is_empty() => n.to_string(),
        (n, l) => format!("{n}-{l}"),
    }
}

/// One engine measurement (a CSV row).
struct EngineResult {
    codec: Codec,
    chunk_kb: u32,
    payload_bytes: u64,
    data_bytes: u64,
    flush_ms: (f64, f64),
    scan_ms: (f64, f64),
    stalls: u64,
    max_stall_us: f64,
    offset_bytes_per_chunk: f64,
}

/// One raw-codec measurement.
struct RawResult {
    codec: Codec,
    chunk_kb: u32,
    input_bytes: u64,
    compressed_bytes: u64,
    compress_mbps: f64,
    decompress_mbps: f64,
}

impl RawResult {
    fn ratio(&self) -> f64 {
        self.input_bytes as f64 / self.compressed_bytes.max(1) as f64
    }
}

fn ck(b: i32) -> Result<ClusteringKey> {
    let layout = ClusteringLayout {
        columns: vec![(CqlType::Int, Order::Asc)],
    };
    layout
        .encode_key(&[&b.to_be_bytes()])
        .map_err(|e| anyhow::anyhow!("encoding clustering key: {e:?}"))
}

/// Builds the 10 partitions (sorted in writer order) and returns them with the payload size.
fn build_partitions(corpus: &[u8]) -> Result<(Vec<(DecoratedKey, Partition)>, u64)> {
    let rows: Vec<&[u8]> = corpus.chunks(ROW_BYTES).collect();
    let per = rows.len().div_ceil(PARTITIONS).max(1);
    let mut parts = Vec::new();
    let mut payload = 0u64;
    for (a, group) in rows.chunks(per).enumerate() {
        let key = DecoratedKey::new((a as i32).to_be_bytes().to_vec().into());
        let mut p = Partition::default();
        for (b, chunk) in group.iter().enumerate() {
            let value = corpus::text(chunk);
            payload += value.len() as u64;
            p.rows.insert(
                ck(b as i32)?,
                Row {
                    marker: Some(LivenessInfo::live(1)),
                    deletion: None,
                    columns: vec![(
                        2,
                        ColumnData::Simple(Cell::live(1, value.into_bytes().into())),
                    )],
                },
            );
        }
        parts.push((key, p));
    }
    parts.sort_by(|x, y| x.0.cmp(&y.0));
    Ok((parts, payload))
}

/// Runs the lab.
pub fn run(args: CompressionArgs) -> Result<()> {
    let reps = args.reps.max(1);
    let corpus = corpus::load(args.corpus.as_deref(), args.mib << 20)?;
    println!("corpus: {} bytes", corpus.len());
    let (parts, payload_bytes) = build_partitions(&corpus)?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let work = args.out.join("work");

    let mut raw = Vec::new();
    let mut same = Vec::new();
    let mut results = Vec::new();
    for codec in codecs() {
        if !args.codecs.is_empty() && !args.codecs.contains(&codec_label(codec)) {
            continue;
        }
        for chunk_kb in CHUNKS_KB {
            if !args.chunk_kb.is_empty() && !args.chunk_kb.contains(&chunk_kb) {
                continue;
            }
            let r = measure_raw(codec, chunk_kb, &corpus, reps)?;
            let (e, sc) = measure_engine(codec, chunk_kb, &parts, payload_bytes, reps, &work)?;
            println!(
                "{:<8} chunk {:>2} KiB: ratio {:.3} (raw {:.3}), flush {:.1}±{:.1} ms, scan {:.1}±{:.1} ms, stalls {}, raw {:.0}/{:.0} MB/s",
                codec_label(codec),
                chunk_kb,
                payload_bytes as f64 / e.data_bytes as f64,
                r.ratio(),
                e.flush_ms.0,
                e.flush_ms.1,
                e.scan_ms.0,
                e.scan_ms.1,
                e.stalls,
                r.compress_mbps,
                r.decompress_mbps
            );
            raw.push(r);
            same.push(sc);
            results.push(e);
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    write_reports(&args.out, &results, &raw, &same)?;
    println!("wrote {}", args.out.display());
    Ok(())
}

/// Flush and scan through the engine's sstable writer and reader, each repetition right after
/// a pass of the raw codec over the sstable's own uncompressed data stream cut at the same
/// chunk boundaries (compression before each flush, decompression before each scan). On a
/// shared machine the two sides of every comparison thus see the same contention, instead of
/// the baseline running seconds apart from what it is compared with.
fn measure_engine(
    codec: Codec,
    chunk_kb: u32,
    parts: &[(DecoratedKey, Partition)],
    payload_bytes: u64,
    reps: usize,
    work: &Path,
) -> Result<(EngineResult, RawResult)> {
    let dir = work.join(format!("{}-{chunk_kb}", codec_label(codec)));
    let params = CompressionParams {
        codec,
        chunk_length: chunk_kb * 1024,
        crc_check_chance: 1.0,
    };
    let flush_once = || -> Result<(f64, cairn_engine::sstable::writer::WrittenSSTable)> {
        fresh_dir(&dir)?;
        let mut opts = WriterOptions::new(params.clone());
        opts.expected_partitions = parts.len() as u64;
        let start = Instant::now();
        let mut w = SSTableWriter::create(&dir, 1, opts, Arc::new(IoCounters::default()))?;
        for (k, p) in parts {
            w.write_partition(k, p)?;
        }
        let written = w.finish()?.context("the writer produced no sstable")?;
        Ok((start.elapsed().as_secs_f64() * 1e3, written))
    };
    // An untimed flush gives the data stream the raw baseline works on.
    flush_once()?;
    let stream = {
        let sst = SSTable::open(&dir, 1, Arc::new(IoCounters::default()))?;
        sst.read_range(
            &mut sst.cursor(ReadKind::Other, Wait::Allowed),
            0,
            sst.stats.uncompressed_length,
        )?
        .to_vec()
    };
    let mut raw = RawCodec::new(codec, chunk_kb, &stream)?;

    let mut flush = Vec::new();
    let mut stalls = 0;
    let mut max_stall = 0u64;
    let mut data_bytes = 0;
    let mut offset_bytes_per_chunk = 0.0;
    for _ in 0..reps {
        raw.compress_pass()?;
        let (ms, written) = flush_once()?;
        flush.push(ms);
        stalls += written.codec_stats.stalls;
        max_stall = max_stall.max(written.codec_stats.max_call_nanos);
        data_bytes = written.data_bytes;
        offset_bytes_per_chunk = written.offset_bytes_per_chunk;
    }
    let expected_rows: usize = parts.iter().map(|(_, p)| p.rows.len()).sum();
    let mut scan = Vec::new();
    for _ in 0..reps {
        raw.decompress_pass()?;
        let start = Instant::now();
        let sst = Arc::new(SSTable::open(&dir, 1, Arc::new(IoCounters::default()))?);
        let mut scanner = sst.scan(
            &PartitionPos::TokenStart(Token::MIN),
            ReadKind::Query,
            Wait::Allowed,
        );
        let mut rows = 0;
        // One read-ahead cursor for the whole scan, as the engine's range scans use.
        let mut cursor = Some(sst.scan_cursor(ReadKind::Query, Wait::Allowed));
        while let Some(entry) = scanner.next_entry()? {
            let cur = cursor
                .take()
                .unwrap_or_else(|| sst.scan_cursor(ReadKind::Query, Wait::Allowed));
            let mut it = sst.rows(&entry, &Slice::all(), false, cur);
            for r in it.by_ref() {
                r?;
                rows += 1;
            }
            cursor = Some(it.into_cursor());
        }
        scan.push(start.elapsed().as_secs_f64() * 1e3);
        anyhow::ensure!(
            rows == expected_rows,
            "scan saw {rows} rows, expected {expected_rows}"
        );
    }
    let engine = EngineResult {
        codec,
        chunk_kb,
        payload_bytes,
        data_bytes,
        flush_ms: mean_std(&flush),
        scan_ms: mean_std(&scan),
        stalls,
        // The largest single compress call, reported only when it was a stall.
        max_stall_us: if stalls > 0 {
            max_stall as f64 / 1e3
        } else {
            0.0
        },
        offset_bytes_per_chunk,
    };
    Ok((engine, raw.finish()?))
}

/// The bare codec over an input cut into chunk-sized pieces, timed pass by pass so the passes
/// can be interleaved with what they are compared with.
struct RawCodec<'a> {
    codec: Codec,
    chunk_kb: u32,
    input: &'a [u8],
    c: Compressor,
    compressed: Vec<Vec<u8>>,
    /// Decompression target, reused: the bare codec call, with no allocation or zero-fill per
    /// chunk (the engine's scan pays neither either).
    out: Vec<u8>,
    compress_secs: f64,
    compress_passes: usize,
    decompress_secs: f64,
    decompress_passes: usize,
}

impl<'a> RawCodec<'a> {
    fn new(codec: Codec, chunk_kb: u32, input: &'a [u8]) -> Result<Self> {
        let chunk = chunk_kb as usize * 1024;
        let mut raw = RawCodec {
            codec,
            chunk_kb,
            input,
            c: Compressor::new(codec),
            compressed: Vec::new(),
            out: vec![0u8; chunk],
            compress_secs: 0.0,
            compress_passes: 0,
            decompress_secs: 0.0,
            decompress_passes: 0,
        };
        // Untimed: fills `compressed` so decompression passes can run first, and checks the
        // round trip.
        raw.compress_into_place()?;
        for (piece, comp) in input.chunks(chunk).zip(&raw.compressed) {
            let dst = raw.out.get_mut(..piece.len()).unwrap_or_default();
            raw.c
                .decompress_into(comp, dst)
                .map_err(|e| anyhow::anyhow!("raw decompress failed: {e:?}"))?;
            anyhow::ensure!(&*dst == piece, "raw round trip differs");
        }
        Ok(raw)
    }

    fn chunk(&self) -> usize {
        self.chunk_kb as usize * 1024
    }

    fn compress_into_place(&mut self) -> Result<()> {
        let chunk = self.chunk();
        self.compressed.clear();
        for piece in self.input.chunks(chunk) {
            let mut out = Vec::with_capacity(piece.len() + 64);
            self.c.compress(piece, &mut out)?;
            self.compressed.push(out);
        }
        Ok(())
    }

    /// One timed compression pass over the whole input.
    fn compress_pass(&mut self) -> Result<()> {
        let start = Instant::now();
        self.compress_into_place()?;
        self.compress_secs += start.elapsed().as_secs_f64();
        self.compress_passes += 1;
        Ok(())
    }

    /// One timed decompression pass over the whole input.
    fn decompress_pass(&mut self) -> Result<()> {
        let chunk = self.chunk();
        let start = Instant::now();
        for (piece, comp) in self.input.chunks(chunk).zip(&self.compressed) {
            let dst = self.out.get_mut(..piece.len()).unwrap_or_default();
            self.c
                .decompress_into(comp, dst)
                .map_err(|e| anyhow::anyhow!("raw decompress failed: {e:?}"))?;
        }
        self.decompress_secs += start.elapsed().as_secs_f64();
        self.decompress_passes += 1;
        Ok(())
    }

    fn finish(self) -> Result<RawResult> {
        let mb = self.input.len() as f64 / 1e6;
        Ok(RawResult {
            codec: self.codec,
            chunk_kb: self.chunk_kb,
            input_bytes: self.input.len() as u64,
            compressed_bytes: self.compressed.iter().map(|c| c.len() as u64).sum(),
            compress_mbps: mb * self.compress_passes as f64 / self.compress_secs.max(1e-9),
            decompress_mbps: mb * self.decompress_passes as f64 / self.decompress_secs.max(1e-9),
        })
    }
}

/// The bare codec on the corpus cut into chunk-sized pieces.
fn measure_raw(codec: Codec, chunk_kb: u32, corpus: &[u8], reps: usize) -> Result<RawResult> {
    let mut raw = RawCodec::new(codec, chunk_kb, corpus)?;
    for _ in 0..reps {
        raw.compress_pass()?;
    }
    for _ in 0..reps {
        raw.decompress_pass()?;
    }
    raw.finish()
}

fn write_file(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

fn write_reports(
    out: &Path,
    results: &[EngineResult],
    raw: &[RawResult],
    same: &[RawResult],
) -> Result<()> {
    let mut csv = String::from(
        "codec,level,chunk_kb,payload_bytes,data_bytes,ratio,flush_ms_mean,flush_ms_std,scan_ms_mean,scan_ms_std,stalls,max_stall_us,offset_bytes_per_chunk\n",
    );
    for r in results {
        let (name, level) = codec_name(r.codec);
        writeln!(
            csv,
            "{name},{level},{},{},{},{:.4},{:.3},{:.3},{:.3},{:.3},{},{:.1},{:.3}",
            r.chunk_kb,
            r.payload_bytes,
            r.data_bytes,
            r.payload_bytes as f64 / r.data_bytes as f64,
            r.flush_ms.0,
            r.flush_ms.1,
            r.scan_ms.0,
            r.scan_ms.1,
            r.stalls,
            r.max_stall_us,
            r.offset_bytes_per_chunk
        )?;
    }
    write_file(&out.join("compression.csv"), &csv)?;

    let mut rcsv = String::from(
        "input,codec,level,chunk_kb,input_bytes,compressed_bytes,ratio,compress_mb_s,decompress_mb_s\n",
    );
    let tagged = raw
        .iter()
        .map(|r| ("corpus", r))
        .chain(same.iter().map(|r| ("sstable-stream", r)));
    for (input, r) in tagged {
        let (name, level) = codec_name(r.codec);
        writeln!(
            rcsv,
            "{input},{name},{level},{},{},{},{:.4},{:.1},{:.1}",
            r.chunk_kb,
            r.input_bytes,
            r.compressed_bytes,
            r.ratio(),
            r.compress_mbps,
            r.decompress_mbps
        )?;
    }
    write_file(&out.join("compression-raw.csv"), &rcsv)?;

    let mut md = String::from(
        "| codec | chunk KiB | ratio | raw ratio | ratio % raw | flush ms (±) | flush MB/s | % raw compress | scan ms (±) | scan MB/s | % raw decompress | stalls | max stall µs | offset B/chunk |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for (r, w) in results.iter().zip(raw) {
        let ratio = r.payload_bytes as f64 / r.data_bytes as f64;
        let mb = r.payload_bytes as f64 / 1e6;
        let flush_mbps = mb / (r.flush_ms.0 / 1e3).max(1e-9);
        let scan_mbps = mb / (r.scan_ms.0 / 1e3).max(1e-9);
        writeln!(
            md,
            "| {} | {} | {:.3} | {:.3} | {:.1}% | {:.1} (±{:.1}) | {:.0} | {:.1}% | {:.1} (±{:.1}) | {:.0} | {:.1}% | {} | {:.0} | {:.2} |",
            codec_label(r.codec),
            r.chunk_kb,
            ratio,
            w.ratio(),
            100.0 * ratio / w.ratio(),
            r.flush_ms.0,
            r.flush_ms.1,
            flush_mbps,
            100.0 * flush_mbps / w.compress_mbps,
            r.scan_ms.0,
            r.scan_ms.1,
            scan_mbps,
            100.0 * scan_mbps / w.decompress_mbps,
            r.stalls,
            r.max_stall_us,
            r.offset_bytes_per_chunk
        )?;
    }
    md.push_str(
        "\nratio = payload bytes / data-file bytes; raw = the bare codec on the same corpus in chunk-sized pieces. \
         Flush includes serialization, index, bloom filter and fsync; scan opens the sstable fresh and reads every row (page cache warm). stalls = compress calls of 1 ms or more, summed over all reps; max stall = the longest compress call when there was a stall.\n",
    );
    md.push_str(
        "\n### Against the raw codec on the same chunks\n\nThe raw codec on the sstable's own uncompressed data stream, cut at the same chunk boundaries: what the engine adds on top of the codec (CRCs, chunk offsets, serialization, index, bloom filter, fsync).\n\n\
         | codec | chunk KiB | engine ratio vs raw (stream bytes / file bytes) | flush MB/s (stream) | raw compress MB/s | flush % raw | scan MB/s (stream) | raw decompress MB/s | scan % raw |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for (r, w) in results.iter().zip(same) {
        let stream_mb = w.input_bytes as f64 / 1e6;
        let engine_ratio = w.input_bytes as f64 / r.data_bytes.max(1) as f64;
        let flush_mbps = stream_mb / (r.flush_ms.0 / 1e3).max(1e-9);
        let scan_mbps = stream_mb / (r.scan_ms.0 / 1e3).max(1e-9);
        writeln!(
            md,
            "| {} | {} | {:.1}% ({:.3} vs {:.3}) | {:.0} | {:.0} | {:.1}% | {:.0} | {:.0} | {:.1}% |",
            codec_label(r.codec),
            r.chunk_kb,
            100.0 * engine_ratio / w.ratio(),
            engine_ratio,
            w.ratio(),
            flush_mbps,
            w.compress_mbps,
            100.0 * flush_mbps / w.compress_mbps,
            scan_mbps,
            w.decompress_mbps,
            100.0 * scan_mbps / w.decompress_mbps,
        )?;
    }
    write_file(&out.join("compression.md"), &md)?;

    // Charts: one group per codec, one bar per chunk size.
    let categories: Vec<String> = codecs().into_iter().map(codec_label).collect();
    let series_of = |f: &dyn Fn(&EngineResult) -> f64| -> Vec<plot::Series> {
        CHUNKS_KB
            .iter()
            .map(|&kb| plot::Series {
                label: format!("{kb} KiB chunks"),
                values: codecs()
                    .into_iter()
                    .map(|c| {
                        results
                            .iter()
                            .find(|r| r.codec == c && r.chunk_kb == kb)
                            .map(f)
                            .unwrap_or(0.0)
                    })
                    .collect(),
            })
            .collect()
    };
    let charts: [(&str, &str, &str, Vec<plot::Series>); 3] = [
        (
            "compression-ratio",
            "Compression ratio (higher is better)",
            "payload / on-disk bytes",
            series_of(&|r| r.payload_bytes as f64 / r.data_bytes as f64),
        ),
        (
            "compression-flush",
            "Flush time (lower is better)",
            "ms",
            series_of(&|r| r.flush_ms.0),
        ),
        (
            "compression-scan",
            "Full scan time (lower is better)",
            "ms",
            series_of(&|r| r.scan_ms.0),
        ),
    ];
    for (file, title, y, series) in &charts {
        plot::bar_chart(
            &out.join(file),
            &plot::BarChart {
                title,
                y_label: y,
                categories: &categories,
                series,
            },
        )?;
    }
    Ok(())
}
