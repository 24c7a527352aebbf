//! INSERT, UPDATE, DELETE and BATCH: statements into engine mutations.
//!
//! One statement (or a whole BATCH) becomes one `Database::apply` call, so it is one
//! commitlog record: after a crash it is either wholly there or not at all. The write
//! timestamp is `USING TIMESTAMP`, else the request's default timestamp, else the node's
//! clock in microseconds; TTL is `USING TTL`, else the table's `default_time_to_live`.

use super::catalog::{now_micros, now_secs};
use super::lwt::{self, CasRequest, RowCondition, RowTarget};
use super::plan_cache::PlanCache;
use super::restrict::{self, Context, Restrictions, StatementKind};
use super::{Binds, Executor, Outcome, Placeholders, QueryParams, Session};
use crate::ast::{
    Assignment, Batch, BatchStatement, BindMarker, Conditions, Delete, Insert, InsertValues,
    RelationTarget, Statement, Term, Update, Using,
};
use crate::error::{Error, Result};
use crate::values::collections::collection_to_cells;
use crate::values::json;
use crate::values::{term_to_bytes, TermContext, TermValue};
use bytes::Bytes;
use cairn_engine::model::clustering::ClusteringLayout;
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{
    Cell, ClusteringKey, ColumnData, ComplexColumn, DecoratedKey, DeletionTime, LivenessInfo,
    Mutation, Partition, RangeTombstone, Row,
};
use cairn_engine::schema::{ColumnDef, ColumnKind, TableSchema};
use cairn_engine::ReadCommand;
use smallvec::SmallVec;
use std::collections::BTreeSet;
use std::sync::Arc;

/// A statement turned into writes.
pub(super) struct Planned {
    /// The writes (one per partition).
    mutations: Vec<Mutation>,
    /// The IF clause of a conditional statement, each part with the row it is about (a
    /// condition on a static column is about the static row).
    conditions: Vec<(RowTarget, RowCondition)>,
    /// The statement restricts the partition key / a clustering column by an IN (refused in
    /// a conditional statement or BATCH, whatever the values).
    key_in: bool,
    ck_in: bool,
    /// The statement writes clustering rows (Cassandra's `updatesRegularRows`: the table has
    /// no clustering column or the statement names one, whatever it writes): a conditional
    /// check then reads every regular column.
    updates_rows: bool,
    /// List edits that need the list's current elements, made by [`complete`] when the write
    /// is made (after a conditional statement's check, as Cassandra does).
    list_edits: Vec<ListWrite>,
    /// An error Cassandra reports only when the write is made (a conditional statement's bad
    /// TTL): it does not stop the check.
    deferred: Option<Error>,
}

impl Planned {
    fn unconditional(mutations: Vec<Mutation>) -> Self {
        Planned {
            mutations,
            conditions: Vec::new(),
            key_in: false,
            ck_in: false,
            updates_rows: false,
            list_edits: Vec::new(),
            deferred: None,
        }
    }
}

/// A list edit of one row, waiting for the list's current elements.
struct ListWrite {
    /// Index of the mutation (partition) it belongs to.
    mutation: usize,
    /// The row (`None`: the static row).
    ck: Option<ClusteringKey>,
    column: ColumnDef,
    edit: ListEdit,
    ts: i64,
    ttl: u32,
    now: u32,
}

/// Makes a statement's pending list edits (reading the lists), ready to apply.
fn complete(ex: &Executor, schema: &TableSchema, planned: &mut Planned) -> Result<()> {
    if let Some(e) = planned.deferred.take() {
        return Err(e);
    }
    for lw in std::mem::take(&mut planned.list_edits) {
        let Some(m) = planned.mutations.get_mut(lw.mutation) else {
            continue;
        };
        let data = list_edit_cell(ex, schema, &m.key, &lw)?;
        let row = match &lw.ck {
            Some(ck) => m.update.rows.entry(ck.clone()).or_default(),
            None => m.update.static_row.get_or_insert_with(Row::default),
        };
        put_column(row, lw.column.id, data);
        row.columns.sort_by_key(|(id, _)| *id);
    }
    Ok(())
}

/// Completes and applies statements' writes; a conditional request's (`ballot`) all get its
/// one timestamp, deletions just below it, as a Paxos commit does.
fn apply_all(
    ex: &Executor,
    planned: Vec<(Arc<TableSchema>, Planned)>,
    ballot: Option<i64>,
) -> Result<()> {
    let all = complete_all(ex, planned, ballot)?;
    ex.catalog().db().apply(all)?;
    Ok(())
}

/// The mutations of planned statements, completed (and stamped with the ballot), ready to
/// apply.
fn complete_all(
    ex: &Executor,
    planned: Vec<(Arc<TableSchema>, Planned)>,
    ballot: Option<i64>,
) -> Result<Vec<Mutation>> {
    let mut all = Vec::new();
    for (schema, mut p) in planned {
        complete(ex, &schema, &mut p)?;
        all.extend(p.mutations);
    }
    if let Some(ts) = ballot {
        all = merge_by_partition(all);
        for m in &mut all {
            m.update.set_timestamps(ts);
        }
    }
    Ok(all)
}

/// A conditional request's mutations as Cassandra applies them: one update per partition,
/// its statements' writes merged (they share one timestamp) before the ballot's time is set
/// (`CQL3CasRequest.makeUpdates`, then `withUpdatedTimestamps`). Merging a row's deletion
/// with the same row's writes purges them, as Cassandra's row merge does (a deletion wins a
/// timestamp tie), so `INSERT` and `DELETE` of one row in one conditional batch leave no
/// row. Partition and range deletions stay beside the rows, as in Cassandra's update, and
/// end up just below the ballot.
fn merge_by_partition(all: Vec<Mutation>) -> Vec<Mutation> {
    let mut merged: Vec<Mutation> = Vec::with_capacity(all.len());
    for m in all {
        match merged
            .iter_mut()
            .find(|x| x.table == m.table && x.key == m.key)
        {
            Some(x) => x.update.merge(m.update),
            None => merged.push(m),
        }
    }
    for m in &mut merged {
        for row in m.update.rows.values_mut() {
            if let Some(d) = row.deletion {
                row.apply_deletion(d);
                row.deletion = Some(d);
            }
            purge_collection_deletions(row);
        }
        if let Some(row) = m.update.static_row.as_mut() {
            purge_collection_deletions(row);
        }
    }
    merged
}

/// Drops the cells of a collection that the same update's deletion of that collection
/// shadows (`DELETE m` beside `SET m = {…}` in one conditional batch: the deletion wins the
/// timestamp tie, as in Cassandra's merge, before the ballot's time is set).
fn purge_collection_deletions(row: &mut Row) {
    for (_, data) in &mut row.columns {
        if let ColumnData::Complex(cc) = data {
            if let Some(d) = cc.deletion {
                cc.cells.retain(|(_, c)| c.timestamp > d.marked_at);
            }
        }
    }
}

