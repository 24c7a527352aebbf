//! CREATE TABLE: a table definition checked as Cassandra 5.0's `CreateTableStatement`
//! checks it, in the same order and with the same texts, then built into the engine's schema.
//!
//! The order matters because the first error is the one the client sees:
//! 1. what Cassandra's parser refuses (repeated columns, PRIMARY KEY clauses or CLUSTERING
//!    ORDER columns, no PRIMARY KEY);
//! 2. system keyspaces, COMPACT STORAGE (refused as by Cassandra's `compact_tables` guardrail
//!    switched off: Cairn has no compact tables), option values;
//! 3. the keyspace (name, existence), the table's existence (`IF NOT EXISTS` answers here);
//! 4. the properties as a whole, column types (counters and durations where they cannot be),
//!    the primary key, the clustering order, static columns, counter tables, the table name.
//!
//! Column types are checked by [`column_type`], which ALTER TABLE ADD shares.

use super::catalog::Catalog;
use super::result::{ChangeKind, Outcome, SchemaChange};
use super::schema_guard::{authorize, check_schema_keyspace, Permission, Resource};
use super::session::Session;
use super::{options, Executor};
use crate::ast::{CreateTable, Order as AstOrder, TypeName};
use crate::error::{Error, Result};
use cairn_engine::model::clustering::Order;
use cairn_engine::model::types::CqlType;
use cairn_engine::schema::{ColumnKind, TableSchema};

/// Cassandra's `SchemaConstants.TABLE_NAME_LENGTH`: the name, a dash and the 32 hex digits of
/// the id fit a 255-character directory name.
const MAX_TABLE_NAME: usize = 222;

/// Runs CREATE TABLE.
pub fn run(ex: &Executor, session: &Session, c: &CreateTable) -> Result<Outcome> {
    let cat = ex.catalog();
    let shown_name = match &c.name.keyspace {
        Some(ks) => format!("{ks}.{}", c.name.name),
        None => c.name.name.clone(),
    };
    let table = &c.name.name;
    // 1. What Cassandra's grammar actions refuse.
    let key = primary_key(c, &shown_name)?;
    let ks = session.resolve(&c.name.keyspace)?;
    // 2. Authorization, then what Cassandra validates before looking at the schema.
    authorize(&ks, Permission::Create, Resource::AllTables(&ks))?;
    if c.compact_storage {
        return Err(Error::Invalid(
            "Guardrail compact_tables violated: Creation of new COMPACT STORAGE tables is not allowed"
                .into(),
        ));
    }
    options::check_values(&c.properties)?;
    if c.columns.iter().any(|d| d.mask.is_some()) {
        super::masks::check_enabled(ex)?;
    }
    // 3. The keyspace and the table.
    check_schema_keyspace(&ks)?;
    if cat.keyspace(&ks).is_none() {
        return Err(Error::Invalid(format!("Keyspace '{ks}' doesn't exist")));
    }
    if cat.table(&ks, table).is_some() {
        if c.if_not_exists {
            return Ok(Outcome::Void);
        }
        return Err(Error::AlreadyExists {
            keyspace: ks.clone(),
            table: table.clone(),
            message: format!("Cannot add already existing table \"{table}\" to keyspace \"{ks}\""),
        });
    }
    // 4. The definition.
    let mut schema = TableSchema::new(&ks, table);
    options::apply(&mut schema.options, &c.properties, options::Target::Create)?;
    if let Some(id) = options::table_id(&c.properties)? {
        if cat.db().tables().iter().any(|t| t.schema().id == id) {
            return Err(Error::Invalid(format!(
                "Table id {} is already used",
                options::uuid_string(id)
            )));
        }
        schema.id = id;
    }
    let mut types = Vec::with_capacity(c.columns.len());
    for d in &c.columns {
        types.push(column_type(&d.ty, &ks, cat)?);
    }
    for ty in &types {
        super::user_types::check_non_frozen(ty, None)?;
    }
    check_key_columns(c, &key, &types)?;

    check_clustering_order(c, &key)?;
    check_statics_and_counters(c, &key, &types, &schema)?;
    check_table_name(&ks, table)?;
    let mut masks = Vec::new();
    for (d, ty) in c.columns.iter().zip(&types) {
        if let Some(call) = &d.mask {
            masks.push((d.name.clone(), super::masks::prepare(&d.name, ty, call)?));
        }
    }
    add_columns(&mut schema, c, &key, types);
    for (name, mask) in masks {
        if let Some(col) = schema.columns.iter_mut().find(|col| col.name == name) {
            col.mask = Some(mask);
        }
    }
    cat.create_table(&schema)?;
    Ok(Outcome::SchemaChange(SchemaChange::new(
        ChangeKind::Created,
        &ks,
        Some(table),
    )))
}

