//! SELECT: partitions by key or by token range, a clustering slice, filters, a selection
//! (columns, writetime/ttl, token, aggregates), ORDER BY, limits and paging.
//!
//! Paging state (opaque to drivers): `u8 version | u32 len | partition key | u32 len |
//! clustering key of the last row returned (empty: the partition's static row or nothing) |
//! i64 rows still allowed by LIMIT | u32 rows already returned from that partition`. A page
//! resumes strictly after that position.

use super::catalog::now_secs;
use super::plan_cache::PlanCache;
use super::restrict::{self, Restrictions};
use super::system;
use super::{Binds, ColumnSpec, Executor, Outcome, QueryParams, ResultSet, Session};
use crate::ast::{
    BindMarker, FunctionCall, Operator, Order as AstOrder, Relation, RelationTarget, Select,
    SelectorExpr, Term, TypeName,
};
use crate::error::{Error, Result};
use crate::values::{term_to_bytes, TermValue};
use crate::values::{Accumulator, AggregateKind};
use bytes::Bytes;
use cairn_engine::model::clustering::{ClusteringLayout, Order};
use cairn_engine::model::token::split_composite_partition_key;
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{ClusteringKey, ColumnData, DecoratedKey, PartitionPos, Row, Token};
use cairn_engine::schema::{ColumnDef, ColumnKind, TableSchema};
use cairn_engine::{PartitionResult, ReadCommand};
use std::sync::Arc;

/// One output column of a selection.
#[derive(Debug, Clone)]
pub enum Output {
    /// A column's value.
    Column(ColumnDef),
    /// `writetime(c)`.
    WriteTime(ColumnDef),
    /// `ttl(c)`.
    Ttl(ColumnDef),
    /// `token(pk…)`.
    Token,
    /// `count(*)`.
    Count,
    /// `count(c)`, `sum(c)`, `avg(c)`, `min(c)`, `max(c)`.
    Aggregate(ColumnDef, AggregateKind),
    /// `CAST(c AS type)`.
    Cast(ColumnDef, CqlType),
    /// A scalar function of columns (`blobastext(c)`, `totimestamp(c)`, …): the call with
    /// its arguments as type-hinted bind markers, filled with the row's values.
    Function(FunctionCall<Term>, Vec<ColumnDef>),
    /// A constant.
    Constant(Option<Bytes>),
}

/// A selection planned against a table: outputs with their result specs.
pub struct Plan {
    /// Outputs in order.
    pub outputs: Vec<Output>,
    /// Result columns.
    pub specs: Arc<[ColumnSpec]>,
    /// Whether the selection aggregates rows into one.
    pub aggregate: bool,
}

impl Plan {
    /// The table columns the selection reads (empty for `SELECT *`-free constant selections).
    fn columns(&self) -> Vec<&ColumnDef> {
        let mut out: Vec<&ColumnDef> = Vec::new();
        for o in &self.outputs {
            match o {
                Output::Column(c)
                | Output::WriteTime(c)
                | Output::Ttl(c)
                | Output::Aggregate(c, _)
                | Output::Cast(c, _) => out.push(c),
                Output::Function(_, cols) => out.extend(cols.iter()),
                Output::Token | Output::Count | Output::Constant(_) => {}
            }
        }
        out
    }
}

/// `SELECT *` column order: partition key, clustering, static columns by name, then regular
/// columns by name (Cassandra's `selectOrderIterator`).
pub fn star_columns(schema: &TableSchema) -> Vec<ColumnDef> {
    let mut out: Vec<ColumnDef> = schema
        .columns_of(ColumnKind::PartitionKey)
        .chain(schema.columns_of(ColumnKind::Clustering))
        .cloned()
        .collect();
    for kind in [ColumnKind::Static, ColumnKind::Regular] {
        let mut cols: Vec<ColumnDef> = schema.columns_of(kind).cloned().collect();
        cols.sort_by(|a, b| a.name.cmp(&b.name));
        out.extend(cols);
    }
    out
}