/// Plans one INSERT / UPDATE / DELETE.
fn plan(
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

/// Checks an UPDATE's or DELETE's shape at PREPARE, as Cassandra does when it prepares one
/// (its restrictions and operations): the statement is planned with every marker a
/// placeholder (see [`crate::values::placeholder`]) and the plan dropped. An INSERT's shape is
/// its column list, which [`InsertPlan::new`] checks.
pub fn check_shape(ex: &Executor, session: &Session, stmt: &Statement) -> Result<()> {
    match stmt {
        Statement::Update(_) | Statement::Delete(_) => {
            plan(ex, session, stmt, &Placeholders::new(), None, None).map(drop)
        }
        _ => Ok(()),
    }
}

/// The table a modification statement writes to.
fn target_table(stmt: &Statement) -> Option<&crate::ast::QualifiedName> {
    match stmt {
        Statement::Insert(i) => Some(&i.table),
        Statement::Update(u) => Some(&u.table),
        Statement::Delete(d) => Some(&d.table),
        _ => None,
    }
}

/// Runs one INSERT / UPDATE / DELETE.
pub fn modify(
    ex: &Executor,
    session: &Session,
    stmt: &Statement,
    params: &QueryParams,
) -> Result<Outcome> {
    run_one(ex, session, stmt, params, None)
}

/// Runs one INSERT; `cache` is the prepared statement's plan cache, if it is one.
pub fn insert(
    ex: &Executor,
    session: &Session,
    i: &Insert,
    params: &QueryParams,
    cache: Option<&PlanCache<InsertPlan>>,
) -> Result<Outcome> {
    if i.if_not_exists {
        return modify(ex, session, &Statement::Insert(i.clone()), params);
    }
    let ctx = Binds::new(params);
    let planned = insert_mutation(ex, session, i, &ctx, params.timestamp, cache)?;
    if let Some(e) = planned.deferred {
        return Err(e);
    }
    ex.catalog().db().apply(planned.mutations)?;
    Ok(Outcome::Void)
}

/// Plans and applies one statement; a conditional one goes through [`lwt`].
fn run_one(
    ex: &Executor,
    session: &Session,
    stmt: &Statement,
    params: &QueryParams,
    cache: Option<&PlanCache<InsertPlan>>,
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
    if planned.conditions.is_empty() {
        apply_all(ex, vec![(schema, planned)], None)?;
        return Ok(Outcome::Void);
    }
    let key = planned
        .mutations
        .first()
        .map(|m| m.key.clone())
        .ok_or_else(|| Error::Invalid("A conditional statement must name one row".into()))?;
    let _lock = ex.partition_locks().lock(schema.id, &key)?;
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
    if let Some(refused) = lwt::check(ex, &req)? {
        return Ok(Outcome::Rows(refused));
    }
    apply_all(ex, vec![(Arc::clone(&schema), planned)], Some(now_micros()))?;
    Ok(Outcome::Rows(lwt::applied_only(&schema, true)))
}

/// Whether a statement writes static columns as Cassandra counts it for a conditional
/// request (`appliesToStaticColumns` of its operations): by the columns it names, whatever
/// their values (an unset value counts); INSERT JSON names every column.
fn names_static_columns(schema: &TableSchema, stmt: &Statement) -> bool {
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
            RelationTarget::Column(n) | RelationTarget::Element(n, _) => is_static(n),
            _ => false,
        }),
        _ => false,
    }
}

/// A BATCH statement given as CQL text.
pub fn batch_statement(
    ex: &Executor,
    session: &Session,
    b: &Batch,
    params: &QueryParams,
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
            if statements.iter().any(|(s, _)| has_timestamp(s)) {
                return Err(Error::Invalid(
                    "Timestamp must be set either on BATCH or individual statements".into(),
                ));
            }
            timestamp_of(t, &Binds::new(params))?.or(params.timestamp)
        }
        None => params.timestamp,
    };
    batch(ex, session, b.kind, &statements, ts)
}

fn is_conditional(s: &Statement) -> bool {
    match s {
        Statement::Insert(i) => i.if_not_exists,
        Statement::Update(u) => !matches!(u.conditions, Conditions::None),
        Statement::Delete(d) => !matches!(d.conditions, Conditions::None),
        _ => false,
    }
}

fn has_timestamp(s: &Statement) -> bool {
    match s {
        Statement::Insert(i) => i.using.timestamp.is_some(),
        Statement::Update(u) => u.using.timestamp.is_some(),
        Statement::Delete(d) => d.using.timestamp.is_some(),
        _ => false,
    }
}

/// Statements (each with its own bound values) applied as one atomic write; with
/// conditions, as one conditional request on a single partition.
pub fn batch(
    ex: &Executor,
    session: &Session,
    kind: crate::ast::BatchKind,
    statements: &[(Statement, QueryParams)],
    timestamp: Option<i64>,
) -> Result<Outcome> {
    // Counters are not supported yet, so no statement can belong in a counter batch.
    if kind == crate::ast::BatchKind::Counter && !statements.is_empty() {
        return Err(Error::Invalid(
            "Cannot include non-counter statement in a counter batch".into(),
        ));
    }
    if statements.iter().any(|(s, _)| is_conditional(s)) {
        return conditional_batch(ex, session, statements);
    }
    let ts = timestamp.unwrap_or_else(now_micros);
    let mut planned = Vec::with_capacity(statements.len());
    // Cassandra validates the keys of a batch's mutations once every statement is built: a
    // later statement's own refusal (a missing clustering column…) comes before an earlier
    // statement's empty or oversized key (F62).
    let mut key_error = None;
    for (stmt, params) in statements {
        let ctx = Binds::new(params);
        let p = match plan(ex, session, stmt, &ctx, Some(ts), None) {
            Ok(p) => p,
            Err(e) if restrict::is_key_error(&e) => {
                key_error.get_or_insert(e);
                continue;
            }
            Err(e) => return Err(e),
        };
        let Some(name) = target_table(stmt) else {
            continue;
        };
        planned.push((table_schema(ex, session, name)?, p));
    }
    if let Some(e) = key_error {
        return Err(e);
    }
    let all = complete_all(ex, planned, None)?;
    let warnings = super::batch_limits::check(ex, kind, &all)?;
    ex.catalog().db().apply(all)?;
    Ok(Outcome::Void.with_warnings(warnings))
}

/// A BATCH with conditions: one table, one partition, checked and applied as one request.
fn conditional_batch(
    ex: &Executor,
    session: &Session,
    statements: &[(Statement, QueryParams)],
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
    for (stmt, params) in statements {
        let ctx = Binds::new(params);
        let p = plan(ex, session, stmt, &ctx, Some(ts), None)?;
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
    }
    let Some(key) = planned
        .iter()
        .flat_map(|p| p.mutations.first())
        .map(|m| m.key.clone())
        .next()
    else {
        return Ok(Outcome::Rows(lwt::applied_only(&schema, true)));
    };
    let _lock = ex.partition_locks().lock(schema.id, &key)?;
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
    if let Some(refused) = lwt::check(ex, &req)? {
        return Ok(Outcome::Rows(refused));
    }
    apply_all(
        ex,
        planned
            .into_iter()
            .map(|p| (Arc::clone(&schema), p))
            .collect(),
        Some(ts),
    )?;
    Ok(Outcome::Rows(lwt::applied_only(&schema, true)))
}

fn table_schema(
    ex: &Executor,
    session: &Session,
    name: &crate::ast::QualifiedName,
) -> Result<std::sync::Arc<TableSchema>> {
    let ks = session.resolve(&name.keyspace)?;
    if super::catalog::SYSTEM_KEYSPACES.contains(&ks.as_str()) {
        return Err(Error::Unauthorized(format!(
            "{ks} keyspace is not user-modifiable."
        )));
    }
    Ok(ex.catalog().require_table(&ks, &name.name)?.schema())
}

