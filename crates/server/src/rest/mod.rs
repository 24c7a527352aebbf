//! The REST admin API (ScyllaDB's paths, JSON bodies) on `api_address:api_port`
//! (127.0.0.1:10000). Its client, `cairn nodetool`, is the `cairn-nodetool` crate.
//!
//! The server is a small HTTP/1.1 implementation on tokio ([`http`]). Every request is
//! handled on tokio's blocking pool (`spawn_blocking`): flushes and major compactions wait
//! for disk work, and even listing tables takes engine locks, so nothing runs on a reactor
//! thread. Errors are an HTTP status with ScyllaDB's body `{"message": …, "code": …}`.
//!
//! The node is reached through [`AdminBackend`]: the keyspace/table registry and the engine.
//! [`EngineBackend`] serves a bare [`Database`] (a keyspace exists while it has a table);
//! the CQL layer supplies its own registry later by implementing the trait.
//!
//! Endpoints (ScyllaDB's `api/api-doc/*.json`):
//!
//! | method | path | |
//! |---|---|---|
//! | POST | `/storage_service/keyspace_flush/{ks}?cf=t1,t2` | flush tables (all without `cf`) |
//! | POST | `/storage_service/flush` | flush every table |
//! | POST | `/storage_service/keyspace_compaction/{ks}?cf=…&flush_memtables=true` | major compaction, waits |
//! | POST | `/storage_service/compact` | major compaction of every table |
//! | POST | `/compaction_manager/stop_compaction?type=COMPACTION` | stop running compactions |
//! | POST | `/compaction_manager/stop_keyspace_compaction/{ks}?tables=…&type=…` | stop one keyspace's |
//! | GET | `/compaction_manager/compactions` | running jobs: compactions, then view and index builds (task type `View build` / `Secondary index build`, unit `keys`) |
//! | GET | `/storage_service/view_build_statuses/{ks}/{view}` | a materialized view's build status per host (`[{"key": host, "value": "STARTED" or "SUCCESS"}]`; every host with a status, as last polled: `cairn_cluster::proxy::view_status`) |
//! | GET | `/compaction_manager/compaction_history` | finished jobs |
//! | GET | `/compaction_manager/metrics/{pending_tasks, pending_tasks_by_table, completed_tasks, total_compactions_completed, bytes_compacted}` | counters |
//! | GET, POST | `/storage_service/compaction_throughput[?value=MB/s]` | throttle (0 = off) |
//! | GET, POST | `/storage_service/trace_probability[?probability=P]` | probabilistic tracing (0..=1) |
//! | GET | `/storage_service/keyspaces` | keyspace names |
//! | GET | `/column_family/`, `/column_family/name`, `/column_family/name/keyspace` | tables |
//! | GET | `/column_family/metrics/{metric}/{ks}:{cf}` | per-table figures ([`column_family`]: sstable counts, disk space, memtables, read/write counts and latency totals, partition sizes, bloom filter and metadata memory, compression ratio) |
//! | GET | `/column_family/metrics/{estimated_row_size_histogram, estimated_column_count_histogram, sstables_per_read_histogram}/{ks}:{cf}`, `/column_family/metrics/{read_latency, write_latency}/estimated_histogram/{ks}:{cf}` | histograms |
//! | GET | `/column_family/metrics/{live_scanned_histogram, tombstone_scanned_histogram}/{ks}:{cf}` | live cells and tombstones per single-partition read, last five minutes |
//! | GET | `/column_family/metrics/{recent_bloom_filter_false_positives, recent_bloom_filter_false_ratio}/{ks}:{cf}` | since the previous call of either (each call resets them, as Cassandra's) |
//! | GET | `/column_family/sstables/per_level/{ks}:{cf}` | live sstables per level |
//! | GET | `/storage_service/{hostid/local, host_id, release_version, scylla_release_version, cluster_name, partitioner_name, schema_version}` | node info |
//! | GET | `/storage_service/{load, load_map, gossiping, native_transport, generation_number, operation_mode, tokens, tokens_endpoint, ownership[/{ks}], describe_ring/{ks}, natural_endpoints/{ks}?cf=&key=}`, `/gossiper/endpoint/{live, down}`, `/snitch/{datacenter, rack, name}`, `/system/{uptime_ms, memory}` | storage service ([`node_api`]) |
//! | POST | `/cache_service/invalidate_row_cache` | empty the row cache (removals) |
//! | POST | `/cache_service/invalidate_key_cache` | drop the cached index pages (Cairn's key cache) |
//! | POST | `/system/drop_sstable_caches` | both |
//! | POST | `/lsa/compact` | evict the whole cache, rows and index pages (evictions), as ScyllaDB's reclaim of all its memory |
//! | POST | `/cache_service/invalidate_counter_cache` | no-op: no counter cache |
//! | GET | `/cache_service/metrics/row/{entries, size, capacity, hits, misses, requests, hit_rate}` | the row cache (partitions, bytes, budget, partition lookups) |
//! | GET | `/cache_service/metrics/key/{…}` | the cached index pages (pages, bytes, their share of the budget, page lookups) |
//! | GET | `/cache_service/metrics/counter/{…}` | zeros |
//! | GET, POST, DELETE | `/storage_service/snapshots`, `/storage_service/snapshots/size/true`, `/storage_service/sstables/{ks}`, `/storage_service/incremental_backups` | snapshots, refresh, backups ([`snapshots`]) |
//!
//! [`serve_with`] runs the same HTTP server with another handler: the Prometheus endpoint
//! (`crate::metrics`) uses it on the metrics port. Each listener has a [`guard::Guard`]: its
//! bearer token and TLS, checked before a request reaches the handler.

