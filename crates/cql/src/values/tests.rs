//! Tests across the value modules: terms parsed from real CQL text, functions, orders.

use super::term::*;
use super::*;
use crate::ast::{BindMarker, InsertValues, Statement, Term};
use crate::parse_statement;
use bytes::Bytes;
use cairn_engine::model::types::compare;
use cairn_engine::model::types::framing::*;
use cairn_engine::model::types::CqlType;
use std::cell::Cell;
use std::cmp::Ordering;

/// A context with fixed time, bound values by index and a counter as "randomness".
pub(crate) struct Ctx {
    pub now: i64,
    pub bound: Vec<BoundValue>,
    pub seed: Cell<u64>,
}

impl Ctx {
    pub fn new() -> Self {
        Ctx {
            now: 1_704_067_200_000_000, // 2024-01-01T00:00:00Z
            bound: Vec::new(),
            seed: Cell::new(1),
        }
    }
}

impl TermContext for Ctx {
    fn bind(&self, marker: &BindMarker) -> Option<BoundValue> {
        self.bound.get(marker.index).cloned()
    }
    fn now_micros(&self) -> i64 {
        self.now
    }
    fn random_u64(&self) -> u64 {
        let v = self
            .seed
            .get()
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        self.seed.set(v);
        v
    }
}

