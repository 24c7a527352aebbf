"""CQL types and values for the differential tester: random types, random values, and every
way a value reaches a server (CQL literal, bound driver object, JSON for INSERT JSON), plus a
JSON form for saved regressions and simpler values for shrinking.

Invariants:
- A value is plain Python data in one model per type (below), never a driver object, so it
  can be saved, reloaded and shrunk. The model keeps what the statement said, including
  duplicates and order in set and map literals: canonicalising them is the server's job.
- Every value is generated from the caller's `random.Random`; nothing reads the clock or the
  process's randomness, so a seed reproduces a run.
- Literal rendering is deterministic given (type, value, style); `style` is drawn once at
  generation and saved with the value, so replays send the same text.

Value models: ascii/text -> str; blob -> bytes; boolean -> bool; tinyint/smallint/int/bigint/
varint -> int; float -> float (exactly representable as float32); double -> float; decimal ->
Decimal; date -> int (days since 1970-01-01); time -> int (nanoseconds since midnight);
timestamp -> int (ms since epoch); uuid/timeuuid -> uuid.UUID; inet -> str; duration ->
(months, days, nanoseconds); list/set -> list; map -> list of [key, value]; tuple and user
type -> list (None for a null component or field).

A user-defined type is self-describing: its CqlType carries its name, field names and field
types, so a column's type alone says which `CREATE TYPE` statements it needs
(`CqlType.udts`). `cql()` writes the type as DDL names it (`frozen<ut_…>`); `spec()` writes
it with its definition (`udt(ut_…, a int, b text)`), the form saved in regression files and
read back by `parse_type`.
"""

import datetime
import decimal
import ipaddress
import json
import math
import struct
import uuid
from decimal import Decimal

from cassandra import util as dutil

NATIVE = [
    "ascii", "bigint", "blob", "boolean", "date", "decimal", "double", "duration", "float",
    "inet", "int", "smallint", "text", "time", "timestamp", "timeuuid", "tinyint", "uuid",
    "varint",
]
INT_RANGES = {
    "tinyint": (-(2 ** 7), 2 ** 7 - 1),
    "smallint": (-(2 ** 15), 2 ** 15 - 1),
    "int": (-(2 ** 31), 2 ** 31 - 1),
    "bigint": (-(2 ** 63), 2 ** 63 - 1),
}
NANOS_PER_DAY = 86_400_000_000_000
EPOCH = datetime.date(1970, 1, 1)


