//! One INSERT / UPDATE / DELETE from the top: planned by kind, then applied — in a Paxos
//! round when conditional. Also PREPARE's check of a statement's shape
//! ([`check_shape`]).

use super::apply::{apply_all, run_conditional};
use super::assignment::{assignment_column, is_value_error};
use super::delete::delete;
use super::insert::{insert_mutation, InsertPlan};
use super::keys::table_schema;
use super::planned::Planned;
use super::update::update;
use crate::ast::{Conditions, Insert, InsertValues, RelationTarget, Statement};
use crate::error::{Error, Result};
use crate::exec::binds::{Binds, Placeholders};
use crate::exec::consistency;
use crate::exec::lwt::CasRequest;
use crate::exec::plan_cache::PlanCache;
use crate::exec::result::Outcome;
use crate::exec::session::{QueryParams, Session};
use crate::exec::Executor;
use crate::values::TermContext;
use cairn_engine::schema::{ColumnKind, TableSchema};
use cairn_engine::Wait;
use std::sync::Arc;

/// Plans one INSERT / UPDATE / DELETE.
pub(super) fn plan(
    ex: &Executor,
    session: &Session,
    stmt: &Statement,
    ctx: &dyn TermContext,
    default_ts: Option<i64>,
    cache: Option<&PlanCache<InsertPlan>>,
) -> Result<Planned> {
    match stmt {
        Statement::Insert(i) => insert_mutation(ex, session, i, ctx, default_ts, cache),
        Statement::Update(u) => update(ex, session, u, ctx, default_ts),
        Statement::Delete(d) => delete(ex, session, d, ctx, default_ts),
        _ => Err(Error::Invalid(
            "Only INSERT, UPDATE and DELETE statements are allowed in a BATCH".into(),
        )),
    }
}

/// Checks a statement's shape as Cassandra does when it prepares one (at PREPARE, and for
/// every statement of a batch before any runs): an UPDATE or DELETE is planned with every
/// marker a placeholder (see [`crate::values::placeholder`]) and the plan dropped (its
/// restrictions and operations); an INSERT's shape is its column list ([`InsertPlan::new`]).
pub fn check_shape(ex: &Executor, session: &Session, stmt: &Statement) -> Result<()> {
    match stmt {
        Statement::Update(_) | Statement::Delete(_) => {
            match plan(ex, session, stmt, &Placeholders::new(), None, None) {
                Err(e) if is_value_error(&e) => Ok(()),
                other => other.map(drop),
            }
        }
        Statement::Insert(Insert {
            table,
            values: InsertValues::Columns { columns, values },
            ..
        }) => InsertPlan::new(&*table_schema(ex, session, table)?, columns, values.len()).map(drop),
        _ => Ok(()),
    }
}

/// The refusals Cassandra makes when it validates a prepared statement
/// (`ModificationStatement.validate`): a custom timestamp on a counter or conditional update,
/// a custom TTL on a counter update. A batch prepares every statement before it validates
/// any, so a later statement's WHERE clause is refused before an earlier one's USING.
pub fn is_validation_error(e: &Error) -> bool {
    matches!(e, Error::Invalid(m) if m == "Cannot provide custom timestamp for counter updates"
        || m == "Cannot provide custom TTL for counter updates"
        || m == "Cannot provide custom timestamp for conditional updates")
}

/// The table a modification statement writes to.
pub(super) fn target_table(stmt: &Statement) -> Option<&crate::ast::QualifiedName> {
    match stmt {
        Statement::Insert(i) => Some(&i.table),
        Statement::Update(u) => Some(&u.table),
        Statement::Delete(d) => Some(&d.table),
        _ => None,
    }
}

/// Runs one INSERT / UPDATE / DELETE; what it reads and writes waits as `wait` says.
pub fn modify(
    ex: &Executor,
    session: &Session,
    stmt: &Statement,
    params: &QueryParams,
    wait: Wait,
) -> Result<Outcome> {
    run_one(ex, session, stmt, params, None, wait)
}