/// Plans the selection of a SELECT on a table.
pub fn plan(schema: &TableSchema, s: &Select) -> Result<Plan> {
    let spec = |name: String, ty: CqlType| ColumnSpec {
        keyspace: schema.keyspace.clone(),
        table: schema.name.clone(),
        name,
        ty,
    };
    let col = |name: &str| {
        schema
            .column(name)
            .cloned()
            .ok_or_else(|| Error::Invalid(format!("Undefined column name {name}")))
    };
    let mut outputs = Vec::new();
    let mut specs = Vec::new();
    match &s.selectors {
        None => {
            for c in star_columns(schema) {
                specs.push(spec(c.name.clone(), c.ty.clone()));
                outputs.push(Output::Column(c));
            }
        }
        Some(sels) => {
            for sel in sels {
                let (out, name, ty) = match &sel.expr {
                    SelectorExpr::Column(n) => {
                        let c = col(n)?;
                        (Output::Column(c.clone()), c.name.clone(), c.ty.clone())
                    }
                    SelectorExpr::CountAll => (Output::Count, "count".to_string(), CqlType::Bigint),
                    SelectorExpr::WriteTime(n) => {
                        let c = col(n)?;
                        check_cell_column(&c, "writetime")?;
                        (
                            Output::WriteTime(c),
                            format!("writetime({n})"),
                            CqlType::Bigint,
                        )
                    }
                    SelectorExpr::Ttl(n) => {
                        let c = col(n)?;
                        check_cell_column(&c, "ttl")?;
                        (Output::Ttl(c), format!("ttl({n})"), CqlType::Int)
                    }
                    SelectorExpr::Function(f) => {
                        let args: Vec<&str> = f
                            .args
                            .iter()
                            .map(|a| match a {
                                SelectorExpr::Column(n) => Ok(n.as_str()),
                                _ => Err(Error::Invalid(
                                    "Nested selector functions are not supported yet".into(),
                                )),
                            })
                            .collect::<Result<_>>()?;
                        match (f.name.name.as_str(), args.as_slice()) {
                            ("token", _) => {
                                let pk: Vec<&str> = schema
                                    .columns_of(ColumnKind::PartitionKey)
                                    .map(|c| c.name.as_str())
                                    .collect();
                                if args != pk {
                                    return Err(Error::Invalid(format!(
                                        "Invalid arguments for token function: expected the partition key columns ({})",
                                        pk.join(", ")
                                    )));
                                }
                                (
                                    Output::Token,
                                    format!("system.token({})", args.join(", ")),
                                    CqlType::Bigint,
                                )
                            }
                            (name @ ("min" | "max" | "sum" | "avg" | "count"), [n]) => {
                                let c = col(n)?;
                                let kind = match name {
                                    "min" => AggregateKind::Min,
                                    "max" => AggregateKind::Max,
                                    "sum" => AggregateKind::Sum,
                                    "avg" => AggregateKind::Avg,
                                    _ => AggregateKind::Count,
                                };
                                // Fails early, with Cassandra's text, for sum/avg of non-numbers.
                                Accumulator::new(kind, &c.ty)
                                    .map_err(|e| Error::Invalid(e.to_string()))?;
                                let ty = if kind == AggregateKind::Count {
                                    CqlType::Bigint
                                } else {
                                    c.ty.clone()
                                };
                                (
                                    Output::Aggregate(c, kind),
                                    format!("system.{name}({n})"),
                                    ty,
                                )
                            }
                            (name, _) => {
                                let cols: Vec<ColumnDef> =
                                    args.iter().map(|n| col(n)).collect::<Result<_>>()?;
                                let call = FunctionCall {
                                    name: f.name.clone(),
                                    args: cols
                                        .iter()
                                        .enumerate()
                                        .map(|(i, c)| {
                                            Term::TypeHint(
                                                TypeName::Native(c.ty.clone()),
                                                Box::new(Term::Bind(BindMarker {
                                                    index: i,
                                                    name: None,
                                                    line: 0,
                                                    column: 0,
                                                })),
                                            )
                                        })
                                        .collect(),
                                };
                                let ty = crate::values::functions::return_type(&call).ok_or_else(
                                    || Error::Invalid(format!("Unknown function '{name}'")),
                                )?;
                                (
                                    Output::Function(call, cols),
                                    format!("system.{name}({})", args.join(", ")),
                                    ty,
                                )
                            }
                        }
                    }
                    SelectorExpr::Cast(inner, to) => {
                        let SelectorExpr::Column(n) = inner.as_ref() else {
                            return Err(Error::Invalid("CAST is only supported on columns".into()));
                        };
                        let c = col(n)?;
                        let to = to
                            .to_cql_type()
                            .ok_or_else(|| Error::Invalid(format!("Unsupported type {to}")))?;
                        (
                            Output::Cast(c, to.clone()),
                            format!("cast({n} as {})", to.name()),
                            to,
                        )
                    }
                    SelectorExpr::Term(Term::Literal(l)) => (
                        Output::Constant(Some(Bytes::copy_from_slice(l.text().as_bytes()))),
                        l.text(),
                        CqlType::Text,
                    ),
                    _ => return Err(Error::Invalid("This selector is not supported yet".into())),
                };
                specs.push(spec(sel.alias.clone().unwrap_or(name), ty));
                outputs.push(out);
            }
        }
    }
    let aggregate = outputs
        .iter()
        .any(|o| matches!(o, Output::Count | Output::Aggregate(..)));
    if aggregate
        && outputs
            .iter()
            .any(|o| matches!(o, Output::WriteTime(_) | Output::Ttl(_)))
    {
        return Err(Error::Invalid(
            "Cannot include writetime() or ttl() with aggregates".into(),
        ));
    }
    Ok(Plan {
        outputs,
        specs: specs.into(),
        aggregate,
    })
}

