//! The row cache through a real database: continuity (a repeated read, an absent partition,
//! a head read after a flush, a head read after the tail was evicted — none touches an
//! sstable, counted by the table's chunk and index-page reads), population races, eviction
//! within the budget, and invalidation by TRUNCATE.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{ck, insert, now, open_with_cache, pk};
use cairn_engine::model::{ClusteringRange, Mutation, Slice};
use cairn_engine::read::ReadCommand;
use cairn_engine::table::Table;
use cairn_engine::Database;
use cairn_engine::Wait;
use std::sync::Arc;

fn write(db: &Database, t: &Table, a: i32, b: i32, v: &str, ts: i64) {
    db.apply(
        vec![Mutation {
            table: t.schema().id,
            key: pk(a),
            update: insert(b, v, ts),
        }],
        Wait::Allowed,
    )
    .unwrap();
}

/// Data chunks and index pages the table has read from its sstables.
fn sstable_reads(t: &Table) -> (u64, u64) {
    let s = t.stats().unwrap();
    (s.chunks_read, s.index_pages_read)
}

fn head(limit: usize) -> ReadCommand {
    let mut cmd = ReadCommand::all(now(), Wait::Allowed);
    cmd.limit = Some(limit);
    cmd
}

fn slice(lo: i32, hi: i32) -> ReadCommand {
    let mut cmd = ReadCommand::all(now(), Wait::Allowed);
    let (lo, hi) = (ck(lo), ck(hi));
    cmd.slice = Slice::new(vec![ClusteringRange::from_bounds(
        Some((&lo.0, true)),
        Some((&hi.0, true)),
    )]);
    cmd
}

fn values(t: &Table, a: i32, cmd: &ReadCommand) -> Vec<(i32, Vec<u8>)> {
    let Some(p) = t.read(&pk(a), cmd).unwrap() else {
        return Vec::new();
    };
    p.rows
        .iter()
        .map(|(k, r)| {
            let b = (0..1000).find(|b| ck(*b) == *k).unwrap();
            (b, r.cell(2).map(|c| c.value.to_vec()).unwrap_or_default())
        })
        .collect()
}

#[test]
fn a_repeated_read_and_an_absent_partition_touch_no_sstable() {
    let dir = tempfile::tempdir().unwrap();
    let (db, t) = open_with_cache(dir.path(), 8 << 20);
    for b in 0..20 {
        write(&db, &t, 1, b, "v", 10);
    }
    db.flush("ks", "t").unwrap();
    let all = ReadCommand::all(now(), Wait::Allowed);
    let first = values(&t, 1, &all);
    assert_eq!(first.len(), 20);
    assert!(t.read(&pk(2), &all).unwrap().is_none());
    let before = sstable_reads(&t);
    assert_eq!(values(&t, 1, &all), first);
    assert_eq!(values(&t, 1, &head(1)), first[..1].to_vec());
    assert_eq!(values(&t, 1, &slice(5, 7)).len(), 3);
    assert!(t.read(&pk(2), &all).unwrap().is_none());
    assert_eq!(sstable_reads(&t), before, "served from the cache");
    let stats = db.row_cache().unwrap().stats();
    assert!(stats.partition_hits >= 4 && stats.row_hits > 0, "{stats:?}");
    assert_eq!(stats.reads_with_misses, 2, "{stats:?}");
}

#[test]
fn a_head_read_after_a_flush_hits() {
    let dir = tempfile::tempdir().unwrap();
    let (db, t) = open_with_cache(dir.path(), 8 << 20);
    // A time series prepending rows: the newest row is the partition's head.
    for b in (500..510).rev() {
        write(&db, &t, 1, b, "old", 10);
    }
    db.flush("ks", "t").unwrap();
    assert_eq!(values(&t, 1, &head(1)), vec![(500, b"old".to_vec())]);
    for b in (490..500).rev() {
        write(&db, &t, 1, b, "new", 20);
    }
    // An overwrite of a cached row, too.
    write(&db, &t, 1, 500, "newer", 30);
    db.flush("ks", "t").unwrap();
    let before = sstable_reads(&t);
    assert_eq!(values(&t, 1, &head(1)), vec![(490, b"new".to_vec())]);
    let ten = values(&t, 1, &head(11));
    assert_eq!(ten.last(), Some(&(500, b"newer".to_vec())));
    assert_eq!(sstable_reads(&t), before, "the flush merged into the cache");
    let stats = db.row_cache().unwrap().stats();
    assert!(stats.rows_merged_from_memtable >= 11, "{stats:?}");
}

