//! Fuzz-style robustness: random bytes, random token soups, and truncations and
//! mutations of valid statements must never panic, and every error must point inside
//! the text at a line and column that match its byte offset.

use crate::{parse_statement, parse_statements, Error};
use proptest::prelude::*;

/// Valid statements used as seeds for truncation and mutation.
const SEEDS: &[&str] = &[
    "SELECT JSON DISTINCT a, b AS bee, COUNT(*), writetime(c), ttl(c), token(a, b), \
     toTimestamp(now()), CAST(a AS text), m['k'], u.f FROM ks.t WHERE token(a, b) > token(?) \
     AND (c, d) > (1, 2) AND (c, d) IN ((1, 2), (3, 4)) AND e CONTAINS KEY 'k' AND g IN ? \
     GROUP BY a ORDER BY c DESC PER PARTITION LIMIT 2 LIMIT ? ALLOW FILTERING",
    "INSERT INTO t (a, b, c, d) VALUES (-1.5e3, 'it''s', {'k': [1, 2]}, (int) :x) \
     IF NOT EXISTS USING TTL 10 AND TIMESTAMP ?",
    "UPDATE t USING TTL 5 SET c = c + 1, l = [1] + l, m['k'] = 'v', u.f = {a: 1} \
     WHERE k = 550e8400-e29b-41d4-a716-446655440000 IF v = 0xcafe AND w IN (1h30m, P2W)",
    "BEGIN UNLOGGED BATCH USING TIMESTAMP 5 INSERT INTO t (a) VALUES (?); \
     DELETE m['k'] FROM t WHERE a = ? IF EXISTS; APPLY BATCH",
    "CREATE TABLE IF NOT EXISTS \"Ks\".t (a int, b text static, c frozen<map<text, \
     tuple<int, ks.u>>>, PRIMARY KEY ((a, b), c)) WITH CLUSTERING ORDER BY (c DESC) \
     AND compaction = {'class': 'LeveledCompactionStrategy'} AND comment = $$x$$",
    "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1} \
     AND durable_writes = true",
    "ALTER TABLE t ADD (c1 int, c2 set<text>) /* comment */ -- line\n",
    "CREATE ROLE IF NOT EXISTS r WITH PASSWORD = 'p' AND LOGIN = true AND OPTIONS = {'a': 'b'}",
    "GRANT EXECUTE ON FUNCTION ks.f(int, frozen<list<text>>) TO bob",
    "CREATE CUSTOM INDEX i ON t (keys(m)) USING 'C' WITH OPTIONS = {'a': 'b'}",
];

/// The (line, column) of a byte offset, counted the way the parser reports them.
fn position_of(text: &str, offset: usize) -> (u32, u32) {
    let before = &text[..offset];
    let line = before.matches('\n').count() as u32 + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() as u32;
    (line, column)
}

/// Parses `text` both ways and checks the invariants that must always hold.
fn check_invariants(text: &str) {
    // Tokens are in order, do not overlap, and their positions match their offsets.
    if let Ok(tokens) = crate::lexer::tokenize(text) {
        let mut prev_end = 0;
        for t in &tokens {
            assert!(prev_end <= t.start && t.start <= t.end, "{t:?} in {text:?}");
            assert!(text.get(t.start..t.end).is_some(), "{t:?} in {text:?}");
            assert_eq!(
                position_of(text, t.start),
                (t.line, t.column),
                "{t:?} in {text:?}"
            );
            prev_end = t.end;
        }
    }
    for result in [
        parse_statement(text).map(|p| vec![p]),
        parse_statements(text),
    ] {
        match result {
            Ok(statements) => {
                for p in statements {
                    for (i, m) in p.bind_markers.iter().enumerate() {
                        assert_eq!(m.index, i);
                    }
                    assert!(text.get(p.span.clone()).is_some());
                }
            }
            // Errors Cassandra reports without a position (see `SyntaxError`).
            Err(Error::Syntax(e)) if e.line == 0 => {
                assert!(!e.to_string().starts_with("line "), "{e} for {text:?}");
            }
            Err(Error::Syntax(e)) => {
                assert!(e.offset <= text.len(), "{e} for {text:?}");
                assert!(text.is_char_boundary(e.offset), "{e} for {text:?}");
                assert_eq!(
                    position_of(text, e.offset),
                    (e.line, e.column),
                    "{e} for {text:?}"
                );
                assert!(e.to_string().starts_with("line "));
            }
            Err(other) => panic!("the parser only reports syntax errors, got {other}"),
        }
    }
}

#[test]
fn seeds_parse() {
    for s in SEEDS {
        assert!(parse_statement(s).is_ok(), "{s}: {:?}", parse_statement(s));
    }
}

#[test]
fn every_truncation_is_handled() {
    for s in SEEDS {
        for (i, _) in s.char_indices() {
            check_invariants(&s[..i]);
            check_invariants(&s[i..]);
        }
    }
}

/// Pieces that make token soups look like CQL.
const PIECES: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "AND",
    "INSERT",
    "INTO",
    "VALUES",
    "UPDATE",
    "SET",
    "DELETE",
    "BEGIN",
    "BATCH",
    "APPLY",
    "CREATE",
    "TABLE",
    "KEYSPACE",
    "WITH",
    "PRIMARY",
    "KEY",
    "IF",
    "NOT",
    "EXISTS",
    "IN",
    "token",
    "count",
    "ttl",
    "list",
    "map",
    "frozen",
    "tuple",
    "int",
    "text",
    "<",
    ">",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ";",
    ".",
    ":",
    "?",
    "*",
    "=",
    "+",
    "-",
    "!=",
    "<=",
    "'s'",
    "''",
    "$$x$$",
    "\"Q\"",
    "1",
    "-2.5e3",
    "0xab",
    "1h",
    "P1D",
    "550e8400-e29b-41d4-a716-446655440000",
    "NaN",
    "true",
    "null",
    "a",
    "b",
    " ",
    "\n",
    "--c\n",
    "/*c*/",
    "AS",
    "CAST",
    "ORDER",
    "BY",
    "DESC",
    "LIMIT",
    "USING",
    "TIMESTAMP",
    "CONTAINS",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        check_invariants(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn random_text_never_panics(text in "\\PC{0,120}") {
        check_invariants(&text);
    }

    #[test]
    fn token_soup_never_panics(
        picks in proptest::collection::vec(0..PIECES.len(), 0..60),
        sep in prop_oneof![Just(" "), Just("")],
    ) {
        let text: Vec<&str> = picks.iter().map(|&i| PIECES[i]).collect();
        check_invariants(&text.join(sep));
    }

    #[test]
    fn mutated_statements_never_panic(
        seed in 0..SEEDS.len(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..4, 0..PIECES.len()), 1..4),
    ) {
        let mut text = SEEDS[seed].to_string();
        for (at, kind, piece) in edits {
            let boundaries: Vec<usize> =
                text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
            let pos = boundaries[at.index(boundaries.len())];
            match kind {
                // Insert a piece.
                0 => text.insert_str(pos, PIECES[piece]),
                // Delete one character.
                1 => {
                    if let Some(c) = text[pos..].chars().next() {
                        text.replace_range(pos..pos + c.len_utf8(), "");
                    }
                }
                // Truncate.
                2 => text.truncate(pos),
                // Duplicate the tail (unbalances brackets and repeats clauses).
                _ => {
                    let tail = text[pos..].to_string();
                    text.push_str(&tail);
                }
            }
        }
        check_invariants(&text);
    }
}
