//! Permissions and what they are granted on — Cassandra's `Permission`, `DataResource` and
//! `RoleResource` — and the one place that says what a statement needs ([`required`]).
//!
//! Resources are named as Cassandra stores them in `system_auth.role_permissions`
//! (`data`, `data/ks`, `data/ks/t`, `roles`, `roles/r`) and shown as it shows them
//! (`<all keyspaces>`, `<keyspace ks>`, `<table ks.t>`, `<all roles>`, `<role r>`).
//! [`required`] is pure: it reads the statement only (an unqualified table's keyspace is
//! left for the checker to take from the session), so that every entry point — a query, a
//! prepared statement at each EXECUTE, each member of a BATCH — checks the same needs.
//! Role statements whose needs depend on the roles themselves (ALTER ROLE of one's own
//! role, LIST ROLES / LIST PERMISSIONS) are checked by the role store (`super::auth`).

use crate::ast::{self, BatchStatement, Conditions, QualifiedName, Statement};
use crate::error::{Error, Result, SyntaxError};

/// A permission, in Cassandra's order (LIST PERMISSIONS sorts by it): the parser's.
pub use crate::ast::Permission;

impl Permission {
    /// Every permission, in order.
    pub const ALL: [Permission; 10] = [
        Permission::Create,
        Permission::Alter,
        Permission::Drop,
        Permission::Select,
        Permission::Modify,
        Permission::Authorize,
        Permission::Describe,
        Permission::Execute,
        Permission::Unmask,
        Permission::SelectMasked,
    ];

