//! `cairn bench`: a CQL load generator with scylla-bench's flags, schema and output.
//!
//! Flags are accepted with one dash as scylla-bench (Go) spells them (`-mode write`,
//! `-validate-data`, `-client-compression=false`) or with two. Every worker is a task that
//! sends one request at a time; a reporter task merges the workers' interval histograms
//! once a second, prints scylla-bench's line, appends to the HDR log and keeps the series
//! for `--plot`. The run ends with scylla-bench's "Results" block plus the client's CPU per
//! operation (getrusage) and, with `-server-pid`, the server's (from /proc).
//!
//! The client must stay light (issue 5: ≤ 10 µs of CPU per operation), so that a run
//! measures the node. The Rust `scylla` driver only sets the schema up (DDL, TRUNCATE) and is
//! then closed; the statements are prepared and run by the bench's own pipelined protocol v4
//! client ([`wire`]), which sends the frames the driver did (same statements, consistency,
//! values and paging, one request per operation, spread over the connections round robin;
//! only the driver's default serial consistency is left out) with far less work per
//! request. `-timeout` is one deadline slot per worker checked by a reaper
//! task instead of a timer per request ([`deadline`]), and there is one clock read per
//! operation.

mod deadline;
mod plot;
mod stats;
mod wire;
mod workload;

use anyhow::{anyhow, bail, Context, Result};
use bytes::Bytes;
use cairn_protocol::codec::Reader;
use cairn_protocol::{Compression, Consistency, Opcode, ResultBody, Rows};
use clap::{ArgAction, Args, ValueEnum};
use hdrhistogram::serialization::interval_log::{IntervalLogWriter, IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use scylla::client::session_builder::SessionBuilder;
use scylla::client::PoolSize;
use stats::{Interval, Kind, Point};
use std::path::PathBuf;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use workload::{Rng, Workload};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    Write,
    Read,
    Mixed,
    Scan,
    Delete,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum WorkloadKind {
    Sequential,
    Uniform,
    Timeseries,
}

/// `cairn bench` flags: scylla-bench's names and defaults, plus a few marked (Cairn).
#[derive(Args, Debug, Clone)]
#[command(rename_all = "kebab-case")]
pub struct BenchArgs {
    /// write, read, mixed (see -mixed-ratio), scan or delete.
    #[arg(long, value_enum, default_value = "write")]
    pub mode: Mode,
    /// sequential, uniform or timeseries (scan ignores it).
    #[arg(long, value_enum, default_value = "sequential")]
    pub workload: WorkloadKind,
    /// Comma-separated contact points, host[:port] (port 9042 by default).
    #[arg(long, default_value = "127.0.0.1")]
    pub nodes: String,
    #[arg(long, default_value = "scylla_bench")]
    pub keyspace: String,
    #[arg(long, default_value = "test")]
    pub table: String,
    #[arg(long, default_value_t = 1)]
    pub replication_factor: u32,
    /// any, one, two, three, quorum, all, local_quorum, each_quorum, local_one.
    #[arg(long, default_value = "quorum")]
    pub consistency_level: String,
    /// Number of workers, each with one request in flight.
    #[arg(long, default_value_t = 16)]
    pub concurrency: u64,
    /// Connections per node.
    #[arg(long, default_value_t = 4)]
    pub connection_count: usize,
    #[arg(long, default_value_t = 10_000)]
    pub partition_count: u64,
    /// First partition key.
    #[arg(long, default_value_t = 0)]
    pub partition_offset: i64,
    #[arg(long, default_value_t = 100)]
    pub clustering_row_count: u64,
    /// Bytes of `v` per row: N, or uniform:MIN..MAX.
    #[arg(long, default_value = "4")]
    pub clustering_row_size: String,
    /// Rows per request: an unlogged batch of INSERTs, the LIMIT of a read, the width of a
    /// range delete.
    #[arg(long, default_value_t = 1)]
    pub rows_per_request: u64,
    /// Operations per second over all workers (0 = unlimited). Latencies are then also
    /// measured from each request's intended start (coordinated omission fixed).
    #[arg(long, default_value_t = 0)]
    pub max_rate: u64,
    /// How long to run (Go syntax: 30s, 1m30s; 0 = until the workload is done).
    #[arg(long, default_value = "0")]
    pub duration: String,
    /// Passes over the data for the sequential workload (0 = forever).
    #[arg(long, default_value_t = 1)]
    pub iterations: u64,
    #[arg(long, default_value_t = 1000)]
    pub page_size: i32,
    /// Per-request timeout.
    #[arg(long, default_value = "5s")]
    pub timeout: String,
    /// Write values derived from (pk, ck) and check them on reads.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, require_equals = true, default_value = "false", default_missing_value = "true")]
    pub validate_data: bool,
    #[arg(long)]
    pub username: Option<String>,
    #[arg(long)]
    pub password: Option<String>,
    /// Compress frames (LZ4). scylla-bench defaults to true; Cairn defaults to false so the
    /// client stays light.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, require_equals = true, default_value = "false", default_missing_value = "true")]
    pub client_compression: bool,
    /// TRUNCATE the table before the run.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, require_equals = true, default_value = "false", default_missing_value = "true")]
    pub truncate_table: bool,
    /// Reads: no lower bound on ck (`WHERE pk = ? LIMIT n`).
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, require_equals = true, default_value = "false", default_missing_value = "true")]
    pub no_lower_bound: bool,
    /// Reads: `ck >= ? AND ck < ?`.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, require_equals = true, default_value = "false", default_missing_value = "true")]
    pub provide_upper_bound: bool,
    /// Reads: `ck IN (?, …)` with rows-per-request keys.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, require_equals = true, default_value = "false", default_missing_value = "true")]
    pub in_restriction: bool,
    /// Reads: none, asc or desc.
    #[arg(long, default_value = "none")]
    pub select_order_by: String,
    /// Reads: append ScyllaDB's BYPASS CACHE.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, require_equals = true, default_value = "false", default_missing_value = "true")]
    pub bypass_cache: bool,
    /// Scan: number of token sub-ranges (each one operation).
    #[arg(long, default_value_t = 1)]
    pub range_count: u64,
    /// Timeseries: start of the series in ns since the epoch (writes: default now; reads:
    /// the writer's printed value).
    #[arg(long, default_value_t = 0)]
    pub start_timestamp: i64,
    /// Timeseries reads: rows/s the writer wrote (its -max-rate).
    #[arg(long, default_value_t = 0)]
    pub write_rate: u64,
    /// Timeseries reads: uniform or hnormal (half-normal, newest rows most often).
    #[arg(long, default_value = "uniform")]
    pub distribution: String,
    /// (Cairn) Mixed mode weights, e.g. `write=1,read=1` (scylla-bench's 50/50, the
    /// default) or `write=4,delete=1` (seed 003's WRITE:DELETE = 4:1).
    #[arg(long, default_value = "write=1,read=1")]
    pub mixed_ratio: String,
    /// (Cairn) Run this long before measuring; warm-up operations are not counted.
    #[arg(long, default_value = "0")]
    pub warmup: String,
    /// (Cairn) Tokio worker threads of the client (1 = a single-threaded runtime, lightest).
    #[arg(long, default_value_t = 1)]
    pub client_threads: usize,
    /// (Cairn) Ask for rows without their result metadata (the EXECUTE's Skip_metadata
    /// flag), decoding them with the columns the statement was prepared with. scylla-bench's
    /// gocql does this for every prepared statement that returns rows; `false` makes the node
    /// send the metadata with every page.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub skip_metadata: bool,
    /// (Cairn) PID of the server, on this machine: report its CPU (utime+stime from
    /// /proc/PID/stat) per operation over the measured window.
    #[arg(long)]
    pub server_pid: Option<u32>,
    /// Write the per-second HDR histograms (tags write/read/delete/scan, co-… for the
    /// coordinated-omission-fixed ones) as an HdrHistogram interval log.
    #[arg(long, value_name = "FILE")]
    pub hdr_latency_file: Option<PathBuf>,
    /// (Cairn) Draw throughput and latency percentiles over time; PNG or SVG by extension.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
}