fn check_cell_column(c: &ColumnDef, f: &str) -> Result<()> {
    if matches!(
        c.ty,
        CqlType::List(_) | CqlType::Set(_) | CqlType::Map(_, _)
    ) {
        return Err(Error::Invalid(format!(
            "Cannot use selection function {f} on non-frozen collection {}",
            c.name
        )));
    }
    if matches!(c.kind, ColumnKind::PartitionKey | ColumnKind::Clustering) {
        return Err(Error::Invalid(format!(
            "Cannot use selection function {f} on PRIMARY KEY part {}",
            c.name
        )));
    }
    Ok(())
}

fn int_term(t: &Option<Term>, what: &str, ctx: &Binds<'_>) -> Result<Option<usize>> {
    let Some(t) = t else { return Ok(None) };
    match term_to_bytes(t, &CqlType::Int, what, ctx).map_err(|e| Error::Invalid(e.to_string()))? {
        TermValue::Value(b) => {
            let v = i32::from_be_bytes(
                b.as_ref()
                    .try_into()
                    .map_err(|_| Error::Invalid(format!("Invalid {what}")))?,
            );
            if v <= 0 {
                return Err(Error::Invalid(format!(
                    "{} must be strictly positive",
                    if what == "[limit]" {
                        "LIMIT"
                    } else {
                        "PER PARTITION LIMIT"
                    }
                )));
            }
            Ok(Some(v as usize))
        }
        _ => Ok(None),
    }
}

/// Where a page stopped.
struct PagingState {
    key: Bytes,
    clustering: Bytes,
    remaining: i64,
    /// Rows already returned from the partition the page stopped in (PER PARTITION LIMIT).
    partition_rows: u32,
}

impl PagingState {
    fn encode(&self) -> Bytes {
        let mut out = vec![1u8];
        for b in [&self.key, &self.clustering] {
            out.extend_from_slice(&(b.len() as u32).to_be_bytes());
            out.extend_from_slice(b);
        }
        out.extend_from_slice(&self.remaining.to_be_bytes());
        out.extend_from_slice(&self.partition_rows.to_be_bytes());
        Bytes::from(out)
    }

    fn decode(b: &[u8]) -> Result<PagingState> {
        let bad = || Error::Invalid("Invalid paging state".into());
        if b.first() != Some(&1) {
            return Err(bad());
        }
        let mut pos = 1usize;
        let mut part = || -> Result<Bytes> {
            let len = b.get(pos..pos + 4).ok_or_else(bad)?;
            let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
            let v = b.get(pos + 4..pos + 4 + len).ok_or_else(bad)?;
            pos += 4 + len;
            Ok(Bytes::copy_from_slice(v))
        };
        let key = part()?;
        let clustering = part()?;
        let rem = b.get(pos..pos + 8).ok_or_else(bad)?;
        let remaining = i64::from_be_bytes(rem.try_into().map_err(|_| bad())?);
        let pr = b.get(pos + 8..pos + 12).ok_or_else(bad)?;
        let partition_rows = u32::from_be_bytes(pr.try_into().map_err(|_| bad())?);
        Ok(PagingState {
            key,
            clustering,
            remaining,
            partition_rows,
        })
    }
}