    /// Cassandra's name (as stored and listed).
    pub fn name(self) -> &'static str {
        match self {
            Permission::Create => "CREATE",
            Permission::Alter => "ALTER",
            Permission::Drop => "DROP",
            Permission::Select => "SELECT",
            Permission::Modify => "MODIFY",
            Permission::Authorize => "AUTHORIZE",
            Permission::Describe => "DESCRIBE",
            Permission::Execute => "EXECUTE",
            Permission::Unmask => "UNMASK",
            Permission::SelectMasked => "SELECT_MASKED",
        }
    }

    /// The permission a stored name names.
    pub fn from_name(name: &str) -> Option<Permission> {
        Permission::ALL.into_iter().find(|p| p.name() == name)
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

/// A set of permissions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct PermissionSet(u16);

impl PermissionSet {
    /// No permission.
    pub const NONE: PermissionSet = PermissionSet(0);

    /// The set of `perms`.
    pub fn of(perms: &[Permission]) -> PermissionSet {
        let mut s = PermissionSet::NONE;
        for p in perms {
            s.insert(*p);
        }
        s
    }

    /// Whether `p` is in the set.
    pub fn contains(self, p: Permission) -> bool {
        self.0 & p.bit() != 0
    }

    /// Adds `p`.
    pub fn insert(&mut self, p: Permission) {
        self.0 |= p.bit();
    }

    /// Both sets.
    pub fn union(self, o: PermissionSet) -> PermissionSet {
        PermissionSet(self.0 | o.0)
    }

    /// What is in `self` but not in `o`.
    pub fn minus(self, o: PermissionSet) -> PermissionSet {
        PermissionSet(self.0 & !o.0)
    }

    /// What is in both.
    pub fn intersect(self, o: PermissionSet) -> PermissionSet {
        PermissionSet(self.0 & o.0)
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The permissions, in order.
    pub fn iter(self) -> impl Iterator<Item = Permission> {
        Permission::ALL
            .into_iter()
            .filter(move |p| self.contains(*p))
    }
}

/// Cassandra's `DataResource.KEYSPACE_LEVEL_PERMISSIONS` (also the root's).
const KEYSPACE_LEVEL: PermissionSet = PermissionSet(
    1 << Permission::Create as u16
        | 1 << Permission::Alter as u16
        | 1 << Permission::Drop as u16
        | 1 << Permission::Select as u16
        | 1 << Permission::Modify as u16
        | 1 << Permission::Authorize as u16
        | 1 << Permission::Unmask as u16
        | 1 << Permission::SelectMasked as u16,
);
/// `DataResource.TABLE_LEVEL_PERMISSIONS`: the keyspace level without CREATE.
const TABLE_LEVEL: PermissionSet =
    PermissionSet(KEYSPACE_LEVEL.0 & !(1 << Permission::Create as u16));
/// `RoleResource.ROOT_LEVEL_PERMISSIONS`.
const ROLES_ROOT_LEVEL: PermissionSet = PermissionSet(
    1 << Permission::Create as u16
        | 1 << Permission::Alter as u16
        | 1 << Permission::Drop as u16
        | 1 << Permission::Authorize as u16
        | 1 << Permission::Describe as u16,
);
/// `RoleResource.ROLE_LEVEL_PERMISSIONS`.
const ROLE_LEVEL: PermissionSet =
    PermissionSet(ROLES_ROOT_LEVEL.0 & !(1 << Permission::Create as u16));
/// `Permission.INVALID_FOR_SYSTEM_KEYSPACES`: all but SELECT, DESCRIBE and ALTER.
const INVALID_FOR_SYSTEM_KEYSPACES: PermissionSet = PermissionSet(
    !(1 << Permission::Select as u16
        | 1 << Permission::Describe as u16
        | 1 << Permission::Alter as u16)
        & 0x3ff,
);

/// What a permission is granted on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Resource {
    /// `ALL KEYSPACES` (`data`).
    Root,
    /// `KEYSPACE ks` (`data/ks`).
    Keyspace(String),
    /// Every table of a keyspace (`data/ks/*`): in a table's chain, not grantable in CQL.
    AllTables(String),
    /// `TABLE ks.t` (`data/ks/t`).
    Table(String, String),
    /// `ALL ROLES` (`roles`).
    AllRoles,
    /// `ROLE r` (`roles/r`).
    Role(String),
}

impl Resource {
    /// Cassandra's stored name.
    pub fn name(&self) -> String {
        match self {
            Resource::Root => "data".into(),
            Resource::Keyspace(ks) => format!("data/{ks}"),
            Resource::AllTables(ks) => format!("data/{ks}/*"),
            Resource::Table(ks, t) => format!("data/{ks}/{t}"),
            Resource::AllRoles => "roles".into(),
            Resource::Role(r) => format!("roles/{r}"),
        }
    }

    /// The resource a stored name names.
    pub fn from_name(name: &str) -> Option<Resource> {
        if name == "data" {
            return Some(Resource::Root);
        }
        if name == "roles" {
            return Some(Resource::AllRoles);
        }
        if let Some(r) = name.strip_prefix("roles/") {
            return Some(Resource::Role(r.to_string()));
        }
        let rest = name.strip_prefix("data/")?;
        Some(match rest.split_once('/') {
            None => Resource::Keyspace(rest.to_string()),
            Some((ks, "*")) => Resource::AllTables(ks.to_string()),
            Some((ks, t)) => Resource::Table(ks.to_string(), t.to_string()),
        })
    }

    /// The permissions that may be granted on it (`IResource.applicablePermissions`).
    pub fn applicable(&self) -> PermissionSet {
        match self {
            Resource::Root | Resource::Keyspace(_) | Resource::AllTables(_) => KEYSPACE_LEVEL,
            Resource::Table(..) => TABLE_LEVEL,
            Resource::AllRoles => ROLES_ROOT_LEVEL,
            Resource::Role(_) => ROLE_LEVEL,
        }
    }

    /// Its parent (`IResource.getParent`).
    pub fn parent(&self) -> Option<Resource> {
        match self {
            Resource::Root | Resource::AllRoles => None,
            Resource::Keyspace(_) => Some(Resource::Root),
            Resource::AllTables(ks) => Some(Resource::Keyspace(ks.clone())),
            Resource::Table(ks, _) => Some(Resource::AllTables(ks.clone())),
            Resource::Role(_) => Some(Resource::AllRoles),
        }
    }

    /// The resource and its parents, up to the root (`Resources.chain`).
    pub fn chain(&self) -> Vec<Resource> {
        let mut out = vec![self.clone()];
        while let Some(p) = out.last().and_then(Resource::parent) {
            out.push(p);
        }
        out
    }

    /// The keyspace of a data resource below the root.
    pub fn keyspace(&self) -> Option<&str> {
        match self {
            Resource::Keyspace(ks) | Resource::AllTables(ks) | Resource::Table(ks, _) => Some(ks),
            _ => None,
        }
    }

    fn class_name(&self) -> &'static str {
        match self {
            Resource::AllRoles | Resource::Role(_) => "RoleResource",
            _ => "DataResource",
        }
    }
}

