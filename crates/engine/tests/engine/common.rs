//! Helpers shared by the engine's integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use cairn_engine::model::clustering::{ClusteringLayout, Order};
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{
    Cell, ClusteringKey, ColumnData, DecoratedKey, LivenessInfo, Partition, Row,
};
use cairn_engine::schema::{ColumnKind, TableSchema};

/// `(a int, b int, c text, PRIMARY KEY (a, b))` — the compression seed's table.
pub fn kv_schema() -> TableSchema {
    TableSchema::new("ks", "t")
        .with_column("a", CqlType::Int, ColumnKind::PartitionKey)
        .with_clustering("b", CqlType::Int, Order::Asc)
        .with_column("c", CqlType::Text, ColumnKind::Regular)
}

/// Seconds since the epoch (a read command's "now").
pub fn now() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as u32
}

pub fn pk(a: i32) -> DecoratedKey {
    DecoratedKey::new(Bytes::copy_from_slice(&a.to_be_bytes()))
}

pub fn ck(b: i32) -> ClusteringKey {
    let layout = ClusteringLayout {
        columns: vec![(CqlType::Int, Order::Asc)],
    };
    layout.encode_key(&[&b.to_be_bytes()]).unwrap()
}

/// An INSERT of one row: marker + cell `c` (column id 2).
pub fn insert(b: i32, value: &str, ts: i64) -> Partition {
    let mut p = Partition::default();
    p.rows.insert(
        ck(b),
        Row {
            marker: Some(LivenessInfo::live(ts)),
            deletion: None,
            columns: vec![(
                2,
                ColumnData::Simple(Cell::live(ts, Bytes::copy_from_slice(value.as_bytes()))),
            )],
        },
    );
    p
}

/// Runs this test binary again as a crash child: only the test `child` (a module path such as
/// `crash_sigkill::crash_child`), with `env` set to `dir:round` so it knows where to write,
/// its stdout piped (the child reports progress there) and its stderr dropped.
pub fn spawn_crash_child(
    child: &str,
    env: &str,
    dir: &std::path::Path,
    round: u32,
) -> (std::process::Child, std::process::ChildStdout) {
    let exe = std::env::current_exe().unwrap();
    let mut c = std::process::Command::new(exe)
        .args(["--exact", child, "--nocapture", "--test-threads=1"])
        .env(env, format!("{}:{round}", dir.display()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = c.stdout.take().unwrap();
    (c, stdout)
}

/// A database under `dir` with a row cache of `budget` bytes (0: none) and the table
/// [`kv_schema`].
pub fn open_with_cache(
    dir: &std::path::Path,
    budget: usize,
) -> (
    cairn_engine::Database,
    std::sync::Arc<cairn_engine::table::Table>,
) {
    let mut cfg = cairn_engine::DatabaseConfig::new(dir);
    cfg.row_cache_bytes = budget;
    let db = cairn_engine::Database::open(cfg).unwrap();
    db.create_table(kv_schema()).unwrap();
    let t = db.table("ks", "t").unwrap();
    (db, t)
}
