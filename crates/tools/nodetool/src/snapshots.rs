//! `nodetool snapshot`, `listsnapshots`, `clearsnapshot`, `enablebackup`, `disablebackup`,
//! `statusbackup` and `refresh`, with Cassandra 5's output and messages (`refresh` prints
//! nothing, as ScyllaDB's, which loads from `upload/` as Cairn does).

use crate::args::Invocation;
use crate::client::Client;
use crate::error::{bad_use, unexpected, NodetoolError};
use crate::format::table;
use crate::lookup::check_keyspace;
use crate::reports::file_size;
use cairn_server::rest::http::percent_encode;
use cairn_server::rest::json::Json;

/// A runtime error (exit 2), as nodetool prints an exception from its command.
fn failure(message: impl std::fmt::Display) -> NodetoolError {
    NodetoolError {
        message: format!("error: {message}"),
        exit_code: 2,
    }
}

fn option<'a>(inv: &'a Invocation, name: &str) -> Option<&'a str> {
    inv.options
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// `snapshot [-t tag] [-sf] [--ttl d] [-cf table] [keyspace…] | -kt ks.t,…`
pub fn snapshot(client: &Client, inv: &Invocation) -> Result<String, NodetoolError> {
    let tag = option(inv, "tag").map_or_else(
        || cairn_engine::snapshot::now_ms().to_string(),
        str::to_string,
    );
    let skip_flush = option(inv, "skip-flush").is_some();
    let ttl = option(inv, "ttl");
    let table = option(inv, "table");
    let kt = option(inv, "kt-list").map(|s| s.replace(' ', ""));
    let mut options = format!("{{skipFlush={skip_flush}");
    if let Some(t) = ttl {
        options.push_str(&format!(", ttl={t}"));
    }
    options.push('}');
    let sf = skip_flush.to_string();
    let mut common: Vec<(&str, &str)> = vec![("tag", &tag), ("sf", &sf)];
    if let Some(t) = ttl {
        common.push(("ttl", t));
    }
    let mut out = String::from("Requested creating snapshot(s) for ");
    match kt.filter(|k| !k.is_empty()) {
        Some(kt) => {
            if !inv.args.is_empty() || table.is_some() {
                return Err(failure("When specifying the Keyspace table list (using -kt,--kt-list,-kc,--kc.list), you must not also specify keyspaces to snapshot"));
            }
            // One request per keyspace, its tables together (the REST API takes the tables
            // of one keyspace).
            let mut by_ks: Vec<(String, Vec<String>)> = Vec::new();
            for item in kt.split(',').filter(|s| !s.is_empty()) {
                let Some((ks, t)) = item.split_once('.') else {
                    return Err(failure(format!(
                        "Cannot take a snapshot on secondary index or invalid column family name. You must supply a column family name in the form of keyspace.columnfamily: {item}"
                    )));
                };
                check_keyspace(client, ks)?;
                match by_ks.iter_mut().find(|(k, _)| k == ks) {
                    Some((_, ts)) => ts.push(t.to_string()),
                    None => by_ks.push((ks.to_string(), vec![t.to_string()])),
                }
            }
            out.push_str(&format!(
                "[{kt}] with snapshot name [{tag}] and options {options}\n"
            ));
            for (ks, tables) in &by_ks {
                let cf = tables.join(",");
                let mut params = common.clone();
                params.push(("kn", ks));
                params.push(("cf", &cf));
                client.post("/storage_service/snapshots", &params)?;
            }
        }
        None => {
            let keyspaces = &inv.args;
            if table.is_some() && keyspaces.len() != 1 {
                return Err(failure(
                    "When specifying the table for a snapshot, you must specify one and only one keyspace",
                ));
            }
            for ks in keyspaces {
                check_keyspace(client, ks)?;
            }
            if keyspaces.is_empty() {
                out.push_str("[all keyspaces]");
            } else {
                out.push_str(&format!("[{}]", keyspaces.join(", ")));
            }
            out.push_str(&format!(
                " with snapshot name [{tag}] and options {options}\n"
            ));
            let kn = keyspaces.join(",");
            let mut params = common.clone();
            if !kn.is_empty() {
                params.push(("kn", &kn));
            }
            if let Some(t) = table {
                params.push(("cf", t));
            }
            client.post("/storage_service/snapshots", &params)?;
        }
    }
    out.push_str(&format!("Snapshot directory: {tag}\n"));
    Ok(out)
}

