//! Corrupted files: the error names the file and offset; other data stays readable.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use cairn_engine::model::Mutation;
use cairn_engine::sstable::format::Component;
use cairn_engine::{Database, DatabaseConfig, Error, ReadCommand, Wait};
use common::*;
use std::os::unix::fs::FileExt;

const PARTITIONS: i32 = 2000;
const ROWS: i32 = 3;

fn setup(dir: &std::path::Path) -> Database {
    let db = Database::open(DatabaseConfig::new(dir)).unwrap();
    let id = db.create_table(kv_schema()).unwrap().schema().id;
    for a in 0..PARTITIONS {
        for b in 0..ROWS {
            db.apply(
                vec![Mutation {
                    table: id,
                    key: pk(a),
                    update: insert(
                        b,
                        &format!("value {a} {b} {}", "z".repeat(a as usize % 50)),
                        1,
                    ),
                }],
                Wait::Allowed,
            )
            .unwrap();
        }
    }
    db.flush("ks", "t").unwrap();
    db
}

fn flip(path: &std::path::Path, offset: u64) {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, offset).unwrap();
    b[0] ^= 0x5A;
    f.write_all_at(&b, offset).unwrap();
}

fn read_all(db: &Database) -> (usize, Vec<Error>) {
    let mut ok = 0;
    let mut errors = Vec::new();
    for a in 0..PARTITIONS {
        match db.read("ks", "t", &pk(a), &ReadCommand::all(0, Wait::Allowed)) {
            Ok(Some(p)) => {
                assert_eq!(p.rows.len(), ROWS as usize);
                ok += 1;
            }
            Ok(None) => panic!("partition {a} silently missing"),
            Err(e) => errors.push(e),
        }
    }
    (ok, errors)
}

#[test]
fn corrupt_data_chunk_is_reported_and_isolated() {
    let dir = tempfile::tempdir().unwrap();
    let db = setup(dir.path());
    let sst = db.table("ks", "t").unwrap().state().sstables[0].clone();
    let data = sst.path(Component::Data);
    flip(&data, 100);
    drop(sst);
    let (ok, errors) = read_all(&db);
    assert!(!errors.is_empty(), "the corrupted chunk was not detected");
    assert!(
        ok > 1900,
        "corruption of one chunk made {} partitions unreadable",
        2000 - ok
    );
    for e in errors {
        match e {
            Error::Corruption { path, offset, .. } => {
                assert_eq!(path, data);
                assert_eq!(offset, 0, "the first chunk starts at offset 0");
            }
            other => panic!("expected corruption, got {other}"),
        }
    }
}

#[test]
fn corrupt_index_page_is_reported_and_isolated() {
    let dir = tempfile::tempdir().unwrap();
    let db = setup(dir.path());
    let sst = db.table("ks", "t").unwrap().state().sstables[0].clone();
    let index = sst.path(Component::Index);
    flip(&index, 10);
    drop(sst);
    let (ok, errors) = read_all(&db);
    assert!(
        !errors.is_empty(),
        "the corrupted index page was not detected"
    );
    assert!(
        ok > 1700,
        "corruption of one index page made {} partitions unreadable",
        2000 - ok
    );
    for e in errors {
        let text = e.to_string();
        assert!(
            matches!(e, Error::Corruption { ref path, offset: 0, .. } if *path == index),
            "{text}"
        );
        assert!(
            text.contains("Index.db") && text.contains("offset 0"),
            "{text}"
        );
    }
}

#[test]
fn corrupt_commitlog_record_is_reported_and_later_records_replay() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = DatabaseConfig::new(dir.path());
    cfg.commitlog_segment_size = 64 * 1024;
    {
        let db = Database::open(cfg.clone()).unwrap();
        let id = db.create_table(kv_schema()).unwrap().schema().id;
        for b in 0..3000 {
            db.apply(
                vec![Mutation {
                    table: id,
                    key: pk(b % 7),
                    update: insert(b, "v", 1),
                }],
                Wait::Allowed,
            )
            .unwrap();
        }
    }
    // Damage a record in the middle of the first segment.
    let mut segs: Vec<_> = std::fs::read_dir(&cfg.commitlog_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("CommitLog")
        })
        .collect();
    segs.sort();
    assert!(segs.len() >= 3);
    flip(&segs[0], 30_000);
    let db = Database::open(cfg).unwrap();
    let report = db.recovery_report();
    assert_eq!(
        report.replay.problems.len(),
        1,
        "{:?}",
        report.replay.problems
    );
    let problem = &report.replay.problems[0];
    assert_eq!(problem.path, segs[0]);
    assert!(problem.offset <= 30_000);
    // Records in later segments replayed: the last writes are readable.
    let p = db
        .read(
            "ks",
            "t",
            &pk(2999 % 7),
            &ReadCommand::all(0, Wait::Allowed),
        )
        .unwrap()
        .unwrap();
    assert!(p.rows.iter().any(|(k, _)| *k == ck(2999)));
}
