//! `cairn lab backup`: issue 21's bars — a snapshot of a large table (time and extra bytes)
//! and `refresh` of uploaded sstables against the disk's sequential read speed, measured in
//! the same run on the same bytes.
//!
//! 1. A table of `--table-gb` of sstables is written straight with the sstable writer
//!    (random 1 KiB values, LZ4: nothing compresses), then opened by the database.
//! 2. **Snapshot**, `--rounds` times: wall time of `Database::snapshot` (its flush finds empty
//!    memtables), and the bytes it added: every file of the snapshot that is not a second link
//!    to a live sstable file, plus the directory blocks — the data bytes it adds must be 0.
//! 3. **Refresh**, `--rounds` times, on a `--refresh-gb` subset of those sstables: copied into
//!    an empty table's `upload/`, synced and evicted from the page cache
//!    (`posix_fadvise(DONTNEED)`), then loaded while a thread reads the big table. The
//!    baseline, in the same round, reads two more copies of the same files, written and
//!    evicted alike (a file read once may stay cached below the page cache, in the host),
//!    front to back with 4 MiB `pread`s — one with one thread, one with two (refresh verifies
//!    two sstables at a time); the faster is the disk's speed. The three reads rotate order
//!    from round to round.
//!
//! Everything it writes under `--data` is removed at the end unless `--keep`.

use super::fresh_dir;
use anyhow::{bail, Context};
use bytes::Bytes;
use cairn_engine::model::clustering::Order;
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{Cell, ColumnData, DecoratedKey, LivenessInfo, Partition, Row};
use cairn_engine::schema::{ColumnKind, SerializationHeader, TableSchema};
use cairn_engine::snapshot::SnapshotOptions;
use cairn_engine::sstable::format::{component_path, Component};
use cairn_engine::sstable::writer::{SSTableWriter, WriterOptions};
use cairn_engine::{Database, DatabaseConfig, ReadCommand, Wait};
use clap::Args;
use rand::{Rng, RngCore, SeedableRng};
use std::fmt::Write as _;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Options of `cairn lab backup`.
#[derive(Args, Debug)]
pub struct BackupArgs {
    /// Output directory (results).
    #[arg(long, default_value = "lab-out/backup")]
    out: PathBuf,
    /// Where the lab's database lives: needs `table-gb` + 3 × `refresh-gb` free.
    #[arg(long, default_value = "lab-data/backup")]
    data: PathBuf,
    /// Size of the snapshotted table, GB (10^9 bytes) of sstables.
    #[arg(long, default_value_t = 10.0)]
    table_gb: f64,
    /// Bytes of sstables each refresh loads, GB.
    #[arg(long, default_value_t = 1.0)]
    refresh_gb: f64,
    /// Rounds of each measurement.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Keep the data directory.
    #[arg(long)]
    keep: bool,
}

const VALUE: usize = 1024;
/// Bytes of values per written sstable.
const SSTABLE_BYTES: u64 = 256 << 20;
/// Read size of the baseline (as refresh's verification).
const READ: usize = 4 << 20;

fn schema(name: &str) -> TableSchema {
    TableSchema::new("lab", name)
        .with_column("a", CqlType::Bigint, ColumnKind::PartitionKey)
        .with_clustering("b", CqlType::Int, Order::Asc)
        .with_column("v", CqlType::Blob, ColumnKind::Regular)
}

fn key(a: u64) -> DecoratedKey {
    DecoratedKey::new(Bytes::copy_from_slice(&a.to_be_bytes()))
}

/// Writes about `bytes` (on disk) of sstables into `lab.big`'s directory, before the database
/// opens them; returns how many partitions they hold.
fn write_sstables(db: &Database, bytes: u64) -> anyhow::Result<u64> {
    let t = db.table("lab", "big").context("table lab.big")?;
    let s = t.schema();
    let ck = s.clustering_layout().encode_key(&[&0i32.to_be_bytes()])?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(21);
    let per_sstable = (SSTABLE_BYTES / VALUE as u64).max(1);
    let mut next_key = 0u64;
    let mut written = 0u64;
    let mut value = vec![0u8; VALUE];
    while written < bytes {
        let mut keys: Vec<DecoratedKey> = (0..per_sstable)
            .map(|_| {
                next_key += 1;
                key(next_key)
            })
            .collect();
        keys.sort();
        let mut opts = WriterOptions::new(s.options.compression.clone());
        opts.expected_partitions = per_sstable;
        opts.header = Some(SerializationHeader::of(&s));
        opts.timestamp_base = 1;
        let mut w = SSTableWriter::create(t.dir(), t.next_generation(), opts, Arc::clone(&t.io))?;
        for k in &keys {
            rng.fill_bytes(&mut value);
            let mut p = Partition::default();
            p.rows.insert(
                ck.clone(),
                Row {
                    marker: Some(LivenessInfo::live(1)),
                    deletion: None,
                    columns: vec![(
                        2,
                        ColumnData::Simple(Cell::live(1, Bytes::copy_from_slice(&value))),
                    )],
                },
            );
            w.write_partition(k, &p)?;
        }
        written += w.finish()?.map_or(0, |x| x.bytes_written);
        println!("  {:.2} GB written", written as f64 / 1e9);
    }
    Ok(next_key)
}

