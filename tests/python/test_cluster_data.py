"""Data through the ring: three `cairn serve` processes on 127.0.0.1–3 (same ports), a keyspace
replicated to all three (NetworkTopologyStrategy {'datacenter1': 3}), reads and writes
coordinated by the storage proxy (crates/cluster/src/proxy/).

The schema is made on one node and is every node's (group 0, crates/cluster/src/schema_log.rs):
the same keyspaces and tables with the same ids everywhere, one schema version, drivers told
of changes made elsewhere; a change never diverges — it needs a majority of the nodes up.

Writes and reads at every consistency level through the token-aware driver; a SIGKILLed node:
QUORUM goes on, ALL is Unavailable, and once it is back a read at ALL finds it stale, answers
the newest value and repairs it; a SIGSTOPped node makes ALL time out (WriteTimeout,
ReadTimeout) instead of hanging. Conditional writes from three coordinators at once are
linearizable (Paxos across the replicas, crates/cluster/src/proxy/paxos/) and need a quorum
of replicas up.
"""

import signal
import threading

import pytest
from cassandra import ConsistencyLevel as CL
from cassandra import ReadTimeout, Unavailable, WriteTimeout, WriteType
from cassandra.cluster import Cluster, ExecutionProfile, EXEC_PROFILE_DEFAULT, NoHostAvailable
from cassandra.policies import FallthroughRetryPolicy, RoundRobinPolicy, TokenAwarePolicy
from cassandra.query import SimpleStatement

from test_cluster import WAIT, alone, on, three_nodes, wait_for

# Short request timeouts: a hung replica answers WriteTimeout / ReadTimeout in 2 s.
TIMEOUTS = "write_request_timeout_in_ms: 2000\nread_request_timeout_in_ms: 2000\n"


@pytest.fixture(scope="module")
def ring(tmp_root):
    with three_nodes(tmp_root / "cluster-data", TIMEOUTS) as nodes:
        on(nodes[0], "CREATE KEYSPACE data WITH replication = "
                     "{'class': 'NetworkTopologyStrategy', 'datacenter1': 3}")
        on(nodes[0], "CREATE TABLE data.t (k int PRIMARY KEY, v text)")
        yield nodes


def token_aware(node):
    profile = ExecutionProfile(load_balancing_policy=TokenAwarePolicy(RoundRobinPolicy()),
                               request_timeout=30, retry_policy=FallthroughRetryPolicy())
    c = Cluster([node.host], port=node.port, protocol_version=4,
                execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                connect_timeout=10, control_connection_timeout=10)
    return c, c.connect()


def at(cl, query):
    return SimpleStatement(query, consistency_level=cl)


def error_of(fn, *args, **kw):
    """The server's error for a request, unwrapped from the driver's NoHostAvailable."""
    try:
        fn(*args, **kw)
    except NoHostAvailable as e:
        (err,) = e.errors.values()
        return err
    except Exception as e:  # noqa: BLE001 - the error is what is under test
        return e
    raise AssertionError("the request succeeded")


def local_value(node, k):
    """What `node` alone holds for `k` (a read at ONE on a replica reads itself)."""
    c = alone(node)
    try:
        row = c.connect().execute(at(CL.ONE, f"SELECT v FROM data.t WHERE k = {k}")).one()
        return row.v if row else None
    finally:
        c.shutdown()


def test_writes_and_reads_at_every_level_reach_every_replica(ring):
    c, s = token_aware(ring[0])
    try:
        levels = [CL.ONE, CL.TWO, CL.THREE, CL.QUORUM, CL.ALL, CL.LOCAL_QUORUM,
                  CL.EACH_QUORUM, CL.LOCAL_ONE]
        for k, cl in enumerate(levels + [CL.ANY]):
            s.execute(at(cl, f"INSERT INTO data.t (k, v) VALUES ({k}, 'v{k}')"))
        on_task = lambda: sum(metric(n, "scylla_storage_proxy_coordinator_reads_on_request_task")  # noqa: E731
                              for n in ring)
        before = on_task()
        for k, cl in enumerate(levels):
            assert s.execute(at(cl, f"SELECT v FROM data.t WHERE k = {k}")).one().v == f"v{k}"
        # Reads needing other replicas (TWO, THREE, QUORUM, ALL…) were awaited on the
        # request's task, not a blocking thread.
        assert on_task() > before
        # Every replica got every write (a write at ONE reaches the others a moment later).
        for n in ring:
            for k in range(len(levels) + 1):
                wait_for(f"k={k} on {n.host}", lambda: local_value(n, k) == f"v{k}")
    finally:
        c.shutdown()


