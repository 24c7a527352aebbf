//! Syntax errors: messages (Cassandra's wording) and exact positions.

use crate::{parse_statement, Error, MAX_DEPTH};

fn err(src: &str) -> String {
    match parse_statement(src) {
        Ok(p) => panic!("{src} parsed: {:?}", p.statement),
        Err(e) => e.to_string(),
    }
}

#[test]
fn messages_and_positions() {
    let cases = [
        // Misspelled keywords.
        (
            "SELCT * FROM t",
            "line 1:0 no viable alternative at input 'SELCT' ([SELCT] * FROM...)",
        ),
        (
            "SELECT * FROMM t",
            "line 1:9 mismatched input 'FROMM' expecting K_FROM (SELECT * [FROMM] t)",
        ),
        (
            "INSERT INTO t (a) VALUE (1)",
            "line 1:18 mismatched input 'VALUE' expecting K_VALUES (INSERT INTO t (a) [VALUE] (1...)",
        ),
        (
            "CREATE TABEL t (a int PRIMARY KEY)",
            "line 1:7 no viable alternative at input 'TABEL' (CREATE [TABEL] t (...)",
        ),
        // Missing parentheses.
        (
            "INSERT INTO t (a, b VALUES (1, 2)",
            "line 1:20 mismatched input 'VALUES' expecting ')' (INSERT INTO t (a, b [VALUES] (1...)",
        ),
        (
            "CREATE TABLE t (a int PRIMARY KEY",
            "line 1:33 mismatched input '<EOF>' expecting ')'",
        ),
        (
            "SELECT * FROM t WHERE a IN (1, 2",
            "line 1:32 mismatched input '<EOF>' expecting ')'",
        ),
        // Unterminated literals and comments (lexer errors carry no snippet).
        (
            "SELECT * FROM t WHERE a = 'abc",
            "line 1:30 mismatched character '<EOF>' expecting '''",
        ),
        (
            "SELECT * FROM \"t",
            "line 1:16 mismatched character '<EOF>' expecting '\"'",
        ),
        (
            "SELECT * FROM t WHERE a = $$abc",
            "line 1:31 mismatched character '<EOF>' expecting '$'",
        ),
        (
            "SELECT * /* never closed\n FROM t",
            "line 2:7 mismatched character '<EOF>' expecting '*'",
        ),
        (
            "SELECT * FROM t WHERE a = #",
            "line 1:26 no viable alternative at character '#'",
        ),
        // Trailing garbage.
        (
            "SELECT * FROM t garbage",
            "line 1:16 mismatched input 'garbage' expecting EOF (SELECT * FROM t [garbage])",
        ),
        (
            "USE ks; USE other",
            "line 1:8 mismatched input 'USE' expecting EOF (USE ks; [USE] other)",
        ),
        // Reserved keywords as unquoted names.
        (
            "CREATE TABLE select (a int PRIMARY KEY)",
            "line 1:13 no viable alternative at input 'select' (CREATE TABLE [select] (a...)",
        ),
        (
            "SELECT from FROM t",
            "line 1:7 no viable alternative at input 'from' (SELECT [from] FROM t)",
        ),
        (
            "CREATE TABLE t (a int PRIMARY KEY, limit int)",
            "line 1:35 no viable alternative at input 'limit' (CREATE TABLE t (a int PRIMARY KEY, [limit] int))",
        ),
        // Incomplete statements and misc.
        ("", "line 1:0 no viable alternative at input '<EOF>'"),
        (
            "SELECT * FROM t WHERE",
            "line 1:21 no viable alternative at input '<EOF>'",
        ),
        (
            "DESCRIBE KEYSPACES",
            "line 1:0 no viable alternative at input 'DESCRIBE' ([DESCRIBE] KEYSPACES)",
        ),
        (
            "DELETE FROM t USING TTL 5 WHERE k = 1",
            "line 1:20 mismatched input 'TTL' expecting K_TIMESTAMP (DELETE FROM t USING [TTL] 5 WHERE...)",
        ),
        (
            "UPDATE t SET c = d + 1 WHERE k = 1",
            "line 1:17 Only expressions of the form X = X +<value> are supported. (UPDATE t SET c = [d] + 1...)",
        ),
        (
            "UPDATE t SET l = [1] + m WHERE k = 1",
            "line 1:23 Only expressions of the form X = <value> + X are supported. (UPDATE t SET l = [1] + [m] WHERE k...)",
        ),
        (
            "CREATE TABLE t (a int PRIMARY KEY) WITH comment = 'a' AND comment = 'b'",
            "Multiple definitions for property 'comment'",
        ),
        (
            "CREATE TYPE ks.int (a int)",
            "line 1:15 no viable alternative at input 'int' (CREATE TYPE ks.[int] (a...)",
        ),
        (
            "CREATE TABLE t (k int PRIMARY KEY, v frozen<ttl>)",
            "line 1:44 no viable alternative at input 'ttl' (...t (k int PRIMARY KEY, v frozen<[ttl]>))",
        ),
        (
            "CREATE TYPE t (a int, b enum)",
            "line 1:24 Invalid (reserved) user type name enum (CREATE TYPE t (a int, b [enum]))",
        ),
        (
            "INSERT INTO t (a) VALUES (- - 1)",
            "line 1:28 no viable alternative at input '-' (INSERT INTO t (a) VALUES (- [-] 1))",
        ),
        (
            "SELECT * FROM t LIMIT 'x'",
            "line 1:22 no viable alternative at input 'x' (SELECT * FROM t LIMIT ['x'])",
        ),
    ];
    for (src, want) in cases {
        assert_eq!(err(src), want, "{src}");
    }
}

