//! The reader suite of the data-source seam (`cairn_engine::read::source`): one set of
//! data-driven cases, `testdata/reader_suite.txt`, run against every implementation of the
//! seam — a memtable, an sstable, the merged set of a memtable and several sstables, and the
//! row cache in front of that set (with a roomy budget, and one so small it evicts all the
//! time) — every read twice, so the cache answers once from the sources and once from itself.
//!
//! A case writes to numbered sources (`src=0` is the merged set's memtable, `src=N` its N-th
//! sstable; the single-source implementations receive every write), then reads through the
//! seam and compares what a reader sees — the seam's data, merged and made live by the read
//! path's own steps — with the expected lines. `REWRITE=1` regenerates the expected lines.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{ck, pk};
use bytes::Bytes;
use cairn_engine::cache::source::CachedSource;
use cairn_engine::cache::CacheTracker;
use cairn_engine::memtable::Memtable;
use cairn_engine::metrics::{IoCounters, ReadKind};
use cairn_engine::model::{
    Cell, CellCounts, ClusteringRange, ColumnData, DecoratedKey, DeletionTime, LivenessInfo,
    Partition, PartitionPos, RangeTombstone, Row, Slice, Token,
};
use cairn_engine::read::live::live_partition;
use cairn_engine::read::merge::MergedPartition;
use cairn_engine::read::source::PartitionSource;
use cairn_engine::read::{live_of, PartitionResult, ReadCommand, Snapshot};
use cairn_engine::schema::compression::CompressionParams;
use cairn_engine::sstable::reader::SSTable;
use cairn_engine::sstable::writer::{SSTableWriter, WriterOptions};
use cairn_engine::Wait;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

const TESTDATA: &str = "tests/engine/testdata/reader_suite.txt";

/// "Now" of every read: fixed, so TTL cases are deterministic.
const NOW: u32 = 1_000_000;

/// One case: writes per source, then reads with their expected output.
struct Case {
    name: String,
    writes: BTreeMap<u32, Vec<(DecoratedKey, Partition)>>,
    reads: Vec<(String, Vec<String>)>,
}

fn parse(text: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut cur: Option<Case> = None;
    for line in text.lines() {
        let line = line.trim_end();
        if line.starts_with('#')
            || (line.is_empty() && cur.as_ref().is_none_or(|c| c.reads.is_empty()))
        {
            continue;
        }
        if let Some(name) = line.strip_prefix("case ") {
            cur = Some(Case {
                name: name.to_string(),
                writes: BTreeMap::new(),
                reads: Vec::new(),
            });
        } else if line == "end" {
            cases.extend(cur.take());
        } else if let Some(cmd) = line.strip_prefix("> ") {
            let c = cur.as_mut().expect("a read outside a case");
            c.reads.push((cmd.to_string(), Vec::new()));
        } else {
            let c = cur.as_mut().expect("a line outside a case");
            match c.reads.last_mut() {
                Some((_, expected)) => expected.push(line.to_string()),
                None => {
                    let (src, key, p) = write_of(line);
                    c.writes.entry(src).or_default().push((key, p));
                }
            }
        }
    }
    cases
}

/// `name=value` arguments of a command line.
fn args(line: &str) -> BTreeMap<&str, &str> {
    line.split_whitespace()
        .skip(1)
        .map(|a| a.split_once('=').unwrap_or((a, "")))
        .collect()
}

fn int(a: &BTreeMap<&str, &str>, name: &str) -> i64 {
    a.get(name)
        .unwrap_or_else(|| panic!("missing {name}="))
        .parse()
        .unwrap()
}

fn deletion(ts: i64) -> DeletionTime {
    DeletionTime {
        marked_at: ts,
        local_deletion_time: NOW - 10,
    }
}

/// Column ids: 2 is the regular column `v`, 3 the static column `s`.
fn cell_row(a: &BTreeMap<&str, &str>, column: u32, marker: bool) -> Row {
    let ts = int(a, "ts");
    let value = Bytes::copy_from_slice(a.get("v").copied().unwrap_or("").as_bytes());
    let ttl: Option<u32> = a.get("ttl").map(|t| t.parse().unwrap());
    let (cell, liveness) = match ttl {
        Some(ttl) => (
            Cell::expiring(ts, ttl, NOW - 100, value),
            LivenessInfo::expiring(ts, ttl, NOW - 100),
        ),
        None => (Cell::live(ts, value), LivenessInfo::live(ts)),
    };
    Row {
        marker: marker.then_some(liveness),
        deletion: None,
        columns: vec![(column, ColumnData::Simple(cell))],
    }
}