/// Rewrites Go-style single-dash long flags (`-mode`) to `--mode` for `cairn bench`, so
/// scylla-bench command lines work unchanged. Other subcommands are left alone.
pub fn normalize_args(
    args: impl IntoIterator<Item = std::ffi::OsString>,
) -> Vec<std::ffi::OsString> {
    let mut out: Vec<std::ffi::OsString> = args.into_iter().collect();
    if out.get(1).and_then(|a| a.to_str()) != Some("bench") {
        return out;
    }
    for a in out.iter_mut().skip(2) {
        if let Some(s) = a.to_str() {
            let b = s.as_bytes();
            if b.len() > 2 && b[0] == b'-' && b[1].is_ascii_alphabetic() {
                *a = format!("-{s}").into();
            }
        }
    }
    out
}

/// Parses a Go duration: `1h2m3.5s`, `500ms`, `250us`, `0`.
pub fn parse_go_duration(s: &str) -> Result<Duration> {
    let s = s.trim();
    if s == "0" || s.is_empty() {
        return Ok(Duration::ZERO);
    }
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| anyhow!("invalid duration {s:?}: missing unit"))?;
        let v: f64 = rest[..n]
            .parse()
            .map_err(|_| anyhow!("invalid duration {s:?}"))?;
        rest = &rest[n..];
        let u = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let mult = match &rest[..u] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            other => bail!("invalid duration {s:?}: unknown unit {other:?}"),
        };
        total += v * mult;
        rest = &rest[u..];
    }
    Ok(Duration::from_secs_f64(total))
}

/// Row sizes: fixed or uniform between two bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowSize {
    Fixed(usize),
    Uniform(usize, usize),
}

impl RowSize {
    pub fn parse(s: &str) -> Result<RowSize> {
        if let Some(r) = s.strip_prefix("uniform:") {
            let (a, b) = r
                .split_once("..")
                .ok_or_else(|| anyhow!("invalid row size {s:?}: expected uniform:MIN..MAX"))?;
            let (a, b): (usize, usize) = (a.trim().parse()?, b.trim().parse()?);
            if a > b {
                bail!("invalid row size {s:?}: MIN > MAX");
            }
            return Ok(RowSize::Uniform(a, b));
        }
        let v = s
            .strip_prefix("fixed:")
            .unwrap_or(s)
            .trim()
            .parse()
            .with_context(|| format!("invalid row size {s:?}"))?;
        Ok(RowSize::Fixed(v))
    }

    /// Size of the value of (pk, ck): deterministic, so reads can validate it.
    fn size(&self, seed: u64) -> usize {
        match *self {
            RowSize::Fixed(n) => n,
            RowSize::Uniform(a, b) => a + (seed % (b - a + 1) as u64) as usize,
        }
    }
}

impl std::fmt::Display for RowSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RowSize::Fixed(n) => write!(f, "Fixed({n})"),
            RowSize::Uniform(a, b) => write!(f, "Uniform(min={a}, max={b})"),
        }
    }
}

/// Fills `buf` with the value of row (pk, ck): its size and bytes depend only on the keys.
pub fn fill_value(buf: &mut Vec<u8>, size: RowSize, pk: i64, ck: i64) {
    let seed = workload::mix((pk as u64).wrapping_mul(0x100_0000_01B3) ^ ck as u64);
    let n = size.size(seed);
    buf.clear();
    buf.reserve(n);
    let mut r = Rng::new(seed);
    while buf.len() + 8 <= n {
        buf.extend_from_slice(&r.next_u64().to_le_bytes());
    }
    let tail = n - buf.len();
    buf.extend_from_slice(&r.next_u64().to_le_bytes()[..tail]);
}

pub fn unix_nanos() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

fn parse_consistency(s: &str) -> Result<Consistency> {
    Ok(match s.to_ascii_lowercase().as_str() {
        "any" => Consistency::Any,
        "one" => Consistency::One,
        "two" => Consistency::Two,
        "three" => Consistency::Three,
        "quorum" => Consistency::Quorum,
        "all" => Consistency::All,
        "local_quorum" => Consistency::LocalQuorum,
        "each_quorum" => Consistency::EachQuorum,
        "local_one" => Consistency::LocalOne,
        other => bail!("unknown consistency level {other:?}"),
    })
}

