//! Compaction jobs end to end on a real directory: merging, purging, splitting, incremental
//! release, stopping, restarting.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use cairn_engine::compaction::strategy::options::TimestampResolution;
use cairn_engine::compaction::strategy::{Job, JobKind, TimeWindow};
use cairn_engine::model::{DeletionTime, Mutation, Partition, Row};
use cairn_engine::schema::{TableSchema, TombstoneGcMode};
use cairn_engine::table::Table;
use cairn_engine::{Database, DatabaseConfig, Error, ReadCommand, Wait};
use common::*;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

fn cfg(dir: &std::path::Path) -> DatabaseConfig {
    let mut c = DatabaseConfig::new(dir);
    c.commitlog_segment_size = 1 << 20;
    c
}

/// A table whose background strategy never runs, so each test decides the jobs.
fn manual_schema(gc: TombstoneGcMode) -> TableSchema {
    let mut s = kv_schema();
    s.options.compaction = vec![
        ("class".into(), "SizeTieredCompactionStrategy".into()),
        ("enabled".into(), "false".into()),
    ];
    s.options.tombstone_gc = gc;
    s.options.gc_grace_seconds = 0;
    s
}

fn value_of(row: &Row) -> String {
    String::from_utf8(row.cell(2).unwrap().value.to_vec()).unwrap()
}

/// Every live (a, b) → value of the table.
fn contents(db: &Database) -> BTreeMap<(i32, Vec<u8>), String> {
    let mut out = BTreeMap::new();
    let scan = db
        .scan(
            "ks",
            "t",
            cairn_engine::model::PartitionPos::TokenStart(cairn_engine::model::Token::MIN),
            None,
            ReadCommand::all(now(), Wait::Allowed),
        )
        .unwrap();
    for p in scan {
        let p = p.unwrap();
        let a = i32::from_be_bytes(p.key.key[..4].try_into().unwrap());
        for (ck, row) in p.rows {
            out.insert((a, ck.0.to_vec()), value_of(&row));
        }
    }
    out
}

fn put(db: &Database, id: u128, a: i32, b: i32, v: &str, ts: i64) {
    db.apply(
        vec![Mutation {
            table: id,
            key: pk(a),
            update: insert(b, v, ts),
        }],
        Wait::Allowed,
    )
    .unwrap();
}

fn delete_partition(db: &Database, id: u128, a: i32, ts: i64) {
    db.apply(
        vec![Mutation {
            table: id,
            key: pk(a),
            update: Partition {
                deletion: Some(DeletionTime {
                    marked_at: ts,
                    local_deletion_time: now() - 10,
                }),
                ..Default::default()
            },
        }],
        Wait::Allowed,
    )
    .unwrap();
}

fn gens(t: &Table) -> Vec<u64> {
    let mut g: Vec<u64> = t.state().sstables.iter().map(|s| s.generation).collect();
    g.sort_unstable();
    g
}

fn job(inputs: Vec<u64>, max_output_bytes: u64, incremental: bool) -> Job {
    Job {
        inputs,
        output_level: 0,
        max_output_bytes,
        incremental,
        time_window: None,
        kind: JobKind::Regular,
    }
}

/// Files in the table directory that are neither live sstable components, the schema nor
/// the (empty) `upload/` folder.
fn stray_files(t: &Table) -> Vec<String> {
    let live = gens(t);
    std::fs::read_dir(t.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            n != "schema.cairn"
                && !(n == "upload" && std::fs::read_dir(t.dir().join(n)).unwrap().next().is_none())
                && !live
                    .iter()
                    .any(|g| n.starts_with(&format!("ca-{g}-")) || n == &format!("ca-{g}-TOC.txt"))
        })
        .collect()
}

