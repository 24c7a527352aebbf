//! The value a term evaluates to, and what evaluation asks of the statement running it.
//!
//! [`TermValue`] is null, unset or native-protocol bytes; [`TermContext`] is the statement's
//! side of evaluation (bound values, the clock, randomness). [`validate_bound`] checks the
//! bytes a client bound for a marker, with Cassandra's `MarshalException` texts. This is
//! the vocabulary under term evaluation ([`super::term`]), functions and JSON: it imports
//! none of them.

use super::assign::unfrozen;
use super::error::{ValueError, ValueResult};
use crate::ast::BindMarker;
use bytes::Bytes;
use cairn_engine::model::types::CqlType;

/// The value of a term: null, unset (leave the column alone), or bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TermValue {
    Null,
    Unset,
    Value(Bytes),
}

impl TermValue {
    /// The bytes, if this is a value.
    pub fn bytes(&self) -> Option<&Bytes> {
        match self {
            TermValue::Value(b) => Some(b),
            _ => None,
        }
    }
}

/// What a bind marker is bound to.
pub type BoundValue = TermValue;

/// What evaluating a term needs from the statement's execution.
pub trait TermContext {
    /// The value bound to a marker, `None` if the request bound nothing for it.
    fn bind(&self, marker: &BindMarker) -> Option<BoundValue>;
    /// The statement's current time, in microseconds since the epoch (for `now()`,
    /// `currentTimestamp()`, `'now'`, list cell paths…).
    fn now_micros(&self) -> i64;
    /// Randomness for `uuid()` and the node half of `now()`.
    fn random_u64(&self) -> u64 {
        rand::random()
    }
    /// Whether every marker stands for a placeholder of its receiver's type instead of a
    /// bound value (PREPARE's check of a statement's shape; see [`super::placeholder`]).
    fn placeholders(&self) -> bool {
        false
    }
}

/// Validates a bound value, with Cassandra's `MarshalException` texts for native types.
pub fn validate_bound(ty: &CqlType, v: &[u8]) -> ValueResult<()> {
    use CqlType as T;
    let n = v.len();
    let msg = match unfrozen(ty) {
        T::Int if n != 4 && n != 0 => format!("Expected 4 or 0 byte int ({n})"),
        T::Bigint | T::Counter if n != 8 && n != 0 => format!("Expected 8 or 0 byte long ({n})"),
        T::Smallint if n != 2 => format!("Expected 2 bytes for a smallint ({n})"),
        T::Tinyint if n != 1 => format!("Expected 1 byte for a tinyint ({n})"),
        T::Float if n != 4 && n != 0 => format!("Expected 4 or 0 byte value for a float ({n})"),
        T::Double if n != 8 && n != 0 => format!("Expected 8 or 0 byte value for a double ({n})"),
        T::Boolean if n > 1 => format!("Expected 1 or 0 byte value ({n})"),
        T::Timestamp if n != 8 && n != 0 => format!("Expected 8 or 0 byte long for date ({n})"),
        T::Date if n != 4 => format!("Expected 4 byte long for date ({n})"),
        T::Time if n != 8 => format!("Expected 8 byte long for time ({n})"),
        T::Uuid if n != 16 && n != 0 => format!("UUID should be 16 or 0 bytes ({n})"),
        T::Timeuuid if n != 16 && n != 0 => format!("TimeUUID should be 16 or 0 bytes ({n})"),
        T::Timeuuid if n == 16 && v.get(6).is_some_and(|b| b >> 4 != 1) => {
            "Invalid version for TimeUUID type.".to_string()
        }
        T::Text if std::str::from_utf8(v).is_err() => "String didn't validate.".to_string(),
        T::Ascii if !v.is_ascii() => {
            let b = v.iter().find(|b| !b.is_ascii()).copied().unwrap_or(0);
            format!("Invalid byte for ascii: {}", b as i8)
        }
        _ => match ty.validate(v) {
            Ok(()) => return Ok(()),
            Err(e) => e.to_string(),
        },
    };
    Err(ValueError::Marshal(msg))
}
