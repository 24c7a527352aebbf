//! Aggregates (`count`, `sum`, `avg`, `min`, `max`) and `CAST` conversions, with Cassandra's
//! semantics (`AggregateFcts`, `CastFcts`).
//!
//! - `sum` of `tinyint`/`smallint`/`int`/`bigint`/`counter` wraps around like Java's
//!   arithmetic in the input type (`counter` sums as `bigint`); `float`/`double` sum in
//!   double precision with Kahan compensation (`float` rounds the result back); `varint` and
//!   `decimal` are exact.
//! - `avg` of the integer types is the exact sum divided by the count, truncated toward zero,
//!   then narrowed to the input type; of `float`/`double` the compensated sum divided by the
//!   count; of `varint` the truncated quotient; of `decimal` Cassandra's running mean
//!   `avg += (x - avg) / n` rounded half-even at the operands' scale. With no input the
//!   average is zero.
//! - `min`/`max` use [`compare`](fn@cairn_engine::model::types::compare) and give null for no input; `count`
//!   counts non-null
//!   values. Null (absent) inputs are skipped; empty values count for `count`, `min` and
//!   `max` (they sort first) and are skipped by `sum` and `avg`.
//! - [`cast`] converts between the numeric types (Java narrowing: wrap for integers, saturate
//!   and NaN→0 from floating point, truncation from `decimal`), to `text`/`ascii` (Java's
//!   `toString` forms, timestamps as `2024-01-01T00:00:00.000Z`), and among `timestamp`,
//!   `date` and `timeuuid` (to the coarser type).

use super::error::{ValueError, ValueResult};
use super::format::{java_double_string, java_float_string, java_host_address};
use super::number::{float_of, is_integer, is_numeric, narrow, num_to, read_num, signed};
use super::temporal::{self, MILLIS_PER_DAY};
use bytes::Bytes;
use cairn_engine::model::types::compare;
use cairn_engine::model::types::unfrozen;
use cairn_engine::model::types::CqlType;
use cairn_engine::model::types::{BigDecimal, BigInt};
use std::cmp::Ordering;

/// Which aggregate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggregateKind {
    Count,
    Sum,
    Avg,
    Min,
    Max,
}

/// A running aggregate over values of one type.
#[derive(Debug, Clone)]
pub struct Accumulator {
    kind: AggregateKind,
    ty: CqlType,
    count: u64,
    int_sum: i128,
    big_sum: BigInt,
    dec: BigDecimal,
    f_sum: f64,
    f_comp: f64,
    f_simple: f64,
    best: Option<Bytes>,
}

impl Accumulator {
    /// A new aggregate of `kind` over values of `ty`; `sum`/`avg` need a numeric type.
    pub fn new(kind: AggregateKind, ty: &CqlType) -> ValueResult<Self> {
        let ty = unfrozen(ty).clone();
        if matches!(kind, AggregateKind::Sum | AggregateKind::Avg) && !is_numeric(&ty) {
            let name = if kind == AggregateKind::Sum {
                "sum"
            } else {
                "avg"
            };
            return Err(ValueError::invalid(format!(
                "Invalid call to function system.{name}, none of its type signatures match \
                 (argument of type {})",
                ty.name()
            )));
        }
        Ok(Accumulator {
            kind,
            ty,
            count: 0,
            int_sum: 0,
            big_sum: BigInt::zero(),
            dec: BigDecimal::default(),
            f_sum: 0.0,
            f_comp: 0.0,
            f_simple: 0.0,
            best: None,
        })
    }