/// `USING TIMESTAMP t`: the value, `None` when the marker is unset (the request's timestamp
/// then applies, as Cassandra's `Attributes.getTimestamp`).
fn timestamp_of(t: &crate::ast::Term, ctx: &dyn TermContext) -> Result<Option<i64>> {
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
fn using(
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
fn using_deferring(
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

fn cell(ts: i64, ttl: u32, now: u32, v: Bytes) -> Cell {
    if ttl > 0 {
        Cell::expiring(ts, ttl, now, v)
    } else {
        Cell::live(ts, v)
    }
}

/// A column's new data from a term (`None` for unset).
fn column_data(
    col: &ColumnDef,
    term: &crate::ast::Term,
    ctx: &dyn TermContext,
    ts: i64,
    ttl: u32,
    now: u32,
) -> Result<Option<ColumnData>> {
    if is_multi_cell(&col.ty) {
        // Overwriting a collection: delete what was there (just before this write), then
        // write the new elements.
        let value = term_to_bytes(term, &col.ty, &col.name, ctx)?;
        let deletion = DeletionTime {
            marked_at: ts - 1,
            local_deletion_time: now,
        };
        let cells = match value {
            TermValue::Unset => return Ok(None),
            TermValue::Null => Vec::new(),
            TermValue::Value(b) => collection_to_cells(&col.ty, &b, ctx).map_err(invalid)?,
        };
        return Ok(Some(ColumnData::Complex(ComplexColumn {
            deletion: Some(deletion),
            cells: cells
                .into_iter()
                .map(|(p, v)| (p, cell(ts, ttl, now, v)))
                .collect(),
        })));
    }
    if col.ty == CqlType::Counter {
        return Err(Error::Invalid(format!(
            "Cannot set the value of counter column {} (counters can only be incremented/decremented, not set)",
            col.name
        )));
    }
    Ok(match term_to_bytes(term, &col.ty, &col.name, ctx)? {
        TermValue::Unset => None,
        TermValue::Null => Some(ColumnData::Simple(Cell::tombstone(ts, now))),
        TermValue::Value(b) => Some(ColumnData::Simple(cell(ts, ttl, now, b))),
    })
}

/// The IF clause of an UPDATE or DELETE, resolved (`None` when there is none). A
/// conditional statement may not carry its own timestamp.
fn condition_of(
    c: &Conditions,
    using: &Using,
    schema: &TableSchema,
    ctx: &dyn TermContext,
) -> Result<Option<RowCondition>> {
    if !matches!(c, Conditions::None) && using.timestamp.is_some() {
        return Err(Error::Invalid(
            "Cannot provide custom timestamp for conditional updates".into(),
        ));
    }
    Ok(match c {
        Conditions::None => None,
        Conditions::Exists => Some(RowCondition::Exists),
        Conditions::NotExists => Some(RowCondition::NotExists),
        Conditions::Columns(rels) => {
            let conds = lwt::column_conditions(schema, rels, ctx)?;
            if let Some(c) = conds.iter().find(|c| {
                matches!(
                    c.column.kind,
                    ColumnKind::PartitionKey | ColumnKind::Clustering
                )
            }) {
                return Err(Error::Invalid(format!(
                    "PRIMARY KEY column '{}' cannot have IF conditions",
                    c.column.name
                )));
            }
            Some(RowCondition::Columns(conds))
        }
    })
}

/// Where a conditional statement's IF clause points: its one row (or the static row), with
/// Cassandra's refusals of IN; conditions on static columns are about the static row.
fn conditions_for(
    condition: RowCondition,
    r: &Restrictions,
    ckeys: &[ClusteringKey],
    static_only: bool,
    deletion: bool,
) -> Result<Vec<(RowTarget, RowCondition)>> {
    let what = if deletion { "deletions" } else { "updates" };
    // Any IN counts, even one naming a single partition or row (`IN (1, 1)`, `IN ?`).
    if r.key_in {
        return Err(Error::Invalid(format!(
            "IN on the partition key is not supported with conditional {what}"
        )));
    }
    if r.ck_in {
        return Err(Error::Invalid(format!(
            "IN on the clustering key columns is not supported with conditional {what}"
        )));
    }
    let target = match ckeys.first() {
        Some(ck) if !static_only => RowTarget::Row(ck.clone()),
        _ => RowTarget::Static,
    };
    let RowCondition::Columns(conds) = condition else {
        return Ok(vec![(target, condition)]);
    };
    let (statics, regular): (Vec<_>, Vec<_>) = conds
        .into_iter()
        .partition(|c| c.column.kind == ColumnKind::Static);
    let mut out = Vec::with_capacity(2);
    if !regular.is_empty() {
        out.push((target, RowCondition::Columns(regular)));
    }
    if !statics.is_empty() {
        out.push((RowTarget::Static, RowCondition::Columns(statics)));
    }
    Ok(out)
}

fn invalid(e: impl std::fmt::Display) -> Error {
    Error::Invalid(e.to_string())
}

/// Non-frozen collections are stored one cell per element.
fn is_multi_cell(ty: &CqlType) -> bool {
    matches!(ty, CqlType::List(_) | CqlType::Set(_) | CqlType::Map(_, _))
}

/// Adds column data to a row, merging with what the same statement already set.
fn put_column(row: &mut Row, id: u32, data: ColumnData) {
    match row.columns.iter_mut().find(|(c, _)| *c == id) {
        Some((_, existing)) => {
            let old = std::mem::replace(existing, ColumnData::Complex(ComplexColumn::default()));
            *existing = old.merge(data);
        }
        None => row.columns.push((id, data)),
    }
}

/// [`put_column`] into the static row or the clustering row, by the column's kind.
fn put_by_kind(c: &ColumnDef, row: &mut Row, statics: &mut Row, data: ColumnData) {
    let target = if c.kind == ColumnKind::Static {
        statics
    } else {
        row
    };
    put_column(target, c.id, data);
}

/// An assignment resolved against its column.
enum ColumnOp {
    /// Data to write as is.
    Data(ColumnData),
    /// A list edit that needs the list's current elements (read before write).
    List(ListEdit),
}

/// List edits that depend on the list's current contents.
#[derive(Debug, Clone)]
enum ListEdit {
    /// `l[i] = v` (`None`: `DELETE l[i]`).
    Index(i32, Option<Bytes>),
    /// `l = l - [v…]`: removes every element equal to one of the values.
    Remove(Vec<Bytes>),
}

/// Resolves one UPDATE assignment.
fn assignment_op(
    c: &ColumnDef,
    a: &Assignment,
    ctx: &dyn TermContext,
    ts: i64,
    ttl: u32,
    now: u32,
) -> Result<Option<ColumnOp>> {
    let elem_cells = |term: &crate::ast::Term| -> Result<Option<Vec<(Bytes, Bytes)>>> {
        match term_to_bytes(term, &c.ty, &c.name, ctx)? {
            TermValue::Unset => Ok(None),
            TermValue::Null => Ok(Some(Vec::new())),
            TermValue::Value(b) => Ok(Some(collection_to_cells(&c.ty, &b, ctx).map_err(invalid)?)),
        }
    };
    let complex = |cells: Vec<(Bytes, Cell)>| {
        ColumnOp::Data(ColumnData::Complex(ComplexColumn {
            deletion: None,
            cells,
        }))
    };
    Ok(match a {
        Assignment::Set { value, .. } => {
            column_data(c, value, ctx, ts, ttl, now)?.map(ColumnOp::Data)
        }
        Assignment::Add { value, .. } | Assignment::Prepend { value, .. } => {
            if c.ty == CqlType::Counter {
                return Err(Error::Invalid("Counters are not supported yet".into()));
            }
            if matches!(a, Assignment::Prepend { .. })
                && matches!(value, crate::ast::Term::List(_))
                && !matches!(crate::values::term::unfrozen(&c.ty), CqlType::List(_))
            {
                // The list literal meets its receiver first (Cassandra's ArrayLiteral).
                return Err(Error::Invalid(format!(
                    "Unexpected receiver type '{}'; only list and vector are expected",
                    c.ty.name()
                )));
            }
            let v = crate::values::term::term_display(value);
            let shown = if matches!(a, Assignment::Prepend { .. }) {
                // Cassandra prints a prepend with a minus.
                format!("{0} = {v} - {0}", c.name)
            } else {
                format!("{0} = {0} + {v}", c.name)
            };
            if matches!(c.ty, CqlType::Frozen(_)) {
                let what = if matches!(a, Assignment::Prepend { .. }) {
                    "frozen list"
                } else {
                    "frozen collection"
                };
                return Err(Error::Invalid(format!(
                    "Invalid operation ({shown}) for {what} column {}",
                    c.name
                )));
            }
            if matches!(c.ty, CqlType::Tuple(_)) && matches!(a, Assignment::Add { .. }) {
                return Err(Error::Invalid(format!(
                    "Invalid operation ({shown}) for tuple column {}",
                    c.name
                )));
            }
            if !is_multi_cell(&c.ty) {
                let what = if matches!(a, Assignment::Prepend { .. }) {
                    "non list"
                } else {
                    "non counter"
                };
                return Err(Error::Invalid(format!(
                    "Invalid operation ({shown}) for {what} column {}",
                    c.name
                )));
            }
            let Some(cells) = elem_cells(value)? else {
                return Ok(None);
            };
            let cells = if matches!(a, Assignment::Prepend { .. }) {
                if !matches!(c.ty, CqlType::List(_)) {
                    return Err(Error::Invalid(format!(
                        "Invalid operation ({shown}) for non list column {}",
                        c.name
                    )));
                }
                let paths = crate::values::collections::list_prepend_paths(
                    ctx.now_micros(),
                    ctx.random_u64() as u32,
                    cells.len(),
                );
                paths
                    .into_iter()
                    .zip(cells.into_iter().map(|(_, v)| v))
                    .collect()
            } else {
                cells
            };
            Some(complex(
                cells
                    .into_iter()
                    .map(|(p, v)| (p, cell(ts, ttl, now, v)))
                    .collect(),
            ))
        }
        Assignment::Subtract { value, .. } => {
            if c.ty == CqlType::Counter {
                return Err(Error::Invalid("Counters are not supported yet".into()));
            }
            match &c.ty {
                CqlType::Set(_) => {
                    let Some(cells) = elem_cells(value)? else {
                        return Ok(None);
                    };
                    Some(complex(
                        cells
                            .into_iter()
                            .map(|(p, _)| (p, Cell::tombstone(ts, now)))
                            .collect(),
                    ))
                }
                CqlType::Map(k, _) => {
                    // `m = m - {k1, k2}`: a set of keys.
                    let keys_ty = CqlType::Set(k.clone());
                    match term_to_bytes(value, &keys_ty, &c.name, ctx)? {
                        TermValue::Value(b) => {
                            let keys = restrict::decode_collection(&b);
                            let mut cells = Vec::new();
                            for key in keys {
                                let path = crate::values::collections::element_path(&c.ty, &key)
                                    .map_err(invalid)?;
                                cells.push((path, Cell::tombstone(ts, now)));
                            }
                            Some(complex(cells))
                        }
                        _ => None,
                    }
                }
                CqlType::List(_) => match term_to_bytes(value, &c.ty, &c.name, ctx)? {
                    TermValue::Value(b) => Some(ColumnOp::List(ListEdit::Remove(
                        restrict::decode_collection(&b),
                    ))),
                    _ => None,
                },
                CqlType::Frozen(_) => {
                    return Err(Error::Invalid(format!(
                        "Invalid operation ({0} = {0} - {1}) for frozen collection column {0}",
                        c.name,
                        crate::values::term::term_display(value)
                    )))
                }
                _ => {
                    return Err(Error::Invalid(format!(
                        "Invalid operation ({0} = {0} - {1}) for non counter column {0}",
                        c.name,
                        crate::values::term::term_display(value)
                    )))
                }
            }
        }
        Assignment::SetElement { key, value, .. } => match &c.ty {
            CqlType::Map(kt, vt) => {
                let k = match term_to_bytes(key, kt, &c.name, ctx)? {
                    TermValue::Value(b) => b,
                    _ => return Err(Error::Invalid("Invalid null map key".into())),
                };
                let path = crate::values::collections::element_path(&c.ty, &k).map_err(invalid)?;
                let cell = match term_to_bytes(value, vt, &c.name, ctx)? {
                    TermValue::Value(v) => cell(ts, ttl, now, v),
                    TermValue::Null => Cell::tombstone(ts, now),
                    TermValue::Unset => return Ok(None),
                };
                Some(complex(vec![(path, cell)]))
            }
            CqlType::List(et) => {
                let index = match term_to_bytes(key, &CqlType::Int, &c.name, ctx)? {
                    TermValue::Value(b) => i32::from_be_bytes(
                        b.as_ref()
                            .try_into()
                            .map_err(|_| Error::Invalid("Invalid list index".into()))?,
                    ),
                    _ => return Err(Error::Invalid("Invalid null value for list index".into())),
                };
                let value = match term_to_bytes(value, et, &c.name, ctx)? {
                    TermValue::Value(v) => Some(v),
                    TermValue::Null => None,
                    TermValue::Unset => return Ok(None),
                };
                Some(ColumnOp::List(ListEdit::Index(index, value)))
            }
            _ => {
                check_set_element(c, key, value)?;
                None
            }
        },
        Assignment::SetField { .. } => {
            return Err(Error::Invalid(
                "User-defined types are not supported yet".into(),
            ))
        }
    })
}

/// Cassandra's `SetElement.prepare` checks: `c[k] = v` needs a list or a map that is not
/// frozen.
pub(super) fn check_set_element(c: &ColumnDef, key: &Term, value: &Term) -> Result<()> {
    let what = match &c.ty {
        CqlType::List(_) | CqlType::Map(..) => return Ok(()),
        CqlType::Set(_) => "set",
        t if is_frozen_collection(t) => "frozen collection",
        _ => "non collection",
    };
    Err(Error::Invalid(format!(
        "Invalid operation ({}[{}] = {}) for {what} column {}",
        c.name,
        crate::values::term::term_display(key),
        crate::values::term::term_display(value),
        c.name
    )))
}

/// Cassandra's `ElementDeletion.prepare` checks: `DELETE c[k]` needs a collection that is
/// not frozen.
pub(super) fn check_element_deletion(c: &ColumnDef) -> Result<()> {
    let what = match &c.ty {
        CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..) => return Ok(()),
        t if is_frozen_collection(t) => "frozen collection",
        _ => "non collection",
    };
    Err(Error::Invalid(format!(
        "Invalid deletion operation for {what} column {}",
        c.name
    )))
}

fn is_frozen_collection(ty: &CqlType) -> bool {
    matches!(ty, CqlType::Frozen(inner) if matches!(inner.as_ref(), CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..)))
}

/// The cells a list edit writes, computed from the row's current list (read before write,
/// as Cassandra does), with Cassandra's texts for a null list and an index out of bounds.
fn list_edit_cell(
    ex: &Executor,
    schema: &TableSchema,
    key: &DecoratedKey,
    lw: &ListWrite,
) -> Result<ColumnData> {
    let (col, ts, ttl, now) = (&lw.column, lw.ts, lw.ttl, lw.now);
    let table = ex.catalog().require_table(&schema.keyspace, &schema.name)?;
    let mut cmd = ReadCommand::all(now);
    let ck = lw.ck.clone().unwrap_or_else(ClusteringKey::empty);
    cmd.slice =
        cairn_engine::model::Slice::new(vec![cairn_engine::model::ClusteringRange::prefix(&ck.0)]);
    cmd.include_static = col.kind == ColumnKind::Static;
    let current = table.read(key, &cmd)?;
    let row = current.as_ref().and_then(|p| {
        if col.kind == ColumnKind::Static {
            p.static_row.as_ref()
        } else {
            p.rows.first().map(|(_, r)| r)
        }
    });
    let elements: Vec<(Bytes, Bytes)> = row
        .and_then(|r| r.columns.iter().find(|(id, _)| *id == col.id))
        .map(|(_, d)| match d {
            ColumnData::Complex(cc) => cc
                .cells
                .iter()
                .map(|(p, c)| (p.clone(), c.value.clone()))
                .collect(),
            ColumnData::Simple(_) => Vec::new(),
        })
        .unwrap_or_default();
    let cells = match &lw.edit {
        ListEdit::Index(index, value) => {
            if elements.is_empty() {
                return Err(Error::Invalid(
                    if value.is_some() {
                        "Attempted to set an element on a list which is null"
                    } else {
                        "Attempted to delete an element from a list which is null"
                    }
                    .into(),
                ));
            }
            let path = usize::try_from(*index)
                .ok()
                .and_then(|i| elements.get(i))
                .map(|(p, _)| p.clone())
                .ok_or_else(|| {
                    Error::Invalid(format!(
                        "List index {index} out of bound, list has size {}",
                        elements.len()
                    ))
                })?;
            let c = match value {
                Some(v) => cell(ts, ttl, now, v.clone()),
                None => Cell::tombstone(ts, now),
            };
            vec![(path, c)]
        }
        ListEdit::Remove(values) => elements
            .into_iter()
            .filter(|(_, v)| values.contains(v))
            .map(|(p, _)| (p, Cell::tombstone(ts, now)))
            .collect(),
    };
    Ok(ColumnData::Complex(ComplexColumn {
        deletion: None,
        cells,
    }))
}

fn key_value(col: &ColumnDef, term: &crate::ast::Term, ctx: &dyn TermContext) -> Result<Bytes> {
    match term_to_bytes(term, &col.ty, &col.name, ctx)? {
        TermValue::Value(b) => Ok(b),
        TermValue::Null => Err(Error::Invalid(format!(
            "Invalid null value in condition for column {}",
            col.name
        ))),
        TermValue::Unset => Err(Error::Invalid(format!(
            "Invalid unset value for column {}",
            col.name
        ))),
    }
}

/// Where the values of an INSERT go in one table schema: which value gives each key part
/// and each column. Made (and the column list checked) once per schema for a prepared INSERT.
pub struct InsertPlan {
    /// The partition-key parts, in key order.
    partition_key: SmallVec<[Part; 4]>,
    /// The clustering-key parts, in key order.
    clustering_key: SmallVec<[Part; 4]>,
    /// Whether a row is written: the whole clustering key is given (an INSERT of static
    /// columns only may leave it out).
    writes_row: bool,
    /// The table's clustering layout (built once, not per row).
    layout: ClusteringLayout,
    /// Regular columns given, in column-id order (the order a row keeps its cells in).
    regular: SmallVec<[Part; 8]>,
    /// Static columns given, in column-id order.
    statics: SmallVec<[Part; 4]>,
}

/// One column of an INSERT: its index in the schema's columns and in the INSERT's values.
#[derive(Clone, Copy)]
struct Part {
    column: usize,
    value: usize,
}

impl InsertPlan {
    /// Checks an INSERT's column list against `schema` (Cassandra's messages) and plans it
    /// (at PREPARE too, where Cassandra makes the same checks).
    pub(super) fn new(
        schema: &TableSchema,
        columns: &[String],
        values: usize,
    ) -> Result<InsertPlan> {
        if columns.len() != values {
            return Err(Error::Invalid(format!(
                "Unmatched column names/values (got {} names and {} values)",
                columns.len(),
                values
            )));
        }
        let mut given: SmallVec<[Part; 8]> = SmallVec::new();
        for (value, name) in columns.iter().enumerate() {
            let named = |p: &Part| schema.columns[p.column].name == *name;
            if given.iter().any(named) {
                return Err(Error::Invalid(format!(
                    "Multiple definitions found for column {name}"
                )));
            }
            let Some(column) = schema.columns.iter().position(|c| c.name == *name) else {
                return Err(Error::undefined_column(schema, name));
            };
            given.push(Part { column, value });
        }
        let of_kind = |kind: ColumnKind| -> (SmallVec<[Part; 4]>, Vec<&str>) {
            let mut found = SmallVec::new();
            let mut missing = Vec::new();
            for (column, c) in schema.columns.iter().enumerate() {
                if c.kind != kind {
                    continue;
                }
                match given.iter().find(|p| p.column == column) {
                    Some(p) => found.push(*p),
                    None => missing.push(c.name.as_str()),
                }
            }
            (found, missing)
        };
        let (partition_key, missing_pk) = of_kind(ColumnKind::PartitionKey);
        if !missing_pk.is_empty() {
            return Err(Error::Invalid(format!(
                "Some partition key parts are missing: {}",
                missing_pk.join(", ")
            )));
        }
        let (clustering_key, missing_ck) = of_kind(ColumnKind::Clustering);
        let mut regular: SmallVec<[Part; 8]> = given
            .iter()
            .filter(|p| schema.columns[p.column].kind == ColumnKind::Regular)
            .copied()
            .collect();
        // A row needs its whole clustering key, unless the INSERT sets static columns only.
        let static_only = clustering_key.is_empty()
            && regular.is_empty()
            && given
                .iter()
                .any(|p| schema.columns[p.column].kind == ColumnKind::Static);
        if !missing_ck.is_empty() && !static_only {
            return Err(Error::Invalid(format!(
                "Some clustering keys are missing: {}",
                missing_ck.join(", ")
            )));
        }
        let mut statics: SmallVec<[Part; 4]> = given
            .iter()
            .filter(|p| schema.columns[p.column].kind == ColumnKind::Static)
            .copied()
            .collect();
        regular.sort_by_key(|p| schema.columns[p.column].id);
        statics.sort_by_key(|p| schema.columns[p.column].id);
        Ok(InsertPlan {
            partition_key,
            clustering_key,
            writes_row: missing_ck.is_empty(),
            layout: schema.clustering_layout(),
            regular,
            statics,
        })
    }
}

/// An INSERT as one mutation; `cache` keeps a prepared INSERT's plan.
fn insert_mutation(
    ex: &Executor,
    session: &Session,
    i: &Insert,
    ctx: &dyn TermContext,
    default_ts: Option<i64>,
    cache: Option<&PlanCache<InsertPlan>>,
) -> Result<Planned> {
    let schema = table_schema(ex, session, &i.table)?;
    // INSERT JSON gives every column a value (null or unset when the document has none):
    // they are bound to stand-in markers, so the rest is the INSERT … VALUES path.
    let json: JsonInsert;
    // The values' context: the document's stand-in markers for INSERT JSON. USING keeps the
    // statement's own markers (`INSERT … JSON ? USING TTL ?`).
    let (columns, values, values_ctx): (&[String], &[Term], &dyn TermContext) = match &i.values {
        InsertValues::Columns { columns, values } => (columns, values, ctx),
        InsertValues::Json {
            json: text,
            default_unset,
        } => {
            json = JsonInsert::new(&schema, text, *default_unset, ctx)?;
            (&json.columns, &json.markers, &json)
        }
    };
    let make = || InsertPlan::new(&schema, columns, values.len());
    let plan = match cache {
        Some(cache) => cache.get_or_plan(&schema, make)?,
        None => Arc::new(make()?),
    };
    let (ts, ttl, deferred) = using_deferring(&i.using, &schema, ctx, default_ts, i.if_not_exists)?;
    let now = now_secs();
    let key_part = |p: &Part| key_value(&schema.columns[p.column], &values[p.value], values_ctx);
    let key = partition_key(&plan.partition_key, key_part)?;
    let cells = |parts: &[Part]| -> Result<Vec<(u32, ColumnData)>> {
        let mut out = Vec::with_capacity(parts.len());
        for p in parts {
            let c = &schema.columns[p.column];
            if let Some(d) = column_data(c, &values[p.value], values_ctx, ts, ttl, now)? {
                out.push((c.id, d));
            }
        }
        Ok(out)
    };
    let mut update = Partition::default();
    let mut target = RowTarget::Static;
    if plan.writes_row {
        let row = Row {
            marker: Some(if ttl > 0 {
                LivenessInfo::expiring(ts, ttl, now)
            } else {
                LivenessInfo::live(ts)
            }),
            columns: cells(&plan.regular)?,
            ..Row::default()
        };
        let vals: SmallVec<[Bytes; 4]> = plan
            .clustering_key
            .iter()
            .map(key_part)
            .collect::<Result<_>>()?;
        let refs: SmallVec<[&[u8]; 4]> = vals.iter().map(|b| b.as_ref()).collect();
        let ckey = plan
            .layout
            .encode_key(&refs)
            .map_err(|e| Error::Invalid(e.to_string()))?;
        target = RowTarget::Row(ckey.clone());
        update.rows.insert(ckey, row);
    }
    if !plan.statics.is_empty() {
        let statics = cells(&plan.statics)?;
        if !statics.is_empty() {
            update.static_row = Some(Row {
                columns: statics,
                ..Row::default()
            });
        }
    }
    let condition = if i.if_not_exists {
        if i.using.timestamp.is_some() {
            return Err(Error::Invalid(
                "Cannot provide custom timestamp for conditional updates".into(),
            ));
        }
        vec![(target, RowCondition::NotExists)]
    } else {
        Vec::new()
    };
    Ok(Planned {
        mutations: vec![Mutation {
            table: schema.id,
            key,
            update,
        }],
        conditions: condition,
        key_in: false,
        ck_in: false,
        updates_rows: plan.writes_row,
        list_edits: Vec::new(),
        deferred,
    })
}

/// The values of an `INSERT … JSON`: every column of the table with a marker bound to its
/// value from the document (Cassandra's `Json.parseJson`).
struct JsonInsert<'a> {
    columns: Vec<String>,
    markers: Vec<Term>,
    values: Vec<TermValue>,
    /// The statement's context, for the clock and randomness.
    inner: &'a dyn TermContext,
}

