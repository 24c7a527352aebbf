//! Roles and permissions: Cassandra's `PasswordAuthenticator`, `CassandraRoleManager` and
//! `CassandraAuthorizer`.
//!
//! Roles, memberships and permissions are entries of the cluster's schema log
//! ([`auth_entries`](super::auth_entries)): a change is committed there and every node
//! brings its roles to the log's ([`Roles::reconcile`], called where the catalog is
//! reconciled) — the node that ran the statement before answering, and the other nodes that
//! are up, briefly waited for, so a change is visible at once wherever the driver sends next.
//! On start a node whose log holds no roles yet puts its own there: the roles an older
//! Cairn kept in its engine table `system_auth.roles`, else the default superuser
//! `cassandra` / `cassandra`, as Cassandra creates it. Passwords are
//! bcrypt hashes (Cassandra's `salted_hash`, same format).
//!
//! Permission checks ([`Roles::authorize`]) read what a role may do from a per-role cache
//! of its effective permissions (its own and those of every role granted to it), built from
//! one state of the log: a new state starts an empty cache, so no check ever sees a grant
//! older than the state it reads; `permissions_validity` bounds an entry's age as well (0:
//! no cache). What a statement needs is [`permissions::required`](super::permissions).
//!
//! Invariants: the roles change only by [`Roles::reconcile`], to what the log holds, except
//! before the log holds any (then the node's own roles stand); every change is validated on
//! the state it is committed against (a conflict validates it again on the newer state).

use super::auth_entries::{self, Role};
use super::catalog::stored_rows;
use super::permissions::{
    self, is_readable_system_table, is_system_keyspace, On, Permission, PermissionSet, Required,
    Resource, Wording,
};
use super::result::{ColumnSpec, Outcome, ResultSet};
use super::schema_guard;
use super::session::Session;
use crate::ast::{self, RoleOptions, Statement};
use crate::error::{Error, Result};
use bytes::Bytes;
use cairn_cluster::raft::command::{CommandResult, Op};
use cairn_cluster::schema_log::SchemaLog;
use cairn_engine::model::types::CqlType;
use cairn_engine::Database;
use parking_lot::RwLock;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The authenticator class drivers are told about.
pub const PASSWORD_AUTHENTICATOR: &str = "org.apache.cassandra.auth.PasswordAuthenticator";

const KS: &str = "system_auth";
const LEGACY_TABLE: &str = "roles";
const COL_LOGIN: u32 = 1;
const COL_SUPER: u32 = 2;
const COL_HASH: u32 = 3;
/// bcrypt work factor (Cassandra's default `auth_bcrypt_gensalt_log2_rounds` is 10).
const BCRYPT_COST: u32 = 10;
/// How often a change is validated again when another node changed the roles meanwhile.
const CONFLICT_TRIES: usize = 10;

/// What a role may do, worked out from it and every role granted to it.
#[derive(Debug, Default)]
pub struct Effective {
    /// Whether it or a role granted to it is a superuser.
    pub superuser: bool,
    /// It and every role granted to it.
    pub roles: BTreeSet<String>,
    root: PermissionSet,
    keyspaces: HashMap<String, KeyspacePerms>,
    all_roles: PermissionSet,
    role_perms: HashMap<String, PermissionSet>,
}

/// How deep below its keyspace a data resource is.
#[derive(Debug, Clone, Copy)]
enum Level<'a> {
    Keyspace,
    AllTables,
    Table(&'a str),
}

#[derive(Debug, Default)]
struct KeyspacePerms {
    keyspace: PermissionSet,
    all_tables: PermissionSet,
    tables: HashMap<String, PermissionSet>,
}

impl Effective {
    fn of(roles: &BTreeMap<String, Role>, name: &str) -> Effective {
        let mut e = Effective::default();
        let mut todo = vec![name.to_string()];
        while let Some(n) = todo.pop() {
            let Some(r) = roles.get(&n) else { continue };
            if !e.roles.insert(n) {
                continue;
            }
            e.superuser |= r.is_superuser;
            todo.extend(r.member_of.iter().cloned());
            for (res, set) in &r.permissions {
                let slot = match Resource::from_name(res) {
                    Some(Resource::Root) => &mut e.root,
                    Some(Resource::Keyspace(ks)) => {
                        &mut e.keyspaces.entry(ks).or_default().keyspace
                    }
                    Some(Resource::AllTables(ks)) => {
                        &mut e.keyspaces.entry(ks).or_default().all_tables
                    }
                    Some(Resource::Table(ks, t)) => e
                        .keyspaces
                        .entry(ks)
                        .or_default()
                        .tables
                        .entry(t)
                        .or_default(),
                    Some(Resource::AllRoles) => &mut e.all_roles,
                    Some(Resource::Role(r)) => e.role_perms.entry(r).or_default(),
                    None => continue,
                };
                *slot = slot.union(*set);
            }
        }
        e
    }