def test_a_killed_replica_quorum_goes_on_all_is_unavailable_and_read_repair_heals(ring):
    first, _, third = ring
    c, s = token_aware(first)
    try:
        third.kill()
        # Every coordinator the token-aware driver may pick must see it down.
        for n in ring[:2]:
            wait_for("nodetool DN", lambda n=n: n.states().get(third.host) == "DN")
        s.execute(at(CL.QUORUM, "INSERT INTO data.t (k, v) VALUES (100, 'while down')"))
        assert s.execute(at(CL.QUORUM, "SELECT v FROM data.t WHERE k = 100")).one().v == "while down"
        e = error_of(s.execute, at(CL.ALL, "INSERT INTO data.t (k, v) VALUES (101, 'x')"))
        assert isinstance(e, Unavailable), e
        assert (e.required_replicas, e.alive_replicas) == (3, 2)
        e = error_of(s.execute, at(CL.ALL, "SELECT v FROM data.t WHERE k = 100"))
        assert isinstance(e, Unavailable), e
        third.start(timeout=WAIT)
        wait_for("nodetool UN", lambda: first.states().get(third.host) == "UN")
        assert local_value(third, 100) is None, "the write missed it while it was down"
        # A read at ALL finds the replicas disagreeing: the newest value, written back.
        def read_at_all():
            # Until every coordinator sees the restarted node up, ALL may be Unavailable.
            try:
                return s.execute(at(CL.ALL, "SELECT v FROM data.t WHERE k = 100")).one().v
            except (Unavailable, NoHostAvailable):
                return None
        wait_for("a read at ALL", lambda: read_at_all() == "while down")
        assert local_value(third, 100) == "while down"
    finally:
        c.shutdown()


def test_a_hung_replica_times_out_requests_at_all_instead_of_hanging(ring):
    first, second, _ = ring
    # The coordinator must see every replica up (a node restarted by an earlier test too):
    # a replica it thinks down would make ALL Unavailable, not a timeout.
    wait_for("three UN", lambda: first.states() == {n.host: "UN" for n in ring})
    c = alone(first)
    try:
        s = c.connect()
        second.proc.send_signal(signal.SIGSTOP)
        try:
            e = error_of(s.execute, at(CL.ALL, "INSERT INTO data.t (k, v) VALUES (200, 'x')"))
            assert isinstance(e, WriteTimeout), e
            # The hung replica never answers (a loaded machine may make another late too).
            assert e.required_responses == 3 and e.received_responses <= 2, e
            # (Once liveness marks it down — 10 s of silence — ALL is Unavailable instead.)
            e = error_of(s.execute, at(CL.ALL, "SELECT v FROM data.t WHERE k = 1"))
            assert isinstance(e, (ReadTimeout, Unavailable)), e
            assert getattr(e, "required_responses", 3) == 3
            # QUORUM does not need it.
            s.execute(at(CL.QUORUM, "INSERT INTO data.t (k, v) VALUES (201, 'x')"))
        finally:
            second.proc.send_signal(signal.SIGCONT)
    finally:
        c.shutdown()


# --- Schema: group 0's, the same on every node ------------------------------------------------

def table_ids(node, keyspace):
    return {r.table_name: r.id for r in on(
        node, "SELECT table_name, id FROM system_schema.tables WHERE keyspace_name = %s",
        (keyspace,))}