impl<'a> JsonInsert<'a> {
    fn new(
        schema: &TableSchema,
        json: &Term,
        default_unset: bool,
        ctx: &'a dyn TermContext,
    ) -> Result<Self> {
        let text = match term_to_bytes(json, &CqlType::Text, json::JSON_COLUMN, ctx)? {
            TermValue::Value(b) => String::from_utf8(b.to_vec())
                .map_err(|_| Error::Invalid("String didn't validate.".into()))?,
            _ => return Err(Error::Invalid("Got null for INSERT JSON values".into())),
        };
        let table: Vec<(String, CqlType)> = schema
            .columns
            .iter()
            .map(|c| (c.name.clone(), c.ty.clone()))
            .collect();
        let (columns, values): (Vec<String>, Vec<TermValue>) =
            json::insert_json_values(&table, &text, default_unset)?
                .into_iter()
                .unzip();
        let markers = (0..columns.len())
            .map(|index| {
                Term::Bind(BindMarker {
                    index,
                    name: None,
                    line: 0,
                    column: 0,
                })
            })
            .collect();
        Ok(JsonInsert {
            columns,
            markers,
            values,
            inner: ctx,
        })
    }
}

impl TermContext for JsonInsert<'_> {
    fn bind(&self, marker: &BindMarker) -> Option<crate::values::BoundValue> {
        self.values.get(marker.index).cloned()
    }

    fn now_micros(&self) -> i64 {
        self.inner.now_micros()
    }

    fn random_u64(&self) -> u64 {
        self.inner.random_u64()
    }
}