fn write_of(line: &str) -> (u32, DecoratedKey, Partition) {
    let a = args(line);
    let src = u32::try_from(int(&a, "src")).unwrap();
    let key = pk(i32::try_from(int(&a, "pk")).unwrap());
    let ts = || int(&a, "ts");
    let ckey = || ck(i32::try_from(int(&a, "ck")).unwrap());
    let mut p = Partition::default();
    match line.split_whitespace().next().unwrap_or("") {
        "insert" => {
            p.rows.insert(ckey(), cell_row(&a, 2, true));
        }
        "update" => {
            p.rows.insert(ckey(), cell_row(&a, 2, false));
        }
        "fill" => {
            for b in int(&a, "from")..=int(&a, "to") {
                let mut row = cell_row(&a, 2, true);
                if let Some((_, ColumnData::Simple(c))) = row.columns.first_mut() {
                    c.value = Bytes::from(format!("{}{b}", a.get("v").unwrap_or(&"")));
                }
                p.rows.insert(ck(i32::try_from(b).unwrap()), row);
            }
        }
        "static" => p.static_row = Some(cell_row(&a, 3, false)),
        "del-cell" => {
            p.rows.insert(
                ckey(),
                Row {
                    marker: None,
                    deletion: None,
                    columns: vec![(2, ColumnData::Simple(Cell::tombstone(ts(), NOW - 10)))],
                },
            );
        }
        "del-row" => {
            p.rows.insert(
                ckey(),
                Row {
                    deletion: Some(deletion(ts())),
                    ..Row::default()
                },
            );
        }
        "del-part" => p.deletion = Some(deletion(ts())),
        "del-range" => {
            let (lo, hi) = (ck(int(&a, "from") as i32), ck(int(&a, "to") as i32));
            p.range_tombstones.push(RangeTombstone {
                range: ClusteringRange::from_bounds(Some((&lo.0, true)), Some((&hi.0, true))),
                deletion: deletion(ts()),
            });
        }
        other => panic!("unknown write {other:?} in {line:?}"),
    }
    (src, key, p)
}

/// The read a `> read …` or `> scan …` line asks for.
fn command(line: &str) -> ReadCommand {
    let a = args(line);
    let mut cmd = ReadCommand::all(NOW, Wait::Allowed);
    if let (Some(from), Some(to)) = (a.get("from"), a.get("to")) {
        let (lo, hi) = (ck(from.parse().unwrap()), ck(to.parse().unwrap()));
        cmd.slice = Slice::new(vec![ClusteringRange::from_bounds(
            Some((&lo.0, true)),
            Some((&hi.0, true)),
        )]);
    }
    cmd.reversed = a.contains_key("reversed");
    cmd.include_static = !a.contains_key("nostatic");
    cmd.limit = a.get("limit").map(|l| l.parse().unwrap());
    cmd
}

/// Writes partitions (applied in order, merged per key) into one sstable in `dir`.
fn sstable(dir: &Path, generation: u64, writes: &[(DecoratedKey, Partition)]) -> Arc<SSTable> {
    let mut merged: BTreeMap<DecoratedKey, Partition> = BTreeMap::new();
    for (k, p) in writes {
        merged.entry(k.clone()).or_default().merge(p.clone());
    }
    let mut opts = WriterOptions::new(CompressionParams::default());
    // Small blocks, so wide partitions are read through their clustering-block index.
    opts.column_index_size = 64;
    let io = Arc::new(IoCounters::default());
    let mut w = SSTableWriter::create(dir, generation, opts, Arc::clone(&io)).unwrap();
    for (k, p) in &merged {
        w.write_partition(k, p).unwrap();
    }
    w.finish().unwrap().unwrap();
    Arc::new(SSTable::open(dir, generation, io).unwrap())
}

