"""Counters through the Python driver: counter tables, `UPDATE … SET c = c ± n`, counter
batches, deletes, reads and aggregates, Cassandra's refusals (checked against Cassandra 5.0's
texts), concurrent increments summing exactly, and increments surviving SIGKILL without
being counted twice."""

import threading

import pytest
from cassandra import InvalidRequest, ConsistencyLevel
from cassandra.query import BatchStatement, BatchType, SimpleStatement
from cassandra.concurrent import execute_concurrent_with_args

from conftest import make_cluster
from helpers import expect_error, nodetool, server_message, tuples


def counter_table(kss, name, statics=False):
    extra = ", s counter static" if statics else ""
    kss.execute(f"CREATE TABLE {name} (k int, ck int, a counter, b counter{extra}, "
                "PRIMARY KEY (k, ck))")
    return name


def refused(kss, query, message, *args):
    err = expect_error(InvalidRequest, kss.execute, query, *args)
    assert server_message(err) == message, server_message(err)


def test_increments_decrements_and_reads(kss, tname):
    t = counter_table(kss, tname)
    kss.execute(f"UPDATE {t} SET a = a + 5 WHERE k = 1 AND ck = 1")
    kss.execute(f"UPDATE {t} SET a = a - 2, b = b + 7 WHERE k = 1 AND ck = 1")
    kss.execute(f"UPDATE {t} SET a += 10 WHERE k = 1 AND ck = 1")
    kss.execute(f"UPDATE {t} SET b -= 1 WHERE k = 1 AND ck = 2")
    assert tuples(kss, f"SELECT ck, a, b FROM {t} WHERE k = 1") == [(1, 13, 7), (2, None, -1)]
    # Negative deltas through a literal and a bound value; several updates of one counter in
    # one statement add up.
    kss.execute(f"UPDATE {t} SET a = a + -3, a = a + 1 WHERE k = 1 AND ck = 1")
    upd = kss.prepare(f"UPDATE {t} SET a = a + ? WHERE k = ? AND ck = ?")
    assert upd.column_metadata[0].type.typename == "counter"
    kss.execute(upd, (100, 1, 1))
    assert tuples(kss, f"SELECT a FROM {t} WHERE k = 1 AND ck = 1") == [(111,)]
    # Aggregates over counters, and writetime-free reads of whole rows.
    assert tuples(kss, f"SELECT sum(a), count(a), max(a) FROM {t} WHERE k = 1") == [(111, 1, 111)]
    assert tuples(kss, f"SELECT * FROM {t}") == [(1, 1, 111, 7), (1, 2, None, -1)]
    # IN on the key updates each partition.
    kss.execute(f"UPDATE {t} SET b = b + 1 WHERE k IN (2, 3) AND ck = 0")
    assert tuples(kss, f"SELECT k, b FROM {t} WHERE k IN (2, 3) AND ck = 0") == [(2, 1), (3, 1)]


def test_static_counters(kss, tname):
    t = counter_table(kss, tname, statics=True)
    kss.execute(f"UPDATE {t} SET s = s + 4 WHERE k = 1")
    kss.execute(f"UPDATE {t} SET s = s + 1, a = a + 2 WHERE k = 1 AND ck = 5")
    assert tuples(kss, f"SELECT k, ck, s, a FROM {t} WHERE k = 1") == [(1, 5, 5, 2)]


def test_deletes(kss, tname):
    t = counter_table(kss, tname)
    for ck in range(3):
        kss.execute(f"UPDATE {t} SET a = a + 3, b = b + 4 WHERE k = 1 AND ck = {ck}")
    kss.execute(f"DELETE a FROM {t} WHERE k = 1 AND ck = 0")
    kss.execute(f"DELETE FROM {t} WHERE k = 1 AND ck = 1")
    assert tuples(kss, f"SELECT ck, a, b FROM {t} WHERE k = 1") == [(0, None, 4), (2, 3, 4)]
    # A deleted counter cell stays deleted (Cassandra: increments after a counter's deletion
    # are lost); a deleted row's counters start again from zero.
    kss.execute(f"UPDATE {t} SET a = a + 1 WHERE k = 1 AND ck = 0")
    kss.execute(f"UPDATE {t} SET a = a + 1 WHERE k = 1 AND ck = 1")
    assert tuples(kss, f"SELECT ck, a, b FROM {t} WHERE k = 1") == [(0, None, 4), (1, 1, None), (2, 3, 4)]
    kss.execute(f"DELETE FROM {t} WHERE k = 1")
    assert tuples(kss, f"SELECT * FROM {t} WHERE k = 1") == []
    kss.execute(f"UPDATE {t} SET b = b + 2 WHERE k = 1 AND ck = 2")
    assert tuples(kss, f"SELECT ck, a, b FROM {t} WHERE k = 1") == [(2, None, 2)]


