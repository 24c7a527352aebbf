#!/usr/bin/env python3
"""Issue 20's TLS bar: server CPU per request with TLS vs plaintext, side by side on one node.

    cargo build --release -p cairn
    python3 scripts/bench/tls_bar.py [--cairn target/release/cairn] [--duration 20s]
                                     [--pairs 3] [--connections 4]

One node with `client_encryption_options: {optional: true}` (certificates made here by the
`openssl` command) serves both; `cairn bench` runs alternate plaintext and TLS
(`-tls-ca-cert-file`), `--pairs` pairs of SELECT runs then of INSERT runs, each reading the
node's CPU (`-server-pid`). The shape is cql_bars.py's: single-row INSERTs and SELECTs of 16-byte rows
over 50 000 partitions, concurrency 16, `--connections` connections (4: scylla-bench's
default). The medians of the runs are printed as a table, with the TLS/plaintext ratio.
"""
import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cql_bars import cql_ready, field, free_port  # noqa: E402


def openssl(d, *args):
    subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)


def make_certs(d):
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    openssl(d, "req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
            "-subj", "/CN=bench CA")
    Path(d, "server.ext").write_text("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n")
    openssl(d, "req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=node")
    openssl(d, "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "server.crt", "-days", "2", "-extfile", "server.ext")


def bench(cairn, port, pid, extra):
    cmd = [cairn, "bench", "-nodes", f"127.0.0.1:{port}", "-concurrency", "16",
           "-server-pid", str(pid)] + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"bench failed: {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
    return r.stdout


def number(text):
    return float(text.split()[0]) if text != "?" else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cairn", default="target/release/cairn")
    ap.add_argument("--duration", default="20s")
    ap.add_argument("--warmup", default="3s")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--connections", default="4")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        make_certs(d)
        cfg = Path(d, "cairn.yaml")
        cfg.write_text(f"client_encryption_options:\n  optional: true\n"
                       f"  certificate: {d}/server.crt\n  private_key: {d}/server.key\n")
        port, api, metrics = free_port(), free_port(), free_port()
        node = subprocess.Popen(
            [a.cairn, "serve", "--config", str(cfg), "--data-dir", f"{d}/data",
             "--native-port", str(port), "--api-port", str(api), "--metrics-port", str(metrics)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while not cql_ready(port):
                if node.poll() is not None:
                    sys.exit(f"cairn serve exited with {node.returncode}")
                time.sleep(0.01)
            common = ["-partition-count", "50000", "-clustering-row-count", "1",
                      "-clustering-row-size", "16", "-rows-per-request", "1",
                      "-consistency-level", "one", "-connection-count", a.connections]
            bench(a.cairn, port, node.pid, ["-mode", "write", "-workload", "sequential"] + common)
            tls = ["-tls-ca-cert-file", f"{d}/ca.crt"]
            runs = {}
            # SELECTs first (they leave the memtables as they are), then INSERTs; within a
            # pair the order alternates (plaintext first, then TLS first) so that a drift of
            # the node's state over the runs weighs on both sides alike.
            for mode in ("read", "write"):
                for i in range(a.pairs):
                    sides = [("plaintext", []), ("TLS", tls)]
                    for name, extra in sides if i % 2 == 0 else sides[::-1]:
                        out = bench(a.cairn, port, node.pid,
                                    ["-mode", mode, "-workload", "uniform", "-duration",
                                     a.duration, "-warmup", a.warmup] + common + extra)
                        cpu = number(field(out, "Server CPU"))
                        ops = number(field(out, "Operations/s"))
                        runs.setdefault((mode, name), []).append((cpu, ops))
                        print(f"pair {i + 1} {mode:5} {name:9} server {cpu:.2f} µs/op, "
                              f"{ops:.0f} ops/s", flush=True)
        finally:
            node.terminate()
            node.wait()
    print(f"\n{a.connections} connection(s), concurrency 16, {a.pairs} pairs of {a.duration}")
    print("| op | plaintext µs/op | TLS µs/op | TLS / plaintext | plaintext ops/s | TLS ops/s |")
    print("|---|---:|---:|---:|---:|---:|")
    for mode, op in (("write", "INSERT"), ("read", "SELECT")):
        p = [c for c, _ in runs[(mode, "plaintext")]]
        t = [c for c, _ in runs[(mode, "TLS")]]
        ratios = [x / y for x, y in zip(t, p)]
        po = statistics.median(o for _, o in runs[(mode, "plaintext")])
        to = statistics.median(o for _, o in runs[(mode, "TLS")])
        print(f"| {op} | {statistics.median(p):.2f} | {statistics.median(t):.2f} "
              f"| {statistics.median(ratios):.2f} (pairs: {', '.join(f'{r:.2f}' for r in ratios)}) "
              f"| {po:.0f} | {to:.0f} |")


if __name__ == "__main__":
    main()
