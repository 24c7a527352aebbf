//! Cassandra's JSON forms of values: `SELECT JSON`, `toJson()`, `INSERT … JSON` and
//! `fromJson()`.
//!
//! - [`to_json`] is Cassandra's `AbstractType.toJSONString`: numbers bare (Java's
//!   `toString`, so `1.0E-5` and `1.50E+3`; NaN and the infinities `null`), booleans bare,
//!   everything else a JSON string (`"0xcafe"`, `"2024-01-02 03:04:05.678Z"`,
//!   `"01:02:03.456000000"`, IPv6 in Java's uncompressed form `"0:0:0:0:0:0:0:1"`,
//!   durations as `"1mo2d"`), lists, sets and tuples as arrays, maps as objects whose keys are
//!   the keys' JSON text made a string when it is not one (`{"1": "one"}`, `{"[1, 2]": 0.5}`).
//!   An empty value of a number type is `""`. [`to_json_function`] is `toJson()`, which turns
//!   an empty number into `null`.
//! - [`from_json`] is `fromJSONObject`, on a document parsed the way Cassandra's Jackson
//!   parses it ([`parse_json`]): integers are Java `Integer`, `Long` or `BigInteger` by size,
//!   other numbers `Double` (so a `decimal` given as a JSON number goes through a double: give
//!   it as a string to keep every digit); each type takes what its Java code takes (`int`
//!   only an `Integer` or a string, `timestamp` a `Long` or a string, `smallint` any number
//!   written out…), collections and tuples take arrays and objects or a string holding one,
//!   and the errors are Cassandra's `MarshalException` texts with Java's class names and
//!   `toString` forms (`Expected an int value, but got a Double: 1.5`).
//! - [`insert_json_values`] is `INSERT … JSON`'s `Json.parseJson`: keys matched to columns
//!   case-insensitively unless quoted (`"\"Name\""`), every column of the table given a value
//!   (null, or unset with `DEFAULT UNSET`, when the document has none), unknown keys refused.
//! - [`json_key`] is the key `SELECT JSON` writes for a result column.
//!
//! Parsing is Jackson's default reading: text after the first complete value is ignored
//! (`'{"k": 1} trailing'` is accepted, as by Cassandra), duplicate keys keep the last value.

//!
//! [`render`] writes values as JSON; [`parse`] reads JSON documents into values.

pub mod parse;
pub mod render;

pub use parse::{from_json, from_json_function, insert_json_values, parse_json};
pub use render::{json_key, quote_json, to_json, to_json_function};

/// The `[json]` result column of `SELECT JSON`.
pub const JSON_COLUMN: &str = "[json]";

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
