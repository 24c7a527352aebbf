//! User-defined types: CREATE / ALTER / DROP TYPE as Cassandra 5.0's `CreateTypeStatement`,
//! `AlterTypeStatement` and `DropTypeStatement` run them (same checks, order and texts), and
//! the resolution of a written type (`ast::TypeName`, which names user types) into the
//! engine's `CqlType`, which carries each user type's definition.
//!
//! Types are schema-log entries like tables ([`Catalog::create_type`]); a column's type holds
//! the user type's whole definition, so `ALTER TYPE` rewrites the tables (and the other
//! types) that use the type in the same command, and `DROP TYPE` is refused while anything
//! uses it.
//!
//! Invariants of what [`resolve`] returns: a user type is only ever of the statement's
//! keyspace; inside a tuple, and inside a frozen collection, a user type is `frozen<…>` (as
//! Cassandra freezes them there). A bare `CqlType::Udt` is a non-frozen column's type,
//! stored one cell per field (`values::collections::udt_field_path`).

use super::catalog::Catalog;
use super::result::{ChangeKind, Outcome, SchemaChange};
use super::schema_guard::{authorize, check_schema_keyspace, Permission, Resource};
use super::session::Session;
use super::Executor;
use crate::ast::{AlterType, AlterTypeAction, CreateType, DropType, TypeName};
use crate::error::{Error, Result};
use crate::identifier::quote_identifier;
use cairn_engine::model::types::{CqlType, UserType};

/// The engine type of a written type, its user types looked up in `keyspace` (Cassandra's
/// `CQL3Type.Raw.prepare`). Checks only what resolving needs (the type exists, in the
/// statement's keyspace); nesting rules are the caller's (`create_table::column_type`).
pub fn resolve(t: &TypeName, keyspace: &str, cat: &Catalog) -> Result<CqlType> {
    resolve_in(t, keyspace, cat, false)
}

fn resolve_in(t: &TypeName, ks: &str, cat: &Catalog, frozen: bool) -> Result<CqlType> {
    // Cassandra freezes what a frozen type or a tuple holds.
    let freeze = |t: CqlType| match t {
        CqlType::Udt(_) => CqlType::Frozen(Box::new(t)),
        other => other,
    };
    let elem = |t: &TypeName| -> Result<Box<CqlType>> {
        let r = resolve_in(t, ks, cat, frozen)?;
        Ok(Box::new(if frozen { freeze(r) } else { r }))
    };
    Ok(match t {
        TypeName::Native(n) => n.clone(),
        TypeName::List(e) => CqlType::List(elem(e)?),
        TypeName::Set(e) => CqlType::Set(elem(e)?),
        TypeName::Map(k, v) => CqlType::Map(elem(k)?, elem(v)?),
        TypeName::Tuple(ts) => CqlType::Tuple(
            ts.iter()
                .map(|t| resolve_in(t, ks, cat, true).map(freeze))
                .collect::<Result<Vec<_>>>()?,
        ),
        TypeName::Frozen(inner) => CqlType::Frozen(Box::new(resolve_in(inner, ks, cat, true)?)),
        TypeName::UserDefined(name) => {
            if let Some(other) = name.keyspace.as_deref().filter(|k| *k != ks) {
                return Err(Error::Invalid(format!(
                    "Statement on keyspace {ks} cannot refer to a user type in keyspace {other}; user types can only be used in the keyspace they are defined in"
                )));
            }
            let Some(ut) = cat.user_type(ks, &name.name) else {
                return Err(Error::Invalid(format!("Unknown type {ks}.{}", name.name)));
            };
            CqlType::Udt(Box::new(ut))
        }
        TypeName::Vector(..) | TypeName::Custom(_) => {
            return Err(Error::Invalid(format!("Unsupported type {t}")))
        }
    })
}

