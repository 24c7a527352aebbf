//! Statement execution: a parsed statement plus bound values in, an [`Outcome`] out.
//!
//! The executor is synchronous, like the engine below it. Its entry points ([`Executor::query`],
//! [`Executor::execute`], [`Executor::batch`], [`Executor::run`]) take a [`Wait`]: the server
//! first runs a statement on a reactor thread with [`Wait::Never`], where one that would wait
//! — for the disk, memtable space, a commitlog sync, another request's partition lock, or a
//! schema change (DDL writes files and waits for flushes, so it is refused outright) —
//! returns [`Error::WouldBlock`] with nothing changed, and the server runs it again on a
//! blocking thread with [`Wait::Allowed`]. The mode goes down explicitly to the reads
//! (`ReadCommand::wait`), the writes (`Database::apply`) and conditional writes' rounds
//! (`StorageProxy::cas`, whose partition lock is tried, not waited for). Pieces, one file each:
//! - [`catalog`]: keyspaces and tables, as the cluster's schema log has them, with
//!   [`definitions`] for their form as the log's entries;
//! - [`auth`]: roles and permissions, in the same log ([`auth_entries`]), with
//!   [`permissions`] for what each statement needs — checked at every entry point
//!   ([`Executor::run`], [`Executor::execute`], [`Executor::batch`]) when the authorizer is on;
//! - [`consistency`]: which consistency levels each kind of statement accepts;
//! - [`options`]: table `WITH` properties ↔ the engine's typed options;
//! - [`ddl`]: CREATE / ALTER / DROP / TRUNCATE / USE, with [`create_table`] for CREATE TABLE,
//!   [`views`] for materialized views,
//!   [`replication`] for keyspace replication, [`properties`] for reading `WITH` values and
//!   [`schema_guard`] for the keyspaces a schema statement may not change;
//! - [`write`](mod@write): INSERT / UPDATE / DELETE / BATCH into engine mutations;
//! - [`restrict`]: WHERE clauses resolved against a table (keys, slices, filters);
//! - [`select`]: SELECT, paging, aggregates, with [`masks`] for column masks (`MASKED
//!   WITH`: making them, and what a user without `UNMASK` sees);
//! - [`system`]: the tables of the system keyspaces (`system`, `system_schema`,
//!   `system_virtual_schema`, `system_views`), built from live metadata;
//! - [`prepare`]: bind-variable and result metadata of prepared statements;
//! - [`plan_cache`]: what a prepared SELECT or INSERT works out once about its table.
//!
//! The vocabulary they share sits below them: [`result`] (what a statement answers),
//! [`session`] (what a request brings) and [`binds`] (bound values as terms see them).

pub mod auth;
pub mod auth_entries;
pub mod batch_limits;
pub mod binds;
pub mod catalog;
pub mod consistency;
pub mod create_table;
pub mod ddl;
pub mod definitions;
pub mod describe;
pub mod indexes;
pub mod key_text;
pub mod lwt;
pub mod masks;
pub mod options;
pub mod permissions;
pub mod plan_cache;
pub mod prepare;
pub mod properties;
pub mod replication;
pub mod restrict;
pub mod result;
pub mod schema_guard;
pub mod select;
pub mod session;
pub mod system;
pub mod user_types;
pub mod views;
pub mod write;

use crate::ast::Statement;
use crate::error::{Error, Result};
pub use crate::values::{BoundValue, TermContext, TermValue};
use crate::ParsedStatement;
pub use binds::{Binds, Placeholders};
use cairn_cluster::proxy::StorageProxy;
use cairn_cluster::schema_log::{LocalSchemaLog, SchemaLog};
use cairn_engine::Wait;
use catalog::Catalog;
use parking_lot::{Mutex, RwLock};
pub use result::{ChangeKind, ColumnSpec, Outcome, ResultSet, SchemaChange};
pub use session::{BatchOptions, Levels, QueryParams, Session};
use std::collections::HashMap;
use std::sync::Arc;

/// How many times a schema statement is checked again when another node changed the
/// schema between its check and its commit.
const SCHEMA_CONFLICT_RETRIES: usize = 10;