/// Runs one INSERT; `cache` is the prepared statement's plan cache, if it is one.
pub fn insert(
    ex: &Executor,
    session: &Session,
    i: &Insert,
    params: &QueryParams,
    cache: Option<&PlanCache<InsertPlan>>,
    wait: Wait,
) -> Result<Outcome> {
    if i.if_not_exists {
        return modify(ex, session, &Statement::Insert(i.clone()), params, wait);
    }
    let ctx = Binds::new(params);
    let planned = insert_mutation(ex, session, i, &ctx, params.timestamp, cache)?;
    if let Some(e) = planned.deferred {
        return Err(e);
    }
    let cl = params.levels.consistency;
    consistency::for_write(cl)?;
    ex.proxy().mutate_or_defer(
        planned.mutations,
        cl,
        wait,
        params.acks.as_deref(),
        params.trace.as_ref(),
    )?;
    Ok(Outcome::Void)
}

/// Plans and applies one statement; a conditional one goes through [`lwt`].
pub(super) fn run_one(
    ex: &Executor,
    session: &Session,
    stmt: &Statement,
    params: &QueryParams,
    cache: Option<&PlanCache<InsertPlan>>,
    wait: Wait,
) -> Result<Outcome> {
    let ctx = Binds::new(params);
    let Some(name) = target_table(stmt) else {
        return Err(Error::Invalid("not a modification statement".into()));
    };
    // A conditional write takes the node's clock, never the client's default timestamp
    // (Cassandra gives it the Paxos ballot's time).
    let default_ts = if is_conditional(stmt) {
        None
    } else {
        params.timestamp
    };
    let planned = plan(ex, session, stmt, &ctx, default_ts, cache)?;
    let schema = table_schema(ex, session, name)?;
    let levels = params.levels;
    if planned.conditions.is_empty() {
        if crate::exec::create_table::has_counters(&schema) {
            consistency::for_counter_write(levels.consistency, &schema.name)?;
        } else {
            consistency::for_write(levels.consistency)?;
        }
        apply_all(
            ex,
            vec![(schema, planned)],
            levels,
            wait,
            params.acks.as_deref(),
            params.trace.as_ref(),
        )?;
        return Ok(Outcome::Void);
    }
    let key = planned
        .mutations
        .first()
        .map(|m| m.key.clone())
        .ok_or_else(|| Error::Invalid("A conditional statement must name one row".into()))?;
    let mut req = CasRequest::new(Arc::clone(&schema), key, false);
    for (target, condition) in planned.conditions.clone() {
        req.add_condition(target, condition)?;
    }
    if planned.updates_rows {
        req.writes_rows();
    }
    if names_static_columns(&schema, stmt) {
        req.writes_static_row();
    }
    let planned = [(Arc::clone(&schema), planned)];
    let trace = params.trace.as_ref();
    let answer = run_conditional(ex, &req, &planned, levels, wait, trace)?;
    Ok(Outcome::Rows(answer))
}

/// Whether a statement writes static columns as Cassandra counts it for a conditional
/// request (`appliesToStaticColumns` of its operations): by the columns it names, whatever
/// their values (an unset value counts); INSERT JSON names every column.
pub(super) fn names_static_columns(schema: &TableSchema, stmt: &Statement) -> bool {
    let is_static = |n: &str| {
        schema
            .column(n)
            .is_some_and(|c| c.kind == ColumnKind::Static)
    };
    match stmt {
        Statement::Insert(i) => match &i.values {
            InsertValues::Columns { columns, .. } => columns.iter().any(|c| is_static(c)),
            InsertValues::Json { .. } => schema.columns_of(ColumnKind::Static).next().is_some(),
        },
        Statement::Update(u) => u
            .assignments
            .iter()
            .any(|a| is_static(assignment_column(a))),
        Statement::Delete(d) => d.targets.iter().any(|t| match t {
            RelationTarget::Column(n)
            | RelationTarget::Element(n, _)
            | RelationTarget::Field(n, _) => is_static(n),
            _ => false,
        }),
        _ => false,
    }
}

pub(super) fn is_conditional(s: &Statement) -> bool {
    match s {
        Statement::Insert(i) => i.if_not_exists,
        Statement::Update(u) => !matches!(u.conditions, Conditions::None),
        Statement::Delete(d) => !matches!(d.conditions, Conditions::None),
        _ => false,
    }
}
