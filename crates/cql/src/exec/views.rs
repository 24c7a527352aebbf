//! Materialized views' schema statements: CREATE / ALTER / DROP MATERIALIZED VIEW, checked
//! as Cassandra 5.0's `CreateViewStatement`, `AlterViewStatement` and `DropViewStatement`
//! check them (same order, same texts), and the rules other statements follow for views
//! (what a view refuses, what a base table with views refuses).
//!
//! A view is stored as a table whose options carry its definition
//! (`cairn_engine::schema::view`): the schema log, `system_schema`, DESCRIBE and SELECT see
//! it through the catalog like any table; the statements here and
//! [`refuse_direct_write`] keep it a view. Its rows are kept by the storage proxy
//! (`cairn_cluster::proxy`, view maintenance) on every write to the base table.
//!
//! The WHERE clause: `IS NOT NULL` on every view key column (or another restriction), and
//! restrictions on the base's primary key columns (`k = 1`, `c IN (…)`, `(c, d) > (…)`),
//! which view maintenance filters base rows by (`cairn_engine::schema::view_filter`). What
//! Cassandra accepts and Cairn refuses with a clear error: CONTAINS / LIKE relations on key
//! columns.

use super::binds::Binds;
use super::catalog::Catalog;
use super::restrict;
use super::result::{ChangeKind, Outcome, SchemaChange};
use super::schema_guard::{authorize, check_schema_keyspace, Permission, Resource};
use super::session::QueryParams;
use super::session::Session;
use super::{options, Executor};
use crate::ast::{
    AlterView, CreateView, DropView, InValues, Operator, Order as AstOrder, Relation,
    RelationTarget, SelectorExpr, Term,
};
use crate::error::{Error, Result};
use crate::identifier::quote_identifier;
use crate::values::term::term_to_bytes;
use crate::values::TermValue;
use cairn_engine::model::clustering::Order;
use cairn_engine::schema::view::ViewDef;
use cairn_engine::schema::view_filter::{FilterOp, KeyRestriction};
use cairn_engine::schema::{ColumnKind, TableSchema};
use std::sync::Arc;

/// Cassandra's `View.USAGE_WARNING`, sent with every CREATE MATERIALIZED VIEW.
const USAGE_WARNING: &str =
    "Materialized views are experimental and are not recommended for production use.";

/// The views of `base` (a table of `keyspace`), by name.
pub fn views_of(ex: &Executor, keyspace: &str, base: &str) -> Vec<std::sync::Arc<TableSchema>> {
    ex.catalog()
        .tables(keyspace)
        .into_iter()
        .map(|t| t.schema())
        .filter(|s| s.view().is_some_and(|d| d.base == base))
        .collect()
}

/// INSERT, UPDATE, DELETE and BATCH never write a view directly.
pub fn refuse_direct_write(schema: &TableSchema) -> Result<()> {
    if schema.is_view() {
        return Err(Error::Invalid(
            "Cannot directly modify a materialized view".into(),
        ));
    }
    Ok(())
}