    /// Adds one input; `None` (null) is skipped. An empty value (`''`, `0x`) is a value for
    /// `count`, `min` and `max` (it sorts first), as in Cassandra; `sum` and `avg` skip it.
    pub fn add(&mut self, value: Option<&[u8]>) {
        let Some(v) = value else {
            return;
        };
        if v.is_empty() && matches!(self.kind, AggregateKind::Sum | AggregateKind::Avg) {
            return;
        }
        match self.kind {
            AggregateKind::Count => self.count += 1,
            AggregateKind::Min | AggregateKind::Max => {
                let better = match &self.best {
                    None => true,
                    Some(b) => {
                        let c = compare(&self.ty, v, b);
                        if self.kind == AggregateKind::Min {
                            c == Ordering::Less
                        } else {
                            c == Ordering::Greater
                        }
                    }
                };
                if better {
                    self.best = Some(Bytes::copy_from_slice(v));
                }
            }
            AggregateKind::Sum | AggregateKind::Avg => {
                if is_integer(&self.ty) {
                    if let Some(x) = signed(v) {
                        self.count += 1;
                        self.int_sum += i128::from(x);
                    }
                } else if let Some(x) = float_of(&self.ty, v) {
                    self.count += 1;
                    self.f_simple += x;
                    let t = x - self.f_comp;
                    let r = self.f_sum + t;
                    self.f_comp = (r - self.f_sum) - t;
                    self.f_sum = r;
                } else if self.ty == CqlType::Varint {
                    self.count += 1;
                    self.big_sum = self.big_sum.add(&BigInt::from_bytes(v));
                } else if let Some(d) = BigDecimal::from_bytes(v) {
                    self.count += 1;
                    if self.kind == AggregateKind::Sum {
                        self.dec = self.dec.add(&d);
                    } else {
                        let n = u32::try_from(self.count).unwrap_or(u32::MAX);
                        let step = d.sub(&self.dec).div_small_half_even(n);
                        self.dec = self.dec.add(&step);
                    }
                }
            }
        }
    }

    fn float_total(&self) -> f64 {
        let t = self.f_sum + self.f_comp;
        if t.is_nan() && self.f_simple.is_infinite() {
            self.f_simple
        } else {
            t
        }
    }

    /// The result: `None` (null) for `min`/`max` without input.
    pub fn result(&self) -> Option<Bytes> {
        let float_out = |x: f64| -> Bytes {
            if self.ty == CqlType::Float {
                Bytes::copy_from_slice(&(x as f32).to_be_bytes())
            } else {
                Bytes::copy_from_slice(&x.to_be_bytes())
            }
        };
        match self.kind {
            AggregateKind::Count => {
                Some(Bytes::copy_from_slice(&(self.count as i64).to_be_bytes()))
            }
            AggregateKind::Min | AggregateKind::Max => self.best.clone(),
            AggregateKind::Sum => Some(if is_integer(&self.ty) {
                narrow(&self.ty, self.int_sum)
            } else if matches!(self.ty, CqlType::Float | CqlType::Double) {
                float_out(self.float_total())
            } else if self.ty == CqlType::Varint {
                Bytes::from(self.big_sum.to_bytes())
            } else {
                Bytes::from(self.dec.to_bytes())
            }),
            AggregateKind::Avg => Some(if self.count == 0 {
                match self.ty {
                    CqlType::Float | CqlType::Double => float_out(0.0),
                    CqlType::Varint => Bytes::from(BigInt::zero().to_bytes()),
                    CqlType::Decimal => Bytes::from(BigDecimal::default().to_bytes()),
                    _ => narrow(&self.ty, 0),
                }
            } else if is_integer(&self.ty) {
                narrow(&self.ty, self.int_sum / i128::from(self.count))
            } else if matches!(self.ty, CqlType::Float | CqlType::Double) {
                float_out(self.float_total() / self.count as f64)
            } else if self.ty == CqlType::Varint {
                let n = u32::try_from(self.count).unwrap_or(u32::MAX);
                Bytes::from(self.big_sum.divrem_small(n).0.to_bytes())
            } else {
                Bytes::from(self.dec.to_bytes())
            }),
        }
    }
}

fn run<'a>(
    kind: AggregateKind,
    ty: &CqlType,
    values: impl IntoIterator<Item = &'a [u8]>,
) -> ValueResult<Option<Bytes>> {
    let mut acc = Accumulator::new(kind, ty)?;
    for v in values {
        acc.add(Some(v));
    }
    Ok(acc.result())
}

/// `sum` over values of a numeric type.
pub fn sum<'a>(ty: &CqlType, values: impl IntoIterator<Item = &'a [u8]>) -> ValueResult<Bytes> {
    Ok(run(AggregateKind::Sum, ty, values)?.unwrap_or_default())
}

/// `avg` over values of a numeric type.
pub fn avg<'a>(ty: &CqlType, values: impl IntoIterator<Item = &'a [u8]>) -> ValueResult<Bytes> {
    Ok(run(AggregateKind::Avg, ty, values)?.unwrap_or_default())
}

