"""Query tracing (`crates/cql/src/trace`): the Python driver's `trace=True` and cqlsh's
`TRACING ON` read back a session with its events from Cassandra's `system_traces` tables;
prepared statements and batches are traced too; `nodetool settraceprobability` traces requests
the client did not ask about; `system_traces` shows in `system_schema` as Cassandra has it;
`slow_query_log_timeout` logs slow statements. Error cases: out-of-range probabilities, user
writes to `system_traces`.

Trace rows are written by the node's trace writer after the request is answered: the driver
polls for them, and so do these tests (they assert what arrives, never how fast)."""

import re
import time
import urllib.error
import urllib.request

import pytest
from cassandra import ConsistencyLevel, Unauthorized
from cassandra.query import BatchStatement, SimpleStatement

from conftest import make_cluster
from helpers import nodetool
from test_cqlsh import cqlsh

DEADLINE = 20.0


def traced(session, statement, params=None):
    rs = session.execute(statement, params, trace=True)
    return rs, rs.get_query_trace(max_wait_sec=DEADLINE)


def activities(trace):
    return [e.description for e in trace.events]


def sessions_count(session):
    return session.execute("SELECT count(*) FROM system_traces.sessions").one()[0]


def wait_for(what, check, timeout=DEADLINE):
    deadline = time.monotonic() + timeout
    while True:
        last = check()
        if last or time.monotonic() > deadline:
            assert last, f"timed out waiting for {what}"
            return last
        time.sleep(0.1)


@pytest.fixture(scope="module")
def flushed(node, session, ks):
    """A table with two rows in partition 1 in an sstable and one more in the memtable."""
    session.execute(f"CREATE TABLE {ks}.t (p int, c int, v text, PRIMARY KEY (p, c))")
    session.execute(f"INSERT INTO {ks}.t (p, c, v) VALUES (1, 1, 'a')")
    session.execute(f"INSERT INTO {ks}.t (p, c, v) VALUES (1, 2, 'b')")
    nodetool(node, "flush", ks, "t")
    session.execute(f"INSERT INTO {ks}.t (p, c, v) VALUES (1, 3, 'c')")
    return f"{ks}.t"


def test_a_traced_select_shows_its_session_and_events(node, session, flushed):
    query = f"SELECT * FROM {flushed} WHERE p = 1"
    rs, trace = traced(session, SimpleStatement(query, consistency_level=ConsistencyLevel.ONE))
    assert [r.c for r in rs] == [1, 2, 3]
    assert trace.request_type == "Execute CQL3 query"
    assert trace.parameters["query"] == query
    assert trace.parameters["consistency_level"] == "ONE"
    assert str(trace.coordinator) == node.host
    assert trace.duration is not None and trace.started_at is not None
    acts = activities(trace)
    assert acts[0] == f"Parsing {query}", acts
    assert "Preparing statement" in acts
    assert "Executing single-partition query on t" in acts
    # The sstable the flush wrote, with the bytes of the partition in it.
    read = [a for a in acts if a.startswith("Reading partition from sstable")]
    assert read and re.fullmatch(r"Reading partition from sstable \d+: \d+ bytes in its data file",
                                 read[0]), acts
    assert "Partition found in memtable" in acts
    assert "Merged data from memtables and 1 sstables" in acts
    assert "Read 3 live rows and 0 tombstone cells" in acts
    elapsed = [e.source_elapsed for e in trace.events]
    assert elapsed == sorted(elapsed)
    assert all(str(e.source) == node.host for e in trace.events)
    # The rows as Cassandra writes them: an INSERTed session row (a live row however its
    # columns fare), every cell expiring after trace_type_query_ttl (a day).
    row = session.execute(
        "SELECT client, command, coordinator, coordinator_port, request, started_at, "
        "ttl(command), ttl(duration), writetime(duration), writetime(command) "
        "FROM system_traces.sessions WHERE session_id = %s", [trace.trace_id]).one()
    assert row.command == "QUERY" and row.request == "Execute CQL3 query"
    # Cassandra 5.0 writes the node's storage (internode) port, not its native one.
    assert str(row.coordinator) == node.host and row.coordinator_port == 7000
    assert {e.source_port for e in session.execute(
        "SELECT source_port FROM system_traces.events WHERE session_id = %s",
        [trace.trace_id])} == {7000}
    assert str(row.client) == "127.0.0.1" and row.started_at == trace.started_at
    assert 86_000 < row.ttl_command <= 86_400 and 86_000 < row.ttl_duration <= 86_400
    assert row.writetime_duration >= row.writetime_command
    ttls = [r[0] for r in session.execute(
        "SELECT ttl(activity) FROM system_traces.events WHERE session_id = %s", [trace.trace_id])]
    assert len(ttls) == len(trace.events) and all(86_000 < t <= 86_400 for t in ttls), ttls


