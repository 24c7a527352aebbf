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
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import side_by_side  # noqa: E402

AUDIT_ON = ("audit: table\naudit_categories: QUERY,DML\naudit_keyspaces: scylla_bench\n")


def main():
    a = side_by_side.arguments("the audit log")
    sides = [("off", a.cairn, ""), ("on", a.cairn, AUDIT_ON)]
    if a.base:
        sides.insert(0, ("base", a.base, ""))
    runs, audit = side_by_side.run(
        a, sides, after_rounds=lambda nodes: side_by_side.metrics(nodes["on"][3], r"audit_\w+"))
    total = sum(ops * float(a.duration.rstrip("s")) for (m, n), rs in runs.items()
                if n == "on" for _, ops in rs)
    side_by_side.table(a, sides, runs)
    waits = audit.get("audit_queue_waits", 0)
    mean_wait = audit.get("audit_queue_wait_microseconds", 0) / max(waits, 1)
    print(f"\n`on`: {audit.get('audit_records_written', 0):.0f} records written, "
          f"{audit.get('audit_records_failed', 0):.0f} failed (warm-ups and the load included), "
          f"for about {total:.0f} requests measured; {waits:.0f} requests waited for room in "
          f"the audit queue, {mean_wait:.0f} µs on average")


if __name__ == "__main__":
    main()
