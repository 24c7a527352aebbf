//! Schema statements: keyspaces, tables, TRUNCATE; roles and the rest are refused clearly.

use super::catalog::{Keyspace, SYSTEM_KEYSPACES};
use super::{options, ChangeKind, Executor, Outcome, SchemaChange, Session};
use crate::ast::{
    AlterTableAction, CreateTable, Order as AstOrder, Property, PropertyValue, RoleOptions,
    Statement, TypeName,
};
use crate::error::{Error, Result};
use cairn_engine::model::clustering::Order;
use cairn_engine::model::types::CqlType;
use cairn_engine::schema::{ColumnKind, TableSchema};

/// Runs a schema (or otherwise non-data) statement.
pub fn run(ex: &Executor, session: &Session, stmt: &Statement) -> Result<Outcome> {
    let cat = ex.catalog();
    match stmt {
        Statement::CreateKeyspace(c) => {
            if cat.keyspace(&c.name).is_some() {
                if c.if_not_exists {
                    return Ok(Outcome::Void);
                }
                return Err(Error::AlreadyExists {
                    keyspace: c.name.clone(),
                    table: String::new(),
                    message: format!("Keyspace '{}' already exists", c.name),
                });
            }
            check_name(&c.name, "Keyspace")?;
            let ks = keyspace_from(&c.name, &c.properties, None)?;
            cat.put_keyspace(ks)?;
            Ok(change(ChangeKind::Created, &c.name, None))
        }
        Statement::AlterKeyspace(a) => {
            refuse_system(&a.name)?;
            let Some(old) = cat.keyspace(&a.name) else {
                if a.if_exists {
                    return Ok(Outcome::Void);
                }
                return Err(Error::Invalid(format!(
                    "Keyspace '{}' does not exist",
                    a.name
                )));
            };
            let ks = keyspace_from(&a.name, &a.properties, Some(&old))?;
            cat.put_keyspace(ks)?;
            Ok(change(ChangeKind::Updated, &a.name, None))
        }
        Statement::DropKeyspace(d) => {
            refuse_system(&d.name)?;
            if cat.keyspace(&d.name).is_none() {
                if d.if_exists {
                    return Ok(Outcome::Void);
                }
                return Err(Error::Configuration(format!(
                    "Cannot drop non existing keyspace '{}'.",
                    d.name
                )));
            }
            cat.drop_keyspace(&d.name)?;
            if session.keyspace.read().as_deref() == Some(d.name.as_str()) {
                *session.keyspace.write() = None;
            }
            Ok(change(ChangeKind::Dropped, &d.name, None))
        }
        Statement::CreateTable(c) => create_table(ex, session, c),
        Statement::AlterTable(a) => {
            let ks = session.resolve(&a.name.keyspace)?;
            refuse_system(&ks)?;
            cat.require_keyspace(&ks)?;
            let Some(table) = cat.table(&ks, &a.name.name) else {
                if a.if_exists {
                    return Ok(Outcome::Void);
                }
                return Err(Error::Invalid(format!(
                    "unconfigured table {}",
                    a.name.name
                )));
            };
            let mut schema = (*table.schema()).clone();
            match &a.action {
                AlterTableAction::Add {
                    if_not_exists,
                    columns,
                } => {
                    for c in columns {
                        if schema.column(&c.name).is_some() {
                            if *if_not_exists {
                                continue;
                            }
                            return Err(Error::Invalid(format!(
                                "Column with name '{}' already exists",
                                c.name
                            )));
                        }
                        let ty = engine_type(&c.ty)?;
                        if c.is_static
                            && !schema
                                .columns
                                .iter()
                                .any(|c| c.kind == ColumnKind::Clustering)
                        {
                            return Err(Error::Invalid(
                                "Static columns are only useful (and thus allowed) if the table has at least one clustering column".into(),
                            ));
                        }
                        if let Some(d) = schema
                            .dropped_columns()
                            .into_iter()
                            .rfind(|d| d.name == c.name)
                        {
                            if d.ty != ty.name() {
                                return Err(Error::Invalid(format!(
                                    "Cannot add a column '{0}' of type {1}, incompatible with previously dropped column '{0}' of type {2}",
                                    c.name,
                                    ty.name(),
                                    d.ty
                                )));
                            }
                            if d.is_static != c.is_static {
                                let kind = |s: bool| if s { "STATIC" } else { "REGULAR" };
                                return Err(Error::Invalid(format!(
                                    "Cannot re-add previously dropped column '{}' of kind {}, incompatible with previous kind {}",
                                    c.name,
                                    kind(c.is_static),
                                    kind(d.is_static)
                                )));
                            }
                        }
                        let kind = if c.is_static {
                            ColumnKind::Static
                        } else {
                            ColumnKind::Regular
                        };
                        // A new id, above every dropped one: the old cells stay hidden.
                        schema.add_column(&c.name, ty, kind, Order::Asc);
                    }
                }
                AlterTableAction::Drop {
                    if_exists,
                    columns,
                    timestamp,
                } => {
                    let dropped_at = match timestamp {
                        Some(t) => drop_timestamp(t)?,
                        None => super::catalog::now_micros(),
                    };
                    for name in columns {
                        match schema.column(name).map(|c| c.kind) {
                            None if *if_exists => continue,
                            None => {
                                return Err(Error::Invalid(format!(
                                    "Column {name} was not found in table '{ks}.{}'",
                                    a.name.name
                                )))
                            }
                            Some(ColumnKind::PartitionKey | ColumnKind::Clustering) => {
                                return Err(Error::Invalid(format!(
                                    "Cannot drop PRIMARY KEY column {name}"
                                )))
                            }
                            Some(_) => {
                                schema.drop_column(name, dropped_at);
                            }
                        }
                    }
                }
                AlterTableAction::With(props) => options::apply(&mut schema.options, props)?,
                AlterTableAction::Rename { .. } => {
                    return Err(Error::Invalid(
                        "Renaming columns is not supported yet".into(),
                    ))
                }
                AlterTableAction::AlterType { .. } => {
                    return Err(Error::Invalid(
                        "Altering column types is no longer supported".into(),
                    ))
                }
                AlterTableAction::DropCompactStorage => {
                    return Err(Error::Invalid(
                        "Table is not defined with COMPACT STORAGE".into(),
                    ))
                }
            }
            cat.db().alter_table(schema)?;
            cat.schema_changed();
            Ok(change(ChangeKind::Updated, &ks, Some(&a.name.name)))
        }
        Statement::DropTable(d) => {
            let ks = session.resolve(&d.name.keyspace)?;
            refuse_system(&ks)?;
            cat.require_keyspace(&ks)?;
            if cat.table(&ks, &d.name.name).is_none() {
                if d.if_exists {
                    return Ok(Outcome::Void);
                }
                return Err(Error::Invalid(format!(
                    "unconfigured table {}",
                    d.name.name
                )));
            }
            cat.db().drop_table(&ks, &d.name.name)?;
            cat.schema_changed();
            Ok(change(ChangeKind::Dropped, &ks, Some(&d.name.name)))
        }
        Statement::Truncate(name) => {
            let ks = session.resolve(&name.keyspace)?;
            super::system::refuse_truncate(&ks, &name.name)?;
            // Cairn's system keyspaces are its own stores (keyspace definitions, roles) and
            // tables built from metadata: never emptied by a user.
            refuse_system(&ks)?;
            let table = cat.require_table(&ks, &name.name)?;
            // Recreate the table, under a new id so that commitlog records of the old data
            // (still in segments not yet recycled) are never replayed into it.
            let mut schema = (*table.schema()).clone();
            schema.id = cairn_engine::schema::rand_table_id();
            drop(table);
            cat.db().drop_table(&ks, &name.name)?;
            cat.db().create_table(schema)?;
            Ok(Outcome::Void)
        }
        Statement::CreateType(_) | Statement::AlterType(_) | Statement::DropType(_) => Err(
            Error::Invalid("User-defined types are not supported yet".into()),
        ),
        Statement::CreateIndex(_) | Statement::DropIndex(_) => Err(Error::Invalid(
            "Secondary indexes are not supported yet".into(),
        )),
        Statement::CreateRole(r) => {
            ex.roles().create(
                session,
                ex.authentication(),
                &r.name,
                r.if_not_exists,
                &r.options,
            )?;
            Ok(Outcome::Void)
        }
        Statement::AlterRole(r) => {
            ex.roles().alter(
                session,
                ex.authentication(),
                &r.name,
                r.if_exists,
                &r.options,
            )?;
            Ok(Outcome::Void)
        }
        Statement::DropRole(r) => {
            ex.roles()
                .drop(session, ex.authentication(), &r.name, r.if_exists)?;
            Ok(Outcome::Void)
        }
        Statement::ListRoles(l) => Ok(Outcome::Rows(ex.roles().list(l.of.as_deref(), false)?)),
        Statement::CreateUser(u) => {
            let o = RoleOptions {
                password: u.password.clone(),
                login: Some(true),
                superuser: u.superuser,
                ..RoleOptions::default()
            };
            ex.roles()
                .create(session, ex.authentication(), &u.name, u.if_not_exists, &o)?;
            Ok(Outcome::Void)
        }
        Statement::AlterUser(u) => {
            let o = RoleOptions {
                password: u.password.clone(),
                superuser: u.superuser,
                ..RoleOptions::default()
            };
            ex.roles()
                .alter(session, ex.authentication(), &u.name, u.if_exists, &o)?;
            Ok(Outcome::Void)
        }
        Statement::DropUser(u) => {
            ex.roles()
                .drop(session, ex.authentication(), &u.name, u.if_exists)?;
            Ok(Outcome::Void)
        }
        Statement::ListUsers => Ok(Outcome::Rows(ex.roles().list(None, true)?)),
        _ => Err(Error::Invalid(
            "Permissions (GRANT / REVOKE / LIST PERMISSIONS) are not supported yet".into(),
        )),
    }
}

