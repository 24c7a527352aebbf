"""Arithmetic in terms, INSERT JSON, fromJson and toJson through the Python driver, each result
and error checked against Apache Cassandra 5.0.9 running the same statements."""

import datetime
import decimal

import pytest
from cassandra import FunctionFailure, InvalidRequest

from helpers import expect_error, server_code, server_message, tuples


@pytest.fixture
def t(session, ks, tname):
    session.execute(
        f"CREATE TABLE {ks}.{tname} (k int PRIMARY KEY, i int, b bigint, t tinyint, f float, "
        f"d double, dec decimal, v varint, ts timestamp, dt date, tx text, a ascii)")
    return f"{ks}.{tname}"


def test_arithmetic_in_terms(session, t):
    session.execute(
        f"UPDATE {t} SET i = (1 + 2) * 3, b = 3000000000 * 4, t = 100 + 100, f = 1 / 3, "
        f"d = 1 / 3, dec = 1 / 3, v = 10 - 3 WHERE k = 1")
    assert tuples(session, f"SELECT i, b, t, f, d, dec, v FROM {t} WHERE k = 1") == [
        (9, 12000000000, -56, pytest.approx(0.3333333432674408), 0.3333333333333333,
         decimal.Decimal("0.33333333333333333333333333333333"), 7)]
    session.execute(
        f"UPDATE {t} SET i = 2147483647 + 1, ts = '2024-01-01' + 1mo1d1h, "
        f"dt = '2024-01-31' - 1mo, tx = 'a' + 'b', dec = 1.5 * 2 WHERE k = 2")
    row = session.execute(f"SELECT i, ts, dt, tx, dec FROM {t} WHERE k = 2").one()
    assert row.i == -2147483648
    assert row.ts == datetime.datetime(2024, 2, 2, 1, 0)
    assert str(row.dt) == "2023-12-31"
    assert (row.tx, row.dec) == ("ab", decimal.Decimal("3.0"))
    # In WHERE, IN and IF too; `- 1` (apart) negates, `-1` is a literal.
    session.execute(f"INSERT INTO {t} (k, i) VALUES (3, 1 + 2 * 3)")
    assert session.execute(f"UPDATE {t} SET i = - -1 WHERE k = 3 IF i = 3 + 4").one()[0] is True
    assert tuples(session, f"SELECT k, i FROM {t} WHERE k IN (1 + 2, 2 * 2)") == [(3, 1)]


def test_arithmetic_with_bound_values(session, t):
    ps = session.prepare(f"UPDATE {t} SET i = (int) ? * 2, b = (bigint) ? - 1 WHERE k = ?")
    session.execute(ps, (21, 5, 4))
    assert tuples(session, f"SELECT i, b FROM {t} WHERE k = 4") == [(42, 4)]
    session.execute(ps, (None, 5, 4))
    assert tuples(session, f"SELECT i, b FROM {t} WHERE k = 4") == [(None, 4)]


def test_arithmetic_errors(session, t):
    e = expect_error(FunctionFailure, session.execute, f"UPDATE {t} SET i = 1 / 0 WHERE k = 1")
    assert server_code(e) == 0x1400
    assert e.keyspace == "system" and e.function == "_divide" and e.arg_types == ["int", "int"]
    assert server_message(e) == "the operation 'int / int' failed: / by zero"
    e = expect_error(FunctionFailure, session.execute,
                     f"UPDATE {t} SET dt = '2020-01-01' + 1h WHERE k = 1")
    assert server_message(e) == (
        "the operation 'date + duration' failed: The duration must have a day precision. Was: 1h")
    for stmt, message in [
        (f"UPDATE {t} SET i = 1 + 1.5 WHERE k = 1",
         "the '+' operation is not supported between 1 and 1.5"),
        (f"UPDATE {t} SET ts = 5 + 5 WHERE k = 1",
         "Ambiguous '+' operation with args 5 and 5: use type hint to disambiguate, "
         "example '(int) ?'"),
        (f"UPDATE {t} SET i = 3000000000 - 1 WHERE k = 1", "Unable to make int from '3000000000'"),
    ]:
        e = expect_error(InvalidRequest, session.execute, stmt)
        assert server_message(e) == message


