//! Overwrites barely grow a memtable, so only `commitlog_total_space` makes them flush: the
//! commitlog segments still needed must stay near that bound, and nothing may be lost.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use cairn_engine::model::Mutation;
use cairn_engine::{Database, DatabaseConfig, ReadCommand};
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
    let mut most_segments = 0;
    // ~12 MiB of commitlog records over 100 rows: the memtable stays tiny.
    for i in 0..40_000i64 {
        let a = (i % 100) as i32;
        db.apply(vec![Mutation {
            table: id,
            key: pk(a),
            update: insert(1, &format!("{i}:{value}"), i),
        }])
        .unwrap();
        most_segments = most_segments.max(db.commitlog_stats().active_segments);
    }
    let needed_bytes = most_segments as u64 * cfg.commitlog_segment_size;
    // Flushes are asynchronous: allow a few segments past the bound while they run.
    assert!(
        needed_bytes <= cfg.commitlog_total_space + (4 << 20),
        "{most_segments} segments were needed at once"
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as u32;
    drop(db);
    let db = Database::open(cfg).unwrap();
    for a in 0..100 {
        let last = 39_900 + i64::from(a);
        let p = db
            .read("ks", "t", &pk(a), &ReadCommand::all(now))
            .unwrap()
            .unwrap();
        let (_, row) = p.rows.first().unwrap();
        let cell = row.cell(2).unwrap();
        assert_eq!(cell.timestamp, last, "row {a}");
    }
}
