"""Materialized views through the Python driver: CREATE / ALTER / DROP MATERIALIZED VIEW with
Cassandra 5.0's checks and texts (cql3/statements/schema/CreateViewStatement.java,
AlterViewStatement.java, DropViewStatement.java, DropTableStatement.java,
AlterTableStatement.java), what views refuse, system_schema.views and the driver's metadata,
DESCRIBE, and view maintenance on every kind of base write (db/view/ViewUpdateGenerator.java)."""

import time

import pytest
from cassandra import AlreadyExists, InvalidRequest


def err(session, query, *args):
    with pytest.raises(InvalidRequest) as e:
        session.execute(query, *args)
    return str(e.value)


@pytest.fixture
def base(session, ks, tname):
    """A fresh table `(pk int, ck int, v int, w text, s int static, PRIMARY KEY (pk, ck))`."""
    session.execute(
        f"CREATE TABLE {ks}.{tname} (pk int, ck int, v int, w text, s int static, PRIMARY KEY (pk, ck))")
    return tname


def rows(session, query):
    return sorted(tuple(r) for r in session.execute(query))


def test_create_view_errors_have_cassandras_texts(session, ks, base):
    t = f"{ks}.{base}"

    def mv(name, select, where, key):
        return f"CREATE MATERIALIZED VIEW {ks}.{name} AS SELECT {select} FROM {t} WHERE {where} PRIMARY KEY {key}"

    assert "Base table 'nope' doesn't exist" in err(
        session, f"CREATE MATERIALIZED VIEW {ks}.m AS SELECT * FROM {ks}.nope WHERE pk IS NOT NULL PRIMARY KEY (pk)")
    assert "Cannot create a materialized view on a table in a different keyspace" in err(
        session, f"CREATE MATERIALIZED VIEW {ks}.m AS SELECT * FROM system.local WHERE key IS NOT NULL PRIMARY KEY (key)")
    assert f"Cannot create materialized view '{base}' - a table with the same name already exists" in err(
        session, mv(base, "*", "pk IS NOT NULL AND ck IS NOT NULL", "(ck, pk)"))
    assert "Cannot include static column 's' in materialized view 'm'" in err(
        session, mv("m", "*", "pk IS NOT NULL AND ck IS NOT NULL", "(ck, pk)"))
    assert "Cannot use aliases when defining a materialized view" in err(
        session, mv("m", "pk, ck AS c", "pk IS NOT NULL AND ck IS NOT NULL", "(ck, pk)"))
    assert "Can only select columns by name when defining a materialized view (got writetime(v))" in err(
        session, mv("m", "pk, writetime(v)", "pk IS NOT NULL AND ck IS NOT NULL", "(ck, pk)"))
    assert "Undefined column name nope" in err(
        session, mv("m", "pk, ck, nope", "pk IS NOT NULL AND ck IS NOT NULL", "(ck, pk)"))
    assert "Unknown column 'v' referenced in PRIMARY KEY for materialized view 'm'" in err(
        session, mv("m", "pk, ck", "pk IS NOT NULL AND ck IS NOT NULL AND v IS NOT NULL", "(v, ck, pk)"))
    assert "Duplicate column 'pk' in PRIMARY KEY clause for materialized view 'm'" in err(
        session, mv("m", "pk, ck", "pk IS NOT NULL AND ck IS NOT NULL", "(pk, ck, pk)"))
    assert f"Cannot create materialized view 'm' without primary key columns ck from base table '{base}'" in err(
        session, mv("m", "pk, ck, v", "pk IS NOT NULL AND v IS NOT NULL", "(v, pk)"))
    assert "Cannot include more than one non-primary key column in materialized view primary key (got v, w)" in err(
        session, mv("m", "pk, ck, v, w", "pk IS NOT NULL AND ck IS NOT NULL AND v IS NOT NULL AND w IS NOT NULL",
                    "((v, w), ck, pk)"))
    assert "Primary key columns v must be restricted with 'IS NOT NULL' or otherwise" in err(
        session, mv("m", "pk, ck, v", "pk IS NOT NULL AND ck IS NOT NULL", "(v, ck, pk)"))
    assert "Non-primary key columns can only be restricted with 'IS NOT NULL' (got: w restricted illegally)" in err(
        session, mv("m", "pk, ck, v, w", "pk IS NOT NULL AND ck IS NOT NULL AND v IS NOT NULL AND w = 'a'",
                    "(v, ck, pk)"))
    assert "Cannot use token relation when defining a materialized view" in err(
        session, mv("m", "pk, ck", "token(pk) > 0 AND ck IS NOT NULL", "(ck, pk)"))
    assert "Clustering key columns must exactly match columns in CLUSTERING ORDER BY directive" in err(
        session, mv("m", "pk, ck", "pk IS NOT NULL AND ck IS NOT NULL", "(ck, pk)")
        + " WITH CLUSTERING ORDER BY (ck DESC)")
    assert "Cannot set default_time_to_live for a materialized view" in err(
        session, mv("m", "pk, ck", "pk IS NOT NULL AND ck IS NOT NULL", "(ck, pk)")
        + " WITH default_time_to_live = 10")
    session.execute(f"CREATE TABLE {ks}.{base}_c (pk int PRIMARY KEY, c counter)")
    assert "Materialized views are not supported on counter tables" in err(
        session, f"CREATE MATERIALIZED VIEW {ks}.m AS SELECT * FROM {ks}.{base}_c WHERE pk IS NOT NULL PRIMARY KEY (pk)")