    /// Whether it holds `p` on a data resource or one of its parents (Cassandra's chain:
    /// table, all tables, keyspace, `ALL KEYSPACES` — which a system keyspace's chain stops
    /// below). `ks` `None` is `ALL KEYSPACES` itself.
    fn has(&self, p: Permission, ks: Option<&str>, level: Level<'_>) -> bool {
        let Some(ks) = ks else {
            return self.root.contains(p);
        };
        if !is_system_keyspace(ks) && self.root.contains(p) {
            return true;
        }
        let Some(k) = self.keyspaces.get(ks) else {
            return false;
        };
        k.keyspace.contains(p)
            || match level {
                Level::Keyspace => false,
                Level::AllTables => k.all_tables.contains(p),
                Level::Table(t) => {
                    k.all_tables.contains(p) || k.tables.get(t).is_some_and(|s| s.contains(p))
                }
            }
    }

    /// Whether it holds `p` on role `name` or `ALL ROLES`.
    fn has_role(&self, p: Permission, name: &str) -> bool {
        self.all_roles.contains(p) || self.role_perms.get(name).is_some_and(|s| s.contains(p))
    }

    fn has_on(&self, p: Permission, r: &Resource) -> bool {
        match r {
            Resource::Root => self.has(p, None, Level::Keyspace),
            Resource::Keyspace(ks) => self.has(p, Some(ks), Level::Keyspace),
            Resource::AllTables(ks) => self.has(p, Some(ks), Level::AllTables),
            Resource::Table(ks, t) => self.has(p, Some(ks), Level::Table(t)),
            Resource::AllRoles => self.all_roles.contains(p),
            Resource::Role(n) => self.has_role(p, n),
        }
    }
}

/// One state of the log's roles, with the permission cache built from it.
#[derive(Default)]
struct AuthState {
    /// The log's version this state was read at.
    version: u64,
    /// The log's auth entries (empty while the log holds no roles).
    entries: BTreeMap<String, String>,
    roles: BTreeMap<String, Role>,
    cache: RwLock<HashMap<String, (Instant, Arc<Effective>)>>,
}

impl AuthState {
    fn in_log(&self) -> bool {
        self.entries.contains_key(auth_entries::FORMAT_KEY)
    }

    /// Every role granted to `name`, recursively, itself included.
    fn granted(&self, name: &str) -> BTreeSet<String> {
        Effective::of(&self.roles, name).roles
    }

    fn role(&self, name: &str) -> Result<&Role> {
        self.roles
            .get(name)
            .ok_or_else(|| Error::Invalid(format!("{name} doesn't exist")))
    }
}

/// The permission cache's settings (`permissions_validity`; no `permissions_update_interval`:
/// a change of roles or permissions starts a new cache, so there is nothing to refresh).
#[derive(Debug, Clone, Copy)]
pub struct CacheSettings {
    /// How long a role's effective permissions are reused; zero: never.
    pub validity: Duration,
}

impl Default for CacheSettings {
    fn default() -> Self {
        // Cassandra's default `permissions_validity`.
        CacheSettings {
            validity: Duration::from_millis(2000),
        }
    }
}

/// The role store.
pub struct Roles {
    log: Arc<dyn SchemaLog>,
    state: RwLock<Arc<AuthState>>,
    cache: CacheSettings,
}

impl Roles {
    /// Opens the store on the log; puts this node's roles there if the log holds none yet
    /// (see the module doc), then follows the log.
    pub fn open(db: &Database, log: Arc<dyn SchemaLog>) -> Result<Roles> {
        let mut roles = BTreeMap::new();
        if db.table(KS, LEGACY_TABLE).is_some() {
            for (name, row) in stored_rows(db, KS, LEGACY_TABLE)? {
                let flag = |id| row.cell(id).is_some_and(|c| c.value.first() == Some(&1));
                let r = Role {
                    name: name.clone(),
                    can_login: flag(COL_LOGIN),
                    is_superuser: flag(COL_SUPER),
                    salted_hash: row
                        .cell(COL_HASH)
                        .map(|c| String::from_utf8_lossy(&c.value).into_owned()),
                    ..Role::default()
                };
                roles.insert(name, r);
            }
        }
        if roles.is_empty() && !log.state().entries.contains_key(auth_entries::FORMAT_KEY) {
            roles.insert(
                "cassandra".into(),
                Role {
                    name: "cassandra".into(),
                    can_login: true,
                    is_superuser: true,
                    salted_hash: Some(hash("cassandra")?),
                    ..Role::default()
                },
            );
        }
        let r = Roles {
            log,
            state: RwLock::new(Arc::new(AuthState {
                roles,
                ..AuthState::default()
            })),
            cache: CacheSettings::default(),
        };
        r.initialize();
        r.reconcile();
        Ok(r)
    }

    /// Sets the permission cache's settings.
    pub fn set_cache(&mut self, cache: CacheSettings) {
        self.cache = cache;
    }