def test_deleted_row_survives_flush(kss, tname, node):
    """The same deletes, read back from sstables after a flush (reads merge versions from
    memtables and sstables before applying the deletion)."""
    t = counter_table(kss, tname)
    for _ in range(5):
        kss.execute(f"UPDATE {t} SET a = a + 10 WHERE k = 7 AND ck = 1")
    nodetool(node, "flush")
    kss.execute(f"DELETE FROM {t} WHERE k = 7 AND ck = 1")
    kss.execute(f"UPDATE {t} SET a = a + 1 WHERE k = 7 AND ck = 1")
    assert tuples(kss, f"SELECT a FROM {t} WHERE k = 7 AND ck = 1") == [(1,)]
    nodetool(node, "flush")
    kss.execute(f"UPDATE {t} SET a = a + 1 WHERE k = 7 AND ck = 1")
    assert tuples(kss, f"SELECT a FROM {t} WHERE k = 7 AND ck = 1") == [(2,)]


def test_counter_batches(kss, tname):
    t = counter_table(kss, tname)
    kss.execute(f"""BEGIN COUNTER BATCH
        UPDATE {t} SET a = a + 1 WHERE k = 1 AND ck = 1;
        UPDATE {t} SET a = a + 2 WHERE k = 1 AND ck = 1;
        UPDATE {t} SET b = b - 5 WHERE k = 2 AND ck = 1;
        APPLY BATCH""")
    assert tuples(kss, f"SELECT k, a, b FROM {t}") == [(1, 3, None), (2, None, -5)]
    # An unlogged batch of counter statements is a counter batch too; so is the protocol's.
    kss.execute(f"BEGIN UNLOGGED BATCH UPDATE {t} SET a = a + 10 WHERE k = 1 AND ck = 1; APPLY BATCH")
    b = BatchStatement(batch_type=BatchType.COUNTER)
    upd = kss.prepare(f"UPDATE {t} SET a = a + ? WHERE k = ? AND ck = ?")
    for _ in range(4):
        b.add(upd, (1, 1, 1))
    kss.execute(b)
    assert tuples(kss, f"SELECT a FROM {t} WHERE k = 1 AND ck = 1") == [(17,)]
    # Increments of one cell in a batch are one update (Cassandra merges them first): a later
    # decrement counts whatever the values, and a deletion at the batch's timestamp shadows
    # the whole of it.
    kss.execute(f"""BEGIN COUNTER BATCH
        UPDATE {t} SET a = a + 5 WHERE k = 3 AND ck = 1;
        UPDATE {t} SET a = a - 3 WHERE k = 3 AND ck = 1;
        APPLY BATCH""")
    assert tuples(kss, f"SELECT a FROM {t} WHERE k = 3 AND ck = 1") == [(2,)]
    clock = kss.cluster.timestamp_generator
    kss.cluster.timestamp_generator = lambda: 2_000_000_000_000_000
    try:
        b = BatchStatement(batch_type=BatchType.COUNTER)
        b.add(upd, (1, 4, 1))
        b.add(upd, (1, 4, 1))
        kss.execute(b)
        kss.execute(f"DELETE FROM {t} WHERE k = 4")
    finally:
        kss.cluster.timestamp_generator = clock
    assert tuples(kss, f"SELECT a FROM {t} WHERE k = 4") == []


