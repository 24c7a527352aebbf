//! Cassandra 5.0's `system_traces` tables (`TraceKeyspace`): `sessions` and `events`.
//!
//! They are real engine tables of the `system_traces` keyspace, which every node creates
//! when its catalog opens (before the schema version is first computed, so every node hashes
//! the same tables), with Cassandra's table ids (`TableId.forSystemTable`, name-based: the
//! same on every node and in Cassandra), `gc_grace_seconds = 0`, 16 KiB chunks and
//! Cassandra's comments. They are not shared through the schema log (the system keyspaces
//! are each node's own); users may read them, not write them.

use cairn_engine::model::clustering::Order;
use cairn_engine::model::types::CqlType;
use cairn_engine::schema::{ColumnKind, TableSchema};
use cairn_engine::Database;

/// The keyspace.
pub const KEYSPACE: &str = "system_traces";

/// Cassandra's id of `system_traces.sessions` (`c5e99f16-8677-3914-b17e-960613512345`).
pub(super) const SESSIONS_ID: u128 = 0xc5e9_9f16_8677_3914_b17e_9606_1351_2345;
/// Cassandra's id of `system_traces.events` (`8826e8e9-e16a-3728-8753-3bc1fc713c25`).
pub(super) const EVENTS_ID: u128 = 0x8826_e8e9_e16a_3728_8753_3bc1_fc71_3c25;

/// The two tables, as Cassandra 5.0 defines them.
pub fn schemas() -> [TableSchema; 2] {
    let text_map = CqlType::Map(Box::new(CqlType::Text), Box::new(CqlType::Text));
    let mut sessions = TableSchema::new(KEYSPACE, "sessions")
        .with_column("session_id", CqlType::Uuid, ColumnKind::PartitionKey)
        .with_column("client", CqlType::Inet, ColumnKind::Regular)
        .with_column("command", CqlType::Text, ColumnKind::Regular)
        .with_column("coordinator", CqlType::Inet, ColumnKind::Regular)
        .with_column("coordinator_port", CqlType::Int, ColumnKind::Regular)
        .with_column("duration", CqlType::Int, ColumnKind::Regular)
        .with_column("parameters", text_map, ColumnKind::Regular)
        .with_column("request", CqlType::Text, ColumnKind::Regular)
        .with_column("started_at", CqlType::Timestamp, ColumnKind::Regular);
    sessions.id = SESSIONS_ID;
    sessions.options.comment = "tracing sessions".into();
    let mut events = TableSchema::new(KEYSPACE, "events")
        .with_column("session_id", CqlType::Uuid, ColumnKind::PartitionKey)
        .with_clustering("event_id", CqlType::Timeuuid, Order::Asc)
        .with_column("activity", CqlType::Text, ColumnKind::Regular)
        .with_column("source", CqlType::Inet, ColumnKind::Regular)
        .with_column("source_elapsed", CqlType::Int, ColumnKind::Regular)
        .with_column("source_port", CqlType::Int, ColumnKind::Regular)
        .with_column("thread", CqlType::Text, ColumnKind::Regular);
    events.id = EVENTS_ID;
    events.options.comment = "tracing events".into();
    for t in [&mut sessions, &mut events] {
        t.options.gc_grace_seconds = 0;
        // Cassandra 4.0 cut the trace tables' chunks to 16 KiB.
        t.options.compression.chunk_length = 16 * 1024;
    }
    [sessions, events]
}

/// Creates the tables this node lacks.
pub fn create_tables(db: &Database) -> cairn_engine::Result<()> {
    for schema in schemas() {
        if db.table(&schema.keyspace, &schema.name).is_none() {
            db.create_table(schema)?;
        }
    }
    Ok(())
}
