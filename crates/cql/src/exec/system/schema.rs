//! The `system_schema` keyspace: keyspaces, tables, columns and the rest of the schema as
//! Cassandra 4 lays it out, for every keyspace of the catalog — the system keyspaces
//! included, with the tables served here as theirs (the virtual keyspaces are described by
//! `system_virtual_schema` instead, as in Cassandra).

use super::{boolean, double, frozen, int, map_tt, text, text_map, text_set, uuid, Row};
use crate::error::Result;
use crate::exec::catalog::{Catalog, Keyspace};
use crate::exec::{options, Executor};
use bytes::Bytes;
use cairn_engine::model::clustering::Order;
use cairn_engine::model::types::CqlType;
use cairn_engine::schema::{ColumnKind, TableSchema};
use std::sync::Arc;

/// The regular columns of `system_schema.tables` (`with_flags`) or `.views` (with the view's
/// own), in the order `SELECT *` lists them: by name, as Cassandra sorts regular columns.
fn table_option_columns(with_flags: bool) -> Vec<(&'static str, CqlType)> {
    let mut cols = vec![
        ("additional_write_policy", CqlType::Text),
        ("allow_auto_snapshot", CqlType::Boolean),
        ("bloom_filter_fp_chance", CqlType::Double),
        ("caching", map_tt()),
        ("cdc", CqlType::Boolean),
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
        ("gc_grace_seconds", CqlType::Int),
        ("id", CqlType::Uuid),
        ("incremental_backups", CqlType::Boolean),
        ("max_index_interval", CqlType::Int),
        ("memtable", CqlType::Text),
        ("memtable_flush_period_in_ms", CqlType::Int),
        ("min_index_interval", CqlType::Int),
        ("read_repair", CqlType::Text),
        ("read_repair_chance", CqlType::Double),
        ("speculative_retry", CqlType::Text),
    ];
    if with_flags {
        cols.push(("flags", frozen(CqlType::Set(Box::new(CqlType::Text)))));
    } else {
        cols.extend([
            ("base_table_id", CqlType::Uuid),
            ("base_table_name", CqlType::Text),
            ("include_all_columns", CqlType::Boolean),
            ("where_clause", CqlType::Text),
        ]);
    }
    cols.sort_by_key(|(n, _)| *n);
    cols
}

fn text_list() -> CqlType {
    frozen(CqlType::List(Box::new(CqlType::Text)))
}

/// The columns of `system_schema.name` (empty for an unknown table).
pub(super) fn columns(name: &str) -> Vec<(&'static str, CqlType)> {
    match name {
        "keyspaces" => vec![
            ("keyspace_name", CqlType::Text),
            ("durable_writes", CqlType::Boolean),
            ("replication", map_tt()),
        ],
        "tables" => {
            let mut cols = vec![
                ("keyspace_name", CqlType::Text),
                ("table_name", CqlType::Text),
            ];
            cols.extend(table_option_columns(true));
            cols
        }
        "columns" => vec![
            ("keyspace_name", CqlType::Text),
            ("table_name", CqlType::Text),
            ("column_name", CqlType::Text),
            ("clustering_order", CqlType::Text),
            ("column_name_bytes", CqlType::Blob),
            ("kind", CqlType::Text),
            ("position", CqlType::Int),
            ("type", CqlType::Text),
        ],
        "dropped_columns" => vec![
            ("keyspace_name", CqlType::Text),
            ("table_name", CqlType::Text),
            ("column_name", CqlType::Text),
            ("dropped_time", CqlType::Timestamp),
            ("kind", CqlType::Text),
            ("type", CqlType::Text),
        ],
        "column_masks" => vec![
            ("keyspace_name", CqlType::Text),
            ("table_name", CqlType::Text),
            ("column_name", CqlType::Text),
            (
                "function_argument_nulls",
                frozen(CqlType::List(Box::new(CqlType::Boolean))),
            ),
            ("function_argument_types", text_list()),
            ("function_argument_values", text_list()),
            ("function_keyspace", CqlType::Text),
            ("function_name", CqlType::Text),
        ],
        "types" => vec![
            ("keyspace_name", CqlType::Text),
            ("type_name", CqlType::Text),
            ("field_names", text_list()),
            ("field_types", text_list()),
        ],
        "functions" => vec![
            ("keyspace_name", CqlType::Text),
            ("function_name", CqlType::Text),
            ("argument_types", text_list()),
            ("argument_names", text_list()),
            ("body", CqlType::Text),
            ("called_on_null_input", CqlType::Boolean),
            ("language", CqlType::Text),
            ("return_type", CqlType::Text),
        ],
        "aggregates" => vec![
            ("keyspace_name", CqlType::Text),
            ("aggregate_name", CqlType::Text),
            ("argument_types", text_list()),
            ("final_func", CqlType::Text),
            ("initcond", CqlType::Text),
            ("return_type", CqlType::Text),
            ("state_func", CqlType::Text),
            ("state_type", CqlType::Text),
        ],
        "indexes" => vec![
            ("keyspace_name", CqlType::Text),
            ("table_name", CqlType::Text),
            ("index_name", CqlType::Text),
            ("kind", CqlType::Text),
            ("options", map_tt()),
        ],
        // Cassandra 5.0's columns: drivers (gocql) select the view's table options too.
        "views" => {
            let mut cols = vec![
                ("keyspace_name", CqlType::Text),
                ("view_name", CqlType::Text),
            ];
            cols.extend(table_option_columns(false));
            cols
        }
        "triggers" => vec![
            ("keyspace_name", CqlType::Text),
            ("table_name", CqlType::Text),
            ("trigger_name", CqlType::Text),
            ("options", map_tt()),
        ],
        _ => Vec::new(),
    }
}