fn parse_mix(s: &str) -> Result<Vec<(Kind, u32)>> {
    let mut v = vec![];
    for part in s.split(',').filter(|p| !p.trim().is_empty()) {
        let (k, w) = part
            .split_once(['=', ':'])
            .ok_or_else(|| anyhow!("invalid -mixed-ratio {s:?}: expected kind=weight,…"))?;
        let kind = match k.trim() {
            "write" => Kind::Write,
            "read" => Kind::Read,
            "delete" => Kind::Delete,
            other => bail!("invalid -mixed-ratio kind {other:?} (write, read, delete)"),
        };
        let w: u32 = w.trim().parse().context("invalid -mixed-ratio weight")?;
        if w > 0 {
            v.push((kind, w));
        }
    }
    if v.is_empty() {
        bail!("-mixed-ratio {s:?} has no positive weight");
    }
    Ok(v)
}

/// Process CPU time (user + system) from getrusage.
fn self_cpu() -> Duration {
    // SAFETY: getrusage writes into the zeroed struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// CPU time (utime + stime) of another process, from /proc/PID/stat.
pub fn proc_cpu(pid: u32) -> Result<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .with_context(|| format!("reading /proc/{pid}/stat"))?;
    // Fields after the command name (which may contain spaces) start after the last ')'.
    let rest = &stat[stat.rfind(')').ok_or_else(|| anyhow!("bad /proc stat"))? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 (1-based), i.e. 11 and 12 after the state field.
    let ticks: u64 = f[11].parse::<u64>()? + f[12].parse::<u64>()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Ok(Duration::from_nanos(ticks * 1_000_000_000 / hz))
}

/// A statement prepared on every connection: its text, to prepare it again if the node
/// forgets it, and its id.
struct Statement {
    query: String,
    id: Bytes,
}

/// Everything a worker needs, shared.
struct Shared {
    args: BenchArgs,
    client: wire::Client,
    consistency: Consistency,
    row_size: RowSize,
    insert: Statement,
    read: Statement,
    delete: Statement,
    scan: Statement,
    mix: Vec<(Kind, u32)>,
    stop: AtomicBool,
    /// Set once every connection is closed (the run then stops and exits with status 1).
    lost: AtomicBool,
    /// Set when the warm-up is over: workers then discard what they measured so far.
    epoch: AtomicU64,
    errors_printed: AtomicU64,
    slots: Vec<Mutex<Interval>>,
    /// Each worker's request deadline (`-timeout`).
    deadlines: deadline::Deadlines,
    run_start_ns: i64,
    period_ns: i64,
}

/// Runs `cairn bench`.
pub fn run(args: BenchArgs) -> Result<()> {
    let rt = if args.client_threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(args.client_threads)
            .enable_all()
            .build()?
    };
    rt.block_on(run_async(args))
}

fn schema_and_statements(args: &BenchArgs) -> (String, Vec<String>) {
    let ks = &args.keyspace;
    let t = &args.table;
    let ddl = vec![
        format!(
            "CREATE KEYSPACE IF NOT EXISTS {ks} WITH REPLICATION = {{'class': 'NetworkTopologyStrategy', 'replication_factor': {}}}",
            args.replication_factor
        ),
        format!(
            "CREATE TABLE IF NOT EXISTS {ks}.{t} (pk bigint, ck bigint, v blob, PRIMARY KEY(pk, ck)) WITH compression = {{ }}"
        ),
    ];
    (format!("{ks}.{t}"), ddl)
}

fn read_query(args: &BenchArgs, table: &str) -> String {
    let mut q = format!("SELECT pk, ck, v FROM {table} WHERE pk = ?");
    if args.in_restriction {
        let marks = vec!["?"; args.rows_per_request as usize].join(", ");
        q.push_str(&format!(" AND ck IN ({marks})"));
    } else if !args.no_lower_bound {
        q.push_str(" AND ck >= ?");
        if args.provide_upper_bound {
            q.push_str(" AND ck < ?");
        }
    }
    match args.select_order_by.as_str() {
        "asc" => q.push_str(" ORDER BY ck ASC"),
        "desc" => q.push_str(" ORDER BY ck DESC"),
        _ => {}
    }
    if !args.in_restriction && !args.provide_upper_bound {
        q.push_str(&format!(" LIMIT {}", args.rows_per_request));
    }
    if args.bypass_cache {
        q.push_str(" BYPASS CACHE");
    }
    q
}

