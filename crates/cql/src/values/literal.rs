//! Literal constants to native-protocol bytes, with Cassandra's rules.
//!
//! Two steps, as in Cassandra's `Constants.Literal`:
//!
//! 1. *Assignment test* — which literal kinds a type accepts ([`literal_accepts`]):
//!
//!    | kind | accepted by |
//!    | --- | --- |
//!    | `STRING` | ascii, text, inet, date, time, timestamp |
//!    | `INTEGER` | tinyint, smallint, int, bigint, counter, varint, decimal, float, double, date, time, timestamp, duration |
//!    | `FLOAT` | float, double, decimal |
//!    | `BOOLEAN` | boolean |
//!    | `UUID` | uuid, timeuuid |
//!    | `HEX` (`0x…`) | blob, and tinyint (Cassandra's "preferred type" of a hex literal is tinyint) |
//!    | `DURATION` | duration |
//!
//!    Anything else is `Invalid <KIND> constant (<text>) for "<receiver>" of type <type>`;
//!    collections and tuples accept no literal at all.
//! 2. *Conversion* with the type's `fromString`, whose failures are the `MarshalException`
//!    texts (`Unable to make int from '3000000000'`, `Unable to coerce '…' to a formatted
//!    date (long)`, `Unable to convert '…' to a duration`, …).
//!
//! Quirks kept from Cassandra: an empty string is the *empty value* for the string-accepting
//! types that allow one (`''` for text, ascii, inet and timestamp); a string of digits for a
//! `timestamp`, `date` or `time` is the raw number (ms since the epoch, days with the epoch
//! at 2^31, ns since midnight); `'now'` is accepted by `timestamp`; an IPv4-mapped IPv6
//! address is stored as 4 bytes; odd-length hex gets a leading zero nibble. Strings are never
//! accepted by `boolean`, `uuid` or the numbers (Cassandra refuses `'true'` for a boolean).

use super::error::{ValueError, ValueResult};
use super::temporal;
use crate::ast::Literal;
use bytes::Bytes;
use cairn_engine::model::types::{encode_duration, CqlType, NANOS_PER_DAY};
use cairn_engine::model::types::{BigDecimal, BigInt};

/// Cassandra's name for the kind of a literal (`STRING`, `INTEGER`, `FLOAT`, `BOOLEAN`,
/// `UUID`, `HEX`, `DURATION`).
pub fn literal_kind(lit: &Literal) -> &'static str {
    match lit {
        Literal::Integer(_) => "INTEGER",
        Literal::Float(_) => "FLOAT",
        Literal::String(_) => "STRING",
        Literal::Boolean(_) => "BOOLEAN",
        Literal::Uuid(_) => "UUID",
        Literal::Blob(_) => "HEX",
        Literal::Duration(_) => "DURATION",
    }
}

/// The type Cassandra infers for a literal by itself (`getPreferedTypeFor`).
pub fn literal_preferred_type(lit: &Literal) -> Option<CqlType> {
    Some(match lit {
        Literal::String(s) => {
            if s.is_ascii() {
                CqlType::Ascii
            } else {
                CqlType::Text
            }
        }
        Literal::Integer(s) => {
            if s.parse::<i32>().is_ok() {
                CqlType::Int
            } else if s.parse::<i64>().is_ok() {
                CqlType::Bigint
            } else {
                CqlType::Varint
            }
        }
        Literal::Float(_) => CqlType::Double,
        Literal::Boolean(_) => CqlType::Boolean,
        Literal::Uuid(s) => {
            if s.as_bytes().get(14) == Some(&b'1') {
                CqlType::Timeuuid
            } else {
                CqlType::Uuid
            }
        }
        Literal::Blob(_) => CqlType::Tinyint,
        Literal::Duration(_) => CqlType::Duration,
    })
}

/// Whether a literal of this kind may be assigned to `ty` (step 1 of the module docs).
pub fn literal_accepts(lit: &Literal, ty: &CqlType) -> bool {
    use CqlType as T;
    match lit {
        Literal::String(_) => matches!(
            ty,
            T::Ascii | T::Text | T::Inet | T::Date | T::Time | T::Timestamp
        ),
        Literal::Integer(_) => matches!(
            ty,
            T::Tinyint
                | T::Smallint
                | T::Int
                | T::Bigint
                | T::Counter
                | T::Varint
                | T::Decimal
                | T::Float
                | T::Double
                | T::Date
                | T::Time
                | T::Timestamp
                | T::Duration
        ),
        Literal::Float(_) => matches!(ty, T::Float | T::Double | T::Decimal),
        Literal::Boolean(_) => matches!(ty, T::Boolean),
        Literal::Uuid(_) => matches!(ty, T::Uuid | T::Timeuuid),
        Literal::Blob(_) => matches!(ty, T::Blob | T::Tinyint),
        Literal::Duration(_) => matches!(ty, T::Duration),
    }
}

