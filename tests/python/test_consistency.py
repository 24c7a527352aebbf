"""Consistency levels on one node, as Apache Cassandra 5.0 answers them (checked side by side
with it): the storage proxy counts replicas by the keyspace's replication factor, so a keyspace
with replication_factor 3 on a node alone serves ONE but refuses QUORUM with Unavailable and
the protocol's fields; levels a statement kind does not accept are refused with Invalid."""

import urllib.request

import pytest
from cassandra import ConsistencyLevel as CL
from cassandra import InvalidRequest, Unavailable
from cassandra.cluster import NoHostAvailable
from cassandra.policies import FallthroughRetryPolicy
from cassandra.query import BatchStatement, SimpleStatement

from helpers import expect_error


@pytest.fixture(scope="module")
def rf3(session, ks):
    name = f"{ks}_rf3"
    session.execute(f"DROP KEYSPACE IF EXISTS {name}")
    session.execute(
        f"CREATE KEYSPACE {name} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 3}}")
    session.execute(f"CREATE TABLE {name}.t (k int, c int, v int, l list<int>, PRIMARY KEY (k, c))")
    yield name
    session.execute(f"DROP KEYSPACE IF EXISTS {name}")


@pytest.fixture(scope="module")
def rf1(session, ks):
    session.execute(f"CREATE TABLE {ks}.t (k int, c int, v int, l list<int>, PRIMARY KEY (k, c))")
    return ks


def stmt(query, cl, serial=None):
    # No retry on another host: the node's own error comes back.
    return SimpleStatement(query, consistency_level=cl, serial_consistency_level=serial,
                           retry_policy=FallthroughRetryPolicy())


def unavailable(session, query, cl, serial=None):
    """The Unavailable error the node answers `query` at `cl` with."""
    try:
        session.execute(stmt(query, cl, serial))
    except Unavailable as e:
        return e
    except NoHostAvailable as e:
        (err,) = e.errors.values()
        assert isinstance(err, Unavailable), err
        return err
    raise AssertionError(f"{query} at {CL.value_to_name[cl]} was served")


def metric(node, name):
    body = urllib.request.urlopen(f"http://127.0.0.1:{node.metrics_port}/metrics", timeout=10).read().decode()
    for line in body.splitlines():
        if line.startswith(f"scylla_{name}{{"):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no metric {name}")


def test_a_keyspace_with_more_replicas_than_nodes_serves_one_not_quorum(session, rf3, node):
    t = f"{rf3}.t"
    before = metric(node, "storage_proxy_coordinator_write_unavailable")
    for cl in (CL.ANY, CL.ONE, CL.LOCAL_ONE):
        session.execute(stmt(f"INSERT INTO {t} (k, c, v) VALUES (1, 1, 1)", cl))
    assert session.execute(stmt(f"SELECT v FROM {t} WHERE k = 1", CL.ONE)).one().v == 1
    # (level, required, alive) as Cassandra 5.0 answers on a node of its own.
    for cl, required in [(CL.TWO, 2), (CL.THREE, 3), (CL.QUORUM, 2), (CL.LOCAL_QUORUM, 2),
                         (CL.EACH_QUORUM, 2), (CL.ALL, 3)]:
        e = unavailable(session, f"INSERT INTO {t} (k, c, v) VALUES (2, 1, 1)", cl)
        assert (e.consistency, e.required_replicas, e.alive_replicas) == (cl, required, 1)
        assert f"Cannot achieve consistency level {CL.value_to_name[cl]}" in str(e)
        e = unavailable(session, f"SELECT * FROM {t} WHERE k = 1", cl)
        assert (e.required_replicas, e.alive_replicas) == (required, 1)
        unavailable(session, f"SELECT * FROM {t}", cl)
    # Nothing refused was written.
    assert session.execute(stmt(f"SELECT * FROM {t} WHERE k = 2", CL.ONE)).one() is None
    assert metric(node, "storage_proxy_coordinator_write_unavailable") == before + 6