async fn run_async(args: BenchArgs) -> Result<()> {
    let timeout = parse_go_duration(&args.timeout)?;
    let duration = parse_go_duration(&args.duration)?;
    let warmup = parse_go_duration(&args.warmup)?;
    let row_size = RowSize::parse(&args.clustering_row_size)?;
    let consistency = parse_consistency(&args.consistency_level)?;
    let mix = match args.mode {
        Mode::Mixed => parse_mix(&args.mixed_ratio)?,
        Mode::Write => vec![(Kind::Write, 1)],
        Mode::Read => vec![(Kind::Read, 1)],
        Mode::Delete => vec![(Kind::Delete, 1)],
        Mode::Scan => vec![(Kind::Scan, 1)],
    };
    if args.concurrency == 0 || args.rows_per_request == 0 {
        bail!("-concurrency and -rows-per-request must be positive");
    }
    if args.workload != WorkloadKind::Sequential && duration.is_zero() && args.mode != Mode::Scan {
        bail!("the {:?} workload needs -duration", args.workload);
    }
    if args.mode == Mode::Mixed && duration.is_zero() {
        bail!("mixed mode needs -duration");
    }
    let ts_read =
        args.workload == WorkloadKind::Timeseries && mix.iter().any(|(k, _)| *k == Kind::Read);
    if args.workload == WorkloadKind::Timeseries && !ts_read && args.max_rate == 0 {
        bail!("timeseries writes need -max-rate");
    }
    if ts_read && (args.write_rate == 0 || args.start_timestamp == 0) {
        bail!("timeseries reads need -write-rate and -start-timestamp");
    }

    let nodes: Vec<String> = args
        .nodes
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(|n| {
            if n.contains(':') && !n.starts_with('[') && n.matches(':').count() == 1 {
                n.to_string()
            } else {
                format!("{n}:9042")
            }
        })
        .collect();
    // The driver sets the schema up (DDL waits for schema agreement, as it should) on one
    // connection, and is closed before the run: the run's requests go through `wire`.
    let mut builder = SessionBuilder::new()
        .known_nodes(&nodes)
        .pool_size(PoolSize::PerHost(std::num::NonZeroUsize::MIN))
        .connection_timeout(timeout.max(Duration::from_secs(5)));
    if let Some(u) = &args.username {
        builder = builder.user(u, args.password.clone().unwrap_or_default());
    }
    let session = builder
        .build()
        .await
        .with_context(|| format!("connecting to {}", nodes.join(",")))?;
    let (table, ddl) = schema_and_statements(&args);
    for q in &ddl {
        session
            .query_unpaged(q.as_str(), &[])
            .await
            .with_context(|| q.clone())?;
    }
    if args.truncate_table {
        session
            .query_unpaged(format!("TRUNCATE TABLE {table}"), &[])
            .await
            .context("TRUNCATE")?;
    }
    drop(session);

    let auth = args.username.as_ref().map(|u| wire::Auth {
        username: u.clone(),
        password: args.password.clone().unwrap_or_default(),
    });
    let client = wire::Client::connect(
        &nodes,
        args.connection_count,
        args.client_compression.then_some(Compression::Lz4),
        auth.as_ref(),
        timeout.max(Duration::from_secs(5)),
    )
    .await
    .map_err(|e| anyhow!(e))?;
    let prep = |query: String| {
        let client = &client;
        async move {
            let id = client
                .prepare(&query)
                .await
                .map_err(|e| anyhow!("preparing {query}: {e}"))?;
            anyhow::Ok(Statement { query, id })
        }
    };
    let insert = prep(format!("INSERT INTO {table} (pk, ck, v) VALUES (?, ?, ?)")).await?;
    let read = prep(read_query(&args, &table)).await?;
    let delete = if args.rows_per_request > 1 {
        prep(format!(
            "DELETE FROM {table} WHERE pk = ? AND ck >= ? AND ck < ?"
        ))
        .await?
    } else {
        prep(format!("DELETE FROM {table} WHERE pk = ? AND ck = ?")).await?
    };
    let scan = prep(format!(
        "SELECT pk, ck, v FROM {table} WHERE token(pk) >= ? AND token(pk) <= ?"
    ))
    .await?;

    let run_start_ns = if args.start_timestamp != 0 {
        args.start_timestamp
    } else {
        unix_nanos()
    };
    let period_ns = if ts_read {
        (args.partition_count as f64 * 1e9 / args.write_rate as f64) as i64
    } else if args.max_rate > 0 {
        (args.partition_count as f64 * 1e9 / args.max_rate as f64) as i64
    } else {
        1000
    }
    .max(1);

    print_config(&args, row_size, timeout, duration, run_start_ns);

    let shared = Arc::new(Shared {
        slots: (0..args.concurrency)
            .map(|_| Mutex::new(Interval::default()))
            .collect(),
        deadlines: deadline::Deadlines::new(args.concurrency as usize, timeout),
        args: args.clone(),
        client,
        consistency,
        row_size,
        insert,
        read,
        delete,
        scan,
        mix,
        stop: AtomicBool::new(false),
        lost: AtomicBool::new(false),
        epoch: AtomicU64::new(0),
        errors_printed: AtomicU64::new(0),
        run_start_ns,
        period_ns,
    });

    let reaper = {
        let sh = Arc::clone(&shared);
        tokio::spawn(async move { sh.deadlines.reap().await })
    };
    let start = Instant::now();
    let mut workers = Vec::new();
    for i in 0..args.concurrency {
        let sh = Arc::clone(&shared);
        workers.push(tokio::spawn(async move { worker(sh, i, start).await }));
    }
    let done = Arc::new(AtomicU64::new(0));
    let reporter = {
        let sh = Arc::clone(&shared);
        let done = Arc::clone(&done);
        tokio::spawn(async move { reporter(sh, start, duration, warmup, done).await })
    };
    for w in workers {
        w.await?;
    }
    reaper.abort();
    done.store(1, Ordering::Release);
    let report = reporter.await??;
    if report.critical {
        std::process::exit(1);
    }
    Ok(())
}

fn print_config(args: &BenchArgs, size: RowSize, timeout: Duration, dur: Duration, start: i64) {
    let rate = if args.max_rate > 0 {
        args.max_rate.to_string()
    } else {
        "unlimited".into()
    };
    println!("Configuration");
    println!("Mode:\t\t\t {:?}", args.mode);
    if args.mode == Mode::Mixed {
        println!("Mixed ratio:\t\t {}", args.mixed_ratio);
    }
    println!("Workload:\t\t {:?}", args.workload);
    println!(
        "Timeout:\t\t {}",
        stats::go_duration(timeout.as_nanos() as f64)
    );
    println!("Consistency level:\t {}", args.consistency_level);
    println!("Partition count:\t {}", args.partition_count);
    if args.workload == WorkloadKind::Sequential && args.partition_offset != 0 {
        println!("Partition offset:\t {}", args.partition_offset);
    }
    println!("Clustering rows:\t {}", args.clustering_row_count);
    println!("Clustering row size:\t {size}");
    println!("Rows per request:\t {}", args.rows_per_request);
    if matches!(args.mode, Mode::Read | Mode::Mixed | Mode::Scan) {
        println!("Page size:\t\t {}", args.page_size);
    }
    println!("Concurrency:\t\t {}", args.concurrency);
    println!("Connections:\t\t {}", args.connection_count);
    println!("Maximum rate:\t\t {rate}");
    println!("Client compression:\t {}", args.client_compression);
    if args.workload == WorkloadKind::Timeseries {
        println!("Start timestamp:\t {start}");
    }
    if !dur.is_zero() {
        println!(
            "Duration:\t\t {}",
            stats::go_duration(dur.as_nanos() as f64)
        );
    }
}