class CqlType:
    """A CQL type: a native name, list/set/map/tuple over other types, or a user type (its
    name, field names and field types), maybe frozen."""

    __slots__ = ("kind", "name", "params", "frozen", "fields")

    def __init__(self, kind, name=None, params=(), frozen=False, fields=()):
        self.kind = kind  # "native" | "list" | "set" | "map" | "tuple" | "udt"
        self.name = name  # the native type's or the user type's name
        self.params = list(params)  # element types, or the user type's field types
        self.frozen = frozen
        self.fields = list(fields)  # the user type's field names

    @staticmethod
    def native(name):
        return CqlType("native", name)

    def cql(self):
        """The type as written in DDL."""
        if self.kind == "native":
            return self.name
        if self.kind == "udt":
            text = self.name
        else:
            text = f"{self.kind}<{', '.join(p.cql() for p in self.params)}>"
        return f"frozen<{text}>" if self.frozen else text

    def spec(self):
        """The type with the definitions of its user types (what `parse_type` reads)."""
        if self.kind == "native":
            return self.name
        if self.kind == "udt":
            fields = "".join(f", {f} {p.spec()}" for f, p in zip(self.fields, self.params))
            text = f"udt({self.name}{fields})"
        else:
            text = f"{self.kind}<{', '.join(p.spec() for p in self.params)}>"
        return f"frozen<{text}>" if self.frozen else text

    def udts(self):
        """The user types this type uses, each once, a nested one before its user."""
        out = []
        for p in self.params:
            out += [u for u in p.udts() if u.name not in {o.name for o in out}]
        if self.kind == "udt" and self.name not in {o.name for o in out}:
            out.append(self)
        return out

    def create_type_cql(self):
        """A user type's `CREATE TYPE IF NOT EXISTS` (its name is unique to its definition)."""
        fields = ", ".join(f"{f} {p.cql()}" for f, p in zip(self.fields, self.params))
        return f"CREATE TYPE IF NOT EXISTS {self.name} ({fields})"

    def wire_name(self):
        """The type as the Python driver names a type from protocol metadata: `varchar` for
        text, tuples as `frozen<tuple<...>>`, collections without frozen<>."""
        if self.kind == "native":
            return {"text": "varchar"}.get(self.name, self.name)
        if self.kind == "udt":
            return f"frozen<{self.name}>"
        inner = f"{self.kind}<{', '.join(p.wire_name() for p in self.params)}>"
        return f"frozen<{inner}>" if self.kind == "tuple" else inner

    def __repr__(self):
        return self.cql()

    def __eq__(self, other):
        return isinstance(other, CqlType) and self.spec() == other.spec()

    def __hash__(self):
        return hash(self.spec())

    @property
    def is_collection(self):
        return self.kind in ("list", "set", "map")

    @property
    def multicell_udt(self):
        """A non-frozen user type: stored field by field, `u.f = v` and `DELETE u.f` allowed."""
        return self.kind == "udt" and not self.frozen

    @property
    def multicell(self):
        """A non-frozen collection: stored cell by cell, element operations allowed."""
        return self.is_collection and not self.frozen

    def contains(self, name):
        return self.name == name if self.kind == "native" else any(
            p.contains(name) for p in self.params)

    def nested_unordered(self):
        """A set or map inside a collection or tuple (whose order the server must fix)."""
        return any(p.kind in ("set", "map") or p.nested_unordered() for p in self.params)

    def unordered_in_tuple(self):
        """A set or map somewhere inside a tuple or user type (Cassandra keeps those as
        bound)."""
        if self.kind in ("tuple", "udt") and any(p.kind in ("set", "map") or p.nested_unordered()
                                        for p in self.params):
            return True
        return any(p.unordered_in_tuple() for p in self.params)

    def comparable(self):
        """Usable in a primary key, a set element or a map key."""
        return not self.contains("duration") and not self.contains("counter") and (
            self.kind in ("native", "tuple") or self.frozen)

    def field_type(self, name):
        return self.params[self.fields.index(name)]


def parse_type(text):
    """Parses what CqlType.spec() writes (and cql() for types without user types)."""
    pos = 0

    def ident():
        nonlocal pos
        start = pos
        while pos < len(text) and (text[pos].isalnum() or text[pos] == "_"):
            pos += 1
        return text[start:pos]

    def skip_ws():
        nonlocal pos
        while pos < len(text) and text[pos] == " ":
            pos += 1

    def expect(ch):
        nonlocal pos
        skip_ws()
        if text[pos] != ch:
            raise ValueError(f"bad type {text!r} at {pos}")
        pos += 1

    def parse():
        skip_ws()
        word = ident()
        if word == "frozen":
            expect("<")
            t = parse()
            expect(">")
            t.frozen = True
            return t
        if word == "udt":
            expect("(")
            skip_ws()
            name = ident()
            fields, params = [], []
            skip_ws()
            while text[pos] == ",":
                expect(",")
                skip_ws()
                fields.append(ident())
                params.append(parse())
                skip_ws()
            expect(")")
            return CqlType("udt", name, params=params, fields=fields)
        if word in ("list", "set", "map", "tuple"):
            expect("<")
            params = [parse()]
            skip_ws()
            while text[pos] == ",":
                expect(",")
                params.append(parse())
                skip_ws()
            expect(">")
            return CqlType(word, params=params)
        return CqlType.native(word)

    t = parse()
    skip_ws()
    if pos != len(text):
        raise ValueError(f"trailing text in type {text!r}")
    return t


