//! The virtual `system` and `system_schema` tables, built from live metadata at each read.
//!
//! Drivers learn the cluster from these (`system.local`, `system.peers`) and the schema from
//! `system_schema.*`; cqlsh's DESCRIBE uses the drivers' metadata, so the columns and their
//! spellings are Cassandra 4's. Nothing here is canned: every row comes from the catalog,
//! the engine or the node's identity.

use super::catalog::{encode_text_map, now_micros};
use super::options;
use super::select::virtual_matches;
use super::{ColumnSpec, Executor, QueryParams, ResultSet, Session};
use crate::ast::{Select, SelectorExpr};
use crate::error::{Error, Result};
use bytes::Bytes;
use cairn_engine::model::clustering::Order;
use cairn_engine::model::types::CqlType;
use cairn_engine::schema::ColumnKind;

/// Every virtual table with its key structure: (keyspace, name, partition-key column count,
/// clustering column count); the columns come from `columns_of`, key columns first.
pub const VIRTUAL_TABLES: [(&str, &str, usize, usize); 14] = [
    ("system", "local", 1, 0),
    ("system", "peers", 1, 0),
    ("system_schema", "keyspaces", 1, 0),
    ("system_schema", "tables", 1, 1),
    ("system_schema", "columns", 1, 2),
    ("system_schema", "dropped_columns", 1, 2),
    ("system_schema", "types", 1, 1),
    ("system_schema", "functions", 1, 1),
    ("system_schema", "aggregates", 1, 1),
    ("system_schema", "indexes", 1, 2),
    ("system_schema", "views", 1, 1),
    ("system_schema", "triggers", 1, 2),
    ("system", "size_estimates", 1, 3),
    ("system", "compaction_history", 1, 0),
];

/// The table-option columns `system_schema.tables` and `.views` share (`flags` only for
/// tables), in the order tables list them.
fn table_option_columns(with_flags: bool) -> Vec<(&'static str, CqlType)> {
    let mut cols = vec![
        ("bloom_filter_fp_chance", CqlType::Double),
        ("caching", map_tt()),
        ("comment", CqlType::Text),
        ("compaction", map_tt()),
        ("compression", map_tt()),
        ("crc_check_chance", CqlType::Double),
        ("dclocal_read_repair_chance", CqlType::Double),
        ("default_time_to_live", CqlType::Int),
        (
            "extensions",
            frozen(CqlType::Map(
                Box::new(CqlType::Text),
                Box::new(CqlType::Blob),
            )),
        ),
    ];
    if with_flags {
        cols.push(("flags", frozen(CqlType::Set(Box::new(CqlType::Text)))));
    }
    cols.extend([
        ("gc_grace_seconds", CqlType::Int),
        ("id", CqlType::Uuid),
        ("max_index_interval", CqlType::Int),
        ("memtable_flush_period_in_ms", CqlType::Int),
        ("min_index_interval", CqlType::Int),
        ("read_repair_chance", CqlType::Double),
        ("speculative_retry", CqlType::Text),
    ]);
    cols
}