/// A prepared statement.
#[derive(Debug)]
pub struct Prepared {
    /// Statement id (stable: a hash of the keyspace and the query text).
    pub id: [u8; 16],
    /// The statement.
    pub parsed: ParsedStatement,
    /// The text it was prepared from (what the audit log records of an EXECUTE).
    pub text: String,
    /// The session keyspace at PREPARE time (unqualified names resolve in it).
    pub keyspace: Option<String>,
    /// One spec per bind marker.
    pub bind_specs: Vec<ColumnSpec>,
    /// For each partition-key column, the index of the bind marker giving it (token-aware
    /// routing); empty when not every partition-key column is bound.
    pub pk_indexes: Vec<u16>,
    /// Result columns of a SELECT (empty otherwise).
    pub result: Vec<ColumnSpec>,
    /// A SELECT's planned selection, made at its first execution.
    select_plan: plan_cache::PlanCache<select::Plan>,
    /// Where an INSERT's values go, worked out at its first execution.
    insert_plan: plan_cache::PlanCache<write::InsertPlan>,
}

/// Executes statements against a database.
pub struct Executor {
    /// Where statements' reads and writes go (see `cairn_cluster::proxy`).
    proxy: Arc<StorageProxy>,
    catalog: Catalog,
    roles: auth::Roles,
    authentication: bool,
    /// Permissions are enforced (`authorizer: CassandraAuthorizer`).
    authorization: bool,
    node: system::NodeInfo,
    prepared: RwLock<HashMap<[u8; 16], Arc<Prepared>, foldhash::fast::RandomState>>,
    /// Serialises DDL, as Cassandra's schema changes are serialised.
    ddl: Mutex<()>,
    /// Batch size and partition-count thresholds.
    batch_limits: batch_limits::BatchLimits,
    /// `materialized_views_enabled`: CREATE MATERIALIZED VIEW is allowed.
    views_enabled: bool,
    /// `dynamic_data_masking_enabled`: columns may be masked (`MASKED WITH`).
    masking_enabled: bool,
}

impl Executor {
    /// Opens the catalog on the proxy's database, serving as the node `node` describes (its
    /// identity comes from `cairn_cluster::identity`); statements read and write through
    /// `proxy`. The schema is the executor's own (a log of one in memory): for an executor
    /// embedded without a node; a node's shares its schema through
    /// [`Executor::open_with_log`].
    pub fn open(proxy: Arc<StorageProxy>, node: system::NodeInfo) -> Result<Executor> {
        Self::open_with_log(proxy, node, Arc::new(LocalSchemaLog::default()))
    }

    /// [`Executor::open`] with schema changes committed to `log` (a node's group 0), whose
    /// entries the executor applies ([`Executor::sync_schema`]).
    pub fn open_with_log(
        proxy: Arc<StorageProxy>,
        node: system::NodeInfo,
        log: Arc<dyn SchemaLog>,
    ) -> Result<Executor> {
        Ok(Executor {
            roles: auth::Roles::open(proxy.db(), Arc::clone(&log))?,
            catalog: Catalog::open(Arc::clone(&proxy), log)?,
            proxy,
            authentication: false,
            authorization: false,
            node,
            prepared: RwLock::new(HashMap::default()),
            ddl: Mutex::new(()),
            batch_limits: batch_limits::BatchLimits::default(),
            views_enabled: true,
            masking_enabled: false,
        })
    }

    /// Sets the batch thresholds (`batch_size_warn_threshold`, …; Cassandra's defaults
    /// otherwise).
    pub fn with_batch_limits(mut self, limits: batch_limits::BatchLimits) -> Self {
        self.batch_limits = limits;
        self
    }

    /// Allows or refuses CREATE MATERIALIZED VIEW (`materialized_views_enabled`; on unless
    /// told otherwise, as in ScyllaDB).
    pub fn with_materialized_views(mut self, on: bool) -> Self {
        self.views_enabled = on;
        self
    }

    /// Allows or refuses column masks (`dynamic_data_masking_enabled`; off unless told
    /// otherwise, as in Cassandra). Masks already in the schema apply either way.
    pub fn with_dynamic_data_masking(mut self, on: bool) -> Self {
        self.masking_enabled = on;
        self
    }

    /// Whether columns may be masked (`MASKED WITH`).
    pub fn dynamic_data_masking_enabled(&self) -> bool {
        self.masking_enabled
    }

    /// Whether CREATE MATERIALIZED VIEW is allowed.
    pub fn materialized_views_enabled(&self) -> bool {
        self.views_enabled
    }

    /// The batch thresholds.
    pub fn batch_limits(&self) -> batch_limits::BatchLimits {
        self.batch_limits
    }

    /// The storage proxy statements read and write through.
    pub fn proxy(&self) -> &Arc<StorageProxy> {
        &self.proxy
    }