#[test]
fn a_head_read_after_the_tail_was_evicted_still_hits() {
    let dir = tempfile::tempdir().unwrap();
    let budget = 24 << 10;
    let (db, t) = open_with_cache(dir.path(), budget);
    for b in 0..100 {
        write(
            &db,
            &t,
            1,
            b,
            "some value of a few dozen bytes, to fill rows",
            10,
        );
    }
    db.flush("ks", "t").unwrap();
    let tail = values(&t, 1, &slice(60, 99));
    assert_eq!(tail.len(), 40);
    assert_eq!(values(&t, 1, &head(1)).len(), 1);
    // More rows than the budget leaves room for: the tail, least recently used, goes.
    assert_eq!(values(&t, 1, &slice(10, 50)).len(), 41);
    assert_eq!(values(&t, 1, &head(1)).len(), 1);
    let stats = db.row_cache().unwrap().stats();
    assert!(stats.row_evictions > 0, "{stats:?}");
    assert!(stats.bytes_used <= budget as u64, "{stats:?}");
    let before = sstable_reads(&t);
    assert_eq!(values(&t, 1, &head(1)), vec![(0, tail[0].1.clone())]);
    assert_eq!(sstable_reads(&t), before, "the head stayed cached");
    // The evicted tail reads correctly again, from the sstables.
    assert_eq!(values(&t, 1, &slice(60, 99)), tail);
}

#[test]
fn a_read_started_before_a_flush_does_not_populate() {
    let dir = tempfile::tempdir().unwrap();
    let (db, t) = open_with_cache(dir.path(), 8 << 20);
    write(&db, &t, 1, 1, "a", 10);
    db.flush("ks", "t").unwrap();
    let old = t.snapshot();
    write(&db, &t, 1, 2, "b", 20);
    db.flush("ks", "t").unwrap();
    // The old snapshot still sees both rows (one in its memtable), and populates nothing.
    let all = ReadCommand::all(now(), Wait::Allowed);
    assert_eq!(
        old.read(&pk(1), &all).unwrap().map(|p| p.rows.len()),
        Some(2)
    );
    let stats = db.row_cache().unwrap().stats();
    assert!(stats.mispopulations >= 1, "{stats:?}");
    assert_eq!(stats.partitions, 0, "{stats:?}");
    assert_eq!(values(&t, 1, &all).len(), 2);
    assert_eq!(values(&t, 1, &all).len(), 2);
    assert_eq!(db.row_cache().unwrap().stats().partitions, 1);
}

#[test]
fn truncate_leaves_nothing_cached() {
    let dir = tempfile::tempdir().unwrap();
    let (db, t) = open_with_cache(dir.path(), 8 << 20);
    write(&db, &t, 1, 1, "a", 10);
    db.flush("ks", "t").unwrap();
    assert_eq!(
        values(&t, 1, &ReadCommand::all(now(), Wait::Allowed)).len(),
        1
    );
    assert_eq!(db.row_cache().unwrap().stats().partitions, 1);
    let t2 = db.truncate_table("ks", "t").unwrap();
    assert_eq!(
        values(&t2, 1, &ReadCommand::all(now(), Wait::Allowed)).len(),
        0
    );
    let stats = db.row_cache().unwrap().stats();
    assert!(stats.partition_removals >= 1, "{stats:?}");
}

/// Readers, a writer, flushes, compactions and eviction at once (in the spirit of ScyllaDB's
/// `row_cache_stress_test`): every write sets all rows of a partition to one version, so a
/// read must see every row at one version (all of a write or none of it), never older than
/// the last write acknowledged before the read began (no stale row).
#[test]
fn concurrent_reads_writes_flushes_and_eviction_see_whole_writes() {
    stress(24, 24 << 10);
}