# ------------------------------------------------------------------------------------------
# Random types


def random_type(rng, weights, depth=0, need_comparable=False, allow_multicell=True):
    """A random type. weights: the [types] table of the feature file (native names and
    list/set/map/tuple/frozen)."""
    natives = [n for n in NATIVE if weights.get(n, 0) > 0
               and not (need_comparable and n == "duration")]
    composite = [] if depth >= 2 else [
        k for k in ("list", "set", "map", "tuple", "udt") if weights.get(k, 0) > 0]
    choices = [(n, weights[n]) for n in natives] + [(k, weights[k]) for k in composite]
    pick = weighted(rng, choices)
    if pick in NATIVE:
        return CqlType.native(pick)
    frozen = need_comparable or not allow_multicell or depth > 0 or (
        rng.random() < weights.get("frozen", 0))
    if pick == "udt":
        n = rng.randint(1, 3)
        params = [random_type(rng, weights, depth + 1, need_comparable, False) for _ in range(n)]
        # The name is unique to this definition: a type created again (a replay, another
        # episode) is the same type.
        name = f"ut_{rng.getrandbits(40):010x}"
        return CqlType("udt", name, params=params, frozen=frozen, fields=UDT_FIELDS[:n])
    if pick == "tuple":
        n = rng.randint(1, 3)
        params = [random_type(rng, weights, depth + 1, need_comparable, False) for _ in range(n)]
        # Tuples are frozen either way; say so half of the time to test both spellings.
        return CqlType("tuple", params=params, frozen=frozen or rng.random() < 0.5)
    if pick == "list":
        params = [random_type(rng, weights, depth + 1, need_comparable, False)]
    elif pick == "set":
        params = [random_type(rng, weights, depth + 1, True, False)]
    else:
        params = [random_type(rng, weights, depth + 1, True, False),
                  random_type(rng, weights, depth + 1, need_comparable, False)]
    return CqlType(pick, params=params, frozen=frozen)


UDT_FIELDS = ["a", "b2", "c_c"]


def weighted(rng, choices):
    """One name from [(name, weight)] with weight > 0."""
    total = sum(w for _, w in choices)
    x = rng.random() * total
    for name, w in choices:
        x -= w
        if x < 0:
            return name
    return choices[-1][0]


# ------------------------------------------------------------------------------------------
# Random values


def f32(x):
    """x rounded to the nearest float32."""
    return struct.unpack(">f", struct.pack(">f", x))[0]


_TEXT_POOL = "abcxyz ABC019'\"%_\\é日本🙂\u00a0\t$"
_ASCII_POOL = "abcxyz ABC019'\"%_\\$-"


def _random_string(rng, pool, small):
    n = rng.choice([0, 1, 1, 2, 3]) if small else rng.choice([0, 1, 3, 8, 20])
    return "".join(rng.choice(pool) for _ in range(n))


class ValueOptions:
    """Which value shapes random_value may produce, as probabilities read through
    `allow(name)`: "decimal_scale" (a decimal with trailing zeros or a positive exponent,
    e.g. 0.10 or 5E+3, rather than its shortest form) and "duplicate_map_keys" (a map
    literal naming a key twice)."""

    def __init__(self, rng, probabilities):
        self.rng = rng
        self.probabilities = probabilities

    def allow(self, name):
        return self.rng.random() < self.probabilities.get(name, 1.0)


ALL_SHAPES = None


