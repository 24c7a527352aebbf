//! What the audit log records: the category of a statement ([`targets`]) and whether a
//! record of that category, keyspace and table is logged ([`AuditFilter::logs`]).
//!
//! The categories and the filter are ScyllaDB's (its auditing guide): QUERY is SELECT; DML
//! is INSERT, UPDATE, DELETE, BATCH, TRUNCATE and USE (ScyllaDB, after Cassandra, files USE
//! there); DDL is every schema change; DCL is roles and permissions (CREATE / ALTER / DROP
//! ROLE and USER, GRANT, REVOKE, LIST); AUTH is a login; ADMIN is service levels, which Cairn
//! does not have, so nothing is filed there. A record is logged when its category is in
//! `audit_categories` and, for QUERY, DML and DDL, its keyspace is in `audit_keyspaces` or
//! its `keyspace.table` in `audit_tables` — so with both lists empty no data statement is
//! logged; AUTH, DCL and ADMIN are logged whatever their keyspace.
//!
//! Everything here is pure: the configuration's text in, decisions out.

use crate::ast::{BatchStatement, Statement};
use std::collections::HashSet;
use std::fmt;

/// A statement category (`audit_categories`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Category {
    /// SELECT.
    Query,
    /// Data changes (and USE).
    Dml,
    /// Schema changes.
    Ddl,
    /// Roles and permissions.
    Dcl,
    /// Logins, successful or not.
    Auth,
    /// Service levels (none in Cairn; accepted in the configuration).
    Admin,
}

impl Category {
    /// Every category, in the order ScyllaDB's documentation lists them.
    pub const ALL: [Category; 6] = [
        Category::Query,
        Category::Dml,
        Category::Ddl,
        Category::Dcl,
        Category::Auth,
        Category::Admin,
    ];