def test_insert_json(session, t):
    session.execute(
        f"""INSERT INTO {t} JSON '{{"k": 1, "i": 5, "b": 3000000000, "t": "1", "f": 0.1, """
        f""""dec": "1.50", "v": 123456789012345678901234567890, "ts": "2024-01-01 10:00:00+0000", """
        f""""dt": "2024-02-29", "tx": "x", "A": "y"}}'""")
    assert tuples(session, f"SELECT k, i, b, t, dec, v, ts, tx, a FROM {t} WHERE k = 1") == [
        (1, 5, 3000000000, 1, decimal.Decimal("1.50"), 123456789012345678901234567890,
         datetime.datetime(2024, 1, 1, 10, 0), "x", "y")]
    # Columns the document leaves out are set to null, or left alone with DEFAULT UNSET.
    session.execute(f"""INSERT INTO {t} JSON '{{"k": 1, "i": 6}}' DEFAULT UNSET""")
    assert tuples(session, f"SELECT i, b FROM {t} WHERE k = 1") == [(6, 3000000000)]
    ps = session.prepare(f"INSERT INTO {t} JSON ?")
    session.execute(ps, ('{"k": 1, "i": 7}',))
    assert tuples(session, f"SELECT i, b FROM {t} WHERE k = 1") == [(7, None)]
    for doc, message in [
        ('{"k": 2, "i": 1.5}', "Error decoding JSON value for i: Expected an int value, but got a "
                               "Double: 1.5"),
        ('{"k": 2, "zz": 5, "aa": 1}', "JSON values map contains unrecognized column: zz"),
        ('{"i": 2}', "Invalid null value in condition for column k"),
        ('null', "Got null for INSERT JSON values"),
    ]:
        e = expect_error(InvalidRequest, session.execute, ps, (doc,))
        assert server_message(e) == message


def test_from_json_and_to_json(session, t):
    session.execute(
        f"""UPDATE {t} SET i = fromJson('"7"'), tx = fromJson('"x"'), b = fromJson('null') """
        f"WHERE k = 1")
    assert tuples(session, f"SELECT i, tx, b FROM {t} WHERE k = 1") == [(7, "x", None)]
    e = expect_error(FunctionFailure, session.execute,
                     f"""UPDATE {t} SET i = fromJson('"abc"') WHERE k = 1""")
    assert server_message(e) == (
        "org.apache.cassandra.serializers.MarshalException: Unable to make int from 'abc'")
    session.execute(f"UPDATE {t} SET ts = '2024-01-02 03:04:05.678+0000', d = NaN WHERE k = 1")
    assert tuples(session, f"SELECT toJson(i), toJson(tx), toJson(ts), toJson(d) FROM {t} "
                           f"WHERE k = 1") == [('7', '"x"', '"2024-01-02 03:04:05.678Z"', 'null')]


@pytest.fixture
def c(session, ks, tname):
    session.execute(
        f'CREATE TABLE {ks}.{tname} (k int, c int, v int, "Up" text, s set<int>, '
        f'm map<int, text>, fm frozen<map<int, text>>, l list<int>, ts timestamp, '
        f'PRIMARY KEY (k, c))')
    t = f"{ks}.{tname}"
    session.execute(
        f"""INSERT INTO {t} (k, c, v, "Up", s, m, fm, l, ts) VALUES (1, 1, 10, 'x"y', {{1, 2, 3}}, """
        f"""{{1: 'a', 2: 'b', 3: 'c'}}, {{1: 'a', 5: 'e'}}, [1, 2], '2024-01-02 03:04:05.678Z') """
        f"USING TIMESTAMP 1000")
    session.execute(f"UPDATE {t} USING TIMESTAMP 2000 AND TTL 1000 SET m[2] = 'bb', s = s + {{7}} "
                    f"WHERE k = 1 AND c = 1")
    session.execute(f"INSERT INTO {t} (k, c) VALUES (1, 2)")
    return t


