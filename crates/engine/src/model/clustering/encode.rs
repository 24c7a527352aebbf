//! Encoding serialized values into byte-comparable bodies.

use super::super::types::decode_duration;
use super::super::types::CqlType;
use super::format::*;
use crate::error::Result;
use crate::model::types::compare::reorder_timestamp;
use crate::model::types::framing::split_items;
use crate::model::types::unfrozen;
use crate::model::types::{BigDecimal, BigInt};

// ---------------------------------------------------------------------------------------
// Encoding.

pub(super) fn flip_sign(v: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(v);
    if let Some(first) = out.get_mut(start) {
        *first ^= 0x80;
    }
}

pub(super) fn escape_bytes(v: &[u8], out: &mut Vec<u8>) {
    for &b in v {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0, 0]);
}

pub(super) fn write_len(len: usize, out: &mut Vec<u8>) {
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

pub(super) fn invert_from(out: &mut [u8], start: usize) {
    if let Some(tail) = out.get_mut(start..) {
        tail.iter_mut().for_each(|b| *b = !*b);
    }
}

pub(super) fn encode_body(ty: &CqlType, v: &[u8], out: &mut Vec<u8>) -> Result<()> {
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
            let n = BigInt::from_bytes(v);
            let (negative, mag) = (n.is_negative(), n.magnitude_bytes());
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

pub(super) fn encode_composite(ty: &CqlType, v: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let ty = unfrozen(ty);
    if v.is_empty() && ty.components().is_none() {
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

/// A decimal as its body writes it: the sign, the significant digits (0-9, no leading or
/// trailing zeros; empty for zero) and the exponent `e` such that the value is
/// `0.digits × 10^e`. `None` when the value is shorter than its 4-byte scale.
struct NormDecimal {
    negative: bool,
    digits: Vec<u8>,
    exponent: i64,
}

fn normalize_decimal(v: &[u8]) -> Option<NormDecimal> {
    let d = BigDecimal::from_bytes(v)?;
    if d.unscaled.is_zero() {
        return Some(NormDecimal {
            negative: false,
            digits: Vec::new(),
            exponent: 0,
        });
    }
    let mut digits: Vec<u8> = d
        .unscaled
        .magnitude_digits()
        .bytes()
        .map(|c| c - b'0')
        .collect();
    let trailing = digits.iter().rev().take_while(|&&x| x == 0).count();
    digits.truncate(digits.len() - trailing);
    // value = digits × 10^(trailing - scale) = 0.digits × 10^(len + trailing - scale)
    let exponent = digits.len() as i64 + trailing as i64 - i64::from(d.scale);
    Some(NormDecimal {
        negative: d.unscaled.is_negative(),
        digits,
        exponent,
    })
}
