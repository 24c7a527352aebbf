//! Corrupted files: the error names the file and offset; other data stays readable.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use cairn_engine::fault::{NodeAction, Operation};
use cairn_engine::model::Mutation;
use cairn_engine::sstable::format::Component;
use cairn_engine::{
    Database, DatabaseConfig, DiskFailurePolicy, Error, FaultKind, ReadCommand, Wait,
};
use common::*;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex};

const PARTITIONS: i32 = 2000;
const ROWS: i32 = 3;

fn setup(dir: &std::path::Path) -> Database {
    setup_with(DatabaseConfig::new(dir))
}

fn setup_with(config: DatabaseConfig) -> Database {
    let db = Database::open(config).unwrap();
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

/// Records what the failure policies ask of the node.
fn listen(db: &Database) -> Arc<Mutex<Vec<NodeAction>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    db.set_fault_listener(Arc::new(move |a: &NodeAction| {
        s.lock().unwrap().push(a.clone())
    }));
    seen
}

#[test]
fn corrupt_reads_are_storage_faults_counted_once_each() {
    let dir = tempfile::tempdir().unwrap();
    let db = setup(dir.path());
    let seen = listen(&db);
    let sst = db.table("ks", "t").unwrap().state().sstables[0].clone();
    let data = sst.path(Component::Data);
    flip(&data, 100);
    drop(sst);
    let (_, errors) = read_all(&db);
    assert!(!errors.is_empty());
    for e in &errors {
        let fault = e.storage_fault().expect("a corruption is a storage fault");
        assert_eq!(fault.kind, FaultKind::CorruptSSTable);
        assert_eq!(fault.path, data);
        assert_eq!(fault.offset, Some(0));
    }
    // A scan meeting the chunk fails, and is counted too.
    let scan_errors = full_scan(&db).filter(|r| r.is_err()).count();
    assert_eq!(scan_errors, 1);
    let stats = db.fault_stats();
    let n = errors.len() as u64 + 1;
    assert_eq!(stats.corrupt_sstable, n);
    assert_eq!(stats.reads_failed, n);
    assert_eq!((stats.read_io, stats.write_io, stats.commitlog), (0, 0, 0));
    // disk_failure_policy `stop` does not act on a corrupt sstable (Cassandra's neither).
    assert!(seen.lock().unwrap().is_empty());
    assert!(!stats.transports_stopped);
    // Other errors are no storage faults.
    assert!(Error::Overloaded.storage_fault().is_none());
    assert!(Error::WouldBlock.storage_fault().is_none());
}

#[test]
fn stop_paranoid_stops_transports_once_and_die_exits_on_corruption() {
    for (policy, expect_die) in [
        (DiskFailurePolicy::StopParanoid, false),
        (DiskFailurePolicy::Die, true),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut config = DatabaseConfig::new(dir.path());
        config.disk_failure_policy = policy;
        let db = setup_with(config);
        let seen = listen(&db);
        let sst = db.table("ks", "t").unwrap().state().sstables[0].clone();
        flip(&sst.path(Component::Data), 100);
        drop(sst);
        let (_, errors) = read_all(&db);
        assert!(errors.len() > 1);
        let seen = seen.lock().unwrap();
        if expect_die {
            assert_eq!(seen.len(), errors.len(), "{seen:?}");
            assert!(seen.iter().all(|a| matches!(a, NodeAction::Die { .. })));
        } else {
            assert_eq!(
                *seen,
                vec![NodeAction::StopTransports {
                    reason: "Stopping transports as disk_failure_policy is stop_paranoid".into()
                }]
            );
            assert!(db.fault_stats().transports_stopped);
        }
    }
}

#[test]
fn best_effort_takes_an_unreadable_sstable_out_of_reads() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = DatabaseConfig::new(dir.path());
    config.disk_failure_policy = DiskFailurePolicy::BestEffort;
    let db = setup_with(config);
    let seen = listen(&db);
    let table = db.table("ks", "t").unwrap();
    let data = table.state().sstables[0].path(Component::Data);
    // An I/O error reading the data file, as the reader reports it (EIO cannot be provoked
    // on a healthy disk).
    let eio = Error::io(&data, std::io::Error::from_raw_os_error(libc::EIO));
    table.read_failed(&eio);
    assert!(
        table.state().sstables.is_empty(),
        "the sstable is still read"
    );
    assert!(data.exists(), "its files must stay for inspection");
    let stats = db.fault_stats();
    assert_eq!((stats.read_io, stats.sstables_removed), (1, 1));
    assert!(seen.lock().unwrap().is_empty());
    // A write error under best_effort stops the transports (one data directory: no other
    // disk to write to).
    table.report_fault(
        Operation::Write,
        &Error::io(
            dir.path().join("x"),
            std::io::Error::from_raw_os_error(libc::EIO),
        ),
    );
    assert!(matches!(
        &seen.lock().unwrap()[..],
        [NodeAction::StopTransports { .. }]
    ));
}

#[test]
fn a_corrupt_sstable_at_startup_refuses_the_start_unless_the_policy_skips_it() {
    let dir = tempfile::tempdir().unwrap();
    let (summary, generation) = {
        let db = setup(dir.path());
        let sst = db.table("ks", "t").unwrap().state().sstables[0].clone();
        (sst.path(Component::Summary), sst.generation)
    };
    flip(&summary, 10);
    // stop (and stop_paranoid, die): the node does not start; the error names the file.
    match Database::open(DatabaseConfig::new(dir.path())) {
        Err(Error::Corruption { path, .. }) => assert_eq!(path, summary),
        Err(other) => panic!("expected corruption, got {other}"),
        Ok(_) => panic!("started with a corrupt sstable under disk_failure_policy stop"),
    }
    // ignore (and best_effort): it starts without the sstable, whose files stay (what the
    // commitlog still holds of it is replayed, into a new sstable).
    let mut config = DatabaseConfig::new(dir.path());
    config.disk_failure_policy = DiskFailurePolicy::Ignore;
    let db = Database::open(config).unwrap();
    let live = db.table("ks", "t").unwrap().state();
    assert!(live.sstables.iter().all(|s| s.generation != generation));
    assert!(summary.exists());
    assert_eq!(db.fault_stats().corrupt_sstable, 1);
}
