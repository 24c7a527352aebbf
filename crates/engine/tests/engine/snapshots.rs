//! Snapshots, incremental backups and `refresh` on a real directory: hard links, not copies;
//! a snapshot outlives the compaction of what it links; automatic snapshots before DROP and
//! TRUNCATE restore every row through `upload/`; corrupt and foreign uploads are refused
//! whole; backups collect exactly the sstables flushed while they are on.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::*;
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{Mutation, PartitionPos, Token};
use cairn_engine::schema::{ColumnKind, TableSchema};
use cairn_engine::snapshot::{SnapshotOptions, BACKUPS_DIR, SNAPSHOTS_DIR, UPLOAD_DIR};
use cairn_engine::{Database, DatabaseConfig, Error, LoadProblem, ReadCommand, Wait};
use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn config(dir: &Path) -> DatabaseConfig {
    let mut c = DatabaseConfig::new(dir);
    // The tests decide when compaction runs.
    c.compaction.autocompaction = false;
    c
}

/// Writes rows `(a, b)` for `a` in `keys` and `b` in `0..rows`, then flushes.
fn write_and_flush(db: &Database, keys: std::ops::Range<i32>, rows: i32) {
    let id = db.table("ks", "t").unwrap().schema().id;
    for a in keys {
        for b in 0..rows {
            db.apply(
                vec![Mutation {
                    table: id,
                    key: pk(a),
                    update: insert(b, &format!("v{a}-{b}"), 1000 + i64::from(b)),
                }],
                Wait::Allowed,
            )
            .unwrap();
        }
    }
    db.flush("ks", "t").unwrap();
}

/// Every live row of ks.t as (a, b).
fn rows(db: &Database) -> BTreeSet<(i32, i32)> {
    let scan = db
        .scan(
            "ks",
            "t",
            PartitionPos::TokenStart(Token::MIN),
            None,
            ReadCommand::all(now(), Wait::Allowed),
        )
        .unwrap();
    let mut out = BTreeSet::new();
    for p in scan {
        let p = p.unwrap();
        let a = i32::from_be_bytes(p.key.key[..4].try_into().unwrap());
        for (k, _) in p.rows {
            let b = (0..10_000).find(|b| ck(*b) == k).unwrap();
            out.insert((a, b));
        }
    }
    out
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

/// Copies a snapshot's files into the table's `upload/`, as an operator does.
fn copy_into_upload(snapshot: &Path, table_dir: &Path) {
    let upload = table_dir.join(UPLOAD_DIR);
    std::fs::create_dir_all(&upload).unwrap();
    for f in files(snapshot) {
        std::fs::copy(&f, upload.join(f.file_name().unwrap())).unwrap();
    }
}

#[test]
fn snapshot_is_hard_links_and_outlives_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(config(dir.path())).unwrap();
    db.set_schema_describer(Arc::new(|s: &TableSchema| {
        format!("CREATE TABLE {}.{} ();\n", s.keyspace, s.name)
    }));
    let t = db.create_table(kv_schema()).unwrap();
    for i in 0..3 {
        write_and_flush(&db, i * 10..i * 10 + 10, 20);
    }
    let before = rows(&db);
    db.snapshot(std::slice::from_ref(&t), "s1", &SnapshotOptions::default())
        .unwrap();
    let snap = t.dir().join(SNAPSHOTS_DIR).join("s1");
    let snap_files = files(&snap);
    let names: Vec<String> = snap_files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(names.contains(&"manifest.json".to_string()), "{names:?}");
    assert_eq!(
        std::fs::read_to_string(snap.join("schema.cql")).unwrap(),
        "CREATE TABLE ks.t ();\n"
    );
    // Every sstable component is a second link to the live file: no byte copied.
    let sstable_files: Vec<&PathBuf> = snap_files
        .iter()
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("ca-"))
        .collect();
    assert_eq!(sstable_files.len(), 3 * 8);
    for f in &sstable_files {
        let live = t.dir().join(f.file_name().unwrap());
        let (a, b) = (
            std::fs::metadata(f).unwrap(),
            std::fs::metadata(&live).unwrap(),
        );
        assert_eq!((a.dev(), a.ino()), (b.dev(), b.ino()), "{}", f.display());
        assert_eq!(a.nlink(), 2);
    }
    let manifest = std::fs::read_to_string(snap.join("manifest.json")).unwrap();
    assert!(
        manifest.contains("\"files\":[\"ca-1-Data.db\",\"ca-2-Data.db\",\"ca-3-Data.db\"]"),
        "{manifest}"
    );
    assert!(
        manifest.contains("\"expires_at\":null,\"ephemeral\":false"),
        "{manifest}"
    );

    let listed = db.list_snapshots();
    assert_eq!(listed.len(), 1);
    let shared_only = listed[0].true_size;
    assert!(
        shared_only > 0 && shared_only < 2048,
        "only its own small files: {shared_only}"
    );
    assert_eq!(t.stats().unwrap().snapshots_true_size, shared_only);

    // A second snapshot under the same name is refused, Cassandra's way.
    let again = db.snapshot(std::slice::from_ref(&t), "s1", &SnapshotOptions::default());
    assert!(matches!(&again, Err(Error::SnapshotExists { tag }) if tag == "s1"));
    assert_eq!(
        again.unwrap_err().to_string(),
        "Snapshot s1 already exists."
    );

    // Compaction replaces the live sstables; the snapshot keeps the old files, whole.
    db.compact("ks", "t").unwrap();
    drop(t);
    let t = db.table("ks", "t").unwrap();
    let gens: Vec<u64> = t.state().sstables.iter().map(|s| s.generation).collect();
    assert!(gens.iter().all(|g| *g > 3), "{gens:?}");
    for f in &sstable_files {
        assert_eq!(std::fs::metadata(f).unwrap().nlink(), 1, "{}", f.display());
    }
    let listed = db.list_snapshots();
    let linked: u64 = sstable_files
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum();
    assert_eq!(listed[0].true_size, shared_only + linked);
    assert_eq!(listed[0].size_on_disk, listed[0].true_size);
    assert_eq!(t.stats().unwrap().snapshots_true_size, listed[0].true_size);

    // The snapshot restores exactly what was there, through upload/ and refresh.
    let live_before = t.state().sstables.len();
    copy_into_upload(&snap, t.dir());
    let report = db.refresh("ks", "t").unwrap();
    assert_eq!(report.generations.len(), 3);
    assert_eq!(t.state().sstables.len(), live_before + 3);
    assert_eq!(rows(&db), before);
    // The loaded files left upload/ (the snapshot's own two files stay).
    let left: Vec<String> = files(&t.dir().join(UPLOAD_DIR))
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["manifest.json", "schema.cql"]);

    // Clearing frees the space the snapshot alone held.
    assert_eq!(db.clear_snapshots(Some("s1"), &[], None).unwrap(), 1);
    assert!(!snap.exists());
    assert!(db.list_snapshots().is_empty());
    assert_eq!(t.stats().unwrap().snapshots_true_size, 0);
}