def random_value(rng, t, small=False, opts=ALL_SHAPES):
    """A random value of type t in the model form. small: from a tiny domain, so that keys
    collide and reads find what writes wrote. opts: a ValueOptions (None: every shape)."""
    if t.kind == "native":
        v = _random_native(rng, t.name, small)
        if t.name == "decimal" and opts is not None and not opts.allow("decimal_scale"):
            v = _shortest_decimal(v)
        return v
    if t.kind in ("tuple", "udt"):
        return [None if rng.random() < 0.15 else random_value(rng, p, small, opts)
                for p in t.params]
    n = rng.choice([0, 1, 2, 3] if small else [0, 1, 2, 3, 5])
    if t.kind in ("list", "set"):
        return [random_value(rng, t.params[0], True, opts) for _ in range(n)]
    pairs = [[random_value(rng, t.params[0], True, opts), random_value(rng, t.params[1], small, opts)]
             for _ in range(n)]
    if opts is not None and not opts.allow("duplicate_map_keys"):
        seen, unique = set(), []
        for k, x in pairs:
            key = identity(t.params[0], k)
            if key not in seen:
                seen.add(key)
                unique.append([k, x])
        pairs = unique
    return pairs


def identity(t, v):
    """What makes two values of t the same value once the server has put sets and maps in
    order and removed their duplicates (a hashable canonical form)."""
    if v is None:
        return None
    if t.kind == "set":
        return ("set", tuple(sorted({identity(t.params[0], e) for e in v}, key=repr)))
    if t.kind == "map":
        keys = {identity(t.params[0], k) for k, _ in v}
        return ("map", tuple(sorted(keys, key=repr)))  # the keys decide the entries' slots
    if t.kind in ("list", "tuple", "udt"):
        params = t.params if t.kind != "list" else [t.params[0]] * len(v)
        return (t.kind, tuple(identity(p, e) for p, e in zip(params, v)))
    return json.dumps(to_saved(t, v))


def _shortest_decimal(v):
    """v without trailing fractional zeros and with a scale of at least 0 (5E+3 -> 5000)."""
    wide = decimal.Context(prec=200)
    v = v.normalize(wide)
    return v.quantize(Decimal(1), context=wide) if v.as_tuple().exponent > 0 else v


def _random_native(rng, name, small):
    if name == "counter":
        return rng.randint(-5, 5)
    if name in INT_RANGES:
        lo, hi = INT_RANGES[name]
        if small:
            return rng.randint(-3, 5)
        r = rng.random()
        if r < 0.1:
            return rng.choice([lo, hi, 0, -1])
        if r < 0.5:
            return rng.randint(-100, 100)
        return rng.randint(lo, hi)
    if name == "varint":
        if small:
            return rng.randint(-3, 5)
        return rng.choice([0, -1, 1, 2 ** 63, -(2 ** 64) - 7, rng.randint(-10 ** 30, 10 ** 30),
                           rng.randint(-1000, 1000)])
    if name in ("float", "double"):
        conv = f32 if name == "float" else float
        if small:
            return conv(rng.choice([0.0, 1.5, -2.25, 3.0, 0.1]))
        r = rng.random()
        if r < 0.08:
            return rng.choice([math.nan, math.inf, -math.inf, -0.0])
        if r < 0.4:
            return conv(rng.randint(-1000, 1000) / 8)
        return conv(rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30))
    if name == "decimal":
        if small:
            return Decimal(rng.choice(["0", "1.5", "-2", "0.10", "3"]))
        digits = rng.randint(-10 ** rng.randint(0, 25), 10 ** rng.randint(0, 25))
        return Decimal(digits).scaleb(-rng.randint(-5, 12))
    if name == "text":
        return _random_string(rng, _TEXT_POOL, small)
    if name == "ascii":
        return _random_string(rng, _ASCII_POOL, small)
    if name == "blob":
        n = rng.choice([0, 1, 2]) if small else rng.choice([0, 1, 4, 16])
        return bytes(rng.randrange(256) for _ in range(n))
    if name == "boolean":
        return rng.random() < 0.5
    if name == "date":
        if small:
            return rng.randint(-2, 3)
        return rng.choice([0, -1, rng.randint(-800_000, 2_900_000), rng.randint(-100, 20_000)])
    if name == "time":
        if small:
            return rng.choice([0, 1_000_000_000, 3_600_000_000_000])
        return rng.choice([0, NANOS_PER_DAY - 1, rng.randrange(NANOS_PER_DAY),
                           rng.randrange(86_400) * 1_000_000_000,
                           rng.randrange(86_400_000) * 1_000_000])
    if name == "timestamp":
        if small:
            return rng.randint(-2, 3) * 86_400_000
        return rng.choice([0, -1, rng.randint(-(2 ** 40), 2 ** 42),
                           rng.randint(1_500_000_000_000, 1_800_000_000_000)])
    if name == "uuid":
        if small:
            return uuid.UUID(int=rng.randint(0, 3) * 2 ** 64 + 0x4000_8000_0000_0000)
        return uuid.UUID(int=rng.getrandbits(128), version=4)
    if name == "timeuuid":
        # Version 1, a random 60-bit time and clock sequence: never the server clock.
        ticks = rng.randint(0, 3) * 10 ** 13 if small else rng.getrandbits(60)
        node = 0x0102_0304_0506 if small else rng.getrandbits(48)
        seq = 0 if small else rng.getrandbits(14)
        return uuid.UUID(fields=(ticks & 0xFFFF_FFFF, (ticks >> 32) & 0xFFFF,
                                 ((ticks >> 48) & 0x0FFF) | 0x1000, 0x80 | (seq >> 8),
                                 seq & 0xFF, node))
    if name == "inet":
        if small:
            return rng.choice(["127.0.0.1", "10.0.0.1", "::1"])
        if rng.random() < 0.6:
            return ".".join(str(rng.randrange(256)) for _ in range(4))
        return str(ipaddress.IPv6Address(rng.getrandbits(128)))
    if name == "duration":
        if small:
            return rng.choice([(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 3_600_000_000_000)])
        sign = -1 if rng.random() < 0.2 else 1
        return (sign * rng.randint(0, 30), sign * rng.randint(0, 40),
                sign * rng.choice([0, rng.randrange(NANOS_PER_DAY),
                                   rng.randint(0, 10 ** 6) * 1_000_000_000]))
    raise ValueError(f"unknown type {name}")