def test_the_row_cache_hit_is_traced(session, ks):
    session.execute(f"CREATE TABLE {ks}.cached (p int PRIMARY KEY, v int)")
    session.execute(f"INSERT INTO {ks}.cached (p, v) VALUES (7, 7)")
    query = f"SELECT * FROM {ks}.cached WHERE p = 7"
    _, first = traced(session, query)
    _, second = traced(session, query)
    # The memtable answers the first read; the cache learns the partition is known (absent
    # from sstables) and the second read is a hit.
    assert "Row cache miss" in activities(first), activities(first)
    assert "Row cache hit" in activities(second), activities(second)


def test_bloom_filter_skips_are_traced(node, session, ks):
    session.execute(f"CREATE TABLE {ks}.bloom (p int PRIMARY KEY, v int) "
                    "WITH caching = {'enabled': 'false'}")
    session.execute(f"INSERT INTO {ks}.bloom (p, v) VALUES (1, 1)")
    nodetool(node, "flush", ks, "bloom")
    _, trace = traced(session, f"SELECT * FROM {ks}.bloom WHERE p = 2")
    acts = activities(trace)
    assert any(re.fullmatch(r"Bloom filter allows skipping sstable \d+", a) for a in acts), acts
    assert "Read 0 live rows and 0 tombstone cells" in acts


def test_prepared_statements_are_traced(session, flushed):
    prepared = session.prepare(f"SELECT v FROM {flushed} WHERE p = ? AND c = ?")
    rs, trace = traced(session, prepared, [1, 2])
    assert [r.v for r in rs] == ["b"]
    assert trace.request_type == "Execute CQL3 prepared query"
    assert trace.parameters["query"] == prepared.query_string
    acts = activities(trace)
    assert "Executing single-partition query on t" in acts
    assert "Read 1 live rows and 0 tombstone cells" in acts
    assert not any(a.startswith("Parsing") for a in acts)


def test_writes_and_batches_are_traced(session, ks):
    session.execute(f"CREATE TABLE {ks}.w (p int, c int, PRIMARY KEY (p, c))")
    _, insert = traced(session, f"INSERT INTO {ks}.w (p, c) VALUES (1, 1)")
    assert "Appending to commitlog" in activities(insert)
    assert "Adding to w memtable" in activities(insert)
    batch = BatchStatement()
    prepared = session.prepare(f"INSERT INTO {ks}.w (p, c) VALUES (?, ?)")
    batch.add(prepared, [2, 1])
    batch.add(f"INSERT INTO {ks}.w (p, c) VALUES (3, 1)")
    _, trace = traced(session, batch)
    assert trace.request_type == "Execute batch of CQL3 queries"
    acts = activities(trace)
    assert f"Parsing INSERT INTO {ks}.w (p, c) VALUES (3, 1)" in acts
    assert acts.count("Appending to commitlog") == 1
    assert acts.count("Adding to w memtable") == 2
    assert sorted(r.p for r in session.execute(f"SELECT p FROM {ks}.w")) == [1, 2, 3]


def test_an_untraced_request_carries_no_trace(session, flushed):
    rs = session.execute(f"SELECT * FROM {flushed} WHERE p = 1")
    assert rs.get_all_query_traces() == []