/// The stress test with partitions wider than a flush merges per lock hold
/// ([`cairn_engine::cache::MERGE_BATCH`]), so flushes merge them in several batches, readers
/// and eviction running in between: still all of a write or none.
#[test]
fn wide_partitions_merged_row_batch_by_batch_still_read_as_whole_writes() {
    const ROWS: i32 = 200;
    assert!(ROWS as usize > 2 * cairn_engine::cache::MERGE_BATCH);
    stress(ROWS, 128 << 10);
}

/// `PARTITIONS` partitions of `ROWS` rows rewritten `VERSIONS` times under a cache of `budget`
/// bytes, while two readers check every read.
fn stress(rows: i32, budget: usize) {
    use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
    const PARTITIONS: i32 = 4;
    const VERSIONS: i64 = 150;
    let dir = tempfile::tempdir().unwrap();
    let (db, t) = open_with_cache(dir.path(), budget);
    let db = Arc::new(db);
    let acked: Arc<Vec<AtomicI64>> = Arc::new((0..PARTITIONS).map(|_| AtomicI64::new(0)).collect());
    let done = Arc::new(AtomicBool::new(false));
    let write_version = |db: &Database, t: &Table, a: i32, v: i64| {
        let mut update = insert(0, &format!("v{v}"), v);
        for b in 1..rows {
            update.merge(insert(b, &format!("v{v}"), v));
        }
        db.apply(
            vec![Mutation {
                table: t.schema().id,
                key: pk(a),
                update,
            }],
            Wait::Allowed,
        )
        .unwrap();
    };
    for a in 0..PARTITIONS {
        write_version(&db, &t, a, 0);
    }
    std::thread::scope(|s| {
        s.spawn(|| {
            for v in 1..=VERSIONS {
                for a in 0..PARTITIONS {
                    write_version(&db, &t, a, v);
                    acked[a as usize].store(v, Ordering::SeqCst);
                }
                if v % 10 == 0 {
                    db.flush("ks", "t").unwrap();
                }
            }
            done.store(true, Ordering::SeqCst);
        });
        for r in 0..2 {
            let (t, acked, done) = (Arc::clone(&t), Arc::clone(&acked), Arc::clone(&done));
            s.spawn(move || {
                let mut i = 0u32;
                while !done.load(Ordering::SeqCst) || i < 50 {
                    i += 1;
                    let a = ((i + r) % PARTITIONS as u32) as i32;
                    let floor = acked[a as usize].load(Ordering::SeqCst);
                    let (cmd, want) = match i % 4 {
                        0 => (ReadCommand::all(now(), Wait::Allowed), rows as usize),
                        1 => (head(3), 3),
                        2 => {
                            let mut c = head(5);
                            c.reversed = true;
                            (c, 5)
                        }
                        _ => (slice(5, 14), 10),
                    };
                    let got = values(&t, a, &cmd);
                    assert_eq!(got.len(), want, "partition {a}: {got:?}");
                    let first = got[0].1.clone();
                    assert!(
                        got.iter().all(|(_, v)| *v == first),
                        "a partial write: {got:?}"
                    );
                    let v: i64 = String::from_utf8_lossy(&first[1..]).parse().unwrap();
                    assert!(
                        v >= floor,
                        "stale: version {v} read after {floor} was acknowledged"
                    );
                }
            });
        }
    });
    let stats = db.row_cache().unwrap().stats();
    eprintln!("{stats:?}");
    assert!(stats.row_evictions > 0 && stats.row_hits > 0, "{stats:?}");
    assert!(stats.bytes_used <= stats.bytes_total, "{stats:?}");
}