# ------------------------------------------------------------------------------------------
# CQL literals


def _float_text(x, single):
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if single:
        # The shortest text that reads back as the same float32.
        for digits in range(1, 10):
            text = f"{x:.{digits}g}"
            if f32(float(text)) == x:
                break
    else:
        text = repr(x)
    if "e" not in text and "." not in text:
        text += ".0"
    return text.replace("inf", "Infinity")


def _quote(s):
    return "'" + s.replace("'", "''") + "'"


def date_text(days):
    """yyyy-mm-dd, or None outside years 1-9999 (then only the integer form exists)."""
    try:
        return (EPOCH + datetime.timedelta(days=days)).isoformat()
    except OverflowError:
        return None


def time_text(nanos):
    secs, frac = divmod(nanos, 1_000_000_000)
    h, rem = divmod(secs, 3600)
    m, s = divmod(rem, 60)
    text = f"{h:02d}:{m:02d}:{s:02d}"
    return text + (f".{frac:09d}" if frac else "")


def timestamp_text(ms):
    """An ISO-like text with an explicit zone, or None outside years 1-9999."""
    try:
        dt = datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=ms)
    except OverflowError:
        return None
    return dt.strftime("%Y-%m-%d %H:%M:%S") + f".{ms % 1000:03d}+0000"


def duration_text(d):
    months, days, nanos = d
    if months == days == nanos == 0:
        return "0s"
    neg = months < 0 or days < 0 or nanos < 0
    months, days, nanos = abs(months), abs(days), abs(nanos)
    parts = []
    y, mo = divmod(months, 12)
    for n, unit in ((y, "y"), (mo, "mo"), (days, "d")):
        if n:
            parts.append(f"{n}{unit}")
    for size, unit in ((3_600_000_000_000, "h"), (60_000_000_000, "m"), (1_000_000_000, "s"),
                       (1_000_000, "ms"), (1_000, "us"), (1, "ns")):
        n, nanos = divmod(nanos, size)
        if n:
            parts.append(f"{n}{unit}")
    return ("-" if neg else "") + "".join(parts)


