//! `cairn bench` against a live `cairn serve`: short runs of every mode and workload, their
//! counts checked, and `-validate-data` catching a value changed behind its back.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_cairn");

/// A `cairn serve` on free loopback ports; killed on drop.
struct Node {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Node {
    fn start() -> Node {
        let dir = tempfile::tempdir().unwrap();
        // Held together so the three ports differ; released just before the node binds them.
        let socks: Vec<TcpListener> = (0..3)
            .map(|_| TcpListener::bind("127.0.0.1:0").unwrap())
            .collect();
        let ports: Vec<u16> = socks
            .iter()
            .map(|s| s.local_addr().unwrap().port())
            .collect();
        drop(socks);
        let child = Command::new(BIN)
            .args(["serve", "--data-dir"])
            .arg(dir.path())
            .args(["--native-port", &ports[0].to_string()])
            .args(["--api-port", &ports[1].to_string()])
            .args(["--metrics-port", &ports[2].to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let node = Node {
            child,
            port: ports[0],
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", node.port)).is_err() {
            assert!(Instant::now() < deadline, "the node did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        node
    }

    /// Runs `cairn bench` with scylla-bench's single-dash flags; (exit success, stdout,
    /// stderr).
    fn bench(&self, args: &str) -> (bool, String, String) {
        let out = Command::new(BIN)
            .arg("bench")
            .args(["-nodes", &format!("127.0.0.1:{}", self.port)])
            .args(args.split_whitespace())
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// A bench run that must succeed without errors; its "Results" figures.
    fn ok(&self, args: &str) -> Results {
        let (ok, out, err) = self.bench(args);
        assert!(ok, "cairn bench {args} failed:\n{out}\n{err}");
        let r = Results::parse(&out);
        assert_eq!(r.errors, 0, "cairn bench {args}:\n{out}\n{err}");
        assert!(out.contains("\nClient CPU:\t "), "{out}");
        r
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug)]
struct Results {
    ops: u64,
    rows: u64,
    errors: u64,
}

impl Results {
    fn parse(out: &str) -> Results {
        let field = |k: &str| -> u64 {
            let tail = out
                .split_once("\nResults\n")
                .unwrap_or_else(|| panic!("no Results in:\n{out}"))
                .1;
            let line = tail
                .lines()
                .find(|l| l.starts_with(k))
                .unwrap_or_else(|| panic!("no {k} in:\n{out}"));
            line.rsplit('\t').next().unwrap().trim().parse().unwrap()
        };
        Results {
            ops: field("Total ops:"),
            rows: field("Total rows:"),
            errors: field("Total errors:"),
        }
    }
}

/// The session the corruption is made through: the same driver the bench uses.
fn overwrite_value(port: u16, pk: i64, ck: i64) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let s = scylla::client::session_builder::SessionBuilder::new()
            .known_node(format!("127.0.0.1:{port}"))
            .build()
            .await
            .unwrap();
        s.query_unpaged(
            "UPDATE scylla_bench.test SET v = 0x0102 WHERE pk = ? AND ck = ?",
            (pk, ck),
        )
        .await
        .unwrap();
    });
}

#[test]
fn every_mode_and_workload_runs_and_validate_data_catches_corruption() {
    assert!(Path::new(BIN).exists());
    let node = Node::start();
    let common = "-partition-count 40 -clustering-row-count 5 -clustering-row-size uniform:10..40 -concurrency 4 -connection-count 2";

    // Sequential writes visit every row once; reads check every value.
    let w = node.ok(&format!(
        "-mode write -workload sequential {common} -validate-data"
    ));
    assert_eq!((w.ops, w.rows), (200, 200));
    let r = node.ok(&format!(
        "-mode read -workload sequential {common} -validate-data"
    ));
    assert_eq!((r.ops, r.rows), (200, 200));
    // Several rows per request: batches, and reads of a range, IN and upper-bound shapes.
    let w = node.ok(&format!(
        "-mode write -workload sequential {common} -rows-per-request 5 -validate-data"
    ));
    assert_eq!((w.ops, w.rows), (40, 200));
    for shape in [
        "",
        "-in-restriction",
        "-provide-upper-bound",
        "-no-lower-bound",
    ] {
        let r = node.ok(&format!(
            "-mode read -workload sequential {common} -rows-per-request 5 {shape} -validate-data"
        ));
        assert_eq!((r.ops, r.rows), (40, 200), "{shape}");
    }
    // Scan: every row, in token sub-ranges.
    let s = node.ok(&format!(
        "-mode scan {common} -range-count 8 -page-size 7 -validate-data"
    ));
    assert_eq!((s.ops, s.rows), (8, 200));
    // Uniform and mixed run for a duration, with and without a rate limit.
    let u = node.ok(&format!(
        "-mode read -workload uniform {common} -duration 1s -validate-data"
    ));
    assert!(u.ops > 0 && u.rows == u.ops, "{u:?}");
    let m = node.ok(&format!(
        "-mode mixed -workload uniform {common} -duration 1s -max-rate 400 -validate-data"
    ));
    assert!(m.ops > 0, "{m:?}");

    // -validate-data notices one value changed behind the bench's back.
    overwrite_value(node.port, 3, 2);
    let (_, out, err) = node.bench(&format!(
        "-mode read -workload sequential {common} -validate-data"
    ));
    let r = Results::parse(&out);
    assert_eq!((r.ops, r.errors), (199, 1), "{out}");
    assert!(
        err.contains("data corruption in pk(3), ck(2): 2 bytes read"),
        "{err}"
    );

    // Seed 003's write:delete mix reports each kind apart.
    let (ok, out, _) = node.bench(&format!(
        "-mode mixed -workload uniform {common} -duration 1s -mixed-ratio write=4,delete=1"
    ));
    assert!(ok && out.contains("Latency (delete):"), "{out}");

    // Sequential deletes remove every row: reads then find nothing.
    let d = node.ok(&format!("-mode delete -workload sequential {common}"));
    assert_eq!(d.ops, 200);
    let r = node.ok(&format!("-mode read -workload sequential {common}"));
    assert_eq!((r.ops, r.rows), (200, 0));

    // Time series: a rate-limited writer, then reads of what it wrote.
    let (ok, out, err) = node.bench(&format!(
        "-mode write -workload timeseries {common} -max-rate 200 -duration 1s -validate-data"
    ));
    assert!(ok, "{out}\n{err}");
    let start = out
        .lines()
        .find_map(|l| l.strip_prefix("Start timestamp:\t "))
        .unwrap()
        .trim()
        .to_string();
    let r = node.ok(&format!(
        "-mode read -workload timeseries {common} -duration 1s -write-rate 200 -start-timestamp {start} -validate-data"
    ));
    assert!(r.ops > 0, "{r:?}");
}

#[test]
fn a_run_whose_node_dies_stops_with_an_error() {
    let mut node = Node::start();
    let bench = Command::new(BIN)
        .arg("bench")
        .args(["-nodes", &format!("127.0.0.1:{}", node.port)])
        .args(
            "-mode write -workload uniform -partition-count 1000 -concurrency 4 -duration 60s"
                .split_whitespace(),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    node.child.kill().unwrap();
    node.child.wait().unwrap();
    let out = bench.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // Without the stop, the workers would fail operations in a tight loop until -duration
    // and the run would end with status 0.
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("every connection to the nodes is closed"),
        "{err}"
    );
}