/// CREATE MATERIALIZED VIEW.
pub fn create_view(ex: &Executor, session: &Session, c: &CreateView) -> Result<Outcome> {
    let cat = ex.catalog();
    // `CreateViewStatement.Raw.prepare`.
    let ks = session.resolve(&c.name.keyspace)?;
    if c.base.keyspace.as_ref().is_some_and(|b| *b != ks) {
        return Err(Error::Invalid(
            "Cannot create a materialized view on a table in a different keyspace".into(),
        ));
    }
    if c.bind_markers > 0 {
        return Err(Error::Invalid(
            "Bind variables are not allowed in CREATE MATERIALIZED VIEW statements".into(),
        ));
    }
    if c.compact_storage {
        return Err(Error::syntax(
            "COMPACT STORAGE tables are not allowed starting with version 4.0",
        ));
    }
    let view = &c.name.name;
    let base_name = &c.base.name;
    authorize(&ks, Permission::Alter, Resource::Table(&ks, base_name))?;
    check_schema_keyspace(&ks)?;
    options::check_values(&c.properties)?;
    // `CreateViewStatement.apply`.
    if !ex.materialized_views_enabled() {
        return Err(Error::Invalid(
            "Materialized views are disabled. Enable in cassandra.yaml to use.".into(),
        ));
    }
    if cat.keyspace(&ks).is_none() {
        return Err(Error::Invalid(format!("Keyspace '{ks}' doesn't exist")));
    }
    // Cassandra looks the base up among tables only: a view as base "doesn't exist".
    let base = match cat.table(&ks, base_name) {
        Some(t) if !t.schema().is_view() => t.schema(),
        _ => {
            return Err(Error::Invalid(format!(
                "Base table '{base_name}' doesn't exist"
            )))
        }
    };
    if let Some(existing) = cat.table(&ks, view) {
        if !existing.schema().is_view() {
            return Err(Error::Invalid(format!(
                "Cannot create materialized view '{view}' - a table with the same name already exists"
            )));
        }
        if c.if_not_exists {
            return Ok(Outcome::Void);
        }
        return Err(Error::AlreadyExists {
            keyspace: ks.clone(),
            table: view.clone(),
            message: format!("Cannot add already existing table \"{view}\" to keyspace \"{ks}\""),
        });
    }
    if super::create_table::has_counters(&base) {
        return Err(Error::Invalid(
            "Materialized views are not supported on counter tables".into(),
        ));
    }
    if base.options.gc_grace_seconds == 0 {
        return Err(Error::Invalid(format!(
            "Cannot create materialized view '{view}' for base table '{base_name}' with gc_grace_seconds of 0, since this value is used to TTL undelivered updates. Setting gc_grace_seconds too low might cause undelivered updates to expire before being replayed."
        )));
    }
    // The SELECT clause.
    let mut selected: Vec<String> = Vec::new();
    match &c.selectors {
        None => selected.extend(base.columns.iter().map(|col| col.name.clone())),
        Some(list) => {
            for s in list {
                let shown = selector_text(&s.expr);
                if let Some(alias) = &s.alias {
                    return Err(Error::Invalid(format!(
                        "Cannot use aliases when defining a materialized view (got {shown} AS {})",
                        quote_identifier(alias)
                    )));
                }
                let SelectorExpr::Column(name) = &s.expr else {
                    return Err(Error::Invalid(format!(
                        "Can only select columns by name when defining a materialized view (got {shown})"
                    )));
                };
                if base.column(name).is_none() {
                    return Err(Error::undefined_column(&base, name));
                }
                if !selected.contains(name) {
                    selected.push(name.clone());
                }
            }
        }
    }
    if let Some(s) = selected
        .iter()
        .filter_map(|n| base.column(n))
        .find(|col| col.kind == ColumnKind::Static)
    {
        return Err(Error::Invalid(format!(
            "Cannot include static column '{}' in materialized view '{view}'",
            s.name
        )));
    }
    // PRIMARY KEY and CLUSTERING ORDER BY.
    let key = &c.key;
    let mut key_columns: Vec<&String> = Vec::new();
    for name in key.partition_key.iter().chain(&key.clustering) {
        let Some(col) = base.column(name).filter(|_| selected.contains(name)) else {
            return Err(Error::Invalid(format!(
                "Unknown column '{name}' referenced in PRIMARY KEY for materialized view '{view}'"
            )));
        };
        if key_columns.contains(&name) {
            return Err(Error::Invalid(format!(
                "Duplicate column '{name}' in PRIMARY KEY clause for materialized view '{view}'"
            )));
        }
        key_columns.push(name);
        key_column_type(&col.ty, name)?;
    }
    if !c.clustering_order.is_empty()
        && !c
            .clustering_order
            .iter()
            .map(|(n, _)| n)
            .eq(key.clustering.iter())
    {
        return Err(Error::Invalid(
            "Clustering key columns must exactly match columns in CLUSTERING ORDER BY directive"
                .into(),
        ));
    }
    let missing: Vec<&str> = base
        .columns
        .iter()
        .filter(|col| matches!(col.kind, ColumnKind::PartitionKey | ColumnKind::Clustering))
        .filter(|col| !key_columns.contains(&&col.name))
        .map(|col| col.name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(Error::Invalid(format!(
            "Cannot create materialized view '{view}' without primary key columns {} from base table '{base_name}'",
            missing.join(", ")
        )));
    }
    let regular_in_key: Vec<&str> = key_columns
        .iter()
        .filter(|n| {
            base.column(n)
                .is_some_and(|col| col.kind == ColumnKind::Regular)
        })
        .map(|n| n.as_str())
        .collect();
    if regular_in_key.len() > 1 {
        return Err(Error::Invalid(format!(
            "Cannot include more than one non-primary key column in materialized view primary key (got {})",
            regular_in_key.join(", ")
        )));
    }
    // The WHERE clause.
    let w = view_where(&c.where_clause, &base)?;
    let unrestricted: Vec<&str> = key_columns
        .iter()
        .filter(|n| !w.restricted.contains(n))
        .map(|n| n.as_str())
        .collect();
    if !unrestricted.is_empty() {
        return Err(Error::Invalid(format!(
            "Primary key columns {} must be restricted with 'IS NOT NULL' or otherwise",
            unrestricted.join(", ")
        )));
    }
    if !w.illegal.is_empty() {
        return Err(Error::Invalid(format!(
            "Non-primary key columns can only be restricted with 'IS NOT NULL' (got: {} restricted illegally)",
            w.illegal.join(",")
        )));
    }
    if let Some(r) = &w.unsupported {
        return Err(Error::Invalid(format!(
            "Materialized view '{view}': the restriction '{r}' is not supported yet (Cairn filters base rows by single-column and multi-column relations with =, <, <=, >, >= and IN)"
        )));
    }
    // The WITH properties.
    let mut schema = TableSchema::new(&ks, view);
    options::apply(&mut schema.options, &c.properties, options::Target::Create)?;
    if c.properties
        .iter()
        .any(|p| p.name.eq_ignore_ascii_case("default_time_to_live"))
    {
        return Err(Error::Invalid(
            "Cannot set default_time_to_live for a materialized view. Data in a materialized view always expire at the same time than the corresponding data in the parent table.".into(),
        ));
    }
    if let Some(id) = options::table_id(&c.properties)? {
        if cat.db().tables().iter().any(|t| t.schema().id == id) {
            return Err(Error::Invalid(format!(
                "Table id {} is already used",
                options::uuid_string(id)
            )));
        }
        schema.id = id;
    }
    // The view's columns: the key as given, then the other selected columns.
    for name in &key.partition_key {
        if let Some(col) = base.column(name) {
            schema.add_column(name, col.ty.clone(), ColumnKind::PartitionKey, Order::Asc);
        }
    }
    for name in &key.clustering {
        if let Some(col) = base.column(name) {
            let order = match c.clustering_order.iter().find(|(n, _)| n == name) {
                Some((_, AstOrder::Desc)) => Order::Desc,
                Some((_, AstOrder::Asc)) => Order::Asc,
                // Unordered: the base column's own order.
                None => col.order,
            };
            schema.add_column(name, col.ty.clone(), ColumnKind::Clustering, order);
        }
    }
    for col in &base.columns {
        if selected.contains(&col.name) && !key_columns.contains(&&col.name) {
            schema.add_column(&col.name, col.ty.clone(), ColumnKind::Regular, Order::Asc);
        }
    }
    ViewDef {
        base: base_name.clone(),
        include_all_columns: c.selectors.is_none(),
        where_clause: w.text,
        not_null: w.restricted,
    }
    .store(&mut schema.options);
    schema.set_view_filter(&w.filter);
    schema.set_view_base(&base);
    cat.create_table(&schema)?;
    Ok(
        Outcome::SchemaChange(SchemaChange::new(ChangeKind::Created, &ks, Some(view)))
            .with_warnings(vec![USAGE_WARNING.into()]),
    )
}