def test_a_failed_request_is_traced_too(session, ks):
    with pytest.raises(Exception) as err:
        session.execute(f"SELECT * FROM {ks}.nosuch", trace=True)
    assert "unconfigured table nosuch" in str(err.value)
    rows = wait_for("the failed request's session", lambda: [
        r for r in session.execute("SELECT parameters, duration FROM system_traces.sessions")
        if r.parameters and r.parameters.get("query") == f"SELECT * FROM {ks}.nosuch"
        and r.duration is not None])
    assert len(rows) == 1


def test_system_traces_is_described_as_cassandra_has_it(cluster, session):
    ks = session.execute(
        "SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = 'system_traces'"
    ).one()
    assert ks.replication == {"class": "org.apache.cassandra.locator.SimpleStrategy",
                              "replication_factor": "2"}
    tables = {r.table_name: r for r in session.execute(
        "SELECT table_name, id, comment, gc_grace_seconds FROM system_schema.tables "
        "WHERE keyspace_name = 'system_traces'")}
    assert sorted(tables) == ["events", "sessions"]
    # Cassandra's ids (`TableId.forSystemTable`): the same on every node and in Cassandra.
    assert str(tables["sessions"].id) == "c5e99f16-8677-3914-b17e-960613512345"
    assert str(tables["events"].id) == "8826e8e9-e16a-3728-8753-3bc1fc713c25"
    assert tables["sessions"].comment == "tracing sessions"
    assert tables["events"].gc_grace_seconds == 0
    cluster.refresh_schema_metadata()
    meta = cluster.metadata.keyspaces["system_traces"]
    sessions = meta.tables["sessions"]
    assert [c.name for c in sessions.partition_key] == ["session_id"]
    assert {n: c.cql_type for n, c in sessions.columns.items()} == {
        "session_id": "uuid", "client": "inet", "command": "text", "coordinator": "inet",
        "coordinator_port": "int", "duration": "int", "parameters": "map<text, text>",
        "request": "text", "started_at": "timestamp"}
    events = meta.tables["events"]
    assert [c.name for c in events.clustering_key] == ["event_id"]
    assert {n: c.cql_type for n, c in events.columns.items()} == {
        "session_id": "uuid", "event_id": "timeuuid", "activity": "text", "source": "inet",
        "source_elapsed": "int", "source_port": "int", "thread": "text"}


def test_users_cannot_write_system_traces(session):
    with pytest.raises(Unauthorized) as err:
        session.execute("INSERT INTO system_traces.sessions (session_id, duration) "
                        "VALUES (uuid(), 1)")
    assert "system_traces keyspace is not user-modifiable" in str(err.value)


def test_trace_probability_traces_requests_nobody_asked_about(node, session, flushed):
    assert nodetool(node, "gettraceprobability").stdout == "Current trace probability: 0.0\n"
    query = f"SELECT * FROM {flushed} WHERE p = 1 AND c = 3"
    try:
        nodetool(node, "settraceprobability", "1")
        assert nodetool(node, "gettraceprobability").stdout == "Current trace probability: 1.0\n"
        for _ in range(3):
            rs = session.execute(query)
            # Cassandra answers a request traced by probability without the tracing id.
            assert rs.get_all_query_traces() == []
    finally:
        nodetool(node, "settraceprobability", "0")
    assert nodetool(node, "gettraceprobability").stdout == "Current trace probability: 0.0\n"

    def picked():
        rows = [r for r in session.execute(
                    "SELECT session_id, parameters, duration FROM system_traces.sessions")
                if r.parameters and r.parameters.get("query") == query
                and r.duration is not None]
        return rows if len(rows) >= 3 else None
    rows = wait_for("three sessions picked by probability", picked)
    events = list(session.execute(
        "SELECT activity FROM system_traces.events WHERE session_id = %s", [rows[0].session_id]))
    assert "Executing single-partition query on t" in [e.activity for e in events]


