//! Secondary indexes' schema statements: CREATE INDEX and DROP INDEX, checked as Cassandra
//! 5.0's `CreateIndexStatement` and `DropIndexStatement` check them (same order, same
//! texts), and what other statements and listings do about indexes.
//!
//! An index is a hidden materialized view of its base table (ScyllaDB's global index,
//! `cairn_engine::schema::index`): the storage proxy keeps it on every base write and builds
//! it for existing data in the background, like any view. The catalog keeps the hidden view
//! out of its listings (`Catalog::tables`); this module is where indexes are seen:
//! `system_schema.indexes`, DESCRIBE's `CREATE INDEX`, and the lookup a SELECT uses
//! ([`usable_index`]).
//!
//! Built: indexes on a regular column (any type but a counter or duration), on a frozen
//! collection (`full()`), on a clustering column, on a component of a composite partition
//! key, and on a static column (one entry per base partition: the hidden view is clustered
//! by the token and the base partition key only); `keys()`, `values()` and `entries()` of a
//! non-frozen collection (one entry per element, [`IndexKind`]: the hidden view's partition
//! key is the element — a set element or map key as its cell path, the comparable encoding
//! `element_path` makes, a list or map value as its value; an `entries()` index's key is the
//! pair); ScyllaDB's local indexes (`((pk…), v)`: keyed by the base partition key,
//! clustered by the value) on a regular or clustering column; Cassandra 5.0's
//! storage-attached indexes (`USING 'sai'`, [`IndexDef::class`]), checked as
//! `StorageAttachedIndex.validateOptions` checks them and stored as a global index (their
//! query rules are `exec/select`'s). Refused with a clear error, not built: local indexes on
//! collections and static columns, SAI's analysis options away from their defaults (Cairn
//! matches exact values), and other custom indexes (`USING 'class'`, SASI).

use super::catalog::Catalog;
use super::properties::Properties;
use super::result::{ChangeKind, Outcome, SchemaChange};
use super::schema_guard::{authorize, check_schema_keyspace, Permission, Resource};
use super::session::Session;
use super::Executor;
use crate::ast::{CreateIndex, DropIndex, IndexTarget};
use crate::error::{Error, Result};
use crate::identifier::quote_identifier;
use cairn_engine::model::clustering::Order;
use cairn_engine::model::types::CqlType;
use cairn_engine::schema::index::{
    backing_table, is_sai_class, IndexDef, IndexKind, IDX_TOKEN, IDX_VALUE,
};
use cairn_engine::schema::view::ViewDef;
use cairn_engine::schema::{ColumnDef, ColumnKind, TableSchema};
use std::sync::Arc;

/// Cassandra's class of the SASI index (disabled by default in Cassandra 5.0).
const SASI_CLASS: &str = "org.apache.cassandra.index.sasi.SASIIndex";

/// The indexes of `base` (a table of `keyspace`): their hidden views, by table name.
pub fn indexes_of(cat: &Catalog, keyspace: &str, base: &str) -> Vec<Arc<TableSchema>> {
    cat.index_tables(keyspace)
        .into_iter()
        .map(|t| t.schema())
        .filter(|s| s.view().is_some_and(|d| d.base == base))
        .collect()
}

/// The index named `name` in `keyspace` (index names are unique in a keyspace).
fn index_named(cat: &Catalog, keyspace: &str, name: &str) -> Option<Arc<TableSchema>> {
    cat.index_tables(keyspace)
        .into_iter()
        .map(|t| t.schema())
        .find(|s| s.index().is_some_and(|d| d.name == name))
}

/// The indexed column of an index's hidden view: its partition key (a global index), its
/// first clustering column (a local index).
pub fn indexed_column(index: &TableSchema) -> Option<&ColumnDef> {
    if index.index().is_some_and(|d| d.local) {
        return index.columns_of(ColumnKind::Clustering).next();
    }
    index.columns_of(ColumnKind::PartitionKey).next()
}

