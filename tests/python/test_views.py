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
