//! Term-level native functions (Cassandra's `system` keyspace functions that may appear in
//! a value position: `INSERT … VALUES (now())`, `WHERE t > maxTimeuuid('2024-01-01')`).
//!
//! | function | signatures |
//! | --- | --- |
//! | `now()`, `currenttimeuuid()` | `() -> timeuuid` (a version-1 UUID at the context's time) |
//! | `uuid()` | `() -> uuid` (random, version 4) |
//! | `currenttimestamp()`, `currentdate()`, `currenttime()` | `() -> timestamp / date / time` |
//! | `mintimeuuid`, `maxtimeuuid` | `(timestamp) -> timeuuid` |
//! | `totimestamp` | `(timeuuid)`, `(date) -> timestamp` |
//! | `todate` | `(timeuuid)`, `(timestamp) -> date` |
//! | `tounixtimestamp` | `(timeuuid)`, `(timestamp)`, `(date) -> bigint` |
//! | `dateof`, `unixtimestampof` | `(timeuuid) -> timestamp / bigint` (deprecated forms) |
//! | `<type>asblob`, `blobas<type>` | for every native type but `blob` (`varchar` included) |
//! | `tojson`, `to_json` | `(any) -> text`: the argument's JSON form (see [`super::json`]) |
//! | `fromjson`, `from_json` | `(text) -> <receiver's type>`: evaluated in [`super::term`], which knows the receiver |
//! | `abs`, `exp`, `log`, `log10`, `round` | `(n) -> n` for each numeric type ([`super::math`]) |
//! | `cast_as_<type>` | `(t) -> <type>` for each type `t` Cassandra's `CastFcts` casts from ([`super::aggregate::cast`]); what `CAST(term AS type)` in a term calls |
//! | `map_keys`, `map_values`, `collection_count`, `collection_min`/`max`/`sum`/`avg` | typed by the collection ([`super::collection_fns`]) |
//! | `mask_null`, `mask_default`, `mask_replace`, `mask_inner`, `mask_outer`, `mask_hash` | typed by the first argument; nulls are arguments too ([`super::masking`], evaluated by [`super::term::call`]) |
//!
//! Cassandra 5.0's snake_case names of the older functions are the same functions:
//! `current_timeuuid`, `current_timestamp`, `current_date`, `current_time`, `min_timeuuid`,
//! `max_timeuuid`, `to_timestamp`, `to_date`, `to_unix_timestamp`, `<type>_as_blob`,
//! `blob_as_<type>` (results are labelled with the name as called).
//!
//! This is the catalogue: names, [`signatures`] and what each function does to evaluated
//! arguments ([`apply`]). Which overload a call picks is [`super::fit::resolve`] (it needs
//! the arguments' fit); evaluating a call's argument terms is [`super::term::call`]. A
//! null argument gives a null result. Names arrive lowercased; a keyspace other than
//! `system` is an unknown function.

use super::aggregate;
use super::collection_fns;
use super::error::{ValueError, ValueResult};
use super::json;
use super::math;
use super::temporal::{self, GREGORIAN_OFFSET, MILLIS_PER_DAY};
use super::value::TermContext;
use crate::ast::{FunctionCall, Term};
use bytes::Bytes;
use cairn_engine::model::types::CqlType;
use std::borrow::Cow;

/// One signature: parameter types and return type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    pub args: Vec<CqlType>,
    pub ret: CqlType,
}

impl Signature {
    pub(crate) fn new(args: &[CqlType], ret: CqlType) -> Self {
        Signature {
            args: args.to_vec(),
            ret,
        }
    }
}

/// The native type with a blob conversion named `name` in the function names
/// (`intasblob`, `blobasvarchar`): every native type but `blob` itself.
fn blob_conversion_type(name: &str) -> Option<CqlType> {
    CqlType::native(name).filter(|t| *t != CqlType::Blob)
}

/// The name of the older function a Cassandra 5.0 snake_case name stands for
/// (`to_timestamp` for `totimestamp`, `int_as_blob` for `intasblob`); other names as they are.
fn legacy_name(name: &str) -> Cow<'_, str> {
    Cow::Borrowed(match name {
        "current_timeuuid" => "currenttimeuuid",
        "current_timestamp" => "currenttimestamp",
        "current_date" => "currentdate",
        "current_time" => "currenttime",
        "min_timeuuid" => "mintimeuuid",
        "max_timeuuid" => "maxtimeuuid",
        "to_timestamp" => "totimestamp",
        "to_date" => "todate",
        "to_unix_timestamp" => "tounixtimestamp",
        other => {
            if let Some(t) = other.strip_suffix("_as_blob") {
                return Cow::Owned(format!("{t}asblob"));
            }
            if let Some(t) = other.strip_prefix("blob_as_") {
                return Cow::Owned(format!("blobas{t}"));
            }
            other
        }
    })
}

