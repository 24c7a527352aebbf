//! Memtables and the row cache share the memory limit: when memtables grow past
//! `memtable_total_space` because flushes fall behind, the cache gives up as much (its rows are
//! evicted), every write still succeeds, and once a flush frees the memtables the cache may
//! fill its budget again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{insert, kv_schema, now, pk};
use cairn_engine::model::Mutation;
use cairn_engine::read::ReadCommand;
use cairn_engine::{Database, DatabaseConfig, Wait};
use std::sync::atomic::Ordering;

#[test]
fn memtables_past_their_space_evict_the_cache_and_writes_never_fail() {
    let dir = tempfile::tempdir().unwrap();
    let budget = 4 << 20;
    let space = 1 << 20;
    let mut cfg = DatabaseConfig::new(dir.path());
    cfg.row_cache_bytes = budget;
    cfg.memtable_total_space = space;
    cfg.memtable_flush_threshold = 1 << 30;
    let db = Database::open(cfg).unwrap();
    let t = db.create_table(kv_schema()).unwrap();
    let id = t.schema().id;
    let v = "x".repeat(200);
    let write = |a: i32, b: i32| {
        db.apply(
            vec![Mutation {
                table: id,
                key: pk(a),
                update: insert(b, &v, 10),
            }],
            Wait::Allowed,
        )
        .unwrap();
    };
    // Fill the cache with the sstables' rows (more than its budget holds).
    for a in 0..3000 {
        for b in 0..2 {
            write(a, b);
        }
    }
    db.flush("ks", "t").unwrap();
    for a in 0..3000 {
        assert!(t
            .read(&pk(a), &ReadCommand::all(now(), Wait::Allowed))
            .unwrap()
            .is_some());
    }
    let cache = db.row_cache().unwrap();
    let warm = cache.stats();
    assert!(warm.bytes_used > (3 << 20), "{warm:?}");
    assert_eq!(warm.bytes_limit, budget as u64);

    // Flushes fall behind: the table's flush counts as requested, so none is queued, and its
    // memtable grows past the memtables' space (not to twice it, where writers would wait).
    t.flush_requested.store(true, Ordering::SeqCst);
    let mut a = 10_000;
    while db.memtable_bytes() < space + (space * 3 / 4) {
        write(a, 0);
        a += 1;
        let s = cache.stats();
        let excess = db.memtable_bytes().saturating_sub(space) as u64;
        assert_eq!(s.bytes_limit, budget as u64 - excess);
        assert!(s.bytes_used <= s.bytes_limit, "{s:?}");
    }
    let pressed = cache.stats();
    assert!(pressed.row_evictions > warm.row_evictions, "{pressed:?}");
    assert!(pressed.bytes_used < warm.bytes_used, "{pressed:?}");

    // The flush frees the memtable: the limit is the whole budget again, and reads refill.
    t.flush_requested.store(false, Ordering::SeqCst);
    db.flush("ks", "t").unwrap();
    assert_eq!(cache.stats().bytes_limit, budget as u64);
    for a in 0..3000 {
        assert!(t
            .read(&pk(a), &ReadCommand::all(now(), Wait::Allowed))
            .unwrap()
            .is_some());
    }
    let refilled = cache.stats();
    assert!(refilled.bytes_used > pressed.bytes_used, "{refilled:?}");
}
