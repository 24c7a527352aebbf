"""The audit log (ScyllaDB's `audit` keys): records in `audit.audit_log` read back with SELECT,
the category / keyspace / table filters, failed logins, records sent to a syslog socket, and
settings the node refuses at start."""

import re
import socket
import time
import urllib.request

import pytest
from cassandra import InvalidRequest
from cassandra.cluster import NoHostAvailable
from cassandra.concurrent import execute_concurrent

from conftest import make_cluster, serve_refused
from test_auth import login

# Records are written by the node's audit thread after the request is answered: tests poll
# for them (they assert what arrives, never how fast).
DEADLINE = 20.0


@pytest.fixture(scope="module")
def tnode(node_factory, tmp_path_factory):
    cfg = tmp_path_factory.mktemp("audit-table") / "cairn.yaml"
    cfg.write_text(
        "authenticator: PasswordAuthenticator\n"
        # Permissions enforced: the audit log's own writes are the node's, not a client's.
        "authorizer: CassandraAuthorizer\n"
        "audit: table\n"
        "audit_categories: 'DCL,DDL,AUTH,DML,QUERY'\n"
        "audit_keyspaces: audited\n"
        "audit_tables: partly.logged\n")
    return node_factory("audit-table", ["--config", str(cfg)])


@pytest.fixture(scope="module")
def su(tnode):
    c, s = login(tnode, "cassandra", "cassandra")
    yield s
    c.shutdown()


def rows_where(session, pred, want):
    """The audit rows `pred` keeps, once there are `want` of them (or the deadline)."""
    deadline = time.monotonic() + DEADLINE
    while True:
        rows = [r for r in session.execute("SELECT * FROM audit.audit_log") if pred(r)]
        if len(rows) >= want or time.monotonic() > deadline:
            return rows
        time.sleep(0.1)


