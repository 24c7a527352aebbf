//! UPDATE: the named rows (or static row) of each partition, set by its assignments.

use super::assignment::ListWrite;
use super::assignment::{
    assignment_column, assignment_op, prepare_assignments, put_by_kind, ColumnOp, ListEdit,
};
use super::condition::{check_custom_timestamp, condition_of, conditions_for, static_only};
use super::keys::{clustering_of, keys_of, table_schema};
use super::planned::Planned;
use super::using::{check_counter_conditions, check_counter_using, using_deferring};
use crate::ast::{Assignment, Conditions, Update};
use crate::error::{Error, Result};
use crate::exec::catalog::now_secs;
use crate::exec::restrict::{self, Context, StatementKind};
use crate::exec::session::Session;
use crate::exec::Executor;
use crate::values::TermContext;
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{Mutation, Partition, Row};
use cairn_engine::schema::{ColumnDef, ColumnKind, TableSchema};
use std::collections::BTreeSet;

pub(super) fn update(
    ex: &Executor,
    session: &Session,
    u: &Update,
    ctx: &dyn TermContext,
    default_ts: Option<i64>,
) -> Result<Planned> {
    let schema = table_schema(ex, session, &u.table)?;
    let conditional = !matches!(u.conditions, Conditions::None);
    check_counter_conditions(&schema, &u.conditions)?;
    let condition = condition_of(&u.conditions, &u.using, &schema, ctx)?;
    let static_only = static_only(&u.assignments, &schema, condition.as_ref());
    // Cassandra prepares the operations before the WHERE clause.
    for a in &u.assignments {
        assigned_column(&schema, a)?;
    }
    // The assignments' terms are evaluated with the rows below; when something else is
    // refused first, or no row is named, they are checked on their own, as Cassandra has
    // prepared them before it reads the WHERE clause (no second evaluation on the way that
    // writes).
    let checked = (|| {
        let r = restrict::resolve(
            &schema,
            &u.where_clause,
            ctx,
            Context::modification(StatementKind::Update, static_only),
        )?;
        check_custom_timestamp(&u.conditions, &u.using)?;
        check_counter_using(&schema, &u.using)?;
        let keys = keys_of(&r)?;
        if !conditional && r.selects_no_row() {
            return Ok((r, keys, None));
        }
        // USING is bound after the statement is validated, as in Cassandra.
        let using = using_deferring(&u.using, &schema, ctx, default_ts, conditional)?;
        Ok((r, keys, Some(using)))
    })();
    let (r, keys, using) = match checked {
        Ok((r, keys, using)) => {
            if using.is_none() {
                prepare_assignments(&schema, &u.assignments)?;
            }
            (r, keys, using)
        }
        Err(e) => {
            prepare_assignments(&schema, &u.assignments)?;
            return Err(e);
        }
    };
    let Some((ts, ttl, deferred)) = using else {
        // Cassandra builds no update, so binds no USING, when a clustering IN names no row.
        return Ok(Planned::restricted(
            &r,
            &schema,
            Vec::new(),
            Vec::new(),
            Vec::new(),
            None,
        ));
    };
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
        let c = assigned_column(&schema, a)?;
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
    Ok(Planned::restricted(
        &r, &schema, muts, conditions, list_edits, deferred,
    ))
}

/// The column an assignment sets: one of the table's, not of its primary key.
fn assigned_column<'s>(schema: &'s TableSchema, a: &Assignment) -> Result<&'s ColumnDef> {
    let column = assignment_column(a);
    let c = schema
        .column(column)
        .ok_or_else(|| Error::undefined_column(schema, column))?;
    if matches!(c.kind, ColumnKind::PartitionKey | ColumnKind::Clustering) {
        return Err(Error::Invalid(format!(
            "PRIMARY KEY part {column} found in SET part"
        )));
    }
    Ok(c)
}
