//! The selection of a SELECT: what each result column is, planned once per table schema, and
//! how it is computed from a row (or, for aggregates, from a group of rows).
//!
//! A selector is an expression tree ([`Selector`]): columns, `WRITETIME` / `TTL`, `token(…)`,
//! scalar functions of any selectors (nested), `CAST`, constants, tuples of selectors
//! (`(a, b)`, typed as the tuple of their types), type hints on selectors (`(varint) a`: the
//! value as is, when the hinted type reads it — Cassandra's `WithTypeHint`), and aggregates
//! (`count(*)`, `count`, `min`, `max`, `sum`, `avg` of any selector). Result column names and
//! types are Cassandra's (`system.max(v)`, `cast(v as text)`, `writetime(v)`, `(a, b)`,
//! `(int)a`, `count`).
//!
//! `writetime` / `maxwritetime` / `ttl` take a column and any chain of element and field
//! selections after it ([`CellPath`]): a first `[k]`, `[a..b]` or `.f` on a non-frozen
//! collection or user type picks cells; later ones look inside the picked cell's frozen
//! value, and the cell's time shows only while what they select is there (null otherwise).
//!
//! In a selection with an aggregate, every row of a group feeds the aggregates, and the other
//! selectors show the group's first row (Cassandra's behaviour for non-aggregated columns).

use super::super::TermContext;
use super::elements::{is_empty_collection, ElementSel};
use crate::ast::{
    ArithmeticOp, BindMarker, CellRef, CellStep, ElementRef, FunctionCall, QualifiedName, Select,
    SelectorExpr, Term, TypeName,
};
use crate::error::{Error, Result};
use crate::exec::result::ColumnSpec;
use crate::values::arithmetic;
use crate::values::functions;
use crate::values::masking;
use crate::values::term::{self, term_display};
use crate::values::{term_to_bytes, Accumulator, AggregateKind, BoundValue, TermValue};
use bytes::Bytes;
use cairn_engine::model::types::{unfrozen, CqlType};
use cairn_engine::model::{Cell, ColumnData, DecoratedKey, Row};
use cairn_engine::schema::{ColumnDef, ColumnKind, TableSchema};
use std::sync::Arc;

/// One CQL row as the selection sees it: the partition key's parts, the clustering values
/// (none for a partition's static-only row), the static row and the row.
pub struct RowView<'a> {
    /// The partition key.
    pub key: &'a DecoratedKey,
    /// Its parts' values.
    pub pk: &'a [Bytes],
    /// Clustering values (`None` for a static-only row).
    pub ck: Option<&'a [Bytes]>,
    /// The partition's live static row.
    pub static_row: Option<&'a Row>,
    /// The live row.
    pub row: Option<&'a Row>,
    /// "Now" in seconds (for TTLs).
    pub now: u32,
}

impl RowView<'_> {
    /// The value of a column in this row (`None`: null).
    pub fn value(&self, schema: &TableSchema, c: &ColumnDef) -> Option<Bytes> {
        match c.kind {
            ColumnKind::PartitionKey => {
                let i = schema
                    .columns_of(ColumnKind::PartitionKey)
                    .position(|x| x.id == c.id)?;
                self.pk.get(i).cloned()
            }
            ColumnKind::Clustering => {
                let i = schema
                    .columns_of(ColumnKind::Clustering)
                    .position(|x| x.id == c.id)?;
                self.ck?.get(i).cloned()
            }
            ColumnKind::Static => cell_value(self.static_row?, c),
            ColumnKind::Regular => cell_value(self.row?, c),
        }
    }

    /// The cells whose write times and TTLs `writetime(…)` / `ttl(…)` of column `c`
    /// (or of a selection inside it, `path`) show.
    fn times(&self, c: &ColumnDef, path: &CellPath, ctx: &dyn TermContext) -> Result<Times<'_>> {
        let live_cell = || self.cell(c).filter(|cell| cell.is_live(self.now));
        let times = match &path.cell {
            None if !path.value.is_empty() => Times::One(live_cell()),
            None if c.ty.is_non_frozen_collection() => {
                Times::Each(self.cells(c).map(|(_, c)| c).collect())
            }
            None if matches!(c.ty, CqlType::Udt(_)) => Times::Fields(self.field_cells(c)),
            None => Times::One(live_cell()),
            Some(CellPick::Element(sel)) => {
                let cells = sel.cells(&c.ty, self.cells(c), &sel.bind(ctx)?)?;
                match (sel.is_slice(), path.value.first()) {
                    // `m[a..b][k]`: the cell of element `k` (there while in the slice, below);
                    // `m[a..b][c..d]`: the cells in both slices.
                    (true, Some(ValueStep::Element(_, inner))) => {
                        let inner_cells = inner.cells(&c.ty, self.cells(c), &inner.bind(ctx)?)?;
                        if inner.is_slice() {
                            Times::Each(
                                inner_cells
                                    .into_iter()
                                    .filter(|x| cells.iter().any(|y| std::ptr::eq(*x, *y)))
                                    .collect(),
                            )
                        } else {
                            Times::One(inner_cells.first().copied())
                        }
                    }
                    (true, _) => Times::Each(cells),
                    (false, _) => Times::One(cells.first().copied()),
                }
            }
            Some(CellPick::Field(i)) => Times::One(self.field_cells(c).get(*i).copied().flatten()),
        };
        if path.value.is_empty() || path.slice_of_slice() {
            return Ok(times);
        }
        // Selections inside the picked cell's value: its time shows while what they select
        // is there (a slice: not empty).
        let row = match c.kind {
            ColumnKind::Static => self.static_row,
            _ => self.row,
        };
        let mut value = row.and_then(|r| cell_value(r, c));
        if let (Some(pick), Some(v)) = (&path.cell, &value) {
            value = match pick {
                CellPick::Element(sel) => sel.select(&c.ty, v, &sel.bind(ctx)?)?,
                CellPick::Field(i) => tuple_field(v, *i),
            };
        }
        for step in &path.value {
            let Some(v) = value else { break };
            value = match step {
                ValueStep::Element(ty, sel) => sel
                    .select(ty, &v, &sel.bind(ctx)?)?
                    .filter(|x| !sel.is_slice() || !is_empty_collection(x)),
                ValueStep::Field(i) => tuple_field(&v, *i),
            };
        }
        Ok(match value {
            Some(_) => times,
            None => Times::One(None),
        })
    }

    /// The live cells of a non-frozen collection with their paths, in element order.
    fn cells(&self, c: &ColumnDef) -> impl Iterator<Item = (&Bytes, &Cell)> {
        let row = if c.kind == ColumnKind::Static {
            self.static_row
        } else {
            self.row
        };
        let now = self.now;
        row.and_then(|r| r.columns.iter().find(|(id, _)| *id == c.id))
            .into_iter()
            .flat_map(|(_, d)| match d {
                ColumnData::Complex(cc) => cc.cells.iter().map(|(p, cell)| (p, cell)).collect(),
                ColumnData::Simple(_) => Vec::new(),
            })
            .filter(move |(_, cell)| cell.is_live(now))
    }

    /// The live cells of a non-frozen user type, one slot per field of the type in field
    /// order (`None`: the field is null); empty when no field is set (the value is null).
    fn field_cells(&self, c: &ColumnDef) -> Vec<Option<&Cell>> {
        let count = c.ty.as_udt().map_or(0, |u| u.field_types.len());
        let mut out = Vec::new();
        for (path, cell) in self.cells(c) {
            let Some(i) = crate::values::collections::udt_path_field(path) else {
                continue;
            };
            if i < count {
                out.resize(count, None);
                out[i] = Some(cell);
            }
        }
        out
    }

    fn cell(&self, c: &ColumnDef) -> Option<&Cell> {
        let row = if c.kind == ColumnKind::Static {
            self.static_row
        } else {
            self.row
        }?;
        row.cell(c.id)
    }
}