/// The text Cassandra shows for a literal in messages (`getText`): strings quoted (without
/// escaping, as Cassandra), everything else as written.
pub fn literal_display(lit: &Literal) -> String {
    match lit {
        Literal::String(s) => format!("'{s}'"),
        other => other.text(),
    }
}

/// Converts a literal for a receiver of type `ty` named `receiver`. `'now'` for a timestamp
/// reads the system clock; [`literal_to_bytes_at`] takes the time instead.
pub fn literal_to_bytes(lit: &Literal, ty: &CqlType, receiver: &str) -> ValueResult<Bytes> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    literal_to_bytes_at(lit, ty, receiver, now)
}

/// [`literal_to_bytes`] with the current time (ms since the epoch) for `'now'`.
pub fn literal_to_bytes_at(
    lit: &Literal,
    ty: &CqlType,
    receiver: &str,
    now_millis: i64,
) -> ValueResult<Bytes> {
    if !literal_accepts(lit, ty) {
        return Err(ValueError::InvalidConstant {
            kind: literal_kind(lit),
            text: lit.text(),
            receiver: receiver.to_string(),
            type_name: ty.name(),
        });
    }
    if let Literal::Blob(text) = lit {
        let bytes = parse_hex(text)?;
        if *ty == CqlType::Tinyint && bytes.len() != 1 {
            return Err(ValueError::marshal(format!(
                "Expected 1 byte for a tinyint ({})",
                bytes.len()
            )));
        }
        return Ok(Bytes::from(bytes));
    }
    let text = match lit {
        Literal::Boolean(b) => return Ok(Bytes::from(vec![u8::from(*b)])),
        other => other.text(),
    };
    from_string(ty, &text, now_millis).map(Bytes::from)
}

fn parse_hex(text: &str) -> ValueResult<Vec<u8>> {
    let digits = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .unwrap_or(text);
    let err = || ValueError::marshal(format!("cannot parse '{digits}' as hex bytes"));
    // An odd number of digits is no bytes (Cassandra's `Hex.hexToBytes`): `0x1` is refused.
    if digits.len() % 2 == 1 {
        return Err(err());
    }
    digits
        .as_bytes()
        .chunks(2)
        .map(|pair| {
            let s = std::str::from_utf8(pair).map_err(|_| err())?;
            u8::from_str_radix(s, 16).map_err(|_| err())
        })
        .collect()
}

