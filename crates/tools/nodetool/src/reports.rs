//! The reporting commands of `cairn nodetool`: `status`, `info`, `describering`,
//! `tablestats` (`cfstats`) and `tablehistograms` (`cfhistograms`), in Cassandra 4.0's
//! output layout so scripts written for nodetool parse them. Every figure comes from the
//! REST API (`column_family`, `node_api`); what Cairn does not have (caches, repair,
//! snapshots, older sstable formats, per-slice cell and tombstone counts, dropped mutations)
//! is printed as an idle Cassandra prints it.

use crate::client::{Client, ClientError};
use crate::error::{bad_use, unexpected, NodetoolError};
use crate::lookup::check_keyspace;
use cairn_engine::metrics::HistogramSnapshot;
use cairn_server::rest::column_family::histogram_from_json;
use cairn_server::rest::http::percent_encode;
use cairn_server::rest::json::Json;
use std::fmt::Write as _;

/// Cassandra's `FileUtils.stringifyFileSize`: binary units, at most two decimals.
pub fn file_size(bytes: f64) -> String {
    const UNITS: [(f64, &str); 4] = [
        (1024.0 * 1024.0 * 1024.0 * 1024.0, "TiB"),
        (1024.0 * 1024.0 * 1024.0, "GiB"),
        (1024.0 * 1024.0, "MiB"),
        (1024.0, "KiB"),
    ];
    for (unit, name) in UNITS {
        if bytes >= unit {
            return format!("{} {name}", decimal(bytes / unit));
        }
    }
    format!("{} bytes", decimal(bytes))
}

/// Java's `DecimalFormat("#.##")`: two decimals at most, no trailing zeros.
fn decimal(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

fn get_str(client: &Client, path: &str) -> Result<String, NodetoolError> {
    let v = client.get(path, &[])?;
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| unexpected(path, &v))
}

fn get_f64(client: &Client, path: &str) -> Result<f64, NodetoolError> {
    let v = client.get(path, &[])?;
    v.as_f64().ok_or_else(|| unexpected(path, &v))
}

fn get_bool(client: &Client, path: &str) -> Result<bool, NodetoolError> {
    match client.get(path, &[])? {
        Json::Bool(b) => Ok(b),
        other => Err(unexpected(path, &other)),
    }
}

fn get_strings(client: &Client, path: &str) -> Result<Vec<String>, NodetoolError> {
    let v = client.get(path, &[])?;
    let arr = v.as_array().ok_or_else(|| unexpected(path, &v))?;
    Ok(arr
        .iter()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect())
}

/// The `(key, value)` pairs of a REST map answer (`[{"key": …, "value": …}]`).
fn get_pairs(client: &Client, path: &str) -> Result<Vec<(String, Json)>, NodetoolError> {
    let v = client.get(path, &[])?;
    let arr = v.as_array().ok_or_else(|| unexpected(path, &v))?;
    Ok(arr
        .iter()
        .filter_map(|e| Some((e.get("key")?.as_str()?.to_string(), e.get("value")?.clone())))
        .collect())
}