pub mod column_family;
pub mod guard;
pub mod http;
pub mod json;
pub mod node_api;
pub mod snapshots;

use crate::config::Config;
use crate::protocol::transport::{self, Opened};
use crate::stall::{self, TaskKind};
use cairn_cluster::node::{Endpoint, HostId};
use cairn_cluster::placement::ReplicationStrategy;
use cairn_cluster::ring::TokenRing;
use cairn_engine::compaction::job::JobReport;
use cairn_engine::compaction::manager::RunningJob;
use cairn_engine::model::Token;
use cairn_engine::{Database, Error as EngineError};
use guard::Guard;
use http::{Request, Response};
use json::Json;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;

/// The release version reported to tools and drivers (ScyllaDB reports 3.0.8, which makes
/// drivers use their Cassandra 3 schema queries).
pub const RELEASE_VERSION: &str = "3.0.8";

/// Cassandra's schema version of an empty schema.
pub const EMPTY_SCHEMA_VERSION: &str = "59adb24e-f3cd-3e02-97f0-5b395827453f";

/// Connections served at once; more are answered 503 and closed.
pub const MAX_CONNECTIONS: usize = 256;

/// An idle keep-alive connection is closed after this long.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// A TLS handshake must complete within this long (as the native port's).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Who the node is (for `host_id`, `release_version`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInfo {
    /// The node's host id (a UUID).
    pub host_id: String,
    /// `cluster_name`.
    pub cluster_name: String,
    /// `listen_address` (or `broadcast_address`).
    pub address: String,
    /// `release_version`.
    pub release_version: String,
    /// `partitioner` class.
    pub partitioner: String,
    /// Data center (single node: `datacenter1`, as `SimpleSnitch`).
    pub data_center: String,
    /// Rack (`rack1`).
    pub rack: String,
    /// `endpoint_snitch`, as configured.
    pub snitch: String,
    /// The node's tokens (system.local's `tokens`).
    pub tokens: Vec<String>,
    /// Generation number: seconds since the epoch when the node started (gossip's
    /// generation in Cassandra).
    pub generation: i64,
    /// When the node started (for `uptime`).
    pub started: std::time::Instant,
}

impl NodeInfo {
    /// From the configuration, with a given host id.
    pub fn from_config(config: &Config, host_id: impl Into<String>) -> NodeInfo {
        NodeInfo {
            host_id: host_id.into(),
            cluster_name: config.cluster_name.clone(),
            address: config
                .broadcast_address
                .clone()
                .unwrap_or_else(|| config.listen_address.clone()),
            release_version: RELEASE_VERSION.into(),
            partitioner: config.partitioner.clone(),
            data_center: "datacenter1".into(),
            rack: "rack1".into(),
            snitch: config.endpoint_snitch.clone(),
            tokens: vec!["0".into()],
            generation: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64),
            started: std::time::Instant::now(),
        }
    }
}

impl Default for NodeInfo {
    fn default() -> Self {
        NodeInfo::from_config(&Config::default(), random_uuid())
    }
}

/// A random (version 4) UUID, from the clock and the process id (no RNG dependency).
pub fn random_uuid() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut s = nanos ^ (u64::from(std::process::id()) << 40) ^ 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let hi = (next() & !0xF000) | 0x4000;
    let lo = (next() & !(0xC << 60)) | (0x8 << 60);
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        hi >> 32,
        (hi >> 16) & 0xFFFF,
        hi & 0xFFFF,
        lo >> 48,
        lo & 0xFFFF_FFFF_FFFF
    )
}

