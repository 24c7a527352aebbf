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
//!   ([`ClusteringLayout::compare_values`]), reversed for `DESC`.
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

use super::key::{ClusteringKey, COMPONENT_MARKER};
use super::types::{decode_duration, encode_duration, CqlType};
use crate::error::{Error, Result};
use bytes::Bytes;
use std::cmp::Ordering;

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

const TAG_EMPTY: u8 = 0x00;
const TAG_VALUE: u8 = 0x01;
const TAG_NEG: u8 = 0x01;
const TAG_ZERO: u8 = 0x02;
const TAG_POS: u8 = 0x03;

/// Item markers of collection and tuple bodies (see the module docs).
const ITEM_END: u8 = 0x01;
const ITEM_NULL: u8 = 0x02;
const ITEM_VALUE: u8 = 0x03;

/// Largest magnitude length written in a single length byte (see the varint body).
const SHORT_LEN_MAX: usize = 0xF7;

fn invalid(type_name: &'static str, reason: &'static str) -> Error {
    Error::InvalidValue { type_name, reason }
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

    /// Cassandra's comparator for `ty` on two serialized values: the order the encoding
    /// reproduces. Values that are not valid for the type compare as raw bytes.
    pub fn compare_values(ty: &CqlType, a: &[u8], b: &[u8]) -> Ordering {
        // Every Cassandra comparator puts the empty value first.
        match (a.is_empty(), b.is_empty()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            (false, false) => {}
        }
        compare_non_empty(ty, a, b).unwrap_or_else(|| a.cmp(b))
    }
}

fn compare_non_empty(ty: &CqlType, a: &[u8], b: &[u8]) -> Option<Ordering> {
    Some(match ty {
        CqlType::Tinyint
        | CqlType::Smallint
        | CqlType::Int
        | CqlType::Bigint
        | CqlType::Counter
        | CqlType::Timestamp => {
            if a.len() != b.len() || a.len() > 8 {
                return None;
            }
            signed_be(a)?.cmp(&signed_be(b)?)
        }
        CqlType::Boolean => (a.first()? != &0).cmp(&(b.first()? != &0)),
        CqlType::Float => {
            let x = f32::from_be_bytes(a.try_into().ok()?);
            let y = f32::from_be_bytes(b.try_into().ok()?);
            // Java's Float.compare: all NaNs are one value, above +Infinity.
            canonical_f32(x).total_cmp(&canonical_f32(y))
        }
        CqlType::Double => {
            let x = f64::from_be_bytes(a.try_into().ok()?);
            let y = f64::from_be_bytes(b.try_into().ok()?);
            canonical_f64(x).total_cmp(&canonical_f64(y))
        }
        CqlType::Ascii
        | CqlType::Text
        | CqlType::Blob
        | CqlType::Inet
        | CqlType::Date
        | CqlType::Time => a.cmp(b),
        CqlType::Uuid => {
            let (x, y): (&[u8; 16], &[u8; 16]) = (a.try_into().ok()?, b.try_into().ok()?);
            let (vx, vy) = (x[6] >> 4, y[6] >> 4);
            vx.cmp(&vy)
                .then_with(|| {
                    if vx == 1 {
                        v1_timestamp(x).cmp(&v1_timestamp(y))
                    } else {
                        Ordering::Equal
                    }
                })
                .then_with(|| x.cmp(y))
        }
        CqlType::Timeuuid => {
            let (x, y): (&[u8; 16], &[u8; 16]) = (a.try_into().ok()?, b.try_into().ok()?);
            v1_timestamp(x).cmp(&v1_timestamp(y)).then_with(|| {
                // TimeUUIDType compares the clock sequence and node as signed bytes.
                let sx = x[8..].iter().map(|&b| b as i8);
                let sy = y[8..].iter().map(|&b| b as i8);
                sx.cmp(sy)
            })
        }
        CqlType::Varint => compare_varints(a, b),
        CqlType::Decimal => compare_decimals(a, b)?,
        CqlType::Duration => decode_duration(a).ok()?.cmp(&decode_duration(b).ok()?),
        CqlType::Frozen(inner) => compare_non_empty(inner, a, b)?,
        CqlType::List(_) | CqlType::Set(_) | CqlType::Map(_, _) | CqlType::Tuple(_) => {
            compare_composites(ty, a, b)?
        }
    })
}

/// Cassandra's `ListType` / `SetType` / `MapType` / `TupleType` comparison of two valid
/// values; `None` if either is not valid. Compares the flattened items (map keys and values
/// alternate) one by one, a null tuple field first, then the shorter sequence first.
fn compare_composites(ty: &CqlType, a: &[u8], b: &[u8]) -> Option<Ordering> {
    ty.validate(a).ok()?;
    ty.validate(b).ok()?;
    let (x, y) = (split_items(ty, a).ok()?, split_items(ty, b).ok()?);
    for ((t, p), (_, q)) in x.iter().zip(&y) {
        let c = match (p, q) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(p), Some(q)) => ClusteringLayout::compare_values(t, p, q),
        };
        if c.is_ne() {
            return Some(c);
        }
    }
    Some(x.len().cmp(&y.len()))
}

/// Reads the native protocol framing of collections and tuples.
struct Framed<'a> {
    rest: &'a [u8],
}

impl<'a> Framed<'a> {
    fn i32(&mut self) -> FramingResult<i32> {
        let (head, rest) = self
            .rest
            .split_first_chunk::<4>()
            .ok_or("truncated length or count")?;
        self.rest = rest;
        Ok(i32::from_be_bytes(*head))
    }

    /// One `[i32 len][bytes]` element; `None` for a negative length (null).
    fn element(&mut self) -> FramingResult<Option<&'a [u8]>> {
        let Ok(len) = usize::try_from(self.i32()?) else {
            return Ok(None);
        };
        if self.rest.len() < len {
            return Err("truncated element");
        }
        let (body, rest) = self.rest.split_at(len);
        self.rest = rest;
        Ok(Some(body))
    }

    fn non_null(&mut self) -> FramingResult<&'a [u8]> {
        self.element()?.ok_or("null element in a collection")
    }
}

/// An error in the framing of a collection or tuple.
type FramingResult<T> = std::result::Result<T, &'static str>;

/// Items of a collection or tuple, each with its type; `None` for a null tuple field.
type Items<'t, 'a> = Vec<(&'t CqlType, Option<&'a [u8]>)>;

/// The items of a non-empty serialized collection or tuple of type `ty` (frozen or not), each
/// with its type: list and set elements, map keys and values alternately, tuple fields
/// (`None` when null). Checks the framing only, not the items themselves.
fn split_items<'t, 'a>(ty: &'t CqlType, v: &'a [u8]) -> FramingResult<Items<'t, 'a>> {
    let mut r = Framed { rest: v };
    let mut items = Vec::new();
    match ty {
        CqlType::Frozen(inner) => return split_items(inner, v),
        CqlType::List(e) | CqlType::Set(e) => {
            let n = usize::try_from(r.i32()?).map_err(|_| "negative element count")?;
            for _ in 0..n {
                items.push((&**e, Some(r.non_null()?)));
            }
        }
        CqlType::Map(k, val) => {
            let n = usize::try_from(r.i32()?).map_err(|_| "negative element count")?;
            for _ in 0..n {
                items.push((&**k, Some(r.non_null()?)));
                items.push((&**val, Some(r.non_null()?)));
            }
        }
        CqlType::Tuple(types) => {
            for t in types {
                if r.rest.is_empty() {
                    break;
                }
                items.push((t, r.element()?));
            }
        }
        _ => return Err("not a collection or tuple"),
    }
    if r.rest.is_empty() {
        Ok(items)
    } else {
        Err("bytes after the end of the value")
    }
}

fn signed_be(v: &[u8]) -> Option<i64> {
    let (&first, rest) = v.split_first()?;
    Some(
        rest.iter()
            .fold(i64::from(first as i8), |acc, &b| (acc << 8) | i64::from(b)),
    )
}

fn canonical_f32(x: f32) -> f32 {
    if x.is_nan() {
        f32::NAN
    } else {
        x
    }
}

fn canonical_f64(x: f64) -> f64 {
    if x.is_nan() {
        f64::NAN
    } else {
        x
    }
}

/// The 60-bit timestamp of a version 1 UUID (with the version nibble on top, which is
/// constant among the UUIDs it is compared with).
fn v1_timestamp(u: &[u8; 16]) -> u64 {
    let msb = u64::from_be_bytes([u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7]]);
    reorder_timestamp(msb)
}

/// time_low | time_mid | ver+time_hi  →  ver+time_hi | time_mid | time_low.
fn reorder_timestamp(msb: u64) -> u64 {
    (msb << 48) | ((msb << 16) & 0xFFFF_0000_0000) | (msb >> 32)
}

/// Inverse of [`reorder_timestamp`].
fn unorder_timestamp(ts: u64) -> u64 {
    (ts << 32) | ((ts >> 16) & 0xFFFF_0000) | (ts >> 48)
}

/// Numeric comparison of two non-empty two's-complement big-endian integers of any length.
fn compare_varints(a: &[u8], b: &[u8]) -> Ordering {
    let len = a.len().max(b.len());
    let ext = |v: &[u8], i: usize| -> u8 {
        // Byte `i` of `v` sign-extended to `len` bytes.
        let pad = len - v.len();
        if i < pad {
            if v.first().is_some_and(|&f| f & 0x80 != 0) {
                0xFF
            } else {
                0
            }
        } else {
            v.get(i - pad).copied().unwrap_or(0)
        }
    };
    let (a0, b0) = (ext(a, 0) as i8, ext(b, 0) as i8);
    a0.cmp(&b0).then_with(|| {
        (1..len)
            .map(|i| ext(a, i).cmp(&ext(b, i)))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    })
}

// ---------------------------------------------------------------------------------------
// Arbitrary-precision helpers (magnitudes are unsigned big-endian byte strings).

/// Splits a non-empty two's-complement integer into (negative, magnitude without leading
/// zero bytes; empty for zero).
fn varint_to_sign_mag(v: &[u8]) -> (bool, Vec<u8>) {
    let negative = v.first().is_some_and(|&f| f & 0x80 != 0);
    let mut mag = v.to_vec();
    if negative {
        negate_in_place(&mut mag);
    }
    let skip = mag.iter().take_while(|&&b| b == 0).count();
    mag.drain(..skip);
    (negative, mag)
}

/// Two's-complement negation within the same width.
fn negate_in_place(v: &mut [u8]) {
    let mut carry = true;
    for b in v.iter_mut().rev() {
        let (x, c) = (!*b).overflowing_add(u8::from(carry));
        *b = x;
        carry = c;
    }
}

/// Shortest two's-complement encoding of `±mag` (Java's `BigInteger.toByteArray`).
fn sign_mag_to_varint(negative: bool, mag: &[u8]) -> Vec<u8> {
    let skip = mag.iter().take_while(|&&b| b == 0).count();
    let mag = mag.get(skip..).unwrap_or_default();
    if mag.is_empty() {
        return vec![0];
    }
    let mut out = Vec::with_capacity(mag.len() + 1);
    if negative {
        out.extend_from_slice(mag);
        negate_in_place(&mut out);
        if out.first().is_some_and(|&f| f & 0x80 == 0) {
            out.insert(0, 0xFF);
        }
    } else {
        if mag.first().is_some_and(|&f| f & 0x80 != 0) {
            out.push(0);
        }
        out.extend_from_slice(mag);
    }
    out
}

