//! IF clauses: a statement's conditions into the row conditions [`crate::exec::lwt`] checks,
//! and which rows (static or clustering) a conditional statement is about.

use super::assignment::assignment_column;
use crate::ast::{Assignment, Conditions, Using};
use crate::error::{Error, Result};
use crate::exec::lwt::{self, RowCondition, RowTarget};
use crate::exec::restrict::Restrictions;
use crate::values::TermContext;
use cairn_engine::model::ClusteringKey;
use cairn_engine::schema::{ColumnKind, TableSchema};

/// The IF clause of an UPDATE or DELETE, resolved (`None` when there is none). A statement
/// with column conditions may not carry its own timestamp: Cassandra refuses that as it
/// prepares the conditions, first of all (`IF [NOT] EXISTS` waits for
/// [`check_custom_timestamp`]).
pub(super) fn condition_of(
    c: &Conditions,
    using: &Using,
    schema: &TableSchema,
    ctx: &dyn TermContext,
) -> Result<Option<RowCondition>> {
    if matches!(c, Conditions::Columns(_)) {
        check_custom_timestamp(c, using)?;
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
pub(super) fn conditions_for(
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

/// Whether a statement's operations and IF conditions touch static columns only
/// (Cassandra's `appliesOnlyToStaticColumns`): its clustering columns must then be left
/// unrestricted, and it writes (and tests) the static row.
pub(super) fn static_only(
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
pub(super) fn static_kinds(kinds: impl Iterator<Item = ColumnKind>) -> bool {
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

/// A conditional statement may not carry its own timestamp (Cassandra's
/// `ModificationStatement` constructor: after the operations and the WHERE clause are
/// prepared, before any value is bound).
pub(super) fn check_custom_timestamp(c: &Conditions, using: &Using) -> Result<()> {
    if !matches!(c, Conditions::None) && using.timestamp.is_some() {
        return Err(Error::Invalid(
            "Cannot provide custom timestamp for conditional updates".into(),
        ));
    }
    Ok(())
}