    fn own_ops(state: &AuthState) -> Vec<Op> {
        let mut ops = vec![auth_entries::format()];
        ops.extend(state.roles.values().map(auth_entries::put_role));
        ops
    }

    /// Puts this node's roles in the log if it holds none yet; a log that cannot take them
    /// now keeps them here until the first role change (which carries them).
    fn initialize(&self) {
        for _ in 0..CONFLICT_TRIES {
            let log = self.log.state();
            if log.entries.contains_key(auth_entries::FORMAT_KEY) {
                return;
            }
            let ops = Self::own_ops(&self.state.read());
            match self.log.commit(log.version, ops) {
                Ok(CommandResult::Applied { .. }) => {
                    tracing::info!("the cluster's schema log holds this node's roles");
                    return;
                }
                Ok(CommandResult::Conflict { .. }) => continue,
                Err(e) => {
                    tracing::info!(
                        "this node's roles are not in the cluster's schema log yet ({e}); \
                         they go there with the first role change if no other node's do"
                    );
                    return;
                }
            }
        }
    }

    /// Brings the roles to the log's.
    pub fn reconcile(&self) {
        let log = self.log.state();
        let current = Arc::clone(&self.state.read());
        if log.version == current.version {
            return;
        }
        let entries = auth_entries::of(&log.entries);
        let next = if !entries.contains_key(auth_entries::FORMAT_KEY) {
            // The log holds no roles yet: this node's own stand.
            AuthState {
                version: log.version,
                roles: current.roles.clone(),
                ..AuthState::default()
            }
        } else if entries == current.entries {
            AuthState {
                version: log.version,
                roles: current.roles.clone(),
                entries,
                // Same roles: the cache stays valid.
                cache: RwLock::new(current.cache.read().clone()),
            }
        } else {
            AuthState {
                version: log.version,
                roles: auth_entries::decode(&entries),
                entries,
                cache: RwLock::default(),
            }
        };
        *self.state.write() = Arc::new(next);
    }

    fn snapshot(&self) -> Arc<AuthState> {
        Arc::clone(&self.state.read())
    }

    /// Commits the ops `change` makes from the current roles (none: nothing to do), and
    /// applies them here; validated again on the newer roles when another node changed them.
    fn update(&self, mut change: impl FnMut(&AuthState) -> Result<Vec<Op>>) -> Result<()> {
        for _ in 0..CONFLICT_TRIES {
            self.reconcile();
            let state = self.snapshot();
            let mut ops = change(&state)?;
            if ops.is_empty() {
                return Ok(());
            }
            if !state.in_log() {
                // The node's roles could not go to the log at start: they go with this change.
                let mut own = Self::own_ops(&state);
                own.append(&mut ops);
                ops = own;
            }
            match self.log.commit(state.version, ops)? {
                CommandResult::Applied { version } => {
                    self.reconcile();
                    // As a schema change: the nodes that are up have it before the answer,
                    // so a driver's next statement finds the role wherever it is sent.
                    self.log.settle(version);
                    return Ok(());
                }
                CommandResult::Conflict { .. } => continue,
            }
        }
        Err(Error::SchemaConflict)
    }

    /// A role by name.
    pub fn get(&self, name: &str) -> Option<Role> {
        self.state.read().roles.get(name).cloned()
    }

    /// Every role.
    pub fn all(&self) -> Vec<Role> {
        self.state.read().roles.values().cloned().collect()
    }

    /// What `user` may do, from the cache when it is fresh.
    fn effective(&self, state: &AuthState, user: &str) -> Arc<Effective> {
        if self.cache.validity.is_zero() {
            return Arc::new(Effective::of(&state.roles, user));
        }
        if let Some((at, e)) = state.cache.read().get(user) {
            if at.elapsed() < self.cache.validity {
                return Arc::clone(e);
            }
        }
        let e = Arc::new(Effective::of(&state.roles, user));
        state
            .cache
            .write()
            .insert(user.to_string(), (Instant::now(), Arc::clone(&e)));
        e
    }

    /// Checks a SASL PLAIN token (`authzid \0 user \0 password`); returns the role.
    pub fn authenticate(&self, token: &[u8]) -> Result<Role> {
        let mut parts = token.split(|b| *b == 0);
        let (Some(_authzid), Some(user), Some(pass)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(Error::BadCredentials(
                "Authentication failed: malformed SASL PLAIN token".into(),
            ));
        };
        let user = String::from_utf8_lossy(user).into_owned();
        let bad = || {
            Error::BadCredentials(format!(
                "Provided username {user} and/or password are incorrect"
            ))
        };
        let role = self.get(&user).ok_or_else(bad)?;
        let hash = role.salted_hash.as_deref().ok_or_else(bad)?;
        let pass = std::str::from_utf8(pass).map_err(|_| bad())?;
        if !bcrypt::verify(pass, hash).unwrap_or(false) {
            return Err(bad());
        }
        if !role.can_login {
            return Err(Error::BadCredentials(format!(
                "{user} is not permitted to log in"
            )));
        }
        Ok(role)
    }