/// Decimal digits (0-9, most significant first) of a magnitude; empty for zero.
fn mag_to_digits(mag: &[u8]) -> Vec<u8> {
    // Base 2^32 limbs, most significant first, repeatedly divided by 10^9.
    let mut limbs: Vec<u32> = Vec::with_capacity(mag.len() / 4 + 1);
    let head = mag.len() % 4;
    if head > 0 {
        limbs.push(
            mag.iter()
                .take(head)
                .fold(0u32, |a, &b| (a << 8) | u32::from(b)),
        );
    }
    for chunk in mag.get(head..).unwrap_or_default().chunks_exact(4) {
        limbs.push(chunk.iter().fold(0u32, |a, &b| (a << 8) | u32::from(b)));
    }
    let mut groups: Vec<u32> = Vec::new();
    while limbs.iter().any(|&l| l != 0) {
        let mut rem: u64 = 0;
        for l in limbs.iter_mut() {
            let cur = (rem << 32) | u64::from(*l);
            *l = (cur / 1_000_000_000) as u32;
            rem = cur % 1_000_000_000;
        }
        groups.push(rem as u32);
        let lead = limbs.iter().take_while(|&&l| l == 0).count();
        limbs.drain(..lead);
    }
    let mut digits = Vec::with_capacity(groups.len() * 9);
    for g in groups.iter().rev() {
        let mut buf = [0u8; 9];
        let mut x = *g;
        for d in buf.iter_mut().rev() {
            *d = (x % 10) as u8;
            x /= 10;
        }
        digits.extend_from_slice(&buf);
    }
    let lead = digits.iter().take_while(|&&d| d == 0).count();
    digits.drain(..lead);
    digits
}

/// Magnitude (no leading zero bytes) of a decimal digit string.
fn digits_to_mag(digits: &[u8]) -> Vec<u8> {
    // Base 2^32 limbs, least significant first; multiply-add 9 digits at a time.
    let mut limbs: Vec<u32> = Vec::new();
    for chunk in digits.chunks(9) {
        let mul = 10u64.pow(chunk.len() as u32);
        let add = chunk.iter().fold(0u64, |a, &d| a * 10 + u64::from(d));
        let mut carry = add;
        for l in limbs.iter_mut() {
            let cur = u64::from(*l) * mul + carry;
            *l = cur as u32;
            carry = cur >> 32;
        }
        if carry > 0 {
            limbs.push(carry as u32);
        }
    }
    let mut out: Vec<u8> = limbs.iter().rev().flat_map(|l| l.to_be_bytes()).collect();
    let lead = out.iter().take_while(|&&b| b == 0).count();
    out.drain(..lead);
    out
}

/// A decimal split into sign, significant digits (no leading or trailing zeros) and the
/// exponent `e` such that the value is `0.digits × 10^e`. `None` digits means zero.
struct NormDecimal {
    negative: bool,
    digits: Vec<u8>,
    exponent: i64,
}

fn normalize_decimal(v: &[u8]) -> Option<NormDecimal> {
    let scale = i32::from_be_bytes(v.get(..4)?.try_into().ok()?);
    let unscaled = v.get(4..)?;
    if unscaled.is_empty() {
        return Some(NormDecimal {
            negative: false,
            digits: Vec::new(),
            exponent: 0,
        });
    }
    let (negative, mag) = varint_to_sign_mag(unscaled);
    let mut digits = mag_to_digits(&mag);
    let trailing = digits.iter().rev().take_while(|&&d| d == 0).count();
    digits.truncate(digits.len() - trailing);
    let exponent = if digits.is_empty() {
        0
    } else {
        // value = digits × 10^(trailing - scale) = 0.digits × 10^(len + trailing - scale)
        digits.len() as i64 + trailing as i64 - i64::from(scale)
    };
    Some(NormDecimal {
        negative: negative && !digits.is_empty(),
        digits,
        exponent,
    })
}

/// BigDecimal.compareTo on two non-empty serialized decimals, computed without the
/// normalisation the encoding uses: by adjusted exponent, then by digits.
fn compare_decimals(a: &[u8], b: &[u8]) -> Option<Ordering> {
    let parse = |v: &[u8]| -> Option<(i32, Vec<u8>, i64)> {
        let scale = i32::from_be_bytes(v.get(..4)?.try_into().ok()?);
        let unscaled = v.get(4..)?;
        if unscaled.is_empty() {
            return Some((0, Vec::new(), 0));
        }
        let (neg, mag) = varint_to_sign_mag(unscaled);
        let digits = mag_to_digits(&mag);
        let sign = if digits.is_empty() {
            0
        } else if neg {
            -1
        } else {
            1
        };
        let adjusted = digits.len() as i64 - i64::from(scale);
        Some((sign, digits, adjusted))
    };
    let (sa, da, ea) = parse(a)?;
    let (sb, db, eb) = parse(b)?;
    if sa != sb || sa == 0 {
        return Some(sa.cmp(&sb));
    }
    let magnitude = ea.cmp(&eb).then_with(|| {
        let len = da.len().max(db.len());
        let pad = |d: &Vec<u8>, i: usize| d.get(i).copied().unwrap_or(0);
        (0..len)
            .map(|i| pad(&da, i).cmp(&pad(&db, i)))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    });
    Some(if sa < 0 {
        magnitude.reverse()
    } else {
        magnitude
    })
}

// ---------------------------------------------------------------------------------------
// Encoding.

fn flip_sign(v: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(v);
    if let Some(first) = out.get_mut(start) {
        *first ^= 0x80;
    }
}

fn escape_bytes(v: &[u8], out: &mut Vec<u8>) {
    for &b in v {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0, 0]);
}

fn write_len(len: usize, out: &mut Vec<u8>) {
    if len <= SHORT_LEN_MAX {
        out.push(len as u8);
    } else {
        let be = (len as u64).to_be_bytes();
        let skip = be.iter().take_while(|&&b| b == 0).count();
        let n = be.len() - skip;
        out.push((SHORT_LEN_MAX + n) as u8);
        out.extend_from_slice(be.get(skip..).unwrap_or_default());
    }
}

fn invert_from(out: &mut [u8], start: usize) {
    if let Some(tail) = out.get_mut(start..) {
        tail.iter_mut().for_each(|b| *b = !*b);
    }
}

fn encode_body(ty: &CqlType, v: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let name = ty.static_name();
    if ty.is_composite() {
        return encode_composite(ty, v, out);
    }
    match ty {
        CqlType::Ascii | CqlType::Text | CqlType::Blob | CqlType::Inet => {
            ty.validate(v)?;
            escape_bytes(v, out);
            return Ok(());
        }
        _ if v.is_empty() => {
            // Accepted for every type, even those whose protocol validation refuses it:
            // Cassandra's comparators all order it first.
            out.push(TAG_EMPTY);
            return Ok(());
        }
        _ => {}
    }
    ty.validate(v)?;
    match ty {
        CqlType::Tinyint
        | CqlType::Smallint
        | CqlType::Int
        | CqlType::Bigint
        | CqlType::Counter
        | CqlType::Timestamp => {
            out.push(TAG_VALUE);
            flip_sign(v, out);
        }
        CqlType::Date | CqlType::Time => {
            out.push(TAG_VALUE);
            out.extend_from_slice(v);
        }
        CqlType::Boolean => {
            out.push(TAG_VALUE);
            out.push(u8::from(v.first().is_some_and(|&b| b != 0)));
        }
        CqlType::Float => {
            let bits = u32::from_be_bytes(
                v.try_into()
                    .map_err(|_| invalid(name, "expected 4 bytes"))?,
            );
            let bits = if f32::from_bits(bits).is_nan() {
                f32::NAN.to_bits()
            } else {
                bits
            };
            let key = if bits & 0x8000_0000 != 0 {
                !bits
            } else {
                bits ^ 0x8000_0000
            };
            out.push(TAG_VALUE);
            out.extend_from_slice(&key.to_be_bytes());
        }
        CqlType::Double => {
            let bits = u64::from_be_bytes(
                v.try_into()
                    .map_err(|_| invalid(name, "expected 8 bytes"))?,
            );
            let bits = if f64::from_bits(bits).is_nan() {
                f64::NAN.to_bits()
            } else {
                bits
            };
            let key = if bits & (1 << 63) != 0 {
                !bits
            } else {
                bits ^ (1 << 63)
            };
            out.push(TAG_VALUE);
            out.extend_from_slice(&key.to_be_bytes());
        }
        CqlType::Uuid | CqlType::Timeuuid => {
            let u: [u8; 16] = v
                .try_into()
                .map_err(|_| invalid(name, "expected 16 bytes"))?;
            let (msb_bytes, lsb_bytes) = u.split_at(8);
            let msb = u64::from_be_bytes(msb_bytes.try_into().unwrap_or([0; 8]));
            let version = (msb >> 12) & 0xF;
            out.push(TAG_VALUE);
            if *ty == CqlType::Uuid {
                out.push(version as u8);
                let first = if version == 1 {
                    reorder_timestamp(msb)
                } else {
                    msb
                };
                out.extend_from_slice(&first.to_be_bytes());
                out.extend_from_slice(lsb_bytes);
            } else {
                out.extend_from_slice(&reorder_timestamp(msb).to_be_bytes());
                out.extend(lsb_bytes.iter().map(|b| b ^ 0x80));
            }
        }
        CqlType::Varint => {
            let (negative, mag) = varint_to_sign_mag(v);
            if mag.is_empty() {
                out.push(TAG_ZERO);
            } else {
                out.push(if negative { TAG_NEG } else { TAG_POS });
                let start = out.len();
                write_len(mag.len(), out);
                out.extend_from_slice(&mag);
                if negative {
                    invert_from(out, start);
                }
            }
        }
        CqlType::Decimal => {
            let d = normalize_decimal(v).ok_or_else(|| invalid(name, "truncated scale"))?;
            if d.digits.is_empty() {
                out.push(TAG_ZERO);
            } else {
                out.push(if d.negative { TAG_NEG } else { TAG_POS });
                let start = out.len();
                out.extend_from_slice(&((d.exponent as u64) ^ (1 << 63)).to_be_bytes());
                for pair in d.digits.chunks(2) {
                    let hi = pair.first().copied().unwrap_or(0);
                    let lo = pair.get(1).copied().unwrap_or(0);
                    out.push(1 + hi * 10 + lo);
                }
                out.push(0);
                if d.negative {
                    invert_from(out, start);
                }
            }
        }
        CqlType::Duration => {
            let (months, days, nanos) = decode_duration(v)?;
            out.push(TAG_VALUE);
            out.extend_from_slice(&((months as u32) ^ 0x8000_0000).to_be_bytes());
            out.extend_from_slice(&((days as u32) ^ 0x8000_0000).to_be_bytes());
            out.extend_from_slice(&((nanos as u64) ^ (1 << 63)).to_be_bytes());
        }
        _ => return Err(invalid(name, "type not supported in clustering keys")),
    }
    Ok(())
}

/// `ty` without its `frozen<…>` wrappers.
fn unfrozen(mut ty: &CqlType) -> &CqlType {
    while let CqlType::Frozen(inner) = ty {
        ty = inner;
    }
    ty
}