def test_create_alter_drop_and_what_views_refuse(session, ks, base):
    t = f"{ks}.{base}"
    v = f"{ks}.{base}_by_v"
    create = (f"CREATE MATERIALIZED VIEW {v} AS SELECT pk, ck, v, w FROM {t} "
              f"WHERE v IS NOT NULL AND pk IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (v, pk, ck) "
              f"WITH CLUSTERING ORDER BY (pk DESC, ck ASC) AND comment = 'by v'")
    f = session.execute_async(create)
    f.result()
    assert any("Materialized views are experimental" in w for w in (f.warnings or []))
    with pytest.raises(AlreadyExists):
        session.execute(create)
    session.execute(create.replace("CREATE MATERIALIZED VIEW", "CREATE MATERIALIZED VIEW IF NOT EXISTS"))

    assert "Cannot directly modify a materialized view" in err(
        session, f"INSERT INTO {v} (v, pk, ck) VALUES (1, 1, 1)")
    assert "Cannot directly modify a materialized view" in err(session, f"UPDATE {v} SET w = 'a' WHERE v = 1 AND pk = 1 AND ck = 1")
    assert "Cannot directly modify a materialized view" in err(session, f"DELETE FROM {v} WHERE v = 1")
    assert "Cannot TRUNCATE materialized view directly; must truncate base table instead" in err(
        session, f"TRUNCATE {v}")
    assert "Cannot use DROP TABLE on a materialized view. Please use DROP MATERIALIZED VIEW instead." in err(
        session, f"DROP TABLE {v}")
    assert f"Cannot drop a table when materialized views still depend on it ({ks})" in err(
        session, f"DROP TABLE {t}")
    assert "Cannot use ALTER TABLE on a materialized view; use ALTER MATERIALIZED VIEW instead" in err(
        session, f"ALTER TABLE {v} WITH comment = 'x'")
    assert f"Cannot drop column w on base table {base} with materialized views" in err(
        session, f"ALTER TABLE {t} DROP w")
    assert "Forbidden default_time_to_live detected for a materialized view" in err(
        session, f"ALTER MATERIALIZED VIEW {v} WITH default_time_to_live = 5")
    assert "Cannot alter gc_grace_seconds of a materialized view to 0" in err(
        session, f"ALTER MATERIALIZED VIEW {v} WITH gc_grace_seconds = 0")
    assert "Cannot alter gc_grace_seconds of the base table of a materialized view to 0" in err(
        session, f"ALTER TABLE {t} WITH gc_grace_seconds = 0")
    session.execute(f"ALTER MATERIALIZED VIEW {v} WITH comment = 'still by v'")
    assert f"Materialized view '{ks}.nope' doesn't exist" in err(
        session, f"ALTER MATERIALIZED VIEW {ks}.nope WITH comment = 'x'")
    session.execute(f"ALTER MATERIALIZED VIEW IF EXISTS {ks}.nope WITH comment = 'x'")

    row = session.execute(
        "SELECT base_table_name, include_all_columns, where_clause, comment FROM system_schema.views "
        "WHERE keyspace_name = %s AND view_name = %s", (ks, f"{base}_by_v")).one()
    assert tuple(row) == (base, False, "v IS NOT NULL AND pk IS NOT NULL AND ck IS NOT NULL", "still by v")
    assert not list(session.execute(
        "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s AND table_name = %s",
        (ks, f"{base}_by_v")))
    kinds = rows(session, f"SELECT column_name, kind, position, clustering_order FROM system_schema.columns "
                          f"WHERE keyspace_name = '{ks}' AND table_name = '{base}_by_v'")
    assert kinds == [("ck", "clustering", 1, "asc"), ("pk", "clustering", 0, "desc"),
                     ("v", "partition_key", 0, "none"), ("w", "regular", -1, "none")]

    session.cluster.refresh_schema_metadata()
    meta = session.cluster.metadata.keyspaces[ks]
    assert f"{base}_by_v" in meta.views
    view_meta = meta.views[f"{base}_by_v"]
    assert view_meta.base_table_name == base
    assert [c.name for c in view_meta.partition_key] == ["v"]
    assert f"{base}_by_v" in meta.tables[base].views

    described = session.execute(f"DESCRIBE MATERIALIZED VIEW {v}").one()
    assert described.create_statement.startswith(
        f"CREATE MATERIALIZED VIEW {v} AS\n    SELECT v, pk, ck, w\n    FROM {t}\n"
        f"    WHERE v IS NOT NULL AND pk IS NOT NULL AND ck IS NOT NULL\n    PRIMARY KEY (v, pk, ck)\n"
        f" WITH CLUSTERING ORDER BY (pk DESC, ck ASC)\n    AND additional_write_policy = '99p'")
    assert "default_time_to_live" not in described.create_statement
    table_rows = list(session.execute(f"DESCRIBE TABLE {t}"))
    assert [r.type for r in table_rows] == ["table", "materialized_view"]

    session.execute(f"DROP MATERIALIZED VIEW {v}")
    assert f"Materialized view '{v}' doesn't exist" in err(session, f"DROP MATERIALIZED VIEW {v}")
    session.execute(f"DROP MATERIALIZED VIEW IF EXISTS {v}")
    session.execute(f"ALTER TABLE {t} DROP w")
    session.execute(f"DROP TABLE {t}")


def test_select_star_views_follow_added_columns(session, ks, tname):
    session.execute(f"CREATE TABLE {ks}.{tname} (pk int, ck int, v int, PRIMARY KEY (pk, ck))")
    session.execute(f"CREATE MATERIALIZED VIEW {ks}.{tname}_v AS SELECT * FROM {ks}.{tname} "
                    f"WHERE pk IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (ck, pk)")
    session.execute(f"ALTER TABLE {ks}.{tname} ADD x text")
    cols = rows(session, f"SELECT column_name FROM system_schema.columns "
                         f"WHERE keyspace_name = '{ks}' AND table_name = '{tname}_v'")
    assert cols == [("ck",), ("pk",), ("v",), ("x",)]
    assert session.execute(f"SELECT include_all_columns FROM system_schema.views WHERE keyspace_name = '{ks}' "
                           f"AND view_name = '{tname}_v'").one()[0] is True


@pytest.fixture
def by_v(session, ks, tname):
    """A table `(pk, ck, v, w)` and its view keyed by `v`; returns (table, view)."""
    t, v = f"{ks}.{tname}", f"{ks}.{tname}_by_v"
    session.execute(f"CREATE TABLE {t} (pk int, ck int, v int, w text, PRIMARY KEY (pk, ck))")
    session.execute(f"CREATE MATERIALIZED VIEW {v} AS SELECT * FROM {t} "
                    f"WHERE v IS NOT NULL AND pk IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (v, pk, ck)")
    return t, v


def view_rows(session, v):
    return rows(session, f"SELECT v, pk, ck, w FROM {v}")


