//! The `system_views` keyspace: Cassandra 4's read-only views of the node, with Cassandra's
//! columns and key layouts, for the ones Cairn has the figures of:
//! - `settings (name, value)`: the configuration the node runs with (from
//!   [`NodeInfo::settings`](super::NodeInfo)); `compaction_throughput`, which
//!   `nodetool setcompactionthroughput` changes, is read live from the engine;
//! - `sstable_tasks ((keyspace_name), table_name, task_id, …)`: compactions running now;
//! - `disk_usage` and `max_partition_size ((keyspace_name), table_name, mebibytes)`: live
//!   sstable bytes and the largest partition of each table, in MiB rounded up (so a table
//!   with any data shows at least 1).
//!
//! No driver reads this keyspace at connect (the Python driver 3.29, the Java driver 4.18,
//! gocql and cqlsh 6.2 read only `system_virtual_schema`); operators and tools query it.

use super::{bigint, double, text, uuid, Row};
use crate::error::Result;
use crate::exec::Executor;
use cairn_engine::compaction::strategy::JobKind;
use cairn_engine::model::types::CqlType;

const MIB: u64 = 1 << 20;

fn per_table_mib() -> Vec<(&'static str, CqlType)> {
    vec![
        ("keyspace_name", CqlType::Text),
        ("table_name", CqlType::Text),
        ("mebibytes", CqlType::Bigint),
    ]
}

/// The columns of `system_views.name` (empty for an unknown table).
pub(super) fn columns(name: &str) -> Vec<(&'static str, CqlType)> {
    match name {
        "settings" => vec![("name", CqlType::Text), ("value", CqlType::Text)],
        "sstable_tasks" => vec![
            ("keyspace_name", CqlType::Text),
            ("table_name", CqlType::Text),
            ("task_id", CqlType::Uuid),
            ("completion_ratio", CqlType::Double),
            ("kind", CqlType::Text),
            ("progress", CqlType::Bigint),
            ("total", CqlType::Bigint),
            ("unit", CqlType::Text),
        ],
        "disk_usage" | "max_partition_size" => per_table_mib(),
        _ => Vec::new(),
    }
}

/// Bytes in MiB, rounded up.
fn mebibytes(bytes: u64) -> Option<bytes::Bytes> {
    bigint(bytes.div_ceil(MIB) as i64)
}

/// The rows of `system_views.name` (`None` for an unknown table).
pub(super) fn rows(ex: &Executor, name: &str) -> Result<Option<Vec<Row>>> {
    let cat = ex.catalog();
    Ok(Some(match name {
        "settings" => {
            let live_throughput = cat.db().compaction().throughput().div_ceil(MIB);
            ex.node()
                .settings
                .iter()
                .map(|(k, v)| {
                    let v = if k == "compaction_throughput" {
                        format!("{live_throughput}MiB/s")
                    } else {
                        v.clone()
                    };
                    vec![text(k), text(&v)]
                })
                .collect()
        }
        "sstable_tasks" => {
            let mut jobs = cat.db().compaction().running();
            jobs.sort_by(|a, b| (&a.keyspace, &a.table, a.id).cmp(&(&b.keyspace, &b.table, b.id)));
            jobs.iter()
                .map(|j| {
                    let ratio = if j.total_bytes == 0 {
                        1.0
                    } else {
                        j.done_bytes as f64 / j.total_bytes as f64
                    };
                    let kind = match j.kind {
                        JobKind::Major => "major_compaction",
                        JobKind::Tombstone => "tombstone_compaction",
                        JobKind::Regular | JobKind::SpaceAmplification | JobKind::DropExpired => {
                            "compaction"
                        }
                    };
                    vec![
                        text(&j.keyspace),
                        text(&j.table),
                        uuid(&task_id(j.id)),
                        double(ratio),
                        text(kind),
                        bigint(j.done_bytes as i64),
                        bigint(j.total_bytes as i64),
                        text("bytes"),
                    ]
                })
                .collect()
        }
        "disk_usage" | "max_partition_size" => {
            let mut rows = Vec::new();
            for k in cat.keyspaces() {
                for t in cat.tables(&k.name) {
                    let st = t.stats()?;
                    let bytes = if name == "disk_usage" {
                        st.live_disk_bytes
                    } else {
                        st.partition_sizes.max()
                    };
                    rows.push(vec![
                        text(&k.name),
                        text(&t.schema().name),
                        mebibytes(bytes),
                    ]);
                }
            }
            rows
        }
        _ => return Ok(None),
    }))
}

/// A running job's id as a (version 4 layout) UUID, stable while the job runs.
fn task_id(id: u64) -> [u8; 16] {
    let mut u = [0u8; 16];
    u[8..].copy_from_slice(&id.to_be_bytes());
    u[6] = 0x40;
    u[8] = (u[8] & 0x3F) | 0x80;
    u
}
