"""Comparing two answers to the same statement: Cairn's against Cassandra's.

Rules:
- Results: the same kind (rows or none), the same column names and types in order, the same
  number of rows, and every value byte for byte, in order (both servers return rows in
  Murmur3 token order, then clustering order, so order is part of the answer). Pages are
  concatenated before comparing.
- Three kinds of result column are compared loosely, and only those the generator marked:
  `ttl(c)` within TTL_SLACK seconds (the two servers receive a write, and a read, a few
  milliseconds apart); `writetime(c)` exactly, except when both values are server-clock
  timestamps (conditional writes get the server's time: CLOCK_START in gen.py keeps every
  generated timestamp above it), which only need to be within WRITETIME_SLACK; `[json]`
  texts as parsed JSON (numbers by value, so `1.0E10` and `10000000000.0` match; key order
  kept), server-clock write times and `ttl(…)` values inside them as those columns.
- A `float` or `double` value that is NaN in both answers matches whatever its bits: the sign
  and payload of a NaN made by arithmetic are the processor's (x86 gives `inf - inf` the sign
  bit) and depend on operand order, which Java's JIT and Rust's compiler choose differently
  (`avg` over a NaN and an infinity: `7fc00000` from Cassandra, `ffc00000` from Cairn).
- Errors: the same code. The message too when Cassandra's matches a family in
  MESSAGE_FAMILIES (texts that drivers or users match on): Cairn's must then match the same
  family with the same captured names, after `normalize`.
"""

import json
import re
import struct
from decimal import Decimal

from .gen import CLOCK_START

TTL_SLACK = 5
WRITETIME_SLACK = 60_000_000
REAL_CLOCK_FLOOR = 1_000_000_000_000_000  # 2001: anything from here to CLOCK_START is a server clock

# (family, pattern): a Cassandra message matching the pattern must be answered by a Cairn
# message matching it too, with equal groups (compared after normalize()).
MESSAGE_FAMILIES = [
    ("allow_filtering", r"cannot execute this query as it might involve data filtering"),
    ("undefined_column", r"undefined column name (\S+)"),
    ("unconfigured_table", r"unconfigured table (\S+)"),
    ("missing_keyspace", r"keyspace (\S+) does not exist"),
    ("partition_key_missing", r"some partition key parts are missing: (.+)"),
    ("clustering_key_missing", r"some clustering keys are missing: (.+)"),
    ("batch_too_large", r"batch too large"),
    ("custom_timestamp_lwt", r"cannot provide custom timestamp for conditional"),
]
_FAMILIES = [(name, re.compile(p)) for name, p in MESSAGE_FAMILIES]


def normalize(message):
    """Lowercase, quotes dropped, whitespace collapsed: what differs between two
    spellings of the same error without changing its meaning."""
    m = message.lower().replace('"', "").replace("'", "")
    return re.sub(r"\s+", " ", m).strip()


def message_family(message):
    """(family, groups) of an error message, or None."""
    m = normalize(message)
    for name, pattern in _FAMILIES:
        hit = pattern.search(m)
        if hit:
            return name, hit.groups()
    return None


def compare(stmt, cairn, cassandra, replay=False):
    """None when the answers match, else a one-line description of the difference.
    replay: Cassandra's answer was recorded earlier, so server-clock write times are only
    checked to be server-clock write times."""
    # Where one server refused at PREPARE what the other refused when executing, the error
    # is compared, not the phase (and there is no complete PREPARE answer to compare).
    if cassandra.prepared and cairn.prepared and not (cassandra.at_prepare or cairn.at_prepare):
        diff = _prepared_difference(cairn.prepared, cassandra.prepared)
        if diff:
            return diff
    if cassandra.error is not None or cairn.error is not None:
        if cassandra.error is None:
            return "Cairn failed where Cassandra succeeded"
        if cairn.error is None:
            return "Cairn succeeded where Cassandra failed"
        if cairn.error[0] != cassandra.error[0]:
            return "different error codes"
        family = message_family(str(cassandra.error[1]))
        if family is not None and message_family(str(cairn.error[1])) != family:
            return f"error messages differ ({family[0]})"
        return None
    if (cairn.columns is None) != (cassandra.columns is None):
        return "one returned rows, the other none"
    if cairn.columns is None:
        return None
    if [c[0] for c in cairn.columns] != [c[0] for c in cassandra.columns]:
        return "different column names"
    if [c[1] for c in cairn.columns] != [c[1] for c in cassandra.columns]:
        return "different column types"
    if len(cairn.rows) != len(cassandra.rows):
        return f"different row counts ({len(cairn.rows)} vs {len(cassandra.rows)})"
    for i, (ra, rb) in enumerate(zip(cairn.rows, cassandra.rows)):
        for j, (a, b) in enumerate(zip(ra, rb)):
            if a == b or _both_nan(a, b, cassandra.columns[j][1]):
                continue
            how = stmt.loose.get(j)
            if how is not None and a is not None and b is not None and _loose_equal(
                    how, a, b, cassandra.columns[j][1], replay):
                continue
            return f"row {i} column {cassandra.columns[j][0]!r} differs"
    return None


