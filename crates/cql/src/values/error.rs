//! The error type of the value layer.
//!
//! Every message is the text Cassandra puts in the `InvalidRequest` (0x2200) error for the
//! same mistake, because drivers and test suites compare those texts. Three shapes cover all
//! of them:
//!
//! - [`ValueError::InvalidConstant`]: a literal of a kind the receiver does not accept, e.g.
//!   `Invalid STRING constant (foo) for "a" of type int` (Cassandra's `Constants.Literal`).
//! - [`ValueError::Marshal`]: a literal of an accepted kind whose text does not convert, e.g.
//!   `Unable to make int from '3000000000'` (the `MarshalException` text Cassandra forwards).
//! - [`ValueError::Invalid`]: every other request error (collection and tuple shapes, nulls
//!   inside collections, function calls, bound values that do not validate…).
//!
//! [`ValueError::FunctionFailure`] is the one error that is not an `InvalidRequest`: a
//! function or operator that fails while running (division by zero), Cassandra's
//! Function_failure (0x1400).

/// Result alias for the value layer.
pub type ValueResult<T> = std::result::Result<T, ValueError>;

/// A value that cannot be built or converted. `Display` is Cassandra's message text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    /// A literal of a kind the receiver's type never accepts.
    #[error("Invalid {kind} constant ({text}) for \"{receiver}\" of type {type_name}")]
    InvalidConstant {
        /// Cassandra's name of the literal kind: `STRING`, `INTEGER`, `FLOAT`, `BOOLEAN`,
        /// `UUID`, `HEX` or `DURATION`.
        kind: &'static str,
        /// The literal as written (strings without their quotes).
        text: String,
        /// The receiver: a column name, or `value(c)`, `key(c)`, `c[0]`… for parts of one.
        receiver: String,
        /// The receiver's CQL type name.
        type_name: String,
    },
    /// The text of an accepted literal kind does not convert to the type.
    #[error("{0}")]
    Marshal(String),
    /// Any other invalid request.
    #[error("{0}")]
    Invalid(String),
    /// A function or operator failed while running: Cassandra's
    /// `FunctionExecutionException`, the one error here that is not an `InvalidRequest`.
    #[error("{0}")]
    FunctionFailure(FunctionFailure),
}

/// A function or operator that failed while running, e.g. `the operation 'int / int'
/// failed: / by zero`. Sent as the protocol's Function_failure error (0x1400), which carries
/// the function's keyspace, name and argument types besides the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionFailure {
    /// The function's keyspace (`system` for the native ones).
    pub keyspace: String,
    /// The function's name (`_add`, `_divide`… for the operators).
    pub function: String,
    /// The CQL names of the argument types.
    pub arg_types: Vec<String>,
    /// The message.
    pub message: String,
}

impl std::fmt::Display for FunctionFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl ValueError {
    /// An [`ValueError::Invalid`] from anything printable.
    pub fn invalid(msg: impl Into<String>) -> Self {
        ValueError::Invalid(msg.into())
    }

    /// A [`ValueError::Marshal`] from anything printable.
    pub fn marshal(msg: impl Into<String>) -> Self {
        ValueError::Marshal(msg.into())
    }

    /// The message, as sent to the client.
    pub fn message(&self) -> String {
        self.to_string()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn texts() {
        let e = ValueError::InvalidConstant {
            kind: "STRING",
            text: "foo".into(),
            receiver: "a".into(),
            type_name: "int".into(),
        };
        assert_eq!(
            e.to_string(),
            "Invalid STRING constant (foo) for \"a\" of type int"
        );
        assert_eq!(ValueError::marshal("x").message(), "x");
        assert_eq!(ValueError::invalid("y").to_string(), "y");
    }
}