def test_refusals(kss, tname):
    t = counter_table(kss, tname)
    kss.execute(f"CREATE TABLE {tname}_plain (k int PRIMARY KEY, v int)")
    p = f"{tname}_plain"
    refused(kss, f"INSERT INTO {t} (k, ck, a) VALUES (1, 1, 1)",
            "INSERT statements are not allowed on counter tables, use UPDATE instead")
    refused(kss, f"INSERT INTO {t} JSON '{{\"k\": 1, \"ck\": 1}}'",
            "INSERT statements are not allowed on counter tables, use UPDATE instead")
    refused(kss, f"UPDATE {t} SET a = 3 WHERE k = 1 AND ck = 1",
            "Cannot set the value of counter column a (counters can only be incremented/decremented, not set)")
    refused(kss, f"UPDATE {t} USING TTL 10 SET a = a + 1 WHERE k = 1 AND ck = 1",
            "Cannot provide custom TTL for counter updates")
    refused(kss, f"UPDATE {t} USING TIMESTAMP 10 SET a = a + 1 WHERE k = 1 AND ck = 1",
            "Cannot provide custom timestamp for counter updates")
    refused(kss, f"DELETE FROM {t} USING TIMESTAMP 10 WHERE k = 1 AND ck = 1",
            "Cannot provide custom timestamp for counter updates")
    refused(kss, f"UPDATE {t} SET a = a + 1 WHERE k = 1 AND ck = 1 IF EXISTS",
            "Conditional updates are not supported on counter tables")
    refused(kss, f"UPDATE {t} SET a = a + 1 WHERE k = 1 AND ck = 1 IF a = 1",
            "Conditional updates are not supported on counter tables")
    refused(kss, f"DELETE FROM {t} WHERE k = 1 AND ck = 1 IF EXISTS",
            "Conditional updates are not supported on counter tables")
    refused(kss, f"UPDATE {t} SET a = a + null WHERE k = 1 AND ck = 1",
            "Invalid null value for counter increment/decrement")
    upd = kss.prepare(f"UPDATE {t} SET a = a + ? WHERE k = 1 AND ck = 1")
    refused(kss, upd, "Invalid null value for counter increment", (None,))
    sub = kss.prepare(f"UPDATE {t} SET a = a - ? WHERE k = 1 AND ck = 1")
    refused(kss, sub, "The negation of -9223372036854775808 overflows supported counter "
            "precision (signed 8 bytes integer)", (-2**63,))
    refused(kss, f"UPDATE {p} SET v = v + 1 WHERE k = 1",
            "Invalid operation (v = v + 1) for non counter column v")
    # Batches: Cassandra's checks and texts.
    cu = f"UPDATE {t} SET a = a + 1 WHERE k = 1 AND ck = 1"
    pu = f"UPDATE {p} SET v = 1 WHERE k = 1"
    refused(kss, f"BEGIN COUNTER BATCH {pu}; APPLY BATCH",
            "Cannot include non-counter statement in a counter batch")
    refused(kss, f"BEGIN UNLOGGED BATCH {cu}; {pu}; APPLY BATCH",
            "Counter and non-counter mutations cannot exist in the same batch")
    refused(kss, f"BEGIN BATCH {cu}; APPLY BATCH",
            "Cannot include a counter statement in a logged batch")
    refused(kss, f"BEGIN COUNTER BATCH USING TIMESTAMP 5 {cu}; APPLY BATCH",
            "Cannot provide custom timestamp for counter BATCH")
    refused(kss, f"BEGIN UNLOGGED BATCH USING TIMESTAMP 5 {cu}; APPLY BATCH",
            "Cannot provide custom timestamp for a BATCH containing counters")
    # Consistency levels a counter write refuses.
    refused(kss, SimpleStatement(cu, consistency_level=ConsistencyLevel.ANY),
            f"Consistency level ANY is not yet supported for counter table {t}")
    refused(kss, SimpleStatement(cu, consistency_level=ConsistencyLevel.SERIAL),
            "Counter operations are inherently non-serializable")
    # The counter table's shape in the schema tables.
    ks = kss.keyspace
    types = dict(tuples(kss, "SELECT column_name, type FROM system_schema.columns "
                             f"WHERE keyspace_name = '{ks}' AND table_name = '{t}'"))
    assert types["a"] == "counter" and types["b"] == "counter"
    assert tuples(kss, f"SELECT a FROM {t}") == []


def test_concurrent_increments_sum_exactly(cluster, ks, tname):
    s = cluster.connect(ks)
    try:
        t = counter_table(s, tname)
        upd = s.prepare(f"UPDATE {t} SET a = a + ?, b = b - 1 WHERE k = ? AND ck = 0")
        threads, per_thread = 6, 300
        errors = []

        def work(n):
            try:
                args = [(n + 1, k % 3) for k in range(per_thread)]
                execute_concurrent_with_args(s, upd, args, concurrency=16, raise_on_first_error=True)
            except Exception as e:  # noqa: BLE001 — reported below
                errors.append(e)

        ts = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
        for th in ts:
            th.start()
        for th in ts:
            th.join()
        assert not errors, errors
        got = {r.k: (r.a, r.b) for r in s.execute(f"SELECT k, a, b FROM {t}")}
        want = {}
        for n in range(threads):
            for k in range(per_thread):
                a, b = want.get(k % 3, (0, 0))
                want[k % 3] = (a + n + 1, b - 1)
        assert got == want
    finally:
        s.shutdown()


@pytest.fixture(scope="module")
def knode(node_factory):
    """A node of its own, killed and restarted by the crash test."""
    return node_factory("counters_kill")


