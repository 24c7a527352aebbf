//! `nodetool compactionstats` and `compactionhistory`: running and finished compactions.

use crate::client::Client;
use crate::error::{unexpected, NodetoolError};
use crate::format::{format_millis, table};
use cairn_server::rest::http::percent_encode;
use cairn_server::rest::json::Json;

/// `compactionstats`: pending compactions per table, then every running
/// job — compactions, and view and index builds ("View build", "Secondary index build",
/// in keys) as Cassandra lists them.
pub fn compactionstats(client: &Client) -> Result<String, NodetoolError> {
    let pending = client.get("/compaction_manager/metrics/pending_tasks_by_table", &[])?;
    let pending = pending
        .as_array()
        .ok_or_else(|| unexpected("pending_tasks_by_table", &pending))?
        .to_vec();
    let running = client.get("/compaction_manager/compactions", &[])?;
    let running = running
        .as_array()
        .ok_or_else(|| unexpected("compactions", &running))?
        .to_vec();
    let total: i64 = pending
        .iter()
        .filter_map(|p| p.get("task").and_then(Json::as_i64))
        .sum();
    let mut out = format!("pending tasks: {total}\n");
    for p in &pending {
        let ks = p.get("ks").and_then(Json::as_str).unwrap_or("");
        let cf = p.get("cf").and_then(Json::as_str).unwrap_or("");
        let n = p.get("task").and_then(Json::as_i64).unwrap_or(0);
        out.push_str(&format!("- {ks}.{cf}: {n}\n"));
    }
    out.push('\n');
    if running.is_empty() {
        return Ok(out);
    }
    let throughput = client
        .get("/storage_service/compaction_throughput", &[])?
        .as_i64()
        .unwrap_or(0);
    let mut rows = vec![[
        "id",
        "compaction type",
        "keyspace",
        "table",
        "completed",
        "total",
        "unit",
        "progress",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect::<Vec<_>>()];
    let mut remaining: i64 = 0;
    for c in &running {
        let s = |k: &str| c.get(k).and_then(Json::as_str).unwrap_or("").to_string();
        let completed = c.get("completed").and_then(Json::as_i64).unwrap_or(0);
        let total = c.get("total").and_then(Json::as_i64).unwrap_or(0);
        if s("unit") == "bytes" {
            // (View and index builds count keys: no time estimate from the throughput.)
            remaining += (total - completed).max(0);
        }
        let progress = if total > 0 {
            format!("{:.2}%", completed as f64 * 100.0 / total as f64)
        } else {
            "n/a".to_string()
        };
        rows.push(vec![
            s("id"),
            s("task_type"),
            s("ks"),
            s("cf"),
            completed.to_string(),
            total.to_string(),
            s("unit"),
            progress,
        ]);
    }
    out.push_str(&table(&rows));
    let time = if throughput > 0 {
        let secs = remaining / (throughput * 1024 * 1024);
        format!(
            "{}h{:02}m{:02}s",
            secs / 3600,
            (secs % 3600) / 60,
            secs % 60
        )
    } else {
        "n/a".to_string()
    };
    out.push_str(&format!("Active compaction remaining time : {time:>10}\n"));
    Ok(out)
}

pub fn compactionhistory(client: &Client) -> Result<String, NodetoolError> {
    let h = client.get("/compaction_manager/compaction_history", &[])?;
    let entries = h
        .as_array()
        .ok_or_else(|| unexpected("compaction_history", &h))?;
    let mut out = String::from("Compaction History:\n");
    if entries.is_empty() {
        out.push_str("There is no compaction history\n");
        return Ok(out);
    }
    let mut sorted: Vec<&Json> = entries.iter().collect();
    let at = |e: &Json| e.get("compacted_at").and_then(Json::as_i64).unwrap_or(0);
    sorted.sort_by_key(|e| std::cmp::Reverse(at(e)));
    let mut rows = vec![[
        "id",
        "keyspace_name",
        "columnfamily_name",
        "compacted_at",
        "bytes_in",
        "bytes_out",
        "rows_merged",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect::<Vec<_>>()];
    for e in sorted {
        let s = |k: &str| e.get(k).and_then(Json::as_str).unwrap_or("").to_string();
        let n = |k: &str| e.get(k).and_then(Json::as_i64).unwrap_or(0).to_string();
        let merged: Vec<String> = e
            .get("rows_merged")
            .and_then(Json::as_array)
            .unwrap_or(&[])
            .iter()
            .map(|m| {
                format!(
                    "{}:{}",
                    m.get("key").and_then(Json::as_i64).unwrap_or(0),
                    m.get("value").and_then(Json::as_i64).unwrap_or(0)
                )
            })
            .collect();
        rows.push(vec![
            s("id"),
            s("ks"),
            s("cf"),
            format_millis(at(e)),
            n("bytes_in"),
            n("bytes_out"),
            format!("{{{}}}", merged.join(", ")),
        ]);
    }
    out.push_str(&table(&rows));
    Ok(out)
}

/// `viewbuildstatus KS VIEW`: Cassandra's "has finished building" line, or — some host not
/// done (exit code 1, as Cassandra's) — "has not finished building" and a Host / Info table.
pub fn viewbuildstatus(client: &Client, ks: &str, view: &str) -> Result<String, NodetoolError> {
    let path = format!(
        "/storage_service/view_build_statuses/{}/{}",
        percent_encode(ks),
        percent_encode(view)
    );
    let statuses = client.get(&path, &[])?;
    let statuses = statuses
        .as_array()
        .ok_or_else(|| unexpected("view_build_statuses", &statuses))?
        .to_vec();
    let mut rows = vec![vec!["Host".to_string(), "Info".to_string()]];
    let mut done = true;
    for s in &statuses {
        let host = s.get("key").and_then(Json::as_str).unwrap_or("");
        let status = s.get("value").and_then(Json::as_str).unwrap_or("");
        done &= status == "SUCCESS";
        rows.push(vec![host.to_string(), status.to_string()]);
    }
    if done {
        return Ok(format!("{ks}.{view} has finished building\n"));
    }
    Err(NodetoolError {
        message: format!(
            "{ks}.{view} has not finished building; node status is below.\n\n{}",
            table(&rows).trim_end()
        ),
        exit_code: 1,
    })
}
