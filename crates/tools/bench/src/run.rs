//! One run from the top: the schema set up through the driver, the statements prepared on
//! the bench's own connections, the workers and the reporter started, the results printed.

use crate::args::{
    parse_consistency, parse_go_duration, parse_mix, BenchArgs, Mode, RowSize, WorkloadKind,
};
use crate::clock::unix_nanos;
use crate::report::{reporter, Report};
use crate::shared::{Shared, Statement};
use crate::stats::{Interval, Kind};
use crate::worker::worker;
use anyhow::{anyhow, bail, Context, Result};
use cairn_protocol::{Compression, Consistency};
use scylla::client::session_builder::SessionBuilder;
use scylla::client::PoolSize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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

pub(crate) fn schema_and_statements(args: &BenchArgs) -> (String, Vec<String>) {
    let ks = &args.keyspace;
    let t = &args.table;
    let mut ddl = vec![
        format!(
            "CREATE KEYSPACE IF NOT EXISTS {ks} WITH REPLICATION = {{'class': 'NetworkTopologyStrategy', 'replication_factor': {}}}",
            args.replication_factor
        ),
        format!(
            "CREATE TABLE IF NOT EXISTS {ks}.{t} (pk bigint, ck bigint, v blob, PRIMARY KEY(pk, ck)) WITH compression = {{ }}"
        ),
    ];
    if args.mode == Mode::CounterUpdate {
        // scylla-bench's counter table.
        let c = &args.counter_table_name;
        ddl.push(format!(
            "CREATE TABLE IF NOT EXISTS {ks}.{c} (pk bigint, ck bigint, c1 counter, c2 counter, c3 counter, c4 counter, c5 counter, PRIMARY KEY(pk, ck)) WITH compression = {{ }}"
        ));
        return (format!("{ks}.{c}"), ddl);
    }
    (format!("{ks}.{t}"), ddl)
}

