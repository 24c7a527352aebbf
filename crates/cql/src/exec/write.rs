//! INSERT, UPDATE, DELETE and BATCH: statements into engine mutations.
//!
//! One statement (or a whole BATCH) becomes one `Database::apply` call, so it is one
//! commitlog record: after a crash it is either wholly there or not at all. The write
//! timestamp is `USING TIMESTAMP`, else the request's default timestamp, else the node's
//! clock in microseconds; TTL is `USING TTL`, else the table's `default_time_to_live`.

use super::catalog::{now_micros, now_secs};
use super::plan_cache::PlanCache;
use super::restrict::{self, Restrictions};
use super::{Binds, ColumnSpec, Executor, Outcome, QueryParams, ResultSet, Session};
use crate::ast::{
    Assignment, Batch, BatchStatement, Conditions, Delete, Insert, InsertValues, RelationTarget,
    Statement, Update, Using,
};
use crate::error::{Error, Result};
use crate::values::collections::collection_to_cells;
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
use std::sync::Arc;

/// Runs one INSERT / UPDATE / DELETE.
pub fn modify(
    ex: &Executor,
    session: &Session,
    stmt: &Statement,
    params: &QueryParams,
) -> Result<Outcome> {
    let ctx = Binds::new(params);
    let planned = match stmt {
        Statement::Insert(i) => insert_mutation(ex, session, i, &ctx, params.timestamp, None)?,
        Statement::Update(u) => update(ex, session, u, &ctx, params.timestamp)?,
        Statement::Delete(d) => delete(ex, session, d, &ctx, params.timestamp)?,
        _ => return Err(Error::Invalid("not a modification statement".into())),
    };
    apply(ex, planned)
}

/// Runs one INSERT; `cache` is the prepared statement's plan cache, if it is one.
pub fn insert(
    ex: &Executor,
    session: &Session,
    i: &Insert,
    params: &QueryParams,
    cache: Option<&PlanCache<InsertPlan>>,
) -> Result<Outcome> {
    let ctx = Binds::new(params);
    apply(
        ex,
        insert_mutation(ex, session, i, &ctx, params.timestamp, cache)?,
    )
}

/// Applies one statement's mutations (checking its IF clause first, if it has one).
fn apply(ex: &Executor, (muts, condition): Planned) -> Result<Outcome> {
    if let Some(cond) = condition {
        return conditional(ex, muts, cond);
    }
    ex.catalog().db().apply(muts)?;
    Ok(Outcome::Void)
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
        Some(t) => Some(timestamp_of(t, &Binds::new(params))?),
        None => params.timestamp,
    };
    batch(ex, session, b.kind, &statements, ts)
}

/// Statements (each with its own bound values) applied as one atomic write.
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
    let ts = timestamp.unwrap_or_else(now_micros);
    let mut all = Vec::new();
    for (stmt, params) in statements {
        let ctx = Binds::new(params);
        let (muts, cond) = match stmt {
            Statement::Insert(i) => insert_mutation(ex, session, i, &ctx, Some(ts), None)?,
            Statement::Update(u) => update(ex, session, u, &ctx, Some(ts))?,
            Statement::Delete(d) => delete(ex, session, d, &ctx, Some(ts))?,
            _ => {
                return Err(Error::Invalid(
                    "Only INSERT, UPDATE and DELETE statements are allowed in a BATCH".into(),
                ))
            }
        };
        if cond.is_some() {
            return Err(Error::Invalid(
                "Conditional statements in batches are not supported yet".into(),
            ));
        }
        all.extend(muts);
    }
    ex.catalog().db().apply(all)?;
    Ok(Outcome::Void)
}

/// What an IF clause asks.
enum Condition {
    NotExists,
    Exists,
}

type Planned = (Vec<Mutation>, Option<Condition>);

