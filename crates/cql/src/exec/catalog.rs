//! The schema catalog: keyspaces and tables, as the cluster's schema log has them.
//!
//! The schema is shared: every change is committed to the schema log
//! (`cairn_cluster::schema_log` — group 0 on a node, a log of one in memory for an embedded
//! executor) as entries ([`definitions`](super::definitions)), and every node brings its own
//! catalog and the engine's tables to the entries ([`Catalog::reconcile`]) — the node that
//! ran the statement before answering, the others as soon as they apply the entry. So every
//! node has the same keyspaces and tables, with the same table ids.
//!
//! Each node also keeps what it applied: keyspace definitions in an engine table,
//! `system_schema.keyspaces` (the commitlog's durability), table definitions in the engine's
//! table directories; the catalog keeps keyspaces in memory too. On start the node puts its
//! own schema in the log if the log holds none yet (a node from before the log existed, or
//! the first of a new cluster), then reconciles. The schema version that `system.local`
//! shows and drivers compare is a hash of every definition, the same on every node that
//! applied the same entries.
//!
//! Invariants: the local schema changes only by [`Catalog::reconcile`], to what the log
//! holds — never ahead of it; an entry that cannot be read never drops what it names.
//! Changes and reconciling are serialised by the executor's DDL lock; waiting for the other
//! nodes ([`Catalog::settle`]) happens without it.

pub use super::definitions::Keyspace;
use super::definitions::{self, is_shared, Wanted};
use super::result::{ChangeKind, SchemaChange};
use crate::error::{Error, Result};
use bytes::Bytes;
use cairn_cluster::proxy::StorageProxy;
use cairn_cluster::raft::command::{CommandResult, Op};
use cairn_cluster::schema_log::{SchemaLog, SchemaState};
use cairn_engine::model::types::{CqlType, UserType};
use cairn_engine::model::{Cell, ColumnData, DecoratedKey, DeletionTime, Mutation, Partition, Row};
use cairn_engine::model::{LivenessInfo, PartitionPos, Token};
use cairn_engine::schema::{ColumnKind, TableSchema};
use cairn_engine::table::Table;
use cairn_engine::{Database, ReadCommand, Wait};
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::sync::Arc;

pub use super::replication::SYSTEM_KEYSPACES;

const STORE_KS: &str = "system_schema";
const STORE_TABLE: &str = "keyspaces";
const COL_DURABLE: u32 = 1;
const COL_REPLICATION: u32 = 2;

/// How often a node tries to put its schema in a log that another node is changing at the
/// same moment (each try reads the log again).
const INITIALIZE_TRIES: usize = 5;

/// Keyspaces and tables.
pub struct Catalog {
    db: Arc<Database>,
    /// Told of every keyspace's replication, so that it places replicas.
    proxy: Arc<StorageProxy>,
    store: Arc<Table>,
    keyspaces: RwLock<BTreeMap<String, Keyspace>>,
    /// User types by keyspace and name, as the log has them (they live only there: a
    /// table's columns carry their types' definitions themselves).
    types: RwLock<BTreeMap<(String, String), UserType>>,
    version: RwLock<Option<[u8; 16]>>,
    /// Where changes are committed.
    log: Arc<dyn SchemaLog>,
    /// The log's state the local schema was last brought to.
    applied: RwLock<SchemaState>,
    /// What reconciling changed that no statement on this node answered: other nodes'
    /// changes, for this node's drivers ([`Catalog::take_unpublished`]).
    unpublished: parking_lot::Mutex<Vec<SchemaChange>>,
    /// The version the last change committed here, for [`Catalog::settle`].
    to_settle: parking_lot::Mutex<Option<u64>>,
}