#[test]
fn a_flush_merges_a_wide_cached_partition_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (db, t) = open_with_cache(dir.path(), 8 << 20);
    let rows = 3 * cairn_engine::cache::MERGE_BATCH as i32 + 5;
    for b in 0..rows {
        write(&db, &t, 1, b, "old", 10);
    }
    db.flush("ks", "t").unwrap();
    let all = ReadCommand::all(now(), Wait::Allowed);
    assert_eq!(values(&t, 1, &all).len(), rows as usize);
    let before = db.row_cache().unwrap().stats();
    for b in 0..rows {
        write(&db, &t, 1, b, "new", 11);
    }
    db.flush("ks", "t").unwrap();
    let after = db.row_cache().unwrap().stats();
    assert_eq!(after.partition_merges - before.partition_merges, 1);
    assert_eq!(
        after.rows_merged_from_memtable - before.rows_merged_from_memtable,
        rows as u64
    );
    // Every row merged in: the next read is served from the cache, all of it new.
    let reads = sstable_reads(&t);
    let got = values(&t, 1, &all);
    assert_eq!(sstable_reads(&t), reads);
    assert_eq!(got.len(), rows as usize);
    assert!(got.iter().all(|(_, v)| v == b"new"), "{got:?}");
}

#[test]
fn sstables_per_read_counts_what_a_miss_read_and_nothing_for_a_hit() {
    let dir = tempfile::tempdir().unwrap();
    let (db, t) = open_with_cache(dir.path(), 8 << 20);
    // Partition 1 in two sstables, partition 2 in none.
    write(&db, &t, 1, 0, "a", 10);
    db.flush("ks", "t").unwrap();
    write(&db, &t, 1, 1, "b", 11);
    db.flush("ks", "t").unwrap();
    let all = ReadCommand::all(now(), Wait::Allowed);
    let recorded = |t: &Table| t.stats().unwrap().sstables_per_read;
    assert_eq!(values(&t, 1, &all).len(), 2);
    let miss = recorded(&t);
    assert_eq!((miss.count(), miss.max()), (1, 2), "{miss:?}");
    assert_eq!(values(&t, 1, &all).len(), 2);
    let hit = recorded(&t);
    assert_eq!((hit.count(), hit.max(), hit.sum), (2, 2, 2), "{hit:?}");
    assert!(values(&t, 2, &all).is_empty());
    let absent = recorded(&t);
    assert_eq!((absent.count(), absent.sum), (3, 2), "{absent:?}");
}

/// Seed 004's workload in small: rows prepended to a partition, flushed again and again, the
/// partition's head read with `LIMIT 1` between flushes, in a cache far smaller than the
/// partition. Eviction must take the least recently used rows (the old tail) and leave the
/// head cached: the head reads keep hitting, and a read populates only what it returned —
/// never the whole partition (which would evict as much again, every read).
#[test]
fn head_reads_of_a_growing_partition_keep_hitting_under_eviction() {
    let dir = tempfile::tempdir().unwrap();
    let budget = 64 << 10;
    let (db, t) = open_with_cache(dir.path(), budget);
    let cache = Arc::clone(db.row_cache().unwrap());
    let mut next = 1_000_000;
    let value = "a value of some forty bytes, as a row...";
    let mut misses_late = 0;
    for round in 0..30 {
        for _ in 0..100 {
            next -= 1;
            write(&db, &t, 1, next, value, i64::from(1_000_000 - next));
        }
        db.flush("ks", "t").unwrap();
        for _ in 0..5 {
            let before = cache.stats();
            let p = t.read(&pk(1), &head(1)).unwrap().unwrap();
            assert_eq!(p.rows.len(), 1);
            assert_eq!(
                p.rows[0].0,
                ck(next),
                "round {round}: the newest row is the head"
            );
            let after = cache.stats();
            assert!(
                after.row_insertions - before.row_insertions <= 2,
                "round {round}: one head read inserted {} rows",
                after.row_insertions - before.row_insertions
            );
            assert!(after.bytes_used <= budget as u64);
            if round >= 10 {
                misses_late += after.reads_with_misses - before.reads_with_misses;
            }
        }
    }
    let stats = cache.stats();
    assert!(
        stats.row_evictions > 0,
        "the partition outgrew the cache: {stats:?}"
    );
    assert!(
        misses_late <= 2,
        "head reads missed {misses_late} times: {stats:?}"
    );
}
