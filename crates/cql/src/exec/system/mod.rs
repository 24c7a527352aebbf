//! The tables of the system keyspaces, built from live metadata at each read.
//!
//! Drivers learn the cluster from `system.local` / `system.peers(_v2)`, the schema from
//! `system_schema.*` and, when the server says it is Cassandra 4 or later, the virtual
//! keyspaces from `system_virtual_schema.*`; cqlsh's DESCRIBE uses the drivers' metadata. So
//! the tables, their columns, key layouts and spellings are Cassandra's. Nothing here is
//! canned: every row comes from the catalog, the engine, the configuration or the node's
//! identity. One file per keyspace:
//! - [`local`]: `system` (the node, its peers, size estimates, compaction history);
//! - [`schema`]: `system_schema` (keyspaces, tables, columns, …);
//! - [`virtual_schema`]: `system_virtual_schema`, Cassandra 4's description of the virtual
//!   keyspaces (`system_views` and itself), which lists them as Cassandra does;
//! - [`views`]: `system_views` (settings, sstable tasks, disk usage, …);
//! - [`auth`]: `system_auth` (`roles`, `role_members`, `role_permissions`), the role
//!   store's, as the schema log holds them.
//!
//! Invariants: [`VIRTUAL_TABLES`] is the one list of these tables and their key layouts; a
//! table's columns list its partition-key columns, then its clustering columns, then the
//! rest, and every row holds one value per column in that order. All of them are read-only:
//! `system_views` and `system_virtual_schema` refuse writes with Cassandra's error for
//! virtual tables ([`refuse_virtual_write`]), `system` and `system_schema` as Cairn's own
//! system keyspaces.

mod auth;
mod filter;
mod local;
mod schema;
mod views;
mod virtual_schema;

use super::result::{ColumnSpec, ResultSet};
use super::session::{QueryParams, Session};
use super::Executor;
use crate::ast::{Select, SelectorExpr};
use crate::error::{Error, Result};
use bytes::Bytes;
use cairn_engine::model::clustering::Order;
use cairn_engine::model::types::CqlType;
use cairn_engine::schema::{ColumnKind, TableSchema};
use std::sync::Arc;

/// One table of the system keyspaces and its key layout; its columns come from the
/// keyspace's file, key columns first.
#[derive(Debug, Clone, Copy)]
pub struct TableDef {
    /// Keyspace.
    pub keyspace: &'static str,
    /// Table.
    pub name: &'static str,
    /// Partition-key column count.
    pub partition_key: usize,
    /// Clustering column count.
    pub clustering: usize,
    /// The table's comment (shown by `system_virtual_schema.tables` and DESCRIBE).
    pub comment: &'static str,
}

const fn def(
    keyspace: &'static str,
    name: &'static str,
    partition_key: usize,
    clustering: usize,
    comment: &'static str,
) -> TableDef {
    TableDef {
        keyspace,
        name,
        partition_key,
        clustering,
        comment,
    }
}

/// Cassandra's virtual keyspaces: not in `system_schema`, described by
/// `system_virtual_schema`, and read-only.
pub const VIRTUAL_KEYSPACES: [&str; 2] = ["system_views", "system_virtual_schema"];