/// The partition key from its parts' values (composite when there are several).
fn partition_key<P>(
    parts: &[P],
    mut value: impl FnMut(&P) -> Result<Bytes>,
) -> Result<DecoratedKey> {
    let key = if let [only] = parts {
        value(only)?
    } else {
        let vals: SmallVec<[Bytes; 4]> = parts.iter().map(value).collect::<Result<_>>()?;
        let refs: SmallVec<[&[u8]; 4]> = vals.iter().map(|b| b.as_ref()).collect();
        cairn_engine::model::token::composite_partition_key(&refs)
    };
    // An empty component of a composite key is allowed; an empty key is not.
    restrict::check_key(&key)?;
    Ok(DecoratedKey::new(key))
}

/// The partitions an UPDATE or DELETE writes ([`restrict::resolve`] has made sure the whole
/// partition key is given by `=` / `IN`; an empty `IN` gives none), validated as
/// Cassandra's `buildPartitionKeyNames` does: after the statement's own rules (a missing
/// clustering column is reported before an empty key).
fn keys_of(r: &Restrictions) -> Result<Vec<DecoratedKey>> {
    r.check_keys()?;
    Ok(r.keys.clone().unwrap_or_default())
}

fn clustering_keys(r: &Restrictions, schema: &TableSchema) -> Result<Vec<ClusteringKey>> {
    if r.prefixes.is_empty() {
        // A table without clustering columns: its one row per partition.
        return Ok(vec![ClusteringKey::empty()]);
    }
    let layout = schema.clustering_layout();
    r.prefixes
        .iter()
        .map(|p| {
            let refs: Vec<&[u8]> = p.iter().map(|b| b.as_ref()).collect();
            layout
                .encode_key(&refs)
                .map_err(|e| Error::Invalid(e.to_string()))
        })
        .collect()
}

