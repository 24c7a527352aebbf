//! Cassandra's JSON forms of values: `SELECT JSON`, `toJson()`, `INSERT … JSON` and
//! `fromJson()`.
//!
//! - [`to_json`] is Cassandra's `AbstractType.toJSONString`: numbers bare (Java's
//!   `toString`, so `1.0E-5` and `1.50E+3`; NaN and the infinities `null`), booleans bare,
//!   everything else a JSON string (`"0xcafe"`, `"2024-01-02 03:04:05.678Z"`,
//!   `"01:02:03.456000000"`, IPv6 in Java's uncompressed form `"0:0:0:0:0:0:0:1"`,
//!   durations as `"1mo2d"`), lists, sets and tuples as arrays, maps as objects whose keys are
//!   the keys' JSON text made a string when it is not one (`{"1": "one"}`, `{"[1, 2]": 0.5}`).
//!   An empty value of a number type is `""`. [`to_json_function`] is `toJson()`, which turns
//!   an empty number into `null`.
//! - [`from_json`] is `fromJSONObject`, on a document parsed the way Cassandra's Jackson
//!   parses it ([`parse_json`]): integers are Java `Integer`, `Long` or `BigInteger` by size,
//!   other numbers `Double` (so a `decimal` given as a JSON number goes through a double: give
//!   it as a string to keep every digit); each type takes what its Java code takes (`int`
//!   only an `Integer` or a string, `timestamp` a `Long` or a string, `smallint` any number
//!   written out…), collections and tuples take arrays and objects or a string holding one,
//!   and the errors are Cassandra's `MarshalException` texts with Java's class names and
//!   `toString` forms (`Expected an int value, but got a Double: 1.5`).
//! - [`insert_json_values`] is `INSERT … JSON`'s `Json.parseJson`: keys matched to columns
//!   case-insensitively unless quoted (`"\"Name\""`), every column of the table given a value
//!   (null, or unset with `DEFAULT UNSET`, when the document has none), unknown keys refused.
//! - [`json_key`] is the key `SELECT JSON` writes for a result column.
//!
//! Parsing is Jackson's default reading: text after the first complete value is ignored
//! (`'{"k": 1} trailing'` is accepted, as by Cassandra), duplicate keys keep the last value.

use super::bigint::{BigDecimal, BigInt};
use super::codec::{
    build_collection, build_map, build_tuple, split_collection, split_map, split_tuple,
};
use super::error::{FunctionFailure, ValueError, ValueResult};
use super::format::{java_double_string, java_float_string};
use super::literal::{decode_duration, duration_to_string, from_string};
use super::number::{is_integer, signed};
use super::temporal::{self, civil_from_days, format_date_days, format_time, MILLIS_PER_DAY};
use super::term::{sorted_map, sorted_set, unfrozen, TermValue};
use bytes::Bytes;
use cairn_engine::model::types::CqlType;
use serde_json::Value;

/// The `[json]` result column of `SELECT JSON`.
pub const JSON_COLUMN: &str = "[json]";

// ---------------------------------------------------------------------------------------
// Values to JSON

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

/// Java's `InetAddress.getHostAddress`: IPv6 as eight hex groups, nothing compressed.
fn java_host_address(v: &[u8]) -> Option<String> {
    match v.len() {
        4 => Some(std::net::Ipv4Addr::from(<[u8; 4]>::try_from(v).ok()?).to_string()),
        16 => Some(
            v.chunks(2)
                .map(|g| format!("{:x}", u16::from_be_bytes([g[0], g[1]])))
                .collect::<Vec<_>>()
                .join(":"),
        ),
        _ => None,
    }
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
            let (m, d, n) = decode_duration(v).ok_or_else(bad)?;
            quoted(out, &duration_to_string(m, d, n));
        }
        T::List(e) | T::Set(e) => {
            out.push('[');
            for (i, elem) in split_collection(v).ok_or_else(bad)?.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json(unfrozen(e), elem, out)?;
            }
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
        _ => return Err(bad()),
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// JSON to values

