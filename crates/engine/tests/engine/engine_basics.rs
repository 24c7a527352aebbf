//! Write, flush, read back, reopen: the engine end to end on a real directory.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use cairn_engine::model::{DeletionTime, Mutation, Partition, Row};
use cairn_engine::{Database, DatabaseConfig, ReadCommand, Wait};
use common::*;

fn cfg(dir: &std::path::Path) -> DatabaseConfig {
    let mut c = DatabaseConfig::new(dir);
    c.commitlog_segment_size = 1 << 20;
    c
}

fn value_of(row: &Row) -> String {
    String::from_utf8(row.cell(2).unwrap().value.to_vec()).unwrap()
}

#[test]
fn writes_survive_flush_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    let id;
    {
        let db = Database::open(cfg(dir.path())).unwrap();
        let t = db.create_table(kv_schema()).unwrap();
        id = t.schema().id;
        for a in 0..20 {
            for b in 0..50 {
                db.apply(
                    vec![Mutation {
                        table: id,
                        key: pk(a),
                        update: insert(b, &format!("v{a}-{b}"), 10),
                    }],
                    Wait::Allowed,
                )
                .unwrap();
            }
        }
        db.flush("ks", "t").unwrap();
        // Newer values in the memtable only (recovered from the commitlog after restart).
        for a in 0..20 {
            db.apply(
                vec![Mutation {
                    table: id,
                    key: pk(a),
                    update: insert(7, "new", 20),
                }],
                Wait::Allowed,
            )
            .unwrap();
        }
        let stats = db.table_stats("ks", "t").unwrap();
        assert_eq!(stats.sstable_count, 1);
        assert!(stats.flush_bytes_written > 0);
        assert!(stats.commitlog_bytes_written > 0);
    }
    let db = Database::open(cfg(dir.path())).unwrap();
    assert_eq!(db.recovery_report().mutations_replayed, 20);
    for a in 0..20 {
        let p = db
            .read("ks", "t", &pk(a), &ReadCommand::all(0, Wait::Allowed))
            .unwrap()
            .unwrap();
        assert_eq!(p.rows.len(), 50);
        assert_eq!(value_of(&p.rows[7].1), "new");
        assert_eq!(value_of(&p.rows[8].1), format!("v{a}-8"));
    }
    // Reversed with a limit.
    let mut cmd = ReadCommand::all(0, Wait::Allowed);
    cmd.reversed = true;
    cmd.limit = Some(3);
    let p = db.read("ks", "t", &pk(3), &cmd).unwrap().unwrap();
    let keys: Vec<_> = p.rows.iter().map(|(k, _)| k.clone()).collect();
    assert_eq!(keys, vec![ck(49), ck(48), ck(47)]);
    // A full scan sees every partition once, in token order.
    let all: Vec<_> = full_scan(&db).collect::<Result<_, _>>().unwrap();
    assert_eq!(all.len(), 20);
    assert!(all.windows(2).all(|w| w[0].key < w[1].key));
}

#[test]
fn tombstones_across_memtable_and_sstables() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(cfg(dir.path())).unwrap();
    let id = db.create_table(kv_schema()).unwrap().schema().id;
    for b in 0..10 {
        db.apply(
            vec![Mutation {
                table: id,
                key: pk(1),
                update: insert(b, "x", 10),
            }],
            Wait::Allowed,
        )
        .unwrap();
    }
    db.flush("ks", "t").unwrap();
    // Range tombstone over b in [2, 5), row tombstone on 7, in the memtable.
    let mut p = Partition::default();
    p.range_tombstones
        .push(cairn_engine::model::RangeTombstone {
            range: cairn_engine::model::ClusteringRange {
                start: ck(2).0,
                end: ck(5).0,
            },
            deletion: DeletionTime {
                marked_at: 11,
                local_deletion_time: 100,
            },
        });
    p.rows.insert(
        ck(7),
        Row {
            deletion: Some(DeletionTime {
                marked_at: 11,
                local_deletion_time: 100,
            }),
            ..Row::default()
        },
    );
    db.apply(
        vec![Mutation {
            table: id,
            key: pk(1),
            update: p,
        }],
        Wait::Allowed,
    )
    .unwrap();
    let rows = db
        .read("ks", "t", &pk(1), &ReadCommand::all(0, Wait::Allowed))
        .unwrap()
        .unwrap()
        .rows;
    let keys: Vec<_> = rows.iter().map(|(k, _)| k.clone()).collect();
    assert_eq!(keys, vec![ck(0), ck(1), ck(5), ck(6), ck(8), ck(9)]);
    db.flush("ks", "t").unwrap();
    // Partition tombstone, then a newer write.
    let del = Partition {
        deletion: Some(DeletionTime {
            marked_at: 15,
            local_deletion_time: 100,
        }),
        ..Partition::default()
    };
    db.apply(
        vec![Mutation {
            table: id,
            key: pk(1),
            update: del,
        }],
        Wait::Allowed,
    )
    .unwrap();
    assert!(db
        .read("ks", "t", &pk(1), &ReadCommand::all(0, Wait::Allowed))
        .unwrap()
        .is_none());
    db.apply(
        vec![Mutation {
            table: id,
            key: pk(1),
            update: insert(3, "back", 16),
        }],
        Wait::Allowed,
    )
    .unwrap();
    db.flush("ks", "t").unwrap();
    let rows = db
        .read("ks", "t", &pk(1), &ReadCommand::all(0, Wait::Allowed))
        .unwrap()
        .unwrap()
        .rows;
    assert_eq!(rows.len(), 1);
    assert_eq!(value_of(&rows[0].1), "back");
}