/// The index of `base` on column `column` keyed by `kind`, global or `local`, if there is one.
pub fn usable_index(
    cat: &Catalog,
    base: &TableSchema,
    column: &str,
    kind: IndexKind,
    local: bool,
) -> Option<Arc<TableSchema>> {
    indexes_of(cat, &base.keyspace, &base.name)
        .into_iter()
        .find(|ix| {
            ix.index()
                .is_some_and(|d| d.local == local && d.kind() == kind)
                && indexed_column(ix).is_some_and(|c| c.name == column)
        })
}

/// An index a restriction may be served by: its base column, what it is keyed by, and
/// whether it is local (usable only when the partition key is given).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Indexed {
    /// The indexed base column.
    pub column: String,
    /// What of the column the index is keyed by.
    pub kind: IndexKind,
    /// A local index.
    pub local: bool,
    /// A storage-attached index (SAI): its own query rules (`exec/select`'s `sai_serves`).
    pub sai: bool,
    /// The indexed column's type (what SAI's rules depend on).
    pub ty: CqlType,
}

/// The indexes of `base` a restriction can look up through, global ones first.
pub fn indexed_columns(cat: &Catalog, base: &TableSchema) -> Vec<Indexed> {
    let mut out: Vec<Indexed> = indexes_of(cat, &base.keyspace, &base.name)
        .iter()
        .filter_map(|ix| {
            let def = ix.index()?;
            let base_col = base.column(&indexed_column(ix)?.name)?;
            Some(Indexed {
                column: base_col.name.clone(),
                kind: def.kind(),
                local: def.local,
                sai: def.is_sai(),
                ty: base_col.ty.clone(),
            })
        })
        .collect();
    // Global indexes first: they serve without the partition key.
    out.sort_by_key(|i| i.local);
    out
}

/// A target as Cassandra writes it (`IndexTarget.asCqlString`): `v`, `keys(m)`, …
fn target_text(kind: &str, column: &str) -> String {
    match kind {
        "" => quote_identifier(column),
        k => format!("{k}({})", quote_identifier(column)),
    }
}