/// `nodetool status`: every member, grouped by data center, as Cassandra prints it.
pub fn status(client: &Client, keyspace: Option<&str>) -> Result<String, NodetoolError> {
    let host_ids = get_pairs(client, "/storage_service/host_id")?;
    let live = get_strings(client, "/gossiper/endpoint/live")?;
    let joining = get_strings(client, "/storage_service/nodes/joining")?;
    let loads = get_pairs(client, "/storage_service/load_map")?;
    let tokens = get_pairs(client, "/storage_service/tokens_endpoint")?;
    let mut by_dc: Vec<(String, Vec<[String; 7]>)> = Vec::new();
    for (address, host_id) in &host_ids {
        let host = [("host", address.as_str())];
        let dc = client.get("/snitch/datacenter", &host)?;
        let dc = dc.as_str().unwrap_or("").to_string();
        let rack = client.get("/snitch/rack", &host)?;
        let rack = rack.as_str().unwrap_or("").to_string();
        let up = if live.contains(address) { "U" } else { "D" };
        let state = if joining.contains(address) { "J" } else { "N" };
        let load = loads
            .iter()
            .find(|(a, _)| a == address)
            .and_then(|(_, v)| v.as_f64())
            .map_or_else(|| "?".to_string(), file_size);
        let count = tokens
            .iter()
            .filter(|(_, a)| a.as_str() == Some(address.as_str()))
            .count();
        let row = [
            format!("{up}{state}"),
            address.clone(),
            load,
            count.to_string(),
            format!("{:.1}%", ownership(client, keyspace, address)? * 100.0),
            host_id.as_str().unwrap_or("").to_string(),
            rack,
        ];
        match by_dc.iter_mut().find(|(d, _)| *d == dc) {
            Some((_, rows)) => rows.push(row),
            None => by_dc.push((dc, vec![row])),
        }
    }
    let mut out = String::new();
    for (dc, mut rows) in by_dc {
        rows.sort_by(|a, b| a[1].cmp(&b[1]));
        let _ = write!(
            out,
            "Datacenter: {dc}\n{}\n",
            "=".repeat(12 + dc.chars().count())
        );
        out.push_str("Status=Up/Down\n|/ State=Normal/Leaving/Joining/Moving\n");
        let header = [
            "--".to_string(),
            "Address".into(),
            "Load".into(),
            "Tokens".into(),
            "Owns (effective)".into(),
            "Host ID".into(),
            "Rack".into(),
        ];
        rows.insert(0, header);
        let widths: Vec<usize> = (0..7)
            .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
            .collect();
        for r in &rows {
            let mut line = String::new();
            for (c, cell) in r.iter().enumerate() {
                if c + 1 == r.len() {
                    line.push_str(cell);
                } else {
                    let _ = write!(line, "{cell:<w$}  ", w = widths[c]);
                }
            }
            out.push_str(&line);
            out.push('\n');
        }
        out.push('\n');
    }
    Ok(out)
}

/// `nodetool describecluster`: the cluster's name, snitch, partitioner and which nodes
/// report which schema version.
pub fn describecluster(client: &Client) -> Result<String, NodetoolError> {
    let name = get_str(client, "/storage_service/cluster_name")?;
    let snitch = get_str(client, "/snitch/name")?;
    let partitioner = get_str(client, "/storage_service/partitioner_name")?;
    let versions = get_pairs(client, "/storage_proxy/schema_versions")?;
    let mut out = format!(
        "Cluster Information:\n\tName: {name}\n\tSnitch: {snitch}\n\tDynamicEndPointSnitch: disabled\n\tPartitioner: {partitioner}\n\tSchema versions:\n"
    );
    for (version, addrs) in versions {
        let addrs: Vec<&str> = addrs
            .as_array()
            .map(|a| a.iter().filter_map(Json::as_str).collect())
            .unwrap_or_default();
        let _ = writeln!(out, "\t\t{version}: [{}]\n", addrs.join(", "));
    }
    Ok(out)
}

/// The share of the ring `address` holds: as a replica of `keyspace` (effective ownership),
/// or as the primary owner of its ranges without one.
fn ownership(client: &Client, keyspace: Option<&str>, address: &str) -> Result<f64, NodetoolError> {
    let path = match keyspace {
        Some(ks) => format!("/storage_service/ownership/{}", percent_encode(ks)),
        None => "/storage_service/ownership".to_string(),
    };
    let v = client.get(&path, &[])?;
    let entries = v.as_array().ok_or_else(|| unexpected("ownership", &v))?;
    Ok(entries
        .iter()
        .find(|e| e.get("key").and_then(Json::as_str) == Some(address))
        .and_then(|e| e.get("value").and_then(Json::as_f64))
        .unwrap_or(0.0))
}

