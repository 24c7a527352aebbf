//! Cassandra's clustering comparator on serialized values (`ClusteringLayout::compare_values`),
//! which the byte-comparable encoding must agree with.

use super::super::types::decode_duration;
use super::super::types::CqlType;
use super::format::*;
use super::numbers::*;
use crate::model::types::framing::split_items;
use std::cmp::Ordering;

pub(super) fn compare_non_empty(ty: &CqlType, a: &[u8], b: &[u8]) -> Option<Ordering> {
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
pub(super) fn compare_composites(ty: &CqlType, a: &[u8], b: &[u8]) -> Option<Ordering> {
    ty.validate(a).ok()?;
    ty.validate(b).ok()?;
    let (x, y) = (split_items(ty, a).ok()?, split_items(ty, b).ok()?);
    for ((t, p), (_, q)) in x.iter().zip(&y) {
        let c = match (p, q) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(p), Some(q)) => compare_values(t, p, q),
        };
        if c.is_ne() {
            return Some(c);
        }
    }
    Some(x.len().cmp(&y.len()))
}

/// Cassandra's comparator for `ty` on two serialized values: the order the encoding
/// reproduces. Values that are not valid for the type compare as raw bytes.
pub(super) fn compare_values(ty: &CqlType, a: &[u8], b: &[u8]) -> Ordering {
    // Every Cassandra comparator puts the empty value first.
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Less,
        (false, true) => return Ordering::Greater,
        (false, false) => {}
    }
    compare_non_empty(ty, a, b).unwrap_or_else(|| a.cmp(b))
}