fn update(
    ex: &Executor,
    session: &Session,
    u: &Update,
    ctx: &dyn TermContext,
    default_ts: Option<i64>,
) -> Result<Planned> {
    let schema = table_schema(ex, session, &u.table)?;
    let conditional = !matches!(u.conditions, Conditions::None);
    let condition = condition_of(&u.conditions, &u.using, &schema, ctx)?;
    let static_only = static_only(&u.assignments, &schema, condition.as_ref());
    let r = restrict::resolve(
        &schema,
        &u.where_clause,
        ctx,
        Context::modification(StatementKind::Update, static_only),
    )?;
    let keys = keys_of(&r)?;
    if !conditional && r.selects_no_row() {
        // Cassandra builds no update, so binds no USING, when a clustering IN names no row.
        return Ok(Planned {
            key_in: r.key_in,
            ck_in: r.ck_in,
            updates_rows: r.updates_rows(&schema),
            ..Planned::unconditional(Vec::new())
        });
    }
    // USING is bound after the statement is validated, as in Cassandra.
    let (ts, ttl, deferred) = using_deferring(&u.using, &schema, ctx, default_ts, conditional)?;
    let now = now_secs();
    let ckeys = clustering_of(&r, &schema)?;
    // Cassandra applies the operations once per row the statement names, static ones
    // included: a static list set, appended or prepended by an UPDATE naming several rows
    // gets the elements once per row (each its own cell). Duplicate keys name one row.
    let rows_named = ckeys.iter().collect::<BTreeSet<_>>().len().max(1);
    let mut row = Row::default();
    let mut statics = Row::default();
    let mut indexed: Vec<(ColumnDef, ListEdit)> = Vec::new();
    for a in &u.assignments {
        let column = match a {
            Assignment::Set { column, .. }
            | Assignment::SetElement { column, .. }
            | Assignment::SetField { column, .. }
            | Assignment::Add { column, .. }
            | Assignment::Prepend { column, .. }
            | Assignment::Subtract { column, .. } => column,
        };
        let c = schema
            .column(column)
            .ok_or_else(|| Error::undefined_column(&schema, column))?;
        if matches!(c.kind, ColumnKind::PartitionKey | ColumnKind::Clustering) {
            return Err(Error::Invalid(format!(
                "PRIMARY KEY part {column} found in SET part"
            )));
        }
        let repeat = if c.kind == ColumnKind::Static
            && matches!(c.ty, CqlType::List(_))
            && matches!(
                a,
                Assignment::Set { .. } | Assignment::Add { .. } | Assignment::Prepend { .. }
            ) {
            rows_named
        } else {
            1
        };
        for _ in 0..repeat {
            match assignment_op(c, a, ctx, ts, ttl, now)? {
                None => {}
                Some(ColumnOp::Data(d)) => put_by_kind(c, &mut row, &mut statics, d),
                Some(ColumnOp::List(edit)) => indexed.push((c.clone(), edit)),
            }
        }
    }
    row.columns.sort_by_key(|(id, _)| *id);
    statics.columns.sort_by_key(|(id, _)| *id);
    let mut muts = Vec::new();
    let mut list_edits = Vec::new();
    for key in keys {
        let mut update = Partition::default();
        for ck in &ckeys {
            for (c, edit) in &indexed {
                list_edits.push(ListWrite {
                    mutation: muts.len(),
                    ck: (c.kind != ColumnKind::Static).then(|| ck.clone()),
                    column: c.clone(),
                    edit: edit.clone(),
                    ts,
                    ttl,
                    now,
                });
            }
            if !row.columns.is_empty() {
                update.rows.insert(ck.clone(), row.clone());
            }
            if !statics.columns.is_empty() {
                update.static_row = Some(statics.clone());
            }
        }
        muts.push(Mutation {
            table: schema.id,
            key,
            update,
        });
    }
    let conditions = match condition {
        Some(c) => conditions_for(c, &r, &ckeys, static_only, false)?,
        None => Vec::new(),
    };
    Ok(Planned {
        mutations: muts,
        conditions,
        key_in: r.key_in,
        ck_in: r.ck_in,
        updates_rows: r.updates_rows(&schema),
        list_edits,
        deferred,
    })
}

