//! The node's own figures on ScyllaDB's REST paths — storage service (load, generation,
//! tokens, ring, ownership, gossip and native transport state), gossiper, snitch, uptime,
//! schema versions — and the cache service, for `nodetool status`, `info`, `describering`
//! and `describecluster`.
//!
//! Members, their tokens, liveness, loads and schema versions come from
//! `AdminBackend::members` (the cluster's topology; a bare engine is alone), the ring and
//! ownership from `AdminBackend::ring` and each keyspace's placement (`cairn_cluster`). A
//! node is always up to itself; `gossiping` reports true while the node serves.
//!
//! The cache service's invalidations exist and validate their request, but are no-ops until
//! the row cache exists (there is no key or counter cache); its metrics are zero.

use super::http::{Request, Response};
use super::json::Json;
use super::{no_keyspace, AdminBackend};
use cairn_cluster::node::HostId;

/// Handles the paths this module owns; `None` when the path is not one of them.
pub fn handle(backend: &dyn AdminBackend, req: &Request, seg: &[&str]) -> Option<Response> {
    let get = req.method == "GET";
    let post = req.method == "POST";
    let r = match seg {
        ["storage_service", "load"] if get => Response::ok(Json::Float(load(backend)).to_text()),
        ["storage_service", "load_map"] if get => Response::ok(
            Json::Arr(
                backend
                    .members()
                    .into_iter()
                    .filter_map(|m| {
                        Some(Json::obj([
                            ("key", Json::Str(m.address)),
                            ("value", Json::Float(m.load?)),
                        ]))
                    })
                    .collect(),
            )
            .to_text(),
        ),
        // ScyllaDB's path: each schema version and the nodes reporting it.
        ["storage_proxy", "schema_versions"] if get => {
            let mut versions: Vec<(String, Vec<String>)> = Vec::new();
            for m in backend.members() {
                let v = m.schema_version.unwrap_or_else(|| "UNREACHABLE".into());
                match versions.iter_mut().find(|(k, _)| *k == v) {
                    Some((_, addrs)) => addrs.push(m.address),
                    None => versions.push((v, vec![m.address])),
                }
            }
            Response::ok(
                Json::Arr(
                    versions
                        .into_iter()
                        .map(|(k, v)| {
                            Json::obj([
                                ("key", Json::Str(k)),
                                ("value", Json::Arr(v.into_iter().map(Json::Str).collect())),
                            ])
                        })
                        .collect(),
                )
                .to_text(),
            )
        }
        ["storage_service", "gossiping"] if get => Response::ok(Json::Bool(true).to_text()),
        ["storage_service", "native_transport"] if get => {
            Response::ok(Json::Bool(backend.native_transport_running()).to_text())
        }
        ["storage_service", "rpc_server"] if get => Response::ok(Json::Bool(false).to_text()),
        ["storage_service", "generation_number"] if get => {
            Response::ok(Json::Int(backend.node().generation).to_text())
        }
        ["storage_service", "schema_version"] if get => {
            Response::ok(Json::Str(backend.schema_version()).to_text())
        }
        ["storage_service", "operation_mode"] if get => Response::ok(Json::str("NORMAL").to_text()),
        ["storage_service", "is_starting"] if get => Response::ok(Json::Bool(false).to_text()),
        ["storage_service", "nodes", "joining"] if get => Response::ok(
            Json::Arr(
                backend
                    .members()
                    .into_iter()
                    .filter(|m| m.joining)
                    .map(|m| Json::Str(m.address))
                    .collect(),
            )
            .to_text(),
        ),
        ["storage_service", "nodes", "leaving" | "moving"] if get => {
            Response::ok(Json::Arr(Vec::new()).to_text())
        }
        ["storage_service", "tokens"] if get => Response::ok(tokens(backend).to_text()),
        ["storage_service", "tokens", endpoint] if get => {
            match backend
                .members()
                .into_iter()
                .find(|m| m.address == *endpoint)
            {
                Some(m) => {
                    Response::ok(Json::Arr(m.tokens.into_iter().map(Json::Str).collect()).to_text())
                }
                None => Response::error(400, format!("Unknown endpoint {endpoint}")),
            }
        }
        ["storage_service", "tokens_endpoint"] if get => {
            let mut pairs: Vec<(i64, String, String)> = Vec::new();
            for m in backend.members() {
                for t in m.tokens {
                    pairs.push((t.parse().unwrap_or(i64::MIN), t, m.address.clone()));
                }
            }
            pairs.sort();
            Response::ok(
                Json::Arr(
                    pairs
                        .into_iter()
                        .map(|(_, t, a)| {
                            Json::obj([("key", Json::Str(t)), ("value", Json::Str(a))])
                        })
                        .collect(),
                )
                .to_text(),
            )
        }
        ["storage_service", "describe_ring", ks] if get => {
            if !backend.keyspaces().iter().any(|k| k == ks) {
                return Some(no_keyspace(ks));
            }
            Response::ok(describe_ring(backend, ks).to_text())
        }
        ["storage_service", "ownership"] if get => Response::ok(ownership(backend, None).to_text()),
        ["storage_service", "ownership", ks] if get => {
            if !backend.keyspaces().iter().any(|k| k == ks) {
                return Some(no_keyspace(ks));
            }
            Response::ok(ownership(backend, Some(ks)).to_text())
        }
        ["storage_service", "natural_endpoints", ks] if get => {
            let (Some(table), Some(key)) = (req.param("cf"), req.param("key")) else {
                return Some(Response::error(
                    400,
                    "natural_endpoints needs `cf` and `key`",
                ));
            };
            match natural_endpoints(backend, ks, table, key) {
                Ok(endpoints) => Response::ok(endpoints.to_text()),
                Err(e) => Response::error(400, e),
            }
        }
        ["gossiper", "endpoint", which @ ("live" | "down")] if get => {
            let live = *which == "live";
            Response::ok(
                Json::Arr(
                    backend
                        .members()
                        .into_iter()
                        .filter(|m| m.up == live)
                        .map(|m| Json::Str(m.address))
                        .collect(),
                )
                .to_text(),
            )
        }
        // `?host=ADDR` asks about another member (ScyllaDB's parameter).
        ["snitch", which @ ("datacenter" | "rack")] if get => {
            let member = match req.param("host") {
                None => None,
                Some(host) => match backend.members().into_iter().find(|m| m.address == host) {
                    Some(m) => Some(m),
                    None => return Some(Response::error(400, format!("Unknown host {host}"))),
                },
            };
            let n = backend.node();
            let value = match (*which, member) {
                ("datacenter", Some(m)) => m.data_center,
                ("datacenter", None) => n.data_center,
                (_, Some(m)) => m.rack,
                (_, None) => n.rack,
            };
            Response::ok(Json::Str(value).to_text())
        }
        ["snitch", "name"] if get => Response::ok(Json::Str(backend.node().snitch).to_text()),
        ["system", "uptime_ms"] if get => {
            Response::ok(Json::uint(backend.node().started.elapsed().as_millis() as u64).to_text())
        }
        ["system", "memory"] if get => Response::ok(memory(backend).to_text()),
        ["cache_service", "invalidate_row_cache"] if post => {
            if let Some((k, _)) = req.params.first() {
                return Some(Response::error(400, format!("Unexpected parameter '{k}'")));
            }
            backend.database().invalidate_row_cache();
            Response::void()
        }
        ["cache_service", "invalidate_key_cache"] if post => {
            if let Some((k, _)) = req.params.first() {
                return Some(Response::error(400, format!("Unexpected parameter '{k}'")));
            }
            // The cached index pages are what Cassandra's key cache stands for.
            if let Some(cache) = backend.database().row_cache() {
                cache.drop_index_pages();
            }
            Response::void()
        }
        ["cache_service", "invalidate_counter_cache"] if post => {
            if let Some((k, _)) = req.params.first() {
                return Some(Response::error(400, format!("Unexpected parameter '{k}'")));
            }
            // No counter cache: nothing to drop, as ScyllaDB's stub.
            Response::void()
        }
        ["cache_service", "metrics", which @ ("row" | "key"), metric] if get => {
            cache_metric(backend, which, metric)
        }
        ["cache_service", "metrics", "counter", metric] if get => match *metric {
            "entries" | "size" | "capacity" | "hits" | "requests" | "misses" => {
                Response::ok(Json::Int(0).to_text())
            }
            "hit_rate" => Response::ok(Json::Float(0.0).to_text()),
            _ => Response::error(404, format!("Unknown cache metric {metric}")),
        },
        // ScyllaDB reclaims all of its LSA memory, which evicts the whole row cache; so does
        // this, entry by entry from the LRU's old end (seed 004 forces an invalidation so).
        ["lsa", "compact"] if post => {
            if let Some(cache) = backend.database().row_cache() {
                cache.evict_all();
            }
            Response::void()
        }
        // "Drop in-memory caches for data which is in sstables".
        ["system", "drop_sstable_caches"] if post => {
            backend.database().invalidate_row_cache();
            if let Some(cache) = backend.database().row_cache() {
                cache.drop_index_pages();
            }
            Response::void()
        }
        _ if known(seg) => Response::error(
            405,
            format!("Method {} not allowed for {}", req.method, req.path),
        ),
        _ => return None,
    };
    Some(r)
}

