//! Disk full: a flush that hits ENOSPC fails with a clear error, leaves no half-written
//! sstable, loses no acknowledged write, and succeeds once space returns.
//!
//! Uses a small tmpfs, which needs root (CI and the dev machines run as root); elsewhere the
//! test says it was skipped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use cairn_engine::model::Mutation;
use cairn_engine::{Database, DatabaseConfig, ReadCommand, Wait};
use common::*;
use std::io::Write;
use std::process::Command;

struct Mount(std::path::PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn cfg(dir: &std::path::Path) -> DatabaseConfig {
    let mut c = DatabaseConfig::new(dir);
    c.commitlog_segment_size = 128 * 1024;
    c.memtable_flush_threshold = 1 << 30;
    c
}

#[test]
fn flush_on_full_disk_fails_cleanly_and_recovers() {
    let base = tempfile::tempdir().unwrap();
    let mnt = base.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=4m", "tmpfs"])
        .arg(&mnt)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIPPED: mounting a tmpfs needs root");
        return;
    }
    let _mount = Mount(mnt.clone());
    let db = Database::open(cfg(&mnt)).unwrap();
    let id = db.create_table(kv_schema()).unwrap().schema().id;
    let mut acked = Vec::new();
    for b in 0..2000 {
        db.apply(
            vec![Mutation {
                table: id,
                key: pk(b % 10),
                update: insert(b, "some value of moderate length", 5),
            }],
            Wait::Allowed,
        )
        .unwrap();
        acked.push(b);
    }
    // Fill the disk.
    let ballast = mnt.join("ballast");
    let mut f = std::fs::File::create(&ballast).unwrap();
    let chunk = vec![0u8; 4096];
    while f.write_all(&chunk).is_ok() {}
    drop(f);

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