/// `ALTER TABLE … DROP … USING TIMESTAMP t`: a literal bigint (microseconds).
fn drop_timestamp(t: &crate::ast::Term) -> Result<i64> {
    match t {
        crate::ast::Term::Literal(crate::ast::Literal::Integer(s)) => s
            .parse()
            .map_err(|_| Error::Invalid(format!("Invalid timestamp {s}"))),
        other => Err(Error::Invalid(format!(
            "Invalid timestamp {}",
            crate::values::term::term_display(other)
        ))),
    }
}

fn change(change: ChangeKind, keyspace: &str, table: Option<&str>) -> Outcome {
    Outcome::SchemaChange(SchemaChange {
        change,
        keyspace: keyspace.to_string(),
        table: table.map(str::to_string),
    })
}

/// Cassandra's error for a schema change in a system keyspace (virtual ones included).
fn refuse_system(name: &str) -> Result<()> {
    if SYSTEM_KEYSPACES.contains(&name) || super::system::is_virtual_keyspace(name) {
        return Err(Error::Unauthorized(format!(
            "{name} keyspace is not user-modifiable."
        )));
    }
    Ok(())
}

fn check_name(name: &str, what: &str) -> Result<()> {
    if name.is_empty()
        || name.len() > 48
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(Error::Invalid(format!(
            "{what} name must not be empty, more than 48 characters long, or contain non-alphanumeric-underscore characters (got \"{name}\")"
        )));
    }
    if what == "Keyspace" && (SYSTEM_KEYSPACES.contains(&name) || name.starts_with("system")) {
        return Err(Error::Unauthorized(format!(
            "{name} keyspace is not user-modifiable."
        )));
    }
    Ok(())
}

