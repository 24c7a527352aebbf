//! Arithmetic, unary minus, parentheses, element and slice selection in terms and selectors,
//! against Cassandra 5's grammar (`termAddition` / `selectionAddition` and below). The trees
//! are printed in a compact prefix form so each case fits on a line:
//! `(+ a (* b #2))` is `a + b * 2` with `a`, `b` columns and `#2` a constant.

use crate::ast::{
    ArithmeticOp, CellRef, CellStep, ElementRef, InsertValues, Literal, Relation, Selector,
    SelectorExpr, Statement, Term,
};
use crate::parse_statement;

fn op(o: ArithmeticOp) -> &'static str {
    o.symbol()
}

fn lit(l: &Literal) -> String {
    match l {
        Literal::String(s) => format!("'{s}'"),
        other => other.text(),
    }
}

fn t(term: &Term) -> String {
    let list = |ts: &[Term]| ts.iter().map(t).collect::<Vec<_>>().join(" ");
    match term {
        Term::Literal(l) => lit(l),
        Term::Null => "null".into(),
        Term::Bind(m) => m.name.as_ref().map_or("?".into(), |n| format!(":{n}")),
        Term::List(ts) => format!("[{}]", list(ts)),
        Term::Tuple(ts) => format!("(tuple {})", list(ts)),
        Term::Arithmetic(o, l, r) => format!("({} {} {})", op(*o), t(l), t(r)),
        Term::Negate(x) => format!("(neg {})", t(x)),
        Term::TypeHint(ty, x) => format!("(hint {ty} {})", t(x)),
        Term::Function(call) => format!("{}({})", call.name, list(&call.args)),
        other => format!("{other:?}"),
    }
}

fn step(e: &CellStep) -> String {
    let bound = |b: &Option<Term>| b.as_ref().map_or("_".into(), t);
    match e {
        CellStep::Element(ElementRef::Key(k)) => format!(" [{}]", t(k)),
        CellStep::Element(ElementRef::Slice(a, b)) => format!(" [{}..{}]", bound(a), bound(b)),
        CellStep::Field(f) => format!(" .{f}"),
    }
}

fn s(e: &SelectorExpr) -> String {
    let cell = |name: &str, c: &CellRef| {
        let path: String = c.path.iter().map(step).collect();
        format!("({name} {}{path})", c.column)
    };
    match e {
        SelectorExpr::Column(c) => c.clone(),
        SelectorExpr::Term(x) => format!("#{}", t(x)),
        SelectorExpr::CountAll => "count(*)".into(),
        SelectorExpr::WriteTime(c) => cell("writetime", c),
        SelectorExpr::MaxWriteTime(c) => cell("maxwritetime", c),
        SelectorExpr::Ttl(c) => cell("ttl", c),
        SelectorExpr::Function(call) => {
            let args: Vec<String> = call.args.iter().map(s).collect();
            format!("(call {} {})", call.name, args.join(" "))
        }
        SelectorExpr::Cast(x, ty) => format!("(cast {} {ty})", s(x)),
        SelectorExpr::Field(x, f) => format!("(field {} {f})", s(x)),
        SelectorExpr::Element(x, k) => format!("(elem {} {})", s(x), t(k)),
        SelectorExpr::ElementSlice(x, a, b) => format!(
            "(slice {} {} {})",
            s(x),
            a.as_ref().map_or("_".into(), t),
            b.as_ref().map_or("_".into(), t)
        ),
        SelectorExpr::Arithmetic(o, l, r) => format!("({} {} {})", op(*o), s(l), s(r)),
        SelectorExpr::Negate(x) => format!("(neg {})", s(x)),
        SelectorExpr::Parenthesized(x) => format!("(paren {})", s(x)),
        SelectorExpr::Tuple(xs) => {
            let items: Vec<String> = xs.iter().map(s).collect();
            format!("(tuple {})", items.join(" "))
        }
        SelectorExpr::TypeHint(ty, x) => format!("(hint {ty} {})", s(x)),
    }
}

/// The selectors of `SELECT <text> FROM t`, printed; or `ERR <message>`.
fn select(text: &str) -> String {
    match parse_statement(&format!("SELECT {text} FROM t")) {
        Ok(p) => match p.statement {
            Statement::Select(sel) => {
                let list: Vec<String> = sel
                    .selectors
                    .unwrap_or_default()
                    .iter()
                    .map(|Selector { expr, alias }| match alias {
                        Some(a) => format!("{} as {a}", s(expr)),
                        None => s(expr),
                    })
                    .collect();
                let flags = if sel.json { "json " } else { "" };
                format!("{flags}{}", list.join(", "))
            }
            other => format!("{other:?}"),
        },
        Err(e) => format!("ERR {e}"),
    }
}

