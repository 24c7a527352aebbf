//! Running the lab on the real engine: the flush-capacity calibration, and one strategy on
//! one workload — open, write at a paced rate beside the sampler, settle, and measure the
//! fully compacted size.

use super::args::{CompactionArgs, KEYSPACE, MB, TABLE};
use super::clock::VirtualClock;
use super::measure::{sampler, JobRecord, Progress, RunResult, Sample};
use super::setup::{db_config, parse_list, schema, Sizes, Strategy, Workload};
use super::workload::{generator, Generator};
use crate::fresh_dir;
use anyhow::{anyhow, Context, Result};
use cairn_engine::compaction::strategy::CompactionOptions;
use cairn_engine::table::Table;
use cairn_engine::Database;
use cairn_engine::Wait;
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Writes `calibrate` bytes of new keys unpaced with autocompaction off; returns user bytes
/// per second until everything is flushed.
pub(super) fn calibrate(a: &CompactionArgs, sizes: &Sizes) -> Result<f64> {
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
        db.apply(vec![op.mutation], Wait::Allowed)?;
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

/// Waits until compaction has nothing running, queued or pending (or the timeout).
pub(super) fn settle(db: &Database, table: &Arc<Table>, timeout: Duration) -> Result<bool> {
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
pub(super) fn wait_deletions(table: &Table) -> Result<u64> {
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
pub(super) fn run_one(
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
    let limit = write_limit(sizes, workload, duration);
    let clock = Arc::new(VirtualClock::new(clock_speed(
        a, workload, rate, duration, limit,
    )));
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
    let sampler_handle = start_sampler(&db, &table, strategy, &label, &progress)?;

    let t0 = Instant::now();
    let write_result = write_paced(&db, &mut gen, &progress, rate, duration, t0);
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
    let history = job_history(&db, t0);
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
    let compacted_bytes = fully_compacted_bytes(&db, &table, a)?;
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

/// User bytes after which a sized run's writes end (`None`: a sustained run, bounded by time).
fn write_limit(sizes: &Sizes, workload: Workload, duration: Option<f64>) -> Option<u64> {
    match (duration, workload) {
        (Some(_), _) => None,
        (None, Workload::Append) => Some(sizes.append),
        (None, Workload::Overwrite) => Some(sizes.dataset * u64::from(sizes.passes)),
        (None, Workload::WriteDelete) => Some(sizes.write_delete),
        (None, Workload::Timeseries) => Some(sizes.timeseries),
    }
}

/// How fast the run's virtual clock goes: timeseries spans `ts_windows` virtual minutes;
/// the other workloads run in real time.
fn clock_speed(
    a: &CompactionArgs,
    workload: Workload,
    rate: f64,
    duration: Option<f64>,
    limit: Option<u64>,
) -> f64 {
    if workload != Workload::Timeseries {
        return 1.0;
    }
    let real_secs = match (duration, limit) {
        (Some(d), _) => d,
        (None, Some(l)) => l as f64 / rate,
        (None, None) => 60.0,
    };
    (f64::from(a.ts_windows) * 60.0 / real_secs.max(1.0)).max(1.0)
}

/// The sampler thread beside the writes (see [`sampler`]).
fn start_sampler(
    db: &Arc<Database>,
    table: &Arc<Table>,
    strategy: Strategy,
    label: &str,
    progress: &Arc<Progress>,
) -> Result<JoinHandle<Result<Vec<Sample>>>> {
    let (db, table, progress, label) = (
        Arc::clone(db),
        Arc::clone(table),
        Arc::clone(progress),
        label.to_string(),
    );
    std::thread::Builder::new()
        .name("lab-sampler".into())
        .spawn(move || sampler(db, table, strategy, label, progress))
        .context("starting the sampler")
}

/// Applies the workload's operations from `t0` on, paced so that user bytes never run ahead
/// of `rate` × elapsed, until the generator ends or `duration` seconds have passed.
fn write_paced(
    db: &Database,
    gen: &mut Generator,
    progress: &Progress,
    rate: f64,
    duration: Option<f64>,
    t0: Instant,
) -> Result<()> {
    loop {
        if let Some(d) = duration {
            if t0.elapsed().as_secs_f64() >= d {
                break;
            }
        }
        let Some(op) = gen.next()? else { break };
        db.apply(vec![op.mutation], Wait::Allowed)?;
        progress.user_bytes.store(gen.user_bytes, Ordering::Relaxed);
        progress
            .live_units
            .store(gen.live_units(), Ordering::Relaxed);
        let due = gen.user_bytes as f64 / rate;
        let el = t0.elapsed().as_secs_f64();
        if due > el + 0.002 {
            std::thread::sleep(Duration::from_secs_f64(due - el));
        }
    }
    Ok(())
}

/// The jobs the run's table finished, with their start in ms since `t0`.
fn job_history(db: &Database, t0: Instant) -> Vec<JobRecord> {
    let run_start_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
        - t0.elapsed().as_millis() as i64;
    db.compaction()
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
        .collect()
}

/// The fully compacted size of the final data. Automatic compaction is switched off and
/// drained first: a regular job starting beside the major (LCS pushes data down even with
/// nothing pending) would keep its sstables out of it, and the "fully compacted" size would
/// count them twice.
fn fully_compacted_bytes(db: &Database, table: &Table, a: &CompactionArgs) -> Result<u64> {
    db.compaction().set_autocompaction(false);
    for _ in 0..2 {
        // Twice: a worker may have taken the table off the queue just before the switch.
        db.compaction()
            .wait_idle(Duration::from_secs(a.settle_secs));
        std::thread::sleep(Duration::from_millis(300));
    }
    db.compact(KEYSPACE, TABLE)?;
    wait_deletions(table)
}

pub(super) fn pairs(a: &CompactionArgs) -> Result<Vec<(Strategy, Workload)>> {
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
