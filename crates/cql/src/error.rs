//! The crate's error type.
//!
//! Parse errors mimic the text of Cassandra's `SyntaxException` (protocol error code
//! 0x2000), because drivers, cqlsh and test suites match on it: an ANTLR-style header
//! `line L:C`, a message such as `no viable alternative at input 'FROMM'` or
//! `mismatched input 'x' expecting K_FROM`, and — for errors found by the parser rather
//! than the lexer — a snippet of the query with the offending token in brackets, e.g.
//! `line 1:14 no viable alternative at input 'FROMM' (SELECT * FROM [FROMM])`.

use cairn_cluster::consistency::Consistency;
use cairn_cluster::fault::{storage_failure, FailedRequest};

/// The replica a storage fault is reported from when no coordinator names it: a lone node,
/// on loopback (a cluster's coordinator names the replica's own address).
const THIS_NODE: std::net::IpAddr = std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong in the CQL front end.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The text is not valid CQL. Maps to the native protocol's Syntax error (0x2000).
    #[error("{0}")]
    Syntax(SyntaxError),
    /// A valid statement that cannot be executed as given (Invalid, 0x2200).
    #[error("{0}")]
    Invalid(String),
    /// Bad schema options (Config_error, 0x2300).
    #[error("{0}")]
    Configuration(String),
    /// The keyspace or table exists already (Already_exists, 0x2400).
    #[error("{message}")]
    AlreadyExists {
        keyspace: String,
        /// Empty for a keyspace.
        table: String,
        message: String,
    },
    /// The logged-in role may not do this (Unauthorized, 0x2100).
    #[error("{0}")]
    Unauthorized(String),
    /// Wrong user name or password (Bad_credentials, 0x0100).
    #[error("{0}")]
    BadCredentials(String),
    /// The node cannot take more work now (Overloaded, 0x1001).
    #[error("{0}")]
    Overloaded(String),
    /// An EXECUTE for a statement id this node does not know (Unprepared, 0x2500).
    #[error("Prepared query with ID {} not found (either the query was not prepared on this host (maybe the host has been restarted?) or you have prepared too many queries and it has been evicted from the internal cache)", hex(.0))]
    Unprepared(Vec<u8>),
    /// A function or operator failed while running (Function_failure, 0x1400), e.g. a
    /// division by zero; the protocol error carries the function's keyspace, name and
    /// argument types.
    #[error("{0}")]
    FunctionFailure(crate::values::error::FunctionFailure),
    /// Too few replicas are up for the request's consistency level (Unavailable, 0x1000;
    /// the protocol error carries the level, the replicas required and those alive).
    #[error("{0}")]
    Unavailable(cairn_cluster::consistency::Unavailable),
    /// A write's replicas did not answer in time for its level (Write_timeout, 0x1100).
    #[error("{0}")]
    WriteTimeout(cairn_cluster::consistency::WriteTimeout),
    /// A write's replicas refused it beyond what its level allows (Write_failure, 0x1500).
    #[error("{0}")]
    WriteFailure(cairn_cluster::consistency::WriteFailure),
    /// A read's replicas did not answer in time for its level (Read_timeout, 0x1200).
    #[error("{0}")]
    ReadTimeout(cairn_cluster::consistency::ReadTimeout),
    /// A replica failed a read (Read_failure, 0x1300).
    #[error("{0}")]
    ReadFailure(cairn_cluster::consistency::ReadFailure),
    /// A schema change prepared against a schema another node has changed since: checked
    /// again by the executor, answered as a server error only if that keeps happening.
    #[error("The schema was changed by another node while this change was prepared; try again")]
    SchemaConflict,
    /// A failure inside the node (Server_error, 0x0000).
    #[error("{0}")]
    Server(String),
    /// Run with `Wait::Never`, the statement would have waited (see `cairn_engine::io::Wait`);
    /// nothing was changed. Never sent to a client: the server runs the statement again with
    /// `Wait::Allowed` where it may block.
    #[error("the statement would block")]
    WouldBlock,
    /// The audit log's sink cannot take records (`audit: syslog` with no socket at its
    /// path, …): stops the node at start; later, the record goes to the node's log.
    #[error("audit log ({sink}): {reason}")]
    AuditSink { sink: &'static str, reason: String },
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl From<cairn_engine::Error> for Error {
    fn from(e: cairn_engine::Error) -> Self {
        // A storage fault that reaches here met no coordinator: a lone node's own, at ONE
        // with one replica (the coordinator reports its replicas' with
        // `cairn_cluster::fault::storage_failure`, its level and their addresses).
        if let Some(fault) = e.storage_fault() {
            let request = FailedRequest::of(&fault);
            if let Some(f) = storage_failure(&e, request, Consistency::One, 0, 1, THIS_NODE) {
                return Error::from(f);
            }
        }
        match e {
            cairn_engine::Error::Option(o) => Error::Configuration(o.to_string()),
            cairn_engine::Error::Overloaded => Error::Overloaded(e.to_string()),
            cairn_engine::Error::WouldBlock => Error::WouldBlock,
            cairn_engine::Error::InvalidValue { .. } | cairn_engine::Error::InvalidMutation(_) => {
                Error::Invalid(e.to_string())
            }
            other => Error::Server(other.to_string()),
        }
    }
}

impl From<cairn_cluster::Error> for Error {
    /// A storage proxy's error: Unavailable as such, the engine's as the engine's, anything
    /// else a server error.
    fn from(e: cairn_cluster::Error) -> Self {
        match e {
            cairn_cluster::Error::Unavailable(u) => Error::Unavailable(u),
            cairn_cluster::Error::WriteTimeout(t) => Error::WriteTimeout(t),
            cairn_cluster::Error::WriteFailure(f) => Error::WriteFailure(f),
            cairn_cluster::Error::ReadTimeout(t) => Error::ReadTimeout(t),
            cairn_cluster::Error::ReadFailure(f) => Error::ReadFailure(f),
            cairn_cluster::Error::Engine(e) => Error::from(e),
            other => Error::Server(other.to_string()),
        }
    }
}

impl From<crate::values::ValueError> for Error {
    /// A value error as the request's error: Function_failure for a failed function or
    /// operator, Invalid for everything else.
    fn from(e: crate::values::ValueError) -> Self {
        match e {
            crate::values::ValueError::FunctionFailure(f) => Error::FunctionFailure(f),
            other => Error::Invalid(other.to_string()),
        }
    }
}

impl Error {
    /// Cassandra 5's text for a column the table does not have.
    pub fn undefined_column(schema: &cairn_engine::schema::TableSchema, name: &str) -> Error {
        use crate::identifier::quote_identifier as q;
        Error::Invalid(format!(
            "Undefined column name {} in table {}.{}",
            q(name),
            q(&schema.keyspace),
            q(&schema.name)
        ))
    }

    /// A syntax error without a position (Cassandra's property validation errors).
    pub fn syntax(message: impl Into<String>) -> Error {
        Error::Syntax(SyntaxError::unpositioned(message))
    }

    /// The syntax error inside, if this is one.
    pub fn as_syntax(&self) -> Option<&SyntaxError> {
        match self {
            Error::Syntax(e) => Some(e),
            _ => None,
        }
    }
}

/// A syntax error with its position.
///
/// `line` is 1-based and `column` is the 0-based character offset inside that line, the
/// same convention as Cassandra's `line 1:13` header, so the numbers can be compared with
/// what Cassandra reports for the same text. (One deliberate difference: for errors at the
/// end of the input Cassandra prints `line 0:-1`; we print the real position of the end.)
///
/// `line == 0` marks an error found after parsing, which Cassandra still reports as a syntax
/// error but without a position (`Unknown property 'foo'`, `Invalid integer value x for
/// 'gc_grace_seconds'`): it is shown as the bare message (see [`SyntaxError::unpositioned`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// 1-based line of the offending input.
    pub line: u32,
    /// 0-based character column of the offending input within its line.
    pub column: u32,
    /// Byte offset of the offending input in the query text.
    pub offset: usize,
    /// The message after the `line L:C` header, including any query snippet.
    pub message: String,
}