def test_select_json(session, c):
    rs = session.execute(f"SELECT JSON * FROM {c}")
    assert rs.column_names == ["[json]"]
    assert [r[0] for r in rs] == [
        '{"k": 1, "c": 1, "\\"Up\\"": "x\\"y", "fm": {"1": "a", "5": "e"}, "l": [1, 2], '
        '"m": {"1": "a", "2": "bb", "3": "c"}, "s": [1, 2, 3, 7], '
        '"ts": "2024-01-02 03:04:05.678Z", "v": 10}',
        '{"k": 1, "c": 2, "\\"Up\\"": null, "fm": null, "l": null, "m": null, "s": null, '
        '"ts": null, "v": null}']
    # Keys are the result column names: aliases, functions, aggregates.
    assert tuples(session, f'SELECT JSON k, v AS "Vv", writetime(v), m[2] FROM {c} '
                           f'WHERE k = 1 AND c = 1') == [
        ('{"k": 1, "\\"Vv\\"": 10, "writetime(v)": 1000, "m[2]": "bb"}',)]
    assert tuples(session, f"SELECT JSON count(*) FROM {c}") == [('{"count": 2}',)]
    ps = session.prepare(f"SELECT JSON k, v FROM {c} WHERE k = ?")
    assert [col[2] for col in ps.result_metadata] == ["[json]"]
    assert tuples(session, ps, (1,))[0] == ('{"k": 1, "v": 10}',)
    # Paging carries on over JSON rows.
    from cassandra.query import SimpleStatement
    assert len(list(session.execute(SimpleStatement(f"SELECT JSON * FROM {c}", fetch_size=1)))) == 2


def test_element_and_slice_selection(session, c):
    rs = session.execute(f"SELECT m[2], m[9], s[2], m[1..2], m[..1], s[3..], fm[5], fm[2..9] "
                         f"FROM {c} WHERE k = 1 AND c = 1")
    assert rs.column_names == ["m[2]", "m[9]", "s[2]", "m[1..2]", "m[..1]", "s[3..]", "fm[5]",
                               "fm[2..9]"]
    row = rs.one()
    assert (row[0], row[1], row[2], dict(row[3]), dict(row[4]), set(row[5]), row[6],
            dict(row[7])) == ("bb", None, 2, {1: "a", 2: "bb"}, {1: "a"}, {3, 7}, "e", {5: "e"})
    # Write times follow the cells read: the element's, one per element of a slice, the frozen
    # collection's one cell when the element is in it.
    assert tuples(session, f"SELECT writetime(m[2]), writetime(m[1]), writetime(m[9]), "
                           f"writetime(s[1..7]), maxwritetime(s[1..7]), writetime(fm[5]), "
                           f"writetime(fm[6]), writetime(fm[6..9]), ttl(s[1]) "
                           f"FROM {c} WHERE k = 1 AND c = 1") == [
        (2000, 1000, None, [1000, 1000, 1000, 2000], 2000, 1000, None, None, None)]
    assert 0 < session.execute(f"SELECT ttl(s[7]) FROM {c} WHERE k = 1 AND c = 1").one()[0] <= 1000
    ps = session.prepare(f"SELECT m[?] FROM {c} WHERE k = 1 AND c = 1")
    assert [(col[2], col[3].typename) for col in ps.column_metadata] == [("key(m)", "int")]
    assert tuples(session, ps, (3,)) == [("c",)]
    for stmt, message in [
        (f"SELECT l[0] FROM {c}", "Element selection is only allowed on sets and maps, but l is "
                                  "a list"),
        (f"SELECT v[0] FROM {c}", "Invalid element selection: v is of type int is not a "
                                  "collection"),
        (f"SELECT m['a'] FROM {c}", 'Invalid STRING constant (a) for "key(m)" of type int'),
        (f"SELECT writetime(m[1]) + 1 FROM {c}",
         "the '+' operation is not supported between writetime(m[1]) and 1"),
    ]:
        e = expect_error(InvalidRequest, session.execute, stmt)
        assert server_message(e) == message


