#!/usr/bin/env python3
"""What an indexed lookup reads (issue 18's bar): on a table of 1 M rows, `SELECT … WHERE v = ?`
through a secondary index (each value matches 10 rows) against the same query as a full scan
with ALLOW FILTERING on a table without an index, on one fresh node.

    cargo build --release -p cairn
    .venv/bin/python scripts/bench/index_bar.py [--cairn target/release/cairn] [--rows 1000000]
                                                [--lookups 50]

One table `ib.t (pk int PRIMARY KEY, v int, w int)` with `v = w = pk % (rows / 10)`, indexed
on `v` (`CREATE INDEX ON ib.t (v)`), populated through the Python driver (4 processes), the
node then flushed; the scan is `WHERE w = … ALLOW FILTERING` (`w` is not indexed). Partitions read are counted from the node's metrics
(`scylla_column_family_read_latency_count` per table: single-partition reads, and
`scylla_column_family_range_scans`), and from one lookup's trace events ("Executing
single-partition query on …"); times are the client's, median of `--lookups` lookups (values
at random) and of 3 scans.
"""
import argparse
import multiprocessing
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from cassandra.cluster import Cluster
from cassandra.concurrent import execute_concurrent_with_args
from cassandra.query import SimpleStatement

sys.path.insert(0, str(Path(__file__).resolve().parent))
import side_by_side  # noqa: E402


def counters(metrics_port):
    """{(metric, table): value} for the per-table read counters."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).read().decode()
    out = {}
    for m in re.finditer(r'^scylla_column_family_(read_latency_count|range_scans)\{([^}]*)\} (\S+)$',
                         text, re.M):
        cf = re.search(r'cf="([^"]*)"', m.group(2))
        if cf:
            out[(m.group(1), cf.group(1))] = float(m.group(3))
    return out


def populate(args):
    port, lo, hi, values = args
    c = Cluster(["127.0.0.1"], port=port, protocol_version=4)
    try:
        s = c.connect()
        ins = s.prepare("INSERT INTO ib.t (pk, v, w) VALUES (?, ?, ?)")
        execute_concurrent_with_args(s, ins, ((pk, pk % values, pk % values) for pk in range(lo, hi)),
                                     concurrency=128, raise_on_first_error=True)
    finally:
        c.shutdown()


def delta(before, after):
    return {k: v - before.get(k, 0) for k, v in after.items() if v - before.get(k, 0)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cairn", default="target/release/cairn")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--lookups", type=int, default=50)
    a = ap.parse_args()
    values = a.rows // 10
    with tempfile.TemporaryDirectory() as d:
        node, port, api, metrics = side_by_side.start(a.cairn, d, "index", "")
        c = Cluster(["127.0.0.1"], port=port, protocol_version=4)
        try:
            s = c.connect()
            s.default_timeout = 600
            s.execute("CREATE KEYSPACE ib WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
            s.execute("CREATE TABLE ib.t (pk int PRIMARY KEY, v int, w int)")
            s.execute("CREATE INDEX ON ib.t (v)")
            start = time.time()
            step = a.rows // 4
            with multiprocessing.Pool(4) as pool:
                pool.map(populate, [(port, i * step, a.rows if i == 3 else (i + 1) * step, values)
                                    for i in range(4)])
            print(f"populated {a.rows} rows in {time.time() - start:.0f} s", flush=True)
            subprocess.run([a.cairn, "nodetool", "--port", str(api), "flush"], check=True)
            lookup = s.prepare("SELECT pk, v FROM ib.t WHERE v = ?")
            lookup.fetch_size = 5000
            # One traced lookup: which tables it read, partition by partition.
            traced = s.execute(lookup, (7,), trace=True)
            assert len(list(traced)) == 10
            events = [e.description for e in traced.get_query_trace(max_wait_sec=10).events]
            per_table = {}
            for e in events:
                m = re.match(r"Executing single-partition query on (\S+)", e)
                if m:
                    per_table[m.group(1)] = per_table.get(m.group(1), 0) + 1
            print(f"traced lookup: single-partition reads per table {per_table}", flush=True)
            rng = random.Random(18)
            before = counters(metrics)
            times = []
            for _ in range(a.lookups):
                v = rng.randrange(values)
                t0 = time.perf_counter()
                got = list(s.execute(lookup, (v,)))
                times.append(time.perf_counter() - t0)
                assert len(got) == 10, (v, len(got))
            reads = delta(before, counters(metrics))
            print(f"index lookup: median {statistics.median(times) * 1000:.2f} ms over {a.lookups}; "
                  f"reads per lookup { {k: v / a.lookups for k, v in reads.items()} }", flush=True)
            scan = SimpleStatement("SELECT pk, v FROM ib.t WHERE w = 7 ALLOW FILTERING", fetch_size=5000)
            before = counters(metrics)
            times = []
            for _ in range(3):
                t0 = time.perf_counter()
                got = list(s.execute(scan))
                times.append(time.perf_counter() - t0)
                assert len(got) == 10
            reads = delta(before, counters(metrics))
            print(f"full scan with ALLOW FILTERING: median {statistics.median(times) * 1000:.0f} ms over 3; "
                  f"reads per scan { {k: v / 3 for k, v in reads.items()} } (a scan reads all "
                  f"{a.rows} partitions)", flush=True)
        finally:
            c.shutdown()
            node.terminate()
            node.wait()


if __name__ == "__main__":
    main()
