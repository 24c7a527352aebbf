//! Overwrites barely grow a memtable, so only `commitlog_total_space` makes them flush: the
//! commitlog segments still needed must stay near that bound, and nothing may be lost.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use cairn_engine::model::Mutation;
use cairn_engine::{Database, DatabaseConfig, ReadCommand, Wait};
use common::*;

#[test]
fn overwrites_flush_when_the_commitlog_outgrows_its_space() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = DatabaseConfig::new(dir.path());
    cfg.commitlog_segment_size = 1 << 20;
    cfg.commitlog_total_space = 4 << 20;
    let db = Database::open(cfg.clone()).unwrap();
    let id = db.create_table(kv_schema()).unwrap().schema().id;
    let value = "v".repeat(300);
    let segment = cfg.commitlog_segment_size;
    // Flushes are asynchronous: a few segments past the bound while they run are fine.
    let bound = cfg.commitlog_total_space + (4 << 20);
    let over = |db: &Database| db.commitlog_stats().active_segments as u64 * segment > bound;
    // ~12 MiB of commitlog records over 100 rows: the memtable stays tiny.
    for i in 0..40_000i64 {
        let a = (i % 100) as i32;
        db.apply(
            vec![Mutation {
                table: id,
                key: pk(a),
                update: insert(1, &format!("{i}:{value}"), i),
            }],
            Wait::Allowed,
        )
        .unwrap();
        if over(&db) {
            // On a busy machine the flush threads may be starved of CPU while this one
            // writes on: what must hold is that the flushes the commitlog's size triggered
            // do release its segments, so give them time (bounded) before judging.
            let needed = db.commitlog_stats().active_segments;
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
            while over(&db) {
                assert!(
                    std::time::Instant::now() < deadline,
                    "{needed} segments were needed at once, and flushes did not release them"
                );
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as u32;
    drop(db);
    let db = Database::open(cfg).unwrap();
    for a in 0..100 {
        let last = 39_900 + i64::from(a);
        let p = db
            .read("ks", "t", &pk(a), &ReadCommand::all(now, Wait::Allowed))
            .unwrap()
            .unwrap();
        let (_, row) = p.rows.first().unwrap();
        let cell = row.cell(2).unwrap();
        assert_eq!(cell.timestamp, last, "row {a}");
    }
}