    // --- checks ---------------------------------------------------------------------------

    /// Checks that the session's role holds every permission `stmt` needs
    /// ([`permissions::required`]); `keyspace` is where unqualified names resolve (a prepared
    /// statement's keyspace, else the session's). Cassandra's `ClientState.ensurePermission`.
    pub fn authorize(
        &self,
        session: &Session,
        stmt: &Statement,
        keyspace: Option<&str>,
    ) -> Result<()> {
        let user = session.user.read();
        let Some(user) = user.as_deref() else {
            return Err(Error::Unauthorized("You have not logged in".into()));
        };
        let state = self.snapshot();
        let eff = self.effective(&state, user);
        let session_ks = session.keyspace.read();
        let default_ks = keyspace.or(session_ks.as_deref());
        permissions::required(stmt, &mut |r| check(&eff, user, r, default_ks))
    }

    /// Whether the session's role holds `p` on table `ks.table` (a superuser holds every
    /// permission; so does the anonymous session without authentication), and the role's
    /// name for messages.
    pub fn holds_on_table(
        &self,
        session: &Session,
        p: Permission,
        ks: &str,
        table: &str,
    ) -> (bool, String) {
        let user = session.user.read();
        let Some(user) = user.as_deref() else {
            return (true, "anonymous".into());
        };
        let state = self.snapshot();
        let eff = self.effective(&state, user);
        (
            eff.superuser || eff.has(p, Some(ks), Level::Table(table)),
            user.to_string(),
        )
    }

    /// Whether the session's role is a superuser (true without authentication, as
    /// Cassandra's anonymous user with `AllowAllAuthenticator`).
    fn is_super(&self, state: &AuthState, session: &Session) -> bool {
        match session.user.read().as_deref() {
            None => true,
            Some(u) => self.effective(state, u).superuser,
        }
    }

    // --- role management --------------------------------------------------------------------

    /// CREATE ROLE / CREATE USER (`creator`: grant the creator the new role's permissions).
    pub fn create(
        &self,
        session: &Session,
        name: &str,
        if_not_exists: bool,
        o: &RoleOptions,
        creator: Option<&str>,
    ) -> Result<()> {
        if o.superuser == Some(true) && !self.is_super(&self.snapshot(), session) {
            return Err(Error::Unauthorized(
                "Only superusers can create a role with superuser status".into(),
            ));
        }
        if o.options.is_some() {
            return Err(Error::Invalid("Custom options are not supported".into()));
        }
        let salted_hash = match (&o.password, &o.hashed_password) {
            (Some(p), _) => Some(hash(p)?),
            (None, Some(h)) => Some(h.clone()),
            (None, None) => None,
        };
        self.update(|s| {
            if s.roles.contains_key(name) {
                if if_not_exists {
                    return Ok(Vec::new());
                }
                return Err(Error::Invalid(format!("{name} already exists")));
            }
            let mut ops = vec![auth_entries::put_role(&Role {
                name: name.to_string(),
                can_login: o.login.unwrap_or(false),
                is_superuser: o.superuser.unwrap_or(false),
                salted_hash: salted_hash.clone(),
                ..Role::default()
            })];
            // Cassandra's `grantPermissionsToCreator`.
            if let Some(c) = creator.and_then(|c| s.roles.get(c)) {
                let res = Resource::Role(name.to_string());
                let mut c = c.clone();
                c.permissions.insert(res.name(), res.applicable());
                ops.push(auth_entries::put_role(&c));
            }
            Ok(ops)
        })
    }

    /// ALTER ROLE / ALTER USER (`authorizing`: permissions are enforced).
    pub fn alter(
        &self,
        session: &Session,
        authorizing: bool,
        name: &str,
        if_exists: bool,
        o: &RoleOptions,
    ) -> Result<()> {
        let state = self.snapshot();
        let user = session.user.read().clone();
        let is_super = self.is_super(&state, session);
        if let Some(u) = &user {
            // Cassandra's `AlterRoleStatement.authorize`.
            if o.superuser.is_some() && state.granted(u).contains(name) {
                return Err(Error::Unauthorized(
                    "You aren't allowed to alter your own superuser status or that of a role granted to you".into(),
                ));
            }
            if o.superuser.is_some() && !is_super {
                return Err(Error::Unauthorized(
                    "Only superusers are allowed to alter superuser status".into(),
                ));
            }
            if !is_super {
                if u == name {
                    let refused = [
                        (o.login.is_some(), "LOGIN"),
                        (o.options.is_some(), "OPTIONS"),
                    ];
                    if let Some((_, opt)) = refused.iter().find(|(set, _)| *set) {
                        return Err(Error::Unauthorized(format!(
                            "You aren't allowed to alter {opt}"
                        )));
                    }
                } else if authorizing {
                    let eff = self.effective(&state, u);
                    check(
                        &eff,
                        u,
                        Required {
                            permission: Permission::Alter,
                            on: On::Role(name),
                            wording: Wording::Privileges,
                        },
                        None,
                    )?;
                }
            }
        }
        let new_hash = match (&o.password, &o.hashed_password) {
            (Some(p), _) => Some(hash(p)?),
            (None, Some(h)) => Some(h.clone()),
            (None, None) => None,
        };
        self.update(|s| {
            let Some(role) = s.roles.get(name) else {
                if if_exists {
                    return Ok(Vec::new());
                }
                return Err(Error::Invalid(format!("{name} doesn't exist")));
            };
            let mut role = role.clone();
            if let Some(h) = &new_hash {
                role.salted_hash = Some(h.clone());
            }
            if let Some(l) = o.login {
                role.can_login = l;
            }
            if let Some(s) = o.superuser {
                role.is_superuser = s;
            }
            Ok(vec![auth_entries::put_role(&role)])
        })
    }