/// The table's primary key, with what Cassandra's grammar actions refuse first: a column
/// declared twice, a column ordered twice, no or several PRIMARY KEY clauses.
fn primary_key(c: &CreateTable, shown_name: &str) -> Result<crate::ast::PrimaryKey> {
    for (i, d) in c.columns.iter().enumerate() {
        if c.columns[..i].iter().any(|e| e.name == d.name) {
            return Err(Error::Invalid(format!(
                "Duplicate column '{}' declaration for table '{shown_name}'",
                d.name
            )));
        }
    }
    for (i, (n, _)) in c.clustering_order.iter().enumerate() {
        if c.clustering_order[..i].iter().any(|(m, _)| m == n) {
            return Err(Error::Invalid(format!(
                "Duplicate column '{n}' in CLUSTERING ORDER BY clause for table '{shown_name}'"
            )));
        }
    }
    let inline: Vec<&str> = c
        .columns
        .iter()
        .filter(|d| d.primary_key)
        .map(|d| d.name.as_str())
        .collect();
    if inline.len() + c.key_clauses.len() > 1 {
        return Err(Error::Invalid(format!(
            "Multiple PRIMARY KEY specified for table '{shown_name}' (exactly one required)"
        )));
    }
    Ok(match (inline.first(), c.key_clauses.first()) {
        (Some(col), _) => crate::ast::PrimaryKey {
            partition_key: vec![col.to_string()],
            clustering: Vec::new(),
        },
        (None, Some(k)) => k.clone(),
        // Cassandra's text, spelling included.
        (None, None) => {
            return Err(Error::Invalid(format!(
                "No PRIMARY KEY specifed for table '{shown_name}' (exactly one required)"
            )))
        }
    })
}

/// A column's declaration and type by name.
fn declared<'c>(
    c: &'c CreateTable,
    types: &'c [CqlType],
    name: &str,
) -> Option<(&'c crate::ast::ColumnDef, &'c CqlType)> {
    c.columns
        .iter()
        .position(|d| d.name == name)
        .map(|i| (&c.columns[i], &types[i]))
}

/// Every key column is declared once, and of a type a key may have.
fn check_key_columns(
    c: &CreateTable,
    key: &crate::ast::PrimaryKey,
    types: &[CqlType],
) -> Result<()> {
    let table = &c.name.name;
    let mut seen: Vec<&str> = Vec::new();
    for name in key.partition_key.iter().chain(&key.clustering) {
        let Some((d, ty)) = declared(c, types, name) else {
            return Err(Error::Invalid(format!(
                "Unknown column '{name}' referenced in PRIMARY KEY for table '{table}'"
            )));
        };
        if seen.contains(&name.as_str()) {
            return Err(Error::Invalid(format!(
                "Duplicate column '{name}' in PRIMARY KEY clause for table '{table}'"
            )));
        }
        seen.push(name);
        if ty.is_non_frozen_collection() {
            return Err(Error::Invalid(format!(
                "Invalid non-frozen collection type {} for PRIMARY KEY column '{name}'",
                d.ty
            )));
        }
        if let CqlType::Udt(_) = ty {
            return Err(Error::Invalid(format!(
                "Invalid non-frozen user-defined type {} for PRIMARY KEY column '{name}'",
                ty.name()
            )));
        }
        if *ty == CqlType::Counter {
            return Err(Error::Invalid(format!(
                "counter type is not supported for PRIMARY KEY column '{name}'"
            )));
        }
        if references_duration(ty) {
            return Err(Error::Invalid(format!(
                "duration type is not supported for PRIMARY KEY column '{name}'"
            )));
        }
        if d.is_static {
            return Err(Error::Invalid(format!(
                "Static column '{name}' cannot be part of the PRIMARY KEY"
            )));
        }
    }
    Ok(())
}

