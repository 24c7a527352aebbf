#!/usr/bin/env python3
"""What a conditional write costs, beside a plain write, in the same run: one node (RF=1) and
three nodes on 127.0.0.1–3 (RF=3, QUORUM / SERIAL, a Paxos round across the replicas).

    .venv/bin/python scripts/bench/lwt_bar.py CAIRN_BIN [OPS]

For each setup, through the Python driver (.venv) with 16 requests in flight, each node chosen
round-robin: OPS plain INSERTs at QUORUM, OPS `INSERT … IF NOT EXISTS` on fresh keys, then OPS
`UPDATE … IF v = …` on those keys (each condition holds). Prints per kind: operations per second
and the nodes' CPU per operation (utime + stime of every node process, /proc/PID/stat), so the
Paxos round's cost reads against the plain write's (docs/benchmarks.md, "Conditional writes").
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cql_bars import cql_ready, free_port  # noqa: E402

from cassandra import ConsistencyLevel as CL  # noqa: E402
from cassandra.cluster import Cluster, EXEC_PROFILE_DEFAULT, ExecutionProfile  # noqa: E402
from cassandra.concurrent import execute_concurrent_with_args  # noqa: E402
from cassandra.policies import RoundRobinPolicy  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids):
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / TICK


def start(cairn, root, hosts, native, storage, api):
    procs = []
    seeds = ",".join(hosts) if len(hosts) > 1 else None
    for i, host in enumerate(hosts, 1):
        cmd = [cairn, "serve", "--data-dir", f"{root}/n{i}", "--native-port", str(native),
               "--api-port", str(api), "--metrics-port", str(free_port()),
               "--listen-address", host]
        if seeds:
            yaml = Path(root) / f"n{i}.yaml"
            yaml.write_text(f"storage_port: {storage}\nseed_provider:\n  - class_name: "
                            "org.apache.cassandra.locator.SimpleSeedProvider\n    parameters:\n"
                            f"      - seeds: \"{seeds}\"\n")
            cmd += ["--config", str(yaml)]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return procs


def measure(label, hosts, native, pids, rf, ops):
    profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(), request_timeout=30,
                               consistency_level=CL.QUORUM, serial_consistency_level=CL.SERIAL)
    c = Cluster(hosts, port=native, protocol_version=4,
                execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    s = c.connect()
    s.execute(f"CREATE KEYSPACE IF NOT EXISTS ks WITH replication = "
              f"{{'class': 'SimpleStrategy', 'replication_factor': {rf}}}")
    s.execute("CREATE TABLE IF NOT EXISTS ks.t (k int PRIMARY KEY, v int)")
    kinds = [
        ("INSERT", "INSERT INTO ks.t (k, v) VALUES (?, 0)", [(k,) for k in range(ops)]),
        ("INSERT IF NOT EXISTS", "INSERT INTO ks.t (k, v) VALUES (?, 0) IF NOT EXISTS",
         [(k,) for k in range(ops, 2 * ops)]),
        ("UPDATE IF v =", "UPDATE ks.t SET v = 1 WHERE k = ? IF v = 0",
         [(k,) for k in range(ops, 2 * ops)]),
    ]
    for name, cql, args in kinds:
        stmt = s.prepare(cql)
        execute_concurrent_with_args(s, stmt, args[:200], concurrency=16)  # warm-up
        args = args[200:]
        cpu0, t0 = cpu_seconds(pids), time.perf_counter()
        results = execute_concurrent_with_args(s, stmt, args, concurrency=16,
                                               raise_on_first_error=True)
        t, cpu = time.perf_counter() - t0, cpu_seconds(pids) - cpu0
        if "IF" in name:
            assert all(r.result_or_exc.one()[0] for r in results), "every condition holds"
        print(f"{label} {name:22} {len(args) / t:8.0f} ops/s  "
              f"server CPU {cpu / len(args) * 1e6:7.1f} µs/op  load {os.getloadavg()[0]:.1f}",
              flush=True)
    c.shutdown()


def main():
    cairn, ops = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    native, storage, api = free_port(), free_port(), free_port()
    for label, hosts, rf in [("single(rf=1)", ["127.0.0.1"], 1),
                             ("three(rf=3)", ["127.0.0.1", "127.0.0.2", "127.0.0.3"], 3)]:
        root = tempfile.mkdtemp(prefix="lwt-bar-")
        procs = start(cairn, root, hosts, native, storage, api)
        try:
            while not cql_ready(native):
                time.sleep(0.05)
            for _ in range(600):
                out = subprocess.run([cairn, "nodetool", "-h", "127.0.0.1", "-p", str(api),
                                      "status"], capture_output=True, text=True).stdout
                if out.count("\nUN") == len(hosts):
                    break
                time.sleep(0.1)
            measure(label, hosts, native, [p.pid for p in procs], rf, ops)
        finally:
            for p in procs:
                p.terminate()
                p.wait()
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
