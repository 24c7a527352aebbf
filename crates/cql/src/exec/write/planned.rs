//! What a statement becomes before it is applied ([`Planned`]): its mutations, its IF clause
//! row by row, the list edits still to complete, and what a conditional check must read.

use super::assignment::ListWrite;
use crate::error::Error;
use crate::exec::lwt::{RowCondition, RowTarget};
use crate::exec::restrict::Restrictions;
use cairn_engine::model::Mutation;
use cairn_engine::schema::TableSchema;

/// A statement turned into writes.
#[derive(Clone)]
pub(crate) struct Planned {
    /// The writes (one per partition).
    pub(super) mutations: Vec<Mutation>,
    /// The IF clause of a conditional statement, each part with the row it is about (a
    /// condition on a static column is about the static row).
    pub(super) conditions: Vec<(RowTarget, RowCondition)>,
    /// The statement restricts the partition key / a clustering column by an IN (refused in
    /// a conditional statement or BATCH, whatever the values).
    pub(super) key_in: bool,
    pub(super) ck_in: bool,
    /// The statement writes clustering rows (Cassandra's `updatesRegularRows`: the table has
    /// no clustering column or the statement names one, whatever it writes): a conditional
    /// check then reads every regular column.
    pub(super) updates_rows: bool,
    /// List edits that need the list's current elements, made by [`complete`] when the write
    /// is made (after a conditional statement's check, as Cassandra does).
    pub(super) list_edits: Vec<ListWrite>,
    /// An error Cassandra reports only when the write is made (a conditional statement's bad
    /// TTL): it does not stop the check.
    pub(super) deferred: Option<Error>,
}

impl Planned {
    pub(super) fn unconditional(mutations: Vec<Mutation>) -> Self {
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

    /// An UPDATE's or DELETE's writes, with what its WHERE clause says of them (IN on the
    /// key or clustering columns, rows written).
    pub(super) fn restricted(
        r: &Restrictions,
        schema: &TableSchema,
        mutations: Vec<Mutation>,
        conditions: Vec<(RowTarget, RowCondition)>,
        list_edits: Vec<ListWrite>,
        deferred: Option<Error>,
    ) -> Self {
        Planned {
            mutations,
            conditions,
            key_in: r.key_in,
            ck_in: r.ck_in,
            updates_rows: r.updates_rows(schema),
            list_edits,
            deferred,
        }
    }
}
