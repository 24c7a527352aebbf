//! Serialized values to CQL literal text, for system tables and `DESCRIBE`-like output.
//!
//! The text reads back as the same value when used as a literal for the type:
//! `'it''s'` (strings quoted, quotes doubled), `42`, `1.5`, `NaN`, `-Infinity`, `1.5E+10`
//! (decimals as Java's `BigDecimal.toString`), `0xcafe`, uuids bare,
//! `'2024-01-01 00:00:00.000000+0000'` (timestamps in UTC, the form cqlsh prints),
//! `'2024-01-01'`, `'12:34:56.000000000'`, `'127.0.0.1'`, durations as `1h30m`, and
//! `[1, 2]`, `{1, 2}`, `{'a': 1}`, `(1, null)` for collections and tuples. The empty value of
//! a non-string type is `null`. A value that is not valid for its type is written as a blob
//! (`0x…`) rather than failing: this never panics.

use super::literal::duration_to_string;
use super::temporal;
use cairn_engine::model::types::decode_duration;
use cairn_engine::model::types::framing::{split_collection, split_map, split_tuple};
use cairn_engine::model::types::unfrozen;
use cairn_engine::model::types::CqlType;
use cairn_engine::model::types::{BigDecimal, BigInt};

/// `'text'` with single quotes doubled.
pub fn quote_string(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// `0x` and lower-case hex.
pub fn hex_literal(v: &[u8]) -> String {
    let mut s = String::with_capacity(2 + v.len() * 2);
    s.push_str("0x");
    for b in v {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Cassandra's `Hex.hexToBytes`: an even number of hex digits, no prefix (no padding,
/// unlike a CQL blob literal).
pub fn hex_bytes(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) || !hex.is_ascii() {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Java's `Double.toString` (as Java 17 runs it, which Cassandra 5.0 does): shortest digits,
/// except for whole numbers below 2^63 ([`java_whole_number`]); plain between 10^-3 and
/// 10^7, else `d.dddE±n`.
pub fn java_double_string(x: f64) -> String {
    let a = x.abs();
    java_float_text(
        x.is_nan(),
        x.is_infinite(),
        x.is_sign_negative(),
        x == 0.0,
        || {
            // The exponent field less the bias: a whole number's power of two.
            let bin_exp = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
            if a.fract() == 0.0 && (0..63).contains(&bin_exp) {
                java_whole_number(a as u64, bin_exp, 53)
            } else {
                java_tie(format!("{a:e}"), a)
            }
        },
    )
}

/// Java's `Float.toString` (as Java 17 runs it; see [`java_double_string`]).
pub fn java_float_string(x: f32) -> String {
    let a = x.abs();
    java_float_text(
        x.is_nan(),
        x.is_infinite(),
        x.is_sign_negative(),
        x == 0.0,
        || {
            let bin_exp = ((a.to_bits() >> 23) & 0xff) as i32 - 127;
            if a.fract() == 0.0 && (0..63).contains(&bin_exp) {
                java_whole_number(a as u64, bin_exp, 24)
            } else {
                java_tie(format!("{a:e}"), f64::from(a))
            }
        },
    )
}

/// Rust's shortest digits (`d.ddde<exp>`) of a value whose exact value is `exact`, with Java
/// 17's choice on a tie: when the value lies exactly halfway between the two shortest
/// candidates, `FloatingDecimal` keeps the even last digit (`1584822.25f` prints as
/// `1584822.2`), where Rust may take the odd one. Other cases where Java 17's digits are not
/// the shortest are not reproduced (FINDINGS F69).
fn java_tie(shortest: String, exact: f64) -> String {
    let Some((mantissa, exp)) = shortest.split_once('e') else {
        return shortest;
    };
    let digits: Vec<u8> = mantissa.bytes().filter(|b| *b != b'.').collect();
    if digits.last().is_none_or(|d| (d - b'0').is_multiple_of(2)) {
        return shortest;
    }
    // Enough digits for any double's exact value (at most 767 significant digits).
    let full = format!("{exact:.800e}");
    let Some((full_mantissa, full_exp)) = full.split_once('e') else {
        return shortest;
    };
    if full_exp != exp {
        return shortest;
    }
    let full_digits: Vec<u8> = full_mantissa.bytes().filter(|b| *b != b'.').collect();
    let n = digits.len();
    let tie = full_digits.get(n) == Some(&b'5')
        && full_digits
            .get(n + 1..)
            .is_some_and(|rest| rest.iter().all(|d| *d == b'0'));
    if !tie {
        return shortest;
    }
    // The two candidates are the exact value's first n digits and those plus one unit.
    let below = full_digits[..n].to_vec();
    let chosen = if digits == below {
        // Rust kept the odd lower one: Java rounds it up, unless that carries out.
        let mut up = below;
        let mut i = n;
        loop {
            if i == 0 {
                return shortest;
            }
            i -= 1;
            if up[i] == b'9' {
                up[i] = b'0';
            } else {
                up[i] += 1;
                break;
            }
        }
        up
    } else {
        below
    };
    let text = String::from_utf8_lossy(&chosen).into_owned();
    let (first, rest) = text.split_at(1);
    if rest.is_empty() {
        format!("{first}e{exp}")
    } else {
        format!("{first}.{rest}e{exp}")
    }
}

/// Java 17's `FloatingDecimal` digits of a whole number `value` below 2^63 (`bin_exp` its
/// power of two, `significant_bits` 53 for a double, 24 for a float), as `d.ddde<exp>`:
/// not the shortest digits that read back as the value but its exact decimal digits, of
/// which only those its precision cannot tell apart are rounded off
/// (`insignificantDigitsForPow2`, `developLongDigits`). So `8.9771283193909E16` prints as
/// `8.9771283193908992E16` and the float `1.23456794E9` keeps its last digit.
fn java_whole_number(value: u64, bin_exp: i32, significant_bits: i32) -> String {
    // FloatingDecimal's `insignificantDigitsNumber`: floor(p2 * log10(2)).
    const INSIGNIFICANT: [u32; 64] = [
        0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 8, 8, 8,
        9, 9, 9, 9, 10, 10, 10, 11, 11, 11, 12, 12, 12, 12, 13, 13, 13, 14, 14, 14, 15, 15, 15, 15,
        16, 16, 16, 17, 17, 17, 18, 18, 18, 19,
    ];
    let p2 = bin_exp - significant_bits - 1;
    let insignificant = usize::try_from(p2)
        .ok()
        .filter(|p| *p > 1)
        .and_then(|p| INSIGNIFICANT.get(p).copied())
        .unwrap_or(0);
    let mut value = value;
    if insignificant > 0 {
        let pow10 = 10u64.pow(insignificant);
        let residue = value % pow10;
        value /= pow10;
        if residue >= pow10 / 2 {
            value += 1;
        }
    }
    let digits = value.to_string();
    let exp = digits.len() as u32 - 1 + insignificant;
    let significant = digits.trim_end_matches('0');
    let (first, rest) = significant.split_at(1.min(significant.len()));
    let rest = if rest.is_empty() { "0" } else { rest };
    format!("{first}.{rest}e{exp}")
}

fn java_float_text(
    nan: bool,
    inf: bool,
    neg: bool,
    zero: bool,
    sci: impl Fn() -> String,
) -> String {
    let sign = if neg { "-" } else { "" };
    if nan {
        return "NaN".to_string();
    }
    if inf {
        return format!("{sign}Infinity");
    }
    if zero {
        return format!("{sign}0.0");
    }
    // Rust prints the shortest round-trip digits as `d.ddde<exp>`.
    let s = sci();
    let (mantissa, exp) = s.split_once('e').unwrap_or((s.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if (-3..7).contains(&exp) {
        let point = exp + 1; // digits before the point
        if point <= 0 {
            format!("{sign}0.{}{digits}", "0".repeat((-point) as usize))
        } else {
            let point = point as usize;
            let (int, frac) = if digits.len() > point {
                (digits[..point].to_string(), digits[point..].to_string())
            } else {
                (
                    format!("{digits}{}", "0".repeat(point - digits.len())),
                    String::new(),
                )
            };
            let frac = if frac.is_empty() {
                "0".to_string()
            } else {
                frac
            };
            format!("{sign}{int}.{frac}")
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let rest = if rest.is_empty() { "0" } else { rest };
        format!("{sign}{first}.{rest}E{exp}")
    }
}

/// Java's `InetAddress.getHostAddress` of a serialized inet, as Cassandra prints it
/// everywhere: IPv6 as eight hex groups, nothing compressed (`0:0:0:0:0:0:0:1`), and an
/// IPv4-mapped IPv6 address as the IPv4 one (`InetAddress.getByAddress` makes it an
/// `Inet4Address`).
pub fn java_host_address(v: &[u8]) -> Option<String> {
    match v.len() {
        4 => Some(std::net::Ipv4Addr::from(<[u8; 4]>::try_from(v).ok()?).to_string()),
        16 => {
            let a = std::net::Ipv6Addr::from(<[u8; 16]>::try_from(v).ok()?);
            if let Some(v4) = a.to_ipv4_mapped() {
                return Some(v4.to_string());
            }
            Some(
                a.segments()
                    .iter()
                    .map(|g| format!("{g:x}"))
                    .collect::<Vec<_>>()
                    .join(":"),
            )
        }
        _ => None,
    }
}

/// The CQL literal text of a serialized value of type `ty`.
pub fn format_value(ty: &CqlType, v: &[u8]) -> String {
    format_checked(ty, v).unwrap_or_else(|| hex_literal(v))
}

fn format_checked(ty: &CqlType, v: &[u8]) -> Option<String> {
    use CqlType as T;
    let ty = unfrozen(ty);
    if v.is_empty() && !matches!(ty, T::Text | T::Ascii | T::Blob) {
        return Some("null".to_string());
    }
    Some(match ty {
        T::Text | T::Ascii => quote_string(std::str::from_utf8(v).ok()?),
        T::Blob => hex_literal(v),
        T::Boolean => match v {
            [0] => "false".to_string(),
            [_] => "true".to_string(),
            _ => return None,
        },
        T::Tinyint => i8::from_be_bytes(v.try_into().ok()?).to_string(),
        T::Smallint => i16::from_be_bytes(v.try_into().ok()?).to_string(),
        T::Int => i32::from_be_bytes(v.try_into().ok()?).to_string(),
        T::Bigint | T::Counter => i64::from_be_bytes(v.try_into().ok()?).to_string(),
        T::Float => java_float_string(f32::from_be_bytes(v.try_into().ok()?)),
        T::Double => java_double_string(f64::from_be_bytes(v.try_into().ok()?)),
        T::Varint => BigInt::from_bytes(v).to_java_string(),
        T::Decimal => BigDecimal::from_bytes(v)?.to_java_string(),
        T::Uuid | T::Timeuuid => {
            if v.len() != 16 {
                return None;
            }
            temporal::format_uuid(v)
        }
        T::Inet => quote_string(&java_host_address(v)?),
        T::Timestamp => quote_string(&temporal::format_timestamp_cql(i64::from_be_bytes(
            v.try_into().ok()?,
        ))),
        T::Date => {
            let raw = u32::from_be_bytes(v.try_into().ok()?);
            quote_string(&temporal::format_date_days(i64::from(raw) - (1i64 << 31)))
        }
        T::Time => {
            let n = i64::from_be_bytes(v.try_into().ok()?);
            if !(0..cairn_engine::model::types::NANOS_PER_DAY).contains(&n) {
                return None;
            }
            quote_string(&temporal::format_time(n))
        }
        T::Duration => {
            let (m, d, n) = decode_duration(v).ok()?;
            let s = duration_to_string(m, d, n);
            if s.is_empty() || s == "-" {
                "0s".to_string()
            } else {
                s
            }
        }
        T::List(e) => format!("[{}]", join(e, &split_collection(v)?)),
        T::Set(e) => format!("{{{}}}", join(e, &split_collection(v)?)),
        T::Map(k, val) => format!(
            "{{{}}}",
            split_map(v)?
                .iter()
                .map(|(kb, vb)| format!("{}: {}", format_value(k, kb), format_value(val, vb)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        T::Tuple(types) => {
            let comps = split_tuple(v)?;
            if comps.len() > types.len() {
                return None;
            }
            format!(
                "({})",
                comps
                    .iter()
                    .zip(types)
                    .map(|(c, t)| match c {
                        Some(b) => format_value(t, b),
                        None => "null".to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
        T::Udt(u) => {
            // `UserDefined.toCQLLiteral`: the fields the value has (a value written before
            // `ALTER TYPE … ADD` is shorter), each named.
            let comps = split_tuple(v)?;
            if comps.len() > u.field_types.len() {
                return None;
            }
            format!(
                "{{{}}}",
                comps
                    .iter()
                    .zip(u.fields())
                    .map(|(c, (name, t))| format!(
                        "{}: {}",
                        crate::identifier::quote_identifier(name),
                        match c {
                            Some(b) => format_value(t, b),
                            None => "null".to_string(),
                        }
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
        T::Frozen(inner) => format_value(inner, v),
    })
}

fn join(ty: &CqlType, elems: &[&[u8]]) -> String {
    elems
        .iter()
        .map(|e| format_value(ty, e))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::super::tests::{ty, value};
    use super::*;
    use proptest::prelude::*;

    #[test]
    #[allow(clippy::excessive_precision)] // the literals as Java was given them
    fn java_keeps_the_even_digit_on_a_tie() {
        // Expected texts from Java 17's Float.toString / Double.toString.
        for (f, java) in [
            (1584822.25f32, "1584822.2"),
            (-2803088.25, "-2803088.2"),
            (2.5, "2.5"),
            (123456.75, "123456.75"),
            (16777.125, "16777.125"),
            (1.1, "1.1"),
        ] {
            assert_eq!(java_float_string(f), java, "{f}");
        }
        for (d, java) in [
            (1528560442095752.25f64, "1.5285604420957522E15"),
            (4503599627370497.5, "4.503599627370498E15"),
            (123456789012345.675, "1.2345678901234567E14"),
            (0.125, "0.125"),
            (253666489776935.62, "2.5366648977693562E14"),
            (-1906334067333135.2, "-1.9063340673331352E15"),
        ] {
            assert_eq!(java_double_string(d), java, "{d}");
        }
    }

    #[test]
    fn java_number_strings() {
        for (x, s) in [
            (1.0, "1.0"),
            (1.5, "1.5"),
            (-0.0, "-0.0"),
            (0.001, "0.001"),
            (0.0001, "1.0E-4"),
            (1234567.0, "1234567.0"),
            (12345678.0, "1.2345678E7"),
            (1e10, "1.0E10"),
            (0.1, "0.1"),
            (100.0, "100.0"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
            // Java 17 prints whole numbers up to 2^63 from their exact digits (JDK-4511638).
            (8.9771283193909e16, "8.9771283193908992E16"),
            (2.82879384806159e17, "2.82879384806159008E17"),
            (1e17, "1.0E17"),
            (-9007199254740993.0, "-9.007199254740992E15"),
            (1e23, "1.0E23"),
        ] {
            assert_eq!(java_double_string(x), s, "{x}");
        }
        assert_eq!(java_float_string(0.1), "0.1");
        assert_eq!(java_float_string(1e10), "1.0E10");
        assert_eq!(java_float_string(1234567936.0), "1.23456794E9");
    }

    #[test]
    fn literals_round_trip() {
        for (t, text, expected) in [
            ("text", "'it''s'", "'it''s'"),
            ("ascii", "''", "''"),
            ("int", "-42", "-42"),
            ("bigint", "9223372036854775807", "9223372036854775807"),
            (
                "varint",
                "-123456789012345678901234567890",
                "-123456789012345678901234567890",
            ),
            ("decimal", "1.50", "1.50"),
            ("decimal", "1e10", "1E+10"),
            ("double", "1.5", "1.5"),
            ("double", "NaN", "NaN"),
            ("float", "-Infinity", "-Infinity"),
            ("boolean", "true", "true"),
            ("blob", "0xCAFE", "0xcafe"),
            (
                "uuid",
                "550e8400-e29b-41d4-a716-446655440000",
                "550e8400-e29b-41d4-a716-446655440000",
            ),
            ("inet", "'::1'", "'0:0:0:0:0:0:0:1'"),
            ("inet", "'::ffff:1.2.3.4'", "'1.2.3.4'"),
            ("inet", "'10.0.0.1'", "'10.0.0.1'"),
            (
                "timestamp",
                "'2024-01-01 12:00:00.123'",
                "'2024-01-01 12:00:00.123000+0000'",
            ),
            ("date", "'1969-07-20'", "'1969-07-20'"),
            ("time", "'12:34:56.5'", "'12:34:56.500000000'"),
            ("duration", "1h30m", "1h30m"),
            ("duration", "-P1W", "-7d"),
            ("list<text>", "['a', 'b']", "['a', 'b']"),
            ("set<int>", "{3, 1}", "{1, 3}"),
            ("map<text, int>", "{'b': 2, 'a': 1}", "{'a': 1, 'b': 2}"),
            ("tuple<int, text, int>", "(1, null, 3)", "(1, null, 3)"),
            ("frozen<list<frozen<set<int>>>>", "[{2, 1}]", "[{1, 2}]"),
        ] {
            let v = value(text, t);
            let f = format_value(&ty(t), &v);
            assert_eq!(f, expected, "{t} {text}");
            // And it reads back.
            assert_eq!(value(&f, t), v, "{t} {f}");
        }
        assert_eq!(format_value(&CqlType::Int, &[]), "null");
        assert_eq!(format_value(&CqlType::Int, &[1, 2]), "0x0102");
        assert_eq!(format_value(&CqlType::Text, &[0xFF]), "0xff");
    }

    fn all_types() -> Vec<CqlType> {
        [
            "ascii",
            "bigint",
            "blob",
            "boolean",
            "counter",
            "date",
            "decimal",
            "double",
            "duration",
            "float",
            "inet",
            "int",
            "smallint",
            "text",
            "time",
            "timestamp",
            "timeuuid",
            "tinyint",
            "uuid",
            "varint",
            "list<int>",
            "set<text>",
            "map<int, frozen<list<text>>>",
            "tuple<int, text>",
            "frozen<set<decimal>>",
        ]
        .iter()
        .map(|t| ty(t))
        .collect()
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..48)) {
            for t in all_types() {
                let _ = format_value(&t, &bytes);
                let _ = cairn_engine::model::types::compare(&t, &bytes, &bytes[..bytes.len() / 2]);
                let _ = super::super::collections::comparable_encode(&t, &bytes);
                let _ = super::super::collections::comparable_decode(&t, &bytes);
                let _ = super::super::canonical::normalize_collection(&t, bytes::Bytes::copy_from_slice(&bytes));
                if let CqlType::Set(_) | CqlType::Map(_, _) | CqlType::List(_) = t {
                    let cell = (bytes::Bytes::copy_from_slice(&bytes), bytes::Bytes::copy_from_slice(&bytes));
                    let _ = super::super::collections::cells_to_collection(&t, &[cell]);
                }
            }
        }
    }
}