/// Every table served here.
pub const VIRTUAL_TABLES: &[TableDef] = &[
    def("system", "local", 1, 0, "information about the local node"),
    def(
        "system",
        "peers",
        1,
        0,
        "information about known peers in the cluster",
    ),
    def(
        "system",
        "peers_v2",
        1,
        1,
        "information about known peers in the cluster",
    ),
    def(
        "system",
        "size_estimates",
        1,
        3,
        "per-table primary range size estimates",
    ),
    def("system", "built_views", 1, 1, "built views"),
    def("system", "IndexInfo", 1, 1, "built column indexes"),
    def(
        "system",
        "view_builds_in_progress",
        1,
        3,
        "views builds current progress",
    ),
    def(
        "system",
        "compaction_history",
        1,
        0,
        "week-long compaction history",
    ),
    def(
        "system_distributed",
        "view_build_status",
        2,
        1,
        "Materialized View build status",
    ),
    def("system_schema", "keyspaces", 1, 0, "keyspace definitions"),
    def("system_schema", "tables", 1, 1, "table definitions"),
    def("system_schema", "columns", 1, 2, "column definitions"),
    def(
        "system_schema",
        "dropped_columns",
        1,
        2,
        "dropped column registry",
    ),
    def(
        "system_schema",
        "column_masks",
        1,
        2,
        "column dynamic data masks",
    ),
    def(
        "system_schema",
        "types",
        1,
        1,
        "user defined type definitions",
    ),
    def(
        "system_schema",
        "functions",
        1,
        1,
        "user defined function definitions",
    ),
    def(
        "system_schema",
        "aggregates",
        1,
        1,
        "user defined aggregate definitions",
    ),
    def(
        "system_schema",
        "indexes",
        1,
        2,
        "secondary index definitions",
    ),
    def("system_schema", "views", 1, 1, "view definitions"),
    def("system_schema", "triggers", 1, 2, "trigger definitions"),
    def(
        "system_virtual_schema",
        "keyspaces",
        1,
        0,
        "virtual keyspace definitions",
    ),
    def(
        "system_virtual_schema",
        "tables",
        1,
        1,
        "virtual table definitions",
    ),
    def(
        "system_virtual_schema",
        "columns",
        1,
        2,
        "virtual column definitions",
    ),
    def("system_auth", "roles", 1, 0, "role definitions"),
    def(
        "system_auth",
        "role_members",
        1,
        1,
        "role memberships lookup table",
    ),
    def(
        "system_auth",
        "role_permissions",
        1,
        1,
        "permissions granted to db roles",
    ),
    def("system_views", "settings", 1, 0, "current settings"),
    def(
        "system_views",
        "sstable_tasks",
        1,
        2,
        "current sstable tasks",
    ),
    def(
        "system_views",
        "disk_usage",
        1,
        1,
        "disk usage of live sstables, in MiB",
    ),
    def(
        "system_views",
        "max_partition_size",
        1,
        1,
        "largest partition of each table, in MiB",
    ),
];

/// Whether `ks` is one of Cassandra's virtual keyspaces.
pub fn is_virtual_keyspace(ks: &str) -> bool {
    VIRTUAL_KEYSPACES.contains(&ks)
}

/// Whether writes into the keyspace's tables are refused by [`refuse_virtual_write`]: the
/// virtual keyspaces and `system_auth` (its tables show the roles of the schema log).
pub fn is_read_only_keyspace(ks: &str) -> bool {
    is_virtual_keyspace(ks) || ks == "system_auth"
}

/// Whether the keyspace's tables are served here.
fn served(ks: &str) -> bool {
    matches!(
        ks,
        "system" | "system_schema" | "system_auth" | "system_distributed"
    ) || is_virtual_keyspace(ks)
}

/// Whether table `name` of `system` or `system_distributed` belongs to `ks` (both are
/// served by `local.rs`).
fn local_serves(ks: &str, name: &str) -> bool {
    (ks == "system_distributed") == (name == "view_build_status")
}

fn find(ks: &str, name: &str) -> Option<&'static TableDef> {
    VIRTUAL_TABLES
        .iter()
        .find(|t| t.keyspace == ks && t.name == name)
}

/// The columns of a table served here (empty for an unknown one).
fn columns_of(ks: &str, name: &str) -> Vec<(&'static str, CqlType)> {
    match ks {
        // `system_distributed`'s one table is served beside `system`'s.
        "system" | "system_distributed" if local_serves(ks, name) => local::columns(name),
        "system_schema" => schema::columns(name),
        "system_auth" => auth::columns(name),
        "system_virtual_schema" => virtual_schema::columns(name),
        "system_views" => views::columns(name),
        _ => Vec::new(),
    }
}

/// A table served here as a schema (its key structure, its comment, default options),
/// e.g. to describe its bind markers or list it in `system_schema`.
pub fn virtual_schema(ks: &str, name: &str) -> Option<TableSchema> {
    let t = find(ks, name)?;
    let mut sc = TableSchema::new(t.keyspace, t.name);
    let (a, b) = cairn_engine::model::token::murmur3_x64_128(format!("{ks}.{name}").as_bytes(), 0);
    sc.id = (u128::from(a) << 64) | u128::from(b);
    for (i, (col, ty)) in columns_of(ks, name).into_iter().enumerate() {
        let kind = if i < t.partition_key {
            ColumnKind::PartitionKey
        } else if i < t.partition_key + t.clustering {
            ColumnKind::Clustering
        } else {
            ColumnKind::Regular
        };
        sc.add_column(col, ty, kind, Order::Asc);
    }
    sc.options.comment = t.comment.to_string();
    Some(sc)
}

/// The schemas of every table of keyspace `ks` served here.
fn schemas_of(ks: &str) -> impl Iterator<Item = Arc<TableSchema>> + '_ {
    VIRTUAL_TABLES
        .iter()
        .filter(move |t| t.keyspace == ks)
        .filter_map(|t| virtual_schema(t.keyspace, t.name).map(Arc::new))
}

