//! Cassandra 5.0's math functions — `abs`, `exp`, `log`, `log10`, `round` — for each numeric
//! type, returning the argument's type (its `MathFcts`, each type's `NumberType` methods).
//!
//! Java's semantics are kept: an integer type works on the Java primitive of its width, so
//! `abs` of the smallest value is itself and `exp`/`log`/`log10` go through a `double` and
//! back with Java's narrowing (saturating to `int` or `long`, NaN to 0, then wrapping for
//! `tinyint` and `smallint`); `round` of a `float` or `double` is Java's `Math.round` (half
//! up, towards positive infinity) back in the same type; a `decimal` rounds half up to scale
//! 0 and keeps its scale under `abs`; `round` of an integer type or `varint` is the value.
//!
//! Not built: `exp`, `log` and `log10` of a `decimal` or `varint`, which Cassandra computes
//! to at least 32 significant digits (big-math's `BigDecimalMath`); they are refused with a
//! clear error rather than answered with fewer correct digits.

use super::error::{ValueError, ValueResult};
use super::number::{narrow, read_num, Num};
use bytes::Bytes;
use cairn_engine::model::types::{BigDecimal, BigInt, CqlType};

/// The math functions' names.
pub(crate) fn is_math(name: &str) -> bool {
    matches!(name, "abs" | "exp" | "log" | "log10" | "round")
}

/// The numeric types in the order Cassandra 5.0 lists a math function's signatures.
pub(crate) fn signature_types() -> [CqlType; 9] {
    use CqlType as T;
    [
        T::Smallint,
        T::Counter,
        T::Tinyint,
        T::Bigint,
        T::Float,
        T::Double,
        T::Int,
        T::Varint,
        T::Decimal,
    ]
}

/// Runs math function `name` on a value of `ty` (`None`: a null result, for an empty value).
pub(crate) fn apply(name: &str, ty: &CqlType, v: &[u8]) -> ValueResult<Option<Bytes>> {
    if v.is_empty() {
        return Ok(None);
    }
    let malformed = || ValueError::marshal(format!("invalid {} value", ty.name()));
    let n = read_num(ty, v).ok_or_else(malformed)?;
    Ok(Some(match n {
        Num::Int(i) => integer(name, ty, i),
        Num::Float(x) if *ty == CqlType::Float => {
            let r = floating(name, x);
            Bytes::copy_from_slice(&(r as f32).to_be_bytes())
        }
        Num::Float(x) => Bytes::copy_from_slice(&floating(name, x).to_be_bytes()),
        Num::Big(b) => match name {
            "abs" if b.is_negative() => Bytes::from(b.neg().to_bytes()),
            "abs" | "round" => Bytes::copy_from_slice(v),
            _ => return Err(not_built(name, ty)),
        },
        Num::Dec(d) => match name {
            "abs" if d.unscaled.is_negative() => Bytes::from(d.neg().to_bytes()),
            "abs" => Bytes::copy_from_slice(v),
            "round" => Bytes::from(round_decimal(&d).ok_or_else(malformed)?.to_bytes()),
            _ => return Err(not_built(name, ty)),
        },
    }))
}

/// An integer type's function, on the Java primitive of its width.
fn integer(name: &str, ty: &CqlType, i: i64) -> Bytes {
    let through_double = |f: f64| -> i128 {
        // Java's narrowing of a double: to int (or long), saturating, NaN to 0; then
        // wrapping to byte or short (`narrow`).
        match ty {
            CqlType::Bigint | CqlType::Counter => i128::from(f as i64),
            _ => i128::from(f as i32),
        }
    };
    let v = match name {
        "abs" => i128::from(i).abs(),
        "exp" => through_double((i as f64).exp()),
        "log" => through_double((i as f64).ln()),
        "log10" => through_double((i as f64).log10()),
        _ => i128::from(i),
    };
    // `abs` of the smallest value wraps back to it, as Java's `Math.abs` does.
    narrow(ty, v)
}

/// A `double`'s (or widened `float`'s) function.
fn floating(name: &str, x: f64) -> f64 {
    match name {
        "abs" => x.abs(),
        "exp" => x.exp(),
        "log" => x.ln(),
        "log10" => x.log10(),
        _ => java_round(x),
    }
}

/// Java's `Math.round`: the nearest integer, ties towards positive infinity, NaN to 0, and
/// saturating (to a `long`; a `float`'s rounds to an `int`, which a `float` holds anyway
/// within its precision).
fn java_round(x: f64) -> f64 {
    if x.is_nan() {
        return 0.0;
    }
    let floor = x.floor();
    // `x - floor` is exact for doubles, so no tie is lost to a rounded `x + 0.5`.
    let r = if x - floor >= 0.5 { floor + 1.0 } else { floor };
    (r as i64) as f64
}