def test_every_session_of_a_burst_is_stored_with_its_events(node, session, ks):
    # 400 requests traced by probability at once: the writer gathers the waiting sessions
    # into shared writes; the queue (4096) holds them all, so every one is stored.
    from cassandra.concurrent import execute_concurrent_with_args
    session.execute(f"CREATE TABLE {ks}.burst (k int PRIMARY KEY, v text)")
    insert = session.prepare(f"INSERT INTO {ks}.burst (k, v) VALUES (?, ?)")
    try:
        nodetool(node, "settraceprobability", "1")
        results = execute_concurrent_with_args(
            session, insert, [(i, "x" * i) for i in range(400)], concurrency=64)
        assert all(ok for ok, _ in results)
    finally:
        nodetool(node, "settraceprobability", "0")

    def stored():
        rows = [r for r in session.execute(
                    "SELECT session_id, parameters, duration FROM system_traces.sessions")
                if r.parameters and "burst" in r.parameters.get("query", "")
                and r.duration is not None]
        return rows if len(rows) >= 400 else None
    rows = wait_for("400 sessions stored", stored, timeout=60)
    assert len(rows) == 400
    for r in rows[:20]:
        events = list(session.execute(
            "SELECT activity FROM system_traces.events WHERE session_id = %s", [r.session_id]))
        assert any("memtable" in e.activity.lower() for e in events), events


def test_trace_probability_out_of_range_is_refused(node):
    for bad in ["2", "1.01"]:
        out = nodetool(node, "settraceprobability", bad, ok=False)
        assert out.returncode != 0
        assert "Trace probability must be between 0 and 1" in out.stderr
    # A negative number reads as an option, as in Cassandra's nodetool.
    assert nodetool(node, "settraceprobability", "-0.5", ok=False).returncode != 0
    out = nodetool(node, "settraceprobability", "often", ok=False)
    assert out.returncode != 0 and "often" in out.stderr
    out = nodetool(node, "settraceprobability", ok=False)
    assert out.returncode != 0
    # The REST API refuses it too.
    url = f"http://127.0.0.1:{node.api_port}/storage_service/trace_probability?probability=1.5"
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(urllib.request.Request(url, method="POST"), timeout=10)
    assert err.value.code == 400
    assert nodetool(node, "gettraceprobability").stdout == "Current trace probability: 0.0\n"


def test_cqlsh_tracing_on_prints_the_session(node, flushed):
    rc, out, err = cqlsh(node, f"TRACING ON; SELECT * FROM {flushed} WHERE p = 1;")
    assert rc == 0, err
    assert "TRACING set to ON" in out
    m = re.search(r"Tracing session: ([0-9a-f-]{36})", out)
    assert m, out
    assert "activity" in out and "source_elapsed" in out
    assert "Executing single-partition query on t" in out
    assert "Read 3 live rows and 0 tombstone cells" in out
    assert "Request complete" in out


@pytest.fixture(scope="module")
def slow_node(node_factory, tmp_path_factory):
    cfg = tmp_path_factory.mktemp("tracing-slow") / "cairn.yaml"
    # Every statement takes more than a microsecond: each one is logged.
    cfg.write_text("slow_query_log_timeout: 1us\n")
    return node_factory("tracing-slow", ["--config", str(cfg)])


def test_slow_queries_are_logged_and_counted(slow_node):
    c = make_cluster(slow_node)
    try:
        s = c.connect()
        s.execute("CREATE KEYSPACE slow WITH replication = "
                  "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE slow.t (p int PRIMARY KEY, v int)")
        s.execute("SELECT * FROM slow.t WHERE p = 42")
    finally:
        c.shutdown()
    log = slow_node.log_path.read_text(errors="replace")
    assert re.search(r"slow query: <SELECT \* FROM slow\.t WHERE p = 42>, time \d+ msec - "
                     r"slow timeout 0 msec", log), slow_node.log_tail()
    metrics = urllib.request.urlopen(
        f"http://127.0.0.1:{slow_node.metrics_port}/metrics", timeout=10).read().decode()
    m = re.search(r"^scylla_cql_slow_queries\{shard=\"0\"\} (\d+)", metrics, re.M)
    assert m and int(m.group(1)) >= 3, metrics[:2000]


def test_slow_query_timeout_is_a_duration(tmp_path):
    from conftest import serve_refused
    err = serve_refused(tmp_path, "slow_query_log_timeout: 500\n")
    assert "slow_query_log_timeout" in err