/// [`plan`] plus the checks a plan must pass for this statement (DISTINCT's rules).
fn checked_plan(schema: &TableSchema, s: &Select) -> Result<Plan> {
    let plan = plan(schema, s)?;
    if s.distinct {
        check_distinct(schema, &plan)?;
    }
    Ok(plan)
}

/// Runs a SELECT; `cache` is the prepared statement's plan cache, if it is one.
pub fn select(
    ex: &Executor,
    session: &Session,
    s: &Select,
    params: &QueryParams,
    cache: Option<&PlanCache<Plan>>,
) -> Result<Outcome> {
    let ks = session.resolve(&s.table.keyspace)?;
    if let Some(v) = system::table(ex, session, &ks, &s.table.name)? {
        return system::select(v, s, params).map(Outcome::Rows);
    }
    let table = ex.catalog().require_table(&ks, &s.table.name)?;
    let schema = table.schema();
    let plan = match cache {
        Some(cache) => cache.get_or_plan(&schema, || checked_plan(&schema, s))?,
        None => Arc::new(checked_plan(&schema, s)?),
    };
    let ctx = Binds::new(params);
    let r = restrict::resolve(
        &schema,
        &s.where_clause,
        &ctx,
        restrict::Context::select(s.allow_filtering, selects_only_statics(&schema, &plan)),
    )?;
    let reversed = ordering(&schema, s, &r)?;
    let limit = int_term(&s.limit, "[limit]", &ctx)?;
    let per_partition = int_term(&s.per_partition_limit, "[per_partition_limit]", &ctx)?;
    let page_size = params
        .page_size
        .filter(|p| *p > 0 && !plan.aggregate)
        .map(|p| p as usize);
    let resume = params
        .paging_state
        .as_ref()
        .filter(|b| !b.is_empty())
        .map(|b| PagingState::decode(b))
        .transpose()?;
    let mut remaining = match &resume {
        Some(p) => p.remaining.max(0) as usize,
        None => limit.unwrap_or(usize::MAX),
    };
    if r.empty {
        // An empty IN on a key column selects nothing.
        return Ok(Outcome::Rows(
            Rows::new(&schema, &plan, &r, s.distinct).finish(None),
        ));
    }
    let slice = r.slice(&schema)?;
    let now = now_secs();
    let mut cmd = ReadCommand::all(now);
    cmd.slice = slice.clone();
    cmd.reversed = reversed;
    // DISTINCT reads one row to prove the partition live, then emits only key and statics.
    cmd.limit = if s.distinct { Some(1) } else { per_partition };
    cmd.include_static = true;

    let mut out = Rows::new(&schema, &plan, &r, s.distinct);
    let mut last: Option<(DecoratedKey, Option<ClusteringKey>, usize)> = None;
    let mut more = false;
    // `prior`: rows of this partition returned by earlier pages.
    let mut visit = |p: PartitionResult, out: &mut Rows<'_>, prior: usize| -> bool {
        let budget = page_size
            .map_or(usize::MAX, |ps| ps.saturating_sub(out.rows.len()))
            .min(remaining);
        let key = p.key.clone();
        let (taken, last_ck, partition_done) = out.add(p, budget);
        remaining = remaining.saturating_sub(taken);
        if taken > 0 || !partition_done {
            last = Some((key, last_ck, prior + taken));
        }
        let page_full = page_size.is_some_and(|ps| out.rows.len() >= ps);
        if remaining == 0 {
            return false;
        }
        if page_full || !partition_done {
            more = true;
            return false;
        }
        true
    };

    // A page resumes strictly after the last row it returned; a partition whose last
    // output was its static row (or a DISTINCT key) is finished.
    let resume_key = resume.as_ref().map(|p| DecoratedKey::new(p.key.clone()));
    let resumed_cmd = |p: &PagingState| -> Option<ReadCommand> {
        if p.clustering.is_empty() || s.distinct {
            return None;
        }
        let mut c = cmd.clone();
        c.slice = slice.resume_after(&p.clustering, reversed);
        c.include_static = false;
        if let Some(l) = per_partition {
            let left = l.saturating_sub(p.partition_rows as usize);
            if left == 0 {
                return None;
            }
            c.limit = Some(left);
        }
        Some(c)
    };
    let carried = resume.as_ref().map_or(0, |p| p.partition_rows as usize);
    match &r.keys {
        Some(keys) => {
            // Keys come in value order: a page resumes at the key it stopped in.
            let from = resume_key
                .as_ref()
                .and_then(|rk| keys.iter().position(|k| k == rk))
                .unwrap_or(0);
            for key in keys.iter().skip(from) {
                let c = match (&resume, &resume_key) {
                    (Some(p), Some(rk)) if key == rk => match resumed_cmd(p) {
                        Some(c) => c,
                        None => continue,
                    },
                    _ => cmd.clone(),
                };
                let prior = if resume_key.as_ref() == Some(key) {
                    carried
                } else {
                    0
                };
                if let Some(p) = table.read(key, &c)? {
                    if !visit(p, &mut out, prior) {
                        break;
                    }
                }
            }
        }
        None => {
            let start_pos = match &resume_key {
                Some(k) => PartitionPos::After(k.clone()),
                None => match r.token_start {
                    Some((t, true)) => PartitionPos::TokenStart(Token(t)),
                    Some((t, false)) if t < i64::MAX => PartitionPos::TokenStart(Token(t + 1)),
                    Some(_) => return Ok(Outcome::Rows(out.finish(None))),
                    None => PartitionPos::TokenStart(Token::MIN),
                },
            };
            let end = match r.token_end {
                Some((t, true)) => Some(Token(t)),
                Some((t, false)) if t > i64::MIN => Some(Token(t - 1)),
                Some(_) => return Ok(Outcome::Rows(out.finish(None))),
                None => None,
            };
            let mut go_on = true;
            if let (Some(p), Some(rk)) = (&resume, &resume_key) {
                if let Some(c) = resumed_cmd(p) {
                    if let Some(part) = table.read(rk, &c)? {
                        go_on = visit(part, &mut out, carried);
                    }
                }
            }
            if go_on {
                let scan = ex.catalog().db().scan(
                    &schema.keyspace,
                    &schema.name,
                    start_pos,
                    end,
                    cmd.clone(),
                )?;
                for p in scan {
                    if !visit(p?, &mut out, 0) {
                        break;
                    }
                }
            }
        }
    }
    let state = out_state(&last, more, remaining);
    Ok(Outcome::Rows(out.finish(state)))
}