    /// The name as configured and recorded (`QUERY`, `DML`, …).
    pub fn name(self) -> &'static str {
        match self {
            Category::Query => "QUERY",
            Category::Dml => "DML",
            Category::Ddl => "DDL",
            Category::Dcl => "DCL",
            Category::Auth => "AUTH",
            Category::Admin => "ADMIN",
        }
    }

    /// Logged whatever keyspace or table the statement names.
    fn unfiltered(self) -> bool {
        matches!(self, Category::Auth | Category::Dcl | Category::Admin)
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `audit_categories`, `audit_keyspaces` and `audit_tables`, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditFilter {
    categories: HashSet<Category>,
    keyspaces: HashSet<String>,
    /// `(keyspace, table)`.
    tables: HashSet<(String, String)>,
}

/// ScyllaDB's default `audit_categories`.
pub const DEFAULT_CATEGORIES: &str = "DCL,DDL,AUTH,ADMIN";

impl Default for AuditFilter {
    fn default() -> Self {
        AuditFilter {
            categories: parse_categories(DEFAULT_CATEGORIES).unwrap_or_default(),
            keyspaces: HashSet::new(),
            tables: HashSet::new(),
        }
    }
}

/// The entries of a comma-separated list, trimmed, empty ones dropped.
fn entries(list: &str) -> impl Iterator<Item = &str> {
    list.split(',').map(str::trim).filter(|e| !e.is_empty())
}

/// Parses `audit_categories`; an unknown name is an error naming it and the supported ones.
pub fn parse_categories(list: &str) -> Result<HashSet<Category>, String> {
    entries(list)
        .map(|e| {
            Category::ALL
                .into_iter()
                .find(|c| c.name().eq_ignore_ascii_case(e))
                .ok_or_else(|| {
                    format!(
                        "unknown audit category `{e}` (supported: {})",
                        Category::ALL.map(Category::name).join(", ")
                    )
                })
        })
        .collect()
}

/// Parses `audit_keyspaces`.
pub fn parse_keyspaces(list: &str) -> HashSet<String> {
    entries(list).map(str::to_string).collect()
}

/// Parses `audit_tables` (`keyspace.table` entries).
pub fn parse_tables(list: &str) -> Result<HashSet<(String, String)>, String> {
    entries(list)
        .map(|e| match e.split_once('.') {
            Some((ks, t)) if !ks.is_empty() && !t.is_empty() && !t.contains('.') => {
                Ok((ks.to_string(), t.to_string()))
            }
            _ => Err(format!(
                "`{e}` is not a table name in the form <keyspace>.<table>"
            )),
        })
        .collect()
}

impl AuditFilter {
    /// The filter for the three settings' texts.
    pub fn parse(categories: &str, keyspaces: &str, tables: &str) -> Result<Self, String> {
        Ok(AuditFilter {
            categories: parse_categories(categories)?,
            keyspaces: parse_keyspaces(keyspaces),
            tables: parse_tables(tables)?,
        })
    }

    /// Sets `audit_categories`.
    pub fn set_categories(&mut self, list: &str) -> Result<(), String> {
        self.categories = parse_categories(list)?;
        Ok(())
    }

    /// Sets `audit_keyspaces`.
    pub fn set_keyspaces(&mut self, list: &str) {
        self.keyspaces = parse_keyspaces(list);
    }

    /// Sets `audit_tables`.
    pub fn set_tables(&mut self, list: &str) -> Result<(), String> {
        self.tables = parse_tables(list)?;
        Ok(())
    }

    /// The settings as written back (`system_views.settings`): categories, keyspaces and
    /// tables, each a sorted comma-separated list.
    pub fn describe(&self) -> (String, String, String) {
        let cats: Vec<&str> = Category::ALL
            .into_iter()
            .filter(|c| self.categories.contains(c))
            .map(Category::name)
            .collect();
        let mut ks: Vec<&str> = self.keyspaces.iter().map(String::as_str).collect();
        ks.sort_unstable();
        let mut ts: Vec<String> = self
            .tables
            .iter()
            .map(|(k, t)| format!("{k}.{t}"))
            .collect();
        ts.sort_unstable();
        (cats.join(","), ks.join(","), ts.join(","))
    }

    /// Whether any statement can be logged (a category is on); with none, the request path
    /// need not look at statements at all.
    pub fn any(&self) -> bool {
        !self.categories.is_empty()
    }

    /// Whether a category is on.
    pub fn has(&self, category: Category) -> bool {
        self.categories.contains(&category)
    }

    /// The one decision: is a record of `category` about `keyspace.table` logged?
    pub fn logs(&self, category: Category, keyspace: &str, table: &str) -> bool {
        if !self.categories.contains(&category) {
            return false;
        }
        if category.unfiltered() || self.keyspaces.contains(keyspace) {
            return true;
        }
        // Looking up a borrowed pair would need an owned key; the list is short.
        self.tables.iter().any(|(k, t)| k == keyspace && t == table)
    }
}

/// What one statement is about, for the audit log: its category and the keyspace and table
/// it names (empty when it names none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub category: Category,
    pub keyspace: String,
    pub table: String,
}

