//! Values as JSON: Cassandra's `toJSONString` ([`to_json`]) and `toJson()`
//! ([`to_json_function`]), and the keys `SELECT JSON` writes ([`json_key`]).

use crate::values::assign::unfrozen;
use crate::values::error::{ValueError, ValueResult};
use crate::values::format::{java_double_string, java_float_string, java_host_address};
use crate::values::literal::duration_to_string;
use crate::values::number::{is_integer, signed};
use crate::values::temporal::{
    self, civil_from_days, format_date_days, format_time, MILLIS_PER_DAY,
};
use cairn_engine::model::types::decode_duration;
use cairn_engine::model::types::framing::{split_map, split_tuple, Framed};
use cairn_engine::model::types::CqlType;
use cairn_engine::model::types::{BigDecimal, BigInt};

/// Cassandra's `toJSONString` of a value of `ty` (`null` for None).
pub fn to_json(ty: &CqlType, v: Option<&[u8]>) -> ValueResult<String> {
    let Some(v) = v else {
        return Ok("null".to_string());
    };
    let mut out = String::new();
    write_json(unfrozen(ty), v, &mut out)?;
    Ok(out)
}

/// `toJson(x)`: [`to_json`], except that a null argument and the empty value of a type
/// whose empty value means nothing (the numbers, `boolean`, `timestamp`, `uuid`,
/// `timeuuid`, `inet`) give `null`.
pub fn to_json_function(ty: &CqlType, v: Option<&[u8]>) -> ValueResult<String> {
    use CqlType as T;
    let meaningless = matches!(
        unfrozen(ty),
        T::Boolean
            | T::Counter
            | T::Decimal
            | T::Double
            | T::Float
            | T::Inet
            | T::Int
            | T::Varint
            | T::Bigint
            | T::Timestamp
            | T::Uuid
            | T::Timeuuid
    );
    match v {
        Some(b) if b.is_empty() && meaningless => Ok("null".to_string()),
        other => to_json(ty, other),
    }
}

/// The JSON object key for a result column name, as `SELECT JSON` writes it: a name with
/// upper-case letters inside double quotes (`"\"Name\""`), JSON-escaped.
pub fn json_key(name: &str) -> String {
    let name = if name.to_lowercase() != name {
        format!("\"{name}\"")
    } else {
        name.to_string()
    };
    format!("\"{}\"", quote_json(&name))
}