impl SyntaxError {
    /// A syntax error without a position: Cassandra's `SyntaxException`s thrown while
    /// validating properties, shown as the bare message.
    pub fn unpositioned(message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            line: 0,
            column: 0,
            offset: 0,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            return f.write_str(&self.message);
        }
        write!(f, "line {}:{} {}", self.line, self.column, self.message)
    }
}

#[cfg(test)]
mod storage_fault_tests {
    use super::*;

    #[test]
    fn a_lone_nodes_storage_fault_is_a_read_or_write_failure_at_one() {
        let e = cairn_engine::Error::corruption(
            "/d/ks/t-1/ca-3-Data.db",
            65536,
            cairn_engine::CorruptionKind::Decompress,
        );
        let Error::ReadFailure(f) = Error::from(e) else {
            panic!("not a read failure");
        };
        assert_eq!(
            (
                f.consistency,
                f.received,
                f.block_for,
                f.failures.len(),
                f.data_present
            ),
            (Consistency::One, 0, 1, 1, false)
        );
        assert!(
            f.to_string().contains("ca-3-Data.db at offset 65536"),
            "{f}"
        );
        let io = std::io::Error::from_raw_os_error(5);
        let e = cairn_engine::Error::io("/c/CommitLog-1-9.log", io);
        assert!(matches!(Error::from(e), Error::WriteFailure(_)));
        assert!(matches!(
            Error::from(cairn_engine::Error::Overloaded),
            Error::Overloaded(_)
        ));
    }
}
