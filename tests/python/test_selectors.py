"""Selectors Cassandra 5.0 has beyond columns and functions: tuples of selectors (`(a, b)`),
type hints on selectors (`(varint) a`), `CAST(… AS type)` in terms, and `WRITETIME` / `TTL` /
`MAXWRITETIME` of user-type fields and nested elements (`writetime(u.f)`, `writetime(m[1][2])`).
Answers, result metadata and refusals as Apache Cassandra 5.0.9 gives them (checked on it)."""

import pytest
from cassandra import InvalidRequest
from cassandra.protocol import SyntaxException

from helpers import expect_error, server_message, tuples


@pytest.fixture(scope="module")
def t(session, ks):
    session.execute(f"CREATE TYPE {ks}.ut (f int, g text)")
    session.execute(
        f"CREATE TABLE {ks}.sx (k int, c int, a int, b bigint, v text, u ut, fu frozen<ut>, "
        f"m map<int, frozen<map<int, int>>>, l list<frozen<list<int>>>, s set<int>, "
        f"st int static, PRIMARY KEY (k, c))")
    session.execute(
        f"INSERT INTO {ks}.sx (k, c, a, b, v, u, fu, m, l, s) VALUES (1, 1, 10, 100, 'x', "
        f"{{f: 1, g: 'a'}}, {{f: 2, g: 'b'}}, {{1: {{2: 3}}}}, [[1, 2]], {{5}}) USING TIMESTAMP 1000")
    session.execute(f"INSERT INTO {ks}.sx (k, c, a) VALUES (1, 2, 20) USING TIMESTAMP 2000")
    session.execute(f"UPDATE {ks}.sx USING TIMESTAMP 3000 SET u.g = 'z' WHERE k = 1 AND c = 1")
    session.execute(
        f"UPDATE {ks}.sx USING TIMESTAMP 4000 SET m[5] = {{6: 7}}, fu = {{f: 9}} WHERE k = 1 AND c = 2")
    session.execute(
        f"UPDATE {ks}.sx USING TIMESTAMP 5000 AND TTL 7000 SET m[8] = {{9: 10}} WHERE k = 1 AND c = 2")
    return f"{ks}.sx"


def meta(rs):
    return list(zip(rs.column_names, [ty.cql_parameterized_type() for ty in rs.column_types]))


def refused(session, query, message):
    err = expect_error(InvalidRequest, session.execute, query)
    assert server_message(err) == message


# --- tuples of selectors ---------------------------------------------------------------


def test_tuple_of_columns(session, t):
    rs = session.execute(f"SELECT (a, b) FROM {t} WHERE k = 1")
    assert meta(rs) == [("(a, b)", "frozen<tuple<int, bigint>>")]
    # A null element is a null inside the tuple, never a null tuple.
    assert [tuple(r) for r in rs] == [((10, 100),), ((20, None),)]
    rs = session.execute(f"SELECT (k, (a, b)), (a, b, v) AS tp FROM {t} WHERE k = 1 AND c = 1")
    assert meta(rs) == [("(k, (a, b))", "frozen<tuple<int, frozen<tuple<int, bigint>>>>"),
                        ("tp", "frozen<tuple<int, bigint, varchar>>")]
    assert tuple(rs.one()) == ((1, (10, 100)), (10, 100, "x"))


def test_tuple_with_functions_and_typed_constants(session, t):
    rs = session.execute(
        f"SELECT (a, writetime(a), ttl(a), (int) 1), (u, fu) FROM {t} WHERE k = 1 AND c = 1")
    assert meta(rs) == [("(a, writetime(a), ttl(a), (int)1)", "frozen<tuple<int, bigint, int, int>>"),
                        ("(u, fu)", "frozen<tuple<frozen<ut>, frozen<ut>>>")]
    row = rs.one()
    assert row[0] == (10, 1000, None, 1)
    assert (row[1][0].f, row[1][0].g, row[1][1].f, row[1][1].g) == (1, "z", 2, "b")
    rs = session.execute(f"SELECT tojson((a, b)) FROM {t} WHERE k = 1")
    assert meta(rs) == [("system.tojson((a, b))", "varchar")]
    assert [r[0] for r in rs] == ["[10, 100]", "[20, null]"]


def test_tuple_aggregates_and_group_by(session, t):
    rs = session.execute(f"SELECT max((a, b)), min((a, b)) FROM {t} WHERE k = 1")
    assert meta(rs) == [("system.max((a, b))", "frozen<tuple<int, bigint>>"),
                        ("system.min((a, b))", "frozen<tuple<int, bigint>>")]
    assert tuple(rs.one()) == ((20, None), (10, 100))
    rs = session.execute(f"SELECT (a, max(b)) FROM {t} WHERE k = 1")
    assert meta(rs) == [("(a, system.max(b))", "frozen<tuple<int, bigint>>")]
    assert tuple(rs.one()) == ((10, 100),)
    assert tuples(session, f"SELECT (a, b), count(*) FROM {t} WHERE k = 1 GROUP BY k") == [((10, 100), 2)]


