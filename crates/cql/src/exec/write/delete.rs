//! DELETE: a partition, rows, ranges of rows, columns or elements, into tombstones.

use super::assignment::{
    assignment_op, check_element_deletion, invalid, put_by_kind, ColumnOp, ListEdit, ListWrite,
};
use super::condition::{check_custom_timestamp, condition_of, conditions_for, static_kinds};
use super::keys::{clustering_keys, keys_of, table_schema};
use super::planned::Planned;
use super::using::{check_counter_conditions, check_counter_using, using};
use crate::ast::{Assignment, Delete, RelationTarget};
use crate::error::{Error, Result};
use crate::exec::catalog::now_secs;
use crate::exec::lwt::RowCondition;
use crate::exec::restrict::{self, Context, Restrictions, StatementKind};
use crate::exec::session::Session;
use crate::exec::Executor;
use crate::values::{term_to_bytes, TermContext, TermValue};
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{
    Cell, ClusteringKey, ColumnData, ComplexColumn, DeletionTime, Mutation, Partition,
    RangeTombstone, Row,
};
use cairn_engine::schema::{ColumnDef, ColumnKind, TableSchema};

pub(super) fn delete(
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
    check_counter_conditions(&schema, &d.conditions)?;
    let condition = condition_of(&d.conditions, &d.using, &schema, ctx)?;
    let target_kinds: Vec<ColumnKind> = d
        .targets
        .iter()
        .filter_map(|t| match t {
            RelationTarget::Column(n)
            | RelationTarget::Element(n, _)
            | RelationTarget::Field(n, _) => schema.column(n).map(|c| c.kind),
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
    check_custom_timestamp(&d.conditions, &d.using)?;
    check_counter_using(&schema, &d.using)?;
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
            ckeys = delete_rows(&schema, &r, condition.is_some(), deletion, &mut update)?;
        } else {
            let ColumnDeletions {
                mut row,
                mut statics,
                element_deletes,
            } = column_deletions(&schema, &d.targets, ctx, ts, now, deletion)?;
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
    Ok(Planned::restricted(
        &r, &schema, muts, conditions, list_edits, deferred,
    ))
}

/// A DELETE without a column list: the partition, the rows named, or the range of rows
/// restricted. Returns the clustering keys deleted (for the IF clause).
fn delete_rows(
    schema: &TableSchema,
    r: &Restrictions,
    conditional: bool,
    deletion: DeletionTime,
    update: &mut Partition,
) -> Result<Vec<ClusteringKey>> {
    let mut ckeys: Vec<ClusteringKey> = Vec::new();
    if !r.clustering_restricted() {
        update.deletion = Some(deletion);
        ckeys = vec![ClusteringKey::empty()];
    } else if r.full_clustering(schema) {
        ckeys = clustering_keys(r, schema)?;
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
        if conditional {
            return Err(Error::Invalid(
                "DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to use IF conditions".into(),
            ));
        }
        for range in r.slice(schema)?.ranges() {
            update.range_tombstones.push(RangeTombstone {
                range: range.clone(),
                deletion,
            });
        }
    }
    Ok(ckeys)
}

/// What a DELETE's column list deletes in each row it names.
struct ColumnDeletions {
    row: Row,
    statics: Row,
    /// List elements by index, which need the list's current elements.
    element_deletes: Vec<(ColumnDef, ListEdit)>,
}

/// A DELETE's column list (`DELETE c, s[x], l[i] FROM …`) into tombstones.
fn column_deletions(
    schema: &TableSchema,
    targets: &[RelationTarget],
    ctx: &dyn TermContext,
    ts: i64,
    now: u32,
    deletion: DeletionTime,
) -> Result<ColumnDeletions> {
    let mut row = Row::default();
    let mut statics = Row::default();
    let mut element_deletes: Vec<(ColumnDef, ListEdit)> = Vec::new();
    for t in targets {
        if let RelationTarget::Element(name, elem) = t {
            let c = schema
                .column(name)
                .ok_or_else(|| Error::undefined_column(schema, name))?;
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
                let path =
                    crate::values::collections::element_path(&c.ty, &element).map_err(invalid)?;
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
        if let RelationTarget::Field(name, field) = t {
            // `DELETE u.f`: a tombstone for the field's cell (Cassandra's `FieldDeletion`).
            let c = schema
                .column(name)
                .ok_or_else(|| Error::undefined_column(schema, name))?;
            let u = match &c.ty {
                CqlType::Udt(u) => u,
                ty if ty.as_udt().is_some() => {
                    return Err(Error::Invalid(format!(
                        "Frozen UDT column {name} does not support field deletions"
                    )))
                }
                _ => {
                    return Err(Error::Invalid(format!(
                        "Invalid field deletion operation for non-UDT column {name}"
                    )))
                }
            };
            let Some(i) = u.field_position(field) else {
                return Err(Error::Invalid(format!(
                    "UDT column {name} does not have a field named {field}"
                )));
            };
            let tombstone = ColumnData::Complex(ComplexColumn {
                deletion: None,
                cells: vec![(
                    crate::values::collections::udt_field_path(i),
                    Cell::tombstone(ts, now),
                )],
            });
            put_by_kind(c, &mut row, &mut statics, tombstone);
            continue;
        }
        let RelationTarget::Column(name) = t else {
            return Err(Error::Invalid(format!("Invalid deletion target {t:?}")));
        };
        let c = schema
            .column(name)
            .ok_or_else(|| Error::undefined_column(schema, name))?;
        let data = if matches!(
            c.ty,
            CqlType::List(_) | CqlType::Set(_) | CqlType::Map(_, _) | CqlType::Udt(_)
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
    Ok(ColumnDeletions {
        row,
        statics,
        element_deletes,
    })
}