fn is_raw_number(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Java's `Float.parseFloat`/`Double.parseDouble` for the texts a CQL literal can hold.
pub(crate) fn parse_java_double(s: &str) -> Option<f64> {
    match s {
        "NaN" | "-NaN" | "+NaN" => return Some(f64::NAN),
        "Infinity" | "+Infinity" => return Some(f64::INFINITY),
        "-Infinity" => return Some(f64::NEG_INFINITY),
        _ => {}
    }
    if s.is_empty()
        || !s
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    s.parse::<f64>().ok()
}

fn parse_java_float(s: &str) -> Option<f32> {
    match s {
        "NaN" | "-NaN" | "+NaN" => return Some(f32::NAN),
        "Infinity" | "+Infinity" => return Some(f32::INFINITY),
        "-Infinity" => return Some(f32::NEG_INFINITY),
        _ => {}
    }
    parse_java_double(s)?;
    s.parse::<f32>().ok()
}

/// Cassandra's `AbstractType.fromString` for a native type (the receiver already accepted
/// the literal kind). Composite types have no string form here.
pub fn from_string(ty: &CqlType, s: &str, now_millis: i64) -> ValueResult<Vec<u8>> {
    use CqlType as T;
    let m = |msg: String| ValueError::Marshal(msg);
    Ok(match ty {
        T::Int => s
            .parse::<i32>()
            .map_err(|_| m(format!("Unable to make int from '{s}'")))?
            .to_be_bytes()
            .to_vec(),
        T::Bigint | T::Counter => s
            .parse::<i64>()
            .map_err(|_| m(format!("Unable to make long from '{s}'")))?
            .to_be_bytes()
            .to_vec(),
        T::Smallint => s
            .parse::<i16>()
            .map_err(|_| m(format!("Unable to make short from '{s}'")))?
            .to_be_bytes()
            .to_vec(),
        T::Tinyint => s
            .parse::<i8>()
            .map_err(|_| m(format!("Unable to make byte from '{s}'")))?
            .to_be_bytes()
            .to_vec(),
        T::Varint => {
            if s.is_empty() {
                return Ok(Vec::new());
            }
            BigInt::parse(s)
                .ok_or_else(|| m(format!("unable to make int from '{s}'")))?
                .to_bytes()
        }
        T::Decimal => {
            if s.is_empty() {
                return Ok(Vec::new());
            }
            BigDecimal::parse(s)
                .ok_or_else(|| m(format!("unable to make BigDecimal from '{s}'")))?
                .to_bytes()
        }
        T::Float => parse_java_float(s)
            .ok_or_else(|| m(format!("Unable to make float from '{s}'")))?
            .to_be_bytes()
            .to_vec(),
        T::Double => parse_java_double(s)
            .ok_or_else(|| m(format!("Unable to make double from '{s}'")))?
            .to_be_bytes()
            .to_vec(),
        T::Boolean => match s.to_ascii_lowercase().as_str() {
            "true" => vec![1],
            "false" => vec![0],
            "" => Vec::new(),
            _ => return Err(m(format!("Unable to make boolean from '{s}'"))),
        },
        T::Text => s.as_bytes().to_vec(),
        T::Ascii => {
            if !s.is_ascii() {
                return Err(m("Invalid ASCII character in string literal: \
                     java.nio.charset.UnmappableCharacterException: Input length = 1"
                    .to_string()));
            }
            s.as_bytes().to_vec()
        }
        T::Blob => parse_hex(s)?,
        T::Timestamp => {
            if s.is_empty() {
                return Ok(Vec::new());
            }
            timestamp_from_string(s, now_millis)?.to_be_bytes().to_vec()
        }
        T::Date => date_from_string(s)?.to_be_bytes().to_vec(),
        T::Time => time_from_string(s)?.to_be_bytes().to_vec(),
        T::Uuid | T::Timeuuid => {
            if s.is_empty() {
                return Ok(Vec::new());
            }
            let u = temporal::parse_uuid(s)
                .ok_or_else(|| m(format!("Unable to make UUID from '{s}'")))?;
            if *ty == T::Timeuuid && u[6] >> 4 != 1 {
                return Err(m("TimeUUID supports only version 1 UUIDs".to_string()));
            }
            u.to_vec()
        }
        T::Inet => {
            if s.is_empty() {
                return Ok(Vec::new());
            }
            inet_from_string(s)?
        }
        T::Duration => {
            let (months, days, nanos) = parse_duration(s)?;
            encode_duration(months, days, nanos)
        }
        T::List(_) | T::Set(_) | T::Map(_, _) | T::Tuple(_) | T::Frozen(_) | T::Udt(_) => {
            return Err(ValueError::invalid(format!(
                "Cannot convert a constant to {}",
                ty.name()
            )))
        }
    })
}

/// Timestamp text (or raw milliseconds) to ms since the epoch.
pub fn timestamp_from_string(s: &str, now_millis: i64) -> ValueResult<i64> {
    if s.eq_ignore_ascii_case("now") {
        return Ok(now_millis);
    }
    if is_raw_number(s) {
        return s.parse::<i64>().map_err(|_| {
            ValueError::marshal(format!("Unable to make long (for date) from: '{s}'"))
        });
    }
    temporal::parse_timestamp(s).ok_or_else(|| {
        ValueError::marshal(format!("Unable to coerce '{s}' to a formatted date (long)"))
    })
}

/// Date text (or a raw unsigned day number, epoch at 2^31) to the stored u32.
pub fn date_from_string(s: &str) -> ValueResult<u32> {
    if is_raw_number(s) {
        return s
            .parse::<i64>()
            .ok()
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| {
                ValueError::marshal(format!(
                    "Unable to make unsigned int (for date) from: '{s}'"
                ))
            });
    }
    temporal::parse_date(s)
        .and_then(|days| i32::try_from(days).ok())
        .map(|days| (days as u32) ^ 0x8000_0000)
        .ok_or_else(|| {
            ValueError::marshal(format!("Unable to coerce '{s}' to a formatted date (long)"))
        })
}

