//! The Prometheus endpoint: `GET /metrics` on `prometheus_address:prometheus_port`
//! (127.0.0.1:9180), text exposition format 0.0.4, ScyllaDB's metric names and meanings
//! where ScyllaDB has them (`docs/metrics.md` lists every family).
//!
//! Names are `{prometheus_prefix}_{group}_{name}` (prefix `scylla` by default, so ScyllaDB
//! dashboards carry over); per-table families carry the labels `ks`, `cf` and `shard="0"`
//! (Cairn has one shard). Histograms are Prometheus histograms: cumulative `_bucket{le=…}`,
//! `_sum`, `_count`; latencies and stall lengths are in microseconds, as ScyllaDB's.
//!
//! A scrape is cheap by construction: every figure comes from atomics or from in-memory
//! sstable statistics (no file-system calls), each table is visited once, and histograms
//! export a fixed subset of their bucket bounds (cumulative counts at any bound are exact, so
//! dropping bounds only coarsens `histogram_quantile`). The bar: under 5 ms of CPU for 100
//! tables (`docs/benchmarks.md`).
//!
//! Invariant of the text: all samples of one family follow its `# HELP`/`# TYPE` lines
//! contiguously, as the format requires — families are the outer loop, tables the inner.

use crate::config::AdminFace;
use crate::protocol::ServerStats;
use crate::rest::guard::FaceStats;
use crate::rest::http::{Request, Response};
use crate::rest::AdminBackend;
use crate::stall::StallDetector;
use cairn_cluster::messaging::{Messaging, MessagingMetrics};
use cairn_cluster::proxy::{ProxyMetrics, StorageProxy};
use cairn_cql::audit::Auditor;
use cairn_engine::compaction::manager::{ManagerStats, TableCompactionStats};
use cairn_engine::metrics::HistogramSnapshot;
use cairn_engine::table::TableStats;
use std::fmt::Write as _;
use std::sync::Arc;

/// Content type of the text exposition format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// What a scrape reads: the node, its stall detector, the metric prefix.
pub struct MetricsSource {
    backend: Arc<dyn AdminBackend>,
    stalls: Option<Arc<StallDetector>>,
    transport: Option<Arc<ServerStats>>,
    proxy: Option<Arc<StorageProxy>>,
    tracing: Option<Arc<cairn_cql::trace::Tracing>>,
    messaging: Option<Arc<Messaging>>,
    admin: Vec<(AdminFace, Arc<FaceStats>)>,
    audit: Option<Arc<Auditor>>,
    prefix: String,
}

impl MetricsSource {
    /// A source over `backend`; `prefix` is `prometheus_prefix` (`scylla`).
    pub fn new(
        backend: Arc<dyn AdminBackend>,
        stalls: Option<Arc<StallDetector>>,
        prefix: impl Into<String>,
    ) -> MetricsSource {
        MetricsSource {
            backend,
            stalls,
            transport: None,
            proxy: None,
            tracing: None,
            messaging: None,
            admin: Vec::new(),
            audit: None,
            prefix: prefix.into(),
        }
    }

    /// Also exports the storage proxy's counters (`{prefix}_storage_proxy_coordinator_*`).
    pub fn with_proxy(mut self, proxy: Arc<StorageProxy>) -> MetricsSource {
        self.proxy = Some(proxy);
        self
    }

    /// Also exports tracing's and the slow-query log's counters (`{prefix}_tracing_*`,
    /// `{prefix}_cql_slow_queries`).
    pub fn with_tracing(mut self, tracing: Arc<cairn_cql::trace::Tracing>) -> MetricsSource {
        self.tracing = Some(tracing);
        self
    }

    /// Also exports internode messaging's counters (`{prefix}_messaging_*`).
    pub fn with_messaging(mut self, messaging: Arc<Messaging>) -> MetricsSource {
        self.messaging = Some(messaging);
        self
    }

    /// Also exports the admin faces' refusals (`{prefix}_admin_*{face=…}`).
    pub fn with_admin_faces(mut self, faces: Vec<(AdminFace, Arc<FaceStats>)>) -> MetricsSource {
        self.admin = faces;
        self
    }

    /// Also exports the audit log's figures (`{prefix}_audit_*`), if it is on.
    pub fn with_audit(mut self, audit: Option<Arc<Auditor>>) -> MetricsSource {
        self.audit = audit;
        self
    }

    /// Also exports the native-protocol server's counters (`{prefix}_transport_*`).
    pub fn with_transport(mut self, stats: Arc<ServerStats>) -> MetricsSource {
        self.transport = Some(stats);
        self
    }

