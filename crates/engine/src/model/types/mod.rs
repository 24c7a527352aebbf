//! CQL data types: the one room for what a type is — its name and the parsing of type
//! names ([`name`]), validation of values in their native-protocol (v4) serialized form
//! ([`validate`](mod@validate)), the framing of collections and tuples ([`framing`]),
//! Cassandra's order of values ([`compare`](mod@compare)), durations and vints ([`duration`]),
//! and big numbers ([`BigInt`] for `varint`, [`BigDecimal`] for `decimal`: Java's
//! `BigInteger` and `BigDecimal`, one implementation for the order, the clustering encoding
//! and the CQL layer).
//!
//! Why here, in the engine's model: every value the engine stores is kept as the exact
//! bytes the CQL native protocol uses for it, and the engine must validate and order them
//! (clustering keys, reconciliation) without knowing CQL text. The engine is the bottom
//! crate, so the language (`cairn-cql`: literals, terms, functions) and the server build on
//! this room instead of keeping their own copies; [`super::clustering`] keeps only the
//! byte-comparable encoding and checks it against [`compare::compare`].
//!
//! Validation follows Cassandra's `TypeSerializer.validate` implementations:
//!
//! - An *empty* value (zero bytes, distinct from null) is accepted for every type whose
//!   Cassandra serializer accepts it: everything except `smallint`, `tinyint`, `date`, `time`,
//!   `duration` and the collections.
//! - Collections use the v4 layout: i32 element count, then each element as an i32 length
//!   and its bytes (maps alternate key and value). Null elements are not allowed. Tuples are
//!   a sequence of i32-length-prefixed components, `-1` meaning null, with at most as many
//!   components as the type has (Cassandra accepts a shorter tuple).
//! - Nothing may follow a complete value; Cassandra ignores bytes after a duration's three
//!   vints, we reject them, so that every accepted value has one meaning.

pub mod bigdecimal;
pub mod bigint;
pub mod compare;
pub mod duration;
pub mod framing;
pub mod name;
pub mod validate;

pub use bigdecimal::BigDecimal;
pub use bigint::BigInt;
pub use compare::compare;
pub use duration::{decode_duration, encode_duration, read_unsigned_vint, write_unsigned_vint};

/// A CQL data type. `varchar` is [`CqlType::Text`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CqlType {
    Ascii,
    Bigint,
    Blob,
    Boolean,
    Counter,
    Date,
    Decimal,
    Double,
    Duration,
    Float,
    Inet,
    Int,
    Smallint,
    Text,
    Time,
    Timestamp,
    Timeuuid,
    Tinyint,
    Uuid,
    Varint,
    List(Box<CqlType>),
    Set(Box<CqlType>),
    Map(Box<CqlType>, Box<CqlType>),
    Tuple(Vec<CqlType>),
    Frozen(Box<CqlType>),
}

/// Nanoseconds in a day: `time` values lie in `0..NANOS_PER_DAY`.
pub const NANOS_PER_DAY: i64 = 86_400_000_000_000;

/// Every native type, in name order. Their names are [`CqlType::static_name`]'s; `varchar`
/// is the one alias (of `text`).
pub const NATIVE_TYPES: [CqlType; 20] = [
    CqlType::Ascii,
    CqlType::Bigint,
    CqlType::Blob,
    CqlType::Boolean,
    CqlType::Counter,
    CqlType::Date,
    CqlType::Decimal,
    CqlType::Double,
    CqlType::Duration,
    CqlType::Float,
    CqlType::Inet,
    CqlType::Int,
    CqlType::Smallint,
    CqlType::Text,
    CqlType::Time,
    CqlType::Timestamp,
    CqlType::Timeuuid,
    CqlType::Tinyint,
    CqlType::Uuid,
    CqlType::Varint,
];

impl CqlType {
    /// The CQL name, e.g. `int`, `frozen<list<int>>`, `map<text, int>`, `tuple<int, text>`.
    pub fn name(&self) -> String {
        match self {
            CqlType::List(e) => format!("list<{}>", e.name()),
            CqlType::Set(e) => format!("set<{}>", e.name()),
            CqlType::Map(k, v) => format!("map<{}, {}>", k.name(), v.name()),
            CqlType::Tuple(ts) => {
                let inner: Vec<String> = ts.iter().map(CqlType::name).collect();
                format!("tuple<{}>", inner.join(", "))
            }
            CqlType::Frozen(t) => format!("frozen<{}>", t.name()),
            native => native.static_name().to_string(),
        }
    }

    /// Every native (non-composite) type, in name order.
    pub fn natives() -> impl Iterator<Item = &'static CqlType> {
        NATIVE_TYPES.iter()
    }

    /// A static name for error messages: the full name of a native type, the kind
    /// (`list`, `set`, `map`, `tuple`, `frozen`) of a composite one.
    pub fn static_name(&self) -> &'static str {
        match self {
            CqlType::Ascii => "ascii",
            CqlType::Bigint => "bigint",
            CqlType::Blob => "blob",
            CqlType::Boolean => "boolean",
            CqlType::Counter => "counter",
            CqlType::Date => "date",
            CqlType::Decimal => "decimal",
            CqlType::Double => "double",
            CqlType::Duration => "duration",
            CqlType::Float => "float",
            CqlType::Inet => "inet",
            CqlType::Int => "int",
            CqlType::Smallint => "smallint",
            CqlType::Text => "text",
            CqlType::Time => "time",
            CqlType::Timestamp => "timestamp",
            CqlType::Timeuuid => "timeuuid",
            CqlType::Tinyint => "tinyint",
            CqlType::Uuid => "uuid",
            CqlType::Varint => "varint",
            CqlType::List(_) => "list",
            CqlType::Set(_) => "set",
            CqlType::Map(_, _) => "map",
            CqlType::Tuple(_) => "tuple",
            CqlType::Frozen(_) => "frozen",
        }
    }

    /// True for collections and tuples, frozen or not.
    pub fn is_composite(&self) -> bool {
        matches!(
            self,
            CqlType::List(_)
                | CqlType::Set(_)
                | CqlType::Map(_, _)
                | CqlType::Tuple(_)
                | CqlType::Frozen(_)
        )
    }
}

impl std::fmt::Display for CqlType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// `ty` without its `frozen<…>` wrappers.
pub fn unfrozen(mut ty: &CqlType) -> &CqlType {
    while let CqlType::Frozen(inner) = ty {
        ty = inner;
    }
    ty
}
