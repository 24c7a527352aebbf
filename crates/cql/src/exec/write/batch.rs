//! BATCH: its statements planned in order and applied as one write; a conditional batch (one
//! partition) checks every statement's IF clause under the partition's lock first. Batch
//! size thresholds are `super::super::batch_limits`'.

use super::apply::{apply_mutations, complete_all, run_conditional};
use super::keys::table_schema;
use super::planned::Planned;
use super::statement::{
    is_conditional, is_validation_error, names_static_columns, plan, target_table,
};
use super::using::timestamp_of;
use crate::ast::{Batch, BatchStatement, Statement};
use crate::error::{Error, Result};
use crate::exec::binds::Binds;
use crate::exec::catalog::now_micros;
use crate::exec::lwt::{self, CasRequest};
use crate::exec::restrict::{self};
use crate::exec::result::Outcome;
use crate::exec::session::{BatchOptions, Levels, QueryParams, Session};
use crate::exec::Executor;
use cairn_engine::schema::TableSchema;
use cairn_engine::Wait;
use std::sync::Arc;

/// A BATCH statement given as CQL text.
pub fn batch_statement(
    ex: &Executor,
    session: &Session,
    b: &Batch,
    params: &QueryParams,
    wait: Wait,
) -> Result<Outcome> {
    let statements: Vec<(Statement, QueryParams)> = b
        .statements
        .iter()
        .map(|s| {
            let stmt = match s {
                BatchStatement::Insert(i) => Statement::Insert(i.clone()),
                BatchStatement::Update(u) => Statement::Update(u.clone()),
                BatchStatement::Delete(d) => Statement::Delete(d.clone()),
            };
            (stmt, params.clone())
        })
        .collect();
    if b.using.ttl.is_some() {
        return Err(Error::Invalid(
            "Global TTL on the BATCH statement is not supported.".into(),
        ));
    }
    let ts = match &b.using.timestamp {
        Some(t) => {
            if statements.iter().any(|(s, _)| is_conditional(s)) {
                return Err(Error::Invalid(
                    "Cannot provide custom timestamp for conditional BATCH".into(),
                ));
            }
            if b.kind == crate::ast::BatchKind::Counter {
                return Err(Error::Invalid(
                    "Cannot provide custom timestamp for counter BATCH".into(),
                ));
            }
            if statements.iter().any(|(s, _)| has_timestamp(s)) {
                return Err(Error::Invalid(
                    "Timestamp must be set either on BATCH or individual statements".into(),
                ));
            }
            if counter_kinds(ex, session, &statements).0 {
                return Err(Error::Invalid(
                    "Cannot provide custom timestamp for a BATCH containing counters".into(),
                ));
            }
            timestamp_of(t, &Binds::new(params))?.or(params.timestamp)
        }
        None => params.timestamp,
    };
    let options = BatchOptions {
        timestamp: ts,
        levels: params.levels,
        acks: params.acks.as_deref(),
        trace: params.trace.as_ref(),
    };
    batch(ex, session, b.kind, &statements, options, wait)
}

pub(super) fn has_timestamp(s: &Statement) -> bool {
    match s {
        Statement::Insert(i) => i.using.timestamp.is_some(),
        Statement::Update(u) => u.using.timestamp.is_some(),
        Statement::Delete(d) => d.using.timestamp.is_some(),
        _ => false,
    }
}

/// Statements (each with its own bound values) applied as one atomic write; with
/// conditions, as one conditional request on a single partition. What it reads and writes
/// waits as `wait` says.
pub fn batch(
    ex: &Executor,
    session: &Session,
    kind: crate::ast::BatchKind,
    statements: &[(Statement, QueryParams)],
    options: BatchOptions<'_>,
    wait: Wait,
) -> Result<Outcome> {
    let (timestamp, levels) = (options.timestamp, options.levels);
    let (has_counters, has_others) = counter_kinds(ex, session, statements);
    if kind == crate::ast::BatchKind::Counter && has_others {
        return Err(Error::Invalid(
            "Cannot include non-counter statement in a counter batch".into(),
        ));
    }
    if has_counters && has_others {
        return Err(Error::Invalid(
            "Counter and non-counter mutations cannot exist in the same batch".into(),
        ));
    }
    if kind == crate::ast::BatchKind::Logged && has_counters {
        return Err(Error::Invalid(
            "Cannot include a counter statement in a logged batch".into(),
        ));
    }
    if statements.iter().any(|(s, _)| is_conditional(s)) {
        return conditional_batch(ex, session, statements, levels, wait, options.trace);
    }
    let ts = timestamp.unwrap_or_else(now_micros);
    let mut planned = Vec::with_capacity(statements.len());
    plan_each(ex, session, statements, ts, |stmt, p| {
        if let Some(name) = target_table(stmt) {
            planned.push((table_schema(ex, session, name)?, p));
        }
        Ok(())
    })?;
    // A batch without conditions takes any level, the serial ones too (Cassandra's
    // BatchStatement does not validate it for writes).
    let all = complete_all(ex, planned, None, levels.consistency, wait)?;
    let warnings = crate::exec::batch_limits::check(ex, kind, &all)?;
    let cl = levels.consistency;
    apply_mutations(ex, all, has_counters, cl, wait, options.acks, options.trace)?;
    Ok(Outcome::Void.with_warnings(warnings))
}