/// A view key column's type: Cassandra's checks in `CreateViewStatement` (its texts quote
/// the type, unlike CREATE TABLE's).
fn key_column_type(ty: &cairn_engine::model::types::CqlType, name: &str) -> Result<()> {
    use cairn_engine::model::types::CqlType;
    if ty.is_non_frozen_collection() {
        return Err(Error::Invalid(format!(
            "Invalid non-frozen collection type '{}' for PRIMARY KEY column '{name}'",
            ty.name()
        )));
    }
    if let CqlType::Udt(_) = ty {
        return Err(Error::Invalid(format!(
            "Invalid non-frozen user-defined type '{}' for PRIMARY KEY column '{name}'",
            ty.name()
        )));
    }
    if *ty == CqlType::Counter {
        return Err(Error::Invalid(format!(
            "counter type is not supported for PRIMARY KEY column '{name}'"
        )));
    }
    if super::create_table::references_duration(ty) {
        return Err(Error::Invalid(format!(
            "duration type is not supported for PRIMARY KEY column '{name}'"
        )));
    }
    Ok(())
}

/// A view's WHERE clause, checked as Cassandra's `CreateViewStatement` checks it.
struct ViewWhere {
    /// The columns restricted, by `IS NOT NULL` or otherwise (a base row has a view row only
    /// when all of them are set).
    restricted: Vec<String>,
    /// Base columns outside the primary key restricted otherwise than by `IS NOT NULL`.
    illegal: Vec<String>,
    /// A relation Cassandra accepts that Cairn does not filter by.
    unsupported: Option<String>,
    /// The restrictions on the base's primary key, for view maintenance.
    filter: Vec<KeyRestriction>,
    /// The clause as Cassandra's `WhereClause.toCQLString` writes it.
    text: String,
}