/// The signatures of a (lowercased, unqualified) function name; `None` if unknown.
pub fn signatures(name: &str) -> Option<Vec<Signature>> {
    use CqlType as T;
    let s = Signature::new;
    if math::is_math(name) {
        return Some(
            math::signature_types()
                .into_iter()
                .map(|t| s(std::slice::from_ref(&t), t.clone()))
                .collect(),
        );
    }
    if let Some(to) = name.strip_prefix("cast_as_") {
        // Named by the type's own name (`cast_as_text`, never `cast_as_varchar`).
        let to = CqlType::natives().find(|t| t.static_name() == to)?.clone();
        let inputs = aggregate::cast_inputs(&to)?;
        return Some(inputs.into_iter().map(|t| s(&[t], to.clone())).collect());
    }
    Some(match legacy_name(name).as_ref() {
        "now" | "currenttimeuuid" => vec![s(&[], T::Timeuuid)],
        "uuid" => vec![s(&[], T::Uuid)],
        "currenttimestamp" => vec![s(&[], T::Timestamp)],
        "currentdate" => vec![s(&[], T::Date)],
        "currenttime" => vec![s(&[], T::Time)],
        "mintimeuuid" | "maxtimeuuid" => vec![s(&[T::Timestamp], T::Timeuuid)],
        "dateof" => vec![s(&[T::Timeuuid], T::Timestamp)],
        "unixtimestampof" => vec![s(&[T::Timeuuid], T::Bigint)],
        // Overloads in the order Cassandra 5.0 lists them in its errors.
        "totimestamp" => vec![s(&[T::Date], T::Timestamp), s(&[T::Timeuuid], T::Timestamp)],
        "todate" => vec![s(&[T::Timestamp], T::Date), s(&[T::Timeuuid], T::Date)],
        "tounixtimestamp" => vec![
            s(&[T::Timestamp], T::Bigint),
            s(&[T::Date], T::Bigint),
            s(&[T::Timeuuid], T::Bigint),
        ],
        other => {
            if let Some(t) = other.strip_suffix("asblob") {
                let ty = blob_conversion_type(t)?;
                vec![s(&[ty], T::Blob)]
            } else if let Some(t) = other.strip_prefix("blobas") {
                let ty = blob_conversion_type(t)?;
                vec![s(&[T::Blob], ty)]
            } else {
                return None;
            }
        }
    })
}

/// The function's name if it is a system function (`None` for another keyspace).
pub(crate) fn system_name(call: &FunctionCall<Term>) -> Option<&str> {
    match call.name.keyspace.as_deref() {
        None | Some("system") => Some(call.name.name.as_str()),
        Some(_) => None,
    }
}

/// The name as written (`ks.f` or `f`), for `Unknown function` and term texts.
pub fn display_name(call: &FunctionCall<Term>) -> String {
    match &call.name.keyspace {
        Some(ks) => format!("{ks}.{}", call.name.name),
        None => call.name.name.clone(),
    }
}

/// `system.<name>`, as Cassandra names resolved native functions.
pub fn qualified_name(call: &FunctionCall<Term>) -> String {
    format!("system.{}", call.name.name)
}

pub(crate) fn describe(name: &str, sig: &Signature) -> String {
    let args: Vec<String> = sig.args.iter().map(CqlType::name).collect();
    format!(
        "system.{name} : ({}) -> {}",
        args.join(", "),
        sig.ret.name()
    )
}

/// Whether a call is `fromJson(…)` / `from_json(…)`, which takes its return type from the
/// receiver (see [`super::term::term_to_bytes`]).
pub fn is_from_json(call: &FunctionCall<Term>) -> bool {
    matches!(system_name(call), Some("fromjson" | "from_json"))
}

fn i64_arg(v: &[u8]) -> Option<i64> {
    Some(i64::from_be_bytes(v.try_into().ok()?))
}

fn uuid_arg(v: &[u8]) -> Option<[u8; 16]> {
    v.try_into().ok()
}

fn date_days(v: &[u8]) -> Option<i64> {
    let raw: [u8; 4] = v.try_into().ok()?;
    Some(i64::from(u32::from_be_bytes(raw)) - (1i64 << 31))
}

fn date_bytes(millis: i64) -> Bytes {
    let days = millis.div_euclid(MILLIS_PER_DAY);
    let raw = (days + (1i64 << 31)).clamp(0, i64::from(u32::MAX)) as u32;
    Bytes::copy_from_slice(&raw.to_be_bytes())
}