def _both_nan(a, b, type_name):
    fmt = {"float": ">f", "double": ">d"}.get(type_name)
    if fmt is None or a is None or b is None:
        return False
    size = struct.calcsize(fmt)
    if len(a) != size or len(b) != size:
        return False
    x, y = struct.unpack(fmt, a)[0], struct.unpack(fmt, b)[0]
    return x != x and y != y


def _prepared_difference(a, b):
    if len(a) != len(b):
        return "prepared a different number of statements"
    for (bind_a, pk_a, res_a), (bind_b, pk_b, res_b) in zip(a, b):
        if [n for n, _ in bind_a] != [n for n, _ in bind_b]:
            return "prepared bind marker names differ"
        if bind_a != bind_b:
            return "prepared bind marker types differ"
        if pk_a != pk_b:
            return "prepared partition key indexes differ"
        if res_a != res_b:
            return "prepared result metadata differs"
    return None


def _loose_equal(how, a, b, type_name, replay):
    if how == "json":
        return _json_equal(_parse_json(a), _parse_json(b), replay)
    return _ints_equal(how, _ints(a, type_name), _ints(b, type_name), replay)


def _json_equal(a, b, replay):
    """Two parsed `[json]` objects: equal, except for the write times and TTLs in them: a
    value under a `ttl(…)` key compares as a TTL column, and two whole numbers that are both
    server-clock write times (whatever their key: selectors may be aliased) as a writetime
    column."""
    if not (isinstance(a, list) and isinstance(b, list)) or len(a) != len(b):
        return a == b
    for (ka, va), (kb, vb) in zip(a, b):
        if ka != kb:
            return False
        if va == vb:
            continue
        ints = [v if isinstance(v, list) else [v] for v in (va, vb)]
        if not all(isinstance(x, Decimal) and x == x.to_integral_value() or x is None
                   for v in ints for x in v):
            return False
        ints = [[None if x is None else int(x) for x in v] for v in ints]
        if ka.startswith("ttl("):
            ok = _ints_equal("ttl", ints[0], ints[1], replay)
        else:
            ok = _ints_equal("writetime", ints[0], ints[1], replay)
        if not ok:
            return False
    return True


def _ints_equal(how, ints_a, ints_b, replay):
    if ints_a is None or ints_b is None or len(ints_a) != len(ints_b):
        return False
    for x, y in zip(ints_a, ints_b):
        if x is None or y is None:
            if x is not y:
                return False
            continue
        if how == "ttl" and abs(x - y) > TTL_SLACK:
            return False
        if how == "writetime" and x != y and not (
                REAL_CLOCK_FLOOR <= min(x, y) and max(x, y) < CLOCK_START
                and (replay or abs(x - y) <= WRITETIME_SLACK)):
            return False
    return True


def _ints(raw, type_name):
    """The integers of an int/bigint value or of a list of them (writetime and ttl of a
    collection in Cassandra 5)."""
    if type_name in ("int", "bigint"):
        fmt = ">i" if type_name == "int" else ">q"
        return [struct.unpack(fmt, raw)[0]] if len(raw) == struct.calcsize(fmt) else None
    if type_name in ("list<int>", "list<bigint>"):
        fmt = ">i" if type_name == "list<int>" else ">q"
        n = struct.unpack(">i", raw[:4])[0]
        out, pos = [], 4
        for _ in range(n):
            size = struct.unpack(">i", raw[pos:pos + 4])[0]
            pos += 4
            if size < 0:
                out.append(None)
                continue
            out.append(struct.unpack(fmt, raw[pos:pos + size])[0])
            pos += size
        return out
    return None


def _parse_json(raw):
    try:
        return json.loads(raw.decode("utf-8"), object_pairs_hook=list, parse_float=Decimal,
                          parse_int=Decimal, parse_constant=str)
    except ValueError:
        return ("unparsable", raw)