#[test]
fn drop_and_truncate_snapshot_automatically_and_restore_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(config(dir.path())).unwrap();
    db.create_table(kv_schema()).unwrap();
    write_and_flush(&db, 0..20, 10);
    // Unflushed rows too: the automatic snapshot flushes first.
    let id = db.table("ks", "t").unwrap().schema().id;
    db.apply(
        vec![Mutation {
            table: id,
            key: pk(100),
            update: insert(7, "memtable", 5000),
        }],
        Wait::Allowed,
    )
    .unwrap();
    let all = rows(&db);
    assert_eq!(all.len(), 201);

    db.truncate_table("ks", "t").unwrap();
    assert!(rows(&db).is_empty());
    let t = db.table("ks", "t").unwrap();
    let listed = db.list_snapshots();
    assert_eq!(listed.len(), 1);
    let tag = listed[0].tag.clone();
    assert!(
        tag.starts_with("truncated-") && tag.ends_with("-t"),
        "{tag}"
    );
    assert!(!listed[0].table_dropped);
    // It lives in the (new) table's directory, as Cassandra keeps it in the table's.
    let snap = t.dir().join(SNAPSHOTS_DIR).join(&tag);
    assert!(snap.join("manifest.json").exists());
    copy_into_upload(&snap, t.dir());
    db.refresh("ks", "t").unwrap();
    assert_eq!(rows(&db), all);

    // DROP: the directory keeps the snapshots, listed as a dropped table's.
    let old_dir = t.dir().to_path_buf();
    drop(t);
    db.drop_table("ks", "t").unwrap();
    let listed = db.list_snapshots();
    assert_eq!(listed.len(), 2, "{listed:?}");
    let dropped = listed
        .iter()
        .find(|d| d.tag.starts_with("dropped-"))
        .unwrap();
    assert!(dropped.table_dropped);
    assert!(!old_dir.join("schema.cairn").exists());
    let remaining: Vec<String> = std::fs::read_dir(&old_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(remaining, [SNAPSHOTS_DIR]);

    // Recreated (a new id: a new directory), the table takes the dropped snapshot back.
    let t = db.create_table(kv_schema()).unwrap();
    assert_ne!(t.dir(), old_dir);
    copy_into_upload(&old_dir.join(SNAPSHOTS_DIR).join(&dropped.tag), t.dir());
    db.refresh("ks", "t").unwrap();
    assert_eq!(rows(&db), all);

    // Clearing every snapshot removes the dropped table's directory with its last one.
    drop(t);
    db.clear_snapshots(None, &["ks".to_string()], None).unwrap();
    assert!(!old_dir.exists());
    assert!(db.list_snapshots().is_empty());

    // A restart lists the same (nothing), and the dropped directory stays gone.
    drop(db);
    let db = Database::open(config(dir.path())).unwrap();
    assert!(db.list_snapshots().is_empty());
    assert_eq!(rows(&db), all);
}

