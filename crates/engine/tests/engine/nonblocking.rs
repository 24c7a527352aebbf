//! Non-blocking mode (`cairn_engine::io::nonblocking`): an operation that would wait fails
//! with `WouldBlock` before it changes anything, and succeeds once retried where it may wait.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use cairn_engine::commitlog::SyncMode;
use cairn_engine::io::nonblocking;
use cairn_engine::model::Mutation;
use cairn_engine::{Database, DatabaseConfig, Error, ReadCommand};
use common::*;
use std::path::Path;

fn put(db: &Database, id: u128, a: i32, v: &str) -> Result<(), Error> {
    db.apply(
        vec![Mutation {
            table: id,
            key: pk(a),
            update: insert(1, v, 1),
        }],
        cairn_engine::io::current_wait(),
    )
}

fn get(db: &Database, a: i32) -> Result<Option<usize>, Error> {
    Ok(db
        .read(
            "ks",
            "t",
            &pk(a),
            &ReadCommand::all(now(), cairn_engine::io::current_wait()),
        )?
        .map(|p| p.rows.len()))
}

/// tmpfs keeps every page in memory: nothing can be evicted there.
fn on_tmpfs(dir: &Path) -> bool {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid C string and `st` a writable statfs.
    let rc = unsafe { libc::statfs(c.as_ptr(), &mut st) };
    rc == 0 && st.f_type == libc::TMPFS_MAGIC
}

#[test]
fn cold_sstable_read_would_block_until_cached() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(DatabaseConfig::new(dir.path())).unwrap();
    let id = db.create_table(kv_schema()).unwrap().schema().id;
    for a in 0..200 {
        put(&db, id, a, &"x".repeat(200)).unwrap();
    }
    db.flush("ks", "t").unwrap();
    cairn_test_support::page_cache::evict(dir.path());
    if on_tmpfs(dir.path()) {
        eprintln!("skipped: the data directory is on tmpfs");
        return;
    }
    {
        let _nb = nonblocking();
        assert!(matches!(get(&db, 7), Err(Error::WouldBlock)));
    }
    // Where it may block, the same read goes to disk and warms the cache...
    assert_eq!(get(&db, 7).unwrap(), Some(1));
    // ...after which the non-blocking read is served from memory.
    let _nb = nonblocking();
    assert_eq!(get(&db, 7).unwrap(), Some(1));
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
        let r = {
            let _nb = nonblocking();
            put(&db, id, a, &"y".repeat(512))
        };
        match r {
            Ok(()) => {}
            Err(Error::WouldBlock) => {
                refused += 1;
                assert_eq!(get(&db, a).unwrap(), None, "a refused write was applied");
                put(&db, id, a, &"y".repeat(512)).unwrap();
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert!(refused > 0, "memtables never filled up");
    for a in 0..1000 {
        assert_eq!(get(&db, a).unwrap(), Some(1), "row {a}");
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
    {
        let _nb = nonblocking();
        assert!(matches!(put(&db, id, 1, "v"), Err(Error::WouldBlock)));
    }
    assert_eq!(db.commitlog_stats().records, before);
    assert_eq!(get(&db, 1).unwrap(), None);
    put(&db, id, 1, "v").unwrap();
    assert_eq!(get(&db, 1).unwrap(), Some(1));
}

#[test]
fn mode_ends_with_its_guard() {
    assert!(!cairn_engine::io::is_nonblocking());
    {
        let _outer = nonblocking();
        {
            let _inner = nonblocking();
            assert!(cairn_engine::io::is_nonblocking());
        }
        assert!(cairn_engine::io::is_nonblocking());
    }
    assert!(!cairn_engine::io::is_nonblocking());
}