def test_select_json_of_tuples_and_hints(session, t):
    rs = session.execute(f"SELECT JSON (a, b), (int) a FROM {t} WHERE k = 1")
    assert [r[0] for r in rs] == ['{"(a, b)": [10, 100], "(int)a": 10}',
                                  '{"(a, b)": [20, null], "(int)a": 20}']
    rs = session.execute(f"SELECT JSON (a, b) AS x FROM {t} WHERE k = 1 AND c = 1")
    assert rs.one()[0] == '{"x": [10, 100]}'


def test_tuple_prepared_with_markers(session, t):
    p = session.prepare(f"SELECT (a, (int) ?) FROM {t} WHERE k = 1 AND c = 1")
    assert tuples(session, p, (7,)) == [((10, 7),)]
    p = session.prepare(f"SELECT (tuple<int, int>) (a, ?) FROM {t} WHERE k = 1 AND c = 1")
    assert p.result_metadata[0][2] == "(tuple<int, int>)(a, ?)"
    assert tuples(session, p, (8,)) == [((10, 8),)]


def test_tuple_refusals(session, t):
    infer = "Cannot infer type for term {} in selection clause (try using a cast to force a type)"
    refused(session, f"SELECT (a, 1) FROM {t}", infer.format("(a, 1)"))
    refused(session, f"SELECT ((a, b)) FROM {t}", infer.format("((a, b))"))
    refused(session, f"SELECT JSON (a) FROM {t}", infer.format("(a)"))
    refused(session, f"SELECT (a, b).f FROM {t}",
            "Invalid field selection: (a, b) of type frozen<tuple<int, bigint>> is not a user type")
    refused(session, f"SELECT (a, b)[0] FROM {t}",
            "Invalid element selection: (a, b) is of type frozen<tuple<int, bigint>> is not a collection")
    refused(session, f"SELECT count((a, b)) FROM {t}",
            "Type error: (a, b) cannot be passed as argument 0 of function system.count of type blob")


# --- type hints on selectors -----------------------------------------------------------


def test_type_hints_on_selectors(session, t):
    rs = session.execute(
        f"SELECT (int) a, (varint) a, (blob) a, (bigint) writetime(a), (int) a + 1, (int) ((a)) "
        f"FROM {t} WHERE k = 1 AND c = 1")
    assert meta(rs) == [("(int)a", "int"), ("(varint)a", "varint"), ("(blob)a", "blob"),
                        ("(bigint)writetime(a)", "bigint"), ("(int)a + 1", "int"),
                        ("(int)((a))", "int")]
    assert tuple(rs.one()) == (10, 10, b"\x00\x00\x00\x0a", 1000, 11, 10)
    rs = session.execute(f"SELECT max((varint) a), (timestamp) b FROM {t} WHERE k = 1")
    assert meta(rs) == [("system.max((varint)a)", "varint"), ("(timestamp)b", "timestamp")]
    assert rs.one()[0] == 20


def test_type_hint_on_tuples(session, t):
    rs = session.execute(f"SELECT (tuple<varint, blob>) (a, b) FROM {t} WHERE k = 1 AND c = 1")
    assert meta(rs) == [("(tuple<varint, blob>)(a, b)", "frozen<tuple<varint, blob>>")]
    assert tuple(rs.one()) == ((10, b"\x00\x00\x00\x00\x00\x00\x00\x64"),)
    # A hint longer than the tuple: the missing elements are nulls.
    rs = session.execute(f"SELECT (tuple<int, int, int>) (a, 1) FROM {t} WHERE k = 1 AND c = 1")
    assert tuple(rs.one()) == ((10, 1, None),)


def test_type_hint_refusals(session, t):
    refused(session, f"SELECT (bigint) a FROM {t}", "Cannot assign value (bigint)a to (bigint)a of type bigint")
    refused(session, f"SELECT (text) a FROM {t}", "Cannot assign value (text)a to (text)a of type text")
    refused(session, f"SELECT (bigint) max(a) FROM {t}",
            "Cannot assign value (bigint)system.max(a) to (bigint)system.max(a) of type bigint")
    refused(session, f"SELECT (tuple<bigint, bigint>) (a, b) FROM {t}",
            "Cannot assign value (tuple<bigint, bigint>)(a, b) to (tuple<bigint, bigint>)(a, b) "
            "of type frozen<tuple<bigint, bigint>>")
    # A non-frozen collection is many cells: only blob takes it.
    refused(session, f"SELECT (list<int>) s FROM {t}",
            "Cannot assign value (list<int>)s to (list<int>)s of type frozen<list<int>>")
    # The hint binds tighter than a field selection.
    refused(session, f"SELECT (varint) a.f FROM {t}",
            "Invalid field selection: (varint)a of type varint is not a user type")


