//! Byte-comparable encoding of clustering keys.
//!
//! Rows of a partition are kept in clustering order, and every structure that holds them
//! (memtables, sstable indexes, slice bounds) compares keys with plain `memcmp`. This module
//! turns a tuple of CQL-serialized clustering values into bytes whose `memcmp` order is
//! exactly Cassandra's clustering order, and back.
//!
//! Layout: for each component, [`COMPONENT_MARKER`] and then the component *body*. For a
//! `DESC` column every byte of the body is inverted (`!b`); the marker is not, so that a
//! prefix still sorts before its extensions and [`AFTER_PREFIX`](crate::model::key::AFTER_PREFIX)
//! still sorts after them.
//!
//! Invariants (checked by the tests for every native type and for nested collections and
//! tuples, ASC and DESC):
//! - `memcmp(body(a), body(b))` has the sign of Cassandra's comparator on `a`, `b`
//!   ([`crate::model::types::compare`]), reversed for `DESC`.
//! - Bodies of one type are prefix-free, so comparing concatenated components compares
//!   component by component, and a byte after a complete body is always the next marker.
//! - The empty value (zero bytes) sorts before every non-empty value of its type.
//! - `decode(encode(v)) == v`, except where Cassandra's comparator treats distinct byte
//!   strings as equal; those decode to one canonical form: `boolean` to `0x00`/`0x01`,
//!   `float`/`double` NaNs to the canonical NaN, `varint` to its shortest two's complement,
//!   `decimal` to the unscaled value with its trailing decimal zeros stripped (scale lowered
//!   to match; zero is scale 0, unscaled `0x00`), `duration` to its shortest vints.
//!
//! Bodies (ASC form; "tag" is one byte, `0x00` meaning the empty value):
//! - `text`, `ascii`, `blob`, `inet`: the bytes with `0x00` escaped as `0x00 0xFF`, then the
//!   terminator `0x00 0x00` (Cassandra orders these, including inet, as unsigned bytes).
//! - `tinyint`, `smallint`, `int`, `bigint`, `counter`, `timestamp`: tag `0x01`, big-endian
//!   with the sign bit flipped.
//! - `date`, `time`: tag `0x01`, the bytes as they are (Cassandra orders them as unsigned
//!   bytes; dates are stored with the epoch at 2^31, times are never negative).
//! - `boolean`: tag `0x01`, then `0x00` or `0x01`.
//! - `float`, `double`: tag `0x01`, IEEE bits with the sign bit flipped if positive and all
//!   bits flipped if negative, matching Java's `Float.compare`: -0.0 < 0.0 and NaN is largest.
//! - `uuid`: tag `0x01`, the version nibble, then for version 1 the 60-bit timestamp first
//!   (time_hi, time_mid, time_low) and otherwise the high 8 bytes as stored, then the low 8
//!   bytes; Cassandra's `UUIDType` compares all of that unsigned.
//! - `timeuuid`: tag `0x01`, the reordered timestamp, then the low 8 bytes each XORed with
//!   0x80 because `TimeUUIDType` compares them as *signed* bytes.
//! - `varint`: tag `0x01` negative, `0x02` zero, `0x03` positive; then the magnitude's length
//!   (one byte up to 0xF7, else `0xF7 + n` and `n` length bytes) and the magnitude, both
//!   inverted for negative numbers so that larger magnitudes sort first.
//! - `decimal`: tags as for varint; the value is written as `0.d1d2… × 10^e`, with `e` as a
//!   sign-flipped big-endian i64 and the digits (no trailing zeros) packed two per byte as
//!   `1 + 10·a + b` and terminated by `0x00`; all inverted for negative numbers.
//! - `duration`: tag `0x01`, months, days (i32) and nanoseconds (i64), each sign-flipped
//!   big-endian. Cassandra refuses durations in keys; this gives them an order anyway.
//! - Collections and tuples (`frozen<…>` or not: the encoding is the frozen value's, and
//!   `frozen<T>` is encoded as `T`): a sequence of *items*, each an item marker followed by
//!   the ASC body of the element's own type, nested as deep as the type is, then the end
//!   marker. Item markers: `0x01` end, `0x02` null tuple field, `0x03` value.
//!   - `list<T>`, `set<T>`: `0x03 body(e)` per element, then `0x01`.
//!   - `map<K, V>`: `0x03 body(k) body(v)` per entry, then `0x01`.
//!   - `tuple<…>`: per field present in the serialization, `0x02` if it is null, else
//!     `0x03 body(field)`; then `0x01`. A tuple serialized with fewer fields than its type
//!     just has fewer items (it is not padded with nulls), and the empty value *is* the
//!     tuple with no fields: `0x01`.
//!   - The empty value of a collection (not the empty collection, which is `0x01`) is the tag
//!     `0x00`, as for the other non-text types.
//!
//!   Element bodies need no escaping: bodies are prefix-free, so where two item sequences
//!   first differ inside an element the bytes compare as the two elements do, and where one
//!   sequence ends its `0x01` meets the other's `0x02`/`0x03`. This gives Cassandra's order:
//!   lists and sets element by element then shorter first, maps entry by entry (key, then
//!   value) then shorter first, tuples field by field with a null field before any value
//!   and a shorter tuple before a longer one (so `(1)` < `(1, null)` < `(1, 0)`). Inside a
//!   `DESC` column the whole body, nested items included, is inverted like any other body.
//!   Set elements and map keys are encoded in the order they are serialized in (a valid
//!   value has them sorted and distinct; the engine does not re-sort), and each element is
//!   canonicalised like a top-level value of its type, so `decode` returns the value
//!   re-serialized from its canonical elements.
//!
//! Pieces: `encode` and `decode` (the bodies), `format` (tags and item markers), and the
//! tests checking the encoding against the comparator for every type. What a type is —
//! its framing, validation, Cassandra's order and big-number arithmetic — is the types
//! room's ([`crate::model::types`]); this module keeps only the byte-comparable encoding.

