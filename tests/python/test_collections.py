"""Collections (list, set, map; non-frozen and frozen) and tuples."""

import pytest

from helpers import tuples


@pytest.fixture
def t(session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(
        f"CREATE TABLE {t} (p int PRIMARY KEY, l list<int>, s set<text>, m map<text, int>, "
        f"fl frozen<list<int>>, fs frozen<set<int>>, fm frozen<map<int, text>>, tu tuple<int, text, boolean>, "
        f"nested map<text, frozen<list<int>>>)")
    return t


def one(session, t, cols, p=1):
    return tuple(session.execute(f"SELECT {cols} FROM {t} WHERE p = {p}").one())


def test_collection_literals_round_trip(session, t):
    session.execute(
        f"INSERT INTO {t} (p, l, s, m, fl, fs, fm, tu, nested) VALUES (1, [3, 1, 2], {{'b', 'a'}}, "
        f"{{'x': 1, 'y': 2}}, [5, 5], {{9, 8}}, {{2: 'two', 1: 'one'}}, (1, 'a', true), {{'k': [1, 2]}})")
    l, s, m, fl, fs, fm, tu, nested = one(session, t, "l, s, m, fl, fs, fm, tu, nested")
    assert list(l) == [3, 1, 2]
    assert list(s) == ["a", "b"]          # sets are ordered
    assert dict(m) == {"x": 1, "y": 2} and list(m) == ["x", "y"]
    assert list(fl) == [5, 5]
    assert list(fs) == [8, 9]
    assert list(fm.items()) == [(1, "one"), (2, "two")]
    assert tu == (1, "a", True)
    assert {k: list(v) for k, v in nested.items()} == {"k": [1, 2]}


def test_collection_prepared_round_trip(session, t):
    ins = session.prepare(f"INSERT INTO {t} (p, l, s, m, fl, fs, fm, tu, nested) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
    session.execute(ins, (1, [1, 2], {"z", "y"}, {"a": 1}, [7], {3, 1}, {5: "five"}, (2, None, False), {"q": [9]}))
    l, s, m, fl, fs, fm, tu, nested = one(session, t, "l, s, m, fl, fs, fm, tu, nested")
    assert (list(l), list(s), dict(m), list(fl), list(fs), dict(fm), tu) == (
        [1, 2], ["y", "z"], {"a": 1}, [7], [1, 3], {5: "five"}, (2, None, False))
    assert {k: list(v) for k, v in nested.items()} == {"q": [9]}


def test_list_operations(session, t):
    session.execute(f"INSERT INTO {t} (p, l) VALUES (1, [1, 2, 3])")
    session.execute(f"UPDATE {t} SET l = l + [4, 5] WHERE p = 1")
    assert list(one(session, t, "l")[0]) == [1, 2, 3, 4, 5]
    session.execute(f"UPDATE {t} SET l = [-1, 0] + l WHERE p = 1")
    assert list(one(session, t, "l")[0]) == [-1, 0, 1, 2, 3, 4, 5]
    session.execute(f"UPDATE {t} SET l = l - [2, 4] WHERE p = 1")
    assert list(one(session, t, "l")[0]) == [-1, 0, 1, 3, 5]
    session.execute(f"UPDATE {t} SET l[1] = 99 WHERE p = 1")
    assert list(one(session, t, "l")[0]) == [-1, 99, 1, 3, 5]
    session.execute(f"DELETE l[0] FROM {t} WHERE p = 1")
    assert list(one(session, t, "l")[0]) == [99, 1, 3, 5]
    session.execute(f"UPDATE {t} SET l = [7] WHERE p = 1")
    assert list(one(session, t, "l")[0]) == [7]


def test_set_operations(session, t):
    session.execute(f"INSERT INTO {t} (p, s) VALUES (1, {{'a'}})")
    session.execute(f"UPDATE {t} SET s = s + {{'c', 'b'}} WHERE p = 1")
    assert list(one(session, t, "s")[0]) == ["a", "b", "c"]
    session.execute(f"UPDATE {t} SET s = s - {{'a', 'zzz'}} WHERE p = 1")
    assert list(one(session, t, "s")[0]) == ["b", "c"]
    session.execute(f"UPDATE {t} SET s = {{}} WHERE p = 1")
    assert one(session, t, "s") == (None,)


def test_map_operations(session, t):
    session.execute(f"INSERT INTO {t} (p, m) VALUES (1, {{'a': 1}})")
    session.execute(f"UPDATE {t} SET m['b'] = 2 WHERE p = 1")
    session.execute(f"UPDATE {t} SET m = m + {{'c': 3, 'a': 10}} WHERE p = 1")
    assert dict(one(session, t, "m")[0]) == {"a": 10, "b": 2, "c": 3}
    session.execute(f"DELETE m['b'] FROM {t} WHERE p = 1")
    session.execute(f"UPDATE {t} SET m = m - {{'c'}} WHERE p = 1")
    assert dict(one(session, t, "m")[0]) == {"a": 10}


def test_element_ops_on_new_row(session, t):
    session.execute(f"UPDATE {t} SET l = l + [1], s = s + {{'x'}}, m['k'] = 1 WHERE p = 2")
    assert (list(one(session, t, "l", 2)[0]), list(one(session, t, "s", 2)[0]),
            dict(one(session, t, "m", 2)[0])) == ([1], ["x"], {"k": 1})


def test_empty_collection_is_null(session, t):
    session.execute(f"INSERT INTO {t} (p, l, s, m) VALUES (3, [], {{}}, {{}})")
    assert one(session, t, "l, s, m", 3) == (None, None, None)


def test_prepared_collection_ops(session, t):
    session.execute(f"INSERT INTO {t} (p, l, m) VALUES (4, [1], {{'a': 1}})")
    app = session.prepare(f"UPDATE {t} SET l = l + ?, m[?] = ? WHERE p = ?")
    session.execute(app, ([2, 3], "b", 2, 4))
    assert (list(one(session, t, "l", 4)[0]), dict(one(session, t, "m", 4)[0])) == ([1, 2, 3], {"a": 1, "b": 2})


def test_frozen_collections_as_keys(session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (p frozen<set<int>>, c frozen<list<text>>, tu tuple<int, int>, v int, "
                    f"PRIMARY KEY (p, c, tu))")
    session.execute(f"INSERT INTO {t} (p, c, tu, v) VALUES ({{1, 2}}, ['b'], (1, 2), 1)")
    session.execute(f"INSERT INTO {t} (p, c, tu, v) VALUES ({{2, 1}}, ['a', 'z'], (1, 1), 2)")
    session.execute(f"INSERT INTO {t} (p, c, tu, v) VALUES ({{2, 1}}, ['a'], (0, 5), 3)")
    got = [(list(r.c), r.tu, r.v) for r in session.execute(f"SELECT c, tu, v FROM {t} WHERE p = {{1, 2}}")]
    assert got == [(["a"], (0, 5), 3), (["a", "z"], (1, 1), 2), (["b"], (1, 2), 1)]
    got = tuples(session, f"SELECT v FROM {t} WHERE p = {{1, 2}} AND c = ['a', 'z'] AND tu = (1, 1)")
    assert got == [(2,)]


def test_collection_ttl_and_writetime_of_frozen(session, t):
    session.execute(f"INSERT INTO {t} (p, fl) VALUES (5, [1]) USING TIMESTAMP 77")
    assert one(session, t, "writetime(fl)", 5) == (77,)