/// Cassandra's check of a non-frozen user-type column: its fields hold no non-frozen
/// collection (`column` names the column in ALTER TABLE ADD's text).
pub fn check_non_frozen(ty: &CqlType, column: Option<&str>) -> Result<()> {
    let CqlType::Udt(u) = ty else {
        return Ok(());
    };
    let multi_cell = |t: &CqlType| {
        matches!(
            t,
            CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..) | CqlType::Udt(_)
        )
    };
    if u.field_types.iter().any(multi_cell) {
        return Err(Error::Invalid(match column {
            None => "Non-frozen UDTs with nested non-frozen collections are not supported".into(),
            Some(c) => format!(
                "Non-frozen UDTs with nested non-frozen collections are not supported for column {c}"
            ),
        }));
    }
    Ok(())
}

/// Whether a written type is a user type that is not frozen (`isUDT() && !isFrozen()`).
fn is_non_frozen_udt(t: &TypeName) -> bool {
    matches!(t, TypeName::UserDefined(_))
}

/// What CREATE TYPE and ALTER TYPE ADD refuse of a field's written type first.
fn check_field(t: &TypeName) -> Result<()> {
    if matches!(t, TypeName::Native(CqlType::Counter)) {
        return Err(Error::Invalid("A user type cannot contain counters".into()));
    }
    if is_non_frozen_udt(t) {
        return Err(Error::Invalid(
            "A user type cannot contain non-frozen UDTs".into(),
        ));
    }
    Ok(())
}

/// A field's type, resolved, with the nesting rules of any type.
fn field_type(t: &TypeName, ks: &str, cat: &Catalog) -> Result<CqlType> {
    super::create_table::check_nesting(t)?;
    resolve(t, ks, cat)
}

/// `ks.name` as Cassandra's `UserType.getCqlTypeName` shows it.
fn cql_type_name(ks: &str, name: &str) -> String {
    format!("{}.{}", quote_identifier(ks), quote_identifier(name))
}

/// CREATE TYPE.
pub fn create_type(ex: &Executor, session: &Session, c: &CreateType) -> Result<Outcome> {
    let cat = ex.catalog();
    let ks = session.resolve(&c.name.keyspace)?;
    let name = &c.name.name;
    authorize(&ks, Permission::Create, Resource::AllTables(&ks))?;
    check_schema_keyspace(&ks)?;
    if cat.keyspace(&ks).is_none() {
        return Err(Error::Invalid(format!("Keyspace '{ks}' doesn't exist")));
    }
    if cat.user_type(&ks, name).is_some() {
        if c.if_not_exists {
            return Ok(Outcome::Void);
        }
        return Err(Error::Invalid(format!(
            "A user type with name '{name}' already exists"
        )));
    }
    for (i, (f, _)) in c.fields.iter().enumerate() {
        if c.fields[..i].iter().any(|(g, _)| g == f) {
            return Err(Error::Invalid(format!(
                "Duplicate field name '{f}' in type '{name}'"
            )));
        }
    }
    for (_, t) in &c.fields {
        check_field(t)?;
    }
    let mut field_types = Vec::with_capacity(c.fields.len());
    for (_, t) in &c.fields {
        field_types.push(field_type(t, &ks, cat)?);
    }
    let ut = UserType {
        keyspace: ks.clone(),
        name: name.clone(),
        field_names: c.fields.iter().map(|(f, _)| f.clone()).collect(),
        field_types,
    };
    cat.create_type(&ut)?;
    Ok(type_change(ChangeKind::Created, &ks, name))
}

