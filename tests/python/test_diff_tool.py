"""Unit tests of the differential tester's own logic (tests/diff/cqldiff), without servers: a
wrong comparison or a value that does not round-trip would make cql-diff report differences
that are not there, or miss real ones."""

import random
import struct
import sys
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "diff"))
from cqldiff import types as ty  # noqa: E402
from cqldiff.case import stmt_from_json, stmt_to_json  # noqa: E402
from cqldiff.compare import compare, message_family  # noqa: E402
from cqldiff.gen import CLOCK_START, Features, Generator  # noqa: E402
from cqldiff.runner import DIFF_DIR, load_features  # noqa: E402
from cqldiff.servers import Outcome  # noqa: E402
from cqldiff.stmt import Stmt  # noqa: E402

ALL_TYPES = {n: 1.0 for n in ty.NATIVE} | {"list": 1, "set": 1, "map": 1, "tuple": 1, "frozen": 0.5}


def test_types_parse_back_and_values_round_trip_through_the_saved_form():
    rng = random.Random(7)
    for _ in range(500):
        t = ty.random_type(rng, ALL_TYPES)
        assert ty.parse_type(t.cql()) == t
        v = ty.random_value(rng, t)
        assert ty.from_saved(t, ty.to_saved(t, v)) == v or _has_nan(v)
        ty.literal(t, v, rng.randrange(4))  # renders without error
        ty.bind_value(t, v)


def _has_nan(v):
    if isinstance(v, float):
        return v != v
    if isinstance(v, (list, tuple)):
        return any(_has_nan(x) for x in v)
    return False


def test_float_literals_are_the_shortest_text_of_the_float32():
    f = ty.CqlType.native("float")
    assert ty.literal(f, ty.f32(0.1)) == "0.1"
    assert ty.literal(f, ty.f32(-2.25)) == "-2.25"
    assert ty.literal(f, float("-inf")) == "-Infinity"
    assert ty.literal(ty.CqlType.native("decimal"), Decimal("0.10")) == "0.10"


def test_statements_survive_the_regression_file_form():
    features, _ = load_features(DIFF_DIR / "features.toml", include_open=True)
    gen = Generator(random.Random("t:0"), features, "t")
    for _ in range(300):
        s = gen.next()
        back = stmt_from_json(stmt_to_json(s))
        assert back.text("x") == s.text("x")
        assert back.literal_text("x") == s.literal_text("x")
        for a in back.bound_args():
            if not a.unset:
                ty.bind_value(a.type, a.value)


def _rows(columns, *rows):
    return Outcome(columns=columns, rows=[list(r) for r in rows])


def test_results_compare_by_bytes_names_types_and_order():
    s = Stmt("t", ["SELECT"], "read")
    cols = [("a", "int")]
    one, two = struct.pack(">i", 1), struct.pack(">i", 2)
    assert compare(s, _rows(cols, [one], [two]), _rows(cols, [one], [two])) is None
    assert compare(s, _rows(cols, [two], [one]), _rows(cols, [one], [two])) is not None
    assert compare(s, _rows([("b", "int")], [one]), _rows(cols, [one])) is not None
    assert compare(s, _rows([("a", "bigint")], [one]), _rows(cols, [one])) is not None
    assert compare(s, Outcome(), _rows(cols)) is not None


def test_nans_match_whatever_their_bits():
    s = Stmt("t", ["SELECT"], "read")
    cols = [("avg(v)", "float")]
    java_nan, x86_nan = bytes.fromhex("7fc00000"), bytes.fromhex("ffc00000")
    assert compare(s, _rows(cols, [x86_nan]), _rows(cols, [java_nan])) is None
    assert compare(s, _rows(cols, [struct.pack(">f", 1.0)]), _rows(cols, [java_nan])) is not None
    dcols = [("v", "double")]
    assert compare(s, _rows(dcols, [bytes.fromhex("fff8000000000000")]),
                   _rows(dcols, [bytes.fromhex("7ff8000000000000")])) is None


def test_loose_columns():
    ttl = Stmt("t", ["SELECT"], "read", loose={0: "ttl"})
    cols = [("ttl(v)", "int")]
    assert compare(ttl, _rows(cols, [struct.pack(">i", 100)]),
                   _rows(cols, [struct.pack(">i", 102)])) is None
    assert compare(ttl, _rows(cols, [struct.pack(">i", 100)]),
                   _rows(cols, [struct.pack(">i", 200)])) is not None
    wt = Stmt("t", ["SELECT"], "read", loose={0: "writetime"})
    cols = [("writetime(v)", "bigint")]
    server = 1_790_000_000_000_000
    assert compare(wt, _rows(cols, [struct.pack(">q", server)]),
                   _rows(cols, [struct.pack(">q", server + 1000)])) is None
    # Generated timestamps are exact.
    assert compare(wt, _rows(cols, [struct.pack(">q", CLOCK_START + 1)]),
                   _rows(cols, [struct.pack(">q", CLOCK_START + 2)])) is not None
    js = Stmt("t", ["SELECT"], "read", loose={0: "json"})
    cols = [("[json]", "varchar")]
    assert compare(js, _rows(cols, [b'{"a": 1.0E10}']), _rows(cols, [b'{"a": 10000000000.0}'])) is None
    assert compare(js, _rows(cols, [b'{"a": 1, "b": 2}']), _rows(cols, [b'{"b": 2, "a": 1}'])) is not None


def test_errors_compare_by_code_and_by_message_family():
    s = Stmt("t", ["SELECT"], "read")
    err = lambda code, msg: Outcome(error=(code, msg))  # noqa: E731
    assert compare(s, err(0x2200, "x"), err(0x2200, "y")) is None
    assert compare(s, err(0x2000, "x"), err(0x2200, "x")) is not None
    assert message_family("Undefined column name nosuch in table ks.t") == (
        "undefined_column", ("nosuch",))
    assert compare(s, err(0x2200, "Undefined column name other"),
                   err(0x2200, "Undefined column name nosuch")) is not None


def test_known_open_features_exist_and_read_as_zero():
    features, _ = load_features(DIFF_DIR / "features.toml")
    for name in features.known_open:
        assert features(name) == 0.0
    assert isinstance(features, Features)
