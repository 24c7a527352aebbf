//! `cairn lab write`: embedded write throughput and CPU cost per insert.
//!
//! Single-row inserts (`(a int, b int, c text)`, a new partition per insert, 100-byte values)
//! straight into the engine, no network. Periodic commitlog mode from one writer thread
//! (flushes run on the engine's background threads and are counted in process CPU), then
//! batch mode with 1, 8 and 32 writer threads, reporting how many records each fsync made
//! durable (group commit). Baseline in the same run: the bare commitlog append of the same
//! payload, which bounds what any write path built on it can reach.

use super::fresh_dir;
use anyhow::Context;
use bytes::Bytes;
use cairn_engine::commitlog::{Commitlog, CommitlogConfig, SyncMode};
use cairn_engine::model::clustering::Order;
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{
    Cell, ClusteringKey, ColumnData, DecoratedKey, LivenessInfo, Mutation, Partition, Row,
};
use cairn_engine::schema::{ColumnKind, TableSchema};
use cairn_engine::{Database, DatabaseConfig, Wait};
use clap::Args;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Options of `cairn lab write`.
#[derive(Args, Debug)]
pub struct WriteArgs {
    /// Output directory.
    #[arg(long, default_value = "lab-out/write")]
    out: PathBuf,
    /// Inserts in the periodic-mode run.
    #[arg(long, default_value_t = 1_000_000)]
    inserts: u64,
    /// Seconds per batch-mode run.
    #[arg(long, default_value_t = 5)]
    batch_secs: u64,
}

