"""DML: INSERT / UPDATE / DELETE of cells, rows, clustering ranges, partitions; USING TTL and
TIMESTAMP; writetime() / ttl(); static columns."""

import pytest
from cassandra import InvalidRequest

from helpers import expect_error, rows, server_message, tuples


@pytest.fixture
def t(session, ks, tname):
    session.execute(f"CREATE TABLE {ks}.{tname} (p int, c int, v text, w int, PRIMARY KEY (p, c))")
    return f"{ks}.{tname}"


def test_insert_select(session, t):
    session.execute(f"INSERT INTO {t} (p, c, v, w) VALUES (1, 1, 'a', 10)")
    assert tuples(session, f"SELECT p, c, v, w FROM {t} WHERE p = 1 AND c = 1") == [(1, 1, "a", 10)]


def test_insert_is_upsert(session, t):
    session.execute(f"INSERT INTO {t} (p, c, v, w) VALUES (1, 1, 'a', 10)")
    session.execute(f"INSERT INTO {t} (p, c, v) VALUES (1, 1, 'b')")
    assert tuples(session, f"SELECT v, w FROM {t} WHERE p = 1 AND c = 1") == [("b", 10)]


def test_update_creates_and_modifies(session, t):
    session.execute(f"UPDATE {t} SET v = 'x' WHERE p = 2 AND c = 3")
    assert tuples(session, f"SELECT p, c, v, w FROM {t}") == [(2, 3, "x", None)]
    session.execute(f"UPDATE {t} SET v = 'y', w = 7 WHERE p = 2 AND c = 3")
    assert tuples(session, f"SELECT p, c, v, w FROM {t}") == [(2, 3, "y", 7)]


def test_update_with_in_on_clustering(session, t):
    session.execute(f"UPDATE {t} SET w = 1 WHERE p = 1 AND c IN (1, 2, 3)")
    assert tuples(session, f"SELECT c, w FROM {t} WHERE p = 1") == [(1, 1), (2, 1), (3, 1)]


def test_delete_cell_keeps_inserted_row(session, t):
    session.execute(f"INSERT INTO {t} (p, c, v, w) VALUES (1, 1, 'a', 10)")
    session.execute(f"DELETE v FROM {t} WHERE p = 1 AND c = 1")
    assert tuples(session, f"SELECT p, c, v, w FROM {t}") == [(1, 1, None, 10)]
    session.execute(f"DELETE w FROM {t} WHERE p = 1 AND c = 1")
    # INSERT wrote a row marker: the row still exists with all cells null
    assert tuples(session, f"SELECT p, c, v, w FROM {t}") == [(1, 1, None, None)]


def test_delete_all_cells_of_updated_row_removes_it(session, t):
    session.execute(f"UPDATE {t} SET v = 'a' WHERE p = 1 AND c = 1")
    session.execute(f"DELETE v FROM {t} WHERE p = 1 AND c = 1")
    # UPDATE writes no row marker: with no live cell the row is gone
    assert rows(session, f"SELECT * FROM {t}") == []


def test_delete_row(session, t):
    for c in range(3):
        session.execute(f"INSERT INTO {t} (p, c, v) VALUES (1, {c}, 'a')")
    session.execute(f"DELETE FROM {t} WHERE p = 1 AND c = 1")
    assert tuples(session, f"SELECT c FROM {t} WHERE p = 1") == [(0,), (2,)]


def test_delete_clustering_range(session, t):
    for c in range(10):
        session.execute(f"INSERT INTO {t} (p, c, v) VALUES (1, {c}, 'a')")
    session.execute(f"DELETE FROM {t} WHERE p = 1 AND c > 2 AND c <= 5")
    assert [r.c for r in session.execute(f"SELECT c FROM {t} WHERE p = 1")] == [0, 1, 2, 6, 7, 8, 9]
    session.execute(f"DELETE FROM {t} WHERE p = 1 AND c >= 8")
    assert [r.c for r in session.execute(f"SELECT c FROM {t} WHERE p = 1")] == [0, 1, 2, 6, 7]
    session.execute(f"DELETE FROM {t} WHERE p = 1 AND c < 1")
    assert [r.c for r in session.execute(f"SELECT c FROM {t} WHERE p = 1")] == [1, 2, 6, 7]


