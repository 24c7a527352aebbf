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


def test_peers_v2_has_cassandra4_columns_and_no_rows(session):
    rs = session.execute("SELECT * FROM system.peers_v2")
    assert list(rs) == []
    assert rs.column_names == [
        "peer", "peer_port", "data_center", "host_id", "native_address", "native_port",
        "preferred_ip", "preferred_port", "rack", "release_version", "schema_version", "tokens"]
    # Listed in system_schema like Cassandra's: keyed by (peer), peer_port.
    cols = {r.column_name: (r.kind, r.position, r.type) for r in session.execute(
        "SELECT column_name, kind, position, type FROM system_schema.columns "
        "WHERE keyspace_name = 'system' AND table_name = 'peers_v2'")}
    assert cols["peer"] == ("partition_key", 0, "inet")
    assert cols["peer_port"] == ("clustering", 0, "int")
    assert cols["tokens"] == ("regular", -1, "set<text>")


def test_virtual_keyspaces_in_driver_metadata(cluster):
    # The driver's SchemaParserV4 (release_version >= 4) builds these from
    # system_virtual_schema; Cassandra lists both virtual keyspaces there, itself included.
    for name in ("system_virtual_schema", "system_views"):
        km = cluster.metadata.keyspaces[name]
        assert km.virtual, name
    cols = cluster.metadata.keyspaces["system_virtual_schema"].tables["columns"]
    assert cols.virtual
    assert [c.name for c in cols.partition_key] == ["keyspace_name"]
    assert [c.name for c in cols.clustering_key] == ["table_name", "column_name"]
    settings = cluster.metadata.keyspaces["system_views"].tables["settings"]
    assert [c.name for c in settings.partition_key] == ["name"]
    assert "VIRTUAL TABLE system_views.settings" in settings.export_as_string()


def test_virtual_schema_rows(session):
    assert sorted(r.keyspace_name for r in session.execute(
        "SELECT keyspace_name FROM system_virtual_schema.keyspaces")) == [
        "system_views", "system_virtual_schema"]
    tables = {(r.keyspace_name, r.table_name): r.comment for r in session.execute(
        "SELECT * FROM system_virtual_schema.tables")}
    assert ("system_virtual_schema", "tables") in tables
    assert ("system_views", "settings") in tables
    assert all(ks in ("system_views", "system_virtual_schema") for ks, _ in tables)
    pos = {r.column_name: (r.kind, r.position) for r in session.execute(
        "SELECT column_name, kind, position FROM system_virtual_schema.columns "
        "WHERE keyspace_name = 'system_views' AND table_name = 'sstable_tasks'")}
    assert pos["keyspace_name"] == ("partition_key", 0)
    assert pos["task_id"] == ("clustering", 1)
    assert pos["kind"] == ("regular", -1)
    # Virtual keyspaces stay out of system_schema, as in Cassandra.
    assert rows(session, "SELECT * FROM system_schema.keyspaces WHERE keyspace_name = 'system_views'") == []


def test_system_views_show_live_figures(session, ks):
    settings = {r.name: r.value for r in session.execute("SELECT * FROM system_views.settings")}
    assert settings["authorizer"] == "AllowAllAuthorizer"
    assert settings["partitioner"] == "org.apache.cassandra.dht.Murmur3Partitioner"
    assert settings["compaction_throughput"].endswith("MiB/s")
    session.execute(f"CREATE TABLE {ks}.du (k int PRIMARY KEY, v text)")
    for i in range(50):
        session.execute(f"INSERT INTO {ks}.du (k, v) VALUES ({i}, '{'x' * 100}')")
    du = session.execute(
        "SELECT mebibytes FROM system_views.disk_usage WHERE keyspace_name = %s AND table_name = 'du'",
        (ks,)).one()
    assert du is not None and du.mebibytes >= 0
    session.execute("SELECT * FROM system_views.sstable_tasks")
    session.execute("SELECT * FROM system_views.max_partition_size")


def test_virtual_tables_are_read_only(session):
    from cassandra import InvalidRequest, Unauthorized
    import pytest
    with pytest.raises(InvalidRequest, match="Modification is not supported by table system_views.settings"):
        session.execute("INSERT INTO system_views.settings (name, value) VALUES ('a', 'b')")
    with pytest.raises(InvalidRequest, match="Modification is not supported by table system_virtual_schema.keyspaces"):
        session.execute("DELETE FROM system_virtual_schema.keyspaces WHERE keyspace_name = 'x'")
    with pytest.raises(InvalidRequest, match="Modification is not supported by table system_views.settings"):
        session.execute("BEGIN BATCH UPDATE system_views.settings SET value = 'b' WHERE name = 'a' APPLY BATCH")
    prepared = session.prepare("INSERT INTO system_views.settings (name, value) VALUES (?, ?)")
    with pytest.raises(InvalidRequest, match="Modification is not supported"):
        session.execute(prepared, ("a", "b"))
    with pytest.raises(InvalidRequest, match="Truncation is not supported by table system_views.settings"):
        session.execute("TRUNCATE system_views.settings")
    with pytest.raises(InvalidRequest, match="unconfigured table nope"):
        session.execute("SELECT * FROM system_views.nope")
    for ddl in ("CREATE TABLE system_views.t (k int PRIMARY KEY)",
                "DROP TABLE system_views.settings",
                "ALTER TABLE system_virtual_schema.tables ADD x int",
                "DROP KEYSPACE system_views",
                # Cairn's own system tables: stores and views, not emptied or dropped by users
                # (TRUNCATE and DROP TABLE of system_auth.roles used to wipe the roles).
                "DROP TABLE system_schema.keyspaces",
                "TRUNCATE system_auth.roles",
                "DROP TABLE system_auth.roles",
                "ALTER TABLE system.local ADD x int"):
        with pytest.raises(Unauthorized, match="keyspace is not user-modifiable"):
            session.execute(ddl)
    # The catalog and the roles are intact.
    assert rows(session, "SELECT * FROM system_schema.keyspaces WHERE keyspace_name = 'system'")
    assert rows(session, "SELECT role FROM system_auth.roles WHERE role = 'cassandra'")


def test_use_a_virtual_keyspace(cluster):
    s = cluster.connect("system_views")
    try:
        assert s.execute("SELECT value FROM settings WHERE name = 'authorizer'").one().value == "AllowAllAuthorizer"
    finally:
        s.shutdown()