def test_statements_and_logins_are_recorded(tnode, su):
    with pytest.raises(NoHostAvailable):
        login(tnode, "mallory", "guess")
    su.execute("CREATE KEYSPACE audited WITH replication = "
               "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    su.execute("CREATE TABLE audited.t (k int PRIMARY KEY, v text)")
    su.execute("INSERT INTO audited.t (k, v) VALUES (1, 'secret-value')")
    su.execute("SELECT * FROM audited.t WHERE k = 1")
    prepared = su.prepare("UPDATE audited.t SET v = ? WHERE k = ?")
    su.execute(prepared, ["bound-value", 2])
    with pytest.raises(InvalidRequest):
        su.execute("SELECT * FROM audited.missing")

    rows = rows_where(su, lambda r: r.keyspace_name == "audited", 6)
    by_op = {r.operation: r for r in rows}
    expect = {
        "CREATE KEYSPACE audited WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': 1}": ("DDL", "", False),
        "CREATE TABLE audited.t (k int PRIMARY KEY, v text)": ("DDL", "t", False),
        "INSERT INTO audited.t (k, v) VALUES (1, 'secret-value')": ("DML", "t", False),
        "SELECT * FROM audited.t WHERE k = 1": ("QUERY", "t", False),
        # A prepared EXECUTE records the prepared text, never the bound values.
        "UPDATE audited.t SET v = ? WHERE k = ?": ("DML", "t", False),
        # A statement that fails is recorded with error = true.
        "SELECT * FROM audited.missing": ("QUERY", "missing", True),
    }
    for op, (category, table, error) in expect.items():
        assert op in by_op, (op, [r.operation for r in rows])
        r = by_op[op]
        assert (r.category, r.table_name, r.error) == (category, table, error), r
        assert r.username == "cassandra", r
        assert r.source == "127.0.0.1", r
        assert r.node == "127.0.0.1", r
        assert r.consistency == "LOCAL_ONE", r
        assert r.event_time is not None and r.date is not None, r
    assert not any("bound-value" in r.operation for r in rows)

    # Logins: the failed one with the user name tried, error = true.
    logins = rows_where(su, lambda r: r.category == "AUTH" and r.username == "mallory", 1)
    assert logins, "no record of the failed login"
    assert all(r.operation == "LOGIN" and r.error for r in logins), logins
    ok = rows_where(su, lambda r: r.category == "AUTH" and r.username == "cassandra", 1)
    assert ok and not ok[0].error, ok


def test_filters_exclude_what_they_should(tnode, su):
    su.execute("CREATE KEYSPACE partly WITH replication = "
               "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    su.execute("CREATE TABLE partly.logged (k int PRIMARY KEY)")
    su.execute("CREATE TABLE partly.skipped (k int PRIMARY KEY)")
    su.execute("INSERT INTO partly.logged (k) VALUES (1)")
    su.execute("INSERT INTO partly.skipped (k) VALUES (1)")
    su.execute("BEGIN BATCH INSERT INTO partly.skipped (k) VALUES (2); "
               "INSERT INTO audited.t (k, v) VALUES (3, 'b'); APPLY BATCH")
    # DCL is logged whatever the keyspace lists say.
    su.execute("CREATE ROLE auditee WITH PASSWORD = 'pw' AND LOGIN = true")
    # A statement naming neither list's keyspace or table is not.
    su.execute("SELECT * FROM system.local")

    dcl = rows_where(su, lambda r: r.category == "DCL" and "auditee" in r.operation, 1)
    assert dcl and dcl[0].keyspace_name == "" and dcl[0].username == "cassandra", dcl
    batch = rows_where(su, lambda r: r.operation.startswith("BEGIN BATCH"), 1)
    # The batch is recorded for its member in an audited keyspace only.
    assert [(r.keyspace_name, r.table_name) for r in batch] == [("audited", "t")], batch

    rows = list(su.execute("SELECT * FROM audit.audit_log"))
    tables = {(r.keyspace_name, r.table_name) for r in rows}
    assert ("partly", "logged") in tables
    assert ("partly", "skipped") not in tables
    assert not any(r.keyspace_name == "system" for r in rows)
    # CREATE KEYSPACE partly names no table: only audit_keyspaces would take it.
    assert not any(r.operation.startswith("CREATE KEYSPACE partly") for r in rows)


class SyslogSocket:
    """A unix datagram socket standing in for /dev/log."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.settimeout(0.2)
        self.lines = []

    def wait_for(self, pred):
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            hits = [l for l in self.lines if pred(l)]
            if hits:
                return hits
            try:
                self.lines.append(self.sock.recv(1 << 20).decode())
            except socket.timeout:
                pass
        return []


# A queue with room for 4 records: far fewer than the requests in flight below.
QUEUE = 4
FLOOD_TABLES = 6  # a BATCH over all of them makes more records than the queue has room for


@pytest.fixture(scope="module")
def flood_node(node_factory, tmp_path_factory):
    cfg = tmp_path_factory.mktemp("audit-flood") / "cairn.yaml"
    cfg.write_text(
        "audit: table\n"
        "audit_categories: DML,QUERY\n"
        "audit_keyspaces: flood\n"
        f"audit_queue_records: {QUEUE}\n")
    return node_factory("audit-flood", ["--config", str(cfg)])


def metric(node, name):
    text = urllib.request.urlopen(
        f"http://{node.host}:{node.metrics_port}/metrics", timeout=10).read().decode()
    m = re.search(rf'^scylla_{name}{{shard="0"}} (\S+)$', text, re.M)
    assert m, (name, text[-2000:])
    return float(m.group(1))


def test_overload_waits_and_drops_no_record(flood_node):
    """Many more audited requests in flight than the queue has room for: every request's
    records reach audit.audit_log (the requests wait for room instead of losing them)."""
    c = make_cluster(flood_node)
    try:
        s = c.connect()
        s.execute("CREATE KEYSPACE flood WITH replication = "
                  "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        for i in range(FLOOD_TABLES):
            s.execute(f"CREATE TABLE flood.t{i} (k int PRIMARY KEY, v int)")
        assert metric(flood_node, "audit_queue_capacity") == QUEUE
        written_before = metric(flood_node, "audit_records_written")
        # Distinct texts, so that each record names its request.
        inserts = [f"INSERT INTO flood.t0 (k, v) VALUES ({k}, {k})" for k in range(1500)]
        selects = [f"SELECT * FROM flood.t0 WHERE k = {k}" for k in range(500)]
        prepared = s.prepare("UPDATE flood.t1 SET v = ? WHERE k = ?")
        batch = ("BEGIN UNLOGGED BATCH "
                 + " ".join(f"INSERT INTO flood.t{i} (k, v) VALUES (-1, {i});"
                            for i in range(FLOOD_TABLES))
                 + " APPLY BATCH")
        work = ([(q, ()) for q in inserts + selects]
                + [(prepared, (k, k)) for k in range(500)]
                + [(batch, ())] * 20)
        results = execute_concurrent(s, work, concurrency=200, raise_on_first_error=False)
        assert all(ok for ok, _ in results), [r for ok, r in results if not ok][:3]
        want = len(inserts) + len(selects) + 500 + 20 * FLOOD_TABLES

        deadline = time.monotonic() + 60
        while True:
            rows = [r for r in s.execute("SELECT keyspace_name, table_name, operation, error "
                                         "FROM audit.audit_log")
                    if r.keyspace_name == "flood"]
            if len(rows) >= want or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        ops = [r.operation for r in rows]
        assert len(rows) == want, (len(rows), want)
        assert set(inserts + selects) <= set(ops)
        assert ops.count("UPDATE flood.t1 SET v = ? WHERE k = ?") == 500
        # One record per table the batch names, for each of its 20 runs.
        assert sorted((r.table_name for r in rows if r.operation == batch)) == \
            sorted([f"t{i}" for i in range(FLOOD_TABLES)] * 20)
        assert not any(r.error for r in rows)
        assert metric(flood_node, "audit_records_failed") == 0
        assert metric(flood_node, "audit_records_written") - written_before >= want
    finally:
        c.shutdown()


@pytest.fixture(scope="module")
def syslog_node(node_factory, tmp_path_factory):
    d = tmp_path_factory.mktemp("audit-syslog")
    sock = SyslogSocket(d / "log.sock")
    cfg = d / "cairn.yaml"
    cfg.write_text(
        "audit: syslog\n"
        f"audit_unix_socket_path: {sock.path}\n"
        "audit_categories: DDL,DML\n"
        "audit_keyspaces: slog\n")
    n = node_factory("audit-syslog", ["--config", str(cfg)])
    yield n, sock
    sock.sock.close()


def test_syslog_sink_receives_records(syslog_node):
    n, sock = syslog_node
    assert sock.wait_for(lambda l: "audit log started" in l), sock.lines
    c = make_cluster(n)
    try:
        s = c.connect()
        s.execute("CREATE KEYSPACE slog WITH replication = "
                  "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE slog.t (k int PRIMARY KEY, v text)")
        s.execute("INSERT INTO slog.t (k, v) VALUES (1, 'say \"hi\"')")
        s.execute("SELECT * FROM slog.t")  # QUERY is not among the categories
    finally:
        c.shutdown()
    hits = sock.wait_for(lambda l: 'category="DML"' in l)
    assert len(hits) == 1, sock.lines
    line = hits[0]
    assert re.match(r'<13>\w{3} [ \d]\d \d\d:\d\d:\d\d scylla-audit\[\d+\]: ', line), line
    assert 'node="127.0.0.1", category="DML", cl="LOCAL_ONE", error="false", ' \
           'keyspace="slog", query="INSERT INTO slog.t (k, v) VALUES (1, \'say \\"hi\\"\')"' in line, line
    assert re.search(r'client_ip="127\.0\.0\.1:\d+", table="t", username="anonymous"', line), line
    assert sock.wait_for(lambda l: 'category="DDL"' in l and "CREATE TABLE slog.t" in l)
    assert not any('category="QUERY"' in l for l in sock.lines), sock.lines


@pytest.mark.parametrize("yaml_text, says", [
    ("audit: file\n", "audit: `file` is a security setting"),
    ("audit: table\naudit_categories: DDL,SELECT\n", "unknown audit category `SELECT`"),
    ("audit: table\naudit_tables: nodot\n", "`nodot` is not a table name"),
])
def test_bad_settings_refused_at_start(tmp_path, yaml_text, says):
    err = serve_refused(tmp_path, yaml_text)
    assert says in err, err


def test_syslog_without_socket_refused_at_start(tmp_path):
    err = serve_refused(
        tmp_path, f"audit: syslog\naudit_unix_socket_path: {tmp_path / 'none.sock'}\n")
    assert "audit log (syslog)" in err and "none.sock" in err, err
