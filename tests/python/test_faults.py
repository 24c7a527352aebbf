"""Storage faults through a real node: bytes flipped in an sstable's data file make the reads
that touch it fail with ReadFailure (the protocol's fields, a message naming the file and
offset), the node's log gets an ERROR naming the file, a metric counts them, and
`disk_failure_policy` decides what the node does — never wrong data."""

import contextlib
import json
import os
import subprocess
import time
import urllib.request

import pytest
from cassandra import ConsistencyLevel, ReadFailure, WriteFailure
from cassandra.policies import WriteType
from cassandra.cluster import NoHostAvailable

from conftest import Node, make_cluster, port_open, serve_refused
from helpers import nodetool, server_code
from test_operations import scrape, value

PARTITIONS = 1500


@contextlib.contextmanager
def corrupted(tmp_root, policy):
    """A node under `disk_failure_policy: policy` whose table ks.t has a flipped byte in its
    sstable's first data chunk: yields (node, session, the data file); kills the node after."""
    name = f"faults-{policy}"
    cfg = tmp_root / f"{name}.yaml"
    cfg.write_text(f"disk_failure_policy: {policy}\n")
    node = Node(tmp_root / name, ["--config", str(cfg)]).start()
    cluster = None
    try:
        cluster = make_cluster(node)
        s = cluster.connect()
        yield node, s, load_and_corrupt(node, s)
    finally:
        if cluster is not None:
            cluster.shutdown()
        node.kill()


def expected(k):
    return f"value {k} " + "z" * (k % 40)


def load_and_corrupt(node, s):
    """A table of PARTITIONS partitions flushed to one sstable, whose first data chunk then
    has a byte flipped. Returns the data file."""
    s.execute("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute("CREATE TABLE ks.t (k int PRIMARY KEY, v text)")
    ins = s.prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
    for k in range(PARTITIONS):
        s.execute(ins, (k, expected(k)))
    nodetool(node, "flush", "ks", "t")
    data = list((node.data_dir / "data" / "ks").glob("t-*/ca-*-Data.db"))
    assert len(data) == 1, data
    with open(data[0], "r+b") as f:
        f.seek(100)
        b = f.read(1)
        f.seek(100)
        f.write(bytes([b[0] ^ 0x5A]))
    return data[0]


def read_all(s):
    """Reads every partition: (the partitions read correctly, the ReadFailures)."""
    sel = s.prepare("SELECT v FROM ks.t WHERE k = ?")
    ok, failures = [], []
    for k in range(PARTITIONS):
        try:
            rows = list(s.execute(sel, (k,)))
        except ReadFailure as e:
            failures.append(e)
            continue
        assert [r.v for r in rows] == [expected(k)], f"wrong data for partition {k}"
        ok.append(k)
    return ok, failures


def read_until_failure(s):
    """Reads partitions in turn until one raises (the flipped chunk holds some)."""
    for k in range(PARTITIONS):
        s.execute("SELECT v FROM ks.t WHERE k = %s", (k,))


def rest(node, path):
    with urllib.request.urlopen(f"http://{node.host}:{node.api_port}{path}", timeout=10) as r:
        return json.loads(r.read().decode())


def wait_until(cond, what, timeout=30):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.05)


def test_corrupt_sstable_reads_fail_with_read_failure_logged_and_counted(tmp_root):
    with corrupted(tmp_root, "stop") as (node, s, data):
        ok, failures = read_all(s)
        assert failures, "the flipped byte was not detected"
        assert len(ok) > PARTITIONS // 2, f"one bad chunk made {len(failures)} partitions unreadable"
        for e in failures:
            assert server_code(e) == 0x1300
            assert e.consistency == ConsistencyLevel.LOCAL_ONE  # the request's (the driver's default)
            assert (e.received_responses, e.required_responses, e.failures) == (0, 1, 1)
            assert str(data) in str(e) and "at offset 0" in str(e), str(e)
        log = node.log_path.read_text(errors="replace")
        errors = [line for line in log.splitlines() if "ERROR" in line and data.name in line]
        assert errors, node.log_tail()
        # Rate limited: one chunk, many failed reads, few lines.
        assert len(errors) < len(failures), errors
        m = scrape(node)
        assert value(m, "scylla_storage_faults", kind="corrupt_sstable", shard="0") == len(failures)
        assert value(m, "scylla_database_total_reads_failed", shard="0") == len(failures)
        assert value(m, "scylla_storage_transports_stopped", shard="0") == 0
        # `stop` does not act on a corrupt sstable (Cassandra's neither): the node serves on.
        assert rest(node, "/storage_service/native_transport") is True
        k = ok[-1]
        assert [r.v for r in s.execute("SELECT v FROM ks.t WHERE k = %s", (k,))] == [expected(k)]