/// A materialized view's or an index's build on this node, as the REST API shows it.
#[derive(Debug, Clone)]
pub struct ViewBuild {
    /// The keyspace.
    pub keyspace: String,
    /// The view's name, or the index's (not its hidden view's).
    pub name: String,
    /// The base table's name.
    pub base: String,
    /// A secondary index rather than a materialized view.
    pub index: bool,
    /// Finished on this node.
    pub built: bool,
    /// While it runs: base partitions read, and the base table's estimated partitions.
    pub progress: Option<(u64, u64)>,
    /// A number that names the build (the view's id folded), for its job id.
    pub id: u64,
}

/// One member of the cluster as the REST API shows it.
#[derive(Debug, Clone)]
pub struct MemberInfo {
    /// Its address (`broadcast_address`).
    pub address: String,
    /// Its host id.
    pub host_id: String,
    /// Whether this node sees it up (itself always).
    pub up: bool,
    /// Whether it is still joining the ring.
    pub joining: bool,
    /// Its tokens.
    pub tokens: Vec<String>,
    /// Data center.
    pub data_center: String,
    /// Rack.
    pub rack: String,
    /// Bytes of live sstables, once known.
    pub load: Option<f64>,
    /// Its schema version, once known.
    pub schema_version: Option<String>,
}

/// What the REST API needs from a node. Implementations must be cheap to call from
/// blocking threads; every method may block.
pub trait AdminBackend: Send + Sync + 'static {
    /// The storage engine.
    fn database(&self) -> &Database;

    /// Who the node is.
    fn node(&self) -> NodeInfo;

    /// Whether the CQL server is serving (a bare engine has none).
    fn native_transport_running(&self) -> bool {
        false
    }

    /// The probability that a request is traced without the client asking
    /// (`nodetool gettraceprobability`); `None` for a bare engine, which has no CQL.
    fn trace_probability(&self) -> Option<f64> {
        None
    }

    /// Sets [`AdminBackend::trace_probability`]; the error says why a value is refused.
    fn set_trace_probability(&self, _p: f64) -> Result<(), String> {
        Err("this node serves no CQL: nothing to trace".into())
    }

    /// The schema version (a UUID); a bare engine has no schema catalog and reports the
    /// version of an empty schema.
    fn schema_version(&self) -> String {
        EMPTY_SCHEMA_VERSION.to_string()
    }

    /// Keyspace names, sorted. Default: the keyspaces of the engine's tables.
    fn keyspaces(&self) -> Vec<String> {
        let mut ks: Vec<String> = self
            .database()
            .tables()
            .iter()
            .map(|t| t.schema().keyspace.clone())
            .collect();
        ks.sort();
        ks.dedup();
        ks
    }

    /// The token ring as this node knows it. Default: this node alone, with its tokens.
    fn ring(&self) -> TokenRing {
        let n = self.node();
        let endpoint = Endpoint {
            host_id: HostId::parse(&n.host_id).unwrap_or(HostId([0; 16])),
            address: n
                .address
                .parse()
                .unwrap_or(std::net::IpAddr::from([127, 0, 0, 1])),
            datacenter: n.data_center,
            rack: n.rack,
        };
        let tokens = n
            .tokens
            .iter()
            .filter_map(|t| t.parse().ok())
            .filter(|t| *t != i64::MIN)
            .map(Token)
            .collect();
        TokenRing::new(vec![(endpoint, tokens)]).unwrap_or_default()
    }

    /// Every member of the cluster, this node first. Default: this node alone.
    fn members(&self) -> Vec<MemberInfo> {
        let n = self.node();
        vec![MemberInfo {
            address: n.address,
            host_id: n.host_id,
            up: true,
            joining: false,
            tokens: n.tokens,
            data_center: n.data_center,
            rack: n.rack,
            load: Some(node_api::live_disk_bytes(self.database())),
            schema_version: Some(self.schema_version()),
        }]
    }

    /// How keyspace `keyspace` places its replicas; `None` if it does not exist. Default:
    /// one replica.
    fn placement(&self, keyspace: &str) -> Option<ReplicationStrategy> {
        self.keyspaces()
            .iter()
            .any(|k| k == keyspace)
            .then_some(ReplicationStrategy::Simple {
                replication_factor: 1,
            })
    }

    /// The views and indexes this node knows, with their builds here. Default: none (a bare
    /// engine builds none).
    fn view_builds(&self) -> Vec<ViewBuild> {
        Vec::new()
    }

    /// Materialized view `ks.view`'s build status on each host with one (address, STARTED or
    /// SUCCESS), this node first. Default: none (a bare engine builds none).
    fn view_build_statuses(&self, _ks: &str, _view: &str) -> Vec<(String, String)> {
        Vec::new()
    }

    /// A keyspace's table names, sorted; `None` if the keyspace does not exist.
    fn tables(&self, keyspace: &str) -> Option<Vec<String>> {
        let mut names: Vec<String> = self
            .database()
            .tables()
            .iter()
            .filter(|t| t.schema().keyspace == keyspace)
            .map(|t| t.schema().name.clone())
            .collect();
        if names.is_empty() {
            return None;
        }
        names.sort();
        Some(names)
    }
}

