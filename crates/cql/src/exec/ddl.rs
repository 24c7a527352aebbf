//! Schema statements: keyspaces, ALTER / DROP TABLE, TRUNCATE, DROP INDEX, roles;
//! CREATE TABLE is [`create_table`](super::create_table), user types
//! [`user_types`](super::user_types); GRANT / REVOKE / LIST PERMISSIONS and role membership go
//! to the role store. CREATE / DROP INDEX are [`indexes`](super::indexes).
//!
//! Each statement checks what Cassandra checks, in Cassandra's order, with its texts:
//! system keyspaces first (`authorize`, then `check_schema_keyspace`, both in
//! [`schema_guard`](super::schema_guard)), then the
//! statement's own properties, then whether its target exists (`IF EXISTS` / `IF NOT EXISTS`
//! answer there), then the change itself.

use super::catalog::{Keyspace, SYSTEM_KEYSPACES};
use super::properties::Properties;
use super::replication::{self, Replication};
use super::result::{ChangeKind, Outcome, SchemaChange};
use super::schema_guard::{authorize, check_schema_keyspace, Permission, Resource};
use super::session::Session;
use super::{create_table, indexes, masks, options, user_types, views, Executor};
use crate::ast::{
    AlterKeyspace, AlterTable, AlterTableAction, CreateKeyspace, DropKeyspace, DropTable, Property,
    QualifiedName, RoleOptions, Statement,
};
use crate::error::{Error, Result};
use crate::identifier::quote_identifier;
use cairn_engine::model::clustering::Order;
use cairn_engine::model::types::CqlType;
use cairn_engine::schema::ColumnKind;

/// Runs a schema (or otherwise non-data) statement.
pub fn run(ex: &Executor, session: &Session, stmt: &Statement) -> Result<Outcome> {
    match stmt {
        Statement::CreateKeyspace(c) => create_keyspace(ex, c),
        Statement::AlterKeyspace(a) => alter_keyspace(ex, a),
        Statement::DropKeyspace(d) => drop_keyspace(ex, session, d),
        Statement::CreateTable(c) => super::create_table::run(ex, session, c),
        Statement::AlterTable(a) => alter_table(ex, session, a),
        Statement::DropTable(d) => drop_table(ex, session, d),
        Statement::Truncate(name) => truncate(ex, session, name),
        Statement::CreateType(c) => user_types::create_type(ex, session, c),
        Statement::AlterType(a) => user_types::alter_type(ex, session, a),
        Statement::DropType(d) => user_types::drop_type(ex, session, d),
        Statement::DropIndex(d) => indexes::drop_index(ex, session, d),
        Statement::CreateIndex(c) => indexes::create_index(ex, session, c),
        Statement::CreateView(c) => views::create_view(ex, session, c),
        Statement::AlterView(a) => views::alter_view(ex, session, a),
        Statement::DropView(d) => views::drop_view(ex, session, d),
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
        | Statement::RevokeRole { .. } => role_statement(ex, session, stmt),
        Statement::Select(_)
        | Statement::Insert(_)
        | Statement::Update(_)
        | Statement::Delete(_)
        | Statement::Batch(_)
        | Statement::Use(_) => Err(Error::Invalid("not a schema statement".into())),
    }
}

// --- statements without properties ---------------------------------------------------------

/// DROP KEYSPACE.
fn drop_keyspace(ex: &Executor, session: &Session, d: &DropKeyspace) -> Result<Outcome> {
    let cat = ex.catalog();
    authorize(&d.name, Permission::Drop, Resource::Keyspace(&d.name))?;
    check_schema_keyspace(&d.name)?;
    if cat.keyspace(&d.name).is_none() {
        if d.if_exists {
            return Ok(Outcome::Void);
        }
        return Err(Error::Invalid(format!(
            "Keyspace '{}' doesn't exist",
            d.name
        )));
    }
    cat.drop_keyspace(&d.name)?;
    if session.keyspace.read().as_deref() == Some(d.name.as_str()) {
        *session.keyspace.write() = None;
    }
    Ok(change(ChangeKind::Dropped, &d.name, None))
}

