//! Conditional writes (lightweight transactions) on one node.
//!
//! A conditional statement — `INSERT … IF NOT EXISTS`, `UPDATE … IF EXISTS`, `… IF col op x`
//! — or a BATCH holding some becomes one [`CasRequest`]: a single partition, the IF clause of
//! each row it names (the static row counts as one), and the writes to make if every clause
//! holds. Cassandra's rules, from `CQL3CasRequest` and `ColumnCondition`:
//! - a clause is about its own row: `IF NOT EXISTS` on a clustering row ignores the
//!   partition's static row, and `IF EXISTS` on a missing row fails even when the partition
//!   has a live static row;
//! - a column condition on a missing row sees null values (`IF v = null` holds there);
//! - when the request is refused, the result is `[applied] = false` followed by the current
//!   values of the read rows: every column for `IF [NOT] EXISTS`, else the columns the
//!   conditions name (batches put the primary key first). Columns the check did not read are
//!   null, as in Cassandra (statics are read only when the request writes or tests them).
//!
//! [`run`] evaluates the conditions inside the request's Paxos round (`StorageProxy::cas`:
//! across the partition's replicas in a cluster, under a partition lock on a node alone), so
//! the check and the write are one step for every other conditional request on the
//! partition; a round that loses to another re-evaluates. Plain writes take no part, as in
//! Cassandra, where mixing conditional and plain writes on the same data gives no isolation
//! either.

use super::result::{ColumnSpec, ResultSet};
use super::select::{cell_value, partition_values, star_columns};
use super::session::Levels;
use super::Executor;
use crate::ast::{InValues, Operator, Relation, RelationTarget, Term};
use crate::error::{Error, Result};
use crate::values::{term_to_bytes, TermContext, TermValue};
use bytes::Bytes;
use cairn_cluster::proxy::{CasDecision, CasRound};
use cairn_engine::model::types::framing::{split_collection, split_map, split_tuple};
use cairn_engine::model::types::CqlType;
use cairn_engine::model::types::{compare, unfrozen};
use cairn_engine::model::Mutation;
use cairn_engine::model::{ClusteringKey, ClusteringRange, DecoratedKey, Row, Slice};
use cairn_engine::schema::{ColumnDef, ColumnKind, TableSchema};
use cairn_engine::table::Table;
use cairn_engine::{ReadCommand, Wait};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Which row of the partition an IF clause is about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum RowTarget {
    /// The static row.
    Static,
    /// A clustering row (the empty key for a table without clustering columns).
    Row(ClusteringKey),
}

/// The IF clause of one row.
#[derive(Debug, Clone)]
pub enum RowCondition {
    /// `IF EXISTS`.
    Exists,
    /// `IF NOT EXISTS`.
    NotExists,
    /// `IF c1 op v1 AND …`.
    Columns(Vec<ColumnCondition>),
}

/// One `IF` condition on a column, with its values bound.
#[derive(Debug, Clone)]
pub struct ColumnCondition {
    /// The column.
    pub column: ColumnDef,
    /// For `c[k] op v`: the map key or list index (serialized); `None` is the whole column.
    element: Option<Option<Bytes>>,
    /// For `u.f op v` on a user type (frozen or not): the field's position and type.
    field: Option<(usize, CqlType)>,
    /// The operator (`=` for `IN`).
    op: Operator,
    /// The values compared against (several for `IN`; `None` is null).
    values: Vec<Option<Bytes>>,
}

/// The element type a condition compares, and what it compares with.
fn element_types(c: &ColumnDef) -> Option<(CqlType, CqlType)> {
    match &c.ty {
        CqlType::Map(k, v) => Some(((**k).clone(), (**v).clone())),
        CqlType::List(e) => Some((CqlType::Int, (**e).clone())),
        CqlType::Frozen(inner) => match inner.as_ref() {
            CqlType::Map(k, v) => Some(((**k).clone(), (**v).clone())),
            CqlType::List(e) => Some((CqlType::Int, (**e).clone())),
            _ => None,
        },
        _ => None,
    }
}