#[test]
fn large_partition_reads_one_block_for_one_row() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(cfg(dir.path())).unwrap();
    let id = db.create_table(kv_schema()).unwrap().schema().id;
    let value = "y".repeat(1000);
    for b in 0..5000 {
        db.apply(
            vec![Mutation {
                table: id,
                key: pk(9),
                update: insert(b, &value, 10),
            }],
            Wait::Allowed,
        )
        .unwrap();
    }
    db.flush("ks", "t").unwrap();
    let t = db.table("ks", "t").unwrap();
    let before = t.stats().unwrap();
    let mut cmd = ReadCommand::all(0, Wait::Allowed);
    cmd.slice =
        cairn_engine::model::Slice::new(vec![cairn_engine::model::ClusteringRange::prefix(
            &ck(4321).0,
        )]);
    let p = t.read(&pk(9), &cmd).unwrap().unwrap();
    assert_eq!(p.rows.len(), 1);
    let after = t.stats().unwrap();
    let chunks = after.chunks_read - before.chunks_read;
    // ~5 MB partition: the header chunk plus about one 4 KiB block.
    assert!(chunks <= 4, "read {chunks} chunks for one row");
    // Reversed full read returns all rows in reverse order.
    let mut cmd = ReadCommand::all(0, Wait::Allowed);
    cmd.reversed = true;
    let p = t.read(&pk(9), &cmd).unwrap().unwrap();
    assert_eq!(p.rows.len(), 5000);
    assert_eq!(p.rows[0].0, ck(4999));
    assert_eq!(p.rows[4999].0, ck(0));
}

#[test]
fn clustering_skip_keeps_range_tombstones_of_other_sstables() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(cfg(dir.path())).unwrap();
    let id = db.create_table(kv_schema()).unwrap().schema().id;
    // sstable 1: rows 10..20 of partition 1.
    for b in 10..20 {
        db.apply(
            vec![Mutation {
                table: id,
                key: pk(1),
                update: insert(b, "old", 10),
            }],
            Wait::Allowed,
        )
        .unwrap();
    }
    db.flush("ks", "t").unwrap();
    // sstable 2: rows 0..3 of partition 2, and a range tombstone over b in [10, 20) of partition 1.
    for b in 0..3 {
        db.apply(
            vec![Mutation {
                table: id,
                key: pk(2),
                update: insert(b, "x", 11),
            }],
            Wait::Allowed,
        )
        .unwrap();
    }
    let mut p = Partition::default();
    p.range_tombstones
        .push(cairn_engine::model::RangeTombstone {
            range: cairn_engine::model::ClusteringRange {
                start: ck(10).0,
                end: ck(20).0,
            },
            deletion: DeletionTime {
                marked_at: 12,
                local_deletion_time: 100,
            },
        });
    db.apply(
        vec![Mutation {
            table: id,
            key: pk(1),
            update: p,
        }],
        Wait::Allowed,
    )
    .unwrap();
    db.flush("ks", "t").unwrap();
    let mut cmd = ReadCommand::all(0, Wait::Allowed);
    cmd.include_static = false;
    cmd.slice = cairn_engine::model::Slice::new(vec![cairn_engine::model::ClusteringRange {
        start: ck(12).0,
        end: ck(15).0,
    }]);
    assert!(
        db.read("ks", "t", &pk(1), &cmd).unwrap().is_none(),
        "deleted rows came back"
    );
}

/// A `LIMIT` read copies only its budget of memtable rows first; when newer row tombstones in
/// an sstable shadow those rows, the read asks the memtable for the rest and still answers
/// with the first live rows. (The tombstones are recent: an sstable of tombstones all past
/// `gc_grace_seconds` may be dropped whole as fully expired — Cassandra's rule, decided while
/// no memtable holds older data — and rows written afterwards with older timestamps would
/// then be live, which is why such writes are undefined in Cassandra too. Under load, the
/// drop raced the test's writes one run in a hundred.)
#[test]
fn limited_read_past_memtable_rows_shadowed_by_newer_sstable_tombstones() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(cfg(dir.path())).unwrap();
    db.create_table(kv_schema()).unwrap();
    let id = db.table("ks", "t").unwrap().schema().id;
    let mut tombstones = Partition::default();
    for b in 0..5 {
        tombstones.rows.insert(
            ck(b),
            Row {
                deletion: Some(DeletionTime {
                    marked_at: 100,
                    local_deletion_time: now(),
                }),
                ..Row::default()
            },
        );
    }
    db.apply(
        vec![Mutation {
            table: id,
            key: pk(1),
            update: tombstones,
        }],
        Wait::Allowed,
    )
    .unwrap();
    db.flush("ks", "t").unwrap();
    for b in 0..10 {
        db.apply(
            vec![Mutation {
                table: id,
                key: pk(1),
                update: insert(b, &format!("v{b}"), 10),
            }],
            Wait::Allowed,
        )
        .unwrap();
    }
    for (limit, reversed, want) in [
        (1, false, vec![5]),
        (2, false, vec![5, 6]),
        (1, true, vec![9]),
        (6, true, vec![9, 8, 7, 6, 5]),
    ] {
        let mut cmd = ReadCommand::all(now(), Wait::Allowed);
        cmd.limit = Some(limit);
        cmd.reversed = reversed;
        let rows = db.read("ks", "t", &pk(1), &cmd).unwrap().unwrap().rows;
        let got: Vec<String> = rows.iter().map(|(_, r)| value_of(r)).collect();
        let want: Vec<String> = want.iter().map(|b| format!("v{b}")).collect();
        assert_eq!(got, want, "limit {limit}, reversed {reversed}");
    }
}
