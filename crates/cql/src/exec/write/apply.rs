//! Planned writes made real: list edits that need the list's current elements are completed
//! (read under the statement's lock, after a conditional check, at the request's consistency
//! level), the mutations of one statement or BATCH are merged per partition and handed to the
//! storage proxy in one call — one commitlog record on each replica, so all of them survive a
//! crash or none.

use super::assignment::{list_edit_cell, put_column};
use super::planned::Planned;
use crate::error::Result;
use crate::exec::lwt::{self, CasRequest};
use crate::exec::result::ResultSet;
use crate::exec::session::Levels;
use crate::exec::Executor;
use cairn_cluster::consistency::Consistency;
use cairn_cluster::proxy::Acks;
use cairn_engine::model::{ColumnData, Mutation, Row};
use cairn_engine::schema::TableSchema;
use cairn_engine::Wait;
use std::sync::Arc;

/// Makes a statement's pending list edits (reading the lists at `cl`, waiting as `wait`
/// says), ready to apply.
pub(super) fn complete(
    ex: &Executor,
    schema: &TableSchema,
    planned: &mut Planned,
    cl: Consistency,
    wait: Wait,
) -> Result<()> {
    if let Some(e) = planned.deferred.take() {
        return Err(e);
    }
    for lw in std::mem::take(&mut planned.list_edits) {
        let Some(m) = planned.mutations.get_mut(lw.mutation) else {
            continue;
        };
        let data = list_edit_cell(ex, schema, &m.key, &lw, cl, wait)?;
        let row = match &lw.ck {
            Some(ck) => m.update.rows.entry(ck.clone()).or_default(),
            None => m.update.static_row.get_or_insert_with(Row::default),
        };
        put_column(row, lw.column.id, data);
        row.columns.sort_by_key(|(id, _)| *id);
    }
    Ok(())
}

/// Completes and applies unconditional statements' writes at the request's `levels`; the
/// wait for other replicas may be left in `acks` (`StorageProxy::mutate_or_defer`).
pub(super) fn apply_all(
    ex: &Executor,
    planned: Vec<(Arc<TableSchema>, Planned)>,
    levels: Levels,
    wait: Wait,
    acks: Option<&Acks>,
    trace: Option<&cairn_engine::Trace>,
) -> Result<()> {
    let cl = levels.consistency;
    let counters = planned
        .iter()
        .any(|(schema, _)| crate::exec::create_table::has_counters(schema));
    let all = complete_all(ex, planned, None, cl, wait)?;
    apply_mutations(ex, all, counters, cl, wait, acks, trace)
}

/// Hands completed mutations to the storage proxy: counter tables' (`counters`: a statement
/// or batch writes counter tables only — mixing is refused before) as increments this node
/// leads (`StorageProxy::mutate_counters`), the others as they are.
pub(super) fn apply_mutations(
    ex: &Executor,
    all: Vec<Mutation>,
    counters: bool,
    cl: Consistency,
    wait: Wait,
    acks: Option<&Acks>,
    trace: Option<&cairn_engine::Trace>,
) -> Result<()> {
    if counters {
        ex.proxy().mutate_counters(all, cl, wait, acks, trace)?;
    } else {
        ex.proxy().mutate_or_defer(all, cl, wait, acks, trace)?;
    }
    Ok(())
}

/// Runs a conditional request whose writes are `planned` (`lwt::run`): completed inside its
/// round, at the round's timestamp and read level, each time the round decides to write.
pub(super) fn run_conditional(
    ex: &Executor,
    req: &CasRequest,
    planned: &[(Arc<TableSchema>, Planned)],
    levels: Levels,
    wait: Wait,
    trace: Option<&cairn_engine::Trace>,
) -> Result<ResultSet> {
    lwt::run(ex, req, levels, wait, trace, |round| {
        let ts = Some(round.timestamp());
        complete_all(ex, planned.to_vec(), ts, round.read_level(), wait)
    })
}

/// The mutations of planned statements, completed — reading the lists they edit at `cl` —
/// ready to apply. A conditional request's (`ballot`: its round's timestamp) all get that
/// one timestamp, deletions just below it, as a Paxos commit does.
pub(super) fn complete_all(
    ex: &Executor,
    planned: Vec<(Arc<TableSchema>, Planned)>,
    ballot: Option<i64>,
    cl: Consistency,
    wait: Wait,
) -> Result<Vec<Mutation>> {
    let mut all = Vec::new();
    for (schema, mut p) in planned {
        complete(ex, &schema, &mut p, cl, wait)?;
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
pub(super) fn merge_by_partition(all: Vec<Mutation>) -> Vec<Mutation> {
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
pub(super) fn purge_collection_deletions(row: &mut Row) {
    for (_, data) in &mut row.columns {
        if let ColumnData::Complex(cc) = data {
            if let Some(d) = cc.deletion {
                cc.cells.retain(|(_, c)| c.timestamp > d.marked_at);
            }
        }
    }
}