/// [`AdminBackend`] over a bare engine.
pub struct EngineBackend {
    db: Arc<Database>,
    node: NodeInfo,
}

impl EngineBackend {
    /// Serves `db` as the node described by `node`.
    pub fn new(db: Arc<Database>, node: NodeInfo) -> EngineBackend {
        EngineBackend { db, node }
    }
}

impl AdminBackend for EngineBackend {
    fn database(&self) -> &Database {
        &self.db
    }

    fn node(&self) -> NodeInfo {
        self.node.clone()
    }
}

/// A running REST server.
pub struct RestServer {
    addr: SocketAddr,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl RestServer {
    /// The address it listens on (the real port when started on port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, lets requests in progress finish (up to 5 s), closes connections.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

/// Answers one request; runs on tokio's blocking pool.
pub type Handler = dyn Fn(&Request) -> Response + Send + Sync;

/// Binds `addr` and serves the API, as `guard` allows, until [`RestServer::shutdown`].
pub async fn serve(
    addr: SocketAddr,
    backend: Arc<dyn AdminBackend>,
    guard: Guard,
) -> std::io::Result<RestServer> {
    serve_with(
        addr,
        "REST API",
        Arc::new(move |req| handle(&*backend, req)),
        guard,
    )
    .await
}

/// Binds `addr` and answers every request `guard` lets through with `handler` (the REST
/// API, the Prometheus endpoint) until [`RestServer::shutdown`]. `what` names the listener
/// in logs.
pub async fn serve_with(
    addr: SocketAddr,
    what: &'static str,
    handler: Arc<Handler>,
    guard: Guard,
) -> std::io::Result<RestServer> {
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let (stop, stop_rx) = watch::channel(false);
    let scheme = if guard.tls().is_some() {
        "https"
    } else {
        "http"
    };
    tracing::info!(
        "{what} listening on {scheme}://{addr} ({})",
        guard.describe()
    );
    let task = stall::spawn(
        TaskKind::HttpAccept,
        accept_loop(listener, handler, Arc::new(guard), stop_rx),
    );
    Ok(RestServer { addr, stop, task })
}

async fn accept_loop(
    listener: TcpListener,
    handler: Arc<Handler>,
    guard: Arc<Guard>,
    mut stop: watch::Receiver<bool>,
) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut conns = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = stop.changed() => break,
        };
        while conns.try_join_next().is_some() {}
        let (mut stream, peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                tracing::warn!("REST API: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            // Over TLS the answer would need a handshake first: just close.
            if guard.tls().is_none() {
                conns.spawn(stall::instrument(TaskKind::HttpConnection, async move {
                    let resp = Response::error(503, "too many connections");
                    let _ = http::write_response(&mut stream, &resp, false).await;
                }));
            }
            continue;
        };
        let handler = handler.clone();
        let guard = guard.clone();
        let stop = stop.clone();
        conns.spawn(stall::instrument(TaskKind::HttpConnection, async move {
            let _ = stream.set_nodelay(true);
            match transport::open(stream, guard.tls(), HANDSHAKE_TIMEOUT).await {
                Ok(Opened::Plain(s)) => connection(s, peer, handler, guard, stop).await,
                Ok(Opened::Tls(s)) => connection(*s, peer, handler, guard, stop).await,
                Err(e) => {
                    guard.stats().count_handshake_failure();
                    tracing::debug!(peer = %peer, "{}: closing connection: {e}", guard.face().title());
                }
            }
            drop(permit);
        }));
    }
    drop(listener);
    let drained = tokio::time::timeout(Duration::from_secs(5), async {
        while conns.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        conns.abort_all();
    }
}

/// Serves one connection's requests (after its TLS handshake, with TLS).
async fn connection<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    peer: SocketAddr,
    handler: Arc<Handler>,
    guard: Arc<Guard>,
    mut stop: watch::Receiver<bool>,
) {
    use tokio::io::AsyncWriteExt;
    let mut buf = Vec::new();
    loop {
        let read = tokio::select! {
            r = tokio::time::timeout(IDLE_TIMEOUT, http::read_request(&mut stream, &mut buf)) => r,
            _ = stop.changed() => return,
        };
        let req = match read {
            Err(_) | Ok(Ok(None)) => return,
            Ok(Err(e)) => {
                let _ =
                    http::write_response(&mut stream, &Response::error(e.status, e.message), false)
                        .await;
                linger(&mut stream).await;
                return;
            }
            Ok(Ok(Some(req))) => req,
        };
        let keep_alive = req.keep_alive && !*stop.borrow();
        let resp = match guard.check(&req, peer) {
            Err(refused) => refused,
            Ok(()) => {
                let h = handler.clone();
                tokio::task::spawn_blocking(move || h(&req))
                    .await
                    .unwrap_or_else(|e| {
                        tracing::error!("REST API: handler failed: {e}");
                        Response::error(500, "internal error")
                    })
            }
        };
        if http::write_response(&mut stream, &resp, keep_alive)
            .await
            .is_err()
        {
            return;
        }
        if !keep_alive {
            // A clean end (TLS: close_notify), so the client knows the response is whole.
            let _ = stream.shutdown().await;
            return;
        }
    }
}