/// ALTER TYPE [IF EXISTS] … ADD [IF NOT EXISTS] / RENAME [IF EXISTS] / ALTER (refused, as
/// Cassandra 5.0 refuses it). A statement its IF clauses make change nothing answers VOID,
/// with no schema change (Cassandra's empty diff).
pub fn alter_type(ex: &Executor, session: &Session, a: &AlterType) -> Result<Outcome> {
    let cat = ex.catalog();
    let ks = session.resolve(&a.name.keyspace)?;
    let name = &a.name.name;
    authorize(&ks, Permission::Alter, Resource::AllTables(&ks))?;
    check_schema_keyspace(&ks)?;
    let Some(mut ut) = cat.user_type(&ks, name) else {
        if a.if_exists {
            return Ok(Outcome::Void);
        }
        return Err(Error::Invalid(format!("Type {ks}.{name} doesn't exist")));
    };
    let shown = cql_type_name(&ks, name);
    match &a.action {
        AlterTypeAction::Alter { .. } => {
            return Err(Error::Invalid(
                "Altering field types is no longer supported".into(),
            ))
        }
        AlterTypeAction::Add {
            field,
            ty,
            if_not_exists,
        } => {
            check_field(ty)?;
            if ut.field_position(field).is_some() {
                if *if_not_exists {
                    return Ok(Outcome::Void);
                }
                return Err(Error::Invalid(format!(
                    "Cannot add field {field} to type {shown}: a field with name {field} already exists"
                )));
            }
            let fty = field_type(ty, &ks, cat)?;
            if fty.references_udt(&ks, name) {
                return Err(Error::Invalid(format!(
                    "Cannot add new field {field} of type {ty} to user type {shown} as it would create a circular reference"
                )));
            }
            let in_keys: Vec<String> = cat
                .tables(&ks)
                .iter()
                .filter(|t| {
                    t.schema()
                        .columns_of(cairn_engine::schema::ColumnKind::PartitionKey)
                        .any(|c| c.ty.references_udt(&ks, name))
                })
                .map(|t| format!("{ks}.{}", t.schema().name))
                .collect();
            if !in_keys.is_empty() {
                return Err(Error::Invalid(format!(
                    "Cannot add new field {field} of type {ty} to user type {shown} as the type is being used in partition key by the following tables: {}",
                    in_keys.join(", ")
                )));
            }
            ut.field_names.push(field.clone());
            ut.field_types.push(fty);
        }
        AlterTypeAction::Rename { renames, if_exists } => {
            let mut names = ut.field_names.clone();
            for (old, new) in renames {
                let Some(i) = ut.field_position(old) else {
                    if *if_exists {
                        continue;
                    }
                    // Cassandra's spelling.
                    return Err(Error::Invalid(format!(
                        "Unkown field {old} in user type {shown}"
                    )));
                };
                names[i] = new.clone();
            }
            if names == ut.field_names {
                return Ok(Outcome::Void);
            }
            for n in &names {
                if names.iter().filter(|m| *m == n).count() > 1 {
                    return Err(Error::Invalid(format!(
                        "Duplicate field name {n} in type {ks}"
                    )));
                }
            }
            ut.field_names = names;
        }
    }
    cat.alter_type(&ut)?;
    Ok(type_change(ChangeKind::Updated, &ks, name))
}

/// DROP TYPE: refused while another type or a table uses it.
pub fn drop_type(ex: &Executor, session: &Session, d: &DropType) -> Result<Outcome> {
    let cat = ex.catalog();
    let ks = session.resolve(&d.name.keyspace)?;
    let name = &d.name.name;
    authorize(&ks, Permission::Drop, Resource::AllTables(&ks))?;
    check_schema_keyspace(&ks)?;
    if cat.user_type(&ks, name).is_none() {
        if d.if_exists {
            return Ok(Outcome::Void);
        }
        return Err(Error::Invalid(format!("Type '{ks}.{name}' doesn't exist")));
    }
    let types: Vec<String> = cat
        .user_types(&ks)
        .into_iter()
        .filter(|t| t.name != *name && t.field_types.iter().any(|f| f.references_udt(&ks, name)))
        .map(|t| t.name)
        .collect();
    if !types.is_empty() {
        return Err(Error::Invalid(format!(
            "Cannot drop user type '{ks}.{name}' as it is still used by user types {}",
            types.join(", ")
        )));
    }
    let tables: Vec<String> = cat
        .tables(&ks)
        .iter()
        .filter(|t| {
            t.schema()
                .columns
                .iter()
                .any(|c| c.ty.references_udt(&ks, name))
        })
        .map(|t| t.schema().name.clone())
        .collect();
    if !tables.is_empty() {
        return Err(Error::Invalid(format!(
            "Cannot drop user type '{ks}.{name}' as it is still used by tables {}",
            tables.join(", ")
        )));
    }
    cat.drop_type(&ks, name)?;
    Ok(type_change(ChangeKind::Dropped, &ks, name))
}

fn type_change(change: ChangeKind, ks: &str, name: &str) -> Outcome {
    Outcome::SchemaChange(SchemaChange::of_type(change, ks, name))
}
