#!/usr/bin/env python3
"""What the audit log costs: server CPU per request with the audit log off and on, side by side.

    cargo build --release -p cairn
    python3 scripts/bench/audit_bar.py [--cairn target/release/cairn] [--base OTHER_CAIRN]
                                       [--duration 15s] [--pairs 3] [--connections 4]

Nodes run side by side, each on its own data directory and ports, and `cairn bench` runs
against one at a time, reading that node's CPU (`-server-pid`):
- `off`: `--cairn` with no audit setting (`audit: none`, the default);
- `on`: `--cairn` with `audit: table`, `audit_categories: QUERY,DML` and
  `audit_keyspaces: scylla_bench` (every request of the bench is recorded in audit.audit_log);
- `base` (with `--base`): another binary with no audit setting — the commit before the audit
  log, to show that `off` costs nothing.
The shape is tls_bar.py's: single-row INSERTs and SELECTs of 16-byte rows over 50 000
partitions, concurrency 16, `--connections` connections; `--pairs` rounds of SELECT runs, then
of INSERT runs, the sides' order rotating from round to round. Prints each run, then the
medians as a table with the ratios to `off`, then what the `on` node's audit log did (its
`scylla_audit_*` metrics: records written and failed, requests that waited for room in the
queue and how long on average).
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

AUDIT_ON = ("audit: table\naudit_categories: QUERY,DML\naudit_keyspaces: scylla_bench\n")


def start(cairn, d, name, config):
    cfg = Path(d, f"{name}.yaml")
    cfg.write_text(config)
    port, api, metrics = free_port(), free_port(), free_port()
    node = subprocess.Popen(
        [cairn, "serve", "--config", str(cfg), "--data-dir", f"{d}/{name}",
         "--native-port", str(port), "--api-port", str(api), "--metrics-port", str(metrics)],
        stdout=open(Path(d, f"{name}.log"), "w"), stderr=subprocess.STDOUT)
    while not cql_ready(port):
        if node.poll() is not None:
            sys.exit(f"cairn serve ({name}) exited with {node.returncode}")
        time.sleep(0.01)
    return node, port, metrics


def audit_metrics(metrics_port):
    """The node's `scylla_audit_*` samples, by name without the prefix."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics",
                                  timeout=10).read().decode()
    return {m.group(1): float(m.group(2)) for m in
            re.finditer(r'^scylla_(audit_\w+)\{shard="0"\} (\S+)$', text, re.M)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cairn", default="target/release/cairn")
    ap.add_argument("--base", help="a cairn binary without the audit log, run as `base`")
    ap.add_argument("--duration", default="15s")
    ap.add_argument("--warmup", default="3s")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--connections", default="4")
    a = ap.parse_args()
    sides = [("off", a.cairn, ""), ("on", a.cairn, AUDIT_ON)]
    if a.base:
        sides.insert(0, ("base", a.base, ""))
    common = ["-partition-count", "50000", "-clustering-row-count", "1",
              "-clustering-row-size", "16", "-rows-per-request", "1",
              "-consistency-level", "one", "-connection-count", a.connections]
    runs = {}
    with tempfile.TemporaryDirectory() as d:
        nodes = {}
        try:
            for name, binary, config in sides:
                nodes[name] = start(binary, d, name, config)
            for name, (node, port, _) in nodes.items():
                bench(a.cairn, port, node.pid,
                      ["-mode", "write", "-workload", "sequential"] + common)
            for mode in ("read", "write"):
                for i in range(a.pairs):
                    order = sides[i % len(sides):] + sides[:i % len(sides)]
                    for name, _, _ in order:
                        node, port, _ = nodes[name]
                        out = bench(a.cairn, port, node.pid,
                                    ["-mode", mode, "-workload", "uniform", "-duration",
                                     a.duration, "-warmup", a.warmup] + common)
                        cpu = number(field(out, "Server CPU"))
                        ops = number(field(out, "Operations/s"))
                        runs.setdefault((mode, name), []).append((cpu, ops))
                        print(f"round {i + 1} {mode:5} {name:4} server {cpu:.2f} µs/op, "
                              f"{ops:.0f} ops/s", flush=True)
            audit = audit_metrics(nodes["on"][2])
        finally:
            for node, _, _ in nodes.values():
                node.terminate()
                node.wait()
        total = sum(ops * float(a.duration.rstrip("s")) for (m, n), rs in runs.items()
                    if n == "on" for _, ops in rs)
    names = [n for n, _, _ in sides]
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
    waits = audit.get("audit_queue_waits", 0)
    mean_wait = audit.get("audit_queue_wait_microseconds", 0) / max(waits, 1)
    print(f"\n`on`: {audit.get('audit_records_written', 0):.0f} records written, "
          f"{audit.get('audit_records_failed', 0):.0f} failed (warm-ups and the load included), "
          f"for about {total:.0f} requests measured; {waits:.0f} requests waited for room in "
          f"the audit queue, {mean_wait:.0f} µs on average")


if __name__ == "__main__":
    main()