/// Reads the WHERE clause: Cassandra's checks of its relations (token relations, unknown
/// columns, and the SELECT rules of `StatementRestrictions` with filtering allowed), the
/// restricted columns, and the base key restrictions view maintenance filters by.
fn view_where(relations: &[Relation], base: &TableSchema) -> Result<ViewWhere> {
    let mut w = ViewWhere {
        restricted: Vec::new(),
        illegal: Vec::new(),
        unsupported: None,
        filter: Vec::new(),
        text: relations
            .iter()
            .map(relation_cql)
            .collect::<Vec<_>>()
            .join(" AND "),
    };
    let mut others = Vec::new();
    for r in relations {
        match r {
            Relation::IsNotNull(name) => {
                if base.column(name).is_none() {
                    return Err(Error::undefined_column(base, name));
                }
                if !w.restricted.contains(name) {
                    w.restricted.push(name.clone());
                }
            }
            Relation::Compare {
                target: RelationTarget::Token(_),
                ..
            }
            | Relation::In {
                target: RelationTarget::Token(_),
                ..
            } => {
                return Err(Error::Invalid(
                    "Cannot use token relation when defining a materialized view".into(),
                ))
            }
            Relation::Compare { target, .. } | Relation::In { target, .. } => {
                others.push(r.clone());
                let names: Vec<&String> = match target {
                    RelationTarget::Column(n)
                    | RelationTarget::Element(n, _)
                    | RelationTarget::Field(n, _) => vec![n],
                    RelationTarget::Tuple(ns) | RelationTarget::Token(ns) => ns.iter().collect(),
                };
                for n in names {
                    let Some(col) = base.column(n) else {
                        return Err(Error::undefined_column(base, n));
                    };
                    if matches!(col.kind, ColumnKind::Regular | ColumnKind::Static) {
                        if !w.illegal.contains(n) {
                            w.illegal.push(n.clone());
                        }
                    } else if !w.restricted.contains(n) {
                        w.restricted.push(n.clone());
                    }
                }
            }
        }
    }
    // The relations as a SELECT with ALLOW FILTERING would take them (Cassandra builds its
    // StatementRestrictions so): its refusals and texts.
    let binds = QueryParams::default();
    let ctx = Binds::new(&binds);
    restrict::resolve(base, &others, &ctx, restrict::Context::select(true, false))?;
    if !w.illegal.is_empty() {
        return Ok(w);
    }
    for r in &others {
        match key_restriction(base, r, &ctx)? {
            Some(k) => w.filter.push(k),
            None => {
                w.unsupported = Some(relation_cql(r));
                break;
            }
        }
    }
    Ok(w)
}