fn make_workload(sh: &Shared, i: u64) -> Box<dyn Workload> {
    let a = &sh.args;
    let seed = workload::mix(i.wrapping_add(sh.run_start_ns as u64));
    match a.workload {
        WorkloadKind::Sequential => Box::new(workload::Sequential::new(
            i,
            a.concurrency,
            a.partition_count,
            a.clustering_row_count,
            a.partition_offset,
            a.iterations,
        )),
        WorkloadKind::Uniform => Box::new(workload::Uniform::new(
            seed,
            a.partition_count,
            a.clustering_row_count,
            a.partition_offset,
        )),
        WorkloadKind::Timeseries => {
            if sh.mix.iter().any(|(k, _)| *k == Kind::Read) {
                Box::new(workload::TimeseriesRead::new(
                    seed,
                    a.partition_count,
                    a.clustering_row_count,
                    a.partition_offset,
                    sh.run_start_ns,
                    sh.period_ns,
                    a.distribution == "hnormal",
                ))
            } else {
                Box::new(workload::TimeseriesWrite::new(
                    i,
                    a.concurrency,
                    a.partition_count,
                    a.clustering_row_count,
                    a.partition_offset,
                    sh.run_start_ns,
                    sh.period_ns,
                ))
            }
        }
    }
}

/// Token sub-ranges of the Murmur3 ring for scan mode.
fn token_range(i: u64, n: u64) -> (i64, i64) {
    let span = u64::MAX as u128 + 1;
    let lo = (span * i as u128 / n as u128) as i128 + i64::MIN as i128;
    let hi = (span * (i + 1) as u128 / n as u128) as i128 + i64::MIN as i128 - 1;
    (lo as i64, hi as i64)
}

/// Outcome of one request: rows affected, or an error message.
type OpResult = std::result::Result<u64, String>;

async fn worker(sh: Arc<Shared>, i: u64, start: Instant) {
    let a = &sh.args;
    let mut wl = make_workload(&sh, i);
    let mut rng = Rng::new(workload::mix(i ^ 0xA5A5));
    let total_weight: u32 = sh.mix.iter().map(|(_, w)| w).sum();
    let deadline = match parse_go_duration(&a.duration) {
        Ok(d) if !d.is_zero() => Some(start + d),
        _ => None,
    };
    // Per-worker schedule under -max-rate: request k is due at start + k·period.
    let period =
        (a.max_rate > 0).then(|| Duration::from_secs_f64(a.concurrency as f64 / a.max_rate as f64));
    let mut due = start;
    let mut epoch = sh.epoch.load(Ordering::Relaxed);
    let mut values: Vec<(i64, i64, Vec<u8>)> = Vec::new();
    let mut keys: Vec<i64> = Vec::new();
    let mut scan_next = i;
    let mut scan_pass = 0u64;
    let w = i as usize;
    // The previous operation's end: nothing between it and the next send waits, so it also
    // serves as that send's time (one clock read per operation instead of three).
    let mut now = Instant::now();
    loop {
        if sh.stop.load(Ordering::Relaxed) || deadline.is_some_and(|d| now >= d) {
            break;
        }
        let kind = if sh.mix.len() == 1 {
            sh.mix[0].0
        } else {
            let mut r = rng.below(total_weight as u64) as u32;
            let mut k = sh.mix[0].0;
            for (kk, w) in &sh.mix {
                if r < *w {
                    k = *kk;
                    break;
                }
                r -= w;
            }
            k
        };
        if kind == Kind::Scan {
            let ranges = a.range_count.max(1);
            if scan_next >= ranges {
                // This worker's share of the ranges is done: one iteration more.
                scan_pass += 1;
                if a.iterations != 0 && scan_pass >= a.iterations {
                    break;
                }
                scan_next %= ranges;
            }
        } else if wl.is_done() {
            break;
        }
        if let Some(p) = period {
            due += p;
            if due > Instant::now() {
                tokio::time::sleep_until(due.into()).await;
            }
            now = Instant::now();
        }
        let sent = now;
        let res: OpResult = match kind {
            Kind::Write => write_op(&sh, w, sent, wl.as_mut(), &mut values).await,
            Kind::Read => read_op(&sh, w, sent, wl.as_mut(), &mut keys).await,
            Kind::Delete => delete_op(&sh, w, sent, wl.as_mut()).await,
            Kind::Scan => {
                let (lo, hi) = token_range(scan_next, a.range_count.max(1));
                scan_next += a.concurrency;
                scan_op(&sh, w, sent, lo, hi).await
            }
        };
        let end = Instant::now();
        now = end;
        // Recorded straight into this worker's slot: one uncontended lock per operation.
        // (Merging per-worker histograms every few ms cost more CPU than the driver.)
        let mut slot = sh.slots[i as usize].lock().unwrap();
        // An operation that began during the warm-up is not counted.
        if sh.epoch.load(Ordering::Relaxed) == epoch {
            match res {
                Ok(rows) => {
                    let raw = (end - sent).as_nanos() as u64;
                    let co = period.map(|_| (end - due.min(sent)).as_nanos() as u64);
                    slot.record(kind, rows, raw, co);
                }
                Err(msg) => {
                    slot.errors += 1;
                    if sh.errors_printed.fetch_add(1, Ordering::Relaxed) < 10 {
                        eprintln!("operation failed: {msg}");
                    }
                }
            }
        }
        drop(slot);
        // There is no reconnection: once every connection is closed nothing can succeed, so
        // end the run instead of failing operations as fast as the workers can loop.
        if sh.client.all_closed() && !sh.lost.swap(true, Ordering::Relaxed) {
            eprintln!("every connection to the nodes is closed: stopping the run");
            sh.stop.store(true, Ordering::Relaxed);
        }
        epoch = sh.epoch.load(Ordering::Relaxed);
    }
}