/// Applies a lightweight transaction on one node: check, then write, under the DDL-free
/// write lock of the executor (one node has no Paxos to run).
fn conditional(ex: &Executor, muts: Vec<Mutation>, cond: Condition) -> Result<Outcome> {
    static LWT: parking_lot::Mutex<()> = parking_lot::Mutex::new(());
    let _one_at_a_time = if cairn_engine::io::is_nonblocking() {
        // Another transaction may be reading from disk under the lock: do not wait here.
        LWT.try_lock().ok_or(Error::WouldBlock)?
    } else {
        LWT.lock()
    };
    let db = ex.catalog().db();
    let Some(m) = muts.first() else {
        return Ok(Outcome::Void);
    };
    let table = db
        .table_by_id(m.table)
        .ok_or_else(|| Error::Invalid("unconfigured table".into()))?;
    let mut cmd = ReadCommand::all(now_secs());
    if let Some((ck, _)) = m.update.rows.iter().next() {
        cmd.slice =
            cairn_engine::model::Slice::new(vec![cairn_engine::model::ClusteringRange::prefix(
                &ck.0,
            )]);
    }
    let exists = table.read(&m.key, &cmd)?.is_some();
    let applied = match cond {
        Condition::NotExists => !exists,
        Condition::Exists => exists,
    };
    if applied {
        db.apply(muts)?;
    }
    let s = table.schema();
    Ok(Outcome::Rows(ResultSet {
        columns: Arc::from(vec![ColumnSpec {
            keyspace: s.keyspace.clone(),
            table: s.name.clone(),
            name: "[applied]".into(),
            ty: CqlType::Boolean,
        }]),
        rows: vec![vec![Some(Bytes::from(vec![u8::from(applied)]))]],
        paging_state: None,
    }))
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

fn timestamp_of(t: &crate::ast::Term, ctx: &dyn TermContext) -> Result<i64> {
    match term_to_bytes(t, &CqlType::Bigint, "[timestamp]", ctx)
        .map_err(|e| Error::Invalid(e.to_string()))?
    {
        TermValue::Value(b) => Ok(i64::from_be_bytes(
            b.as_ref()
                .try_into()
                .map_err(|_| Error::Invalid("Invalid timestamp".into()))?,
        )),
        _ => Err(Error::Invalid("Invalid null value of timestamp".into())),
    }
}

/// (timestamp, ttl seconds) of a statement.
fn using(
    u: &Using,
    schema: &TableSchema,
    ctx: &dyn TermContext,
    default_ts: Option<i64>,
) -> Result<(i64, u32)> {
    let ts = match &u.timestamp {
        Some(t) => timestamp_of(t, ctx)?,
        None => default_ts.unwrap_or_else(now_micros),
    };
    let ttl = match &u.ttl {
        Some(t) => match term_to_bytes(t, &CqlType::Int, "[ttl]", ctx)
            .map_err(|e| Error::Invalid(e.to_string()))?
        {
            TermValue::Value(b) => {
                let v = i32::from_be_bytes(
                    b.as_ref()
                        .try_into()
                        .map_err(|_| Error::Invalid("Invalid TTL".into()))?,
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
            TermValue::Null | TermValue::Unset => schema.options.default_time_to_live,
        },
        None => schema.options.default_time_to_live,
    };
    Ok((ts, ttl))
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
        let value = term_to_bytes(term, &col.ty, &col.name, ctx).map_err(invalid)?;
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
    Ok(
        match term_to_bytes(term, &col.ty, &col.name, ctx)
            .map_err(|e| Error::Invalid(e.to_string()))?
        {
            TermValue::Unset => None,
            TermValue::Null => Some(ColumnData::Simple(Cell::tombstone(ts, now))),
            TermValue::Value(b) => Some(ColumnData::Simple(cell(ts, ttl, now, b))),
        },
    )
}

/// UPDATE and DELETE name rows by their primary key only (Cassandra's text otherwise).
fn only_key_restrictions(r: &Restrictions) -> Result<()> {
    if r.filters.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = r.filters.iter().map(|f| f.column.name.as_str()).collect();
    Err(Error::Invalid(format!(
        "Non PRIMARY KEY columns found in where clause: {}",
        names.join(", ")
    )))
}

/// The IF clause of an UPDATE or DELETE.
fn condition_of(c: &Conditions) -> Result<Option<Condition>> {
    match c {
        Conditions::None => Ok(None),
        Conditions::Exists => Ok(Some(Condition::Exists)),
        _ => Err(Error::Invalid(
            "Conditions on columns are not supported yet".into(),
        )),
    }
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
        match term_to_bytes(term, &c.ty, &c.name, ctx).map_err(invalid)? {
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
            if !is_multi_cell(&c.ty) {
                return Err(Error::Invalid(format!(
                    "Invalid operation ({0} = {0} + ?) for non counter column {0}",
                    c.name
                )));
            }
            let Some(cells) = elem_cells(value)? else {
                return Ok(None);
            };
            let cells = if matches!(a, Assignment::Prepend { .. }) {
                if !matches!(c.ty, CqlType::List(_)) {
                    return Err(Error::Invalid(format!(
                        "Invalid operation ({0} = ? + {0}) for non list column {0}",
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
                    match term_to_bytes(value, &keys_ty, &c.name, ctx).map_err(invalid)? {
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
                CqlType::List(_) => {
                    match term_to_bytes(value, &c.ty, &c.name, ctx).map_err(invalid)? {
                        TermValue::Value(b) => Some(ColumnOp::List(ListEdit::Remove(
                            restrict::decode_collection(&b),
                        ))),
                        _ => None,
                    }
                }
                _ => {
                    return Err(Error::Invalid(format!(
                        "Invalid operation ({0} = {0} - ?) for non counter column {0}",
                        c.name
                    )))
                }
            }
        }
        Assignment::SetElement { key, value, .. } => match &c.ty {
            CqlType::Map(kt, vt) => {
                let k = match term_to_bytes(key, kt, &c.name, ctx).map_err(invalid)? {
                    TermValue::Value(b) => b,
                    _ => return Err(Error::Invalid("Invalid null map key".into())),
                };
                let path = crate::values::collections::element_path(&c.ty, &k).map_err(invalid)?;
                let cell = match term_to_bytes(value, vt, &c.name, ctx).map_err(invalid)? {
                    TermValue::Value(v) => cell(ts, ttl, now, v),
                    TermValue::Null => Cell::tombstone(ts, now),
                    TermValue::Unset => return Ok(None),
                };
                Some(complex(vec![(path, cell)]))
            }
            CqlType::List(et) => {
                let index = match term_to_bytes(key, &CqlType::Int, &c.name, ctx)
                    .map_err(invalid)?
                {
                    TermValue::Value(b) => i32::from_be_bytes(
                        b.as_ref()
                            .try_into()
                            .map_err(|_| Error::Invalid("Invalid list index".into()))?,
                    ),
                    _ => return Err(Error::Invalid("Invalid null value for list index".into())),
                };
                let value = match term_to_bytes(value, et, &c.name, ctx).map_err(invalid)? {
                    TermValue::Value(v) => Some(v),
                    TermValue::Null => None,
                    TermValue::Unset => return Ok(None),
                };
                Some(ColumnOp::List(ListEdit::Index(index, value)))
            }
            _ => {
                return Err(Error::Invalid(format!(
                    "Invalid operation ({}[?] = ?) for non list/map column {}",
                    c.name, c.name
                )))
            }
        },
        Assignment::SetField { .. } => {
            return Err(Error::Invalid(
                "User-defined types are not supported yet".into(),
            ))
        }
    })
}

/// The cells a list edit writes, computed from the row's current list (read before write,
/// as Cassandra does).
fn list_edit_cell(
    ex: &Executor,
    schema: &TableSchema,
    key: &DecoratedKey,
    ck: &ClusteringKey,
    (col, edit): (&ColumnDef, &ListEdit),
    (ts, ttl, now): (i64, u32, u32),
) -> Result<ColumnData> {
    let table = ex.catalog().require_table(&schema.keyspace, &schema.name)?;
    let mut cmd = ReadCommand::all(now);
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
    let cells = match edit {
        ListEdit::Index(index, value) => {
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
    match term_to_bytes(term, &col.ty, &col.name, ctx).map_err(|e| Error::Invalid(e.to_string()))? {
        TermValue::Value(b) if !b.is_empty() || !matches!(col.kind, ColumnKind::PartitionKey) => {
            Ok(b)
        }
        TermValue::Value(_) => Err(Error::Invalid("Key may not be empty".into())),
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
    /// Checks an INSERT's column list against `schema` (Cassandra's messages) and plans it.
    fn new(schema: &TableSchema, columns: &[String], values: usize) -> Result<InsertPlan> {
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
                return Err(Error::Invalid(format!("Undefined column name {name}")));
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
        let static_only = clustering_key.is_empty() && regular.is_empty();
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
    let InsertValues::Columns { columns, values } = &i.values else {
        return Err(Error::Invalid("INSERT JSON is not supported yet".into()));
    };
    let make = || InsertPlan::new(&schema, columns, values.len());
    let plan = match cache {
        Some(cache) => cache.get_or_plan(&schema, make)?,
        None => Arc::new(make()?),
    };
    let (ts, ttl) = using(&i.using, &schema, ctx, default_ts)?;
    let now = now_secs();
    let key_part = |p: &Part| key_value(&schema.columns[p.column], &values[p.value], ctx);
    let key = partition_key(&plan.partition_key, key_part)?;
    let cells = |parts: &[Part]| -> Result<Vec<(u32, ColumnData)>> {
        let mut out = Vec::with_capacity(parts.len());
        for p in parts {
            let c = &schema.columns[p.column];
            if let Some(d) = column_data(c, &values[p.value], ctx, ts, ttl, now)? {
                out.push((c.id, d));
            }
        }
        Ok(out)
    };
    let mut update = Partition::default();
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
    let cond = match i.if_not_exists {
        true => Some(Condition::NotExists),
        false => None,
    };
    Ok((
        vec![Mutation {
            table: schema.id,
            key,
            update,
        }],
        cond,
    ))
}

/// The partition key from its parts' values (composite when there are several).
fn partition_key<P>(
    parts: &[P],
    mut value: impl FnMut(&P) -> Result<Bytes>,
) -> Result<DecoratedKey> {
    if let [only] = parts {
        return Ok(DecoratedKey::new(value(only)?));
    }
    let vals: SmallVec<[Bytes; 4]> = parts.iter().map(value).collect::<Result<_>>()?;
    let refs: SmallVec<[&[u8]; 4]> = vals.iter().map(|b| b.as_ref()).collect();
    Ok(DecoratedKey::new(
        cairn_engine::model::token::composite_partition_key(&refs),
    ))
}

fn keys_of(r: &Restrictions, schema: &TableSchema) -> Result<Vec<DecoratedKey>> {
    let _ = schema;
    r.keys
        .clone()
        .ok_or_else(|| Error::Invalid("Some partition key parts are missing".into()))
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
    let (ts, ttl) = using(&u.using, &schema, ctx, default_ts)?;
    let now = now_secs();
    let r = restrict::resolve(&schema, &u.where_clause, ctx)?;
    only_key_restrictions(&r)?;
    let keys = keys_of(&r, &schema)?;
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
            .ok_or_else(|| Error::Invalid(format!("Undefined column name {column}")))?;
        if matches!(c.kind, ColumnKind::PartitionKey | ColumnKind::Clustering) {
            return Err(Error::Invalid(format!(
                "PRIMARY KEY part {column} found in SET part"
            )));
        }
        match assignment_op(c, a, ctx, ts, ttl, now)? {
            None => {}
            Some(ColumnOp::Data(d)) => {
                let target = if c.kind == ColumnKind::Static {
                    &mut statics
                } else {
                    &mut row
                };
                put_column(target, c.id, d);
            }
            Some(ColumnOp::List(edit)) => indexed.push((c.clone(), edit)),
        }
    }
    row.columns.sort_by_key(|(id, _)| *id);
    statics.columns.sort_by_key(|(id, _)| *id);
    let has_ck = schema.columns_of(ColumnKind::Clustering).next().is_some();
    let regular_touched =
        !row.columns.is_empty() || indexed.iter().any(|(c, _)| c.kind == ColumnKind::Regular);
    let ckeys = if r.full_clustering(&schema) {
        clustering_keys(&r, &schema)?
    } else if has_ck && (regular_touched || r.prefix_len > 0 || r.bound.is_some()) {
        let missing: Vec<&str> = schema
            .columns_of(ColumnKind::Clustering)
            .skip(r.prefix_len)
            .map(|c| c.name.as_str())
            .collect();
        return Err(Error::Invalid(format!(
            "Missing mandatory PRIMARY KEY part {}",
            missing.first().copied().unwrap_or("")
        )));
    } else {
        vec![ClusteringKey::empty()]
    };
    let mut muts = Vec::new();
    for key in keys {
        let mut update = Partition::default();
        for ck in &ckeys {
            let mut r = row.clone();
            let mut st = statics.clone();
            for (c, edit) in &indexed {
                let d = list_edit_cell(ex, &schema, &key, ck, (c, edit), (ts, ttl, now))?;
                let target = if c.kind == ColumnKind::Static {
                    &mut st
                } else {
                    &mut r
                };
                put_column(target, c.id, d);
            }
            r.columns.sort_by_key(|(id, _)| *id);
            st.columns.sort_by_key(|(id, _)| *id);
            if !r.columns.is_empty() {
                update.rows.insert(ck.clone(), r);
            }
            if !st.columns.is_empty() {
                update.static_row = Some(st);
            }
        }
        muts.push(Mutation {
            table: schema.id,
            key,
            update,
        });
    }
    let cond = condition_of(&u.conditions)?;
    Ok((muts, cond))
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
    let (ts, _) = using(&d.using, &schema, ctx, default_ts)?;
    let now = now_secs();
    let deletion = DeletionTime {
        marked_at: ts,
        local_deletion_time: now,
    };
    let r = restrict::resolve(&schema, &d.where_clause, ctx)?;
    only_key_restrictions(&r)?;
    let keys = keys_of(&r, &schema)?;
    let mut muts = Vec::new();
    for key in keys {
        let mut update = Partition::default();
        if d.targets.is_empty() {
            if r.prefixes.is_empty() && r.bound.is_none() {
                update.deletion = Some(deletion);
            } else if r.full_clustering(&schema) {
                for ck in clustering_keys(&r, &schema)? {
                    update.rows.insert(
                        ck,
                        Row {
                            deletion: Some(deletion),
                            ..Row::default()
                        },
                    );
                }
            } else {
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
                        .ok_or_else(|| Error::Invalid(format!("Undefined column name {name}")))?;
                    let a = Assignment::SetElement {
                        column: name.clone(),
                        key: elem.clone(),
                        value: crate::ast::Term::Null,
                    };
                    match assignment_op(c, &a, ctx, ts, 0, now)? {
                        Some(ColumnOp::Data(d)) => {
                            let target = if c.kind == ColumnKind::Static {
                                &mut statics
                            } else {
                                &mut row
                            };
                            put_column(target, c.id, d);
                        }
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
                    .ok_or_else(|| Error::Invalid(format!("Undefined column name {name}")))?;
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
            if !element_deletes.is_empty() {
                if !r.full_clustering(&schema) {
                    return Err(Error::Invalid(
                        "Range deletions are not supported for specific columns".into(),
                    ));
                }
                for ck in clustering_keys(&r, &schema)? {
                    for (c, edit) in &element_deletes {
                        let d = list_edit_cell(ex, &schema, &key, &ck, (c, edit), (ts, 0, now))?;
                        put_column(
                            if c.kind == ColumnKind::Static {
                                &mut statics
                            } else {
                                &mut row
                            },
                            c.id,
                            d,
                        );
                    }
                }
            }
            row.columns.sort_by_key(|(id, _)| *id);
            statics.columns.sort_by_key(|(id, _)| *id);
            if !row.columns.is_empty() {
                if !r.full_clustering(&schema) {
                    return Err(Error::Invalid(
                        "Range deletions are not supported for specific columns".into(),
                    ));
                }
                for ck in clustering_keys(&r, &schema)? {
                    update.rows.insert(ck, row.clone());
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
    let cond = condition_of(&d.conditions)?;
    Ok((muts, cond))
}