/// CLUSTERING ORDER BY names the clustering columns, in their order.
fn check_clustering_order(c: &CreateTable, key: &crate::ast::PrimaryKey) -> Result<()> {
    let wrong: Vec<&str> = c
        .clustering_order
        .iter()
        .filter(|(n, _)| !key.clustering.contains(n))
        .map(|(n, _)| n.as_str())
        .collect();
    if !wrong.is_empty() {
        return Err(Error::Invalid(format!(
            "Only clustering key columns can be defined in CLUSTERING ORDER directive: [{}] are not clustering columns",
            wrong.join(", ")
        )));
    }
    for (i, (n, _)) in c.clustering_order.iter().enumerate() {
        let expected = &key.clustering[i];
        if n != expected {
            if c.clustering_order.iter().any(|(m, _)| m == expected) {
                return Err(Error::Invalid(format!(
                    "The order of columns in the CLUSTERING ORDER directive must match that of the clustering columns ({expected} must appear before {n})"
                )));
            }
            return Err(Error::Invalid(format!(
                "Missing CLUSTERING ORDER for column {expected}"
            )));
        }
    }
    Ok(())
}

/// Static columns need clustering columns; counters do not mix with other columns or a
/// default TTL.
fn check_statics_and_counters(
    c: &CreateTable,
    key: &crate::ast::PrimaryKey,
    types: &[CqlType],
    schema: &TableSchema,
) -> Result<()> {
    let is_key = |n: &str| is_key_column(key, n);
    if key.clustering.is_empty() && c.columns.iter().any(|d| d.is_static && !is_key(&d.name)) {
        return Err(Error::Invalid(
            "Static columns are only useful (and thus allowed) if the table has at least one clustering column".into(),
        ));
    }
    let has_counters = types.contains(&CqlType::Counter);
    if has_counters {
        let mixed = c
            .columns
            .iter()
            .zip(types)
            .any(|(d, ty)| !is_key(&d.name) && *ty != CqlType::Counter);
        if mixed {
            return Err(Error::Invalid(
                "Cannot mix counter and non counter columns in the same table".into(),
            ));
        }
        if schema.options.default_time_to_live > 0 {
            return Err(Error::Invalid(
                "Cannot set default_time_to_live on a table with counters".into(),
            ));
        }
    }
    Ok(())
}

fn is_key_column(key: &crate::ast::PrimaryKey, name: &str) -> bool {
    key.partition_key
        .iter()
        .chain(&key.clustering)
        .any(|k| k == name)
}

/// The columns in Cassandra's order: partition key, clustering (with their order), then
/// the rest as declared.
fn add_columns(
    schema: &mut TableSchema,
    c: &CreateTable,
    key: &crate::ast::PrimaryKey,
    types: Vec<CqlType>,
) {
    for name in &key.partition_key {
        if let Some((_, ty)) = declared(c, &types, name) {
            schema.add_column(name, ty.clone(), ColumnKind::PartitionKey, Order::Asc);
        }
    }
    for name in &key.clustering {
        let order = match c.clustering_order.iter().find(|(n, _)| n == name) {
            Some((_, AstOrder::Desc)) => Order::Desc,
            _ => Order::Asc,
        };
        if let Some((_, ty)) = declared(c, &types, name) {
            schema.add_column(name, ty.clone(), ColumnKind::Clustering, order);
        }
    }
    for (d, ty) in c.columns.iter().zip(types) {
        if is_key_column(key, &d.name) {
            continue;
        }
        let kind = if d.is_static {
            ColumnKind::Static
        } else {
            ColumnKind::Regular
        };
        schema.add_column(&d.name, ty, kind, Order::Asc);
    }
}

/// Cassandra's `TableMetadata.validateTableName` (a configuration error naming the table).
fn check_table_name(ks: &str, name: &str) -> Result<()> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(Error::Configuration(format!(
            "{ks}.{name}: Table name must not be empty or not contain non-alphanumeric-underscore characters (got \"{name}\")"
        )));
    }
    if name.len() > MAX_TABLE_NAME {
        return Err(Error::Configuration(format!(
            "{ks}.{name}: Table name must not be more than {MAX_TABLE_NAME} characters long (got {} characters for \"{name}\")",
            name.len()
        )));
    }
    Ok(())
}

/// The engine type of a column type in keyspace `ks`, refused where Cassandra refuses it
/// (`CQL3Type.Raw` prepare): counters inside collections or tuples, durations inside sets or
/// as map keys, non-frozen collections or user types inside collections, user types unknown
/// or of another keyspace; custom classes and vectors are not supported.
pub fn column_type(t: &TypeName, ks: &str, cat: &Catalog) -> Result<CqlType> {
    check_nesting(t)?;
    super::user_types::resolve(t, ks, cat)
}

/// What [`column_type`] refuses of a type's nesting.
pub fn check_nesting(t: &TypeName) -> Result<()> {
    check_nesting_in(t, false)
}