/// Sends one request (an EXECUTE or BATCH of `stmt`, whose body `encode` writes) on the next
/// connection and waits for its result, within `-timeout` of `sent`. A node that no longer
/// knows the statement (UNPREPARED: it restarted, or evicted it) gets it prepared again on
/// that connection and the request once more, as drivers do.
async fn request(
    sh: &Shared,
    worker: usize,
    sent: Instant,
    stmt: &Statement,
    opcode: Opcode,
    encode: impl Fn(&mut Vec<u8>),
) -> std::result::Result<ResultBody, String> {
    let conn = sh.client.next();
    let compression = sh.client.compression();
    let frame = sh
        .deadlines
        .run(worker, sent, pin!(conn.send(opcode, &encode)))
        .await?;
    match wire::decode_result(frame, compression) {
        Err(e) if e.is_unprepared() => {
            let id = sh
                .deadlines
                .run(worker, sent, pin!(conn.prepare(&stmt.query)))
                .await
                .map_err(|e| format!("{e} (preparing {:?} again)", stmt.query))?;
            if id != stmt.id {
                return Err(format!(
                    "the node prepared {:?} again under another id",
                    stmt.query
                ));
            }
            let frame = sh
                .deadlines
                .run(worker, sent, pin!(conn.send(opcode, &encode)))
                .await?;
            wire::decode_result(frame, compression).map_err(|e| e.to_string())
        }
        r => r.map_err(|e| e.to_string()),
    }
}

async fn write_op(
    sh: &Shared,
    worker: usize,
    sent: Instant,
    wl: &mut dyn Workload,
    values: &mut Vec<(i64, i64, Vec<u8>)>,
) -> OpResult {
    let pk = wl.next_partition_key();
    let n = sh.args.rows_per_request as usize;
    let mut used = 0;
    while used < n {
        if wl.is_partition_done() && used > 0 {
            break;
        }
        let ck = wl.next_clustering_key();
        if values.len() <= used {
            values.push((0, 0, Vec::new()));
        }
        let v = &mut values[used];
        v.0 = pk;
        v.1 = ck;
        fill_value(&mut v.2, sh.row_size, pk, ck);
        used += 1;
        if wl.is_partition_done() {
            break;
        }
    }
    let (id, c) = (&sh.insert.id[..], sh.consistency);
    if n == 1 {
        let (pk, ck, v) = &values[0];
        let (pk, ck) = (pk.to_be_bytes(), ck.to_be_bytes());
        let vals: [&[u8]; 3] = [&pk, &ck, v];
        request(sh, worker, sent, &sh.insert, Opcode::Execute, |b| {
            wire::execute_body(b, id, c, &vals, None)
        })
        .await?;
    } else {
        // An unlogged batch of the rows (fewer when the partition ended early).
        let keys: Vec<([u8; 8], [u8; 8])> = values[..used]
            .iter()
            .map(|(pk, ck, _)| (pk.to_be_bytes(), ck.to_be_bytes()))
            .collect();
        let rows: Vec<[&[u8]; 3]> = keys
            .iter()
            .zip(&values[..used])
            .map(|((pk, ck), (_, _, v))| [&pk[..], &ck[..], v.as_slice()])
            .collect();
        request(sh, worker, sent, &sh.insert, Opcode::Batch, |b| {
            wire::batch_body(b, id, c, &rows)
        })
        .await?;
    }
    Ok(used as u64)
}

/// `keys` is the worker's scratch for `-in-restriction` values (pk, then the clustering keys),
/// reused so that a read allocates nothing of its own.
async fn read_op(
    sh: &Shared,
    worker: usize,
    sent: Instant,
    wl: &mut dyn Workload,
    keys: &mut Vec<i64>,
) -> OpResult {
    let a = &sh.args;
    let pk = wl.next_partition_key();
    let ck = wl.next_clustering_key();
    keys.clear();
    keys.extend([pk, ck]);
    // Sequential reads advance over the rows the request covers.
    if a.workload == WorkloadKind::Sequential || a.in_restriction {
        for _ in 1..a.rows_per_request {
            if wl.is_partition_done() {
                break;
            }
            let k = wl.next_clustering_key();
            if a.in_restriction {
                keys.push(k);
            }
        }
    }
    let rpr = a.rows_per_request as i64;
    let (pk, ck, hi) = (pk.to_be_bytes(), ck.to_be_bytes(), (ck + rpr).to_be_bytes());
    if a.in_restriction {
        // Past the partition's last row: consecutive keys, so there are always rpr markers.
        while keys.len() < rpr as usize + 1 {
            let last = keys[keys.len() - 1];
            keys.push(last + 1);
        }
        let bytes: Vec<[u8; 8]> = keys.iter().map(|k| k.to_be_bytes()).collect();
        let vals: Vec<&[u8]> = bytes.iter().map(|k| &k[..]).collect();
        paged(sh, worker, sent, &sh.read, &vals).await
    } else if a.no_lower_bound {
        paged(sh, worker, sent, &sh.read, &[&pk]).await
    } else if a.provide_upper_bound {
        paged(sh, worker, sent, &sh.read, &[&pk, &ck, &hi]).await
    } else {
        paged(sh, worker, sent, &sh.read, &[&pk, &ck]).await
    }
}

async fn delete_op(sh: &Shared, worker: usize, sent: Instant, wl: &mut dyn Workload) -> OpResult {
    let pk = wl.next_partition_key();
    let ck = wl.next_clustering_key();
    let n = sh.args.rows_per_request;
    let (id, c) = (&sh.delete.id[..], sh.consistency);
    let (pkb, ckb) = (pk.to_be_bytes(), ck.to_be_bytes());
    if n > 1 {
        for _ in 1..n {
            if wl.is_partition_done() {
                break;
            }
            wl.next_clustering_key();
        }
        let hi = (ck + n as i64).to_be_bytes();
        let vals: [&[u8]; 3] = [&pkb, &ckb, &hi];
        request(sh, worker, sent, &sh.delete, Opcode::Execute, |b| {
            wire::execute_body(b, id, c, &vals, None)
        })
        .await?;
    } else {
        let vals: [&[u8]; 2] = [&pkb, &ckb];
        request(sh, worker, sent, &sh.delete, Opcode::Execute, |b| {
            wire::execute_body(b, id, c, &vals, None)
        })
        .await?;
    }
    Ok(n)
}