/// Whether a selection names static columns and nothing but them and partition-key columns
/// (Cassandra's `selectOnlyStaticColumns`): its clustering columns may not be restricted.
fn selects_only_statics(schema: &TableSchema, plan: &Plan) -> bool {
    let cols = plan.columns();
    cols.iter().any(|c| c.kind == ColumnKind::Static)
        && cols
            .iter()
            .all(|c| matches!(c.kind, ColumnKind::Static | ColumnKind::PartitionKey))
        && schema.columns_of(ColumnKind::Static).next().is_some()
}

/// Cassandra's rules for SELECT DISTINCT: partition key (all of it) and static columns only.
fn check_distinct(schema: &TableSchema, plan: &Plan) -> Result<()> {
    let mut pk_seen = 0;
    for o in &plan.outputs {
        match o {
            Output::Column(c) if c.kind == ColumnKind::PartitionKey => pk_seen += 1,
            Output::Column(c) if c.kind == ColumnKind::Static => {}
            Output::Column(c) => {
                return Err(Error::Invalid(format!(
                    "SELECT DISTINCT queries must only request partition key columns and/or static columns (not {})",
                    c.name
                )))
            }
            Output::Count | Output::Token => {}
            _ => {
                return Err(Error::Invalid(
                    "SELECT DISTINCT queries must only request partition key columns and/or static columns".into(),
                ))
            }
        }
    }
    let pk: Vec<&str> = schema
        .columns_of(ColumnKind::PartitionKey)
        .map(|c| c.name.as_str())
        .collect();
    if pk_seen < pk.len() && !plan.aggregate {
        let missing: Vec<&str> = pk
            .iter()
            .filter(|n| {
                !plan
                    .outputs
                    .iter()
                    .any(|o| matches!(o, Output::Column(c) if c.name == **n))
            })
            .copied()
            .collect();
        return Err(Error::Invalid(format!(
            "SELECT DISTINCT queries must request all the partition key columns (missing {})",
            missing.join(", ")
        )));
    }
    Ok(())
}

fn out_state(
    last: &Option<(DecoratedKey, Option<ClusteringKey>, usize)>,
    more: bool,
    remaining: usize,
) -> Option<Bytes> {
    if !more || remaining == 0 {
        return None;
    }
    let (key, ck, rows) = last.as_ref()?;
    Some(
        PagingState {
            key: key.key.clone(),
            clustering: ck.as_ref().map(|c| c.0.clone()).unwrap_or_default(),
            remaining: i64::try_from(remaining).unwrap_or(i64::MAX),
            partition_rows: u32::try_from(*rows).unwrap_or(u32::MAX),
        }
        .encode(),
    )
}

