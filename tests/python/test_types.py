"""Native types: round trip through prepared statements and as literals, validation, and
clustering order by type."""

import datetime
import math
import uuid
from decimal import Decimal

import pytest
from cassandra import InvalidRequest
from cassandra.util import Date, Duration, Time

from helpers import expect_error, tuples

COLUMNS = [
    ("c_int", "int"), ("c_bigint", "bigint"), ("c_smallint", "smallint"), ("c_tinyint", "tinyint"),
    ("c_varint", "varint"), ("c_decimal", "decimal"), ("c_float", "float"), ("c_double", "double"),
    ("c_boolean", "boolean"), ("c_text", "text"), ("c_varchar", "varchar"), ("c_ascii", "ascii"),
    ("c_blob", "blob"), ("c_uuid", "uuid"), ("c_timeuuid", "timeuuid"), ("c_timestamp", "timestamp"),
    ("c_date", "date"), ("c_time", "time"), ("c_inet", "inet"), ("c_inet6", "inet"),
    ("c_duration", "duration"),
]
NAMES = [n for n, _ in COLUMNS]

U = uuid.UUID("123e4567-e89b-42d3-a456-426614174000")
TU = uuid.UUID("d2177dd0-eaa2-11de-a572-001b779c76e3")

VALUES = {
    "c_int": -2147483648, "c_bigint": 9223372036854775807, "c_smallint": -32768, "c_tinyint": 127,
    "c_varint": -123456789012345678901234567890, "c_decimal": Decimal("-1234567890.0987654321"),
    "c_float": 1.5, "c_double": 3.141592653589793, "c_boolean": True, "c_text": "héllo ☃ wörld",
    "c_varchar": "", "c_ascii": "plain ascii", "c_blob": b"\x00\x01\xfe\xff", "c_uuid": U, "c_timeuuid": TU,
    "c_timestamp": datetime.datetime(2024, 2, 29, 13, 14, 15, 678000), "c_date": Date(datetime.date(1969, 7, 20)),
    "c_time": Time(datetime.time(23, 59, 58, 999999)), "c_inet": "192.168.10.1", "c_inet6": "2001:db8::1",
    "c_duration": Duration(14, 3, 4005006007),
}

LITERALS = {
    "c_int": "-2147483648", "c_bigint": "9223372036854775807", "c_smallint": "-32768", "c_tinyint": "127",
    "c_varint": "-123456789012345678901234567890", "c_decimal": "-1234567890.0987654321",
    "c_float": "1.5", "c_double": "3.141592653589793", "c_boolean": "true", "c_text": "'héllo ☃ wörld'",
    "c_varchar": "''", "c_ascii": "'plain ascii'", "c_blob": "0x0001feff", "c_uuid": str(U), "c_timeuuid": str(TU),
    "c_timestamp": "'2024-02-29 13:14:15.678+0000'", "c_date": "'1969-07-20'", "c_time": "'23:59:58.999999'",
    "c_inet": "'192.168.10.1'", "c_inet6": "'2001:db8::1'", "c_duration": "1y2mo3d4s5ms6us7ns",
}


def normalize(name, v):
    if isinstance(v, Date) or isinstance(v, Time):
        return str(v)
    return v


@pytest.fixture(scope="module")
def t(session, ks):
    cols = ", ".join(f"{n} {ty}" for n, ty in COLUMNS)
    session.execute(f"CREATE TABLE {ks}.types (k int PRIMARY KEY, {cols})")
    return f"{ks}.types"


def read(session, t, k):
    r = session.execute(f"SELECT {', '.join(NAMES)} FROM {t} WHERE k = {k}").one()
    return {n: normalize(n, getattr(r, n)) for n in NAMES}


def expected():
    return {n: normalize(n, v) for n, v in VALUES.items()}


def test_types_metadata(cluster, ks, t):
    tm = cluster.metadata.keyspaces[ks].tables["types"]
    got = {n: tm.columns[n].cql_type for n in NAMES}
    assert got == {n: ("text" if ty == "varchar" else ty) for n, ty in COLUMNS}