/// Cassandra's `IndexMetadata.generateDefaultIndexName`: non-word characters removed.
fn default_name(table: &str, column: &str) -> String {
    format!("{table}_{column}_idx")
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// Cassandra's `KeyspaceMetadata.findAvailableIndexName`.
fn available_name(cat: &Catalog, keyspace: &str, base: String) -> String {
    if index_named(cat, keyspace, &base).is_none() {
        return base;
    }
    (1..)
        .map(|i| format!("{base}_{i}"))
        .find(|n| index_named(cat, keyspace, n).is_none())
        .unwrap_or(base)
}

/// CREATE INDEX.
pub fn create_index(ex: &Executor, session: &Session, c: &CreateIndex) -> Result<Outcome> {
    let cat = ex.catalog();
    let ks = session.resolve(&c.table.keyspace)?;
    let table_name = &c.table.name;
    authorize(&ks, Permission::Alter, Resource::Table(&ks, table_name))?;
    check_schema_keyspace(&ks)?;
    // `IndexAttributes.validate`, then the custom classes.
    let sai = match &c.custom_class {
        Some(class) if class == SASI_CLASS => {
            return Err(Error::Invalid(
                "SASI indexes are disabled. Enable in cassandra.yaml to use.".into(),
            ));
        }
        Some(class) if is_sai_class(class) => true,
        Some(class) => {
            return Err(Error::Invalid(format!(
                "Custom secondary indexes (USING '{class}') are not supported by Cairn (only 'sai' / 'StorageAttachedIndex'); CREATE INDEX without USING makes a global index"
            )));
        }
        None => false,
    };
    if !sai && !c.properties.is_empty() {
        return Err(Error::Invalid(
            "Cannot specify options for a non-CUSTOM index".into(),
        ));
    }
    let props = Properties(&c.properties);
    props.check_known(&["options"])?;
    let sai_options: Vec<(String, String)> = props.map("options")?.unwrap_or_default().to_vec();
    if cat.keyspace(&ks).is_none() {
        return Err(Error::Invalid(format!("Keyspace '{ks}' doesn't exist")));
    }
    let Some(table) = cat.table(&ks, table_name) else {
        return Err(Error::Invalid(format!(
            "Table '{table_name}' doesn't exist"
        )));
    };
    let base = table.schema();
    if let Some(name) = &c.name {
        if index_named(cat, &ks, name).is_some() {
            if c.if_not_exists {
                return Ok(Outcome::Void);
            }
            return Err(Error::Invalid(format!("Index '{name}' already exists")));
        }
    }
    if super::create_table::has_counters(&base) {
        return Err(Error::Invalid(
            "Secondary indexes on counter tables aren't supported".into(),
        ));
    }
    if base.is_view() {
        return Err(Error::Invalid(
            "Secondary indexes on materialized views aren't supported".into(),
        ));
    }
    // ScyllaDB's local index: `((pk…), v)`, the whole partition key, then one column.
    let (local, target) = match c.targets.as_slice() {
        [] => {
            return Err(Error::Invalid(
                "Only CUSTOM indexes can be created without specifying a target column".into(),
            ))
        }
        [IndexTarget::PartitionKey(pk), one] if !matches!(one, IndexTarget::PartitionKey(_)) => {
            if !pk.iter().map(String::as_str).eq(base
                .columns_of(ColumnKind::PartitionKey)
                .map(|c| c.name.as_str()))
            {
                return Err(Error::Invalid(
                    "Local index definition must contain full partition key only".into(),
                ));
            }
            (true, one)
        }
        [IndexTarget::PartitionKey(_), ..] | [_, IndexTarget::PartitionKey(_), ..] => {
            return Err(Error::Invalid(
                "Local index definition must contain full partition key only".into(),
            ))
        }
        [one] => (false, one),
        many if sai => return sai_over_columns(&base, many),
        _ => {
            return Err(Error::Invalid(
                "Only CUSTOM indexes support multiple columns".into(),
            ))
        }
    };
    if sai && local {
        return Err(Error::Invalid(
            "A storage-attached index cannot be local: ((pk), v) is ScyllaDB's local index syntax, without USING".into(),
        ));
    }
    let Some((kind, column)) = target_column(target) else {
        return Err(Error::Invalid(
            "Local index definition must contain full partition key only".into(),
        ));
    };
    let (col, kind) = resolve_target(&base, column, kind)?;
    let name = match &c.name {
        Some(n) => n.clone(),
        None => available_name(cat, &ks, default_name(table_name, column)),
    };
    if name.is_empty() || !name.chars().all(|ch| ch.is_alphanumeric() || ch == '_') {
        return Err(Error::Invalid(format!("Illegal index name {name}")));
    }
    if local && col.kind == ColumnKind::PartitionKey {
        return Err(Error::Invalid(
            "Local indexes containing partition key columns are not supported".into(),
        ));
    }
    let target = if local {
        // ScyllaDB's `system_schema.indexes` target of a local index.
        let pk: Vec<String> = base
            .columns_of(ColumnKind::PartitionKey)
            .map(|c| format!("\"{}\"", c.name.replace('"', "\\\"")))
            .collect();
        format!(
            "{{\"pk\":[{}],\"ck\":[\"{}\"]}}",
            pk.join(","),
            column.replace('"', "\\\"")
        )
    } else {
        target_text(kind, column)
    };
    let mut sai_options = sai_options;
    sai_options.sort();
    let class = c.custom_class.clone().filter(|_| sai);
    let existing: Vec<IndexDef> = indexes_of(cat, &ks, table_name)
        .iter()
        .filter_map(|ix| ix.index())
        .collect();
    // `IndexMetadata.equalsWithoutName`: same kind, class, target and options.
    if let Some(same) = existing
        .iter()
        .find(|d| d.target == target && d.class == class && (!sai || d.options == sai_options))
    {
        if c.if_not_exists {
            return Ok(Outcome::Void);
        }
        return Err(Error::Invalid(format!(
            "Index {name} is a duplicate of existing index {}",
            same.name
        )));
    }
    if sai {
        // `StorageAttachedIndex.validateOptions`, in its order.
        validate_sai(col, kind, &sai_options)?;
        if existing.iter().any(|d| d.is_sai() && d.target == target) {
            return Err(Error::Invalid(format!(
                "Cannot create more than one storage-attached index on the same column: {column}"
            )));
        }
        validate_sai_type(col, kind, &sai_options)?;
    }
    // What ScyllaDB's local indexes take and Cairn does not (yet).
    if local && ((!kind.is_empty() && kind != "full") || col.kind == ColumnKind::Static) {
        return Err(Error::Invalid(format!(
            "Cairn does not support local indexes on collections or static columns (column {column})"
        )));
    }
    let hidden = backing_table(&name);
    if cat.db().table(&ks, &hidden).is_some() {
        return Err(Error::Invalid(format!(
            "Cannot create index '{name}': its table '{hidden}' would replace an existing table"
        )));
    }
    let def = IndexDef {
        name: name.clone(),
        target: target.clone(),
        local,
        class,
        options: sai_options,
    };
    let schema = if local {
        local_index_schema(&base, col, def)
    } else {
        index_schema(&base, col, IndexKind::of_target(&target), def)
    };
    cat.create_table(&schema)?;
    Ok(Outcome::SchemaChange(SchemaChange::new(
        ChangeKind::Updated,
        &ks,
        Some(table_name),
    )))
}

/// An index target's column and kind, checked (`IndexTarget.Raw.prepare`: a simple target
/// on a non-frozen collection is its values).
fn resolve_target<'s, 'k>(
    base: &'s TableSchema,
    column: &str,
    kind: &'k str,
) -> Result<(&'s ColumnDef, &'k str)> {
    let Some(col) = base.column(column) else {
        return Err(Error::Invalid(format!("Column '{column}' doesn't exist")));
    };
    let kind = if kind.is_empty() && col.ty.is_non_frozen_collection() {
        "values"
    } else {
        kind
    };
    validate_target(base, col, kind)?;
    Ok((col, kind))
}

/// `CreateIndexStatement.validateIndexTarget`, in its order and with its texts.
fn validate_target(base: &TableSchema, col: &ColumnDef, kind: &str) -> Result<()> {
    let name = &col.name;
    if col.ty.contains_duration() {
        return Err(Error::Invalid(
            match &col.ty {
                CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..) => {
                    "Secondary indexes are not supported on collections containing durations"
                }
                CqlType::Frozen(inner) => match &**inner {
                    CqlType::Tuple(_) => {
                        "Secondary indexes are not supported on tuples containing durations"
                    }
                    CqlType::Udt(_) => {
                        "Secondary indexes are not supported on UDTs containing durations"
                    }
                    _ => "Secondary indexes are not supported on collections containing durations",
                },
                CqlType::Tuple(_) => {
                    "Secondary indexes are not supported on tuples containing durations"
                }
                CqlType::Udt(_) => {
                    "Secondary indexes are not supported on UDTs containing durations"
                }
                _ => "Secondary indexes are not supported on duration columns",
            }
            .into(),
        ));
    }
    if col.kind == ColumnKind::PartitionKey
        && base.columns_of(ColumnKind::PartitionKey).count() == 1
    {
        return Err(Error::Invalid(format!(
            "Cannot create secondary index on the only partition key column {name}"
        )));
    }
    let frozen_collection = matches!(&col.ty, CqlType::Frozen(inner)
        if matches!(**inner, CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..)));
    let collection = frozen_collection || col.ty.is_non_frozen_collection();
    let shown = if kind.is_empty() { "simple" } else { kind };
    if frozen_collection && kind != "full" {
        return Err(Error::Invalid(format!(
            "Cannot create {shown}() index on frozen column {name}. Frozen collections are immutable and must be fully indexed by using the 'full({name})' modifier"
        )));
    }
    if !frozen_collection && kind == "full" {
        return Err(Error::Invalid(
            "full() indexes can only be created on frozen collections".into(),
        ));
    }
    if !collection && !kind.is_empty() {
        return Err(Error::Invalid(format!(
            "Cannot create {kind}() index on {name}. Non-collection columns only support simple indexes"
        )));
    }
    if matches!(kind, "keys" | "entries") && !matches!(col.ty, CqlType::Map(..)) {
        return Err(Error::Invalid(format!(
            "Cannot create index on {kind} of column {name} with non-map type"
        )));
    }
    if let CqlType::Udt(_) = col.ty {
        return Err(Error::Invalid(format!(
            "Cannot create index on non-frozen UDT column {name}"
        )));
    }
    Ok(())
}

