//! Development aid: the lab's LZ4/Snappy full scan against the raw codec on the sstable's own
//! chunks, interleaved, reporting the minimum and median of thread CPU time and wall time (so
//! contention from other processes on a shared machine mostly cancels out).
//!
//! `cargo run --release -p cairn-lab --example scan_profile -- CORPUS_FILE [codec] [chunk_kb] [reps]`

use bytes::Bytes;
use cairn_engine::metrics::{IoCounters, ReadKind};
use cairn_engine::model::clustering::{ClusteringLayout, Order};
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{
    Cell, ColumnData, DecoratedKey, LivenessInfo, Partition, PartitionPos, Row, Slice, Token,
};
use cairn_engine::schema::compression::{Codec, CompressionParams};
use cairn_engine::sstable::compression::Compressor;
use cairn_engine::sstable::reader::SSTable;
use cairn_engine::sstable::writer::{SSTableWriter, WriterOptions};
use cairn_engine::Wait;
use std::sync::Arc;
use std::time::Instant;

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn thread_cpu() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn stats(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (v[0], v[v.len() / 2])
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let corpus = std::fs::read(&args[1])?;
    let codec = match args.get(2).map(String::as_str).unwrap_or("lz4") {
        "lz4" => Codec::Lz4,
        "snappy" => Codec::Snappy,
        "none" => Codec::None,
        "deflate" => Codec::Deflate,
        z => Codec::Zstd {
            level: z.trim_start_matches("zstd-").parse()?,
        },
    };
    let chunk_kb: u32 = args.get(3).map(|s| s.parse()).transpose()?.unwrap_or(4);
    let reps: usize = args.get(4).map(|s| s.parse()).transpose()?.unwrap_or(40);
    let scan_only = std::env::var("SCAN_ONLY").is_ok();

    let layout = ClusteringLayout {
        columns: vec![(CqlType::Int, Order::Asc)],
    };
    let rows: Vec<&[u8]> = corpus.chunks(1024).collect();
    let per = rows.len().div_ceil(10);
    let mut parts = Vec::new();
    for (a, group) in rows.chunks(per).enumerate() {
        let key = DecoratedKey::new(Bytes::from((a as i32).to_be_bytes().to_vec()));
        let mut p = Partition::default();
        for (b, chunk) in group.iter().enumerate() {
            let value = String::from_utf8_lossy(chunk).into_owned();
            p.rows.insert(
                layout
                    .encode_key(&[&(b as i32).to_be_bytes()])
                    .map_err(|e| anyhow::anyhow!("{e:?}"))?,
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
    let expected: usize = parts.iter().map(|(_, p)| p.rows.len()).sum();

    let dir = tempfile::tempdir()?;
    let params = CompressionParams {
        codec,
        chunk_length: chunk_kb * 1024,
        crc_check_chance: 1.0,
    };
    let mut opts = WriterOptions::new(params);
    opts.expected_partitions = parts.len() as u64;
    let mut w = SSTableWriter::create(dir.path(), 1, opts, Arc::new(IoCounters::default()))?;
    for (k, p) in &parts {
        w.write_partition(k, p)?;
    }
    w.finish()?;
    let sst = SSTable::open(dir.path(), 1, Arc::new(IoCounters::default()))?;
    let stream = sst
        .read_range(
            &mut sst.cursor(ReadKind::Other, Wait::Allowed),
            0,
            sst.stats.uncompressed_length,
        )?
        .to_vec();
    drop(sst);
    let chunk = chunk_kb as usize * 1024;
    let mut c = Compressor::new(codec);
    let compressed: Vec<Vec<u8>> = stream
        .chunks(chunk)
        .map(|p| {
            let mut out = Vec::new();
            c.compress(p, &mut out).map(|()| out)
        })
        .collect::<Result<_, _>>()?;

    let (mut raw_cpu, mut raw_wall, mut scan_cpu, mut scan_wall) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut raw2_cpu = Vec::new();
    let mut raw3_cpu = Vec::new();
    let mut out = Vec::with_capacity(chunk);
    for _ in 0..reps {
        if !scan_only {
            let (t0, c0) = (Instant::now(), thread_cpu());
            for (piece, comp) in stream.chunks(chunk).zip(&compressed) {
                out.clear();
                c.decompress(comp, piece.len(), &mut out)
                    .map_err(|e| anyhow::anyhow!("{e:?}"))?;
            }
            raw_cpu.push(thread_cpu() - c0);
            raw_wall.push(t0.elapsed().as_secs_f64());
            // The same without zero-filling the output (decompress into a reused slice).
            let c0 = thread_cpu();
            let mut dst = vec![0u8; chunk];
            for (piece, comp) in stream.chunks(chunk).zip(&compressed) {
                let d = &mut dst[..piece.len()];
                c.decompress_into(comp, d)
                    .map_err(|e| anyhow::anyhow!("{e:?}"))?;
            }
            raw2_cpu.push(thread_cpu() - c0);
            // The same with a CRC32 over each compressed chunk first, as every engine read.
            let c0 = thread_cpu();
            let mut sum = 0u32;
            for (piece, comp) in stream.chunks(chunk).zip(&compressed) {
                sum ^= crc32fast::hash(comp);
                let d = &mut dst[..piece.len()];
                c.decompress_into(comp, d)
                    .map_err(|e| anyhow::anyhow!("{e:?}"))?;
            }
            std::hint::black_box(sum);
            raw3_cpu.push(thread_cpu() - c0);
        }

        let (t0, c0) = (Instant::now(), thread_cpu());
        let sst = Arc::new(SSTable::open(
            dir.path(),
            1,
            Arc::new(IoCounters::default()),
        )?);
        let mut scanner = sst.scan(
            &PartitionPos::TokenStart(Token::MIN),
            ReadKind::Query,
            Wait::Allowed,
        );
        let mut n = 0;
        let mut cursor = Some(sst.scan_cursor(ReadKind::Query, Wait::Allowed));
        while let Some(entry) = scanner.next_entry()? {
            let cur = cursor
                .take()
                .unwrap_or_else(|| sst.scan_cursor(ReadKind::Query, Wait::Allowed));
            let mut it = sst.rows(&entry, &Slice::all(), false, cur);
            for r in it.by_ref() {
                r?;
                n += 1;
            }
            cursor = Some(it.into_cursor());
        }
        scan_cpu.push(thread_cpu() - c0);
        scan_wall.push(t0.elapsed().as_secs_f64());
        anyhow::ensure!(n == expected, "{n} rows");
    }
    let mb = stream.len() as f64 / 1e6;
    let (sc, scm) = stats(scan_cpu);
    let (sw, swm) = stats(scan_wall);
    println!(
        "scan: cpu min {:.2} ms ({:.0} MB/s) med {:.2}; wall min {:.2} ms ({:.0} MB/s) med {:.2}",
        sc * 1e3,
        mb / sc,
        scm * 1e3,
        sw * 1e3,
        mb / sw,
        swm * 1e3
    );
    if !scan_only {
        let (rc, rcm) = stats(raw_cpu);
        let (rw, rwm) = stats(raw_wall);
        println!(
            "raw:  cpu min {:.2} ms ({:.0} MB/s) med {:.2}; wall min {:.2} ms ({:.0} MB/s) med {:.2}",
            rc * 1e3,
            mb / rc,
            rcm * 1e3,
            rw * 1e3,
            mb / rw,
            rwm * 1e3
        );
        let (r2, r2m) = stats(raw2_cpu);
        println!(
            "raw without zero-fill: cpu min {:.2} ms ({:.0} MB/s) med {:.2}; scan/raw cpu-min {:.1}% cpu-med {:.1}%",
            r2 * 1e3,
            mb / r2,
            r2m * 1e3,
            100.0 * r2 / sc,
            100.0 * r2m / scm
        );
        let (r3, r3m) = stats(raw3_cpu);
        println!(
            "raw + crc32: cpu min {:.2} ms ({:.0} MB/s) med {:.2}",
            r3 * 1e3,
            mb / r3,
            r3m * 1e3
        );
        println!(
            "scan/raw: cpu-min {:.1}% cpu-med {:.1}% wall-min {:.1}% wall-med {:.1}%",
            100.0 * rc / sc,
            100.0 * rcm / scm,
            100.0 * rw / sw,
            100.0 * rwm / swm
        );
    }
    Ok(())
}