    /// Answers a request to the metrics port: `GET /metrics` (or `/`), else 404/405.
    pub fn handle(&self, req: &Request) -> Response {
        match (req.method.as_str(), req.segments.as_slice()) {
            ("GET", [m]) if m == "metrics" => Response::typed(self.render(), CONTENT_TYPE),
            ("GET", []) => Response::typed(self.render(), CONTENT_TYPE),
            (_, [m]) if m == "metrics" => Response::error(405, "Method not allowed"),
            _ => Response::error(404, "Not found"),
        }
    }

    /// The whole exposition text.
    pub fn render(&self) -> String {
        let db = self.backend.database();
        let mut tables: Vec<TableFigures> = db
            .tables()
            .iter()
            .filter_map(|t| {
                let schema = t.schema();
                let stats = t.stats().ok()?;
                let compaction = db.compaction().table_stats(t).unwrap_or_default();
                Some(TableFigures {
                    labels: format!(
                        "ks=\"{}\",cf=\"{}\",shard=\"0\"",
                        escape(&schema.keyspace),
                        escape(&schema.name)
                    ),
                    key: (schema.keyspace.clone(), schema.name.clone()),
                    stats,
                    compaction,
                })
            })
            .collect();
        tables.sort_by(|a, b| a.key.cmp(&b.key));
        let manager = db.compaction().counters();
        let mut w = Writer {
            out: String::with_capacity(4096 + tables.len() * 12 * 1024),
            prefix: &self.prefix,
        };
        node_families(&mut w, db, &tables, &manager);
        if let Some(cache) = db.row_cache() {
            cache_families(&mut w, &cache.stats());
        }
        if let Some(s) = &self.stalls {
            stall_families(&mut w, s);
        }
        if let Some(t) = &self.transport {
            transport_families(&mut w, t);
        }
        if let Some(p) = &self.proxy {
            proxy_families(&mut w, p.metrics());
        }
        if let Some(t) = &self.tracing {
            counters(
                &mut w,
                &[
                    (
                        "tracing_sessions",
                        "Requests traced: asked by the client or picked by the trace probability (Cairn's name).",
                        t.sessions(),
                    ),
                    (
                        "tracing_dropped_sessions",
                        "Trace sessions not stored: the trace writer's queue was full or its write failed.",
                        t.dropped_sessions(),
                    ),
                    (
                        "cql_slow_queries",
                        "Statements that took longer than slow_query_log_timeout, each logged at WARN (Cairn's name).",
                        t.slow_queries(),
                    ),
                ],
            );
        }
        if let Some(m) = &self.messaging {
            messaging_families(&mut w, m.metrics());
        }
        if !self.admin.is_empty() {
            admin_families(&mut w, &self.admin);
        }
        if let Some(a) = &self.audit {
            audit_families(&mut w, a);
        }
        table_families(&mut w, &tables);
        w.out
    }
}

struct TableFigures {
    key: (String, String),
    labels: String,
    stats: TableStats,
    compaction: TableCompactionStats,
}

/// Escapes a label value (`\`, `"`, newline), as the text format requires.
pub fn escape(v: &str) -> std::borrow::Cow<'_, str> {
    if !v.contains(['\\', '"', '\n']) {
        return v.into();
    }
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
        .into()
}

struct Writer<'a> {
    out: String,
    prefix: &'a str,
}

/// A sample's value as the text format writes it.
trait Value {
    fn write_to(&self, out: &mut String);
}

impl Value for u64 {
    fn write_to(&self, out: &mut String) {
        push_u64(out, *self);
    }
}

impl Value for usize {
    fn write_to(&self, out: &mut String) {
        push_u64(out, *self as u64);
    }
}

impl Value for f64 {
    fn write_to(&self, out: &mut String) {
        if self.is_nan() {
            out.push_str("NaN");
        } else if self.is_infinite() {
            out.push_str(if *self > 0.0 { "+Inf" } else { "-Inf" });
        } else {
            let _ = write!(out, "{self}");
        }
    }
}

/// Decimal digits of `v` without the formatting machinery: a scrape writes ~15 000 numbers
/// for 100 tables, and this is most of its cost.
fn push_u64(out: &mut String, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    out.push_str(std::str::from_utf8(&buf[i..]).unwrap_or("0"));
}

