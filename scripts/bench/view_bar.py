#!/usr/bin/env python3
"""What a materialized view and a secondary index cost a write: server CPU per single-row
INSERT into `cairn bench`'s table without them (`off`), with one view keyed by the written
value (`view`: `PRIMARY KEY (v, pk, ck)`), and with that view and an index on the written value
(`view+index`: `CREATE INDEX ON scylla_bench.test (v)`, a second hidden view), side by side —
issue 18's bar is ≤ 3× with one view and one index.

    cargo build --release -p cairn
    .venv/bin/python scripts/bench/view_bar.py [--cairn target/release/cairn]
                                               [--duration 15s] [--pairs 3] [--connections 4]

The shape is audit_bar.py's (side_by_side.py): 50 000 single-row partitions of 16 bytes,
concurrency 16; `--pairs` rounds of SELECTs, then of INSERTs (each INSERT overwrites a row, so
with the view it reads the row, deletes the old entry and writes the new one), the sides'
order rotating. The view is created before the population, so both sides hold the same data
afterwards. Needs the Python driver (`scripts/venv`).
"""
import sys
from pathlib import Path

from cassandra.cluster import Cluster

sys.path.insert(0, str(Path(__file__).resolve().parent))
import side_by_side  # noqa: E402


def create_view(port, index=False):
    c = Cluster(["127.0.0.1"], port=port, protocol_version=4)
    try:
        s = c.connect()
        s.execute("CREATE KEYSPACE IF NOT EXISTS scylla_bench WITH REPLICATION = "
                  "{'class': 'NetworkTopologyStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE IF NOT EXISTS scylla_bench.test (pk bigint, ck bigint, v blob, "
                  "PRIMARY KEY(pk, ck)) WITH compression = { }")
        s.execute("CREATE MATERIALIZED VIEW scylla_bench.test_by_v AS SELECT * FROM scylla_bench.test "
                  "WHERE v IS NOT NULL AND pk IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (v, pk, ck)")
        if index:
            s.execute("CREATE INDEX ON scylla_bench.test (v)")
    finally:
        c.shutdown()


def main():
    a = side_by_side.arguments("views")
    sides = [("off", a.cairn, ""), ("view", a.cairn, ""), ("view+index", a.cairn, "")]

    def schema(nodes):
        create_view(nodes["view"][1])
        create_view(nodes["view+index"][1], index=True)

    runs, _ = side_by_side.run(a, sides, before_populate=schema)
    side_by_side.table(a, sides, runs)


if __name__ == "__main__":
    main()
