//! View maintenance on a base replica: every mutation this node applies to a table with
//! materialized views first reads the rows it touches, under the partition's lock, and the
//! view updates they imply (`cairn_engine::view_update`, Cassandra's `ViewUpdateGenerator`)
//! are applied with it.
//!
//! [`Views::apply`] stands in for `Database::apply` wherever this node applies writes: the
//! proxy's own share of a write, a `MUTATION` from a coordinator, a Paxos commit. The base
//! mutations and the view updates this node holds go in one `Database::apply` — one
//! commitlog record — so after a crash (SIGKILL included) replay restores both or neither;
//! nothing is recomputed at replay. View updates for a view replica on another node (the
//! pairing: the i-th base replica of the token writes to the i-th view replica of the view
//! token, Cassandra's `ViewUtils.getViewNaturalEndpoint`) are handed back to the caller to
//! send; they are not in this node's commitlog (Cassandra keeps them in a local batchlog,
//! not built: a base replica that crashes before sending them loses them until the view is
//! rebuilt).
//!
//! Invariants: a base partition's read-before-write and its apply happen under one lock
//! stripe ([`PartitionLocks`]), taken in stripe order when one call writes several
//! partitions, so two writes to a partition compute their view updates one after the other;
//! which views a table has comes from the catalog ([`Views::set`]), swapped whole.

use super::locks::PartitionLocks;
use cairn_engine::model::{ClusteringRange, Mutation, Partition, Slice};
use cairn_engine::schema::TableSchema;
use cairn_engine::view_update::{view_mutations, BaseRows, BaseWrite};
use cairn_engine::Result;
use cairn_engine::{Database, ReadCommand, Trace, Wait};
use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::Arc;

/// Each base table's views, by the base table's id.
pub type ViewMap = HashMap<u128, Vec<Arc<TableSchema>>>;

/// See the module doc.
pub struct Views {
    db: Arc<Database>,
    views: RwLock<Arc<ViewMap>>,
    locks: PartitionLocks,
    /// Views being built here, with the base partitions read so far.
    building: RwLock<HashMap<u128, u64>>,
}

impl Views {
    /// No views yet.
    pub fn new(db: Arc<Database>) -> Views {
        Views {
            db,
            views: RwLock::new(Arc::default()),
            locks: PartitionLocks::default(),
            building: RwLock::new(HashMap::new()),
        }
    }

    /// The views being built on this node, with the base partitions read so far
    /// (`system.view_builds_in_progress`); every other known view is built here
    /// (`system.built_views`).
    pub fn in_progress(&self) -> Vec<(Arc<TableSchema>, u64)> {
        let building = self.building.read();
        self.views
            .read()
            .values()
            .flatten()
            .filter_map(|v| building.get(&v.id).map(|n| (Arc::clone(v), *n)))
            .collect()
    }

    /// The views built on this node.
    pub fn built(&self) -> Vec<Arc<TableSchema>> {
        let building = self.building.read();
        self.views
            .read()
            .values()
            .flatten()
            .filter(|v| !building.contains_key(&v.id))
            .cloned()
            .collect()
    }

    /// Sets which tables have views (the catalog, after every schema change).
    pub fn set(&self, views: ViewMap) {
        *self.views.write() = Arc::new(views);
    }

    /// The views of table `id`.
    pub fn of(&self, id: u128) -> Vec<Arc<TableSchema>> {
        self.views.read().get(&id).cloned().unwrap_or_default()
    }

    /// Whether view `id` is known (some base table's).
    pub fn knows(&self, id: u128) -> bool {
        self.views
            .read()
            .values()
            .any(|vs| vs.iter().any(|v| v.id == id))
    }

    /// Whether any table has a view.
    pub fn any(&self) -> bool {
        !self.views.read().is_empty()
    }

