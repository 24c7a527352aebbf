"""Prepared statements: positional and named binds, reuse, metadata, re-prepare after schema change."""

import pytest
from cassandra import InvalidRequest
from cassandra.protocol import SyntaxException
from cassandra.query import UNSET_VALUE

from helpers import expect_error, server_message, tuples


@pytest.fixture
def t(session, ks, tname):
    session.execute(f"CREATE TABLE {ks}.{tname} (p int, c int, v text, w bigint, PRIMARY KEY (p, c))")
    return f"{ks}.{tname}"


def test_positional_binds_and_reuse(session, t):
    ins = session.prepare(f"INSERT INTO {t} (p, c, v, w) VALUES (?, ?, ?, ?)")
    for i in range(50):
        session.execute(ins, (i % 5, i, f"v{i}", i * 1000))
    sel = session.prepare(f"SELECT c, v, w FROM {t} WHERE p = ? AND c >= ?")
    for p in range(5):
        got = tuples(session, sel, (p, 20))
        assert got == [(c, f"v{c}", c * 1000) for c in range(20, 50) if c % 5 == p]


def test_named_binds(session, t):
    ins = session.prepare(f"INSERT INTO {t} (p, c, v, w) VALUES (:p, :c, :v, :w)")
    session.execute(ins, {"w": 7, "v": "x", "c": 2, "p": 1})
    upd = session.prepare(f"UPDATE {t} SET v = :newv WHERE p = :pk AND c = :ck")
    session.execute(upd, {"pk": 1, "ck": 2, "newv": "y"})
    sel = session.prepare(f"SELECT v, w FROM {t} WHERE p = :p AND c = :c")
    assert [c.name for c in sel.column_metadata] == ["p", "c"]
    assert tuples(session, sel, {"p": 1, "c": 2}) == [("y", 7)]


def test_bind_metadata_and_routing(session, t):
    ps = session.prepare(f"INSERT INTO {t} (c, v, p, w) VALUES (?, ?, ?, ?)")
    assert [c.name for c in ps.column_metadata] == ["c", "v", "p", "w"]
    assert [c.type.typename for c in ps.column_metadata] == ["int", "varchar", "int", "bigint"]
    assert ps.routing_key_indexes == [2]
    sel = session.prepare(f"SELECT v, w AS ww FROM {t} WHERE p = ?")
    assert [c[2] for c in sel.result_metadata] == ["v", "ww"]  # (keyspace, table, name, type)


def test_bind_in_list_and_limit(session, t):
    ins = session.prepare(f"INSERT INTO {t} (p, c, v) VALUES (?, ?, 'x')")
    for p in range(3):
        for c in range(5):
            session.execute(ins, (p, c))
    sel = session.prepare(f"SELECT p, c FROM {t} WHERE p IN ? AND c IN ?")
    assert sorted(tuples(session, sel, ([0, 2], [1, 3]))) == [(0, 1), (0, 3), (2, 1), (2, 3)]
    lim = session.prepare(f"SELECT c FROM {t} WHERE p = ? LIMIT ?")
    assert tuples(session, lim, (1, 2)) == [(0,), (1,)]


def test_ttl_and_timestamp_binds(session, t):
    ins = session.prepare(f"INSERT INTO {t} (p, c, v) VALUES (?, ?, ?) USING TTL ? AND TIMESTAMP ?")
    session.execute(ins, (1, 1, "x", 1000, 12345))
    r = session.execute(f"SELECT writetime(v), ttl(v) FROM {t}").one()
    assert r[0] == 12345 and 990 <= r[1] <= 1000


def test_null_and_unset(session, t):
    session.execute(f"INSERT INTO {t} (p, c, v, w) VALUES (1, 1, 'keep', 5)")
    ins = session.prepare(f"INSERT INTO {t} (p, c, v, w) VALUES (?, ?, ?, ?)")
    session.execute(ins, (1, 1, UNSET_VALUE, None))
    assert tuples(session, f"SELECT v, w FROM {t}") == [("keep", None)]


def test_prepare_errors(session, ks, t):
    expect_error(SyntaxException, session.prepare, f"SELEC * FROM {t}")
    err = expect_error(InvalidRequest, session.prepare, f"SELECT * FROM {ks}.no_such_table WHERE p = ?")
    assert "unconfigured table no_such_table" in server_message(err)
    expect_error(InvalidRequest, session.prepare, f"SELECT nope FROM {t}")


def test_reprepare_after_add_column(session, t):
    session.execute(f"INSERT INTO {t} (p, c, v, w) VALUES (1, 1, 'a', 1)")
    sel = session.prepare(f"SELECT * FROM {t} WHERE p = ?")
    assert session.execute(sel, (1,)).column_names == ["p", "c", "v", "w"]
    session.execute(f"ALTER TABLE {t} ADD z int")
    session.execute(f"UPDATE {t} SET z = 9 WHERE p = 1 AND c = 1")
    rs = session.execute(sel, (1,))
    assert rs.column_names == ["p", "c", "v", "w", "z"]
    assert tuple(rs.one()) == (1, 1, "a", 1, 9)


def test_prepared_insert_after_drop_column_fails(session, t):
    ins = session.prepare(f"INSERT INTO {t} (p, c, w) VALUES (?, ?, ?)")
    session.execute(ins, (1, 1, 1))
    session.execute(f"ALTER TABLE {t} DROP w")
    err = expect_error(InvalidRequest, session.execute, ins, (1, 2, 2))
    assert "w" in server_message(err)


def test_prepared_after_drop_and_recreate_table(session, t):
    ins = session.prepare(f"INSERT INTO {t} (p, c, v) VALUES (?, ?, ?)")
    session.execute(ins, (1, 1, "a"))
    session.execute(f"DROP TABLE {t}")
    expect_error(InvalidRequest, session.execute, ins, (1, 2, "b"))
    session.execute(f"CREATE TABLE {t} (p int, c int, v text, PRIMARY KEY (p, c))")
    session.execute(ins, (1, 3, "c"))
    assert tuples(session, f"SELECT c, v FROM {t}") == [(3, "c")]


def test_same_query_prepared_twice_same_id(session, t):
    a = session.prepare(f"SELECT * FROM {t} WHERE p = ?")
    b = session.prepare(f"SELECT * FROM {t} WHERE p = ?")
    assert a.query_id == b.query_id


def test_condition_markers_have_their_columns_types(session, ks, tname):
    """A marker in an IF clause is described by the column it compares with (drivers encode
    the value with that type), a collection element's as key(m) / value(m)."""
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v int, w text, m map<text, bigint>)")
    session.execute(f"INSERT INTO {t} (k, v, w, m) VALUES (1, 10, 'x', {{'a': 5}})")
    upd = session.prepare(f"UPDATE {t} SET v = ? WHERE k = ? IF v = ? AND w IN (?, ?) AND m[?] = ?")
    assert [(c.name, c.type.typename) for c in upd.column_metadata] == [
        ("v", "int"), ("k", "int"), ("v", "int"), ("w", "varchar"), ("w", "varchar"),
        ("key(m)", "varchar"), ("value(m)", "bigint")]
    assert not session.execute(upd, (20, 1, 99, "x", "y", "a", 5)).one()[0]
    assert session.execute(upd, (20, 1, 10, "x", "y", "a", 5)).one()[0]
    dele = session.prepare(f"DELETE FROM {t} WHERE k = ? IF v = ?")
    assert [c.type.typename for c in dele.column_metadata] == ["int", "int"]
    assert session.execute(dele, (1, 20)).one()[0]