def test_round_trip_prepared(session, t):
    ins = session.prepare(f"INSERT INTO {t} (k, {', '.join(NAMES)}) VALUES (?{', ?' * len(NAMES)})")
    session.execute(ins, [1] + [VALUES[n] for n in NAMES])
    assert read(session, t, 1) == expected()
    sel = session.prepare(f"SELECT {', '.join(NAMES)} FROM {t} WHERE k = ?")
    r = session.execute(sel, (1,)).one()
    assert {n: normalize(n, getattr(r, n)) for n in NAMES} == expected()


def test_round_trip_literals(session, t):
    session.execute(f"INSERT INTO {t} (k, {', '.join(NAMES)}) VALUES (2, {', '.join(LITERALS[n] for n in NAMES)})")
    got = read(session, t, 2)
    exp = expected()
    exp["c_duration"] = Duration(14, 3, 4005006007)
    assert got == exp


@pytest.mark.parametrize("name,literal,value", [
    ("c_timestamp", "'2024-02-29T13:14:15Z'", datetime.datetime(2024, 2, 29, 13, 14, 15)),
    ("c_timestamp", "1709212455678", datetime.datetime(2024, 2, 29, 13, 14, 15, 678000)),
    ("c_timestamp", "'1900-01-01 00:00:00+0000'", datetime.datetime(1900, 1, 1)),
    ("c_date", "'2000-01-01'", "2000-01-01"),
    ("c_time", "'00:00:00'", "00:00:00.000000000"),
    ("c_time", "'12:34:56.789'", "12:34:56.789000000"),
    ("c_duration", "P1Y2M3DT4H5M6S", Duration(14, 3, (4 * 3600 + 5 * 60 + 6) * 10**9)),
    ("c_duration", "P2W", Duration(0, 14, 0)),
    ("c_duration", "-1h", Duration(0, 0, -3600 * 10**9)),
    ("c_double", "-0.0", -0.0),
    ("c_double", "1e300", 1e300),
    ("c_double", "Infinity", math.inf),
    ("c_double", "-Infinity", -math.inf),
    ("c_float", "3", 3.0),
    ("c_decimal", "1e-5", Decimal("0.00001")),
    ("c_varint", "0", 0),
    ("c_bigint", "-9223372036854775808", -9223372036854775808),
    ("c_text", "'it''s'", "it's"),
    ("c_text", "$$dollar 'quoted'$$", "dollar 'quoted'"),
    ("c_blob", "0x", b""),
    ("c_uuid", "123E4567-E89B-42D3-A456-426614174000", U),
    ("c_inet", "'::ffff:1.2.3.4'", "1.2.3.4"),  # like Java's InetAddress: IPv4-mapped becomes IPv4
    ("c_boolean", "FALSE", False),
])
def test_literal_forms(session, t, name, literal, value):
    session.execute(f"INSERT INTO {t} (k, {name}) VALUES (3, {literal})")
    got = session.execute(f"SELECT {name} FROM {t} WHERE k = 3").one()[0]
    got = normalize(name, got)
    if isinstance(value, float) and value == 0:
        assert got == 0 and math.copysign(1, got) == math.copysign(1, value)
    elif name == "c_decimal":
        assert got == value
    else:
        assert got == value


def test_nan(session, t):
    session.execute(f"INSERT INTO {t} (k, c_double, c_float) VALUES (4, NaN, NaN)")
    r = session.execute(f"SELECT c_double, c_float FROM {t} WHERE k = 4").one()
    assert math.isnan(r[0]) and math.isnan(r[1])


def test_nulls(session, t):
    session.execute(f"INSERT INTO {t} (k) VALUES (5)")
    assert read(session, t, 5) == {n: None for n in NAMES}
    ins = session.prepare(f"INSERT INTO {t} (k, {', '.join(NAMES)}) VALUES (?{', ?' * len(NAMES)})")
    session.execute(ins, [6] + [None] * len(NAMES))
    assert read(session, t, 6) == {n: None for n in NAMES}


@pytest.mark.parametrize("name,literal", [
    ("c_int", "'text'"),
    ("c_int", "2147483648"),
    ("c_int", "1.5"),
    ("c_smallint", "32768"),
    ("c_tinyint", "128"),
    ("c_bigint", "9223372036854775808"),
    ("c_boolean", "1"),
    ("c_uuid", "'not-a-uuid'"),
    ("c_uuid", "0x01"),
    ("c_timeuuid", str(U)),
    ("c_ascii", "'héllo'"),
    ("c_inet", "'300.1.1.1'"),
    ("c_time", "'25:00:00'"),
    ("c_timestamp", "'yesterday'"),
    ("c_blob", "'abc'"),
    ("c_text", "42"),
])
def test_invalid_literals_rejected(session, t, name, literal):
    expect_error(InvalidRequest, session.execute, f"INSERT INTO {t} (k, {name}) VALUES (7, {literal})")