/// Waits until removed inputs are deleted (readers release them asynchronously).
fn settle(db: &Database, t: &Table) {
    db.compaction().wait_idle(Duration::from_secs(30));
    for _ in 0..500 {
        if stray_files(t).is_empty() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn three_overlapping_sstables(db: &Database, id: u128) {
    for round in 0..3 {
        for a in 0..60 {
            for b in 0..10 {
                put(db, id, a, b, &format!("r{round}-{a}-{b}"), 100 + round);
            }
        }
        if round == 2 {
            for a in 0..10 {
                delete_partition(db, id, a, 1000);
            }
        }
        db.flush("ks", "t").unwrap();
    }
}

#[test]
fn major_compaction_merges_overwrites_and_survives_restart() {
    let dir = tempfile::tempdir().unwrap();
    let expected;
    {
        let db = Database::open(cfg(dir.path())).unwrap();
        let t = db
            .create_table(manual_schema(TombstoneGcMode::Disabled))
            .unwrap();
        let id = t.schema().id;
        three_overlapping_sstables(&db, id);
        expected = contents(&db);
        assert_eq!(expected.len(), 50 * 10);
        assert!(expected.values().all(|v| v.starts_with("r2-")));
        let before = t.stats().unwrap();
        assert_eq!(before.sstable_count, 3);
        let reports = db.compact("ks", "t").unwrap();
        assert_eq!(reports.len(), 1);
        let r = &reports[0];
        assert_eq!(r.inputs.len(), 3);
        assert_eq!(r.outputs.len(), 1);
        // Every partition was in all three inputs.
        assert_eq!(r.merged_from, vec![0, 0, 60]);
        assert_eq!(contents(&db), expected);
        let after = t.stats().unwrap();
        assert_eq!(after.sstable_count, 1);
        assert!(after.live_disk_bytes * 2 < before.live_disk_bytes);
        assert!(after.compaction_bytes_written > 0 && after.compaction_bytes_read > 0);
        assert_eq!(db.compaction().history().len(), 1);
        settle(&db, &t);
        assert_eq!(stray_files(&t), Vec::<String>::new());
    }
    let db = Database::open(cfg(dir.path())).unwrap();
    assert_eq!(contents(&db), expected);
    assert_eq!(
        db.table("ks", "t").unwrap().stats().unwrap().sstable_count,
        1
    );
    // The compaction history survives the restart (compaction_history.log).
    let h = db.compaction().history();
    assert_eq!(h.len(), 1);
    assert_eq!((h[0].keyspace.as_str(), h[0].table.as_str()), ("ks", "t"));
    assert_eq!((h[0].inputs.len(), h[0].outputs.len()), (3, 1));
    assert_eq!(h[0].merged_from, vec![0, 0, 60]);
    assert_eq!(h[0].kind, JobKind::Major);
}

#[test]
fn tombstone_is_kept_while_older_data_lives_outside_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(cfg(dir.path())).unwrap();
    let t = db
        .create_table(manual_schema(TombstoneGcMode::Immediate))
        .unwrap();
    let id = t.schema().id;
    put(&db, id, 1, 1, "old", 10);
    db.flush("ks", "t").unwrap(); // A: data
    delete_partition(&db, id, 1, 20);
    db.flush("ks", "t").unwrap(); // B: the tombstone
    put(&db, id, 2, 1, "other", 30);
    db.flush("ks", "t").unwrap(); // C: unrelated
    let g = gens(&t);
    let (a, b, c) = (g[0], g[1], g[2]);

    let r = db
        .compaction()
        .run_job(&t, job(vec![b, c], u64::MAX, false))
        .unwrap();
    assert_eq!(
        r.purged.tombstones_purged, 0,
        "A still holds data the tombstone shadows"
    );
    assert_eq!(contents(&db).len(), 1, "key 1 stays deleted");

    let rest = gens(&t);
    assert!(rest.contains(&a));
    let r = db
        .compaction()
        .run_job(&t, job(rest, u64::MAX, false))
        .unwrap();
    assert_eq!(r.purged.tombstones_purged, 1);
    let live = contents(&db);
    assert_eq!(live.len(), 1);
    assert_eq!(live.values().next().unwrap(), "other");
    let s = &t.state().sstables[0];
    assert_eq!(s.stats.tombstone_count, 0);
    assert_eq!(s.stats.partition_count, 1);
}

#[test]
fn tombstone_is_kept_while_a_memtable_holds_older_data() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(cfg(dir.path())).unwrap();
    let t = db
        .create_table(manual_schema(TombstoneGcMode::Immediate))
        .unwrap();
    let id = t.schema().id;
    delete_partition(&db, id, 1, 20);
    db.flush("ks", "t").unwrap();
    put(&db, id, 1, 1, "older write, arriving late", 10); // stays in the memtable
    let r = db
        .compaction()
        .run_job(&t, job(gens(&t), u64::MAX, false))
        .unwrap();
    assert_eq!(r.purged.tombstones_purged, 0);
    assert!(contents(&db).is_empty());
}

