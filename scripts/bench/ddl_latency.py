#!/usr/bin/env python3
"""DDL latency on a fresh single node: `ddl_latency.py CAIRN_BIN` starts `cairn serve` on a
temporary data directory, creates a keyspace, then times 30 × (CREATE TABLE, ALTER TABLE ADD,
DROP TABLE) through the Python driver (.venv) and prints the mean per statement. Alternate two
binaries (docs/benchmarks.md, "Schema through group 0 on a node alone"):
    for b in NEW BASE NEW BASE; do .venv/bin/python scripts/bench/ddl_latency.py $b; done
"""
import subprocess
import sys
import tempfile
import time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cql_bars import cql_ready, free_port
cairn = sys.argv[1]
d = tempfile.mkdtemp()
ports = [free_port() for _ in range(3)]
p = subprocess.Popen([cairn, "serve", "--data-dir", d, "--native-port", str(ports[0]), "--api-port", str(ports[1]), "--metrics-port", str(ports[2])], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
while not cql_ready(ports[0]): time.sleep(0.01)
from cassandra.cluster import Cluster
c = Cluster(["127.0.0.1"], port=ports[0], protocol_version=4); s = c.connect()
s.execute("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
t = time.perf_counter()
for i in range(30):
    s.execute(f"CREATE TABLE ks.t{i} (k int PRIMARY KEY, v int)")
    s.execute(f"ALTER TABLE ks.t{i} ADD w int")
    s.execute(f"DROP TABLE ks.t{i}")
print(f"{(time.perf_counter()-t)/90*1000:.2f} ms per DDL")
c.shutdown(); p.terminate(); p.wait()
