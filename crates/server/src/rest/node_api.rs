//! The node's own figures on ScyllaDB's REST paths — storage service (load, generation,
//! tokens, ring, ownership, gossip and native transport state), gossiper, snitch, uptime —
//! and the cache service, for `nodetool status`, `info` and `describering`.
//!
//! Cairn is a single node: it owns the whole ring with one token (system.local's `tokens`),
//! it is always `UN` (up, normal) to itself, and it has no gossip; `gossiping` reports true
//! while the node serves, as a one-node Cassandra cluster does.
//!
//! The cache service's invalidations exist and validate their request, but are no-ops until
//! the row cache exists (there is no key or counter cache); its metrics are zero.

use super::http::{Request, Response};
use super::json::Json;
use super::{no_keyspace, AdminBackend};

/// Handles the paths this module owns; `None` when the path is not one of them.
pub fn handle(backend: &dyn AdminBackend, req: &Request, seg: &[&str]) -> Option<Response> {
    let get = req.method == "GET";
    let post = req.method == "POST";
    let r = match seg {
        ["storage_service", "load"] if get => Response::ok(Json::Float(load(backend)).to_text()),
        ["storage_service", "load_map"] if get => {
            let n = backend.node();
            Response::ok(
                Json::Arr(vec![Json::obj([
                    ("key", Json::Str(n.address)),
                    ("value", Json::Float(load(backend))),
                ])])
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
        ["storage_service", "nodes", "joining" | "leaving" | "moving"] if get => {
            Response::ok(Json::Arr(Vec::new()).to_text())
        }
        ["storage_service", "tokens"] if get => Response::ok(tokens(backend).to_text()),
        ["storage_service", "tokens", endpoint] if get => {
            if *endpoint == backend.node().address {
                Response::ok(tokens(backend).to_text())
            } else {
                Response::error(400, format!("Unknown endpoint {endpoint}"))
            }
        }
        ["storage_service", "tokens_endpoint"] if get => {
            let n = backend.node();
            Response::ok(
                Json::Arr(
                    n.tokens
                        .iter()
                        .map(|t| {
                            Json::obj([("key", Json::str(t)), ("value", Json::str(&n.address))])
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
            Response::ok(describe_ring(backend).to_text())
        }
        ["storage_service", "ownership"] if get => Response::ok(ownership(backend).to_text()),
        ["storage_service", "ownership", ks] if get => {
            if !backend.keyspaces().iter().any(|k| k == ks) {
                return Some(no_keyspace(ks));
            }
            Response::ok(ownership(backend).to_text())
        }
        ["gossiper", "endpoint", "live"] if get => {
            Response::ok(Json::Arr(vec![Json::Str(backend.node().address)]).to_text())
        }
        ["gossiper", "endpoint", "down"] if get => Response::ok(Json::Arr(Vec::new()).to_text()),
        ["snitch", "datacenter"] if get => {
            Response::ok(Json::Str(backend.node().data_center).to_text())
        }
        ["snitch", "rack"] if get => Response::ok(Json::Str(backend.node().rack).to_text()),
        ["snitch", "name"] if get => Response::ok(Json::str("SimpleSnitch").to_text()),
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
            "nodes" | "tokens" | "describe_ring" | "ownership",
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
    backend
        .database()
        .tables()
        .iter()
        .filter_map(|t| t.stats().ok())
        .map(|s| s.live_disk_bytes as f64)
        .sum()
}

fn tokens(backend: &dyn AdminBackend) -> Json {
    Json::Arr(backend.node().tokens.into_iter().map(Json::Str).collect())
}

/// The ring: one range per token, each ending at its token and starting at the previous
/// one (wrapping), every range on this node.
fn describe_ring(backend: &dyn AdminBackend) -> Json {
    let n = backend.node();
    let mut tokens: Vec<(i64, &String)> = n
        .tokens
        .iter()
        .map(|t| (t.parse::<i64>().unwrap_or(0), t))
        .collect();
    tokens.sort();
    let endpoint = Json::Arr(vec![Json::str(&n.address)]);
    let ranges = (0..tokens.len())
        .map(|i| {
            let start = tokens[(i + tokens.len() - 1) % tokens.len()].1;
            let end = tokens[i].1;
            Json::obj([
                ("start_token", Json::str(start)),
                ("end_token", Json::str(end)),
                ("endpoints", endpoint.clone()),
                ("rpc_endpoints", endpoint.clone()),
                (
                    "endpoint_details",
                    Json::Arr(vec![Json::obj([
                        ("host", Json::str(&n.address)),
                        ("datacenter", Json::str(&n.data_center)),
                        ("rack", Json::str(&n.rack)),
                    ])]),
                ),
            ])
        })
        .collect();
    Json::Arr(ranges)
}

fn ownership(backend: &dyn AdminBackend) -> Json {
    Json::Arr(vec![Json::obj([
        ("key", Json::Str(backend.node().address)),
        ("value", Json::Float(1.0)),
    ])])
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
