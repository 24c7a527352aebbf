//! Cairn's network faces: a node's configuration ([`config`]), the CQL native protocol
//! ([`protocol`]) serving the executor ([`cql`]), the REST admin API ([`rest`]), the
//! Prometheus endpoint ([`metrics`]), the reactor stall detector ([`stall`]) and the native
//! port's TLS ([`tls`]); `audit` tells the audit log (`cairn_cql::audit`) what the CQL
//! front door runs.
//! [`start_node`] wires them to a storage engine.

#![deny(clippy::unwrap_used, clippy::expect_used)]

mod audit;
pub mod config;
pub mod cql;
mod membership;
pub mod metrics;
pub mod protocol;
pub mod rest;
pub mod stall;
pub mod tls;

use cairn_cluster::node::ip_bytes;
use cairn_cluster::placement::ReplicationStrategy;
use cairn_engine::Database;
use std::sync::Arc;

/// How long a schema change may take to commit in group 0 once a majority of it is up.
const SCHEMA_CHANGE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// A running node: the engine, the CQL executor, the CQL server and the REST API.
pub struct Node {
    /// The storage engine.
    pub db: Arc<Database>,
    /// The CQL executor.
    pub executor: Arc<cairn_cql::exec::Executor>,
    /// The native-protocol server.
    pub cql: protocol::Server,
    /// The REST admin API.
    pub rest: rest::RestServer,
    /// The Prometheus endpoint.
    pub metrics: rest::RestServer,
    /// The stall detector watching the runtime the node was started on.
    pub stalls: Arc<stall::StallDetector>,
    /// The node's membership of the cluster (messaging, liveness, group 0, topology).
    pub membership: Arc<cairn_cluster::membership::Membership>,
    /// Forwards membership changes to drivers.
    events: tokio::task::JoinHandle<()>,
    /// Applies other nodes' schema changes and tells drivers.
    schema: tokio::task::JoinHandle<()>,
}