fn memtable(writes: &[(DecoratedKey, Partition)]) -> Arc<Memtable> {
    let m = Arc::new(Memtable::new(1));
    for (k, p) in writes {
        m.apply(k, p.clone());
    }
    m
}

/// Every implementation of the seam, each holding the case's writes.
fn implementations(case: &Case, dir: &Path) -> Vec<(&'static str, Box<dyn PartitionSource>)> {
    let all: Vec<_> = case.writes.values().flatten().cloned().collect();
    let mut out: Vec<(&'static str, Box<dyn PartitionSource>)> = Vec::new();
    out.push(("memtable", Box::new(memtable(&all))));
    let one = dir.join("one");
    std::fs::create_dir_all(&one).unwrap();
    out.push(("sstable", Box::new(sstable(&one, 1, &all))));
    let set = dir.join("set");
    std::fs::create_dir_all(&set).unwrap();
    let snapshot = Snapshot {
        memtables: vec![memtable(case.writes.get(&0).map_or(&[], Vec::as_slice))],
        sstables: case
            .writes
            .iter()
            .filter(|(src, _)| **src > 0)
            .map(|(src, w)| sstable(&set, u64::from(*src), w))
            .collect(),
        hidden_columns: Arc::from(Vec::new()),
        strict_liveness: false,
        cache: None,
        index_cache: false,
    };
    // The row cache over the merged set: roomy, and so small that it evicts all the time.
    for (name, budget) in [("cache", 64 << 20), ("cache-evicting", 2_000)] {
        let cache = Arc::new(CacheTracker::new(budget).table());
        out.push((
            name,
            Box::new(CachedSource::new(cache, 0, snapshot.clone())),
        ));
    }
    out.push(("merged", Box::new(snapshot)));
    out
}

/// Reads through the seam: the source's data, made live by the read path's own steps.
fn read(src: &dyn PartitionSource, line: &str) -> Vec<String> {
    let cmd = command(line);
    let q = cmd.source_query();
    let live = |key: &DecoratedKey, p| {
        let mut merged = MergedPartition::new(cmd.reversed);
        merged.add(p);
        live_partition(
            key,
            merged,
            &cmd,
            Default::default(),
            &mut CellCounts::default(),
        )
        .unwrap()
    };
    let mut out = Vec::new();
    if line.starts_with("scan") {
        let mut scan = src.scan_partitions(
            &PartitionPos::TokenStart(Token::MIN),
            ReadKind::Query,
            Wait::Allowed,
        );
        while let Some(key) = scan.peek().unwrap().cloned() {
            if let Some(r) = scan.open(&q).unwrap().and_then(|p| live(&key, p)) {
                out.push(render(&r));
            }
        }
    } else {
        let key = pk(i32::try_from(int(&args(line), "pk")).unwrap());
        let hash = cairn_engine::model::token::murmur3_x64_128(&key.key, 0);
        let r = src
            .partition(&key, hash, &q)
            .unwrap()
            .and_then(|p| live(&key, p));
        out.push(r.as_ref().map_or_else(|| "(none)".to_string(), render));
    }
    out
}

/// `pk=1 s=x | 1:a 2:- …`: the static cell, then each row's key and `v` (`-` for none).
fn render(r: &PartitionResult) -> String {
    let key = i32::from_be_bytes(r.key.key.as_ref().try_into().unwrap());
    let value = |row: &Row, col: u32| {
        row.cell(col).map_or("-".to_string(), |c| {
            String::from_utf8_lossy(&c.value).into_owned()
        })
    };
    let mut s = format!("pk={key}");
    if let Some(st) = &r.static_row {
        s += &format!(" s={}", value(st, 3));
    }
    s += " |";
    for (k, row) in &r.rows {
        let b = (0..1000).find(|b| ck(*b) == *k).map_or(-1, |b| b);
        s += &format!(" {b}:{}", value(row, 2));
    }
    s
}

#[test]
fn every_source_gives_the_expected_reads() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(TESTDATA);
    let text = std::fs::read_to_string(&path).unwrap();
    let cases = parse(&text);
    assert!(cases.len() >= 10, "{} cases", cases.len());
    let rewrite = std::env::var_os("REWRITE").is_some();
    // The file's leading comment block, then each case as it is now.
    let mut rewritten: String = text
        .lines()
        .take_while(|l| l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    rewritten += "\n";
    let mut failures = Vec::new();
    for case in &cases {
        let dir = tempfile::tempdir().unwrap();
        let sources = implementations(case, dir.path());
        let mut actual_reads = Vec::new();
        for (cmd, expected) in &case.reads {
            let mut first: Option<Vec<String>> = None;
            for (name, src) in &sources {
                // Twice: a cache populates on the first read and serves the second.
                let got = read(src.as_ref(), cmd);
                assert_eq!(
                    got,
                    read(src.as_ref(), cmd),
                    "case {:?}: {name} read again",
                    case.name
                );
                if !rewrite && got != *expected {
                    failures.push(format!(
                        "case {:?}, {name}: > {cmd}\n  expected {expected:?}\n  got      {got:?}",
                        case.name
                    ));
                }
                if let Some(f) = &first {
                    assert_eq!(
                        f, &got,
                        "case {:?}: {name} differs from memtable",
                        case.name
                    );
                }
                first.get_or_insert(got);
            }
            actual_reads.push((cmd.clone(), first.unwrap_or_default()));
        }
        if rewrite {
            rewritten += &rewrite_case(&text, case, &actual_reads);
        }
    }
    if rewrite {
        std::fs::write(&path, rewritten).unwrap();
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The coordinator's view: each numbered source is one replica's whole table; a read takes
/// every replica's partition as data (`Snapshot::read_data`), reconciles them by timestamp
/// (`Partition::merge`) and keeps what is live (`read::live_of`) — the same answer as one
/// node holding every write.
#[test]
fn replicas_reconciled_give_the_expected_reads() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(TESTDATA);
    let cases = parse(&std::fs::read_to_string(&path).unwrap());
    let mut failures = Vec::new();
    let mut compared = 0;
    for case in &cases {
        let dir = tempfile::tempdir().unwrap();
        let replicas: Vec<Snapshot> = case
            .writes
            .iter()
            .map(|(src, w)| {
                let (memtables, sstables) = if *src == 0 {
                    (vec![memtable(w)], Vec::new())
                } else {
                    (Vec::new(), vec![sstable(dir.path(), u64::from(*src), w)])
                };
                Snapshot {
                    memtables,
                    sstables,
                    hidden_columns: Arc::from(Vec::new()),
                    strict_liveness: false,
                    cache: None,
                    index_cache: false,
                }
            })
            .collect();
        for (line, expected) in case.reads.iter().filter(|(l, _)| !l.starts_with("scan")) {
            let cmd = command(line);
            let key = pk(i32::try_from(int(&args(line), "pk")).unwrap());
            let mut merged: Option<Partition> = None;
            for r in &replicas {
                if let Some(p) = r.read_data(&key, &cmd).unwrap() {
                    match merged.as_mut() {
                        Some(m) => m.merge(p),
                        None => merged = Some(p),
                    }
                }
            }
            let live = merged.and_then(|m| live_of(&key, m, &cmd, Default::default()).unwrap());
            let got = vec![live.as_ref().map_or_else(|| "(none)".to_string(), render)];
            compared += 1;
            if got != *expected {
                failures.push(format!(
                    "case {:?}: > {line}\n  expected {expected:?}\n  got      {got:?}",
                    case.name
                ));
            }
        }
    }
    assert!(compared >= 20, "{compared} reads compared");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The case's text with its expected lines replaced by `reads`.
fn rewrite_case(text: &str, case: &Case, reads: &[(String, Vec<String>)]) -> String {
    let start = text.find(&format!("case {}\n", case.name)).unwrap();
    // Keep the comments above the case.
    let before: Vec<&str> = text[..start]
        .lines()
        .rev()
        .take_while(|l| l.starts_with('#'))
        .collect();
    let mut out = String::new();
    for l in before.iter().rev() {
        out += l;
        out += "\n";
    }
    let body = &text[start..];
    for line in body.lines() {
        if line.starts_with("> ") {
            break;
        }
        out += line;
        out += "\n";
    }
    for (cmd, lines) in reads {
        out += &format!("> {cmd}\n");
        for l in lines {
            out += l;
            out += "\n";
        }
    }
    out += "end\n\n";
    out
}
