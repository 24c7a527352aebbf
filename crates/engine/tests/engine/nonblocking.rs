//! Waiting is explicit (`cairn_engine::io::Wait`): under `Wait::Never` an operation that would
//! wait fails with `WouldBlock` before it changes anything, and succeeds once retried with
//! `Wait::Allowed`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use cairn_engine::commitlog::SyncMode;
use cairn_engine::model::{Mutation, PartitionPos, Token};
use cairn_engine::{Database, DatabaseConfig, Error, ReadCommand, Wait};
use common::*;
use std::path::Path;

fn put(db: &Database, id: u128, a: i32, v: &str, wait: Wait) -> Result<(), Error> {
    db.apply(
        vec![Mutation {
            table: id,
            key: pk(a),
            update: insert(1, v, 1),
        }],
        wait,
    )
}

fn get(db: &Database, a: i32, wait: Wait) -> Result<Option<usize>, Error> {
    Ok(db
        .read("ks", "t", &pk(a), &ReadCommand::all(now(), wait))?
        .map(|p| p.rows.len()))
}

/// The partitions a full scan of the table finds.
fn scan(db: &Database, wait: Wait) -> Result<usize, Error> {
    let start = PartitionPos::TokenStart(Token::MIN);
    let mut n = 0;
    for p in db.scan("ks", "t", start, None, ReadCommand::all(now(), wait))? {
        p?;
        n += 1;
    }
    Ok(n)
}

/// tmpfs keeps every page in memory: nothing can be evicted there.
fn on_tmpfs(dir: &Path) -> bool {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid C string and `st` a writable statfs.
    let rc = unsafe { libc::statfs(c.as_ptr(), &mut st) };
    rc == 0 && st.f_type == libc::TMPFS_MAGIC
}

/// A table of 200 partitions in one sstable, evicted from the page cache; `None` where
/// eviction cannot work (tmpfs).
fn cold_table() -> Option<(tempfile::TempDir, Database)> {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(DatabaseConfig::new(dir.path())).unwrap();
    let id = db.create_table(kv_schema()).unwrap().schema().id;
    for a in 0..200 {
        put(&db, id, a, &"x".repeat(200), Wait::Allowed).unwrap();
    }
    db.flush("ks", "t").unwrap();
    cairn_test_support::page_cache::evict(dir.path());
    if on_tmpfs(dir.path()) {
        eprintln!("skipped: the data directory is on tmpfs");
        return None;
    }
    Some((dir, db))
}

#[test]
fn cold_sstable_read_would_block_until_cached() {
    let Some((_dir, db)) = cold_table() else {
        return;
    };
    assert!(matches!(get(&db, 7, Wait::Never), Err(Error::WouldBlock)));
    // Where it may wait, the same read goes to disk and warms the cache...
    assert_eq!(get(&db, 7, Wait::Allowed).unwrap(), Some(1));
    // ...after which the read that may not wait is served from memory.
    assert_eq!(get(&db, 7, Wait::Never).unwrap(), Some(1));
}

#[test]
fn cold_sstable_scan_would_block_until_cached() {
    let Some((_dir, db)) = cold_table() else {
        return;
    };
    // The scan reads the sstable's index pages with the scan's mode.
    assert!(matches!(scan(&db, Wait::Never), Err(Error::WouldBlock)));
    assert_eq!(scan(&db, Wait::Allowed).unwrap(), 200);
}

#[test]
fn full_memtables_refuse_without_applying() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = DatabaseConfig::new(dir.path());
    cfg.memtable_total_space = 4 << 10;
    let db = Database::open(cfg).unwrap();
    let id = db.create_table(kv_schema()).unwrap().schema().id;
    let mut refused = 0;
    for a in 0..1000 {
        match put(&db, id, a, &"y".repeat(512), Wait::Never) {
            Ok(()) => {}
            Err(Error::WouldBlock) => {
                refused += 1;
                assert_eq!(
                    get(&db, a, Wait::Allowed).unwrap(),
                    None,
                    "a refused write was applied"
                );
                put(&db, id, a, &"y".repeat(512), Wait::Allowed).unwrap();
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert!(refused > 0, "memtables never filled up");
    for a in 0..1000 {
        assert_eq!(get(&db, a, Wait::Allowed).unwrap(), Some(1), "row {a}");
    }
}

#[test]
fn batch_commitlog_refuses_before_appending() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = DatabaseConfig::new(dir.path());
    cfg.commitlog_sync = SyncMode::Batch;
    let db = Database::open(cfg).unwrap();
    let id = db.create_table(kv_schema()).unwrap().schema().id;
    let before = db.commitlog_stats().records;
    assert!(matches!(
        put(&db, id, 1, "v", Wait::Never),
        Err(Error::WouldBlock)
    ));
    assert_eq!(db.commitlog_stats().records, before);
    assert_eq!(get(&db, 1, Wait::Allowed).unwrap(), None);
    put(&db, id, 1, "v", Wait::Allowed).unwrap();
    assert_eq!(get(&db, 1, Wait::Allowed).unwrap(), Some(1));
}