/// A JSON value as Jackson hands it to Cassandra: the Java class decides what each type
/// accepts, and appears in error messages.
enum Java<'a> {
    Null,
    Boolean(bool),
    Integer(i32),
    Long(i64),
    /// A `BigInteger`, as written.
    BigInteger(String),
    Double(f64),
    String(&'a str),
    List(&'a [Value]),
    Map(&'a serde_json::Map<String, Value>),
}

impl<'a> Java<'a> {
    fn of(v: &'a Value) -> Java<'a> {
        match v {
            Value::Null => Java::Null,
            Value::Bool(b) => Java::Boolean(*b),
            Value::String(s) => Java::String(s),
            Value::Array(a) => Java::List(a),
            Value::Object(m) => Java::Map(m),
            Value::Number(n) => {
                // With `arbitrary_precision` the number keeps its text.
                let text = n.to_string();
                if text.contains(['.', 'e', 'E']) {
                    Java::Double(text.parse().unwrap_or(f64::NAN))
                } else if let Ok(i) = text.parse::<i32>() {
                    Java::Integer(i)
                } else if let Ok(l) = text.parse::<i64>() {
                    Java::Long(l)
                } else {
                    Java::BigInteger(text)
                }
            }
        }
    }

    /// `getClass().getSimpleName()`.
    fn class(&self) -> &'static str {
        match self {
            Java::Null => "null",
            Java::Boolean(_) => "Boolean",
            Java::Integer(_) => "Integer",
            Java::Long(_) => "Long",
            Java::BigInteger(_) => "BigInteger",
            Java::Double(_) => "Double",
            Java::String(_) => "String",
            Java::List(_) => "ArrayList",
            Java::Map(_) => "LinkedHashMap",
        }
    }

    /// The class's package, for `ClassCastException` texts.
    fn package(&self) -> &'static str {
        match self {
            Java::BigInteger(_) => "java.math",
            Java::List(_) | Java::Map(_) => "java.util",
            _ => "java.lang",
        }
    }

    fn is_number(&self) -> bool {
        matches!(
            self,
            Java::Integer(_) | Java::Long(_) | Java::BigInteger(_) | Java::Double(_)
        )
    }

    /// Java's `toString` (`String.valueOf`).
    fn text(&self) -> String {
        match self {
            Java::Null => "null".into(),
            Java::Boolean(b) => b.to_string(),
            Java::Integer(i) => i.to_string(),
            Java::Long(l) => l.to_string(),
            Java::BigInteger(s) => s.clone(),
            Java::Double(d) => java_double_string(*d),
            Java::String(s) => (*s).to_string(),
            Java::List(items) => format!(
                "[{}]",
                items
                    .iter()
                    .map(|v| Java::of(v).text())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Java::Map(m) => format!(
                "{{{}}}",
                m.iter()
                    .map(|(k, v)| format!("{k}={}", Java::of(v).text()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// Java's `Number.doubleValue()`.
    fn double(&self) -> Option<f64> {
        match self {
            Java::Integer(i) => Some(f64::from(*i)),
            Java::Long(l) => Some(*l as f64),
            Java::BigInteger(s) => s.parse().ok(),
            Java::Double(d) => Some(*d),
            _ => None,
        }
    }
}

/// Parses JSON text as Cassandra's Jackson does: the first complete value, anything after it
/// ignored. The error is Jackson's exception as `toString` shows it (its message in
/// serde_json's words).
pub fn parse_json(text: &str) -> Result<Value, String> {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    match values.next() {
        Some(Ok(v)) => Ok(v),
        Some(Err(e)) => Err(format!(
            "com.fasterxml.jackson.core.JsonParseException: {e}"
        )),
        None => Err(
            "com.fasterxml.jackson.databind.exc.MismatchedInputException: No content to map due to end-of-input"
                .into(),
        ),
    }
}

/// Cassandra's `fromJSONObject` for `ty`: a parsed JSON value to the serialized value
/// (`null` is [`TermValue::Null`]). Errors are the `MarshalException` texts, without the
/// `Error decoding JSON value for <column>: ` the caller adds; `receiver` names the column
/// in the one error Cassandra does not phrase that way (counters cannot be set).
pub fn from_json(ty: &CqlType, json: &Value, receiver: &str) -> ValueResult<TermValue> {
    if *unfrozen(ty) == CqlType::Counter {
        return Err(ValueError::invalid(format!(
            "Cannot set the value of counter column {receiver} (counters can only be incremented/decremented, not set)"
        )));
    }
    match Java::of(json) {
        Java::Null => Ok(TermValue::Null),
        j => json_value(unfrozen(ty), &j)
            .map(|b| TermValue::Value(Bytes::from(b)))
            .map_err(ValueError::Marshal),
    }
}

/// `Expected <what>, but got a <Class>: <value>`.
fn expected(what: &str, j: &Java) -> String {
    format!("Expected {what}, but got a {}: {}", j.class(), j.text())
}

/// A type's `fromString`, with Cassandra's empty-string rule: `""` is the empty value for
/// the types that have one.
fn string_value(ty: &CqlType, s: &str) -> Result<Vec<u8>, String> {
    if s.is_empty() && ty.validate(&[]).is_ok() {
        return Ok(Vec::new());
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    from_string(ty, s, now).map_err(|e| e.to_string())
}

/// A string holding JSON, for a collection or tuple (`JsonUtils.decodeJson`).
fn decoded(s: &str) -> Result<Value, String> {
    let mut values = serde_json::Deserializer::from_str(s).into_iter::<Value>();
    match values.next() {
        Some(Ok(v)) => Ok(v),
        Some(Err(e)) => Err(format!("Error decoding JSON string: {e}")),
        None => Err("Error decoding JSON string: No content to map due to end-of-input".into()),
    }
}

fn json_value(ty: &CqlType, j: &Java) -> Result<Vec<u8>, String> {
    use CqlType as T;
    match (ty, j) {
        (T::Ascii, Java::String(s)) | (T::Text, Java::String(s)) => string_value(ty, s),
        (T::Ascii, _) => Err(expected("an ascii string", j)),
        (T::Text, _) => Err(expected("a UTF-8 string", j)),
        (T::Boolean, Java::String(s)) => string_value(ty, s),
        (T::Boolean, Java::Boolean(b)) => Ok(vec![u8::from(*b)]),
        (T::Boolean, _) => Err(expected("a boolean value", j)),
        (T::Blob, _) => {
            let inner = match j {
                Java::String(s) => match s.strip_prefix("0x") {
                    Some(hex) => match string_value(ty, hex) {
                        Ok(b) => return Ok(b),
                        Err(_) => format!("cannot parse '{hex}' as hex bytes"),
                    },
                    None => format!("String representation of blob is missing 0x prefix: {s}"),
                },
                other => format!(
                    "class {0}.{1} cannot be cast to class java.lang.String ({0}.{1} and java.lang.String are in module java.base of loader 'bootstrap')",
                    other.package(),
                    other.class()
                ),
            };
            Err(format!(
                "Value '{}' is not a valid blob representation: {inner}",
                j.text()
            ))
        }
        (T::Timestamp, Java::Long(l)) => Ok(l.to_be_bytes().to_vec()),
        (T::Timestamp, Java::String(s)) => string_value(ty, s),
        (T::Timestamp, _) => Err(expected(
            "a long or a datestring representation of a timestamp value",
            j,
        )),
        (T::Date | T::Time | T::Uuid | T::Timeuuid | T::Inet | T::Duration, Java::String(s)) => {
            string_value(ty, s)
        }
        (T::Date, _) => Err(expected("a string representation of a date value", j)),
        (T::Time, _) => Err(expected("a string representation of a time value", j)),
        (T::Uuid, _) => Err(expected("a string representation of a uuid", j)),
        (T::Timeuuid, _) => Err(expected("a string representation of a timeuuid", j)),
        (T::Inet, _) => Err(expected("a string representation of an inet value", j)),
        (T::Duration, _) => Err(expected("a string representation of a duration", j)),
        (T::Double | T::Float, Java::String(s)) => string_value(ty, s),
        (T::Double, _) => match j.double() {
            Some(d) => Ok(d.to_be_bytes().to_vec()),
            None => Err(expected("a double value", j)),
        },
        (T::Float, _) => {
            let f = match j {
                Java::Integer(i) => *i as f32,
                Java::Long(l) => *l as f32,
                Java::BigInteger(s) => s.parse().unwrap_or(f32::NAN),
                Java::Double(d) => *d as f32,
                _ => return Err(expected("a float value", j)),
            };
            Ok(f.to_be_bytes().to_vec())
        }
        // `fromString(Objects.toString(parsed))`, whatever the JSON type.
        (T::Decimal, _) => {
            let text = j.text();
            let bad = || format!("Value '{text}' is not a valid representation of a decimal value");
            if text.is_empty() {
                return Ok(Vec::new());
            }
            Ok(BigDecimal::parse(&text).ok_or_else(bad)?.to_bytes())
        }
        // `new BigInteger(parsed.toString())`.
        (T::Varint, _) => {
            let text = j.text();
            BigInt::parse(&text).map(|b| b.to_bytes()).ok_or_else(|| {
                format!("Value '{text}' is not a valid representation of a varint value")
            })
        }
        (T::Int | T::Bigint, Java::String(s)) => string_value(ty, s),
        (T::Int, Java::Integer(i)) => Ok(i.to_be_bytes().to_vec()),
        (T::Int, _) => Err(expected("an int value", j)),
        (T::Bigint, Java::Integer(i)) => Ok(i64::from(*i).to_be_bytes().to_vec()),
        (T::Bigint, Java::Long(l)) => Ok(l.to_be_bytes().to_vec()),
        (T::Bigint, _) => Err(expected("a bigint value", j)),
        // `fromString(String.valueOf(parsed))` for strings and any number.
        (T::Smallint | T::Tinyint, _) if matches!(j, Java::String(_)) || j.is_number() => {
            string_value(ty, &j.text())
        }
        (T::Smallint, _) => Err(expected("a short value", j)),
        (T::Tinyint, _) => Err(expected("a byte value", j)),
        (T::List(_) | T::Set(_) | T::Map(_, _) | T::Tuple(_), Java::String(s)) => {
            let v = decoded(s)?;
            json_value(ty, &Java::of(&v))
        }
        (T::List(e), Java::List(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items.iter() {
                match Java::of(item) {
                    Java::Null => return Err("Invalid null element in list".into()),
                    elem => out.push(Bytes::from(json_value(unfrozen(e), &elem)?)),
                }
            }
            Ok(build_collection(&out))
        }
        (T::List(_), _) => Err(expected("a list", j)),
        (T::Set(e), Java::List(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items.iter() {
                match Java::of(item) {
                    Java::Null => return Err("Invalid null element in set".into()),
                    elem => out.push(Bytes::from(json_value(unfrozen(e), &elem)?)),
                }
            }
            Ok(build_collection(&sorted_set(e, out)))
        }
        (T::Set(_), _) => Err(expected("a list (representing a set)", j)),
        (T::Map(k, v), Java::Map(entries)) => {
            let mut out = Vec::with_capacity(entries.len());
            for (key, value) in entries.iter() {
                // JSON keys are strings; each key type reads its own string form.
                let kb = json_value(unfrozen(k), &Java::String(key))?;
                let vb = match Java::of(value) {
                    Java::Null => return Err("Invalid null value in map".into()),
                    val => json_value(unfrozen(v), &val)?,
                };
                out.push((Bytes::from(kb), Bytes::from(vb)));
            }
            Ok(build_map(&sorted_map(k, out)))
        }
        (T::Map(_, _), _) => Err(expected("a map", j)),
        (T::Tuple(types), Java::List(items)) => {
            if items.len() > types.len() {
                return Err(format!(
                    "Tuple contains extra items (expected {}): {}",
                    types.len(),
                    j.text()
                ));
            }
            if items.len() < types.len() {
                return Err(format!(
                    "Tuple is missing items (expected {}): {}",
                    types.len(),
                    j.text()
                ));
            }
            let mut out = Vec::with_capacity(items.len());
            for (item, t) in items.iter().zip(types) {
                out.push(match Java::of(item) {
                    Java::Null => None,
                    elem => Some(json_value(unfrozen(t), &elem)?),
                });
            }
            Ok(build_tuple(&out))
        }
        (T::Tuple(_), _) => Err(expected("a list representation of a tuple", j)),
        (T::Frozen(inner), _) => json_value(inner, j),
        (T::Counter, _) => Err("counters cannot be set from JSON".into()),
    }
}

/// `fromJson(text)` for a receiver of type `ty`: the text parsed and converted, null for a
/// null argument or a JSON `null`. Failures are Function_failure errors, as Cassandra's
/// `FromJsonFct` reports them. `function` is the name as called (`fromjson`, `from_json`).
pub fn from_json_function(
    ty: &CqlType,
    text: &str,
    function: &str,
    receiver: &str,
) -> ValueResult<TermValue> {
    let failure = |message: String| {
        ValueError::FunctionFailure(FunctionFailure {
            keyspace: "system".into(),
            function: function.to_string(),
            arg_types: vec!["text".into()],
            message,
        })
    };
    let json = parse_json(text).map_err(|e| {
        failure(format!(
            "execution of 'system.{function}[text]' failed: Could not decode JSON string '{text}': {e}"
        ))
    })?;
    match from_json(ty, &json, receiver) {
        Err(ValueError::Marshal(m)) => Err(failure(format!(
            "org.apache.cassandra.serializers.MarshalException: {m}"
        ))),
        other => other,
    }
}

/// `INSERT … JSON '<text>' [DEFAULT NULL | DEFAULT UNSET]`: a value for every column of
/// `columns` (the table's, in the order errors should be found), from the JSON object —
/// null, or unset with `default_unset`, for the columns it does not name. Keys are matched
/// case-insensitively unless written in double quotes (`{"\"Name\"": 1}`). A missing
/// primary key column is the caller's to report.
pub fn insert_json_values(
    columns: &[(String, CqlType)],
    json_text: &str,
    default_unset: bool,
) -> ValueResult<Vec<(String, TermValue)>> {
    let not_a_map = |e: String| {
        ValueError::invalid(format!(
            "Could not decode JSON string as a map: {e}. (String was: {json_text})"
        ))
    };
    let object = match parse_json(json_text).map_err(not_a_map)? {
        Value::Object(m) => m,
        Value::Null => return Err(ValueError::invalid("Got null for INSERT JSON values")),
        other => {
            let token = match other {
                Value::Array(_) => "Array value (token `JsonToken.START_ARRAY`)",
                Value::String(_) => "String value (token `JsonToken.VALUE_STRING`)",
                Value::Bool(true) => "Boolean value (token `JsonToken.VALUE_TRUE`)",
                Value::Bool(false) => "Boolean value (token `JsonToken.VALUE_FALSE`)",
                _ => "Number value (token `JsonToken.VALUE_NUMBER_INT`)",
            };
            return Err(not_a_map(format!(
                "com.fasterxml.jackson.databind.exc.MismatchedInputException: Cannot deserialize value of type `java.util.LinkedHashMap<java.lang.Object,java.lang.Object>` from {token}"
            )));
        }
    };
    let mut entries = case_sensitivity(object);
    let mut out = Vec::with_capacity(columns.len());
    for (name, ty) in columns {
        let value = match entries.iter().position(|(k, _)| k == name) {
            Some(i) => {
                let (_, json) = entries.remove(i);
                from_json(ty, &json, name).map_err(|e| match e {
                    ValueError::Marshal(m) => {
                        ValueError::invalid(format!("Error decoding JSON value for {name}: {m}"))
                    }
                    other => other,
                })?
            }
            None if default_unset => TermValue::Unset,
            None => TermValue::Null,
        };
        out.push((name.clone(), value));
    }
    if let Some((key, _)) = entries.first() {
        return Err(ValueError::invalid(format!(
            "JSON values map contains unrecognized column: {key}"
        )));
    }
    Ok(out)
}

/// Cassandra's `JsonUtils.handleCaseSensitivity` on the document's keys, in order: a key in
/// double quotes loses them and keeps its case, any other key is lowercased; a changed key
/// moves to the end (or replaces the value of an equal key already there).
fn case_sensitivity(object: serde_json::Map<String, Value>) -> Vec<(String, Value)> {
    let mut entries: Vec<(String, Value)> = object.into_iter().collect();
    let keys: Vec<String> = entries.iter().map(|(k, _)| k.clone()).collect();
    for key in keys {
        let new_key = if key.len() >= 2 && key.starts_with('"') && key.ends_with('"') {
            key[1..key.len() - 1].to_string()
        } else {
            let lowered = key.to_lowercase();
            if lowered == key {
                continue;
            }
            lowered
        };
        let Some(i) = entries.iter().position(|(k, _)| *k == key) else {
            continue;
        };
        let (_, value) = entries.remove(i);
        match entries.iter_mut().find(|(k, _)| *k == new_key) {
            Some(slot) => slot.1 = value,
            None => entries.push((new_key, value)),
        }
    }
    entries
}
