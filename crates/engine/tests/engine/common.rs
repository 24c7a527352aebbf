//! Helpers shared by the engine's integration tests; what other crates' tests use too is
//! `cairn-test-support`'s.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use cairn_engine::schema::TableSchema;
pub use cairn_test_support::kv::{ck, insert, now, pk};

/// `ks.t (a int, b int, c text, PRIMARY KEY (a, b))` — the compression seed's table.
pub fn kv_schema() -> TableSchema {
    cairn_test_support::kv::kv_schema("ks", "t")
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

/// Every partition of `ks.t`, scanned in token order from the start of the ring.
pub fn full_scan(db: &cairn_engine::Database) -> cairn_engine::read::ScanIter {
    db.scan(
        "ks",
        "t",
        cairn_engine::model::PartitionPos::TokenStart(cairn_engine::model::Token::MIN),
        None,
        cairn_engine::ReadCommand::all(0, cairn_engine::Wait::Allowed),
    )
    .unwrap()
}
