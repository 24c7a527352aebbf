//! CQL values: from literals and terms to native-protocol bytes, and back.
//!
//! Every value in Cairn is kept as its native-protocol v4 serialization. What a type is —
//! its name, validation, framing, Cassandra's order, canonical forms — is the engine's
//! types room ([`cairn_engine::model::types`]), which this module uses directly; this module
//! is what turns query text into such bytes and what works on them:
//!
//! - [`value`]: what a term evaluates to ([`TermValue`]) and what evaluation asks of the
//!   statement ([`TermContext`]); [`canonical`]: sets and maps sorted and deduplicated;
//! - [`literal`]: one literal constant to bytes for a receiver type, with Cassandra's rules
//!   and error texts;
//! - [`functions`]: the catalogue of term-level functions (`now()`, `blobAsInt()`…): names,
//!   signatures and what each does to evaluated arguments;
//! - [`masking`]: Cassandra 5.0's masking functions (`mask_default()`, `mask_inner()`…) and
//!   the masked value of each type;
//! - [`fit`]: how a term fits a type (`testAssignment`) and which overload a call picks;
//!   [`display`](mod@display): the text of a term in messages;
//! - [`term`]: whole terms (collections, tuples, bind markers, type hints, function calls,
//!   operators) to bytes — the top, which dispatches to the rest;
//! - [`aggregate`]: `sum`, `avg`, `min`, `max`, `count` and `CAST` conversions;
//! - [`arithmetic`]: the operators `+ - * / %` and unary `-`, overload resolution included;
//! - [`number`]: numbers read from values and converted as Java's `Number` does;
//! - [`collections`]: the multi-cell layout of non-frozen collections, and element and slice
//!   selection (`c[k]`, `c[a..b]`);
//! - [`json`]: the JSON forms of `SELECT JSON`, `INSERT … JSON`, `toJson` and `fromJson`
//!   (rendering and parsing);
//! - [`format`](mod@format): bytes to CQL literal text;
//! - [`placeholder`]: stand-in values for bind markers, to check a statement's shape at PREPARE;
//! - [`error`]: [`ValueError`], whose texts are Cassandra's `InvalidRequest` messages.
//!
//! Everything here is a pure function of its inputs (the clock and randomness come through
//! [`term::TermContext`]).

pub mod aggregate;
pub mod arithmetic;
pub mod assign;
pub mod canonical;
pub mod collection_fns;
pub mod collections;
pub mod display;
pub mod error;
pub mod fit;
pub mod format;
pub mod functions;
pub mod json;
pub mod literal;
pub mod masking;
pub mod math;
pub mod number;
pub mod placeholder;
pub mod temporal;
pub mod term;
pub mod value;

/// The framing of collections and tuples is the engine's types room's
/// ([`cairn_engine::model::types::framing`]); this name keeps the executor's imports.
pub use aggregate::{cast, Accumulator, AggregateKind};
pub use collections::{cells_to_collection, collection_to_cells, element_path};
pub use error::{ValueError, ValueResult};
pub use format::format_value;
pub use literal::{literal_to_bytes, literal_to_bytes_at};
pub use term::term_to_bytes;
pub use value::{BoundValue, TermContext, TermValue};

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