    /// The catalog.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Brings the schema to the schema log's (after another node changed it); returns the
    /// changes no statement on this node answered, for drivers' SCHEMA_CHANGE events.
    /// Blocks: schema changes write files.
    pub fn sync_schema(&self) -> Result<Vec<SchemaChange>> {
        let _serial = self.ddl.lock();
        self.catalog.reconcile()?;
        self.roles.reconcile();
        let changes = self.catalog.take_unpublished();
        if !changes.is_empty() {
            // Prepared statements may describe columns that changed.
            self.prepared.write().clear();
        }
        Ok(changes)
    }

    /// Requires clients to log in with a password (`authenticator: PasswordAuthenticator`).
    pub fn with_authentication(mut self, on: bool) -> Self {
        self.authentication = on;
        self
    }

    /// Enforces permissions (`authorizer: CassandraAuthorizer`; it needs authentication),
    /// caching each role's as `cache` says.
    pub fn with_authorization(mut self, on: bool, cache: auth::CacheSettings) -> Self {
        self.authorization = on;
        self.roles.set_cache(cache);
        self
    }

    /// Whether permissions are enforced.
    pub fn authorization(&self) -> bool {
        self.authorization
    }

    /// Checks that the session's role may run `stmt` (nothing when permissions are not
    /// enforced); unqualified names resolve in `keyspace`, else the session's.
    fn authorize(&self, session: &Session, stmt: &Statement, keyspace: Option<&str>) -> Result<()> {
        if !self.authorization || session.is_internal() {
            return Ok(());
        }
        self.roles.authorize(session, stmt, keyspace)
    }

    /// What the session may do with the masked columns of table `ks.table`, and its user's
    /// name: everything when permissions are not enforced (Cassandra's
    /// `AllowAllAuthorizer`) or for the node's own statements.
    pub(crate) fn mask_access(
        &self,
        session: &Session,
        ks: &str,
        table: &str,
    ) -> (masks::SelectAccess, String) {
        if !self.authorization || session.is_internal() {
            return (
                masks::SelectAccess {
                    unmask: true,
                    select_masked: true,
                },
                String::new(),
            );
        }
        let (unmask, user) =
            self.roles
                .holds_on_table(session, permissions::Permission::Unmask, ks, table);
        let (select_masked, _) =
            self.roles
                .holds_on_table(session, permissions::Permission::SelectMasked, ks, table);
        (
            masks::SelectAccess {
                unmask,
                select_masked: unmask || select_masked,
            },
            user,
        )
    }

