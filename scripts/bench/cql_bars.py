#!/usr/bin/env python3
"""Issue 4's bars on this machine: startup time and idle RSS of a node, then server and client
CPU per single-row INSERT and SELECT from `cairn bench` in a separate process.

    cargo build --release -p cairn
    python3 scripts/bench/cql_bars.py [--cairn target/release/cairn] [--duration 30s]
                                     [--connections 1|4]

`--connections` is the number of connections the bench opens: 1 is the shape of the load
latte (the bar's tool) puts on a node by default, 4 is scylla-bench's default. Fewer
connections carry more requests per read and write, so the node makes fewer syscalls per
request; both shapes are reported in docs/benchmarks.md.

Startup = from spawning `cairn serve` on an empty data dir to the first CQL OPTIONS answered
with SUPPORTED (polled every millisecond). Idle RSS = VmRSS of the node 5 s after it started,
with no client connected. Bench outputs go to docs/results/cql-server/cql-bars-*.txt.
"""
import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The OPTIONS/SUPPORTED probe is the differential tester's (standard library only).
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "diff"))
from cqldiff.peer import cql_answers  # noqa: E402


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def cql_ready(port):
    """True when the node answers OPTIONS with SUPPORTED (native protocol v4)."""
    return cql_answers(port, timeout=0.5)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def start_node(cairn, data_dir):
    ports = [free_port() for _ in range(3)]
    t0 = time.perf_counter()
    p = subprocess.Popen(
        [cairn, "serve", "--data-dir", data_dir, "--native-port", str(ports[0]),
         "--api-port", str(ports[1]), "--metrics-port", str(ports[2])],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not cql_ready(ports[0]):
        if p.poll() is not None:
            sys.exit(f"cairn serve exited with {p.returncode}")
        time.sleep(0.001)
    return p, ports[0], ports[1], time.perf_counter() - t0


def bench(cairn, port, pid, extra, out):
    cmd = [cairn, "bench", "-nodes", f"127.0.0.1:{port}", "-concurrency", "16",
           "-server-pid", str(pid)] + extra
    print("$", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    with open(out, "w") as f:
        f.write("$ " + " ".join(cmd) + "\n" + r.stdout + r.stderr)
    if r.returncode != 0:
        sys.exit(f"bench failed:\n{r.stdout}\n{r.stderr}")
    return r.stdout


def sstables(data_dir):
    """Data files of the bench's keyspace under the node's data directory."""
    n = 0
    for root, _, files in os.walk(os.path.join(data_dir, "data", "scylla_bench")):
        n += sum(f.endswith("-Data.db") for f in files)
    return n


def flush(cairn, api_port):
    subprocess.run([cairn, "nodetool", "-p", str(api_port), "flush", "scylla_bench"],
                   check=True, capture_output=True)


def field(text, name):
    m = re.search(rf"^\s*{re.escape(name)}:\s+(\S+)", text, re.M)
    return m.group(1) if m else "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cairn", default="target/release/cairn")
    ap.add_argument("--duration", default="30s")
    ap.add_argument("--warmup", default="5s")
    ap.add_argument("--partitions", default="50000",
                    help="keys written; the default fits in the memtables, so the first "
                         "SELECT run is served from memory")
    ap.add_argument("--connections", default="1",
                    help="connections per node: 1 as latte's default, 4 as scylla-bench's")
    ap.add_argument("--out", default="docs/results/cql-server")
    a = ap.parse_args()

    starts = []
    for _ in range(5):
        with tempfile.TemporaryDirectory() as d:
            p, _, _, dt = start_node(a.cairn, d)
            starts.append(dt)
            p.terminate()
            p.wait()
    with tempfile.TemporaryDirectory() as d:
        p, port, api, dt = start_node(a.cairn, d)
        time.sleep(5)
        idle = rss_kib(p.pid)
        print(f"startup to CQL: {', '.join(f'{s:.3f}' for s in starts)} s "
              f"(median {sorted(starts)[2]:.3f} s); idle RSS {idle / 1024:.1f} MiB", flush=True)
        load = os.getloadavg()
        common = ["-partition-count", a.partitions, "-clustering-row-count", "1",
                  "-clustering-row-size", "16", "-rows-per-request", "1",
                  "-consistency-level", "one", "-warmup", a.warmup,
                  "-connection-count", a.connections]
        # Populate every key once (not measured), then the measured runs: SELECTs while every
        # row is in a memtable (served from memory, the bar's case), INSERTs (which flush), and
        # SELECTs again once the rows live in sstables (read through the page cache).
        bench(a.cairn, port, p.pid, ["-mode", "write", "-workload", "sequential"] + common,
              f"{a.out}/cql-bars-c{a.connections}-populate.txt")
        flushed = sstables(d)
        r = bench(a.cairn, port, p.pid, ["-mode", "read", "-workload", "uniform",
                                         "-duration", a.duration,
                                         "--plot", f"docs/img/cql-bars-c{a.connections}-select.png"] + common,
                  f"{a.out}/cql-bars-c{a.connections}-read.txt")
        flushed_during_reads = sstables(d) - flushed
        w = bench(a.cairn, port, p.pid, ["-mode", "write", "-workload", "uniform",
                                         "-duration", a.duration,
                                         "--plot", f"docs/img/cql-bars-c{a.connections}-insert.png"] + common,
                  f"{a.out}/cql-bars-c{a.connections}-write.txt")
        flush(a.cairn, api)
        r2 = bench(a.cairn, port, p.pid, ["-mode", "read", "-workload", "uniform",
                                          "-duration", a.duration] + common,
                   f"{a.out}/cql-bars-c{a.connections}-read-sstables.txt")
        print(f"sstables before the memory-served SELECTs: {flushed} "
              f"(flushed during them: {flushed_during_reads}); "
              f"before the sstable SELECTs: {sstables(d)}")
        rss_after = rss_kib(p.pid)
        p.terminate()
        p.wait()
    print(f"load average before the runs: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{a.connections} connection(s), concurrency 16")
    print("| op | ops/s | server µs CPU/op | client µs CPU/op | p50 | p99 | p99.9 |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, t in (("INSERT", w), ("SELECT (memtable)", r), ("SELECT (sstables, page cache)", r2)):
        print(f"| {name} | {field(t, 'Operations/s')} | {field(t, 'Server CPU')} "
              f"| {field(t, 'Client CPU')} | {field(t, 'median')} | {field(t, '99th')} "
              f"| {field(t, '99.9th')} |")
    print(f"idle RSS {idle / 1024:.1f} MiB; RSS after the runs {rss_after / 1024:.1f} MiB; "
          f"startup median {sorted(starts)[2]:.3f} s")


if __name__ == "__main__":
    main()