/// Whether a batch's statements write counter tables, and whether they write others
/// (Cassandra's `hasCounters` / `hasNonCounters`). A table that does not exist counts as
/// neither: planning the statement names it.
fn counter_kinds(
    ex: &Executor,
    session: &Session,
    statements: &[(Statement, QueryParams)],
) -> (bool, bool) {
    let (mut counters, mut others) = (false, false);
    for (stmt, _) in statements {
        let Some(schema) = target_table(stmt).and_then(|n| table_schema(ex, session, n).ok())
        else {
            continue;
        };
        if crate::exec::create_table::has_counters(&schema) {
            counters = true;
        } else {
            others = true;
        }
    }
    (counters, others)
}

/// Plans every statement of a batch, handing each plan to `each`. Cassandra validates the
/// keys of a batch's mutations once every statement is built: a later statement's own
/// refusal (a missing clustering column…) comes before an earlier statement's empty or
/// oversized key (F62; F72 for a conditional batch), so key errors wait until the end.
fn plan_each(
    ex: &Executor,
    session: &Session,
    statements: &[(Statement, QueryParams)],
    ts: i64,
    mut each: impl FnMut(&Statement, Planned) -> Result<()>,
) -> Result<()> {
    // Cassandra prepares every statement, then validates every one, then binds values:
    // a statement's validation error waits for the others to be prepared, a bound key's
    // error for every statement to be validated.
    let (mut validation_error, mut key_error) = (None, None);
    for (stmt, params) in statements {
        let ctx = Binds::new(params);
        match plan(ex, session, stmt, &ctx, Some(ts), None) {
            Ok(p) => each(stmt, p)?,
            Err(e) if is_validation_error(&e) => {
                validation_error.get_or_insert(e);
            }
            Err(e) if restrict::is_key_error(&e) => {
                key_error.get_or_insert(e);
            }
            Err(e) => return Err(e),
        }
    }
    validation_error.or(key_error).map_or(Ok(()), Err)
}

/// A BATCH with conditions: one table, one partition, checked and applied as one request.
pub(super) fn conditional_batch(
    ex: &Executor,
    session: &Session,
    statements: &[(Statement, QueryParams)],
    levels: Levels,
    wait: Wait,
    trace: Option<&cairn_engine::Trace>,
) -> Result<Outcome> {
    let mut schema: Option<Arc<TableSchema>> = None;
    for (stmt, _) in statements {
        let Some(name) = target_table(stmt) else {
            return Err(Error::Invalid(
                "Only INSERT, UPDATE and DELETE statements are allowed in a BATCH".into(),
            ));
        };
        let s = table_schema(ex, session, name)?;
        match &schema {
            Some(prev) if prev.id != s.id => {
                return Err(Error::Invalid(
                    "Batch with conditions cannot span multiple tables".into(),
                ))
            }
            _ => schema = Some(s),
        }
    }
    let Some(schema) = schema else {
        return Ok(Outcome::Void);
    };
    // The node's clock, as for any conditional write (a BATCH timestamp is refused; the
    // client's default timestamp is not used).
    let ts = now_micros();
    let mut planned = Vec::with_capacity(statements.len());
    plan_each(ex, session, statements, ts, |stmt, p| {
        if p.mutations.len() > 1 || p.key_in {
            return Err(Error::Invalid(
                "Batch with conditions cannot span multiple partitions (you cannot use IN on the partition key)".into(),
            ));
        }
        if p.ck_in {
            let what = if matches!(stmt, Statement::Delete(_)) {
                "deletions"
            } else {
                "updates"
            };
            return Err(Error::Invalid(format!(
                "IN on the clustering key columns is not supported with conditional {what}"
            )));
        }
        planned.push(p);
        Ok(())
    })?;
    let Some(key) = planned
        .iter()
        .flat_map(|p| p.mutations.first())
        .map(|m| m.key.clone())
        .next()
    else {
        return Ok(Outcome::Rows(lwt::applied_only(&schema, true)));
    };
    let mut req = CasRequest::new(Arc::clone(&schema), key.clone(), true);
    for ((stmt, _), p) in statements.iter().zip(&planned) {
        for m in &p.mutations {
            if m.key != key {
                return Err(Error::Invalid(
                    "Batch with conditions cannot span multiple partitions".into(),
                ));
            }
        }
        // Cassandra's BatchStatement counts the row writes of every statement.
        if p.updates_rows {
            req.writes_rows();
        }
        // Cassandra's BatchStatement counts the static writes of its conditional
        // statements only (and the row writes of all).
        if !p.conditions.is_empty() && names_static_columns(&schema, stmt) {
            req.writes_static_row();
        }
        for (target, condition) in p.conditions.clone() {
            req.add_condition(target, condition)?;
        }
    }
    let planned: Vec<_> = planned
        .into_iter()
        .map(|p| (Arc::clone(&schema), p))
        .collect();
    let answer = run_conditional(ex, &req, &planned, levels, wait, trace)?;
    Ok(Outcome::Rows(answer))
}