    /// DROP ROLE / DROP USER: the role, its memberships and every permission on it go.
    pub fn drop(&self, session: &Session, name: &str, if_exists: bool) -> Result<()> {
        let state = self.snapshot();
        if state.roles.get(name).is_some_and(|r| r.is_superuser) && !self.is_super(&state, session)
        {
            return Err(Error::Unauthorized(
                "Only superusers can drop a role with superuser status".into(),
            ));
        }
        if session.user.read().as_deref() == Some(name) {
            return Err(Error::Invalid(
                "Cannot DROP primary role for current login".into(),
            ));
        }
        self.update(|s| {
            if !s.roles.contains_key(name) {
                if if_exists {
                    return Ok(Vec::new());
                }
                return Err(Error::Invalid(format!("{name} doesn't exist")));
            }
            let on_it = Resource::Role(name.to_string()).name();
            let mut ops = vec![auth_entries::delete_role(name)];
            for r in s.roles.values().filter(|r| r.name != name) {
                if r.member_of.contains(name) || r.permissions.contains_key(&on_it) {
                    let mut r = r.clone();
                    r.member_of.remove(name);
                    r.permissions.remove(&on_it);
                    ops.push(auth_entries::put_role(&r));
                }
            }
            Ok(ops)
        })
    }

    /// GRANT role TO grantee.
    pub fn grant_role(&self, role: &str, grantee: &str) -> Result<()> {
        self.update(|s| {
            s.role(role)?;
            let g = s.role(grantee)?;
            if s.granted(grantee).contains(role) {
                return Err(Error::Invalid(format!("{grantee} is a member of {role}")));
            }
            if s.granted(role).contains(grantee) {
                return Err(Error::Invalid(format!("{role} is a member of {grantee}")));
            }
            let mut g = g.clone();
            g.member_of.insert(role.to_string());
            Ok(vec![auth_entries::put_role(&g)])
        })
    }

    /// REVOKE role FROM revokee.
    pub fn revoke_role(&self, role: &str, revokee: &str) -> Result<()> {
        self.update(|s| {
            s.role(role)?;
            let r = s.role(revokee)?;
            if !r.member_of.contains(role) {
                return Err(Error::Invalid(format!(
                    "{revokee} is not a member of {role}"
                )));
            }
            let mut r = r.clone();
            r.member_of.remove(role);
            Ok(vec![auth_entries::put_role(&r)])
        })
    }

    // --- permissions ------------------------------------------------------------------------

    /// GRANT / REVOKE permissions (`grant`: which); `exists` says whether a data resource
    /// exists. Answers Cassandra's warnings for what was already so.
    pub fn change_permissions(
        &self,
        session: &Session,
        g: &ast::PermissionChange,
        grant: bool,
        exists: &dyn Fn(&Resource) -> bool,
    ) -> Result<Outcome> {
        if session.user.read().is_none() {
            return Err(Error::Unauthorized("You have not logged in".into()));
        }
        let resource = resolve_resource(&g.resource, session)?;
        let set = permissions::granted_set(g.permission, &resource)?;
        let mut warning = None;
        self.update(|s| {
            if !s.roles.contains_key(&g.role) {
                return Err(Error::Invalid(format!("Role {} doesn't exist", g.role)));
            }
            if !resource_exists(s, &resource, exists) {
                return Err(Error::Invalid(format!("Resource {resource} doesn't exist")));
            }
            if grant {
                permissions::check_grantable(set, &resource)?;
            }
            let mut role = s.role(&g.role)?.clone();
            let had = role
                .permissions
                .get(&resource.name())
                .copied()
                .unwrap_or_default();
            let (now, unchanged) = if grant {
                (had.union(set), set.intersect(had))
            } else {
                (had.minus(set), set.minus(had))
            };
            warning = (!unchanged.is_empty() && g.permission.is_some()).then(|| {
                let names: Vec<&str> = unchanged.iter().map(Permission::name).collect();
                let verb = if grant {
                    "was already granted"
                } else {
                    "was not granted"
                };
                format!(
                    "Role '{}' {verb} {} on {resource}",
                    g.role,
                    names.join(", ")
                )
            });
            if now == had {
                return Ok(Vec::new());
            }
            if now.is_empty() {
                role.permissions.remove(&resource.name());
            } else {
                role.permissions.insert(resource.name(), now);
            }
            Ok(vec![auth_entries::put_role(&role)])
        })?;
        Ok(Outcome::Void.with_warnings(warning.into_iter().collect()))
    }