/// `listsnapshots [-nt] [-e]`
pub fn listsnapshots(client: &Client, inv: &Invocation) -> Result<String, NodetoolError> {
    if let Some(extra) = inv.args.first() {
        return Err(bad_use(format!("Found unexpected parameters: [{extra}]")));
    }
    let no_ttl = option(inv, "no-ttl").is_some();
    let ephemeral = option(inv, "ephemeral").is_some();
    let v = client.get("/storage_service/snapshots", &[])?;
    let groups = v.as_array().ok_or_else(|| unexpected("snapshots", &v))?;
    let mut out = String::from("Snapshot Details: \n");
    let mut header = vec![
        "Snapshot name",
        "Keyspace name",
        "Column family name",
        "True size",
        "Size on disk",
        "Creation time",
        "Expiration time",
    ];
    if ephemeral {
        header.push("Ephemeral");
    }
    let mut rows = vec![header.iter().map(|s| s.to_string()).collect::<Vec<_>>()];
    for g in groups {
        let tag = g.get("key").and_then(Json::as_str).unwrap_or("");
        for d in g.get("value").and_then(Json::as_array).unwrap_or(&[]) {
            let expires = d.get("expires_at").and_then(Json::as_str);
            let is_ephemeral = d.get("ephemeral").and_then(Json::as_bool).unwrap_or(false);
            if (no_ttl && expires.is_some()) || (is_ephemeral && !ephemeral) {
                continue;
            }
            let s = |k: &str| d.get(k).and_then(Json::as_str).unwrap_or("").to_string();
            let bytes = |k: &str| d.get(k).and_then(Json::as_i64).unwrap_or(0) as f64;
            let mut row = vec![
                tag.to_string(),
                s("ks"),
                s("cf"),
                file_size(bytes("live")),
                file_size(bytes("total")),
                s("created_at"),
                expires.unwrap_or("").to_string(),
            ];
            if ephemeral {
                row.push(is_ephemeral.to_string());
            }
            rows.push(row);
        }
    }
    if rows.len() == 1 {
        out.push_str("There are no snapshots\n");
        return Ok(out);
    }
    let total = client.get("/storage_service/snapshots/size/true", &[])?;
    let total = total
        .as_i64()
        .ok_or_else(|| unexpected("true snapshots size", &total))?;
    out.push_str(&table(&rows));
    out.push_str(&format!(
        "\nTotal TrueDiskSpaceUsed: {}\n\n",
        file_size(total as f64)
    ));
    Ok(out)
}

/// `clearsnapshot [-t tag | --all] [keyspace…]`
pub fn clearsnapshot(client: &Client, inv: &Invocation) -> Result<String, NodetoolError> {
    let tag = option(inv, "tag").unwrap_or("");
    let all = option(inv, "all").is_some();
    if tag.is_empty() && !all {
        return Err(failure("Specify snapshot name or --all"));
    }
    if !tag.is_empty() && all {
        return Err(failure("Specify only one of snapshot name or --all"));
    }
    let keyspaces = &inv.args;
    let mut out = String::from("Requested clearing snapshot(s) for ");
    if keyspaces.is_empty() {
        out.push_str("[all keyspaces]");
    } else {
        out.push_str(&format!("[{}]", keyspaces.join(", ")));
    }
    if tag.is_empty() {
        out.push_str(" with [all snapshots]\n");
    } else {
        out.push_str(&format!(" with snapshot name [{tag}]\n"));
    }
    let kn = keyspaces.join(",");
    let mut params: Vec<(&str, &str)> = Vec::new();
    if !tag.is_empty() {
        params.push(("tag", tag));
    }
    if !kn.is_empty() {
        params.push(("kn", &kn));
    }
    client.request("DELETE", "/storage_service/snapshots", &params)?;
    Ok(out)
}

/// `enablebackup`, `disablebackup`, `statusbackup`
pub fn backup(client: &Client, inv: &Invocation) -> Result<String, NodetoolError> {
    if let Some(extra) = inv.args.first() {
        return Err(bad_use(format!("Found unexpected parameters: [{extra}]")));
    }
    let path = "/storage_service/incremental_backups";
    match inv.command.as_str() {
        "enablebackup" => client
            .post(path, &[("value", "true")])
            .map(|_| String::new()),
        "disablebackup" => client
            .post(path, &[("value", "false")])
            .map(|_| String::new()),
        _ => {
            let v = client.get(path, &[])?;
            let on = v
                .as_bool()
                .ok_or_else(|| unexpected("incremental_backups", &v))?;
            return Ok(if on { "running\n" } else { "not running\n" }.to_string());
        }
    }
    .map_err(NodetoolError::from)
}

/// `refresh [--load-and-stream] [--primary-replica-only] <keyspace> <table>`
pub fn refresh(client: &Client, inv: &Invocation) -> Result<String, NodetoolError> {
    let [ks, cf] = inv.args.as_slice() else {
        return Err(bad_use("refresh requires ks and cf args"));
    };
    check_keyspace(client, ks)?;
    let mut params: Vec<(&str, &str)> = vec![("cf", cf)];
    if option(inv, "load-and-stream").is_some() {
        params.push(("load_and_stream", "true"));
    }
    if option(inv, "primary-replica-only").is_some() {
        params.push(("primary_replica_only", "true"));
    }
    let path = format!("/storage_service/sstables/{}", percent_encode(ks));
    client.post(&path, &params)?;
    Ok(String::new())
}
