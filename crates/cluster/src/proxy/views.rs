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
//! Builds ([`Views::build`]): a view created on a table with data is filled from the base
//! rows this node holds, in token order, one partition at a time under its lock. Where a
//! build stands is kept in the data directory (`view_builds.rs`: the last token done, synced
//! after the commitlog, then "built"), so a build cut by a restart resumes at its last saved
//! token, and a view is listed built (`system.built_views`, `system."IndexInfo"`) only once
//! its build finished here. [`Views::claim_builds`] hands each build owed to one thread.
//!
//! Invariants: a base partition's read-before-write and its apply happen under one lock
//! stripe ([`PartitionLocks`]), taken in stripe order when one call writes several
//! partitions, so two writes to a partition compute their view updates one after the other;
//! which views a table has comes from the catalog ([`Views::set`]), swapped whole.

use super::locks::PartitionLocks;
use super::view_builds::{BuildFiles, BuildState};
use cairn_engine::model::{ClusteringRange, Mutation, Partition, PartitionPos, Slice, Token};
use cairn_engine::schema::TableSchema;
use cairn_engine::view_update::{view_mutations, BaseRows, BaseWrite};
use cairn_engine::Result;
use cairn_engine::{Database, ReadCommand, Trace, Wait};
use parking_lot::RwLock;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A build saves its position at least every this many base partitions (Cassandra's
/// `ViewBuilderTask.ROWS_BETWEEN_CHECKPOINTS`)…
pub const CHECKPOINT_KEYS: u64 = 1000;
/// …and at least this often.
pub const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);

/// Test-only: milliseconds a build waits before each base partition, so that a test can
/// interrupt a build of a small table (read once, when a node starts; unset in production).
pub const THROTTLE_ENV: &str = "CAIRN_TEST_VIEW_BUILD_DELAY_MS";

/// A build running (or claimed to run) on this node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuildProgress {
    /// The base table's id.
    pub base: u128,
    /// Base partitions read so far, this run and the runs before it.
    pub keys_built: u64,
    /// The last saved position: token of the last partition done (`None`: the start)…
    pub saved_token: Option<Token>,
    /// …and base partitions read up to it (`system.view_builds_in_progress` shows these,
    /// as Cassandra shows its saved rows).
    pub saved_keys: u64,
    /// The base table's estimated partitions when the run started (0 before it starts).
    pub total: u64,
}

/// Each base table's views, by the base table's id.
pub type ViewMap = HashMap<u128, Vec<Arc<TableSchema>>>;

/// See the module doc.
pub struct Views {
    db: Arc<Database>,
    views: RwLock<Arc<ViewMap>>,
    locks: PartitionLocks,
    /// Views being built here (or claimed for a build), by view id.
    building: RwLock<HashMap<u128, BuildProgress>>,
    /// Each view's saved build state.
    files: BuildFiles,
    /// The views known built here (what `files` says, remembered: an index lookup asks).
    built: RwLock<HashSet<u128>>,
    /// Test-only pause before each base partition a build reads ([`THROTTLE_ENV`]).
    throttle: Duration,
}

