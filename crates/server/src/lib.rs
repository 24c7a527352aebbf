//! Cairn's network faces: running a node's storage engine and the CQL native protocol
//! ([`protocol`]). The REST admin API and Prometheus endpoint arrive with their issues.

#![deny(clippy::unwrap_used, clippy::expect_used)]

pub mod cql;
pub mod protocol;

use cairn_engine::{Database, DatabaseConfig};
use std::path::PathBuf;

/// A running node: the engine, the CQL executor and the CQL server.
pub struct Node {
    /// The storage engine.
    pub db: std::sync::Arc<Database>,
    /// The CQL executor.
    pub executor: std::sync::Arc<cairn_cql::exec::Executor>,
    /// The native-protocol server.
    pub cql: protocol::Server,
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
    /// A port could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: String,
        source: std::io::Error,
    },
}

/// Opens the engine, loads the schema and starts serving CQL on `listen:native_port`
/// (port 0 picks a free port; see `node.cql.local_addr()`).
pub async fn start_node(cfg: &NodeConfig, listen: std::net::IpAddr) -> Result<Node, StartError> {
    let dir = cfg.clone();
    let db = tokio::task::spawn_blocking(move || open_node(&dir))
        .await
        .map_err(|e| {
            StartError::Engine(cairn_engine::Error::io(
                "engine startup",
                std::io::Error::other(e),
            ))
        })??;
    let db = std::sync::Arc::new(db);
    let info = cairn_cql::exec::system::NodeInfo {
        listen_address: ip_bytes(listen),
        rpc_address: ip_bytes(listen),
        native_port: cfg.native_port,
        ..Default::default()
    };
    let executor = std::sync::Arc::new(
        cairn_cql::exec::Executor::open(std::sync::Arc::clone(&db), info)?
            .with_authentication(cfg.password_authentication),
    );
    let events = protocol::EventBus::new(1024);
    let handler = std::sync::Arc::new(cql::CqlHandler::new(
        std::sync::Arc::clone(&executor),
        events.clone(),
    ));
    let addr = std::net::SocketAddr::new(listen, cfg.native_port);
    let server = protocol::Server::bind_with_events(
        addr,
        protocol::ServerConfig::default(),
        handler,
        events,
    )
    .await
    .map_err(|source| StartError::Bind {
        addr: addr.to_string(),
        source,
    })?;
    Ok(Node {
        db,
        executor,
        cql: server,
    })
}

fn ip_bytes(ip: std::net::IpAddr) -> Vec<u8> {
    match ip {
        std::net::IpAddr::V4(v) => v.octets().to_vec(),
        std::net::IpAddr::V6(v) => v.octets().to_vec(),
    }
}

/// What `cairn serve` needs to start a node.
#[derive(Debug, Clone)]
pub struct NodeConfig {
    /// Directory holding `data/` and `commitlog/`.
    pub data_dir: PathBuf,
    /// CQL port (not served yet; reserved).
    pub native_port: u16,
    /// REST admin port (not served yet; reserved).
    pub api_port: u16,
    /// Prometheus port (not served yet; reserved).
    pub metrics_port: u16,
    /// `authenticator: PasswordAuthenticator`: clients must log in.
    pub password_authentication: bool,
}

impl Default for NodeConfig {
    fn default() -> Self {
        NodeConfig {
            data_dir: PathBuf::from("data"),
            native_port: 9042,
            api_port: 10000,
            metrics_port: 9180,
            password_authentication: false,
        }
    }
}

/// Opens the node's database (recovering it) and reports what startup found.
pub fn open_node(cfg: &NodeConfig) -> cairn_engine::Result<Database> {
    let db = Database::open(DatabaseConfig::new(&cfg.data_dir))?;
    let r = db.recovery_report();
    tracing::info!(
        tables = db.tables().len(),
        replayed = r.mutations_replayed,
        segments = r.replay.segments,
        problems = r.replay.problems.len(),
        "storage engine ready at {}",
        cfg.data_dir.display()
    );
    Ok(db)
}
