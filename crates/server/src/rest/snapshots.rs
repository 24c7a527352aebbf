//! Snapshots, backups and loading sstables on ScyllaDB's REST paths — what `nodetool
//! snapshot`, `listsnapshots`, `clearsnapshot`, `enablebackup`, `disablebackup`,
//! `statusbackup` and `refresh` call. The engine does the work (`cairn_engine::snapshot`).
//!
//! | method | path | |
//! |---|---|---|
//! | GET | `/storage_service/snapshots` | `[{"key": tag, "value": [{"ks", "cf", "total", "live", …}]}]`: `total` is the size on disk, `live` the true size (bytes only the snapshot keeps); Cairn adds `created_at`, `expires_at` (ISO-8601 or null) and `ephemeral` |
//! | POST | `/storage_service/snapshots?tag=&kn=ks1,ks2&cf=t1,t2&sf=&ttl=` | take a snapshot (`kn` empty: every keyspace; `cf` needs one keyspace; `sf`: skip flush; `ttl`, Cairn's: Cassandra's duration text, at least 60 s) |
//! | DELETE | `/storage_service/snapshots?tag=&kn=&cf=` | clear snapshots (no tag: all of them) |
//! | GET | `/storage_service/snapshots/size/true` | true size of every snapshot |
//! | POST | `/storage_service/sstables/{ks}?cf=t[&load_and_stream=][&primary_replica_only=]` | load `upload/` into the table (`refresh`) |
//! | GET, POST | `/storage_service/incremental_backups[?value=true]` | incremental backups switch |

use super::http::{Request, Response};
use super::json::Json;
use super::{engine_error, no_keyspace, no_table, AdminBackend};
use cairn_engine::snapshot::manifest::format_instant;
use cairn_engine::snapshot::{SnapshotDetails, SnapshotOptions};
use cairn_engine::table::Table;
use std::sync::Arc;
use std::time::Duration;

/// Handles the paths this module owns; `None` when the path is not one of them.
pub fn handle(backend: &dyn AdminBackend, req: &Request, seg: &[&str]) -> Option<Response> {
    let m = req.method.as_str();
    let r = match (m, seg) {
        ("GET", ["storage_service", "snapshots"]) => list(backend),
        ("POST", ["storage_service", "snapshots"]) => take(backend, req),
        ("DELETE", ["storage_service", "snapshots"]) => clear(backend, req),
        ("GET", ["storage_service", "snapshots", "size", "true"]) => {
            Response::ok(Json::uint(backend.database().snapshots_true_size()).to_text())
        }
        ("POST", ["storage_service", "sstables", ks]) => refresh(backend, ks, req),
        ("GET", ["storage_service", "incremental_backups"]) => {
            Response::ok(Json::Bool(backend.database().incremental_backups()).to_text())
        }
        ("POST", ["storage_service", "incremental_backups"]) => match bool_param(req, "value") {
            Ok(Some(on)) => {
                backend.database().set_incremental_backups(on);
                Response::void()
            }
            Ok(None) => Response::error(400, "Missing mandatory parameter 'value'"),
            Err(r) => r,
        },
        (
            _,
            ["storage_service", "snapshots" | "incremental_backups"]
            | ["storage_service", "snapshots", "size", "true"]
            | ["storage_service", "sstables", _],
        ) => Response::error(405, format!("Method {m} not allowed for {}", req.path)),
        _ => return None,
    };
    Some(r)
}

/// A boolean query parameter (`true` / `false`), if present.
fn bool_param(req: &Request, name: &str) -> Result<Option<bool>, Response> {
    match req.param(name) {
        None => Ok(None),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(Some(true)),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(Some(false)),
        Some(v) => Err(Response::error(
            400,
            format!("Invalid value '{v}' for parameter '{name}': must be true or false"),
        )),
    }
}