use super::key::{ClusteringKey, COMPONENT_MARKER};
use super::types::CqlType;
use crate::error::Result;
use bytes::Bytes;

mod decode;
mod encode;
mod format;

use decode::{decode_body, Cursor};
use encode::encode_body;
use format::invalid;
#[cfg(test)]
mod tests;

/// Sort direction of one clustering column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Order {
    Asc,
    Desc,
}

/// The clustering columns of a table, in key order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClusteringLayout {
    pub columns: Vec<(CqlType, Order)>,
}

impl ClusteringLayout {
    /// A layout from its columns.
    pub fn new(columns: Vec<(CqlType, Order)>) -> Self {
        ClusteringLayout { columns }
    }

    /// Encodes a full clustering key: exactly one CQL-serialized value per column.
    pub fn encode_key(&self, values: &[&[u8]]) -> Result<ClusteringKey> {
        if values.len() != self.columns.len() {
            return Err(invalid(
                "clustering key",
                "number of values differs from the number of clustering columns",
            ));
        }
        Ok(ClusteringKey(Bytes::from(self.encode_prefix(values)?)))
    }

    /// Encodes a prefix of a clustering key (the first `values.len()` columns), as used for
    /// slice bounds. The encoding of a prefix is a byte-prefix of every key extending it.
    pub fn encode_prefix(&self, values: &[&[u8]]) -> Result<Vec<u8>> {
        if values.len() > self.columns.len() {
            return Err(invalid(
                "clustering key",
                "more values than clustering columns",
            ));
        }
        let mut out = Vec::with_capacity(values.iter().map(|v| v.len() + 4).sum());
        for ((ty, order), value) in self.columns.iter().zip(values) {
            out.push(COMPONENT_MARKER);
            let start = out.len();
            encode_body(ty, value, &mut out)?;
            if *order == Order::Desc {
                if let Some(body) = out.get_mut(start..) {
                    body.iter_mut().for_each(|b| *b = !*b);
                }
            }
        }
        Ok(out)
    }

    /// Decodes an encoded key or prefix back to CQL-serialized values (canonical forms as
    /// described in the module docs).
    pub fn decode(&self, encoded: &[u8]) -> Result<Vec<Bytes>> {
        let mut out = Vec::new();
        let mut cur = Cursor {
            data: encoded,
            pos: 0,
            mask: 0,
            ty: "clustering key",
        };
        for (ty, order) in &self.columns {
            if cur.at_end() {
                break;
            }
            cur.mask = 0;
            cur.ty = "clustering key";
            if cur.byte()? != COMPONENT_MARKER {
                return Err(invalid("clustering key", "missing component marker"));
            }
            cur.mask = if *order == Order::Desc { 0xFF } else { 0 };
            cur.ty = ty.static_name();
            out.push(Bytes::from(decode_body(ty, &mut cur)?));
        }
        if !cur.at_end() {
            return Err(invalid("clustering key", "bytes after the last component"));
        }
        Ok(out)
    }
}