impl Writer<'_> {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let p = self.prefix;
        let _ = writeln!(self.out, "# HELP {p}_{name} {help}");
        let _ = writeln!(self.out, "# TYPE {p}_{name} {kind}");
    }

    /// `{prefix}_{name}{suffix}{labels} ` — a sample line up to its value.
    fn series(&mut self, name: &str, suffix: &str, labels: &str) {
        self.out.push_str(self.prefix);
        self.out.push('_');
        self.out.push_str(name);
        self.out.push_str(suffix);
        if !labels.is_empty() {
            self.out.push('{');
            self.out.push_str(labels);
            self.out.push('}');
        }
        self.out.push(' ');
    }

    fn sample(&mut self, name: &str, labels: &str, value: impl Value) {
        self.series(name, "", labels);
        value.write_to(&mut self.out);
        self.out.push('\n');
    }

    /// One histogram's samples, exporting the bounds `export` picks (and always `+Inf`).
    fn histogram(&mut self, name: &str, labels: &str, h: &HistogramSnapshot, export: Export) {
        let mut cumulative = 0u64;
        let bucket = |w: &mut Self, le: Option<u64>, cumulative: u64| {
            w.out.push_str(w.prefix);
            w.out.push('_');
            w.out.push_str(name);
            w.out.push_str("_bucket{");
            if !labels.is_empty() {
                w.out.push_str(labels);
                w.out.push(',');
            }
            w.out.push_str("le=\"");
            match le {
                Some(b) => push_u64(&mut w.out, b),
                None => w.out.push_str("+Inf"),
            }
            w.out.push_str("\"} ");
            push_u64(&mut w.out, cumulative);
            w.out.push('\n');
        };
        for (i, n) in h.counts.iter().enumerate() {
            cumulative = cumulative.saturating_add(*n);
            if let Some(&bound) = h.bounds.get(i) {
                if export.picks(i) {
                    bucket(self, Some(bound), cumulative);
                }
            }
        }
        bucket(self, None, cumulative);
        for (suffix, v) in [("_sum", h.sum), ("_count", cumulative)] {
            self.series(name, suffix, labels);
            push_u64(&mut self.out, v);
            self.out.push('\n');
        }
    }
}

/// Which bucket bounds a histogram exports: every bound below index `all_below`, then every
/// `stride`-th. About 20–25 buckets per histogram keep a 100-table scrape small.
#[derive(Debug, Clone, Copy)]
struct Export {
    all_below: usize,
    stride: usize,
}

impl Export {
    fn picks(self, i: usize) -> bool {
        i < self.all_below || i.is_multiple_of(self.stride.max(1))
    }
}

/// Latencies (µs): bounds ×2 apart (1, 5, 10, 24, 50, 103, …, 25 s).
const LATENCY_EXPORT: Export = Export {
    all_below: 0,
    stride: 4,
};
/// SSTables per read: every count up to 8, then 10, 14, 20, 29, …
const SSTABLES_EXPORT: Export = Export {
    all_below: 10,
    stride: 2,
};
/// Partition sizes and cell counts: bounds ×3 apart.
const SIZE_EXPORT: Export = Export {
    all_below: 0,
    stride: 6,
};