async fn scan_op(sh: &Shared, worker: usize, sent: Instant, lo: i64, hi: i64) -> OpResult {
    let (lo, hi) = (lo.to_be_bytes(), hi.to_be_bytes());
    paged(sh, worker, sent, &sh.scan, &[&lo, &hi]).await
}

/// Executes a prepared read page by page; counts (and with -validate-data checks) the rows.
/// Each page is one request, with its own `-timeout`.
async fn paged(
    sh: &Shared,
    worker: usize,
    sent: Instant,
    stmt: &Statement,
    vals: &[&[u8]],
) -> OpResult {
    let mut state: Option<Bytes> = None;
    let mut rows = 0u64;
    let mut page_sent = sent;
    let c = sh.consistency;
    loop {
        let page = wire::Page {
            size: sh.args.page_size.max(1),
            state: state.as_deref(),
            skip_metadata: sh.args.skip_metadata,
        };
        let res = request(sh, worker, page_sent, stmt, Opcode::Execute, |b| {
            wire::execute_body(b, &stmt.id, c, vals, Some(page))
        })
        .await?;
        let ResultBody::Rows(res) = res else {
            return Err(format!("{:?} returned no rows result", stmt.query));
        };
        rows += res.rows_count as u64;
        if sh.args.validate_data {
            validate(sh, &res)?;
        }
        match res.paging_state {
            None => break,
            Some(s) => state = Some(s),
        }
        page_sent = Instant::now();
    }
    Ok(rows)
}

/// Checks each row's value against the one derived from its (pk, ck). The rows are read
/// with the statement's columns, pk bigint, ck bigint, v blob, whether or not the node sent
/// their metadata.
fn validate(sh: &Shared, rows: &Rows) -> std::result::Result<(), String> {
    if rows.column_count != 3 {
        return Err(format!(
            "a row of {} columns, expected 3 (pk, ck, v)",
            rows.column_count
        ));
    }
    let bad = |e: String| format!("undecodable row: {e}");
    let bigint = |b: Option<Bytes>| -> std::result::Result<i64, String> {
        let b = b.ok_or("null key")?;
        let a: [u8; 8] = b[..]
            .try_into()
            .map_err(|_| format!("a bigint of {} bytes", b.len()))?;
        Ok(i64::from_be_bytes(a))
    };
    let mut r = Reader::new(rows.rows_content.clone());
    let mut expected = Vec::new();
    for _ in 0..rows.rows_count {
        let pk = bigint(r.read_bytes().map_err(|e| bad(e.to_string()))?).map_err(bad)?;
        let ck = bigint(r.read_bytes().map_err(|e| bad(e.to_string()))?).map_err(bad)?;
        let v = r
            .read_bytes()
            .map_err(|e| bad(e.to_string()))?
            .unwrap_or_default();
        fill_value(&mut expected, sh.row_size, pk, ck);
        if v[..] != expected[..] {
            return Err(if v.len() == expected.len() {
                format!("data corruption in pk({pk}), ck({ck}): content differs")
            } else {
                format!(
                    "data corruption in pk({pk}), ck({ck}): {} bytes read, {} expected",
                    v.len(),
                    expected.len()
                )
            });
        }
    }
    Ok(())
}

/// What the reporter hands back.
struct Report {
    critical: bool,
}