/// The targets of a statement: one, or one per statement of a BATCH (ScyllaDB logs a
/// batch's statements one by one). `session_keyspace` resolves unqualified names.
pub fn targets(stmt: &Statement, session_keyspace: Option<&str>) -> Vec<Target> {
    use Category as C;
    let ks = |k: &Option<String>| {
        k.as_deref()
            .or(session_keyspace)
            .unwrap_or_default()
            .to_string()
    };
    let on = |category, name: &crate::ast::QualifiedName| Target {
        category,
        keyspace: ks(&name.keyspace),
        table: name.name.clone(),
    };
    let keyspace = |category, name: &str| Target {
        category,
        keyspace: name.to_string(),
        table: String::new(),
    };
    let none = |category| Target {
        category,
        keyspace: String::new(),
        table: String::new(),
    };
    let one = match stmt {
        Statement::Select(s) => on(C::Query, &s.table),
        Statement::Insert(i) => on(C::Dml, &i.table),
        Statement::Update(u) => on(C::Dml, &u.table),
        Statement::Delete(d) => on(C::Dml, &d.table),
        Statement::Truncate(t) => on(C::Dml, t),
        Statement::Use(k) => keyspace(C::Dml, k),
        Statement::Batch(b) => {
            return b
                .statements
                .iter()
                .map(|s| match s {
                    BatchStatement::Insert(i) => on(C::Dml, &i.table),
                    BatchStatement::Update(u) => on(C::Dml, &u.table),
                    BatchStatement::Delete(d) => on(C::Dml, &d.table),
                })
                .collect()
        }
        Statement::CreateKeyspace(k) => keyspace(C::Ddl, &k.name),
        Statement::AlterKeyspace(k) => keyspace(C::Ddl, &k.name),
        Statement::DropKeyspace(k) => keyspace(C::Ddl, &k.name),
        Statement::CreateTable(t) => on(C::Ddl, &t.name),
        Statement::AlterTable(t) => on(C::Ddl, &t.name),
        Statement::DropTable(t) => on(C::Ddl, &t.name),
        Statement::CreateIndex(i) => on(C::Ddl, &i.table),
        // An index is named by its keyspace, not its table.
        Statement::DropIndex(i) => keyspace(C::Ddl, &ks(&i.name.keyspace)),
        Statement::CreateType(t) => keyspace(C::Ddl, &ks(&t.name.keyspace)),
        Statement::CreateView(v) => on(C::Ddl, &v.name),
        Statement::AlterView(v) => on(C::Ddl, &v.name),
        Statement::DropView(v) => on(C::Ddl, &v.name),
        Statement::AlterType(t) => keyspace(C::Ddl, &ks(&t.name.keyspace)),
        Statement::DropType(t) => keyspace(C::Ddl, &ks(&t.name.keyspace)),
        Statement::CreateRole(_)
        | Statement::AlterRole(_)
        | Statement::DropRole(_)
        | Statement::ListRoles(_)
        | Statement::CreateUser(_)
        | Statement::AlterUser(_)
        | Statement::DropUser(_)
        | Statement::ListUsers
        | Statement::Grant(_)
        | Statement::Revoke(_)
        | Statement::ListPermissions(_)
        | Statement::GrantRole { .. }
        | Statement::RevokeRole { .. } => none(C::Dcl),
    };
    vec![one]
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn first(cql: &str, session: Option<&str>) -> Target {
        let parsed = crate::parse_statement(cql).unwrap_or_else(|e| panic!("{cql}: {e}"));
        targets(&parsed.statement, session).remove(0)
    }

    #[test]
    fn categories_of_statements() {
        let cases: &[(&str, Category, &str, &str)] = &[
            ("SELECT * FROM ks.t", Category::Query, "ks", "t"),
            ("SELECT * FROM t", Category::Query, "cur", "t"),
            ("INSERT INTO ks.t (a) VALUES (1)", Category::Dml, "ks", "t"),
            ("UPDATE t SET b = 1 WHERE a = 1", Category::Dml, "cur", "t"),
            ("DELETE FROM ks.t WHERE a = 1", Category::Dml, "ks", "t"),
            ("TRUNCATE ks.t", Category::Dml, "ks", "t"),
            ("USE other", Category::Dml, "other", ""),
            (
                "CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
                Category::Ddl,
                "k2",
                "",
            ),
            ("DROP KEYSPACE k2", Category::Ddl, "k2", ""),
            ("CREATE TABLE t (a int PRIMARY KEY)", Category::Ddl, "cur", "t"),
            ("ALTER TABLE ks.t ADD c int", Category::Ddl, "ks", "t"),
            ("DROP TABLE ks.t", Category::Ddl, "ks", "t"),
            ("CREATE INDEX i ON ks.t (b)", Category::Ddl, "ks", "t"),
            ("DROP INDEX ks.i", Category::Ddl, "ks", ""),
            ("CREATE TYPE ks.ty (f int)", Category::Ddl, "ks", ""),
            ("CREATE ROLE r", Category::Dcl, "", ""),
            ("CREATE USER u WITH PASSWORD 'p'", Category::Dcl, "", ""),
            ("LIST ROLES", Category::Dcl, "", ""),
            ("GRANT SELECT ON ks.t TO r", Category::Dcl, "", ""),
            ("REVOKE SELECT ON KEYSPACE ks FROM r", Category::Dcl, "", ""),
            ("GRANT r TO s", Category::Dcl, "", ""),
            ("LIST ALL PERMISSIONS", Category::Dcl, "", ""),
        ];
        for (cql, category, ks, table) in cases {
            let t = first(cql, Some("cur"));
            assert_eq!(
                (t.category, t.keyspace.as_str(), t.table.as_str()),
                (*category, *ks, *table),
                "{cql}"
            );
        }
        // Without a session keyspace an unqualified name has none.
        assert_eq!(first("SELECT * FROM t", None).keyspace, "");
    }

    #[test]
    fn a_batch_is_one_target_per_statement() {
        let parsed = crate::parse_statement(
            "BEGIN BATCH INSERT INTO ks.a (k) VALUES (1); DELETE FROM b WHERE k = 1; APPLY BATCH",
        )
        .unwrap();
        let t = targets(&parsed.statement, Some("cur"));
        let got: Vec<(&str, &str)> = t
            .iter()
            .map(|t| (t.keyspace.as_str(), t.table.as_str()))
            .collect();
        assert_eq!(got, [("ks", "a"), ("cur", "b")]);
        assert!(t.iter().all(|t| t.category == Category::Dml));
    }

    #[test]
    fn filter_decisions() {
        use Category::*;
        let f = AuditFilter::parse("DDL, dml,QUERY,AUTH,DCL", "ks1", "ks2.t1,ks3.t9").unwrap();
        let cases: &[(Category, &str, &str, bool)] = &[
            // The keyspace list takes every table of the keyspace.
            (Query, "ks1", "anything", true),
            (Dml, "ks1", "", true),
            // The table list takes only its tables.
            (Dml, "ks2", "t1", true),
            (Dml, "ks2", "t2", false),
            (Ddl, "ks2", "", false),
            (Query, "ks3", "t9", true),
            // Neither list names it.
            (Query, "other", "t1", false),
            (Ddl, "", "", false),
            // AUTH and DCL whatever the keyspace.
            (Auth, "", "", true),
            (Dcl, "", "", true),
            (Dcl, "other", "", true),
        ];
        for (c, ks, t, want) in cases {
            assert_eq!(f.logs(*c, ks, t), *want, "{c} {ks}.{t}");
        }
        // A category that is not on is never logged, whatever lists name it.
        let f = AuditFilter::parse("AUTH", "ks1", "ks1.t").unwrap();
        assert!(!f.logs(Query, "ks1", "t"));
        assert!(!f.logs(Dcl, "", ""));
        assert!(f.logs(Auth, "", ""));
        // The defaults: ScyllaDB's categories, no keyspace: DDL is on but names nothing.
        let d = AuditFilter::default();
        assert!(d.logs(Dcl, "", "") && d.logs(Auth, "", "") && d.logs(Admin, "", ""));
        assert!(!d.logs(Ddl, "ks", "t") && !d.logs(Query, "ks", "t"));
        // No category: nothing at all.
        let none = AuditFilter::parse("", "ks", "").unwrap();
        assert!(!none.any() && !none.logs(Auth, "", "") && !none.logs(Query, "ks", "t"));
    }

    #[test]
    fn bad_settings_are_refused() {
        let e = parse_categories("DDL,SELECT").unwrap_err();
        assert!(
            e.contains("`SELECT`") && e.contains("QUERY, DML, DDL, DCL, AUTH, ADMIN"),
            "{e}"
        );
        for bad in ["ks", "ks.", ".t", "a.b.c"] {
            let e = parse_tables(bad).unwrap_err();
            assert!(e.contains(bad) && e.contains("<keyspace>.<table>"), "{e}");
        }
        assert_eq!(parse_categories(" , ").unwrap().len(), 0);
        let f = AuditFilter::parse("auth,DDL", "b, a", "k.t2,k.t1").unwrap();
        assert_eq!(
            f.describe(),
            ("DDL,AUTH".into(), "a,b".into(), "k.t1,k.t2".into())
        );
    }
}
