//! The reporter task: once a second the workers' intervals merged into scylla-bench's line,
//! the HDR log and the series for `--plot`; at the end scylla-bench's "Results" block with
//! the client's and the server's CPU per operation.

use crate::clock::{proc_cpu, self_cpu};
use crate::shared::Shared;
use crate::stats::{Interval, Kind, Point};
use anyhow::{anyhow, Context, Result};
use hdrhistogram::serialization::interval_log::{IntervalLogWriter, IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the reporter hands back.
pub(crate) struct Report {
    pub(crate) critical: bool,
}

pub(crate) async fn reporter(
    sh: Arc<Shared>,
    start: Instant,
    duration: Duration,
    warmup: Duration,
    done: Arc<AtomicU64>,
) -> Result<Report> {
    let mut hdr_file = match &sh.args.hdr_latency_file {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?,
        )),
        None => None,
    };
    let mut serializer = V2DeflateSerializer::new();
    let mut hdr_log = match hdr_file.as_mut() {
        Some(f) => Some(
            IntervalLogWriterBuilder::new()
                .add_comment("cairn bench latencies, ns")
                .with_start_time(std::time::SystemTime::now())
                .begin_log_with(f, &mut serializer)?,
        ),
        None => None,
    };

    let server_pid = sh.args.server_pid.as_slice();
    let mut span = Measured::from(start, server_pid)?;
    let mut warming = !warmup.is_zero();
    if warming {
        println!(
            "\nWarming up for {}…",
            crate::stats::go_duration(warmup.as_nanos() as f64)
        );
    } else {
        println!("{}", crate::stats::header());
    }

    let mut total = Interval::default();
    let mut sec = Interval::default();
    let mut points: Vec<Point> = Vec::new();
    let mut tick = 1u64;
    loop {
        let finished = wait_for_tick(start + Duration::from_secs(tick), &done).await;
        if !duration.is_zero() && Instant::now() >= start + duration + Duration::from_secs(2) {
            // Workers should have stopped by now; do not wait on a hung request forever.
            sh.stop.store(true, Ordering::Relaxed);
        }
        let now = Instant::now();
        if warming && now - start >= warmup {
            // Warm-up over: start measuring from here. Workers see the new epoch under
            // their slot's lock, so nothing measured before it reaches the totals.
            warming = false;
            sh.epoch.store(1, Ordering::Relaxed);
            for s in &sh.slots {
                s.lock().unwrap().reset();
            }
            sec.reset();
            span = Measured::from(now, server_pid)?;
            println!("{}", crate::stats::header());
            tick += 1;
            continue;
        }
        for s in &sh.slots {
            let mut g = s.lock().unwrap();
            sec.add(&g);
            g.reset();
        }
        if !warming && (sec.ops > 0 || sec.errors > 0 || !finished) {
            let elapsed = (now - span.from).as_secs_f64();
            let secs = if finished {
                (now - (start + Duration::from_secs(tick - 1)))
                    .as_secs_f64()
                    .max(1e-3)
            } else {
                1.0
            };
            // The stragglers after the last full second go to the totals only.
            let show = !finished || secs >= 0.5;
            if show {
                points.push(print_second(&sec, elapsed, secs));
                if let Some(log) = hdr_log.as_mut() {
                    write_hdr_interval(log, &sec, elapsed, secs)?;
                }
            }
            total.add(&sec);
        }
        sec.reset();
        if finished {
            break;
        }
        tick += 1;
    }
    let (elapsed, client_cpu, server_cpu) = span.end(server_pid);
    drop(hdr_log);
    if let Some(mut f) = hdr_file {
        use std::io::Write;
        f.flush()?;
    }

    print_results(&total, elapsed, client_cpu, server_cpu, server_pid);
    if let Some(p) = &sh.args.plot {
        crate::plot::draw(
            p,
            &points,
            &format!(
                "cairn bench -mode {:?} -workload {:?}, concurrency {}",
                sh.args.mode, sh.args.workload, sh.args.concurrency
            )
            .to_lowercase(),
        )?;
        println!("Plot:\t\t {}", p.display());
    }
    let critical = (total.ops == 0 && total.errors > 0) || sh.lost.load(Ordering::Relaxed);
    Ok(Report { critical })
}

/// Where the measured span starts: its instant and the client's and the server's CPU then.
struct Measured {
    from: Instant,
    client_cpu0: Duration,
    server_cpu0: Option<Duration>,
}

impl Measured {
    fn from(from: Instant, server_pids: &[u32]) -> Result<Measured> {
        Ok(Measured {
            from,
            client_cpu0: self_cpu(),
            server_cpu0: if server_pids.is_empty() {
                None
            } else {
                Some(servers_cpu(server_pids)?)
            },
        })
    }

    /// The span's length and the client's and the servers' CPU over it.
    fn end(&self, server_pids: &[u32]) -> (Duration, Duration, Option<Duration>) {
        let server_cpu = self
            .server_cpu0
            .and_then(|c0| Some(servers_cpu(server_pids).ok()?.saturating_sub(c0)));
        (
            Instant::now() - self.from,
            self_cpu().saturating_sub(self.client_cpu0),
            server_cpu,
        )
    }
}