/// DROP TABLE (the engine snapshots it first when `auto_snapshot` is on).
fn drop_table(ex: &Executor, session: &Session, d: &DropTable) -> Result<Outcome> {
    let cat = ex.catalog();
    let ks = session.resolve(&d.name.keyspace)?;
    let name = &d.name.name;
    authorize(&ks, Permission::Drop, Resource::Table(&ks, name))?;
    check_schema_keyspace(&ks)?;
    let Some(table) = cat.table(&ks, name) else {
        if d.if_exists {
            return Ok(Outcome::Void);
        }
        return Err(Error::Invalid(format!("Table '{ks}.{name}' doesn't exist")));
    };
    views::check_drop_table(ex, &table.schema())?;
    // Its indexes go with it, in the same command.
    let mut names = indexes::dropped_with(cat, &table.schema());
    names.push(name.clone());
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    cat.drop_tables(&ks, &names)?;
    Ok(change(ChangeKind::Dropped, &ks, Some(name)))
}

/// TRUNCATE.
fn truncate(ex: &Executor, session: &Session, name: &QualifiedName) -> Result<Outcome> {
    let cat = ex.catalog();
    let ks = session.resolve(&name.keyspace)?;
    super::system::refuse_truncate(&ks, &name.name)?;
    // Cairn's system keyspaces are its own stores (keyspace definitions, roles) and
    // tables built from metadata: never emptied by a user.
    refuse_system(&ks)?;
    // Cassandra's `Schema.validateTable` texts.
    if cat.keyspace(&ks).is_none() {
        return Err(Error::Invalid(format!("keyspace {ks} does not exist")));
    }
    let Some(table) = cat.table(&ks, &name.name) else {
        return Err(Error::Invalid(format!(
            "table {} does not exist",
            name.name
        )));
    };
    let schema = (*table.schema()).clone();
    drop(table);
    if schema.is_view() {
        return Err(Error::Invalid(
            "Cannot TRUNCATE materialized view directly; must truncate base table instead".into(),
        ));
    }
    // Every node recreates the table under the same new id (after `auto_snapshot`), and its
    // views with it, as Cassandra truncates a base table's views.
    let mut all = vec![schema];
    all.extend(
        views::views_of(ex, &ks, &name.name)
            .iter()
            .chain(&indexes::indexes_of(cat, &ks, &name.name))
            .map(|v| (**v).clone()),
    );
    cat.truncate_tables(&all)?;
    Ok(Outcome::Void)
}