#[test]
fn refresh_refuses_corrupt_incomplete_and_foreign_files_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(config(dir.path())).unwrap();
    let t = db.create_table(kv_schema()).unwrap();
    write_and_flush(&db, 0..50, 40);
    write_and_flush(&db, 50..60, 40);
    db.snapshot(
        std::slice::from_ref(&t),
        "good",
        &SnapshotOptions::default(),
    )
    .unwrap();
    let good = t.dir().join(SNAPSHOTS_DIR).join("good");
    // A second table, empty, receives the uploads.
    let mut schema = kv_schema();
    schema.name = "u".into();
    let u = db.create_table(schema).unwrap();
    let upload = u.dir().join(UPLOAD_DIR);
    let reset = || {
        let _ = std::fs::remove_dir_all(&upload);
        copy_into_upload(&good, u.dir());
    };
    let assert_nothing_loaded = || {
        assert!(u.state().sstables.is_empty());
        let names: Vec<String> = std::fs::read_dir(u.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            !names
                .iter()
                .any(|n| n.starts_with("ca-") || n.starts_with("txn-")),
            "{names:?}"
        );
    };

    // A flipped byte inside a data chunk: the checksum names the file and the chunk.
    reset();
    let data = upload.join("ca-2-Data.db");
    let mut bytes = std::fs::read(&data).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x10;
    std::fs::write(&data, &bytes).unwrap();
    match db.refresh("ks", "u") {
        Err(Error::Corruption { path, offset, kind }) => {
            assert_eq!(path, data);
            assert!(
                offset <= at as u64 && at as u64 - offset < 64 * 1024,
                "{offset} vs {at}"
            );
            assert!(kind.to_string().contains("checksum mismatch"), "{kind}");
        }
        other => panic!("expected a checksum error, got {other:?}"),
    }
    assert_nothing_loaded();
    // The good sstable was not loaded either, and the upload is untouched.
    assert!(upload.join("ca-1-Data.db").exists());

    // A corrupt index page.
    reset();
    let index = upload.join("ca-1-Index.db");
    let mut bytes = std::fs::read(&index).unwrap();
    bytes[10] ^= 0x01;
    std::fs::write(&index, &bytes).unwrap();
    assert!(matches!(db.refresh("ks", "u"), Err(Error::Corruption { path, .. }) if path == index));
    assert_nothing_loaded();

    // A truncated data file.
    reset();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(upload.join("ca-1-Data.db"))
        .unwrap();
    let len = f.metadata().unwrap().len();
    f.set_len(len - 100).unwrap();
    assert!(matches!(
        db.refresh("ks", "u"),
        Err(Error::Corruption { .. })
    ));
    assert_nothing_loaded();

    // A missing component.
    reset();
    std::fs::remove_file(upload.join("ca-2-Filter.db")).unwrap();
    match db.refresh("ks", "u") {
        Err(
            e @ Error::Unloadable {
                problem: LoadProblem::MissingComponent(_),
                ..
            },
        ) => {
            assert!(e.to_string().contains("ca-2-Filter.db"), "{e}");
        }
        other => panic!("expected a missing component, got {other:?}"),
    }
    assert_nothing_loaded();

    // Another database's file.
    reset();
    std::fs::write(upload.join("nb-1-big-Data.db"), b"not ours").unwrap();
    match db.refresh("ks", "u") {
        Err(Error::Unloadable {
            path,
            problem: LoadProblem::NotCairnSSTable,
        }) => {
            assert_eq!(path, upload.join("nb-1-big-Data.db"));
        }
        other => panic!("expected a foreign file, got {other:?}"),
    }
    assert_nothing_loaded();

    // An sstable of a table with other columns.
    reset();
    let other = TableSchema::new("ks", "other")
        .with_column("a", CqlType::Int, ColumnKind::PartitionKey)
        .with_column("x", CqlType::Blob, ColumnKind::Regular)
        .with_column("y", CqlType::Text, ColumnKind::Regular);
    let o = db.create_table(other).unwrap();
    std::fs::remove_dir_all(&upload).unwrap();
    copy_into_upload(&good, o.dir());
    match db.refresh("ks", "other") {
        Err(
            e @ Error::Unloadable {
                problem: LoadProblem::Incompatible { .. },
                ..
            },
        ) => {
            let text = e.to_string();
            assert!(text.contains("primary key"), "{text}");
        }
        other => panic!("expected an incompatible sstable, got {other:?}"),
    }
    assert!(o.state().sstables.is_empty());

    // The intact snapshot loads, every row.
    reset();
    db.refresh("ks", "u").unwrap();
    assert_eq!(u.state().sstables.len(), 2);
    let source: usize = t
        .state()
        .sstables
        .iter()
        .map(|s| s.stats.row_count as usize)
        .sum();
    let loaded: usize = u
        .state()
        .sstables
        .iter()
        .map(|s| s.stats.row_count as usize)
        .sum();
    assert_eq!(loaded, source);
    // Loaded sstables are level 0 with an empty commitlog interval, whatever they were.
    for s in &u.state().sstables {
        assert_eq!(s.stats.level, 0);
        assert_eq!(s.stats.commitlog_upper, (0, 0));
    }
}

