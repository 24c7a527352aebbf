#!/usr/bin/env python3
"""One start of a single node (no seeds) for timing: `cairn serve` on a fresh data directory
(or, with --restart, a second start on the same one), until the node answers OPTIONS on its
CQL port; then, with --idle SECONDS, the node's RSS after that many idle seconds is appended
to --rss-file. The process is stopped (SIGTERM) and waited for before this script exits.

A against B, alternating (docs/benchmarks.md, "Cluster membership"):
    for i in 1 2 3 4 5 6; do for b in NEW BASE; do
        python3 scripts/bench/start_idle.py --cairn $b --idle 5 --rss-file OUT; done; done
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cql_bars import cql_ready, free_port, rss_kib  # noqa: E402


def start(cairn, data_dir):
    ports = [free_port() for _ in range(3)]
    p = subprocess.Popen(
        [cairn, "serve", "--data-dir", data_dir, "--native-port", str(ports[0]),
         "--api-port", str(ports[1]), "--metrics-port", str(ports[2])],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.perf_counter()
    while not cql_ready(ports[0]):
        if p.poll() is not None:
            sys.exit(f"cairn serve exited with {p.returncode}")
        time.sleep(0.001)
    return p, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cairn", required=True)
    ap.add_argument("--restart", action="store_true",
                    help="time a second start on the data directory of a first one")
    ap.add_argument("--idle", type=float, default=0.0)
    ap.add_argument("--rss-file")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        if a.restart:
            p, _ = start(a.cairn, d)
            p.terminate()
            p.wait()
        p, took = start(a.cairn, d)
        try:
            if a.idle > 0:
                time.sleep(a.idle)
                if a.rss_file:
                    with open(a.rss_file, "a") as f:
                        f.write(f"{a.cairn} start {took:.3f} s idle RSS "
                                f"{rss_kib(p.pid) / 1024:.1f} MiB\n")
        finally:
            p.terminate()
            p.wait()


if __name__ == "__main__":
    main()