impl Views {
    /// No views yet.
    pub fn new(db: Arc<Database>) -> Views {
        Views {
            views: RwLock::new(Arc::default()),
            locks: PartitionLocks::default(),
            building: RwLock::new(HashMap::new()),
            files: BuildFiles::new(db.config().data_dir.clone()),
            built: RwLock::new(HashSet::new()),
            throttle: Duration::from_millis(
                std::env::var(THROTTLE_ENV)
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0),
            ),
            db,
        }
    }

    /// The views being built on this node (or about to be), with their progress
    /// (`system.view_builds_in_progress`, `nodetool compactionstats`).
    pub fn in_progress(&self) -> Vec<(Arc<TableSchema>, BuildProgress)> {
        let building = self.building.read();
        self.views
            .read()
            .values()
            .flatten()
            .filter_map(|v| building.get(&v.id).map(|p| (Arc::clone(v), *p)))
            .collect()
    }

    /// The views whose build finished on this node (saved built: `system.built_views`).
    pub fn built(&self) -> Vec<Arc<TableSchema>> {
        self.views
            .read()
            .values()
            .flatten()
            .filter(|v| self.is_built(v.id))
            .cloned()
            .collect()
    }

    /// Every view known (materialized views and indexes' hidden views).
    pub fn known(&self) -> Vec<Arc<TableSchema>> {
        self.views.read().values().flatten().cloned().collect()
    }

    /// Whether view `id`'s build finished on this node (an index may serve lookups).
    pub fn is_built(&self, id: u128) -> bool {
        if self.built.read().contains(&id) {
            return true;
        }
        !self.building.read().contains_key(&id) && self.load(id) == Some(BuildState::Built)
    }

    /// View `id`'s saved state, remembering it when built.
    fn load(&self, id: u128) -> Option<BuildState> {
        let state = self.files.load(id);
        if state == Some(BuildState::Built) {
            self.built.write().insert(id);
        }
        state
    }

    /// Saves view `id` built.
    fn save_built(&self, id: u128) -> Result<()> {
        self.files.save(id, BuildState::Built)?;
        self.built.write().insert(id);
        Ok(())
    }

    /// Sets which tables have views (the catalog, after every schema change), and forgets
    /// the build state of views no longer known.
    pub fn set(&self, views: ViewMap) {
        let ids: HashSet<u128> = views.values().flatten().map(|v| v.id).collect();
        *self.views.write() = Arc::new(views);
        self.built.write().retain(|id| ids.contains(id));
        self.files.retain(&ids);
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

    /// The views this node must still build, each claimed for one build (so a view is built
    /// by one thread at a time; [`Views::build`] gives the claim back): a view without a
    /// saved "built" state (see `view_builds.rs`) and not building. A view whose base table
    /// holds nothing is marked built at once instead (Cassandra's `SecondaryIndexManager`
    /// does the same), so a CREATE on an empty table answers with its view or index built.
    pub fn claim_builds(&self) -> Vec<(u128, Arc<TableSchema>)> {
        let map = Arc::clone(&self.views.read());
        let mut claimed = Vec::new();
        for (base, views) in map.iter() {
            for view in views {
                let state = self.load(view.id);
                if state == Some(BuildState::Built) || self.building.read().contains_key(&view.id) {
                    continue;
                }
                let empty = state.is_none()
                    && self
                        .db
                        .table_by_id(*base)
                        .and_then(|t| t.stats().ok())
                        .is_some_and(|s| s.partition_count_estimate == 0);
                if empty {
                    if let Err(e) = self.save_built(view.id) {
                        tracing::warn!("cannot save view {}'s build state: {e}", view.name);
                    } else {
                        continue;
                    }
                }
                let (saved_token, saved_keys) = match state {
                    Some(BuildState::Building {
                        last_token,
                        keys_built,
                    }) => (last_token, keys_built),
                    _ => (None, 0),
                };
                let mut building = self.building.write();
                if building.contains_key(&view.id) {
                    continue;
                }
                building.insert(
                    view.id,
                    BuildProgress {
                        base: *base,
                        keys_built: saved_keys,
                        saved_token,
                        saved_keys,
                        total: 0,
                    },
                );
                claimed.push((*base, Arc::clone(view)));
            }
        }
        claimed
    }

    /// Gives back the claim of a build that will not run (its thread could not start).
    pub fn release(&self, view: u128) {
        self.building.write().remove(&view);
    }

    /// Fills `view` from the rows of its base table this node holds (a view created on a
    /// table with data), resuming where a build cut by a restart stopped: each base
    /// partition from the saved token on, read again under its lock, gives the view entries
    /// of its live rows, applied here or handed to `send` with their replica (as `route`
    /// says), one partition at a time; every [`CHECKPOINT_KEYS`] partitions or
    /// [`CHECKPOINT_EVERY`] the commitlog is synced and the position saved, and at the end
    /// the view is saved built (`view_builds.rs`). Writes racing the build compute their own
    /// updates under the same lock, so whichever comes second sees the other's result. A
    /// view dropped meanwhile stops its build. Returns the number of base partitions read
    /// (all runs together).
    pub fn build(
        &self,
        base_id: u128,
        view: &TableSchema,
        route: &dyn Fn(&Mutation, &Mutation) -> Option<usize>,
        send: &dyn Fn(Vec<(usize, Mutation)>),
    ) -> Result<u64> {
        self.building
            .write()
            .entry(view.id)
            .or_insert_with(|| BuildProgress {
                base: base_id,
                keys_built: 0,
                saved_token: None,
                saved_keys: 0,
                total: 0,
            });
        let r = self.build_partitions(base_id, view, route, send);
        self.building.write().remove(&view.id);
        r
    }

    /// Saves `view`'s position after syncing the commitlog, so the file never claims view
    /// updates a crash could lose.
    fn checkpoint(&self, view: u128, last_token: Option<Token>, keys_built: u64) -> Result<()> {
        self.db.sync_commitlog()?;
        self.files.save(
            view,
            BuildState::Building {
                last_token,
                keys_built,
            },
        )?;
        if let Some(p) = self.building.write().get_mut(&view) {
            p.saved_token = last_token;
            p.saved_keys = keys_built;
        }
        Ok(())
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
        let (start, mut partitions) = match self.building.read().get(&view.id) {
            Some(p) => (p.saved_token, p.saved_keys),
            None => (None, 0),
        };
        let total = table.stats().map_or(0, |s| s.partition_count_estimate);
        if let Some(p) = self.building.write().get_mut(&view.id) {
            p.total = total;
        }
        if let Some(t) = start {
            tracing::info!(
                "resuming the build of view {}.{} at token {t} ({partitions} base partitions done)",
                view.keyspace,
                view.name
            );
        }
        self.checkpoint(view.id, start, partitions)?;
        let base = table.schema();
        let now = super::counter::now_secs();
        let keys = cairn_engine::table::Table::scan(
            &table,
            PartitionPos::TokenStart(start.unwrap_or(Token::MIN)),
            None,
            ReadCommand {
                include_static: view.needs_static_row(&base),
                columns: Some(key_scan_columns(&base, view)),
                ..ReadCommand::all(now, Wait::Allowed)
            },
        );
        let mut saved_at = Instant::now();
        let mut since_saved = 0u64;
        for p in keys {
            let key = p?.key;
            if !self.knows(view.id) {
                // Dropped meanwhile: nothing left to build (`Views::set` removed its state).
                return Ok(partitions);
            }
            if !self.throttle.is_zero() {
                std::thread::sleep(self.throttle);
            }
            let guard = self.locks.lock(base_id, &key, Wait::Allowed);
            let cmd = ReadCommand {
                include_static: view.needs_static_row(&base),
                ..ReadCommand::all(now, Wait::Allowed)
            };
            if let Some(data) = table.read_data(&key, &cmd)? {
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
            }
            drop(guard);
            partitions += 1;
            since_saved += 1;
            if let Some(p) = self.building.write().get_mut(&view.id) {
                p.keys_built = partitions;
            }
            if since_saved >= CHECKPOINT_KEYS || saved_at.elapsed() >= CHECKPOINT_EVERY {
                self.checkpoint(view.id, Some(key.token), partitions)?;
                saved_at = Instant::now();
                since_saved = 0;
            }
        }
        if !self.knows(view.id) {
            return Ok(partitions);
        }
        self.db.sync_commitlog()?;
        self.save_built(view.id)?;
        Ok(partitions)
    }

    /// [`Views::apply_with`] where this node holds every view update (a node alone).
    pub fn apply(&self, mutations: Vec<Mutation>, wait: Wait, trace: Option<&Trace>) -> Result<()> {
        self.apply_with(mutations, wait, trace, &|_, _| None)?;
        Ok(())
    }
}

/// The base columns a build's scan for partition keys reads: none, but the static columns
/// when the view has entries for static rows (a partition holding only its static row is
/// found by them).
fn key_scan_columns(base: &TableSchema, view: &TableSchema) -> Vec<cairn_engine::model::ColumnId> {
    if !view.needs_static_row(base) {
        return Vec::new();
    }
    let mut ids: Vec<_> = base
        .columns_of(cairn_engine::schema::ColumnKind::Static)
        .map(|c| c.id)
        .collect();
    ids.sort_unstable();
    ids
}

/// The newest timestamp an update writes or deletes at.
fn newest_timestamp(p: &Partition) -> i64 {
    let mut ts = i64::MIN;
    p.for_each_timestamp(|t| ts = ts.max(t));
    ts
}