fn invalid(e: impl std::fmt::Display) -> Error {
    Error::Invalid(e.to_string())
}

fn bound(
    term: &Term,
    ty: &CqlType,
    receiver: &str,
    ctx: &dyn TermContext,
) -> Result<Option<Bytes>> {
    match term_to_bytes(term, ty, receiver, ctx).map_err(invalid)? {
        TermValue::Value(b) => Ok(Some(b)),
        TermValue::Null => Ok(None),
        TermValue::Unset => Err(Error::Invalid("Invalid 'unset' value in condition".into())),
    }
}

/// Resolves the `IF col op value AND …` conditions of a statement against its table.
pub fn column_conditions(
    schema: &TableSchema,
    relations: &[Relation],
    ctx: &dyn TermContext,
) -> Result<Vec<ColumnCondition>> {
    let mut out = Vec::with_capacity(relations.len());
    for rel in relations {
        let (target, op, values) = match rel {
            Relation::Compare { target, op, value } => (target, *op, Some(value)),
            Relation::In { target, .. } => (target, Operator::Eq, None),
            Relation::IsNotNull(_) => {
                return Err(Error::Invalid("Unsupported IS NOT NULL condition".into()))
            }
        };
        let (name, element, field) = match target {
            RelationTarget::Column(n) => (n, None, None),
            RelationTarget::Element(n, e) => (n, Some(e), None),
            RelationTarget::Field(n, f) => {
                let c = schema
                    .column(n)
                    .ok_or_else(|| Error::undefined_column(schema, n))?;
                let Some(u) = c.ty.as_udt() else {
                    return Err(Error::Invalid(format!(
                        "Invalid field selection: {n} of type {} is not a user type",
                        c.ty.name()
                    )));
                };
                // Cassandra's `ColumnCondition.Raw.prepare`, UDT_FIELD.
                let Some((i, fty)) = u.field(f) else {
                    return Err(Error::Invalid(format!("Unknown field {f} for column {n}")));
                };
                (n, None, Some((i, fty.clone(), format!("{n}.{f}"))))
            }
            RelationTarget::Tuple(_) | RelationTarget::Token(_) => {
                return Err(Error::Invalid("Invalid condition target".into()))
            }
        };
        let column = schema
            .column(name)
            .ok_or_else(|| Error::undefined_column(schema, name))?
            .clone();
        if column.ty == CqlType::Counter {
            return Err(Error::Invalid(
                "Conditions on counters are not supported".into(),
            ));
        }
        if op == Operator::Like {
            return Err(Error::Invalid(format!(
                "Unsupported operator LIKE in condition on {name}"
            )));
        }
        // The type each value is compared in, and the receiver's name in errors (a field's
        // is `column.field`, Cassandra's `UserTypes.fieldSpecOf`).
        let receiver_name = field.as_ref().map_or(name.as_str(), |(_, _, n)| n.as_str());
        let (element, value_ty) = match element {
            None => match &field {
                Some((_, fty, _)) => (None, fty.clone()),
                None => (None, column.ty.clone()),
            },
            Some(e) => {
                let (key_ty, value_ty) = match element_types(&column) {
                    Some(t) => t,
                    None if matches!(unfrozen(&column.ty), CqlType::Set(_)) => {
                        return Err(Error::Invalid(format!(
                            "Invalid element access syntax for set column {name}"
                        )))
                    }
                    None => {
                        return Err(Error::Invalid(format!(
                            "Invalid element access syntax for non-collection column {name}"
                        )))
                    }
                };
                let receiver = match key_ty {
                    CqlType::Int if matches!(unfrozen(&column.ty), CqlType::List(_)) => {
                        format!("idx({name})")
                    }
                    _ => format!("key({name})"),
                };
                (Some(bound(e, &key_ty, &receiver, ctx)?), value_ty)
            }
        };
        let value_ty = match op {
            Operator::Contains | Operator::ContainsKey => {
                let inner = unfrozen(field.as_ref().map_or(&column.ty, |(_, fty, _)| fty));
                match (inner, op) {
                    (CqlType::Map(k, _), Operator::ContainsKey) => (**k).clone(),
                    (_, Operator::ContainsKey) => {
                        return Err(Error::Invalid(format!(
                            "Cannot use CONTAINS KEY on non-map column {receiver_name}"
                        )))
                    }
                    (CqlType::Map(_, v), _) => (**v).clone(),
                    (CqlType::List(e) | CqlType::Set(e), _) => (**e).clone(),
                    _ => {
                        return Err(Error::Invalid(format!(
                            "Cannot use CONTAINS on non-collection column {receiver_name}"
                        )))
                    }
                }
            }
            Operator::Lt | Operator::Lte | Operator::Gt | Operator::Gte
                if value_ty.contains_duration() =>
            {
                return Err(Error::Invalid(match unfrozen(&value_ty) {
                    CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..) => {
                        "Slice conditions are not supported on collections containing durations"
                            .to_string()
                    }
                    CqlType::Tuple(_) => {
                        "Slice conditions are not supported on tuples containing durations"
                            .to_string()
                    }
                    CqlType::Udt(_) => {
                        "Slice conditions are not supported on UDTs containing durations"
                            .to_string()
                    }
                    _ => format!(
                        "Slice conditions ( {} ) are not supported on durations",
                        op_text(op)
                    ),
                }))
            }
            _ => value_ty,
        };
        let values = match (values, rel) {
            (Some(v), _) => vec![bound(v, &value_ty, receiver_name, ctx)?],
            (None, Relation::In { values, .. }) => {
                in_values(values, &value_ty, receiver_name, ctx)?
            }
            _ => Vec::new(),
        };
        out.push(ColumnCondition {
            column,
            element,
            field: field.map(|(i, fty, _)| (i, fty)),
            op,
            values,
        });
    }
    Ok(out)
}

