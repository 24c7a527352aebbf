//! Disk full: a flush that hits ENOSPC fails with a clear error, leaves no half-written
//! sstable, loses no acknowledged write, and succeeds once space returns.
//!
//! With `commit_failure_policy: stop` (the default, as in Cassandra), a commitlog that cannot
//! make a segment stops for good: writes are refused until a restart, and the node is asked
//! to stop its transports.
//!
//! Uses a small tmpfs, which needs root (CI and the dev machines run as root); elsewhere the
//! test says it was skipped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use cairn_engine::fault::NodeAction;
use cairn_engine::model::Mutation;
use cairn_engine::{CommitFailurePolicy, Database, DatabaseConfig, Error, ReadCommand, Wait};
use common::*;
use std::io::Write;
use std::process::Command;
use std::sync::{Arc, Mutex};

struct Mount(std::path::PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Commit failures ignored, so the commitlog tries again once space returns.
fn cfg(dir: &std::path::Path) -> DatabaseConfig {
    let mut c = DatabaseConfig::new(dir);
    c.commitlog_segment_size = 128 * 1024;
    c.memtable_flush_threshold = 1 << 30;
    c.commit_failure_policy = CommitFailurePolicy::Ignore;
    c
}

/// A small tmpfs under `base` (None when mounting needs a root this process lacks).
fn mount_tmpfs(base: &std::path::Path) -> Option<(std::path::PathBuf, Mount)> {
    let mnt = base.join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=4m", "tmpfs"])
        .arg(&mnt)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIPPED: mounting a tmpfs needs root");
        return None;
    }
    Some((mnt.clone(), Mount(mnt)))
}

fn fill(dir: &std::path::Path) -> std::path::PathBuf {
    let ballast = dir.join("ballast");
    let mut f = std::fs::File::create(&ballast).unwrap();
    let chunk = vec![0u8; 4096];
    while f.write_all(&chunk).is_ok() {}
    ballast
}

/// Writes row `b` of partition `b % 10`.
fn write_row(db: &Database, id: cairn_engine::schema::TableId, b: i32) -> cairn_engine::Result<()> {
    db.apply(
        vec![Mutation {
            table: id,
            key: pk(b % 10),
            update: insert(b, "some value of moderate length", 5),
        }],
        Wait::Allowed,
    )
}

#[test]
fn commitlog_on_full_disk_stops_under_policy_stop() {
    let base = tempfile::tempdir().unwrap();
    let Some((mnt, _mount)) = mount_tmpfs(base.path()) else {
        return;
    };
    let mut c = cfg(&mnt);
    c.commit_failure_policy = CommitFailurePolicy::Stop;
    let db = Database::open(c).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    db.set_fault_listener(Arc::new(move |a: &NodeAction| {
        s.lock().unwrap().push(a.clone())
    }));
    let id = db.create_table(kv_schema()).unwrap().schema().id;
    let ballast = fill(&mnt);
    let write = |b: i32| write_row(&db, id, b);
    let mut b = 0;
    let first = loop {
        if let Err(e) = write(b) {
            break e;
        }
        b += 1;
        assert!(b < 200_000, "the disk never filled");
    };
    assert!(
        first.is_disk_full() || matches!(first, Error::CommitlogStopped { .. }),
        "{first}"
    );
    // Space returns, but the commitlog stays stopped (Cassandra's segment manager terminates).
    std::fs::remove_file(&ballast).unwrap();
    let again = write(b + 1).unwrap_err();
    assert!(matches!(again, Error::CommitlogStopped { .. }), "{again}");
    let fault = again.storage_fault().unwrap();
    assert_eq!(fault.kind, cairn_engine::FaultKind::CommitlogStopped);
    let stats = db.fault_stats();
    assert!(stats.commitlog >= 1, "{stats:?}");
    assert!(stats.writes_failed >= 2, "{stats:?}");
    assert!(stats.transports_stopped);
    assert_eq!(
        *seen.lock().unwrap(),
        vec![NodeAction::StopTransports {
            reason: "Stopping transports as commit_failure_policy is stop".into()
        }]
    );
    // Reads go on.
    db.read("ks", "t", &pk(0), &ReadCommand::all(0, Wait::Allowed))
        .unwrap();
}

#[test]
fn flush_on_full_disk_fails_cleanly_and_recovers() {
    let base = tempfile::tempdir().unwrap();
    let Some((mnt, _mount)) = mount_tmpfs(base.path()) else {
        return;
    };
    let db = Database::open(cfg(&mnt)).unwrap();
    let id = db.create_table(kv_schema()).unwrap().schema().id;
    let mut acked = Vec::new();
    for b in 0..2000 {
        write_row(&db, id, b).unwrap();
        acked.push(b);
    }
    let ballast = fill(&mnt);

    let err = db.flush("ks", "t").unwrap_err();
    assert!(err.is_disk_full(), "expected a disk-full error, got: {err}");
    let table = db.table("ks", "t").unwrap();
    let leftovers: Vec<_> = std::fs::read_dir(table.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with("ca-"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "half-written sstable left behind: {leftovers:?}"
    );

    // Writes either succeed or fail with disk full; reads keep working.
    let mut b = 2000;
    loop {
        match db.apply(
            vec![Mutation {
                table: id,
                key: pk(b % 10),
                update: insert(b, "more", 5),
            }],
            Wait::Allowed,
        ) {
            Ok(()) => acked.push(b),
            Err(e) => {
                assert!(e.is_disk_full(), "unexpected error: {e}");
                break;
            }
        }
        b += 1;
        if b > 200_000 {
            break;
        }
    }
    let count = |db: &Database| -> usize {
        (0..10)
            .map(|a| {
                db.read("ks", "t", &pk(a), &ReadCommand::all(0, Wait::Allowed))
                    .unwrap()
                    .map_or(0, |p| p.rows.len())
            })
            .sum()
    };
    assert_eq!(count(&db), acked.len());

    // Space returns: flush and writes work again, and everything survives a restart.
    std::fs::remove_file(&ballast).unwrap();
    db.flush("ks", "t").unwrap();
    db.apply(
        vec![Mutation {
            table: id,
            key: pk(3),
            update: insert(999_999, "after", 6),
        }],
        Wait::Allowed,
    )
    .unwrap();
    acked.push(999_999);
    drop(db);
    let db = Database::open(cfg(&mnt)).unwrap();
    assert_eq!(count(&db), acked.len());
}
