//! Crash test: a child process writes in `batch` commitlog mode and reports every
//! acknowledged write; the parent SIGKILLs it at a random moment, reopens the database and
//! checks that every acknowledged write is readable. Twenty rounds, with flushes (and so
//! commitlog segment releases) happening in the child while it is killed.
//!
//! The child is this same test binary, re-run with `CAIRN_CRASH_CHILD` set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use cairn_engine::commitlog::SyncMode;
use cairn_engine::model::Mutation;
use cairn_engine::{Database, DatabaseConfig, ReadCommand, Wait};
use common::*;
use rand::{Rng, SeedableRng};
use std::io::{BufRead, BufReader, Write};
use std::sync::Arc;

const CHILD_ENV: &str = "CAIRN_CRASH_CHILD";

fn config(dir: &std::path::Path) -> DatabaseConfig {
    let mut c = DatabaseConfig::new(dir);
    c.commitlog_sync = SyncMode::Batch;
    c.commitlog_segment_size = 128 * 1024;
    c.memtable_flush_threshold = 64 * 1024;
    c
}

/// Runs in the child: write forever, printing `ack <a> <b>` after each acknowledged write.
#[test]
fn crash_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let (dir, round) = spec.split_once(':').unwrap();
    let round: i32 = round.parse().unwrap();
    let db = Arc::new(Database::open(config(std::path::Path::new(dir))).unwrap());
    let table = match db.table("ks", "t") {
        Some(t) => t,
        None => db.create_table(kv_schema()).unwrap(),
    };
    let id = table.schema().id;
    let out = Arc::new(std::sync::Mutex::new(std::io::stdout()));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let db = Arc::clone(&db);
            let out = Arc::clone(&out);
            std::thread::spawn(move || {
                for i in 0.. {
                    let a = round * 1000 + t;
                    let b = i;
                    db.apply(
                        vec![Mutation {
                            table: id,
                            key: pk(a),
                            update: insert(b, &format!("r{round}t{t}i{i}"), i64::from(i) + 1),
                        }],
                        Wait::Allowed,
                    )
                    .unwrap();
                    let mut o = out.lock().unwrap();
                    writeln!(o, "ack {a} {b}").unwrap();
                    o.flush().unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        let _ = t.join();
    }
}

#[test]
fn acknowledged_writes_survive_sigkill() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut acked: Vec<(i32, i32)> = Vec::new();
    for round in 0..20 {
        let (mut child, stdout) =
            spawn_crash_child("crash_sigkill::crash_child", CHILD_ENV, dir.path(), round);
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line.strip_prefix("ack ") {
                    let mut it = rest.split(' ');
                    let a: i32 = it.next().unwrap().parse().unwrap();
                    let b: i32 = it.next().unwrap().parse().unwrap();
                    got.push((a, b));
                }
            }
            got
        });
        std::thread::sleep(std::time::Duration::from_millis(rng.gen_range(100..600)));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let got = reader.join().unwrap();
        acked.extend(got);

        let db = Database::open(config(dir.path())).unwrap();
        // One read per partition, then every acknowledged row of it is checked.
        let mut by_partition: std::collections::BTreeMap<i32, Vec<i32>> = Default::default();
        for &(a, b) in &acked {
            by_partition.entry(a).or_default().push(b);
        }
        for (a, bs) in by_partition {
            let p = db
                .read("ks", "t", &pk(a), &ReadCommand::all(0, Wait::Allowed))
                .unwrap();
            let present: std::collections::HashSet<_> = p
                .map(|p| p.rows.into_iter().map(|(k, _)| k).collect())
                .unwrap_or_default();
            for b in bs {
                assert!(
                    present.contains(&ck(b)),
                    "round {round}: acknowledged write ({a}, {b}) lost"
                );
            }
        }
    }
    assert!(
        acked.len() > 100,
        "the child acknowledged too few writes ({}) to prove anything",
        acked.len()
    );
}
