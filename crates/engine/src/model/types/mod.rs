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
    /// A user-defined type. Bare, it is a non-frozen UDT column's type (stored field by
    /// field); inside [`CqlType::Frozen`] a frozen one (stored whole, as a tuple of its
    /// fields). Values are framed as a tuple of its field types.
    Udt(Box<UserType>),
}

/// A user-defined type's definition as the values of a column carry it: a UDT value is a
/// tuple of `field_types`; the names are for display, JSON and field selection.
///
/// Invariant: `field_names` and `field_types` have the same length (at least 1, as
/// `CREATE TYPE` requires), and the names are distinct.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UserType {
    /// The keyspace the type belongs to.
    pub keyspace: String,
    /// The type's name (as created: case kept when quoted).
    pub name: String,
    /// Field names, in field order.
    pub field_names: Vec<String>,
    /// Field types, in field order.
    pub field_types: Vec<CqlType>,
}

impl UserType {
    /// The position of the field named `name`.
    pub fn field_position(&self, name: &str) -> Option<usize> {
        self.field_names.iter().position(|f| f == name)
    }

    /// The type of the field at `position`, if there is one: what code indexing fields by
    /// position uses, so that a position from elsewhere (a stored value, a path) never
    /// panics.
    pub fn field_type(&self, position: usize) -> Option<&CqlType> {
        self.field_types.get(position)
    }

    /// The position and type of the field named `name`.
    pub fn field(&self, name: &str) -> Option<(usize, &CqlType)> {
        let i = self.field_position(name)?;
        Some((i, self.field_type(i)?))
    }

    /// Fields as (name, type) pairs.
    pub fn fields(&self) -> impl Iterator<Item = (&String, &CqlType)> {
        self.field_names.iter().zip(&self.field_types)
    }
}