fn keyspace_from(name: &str, props: &[Property], old: Option<&Keyspace>) -> Result<Keyspace> {
    let mut replication = old.map(|o| o.replication.clone());
    let mut durable_writes = old.is_none_or(|o| o.durable_writes);
    for p in props {
        match (p.name.as_str(), &p.value) {
            ("replication", PropertyValue::Map(m)) => replication = Some(replication_map(m)?),
            ("durable_writes", PropertyValue::Simple(v)) => {
                durable_writes = match v.to_ascii_lowercase().as_str() {
                    "true" => true,
                    "false" => false,
                    _ => {
                        return Err(Error::Syntax(crate::error::SyntaxError {
                            line: 0,
                            column: 0,
                            offset: 0,
                            message: format!("Invalid boolean value {v} for 'durable_writes'"),
                        }))
                    }
                }
            }
            ("replication", _) => {
                return Err(Error::Configuration(
                    "Invalid value for property 'replication'. It should be a map".into(),
                ))
            }
            (other, _) => {
                return Err(Error::Syntax(crate::error::SyntaxError {
                    line: 0,
                    column: 0,
                    offset: 0,
                    message: format!("Unknown property '{other}'"),
                }))
            }
        }
    }
    let replication = replication
        .ok_or_else(|| Error::Configuration("Missing mandatory option 'replication'".into()))?;
    Ok(Keyspace {
        name: name.to_string(),
        replication,
        durable_writes,
    })
}

