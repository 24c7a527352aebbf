"""Connect and metadata load: cluster.metadata shows keyspaces, tables, columns, options."""

import uuid

from helpers import rows


def test_connect_and_system_local(session, node):
    local = session.execute(
        "SELECT cluster_name, data_center, rack, host_id, partitioner, release_version, "
        "schema_version, tokens FROM system.local WHERE key = 'local'").one()
    assert local is not None
    assert local.data_center and local.rack and local.cluster_name
    assert isinstance(local.host_id, uuid.UUID)
    assert isinstance(local.schema_version, uuid.UUID)
    assert local.partitioner == "org.apache.cassandra.dht.Murmur3Partitioner"
    assert local.tokens
    for t in local.tokens:
        assert -2**63 <= int(t) < 2**63
    assert rows(session, "SELECT * FROM system.peers") == []


def test_cluster_metadata_hosts(cluster, node):
    hosts = cluster.metadata.all_hosts()
    assert len(hosts) == 1
    h = hosts[0]
    assert h.is_up
    assert h.datacenter and h.rack
    assert cluster.metadata.partitioner == "org.apache.cassandra.dht.Murmur3Partitioner"
    assert cluster.metadata.cluster_name


def test_system_keyspaces_in_metadata(cluster):
    for name in ("system", "system_schema"):
        assert name in cluster.metadata.keyspaces, name


def test_keyspace_metadata(cluster, session, ks):
    km = cluster.metadata.keyspaces[ks]
    assert km.durable_writes is True
    assert km.replication_strategy.name == "SimpleStrategy"
    assert km.replication_strategy.replication_factor == 1
    r = session.execute(
        "SELECT replication, durable_writes FROM system_schema.keyspaces WHERE keyspace_name = %s",
        (ks,)).one()
    assert r.replication == {"class": "org.apache.cassandra.locator.SimpleStrategy",
                             "replication_factor": "1"}
    assert r.durable_writes is True


def test_table_columns_and_clustering_order(cluster, session, ks):
    session.execute(
        f"CREATE TABLE {ks}.shape (a int, b text, c int, d timestamp, s int static, v text, "
        f"w map<text, int>, PRIMARY KEY ((a, b), c, d)) WITH CLUSTERING ORDER BY (c ASC, d DESC)")
    tm = cluster.metadata.keyspaces[ks].tables["shape"]
    assert [c.name for c in tm.partition_key] == ["a", "b"]
    assert [c.name for c in tm.clustering_key] == ["c", "d"]
    assert [c.is_reversed for c in tm.clustering_key] == [False, True]
    assert set(tm.columns) == {"a", "b", "c", "d", "s", "v", "w"}
    assert list(tm.columns)[:4] == ["a", "b", "c", "d"]
    assert tm.columns["s"].is_static
    assert not tm.columns["v"].is_static
    types = {n: c.cql_type for n, c in tm.columns.items()}
    assert types == {"a": "int", "b": "text", "c": "int", "d": "timestamp", "s": "int",
                     "v": "text", "w": "map<text, int>"}
    cols = {r.column_name: r for r in session.execute(
        "SELECT column_name, kind, position, clustering_order, type FROM system_schema.columns "
        "WHERE keyspace_name = %s AND table_name = 'shape'", (ks,))}
    assert (cols["a"].kind, cols["a"].position, cols["a"].clustering_order) == ("partition_key", 0, "none")
    assert (cols["b"].kind, cols["b"].position) == ("partition_key", 1)
    assert (cols["c"].kind, cols["c"].position, cols["c"].clustering_order) == ("clustering", 0, "asc")
    assert (cols["d"].kind, cols["d"].position, cols["d"].clustering_order) == ("clustering", 1, "desc")
    assert (cols["s"].kind, cols["s"].position) == ("static", -1)
    assert (cols["v"].kind, cols["v"].position, cols["v"].clustering_order) == ("regular", -1, "none")