/// Closes after an error response without resetting the connection: the peer may still be
/// sending, and closing with unread input would make the kernel send RST, which can destroy
/// the response before the peer reads it. Discards input for a short while first.
async fn linger<S: AsyncRead + AsyncWrite + Unpin>(stream: &mut S) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let _ = stream.shutdown().await;
    let mut sink = [0u8; 4096];
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        let mut total = 0usize;
        while total < (1 << 20) {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
    })
    .await;
}

/// Handles one request (blocking). Public so tests and other front ends can call it.
pub fn handle(backend: &dyn AdminBackend, req: &Request) -> Response {
    let seg: Vec<&str> = req.segments.iter().map(String::as_str).collect();
    let m = req.method.as_str();
    match (m, seg.as_slice()) {
        ("POST", ["storage_service", "keyspace_flush", ks]) => flush_keyspace(backend, ks, req),
        ("POST", ["storage_service", "flush"]) => flush_all(backend),
        ("POST", ["storage_service", "keyspace_compaction", ks]) => {
            compact_keyspace(backend, ks, req)
        }
        ("POST", ["storage_service", "compact"]) => compact_all(backend, req),
        ("POST", ["compaction_manager", "stop_compaction"]) => stop_compaction(backend, req),
        ("POST", ["compaction_manager", "stop_keyspace_compaction", ks]) => {
            stop_keyspace_compaction(backend, ks, req)
        }
        ("GET", ["compaction_manager", "compactions"]) => {
            let mut jobs: Vec<Json> = backend
                .database()
                .compaction()
                .running()
                .iter()
                .map(running_json)
                .collect();
            jobs.extend(backend.view_builds().iter().filter_map(view_build_json));
            Response::ok(Json::Arr(jobs).to_text())
        }
        ("GET", ["storage_service", "view_build_statuses", ks, view]) => Response::ok(
            Json::Arr(
                backend
                    .view_build_statuses(ks, view)
                    .iter()
                    .map(|(host, status)| {
                        Json::obj([("key", Json::str(host)), ("value", Json::str(status))])
                    })
                    .collect(),
            )
            .to_text(),
        ),
        ("GET", ["compaction_manager", "compaction_history"]) => {
            let mut h = backend.database().compaction().history();
            h.reverse(); // newest first, like ScyllaDB
            Response::ok(Json::Arr(h.iter().map(history_json).collect()).to_text())
        }
        ("GET", ["compaction_manager", "metrics", "pending_tasks"]) => {
            let n: u64 = pending_by_table(backend).iter().map(|(_, _, n)| n).sum();
            Response::ok(Json::uint(n).to_text())
        }
        ("GET", ["compaction_manager", "metrics", "pending_tasks_by_table"]) => Response::ok(
            Json::Arr(
                pending_by_table(backend)
                    .into_iter()
                    .filter(|(_, _, n)| *n > 0)
                    .map(|(ks, cf, n)| {
                        Json::obj([
                            ("ks", Json::Str(ks)),
                            ("cf", Json::Str(cf)),
                            ("task", Json::uint(n)),
                        ])
                    })
                    .collect(),
            )
            .to_text(),
        ),
        ("GET", ["compaction_manager", "metrics", "completed_tasks"])
        | ("GET", ["compaction_manager", "metrics", "total_compactions_completed"]) => {
            Response::ok(Json::uint(backend.database().compaction().stats().completed).to_text())
        }
        ("GET", ["compaction_manager", "metrics", "bytes_compacted"]) => {
            Response::ok(Json::uint(backend.database().compaction().stats().bytes_in).to_text())
        }
        ("GET", ["storage_service", "compaction_throughput"]) => {
            let bps = backend.database().compaction().throughput();
            Response::ok(Json::uint(bps.div_ceil(1 << 20)).to_text())
        }
        ("POST", ["storage_service", "compaction_throughput"]) => {
            let Some(v) = req.param("value") else {
                return Response::error(400, "Missing mandatory parameter 'value'");
            };
            match v.trim().parse::<u64>() {
                Ok(mb) if mb <= 1 << 30 => {
                    backend.database().compaction().set_throughput(mb << 20);
                    Response::void()
                }
                _ => Response::error(
                    400,
                    format!("Invalid value '{v}' for parameter 'value': expected MB/s, a non-negative integer"),
                ),
            }
        }
        ("GET", ["storage_service", "trace_probability"]) => match backend.trace_probability() {
            Some(p) => Response::ok(Json::Float(p).to_text()),
            None => Response::error(404, "this node serves no CQL: nothing to trace"),
        },
        ("POST", ["storage_service", "trace_probability"]) => {
            let Some(v) = req.param("probability") else {
                return Response::error(400, "Missing mandatory parameter 'probability'");
            };
            let p = match v.trim().parse::<f64>() {
                Ok(p) if p.is_finite() => p,
                _ => {
                    return Response::error(
                        400,
                        format!("Invalid value '{v}' for parameter 'probability': expected a number between 0 and 1"),
                    )
                }
            };
            match backend.set_trace_probability(p) {
                Ok(()) => Response::void(),
                Err(e) => Response::error(400, e),
            }
        }
        ("GET", ["storage_service", "keyspaces"]) => {
            let mut ks = backend.keyspaces();
            if req.param("type") == Some("user") || req.param("type") == Some("non_local_strategy")
            {
                ks.retain(|k| !k.starts_with("system"));
            }
            Response::ok(Json::Arr(ks.into_iter().map(Json::Str).collect()).to_text())
        }
        ("GET", ["column_family"]) => Response::ok(
            Json::Arr(
                all_tables(backend)
                    .into_iter()
                    .map(|(ks, cf)| {
                        Json::obj([
                            ("ks", Json::Str(ks)),
                            ("cf", Json::Str(cf)),
                            ("type", Json::str("ColumnFamilies")),
                        ])
                    })
                    .collect(),
            )
            .to_text(),
        ),
        ("GET", ["column_family", "name"]) => Response::ok(
            Json::Arr(
                all_tables(backend)
                    .into_iter()
                    .map(|(ks, cf)| Json::Str(format!("{ks}:{cf}")))
                    .collect(),
            )
            .to_text(),
        ),
        ("GET", ["column_family", "name", "keyspace"]) => Response::ok(
            Json::Arr(backend.keyspaces().into_iter().map(Json::Str).collect()).to_text(),
        ),
        ("GET", ["column_family", "metrics", metric, name]) => {
            column_family::metric(backend, metric, name)
        }
        ("GET", ["column_family", "metrics", metric, kind, name]) => {
            column_family::metric(backend, &format!("{metric}/{kind}"), name)
        }
        ("GET", ["column_family", "sstables", "per_level", name]) => {
            column_family::per_level(backend, name)
        }
        ("GET", ["storage_service", "hostid", "local"]) => {
            Response::ok(Json::Str(backend.node().host_id).to_text())
        }
        ("GET", ["storage_service", "host_id"]) => Response::ok(
            Json::Arr(
                backend
                    .members()
                    .into_iter()
                    .map(|m| {
                        Json::obj([
                            ("key", Json::Str(m.address)),
                            ("value", Json::Str(m.host_id)),
                        ])
                    })
                    .collect(),
            )
            .to_text(),
        ),
        ("GET", ["storage_service", "release_version"]) => {
            Response::ok(Json::Str(backend.node().release_version).to_text())
        }
        ("GET", ["storage_service", "scylla_release_version"]) => {
            Response::ok(Json::str(concat!("cairn-", env!("CARGO_PKG_VERSION"))).to_text())
        }
        ("GET", ["storage_service", "cluster_name"]) => {
            Response::ok(Json::Str(backend.node().cluster_name).to_text())
        }
        ("GET", ["storage_service", "partitioner_name"]) => {
            Response::ok(Json::Str(backend.node().partitioner).to_text())
        }
        _ if let Some(r) = node_api::handle(backend, req, &seg) => r,
        _ if let Some(r) = snapshots::handle(backend, req, &seg) => r,
        _ if known_path(&seg) => {
            Response::error(405, format!("Method {m} not allowed for {}", req.path))
        }
        _ => Response::error(404, "Not found"),
    }
}

