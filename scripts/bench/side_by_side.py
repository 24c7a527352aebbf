"""One node per side, the same `cairn bench` load on each, rounds alternated: what
audit_bar.py and tracing_bar.py share (server CPU per request of a feature off and on).

A side is (name, cairn binary, config text — "" for none). `run` starts one node per side,
calls `before_populate(nodes)` (schema the load must find, e.g. a view), populates each (50 000 single-row partitions of 16 bytes), calls `before_rounds(nodes)`, then
runs `pairs` rounds of uniform SELECTs and INSERTs on every side (the order rotated each round)
and calls `after_rounds(nodes)` before the nodes stop; `table` prints the medians with the ratios
to the side named `off`. A node is (process, native port, REST port, metrics port)."""
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


def start(cairn, d, name, config):
    """`cairn serve` on fresh ports (and `config`, when not empty), once it answers CQL."""
    args = [cairn, "serve", "--data-dir", f"{d}/{name}"]
    if config:
        cfg = Path(d, f"{name}.yaml")
        cfg.write_text(config)
        args += ["--config", str(cfg)]
    port, api, metrics = free_port(), free_port(), free_port()
    node = subprocess.Popen(
        args + ["--native-port", str(port), "--api-port", str(api),
                "--metrics-port", str(metrics)],
        stdout=open(Path(d, f"{name}.log"), "w"), stderr=subprocess.STDOUT)
    while not cql_ready(port):
        if node.poll() is not None:
            sys.exit(f"cairn serve ({name}) exited with {node.returncode}")
        time.sleep(0.01)
    return node, port, api, metrics


def metrics(metrics_port, pattern):
    """The node's Prometheus samples whose name (without `scylla_`) matches `pattern`."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics",
                                  timeout=10).read().decode()
    return {m.group(1): float(m.group(2)) for m in
            re.finditer(rf'^scylla_({pattern})\{{[^}}]*\}} (\S+)$', text, re.M)}


def run(a, sides, before_rounds=lambda nodes: None, after_rounds=lambda nodes: None,
        before_populate=lambda nodes: None):
    """{(mode, side): [(cpu µs/op, ops/s) per round]} and what `after_rounds` returned."""
    common = ["-partition-count", "50000", "-clustering-row-count", "1",
              "-clustering-row-size", "16", "-rows-per-request", "1",
              "-consistency-level", "one", "-connection-count", a.connections]
    runs = {}
    with tempfile.TemporaryDirectory() as d:
        nodes = {}
        try:
            for name, binary, config in sides:
                nodes[name] = start(binary, d, name, config)
            before_populate(nodes)
            for node, port, _, _ in nodes.values():
                bench(a.cairn, port, node.pid,
                      ["-mode", "write", "-workload", "sequential"] + common)
            before_rounds(nodes)
            for mode in ("read", "write"):
                for i in range(a.pairs):
                    order = sides[i % len(sides):] + sides[:i % len(sides)]
                    for name, _, _ in order:
                        node, port, _, _ = nodes[name]
                        out = bench(a.cairn, port, node.pid,
                                    ["-mode", mode, "-workload", "uniform", "-duration",
                                     a.duration, "-warmup", a.warmup] + common)
                        cpu = number(field(out, "Server CPU"))
                        ops = number(field(out, "Operations/s"))
                        runs.setdefault((mode, name), []).append((cpu, ops))
                        print(f"round {i + 1} {mode:5} {name:4} server {cpu:.2f} µs/op, "
                              f"{ops:.0f} ops/s", flush=True)
            after = after_rounds(nodes)
        finally:
            for node, _, _, _ in nodes.values():
                node.terminate()
                node.wait()
    return runs, after


def table(a, sides, runs):
    """The medians per side, and each side's ratio to `off` (median, then every round's)."""
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


def arguments(feature):
    """The scripts' shared command line."""
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--cairn", default="target/release/cairn")
    ap.add_argument("--base", help=f"a cairn binary without {feature}, run as `base`")
    ap.add_argument("--duration", default="15s")
    ap.add_argument("--warmup", default="3s")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--connections", default="4")
    return ap.parse_args()
