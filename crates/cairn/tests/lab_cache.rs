//! `cairn lab cache` end to end on a short run: it starts its own nodes, drives them through
//! CQL and REST, and writes every output the issue names with figures that must hold whatever
//! the machine's speed (counts and budgets, never timings).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_cairn");

/// A CSV file as rows of column → value.
fn csv(path: &std::path::Path) -> Vec<HashMap<String, String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            header
                .iter()
                .zip(l.split(','))
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

fn num(row: &HashMap<String, String>, col: &str) -> f64 {
    row[col]
        .parse()
        .unwrap_or_else(|_| panic!("{col}: {:?}", row[col]))
}

#[test]
fn short_run_writes_timeline_summary_cpu_and_charts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let status = Command::new(BIN)
        .args(["lab", "cache", "--out"])
        .arg(&out)
        .args(["--secs", "6", "--invalidate-at", "3", "--rate", "1000"])
        .args(["--cache-mb", "1", "--memtable-mb", "4"])
        .args([
            "--cpu-partitions",
            "300",
            "--cpu-reads",
            "300",
            "--cpu-rounds",
            "1",
            "--cpu-sstables",
            "1,2",
        ])
        .status()
        .unwrap();
    assert!(status.success());

    let summary = csv(&out.join("cache.csv"));
    assert_eq!(summary.len(), 2);
    let (cache, nocache) = (&summary[0], &summary[1]);
    assert_eq!(cache["mode"], "cache");
    assert_eq!(nocache["mode"], "nocache");
    for m in [cache, nocache] {
        assert!(num(m, "reads") >= 10.0, "{m:?}");
        assert_eq!(num(m, "cache_limit_bytes"), 1048576.0);
        assert!(num(m, "p50_us") > 0.0 && num(m, "max_us") >= num(m, "p99_us"));
    }
    // The cache mode's head reads are served by the cache: the first read and the one after
    // the forced eviction miss, at most a few more (a read racing a flush's merge); the
    // eviction counted; the budget held.
    assert!(num(cache, "reads_with_misses_total") >= 1.0);
    assert!(num(cache, "reads_with_misses_total") < num(cache, "reads") / 2.0);
    assert!(num(cache, "misses_after_invalidate") >= 1.0);
    assert!(num(cache, "cache_bytes_max") > 0.0);
    assert!(num(cache, "cache_bytes_max") <= num(cache, "cache_limit_bytes"));
    // Without the cache every read goes to memtables and sstables, and nothing is cached.
    assert_eq!(
        num(nocache, "reads_with_misses_total"),
        num(nocache, "reads")
    );
    assert_eq!(num(nocache, "cache_bytes_max"), 0.0);

    let timeline = csv(&out.join("cache-timeline.csv"));
    assert_eq!(timeline.len(), 12);
    let events: Vec<&str> = timeline.iter().map(|r| r["event"].as_str()).collect();
    assert_eq!(events.iter().filter(|e| **e == "invalidate").count(), 2);
    assert!(timeline.iter().all(|r| num(r, "cache_bytes") <= 1048576.0));
    // The forced eviction evicted what the head reads had cached: the head's rows once a
    // flush merged them into the cache, else (a loaded machine's writers may not fill the
    // memtable in six seconds) the partition the reads made known. The summary's
    // row_evictions is the same count as the timeline's rows.
    let evicted: f64 = timeline
        .iter()
        .filter(|r| r["mode"] == "cache")
        .map(|r| num(r, "row_evictions") + num(r, "partition_evictions"))
        .sum();
    assert!(evicted >= 1.0, "{timeline:?}");
    let row_evictions: f64 = timeline
        .iter()
        .filter(|r| r["mode"] == "cache")
        .map(|r| num(r, "row_evictions"))
        .sum();
    assert_eq!(row_evictions, num(cache, "row_evictions"));

    // One comparison per sstable count, each a round of the cached table then the other.
    let cpu = csv(&out.join("cache-cpu.csv"));
    let shape: Vec<(&str, &str)> = cpu
        .iter()
        .map(|r| (r["sstables"].as_str(), r["table"].as_str()))
        .collect();
    assert_eq!(
        shape,
        [("1", "hot"), ("1", "cold"), ("2", "hot"), ("2", "cold")]
    );
    assert!(cpu.iter().all(|r| num(r, "reads") == 300.0));

    for chart in [
        "cache-latency-cache",
        "cache-latency-nocache",
        "cache-bytes",
        "cache-evictions",
        "cache-misses",
    ] {
        for ext in ["png", "svg"] {
            let f = out.join(format!("{chart}.{ext}"));
            assert!(std::fs::metadata(&f).unwrap().len() > 0, "{}", f.display());
        }
    }
    let md = std::fs::read_to_string(out.join("cache.md")).unwrap();
    assert!(md.contains("| cache |") && md.contains("| cache / sstables |"));
}