def test_stop_paranoid_stops_the_native_port_and_rest_stays_up(tmp_root):
    with corrupted(tmp_root, "stop_paranoid") as (node, s, _):
        with pytest.raises((ReadFailure, NoHostAvailable)):
            read_until_failure(s)
        wait_until(lambda: not port_open(node.host, node.port), "the native port closed")
        assert node.proc.poll() is None, "the process must keep running for inspection"
        assert rest(node, "/storage_service/native_transport") is False
        assert value(scrape(node), "scylla_storage_transports_stopped", shard="0") == 1
        assert "Stopping transports as disk_failure_policy is stop_paranoid" in node.log_path.read_text()


def test_ignore_keeps_serving_other_partitions(tmp_root):
    with corrupted(tmp_root, "ignore") as (node, s, _):
        for _ in range(2):
            ok, failures = read_all(s)
            assert failures and len(ok) > PARTITIONS // 2
        assert port_open(node.host, node.port)
        assert value(scrape(node), "scylla_storage_faults", kind="corrupt_sstable", shard="0") == 2 * len(failures)


def test_die_exits_100_on_a_corrupt_sstable(tmp_root):
    with corrupted(tmp_root, "die") as (node, s, _):
        with pytest.raises(Exception):
            read_until_failure(s)
        assert node.proc.wait(timeout=30) == 100
        assert "disk_failure_policy is die" in node.log_path.read_text()


def test_commitlog_failure_is_a_write_failure_and_stop_commit_refuses_writes(tmp_root):
    """The commitlog on a 4 MiB tmpfs that fills up: under `commit_failure_policy:
    stop_commit` the write that meets it and every later one fail with WriteFailure, reads go
    on and the native port stays open."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    # `--data-dir` puts the commitlog in its commitlog/: mount the tmpfs there.
    mnt = tmp_root / "faults-commitlog" / "commitlog"
    mnt.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], check=True)
    cfg = tmp_root / "faults-commitlog.yaml"
    cfg.write_text("commitlog_segment_size_in_mb: 1\ncommit_failure_policy: stop_commit\n")
    node = Node(tmp_root / "faults-commitlog", ["--config", str(cfg)]).start()
    cluster = make_cluster(node)
    try:
        s = cluster.connect()
        s.execute("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE ks.t (k int PRIMARY KEY, v text)")
        s.execute("INSERT INTO ks.t (k, v) VALUES (0, 'before')")
        with open(mnt / "ballast", "wb") as f:
            try:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
            except OSError:
                pass
        ins = s.prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
        failures = []
        for k in range(1, 200_000):
            try:
                s.execute(ins, (k, "x" * 200))
            except WriteFailure as e:
                failures.append(e)
                if len(failures) == 3:
                    break
        assert len(failures) == 3, "the commitlog never failed"
        for e in failures:
            assert server_code(e) == 0x1500
            assert e.write_type == WriteType.SIMPLE
            assert e.consistency == ConsistencyLevel.LOCAL_ONE  # the request's (the driver's default)
            assert (e.received_responses, e.required_responses, e.failures) == (0, 1, 1)
            assert "commitlog" in str(e), str(e)
        # The commitlog stays stopped: space coming back does not bring writes back.
        (mnt / "ballast").unlink()
        with pytest.raises(WriteFailure):
            s.execute(ins, (1, "after"))
        assert [r.v for r in s.execute("SELECT v FROM ks.t WHERE k = 0")] == ["before"]
        assert port_open(node.host, node.port)
        m = scrape(node)
        assert value(m, "scylla_storage_faults", kind="commitlog", shard="0") >= 1
        assert value(m, "scylla_database_total_writes_failed", shard="0") >= 4
        assert "commitlog" in "\n".join(line for line in node.log_path.read_text().splitlines() if "ERROR" in line)
    finally:
        cluster.shutdown()
        node.kill()
        subprocess.run(["umount", str(mnt)], check=False)


@pytest.mark.parametrize("key,bad", [("disk_failure_policy", "sometimes"),
                                     ("commit_failure_policy", "best_effort")])
def test_unknown_policy_refuses_to_start(tmp_path, key, bad):
    err = serve_refused(tmp_path, f"{key}: {bad}\n")
    assert key in err and f"`{bad}` is not a {key}" in err, err
