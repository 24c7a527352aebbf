//! Cairn's network faces: running a node's storage engine and the CQL native protocol
//! ([`protocol`]). The REST admin API and Prometheus endpoint arrive with their issues.

#![deny(clippy::unwrap_used, clippy::expect_used)]

pub mod config;
pub mod protocol;
pub mod rest;

use cairn_engine::{Database, DatabaseConfig};
use std::path::PathBuf;

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
}

impl Default for NodeConfig {
    fn default() -> Self {
        NodeConfig {
            data_dir: PathBuf::from("data"),
            native_port: 9042,
            api_port: 10000,
            metrics_port: 9180,
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
