//! The CQL language front end: text in, typed syntax tree out.
//!
//! - [`lexer`] splits query text into tokens with line/column positions;
//! - [`parser`] is a hand-written recursive-descent parser over those tokens;
//! - [`ast`] is the tree it produces, one type per statement kind;
//! - [`identifier`] holds the reserved keywords and how a name is quoted;
//! - [`error`] is the crate's error type, whose syntax errors read like Cassandra's
//!   `SyntaxException` messages.
//!
//! Nothing here executes anything; the executor takes a [`ParsedStatement`] and resolves
//! names, types and values against the schema.
//!
//! What is parsed: USE; CREATE/ALTER/DROP KEYSPACE, TABLE, TYPE, MATERIALIZED VIEW;
//! CREATE/DROP INDEX;
//! TRUNCATE; SELECT (JSON, DISTINCT, functions, CAST, aliases, arithmetic `+ - * / %` and
//! unary `-` with parentheses, element and slice selection `c[k]`, `c[a..b]`, WRITETIME /
//! MAXWRITETIME / TTL of columns, elements and slices, WHERE with single-column,
//! multi-column, `token(...)`, IN, CONTAINS (KEY), LIKE, IS NOT NULL relations, GROUP BY,
//! ORDER BY, PER PARTITION LIMIT, LIMIT, ALLOW FILTERING); INSERT (values or JSON);
//! UPDATE (all assignment forms); DELETE; BATCH; roles, legacy users, GRANT/REVOKE/LIST.
//! Terms (values, SET, WHERE, IF, function arguments) take Cassandra's arithmetic too.
//! Left out on purpose (a syntax error, as for an unknown statement):
//! functions and aggregates, triggers, DESCRIBE (cqlsh falls back to driver metadata on
//! a syntax error), Scylla's `USING TIMEOUT` and `BYPASS CACHE`. Refused by name although
//! Cassandra 5 has them: selector tuples and type hints of anything but constants and
//! markers (`(a, b)`, `(int) a`), `CAST` in terms, and WRITETIME/TTL of user-type fields or
//! nested elements.
//!
//! ```
//! use cairn_cql::{parse_statement, Statement};
//! let parsed = parse_statement("SELECT * FROM ks.t WHERE pk = ? AND ck > ?").unwrap();
//! assert!(matches!(parsed.statement, Statement::Select(_)));
//! assert_eq!(parsed.bind_markers.len(), 2);
//! ```

#![deny(clippy::unwrap_used, clippy::expect_used)]

pub mod ast;
pub mod audit;
pub mod error;
pub mod exec;
pub mod identifier;
pub mod lexer;
pub mod parser;
pub mod trace;
pub mod values;

pub use ast::{ParsedStatement, Statement};
pub use error::{Error, Result, SyntaxError};
pub use identifier::{is_reserved, quote_identifier};
pub use parser::{parse_statement, parse_statements, MAX_DEPTH};

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