/// SAI's analysis options (`NonTokenizingOptions`).
const SAI_OPTIONS: [&str; 3] = ["case_sensitive", "normalize", "ascii"];

/// Cassandra 5.0's `StorageAttachedIndex.SUPPORTED_TYPES` (frozen values are indexed whole).
fn sai_supported(ty: &CqlType) -> bool {
    !matches!(
        ty,
        CqlType::Blob
            | CqlType::Counter
            | CqlType::Duration
            | CqlType::List(_)
            | CqlType::Set(_)
            | CqlType::Map(..)
            | CqlType::Udt(_)
    )
}

/// The type of what an SAI index on `col` keyed by `kind` indexes, per component (an
/// `entries()` index's key and value: `TypeUtil.cellValueType`).
fn sai_value_types(col: &ColumnDef, kind: &str) -> Vec<CqlType> {
    match (&col.ty, kind) {
        (CqlType::Map(k, _), "keys") => vec![(**k).clone()],
        (CqlType::Map(k, v), "entries") => vec![(**k).clone(), (**v).clone()],
        (CqlType::Map(_, v), "values") | (CqlType::List(v), _) | (CqlType::Set(v), _) => {
            vec![(**v).clone()]
        }
        (ty, _) => vec![ty.clone()],
    }
}

/// The first checks of `StorageAttachedIndex.validateOptions`: option names (before the
/// index's other checks, a configuration error).
fn validate_sai(_col: &ColumnDef, _kind: &str, options: &[(String, String)]) -> Result<()> {
    let unknown: Vec<&str> = options
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| !SAI_OPTIONS.contains(k))
        .collect();
    if !unknown.is_empty() {
        return Err(Error::Configuration(format!(
            "Properties specified [{}] are not understood by StorageAttachedIndex",
            unknown.join(", ")
        )));
    }
    Ok(())
}

