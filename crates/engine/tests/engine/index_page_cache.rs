//! The index-page cache through a real database: a point lookup on a page another lookup
//! read costs no index-page read and no index bytes; a tiny budget keeps index pages within
//! their fraction while both the fraction and the shared LRU evict them; a compacted-away
//! sstable's pages are dropped with it; with the cache off, an index fraction of 0, a
//! `BYPASS CACHE` read or a table with caching disabled, no page is cached or served.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{insert, kv_schema, now, open_with_cache, pk};
use cairn_engine::model::Mutation;
use cairn_engine::read::ReadCommand;
use cairn_engine::table::Table;
use cairn_engine::{Database, DatabaseConfig, Wait};

/// Partitions `0..n`, one row of `value_len` bytes each, flushed into one sstable.
fn load(db: &Database, t: &Table, n: i32, value_len: usize) {
    let v = "x".repeat(value_len);
    for a in 0..n {
        db.apply(
            vec![Mutation {
                table: t.schema().id,
                key: pk(a),
                update: insert(1, &v, 10),
            }],
            Wait::Allowed,
        )
        .unwrap();
    }
    db.flush("ks", "t").unwrap();
}

/// A database with an 8 MiB cache and one sstable of 20 small partitions: every key's index
/// entry is on the one page, every row in one chunk.
fn loaded(dir: &std::path::Path) -> (Database, std::sync::Arc<Table>) {
    let (db, t) = open_with_cache(dir, 8 << 20);
    load(&db, &t, 20, 10);
    (db, t)
}

/// Reads partition `a` from the sstables (not the row cache, which would serve a repeated
/// read without any sstable) with the index-page cache; returns (index pages read, query
/// bytes read) by the read.
fn read(t: &Table, a: i32) -> (u64, u64) {
    let before = t.stats().unwrap();
    let mut snapshot = t.snapshot_uncached();
    snapshot.index_cache = true;
    let p = snapshot
        .read(&pk(a), &ReadCommand::all(now(), Wait::Allowed))
        .unwrap();
    assert_eq!(p.map(|p| p.rows.len()), Some(1), "partition {a}");
    let after = t.stats().unwrap();
    (
        after.index_pages_read - before.index_pages_read,
        after.query_bytes_read - before.query_bytes_read,
    )
}

#[test]
fn a_second_lookup_on_a_cached_page_reads_no_index_page() {
    let dir = tempfile::tempdir().unwrap();
    let (db, t) = loaded(dir.path());
    let cache = db.row_cache().unwrap();
    let (pages, cold_bytes) = read(&t, 1);
    assert_eq!(pages, 1);
    let (pages, warm_bytes) = read(&t, 2);
    assert_eq!(pages, 0, "the page came from the cache");
    let index_bytes = std::fs::read_dir(t.dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("Index.db"))
        .map(|p| std::fs::metadata(p).unwrap().len())
        .unwrap();
    assert_eq!(
        cold_bytes - warm_bytes,
        index_bytes,
        "the cached page's bytes are not counted as read"
    );
    let s = cache.stats().index_pages;
    assert_eq!((s.misses, s.hits, s.pages), (1, 1, 1), "{s:?}");
    assert!(s.bytes as usize >= index_bytes as usize);
}

#[test]
fn a_tiny_budget_keeps_index_pages_within_their_fraction() {
    let dir = tempfile::tempdir().unwrap();
    let budget = 64 << 10;
    let (db, t) = open_with_cache(dir.path(), budget);
    // 3000 partitions: dozens of 4 KiB index pages, far more than 20% of 64 KiB holds.
    load(&db, &t, 3000, 10);
    let cache = db.row_cache().unwrap();
    for i in 0..600 {
        let a = (i * 7919) % 3000;
        // Through the row cache too: rows and pages compete in the one LRU.
        let p = t
            .read(&pk(a), &ReadCommand::all(now(), Wait::Allowed))
            .unwrap();
        assert_eq!(p.map(|p| p.rows.len()), Some(1));
        let s = cache.stats();
        assert!(s.index_pages.bytes as usize <= budget / 5, "{s:?}");
        assert!(s.bytes_used as usize <= budget, "{s:?}");
    }
    let s = cache.stats();
    assert!(s.index_pages.evictions > 0, "{s:?}");
    assert!(s.index_pages.pages > 0, "{s:?}");
    assert!(s.row_evictions > 0, "{s:?}");
}