/// `min` (null without input).
pub fn min<'a>(ty: &CqlType, values: impl IntoIterator<Item = &'a [u8]>) -> Option<Bytes> {
    run(AggregateKind::Min, ty, values).ok().flatten()
}

/// `max` (null without input).
pub fn max<'a>(ty: &CqlType, values: impl IntoIterator<Item = &'a [u8]>) -> Option<Bytes> {
    run(AggregateKind::Max, ty, values).ok().flatten()
}

/// Java's `toString` of a value, as `CAST(x AS text)` returns it.
pub fn to_cast_text(ty: &CqlType, v: &[u8]) -> Option<String> {
    use CqlType as T;
    Some(match unfrozen(ty) {
        T::Text | T::Ascii => std::str::from_utf8(v).ok()?.to_string(),
        T::Float => java_float_string(f32::from_be_bytes(v.try_into().ok()?)),
        T::Double => java_double_string(f64::from_be_bytes(v.try_into().ok()?)),
        t if is_integer(t) => signed(v)?.to_string(),
        T::Varint => BigInt::from_bytes(v).to_java_string(),
        T::Decimal => BigDecimal::from_bytes(v)?.to_java_string(),
        T::Boolean => (v.first()? != &0).to_string(),
        T::Timestamp => temporal::format_timestamp_iso(i64::from_be_bytes(v.try_into().ok()?)),
        T::Date => temporal::format_date_days(
            i64::from(u32::from_be_bytes(v.try_into().ok()?)) - (1i64 << 31),
        ),
        T::Time => temporal::format_time(i64::from_be_bytes(v.try_into().ok()?)),
        T::Uuid | T::Timeuuid if v.len() == 16 => temporal::format_uuid(v),
        T::Inet => java_host_address(v)?,
        _ => return None,
    })
}

/// The argument types of Cassandra's `cast_as_<to>` functions (`CastFcts`), or None when
/// there is no such function: numbers cast to one another, most scalars (not blob, not
/// duration) to text and ascii, and the time types to date and timestamp.
pub(crate) fn cast_inputs(to: &CqlType) -> Option<Vec<CqlType>> {
    use CqlType as T;
    let numeric = super::arithmetic::numeric_types();
    let scalars = [
        T::Inet,
        T::Boolean,
        T::Timeuuid,
        T::Timestamp,
        T::Date,
        T::Time,
        T::Uuid,
    ];
    Some(match to {
        t if is_numeric(t) && *t != T::Counter => numeric.into_iter().filter(|n| n != t).collect(),
        T::Ascii => numeric.into_iter().chain(scalars).collect(),
        T::Text => numeric
            .into_iter()
            .chain([T::Ascii])
            .chain(scalars)
            .collect(),
        T::Date => vec![T::Timeuuid, T::Timestamp],
        T::Timestamp => vec![T::Timeuuid, T::Date],
        _ => return None,
    })
}

/// Whether `CAST(x AS to)` exists for values of type `from` (Cassandra's `CastFcts`).
pub fn can_cast(from: &CqlType, to: &CqlType) -> bool {
    let (from, to) = (unfrozen(from), unfrozen(to));
    from == to || cast_inputs(to).is_some_and(|inputs| inputs.contains(from))
}

