//! Crash test for compaction: a child process writes and deletes (partition tombstones,
//! purgeable at once) while tiny memtables flush constantly and throttled compactions run;
//! the parent SIGKILLs it at random instants — most land inside a compaction — then reopens
//! and checks that
//! - every acknowledged write is there unless an acknowledged deletion covers it (nothing
//!   lost),
//! - nothing an acknowledged deletion covers is visible (nothing resurrected, even though
//!   compactions purge tombstones),
//! - no transaction log and no file of a dead sstable is left.
//!
//! The child is this same test binary, re-run with `CAIRN_CRASH_COMPACTION_CHILD` set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use cairn_engine::commitlog::SyncMode;
use cairn_engine::model::{DeletionTime, Mutation, Partition};
use cairn_engine::schema::TombstoneGcMode;
use cairn_engine::{Database, DatabaseConfig, ReadCommand, Wait};
use common::*;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

const CHILD_ENV: &str = "CAIRN_CRASH_COMPACTION_CHILD";
const PARTITIONS: i32 = 40;

fn config(dir: &std::path::Path) -> DatabaseConfig {
    let mut c = DatabaseConfig::new(dir);
    c.commitlog_sync = SyncMode::Batch;
    c.commitlog_segment_size = 256 * 1024;
    c.memtable_flush_threshold = 24 * 1024;
    c.compaction.throughput_bytes_per_sec = 4 << 20;
    c
}