impl std::fmt::Display for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Resource::Root => f.write_str("<all keyspaces>"),
            Resource::Keyspace(ks) => write!(f, "<keyspace {ks}>"),
            Resource::AllTables(ks) => write!(f, "<all tables in {ks}>"),
            Resource::Table(ks, t) => write!(f, "<table {ks}.{t}>"),
            Resource::AllRoles => f.write_str("<all roles>"),
            Resource::Role(r) => write!(f, "<role {r}>"),
        }
    }
}

/// Cassandra's system keyspaces, as `SchemaConstants.isSystemKeyspace` (local, virtual and
/// replicated): `ALL KEYSPACES` does not reach them.
pub fn is_system_keyspace(ks: &str) -> bool {
    matches!(
        ks.to_ascii_lowercase().as_str(),
        "system"
            | "system_schema"
            | "system_views"
            | "system_virtual_schema"
            | "system_auth"
            | "system_traces"
            | "system_distributed"
    )
}

/// `ClientState.READABLE_SYSTEM_RESOURCES`: tables every logged-in role may SELECT (the
/// drivers and tools read them).
pub fn is_readable_system_table(ks: &str, table: &str) -> bool {
    match ks {
        "system" => matches!(
            table,
            "local" | "peers" | "peers_v2" | "size_estimates" | "table_estimates"
        ),
        "system_schema" | "system_virtual_schema" => true,
        "system_traces" => matches!(table, "events" | "sessions"),
        _ => false,
    }
}

/// The permissions a GRANT / REVOKE names, narrowed to those the resource takes (the
/// grammar's `filterPermissions`): `ALL` is every applicable one; none left is Cassandra's
/// syntax error.
pub fn granted_set(p: Option<Permission>, resource: &Resource) -> Result<PermissionSet> {
    let asked = match p {
        None => PermissionSet(0x3ff),
        Some(p) => PermissionSet::of(&[p]),
    };
    let set = asked.intersect(resource.applicable());
    if set.is_empty() {
        return Err(Error::Syntax(SyntaxError::unpositioned(format!(
            "Resource type {} does not support any of the requested permissions",
            resource.class_name()
        ))));
    }
    Ok(set)
}

/// The permissions LIST PERMISSIONS asks for (`ALL`: every one).
pub fn listed_set(p: Option<Permission>) -> PermissionSet {
    match p {
        None => PermissionSet(0x3ff),
        Some(p) => PermissionSet::of(&[p]),
    }
}

/// Cassandra's check on GRANT: few permissions may be granted on system keyspaces.
pub fn check_grantable(set: PermissionSet, resource: &Resource) -> Result<()> {
    let system = resource.keyspace().is_some_and(|ks| {
        is_system_keyspace(ks) && !super::system::is_virtual_keyspace(&ks.to_ascii_lowercase())
    });
    if system && !set.intersect(INVALID_FOR_SYSTEM_KEYSPACES).is_empty() {
        return Err(Error::Unauthorized(
            "Granting permissions on system keyspaces is strictly limited, this operation is not permitted"
                .into(),
        ));
    }
    Ok(())
}