/// Every table `system_schema` describes, with its keyspace: the tables served here for
/// `system` and `system_schema`, and the catalog's tables.
fn described_tables(cat: &Catalog) -> Vec<(Keyspace, Arc<TableSchema>)> {
    let mut out = Vec::new();
    for k in cat.keyspaces() {
        for sc in super::schemas_of(&k.name) {
            out.push((k.clone(), sc));
        }
        for t in cat.tables(&k.name) {
            // An older node's own `system_auth.roles` store is served from the roles now.
            if super::find(&k.name, &t.schema().name).is_none() {
                out.push((k.clone(), t.schema()));
            }
        }
    }
    out
}

/// The `system_schema.columns` rows of one table (also `system_virtual_schema.columns`'s,
/// which has the same columns).
pub(super) fn column_rows(keyspace: &str, sc: &TableSchema) -> Vec<Row> {
    let mut rows = Vec::with_capacity(sc.columns.len());
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
            text(keyspace),
            text(&sc.name),
            text(&c.name),
            text(order),
            Some(Bytes::copy_from_slice(c.name.as_bytes())),
            text(kind),
            int(position),
            text(&c.ty.name()),
        ]);
    }
    rows
}

/// A `system_schema.tables` row, as Cassandra 5.0 writes it: `allow_auto_snapshot` and
/// `incremental_backups` only when false, `memtable` only when not the default (never here),
/// `cdc` never (a node with `cdc_enabled: false` does not write it).
fn table_row(k: &Keyspace, sc: &TableSchema) -> Row {
    table_or_view_row(k, sc, None)
}

/// A `system_schema.views` row: the table options as for a table, the view's definition
/// instead of `flags`.
fn view_row(cat: &Catalog, k: &Keyspace, sc: &TableSchema) -> Option<Row> {
    let def = sc.view()?;
    let base_id = cat.table(&k.name, &def.base).map(|t| t.schema().id);
    Some(table_or_view_row(k, sc, Some((base_id, def))))
}

fn table_or_view_row(
    k: &Keyspace,
    sc: &TableSchema,
    view: Option<(Option<u128>, cairn_engine::schema::view::ViewDef)>,
) -> Row {
    let o = &sc.options;
    let opt_int = |key: &str| int(options::text_option(o, key).parse::<i32>().unwrap_or(0));
    let false_only = |key: &str| {
        (!options::flag_value(o, key))
            .then(|| boolean(false))
            .flatten()
    };
    let mut named: Vec<(&str, Option<Bytes>)> = vec![
        (
            "additional_write_policy",
            text(&options::text_option(o, "additional_write_policy")),
        ),
        ("allow_auto_snapshot", false_only("allow_auto_snapshot")),
        ("bloom_filter_fp_chance", double(o.bloom_filter_fp_chance)),
        ("caching", text_map(&options::caching_map(o))),
        ("cdc", None),
        ("comment", text(&o.comment)),
        ("compaction", text_map(&options::compaction_map(o))),
        (
            "compression",
            text_map(
                &o.compression
                    .to_options()
                    .into_iter()
                    .filter(|(k, _)| k != "crc_check_chance")
                    .collect::<Vec<_>>(),
            ),
        ),
        ("crc_check_chance", double(o.compression.crc_check_chance)),
        ("dclocal_read_repair_chance", double(0.0)),
        ("default_time_to_live", int(o.default_time_to_live as i32)),
        ("extensions", Some(Bytes::from(vec![0, 0, 0, 0]))),
        ("gc_grace_seconds", int(o.gc_grace_seconds as i32)),
        ("id", uuid(&sc.id.to_be_bytes())),
        ("incremental_backups", false_only("incremental_backups")),
        ("max_index_interval", opt_int("max_index_interval")),
        ("memtable", None),
        (
            "memtable_flush_period_in_ms",
            opt_int("memtable_flush_period_in_ms"),
        ),
        ("min_index_interval", opt_int("min_index_interval")),
        ("read_repair", text(&options::text_option(o, "read_repair"))),
        ("read_repair_chance", double(0.0)),
        (
            "speculative_retry",
            text(&options::text_option(o, "speculative_retry")),
        ),
    ];
    match view {
        None => named.push(("flags", text_set(&["compound".to_string()]))),
        Some((base_id, def)) => named.extend([
            (
                "base_table_id",
                base_id.and_then(|id| uuid(&id.to_be_bytes())),
            ),
            ("base_table_name", text(&def.base)),
            ("include_all_columns", boolean(def.include_all_columns)),
            ("where_clause", text(&def.where_clause)),
        ]),
    }
    named.sort_by_key(|(n, _)| *n);
    let mut row = vec![text(&k.name), text(&sc.name)];
    row.extend(named.into_iter().map(|(_, v)| v));
    row
}