/// Jackson's `quoteAsString`: `"` and `\` escaped, control characters as `\n`-style escapes
/// or `\u00XX`; everything else (non-ASCII included) as is.
pub fn quote_json(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

fn malformed(ty: &CqlType) -> ValueError {
    ValueError::marshal(format!("Invalid value for type {}", ty.name()))
}

fn quoted(out: &mut String, s: &str) {
    out.push('"');
    out.push_str(&quote_json(s));
    out.push('"');
}

/// `yyyy-MM-dd HH:mm:ss.SSSX` in UTC (Cassandra's JSON timestamp pattern: the year is a
/// year of era, so years before 1 print without a sign).
fn json_timestamp(millis: i64) -> String {
    let days = millis.div_euclid(MILLIS_PER_DAY);
    let in_day = millis.rem_euclid(MILLIS_PER_DAY);
    let (y, m, d) = civil_from_days(days);
    let year_of_era = if y <= 0 { 1 - y } else { y };
    let year = if year_of_era > 9999 {
        format!("+{year_of_era}")
    } else {
        format!("{year_of_era:04}")
    };
    let secs = in_day / 1000;
    format!(
        "{year}-{m:02}-{d:02} {:02}:{:02}:{:02}.{:03}Z",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60,
        in_day % 1000
    )
}

fn write_json(ty: &CqlType, v: &[u8], out: &mut String) -> ValueResult<()> {
    use CqlType as T;
    let bad = || malformed(ty);
    // An empty value: what each type's `toJSONString` makes of a null deserialization.
    if v.is_empty() && !matches!(ty, T::Text | T::Ascii | T::Blob) {
        out.push_str("\"\"");
        return Ok(());
    }
    // A list's framing and elements are checked as they are written (it may hold nulls).
    if !matches!(ty, T::List(_)) && ty.validate(v).is_err() {
        return Err(bad());
    }
    match ty {
        T::Text | T::Ascii => quoted(out, std::str::from_utf8(v).map_err(|_| bad())?),
        t if is_integer(t) => out.push_str(&signed(v).ok_or_else(bad)?.to_string()),
        T::Float => {
            let f = f32::from_be_bytes(v.try_into().map_err(|_| bad())?);
            out.push_str(&if f.is_finite() {
                java_float_string(f)
            } else {
                "null".to_string()
            });
        }
        T::Double => {
            let f = f64::from_be_bytes(v.try_into().map_err(|_| bad())?);
            out.push_str(&if f.is_finite() {
                java_double_string(f)
            } else {
                "null".to_string()
            });
        }
        T::Varint => out.push_str(&BigInt::from_bytes(v).to_java_string()),
        T::Decimal => out.push_str(&BigDecimal::from_bytes(v).ok_or_else(bad)?.to_java_string()),
        T::Boolean => out.push_str(if v.first().ok_or_else(bad)? != &0 {
            "true"
        } else {
            "false"
        }),
        T::Blob => {
            out.push_str("\"0x");
            for b in v {
                out.push_str(&format!("{b:02x}"));
            }
            out.push('"');
        }
        T::Timestamp => {
            let ms = i64::from_be_bytes(v.try_into().map_err(|_| bad())?);
            quoted(out, &json_timestamp(ms));
        }
        T::Date => {
            let raw = u32::from_be_bytes(v.try_into().map_err(|_| bad())?);
            quoted(out, &format_date_days(i64::from(raw) - (1i64 << 31)));
        }
        T::Time => quoted(
            out,
            &format_time(i64::from_be_bytes(v.try_into().map_err(|_| bad())?)),
        ),
        T::Uuid | T::Timeuuid if v.len() == 16 => quoted(out, &temporal::format_uuid(v)),
        T::Inet => quoted(out, &java_host_address(v).ok_or_else(bad)?),
        T::Duration => {
            let (m, d, n) = decode_duration(v).map_err(|_| bad())?;
            quoted(out, &duration_to_string(m, d, n));
        }
        T::List(e) | T::Set(e) => {
            // Nulls appear in one list only: the writetimes or TTLs of a non-frozen user
            // type's fields (null for a field with no cell). Cassandra 5.0.9 fails on them
            // (a NullPointerException); JSON has a null.
            let mut r = Framed::new(v);
            let n = r.count().map_err(|_| bad())?;
            out.push('[');
            for i in 0..n {
                if i > 0 {
                    out.push_str(", ");
                }
                match r.element().map_err(|_| bad())? {
                    Some(elem) => write_json(unfrozen(e), elem, out)?,
                    None => out.push_str("null"),
                }
            }
            r.finish().map_err(|_| bad())?;
            out.push(']');
        }
        T::Map(k, val) => {
            out.push('{');
            for (i, (kb, vb)) in split_map(v).ok_or_else(bad)?.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                // JSON keys are strings: a key whose JSON form is not one becomes one.
                let mut key = String::new();
                write_json(unfrozen(k), kb, &mut key)?;
                if key.starts_with('"') {
                    out.push_str(&key);
                } else {
                    quoted(out, &key);
                }
                out.push_str(": ");
                write_json(unfrozen(val), vb, out)?;
            }
            out.push('}');
        }
        T::Tuple(types) => {
            let parts = split_tuple(v).ok_or_else(bad)?;
            out.push('[');
            for (i, t) in types.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                // A tuple value may be shorter than its type: the missing parts are null.
                match parts.get(i).copied().flatten() {
                    Some(p) => write_json(unfrozen(t), p, out)?,
                    None => out.push_str("null"),
                }
            }
            out.push(']');
        }
        T::Udt(u) => {
            // `UserType.toJSONString`: every field of the type, a name that is not all lower
            // case in (JSON-escaped) double quotes.
            let parts = split_tuple(v).ok_or_else(bad)?;
            out.push('{');
            for (i, (name, t)) in u.fields().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if *name == name.to_lowercase() {
                    quoted(out, name);
                } else {
                    quoted(out, &format!("\"{name}\""));
                }
                out.push_str(": ");
                match parts.get(i).copied().flatten() {
                    Some(p) => write_json(unfrozen(t), p, out)?,
                    None => out.push_str("null"),
                }
            }
            out.push('}');
        }
        _ => return Err(bad()),
    }
    Ok(())
}