impl Catalog {
    /// Opens the catalog on the proxy's database, creating its store on first start; puts
    /// the node's schema in `log` if the log holds none yet, brings the local schema to the
    /// log's, and tells the proxy how each keyspace is replicated.
    pub fn open(proxy: Arc<StorageProxy>, log: Arc<dyn SchemaLog>) -> Result<Catalog> {
        let db = Arc::clone(proxy.db());
        let store = match db.table(STORE_KS, STORE_TABLE) {
            Some(t) => t,
            None => db.create_table(
                TableSchema::new(STORE_KS, STORE_TABLE)
                    .with_column("keyspace_name", CqlType::Text, ColumnKind::PartitionKey)
                    .with_column("durable_writes", CqlType::Boolean, ColumnKind::Regular)
                    .with_column(
                        "replication",
                        CqlType::Frozen(Box::new(CqlType::Map(
                            Box::new(CqlType::Text),
                            Box::new(CqlType::Text),
                        ))),
                        ColumnKind::Regular,
                    ),
            )?,
        };
        // Before anything hashes the schema: every node has the same system tables.
        crate::trace::tables::create_tables(&db)?;
        let mut keyspaces = BTreeMap::new();
        for name in SYSTEM_KEYSPACES {
            keyspaces.insert(name.to_string(), Keyspace::system(name));
        }
        for (name, row) in stored_rows(&db, STORE_KS, STORE_TABLE)? {
            let durable = row
                .cell(COL_DURABLE)
                .is_none_or(|c| c.value.first() != Some(&0));
            let mut replication = row
                .cell(COL_REPLICATION)
                .map(|c| decode_text_map(&c.value))
                .unwrap_or_default();
            // Older versions stored `class` first.
            replication.sort();
            keyspaces.insert(
                name.clone(),
                Keyspace {
                    name,
                    replication,
                    durable_writes: durable,
                },
            );
        }
        for ks in keyspaces.values() {
            proxy.set_replication(&ks.name, ks.placement());
        }
        let catalog = Catalog {
            db,
            proxy,
            store,
            keyspaces: RwLock::new(keyspaces),
            types: RwLock::new(BTreeMap::new()),
            version: RwLock::new(None),
            log,
            applied: RwLock::new(SchemaState::default()),
            unpublished: parking_lot::Mutex::new(Vec::new()),
            to_settle: parking_lot::Mutex::new(None),
        };
        catalog.initialize();
        catalog.reconcile()?;
        catalog.tell_views();
        Ok(catalog)
    }

    /// Puts this node's schema in the log if the log holds none yet. A log that cannot take
    /// it now (no majority) is left as it is: the node keeps its own schema, and its first
    /// schema change puts it there (see [`Catalog::commit`]).
    fn initialize(&self) {
        for _ in 0..INITIALIZE_TRIES {
            let state = self.log.state();
            if state.entries.contains_key(definitions::FORMAT_KEY) {
                return;
            }
            match self.log.commit(state.version, self.own_schema()) {
                Ok(CommandResult::Applied { version }) => {
                    tracing::info!(
                        "the cluster's schema log holds this node's schema (version {version})"
                    );
                    return;
                }
                // Another node changed the log meanwhile (its own schema, or a ring entry):
                // read it again.
                Ok(CommandResult::Conflict { .. }) => continue,
                Err(e) => {
                    // A new cluster's nodes start together: another will put its schema there.
                    tracing::info!(
                        "this node's schema is not in the cluster's schema log yet ({e}); \
                         it goes there with the first schema change if no other node's does"
                    );
                    return;
                }
            }
        }
    }

    /// The entries of this node's own schema, with the format marker. User types are the
    /// ones the catalog knows, and those its tables' columns carry (a node whose log was
    /// lost still has the types its tables use).
    fn own_schema(&self) -> Vec<Op> {
        let mut ops = vec![definitions::format()];
        for ks in self.keyspaces().iter().filter(|k| is_shared(&k.name)) {
            ops.push(definitions::put_keyspace(ks));
        }
        let mut types = self.types.read().clone();
        for t in self.db.tables() {
            let schema = t.schema();
            if is_shared(&schema.keyspace) {
                ops.push(definitions::put_table(&schema));
                for c in &schema.columns {
                    collect_user_types(&c.ty, &mut types);
                }
            }
        }
        ops.extend(types.values().map(definitions::put_type));
        ops
    }

    /// The database.
    pub fn db(&self) -> &Arc<Database> {
        &self.db
    }

    /// A keyspace by name.
    pub fn keyspace(&self, name: &str) -> Option<Keyspace> {
        self.keyspaces.read().get(name).cloned()
    }

    /// Every keyspace, by name.
    pub fn keyspaces(&self) -> Vec<Keyspace> {
        self.keyspaces.read().values().cloned().collect()
    }

    // --- changes, committed to the log ---------------------------------------------------