fn in_values(
    values: &InValues,
    ty: &CqlType,
    name: &str,
    ctx: &dyn TermContext,
) -> Result<Vec<Option<Bytes>>> {
    match values {
        InValues::Terms(ts) => ts.iter().map(|t| bound(t, ty, name, ctx)).collect(),
        InValues::Marker(m) => {
            let list = CqlType::List(Box::new(ty.clone()));
            match term_to_bytes(&Term::Bind(m.clone()), &list, name, ctx).map_err(invalid)? {
                TermValue::Value(b) => Ok(split_collection(&b)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|e| Some(Bytes::copy_from_slice(e)))
                    .collect()),
                TermValue::Null => Err(Error::Invalid("Invalid null list in IN condition".into())),
                TermValue::Unset => {
                    Err(Error::Invalid("Invalid 'unset' value in condition".into()))
                }
            }
        }
    }
}

fn op_text(op: Operator) -> &'static str {
    match op {
        Operator::Eq => "=",
        Operator::Neq => "!=",
        Operator::Lt => "<",
        Operator::Lte => "<=",
        Operator::Gt => ">",
        Operator::Gte => ">=",
        Operator::Contains => "CONTAINS",
        Operator::ContainsKey => "CONTAINS KEY",
        Operator::Like => "LIKE",
    }
}

/// Whether `ord` (row value against condition value) satisfies `op`.
fn ordering_satisfies(op: Operator, ord: Ordering) -> bool {
    match op {
        Operator::Eq => ord == Ordering::Equal,
        Operator::Neq => ord != Ordering::Equal,
        Operator::Lt => ord == Ordering::Less,
        Operator::Lte => ord != Ordering::Greater,
        Operator::Gt => ord == Ordering::Greater,
        Operator::Gte => ord != Ordering::Less,
        _ => false,
    }
}

