//! The shared pieces of the clustering encoding: tags and item markers (see the parent
//! module's docs), the framing of serialized collections and tuples as CQL sends them, and
//! the numeric helpers every other piece uses (canonical floats, UUID timestamps).

use super::super::types::CqlType;
use crate::error::Error;
use std::cmp::Ordering;

pub(super) const TAG_EMPTY: u8 = 0x00;
pub(super) const TAG_VALUE: u8 = 0x01;
pub(super) const TAG_NEG: u8 = 0x01;
pub(super) const TAG_ZERO: u8 = 0x02;
pub(super) const TAG_POS: u8 = 0x03;

/// Item markers of collection and tuple bodies (see the module docs).
pub(super) const ITEM_END: u8 = 0x01;
pub(super) const ITEM_NULL: u8 = 0x02;
pub(super) const ITEM_VALUE: u8 = 0x03;

/// Largest magnitude length written in a single length byte (see the varint body).
pub(super) const SHORT_LEN_MAX: usize = 0xF7;

pub(super) fn invalid(type_name: &'static str, reason: &'static str) -> Error {
    Error::InvalidValue { type_name, reason }
}

/// Reads the native protocol framing of collections and tuples.
pub(super) struct Framed<'a> {
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
pub(super) type FramingResult<T> = std::result::Result<T, &'static str>;

/// Items of a collection or tuple, each with its type; `None` for a null tuple field.
pub(super) type Items<'t, 'a> = Vec<(&'t CqlType, Option<&'a [u8]>)>;

/// The items of a non-empty serialized collection or tuple of type `ty` (frozen or not), each
/// with its type: list and set elements, map keys and values alternately, tuple fields
/// (`None` when null). Checks the framing only, not the items themselves.
pub(super) fn split_items<'t, 'a>(ty: &'t CqlType, v: &'a [u8]) -> FramingResult<Items<'t, 'a>> {
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

pub(super) fn signed_be(v: &[u8]) -> Option<i64> {
    let (&first, rest) = v.split_first()?;
    Some(
        rest.iter()
            .fold(i64::from(first as i8), |acc, &b| (acc << 8) | i64::from(b)),
    )
}

pub(super) fn canonical_f32(x: f32) -> f32 {
    if x.is_nan() {
        f32::NAN
    } else {
        x
    }
}

pub(super) fn canonical_f64(x: f64) -> f64 {
    if x.is_nan() {
        f64::NAN
    } else {
        x
    }
}

/// The 60-bit timestamp of a version 1 UUID (with the version nibble on top, which is
/// constant among the UUIDs it is compared with).
pub(super) fn v1_timestamp(u: &[u8; 16]) -> u64 {
    let msb = u64::from_be_bytes([u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7]]);
    reorder_timestamp(msb)
}

/// time_low | time_mid | ver+time_hi  →  ver+time_hi | time_mid | time_low.
pub(super) fn reorder_timestamp(msb: u64) -> u64 {
    (msb << 48) | ((msb << 16) & 0xFFFF_0000_0000) | (msb >> 32)
}

/// Inverse of [`reorder_timestamp`].
pub(super) fn unorder_timestamp(ts: u64) -> u64 {
    (ts << 32) | ((ts >> 16) & 0xFFFF_0000) | (ts >> 48)
}

/// Numeric comparison of two non-empty two's-complement big-endian integers of any length.
pub(super) fn compare_varints(a: &[u8], b: &[u8]) -> Ordering {
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

/// `ty` without its `frozen<…>` wrappers.
pub(super) fn unfrozen(mut ty: &CqlType) -> &CqlType {
    while let CqlType::Frozen(inner) = ty {
        ty = inner;
    }
    ty
}