/// The columns of a virtual table (empty for an unknown one).
fn columns_of(ks: &str, name: &str) -> Vec<(&'static str, CqlType)> {
    match (ks, name) {
        ("system", "local") => vec![
            ("key", CqlType::Text),
            ("bootstrapped", CqlType::Text),
            ("broadcast_address", CqlType::Inet),
            ("broadcast_port", CqlType::Int),
            ("cluster_name", CqlType::Text),
            ("cql_version", CqlType::Text),
            ("data_center", CqlType::Text),
            ("gossip_generation", CqlType::Int),
            ("host_id", CqlType::Uuid),
            ("listen_address", CqlType::Inet),
            ("listen_port", CqlType::Int),
            ("native_protocol_version", CqlType::Text),
            ("partitioner", CqlType::Text),
            ("rack", CqlType::Text),
            ("release_version", CqlType::Text),
            ("rpc_address", CqlType::Inet),
            ("rpc_port", CqlType::Int),
            ("schema_version", CqlType::Uuid),
            ("tokens", frozen(CqlType::Set(Box::new(CqlType::Text)))),
        ],
        ("system", "peers") => vec![
            ("peer", CqlType::Inet),
            ("data_center", CqlType::Text),
            ("host_id", CqlType::Uuid),
            ("preferred_ip", CqlType::Inet),
            ("rack", CqlType::Text),
            ("release_version", CqlType::Text),
            ("rpc_address", CqlType::Inet),
            ("schema_version", CqlType::Uuid),
            ("tokens", frozen(CqlType::Set(Box::new(CqlType::Text)))),
        ],
        ("system_schema", "keyspaces") => vec![
            ("keyspace_name", CqlType::Text),
            ("durable_writes", CqlType::Boolean),
            ("replication", map_tt()),
        ],
        ("system_schema", "tables") => {
            let mut cols = vec![
                ("keyspace_name", CqlType::Text),
                ("table_name", CqlType::Text),
            ];
            cols.extend(table_option_columns(true));
            cols
        }
        ("system_schema", "columns") => vec![
            ("keyspace_name", CqlType::Text),
            ("table_name", CqlType::Text),
            ("column_name", CqlType::Text),
            ("clustering_order", CqlType::Text),
            ("column_name_bytes", CqlType::Blob),
            ("kind", CqlType::Text),
            ("position", CqlType::Int),
            ("type", CqlType::Text),
        ],
        ("system_schema", "dropped_columns") => vec![
            ("keyspace_name", CqlType::Text),
            ("table_name", CqlType::Text),
            ("column_name", CqlType::Text),
            ("dropped_time", CqlType::Timestamp),
            ("kind", CqlType::Text),
            ("type", CqlType::Text),
        ],
        ("system_schema", "types") => vec![
            ("keyspace_name", CqlType::Text),
            ("type_name", CqlType::Text),
            (
                "field_names",
                frozen(CqlType::List(Box::new(CqlType::Text))),
            ),
            (
                "field_types",
                frozen(CqlType::List(Box::new(CqlType::Text))),
            ),
        ],
        ("system_schema", "functions") => vec![
            ("keyspace_name", CqlType::Text),
            ("function_name", CqlType::Text),
            (
                "argument_types",
                frozen(CqlType::List(Box::new(CqlType::Text))),
            ),
            (
                "argument_names",
                frozen(CqlType::List(Box::new(CqlType::Text))),
            ),
            ("body", CqlType::Text),
            ("called_on_null_input", CqlType::Boolean),
            ("language", CqlType::Text),
            ("return_type", CqlType::Text),
        ],
        ("system_schema", "aggregates") => vec![
            ("keyspace_name", CqlType::Text),
            ("aggregate_name", CqlType::Text),
            (
                "argument_types",
                frozen(CqlType::List(Box::new(CqlType::Text))),
            ),
            ("final_func", CqlType::Text),
            ("initcond", CqlType::Text),
            ("return_type", CqlType::Text),
            ("state_func", CqlType::Text),
            ("state_type", CqlType::Text),
        ],
        ("system_schema", "indexes") => vec![
            ("keyspace_name", CqlType::Text),
            ("table_name", CqlType::Text),
            ("index_name", CqlType::Text),
            ("kind", CqlType::Text),
            ("options", map_tt()),
        ],
        // Cassandra 4's columns: drivers (gocql) select the view's table options too.
        ("system_schema", "views") => {
            let mut cols = vec![
                ("keyspace_name", CqlType::Text),
                ("view_name", CqlType::Text),
                ("base_table_id", CqlType::Uuid),
                ("base_table_name", CqlType::Text),
                ("cdc", CqlType::Boolean),
                ("include_all_columns", CqlType::Boolean),
                ("where_clause", CqlType::Text),
            ];
            cols.extend(table_option_columns(false));
            cols
        }
        ("system_schema", "triggers") => vec![
            ("keyspace_name", CqlType::Text),
            ("table_name", CqlType::Text),
            ("trigger_name", CqlType::Text),
            ("options", map_tt()),
        ],
        ("system", "size_estimates") => vec![
            ("keyspace_name", CqlType::Text),
            ("table_name", CqlType::Text),
            ("range_start", CqlType::Text),
            ("range_end", CqlType::Text),
            ("mean_partition_size", CqlType::Bigint),
            ("partitions_count", CqlType::Bigint),
        ],
        ("system", "compaction_history") => vec![
            ("id", CqlType::Uuid),
            ("bytes_in", CqlType::Bigint),
            ("bytes_out", CqlType::Bigint),
            ("columnfamily_name", CqlType::Text),
            ("compacted_at", CqlType::Timestamp),
            ("keyspace_name", CqlType::Text),
            (
                "rows_merged",
                CqlType::Map(Box::new(CqlType::Int), Box::new(CqlType::Bigint)),
            ),
        ],
        _ => Vec::new(),
    }
}