/// Whether some method serves this path (to answer 405 rather than 404).
fn known(seg: &[&str]) -> bool {
    matches!(
        seg,
        [
            "storage_service",
            "load"
                | "load_map"
                | "gossiping"
                | "native_transport"
                | "rpc_server"
                | "generation_number"
                | "operation_mode"
                | "schema_version"
                | "is_starting"
                | "tokens"
                | "tokens_endpoint"
                | "ownership"
        ] | [
            "storage_service",
            "nodes" | "tokens" | "describe_ring" | "ownership" | "natural_endpoints",
            _
        ] | ["gossiper", "endpoint", _]
            | ["snitch", _]
            | ["system", "uptime_ms" | "memory" | "drop_sstable_caches"]
            | ["lsa", "compact"]
            | ["cache_service", _]
            | ["cache_service", "metrics", _, _]
    )
}

/// `/cache_service/metrics/{row,key}/{metric}`: the row cache (entries are cached
/// partitions, hits and misses partition lookups) or the cached index pages, Cairn's key cache
/// (entries are pages, hits and misses page lookups), as ScyllaDB reports them to nodetool:
/// size the bytes used, capacity the most they may take; all zero without a cache.
fn cache_metric(backend: &dyn AdminBackend, which: &str, metric: &str) -> Response {
    let s = backend
        .database()
        .row_cache()
        .map(|c| c.stats())
        .unwrap_or_default();
    let (entries, size, capacity, hits, misses) = if which == "row" {
        (
            s.partitions,
            s.bytes_used,
            s.bytes_total,
            s.partition_hits,
            s.partition_misses,
        )
    } else {
        let p = s.index_pages;
        (p.pages, p.bytes, s.index_bytes_total, p.hits, p.misses)
    };
    let requests = hits + misses;
    let value = match metric {
        "entries" => Json::uint(entries),
        "size" => Json::uint(size),
        "capacity" => Json::uint(capacity),
        "hits" => Json::uint(hits),
        "misses" => Json::uint(misses),
        "requests" => Json::uint(requests),
        "hit_rate" => Json::Float(if requests == 0 {
            0.0
        } else {
            hits as f64 / requests as f64
        }),
        _ => return Response::error(404, format!("Unknown cache metric {metric}")),
    };
    Response::ok(value.to_text())
}

