//! The `system` keyspace: the node (`local`), its peers (`peers`, Cassandra 4's `peers_v2`),
//! size estimates and compaction history.
//!
//! The peer tables list every other member of the cluster from the node's topology
//! (`cairn_cluster::membership`), with each peer's schema version as last polled (null until
//! then: drivers skip a null version when they wait for schema agreement). Drivers read them
//! at connect: ScyllaDB's gocql fork and the Java driver 4 ask `peers_v2` of any server
//! whose release_version is 4.0 or later (the fork with no fallback), the Python driver
//! tries it first. A node alone has no peers: both tables are empty.

use super::{bigint, inet, int, set_text, text, text_set, uuid, Row};
use crate::error::Result;
use crate::exec::catalog::now_micros;
use crate::exec::Executor;
use bytes::Bytes;
use cairn_cluster::node::{ip_bytes, ip_from_bytes};
use cairn_cluster::proxy::view_status;
use cairn_engine::model::types::CqlType;

/// The columns of `system.name` (empty for an unknown table).
pub(super) fn columns(name: &str) -> Vec<(&'static str, CqlType)> {
    match name {
        "local" => vec![
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
            ("tokens", set_text()),
        ],
        "peers" => vec![
            ("peer", CqlType::Inet),
            ("data_center", CqlType::Text),
            ("host_id", CqlType::Uuid),
            ("preferred_ip", CqlType::Inet),
            ("rack", CqlType::Text),
            ("release_version", CqlType::Text),
            ("rpc_address", CqlType::Inet),
            ("schema_version", CqlType::Uuid),
            ("tokens", set_text()),
        ],
        // Cassandra 4.0's table: keyed by (peer, peer_port), native address and port apart.
        "peers_v2" => vec![
            ("peer", CqlType::Inet),
            ("peer_port", CqlType::Int),
            ("data_center", CqlType::Text),
            ("host_id", CqlType::Uuid),
            ("native_address", CqlType::Inet),
            ("native_port", CqlType::Int),
            ("preferred_ip", CqlType::Inet),
            ("preferred_port", CqlType::Int),
            ("rack", CqlType::Text),
            ("release_version", CqlType::Text),
            ("schema_version", CqlType::Uuid),
            ("tokens", set_text()),
        ],
        "size_estimates" => vec![
            ("keyspace_name", CqlType::Text),
            ("table_name", CqlType::Text),
            ("range_start", CqlType::Text),
            ("range_end", CqlType::Text),
            ("mean_partition_size", CqlType::Bigint),
            ("partitions_count", CqlType::Bigint),
        ],
        // Cassandra 5.0's columns.
        "built_views" => vec![
            ("keyspace_name", CqlType::Text),
            ("view_name", CqlType::Text),
            ("status_replicated", CqlType::Boolean),
        ],
        "IndexInfo" => vec![
            ("table_name", CqlType::Text),
            ("index_name", CqlType::Text),
            ("value", CqlType::Blob),
        ],
        // Cassandra's `system_distributed.view_build_status`.
        "view_build_status" => vec![
            ("keyspace_name", CqlType::Text),
            ("view_name", CqlType::Text),
            ("host_id", CqlType::Uuid),
            ("status", CqlType::Text),
        ],
        "view_builds_in_progress" => vec![
            ("keyspace_name", CqlType::Text),
            ("view_name", CqlType::Text),
            ("start_token", CqlType::Text),
            ("end_token", CqlType::Text),
            ("keys_built", CqlType::Bigint),
            ("last_token", CqlType::Text),
        ],
        "compaction_history" => vec![
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

/// The rows of `system.peers` (or `peers_v2`): every member but this node.
fn peers(ex: &Executor, v2: bool) -> Vec<Row> {
    let node = ex.node();
    let Some(cluster) = &node.cluster else {
        return Vec::new();
    };
    let topology = cluster.topology.get();
    topology
        .peers()
        .map(|m| {
            let address = ip_bytes(m.endpoint.address);
            let rpc = ip_bytes(m.rpc_address);
            let schema = cluster
                .statuses
                .get(m.endpoint.address)
                .and_then(|s| s.schema_version)
                .and_then(|v| uuid(&v));
            let tokens: Vec<String> = m.tokens.iter().map(|t| t.to_string()).collect();
            let dc = text(&m.endpoint.datacenter);
            let rack = text(&m.endpoint.rack);
            let host = uuid(&m.endpoint.host_id.0);
            let release = text(&node.release_version);
            if v2 {
                vec![
                    inet(&address),
                    int(i32::from(node.storage_port)),
                    dc,
                    host,
                    inet(&rpc),
                    int(i32::from(m.native_port)),
                    None,
                    None,
                    rack,
                    release,
                    schema,
                    text_set(&tokens),
                ]
            } else {
                vec![
                    inet(&address),
                    dc,
                    host,
                    None,
                    rack,
                    release,
                    inet(&rpc),
                    schema,
                    text_set(&tokens),
                ]
            }
        })
        .collect()
}

/// The rows of `system.name` (`None` for an unknown table).
pub(super) fn rows(ex: &Executor, name: &str) -> Result<Option<Vec<Row>>> {
    let cat = ex.catalog();
    let node = ex.node();
    Ok(Some(match name {
        "local" => vec![vec![
            text("local"),
            text("COMPLETED"),
            inet(&node.listen_address),
            int(i32::from(node.storage_port)),
            text(&node.cluster_name),
            text(&node.cql_version),
            text(&node.data_center),
            int((now_micros() / 1_000_000) as i32),
            uuid(&node.host_id),
            inet(&node.listen_address),
            int(i32::from(node.storage_port)),
            text("4"),
            text("org.apache.cassandra.dht.Murmur3Partitioner"),
            text(&node.rack),
            text(&node.release_version),
            inet(&node.rpc_address),
            int(i32::from(node.native_port)),
            uuid(&cat.schema_version()),
            text_set(&node.tokens),
        ]],
        "peers" | "peers_v2" => peers(ex, name == "peers_v2"),
        "size_estimates" => {
            let mut rows = Vec::new();
            for k in cat.keyspaces() {
                for t in cat.tables(&k.name) {
                    let st = t.stats()?;
                    rows.push(vec![
                        text(&k.name),
                        text(&t.schema().name),
                        text(&i64::MIN.to_string()),
                        text(&i64::MAX.to_string()),
                        bigint(st.partition_sizes.mean() as i64),
                        bigint(st.partition_sizes.count() as i64),
                    ]);
                }
            }
            rows
        }
        // What this node finished building (kept across restarts: see
        // `cairn_cluster::proxy::views`); `status_replicated` is not kept: null.
        "built_views" => {
            let mut rows: Vec<Row> = ex
                .proxy()
                .views()
                .built()
                .iter()
                .map(|v| vec![text(&v.keyspace), text(&v.name), None])
                .collect();
            rows.sort();
            rows
        }
        // Cassandra's built secondary indexes: the keyspace as `table_name`, the index name.
        "IndexInfo" => {
            let mut rows: Vec<Row> = ex
                .proxy()
                .views()
                .built()
                .iter()
                .filter_map(|v| {
                    v.index()
                        .map(|d| vec![text(&v.keyspace), text(&d.name), None])
                })
                .collect();
            rows.sort();
            rows
        }
        // One range per view (a build reads the whole base table in token order), with its
        // last saved position, as Cassandra shows its saved rows: `last_token` null until
        // the first checkpoint.
        "view_builds_in_progress" => {
            let mut rows: Vec<Row> = ex
                .proxy()
                .views()
                .in_progress()
                .iter()
                .map(|(v, p)| {
                    vec![
                        text(&v.keyspace),
                        text(&v.name),
                        text(&i64::MIN.to_string()),
                        text(&i64::MAX.to_string()),
                        bigint(p.saved_keys as i64),
                        p.saved_token.and_then(|t| text(&t.0.to_string())),
                    ]
                })
                .collect();
            rows.sort();
            rows
        }
        // Cassandra's `system_distributed.view_build_status` for the materialized views (not
        // indexes): one row per view and host with a status for it — this node's build now,
        // each peer's as last polled (`cairn_cluster::proxy::view_status`).
        "view_build_status" => {
            let views = ex.proxy().views();
            let local = (
                cairn_cluster::node::HostId(node.host_id),
                ip_from_bytes(&node.listen_address)
                    .unwrap_or(std::net::IpAddr::from([127, 0, 0, 1])),
            );
            let mut rows: Vec<Row> = views
                .known()
                .iter()
                .filter(|v| v.index().is_none())
                .flat_map(|v| {
                    view_status::ring_builds(views, v.id, node.cluster.as_ref(), local)
                        .into_iter()
                        .map(|h| {
                            vec![
                                text(&v.keyspace),
                                text(&v.name),
                                uuid(&h.host_id.0),
                                text(h.status()),
                            ]
                        })
                })
                .collect();
            rows.sort();
            rows
        }
        "compaction_history" => cat
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
            .collect(),
        _ => return Ok(None),
    }))
}