/// A virtual table as a schema (its key structure, default options), e.g. to describe its
/// bind markers or list it in `system_schema`.
pub fn virtual_schema(ks: &str, name: &str) -> Option<cairn_engine::schema::TableSchema> {
    let &(ks, name, pk, ck) = VIRTUAL_TABLES
        .iter()
        .find(|(k, n, _, _)| *k == ks && *n == name)?;
    let mut sc = cairn_engine::schema::TableSchema::new(ks, name);
    let (a, b) = cairn_engine::model::token::murmur3_x64_128(format!("{ks}.{name}").as_bytes(), 0);
    sc.id = (u128::from(a) << 64) | u128::from(b);
    for (i, (col, ty)) in columns_of(ks, name).into_iter().enumerate() {
        let kind = if i < pk {
            ColumnKind::PartitionKey
        } else if i < pk + ck {
            ColumnKind::Clustering
        } else {
            ColumnKind::Regular
        };
        sc.add_column(col, ty, kind, Order::Asc);
    }
    sc.options.comment = format!("virtual table {ks}.{name}");
    Some(sc)
}

/// Every table `system_schema` describes: the virtual tables (as schemas with their key
/// structure and default options) and the catalog's tables, with their keyspace.
fn described_tables(
    cat: &super::catalog::Catalog,
) -> Vec<(
    super::catalog::Keyspace,
    std::sync::Arc<cairn_engine::schema::TableSchema>,
)> {
    let mut out = Vec::new();
    for k in cat.keyspaces() {
        for (ks, name, _, _) in VIRTUAL_TABLES {
            if ks != k.name {
                continue;
            }
            if let Some(sc) = virtual_schema(ks, name) {
                out.push((k.clone(), std::sync::Arc::new(sc)));
            }
        }
        for t in cat.tables(&k.name) {
            out.push((k.clone(), t.schema()));
        }
    }
    out
}

/// A virtual table's full contents.
pub struct Virtual {
    /// Columns.
    pub specs: Vec<ColumnSpec>,
    /// Rows.
    pub rows: Vec<Vec<Option<Bytes>>>,
}

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
}

impl Default for NodeInfo {
    fn default() -> Self {
        NodeInfo {
            cluster_name: "Test Cluster".into(),
            host_id: [0x42; 16],
            listen_address: vec![127, 0, 0, 1],
            rpc_address: vec![127, 0, 0, 1],
            native_port: 9042,
            tokens: vec!["0".into()],
            data_center: "datacenter1".into(),
            rack: "rack1".into(),
            // Cassandra 4: cqlsh then sends DESCRIBE to the server (see `describe`).
            release_version: "4.0.11".into(),
            cql_version: "3.4.5".into(),
        }
    }
}

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