/// What a snapshot directory adds to the disk: (sstable files that are second links to the
/// live table's files, bytes of sstable files that are not — copies, which must be 0 —, bytes
/// of its other files, the directory's own blocks). Bytes are allocated blocks.
fn added_bytes(dir: &Path, live: &Path) -> anyhow::Result<(u64, u64, u64, u64)> {
    let (mut linked, mut data, mut other) = (0u64, 0u64, 0u64);
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let m = e.metadata()?;
        let is_sstable = e.file_name().to_string_lossy().starts_with("ca-");
        let twin = std::fs::metadata(live.join(e.file_name())).ok();
        match twin {
            Some(t) if is_sstable && t.ino() == m.ino() && t.dev() == m.dev() => linked += 1,
            _ if is_sstable => data += m.blocks() * 512,
            _ => other += m.blocks() * 512,
        }
    }
    let dir_blocks = std::fs::metadata(dir)?.blocks() * 512;
    Ok((linked, data, other, dir_blocks))
}

/// Syncs and evicts a file from the page cache.
fn evict(path: &Path) -> anyhow::Result<()> {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(path)?;
    f.sync_all()?;
    // SAFETY: a valid descriptor owned by `f`; offset/length 0 means the whole file.
    let r = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if r != 0 {
        bail!("posix_fadvise on {}: error {r}", path.display());
    }
    Ok(())
}

/// Reads `files` front to back with 4 MiB `pread`s on `threads` threads (files dealt out
/// in turn); returns the bytes read and the seconds.
fn read_files(files: &[PathBuf], threads: usize) -> anyhow::Result<(u64, f64)> {
    let start = Instant::now();
    let total: anyhow::Result<u64> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || -> anyhow::Result<u64> {
                    let mut buf = vec![0u8; READ];
                    let mut n = 0u64;
                    for f in files.iter().skip(t).step_by(threads) {
                        let file = std::fs::File::open(f)?;
                        let mut off = 0u64;
                        loop {
                            let got = file.read_at(&mut buf, off)?;
                            if got == 0 {
                                break;
                            }
                            off += got as u64;
                        }
                        n += off;
                    }
                    Ok(n)
                })
            })
            .collect();
        let mut sum = 0;
        for h in handles {
            sum += h.join().map_err(|_| anyhow::anyhow!("reader panicked"))??;
        }
        Ok(sum)
    });
    Ok((total?, start.elapsed().as_secs_f64()))
}

fn copy_set(gens: &[u64], from: &Path, to: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(to)?;
    let mut out = Vec::new();
    for g in gens {
        for c in Component::ALL {
            let dst = component_path(to, *g, c);
            std::fs::copy(component_path(from, *g, c), &dst)?;
            evict(&dst)?;
            out.push(dst);
        }
    }
    Ok(out)
}

fn mb_s(bytes: u64, secs: f64) -> f64 {
    bytes as f64 / 1e6 / secs.max(1e-9)
}