fn replication_map(m: &[(String, String)]) -> Result<Vec<(String, String)>> {
    let class = m
        .iter()
        .find(|(k, _)| k == "class")
        .map(|(_, v)| v.clone())
        .ok_or_else(|| Error::Configuration("Missing replication strategy class".into()))?;
    let short = class
        .strip_prefix("org.apache.cassandra.locator.")
        .unwrap_or(&class);
    let full = format!("org.apache.cassandra.locator.{short}");
    let mut out = vec![("class".to_string(), full)];
    match short {
        "SimpleStrategy" => {
            let rf = m
                .iter()
                .find(|(k, _)| k == "replication_factor")
                .map(|(_, v)| v.clone())
                .ok_or_else(|| {
                    Error::Configuration(
                        "SimpleStrategy requires a replication_factor strategy option.".into(),
                    )
                })?;
            check_rf(&rf)?;
            for (k, _) in m {
                if k != "class" && k != "replication_factor" {
                    return Err(Error::Configuration(format!(
                        "Unrecognized strategy option {{{k}}} passed to SimpleStrategy for keyspace"
                    )));
                }
            }
            out.push(("replication_factor".into(), rf));
        }
        "NetworkTopologyStrategy" => {
            for (k, v) in m {
                if k == "class" {
                    continue;
                }
                check_rf(v)?;
                // Cassandra 4 expands `replication_factor` to every known data center.
                let dc = if k == "replication_factor" {
                    DATA_CENTER.to_string()
                } else {
                    k.clone()
                };
                out.retain(|(x, _)| *x != dc);
                out.push((dc, v.clone()));
            }
        }
        "LocalStrategy" | "EverywhereStrategy" => {}
        _ => {
            return Err(Error::Configuration(format!(
                "Unable to find replication strategy class '{class}'"
            )))
        }
    }
    Ok(out)
}

/// This node's data center (NetworkTopologyStrategy's `replication_factor` expands to it).
const DATA_CENTER: &str = "datacenter1";

fn check_rf(rf: &str) -> Result<()> {
    match rf.parse::<i64>() {
        Ok(n) if n >= 0 => Ok(()),
        _ => Err(Error::Configuration(format!(
            "Replication factor must be non-negative integer; found {rf}"
        ))),
    }
}

/// The engine type of a column type (user types and custom classes are not supported).
pub fn engine_type(t: &TypeName) -> Result<CqlType> {
    t.to_cql_type()
        .ok_or_else(|| Error::Invalid(format!("Unsupported type {t}")))
}