#[test]
fn incremental_backups_hold_exactly_the_sstables_flushed_while_on() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(config(dir.path())).unwrap();
    let t = db.create_table(kv_schema()).unwrap();
    write_and_flush(&db, 0..5, 5);
    assert!(!db.incremental_backups());
    db.set_incremental_backups(true);
    write_and_flush(&db, 5..10, 5);
    write_and_flush(&db, 10..15, 5);
    let flushed_while_on: BTreeSet<u64> = t
        .state()
        .sstables
        .iter()
        .map(|s| s.generation)
        .filter(|g| *g > 1)
        .collect();
    // Compaction output is not backed up (Cassandra backs up flushes and streams only).
    db.compact("ks", "t").unwrap();
    db.set_incremental_backups(false);
    write_and_flush(&db, 15..20, 5);
    let backups: BTreeSet<u64> = files(&t.dir().join(BACKUPS_DIR))
        .iter()
        .filter_map(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.strip_prefix("ca-")?.split('-').next()?.parse().ok()
        })
        .collect();
    assert_eq!(backups, flushed_while_on);
    assert_eq!(files(&t.dir().join(BACKUPS_DIR)).len(), 2 * 8);

    // TRUNCATE moves backups/ and snapshots/ to the new table's directory, whose sstables
    // are then numbered above them: a flush of generation 1 would find backups/ca-1-* taken.
    db.set_incremental_backups(true);
    drop(t);
    db.truncate_table("ks", "t").unwrap();
    let t = db.table("ks", "t").unwrap();
    write_and_flush(&db, 20..21, 1);
    let newest = t
        .state()
        .sstables
        .iter()
        .map(|s| s.generation)
        .max()
        .unwrap();
    assert!(
        newest > 5,
        "{newest}: numbered among the moved files (up to 5)"
    );
    assert!(t
        .dir()
        .join(BACKUPS_DIR)
        .join(format!("ca-{newest}-Data.db"))
        .exists());
    assert!(t.dir().join(BACKUPS_DIR).join("ca-2-Data.db").exists());
    // And after a restart too.
    drop(t);
    drop(db);
    let db = Database::open(config(dir.path())).unwrap();
    db.set_incremental_backups(true);
    write_and_flush(&db, 21..22, 1);
    let t = db.table("ks", "t").unwrap();
    assert!(t.state().sstables.iter().all(|s| s.generation >= newest));
    assert_eq!(t.state().sstables.len(), 2);
}

#[test]
fn expired_snapshots_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(config(dir.path())).unwrap();
    let t = db.create_table(kv_schema()).unwrap();
    write_and_flush(&db, 0..3, 3);
    let opts = SnapshotOptions {
        skip_flush: false,
        ttl: Some(Duration::from_millis(50)),
    };
    db.snapshot(std::slice::from_ref(&t), "short", &opts)
        .unwrap();
    db.snapshot(
        std::slice::from_ref(&t),
        "kept",
        &SnapshotOptions::default(),
    )
    .unwrap();
    let listed = db.list_snapshots();
    let short = listed.iter().find(|d| d.tag == "short").unwrap();
    assert_eq!(short.expires_at_ms, Some(short.created_at_ms + 50));
    let deadline = Instant::now() + Duration::from_secs(60);
    while t.dir().join(SNAPSHOTS_DIR).join("short").exists() {
        assert!(
            Instant::now() < deadline,
            "the expired snapshot was never removed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let tags: Vec<String> = db.list_snapshots().into_iter().map(|d| d.tag).collect();
    assert_eq!(tags, ["kept"]);
}
