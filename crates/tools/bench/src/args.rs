//! The command line: scylla-bench's flags (one dash or two), their defaults and checks, row
//! sizes and the value bytes each row gets, consistency and operation mixes.

use crate::stats::Kind;
use crate::workload::Rng;
use anyhow::{anyhow, bail, Context, Result};
use cairn_protocol::Consistency;
use clap::{ArgAction, Args, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    Write,
    Read,
    Mixed,
    Scan,
    Delete,
    /// scylla-bench's `counter_update`: `UPDATE <counter table> SET c1 = c1 + ?, …, c5 = c5 + ?
    /// WHERE pk = ? AND ck = ?`, adding `ck`, `ck + 1`, … `ck + 4`.
    #[value(name = "counter_update")]
    CounterUpdate,
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
    /// write, read, mixed (see -mixed-ratio), scan, delete or counter_update.
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
    /// The counter table of `-mode counter_update`.
    #[arg(long, default_value = "test_counters")]
    pub counter_table_name: String,
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
    /// Speak TLS on the bench's own connections, trusting the CA certificates of this PEM
    /// file (scylla-bench's flag; the node's certificate must name the host as given in
    /// -nodes). The schema set-up connection stays plaintext: the node needs
    /// `client_encryption_options: {optional: true}`.
    #[arg(long, visible_alias = "tls-ca")]
    pub tls_ca_cert_file: Option<PathBuf>,
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
    /// /proc/PID/stat) per operation over the measured window. Several, comma-separated
    /// (a cluster's nodes on this machine): their CPU summed.
    #[arg(long, value_delimiter = ',')]
    pub server_pid: Vec<u32>,
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
    pub(crate) fn size(&self, seed: u64) -> usize {
        match *self {
            RowSize::Fixed(n) => n,
            RowSize::Uniform(a, b) => a + (seed % (b - a + 1) as u64) as usize,
        }
    }
}

/// Fills `buf` with the value of row (pk, ck): its size and bytes depend only on the keys.
pub fn fill_value(buf: &mut Vec<u8>, size: RowSize, pk: i64, ck: i64) {
    let seed = crate::workload::mix((pk as u64).wrapping_mul(0x100_0000_01B3) ^ ck as u64);
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

pub(crate) fn parse_consistency(s: &str) -> Result<Consistency> {
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

pub(crate) fn parse_mix(s: &str) -> Result<Vec<(Kind, u32)>> {
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
impl std::fmt::Display for RowSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RowSize::Fixed(n) => write!(f, "Fixed({n})"),
            RowSize::Uniform(a, b) => write!(f, "Uniform(min={a}, max={b})"),
        }
    }
}