/// Refuses a write into a table of a virtual keyspace with Cassandra's error (virtual
/// tables are read-only); other keyspaces pass.
pub fn refuse_virtual_write(ks: &str, name: &str) -> Result<()> {
    if ks == "system_auth" && find(ks, name).is_some() {
        // Cassandra lets a superuser write these tables; here they show the schema log's
        // roles, which only the role statements change.
        return Err(Error::Invalid(format!(
            "Modification is not supported by table {ks}.{name}: it shows the roles of the \
             cluster's schema log; use CREATE / ALTER / DROP ROLE and GRANT / REVOKE"
        )));
    }
    if !is_virtual_keyspace(ks) {
        return Ok(());
    }
    match find(ks, name) {
        Some(_) => Err(Error::Invalid(format!(
            "Modification is not supported by table {ks}.{name}"
        ))),
        None => Err(Error::Invalid(format!("unconfigured table {name}"))),
    }
}

/// Refuses TRUNCATE of a table of a virtual keyspace with Cassandra's error; other keyspaces
/// pass (DDL refuses Cairn's own system keyspaces).
pub fn refuse_truncate(ks: &str, name: &str) -> Result<()> {
    if is_virtual_keyspace(ks) {
        return match find(ks, name) {
            Some(_) => Err(Error::Invalid(format!(
                "Truncation is not supported by table {ks}.{name}"
            ))),
            None => Err(Error::Invalid(format!("unconfigured table {name}"))),
        };
    }
    Ok(())
}

/// A virtual table's full contents.
pub struct Virtual {
    /// Columns.
    pub specs: Vec<ColumnSpec>,
    /// Rows.
    pub rows: Vec<Row>,
}

/// One row: a serialized value (or null) per column.
pub type Row = Vec<Option<Bytes>>;

/// What the node says about itself.
#[derive(Debug, Clone)]
pub struct NodeInfo {
    /// `cluster_name`.
    pub cluster_name: String,
    /// Host id (stable across restarts).
    pub host_id: [u8; 16],
    /// Listen / broadcast address (IPv4 or IPv6 bytes).
    pub listen_address: Vec<u8>,
    /// RPC (native transport) address.
    pub rpc_address: Vec<u8>,
    /// Native transport port.
    pub native_port: u16,
    /// Internode port (`storage_port`: the same on every node of the ring).
    pub storage_port: u16,
    /// Tokens this node owns.
    pub tokens: Vec<String>,
    /// Data center.
    pub data_center: String,
    /// Rack.
    pub rack: String,
    /// Release version shown to drivers and cqlsh.
    pub release_version: String,
    /// CQL version.
    pub cql_version: String,
    /// The node's configuration as `system_views.settings` shows it: (name, value), sorted
    /// by name. Settings that can change while the node runs are read live instead.
    pub settings: Vec<(String, String)>,
    /// The cluster as this node sees it (`system.peers`); `None` for an executor without
    /// one (tests), which has no peers.
    pub cluster: Option<cairn_cluster::membership::ClusterView>,
}

impl Default for NodeInfo {
    fn default() -> Self {
        NodeInfo {
            cluster_name: "Test Cluster".into(),
            host_id: [0x42; 16],
            listen_address: vec![127, 0, 0, 1],
            rpc_address: vec![127, 0, 0, 1],
            native_port: 9042,
            storage_port: 7000,
            tokens: vec!["0".into()],
            data_center: "datacenter1".into(),
            rack: "rack1".into(),
            // Cassandra 4: cqlsh then sends DESCRIBE to the server (see `describe`), and
            // drivers read `system_virtual_schema` and `system.peers_v2`.
            release_version: "4.0.11".into(),
            cql_version: "3.4.5".into(),
            settings: Vec::new(),
            cluster: None,
        }
    }
}

/// The table `ks.name`, if its keyspace is served here; an unknown table of such a keyspace
/// is Cassandra's `unconfigured table` error.
pub fn table(ex: &Executor, _session: &Session, ks: &str, name: &str) -> Result<Option<Virtual>> {
    if !served(ks) {
        return Ok(None);
    }
    let rows = match ks {
        "system" | "system_distributed" if local_serves(ks, name) => local::rows(ex, name)?,
        "system" | "system_distributed" => None,
        "system_schema" => schema::rows(ex, name)?,
        // The roles as the schema log holds them (see `auth`): served, not stored, so a
        // SELECT always shows what every node applies.
        "system_auth" => auth::rows(ex.roles(), name),
        "system_virtual_schema" => virtual_schema::rows(name),
        _ => views::rows(ex, name)?,
    };
    let Some(rows) = rows else {
        return Err(Error::Invalid(format!("unconfigured table {name}")));
    };
    Ok(Some(Virtual {
        specs: specs(ks, name, &columns_of(ks, name)),
        rows,
    }))
}

