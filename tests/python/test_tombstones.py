"""Every tombstone kind (cell, row, range, partition, static, collection) and reading around them."""

import pytest
from cassandra.concurrent import execute_concurrent_with_args
from cassandra.query import SimpleStatement

from helpers import rows, tuples


@pytest.fixture
def t(session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (p int, a int, b int, v text, s int static, PRIMARY KEY (p, a, b))")
    ins = session.prepare(f"INSERT INTO {t} (p, a, b, v) VALUES (?, ?, ?, ?) USING TIMESTAMP 1000")
    execute_concurrent_with_args(session, ins, [(p, a, b, f"{p}.{a}.{b}")
                                                for p in range(3) for a in range(5) for b in range(5)])
    return t


def ab(session, t, p=0, extra=""):
    return tuples(session, f"SELECT a, b FROM {t} WHERE p = {p} {extra}")


ALL = [(a, b) for a in range(5) for b in range(5)]


def test_cell_tombstone(session, t):
    session.execute(f"DELETE v FROM {t} WHERE p = 0 AND a = 1 AND b = 1")
    assert tuples(session, f"SELECT v FROM {t} WHERE p = 0 AND a = 1 AND b = 1") == [(None,)]
    assert tuples(session, f"SELECT v FROM {t} WHERE p = 0 AND a = 1 AND b = 2") == [("0.1.2",)]
    # newer write resurrects the cell; older write stays shadowed
    session.execute(f"UPDATE {t} USING TIMESTAMP 1 SET v = 'old' WHERE p = 0 AND a = 1 AND b = 1")
    assert tuples(session, f"SELECT v FROM {t} WHERE p = 0 AND a = 1 AND b = 1") == [(None,)]
    session.execute(f"UPDATE {t} SET v = 'again' WHERE p = 0 AND a = 1 AND b = 1")
    assert tuples(session, f"SELECT v FROM {t} WHERE p = 0 AND a = 1 AND b = 1") == [("again",)]


def test_row_tombstone(session, t):
    session.execute(f"DELETE FROM {t} WHERE p = 0 AND a = 2 AND b = 2")
    assert ab(session, t) == [x for x in ALL if x != (2, 2)]
    assert ab(session, t, extra="AND a = 2 AND b >= 1 AND b <= 3") == [(2, 1), (2, 3)]
    assert rows(session, f"SELECT * FROM {t} WHERE p = 0 AND a = 2 AND b = 2") == []
    session.execute(f"INSERT INTO {t} (p, a, b, v) VALUES (0, 2, 2, 'x') USING TIMESTAMP 999")
    assert rows(session, f"SELECT * FROM {t} WHERE p = 0 AND a = 2 AND b = 2") == []
    session.execute(f"INSERT INTO {t} (p, a, b, v) VALUES (0, 2, 2, 'back')")
    assert tuples(session, f"SELECT v FROM {t} WHERE p = 0 AND a = 2 AND b = 2") == [("back",)]


def test_range_tombstone_prefix(session, t):
    session.execute(f"DELETE FROM {t} WHERE p = 0 AND a = 3")
    assert ab(session, t) == [x for x in ALL if x[0] != 3]
    assert ab(session, t, extra="AND a >= 2 AND a <= 4") == [x for x in ALL if x[0] in (2, 4)]
    assert ab(session, t, extra="ORDER BY a DESC, b DESC") == [x for x in ALL if x[0] != 3][::-1]


def test_range_tombstone_slice(session, t):
    session.execute(f"DELETE FROM {t} WHERE p = 0 AND a = 1 AND b > 1 AND b <= 3")
    session.execute(f"DELETE FROM {t} WHERE p = 0 AND a >= 3")
    exp = [x for x in ALL if not (x[0] == 1 and 1 < x[1] <= 3) and x[0] < 3]
    assert ab(session, t) == exp
    assert ab(session, t, extra="ORDER BY a DESC, b DESC") == exp[::-1]
    assert ab(session, t, extra="AND a = 1") == [(1, 0), (1, 1), (1, 4)]
    assert session.execute(f"SELECT count(*) FROM {t} WHERE p = 0").one()[0] == len(exp)
    # other partitions untouched
    assert ab(session, t, p=1) == ALL


def test_multi_column_range_tombstone(session, t):
    session.execute(f"DELETE FROM {t} WHERE p = 0 AND (a, b) >= (1, 3) AND (a, b) < (3, 2)")
    assert ab(session, t) == [x for x in ALL if not ((1, 3) <= x < (3, 2))]


def test_overlapping_range_tombstones_and_rewrites(session, t):
    session.execute(f"DELETE FROM {t} USING TIMESTAMP 2000 WHERE p = 0 AND a >= 1 AND a <= 3")
    session.execute(f"INSERT INTO {t} (p, a, b, v) VALUES (0, 2, 2, 'mid') USING TIMESTAMP 3000")
    session.execute(f"DELETE FROM {t} USING TIMESTAMP 4000 WHERE p = 0 AND a >= 2 AND a <= 4")
    session.execute(f"INSERT INTO {t} (p, a, b, v) VALUES (0, 3, 0, 'late') USING TIMESTAMP 5000")
    assert ab(session, t) == [(0, b) for b in range(5)] + [(3, 0)]


def test_partition_tombstone(session, t):
    session.execute(f"DELETE FROM {t} WHERE p = 1")
    assert rows(session, f"SELECT * FROM {t} WHERE p = 1") == []
    assert sorted(set(r.p for r in session.execute(f"SELECT p FROM {t}"))) == [0, 2]
    assert session.execute(f"SELECT count(*) FROM {t}").one()[0] == 50
    # older writes stay hidden, newer ones show
    session.execute(f"INSERT INTO {t} (p, a, b, v) VALUES (1, 0, 0, 'old') USING TIMESTAMP 5")
    assert rows(session, f"SELECT * FROM {t} WHERE p = 1") == []
    session.execute(f"INSERT INTO {t} (p, a, b, v) VALUES (1, 0, 0, 'new')")
    assert tuples(session, f"SELECT a, b, v FROM {t} WHERE p = 1") == [(0, 0, "new")]
    assert sorted(r.p for r in session.execute(f"SELECT DISTINCT p FROM {t}")) == [0, 1, 2]


def test_partition_tombstone_older_than_data(session, t):
    session.execute(f"DELETE FROM {t} USING TIMESTAMP 999 WHERE p = 2")
    assert ab(session, t, p=2) == ALL


def test_static_cell_tombstone(session, t):
    session.execute(f"UPDATE {t} SET s = 7 WHERE p = 0")
    assert set(r.s for r in session.execute(f"SELECT s FROM {t} WHERE p = 0")) == {7}
    session.execute(f"DELETE s FROM {t} WHERE p = 0")
    assert set(r.s for r in session.execute(f"SELECT s FROM {t} WHERE p = 0")) == {None}
    assert len(rows(session, f"SELECT * FROM {t} WHERE p = 0")) == 25


def test_paging_through_tombstones(session, t):
    session.execute(f"DELETE FROM {t} WHERE p = 0 AND a = 0")
    session.execute(f"DELETE FROM {t} WHERE p = 0 AND a = 2 AND b >= 1")
    session.execute(f"DELETE FROM {t} WHERE p = 0 AND a = 4 AND b = 4")
    exp = [x for x in ALL if x[0] != 0 and not (x[0] == 2 and x[1] >= 1) and x != (4, 4)]
    got = [(r.a, r.b) for r in session.execute(SimpleStatement(f"SELECT a, b FROM {t} WHERE p = 0", fetch_size=3))]
    assert got == exp
    session.execute(f"DELETE FROM {t} WHERE p = 1")
    got = [(r.p, r.a, r.b) for r in session.execute(SimpleStatement(f"SELECT p, a, b FROM {t}", fetch_size=4))]
    assert sorted(got) == sorted([(0, a, b) for a, b in exp] + [(2, a, b) for a, b in ALL])


def test_collection_tombstones(session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (p int PRIMARY KEY, l list<int>, m map<text, int>)")
    session.execute(f"INSERT INTO {t} (p, l, m) VALUES (1, [1, 2, 3], {{'a': 1, 'b': 2}})")
    session.execute(f"DELETE m['a'] FROM {t} WHERE p = 1")
    session.execute(f"DELETE l[0] FROM {t} WHERE p = 1")
    assert tuples(session, f"SELECT l, m FROM {t}") == [([2, 3], {"b": 2})]
    # overwriting a collection deletes its previous elements
    session.execute(f"INSERT INTO {t} (p, m) VALUES (1, {{'c': 3}})")
    assert tuples(session, f"SELECT l, m FROM {t}") == [([2, 3], {"c": 3})]
    session.execute(f"DELETE m FROM {t} WHERE p = 1")
    assert tuples(session, f"SELECT l, m FROM {t}") == [([2, 3], None)]