/// Whether a statement's operations and IF conditions touch static columns only
/// (Cassandra's `appliesOnlyToStaticColumns`): its clustering columns must then be left
/// unrestricted, and it writes (and tests) the static row.
fn static_only(
    assignments: &[Assignment],
    schema: &TableSchema,
    condition: Option<&RowCondition>,
) -> bool {
    let kinds = assignments
        .iter()
        .filter_map(|a| schema.column(assignment_column(a)).map(|c| c.kind))
        .chain(match condition {
            Some(RowCondition::Columns(cs)) => cs.iter().map(|c| c.column.kind).collect(),
            _ => Vec::new(),
        });
    static_kinds(kinds)
}

/// [`static_only`] from the kinds of the columns a statement touches.
fn static_kinds(kinds: impl Iterator<Item = ColumnKind>) -> bool {
    let mut any_static = false;
    for k in kinds {
        match k {
            ColumnKind::Static => any_static = true,
            ColumnKind::Regular => return false,
            _ => {}
        }
    }
    any_static
}

fn assignment_column(a: &Assignment) -> &str {
    match a {
        Assignment::Set { column, .. }
        | Assignment::SetElement { column, .. }
        | Assignment::SetField { column, .. }
        | Assignment::Add { column, .. }
        | Assignment::Prepend { column, .. }
        | Assignment::Subtract { column, .. } => column,
    }
}

/// The clustering keys an UPDATE writes ([`restrict::resolve`] has checked that every
/// clustering column is given by `=` / `IN`, or none when the statement writes static
/// columns only).
fn clustering_of(r: &Restrictions, schema: &TableSchema) -> Result<Vec<ClusteringKey>> {
    if r.empty {
        return Ok(Vec::new());
    }
    if r.full_clustering(schema) {
        return clustering_keys(r, schema);
    }
    Ok(vec![ClusteringKey::empty()])
}