#[test]
fn incremental_job_splits_outputs_and_releases_inputs_early() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(cfg(dir.path())).unwrap();
    let t = db
        .create_table(manual_schema(TombstoneGcMode::Disabled))
        .unwrap();
    let id = t.schema().id;
    // Three runs over disjoint key ranges, so inputs are exhausted one after another.
    for part in 0..3 {
        for a in part * 100..(part + 1) * 100 {
            for b in 0..20 {
                put(
                    &db,
                    id,
                    a,
                    b,
                    &format!("value-{a}-{b}-{}", "x".repeat(40)),
                    10,
                );
            }
        }
        db.flush("ks", "t").unwrap();
    }
    let expected = contents(&db);
    let inputs = gens(&t);
    let r = db
        .compaction()
        .run_job(&t, job(inputs.clone(), 64 << 10, true))
        .unwrap();
    assert!(r.outputs.len() >= 6, "outputs: {:?}", r.outputs);
    assert_eq!(contents(&db), expected);
    let st = t.state();
    assert_eq!(st.sstables.len(), r.outputs.len());
    assert!(st.sstables.iter().all(|s| !inputs.contains(&s.generation)));
    let run = st.sstables[0].stats.run_id;
    assert!(st.sstables.iter().all(|s| s.stats.run_id == run), "one run");
    // Fragments do not overlap.
    let mut ranges: Vec<_> = st
        .sstables
        .iter()
        .map(|s| (s.stats.first_key.clone(), s.stats.last_key.clone()))
        .collect();
    ranges.sort();
    for w in ranges.windows(2) {
        assert!(w[0].1 < w[1].0);
    }
    drop(st);
    settle(&db, &t);
    assert_eq!(stray_files(&t), Vec::<String>::new());
}

/// An ICS table with 1 MiB fragments and automatic compaction off, holding about 3 MB of
/// memtable (300 partitions of ten ~900-byte rows), flushed: at least three fragments.
fn flushed_ics_table(db: &Database) -> Arc<Table> {
    let mut schema = kv_schema();
    schema.options.compaction = vec![
        ("class".into(), "IncrementalCompactionStrategy".into()),
        ("sstable_size_in_mb".into(), "1".into()),
        ("enabled".into(), "false".into()),
    ];
    let t = db.create_table(schema).unwrap();
    let id = t.schema().id;
    for a in 0..300 {
        for b in 0..10 {
            put(db, id, a, b, &format!("{a}-{b}-{}", "x".repeat(900)), 10);
        }
    }
    db.flush("ks", "t").unwrap();
    t
}

/// An ICS table's flush is one run of key-range fragments (so the job that merges it can
/// release it piece by piece); only the last fragment records the end of the commitlog
/// interval, so a crash between fragments replays the whole memtable. Data survives a restart.
#[test]
fn ics_flush_is_a_run_of_fragments() {
    let dir = tempfile::tempdir().unwrap();
    let expected;
    {
        let db = Database::open(cfg(dir.path())).unwrap();
        let t = flushed_ics_table(&db);
        expected = contents(&db);
        let st = t.state();
        let mut ssts: Vec<_> = st.sstables.to_vec();
        assert!((2..=8).contains(&ssts.len()), "fragments: {}", ssts.len());
        ssts.sort_by(|a, b| a.stats.first_key.cmp(&b.stats.first_key));
        let run = ssts[0].stats.run_id;
        assert!(ssts.iter().all(|s| s.stats.run_id == run), "one run");
        for w in ssts.windows(2) {
            assert!(w[0].stats.last_key < w[1].stats.first_key, "disjoint");
        }
        let upper = ssts.iter().map(|s| s.stats.commitlog_upper).max().unwrap();
        let by_gen = ssts.iter().max_by_key(|s| s.generation).unwrap();
        assert_eq!(by_gen.stats.commitlog_upper, upper);
        for s in ssts.iter().filter(|s| s.generation != by_gen.generation) {
            assert_eq!(
                s.stats.commitlog_upper, s.stats.commitlog_lower,
                "only the last fragment may move the replay floor"
            );
        }
    }
    let db = Database::open(cfg(dir.path())).unwrap();
    assert_eq!(contents(&db), expected);
}

/// A crash after some fragments of a flush were committed, before the last: the commitlog
/// still holds the whole memtable (its segment is active) and the replay floor has not moved,
/// so nothing is lost. Simulated by deleting the last fragment's files before reopening.
#[test]
fn ics_flush_interrupted_before_its_last_fragment_is_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = cfg(dir.path());
    config.commitlog_segment_size = 64 << 20;
    let (expected, last, table_dir);
    {
        let db = Database::open(config.clone()).unwrap();
        let t = flushed_ics_table(&db);
        expected = contents(&db);
        let g = gens(&t);
        assert!(g.len() >= 2, "fragments: {g:?}");
        last = *g.last().unwrap();
        table_dir = t.dir().to_path_buf();
    }
    // Every component of the last fragment goes, as if the crash came before its commit.
    let mut removed = 0;
    for entry in std::fs::read_dir(&table_dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with(&format!("ca-{last}-")) {
            std::fs::remove_file(&path).unwrap();
            removed += 1;
        }
    }
    assert!(removed > 0);
    let db = Database::open(config).unwrap();
    assert_eq!(contents(&db), expected);
}