/// The values of `INSERT INTO t (...) VALUES (<text>)`, printed; or `ERR <message>`.
fn values(text: &str) -> String {
    match parse_statement(&format!("INSERT INTO t (a) VALUES ({text})")) {
        Ok(p) => match p.statement {
            Statement::Insert(ins) => match ins.values {
                InsertValues::Columns { values, .. } => {
                    values.iter().map(t).collect::<Vec<_>>().join(", ")
                }
                other => format!("{other:?}"),
            },
            other => format!("{other:?}"),
        },
        Err(e) => format!("ERR {e}"),
    }
}

fn check(f: fn(&str) -> String, cases: &[(&str, &str)]) {
    for (input, expected) in cases {
        assert_eq!(f(input), *expected, "input: {input}");
    }
}

#[test]
fn selector_arithmetic() {
    check(
        select,
        &[
            ("a + b * c", "(+ a (* b c))"),
            ("a * b + c", "(+ (* a b) c)"),
            ("a - b - c", "(- (- a b) c)"),
            ("a * b / c % d", "(% (/ (* a b) c) d)"),
            ("(a + b) * 2", "(* (paren (+ a b)) #2)"),
            ("a - (b - c)", "(- a (paren (- b c)))"),
            ("-a", "(neg a)"),
            ("- a", "(neg a)"),
            ("-1", "#-1"),
            ("- 1", "(neg #1)"),
            ("- -1", "(neg #-1)"),
            ("- - a", "(neg (neg a))"),
            ("-a * b", "(* (neg a) b)"),
            ("-m[1]", "(neg (elem m 1))"),
            ("-(a + 1)", "(neg (paren (+ a #1)))"),
            ("a - -1.5", "(- a #-1.5)"),
            ("a - - 1", "(- a (neg #1))"),
            ("ts - 1d, ts + ?", "(- ts #1d), (+ ts #?)"),
            (
                "1 + 2 * 3 - 4 % 3 / 1",
                "(- (+ #1 (* #2 #3)) (/ (% #4 #3) #1))",
            ),
            ("f(a + 1, -b) * 2", "(* (call f (+ a #1) (neg b)) #2)"),
            ("cast(a + 1 as text)", "(cast (+ a #1) text)"),
            ("count(*) + 1", "(+ count(*) #1)"),
            ("a + b AS total, c", "(+ a b) as total, c"),
            ("a+b", "(+ a b)"),
            ("a*2", "(* a #2)"),
        ],
    );
}

#[test]
fn selector_parentheses_tuples_and_hints() {
    check(
        select,
        &[
            ("(a)", "(paren a)"),
            ("((a))", "(paren (paren a))"),
            ("(1)", "#(tuple 1)"),
            ("(1, 'x')", "#(tuple 1 'x')"),
            ("(1 + 2)", "(paren (+ #1 #2))"),
            ("(int) 1 + 2", "(+ #(hint int 1) #2)"),
            ("(int) ?", "#(hint int ?)"),
            ("(bigint) -1", "#(hint bigint -1)"),
            ("(a) + 1", "(+ (paren a) #1)"),
            ("[1, 2 + 3]", "#[1 (+ 2 3)]"),
            ("(a, b)", "(tuple a b)"),
            (
                "(a, (int) 1, (b, ?))",
                "(tuple a #(hint int 1) (tuple b #?))",
            ),
            ("(a, 1)", "(tuple a #1)"),
            ("(int) a", "(hint int a)"),
            ("(int) a + 1", "(+ (hint int a) #1)"),
            ("(varint) a.f", "(field (hint varint a) f)"),
            (
                "(tuple<int, int>) (a, 1)",
                "(hint tuple<int, int> (tuple a #1))",
            ),
            ("(bigint) max(a)", "(hint bigint (call max a))"),
        ],
    );
}