/// A version-1 UUID for `micros` with random sub-microsecond ticks, clock sequence and node.
pub fn timeuuid_at(micros: i64, ctx: &dyn TermContext) -> [u8; 16] {
    let r = ctx.random_u64();
    let ticks = micros.saturating_mul(10).saturating_add(GREGORIAN_OFFSET) + (r % 10) as i64;
    let r2 = ctx.random_u64();
    // Variant bits `10` in the clock sequence's top byte.
    let csn = (r2 & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000;
    temporal::make_v1(ticks, csn)
}

/// Runs a resolved function on evaluated arguments (`None` = null result).
pub fn apply(
    name: &str,
    sig: &Signature,
    args: &[Bytes],
    ctx: &dyn TermContext,
) -> ValueResult<Option<Bytes>> {
    use CqlType as T;
    let now_micros = ctx.now_micros();
    let now_ms = now_micros.div_euclid(1000);
    let first = args.first().map(|b| &b[..]).unwrap_or_default();
    let arg_ty = sig.args.first();
    // Empty values (zero bytes) of the time types read as null.
    let time_input = || -> Option<i64> {
        match arg_ty? {
            T::Timeuuid => Some(temporal::v1_unix_millis(&uuid_arg(first)?)),
            T::Timestamp => i64_arg(first),
            T::Date => date_days(first).map(|d| d * MILLIS_PER_DAY),
            _ => None,
        }
    };
    if math::is_math(name) {
        return math::apply(name, arg_ty.unwrap_or(&T::Int), first);
    }
    if collection_fns::is_collection_fn(name) {
        return collection_fns::apply(name, sig, first);
    }
    if name.starts_with("cast_as_") {
        return aggregate::cast(first, arg_ty.unwrap_or(&sig.ret), &sig.ret).map(Some);
    }
    let called = name;
    let name = legacy_name(called);
    let name = name.as_ref();
    Ok(Some(match name {
        "now" | "currenttimeuuid" => Bytes::copy_from_slice(&timeuuid_at(now_micros, ctx)),
        "uuid" => {
            let mut u = [0u8; 16];
            u[..8].copy_from_slice(&ctx.random_u64().to_be_bytes());
            u[8..].copy_from_slice(&ctx.random_u64().to_be_bytes());
            u[6] = (u[6] & 0x0F) | 0x40;
            u[8] = (u[8] & 0x3F) | 0x80;
            Bytes::copy_from_slice(&u)
        }
        "currenttimestamp" => Bytes::copy_from_slice(&now_ms.to_be_bytes()),
        "currentdate" => date_bytes(now_ms),
        "currenttime" => {
            let nanos = now_micros.rem_euclid(MILLIS_PER_DAY * 1000) * 1000;
            Bytes::copy_from_slice(&nanos.to_be_bytes())
        }
        "mintimeuuid" | "maxtimeuuid" => {
            let Some(ms) = i64_arg(first) else {
                return Ok(None);
            };
            let u = if name == "mintimeuuid" {
                temporal::min_timeuuid(ms)
            } else {
                temporal::max_timeuuid(ms)
            };
            Bytes::copy_from_slice(&u)
        }
        "dateof" | "totimestamp" => match time_input() {
            Some(ms) => Bytes::copy_from_slice(&ms.to_be_bytes()),
            None => return Ok(None),
        },
        "unixtimestampof" | "tounixtimestamp" => match time_input() {
            Some(ms) => Bytes::copy_from_slice(&ms.to_be_bytes()),
            None => return Ok(None),
        },
        "todate" => match time_input() {
            Some(ms) => date_bytes(ms),
            None => return Ok(None),
        },
        "tojson" | "to_json" => {
            let ty = arg_ty.cloned().unwrap_or(T::Blob);
            Bytes::from(json::to_json_function(&ty, Some(first))?)
        }
        _ if name.ends_with("asblob") => args.first().cloned().unwrap_or_default(),
        _ if name.starts_with("blobas") => {
            let bytes = args.first().cloned().unwrap_or_default();
            if sig.ret.validate(&bytes).is_err() {
                return Err(ValueError::invalid(format!(
                    "In call to function system.{called}, value 0x{} is not a valid binary representation for type {}",
                    bytes.iter().map(|b| format!("{b:02x}")).collect::<String>(),
                    sig.ret.name()
                )));
            }
            bytes
        }
        _ => {
            return Err(ValueError::invalid(format!(
                "Unknown function {name} called"
            )))
        }
    }))
}
