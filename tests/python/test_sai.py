"""Cassandra 5.0's storage-attached indexes (SAI, `USING 'sai'`) through the Python driver:
CREATE / DROP with Cassandra's checks and texts (StorageAttachedIndex.validateOptions),
system_schema.indexes and the driver's metadata, DESCRIBE, and the queries SAI answers without
ALLOW FILTERING (`=`, ranges on ordered types, several SAI columns ANDed, CONTAINS / CONTAINS
KEY) and those that still need it, each checked against Cassandra 5.0.9's answers; paging,
LIMIT, prepared binds, and a build on existing data. Cairn serves SAI with the global index's
storage (docs/cql.md#secondary-indexes)."""

import pytest
from cassandra import InvalidRequest
from cassandra.protocol import ConfigurationException
from cassandra.query import SimpleStatement

from test_indexes import FILTERING, err, rows, wait_built


@pytest.fixture
def sai(session, ks, tname):
    """A table with SAI on v, w, tx (text), s (static), ck, u (uuid), keys(m), st (set)."""
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (pk int, ck int, v int, w int, x int, s int static, tx text, "
                    f"u uuid, m map<int, int>, st set<int>, PRIMARY KEY (pk, ck))")
    for q in [
        "(pk, ck, v, w, x, s, tx, m, st) VALUES (1, 1, 10, 100, 1, 7, 'a', {1: 2}, {5})",
        "(pk, ck, v, w, x, tx, m, st) VALUES (1, 2, 20, 200, 2, 'b', {3: 4}, {6})",
        "(pk, ck, v, w, x, s, tx) VALUES (2, 1, 10, 200, 3, 8, 'c')",
        "(pk, ck, v, w, x, tx) VALUES (3, 1, 30, 100, 4, 'a')",
        "(pk, ck, v, w, x, tx) VALUES (4, 5, -5, 100, 4, 'z')",
        "(pk, ck, v, w, x, tx) VALUES (5, 6, 25, 300, 4, 'z')",
    ]:
        session.execute(f"INSERT INTO {t} {q}")
    for target in ["v", "w", "tx", "s", "ck", "u", "keys(m)", "st"]:
        session.execute(f"CREATE INDEX ON {t} ({target}) USING 'sai'")
    for target in ["v", "w", "tx", "s", "ck", "u", "m", "st"]:
        wait_built(session, ks, f"{tname}_{target}_idx")
    return t


def ordered(session, query, *args):
    return [tuple(r) for r in session.execute(query, *args)]


