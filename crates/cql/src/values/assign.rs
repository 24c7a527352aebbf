//! How well a value of one type fits a receiver of another: Cassandra's
//! `AssignmentTestable.TestResult` and `isValueCompatibleWith`, shared by term evaluation
//! ([`super::term`]), term fit and function resolution ([`super::fit`]) and operator
//! resolution ([`super::arithmetic`]).

use cairn_engine::model::types::CqlType;

/// How well a term fits a type (Cassandra's `AssignmentTestable.TestResult`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Assignment {
    /// The term's own type is the receiver's.
    Exact,
    /// The term can be converted to the receiver's type.
    Weak,
    /// It cannot.
    No,
}

impl Assignment {
    /// Exact or weak.
    pub fn is_assignable(self) -> bool {
        self != Assignment::No
    }
}

pub use cairn_engine::model::types::unfrozen;

/// Whether a value of type `from` can be stored as `to` without conversion (Cassandra's
/// `isValueCompatibleWith`, for the cases that matter to terms).
pub fn value_compatible(to: &CqlType, from: &CqlType) -> bool {
    use CqlType as T;
    let (to, from) = (unfrozen(to), unfrozen(from));
    if to == from {
        return true;
    }
    matches!(
        (to, from),
        (T::Blob, _)
            | (T::Text, T::Ascii)
            | (T::Uuid, T::Timeuuid)
            | (T::Varint, T::Int | T::Bigint | T::Timestamp)
            | (T::Bigint, T::Timestamp)
            | (T::Timestamp, T::Bigint)
            | (T::Date, T::Int)
            | (T::Time, T::Bigint)
    )
}