fn encode_composite(ty: &CqlType, v: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let ty = unfrozen(ty);
    if v.is_empty() && !matches!(ty, CqlType::Tuple(_)) {
        // Not a collection (Cassandra's serializers refuse it), but its comparators order it
        // first, as for the other types. The empty tuple is the tuple with no fields.
        out.push(TAG_EMPTY);
        return Ok(());
    }
    // Validating the whole value (elements included) keeps what the encoding accepts equal
    // to what `compare_values` compares semantically: inside a collection the empty value is
    // only accepted where the element type's serializer accepts it.
    ty.validate(v)?;
    let items = split_items(ty, v).map_err(|reason| invalid(ty.static_name(), reason))?;
    if let CqlType::Map(_, _) = ty {
        for entry in items.chunks(2) {
            out.push(ITEM_VALUE);
            for (t, x) in entry {
                encode_body(t, x.unwrap_or_default(), out)?;
            }
        }
    } else {
        for (t, x) in items {
            match x {
                None => out.push(ITEM_NULL),
                Some(x) => {
                    out.push(ITEM_VALUE);
                    encode_body(t, x, out)?;
                }
            }
        }
    }
    out.push(ITEM_END);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Decoding.

/// Reads an encoded key, undoing the DESC inversion through `mask`.
struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    mask: u8,
    ty: &'static str,
}

impl Cursor<'_> {
    fn at_end(&self) -> bool {
        self.pos >= self.data.len()
    }

    fn byte(&mut self) -> Result<u8> {
        let b = self
            .data
            .get(self.pos)
            .ok_or_else(|| invalid(self.ty, "truncated encoded component"))?;
        self.pos += 1;
        Ok(b ^ self.mask)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut out = [0u8; N];
        for b in out.iter_mut() {
            *b = self.byte()?;
        }
        Ok(out)
    }

    fn bytes(&mut self, n: usize) -> Result<Vec<u8>> {
        if self.data.len().saturating_sub(self.pos) < n {
            return Err(invalid(self.ty, "truncated encoded component"));
        }
        (0..n).map(|_| self.byte()).collect()
    }
}

fn decode_body(ty: &CqlType, cur: &mut Cursor<'_>) -> Result<Vec<u8>> {
    if ty.is_composite() {
        return decode_composite(ty, cur);
    }
    let name = ty.static_name();
    if let CqlType::Ascii | CqlType::Text | CqlType::Blob | CqlType::Inet = ty {
        let mut out = Vec::new();
        loop {
            match cur.byte()? {
                0 => match cur.byte()? {
                    0 => break,
                    0xFF => out.push(0),
                    _ => return Err(invalid(name, "bad escape in encoded bytes")),
                },
                b => out.push(b),
            }
        }
        ty.validate(&out)?;
        return Ok(out);
    }
    let tag = cur.byte()?;
    if tag == TAG_EMPTY {
        return Ok(Vec::new());
    }
    let value = match ty {
        CqlType::Varint | CqlType::Decimal => {
            if tag == TAG_ZERO {
                return Ok(if *ty == CqlType::Decimal {
                    vec![0, 0, 0, 0, 0]
                } else {
                    vec![0]
                });
            }
            let negative = match tag {
                TAG_NEG => true,
                TAG_POS => false,
                _ => return Err(invalid(name, "bad sign tag")),
            };
            if negative {
                cur.mask ^= 0xFF;
            }
            let value = if *ty == CqlType::Varint {
                decode_varint_mag(cur, negative)?
            } else {
                decode_decimal(cur, negative)?
            };
            if negative {
                cur.mask ^= 0xFF;
            }
            value
        }
        _ if tag != TAG_VALUE => return Err(invalid(name, "bad value tag")),
        CqlType::Tinyint
        | CqlType::Smallint
        | CqlType::Int
        | CqlType::Bigint
        | CqlType::Counter
        | CqlType::Timestamp => {
            let width = match ty {
                CqlType::Tinyint => 1,
                CqlType::Smallint => 2,
                CqlType::Int => 4,
                _ => 8,
            };
            let mut v = cur.bytes(width)?;
            if let Some(first) = v.first_mut() {
                *first ^= 0x80;
            }
            v
        }
        CqlType::Date => cur.bytes(4)?,
        CqlType::Time => cur.bytes(8)?,
        CqlType::Boolean => match cur.byte()? {
            b @ (0 | 1) => vec![b],
            _ => return Err(invalid(name, "bad encoded boolean")),
        },
        CqlType::Float => {
            let key = u32::from_be_bytes(cur.array()?);
            let bits = if key & 0x8000_0000 != 0 {
                key ^ 0x8000_0000
            } else {
                !key
            };
            bits.to_be_bytes().to_vec()
        }
        CqlType::Double => {
            let key = u64::from_be_bytes(cur.array()?);
            let bits = if key & (1 << 63) != 0 {
                key ^ (1 << 63)
            } else {
                !key
            };
            bits.to_be_bytes().to_vec()
        }
        CqlType::Uuid => {
            let version = cur.byte()?;
            let first = u64::from_be_bytes(cur.array()?);
            let msb = if version == 1 {
                unorder_timestamp(first)
            } else {
                first
            };
            if (msb >> 12) & 0xF != u64::from(version) {
                return Err(invalid(name, "encoded version does not match the UUID"));
            }
            let mut v = msb.to_be_bytes().to_vec();
            v.extend_from_slice(&cur.array::<8>()?);
            v
        }
        CqlType::Timeuuid => {
            let msb = unorder_timestamp(u64::from_be_bytes(cur.array()?));
            let mut v = msb.to_be_bytes().to_vec();
            v.extend(cur.array::<8>()?.iter().map(|b| b ^ 0x80));
            v
        }
        CqlType::Duration => {
            let months = (u32::from_be_bytes(cur.array()?) ^ 0x8000_0000) as i32;
            let days = (u32::from_be_bytes(cur.array()?) ^ 0x8000_0000) as i32;
            let nanos = (u64::from_be_bytes(cur.array()?) ^ (1 << 63)) as i64;
            encode_duration(months, days, nanos)
        }
        _ => return Err(invalid(name, "type not supported in clustering keys")),
    };
    ty.validate(&value)?;
    Ok(value)
}

fn push_framed(v: Option<&[u8]>, out: &mut Vec<u8>) -> Result<()> {
    let len = match v {
        None => -1,
        Some(v) => i32::try_from(v.len())
            .map_err(|_| invalid("clustering key", "decoded element too long"))?,
    };
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(v.unwrap_or_default());
    Ok(())
}

/// Decodes a collection or tuple body back to its serialization (see [`encode_composite`]).
fn decode_composite(ty: &CqlType, cur: &mut Cursor<'_>) -> Result<Vec<u8>> {
    let ty = unfrozen(ty);
    let name = ty.static_name();
    let mut body = Vec::new();
    let mut count: usize = 0;
    loop {
        let marker = cur.byte()?;
        match (ty, marker) {
            (CqlType::List(_) | CqlType::Set(_) | CqlType::Map(_, _), TAG_EMPTY) if count == 0 => {
                return Ok(Vec::new());
            }
            (_, ITEM_END) => break,
            (CqlType::Tuple(types), ITEM_NULL | ITEM_VALUE) => {
                let t = types
                    .get(count)
                    .ok_or_else(|| invalid(name, "more encoded fields than the tuple type has"))?;
                if marker == ITEM_NULL {
                    push_framed(None, &mut body)?;
                } else {
                    push_framed(Some(&decode_body(t, cur)?), &mut body)?;
                }
            }
            (CqlType::List(e) | CqlType::Set(e), ITEM_VALUE) => {
                push_framed(Some(&decode_body(e, cur)?), &mut body)?;
            }
            (CqlType::Map(k, v), ITEM_VALUE) => {
                push_framed(Some(&decode_body(k, cur)?), &mut body)?;
                push_framed(Some(&decode_body(v, cur)?), &mut body)?;
            }
            _ => return Err(invalid(name, "bad encoded item marker")),
        }
        count += 1;
    }
    let out = if let CqlType::Tuple(_) = ty {
        body
    } else {
        let n = i32::try_from(count).map_err(|_| invalid(name, "too many encoded elements"))?;
        let mut out = Vec::with_capacity(body.len() + 4);
        out.extend_from_slice(&n.to_be_bytes());
        out.extend_from_slice(&body);
        out
    };
    // Rejects what the encoder never writes, e.g. an empty value nested where its type's
    // serializer refuses it.
    ty.validate(&out)?;
    Ok(out)
}

fn decode_varint_mag(cur: &mut Cursor<'_>, negative: bool) -> Result<Vec<u8>> {
    let first = cur.byte()?;
    let len = if usize::from(first) <= SHORT_LEN_MAX {
        usize::from(first)
    } else {
        let n = usize::from(first) - SHORT_LEN_MAX;
        cur.bytes(n)?
            .iter()
            .fold(0u64, |a, &b| (a << 8) | u64::from(b)) as usize
    };
    let mag = cur.bytes(len)?;
    if mag.first().is_none_or(|&b| b == 0) {
        return Err(invalid("varint", "non-canonical encoded magnitude"));
    }
    Ok(sign_mag_to_varint(negative, &mag))
}

/// Longest run of zeros decoding may append to bring a scale back into i32 range (a value
/// like `10` at scale `i32::MIN` is encoded as `1` at an exponent whose scale would be
/// `i32::MIN - 1`). Bounded so that a corrupt exponent cannot make decoding allocate and
/// multiply millions of digits; only a value with more trailing zeros than this *and* a
/// scale within this distance of `i32::MIN` fails to decode.
const MAX_DECIMAL_PADDING: i64 = 4096;