def test_type_hints_naming_user_types(session, t, ks):
    rs = session.execute(f"SELECT (frozen<ut>) fu, (ut) fu, ((ut) fu).f FROM {t} WHERE k = 1 AND c = 1")
    assert meta(rs) == [(f"(frozen<{ks}.ut>)fu", "frozen<ut>"), (f"({ks}.ut)fu", "frozen<ut>"),
                        (f"(({ks}.ut)fu).f", "int")]
    row = rs.one()
    assert (row[0].f, row[1].g, row[2]) == (2, "b", 2)
    # A non-frozen user type is many cells.
    refused(session, f"SELECT (ut) u FROM {t}",
            f"Cannot assign value ({ks}.ut)u to ({ks}.ut)u of type frozen<ut>")
    refused(session, f"SELECT (list<ut>) l FROM {t}",
            "Non-frozen UDTs are not allowed inside collections: list<ut>")
    refused(session, f"SELECT (other.ut) fu FROM {t}",
            f"Statement on keyspace {ks} cannot refer to a user type in keyspace other; "
            f"user types can only be used in the keyspace they are defined in")


# --- CAST in terms ---------------------------------------------------------------------


def test_cast_in_terms(session, t, ks):
    assert tuples(session, f"SELECT c FROM {t} WHERE k = CAST(1.5 AS int) AND c = CAST(1.0 AS int)") == [(1,)]
    assert tuples(session, f"SELECT c FROM {t} WHERE k IN (CAST((double) 1 AS int), 2) AND c = 1") == [(1,)]
    assert tuples(session, f"SELECT c FROM {t} WHERE k = CAST(CAST(1.5 AS bigint) AS int) AND c = 1") == [(1,)]
    session.execute(f"UPDATE {t} SET v = CAST(3.75 AS text) WHERE k = 1 AND c = 9")
    session.execute(f"INSERT INTO {t} (k, c, b) VALUES (1, 8, CAST(2.5 AS bigint))")
    assert tuples(session, f"SELECT c, b, v FROM {t} WHERE k = 1 AND c IN (8, 9)") == [(8, 2, None), (9, None, "3.75")]
    p = session.prepare(f"SELECT c FROM {t} WHERE k = CAST((bigint) ? AS int) AND c = 1")
    assert tuples(session, p, (1,)) == [(1,)]
    # The cast functions are functions of their own too, named by the cast in selections.
    rs = session.execute(f"SELECT cast_as_int(b), cast_as_int(1.5) FROM {t} WHERE k = 1 AND c = 1")
    assert meta(rs) == [("cast(b as int)", "int"), ("cast(1.5 as int)", "int")]
    assert tuple(rs.one()) == (100, 1)
    session.execute(f"DELETE FROM {t} WHERE k = 1 AND c IN (8, 9)")


def test_cast_in_terms_refusals(session, t):
    err = expect_error(InvalidRequest, session.execute, f"SELECT c FROM {t} WHERE k = CAST(1 AS int)")
    assert server_message(err).startswith(
        "Ambiguous call to function system.cast_as_int (can be matched by following signatures: ")
    err = expect_error(InvalidRequest, session.execute, f"SELECT c FROM {t} WHERE k = CAST('1' AS int)")
    assert server_message(err).startswith(
        "Invalid call to function system.cast_as_int, none of its type signatures match")
    refused(session, f"SELECT c FROM {t} WHERE k = CAST(1.5 AS blob)",
            "Unknown function system.cast_as_blob called")
    err = expect_error(SyntaxException, session.execute, f"SELECT c FROM {t} WHERE k = CAST(1.5 AS tuple<int>)")
    assert "no viable alternative at input 'tuple'" in str(err)
    err = expect_error(SyntaxException, session.execute, f"SELECT c FROM {t} WHERE k = CAST(1.5 + 1 AS int)")
    assert "mismatched input '+' expecting K_AS" in str(err)


# --- WRITETIME / TTL of fields and nested elements -------------------------------------