/// Whether some method serves this path (to answer 405 rather than 404).
fn known_path(seg: &[&str]) -> bool {
    matches!(
        seg,
        [
            "storage_service",
            "keyspace_flush" | "keyspace_compaction",
            _
        ] | [
            "storage_service",
            "flush" | "compact" | "compaction_throughput" | "keyspaces" | "trace_probability"
        ] | [
            "storage_service",
            "host_id" | "release_version" | "scylla_release_version"
        ] | ["storage_service", "cluster_name" | "partitioner_name"]
            | ["storage_service", "hostid", "local"]
            | [
                "compaction_manager",
                "stop_compaction" | "compactions" | "compaction_history"
            ]
            | ["compaction_manager", "stop_keyspace_compaction", _]
            | ["compaction_manager", "metrics", _]
            | ["column_family"]
            | ["column_family", "name"]
            | ["column_family", "name", "keyspace"]
            | ["column_family", "metrics", _, _]
            | ["column_family", "metrics", _, _, _]
            | ["column_family", "sstables", "per_level", _]
    )
}

/// 400 with ScyllaDB's `no_such_keyspace` text.
pub(crate) fn no_keyspace(ks: &str) -> Response {
    Response::error(400, format!("Can't find a keyspace {ks}"))
}

/// 400 with ScyllaDB's `no_such_column_family` text.
pub(crate) fn no_table(ks: &str, cf: &str) -> Response {
    Response::error(
        400,
        format!("Can't find a column family {cf} in keyspace {ks}"),
    )
}