    /// Creates or changes a keyspace.
    pub fn put_keyspace(&self, ks: Keyspace) -> Result<()> {
        self.commit(vec![definitions::put_keyspace(&ks)])
    }

    /// Removes a keyspace and its tables.
    pub fn drop_keyspace(&self, name: &str) -> Result<()> {
        let mut ops = definitions::delete_tables_and_types_of(&self.applied.read().entries, name);
        ops.push(definitions::delete_keyspace(name));
        self.commit(ops)
    }

    /// Creates a table.
    pub fn create_table(&self, schema: &TableSchema) -> Result<()> {
        self.commit(vec![definitions::put_table(schema)])
    }

    /// Changes a table's definition (same id).
    pub fn alter_table(&self, schema: &TableSchema) -> Result<()> {
        self.commit(vec![definitions::put_table(schema)])
    }

    /// Changes several tables' definitions in one command (a base table and its views).
    pub fn alter_tables(&self, schemas: &[TableSchema]) -> Result<()> {
        self.commit(schemas.iter().map(definitions::put_table).collect())
    }

    /// Creates a user type.
    pub fn create_type(&self, ut: &UserType) -> Result<()> {
        self.commit(vec![definitions::put_type(ut)])
    }

    /// Changes a user type (ALTER TYPE), with every type and table that uses it, in one
    /// command.
    pub fn alter_type(&self, ut: &UserType) -> Result<()> {
        let mut ops = vec![definitions::put_type(ut)];
        for other in self.types.read().values() {
            if other.keyspace == ut.keyspace && other.name != ut.name {
                if let Some(CqlType::Udt(new)) =
                    CqlType::Udt(Box::new(other.clone())).with_udt_replaced(ut)
                {
                    ops.push(definitions::put_type(&new));
                }
            }
        }
        for t in self.all_tables(&ut.keyspace) {
            let mut schema = (*t.schema()).clone();
            let mut changed = false;
            for c in &mut schema.columns {
                if let Some(ty) = c.ty.with_udt_replaced(ut) {
                    c.ty = ty;
                    changed = true;
                }
            }
            if changed {
                ops.push(definitions::put_table(&schema));
            }
        }
        self.commit(ops)
    }

    /// Drops a user type.
    pub fn drop_type(&self, keyspace: &str, name: &str) -> Result<()> {
        self.commit(vec![definitions::delete_type(keyspace, name)])
    }

    /// Drops a table (the engine snapshots it first when `auto_snapshot` is on).
    pub fn drop_table(&self, keyspace: &str, name: &str) -> Result<()> {
        self.drop_tables(keyspace, &[name])
    }

    /// Drops several tables of a keyspace in one command (a base table and its indexes).
    pub fn drop_tables(&self, keyspace: &str, names: &[&str]) -> Result<()> {
        self.commit(
            names
                .iter()
                .map(|n| definitions::delete_table(keyspace, n))
                .collect(),
        )
    }

    /// Empties a table: every node replaces it by the same table under a new id (after
    /// `auto_snapshot`).
    pub fn truncate_table(&self, schema: &TableSchema) -> Result<()> {
        self.truncate_tables(std::slice::from_ref(schema))
    }

    /// Empties several tables in one command (a base table and its views).
    pub fn truncate_tables(&self, schemas: &[TableSchema]) -> Result<()> {
        let ops = schemas
            .iter()
            .map(|s| {
                let mut schema = s.clone();
                schema.id = cairn_engine::schema::rand_table_id();
                definitions::put_table(&schema)
            })
            .collect();
        self.commit(ops)
    }

    /// Commits `ops`, prepared against the schema this node has applied, then applies them
    /// here (the statement waits for the other nodes afterwards: [`Catalog::settle`]). [`Error::SchemaConflict`] when the log
    /// changed since: the statement is validated again on the newer schema.
    fn commit(&self, mut ops: Vec<Op>) -> Result<()> {
        let expect = self.applied.read().version;
        if !self
            .log
            .state()
            .entries
            .contains_key(definitions::FORMAT_KEY)
        {
            // The node's schema could not be put in the log at start: it goes with this
            // change, so that nothing the node has is dropped by it.
            let mut with_own = self.own_schema();
            with_own.append(&mut ops);
            ops = with_own;
        }
        match self.log.commit(expect, ops)? {
            CommandResult::Conflict { .. } => Err(Error::SchemaConflict),
            CommandResult::Applied { version } => {
                // Applied on the version this node had: what reconciling changes now is the
                // statement's own change, which the statement answers (and its connection
                // publishes).
                let before = self.unpublished.lock().len();
                self.reconcile()?;
                self.unpublished.lock().truncate(before);
                *self.to_settle.lock() = Some(version);
                Ok(())
            }
        }
    }