/// The rest of `StorageAttachedIndex.validateOptions`: the indexed type, then the analysis
/// options (refused on key columns and on types other than text). Cairn serves SAI with
/// the global index's exact-match storage, so it takes the analysis options only at their
/// defaults (`case_sensitive` true, `normalize` and `ascii` false) and refuses the rest.
fn validate_sai_type(col: &ColumnDef, kind: &str, options: &[(String, String)]) -> Result<()> {
    let types = sai_value_types(col, kind);
    if let Some(bad) = types.iter().find(|t| !sai_supported(t)) {
        return Err(Error::Invalid(format!("Unsupported type: {bad}")));
    }
    if options.is_empty() {
        return Ok(());
    }
    if matches!(col.kind, ColumnKind::PartitionKey | ColumnKind::Clustering) {
        let shown: Vec<String> = options
            .iter()
            .map(|(k, v)| format!("'{k}': '{v}'"))
            .collect();
        return Err(Error::Invalid(format!(
            "Analysis options are not supported on primary key columns, but found {{{}}}",
            shown.join(", ")
        )));
    }
    if let [ty] = types.as_slice() {
        if !matches!(ty, CqlType::Text | CqlType::Ascii) {
            return Err(Error::Invalid(format!("CQL type {ty} cannot be analyzed.")));
        }
    }
    for (k, v) in options {
        let default = k == "case_sensitive";
        match v.to_lowercase().as_str() {
            "true" | "false" if (v.to_lowercase() == "true") == default => {}
            "true" | "false" => {
                return Err(Error::Invalid(format!(
                    "Cairn does not support the SAI analysis option '{k}' = '{v}' (it serves exact matches only: case_sensitive = true, normalize = false, ascii = false)"
                )))
            }
            _ => {
                return Err(Error::Invalid(format!(
                    "Invalid value '{v}' for the SAI option '{k}': true or false"
                )))
            }
        }
    }
    Ok(())
}

