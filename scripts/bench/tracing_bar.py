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
import sys
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import side_by_side  # noqa: E402


def set_probability(api, p):
    url = f"http://127.0.0.1:{api}/storage_service/trace_probability?probability={p}"
    urllib.request.urlopen(urllib.request.Request(url, method="POST"), timeout=10).read()


def main():
    a = side_by_side.arguments("tracing")
    sides = [("off", a.cairn, ""), ("p1", a.cairn, "")]
    if a.base:
        sides.insert(0, ("base", a.base, ""))
    # Traced from the rounds on: the population is not.
    runs, counts = side_by_side.run(
        a, sides,
        before_rounds=lambda nodes: set_probability(nodes["p1"][2], 1),
        after_rounds=lambda nodes: side_by_side.metrics(nodes["p1"][3], r"tracing_\w+"))
    side_by_side.table(a, sides, runs)
    print(f"\n`p1`: {counts.get('tracing_sessions', 0):.0f} requests traced, "
          f"{counts.get('tracing_dropped_sessions', 0):.0f} sessions not stored (queue full or "
          "write failed); warm-ups included")


if __name__ == "__main__":
    main()