fn node_families(
    w: &mut Writer<'_>,
    db: &cairn_engine::Database,
    tables: &[TableFigures],
    m: &ManagerStats,
) {
    let sum = |f: &dyn Fn(&TableFigures) -> u64| tables.iter().map(f).sum::<u64>() as f64;
    let pending: u64 = tables.iter().map(|t| t.compaction.pending).sum();
    let backlog: f64 = tables.iter().map(|t| t.compaction.backlog).sum();
    let cl = db.commitlog_stats();
    let faults = db.fault_stats();
    let families: [(&str, &str, &str, f64); 25] = [
        (
            "database_total_writes",
            "counter",
            "Mutations applied by the storage engine, all tables.",
            sum(&|t| t.stats.write_latency.count()),
        ),
        (
            "database_total_reads",
            "counter",
            "Single-partition reads served by the storage engine, all tables.",
            sum(&|t| t.stats.read_latency.count()),
        ),
        (
            "database_total_reads_failed",
            "counter",
            "Reads (single-partition and scans) the storage engine failed, e.g. on a corrupt sstable.",
            faults.reads_failed as f64,
        ),
        (
            "database_total_writes_failed",
            "counter",
            "Writes the storage engine failed, e.g. after a commitlog failure.",
            faults.writes_failed as f64,
        ),
        (
            "storage_sstables_removed",
            "counter",
            "SSTables taken out of reads after an I/O error (disk_failure_policy: best_effort).",
            faults.sstables_removed as f64,
        ),
        (
            "storage_transports_stopped",
            "gauge",
            "1 once a failure policy stopped the native transport (disk_failure_policy, commit_failure_policy).",
            u8::from(faults.transports_stopped).into(),
        ),
        (
            "database_memtable_bytes",
            "gauge",
            "Bytes held by all memtables (active and flushing).",
            db.memtable_bytes() as f64,
        ),
        (
            "commitlog_bytes_written",
            "counter",
            "Bytes appended to the commitlog (record headers included).",
            cl.bytes_written as f64,
        ),
        (
            "commitlog_flush",
            "counter",
            "Commitlog syncs that made new records durable.",
            cl.syncs as f64,
        ),
        (
            "commitlog_segments",
            "gauge",
            "Commitlog segments holding records that may still be needed.",
            cl.active_segments as f64,
        ),
        (
            "commitlog_disk_total_bytes",
            "gauge",
            "Bytes of commitlog segment files on disk.",
            cl.disk_bytes as f64,
        ),
        (
            "compaction_manager_compactions",
            "gauge",
            "Compactions running now.",
            m.active as f64,
        ),
        (
            "compaction_manager_pending_compactions",
            "gauge",
            "Compactions the strategies estimate are still to run.",
            pending as f64,
        ),
        (
            "compaction_manager_completed_compactions",
            "counter",
            "Compactions finished.",
            m.completed as f64,
        ),
        (
            "compaction_manager_failed_compactions",
            "counter",
            "Compactions failed (stopped ones not included).",
            m.failed as f64,
        ),
        (
            "compaction_manager_stopped_compactions",
            "counter",
            "Compactions stopped on request (nodetool stop).",
            m.stopped as f64,
        ),
        (
            "compaction_manager_postponed_compactions",
            "gauge",
            "Compactions postponed (always 0: Cairn queues tables instead).",
            0.0,
        ),
        (
            "compaction_manager_validation_errors",
            "counter",
            "Sstable validation errors found by compaction (always 0).",
            0.0,
        ),
        (
            "compaction_manager_backlog",
            "gauge",
            "Bytes of rewrite work the strategies see, all tables.",
            backlog,
        ),
        (
            "compaction_manager_normalized_backlog",
            "gauge",
            "Backlog normalised by memtable size, behind the controller's shares.",
            m.normalized_backlog,
        ),
        (
            "compaction_manager_shares",
            "gauge",
            "The compaction controller's current shares (50-1000).",
            m.shares,
        ),
        (
            "compaction_manager_bytes_read",
            "counter",
            "Bytes read (on disk) by finished compactions.",
            m.bytes_in as f64,
        ),
        (
            "compaction_manager_bytes_written",
            "counter",
            "Bytes written (on disk) by finished compactions.",
            m.bytes_out as f64,
        ),
        (
            "node_tables",
            "gauge",
            "Tables on the node.",
            tables.len() as f64,
        ),
        (
            "node_live_disk_space",
            "gauge",
            "Bytes on disk of every table's live sstables (nodetool's Load).",
            sum(&|t| t.stats.live_disk_bytes),
        ),
    ];
    for (name, kind, help, v) in families {
        w.family(name, kind, help);
        w.sample(name, "shard=\"0\"", v);
    }
    w.family(
        "storage_faults",
        "counter",
        "Storage faults by kind: corrupt sstable data, I/O errors reading or writing data files, commitlog write or sync failures.",
    );
    for (kind, v) in [
        ("corrupt_sstable", faults.corrupt_sstable),
        ("read_io", faults.read_io),
        ("write_io", faults.write_io),
        ("commitlog", faults.commitlog),
    ] {
        w.sample(
            "storage_faults",
            &format!("kind=\"{kind}\",shard=\"0\""),
            v as f64,
        );
    }
}