/// A target's function (`""` for a plain column) and column; `None` for a local index's
/// partition key.
fn target_column(target: &IndexTarget) -> Option<(&'static str, &String)> {
    Some(match target {
        IndexTarget::Column(n) => ("", n),
        IndexTarget::Keys(n) => ("keys", n),
        IndexTarget::Values(n) => ("values", n),
        IndexTarget::Entries(n) => ("entries", n),
        IndexTarget::Full(n) => ("full", n),
        IndexTarget::PartitionKey(_) => return None,
    })
}

/// `CREATE INDEX … USING 'sai'` over several columns: each target checked, then refused
/// (`StorageAttachedIndex.validateOptions`).
fn sai_over_columns(base: &TableSchema, targets: &[IndexTarget]) -> Result<Outcome> {
    let mut shown = Vec::new();
    let mut seen = Vec::new();
    for t in targets {
        let Some((kind, column)) = target_column(t) else {
            return Err(Error::Invalid(
                "A storage-attached index cannot be local: ((pk), v) is ScyllaDB's local index syntax, without USING".into(),
            ));
        };
        if seen.contains(&column) {
            return Err(Error::Invalid(format!(
                "Duplicate column '{column}' in index target list"
            )));
        }
        seen.push(column);
        let (_, kind) = resolve_target(base, column, kind)?;
        shown.push(target_text(kind, column));
    }
    Err(Error::Invalid(format!(
        "A storage-attached index cannot be created over multiple columns: {}",
        shown.join(", ")
    )))
}

/// The hidden view of a global index on `col` keyed by `kind`: keyed by the indexed value
/// (the element of a collection: see the module doc), clustered by the base partition key's
/// token, then the base key's other columns (the partition key only for a static column).
fn index_schema(
    base: &TableSchema,
    col: &ColumnDef,
    kind: IndexKind,
    def: IndexDef,
) -> TableSchema {
    let mut s = TableSchema::new(&base.keyspace, &backing_table(&def.name));
    // A set element or map key is its cell path (bytes in the element's order).
    let (element, value) = match (&col.ty, kind) {
        (CqlType::Map(..), IndexKind::Keys) | (CqlType::Set(_), IndexKind::Values) => {
            (CqlType::Blob, None)
        }
        (CqlType::Map(_, v), IndexKind::Values) | (CqlType::List(v), IndexKind::Values) => {
            ((**v).clone(), None)
        }
        (CqlType::Map(_, v), IndexKind::Entries) => (CqlType::Blob, Some((**v).clone())),
        (ty, _) => (ty.clone(), None),
    };
    s.add_column(&col.name, element, ColumnKind::PartitionKey, Order::Asc);
    if let Some(v) = value {
        s.add_column(IDX_VALUE, v, ColumnKind::PartitionKey, Order::Asc);
    }
    s.add_column(
        IDX_TOKEN,
        CqlType::Bigint,
        ColumnKind::Clustering,
        Order::Asc,
    );
    let kinds: &[ColumnKind] = if col.kind == ColumnKind::Static {
        &[ColumnKind::PartitionKey]
    } else {
        &[ColumnKind::PartitionKey, ColumnKind::Clustering]
    };
    for kind in kinds {
        for c in base.columns_of(*kind).filter(|c| c.id != col.id) {
            s.add_column(&c.name, c.ty.clone(), ColumnKind::Clustering, Order::Asc);
        }
    }
    mark_index(&mut s, base, col, def);
    s
}