def test_table_options_shown_back(cluster, session, ks):
    session.execute(
        f"CREATE TABLE {ks}.opts (k int PRIMARY KEY, v text) WITH "
        "compaction = {'class': 'LeveledCompactionStrategy', 'sstable_size_in_mb': '160'} "
        "AND compression = {'class': 'LZ4Compressor', 'chunk_length_in_kb': '16'} "
        "AND gc_grace_seconds = 3600 AND comment = 'hello' AND default_time_to_live = 0 "
        "AND bloom_filter_fp_chance = 0.02 "
        "AND caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'}")
    o = cluster.metadata.keyspaces[ks].tables["opts"].options
    assert o["gc_grace_seconds"] == 3600
    assert o["comment"] == "hello"
    assert o["default_time_to_live"] == 0
    assert abs(o["bloom_filter_fp_chance"] - 0.02) < 1e-9
    assert o["compaction"]["class"] == "org.apache.cassandra.db.compaction.LeveledCompactionStrategy"
    assert o["compaction"]["sstable_size_in_mb"] == "160"
    assert o["compression"]["class"] == "org.apache.cassandra.io.compress.LZ4Compressor"
    assert o["compression"]["chunk_length_in_kb"] == "16"
    assert o["caching"] == {"keys": "ALL", "rows_per_partition": "NONE"}


def test_default_table_options(cluster, session, ks):
    session.execute(f"CREATE TABLE {ks}.defaults (k int PRIMARY KEY, v text)")
    o = cluster.metadata.keyspaces[ks].tables["defaults"].options
    assert o["gc_grace_seconds"] == 864000
    assert o["default_time_to_live"] == 0
    assert o["compaction"]["class"].endswith("SizeTieredCompactionStrategy")
    assert o["compression"]["class"] == "org.apache.cassandra.io.compress.LZ4Compressor"


def test_export_as_string(cluster, session, ks):
    session.execute(
        f"CREATE TABLE {ks}.exported (p int, c text, v double, PRIMARY KEY (p, c)) "
        "WITH CLUSTERING ORDER BY (c DESC) AND gc_grace_seconds = 7200")
    text = cluster.metadata.keyspaces[ks].tables["exported"].export_as_string()
    assert f"CREATE TABLE {ks}.exported (" in text
    assert "p int," in text and "c text," in text and "v double," in text
    assert "PRIMARY KEY (p, c)" in text
    assert "CLUSTERING ORDER BY (c DESC)" in text
    assert "gc_grace_seconds = 7200" in text
    ks_text = cluster.metadata.keyspaces[ks].export_as_string()
    assert f"CREATE KEYSPACE {ks} WITH replication = " in ks_text
    assert "'class': 'SimpleStrategy'" in ks_text and "'replication_factor': '1'" in ks_text


def test_schema_version_changes_on_ddl(session, ks):
    def version():
        return session.execute("SELECT schema_version FROM system.local WHERE key = 'local'").one()[0]

    v1 = version()
    session.execute(f"CREATE TABLE {ks}.sv (k int PRIMARY KEY)")
    v2 = version()
    session.execute(f"ALTER TABLE {ks}.sv ADD x int")
    v3 = version()
    assert v1 != v2 and v2 != v3 and v1 != v3


def test_metadata_refresh_after_alter_and_drop(cluster, session, ks):
    session.execute(f"CREATE TABLE {ks}.refresh (k int PRIMARY KEY, a int)")
    session.execute(f"ALTER TABLE {ks}.refresh ADD b text")
    assert set(cluster.metadata.keyspaces[ks].tables["refresh"].columns) == {"k", "a", "b"}
    session.execute(f"ALTER TABLE {ks}.refresh DROP a")
    assert set(cluster.metadata.keyspaces[ks].tables["refresh"].columns) == {"k", "b"}
    session.execute(f"DROP TABLE {ks}.refresh")
    assert "refresh" not in cluster.metadata.keyspaces[ks].tables


def test_system_schema_tables_readable(session):
    for t in ("keyspaces", "tables", "columns", "dropped_columns", "types", "functions",
              "aggregates", "indexes", "views", "triggers"):
        session.execute(f"SELECT * FROM system_schema.{t}")