@pytest.fixture(scope="module")
def ring(tmp_root):
    """Three nodes (127.0.0.1–3) and a session, with keyspace `r` replicated on all three."""
    from test_cluster import three_nodes
    with three_nodes(tmp_root / "cluster-tracing") as nodes:
        c = make_cluster(nodes[0])
        try:
            s = c.connect()
            s.execute("CREATE KEYSPACE r WITH replication = "
                      "{'class': 'SimpleStrategy', 'replication_factor': 3}")
            s.execute("CREATE TABLE r.t (p int PRIMARY KEY, v int)")
            s.execute("CREATE KEYSPACE r1 WITH replication = "
                      "{'class': 'SimpleStrategy', 'replication_factor': 1}")
            s.execute("CREATE TABLE r1.c (p int PRIMARY KEY, n counter)")
            yield nodes, s
        finally:
            c.shutdown()


def events_by_source(session, trace_id):
    """`system_traces.events` of a session, grouped by `source`: {source: [activity, …]}."""
    rows = session.execute(SimpleStatement(
        "SELECT source, activity, thread, source_elapsed FROM system_traces.events "
        "WHERE session_id = %s", consistency_level=ConsistencyLevel.QUORUM), [trace_id])
    out = {}
    for row in rows:
        out.setdefault(str(row.source), []).append(row.activity)
    return out


def replica_events(session, trace, expected):
    """Polls until every replica in `expected` ({source: [activity, …]}) recorded at least
    those activities under the trace's session (replicas store their events on their own,
    possibly after the coordinator's `duration`); returns the events by source."""
    def check():
        got = events_by_source(session, trace.trace_id)
        ok = all(set(acts) <= set(got.get(src, ())) for src, acts in expected.items())
        return got if ok else None
    try:
        return wait_for(f"replica events {expected}", check)
    except AssertionError:
        raise AssertionError(f"expected {expected}, got {events_by_source(session, trace.trace_id)}")


def test_a_traced_request_in_a_ring_names_the_replicas(ring):
    nodes, s = ring
    write = SimpleStatement("INSERT INTO r.t (p, v) VALUES (1, 1)",
                            consistency_level=ConsistencyLevel.ALL)
    _, w = traced(s, write)
    others = {n.host for n in nodes} - {str(w.coordinator)}
    port = nodes[0].storage_port
    # Cassandra 5.0's text: the verb's 5.0 name, the peer with its storage port, the size.
    sent = [a for a in activities(w) if a.startswith("Sending MUTATION_REQ ")]
    assert len(sent) == 2 and all(re.fullmatch(
        rf"Sending MUTATION_REQ message to /127\.0\.0\.\d:{port} message size \d+ bytes", a)
        for a in sent), sent
    assert {a.split(" /")[1].split(":")[0] for a in sent} == others, sent
    coordinator = str(w.coordinator)
    got = replica_events(s, w, {h: [f"Enqueuing response to /{coordinator}:{port}"]
                                for h in others})
    # Each answer leaves its replica and arrives at the coordinator, as Cassandra 5.0 says it
    # (at ALL the coordinator waits for both).
    for h in others:
        assert any(re.fullmatch(rf"Sending MUTATION_RSP message to /{coordinator}:{port} "
                                r"message size \d+ bytes", a) for a in got[h]), got
    assert {a.split(" /")[1] for a in got[coordinator]
            if a.startswith("MUTATION_RSP message received from ")} \
        == {f"{h}:{port}" for h in others}, got
    # The session's and events' ports are the storage port, as Cassandra 5.0 writes them.
    session_row = s.execute(SimpleStatement(
        "SELECT coordinator_port FROM system_traces.sessions WHERE session_id = %s",
        consistency_level=ConsistencyLevel.QUORUM), [w.trace_id]).one()
    assert session_row.coordinator_port == port
    ports = {(str(r.source), r.source_port) for r in s.execute(SimpleStatement(
        "SELECT source, source_port FROM system_traces.events WHERE session_id = %s",
        consistency_level=ConsistencyLevel.QUORUM), [w.trace_id])}
    assert {p for _, p in ports} == {port}, ports
    read = SimpleStatement("SELECT * FROM r.t WHERE p = 1",
                           consistency_level=ConsistencyLevel.ALL)
    rs, r = traced(s, read)
    assert [x.v for x in rs] == [1]
    others = {n.host for n in nodes} - {str(r.coordinator)}
    sent = {a.split(" /")[1].split(":")[0] for a in activities(r)
            if re.fullmatch(rf"Sending READ_REQ message to /[0-9.]+:{port} message size \d+ bytes",
                            a)}
    assert sent == others, activities(r)
    coordinator = str(r.coordinator)
    replica_events(s, r, {h: [f"Enqueuing response to /{coordinator}:{port}"] for h in others})
    # The session is read back through any node (system_traces has two replicas).
    for n in nodes:
        one = make_cluster(n)
        try:
            row = one.connect().execute(
                SimpleStatement("SELECT duration FROM system_traces.sessions "
                                "WHERE session_id = %s",
                                consistency_level=ConsistencyLevel.ONE),
                [r.trace_id]).one()
            assert row is not None and row.duration is not None
        finally:
            one.shutdown()