/// The hidden view of a local index on `col`: keyed by the base partition key, clustered by
/// the indexed value, then the base clustering columns.
fn local_index_schema(base: &TableSchema, col: &ColumnDef, def: IndexDef) -> TableSchema {
    let mut s = TableSchema::new(&base.keyspace, &backing_table(&def.name));
    for c in base.columns_of(ColumnKind::PartitionKey) {
        s.add_column(&c.name, c.ty.clone(), ColumnKind::PartitionKey, Order::Asc);
    }
    s.add_column(
        &col.name,
        col.ty.clone(),
        ColumnKind::Clustering,
        Order::Asc,
    );
    for c in base
        .columns_of(ColumnKind::Clustering)
        .filter(|c| c.id != col.id)
    {
        s.add_column(&c.name, c.ty.clone(), ColumnKind::Clustering, Order::Asc);
    }
    mark_index(&mut s, base, col, def);
    s
}

/// Makes `s` the hidden view of index `def` on `col` of `base`: a view of `base` whose
/// rows exist while `col` is set, carrying the index's definition.
fn mark_index(s: &mut TableSchema, base: &TableSchema, col: &ColumnDef, def: IndexDef) {
    ViewDef {
        base: base.name.clone(),
        include_all_columns: false,
        where_clause: format!("{} IS NOT NULL", quote_identifier(&col.name)),
        not_null: vec![col.name.clone()],
    }
    .store(&mut s.options);
    def.store(&mut s.options);
    s.set_view_base(base);
}

/// DROP INDEX.
pub fn drop_index(ex: &Executor, session: &Session, d: &DropIndex) -> Result<Outcome> {
    let cat = ex.catalog();
    let ks = session.resolve(&d.name.keyspace)?;
    check_schema_keyspace(&ks)?;
    let Some(index) = index_named(cat, &ks, &d.name.name) else {
        if d.if_exists {
            return Ok(Outcome::Void);
        }
        // Cassandra's text, stray quote included.
        return Err(Error::Invalid(format!(
            "Index '{ks}.{}' doesn't exist'",
            d.name.name
        )));
    };
    let base = index.view().map(|v| v.base).unwrap_or_default();
    authorize(&ks, Permission::Alter, Resource::Table(&ks, &base))?;
    cat.drop_table(&ks, &index.name)?;
    Ok(Outcome::SchemaChange(SchemaChange::new(
        ChangeKind::Updated,
        &ks,
        Some(&base),
    )))
}

/// The hidden views DROP TABLE drops with `base`.
pub fn dropped_with(cat: &Catalog, base: &TableSchema) -> Vec<String> {
    indexes_of(cat, &base.keyspace, &base.name)
        .iter()
        .map(|s| s.name.clone())
        .collect()
}

/// ALTER TABLE … DROP `column`: refused while an index uses it (Cassandra's text).
pub fn check_drop_column(cat: &Catalog, base: &TableSchema, column: &str) -> Result<()> {
    let names: Vec<String> = indexes_of(cat, &base.keyspace, &base.name)
        .iter()
        .filter(|ix| indexed_column(ix).is_some_and(|c| c.name == column))
        .filter_map(|ix| ix.index().map(|d| d.name))
        .collect();
    if names.is_empty() {
        return Ok(());
    }
    Err(Error::Invalid(format!(
        "Cannot drop column {column} because it has dependent secondary indexes ({})",
        names.join(",")
    )))
}

