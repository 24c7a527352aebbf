//! Cassandra's order of values of every type: the one comparator, which the clustering
//! encoding ([`crate::model::clustering`]) must reproduce byte for byte and the CQL layer
//! uses for `ORDER BY`-free sorting, sets, maps, filters and aggregates.
//!
//! Each native type follows its Cassandra `AbstractType.compare`: signed numbers,
//! `float`/`double` as Java's `compare` (-0.0 < 0.0, every NaN one value, last),
//! `varint`/`decimal` numerically (`1.50 == 1.5`), `text`, `ascii`, `blob`, `inet`, `date`
//! and `time` as unsigned bytes, `uuid` by version then (v1) timestamp then bytes,
//! `timeuuid` by timestamp then the clock/node half as *signed* bytes, `duration` by months,
//! days, nanoseconds. The empty value sorts before everything.
//!
//! Collections and tuples (frozen or not) compare like Cassandra's `ListType`, `SetType`,
//! `MapType` and `TupleType`: item by item (maps: key, then value), a proper prefix first;
//! tuple fields with null before non-null and a shorter tuple before a longer one.
//!
//! Invariant: the order is total and never panics: a value that is not valid for its type
//! compares as raw bytes.

use super::bigdecimal::BigDecimal;
use super::bigint::BigInt;
use super::duration::decode_duration;
use super::framing::split_items;
use super::CqlType;
use std::cmp::Ordering;

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
        CqlType::Varint => BigInt::from_bytes(a).cmp(&BigInt::from_bytes(b)),
        CqlType::Decimal => BigDecimal::from_bytes(a)?.cmp_value(&BigDecimal::from_bytes(b)?),
        CqlType::Duration => decode_duration(a).ok()?.cmp(&decode_duration(b).ok()?),
        CqlType::Frozen(inner) => compare_non_empty(inner, a, b)?,
        CqlType::List(_)
        | CqlType::Set(_)
        | CqlType::Map(_, _)
        | CqlType::Tuple(_)
        | CqlType::Udt(_) => compare_composites(ty, a, b)?,
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
            (Some(p), Some(q)) => compare(t, p, q),
        };
        if c.is_ne() {
            return Some(c);
        }
    }
    Some(x.len().cmp(&y.len()))
}

/// Compares two serialized values of type `ty` in Cassandra's order. Values that are not
/// valid for the type compare as raw bytes, so the order stays total.
pub fn compare(ty: &CqlType, a: &[u8], b: &[u8]) -> Ordering {
    // Every Cassandra comparator puts the empty value first.
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Less,
        (false, true) => return Ordering::Greater,
        (false, false) => {}
    }
    compare_non_empty(ty, a, b).unwrap_or_else(|| a.cmp(b))
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
pub(crate) fn reorder_timestamp(msb: u64) -> u64 {
    (msb << 48) | ((msb << 16) & 0xFFFF_0000_0000) | (msb >> 32)
}

/// Inverse of [`reorder_timestamp`].
pub(crate) fn unorder_timestamp(ts: u64) -> u64 {
    (ts << 32) | ((ts >> 16) & 0xFFFF_0000) | (ts >> 48)
}
