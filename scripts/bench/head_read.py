"""A `LIMIT 1` read at the head of a growing memtable partition, through the Python driver:
its latency must not grow with the partition (issue 17's lab shows it as a sawtooth between
flushes otherwise). Starts its own node from CAIRN_BIN (default target/release/cairn) on
free loopback ports; prints microseconds per read at 1k, 10k and 40k rows.

    .venv/bin/python scripts/bench/head_read.py
"""
import os
import socket
import subprocess
import tempfile
import time

from cassandra.cluster import Cluster
from cassandra.concurrent import execute_concurrent_with_args


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    binary = os.environ.get("CAIRN_BIN", "target/release/cairn")
    ports = [free_port() for _ in range(3)]
    with tempfile.TemporaryDirectory() as d:
        node = subprocess.Popen(
            [binary, "serve", "--data-dir", d, "--native-port", str(ports[0]),
             "--api-port", str(ports[1]), "--metrics-port", str(ports[2])],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    socket.create_connection(("127.0.0.1", ports[0]), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            cluster = Cluster(["127.0.0.1"], port=ports[0])
            s = cluster.connect()
            s.execute("CREATE KEYSPACE k WITH replication = "
                      "{'class': 'SimpleStrategy', 'replication_factor': 1}")
            s.execute("CREATE TABLE k.t (pk bigint, ck bigint, v blob, PRIMARY KEY (pk, ck)) "
                      "WITH caching = {'enabled': 'false'}")
            ins = s.prepare("INSERT INTO k.t (pk, ck, v) VALUES (?, ?, ?)")
            sel = s.prepare("SELECT ck, v FROM k.t WHERE pk = ? LIMIT 1")
            written = 0
            for rows in (1_000, 10_000, 40_000):
                execute_concurrent_with_args(
                    s, ins, [(0, -i, b"x" * 64) for i in range(written, rows)], concurrency=50)
                written = rows
                for _ in range(20):
                    s.execute(sel, (0,))
                start = time.perf_counter()
                for _ in range(200):
                    s.execute(sel, (0,))
                per_read = (time.perf_counter() - start) / 200 * 1e6
                print(f"{rows} rows in the memtable partition: {per_read:.0f} µs per head read")
            cluster.shutdown()
        finally:
            node.terminate()
            node.wait()


if __name__ == "__main__":
    main()