/// Role, user and permission statements, run by the node's [`super::auth::Roles`] (what
/// they need was checked before: `permissions::required`, except what depends on the roles).
fn role_statement(ex: &Executor, session: &Session, stmt: &Statement) -> Result<Outcome> {
    let roles = ex.roles();
    let authorizing = ex.authorization();
    // The creator of a role gets its permissions when they are enforced.
    let creator = session.user.read().clone().filter(|_| authorizing);
    let exists = |r: &super::permissions::Resource| data_resource_exists(ex, r);
    match stmt {
        Statement::CreateRole(r) => {
            roles.create(
                session,
                &r.name,
                r.if_not_exists,
                &r.options,
                creator.as_deref(),
            )?;
            Ok(Outcome::Void)
        }
        Statement::AlterRole(r) => {
            roles.alter(session, authorizing, &r.name, r.if_exists, &r.options)?;
            Ok(Outcome::Void)
        }
        Statement::DropRole(r) => {
            roles.drop(session, &r.name, r.if_exists)?;
            Ok(Outcome::Void)
        }
        Statement::ListRoles(l) => Ok(Outcome::Rows(roles.list(
            session,
            authorizing,
            l.of.as_deref(),
            l.recursive,
            false,
        )?)),
        Statement::CreateUser(u) => {
            let o = RoleOptions {
                password: u.password.clone(),
                login: Some(true),
                superuser: u.superuser,
                ..RoleOptions::default()
            };
            roles.create(session, &u.name, u.if_not_exists, &o, creator.as_deref())?;
            Ok(Outcome::Void)
        }
        Statement::AlterUser(u) => {
            let o = RoleOptions {
                password: u.password.clone(),
                superuser: u.superuser,
                ..RoleOptions::default()
            };
            roles.alter(session, authorizing, &u.name, u.if_exists, &o)?;
            Ok(Outcome::Void)
        }
        Statement::DropUser(u) => {
            roles.drop(session, &u.name, u.if_exists)?;
            Ok(Outcome::Void)
        }
        Statement::ListUsers => Ok(Outcome::Rows(roles.list(
            session,
            authorizing,
            None,
            true,
            true,
        )?)),
        Statement::GrantRole { role, grantee } => {
            roles.grant_role(role, grantee)?;
            Ok(Outcome::Void)
        }
        Statement::RevokeRole { role, revokee } => {
            roles.revoke_role(role, revokee)?;
            Ok(Outcome::Void)
        }
        Statement::Grant(g) | Statement::Revoke(g) => {
            let grant = matches!(stmt, Statement::Grant(_));
            require_authorizer(authorizing, if grant { "GRANT" } else { "REVOKE" })?;
            roles.change_permissions(session, g, grant, &exists)
        }
        Statement::ListPermissions(l) => {
            require_authorizer(authorizing, "LIST PERMISSIONS")?;
            roles.list_permissions(session, l, &exists)
        }
        _ => Err(Error::Invalid("not a role statement".into())),
    }
}

/// Permission statements need the authorizer that keeps permissions: Cassandra's
/// `AllowAllAuthorizer` refuses them with these texts.
fn require_authorizer(authorizing: bool, what: &str) -> Result<()> {
    if authorizing {
        return Ok(());
    }
    Err(Error::Invalid(format!(
        "{what} operation is not supported by AllowAllAuthorizer"
    )))
}