/// What a requirement is on: a statement's names, an unqualified table's keyspace left to
/// the session (`None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum On<'a> {
    /// `ALL KEYSPACES`.
    Root,
    /// A keyspace.
    Keyspace(&'a str),
    /// Every table of a keyspace (`None`: the session's).
    AllTables(Option<&'a str>),
    /// A table (keyspace `None`: the session's).
    Table(Option<&'a str>, &'a str),
    /// `ALL ROLES`.
    AllRoles,
    /// A role.
    Role(&'a str),
}

/// How a refusal is worded: data statements name the permission and resource; role
/// management says the user lacks privileges (`AuthenticationStatement.checkPermission`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wording {
    /// "User u has no P permission on R or any of its parents".
    Resource,
    /// "User u does not have sufficient privileges to perform the requested operation".
    Privileges,
}

/// One permission a statement needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Required<'a> {
    /// The permission.
    pub permission: Permission,
    /// On what.
    pub on: On<'a>,
    /// How a refusal is worded.
    pub wording: Wording,
}

fn need(permission: Permission, on: On<'_>) -> Required<'_> {
    Required {
        permission,
        on,
        wording: Wording::Resource,
    }
}

fn role_need(permission: Permission, on: On<'_>) -> Required<'_> {
    Required {
        permission,
        on,
        wording: Wording::Privileges,
    }
}

fn table(q: &QualifiedName) -> On<'_> {
    On::Table(q.keyspace.as_deref(), &q.name)
}

fn ks_of(q: &QualifiedName) -> Option<&str> {
    q.keyspace.as_deref()
}

/// A permission-management statement's resource (`None`: functions and MBeans, which
/// Cairn refuses).
pub fn on_of(r: &ast::Resource) -> Option<On<'_>> {
    Some(match r {
        ast::Resource::AllKeyspaces => On::Root,
        ast::Resource::Keyspace(ks) => On::Keyspace(ks),
        ast::Resource::Table(q) => table(q),
        ast::Resource::AllRoles => On::AllRoles,
        ast::Resource::Role(r) => On::Role(r),
        _ => return None,
    })
}

/// Every permission `stmt` needs, in the order Cassandra checks them, each passed to
/// `each` (which stops at the first refusal). Statements that need none here: USE (a
/// login only), LIST ROLES / LIST PERMISSIONS and ALTER ROLE (the role store checks them:
/// what they need depends on the roles).
pub fn required<'a>(
    stmt: &'a Statement,
    each: &mut dyn FnMut(Required<'a>) -> Result<()>,
) -> Result<()> {
    use Permission::*;
    match stmt {
        Statement::Select(s) => each(need(Select, table(&s.table))),
        Statement::Insert(i) => {
            each(need(Modify, table(&i.table)))?;
            if i.if_not_exists {
                each(need(Select, table(&i.table)))?;
            }
            Ok(())
        }
        Statement::Update(u) => modify(&u.table, &u.conditions, each),
        Statement::Delete(d) => modify(&d.table, &d.conditions, each),
        Statement::Batch(b) => {
            for s in &b.statements {
                match s {
                    BatchStatement::Insert(i) => {
                        each(need(Modify, table(&i.table)))?;
                        if i.if_not_exists {
                            each(need(Select, table(&i.table)))?;
                        }
                    }
                    BatchStatement::Update(u) => modify(&u.table, &u.conditions, each)?,
                    BatchStatement::Delete(d) => modify(&d.table, &d.conditions, each)?,
                }
            }
            Ok(())
        }
        Statement::Truncate(q) => each(need(Modify, table(q))),
        Statement::CreateKeyspace(_) => each(need(Create, On::Root)),
        Statement::AlterKeyspace(a) => each(need(Alter, On::Keyspace(&a.name))),
        Statement::DropKeyspace(d) => each(need(Drop, On::Keyspace(&d.name))),
        Statement::CreateTable(c) => each(need(Create, On::AllTables(ks_of(&c.name)))),
        Statement::AlterTable(a) => each(need(Alter, table(&a.name))),
        Statement::DropTable(d) => each(need(Drop, table(&d.name))),
        Statement::CreateType(c) => each(need(Create, On::AllTables(ks_of(&c.name)))),
        Statement::AlterType(a) => each(need(Alter, On::AllTables(ks_of(&a.name)))),
        Statement::DropType(d) => each(need(Drop, On::AllTables(ks_of(&d.name)))),
        Statement::CreateIndex(c) => each(need(Alter, table(&c.table))),
        // Cassandra checks ALTER on the index's table, which Cairn (without indexes) never
        // finds: none.
        Statement::DropIndex(_) => Ok(()),
        Statement::CreateView(c) => each(need(Alter, table(&c.base))),
        // ALTER on the view's base table: the statement checks it once it found the view.
        Statement::AlterView(_) | Statement::DropView(_) => Ok(()),
        Statement::CreateRole(_) | Statement::CreateUser(_) => {
            each(role_need(Create, On::AllRoles))
        }
        Statement::DropRole(d) => each(role_need(Drop, On::Role(&d.name))),
        Statement::DropUser(d) => each(role_need(Drop, On::Role(&d.name))),
        Statement::GrantRole { role, .. } | Statement::RevokeRole { role, .. } => {
            each(role_need(Authorize, On::Role(role)))
        }
        Statement::Grant(g) | Statement::Revoke(g) => {
            let Some(on) = on_of(&g.resource) else {
                return Ok(());
            };
            each(need(Authorize, on))?;
            match g.permission {
                Some(p) => each(need(p, on)),
                // `ALL`: every permission the resource takes, checked one by one.
                None => applicable_on(on).iter().try_for_each(|p| each(need(p, on))),
            }
        }
        Statement::Use(_)
        | Statement::AlterRole(_)
        | Statement::AlterUser(_)
        | Statement::ListRoles(_)
        | Statement::ListUsers
        | Statement::ListPermissions(_) => Ok(()),
    }
}