/// `setScale(0, RoundingMode.HALF_UP)`.
fn round_decimal(d: &BigDecimal) -> Option<BigDecimal> {
    if d.scale <= 0 {
        return Some(BigDecimal {
            unscaled: d
                .unscaled
                .mul_pow10(u32::try_from(-i64::from(d.scale)).ok()?),
            scale: 0,
        });
    }
    let one = BigDecimal::from_int(BigInt::from_i128(1));
    d.div_half_up(&one, 0, u64::from(d.scale.unsigned_abs()) + 1)
}

fn not_built(name: &str, ty: &CqlType) -> ValueError {
    ValueError::invalid(format!(
        "system.{name} of a {} is not supported by Cairn (Cassandra computes it to 32 significant digits)",
        ty.name()
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn run(name: &str, ty: CqlType, v: &[u8]) -> Vec<u8> {
        apply(name, &ty, v).unwrap().unwrap().to_vec()
    }

    /// Each case checked against Cassandra 5.0.9 (`SELECT abs((int)-5) …`).
    #[test]
    fn integers_keep_their_java_width() {
        use CqlType as T;
        let int = |v: i32| v.to_be_bytes().to_vec();
        let cases: Vec<(&str, CqlType, Vec<u8>, Vec<u8>)> = vec![
            ("abs", T::Int, int(-5), int(5)),
            ("abs", T::Int, int(i32::MIN), int(i32::MIN)),
            ("abs", T::Tinyint, vec![0x80], vec![0x80]),
            ("exp", T::Int, int(-5), int(0)),
            ("exp", T::Int, int(100), int(i32::MAX)),
            (
                "exp",
                T::Smallint,
                10i16.to_be_bytes().to_vec(),
                22026i16.to_be_bytes().to_vec(),
            ),
            ("log", T::Tinyint, vec![100], vec![4]),
            ("log", T::Int, int(0), int(i32::MIN)),
            ("log", T::Int, int(-5), int(0)),
            (
                "log",
                T::Bigint,
                0i64.to_be_bytes().to_vec(),
                i64::MIN.to_be_bytes().to_vec(),
            ),
            ("log10", T::Int, int(-5), int(0)),
            ("round", T::Tinyint, vec![0xfe], vec![0xfe]),
        ];
        for (name, ty, arg, want) in cases {
            assert_eq!(
                run(name, ty.clone(), &arg),
                want,
                "{name}({arg:?} as {})",
                ty.name()
            );
        }
    }

    #[test]
    fn floats_round_as_java_does() {
        let d = |x: f64| x.to_be_bytes().to_vec();
        let f = |x: f32| x.to_be_bytes().to_vec();
        assert_eq!(run("round", CqlType::Double, &d(-2.5)), d(-2.0));
        assert_eq!(run("round", CqlType::Double, &d(2.5)), d(3.0));
        assert_eq!(
            run("round", CqlType::Double, &d(0.49999999999999994)),
            d(0.0)
        );
        assert_eq!(run("round", CqlType::Double, &d(f64::NAN)), d(0.0));
        assert_eq!(run("round", CqlType::Float, &f(-2.5)), f(-2.0));
        assert_eq!(run("round", CqlType::Float, &f(1.5)), f(2.0));
        assert_eq!(
            run("exp", CqlType::Float, &f(1.0)),
            f(std::f64::consts::E as f32)
        );
        assert_eq!(run("log10", CqlType::Float, &f(1000.0)), f(3.0));
        assert_eq!(run("log", CqlType::Double, &d(0.0)), d(f64::NEG_INFINITY));
        assert_eq!(run("abs", CqlType::Double, &d(-2.5)), d(2.5));
    }

    #[test]
    fn decimals_and_varints() {
        let dec = |s: &str| BigDecimal::parse(s).unwrap().to_bytes();
        let big = |s: &str| BigInt::parse(s).unwrap().to_bytes();
        assert_eq!(run("abs", CqlType::Decimal, &dec("-1.25")), dec("1.25"));
        assert_eq!(run("abs", CqlType::Decimal, &dec("-0.00")), dec("0.00"));
        assert_eq!(run("round", CqlType::Decimal, &dec("-1.25")), dec("-1"));
        assert_eq!(run("round", CqlType::Decimal, &dec("-2.5")), dec("-3"));
        assert_eq!(run("round", CqlType::Decimal, &dec("2.5")), dec("3"));
        assert_eq!(run("round", CqlType::Decimal, &dec("0.4")), dec("0"));
        assert_eq!(run("round", CqlType::Decimal, &dec("1E+2")), dec("100"));
        assert_eq!(
            run(
                "abs",
                CqlType::Varint,
                &big("-123456789012345678901234567890")
            ),
            big("123456789012345678901234567890")
        );
        assert_eq!(run("round", CqlType::Varint, &big("5")), big("5"));
        assert!(apply("exp", &CqlType::Decimal, &dec("1")).is_err());
        assert_eq!(apply("abs", &CqlType::Int, &[]).unwrap(), None);
    }
}