/// Comma-separated names, trimmed, empty ones dropped.
fn list_param(req: &Request, name: &str) -> Vec<String> {
    req.param(name)
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The tables a snapshot request names: every table of every keyspace (`kn` empty), of
/// the keyspaces in `kn`, or the tables `cf` of the one keyspace in `kn`. Internal tables
/// (the schema store) are included, as Cassandra snapshots its system tables.
fn targets(backend: &dyn AdminBackend, req: &Request) -> Result<Vec<Arc<Table>>, Response> {
    let db = backend.database();
    let keyspaces = list_param(req, "kn");
    let tables = list_param(req, "cf");
    let known = backend.keyspaces();
    for ks in &keyspaces {
        if !known.contains(ks) {
            return Err(no_keyspace(ks));
        }
    }
    if !tables.is_empty() {
        let [ks] = keyspaces.as_slice() else {
            return Err(Response::error(
                400,
                "Only one keyspace allowed when specifying a column family",
            ));
        };
        return tables
            .iter()
            .map(|t| db.table(ks, t).ok_or_else(|| no_table(ks, t)))
            .collect();
    }
    let mut all: Vec<Arc<Table>> = db
        .tables()
        .into_iter()
        .filter(|t| keyspaces.is_empty() || keyspaces.contains(&t.schema().keyspace))
        .collect();
    all.sort_by_key(|t| {
        let s = t.schema();
        (s.keyspace.clone(), s.name.clone())
    });
    Ok(all)
}

fn take(backend: &dyn AdminBackend, req: &Request) -> Response {
    let tables = match targets(backend, req) {
        Ok(t) => t,
        Err(r) => return r,
    };
    let skip_flush = match bool_param(req, "sf") {
        Ok(v) => v.unwrap_or(false),
        Err(r) => return r,
    };
    let ttl = match req.param("ttl").map(parse_ttl).transpose() {
        Ok(t) => t,
        Err(message) => return Response::error(400, message),
    };
    let tag = match req.param("tag").filter(|t| !t.is_empty()) {
        Some(t) => t.to_string(),
        None => cairn_engine::snapshot::now_ms().to_string(),
    };
    let opts = SnapshotOptions { skip_flush, ttl };
    match backend.database().snapshot(&tables, &tag, &opts) {
        Ok(()) => Response::void(),
        Err(e) => snapshot_error(e),
    }
}

/// Errors of a snapshot request: the caller's mistakes are 400s.
fn snapshot_error(e: cairn_engine::Error) -> Response {
    match e {
        e @ (cairn_engine::Error::SnapshotExists { .. }
        | cairn_engine::Error::InvalidSnapshotTag { .. }) => Response::error(400, e.to_string()),
        other => engine_error(other),
    }
}

/// Cassandra's duration text (`30m`, `1h`, `2d`, `90s`, `1h30m`) for a snapshot's TTL; as
/// Cassandra, at least a minute.
pub fn parse_ttl(text: &str) -> Result<Duration, String> {
    let bad = || format!("Invalid duration: {text}. Accepted units: d, h, m, s, ms, us, µs, ns");
    let mut total = Duration::ZERO;
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(bad());
    }
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(bad());
        }
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit = rest
            .find(|c: char| c.is_ascii_digit())
            .map_or(rest, |i| &rest[..i]);
        let d = match unit.to_ascii_lowercase().as_str() {
            "d" => Duration::from_secs(n.saturating_mul(86_400)),
            "h" => Duration::from_secs(n.saturating_mul(3_600)),
            "m" => Duration::from_secs(n.saturating_mul(60)),
            "s" => Duration::from_secs(n),
            "ms" => Duration::from_millis(n),
            "us" | "µs" => Duration::from_micros(n),
            "ns" => Duration::from_nanos(n),
            _ => return Err(bad()),
        };
        total = total.saturating_add(d);
        rest = &rest[unit.len()..];
    }
    if total < Duration::from_secs(60) {
        return Err(format!(
            "ttl for snapshot must be at least 60 seconds (got {text})"
        ));
    }
    Ok(total)
}

fn clear(backend: &dyn AdminBackend, req: &Request) -> Response {
    let keyspaces = list_param(req, "kn");
    let known = backend.keyspaces();
    let db = backend.database();
    // A dropped keyspace's snapshots are still there to clear.
    let listed = db.list_snapshots();
    for ks in &keyspaces {
        if !known.contains(ks) && !listed.iter().any(|d| &d.keyspace == ks) {
            return no_keyspace(ks);
        }
    }
    let tag = req.param("tag").filter(|t| !t.is_empty());
    let table = req.param("cf").filter(|t| !t.is_empty());
    match db.clear_snapshots(tag, &keyspaces, table) {
        Ok(_) => Response::void(),
        Err(e) => engine_error(e),
    }
}

fn list(backend: &dyn AdminBackend) -> Response {
    let details = backend.database().list_snapshots();
    let mut by_tag: Vec<(String, Vec<Json>)> = Vec::new();
    for d in &details {
        let entry = detail_json(d);
        match by_tag.iter_mut().find(|(t, _)| t == &d.tag) {
            Some((_, v)) => v.push(entry),
            None => by_tag.push((d.tag.clone(), vec![entry])),
        }
    }
    Response::ok(
        Json::Arr(
            by_tag
                .into_iter()
                .map(|(tag, v)| Json::obj([("key", Json::Str(tag)), ("value", Json::Arr(v))]))
                .collect(),
        )
        .to_text(),
    )
}

fn detail_json(d: &SnapshotDetails) -> Json {
    Json::obj([
        ("ks", Json::str(&d.keyspace)),
        ("cf", Json::str(&d.table)),
        ("total", Json::uint(d.size_on_disk)),
        ("live", Json::uint(d.true_size)),
        ("created_at", Json::Str(format_instant(d.created_at_ms))),
        (
            "expires_at",
            d.expires_at_ms
                .map_or(Json::Null, |ms| Json::Str(format_instant(ms))),
        ),
        ("ephemeral", Json::Bool(d.ephemeral)),
    ])
}

fn refresh(backend: &dyn AdminBackend, ks: &str, req: &Request) -> Response {
    if !backend.keyspaces().iter().any(|k| k == ks) {
        return no_keyspace(ks);
    }
    let Some(cf) = req.param("cf").filter(|c| !c.is_empty()) else {
        return Response::error(400, "Missing mandatory parameter 'cf'");
    };
    // On one node, loading and streaming to the replicas that own the data is loading here:
    // this node owns every token.
    for flag in ["load_and_stream", "primary_replica_only", "skip_cleanup"] {
        if let Err(r) = bool_param(req, flag) {
            return r;
        }
    }
    match backend.database().refresh(ks, cf) {
        Ok(report) => {
            tracing::info!(
                keyspace = ks,
                table = cf,
                sstables = report.generations.len(),
                bytes = report.bytes_verified,
                "refresh loaded sstables from upload/"
            );
            Response::void()
        }
        Err(e) => engine_error(e),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn ttls_as_cassandra_writes_them() {
        assert_eq!(parse_ttl("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_ttl("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_ttl("2d").unwrap(), Duration::from_secs(172_800));
        assert_eq!(parse_ttl("90s").unwrap(), Duration::from_secs(90));
        assert!(parse_ttl("59s")
            .unwrap_err()
            .contains("at least 60 seconds"));
        for bad in ["", "h", "10", "10x", "-1h", "1.5h"] {
            assert!(parse_ttl(bad).is_err(), "{bad}");
        }
    }
}