/// `nodetool ring [<keyspace>]`: every token of the ring with its node, as Cassandra prints it.
pub fn ring(client: &Client, args: &[String]) -> Result<String, NodetoolError> {
    let keyspace = match args {
        [] => None,
        [ks] => {
            check_keyspace(client, ks)?;
            Some(ks.as_str())
        }
        _ => return Err(bad_use("ring takes at most one keyspace".to_string())),
    };
    let dc = get_str(client, "/snitch/datacenter")?;
    let rack = get_str(client, "/snitch/rack")?;
    let load = file_size(get_f64(client, "/storage_service/load")?);
    let live = get_strings(client, "/gossiper/endpoint/live")?;
    let v = client.get("/storage_service/tokens_endpoint", &[])?;
    let mut tokens: Vec<(i64, String)> = v
        .as_array()
        .ok_or_else(|| unexpected("tokens_endpoint", &v))?
        .iter()
        .filter_map(|e| {
            let t = e.get("key")?.as_str()?.parse().ok()?;
            Some((t, e.get("value")?.as_str()?.to_string()))
        })
        .collect();
    tokens.sort();
    let mut out = format!("\nDatacenter: {dc}\n==========\n");
    let row = |out: &mut String, cells: [&str; 7]| {
        let _ = writeln!(
            out,
            "{:<16}{:<12}{:<7}{:<8}{:<16}{:<20}{}",
            cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6]
        );
    };
    row(
        &mut out,
        [
            "Address", "Rack", "Status", "State", "Load", "Owns", "Token",
        ],
    );
    if let Some((last, _)) = tokens.last() {
        row(&mut out, ["", "", "", "", "", "", &last.to_string()]);
    }
    for (token, address) in &tokens {
        let status = if live.contains(address) { "Up" } else { "Down" };
        let owns = format!("{:.2}%", ownership(client, keyspace, address)? * 100.0);
        row(
            &mut out,
            [
                address,
                &rack,
                status,
                "Normal",
                &load,
                &owns,
                &token.to_string(),
            ],
        );
    }
    out.push_str(
        "\n  Warning: \"nodetool ring\" is used to output all the tokens of a node.\n  \
         To view status related info of a node use \"nodetool status\" instead.\n\n",
    );
    Ok(out)
}

/// `nodetool getendpoints <keyspace> <table> <key>`: the replicas of a partition key.
pub fn getendpoints(client: &Client, args: &[String]) -> Result<String, NodetoolError> {
    let [ks, table, key] = args else {
        return Err(bad_use(
            "getendpoints requires keyspace, table and partition key arguments".to_string(),
        ));
    };
    check_keyspace(client, ks)?;
    let path = format!("/storage_service/natural_endpoints/{}", percent_encode(ks));
    let v = client.get(&path, &[("cf", table.as_str()), ("key", key.as_str())])?;
    let endpoints = v
        .as_array()
        .ok_or_else(|| unexpected("natural_endpoints", &v))?;
    Ok(endpoints
        .iter()
        .filter_map(Json::as_str)
        .map(|a| format!("{a}\n"))
        .collect())
}

/// Cassandra's `%.3f` of hits over requests; `NaN` before any request.
fn hit_rate(hits: f64, requests: f64) -> String {
    if requests == 0.0 {
        "NaN".into()
    } else {
        format!("{:.3}", hits / requests)
    }
}

/// `nodetool info` (`-T`: every token, one line each, as Cassandra prints them).
pub fn info(client: &Client, all_tokens: bool) -> Result<String, NodetoolError> {
    let host_id = get_str(client, "/storage_service/hostid/local")?;
    let gossip = get_bool(client, "/storage_service/gossiping")?;
    let native = get_bool(client, "/storage_service/native_transport")?;
    let load = get_f64(client, "/storage_service/load")?;
    let generation = get_f64(client, "/storage_service/generation_number")? as i64;
    let uptime_ms = get_f64(client, "/system/uptime_ms")? as i64;
    let mem = client.get("/system/memory", &[])?;
    let mb = |k: &str| mem.get(k).and_then(Json::as_f64).unwrap_or(0.0) / (1024.0 * 1024.0);
    let dc = get_str(client, "/snitch/datacenter")?;
    let rack = get_str(client, "/snitch/rack")?;
    let tokens = get_strings(client, "/storage_service/tokens")?;
    let mut out = String::new();
    let mut line = |k: &str, v: String| {
        let _ = writeln!(out, "{k:<23}: {v}");
    };
    line("ID", host_id);
    line("Gossip active", gossip.to_string());
    line("Native Transport active", native.to_string());
    line("Load", file_size(load));
    line("Generation No", generation.to_string());
    line("Uptime (seconds)", (uptime_ms / 1000).to_string());
    // Cairn has no JVM heap: the process's resident set against the machine's memory.
    line(
        "Heap Memory (MB)",
        format!("{:.2} / {:.2}", mb("rss"), mb("total")),
    );
    line(
        "Off Heap Memory (MB)",
        format!("{:.2}", mb("memtables") + mb("sstable_metadata")),
    );
    line("Data Center", dc);
    line("Rack", rack);
    line("Exceptions", "0".into());
    // Cassandra's line: entries, size, capacity, hits, requests, recent hit rate, save period.
    // The key cache is Cairn's cached index pages; there is no counter cache.
    let cache_line = |which: &str, save: u32| -> Result<String, NodetoolError> {
        let get = |m: &str| get_f64(client, &format!("/cache_service/metrics/{which}/{m}"));
        let (hits, requests) = (get("hits")?, get("requests")?);
        Ok(format!(
            "entries {}, size {}, capacity {}, {} hits, {} requests, {} recent hit rate, {save} save period in seconds",
            get("entries")? as u64,
            file_size(get("size")?),
            file_size(get("capacity")?),
            hits as u64,
            requests as u64,
            hit_rate(hits, requests),
        ))
    };
    line("Key Cache", cache_line("key", 14400)?);
    line("Row Cache", cache_line("row", 0)?);
    line(
        "Counter Cache",
        "entries 0, size 0 bytes, capacity 0 bytes, 0 hits, 0 requests, NaN recent hit rate, 7200 save period in seconds".into(),
    );
    line("Percent Repaired", "0.0%".into());
    match tokens.as_slice() {
        [one] => line("Token", one.clone()),
        many if all_tokens => {
            for t in many {
                line("Token", t.clone());
            }
        }
        many => line(
            "Token",
            format!("(invoke with -T/--tokens to see all {} tokens)", many.len()),
        ),
    }
    Ok(out)
}

