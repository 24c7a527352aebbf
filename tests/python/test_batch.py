"""Batches: logged / unlogged, several tables, BatchStatement with prepared statements."""

import pytest
from cassandra import InvalidRequest
from cassandra.protocol import SyntaxException
from cassandra.query import BatchStatement, BatchType, SimpleStatement

from helpers import expect_error, rows, tuples


@pytest.fixture
def tabs(session, ks, tname):
    a, b = f"{ks}.{tname}_a", f"{ks}.{tname}_b"
    session.execute(f"CREATE TABLE {a} (p int, c int, v text, PRIMARY KEY (p, c))")
    session.execute(f"CREATE TABLE {b} (k text PRIMARY KEY, n int)")
    return a, b


def test_logged_batch_two_tables(session, tabs):
    a, b = tabs
    session.execute(f"""
        BEGIN BATCH
          INSERT INTO {a} (p, c, v) VALUES (1, 1, 'one');
          INSERT INTO {a} (p, c, v) VALUES (2, 1, 'two');
          UPDATE {b} SET n = 5 WHERE k = 'x';
          INSERT INTO {b} (k, n) VALUES ('y', 6)
        APPLY BATCH""")
    assert sorted(tuples(session, f"SELECT p, c, v FROM {a}")) == [(1, 1, "one"), (2, 1, "two")]
    assert sorted(tuples(session, f"SELECT k, n FROM {b}")) == [("x", 5), ("y", 6)]


def test_unlogged_batch(session, tabs):
    a, _ = tabs
    body = " ".join(f"INSERT INTO {a} (p, c, v) VALUES (7, {c}, 'u');" for c in range(20))
    session.execute(f"BEGIN UNLOGGED BATCH {body} APPLY BATCH")
    assert [r.c for r in session.execute(f"SELECT c FROM {a} WHERE p = 7")] == list(range(20))


def test_batch_mixing_insert_update_delete(session, tabs):
    a, _ = tabs
    for c in range(5):
        session.execute(f"INSERT INTO {a} (p, c, v) VALUES (1, {c}, 'old')")
    session.execute(f"""
        BEGIN BATCH
          DELETE FROM {a} WHERE p = 1 AND c = 0;
          UPDATE {a} SET v = 'new' WHERE p = 1 AND c = 1;
          DELETE v FROM {a} WHERE p = 1 AND c = 2;
          INSERT INTO {a} (p, c, v) VALUES (1, 9, 'added');
        APPLY BATCH""")
    assert tuples(session, f"SELECT c, v FROM {a} WHERE p = 1") == [
        (1, "new"), (2, None), (3, "old"), (4, "old"), (9, "added")]


def test_batch_using_timestamp(session, tabs):
    a, _ = tabs
    session.execute(f"""
        BEGIN BATCH USING TIMESTAMP 1111
          INSERT INTO {a} (p, c, v) VALUES (1, 1, 'a');
          INSERT INTO {a} (p, c, v) VALUES (1, 2, 'b');
        APPLY BATCH""")
    assert tuples(session, f"SELECT c, writetime(v) FROM {a} WHERE p = 1") == [(1, 1111), (2, 1111)]


def test_batch_delete_and_insert_same_row_tombstone_wins(session, tabs):
    """All statements of a batch share one timestamp; at equal timestamps a deletion wins."""
    a, _ = tabs
    session.execute(f"""
        BEGIN BATCH
          INSERT INTO {a} (p, c, v) VALUES (3, 3, 'x');
          DELETE FROM {a} WHERE p = 3 AND c = 3;
        APPLY BATCH""")
    assert rows(session, f"SELECT * FROM {a} WHERE p = 3") == []


def test_batch_statement_prepared(session, tabs):
    a, b = tabs
    ins_a = session.prepare(f"INSERT INTO {a} (p, c, v) VALUES (?, ?, ?)")
    ins_b = session.prepare(f"INSERT INTO {b} (k, n) VALUES (:k, :n)")
    for bt in (BatchType.LOGGED, BatchType.UNLOGGED):
        batch = BatchStatement(batch_type=bt)
        base = 100 if bt == BatchType.LOGGED else 200
        for c in range(10):
            batch.add(ins_a, (base, c, f"b{c}"))
        batch.add(ins_b, (f"k{base}", base))
        batch.add(SimpleStatement(f"UPDATE {b} SET n = %s WHERE k = %s"), (base + 1, f"s{base}"))
        session.execute(batch)
        assert [r.c for r in session.execute(f"SELECT c FROM {a} WHERE p = {base}")] == list(range(10))
        assert tuples(session, f"SELECT n FROM {b} WHERE k = 'k{base}'") == [(base,)]
        assert tuples(session, f"SELECT n FROM {b} WHERE k = 's{base}'") == [(base + 1,)]


def test_batch_rejects_select(session, tabs):
    a, _ = tabs
    expect_error(SyntaxException, session.execute,
                 f"BEGIN BATCH SELECT * FROM {a}; APPLY BATCH")


def test_batch_error_applies_nothing(session, tabs):
    a, _ = tabs
    expect_error(InvalidRequest, session.execute, f"""
        BEGIN BATCH
          INSERT INTO {a} (p, c, v) VALUES (50, 1, 'a');
          INSERT INTO {a} (p, nope, v) VALUES (50, 2, 'b');
        APPLY BATCH""")
    assert rows(session, f"SELECT * FROM {a} WHERE p = 50") == []
