//! The `system_virtual_schema` keyspace: Cassandra 4's description of the virtual keyspaces
//! (`system_views` and itself), which drivers read at connect when the server is Cassandra
//! 4 or later (the Java driver 4 loads no schema at all when these are missing).
//!
//! Cassandra's layout: `keyspaces (keyspace_name)`, `tables ((keyspace_name), table_name,
//! comment)` and `columns ((keyspace_name), table_name, column_name, …)` with the columns of
//! `system_schema.columns`.

use super::{text, Row, VIRTUAL_KEYSPACES, VIRTUAL_TABLES};
use cairn_engine::model::types::CqlType;

/// The columns of `system_virtual_schema.name` (empty for an unknown table).
pub(super) fn columns(name: &str) -> Vec<(&'static str, CqlType)> {
    match name {
        "keyspaces" => vec![("keyspace_name", CqlType::Text)],
        "tables" => vec![
            ("keyspace_name", CqlType::Text),
            ("table_name", CqlType::Text),
            ("comment", CqlType::Text),
        ],
        "columns" => super::schema::columns("columns"),
        _ => Vec::new(),
    }
}

/// The rows of `system_virtual_schema.name` (`None` for an unknown table).
pub(super) fn rows(name: &str) -> Option<Vec<Row>> {
    Some(match name {
        "keyspaces" => VIRTUAL_KEYSPACES.iter().map(|k| vec![text(k)]).collect(),
        "tables" => VIRTUAL_TABLES
            .iter()
            .filter(|t| super::is_virtual_keyspace(t.keyspace))
            .map(|t| vec![text(t.keyspace), text(t.name), text(t.comment)])
            .collect(),
        "columns" => VIRTUAL_KEYSPACES
            .iter()
            .flat_map(|ks| super::schemas_of(ks).flat_map(|sc| super::schema::column_rows(ks, &sc)))
            .collect(),
        _ => return None,
    })
}