def versions_agree(nodes):
    """Every node's own schema version, and every node's view of the others', is one."""
    seen = set()
    for n in nodes:
        seen.add(on(n, "SELECT schema_version FROM system.local")[0].schema_version)
        seen |= {r.schema_version for r in on(n, "SELECT schema_version FROM system.peers")}
    return len(seen) == 1


def test_schema_made_on_one_node_is_every_nodes_with_one_version(ring):
    first, second, third = ring
    # A driver whose control connection is on the first node: it hears of changes made on
    # the others (SCHEMA_CHANGE pushed by the first node once it applied them).
    watcher, _ = token_aware(first)
    try:
        # The statement answers once the node that ran it applied the change and the
        # driver found the schema agreed on every node.
        on(second, "CREATE TABLE data.shared (k int PRIMARY KEY, v int)")
        ids = [table_ids(n, "data") for n in ring]
        assert "shared" in ids[0] and ids[0] == ids[1] == ids[2]
        wait_for("one schema version", lambda: versions_agree(ring))
        wait_for("the first node's driver to hear of data.shared",
                 lambda: "shared" in watcher.metadata.keyspaces["data"].tables)

        # ALTER on the third: the column is everywhere.
        on(third, "ALTER TABLE data.shared ADD w text")
        for n in ring:
            columns = {r.column_name for r in on(
                n, "SELECT column_name FROM system_schema.columns "
                   "WHERE keyspace_name = 'data' AND table_name = 'shared'")}
            assert columns == {"k", "v", "w"}, (n.host, columns)
        wait_for("the driver to hear of the new column", lambda: "w" in watcher.metadata
                 .keyspaces["data"].tables["shared"].columns)

        # TRUNCATE on the second empties every replica: the same new id everywhere.
        s = watcher.connect()
        s.execute(at(CL.ALL, "INSERT INTO data.shared (k, v) VALUES (1, 1)"))
        on(second, "TRUNCATE data.shared")
        after = [table_ids(n, "data")["shared"] for n in ring]
        assert after[0] == after[1] == after[2] != ids[0]["shared"]
        for n in ring:
            assert on(n, at(CL.ONE, "SELECT * FROM data.shared WHERE k = 1")) == []

        # DROP on the first: gone everywhere.
        on(first, "DROP TABLE data.shared")
        for n in ring:
            assert "shared" not in table_ids(n, "data")
        wait_for("one schema version", lambda: versions_agree(ring))
    finally:
        watcher.shutdown()


def test_concurrent_schema_changes_on_every_node_never_diverge(ring):
    import threading
    errors = []

    def create(node, i):
        try:
            # Every node creates the same table (one wins, the others find it there) and one
            # of its own.
            on(node, "CREATE TABLE IF NOT EXISTS data.race (k int PRIMARY KEY)")
            on(node, f"CREATE TABLE data.own{i} (k int PRIMARY KEY)")
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=create, args=(n, i)) for i, n in enumerate(ring)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    ids = [table_ids(n, "data") for n in ring]
    assert {"race", "own0", "own1", "own2"} <= set(ids[0])
    assert ids[0] == ids[1] == ids[2]
    wait_for("one schema version", lambda: versions_agree(ring))


def test_schema_changes_need_a_majority_and_a_node_that_was_down_catches_up(ring):
    first, second, third = ring
    try:
        third.kill()
        wait_for("nodetool DN", lambda: first.states().get(third.host) == "DN")
        # One of three down: a majority is up, the change commits.
        on(first, "CREATE TABLE data.while_one_down (k int PRIMARY KEY)", agreement=False)
        second.kill()
        wait_for("nodetool DN", lambda: first.states().get(second.host) == "DN")
        # Two of three down: refused at once, clearly, and nothing changes.
        e = error_of(on, first, "CREATE TABLE data.while_two_down (k int PRIMARY KEY)",
                     agreement=False)
        assert "majority" in str(e), e
        assert "while_two_down" not in table_ids(first, "data")
        second.start(timeout=WAIT)
        wait_for("nodetool UN", lambda: first.states().get(second.host) == "UN")
        on(first, "CREATE TABLE data.after (k int PRIMARY KEY)", agreement=False)
        third.start(timeout=WAIT)
        wait_for("nodetool UN", lambda: first.states().get(third.host) == "UN")
        # The third missed two changes: it applies them from the group's log.
        wait_for("the third node to catch up",
                 lambda: table_ids(third, "data") == table_ids(first, "data"))
        assert {"while_one_down", "after"} <= set(table_ids(third, "data"))
        assert "while_two_down" not in table_ids(third, "data")
        wait_for("one schema version", lambda: versions_agree(ring))
    finally:
        for n in (second, third):
            if n.proc is None or n.proc.poll() is not None:
                n.start(timeout=WAIT)


