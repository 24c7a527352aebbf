//! `USING TIMESTAMP` and `USING TTL`, bound and checked as Cassandra does (a conditional
//! write's bad TTL reported only when the write is made).

use crate::ast::Using;
use crate::error::{Error, Result};
use crate::exec::catalog::now_micros;
use crate::values::{term_to_bytes, TermContext, TermValue};
use cairn_engine::model::types::CqlType;
use cairn_engine::schema::TableSchema;

/// `USING TIMESTAMP t`: the value, `None` when the marker is unset (the request's timestamp
/// then applies, as Cassandra's `Attributes.getTimestamp`).
pub(super) fn timestamp_of(t: &crate::ast::Term, ctx: &dyn TermContext) -> Result<Option<i64>> {
    match term_to_bytes(t, &CqlType::Bigint, "[timestamp]", ctx)? {
        TermValue::Value(b) => {
            let ts =
                i64::from_be_bytes(b.as_ref().try_into().map_err(|_| {
                    Error::Invalid(format!("Invalid timestamp value: {}", b.len()))
                })?);
            if ts == i64::MIN {
                // Reserved internally for "no timestamp".
                return Err(Error::Invalid(format!(
                    "Out of bound timestamp, must be in [{}, {}]",
                    i64::MIN + 1,
                    i64::MAX
                )));
            }
            Ok(Some(ts))
        }
        TermValue::Unset => Ok(None),
        TermValue::Null => Err(Error::Invalid("Invalid null value of timestamp".into())),
    }
}

/// (timestamp, ttl seconds) of a statement. A null TTL means no TTL; an unset one means the
/// table's `default_time_to_live` (Cassandra's `Attributes.getTimeToLive`).
pub(super) fn using(
    u: &Using,
    schema: &TableSchema,
    ctx: &dyn TermContext,
    default_ts: Option<i64>,
) -> Result<(i64, u32)> {
    let ts = match &u.timestamp {
        Some(t) => timestamp_of(t, ctx)?,
        None => None,
    }
    .or(default_ts)
    .unwrap_or_else(now_micros);
    let ttl = match &u.ttl {
        Some(t) => match term_to_bytes(t, &CqlType::Int, "[ttl]", ctx)? {
            TermValue::Value(b) if b.is_empty() => 0,
            TermValue::Value(b) => {
                let v = i32::from_be_bytes(
                    b.as_ref()
                        .try_into()
                        .map_err(|_| Error::Invalid("Invalid TTL value".into()))?,
                );
                if v < 0 {
                    return Err(Error::Invalid(format!(
                        "A TTL must be greater or equal to 0, but was {v}"
                    )));
                }
                if v > 630_720_000 {
                    return Err(Error::Invalid(format!(
                        "ttl is too large. requested ({v}) maximum (630720000)"
                    )));
                }
                v as u32
            }
            TermValue::Null => 0,
            TermValue::Unset => schema.options.default_time_to_live,
        },
        None => schema.options.default_time_to_live,
    };
    Ok((ts, ttl))
}

/// [`using`] for a statement that may be conditional: a conditional statement's TTL error is
/// returned as deferred (Cassandra reports it only when the condition holds and the write is
/// made); its TTL is then 0 for the planning.
pub(super) fn using_deferring(
    u: &Using,
    schema: &TableSchema,
    ctx: &dyn TermContext,
    default_ts: Option<i64>,
    conditional: bool,
) -> Result<(i64, u32, Option<Error>)> {
    if !conditional {
        let (ts, ttl) = using(u, schema, ctx, default_ts)?;
        return Ok((ts, ttl, None));
    }
    let without_ttl = Using {
        ttl: None,
        timestamp: u.timestamp.clone(),
    };
    let (ts, _) = using(&without_ttl, schema, ctx, default_ts)?;
    match using(u, schema, ctx, default_ts) {
        Ok((_, ttl)) => Ok((ts, ttl, None)),
        Err(e) => Ok((ts, 0, Some(e))),
    }
}

/// Cassandra's refusal of a conditional statement on a counter table (made when the
/// statement is prepared).
pub(super) fn check_counter_conditions(
    schema: &TableSchema,
    conditions: &crate::ast::Conditions,
) -> Result<()> {
    if crate::exec::create_table::has_counters(schema)
        && !matches!(conditions, crate::ast::Conditions::None)
    {
        return Err(Error::Invalid(
            "Conditional updates are not supported on counter tables".into(),
        ));
    }
    Ok(())
}

/// Cassandra's `ModificationStatement.validate` for counter tables: no `USING TIMESTAMP`
/// (a counter's shards are ordered by their clocks, not by client time) and no `USING TTL`.
pub(super) fn check_counter_using(schema: &TableSchema, u: &Using) -> Result<()> {
    if !crate::exec::create_table::has_counters(schema) {
        return Ok(());
    }
    if u.timestamp.is_some() {
        return Err(Error::Invalid(
            "Cannot provide custom timestamp for counter updates".into(),
        ));
    }
    if u.ttl.is_some() {
        return Err(Error::Invalid(
            "Cannot provide custom TTL for counter updates".into(),
        ));
    }
    Ok(())
}