async fn reporter(
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

    let server_pid = sh.args.server_pid;
    let mut measured_from = start;
    let mut client_cpu0 = self_cpu();
    let mut server_cpu0 = match server_pid {
        Some(p) => Some(proc_cpu(p)?),
        None => None,
    };
    let mut warming = !warmup.is_zero();
    if warming {
        println!(
            "\nWarming up for {}…",
            stats::go_duration(warmup.as_nanos() as f64)
        );
    } else {
        println!("{}", stats::header());
    }

    let mut total = Interval::default();
    let mut sec = Interval::default();
    let mut points: Vec<Point> = Vec::new();
    let mut tick = 1u64;
    loop {
        let next = start + Duration::from_secs(tick);
        let finished = loop {
            if done.load(Ordering::Acquire) == 1 {
                break true;
            }
            let now = Instant::now();
            if now >= next {
                break false;
            }
            tokio::time::sleep((next - now).min(Duration::from_millis(50))).await;
        };
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
            measured_from = now;
            client_cpu0 = self_cpu();
            if let Some(p) = server_pid {
                server_cpu0 = Some(proc_cpu(p)?);
            }
            println!("{}", stats::header());
            tick += 1;
            continue;
        }
        for s in &sh.slots {
            let mut g = s.lock().unwrap();
            sec.add(&g);
            g.reset();
        }
        if !warming && (sec.ops > 0 || sec.errors > 0 || !finished) {
            let elapsed = (now - measured_from).as_secs_f64();
            let span = if finished {
                (now - (start + Duration::from_secs(tick - 1)))
                    .as_secs_f64()
                    .max(1e-3)
            } else {
                1.0
            };
            let merged = sec.merged(sec.has_co());
            let s = stats::summarize(&merged);
            let ops_s = (sec.ops as f64 / span).round() as u64;
            let rows_s = (sec.rows as f64 / span).round() as u64;
            // The stragglers after the last full second go to the totals only.
            let show = !finished || span >= 0.5;
            if show {
                println!("{}", stats::line(elapsed, ops_s, rows_s, sec.errors, &s));
            }
            points.push(Point {
                t: elapsed,
                ops_s: ops_s as f64,
                rows_s: rows_s as f64,
                max_us: s.max as f64 / 1e3,
                p999_us: s.p999 as f64 / 1e3,
                p99_us: s.p99 as f64 / 1e3,
                p90_us: s.p90 as f64 / 1e3,
                p50_us: s.p50 as f64 / 1e3,
            });
            if !show {
                points.pop();
            }
            if let Some(log) = hdr_log.as_mut().filter(|_| show) {
                write_hdr_interval(log, &sec, elapsed, span)?;
            }
            total.add(&sec);
        }
        sec.reset();
        if finished {
            break;
        }
        tick += 1;
    }
    let elapsed = Instant::now() - measured_from;
    let client_cpu = self_cpu().saturating_sub(client_cpu0);
    let server_cpu = match (server_pid, server_cpu0) {
        (Some(p), Some(c0)) => proc_cpu(p).ok().map(|c| c.saturating_sub(c0)),
        _ => None,
    };
    drop(hdr_log);
    if let Some(mut f) = hdr_file {
        use std::io::Write;
        f.flush()?;
    }

    print_results(&total, elapsed, client_cpu, server_cpu, server_pid);

    if let Some(p) = &sh.args.plot {
        plot::draw(
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

/// Appends one interval's histograms to the HDR log, one tag per operation kind (and `co-`
/// for the coordinated-omission-fixed ones), as scylla-bench's log has them.
fn write_hdr_interval<W: std::io::Write>(
    log: &mut IntervalLogWriter<'_, '_, W, V2DeflateSerializer>,
    sec: &Interval,
    elapsed: f64,
    span: f64,
) -> Result<()> {
    let from = Duration::from_secs_f64((elapsed - span).max(0.0));
    let len = Duration::from_secs_f64(span);
    for k in stats::KINDS {
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
fn print_results(
    total: &Interval,
    elapsed: Duration,
    client_cpu: Duration,
    server_cpu: Option<Duration>,
    server_pid: Option<u32>,
) {
    let secs = elapsed.as_secs_f64().max(1e-9);
    println!("\nResults");
    println!(
        "Time (avg):\t {}",
        stats::go_duration(elapsed.as_nanos() as f64)
    );
    println!("Total ops:\t {}", total.ops);
    println!("Total rows:\t {}", total.rows);
    println!("Total errors:\t {}", total.errors);
    println!("Operations/s:\t {}", (total.ops as f64 / secs).round());
    println!("Rows/s:\t\t {}", (total.rows as f64 / secs).round());
    let used: Vec<Kind> = stats::KINDS
        .into_iter()
        .filter(|k| !total.raw[*k as usize].is_empty())
        .collect();
    let has_co = total.has_co();
    if used.len() > 1 {
        for k in &used {
            print!(
                "{}",
                stats::latency_block(
                    &format!("Latency ({})", k.name()),
                    &stats::summarize(&total.raw[*k as usize])
                )
            );
            if has_co {
                print!(
                    "{}",
                    stats::latency_block(
                        &format!("Coordinated-omission-fixed latency ({})", k.name()),
                        &stats::summarize(&total.co[*k as usize])
                    )
                );
            }
        }
    } else {
        print!(
            "{}",
            stats::latency_block("Latency", &stats::summarize(&total.merged(false)))
        );
        if has_co {
            print!(
                "{}",
                stats::latency_block(
                    "Coordinated-omission-fixed latency",
                    &stats::summarize(&total.merged(true))
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
        println!(
            "Server CPU:\t {:.2} µs/op ({:.2} s, {:.0} % of a core; pid {})",
            c.as_secs_f64() * 1e6 / ops,
            c.as_secs_f64(),
            c.as_secs_f64() * 100.0 / secs,
            server_pid.unwrap_or(0)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_parse() {
        assert_eq!(parse_go_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_go_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(
            parse_go_duration("250ms").unwrap(),
            Duration::from_millis(250)
        );
        assert_eq!(parse_go_duration("0").unwrap(), Duration::ZERO);
        assert!(parse_go_duration("10").is_err());
        assert!(parse_go_duration("3x").is_err());
    }

    #[test]
    fn row_sizes() {
        assert_eq!(RowSize::parse("4").unwrap(), RowSize::Fixed(4));
        assert_eq!(
            RowSize::parse("uniform:10..20").unwrap(),
            RowSize::Uniform(10, 20)
        );
        assert!(RowSize::parse("uniform:20..10").is_err());
        let mut v = vec![];
        for ck in 0..100 {
            fill_value(&mut v, RowSize::Uniform(10, 20), 7, ck);
            assert!((10..=20).contains(&v.len()));
            let mut w = vec![];
            fill_value(&mut w, RowSize::Uniform(10, 20), 7, ck);
            assert_eq!(v, w);
        }
        fill_value(&mut v, RowSize::Fixed(13), 1, 2);
        assert_eq!(v.len(), 13);
    }

    #[test]
    fn single_dash_flags() {
        let args = [
            "cairn",
            "bench",
            "-mode",
            "write",
            "-validate-data",
            "--plot",
            "x.png",
            "-5",
        ]
        .map(std::ffi::OsString::from);
        let out = normalize_args(args);
        let out: Vec<&str> = out.iter().map(|s| s.to_str().unwrap()).collect();
        assert_eq!(
            out,
            [
                "cairn",
                "bench",
                "--mode",
                "write",
                "--validate-data",
                "--plot",
                "x.png",
                "-5"
            ]
        );
        let serve = normalize_args(["cairn", "serve", "-x"].map(std::ffi::OsString::from));
        assert_eq!(serve[2], "-x");
    }

    #[test]
    fn mixes_and_ranges() {
        assert_eq!(
            parse_mix("write=4,delete=1").unwrap(),
            vec![(Kind::Write, 4), (Kind::Delete, 1)]
        );
        assert!(parse_mix("write=0").is_err());
        assert_eq!(token_range(0, 1), (i64::MIN, i64::MAX));
        let (a, b) = token_range(0, 2);
        let (c, d) = token_range(1, 2);
        assert_eq!((a, b + 1, c, d), (i64::MIN, 0, 0, i64::MAX));
    }

    #[test]
    fn read_queries() {
        let mut a = test_args();
        assert_eq!(
            read_query(&a, "ks.t"),
            "SELECT pk, ck, v FROM ks.t WHERE pk = ? AND ck >= ? LIMIT 1"
        );
        a.in_restriction = true;
        a.rows_per_request = 2;
        assert_eq!(
            read_query(&a, "ks.t"),
            "SELECT pk, ck, v FROM ks.t WHERE pk = ? AND ck IN (?, ?)"
        );
    }

    fn test_args() -> BenchArgs {
        #[derive(clap::Parser)]
        struct P {
            #[command(flatten)]
            a: BenchArgs,
        }
        use clap::Parser;
        P::parse_from(["x"]).a
    }
}