def test_delete_partition(session, t):
    for p in range(3):
        for c in range(3):
            session.execute(f"INSERT INTO {t} (p, c, v) VALUES ({p}, {c}, 'a')")
    session.execute(f"DELETE FROM {t} WHERE p = 1")
    assert sorted(set(r.p for r in session.execute(f"SELECT p FROM {t}"))) == [0, 2]
    assert rows(session, f"SELECT * FROM {t} WHERE p = 1") == []


def test_delete_partitions_with_in(session, t):
    for p in range(4):
        session.execute(f"INSERT INTO {t} (p, c, v) VALUES ({p}, 0, 'a')")
    session.execute(f"DELETE FROM {t} WHERE p IN (0, 2)")
    assert sorted(r.p for r in session.execute(f"SELECT p FROM {t}")) == [1, 3]


def test_insert_null_deletes_cell(session, t):
    session.execute(f"INSERT INTO {t} (p, c, v, w) VALUES (1, 1, 'a', 1)")
    session.execute(f"INSERT INTO {t} (p, c, v) VALUES (1, 1, null)")
    assert tuples(session, f"SELECT v, w FROM {t}") == [(None, 1)]


def test_using_timestamp_and_writetime(session, t):
    session.execute(f"INSERT INTO {t} (p, c, v) VALUES (1, 1, 'new') USING TIMESTAMP 1000")
    session.execute(f"INSERT INTO {t} (p, c, v) VALUES (1, 1, 'old') USING TIMESTAMP 500")
    assert tuples(session, f"SELECT v, writetime(v) FROM {t}") == [("new", 1000)]
    session.execute(f"UPDATE {t} USING TIMESTAMP 2000 SET v = 'newer' WHERE p = 1 AND c = 1")
    assert tuples(session, f"SELECT v, writetime(v) FROM {t}") == [("newer", 2000)]
    # a deletion older than the data does not shadow it
    session.execute(f"DELETE FROM {t} USING TIMESTAMP 1999 WHERE p = 1 AND c = 1")
    assert tuples(session, f"SELECT v FROM {t}") == [("newer",)]
    # equal timestamps: the tombstone wins
    session.execute(f"DELETE v FROM {t} USING TIMESTAMP 2000 WHERE p = 1 AND c = 1")
    assert tuples(session, f"SELECT v FROM {t} WHERE p = 1 AND c = 1") in ([(None,)], [])


def test_writetime_of_null_and_pk(session, t):
    session.execute(f"INSERT INTO {t} (p, c, v) VALUES (1, 1, 'x') USING TIMESTAMP 42")
    assert tuples(session, f"SELECT writetime(v), writetime(w) FROM {t}") == [(42, None)]
    expect_error(InvalidRequest, session.execute, f"SELECT writetime(p) FROM {t}")


def test_using_ttl_and_ttl_function(session, t):
    session.execute(f"INSERT INTO {t} (p, c, v, w) VALUES (1, 1, 'a', 1) USING TTL 1000")
    r = session.execute(f"SELECT ttl(v), ttl(w) FROM {t}").one()
    assert 990 <= r[0] <= 1000 and 990 <= r[1] <= 1000
    session.execute(f"UPDATE {t} USING TTL 500 SET w = 2 WHERE p = 1 AND c = 1")
    r = session.execute(f"SELECT ttl(v), ttl(w) FROM {t}").one()
    assert 990 <= r[0] <= 1000 and 490 <= r[1] <= 500
    session.execute(f"INSERT INTO {t} (p, c, v) VALUES (2, 2, 'no ttl')")
    assert tuples(session, f"SELECT ttl(v) FROM {t} WHERE p = 2") == [(None,)]


