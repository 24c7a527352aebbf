//! `cairn lab cache`: seed 004's row-cache experiment, through CQL on a real node.
//!
//! **The timeline.** Two modes, each on a fresh node started from this binary (`cairn
//! serve`) with a small row cache and small memtables, so that within one run the cache fills
//! and evicts and memtables flush: `cache` (the table cached, Cairn's default) and `nocache`
//! (the table created `WITH caching = {'enabled': 'false'}`: every read merges memtables and
//! sstables, the seed's "Scylla 1.7" comparison). The load is the seed's two scylla-bench
//! commands (`-workload timeseries -mode write -concurrency 10 -partition-count 10` and
//! `-workload sequential -mode read -concurrency 1 -partition-count 1 -no-lower-bound
//! -max-rate 10`), written here with the Rust driver so that every read's latency lands on
//! the timeline: ten writers each prepend rows to their own partition (pk 0..9, clustering
//! keys falling, so a partition's newest row is its head) at `--rate` rows/s in all; one
//! reader asks for the head of partition 0 (`LIMIT 1`) ten times a second. Every second the
//! node's Prometheus page is sampled (cache bytes and rows, evictions, reads with misses,
//! memtable flushes); at `--invalidate-at` seconds the whole cache is evicted with `POST
//! /lsa/compact`, as the seed forces it.
//!
//! **The CPU comparison.** On a third node, the same single-row SELECT of random keys against
//! two tables holding the same rows in one sstable each, one cached (warmed first) and one
//! with the cache off, in alternating rounds; the server process's CPU time per SELECT.
//!
//! Outputs (`--out`): `cache-timeline.csv`, `cache.csv`, `cache-cpu.csv`, `cache.md` and
//! charts (PNG + SVG): `cache-latency-<mode>` (flushes and the invalidation marked),
//! `cache-bytes`, `cache-evictions`, `cache-misses`.
//!
//! Reads with misses: in `cache` mode the cache's own counter (reads that had to read
//! sstables); in `nocache` mode every read, since none is answered from the cache.

use super::fresh_dir;
use super::plot::{self, XyChart, XySeries};
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Options of `cairn lab cache`.
#[derive(Args, Debug, Clone)]
pub struct CacheArgs {
    /// Output directory.
    #[arg(long, default_value = "lab-out/cache")]
    out: PathBuf,
    /// Seconds of load per mode.
    #[arg(long, default_value_t = 60)]
    secs: u64,
    /// Rows per second written by the ten writers together.
    #[arg(long, default_value_t = 10_000)]
    rate: u64,
    /// Second at which the cache is evicted with `POST /lsa/compact`.
    #[arg(long, default_value_t = 40)]
    invalidate_at: u64,
    /// The node's row cache budget (`row_cache_size`, MiB): small, so eviction starts.
    #[arg(long, default_value_t = 8)]
    cache_mb: u64,
    /// The node's memtable space (`memtable_heap_space_in_mb`; a flush at a quarter of it).
    #[arg(long, default_value_t = 128)]
    memtable_mb: u64,
    /// Bytes of each row's value.
    #[arg(long, default_value_t = 64)]
    row_size: usize,
    /// Modes to run, comma-separated (`cache`, `nocache`); empty for the CPU comparison only.
    #[arg(long, default_value = "cache,nocache")]
    modes: String,
    /// Partitions (one row each) of each table in the CPU comparison; 0 skips it.
    #[arg(long, default_value_t = 20_000)]
    cpu_partitions: u64,
    /// SELECTs per table per round of the CPU comparison.
    #[arg(long, default_value_t = 50_000)]
    cpu_reads: u64,
    /// Rounds of the CPU comparison (each reads the cached table, then the uncached one).
    #[arg(long, default_value_t = 3)]
    cpu_rounds: u32,
    /// Sstables each partition of the CPU comparison is spread over (written and flushed
    /// that many times), comma-separated: one comparison, on a node of its own, per count.
    /// One sstable is the best case for reads without the cache; four is what an STCS table
    /// holds before its first compaction.
    #[arg(long, default_value = "1,4")]
    cpu_sstables: String,
    /// SELECTs in flight at once in the CPU comparison (the client's concurrency; more in
    /// flight means more requests per socket read and write on the node).
    #[arg(long, default_value_t = 4)]
    cpu_concurrency: u64,
}