fn specs(ks: &str, table: &str, cols: &[(&str, CqlType)]) -> Vec<ColumnSpec> {
    cols.iter()
        .map(|(n, t)| ColumnSpec {
            keyspace: ks.into(),
            table: table.into(),
            name: (*n).into(),
            ty: t.clone(),
        })
        .collect()
}

// Value encoders (native protocol v4 serialization) shared by the keyspace files.

fn text(s: &str) -> Option<Bytes> {
    Some(Bytes::copy_from_slice(s.as_bytes()))
}

fn int(v: i32) -> Option<Bytes> {
    Some(Bytes::copy_from_slice(&v.to_be_bytes()))
}

fn bigint(v: i64) -> Option<Bytes> {
    Some(Bytes::copy_from_slice(&v.to_be_bytes()))
}

fn double(v: f64) -> Option<Bytes> {
    Some(Bytes::copy_from_slice(&v.to_be_bytes()))
}

fn boolean(v: bool) -> Option<Bytes> {
    Some(Bytes::from(vec![u8::from(v)]))
}

fn uuid(v: &[u8; 16]) -> Option<Bytes> {
    Some(Bytes::copy_from_slice(v))
}

fn inet(v: &[u8]) -> Option<Bytes> {
    Some(Bytes::copy_from_slice(v))
}

fn text_map(entries: &[(String, String)]) -> Option<Bytes> {
    Some(super::catalog::encode_text_map(entries))
}

fn text_set(items: &[String]) -> Option<Bytes> {
    let mut out = Vec::new();
    out.extend_from_slice(&(items.len() as i32).to_be_bytes());
    for i in items {
        out.extend_from_slice(&(i.len() as i32).to_be_bytes());
        out.extend_from_slice(i.as_bytes());
    }
    Some(Bytes::from(out))
}

fn frozen(t: CqlType) -> CqlType {
    CqlType::Frozen(Box::new(t))
}

fn map_tt() -> CqlType {
    frozen(CqlType::Map(
        Box::new(CqlType::Text),
        Box::new(CqlType::Text),
    ))
}

fn set_text() -> CqlType {
    CqlType::Set(Box::new(CqlType::Text))
}

/// A SELECT over a virtual table: `=`/`IN` restrictions, a column selection or `*`,
/// `count(*)`, LIMIT. No paging: these tables are small.
pub fn select(v: Virtual, s: &Select, params: &QueryParams) -> Result<ResultSet> {
    let mut rows = Vec::new();
    for row in v.rows {
        if filter::matches(&v.specs, &row, &s.where_clause, params)? {
            rows.push(row);
        }
    }
    let Some(sels) = &s.selectors else {
        return Ok(ResultSet {
            columns: v.specs.into(),
            rows,
            paging_state: None,
        });
    };
    let mut columns = Vec::new();
    let mut picks: Vec<Option<usize>> = Vec::new();
    for sel in sels {
        match &sel.expr {
            SelectorExpr::Column(n) => {
                let i = v
                    .specs
                    .iter()
                    .position(|c| c.name == *n)
                    .ok_or_else(|| Error::Invalid(format!("Undefined column name {n}")))?;
                let mut spec = v.specs[i].clone();
                if let Some(a) = &sel.alias {
                    spec.name = a.clone();
                }
                columns.push(spec);
                picks.push(Some(i));
            }
            SelectorExpr::CountAll => {
                let spec = ColumnSpec {
                    name: sel.alias.clone().unwrap_or_else(|| "count".into()),
                    ty: CqlType::Bigint,
                    ..v.specs.first().cloned().unwrap_or(ColumnSpec {
                        keyspace: String::new(),
                        table: String::new(),
                        name: String::new(),
                        ty: CqlType::Bigint,
                    })
                };
                columns.push(spec);
                picks.push(None);
            }
            _ => {
                return Err(Error::Invalid(
                    "Only columns and count(*) can be selected from system tables".into(),
                ))
            }
        }
    }
    if picks.iter().any(Option::is_none) {
        let n = rows.len() as i64;
        let row = picks
            .iter()
            .map(|p| match p {
                None => bigint(n),
                Some(i) => rows.first().and_then(|r| r.get(*i).cloned().flatten()),
            })
            .collect();
        return Ok(ResultSet {
            columns: columns.into(),
            rows: vec![row],
            paging_state: None,
        });
    }
    let rows = rows
        .into_iter()
        .map(|r| {
            picks
                .iter()
                .map(|p| p.and_then(|i| r.get(i).cloned().flatten()))
                .collect()
        })
        .collect();
    Ok(ResultSet {
        columns: columns.into(),
        rows,
        paging_state: None,
    })
}