pub(crate) fn engine_error(e: EngineError) -> Response {
    match e {
        EngineError::UnknownTable { keyspace, table } => no_table(&keyspace, &table),
        other => Response::error(500, other.to_string()),
    }
}

/// The tables named by `cf` (comma-separated; all of the keyspace when absent or empty),
/// checked to exist.
fn resolve_tables(
    backend: &dyn AdminBackend,
    ks: &str,
    cf: Option<&str>,
) -> Result<Vec<String>, Response> {
    let Some(all) = backend.tables(ks) else {
        return Err(no_keyspace(ks));
    };
    match cf.map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(all),
        Some(list) => {
            let mut out = Vec::new();
            for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                if !all.iter().any(|t| t == name) {
                    return Err(no_table(ks, name));
                }
                if !out.iter().any(|t| t == name) {
                    out.push(name.to_string());
                }
            }
            Ok(out)
        }
    }
}

fn all_tables(backend: &dyn AdminBackend) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for ks in backend.keyspaces() {
        for cf in backend.tables(&ks).unwrap_or_default() {
            out.push((ks.clone(), cf));
        }
    }
    out
}

fn flush_keyspace(backend: &dyn AdminBackend, ks: &str, req: &Request) -> Response {
    let tables = match resolve_tables(backend, ks, req.param("cf")) {
        Ok(t) => t,
        Err(r) => return r,
    };
    for t in &tables {
        if let Err(e) = backend.database().flush(ks, t) {
            return engine_error(e);
        }
    }
    Response::void()
}

fn flush_all(backend: &dyn AdminBackend) -> Response {
    for (ks, t) in all_tables(backend) {
        if let Err(e) = backend.database().flush(&ks, &t) {
            return engine_error(e);
        }
    }
    Response::void()
}

fn flush_memtables(req: &Request) -> Result<bool, Response> {
    match req.param("flush_memtables") {
        None | Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(_) => Err(Response::error(
            400,
            "Parameter must be either 'true' or 'false'",
        )),
    }
}

fn compact_table(
    backend: &dyn AdminBackend,
    ks: &str,
    t: &str,
    flush: bool,
) -> Result<(), Response> {
    let db = backend.database();
    let r = if flush {
        db.compact(ks, t).map(|_| ())
    } else {
        match db.table(ks, t) {
            Some(table) => db.compaction().major(&table).map(|_| ()),
            None => return Err(no_table(ks, t)),
        }
    };
    r.map_err(engine_error)
}

fn compact_keyspace(backend: &dyn AdminBackend, ks: &str, req: &Request) -> Response {
    let flush = match flush_memtables(req) {
        Ok(f) => f,
        Err(r) => return r,
    };
    let tables = match resolve_tables(backend, ks, req.param("cf")) {
        Ok(t) => t,
        Err(r) => return r,
    };
    for t in &tables {
        if let Err(r) = compact_table(backend, ks, t, flush) {
            return r;
        }
    }
    Response::void()
}

fn compact_all(backend: &dyn AdminBackend, req: &Request) -> Response {
    let flush = match flush_memtables(req) {
        Ok(f) => f,
        Err(r) => return r,
    };
    for (ks, t) in all_tables(backend) {
        if let Err(r) = compact_table(backend, &ks, &t, flush) {
            return r;
        }
    }
    Response::void()
}

/// Checks a `type` parameter: `Ok(true)` when it names compactions we run.
fn stop_type(req: &Request) -> Result<bool, Response> {
    match req.param("type") {
        None => Err(Response::error(400, "Missing mandatory parameter 'type'")),
        Some("COMPACTION") => Ok(true),
        // Kinds of jobs Cairn never runs: nothing to stop.
        Some("CLEANUP" | "SCRUB" | "RESHAPE" | "RESHARD" | "UPGRADE") => Ok(false),
        Some(t @ ("VALIDATION" | "INDEX_BUILD")) => Err(Response::error(
            500,
            format!("Compaction type {t} is unsupported"),
        )),
        Some(t) => Err(Response::error(
            400,
            format!("Unknown compaction type: {t}"),
        )),
    }
}