/// Cassandra's `compareWithOperator`: `row op value`, where either may be null.
fn compare_with(
    op: Operator,
    ty: &CqlType,
    value: Option<&[u8]>,
    row: Option<&[u8]>,
) -> Result<bool> {
    match (value, row) {
        (None, row) => match op {
            Operator::Eq => Ok(row.is_none()),
            Operator::Neq => Ok(row.is_some()),
            _ => Err(Error::Invalid(format!(
                "Invalid comparison with null for operator \"{}\"",
                op_text(op)
            ))),
        },
        (Some(_), None) => Ok(op == Operator::Neq),
        (Some(v), Some(r)) => Ok(ordering_satisfies(op, compare(ty, r, v))),
    }
}

/// Whether a serialized collection contains `needle` (as an element, a map value, or a map
/// key for CONTAINS KEY).
fn collection_contains(ty: &CqlType, collection: &[u8], needle: &[u8], key: bool) -> bool {
    let eq = |t: &CqlType, x: &[u8]| compare(t, x, needle) == Ordering::Equal;
    match unfrozen(ty) {
        CqlType::List(e) | CqlType::Set(e) => {
            split_collection(collection).is_some_and(|xs| xs.iter().any(|x| eq(e, x)))
        }
        CqlType::Map(k, v) => split_map(collection).is_some_and(|es| {
            es.iter()
                .any(|(mk, mv)| if key { eq(k, mk) } else { eq(v, mv) })
        }),
        _ => false,
    }
}

fn is_empty_collection(v: &[u8]) -> bool {
    v.len() >= 4 && v[..4] == [0, 0, 0, 0]
}

impl ColumnCondition {
    /// Whether the condition holds on `row` (`None`: the row does not exist).
    fn applies_to(&self, row: Option<&Row>) -> Result<bool> {
        let c = &self.column;
        let current = row.and_then(|r| cell_value(r, c));
        if let Some((i, fty)) = &self.field {
            // The field's value: null when the user type is, or the field is (a frozen value
            // written before `ALTER TYPE … ADD` holds fewer fields).
            let value = current.as_deref().and_then(|v| {
                split_tuple(v)
                    .and_then(|fs| fs.get(*i).copied().flatten())
                    .map(Bytes::copy_from_slice)
            });
            return self.compare_value(fty, value.as_deref());
        }
        if let Some(element) = &self.element {
            let Some(element) = element else {
                let what = if matches!(unfrozen(&c.ty), CqlType::Map(..)) {
                    "map"
                } else {
                    "list"
                };
                return Err(Error::Invalid(format!(
                    "Invalid null value for {what} element access"
                )));
            };
            let (_, value_ty) = element_types(c).unwrap_or((CqlType::Blob, CqlType::Blob));
            let current = match (&current, unfrozen(&c.ty)) {
                (Some(m), CqlType::Map(k, _)) => split_map(m).and_then(|es| {
                    es.into_iter()
                        .find(|(mk, _)| compare(k, mk, element) == Ordering::Equal)
                        .map(|(_, v)| Bytes::copy_from_slice(v))
                }),
                (Some(l), CqlType::List(_)) => {
                    let idx = i32::from_be_bytes(
                        element
                            .as_ref()
                            .try_into()
                            .map_err(|_| Error::Invalid("Invalid list index".into()))?,
                    );
                    if idx < 0 {
                        return Err(Error::Invalid(format!("Invalid negative list index {idx}")));
                    }
                    split_collection(l)
                        .and_then(|xs| xs.get(idx as usize).map(|x| Bytes::copy_from_slice(x)))
                }
                _ => None,
            };
            return self.any_value(|v| compare_with(self.op, &value_ty, v, current.as_deref()));
        }
        if matches!(self.op, Operator::Contains | Operator::ContainsKey) {
            return self.compare_value(&c.ty, current.as_deref());
        }
        let multi_cell = c.ty.is_non_frozen_collection();
        if multi_cell {
            // A non-frozen collection: null and empty are the same (no cells), and an empty
            // row collection satisfies nothing but `!=`.
            let frozen = CqlType::Frozen(Box::new(c.ty.clone()));
            for v in &self.values {
                let empty_value = v.as_deref().is_none_or(is_empty_collection);
                if empty_value {
                    match self.op {
                        Operator::Eq if current.is_none() => return Ok(true),
                        Operator::Eq => continue,
                        Operator::Neq => return Ok(current.is_some()),
                        op if v.is_none() => {
                            return Err(Error::Invalid(format!(
                                "Invalid comparison with null for operator \"{}\"",
                                op_text(op)
                            )))
                        }
                        op => {
                            let kind = match &c.ty {
                                CqlType::List(_) => "LIST",
                                CqlType::Set(_) => "SET",
                                _ => "MAP",
                            };
                            return Err(Error::Invalid(format!(
                                "Invalid comparison with an empty {kind} for operator \"{}\"",
                                op_text(op)
                            )));
                        }
                    }
                }
                let Some(cur) = &current else {
                    if self.op == Operator::Neq {
                        return Ok(true);
                    }
                    continue;
                };
                if let Some(v) = v {
                    if ordering_satisfies(self.op, compare(&frozen, cur, v)) {
                        return Ok(true);
                    }
                }
            }
            return Ok(false);
        }
        self.compare_value(&c.ty, current.as_deref())
    }