def test_batches_ttl_tombstones_and_last_write_wins_behave_as_on_one_node(ring):
    first, second, third = ring
    on(first, "CREATE TABLE data.rows (k int, c int, v text, s text static, "
              "PRIMARY KEY (k, c))")
    c, s = token_aware(second)
    try:
        w = lambda q: s.execute(at(CL.QUORUM, q))  # noqa: E731
        # A logged and an unlogged batch across partitions.
        w("BEGIN BATCH INSERT INTO data.rows (k, c, v) VALUES (1, 1, 'a'); "
          "INSERT INTO data.rows (k, c, v) VALUES (2, 1, 'b'); APPLY BATCH")
        w("BEGIN UNLOGGED BATCH INSERT INTO data.rows (k, c, v) VALUES (3, 1, 'c'); "
          "INSERT INTO data.rows (k, c, v, s) VALUES (3, 2, 'd', 'static'); APPLY BATCH")
        # Every tombstone kind: a cell, a row, a range, a partition.
        w("INSERT INTO data.rows (k, c, v) VALUES (4, 1, 'x')")
        w("INSERT INTO data.rows (k, c, v) VALUES (4, 2, 'y')")
        w("INSERT INTO data.rows (k, c, v) VALUES (4, 3, 'z')")
        w("INSERT INTO data.rows (k, c, v) VALUES (4, 4, 'w')")
        w("DELETE v FROM data.rows WHERE k = 4 AND c = 1")
        w("DELETE FROM data.rows WHERE k = 4 AND c = 2")
        w("DELETE FROM data.rows WHERE k = 4 AND c >= 3 AND c < 4")
        w("INSERT INTO data.rows (k, c, v) VALUES (5, 1, 'gone')")
        w("DELETE FROM data.rows WHERE k = 5")
        # Last write wins by timestamp, whatever the order of arrival.
        w("INSERT INTO data.rows (k, c, v) VALUES (6, 1, 'newer') USING TIMESTAMP 2000")
        w("INSERT INTO data.rows (k, c, v) VALUES (6, 1, 'older') USING TIMESTAMP 1000")
        # A TTL that expires.
        w("INSERT INTO data.rows (k, c, v) VALUES (7, 1, 'brief') USING TTL 1")
        expected = {
            1: [(1, "a", None)], 2: [(1, "b", None)],
            3: [(1, "c", "static"), (2, "d", "static")],
            4: [(1, None, None), (4, "w", None)], 5: [], 6: [(1, "newer", None)], 7: [],
        }
        import time
        time.sleep(1.5)

        def rows_of(node, k):
            return [(r.c, r.v, r.s) for r in on(
                node, at(CL.ONE, f"SELECT c, v, s FROM data.rows WHERE k = {k}"))]

        for k, want in expected.items():
            assert [(r.c, r.v, r.s) for r in w(
                f"SELECT c, v, s FROM data.rows WHERE k = {k}")] == want, k
            # Every replica holds the same (a write at QUORUM reaches the third a moment
            # later).
            for n in ring:
                wait_for(f"k={k} on {n.host}", lambda n=n, k=k, want=want: rows_of(n, k) == want)
        # A range scan across the ring sees the same.
        scanned = sorted((r.k, r.c) for r in w("SELECT k, c FROM data.rows"))
        assert scanned == sorted((k, r[0]) for k, rows in expected.items() for r in rows)
    finally:
        c.shutdown()