/// Whether rows come in reverse clustering order (ORDER BY against the table's order).
fn ordering(schema: &TableSchema, s: &Select, r: &Restrictions) -> Result<bool> {
    if s.order_by.is_empty() {
        return Ok(false);
    }
    if r.keys.is_none() {
        return Err(Error::Invalid(
            "ORDER BY is only supported when the partition key is restricted by an EQ or an IN."
                .into(),
        ));
    }
    let ck: Vec<&ColumnDef> = schema.columns_of(ColumnKind::Clustering).collect();
    let mut reversed = None;
    for (i, (name, ord)) in s.order_by.iter().enumerate() {
        let c = ck.get(i).filter(|c| c.name == *name).ok_or_else(|| {
            if ck.iter().any(|c| c.name == *name) {
                Error::Invalid("Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY".into())
            } else {
                Error::Invalid(format!(
                    "Order by is currently only supported on the clustered columns of the PRIMARY KEY, got {name}"
                ))
            }
        })?;
        let natural = matches!(
            (c.order, ord),
            (Order::Asc, AstOrder::Asc) | (Order::Desc, AstOrder::Desc)
        );
        match reversed {
            None => reversed = Some(!natural),
            Some(rev) if rev == natural => {
                return Err(Error::Invalid("Unsupported order by relation".into()))
            }
            _ => {}
        }
    }
    Ok(reversed.unwrap_or(false))
}

/// Accumulates result rows.
struct Rows<'a> {
    schema: &'a TableSchema,
    plan: &'a Plan,
    r: &'a Restrictions,
    distinct: bool,
    layout: ClusteringLayout,
    rows: Vec<Vec<Option<Bytes>>>,
    count: i64,
    accumulators: Vec<Option<Accumulator>>,
    first_row: Option<Vec<Option<Bytes>>>,
}

impl<'a> Rows<'a> {
    fn new(schema: &'a TableSchema, plan: &'a Plan, r: &'a Restrictions, distinct: bool) -> Self {
        Rows {
            schema,
            plan,
            r,
            distinct,
            layout: schema.clustering_layout(),
            rows: Vec::new(),
            count: 0,
            accumulators: plan
                .outputs
                .iter()
                .map(|o| match o {
                    Output::Aggregate(c, kind) => Accumulator::new(*kind, &c.ty).ok(),
                    _ => None,
                })
                .collect(),
            first_row: None,
        }
    }

    /// Adds a partition's rows, at most `budget`; returns (rows taken, clustering key of
    /// the last one taken, whether the partition was exhausted).
    fn add(&mut self, p: PartitionResult, budget: usize) -> (usize, Option<ClusteringKey>, bool) {
        let pk = partition_values(self.schema, &p.key);
        let static_row = p.static_row.as_ref();
        let mut taken = 0;
        let mut last = None;
        let selects_only_static = self.distinct
            || (p.rows.is_empty()
                && self.r.prefixes.is_empty()
                && self.r.slice_bounds.is_none()
                && static_row.is_some());
        if selects_only_static {
            if budget == 0 {
                return (0, None, false);
            }
            if self.passes(&pk, None, static_row, None) {
                self.emit(&p.key, &pk, None, static_row, None);
                taken += 1;
            }
            return (taken, None, true);
        }
        let n = p.rows.len();
        for (i, (ck, row)) in p.rows.into_iter().enumerate() {
            if taken >= budget {
                return (taken, last, false);
            }
            let ckv = self.layout.decode(&ck.0).unwrap_or_default();
            if self.passes(&pk, Some(&ckv), static_row, Some(&row)) {
                self.emit(&p.key, &pk, Some(&ckv), static_row, Some(&row));
                taken += 1;
            }
            last = Some(ck);
            if i + 1 == n {
                return (taken, last, true);
            }
        }
        (taken, last, true)
    }