    /// The condition on one value of type `ty` (a column's, or a user type field's):
    /// CONTAINS / CONTAINS KEY of a collection, else Cassandra's `compareWithOperator`.
    fn compare_value(&self, ty: &CqlType, current: Option<&[u8]>) -> Result<bool> {
        if matches!(self.op, Operator::Contains | Operator::ContainsKey) {
            return self.any_value(|v| {
                let Some(v) = v else {
                    return Err(Error::Invalid(format!(
                        "Invalid comparison with null for operator \"{}\"",
                        op_text(self.op)
                    )));
                };
                Ok(current.is_some_and(|cur| {
                    collection_contains(ty, cur, v, self.op == Operator::ContainsKey)
                }))
            });
        }
        self.any_value(|v| compare_with(self.op, ty, v, current))
    }

    /// True when `test` holds for any of the values (several only for `IN`).
    fn any_value(&self, mut test: impl FnMut(Option<&[u8]>) -> Result<bool>) -> Result<bool> {
        for v in &self.values {
            if test(v.as_deref())? {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// A conditional write on one partition: the IF clause of each row it names, and the writes
/// made when all of them hold.
pub struct CasRequest {
    schema: Arc<TableSchema>,
    key: DecoratedKey,
    conditions: BTreeMap<RowTarget, RowCondition>,
    /// Columns shown when refused: `None` for every column (an `IF [NOT] EXISTS` is part of
    /// the request).
    result_columns: Option<Vec<ColumnDef>>,
    /// Whether the request came from a BATCH (the primary key then leads the result).
    batch: bool,
    /// The request writes the static row / clustering rows (then every static / regular
    /// column is read for the check; otherwise only those the conditions name).
    writes_static: bool,
    writes_rows: bool,
}

impl CasRequest {
    /// A request on partition `key` of a table.
    pub fn new(schema: Arc<TableSchema>, key: DecoratedKey, batch: bool) -> Self {
        CasRequest {
            schema,
            key,
            conditions: BTreeMap::new(),
            result_columns: Some(Vec::new()),
            batch,
            writes_static: false,
            writes_rows: false,
        }
    }

    /// The partition the request is on.
    pub fn key(&self) -> &DecoratedKey {
        &self.key
    }

    /// Notes that the request writes clustering rows (Cassandra's `updatesRegularRows`): the
    /// check then reads every regular column, so a row whose conditioned columns are all null
    /// is still told from a missing one.
    pub fn writes_rows(&mut self) {
        self.writes_rows = true;
    }

    /// Notes that the request writes static columns (Cassandra's `updatesStaticRow`: by the
    /// columns a statement names, whatever their values; in a BATCH, only the statements
    /// with conditions count): the check then reads every static column.
    pub fn writes_static_row(&mut self) {
        self.writes_static = true;
    }

    /// Adds the IF clause of one row, with Cassandra's rules for two statements of a BATCH
    /// naming the same row.
    pub fn add_condition(&mut self, target: RowTarget, condition: RowCondition) -> Result<()> {
        match (&condition, self.conditions.get(&target)) {
            (_, None) => {}
            (RowCondition::Exists, Some(RowCondition::Exists))
            | (RowCondition::NotExists, Some(RowCondition::NotExists)) => return Ok(()),
            (RowCondition::Columns(new), Some(RowCondition::Columns(_))) => {
                let new = new.clone();
                self.note_columns(&new);
                if let Some(RowCondition::Columns(old)) = self.conditions.get_mut(&target) {
                    old.extend(new);
                }
                return Ok(());
            }
            (RowCondition::Exists, Some(RowCondition::NotExists))
            | (RowCondition::NotExists, Some(RowCondition::Exists)) => {
                return Err(Error::Invalid(
                    "Cannot mix IF EXISTS and IF NOT EXISTS conditions for the same row".into(),
                ))
            }
            (RowCondition::Columns(_), Some(_)) => {
                return Err(Error::Invalid(
                    "Cannot mix IF conditions and IF NOT EXISTS for the same row".into(),
                ))
            }
            (c, Some(_)) => {
                let not = if matches!(c, RowCondition::NotExists) {
                    "NOT "
                } else {
                    ""
                };
                return Err(Error::Invalid(format!(
                    "Cannot mix IF conditions and IF {not}EXISTS for the same row"
                )));
            }
        }
        match &condition {
            RowCondition::Columns(cols) => {
                let cols = cols.clone();
                self.note_columns(&cols);
            }
            _ => self.result_columns = None,
        }
        self.conditions.insert(target, condition);
        Ok(())
    }

    fn note_columns(&mut self, conds: &[ColumnCondition]) {
        if let Some(cols) = &mut self.result_columns {
            // Regular conditions first, then static ones (Cassandra's ColumnConditions).
            for kind in [ColumnKind::Regular, ColumnKind::Static] {
                for c in conds.iter().filter(|c| c.column.kind == kind) {
                    if !cols.iter().any(|x| x.id == c.column.id) {
                        cols.push(c.column.clone());
                    }
                }
            }
        }
    }

    fn condition_columns(&self) -> impl Iterator<Item = &ColumnDef> {
        self.conditions.values().flat_map(|c| match c {
            RowCondition::Columns(cs) => cs.iter().map(|c| &c.column).collect::<Vec<_>>(),
            _ => Vec::new(),
        })
    }

    /// Whether column `c` is read for the check (and so shown when refused).
    fn reads(&self, c: &ColumnDef) -> bool {
        match c.kind {
            ColumnKind::PartitionKey | ColumnKind::Clustering => true,
            ColumnKind::Static => {
                self.writes_static || self.condition_columns().any(|x| x.id == c.id)
            }
            ColumnKind::Regular => {
                self.writes_rows || self.condition_columns().any(|x| x.id == c.id)
            }
        }
    }
}

/// Runs a conditional request: its Paxos round (`StorageProxy::cas`) at the request's
/// `levels` (checked first: the serial level must be SERIAL or LOCAL_SERIAL…), in which
/// `writes` makes the mutations to commit — stamped with the round's timestamp, reading at
/// the round's level — once every condition holds. The answer is `[applied] = true`, or the
/// refusal with the current values. A traced request's `trace` hears of its round's
/// messages and reads.
pub fn run(
    ex: &Executor,
    req: &CasRequest,
    levels: Levels,
    wait: Wait,
    trace: Option<&cairn_engine::Trace>,
    mut writes: impl FnMut(&CasRound<'_>) -> Result<Vec<Mutation>>,
) -> Result<ResultSet> {
    let schema = &req.schema;
    let strategy = ex.proxy().replication(&schema.keyspace);
    super::consistency::for_conditional(levels.serial, levels.consistency, &strategy)?;
    let table = ex
        .catalog()
        .db()
        .table_by_id(schema.id)
        .ok_or_else(|| Error::Invalid(format!("unconfigured table {}", schema.name)))?;
    let levels = (levels.serial, levels.consistency);
    ex.proxy()
        .cas(&table, &req.key, levels, wait, trace, |round| match check(
            req, round, &table, wait, trace,
        )? {
            Some(refused) => Ok(CasDecision::Refuse(refused)),
            None => Ok(CasDecision::Apply(
                writes(round)?,
                applied_only(schema, true),
            )),
        })
}

/// Checks a request's conditions against the partition's current state, read in `round`:
/// `None` when they all hold, else the refusal's result.
fn check(
    req: &CasRequest,
    round: &CasRound<'_>,
    table: &Table,
    wait: Wait,
    trace: Option<&cairn_engine::Trace>,
) -> Result<Option<ResultSet>> {
    let schema = &req.schema;
    let mut cmd = ReadCommand::all(super::catalog::now_secs(), wait);
    cmd.trace = trace.cloned();
    let rows: Vec<&ClusteringKey> = req
        .conditions
        .keys()
        .filter_map(|t| match t {
            RowTarget::Row(ck) => Some(ck),
            RowTarget::Static => None,
        })
        .collect();
    let static_only = rows.is_empty();
    if !static_only {
        cmd.slice = Slice::new(
            rows.iter()
                .map(|ck| ClusteringRange::prefix(&ck.0))
                .collect(),
        );
    }
    cmd.include_static = true;
    let mut current = round.read(table, &req.key, &cmd)?;
    if static_only {
        // Static conditions only: the first live row tells a missing partition from one
        // without static content (and is shown when refused). Live as far as the check
        // reads (Cassandra's `cqlLimits(1)` over the columns it queries): a row alive
        // through other columns alone does not count, the next one may.
        if let Some(p) = current.as_mut() {
            let first = p.rows.iter().position(|(_, r)| shown(req, schema, r));
            let rows = std::mem::take(&mut p.rows);
            p.rows = rows
                .into_iter()
                .skip(first.unwrap_or(usize::MAX))
                .take(1)
                .collect();
        }
    }
    let static_row = current
        .as_ref()
        .and_then(|p| p.static_row.as_ref())
        .filter(|r| {
            r.columns
                .iter()
                .any(|(id, _)| read_static(req, schema, *id))
        });
    let find = |ck: &ClusteringKey| {
        current.as_ref().and_then(|p| {
            p.rows
                .iter()
                .find(|(k, r)| k == ck && shown(req, schema, r))
                .map(|(_, r)| r)
        })
    };
    // Every condition is evaluated, so that one that cannot be (a null compared with `<`)
    // fails the request whatever the others say.
    let mut applied = true;
    for (target, condition) in &req.conditions {
        let row = match target {
            RowTarget::Static => static_row,
            RowTarget::Row(ck) => find(ck),
        };
        let holds = match condition {
            RowCondition::Exists => row.is_some(),
            RowCondition::NotExists => row.is_none(),
            RowCondition::Columns(conds) => {
                let mut all = true;
                for c in conds {
                    all &= c.applies_to(row)?;
                }
                all
            }
        };
        applied &= holds;
    }
    if applied {
        return Ok(None);
    }
    Ok(Some(refused(req, current.as_ref(), static_row)))
}

fn read_static(req: &CasRequest, schema: &TableSchema, id: u32) -> bool {
    schema.column_by_id(id).is_some_and(|c| req.reads(c))
}

/// Whether a clustering row exists as far as the check is concerned: its primary key is live
/// (an INSERT), or a column the check read is (Cassandra reads only those columns, so a row
/// alive through others alone is not seen).
fn shown(req: &CasRequest, schema: &TableSchema, row: &Row) -> bool {
    row.marker.is_some()
        || row
            .columns
            .iter()
            .any(|(id, _)| schema.column_by_id(*id).is_some_and(|c| req.reads(c)))
}

fn applied_spec(schema: &TableSchema) -> ColumnSpec {
    ColumnSpec {
        keyspace: schema.keyspace.clone(),
        table: schema.name.clone(),
        name: "[applied]".into(),
        ty: CqlType::Boolean,
    }
}

/// The one-column result `[applied]`.
pub fn applied_only(schema: &TableSchema, applied: bool) -> ResultSet {
    ResultSet {
        columns: Arc::from(vec![applied_spec(schema)]),
        rows: vec![vec![Some(Bytes::from(vec![u8::from(applied)]))]],
        paging_state: None,
    }
}

/// `[applied] = false` and the current values of the rows the check read.
fn refused(
    req: &CasRequest,
    current: Option<&cairn_engine::PartitionResult>,
    static_row: Option<&Row>,
) -> ResultSet {
    let schema = &req.schema;
    let columns: Vec<ColumnDef> = match &req.result_columns {
        None => star_columns(schema),
        Some(conds) => {
            let mut cols: Vec<ColumnDef> = Vec::new();
            if req.batch {
                cols.extend(
                    schema
                        .columns_of(ColumnKind::PartitionKey)
                        .chain(schema.columns_of(ColumnKind::Clustering))
                        .cloned(),
                );
            }
            for c in conds {
                if !cols.iter().any(|x| x.id == c.id) {
                    cols.push(c.clone());
                }
            }
            cols
        }
    };
    let mut specs = vec![applied_spec(schema)];
    specs.extend(columns.iter().map(|c| ColumnSpec {
        keyspace: schema.keyspace.clone(),
        table: schema.name.clone(),
        name: c.name.clone(),
        ty: c.ty.clone(),
    }));
    let layout = schema.clustering_layout();
    let pk = partition_values(schema, &req.key);
    let value = |c: &ColumnDef, ck: Option<&[Bytes]>, row: Option<&Row>| -> Option<Bytes> {
        match c.kind {
            ColumnKind::PartitionKey => {
                let i = schema
                    .columns_of(ColumnKind::PartitionKey)
                    .position(|x| x.id == c.id)?;
                pk.get(i).cloned()
            }
            ColumnKind::Clustering => {
                let i = schema
                    .columns_of(ColumnKind::Clustering)
                    .position(|x| x.id == c.id)?;
                ck?.get(i).cloned()
            }
            _ if !req.reads(c) => None,
            ColumnKind::Static => static_row.and_then(|s| cell_value(s, c)),
            ColumnKind::Regular => row.and_then(|r| cell_value(r, c)),
        }
    };
    let mut rows = Vec::new();
    let no = Some(Bytes::from_static(&[0]));
    for (ck, row) in current.map(|p| p.rows.as_slice()).unwrap_or_default() {
        if !shown(req, schema, row) {
            continue;
        }
        let ckv = layout.decode(&ck.0).unwrap_or_default();
        let mut out = vec![no.clone()];
        out.extend(columns.iter().map(|c| value(c, Some(&ckv), Some(row))));
        rows.push(out);
    }
    if rows.is_empty() && static_row.is_some() {
        let mut out = vec![no.clone()];
        out.extend(columns.iter().map(|c| value(c, None, None)));
        rows.push(out);
    }
    if rows.is_empty() {
        rows.push(vec![no]);
        specs.truncate(1);
    }
    ResultSet {
        columns: Arc::from(specs),
        rows,
        paging_state: None,
    }
}