fn text_map(entries: &[(String, String)]) -> Option<Bytes> {
    Some(encode_text_map(entries))
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

/// The virtual table `ks.name`, if it is one; unknown tables of the system keyspaces are
/// Cassandra's `unconfigured table` error.
pub fn table(ex: &Executor, _session: &Session, ks: &str, name: &str) -> Result<Option<Virtual>> {
    if ks != "system" && ks != "system_schema" {
        return Ok(None);
    }
    let cat = ex.catalog();
    let node = ex.node();
    let v = match (ks, name) {
        ("system", "local") => {
            let s = specs(ks, name, &columns_of("system", "local"));
            let row = vec![
                text("local"),
                text("COMPLETED"),
                Some(Bytes::copy_from_slice(&node.listen_address)),
                int(7000),
                text(&node.cluster_name),
                text(&node.cql_version),
                text(&node.data_center),
                int((now_micros() / 1_000_000) as i32),
                uuid(&node.host_id),
                Some(Bytes::copy_from_slice(&node.listen_address)),
                int(7000),
                text("4"),
                text("org.apache.cassandra.dht.Murmur3Partitioner"),
                text(&node.rack),
                text(&node.release_version),
                Some(Bytes::copy_from_slice(&node.rpc_address)),
                int(i32::from(node.native_port)),
                uuid(&cat.schema_version()),
                text_set(&node.tokens),
            ];
            Virtual {
                specs: s,
                rows: vec![row],
            }
        }
        ("system", "peers") => Virtual {
            specs: specs(ks, name, &columns_of("system", "peers")),
            rows: Vec::new(),
        },
        ("system_schema", "keyspaces") => Virtual {
            specs: specs(ks, name, &columns_of("system_schema", "keyspaces")),
            rows: cat
                .keyspaces()
                .iter()
                .map(|k| {
                    vec![
                        text(&k.name),
                        boolean(k.durable_writes),
                        text_map(&k.replication),
                    ]
                })
                .collect(),
        },
        ("system_schema", "tables") => {
            let s = specs(ks, name, &columns_of("system_schema", "tables"));
            let mut rows = Vec::new();
            for (k, sc) in described_tables(cat) {
                {
                    let o = &sc.options;
                    let opt_int =
                        |key: &str| int(options::text_option(o, key).parse::<i32>().unwrap_or(0));
                    rows.push(vec![
                        text(&k.name),
                        text(&sc.name),
                        double(o.bloom_filter_fp_chance),
                        text_map(&options::caching_map(o)),
                        text(&o.comment),
                        text_map(&options::compaction_map(o)),
                        text_map(
                            &o.compression
                                .to_options()
                                .into_iter()
                                .filter(|(k, _)| k != "crc_check_chance")
                                .collect::<Vec<_>>(),
                        ),
                        double(o.compression.crc_check_chance),
                        double(0.0),
                        int(o.default_time_to_live as i32),
                        Some(Bytes::from(vec![0, 0, 0, 0])),
                        text_set(&["compound".to_string()]),
                        int(o.gc_grace_seconds as i32),
                        uuid(&sc.id.to_be_bytes()),
                        opt_int("max_index_interval"),
                        opt_int("memtable_flush_period_in_ms"),
                        opt_int("min_index_interval"),
                        double(0.0),
                        text(&options::text_option(o, "speculative_retry")),
                    ]);
                }
            }
            Virtual { specs: s, rows }
        }
        ("system_schema", "columns") => {
            let s = specs(ks, name, &columns_of("system_schema", "columns"));
            let mut rows = Vec::new();
            for (k, sc) in described_tables(cat) {
                {
                    let mut pos = [0i32; 2];
                    for c in &sc.columns {
                        let (kind, position) = match c.kind {
                            ColumnKind::PartitionKey => {
                                pos[0] += 1;
                                ("partition_key", pos[0] - 1)
                            }
                            ColumnKind::Clustering => {
                                pos[1] += 1;
                                ("clustering", pos[1] - 1)
                            }
                            ColumnKind::Static => ("static", -1),
                            ColumnKind::Regular => ("regular", -1),
                        };
                        let order = match (c.kind, c.order) {
                            (ColumnKind::Clustering, Order::Asc) => "asc",
                            (ColumnKind::Clustering, Order::Desc) => "desc",
                            _ => "none",
                        };
                        rows.push(vec![
                            text(&k.name),
                            text(&sc.name),
                            text(&c.name),
                            text(order),
                            Some(Bytes::copy_from_slice(c.name.as_bytes())),
                            text(kind),
                            int(position),
                            text(&c.ty.name()),
                        ]);
                    }
                }
            }
            Virtual { specs: s, rows }
        }
        ("system_schema", "dropped_columns") => {
            let mut v = empty(ks, name, &columns_of("system_schema", "dropped_columns"));
            for k in cat.keyspaces() {
                for t in cat.tables(&k.name) {
                    let sc = t.schema();
                    for d in sc.dropped_columns() {
                        v.rows.push(vec![
                            text(&k.name),
                            text(&sc.name),
                            text(&d.name),
                            bigint(d.dropped_at / 1000),
                            text(if d.is_static { "static" } else { "regular" }),
                            text(&d.ty),
                        ]);
                    }
                }
            }
            v
        }
        ("system_schema", "types") => empty(ks, name, &columns_of("system_schema", "types")),
        ("system_schema", "functions") => {
            empty(ks, name, &columns_of("system_schema", "functions"))
        }
        ("system_schema", "aggregates") => {
            empty(ks, name, &columns_of("system_schema", "aggregates"))
        }
        ("system_schema", "indexes") => empty(ks, name, &columns_of("system_schema", "indexes")),
        ("system_schema", "views") => empty(ks, name, &columns_of("system_schema", "views")),
        ("system_schema", "triggers") => empty(ks, name, &columns_of("system_schema", "triggers")),
        ("system", "size_estimates") => {
            let s = specs(ks, name, &columns_of("system", "size_estimates"));
            let mut rows = Vec::new();
            for k in cat.keyspaces() {
                for t in cat.tables(&k.name) {
                    let st = t.stats()?;
                    let count = st.partition_sizes.count();
                    rows.push(vec![
                        text(&k.name),
                        text(&t.schema().name),
                        text(&i64::MIN.to_string()),
                        text(&i64::MAX.to_string()),
                        bigint(st.partition_sizes.mean() as i64),
                        bigint(count as i64),
                    ]);
                }
            }
            Virtual { specs: s, rows }
        }
        ("system", "compaction_history") => {
            let s = specs(ks, name, &columns_of("system", "compaction_history"));
            let rows = cat
                .db()
                .compaction()
                .history()
                .iter()
                .map(|r| {
                    let mut id = [0u8; 16];
                    id[..8].copy_from_slice(&r.started_at_ms.to_be_bytes());
                    id[8..].copy_from_slice(&r.id.to_be_bytes());
                    id[6] = (id[6] & 0x0F) | 0x40;
                    id[8] = (id[8] & 0x3F) | 0x80;
                    let mut merged = Vec::new();
                    let entries: Vec<(i32, i64)> = r
                        .merged_from
                        .iter()
                        .enumerate()
                        .filter(|(_, n)| **n > 0)
                        .map(|(i, n)| (i as i32 + 1, *n as i64))
                        .collect();
                    merged.extend_from_slice(&(entries.len() as i32).to_be_bytes());
                    for (k, v) in entries {
                        merged.extend_from_slice(&4i32.to_be_bytes());
                        merged.extend_from_slice(&k.to_be_bytes());
                        merged.extend_from_slice(&8i32.to_be_bytes());
                        merged.extend_from_slice(&v.to_be_bytes());
                    }
                    vec![
                        uuid(&id),
                        bigint(r.bytes_in as i64),
                        bigint(r.bytes_out as i64),
                        text(&r.table),
                        bigint((r.started_at_ms + r.duration.as_millis() as u64) as i64),
                        text(&r.keyspace),
                        Some(Bytes::from(merged)),
                    ]
                })
                .collect();
            Virtual { specs: s, rows }
        }
        _ => return Err(Error::Invalid(format!("unconfigured table {name}"))),
    };
    Ok(Some(v))
}

fn empty(ks: &str, name: &str, cols: &[(&str, CqlType)]) -> Virtual {
    Virtual {
        specs: specs(ks, name, cols),
        rows: Vec::new(),
    }
}

/// A SELECT over a virtual table: `=`/`IN` restrictions, a column selection or `*`,
/// `count(*)`, LIMIT. No paging: these tables are small.
pub fn select(v: Virtual, s: &Select, params: &QueryParams) -> Result<ResultSet> {
    let mut rows = Vec::new();
    for row in v.rows {
        if virtual_matches(&v.specs, &row, &s.where_clause, params)? {
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