/// A relation on the base's primary key as view maintenance filters by it; `None` for a
/// shape it does not (CONTAINS, LIKE, an element or field).
fn key_restriction(
    base: &TableSchema,
    r: &Relation,
    ctx: &dyn crate::values::TermContext,
) -> Result<Option<KeyRestriction>> {
    let (target, op, terms): (&RelationTarget, FilterOp, Vec<&Term>) = match r {
        Relation::Compare { target, op, value } => {
            let op = match op {
                Operator::Eq => FilterOp::Eq,
                Operator::Lt => FilterOp::Lt,
                Operator::Lte => FilterOp::Le,
                Operator::Gt => FilterOp::Gt,
                Operator::Gte => FilterOp::Ge,
                _ => return Ok(None),
            };
            (target, op, vec![value])
        }
        Relation::In {
            target,
            values: InValues::Terms(ts),
        } => (target, FilterOp::In, ts.iter().collect()),
        _ => return Ok(None),
    };
    let columns: Vec<String> = match target {
        RelationTarget::Column(n) => vec![n.clone()],
        RelationTarget::Tuple(ns) => ns.clone(),
        _ => return Ok(None),
    };
    let mut values = Vec::with_capacity(terms.len());
    for t in terms {
        let parts: Vec<&Term> = match (target, t) {
            (RelationTarget::Tuple(_), Term::Tuple(ts)) => ts.iter().collect(),
            (RelationTarget::Tuple(_), _) => return Ok(None),
            _ => vec![t],
        };
        let mut tuple = Vec::with_capacity(parts.len());
        for (name, part) in columns.iter().zip(parts) {
            let col = base
                .column(name)
                .ok_or_else(|| Error::undefined_column(base, name))?;
            match term_to_bytes(part, &col.ty, name, ctx).map_err(Error::from)? {
                TermValue::Value(b) => tuple.push(b),
                // Refused by the restrictions above; never a filter that matches nothing.
                TermValue::Null | TermValue::Unset => return Ok(None),
            }
        }
        values.push(tuple);
    }
    Ok(Some(KeyRestriction {
        columns,
        op,
        values,
    }))
}

/// A relation as Cassandra's `toCQLString` writes it in `system_schema.views.where_clause`
/// and DESCRIBE: names quoted when they must be, terms as written (strings between quotes,
/// not escaped, as Cassandra 5.0 prints them).
fn relation_cql(r: &Relation) -> String {
    restrict::relation_with_names(r, &|n: &str| quote_identifier(n))
}