/// The `i`-th field of a user type (or tuple) value; null when absent (a value written
/// before `ALTER TYPE … ADD` lacks the later fields).
fn tuple_field(v: &[u8], i: usize) -> Option<Bytes> {
    cairn_engine::model::types::framing::split_tuple(v)
        .and_then(|parts| parts.get(i).copied().flatten().map(Bytes::copy_from_slice))
}

/// What `writetime(…)` / `ttl(…)` look at inside their column: the cells a first element,
/// slice or field selection picks in a non-frozen collection or user type, then selections
/// inside the picked cell's (frozen) value — all of them, on a frozen column.
#[derive(Debug, Clone, Default)]
pub struct CellPath {
    /// `c[k]` / `c[a..b]` of a non-frozen collection, `u.f` of a non-frozen user type.
    cell: Option<CellPick>,
    /// Selections inside the value, each with the type of what it applies to. After a slice
    /// `cell`, the first picks cells again (`m[a..b][k]`: that element's cell; `m[a..b][c..d]`:
    /// the cells in both, and nothing after it).
    value: Vec<ValueStep>,
}

/// The cell selection of a [`CellPath`].
#[derive(Debug, Clone)]
enum CellPick {
    Element(Box<ElementSel>),
    /// The field's position.
    Field(usize),
}

/// A selection inside a value, in a [`CellPath`].
#[derive(Debug, Clone)]
enum ValueStep {
    /// On a collection of this type.
    Element(CqlType, Box<ElementSel>),
    /// The field at this position of a user type.
    Field(usize),
}

impl CellPath {
    /// Whether the times are one per element or field: a whole non-frozen collection or
    /// user type, or a slice of a non-frozen collection (or a slice of such a slice).
    fn per_element(&self, c: &ColumnDef) -> bool {
        match (&self.cell, self.value.is_empty()) {
            (None, true) => c.ty.is_non_frozen_collection() || matches!(c.ty, CqlType::Udt(_)),
            (Some(CellPick::Element(sel)), true) => sel.is_slice(),
            _ => self.slice_of_slice(),
        }
    }

    /// `m[a..b][c..d]` on a non-frozen collection: the cells in both slices. Nothing may
    /// follow it (refused when planned).
    fn slice_of_slice(&self) -> bool {
        matches!(&self.cell, Some(CellPick::Element(sel)) if sel.is_slice())
            && matches!(self.value.as_slice(), [ValueStep::Element(_, inner)] if inner.is_slice())
    }

    /// The bind markers in its element keys and slice bounds.
    fn markers(&self, out: &mut Vec<(usize, String, CqlType)>) {
        if let Some(CellPick::Element(sel)) = &self.cell {
            out.extend(sel.markers());
        }
        for step in &self.value {
            if let ValueStep::Element(_, sel) = step {
                out.extend(sel.markers());
            }
        }
    }
}

