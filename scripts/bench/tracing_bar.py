#!/usr/bin/env python3
"""What tracing costs: server CPU per request with tracing off, and with every request traced
(`nodetool settraceprobability 1`), side by side — and, with `--base`, a binary without
tracing, to show that `off` costs nothing.

    cargo build --release -p cairn
    python3 scripts/bench/tracing_bar.py [--cairn target/release/cairn] [--base OTHER_CAIRN]
                                         [--duration 15s] [--pairs 3] [--connections 4]

Nodes run side by side, each on its own data directory and ports, and `cairn bench` runs
against one at a time, reading that node's CPU (`-server-pid`):
- `base` (with `--base`): another binary, with no tracing;
- `off`: `--cairn`, trace probability 0 (the default);
- `p1`: `--cairn` with the trace probability set to 1.0 through the REST API (what
  `nodetool settraceprobability 1` sends): every request is traced and its session written to
  `system_traces`.
The shape is audit_bar.py's: single-row INSERTs and SELECTs of 16-byte rows over 50 000
partitions, concurrency 16, `--connections` connections; `--pairs` rounds of SELECT runs, then
of INSERT runs, the sides' order rotating from round to round. Prints each run, then the
medians as a table with the ratios to `off`, and the sessions `p1` traced and dropped (its
`scylla_tracing_*` counters).
"""
import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cql_bars import cql_ready, field, free_port  # noqa: E402
from tls_bar import bench, number  # noqa: E402


def start(cairn, d, name):
    port, api, metrics = free_port(), free_port(), free_port()
    node = subprocess.Popen(
        [cairn, "serve", "--data-dir", f"{d}/{name}",
         "--native-port", str(port), "--api-port", str(api), "--metrics-port", str(metrics)],
        stdout=open(Path(d, f"{name}.log"), "w"), stderr=subprocess.STDOUT)
    while not cql_ready(port):
        if node.poll() is not None:
            sys.exit(f"cairn serve ({name}) exited with {node.returncode}")
        time.sleep(0.01)
    return node, port, api, metrics


def set_probability(api, p):
    url = f"http://127.0.0.1:{api}/storage_service/trace_probability?probability={p}"
    urllib.request.urlopen(urllib.request.Request(url, method="POST"), timeout=10).read()


def counter(metrics, name):
    text = urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=10).read()
    m = re.search(rf"^scylla_{name}\{{[^}}]*\}} (\d+)", text.decode(), re.M)
    return int(m.group(1)) if m else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cairn", default="target/release/cairn")
    ap.add_argument("--base", help="a cairn binary without tracing, run as `base`")
    ap.add_argument("--duration", default="15s")
    ap.add_argument("--warmup", default="3s")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--connections", default="4")
    a = ap.parse_args()
    sides = [("off", a.cairn), ("p1", a.cairn)]
    if a.base:
        sides.insert(0, ("base", a.base))
    common = ["-partition-count", "50000", "-clustering-row-count", "1",
              "-clustering-row-size", "16", "-rows-per-request", "1",
              "-consistency-level", "one", "-connection-count", a.connections]
    runs = {}
    with tempfile.TemporaryDirectory() as d:
        nodes = {}
        try:
            for name, binary in sides:
                nodes[name] = start(binary, d, name)
            for name, (node, port, _, _) in nodes.items():
                bench(a.cairn, port, node.pid,
                      ["-mode", "write", "-workload", "sequential"] + common)
            # Traced from here on: the population above is not.
            set_probability(nodes["p1"][2], 1)
            for mode in ("read", "write"):
                for i in range(a.pairs):
                    order = sides[i % len(sides):] + sides[:i % len(sides)]
                    for name, _ in order:
                        node, port, _, _ = nodes[name]
                        out = bench(a.cairn, port, node.pid,
                                    ["-mode", mode, "-workload", "uniform", "-duration",
                                     a.duration, "-warmup", a.warmup] + common)
                        cpu = number(field(out, "Server CPU"))
                        ops = number(field(out, "Operations/s"))
                        runs.setdefault((mode, name), []).append((cpu, ops))
                        print(f"round {i + 1} {mode:5} {name:4} server {cpu:.2f} µs/op, "
                              f"{ops:.0f} ops/s", flush=True)
            metrics = nodes["p1"][3]
            traced = counter(metrics, "tracing_sessions")
            dropped = counter(metrics, "tracing_dropped_sessions")
        finally:
            for node, _, _, _ in nodes.values():
                node.terminate()
                node.wait()
    names = [n for n, _ in sides]
    print(f"\n{a.connections} connection(s), concurrency 16, {a.pairs} rounds of {a.duration}")
    print("| op | " + " | ".join(f"{n} µs/op" for n in names) + " | "
          + " | ".join(f"{n} / off" for n in names if n != "off") + " | "
          + " | ".join(f"{n} ops/s" for n in names) + " |")
    print("|---|" + "---:|" * (3 * len(names) - 1))
    for mode, op in (("write", "INSERT"), ("read", "SELECT")):
        cpu = {n: [c for c, _ in runs[(mode, n)]] for n in names}
        cells = [f"{statistics.median(cpu[n]):.2f}" for n in names]
        for n in names:
            if n != "off":
                ratios = [x / y for x, y in zip(cpu[n], cpu["off"])]
                cells.append(f"{statistics.median(ratios):.2f} "
                             f"({', '.join(f'{r:.2f}' for r in ratios)})")
        cells += [f"{statistics.median(o for _, o in runs[(mode, n)]):.0f}" for n in names]
        print(f"| {op} | " + " | ".join(cells) + " |")
    print(f"\n`p1`: {traced} requests traced, {dropped} sessions not stored (queue full or "
          "write failed); warm-ups included")


if __name__ == "__main__":
    main()
