//! Crash tests for snapshots and `refresh`: a child process takes snapshots under write load,
//! or loads uploaded sstables, and the parent SIGKILLs it at random instants, then reopens
//! the database and checks that
//! - every snapshot directory is complete (its manifest lists sstables whose every component
//!   is there and verifies), every acknowledged snapshot exists, and no staging leftover
//!   survives startup;
//! - every refresh loaded all of its sstables or none (and then left `upload/` whole), every
//!   acknowledged refresh loaded all, and no transaction log or uncommitted file remains.
//!
//! The child is this same test binary, re-run with an environment variable set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::*;
use cairn_engine::model::{Mutation, PartitionPos, Token};
use cairn_engine::snapshot::manifest::Manifest;
use cairn_engine::snapshot::{SnapshotOptions, SNAPSHOTS_DIR, UPLOAD_DIR};
use cairn_engine::sstable::format::{component_path, Component};
use cairn_engine::sstable::reader::SSTable;
use cairn_engine::{Database, DatabaseConfig, ReadCommand, Wait};
use rand::{Rng, SeedableRng};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::{Duration, Instant};

const SNAPSHOT_CHILD: &str = "CAIRN_CRASH_SNAPSHOT_CHILD";
const REFRESH_CHILD: &str = "CAIRN_CRASH_REFRESH_CHILD";

fn config(dir: &Path) -> DatabaseConfig {
    let mut c = DatabaseConfig::new(dir);
    c.commitlog_segment_size = 1 << 20;
    c.compaction.autocompaction = false;
    c
}

fn write(db: &Database, table: &str, keys: std::ops::Range<i32>, tag: &str) {
    let id = db.table("ks", table).unwrap().schema().id;
    for a in keys {
        db.apply(
            vec![Mutation {
                table: id,
                key: pk(a),
                update: insert(a % 7, &format!("{tag}-{}", "x".repeat(40)), 1000),
            }],
            Wait::Allowed,
        )
        .unwrap();
    }
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").unwrap();
    out.flush().unwrap();
}

/// The child's stdout, line by line, on a channel.
fn lines_of(stdout: std::process::ChildStdout) -> Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Reads lines until one starts with `want` (or the child is silent for 30 s).
fn wait_for(lines: &Receiver<String>, want: &str, seen: &mut Vec<String>) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while let Ok(line) = lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        let found = line.starts_with(want);
        seen.push(line);
        if found {
            return;
        }
    }
}

/// Lets `completed` operations finish (their `done <name> <µs>` lines give how long one
/// takes), then kills the child at a random instant of the next one — so kills land inside
/// operations however fast or slow the machine is.
fn kill_inside_next(
    child: &mut std::process::Child,
    lines: &Receiver<String>,
    completed: usize,
    rng: &mut impl Rng,
) -> Vec<String> {
    let mut seen = Vec::new();
    let mut longest = 1;
    for _ in 0..completed {
        wait_for(lines, "done ", &mut seen);
        if let Some(us) = seen
            .last()
            .and_then(|l| l.split(' ').nth(2))
            .and_then(|us| us.parse::<u64>().ok())
        {
            longest = longest.max(us);
        }
    }
    wait_for(lines, "start ", &mut seen);
    std::thread::sleep(Duration::from_micros(rng.gen_range(0..longest)));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    seen.extend(lines.try_iter());
    seen
}

/// Runs in the child: snapshots `s<round>-<i>` of a table written to all the while.
#[test]
fn crash_snapshot_child() {
    let Ok(spec) = std::env::var(SNAPSHOT_CHILD) else {
        return;
    };
    let (dir, round) = spec.split_once(':').unwrap();
    let db = Arc::new(Database::open(config(Path::new(dir))).unwrap());
    let t = match db.table("ks", "t") {
        Some(t) => t,
        None => db.create_table(kv_schema()).unwrap(),
    };
    let writer = Arc::clone(&db);
    std::thread::spawn(move || {
        for i in 0.. {
            write(&writer, "t", i * 50..i * 50 + 50, "w");
            if i % 4 == 0 {
                writer.flush("ks", "t").unwrap();
            }
        }
    });
    for i in 0.. {
        let tag = format!("s{round}-{i}");
        say(&format!("start {tag}"));
        let began = Instant::now();
        db.snapshot(std::slice::from_ref(&t), &tag, &SnapshotOptions::default())
            .unwrap();
        say(&format!("done {tag} {}", began.elapsed().as_micros()));
    }
}