#[test]
fn stopped_job_leaves_the_inputs_live_and_no_files_behind() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Database::open(cfg(dir.path())).unwrap());
    let t = db
        .create_table(manual_schema(TombstoneGcMode::Disabled))
        .unwrap();
    let id = t.schema().id;
    three_overlapping_sstables(&db, id);
    let expected = contents(&db);
    let before = gens(&t);
    db.compaction().set_throughput(20_000); // bytes per second: the job crawls
    let runner = {
        let (db, t, inputs) = (Arc::clone(&db), Arc::clone(&t), before.clone());
        std::thread::spawn(move || db.compaction().run_job(&t, job(inputs, u64::MAX, false)))
    };
    while db.compaction().running().is_empty() {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(db.compaction().stop(Some(&t)), 1);
    let r = runner.join().unwrap();
    assert!(matches!(r, Err(Error::CompactionStopped { .. })), "{r:?}");
    assert_eq!(gens(&t), before);
    assert_eq!(contents(&db), expected);
    settle(&db, &t);
    assert_eq!(stray_files(&t), Vec::<String>::new());
    assert_eq!(db.compaction().stats().stopped, 1);
    // The inputs are free again.
    db.compaction().set_throughput(0);
    db.compaction()
        .run_job(&t, job(before, u64::MAX, false))
        .unwrap();
    assert_eq!(contents(&db), expected);
}

#[test]
fn drop_expired_job_deletes_without_reading() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(cfg(dir.path())).unwrap();
    let t = db
        .create_table(manual_schema(TombstoneGcMode::Immediate))
        .unwrap();
    let id = t.schema().id;
    delete_partition(&db, id, 5, 20);
    db.flush("ks", "t").unwrap();
    let read_before = t.stats().unwrap().compaction_bytes_read;
    let mut j = job(gens(&t), u64::MAX, false);
    j.kind = JobKind::DropExpired;
    let r = db.compaction().run_job(&t, j).unwrap();
    assert!(r.outputs.is_empty());
    assert_eq!(t.stats().unwrap().sstable_count, 0);
    assert_eq!(t.stats().unwrap().compaction_bytes_read, read_before);
}

/// Writes three flushes whose rows spread over the same three hourly windows (timestamps in
/// `unit`s per second), compacts them with a window split, and checks one output per window.
fn windows_kept_apart(resolution: TimestampResolution, per_sec: i64) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(cfg(dir.path())).unwrap();
    let t = db
        .create_table(manual_schema(TombstoneGcMode::Disabled))
        .unwrap();
    let id = t.schema().id;
    let hour: i64 = 3600 * per_sec;
    for round in 0..3 {
        for a in 0..30 {
            let window = i64::from(a % 3);
            put(
                &db,
                id,
                a,
                round,
                "x",
                10 * hour + window * hour + i64::from(round),
            );
        }
        db.flush("ks", "t").unwrap();
    }
    let expected = contents(&db);
    let mut j = job(gens(&t), u64::MAX, false);
    j.time_window = Some(TimeWindow {
        secs: 3600,
        resolution,
    });
    let r = db.compaction().run_job(&t, j).unwrap();
    assert_eq!(r.outputs.len(), 3, "{resolution:?}");
    for s in &t.state().sstables {
        let w = s.stats.min_timestamp.div_euclid(hour);
        assert_eq!(
            s.stats.max_timestamp.div_euclid(hour),
            w,
            "one window per output ({resolution:?})"
        );
        assert_eq!(s.stats.partition_count, 10);
    }
    assert_eq!(contents(&db), expected);
}

#[test]
fn time_window_jobs_keep_windows_apart() {
    windows_kept_apart(TimestampResolution::Microseconds, 1_000_000);
}

#[test]
fn time_window_jobs_keep_windows_apart_in_milliseconds() {
    // A MILLISECONDS table once got one output for all windows: the split assumed µs.
    windows_kept_apart(TimestampResolution::Milliseconds, 1_000);
}