/// The row cache's figures, with ScyllaDB's `cache_*` names and meanings.
fn cache_families(w: &mut Writer<'_>, c: &cairn_engine::cache::CacheStats) {
    let families: [(&str, &str, &str, u64); 19] = [
        (
            "cache_bytes_used",
            "gauge",
            "Bytes the row cache holds (rows, partitions, sstable index pages and their bookkeeping).",
            c.bytes_used,
        ),
        (
            "cache_bytes_total",
            "gauge",
            "The row cache's budget (row_cache_size).",
            c.bytes_total,
        ),
        (
            "cache_partitions",
            "gauge",
            "Partitions in the row cache.",
            c.partitions,
        ),
        ("cache_rows", "gauge", "Rows in the row cache.", c.rows),
        (
            "cache_reads",
            "counter",
            "Single-partition reads started through the row cache.",
            c.reads,
        ),
        (
            "cache_reads_with_misses",
            "counter",
            "Reads through the row cache that had to read sstables.",
            c.reads_with_misses,
        ),
        (
            "cache_partition_hits",
            "counter",
            "Partitions a read found in the row cache.",
            c.partition_hits,
        ),
        (
            "cache_partition_misses",
            "counter",
            "Partitions a read did not find in the row cache.",
            c.partition_misses,
        ),
        (
            "cache_row_hits",
            "counter",
            "Rows read from the row cache.",
            c.row_hits,
        ),
        (
            "cache_row_misses",
            "counter",
            "Rows reads through the row cache took from sstables.",
            c.row_misses,
        ),
        (
            "cache_partition_insertions",
            "counter",
            "Partitions inserted into the row cache.",
            c.partition_insertions,
        ),
        (
            "cache_row_insertions",
            "counter",
            "Rows inserted into the row cache.",
            c.row_insertions,
        ),
        (
            "cache_partition_evictions",
            "counter",
            "Partitions evicted (their last row went).",
            c.partition_evictions,
        ),
        (
            "cache_row_evictions",
            "counter",
            "Rows evicted from the row cache's least recently used end.",
            c.row_evictions,
        ),
        (
            "cache_partition_removals",
            "counter",
            "Partitions removed by invalidation (TRUNCATE, DROP, refresh).",
            c.partition_removals,
        ),
        (
            "cache_row_removals",
            "counter",
            "Rows removed by invalidation.",
            c.row_removals,
        ),
        (
            "cache_partition_merges",
            "counter",
            "Cached partitions a flushed memtable was merged into.",
            c.partition_merges,
        ),
        (
            "cache_rows_merged_from_memtable",
            "counter",
            "Rows a flush merged into the row cache.",
            c.rows_merged_from_memtable,
        ),
        (
            "cache_mispopulations",
            "counter",
            "Populations skipped because the sstable set changed under the read.",
            c.mispopulations,
        ),
    ];
    let i = &c.index_pages;
    let index: [(&str, &str, &str, u64); 5] = [
        (
            "sstables_index_page_cache_hits",
            "counter",
            "Index page lookups served from the cache.",
            i.hits,
        ),
        (
            "sstables_index_page_cache_misses",
            "counter",
            "Index page lookups that read the page from disk.",
            i.misses,
        ),
        (
            "sstables_index_page_cache_populations",
            "counter",
            "Index pages inserted into the cache.",
            i.populations,
        ),
        (
            "sstables_index_page_cache_evictions",
            "counter",
            "Index pages evicted from the cache.",
            i.evictions,
        ),
        (
            "sstables_index_page_cache_bytes",
            "gauge",
            "Bytes of index pages in the cache (part of cache_bytes_used).",
            i.bytes,
        ),
    ];
    for (name, kind, help, v) in families.into_iter().chain(index) {
        w.family(name, kind, help);
        w.sample(name, "shard=\"0\"", v as f64);
    }
}

/// The native-protocol server: ScyllaDB's `transport` names where it has them.
fn transport_families(w: &mut Writer<'_>, t: &ServerStats) {
    let families: [(&str, &str, &str, u64); 9] = [
        ("transport_requests_served", "counter", "CQL requests received (frames with a valid header).", t.requests()),
        ("transport_cql_connections", "counter", "CQL connections accepted.", t.connections_accepted()),
        ("transport_current_connections", "gauge", "CQL connections open.", t.connections_open()),
        ("transport_requests_shed", "counter", "Requests answered with OVERLOADED (in-flight limits reached).", t.overloaded()),
        ("transport_protocol_errors", "counter", "PROTOCOL_ERROR responses sent.", t.protocol_errors()),
        ("transport_requests_inline", "counter", "Statements answered on the connection's reactor thread, without waiting.", t.inline()),
        ("transport_requests_spawned", "counter", "Statements that had to wait (disk, memtable space, schema changes) and ran on the blocking pool.", t.spawned()),
        ("transport_tls_connections", "counter", "Connections that completed a TLS handshake.", t.tls_connections()),
        ("transport_tls_handshake_failures", "counter", "Connections closed before they started: a failed or timed-out TLS handshake.", t.tls_handshake_failures()),
    ];
    for (name, kind, help, value) in families {
        w.family(name, kind, help);
        w.sample(name, "shard=\"0\"", value);
    }
}

/// The admin faces' refusals (Cairn's names: ScyllaDB's faces have no authentication).
fn admin_families(w: &mut Writer<'_>, faces: &[(AdminFace, Arc<FaceStats>)]) {
    type Counter = fn(&FaceStats) -> u64;
    let families: [(&str, &str, Counter); 2] = [
        (
            "admin_unauthorized_requests",
            "Requests to an admin face (REST API, Prometheus) answered 401: no bearer token or a wrong one.",
            FaceStats::unauthorized,
        ),
        (
            "admin_tls_handshake_failures",
            "Connections to an admin face closed before a request: a failed or timed-out TLS handshake (no accepted client certificate, a plaintext client).",
            FaceStats::tls_handshake_failures,
        ),
    ];
    for (name, help, get) in families {
        w.family(name, "counter", help);
        for (face, stats) in faces {
            w.sample(name, &format!("face=\"{}\"", face.name()), get(stats));
        }
    }
}