/// Runs in the child: one writer, printing `send …` before and `ack …` after every
/// operation, so the parent knows the one operation that may be in flight.
#[test]
fn crash_compaction_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let (dir, round) = spec.split_once(':').unwrap();
    let round: i64 = round.parse().unwrap();
    let db = Arc::new(Database::open(config(std::path::Path::new(dir))).unwrap());
    let table = match db.table("ks", "t") {
        Some(t) => t,
        None => {
            let mut s = kv_schema();
            s.options.gc_grace_seconds = 0;
            s.options.tombstone_gc = TombstoneGcMode::Immediate;
            db.create_table(s).unwrap()
        }
    };
    let id = table.schema().id;
    // Tell the parent when a compaction starts, so that some kills land inside one whatever
    // the machine's speed (each line is one `write` of a locked stdout, so lines never mix).
    let watched = Arc::clone(&db);
    std::thread::spawn(move || {
        let mut seen = HashSet::new();
        loop {
            for job in watched.compaction().running() {
                if seen.insert(job.id) {
                    println!("compacting {}", job.id);
                }
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    let mut out = std::io::stdout();
    let mut rng = rand::rngs::StdRng::seed_from_u64(round as u64);
    for i in 0i64.. {
        let ts = round * 10_000_000 + i + 1;
        let a = rng.gen_range(0..PARTITIONS);
        let (line, update) = if i % 9 == 8 {
            (
                format!("d {a} {ts}"),
                Partition {
                    deletion: Some(DeletionTime {
                        marked_at: ts,
                        local_deletion_time: now(),
                    }),
                    ..Default::default()
                },
            )
        } else {
            let b = (i % 500) as i32;
            (
                format!("w {a} {b} {ts}"),
                insert(b, &format!("{ts}-{}", "p".repeat(60)), ts),
            )
        };
        writeln!(out, "send {line}").unwrap();
        out.flush().unwrap();
        db.apply(
            vec![Mutation {
                table: id,
                key: pk(a),
                update,
            }],
            Wait::Allowed,
        )
        .unwrap();
        writeln!(out, "ack {line}").unwrap();
        out.flush().unwrap();
    }
}

/// What the parent knows per partition.
#[derive(Default)]
struct Expect {
    /// Acknowledged row writes: clustering b → highest acknowledged timestamp.
    rows: BTreeMap<i32, i64>,
    /// Highest acknowledged deletion.
    deleted_at: i64,
    /// Highest deletion sent but maybe not applied.
    maybe_deleted_at: i64,
}

#[test]
fn compaction_survives_sigkill_without_loss_or_resurrection() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let mut expect: BTreeMap<i32, Expect> = BTreeMap::new();
    let mut interrupted = 0;
    for round in 0..12 {
        let (mut child, stdout) = spawn_crash_child(
            "crash_compaction::crash_compaction_child",
            CHILD_ENV,
            dir.path(),
            round,
        );
        let (lines_tx, lines) = std::sync::mpsc::channel::<String>();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
                if lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
        // Kill when the child is under way, not at a time since its start: on a loaded
        // machine starting it and reopening the database can take longer than a round. Odd
        // rounds kill at a random moment of the writes; even rounds a few milliseconds after
        // a compaction starts, so that some kills land inside one however slow the machine.
        let mut seen = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        let wanted = if round % 2 == 0 {
            "compacting "
        } else {
            "ack "
        };
        while let Ok(line) = lines.recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            let found = line.starts_with(wanted);
            seen.push(line);
            if found {
                break;
            }
        }
        let delay = if round % 2 == 0 { 0..15 } else { 300..1200 };
        std::thread::sleep(Duration::from_millis(rng.gen_range(delay)));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        seen.extend(lines.iter());
        for line in seen {
            let f: Vec<&str> = line.split(' ').collect();
            match f.as_slice() {
                ["ack", "w", a, b, ts] => {
                    let e = expect.entry(a.parse().unwrap()).or_default();
                    let ts: i64 = ts.parse().unwrap();
                    let slot = e.rows.entry(b.parse().unwrap()).or_default();
                    *slot = (*slot).max(ts);
                }
                ["ack", "d", a, ts] => {
                    let e = expect.entry(a.parse().unwrap()).or_default();
                    e.deleted_at = e.deleted_at.max(ts.parse().unwrap());
                }
                ["send", "d", a, ts] => {
                    let e = expect.entry(a.parse().unwrap()).or_default();
                    e.maybe_deleted_at = e.maybe_deleted_at.max(ts.parse().unwrap());
                }
                _ => {}
            }
        }

        // The parent only looks: its own compactions would race with the file checks.
        let mut cfg = config(dir.path());
        cfg.compaction.autocompaction = false;
        let db = Database::open(cfg).unwrap();
        let table = db.table("ks", "t").unwrap();
        let leftovers: Vec<String> = std::fs::read_dir(table.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("txn-") || n.ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "round {round}: {leftovers:?}");
        let live: HashSet<u64> = table
            .state()
            .sstables
            .iter()
            .map(|s| s.generation)
            .collect();
        for e in std::fs::read_dir(table.dir()).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            if let Some(g) = name
                .strip_prefix("ca-")
                .and_then(|r| r.split('-').next())
                .and_then(|g| g.parse::<u64>().ok())
            {
                assert!(
                    live.contains(&g),
                    "round {round}: file {name} of a dead sstable"
                );
            }
        }
        interrupted += db.recovery_report().compaction_logs_recovered;
        for (a, e) in &expect {
            let p = db
                .read("ks", "t", &pk(*a), &ReadCommand::all(now(), Wait::Allowed))
                .unwrap();
            let present: BTreeMap<Vec<u8>, i64> = p
                .map(|p| {
                    p.rows
                        .into_iter()
                        .map(|(k, r)| (k.0.to_vec(), r.marker.unwrap().timestamp))
                        .collect()
                })
                .unwrap_or_default();
            for (b, ts) in &e.rows {
                let key = ck(*b).0.to_vec();
                if *ts > e.deleted_at.max(e.maybe_deleted_at) {
                    assert!(
                        present.get(&key).is_some_and(|t| t >= ts),
                        "round {round}: acknowledged write ({a}, {b}) at {ts} lost"
                    );
                }
            }
            for (k, ts) in &present {
                assert!(
                    *ts > e.deleted_at,
                    "round {round}: partition {a} row {k:?} at {ts} resurrected \
                     (deleted at {})",
                    e.deleted_at
                );
            }
        }
    }
    assert!(
        expect.values().map(|e| e.rows.len()).sum::<usize>() > 100,
        "too few acknowledged writes to prove anything"
    );
    // The point of the test: some kills must have landed inside a compaction.
    assert!(interrupted > 0, "no kill interrupted a compaction");
    eprintln!("{interrupted} of 12 kills interrupted a compaction");
}