#[test]
fn multi_line_positions() {
    let src = "SELECT *\n  FROM t\n  WHERE a = = 1";
    let e = parse_statement(src).unwrap_err();
    let Error::Syntax(s) = &e else {
        panic!("not a syntax error: {e}")
    };
    assert_eq!((s.line, s.column, s.offset), (3, 12, 30));
    assert_eq!(&src[s.offset..s.offset + 1], "=");
    // Lines are concatenated in the snippet, as Cassandra does.
    assert_eq!(
        e.to_string(),
        "line 3:12 no viable alternative at input '=' (SELECT *  FROM t  WHERE a = [=] 1)"
    );
    // Columns count characters, not bytes.
    let e = parse_statement("SELECT * FROM t WHERE a = 'é' b").unwrap_err();
    assert_eq!(e.as_syntax().map(|s| s.column), Some(30));
}

/// Deep nesting is an error, never a stack overflow, whatever the construct.
#[test]
fn nesting_is_bounded() {
    let nested = |open: &str, close: &str, n: usize, inner: &str| {
        format!("{}{inner}{}", open.repeat(n), close.repeat(n))
    };
    let ok_depth = MAX_DEPTH - 1;
    let lists = |n| format!("INSERT INTO t (a) VALUES ({})", nested("[", "]", n, "1"));
    assert!(parse_statement(&lists(ok_depth)).is_ok());
    for n in [MAX_DEPTH, 1_000, 100_000] {
        let e = parse_statement(&lists(n)).unwrap_err().to_string();
        assert!(e.contains("nesting deeper than 100 levels"), "{e}");
    }
    let deep_inputs = [
        format!(
            "INSERT INTO t (a) VALUES ({})",
            nested("f(", ")", 5_000, "")
        ),
        format!(
            "INSERT INTO t (a) VALUES ({})",
            nested("(", ")", 5_000, "1")
        ),
        format!(
            "INSERT INTO t (a) VALUES ({})",
            nested("{", "}", 5_000, "1")
        ),
        format!(
            "INSERT INTO t (a) VALUES ({})",
            nested("(int)", "", 5_000, "1")
        ),
        format!("SELECT {} FROM t", nested("f(", ")", 5_000, "a")),
        format!("SELECT {} FROM t", nested("cast(", " as int)", 5_000, "a")),
        format!(
            "CREATE TABLE t (a {} PRIMARY KEY)",
            nested("list<", ">", 5_000, "int")
        ),
        format!(
            "CREATE TABLE t (a {} PRIMARY KEY)",
            nested("tuple<", ">", 5_000, "int")
        ),
    ];
    for src in deep_inputs {
        let e = parse_statement(&src).unwrap_err().to_string();
        assert!(e.contains("nesting deeper than"), "{}: {e}", &src[..40]);
    }
}

/// The deepest accepted nesting fits in 1 MiB of stack even in an unoptimised build
/// (measured: 512 KiB is not enough at opt-level 0, plenty at opt-level 1), so parsing
/// on tokio's 2 MiB worker threads is safe.
#[test]
fn deepest_accepted_nesting_fits_a_small_stack() {
    let n = MAX_DEPTH - 1;
    let inputs = vec![
        format!(
            "INSERT INTO t (a) VALUES ({}1{})",
            "[".repeat(n),
            "]".repeat(n)
        ),
        format!(
            "INSERT INTO t (a) VALUES ({}1{})",
            "{".repeat(n),
            "}".repeat(n)
        ),
        format!(
            "INSERT INTO t (a) VALUES ({}1{})",
            "(".repeat(n),
            ")".repeat(n)
        ),
        format!(
            "INSERT INTO t (a) VALUES ({}{})",
            "f(".repeat(n),
            ")".repeat(n)
        ),
        format!(
            "SELECT {}a{} FROM t",
            "cast(".repeat(n - 1),
            " as int)".repeat(n - 1)
        ),
        format!("SELECT {}a{} FROM t", "f(".repeat(n), ")".repeat(n)),
        format!("SELECT {}a{} FROM t", "(".repeat(n - 1), ")".repeat(n - 1)),
        format!("SELECT {}a FROM t", "- ".repeat(n - 1)),
        format!("SELECT m{} FROM t", "[1]".repeat(n - 1)),
        format!("SELECT {} FROM t", vec!["a"; n - 1].join(" * ")),
        format!(
            "INSERT INTO t (a) VALUES ({})",
            vec!["1"; n - 1].join(" - ")
        ),
        format!(
            "CREATE TABLE t (a {}int{} PRIMARY KEY)",
            "list<".repeat(n),
            ">".repeat(n)
        ),
    ];
    let handle = std::thread::Builder::new()
        .stack_size(1024 * 1024)
        .spawn(move || {
            for src in &inputs {
                if let Err(e) = parse_statement(src) {
                    panic!("{}: {e}", &src[..40]);
                }
            }
        })
        .unwrap();
    handle.join().unwrap();
}