    /// After a schema statement: its creator gets every permission on what it created, and
    /// permissions on what it dropped go (Cassandra's `grantPermissionsToCreator` and
    /// `AuthSchemaChangeListener`).
    fn after_schema_change(
        &self,
        session: &Session,
        stmt: &Statement,
        out: &Outcome,
    ) -> Result<()> {
        use permissions::Resource;
        let change = match out {
            Outcome::SchemaChange(c) => c,
            Outcome::Warned(inner, _) => match inner.as_ref() {
                Outcome::SchemaChange(c) => c,
                _ => return Ok(()),
            },
            _ => return Ok(()),
        };
        let (ks, table) = (change.keyspace.clone(), change.table.clone());
        match (stmt, change.change) {
            (Statement::CreateKeyspace(_) | Statement::CreateTable(_), ChangeKind::Created) => {
                let user = session.user.read().clone();
                if let (true, Some(user)) = (self.authorization, user) {
                    let r = match table {
                        Some(t) => Resource::Table(ks, t),
                        None => Resource::Keyspace(ks),
                    };
                    self.roles.grant_to_creator(&user, &r)?;
                }
            }
            (Statement::DropKeyspace(_), ChangeKind::Dropped) => {
                let own = Resource::Keyspace(ks.clone()).name();
                let below = format!("{own}/");
                self.roles
                    .revoke_all_on(&|r| r == own || r.starts_with(&below))?;
            }
            (Statement::DropTable(_), ChangeKind::Dropped) => {
                if let Some(t) = table {
                    let name = Resource::Table(ks, t).name();
                    self.roles.revoke_all_on(&|r| r == name)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The authenticator class clients must use, when authentication is on.
    pub fn authenticator(&self) -> Option<&'static str> {
        self.authentication.then_some(auth::PASSWORD_AUTHENTICATOR)
    }

    /// Checks a SASL PLAIN token and logs the session in.
    pub fn authenticate(&self, session: &Session, token: &[u8]) -> Result<()> {
        let role = self.roles.authenticate(token)?;
        *session.user.write() = Some(role.name);
        Ok(())
    }

    /// The role store.
    pub fn roles(&self) -> &auth::Roles {
        &self.roles
    }

    /// Whether authentication is on.
    pub fn authentication(&self) -> bool {
        self.authentication
    }

    /// What the node says about itself.
    pub fn node(&self) -> &system::NodeInfo {
        &self.node
    }

    /// Parses and runs one statement; `wait` says whether it may wait (see the module doc).
    pub fn query(
        &self,
        session: &Session,
        text: &str,
        params: &QueryParams,
        wait: Wait,
    ) -> Result<Outcome> {
        if describe::is_describe(text) {
            return describe::run(self, session, text).map(Outcome::Rows);
        }
        let trace = params.trace.as_ref();
        cairn_engine::trace::event(trace, || format!("Parsing {text}"));
        let parsed = crate::parse_statement(text)?;
        cairn_engine::trace::event(trace, || "Preparing statement".into());
        // A view refuses any marker when it is prepared, before values are counted.
        let own_refusal = matches!(parsed.statement, crate::ast::Statement::CreateView(_));
        if parsed.bind_markers.len() > params.values.len() && params.names.is_none() && !own_refusal
        {
            return Err(Error::Invalid(format!(
                "Invalid amount of bind variables: expected {}, received {}",
                parsed.bind_markers.len(),
                params.values.len()
            )));
        }
        self.run(session, &parsed.statement, params, wait)
    }

    /// Prepares a statement (idempotent: the same text in the same keyspace gets the same id).
    pub fn prepare(&self, session: &Session, text: &str) -> Result<Arc<Prepared>> {
        let parsed = crate::parse_statement(text)?;
        let keyspace = session.keyspace.read().clone();
        let mut h = Vec::with_capacity(text.len() + 32);
        h.extend_from_slice(keyspace.as_deref().unwrap_or("").as_bytes());
        h.push(0);
        h.extend_from_slice(text.as_bytes());
        let (a, b) = cairn_engine::model::token::murmur3_x64_128(&h, 0);
        let mut id = [0u8; 16];
        id[..8].copy_from_slice(&a.to_be_bytes());
        id[8..].copy_from_slice(&b.to_be_bytes());
        if let Some(p) = self.prepared.read().get(&id) {
            return Ok(Arc::clone(p));
        }
        let scoped = session.scoped(keyspace.clone());
        let meta = prepare::describe(self, &scoped, &parsed)?;
        let p = Arc::new(Prepared {
            id,
            parsed,
            text: text.to_string(),
            keyspace,
            bind_specs: meta.bind_specs,
            pk_indexes: meta.pk_indexes,
            result: meta.result,
            select_plan: Default::default(),
            insert_plan: Default::default(),
        });
        self.prepared.write().insert(id, Arc::clone(&p));
        Ok(p)
    }

    /// A prepared statement by id.
    pub fn prepared(&self, id: &[u8]) -> Result<Arc<Prepared>> {
        let key: [u8; 16] = id.try_into().map_err(|_| Error::Unprepared(id.to_vec()))?;
        self.prepared
            .read()
            .get(&key)
            .cloned()
            .ok_or_else(|| Error::Unprepared(id.to_vec()))
    }

    /// Runs a prepared statement; `wait` says whether it may wait (see the module doc).
    pub fn execute(
        &self,
        session: &Session,
        id: &[u8],
        params: &QueryParams,
        wait: Wait,
    ) -> Result<Outcome> {
        let p = self.prepared(id)?;
        if params.values.len() != p.bind_specs.len() && params.names.is_none() {
            return Err(Error::Invalid(format!(
                "Invalid amount of bind variables: expected {}, received {}",
                p.bind_specs.len(),
                params.values.len()
            )));
        }
        // Unqualified names resolve in the keyspace the statement was prepared in.
        let scoped;
        let session = match &p.keyspace {
            Some(ks) if session.keyspace.read().as_deref() != Some(ks.as_str()) => {
                scoped = session.scoped(Some(ks.clone()));
                &scoped
            }
            _ => session,
        };
        match &p.parsed.statement {
            Statement::Select(s) => {
                // Checked at every execution, not only at PREPARE: grants change.
                self.authorize(session, &p.parsed.statement, None)?;
                select::select(self, session, s, params, Some(&p.select_plan), wait)
            }
            Statement::Insert(i) => {
                self.authorize(session, &p.parsed.statement, None)?;
                refuse_virtual_write(session, &i.table)?;
                write::insert(self, session, i, params, Some(&p.insert_plan), wait)
            }
            other => self.run(session, other, params, wait),
        }
    }

    /// Runs a BATCH of (statement, values) pairs as one atomic write at the batch's levels
    /// (`options`); `wait` says whether it may wait (see the module doc).
    pub fn batch(
        &self,
        session: &Session,
        kind: crate::ast::BatchKind,
        items: &[(BatchItem, QueryParams)],
        options: BatchOptions<'_>,
        wait: Wait,
    ) -> Result<Outcome> {
        let mut statements = Vec::with_capacity(items.len());
        for (item, params) in items {
            let (stmt, keyspace) = match item {
                BatchItem::Query(text) => {
                    cairn_engine::trace::event(options.trace, || format!("Parsing {text}"));
                    (crate::parse_statement(text)?.statement, None)
                }
                BatchItem::Prepared(id) => {
                    let p = self.prepared(id)?;
                    (p.parsed.statement.clone(), p.keyspace.clone())
                }
            };
            self.authorize(session, &stmt, keyspace.as_deref())?;
            refuse_virtual_writes(session, &stmt)?;
            statements.push((stmt, params.clone()));
        }
        write::batch(self, session, kind, &statements, options, wait)
    }

    /// Runs one statement; `wait` says whether it may wait (see the module doc).
    pub fn run(
        &self,
        session: &Session,
        stmt: &Statement,
        params: &QueryParams,
        wait: Wait,
    ) -> Result<Outcome> {
        self.authorize(session, stmt, None)?;
        match stmt {
            Statement::Select(s) => select::select(self, session, s, params, None, wait),
            Statement::Insert(_) | Statement::Update(_) | Statement::Delete(_) => {
                refuse_virtual_writes(session, stmt)?;
                write::modify(self, session, stmt, params, wait)
            }
            Statement::Batch(b) => {
                refuse_virtual_writes(session, stmt)?;
                write::batch_statement(self, session, b, params, wait)
            }
            Statement::Use(ks) => {
                if !system::is_virtual_keyspace(ks) {
                    self.catalog.require_keyspace(ks)?;
                }
                *session.keyspace.write() = Some(ks.clone());
                Ok(Outcome::SetKeyspace(ks.clone()))
            }
            other => {
                // Schema and role changes write files and wait for flushes.
                wait.permit()?;
                let serial = self.ddl.lock();
                let mut conflicts = 0;
                let out = loop {
                    match ddl::run(self, session, other) {
                        // Another node changed the schema since this one applied it: the
                        // statement is checked again on the newer schema.
                        Err(Error::SchemaConflict) if conflicts < SCHEMA_CONFLICT_RETRIES => {
                            conflicts += 1;
                            self.catalog.reconcile()?;
                        }
                        other => break other?,
                    }
                };
                self.after_schema_change(session, other, &out)?;
                if out.is_schema_change() {
                    // Prepared statements may describe columns that changed.
                    self.prepared.write().clear();
                }
                // The other nodes apply the change under their own DDL lock, and may be
                // asking this node the same: wait for them without holding this one's.
                drop(serial);
                self.catalog.settle();
                Ok(out)
            }
        }
    }
}

/// Cassandra's error for a write into a virtual table (they are read-only), and Cairn's for
/// one into `system_auth` (served from the roles), before the write path sees the statement.
/// Cheap for every other write: no allocation.
fn refuse_virtual_write(session: &Session, table: &crate::ast::QualifiedName) -> Result<()> {
    let virtual_ks = match &table.keyspace {
        Some(ks) => system::is_read_only_keyspace(ks),
        None => session
            .keyspace
            .read()
            .as_deref()
            .is_some_and(system::is_read_only_keyspace),
    };
    if !virtual_ks {
        return Ok(());
    }
    system::refuse_virtual_write(&session.resolve(&table.keyspace)?, &table.name)
}

/// [`refuse_virtual_write`] for each table a write statement (or BATCH) writes to.
fn refuse_virtual_writes(session: &Session, stmt: &Statement) -> Result<()> {
    use crate::ast::BatchStatement;
    match stmt {
        Statement::Insert(i) => refuse_virtual_write(session, &i.table),
        Statement::Update(u) => refuse_virtual_write(session, &u.table),
        Statement::Delete(d) => refuse_virtual_write(session, &d.table),
        Statement::Batch(b) => b.statements.iter().try_for_each(|s| match s {
            BatchStatement::Insert(i) => refuse_virtual_write(session, &i.table),
            BatchStatement::Update(u) => refuse_virtual_write(session, &u.table),
            BatchStatement::Delete(d) => refuse_virtual_write(session, &d.table),
        }),
        _ => Ok(()),
    }
}

/// One statement of a protocol BATCH.
#[derive(Debug, Clone)]
pub enum BatchItem {
    /// Query text.
    Query(String),
    /// A prepared statement's id.
    Prepared(Vec<u8>),
}
