//! CQL identifiers: the reserved keywords, and how a name must be spelled to be read back
//! as itself. A leaf: the parser, error texts and DESCRIBE all use it.

/// Keywords that cannot be used as unquoted identifiers: Cassandra 5.0's
/// `reserved_keywords.txt`, plus `true`/`false`, which Cassandra's lexer turns into
/// boolean tokens. (`NaN` and `Infinity` are in the reserved list.)
pub const RESERVED: &[&str] = &[
    "add",
    "allow",
    "alter",
    "and",
    "apply",
    "asc",
    "authorize",
    "batch",
    "begin",
    "by",
    "columnfamily",
    "create",
    "delete",
    "desc",
    "describe",
    "drop",
    "entries",
    "execute",
    "false",
    "from",
    "full",
    "grant",
    "if",
    "in",
    "index",
    "infinity",
    "insert",
    "into",
    "is",
    "keyspace",
    "limit",
    "materialized",
    "modify",
    "nan",
    "norecursive",
    "not",
    "null",
    "of",
    "on",
    "or",
    "order",
    "primary",
    "rename",
    "revoke",
    "schema",
    "select",
    "set",
    "table",
    "to",
    "token",
    "true",
    "truncate",
    "unlogged",
    "update",
    "use",
    "using",
    "view",
    "where",
    "with",
];

/// Whether `word` (any case) is a reserved keyword.
pub fn is_reserved(word: &str) -> bool {
    RESERVED.iter().any(|k| k.eq_ignore_ascii_case(word))
}

/// A name as CQL must spell it: as is when it is a plain lower-case identifier, else in
/// double quotes (Cassandra's `ColumnIdentifier.maybeQuote`).
pub fn quote_identifier(name: &str) -> String {
    let plain = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !is_reserved(name);
    if plain {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}