/// Whether a keyspace or table a permission names exists (system tables included).
fn data_resource_exists(ex: &Executor, r: &super::permissions::Resource) -> bool {
    use super::permissions::Resource;
    match r {
        Resource::Keyspace(ks) | Resource::AllTables(ks) => {
            ex.catalog().keyspace(ks).is_some() || super::system::is_virtual_keyspace(ks)
        }
        Resource::Table(ks, t) => {
            ex.catalog().table(ks, t).is_some() || super::system::virtual_schema(ks, t).is_some()
        }
        _ => true,
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
    Outcome::SchemaChange(SchemaChange::new(change, keyspace, table))
}

/// Cairn's refusal to write into its own system keyspaces (TRUNCATE), with Cassandra's text
/// for a schema change there.
fn refuse_system(name: &str) -> Result<()> {
    if SYSTEM_KEYSPACES.contains(&name) || super::system::is_virtual_keyspace(name) {
        return Err(Error::Unauthorized(format!(
            "{name} keyspace is not user-modifiable."
        )));
    }
    Ok(())
}

// --- keyspaces -----------------------------------------------------------------------------

const KEYSPACE_PROPERTIES: [&str; 2] = ["replication", "durable_writes"];

/// Cassandra's `KeyspaceAttributes.validate`: known properties, and a replication map names
/// its class.
fn keyspace_properties(props: &[Property]) -> Result<Option<&[(String, String)]>> {
    let p = Properties(props);
    p.check_known(&KEYSPACE_PROPERTIES)?;
    let replication = p.map("replication")?;
    if replication.is_some_and(|m| !m.is_empty() && !m.iter().any(|(k, _)| k == "class")) {
        return Err(Error::Configuration(
            "Missing replication strategy class".into(),
        ));
    }
    Ok(replication)
}

/// The ring's data centers, each with its number of nodes (NetworkTopologyStrategy accepts
/// only these; the replication-factor warnings count them), as Cassandra's topology has them.
fn data_centers(ex: &Executor) -> Vec<(String, usize)> {
    let topology = ex.proxy().topology().get();
    let mut dcs: Vec<(String, usize)> = Vec::new();
    for m in topology.members() {
        if m.state == cairn_cluster::topology::MemberState::Left {
            continue;
        }
        match dcs.iter_mut().find(|(dc, _)| *dc == m.endpoint.datacenter) {
            Some((_, n)) => *n += 1,
            None => dcs.push((m.endpoint.datacenter.clone(), 1)),
        }
    }
    if dcs.is_empty() {
        dcs.push((ex.node().data_center.clone(), 1));
    }
    dcs
}

fn create_keyspace(ex: &Executor, c: &CreateKeyspace) -> Result<Outcome> {
    let cat = ex.catalog();
    check_schema_keyspace(&c.name)?;
    let replication = keyspace_properties(&c.properties)?;
    let Some(replication) = replication else {
        return Err(Error::Invalid(
            "Missing mandatory option 'replication'".into(),
        ));
    };
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
    let durable_writes = Properties(&c.properties)
        .boolean("durable_writes")?
        .unwrap_or(true);
    let prepared = replication::for_new(&c.name, replication, &data_centers(ex))?;
    cat.put_keyspace(Keyspace {
        name: c.name.clone(),
        replication: prepared.replication.to_map(),
        durable_writes,
    })?;
    Ok(change(ChangeKind::Created, &c.name, None).with_warnings(prepared.warnings))
}

fn alter_keyspace(ex: &Executor, a: &AlterKeyspace) -> Result<Outcome> {
    let cat = ex.catalog();
    authorize(&a.name, Permission::Alter, Resource::Keyspace(&a.name))?;
    check_schema_keyspace(&a.name)?;
    let replication = keyspace_properties(&a.properties)?;
    let Some(old) = cat.keyspace(&a.name) else {
        if a.if_exists {
            return Ok(Outcome::Void);
        }
        return Err(Error::Invalid(format!(
            "Keyspace '{}' doesn't exist",
            a.name
        )));
    };
    let durable_writes = Properties(&a.properties)
        .boolean("durable_writes")?
        .unwrap_or(old.durable_writes);
    let previous = Replication::from_stored(&old.replication);
    let dcs = data_centers(ex);
    // Without a class (no map, or an empty one) the replication stays; Cassandra validates it
    // again all the same, so its warnings come again.
    let (replication, warnings) = match (replication, &previous) {
        (Some(m), _) if !m.is_empty() => {
            let empty = Replication {
                strategy: replication::Strategy::Simple,
                options: Vec::new(),
            };
            let p =
                replication::for_altered(&a.name, m, previous.as_ref().unwrap_or(&empty), &dcs)?;
            (p.replication.to_map(), p.warnings)
        }
        (_, Some(prev)) if prev.strategy != replication::Strategy::Local => {
            let warnings = replication::revalidate(&a.name, prev, &dcs).unwrap_or_default();
            (old.replication.clone(), warnings)
        }
        _ => (old.replication.clone(), Vec::new()),
    };
    cat.put_keyspace(Keyspace {
        name: a.name.clone(),
        replication,
        durable_writes,
    })?;
    Ok(change(ChangeKind::Updated, &a.name, None).with_warnings(warnings))
}

// --- ALTER TABLE ---------------------------------------------------------------------------

fn alter_table(ex: &Executor, session: &Session, a: &AlterTable) -> Result<Outcome> {
    let cat = ex.catalog();
    let ks = session.resolve(&a.name.keyspace)?;
    let name = &a.name.name;
    if let AlterTableAction::With(props) = &a.action {
        // Cassandra reads the values before it looks for the table.
        options::check_values(props)?;
    }
    authorize(&ks, Permission::Alter, Resource::Table(&ks, name))?;
    // Making a mask needs masking on; dropping one does not.
    let makes_mask = match &a.action {
        AlterTableAction::Mask { mask, .. } => mask.is_some(),
        AlterTableAction::Add { columns, .. } => columns.iter().any(|c| c.mask.is_some()),
        _ => false,
    };
    if makes_mask {
        masks::check_enabled(ex)?;
    }
    check_schema_keyspace(&ks)?;
    let Some(table) = cat.table(&ks, name) else {
        if a.if_exists {
            return Ok(Outcome::Void);
        }
        return Err(Error::Invalid(format!("Table '{ks}.{name}' doesn't exist")));
    };
    let mut schema = (*table.schema()).clone();
    if schema.is_view() {
        return Err(Error::Invalid(
            "Cannot use ALTER TABLE on a materialized view; use ALTER MATERIALIZED VIEW instead"
                .into(),
        ));
    }
    let views = views::views_of(ex, &ks, name);
    let mut altered_views: Vec<cairn_engine::schema::TableSchema> = Vec::new();
    let was_counter = create_table::has_counters(&schema);
    match &a.action {
        AlterTableAction::Add {
            if_not_exists,
            columns,
        } => {
            for c in columns {
                let ty = create_table::column_type(&c.ty, &ks, cat)?;
                user_types::check_non_frozen(&ty, Some(&c.name))?;
                if schema.column(&c.name).is_some() {
                    if *if_not_exists {
                        continue;
                    }
                    return Err(Error::Invalid(format!(
                        "Column with name '{}' already exists",
                        c.name
                    )));
                }
                if c.is_static && schema.columns_of(ColumnKind::Clustering).next().is_none() {
                    return Err(Error::Invalid(
                        "Static columns are only useful (and thus allowed) if the table has at least one clustering column".into(),
                    ));
                }
                if let Some(d) = schema
                    .dropped_columns()
                    .into_iter()
                    .rfind(|d| d.name == c.name)
                {
                    if !readd_compatible(&ty, &d.ty) {
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
                let mask = match &c.mask {
                    Some(call) => Some(masks::prepare(&c.name, &ty, call)?),
                    None => None,
                };
                // A new id, above every dropped one: the old cells stay hidden.
                let id = schema.add_column(&c.name, ty.clone(), kind, Order::Asc);
                if let Some(added) = schema.columns.iter_mut().find(|c| c.id == id) {
                    added.mask = mask;
                }
                // Views selecting every column get the new regular column too.
                if kind == ColumnKind::Regular {
                    for v in views
                        .iter()
                        .filter(|v| v.view().is_some_and(|d| d.include_all_columns))
                    {
                        let at = match altered_views.iter().position(|a| a.id == v.id) {
                            Some(i) => i,
                            None => {
                                altered_views.push((**v).clone());
                                altered_views.len() - 1
                            }
                        };
                        if let Some(av) = altered_views.get_mut(at) {
                            av.add_column(&c.name, ty.clone(), kind, Order::Asc);
                        }
                    }
                }
            }
            create_table::check_counter_columns(&schema, was_counter)?;
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
            for column in columns {
                // A non-frozen user type cannot be recorded among the dropped columns as
                // the frozen tuple its cells would read as (Cassandra's refusal).
                if let Some(c) = schema.column(column) {
                    if matches!(c.ty, CqlType::Udt(_)) {
                        return Err(Error::Invalid(format!(
                            "Cannot drop non-frozen column {column} of user type {}",
                            c.ty
                        )));
                    }
                }
                match schema.column(column).map(|c| c.kind) {
                    None if *if_exists => continue,
                    None => {
                        return Err(Error::Invalid(format!(
                            "Column {column} was not found in table '{}.{}'",
                            quote_identifier(&ks),
                            quote_identifier(name)
                        )))
                    }
                    Some(ColumnKind::PartitionKey | ColumnKind::Clustering) => {
                        return Err(Error::Invalid(format!(
                            "Cannot drop PRIMARY KEY column {column}"
                        )))
                    }
                    Some(_) => {
                        indexes::check_drop_column(cat, &schema, column)?;
                        if !views.is_empty() {
                            return Err(Error::Invalid(format!(
                                "Cannot drop column {column} on base table {name} with materialized views"
                            )));
                        }
                        schema.drop_column(column, dropped_at);
                    }
                }
            }
        }
        AlterTableAction::Mask { column, mask } => {
            let Some(c) = schema.columns.iter_mut().find(|c| &c.name == column) else {
                return Err(Error::Invalid(format!(
                    "Column with name '{column}' doesn't exist on table '{name}'"
                )));
            };
            let new = match mask {
                Some(call) => Some(masks::prepare(column, &c.ty, call)?),
                None => None,
            };
            if c.mask == new {
                // Cassandra answers an unchanged mask with no schema change.
                return Ok(Outcome::Void);
            }
            c.mask = new;
        }
        AlterTableAction::With(props) => {
            options::apply(&mut schema.options, props, options::Target::Alter)?;
            if create_table::has_counters(&schema) && schema.options.default_time_to_live > 0 {
                return Err(Error::Invalid(
                    "Cannot set default_time_to_live on a table with counters".into(),
                ));
            }
            if !views.is_empty() && schema.options.gc_grace_seconds == 0 {
                return Err(Error::Invalid(
                    "Cannot alter gc_grace_seconds of the base table of a materialized view to 0, since this value is used to TTL undelivered updates. Setting gc_grace_seconds too low might cause undelivered updates to expire before being replayed.".into(),
                ));
            }
        }
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
    altered_views.insert(0, schema);
    cat.alter_tables(&altered_views)?;
    Ok(change(ChangeKind::Updated, &ks, Some(name)))
}

/// Whether a column of type `new` may take the name of a dropped column of type `old` (a
/// type name): [`serialization_compatible`].
fn readd_compatible(new: &CqlType, old: &str) -> bool {
    if new.name() == old {
        return true;
    }
    CqlType::parse(old).is_some_and(|old| serialization_compatible(new, &old))
}

/// Cassandra's `AbstractType.isSerializationCompatibleWith`: `new` reads the cells written
/// as `old` — value-compatible, same fixed length, both multi-cell or neither; a blob only
/// over a type that is neither a collection nor a UDT (`BytesType`); a collection's cell
/// values too (`CollectionType`: a list's elements, a map's values; a set's cells hold none).
fn serialization_compatible(new: &CqlType, old: &CqlType) -> bool {
    use cairn_engine::model::types::unfrozen;
    let multi_cell = CqlType::is_non_frozen_collection;
    let collection = |t: &CqlType| {
        matches!(
            unfrozen(t),
            CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..)
        )
    };
    let fixed_len = |t: &CqlType| match unfrozen(t) {
        CqlType::Boolean | CqlType::Tinyint => Some(1),
        CqlType::Smallint => Some(2),
        CqlType::Int | CqlType::Float | CqlType::Date => Some(4),
        CqlType::Bigint
        | CqlType::Double
        | CqlType::Timestamp
        | CqlType::Time
        | CqlType::Counter => Some(8),
        CqlType::Uuid | CqlType::Timeuuid => Some(16),
        _ => None,
    };
    if matches!(unfrozen(new), CqlType::Blob) && collection(old) {
        return false;
    }
    if !(crate::values::assign::value_compatible(new, old)
        && fixed_len(new) == fixed_len(old)
        && multi_cell(new) == multi_cell(old))
    {
        return false;
    }
    match (unfrozen(new), unfrozen(old)) {
        (CqlType::List(a), CqlType::List(b)) | (CqlType::Map(_, a), CqlType::Map(_, b)) => {
            serialization_compatible(a, b)
        }
        _ => true,
    }
}