/// A selector as Cassandra's error texts show it (what a view may not select).
fn selector_text(e: &SelectorExpr) -> String {
    match e {
        SelectorExpr::Column(n) => quote_identifier(n),
        SelectorExpr::CountAll => "count(*)".into(),
        SelectorExpr::WriteTime(c) => format!("writetime({})", quote_identifier(&c.column)),
        SelectorExpr::MaxWriteTime(c) => {
            format!("maxwritetime({})", quote_identifier(&c.column))
        }
        SelectorExpr::Ttl(c) => format!("ttl({})", quote_identifier(&c.column)),
        SelectorExpr::Function(f) => format!(
            "{}({})",
            f.name.name,
            f.args
                .iter()
                .map(selector_text)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        SelectorExpr::Field(inner, f) => {
            format!("{}.{}", selector_text(inner), quote_identifier(f))
        }
        _ => "an expression".into(),
    }
}

/// ALTER MATERIALIZED VIEW … WITH.
pub fn alter_view(ex: &Executor, session: &Session, a: &AlterView) -> Result<Outcome> {
    let cat = ex.catalog();
    let ks = session.resolve(&a.name.keyspace)?;
    let name = &a.name.name;
    options::check_values(&a.properties)?;
    check_schema_keyspace(&ks)?;
    let Some(schema) = existing_view(cat, &ks, name, a.if_exists)? else {
        return Ok(Outcome::Void);
    };
    if let Some(d) = schema.view() {
        authorize(&ks, Permission::Alter, Resource::Table(&ks, &d.base))?;
    }
    let mut schema = (*schema).clone();
    options::apply(&mut schema.options, &a.properties, options::Target::Alter)?;
    if schema.options.gc_grace_seconds == 0 {
        return Err(Error::Invalid(
            "Cannot alter gc_grace_seconds of a materialized view to 0, since this value is used to TTL undelivered updates. Setting gc_grace_seconds too low might cause undelivered updates to expire before being replayed.".into(),
        ));
    }
    if schema.options.default_time_to_live > 0 {
        return Err(Error::Invalid(
            "Forbidden default_time_to_live detected for a materialized view. Data in a materialized view always expire at the same time than the corresponding data in the parent table. default_time_to_live must be set to zero, see CASSANDRA-12868 for more information".into(),
        ));
    }
    cat.alter_table(&schema)?;
    Ok(Outcome::SchemaChange(SchemaChange::new(
        ChangeKind::Updated,
        &ks,
        Some(name),
    )))
}

/// The view `ks.name` an ALTER or DROP MATERIALIZED VIEW names; `None` when it does not
/// exist and the statement said IF EXISTS.
fn existing_view(
    cat: &Catalog,
    ks: &str,
    name: &str,
    if_exists: bool,
) -> Result<Option<Arc<TableSchema>>> {
    match cat
        .table(ks, name)
        .map(|t| t.schema())
        .filter(|s| s.is_view())
    {
        Some(schema) => Ok(Some(schema)),
        None if if_exists => Ok(None),
        None => Err(Error::Invalid(format!(
            "Materialized view '{ks}.{name}' doesn't exist"
        ))),
    }
}

/// DROP MATERIALIZED VIEW.
pub fn drop_view(ex: &Executor, session: &Session, d: &DropView) -> Result<Outcome> {
    let cat = ex.catalog();
    let ks = session.resolve(&d.name.keyspace)?;
    let name = &d.name.name;
    check_schema_keyspace(&ks)?;
    let Some(schema) = existing_view(cat, &ks, name, d.if_exists)? else {
        return Ok(Outcome::Void);
    };
    if let Some(v) = schema.view() {
        authorize(&ks, Permission::Alter, Resource::Table(&ks, &v.base))?;
    }
    cat.drop_table(&ks, name)?;
    Ok(Outcome::SchemaChange(SchemaChange::new(
        ChangeKind::Dropped,
        &ks,
        Some(name),
    )))
}

/// DROP TABLE's rules for views: a view is dropped with DROP MATERIALIZED VIEW, and a
/// table with views is not dropped (Cassandra names the keyspace in its text, not the
/// views: its format has one argument too many).
pub fn check_drop_table(ex: &Executor, schema: &TableSchema) -> Result<()> {
    if schema.is_view() {
        return Err(Error::Invalid(
            "Cannot use DROP TABLE on a materialized view. Please use DROP MATERIALIZED VIEW instead."
                .into(),
        ));
    }
    if !views_of(ex, &schema.keyspace, &schema.name).is_empty() {
        return Err(Error::Invalid(format!(
            "Cannot drop a table when materialized views still depend on it ({})",
            schema.keyspace
        )));
    }
    Ok(())
}