/// Time text (or raw nanoseconds) to ns since midnight.
pub fn time_from_string(s: &str) -> ValueResult<i64> {
    if is_raw_number(s) {
        return s
            .parse::<i64>()
            .ok()
            .filter(|v| (0..NANOS_PER_DAY).contains(v))
            .ok_or_else(|| {
                ValueError::marshal(format!("Unable to make long (for time) from: '{s}'"))
            });
    }
    temporal::parse_time(s).ok_or_else(|| {
        ValueError::marshal(format!(
            "(TimeType) Unable to coerce '{s}' to a formatted time (long)"
        ))
    })
}

fn inet_from_string(s: &str) -> ValueResult<Vec<u8>> {
    let addr: std::net::IpAddr = s
        .parse()
        .map_err(|_| ValueError::marshal(format!("Unable to make inet address from '{s}'")))?;
    Ok(match addr {
        std::net::IpAddr::V4(v4) => v4.octets().to_vec(),
        std::net::IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.octets().to_vec(),
            None => v6.octets().to_vec(),
        },
    })
}

// ---------------------------------------------------------------------------------------
// Durations

const NANOS_PER_MICRO: i64 = 1_000;
const NANOS_PER_MILLI: i64 = 1_000_000;
const NANOS_PER_SECOND: i64 = 1_000_000_000;
const NANOS_PER_MINUTE: i64 = 60 * NANOS_PER_SECOND;
const NANOS_PER_HOUR: i64 = 60 * NANOS_PER_MINUTE;

const UNIT_NAMES: [&str; 11] = [
    "",
    "years",
    "months",
    "weeks",
    "days",
    "hours",
    "minutes",
    "seconds",
    "milliseconds",
    "microseconds",
    "nanoseconds",
];

/// Cassandra's `Duration.Builder`: units in order, each at most once, totals in range.
struct DurationBuilder {
    negative: bool,
    months: i64,
    days: i64,
    nanos: i64,
    unit: usize,
}

impl DurationBuilder {
    fn new(negative: bool) -> Self {
        DurationBuilder {
            negative,
            months: 0,
            days: 0,
            nanos: 0,
            unit: 0,
        }
    }

    fn order(&mut self, unit: usize) -> ValueResult<()> {
        let name = |i: usize| UNIT_NAMES.get(i).copied().unwrap_or("");
        if unit == self.unit {
            return Err(ValueError::invalid(format!(
                "Invalid duration. The {} are specified multiple times",
                name(unit)
            )));
        }
        if unit < self.unit {
            return Err(ValueError::invalid(format!(
                "Invalid duration. The {} should be after {}",
                name(self.unit),
                name(unit)
            )));
        }
        self.unit = unit;
        Ok(())
    }

    fn limit(units: i64, limit: i64, what: &str) -> ValueResult<()> {
        if units > limit {
            Err(ValueError::invalid(format!(
                "Invalid duration. The total number of {what} must be less or equal to {}",
                i32::MAX
            )))
        } else {
            Ok(())
        }
    }

    /// Adds `n` of unit index `unit` (1 = years … 10 = nanoseconds).
    fn add(&mut self, unit: usize, n: i64) -> ValueResult<()> {
        self.order(unit)?;
        let max_i = i64::from(i32::MAX);
        match unit {
            1 | 2 => {
                let per = if unit == 1 { 12 } else { 1 };
                Self::limit(n, (max_i - self.months) / per, "months")?;
                self.months += n * per;
            }
            3 | 4 => {
                let per = if unit == 3 { 7 } else { 1 };
                Self::limit(n, (max_i - self.days) / per, "days")?;
                self.days += n * per;
            }
            _ => {
                let per = match unit {
                    5 => NANOS_PER_HOUR,
                    6 => NANOS_PER_MINUTE,
                    7 => NANOS_PER_SECOND,
                    8 => NANOS_PER_MILLI,
                    9 => NANOS_PER_MICRO,
                    _ => 1,
                };
                Self::limit(n, (i64::MAX - self.nanos) / per, "nanoseconds")?;
                self.nanos += n * per;
            }
        }
        Ok(())
    }

    fn build(&self) -> (i32, i32, i64) {
        let sign = if self.negative { -1 } else { 1 };
        (
            (self.months * sign) as i32,
            (self.days * sign) as i32,
            self.nanos * sign,
        )
    }
}