fn create_table(ex: &Executor, session: &Session, c: &CreateTable) -> Result<Outcome> {
    let cat = ex.catalog();
    let ks = session.resolve(&c.name.keyspace)?;
    refuse_system(&ks)?;
    cat.require_keyspace(&ks)?;
    if cat.table(&ks, &c.name.name).is_some() {
        if c.if_not_exists {
            return Ok(Outcome::Void);
        }
        return Err(Error::AlreadyExists {
            keyspace: ks.clone(),
            table: c.name.name.clone(),
            message: format!(
                "Cannot add already existing table \"{}\" to keyspace \"{ks}\"",
                c.name.name
            ),
        });
    }
    check_name(&c.name.name, "Table")?;
    if c.compact_storage {
        return Err(Error::Invalid(
            "COMPACT STORAGE tables are not supported".into(),
        ));
    }
    let key = c.primary_key().map_err(Error::Invalid)?;
    let col = |name: &str| {
        c.columns.iter().find(|d| d.name == name).ok_or_else(|| {
            Error::Invalid(format!(
                "Unknown definition {name} referenced in PRIMARY KEY"
            ))
        })
    };
    for (i, d) in c.columns.iter().enumerate() {
        if c.columns[..i].iter().any(|e| e.name == d.name) {
            return Err(Error::Invalid(format!(
                "Duplicate column '{}' declaration for table '{}'",
                d.name, c.name.name
            )));
        }
    }
    let mut schema = TableSchema::new(&ks, &c.name.name);
    for name in &key.partition_key {
        let d = col(name)?;
        schema.add_column(
            name,
            key_type(&d.ty, name)?,
            ColumnKind::PartitionKey,
            Order::Asc,
        );
    }
    for (i, name) in key.clustering.iter().enumerate() {
        let d = col(name)?;
        let order = match c.clustering_order.iter().find(|(n, _)| n == name) {
            Some((_, AstOrder::Desc)) => Order::Desc,
            _ => Order::Asc,
        };
        if let Some((pos, _)) = c
            .clustering_order
            .iter()
            .enumerate()
            .find(|(_, (n, _))| n == name)
        {
            if pos != i {
                return Err(Error::Invalid(
                    "The order of columns in the CLUSTERING ORDER directive must match that of the clustering columns".into(),
                ));
            }
        }
        schema.add_column(name, key_type(&d.ty, name)?, ColumnKind::Clustering, order);
    }
    for (n, _) in &c.clustering_order {
        if !key.clustering.contains(n) {
            return Err(Error::Invalid(format!(
                "Only clustering key columns can be defined in CLUSTERING ORDER directive: {n} is not a clustering column"
            )));
        }
    }
    for d in &c.columns {
        if key.partition_key.contains(&d.name) || key.clustering.contains(&d.name) {
            if d.is_static {
                return Err(Error::Invalid(format!(
                    "Static column {} cannot be part of the PRIMARY KEY",
                    d.name
                )));
            }
            continue;
        }
        let kind = if d.is_static {
            if key.clustering.is_empty() {
                return Err(Error::Invalid(
                    "Static columns are only useful (and thus allowed) if the table has at least one clustering column".into(),
                ));
            }
            ColumnKind::Static
        } else {
            ColumnKind::Regular
        };
        schema.add_column(&d.name, engine_type(&d.ty)?, kind, Order::Asc);
    }
    options::apply(&mut schema.options, &c.properties)?;
    cat.db().create_table(schema)?;
    cat.schema_changed();
    Ok(change(ChangeKind::Created, &ks, Some(&c.name.name)))
}

/// Primary-key columns may not be non-frozen collections.
fn key_type(t: &TypeName, name: &str) -> Result<CqlType> {
    let ty = engine_type(t)?;
    if matches!(ty, CqlType::List(_) | CqlType::Set(_) | CqlType::Map(_, _)) {
        return Err(Error::Invalid(format!(
            "Invalid non-frozen collection type for PRIMARY KEY component {name}"
        )));
    }
    Ok(ty)
}