def test_view_follows_inserts_updates_and_key_changes(session, by_v):
    t, v = by_v
    session.execute(f"INSERT INTO {t} (pk, ck, v, w) VALUES (1, 1, 10, 'a')")
    session.execute(f"INSERT INTO {t} (pk, ck, v, w) VALUES (1, 2, 20, 'b')")
    session.execute(f"INSERT INTO {t} (pk, ck, w) VALUES (1, 3, 'no v')")     # no entry: v is null
    assert view_rows(session, v) == [(10, 1, 1, "a"), (20, 1, 2, "b")]
    assert rows(session, f"SELECT pk, ck FROM {v} WHERE v = 20") == [(1, 2)]

    session.execute(f"UPDATE {t} SET w = 'a2' WHERE pk = 1 AND ck = 1")      # same key
    session.execute(f"UPDATE {t} SET v = 11 WHERE pk = 1 AND ck = 1")        # key change
    assert view_rows(session, v) == [(11, 1, 1, "a2"), (20, 1, 2, "b")]
    session.execute(f"UPDATE {t} SET v = 10 WHERE pk = 1 AND ck = 1")        # back to an old key
    assert view_rows(session, v) == [(10, 1, 1, "a2"), (20, 1, 2, "b")]
    session.execute(f"UPDATE {t} SET v = 30 WHERE pk = 1 AND ck = 3")        # gets its entry
    session.execute(f"UPDATE {t} SET v = null WHERE pk = 1 AND ck = 2")      # loses it
    assert view_rows(session, v) == [(10, 1, 1, "a2"), (30, 1, 3, "no v")]
    session.execute(f"DELETE w FROM {t} WHERE pk = 1 AND ck = 3")
    assert view_rows(session, v) == [(10, 1, 1, "a2"), (30, 1, 3, None)]
    # A row made by UPDATE only lives by its cells, and so does its entry.
    session.execute(f"UPDATE {t} SET v = 40, w = 'u' WHERE pk = 2 AND ck = 1")
    assert (40, 2, 1, "u") in view_rows(session, v)
    session.execute(f"UPDATE {t} SET w = null WHERE pk = 2 AND ck = 1")
    assert (40, 2, 1, None) in view_rows(session, v)
    session.execute(f"UPDATE {t} SET v = null WHERE pk = 2 AND ck = 1")      # the row is gone
    assert [r for r in view_rows(session, v) if r[1] == 2] == []
    # Older writes (USING TIMESTAMP) lose to newer ones in the view as in the base.
    session.execute(f"UPDATE {t} USING TIMESTAMP 1 SET v = 99 WHERE pk = 1 AND ck = 1")
    assert rows(session, f"SELECT v FROM {t} WHERE pk = 1 AND ck = 1") == [(10,)]
    assert view_rows(session, v) == [(10, 1, 1, "a2"), (30, 1, 3, None)]


def test_view_follows_deletes_of_rows_ranges_and_partitions(session, by_v):
    t, v = by_v
    for pk in range(3):
        for ck in range(5):
            session.execute(f"INSERT INTO {t} (pk, ck, v, w) VALUES ({pk}, {ck}, {pk * 10 + ck}, 'x')")
    session.execute(f"DELETE FROM {t} WHERE pk = 0 AND ck = 1")
    session.execute(f"DELETE FROM {t} WHERE pk = 1 AND ck >= 1 AND ck < 4")
    session.execute(f"DELETE FROM {t} WHERE pk = 2")
    assert view_rows(session, v) == [(0, 0, 0, "x"), (2, 0, 2, "x"), (3, 0, 3, "x"), (4, 0, 4, "x"),
                                     (10, 1, 0, "x"), (14, 1, 4, "x")]
    # Re-inserted after the partition deletion: back in the view.
    session.execute(f"INSERT INTO {t} (pk, ck, v) VALUES (2, 2, 22)")
    assert (22, 2, 2, None) in view_rows(session, v)


def test_view_follows_batches_lwt_and_ttl(session, by_v):
    t, v = by_v
    session.execute(f"BEGIN BATCH INSERT INTO {t} (pk, ck, v, w) VALUES (1, 1, 1, 'a'); "
                    f"UPDATE {t} SET v = 2 WHERE pk = 1 AND ck = 1; "
                    f"INSERT INTO {t} (pk, ck, v) VALUES (2, 1, 3); APPLY BATCH")
    assert view_rows(session, v) == [(2, 1, 1, "a"), (3, 2, 1, None)]
    assert session.execute(f"INSERT INTO {t} (pk, ck, v, w) VALUES (3, 1, 4, 'lwt') IF NOT EXISTS").one()[0]
    assert session.execute(f"UPDATE {t} SET v = 5 WHERE pk = 3 AND ck = 1 IF w = 'lwt'").one()[0]
    assert (5, 3, 1, "lwt") in view_rows(session, v)
    assert (4, 3, 1, "lwt") not in view_rows(session, v)
    # The entry of a row whose view key expires goes with it.
    session.execute(f"INSERT INTO {t} (pk, ck, v, w) VALUES (4, 1, 6, 'ttl') USING TTL 2")
    session.execute(f"UPDATE {t} USING TTL 2 SET v = 7 WHERE pk = 5 AND ck = 1")
    session.execute(f"UPDATE {t} SET w = 'stays' WHERE pk = 5 AND ck = 1")
    assert {(6, 4, 1, "ttl"), (7, 5, 1, "stays")} <= set(view_rows(session, v))
    deadline = time.time() + 15
    while time.time() < deadline and any(r[0] in (6, 7) for r in view_rows(session, v)):
        time.sleep(0.5)
    assert not any(r[0] in (6, 7) for r in view_rows(session, v))
    assert rows(session, f"SELECT pk, w FROM {t} WHERE pk = 5") == [(5, "stays")]


