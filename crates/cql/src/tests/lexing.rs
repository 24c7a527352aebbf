//! Lexing round trips: case, quoting, escapes, comments and unreserved keywords.

use crate::{parse_statement, Statement};

fn stmt(src: &str) -> Statement {
    match parse_statement(src) {
        Ok(p) => p.statement,
        Err(e) => panic!("{src}: {e}"),
    }
}

/// Pairs of texts that must mean exactly the same thing.
#[test]
fn equivalent_spellings() {
    let pairs = [
        ("sElEcT * fRoM T wHeRe K = 1", "SELECT * FROM t WHERE k = 1"),
        (
            "SELECT /* block\n comment */ * -- line comment\n FROM // other\n t;",
            "SELECT * FROM t",
        ),
        ("SELECT\t*\r\nFROM\n\n t ;;", "SELECT * FROM t"),
        ("SELECT * FROM \"t\"", "SELECT * FROM t"),
        (
            "INSERT INTO t (a) VALUES ($$it's$$)",
            "INSERT INTO t (a) VALUES ('it''s')",
        ),
        (
            "SELECT * FROM t WHERE a=1AND b=2",
            "SELECT * FROM t WHERE a = 1 AND b = 2",
        ),
        (
            "UPDATE t SET c=c+1 WHERE k=1",
            "UPDATE t SET c = c + 1 WHERE k = 1",
        ),
        (
            "UPDATE t SET c=c-1 WHERE k=1",
            "UPDATE t SET c = c - 1 WHERE k = 1",
        ),
        (
            "CREATE TABLE t(a int,b int,PRIMARY KEY(a,b))WITH CLUSTERING ORDER BY(b desc)",
            "CREATE TABLE t (a int, b int, PRIMARY KEY (a, b)) WITH CLUSTERING ORDER BY (b DESC)",
        ),
        (
            "CREATE TABLE t (a MAP<TEXT,FROZEN<LIST<INT>>> PRIMARY KEY)",
            "create table t (a map<text, frozen<list<int>>> primary key)",
        ),
    ];
    for (a, b) in pairs {
        assert_eq!(stmt(a), stmt(b), "{a:?} vs {b:?}");
    }
}

#[test]
fn quoted_identifiers_keep_case_and_escapes() {
    let Statement::Select(s) = stmt(r#"SELECT "MiXed", MiXed, "a""b", "select" FROM "KS"."Tab""#)
    else {
        panic!()
    };
    assert_eq!(s.table.keyspace.as_deref(), Some("KS"));
    assert_eq!(s.table.name, "Tab");
    let cols: Vec<String> = s
        .selectors
        .unwrap()
        .into_iter()
        .map(|sel| format!("{:?}", sel.expr))
        .collect();
    assert_eq!(
        cols,
        vec![
            r#"Column("MiXed")"#,
            r#"Column("mixed")"#,
            r#"Column("a\"b")"#,
            r#"Column("select")"#
        ]
    );
}

#[test]
fn string_escapes() {
    let Statement::Insert(i) =
        stmt("INSERT INTO t (a, b, c, d) VALUES ('''', 'a''''b', $$ $ '' $$, 'line\nbreak')")
    else {
        panic!()
    };
    assert_eq!(
        format!("{:?}", i.values),
        r#"Columns { columns: ["a", "b", "c", "d"], values: [Literal(String("'")), Literal(String("a''b")), Literal(String(" $ '' ")), Literal(String("line\nbreak"))] }"#
    );
}

/// Cassandra's unreserved keywords (and native type names) are ordinary names.
#[test]
fn unreserved_keywords_are_identifiers() {
    let words = [
        "key",
        "keys",
        "value",
        "values",
        "type",
        "types",
        "ttl",
        "writetime",
        "maxwritetime",
        "count",
        "json",
        "distinct",
        "static",
        "list",
        "map",
        "ascii",
        "frozen",
        "tuple",
        "vector",
        "login",
        "password",
        "role",
        "roles",
        "user",
        "users",
        "options",
        "filtering",
        "clustering",
        "compact",
        "storage",
        "contains",
        "custom",
        "exists",
        "as",
        "all",
        "per",
        "partition",
        "group",
        "like",
        "cast",
        "text",
        "int",
        "timestamp",
        "date",
        "counter",
        "function",
        "aggregate",
        "trigger",
        "superuser",
        "nosuperuser",
        "permissions",
        "keyspaces",
        "default",
        "unset",
        "hashed",
        "access",
        "datacenters",
        "mbean",
    ];
    for w in words {
        for src in [
            format!("SELECT {w} FROM t WHERE {w} = 1"),
            format!("SELECT {w} AS {w} FROM {w}.{w}"),
            format!("CREATE TABLE {w} ({w} int PRIMARY KEY, x int)"),
            format!("INSERT INTO t ({w}) VALUES (1)"),
            format!("UPDATE t SET {w} = {w} + 1 WHERE {w} = 1"),
            format!("DELETE {w} FROM t WHERE {w} = 1"),
            format!("USE {w}"),
        ] {
            if let Err(e) = parse_statement(&src) {
                panic!("{src}: {e}");
            }
        }
    }
}

/// Every reserved keyword is refused as a bare name and accepted when quoted.
#[test]
fn reserved_keywords_need_quotes() {
    for w in crate::identifier::RESERVED {
        // A column list has no keyword alternatives (`CREATE TABLE if ...` would read
        // as IF NOT EXISTS), so every reserved word gets the same error there.
        let bare = format!("INSERT INTO t ({w}) VALUES (1)");
        let e = parse_statement(&bare).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!("line 1:15 no viable alternative at input '{w}'")),
            "{bare}: {msg}"
        );
        let quoted = format!("CREATE TABLE \"{w}\" (\"{w}\" int PRIMARY KEY)");
        assert!(parse_statement(&quoted).is_ok(), "{quoted}");
        assert!(crate::is_reserved(&w.to_uppercase()));
    }
}

#[test]
fn numbers_and_special_literals() {
    let Statement::Select(s) = stmt(
        "SELECT * FROM t WHERE a = -0 AND b = 1.e5 AND c = -NaN AND d = 0x00ff \
         AND e = -1h AND f = 9223372036854775808 AND g = 1E-7",
    ) else {
        panic!()
    };
    let values: Vec<String> = s
        .where_clause
        .iter()
        .map(|r| match r {
            crate::ast::Relation::Compare { value, .. } => format!("{value:?}"),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        values,
        vec![
            r#"Literal(Integer("-0"))"#,
            r#"Literal(Float("1.e5"))"#,
            r#"Literal(Float("NaN"))"#,
            r#"Literal(Blob("0x00ff"))"#,
            r#"Literal(Duration("-1h"))"#,
            r#"Literal(Integer("9223372036854775808"))"#,
            r#"Literal(Float("1E-7"))"#,
        ]
    );
}