/// Bytes of live sstables over every table (Cassandra's load).
fn load(backend: &dyn AdminBackend) -> f64 {
    live_disk_bytes(backend.database())
}

/// Bytes of live sstables over every table of `db`.
pub fn live_disk_bytes(db: &cairn_engine::Database) -> f64 {
    db.tables()
        .iter()
        .filter_map(|t| t.stats().ok())
        .map(|s| s.live_disk_bytes as f64)
        .sum()
}

fn tokens(backend: &dyn AdminBackend) -> Json {
    Json::Arr(backend.node().tokens.into_iter().map(Json::Str).collect())
}

/// The ring as keyspace `ks` replicates it: one range per token, each ending at its token
/// and starting at the previous one (wrapping), with the replicas the keyspace's strategy
/// places it on (`cairn_cluster::placement`), primary first.
fn describe_ring(backend: &dyn AdminBackend, ks: &str) -> Json {
    let ring = backend.ring();
    let Some(strategy) = backend.placement(ks) else {
        return Json::Arr(Vec::new());
    };
    let local = local_host(backend);
    let ranges = ring
        .ranges()
        .into_iter()
        .map(|(range, _)| {
            let replicas: Vec<_> = strategy
                .replicas(&ring, range.end, local)
                .into_iter()
                .map(|i| &ring.endpoints()[i])
                .collect();
            let addresses = Json::Arr(
                replicas
                    .iter()
                    .map(|e| Json::Str(e.address.to_string()))
                    .collect(),
            );
            Json::obj([
                ("start_token", Json::Str(range.start.to_string())),
                ("end_token", Json::Str(range.end.to_string())),
                ("endpoints", addresses.clone()),
                ("rpc_endpoints", addresses),
                (
                    "endpoint_details",
                    Json::Arr(
                        replicas
                            .iter()
                            .map(|e| {
                                Json::obj([
                                    ("host", Json::Str(e.address.to_string())),
                                    ("datacenter", Json::str(&e.datacenter)),
                                    ("rack", Json::str(&e.rack)),
                                ])
                            })
                            .collect(),
                    ),
                ),
            ])
        })
        .collect();
    Json::Arr(ranges)
}