    /// Grants `user` every permission `resource` takes (the creator of a keyspace, table or
    /// role: Cassandra's `grantPermissionsToCreator`).
    pub fn grant_to_creator(&self, user: &str, resource: &Resource) -> Result<()> {
        self.update(|s| {
            let Some(role) = s.roles.get(user) else {
                return Ok(Vec::new());
            };
            let mut role = role.clone();
            role.permissions
                .insert(resource.name(), resource.applicable());
            Ok(vec![auth_entries::put_role(&role)])
        })
    }

    /// Removes every permission on the resources `dropped` names (by name): after DROP
    /// KEYSPACE / TABLE (Cassandra's `revokeAllOn`).
    pub fn revoke_all_on(&self, dropped: &dyn Fn(&str) -> bool) -> Result<()> {
        self.update(|s| {
            let mut ops = Vec::new();
            for r in s.roles.values() {
                if r.permissions.keys().any(|k| dropped(k)) {
                    let mut r = r.clone();
                    r.permissions.retain(|k, _| !dropped(k));
                    ops.push(auth_entries::put_role(&r));
                }
            }
            Ok(ops)
        })
    }

    /// LIST PERMISSIONS (Cassandra's `ListPermissionsStatement` and
    /// `CassandraAuthorizer.list`).
    pub fn list_permissions(
        &self,
        session: &Session,
        l: &ast::ListPermissions,
        exists: &dyn Fn(&Resource) -> bool,
    ) -> Result<Outcome> {
        let Some(user) = session.user.read().clone() else {
            return Err(Error::Unauthorized("You have not logged in".into()));
        };
        let state = self.snapshot();
        let resource = match &l.resource {
            Some(r) => {
                let r = resolve_resource(r, session)?;
                if !resource_exists(&state, &r, exists) {
                    return Err(Error::Invalid(format!("{r} doesn't exist")));
                }
                Some(r)
            }
            None => None,
        };
        if let Some(of) = &l.of {
            if !state.roles.contains_key(of) {
                return Err(Error::Invalid(format!(
                    "{} doesn't exist",
                    Resource::Role(of.clone())
                )));
            }
        }
        let eff = self.effective(&state, &user);
        let allowed = eff.superuser
            || l.of.as_ref().is_some_and(|of| eff.roles.contains(of))
            || eff.all_roles.contains(Permission::Describe)
            || l.of
                .as_ref()
                .is_some_and(|of| eff.has_on(Permission::Describe, &Resource::Role(of.clone())));
        if !allowed {
            return Err(Error::Unauthorized(format!(
                "You are not authorized to view {}'s permissions",
                l.of.as_deref().unwrap_or("everyone")
            )));
        }
        let wanted = permissions::listed_set(l.permission);
        let roles: Vec<&Role> = match &l.of {
            None => state.roles.values().collect(),
            Some(of) => state
                .granted(of)
                .iter()
                .filter_map(|n| state.roles.get(n))
                .collect(),
        };
        let on: Option<Vec<String>> = resource.map(|r| {
            if l.recursive {
                r.chain().iter().map(Resource::name).collect()
            } else {
                vec![r.name()]
            }
        });
        let mut rows: Vec<(String, String, Permission)> = Vec::new();
        for r in roles {
            for (res, set) in &r.permissions {
                if on.as_ref().is_some_and(|names| !names.contains(res)) {
                    continue;
                }
                for p in set.intersect(wanted).iter() {
                    rows.push((r.name.clone(), res.clone(), p));
                }
            }
        }
        rows.sort();
        rows.dedup();
        if rows.is_empty() {
            return Ok(Outcome::Void);
        }
        let spec = |name: &str| ColumnSpec {
            keyspace: KS.into(),
            table: "permissions".into(),
            name: name.into(),
            ty: CqlType::Text,
        };
        let text = |s: &str| Some(Bytes::copy_from_slice(s.as_bytes()));
        Ok(Outcome::Rows(ResultSet {
            columns: Arc::from(vec![
                spec("role"),
                spec("username"),
                spec("resource"),
                spec("permission"),
            ]),
            rows: rows
                .iter()
                .map(|(role, res, p)| {
                    let shown = Resource::from_name(res).map_or(res.clone(), |r| r.to_string());
                    vec![text(role), text(role), text(&shown), text(p.name())]
                })
                .collect(),
            paging_state: None,
        }))
    }