/// The term of `INSERT INTO t (a) VALUES (<text>)`.
pub(crate) fn term(text: &str) -> Term {
    let parsed = parse_statement(&format!("INSERT INTO t (a) VALUES ({text})"))
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    match parsed.statement {
        Statement::Insert(ins) => match ins.values {
            InsertValues::Columns { mut values, .. } => values.remove(0),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

pub(crate) fn ty(name: &str) -> CqlType {
    CqlType::parse(name).unwrap_or_else(|| panic!("type {name}"))
}

pub(crate) fn eval_with(text: &str, t: &str, ctx: &Ctx) -> Result<TermValue, String> {
    term_to_bytes(&term(text), &ty(t), "a", ctx).map_err(|e| e.to_string())
}

pub(crate) fn eval(text: &str, t: &str) -> Result<TermValue, String> {
    eval_with(text, t, &Ctx::new())
}

pub(crate) fn value(text: &str, t: &str) -> Bytes {
    match eval(text, t) {
        Ok(TermValue::Value(b)) => b,
        other => panic!("{text} as {t}: {other:?}"),
    }
}

fn int(v: i32) -> Vec<u8> {
    v.to_be_bytes().to_vec()
}

#[test]
fn collections_serialize_sorted() {
    assert_eq!(
        &value("[3, 1, 3]", "list<int>")[..],
        build_collection(&[int(3), int(1), int(3)])
    );
    assert_eq!(
        &value("{3, 1, 3, -2}", "set<int>")[..],
        build_collection(&[int(-2), int(1), int(3)])
    );
    assert_eq!(
        &value("{'b': 1, 'a': 2, 'b': 3}", "map<text, int>")[..],
        build_map(&[(b"a".to_vec(), int(2)), (b"b".to_vec(), int(3))])
    );
    assert_eq!(&value("{}", "set<int>")[..], &[0, 0, 0, 0]);
    assert_eq!(&value("{}", "map<int, int>")[..], &[0, 0, 0, 0]);
    assert_eq!(&value("[]", "frozen<list<int>>")[..], &[0, 0, 0, 0]);
    // Nested frozen sets are sorted too.
    let inner = |v: &[i32]| build_collection(&v.iter().map(|x| int(*x)).collect::<Vec<_>>());
    assert_eq!(
        &value("{{3, 1}, {0}}", "set<frozen<set<int>>>")[..],
        build_collection(&[inner(&[0]), inner(&[1, 3])])
    );
    // Decimal set: equal values deduplicated, first kept.
    let d = value("{1.50, 1.5, 0.1}", "set<decimal>");
    assert_eq!(split_collection(&d).map(|v| v.len()), Some(2));
    // timeuuid set ordered by time.
    let t1 = "d2177dd0-eaa2-11de-a572-001b779c76e3";
    let t0 = "a4a70900-24e1-11df-8924-001ff3591711";
    let s = value(&format!("{{{t1}, {t0}}}"), "set<timeuuid>");
    let elems = split_collection(&s).unwrap();
    assert_eq!(
        temporal::format_uuid(elems[0]),
        t1,
        "2009 timeuuid before 2010 timeuuid"
    );
}

/// `text` evaluated for a receiver of type `t`, formatted as CQL (`null` for null), or the
/// error message.
fn shown(text: &str, t: &str) -> String {
    match eval(text, t) {
        Ok(TermValue::Value(b)) => format::format_value(&ty(t), &b),
        Ok(TermValue::Null) => "null".into(),
        Ok(TermValue::Unset) => "unset".into(),
        Err(e) => format!("ERR {e}"),
    }
}

/// Arithmetic in terms: the overload Cassandra picks for the receiver and its result. Every
/// case was run on Cassandra 5.0.9 (`UPDATE t SET <col> = <term> …`).
#[test]
fn term_arithmetic_as_cassandra() {
    for (text, t, expected) in [
        ("1 + 2", "int", "3"),
        ("1 + 2 * 3", "int", "7"),
        ("(1 + 2) * 3", "int", "9"),
        ("(1 + 2)", "int", "3"),
        ("(int) 1 + 2", "int", "3"),
        ("2147483647 + 1", "int", "-2147483648"),
        ("3000000000 - 1", "int", "ERR Unable to make int from '3000000000'"),
        ("3000000000 * 4", "bigint", "12000000000"),
        ("2 * 3", "bigint", "6"),
        ("1.5 + 1", "float", "2.5"),
        // The receiver's type decides the overload: (float, float) for a float.
        ("1 / 3", "float", "0.33333334"),
        ("1 / 3", "double", "0.3333333333333333"),
        ("1 / 3", "int", "0"),
        ("1 + 1", "double", "2.0"),
        ("1 + 1.5", "double", "2.5"),
        ("1 + 1.5", "decimal", "2.5"),
        ("1.5 * 2", "decimal", "3.0"),
        ("1 / 3", "decimal", "0.33333333333333333333333333333333"),
        ("10 - 3", "varint", "7"),
        ("100 + 100", "tinyint", "-56"),
        ("1 + 1", "smallint", "2"),
        ("- 1", "int", "-1"),
        ("- 2", "bigint", "-2"),
        ("- 3", "tinyint", "-3"),
        ("- -1", "int", "1"),
        ("-?", "int", "ERR No value bound for bind marker 0 (?)"),
        ("null + 1", "int", "null"),
        ("1 + null", "bigint", "null"),
        ("'2024-01-01' + 1d", "timestamp", "'2024-01-02 00:00:00.000000+0000'"),
        ("'2024-01-01' - 1mo", "date", "'2023-12-01'"),
        ("'2024-01-31' + 1mo", "date", "'2024-02-29'"),
        ("'a' + 'b'", "text", "'ab'"),
        ("'c' + 'd'", "ascii", "'cd'"),
        ("'é' + 'a'", "text", "'éa'"),
        ("[1 + 1, 2 * 3]", "list<int>", "[2, 6]"),
        ("{1 + 1: 2 - 3}", "map<int, int>", "{2: -1}"),
        ("1 / 0", "int", "ERR the operation 'int / int' failed: / by zero"),
        ("1 % 0", "bigint", "ERR the operation 'bigint % bigint' failed: / by zero"),
        (
            "'2020-01-01' + 1h",
            "date",
            "ERR the operation 'date + duration' failed: The duration must have a day precision. Was: 1h",
        ),
        ("'a' + 1", "text", "ERR the '+' operation is not supported between 'a' and 1"),
        ("1 + 'a'", "int", "ERR the '+' operation is not supported between 1 and 'a'"),
        ("1 + 1.5", "int", "ERR the '+' operation is not supported between 1 and 1.5"),
        ("1d + 1d", "duration", "ERR the '+' operation is not supported between 1d and 1d"),
        ("now() + 1d", "timestamp", "ERR the '+' operation is not supported between now() and 1d"),
        (
            "5 + 5",
            "timestamp",
            "ERR Ambiguous '+' operation with args 5 and 5: use type hint to disambiguate, example '(int) ?'",
        ),
        (
            "toTimestamp(now()) + 1",
            "timestamp",
            "ERR Ambiguous '+' operation with args totimestamp(now()) and 1: use type hint to disambiguate, example '(int) ?'",
        ),
        (
            "? + ?",
            "int",
            "ERR Ambiguous '+' operation with args ? and ?: use type hint to disambiguate, example '(int) ?'",
        ),
        (
            "(int) ? + ?",
            "int",
            "ERR Ambiguous '+' operation with args (int)? and ?: use type hint to disambiguate, example '(int) ?'",
        ),
        (
            "1 + ?",
            "bigint",
            "ERR Ambiguous '+' operation with args 1 and ?: use type hint to disambiguate, example '(int) ?'",
        ),
        ("1 + (1 + 'a')", "int", "ERR the '+' operation is not supported between 1 and 'a'"),
        ("(1 + 2) + 'a'", "text", "ERR the '+' operation is not supported between 1 and 2"),
        (
            "1 + 2 + 1d",
            "duration",
            "ERR the '+' operation is not supported between system.\"_add\"(1, 2) and 1d",
        ),
        (
            "(1 + 2) + 1d",
            "duration",
            "ERR the '+' operation is not supported between (system.\"_add\"(1, 2)) and 1d",
        ),
        (
            "- 1 + 1d",
            "duration",
            "ERR the '+' operation is not supported between system.\"_negate\"(1) and 1d",
        ),
        ("(int) 1 + 1d", "duration", "ERR the '+' operation is not supported between (int)1 and 1d"),
        ("[1, 2] + 1d", "duration", "ERR the '+' operation is not supported between [1, 2] and 1d"),
        ("[1] + 2", "int", "ERR Unexpected receiver type 'int'; only list and vector are expected"),
        ("2 + [1]", "int", "ERR Unexpected receiver type 'int'; only list and vector are expected"),
        ("{1} + 2", "int", "ERR the '+' operation is not supported between {1} and 2"),
        ("(1, 2) + 2", "int", "ERR the '+' operation is not supported between (1, 2) and 2"),
    ] {
        assert_eq!(shown(text, t), expected, "{text} as {t}");
    }
    assert!(shown("'a' + - 1", "text")
        .starts_with("ERR Invalid call to function system._negate, none of its type signatures match (known type signatures: system.\"_negate\" : (bigint) -> bigint, "));
    assert!(shown("- 'a'", "int").starts_with("ERR Invalid call to function system._negate"));
    // Cassandra stores the int-typed result in the varint column as is.
    assert_eq!(&value("1 + 1", "varint")[..], &[0, 0, 0, 2]);
    assert_eq!(&value("- 1", "varint")[..], &[0xFF; 4]);
    // Division by zero is a Function_failure, not an invalid request.
    let e = term_to_bytes(&term("1 / 0"), &ty("int"), "a", &Ctx::new()).unwrap_err();
    assert_eq!(
        e,
        ValueError::FunctionFailure(error::FunctionFailure {
            keyspace: "system".into(),
            function: "_divide".into(),
            arg_types: vec!["int".into(), "int".into()],
            message: "the operation 'int / int' failed: / by zero".into(),
        })
    );
}

#[test]
fn term_arithmetic_with_bound_values() {
    let mut ctx = Ctx::new();
    ctx.bound = vec![
        BoundValue::Value(Bytes::from_static(&[0, 0, 0, 5])),
        BoundValue::Null,
        BoundValue::Unset,
    ];
    let run = |text: &str, t: &str| {
        term_to_bytes(&term(text), &ty(t), "a", &ctx).map_err(|e| e.to_string())
    };
    assert_eq!(
        run("(int) ? * 2", "int"),
        Ok(TermValue::Value(Bytes::from_static(&[0, 0, 0, 10])))
    );
    assert_eq!(run("(int) ? + (int) ?", "int"), Ok(TermValue::Null));
    assert_eq!(
        run("(int) ? - (int) ? + (int) ?", "int").unwrap_err(),
        "Invalid unset value for argument in call to function _add"
    );
    // The receiver decides between int and bigint for `? + 1`… only with no marker.
    assert!(run("? + 1", "int")
        .unwrap_err()
        .starts_with("Ambiguous '+' operation"));
}

/// Nested operations and calls are resolved in polynomial time: each (term, type) test is
/// made once per resolution.
#[test]
fn nested_arithmetic_resolves_quickly() {
    let mut text = "1".to_string();
    for i in 0..24 {
        text = if i % 3 == 0 {
            format!("(1 + {text})")
        } else if i % 3 == 1 {
            format!("blobAsInt(intAsBlob({text})) * 1")
        } else {
            format!("- ({text})")
        };
    }
    let got = eval(&text, "int");
    assert!(matches!(got, Ok(TermValue::Value(_))), "{text}: {got:?}");
}

#[test]
fn tuples() {
    assert_eq!(
        &value("(1, 'x', null)", "tuple<int, text, int>")[..],
        build_tuple(&[Some(int(1)), Some(b"x".to_vec()), None])
    );
    assert_eq!(
        &value("(1)", "frozen<tuple<int, text>>")[..],
        build_tuple(&[Some(int(1))])
    );
    assert_eq!(
        eval("(1, 2, 3)", "tuple<int, int>").unwrap_err(),
        "Invalid tuple literal for a: too many elements. Type tuple<int, int> expects 2 but got 3"
    );
    assert_eq!(
        eval("(1, 'x')", "tuple<int, int>").unwrap_err(),
        "Invalid tuple literal for a: component 1 is not of type int"
    );
    assert_eq!(
        eval("(1, 2)", "int").unwrap_err(),
        "Invalid tuple type literal for a of type int"
    );
}

#[test]
fn collection_errors() {
    for (text, t, msg) in [
        (
            "[1]",
            "set<int>",
            "Invalid list literal for a of type set<int>",
        ),
        (
            "{1}",
            "list<int>",
            "Invalid set literal for a of type list<int>",
        ),
        (
            "{}",
            "list<int>",
            "Invalid set literal for a of type list<int>",
        ),
        (
            "{1: 2}",
            "set<int>",
            "Invalid map literal for a of type set<int>",
        ),
        (
            "[1]",
            "frozen<set<int>>",
            "Invalid list literal for a of type frozen<set<int>>",
        ),
        (
            "[1, 'x']",
            "list<int>",
            "Invalid list literal for a: value 'x' is not of type int",
        ),
        (
            "{'x'}",
            "set<int>",
            "Invalid set literal for a: value 'x' is not of type int",
        ),
        (
            "{'x': 1}",
            "map<int, int>",
            "Invalid map literal for a: key 'x' is not of type int",
        ),
        (
            "{1: 'x'}",
            "map<int, int>",
            "Invalid map literal for a: value 'x' is not of type int",
        ),
        (
            "[1, null]",
            "list<int>",
            "null is not supported inside collections",
        ),
        (
            "{null}",
            "set<int>",
            "null is not supported inside collections",
        ),
        (
            "{1: null}",
            "map<int, int>",
            "null is not supported inside collections",
        ),
        (
            "{null: 1}",
            "map<int, int>",
            "null is not supported inside collections",
        ),
        (
            "[3000000000]",
            "list<int>",
            "Unable to make int from '3000000000'",
        ),
        (
            "'foo'",
            "int",
            "Invalid STRING constant (foo) for \"a\" of type int",
        ),
        (
            "1",
            "frozen<list<int>>",
            "Invalid INTEGER constant (1) for \"a\" of type frozen<list<int>>",
        ),
        (
            "null",
            "counter",
            "Invalid null value for counter increment/decrement",
        ),
    ] {
        assert_eq!(eval(text, t).unwrap_err(), msg, "{text} as {t}");
    }
    // An element error names the element receiver.
    assert_eq!(eval("[1.5]", "list<decimal>").map(|_| ()), Ok(()),);
    assert_eq!(eval("null", "int"), Ok(TermValue::Null));
}

#[test]
fn bind_markers() {
    let mut ctx = Ctx::new();
    ctx.bound = vec![
        TermValue::Value(Bytes::from(int(7))),
        TermValue::Unset,
        TermValue::Null,
        TermValue::Value(Bytes::from_static(&[1, 2, 3])),
    ];
    assert_eq!(
        eval_with("?", "int", &ctx),
        Ok(TermValue::Value(Bytes::from(int(7))))
    );
    assert_eq!(
        eval_with("[1, ?]", "list<int>", &ctx),
        Ok(TermValue::Value(Bytes::from(build_collection(&[
            int(1),
            int(7)
        ]))))
    );
    assert_eq!(eval_with("[?, ?]", "list<int>", &ctx), Ok(TermValue::Unset));
    let mut ctx_null = Ctx::new();
    ctx_null.bound = vec![TermValue::Value(Bytes::from(int(7))), TermValue::Null];
    assert_eq!(
        eval_with("[?, ?]", "list<int>", &ctx_null).unwrap_err(),
        "null is not supported inside collections"
    );
    assert_eq!(
        eval_with("{?: ?}", "map<int, int>", &ctx),
        Ok(TermValue::Unset),
        "unset map value: whole map unset"
    );
    assert_eq!(
        eval_with("(?, ?)", "tuple<int, int>", &ctx).unwrap_err(),
        "Invalid unset value for tuple field number 1"
    );
    let mut ctx4 = Ctx::new();
    ctx4.bound = vec![TermValue::Value(Bytes::from_static(&[1, 2, 3]))];
    assert_eq!(
        eval_with("?", "int", &ctx4).unwrap_err(),
        "Expected 4 or 0 byte int (3)"
    );
    assert_eq!(
        eval_with("?", "bigint", &ctx4).unwrap_err(),
        "Expected 8 or 0 byte long (3)"
    );
    assert!(eval_with("?", "blob", &ctx4).is_ok());
    // A bound set is re-sorted and deduplicated.
    let mut ctx5 = Ctx::new();
    ctx5.bound = vec![TermValue::Value(Bytes::from(build_collection(&[
        int(2),
        int(1),
        int(2),
    ])))];
    assert_eq!(
        eval_with("?", "set<int>", &ctx5),
        Ok(TermValue::Value(Bytes::from(build_collection(&[
            int(1),
            int(2)
        ]))))
    );
    assert!(
        eval_with("?", "int", &Ctx::new()).is_err(),
        "unbound marker"
    );
}

#[test]
fn type_hints() {
    assert_eq!(&value("(int)5", "int")[..], &int(5));
    assert_eq!(&value("(int)5", "varint")[..], &int(5));
    assert_eq!(
        eval("(int)5", "bigint").unwrap_err(),
        "Cannot assign value (int)5 to a of type bigint"
    );
    assert_eq!(
        eval("(int)'x'", "int").unwrap_err(),
        "Cannot cast value 'x' to type int"
    );
}

#[test]
fn time_functions() {
    let ctx = Ctx::new();
    let ms = ctx.now / 1000;
    let now = value("now()", "timeuuid");
    let u: [u8; 16] = now[..].try_into().unwrap();
    assert_eq!(u[6] >> 4, 1, "version 1");
    assert_eq!(u[8] >> 6, 0b10, "variant");
    assert_eq!(temporal::v1_unix_millis(&u), ms);
    assert!(CqlType::Timeuuid.validate(&now).is_ok());
    // Two calls differ.
    let ctx2 = Ctx::new();
    assert_ne!(
        eval_with("now()", "timeuuid", &ctx2),
        eval_with("now()", "timeuuid", &ctx2)
    );
    assert_eq!(
        &value("currenttimestamp()", "timestamp")[..],
        &ms.to_be_bytes()
    );
    assert_eq!(
        &value("currentdate()", "date")[..],
        &(0x8000_0000u32 + 19_723).to_be_bytes()
    );
    assert_eq!(&value("currenttime()", "time")[..], &0i64.to_be_bytes());
    let v4 = value("uuid()", "uuid");
    assert_eq!(v4[6] >> 4, 4);
    assert_eq!(
        &value("totimestamp(now())", "timestamp")[..],
        &ms.to_be_bytes()
    );
    assert_eq!(
        &value("tounixtimestamp(now())", "bigint")[..],
        &ms.to_be_bytes()
    );
    assert_eq!(
        &value("todate(now())", "date")[..],
        &(0x8000_0000u32 + 19_723).to_be_bytes()
    );
    assert_eq!(
        &value("totimestamp('2024-01-01')", "timestamp")[..],
        &ms.to_be_bytes(),
        "a string picks the date overload"
    );
    assert_eq!(
        &value("todate('2024-01-01 10:00')", "date")[..],
        &(0x8000_0000u32 + 19_723).to_be_bytes()
    );
    let min = value("mintimeuuid('2024-01-01')", "timeuuid");
    let max = value("maxtimeuuid('2024-01-01')", "timeuuid");
    assert_eq!(compare(&CqlType::Timeuuid, &min, &now), Ordering::Less);
    assert_eq!(compare(&CqlType::Timeuuid, &now, &max), Ordering::Less);
    assert_eq!(eval("mintimeuuid(null)", "timeuuid"), Ok(TermValue::Null));
    assert_eq!(
        eval("tounixtimestamp('2024-01-01')", "bigint").unwrap_err(),
        "Ambiguous call to function tounixtimestamp (can be matched by following signatures: \
         system.tounixtimestamp : (timestamp) -> bigint, system.tounixtimestamp : (date) -> bigint): \
         use type casts to disambiguate"
    );
    assert_eq!(
        &value("tounixtimestamp((date)'1970-01-02')", "bigint")[..],
        &86_400_000i64.to_be_bytes()
    );
    assert_eq!(
        eval("now()", "int").unwrap_err(),
        "Type error: cannot assign result of function system.now (type timeuuid) to a (type int)"
    );
    assert_eq!(&value("now()", "uuid").len(), &16, "timeuuid fits a uuid");
    assert_eq!(
        eval("now(1)", "timeuuid").unwrap_err(),
        "Invalid number of arguments in call to function system.now: 0 required but 1 provided"
    );
    assert_eq!(
        eval("nosuch()", "int").unwrap_err(),
        "Unknown function nosuch called"
    );
    assert_eq!(
        eval("ks.now()", "int").unwrap_err(),
        "Unknown function ks.now called"
    );
    assert_eq!(
        eval("mintimeuuid(1.5)", "timeuuid").unwrap_err(),
        "Type error: 1.5 cannot be passed as argument 0 of function system.mintimeuuid of type timestamp"
    );
    assert_eq!(
        eval("totimestamp(1.5)", "timestamp").unwrap_err(),
        "Invalid call to function totimestamp, none of its type signatures match (known type \
         signatures: system.totimestamp : (date) -> timestamp, system.totimestamp : (timeuuid) -> timestamp)"
    );
}

#[test]
fn blob_functions() {
    assert_eq!(&value("intasblob(5)", "blob")[..], &int(5));
    assert_eq!(&value("textasblob('ab')", "blob")[..], b"ab");
    assert_eq!(&value("varcharasblob('ab')", "blob")[..], b"ab");
    assert_eq!(&value("blobasint(0x00000005)", "int")[..], &int(5));
    assert_eq!(&value("blobastext(textasblob('hi'))", "text")[..], b"hi");
    assert_eq!(&value("bigintasblob(5)", "blob")[..], &5i64.to_be_bytes());
    assert_eq!(
        eval("blobasint(0x0102)", "int").unwrap_err(),
        "In call to function system.blobasint, value 0x0102 is not a valid binary representation for type int"
    );
    assert_eq!(
        eval("blobasint(0x00000001)", "text").unwrap_err(),
        "Type error: cannot assign result of function system.blobasint (type int) to a (type text)"
    );
    assert_eq!(
        eval("blobasblob(0x00)", "blob").unwrap_err(),
        "Unknown function blobasblob called"
    );
}

/// `CAST(term AS type)` in a term: a call of `system.cast_as_<type>`, resolved among its
/// overloads (checked on Cassandra 5.0.9: `WHERE k = CAST(…)`, `SET v = CAST(…)`).
#[test]
fn casts_in_terms() {
    for (text, t, expected) in [
        ("CAST(1.5 AS int)", "int", "1"),
        ("cast(-2.75 as bigint)", "bigint", "-2"),
        ("CAST((double) 1 AS int)", "int", "1"),
        ("CAST(CAST(1.5 AS bigint) AS int)", "int", "1"),
        ("CAST(3.75 AS text)", "text", "'3.75'"),
        ("CAST(3 AS text)", "text", "'3'"),
        ("cast_as_int(1.5)", "int", "1"),
        ("CAST((bigint) null AS int)", "int", "null"),
        ("CAST(1.5 AS blob)", "blob", "ERR Unknown function system.cast_as_blob called"),
        (
            "CAST('1' AS int)",
            "int",
            "ERR Invalid call to function system.cast_as_int, none of its type signatures match",
        ),
        (
            "CAST(1 AS int)",
            "int",
            "ERR Ambiguous call to function system.cast_as_int (can be matched by following signatures: ",
        ),
    ] {
        let got = shown(text, t);
        assert!(got.starts_with(expected), "{text} as {t}: {got}");
    }
}

#[test]
fn orders() {
    let sorted = |t: &str, texts: &[&str]| {
        let ty = ty(t);
        let vals: Vec<Bytes> = texts.iter().map(|x| value(x, t)).collect();
        for w in vals.windows(2) {
            assert_eq!(compare(&ty, &w[0], &w[1]), Ordering::Less, "{t}: {texts:?}");
            assert_eq!(
                compare(&ty, &w[1], &w[0]),
                Ordering::Greater,
                "{t}: {texts:?}"
            );
        }
    };
    sorted("int", &["-5", "-1", "0", "3", "2147483647"]);
    sorted("bigint", &["-9223372036854775808", "-1", "0", "1"]);
    sorted(
        "varint",
        &[
            "-1000000000000000000000",
            "-129",
            "-1",
            "0",
            "127",
            "128",
            "99999999999999999999999",
        ],
    );
    sorted("decimal", &["-10.5", "-1", "0", "0.001", "1.5", "15e1000"]);
    sorted(
        "double",
        &["-Infinity", "-1.5", "0", "1e300", "Infinity", "NaN"],
    );
    sorted("float", &["-1", "0.5", "NaN"]);
    sorted("text", &["''", "'A'", "'a'", "'ab'", "'é'"]);
    sorted("timestamp", &["-1", "0", "'2024-01-01'"]);
    sorted("date", &["'1969-01-01'", "'1970-01-01'", "'2024-01-01'"]);
    sorted(
        "time",
        &["'00:00:00'", "'00:00:00.000000001'", "'23:59:59'"],
    );
    sorted(
        "timeuuid",
        &[
            "d2177dd0-eaa2-11de-a572-001b779c76e3",
            "a4a70900-24e1-11df-8924-001ff3591711",
        ],
    );
    sorted("list<int>", &["[]", "[-1]", "[1]", "[1, 2]", "[2]"]);
    sorted("frozen<set<int>>", &["{}", "{1}", "{1, 2}", "{3}"]);
    sorted(
        "frozen<map<int, text>>",
        &["{1: 'a'}", "{1: 'b'}", "{1: 'b', 2: 'a'}", "{2: 'a'}"],
    );
    sorted(
        "tuple<int, int>",
        &["(1)", "(1, null)", "(1, -5)", "(1, 5)", "(2, null)"],
    );
    sorted(
        "frozen<list<frozen<tuple<text, int>>>>",
        &["[('a', 1)]", "[('a', 2)]", "[('b', 0)]"],
    );
    // timeuuid: the clock/node half compares as signed bytes.
    let mut a = [0u8; 16];
    a[6] = 0x10;
    let mut b = a;
    a[8] = 0x80;
    b[8] = 0x7F;
    assert_eq!(compare(&CqlType::Timeuuid, &a, &b), Ordering::Less);
    assert_eq!(compare(&CqlType::Uuid, &a, &b), Ordering::Greater);
    assert_eq!(compare(&CqlType::Int, &[], &int(i32::MIN)), Ordering::Less);
    assert_eq!(
        compare(
            &ty("decimal"),
            &value("1.50", "decimal"),
            &value("1.5", "decimal")
        ),
        Ordering::Equal
    );
}

mod fuzz {
    use super::*;
    use crate::ast::Literal;
    use proptest::prelude::*;

    const TYPES: &[&str] = &[
        "ascii",
        "bigint",
        "blob",
        "boolean",
        "counter",
        "date",
        "decimal",
        "double",
        "duration",
        "float",
        "inet",
        "int",
        "smallint",
        "text",
        "time",
        "timestamp",
        "timeuuid",
        "tinyint",
        "uuid",
        "varint",
    ];

    proptest! {
        #[test]
        fn literal_conversion_never_panics(text in "[-+0-9a-zA-Z:. µPT]{0,24}", kind in 0usize..7) {
            let lit = match kind {
                0 => Literal::Integer(text.clone()),
                1 => Literal::Float(text.clone()),
                2 => Literal::String(text.clone()),
                3 => Literal::Uuid(text.clone()),
                4 => Literal::Blob(format!("0x{text}")),
                5 => Literal::Duration(text.clone()),
                _ => Literal::Boolean(text.len() % 2 == 0),
            };
            for t in TYPES {
                let typ = ty(t);
                if let Ok(v) = literal::literal_to_bytes_at(&lit, &typ, "a", 0) {
                    // Whatever converts is valid for the type (tinyint hex aside, checked too).
                    prop_assert!(typ.validate(&v).is_ok() || v.is_empty(), "{lit:?} as {t}: {v:?}");
                    let _ = format::format_value(&typ, &v);
                }
            }
        }

        #[test]
        fn numeric_literals_round_trip(n in any::<i64>(), scale in 0u32..12) {
            let text = n.to_string();
            prop_assert_eq!(&value(&text, "bigint")[..], &n.to_be_bytes()[..]);
            let v = value(&text, "varint");
            prop_assert_eq!(format::format_value(&ty("varint"), &v), text.clone());
            let dec_text = if scale == 0 { text.clone() } else {
                let digits = n.unsigned_abs().to_string();
                let padded = format!("{:0>width$}", digits, width = scale as usize + 1);
                let (i, f) = padded.split_at(padded.len() - scale as usize);
                format!("{}{i}.{f}", if n < 0 { "-" } else { "" })
            };
            let d = value(&dec_text, "decimal");
            prop_assert_eq!(value(&format::format_value(&ty("decimal"), &d), "decimal"), d);
        }

        #[test]
        fn double_text_round_trips(x in any::<f64>()) {
            let v = Bytes::copy_from_slice(&x.to_be_bytes());
            let text = format::format_value(&CqlType::Double, &v);
            let back = value(&text, "double");
            prop_assert_eq!(compare(&CqlType::Double, &back, &v), Ordering::Equal, "{}", text);
        }
    }
}

/// Checked against the PREPARE results of Cassandra 5.0.9.
#[test]
fn marker_types_as_cassandra() {
    let types = |text: &str, t: &str| -> Vec<(usize, String, String)> {
        term::marker_types(&term(text), "c", &ty(t))
            .into_iter()
            .map(|(i, n, t)| (i, n, t.name()))
            .collect()
    };
    let one = |i: usize, n: &str, t: &str| (i, n.to_string(), t.to_string());
    assert_eq!(types("?", "int"), [one(0, "c", "int")]);
    assert_eq!(
        types("(int) ? * 2", "int"),
        [one(0, "arg0(system._multiply)", "int")]
    );
    assert_eq!(
        types("2 - (bigint) ?", "bigint"),
        [one(0, "arg1(system._substract)", "bigint")]
    );
    assert_eq!(types("- ?", "int"), [one(0, "arg0(system._negate)", "int")]);
    assert_eq!(
        types("blobAsInt(?)", "int"),
        [one(0, "arg0(system.blobasint)", "blob")]
    );
    assert_eq!(types("fromJson(:j)", "text"), [one(0, "j", "text")]);
    assert_eq!(
        types("fromJson(?)", "int"),
        [one(0, "arg0(system.fromjson)", "text")]
    );
    assert_eq!(
        types("[?, (int) ? + 1]", "list<int>"),
        [one(0, "c", "int"), one(1, "arg0(system._add)", "int")]
    );
    // An ambiguous operation leaves its markers out (it fails when the statement runs).
    assert_eq!(types("? * 2", "int"), []);
}