def test_arithmetic_in_selection(session, c):
    rs = session.execute(f"SELECT v + 1, v - c, v * 2.5, -v, v % 3, ts + 1d, \"Up\" + 'z', "
                         f"(v + 1) * 2, sum(v) + 1 FROM {c} WHERE k = 1 AND c = 1")
    assert rs.column_names == ["v + 1", "v - c", "v * 2.5", "-v", "v % 3", "ts + 1d",
                               "Up + 'z'", "(v + 1) * 2", "system.sum(v) + 1"]
    assert list(rs.one()) == [11, 9, 25.0, -10, 1, datetime.datetime(2024, 1, 3, 3, 4, 5, 678000),
                              'x"yz', 22, 11]
    # A null operand gives null.
    assert tuples(session, f"SELECT v + 1 FROM {c} WHERE k = 1 AND c = 2") == [(None,)]
    e = expect_error(FunctionFailure, session.execute, f"SELECT v / 0 FROM {c}")
    assert server_message(e) == "the operation 'int / int' failed: / by zero"
    for stmt, message in [
        (f"SELECT (v) FROM {c}", "Cannot infer type for term (v) in selection clause (try using "
                                 "a cast to force a type)"),
        (f"SELECT ts + 1 FROM {c}", "Ambiguous '+' operation with args ts and 1: use type hint to "
                                    "disambiguate, example '(int) ?'"),
    ]:
        e = expect_error(InvalidRequest, session.execute, stmt)
        assert server_message(e) == message


def test_insert_json_using_bound_timestamp(session, t):
    # USING's markers are the statement's own, not the document's values (found by cql-diff).
    ps = session.prepare(f"""INSERT INTO {t} JSON '{{"k": 9, "i": 1}}' USING TTL 0 AND TIMESTAMP ?""")
    session.execute(ps, (1234,))
    assert tuples(session, f"SELECT i, writetime(i) FROM {t} WHERE k = 9") == [(1, 1234)]


def test_blob_literals_need_an_even_number_of_hex_digits(session, ks, tname):
    # `0x1` is no bytes: Cassandra refuses it (Hex.hexToBytes), it is not padded to 0x01.
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (k blob PRIMARY KEY, v int)")
    for stmt, digits in [(f"INSERT INTO {t} (k, v) VALUES (0x1, 1)", "1"),
                         (f"SELECT v FROM {t} WHERE k = 0x123", "123"),
                         (f"UPDATE {t} SET v = 1 WHERE k = 0x0", "0")]:
        e = expect_error(InvalidRequest, session.execute, stmt)
        assert server_message(e) == f"cannot parse '{digits}' as hex bytes"
    session.execute(f"INSERT INTO {t} (k, v) VALUES (0xAbCd, 2)")
    assert [tuple(r) for r in session.execute(f"SELECT k, v FROM {t}")] == [(b"\xab\xcd", 2)]


def test_selected_function_of_literals_takes_the_functions_types(session, ks, tname):
    # A literal of no type of its own (`0x…`) is typed by the function it is passed to, as
    # Cassandra's resolver does; answers and refusals as Cassandra 5.0.9's (F75).
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (p int PRIMARY KEY, v int)")
    session.execute(f"INSERT INTO {t} (p, v) VALUES (1, 1)")
    rs = session.execute(f"SELECT blobAsInt(0x00000001), blobAsText(0x6869) AS h, p FROM {t}")
    assert rs.column_names == ["system.blobasint(0x00000001)", "h", "p"]
    assert [tuple(r) for r in rs] == [(1, "hi", 1)]
    assert [tuple(r) for r in session.execute(f"SELECT toJson(0x01) FROM {t}")] == [("1",)]
    assert list(session.execute(f"SELECT blobAsInt(0x00000001) FROM {t} WHERE p = 2")) == []
    for stmt, message in [
        (f"SELECT blobAsInt(0x0000001) FROM {t} WHERE p = 2", "cannot parse '0000001' as hex bytes"),
        (f"SELECT intAsBlob(0x1) FROM {t}",
         "Type error: 0x1 cannot be passed as argument 0 of function system.intasblob of type int"),
        (f"SELECT nosuch(0x01) FROM {t}", "Unknown function 'nosuch'"),
    ]:
        e = expect_error(InvalidRequest, session.execute, stmt)
        assert server_message(e) == message