def literal(t, v, style=0):
    """The CQL literal for value v of type t. style (0-3) picks among equivalent spellings."""
    if v is None:
        return "null"
    if t.kind == "list":
        return "[" + ", ".join(literal(t.params[0], e, style) for e in v) + "]"
    if t.kind == "set":
        return "{" + ", ".join(literal(t.params[0], e, style) for e in v) + "}"
    if t.kind == "map":
        return "{" + ", ".join(f"{literal(t.params[0], k, style)}: {literal(t.params[1], x, style)}"
                               for k, x in v) + "}"
    if t.kind == "tuple":
        return "(" + ", ".join(literal(p, e, style) for p, e in zip(t.params, v)) + ")"
    if t.kind == "udt":
        # Style 2 leaves null fields out (a field not named is null).
        return "{" + ", ".join(f"{f}: {literal(p, e, style)}"
                               for f, p, e in zip(t.fields, t.params, v)
                               if e is not None or style != 2) + "}"
    n = t.name
    if n in INT_RANGES or n in ("varint", "counter"):
        return str(v)
    if n == "float":
        return _float_text(v, True)
    if n == "double":
        return _float_text(v, False)
    if n == "decimal":
        return f"{v:E}" if style == 1 else str(v)
    if n in ("text", "ascii"):
        if style == 3 and "$$" not in v and not v.endswith("$"):
            return f"$${v}$$"
        return _quote(v)
    if n == "blob":
        return "0x" + v.hex() if style != 1 else "0X" + v.hex().upper()
    if n == "boolean":
        return ("true" if v else "false") if style != 1 else ("TRUE" if v else "False")
    if n in ("uuid", "timeuuid"):
        return str(v) if style != 1 else str(v).upper()
    if n == "inet":
        return _quote(v)
    if n == "date":
        text = date_text(v)
        return str(v + 2 ** 31) if style == 1 or text is None else _quote(text)
    if n == "time":
        return str(v) if style == 1 else _quote(time_text(v))
    if n == "timestamp":
        text = timestamp_text(v)
        return str(v) if style in (0, 1) or text is None else _quote(text)
    if n == "duration":
        return duration_text(v)
    raise ValueError(f"no literal for {t}")


# ------------------------------------------------------------------------------------------
# Bound values (Python driver objects)


class Pairs:
    """A map for the driver's serializer that keeps the statement's order and duplicates
    (the driver only calls items())."""

    def __init__(self, pairs):
        self.pairs = pairs

    def items(self):
        return list(self.pairs)

    def __len__(self):
        return len(self.pairs)


def bind_value(t, v):
    """The Python driver object that serializes to value v of type t."""
    if v is None:
        return None
    if t.kind in ("list", "set"):
        return [bind_value(t.params[0], e) for e in v]
    if t.kind == "map":
        return Pairs([(bind_value(t.params[0], k), bind_value(t.params[1], x)) for k, x in v])
    if t.kind in ("tuple", "udt"):
        # The driver serializes a user type's fields by position from a tuple.
        return tuple(bind_value(p, e) for p, e in zip(t.params, v))
    n = t.name
    if n == "date":
        return v + 2 ** 31
    if n == "time":
        return dutil.Time(v)
    if n == "duration":
        return dutil.Duration(*v)
    return v


# ------------------------------------------------------------------------------------------
# JSON (INSERT JSON's argument, as Cassandra's fromJson reads it)