def test_increments_survive_sigkill_exactly_once(knode):
    c = make_cluster(knode)
    s = c.connect()
    n = 2000
    try:
        s.execute("CREATE KEYSPACE ck WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE ck.c (k int, ck int, a counter, PRIMARY KEY (k, ck))")
        upd = s.prepare("UPDATE ck.c SET a = a + 1 WHERE k = ? AND ck = ?")
        upd.consistency_level = ConsistencyLevel.ONE
        # Half before a flush (in an sstable), half after (only in the commitlog).
        execute_concurrent_with_args(s, upd, [(i % 4, 0) for i in range(n // 2)],
                                     concurrency=32, raise_on_first_error=True)
        nodetool(knode, "flush")
        execute_concurrent_with_args(s, upd, [(i % 4, 0) for i in range(n // 2)],
                                     concurrency=32, raise_on_first_error=True)
    finally:
        c.shutdown()
    for _ in range(2):
        # Killed twice: the second replay sees the first's flushed results again.
        knode.restart(kill=True)
    c = make_cluster(knode)
    s = c.connect()
    try:
        assert sorted(tuples(s, "SELECT k, a FROM ck.c")) == [(k, n // 4) for k in range(4)]
        s.execute("UPDATE ck.c SET a = a + 1 WHERE k = 0 AND ck = 0")
        assert tuples(s, "SELECT a FROM ck.c WHERE k = 0 AND ck = 0") == [(n // 4 + 1,)]
    finally:
        c.shutdown()


# --- A three-node ring ---------------------------------------------------------------------

def _ring_increments(nodes, query_args, cl, per_node, errors):
    """Each node coordinates `per_node` increments from its own thread (a driver that sends
    to it alone); returns how many each acknowledged."""
    from test_cluster import alone
    acked = [0] * len(nodes)

    def work(i, n):
        c = alone(n)
        try:
            s = c.connect()
            stmt = s.prepare(query_args)
            stmt.consistency_level = cl
            for j in range(per_node):
                try:
                    s.execute(stmt, (j % 4,))
                    acked[i] += 1
                except Exception as e:  # noqa: BLE001 — an unacknowledged increment
                    errors.append(e)
        finally:
            c.shutdown()

    ts = [threading.Thread(target=work, args=(i, n)) for i, n in enumerate(nodes)]
    for t in ts:
        t.start()
    return ts, acked


def test_ring_increments_through_every_coordinator_sum_exactly(tmp_root):
    from test_cluster import three_nodes, on, wait_for
    with three_nodes(tmp_root / "counters-ring") as nodes:
        # RF 2: a third of the keys have a coordinator that is not a replica and forwards
        # the increment to a leader (COUNTER_MUTATION).
        on(nodes[0], "CREATE KEYSPACE c2 WITH replication = "
                     "{'class': 'NetworkTopologyStrategy', 'datacenter1': 2}")
        on(nodes[0], "CREATE TABLE c2.t (k int PRIMARY KEY, n counter)")
        on(nodes[0], "CREATE KEYSPACE c3 WITH replication = "
                     "{'class': 'NetworkTopologyStrategy', 'datacenter1': 3}")
        on(nodes[0], "CREATE TABLE c3.t (k int PRIMARY KEY, n counter)")
        per_node = 200
        errors = []
        ts, acked = _ring_increments(nodes, "UPDATE c2.t SET n = n + 1 WHERE k = ?",
                                     ConsistencyLevel.QUORUM, per_node, errors)
        for t in ts:
            t.join()
        assert not errors, errors[:3]
        total = dict(tuples_on(nodes[1], "SELECT k, n FROM c2.t", ConsistencyLevel.QUORUM))
        assert total == {k: 3 * per_node // 4 for k in range(4)}

        # RF 3, a node killed while the other two coordinate increments: nothing counted
        # twice, nothing acknowledged lost; once it is back, a read at ALL repairs it.
        errors = []
        ts, acked = _ring_increments(nodes[:2], "UPDATE c3.t SET n = n + 1 WHERE k = ?",
                                     ConsistencyLevel.QUORUM, 3 * per_node, errors)
        import time
        time.sleep(0.3)
        nodes[2].kill()
        for t in ts:
            t.join()
        for n in nodes[:2]:
            wait_for("nodetool DN", lambda n=n: n.states().get(nodes[2].host) == "DN")
        got = sum(n for _, n in tuples_on(nodes[0], "SELECT k, n FROM c3.t", ConsistencyLevel.QUORUM))
        assert sum(acked) <= got <= sum(acked) + len(errors), (acked, got, errors[:3])
        nodes[2].start()
        wait_for("three UN", lambda: nodes[0].states() == {n.host: "UN" for n in nodes})

        def at_all():
            try:
                return sum(n for _, n in tuples_on(nodes[2], "SELECT k, n FROM c3.t",
                                                   ConsistencyLevel.ALL))
            except Exception:  # noqa: BLE001 — until every node sees the others up
                return None
        wait_for("a read at ALL", lambda: at_all() == got)


def tuples_on(node, query, cl):
    from test_cluster import alone
    c = alone(node)
    try:
        return [tuple(r) for r in c.connect().execute(SimpleStatement(query, consistency_level=cl))]
    finally:
        c.shutdown()