/// Runs the lab.
pub fn run(args: CacheArgs) -> Result<()> {
    fresh_dir(&args.out)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let mut runs = Vec::new();
    for mode in args
        .modes
        .split(',')
        .map(str::trim)
        .filter(|m| !m.is_empty())
    {
        let cached = match mode {
            "cache" => true,
            "nocache" => false,
            other => bail!("unknown mode {other:?}: cache or nocache"),
        };
        runs.push(rt.block_on(timeline(&args, mode, cached))?);
    }
    let mut cpu = Vec::new();
    if args.cpu_partitions > 0 && args.cpu_reads > 0 {
        for sstables in sstable_counts(&args.cpu_sstables)? {
            cpu.extend(rt.block_on(cpu_comparison(&args, sstables))?);
        }
    }
    let cpu = (!cpu.is_empty()).then_some(cpu);
    write_reports(&args, &runs, cpu.as_ref())
}

// ---------------------------------------------------------------------------------------
// The node

/// A `cairn serve` child process on loopback ports of its own.
struct Node {
    child: Child,
    native: u16,
    api: u16,
    metrics: u16,
}

impl Node {
    /// Starts a node in the fresh directory `dir` with `yaml` as its configuration.
    fn start(dir: &Path, yaml: &str) -> Result<Node> {
        fresh_dir(dir)?;
        let config = dir.join("cairn.yaml");
        std::fs::write(&config, yaml).with_context(|| format!("writing {}", config.display()))?;
        let [native, api, metrics] = free_ports()?;
        let log_path = dir.join("node.log");
        let log = std::fs::File::create(&log_path)
            .with_context(|| format!("creating {}", log_path.display()))?;
        let exe = std::env::current_exe().context("locating the cairn binary")?;
        let child = Command::new(exe)
            .arg("serve")
            .arg("--config")
            .arg(&config)
            .arg("--data-dir")
            .arg(dir.join("node"))
            .args(["--native-port", &native.to_string()])
            .args(["--api-port", &api.to_string()])
            .args(["--metrics-port", &metrics.to_string()])
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .context("starting cairn serve")?;
        let mut node = Node {
            child,
            native,
            api,
            metrics,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while TcpStream::connect(("127.0.0.1", native)).is_err() {
            if let Some(status) = node.child.try_wait()? {
                bail!("the node exited with {status}; see {}", log_path.display());
            }
            if Instant::now() > deadline {
                bail!(
                    "the node did not listen within 60 s; see {}",
                    log_path.display()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(node)
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    async fn session(&self) -> Result<Session> {
        SessionBuilder::new()
            .known_node(format!("127.0.0.1:{}", self.native))
            .build()
            .await
            .context("connecting to the node")
    }

    /// Stops the node with SIGTERM (a clean shutdown), SIGKILL after 30 s.
    fn stop(mut self) -> Result<()> {
        // SAFETY: kill(2) on our own child's pid has no memory-safety preconditions.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.child.try_wait()?.is_none() {
            if Instant::now() > deadline {
                self.child.kill()?;
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Three free loopback ports (bound and released; the node binds them right after).
fn free_ports() -> Result<[u16; 3]> {
    let listeners = [
        TcpListener::bind("127.0.0.1:0")?,
        TcpListener::bind("127.0.0.1:0")?,
        TcpListener::bind("127.0.0.1:0")?,
    ];
    let mut ports = [0u16; 3];
    for (p, l) in ports.iter_mut().zip(&listeners) {
        *p = l.local_addr()?.port();
    }
    Ok(ports)
}

/// One HTTP/1.1 request to the node's loopback port; the body of a 2xx answer.
fn http(port: u16, method: &str, path: &str) -> Result<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(60)))?;
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )?;
    let mut text = String::new();
    s.read_to_string(&mut text)?;
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| anyhow!("{method} {path}: no HTTP header in the answer"))?;
    let status = head.split_whitespace().nth(1).unwrap_or("");
    if !status.starts_with('2') {
        bail!("{method} {path}: HTTP {status}: {body}");
    }
    Ok(body.to_string())
}

/// The figures of one Prometheus sample that the timeline uses.
#[derive(Debug, Clone, Copy, Default)]
struct Sample {
    cache_bytes: f64,
    cache_limit: f64,
    cache_rows: f64,
    row_evictions: f64,
    partition_evictions: f64,
    reads_with_misses: f64,
    flushes: f64,
}

/// Samples the node's `/metrics` page.
fn sample(node: &Node) -> Result<Sample> {
    let page = http(node.metrics, "GET", "/metrics")?;
    // Sums a family over the series whose labels contain `filter`.
    let sum = |name: &str, filter: &str| -> f64 {
        let mut total = 0.0;
        for line in page.lines().filter(|l| !l.starts_with('#')) {
            let Some((series, value)) = line.rsplit_once(' ') else {
                continue;
            };
            let (n, labels) = series.split_once('{').unwrap_or((series, ""));
            if n == name && labels.contains(filter) {
                total += value.parse::<f64>().unwrap_or(0.0);
            }
        }
        total
    };
    Ok(Sample {
        cache_bytes: sum("scylla_cache_bytes_used", ""),
        cache_limit: sum("scylla_cache_bytes_total", ""),
        cache_rows: sum("scylla_cache_rows", ""),
        row_evictions: sum("scylla_cache_row_evictions", ""),
        partition_evictions: sum("scylla_cache_partition_evictions", ""),
        reads_with_misses: sum("scylla_cache_reads_with_misses", ""),
        flushes: sum(
            "scylla_column_family_memtable_switch",
            "ks=\"lab\",cf=\"ts\"",
        ),
    })
}

// ---------------------------------------------------------------------------------------
// The timeline

/// One second of one mode's run.
struct Second {
    t_s: u64,
    /// Latencies (µs) of the reads that started in this second.
    reads: Vec<u64>,
    sample: Sample,
    flush: bool,
    invalidate: bool,
}

/// One mode's run.
struct ModeRun {
    mode: String,
    seconds: Vec<Second>,
    rows_written: u64,
    write_errors: u64,
    read_errors: u64,
    /// The sample when the load started (counters are reported from it).
    base: Sample,
    /// The sample taken just before `POST /lsa/compact`: misses after the invalidation are
    /// counted from it (a read between the POST and that second's sample would otherwise fall
    /// in the invalidation's own second).
    at_invalidate: Option<Sample>,
}

fn node_yaml(args: &CacheArgs, cache_mb: u64) -> String {
    format!(
        "row_cache_size: {cache_mb}MiB\nmemtable_heap_space_in_mb: {}\ncommitlog_sync: periodic\ncommitlog_sync_period_in_ms: 10000\nauto_snapshot: false\n",
        args.memtable_mb
    )
}

async fn timeline(args: &CacheArgs, mode: &str, cached: bool) -> Result<ModeRun> {
    let node = Node::start(
        &args.out.join(format!("node-{mode}")),
        &node_yaml(args, args.cache_mb),
    )?;
    let session = Arc::new(node.session().await?);
    create_lab_keyspace(&session).await?;
    let caching = if cached {
        ""
    } else {
        " WITH caching = {'enabled': 'false'}"
    };
    session
        .query_unpaged(
            format!(
                "CREATE TABLE lab.ts (pk bigint, ck bigint, v blob, PRIMARY KEY (pk, ck)){caching}"
            ),
            &[],
        )
        .await?;
    let insert = session
        .prepare("INSERT INTO lab.ts (pk, ck, v) VALUES (?, ?, ?)")
        .await?;
    let head = session
        .prepare("SELECT ck, v FROM lab.ts WHERE pk = ? LIMIT 1")
        .await?;

    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicU64::new(0));
    let write_errors = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let per_writer = (args.rate as f64 / 10.0).max(0.1);
    let mut writers = Vec::new();
    for pk in 0..10i64 {
        let (session, insert) = (Arc::clone(&session), insert.clone());
        let (stop, written, errors) = (
            Arc::clone(&stop),
            Arc::clone(&written),
            Arc::clone(&write_errors),
        );
        let value = vec![0x5au8; args.row_size];
        writers.push(tokio::spawn(async move {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                // Paced from the start, so a slow request is caught up (the seed's -max-rate).
                let due = start + Duration::from_secs_f64(i as f64 / per_writer);
                tokio::time::sleep_until(due.into()).await;
                // Falling clustering keys: each new row is the partition's new head.
                let ck = -(i as i64);
                match session
                    .execute_unpaged(&insert, (pk, ck, value.as_slice()))
                    .await
                {
                    Ok(_) => written.fetch_add(1, Ordering::Relaxed),
                    Err(_) => errors.fetch_add(1, Ordering::Relaxed),
                };
                i += 1;
            }
        }));
    }
    let reads = Arc::new(std::sync::Mutex::new(Vec::<(f64, u64)>::new()));
    let read_errors = Arc::new(AtomicU64::new(0));
    let reader = {
        let (session, head) = (Arc::clone(&session), head.clone());
        let (stop, reads, errors) = (
            Arc::clone(&stop),
            Arc::clone(&reads),
            Arc::clone(&read_errors),
        );
        tokio::spawn(async move {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let due = start + Duration::from_millis(100 * i);
                tokio::time::sleep_until(due.into()).await;
                let t0 = Instant::now();
                match session.execute_unpaged(&head, (0i64,)).await {
                    Ok(_) => lock(&reads).push((
                        t0.duration_since(start).as_secs_f64(),
                        t0.elapsed().as_micros() as u64,
                    )),
                    Err(_) => {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
                i += 1;
            }
        })
    };

    let base = sample(&node)?;
    let mut samples = Vec::new();
    let mut invalidated_at = None;
    let mut at_invalidate = None;
    for s in 1..=args.secs {
        tokio::time::sleep_until((start + Duration::from_secs(s)).into()).await;
        if s == args.invalidate_at {
            at_invalidate = Some(sample(&node)?);
            http(node.api, "POST", "/lsa/compact")?;
            invalidated_at = Some(s);
        }
        let now = sample(&node)?;
        let prev = samples.last().map_or(base, |(_, p): &(u64, Sample)| *p);
        let rate = (now.flushes - prev.flushes) as u64;
        let r = lock(&reads).len();
        eprintln!(
            "cache lab [{mode}] {s:>3}s: {} rows written, {r} reads, cache {:.1} MiB / {} rows, {} row evictions, {} reads with misses{}{}",
            written.load(Ordering::Relaxed),
            now.cache_bytes / 1048576.0,
            now.cache_rows,
            now.row_evictions - base.row_evictions,
            now.reads_with_misses - base.reads_with_misses,
            if rate > 0 { ", flush" } else { "" },
            if invalidated_at == Some(s) { ", invalidated" } else { "" },
        );
        samples.push((s, now));
    }
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.await?;
    }
    reader.await?;
    // The driver goes first, so it does not see its node vanish.
    drop(session);
    node.stop()?;

    let reads = std::mem::take(&mut *lock(&reads));
    let mut seconds: Vec<Second> = Vec::new();
    let mut prev = base;
    for (s, smp) in samples {
        seconds.push(Second {
            t_s: s,
            reads: reads
                .iter()
                .filter(|(t, _)| *t >= (s - 1) as f64 && *t < s as f64)
                .map(|(_, l)| *l)
                .collect(),
            sample: smp,
            flush: smp.flushes > prev.flushes,
            invalidate: invalidated_at == Some(s),
        });
        prev = smp;
    }
    Ok(ModeRun {
        mode: mode.to_string(),
        seconds,
        rows_written: written.load(Ordering::Relaxed),
        write_errors: write_errors.load(Ordering::Relaxed),
        read_errors: read_errors.load(Ordering::Relaxed),
        base,
        at_invalidate,
    })
}

/// The reads' log; a poisoned lock (a panicked task) still holds valid latencies.
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The `q` quantile (nearest rank) of `xs`; 0 for none.
fn quantile(xs: &[u64], q: f64) -> u64 {
    if xs.is_empty() {
        return 0;
    }
    let mut v = xs.to_vec();
    v.sort_unstable();
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

/// One mode's summary row (`cache.csv`).
struct Summary {
    reads: usize,
    p50: u64,
    p99: u64,
    max: u64,
    p99_flush: u64,
    p99_no_flush: u64,
    reads_with_misses: u64,
    misses_after_invalidate: u64,
    row_evictions: u64,
    cache_bytes_max: u64,
    cache_limit: u64,
}

impl ModeRun {
    /// Reads with misses in second `i` (see the module doc for `nocache`).
    fn misses_in(&self, i: usize) -> u64 {
        if self.mode == "nocache" {
            return self.seconds[i].reads.len() as u64;
        }
        let prev = if i == 0 {
            self.base
        } else {
            self.seconds[i - 1].sample
        };
        (self.seconds[i].sample.reads_with_misses - prev.reads_with_misses).max(0.0) as u64
    }

    /// Whether second `i` saw a flush: the memtable switch counted in it, or in the second
    /// before (the flushed memtable is merged into the cache after it is written).
    fn near_flush(&self, i: usize) -> bool {
        self.seconds[i].flush || (i > 0 && self.seconds[i - 1].flush)
    }

    fn summary(&self) -> Summary {
        let all: Vec<u64> = self.seconds.iter().flat_map(|s| s.reads.clone()).collect();
        let (mut flush, mut quiet) = (Vec::new(), Vec::new());
        for (i, s) in self.seconds.iter().enumerate() {
            if self.near_flush(i) {
                flush.extend(&s.reads);
            } else {
                quiet.extend(&s.reads);
            }
        }
        let inv = self.seconds.iter().position(|s| s.invalidate);
        let last = self.seconds.last().map_or(self.base, |s| s.sample);
        Summary {
            reads: all.len(),
            p50: quantile(&all, 0.5),
            p99: quantile(&all, 0.99),
            max: all.iter().copied().max().unwrap_or(0),
            p99_flush: quantile(&flush, 0.99),
            p99_no_flush: quantile(&quiet, 0.99),
            reads_with_misses: (0..self.seconds.len()).map(|i| self.misses_in(i)).sum(),
            misses_after_invalidate: match (self.mode.as_str(), self.at_invalidate) {
                ("cache", Some(at)) => {
                    (last.reads_with_misses - at.reads_with_misses).max(0.0) as u64
                }
                // Without the cache every read misses: the reads of the seconds after it.
                _ => inv.map_or(0, |k| {
                    (k + 1..self.seconds.len()).map(|i| self.misses_in(i)).sum()
                }),
            },
            row_evictions: (last.row_evictions - self.base.row_evictions).max(0.0) as u64,
            cache_bytes_max: self
                .seconds
                .iter()
                .map(|s| s.sample.cache_bytes as u64)
                .max()
                .unwrap_or(0),
            cache_limit: last.cache_limit as u64,
        }
    }
}

// ---------------------------------------------------------------------------------------
// CPU per SELECT, cache against sstables

/// One round of the CPU comparison for one table.
struct CpuRound {
    sstables: u32,
    round: u32,
    table: &'static str,
    reads: u64,
    cpu_us_per_read: f64,
    wall_s: f64,
}

/// The sstable counts of `--cpu-sstables` ("1,4").
fn sstable_counts(list: &str) -> Result<Vec<u32>> {
    list.split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(|c| match c.parse::<u32>() {
            Ok(n) if n > 0 => Ok(n),
            _ => bail!("--cpu-sstables: {c:?} is not a positive count"),
        })
        .collect()
}

async fn cpu_comparison(args: &CacheArgs, sstables: u32) -> Result<Vec<CpuRound>> {
    // A cache big enough to hold the cached table whole.
    let cache_mb = 256;
    let node = Node::start(
        &args.out.join(format!("node-cpu-{sstables}")),
        &node_yaml(args, cache_mb),
    )?;
    let session = Arc::new(node.session().await?);
    create_lab_keyspace(&session).await?;
    // No compaction: the sstables stay as written, and no background work lands in the
    // CPU figures.
    for (table, with) in [("hot", ""), ("cold", " AND caching = {'enabled': 'false'}")] {
        session
            .query_unpaged(
                format!("CREATE TABLE lab.{table} (pk bigint PRIMARY KEY, v blob) WITH compaction = {{'class': 'NullCompactionStrategy'}}{with}"),
                &[],
            )
            .await?;
    }
    // Every partition written once per sstable, so that a read from sstables merges
    // `--cpu-sstables` of them (an STCS table before its first compaction holds up to four).
    for generation in 0..sstables {
        for table in ["hot", "cold"] {
            write_keys(
                &session,
                table,
                args.cpu_partitions,
                args.row_size,
                generation,
            )
            .await?;
        }
        http(node.api, "POST", "/storage_service/keyspace_flush/lab")?;
    }
    eprintln!(
        "cache lab [cpu]: {} partitions in lab.hot (cached) and lab.cold (cache off), {} sstables each",
        args.cpu_partitions,
        sstables
    );
    // Warm the cached table: every partition read once.
    read_keys(
        &session,
        "hot",
        args.cpu_partitions,
        args.cpu_partitions,
        true,
        args.cpu_concurrency,
    )
    .await?;
    let mut rounds = Vec::new();
    for round in 1..=args.cpu_rounds {
        for table in ["hot", "cold"] {
            let cpu0 = cairn_bench::clock::proc_cpu(node.pid())?;
            let t0 = Instant::now();
            read_keys(
                &session,
                table,
                args.cpu_partitions,
                args.cpu_reads,
                false,
                args.cpu_concurrency,
            )
            .await?;
            let wall_s = t0.elapsed().as_secs_f64();
            let cpu = cairn_bench::clock::proc_cpu(node.pid())? - cpu0;
            let r = CpuRound {
                sstables,
                round,
                table,
                reads: args.cpu_reads,
                cpu_us_per_read: cpu.as_secs_f64() * 1e6 / args.cpu_reads as f64,
                wall_s,
            };
            eprintln!(
                "cache lab [cpu] {sstables} sstable(s), round {round} {table}: {:.1} µs server CPU per SELECT ({} reads in {:.1} s)",
                r.cpu_us_per_read, r.reads, r.wall_s
            );
            rounds.push(r);
        }
    }
    drop(session);
    node.stop()?;
    Ok(rounds)
}

/// The keyspace every table of the lab lives in.
async fn create_lab_keyspace(session: &Session) -> Result<()> {
    session
        .query_unpaged(
            "CREATE KEYSPACE lab WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
            &[],
        )
        .await?;
    Ok(())
}

/// Writes one row to each of the partitions `0..partitions` of `lab.{table}`, eight at a
/// time; `generation` tells the values of successive rounds apart.
async fn write_keys(
    session: &Arc<Session>,
    table: &str,
    partitions: u64,
    row_size: usize,
    generation: u32,
) -> Result<()> {
    let insert = session
        .prepare(format!("INSERT INTO lab.{table} (pk, v) VALUES (?, ?)"))
        .await?;
    let value = vec![generation as u8; row_size];
    in_workers(8, |w| {
        let (session, insert, value) = (Arc::clone(session), insert.clone(), value.clone());
        async move {
            for pk in (w..partitions).step_by(8) {
                session
                    .execute_unpaged(&insert, (pk as i64, value.as_slice()))
                    .await?;
            }
            Ok(())
        }
    })
    .await
}

/// Runs `work(w)` for the workers `0..n` at once; the first error is the result.
async fn in_workers<F, Fut>(n: u64, work: F) -> Result<()>
where
    F: Fn(u64) -> Fut,
    Fut: std::future::Future<Output = Result<()>> + Send + 'static,
{
    let tasks: Vec<_> = (0..n).map(|w| tokio::spawn(work(w))).collect();
    for t in tasks {
        t.await??;
    }
    Ok(())
}

/// Reads `count` single-row SELECTs of `lab.{table}` over keys `0..partitions` (in order when
/// `sequential`, else pseudo-random), `concurrency` at a time; every row must be there.
async fn read_keys(
    session: &Arc<Session>,
    table: &str,
    partitions: u64,
    count: u64,
    sequential: bool,
    concurrency: u64,
) -> Result<()> {
    let concurrency = concurrency.max(1);
    let select = session
        .prepare(format!("SELECT v FROM lab.{table} WHERE pk = ?"))
        .await?;
    in_workers(concurrency, |w| {
        let (session, select) = (Arc::clone(session), select.clone());
        let table = table.to_string();
        async move {
            let mut x = w.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            for i in (w..count).step_by(concurrency as usize) {
                let pk = if sequential {
                    i % partitions
                } else {
                    // xorshift: cheap, deterministic, uniform enough over the keys.
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x % partitions
                };
                let rows = session
                    .execute_unpaged(&select, (pk as i64,))
                    .await?
                    .into_rows_result()?;
                if rows.rows_num() != 1 {
                    bail!("lab.{table}: pk {pk} read {} rows", rows.rows_num());
                }
            }
            Ok(())
        }
    })
    .await
}

// ---------------------------------------------------------------------------------------
// Reports

fn write_reports(args: &CacheArgs, runs: &[ModeRun], cpu: Option<&Vec<CpuRound>>) -> Result<()> {
    let out = &args.out;
    let mut timeline = String::from("mode,t_s,reads,read_p50_us,read_p99_us,read_max_us,reads_with_misses,cache_bytes,cache_rows,row_evictions,partition_evictions,flushes,event\n");
    let mut summary = String::from("mode,reads,p50_us,p99_us,max_us,p99_during_flush_us,p99_no_flush_us,reads_with_misses_total,misses_after_invalidate,row_evictions,cache_bytes_max,cache_limit_bytes\n");
    let mut md = format!(
        "# cairn lab cache\n\nTen writers prepending {} rows/s to ten partitions, one reader asking for a partition's head (`LIMIT 1`) ten times a second, {} s per mode; row cache {} MiB, memtables {} MiB (a flush every {} MiB); the cache evicted with `POST /lsa/compact` at {} s.\n\n\
         | mode | reads | p50 µs | p99 µs | max µs | p99 in seconds with a flush | p99 in seconds without | reads with misses | after the invalidation | row evictions | cache bytes max | budget | rows written |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
        args.rate, args.secs, args.cache_mb, args.memtable_mb, args.memtable_mb / 4, args.invalidate_at
    );
    for run in runs {
        let mut prev = run.base;
        for (i, s) in run.seconds.iter().enumerate() {
            let event = match (s.invalidate, s.flush) {
                (true, _) => "invalidate",
                (false, true) => "flush",
                _ => "",
            };
            let _ = writeln!(
                timeline,
                "{},{},{},{},{},{},{},{},{},{},{},{},{}",
                run.mode,
                s.t_s,
                s.reads.len(),
                quantile(&s.reads, 0.5),
                quantile(&s.reads, 0.99),
                s.reads.iter().copied().max().unwrap_or(0),
                run.misses_in(i),
                s.sample.cache_bytes as u64,
                s.sample.cache_rows as u64,
                (s.sample.row_evictions - prev.row_evictions).max(0.0) as u64,
                (s.sample.partition_evictions - prev.partition_evictions).max(0.0) as u64,
                (s.sample.flushes - run.base.flushes) as u64,
                event
            );
            prev = s.sample;
        }
        let m = run.summary();
        // One list of the summary's fields for the CSV row and the markdown row.
        let fields: Vec<String> = vec![
            run.mode.clone(),
            m.reads.to_string(),
            m.p50.to_string(),
            m.p99.to_string(),
            m.max.to_string(),
            m.p99_flush.to_string(),
            m.p99_no_flush.to_string(),
            m.reads_with_misses.to_string(),
            m.misses_after_invalidate.to_string(),
            m.row_evictions.to_string(),
            m.cache_bytes_max.to_string(),
            m.cache_limit.to_string(),
        ];
        let _ = writeln!(summary, "{}", fields.join(","));
        let errors = if run.write_errors + run.read_errors > 0 {
            format!(
                " ({} write, {} read errors)",
                run.write_errors, run.read_errors
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            md,
            "| {} | {}{errors} |",
            fields.join(" | "),
            run.rows_written
        );
    }
    std::fs::write(out.join("cache-timeline.csv"), timeline)?;
    std::fs::write(out.join("cache.csv"), summary)?;
    if let Some(rounds) = cpu {
        let mut csv = String::from(
            "sstables,round,table,cached,concurrency,reads,server_cpu_us_per_read,wall_s\n",
        );
        for r in rounds {
            let _ = writeln!(
                csv,
                "{},{},{},{},{},{},{:.2},{:.2}",
                r.sstables,
                r.round,
                r.table,
                r.table == "hot",
                args.cpu_concurrency,
                r.reads,
                r.cpu_us_per_read,
                r.wall_s
            );
        }
        std::fs::write(out.join("cache-cpu.csv"), csv)?;
        let _ = write!(
            md,
            "\nServer CPU per single-row SELECT ({} partitions of {} B, {} reads per table per round, {} rounds alternating, {} in flight):\n\n\
             | sstables per partition | from the row cache, µs (mean ± sd) | from sstables (`caching = {{'enabled': 'false'}}`), µs | cache / sstables |\n|---|---|---|---|\n",
            args.cpu_partitions, args.row_size, args.cpu_reads, args.cpu_rounds, args.cpu_concurrency,
        );
        let mut counts: Vec<u32> = rounds.iter().map(|r| r.sstables).collect();
        counts.dedup();
        for n in counts {
            let mean = |t: &str| {
                let v: Vec<f64> = rounds
                    .iter()
                    .filter(|r| r.sstables == n && r.table == t)
                    .map(|r| r.cpu_us_per_read)
                    .collect();
                super::mean_std(&v)
            };
            let ((hot, hot_sd), (cold, cold_sd)) = (mean("hot"), mean("cold"));
            let ratio = if cold > 0.0 { hot / cold } else { 0.0 };
            let _ = writeln!(
                md,
                "| {n} | {hot:.1} ± {hot_sd:.1} | {cold:.1} ± {cold_sd:.1} | {ratio:.2} |"
            );
        }
    }
    std::fs::write(out.join("cache.md"), &md)?;
    draw_charts(out, runs)?;
    print!("{md}");
    eprintln!("cache lab: results in {}", out.display());
    Ok(())
}

fn draw_charts(out: &Path, runs: &[ModeRun]) -> Result<()> {
    let per_second = |run: &ModeRun, f: &dyn Fn(usize, &Second) -> f64| XySeries {
        label: run.mode.clone(),
        points: run
            .seconds
            .iter()
            .enumerate()
            .map(|(i, s)| (s.t_s as f64, f(i, s)))
            .collect(),
    };
    for run in runs {
        let markers: Vec<(f64, String)> = run
            .seconds
            .iter()
            .filter(|s| s.flush || s.invalidate)
            .map(|s| {
                let what = if s.invalidate { "invalidate" } else { "flush" };
                (s.t_s as f64, what.to_string())
            })
            .collect();
        let mut p99 = per_second(run, &|_, s| quantile(&s.reads, 0.99) as f64 / 1000.0);
        p99.label = format!("{} p99", run.mode);
        let mut p50 = per_second(run, &|_, s| quantile(&s.reads, 0.5) as f64 / 1000.0);
        p50.label = format!("{} p50", run.mode);
        let series = [p99, p50];
        plot::xy_chart_marked(
            &out.join(format!("cache-latency-{}", run.mode)),
            &XyChart {
                title: &format!("Head reads (LIMIT 1), {}: latency per second", run.mode),
                x_label: "seconds",
                y_label: "ms",
                series: &series,
            },
            &markers,
        )?;
    }
    let invalidate: Vec<(f64, String)> = runs
        .iter()
        .flat_map(|r| r.seconds.iter().filter(|s| s.invalidate))
        .map(|s| (s.t_s as f64, "invalidate".to_string()))
        .take(1)
        .collect();
    // Per-second deltas of a counter of the samples.
    let delta = |r: &ModeRun, i: usize, f: fn(&Sample) -> f64| {
        let prev = if i == 0 {
            r.base
        } else {
            r.seconds[i - 1].sample
        };
        (f(&r.seconds[i].sample) - f(&prev)).max(0.0)
    };
    let bytes: Vec<XySeries> = runs
        .iter()
        .map(|r| per_second(r, &|_, s| s.sample.cache_bytes / 1048576.0))
        .collect();
    let evictions: Vec<XySeries> = runs
        .iter()
        .flat_map(|r| {
            let mut rows = per_second(r, &|i, _| delta(r, i, |s| s.row_evictions));
            rows.label = format!("{} rows", r.mode);
            let mut parts = per_second(r, &|i, _| delta(r, i, |s| s.partition_evictions));
            parts.label = format!("{} partitions", r.mode);
            [rows, parts]
        })
        .collect();
    let misses: Vec<XySeries> = runs
        .iter()
        .map(|r| per_second(r, &|i, _| r.misses_in(i) as f64))
        .collect();
    let charts = [
        ("cache-bytes", "Cache bytes used", "MiB", bytes),
        (
            "cache-evictions",
            "Evictions per second",
            "entries",
            evictions,
        ),
        (
            "cache-misses",
            "Reads with misses per second",
            "reads",
            misses,
        ),
    ];
    for (name, title, unit, series) in charts {
        plot::xy_chart_marked(
            &out.join(name),
            &XyChart {
                title,
                x_label: "seconds",
                y_label: unit,
                series: &series,
            },
            &invalidate,
        )?;
    }
    Ok(())
}
