//! The shared pieces of the clustering encoding: tags and item markers (see the parent
//! module's docs) and the numeric helpers every other piece uses (canonical floats, UUID
//! timestamps). The framing of serialized collections and tuples is the types room's
//! ([`crate::model::types::framing`]).

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