    // --- bringing the local schema to the log's --------------------------------------------

    /// Brings the local catalog and the engine's tables to the log's schema; returns what
    /// changed, also kept for [`Catalog::take_unpublished`]. Creates keyspaces and tables, alters
    /// them, replaces a table whose id changed (TRUNCATE, or dropped and created again),
    /// then drops the tables and keyspaces no entry names. A log that holds no schema yet
    /// changes nothing: the node's own is the schema.
    pub fn reconcile(&self) -> Result<Vec<SchemaChange>> {
        let state = self.log.state();
        let unchanged = self.applied.read().entries == state.entries;
        if unchanged || !state.entries.contains_key(definitions::FORMAT_KEY) {
            self.applied.write().version = state.version;
            return Ok(Vec::new());
        }
        let wanted = definitions::decode(&state.entries);
        let mut changes = Vec::new();
        self.create_and_alter(&wanted, &mut changes)?;
        self.drop_unnamed(&wanted, &mut changes)?;
        self.set_types(&wanted, &mut changes);
        *self.applied.write() = state;
        self.schema_changed();
        self.tell_views();
        self.unpublished.lock().extend(changes.iter().cloned());
        Ok(changes)
    }

    /// Tells the storage proxy which tables have materialized views, by base table id (it
    /// keeps them on every write to those tables), then starts, each on a thread of its own,
    /// the builds this node still owes: views new here, and builds a restart cut short, which
    /// resume where they stopped (`cairn_cluster::proxy::views`; their state is kept in the
    /// data directory).
    fn tell_views(&self) {
        let tables = self.db.tables();
        let mut views: cairn_cluster::proxy::views::ViewMap = Default::default();
        for t in &tables {
            let view = t.schema();
            let Some(def) = view.view() else { continue };
            if let Some(base) = tables
                .iter()
                .find(|b| b.schema().keyspace == view.keyspace && b.schema().name == def.base)
            {
                views.entry(base.schema().id).or_default().push(view);
            }
        }
        self.proxy.views().set(views);
        for (base, view) in self.proxy.views().claim_builds() {
            let proxy = Arc::clone(&self.proxy);
            let name = format!("view-build-{}", view.name);
            let id = view.id;
            let spawned = std::thread::Builder::new().name(name).spawn(move || {
                match proxy.build_view(base, &view) {
                    Ok(n) => tracing::info!(
                        "built view {}.{} from {n} base partitions",
                        view.keyspace,
                        view.name
                    ),
                    Err(e) => {
                        tracing::warn!("building view {}.{} failed: {e}", view.keyspace, view.name)
                    }
                }
            });
            if let Err(e) = spawned {
                self.proxy.views().release(id);
                tracing::warn!("cannot start a view build: {e}");
            }
        }
    }

    /// After a schema change committed here, with the DDL lock released: waits briefly for
    /// the other nodes that are up to apply it (so drivers find the schema agreed).
    pub fn settle(&self) {
        let version = self.to_settle.lock().take();
        if let Some(v) = version {
            self.log.settle(v);
        }
    }

    /// The changes reconciling made that no statement on this node answered (other nodes'
    /// schema changes), for this node's drivers: SCHEMA_CHANGE events.
    pub fn take_unpublished(&self) -> Vec<SchemaChange> {
        std::mem::take(&mut *self.unpublished.lock())
    }