/// Runs the lab.
pub fn run(args: BackupArgs) -> anyhow::Result<()> {
    fresh_dir(&args.out)?;
    fresh_dir(&args.data)?;
    let mut cfg = DatabaseConfig::new(args.data.join("node"));
    cfg.compaction.autocompaction = false;
    cfg.auto_snapshot = false;
    let table_bytes = (args.table_gb * 1e9) as u64;
    {
        let db = Database::open(cfg.clone())?;
        db.create_table(schema("big"))?;
        println!("writing {:.1} GB of sstables", args.table_gb);
        write_sstables(&db, table_bytes)?;
    }
    let db = Arc::new(Database::open(cfg)?);
    db.set_schema_describer(Arc::new(|s: &TableSchema| {
        format!(
            "CREATE TABLE IF NOT EXISTS {}.{} (a bigint, b int, v blob, PRIMARY KEY (a, b));\n",
            s.keyspace, s.name
        )
    }));
    let big = db.table("lab", "big").context("table lab.big")?;
    let sstables = big.state().sstables.clone();
    let on_disk: u64 = sstables.iter().map(|s| s.disk_bytes()).sum();
    let partitions: u64 = sstables.iter().map(|s| s.stats.partition_count).sum();
    let mut md = String::new();
    let mut csv = String::from("measure,round,value,unit\n");
    writeln!(
        md,
        "Table: {} sstables, {:.2} GB on disk, {partitions} partitions of {VALUE} B values (LZ4).\n",
        sstables.len(),
        on_disk as f64 / 1e9
    )?;

    // Snapshots.
    writeln!(md, "| snapshot | time (ms) | files linked | data bytes added | other bytes added (manifest, schema.cql) | directory blocks |")?;
    writeln!(md, "|---|---|---|---|---|---|")?;
    for r in 0..args.rounds {
        let tag = format!("bench-{r}");
        let start = Instant::now();
        db.snapshot(
            std::slice::from_ref(&big),
            &tag,
            &SnapshotOptions::default(),
        )?;
        let ms = start.elapsed().as_secs_f64() * 1e3;
        let dir = big.dir().join("snapshots").join(&tag);
        let (linked, data, other, dir_blocks) = added_bytes(&dir, big.dir())?;
        writeln!(
            md,
            "| {tag} | {ms:.1} | {linked} | {data} | {other} | {dir_blocks} |"
        )?;
        writeln!(csv, "snapshot_ms,{r},{ms:.3},ms")?;
        writeln!(csv, "snapshot_data_bytes_added,{r},{data},bytes")?;
        writeln!(csv, "snapshot_other_bytes_added,{r},{other},bytes")?;
        println!("snapshot {tag}: {ms:.1} ms, {linked} links, {data} data bytes and {other} other bytes added");
    }
    db.clear_snapshots(None, &[], None)?;

    // Refreshes.
    let mut gens = Vec::new();
    let mut set_bytes = 0;
    for s in &sstables {
        if set_bytes >= (args.refresh_gb * 1e9) as u64 {
            break;
        }
        gens.push(s.generation);
        set_bytes += s.disk_bytes();
    }
    let baseline_dir = args.data.join("baseline");
    writeln!(
        md,
        "\nRefresh of {} sstables, {:.2} GB:\n",
        gens.len(),
        set_bytes as f64 / 1e9
    )?;
    writeln!(md, "| round | disk, 1 thread (MB/s) | disk, 2 threads (MB/s) | refresh (MB/s) | refresh / disk | refresh time (s: checks + publication) | reads served during it |")?;
    writeln!(md, "|---|---|---|---|---|---|---|")?;
    let stop = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicU64::new(0));
    let reader = {
        let (db, stop, reads) = (Arc::clone(&db), Arc::clone(&stop), Arc::clone(&reads));
        std::thread::spawn(move || -> anyhow::Result<()> {
            let mut rng = rand::rngs::StdRng::seed_from_u64(7);
            let now = (cairn_engine::snapshot::now_ms() / 1000) as u32;
            while !stop.load(Ordering::Relaxed) {
                let k = key(rng.gen_range(1..=partitions.max(1)));
                db.read("lab", "big", &k, &ReadCommand::all(now, Wait::Allowed))?;
                reads.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        })
    };
    for r in 0..args.rounds {
        let name = format!("dst{r}");
        let dst = db.create_table(schema(&name))?;
        // Three copies of the same files, written and evicted alike: one for refresh, one
        // for each baseline read (a file read once may be cached below the page cache).
        copy_set(&gens, big.dir(), &dst.dir().join("upload"))?;
        let base1 = copy_set(&gens, big.dir(), &baseline_dir.join("1"))?;
        let base2 = copy_set(&gens, big.dir(), &baseline_dir.join("2"))?;
        let (mut one, mut two, mut secs, mut served) = (0.0, 0.0, 0.0, 0);
        let (mut verify, mut publish) = (0.0, 0.0);
        // The order rotates from round to round.
        for step in 0..3 {
            match (step + r) % 3 {
                0 => {
                    let (b, t) = read_files(&base1, 1)?;
                    one = mb_s(b, t);
                }
                1 => {
                    let (b, t) = read_files(&base2, 2)?;
                    two = mb_s(b, t);
                }
                _ => {
                    let before = reads.load(Ordering::Relaxed);
                    let start = Instant::now();
                    let report = db.refresh("lab", &name)?;
                    secs = start.elapsed().as_secs_f64();
                    served = reads.load(Ordering::Relaxed) - before;
                    verify = report.verify_time.as_secs_f64();
                    publish = report.publish_time.as_secs_f64();
                    if report.generations.len() != gens.len() {
                        bail!(
                            "refresh loaded {} of {} sstables",
                            report.generations.len(),
                            gens.len()
                        );
                    }
                }
            }
        }
        let speed = mb_s(set_bytes, secs);
        let disk = one.max(two);
        writeln!(
            md,
            "| {r} | {one:.0} | {two:.0} | {speed:.0} | {:.2} | {secs:.2} ({verify:.2} + {publish:.2}) | {served} |",
            speed / disk
        )?;
        for (m, v) in [
            ("disk_1_thread_mb_s", one),
            ("disk_2_threads_mb_s", two),
            ("refresh_mb_s", speed),
        ] {
            writeln!(csv, "{m},{r},{v:.1},MB/s")?;
        }
        println!("refresh round {r}: disk {one:.0} / {two:.0} MB/s (1 / 2 threads), refresh {speed:.0} MB/s in {secs:.2} s ({verify:.2} s checks, {publish:.2} s publication), {served} reads served meanwhile");
        drop(dst);
        db.drop_table("lab", &name)?;
        std::fs::remove_dir_all(&baseline_dir)?;
    }
    stop.store(true, Ordering::Relaxed);
    reader
        .join()
        .map_err(|_| anyhow::anyhow!("reader panicked"))??;
    std::fs::write(args.out.join("results.md"), &md)?;
    std::fs::write(args.out.join("results.csv"), &csv)?;
    println!("\n{md}");
    drop(big);
    drop(db);
    if !args.keep {
        std::fs::remove_dir_all(&args.data)?;
    }
    Ok(())
}