fn decode_decimal(cur: &mut Cursor<'_>, negative: bool) -> Result<Vec<u8>> {
    let exponent = (u64::from_be_bytes(cur.array()?) ^ (1 << 63)) as i64;
    let mut digits = Vec::new();
    loop {
        match cur.byte()? {
            0 => break,
            b @ 1..=100 => {
                digits.push((b - 1) / 10);
                digits.push((b - 1) % 10);
            }
            _ => return Err(invalid("decimal", "bad encoded digit pair")),
        }
    }
    while digits.last() == Some(&0) {
        digits.pop();
    }
    if digits.first().is_none_or(|&d| d == 0) {
        return Err(invalid("decimal", "non-canonical encoded digits"));
    }
    // value = 0.digits × 10^exponent = digits × 10^-(len - exponent)
    let mut scale = (digits.len() as i64)
        .checked_sub(exponent)
        .ok_or_else(|| invalid("decimal", "exponent out of range"))?;
    if scale < i64::from(i32::MIN) {
        let pad = i64::from(i32::MIN) - scale;
        if pad > MAX_DECIMAL_PADDING {
            return Err(invalid("decimal", "exponent out of range"));
        }
        digits.extend(std::iter::repeat_n(0, pad as usize));
        scale = i64::from(i32::MIN);
    }
    let scale = i32::try_from(scale).map_err(|_| invalid("decimal", "scale out of range"))?;
    let mut out = scale.to_be_bytes().to_vec();
    out.extend(sign_mag_to_varint(negative, &digits_to_mag(&digits)));
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::model::key::{after_prefix, ClusteringRange};
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    const NATIVE: &[CqlType] = &[
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

    /// Shortest two's complement, computed independently of the code under test.
    fn minimal_varint(v: &[u8]) -> Vec<u8> {
        let mut v = v.to_vec();
        while v.len() > 1 && ((v[0] == 0 && v[1] & 0x80 == 0) || (v[0] == 0xFF && v[1] & 0x80 != 0))
        {
            v.remove(0);
        }
        v
    }

    fn random_varint(rng: &mut StdRng, max_len: usize) -> Vec<u8> {
        let len = rng.gen_range(1..=max_len);
        let mut v: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        if rng.gen_bool(0.3) {
            // Many ties in the leading bytes.
            v[0] = if rng.gen() { 0 } else { 0xFF };
        }
        minimal_varint(&v)
    }

    fn v1_uuid(ts: u64, lsb: [u8; 8]) -> Vec<u8> {
        let msb = unorder_timestamp((ts & 0x0FFF_FFFF_FFFF_FFFF) | (1 << 60));
        let mut v = msb.to_be_bytes().to_vec();
        v.extend_from_slice(&lsb);
        v
    }

    fn uuid_with_version(rng: &mut StdRng, version: u8) -> Vec<u8> {
        let mut v: Vec<u8> = (0..16).map(|_| rng.gen()).collect();
        v[6] = (v[6] & 0x0F) | (version << 4);
        v
    }

    /// Canonical valid values of `ty`: edge cases plus random ones. Every value is already
    /// in the form `decode` returns.
    fn values(ty: &CqlType, rng: &mut StdRng) -> Vec<Vec<u8>> {
        let mut out: Vec<Vec<u8>> = vec![Vec::new()];
        let n = 120;
        match ty {
            CqlType::Tinyint => {
                out.extend([i8::MIN, -1, 0, 1, i8::MAX].map(|x| x.to_be_bytes().to_vec()));
                out.extend((0..n).map(|_| rng.gen::<i8>().to_be_bytes().to_vec()));
            }
            CqlType::Smallint => {
                out.extend([i16::MIN, -1, 0, 1, i16::MAX].map(|x| x.to_be_bytes().to_vec()));
                out.extend((0..n).map(|_| rng.gen::<i16>().to_be_bytes().to_vec()));
            }
            CqlType::Int => {
                out.extend(
                    [i32::MIN, -256, -1, 0, 1, 255, 256, i32::MAX]
                        .map(|x| x.to_be_bytes().to_vec()),
                );
                out.extend((0..n).map(|_| rng.gen::<i32>().to_be_bytes().to_vec()));
            }
            CqlType::Bigint | CqlType::Counter | CqlType::Timestamp => {
                out.extend([i64::MIN, -1, 0, 1, i64::MAX].map(|x| x.to_be_bytes().to_vec()));
                out.extend((0..n).map(|_| {
                    (rng.gen::<i64>() >> rng.gen_range(0..63))
                        .to_be_bytes()
                        .to_vec()
                }));
            }
            CqlType::Boolean => out.extend([vec![0], vec![1]]),
            CqlType::Float => {
                out.extend(
                    [
                        f32::NEG_INFINITY,
                        f32::MIN,
                        -1.0,
                        -f32::MIN_POSITIVE,
                        -1e-45,
                        -0.0,
                        0.0,
                        1e-45,
                        f32::MIN_POSITIVE,
                        1.0,
                        f32::MAX,
                        f32::INFINITY,
                        f32::NAN,
                    ]
                    .map(|x| x.to_be_bytes().to_vec()),
                );
                out.extend((0..n).map(|_| {
                    let x = f32::from_bits(rng.gen());
                    let x = if x.is_nan() { f32::NAN } else { x };
                    x.to_be_bytes().to_vec()
                }));
            }
            CqlType::Double => {
                out.extend(
                    [
                        f64::NEG_INFINITY,
                        f64::MIN,
                        -1.0,
                        -f64::MIN_POSITIVE,
                        -5e-324,
                        -0.0,
                        0.0,
                        5e-324,
                        f64::MIN_POSITIVE,
                        1.0,
                        f64::MAX,
                        f64::INFINITY,
                        f64::NAN,
                    ]
                    .map(|x| x.to_be_bytes().to_vec()),
                );
                out.extend((0..n).map(|_| {
                    let x = f64::from_bits(rng.gen());
                    let x = if x.is_nan() { f64::NAN } else { x };
                    x.to_be_bytes().to_vec()
                }));
            }
            CqlType::Text => {
                let alphabet = [
                    '\0',
                    '\u{1}',
                    'a',
                    'b',
                    'é',
                    '\u{FF}',
                    '\u{FFFF}',
                    '\u{10FFFF}',
                ];
                out.extend(
                    ["\0", "\0\0", "a", "a\0", "a\0b", "a\u{1}", "ÿ"]
                        .map(|s| s.as_bytes().to_vec()),
                );
                out.extend((0..n).map(|_| {
                    let len = rng.gen_range(0..6);
                    let s: String = (0..len)
                        .map(|_| alphabet[rng.gen_range(0..alphabet.len())])
                        .collect();
                    s.into_bytes()
                }));
            }
            CqlType::Ascii => {
                out.extend([
                    b"\0".to_vec(),
                    b"\0\0".to_vec(),
                    b"\x7f".to_vec(),
                    b"a\0".to_vec(),
                ]);
                out.extend((0..n).map(|_| {
                    let len = rng.gen_range(0..6);
                    (0..len)
                        .map(|_| [0u8, 1, b'a', 0x7F][rng.gen_range(0..4)])
                        .collect()
                }));
            }
            CqlType::Blob => {
                out.extend([
                    vec![0],
                    vec![0, 0],
                    vec![0xFF],
                    vec![0xFF, 0],
                    vec![0, 0xFF],
                    vec![1],
                ]);
                out.extend((0..n).map(|_| {
                    let len = rng.gen_range(0..7);
                    (0..len)
                        .map(|_| match rng.gen_range(0..5) {
                            0 => 0,
                            1 => 0xFF,
                            2 => 1,
                            3 => 0xFE,
                            _ => rng.gen(),
                        })
                        .collect()
                }));
            }
            CqlType::Inet => {
                out.extend([
                    vec![0; 4],
                    vec![0xFF; 4],
                    vec![0; 16],
                    vec![0xFF; 16],
                    vec![1, 2, 3, 4],
                ]);
                let mut v6 = vec![1, 2, 3, 4];
                v6.extend([0; 12]);
                out.push(v6);
                out.extend((0..n).map(|_| {
                    let len = if rng.gen() { 4 } else { 16 };
                    (0..len)
                        .map(|_| if rng.gen_bool(0.3) { 0 } else { rng.gen() })
                        .collect()
                }));
            }
            CqlType::Date => {
                out.extend([0u32, 1 << 31, u32::MAX].map(|x| x.to_be_bytes().to_vec()));
                out.extend((0..n).map(|_| rng.gen::<u32>().to_be_bytes().to_vec()));
                out.retain(|v| !v.is_empty()); // date refuses the empty value; see below
            }
            CqlType::Time => {
                let max = crate::model::types::NANOS_PER_DAY - 1;
                out.extend([0i64, 1, max].map(|x| x.to_be_bytes().to_vec()));
                out.extend((0..n).map(|_| rng.gen_range(0..=max).to_be_bytes().to_vec()));
                out.retain(|v| !v.is_empty());
            }
            CqlType::Uuid => {
                out.push(vec![0; 16]);
                out.push(vec![0xFF; 16]);
                for version in [0u8, 1, 2, 3, 4, 5, 6, 7, 15] {
                    out.extend((0..12).map(|_| uuid_with_version(rng, version)));
                }
                // Version 1 with tied timestamps and low bytes on both sides of 0x80.
                for lsb0 in [0x00u8, 0x7F, 0x80, 0xFF] {
                    out.push(v1_uuid(42, [lsb0, 0, 0, 0, 0, 0, 0, 1]));
                    out.push(v1_uuid(1 << 40, [lsb0, 0x80, 0, 0, 0, 0, 0, 1]));
                }
                out.extend((0..20).map(|_| v1_uuid(rng.gen(), rng.gen())));
            }
            CqlType::Timeuuid => {
                for lsb0 in [0x00u8, 0x7F, 0x80, 0xFF] {
                    for ts in [0u64, 42, 0xFFFF_FFFF, 1 << 32, 0x0FFF_FFFF_FFFF_FFFF] {
                        out.push(v1_uuid(ts, [lsb0, 0x80, 0x7F, 0, 0, 0, 0, lsb0]));
                    }
                }
                out.extend((0..n).map(|_| {
                    let ts = rng.gen::<u64>() >> rng.gen_range(4..64);
                    v1_uuid(ts, rng.gen())
                }));
            }
            CqlType::Varint => {
                out.extend(
                    [
                        0i64,
                        1,
                        -1,
                        127,
                        128,
                        -128,
                        -129,
                        255,
                        256,
                        -256,
                        -257,
                        i64::MIN,
                        i64::MAX,
                    ]
                    .map(|x| minimal_varint(&x.to_be_bytes())),
                );
                out.push(minimal_varint(&[0x7F; 300]));
                out.push(minimal_varint(&[0x80; 300]));
                let mut long = vec![0x01];
                long.extend([0; 299]);
                out.push(long);
                out.extend((0..n).map(|_| random_varint(rng, 24)));
                out.extend((0..10).map(|_| random_varint(rng, 400)));
            }
            CqlType::Decimal => {
                let dec = |scale: i32, unscaled: Vec<u8>| {
                    let mut v = scale.to_be_bytes().to_vec();
                    v.extend(unscaled);
                    v
                };
                // Canonical: zero is scale 0; otherwise no trailing decimal zero.
                out.push(dec(0, vec![0]));
                for scale in [i32::MIN, -5, -1, 0, 1, 2, 5, i32::MAX] {
                    for u in [1i64, -1, 7, -7, 123, -123, 99, 101, i64::MAX, i64::MIN + 1] {
                        out.push(dec(scale, minimal_varint(&u.to_be_bytes())));
                    }
                }
                out.extend((0..n).map(|_| {
                    let mut u: i64 = rng.gen::<i64>() >> rng.gen_range(0..63);
                    while u % 10 == 0 {
                        u = rng.gen_range(-99..100);
                    }
                    dec(rng.gen_range(-12..12), minimal_varint(&u.to_be_bytes()))
                }));
                // Long unscaled values ending in an odd byte are never multiples of 10.
                out.extend((0..12).map(|_| {
                    let mut u = random_varint(rng, 60);
                    if let Some(last) = u.last_mut() {
                        *last |= 1;
                    }
                    if u.len() == 1 && u[0] == 0 {
                        u = vec![1];
                    }
                    dec(rng.gen_range(-40..40), minimal_varint(&u))
                }));
            }
            CqlType::Duration => {
                out.retain(|v| !v.is_empty());
                for (m, d, ns) in [
                    (0, 0, 0),
                    (1, 0, 0),
                    (0, 1, 0),
                    (0, 0, 1),
                    (-1, 0, 0),
                    (0, 0, -1),
                    (i32::MAX, i32::MAX, i64::MAX),
                    (i32::MIN, i32::MIN, i64::MIN),
                ] {
                    out.push(encode_duration(m, d, ns));
                }
                out.extend((0..n).map(|_| {
                    let (m, d, ns) = (
                        rng.gen_range(0..=i32::MAX) >> rng.gen_range(0..31),
                        rng.gen_range(0..=i32::MAX) >> rng.gen_range(0..31),
                        rng.gen_range(0..=i64::MAX) >> rng.gen_range(0..63),
                    );
                    if rng.gen() {
                        encode_duration(m, d, ns)
                    } else {
                        encode_duration(-m, -d, -ns)
                    }
                }));
            }
            _ => unreachable!("not a native type"),
        }
        for v in &out {
            if !v.is_empty() {
                ty.validate(v)
                    .unwrap_or_else(|e| panic!("{ty}: generated {v:02x?}: {e}"));
            }
        }
        if matches!(ty, CqlType::Date | CqlType::Time | CqlType::Duration) {
            // Protocol validation refuses the empty value for these, but the encoding still
            // orders it first (Cassandra's comparators accept it).
            out.push(Vec::new());
        }
        out
    }

    fn layout(ty: &CqlType, order: Order) -> ClusteringLayout {
        ClusteringLayout::new(vec![(ty.clone(), order)])
    }

    #[test]
    fn every_native_type_orders_and_round_trips() {
        let mut rng = StdRng::seed_from_u64(0xCA1B);
        for ty in NATIVE {
            let vals = values(ty, &mut rng);
            for order in [Order::Asc, Order::Desc] {
                let l = layout(ty, order);
                let encs: Vec<Vec<u8>> = vals
                    .iter()
                    .map(|v| {
                        l.encode_key(&[v])
                            .unwrap_or_else(|e| panic!("{ty} {v:02x?}: {e}"))
                            .0
                            .to_vec()
                    })
                    .collect();
                for (v, e) in vals.iter().zip(&encs) {
                    assert_eq!(e.first(), Some(&COMPONENT_MARKER));
                    let back = l
                        .decode(e)
                        .unwrap_or_else(|err| panic!("{ty} {order:?} {v:02x?}: {err}"));
                    assert_eq!(
                        back,
                        vec![Bytes::copy_from_slice(v)],
                        "{ty} {order:?} round trip"
                    );
                }
                for (a, ea) in vals.iter().zip(&encs) {
                    for (b, eb) in vals.iter().zip(&encs) {
                        let want = ClusteringLayout::compare_values(ty, a, b);
                        let want = if order == Order::Desc {
                            want.reverse()
                        } else {
                            want
                        };
                        assert_eq!(ea.cmp(eb), want, "{ty} {order:?}: {a:02x?} vs {b:02x?}");
                        // Prefix-freedom: no body is a proper prefix of another.
                        if ea != eb {
                            assert!(
                                !eb.starts_with(ea),
                                "{ty} {order:?}: {a:02x?} prefixes {b:02x?}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn empty_value_sorts_first_for_every_type() {
        let mut rng = StdRng::seed_from_u64(5);
        for ty in NATIVE {
            let l = layout(ty, Order::Asc);
            let empty = l.encode_key(&[&[]]).unwrap();
            assert_eq!(
                l.decode(empty.as_bytes()).unwrap(),
                vec![Bytes::new()],
                "{ty}"
            );
            for v in values(ty, &mut rng).iter().filter(|v| !v.is_empty()) {
                assert!(empty < l.encode_key(&[v]).unwrap(), "{ty} {v:02x?}");
            }
        }
    }

    /// Values Cassandra considers equal to a canonical one encode identically and decode to
    /// the canonical form.
    #[test]
    fn non_canonical_values_normalise() {
        let cases: Vec<(CqlType, Vec<u8>, Vec<u8>)> = vec![
            (CqlType::Boolean, vec![2], vec![1]),
            (CqlType::Boolean, vec![0xFF], vec![1]),
            (
                CqlType::Float,
                0x7FC0_0001u32.to_be_bytes().to_vec(),
                f32::NAN.to_be_bytes().to_vec(),
            ),
            (
                CqlType::Float,
                0xFFC0_0000u32.to_be_bytes().to_vec(),
                f32::NAN.to_be_bytes().to_vec(),
            ),
            (
                CqlType::Double,
                0xFFF0_0000_0000_0001u64.to_be_bytes().to_vec(),
                f64::NAN.to_be_bytes().to_vec(),
            ),
            (CqlType::Varint, vec![0, 0, 1], vec![1]),
            (CqlType::Varint, vec![0xFF, 0xFF], vec![0xFF]),
            (CqlType::Varint, vec![0xFF, 0x80], vec![0x80]),
            (CqlType::Varint, vec![0, 0], vec![0]),
            // 1.0 (unscaled 10, scale 1) == 1 (unscaled 1, scale 0)
            (CqlType::Decimal, vec![0, 0, 0, 1, 10], vec![0, 0, 0, 0, 1]),
            // 1.00
            (CqlType::Decimal, vec![0, 0, 0, 2, 100], vec![0, 0, 0, 0, 1]),
            // 0 with scale 7, and -0 written with a redundant byte
            (CqlType::Decimal, vec![0, 0, 0, 7, 0], vec![0, 0, 0, 0, 0]),
            (
                CqlType::Decimal,
                vec![0xFF, 0xFF, 0xFF, 0xFF, 0, 0],
                vec![0, 0, 0, 0, 0],
            ),
            // A bare scale is read as zero.
            (CqlType::Decimal, vec![0, 0, 0, 3], vec![0, 0, 0, 0, 0]),
            // 1000 at scale 0 is 1 at scale -3
            (
                CqlType::Decimal,
                vec![0, 0, 0, 0, 0x03, 0xE8],
                vec![0xFF, 0xFF, 0xFF, 0xFD, 1],
            ),
            // -20 at scale -1 is -2 at scale -2
            (
                CqlType::Decimal,
                vec![0xFF, 0xFF, 0xFF, 0xFF, 0xEC],
                vec![0xFF, 0xFF, 0xFF, 0xFE, 0xFE],
            ),
            // Scales at the ends of the i32 range. 10 at scale i32::MIN cannot lose its
            // zero (the scale would underflow), so it is its own canonical form.
            (
                CqlType::Decimal,
                vec![0x80, 0, 0, 0, 10],
                vec![0x80, 0, 0, 0, 10],
            ),
            (
                CqlType::Decimal,
                vec![0x80, 0, 0, 0, 100],
                vec![0x80, 0, 0, 0, 100],
            ),
            (
                CqlType::Decimal,
                vec![0x80, 0, 0, 1, 100],
                vec![0x80, 0, 0, 0, 10],
            ),
            (
                CqlType::Decimal,
                vec![0x7F, 0xFF, 0xFF, 0xFF, 10],
                vec![0x7F, 0xFF, 0xFF, 0xFE, 1],
            ),
            // Duration with a non-shortest vint (0x80 0x02 = 2 = zigzag(1)).
            (CqlType::Duration, vec![0x80, 0x02, 0, 0], vec![2, 0, 0]),
        ];
        for (ty, raw, canonical) in cases {
            assert_eq!(
                ClusteringLayout::compare_values(&ty, &raw, &canonical),
                Ordering::Equal,
                "{ty} {raw:02x?}"
            );
            for order in [Order::Asc, Order::Desc] {
                let l = layout(&ty, order);
                let e = l.encode_key(&[&raw]).unwrap();
                assert_eq!(e, l.encode_key(&[&canonical]).unwrap(), "{ty} {raw:02x?}");
                assert_eq!(
                    l.decode(e.as_bytes()).unwrap(),
                    vec![Bytes::from(canonical.clone())],
                    "{ty}"
                );
            }
        }
    }

    #[test]
    fn non_canonical_varints_and_decimals_order_numerically() {
        let mut rng = StdRng::seed_from_u64(99);
        let l = layout(&CqlType::Varint, Order::Asc);
        let ld = layout(&CqlType::Decimal, Order::Asc);
        for _ in 0..3000 {
            let (x, y): (i64, i64) = (
                rng.gen::<i64>() >> rng.gen_range(0..63),
                rng.gen::<i64>() >> rng.gen_range(0..63),
            );
            // Padded (non-minimal) two's complement.
            let pad = |v: i64, rng: &mut StdRng| {
                let mut b = vec![if v < 0 { 0xFF } else { 0 }; rng.gen_range(0..3)];
                b.extend(v.to_be_bytes());
                b
            };
            let (bx, by) = (pad(x, &mut rng), pad(y, &mut rng));
            assert_eq!(
                ClusteringLayout::compare_values(&CqlType::Varint, &bx, &by),
                x.cmp(&y)
            );
            let (ex, ey) = (l.encode_key(&[&bx]).unwrap(), l.encode_key(&[&by]).unwrap());
            assert_eq!(ex.cmp(&ey), x.cmp(&y), "{x} vs {y}");
            assert_eq!(
                l.decode(ex.as_bytes()).unwrap()[0].as_ref(),
                minimal_varint(&x.to_be_bytes()).as_slice()
            );

            // Decimals: an exact rational comparison with i128 as the oracle.
            let (sx, sy) = (rng.gen_range(-9..=9i32), rng.gen_range(-9..=9i32));
            let dx: i64 = rng.gen_range(-1_000_000..1_000_000) * [1, 10, 100][rng.gen_range(0..3)];
            let dy: i64 = rng.gen_range(-1_000_000..1_000_000) * [1, 10, 100][rng.gen_range(0..3)];
            let common = sx.max(sy);
            let ix = i128::from(dx) * 10i128.pow((common - sx) as u32);
            let iy = i128::from(dy) * 10i128.pow((common - sy) as u32);
            let dec = |s: i32, u: i64, rng: &mut StdRng| {
                let mut v = s.to_be_bytes().to_vec();
                v.extend(pad(u, rng));
                v
            };
            let (vx, vy) = (dec(sx, dx, &mut rng), dec(sy, dy, &mut rng));
            assert_eq!(
                ClusteringLayout::compare_values(&CqlType::Decimal, &vx, &vy),
                ix.cmp(&iy)
            );
            let (ex, ey) = (
                ld.encode_key(&[&vx]).unwrap(),
                ld.encode_key(&[&vy]).unwrap(),
            );
            assert_eq!(ex.cmp(&ey), ix.cmp(&iy), "{dx}e-{sx} vs {dy}e-{sy}");
            let back = ld.decode(ex.as_bytes()).unwrap();
            assert_eq!(
                ClusteringLayout::compare_values(&CqlType::Decimal, &back[0], &vx),
                Ordering::Equal
            );
        }
    }

    #[test]
    fn compare_values_matches_native_semantics() {
        use CqlType::*;
        let cv = ClusteringLayout::compare_values;
        assert_eq!(
            cv(&Int, &(-1i32).to_be_bytes(), &1i32.to_be_bytes()),
            Ordering::Less
        );
        assert_eq!(
            cv(&Bigint, &i64::MIN.to_be_bytes(), &i64::MAX.to_be_bytes()),
            Ordering::Less
        );
        assert_eq!(
            cv(&Float, &(-0.0f32).to_be_bytes(), &0.0f32.to_be_bytes()),
            Ordering::Less
        );
        assert_eq!(
            cv(
                &Float,
                &f32::NAN.to_be_bytes(),
                &f32::INFINITY.to_be_bytes()
            ),
            Ordering::Greater
        );
        assert_eq!(
            cv(&Double, &(-f64::NAN).to_be_bytes(), &f64::NAN.to_be_bytes()),
            Ordering::Equal
        );
        assert_eq!(cv(&Blob, &[0xFF], &[0x00, 0x00]), Ordering::Greater);
        assert_eq!(cv(&Inet, &[1, 2, 3, 4], &[0; 16]), Ordering::Greater);
        assert_eq!(
            cv(
                &Date,
                &0x8000_0000u32.to_be_bytes(),
                &0x7FFF_FFFFu32.to_be_bytes()
            ),
            Ordering::Greater
        );
        assert_eq!(cv(&Varint, &[0x80], &[0x7F]), Ordering::Less);
        assert_eq!(cv(&Varint, &[0x00, 0x80], &[0x7F]), Ordering::Greater);
        assert_eq!(cv(&Boolean, &[0], &[1]), Ordering::Less);
        // Version 4 sorts after every version 1 UUID, whatever the bytes.
        let mut v4 = [0u8; 16];
        v4[6] = 0x40;
        let v1 = v1_uuid(u64::MAX, [0xFF; 8]);
        assert_eq!(cv(&Uuid, &v4, &v1), Ordering::Greater);
    }

    #[test]
    fn timeuuids_sort_by_time_not_bytes() {
        // t1 is earlier (timestamp 0xFFFF_FFFF) but its bytes start with 0xFF; t2 is later
        // (timestamp 2^32) and its bytes start with 0x00.
        let t1 = v1_uuid(0xFFFF_FFFF, [0; 8]);
        let t2 = v1_uuid(1 << 32, [0; 8]);
        assert_eq!(&t1[..8], &[0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x10, 0x00]);
        assert_eq!(&t2[..8], &[0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x10, 0x00]);
        assert!(t1 > t2);
        // Real-world shape: a later time_hi beats an earlier one in time_low.
        let t3 = [
            0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x11, 0xEF, 0x80, 0, 0, 0, 0, 0, 0, 0,
        ];
        let t4 = [
            0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x11, 0xEE, 0x80, 0, 0, 0, 0, 0, 0, 0,
        ];
        for ty in [CqlType::Timeuuid, CqlType::Uuid] {
            let l = layout(&ty, Order::Asc);
            assert!(
                l.encode_key(&[&t1]).unwrap() < l.encode_key(&[&t2]).unwrap(),
                "{ty}"
            );
            assert!(
                l.encode_key(&[&t4]).unwrap() < l.encode_key(&[&t3]).unwrap(),
                "{ty}"
            );
            let ld = layout(&ty, Order::Desc);
            assert!(
                ld.encode_key(&[&t1]).unwrap() > ld.encode_key(&[&t2]).unwrap(),
                "{ty}"
            );
        }
        // Same timestamp: timeuuid compares the low bytes signed, uuid unsigned.
        let lo = v1_uuid(7, [0x7F, 0, 0, 0, 0, 0, 0, 0]);
        let hi = v1_uuid(7, [0x80, 0, 0, 0, 0, 0, 0, 0]);
        let lt = layout(&CqlType::Timeuuid, Order::Asc);
        let lu = layout(&CqlType::Uuid, Order::Asc);
        assert!(lt.encode_key(&[&hi]).unwrap() < lt.encode_key(&[&lo]).unwrap());
        assert!(lu.encode_key(&[&lo]).unwrap() < lu.encode_key(&[&hi]).unwrap());
    }

    #[test]
    fn invalid_values_are_rejected() {
        let l = |ty: CqlType| layout(&ty, Order::Asc);
        assert!(l(CqlType::Int).encode_key(&[&[1, 2, 3]]).is_err());
        assert!(l(CqlType::Text).encode_key(&[&[0xFF]]).is_err());
        assert!(l(CqlType::Time)
            .encode_key(&[&(-1i64).to_be_bytes()])
            .is_err());
        assert!(l(CqlType::Timeuuid).encode_key(&[&[0u8; 16]]).is_err());
        assert!(l(CqlType::Decimal).encode_key(&[&[0, 0]]).is_err());
        let frozen = CqlType::Frozen(Box::new(CqlType::List(Box::new(CqlType::Int))));
        assert!(l(frozen.clone()).encode_key(&[&[0, 0, 0, 0]]).is_ok());
        assert!(l(frozen).encode_key(&[&[0, 0, 0, 1]]).is_err());
        let two =
            ClusteringLayout::new(vec![(CqlType::Int, Order::Asc), (CqlType::Int, Order::Asc)]);
        assert!(two.encode_key(&[&[0, 0, 0, 1]]).is_err());
        assert!(two
            .encode_prefix(&[&[0, 0, 0, 1], &[0, 0, 0, 1], &[0, 0, 0, 1]])
            .is_err());
        // A corrupt decimal exponent far beyond the i32 scale range fails fast.
        let mut huge = vec![COMPONENT_MARKER, TAG_POS];
        huge.extend_from_slice(&((1u64 << 40) ^ (1 << 63)).to_be_bytes());
        huge.extend_from_slice(&[11, 0]);
        assert!(l(CqlType::Decimal).decode(&huge).is_err());
        huge[2..10].copy_from_slice(&((-(1i64 << 40)) as u64 ^ (1 << 63)).to_be_bytes());
        assert!(l(CqlType::Decimal).decode(&huge).is_err());
        // Garbage encodings do not panic and mostly fail.
        let mut rng = StdRng::seed_from_u64(3);
        for ty in NATIVE {
            for order in [Order::Asc, Order::Desc] {
                let l = layout(ty, order);
                for _ in 0..300 {
                    let len = rng.gen_range(0..24);
                    let mut junk: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
                    if rng.gen() && !junk.is_empty() {
                        junk[0] = COMPONENT_MARKER;
                    }
                    if let Ok(vals) = l.decode(&junk) {
                        // Whatever decodes must be a valid value that re-encodes.
                        for v in vals {
                            assert!(l.encode_key(&[&v]).is_ok(), "{ty}: {junk:02x?}");
                        }
                    }
                }
            }
        }
    }

    fn compare_keys(l: &ClusteringLayout, a: &[Vec<u8>], b: &[Vec<u8>]) -> Ordering {
        for (((ty, order), x), y) in l.columns.iter().zip(a).zip(b) {
            let c = ClusteringLayout::compare_values(ty, x, y);
            let c = if *order == Order::Desc {
                c.reverse()
            } else {
                c
            };
            if c.is_ne() {
                return c;
            }
        }
        a.len().cmp(&b.len())
    }

    #[test]
    fn multi_column_keys_and_prefixes() {
        let mut rng = StdRng::seed_from_u64(0x5EED);
        let l = ClusteringLayout::new(vec![
            (CqlType::Int, Order::Asc),
            (CqlType::Text, Order::Desc),
            (CqlType::Timeuuid, Order::Asc),
            (CqlType::Varint, Order::Desc),
            (CqlType::Double, Order::Asc),
            (CqlType::Blob, Order::Desc),
        ]);
        // Small per-column domains so keys share prefixes often.
        let domains: Vec<Vec<Vec<u8>>> = l
            .columns
            .iter()
            .map(|(ty, _)| {
                let mut v = values(ty, &mut rng);
                v.truncate(6);
                v
            })
            .collect();
        let keys: Vec<Vec<Vec<u8>>> = (0..250)
            .map(|_| {
                domains
                    .iter()
                    .map(|d| d[rng.gen_range(0..d.len())].clone())
                    .collect()
            })
            .collect();
        let encoded: Vec<ClusteringKey> = keys
            .iter()
            .map(|k| {
                l.encode_key(&k.iter().map(Vec::as_slice).collect::<Vec<_>>())
                    .unwrap()
            })
            .collect();
        for (k, e) in keys.iter().zip(&encoded) {
            let back: Vec<Vec<u8>> = l
                .decode(e.as_bytes())
                .unwrap()
                .iter()
                .map(|b| b.to_vec())
                .collect();
            assert_eq!(&back, k);
        }
        for (ka, ea) in keys.iter().zip(&encoded) {
            for (kb, eb) in keys.iter().zip(&encoded) {
                assert_eq!(
                    ea.cmp(eb),
                    compare_keys(&l, ka, kb),
                    "{ka:02x?} vs {kb:02x?}"
                );
            }
            for n in 0..=ka.len() {
                let refs: Vec<&[u8]> = ka[..n].iter().map(Vec::as_slice).collect();
                let p = l.encode_prefix(&refs).unwrap();
                assert!(ea.as_bytes().starts_with(&p));
                let decoded: Vec<Vec<u8>> =
                    l.decode(&p).unwrap().iter().map(|b| b.to_vec()).collect();
                assert_eq!(decoded, ka[..n].to_vec());
                let range = ClusteringRange::prefix(&p);
                assert!(after_prefix(&p).as_ref() > ea.as_bytes());
                // Exactly the keys that agree with `ka` on the first n columns are in range.
                for (kb, eb) in keys.iter().zip(&encoded) {
                    let same = compare_keys(&l, &ka[..n], &kb[..n]).is_eq();
                    assert_eq!(range.contains(eb.as_bytes()), same, "prefix {n}");
                    if !same {
                        let c = compare_keys(&l, &ka[..n], &kb[..n]);
                        assert_eq!(p.as_slice().cmp(eb.as_bytes()), c);
                    }
                }
            }
        }
        assert_eq!(l.encode_prefix(&[]).unwrap(), Vec::<u8>::new());
        assert!(l.decode(&[]).unwrap().is_empty());
    }

    proptest::proptest! {
        #[test]
        fn prop_bigint_text_pairs(a: i64, b: i64, s: String, t: String, desc: bool) {
            let order = if desc { Order::Desc } else { Order::Asc };
            let l = ClusteringLayout::new(vec![(CqlType::Bigint, order), (CqlType::Text, Order::Asc)]);
            let ea = l.encode_key(&[&a.to_be_bytes(), s.as_bytes()]).unwrap();
            let eb = l.encode_key(&[&b.to_be_bytes(), t.as_bytes()]).unwrap();
            let first = if desc { b.cmp(&a) } else { a.cmp(&b) };
            proptest::prop_assert_eq!(ea.cmp(&eb), first.then(s.as_bytes().cmp(t.as_bytes())));
        }

        #[test]
        fn prop_blob_round_trip(v: Vec<u8>, desc: bool) {
            let order = if desc { Order::Desc } else { Order::Asc };
            let l = layout(&CqlType::Blob, order);
            let e = l.encode_key(&[&v]).unwrap();
            proptest::prop_assert_eq!(l.decode(e.as_bytes()).unwrap(), vec![Bytes::from(v)]);
        }

        #[test]
        fn prop_varint_order(a: Vec<u8>, b: Vec<u8>) {
            let l = layout(&CqlType::Varint, Order::Asc);
            let ea = l.encode_key(&[&a]).unwrap();
            let eb = l.encode_key(&[&b]).unwrap();
            proptest::prop_assert_eq!(ea.cmp(&eb), ClusteringLayout::compare_values(&CqlType::Varint, &a, &b));
        }
    }

    /// Frozen collections and tuples, checked against a model whose derived `Ord` is the
    /// reference order.
    mod composite {
        use super::*;
        use proptest::collection::{btree_map, btree_set, vec as pvec};
        use proptest::prelude::*;

        /// A value of one of the tested types. Within one type the variants never mix except
        /// `Empty` (the zero-byte value), which comes first, as Cassandra orders it; so the
        /// derived `Ord` is Cassandra's order: numbers numerically, text by its UTF-8 bytes,
        /// `Vec` element by element then shorter first (lists, sets, and maps as their
        /// (key, value) entries), `Option` with `None` (a null tuple field) first.
        #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
        enum M {
            Empty,
            Int(i32),
            Big(i64),
            Text(String),
            Coll(Vec<M>),
            Map(Vec<(M, M)>),
            Tuple(Vec<Option<M>>),
        }

        fn framed(v: Option<&[u8]>, out: &mut Vec<u8>) {
            match v {
                None => out.extend_from_slice(&(-1i32).to_be_bytes()),
                Some(v) => {
                    out.extend_from_slice(&(v.len() as i32).to_be_bytes());
                    out.extend_from_slice(v);
                }
            }
        }

        /// Native protocol v4 serialization of a model value.
        fn ser(m: &M) -> Vec<u8> {
            let mut out = Vec::new();
            match m {
                M::Empty => {}
                M::Int(x) => out.extend_from_slice(&x.to_be_bytes()),
                M::Big(x) => out.extend_from_slice(&x.to_be_bytes()),
                M::Text(t) => out.extend_from_slice(t.as_bytes()),
                M::Coll(es) => {
                    out.extend_from_slice(&(es.len() as i32).to_be_bytes());
                    for e in es {
                        framed(Some(&ser(e)), &mut out);
                    }
                }
                M::Map(es) => {
                    out.extend_from_slice(&(es.len() as i32).to_be_bytes());
                    for (k, v) in es {
                        framed(Some(&ser(k)), &mut out);
                        framed(Some(&ser(v)), &mut out);
                    }
                }
                M::Tuple(fs) => {
                    for f in fs {
                        framed(f.as_ref().map(ser).as_deref(), &mut out);
                    }
                }
            }
            out
        }

        fn frozen(t: CqlType) -> CqlType {
            CqlType::Frozen(Box::new(t))
        }
        fn list(t: CqlType) -> CqlType {
            CqlType::List(Box::new(t))
        }
        fn set(t: CqlType) -> CqlType {
            CqlType::Set(Box::new(t))
        }
        fn map(k: CqlType, v: CqlType) -> CqlType {
            CqlType::Map(Box::new(k), Box::new(v))
        }

        fn int_m() -> BoxedStrategy<M> {
            prop_oneof![
                1 => Just(M::Empty),
                8 => (-3i32..3).prop_map(M::Int),
                3 => any::<i32>().prop_map(M::Int),
            ]
            .boxed()
        }

        fn big_m() -> BoxedStrategy<M> {
            prop_oneof![
                1 => Just(M::Empty),
                6 => (-2i64..2).prop_map(M::Big),
                3 => any::<i64>().prop_map(M::Big),
            ]
            .boxed()
        }

        /// Short strings over an alphabet with NUL, 0x01 and multi-byte characters.
        fn text_m() -> BoxedStrategy<M> {
            pvec(
                proptest::sample::select(vec!['\0', '\u{1}', 'a', 'b', 'ÿ', '\u{10FFFF}']),
                0..4,
            )
            .prop_map(|cs| M::Text(cs.into_iter().collect()))
            .boxed()
        }

        fn list_of(e: BoxedStrategy<M>, max: usize) -> BoxedStrategy<M> {
            pvec(e, 0..max).prop_map(M::Coll).boxed()
        }

        /// Sorted and distinct, as in a valid set value.
        fn set_of(e: BoxedStrategy<M>, max: usize) -> BoxedStrategy<M> {
            btree_set(e, 0..max)
                .prop_map(|s| M::Coll(s.into_iter().collect()))
                .boxed()
        }

        fn map_of(k: BoxedStrategy<M>, v: BoxedStrategy<M>, max: usize) -> BoxedStrategy<M> {
            btree_map(k, v, 0..max)
                .prop_map(|m| M::Map(m.into_iter().collect()))
                .boxed()
        }

        /// Up to `fields.len()` leading fields, each null or a value.
        fn tuple_of(fields: Vec<BoxedStrategy<M>>) -> BoxedStrategy<M> {
            let n = fields.len();
            let fields: Vec<_> = fields
                .into_iter()
                .map(|f| proptest::option::weighted(0.75, f))
                .collect();
            (fields, 0..=n)
                .prop_map(|(fs, len)| M::Tuple(fs.into_iter().take(len).collect()))
                .boxed()
        }

        /// The zero-byte value of a collection type, now and then.
        fn or_empty(s: BoxedStrategy<M>) -> BoxedStrategy<M> {
            prop_oneof![1 => Just(M::Empty), 12 => s].boxed()
        }

        /// The tested types with a strategy for their canonical values.
        fn cases() -> Vec<(CqlType, BoxedStrategy<M>)> {
            use CqlType::{Bigint, Int, Text};
            vec![
                (frozen(list(Int)), or_empty(list_of(int_m(), 5))),
                (frozen(set(Text)), or_empty(set_of(text_m(), 4))),
                (
                    frozen(map(Int, Text)),
                    or_empty(map_of(int_m(), text_m(), 4)),
                ),
                (
                    CqlType::Tuple(vec![Int, Text, Bigint]),
                    tuple_of(vec![int_m(), text_m(), big_m()]),
                ),
                (
                    frozen(list(frozen(list(Int)))),
                    or_empty(list_of(list_of(int_m(), 3), 4)),
                ),
                // Nested both ways, with non-frozen inner types as a frozen outer type
                // implies them.
                (
                    frozen(map(
                        frozen(set(Int)),
                        CqlType::Tuple(vec![Text, list(Bigint)]),
                    )),
                    or_empty(map_of(
                        set_of(int_m(), 3),
                        tuple_of(vec![text_m(), list_of(big_m(), 3)]),
                        3,
                    )),
                ),
            ]
        }

        /// Orders, round trips, prefix-freedom, and composite keys with a trailing `int`
        /// column and their prefixes, for all pairs of `vals`.
        fn check(ty: &CqlType, vals: &[M], ints: &[i32]) -> std::result::Result<(), TestCaseError> {
            let sers: Vec<Vec<u8>> = vals.iter().map(ser).collect();
            for order in [Order::Asc, Order::Desc] {
                let dir = |o: Ordering| if order == Order::Desc { o.reverse() } else { o };
                let l = layout(ty, order);
                let encs: Vec<ClusteringKey> =
                    sers.iter().map(|s| l.encode_key(&[s]).unwrap()).collect();
                for (s, e) in sers.iter().zip(&encs) {
                    prop_assert_eq!(
                        l.decode(e.as_bytes()).unwrap(),
                        vec![Bytes::from(s.clone())]
                    );
                }
                for (i, (a, ea)) in vals.iter().zip(&encs).enumerate() {
                    for (j, (b, eb)) in vals.iter().zip(&encs).enumerate() {
                        let want = a.cmp(b);
                        prop_assert_eq!(
                            ClusteringLayout::compare_values(ty, &sers[i], &sers[j]),
                            want,
                            "compare_values {:?} vs {:?}",
                            a,
                            b
                        );
                        prop_assert_eq!(ea.cmp(eb), dir(want), "{:?} {:?} vs {:?}", order, a, b);
                        if ea != eb {
                            prop_assert!(!eb.as_bytes().starts_with(ea.as_bytes()));
                        }
                    }
                }

                let l2 =
                    ClusteringLayout::new(vec![(ty.clone(), order), (CqlType::Int, Order::Asc)]);
                let keys: Vec<(&M, &Vec<u8>, i32)> = vals
                    .iter()
                    .zip(&sers)
                    .enumerate()
                    .map(|(i, (m, s))| (m, s, ints[i % ints.len()]))
                    .collect();
                let full: Vec<ClusteringKey> = keys
                    .iter()
                    .map(|(_, s, x)| l2.encode_key(&[s, &x.to_be_bytes()]).unwrap())
                    .collect();
                for ((ma, sa, xa), ea) in keys.iter().zip(&full) {
                    prop_assert_eq!(
                        l2.decode(ea.as_bytes()).unwrap(),
                        vec![
                            Bytes::from((*sa).clone()),
                            Bytes::copy_from_slice(&xa.to_be_bytes())
                        ]
                    );
                    let p = l2.encode_prefix(&[sa]).unwrap();
                    prop_assert!(ea.as_bytes().starts_with(&p));
                    prop_assert_eq!(l2.decode(&p).unwrap(), vec![Bytes::from((*sa).clone())]);
                    prop_assert!(after_prefix(&p).as_ref() > ea.as_bytes());
                    let range = ClusteringRange::prefix(&p);
                    for ((mb, _, xb), eb) in keys.iter().zip(&full) {
                        let first = dir(ma.cmp(mb));
                        prop_assert_eq!(ea.cmp(eb), first.then(xa.cmp(xb)));
                        prop_assert_eq!(range.contains(eb.as_bytes()), first.is_eq());
                        if first.is_ne() {
                            prop_assert_eq!(p.as_slice().cmp(eb.as_bytes()), first);
                        }
                    }
                }
            }
            Ok(())
        }

        fn strategy_for(i: usize) -> (CqlType, BoxedStrategy<M>) {
            cases().swap_remove(i)
        }

        /// A value of any of the tested types, with the index of its type.
        fn typed_value() -> impl Strategy<Value = (usize, M)> {
            (0..cases().len()).prop_flat_map(|i| (Just(i), strategy_for(i).1))
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(200))]

            #[test]
            fn prop_list_int(vals in pvec(strategy_for(0).1, 1..10), ints in pvec(-2i32..2, 1..4)) {
                check(&strategy_for(0).0, &vals, &ints)?;
            }

            #[test]
            fn prop_set_text(vals in pvec(strategy_for(1).1, 1..10), ints in pvec(-2i32..2, 1..4)) {
                check(&strategy_for(1).0, &vals, &ints)?;
            }

            #[test]
            fn prop_map_int_text(vals in pvec(strategy_for(2).1, 1..10), ints in pvec(-2i32..2, 1..4)) {
                check(&strategy_for(2).0, &vals, &ints)?;
            }

            #[test]
            fn prop_tuple_int_text_bigint(vals in pvec(strategy_for(3).1, 1..10), ints in pvec(-2i32..2, 1..4)) {
                check(&strategy_for(3).0, &vals, &ints)?;
            }

            #[test]
            fn prop_list_of_lists(vals in pvec(strategy_for(4).1, 1..10), ints in pvec(-2i32..2, 1..4)) {
                check(&strategy_for(4).0, &vals, &ints)?;
            }

            #[test]
            fn prop_map_of_sets_to_tuples(vals in pvec(strategy_for(5).1, 1..8), ints in pvec(-2i32..2, 1..4)) {
                check(&strategy_for(5).0, &vals, &ints)?;
            }

            /// Corrupted serializations: encoding fails exactly when validation does, never
            /// panics, and what encodes decodes to a value equal to the input.
            #[test]
            fn prop_malformed_values(
                (which, v) in typed_value(),
                mutation in 0..4u8,
                pos in any::<proptest::sample::Index>(),
                byte in any::<u8>(),
                junk in pvec(any::<u8>(), 0..24),
                desc: bool,
            ) {
                let ty = strategy_for(which).0;
                let mut bad = ser(&v);
                match mutation {
                    0 if !bad.is_empty() => bad.truncate(pos.index(bad.len())),
                    1 if !bad.is_empty() => { let i = pos.index(bad.len()); bad[i] ^= byte | 1; }
                    2 => bad.extend_from_slice(&junk),
                    _ => bad = junk.clone(),
                }
                let order = if desc { Order::Desc } else { Order::Asc };
                let l = layout(&ty, order);
                let enc = l.encode_key(&[&bad]);
                if !bad.is_empty() {
                    prop_assert_eq!(enc.is_ok(), ty.validate(&bad).is_ok(), "{:02x?}", bad);
                }
                if let Ok(e) = enc {
                    let back = l.decode(e.as_bytes()).unwrap();
                    prop_assert_eq!(
                        ClusteringLayout::compare_values(&ty, &back[0], &bad),
                        Ordering::Equal
                    );
                }
                // compare_values never panics on garbage either.
                let _ = ClusteringLayout::compare_values(&ty, &bad, &junk);
            }

            /// Corrupted encodings: decoding never panics, and whatever decodes re-encodes to
            /// the same bytes (these types have one encoding per value).
            #[test]
            fn prop_malformed_encodings(
                (which, v) in typed_value(),
                mutation in 0..4u8,
                pos in any::<proptest::sample::Index>(),
                byte in any::<u8>(),
                junk in pvec(any::<u8>(), 0..24),
                desc: bool,
            ) {
                let ty = strategy_for(which).0;
                let order = if desc { Order::Desc } else { Order::Asc };
                let l = layout(&ty, order);
                let mut bad = l.encode_key(&[&ser(&v)]).unwrap().0.to_vec();
                match mutation {
                    0 => bad.truncate(pos.index(bad.len())),
                    1 => { let i = pos.index(bad.len()); bad[i] ^= byte | 1; }
                    2 => bad.extend_from_slice(&junk),
                    _ => { bad = vec![COMPONENT_MARKER]; bad.extend_from_slice(&junk); }
                }
                if let Ok(back) = l.decode(&bad) {
                    let refs: Vec<&[u8]> = back.iter().map(|b| b.as_ref()).collect();
                    prop_assert_eq!(l.encode_prefix(&refs).unwrap(), bad);
                }
            }
        }

        fn ints(xs: &[i32]) -> Vec<u8> {
            ser(&M::Coll(xs.iter().map(|&x| M::Int(x)).collect()))
        }

        #[test]
        fn encoding_bytes() {
            let lt = frozen(list(CqlType::Int));
            let asc = layout(&lt, Order::Asc);
            let desc = layout(&lt, Order::Desc);
            let enc = |l: &ClusteringLayout, v: &[u8]| l.encode_key(&[v]).unwrap().0.to_vec();
            assert_eq!(enc(&asc, &[]), [COMPONENT_MARKER, TAG_EMPTY]);
            assert_eq!(enc(&asc, &ints(&[])), [COMPONENT_MARKER, ITEM_END]);
            assert_eq!(
                enc(&asc, &ints(&[1])),
                [
                    COMPONENT_MARKER,
                    ITEM_VALUE,
                    TAG_VALUE,
                    0x80,
                    0,
                    0,
                    1,
                    ITEM_END
                ]
            );
            assert_eq!(
                enc(&desc, &ints(&[1])),
                [
                    COMPONENT_MARKER,
                    !ITEM_VALUE,
                    !TAG_VALUE,
                    0x7F,
                    0xFF,
                    0xFF,
                    0xFE,
                    !ITEM_END
                ]
            );
            let tt = CqlType::Tuple(vec![CqlType::Int, CqlType::Text]);
            let t = ser(&M::Tuple(vec![Some(M::Int(1)), None]));
            assert_eq!(
                enc(&layout(&tt, Order::Asc), &t),
                [
                    COMPONENT_MARKER,
                    ITEM_VALUE,
                    TAG_VALUE,
                    0x80,
                    0,
                    0,
                    1,
                    ITEM_NULL,
                    ITEM_END
                ]
            );
            assert_eq!(
                enc(&layout(&tt, Order::Asc), &[]),
                [COMPONENT_MARKER, ITEM_END]
            );
            let mt = frozen(map(CqlType::Text, CqlType::Int));
            let m = ser(&M::Map(vec![(M::Text("a".into()), M::Int(0))]));
            assert_eq!(
                enc(&layout(&mt, Order::Asc), &m),
                [
                    COMPONENT_MARKER,
                    ITEM_VALUE,
                    b'a',
                    0,
                    0,
                    TAG_VALUE,
                    0x80,
                    0,
                    0,
                    0,
                    ITEM_END
                ]
            );
        }

        #[test]
        fn cassandra_examples() {
            let lt = frozen(list(CqlType::Int));
            let l = layout(&lt, Order::Asc);
            let sorted = [
                Vec::new(),
                ints(&[]),
                ints(&[-5]),
                ints(&[1, 2]),
                ints(&[1, 2, 0]),
                ints(&[1, 3]),
                ints(&[2]),
            ];
            for w in sorted.windows(2) {
                assert!(l.encode_key(&[&w[0]]).unwrap() < l.encode_key(&[&w[1]]).unwrap());
                assert_eq!(
                    ClusteringLayout::compare_values(&lt, &w[0], &w[1]),
                    Ordering::Less
                );
            }
            // (1) < (1, null) < (1, '') < (1, 'a') < (2)
            let tt = CqlType::Tuple(vec![CqlType::Int, CqlType::Text]);
            let l = layout(&tt, Order::Asc);
            let one = Some(M::Int(1));
            let sorted = [
                M::Tuple(vec![]),
                M::Tuple(vec![None]),
                M::Tuple(vec![None, Some(M::Text("z".into()))]),
                M::Tuple(vec![one.clone()]),
                M::Tuple(vec![one.clone(), None]),
                M::Tuple(vec![one.clone(), Some(M::Text(String::new()))]),
                M::Tuple(vec![one, Some(M::Text("a".into()))]),
                M::Tuple(vec![Some(M::Int(2))]),
            ]
            .map(|m| ser(&m));
            for w in sorted.windows(2) {
                assert!(l.encode_key(&[&w[0]]).unwrap() < l.encode_key(&[&w[1]]).unwrap());
                assert_eq!(
                    ClusteringLayout::compare_values(&tt, &w[0], &w[1]),
                    Ordering::Less
                );
            }
        }

        /// Elements Cassandra's comparators consider equal encode alike and decode to their
        /// canonical form, inside collections and tuples too.
        #[test]
        fn non_canonical_elements_normalise() {
            let coll = |es: &[&[u8]]| {
                let mut out = (es.len() as i32).to_be_bytes().to_vec();
                es.iter().for_each(|e| framed(Some(e), &mut out));
                out
            };
            let entry = |k: &[u8], v: &[u8]| {
                let mut out = 1i32.to_be_bytes().to_vec();
                framed(Some(k), &mut out);
                framed(Some(v), &mut out);
                out
            };
            let tup = |fs: &[Option<&[u8]>]| {
                let mut out = Vec::new();
                fs.iter().for_each(|f| framed(*f, &mut out));
                out
            };
            let cases: Vec<(CqlType, Vec<u8>, Vec<u8>)> = vec![
                (
                    frozen(list(CqlType::Decimal)),
                    coll(&[&[0, 0, 0, 1, 10], &[0, 0, 0, 7, 0]]),
                    coll(&[&[0, 0, 0, 0, 1], &[0, 0, 0, 0, 0]]),
                ),
                (
                    frozen(set(CqlType::Varint)),
                    coll(&[&[0xFF, 0xFF], &[0, 0, 1]]),
                    coll(&[&[0xFF], &[1]]),
                ),
                (
                    frozen(map(CqlType::Boolean, CqlType::Double)),
                    entry(&[2], &0xFFF0_0000_0000_0001u64.to_be_bytes()),
                    entry(&[1], &f64::NAN.to_be_bytes()),
                ),
                (
                    CqlType::Tuple(vec![CqlType::Int, frozen(list(CqlType::Varint))]),
                    tup(&[None, Some(&coll(&[&[0, 0x7F]]))]),
                    tup(&[None, Some(&coll(&[&[0x7F]]))]),
                ),
            ];
            for (ty, raw, canonical) in cases {
                assert!(ty.validate(&raw).is_ok(), "{ty}");
                assert_eq!(
                    ClusteringLayout::compare_values(&ty, &raw, &canonical),
                    Ordering::Equal,
                    "{ty}"
                );
                for order in [Order::Asc, Order::Desc] {
                    let l = layout(&ty, order);
                    let e = l.encode_key(&[&raw]).unwrap();
                    assert_eq!(e, l.encode_key(&[&canonical]).unwrap(), "{ty}");
                    assert_eq!(
                        l.decode(e.as_bytes()).unwrap(),
                        vec![Bytes::from(canonical.clone())]
                    );
                }
            }
        }

        #[test]
        fn invalid_composites_are_rejected() {
            let lt = frozen(list(CqlType::Int));
            let l = layout(&lt, Order::Asc);
            let mut null_elem = 1i32.to_be_bytes().to_vec();
            null_elem.extend_from_slice(&(-1i32).to_be_bytes());
            for bad in [
                vec![0, 0, 0],
                vec![0, 0, 0, 1],
                vec![0xFF, 0xFF, 0xFF, 0xFF],
                null_elem,
                coll_with_len(3),
                [ints(&[1]), vec![0]].concat(),
                vec![0x7F, 0xFF, 0xFF, 0xFF, 0, 0, 0, 4],
            ] {
                assert!(l.encode_key(&[&bad]).is_err(), "{bad:02x?}");
            }
            // Too many tuple fields; a text field that is not UTF-8.
            let tt = CqlType::Tuple(vec![CqlType::Int]);
            let two = ser(&M::Tuple(vec![None, None]));
            assert!(layout(&tt, Order::Asc).encode_key(&[&two]).is_err());
            let tt = CqlType::Tuple(vec![CqlType::Text]);
            let mut bad_text = 1i32.to_be_bytes().to_vec();
            bad_text.push(0xFF);
            assert!(layout(&tt, Order::Asc).encode_key(&[&bad_text]).is_err());
            // Empty values nested where their type refuses them: an empty inner list, an
            // empty date.
            let nested = frozen(list(frozen(list(CqlType::Int))));
            let with_empty = ser(&M::Coll(vec![M::Empty]));
            assert!(layout(&nested, Order::Asc)
                .encode_key(&[&with_empty])
                .is_err());
            let dates = frozen(set(CqlType::Date));
            assert!(layout(&dates, Order::Asc)
                .encode_key(&[&with_empty])
                .is_err());
            // The same, forged as encodings: decoding refuses them.
            let forged = [COMPONENT_MARKER, ITEM_VALUE, TAG_EMPTY, ITEM_END];
            assert!(layout(&nested, Order::Asc).decode(&forged).is_err());
            assert!(layout(&dates, Order::Asc).decode(&forged).is_err());
            // A tuple encoding with more fields than the type; a null in a list.
            let forged = [COMPONENT_MARKER, ITEM_NULL, ITEM_NULL, ITEM_END];
            assert!(layout(&tt, Order::Asc).decode(&forged).is_err());
            assert!(l.decode(&[COMPONENT_MARKER, ITEM_NULL, ITEM_END]).is_err());
            // Missing end marker.
            assert!(l
                .decode(&[COMPONENT_MARKER, ITEM_VALUE, TAG_EMPTY])
                .is_err());
        }

        fn coll_with_len(n: i32) -> Vec<u8> {
            let mut v = 1i32.to_be_bytes().to_vec();
            v.extend_from_slice(&n.to_be_bytes());
            v.extend_from_slice(&[1, 2]);
            v
        }
    }
}