/// Cassandra's refusal of `CAST(selected AS to)` for a value of type `from` when
/// [`can_cast`] is false: no `cast_as_<to>` function at all, or none taking `from`.
pub fn cast_refusal(selected: &str, to: &CqlType) -> String {
    let to = unfrozen(to);
    let name = to.name();
    match cast_inputs(to) {
        Some(inputs) => format!(
            "Invalid call to function system.cast_as_{name}, none of its type signatures match (known type signatures: {})",
            inputs
                .iter()
                .map(|t| format!("system.cast_as_{name} : ({}) -> {name}", t.name()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => format!("{selected} cannot be cast to {name}"),
    }
}

/// `CAST(value AS to)` for a value of type `from`. An empty value stays empty.
pub fn cast(value: &[u8], from: &CqlType, to: &CqlType) -> ValueResult<Bytes> {
    use CqlType as T;
    let (from, to) = (unfrozen(from), unfrozen(to));
    if from == to {
        return Ok(Bytes::copy_from_slice(value));
    }
    if !can_cast(from, to) {
        return Err(ValueError::invalid(cast_refusal(&from.name(), to)));
    }
    if value.is_empty() {
        return Ok(Bytes::new());
    }
    let bad = || ValueError::invalid(format!("Invalid value for type {}", from.name()));
    match (from, to) {
        (f, t) if is_numeric(f) && is_numeric(t) && *t != T::Counter => {
            num_to(t, read_num(f, value).ok_or_else(bad)?)
        }
        (f, T::Text | T::Ascii) => Ok(Bytes::from(to_cast_text(f, value).ok_or_else(bad)?)),
        (T::Timestamp, T::Date) => {
            let ms = i64::from_be_bytes(value.try_into().map_err(|_| bad())?);
            let days = ms.div_euclid(MILLIS_PER_DAY) + (1i64 << 31);
            let raw = u32::try_from(days).map_err(|_| bad())?;
            Ok(Bytes::copy_from_slice(&raw.to_be_bytes()))
        }
        (T::Date, T::Timestamp) => {
            let raw = u32::from_be_bytes(value.try_into().map_err(|_| bad())?);
            let ms = (i64::from(raw) - (1i64 << 31)) * MILLIS_PER_DAY;
            Ok(Bytes::copy_from_slice(&ms.to_be_bytes()))
        }
        (T::Timeuuid, T::Timestamp | T::Date) => {
            let u: [u8; 16] = value.try_into().map_err(|_| bad())?;
            let ms = temporal::v1_unix_millis(&u);
            cast(&ms.to_be_bytes(), &T::Timestamp, to)
        }
        _ => Err(ValueError::invalid(cast_refusal(&from.name(), to))),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::super::tests::{ty, value};
    use super::*;

    fn vals(t: &str, texts: &[&str]) -> Vec<Bytes> {
        texts.iter().map(|x| value(x, t)).collect()
    }

    fn agg(kind: AggregateKind, t: &str, texts: &[&str]) -> Option<Bytes> {
        let v = vals(t, texts);
        let mut acc = Accumulator::new(kind, &ty(t)).unwrap();
        for x in &v {
            acc.add(Some(x));
        }
        acc.add(None);
        acc.result()
    }

    #[test]
    fn sums_and_averages() {
        use AggregateKind::*;
        let b = |t: &str, x: &str| Some(value(x, t));
        assert_eq!(agg(Sum, "int", &["1", "2", "3"]), b("int", "6"));
        assert_eq!(
            agg(Sum, "int", &["2147483647", "1"]),
            b("int", "-2147483648")
        );
        assert_eq!(agg(Sum, "tinyint", &["100", "100"]), b("tinyint", "-56"));
        assert_eq!(agg(Avg, "int", &["1", "2"]), b("int", "1"));
        assert_eq!(agg(Avg, "int", &["-1", "-2"]), b("int", "-1"));
        assert_eq!(
            agg(Avg, "int", &["2147483647", "2147483647"]),
            b("int", "2147483647")
        );
        assert_eq!(
            agg(
                Avg,
                "bigint",
                &["9223372036854775807", "9223372036854775807"]
            ),
            b("bigint", "9223372036854775807")
        );
        assert_eq!(agg(Avg, "int", &[]), b("int", "0"));
        assert_eq!(agg(Sum, "counter", &["5", "6"]), b("bigint", "11"));
        assert_eq!(
            agg(Sum, "double", &["0.1", "0.2", "0.3"]),
            b("double", "0.6")
        );
        assert_eq!(agg(Avg, "float", &["1", "2"]), b("float", "1.5"));
        assert_eq!(agg(Avg, "double", &[]), b("double", "0"));
        assert_eq!(
            agg(Sum, "double", &["Infinity", "Infinity"]),
            b("double", "Infinity")
        );
        assert_eq!(
            agg(Sum, "varint", &["99999999999999999999", "1"]),
            b("varint", "100000000000000000000")
        );
        assert_eq!(agg(Avg, "varint", &["1", "2"]), b("varint", "1"));
        assert_eq!(agg(Sum, "decimal", &["1.5", "2.25"]), b("decimal", "3.75"));
        // Running mean at scale 0: 1 + round_half_even((2 - 1) / 2) = 1 + 0.
        assert_eq!(agg(Avg, "decimal", &["1", "2"]), b("decimal", "1"));
        assert_eq!(agg(Avg, "decimal", &["1.0", "2.0"]), b("decimal", "1.5"));
        assert_eq!(agg(Avg, "decimal", &[]), b("decimal", "0"));
        assert_eq!(agg(Count, "text", &["'a'", "'b'"]), b("bigint", "2"));
        assert_eq!(agg(Min, "int", &["3", "-1", "2"]), b("int", "-1"));
        assert_eq!(agg(Max, "text", &["'a'", "'b'", "'ab'"]), b("text", "'b'"));
        assert_eq!(agg(Max, "int", &[]), None);
        assert!(Accumulator::new(Sum, &CqlType::Text).is_err());
        assert_eq!(
            sum(&CqlType::Int, [&[0, 0, 0, 1][..], &[0, 0, 0, 2]]).unwrap(),
            value("3", "int")
        );
        assert_eq!(min(&CqlType::Int, std::iter::empty()), None);
    }

    #[test]
    fn casts() {
        let c = |x: &str, from: &str, to: &str| {
            cast(&value(x, from), &ty(from), &ty(to)).map_err(|e| e.to_string())
        };
        assert_eq!(c("300", "int", "tinyint").unwrap(), value("44", "tinyint"));
        assert_eq!(c("1.9", "double", "int").unwrap(), value("1", "int"));
        assert_eq!(
            c("-1.9", "double", "bigint").unwrap(),
            value("-1", "bigint")
        );
        assert_eq!(c("NaN", "double", "int").unwrap(), value("0", "int"));
        assert_eq!(
            c("1e20", "double", "bigint").unwrap(),
            value("9223372036854775807", "bigint")
        );
        assert_eq!(c("3", "int", "double").unwrap(), value("3.0", "double"));
        assert_eq!(
            c("0.1", "double", "decimal").unwrap(),
            value("0.1", "decimal")
        );
        assert_eq!(c("12.75", "decimal", "int").unwrap(), value("12", "int"));
        assert_eq!(
            c("12.75", "decimal", "double").unwrap(),
            value("12.75", "double")
        );
        assert_eq!(c("5", "varint", "decimal").unwrap(), value("5", "decimal"));
        assert_eq!(c("1.5", "double", "text").unwrap(), value("'1.5'", "text"));
        assert_eq!(
            c("1e10", "double", "text").unwrap(),
            value("'1.0E10'", "text")
        );
        assert_eq!(c("42", "int", "ascii").unwrap(), value("'42'", "ascii"));
        assert_eq!(
            c("true", "boolean", "text").unwrap(),
            value("'true'", "text")
        );
        assert_eq!(
            c("'2024-01-01 10:00:00'", "timestamp", "text").unwrap(),
            value("'2024-01-01T10:00:00.000Z'", "text")
        );
        assert_eq!(
            c("'2024-01-01 10:00:00'", "timestamp", "date").unwrap(),
            value("'2024-01-01'", "date")
        );
        assert_eq!(
            c("'2024-01-01'", "date", "timestamp").unwrap(),
            value("'2024-01-01'", "timestamp")
        );
        assert_eq!(
            c("d2177dd0-eaa2-11de-a572-001b779c76e3", "timeuuid", "date").unwrap(),
            value("'2009-12-17'", "date")
        );
        // Cassandra's `FunctionResolver` texts: the function exists, not for this type.
        for (v, from, to) in [
            ("'a'", "text", "int"),
            ("'a'", "text", "ascii"),
            ("0x01", "blob", "text"),
            ("1h", "duration", "text"),
        ] {
            let e = c(v, from, to).unwrap_err();
            assert!(
                e.starts_with(&format!(
                    "Invalid call to function system.cast_as_{to}, none of its type signatures match (known type signatures: system.cast_as_{to} : ("
                )),
                "{e}"
            );
            assert!(!e.contains(&format!("({from}) -> {to}")), "{e}");
        }
        assert_eq!(cast_refusal("x", &ty("blob")), "x cannot be cast to blob");
        // Java's `Double.toString` / `Float.toString` digits and `getHostAddress`.
        for (v, from, text) in [
            ("8.9771283193909e+16", "double", "'8.9771283193908992E16'"),
            ("1234567936", "float", "'1.23456794E9'"),
            ("'::1'", "inet", "'0:0:0:0:0:0:0:1'"),
            ("'::ffff:1.2.3.4'", "inet", "'1.2.3.4'"),
        ] {
            assert_eq!(c(v, from, "text").unwrap(), value(text, "text"), "{v}");
        }
    }
}
