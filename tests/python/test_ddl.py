"""DDL: keyspaces, tables (every PRIMARY KEY form), ALTER, DROP, TRUNCATE."""

import pytest
from cassandra import AlreadyExists, InvalidRequest
from cassandra.protocol import ConfigurationException

from helpers import expect_error, rows, server_message, tuples


def ks_row(session, name):
    return session.execute(
        "SELECT replication, durable_writes FROM system_schema.keyspaces WHERE keyspace_name = %s",
        (name,)).one()


def test_keyspace_simple_strategy_lifecycle(cluster, session):
    session.execute("DROP KEYSPACE IF EXISTS ddl_simple")
    session.execute(
        "CREATE KEYSPACE ddl_simple WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    assert "ddl_simple" in cluster.metadata.keyspaces
    # IF NOT EXISTS on an existing keyspace is a no-op
    session.execute(
        "CREATE KEYSPACE IF NOT EXISTS ddl_simple WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
    assert ks_row(session, "ddl_simple").replication["replication_factor"] == "1"
    err = expect_error(AlreadyExists, session.execute,
                       "CREATE KEYSPACE ddl_simple WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    assert err.keyspace == "ddl_simple"
    assert not err.table
    session.execute(
        "ALTER KEYSPACE ddl_simple WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2} "
        "AND durable_writes = false")
    r = ks_row(session, "ddl_simple")
    assert r.replication == {"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "2"}
    assert r.durable_writes is False
    assert cluster.metadata.keyspaces["ddl_simple"].durable_writes is False
    session.execute("DROP KEYSPACE ddl_simple")
    assert ks_row(session, "ddl_simple") is None
    assert "ddl_simple" not in cluster.metadata.keyspaces
    session.execute("DROP KEYSPACE IF EXISTS ddl_simple")


def test_drop_missing_keyspace_is_invalid(session):
    # Cassandra 5.0: an InvalidRequest (Cassandra 3 answered with a configuration error).
    err = expect_error(InvalidRequest, session.execute, "DROP KEYSPACE ddl_never_created")
    assert server_message(err) == "Keyspace 'ddl_never_created' doesn't exist"


def test_keyspace_network_topology_strategy(cluster, session):
    dc = cluster.metadata.all_hosts()[0].datacenter
    session.execute("DROP KEYSPACE IF EXISTS ddl_nts")
    session.execute(
        f"CREATE KEYSPACE ddl_nts WITH replication = {{'class': 'NetworkTopologyStrategy', '{dc}': 1}}")
    r = ks_row(session, "ddl_nts")
    assert r.replication == {"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", dc: "1"}
    km = cluster.metadata.keyspaces["ddl_nts"]
    assert km.replication_strategy.name == "NetworkTopologyStrategy"
    assert km.replication_strategy.dc_replication_factors == {dc: 1}
    session.execute("DROP KEYSPACE ddl_nts")


def test_keyspace_nts_replication_factor_expands_to_dcs(cluster, session):
    """Cassandra 4+ expands 'replication_factor' for NTS into every known datacenter."""
    dc = cluster.metadata.all_hosts()[0].datacenter
    session.execute("DROP KEYSPACE IF EXISTS ddl_nts_rf")
    session.execute(
        "CREATE KEYSPACE ddl_nts_rf WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 1}")
    r = ks_row(session, "ddl_nts_rf")
    assert r.replication == {"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", dc: "1"}
    session.execute("DROP KEYSPACE ddl_nts_rf")


def test_use_keyspace(cluster, ks):
    s = cluster.connect()
    try:
        s.execute(f"USE {ks}")
        s.execute("CREATE TABLE use_t (k int PRIMARY KEY, v int)")
        s.execute("INSERT INTO use_t (k, v) VALUES (1, 2)")
        assert tuples(s, "SELECT k, v FROM use_t") == [(1, 2)]
        assert tuples(s, f"SELECT k, v FROM {ks}.use_t") == [(1, 2)]
    finally:
        s.shutdown()


@pytest.mark.parametrize("ddl,pk,ck", [
    ("(k int PRIMARY KEY, v text)", ["k"], []),
    ("(k int, v text, PRIMARY KEY (k))", ["k"], []),
    ("(k int, v text, PRIMARY KEY ((k)))", ["k"], []),
    ("(a int, b text, v int, PRIMARY KEY ((a, b)))", ["a", "b"], []),
    ("(a int, c int, v int, PRIMARY KEY (a, c))", ["a"], ["c"]),
    ("(a int, c1 int, c2 text, v int, PRIMARY KEY (a, c1, c2))", ["a"], ["c1", "c2"]),
    ("(a int, b int, c1 int, c2 int, v int, PRIMARY KEY ((a, b), c1, c2))", ["a", "b"], ["c1", "c2"]),
    ("(a int, c int, s text static, v int, PRIMARY KEY (a, c))", ["a"], ["c"]),
    ('("Quoted Key" int PRIMARY KEY, "Mixed" text)', ["Quoted Key"], []),
], ids=["inline", "pk", "pk-parens", "composite", "clustering", "two-clustering",
        "composite-two-clustering", "static", "quoted"])
def test_create_table_primary_key_forms(cluster, session, ks, tname, ddl, pk, ck):
    session.execute(f"CREATE TABLE {ks}.{tname} {ddl}")
    tm = cluster.metadata.keyspaces[ks].tables[tname]
    assert [c.name for c in tm.partition_key] == pk
    assert [c.name for c in tm.clustering_key] == ck


def test_clustering_order_desc_and_mixed(cluster, session, ks):
    session.execute(
        f"CREATE TABLE {ks}.ord (p int, c1 int, c2 int, v int, PRIMARY KEY (p, c1, c2)) "
        "WITH CLUSTERING ORDER BY (c1 DESC, c2 ASC)")
    for c1 in range(3):
        for c2 in range(3):
            session.execute(f"INSERT INTO {ks}.ord (p, c1, c2, v) VALUES (0, {c1}, {c2}, 0)")
    got = tuples(session, f"SELECT c1, c2 FROM {ks}.ord WHERE p = 0")
    assert got == [(c1, c2) for c1 in (2, 1, 0) for c2 in (0, 1, 2)]
    got = tuples(session, f"SELECT c1, c2 FROM {ks}.ord WHERE p = 0 ORDER BY c1 ASC, c2 DESC")
    assert got == [(c1, c2) for c1 in (0, 1, 2) for c2 in (2, 1, 0)]
    tm = cluster.metadata.keyspaces[ks].tables["ord"]
    assert [c.is_reversed for c in tm.clustering_key] == [True, False]


def test_static_columns(session, ks):
    session.execute(f"CREATE TABLE {ks}.st (p int, c int, s text static, v int, PRIMARY KEY (p, c))")
    session.execute(f"INSERT INTO {ks}.st (p, c, s, v) VALUES (1, 1, 'x', 10)")
    session.execute(f"INSERT INTO {ks}.st (p, c, v) VALUES (1, 2, 20)")
    assert tuples(session, f"SELECT p, c, s, v FROM {ks}.st WHERE p = 1") == [(1, 1, "x", 10), (1, 2, "x", 20)]


def test_static_column_needs_clustering(session, ks):
    err = expect_error(InvalidRequest, session.execute,
                       f"CREATE TABLE {ks}.bad_static (p int PRIMARY KEY, s int static)")
    assert "static" in server_message(err).lower()


def test_create_table_if_not_exists_and_already_exists(session, ks):
    session.execute(f"CREATE TABLE {ks}.dup (k int PRIMARY KEY)")
    session.execute(f"CREATE TABLE IF NOT EXISTS {ks}.dup (k int PRIMARY KEY, other int)")
    err = expect_error(AlreadyExists, session.execute, f"CREATE TABLE {ks}.dup (k int PRIMARY KEY)")
    assert (err.keyspace, err.table) == (ks, "dup")


def test_alter_table_add_drop_column(cluster, session, ks):
    session.execute(f"CREATE TABLE {ks}.alt (k int PRIMARY KEY, a int)")
    session.execute(f"INSERT INTO {ks}.alt (k, a) VALUES (1, 1)")
    session.execute(f"ALTER TABLE {ks}.alt ADD b text")
    assert tuples(session, f"SELECT k, a, b FROM {ks}.alt") == [(1, 1, None)]
    session.execute(f"INSERT INTO {ks}.alt (k, a, b) VALUES (2, 2, 'two')")
    assert sorted(tuples(session, f"SELECT k, a, b FROM {ks}.alt")) == [(1, 1, None), (2, 2, "two")]
    session.execute(f"ALTER TABLE {ks}.alt ADD (c int, d boolean)")
    assert set(cluster.metadata.keyspaces[ks].tables["alt"].columns) == {"k", "a", "b", "c", "d"}
    session.execute(f"ALTER TABLE {ks}.alt DROP b")
    err = expect_error(InvalidRequest, session.execute, f"SELECT b FROM {ks}.alt")
    assert server_message(err).startswith("Undefined column name b")
    assert [r.column_name for r in session.execute(
        "SELECT column_name FROM system_schema.dropped_columns WHERE keyspace_name = %s AND table_name = 'alt'",
        (ks,))] == ["b"]
    # Re-adding a dropped column must not resurrect the values written before the drop.
    session.execute(f"ALTER TABLE {ks}.alt ADD b text")
    assert sorted(tuples(session, f"SELECT k, b FROM {ks}.alt")) == [(1, None), (2, None)]


def test_alter_table_errors(session, ks):
    session.execute(f"CREATE TABLE {ks}.alt_err (k int, c int, v int, PRIMARY KEY (k, c))")
    expect_error(InvalidRequest, session.execute, f"ALTER TABLE {ks}.alt_err ADD v text")
    expect_error(InvalidRequest, session.execute, f"ALTER TABLE {ks}.alt_err DROP k")
    expect_error(InvalidRequest, session.execute, f"ALTER TABLE {ks}.alt_err DROP c")
    expect_error(InvalidRequest, session.execute, f"ALTER TABLE {ks}.alt_err DROP nope")


def test_alter_table_with_compression_and_compaction(cluster, session, ks):
    session.execute(f"CREATE TABLE {ks}.altopt (k int PRIMARY KEY, v text)")
    session.execute(f"INSERT INTO {ks}.altopt (k, v) VALUES (1, 'a')")
    session.execute(
        f"ALTER TABLE {ks}.altopt WITH compression = {{'class': 'SnappyCompressor', 'chunk_length_in_kb': '64'}}")
    session.execute(
        f"ALTER TABLE {ks}.altopt WITH compaction = {{'class': 'LeveledCompactionStrategy'}} "
        "AND gc_grace_seconds = 100 AND comment = 'altered'")
    o = cluster.metadata.keyspaces[ks].tables["altopt"].options
    assert o["compression"]["class"] == "org.apache.cassandra.io.compress.SnappyCompressor"
    assert o["compression"]["chunk_length_in_kb"] == "64"
    assert o["compaction"]["class"] == "org.apache.cassandra.db.compaction.LeveledCompactionStrategy"
    assert o["gc_grace_seconds"] == 100
    assert o["comment"] == "altered"
    r = session.execute(
        "SELECT compression, gc_grace_seconds FROM system_schema.tables WHERE keyspace_name = %s AND table_name = 'altopt'",
        (ks,)).one()
    assert r.compression["class"] == "org.apache.cassandra.io.compress.SnappyCompressor"
    assert r.gc_grace_seconds == 100
    session.execute(f"ALTER TABLE {ks}.altopt WITH compression = {{'enabled': 'false'}}")
    o = cluster.metadata.keyspaces[ks].tables["altopt"].options
    assert o["compression"].get("enabled") == "false"
    assert tuples(session, f"SELECT k, v FROM {ks}.altopt") == [(1, "a")]


def test_drop_table(cluster, session, ks):
    session.execute(f"CREATE TABLE {ks}.gone (k int PRIMARY KEY)")
    session.execute(f"INSERT INTO {ks}.gone (k) VALUES (1)")
    session.execute(f"DROP TABLE {ks}.gone")
    assert "gone" not in cluster.metadata.keyspaces[ks].tables
    err = expect_error(InvalidRequest, session.execute, f"SELECT * FROM {ks}.gone")
    assert "unconfigured table gone" in server_message(err)
    session.execute(f"DROP TABLE IF EXISTS {ks}.gone")
    expect_error(InvalidRequest, session.execute, f"DROP TABLE {ks}.gone")
    # a new table with the same name starts empty
    session.execute(f"CREATE TABLE {ks}.gone (k int PRIMARY KEY)")
    assert rows(session, f"SELECT * FROM {ks}.gone") == []


def test_truncate(session, ks):
    session.execute(f"CREATE TABLE {ks}.tr (k int, c int, v int, PRIMARY KEY (k, c))")
    for k in range(5):
        for c in range(5):
            session.execute(f"INSERT INTO {ks}.tr (k, c, v) VALUES ({k}, {c}, 1)")
    session.execute(f"TRUNCATE {ks}.tr")
    assert rows(session, f"SELECT * FROM {ks}.tr") == []
    session.execute(f"INSERT INTO {ks}.tr (k, c, v) VALUES (1, 1, 1)")
    session.execute(f"TRUNCATE TABLE {ks}.tr")
    assert rows(session, f"SELECT * FROM {ks}.tr") == []
    session.execute(f"INSERT INTO {ks}.tr (k, c, v) VALUES (2, 2, 2)")
    assert tuples(session, f"SELECT k, c, v FROM {ks}.tr") == [(2, 2, 2)]