def metric(node, name):
    """The Prometheus counter `name` on `node`, summed over its labels."""
    import urllib.request
    body = urllib.request.urlopen(
        f"http://{node.host}:{node.metrics_port}/metrics", timeout=10).read().decode()
    return sum(float(line.split()[-1]) for line in body.splitlines()
               if line.startswith(name + "{") or line.startswith(name + " "))


def received_mutations(node):
    """`scylla_storage_proxy_replica_received_mutations` on `node`: what it applied for
    another node's coordinator."""
    return metric(node, "scylla_storage_proxy_replica_received_mutations")


def test_the_token_aware_driver_sends_each_write_to_its_replica(ring):
    first, _, _ = ring
    on(first, "CREATE KEYSPACE one WITH replication = "
              "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    on(first, "CREATE TABLE one.t (k int PRIMARY KEY, v int)")
    c, s = token_aware(first)
    try:
        before = [received_mutations(n) for n in ring]
        insert = s.prepare("INSERT INTO one.t (k, v) VALUES (?, ?)")
        insert.consistency_level = CL.ONE
        for k in range(60):
            s.execute(insert, (k, k))
        # Each write went to the one node holding its key (the driver computes replicas as
        # Cairn places them): no node applied a write for another's coordinator.
        assert [received_mutations(n) for n in ring] == before
        for k in range(60):
            assert s.execute(at(CL.ONE, f"SELECT v FROM one.t WHERE k = {k}")).one().v == k
    finally:
        c.shutdown()


# --- Conditional writes: a Paxos round across the replicas ------------------------------------

def test_conditional_writes_from_every_coordinator_are_linearizable(ring):
    wait_for("three UN", lambda: ring[0].states() == {n.host: "UN" for n in ring})
    on(ring[0], "CREATE TABLE data.lwt (k int PRIMARY KEY, n int, owner text)")
    # One driver per node, each sending only to its node: three coordinators at once.
    clusters = [alone(n) for n in ring]
    try:
        sessions = [c.connect() for c in clusters]
        first = sessions[0].execute("INSERT INTO data.lwt (k, n) VALUES (1, 0) IF NOT EXISTS")
        assert first.one()[0] is True
        # The row exists for every coordinator: IF NOT EXISTS elsewhere is refused with it.
        again = sessions[2].execute("INSERT INTO data.lwt (k, n) VALUES (1, 5) IF NOT EXISTS").one()
        assert (again[0], again.n) == (False, 0)

        applied = [0, 0, 0]
        unknown = [0, 0, 0]
        errors = []

        def increments(i):
            s = sessions[i]
            read = SimpleStatement("SELECT n FROM data.lwt WHERE k = 1",
                                   consistency_level=CL.SERIAL)
            try:
                while applied[i] + unknown[i] < 8:
                    n = s.execute(read).one().n
                    try:
                        r = s.execute(f"UPDATE data.lwt SET n = {n + 1}, owner = 'c{i}' "
                                      f"WHERE k = 1 IF n = {n}").one()
                    except WriteTimeout as e:
                        # Accepted by some replicas only: a later round decides (Cassandra's
                        # "CAS operation result is unknown").
                        assert e.write_type == WriteType.CAS, e
                        unknown[i] += 1
                        continue
                    if r[0]:
                        applied[i] += 1
                    else:
                        assert r.n > n, "a refusal shows the newer value"
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=increments, args=(i,)) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        # None lost (fewer than applied), none applied twice (more than applied + unknown);
        # every coordinator reads the same value.
        values = {s.execute(SimpleStatement("SELECT n FROM data.lwt WHERE k = 1",
                                            consistency_level=CL.SERIAL)).one().n
                  for s in sessions}
        assert len(values) == 1, values
        (final,) = values
        assert sum(applied) <= final <= sum(applied) + sum(unknown), (applied, unknown, final)
        # The commit reached every replica.
        for n in ring:
            c = alone(n)
            try:
                wait_for(f"n={final} on {n.host}", lambda c=c: c.connect().execute(
                    at(CL.ONE, "SELECT n FROM data.lwt WHERE k = 1")).one().n == final)
            finally:
                c.shutdown()
        # Conditions on other columns, IF EXISTS and DELETE … IF through another node.
        r = sessions[1].execute("UPDATE data.lwt SET n = 100 WHERE k = 1 IF owner IN "
                                f"('c0', 'c1', 'c2') AND n >= {final}").one()
        assert r[0] is True
        r = sessions[2].execute("DELETE FROM data.lwt WHERE k = 1 IF n = 99").one()
        assert (r[0], r.n) == (False, 100)
        assert sessions[0].execute("DELETE FROM data.lwt WHERE k = 1 IF EXISTS").one()[0] is True
        assert sessions[1].execute(SimpleStatement(
            "SELECT * FROM data.lwt WHERE k = 1", consistency_level=CL.SERIAL)).one() is None
    finally:
        for c in clusters:
            c.shutdown()