/// `CREATE INDEX name ON ks.t (target);` as Cassandra's DESCRIBE prints it.
pub fn index_statement(index: &TableSchema) -> Option<(String, String)> {
    let def = index.index()?;
    let view = index.view()?;
    let target = if def.local {
        let pk: Vec<String> = index
            .columns_of(ColumnKind::PartitionKey)
            .map(|c| quote_identifier(&c.name))
            .collect();
        format!(
            "({}), {}",
            pk.join(", "),
            quote_identifier(&indexed_column(index)?.name)
        )
    } else {
        def.target.clone()
    };
    let head = format!(
        "INDEX {} ON {}.{} ({})",
        quote_identifier(&def.name),
        quote_identifier(&index.keyspace),
        quote_identifier(&view.base),
        target
    );
    let text = match &def.class {
        // Cassandra's `IndexMetadata.toCqlString` of a custom index.
        Some(class) if def.options.is_empty() => {
            format!(
                "CREATE CUSTOM {head} USING '{}';",
                class.replace('\'', "''")
            )
        }
        Some(class) => {
            let opts: Vec<String> = def
                .options
                .iter()
                .map(|(k, v)| format!("'{k}': '{v}'"))
                .collect();
            format!(
                "CREATE CUSTOM {head} USING '{}' WITH OPTIONS = {{{}}};",
                class.replace('\'', "''"),
                opts.join(", ")
            )
        }
        None => format!("CREATE {head};"),
    };
    Some((def.name.clone(), text))
}

/// An index's options as `system_schema.indexes` shows them, in name order: `target`, and
/// for a custom (SAI) index `class_name` as written and its own options.
fn schema_options(def: &IndexDef) -> Vec<(String, String)> {
    let mut out = vec![("target".to_string(), def.target.clone())];
    if let Some(class) = &def.class {
        out.push(("class_name".into(), class.clone()));
        out.extend(def.options.iter().cloned());
    }
    out.sort();
    out
}

/// A row of `system_schema.indexes`: keyspace, table, index name, kind, options.
pub type IndexRow = (String, String, String, &'static str, Vec<(String, String)>);

/// The rows of `system_schema.indexes`.
pub fn schema_rows(cat: &Catalog) -> Vec<IndexRow> {
    let mut out = Vec::new();
    for k in cat.keyspaces() {
        for t in cat.index_tables(&k.name) {
            let s = t.schema();
            if let (Some(def), Some(view)) = (s.index(), s.view()) {
                let kind = if def.class.is_some() {
                    "CUSTOM"
                } else {
                    "COMPOSITES"
                };
                let options = schema_options(&def);
                out.push((k.name.clone(), view.base, def.name, kind, options));
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names_drop_non_word_characters() {
        assert_eq!(default_name("t", "v"), "t_v_idx");
        assert_eq!(default_name("T b", "c-d"), "Tb_cd_idx");
    }

    #[test]
    fn targets_quote_as_cql() {
        assert_eq!(target_text("", "v"), "v");
        assert_eq!(target_text("", "V"), "\"V\"");
        assert_eq!(target_text("full", "fl"), "full(fl)");
    }

    #[test]
    fn hidden_view_is_keyed_by_value_then_token_then_base_key() {
        let mut base = TableSchema::new("ks", "t");
        base.add_column("a", CqlType::Int, ColumnKind::PartitionKey, Order::Asc);
        base.add_column("b", CqlType::Int, ColumnKind::PartitionKey, Order::Asc);
        base.add_column("c", CqlType::Text, ColumnKind::Clustering, Order::Desc);
        base.add_column("v", CqlType::Int, ColumnKind::Regular, Order::Asc);
        let Some(col) = base.column("b").cloned() else {
            panic!("the table has column b");
        };
        let def = IndexDef {
            name: "t_b_idx".into(),
            target: "b".into(),
            local: false,
            class: None,
            options: Vec::new(),
        };
        let ix = index_schema(&base, &col, IndexKind::Simple, def);
        let names = |k| ix.columns_of(k).map(|c| c.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(ColumnKind::PartitionKey), ["b"]);
        assert_eq!(names(ColumnKind::Clustering), ["idx_token", "a", "c"]);
        assert_eq!(names(ColumnKind::Regular), Vec::<String>::new());
        assert!(ix.is_index() && ix.is_view());
        assert_eq!(ix.view().map(|v| v.base), Some("t".into()));
    }
}