# Timestamp scenarios (Cassandra 5.0.9's answers, checked with `scripts/cql-diff --try`): a view
# row mirrors its base row's marker, deletion and cells, and an entry that goes away is retired
# by an expired marker, not a row deletion (ViewUpdateGenerator.deleteOldEntryInternal), so
# writes arriving out of timestamp order leave the view as the base. Each: the view's key and
# selection, the statements, then (query on the view, rows) checks.
MIRROR_SCENARIOS = {
    # F84: the last cell deleted, then an older marker: the row is back, in the view too.
    "older_marker_after_cell_deletion": (
        "SELECT * FROM {t} WHERE k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (c, k)",
        ["UPDATE {t} USING TIMESTAMP 100 SET a = 1 WHERE k = 1 AND c = 1",
         "DELETE a FROM {t} USING TIMESTAMP 300 WHERE k = 1 AND c = 1",
         "INSERT INTO {t} (k, c) VALUES (1, 1) USING TIMESTAMP 200"],
        [("SELECT c, k, a FROM {v}", [(1, 1, None)])]),
    # The view key switches away and back: the entry's cells keep their own write times.
    "key_switches_back": (
        "SELECT * FROM {t} WHERE k IS NOT NULL AND c IS NOT NULL AND a IS NOT NULL PRIMARY KEY (a, k, c)",
        ["UPDATE {t} USING TIMESTAMP 1 SET a = 1, b = 1 WHERE k = 1 AND c = 1",
         "UPDATE {t} USING TIMESTAMP 2 SET a = 2 WHERE k = 1 AND c = 1",
         "UPDATE {t} USING TIMESTAMP 3 SET a = 1 WHERE k = 1 AND c = 1"],
        [("SELECT a, k, c, b, writetime(b) FROM {v}", [(1, 1, 1, 1, 1)])]),
    # A row deletion then a newer key: only what the deletion left.
    "key_after_row_deletion": (
        "SELECT * FROM {t} WHERE k IS NOT NULL AND c IS NOT NULL AND a IS NOT NULL PRIMARY KEY (a, k, c)",
        ["UPDATE {t} USING TIMESTAMP 1 SET a = 1, b = 1 WHERE k = 1 AND c = 1",
         "DELETE FROM {t} USING TIMESTAMP 4 WHERE k = 1 AND c = 1",
         "UPDATE {t} USING TIMESTAMP 5 SET a = 2 WHERE k = 1 AND c = 1"],
        [("SELECT a, k, c, b, writetime(b) FROM {v}", [(2, 1, 1, None, None)])]),
    # An older key value written after its deletion stays deleted, in the base and the view.
    "older_key_after_key_deletion": (
        "SELECT * FROM {t} WHERE k IS NOT NULL AND c IS NOT NULL AND a IS NOT NULL PRIMARY KEY (a, k, c)",
        ["INSERT INTO {t} (k, c, a, b) VALUES (1, 1, 1, 1) USING TIMESTAMP 10",
         "UPDATE {t} USING TIMESTAMP 5 SET a = 2 WHERE k = 1 AND c = 1",
         "UPDATE {t} USING TIMESTAMP 20 SET a = null WHERE k = 1 AND c = 1",
         "UPDATE {t} USING TIMESTAMP 15 SET a = 3 WHERE k = 1 AND c = 1"],
        [("SELECT * FROM {v}", []), ("SELECT k, c, a, b FROM {t}", [(1, 1, None, 1)])]),
    # An unselected column keeps the entry alive; once it is deleted, an older marker does not
    # bring the entry back (Cassandra's own limit, CASSANDRA-11500, kept as it is).
    "unselected_column_liveness": (
        "SELECT k, c, a FROM {t} WHERE k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (c, k)",
        ["UPDATE {t} USING TIMESTAMP 1 SET b = 1 WHERE k = 1 AND c = 1",
         "DELETE b FROM {t} USING TIMESTAMP 2 WHERE k = 1 AND c = 1",
         "INSERT INTO {t} (k, c) VALUES (1, 1) USING TIMESTAMP 1"],
        [("SELECT * FROM {v}", []), ("SELECT k, c FROM {t}", [(1, 1)])]),
}


@pytest.mark.parametrize("name", sorted(MIRROR_SCENARIOS))
def test_view_rows_mirror_base_rows_whatever_the_timestamp_order(session, ks, tname, name):
    view_def, writes, checks = MIRROR_SCENARIOS[name]
    t, v = f"{ks}.{tname}", f"{ks}.{tname}_mv"
    session.execute(f"CREATE TABLE {t} (k int, c int, a int, b int, PRIMARY KEY (k, c))")
    session.execute(f"CREATE MATERIALIZED VIEW {v} AS " + view_def.format(t=t))
    for w in writes:
        session.execute(w.format(t=t))
    for query, want in checks:
        assert rows(session, query.format(t=t, v=v)) == sorted(want), query


def test_empty_view_partition_key_is_kept_first(session, ks, tname):
    t, v = f"{ks}.{tname}", f"{ks}.{tname}_by_v"
    session.execute(f"CREATE TABLE {t} (k int, c int, v text, PRIMARY KEY (k, c))")
    session.execute(f"CREATE MATERIALIZED VIEW {v} AS SELECT * FROM {t} "
                    f"WHERE v IS NOT NULL AND k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (v, k, c)")
    session.execute(f"INSERT INTO {t} (k, c, v) VALUES (2, 2, 'a')")
    session.execute(f"INSERT INTO {t} (k, c, v) VALUES (1, 1, '')")
    # Scanned in token order: the empty key has the minimum token (Cassandra's).
    assert [tuple(r) for r in session.execute(f"SELECT v, k, c FROM {v}")] == [("", 1, 1), ("a", 2, 2)]
    assert session.execute(f"SELECT token(v) FROM {v} LIMIT 1").one()[0] == -2**63
    assert "Key may not be empty" in err(session, f"SELECT * FROM {v} WHERE v = ''")


def test_view_keyed_by_base_key_and_truncate(session, ks, tname):
    t, v = f"{ks}.{tname}", f"{ks}.{tname}_by_ck"
    session.execute(f"CREATE TABLE {t} (pk int, ck int, a int, b int, PRIMARY KEY (pk, ck))")
    session.execute(f"CREATE MATERIALIZED VIEW {v} AS SELECT pk, ck, a FROM {t} "
                    f"WHERE pk IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (ck, pk)")
    session.execute(f"INSERT INTO {t} (pk, ck, a, b) VALUES (1, 2, 3, 4)")
    session.execute(f"UPDATE {t} SET b = 5 WHERE pk = 1 AND ck = 3")   # b is not in the view
    assert rows(session, f"SELECT ck, pk, a FROM {v}") == [(2, 1, 3), (3, 1, None)]
    session.execute(f"TRUNCATE {t}")
    assert rows(session, f"SELECT ck, pk, a FROM {v}") == []