/// The rows of `system_schema.name` (`None` for an unknown table).
pub(super) fn rows(ex: &Executor, name: &str) -> Result<Option<Vec<Row>>> {
    let cat = ex.catalog();
    Ok(Some(match name {
        "keyspaces" => cat
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
        "tables" => described_tables(cat)
            .iter()
            .filter(|(_, sc)| !sc.is_view())
            .map(|(k, sc)| table_row(k, sc))
            .collect(),
        "views" => described_tables(cat)
            .iter()
            .filter_map(|(k, sc)| view_row(cat, k, sc))
            .collect(),
        "columns" => described_tables(cat)
            .iter()
            .flat_map(|(k, sc)| column_rows(&k.name, sc))
            .collect(),
        "dropped_columns" => {
            let mut rows = Vec::new();
            for k in cat.keyspaces() {
                for t in cat.tables(&k.name) {
                    let sc = t.schema();
                    for d in sc.dropped_columns() {
                        rows.push(vec![
                            text(&k.name),
                            text(&sc.name),
                            text(&d.name),
                            super::bigint(d.dropped_at / 1000),
                            text(if d.is_static { "static" } else { "regular" }),
                            text(&d.ty),
                        ]);
                    }
                }
            }
            rows
        }
        // One row per masked column (Cassandra 5.0 keeps a row for a column dropped or
        // renamed since; Cairn shows the masks the table has).
        "column_masks" => {
            let mut rows = Vec::new();
            for (k, sc) in described_tables(cat).iter() {
                let mut masked: Vec<_> = sc
                    .columns
                    .iter()
                    .filter_map(|c| c.mask.as_ref().map(|m| (c.name.as_str(), m)))
                    .collect();
                masked.sort_by(|a, b| a.0.cmp(b.0));
                for (column, m) in masked {
                    let nulls: Vec<Vec<u8>> = m
                        .args
                        .iter()
                        .map(|(_, v)| vec![u8::from(v.is_none())])
                        .collect();
                    let types: Vec<String> = m
                        .args
                        .iter()
                        .map(|(t, _)| crate::exec::masks::type_text(t))
                        .collect();
                    let values: Vec<String> = m
                        .args
                        .iter()
                        .map(|(t, v)| crate::exec::masks::argument_text(t, v.as_deref()))
                        .collect();
                    rows.push(vec![
                        text(&k.name),
                        text(&sc.name),
                        text(column),
                        Some(Bytes::from(
                            cairn_engine::model::types::framing::build_collection(&nulls),
                        )),
                        super::text_set(&types),
                        super::text_set(&values),
                        text(&m.keyspace),
                        text(&m.function),
                    ]);
                }
            }
            rows
        }
        // Field types as CQL shows them (a nested user type by its name): drivers resolve
        // them against the keyspace's other types.
        "types" => {
            let mut rows = Vec::new();
            for k in cat.keyspaces() {
                for ut in cat.user_types(&k.name) {
                    let types: Vec<String> = ut.field_types.iter().map(CqlType::name).collect();
                    rows.push(vec![
                        text(&k.name),
                        text(&ut.name),
                        super::text_set(&ut.field_names),
                        super::text_set(&types),
                    ]);
                }
            }
            rows
        }
        "indexes" => super::super::indexes::schema_rows(cat)
            .into_iter()
            .map(|(ks, table, name, kind, options)| {
                vec![
                    text(&ks),
                    text(&table),
                    text(&name),
                    text(kind),
                    text_map(&options),
                ]
            })
            .collect(),
        // Cairn has no functions, aggregates or triggers yet: the tables exist (drivers
        // read them all at connect) and are empty.
        "functions" | "aggregates" | "triggers" => Vec::new(),
        _ => return Ok(None),
    }))
}
