//! SET operations and column deletions into cells: `c = v`, `c = c + v`, element and field
//! updates, list edits that need the current list, with Cassandra's checks and texts
//! (including those PREPARE makes: [`check_set_element`], [`check_element_deletion`]).

use crate::ast::{Assignment, Term};
use crate::error::{Error, Result};
use crate::exec::binds::Placeholders;
use crate::exec::restrict::{self};
use crate::exec::Executor;
use crate::values::collections::collection_to_cells;
use crate::values::{term_to_bytes, TermContext, TermValue};
use bytes::Bytes;
use cairn_cluster::consistency::Consistency;
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{
    Cell, ClusteringKey, ColumnData, ComplexColumn, DecoratedKey, DeletionTime, Row,
};
use cairn_engine::schema::{ColumnDef, ColumnKind, TableSchema};
use cairn_engine::{ReadCommand, Wait};

pub(super) fn cell(ts: i64, ttl: u32, now: u32, v: Bytes) -> Cell {
    if ttl > 0 {
        Cell::expiring(ts, ttl, now, v)
    } else {
        Cell::live(ts, v)
    }
}

/// A column's new data from a term (`None` for unset).
pub(super) fn column_data(
    col: &ColumnDef,
    term: &crate::ast::Term,
    ctx: &dyn TermContext,
    ts: i64,
    ttl: u32,
    now: u32,
) -> Result<Option<ColumnData>> {
    if col.ty.is_non_frozen_collection() || matches!(col.ty, CqlType::Udt(_)) {
        // Overwriting a collection or a non-frozen user type: delete what was there (just
        // before this write), then write the new elements or fields.
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

pub(super) fn invalid(e: impl std::fmt::Display) -> Error {
    Error::Invalid(e.to_string())
}

/// Adds column data to a row, merging with what the same statement already set.
pub(super) fn put_column(row: &mut Row, id: u32, data: ColumnData) {
    match row.columns.iter_mut().find(|(c, _)| *c == id) {
        Some((_, existing)) => {
            let old = std::mem::replace(existing, ColumnData::Complex(ComplexColumn::default()));
            *existing = old.merge(data);
        }
        None => row.columns.push((id, data)),
    }
}

fn delta_of(c: &Cell) -> i64 {
    c.value
        .as_ref()
        .try_into()
        .map(i64::from_be_bytes)
        .unwrap_or(0)
}

/// [`put_column`] into the static row or the clustering row, by the column's kind. Two
/// deltas of one counter add up (`SET c = c + 1, c = c - 3`).
pub(super) fn put_by_kind(c: &ColumnDef, row: &mut Row, statics: &mut Row, data: ColumnData) {
    let target = if c.kind == ColumnKind::Static {
        statics
    } else {
        row
    };
    if c.ty == CqlType::Counter {
        let existing = target.columns.iter_mut().find(|(id, _)| *id == c.id);
        if let Some((_, ColumnData::Simple(a))) = existing {
            if let ColumnData::Simple(b) = &data {
                if is_counter_delta(a) && is_counter_delta(b) {
                    let sum = delta_of(a).wrapping_add(delta_of(b));
                    a.value = Bytes::copy_from_slice(&sum.to_be_bytes());
                    return;
                }
            }
        }
    }
    put_column(target, c.id, data);
}

/// An assignment resolved against its column.
pub(super) enum ColumnOp {
    /// Data to write as is.
    Data(ColumnData),
    /// A list edit that needs the list's current elements (read before write).
    List(ListEdit),
}

/// List edits that depend on the list's current contents.
#[derive(Debug, Clone)]
pub(super) enum ListEdit {
    /// `l[i] = v` (`None`: `DELETE l[i]`).
    Index(i32, Option<Bytes>),
    /// `l = l - [v…]`: removes every element equal to one of the values.
    Remove(Vec<Bytes>),
}

/// The refusals Cassandra makes only when it binds values, which a literal in the statement
/// can trigger while its shape is checked: an empty or oversized key, a null or unset key
/// value, a bad TTL or timestamp.
pub(super) fn is_value_error(e: &Error) -> bool {
    restrict::is_key_error(e)
        || matches!(e, Error::Invalid(m) if m.starts_with("Invalid null value")
            || m.starts_with("Invalid unset value")
            || m.starts_with("A TTL must be")
            || m.starts_with("ttl is too large")
            || m.starts_with("Out of bound timestamp"))
}

/// Checks the terms of `assignments` for their columns as Cassandra does when it prepares
/// the operations, before it looks at the WHERE clause: a literal that does not fit its
/// column is refused even when the statement names no row (`… WHERE k = 0 AND c IN ()`) and
/// before what is wrong with the restrictions (F99). Markers stand for placeholders
/// ([`Placeholders`]); what Cassandra checks only on bound values is left to the write.
pub(super) fn prepare_assignments(schema: &TableSchema, assignments: &[Assignment]) -> Result<()> {
    let ctx = Placeholders::new();
    for a in assignments {
        let Some(c) = schema.column(assignment_column(a)) else {
            continue;
        };
        match assignment_op(c, a, &ctx, 0, 0, 0) {
            Err(e) if !is_value_error(&e) => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

/// Resolves one UPDATE assignment.
pub(super) fn assignment_op(
    c: &ColumnDef,
    a: &Assignment,
    ctx: &dyn TermContext,
    ts: i64,
    ttl: u32,
    now: u32,
) -> Result<Option<ColumnOp>> {
    match a {
        Assignment::Set { value, .. } => {
            Ok(column_data(c, value, ctx, ts, ttl, now)?.map(ColumnOp::Data))
        }
        Assignment::Add { value, .. } | Assignment::Prepend { value, .. } => {
            append(c, a, value, ctx, ts, ttl, now)
        }
        Assignment::Subtract { value, .. } => subtract(c, value, ctx, ts, now),
        Assignment::SetElement { key, value, .. } => set_element(c, key, value, ctx, ts, ttl, now),
        // Cassandra's `Operation.SetField` checks; non-frozen user types (which take a
        // field update) are refused when the table is created.
        Assignment::SetField {
            column,
            field,
            value,
        } => {
            let shown = format!(
                "{column}.{field} = {}",
                crate::values::term::term_display(value)
            );
            let u = match &c.ty {
                CqlType::Udt(u) => u,
                CqlType::Frozen(inner) if matches!(**inner, CqlType::Udt(_)) => {
                    return Err(Error::Invalid(format!(
                        "Invalid operation ({shown}) for frozen UDT column {column}"
                    )))
                }
                _ => {
                    return Err(Error::Invalid(format!(
                        "Invalid operation ({shown}) for non-UDT column {column}"
                    )))
                }
            };
            let Some((i, fty)) = u.field(field) else {
                return Err(Error::Invalid(format!(
                    "UDT column {column} does not have a field named {field}"
                )));
            };
            let receiver = format!("{column}.{field}");
            let cell = match term_to_bytes(value, fty, &receiver, ctx)? {
                TermValue::Value(v) => cell(ts, ttl, now, v),
                TermValue::Null => Cell::tombstone(ts, now),
                TermValue::Unset => return Ok(None),
            };
            Ok(Some(complex(vec![(
                crate::values::collections::udt_field_path(i),
                cell,
            )])))
        }
    }
}

/// A collection's elements from a term, as cells (`None` when unset; none when null).
fn elements(
    c: &ColumnDef,
    term: &crate::ast::Term,
    ctx: &dyn TermContext,
) -> Result<Option<Vec<(Bytes, Bytes)>>> {
    match term_to_bytes(term, &c.ty, &c.name, ctx)? {
        TermValue::Unset => Ok(None),
        TermValue::Null => Ok(Some(Vec::new())),
        TermValue::Value(b) => Ok(Some(collection_to_cells(&c.ty, &b, ctx).map_err(invalid)?)),
    }
}

fn complex(cells: Vec<(Bytes, Cell)>) -> ColumnOp {
    ColumnOp::Data(ColumnData::Complex(ComplexColumn {
        deletion: None,
        cells,
    }))
}

/// `c = c + v` and `c = v + c` on a collection, `c = c + v` on a counter.
fn append(
    c: &ColumnDef,
    a: &Assignment,
    value: &crate::ast::Term,
    ctx: &dyn TermContext,
    ts: i64,
    ttl: u32,
    now: u32,
) -> Result<Option<ColumnOp>> {
    if c.ty == CqlType::Counter && matches!(a, Assignment::Add { .. }) {
        return counter_delta(c, value, ctx, ts, false);
    }
    if matches!(a, Assignment::Prepend { .. })
        && matches!(value, crate::ast::Term::List(_))
        && !matches!(
            cairn_engine::model::types::unfrozen(&c.ty),
            CqlType::List(_)
        )
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
    if matches!(c.ty, CqlType::Tuple(_) | CqlType::Udt(_)) && matches!(a, Assignment::Add { .. }) {
        return Err(Error::Invalid(format!(
            "Invalid operation ({shown}) for tuple column {}",
            c.name
        )));
    }
    if !c.ty.is_non_frozen_collection() {
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
    let Some(cells) = elements(c, value, ctx)? else {
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
    Ok(Some(complex(
        cells
            .into_iter()
            .map(|(p, v)| (p, cell(ts, ttl, now, v)))
            .collect(),
    )))
}

/// `c = c + v` / `c = c - v` on a counter (Cassandra's `Constants.Adder` / `Substracter`):
/// the delta as a live `bigint` cell, which the storage proxy turns into this node's shard
/// (`StorageProxy::mutate_counters`). Several in one statement or batch add up
/// ([`put_column`]).
fn counter_delta(
    c: &ColumnDef,
    value: &crate::ast::Term,
    ctx: &dyn TermContext,
    ts: i64,
    negate: bool,
) -> Result<Option<ColumnOp>> {
    let n = match term_to_bytes(value, &c.ty, &c.name, ctx)? {
        TermValue::Unset => return Ok(None),
        TermValue::Null => {
            return Err(Error::Invalid(
                "Invalid null value for counter increment".into(),
            ))
        }
        TermValue::Value(b) => {
            let raw: [u8; 8] = b.as_ref().try_into().map_err(|_| {
                Error::Invalid(format!(
                    "Expected 8 or 0 byte long for counter increment ({})",
                    b.len()
                ))
            })?;
            i64::from_be_bytes(raw)
        }
    };
    let delta = if negate {
        if n == i64::MIN {
            return Err(Error::Invalid(format!(
                "The negation of {n} overflows supported counter precision (signed 8 bytes integer)"
            )));
        }
        -n
    } else {
        n
    };
    Ok(Some(ColumnOp::Data(ColumnData::Simple(Cell::live(
        ts,
        Bytes::copy_from_slice(&delta.to_be_bytes()),
    )))))
}

/// Whether `c` is a counter increment's delta (see [`counter_delta`]).
fn is_counter_delta(c: &Cell) -> bool {
    !c.counter && !c.is_tombstone() && c.value.len() == 8
}

/// `c = c - v`: elements of a set, keys of a map, values of a list.
fn subtract(
    c: &ColumnDef,
    value: &crate::ast::Term,
    ctx: &dyn TermContext,
    ts: i64,
    now: u32,
) -> Result<Option<ColumnOp>> {
    if c.ty == CqlType::Counter {
        return counter_delta(c, value, ctx, ts, true);
    }
    Ok(match &c.ty {
        CqlType::Set(_) => {
            let Some(cells) = elements(c, value, ctx)? else {
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
    })
}

/// `m[k] = v` and `l[i] = v`.
fn set_element(
    c: &ColumnDef,
    key: &crate::ast::Term,
    value: &crate::ast::Term,
    ctx: &dyn TermContext,
    ts: i64,
    ttl: u32,
    now: u32,
) -> Result<Option<ColumnOp>> {
    Ok(match &c.ty {
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
    })
}

/// Cassandra's `SetElement.prepare` checks: `c[k] = v` needs a list or a map that is not
/// frozen.
pub fn check_set_element(c: &ColumnDef, key: &Term, value: &Term) -> Result<()> {
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
pub fn check_element_deletion(c: &ColumnDef) -> Result<()> {
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

pub(super) fn is_frozen_collection(ty: &CqlType) -> bool {
    matches!(ty, CqlType::Frozen(inner) if matches!(inner.as_ref(), CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..)))
}

/// The cells a list edit writes, computed from the row's current list (read before write,
/// as Cassandra does), with Cassandra's texts for a null list and an index out of bounds.
pub(super) fn list_edit_cell(
    ex: &Executor,
    schema: &TableSchema,
    key: &DecoratedKey,
    lw: &ListWrite,
    cl: Consistency,
    wait: Wait,
) -> Result<ColumnData> {
    crate::exec::consistency::for_read_before_write(cl)?;
    let (col, ts, ttl, now) = (&lw.column, lw.ts, lw.ttl, lw.now);
    let table = ex.catalog().require_table(&schema.keyspace, &schema.name)?;
    let mut cmd = ReadCommand::all(now, wait);
    let ck = lw.ck.clone().unwrap_or_else(ClusteringKey::empty);
    cmd.slice =
        cairn_engine::model::Slice::new(vec![cairn_engine::model::ClusteringRange::prefix(&ck.0)]);
    cmd.include_static = col.kind == ColumnKind::Static;
    let current = ex.proxy().read(&table, key, &cmd, cl)?;
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

pub(super) fn assignment_column(a: &Assignment) -> &str {
    match a {
        Assignment::Set { column, .. }
        | Assignment::SetElement { column, .. }
        | Assignment::SetField { column, .. }
        | Assignment::Add { column, .. }
        | Assignment::Prepend { column, .. }
        | Assignment::Subtract { column, .. } => column,
    }
}

/// A list edit of one row, waiting for the list's current elements.
#[derive(Clone)]
pub(super) struct ListWrite {
    /// Index of the mutation (partition) it belongs to.
    pub(super) mutation: usize,
    /// The row (`None`: the static row).
    pub(super) ck: Option<ClusteringKey>,
    pub(super) column: ColumnDef,
    pub(super) edit: ListEdit,
    pub(super) ts: i64,
    pub(super) ttl: u32,
    pub(super) now: u32,
}