/// Why a node could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The engine failed to open or recover.
    #[error("storage engine: {0}")]
    Engine(#[from] cairn_engine::Error),
    /// The schema catalog failed to load.
    #[error("schema: {0}")]
    Schema(#[from] cairn_cql::Error),
    /// The node's identity (host id, tokens) or location (snitch) cannot be established.
    #[error("cluster: {0}")]
    Cluster(#[from] cairn_cluster::Error),
    /// A background thread could not be started.
    #[error("cannot start the {what}: {source}")]
    Thread {
        what: &'static str,
        source: std::io::Error,
    },
    /// `client_encryption_options` or `server_encryption_options` name files that cannot
    /// serve TLS.
    #[error("TLS: {0}")]
    Tls(#[from] tls::TlsError),
    /// An admin face (REST API, Prometheus) would be exposed, or its token or TLS files
    /// cannot be used. (Transparent: the message says it all, once.)
    #[error(transparent)]
    AdminFace(#[from] rest::guard::GuardError),
    /// The audit log cannot start (`audit: syslog` with no socket at its path, …).
    #[error("{0}")]
    Audit(cairn_cql::Error),
    /// Tracing cannot start (its tables cannot be created, or its writer thread).
    #[error("tracing: {0}")]
    Tracing(cairn_cql::Error),
    /// A port could not be bound or an address resolved.
    #[error("cannot listen on {what} {addr}: {source}")]
    Listen {
        what: &'static str,
        addr: String,
        source: std::io::Error,
    },
}

impl Node {
    /// Stops the listeners; the engine closes (compactions stopped, commitlog synced) when
    /// the last reference to `db` goes.
    pub async fn shutdown(self) {
        self.cql.shutdown().await;
        self.rest.shutdown().await;
        self.metrics.shutdown().await;
        self.stalls.stop();
        self.events.abort();
        self.schema.abort();
        self.membership.shutdown().await;
    }
}

/// The REST API's view of a node with a CQL catalog: keyspaces are the catalog's.
struct NodeBackend {
    db: Arc<Database>,
    executor: Arc<cairn_cql::exec::Executor>,
    info: rest::NodeInfo,
    /// The native transport's stop switch (a failure policy may have used it).
    native: protocol::StopHandle,
    membership: Arc<cairn_cluster::membership::Membership>,
    /// Tracing's probability (`settraceprobability`).
    tracing: Arc<cairn_cql::trace::Tracing>,
}

impl rest::AdminBackend for NodeBackend {
    fn database(&self) -> &Database {
        &self.db
    }

    fn node(&self) -> rest::NodeInfo {
        self.info.clone()
    }

    fn native_transport_running(&self) -> bool {
        !self.native.is_stopped()
    }

    fn trace_probability(&self) -> Option<f64> {
        Some(self.tracing.probability())
    }

    fn set_trace_probability(&self, p: f64) -> Result<(), String> {
        self.tracing.set_probability(p)
    }

    fn schema_version(&self) -> String {
        uuid_text(&self.executor.catalog().schema_version())
    }

    fn keyspaces(&self) -> Vec<String> {
        self.executor
            .catalog()
            .keyspaces()
            .into_iter()
            .map(|k| k.name)
            .collect()
    }

    fn members(&self) -> Vec<rest::MemberInfo> {
        let topology = self.membership.topology().get();
        let statuses = self.membership.view().statuses;
        let local = topology.local_id();
        let mut out: Vec<rest::MemberInfo> = topology
            .members()
            .iter()
            .filter(|m| m.state != cairn_cluster::topology::MemberState::Left)
            .map(|m| {
                let me = m.endpoint.host_id == local;
                let status = (!me).then(|| statuses.get(m.endpoint.address)).flatten();
                rest::MemberInfo {
                    address: m.endpoint.address.to_string(),
                    host_id: m.endpoint.host_id.to_string(),
                    up: me || m.up,
                    joining: m.state == cairn_cluster::topology::MemberState::Joining,
                    tokens: m.tokens.iter().map(|t| t.to_string()).collect(),
                    data_center: m.endpoint.datacenter.clone(),
                    rack: m.endpoint.rack.clone(),
                    load: if me {
                        Some(rest::node_api::live_disk_bytes(&self.db))
                    } else {
                        status.as_ref().map(|s| s.load)
                    },
                    schema_version: if me {
                        Some(self.schema_version())
                    } else {
                        status.and_then(|s| s.schema_version).map(|v| uuid_text(&v))
                    },
                }
            })
            .collect();
        // This node first (the REST API's single-node answers read it so).
        out.sort_by_key(|m| m.host_id != local.to_string());
        out
    }

    fn ring(&self) -> cairn_cluster::ring::TokenRing {
        self.membership.topology().get().ring().clone()
    }

    fn placement(&self, keyspace: &str) -> Option<ReplicationStrategy> {
        Some(self.executor.catalog().keyspace(keyspace)?.placement())
    }

    fn view_builds(&self) -> Vec<rest::ViewBuild> {
        let views = self.executor.proxy().views();
        let running: std::collections::HashMap<u128, (u64, u64)> = views
            .in_progress()
            .into_iter()
            .map(|(v, p)| (v.id, (p.keys_built, p.total)))
            .collect();
        views
            .known()
            .iter()
            .filter_map(|v| {
                let base = v.view()?.base.clone();
                let index = v.index();
                Some(rest::ViewBuild {
                    keyspace: v.keyspace.clone(),
                    name: index
                        .as_ref()
                        .map_or_else(|| v.name.clone(), |d| d.name.clone()),
                    base,
                    index: index.is_some(),
                    built: views.is_built(v.id),
                    progress: running.get(&v.id).copied(),
                    id: (v.id as u64) ^ ((v.id >> 64) as u64),
                })
            })
            .collect()
    }

    fn view_build_statuses(&self, ks: &str, view: &str) -> Vec<(String, String)> {
        let views = self.executor.proxy().views();
        let Some(id) = views
            .known()
            .iter()
            .find(|v| v.index().is_none() && v.keyspace == ks && v.name == view)
            .map(|v| v.id)
        else {
            return Vec::new();
        };
        let cluster = self.membership.view();
        let topology = cluster.topology.get();
        let Some(me) = topology.local() else {
            return Vec::new();
        };
        let local = (me.endpoint.host_id, me.endpoint.address);
        cairn_cluster::proxy::view_status::ring_builds(views, id, Some(&cluster), local)
            .iter()
            .map(|h| (h.address.to_string(), h.status().to_string()))
            .collect()
    }

    fn tables(&self, keyspace: &str) -> Option<Vec<String>> {
        let cat = self.executor.catalog();
        cat.keyspace(keyspace)?;
        Some(
            cat.tables(keyspace)
                .iter()
                .map(|t| t.schema().name.clone())
                .collect(),
        )
    }
}

pub(crate) fn uuid_text(b: &[u8; 16]) -> String {
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// Carries out the failure policies' node actions: stopping the client transports stops the
/// native port (the REST API and metrics stay up, so an operator can look; the process keeps
/// running); dying exits with status 100, as Cassandra's `JVMStabilityInspector` does.
fn fault_listener(native: protocol::StopHandle) -> cairn_engine::fault::FaultListener {
    use cairn_engine::fault::NodeAction;
    Arc::new(move |action: &NodeAction| match action {
        NodeAction::StopTransports { reason } => {
            tracing::error!("{reason}");
            native.stop();
        }
        NodeAction::Die { reason } => {
            tracing::error!(
                "JVM state determined to be unstable. Exiting forcefully due to: {reason}"
            );
            std::process::exit(100);
        }
    })
}

/// Starts a node from its configuration: opens (and recovers) the engine, loads the
/// schema, serves CQL on `rpc_address:native_transport_port`, the REST API on
/// `api_address:api_port` and Prometheus metrics on `prometheus_address:prometheus_port`
/// (port 0 picks a free port: see `local_addr()` of each), and starts the stall detector on
/// the current runtime with `blocked_reactor_notify_ms` (after startup, whose blocking
/// recovery work would otherwise count, as ScyllaDB also does).
pub async fn start_node(cfg: &config::Config) -> Result<Node, StartError> {
    let listen = |what: &'static str, r: std::io::Result<std::net::SocketAddr>, addr: String| {
        r.map_err(|source| StartError::Listen { what, addr, source })
    };
    let native = listen(
        "native transport",
        cfg.native_addr(),
        format!("{}:{}", cfg.rpc_address, cfg.native_transport_port),
    )?;
    let api = listen(
        "REST API",
        cfg.api_addr(),
        format!("{}:{}", cfg.api_address, cfg.api_port),
    )?;
    let prometheus = listen(
        "Prometheus",
        cfg.prometheus_addr(),
        format!("{}:{}", cfg.prometheus_address, cfg.prometheus_port),
    )?;
    // Certificates and the snitch's file are read before the engine opens: a bad file stops
    // the node at once. Where the node is: its data center and rack.
    let native_tls = tls::native_tls(&cfg.client_encryption)?;
    let admin = rest::guard::AdminGuards::start(cfg, api.ip(), prometheus.ip())?;
    let admin_stats = admin.stats();
    let location = cairn_cluster::snitch::locate(
        &cfg.endpoint_snitch,
        cfg.source.as_deref().and_then(std::path::Path::parent),
    )?;
    let internode_tls = tls::internode_tls(&cfg.server_encryption, &location)?;
    let audit_syslog =
        cairn_cql::audit::Auditor::open_syslog(&cfg.audit).map_err(StartError::Audit)?;
    let c = cfg.clone();
    let db = tokio::task::spawn_blocking(move || config::open_database(&c))
        .await
        .map_err(|e| {
            StartError::Engine(cairn_engine::Error::io(
                "engine startup",
                std::io::Error::other(e),
            ))
        })??;
    let db = Arc::new(db);
    // Snapshots record the CQL that recreates their table (`schema.cql`).
    db.set_schema_describer(Arc::new(cairn_cql::exec::describe::schema_cql));
    // Who this node is and where in the ring: membership finds the cluster (or forms one),
    // choosing and keeping the node's host id and tokens.
    let probe = Arc::new(membership::NodeProbe {
        db: Arc::clone(&db),
        executor: std::sync::OnceLock::new(),
    });
    let membership = membership::start(
        cfg,
        db.config().data_dir.clone(),
        location.clone(),
        native,
        vec![native.port(), api.port(), prometheus.port()],
        Arc::clone(&probe),
        internode_tls,
    )
    .await?;
    let topology = membership.topology().get();
    let local = topology
        .local()
        .cloned()
        .ok_or_else(|| cairn_cluster::Error::Config("the node is not in its topology".into()))?;
    let tokens: Vec<String> = local.tokens.iter().map(|t| t.to_string()).collect();
    let info = cairn_cql::exec::system::NodeInfo {
        cluster_name: cfg.cluster_name.clone(),
        host_id: local.endpoint.host_id.0,
        listen_address: ip_bytes(local.endpoint.address),
        rpc_address: ip_bytes(local.rpc_address),
        native_port: native.port(),
        storage_port: cfg.storage_port,
        tokens: tokens.clone(),
        data_center: location.datacenter.clone(),
        rack: location.rack.clone(),
        settings: cfg.settings(),
        cluster: Some(membership.view()),
        ..Default::default()
    };
    let d = Arc::clone(&db);
    let password = cfg.authenticator == config::Authenticator::Password;
    let authorizing = cfg.authorizer == config::Authorizer::Cassandra;
    let permission_cache = cairn_cql::exec::auth::CacheSettings {
        validity: cfg.permissions_validity,
    };
    let views_enabled = cfg.materialized_views_enabled;
    let masking_enabled = cfg.dynamic_data_masking_enabled;
    let batch_limits = cairn_cql::exec::batch_limits::BatchLimits {
        warn_bytes: cfg.batch_size_warn_threshold,
        fail_bytes: cfg.batch_size_fail_threshold,
        unlogged_partitions_warn: cfg.unlogged_batch_across_partitions_warn_threshold,
    };
    // The storage proxy places replicas on the membership's topology; in a cluster (a node
    // with seeds) it writes to the other replicas over messaging and serves theirs.
    let mut proxy = cairn_cluster::proxy::StorageProxy::new(d, membership.topology());
    if !cfg.seeds.is_empty() {
        proxy = proxy.with_remote(cairn_cluster::proxy::RemoteReplicas {
            messaging: Arc::clone(membership.messaging()),
            runtime: tokio::runtime::Handle::current(),
            write_timeout: cfg.write_request_timeout,
            read_timeout: cfg.read_request_timeout,
            cas_contention_timeout: cfg.cas_contention_timeout,
        });
    }
    let proxy = Arc::new(proxy);
    if !cfg.seeds.is_empty() {
        cairn_cluster::proxy::replica::serve(&proxy, membership.messaging());
    }
    // Schema changes are committed to group 0, which every node applies: the catalog puts
    // the node's schema there if the group holds none yet, and brings its own to the group's.
    let schema_log = Arc::new(cairn_cluster::schema_log::Group0Schema::new(
        Arc::clone(&membership),
        tokio::runtime::Handle::current(),
        SCHEMA_CHANGE_TIMEOUT,
    ));
    let executor = tokio::task::spawn_blocking(move || {
        cairn_cql::exec::Executor::open_with_log(proxy, info, schema_log).map(|e| {
            e.with_authentication(password)
                .with_authorization(authorizing, permission_cache)
                .with_batch_limits(batch_limits)
                .with_materialized_views(views_enabled)
                .with_dynamic_data_masking(masking_enabled)
        })
    })
    .await
    .map_err(|e| StartError::Schema(cairn_cql::Error::Server(e.to_string())))??;
    let executor = Arc::new(executor);
    let _ = probe.executor.set(Arc::clone(&executor));
    let events = protocol::EventBus::new(1024);
    let forwarding = membership::forward_events(&membership, events.clone());
    let following = membership::follow_schema(&membership, Arc::clone(&executor), events.clone());
    // The audit log starts before clients can connect, so their first statement is seen.
    let audit = {
        let (config, executor) = (cfg.audit.clone(), Arc::clone(&executor));
        let node = local.endpoint.address;
        tokio::task::spawn_blocking(move || {
            cairn_cql::audit::Auditor::start(&config, &executor, node, audit_syslog)
        })
        .await
        .map_err(|e| StartError::Audit(cairn_cql::Error::Server(e.to_string())))?
        .map_err(StartError::Audit)?
    };
    // Tracing's tables exist before clients can connect (they read them back).
    let tracing = {
        let (config, executor) = (cfg.tracing, Arc::clone(&executor));
        // Cassandra 5.0's `coordinator_port` / `source_port`: the internode port.
        let node = std::net::SocketAddr::new(local.endpoint.address, cfg.storage_port);
        tokio::task::spawn_blocking(move || {
            cairn_cql::trace::Tracing::start(&executor, node, config)
        })
        .await
        .map_err(|e| StartError::Tracing(cairn_cql::Error::Server(e.to_string())))?
        .map_err(StartError::Tracing)?
    };
    // Coordinators' traced requests: this node records its own events under their sessions.
    executor
        .proxy()
        .set_replica_tracing(Arc::clone(&tracing) as _);
    let handler = Arc::new(
        cql::CqlHandler::new(Arc::clone(&executor), events.clone())
            .with_audit(audit.clone())
            .with_tracing(Arc::clone(&tracing)),
    );
    match &native_tls {
        Some(t) if t.required => tracing::info!("native transport: TLS required"),
        Some(_) => tracing::info!("native transport: TLS optional (plaintext accepted too)"),
        None => {}
    }
    let server_config = protocol::ServerConfig {
        max_frame_size: usize::try_from(cfg.native_transport_max_frame_size).unwrap_or(usize::MAX),
        tls: native_tls,
        ..protocol::ServerConfig::default()
    };
    let cql_server = protocol::Server::bind_with_events(native, server_config, handler, events)
        .await
        .map_err(|source| StartError::Listen {
            what: "native transport",
            addr: native.to_string(),
            source,
        })?;
    // What the failure policies ask of the node (`disk_failure_policy`,
    // `commit_failure_policy`); one asked during startup is carried out now.
    db.set_fault_listener(fault_listener(cql_server.stop_handle()));
    let mut node_info = rest::NodeInfo::from_config(cfg, local.endpoint.host_id.to_string());
    node_info.address = local.endpoint.address.to_string();
    node_info.tokens = tokens;
    node_info.data_center = location.datacenter;
    node_info.rack = location.rack;
    let backend: Arc<dyn rest::AdminBackend> = Arc::new(NodeBackend {
        db: Arc::clone(&db),
        executor: Arc::clone(&executor),
        info: node_info,
        native: cql_server.stop_handle(),
        membership: Arc::clone(&membership),
        tracing: Arc::clone(&tracing),
    });
    let rest_server = rest::serve(api, Arc::clone(&backend), admin.api)
        .await
        .map_err(|source| StartError::Listen {
            what: "REST API",
            addr: api.to_string(),
            source,
        })?;
    let stalls = stall::StallDetector::start(
        &tokio::runtime::Handle::current(),
        "the CQL/REST runtime",
        cfg.blocked_reactor_notify,
        cfg.blocked_reactor_reports_per_minute,
    )
    .map_err(|source| StartError::Thread {
        what: "stall detector",
        source,
    })?;
    let stalls = Arc::new(stalls);
    let source = metrics::MetricsSource::new(
        backend,
        Some(Arc::clone(&stalls)),
        cfg.prometheus_prefix.clone(),
    )
    .with_transport(Arc::clone(cql_server.stats()))
    .with_proxy(Arc::clone(executor.proxy()))
    .with_tracing(tracing)
    .with_messaging(Arc::clone(membership.messaging()))
    .with_admin_faces(admin_stats)
    .with_audit(audit);
    let metrics_server = rest::serve_with(
        prometheus,
        "Prometheus metrics",
        Arc::new(move |req| source.handle(req)),
        admin.prometheus,
    )
    .await
    .map_err(|source| StartError::Listen {
        what: "Prometheus",
        addr: prometheus.to_string(),
        source,
    })?;
    Ok(Node {
        db,
        executor,
        cql: cql_server,
        rest: rest_server,
        metrics: metrics_server,
        stalls,
        membership,
        events: forwarding,
        schema: following,
    })
}