#[test]
fn a_compacted_away_sstable_s_pages_are_not_served() {
    let dir = tempfile::tempdir().unwrap();
    let (db, t) = open_with_cache(dir.path(), 8 << 20);
    load(&db, &t, 20, 10);
    load(&db, &t, 20, 10);
    let cache = db.row_cache().unwrap();
    // Partition 1 is in both sstables: one page of each is cached.
    assert_eq!(read(&t, 1).0, 2);
    assert_eq!(read(&t, 2).0, 0);
    assert_eq!(cache.stats().index_pages.pages, 2);
    db.compact("ks", "t").unwrap();
    assert_eq!(t.state().sstables.len(), 1);
    // The inputs' readers are gone, and their pages with them.
    let s = cache.stats().index_pages;
    assert_eq!((s.pages, s.bytes), (0, 0), "{s:?}");
    assert_eq!(read(&t, 1).0, 1, "the new sstable's page is read from disk");
    assert_eq!(read(&t, 2).0, 0);
    // TRUNCATE drops the table's sstables, and their pages.
    drop(t);
    let t = db.truncate_table("ks", "t").unwrap();
    assert_eq!(cache.stats().index_pages.pages, 0);
    drop(t);
}

#[test]
fn with_the_cache_off_every_lookup_reads_its_page() {
    let dir = tempfile::tempdir().unwrap();
    let (db, t) = open_with_cache(dir.path(), 0);
    load(&db, &t, 20, 10);
    assert!(db.row_cache().is_none());
    assert_eq!(read(&t, 1).0, 1);
    assert_eq!(read(&t, 2).0, 1);
}

#[test]
fn an_index_fraction_of_zero_caches_rows_but_no_page() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = DatabaseConfig::new(dir.path());
    cfg.row_cache_bytes = 8 << 20;
    cfg.index_cache_fraction = 0.0;
    let db = Database::open(cfg).unwrap();
    let t = db.create_table(kv_schema()).unwrap();
    load(&db, &t, 20, 10);
    assert_eq!(read(&t, 1).0, 1);
    assert_eq!(read(&t, 2).0, 1);
    let s = db.row_cache().unwrap().stats();
    assert_eq!(s.index_pages.pages, 0, "{s:?}");
    assert!(t
        .read(&pk(3), &ReadCommand::all(now(), Wait::Allowed))
        .unwrap()
        .is_some());
    assert_eq!(db.row_cache().unwrap().stats().partitions, 1);
}

/// Reads partition `a` through the table with `cmd`; returns the index pages it read.
fn pages_read_by(t: &Table, a: i32, cmd: &ReadCommand) -> u64 {
    let before = t.stats().unwrap().index_pages_read;
    assert!(t.read(&pk(a), cmd).unwrap().is_some());
    t.stats().unwrap().index_pages_read - before
}

#[test]
fn bypass_cache_and_a_table_without_caching_use_no_page() {
    let dir = tempfile::tempdir().unwrap();
    let (db, t) = loaded(dir.path());
    let cache = db.row_cache().unwrap();
    // BYPASS CACHE: every read reads its page, and none is cached.
    let mut bypass = ReadCommand::all(now(), Wait::Allowed);
    bypass.bypass_cache = true;
    for a in 0..3 {
        assert_eq!(pages_read_by(&t, a, &bypass), 1);
    }
    assert_eq!(cache.stats().index_pages, Default::default());
    // A cached read fills the page; turning caching off drops it and stops using it.
    let all = ReadCommand::all(now(), Wait::Allowed);
    assert_eq!(pages_read_by(&t, 1, &all), 1);
    assert_eq!(cache.stats().index_pages.pages, 1);
    let mut schema = (*t.schema()).clone();
    schema
        .options
        .extra
        .push((cairn_engine::schema::CACHING_ENABLED.into(), "false".into()));
    db.alter_table(schema).unwrap();
    assert_eq!(cache.stats().index_pages.pages, 0);
    for a in 2..5 {
        assert_eq!(pages_read_by(&t, a, &all), 1);
    }
    assert_eq!(cache.stats().index_pages.pages, 0);
}
