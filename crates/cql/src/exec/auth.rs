//! Roles and password authentication (Cassandra's `PasswordAuthenticator` and
//! `CassandraRoleManager`, without permissions).
//!
//! Roles live in an engine table, `system_auth.roles`, so they survive restarts; passwords
//! are stored as bcrypt hashes (Cassandra's `salted_hash`, same format). On first start the
//! default superuser `cassandra` / `cassandra` is created, as Cassandra does. When
//! authentication is on, managing roles requires a superuser.

use super::catalog::{now_micros, now_secs, stored_rows};
use super::result::{ColumnSpec, ResultSet};
use super::session::Session;
use crate::ast::RoleOptions;
use crate::error::{Error, Result};
use bytes::Bytes;
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{
    Cell, ClusteringKey, ColumnData, DecoratedKey, DeletionTime, LivenessInfo, Mutation, Partition,
    Row,
};
use cairn_engine::schema::{ColumnKind, TableSchema};
use cairn_engine::table::Table;
use cairn_engine::{Database, Wait};
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The authenticator class drivers are told about.
pub const PASSWORD_AUTHENTICATOR: &str = "org.apache.cassandra.auth.PasswordAuthenticator";

const KS: &str = "system_auth";
const TABLE: &str = "roles";
const COL_LOGIN: u32 = 1;
const COL_SUPER: u32 = 2;
const COL_HASH: u32 = 3;
/// bcrypt work factor (Cassandra's default `auth_bcrypt_gensalt_log2_rounds` is 10).
const BCRYPT_COST: u32 = 10;

/// A role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Role {
    /// Name.
    pub name: String,
    /// May log in.
    pub can_login: bool,
    /// Superuser.
    pub is_superuser: bool,
    /// bcrypt hash of the password, when one is set.
    pub salted_hash: Option<String>,
}

/// The role store.
pub struct Roles {
    db: Arc<Database>,
    store: Arc<Table>,
    roles: RwLock<BTreeMap<String, Role>>,
}

impl Roles {
    /// Opens the store, creating it (and the default superuser) on first start.
    pub fn open(db: Arc<Database>) -> Result<Roles> {
        let store = match db.table(KS, TABLE) {
            Some(t) => t,
            None => db.create_table(
                TableSchema::new(KS, TABLE)
                    .with_column("role", CqlType::Text, ColumnKind::PartitionKey)
                    .with_column("can_login", CqlType::Boolean, ColumnKind::Regular)
                    .with_column("is_superuser", CqlType::Boolean, ColumnKind::Regular)
                    .with_column("salted_hash", CqlType::Text, ColumnKind::Regular),
            )?,
        };
        let mut roles = BTreeMap::new();
        for (name, row) in stored_rows(&db, KS, TABLE)? {
            let flag = |id| row.cell(id).is_some_and(|c| c.value.first() == Some(&1));
            roles.insert(
                name.clone(),
                Role {
                    name,
                    can_login: flag(COL_LOGIN),
                    is_superuser: flag(COL_SUPER),
                    salted_hash: row
                        .cell(COL_HASH)
                        .map(|c| String::from_utf8_lossy(&c.value).into_owned()),
                },
            );
        }
        let r = Roles {
            db,
            store,
            roles: RwLock::new(roles),
        };
        if r.roles.read().is_empty() {
            r.put(&Role {
                name: "cassandra".into(),
                can_login: true,
                is_superuser: true,
                salted_hash: Some(hash("cassandra")?),
            })?;
        }
        Ok(r)
    }

    fn put(&self, role: &Role) -> Result<()> {
        let ts = now_micros();
        let mut row = Row {
            marker: Some(LivenessInfo::live(ts)),
            ..Row::default()
        };
        let b = |v: bool| Bytes::from(vec![u8::from(v)]);
        row.columns.push((
            COL_LOGIN,
            ColumnData::Simple(Cell::live(ts, b(role.can_login))),
        ));
        row.columns.push((
            COL_SUPER,
            ColumnData::Simple(Cell::live(ts, b(role.is_superuser))),
        ));
        row.columns.push((
            COL_HASH,
            ColumnData::Simple(match &role.salted_hash {
                Some(h) => Cell::live(ts, Bytes::copy_from_slice(h.as_bytes())),
                None => Cell::tombstone(ts, now_secs()),
            }),
        ));
        let mut update = Partition::default();
        update.rows.insert(ClusteringKey::empty(), row);
        self.db.apply(
            vec![Mutation {
                table: self.store.schema().id,
                key: DecoratedKey::new(Bytes::copy_from_slice(role.name.as_bytes())),
                update,
            }],
            // Role changes are DDL, run only where waiting is allowed (`Executor::run`).
            Wait::Allowed,
        )?;
        self.roles.write().insert(role.name.clone(), role.clone());
        Ok(())
    }