    /// LIST ROLES (`users`: LIST USERS' layout); `authorizing`: what a role without DESCRIBE
    /// on `ALL ROLES` may see is limited as in Cassandra.
    pub fn list(
        &self,
        session: &Session,
        authorizing: bool,
        of: Option<&str>,
        recursive: bool,
        users: bool,
    ) -> Result<ResultSet> {
        let state = self.snapshot();
        if let Some(o) = of {
            state.role(o)?;
        }
        let user = session.user.read().clone();
        let sees_all = !authorizing
            || user.as_deref().is_none_or(|u| {
                let e = self.effective(&state, u);
                e.superuser || e.all_roles.contains(Permission::Describe)
            });
        let of_roles = |name: &str| -> BTreeSet<String> {
            if recursive {
                state.granted(name)
            } else {
                let mut s: BTreeSet<String> = state
                    .roles
                    .get(name)
                    .map(|r| r.member_of.clone())
                    .unwrap_or_default();
                s.insert(name.to_string());
                s
            }
        };
        let names: BTreeSet<String> = match (of, sees_all, user.as_deref()) {
            (None, true, _) => state.roles.keys().cloned().collect(),
            (Some(o), true, _) => of_roles(o),
            (None, false, Some(u)) => of_roles(u),
            (Some(o), false, Some(u)) => {
                if !state.granted(u).contains(o) {
                    return Err(Error::Unauthorized(format!(
                        "You are not authorized to view roles granted to {o} "
                    )));
                }
                of_roles(o)
            }
            (_, false, None) => BTreeSet::new(),
        };
        let roles: Vec<&Role> = names
            .iter()
            .filter_map(|n| state.roles.get(n))
            .filter(|r| !users || r.can_login)
            .collect();
        let spec = |name: &str, ty: CqlType| ColumnSpec {
            keyspace: KS.into(),
            table: LEGACY_TABLE.into(),
            name: name.into(),
            ty,
        };
        let b = |v: bool| Some(Bytes::from(vec![u8::from(v)]));
        if users {
            return Ok(ResultSet {
                columns: Arc::from(vec![
                    spec("name", CqlType::Text),
                    spec("super", CqlType::Boolean),
                ]),
                rows: roles
                    .iter()
                    .map(|r| {
                        vec![
                            Some(Bytes::copy_from_slice(r.name.as_bytes())),
                            b(r.is_superuser),
                        ]
                    })
                    .collect(),
                paging_state: None,
            });
        }
        Ok(ResultSet {
            columns: Arc::from(vec![
                spec("role", CqlType::Text),
                spec("super", CqlType::Boolean),
                spec("login", CqlType::Boolean),
                spec(
                    "options",
                    CqlType::Map(Box::new(CqlType::Text), Box::new(CqlType::Text)),
                ),
            ]),
            rows: roles
                .iter()
                .map(|r| {
                    vec![
                        Some(Bytes::copy_from_slice(r.name.as_bytes())),
                        b(r.is_superuser),
                        b(r.can_login),
                        Some(Bytes::from(vec![0, 0, 0, 0])),
                    ]
                })
                .collect(),
            paging_state: None,
        })
    }
}

/// Checks one requirement for `user` (Cassandra's `ensurePermission` and, for role
/// management, `AuthenticationStatement.checkPermission`'s wording).
fn check<'a>(
    eff: &Effective,
    user: &str,
    r: Required<'a>,
    default_ks: Option<&'a str>,
) -> Result<()> {
    let ks_or = |k: Option<&'a str>| -> Option<&'a str> { k.or(default_ks) };
    // Schema changes to system keyspaces are refused before any permission is looked at
    // (`preventSystemKSSchemaModification`), for superusers too.
    if matches!(
        r.permission,
        Permission::Create | Permission::Alter | Permission::Drop
    ) {
        let guard = match r.on {
            On::Keyspace(ks) => Some((ks, schema_guard::Resource::Keyspace(ks))),
            On::AllTables(ks) => ks_or(ks).map(|ks| (ks, schema_guard::Resource::AllTables(ks))),
            On::Table(ks, t) => ks_or(ks).map(|ks| (ks, schema_guard::Resource::Table(ks, t))),
            _ => None,
        };
        if let Some((ks, res)) = guard {
            let perm = match r.permission {
                Permission::Create => schema_guard::Permission::Create,
                Permission::Alter => schema_guard::Permission::Alter,
                _ => schema_guard::Permission::Drop,
            };
            schema_guard::authorize(ks, perm, res)?;
        }
    }
    if eff.superuser {
        return Ok(());
    }
    let p = r.permission;
    let ok = match r.on {
        On::Root => eff.has(p, None, Level::Keyspace),
        On::Keyspace(ks) => eff.has(p, Some(ks), Level::Keyspace),
        On::AllTables(ks) => match ks_or(ks) {
            Some(ks) => eff.has(p, Some(ks), Level::AllTables),
            // No keyspace: the statement itself says so.
            None => true,
        },
        On::Table(ks, t) => match ks_or(ks) {
            Some(ks) => {
                (p == Permission::Select && is_readable_system_table(ks, t))
                    || eff.has(p, Some(ks), Level::Table(t))
            }
            None => true,
        },
        On::AllRoles => eff.all_roles.contains(p),
        On::Role(name) => eff.has_role(p, name),
    };
    if ok {
        return Ok(());
    }
    Err(Error::Unauthorized(match r.wording {
        Wording::Privileges => format!(
            "User {user} does not have sufficient privileges to perform the requested operation"
        ),
        Wording::Resource => {
            let resource = match r.on {
                On::Root => Resource::Root,
                On::Keyspace(ks) => Resource::Keyspace(ks.into()),
                On::AllTables(ks) => Resource::AllTables(ks_or(ks).unwrap_or_default().into()),
                On::Table(ks, t) => Resource::Table(ks_or(ks).unwrap_or_default().into(), t.into()),
                On::AllRoles => Resource::AllRoles,
                On::Role(n) => Resource::Role(n.into()),
            };
            format!(
                "User {user} has no {} permission on {resource} or any of its parents",
                p.name()
            )
        }
    }))
}