def json_value(t, v):
    """The JSON value Cassandra's `INSERT JSON` reads as v."""
    if v is None:
        return None
    if t.kind in ("list", "set"):
        return [json_value(t.params[0], e) for e in v]
    if t.kind == "tuple":
        return [json_value(p, e) for p, e in zip(t.params, v)]
    if t.kind == "udt":
        return {f: json_value(p, e) for f, p, e in zip(t.fields, t.params, v)}
    if t.kind == "map":
        out = {}
        for k, x in v:
            kt = t.params[0]
            if kt.kind == "native" and kt.name in ("text", "ascii"):
                key = k
            else:
                key = json.dumps(json_value(kt, k), separators=(",", ":"))
            out[key] = json_value(t.params[1], x)
        return out
    n = t.name
    if n in INT_RANGES or n in ("varint", "counter", "boolean"):
        return v
    if n in ("float", "double"):
        return v if math.isfinite(v) else _float_text(v, n == "float")
    if n == "decimal":
        return str(v)
    if n in ("text", "ascii", "inet"):
        return v
    if n == "blob":
        return "0x" + v.hex()
    if n in ("uuid", "timeuuid"):
        return str(v)
    if n == "date":
        return date_text(v) or str(v + 2 ** 31)
    if n == "time":
        return time_text(v)
    if n == "timestamp":
        return v
    if n == "duration":
        return duration_text(v)
    raise ValueError(f"no JSON for {t}")


# ------------------------------------------------------------------------------------------
# Saved form (regression files) and shrinking


def to_saved(t, v):
    """v as JSON-serializable data (inverse: from_saved)."""
    if v is None:
        return None
    if t.kind in ("list", "set"):
        return [to_saved(t.params[0], e) for e in v]
    if t.kind == "map":
        return [[to_saved(t.params[0], k), to_saved(t.params[1], x)] for k, x in v]
    if t.kind in ("tuple", "udt"):
        return [to_saved(p, e) for p, e in zip(t.params, v)]
    n = t.name
    if n in ("float", "double"):
        return v if math.isfinite(v) and not (v == 0 and math.copysign(1, v) < 0) else repr(v)
    if n == "decimal" or n in ("uuid", "timeuuid"):
        return str(v)
    if n in ("varint", "bigint", "counter"):
        return str(v)
    if n == "blob":
        return v.hex()
    if n == "duration":
        return list(v)
    return v


def from_saved(t, j):
    if j is None:
        return None
    if t.kind in ("list", "set"):
        return [from_saved(t.params[0], e) for e in j]
    if t.kind == "map":
        return [[from_saved(t.params[0], k), from_saved(t.params[1], x)] for k, x in j]
    if t.kind in ("tuple", "udt"):
        return [from_saved(p, e) for p, e in zip(t.params, j)]
    n = t.name
    if n == "float":
        return f32(float(j))
    if n == "double":
        return float(j)
    if n == "decimal":
        return Decimal(j)
    if n in ("uuid", "timeuuid"):
        return uuid.UUID(j)
    if n in ("varint", "bigint", "counter"):
        return int(j)
    if n == "blob":
        return bytes.fromhex(j)
    if n == "duration":
        return tuple(j)
    return j


def simpler(t, v):
    """Candidate replacements for v that are simpler, simplest first (may be empty)."""
    if v is None:
        return []
    if t.kind in ("list", "set", "map"):
        out = [v[:i] + v[i + 1:] for i in range(len(v))]
        for i, e in enumerate(v):
            et = t.params[0] if t.kind != "map" else None
            if et is not None:
                out += [v[:i] + [s] + v[i + 1:] for s in simpler(et, e)[:1]]
        return out
    if t.kind in ("tuple", "udt"):
        return [v[:i] + [s] + v[i + 1:] for i, (p, e) in enumerate(zip(t.params, v))
                for s in simpler(p, e)[:1]]
    n = t.name
    candidates = {
        "text": "", "ascii": "", "blob": b"", "boolean": False, "date": 0, "time": 0,
        "timestamp": 0, "inet": "127.0.0.1", "duration": (0, 0, 0),
        "uuid": uuid.UUID(int=0x4000_8000_0000_0000),
    }
    if n in INT_RANGES or n == "varint":
        return [c for c in (0, 1) if c != v and abs(c) < abs(v)]
    if n in ("float", "double"):
        return [] if v == 0.0 else [0.0]
    if n == "decimal":
        return [] if v == Decimal(0) else [Decimal(0)]
    if n in candidates:
        return [] if v == candidates[n] else [candidates[n]]
    return []
