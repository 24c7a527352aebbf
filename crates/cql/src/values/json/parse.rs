//! JSON documents into values: Cassandra's `fromJSONObject` ([`from_json`]) on a document
//! parsed as Jackson parses it ([`parse_json`]), `fromJson()` ([`from_json_function`]) and
//! `INSERT … JSON` ([`insert_json_values`]).

use crate::values::assign::unfrozen;
use crate::values::canonical::{sorted_map, sorted_set};
use crate::values::error::{FunctionFailure, ValueError, ValueResult};
use crate::values::format::java_double_string;
use crate::values::literal::from_string;
use crate::values::value::TermValue;
use bytes::Bytes;
use cairn_engine::model::types::framing::{build_collection, build_map, build_tuple};
use cairn_engine::model::types::CqlType;
use cairn_engine::model::types::{BigDecimal, BigInt};
use serde_json::Value;

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
                    Some(hex) => match crate::values::format::hex_bytes(hex) {
                        Some(b) => return Ok(b),
                        None => format!("cannot parse '{hex}' as hex bytes"),
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
        (T::List(_) | T::Set(_) | T::Map(_, _) | T::Tuple(_) | T::Udt(_), Java::String(s)) => {
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
        (T::Udt(u), Java::Map(entries)) => {
            // `JsonUtils.handleCaseSensitivity`: a key in double quotes keeps its case, any
            // other is lower-cased.
            let key = |k: &str| match k.strip_prefix('"').and_then(|k| k.strip_suffix('"')) {
                Some(exact) if k.len() >= 2 => exact.to_string(),
                _ => k.to_lowercase(),
            };
            let given: Vec<(String, &Value)> = entries.iter().map(|(k, v)| (key(k), v)).collect();
            if let Some((unknown, _)) = given.iter().find(|(k, _)| u.field_position(k).is_none()) {
                return Err(format!(
                    "Unknown field '{unknown}' in value of user defined type {}",
                    u.name
                ));
            }
            let mut out = Vec::with_capacity(u.field_types.len());
            for (name, t) in u.fields() {
                out.push(
                    match given
                        .iter()
                        .find(|(k, _)| k == name)
                        .map(|(_, v)| Java::of(v))
                    {
                        None | Some(Java::Null) => None,
                        Some(elem) => Some(json_value(unfrozen(t), &elem)?),
                    },
                );
            }
            Ok(build_tuple(&out))
        }
        (T::Udt(_), _) => Err(expected("a map", j)),
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