/// The CPU the servers `pids` have used, summed.
fn servers_cpu(pids: &[u32]) -> Result<Duration> {
    pids.iter().map(|p| proc_cpu(*p)).sum()
}

/// Sleeps until `next` (in steps, to notice the end early); true when the workers are done.
async fn wait_for_tick(next: Instant, done: &AtomicU64) -> bool {
    loop {
        if done.load(Ordering::Acquire) == 1 {
            return true;
        }
        let now = Instant::now();
        if now >= next {
            return false;
        }
        tokio::time::sleep((next - now).min(Duration::from_millis(50))).await;
    }
}

/// Prints one second's line (scylla-bench's columns) and returns it as a plot point.
fn print_second(sec: &Interval, elapsed: f64, secs: f64) -> Point {
    let merged = sec.merged(sec.has_co());
    let s = crate::stats::summarize(&merged);
    let ops_s = (sec.ops as f64 / secs).round() as u64;
    let rows_s = (sec.rows as f64 / secs).round() as u64;
    println!(
        "{}",
        crate::stats::line(elapsed, ops_s, rows_s, sec.errors, &s)
    );
    Point {
        t: elapsed,
        ops_s: ops_s as f64,
        rows_s: rows_s as f64,
        max_us: s.max as f64 / 1e3,
        p999_us: s.p999 as f64 / 1e3,
        p99_us: s.p99 as f64 / 1e3,
        p90_us: s.p90 as f64 / 1e3,
        p50_us: s.p50 as f64 / 1e3,
    }
}

/// Appends one interval's histograms to the HDR log, one tag per operation kind (and `co-`
/// for the coordinated-omission-fixed ones), as scylla-bench's log has them.
pub(crate) fn write_hdr_interval<W: std::io::Write>(
    log: &mut IntervalLogWriter<'_, '_, W, V2DeflateSerializer>,
    sec: &Interval,
    elapsed: f64,
    span: f64,
) -> Result<()> {
    let from = Duration::from_secs_f64((elapsed - span).max(0.0));
    let len = Duration::from_secs_f64(span);
    for k in crate::stats::KINDS {
        let i = k as usize;
        if !sec.raw[i].is_empty() {
            log.write_histogram(&sec.raw[i], from, len, Tag::new(k.name()))
                .map_err(|e| anyhow!("writing the HDR log: {e:?}"))?;
        }
        if !sec.co[i].is_empty() {
            let tag = format!("co-{}", k.name());
            log.write_histogram(&sec.co[i], from, len, Tag::new(&tag))
                .map_err(|e| anyhow!("writing the HDR log: {e:?}"))?;
        }
    }
    Ok(())
}

/// Prints scylla-bench's "Results" block for the measured span: totals, rates, latency
/// blocks (one per operation kind when the run mixed kinds), then the client's and the
/// server's CPU per operation.
pub(crate) fn print_results(
    total: &Interval,
    elapsed: Duration,
    client_cpu: Duration,
    server_cpu: Option<Duration>,
    server_pids: &[u32],
) {
    let secs = elapsed.as_secs_f64().max(1e-9);
    println!("\nResults");
    println!(
        "Time (avg):\t {}",
        crate::stats::go_duration(elapsed.as_nanos() as f64)
    );
    println!("Total ops:\t {}", total.ops);
    println!("Total rows:\t {}", total.rows);
    println!("Total errors:\t {}", total.errors);
    println!("Operations/s:\t {}", (total.ops as f64 / secs).round());
    println!("Rows/s:\t\t {}", (total.rows as f64 / secs).round());
    let used: Vec<Kind> = crate::stats::KINDS
        .into_iter()
        .filter(|k| !total.raw[*k as usize].is_empty())
        .collect();
    let has_co = total.has_co();
    if used.len() > 1 {
        for k in &used {
            print!(
                "{}",
                crate::stats::latency_block(
                    &format!("Latency ({})", k.name()),
                    &crate::stats::summarize(&total.raw[*k as usize])
                )
            );
            if has_co {
                print!(
                    "{}",
                    crate::stats::latency_block(
                        &format!("Coordinated-omission-fixed latency ({})", k.name()),
                        &crate::stats::summarize(&total.co[*k as usize])
                    )
                );
            }
        }
    } else {
        print!(
            "{}",
            crate::stats::latency_block("Latency", &crate::stats::summarize(&total.merged(false)))
        );
        if has_co {
            print!(
                "{}",
                crate::stats::latency_block(
                    "Coordinated-omission-fixed latency",
                    &crate::stats::summarize(&total.merged(true))
                )
            );
        }
    }
    let ops = total.ops.max(1) as f64;
    println!(
        "Client CPU:\t {:.2} µs/op ({:.2} s over {} ops, {:.0} % of a core)",
        client_cpu.as_secs_f64() * 1e6 / ops,
        client_cpu.as_secs_f64(),
        total.ops,
        client_cpu.as_secs_f64() * 100.0 / secs
    );
    if let Some(c) = server_cpu {
        let pids: Vec<String> = server_pids.iter().map(u32::to_string).collect();
        println!(
            "Server CPU:\t {:.2} µs/op ({:.2} s, {:.0} % of a core; pid {})",
            c.as_secs_f64() * 1e6 / ops,
            c.as_secs_f64(),
            c.as_secs_f64() * 100.0 / secs,
            pids.join(",")
        );
    }
}
