//! TEMPORARY: the executor's view of value conversion until `crate::values` lands. Only the
//! simplest literals are understood here.

use crate::ast::{BindMarker, Literal, Term};
use bytes::Bytes;
use cairn_engine::model::types::CqlType;

/// A value bound to a marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoundValue {
    Null,
    Unset,
    Bytes(Bytes),
}

/// A term's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TermValue {
    Null,
    Unset,
    Value(Bytes),
}

/// What terms need from the statement being executed.
pub trait TermContext {
    fn bind(&self, marker: &BindMarker) -> Option<BoundValue>;
    fn now_micros(&self) -> i64;
}

/// Error text for a value.
#[derive(Debug)]
pub struct ValueError(pub String);

impl std::fmt::Display for ValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

pub fn term_to_bytes(
    term: &Term,
    ty: &CqlType,
    receiver: &str,
    ctx: &dyn TermContext,
) -> Result<TermValue, ValueError> {
    let bad = |kind: &str, text: &str| {
        ValueError(format!(
            "Invalid {kind} constant ({text}) for \"{receiver}\" of type {}",
            ty.name()
        ))
    };
    match term {
        Term::Null => Ok(TermValue::Null),
        Term::Bind(m) => match ctx.bind(m) {
            None => Err(ValueError(format!("No value bound for marker {}", m.index))),
            Some(BoundValue::Null) => Ok(TermValue::Null),
            Some(BoundValue::Unset) => Ok(TermValue::Unset),
            Some(BoundValue::Bytes(b)) => {
                ty.validate(&b)
                    .map_err(|e| ValueError(format!("Invalid value for {receiver}: {e}")))?;
                Ok(TermValue::Value(b))
            }
        },
        Term::Literal(lit) => {
            let v: Vec<u8> = match (lit, ty) {
                (Literal::Integer(s), CqlType::Int) => s
                    .parse::<i32>()
                    .map_err(|_| bad("INTEGER", s))?
                    .to_be_bytes()
                    .to_vec(),
                (Literal::Integer(s), CqlType::Bigint | CqlType::Timestamp | CqlType::Counter) => s
                    .parse::<i64>()
                    .map_err(|_| bad("INTEGER", s))?
                    .to_be_bytes()
                    .to_vec(),
                (Literal::Integer(s), CqlType::Smallint) => s
                    .parse::<i16>()
                    .map_err(|_| bad("INTEGER", s))?
                    .to_be_bytes()
                    .to_vec(),
                (Literal::Integer(s), CqlType::Tinyint) => s
                    .parse::<i8>()
                    .map_err(|_| bad("INTEGER", s))?
                    .to_be_bytes()
                    .to_vec(),
                (Literal::Integer(s) | Literal::Float(s), CqlType::Double) => s
                    .parse::<f64>()
                    .map_err(|_| bad("FLOAT", s))?
                    .to_be_bytes()
                    .to_vec(),
                (Literal::Integer(s) | Literal::Float(s), CqlType::Float) => s
                    .parse::<f32>()
                    .map_err(|_| bad("FLOAT", s))?
                    .to_be_bytes()
                    .to_vec(),
                (Literal::String(s), CqlType::Text | CqlType::Ascii) => s.as_bytes().to_vec(),
                (Literal::Boolean(b), CqlType::Boolean) => vec![u8::from(*b)],
                (Literal::Blob(s), CqlType::Blob) => {
                    let hex = s.get(2..).unwrap_or("");
                    (0..hex.len() / 2)
                        .map(|i| {
                            hex.get(i * 2..i * 2 + 2)
                                .and_then(|h| u8::from_str_radix(h, 16).ok())
                                .ok_or_else(|| bad("HEX", s))
                        })
                        .collect::<Result<Vec<u8>, _>>()?
                }
                (Literal::Uuid(s), CqlType::Uuid | CqlType::Timeuuid) => {
                    let hex: String = s.chars().filter(|c| *c != '-').collect();
                    (0..16)
                        .map(|i| {
                            hex.get(i * 2..i * 2 + 2)
                                .and_then(|h| u8::from_str_radix(h, 16).ok())
                                .ok_or_else(|| bad("UUID", s))
                        })
                        .collect::<Result<Vec<u8>, _>>()?
                }
                (l, _) => return Err(bad("literal", &l.text())),
            };
            Ok(TermValue::Value(Bytes::from(v)))
        }
        _ => Err(ValueError(format!(
            "Unsupported term for \"{receiver}\" of type {}",
            ty.name()
        ))),
    }
}