@pytest.mark.parametrize("ty,values", [
    ("int", [-2147483648, -5, -1, 0, 3, 2147483647]),
    ("bigint", [-2**63, -1, 0, 1, 2**63 - 1]),
    ("smallint", [-32768, -1, 0, 32767]),
    ("tinyint", [-128, -1, 0, 127]),
    ("varint", [-10**20, -256, -1, 0, 1, 255, 256, 10**20]),
    ("decimal", [Decimal("-100.5"), Decimal("-1"), Decimal("0.001"), Decimal("0.01"), Decimal("2"), Decimal("10")]),
    ("double", [-math.inf, -1e10, -1.5, 0.0, 2.25, 1e10, math.inf]),
    ("float", [-2.5, -1.0, 0.0, 0.5, 3.0]),
    ("text", ["", "A", "B", "a", "ab", "b", "é", "☃"]),
    ("ascii", ["", "A", "Z", "a", "z"]),
    ("blob", [b"", b"\x00", b"\x00\x00", b"\x01", b"\x7f", b"\x80", b"\xff"]),
    ("boolean", [False, True]),
    ("timestamp", [datetime.datetime(1900, 1, 1), datetime.datetime(1969, 12, 31, 23, 59, 59),
                   datetime.datetime(1970, 1, 1), datetime.datetime(2024, 1, 1)]),
    ("date", [Date(datetime.date(1, 1, 1)), Date(datetime.date(1969, 12, 31)), Date(datetime.date(1970, 1, 1)),
              Date(datetime.date(2100, 1, 1))]),
    ("time", [Time(0), Time(1), Time(86399999999999)]),
    ("inet", ["0.0.0.0", "::1", "1.2.3.4", "255.255.255.255"]),  # unsigned bytes, shorter first
    ("uuid", [uuid.UUID(int=0), uuid.UUID(int=1), uuid.UUID(int=0x7f), uuid.UUID(int=1 << 64),
              uuid.UUID("00000000-0000-4000-8000-000000000000")]),
    ("timeuuid", [uuid.UUID("00000001-0000-1000-8000-000000000000"),
                  uuid.UUID("00000000-0001-1000-8000-000000000000"),
                  uuid.UUID("00000000-0000-1001-8000-000000000000"),
                  uuid.UUID("d2177dd0-eaa2-11de-a572-001b779c76e3")]),
])
def test_clustering_order_by_type(session, ks, ty, values):
    """Rows come back in Cassandra's comparator order for each clustering type (ASC, then DESC)."""
    t = f"{ks}.order_{ty}"
    session.execute(f"CREATE TABLE {t} (p int, c {ty}, PRIMARY KEY (p, c))")
    ins = session.prepare(f"INSERT INTO {t} (p, c) VALUES (0, ?)")
    for v in reversed(values):
        session.execute(ins, (v,))
    got = [normalize("", r.c) for r in session.execute(f"SELECT c FROM {t} WHERE p = 0")]
    assert got == [normalize("", v) for v in values]
    got = [normalize("", r.c) for r in session.execute(f"SELECT c FROM {t} WHERE p = 0 ORDER BY c DESC")]
    assert got == [normalize("", v) for v in reversed(values)]


def test_type_as_partition_key(session, ks):
    t = f"{ks}.pk_types"
    session.execute(f"CREATE TABLE {t} (a text, b uuid, c timestamp, v int, PRIMARY KEY ((a, b, c)))")
    ins = session.prepare(f"INSERT INTO {t} (a, b, c, v) VALUES (?, ?, ?, ?)")
    ts = datetime.datetime(2020, 5, 6, 7, 8, 9)
    session.execute(ins, ("x", U, ts, 1))
    assert tuples(session, f"SELECT v FROM {t} WHERE a = 'x' AND b = {U} AND c = '2020-05-06 07:08:09+0000'") == [(1,)]