/// The permissions a resource of `on`'s kind takes.
fn applicable_on(on: On<'_>) -> PermissionSet {
    match on {
        On::Root | On::Keyspace(_) | On::AllTables(_) => KEYSPACE_LEVEL,
        On::Table(..) => TABLE_LEVEL,
        On::AllRoles => ROLES_ROOT_LEVEL,
        On::Role(_) => ROLE_LEVEL,
    }
}

fn modify<'a>(
    t: &'a QualifiedName,
    conditions: &Conditions,
    each: &mut dyn FnMut(Required<'a>) -> Result<()>,
) -> Result<()> {
    each(need(Permission::Modify, table(t)))?;
    // A conditional write can stand in for a read (Cassandra's CAS rule).
    if !matches!(conditions, Conditions::None) {
        each(need(Permission::Select, table(t)))?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn needs(cql: &str) -> Vec<(Permission, String)> {
        let parsed = crate::parse_statement(cql).unwrap();
        let mut out = Vec::new();
        required(&parsed.statement, &mut |r| {
            let on = match r.on {
                On::Root => "root".to_string(),
                On::Keyspace(k) => format!("ks {k}"),
                On::AllTables(k) => format!("tables {}", k.unwrap_or("?")),
                On::Table(k, t) => format!("table {}.{t}", k.unwrap_or("?")),
                On::AllRoles => "roles".to_string(),
                On::Role(r) => format!("role {r}"),
            };
            out.push((r.permission, on));
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn each_statement_needs_what_cassandra_checks() {
        use Permission::*;
        let cases: &[(&str, &[(Permission, &str)])] = &[
            ("SELECT * FROM ks.t", &[(Select, "table ks.t")]),
            ("SELECT * FROM t", &[(Select, "table ?.t")]),
            ("INSERT INTO ks.t (k) VALUES (1)", &[(Modify, "table ks.t")]),
            (
                "INSERT INTO ks.t (k) VALUES (1) IF NOT EXISTS",
                &[(Modify, "table ks.t"), (Select, "table ks.t")],
            ),
            ("UPDATE ks.t SET v = 1 WHERE k = 1", &[(Modify, "table ks.t")]),
            (
                "UPDATE ks.t SET v = 1 WHERE k = 1 IF v = 2",
                &[(Modify, "table ks.t"), (Select, "table ks.t")],
            ),
            ("DELETE FROM ks.t WHERE k = 1", &[(Modify, "table ks.t")]),
            (
                "BEGIN BATCH INSERT INTO ks.a (k) VALUES (1); DELETE FROM ks.b WHERE k = 1; APPLY BATCH",
                &[(Modify, "table ks.a"), (Modify, "table ks.b")],
            ),
            ("TRUNCATE ks.t", &[(Modify, "table ks.t")]),
            (
                "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
                &[(Create, "root")],
            ),
            ("ALTER KEYSPACE ks WITH durable_writes = false", &[(Alter, "ks ks")]),
            ("DROP KEYSPACE ks", &[(Drop, "ks ks")]),
            ("CREATE TABLE ks.t (k int PRIMARY KEY)", &[(Create, "tables ks")]),
            ("ALTER TABLE ks.t ADD v int", &[(Alter, "table ks.t")]),
            ("DROP TABLE ks.t", &[(Drop, "table ks.t")]),
            ("USE ks", &[]),
            ("CREATE ROLE r", &[(Create, "roles")]),
            ("DROP ROLE r", &[(Drop, "role r")]),
            ("GRANT r TO s", &[(Authorize, "role r")]),
            (
                "GRANT SELECT ON KEYSPACE ks TO r",
                &[(Authorize, "ks ks"), (Select, "ks ks")],
            ),
            ("LIST ALL PERMISSIONS", &[]),
        ];
        for (cql, want) in cases {
            let want: Vec<(Permission, String)> =
                want.iter().map(|(p, s)| (*p, s.to_string())).collect();
            assert_eq!(needs(cql), want, "{cql}");
        }
    }

    #[test]
    fn resources_are_named_shown_and_chained_as_cassandra_does() {
        let t = Resource::Table("ks".into(), "t".into());
        assert_eq!(t.name(), "data/ks/t");
        assert_eq!(t.to_string(), "<table ks.t>");
        assert_eq!(
            t.chain(),
            vec![
                t.clone(),
                Resource::AllTables("ks".into()),
                Resource::Keyspace("ks".into()),
                Resource::Root
            ]
        );
        for r in [
            Resource::Root,
            Resource::Keyspace("ks".into()),
            Resource::AllTables("ks".into()),
            t,
            Resource::AllRoles,
            Resource::Role("a/b".into()),
        ] {
            assert_eq!(Resource::from_name(&r.name()), Some(r.clone()));
        }
        assert_eq!(Resource::Role("r".into()).to_string(), "<role r>");
        assert_eq!(Resource::Root.to_string(), "<all keyspaces>");
    }

    #[test]
    fn grants_are_narrowed_to_what_the_resource_takes() {
        let t = Resource::Table("ks".into(), "t".into());
        let all = granted_set(None, &t).unwrap();
        assert!(!all.contains(Permission::Create) && all.contains(Permission::Select));
        let e = granted_set(Some(Permission::Create), &t).unwrap_err();
        assert!(e.to_string().contains(
            "Resource type DataResource does not support any of the requested permissions"
        ));
        let e = granted_set(Some(Permission::Select), &Resource::AllRoles).unwrap_err();
        assert!(e.to_string().contains("RoleResource"));
        let roles = granted_set(None, &Resource::Role("r".into())).unwrap();
        assert_eq!(
            roles.iter().collect::<Vec<_>>(),
            [
                Permission::Alter,
                Permission::Drop,
                Permission::Authorize,
                Permission::Describe
            ]
        );
        let sys = Resource::Keyspace("system".into());
        assert!(check_grantable(PermissionSet::of(&[Permission::Select]), &sys).is_ok());
        assert!(check_grantable(PermissionSet::of(&[Permission::Modify]), &sys).is_err());
    }
}