/// Checks one snapshot directory is complete: its manifest lists exactly its sstables, each
/// with every component, each opening and verifying.
fn check_complete(snapshot: &Path) {
    let text = std::fs::read_to_string(snapshot.join("manifest.json"))
        .unwrap_or_else(|e| panic!("{}: no manifest: {e}", snapshot.display()));
    let manifest = Manifest::parse(&text).unwrap();
    let mut gens: Vec<u64> = manifest
        .files
        .iter()
        .map(|f| {
            f.strip_prefix("ca-")
                .unwrap()
                .split('-')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    gens.sort_unstable();
    let mut on_disk: Vec<u64> = std::fs::read_dir(snapshot)
        .unwrap()
        .filter_map(|e| {
            let n = e.unwrap().file_name().to_string_lossy().into_owned();
            n.strip_prefix("ca-")?.split('-').next()?.parse().ok()
        })
        .collect();
    on_disk.sort_unstable();
    on_disk.dedup();
    assert_eq!(gens, on_disk, "{}", snapshot.display());
    for g in gens {
        for c in Component::ALL {
            assert!(
                component_path(snapshot, g, c).exists(),
                "{} {g} {c:?}",
                snapshot.display()
            );
        }
        let s = SSTable::open(snapshot, g, Default::default()).unwrap();
        s.verify(1 << 20).unwrap();
    }
}

#[test]
fn snapshots_are_complete_or_absent_after_sigkill() {
    if std::env::var(SNAPSHOT_CHILD).is_ok() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(21);
    let mut acknowledged = Vec::new();
    let mut interrupted = 0;
    let mut round = 0;
    // Rounds until a few kills have landed inside a snapshot (each round kills once).
    while (interrupted < 3 && round < 40) || round < 6 {
        let (mut child, stdout) = spawn_crash_child(
            "crash_snapshot::crash_snapshot_child",
            SNAPSHOT_CHILD,
            dir.path(),
            round,
        );
        let lines = lines_of(stdout);
        let completed = rng.gen_range(1..4);
        let seen = kill_inside_next(&mut child, &lines, completed, &mut rng);
        let started: Vec<&str> = seen
            .iter()
            .filter_map(|l| l.strip_prefix("start "))
            .collect();
        let done: Vec<&str> = seen
            .iter()
            .filter_map(|l| l.strip_prefix("done ")?.split(' ').next())
            .collect();
        acknowledged.extend(done.iter().map(|s| s.to_string()));
        let table_dir = std::fs::read_dir(dir.path().join("data").join("ks"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .next()
            .unwrap();
        let root = table_dir.join(SNAPSHOTS_DIR);
        let staging = std::fs::read_dir(&root)
            .map(|rd| {
                rd.filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .file_name()
                        .to_string_lossy()
                        .starts_with('.')
                })
                .count()
            })
            .unwrap_or(0);
        if staging > 0 || started.len() > done.len() {
            interrupted += 1;
        }

        let db = Database::open(config(dir.path())).unwrap();
        let listed: Vec<String> = db.list_snapshots().into_iter().map(|d| d.tag).collect();
        for entry in std::fs::read_dir(&root).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            assert!(!name.starts_with('.'), "round {round}: leftover {name}");
            check_complete(&entry.path());
            assert!(listed.contains(&name), "round {round}: {name} not listed");
        }
        for tag in &acknowledged {
            assert!(
                root.join(tag).is_dir(),
                "round {round}: acknowledged snapshot {tag} lost"
            );
        }
        drop(db);
        round += 1;
    }
    assert!(
        interrupted >= 3,
        "only {interrupted} kills interrupted a snapshot in {round} rounds"
    );
    eprintln!("{interrupted} of {round} kills interrupted a snapshot");
}

/// Runs in the child: each step writes a fresh source table in three flushes, snapshots it,
/// copies the snapshot into ks.dst's `upload/` and refreshes ks.dst.
#[test]
fn crash_refresh_child() {
    let Ok(spec) = std::env::var(REFRESH_CHILD) else {
        return;
    };
    let (dir, round) = spec.split_once(':').unwrap();
    let round: i32 = round.parse().unwrap();
    let db = Database::open(config(Path::new(dir))).unwrap();
    if db.table("ks", "dst").is_none() {
        let mut s = kv_schema();
        s.name = "dst".into();
        db.create_table(s).unwrap();
    }
    let dst = db.table("ks", "dst").unwrap();
    for step in 0.. {
        let name = format!("src{round}_{step}");
        let mut s = kv_schema();
        s.name = name.clone();
        let src = db.create_table(s).unwrap();
        let base = (round * 1000 + step) * 300;
        for part in 0..3 {
            write(
                &db,
                &name,
                base + part * 100..base + part * 100 + 100,
                &name,
            );
            db.flush("ks", &name).unwrap();
        }
        db.snapshot(
            std::slice::from_ref(&src),
            "up",
            &SnapshotOptions::default(),
        )
        .unwrap();
        let snap = src.dir().join(SNAPSHOTS_DIR).join("up");
        let upload = dst.dir().join(UPLOAD_DIR);
        for e in std::fs::read_dir(&snap).unwrap() {
            let p = e.unwrap().path();
            std::fs::copy(&p, upload.join(p.file_name().unwrap())).unwrap();
        }
        say(&format!("start {base}"));
        let began = Instant::now();
        db.refresh("ks", "dst").unwrap();
        say(&format!("done {base} {}", began.elapsed().as_micros()));
    }
}

/// Rows of ks.dst with partition keys in `[base, base + 300)`.
fn loaded_rows(db: &Database, base: i32) -> usize {
    let scan = db
        .scan(
            "ks",
            "dst",
            PartitionPos::TokenStart(Token::MIN),
            None,
            ReadCommand::all(now(), Wait::Allowed),
        )
        .unwrap();
    scan.map(|p| p.unwrap())
        .filter(|p| {
            let a = i32::from_be_bytes(p.key.key[..4].try_into().unwrap());
            (base..base + 300).contains(&a)
        })
        .map(|p| p.rows.len())
        .sum()
}

#[test]
fn refresh_loads_all_or_nothing_after_sigkill() {
    if std::env::var(REFRESH_CHILD).is_ok() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(22);
    let mut interrupted = 0;
    let mut loaded_whole = 0;
    let mut round = 0;
    while (interrupted < 3 && round < 40) || round < 6 {
        let (mut child, stdout) = spawn_crash_child(
            "crash_snapshot::crash_refresh_child",
            REFRESH_CHILD,
            dir.path(),
            round as u32,
        );
        let lines = lines_of(stdout);
        let completed = rng.gen_range(1..3);
        let seen = kill_inside_next(&mut child, &lines, completed, &mut rng);
        let started: Vec<i32> = seen
            .iter()
            .filter_map(|l| l.strip_prefix("start ")?.parse().ok())
            .collect();
        let done: Vec<i32> = seen
            .iter()
            .filter_map(|l| l.strip_prefix("done ")?.split(' ').next()?.parse().ok())
            .collect();

        let db = Database::open(config(dir.path())).unwrap();
        let dst = db.table("ks", "dst").unwrap();
        let names: Vec<String> = std::fs::read_dir(dst.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            !names
                .iter()
                .any(|n| n.starts_with("txn-") || n.ends_with(".tmp")),
            "round {round}: {names:?}"
        );
        let live: Vec<u64> = dst.state().sstables.iter().map(|s| s.generation).collect();
        for n in &names {
            if let Some(g) = n
                .strip_prefix("ca-")
                .and_then(|r| r.split('-').next()?.parse::<u64>().ok())
            {
                assert!(live.contains(&g), "round {round}: {n} of no live sstable");
            }
        }
        for base in &started {
            let n = loaded_rows(&db, *base);
            if done.contains(base) {
                assert_eq!(
                    n, 300,
                    "round {round}: acknowledged refresh {base} incomplete"
                );
            } else {
                interrupted += 1;
                assert!(
                    n == 0 || n == 300,
                    "round {round}: refresh {base} half loaded: {n} rows"
                );
                if n == 300 {
                    loaded_whole += 1;
                } else {
                    // Nothing loaded: the upload is whole, and loads now.
                    let upload = dst.dir().join(UPLOAD_DIR);
                    let count = std::fs::read_dir(&upload)
                        .unwrap()
                        .filter(|e| {
                            e.as_ref()
                                .unwrap()
                                .file_name()
                                .to_string_lossy()
                                .starts_with("ca-")
                        })
                        .count();
                    assert_eq!(count, 3 * 8, "round {round}: upload of {base} damaged");
                    db.refresh("ks", "dst").unwrap();
                    assert_eq!(loaded_rows(&db, *base), 300);
                }
            }
        }
        // What a committed refresh left in upload/ would load twice; an operator removes it.
        let upload = dst.dir().join(UPLOAD_DIR);
        for e in std::fs::read_dir(&upload).unwrap() {
            std::fs::remove_file(e.unwrap().path()).unwrap();
        }
        drop(dst);
        drop(db);
        round += 1;
    }
    assert!(
        interrupted >= 3,
        "only {interrupted} kills interrupted a refresh in {round} rounds"
    );
    eprintln!(
        "{interrupted} of {round} kills interrupted a refresh ({loaded_whole} had committed)"
    );
}