/// Parses a duration (Cassandra's `Duration.from`): `1h30m`-style units (`y`, `mo`, `w`,
/// `d`, `h`, `m`, `s`, `ms`, `us`/`µs`, `ns`, any case, largest first), ISO 8601
/// `P[nY][nM][nD][T[nH][nM][nS]]`, `PnW`, or the alternative `PYYYY-MM-DDThh:mm:ss`; a
/// leading `-` negates. Returns `(months, days, nanoseconds)`.
pub fn parse_duration(input: &str) -> ValueResult<(i32, i32, i64)> {
    let negative = input.starts_with('-');
    let source = if negative { &input[1..] } else { input };
    let bad = || ValueError::invalid(format!("Unable to convert '{source}' to a duration"));
    let num = |s: &str| s.parse::<i64>().map_err(|_| bad());
    let mut b = DurationBuilder::new(negative);
    if let Some(body) = source.strip_prefix('P') {
        if let Some(weeks) = body.strip_suffix('W') {
            if weeks.is_empty() || !weeks.bytes().all(|c| c.is_ascii_digit()) {
                return Err(bad());
            }
            b.add(3, num(weeks)?)?;
            return Ok(b.build());
        }
        if body.contains('-') {
            // PYYYY-MM-DDThh:mm:ss
            let bytes = body.as_bytes();
            let shape = bytes.len() == 19
                && bytes.iter().enumerate().all(|(i, c)| match i {
                    4 | 7 => *c == b'-',
                    10 => *c == b'T',
                    13 | 16 => *c == b':',
                    _ => c.is_ascii_digit(),
                });
            if !shape {
                return Err(bad());
            }
            let field = |r: std::ops::Range<usize>| num(body.get(r).unwrap_or(""));
            b.add(1, field(0..4)?)?;
            b.add(2, field(5..7)?)?;
            b.add(4, field(8..10)?)?;
            b.add(5, field(11..13)?)?;
            b.add(6, field(14..16)?)?;
            b.add(7, field(17..19)?)?;
            return Ok(b.build());
        }
        // P[nY][nM][nD][T[nH][nM][nS]]
        let (date, time) = match body.find('T') {
            Some(i) => (&body[..i], Some(&body[i + 1..])),
            None => (body, None),
        };
        parse_designators(date, &[('Y', 1), ('M', 2), ('D', 4)], &mut b, &bad)?;
        if let Some(time) = time {
            parse_designators(time, &[('H', 5), ('M', 6), ('S', 7)], &mut b, &bad)?;
        }
        return Ok(b.build());
    }
    // Standard format: (\d+)(unit) repeated, covering the whole text.
    let bytes = source.as_bytes();
    if bytes.is_empty() {
        return Err(bad());
    }
    let mut pos = 0;
    while pos < bytes.len() {
        let start = pos;
        while bytes.get(pos).is_some_and(u8::is_ascii_digit) {
            pos += 1;
        }
        if pos == start {
            return Err(bad());
        }
        let n = num(&source[start..pos])?;
        let rest = &source[pos..];
        let lower2: String = rest.chars().take(2).collect::<String>().to_lowercase();
        let (unit, len) = match lower2.as_str() {
            "mo" => (2, 2),
            "ms" => (8, 2),
            "us" => (9, 2),
            "ns" => (10, 2),
            "µs" => (9, 'µ'.len_utf8() + 1),
            _ => match rest.bytes().next().map(|c| c.to_ascii_lowercase()) {
                Some(b'y') => (1, 1),
                Some(b'w') => (3, 1),
                Some(b'd') => (4, 1),
                Some(b'h') => (5, 1),
                Some(b's') => (7, 1),
                Some(b'm') => (6, 1),
                _ => return Err(bad()),
            },
        };
        b.add(unit, n)?;
        pos += len;
    }
    Ok(b.build())
}

fn parse_designators(
    s: &str,
    designators: &[(char, usize)],
    b: &mut DurationBuilder,
    bad: &dyn Fn() -> ValueError,
) -> ValueResult<()> {
    let mut rest = s;
    let mut next = 0;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(bad());
        }
        let letter = rest[digits..].chars().next().ok_or_else(bad)?;
        let idx = designators
            .iter()
            .skip(next)
            .position(|(c, _)| *c == letter)
            .ok_or_else(bad)?
            + next;
        let unit = designators.get(idx).map(|(_, u)| *u).ok_or_else(bad)?;
        let n = rest[..digits].parse::<i64>().map_err(|_| bad())?;
        b.add(unit, n)?;
        next = idx + 1;
        rest = &rest[digits + 1..];
    }
    Ok(())
}