fn check_nesting_in(t: &TypeName, frozen: bool) -> Result<()> {
    let is_counter = |t: &TypeName| matches!(t, TypeName::Native(CqlType::Counter));
    let is_duration = |t: &TypeName| matches!(t, TypeName::Native(CqlType::Duration));
    let is_udt = |t: &TypeName| matches!(t, TypeName::UserDefined(_));
    let is_collection = |t: &TypeName| {
        matches!(
            t,
            TypeName::List(_) | TypeName::Set(_) | TypeName::Map(_, _)
        )
    };
    let shown = |t: &TypeName| {
        if frozen {
            format!("frozen<{t}>")
        } else {
            t.to_string()
        }
    };
    match t {
        TypeName::Frozen(inner) => check_nesting_in(inner, true),
        TypeName::List(v) | TypeName::Set(v) | TypeName::Map(_, v) => {
            if !frozen && is_collection(v) {
                return Err(Error::Invalid(format!(
                    "Non-frozen collections are not allowed inside collections: {}",
                    shown(t)
                )));
            }
            if !frozen && is_udt(v) {
                return Err(Error::Invalid(format!(
                    "Non-frozen UDTs are not allowed inside collections: {}",
                    shown(t)
                )));
            }
            if is_counter(v) {
                return Err(Error::Invalid(format!(
                    "Counters are not allowed inside collections: {}",
                    shown(t)
                )));
            }
            if matches!(t, TypeName::Set(_)) && is_duration(v) {
                return Err(Error::Invalid(format!(
                    "Durations are not allowed inside sets: {}",
                    shown(t)
                )));
            }
            if let TypeName::Map(k, _) = t {
                if is_counter(k) {
                    return Err(Error::Invalid(format!(
                        "Counters are not allowed inside collections: {}",
                        shown(t)
                    )));
                }
                if is_duration(k) {
                    return Err(Error::Invalid(format!(
                        "Durations are not allowed as map keys: {}",
                        shown(t)
                    )));
                }
                if !frozen && is_collection(k) {
                    return Err(Error::Invalid(format!(
                        "Non-frozen collections are not allowed inside collections: {}",
                        shown(t)
                    )));
                }
                if !frozen && is_udt(k) {
                    return Err(Error::Invalid(format!(
                        "Non-frozen UDTs are not allowed inside collections: {}",
                        shown(t)
                    )));
                }
                check_nesting_in(k, false)?;
            }
            check_nesting_in(v, false)
        }
        TypeName::Tuple(ts) => {
            for e in ts {
                if is_counter(e) {
                    return Err(Error::Invalid(
                        "Counters are not allowed inside tuples".into(),
                    ));
                }
                check_nesting_in(e, false)?;
            }
            Ok(())
        }
        TypeName::Vector(e, _) => check_nesting_in(e, false),
        TypeName::Native(_) | TypeName::UserDefined(_) | TypeName::Custom(_) => Ok(()),
    }
}

/// Whether a duration appears anywhere in the type (`AbstractType.referencesDuration`).
pub(super) fn references_duration(t: &CqlType) -> bool {
    match t {
        CqlType::Duration => true,
        CqlType::List(e) | CqlType::Set(e) | CqlType::Frozen(e) => references_duration(e),
        CqlType::Map(k, v) => references_duration(k) || references_duration(v),
        CqlType::Tuple(ts) => ts.iter().any(references_duration),
        CqlType::Udt(u) => u.field_types.iter().any(references_duration),
        _ => false,
    }
}

/// Whether the table has counter columns (Cassandra's counter tables).
pub fn has_counters(schema: &TableSchema) -> bool {
    schema.columns.iter().any(|c| c.ty == CqlType::Counter)
}

/// Cassandra's `TableMetadata.validate` for counter tables, after ALTER TABLE ADD: a counter
/// table holds only counters, another table none. `was_counter` is whether the table was a
/// counter table before.
pub fn check_counter_columns(schema: &TableSchema, was_counter: bool) -> Result<()> {
    for c in schema
        .columns
        .iter()
        .filter(|c| matches!(c.kind, ColumnKind::Regular | ColumnKind::Static))
    {
        let counter = c.ty == CqlType::Counter;
        if was_counter && !counter {
            return Err(Error::Configuration(format!(
                "{}.{}: Cannot have a non counter column (\"{}\") in a counter table",
                schema.keyspace, schema.name, c.name
            )));
        }
        if !was_counter && counter {
            return Err(Error::Configuration(format!(
                "{}.{}: Cannot have a counter column (\"{}\") in a non counter table",
                schema.keyspace, schema.name, c.name
            )));
        }
    }
    Ok(())
}