/// The storage proxy as coordinator: ScyllaDB's `storage_proxy_coordinator` names.
fn proxy_families(w: &mut Writer<'_>, m: &ProxyMetrics) {
    let get = |c: &std::sync::atomic::AtomicU64| c.load(std::sync::atomic::Ordering::Relaxed);
    let families: [(&str, &str, u64); 19] = [
        (
            "storage_proxy_coordinator_read_timeouts",
            "Reads whose replicas did not answer in time for the consistency level.",
            get(&m.read_timeouts),
        ),
        (
            "storage_proxy_coordinator_read_failures",
            "Reads a replica failed (Cairn's name).",
            get(&m.read_failures),
        ),
        (
            "storage_proxy_coordinator_foreground_read_repairs",
            "Reads that found replicas disagreeing and repaired them before answering.",
            get(&m.foreground_read_repairs),
        ),
        (
            "storage_proxy_coordinator_write_timeouts",
            "Writes whose replicas did not answer in time for the consistency level.",
            get(&m.write_timeouts),
        ),
        (
            "storage_proxy_coordinator_write_failures",
            "Writes refused by more replicas than the consistency level allows (Cairn's name).",
            get(&m.write_failures),
        ),
        (
            "storage_proxy_replica_received_mutations",
            "Mutations this node applied for a coordinator.",
            get(&m.replica_received_mutations),
        ),
        (
            "storage_proxy_coordinator_reads_on_request_task",
            "Single-partition reads whose replicas were awaited on the request's task (Cairn's name).",
            get(&m.reads_on_request_task),
        ),
        (
            "storage_proxy_coordinator_write_unavailable",
            "Writes refused with Unavailable: too few replicas up for the consistency level.",
            get(&m.write_unavailable),
        ),
        (
            "storage_proxy_coordinator_read_unavailable",
            "Single-partition reads refused with Unavailable.",
            get(&m.read_unavailable),
        ),
        (
            "storage_proxy_coordinator_range_unavailable",
            "Range reads refused with Unavailable.",
            get(&m.range_unavailable),
        ),
        (
            "storage_proxy_coordinator_cas_write_unavailable",
            "Conditional writes refused with Unavailable.",
            get(&m.cas_write_unavailable),
        ),
        (
            "storage_proxy_coordinator_cas_read_unavailable",
            "Reads at SERIAL or LOCAL_SERIAL refused with Unavailable.",
            get(&m.cas_read_unavailable),
        ),
        (
            "storage_proxy_coordinator_cas_write_timeouts",
            "Conditional writes that timed out (their Paxos round or its commit).",
            get(&m.cas_write_timeouts),
        ),
        (
            "storage_proxy_coordinator_cas_read_timeouts",
            "Reads at SERIAL or LOCAL_SERIAL that timed out.",
            get(&m.cas_read_timeouts),
        ),
        (
            "storage_proxy_coordinator_cas_write_contention",
            "Paxos rounds of conditional writes that lost to another round and started over.",
            get(&m.cas_write_contention),
        ),
        (
            "storage_proxy_coordinator_cas_read_contention",
            "Paxos rounds of serial reads that lost to another round and started over.",
            get(&m.cas_read_contention),
        ),
        (
            "storage_proxy_coordinator_cas_write_unfinished_commit",
            "Earlier rounds' accepted proposals a conditional write committed before its own.",
            get(&m.cas_write_unfinished_commit),
        ),
        (
            "storage_proxy_coordinator_cas_read_unfinished_commit",
            "Earlier rounds' accepted proposals a serial read committed before reading.",
            get(&m.cas_read_unfinished_commit),
        ),
        (
            "storage_proxy_coordinator_cas_write_condition_not_met",
            "Conditional writes refused because a condition did not hold.",
            get(&m.cas_write_condition_not_met),
        ),
    ];
    counters(w, &families);
}

/// Counters of one shard: `(name, help, value)`.
fn counters(w: &mut Writer<'_>, families: &[(&str, &str, u64)]) {
    for &(name, help, value) in families {
        w.family(name, "counter", help);
        w.sample(name, "shard=\"0\"", value);
    }
}

/// The audit log (Cairn's names: ScyllaDB exports none for it).
fn audit_families(w: &mut Writer<'_>, a: &Auditor) {
    let s = a.stats();
    counters(
        w,
        &[
            (
                "audit_records_written",
                "Audit records stored in audit.audit_log or sent to syslog.",
                s.written(),
            ),
            (
                "audit_records_failed",
                "Audit records that could not be written and went to the node's log at ERROR instead.",
                s.failed(),
            ),
            (
                "audit_queue_waits",
                "Requests that found no room in the audit queue for their records and waited for it.",
                s.waits(),
            ),
            (
                "audit_queue_wait_microseconds",
                "Microseconds requests waited for room in the audit queue, in all.",
                s.wait_micros(),
            ),
        ],
    );
    let (queued, capacity) = a.queue();
    for (name, help, v) in [
        (
            "audit_queue_records",
            "Audit records queued or being written.",
            queued,
        ),
        (
            "audit_queue_capacity",
            "Room of the audit queue (audit_queue_records); requests wait when it is full.",
            capacity,
        ),
    ] {
        w.family(name, "gauge", help);
        w.sample(name, "shard=\"0\"", v as u64);
    }
}