/// The addresses of the replicas of `key` (its text form, see
/// `cairn_cql::exec::key_text`) of table `ks.table`, primary first.
fn natural_endpoints(
    backend: &dyn AdminBackend,
    ks: &str,
    table: &str,
    key: &str,
) -> Result<Json, String> {
    let strategy = backend
        .placement(ks)
        .ok_or_else(|| format!("Keyspace {ks} does not exist"))?;
    let t = backend
        .database()
        .table(ks, table)
        .ok_or_else(|| format!("Table {ks}.{table} does not exist"))?;
    let key = cairn_cql::exec::key_text::partition_key_from_text(&t.schema(), key)
        .map_err(|e| e.to_string())?;
    let token = cairn_engine::model::token::token_of(&key);
    let ring = backend.ring();
    Ok(Json::Arr(
        strategy
            .replicas(&ring, token, local_host(backend))
            .into_iter()
            .map(|i| Json::Str(ring.endpoints()[i].address.to_string()))
            .collect(),
    ))
}

/// This node's host id.
fn local_host(backend: &dyn AdminBackend) -> Option<HostId> {
    HostId::parse(&backend.node().host_id)
}

/// Each node's share of the ring: as the primary owner of its ranges without a keyspace,
/// and as any replica of keyspace `ks` with one (nodetool's effective ownership).
fn ownership(backend: &dyn AdminBackend, ks: Option<&str>) -> Json {
    let ring = backend.ring();
    let owns = match ks.and_then(|ks| backend.placement(ks)) {
        None => ring.primary_ownership(),
        Some(strategy) => {
            let local = local_host(backend);
            let mut owns = vec![0.0; ring.endpoints().len()];
            for (range, _) in ring.ranges() {
                for i in strategy.replicas(&ring, range.end, local) {
                    owns[i] += range.fraction();
                }
            }
            owns
        }
    };
    Json::Arr(
        ring.endpoints()
            .iter()
            .zip(owns)
            .map(|(e, o)| {
                Json::obj([
                    ("key", Json::Str(e.address.to_string())),
                    ("value", Json::Float(o)),
                ])
            })
            .collect(),
    )
}

/// Cairn's memory figures (`nodetool info`'s Heap and Off Heap lines): the process RSS, the
/// machine's memory, memtables and in-memory sstable metadata, in bytes.
fn memory(backend: &dyn AdminBackend) -> Json {
    let db = backend.database();
    let metadata: usize = db
        .tables()
        .iter()
        .filter_map(|t| t.stats().ok())
        .map(|s| s.metadata_memory.0 + s.metadata_memory.1 + s.metadata_memory.2)
        .sum();
    Json::obj([
        (
            "rss",
            Json::uint(proc_kib("/proc/self/status", "VmRSS:") * 1024),
        ),
        (
            "total",
            Json::uint(proc_kib("/proc/meminfo", "MemTotal:") * 1024),
        ),
        ("memtables", Json::uint(db.memtable_bytes() as u64)),
        ("sstable_metadata", Json::uint(metadata as u64)),
    ])
}

/// A `Name:   N kB` line of a /proc file, in KiB (0 when unreadable, e.g. not Linux).
fn proc_kib(path: &str, key: &str) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}