    fn value(
        &self,
        c: &ColumnDef,
        pk: &[Bytes],
        ck: Option<&[Bytes]>,
        st: Option<&Row>,
        row: Option<&Row>,
    ) -> Option<Bytes> {
        match c.kind {
            ColumnKind::PartitionKey => {
                let i = self
                    .schema
                    .columns_of(ColumnKind::PartitionKey)
                    .position(|x| x.id == c.id)?;
                pk.get(i).cloned()
            }
            ColumnKind::Clustering => {
                let i = self
                    .schema
                    .columns_of(ColumnKind::Clustering)
                    .position(|x| x.id == c.id)?;
                ck?.get(i).cloned()
            }
            ColumnKind::Static => cell_value(st?, c),
            ColumnKind::Regular => cell_value(row?, c),
        }
    }

    fn passes(
        &self,
        pk: &[Bytes],
        ck: Option<&[Bytes]>,
        st: Option<&Row>,
        row: Option<&Row>,
    ) -> bool {
        self.r
            .filters
            .iter()
            .all(|f| f.matches(self.value(&f.column, pk, ck, st, row).as_deref()))
    }

    fn emit(
        &mut self,
        key: &DecoratedKey,
        pk: &[Bytes],
        ck: Option<&[Bytes]>,
        st: Option<&Row>,
        row: Option<&Row>,
    ) {
        let now = now_secs();
        let mut out = Vec::with_capacity(self.plan.outputs.len());
        for (i, o) in self.plan.outputs.iter().enumerate() {
            let v = match o {
                Output::Column(c) => self.value(c, pk, ck, st, row),
                Output::WriteTime(c) => cell_of(
                    if c.kind == ColumnKind::Static {
                        st
                    } else {
                        row
                    },
                    c,
                )
                .filter(|cell| cell.is_live(now))
                .map(|cell| Bytes::copy_from_slice(&cell.timestamp.to_be_bytes())),
                Output::Ttl(c) => cell_of(
                    if c.kind == ColumnKind::Static {
                        st
                    } else {
                        row
                    },
                    c,
                )
                .filter(|cell| cell.is_live(now) && cell.is_expiring())
                .map(|cell| {
                    let left = cell.local_deletion_time.saturating_sub(now) as i32;
                    Bytes::copy_from_slice(&left.to_be_bytes())
                }),
                Output::Token => Some(Bytes::copy_from_slice(&key.token.0.to_be_bytes())),
                Output::Count => {
                    self.count += 1;
                    None
                }
                Output::Aggregate(c, _) => {
                    let v = self.value(c, pk, ck, st, row);
                    if let Some(acc) = self.accumulators.get_mut(i).and_then(Option::as_mut) {
                        acc.add(v.as_deref());
                    }
                    None
                }
                Output::Cast(c, to) => self
                    .value(c, pk, ck, st, row)
                    .and_then(|v| crate::values::cast(&v, &c.ty, to).ok()),
                Output::Function(call, cols) => {
                    let values: Vec<Option<Bytes>> = cols
                        .iter()
                        .map(|c| self.value(c, pk, ck, st, row))
                        .collect();
                    let ctx = RowArgs(values);
                    match crate::values::functions::call(call, &ctx) {
                        Ok((_, TermValue::Value(b))) => Some(b),
                        _ => None,
                    }
                }
                Output::Constant(c) => c.clone(),
            };
            out.push(v);
        }
        if self.plan.aggregate {
            if self.first_row.is_none() {
                self.first_row = Some(out);
            }
        } else {
            self.rows.push(out);
        }
    }

    fn finish(mut self, paging_state: Option<Bytes>) -> ResultSet {
        if self.plan.aggregate {
            let first = self.first_row.take();
            let mut row = Vec::with_capacity(self.plan.outputs.len());
            for (i, o) in self.plan.outputs.iter().enumerate() {
                row.push(match o {
                    Output::Count => Some(Bytes::copy_from_slice(&self.count.to_be_bytes())),
                    Output::Aggregate(..) => self
                        .accumulators
                        .get(i)
                        .and_then(Option::as_ref)
                        .and_then(Accumulator::result),
                    _ => first.as_ref().and_then(|r| r.get(i).cloned().flatten()),
                });
            }
            self.rows = vec![row];
        }
        ResultSet {
            columns: self.plan.specs.clone(),
            rows: self.rows,
            paging_state,
        }
    }
}

/// The partition-key column values of a key.
pub fn partition_values(schema: &TableSchema, key: &DecoratedKey) -> Vec<Bytes> {
    let n = schema.columns_of(ColumnKind::PartitionKey).count();
    if n <= 1 {
        vec![key.key.clone()]
    } else {
        split_composite_partition_key(&key.key, n).unwrap_or_default()
    }
}