/// A GRANT / REVOKE / LIST resource, an unqualified table in the session's keyspace.
fn resolve_resource(r: &ast::Resource, session: &Session) -> Result<Resource> {
    Ok(match r {
        ast::Resource::AllKeyspaces => Resource::Root,
        ast::Resource::Keyspace(ks) => Resource::Keyspace(ks.clone()),
        ast::Resource::Table(q) => Resource::Table(session.resolve(&q.keyspace)?, q.name.clone()),
        ast::Resource::AllRoles => Resource::AllRoles,
        ast::Resource::Role(r) => Resource::Role(r.clone()),
        ast::Resource::AllFunctions(_) | ast::Resource::Function(..) => {
            return Err(Error::Invalid(
                "Functions are not supported yet: there are no permissions on them to grant".into(),
            ))
        }
        ast::Resource::AllMBeans | ast::Resource::MBean(_) => {
            return Err(Error::Invalid(
                "Cairn has no JMX MBeans: there are no permissions on them to grant".into(),
            ))
        }
    })
}

fn resource_exists(s: &AuthState, r: &Resource, data: &dyn Fn(&Resource) -> bool) -> bool {
    match r {
        Resource::Root | Resource::AllRoles => true,
        Resource::Role(n) => s.roles.contains_key(n),
        _ => data(r),
    }
}

fn hash(password: &str) -> Result<String> {
    bcrypt::hash(password, BCRYPT_COST).map_err(|e| Error::Server(format!("password hashing: {e}")))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn role(name: &str, member_of: &[&str], perms: &[(&str, &[Permission])]) -> Role {
        Role {
            name: name.into(),
            member_of: member_of.iter().map(|s| s.to_string()).collect(),
            permissions: perms
                .iter()
                .map(|(r, p)| (r.to_string(), PermissionSet::of(p)))
                .collect(),
            ..Role::default()
        }
    }

    #[test]
    fn permissions_are_inherited_through_roles_and_parents() {
        use Permission::*;
        let mut roles = BTreeMap::new();
        for r in [
            role("app", &["reader"], &[("data/ks/t", &[Modify])]),
            role(
                "reader",
                &[],
                &[("data/ks", &[Select]), ("data", &[Describe])],
            ),
            role("admin", &[], &[("data", &[Select])]),
        ] {
            roles.insert(r.name.clone(), r);
        }
        let app = Effective::of(&roles, "app");
        assert!(!app.superuser);
        assert!(app.has(Modify, Some("ks"), Level::Table("t")));
        assert!(!app.has(Modify, Some("ks"), Level::Table("u")));
        // A table's permission does not reach its keyspace.
        assert!(!app.has(Modify, Some("ks"), Level::Keyspace));
        assert!(app.has(Select, Some("ks"), Level::Table("u")));
        assert!(!app.has(Select, Some("ks2"), Level::Table("u")));
        let admin = Effective::of(&roles, "admin");
        assert!(admin.has(Select, Some("ks2"), Level::Table("u")));
        // ALL KEYSPACES does not reach the system keyspaces.
        assert!(!admin.has(Select, Some("system_auth"), Level::Table("roles")));
        let req = Required {
            permission: Select,
            on: On::Table(None, "t"),
            wording: Wording::Resource,
        };
        let e = check(&Effective::of(&roles, "nobody"), "nobody", req, Some("ks")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "User nobody has no SELECT permission on <table ks.t> or any of its parents"
        );
        assert!(check(&app, "app", req, Some("ks")).is_ok());
    }
}