def test_create_accepts_cassandras_class_names_and_refuses_with_its_texts(session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (pk int, pk2 int, ck int, ck2 text, v int, s int static, tx text, "
                    f"d duration, m map<int, text>, fl frozen<list<int>>, bl blob, sb set<blob>, i inet, "
                    f"f float, PRIMARY KEY ((pk, pk2), ck, ck2))")
    session.execute(f"CREATE TABLE {t}_c (pk int PRIMARY KEY, c counter)")
    session.execute(f"CREATE INDEX ON {t} (v) USING 'sai'")
    session.execute(f"CREATE INDEX i_s ON {t} (s) USING 'StorageAttachedIndex'")
    session.execute(f"CREATE CUSTOM INDEX i_ck ON {t} (ck) USING 'org.apache.cassandra.index.sai.StorageAttachedIndex'")
    session.execute(f"CREATE CUSTOM INDEX i_pk ON {t} (pk) USING 'SAI'")
    for target in ["keys(m)", "values(m)", "entries(m)", "full(fl)"]:
        session.execute(f"CREATE INDEX ON {t} ({target}) USING 'sai'")
    session.execute(f"CREATE INDEX i_tx ON {t} (tx) USING 'sai' WITH OPTIONS = "
                    f"{{'case_sensitive': 'true', 'normalize': 'false', 'ascii': 'false'}}")
    assert f"Index {tname}_v_idx_1 is a duplicate of existing index {tname}_v_idx" in err(
        session, f"CREATE INDEX ON {t} (v) USING 'sai'")
    session.execute(f"CREATE INDEX IF NOT EXISTS ON {t} (v) USING 'sai'")
    assert "Cannot create more than one storage-attached index on the same column: v" in err(
        session, f"CREATE INDEX i2 ON {t} (v) USING 'SAI'")
    assert "Secondary indexes are not supported on duration columns" in err(
        session, f"CREATE INDEX ON {t} (d) USING 'sai'")
    assert "Unsupported type: blob" in err(session, f"CREATE INDEX ON {t} (bl) USING 'sai'")
    assert "Unsupported type: blob" in err(session, f"CREATE INDEX ON {t} (sb) USING 'sai'")
    assert "Secondary indexes on counter tables aren't supported" in err(
        session, f"CREATE INDEX ON {t}_c (c) USING 'sai'")
    with pytest.raises(ConfigurationException, match=r"Properties specified \[foo\] are not understood by StorageAttachedIndex"):
        session.execute(f"CREATE INDEX ON {t} (f) USING 'sai' WITH OPTIONS = {{'foo': 'true'}}")
    assert "CQL type inet cannot be analyzed." in err(
        session, f"CREATE INDEX ON {t} (i) USING 'sai' WITH OPTIONS = {{'case_sensitive': 'true'}}")
    assert ("Analysis options are not supported on primary key columns, but found {'case_sensitive': 'true'}"
            in err(session, f"CREATE INDEX ON {t} (ck2) USING 'sai' WITH OPTIONS = {{'case_sensitive': 'true'}}"))
    assert "A storage-attached index cannot be created over multiple columns: f, v" in err(
        session, f"CREATE INDEX ON {t} (f, v) USING 'sai'")
    assert "Cannot specify options for a non-CUSTOM index" in err(
        session, f"CREATE INDEX ON {t} (f) WITH OPTIONS = {{'case_sensitive': 'true'}}")
    # Analysis that changes matching is not served: refused, never ignored.
    session.execute(f"CREATE TABLE {t}_a (pk int PRIMARY KEY, tx text)")
    assert "Cairn does not support the SAI analysis option 'case_sensitive' = 'false'" in err(
        session, f"CREATE INDEX ON {t}_a (tx) USING 'sai' WITH OPTIONS = {{'case_sensitive': 'false'}}")
    assert "not supported by Cairn" in err(session, f"CREATE INDEX ON {t} (f) USING 'org.example.Index'")
    # A plain index and an SAI one on the same column live side by side, as in Cassandra.
    session.execute(f"CREATE INDEX plain_f ON {t} (f)")
    session.execute(f"CREATE INDEX sai_f ON {t} (f) USING 'sai'")
    session.execute(f"DROP INDEX {ks}.sai_f")
    assert f"Index '{ks}.sai_f' doesn't exist'" in err(session, f"DROP INDEX {ks}.sai_f")


def test_schema_tables_metadata_and_describe(cluster, session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (pk int PRIMARY KEY, v int, tx text, m map<int, int>)")
    session.execute(f"CREATE INDEX ON {t} (v) USING 'sai'")
    session.execute(f"CREATE CUSTOM INDEX e ON {t} (entries(m)) USING 'StorageAttachedIndex'")
    session.execute(f"CREATE INDEX o ON {t} (tx) USING 'sai' WITH OPTIONS = {{'normalize': 'false', 'case_sensitive': 'true'}}")
    got = {r.index_name: (r.kind, dict(r.options)) for r in session.execute(
        f"SELECT index_name, kind, options FROM system_schema.indexes WHERE keyspace_name = '{ks}' "
        f"AND table_name = '{tname}'")}
    assert got == {
        f"{tname}_v_idx": ("CUSTOM", {"class_name": "sai", "target": "v"}),
        "e": ("CUSTOM", {"class_name": "StorageAttachedIndex", "target": "entries(m)"}),
        "o": ("CUSTOM", {"case_sensitive": "true", "class_name": "sai", "normalize": "false", "target": "tx"}),
    }
    want = {
        f"{tname}_v_idx": f"CREATE CUSTOM INDEX {tname}_v_idx ON {t} (v) USING 'sai';",
        "e": f"CREATE CUSTOM INDEX e ON {t} (entries(m)) USING 'StorageAttachedIndex';",
        "o": f"CREATE CUSTOM INDEX o ON {t} (tx) USING 'sai' WITH OPTIONS = "
             f"{{'case_sensitive': 'true', 'normalize': 'false'}};",
    }
    for name, text in want.items():
        assert [r.create_statement for r in session.execute(f"DESCRIBE INDEX {ks}.{name}")] == [text]
    cluster.refresh_schema_metadata()
    indexes = cluster.metadata.keyspaces[ks].tables[tname].indexes
    assert indexes[f"{tname}_v_idx"].kind == "CUSTOM"
    assert indexes[f"{tname}_v_idx"].index_options == {"class_name": "sai", "target": "v"}
    assert indexes["e"].as_cql_query() == f"CREATE CUSTOM INDEX e ON {t} (entries(m)) USING 'StorageAttachedIndex'"
    session.execute(f"DROP INDEX {ks}.e")
    cluster.refresh_schema_metadata()
    assert "e" not in cluster.metadata.keyspaces[ks].tables[tname].indexes


def test_queries_sai_answers_without_allow_filtering(session, sai):
    t = sai
    # Answers as Cassandra 5.0.9 gives them (token order: 5, 1, 2, 4, 3).
    cases = {
        "v = 10": [(1, 1), (2, 1)],
        "v > 10": [(5, 6), (1, 2), (3, 1)],
        "v >= 10 AND v < 30": [(5, 6), (1, 1), (1, 2), (2, 1)],
        "v <= 10": [(1, 1), (2, 1), (4, 5)],
        "v = 10 AND w = 200": [(2, 1)],
        "v > 5 AND w = 100": [(1, 1), (3, 1)],
        "v > 5 AND w > 100": [(5, 6), (1, 2), (2, 1)],
        "v IN (10)": [(1, 1), (2, 1)],
        "tx = 'a'": [(1, 1), (3, 1)],
        "m CONTAINS KEY 1": [(1, 1)],
        "st CONTAINS 5 AND v > 0": [(1, 1)],
        "ck = 1": [(1, 1), (2, 1), (3, 1)],
        "ck > 1 AND v < 26": [(5, 6), (1, 2), (4, 5)],
        "pk = 1 AND v > 10": [(1, 2)],
        "pk = 1 AND ck > 0 AND v = 10": [(1, 1)],
        "token(pk) > 0 AND v > 5": [(3, 1)],
        "v > 5 AND v < 3": [],
        "(ck) = (1) AND v > 5": [(1, 1), (2, 1), (3, 1)],
        "w = 100 AND v > 1 AND tx = 'z'": [],
    }
    for where, want in cases.items():
        assert ordered(session, f"SELECT pk, ck FROM {t} WHERE {where}") == want, where
    assert ordered(session, f"SELECT pk, ck, s FROM {t} WHERE s > 6") == [(1, 1, 7), (1, 2, 7), (2, 1, 8)]
    assert ordered(session, f"SELECT count(*) FROM {t} WHERE v > 5") == [(5,)]
    assert ordered(session, f"SELECT pk, ck FROM {t} WHERE v > 5 LIMIT 2") == [(5, 6), (1, 1)]
    assert ordered(session, f"SELECT pk, ck FROM {t} WHERE v > 5 PER PARTITION LIMIT 1") == [
        (5, 6), (1, 1), (2, 1), (3, 1)]


def test_what_still_needs_allow_filtering_or_is_refused(session, sai):
    t = sai
    for where in ["v = 10 AND x = 1", "v > 5 AND x = 4", "v IN (10, 20)", "tx > 'a'",
                  "u > 5d8f1b9c-0000-0000-0000-000000000000", "m CONTAINS 2", "m[1] = 2"]:
        assert FILTERING in err(session, f"SELECT pk, ck FROM {t} WHERE {where}"), where
    assert ordered(session, f"SELECT pk, ck FROM {t} WHERE v > 5 AND x = 4 ALLOW FILTERING") == [(5, 6), (3, 1)]
    assert ordered(session, f"SELECT pk, ck FROM {t} WHERE tx > 'a' ALLOW FILTERING") == [
        (5, 6), (1, 2), (2, 1), (4, 5)]
    assert "Select on indexed columns and with IN clause for the PRIMARY KEY are not supported" in err(
        session, f"SELECT pk, ck FROM {t} WHERE pk IN (1, 2) AND v > 10")
    assert "ORDER BY with 2ndary indexes is not supported, except for ANN queries." in err(
        session, f"SELECT pk, ck FROM {t} WHERE pk = 1 AND v > 5 ORDER BY ck DESC")
    assert "Multi-column slice restrictions cannot be used for filtering." in err(
        session, f"SELECT pk, ck FROM {t} WHERE (ck) > (0) AND v > 5")
    assert "More than one restriction was found for the start bound on v" in err(
        session, f"SELECT pk, ck FROM {t} WHERE v > 5 AND v > 6")
    assert "v cannot be restricted by more than one relation if it includes an Equal" in err(
        session, f"SELECT pk, ck FROM {t} WHERE v = 10 AND v > 6")
    assert "LIKE restriction is only supported on properly indexed columns" in err(
        session, f"SELECT pk, ck FROM {t} WHERE tx LIKE 'a%'")


def test_paging_binds_and_writes(session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (pk int, ck int, v int, w int, PRIMARY KEY (pk, ck))")
    session.execute(f"CREATE INDEX ON {t} (v) USING 'sai'")
    session.execute(f"CREATE INDEX ON {t} (w) USING 'sai'")
    for pk in range(30):
        for ck in range(4):
            session.execute(f"INSERT INTO {t} (pk, ck, v, w) VALUES ({pk}, {ck}, {pk * 4 + ck}, {ck})")
    everything = ordered(session, f"SELECT pk, ck FROM {t} WHERE v >= 0")
    assert sorted(everything) == [(pk, ck) for pk in range(30) for ck in range(4)]
    for fetch in (1, 3, 7):
        paged = [tuple(r) for r in session.execute(SimpleStatement(f"SELECT pk, ck FROM {t} WHERE v >= 0", fetch_size=fetch))]
        assert paged == everything
        paged = [tuple(r) for r in session.execute(SimpleStatement(f"SELECT pk, ck FROM {t} WHERE w = 2", fetch_size=fetch))]
        assert paged == [r for r in everything if r[1] == 2]
    ps = session.prepare(f"SELECT pk, ck FROM {t} WHERE v > ? AND v <= ? AND w = ?")
    assert rows(session, ps, (10, 30, 1)) == [(pk, 1) for pk in range(30) if 10 < pk * 4 + 1 <= 30]
    ps = session.prepare(f"SELECT pk, ck FROM {t} WHERE v = ?")
    assert rows(session, ps, (41,)) == [(10, 1)]
    session.execute(f"UPDATE {t} SET v = 1000 WHERE pk = 10 AND ck = 1")
    assert rows(session, ps, (41,)) == []
    assert rows(session, f"SELECT pk, ck FROM {t} WHERE v > 999") == [(10, 1)]
    session.execute(f"DELETE FROM {t} WHERE pk = 10")
    assert rows(session, f"SELECT pk, ck FROM {t} WHERE v > 999") == []


def test_built_on_existing_data(session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (pk int, ck int, v int, PRIMARY KEY (pk, ck))")
    for pk in range(40):
        for ck in range(3):
            session.execute(f"INSERT INTO {t} (pk, ck, v) VALUES ({pk}, {ck}, {pk % 4})")
    session.execute(f"CREATE INDEX ON {t} (v) USING 'sai'")
    wait_built(session, ks, f"{tname}_v_idx")
    assert rows(session, f"SELECT pk, ck FROM {t} WHERE v = 1") == [
        (pk, ck) for pk in range(40) for ck in range(3) if pk % 4 == 1]
    assert rows(session, f"SELECT pk, ck FROM {t} WHERE v > 2") == [
        (pk, ck) for pk in range(40) for ck in range(3) if pk % 4 == 3]


def test_partition_key_component_and_collection_targets(session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (a int, b int, ck int, v int, m map<int, int>, l list<int>, "
                    f"PRIMARY KEY ((a, b), ck))")
    for target in ["b", "v", "entries(m)", "l"]:
        session.execute(f"CREATE INDEX ON {t} ({target}) USING 'sai'")
    session.execute(f"INSERT INTO {t} (a, b, ck, v, m, l) VALUES (1, 1, 1, 5, {{1: 10, 2: 20}}, [1, 2])")
    session.execute(f"INSERT INTO {t} (a, b, ck, v, m, l) VALUES (1, 2, 1, 6, {{1: 11}}, [2, 3])")
    session.execute(f"INSERT INTO {t} (a, b, ck, v, m, l) VALUES (2, 2, 2, 7, {{2: 20}}, [3])")
    assert rows(session, f"SELECT a, b, ck FROM {t} WHERE b > 1") == [(1, 2, 1), (2, 2, 2)]
    assert rows(session, f"SELECT a, b, ck FROM {t} WHERE a = 1 AND b = 2 AND v > 1") == [(1, 2, 1)]
    assert rows(session, f"SELECT a, b, ck FROM {t} WHERE m[2] = 20 AND v > 5") == [(2, 2, 2)]
    assert rows(session, f"SELECT a, b, ck FROM {t} WHERE l CONTAINS 3 AND v < 7") == [(1, 2, 1)]
    assert FILTERING in err(session, f"SELECT a, b, ck FROM {t} WHERE a = 1 AND b > 1")
    assert FILTERING in err(session, f"SELECT a, b, ck FROM {t} WHERE v > 5 AND ck = 2")
    for where in ["a IN (1, 2) AND v > 5", "a IN (1, 2) AND b = 1 AND v > 5 ALLOW FILTERING"]:
        assert "Select on indexed columns and with IN clause for the PRIMARY KEY are not supported" in err(
            session, f"SELECT a, b, ck FROM {t} WHERE {where}")
    assert rows(session, f"SELECT a, b, ck FROM {t} WHERE a IN (1, 2) AND b = 2") == [(1, 2, 1), (2, 2, 2)]


def test_a_query_through_an_sai_index_being_built_is_refused(node_factory, monkeypatch):
    """While an SAI index builds, Cassandra refuses every query that reads through it — an `=`
    and a range alone alike (INDEX_NOT_AVAILABLE) — and answers once it is built. The build
    is slowed by the test-only CAIRN_TEST_VIEW_BUILD_DELAY_MS (20 ms per base partition)."""
    from cassandra import ReadFailure
    from conftest import make_cluster
    monkeypatch.setenv("CAIRN_TEST_VIEW_BUILD_DELAY_MS", "20")
    n = node_factory("sai_building")
    c = make_cluster(n)
    try:
        s = c.connect()
        s.execute("CREATE KEYSPACE sb WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE sb.t (pk int, ck int, v int, w int, PRIMARY KEY (pk, ck))")
        for pk in range(100):
            s.execute("INSERT INTO sb.t (pk, ck, v, w) VALUES (%s, 0, %s, %s)", (pk, pk % 4, pk))
        s.execute("CREATE INDEX ON sb.t (v) USING 'sai'")
        for query in ["SELECT pk FROM sb.t WHERE v = 1", "SELECT pk FROM sb.t WHERE v > 2",
                      "SELECT pk FROM sb.t WHERE v > 2 AND w < 50 ALLOW FILTERING"]:
            with pytest.raises(ReadFailure, match="INDEX_NOT_AVAILABLE"):
                s.execute(query)
        # A query the index does not serve is answered meanwhile.
        assert len(rows(s, "SELECT pk FROM sb.t WHERE w < 10 ALLOW FILTERING")) == 10
        wait_built(s, "sb", "t_v_idx")
        assert rows(s, "SELECT pk FROM sb.t WHERE v = 1") == [(pk,) for pk in range(100) if pk % 4 == 1]
        assert rows(s, "SELECT pk FROM sb.t WHERE v > 2") == [(pk,) for pk in range(100) if pk % 4 == 3]
    finally:
        c.shutdown()