    /// A role by name.
    pub fn get(&self, name: &str) -> Option<Role> {
        self.roles.read().get(name).cloned()
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

    fn require_superuser(&self, session: &Session, auth_on: bool, op: &str) -> Result<()> {
        if !auth_on {
            return Ok(());
        }
        let user = session.user.read().clone();
        match user.and_then(|u| self.get(&u)) {
            Some(r) if r.is_superuser => Ok(()),
            Some(r) => Err(Error::Unauthorized(format!(
                "User {} does not have sufficient privileges to perform the requested operation ({op})",
                r.name
            ))),
            None => Err(Error::Unauthorized(
                "You have not logged in".into(),
            )),
        }
    }

    /// CREATE ROLE / CREATE USER.
    pub fn create(
        &self,
        session: &Session,
        auth_on: bool,
        name: &str,
        if_not_exists: bool,
        o: &RoleOptions,
    ) -> Result<()> {
        if o.superuser == Some(true) && self.require_superuser(session, auth_on, "").is_err() {
            return Err(Error::Unauthorized(
                "Only superusers can create a role with superuser status".into(),
            ));
        }
        self.require_superuser(session, auth_on, "CREATE ROLE")?;
        if self.get(name).is_some() {
            if if_not_exists {
                return Ok(());
            }
            return Err(Error::Invalid(format!("{name} already exists")));
        }
        if o.options.is_some() {
            return Err(Error::Invalid("Custom options are not supported".into()));
        }
        let salted_hash = match (&o.password, &o.hashed_password) {
            (Some(p), _) => Some(hash(p)?),
            (None, Some(h)) => Some(h.clone()),
            (None, None) => None,
        };
        self.put(&Role {
            name: name.to_string(),
            can_login: o.login.unwrap_or(false),
            is_superuser: o.superuser.unwrap_or(false),
            salted_hash,
        })
    }

    /// ALTER ROLE / ALTER USER.
    pub fn alter(
        &self,
        session: &Session,
        auth_on: bool,
        name: &str,
        if_exists: bool,
        o: &RoleOptions,
    ) -> Result<()> {
        let Some(mut role) = self.get(name) else {
            if if_exists {
                return Ok(());
            }
            return Err(Error::Invalid(format!("{name} doesn't exist")));
        };
        // A role may change its own password; anything else needs a superuser.
        let own = session.user.read().as_deref() == Some(name);
        let only_password = o.login.is_none() && o.superuser.is_none() && o.options.is_none();
        if !(own && only_password) {
            self.require_superuser(session, auth_on, "ALTER ROLE")?;
        }
        if own && o.superuser.is_some() {
            return Err(Error::Unauthorized(
                "You aren't allowed to alter your own superuser status or that of a role granted to you".into(),
            ));
        }
        if let Some(p) = &o.password {
            role.salted_hash = Some(hash(p)?);
        }
        if let Some(h) = &o.hashed_password {
            role.salted_hash = Some(h.clone());
        }
        if let Some(l) = o.login {
            role.can_login = l;
        }
        if let Some(s) = o.superuser {
            role.is_superuser = s;
        }
        self.put(&role)
    }

    /// DROP ROLE / DROP USER.
    pub fn drop(
        &self,
        session: &Session,
        auth_on: bool,
        name: &str,
        if_exists: bool,
    ) -> Result<()> {
        self.require_superuser(session, auth_on, "DROP ROLE")?;
        if session.user.read().as_deref() == Some(name) {
            return Err(Error::Invalid(
                "Cannot DROP primary role for current login".into(),
            ));
        }
        if self.get(name).is_none() {
            if if_exists {
                return Ok(());
            }
            return Err(Error::Invalid(format!("{name} doesn't exist")));
        }
        self.db.apply(
            vec![Mutation {
                table: self.store.schema().id,
                key: DecoratedKey::new(Bytes::copy_from_slice(name.as_bytes())),
                update: Partition {
                    deletion: Some(DeletionTime {
                        marked_at: now_micros(),
                        local_deletion_time: now_secs(),
                    }),
                    ..Partition::default()
                },
            }],
            // Role changes are DDL, run only where waiting is allowed (`Executor::run`).
            Wait::Allowed,
        )?;
        self.roles.write().remove(name);
        Ok(())
    }

    /// LIST ROLES (`users`: LIST USERS' layout).
    pub fn list(&self, of: Option<&str>, users: bool) -> Result<ResultSet> {
        let spec = |name: &str, ty: CqlType| ColumnSpec {
            keyspace: KS.into(),
            table: TABLE.into(),
            name: name.into(),
            ty,
        };
        let b = |v: bool| Some(Bytes::from(vec![u8::from(v)]));
        let roles: Vec<Role> = self
            .roles
            .read()
            .values()
            .filter(|r| of.is_none_or(|o| o == r.name))
            .filter(|r| !users || r.can_login)
            .cloned()
            .collect();
        if let Some(o) = of {
            if roles.is_empty() {
                return Err(Error::Invalid(format!("{o} doesn't exist")));
            }
        }
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

fn hash(password: &str) -> Result<String> {
    bcrypt::hash(password, BCRYPT_COST).map_err(|e| Error::Server(format!("password hashing: {e}")))
}