/// The cells a `writetime(…)` / `ttl(…)` shows the times of.
enum Times<'a> {
    /// One cell's (none: null).
    One(Option<&'a Cell>),
    /// One per element of a non-frozen collection (a list; none: null).
    Each(Vec<&'a Cell>),
    /// One per field of a non-frozen user type, null for a null field (Cassandra 5.0's
    /// `ResultSetBuilder`: a list as long as the type; no field set: null).
    Fields(Vec<Option<&'a Cell>>),
}

/// A column's serialized value in a (live) row. A counter's is the sum of its shards, as a
/// `bigint`.
pub fn cell_value(row: &Row, c: &ColumnDef) -> Option<Bytes> {
    let (_, data) = row.columns.iter().find(|(id, _)| *id == c.id)?;
    match data {
        ColumnData::Simple(cell) if cell.counter => {
            let total = cairn_engine::model::counter::total(&cell.value);
            Some(Bytes::copy_from_slice(&total.to_be_bytes()))
        }
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

/// A selector, planned: an expression over a row's values.
#[derive(Debug, Clone)]
pub enum Selector {
    /// A column's value.
    Column(ColumnDef),
    /// `writetime(c)`, `writetime(c[k])`, `writetime(u.f)`… (`max`: `maxwritetime`).
    WriteTime(ColumnDef, CellPath, bool),
    /// `ttl(c)`, `ttl(c[k])`, `ttl(u.f)`….
    Ttl(ColumnDef, CellPath),
    /// `token(pk…)`.
    Token,
    /// `count(*)`.
    CountAll,
    /// An aggregate of a selector (whose type is the input type).
    Aggregate(AggregateKind, Box<Selector>, CqlType),
    /// A scalar function of selectors: the call with its arguments as type-hinted markers
    /// `0..n`, filled with the arguments' values.
    Function(FunctionCall<Term>, Vec<Selector>),
    /// `CAST(x AS type)`: from, to.
    Cast(Box<Selector>, CqlType, CqlType),
    /// A constant term of a known type (bind markers allowed, bound per execution).
    Constant(Term, CqlType),
    /// `a op b` on values of the operator's parameter types (left, right).
    Arithmetic(ArithmeticOp, Box<Selector>, Box<Selector>, CqlType, CqlType),
    /// `-a` on a value of this numeric type.
    Negate(Box<Selector>, CqlType),
    /// `c[k]` or `c[a..b]` on a collection of this type.
    Element(Box<Selector>, CqlType, ElementSel),
    /// `u.f`: the field at this position of a user type value.
    Field(Box<Selector>, usize),
    /// `(a, b, …)`: a tuple of the selectors' values.
    Tuple(Vec<Selector>),
    /// A masked column's value as its mask shows it (the inner selector is the column,
    /// [`Plan::masked`]).
    Masked(Box<Selector>),
}

impl Selector {
    /// Whether the selector contains an aggregate.
    pub fn is_aggregate(&self) -> bool {
        match self {
            Selector::CountAll | Selector::Aggregate(..) => true,
            _ => self.operands().iter().any(|s| s.is_aggregate()),
        }
    }

    /// The selectors a computed selector (function, cast, operator, element) is computed
    /// from, in order; none for the others.
    fn operands(&self) -> Vec<&Selector> {
        match self {
            Selector::Function(_, args) | Selector::Tuple(args) => args.iter().collect(),
            Selector::Cast(inner, ..)
            | Selector::Negate(inner, _)
            | Selector::Element(inner, ..)
            | Selector::Field(inner, _)
            | Selector::Masked(inner) => {
                vec![inner]
            }
            Selector::Arithmetic(_, l, r, ..) => vec![l, r],
            _ => Vec::new(),
        }
    }

    /// A computed selector's value from its operands' values ([`Selector::operands`]).
    fn combine(&self, values: Vec<Option<Bytes>>, ctx: &dyn TermContext) -> Result<Option<Bytes>> {
        if let Selector::Function(call, _) = self {
            return call_with(call, values, ctx);
        }
        if let Selector::Tuple(_) = self {
            // A tuple of nulls is a tuple, not a null.
            return Ok(Some(Bytes::from(
                cairn_engine::model::types::framing::build_tuple(&values),
            )));
        }
        if let Selector::Masked(inner) = self {
            // A null is masked too (`mask_default` shows its default for it).
            return match inner.as_ref() {
                Selector::Column(c) => match &c.mask {
                    Some(mask) => {
                        masking::apply_column_mask(mask, &c.ty, values.into_iter().next().flatten())
                            .map_err(invalid)
                    }
                    None => Ok(values.into_iter().next().flatten()),
                },
                _ => Ok(values.into_iter().next().flatten()),
            };
        }
        // Null operands give null (Cassandra's operators and casts return null on nulls).
        let mut values = values.into_iter();
        let mut next = || values.next().flatten();
        Ok(match self {
            Selector::Cast(_, from, to) => match next() {
                Some(v) => Some(crate::values::cast(&v, from, to).map_err(invalid)?),
                None => None,
            },
            Selector::Arithmetic(op, _, _, lt, rt) => match (next(), next()) {
                (Some(l), Some(r)) => arithmetic::apply(*op, lt, &l, rt, &r)?,
                _ => None,
            },
            Selector::Negate(_, ty) => match next() {
                Some(v) => arithmetic::negate(ty, &v)?,
                None => None,
            },
            Selector::Element(_, ty, sel) => match next() {
                Some(v) => sel.select(ty, &v, &sel.bind(ctx)?)?,
                None => None,
            },
            // A value written before `ALTER TYPE … ADD` lacks the later fields: null.
            Selector::Field(_, i) => next().and_then(|v| tuple_field(&v, *i)),
            _ => None,
        })
    }

    /// The selector with each column read replaced by what `f` gives for it (`None`: kept).
    pub fn map_columns(&self, f: &mut dyn FnMut(&ColumnDef) -> Option<Selector>) -> Selector {
        let mut map = |s: &Selector| Box::new(s.map_columns(f));
        match self {
            Selector::Column(c) => f(c).unwrap_or_else(|| self.clone()),
            Selector::Aggregate(k, inner, ty) => Selector::Aggregate(*k, map(inner), ty.clone()),
            Selector::Function(call, args) => Selector::Function(
                call.clone(),
                args.iter().map(|a| a.map_columns(f)).collect(),
            ),
            Selector::Cast(inner, from, to) => Selector::Cast(map(inner), from.clone(), to.clone()),
            Selector::Arithmetic(op, l, r, lt, rt) => {
                let l = map(l);
                Selector::Arithmetic(*op, l, map(r), lt.clone(), rt.clone())
            }
            Selector::Negate(inner, ty) => Selector::Negate(map(inner), ty.clone()),
            Selector::Element(inner, ty, sel) => {
                Selector::Element(map(inner), ty.clone(), sel.clone())
            }
            Selector::Field(inner, i) => Selector::Field(map(inner), *i),
            Selector::Tuple(items) => {
                Selector::Tuple(items.iter().map(|a| a.map_columns(f)).collect())
            }
            _ => self.clone(),
        }
    }

    /// The table columns the selector reads.
    pub fn columns<'a>(&'a self, out: &mut Vec<&'a ColumnDef>) {
        match self {
            Selector::Column(c) | Selector::WriteTime(c, ..) | Selector::Ttl(c, _) => out.push(c),
            Selector::Aggregate(_, inner, _) => inner.columns(out),
            _ => self.operands().into_iter().for_each(|a| a.columns(out)),
        }
    }

    /// The bind markers inside element keys, slice bounds and constants: index, name and
    /// type (a constant's are named `[selection]`, as Cassandra names them).
    pub fn markers(&self, out: &mut Vec<(usize, String, CqlType)>) {
        match self {
            Selector::Constant(t, ty) => out.extend(term::marker_types(t, "[selection]", ty)),
            Selector::WriteTime(_, path, _) | Selector::Ttl(_, path) => path.markers(out),
            Selector::Element(inner, _, sel) => {
                inner.markers(out);
                out.extend(sel.markers());
            }
            Selector::Aggregate(_, inner, _) => inner.markers(out),
            _ => self.operands().into_iter().for_each(|a| a.markers(out)),
        }
    }

    /// The value for one row (aggregates are not evaluated here: see [`Group`]).
    pub fn eval(
        &self,
        schema: &TableSchema,
        r: &RowView<'_>,
        ctx: &dyn TermContext,
    ) -> Result<Option<Bytes>> {
        Ok(match self {
            Selector::Column(c) => r.value(schema, c),
            Selector::WriteTime(c, path, max) => match r.times(c, path, ctx)? {
                Times::One(cell) => cell.map(|cell| be(cell.timestamp)),
                Times::Each(cells) if cells.is_empty() => None,
                Times::Each(cells) if *max => cells.iter().map(|c| c.timestamp).max().map(be),
                Times::Each(cells) => Some(list_of(
                    cells
                        .iter()
                        .map(|c| Some(c.timestamp.to_be_bytes().to_vec())),
                )),
                Times::Fields(cells) if cells.is_empty() => None,
                Times::Fields(cells) if *max => {
                    cells.iter().flatten().map(|c| c.timestamp).max().map(be)
                }
                Times::Fields(cells) => Some(list_of(
                    cells
                        .iter()
                        .map(|c| c.map(|c| c.timestamp.to_be_bytes().to_vec())),
                )),
            },
            Selector::Ttl(c, path) => match r.times(c, path, ctx)? {
                Times::One(cell) => cell
                    .and_then(|cell| ttl_left(cell, r.now))
                    .map(|left| Bytes::copy_from_slice(&left.to_be_bytes())),
                Times::Each(cells) if cells.is_empty() => None,
                Times::Each(cells) => {
                    Some(list_of(cells.iter().map(|cell| {
                        ttl_left(cell, r.now).map(|t| t.to_be_bytes().to_vec())
                    })))
                }
                Times::Fields(cells) if cells.is_empty() => None,
                Times::Fields(cells) => Some(list_of(cells.iter().map(|cell| {
                    cell.and_then(|cell| ttl_left(cell, r.now))
                        .map(|t| t.to_be_bytes().to_vec())
                }))),
            },
            Selector::Token => Some(Bytes::copy_from_slice(&r.key.token.0.to_be_bytes())),
            Selector::CountAll | Selector::Aggregate(..) => None,
            Selector::Constant(t, ty) => {
                match term_to_bytes(t, ty, "selection", ctx).map_err(invalid)? {
                    TermValue::Value(b) => Some(b),
                    _ => None,
                }
            }
            _ => {
                let values = self
                    .operands()
                    .into_iter()
                    .map(|a| a.eval(schema, r, ctx))
                    .collect::<Result<Vec<_>>>()?;
                self.combine(values, ctx)?
            }
        })
    }
}

/// A timestamp as a `bigint` value.
fn be(t: i64) -> Bytes {
    Bytes::copy_from_slice(&t.to_be_bytes())
}

/// Seconds a live cell has left (`None`: it does not expire).
fn ttl_left(cell: &Cell, now: u32) -> Option<i32> {
    cell.is_expiring()
        .then(|| cell.local_deletion_time.saturating_sub(now) as i32)
}

/// A serialized list whose elements may be null.
fn list_of(elems: impl Iterator<Item = Option<Vec<u8>>>) -> Bytes {
    let elems: Vec<Option<Vec<u8>>> = elems.collect();
    let mut out = Vec::with_capacity(4 + elems.len() * 12);
    out.extend_from_slice(&(elems.len() as i32).to_be_bytes());
    for e in elems {
        match e {
            Some(b) => {
                out.extend_from_slice(&(b.len() as i32).to_be_bytes());
                out.extend_from_slice(&b);
            }
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    Bytes::from(out)
}

fn invalid(e: impl std::fmt::Display) -> Error {
    Error::Invalid(e.to_string())
}

/// Runs a scalar function on evaluated arguments (a null argument gives null).
fn call_with(
    call: &FunctionCall<Term>,
    values: Vec<Option<Bytes>>,
    ctx: &dyn TermContext,
) -> Result<Option<Bytes>> {
    let args = ArgValues {
        values,
        now: ctx.now_micros(),
    };
    match term::call(call, &args).map_err(invalid)? {
        (_, TermValue::Value(b)) => Ok(Some(b)),
        _ => Ok(None),
    }
}

/// A scalar function's arguments, bound to markers `0..n`.
struct ArgValues {
    values: Vec<Option<Bytes>>,
    now: i64,
}

impl TermContext for ArgValues {
    fn bind(&self, marker: &BindMarker) -> Option<BoundValue> {
        Some(match self.values.get(marker.index).cloned().flatten() {
            Some(b) => TermValue::Value(b),
            None => TermValue::Null,
        })
    }

    fn now_micros(&self) -> i64 {
        self.now
    }
}

/// A selection planned against a table schema.
#[derive(Debug)]
pub struct Plan {
    /// The selected expressions, in order.
    pub selectors: Vec<Selector>,
    /// Result columns.
    pub specs: Arc<[ColumnSpec]>,
    /// Whether the selection aggregates rows.
    pub aggregate: bool,
    /// `SELECT *`.
    pub wildcard: bool,
}

impl Plan {
    /// The plan as a user without `UNMASK` runs it: every read of a masked column's value
    /// gives its masked value (in functions, aggregates, JSON too; `writetime` and `ttl`
    /// stay as they are); `None` when the plan reads no masked column's value.
    pub fn masked(&self) -> Option<Plan> {
        let mut changed = false;
        let selectors = self
            .selectors
            .iter()
            .map(|s| {
                s.map_columns(&mut |c: &ColumnDef| {
                    c.mask.as_ref().map(|_| {
                        changed = true;
                        Selector::Masked(Box::new(Selector::Column(c.clone())))
                    })
                })
            })
            .collect();
        changed.then(|| Plan {
            selectors,
            specs: self.specs.clone(),
            aggregate: self.aggregate,
            wildcard: self.wildcard,
        })
    }

    /// The table columns the selection reads.
    pub fn columns(&self) -> Vec<&ColumnDef> {
        let mut out = Vec::new();
        for s in &self.selectors {
            s.columns(&mut out);
        }
        out
    }

    /// Whether the selection names static columns and nothing but them and partition-key
    /// columns (Cassandra's `selectOnlyStaticColumns`).
    pub fn selects_only_statics(&self, schema: &TableSchema) -> bool {
        if self.wildcard || schema.columns_of(ColumnKind::Static).next().is_none() {
            return false;
        }
        let cols = self.columns();
        cols.iter().any(|c| c.kind == ColumnKind::Static)
            && cols
                .iter()
                .all(|c| matches!(c.kind, ColumnKind::Static | ColumnKind::PartitionKey))
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
    let mut selectors = Vec::new();
    let mut specs = Vec::new();
    let wildcard = s.selectors.is_none();
    match &s.selectors {
        None => {
            for c in star_columns(schema) {
                specs.push(spec(c.name.clone(), c.ty.clone()));
                selectors.push(Selector::Column(c));
            }
        }
        Some(sels) => {
            for sel in sels {
                let (selector, name, ty) = planner(schema).selector(&sel.expr)?;
                if matches!(sel.expr, SelectorExpr::Parenthesized(_)) {
                    // One selector in parentheses could be a one-element tuple: Cassandra
                    // wants a cast to tell.
                    return Err(Error::Invalid(format!(
                        "Cannot infer type for term {name} in selection clause (try using a cast to force a type)"
                    )));
                }
                specs.push(spec(sel.alias.clone().unwrap_or(name), ty));
                selectors.push(selector);
            }
        }
    }
    // Cassandra 5.0 takes `writetime(a), count(*)`: the group's first row's, like any other
    // selector outside an aggregate.
    let aggregate = selectors.iter().any(Selector::is_aggregate);
    Ok(Plan {
        selectors,
        specs: specs.into(),
        aggregate,
        wildcard,
    })
}

fn planner(schema: &TableSchema) -> Planner<'_> {
    Planner { schema }
}

struct Planner<'a> {
    schema: &'a TableSchema,
}

/// A planned selector with its result name and type.
type Planned = (Selector, String, CqlType);

impl Planner<'_> {
    fn column(&self, name: &str) -> Result<ColumnDef> {
        self.schema
            .column(name)
            .cloned()
            .ok_or_else(|| Error::undefined_column(self.schema, name))
    }

    fn selector(&self, e: &SelectorExpr) -> Result<Planned> {
        match e {
            SelectorExpr::Column(n) => {
                let c = self.column(n)?;
                let (name, ty) = (c.name.clone(), c.ty.clone());
                Ok((Selector::Column(c), name, ty))
            }
            SelectorExpr::CountAll => Ok((Selector::CountAll, "count".into(), CqlType::Bigint)),
            SelectorExpr::WriteTime(cr) | SelectorExpr::MaxWriteTime(cr) => {
                let max = matches!(e, SelectorExpr::MaxWriteTime(_));
                let f = if max { "maxwritetime" } else { "writetime" };
                let (c, path, selected) = self.cell_ref(cr, f)?;
                // Of a non-frozen collection or a slice of one: one timestamp per element
                // (the greatest for maxwritetime).
                let ty = if path.per_element(&c) && !max {
                    CqlType::List(Box::new(CqlType::Bigint))
                } else {
                    CqlType::Bigint
                };
                Ok((
                    Selector::WriteTime(c, path, max),
                    format!("{f}({selected})"),
                    ty,
                ))
            }
            SelectorExpr::Ttl(cr) => {
                let (c, path, selected) = self.cell_ref(cr, "ttl")?;
                let ty = if path.per_element(&c) {
                    CqlType::List(Box::new(CqlType::Int))
                } else {
                    CqlType::Int
                };
                Ok((Selector::Ttl(c, path), format!("ttl({selected})"), ty))
            }
            SelectorExpr::Function(f) => self.function(f),
            SelectorExpr::Cast(inner, to) => {
                let (s, name, from) = self.selector(inner)?;
                let to_ty = to
                    .to_cql_type()
                    .ok_or_else(|| Error::Invalid(format!("Unsupported type {to}")))?;
                if cairn_engine::model::types::unfrozen(&from)
                    == cairn_engine::model::types::unfrozen(&to_ty)
                {
                    // A cast to the value's own type is dropped (name and type stay).
                    return Ok((s, name, from));
                }
                if !crate::values::aggregate::can_cast(&from, &to_ty) {
                    return Err(Error::Invalid(crate::values::aggregate::cast_refusal(
                        &name, &to_ty,
                    )));
                }
                let label = format!("cast({name} as {})", to_ty.name());
                Ok((
                    Selector::Cast(Box::new(s), from, to_ty.clone()),
                    label,
                    to_ty,
                ))
            }
            SelectorExpr::Term(t) => {
                let ty = term_type(t).ok_or_else(|| {
                    Error::Invalid(format!(
                        "Cannot infer type for term {} in selection clause (try using a cast to force a type)",
                        term_display(t)
                    ))
                })?;
                Ok((
                    Selector::Constant(t.clone(), ty.clone()),
                    term_display(t),
                    ty,
                ))
            }
            SelectorExpr::Field(inner, field) => {
                let (s, name, ty) = self.selector(inner)?;
                let (i, label, fty) = field_selection(&name, &ty, field)?;
                Ok((Selector::Field(Box::new(s), i), label, fty))
            }
            SelectorExpr::Tuple(items) => self.tuple(items, None),
            SelectorExpr::TypeHint(hint, inner) => self.hinted(hint, inner),
            SelectorExpr::Element(inner, key) => self.element(inner, &ElementRef::Key(key.clone())),
            SelectorExpr::ElementSlice(inner, from, to) => {
                self.element(inner, &ElementRef::Slice(from.clone(), to.clone()))
            }
            SelectorExpr::Arithmetic(op, l, r) => {
                let (l, r) = (self.operand(l)?, self.operand(r)?);
                let sig = arithmetic::resolve(*op, &l.operand(), &r.operand(), None)?;
                let name = format!("{} {} {}", l.name(), op.symbol(), r.name());
                let selector = Selector::Arithmetic(
                    *op,
                    Box::new(l.into_selector(&sig.left)),
                    Box::new(r.into_selector(&sig.right)),
                    sig.left,
                    sig.right,
                );
                Ok((selector, name, sig.ret))
            }
            SelectorExpr::Negate(x) => {
                let x = self.operand(x)?;
                let ty = arithmetic::resolve_negation(&x.operand(), None)?;
                let name = format!("-{}", x.name());
                Ok((
                    Selector::Negate(Box::new(x.into_selector(&ty)), ty.clone()),
                    name,
                    ty,
                ))
            }
            // Inside an expression; at the top of a selection it is refused by [`plan`].
            SelectorExpr::Parenthesized(inner) => {
                let (s, name, ty) = self.selector(inner)?;
                Ok((s, format!("({name})"), ty))
            }
        }
    }

    /// `inner[k]` or `inner[a..b]`.
    fn element(&self, inner: &SelectorExpr, part: &ElementRef) -> Result<Planned> {
        let (s, name, ty) = self.selector(inner)?;
        let (sel, label, out) = ElementSel::plan(&ty, &name, part)?;
        Ok((Selector::Element(Box::new(s), ty, sel), label, out))
    }

    /// The column and the selections inside it of `writetime(…)`, `ttl(…)`, with its text.
    fn cell_ref(&self, cr: &CellRef, f: &str) -> Result<(ColumnDef, CellPath, String)> {
        let c = self.column(&cr.column)?;
        check_cell_column(&c, f)?;
        let (mut name, mut ty) = (c.name.clone(), c.ty.clone());
        let mut path = CellPath::default();
        let multi_cell = c.ty.is_non_frozen_collection() || matches!(c.ty, CqlType::Udt(_));
        for (i, step) in cr.path.iter().enumerate() {
            if path.slice_of_slice() {
                // Cassandra answers these too; not built.
                return Err(Error::Invalid(format!(
                    "{}() of a selection inside a slice of a slice ({name}) is not supported",
                    f.to_ascii_uppercase()
                )));
            }
            let (next_name, next_ty) = match step {
                CellStep::Element(part) => {
                    let (sel, label, out) = ElementSel::plan(&ty, &name, part)?;
                    if i == 0 && multi_cell {
                        path.cell = Some(CellPick::Element(Box::new(sel)));
                    } else {
                        path.value
                            .push(ValueStep::Element(ty.clone(), Box::new(sel)));
                    }
                    (label, out)
                }
                CellStep::Field(field) => {
                    let (at, label, fty) = field_selection(&name, &ty, field)?;
                    if i == 0 && multi_cell {
                        path.cell = Some(CellPick::Field(at));
                    } else {
                        path.value.push(ValueStep::Field(at));
                    }
                    (label, fty)
                }
            };
            (name, ty) = (next_name, next_ty);
        }
        Ok((c, path, name))
    }

    /// `(a, b, …)`: the tuple of the elements' values and types. A constant with no type of
    /// its own takes `types`' (a hint's) when given; without, the tuple's type cannot be
    /// inferred (Cassandra's `BetweenParenthesesOrWithTuple`).
    fn tuple(&self, items: &[SelectorExpr], types: Option<&[CqlType]>) -> Result<Planned> {
        let mut selectors = Vec::with_capacity(items.len());
        let mut names = Vec::with_capacity(items.len());
        let mut elem_types = Vec::with_capacity(items.len());
        let mut untyped = false;
        for (i, item) in items.iter().enumerate() {
            let (s, name, ty) = match item {
                SelectorExpr::Term(t) if term_type(t).is_none() => {
                    let Some(ty) = types.and_then(|ts| ts.get(i)) else {
                        untyped = true;
                        names.push(term_display(t));
                        continue;
                    };
                    (
                        Selector::Constant(t.clone(), ty.clone()),
                        term_display(t),
                        ty.clone(),
                    )
                }
                other => self.selector(other)?,
            };
            selectors.push(s);
            names.push(name);
            elem_types.push(ty);
        }
        let name = format!("({})", names.join(", "));
        if untyped {
            return Err(Error::Invalid(format!(
                "Cannot infer type for term {name} in selection clause (try using a cast to force a type)"
            )));
        }
        Ok((
            Selector::Tuple(selectors),
            name,
            frozen(CqlType::Tuple(elem_types)),
        ))
    }

    /// A type hint's type. A user type is looked up among the types of the table's columns
    /// (the planner has no catalog; Cassandra looks in the keyspace, so one the table does
    /// not use is refused by name), frozen inside a tuple; vectors and custom types are
    /// refused by name too.
    fn hint_type(
        &self,
        hint: &TypeName,
        t: &TypeName,
        inside: bool,
        in_frozen: bool,
    ) -> Result<CqlType> {
        let inner = |t: &TypeName| self.hint_type(hint, t, true, in_frozen).map(Box::new);
        // A user type right inside a collection must be frozen, or the collection (Cassandra's
        // check).
        let element = |t: &TypeName| match t {
            TypeName::UserDefined(_) if !in_frozen => Err(Error::Invalid(format!(
                "Non-frozen UDTs are not allowed inside collections: {hint}"
            ))),
            other => inner(other),
        };
        Ok(match t {
            TypeName::Native(n) => n.clone(),
            TypeName::List(e) => CqlType::List(element(e)?),
            TypeName::Set(e) => CqlType::Set(element(e)?),
            TypeName::Map(k, v) => CqlType::Map(element(k)?, element(v)?),
            TypeName::Tuple(ts) => CqlType::Tuple(
                ts.iter()
                    .map(|t| self.hint_type(hint, t, true, in_frozen))
                    .collect::<Result<Vec<_>>>()?,
            ),
            TypeName::Frozen(e) => {
                CqlType::Frozen(Box::new(self.hint_type(hint, e, false, true)?))
            }
            TypeName::UserDefined(name) => {
                let ks = &self.schema.keyspace;
                if let Some(other) = name.keyspace.as_deref().filter(|k| k != ks) {
                    return Err(Error::Invalid(format!(
                        "Statement on keyspace {ks} cannot refer to a user type in keyspace {other}; user types can only be used in the keyspace they are defined in"
                    )));
                }
                let Some(udt) = self
                    .schema
                    .columns
                    .iter()
                    .find_map(|c| user_type_in(&c.ty, &name.name))
                else {
                    return Err(Error::Invalid(format!(
                        "type hints naming a user type the table does not use are not supported on selectors: ({hint})"
                    )));
                };
                let udt = CqlType::Udt(Box::new(udt));
                if inside {
                    CqlType::Frozen(Box::new(udt))
                } else {
                    udt
                }
            }
            TypeName::Vector(..) | TypeName::Custom(_) => {
                return Err(Error::Invalid(format!(
                    "type hints naming vectors or custom types are not supported on selectors: ({hint})"
                )))
            }
        })
    }

    /// `(type) s` on a selector: its value as is, of the hinted type, when that type takes
    /// the selector's values (Cassandra's `WithTypeHint`: the same type, or one whose values
    /// the hinted type reads as they are; a tuple element by element).
    fn hinted(&self, hint: &TypeName, inner: &SelectorExpr) -> Result<Planned> {
        let hinted = frozen(self.hint_type(hint, hint, false, false)?);
        // User types are named with their keyspace, as Cassandra prints a prepared hint.
        let hint = qualify_user_types(hint, &self.schema.keyspace);
        let refusal = |inner_name: &str| {
            let text = format!("({hint}){inner_name}");
            Error::Invalid(format!(
                "Cannot assign value {text} to {text} of type {}",
                hinted.name()
            ))
        };
        let (s, name, _) = match (inner, unfrozen(&hinted)) {
            (SelectorExpr::Tuple(items), CqlType::Tuple(types)) if items.len() <= types.len() => {
                let planned = self.tuple(items, Some(types))?;
                let CqlType::Tuple(planned_types) = unfrozen(&planned.2) else {
                    return Err(refusal(&planned.1));
                };
                // Each element against its hinted type (Cassandra's `testTupleAssignment`):
                // a constant by how it fits, any other by its type.
                let fits =
                    items.iter().zip(planned_types).zip(types).all(
                        |((item, from), to)| match item {
                            SelectorExpr::Term(t) if term_type(t).is_none() => {
                                crate::values::fit::assignment(t, to).is_assignable()
                            }
                            _ => hint_fits(to, from),
                        },
                    );
                if !fits {
                    return Err(refusal(&planned.1));
                }
                planned
            }
            _ => {
                let planned = self.selector(inner)?;
                if !hint_fits(&hinted, &planned.2) {
                    return Err(refusal(&planned.1));
                }
                planned
            }
        };
        Ok((s, format!("({hint}){name}"), hinted))
    }

    /// An operand of an operator: a selector, or a constant typed by the operator.
    fn operand<'e>(&self, e: &'e SelectorExpr) -> Result<Operand<'e>> {
        Ok(match e {
            SelectorExpr::Term(t) if term_type(t).is_none() => Operand::Term(t),
            SelectorExpr::WriteTime(cr) | SelectorExpr::Ttl(cr) if !cr.path.is_empty() => {
                // Cassandra types `writetime(m[k])` by its column when matching operators:
                // a list for a non-frozen collection or user type, so `writetime(m[k]) + 1`
                // and `writetime(u.f) + 1` are refused.
                let (s, name, ty) = self.selector(e)?;
                let listed = match self.column(&cr.column) {
                    Ok(c) if c.ty.is_non_frozen_collection() || matches!(c.ty, CqlType::Udt(_)) => {
                        CqlType::List(Box::new(ty.clone()))
                    }
                    _ => ty.clone(),
                };
                Operand::Selector(Box::new((s, name, listed)))
            }
            _ => Operand::Selector(Box::new(self.selector(e)?)),
        })
    }

    /// A call whose arguments are all terms, one of them with no type of its own
    /// (`blobAsInt(0x00000001)`): the function's signatures type them, as Cassandra's
    /// resolver does with the candidates of the name ("Type error: 0x1 cannot be passed as
    /// argument 0 of function system.intasblob of type int"), and its literals are read as
    /// those types now ("cannot parse '0000001' as hex bytes"), before any row. `None` for
    /// other calls.
    fn function_of_untyped_terms(&self, f: &FunctionCall<SelectorExpr>) -> Result<Option<Planned>> {
        let terms: Option<Vec<Term>> = f
            .args
            .iter()
            .map(|a| match a {
                SelectorExpr::Term(t) => Some(t.clone()),
                _ => None,
            })
            .collect();
        let Some(terms) = terms.filter(|ts| ts.iter().any(|t| term_type(t).is_none())) else {
            return Ok(None);
        };
        // Native scalar functions only (aggregates and `token` keep their own path); the
        // name is resolved before the arguments are typed, so an unknown one says so.
        let system = f.name.keyspace.as_deref().is_none_or(|k| k == "system");
        let fname = f.name.name.as_str();
        if !system || matches!(fname, "min" | "max" | "sum" | "avg" | "count" | "token") {
            return Ok(None);
        }
        if functions::signatures(fname).is_none()
            && !matches!(fname, "tojson" | "to_json")
            && !crate::values::collection_fns::is_collection_fn(fname)
            && !masking::is_masking_fn(fname)
        {
            return Err(Error::Invalid(format!(
                "Unknown function '{}'",
                qualified(&f.name)
            )));
        }
        let call = FunctionCall {
            name: f.name.clone(),
            args: terms,
        };
        let (name, sig) = crate::values::fit::resolve(&call).map_err(invalid)?;
        for (i, (arg, ty)) in call.args.iter().zip(&sig.args).enumerate() {
            if let Term::Literal(lit) = arg {
                let receiver = format!("arg{i}(system.{name})");
                crate::values::literal::literal_to_bytes(lit, ty, &receiver).map_err(invalid)?;
            }
        }
        let names: Vec<String> = call.args.iter().map(term_display).collect();
        let label = call_label(&name, &names);
        let ret = sig.ret.clone();
        Ok(Some((
            Selector::Constant(Term::Function(call), ret.clone()),
            label,
            ret,
        )))
    }

    fn function(&self, f: &FunctionCall<SelectorExpr>) -> Result<Planned> {
        let system = f.name.keyspace.as_deref().is_none_or(|k| k == "system");
        let fname = f.name.name.as_str();
        if system && fname == "token" {
            let pk: Vec<&str> = self
                .schema
                .columns_of(ColumnKind::PartitionKey)
                .map(|c| c.name.as_str())
                .collect();
            let args: Vec<&str> = f
                .args
                .iter()
                .filter_map(|a| match a {
                    SelectorExpr::Column(n) => Some(n.as_str()),
                    _ => None,
                })
                .collect();
            if args != pk {
                return Err(Error::Invalid(format!(
                    "Invalid arguments for token function: expected the partition key columns ({})",
                    pk.join(", ")
                )));
            }
            return Ok((
                Selector::Token,
                format!("system.token({})", args.join(", ")),
                CqlType::Bigint,
            ));
        }
        if let Some(planned) = self.function_of_untyped_terms(f)? {
            return Ok(planned);
        }
        if system && masking::is_masking_fn(fname) {
            return self.masking_function(f);
        }
        let mut args = Vec::with_capacity(f.args.len());
        let mut names = Vec::with_capacity(f.args.len());
        let mut types = Vec::with_capacity(f.args.len());
        for a in &f.args {
            let (s, n, t) = self.selector(a)?;
            args.push(s);
            names.push(n);
            types.push(t);
        }
        let label = call_label(fname, &names);
        if system && crate::values::collection_fns::is_collection_fn(fname) {
            // Refused here, where the argument is named as the selection names it.
            let ([ty], [name]) = (types.as_slice(), names.as_slice()) else {
                return Err(Error::Invalid(format!(
                    "Invalid number of arguments for function system.{fname}({})",
                    crate::values::collection_fns::parameter(fname)
                )));
            };
            crate::values::collection_fns::signature(fname, ty, name).map_err(invalid)?;
        }
        if system {
            let kind = match fname {
                "min" => Some(AggregateKind::Min),
                "max" => Some(AggregateKind::Max),
                "sum" => Some(AggregateKind::Sum),
                "avg" => Some(AggregateKind::Avg),
                "count" => Some(AggregateKind::Count),
                _ => None,
            };
            if let Some(kind) = kind {
                let (Some(arg), Some(ty), 1) = (args.pop(), types.pop(), f.args.len()) else {
                    return Err(Error::Invalid(format!(
                        "Invalid number of arguments in call to function system.{fname}: 1 required but {} provided",
                        f.args.len()
                    )));
                };
                if kind == AggregateKind::Count && matches!(f.args[..], [SelectorExpr::Tuple(_)]) {
                    // Cassandra finds no `count` overload for a tuple of selectors.
                    return Err(Error::Invalid(format!(
                        "Type error: {} cannot be passed as argument 0 of function system.count of type blob",
                        names.first().map_or("", String::as_str)
                    )));
                }
                if arg.is_aggregate() {
                    return Err(Error::Invalid(
                        "aggregate functions cannot be used as arguments of aggregate functions"
                            .into(),
                    ));
                }
                // Fails early, with Cassandra's text, for sum/avg of non-numbers.
                Accumulator::new(kind, &ty).map_err(invalid)?;
                let out_ty = if kind == AggregateKind::Count {
                    CqlType::Bigint
                } else {
                    ty.clone()
                };
                return Ok((Selector::Aggregate(kind, Box::new(arg), ty), label, out_ty));
            }
        }
        let call = FunctionCall {
            name: f.name.clone(),
            args: types
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    Term::TypeHint(
                        TypeName::Native(t.clone()),
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
        let ty = term::return_type(&call).ok_or_else(|| {
            match functions::signatures(fname) {
                Some(sigs) if system => match sigs.as_slice() {
                    // The argument is named as the selection names it, not as the typed
                    // marker standing for it here.
                    [only] if only.args.len() == types.len() => {
                        let (i, want) = only
                            .args
                            .iter()
                            .enumerate()
                            .find(|(i, t)| types.get(*i) != Some(*t))
                            .unwrap_or((0, &CqlType::Blob));
                        Error::Invalid(format!(
                            "Type error: {} cannot be passed as argument {i} of function system.{fname} of type {}",
                            names.get(i).map_or("", String::as_str),
                            want.name()
                        ))
                    }
                    _ => match crate::values::fit::resolve(&call) {
                        Err(e) => invalid(e),
                        Ok(_) => Error::Invalid(format!(
                            "Invalid call to function {}, none of its type signatures match",
                            qualified(&f.name)
                        )),
                    },
                },
                _ => Error::Invalid(format!("Unknown function '{}'", qualified(&f.name))),
            }
        })?;
        Ok((Selector::Function(call, args), label, ty))
    }

    /// A masking function (`mask_inner(s, 1, 1)`): the selectors among its arguments become
    /// typed markers, its constants stay terms the signature made from the first argument's
    /// type types ([`masking`]); refusals name the arguments as the selection does.
    fn masking_function(&self, f: &FunctionCall<SelectorExpr>) -> Result<Planned> {
        let mut selectors = Vec::new();
        let mut names = Vec::with_capacity(f.args.len());
        let mut args = Vec::with_capacity(f.args.len());
        for a in &f.args {
            match a {
                // Its markers would share numbers with the markers standing for selectors.
                SelectorExpr::Term(Term::Bind(_)) => {
                    return Err(Error::Invalid(format!(
                        "Bind markers are not supported as arguments of system.{} beside selected columns",
                        f.name.name
                    )))
                }
                SelectorExpr::Term(t) if term_type(t).is_none() => {
                    names.push(term_display(t));
                    args.push(t.clone());
                }
                _ => {
                    let (s, n, t) = self.selector(a)?;
                    args.push(Term::TypeHint(
                        TypeName::Native(t),
                        Box::new(Term::Bind(BindMarker {
                            index: selectors.len(),
                            name: None,
                            line: 0,
                            column: 0,
                        })),
                    ));
                    selectors.push(s);
                    names.push(n);
                }
            }
        }
        let call = FunctionCall {
            name: f.name.clone(),
            args,
        };
        let sig = crate::values::fit::masking_signature(&call, &names, true).map_err(invalid)?;
        let label = format!("system.{}({})", f.name.name, names.join(", "));
        Ok((Selector::Function(call, selectors), label, sig.ret))
    }
}

/// An operand of an operator in a selection.
enum Operand<'e> {
    /// A selector of known type.
    Selector(Box<Planned>),
    /// A constant typed by the operator's overload (`v + 1`).
    Term(&'e Term),
}

impl Operand<'_> {
    fn operand(&self) -> arithmetic::Operand<'_> {
        match self {
            Operand::Selector(p) => arithmetic::Operand::typed(&p.2, p.1.clone()),
            Operand::Term(t) => term::operand(t),
        }
    }

    fn name(&self) -> String {
        match self {
            Operand::Selector(p) => p.1.clone(),
            Operand::Term(t) => term_display(t),
        }
    }

    /// The selector, a constant taking the overload's parameter type `ty`.
    fn into_selector(self, ty: &CqlType) -> Selector {
        match self {
            Operand::Selector(p) => p.0,
            Operand::Term(t) => Selector::Constant(t.clone(), ty.clone()),
        }
    }
}

/// `selected.field` on a value of type `ty` shown as `selected`: the field's position, the
/// selection's text and the field's type, or Cassandra's refusal.
fn field_selection(selected: &str, ty: &CqlType, field: &str) -> Result<(usize, String, CqlType)> {
    let Some(u) = ty.as_udt() else {
        return Err(Error::Invalid(format!(
            "Invalid field selection: {selected} of type {} is not a user type",
            ty.name()
        )));
    };
    let Some((i, fty)) = u.field(field) else {
        return Err(Error::Invalid(format!(
            "{selected} of type {} has no field {}",
            ty.name(),
            crate::identifier::quote_identifier(field)
        )));
    };
    Ok((
        i,
        format!("{selected}.{}", crate::identifier::quote_identifier(field)),
        fty.clone(),
    ))
}

/// Whether a selector of type `from` may carry the type hint `to` (Cassandra's
/// `AbstractType.testAssignment` with the hint frozen): `to` reads `from`'s values as they
/// are; a non-frozen collection or user type (many cells) fits only `blob`.
fn hint_fits(to: &CqlType, from: &CqlType) -> bool {
    if from.is_non_frozen_collection() || matches!(from, CqlType::Udt(_)) {
        return *unfrozen(to) == CqlType::Blob;
    }
    crate::values::assign::value_compatible(to, from)
}

/// A type as a tuple selector or a type hint has it: collections, tuples and user types
/// frozen (one value, never cells).
fn frozen(ty: CqlType) -> CqlType {
    match ty {
        CqlType::List(_)
        | CqlType::Set(_)
        | CqlType::Map(..)
        | CqlType::Tuple(_)
        | CqlType::Udt(_) => CqlType::Frozen(Box::new(ty)),
        other => other,
    }
}

/// The user type named `name` in `ty` (at any depth).
fn user_type_in(ty: &CqlType, name: &str) -> Option<cairn_engine::model::types::UserType> {
    match ty {
        CqlType::Udt(u) if u.name == name => Some((**u).clone()),
        CqlType::List(e) | CqlType::Set(e) | CqlType::Frozen(e) => user_type_in(e, name),
        CqlType::Map(k, v) => user_type_in(k, name).or_else(|| user_type_in(v, name)),
        other => other
            .components()
            .and_then(|cs| cs.iter().find_map(|c| user_type_in(c, name))),
    }
}

/// A written type as Cassandra prints a prepared hint: user types named with `keyspace`,
/// frozen inside a tuple or collection (`tuple<int, frozen<ks.ut>>`).
fn qualify_user_types(t: &TypeName, keyspace: &str) -> TypeName {
    // Cassandra freezes the user types inside a tuple or collection, and prints them so.
    let q = |t: &TypeName| {
        Box::new(match qualify_user_types(t, keyspace) {
            u @ TypeName::UserDefined(_) => TypeName::Frozen(Box::new(u)),
            other => other,
        })
    };
    match t {
        TypeName::UserDefined(n) if n.keyspace.is_none() => {
            TypeName::UserDefined(QualifiedName::qualified(keyspace, n.name.clone()))
        }
        TypeName::List(e) => TypeName::List(q(e)),
        TypeName::Set(e) => TypeName::Set(q(e)),
        TypeName::Map(k, v) => TypeName::Map(q(k), q(v)),
        TypeName::Frozen(e) => TypeName::Frozen(Box::new(qualify_user_types(e, keyspace))),
        TypeName::Tuple(ts) => TypeName::Tuple(ts.iter().map(|t| *q(t)).collect()),
        other => other.clone(),
    }
}

/// A native function call's result column name: `system.f(a, b)`, and `cast(a as int)` for
/// the cast functions (`cast_as_int(a)`), as Cassandra names them.
fn call_label(fname: &str, args: &[String]) -> String {
    match (fname.strip_prefix("cast_as_"), args) {
        (Some(to), [arg]) => format!("cast({arg} as {to})"),
        _ => format!("system.{fname}({})", args.join(", ")),
    }
}

fn qualified(n: &QualifiedName) -> String {
    match &n.keyspace {
        Some(k) => format!("{k}.{}", n.name),
        None => n.name.clone(),
    }
}

/// The type of a constant in a selection: only a type hint or a function's return type give
/// one (Cassandra infers none for a bare literal or bind marker).
fn term_type(t: &Term) -> Option<CqlType> {
    match t {
        Term::TypeHint(ty, _) => ty.to_cql_type(),
        Term::Function(call) => term::return_type(call),
        _ => None,
    }
}

fn check_cell_column(c: &ColumnDef, f: &str) -> Result<()> {
    if matches!(c.kind, ColumnKind::PartitionKey | ColumnKind::Clustering) {
        return Err(Error::Invalid(format!(
            "Cannot use selection function {f} on PRIMARY KEY part {}",
            c.name
        )));
    }
    Ok(())
}

/// The aggregation state of one group: an accumulator per aggregate, and the first row's
/// values for everything else.
pub struct Group {
    states: Vec<State>,
}

enum State {
    Count(i64),
    Acc(Box<Accumulator>),
    First(Option<Option<Bytes>>),
    Node(Vec<State>),
}

impl State {
    fn new(s: &Selector) -> State {
        match s {
            Selector::CountAll => State::Count(0),
            Selector::Aggregate(kind, _, ty) => match Accumulator::new(*kind, ty) {
                Ok(acc) => State::Acc(Box::new(acc)),
                Err(_) => State::First(None),
            },
            _ if s.is_aggregate() => {
                State::Node(s.operands().into_iter().map(State::new).collect())
            }
            _ => State::First(None),
        }
    }

    fn add(
        &mut self,
        s: &Selector,
        schema: &TableSchema,
        r: &RowView<'_>,
        ctx: &dyn TermContext,
    ) -> Result<()> {
        match (self, s) {
            (State::Count(n), _) => *n += 1,
            (State::Acc(acc), Selector::Aggregate(_, inner, _)) => {
                let v = inner.eval(schema, r, ctx)?;
                acc.add(v.as_deref());
            }
            (State::Node(children), s) => {
                for (c, a) in children.iter_mut().zip(s.operands()) {
                    c.add(a, schema, r, ctx)?;
                }
            }
            (State::First(first), s) if first.is_none() => {
                *first = Some(s.eval(schema, r, ctx)?);
            }
            _ => {}
        }
        Ok(())
    }

    fn result(&self, s: &Selector, ctx: &dyn TermContext) -> Result<Option<Bytes>> {
        Ok(match (self, s) {
            (State::Count(n), _) => Some(Bytes::copy_from_slice(&n.to_be_bytes())),
            (State::Acc(acc), _) => acc.result(),
            (State::Node(children), s) => {
                let values = children
                    .iter()
                    .zip(s.operands())
                    .map(|(c, a)| c.result(a, ctx))
                    .collect::<Result<Vec<_>>>()?;
                s.combine(values, ctx)?
            }
            (State::First(v), _) => v.clone().flatten(),
        })
    }
}

impl Group {
    /// An empty group for a plan.
    pub fn new(plan: &Plan) -> Group {
        Group {
            states: plan.selectors.iter().map(State::new).collect(),
        }
    }

    /// Adds a row to the group.
    pub fn add(
        &mut self,
        plan: &Plan,
        schema: &TableSchema,
        r: &RowView<'_>,
        ctx: &dyn TermContext,
    ) -> Result<()> {
        for (st, s) in self.states.iter_mut().zip(&plan.selectors) {
            st.add(s, schema, r, ctx)?;
        }
        Ok(())
    }

    /// The group's result row.
    pub fn result(&self, plan: &Plan, ctx: &dyn TermContext) -> Result<Vec<Option<Bytes>>> {
        self.states
            .iter()
            .zip(&plan.selectors)
            .map(|(st, s)| st.result(s, ctx))
            .collect()
    }
}

/// The values of a row for a non-aggregate selection.
pub fn row_values(
    plan: &Plan,
    schema: &TableSchema,
    r: &RowView<'_>,
    ctx: &dyn TermContext,
) -> Result<Vec<Option<Bytes>>> {
    plan.selectors
        .iter()
        .map(|s| s.eval(schema, r, ctx))
        .collect()
}