/// `name` as CQL would need it written: unquoted when it is a plain lower-case identifier,
/// double-quoted (inner quotes doubled) otherwise — Cassandra's `ColumnIdentifier.maybeQuote`
/// without its keyword list, which only the CQL layer knows.
pub fn maybe_quote(name: &str) -> String {
    let plain = name.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if plain {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
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
    /// The CQL name, e.g. `int`, `frozen<list<int>>`, `map<text, int>`, `tuple<int, text>`;
    /// a user type by its name alone (`frozen<address>`), as Cassandra's `asCQL3Type` shows
    /// it. [`CqlType::parse`] cannot rebuild a user type from it: see
    /// [`CqlType::full_name`].
    pub fn name(&self) -> String {
        self.spell(false)
    }

    /// The name with every user type's definition spelled out (`udt<"ks"."address",
    /// "street" text, "zip" int>`), which [`CqlType::parse`] reads back: what a stored table
    /// definition holds, so that it describes its columns without the keyspace's types.
    /// The same as [`CqlType::name`] for a type without user types.
    pub fn full_name(&self) -> String {
        self.spell(true)
    }

    fn spell(&self, full: bool) -> String {
        match self {
            CqlType::List(e) => format!("list<{}>", e.spell(full)),
            CqlType::Set(e) => format!("set<{}>", e.spell(full)),
            CqlType::Map(k, v) => format!("map<{}, {}>", k.spell(full), v.spell(full)),
            CqlType::Tuple(ts) => {
                let inner: Vec<String> = ts.iter().map(|t| t.spell(full)).collect();
                format!("tuple<{}>", inner.join(", "))
            }
            CqlType::Frozen(t) => format!("frozen<{}>", t.spell(full)),
            CqlType::Udt(u) if full => {
                let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
                let mut out = format!("udt<{}.{}", quote(&u.keyspace), quote(&u.name));
                for (f, t) in u.fields() {
                    out.push_str(&format!(", {} {}", quote(f), t.spell(true)));
                }
                out.push('>');
                out
            }
            CqlType::Udt(u) => maybe_quote(&u.name),
            native => native.static_name().to_string(),
        }
    }

    /// The component types of a tuple or a user type (whose values are framed alike).
    pub fn components(&self) -> Option<&[CqlType]> {
        match self {
            CqlType::Tuple(ts) => Some(ts),
            CqlType::Udt(u) => Some(&u.field_types),
            _ => None,
        }
    }

    /// A list, set or map that is not frozen: stored as one cell per element, so it is
    /// written, read and timed element by element (Cassandra's `isMultiCell` for
    /// collections; a non-frozen user type is multi-cell too, field by field).
    pub fn is_non_frozen_collection(&self) -> bool {
        matches!(self, CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..))
    }

    /// Whether a duration appears anywhere in this type (durations have no order, so no
    /// slice may compare values holding one).
    pub fn contains_duration(&self) -> bool {
        match self {
            CqlType::Duration => true,
            CqlType::List(e) | CqlType::Set(e) | CqlType::Frozen(e) => e.contains_duration(),
            CqlType::Map(k, v) => k.contains_duration() || v.contains_duration(),
            CqlType::Tuple(ts) => ts.iter().any(CqlType::contains_duration),
            CqlType::Udt(u) => u.field_types.iter().any(CqlType::contains_duration),
            _ => false,
        }
    }

    /// The user type, frozen or not.
    pub fn as_udt(&self) -> Option<&UserType> {
        match unfrozen(self) {
            CqlType::Udt(u) => Some(u),
            _ => None,
        }
    }

    /// Whether the user type `keyspace.name` appears anywhere in this type.
    pub fn references_udt(&self, keyspace: &str, name: &str) -> bool {
        match self {
            CqlType::List(e) | CqlType::Set(e) | CqlType::Frozen(e) => {
                e.references_udt(keyspace, name)
            }
            CqlType::Map(k, v) => {
                k.references_udt(keyspace, name) || v.references_udt(keyspace, name)
            }
            CqlType::Tuple(ts) => ts.iter().any(|t| t.references_udt(keyspace, name)),
            CqlType::Udt(u) => {
                (u.keyspace == keyspace && u.name == name)
                    || u.field_types
                        .iter()
                        .any(|t| t.references_udt(keyspace, name))
            }
            _ => false,
        }
    }

    /// This type with every occurrence of the user type `new.keyspace`.`new.name` replaced
    /// by `new` (after `ALTER TYPE`); `None` if it does not occur.
    pub fn with_udt_replaced(&self, new: &UserType) -> Option<CqlType> {
        if !self.references_udt(&new.keyspace, &new.name) {
            return None;
        }
        let sub = |t: &CqlType| t.with_udt_replaced(new).unwrap_or_else(|| t.clone());
        Some(match self {
            CqlType::List(e) => CqlType::List(Box::new(sub(e))),
            CqlType::Set(e) => CqlType::Set(Box::new(sub(e))),
            CqlType::Frozen(e) => CqlType::Frozen(Box::new(sub(e))),
            CqlType::Map(k, v) => CqlType::Map(Box::new(sub(k)), Box::new(sub(v))),
            CqlType::Tuple(ts) => CqlType::Tuple(ts.iter().map(sub).collect()),
            CqlType::Udt(u) if u.keyspace == new.keyspace && u.name == new.name => {
                CqlType::Udt(Box::new(new.clone()))
            }
            CqlType::Udt(u) => CqlType::Udt(Box::new(UserType {
                field_types: u.field_types.iter().map(sub).collect(),
                ..(**u).clone()
            })),
            other => other.clone(),
        })
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
            CqlType::Udt(_) => "udt",
        }
    }

    /// True for collections, tuples and user types, frozen or not.
    pub fn is_composite(&self) -> bool {
        matches!(
            self,
            CqlType::List(_)
                | CqlType::Set(_)
                | CqlType::Map(_, _)
                | CqlType::Tuple(_)
                | CqlType::Frozen(_)
                | CqlType::Udt(_)
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