/// Internode messaging's TLS.
fn messaging_families(w: &mut Writer<'_>, m: &MessagingMetrics) {
    let get = |c: &std::sync::atomic::AtomicU64| c.load(std::sync::atomic::Ordering::Relaxed);
    let families: [(&str, &str, u64); 2] = [
        (
            "messaging_tls_connections",
            "Internode connections, either way, that completed a TLS handshake.",
            get(&m.tls_connections),
        ),
        (
            "messaging_tls_handshake_failures",
            "Internode connections closed because TLS failed: a failed or timed-out handshake, or plaintext where TLS is required.",
            get(&m.tls_handshake_failures),
        ),
    ];
    counters(w, &families);
}

fn stall_families(w: &mut Writer<'_>, d: &StallDetector) {
    let s = d.stats();
    w.family(
        "reactor_stalls",
        "histogram",
        "Reactor stalls: task polls that held a reactor thread at least blocked_reactor_notify_ms, by length in microseconds.",
    );
    w.histogram(
        "reactor_stalls",
        "shard=\"0\"",
        &s.histogram,
        LATENCY_EXPORT,
    );
    w.family(
        "stall_detector_reported",
        "counter",
        "Reactor stall reports (logged or suppressed by the per-minute budget).",
    );
    w.sample("stall_detector_reported", "shard=\"0\"", s.reported);
    w.family(
        "stall_detector_threshold_seconds",
        "gauge",
        "The stall detector's threshold (blocked_reactor_notify_ms).",
    );
    w.sample(
        "stall_detector_threshold_seconds",
        "shard=\"0\"",
        s.threshold.as_secs_f64(),
    );
}

/// A per-table scalar family: name, type, help, value.
type Gauge = (
    &'static str,
    &'static str,
    &'static str,
    fn(&TableFigures) -> u64,
);
/// A per-table family with one more label: name, type, help, label, (label value, value)s.
type Labelled = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    fn(&TableFigures) -> Vec<(String, u64)>,
);
/// A per-table histogram family: name, help, exported bounds, value.
type Histogram = (
    &'static str,
    &'static str,
    Export,
    fn(&TableFigures) -> HistogramSnapshot,
);