fn delete(
    ex: &Executor,
    session: &Session,
    d: &Delete,
    ctx: &dyn TermContext,
    default_ts: Option<i64>,
) -> Result<Planned> {
    let schema = table_schema(ex, session, &d.table)?;
    if d.using.ttl.is_some() {
        return Err(Error::Invalid("TTL is not supported for DELETE".into()));
    }
    let condition = condition_of(&d.conditions, &d.using, &schema, ctx)?;
    let target_kinds: Vec<ColumnKind> = d
        .targets
        .iter()
        .filter_map(|t| match t {
            RelationTarget::Column(n) | RelationTarget::Element(n, _) => {
                schema.column(n).map(|c| c.kind)
            }
            _ => None,
        })
        .collect();
    let condition_kinds: Vec<ColumnKind> = match &condition {
        Some(RowCondition::Columns(cs)) => cs.iter().map(|c| c.column.kind).collect(),
        _ => Vec::new(),
    };
    // Deleting whole rows (no column list) touches the regular rows (Cassandra's
    // `Operations.appliesToRegularColumns` for DELETE).
    let row_kinds = d.targets.is_empty().then_some(ColumnKind::Regular);
    let static_only = static_kinds(
        target_kinds
            .iter()
            .chain(&condition_kinds)
            .copied()
            .chain(row_kinds),
    );
    let r = restrict::resolve(
        &schema,
        &d.where_clause,
        ctx,
        Context::modification(StatementKind::Delete, static_only),
    )?;
    let keys = keys_of(&r)?;
    if condition.is_some() && !(r.full_clustering(&schema) && r.keys.is_some()) {
        if target_kinds.contains(&ColumnKind::Regular) || row_kinds.is_some() {
            return Err(Error::Invalid("DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to delete non static columns".into()));
        }
        if condition_kinds.contains(&ColumnKind::Regular) {
            return Err(Error::Invalid("DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to use IF condition on non static columns".into()));
        }
    }
    let restricted = r.clustering_restricted();
    // Cassandra's `addUpdates` returns before it binds USING when the clustering
    // restrictions name no row (an empty IN) or no range (an impossible slice), whatever the
    // partition keys.
    let names_rows = !r.selects_no_row()
        && (!restricted || r.full_clustering(&schema) || !r.slice(&schema)?.is_empty());
    if r.empty || !names_rows {
        if let Some(c) = condition {
            // An empty IN is still an IN: refused in a conditional statement.
            conditions_for(c, &r, &[], static_only, true)?;
        }
        if names_rows {
            using(&d.using, &schema, ctx, default_ts)?;
        }
        return Ok(Planned::unconditional(Vec::new()));
    }
    let (ts, _) = using(&d.using, &schema, ctx, default_ts)?;
    let now = now_secs();
    let deletion = DeletionTime {
        marked_at: ts,
        local_deletion_time: now,
    };
    let has_ck = schema.columns_of(ColumnKind::Clustering).next().is_some();
    let mut muts = Vec::new();
    let mut list_edits = Vec::new();
    let mut ckeys: Vec<ClusteringKey> = Vec::new();
    let mut deferred = None;
    for key in keys {
        let mut update = Partition::default();
        if d.targets.is_empty() {
            if !restricted {
                update.deletion = Some(deletion);
                ckeys = vec![ClusteringKey::empty()];
            } else if r.full_clustering(&schema) {
                ckeys = clustering_keys(&r, &schema)?;
                for ck in &ckeys {
                    update.rows.insert(
                        ck.clone(),
                        Row {
                            deletion: Some(deletion),
                            ..Row::default()
                        },
                    );
                }
            } else {
                if condition.is_some() {
                    return Err(Error::Invalid(
                        "DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to use IF conditions".into(),
                    ));
                }
                for range in r.slice(&schema)?.ranges() {
                    update.range_tombstones.push(RangeTombstone {
                        range: range.clone(),
                        deletion,
                    });
                }
            }
        } else {
            let mut row = Row::default();
            let mut statics = Row::default();
            let mut element_deletes: Vec<(ColumnDef, ListEdit)> = Vec::new();
            for t in &d.targets {
                if let RelationTarget::Element(name, elem) = t {
                    let c = schema
                        .column(name)
                        .ok_or_else(|| Error::undefined_column(&schema, name))?;
                    check_element_deletion(c)?;
                    if let CqlType::Set(et) = &c.ty {
                        // `DELETE s[x]`: a tombstone for the element (Cassandra's
                        // `Sets.ElementDiscarder`).
                        let element = match term_to_bytes(elem, et, &c.name, ctx)? {
                            TermValue::Value(b) => b,
                            TermValue::Null => {
                                return Err(Error::Invalid("Invalid null set element".into()))
                            }
                            TermValue::Unset => continue,
                        };
                        let path = crate::values::collections::element_path(&c.ty, &element)
                            .map_err(invalid)?;
                        let tombstone = ColumnData::Complex(ComplexColumn {
                            deletion: None,
                            cells: vec![(path, Cell::tombstone(ts, now))],
                        });
                        put_by_kind(c, &mut row, &mut statics, tombstone);
                        continue;
                    }
                    let a = Assignment::SetElement {
                        column: name.clone(),
                        key: elem.clone(),
                        value: crate::ast::Term::Null,
                    };
                    match assignment_op(c, &a, ctx, ts, 0, now)? {
                        Some(ColumnOp::Data(d)) => put_by_kind(c, &mut row, &mut statics, d),
                        Some(ColumnOp::List(edit)) => element_deletes.push((c.clone(), edit)),
                        None => {}
                    }
                    continue;
                }
                let RelationTarget::Column(name) = t else {
                    return Err(Error::Invalid(format!("Invalid deletion target {t:?}")));
                };
                let c = schema
                    .column(name)
                    .ok_or_else(|| Error::undefined_column(&schema, name))?;
                let data = if matches!(
                    c.ty,
                    CqlType::List(_) | CqlType::Set(_) | CqlType::Map(_, _)
                ) {
                    ColumnData::Complex(cairn_engine::model::ComplexColumn {
                        deletion: Some(deletion),
                        cells: Vec::new(),
                    })
                } else {
                    ColumnData::Simple(Cell::tombstone(ts, now))
                };
                match c.kind {
                    ColumnKind::Regular => row.columns.push((c.id, data)),
                    ColumnKind::Static => statics.columns.push((c.id, data)),
                    _ => {
                        return Err(Error::Invalid(format!(
                        "Invalid identifier {name} for deletion (should not be a PRIMARY KEY part)"
                    )))
                    }
                }
            }
            let regular = !row.columns.is_empty()
                || element_deletes
                    .iter()
                    .any(|(c, _)| c.kind == ColumnKind::Regular);
            if regular && has_ck && !r.full_clustering(&schema) {
                // Cassandra refuses it when it builds the write (`addUpdateForKey`): after a
                // conditional batch's check, so a refused batch answers `[applied] false`.
                // Until then the statement stands for the rows it names.
                deferred = Some(Error::Invalid(
                    "Range deletions are not supported for specific columns".into(),
                ));
                for range in r.slice(&schema)?.ranges() {
                    update.range_tombstones.push(RangeTombstone {
                        range: range.clone(),
                        deletion,
                    });
                }
                muts.push(Mutation {
                    table: schema.id,
                    key,
                    update,
                });
                continue;
            }
            ckeys = if has_ck && !static_only {
                clustering_keys(&r, &schema)?
            } else if has_ck {
                Vec::new()
            } else {
                vec![ClusteringKey::empty()]
            };
            if !element_deletes.is_empty() {
                let targets: Vec<ClusteringKey> = if ckeys.is_empty() {
                    vec![ClusteringKey::empty()]
                } else {
                    ckeys.clone()
                };
                for ck in &targets {
                    for (c, edit) in &element_deletes {
                        list_edits.push(ListWrite {
                            mutation: muts.len(),
                            ck: (c.kind != ColumnKind::Static).then(|| ck.clone()),
                            column: c.clone(),
                            edit: edit.clone(),
                            ts,
                            ttl: 0,
                            now,
                        });
                    }
                }
            }
            row.columns.sort_by_key(|(id, _)| *id);
            statics.columns.sort_by_key(|(id, _)| *id);
            if !row.columns.is_empty() {
                for ck in &ckeys {
                    update.rows.insert(ck.clone(), row.clone());
                }
            }
            if !statics.columns.is_empty() {
                update.static_row = Some(statics);
            }
        }
        muts.push(Mutation {
            table: schema.id,
            key,
            update,
        });
    }
    let conditions = match condition {
        Some(c) => conditions_for(c, &r, &ckeys, static_only, true)?,
        None => Vec::new(),
    };
    Ok(Planned {
        mutations: muts,
        conditions,
        key_in: r.key_in,
        ck_in: r.ck_in,
        updates_rows: r.updates_rows(&schema),
        list_edits,
        deferred,
    })
}