/// `nodetool describering <keyspace>`.
pub fn describering(client: &Client, args: &[String]) -> Result<String, NodetoolError> {
    let [ks] = args else {
        return Err(bad_use(
            "describering requires a keyspace argument".to_string(),
        ));
    };
    check_keyspace(client, ks)?;
    let version = get_str(client, "/storage_service/schema_version")?;
    let path = format!("/storage_service/describe_ring/{}", percent_encode(ks));
    let ring = client.get(&path, &[])?;
    let ranges = ring
        .as_array()
        .ok_or_else(|| unexpected("describe_ring", &ring))?;
    let mut out = format!("Schema Version:{version}\nTokenRange: \n");
    let list = |r: &Json, k: &str| -> String {
        r.get(k)
            .and_then(Json::as_array)
            .unwrap_or(&[])
            .iter()
            .filter_map(Json::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    };
    for r in ranges {
        let s = |k: &str| r.get(k).and_then(Json::as_str).unwrap_or("").to_string();
        let details: Vec<String> = r
            .get("endpoint_details")
            .and_then(Json::as_array)
            .unwrap_or(&[])
            .iter()
            .map(|d| {
                let f = |k: &str| d.get(k).and_then(Json::as_str).unwrap_or("");
                format!(
                    "EndpointDetails(host:{}, datacenter:{}, rack:{})",
                    f("host"),
                    f("datacenter"),
                    f("rack")
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "\tTokenRange(start_token:{}, end_token:{}, endpoints:[{}], rpc_endpoints:[{}], endpoint_details:[{}])",
            s("start_token"),
            s("end_token"),
            list(r, "endpoints"),
            list(r, "rpc_endpoints"),
            details.join(", ")
        );
    }
    Ok(out)
}

/// Every table as (keyspace, table), in the node's order.
fn all_tables(client: &Client) -> Result<Vec<(String, String)>, NodetoolError> {
    let v = client.get("/column_family/", &[])?;
    let arr = v
        .as_array()
        .ok_or_else(|| unexpected("column_family", &v))?;
    Ok(arr
        .iter()
        .filter_map(|t| {
            Some((
                t.get("ks")?.as_str()?.to_string(),
                t.get("cf")?.as_str()?.to_string(),
            ))
        })
        .collect())
}

/// One table's metric (`/column_family/metrics/{metric}/{ks}:{cf}`).
fn metric(client: &Client, metric: &str, ks: &str, cf: &str) -> Result<Json, ClientError> {
    let name = percent_encode(&format!("{ks}:{cf}"));
    client.get(&format!("/column_family/metrics/{metric}/{name}"), &[])
}

fn metric_f64(client: &Client, m: &str, ks: &str, cf: &str) -> Result<f64, NodetoolError> {
    let v = metric(client, m, ks, cf)?;
    v.as_f64().ok_or_else(|| unexpected(m, &v))
}

fn metric_u64(client: &Client, m: &str, ks: &str, cf: &str) -> Result<u64, NodetoolError> {
    Ok(metric_f64(client, m, ks, cf)?.max(0.0) as u64)
}

fn metric_histogram(
    client: &Client,
    m: &str,
    ks: &str,
    cf: &str,
) -> Result<HistogramSnapshot, NodetoolError> {
    let v = metric(client, m, ks, cf)?;
    histogram_from_json(&v).ok_or_else(|| unexpected(m, &v))
}

/// A mean latency in ms from a count and a total in µs, `NaN` without requests (as Java).
fn mean_ms(total_micros: u64, count: u64) -> f64 {
    if count == 0 {
        f64::NAN
    } else {
        total_micros as f64 / count as f64 / 1000.0
    }
}

/// Java's `%01.3f` / `%.5f`: `NaN` stays `NaN`.
fn fixed(v: f64, decimals: usize) -> String {
    if v.is_nan() {
        "NaN".into()
    } else {
        format!("{v:.decimals$}")
    }
}

/// Java's `Double.toString` for the values nodetool prints (`NaN`, `-1.0`, `0.58…`).
fn java_double(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.fract() == 0.0 && v.abs() < 1e7 {
        format!("{v:.1}")
    } else {
        format!("{v}")
    }
}

struct TableReport {
    name: String,
    text: String,
    pending_flushes: u64,
    reads: u64,
    read_micros: u64,
    writes: u64,
    write_micros: u64,
}

fn table_report(client: &Client, ks: &str, cf: &str) -> Result<TableReport, NodetoolError> {
    let m = |name: &str| metric_u64(client, name, ks, cf);
    let per_level = {
        let name = percent_encode(&format!("{ks}:{cf}"));
        let v = client.get(&format!("/column_family/sstables/per_level/{name}"), &[])?;
        let arr = v.as_array().ok_or_else(|| unexpected("per_level", &v))?;
        arr.iter()
            .map(|n| n.as_i64().unwrap_or(0).to_string())
            .collect::<Vec<_>>()
    };
    let reads = m("read")?;
    let read_micros = m("read_latency")?;
    let writes = m("write")?;
    let write_micros = m("write_latency")?;
    let memtable_off_heap = m("memtable_off_heap_size")?;
    let bloom = m("bloom_filter_off_heap_memory_used")?;
    let summary = m("index_summary_off_heap_memory_used")?;
    let offsets = m("compression_metadata_off_heap_memory_used")?;
    let ratio = metric_f64(client, "compression_ratio", ks, cf)?;
    let live_sstables = m("live_ss_table_count")?;
    let pending_flushes = m("pending_flushes")?;
    let mut t = String::new();
    let mut line = |k: &str, v: String| {
        let _ = writeln!(t, "\t\t{k}: {v}");
    };
    line("Table", cf.to_string());
    line("SSTable count", live_sstables.to_string());
    line("Old SSTable count", "0".into());
    line(
        "SSTables in each level",
        format!("[{}]", per_level.join(", ")),
    );
    line("Space used (live)", m("live_disk_space_used")?.to_string());
    line(
        "Space used (total)",
        m("total_disk_space_used")?.to_string(),
    );
    line(
        "Space used by snapshots (total)",
        m("snapshots_size")?.to_string(),
    );
    line(
        "Off heap memory used (total)",
        (memtable_off_heap + bloom + summary + offsets).to_string(),
    );
    let ratio = if live_sstables == 0 || ratio == 0.0 {
        -1.0
    } else {
        ratio
    };
    line("SSTable Compression Ratio", java_double(ratio));
    line(
        "Number of partitions (estimate)",
        m("estimated_row_count")?.to_string(),
    );
    line(
        "Memtable cell count",
        m("memtable_columns_count")?.to_string(),
    );
    line(
        "Memtable data size",
        m("memtable_live_data_size")?.to_string(),
    );
    line(
        "Memtable off heap memory used",
        memtable_off_heap.to_string(),
    );
    line(
        "Memtable switch count",
        m("memtable_switch_count")?.to_string(),
    );
    line("Local read count", reads.to_string());
    line(
        "Local read latency",
        format!("{} ms", fixed(mean_ms(read_micros, reads), 3)),
    );
    line("Local write count", writes.to_string());
    line(
        "Local write latency",
        format!("{} ms", fixed(mean_ms(write_micros, writes), 3)),
    );
    line("Pending flushes", pending_flushes.to_string());
    // A single node is never repaired: every sstable is unrepaired, counted as Cassandra
    // does (uncompressed data length).
    line("Percent repaired", "0.0".into());
    line("Bytes repaired", "0.000KiB".into());
    line(
        "Bytes unrepaired",
        format!(
            "{:.3}KiB",
            m("total_disk_space_before_compression")? as f64 / 1024.0
        ),
    );
    line("Bytes pending repair", "0.000KiB".into());
    line(
        "Bloom filter false positives",
        m("bloom_filter_false_positives")?.to_string(),
    );
    // As Cassandra's nodetool: the ratio since the previous call (which this call resets).
    line(
        "Bloom filter false ratio",
        fixed(
            metric_f64(client, "recent_bloom_filter_false_ratio", ks, cf)?,
            5,
        ),
    );
    line(
        "Bloom filter space used",
        m("bloom_filter_disk_space_used")?.to_string(),
    );
    line("Bloom filter off heap memory used", bloom.to_string());
    line("Index summary off heap memory used", summary.to_string());
    line(
        "Compression metadata off heap memory used",
        offsets.to_string(),
    );
    line(
        "Compacted partition minimum bytes",
        m("min_row_size")?.to_string(),
    );
    line(
        "Compacted partition maximum bytes",
        m("max_row_size")?.to_string(),
    );
    line(
        "Compacted partition mean bytes",
        m("mean_row_size")?.to_string(),
    );
    // Per single-partition read over the last five minutes: the mean (NaN without reads,
    // as Java's) and the largest bucket bound reached, as Cassandra's histogram reports them.
    for (what, metric) in [
        ("live cells", "live_scanned_histogram"),
        ("tombstones", "tombstone_scanned_histogram"),
    ] {
        let h = metric_histogram(client, metric, ks, cf)?;
        let mean = if h.count() == 0 { f64::NAN } else { h.mean() };
        line(
            &format!("Average {what} per slice (last five minutes)"),
            java_double(mean),
        );
        line(
            &format!("Maximum {what} per slice (last five minutes)"),
            h.max().to_string(),
        );
    }
    line("Dropped Mutations", "0".into());
    line(
        "Droppable tombstone ratio",
        fixed(metric_f64(client, "droppable_tombstone_ratio", ks, cf)?, 5),
    );
    t.push('\n');
    Ok(TableReport {
        name: cf.to_string(),
        text: t,
        pending_flushes,
        reads,
        read_micros,
        writes,
        write_micros,
    })
}

/// `nodetool tablestats [<keyspace>[.<table>] ...]`.
pub fn tablestats(client: &Client, args: &[String]) -> Result<String, NodetoolError> {
    let tables = all_tables(client)?;
    let mut selected: Vec<(String, String)> = Vec::new();
    if args.is_empty() {
        selected = tables;
    } else {
        for a in args {
            let (ks, cf) = match a.split_once('.') {
                Some((k, c)) => (k, Some(c)),
                None => (a.as_str(), None),
            };
            if !tables.iter().any(|(k, _)| k == ks) {
                return Err(bad_use(format!("Unknown keyspace: {ks}")));
            }
            let matching: Vec<_> = tables
                .iter()
                .filter(|(k, c)| k == ks && cf.is_none_or(|cf| c == cf))
                .cloned()
                .collect();
            if matching.is_empty() {
                return Err(bad_use(format!("Unknown table: {a}")));
            }
            for t in matching {
                if !selected.contains(&t) {
                    selected.push(t);
                }
            }
        }
    }
    let mut keyspaces: Vec<(String, Vec<TableReport>)> = Vec::new();
    for (ks, cf) in &selected {
        let r = table_report(client, ks, cf)?;
        match keyspaces.iter_mut().find(|(k, _)| k == ks) {
            Some((_, v)) => v.push(r),
            None => keyspaces.push((ks.clone(), vec![r])),
        }
    }
    let mut out = format!(
        "Total number of tables: {}\n----------------\n",
        selected.len()
    );
    for (ks, reports) in &mut keyspaces {
        reports.sort_by(|a, b| a.name.cmp(&b.name));
        let sum = |f: fn(&TableReport) -> u64| reports.iter().map(f).sum::<u64>();
        let (reads, writes) = (sum(|r| r.reads), sum(|r| r.writes));
        let _ = writeln!(out, "Keyspace : {ks}");
        let _ = writeln!(out, "\tRead Count: {reads}");
        let _ = writeln!(
            out,
            "\tRead Latency: {} ms",
            java_double(mean_ms(sum(|r| r.read_micros), reads))
        );
        let _ = writeln!(out, "\tWrite Count: {writes}");
        let _ = writeln!(
            out,
            "\tWrite Latency: {} ms",
            java_double(mean_ms(sum(|r| r.write_micros), writes))
        );
        let _ = writeln!(out, "\tPending Flushes: {}", sum(|r| r.pending_flushes));
        for r in reports.iter() {
            out.push_str(&r.text);
        }
        out.push_str("----------------\n");
    }
    Ok(out)
}

/// `nodetool tablehistograms <keyspace> <table>` (or `<keyspace>.<table>`).
pub fn tablehistograms(client: &Client, args: &[String]) -> Result<String, NodetoolError> {
    let (ks, cf) = match args {
        [one] if one.contains('.') => one
            .split_once('.')
            .map(|(k, c)| (k.to_string(), c.to_string())),
        [ks, cf] => Some((ks.clone(), cf.clone())),
        _ => None,
    }
    .ok_or_else(|| bad_use("tablehistograms requires keyspace and table name arguments"))?;
    if !all_tables(client)?
        .iter()
        .any(|(k, c)| *k == ks && *c == cf)
    {
        return Err(bad_use(format!("Table {ks}.{cf} does not exist")));
    }
    let read = metric_histogram(client, "read_latency/estimated_histogram", &ks, &cf)?;
    let write = metric_histogram(client, "write_latency/estimated_histogram", &ks, &cf)?;
    let sstables = metric_histogram(client, "sstables_per_read_histogram", &ks, &cf)?;
    let sizes = metric_histogram(client, "estimated_row_size_histogram", &ks, &cf)?;
    let cells = metric_histogram(client, "estimated_column_count_histogram", &ks, &cf)?;
    let mut out = String::new();
    let no_sstables = sizes.count() == 0;
    if no_sstables {
        out.push_str(
            "No SSTables exists, unable to calculate 'Partition Size' and 'Cell Count' percentiles\n\n",
        );
    }
    let _ = writeln!(out, "{ks}/{cf} histograms");
    let _ = writeln!(
        out,
        "{:<10}{:>18}{:>18}{:>18}{:>18}{:>18}",
        "Percentile", "Read Latency", "Write Latency", "SSTables", "Partition Size", "Cell Count"
    );
    let _ = writeln!(
        out,
        "{:<10}{:>18}{:>18}{:>18}{:>18}{:>18}",
        "", "(micros)", "(micros)", "", "(bytes)", ""
    );
    type Pick = fn(&HistogramSnapshot) -> u64;
    let rows: [(&str, Pick); 7] = [
        ("50%", |h| h.percentile(0.5)),
        ("75%", |h| h.percentile(0.75)),
        ("95%", |h| h.percentile(0.95)),
        ("98%", |h| h.percentile(0.98)),
        ("99%", |h| h.percentile(0.99)),
        ("Min", |h| h.min()),
        ("Max", |h| h.max()),
    ];
    for (label, pick) in rows {
        let sized = |h: &HistogramSnapshot| {
            if no_sstables {
                "NaN".to_string()
            } else {
                format!("{:.0}", pick(h) as f64)
            }
        };
        let _ = writeln!(
            out,
            "{label:<10}{:>18.2}{:>18.2}{:>18.2}{:>18}{:>18}",
            pick(&read) as f64,
            pick(&write) as f64,
            pick(&sstables) as f64,
            sized(&sizes),
            sized(&cells)
        );
    }
    out.push('\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_as_cassandra() {
        assert_eq!(file_size(0.0), "0 bytes");
        assert_eq!(file_size(512.0), "512 bytes");
        assert_eq!(file_size(1024.0), "1 KiB");
        assert_eq!(file_size(268_697.6), "262.4 KiB");
        assert_eq!(file_size(1.5 * 1024.0 * 1024.0 * 1024.0), "1.5 GiB");
    }

    #[test]
    fn java_numbers() {
        assert_eq!(java_double(-1.0), "-1.0");
        assert_eq!(java_double(0.5), "0.5");
        assert_eq!(java_double(f64::NAN), "NaN");
        assert_eq!(fixed(f64::NAN, 3), "NaN");
        assert_eq!(fixed(0.12345, 3), "0.123");
        assert!(mean_ms(0, 0).is_nan());
        assert_eq!(mean_ms(3000, 2), 1.5);
    }
}