def test_a_keyspace_with_one_replica_serves_every_level(session, rf1):
    t = f"{rf1}.t"
    for cl in (CL.ANY, CL.ONE, CL.QUORUM, CL.ALL, CL.LOCAL_QUORUM, CL.EACH_QUORUM, CL.LOCAL_ONE):
        session.execute(stmt(f"INSERT INTO {t} (k, c, v, l) VALUES (1, 1, 1, [1, 2])", cl))
        if cl != CL.ANY:  # an element set by index reads first: not at ANY (below)
            session.execute(stmt(f"UPDATE {t} SET l[0] = 5 WHERE k = 1 AND c = 1", cl))
    for cl in (CL.ONE, CL.QUORUM, CL.ALL, CL.SERIAL, CL.LOCAL_SERIAL):
        assert session.execute(stmt(f"SELECT l FROM {t} WHERE k = 1", cl)).one().l == [5, 2]
    # A partition read at SERIAL may name several partitions (Cassandra 5.0 answers it).
    assert len(list(session.execute(stmt(f"SELECT * FROM {t} WHERE k IN (1, 2)", CL.SERIAL)))) == 1
    # Two replicas cannot be had from one.
    e = unavailable(session, f"SELECT * FROM {t} WHERE k = 1", CL.TWO)
    assert (e.required_replicas, e.alive_replicas) == (2, 1)


def refused(session, query, cl, text, serial=None):
    e = expect_error(InvalidRequest, session.execute, stmt(query, cl, serial))
    assert text in str(e), str(e)


def test_levels_a_statement_does_not_accept(session, rf1):
    t = f"{rf1}.t"
    refused(session, f"SELECT * FROM {t}", CL.ANY, "ANY ConsistencyLevel is only supported for writes")
    for cl in (CL.SERIAL, CL.LOCAL_SERIAL):
        refused(session, f"INSERT INTO {t} (k, c, v) VALUES (1, 1, 1)", cl,
                "You must use conditional updates for serializable writes")
        refused(session, f"INSERT INTO {t} (k, c, v) VALUES (1, 1, 1) IF NOT EXISTS", cl,
                f"{CL.value_to_name[cl]} is not supported as conditional update commit consistency")
    refused(session, f"UPDATE {t} SET l[0] = 7 WHERE k = 1 AND c = 1", CL.ANY,
            "Write operation require a read but consistency ANY is not supported on reads")
    refused(session, f"INSERT INTO {t} (k, c, v) VALUES (1, 1, 1) IF NOT EXISTS", CL.EACH_QUORUM,
            "consistency level EACH_QUORUM not compatible with replication strategy")
    # A batch without conditions takes a serial level (Cassandra does not check it).
    b = BatchStatement(consistency_level=CL.SERIAL)
    b.add(f"INSERT INTO {t} (k, c, v) VALUES (9, 1, 1)")
    session.execute(b)
    assert session.execute(f"SELECT v FROM {t} WHERE k = 9").one().v == 1


def test_conditional_writes_need_a_quorum_of_replicas_for_paxos(session, rf3, rf1, node):
    before = metric(node, "storage_proxy_coordinator_cas_write_unavailable")
    for serial in (CL.SERIAL, CL.LOCAL_SERIAL):
        e = unavailable(session, f"INSERT INTO {rf3}.t (k, c, v) VALUES (5, 1, 1) IF NOT EXISTS",
                        CL.ONE, serial)
        assert (e.consistency, e.required_replicas, e.alive_replicas) == (serial, 2, 1)
    assert metric(node, "storage_proxy_coordinator_cas_write_unavailable") == before + 2
    # One replica: the conditional write applies at any commit level, ANY included.
    r = session.execute(stmt(f"INSERT INTO {rf1}.t (k, c, v) VALUES (5, 1, 1) IF NOT EXISTS",
                             CL.ANY, CL.LOCAL_SERIAL)).one()
    assert r[0] is True


def test_system_tables_are_local_to_the_node(session):
    # system.local lives in a LocalStrategy keyspace: one replica, the node itself.
    assert session.execute(stmt("SELECT key FROM system.local", CL.ALL)).one().key == "local"
    e = unavailable(session, "SELECT key FROM system.local", CL.TWO)
    assert (e.required_replicas, e.alive_replicas) == (2, 1)
    # Virtual tables answer at any level but ANY.
    assert session.execute(stmt("SELECT * FROM system_views.settings LIMIT 1", CL.THREE)).one()