fn table_families(w: &mut Writer<'_>, tables: &[TableFigures]) {
    let histograms: [Histogram; 5] = [
        ("column_family_read_latency", "Single-partition read latency in microseconds; _count is the table's read count.", LATENCY_EXPORT, |t| t.stats.read_latency.clone()),
        ("column_family_write_latency", "Write latency in microseconds (commitlog and memtable); _count is the table's write count.", LATENCY_EXPORT, |t| t.stats.write_latency.clone()),
        ("column_family_sstables_per_read", "SSTables consulted per single-partition read (key range and bloom filter admit the key).", SSTABLES_EXPORT, |t| t.stats.sstables_per_read.clone()),
        ("column_family_estimated_partition_size", "Partition sizes in bytes over live sstables (not monotonic: follows the live set).", SIZE_EXPORT, |t| HistogramSnapshot::from(&t.stats.partition_sizes)),
        ("column_family_estimated_cell_count", "Cells per partition over live sstables (not monotonic: follows the live set).", SIZE_EXPORT, |t| HistogramSnapshot::from(&t.stats.cells_per_partition)),
    ];
    for (name, help, export, get) in histograms {
        w.family(name, "histogram", help);
        for t in tables {
            w.histogram(name, &t.labels, &get(t), export);
        }
    }
    let gauges: [Gauge; 21] = [
        ("column_family_live_sstable", "gauge", "Live sstables.", |t| t.stats.sstable_count as u64),
        ("column_family_live_disk_space", "gauge", "Bytes on disk of live sstables.", |t| t.stats.live_disk_bytes),
        ("column_family_total_disk_space", "gauge", "Bytes on disk of live sstables and of compacted ones not yet deleted.", |t| t.stats.total_disk_bytes),
        ("column_family_total_disk_space_before_compression", "gauge", "Uncompressed bytes of the live sstables' data.", |t| t.stats.uncompressed_data_bytes),
        ("column_family_snapshots_size", "gauge", "Bytes only the table's snapshots keep on disk (their true size): files of sstables no longer live, and the snapshots' own files.", |t| t.stats.snapshots_true_size),
        ("column_family_snapshots_size_on_disk", "gauge", "Bytes of every file of the table's snapshots, shared with live sstables or not.", |t| t.stats.snapshots_size_on_disk),
        ("column_family_memtable_live_data_size", "gauge", "Bytes of the memtable taking writes.", |t| t.stats.memtable_live_bytes),
        ("column_family_all_memtables_live_data_size", "gauge", "Bytes of all memtables (taking writes and being flushed).", |t| t.stats.memtable_bytes),
        ("column_family_memtable_switch", "counter", "Memtables flushed.", |t| t.stats.flushes),
        ("column_family_pending_compaction", "gauge", "Compactions the table's strategy estimates are still to run.", |t| t.compaction.pending),
        ("column_family_estimated_partitions", "gauge", "Partitions in live sstables and memtables (a partition in several counts once per source).", |t| t.stats.partition_count_estimate),
        ("column_family_range_scans", "counter", "Range scans started.", |t| t.stats.range_scans),
        ("column_family_chunks_read", "counter", "Compressed data chunks read from disk.", |t| t.stats.chunks_read),
        ("column_family_index_pages_read", "counter", "Partition and row index pages read from disk.", |t| t.stats.index_pages_read),
        ("column_family_compaction_backlog", "gauge", "Bytes of rewrite work the table's strategy sees.", |t| t.compaction.backlog as u64),
        ("column_family_running_compactions", "gauge", "Compactions running on the table.", |t| t.compaction.running as u64),
        ("column_family_pending_tasks", "gauge", "Pending flushes: memtables sealed and waiting for, or in, their flush.", |t| t.stats.pending_flushes),
        ("column_family_bloom_filter_false_positives", "counter", "Point lookups a bloom filter admitted whose partition the sstable did not hold.", |t| t.stats.bloom_false_positives),
        ("column_family_bloom_filter_true_positives", "counter", "Point lookups a bloom filter admitted whose partition the sstable held.", |t| t.stats.bloom_true_positives),
        ("column_family_live_scanned", "counter", "Live cells visited by single-partition reads (per read: divide by read_latency_count).", |t| t.stats.live_scanned_total),
        ("column_family_tombstone_scanned", "counter", "Tombstones visited by single-partition reads: partition, range, row, column and cell deletions, expired cells.", |t| t.stats.tombstone_scanned_total),
    ];
    for (name, kind, help, get) in gauges {
        w.family(name, kind, help);
        for t in tables {
            w.sample(name, &t.labels, get(t));
        }
    }
    let labelled: [Labelled; 4] = [
        ("column_family_sstables_in_level", "gauge", "Live sstables per level (level 0 = unleveled: flushes, and every sstable under STCS/TWCS).", "level", |t| {
            let levels = &t.compaction.sstables_per_level;
            if levels.is_empty() {
                return vec![("0".into(), 0)];
            }
            levels.iter().enumerate().map(|(l, &n)| (l.to_string(), n as u64)).collect()
        }),
        ("column_family_bytes_written", "counter", "Bytes written to disk for the table, by kind (commitlog = user writes, flush, compaction, other).", "kind", |t| {
            let s = &t.stats;
            vec![
                ("commitlog".into(), s.commitlog_bytes_written),
                ("flush".into(), s.flush_bytes_written),
                ("compaction".into(), s.compaction_bytes_written),
                ("other".into(), s.other_bytes_written),
            ]
        }),
        ("column_family_bytes_read", "counter", "Bytes read from disk for the table, by kind (query, compaction, other).", "kind", |t| {
            let s = &t.stats;
            vec![
                ("query".into(), s.query_bytes_read),
                ("compaction".into(), s.compaction_bytes_read),
                ("other".into(), s.other_bytes_read),
            ]
        }),
        ("column_family_metadata_memory", "gauge", "Heap bytes of in-memory sstable metadata, by component.", "component", |t| {
            let (offsets, summary, bloom) = t.stats.metadata_memory;
            vec![
                ("chunk_offsets".into(), offsets as u64),
                ("index_summary".into(), summary as u64),
                ("bloom_filter".into(), bloom as u64),
            ]
        }),
    ];
    for (name, kind, help, label, get) in labelled {
        w.family(name, kind, help);
        for t in tables {
            for (v, n) in get(t) {
                let labels = format!("{},{label}=\"{v}\"", t.labels);
                w.sample(name, &labels, n);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn escapes_label_values() {
        assert_eq!(escape("plain"), "plain");
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }

    #[test]
    fn histogram_lines_are_cumulative() {
        let h = HistogramSnapshot::from_parts(vec![1, 2, 3], vec![1, 2, 0, 4], 30).unwrap();
        let mut w = Writer {
            out: String::new(),
            prefix: "p",
        };
        w.histogram(
            "h",
            "ks=\"k\"",
            &h,
            Export {
                all_below: 0,
                stride: 2,
            },
        );
        assert_eq!(
            w.out,
            "p_h_bucket{ks=\"k\",le=\"1\"} 1\np_h_bucket{ks=\"k\",le=\"3\"} 3\n\
             p_h_bucket{ks=\"k\",le=\"+Inf\"} 7\np_h_sum{ks=\"k\"} 30\np_h_count{ks=\"k\"} 7\n"
        );
    }
}