def test_using_ttl_and_timestamp_together(session, t):
    session.execute(f"INSERT INTO {t} (p, c, v) VALUES (1, 1, 'a') USING TTL 1000 AND TIMESTAMP 123")
    r = session.execute(f"SELECT writetime(v), ttl(v) FROM {t}").one()
    assert r[0] == 123 and 990 <= r[1] <= 1000
    session.execute(f"UPDATE {t} USING TIMESTAMP 124 AND TTL 2000 SET v = 'b' WHERE p = 1 AND c = 1")
    r = session.execute(f"SELECT v, writetime(v), ttl(v) FROM {t}").one()
    assert r[0] == "b" and r[1] == 124 and 1990 <= r[2] <= 2000


def test_ttl_validation(session, t):
    err = expect_error(InvalidRequest, session.execute,
                       f"INSERT INTO {t} (p, c, v) VALUES (1, 1, 'a') USING TTL -1")
    assert "TTL" in server_message(err)
    err = expect_error(InvalidRequest, session.execute,
                       f"INSERT INTO {t} (p, c, v) VALUES (1, 1, 'a') USING TTL 630720001")
    assert "ttl is too large" in server_message(err).lower()


def test_missing_key_parts(session, t):
    err = expect_error(InvalidRequest, session.execute, f"INSERT INTO {t} (c, v) VALUES (1, 'a')")
    assert "Some partition key parts are missing: p" in server_message(err)
    err = expect_error(InvalidRequest, session.execute, f"INSERT INTO {t} (p, v) VALUES (1, 'a')")
    assert "Some clustering keys are missing: c" in server_message(err)
    expect_error(InvalidRequest, session.execute, f"UPDATE {t} SET v = 'a' WHERE p = 1")


def test_static_columns_dml(session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (p int, c int, s text static, v int, PRIMARY KEY (p, c))")
    session.execute(f"INSERT INTO {t} (p, c, s, v) VALUES (1, 1, 'one', 10)")
    session.execute(f"INSERT INTO {t} (p, c, v) VALUES (1, 2, 20)")
    assert tuples(session, f"SELECT c, s, v FROM {t} WHERE p = 1") == [(1, "one", 10), (2, "one", 20)]
    # static-only update with just the partition key
    session.execute(f"UPDATE {t} SET s = 'uno' WHERE p = 1")
    assert tuples(session, f"SELECT c, s FROM {t} WHERE p = 1") == [(1, "uno"), (2, "uno")]
    # a partition with only a static row shows one row with null clustering
    session.execute(f"INSERT INTO {t} (p, s) VALUES (2, 'lonely')")
    assert tuples(session, f"SELECT p, c, s, v FROM {t} WHERE p = 2") == [(2, None, "lonely", None)]
    assert sorted(tuples(session, f"SELECT DISTINCT p, s FROM {t}")) == [(1, "uno"), (2, "lonely")]
    # deleting all rows keeps the static row
    session.execute(f"DELETE FROM {t} WHERE p = 1 AND c >= 0")
    assert tuples(session, f"SELECT p, c, s FROM {t} WHERE p = 1") == [(1, None, "uno")]
    # deleting the static cell
    session.execute(f"DELETE s FROM {t} WHERE p = 1")
    assert rows(session, f"SELECT * FROM {t} WHERE p = 1") == []


def test_quoted_identifiers_and_case(session, ks, tname):
    t = f'{ks}."{tname}_Q"'
    session.execute(f'CREATE TABLE {t} ("Key" int PRIMARY KEY, "Value" text, plain int)')
    session.execute(f'INSERT INTO {t} ("Key", "Value", PLAIN) VALUES (1, \'x\', 2)')
    r = session.execute(f'SELECT "Key", "Value", plain FROM {t}').one()
    assert tuple(r) == (1, "x", 2)
    expect_error(InvalidRequest, session.execute, f"SELECT key FROM {t}")