#[test]
fn selector_elements_and_slices() {
    check(
        select,
        &[
            ("m[1]", "(elem m 1)"),
            ("m[1..3]", "(slice m 1 3)"),
            ("m[1 .. 3]", "(slice m 1 3)"),
            ("m[..3]", "(slice m _ 3)"),
            ("m['a'..]", "(slice m 'a' _)"),
            ("m[?..:hi]", "(slice m ? :hi)"),
            ("m[1.5..2.5]", "(slice m 1.5 2.5)"),
            ("m[-2..-1]", "(slice m -2 -1)"),
            ("m[1 + 1]", "(elem m (+ 1 1))"),
            ("m[1][2]", "(elem (elem m 1) 2)"),
            ("mm[1][2..3]", "(slice (elem mm 1) 2 3)"),
            ("u.f[1]", "(elem (field u f) 1)"),
            ("m[1] + 1", "(+ (elem m 1) #1)"),
            ("writetime(m[1])", "(writetime m [1])"),
            ("ttl(m[1..2])", "(ttl m [1..2])"),
            ("maxwritetime(s[..'b'])", "(maxwritetime s [_..'b'])"),
            ("writetime(s['a'..])", "(writetime s ['a'.._])"),
            ("writetime(c), ttl(c)", "(writetime c), (ttl c)"),
            ("writetime(c) - 1", "(- (writetime c) #1)"),
            ("writetime(m[1][2])", "(writetime m [1] [2])"),
            ("ttl(u.f)", "(ttl u .f)"),
            (
                "maxwritetime(m[1..2][3].g)",
                "(maxwritetime m [1..2] [3] .g)",
            ),
        ],
    );
}

#[test]
fn selector_errors() {
    let cases = [
        // Cassandra's lexer reads `-1` as one token, so these are two selectors in a row.
        ("a -1", "mismatched input '-1' expecting K_FROM"),
        ("a-1", "mismatched input '-1' expecting K_FROM"),
        ("m[..]", "no viable alternative at input ']'"),
        ("m[1. .2]", "mismatched input '.' expecting ']'"),
        ("m[]", "no viable alternative at input ']'"),
        ("m[1..2..3]", "mismatched input '.' expecting ']'"),
        ("a +", "no viable alternative at input 'FROM'"),
        ("* 2", "mismatched input '2' expecting K_FROM"),
    ];
    for (input, expected) in cases {
        let got = select(input);
        assert!(
            got.starts_with("ERR ") && got.contains(expected),
            "input: {input}: {got}"
        );
    }
}

#[test]
fn json_and_distinct_flags_before_operators() {
    // `-` and `*` can start a selector list, so the word before them is the flag; `+`, `/`
    // and `%` cannot, so there it is a column (Cassandra's syntactic predicate).
    check(
        select,
        &[
            ("json - 1", "json (neg #1)"),
            ("json + 1", "(+ json #1)"),
            ("json / 2", "(/ json #2)"),
            ("json % 2", "(% json #2)"),
        ],
    );
    // `SELECT DISTINCT *` reads the same way, so `distinct * 2` is an error as in Cassandra.
    assert!(select("distinct * 2").starts_with("ERR "));
    let p = parse_statement("SELECT distinct + 1 FROM t").unwrap();
    let Statement::Select(sel) = p.statement else {
        panic!()
    };
    assert!(!sel.distinct);
}

#[test]
fn term_arithmetic() {
    check(
        values,
        &[
            ("1 + 2 * 3", "(+ 1 (* 2 3))"),
            ("1 - 2 - 3", "(- (- 1 2) 3)"),
            ("6 / 3 % 2", "(% (/ 6 3) 2)"),
            ("- 1", "(neg 1)"),
            ("-1", "-1"),
            ("- -1", "(neg -1)"),
            ("-now()", "(neg now())"),
            ("-?", "(neg ?)"),
            ("(1 + 2) * 3", "(* (tuple (+ 1 2)) 3)"),
            ("(int) 1 + 2", "(+ (hint int 1) 2)"),
            ("(int) (1 + 2)", "(hint int (tuple (+ 1 2)))"),
            ("toTimestamp(now()) - 1d", "(- totimestamp(now()) 1d)"),
            ("'2024-01-01' + 1mo", "(+ '2024-01-01' 1mo)"),
            ("? + :x", "(+ ? :x)"),
            ("[1 + 1, 2]", "[(+ 1 1) 2]"),
            ("f(1 + 2, 3)", "f((+ 1 2) 3)"),
            ("1 + 2, 3", "(+ 1 2), 3"),
            ("1+2", "(+ 1 2)"),
            ("1.5e3 - 1", "(- 1.5e3 1)"),
        ],
    );
}

#[test]
fn term_errors() {
    let cases = [
        // `-1` is one token in Cassandra: `1 -1` is two terms in a row.
        ("1 -1", "mismatched input '-1' expecting ')'"),
        ("1-1", "mismatched input '-1' expecting ')'"),
        // `simpleTerm` cannot start with a minus.
        ("- - 1", "no viable alternative at input '-'"),
        ("1 +", "no viable alternative at input ')'"),
        ("* 2", "no viable alternative at input '*'"),
    ];
    for (input, expected) in cases {
        let got = values(input);
        assert!(
            got.starts_with("ERR ") && got.contains(expected),
            "input: {input}: {got}"
        );
    }
}