fn cpu_time(who: i32) -> Duration {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct we own; RUSAGE_SELF / RUSAGE_THREAD are valid.
    unsafe { libc::getrusage(who, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn schema() -> TableSchema {
    TableSchema::new("lab", "w")
        .with_column("a", CqlType::Int, ColumnKind::PartitionKey)
        .with_clustering("b", CqlType::Int, Order::Asc)
        .with_column("c", CqlType::Text, ColumnKind::Regular)
}

fn mutation(table: u128, ck: &ClusteringKey, a: u32, value: &Bytes, ts: i64) -> Mutation {
    let mut p = Partition::default();
    p.rows.insert(
        ck.clone(),
        Row {
            marker: Some(LivenessInfo::live(ts)),
            deletion: None,
            columns: vec![(2, ColumnData::Simple(Cell::live(ts, value.clone())))],
        },
    );
    Mutation {
        table,
        key: DecoratedKey::new(Bytes::copy_from_slice(&a.to_be_bytes())),
        update: p,
    }
}

struct Outcome {
    mode: String,
    threads: usize,
    inserts: u64,
    secs: f64,
    fg_cpu_us: f64,
    proc_cpu_us: f64,
    group: f64,
}

/// A fresh database in `dir` with the lab's table; returns it, the table id and the clustering
/// key every insert uses.
fn open_table(dir: PathBuf, sync: SyncMode) -> anyhow::Result<(Database, u128, ClusteringKey)> {
    fresh_dir(&dir)?;
    let mut cfg = DatabaseConfig::new(&dir);
    cfg.commitlog_sync = sync;
    let db = Database::open(cfg)?;
    let table = db.create_table(schema())?;
    let ck = table
        .schema()
        .clustering_layout()
        .encode_key(&[&0i32.to_be_bytes()])?;
    let id = table.schema().id;
    drop(table);
    Ok((db, id, ck))
}

fn now_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

/// Runs the lab.
pub fn run(args: WriteArgs) -> anyhow::Result<()> {
    fresh_dir(&args.out)?;
    let value = Bytes::from(vec![b'x'; 100]);
    let mut outcomes = Vec::new();

    // Baseline: the bare commitlog append of a payload of the same size.
    {
        let dir = args.out.join("baseline");
        fresh_dir(&dir)?;
        let log =
            Commitlog::open(CommitlogConfig::new(&dir)).context("opening baseline commitlog")?;
        let payload = vec![7u8; 150];
        let (t0, c0) = (Instant::now(), cpu_time(libc::RUSAGE_THREAD));
        for _ in 0..args.inserts {
            log.append(&payload, &[1], Wait::Allowed)?;
        }
        let secs = t0.elapsed().as_secs_f64();
        let cpu = (cpu_time(libc::RUSAGE_THREAD) - c0).as_secs_f64();
        outcomes.push(Outcome {
            mode: "baseline: commitlog append only".into(),
            threads: 1,
            inserts: args.inserts,
            secs,
            fg_cpu_us: cpu * 1e6 / args.inserts as f64,
            proc_cpu_us: f64::NAN,
            group: f64::NAN,
        });
        println!(
            "baseline commitlog append: {:.0}/s",
            args.inserts as f64 / secs
        );
    }

    // Periodic mode, one writer.
    {
        let (db, id, ck) = open_table(
            args.out.join("periodic"),
            SyncMode::Periodic {
                period: Duration::from_secs(10),
            },
        )?;
        let ts = now_micros();
        let (t0, c0, p0) = (
            Instant::now(),
            cpu_time(libc::RUSAGE_THREAD),
            cpu_time(libc::RUSAGE_SELF),
        );
        for i in 0..args.inserts {
            db.apply(
                vec![mutation(id, &ck, i as u32, &value, ts + i as i64)],
                Wait::Allowed,
            )?;
            if i % 200_000 == 199_999 {
                println!(
                    "periodic: {} inserts, {:.0}/s",
                    i + 1,
                    (i + 1) as f64 / t0.elapsed().as_secs_f64()
                );
            }
        }
        let secs = t0.elapsed().as_secs_f64();
        let fg = (cpu_time(libc::RUSAGE_THREAD) - c0).as_secs_f64();
        let proc_ = (cpu_time(libc::RUSAGE_SELF) - p0).as_secs_f64();
        outcomes.push(Outcome {
            mode: "periodic".into(),
            threads: 1,
            inserts: args.inserts,
            secs,
            fg_cpu_us: fg * 1e6 / args.inserts as f64,
            proc_cpu_us: proc_ * 1e6 / args.inserts as f64,
            group: f64::NAN,
        });
    }

    // Batch mode, several writers: group commit.
    for threads in [1usize, 8, 32] {
        let (db, id, ck) = open_table(args.out.join(format!("batch-{threads}")), SyncMode::Batch)?;
        let db = Arc::new(db);
        let deadline = Instant::now() + Duration::from_secs(args.batch_secs);
        let (t0, p0) = (Instant::now(), cpu_time(libc::RUSAGE_SELF));
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (db, ck, value) = (Arc::clone(&db), ck.clone(), value.clone());
                std::thread::spawn(move || -> anyhow::Result<u64> {
                    let mut n = 0u64;
                    while Instant::now() < deadline {
                        let a = (t as u32) << 24 | n as u32;
                        db.apply(
                            vec![mutation(id, &ck, a, &value, now_micros())],
                            Wait::Allowed,
                        )?;
                        n += 1;
                    }
                    Ok(n)
                })
            })
            .collect();
        let mut total = 0;
        for h in handles {
            total += h.join().map_err(|_| anyhow::anyhow!("writer panicked"))??;
        }
        let secs = t0.elapsed().as_secs_f64();
        let proc_ = (cpu_time(libc::RUSAGE_SELF) - p0).as_secs_f64();
        let st = db.commitlog_stats();
        let group = st.total_grouped_records as f64 / st.syncs.max(1) as f64;
        println!(
            "batch x{threads}: {:.0}/s, mean group {group:.1}",
            total as f64 / secs
        );
        outcomes.push(Outcome {
            mode: "batch".into(),
            threads,
            inserts: total,
            secs,
            fg_cpu_us: f64::NAN,
            proc_cpu_us: proc_ * 1e6 / total.max(1) as f64,
            group,
        });
    }

    let mut csv = String::from("mode,threads,inserts,seconds,inserts_per_s,writer_cpu_us_per_insert,process_cpu_us_per_insert,mean_group_commit\n");
    let mut md = String::from("| mode | threads | inserts | inserts/s | writer CPU µs/insert | process CPU µs/insert | mean group commit |\n|---|---:|---:|---:|---:|---:|---:|\n");
    for o in &outcomes {
        let rate = o.inserts as f64 / o.secs;
        writeln!(
            csv,
            "{},{},{},{:.3},{:.0},{:.3},{:.3},{:.2}",
            o.mode, o.threads, o.inserts, o.secs, rate, o.fg_cpu_us, o.proc_cpu_us, o.group
        )?;
        let f = |x: f64, p: usize| {
            if x.is_nan() {
                "–".to_string()
            } else {
                format!("{x:.p$}")
            }
        };
        writeln!(
            md,
            "| {} | {} | {} | {:.0} | {} | {} | {} |",
            o.mode,
            o.threads,
            o.inserts,
            rate,
            f(o.fg_cpu_us, 2),
            f(o.proc_cpu_us, 2),
            f(o.group, 1)
        )?;
    }
    std::fs::write(args.out.join("write.csv"), csv)?;
    std::fs::write(args.out.join("write.md"), &md)?;
    for d in ["baseline", "periodic", "batch-1", "batch-8", "batch-32"] {
        let _ = std::fs::remove_dir_all(args.out.join(d));
    }
    print!("{md}");
    println!("wrote {}", args.out.display());
    Ok(())
}
