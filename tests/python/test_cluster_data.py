"""Data through the ring: three `cairn serve` processes on 127.0.0.1–3 (same ports), a keyspace
replicated to all three (NetworkTopologyStrategy {'datacenter1': 3}), reads and writes
coordinated by the storage proxy (crates/cluster/src/proxy/).

Schema does not go through group 0 yet, so each node is given the same DDL, the table with
the same id (`WITH id = …`): replicas find a mutation's table by id.

Writes and reads at every consistency level through the token-aware driver; a SIGKILLed node:
QUORUM goes on, ALL is Unavailable, and once it is back a read at ALL finds it stale, answers
the newest value and repairs it; a SIGSTOPped node makes ALL time out (WriteTimeout,
ReadTimeout) instead of hanging.
"""

import signal

import pytest
from cassandra import ConsistencyLevel as CL
from cassandra import ReadTimeout, Unavailable, WriteTimeout
from cassandra.cluster import Cluster, ExecutionProfile, EXEC_PROFILE_DEFAULT, NoHostAvailable
from cassandra.policies import FallthroughRetryPolicy, RoundRobinPolicy, TokenAwarePolicy
from cassandra.query import SimpleStatement

from test_cluster import WAIT, ClusterNode, alone, free_ports_on, wait_for

TABLE_ID = "6f1c3a52-8a4e-4d1e-9c61-3c2a1b0d9e77"
# Short request timeouts: a hung replica answers WriteTimeout / ReadTimeout in 2 s.
TIMEOUTS = "write_request_timeout_in_ms: 2000\nread_request_timeout_in_ms: 2000\n"


@pytest.fixture(scope="module")
def ring(tmp_root):
    root = tmp_root / "cluster-data"
    ports = free_ports_on([f"127.0.0.{n}" for n in (1, 2, 3)], 4)
    seeds = "127.0.0.1,127.0.0.2,127.0.0.3"
    nodes = [ClusterNode(root, n, ports, seeds, extra_yaml=TIMEOUTS) for n in (1, 2, 3)]
    try:
        for n in nodes:
            n.start(wait=False)
        for n in nodes:
            n.wait_started(timeout=WAIT)
        # Every node must see the others up: each coordinates some requests.
        for m in nodes:
            wait_for(f"three UN from {m.host}",
                     lambda m=m: m.states() == {n.host: "UN" for n in nodes})
        for n in nodes:
            c = alone(n)
            try:
                s = c.connect()
                s.execute("CREATE KEYSPACE data WITH replication = "
                          "{'class': 'NetworkTopologyStrategy', 'datacenter1': 3}")
                s.execute(f"CREATE TABLE data.t (k int PRIMARY KEY, v text) WITH id = {TABLE_ID}")
            finally:
                c.shutdown()
        yield nodes
    finally:
        for n in nodes:
            if n.proc is not None:
                n.kill()


def token_aware(node):
    profile = ExecutionProfile(load_balancing_policy=TokenAwarePolicy(RoundRobinPolicy()),
                               request_timeout=30, retry_policy=FallthroughRetryPolicy())
    c = Cluster([node.host], port=node.port, protocol_version=4,
                execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                connect_timeout=10, control_connection_timeout=10, max_schema_agreement_wait=0)
    return c, c.connect()


def at(cl, query):
    return SimpleStatement(query, consistency_level=cl)


def error_of(fn, *args):
    """The server's error for a request, unwrapped from the driver's NoHostAvailable."""
    try:
        fn(*args)
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
        for k, cl in enumerate(levels):
            assert s.execute(at(cl, f"SELECT v FROM data.t WHERE k = {k}")).one().v == f"v{k}"
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
        wait_for("nodetool DN", lambda: first.states().get(third.host) == "DN")
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
    c = alone(first)
    try:
        s = c.connect()
        second.proc.send_signal(signal.SIGSTOP)
        try:
            e = error_of(s.execute, at(CL.ALL, "INSERT INTO data.t (k, v) VALUES (200, 'x')"))
            assert isinstance(e, WriteTimeout), e
            assert (e.received_responses, e.required_responses) == (2, 3)
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