/// Terms in the other places Cassandra's `term` appears.
#[test]
fn terms_everywhere() {
    let update = |text: &str| -> String {
        match parse_statement(text) {
            Ok(p) => match p.statement {
                Statement::Update(u) => format!("{:?}", u.assignments),
                other => format!("{other:?}"),
            },
            Err(e) => format!("ERR {e}"),
        }
    };
    // Prepends, counter updates and collection appends keep working next to arithmetic.
    assert_eq!(
        update("UPDATE t SET l = [1] + l WHERE k = 0"),
        r#"[Prepend { column: "l", value: List([Literal(Integer("1"))]) }]"#
    );
    assert_eq!(
        update("UPDATE t SET c = c -1 WHERE k = 0"),
        r#"[Subtract { column: "c", value: Literal(Integer("1")) }]"#
    );
    assert_eq!(
        update("UPDATE t SET c = c + 1 + 2 WHERE k = 0"),
        r#"[Add { column: "c", value: Arithmetic(Add, Literal(Integer("1")), Literal(Integer("2"))) }]"#
    );
    assert_eq!(
        update("UPDATE t SET a = 1 + 2, l = [1] + [2] WHERE k = 0"),
        r#"[Set { column: "a", value: Arithmetic(Add, Literal(Integer("1")), Literal(Integer("2"))) }, Set { column: "l", value: Arithmetic(Add, List([Literal(Integer("1"))]), List([Literal(Integer("2"))])) }]"#
    );
    assert_eq!(
        update("UPDATE t SET l = [1] + 2 + l WHERE k = 0"),
        r#"[Prepend { column: "l", value: Arithmetic(Add, List([Literal(Integer("1"))]), Literal(Integer("2"))) }]"#
    );
    assert_eq!(
        update("UPDATE t SET m[1 + 1] = 2 * 3 WHERE k = 0"),
        r#"[SetElement { column: "m", key: Arithmetic(Add, Literal(Integer("1")), Literal(Integer("1"))), value: Arithmetic(Mul, Literal(Integer("2")), Literal(Integer("3"))) }]"#
    );
    assert!(update("UPDATE t SET c = 5 - c WHERE k = 0").starts_with("ERR "));

    let p = parse_statement(
        "UPDATE t SET a = 1 WHERE k = 0 + 1 AND c IN (1 + 1, ?) IF b = 3 * 4 AND m[1 + 1] = 2",
    )
    .unwrap();
    let Statement::Update(u) = p.statement else {
        panic!()
    };
    let rendered: Vec<String> = u
        .where_clause
        .iter()
        .map(|r| match r {
            Relation::Compare { value, .. } => t(value),
            Relation::In {
                values: crate::ast::InValues::Terms(ts),
                ..
            } => ts.iter().map(t).collect::<Vec<_>>().join(" "),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(rendered, ["(+ 0 1)", "(+ 1 1) ?"]);
    assert_eq!(
        format!("{:?}", u.conditions),
        r#"Columns([Compare { target: Column("b"), op: Eq, value: Arithmetic(Mul, Literal(Integer("3")), Literal(Integer("4"))) }, Compare { target: Element("m", Arithmetic(Add, Literal(Integer("1")), Literal(Integer("1")))), op: Eq, value: Literal(Integer("2")) }])"#
    );

    // LIMIT, TTL and JSON values are plain integers, markers and strings: no expressions.
    for bad in [
        "SELECT * FROM t LIMIT - 1",
        "SELECT * FROM t LIMIT 1 + 1",
        "INSERT INTO t (a) VALUES (1) USING TTL 1 + 1",
        "INSERT INTO t JSON '{}' + '{}'",
    ] {
        assert!(parse_statement(bad).is_err(), "{bad}");
    }
    assert!(parse_statement("SELECT * FROM t LIMIT -1").is_ok());
}

#[test]
fn long_chains_are_bounded() {
    let deep = vec!["a"; 150].join(" + ");
    let e = select(&deep);
    assert!(e.contains("nesting deeper than"), "{e}");
    let deep = vec!["1"; 150].join(" * ");
    let e = values(&deep);
    assert!(e.contains("nesting deeper than"), "{e}");
    let deep = format!("m{}", "[1]".repeat(150));
    let e = select(&deep);
    assert!(e.contains("nesting deeper than"), "{e}");
    // Well below the bound everything parses.
    let ok = vec!["a"; 50].join(" - ");
    assert!(!select(&ok).starts_with("ERR"));
}