fn cell_of<'r>(row: Option<&'r Row>, c: &ColumnDef) -> Option<&'r cairn_engine::model::Cell> {
    row?.cell(c.id)
}

/// A column's serialized value in a (live) row.
pub fn cell_value(row: &Row, c: &ColumnDef) -> Option<Bytes> {
    let (_, data) = row.columns.iter().find(|(id, _)| *id == c.id)?;
    match data {
        ColumnData::Simple(cell) => Some(cell.value.clone()),
        ColumnData::Complex(cc) => {
            if cc.cells.is_empty() {
                return None;
            }
            let cells: Vec<(Bytes, Bytes)> = cc
                .cells
                .iter()
                .map(|(p, cell)| (p.clone(), cell.value.clone()))
                .collect();
            crate::values::collections::cells_to_collection(&c.ty, &cells).ok()
        }
    }
}

/// A scalar function's arguments: the row's values, bound to markers 0..n.
struct RowArgs(Vec<Option<Bytes>>);

impl crate::values::TermContext for RowArgs {
    fn bind(&self, marker: &BindMarker) -> Option<crate::values::BoundValue> {
        Some(match self.0.get(marker.index).cloned().flatten() {
            Some(b) => TermValue::Value(b),
            None => TermValue::Null,
        })
    }

    fn now_micros(&self) -> i64 {
        super::catalog::now_micros()
    }
}

/// Checks a relation list against a virtual table's rows: `=` and `IN` on any column.
pub fn virtual_matches(
    specs: &[ColumnSpec],
    row: &[Option<Bytes>],
    where_clause: &[Relation],
    params: &QueryParams,
) -> Result<bool> {
    let ctx = Binds::new(params);
    for rel in where_clause {
        let (name, values): (&str, Vec<&Term>) = match rel {
            Relation::Compare {
                target: RelationTarget::Column(n),
                op: Operator::Eq,
                value,
            } => (n, vec![value]),
            Relation::In {
                target: RelationTarget::Column(n),
                values: crate::ast::InValues::Terms(ts),
            } => (n, ts.iter().collect()),
            _ => {
                return Err(Error::Invalid(
                    "Unsupported restriction on a system table".into(),
                ))
            }
        };
        let i = specs
            .iter()
            .position(|s| s.name == name)
            .ok_or_else(|| Error::Invalid(format!("Undefined column name {name}")))?;
        let ty = &specs[i].ty;
        let mut any = false;
        for t in values {
            if let TermValue::Value(v) =
                term_to_bytes(t, ty, name, &ctx).map_err(|e| Error::Invalid(e.to_string()))?
            {
                if row.get(i).cloned().flatten().as_deref() == Some(v.as_ref()) {
                    any = true;
                }
            }
        }
        if !any {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::Statement;

    fn star_select() -> Select {
        match crate::parse_statement("SELECT * FROM ks.t").map(|p| p.statement) {
            Ok(Statement::Select(s)) => s,
            other => panic!("not a SELECT: {other:?}"),
        }
    }

    fn names(plan: &Plan) -> Vec<&str> {
        plan.specs.iter().map(|c| c.name.as_str()).collect()
    }

    #[test]
    fn plan_cache_replans_for_a_new_schema() -> Result<()> {
        let s = star_select();
        let v1 = Arc::new(
            TableSchema::new("ks", "t")
                .with_column("k", CqlType::Int, ColumnKind::PartitionKey)
                .with_column("a", CqlType::Int, ColumnKind::Regular),
        );
        let cache = PlanCache::default();
        let first = cache.get_or_plan(&v1, || checked_plan(&v1, &s))?;
        assert_eq!(names(&first), ["k", "a"]);
        // Same schema: the same plan, not a new one.
        assert!(Arc::ptr_eq(
            &first,
            &cache.get_or_plan(&v1, || checked_plan(&v1, &s))?
        ));
        // ALTER TABLE ADD gives the table a new schema; `SELECT *` must see the new column.
        let v2 = Arc::new(
            (*v1)
                .clone()
                .with_column("b", CqlType::Text, ColumnKind::Regular),
        );
        let replanned = cache.get_or_plan(&v2, || checked_plan(&v2, &s))?;
        assert_eq!(names(&replanned), ["k", "a", "b"]);
        Ok(())
    }
}