def test_base_writes_and_view_updates_survive_sigkill_together(node_factory):
    from conftest import make_cluster
    from cassandra.concurrent import execute_concurrent_with_args
    n = node_factory("views_kill")
    c = make_cluster(n)
    s = c.connect()
    try:
        s.execute("CREATE KEYSPACE vk WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE vk.t (pk int, ck int, v int, w text, PRIMARY KEY (pk, ck))")
        s.execute("CREATE MATERIALIZED VIEW vk.by_v AS SELECT * FROM vk.t "
                  "WHERE v IS NOT NULL AND pk IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (v, pk, ck)")
        ins = s.prepare("INSERT INTO vk.t (pk, ck, v, w) VALUES (?, ?, ?, ?)")
        execute_concurrent_with_args(s, ins, [(p, ck, p * 100 + ck, f"w{p}") for p in range(20) for ck in range(20)],
                                     concurrency=32, raise_on_first_error=True)
        upd = s.prepare("UPDATE vk.t SET v = ? WHERE pk = ? AND ck = ?")
        execute_concurrent_with_args(s, upd, [(-(p * 100 + ck), p, ck) for p in range(20) for ck in range(0, 20, 2)],
                                     concurrency=32, raise_on_first_error=True)
        s.execute("DELETE FROM vk.t WHERE pk = 3")
    finally:
        c.shutdown()
    n.kill()
    n.start()
    c = make_cluster(n)
    s = c.connect()
    try:
        base = rows(s, "SELECT v, pk, ck, w FROM vk.t")
        view = rows(s, "SELECT v, pk, ck, w FROM vk.by_v")
        assert len(base) == 19 * 20
        assert view == base
        assert rows(s, "SELECT pk, ck FROM vk.by_v WHERE v = -102") == [(1, 2)]
        assert rows(s, "SELECT pk, ck FROM vk.by_v WHERE v = 102") == []
    finally:
        c.shutdown()


def test_views_in_a_ring_at_rf3_and_rf2(tmp_root):
    """Three nodes: every base replica keeps its paired view replica; reads of the view at ONE
    through every node (each reads a replica of its own choosing) agree with the base."""
    from cassandra import ConsistencyLevel
    from cassandra.query import SimpleStatement
    from test_cluster import alone, on, three_nodes, wait_for

    def view_on(node, ks):
        c = alone(node)
        try:
            s = c.connect()
            q = SimpleStatement(f"SELECT v, pk, ck, w FROM {ks}.by_v", consistency_level=ConsistencyLevel.ONE)
            return sorted(tuple(r) for r in s.execute(q))
        finally:
            c.shutdown()

    with three_nodes(tmp_root / "views-ring") as nodes:
        for rf in (3, 2):
            ks = f"vr{rf}"
            on(nodes[0], f"CREATE KEYSPACE {ks} WITH replication = "
                         f"{{'class': 'NetworkTopologyStrategy', 'datacenter1': {rf}}}")
            on(nodes[0], f"CREATE TABLE {ks}.t (pk int, ck int, v int, w text, PRIMARY KEY (pk, ck))")
            on(nodes[1], f"CREATE MATERIALIZED VIEW {ks}.by_v AS SELECT * FROM {ks}.t WHERE v IS NOT NULL "
                         f"AND pk IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (v, pk, ck)")
            expected = {}
            for i, n in enumerate(nodes):
                c = alone(n)
                try:
                    s = c.connect()
                    for pk in range(i * 10, i * 10 + 10):
                        for ck in range(3):
                            s.execute(SimpleStatement(
                                f"INSERT INTO {ks}.t (pk, ck, v, w) VALUES ({pk}, {ck}, {pk * 10 + ck}, 'w')",
                                consistency_level=ConsistencyLevel.ALL))
                            expected[(pk, ck)] = (pk * 10 + ck, "w")
                    # Key changes and deletes, through another coordinator.
                    for pk in range(i * 10, i * 10 + 10, 3):
                        s.execute(SimpleStatement(f"UPDATE {ks}.t SET v = {-pk} WHERE pk = {pk} AND ck = 0",
                                                  consistency_level=ConsistencyLevel.ALL))
                        expected[(pk, 0)] = (-pk, "w")
                        s.execute(SimpleStatement(f"DELETE FROM {ks}.t WHERE pk = {pk} AND ck = 1",
                                                  consistency_level=ConsistencyLevel.ALL))
                        del expected[(pk, 1)]
                    # Conditional writes: the Paxos commit keeps the view too.
                    for pk in range(i * 10 + 1, i * 10 + 10, 3):
                        assert s.execute(f"UPDATE {ks}.t SET v = {1000 + pk} WHERE pk = {pk} AND ck = 2 "
                                         f"IF w = 'w'").one()[0]
                        expected[(pk, 2)] = (1000 + pk, "w")
                finally:
                    c.shutdown()
            want = sorted((v, pk, ck, w) for (pk, ck), (v, w) in expected.items())
            for n in nodes:
                wait_for(f"view of {ks} through {n.host}", lambda n=n: view_on(n, ks) == want)


def test_view_on_a_table_with_data_is_built(session, ks, tname):
    t, v = f"{ks}.{tname}", f"{ks}.{tname}_by_v"
    session.execute(f"CREATE TABLE {t} (pk int, ck int, v int, w text, PRIMARY KEY (pk, ck))")
    for pk in range(30):
        for ck in range(5):
            session.execute(f"INSERT INTO {t} (pk, ck, v, w) VALUES ({pk}, {ck}, {pk * 5 + ck}, 'x')")
    session.execute(f"DELETE FROM {t} WHERE pk = 0")
    session.execute(f"UPDATE {t} SET v = null WHERE pk = 1 AND ck = 1")
    session.execute(f"CREATE MATERIALIZED VIEW {v} AS SELECT * FROM {t} "
                    f"WHERE v IS NOT NULL AND pk IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (v, pk, ck)")
    want = rows(session, f"SELECT v, pk, ck, w FROM {t} WHERE v > -1 ALLOW FILTERING")
    assert len(want) == 29 * 5 - 1
    deadline = time.time() + 30
    while time.time() < deadline and rows(session, f"SELECT v, pk, ck, w FROM {v}") != want:
        time.sleep(0.3)
    assert rows(session, f"SELECT v, pk, ck, w FROM {v}") == want