    /// Applies `mutations` here with their view updates (see the module doc); `route`
    /// names the view replica (a ring endpoint index) of a view update made by a base
    /// mutation, `None` when it is this node. The updates for other nodes are returned with
    /// their replica, to be sent.
    pub fn apply_with(
        &self,
        mutations: Vec<Mutation>,
        wait: Wait,
        trace: Option<&Trace>,
        route: &dyn Fn(&Mutation, &Mutation) -> Option<usize>,
    ) -> Result<Vec<(usize, Mutation)>> {
        let map = Arc::clone(&self.views.read());
        if map.is_empty() || !mutations.iter().any(|m| map.contains_key(&m.table)) {
            self.db.apply_traced(mutations, wait, trace)?;
            return Ok(Vec::new());
        }
        // Several updates of one base partition in a call are one update (a batch).
        let mut merged: Vec<Mutation> = Vec::with_capacity(mutations.len());
        for m in mutations {
            match merged
                .iter_mut()
                .find(|x| map.contains_key(&m.table) && x.table == m.table && x.key == m.key)
            {
                Some(x) => x.update.merge(m.update),
                None => merged.push(m),
            }
        }
        let mut stripes: Vec<usize> = merged
            .iter()
            .filter(|m| map.contains_key(&m.table))
            .map(|m| self.locks.stripe(m.table, &m.key))
            .collect();
        stripes.sort_unstable();
        stripes.dedup();
        let mut guards = Vec::with_capacity(stripes.len());
        for s in stripes {
            match self.locks.lock_stripe(s, wait) {
                Some(g) => guards.push(g),
                None => return Err(cairn_engine::Error::WouldBlock),
            }
        }
        let now = super::counter::now_secs();
        let mut local = Vec::new();
        let mut remote = Vec::new();
        for m in &merged {
            let Some(views) = map.get(&m.table) else {
                continue;
            };
            let Some(table) = self.db.table_by_id(m.table) else {
                continue;
            };
            let base = table.schema();
            let broad = m.update.deletion.is_some() || !m.update.range_tombstones.is_empty();
            let slice = if broad {
                Slice::all()
            } else {
                Slice::new(
                    m.update
                        .rows
                        .keys()
                        .map(|ck| {
                            let k = ck.as_bytes();
                            ClusteringRange::from_bounds(Some((k, true)), Some((k, true)))
                        })
                        .collect(),
                )
            };
            let cmd = ReadCommand {
                slice,
                include_static: views.iter().any(|v| v.needs_static_row(&base)),
                ..ReadCommand::all(now, wait)
            };
            let data = table.read_data(&m.key, &cmd)?.unwrap_or_default();
            let before = table.base_rows(data.clone());
            let mut after_data = data;
            after_data.merge(m.update.clone());
            let after = table.base_rows(after_data);
            let write = BaseWrite {
                key: &m.key,
                update: &m.update,
                before: &before,
                after: &after,
                timestamp: newest_timestamp(&m.update),
                now,
            };
            for view in views {
                for vm in view_mutations(&base, view, &write)? {
                    match route(m, &vm) {
                        None => local.push(vm),
                        Some(t) => remote.push((t, vm)),
                    }
                }
            }
        }
        merged.extend(local);
        self.db.apply_traced(merged, wait, trace)?;
        drop(guards);
        Ok(remote)
    }

    /// Fills `view` from the rows of its base table this node holds (a view created on a
    /// table with data): each base partition, read again under its lock, gives the view
    /// entries of its live rows, applied here or handed to `send` with their replica (as
    /// `route` says), one partition at a time. Writes racing the build compute their own
    /// updates under the same lock, so whichever comes second sees the other's result.
    /// Returns the number of base partitions read.
    pub fn build(
        &self,
        base_id: u128,
        view: &TableSchema,
        route: &dyn Fn(&Mutation, &Mutation) -> Option<usize>,
        send: &dyn Fn(Vec<(usize, Mutation)>),
    ) -> Result<u64> {
        self.building.write().insert(view.id, 0);
        let r = self.build_partitions(base_id, view, route, send);
        self.building.write().remove(&view.id);
        r
    }

    fn build_partitions(
        &self,
        base_id: u128,
        view: &TableSchema,
        route: &dyn Fn(&Mutation, &Mutation) -> Option<usize>,
        send: &dyn Fn(Vec<(usize, Mutation)>),
    ) -> Result<u64> {
        let Some(table) = self.db.table_by_id(base_id) else {
            return Ok(0);
        };
        let base = table.schema();
        let now = super::counter::now_secs();
        let keys = cairn_engine::table::Table::scan(
            &table,
            cairn_engine::model::PartitionPos::TokenStart(cairn_engine::model::Token::MIN),
            None,
            ReadCommand {
                include_static: view.needs_static_row(&base),
                columns: Some(Vec::new()),
                ..ReadCommand::all(now, Wait::Allowed)
            },
        );
        let mut partitions = 0;
        for p in keys {
            let key = p?.key;
            let _guard = self.locks.lock(base_id, &key, Wait::Allowed);
            let cmd = ReadCommand {
                include_static: view.needs_static_row(&base),
                ..ReadCommand::all(now, Wait::Allowed)
            };
            let Some(data) = table.read_data(&key, &cmd)? else {
                continue;
            };
            let after = table.base_rows(data);
            // Every row, as if written now: each with live data gets its whole entry.
            let mut update = Partition::default();
            for ck in after.keys() {
                update
                    .rows
                    .insert(ck.clone(), cairn_engine::model::Row::default());
            }
            let write = BaseWrite {
                key: &key,
                update: &update,
                before: &BaseRows::new(),
                after: &after,
                timestamp: i64::MIN,
                now,
            };
            let base_mutation = Mutation {
                table: base_id,
                key: key.clone(),
                update: Partition::default(),
            };
            let mut local = Vec::new();
            let mut remote = Vec::new();
            for vm in view_mutations(&base, view, &write)? {
                match route(&base_mutation, &vm) {
                    None => local.push(vm),
                    Some(t) => remote.push((t, vm)),
                }
            }
            if !local.is_empty() {
                self.db.apply(local, Wait::Allowed)?;
            }
            if !remote.is_empty() {
                send(remote);
            }
            partitions += 1;
            if let Some(n) = self.building.write().get_mut(&view.id) {
                *n = partitions;
            }
        }
        Ok(partitions)
    }

    /// [`Views::apply_with`] where this node holds every view update (a node alone).
    pub fn apply(&self, mutations: Vec<Mutation>, wait: Wait, trace: Option<&Trace>) -> Result<()> {
        self.apply_with(mutations, wait, trace, &|_, _| None)?;
        Ok(())
    }
}

/// The newest timestamp an update writes or deletes at.
fn newest_timestamp(p: &Partition) -> i64 {
    let mut ts = i64::MIN;
    p.for_each_timestamp(|t| ts = ts.max(t));
    ts
}