/// Cassandra's `Duration.toString`: `1y2mo3d4h5m6s7ms8us9ns`, `-` first when negative,
/// `""` for zero.
pub fn duration_to_string(months: i32, days: i32, nanos: i64) -> String {
    let mut s = String::new();
    if months < 0 || days < 0 || nanos < 0 {
        s.push('-');
    }
    let append = |s: &mut String, dividend: u64, divisor: u64, unit: &str| -> u64 {
        if dividend == 0 || dividend < divisor {
            return dividend;
        }
        s.push_str(&format!("{}{unit}", dividend / divisor));
        dividend % divisor
    };
    let rem = append(&mut s, u64::from(months.unsigned_abs()), 12, "y");
    append(&mut s, rem, 1, "mo");
    append(&mut s, u64::from(days.unsigned_abs()), 1, "d");
    if nanos != 0 {
        let mut rem = nanos.unsigned_abs();
        for (div, unit) in [
            (NANOS_PER_HOUR as u64, "h"),
            (NANOS_PER_MINUTE as u64, "m"),
            (NANOS_PER_SECOND as u64, "s"),
            (NANOS_PER_MILLI as u64, "ms"),
            (NANOS_PER_MICRO as u64, "us"),
            (1, "ns"),
        ] {
            rem = append(&mut s, rem, div, unit);
        }
    }
    s
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use cairn_engine::model::types::{decode_duration, write_unsigned_vint};
    use CqlType as T;

    fn int(s: &str) -> Literal {
        Literal::Integer(s.into())
    }
    fn float(s: &str) -> Literal {
        Literal::Float(s.into())
    }
    fn string(s: &str) -> Literal {
        Literal::String(s.into())
    }

    fn ok(lit: Literal, ty: CqlType, expected: &[u8]) {
        let got = literal_to_bytes_at(&lit, &ty, "a", 1_000)
            .unwrap_or_else(|e| panic!("{lit:?} as {ty}: {e}"));
        assert_eq!(&got[..], expected, "{lit:?} as {ty}");
        if !expected.is_empty() {
            ty.validate(&got).unwrap();
        }
    }

    fn err(lit: Literal, ty: CqlType, expected: &str) {
        match literal_to_bytes_at(&lit, &ty, "a", 1_000) {
            Ok(v) => panic!("{lit:?} as {ty} gave {v:?}"),
            Err(e) => assert_eq!(e.to_string(), expected, "{lit:?} as {ty}"),
        }
    }

    #[test]
    fn integers() {
        ok(int("1"), T::Int, &[0, 0, 0, 1]);
        ok(int("-1"), T::Int, &[0xFF; 4]);
        ok(int("2147483647"), T::Int, &[0x7F, 0xFF, 0xFF, 0xFF]);
        ok(int("-2147483648"), T::Int, &[0x80, 0, 0, 0]);
        ok(int("5"), T::Bigint, &[0, 0, 0, 0, 0, 0, 0, 5]);
        ok(int("5"), T::Counter, &[0, 0, 0, 0, 0, 0, 0, 5]);
        ok(int("-2"), T::Smallint, &[0xFF, 0xFE]);
        ok(int("127"), T::Tinyint, &[0x7F]);
        ok(int("128"), T::Varint, &[0x00, 0x80]);
        ok(int("-1"), T::Varint, &[0xFF]);
        ok(int("0"), T::Varint, &[0x00]);
        ok(
            int("18446744073709551616"),
            T::Varint,
            &[0x01, 0, 0, 0, 0, 0, 0, 0, 0],
        );
        err(
            int("3000000000"),
            T::Int,
            "Unable to make int from '3000000000'",
        );
        err(
            int("40000"),
            T::Smallint,
            "Unable to make short from '40000'",
        );
        err(int("128"), T::Tinyint, "Unable to make byte from '128'");
        err(
            int("9223372036854775808"),
            T::Bigint,
            "Unable to make long from '9223372036854775808'",
        );
        err(
            string("foo"),
            T::Int,
            "Invalid STRING constant (foo) for \"a\" of type int",
        );
        err(
            float("1.5"),
            T::Int,
            "Invalid FLOAT constant (1.5) for \"a\" of type int",
        );
        err(
            float("1.5"),
            T::Varint,
            "Invalid FLOAT constant (1.5) for \"a\" of type varint",
        );
        err(
            Literal::Boolean(true),
            T::Int,
            "Invalid BOOLEAN constant (true) for \"a\" of type int",
        );
        err(
            int("1"),
            T::Text,
            "Invalid INTEGER constant (1) for \"a\" of type text",
        );
        err(
            int("1"),
            T::List(Box::new(T::Int)),
            "Invalid INTEGER constant (1) for \"a\" of type list<int>",
        );
    }

    #[test]
    fn decimals_and_floats() {
        ok(float("1.50"), T::Decimal, &[0, 0, 0, 2, 0x00, 0x96]);
        ok(int("10"), T::Decimal, &[0, 0, 0, 0, 0x0A]);
        ok(float("-0.5"), T::Decimal, &[0, 0, 0, 1, 0xFB]);
        ok(float("1e3"), T::Decimal, &[0xFF, 0xFF, 0xFF, 0xFD, 0x01]);
        err(
            float("NaN"),
            T::Decimal,
            "unable to make BigDecimal from 'NaN'",
        );
        ok(float("1.5"), T::Double, &1.5f64.to_be_bytes());
        ok(int("3"), T::Double, &3f64.to_be_bytes());
        ok(float("NaN"), T::Double, &f64::NAN.to_be_bytes());
        ok(
            float("-Infinity"),
            T::Double,
            &f64::NEG_INFINITY.to_be_bytes(),
        );
        ok(float("Infinity"), T::Float, &f32::INFINITY.to_be_bytes());
        ok(float("0.1"), T::Float, &0.1f32.to_be_bytes());
        ok(float("1e50"), T::Float, &f32::INFINITY.to_be_bytes());
        ok(float("2.5E-3"), T::Double, &0.0025f64.to_be_bytes());
    }

    #[test]
    fn strings_and_others() {
        ok(string("héllo"), T::Text, "héllo".as_bytes());
        ok(string(""), T::Text, b"");
        ok(string("abc"), T::Ascii, b"abc");
        err(
            string("é"),
            T::Ascii,
            "Invalid ASCII character in string literal: \
             java.nio.charset.UnmappableCharacterException: Input length = 1",
        );
        ok(Literal::Boolean(true), T::Boolean, &[1]);
        ok(Literal::Boolean(false), T::Boolean, &[0]);
        err(
            string("true"),
            T::Boolean,
            "Invalid STRING constant (true) for \"a\" of type boolean",
        );
        ok(Literal::Blob("0xCAFE".into()), T::Blob, &[0xCA, 0xFE]);
        ok(Literal::Blob("0x".into()), T::Blob, &[]);
        err(
            Literal::Blob("0x123".into()),
            T::Blob,
            "cannot parse '123' as hex bytes",
        );
        ok(Literal::Blob("0x05".into()), T::Tinyint, &[5]);
        err(
            Literal::Blob("0x0102".into()),
            T::Tinyint,
            "Expected 1 byte for a tinyint (2)",
        );
        err(
            string("0xCAFE"),
            T::Blob,
            "Invalid STRING constant (0xCAFE) for \"a\" of type blob",
        );
        ok(string("127.0.0.1"), T::Inet, &[127, 0, 0, 1]);
        ok(string("::ffff:1.2.3.4"), T::Inet, &[1, 2, 3, 4]);
        let mut v6 = [0u8; 16];
        v6[15] = 1;
        ok(string("::1"), T::Inet, &v6);
        err(
            string("localhost"),
            T::Inet,
            "Unable to make inet address from 'localhost'",
        );
        let u = "e7cd5752-bc0d-11ea-b3de-0242ac130004";
        let ub = temporal::parse_uuid(u).unwrap();
        ok(Literal::Uuid(u.into()), T::Uuid, &ub);
        ok(Literal::Uuid(u.into()), T::Timeuuid, &ub);
        let v4 = "550e8400-e29b-41d4-a716-446655440000";
        err(
            Literal::Uuid(v4.into()),
            T::Timeuuid,
            "TimeUUID supports only version 1 UUIDs",
        );
        err(
            string(u),
            T::Uuid,
            &format!("Invalid STRING constant ({u}) for \"a\" of type uuid"),
        );
    }

    #[test]
    fn temporal_literals() {
        let base = 1_704_067_200_000i64;
        ok(string("2024-01-01"), T::Timestamp, &base.to_be_bytes());
        ok(
            string("2024-01-01T00:00:00.250Z"),
            T::Timestamp,
            &(base + 250).to_be_bytes(),
        );
        ok(int("1000"), T::Timestamp, &1000i64.to_be_bytes());
        ok(int("-5"), T::Timestamp, &(-5i64).to_be_bytes());
        ok(string("12345"), T::Timestamp, &12345i64.to_be_bytes());
        ok(string("now"), T::Timestamp, &1000i64.to_be_bytes());
        ok(string(""), T::Timestamp, &[]);
        err(
            string("2024-13-01"),
            T::Timestamp,
            "Unable to coerce '2024-13-01' to a formatted date (long)",
        );
        err(
            int("99999999999999999999"),
            T::Timestamp,
            "Unable to make long (for date) from: '99999999999999999999'",
        );
        ok(string("1970-01-01"), T::Date, &[0x80, 0, 0, 0]);
        ok(string("1969-12-31"), T::Date, &[0x7F, 0xFF, 0xFF, 0xFF]);
        ok(
            string("2024-01-01"),
            T::Date,
            &(0x8000_0000u32 + 19_723).to_be_bytes(),
        );
        ok(int("2147483648"), T::Date, &[0x80, 0, 0, 0]);
        ok(int("0"), T::Date, &[0, 0, 0, 0]);
        err(
            int("-1"),
            T::Date,
            "Unable to make unsigned int (for date) from: '-1'",
        );
        err(
            int("4294967296"),
            T::Date,
            "Unable to make unsigned int (for date) from: '4294967296'",
        );
        err(
            string("2024-1-1"),
            T::Date,
            "Unable to coerce '2024-1-1' to a formatted date (long)",
        );
        ok(string("00:00:01"), T::Time, &1_000_000_000i64.to_be_bytes());
        ok(
            string("12:34:56.123456789"),
            T::Time,
            &45_296_123_456_789i64.to_be_bytes(),
        );
        ok(int("5"), T::Time, &5i64.to_be_bytes());
        err(
            int("86400000000000"),
            T::Time,
            "Unable to make long (for time) from: '86400000000000'",
        );
        err(
            string("25:00:00"),
            T::Time,
            "(TimeType) Unable to coerce '25:00:00' to a formatted time (long)",
        );
    }

    fn dur(s: &str) -> (i32, i32, i64) {
        parse_duration(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn durations() {
        const H: i64 = NANOS_PER_HOUR;
        assert_eq!(dur("1h"), (0, 0, H));
        assert_eq!(dur("1h30m"), (0, 0, H + 30 * NANOS_PER_MINUTE));
        assert_eq!(
            dur("1y2mo3w4d5h6m7s8ms9us10ns"),
            (
                14,
                25,
                5 * H + 6 * NANOS_PER_MINUTE + 7 * NANOS_PER_SECOND + 8_009_010
            )
        );
        assert_eq!(dur("2MO"), (2, 0, 0));
        assert_eq!(dur("3µs"), (0, 0, 3_000));
        assert_eq!(dur("-1d"), (0, -1, 0));
        assert_eq!(dur("P1DT2H"), (0, 1, 2 * H));
        assert_eq!(dur("P1Y2M"), (14, 0, 0));
        assert_eq!(dur("PT30M"), (0, 0, 30 * NANOS_PER_MINUTE));
        assert_eq!(dur("P1W"), (0, 7, 0));
        assert_eq!(dur("-P2W"), (0, -14, 0));
        assert_eq!(
            dur("P0001-02-03T04:05:06"),
            (14, 3, 4 * H + 5 * NANOS_PER_MINUTE + 6 * NANOS_PER_SECOND)
        );
        for (bad, msg) in [
            ("1x", "Unable to convert '1x' to a duration"),
            ("h", "Unable to convert 'h' to a duration"),
            ("", "Unable to convert '' to a duration"),
            ("P1H", "Unable to convert 'P1H' to a duration"),
            (
                "P0001-02-03",
                "Unable to convert 'P0001-02-03' to a duration",
            ),
            ("1h1d", "Invalid duration. The hours should be after days"),
            (
                "1h2h",
                "Invalid duration. The hours are specified multiple times",
            ),
            (
                "2147483648mo",
                "Invalid duration. The total number of months must be less or equal to 2147483647",
            ),
        ] {
            assert_eq!(parse_duration(bad).unwrap_err().to_string(), msg, "{bad}");
        }
        // Protocol bytes: 1h = months 0, days 0, nanos 3.6e12 (zig-zag 7.2e12).
        let mut nanos = Vec::new();
        write_unsigned_vint(7_200_000_000_000, &mut nanos);
        let mut expected = vec![0, 0];
        expected.extend(&nanos);
        ok(Literal::Duration("1h".into()), T::Duration, &expected);
        assert_eq!(nanos.len(), 7);
        ok(Literal::Duration("1mo2d".into()), T::Duration, &[2, 4, 0]);
        ok(Literal::Duration("-1mo".into()), T::Duration, &[1, 0, 0]);
        err(int("5"), T::Duration, "Unable to convert '5' to a duration");
        assert_eq!(
            decode_duration(&encode_duration(-3, -2, -1)).ok(),
            Some((-3, -2, -1))
        );
        assert_eq!(duration_to_string(14, 3, H + 1), "1y2mo3d1h1ns");
        assert_eq!(duration_to_string(0, -1, 0), "-1d");
    }
}