def test_writetime_of_user_type_fields(session, t):
    rs = session.execute(
        f"SELECT writetime(u.f), writetime(u.g), ttl(u.f), maxwritetime(u.g), "
        f"writetime(fu.f), writetime(fu.g) FROM {t} WHERE k = 1")
    assert meta(rs) == [("writetime(u.f)", "bigint"), ("writetime(u.g)", "bigint"), ("ttl(u.f)", "int"),
                        ("maxwritetime(u.g)", "bigint"), ("writetime(fu.f)", "bigint"),
                        ("writetime(fu.g)", "bigint")]
    # A non-frozen field's own cell; a frozen value's one cell while the field is set.
    assert [tuple(r) for r in rs] == [(1000, 3000, None, 3000, 1000, 1000),
                                      (None, None, None, None, 4000, None)]
    rs = session.execute(f"SELECT JSON writetime(u.f) AS w FROM {t} WHERE k = 1 AND c = 1")
    assert rs.one()[0] == '{"w": 1000}'


def test_writetime_of_nested_elements(session, t):
    rs = session.execute(
        f"SELECT writetime(m[5]), writetime(m[5][6]), writetime(m[5][7]), writetime(m[8][9]), "
        f"ttl(m[8][9]), maxwritetime(m[5][6]), writetime(m[5][6..]) FROM {t} WHERE k = 1 AND c = 2")
    assert meta(rs) == [("writetime(m[5])", "bigint"), ("writetime(m[5][6])", "bigint"),
                        ("writetime(m[5][7])", "bigint"), ("writetime(m[8][9])", "bigint"),
                        ("ttl(m[8][9])", "int"), ("maxwritetime(m[5][6])", "bigint"),
                        ("writetime(m[5][6..])", "bigint")]
    row = rs.one()
    assert (row[0], row[1], row[2], row[3], row[5], row[6]) == (4000, 4000, None, 5000, 4000, 4000)
    assert 0 < row[4] <= 7000
    p = session.prepare(f"SELECT writetime(m[?][?]) FROM {t} WHERE k = 1 AND c = 2")
    assert [m[2] for m in p.column_metadata] == ["key(m)", "key(m[?])"]
    assert tuples(session, p, (5, 6)) == [(4000,)]
    assert tuples(session, p, (5, 1)) == [(None,)]


def test_writetime_of_elements_of_slices(session, t):
    # An element of a slice is that element's cell, while it is in the slice; a slice of a
    # slice, the cells in both.
    rs = session.execute(
        f"SELECT writetime(m[1..9][5]), writetime(m[1..9][5][6]), writetime(m[1..3][5]), "
        f"maxwritetime(m[1..9][8]), writetime(m[1..9][5..6]) FROM {t} WHERE k = 1 AND c = 2")
    assert meta(rs) == [("writetime(m[1..9][5])", "bigint"), ("writetime(m[1..9][5][6])", "bigint"),
                        ("writetime(m[1..3][5])", "bigint"), ("maxwritetime(m[1..9][8])", "bigint"),
                        ("writetime(m[1..9][5..6])", "list<bigint>")]
    assert tuple(rs.one()) == (4000, 4000, None, 5000, [4000])
    refused(session, f"SELECT writetime(m[1..9][5..6][5]) FROM {t}",
            "WRITETIME() of a selection inside a slice of a slice (m[1..9][5..6]) is not supported")


def test_writetime_path_refusals(session, t):
    refused(session, f"SELECT writetime(u.h) FROM {t}", "u of type ut has no field h")
    refused(session, f"SELECT writetime(a.f) FROM {t}", "Invalid field selection: a of type int is not a user type")
    refused(session, f"SELECT writetime(m[1].f) FROM {t}",
            "Invalid field selection: m[1] of type frozen<map<int, int>> is not a user type")
    refused(session, f"SELECT writetime(s[5][1]) FROM {t}",
            "Invalid element selection: s[5] is of type int is not a collection")
    refused(session, f"SELECT writetime(l[0][1]) FROM {t}",
            "Element selection is only allowed on sets and maps, but l is a list")
    refused(session, f"SELECT writetime(k.f) FROM {t}", "Cannot use selection function writetime on PRIMARY KEY part k")
    refused(session, f"SELECT writetime(u.f) + 1 FROM {t}",
            "the '+' operation is not supported between writetime(u.f) and 1")


def test_writetime_and_ttl_beside_aggregates(session, t):
    # Cassandra 5.0 shows the group's first row's, as for any selector outside an aggregate.
    rs = session.execute(f"SELECT writetime(a), writetime(u.f), count(*) FROM {t} WHERE k = 1")
    assert meta(rs) == [("writetime(a)", "bigint"), ("writetime(u.f)", "bigint"), ("count", "bigint")]
    assert tuple(rs.one()) == (1000, 1000, 2)
    rs = session.execute(f"SELECT max(writetime(a)), min(ttl(a)) FROM {t} WHERE k = 1")
    assert tuple(rs.one()) == (2000, None)
