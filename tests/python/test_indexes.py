"""Secondary indexes through the Python driver: CREATE / DROP INDEX with Cassandra 5.0's checks
and texts (cql3/statements/schema/CreateIndexStatement.java, DropIndexStatement.java,
AlterTableStatement.java), system_schema.indexes and the driver's metadata, DESCRIBE, lookups
through the index (paging, limits, prepared statements, token restrictions, each kind of
column), maintenance on every kind of base write, SIGKILL, and a three-node ring."""

import time

import pytest
from cassandra import InvalidRequest
from cassandra.query import SimpleStatement

FILTERING = "Cannot execute this query as it might involve data filtering"


def err(session, query, *args):
    with pytest.raises(InvalidRequest) as e:
        session.execute(query, *args)
    return str(e.value)


def rows(session, query, *args):
    return sorted(tuple(r) for r in session.execute(query, *args))


@pytest.fixture
def base(session, ks, tname):
    """`(pk int, ck int, v int, w text, s int static, PRIMARY KEY (pk, ck))`, indexed on v."""
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (pk int, ck int, v int, w text, s int static, PRIMARY KEY (pk, ck))")
    session.execute(f"CREATE INDEX ON {t} (v)")
    return t


def test_create_index_errors_have_cassandras_texts(session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (pk int PRIMARY KEY, v int, d duration, l list<int>, "
                    f"fl frozen<list<int>>, m map<int, int>, st set<int>)")
    session.execute(f"CREATE TABLE {t}_c (pk int PRIMARY KEY, c counter)")
    session.execute(f"CREATE TABLE {t}_2 (a int, b int, v int, PRIMARY KEY ((a, b)))")
    assert "Table 'nope' doesn't exist" in err(session, f"CREATE INDEX ON {ks}.nope (v)")
    assert "Keyspace 'nope_ks' doesn't exist" in err(session, "CREATE INDEX ON nope_ks.t (v)")
    assert "Column 'nope' doesn't exist" in err(session, f"CREATE INDEX ON {t} (nope)")
    assert "Secondary indexes on counter tables aren't supported" in err(session, f"CREATE INDEX ON {t}_c (c)")
    assert "Secondary indexes are not supported on duration columns" in err(session, f"CREATE INDEX ON {t} (d)")
    assert "Cannot create secondary index on the only partition key column pk" in err(
        session, f"CREATE INDEX ON {t} (pk)")
    assert ("Cannot create values() index on frozen column fl. Frozen collections are immutable and must be "
            "fully indexed by using the 'full(fl)' modifier") in err(session, f"CREATE INDEX ON {t} (values(fl))")
    assert "full() indexes can only be created on frozen collections" in err(session, f"CREATE INDEX ON {t} (full(l))")
    assert "Cannot create keys() index on v. Non-collection columns only support simple indexes" in err(
        session, f"CREATE INDEX ON {t} (keys(v))")
    assert "Cannot create index on keys of column st with non-map type" in err(
        session, f"CREATE INDEX ON {t} (keys(st))")
    assert "Only CUSTOM indexes support multiple columns" in err(session, f"CREATE INDEX ON {t} (v, d)")
    assert "SASI indexes are disabled. Enable in cassandra.yaml to use." in err(
        session, f"CREATE CUSTOM INDEX ON {t} (v) USING 'org.apache.cassandra.index.sasi.SASIIndex'")
    assert "not supported by Cairn" in err(session, f"CREATE INDEX ON {t} (v) USING 'org.example.Index'")
    assert "Cannot create index on entries of column l with non-map type" in err(
        session, f"CREATE INDEX ON {t} (entries(l))")
    assert "Cannot create index on keys of column l with non-map type" in err(session, f"CREATE INDEX ON {t} (keys(l))")
    assert "full() indexes can only be created on frozen collections" in err(session, f"CREATE INDEX ON {t} (full(m))")
    # What Cairn refuses (not built yet), clearly.
    assert "Cairn does not support local indexes on collections or static columns" in err(
        session, f"CREATE INDEX ON {t} ((pk), m)")
    assert "Local index definition must contain full partition key only" in err(
        session, f"CREATE INDEX ON {t}_2 ((a), v)")
    assert "Local indexes containing partition key columns are not supported" in err(
        session, f"CREATE INDEX ON {t}_2 ((a, b), a)")
    # Names: Cassandra's default, then numbered; duplicates refused.
    session.execute(f"CREATE INDEX ON {t} (v)")
    assert f"Index {tname}_v_idx_1 is a duplicate of existing index {tname}_v_idx" in err(
        session, f"CREATE INDEX ON {t} (v)")
    session.execute(f"CREATE INDEX IF NOT EXISTS ON {t} (v)")
    session.execute(f"CREATE INDEX other ON {t}_2 (a)")
    assert "Index 'other' already exists" in err(session, f"CREATE INDEX other ON {t} (fl)")
    session.execute(f"CREATE INDEX IF NOT EXISTS other ON {t} (fl)")
    session.execute(f"CREATE INDEX ON {t} (full(fl))")
    session.execute(f"CREATE INDEX ON {t}_2 (v)")
    names = {r.index_name: (r.table_name, r.kind, dict(r.options)) for r in session.execute(
        "SELECT * FROM system_schema.indexes WHERE keyspace_name = %s", (ks,))}
    assert names == {
        f"{tname}_v_idx": (tname, "COMPOSITES", {"target": "v"}),
        f"{tname}_fl_idx": (tname, "COMPOSITES", {"target": "full(fl)"}),
        "other": (f"{tname}_2", "COMPOSITES", {"target": "a"}),
        f"{tname}_2_v_idx": (f"{tname}_2", "COMPOSITES", {"target": "v"}),
    }
    # Never a table or a view.
    tables = {r.table_name for r in session.execute(
        "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", (ks,))}
    assert tables == {tname, f"{tname}_c", f"{tname}_2"}
    assert not list(session.execute("SELECT * FROM system_schema.views WHERE keyspace_name = %s", (ks,)))
    assert "unconfigured table other_index" in err(session, f"SELECT * FROM {ks}.other_index")
    # DROP INDEX.
    assert f"Index '{ks}.nope' doesn't exist'" in err(session, f"DROP INDEX {ks}.nope")
    session.execute(f"DROP INDEX IF EXISTS {ks}.nope")
    session.execute(f"DROP INDEX {ks}.other")
    assert "Index 'other'" not in str(list(session.execute(f"DESCRIBE KEYSPACE {ks}")))
    # ALTER TABLE DROP of an indexed column; DROP TABLE drops its indexes.
    assert f"Cannot drop column v because it has dependent secondary indexes ({tname}_v_idx)" in err(
        session, f"ALTER TABLE {t} DROP v")
    session.execute(f"ALTER TABLE {t} DROP d")
    session.execute(f"DROP TABLE {t}")
    left = {r.index_name for r in session.execute(
        "SELECT index_name FROM system_schema.indexes WHERE keyspace_name = %s", (ks,))}
    assert left == {f"{tname}_2_v_idx"}
    session.execute(f"CREATE TABLE {t} (pk int PRIMARY KEY, v int)")
    session.execute(f"CREATE INDEX ON {t} (v)")   # the name is free again
    assert f"{tname}_v_idx" in {r.index_name for r in session.execute(
        "SELECT index_name FROM system_schema.indexes WHERE keyspace_name = %s", (ks,))}


def test_driver_metadata_and_describe_show_indexes(cluster, session, ks, base):
    tname = base.split(".")[1]
    cluster.refresh_schema_metadata()
    table = cluster.metadata.keyspaces[ks].tables[tname]
    assert set(table.indexes) == {f"{tname}_v_idx"}
    assert table.indexes[f"{tname}_v_idx"].index_options == {"target": "v"}
    assert f"{tname}_v_idx_index" not in cluster.metadata.keyspaces[ks].tables
    assert not cluster.metadata.keyspaces[ks].views
    want = f"CREATE INDEX {tname}_v_idx ON {ks}.{tname} (v);"
    listed = [(r.type, r.name, r.create_statement) for r in session.execute(f"DESCRIBE KEYSPACE {ks}")]
    assert ("index", f"{tname}_v_idx", want) in listed
    at = listed.index(("index", f"{tname}_v_idx", want))
    assert listed[at - 1][:2] == ("table", tname)
    assert [r.create_statement for r in session.execute(f"DESCRIBE TABLE {base}")][1] == want
    assert [r.create_statement for r in session.execute(f"DESCRIBE INDEX {ks}.{tname}_v_idx")] == [want]
    assert f"{tname}_v_idx_index" not in [r.name for r in session.execute("DESCRIBE TABLES")]


def test_lookup_needs_no_allow_filtering_and_follows_cassandras_rules(session, base):
    t = base
    for pk in range(20):
        for ck in range(5):
            session.execute(f"INSERT INTO {t} (pk, ck, v, w) VALUES ({pk}, {ck}, {(pk + ck) % 7}, 'w{ck}')")
    want = rows(session, f"SELECT pk, ck, v, w FROM {t} WHERE v = 3 ALLOW FILTERING")
    assert len(want) > 5
    got = [tuple(r) for r in session.execute(f"SELECT pk, ck, v, w FROM {t} WHERE v = 3")]
    assert sorted(got) == want
    # Base token order, as Cassandra's indexes return rows.
    tokens = [r[0] for r in session.execute(f"SELECT token(pk) FROM {t} WHERE v = 3")]
    assert tokens == sorted(tokens)
    # Other restrictions filter, with ALLOW FILTERING as Cassandra requires it.
    assert FILTERING in err(session, f"SELECT * FROM {t} WHERE v = 3 AND w = 'w1'")
    assert FILTERING in err(session, f"SELECT * FROM {t} WHERE v = 3 AND ck > 1")
    assert FILTERING in err(session, f"SELECT * FROM {t} WHERE v > 3")
    assert FILTERING in err(session, f"SELECT * FROM {t} WHERE w = 'w1'")
    assert rows(session, f"SELECT pk, ck FROM {t} WHERE v = 3 AND w = 'w1' ALLOW FILTERING") == \
        sorted((pk, ck) for pk, ck, _, w in want if w == "w1")
    assert rows(session, f"SELECT pk, ck FROM {t} WHERE v = 3 AND ck > 2 ALLOW FILTERING") == \
        sorted((pk, ck) for pk, ck, _, _ in want if ck > 2)
    # The partition key given too; token() bounds.
    assert rows(session, f"SELECT pk, ck FROM {t} WHERE pk = 3 AND v = 3") == [(3, 0)]
    some = tokens[len(tokens) // 2]
    assert [r[0] for r in session.execute(f"SELECT token(pk) FROM {t} WHERE token(pk) >= {some} AND v = 3")] == \
        [x for x in tokens if x >= some]
    # Limits and count.
    assert len(list(session.execute(f"SELECT * FROM {t} WHERE v = 3 LIMIT 4"))) == 4
    assert session.execute(f"SELECT count(*) FROM {t} WHERE v = 3").one()[0] == len(want)
    assert rows(session, f"SELECT pk, ck FROM {t} WHERE v = 99") == []
    assert "ORDER BY with 2ndary indexes is not supported, except for ANN queries." in err(
        session, f"SELECT * FROM {t} WHERE v = 3 ORDER BY ck DESC")
    # Prepared, with a bind marker.
    ps = session.prepare(f"SELECT pk, ck, v, w FROM {t} WHERE v = ?")
    assert rows(session, ps, (3,)) == want


def test_paging_and_per_partition_limit_through_the_index(session, base):
    t = base
    for pk in range(30):
        for ck in range(4):
            session.execute(f"INSERT INTO {t} (pk, ck, v) VALUES ({pk}, {ck}, {1 if ck != 2 else 2})")
    want = [tuple(r) for r in session.execute(
        SimpleStatement(f"SELECT pk, ck FROM {t} WHERE v = 1", fetch_size=1000))]
    assert len(want) == 90
    for fetch in (1, 2, 7, 50):
        got = [tuple(r) for r in session.execute(SimpleStatement(f"SELECT pk, ck FROM {t} WHERE v = 1",
                                                                 fetch_size=fetch))]
        assert got == want, fetch
    got = [tuple(r) for r in session.execute(SimpleStatement(
        f"SELECT pk, ck FROM {t} WHERE v = 1 PER PARTITION LIMIT 1", fetch_size=4))]
    assert got == [(pk, ck) for pk, ck in want if ck == 0]


def test_index_follows_every_kind_of_write(session, base):
    t = base

    def by(v):
        return rows(session, f"SELECT pk, ck FROM {t} WHERE v = {v}")

    session.execute(f"INSERT INTO {t} (pk, ck, v) VALUES (1, 1, 10)")
    session.execute(f"INSERT INTO {t} (pk, ck, v) VALUES (1, 2, 10)")
    session.execute(f"UPDATE {t} SET v = 10 WHERE pk = 2 AND ck = 1")
    assert by(10) == [(1, 1), (1, 2), (2, 1)]
    session.execute(f"UPDATE {t} SET v = 11 WHERE pk = 1 AND ck = 1")
    assert by(10) == [(1, 2), (2, 1)] and by(11) == [(1, 1)]
    session.execute(f"DELETE v FROM {t} WHERE pk = 1 AND ck = 2")
    session.execute(f"DELETE FROM {t} WHERE pk = 2 AND ck = 1")
    assert by(10) == []
    session.execute(f"INSERT INTO {t} (pk, ck, v) VALUES (3, 1, 12)")
    session.execute(f"INSERT INTO {t} (pk, ck, v) VALUES (3, 2, 12)")
    session.execute(f"INSERT INTO {t} (pk, ck, v) VALUES (4, 1, 12)")
    session.execute(f"DELETE FROM {t} WHERE pk = 3 AND ck > 1")
    assert by(12) == [(3, 1), (4, 1)]
    session.execute(f"DELETE FROM {t} WHERE pk = 3")
    assert by(12) == [(4, 1)]
    session.execute(f"BEGIN BATCH INSERT INTO {t} (pk, ck, v) VALUES (5, 1, 13); "
                    f"UPDATE {t} SET v = 13 WHERE pk = 6 AND ck = 1; APPLY BATCH")
    assert by(13) == [(5, 1), (6, 1)]
    assert session.execute(f"UPDATE {t} SET v = 14 WHERE pk = 5 AND ck = 1 IF v = 13").one()[0]
    assert by(13) == [(6, 1)] and by(14) == [(5, 1)]
    session.execute(f"INSERT INTO {t} (pk, ck, v) VALUES (7, 1, 15) USING TTL 1")
    assert by(15) == [(7, 1)]
    deadline = time.time() + 15
    while time.time() < deadline and by(15):
        time.sleep(0.3)
    assert by(15) == []
    session.execute(f"TRUNCATE {t}")
    assert by(14) == []


def test_other_targets_clustering_partition_component_and_frozen(session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (a int, b int, c int, d int, fl frozen<list<int>>, "
                    f"PRIMARY KEY ((a, b), c, d))")
    session.execute(f"CREATE INDEX ON {t} (b)")
    session.execute(f"CREATE INDEX ON {t} (d)")
    session.execute(f"CREATE INDEX ON {t} (full(fl))")
    for a in range(5):
        for b in range(3):
            for c in range(3):
                session.execute(f"INSERT INTO {t} (a, b, c, d, fl) VALUES ({a}, {b}, {c}, {c * 10 + b}, [{a}, {b}])")
    assert rows(session, f"SELECT a, c FROM {t} WHERE b = 2") == [(a, c) for a in range(5) for c in range(3)]
    assert rows(session, f"SELECT a, b, c FROM {t} WHERE d = 21") == [(a, 1, 2) for a in range(5)]
    assert rows(session, f"SELECT a, b, c FROM {t} WHERE fl = [3, 1]") == [(3, 1, c) for c in range(3)]
    assert FILTERING in err(session, f"SELECT * FROM {t} WHERE b = 2 AND c = 1")
    assert rows(session, f"SELECT a FROM {t} WHERE b = 2 AND c = 1 ALLOW FILTERING") == [(a,) for a in range(5)]
    session.execute(f"DELETE FROM {t} WHERE a = 0 AND b = 2")
    assert rows(session, f"SELECT a, c FROM {t} WHERE b = 2") == [(a, c) for a in range(1, 5) for c in range(3)]


def test_index_on_a_table_with_data_is_built(session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (pk int, ck int, v int, PRIMARY KEY (pk, ck))")
    for pk in range(40):
        for ck in range(3):
            session.execute(f"INSERT INTO {t} (pk, ck, v) VALUES ({pk}, {ck}, {pk % 4})")
    session.execute(f"CREATE INDEX ON {t} (v)")
    want = [(pk, ck) for pk in range(40) for ck in range(3) if pk % 4 == 1]
    # While the index is built here, a lookup is refused (Cassandra's INDEX_NOT_AVAILABLE):
    # never a partial answer.
    from cassandra import ReadFailure
    for _ in range(5):
        try:
            assert rows(session, f"SELECT pk, ck FROM {t} WHERE v = 1") == want
        except ReadFailure as e:
            assert "INDEX_NOT_AVAILABLE" in str(e)
    deadline = time.time() + 30
    name = f"{tname}_v_idx"
    while time.time() < deadline and (ks, name) not in rows(
            session, 'SELECT table_name, index_name FROM system."IndexInfo"'):
        time.sleep(0.3)
    assert (ks, name) in rows(session, 'SELECT table_name, index_name FROM system."IndexInfo"')
    assert (ks, f"{name}_index") in rows(session, "SELECT keyspace_name, view_name FROM system.built_views")
    assert rows(session, f"SELECT pk, ck FROM {t} WHERE v = 1") == want


def test_base_writes_and_index_entries_survive_sigkill_together(node_factory):
    from conftest import make_cluster
    from cassandra.concurrent import execute_concurrent_with_args
    n = node_factory("index_kill")
    c = make_cluster(n)
    s = c.connect()
    try:
        s.execute("CREATE KEYSPACE ik WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE ik.t (pk int, ck int, v int, PRIMARY KEY (pk, ck))")
        s.execute("CREATE INDEX ON ik.t (v)")
        ins = s.prepare("INSERT INTO ik.t (pk, ck, v) VALUES (?, ?, ?)")
        execute_concurrent_with_args(s, ins, [(p, ck, (p + ck) % 10) for p in range(20) for ck in range(20)],
                                     concurrency=32, raise_on_first_error=True)
        upd = s.prepare("UPDATE ik.t SET v = ? WHERE pk = ? AND ck = ?")
        execute_concurrent_with_args(s, upd, [(100 + p, p, ck) for p in range(20) for ck in range(0, 20, 2)],
                                     concurrency=32, raise_on_first_error=True)
        s.execute("DELETE FROM ik.t WHERE pk = 3")
    finally:
        c.shutdown()
    n.kill()
    n.start()
    c = make_cluster(n)
    s = c.connect()
    try:
        base = rows(s, "SELECT pk, ck, v FROM ik.t")
        assert len(base) == 19 * 20
        for v in list(range(10)) + [100 + p for p in range(20)]:
            assert rows(s, f"SELECT pk, ck, v FROM ik.t WHERE v = {v}") == [r for r in base if r[2] == v], v
    finally:
        c.shutdown()


def test_indexes_in_a_ring_at_rf3_and_rf2(tmp_root):
    """Three nodes: index entries reach the paired replicas; a lookup at QUORUM through every
    node returns what was written at QUORUM."""
    from cassandra import ConsistencyLevel
    from test_cluster import alone, on, three_nodes

    with three_nodes(tmp_root / "index-ring") as nodes:
        for rf in (3, 2):
            ks = f"ir{rf}"
            on(nodes[0], f"CREATE KEYSPACE {ks} WITH replication = "
                         f"{{'class': 'NetworkTopologyStrategy', 'datacenter1': {rf}}}")
            on(nodes[0], f"CREATE TABLE {ks}.t (pk int, ck int, v int, PRIMARY KEY (pk, ck))")
            on(nodes[1], f"CREATE INDEX ON {ks}.t (v)")
            expected = {}
            for i, n in enumerate(nodes):
                c = alone(n)
                try:
                    s = c.connect()
                    for pk in range(i * 10, i * 10 + 10):
                        for ck in range(3):
                            s.execute(SimpleStatement(
                                f"INSERT INTO {ks}.t (pk, ck, v) VALUES ({pk}, {ck}, {(pk + ck) % 5})",
                                consistency_level=ConsistencyLevel.QUORUM))
                            expected[(pk, ck)] = (pk + ck) % 5
                    for pk in range(i * 10, i * 10 + 10, 3):
                        s.execute(SimpleStatement(f"UPDATE {ks}.t SET v = 7 WHERE pk = {pk} AND ck = 0",
                                                  consistency_level=ConsistencyLevel.QUORUM))
                        expected[(pk, 0)] = 7
                finally:
                    c.shutdown()
            for n in nodes:
                c = alone(n)
                try:
                    s = c.connect()
                    for v in (0, 3, 7):
                        q = SimpleStatement(f"SELECT pk, ck FROM {ks}.t WHERE v = {v}",
                                            consistency_level=ConsistencyLevel.QUORUM, fetch_size=7)
                        got = sorted(tuple(r) for r in s.execute(q))
                        assert got == sorted(k for k, x in expected.items() if x == v), (n.host, v)
                finally:
                    c.shutdown()


def test_local_index_serves_lookups_within_a_partition(cluster, session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (pk int, ck int, v int, w int, PRIMARY KEY (pk, ck))")
    session.execute(f"CREATE INDEX local_v ON {t} ((pk), v)")
    for pk in range(5):
        for ck in range(30):
            session.execute(f"INSERT INTO {t} (pk, ck, v, w) VALUES ({pk}, {ck}, {ck % 4}, {ck})")
    assert rows(session, f"SELECT ck FROM {t} WHERE pk = 2 AND v = 1") == [(ck,) for ck in range(1, 30, 4)]
    got = [tuple(r) for r in session.execute(
        SimpleStatement(f"SELECT pk, ck FROM {t} WHERE pk IN (1, 3) AND v = 2", fetch_size=3))]
    assert got == [(pk, ck) for pk in (1, 3) for ck in range(2, 30, 4)]
    ps = session.prepare(f"SELECT ck FROM {t} WHERE pk = ? AND v = ?")
    assert rows(session, ps, (4, 3)) == [(ck,) for ck in range(3, 30, 4)]
    # Without the partition key a local index serves nothing.
    assert FILTERING in err(session, f"SELECT * FROM {t} WHERE v = 1")
    assert FILTERING in err(session, f"SELECT * FROM {t} WHERE pk = 1 AND v = 1 AND w = 5")
    session.execute(f"UPDATE {t} SET v = 9 WHERE pk = 2 AND ck = 1")
    session.execute(f"DELETE FROM {t} WHERE pk = 2 AND ck = 5")
    assert rows(session, f"SELECT ck FROM {t} WHERE pk = 2 AND v = 1") == [(ck,) for ck in range(9, 30, 4)]
    assert rows(session, f"SELECT ck FROM {t} WHERE pk = 2 AND v = 9") == [(1,)]
    want = f"CREATE INDEX local_v ON {t} ((pk), v);"
    assert want in [r.create_statement for r in session.execute(f"DESCRIBE TABLE {t}")]
    options = session.execute("SELECT options FROM system_schema.indexes WHERE keyspace_name = %s "
                              "AND table_name = %s AND index_name = 'local_v'", (ks, tname)).one().options
    assert options == {"target": '{"pk":["pk"],"ck":["v"]}'}


def test_empty_values_are_indexed(session, ks, tname):
    # F86: Cassandra indexes an empty text or blob; its index partition is the empty key.
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (pk0 text, ck0 ascii, v0 blob, PRIMARY KEY (pk0, ck0))")
    session.execute(f"CREATE INDEX ON {t} (ck0)")
    session.execute(f"CREATE INDEX ON {t} (v0)")
    session.execute(f"INSERT INTO {t} (pk0, ck0, v0) VALUES ('z', '', 0x)")
    session.execute(f"INSERT INTO {t} (pk0, ck0, v0) VALUES ('y', 'a', 0x01)")
    session.execute(f"INSERT INTO {t} (pk0, ck0, v0) VALUES ('x', '', 0x01)")
    assert rows(session, f"SELECT pk0, ck0 FROM {t} WHERE ck0 = ''") == [("x", ""), ("z", "")]
    assert rows(session, f"SELECT pk0 FROM {t} WHERE v0 = 0x") == [("z",)]
    session.execute(f"UPDATE {t} SET v0 = 0x02 WHERE pk0 = 'z' AND ck0 = ''")
    assert rows(session, f"SELECT pk0 FROM {t} WHERE v0 = 0x") == []
    assert rows(session, f"SELECT pk0 FROM {t} WHERE v0 = 0x02") == [("z",)]


def wait_built(session, ks, name):
    deadline = time.time() + 30
    while time.time() < deadline and (ks, name) not in rows(
            session, 'SELECT table_name, index_name FROM system."IndexInfo"'):
        time.sleep(0.3)
    assert (ks, name) in rows(session, 'SELECT table_name, index_name FROM system."IndexInfo"')


def test_static_column_index_returns_the_partitions_rows(session, ks, tname):
    # Cassandra's SecondaryIndexTest.testIndexOnStaticColumnWithPartitionWithoutRows.
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (pk int, c int, s int static, v int, PRIMARY KEY (pk, c))")
    session.execute(f"CREATE INDEX ON {t} (s)")
    session.execute(f"INSERT INTO {t} (pk, c, s, v) VALUES (1, 1, 9, 1)")
    session.execute(f"INSERT INTO {t} (pk, c, s, v) VALUES (1, 2, 9, 2)")
    session.execute(f"INSERT INTO {t} (pk, s) VALUES (2, 9)")
    session.execute(f"INSERT INTO {t} (pk, c, s, v) VALUES (3, 1, 9, 1)")
    session.execute(f"INSERT INTO {t} (pk, c, s, v) VALUES (4, 1, 8, 1)")
    want = [(1, 1, 9, 1), (1, 2, 9, 2), (2, None, 9, None), (3, 1, 9, 1)]
    got = [tuple(r) for r in session.execute(f"SELECT pk, c, s, v FROM {t} WHERE s = 9")]
    assert sorted(got, key=str) == sorted(want, key=str)
    session.execute(f"DELETE FROM {t} WHERE pk = 3")
    assert len(list(session.execute(f"SELECT * FROM {t} WHERE s = 9"))) == 3
    # Paging across partitions and within one.
    for c in range(10):
        session.execute(f"INSERT INTO {t} (pk, c, v) VALUES (5, {c}, {c})")
    session.execute(f"UPDATE {t} SET s = 7 WHERE pk = 5")
    got = list(session.execute(SimpleStatement(f"SELECT pk, c FROM {t} WHERE s = 7", fetch_size=3)))
    assert [tuple(r) for r in got] == [(5, c) for c in range(10)]
    assert rows(session, f"SELECT c FROM {t} WHERE s = 7 LIMIT 4") == [(c,) for c in range(4)]
    assert FILTERING in err(session, f"SELECT * FROM {t} WHERE s = 7 AND v = 1")
    assert rows(session, f"SELECT pk, c FROM {t} WHERE s = 7 AND v = 1 ALLOW FILTERING") == [(5, 1)]
    # A changed static value moves the partition's entry.
    session.execute(f"UPDATE {t} SET s = 8 WHERE pk = 1")
    assert rows(session, f"SELECT pk, c FROM {t} WHERE s = 8") == [(1, 1), (1, 2), (4, 1)]
    assert rows(session, f"SELECT pk FROM {t} WHERE s = 9") == [(2,)]
    session.execute(f"DELETE s FROM {t} WHERE pk = 2")
    assert rows(session, f"SELECT pk FROM {t} WHERE s = 9") == []
    names = {r.index_name: dict(r.options) for r in session.execute(
        "SELECT * FROM system_schema.indexes WHERE keyspace_name = %s AND table_name = %s", (ks, tname))}
    assert names == {f"{tname}_s_idx": {"target": "s"}}
    # Built on existing data, a partition holding only its static row included.
    session.execute(f"INSERT INTO {t} (pk, s) VALUES (6, 8)")
    session.execute(f"DROP INDEX {ks}.{tname}_s_idx")
    session.execute(f"CREATE INDEX ON {t} (s)")
    wait_built(session, ks, f"{tname}_s_idx")
    got = [tuple(r) for r in session.execute(f"SELECT pk, c FROM {t} WHERE s = 8")]
    assert sorted(got, key=str) == [(1, 1), (1, 2), (4, 1), (6, None)]



def test_partition_key_column_index_finds_a_partition_with_only_a_static_row(session, ks, tname):
    # As Cassandra 5.0 answers (checked against 5.0.9; FINDINGS F96): the static row has an
    # entry of its own, shown only when its partition has no rows and nothing restricts them.
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (a int, b int, c int, s int static, v int, PRIMARY KEY ((a, b), c))")
    session.execute(f"CREATE INDEX ON {t} (a)")
    session.execute(f"UPDATE {t} SET s = 1 WHERE a = 1 AND b = 1")
    session.execute(f"UPDATE {t} SET s = 2 WHERE a = 1 AND b = 2")
    session.execute(f"INSERT INTO {t} (a, b, c, v) VALUES (1, 2, 1, 10)")
    session.execute(f"INSERT INTO {t} (a, b, c, v) VALUES (1, 2, 2, 20)")
    session.execute(f"INSERT INTO {t} (a, b, c, v) VALUES (1, 3, 1, 30)")
    session.execute(f"UPDATE {t} SET s = 5 WHERE a = 1 AND b = 5")
    session.execute(f"DELETE s FROM {t} WHERE a = 1 AND b = 5")
    everything = [(1, 1, None, 1, None), (1, 2, 1, 2, 10), (1, 2, 2, 2, 20), (1, 3, 1, None, 30)]

    def check():
        got = [tuple(r) for r in session.execute(f"SELECT * FROM {t} WHERE a = 1")]
        assert sorted(got, key=str) == everything
        paged = session.execute(SimpleStatement(f"SELECT * FROM {t} WHERE a = 1", fetch_size=1))
        assert sorted((tuple(r) for r in paged), key=str) == everything
        assert rows(session, f"SELECT * FROM {t} WHERE a = 1 AND c = 1 ALLOW FILTERING") == [
            (1, 2, 1, 2, 10), (1, 3, 1, None, 30)]
        assert rows(session, f"SELECT * FROM {t} WHERE a = 1 AND s = 1 ALLOW FILTERING") == [
            (1, 1, None, 1, None)]
        assert rows(session, f"SELECT DISTINCT a, b, s FROM {t} WHERE a = 1") == [
            (1, 1, 1), (1, 2, 2), (1, 3, None)]
        assert list(session.execute(f"SELECT count(*) FROM {t} WHERE a = 1"))[0][0] == 4
        assert len(list(session.execute(f"SELECT * FROM {t} WHERE a = 1 PER PARTITION LIMIT 1"))) == 3

    check()
    # Built on existing data.
    session.execute(f"DROP INDEX {ks}.{tname}_a_idx")
    session.execute(f"CREATE INDEX ON {t} (a)")
    wait_built(session, ks, f"{tname}_a_idx")
    check()
    # The entry goes with the static row.
    session.execute(f"DELETE s FROM {t} WHERE a = 1 AND b = 1")
    assert rows(session, f"SELECT b FROM {t} WHERE a = 1") == [(2,), (2,), (3,)]


def test_partition_key_column_index_shows_a_static_row_written_after_its_tombstone(session, ks, tname):
    # A deliberate difference (docs/cql.md; FINDINGS F100): Cassandra 5.0.9 indexes the static row
    # of a partition-key index only when the row is new in its memtable, so a static value written
    # after its own tombstone, before a flush, is not found through the index (after a flush it
    # is). Cairn answers through the index what the partition's own read answers.
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (a int, b int, c int, s text static, v int, PRIMARY KEY ((a, b), c))")
    session.execute(f"CREATE INDEX ON {t} (a)")
    session.execute(f"DELETE s FROM {t} USING TIMESTAMP 1000 WHERE a = 5 AND b = -3")
    session.execute(f"INSERT INTO {t} (a, b, c, s) VALUES (5, -3, 1, 'x') USING TIMESTAMP 7000")
    session.execute(f"DELETE FROM {t} USING TIMESTAMP 11000 WHERE a = 5 AND b = -3 AND c = 1")
    session.execute(f"DELETE s FROM {t} USING TIMESTAMP 1000 WHERE a = 5 AND b = 4")
    session.execute(f"UPDATE {t} USING TIMESTAMP 2000 SET s = 'y' WHERE a = 5 AND b = 4")
    plain = rows(session, f"SELECT * FROM {t} WHERE a = 5 AND b = -3") + rows(
        session, f"SELECT * FROM {t} WHERE a = 5 AND b = 4")
    assert sorted(plain) == [(5, -3, None, "x", None), (5, 4, None, "y", None)]
    assert sorted(rows(session, f"SELECT * FROM {t} WHERE a = 5")) == sorted(plain)

@pytest.fixture
def coll(session, ks, tname):
    """`(pk int, ck int, l list<int>, st set<text>, m map<text, int>)` with every collection index."""
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (pk int, ck int, l list<int>, st set<text>, m map<text, int>, "
                    f"PRIMARY KEY (pk, ck))")
    session.execute(f"CREATE INDEX ON {t} (l)")
    session.execute(f"CREATE INDEX ON {t} (st)")
    session.execute(f"CREATE INDEX {tname}_mk ON {t} (keys(m))")
    session.execute(f"CREATE INDEX {tname}_mv ON {t} (values(m))")
    session.execute(f"CREATE INDEX {tname}_me ON {t} (entries(m))")
    return t


def test_collection_index_targets_in_schema_and_describe(session, ks, tname, coll):
    targets = {r.index_name: dict(r.options)["target"] for r in session.execute(
        "SELECT * FROM system_schema.indexes WHERE keyspace_name = %s AND table_name = %s", (ks, tname))}
    assert targets == {f"{tname}_l_idx": "values(l)", f"{tname}_st_idx": "values(st)",
                       f"{tname}_mk": "keys(m)", f"{tname}_mv": "values(m)", f"{tname}_me": "entries(m)"}
    stmts = [r.create_statement for r in session.execute(f"DESCRIBE TABLE {coll}")]
    assert f"CREATE INDEX {tname}_me ON {coll} (entries(m));" in stmts
    assert f"CREATE INDEX {tname}_l_idx ON {coll} (values(l));" in stmts
    assert f"Index {tname}_l_idx_1 is a duplicate of existing index {tname}_l_idx" in err(
        session, f"CREATE INDEX ON {coll} (values(l))")


def test_collection_lookups_follow_every_write(session, coll):
    t = coll
    session.execute(f"INSERT INTO {t} (pk, ck, l, st, m) VALUES (1, 1, [1, 2, 2], {{'a', 'b'}}, {{'x': 1, 'y': 2}})")
    session.execute(f"INSERT INTO {t} (pk, ck, l, st, m) VALUES (1, 2, [2, 3], {{'b'}}, {{'y': 1}})")
    session.execute(f"INSERT INTO {t} (pk, ck, l, st, m) VALUES (2, 1, [3], {{'c', ''}}, {{'x': 2}})")
    q = lambda where: rows(session, f"SELECT pk, ck FROM {t} WHERE {where}")
    assert q("l CONTAINS 2") == [(1, 1), (1, 2)]
    assert q("st CONTAINS 'b'") == [(1, 1), (1, 2)]
    assert q("st CONTAINS ''") == [(2, 1)]
    assert q("m CONTAINS KEY 'x'") == [(1, 1), (2, 1)]
    assert q("m CONTAINS 1") == [(1, 1), (1, 2)]
    assert q("m['y'] = 2") == [(1, 1)]
    assert q("m['x'] = 2") == [(2, 1)]
    assert q("m['z'] = 2") == []
    # Element updates: added, removed, overwritten; a list's repeated value stays indexed
    # while one copy is left.
    session.execute(f"UPDATE {t} SET l = l + [7], st = st - {{'b'}}, m['y'] = 5 WHERE pk = 1 AND ck = 1")
    assert q("l CONTAINS 7") == [(1, 1)]
    assert q("st CONTAINS 'b'") == [(1, 2)]
    assert q("m['y'] = 2") == []
    assert q("m['y'] = 5") == [(1, 1)]
    assert q("m CONTAINS 2") == [(2, 1)]
    session.execute(f"DELETE l[1] FROM {t} WHERE pk = 1 AND ck = 1")
    assert q("l CONTAINS 2") == [(1, 1), (1, 2)]
    session.execute(f"UPDATE {t} SET l = [9] WHERE pk = 1 AND ck = 1")
    assert q("l CONTAINS 2") == [(1, 2)]
    assert q("l CONTAINS 9") == [(1, 1)]
    session.execute(f"DELETE m['x'] FROM {t} WHERE pk = 1 AND ck = 1")
    assert q("m CONTAINS KEY 'x'") == [(2, 1)]
    session.execute(f"DELETE m FROM {t} WHERE pk = 2 AND ck = 1")
    assert q("m CONTAINS KEY 'x'") == []
    # Row and partition deletes.
    session.execute(f"DELETE FROM {t} WHERE pk = 1 AND ck = 2")
    assert q("l CONTAINS 2") == []
    session.execute(f"DELETE FROM {t} WHERE pk = 2")
    assert q("st CONTAINS 'c'") == []
    # Prepared binds, paging, LIMIT, ALLOW FILTERING for the rest.
    ins = session.prepare(f"INSERT INTO {t} (pk, ck, st, m) VALUES (?, ?, ?, ?)")
    for pk in range(10):
        for ck in range(3):
            session.execute(ins, (pk + 10, ck, {"p", str(ck)}, {"k": ck}))
    got = list(session.execute(SimpleStatement(f"SELECT pk, ck FROM {t} WHERE st CONTAINS 'p'", fetch_size=7)))
    assert sorted(tuple(r) for r in got) == [(pk + 10, ck) for pk in range(10) for ck in range(3)]
    assert len(got) == 30
    assert len(list(session.execute(f"SELECT * FROM {t} WHERE st CONTAINS 'p' LIMIT 5"))) == 5
    sel = session.prepare(f"SELECT pk, ck FROM {t} WHERE m[?] = ?")
    assert sorted(tuple(r) for r in session.execute(sel, ("k", 2))) == [(pk + 10, 2) for pk in range(10)]
    sel = session.prepare(f"SELECT pk, ck FROM {t} WHERE st CONTAINS ?")
    assert sorted(tuple(r) for r in session.execute(sel, ("1",))) == [(pk + 10, 1) for pk in range(10)]
    assert FILTERING in err(session, f"SELECT * FROM {t} WHERE st CONTAINS 'p' AND ck = 1")
    assert q("st CONTAINS 'p' AND ck = 1 ALLOW FILTERING") == [(pk + 10, 1) for pk in range(10)]
    assert q("m CONTAINS KEY 'k' AND m CONTAINS 0 ALLOW FILTERING") == [(pk + 10, 0) for pk in range(10)]


def test_collection_elements_with_ttl_leave_the_index(session, coll):
    t = coll
    session.execute(f"INSERT INTO {t} (pk, ck, st) VALUES (1, 1, {{'keep'}})")
    session.execute(f"UPDATE {t} USING TTL 1 SET st = st + {{'gone'}}, m['t'] = 1 WHERE pk = 1 AND ck = 1")
    assert rows(session, f"SELECT pk FROM {t} WHERE st CONTAINS 'gone'") == [(1,)]
    time.sleep(2.5)
    assert rows(session, f"SELECT pk FROM {t} WHERE st CONTAINS 'gone'") == []
    assert rows(session, f"SELECT pk FROM {t} WHERE m CONTAINS KEY 't'") == []
    assert rows(session, f"SELECT pk FROM {t} WHERE st CONTAINS 'keep'") == [(1,)]
    # The index partition itself holds no live entry for the expired element: the element
    # written again without a TTL is found again.
    session.execute(f"UPDATE {t} SET st = st + {{'gone'}} WHERE pk = 1 AND ck = 1")
    assert rows(session, f"SELECT pk FROM {t} WHERE st CONTAINS 'gone'") == [(1,)]


def test_collection_index_built_on_existing_data(session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (pk int, ck int, m map<int, text>, PRIMARY KEY (pk, ck))")
    for pk in range(30):
        for ck in range(2):
            session.execute(f"INSERT INTO {t} (pk, ck, m) VALUES ({pk}, {ck}, {{{pk % 3}: 'v{ck}', 99: 'w'}})")
    session.execute(f"CREATE INDEX ON {t} (entries(m))")
    session.execute(f"CREATE INDEX ON {t} (keys(m))")
    wait_built(session, ks, f"{tname}_m_idx")
    wait_built(session, ks, f"{tname}_m_idx_1")
    assert rows(session, f"SELECT pk, ck FROM {t} WHERE m[1] = 'v1'") == [(pk, 1) for pk in range(30) if pk % 3 == 1]
    assert rows(session, f"SELECT pk, ck FROM {t} WHERE m CONTAINS KEY 2") == [
        (pk, ck) for pk in range(30) for ck in range(2) if pk % 3 == 2]


def test_collection_index_survives_sigkill(node_factory):
    from conftest import make_cluster
    from cassandra.concurrent import execute_concurrent_with_args
    n = node_factory("coll_index_kill")
    c = make_cluster(n)
    s = c.connect()
    try:
        s.execute("CREATE KEYSPACE cik WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE cik.t (pk int, ck int, st set<int>, PRIMARY KEY (pk, ck))")
        s.execute("CREATE INDEX ON cik.t (st)")
        ins = s.prepare("INSERT INTO cik.t (pk, ck, st) VALUES (?, ?, ?)")
        execute_concurrent_with_args(s, ins, [(p, ck, {p % 5, ck % 5}) for p in range(20) for ck in range(10)],
                                     concurrency=32, raise_on_first_error=True)
        upd = s.prepare("UPDATE cik.t SET st = st - ? WHERE pk = ? AND ck = ?")
        execute_concurrent_with_args(s, upd, [({p % 5}, p, ck) for p in range(20) for ck in range(0, 10, 2)],
                                     concurrency=32, raise_on_first_error=True)
    finally:
        c.shutdown()
    n.kill()
    n.start()
    c = make_cluster(n)
    s = c.connect()
    try:
        base = [(r.pk, r.ck, r.st or set()) for r in s.execute("SELECT pk, ck, st FROM cik.t")]
        assert len(base) == 200
        for v in range(5):
            want = sorted((pk, ck) for pk, ck, st in base if v in st)
            assert want
            assert rows(s, f"SELECT pk, ck FROM cik.t WHERE st CONTAINS {v}") == want, v
    finally:
        c.shutdown()