def test_replicas_record_their_own_events_of_a_write(ring):
    nodes, s = ring
    write = SimpleStatement("INSERT INTO r.t (p, v) VALUES (2, 2)",
                            consistency_level=ConsistencyLevel.QUORUM)
    _, w = traced(s, write)
    coordinator = f"{w.coordinator}:{nodes[0].storage_port}"
    others = {n.host for n in nodes} - {str(w.coordinator)}
    expected = {h: [f"MUTATION_REQ message received from /{coordinator}",
                    "Appending to commitlog",
                    "Adding to t memtable",
                    f"Enqueuing response to /{coordinator}"] for h in others}
    got = replica_events(s, w, expected)
    for h in others:
        acts = got[h]
        # In Cassandra's order: received, applied, answered.
        assert acts.index(f"MUTATION_REQ message received from /{coordinator}") \
            < acts.index("Adding to t memtable") \
            < acts.index(f"Enqueuing response to /{coordinator}"), acts
        # A replica records nothing of the coordinator's own steps.
        assert not any(a.startswith("Parsing ") for a in acts), acts
    # The coordinator's events are its own: no replica's text under its source (what it
    # receives are the replicas' answers).
    assert not any("_REQ message received" in a for a in got[str(w.coordinator)]), got


def test_replicas_record_their_own_events_of_a_read(ring):
    nodes, s = ring
    s.execute(SimpleStatement("INSERT INTO r.t (p, v) VALUES (3, 3)",
                              consistency_level=ConsistencyLevel.ALL))
    read = SimpleStatement("SELECT * FROM r.t WHERE p = 3", consistency_level=ConsistencyLevel.ALL)
    rs, r = traced(s, read)
    assert [x.v for x in rs] == [3]
    coordinator = f"{r.coordinator}:{nodes[0].storage_port}"
    others = {n.host for n in nodes} - {str(r.coordinator)}
    expected = {h: ["Executing single-partition query on t",
                    "Partition found in memtable",
                    "Read 1 live rows and 0 tombstone cells",
                    f"Enqueuing response to /{coordinator}"] for h in others}
    got = replica_events(s, r, expected)
    # Each replica received what the coordinator sent it (the coordinator, a replica, reads
    # the data itself: the others give digests).
    for h in others:
        sent = [a.split()[1] for a in got[str(r.coordinator)]
                if re.fullmatch(rf"Sending \w+ message to /{h}:\d+ message size \d+ bytes", a)]
        received = [a for a in got[h] if " message received from " in a]
        assert sent and received == [f"{sent[0]} message received from /{coordinator}"], got
    # The replicas' rows carry their own thread and time since the message arrived.
    rows = list(s.execute(SimpleStatement(
        "SELECT source, thread, source_elapsed FROM system_traces.events WHERE session_id = %s",
        consistency_level=ConsistencyLevel.QUORUM), [r.trace_id]))
    for row in rows:
        assert row.thread and row.source_elapsed is not None and row.source_elapsed >= 0, row