pub(crate) fn read_query(args: &BenchArgs, table: &str) -> String {
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

pub(crate) async fn run_async(args: BenchArgs) -> Result<()> {
    let p = Parsed::from_args(&args)?;
    let nodes = node_addresses(&args.nodes);
    let table = set_up_schema(&args, &nodes, p.timeout).await?;
    let client = connect(&args, &nodes, p.timeout).await?;
    let [insert, read, delete, scan] = prepare_statements(&client, &args, &table).await?;

    let run_start_ns = if args.start_timestamp != 0 {
        args.start_timestamp
    } else {
        unix_nanos()
    };
    let period_ns = if p.ts_read {
        (args.partition_count as f64 * 1e9 / args.write_rate as f64) as i64
    } else if args.max_rate > 0 {
        (args.partition_count as f64 * 1e9 / args.max_rate as f64) as i64
    } else {
        1000
    }
    .max(1);

    print_config(&args, p.row_size, p.timeout, p.duration, run_start_ns);

    let shared = Arc::new(Shared {
        slots: (0..args.concurrency)
            .map(|_| Mutex::new(Interval::default()))
            .collect(),
        deadlines: crate::deadline::Deadlines::new(args.concurrency as usize, p.timeout),
        args: args.clone(),
        client,
        consistency: p.consistency,
        row_size: p.row_size,
        insert,
        read,
        delete,
        scan,
        mix: p.mix,
        stop: AtomicBool::new(false),
        lost: AtomicBool::new(false),
        epoch: AtomicU64::new(0),
        errors_printed: AtomicU64::new(0),
        run_start_ns,
        period_ns,
    });
    let report = run_tasks(shared, p.duration, p.warmup).await?;
    if report.critical {
        std::process::exit(1);
    }
    Ok(())
}

/// The flags a run needs parsed, and the combinations scylla-bench refuses.
struct Parsed {
    timeout: Duration,
    duration: Duration,
    warmup: Duration,
    row_size: RowSize,
    consistency: Consistency,
    mix: Vec<(Kind, u32)>,
    /// A timeseries workload that reads (it then needs the writers' rate and start).
    ts_read: bool,
}

impl Parsed {
    fn from_args(args: &BenchArgs) -> Result<Parsed> {
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
            Mode::CounterUpdate => vec![(Kind::Write, 1)],
        };
        if args.mode == Mode::CounterUpdate && args.rows_per_request != 1 {
            bail!("counter_update writes one row per request: -rows-per-request must be 1");
        }
        if args.concurrency == 0 || args.rows_per_request == 0 {
            bail!("-concurrency and -rows-per-request must be positive");
        }
        if args.workload != WorkloadKind::Sequential
            && duration.is_zero()
            && args.mode != Mode::Scan
        {
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
        Ok(Parsed {
            timeout,
            duration,
            warmup,
            row_size,
            consistency,
            mix,
            ts_read,
        })
    }
}

/// `-nodes` as `host:port` addresses (port 9042 unless given).
fn node_addresses(nodes: &str) -> Vec<String> {
    nodes
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
        .collect()
}

/// Creates the keyspace and table (and truncates it when asked) through the driver, which
/// waits for schema agreement as it should, on one connection closed before the run: the
/// run's requests go through `wire`. Returns the table's name.
async fn set_up_schema(args: &BenchArgs, nodes: &[String], timeout: Duration) -> Result<String> {
    let mut builder = SessionBuilder::new()
        .known_nodes(nodes)
        .pool_size(PoolSize::PerHost(std::num::NonZeroUsize::MIN))
        .connection_timeout(timeout.max(Duration::from_secs(5)));
    if let Some(u) = &args.username {
        builder = builder.user(u, args.password.clone().unwrap_or_default());
    }
    let session = builder
        .build()
        .await
        .with_context(|| format!("connecting to {}", nodes.join(",")))?;
    let (table, ddl) = schema_and_statements(args);
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
    Ok(table)
}

/// The bench's own connections, `-connection-count` of them.
async fn connect(
    args: &BenchArgs,
    nodes: &[String],
    timeout: Duration,
) -> Result<crate::wire::Client> {
    let auth = args.username.as_ref().map(|u| crate::wire::Auth {
        username: u.clone(),
        password: args.password.clone().unwrap_or_default(),
    });
    let tls = match &args.tls_ca_cert_file {
        Some(path) => Some(tls_client_config(path)?),
        None => None,
    };
    crate::wire::Client::connect(
        nodes,
        args.connection_count,
        args.client_compression.then_some(Compression::Lz4),
        auth.as_ref(),
        tls.as_ref(),
        timeout.max(Duration::from_secs(5)),
    )
    .await
    .map_err(|e| anyhow!(e))
}

/// A TLS client configuration (rustls, ring) trusting the PEM CA certificates of `path`.
fn tls_client_config(path: &std::path::Path) -> Result<Arc<rustls::ClientConfig>> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::CertificateDer;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(path)
        .with_context(|| format!("-tls-ca-cert-file {}", path.display()))?
    {
        let cert = cert.with_context(|| format!("-tls-ca-cert-file {}", path.display()))?;
        roots
            .add(cert)
            .with_context(|| format!("-tls-ca-cert-file {}", path.display()))?;
    }
    if roots.is_empty() {
        bail!("-tls-ca-cert-file {}: no certificate in it", path.display());
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS client configuration")?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// The run's four statements prepared: insert, read, delete and scan.
async fn prepare_statements(
    client: &crate::wire::Client,
    args: &BenchArgs,
    table: &str,
) -> Result<[Statement; 4]> {
    let prep = |query: String| async move {
        let id = client
            .prepare(&query)
            .await
            .map_err(|e| anyhow!("preparing {query}: {e}"))?;
        anyhow::Ok(Statement { query, id })
    };
    let insert = if args.mode == Mode::CounterUpdate {
        // Counter mode's write (`table` is the counter table).
        prep(format!(
            "UPDATE {table} SET c1 = c1 + ?, c2 = c2 + ?, c3 = c3 + ?, c4 = c4 + ?, c5 = c5 + ? WHERE pk = ? AND ck = ?"
        ))
        .await?
    } else {
        prep(format!("INSERT INTO {table} (pk, ck, v) VALUES (?, ?, ?)")).await?
    };
    // Counter mode writes the counter table only; the other statements stay on the plain one.
    let plain = format!("{}.{}", args.keyspace, args.table);
    let table = if args.mode == Mode::CounterUpdate {
        plain.as_str()
    } else {
        table
    };
    let read = prep(read_query(args, table)).await?;
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
    Ok([insert, read, delete, scan])
}

/// Runs the workers, the deadline reaper and the reporter until the workers are done.
async fn run_tasks(shared: Arc<Shared>, duration: Duration, warmup: Duration) -> Result<Report> {
    let reaper = {
        let sh = Arc::clone(&shared);
        tokio::spawn(async move { sh.deadlines.reap().await })
    };
    let start = Instant::now();
    let mut workers = Vec::new();
    for i in 0..shared.args.concurrency {
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
    reporter.await?
}

pub(crate) fn print_config(
    args: &BenchArgs,
    size: RowSize,
    timeout: Duration,
    dur: Duration,
    start: i64,
) {
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
        crate::stats::go_duration(timeout.as_nanos() as f64)
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
            crate::stats::go_duration(dur.as_nanos() as f64)
        );
    }
}
