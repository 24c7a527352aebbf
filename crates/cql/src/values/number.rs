//! Numbers read from serialized values and written back, as Java's `Number` conversions do
//! them: shared by the aggregates and casts ([`super::aggregate`]) and the arithmetic
//! operators ([`super::arithmetic`]).
//!
//! Invariants: nothing here panics on malformed bytes (readers return `None`); integer
//! narrowing wraps like Java's casts; `float`/`double` keep IEEE semantics (NaN, infinities,
//! signed zero).

use super::error::{ValueError, ValueResult};
use super::format::java_double_string;
use bytes::Bytes;
use cairn_engine::model::types::CqlType;
use cairn_engine::model::types::{BigDecimal, BigInt};

/// `tinyint`, `smallint`, `int`, `bigint` and `counter`: the types read as a Java `long`.
pub(crate) fn is_integer(ty: &CqlType) -> bool {
    matches!(
        ty,
        CqlType::Tinyint | CqlType::Smallint | CqlType::Int | CqlType::Bigint | CqlType::Counter
    )
}

/// The integer types, `float`, `double`, `varint` and `decimal`.
pub(crate) fn is_numeric(ty: &CqlType) -> bool {
    is_integer(ty)
        || matches!(
            ty,
            CqlType::Float | CqlType::Double | CqlType::Varint | CqlType::Decimal
        )
}

/// A big-endian two's complement integer of 1 to 8 bytes.
pub(crate) fn signed(v: &[u8]) -> Option<i64> {
    let (&first, rest) = v.split_first()?;
    if v.len() > 8 {
        return None;
    }
    Some(
        rest.iter()
            .fold(i64::from(first as i8), |acc, &b| (acc << 8) | i64::from(b)),
    )
}

/// A `float` (widened) or `double` value.
pub(crate) fn float_of(ty: &CqlType, v: &[u8]) -> Option<f64> {
    match ty {
        CqlType::Float => Some(f64::from(f32::from_be_bytes(v.try_into().ok()?))),
        CqlType::Double => Some(f64::from_be_bytes(v.try_into().ok()?)),
        _ => None,
    }
}

/// Narrows an integer to the byte width of `ty`, wrapping (Java's casts).
pub(crate) fn narrow(ty: &CqlType, v: i128) -> Bytes {
    let b = match ty {
        CqlType::Tinyint => (v as i8).to_be_bytes().to_vec(),
        CqlType::Smallint => (v as i16).to_be_bytes().to_vec(),
        CqlType::Int => (v as i32).to_be_bytes().to_vec(),
        _ => (v as i64).to_be_bytes().to_vec(),
    };
    Bytes::from(b)
}

/// A number read from a value, in the widest form needed.
pub(crate) enum Num {
    Int(i64),
    Float(f64),
    Big(BigInt),
    Dec(BigDecimal),
}

/// Reads a value of a numeric type (`None` for other types or malformed bytes).
pub(crate) fn read_num(ty: &CqlType, v: &[u8]) -> Option<Num> {
    Some(match ty {
        t if is_integer(t) => Num::Int(signed(v)?),
        CqlType::Float | CqlType::Double => Num::Float(float_of(ty, v)?),
        CqlType::Varint => Num::Big(BigInt::from_bytes(v)),
        CqlType::Decimal => Num::Dec(BigDecimal::from_bytes(v)?),
        _ => return None,
    })
}

/// `BigDecimal.valueOf(double)` (via Java's `Double.toString`, so `7.0` has scale 1 and
/// `1.0E10` scale -9); `None` for NaN and infinities.
pub(crate) fn decimal_of_f64(x: f64) -> Option<BigDecimal> {
    if !x.is_finite() {
        return None;
    }
    BigDecimal::parse(&java_double_string(x))
}

/// Converts a number to a numeric type the way `CAST` does (Java narrowing conversions).
pub(crate) fn num_to(to: &CqlType, n: Num) -> ValueResult<Bytes> {
    let as_i128 = |n: &Num| -> i128 {
        match n {
            Num::Int(i) => i128::from(*i),
            // Java's (long) of a double: saturating, NaN -> 0 (Rust's `as` does the same).
            Num::Float(f) => i128::from(*f as i64),
            Num::Big(b) => i128::from(b.low_i64()),
            Num::Dec(d) => i128::from(d.to_bigint().low_i64()),
        }
    };
    Ok(match to {
        CqlType::Tinyint | CqlType::Smallint | CqlType::Int => {
            // Java narrows int-sized results from the int value of floating point inputs.
            let v = match &n {
                Num::Float(f) => i128::from(*f as i32),
                other => as_i128(other),
            };
            narrow(to, v)
        }
        CqlType::Bigint | CqlType::Counter => narrow(to, as_i128(&n)),
        CqlType::Float | CqlType::Double => {
            let f = match &n {
                Num::Int(i) => *i as f64,
                Num::Float(f) => *f,
                Num::Big(b) => b.to_f64(),
                Num::Dec(d) => d.to_f64(),
            };
            if *to == CqlType::Float {
                Bytes::copy_from_slice(&(f as f32).to_be_bytes())
            } else {
                Bytes::copy_from_slice(&f.to_be_bytes())
            }
        }
        CqlType::Varint => Bytes::from(
            match n {
                Num::Int(i) => BigInt::from_i128(i.into()),
                Num::Float(f) => BigInt::from_i128(f as i128),
                Num::Big(b) => b,
                Num::Dec(d) => d.to_bigint(),
            }
            .to_bytes(),
        ),
        CqlType::Decimal => Bytes::from(
            match n {
                Num::Int(i) => BigDecimal::from_int(BigInt::from_i128(i.into())),
                Num::Float(f) => decimal_of_f64(f).ok_or_else(|| {
                    ValueError::invalid(format!("Cannot convert {f} to a decimal"))
                })?,
                Num::Big(b) => BigDecimal::from_int(b),
                Num::Dec(d) => d,
            }
            .to_bytes(),
        ),
        _ => return Err(ValueError::invalid("not a numeric type")),
    })
}