def test_views_filter_base_rows_by_restrictions_on_the_base_key(session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (k int, c text, d int, v int, PRIMARY KEY (k, c, d))")
    # Rows before the views: the build filters them as maintenance does.
    for k, c, d in [(1, "a", 3), (2, "it's", 11), (2, "c", 5), (3, "b", 1)]:
        session.execute(f"INSERT INTO {t} (k, c, d, v) VALUES (%s, %s, %s, 1)", [k, c, d])
    views = {
        "one_k": ("k = 1 AND c IS NOT NULL AND d IS NOT NULL", "(c, k, d)"),
        "slices": ("k IS NOT NULL AND c IN ('a', 'it''s') AND d > 2 AND d <= 10", "(c, k, d)"),
        "tuple": ("k IS NOT NULL AND c IS NOT NULL AND (c, d) > ('a', 3)", "(c, k, d)"),
        "by_v": ("k IN (2, 3) AND c > 'b' AND d IS NOT NULL AND v IS NOT NULL", "(v, c, k, d)"),
    }
    for name, (where, key) in views.items():
        session.execute(f"CREATE MATERIALIZED VIEW {t}_{name} AS SELECT * FROM {t} "
                        f"WHERE {where} PRIMARY KEY {key}")

    def want(name):
        keep = {
            "one_k": lambda k, c, d: k == 1,
            "slices": lambda k, c, d: c in ("a", "it's") and 2 < d <= 10,
            "tuple": lambda k, c, d: (c, d) > ("a", 3),
            "by_v": lambda k, c, d: k in (2, 3) and c > "b",
        }[name]
        return sorted((k, c, d, v) for k, c, d, v in rows(session, f"SELECT k, c, d, v FROM {t}")
                      if keep(k, c, d))

    def got(name):
        return rows(session, f"SELECT k, c, d, v FROM {t}_{name}")

    deadline = time.time() + 30
    while time.time() < deadline and any(got(n) != want(n) for n in views):
        time.sleep(0.3)
    for n in views:
        assert got(n) == want(n), n
    assert got("tuple") == [(2, "c", 5, 1), (2, "it's", 11, 1), (3, "b", 1, 1)]
    # Writes, updates and deletes keep each view to the rows its restrictions admit.
    session.execute(f"INSERT INTO {t} (k, c, d, v) VALUES (1, 'a', 7, 2)")
    session.execute(f"INSERT INTO {t} (k, c, d, v) VALUES (3, 'z', 0, 4)")
    session.execute(f"UPDATE {t} SET v = 9 WHERE k = 2 AND c = 'c' AND d = 5")
    session.execute(f"DELETE FROM {t} WHERE k = 1 AND c = 'a' AND d = 3")
    session.execute(f"DELETE FROM {t} WHERE k = 2 AND c = 'it''s'")
    for n in views:
        assert got(n) == want(n), n
    assert got("by_v") == [(2, "c", 5, 9), (3, "z", 0, 4)]
    where = {r.view_name: r.where_clause for r in session.execute(
        "SELECT view_name, where_clause FROM system_schema.views WHERE keyspace_name = %s", [ks])}
    # Cassandra 5.0's text: terms as written, a string's quote not doubled.
    assert where[f"{tname}_slices"] == "k IS NOT NULL AND c IN ('a', 'it's') AND d > 2 AND d <= 10"
    assert where[f"{tname}_tuple"] == "k IS NOT NULL AND c IS NOT NULL AND (c, d) > ('a', 3)"
    assert "WHERE k = 1 AND c IS NOT NULL AND d IS NOT NULL" in session.execute(
        f"DESCRIBE MATERIALIZED VIEW {t}_one_k").one().create_statement
    # What Cassandra refuses, with its texts; what Cairn does not filter by, refused clearly.
    mv = f"CREATE MATERIALIZED VIEW {t}_bad AS SELECT * FROM {t} WHERE "
    assert "c cannot be restricted by more than one relation if it includes an Equal" in err(
        session, mv + "k IS NOT NULL AND c = 'x' AND c = 'y' AND d IS NOT NULL PRIMARY KEY (c, k, d)")
    assert 'Unsupported "!=" relation: d != 3' in err(
        session, mv + "k IS NOT NULL AND c IS NOT NULL AND d != 3 PRIMARY KEY (c, k, d)")
    assert "Bind variables are not allowed in CREATE MATERIALIZED VIEW statements" in err(
        session, mv + "k = ? AND c IS NOT NULL AND d IS NOT NULL PRIMARY KEY (c, k, d)")


def test_views_disabled_refuse_create_with_cassandras_text(node_factory, tmp_root):
    from conftest import make_cluster
    cfg = tmp_root / "views-off.yaml"
    cfg.write_text("materialized_views_enabled: false\n")
    n = node_factory("views-off", ["--config", str(cfg)])
    c = make_cluster(n)
    try:
        s = c.connect()
        s.execute("CREATE KEYSPACE off WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE off.t (pk int PRIMARY KEY, v int)")
        assert "Materialized views are disabled. Enable in cassandra.yaml to use." in err(
            s, "CREATE MATERIALIZED VIEW off.v AS SELECT * FROM off.t WHERE pk IS NOT NULL "
               "AND v IS NOT NULL PRIMARY KEY (v, pk)")
        assert s.execute("SELECT value FROM system_views.settings WHERE name = "
                         "'materialized_views_enabled'").one().value == "false"
    finally:
        c.shutdown()


def test_describe_keyspace_lists_views_after_tables(session, ks, by_v):
    t, v = by_v
    listed = [(r.type, r.name) for r in session.execute(f"DESCRIBE KEYSPACE {ks}")]
    assert ("table", t.split(".")[1]) in listed
    assert listed.index(("materialized_view", v.split(".")[1])) > max(
        i for i, (kind, _) in enumerate(listed) if kind == "table")
    assert ("table", v.split(".")[1]) not in listed
    assert v.split(".")[1] not in [r.name for r in session.execute("DESCRIBE TABLES")]


def test_built_views_lists_views_this_node_built(session, by_v):
    t, v = by_v
    ks, name = v.split(".")
    deadline = time.time() + 30
    built = []
    while time.time() < deadline:
        built = [tuple(r) for r in session.execute(
            "SELECT keyspace_name, view_name FROM system.built_views WHERE keyspace_name = %s", (ks,))]
        if (ks, name) in built:
            break
        time.sleep(0.2)
    assert (ks, name) in built
    assert not [r for r in session.execute(
        "SELECT view_name FROM system.view_builds_in_progress WHERE keyspace_name = %s", (ks,))
        if r.view_name == name]


def test_a_build_cut_by_sigkill_resumes_and_ends_complete(node_factory, monkeypatch):
    """A view and an index built on a table with data, the node SIGKILLed after the builds
    saved a position: on restart they resume there (the log says so), then end complete —
    every base row once in the view and the index, writes racing the build included — and
    listed built. The builds are slowed by the test-only CAIRN_TEST_VIEW_BUILD_DELAY_MS."""
    from conftest import make_cluster
    from cassandra.concurrent import execute_concurrent_with_args
    from helpers import nodetool
    monkeypatch.setenv("CAIRN_TEST_VIEW_BUILD_DELAY_MS", "20")
    n = node_factory("view_build_kill")
    names = {("vb", "by_v"), ("vb", "t_v_idx_index")}

    def progress(s):
        return {(r.keyspace_name, r.view_name): r for r in s.execute(
            "SELECT keyspace_name, view_name, keys_built, last_token FROM system.view_builds_in_progress")}

    c = make_cluster(n)
    try:
        s = c.connect()
        s.execute("CREATE KEYSPACE vb WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE vb.t (pk int, ck int, v int, PRIMARY KEY (pk, ck))")
        ins = s.prepare("INSERT INTO vb.t (pk, ck, v) VALUES (?, ?, ?)")
        execute_concurrent_with_args(s, ins, [(p, ck, p % 7) for p in range(600) for ck in range(2)],
                                     concurrency=32, raise_on_first_error=True)
        s.execute("CREATE MATERIALIZED VIEW vb.by_v AS SELECT * FROM vb.t "
                  "WHERE v IS NOT NULL AND pk IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (v, pk, ck)")
        s.execute("CREATE INDEX t_v_idx ON vb.t (v)")
        deadline = time.time() + 60
        while time.time() < deadline and not (
                set(progress(s)) == names and all(r.last_token is not None for r in progress(s).values())):
            time.sleep(0.1)
        saved = progress(s)
        assert set(saved) == names and all(r.last_token is not None and r.keys_built > 0 for r in saved.values())
        built = {tuple(r) for r in s.execute("SELECT keyspace_name, view_name FROM system.built_views")}
        assert not names & built
        # Status and progress while building: system_distributed.view_build_status (this
        # node's row), nodetool viewbuildstatus and compactionstats.
        host = s.execute("SELECT host_id FROM system.local").one().host_id
        assert [tuple(r) for r in s.execute(
            "SELECT keyspace_name, view_name, host_id, status FROM system_distributed.view_build_status "
            "WHERE keyspace_name = 'vb' AND view_name = 'by_v'")] == [("vb", "by_v", host, "STARTED")]
        out = nodetool(n, "viewbuildstatus", "vb.by_v", ok=False)
        assert out.returncode == 1
        assert "vb.by_v has not finished building; node status is below." in out.stderr
        assert "STARTED" in out.stderr and "Host" in out.stderr
        stats = nodetool(n, "compactionstats").stdout
        assert "View build" in stats and "Secondary index build" in stats and "keys" in stats, stats
        # An index still building refuses lookups, as Cassandra's IndexNotAvailableException.
        from cassandra import ReadFailure
        with pytest.raises(ReadFailure) as e:
            s.execute("SELECT * FROM vb.t WHERE v = 1")
        assert "INDEX_NOT_AVAILABLE" in str(e.value)
        # Writes racing the build keep their own view updates.
        upd = s.prepare("UPDATE vb.t SET v = ? WHERE pk = ? AND ck = 0")
        execute_concurrent_with_args(s, upd, [(100 + p % 3, p) for p in range(0, 600, 5)],
                                     concurrency=32, raise_on_first_error=True)
    finally:
        c.shutdown()
    n.kill()
    n.start()
    c = make_cluster(n)
    try:
        s = c.connect()
        deadline = time.time() + 120
        while time.time() < deadline and not names <= {
                tuple(r) for r in s.execute("SELECT keyspace_name, view_name FROM system.built_views")}:
            time.sleep(0.3)
        assert names <= {tuple(r) for r in s.execute("SELECT keyspace_name, view_name FROM system.built_views")}
        assert ("vb", "t_v_idx") in {tuple(r) for r in s.execute('SELECT table_name, index_name FROM system."IndexInfo"')}
        assert not set(progress(s)) & names
        host = s.execute("SELECT host_id FROM system.local").one().host_id
        assert [tuple(r) for r in s.execute(
            "SELECT keyspace_name, view_name, host_id, status FROM system_distributed.view_build_status "
            "WHERE keyspace_name = 'vb'")] == [("vb", "by_v", host, "SUCCESS")]
        assert nodetool(n, "viewbuildstatus", "vb", "by_v").stdout == "vb.by_v has finished building\n"
        assert "build" not in nodetool(n, "compactionstats").stdout
        log = n.log_path.read_text(errors="replace").split("---- start #2 ----")[-1]
        for ks, v in names:
            assert f"resuming the build of view {ks}.{v} at token" in log, v
        base = rows(s, "SELECT v, pk, ck FROM vb.t")
        assert len(base) == 1200
        view = [tuple(r) for r in s.execute("SELECT v, pk, ck FROM vb.by_v")]
        assert sorted(view) == base and len(view) == len(set(view))
        for v in list(range(7)) + [100, 101, 102]:
            got = [tuple(r) for r in s.execute(f"SELECT v, pk, ck FROM vb.t WHERE v = {v}")]
            assert sorted(got) == [r for r in base if r[0] == v], v
            assert len(got) == len(set(got))
    finally:
        c.shutdown()


def test_read_repair_brings_the_lagging_replicas_view_along(tmp_root):
    """Three nodes, RF 3: a base write at ONE while one replica is down (no hints: it misses
    the write), the replica back, a read at ALL repairs it — and its own view follows (the
    repair applies as a write does). The view is read at ONE coordinated by the lagging node,
    which reads its own replica."""
    from cassandra import ConsistencyLevel
    from cassandra.query import SimpleStatement
    from test_cluster import alone, on, three_nodes, wait_for

    def read(node, query, cl):
        c = alone(node)
        try:
            return sorted(tuple(r) for r in c.connect().execute(SimpleStatement(query, consistency_level=cl)))
        finally:
            c.shutdown()

    one, all_ = ConsistencyLevel.ONE, ConsistencyLevel.ALL
    with three_nodes(tmp_root / "views-repair") as nodes:
        first, lagging = nodes[0], nodes[2]
        on(first, "CREATE KEYSPACE rr WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 3}")
        on(first, "CREATE TABLE rr.t (pk int, ck int, v int, PRIMARY KEY (pk, ck))")
        on(first, "CREATE MATERIALIZED VIEW rr.by_v AS SELECT * FROM rr.t WHERE v IS NOT NULL "
                  "AND pk IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (v, pk, ck)")
        c = alone(first)
        try:
            s = c.connect()
            s.execute(SimpleStatement("INSERT INTO rr.t (pk, ck, v) VALUES (1, 1, 10)", consistency_level=all_))
        finally:
            c.shutdown()
        assert read(lagging, "SELECT v, pk, ck FROM rr.by_v", one) == [(10, 1, 1)]
        lagging.kill()
        c = alone(first, max_schema_agreement_wait=0)
        try:
            s = c.connect()
            s.execute(SimpleStatement("INSERT INTO rr.t (pk, ck, v) VALUES (2, 1, 20)", consistency_level=one))
            s.execute(SimpleStatement("UPDATE rr.t SET v = 11 WHERE pk = 1 AND ck = 1", consistency_level=one))
        finally:
            c.shutdown()
        lagging.start()
        wait_for("the lagging node UN", lambda: first.states().get(lagging.host) == "UN")
        # The lagging replica missed both writes: its own view is behind.
        assert read(lagging, "SELECT v, pk, ck FROM rr.by_v", one) == [(10, 1, 1)]

        # Blocking read repair at ALL, one partition at a time.
        def at_all(pk):
            try:
                return read(first, f"SELECT v FROM rr.t WHERE pk = {pk}", all_)
            except Exception:  # noqa: BLE001 — until the coordinator sees every replica up
                return None
        wait_for("a read at ALL", lambda: at_all(1) == [(11,)])
        wait_for("a read at ALL", lambda: at_all(2) == [(20,)])
        assert read(lagging, "SELECT v, pk, ck FROM rr.t", one) == [(11, 1, 1), (20, 2, 1)]
        assert read(lagging, "SELECT v, pk, ck FROM rr.by_v", one) == [(11, 1, 1), (20, 2, 1)]


def test_view_build_status_shows_every_node_of_the_ring(tmp_root):
    """Three nodes, the view's build slowed on 127.0.0.3 only (test-only
    CAIRN_TEST_VIEW_BUILD_DELAY_MS): another node's system_distributed.view_build_status,
    REST view_build_statuses and nodetool viewbuildstatus show that host STARTED and the
    view unfinished, then every host SUCCESS."""
    import subprocess
    from cassandra import ConsistencyLevel
    from cassandra.concurrent import execute_concurrent_with_args
    from cassandra.query import SimpleStatement
    from conftest import cairn_bin
    from test_cluster import alone, on, three_nodes, wait_all_up, wait_for

    def statuses(node):
        return {(str(r.host_id), r.status) for r in on(
            node, "SELECT host_id, status FROM system_distributed.view_build_status "
                  "WHERE keyspace_name = 'vs' AND view_name = 'by_v'")}

    def viewbuildstatus(node):
        return subprocess.run(
            [str(cairn_bin()), "nodetool", "-h", node.host, "-p", str(node.api_port),
             "viewbuildstatus", "vs.by_v"], capture_output=True, text=True, timeout=60)

    with three_nodes(tmp_root / "views-status") as nodes:
        slow = nodes[2]
        slow.kill()
        slow.env["CAIRN_TEST_VIEW_BUILD_DELAY_MS"] = "100"
        slow.start()
        wait_all_up(nodes)
        hosts = {n.host: str(on(n, "SELECT host_id FROM system.local")[0].host_id) for n in nodes}
        on(nodes[0], "CREATE KEYSPACE vs WITH replication = "
                     "{'class': 'SimpleStrategy', 'replication_factor': 3}")
        on(nodes[0], "CREATE TABLE vs.t (pk int PRIMARY KEY, v int)")
        c = alone(nodes[0])
        try:
            s = c.connect()
            ins = s.prepare("INSERT INTO vs.t (pk, v) VALUES (?, ?)")
            ins.consistency_level = ConsistencyLevel.ALL
            execute_concurrent_with_args(s, ins, [(p, p % 5) for p in range(400)],
                                         concurrency=32, raise_on_first_error=True)
        finally:
            c.shutdown()
        on(nodes[0], "CREATE MATERIALIZED VIEW vs.by_v AS SELECT * FROM vs.t "
                     "WHERE v IS NOT NULL AND pk IS NOT NULL PRIMARY KEY (v, pk)")
        asked = nodes[0]
        # The slow host's row reaches the node asked while it builds (its status is polled).
        wait_for("the slow host STARTED and the others SUCCESS, seen from 127.0.0.1",
                 lambda: statuses(asked) == {(hosts[nodes[0].host], "SUCCESS"),
                                             (hosts[nodes[1].host], "SUCCESS"),
                                             (hosts[slow.host], "STARTED")})
        out = viewbuildstatus(asked)
        assert out.returncode == 1, out
        assert "vs.by_v has not finished building; node status is below." in out.stderr
        lines = {tuple(l.split()) for l in out.stderr.splitlines()}
        assert {(slow.host, "STARTED"), (nodes[0].host, "SUCCESS"),
                (nodes[1].host, "SUCCESS")} <= lines, out.stderr
        # Every host done: every node says so.
        for n in nodes:
            wait_for(f"every host SUCCESS, seen from {n.host}",
                     lambda n=n: statuses(n) == {(h, "SUCCESS") for h in hosts.values()})
            out = viewbuildstatus(n)
            assert out.returncode == 0 and out.stdout == "vs.by_v has finished building\n", out
        # The slow node built every row.
        c = alone(slow)
        try:
            rows = c.connect().execute(SimpleStatement(
                "SELECT pk FROM vs.by_v", consistency_level=ConsistencyLevel.ONE))
            assert len(list(rows)) == 400
        finally:
            c.shutdown()