    fn create_and_alter(&self, wanted: &Wanted, changes: &mut Vec<SchemaChange>) -> Result<()> {
        for ks in wanted.keyspaces.values() {
            let kind = match self.keyspace(&ks.name) {
                Some(old) if old == *ks => continue,
                Some(_) => ChangeKind::Updated,
                None => ChangeKind::Created,
            };
            self.store_keyspace(ks.clone())?;
            changes.push(SchemaChange::new(kind, &ks.name, None));
        }
        for schema in wanted.tables.values() {
            let (ks, name) = (&schema.keyspace, &schema.name);
            match self.db.table(ks, name) {
                None => {
                    self.db.create_table(schema.clone())?;
                    changes.push(table_change(ChangeKind::Created, schema));
                }
                Some(t) if t.schema().id != schema.id => {
                    // TRUNCATE (the same definition), or dropped and created again while
                    // this node was away.
                    let mut same = schema.clone();
                    same.id = t.schema().id;
                    let redefined = *t.schema() != same;
                    drop(t);
                    self.db.replace_table(schema.clone())?;
                    if redefined {
                        changes.push(SchemaChange::new(ChangeKind::Updated, ks, Some(name)));
                    }
                }
                Some(t) if *t.schema() != *schema => {
                    self.db.alter_table(schema.clone())?;
                    changes.push(table_change(ChangeKind::Updated, schema));
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// Takes the log's user types; a type's change comes before its keyspace's drop and
    /// after the creations of the keyspace (drivers see the keyspace first).
    fn set_types(&self, wanted: &Wanted, changes: &mut Vec<SchemaChange>) {
        let old = std::mem::replace(&mut *self.types.write(), wanted.types.clone());
        let mut type_changes = Vec::new();
        for ((ks, name), ut) in &wanted.types {
            match old.get(&(ks.clone(), name.clone())) {
                Some(o) if o == ut => {}
                Some(_) => type_changes.push(SchemaChange::of_type(ChangeKind::Updated, ks, name)),
                None => type_changes.push(SchemaChange::of_type(ChangeKind::Created, ks, name)),
            }
        }
        for (ks, name) in old.keys() {
            if !wanted.types.contains_key(&(ks.clone(), name.clone())) {
                type_changes.push(SchemaChange::of_type(ChangeKind::Dropped, ks, name));
            }
        }
        // Before the drops of keyspaces (whose types go with them).
        let at = changes
            .iter()
            .position(|c| c.change == ChangeKind::Dropped && c.table.is_none())
            .unwrap_or(changes.len());
        changes.splice(at..at, type_changes);
    }

    fn drop_unnamed(&self, wanted: &Wanted, changes: &mut Vec<SchemaChange>) -> Result<()> {
        for t in self.db.tables() {
            let (ks, name) = {
                let s = t.schema();
                (s.keyspace.clone(), s.name.clone())
            };
            if is_shared(&ks) && !wanted.has_table(&ks, &name) {
                let change = table_change(ChangeKind::Dropped, &t.schema());
                drop(t);
                self.db.drop_table(&ks, &name)?;
                // An index dropped with its base table: the table's drop says it all.
                let base_gone = change.change == ChangeKind::Updated
                    && change
                        .table
                        .as_deref()
                        .is_some_and(|b| !wanted.has_table(&ks, b));
                if !base_gone {
                    changes.push(change);
                }
            }
        }
        for ks in self.keyspaces() {
            if is_shared(&ks.name) && !wanted.has_keyspace(&ks.name) {
                self.remove_keyspace(&ks.name)?;
                changes.push(SchemaChange::new(ChangeKind::Dropped, &ks.name, None));
            }
        }
        Ok(())
    }

    /// Stores a keyspace's definition on this node.
    fn store_keyspace(&self, ks: Keyspace) -> Result<()> {
        let ts = now_micros();
        let mut row = Row {
            marker: Some(LivenessInfo::live(ts)),
            ..Row::default()
        };
        row.columns.push((
            COL_DURABLE,
            ColumnData::Simple(Cell::live(
                ts,
                Bytes::from(vec![u8::from(ks.durable_writes)]),
            )),
        ));
        row.columns.push((
            COL_REPLICATION,
            ColumnData::Simple(Cell::live(ts, encode_text_map(&ks.replication))),
        ));
        let mut update = Partition::default();
        update
            .rows
            .insert(cairn_engine::model::ClusteringKey::empty(), row);
        self.db.apply(
            vec![Mutation {
                table: self.store.schema().id,
                key: DecoratedKey::new(Bytes::copy_from_slice(ks.name.as_bytes())),
                update,
            }],
            // Keyspace changes are DDL, run only where waiting is allowed (`Executor::run`).
            Wait::Allowed,
        )?;
        self.proxy.set_replication(&ks.name, ks.placement());
        self.keyspaces.write().insert(ks.name.clone(), ks);
        Ok(())
    }

    /// Removes a keyspace's definition from this node (its tables are dropped first).
    fn remove_keyspace(&self, name: &str) -> Result<()> {
        let update = Partition {
            deletion: Some(DeletionTime {
                marked_at: now_micros(),
                local_deletion_time: now_secs(),
            }),
            ..Partition::default()
        };
        self.db.apply(
            vec![Mutation {
                table: self.store.schema().id,
                key: DecoratedKey::new(Bytes::copy_from_slice(name.as_bytes())),
                update,
            }],
            // Keyspace changes are DDL, run only where waiting is allowed (`Executor::run`).
            Wait::Allowed,
        )?;
        self.keyspaces.write().remove(name);
        self.proxy.drop_keyspace(name);
        Ok(())
    }

    /// The log's state version the local schema has been brought to.
    pub fn applied_version(&self) -> u64 {
        self.applied.read().version
    }

    // --- reading ----------------------------------------------------------------------------

    /// A user type.
    pub fn user_type(&self, keyspace: &str, name: &str) -> Option<UserType> {
        self.types
            .read()
            .get(&(keyspace.to_string(), name.to_string()))
            .cloned()
    }

    /// A keyspace's user types, by name.
    pub fn user_types(&self, keyspace: &str) -> Vec<UserType> {
        self.types
            .read()
            .values()
            .filter(|t| t.keyspace == keyspace)
            .cloned()
            .collect()
    }

    /// A user table or view (internal tables and indexes' hidden views are not visible).
    pub fn table(&self, keyspace: &str, name: &str) -> Option<Arc<Table>> {
        if keyspace == STORE_KS {
            return None;
        }
        self.db
            .table(keyspace, name)
            .filter(|t| !t.schema().is_index())
    }

    /// A keyspace's user tables and views, by name (indexes' hidden views are not listed).
    pub fn tables(&self, keyspace: &str) -> Vec<Arc<Table>> {
        let mut t = self.all_tables(keyspace);
        t.retain(|t| !t.schema().is_index());
        t
    }

    /// A keyspace's secondary indexes' hidden views, by table name.
    pub fn index_tables(&self, keyspace: &str) -> Vec<Arc<Table>> {
        let mut t = self.all_tables(keyspace);
        t.retain(|t| t.schema().is_index());
        t
    }

    /// A keyspace's user tables, views and indexes' hidden views, by name.
    fn all_tables(&self, keyspace: &str) -> Vec<Arc<Table>> {
        if keyspace == STORE_KS {
            return Vec::new();
        }
        let mut t: Vec<Arc<Table>> = self
            .db
            .tables()
            .into_iter()
            .filter(|t| t.schema().keyspace == keyspace)
            .collect();
        t.sort_by_key(|t| t.schema().name.clone());
        t
    }

    /// The schema version changes: forget the one computed.
    fn schema_changed(&self) {
        *self.version.write() = None;
    }

    /// The schema version (a hash of every shared definition: the system keyspaces' tables
    /// are each node's own, ids included), as a UUID's bytes.
    pub fn schema_version(&self) -> [u8; 16] {
        if let Some(v) = *self.version.read() {
            return v;
        }
        let mut all = Vec::new();
        for ks in self.keyspaces().into_iter().filter(|k| is_shared(&k.name)) {
            all.extend_from_slice(ks.name.as_bytes());
            for (k, v) in &ks.replication {
                all.extend_from_slice(k.as_bytes());
                all.extend_from_slice(v.as_bytes());
            }
            all.push(u8::from(ks.durable_writes));
            for t in self.all_tables(&ks.name) {
                all.extend_from_slice(&t.schema().encode());
            }
            for ut in self.user_types(&ks.name) {
                all.extend_from_slice(CqlType::Udt(Box::new(ut)).full_name().as_bytes());
            }
        }
        let (a, b) = cairn_engine::model::token::murmur3_x64_128(&all, 0);
        let mut v = [0u8; 16];
        v[..8].copy_from_slice(&a.to_be_bytes());
        v[8..].copy_from_slice(&b.to_be_bytes());
        // Mark it as a version-4 (random) UUID, as Cassandra's schema versions are UUIDs.
        v[6] = (v[6] & 0x0F) | 0x40;
        v[8] = (v[8] & 0x3F) | 0x80;
        *self.version.write() = Some(v);
        v
    }

    /// Errors with Cassandra's text unless the keyspace exists.
    pub fn require_keyspace(&self, name: &str) -> Result<Keyspace> {
        self.keyspace(name)
            .ok_or_else(|| Error::Invalid(format!("Keyspace '{name}' does not exist")))
    }

    /// Errors with Cassandra's text unless the table exists.
    pub fn require_table(&self, keyspace: &str, name: &str) -> Result<Arc<Table>> {
        // A table's keyspace exists (dropping a keyspace drops its tables first), so the
        // keyspace is looked at only to word the error.
        if let Some(t) = self.table(keyspace, name) {
            return Ok(t);
        }
        self.require_keyspace(keyspace)?;
        Err(Error::Invalid(format!("unconfigured table {name}")))
    }
}

/// The change drivers are told of for a change of table `schema`: an index's hidden view is
/// never shown, its creation or drop is an update of its base table (as Cassandra's
/// CREATE / DROP INDEX announce).
fn table_change(kind: ChangeKind, schema: &TableSchema) -> SchemaChange {
    match schema.view().filter(|_| schema.is_index()) {
        Some(v) => SchemaChange::new(ChangeKind::Updated, &schema.keyspace, Some(&v.base)),
        None => SchemaChange::new(kind, &schema.keyspace, Some(&schema.name)),
    }
}

/// Adds every user type in `ty` (nested ones too) to `out`.
fn collect_user_types(ty: &CqlType, out: &mut BTreeMap<(String, String), UserType>) {
    match ty {
        CqlType::List(e) | CqlType::Set(e) | CqlType::Frozen(e) => collect_user_types(e, out),
        CqlType::Map(k, v) => {
            collect_user_types(k, out);
            collect_user_types(v, out);
        }
        CqlType::Tuple(ts) => ts.iter().for_each(|t| collect_user_types(t, out)),
        CqlType::Udt(u) => {
            u.field_types
                .iter()
                .for_each(|t| collect_user_types(t, out));
            out.entry((u.keyspace.clone(), u.name.clone()))
                .or_insert_with(|| (**u).clone());
        }
        _ => {}
    }
}

/// The live rows of an internal one-row-per-partition engine table (keyspaces, roles):
/// each partition key as text with its row.
pub fn stored_rows(db: &Database, keyspace: &str, table: &str) -> Result<Vec<(String, Row)>> {
    let scan = db.scan(
        keyspace,
        table,
        PartitionPos::TokenStart(Token::MIN),
        None,
        // At startup, where waiting is allowed.
        ReadCommand::all(now_secs(), Wait::Allowed),
    )?;
    let mut out = Vec::new();
    for p in scan {
        let p = p?;
        let name = String::from_utf8_lossy(&p.key.key).into_owned();
        if let Some((_, row)) = p.rows.into_iter().next() {
            out.push((name, row));
        }
    }
    Ok(out)
}

/// Serialises a `map<text, text>` (native protocol v4).
pub fn encode_text_map(entries: &[(String, String)]) -> Bytes {
    let mut out = Vec::new();
    out.extend_from_slice(&(entries.len() as i32).to_be_bytes());
    for (k, v) in entries {
        for s in [k, v] {
            out.extend_from_slice(&(s.len() as i32).to_be_bytes());
            out.extend_from_slice(s.as_bytes());
        }
    }
    Bytes::from(out)
}

/// Parses a `map<text, text>`; malformed input yields what could be read.
pub fn decode_text_map(b: &[u8]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    let int = |pos: &mut usize| -> Option<usize> {
        let v = b.get(*pos..*pos + 4)?;
        *pos += 4;
        usize::try_from(i32::from_be_bytes([v[0], v[1], v[2], v[3]])).ok()
    };
    let Some(n) = int(&mut pos) else {
        return out;
    };
    for _ in 0..n {
        let mut next = || -> Option<String> {
            let len = int(&mut pos)?;
            let s = b.get(pos..pos + len)?;
            pos += len;
            Some(String::from_utf8_lossy(s).into_owned())
        };
        match (next(), next()) {
            (Some(k), Some(v)) => out.push((k, v)),
            _ => break,
        }
    }
    out
}

/// Seconds since the epoch.
pub fn now_secs() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs().min(u64::from(u32::MAX - 1)) as u32)
}

/// Microseconds since the epoch.
pub fn now_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}