def test_conditional_writes_need_a_quorum_for_their_serial_level(ring):
    first, second, third = ring
    wait_for("three UN", lambda: first.states() == {n.host: "UN" for n in ring})
    c = alone(first)
    try:
        s = c.connect()
        third.kill()
        wait_for("nodetool DN", lambda: first.states().get(third.host) == "DN")
        # One of three down: SERIAL's quorum (two) is up.
        r = s.execute("INSERT INTO data.lwt (k, n) VALUES (2, 1) IF NOT EXISTS").one()
        assert r[0] is True
        second.kill()
        wait_for("nodetool DN", lambda: first.states().get(second.host) == "DN")
        e = error_of(s.execute, "UPDATE data.lwt SET n = 2 WHERE k = 2 IF n = 1")
        assert isinstance(e, Unavailable), e
        assert (e.consistency, e.required_replicas, e.alive_replicas) == (CL.SERIAL, 2, 1)
        e = error_of(s.execute, SimpleStatement("SELECT n FROM data.lwt WHERE k = 2",
                                                consistency_level=CL.SERIAL))
        assert isinstance(e, Unavailable), e
    finally:
        c.shutdown()
        for n in (second, third):
            if n.proc is None or n.proc.poll() is not None:
                n.start(timeout=WAIT)
        wait_for("three UN", lambda: first.states() == {n.host: "UN" for n in ring})
    # Back: the row written while the third was down is read at SERIAL from any node.
    c = alone(third)
    try:
        row = c.connect().execute(SimpleStatement("SELECT n FROM data.lwt WHERE k = 2",
                                                  consistency_level=CL.SERIAL)).one()
        assert row.n == 1
    finally:
        c.shutdown()


def test_a_user_type_made_on_one_node_is_usable_on_every_node(ring):
    first, second, third = ring
    on(first, "CREATE TYPE data.addr (street text, zip int)")
    on(second, "CREATE TABLE data.homes (k int PRIMARY KEY, a frozen<addr>)")
    on(third, at(CL.ALL, "INSERT INTO data.homes (k, a) VALUES (1, {street: 's', zip: 1})"))
    on(second, "ALTER TYPE data.addr ADD country text")
    for n in ring:
        (row,) = on(n, "SELECT field_names FROM system_schema.types "
                       "WHERE keyspace_name = 'data' AND type_name = 'addr'")
        assert list(row.field_names) == ["street", "zip", "country"], n.host
        (row,) = on(n, at(CL.ALL, "SELECT a.street, a.country FROM data.homes WHERE k = 1"))
        assert tuple(row) == ("s", None), n.host
    wait_for("one schema version", lambda: versions_agree(ring))
    on(first, "DROP TABLE data.homes")
    on(third, "DROP TYPE data.addr")
    for n in ring:
        assert on(n, "SELECT * FROM system_schema.types WHERE keyspace_name = 'data'") == [], n.host