fn stop_compaction(backend: &dyn AdminBackend, req: &Request) -> Response {
    match stop_type(req) {
        Ok(true) => {
            let n = backend.database().compaction().stop(None);
            tracing::info!("REST API: stopping {n} compactions");
            Response::void()
        }
        Ok(false) => Response::void(),
        Err(r) => r,
    }
}

fn stop_keyspace_compaction(backend: &dyn AdminBackend, ks: &str, req: &Request) -> Response {
    let tables = match resolve_tables(backend, ks, req.param("tables")) {
        Ok(t) => t,
        Err(r) => return r,
    };
    match stop_type(req) {
        Ok(true) => {
            let db = backend.database();
            for t in &tables {
                if let Some(table) = db.table(ks, t) {
                    db.compaction().stop(Some(&table));
                }
            }
            Response::void()
        }
        Ok(false) => Response::void(),
        Err(r) => r,
    }
}

fn pending_by_table(backend: &dyn AdminBackend) -> Vec<(String, String, u64)> {
    let db = backend.database();
    db.tables()
        .iter()
        .map(|t| {
            let s = t.schema();
            let n = db.compaction().table_stats(t).map_or(0, |st| st.pending);
            (s.keyspace.clone(), s.name.clone(), n)
        })
        .collect()
}

/// A job id as a UUID-shaped string (tools expect UUIDs).
fn job_uuid(id: u64, started_at_ms: u64) -> String {
    format!(
        "{:08x}-{:04x}-4000-8000-{:012x}",
        (started_at_ms >> 16) as u32,
        started_at_ms & 0xFFFF,
        id & 0xFFFF_FFFF_FFFF
    )
}

fn running_json(r: &RunningJob) -> Json {
    Json::obj([
        ("id", Json::Str(job_uuid(r.id, 0))),
        ("ks", Json::str(&r.keyspace)),
        ("cf", Json::str(&r.table)),
        ("completed", Json::uint(r.done_bytes)),
        ("total", Json::uint(r.total_bytes)),
        ("task_type", Json::str("COMPACTION")),
        ("unit", Json::str("bytes")),
        ("kind", Json::Str(format!("{:?}", r.kind))),
    ])
}

/// A running view or index build as a job of `compactionstats` (Cassandra's
/// `ViewBuilderTask` / `SecondaryIndexBuilder`: `OperationType.VIEW_BUILD` "View build",
/// `INDEX_BUILD` "Secondary index build", in keys, on the base table); `None` when not running.
fn view_build_json(b: &ViewBuild) -> Option<Json> {
    let (completed, total) = b.progress?;
    let task = if b.index {
        "Secondary index build"
    } else {
        "View build"
    };
    Some(Json::obj([
        ("id", Json::Str(job_uuid(b.id, 1))),
        ("ks", Json::str(&b.keyspace)),
        ("cf", Json::str(&b.base)),
        ("completed", Json::uint(completed)),
        ("total", Json::uint(total.max(completed))),
        ("task_type", Json::str(task)),
        ("unit", Json::str("keys")),
        ("kind", Json::str(task)),
    ]))
}

fn history_json(j: &JobReport) -> Json {
    let compacted_at = j.started_at_ms + j.duration.as_millis() as u64;
    Json::obj([
        ("id", Json::Str(job_uuid(j.id, j.started_at_ms))),
        ("shard_id", Json::Int(0)),
        ("ks", Json::str(&j.keyspace)),
        ("cf", Json::str(&j.table)),
        ("compaction_type", Json::str("Compact")),
        ("kind", Json::Str(format!("{:?}", j.kind))),
        ("started_at", Json::uint(j.started_at_ms)),
        ("compacted_at", Json::uint(compacted_at)),
        ("bytes_in", Json::uint(j.bytes_in)),
        ("bytes_out", Json::uint(j.bytes_out)),
        (
            "rows_merged",
            Json::Arr(
                j.merged_from
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| **n > 0)
                    .map(|(i, n)| {
                        Json::obj([("key", Json::uint(i as u64 + 1)), ("value", Json::uint(*n))])
                    })
                    .collect(),
            ),
        ),
        ("sstables_in", generations(&j.inputs)),
        ("sstables_out", generations(&j.outputs)),
    ])
}

fn generations(gens: &[u64]) -> Json {
    Json::Arr(
        gens.iter()
            .map(|g| Json::obj([("generation", Json::Str(g.to_string()))]))
            .collect(),
    )
}