def test_replicas_trace_range_reads_and_paxos_rounds(ring):
    nodes, s = ring
    s.execute(SimpleStatement("INSERT INTO r.t (p, v) VALUES (4, 4)",
                              consistency_level=ConsistencyLevel.ALL))
    scan = SimpleStatement("SELECT * FROM r.t", consistency_level=ConsistencyLevel.ALL)
    rs, t = traced(s, scan)
    assert 4 in [x.v for x in rs]
    coordinator = f"{t.coordinator}:{nodes[0].storage_port}"
    others = {n.host for n in nodes} - {str(t.coordinator)}
    replica_events(s, t, {h: [f"RANGE_REQ message received from /{coordinator}",
                              f"Enqueuing response to /{coordinator}"] for h in others})
    cas = SimpleStatement("INSERT INTO r.t (p, v) VALUES (5, 5) IF NOT EXISTS",
                          consistency_level=ConsistencyLevel.QUORUM,
                          serial_consistency_level=ConsistencyLevel.SERIAL)
    rs, t = traced(s, cas)
    assert rs.one()[0] is True
    coordinator = f"{t.coordinator}:{nodes[0].storage_port}"
    others = {n.host for n in nodes} - {str(t.coordinator)}
    assert any(a.startswith("Sending PAXOS_PREPARE_REQ message to /") for a in activities(t)), \
        activities(t)
    phases = ["PAXOS_PREPARE_REQ", "PAXOS_PROPOSE_REQ", "PAXOS_COMMIT_REQ"]
    got = replica_events(s, t, {h: [f"{p} message received from /{coordinator}"
                                    for p in phases] for h in others})
    for h in others:
        responses = [a for a in got[h] if a == f"Enqueuing response to /{coordinator}"]
        assert len(responses) >= 3, got[h]


def test_a_counter_leader_records_its_events(ring):
    from test_cluster import alone
    nodes, s = ring
    # One replica per partition: a coordinator that is not it forwards the increment to it.
    update = SimpleStatement("UPDATE r1.c SET n = n + 1 WHERE p = 7",
                             consistency_level=ConsistencyLevel.ONE)
    forwarded = []
    for n in nodes:
        c = alone(n)
        try:
            _, t = traced(c.connect(), update)
        finally:
            c.shutdown()
        sent = [a for a in activities(t) if a.startswith("Sending COUNTER_MUTATION_REQ message")]
        if sent:
            forwarded.append((t, sent[0].split(" /")[1].split(":")[0]))
    # Two of the three nodes are not the partition's replica.
    assert len(forwarded) == 2, forwarded
    for t, leader in forwarded:
        coordinator = f"{t.coordinator}:{nodes[0].storage_port}"
        replica_events(s, t, {leader: [f"COUNTER_MUTATION_REQ message received from /{coordinator}",
                                       "Executing single-partition query on c",
                                       "Adding to c memtable",
                                       f"Enqueuing response to /{coordinator}"]})
    assert s.execute("SELECT n FROM r1.c WHERE p = 7").one().n == 3


def test_untraced_requests_leave_no_replica_events(ring):
    nodes, s = ring

    def all_events():
        return s.execute(SimpleStatement("SELECT count(*) FROM system_traces.events",
                                         consistency_level=ConsistencyLevel.ALL)).one()[0]

    before = all_events()
    for i in range(10):
        s.execute(SimpleStatement(f"INSERT INTO r.t (p, v) VALUES ({100 + i}, {i})",
                                  consistency_level=ConsistencyLevel.ALL))
        s.execute(SimpleStatement(f"SELECT * FROM r.t WHERE p = {100 + i}",
                                  consistency_level=ConsistencyLevel.ALL))
    # A traced write after them: each replica's trace writer stores sessions in order, so
    # once its events are there, anything the untraced requests had left would be too.
    _, w = traced(s, SimpleStatement("INSERT INTO r.t (p, v) VALUES (200, 0)",
                                     consistency_level=ConsistencyLevel.ALL))
    coordinator = str(w.coordinator)
    others = {n.host for n in nodes} - {coordinator}
    got = replica_events(s, w, {h: [f"Enqueuing response to /{coordinator}:{nodes[0].storage_port}"]
                                for h in others})
    assert all_events() == before + sum(len(a) for a in got.values())
