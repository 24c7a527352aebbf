//! `cairn nodetool`: nodetool's commands over the REST API, with nodetool's output layout
//! and messages, so scripts that parse nodetool keep working.
//!
//! `nodetool [-h HOST] [-p PORT] <command> [args]` — `-p` is the REST port (10000), not
//! JMX's 7199. Exit codes as nodetool: 1 for bad use (unknown command, unknown keyspace,
//! no connection), 2 for errors reported by the node.

use super::client::{Client, ClientError};
use super::json::Json;
use super::nodetool_reports;
use super::nodetool_snapshots;

/// Default REST host.
pub const DEFAULT_HOST: &str = "127.0.0.1";
/// Default REST port.
pub const DEFAULT_PORT: u16 = 10000;

/// Commands `cairn nodetool` knows, with their synopsis.
pub const COMMANDS: &[(&str, &str)] = &[
    ("compact", "compact [<keyspace> [<table>...]]    Force a (major) compaction on one or more tables"),
    ("compactionhistory", "compactionhistory                    Print history of compaction"),
    ("cfhistograms", "cfhistograms <keyspace> <table>      Print statistic histograms for a given table (tablehistograms)"),
    ("cfstats", "cfstats [<keyspace>[.<table>]...]    Print statistics on tables (tablestats)"),
    ("clearsnapshot", "clearsnapshot [-t <tag> | --all] [<keyspace>...]  Remove the snapshot with the given name from the given keyspaces"),
    ("compactionstats", "compactionstats                      Print statistics on compactions"),
    ("describering", "describering <keyspace>              Shows the token ranges info of a given keyspace"),
    ("disablebackup", "disablebackup                        Disable incremental backup"),
    ("enablebackup", "enablebackup                         Enable incremental backup"),
    ("flush", "flush [<keyspace> [<table>...]]      Flush one or more tables"),
    ("getcompactionthroughput", "getcompactionthroughput              Print the MB/s throughput cap for compaction in the system"),
    ("help", "help                                 Display help information"),
    ("info", "info                                 Print node information (uptime, load, ...)"),
    ("listsnapshots", "listsnapshots [-nt] [-e]             Lists all the snapshots along with the size on disk and true size"),
    ("refresh", "refresh <keyspace> <table>           Load newly placed SSTables (in the table's upload/ directory) to the system without restart"),
    ("setcompactionthroughput", "setcompactionthroughput <MB/s>       Set the MB/s throughput cap for compaction in the system, or 0 to disable throttling"),
    ("snapshot", "snapshot [-t <tag>] [-sf] [--ttl <d>] [-cf <table>] [<keyspace>...] | -kt <ks.table>,...  Take a snapshot of specified keyspaces or tables"),
    ("status", "status                               Print cluster information (state, load, IDs, ...)"),
    ("statusbackup", "statusbackup                         Status of incremental backup"),
    ("stop", "stop <compaction_type>               Stop compaction (COMPACTION, CLEANUP, SCRUB, …)"),
    ("tablehistograms", "tablehistograms <keyspace> <table>   Print statistic histograms for a given table"),
    ("tablestats", "tablestats [<keyspace>[.<table>]...] Print statistics on tables"),
    ("version", "version                              Print cassandra version"),
];

/// A failed command: what to print on stderr and the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodetoolError {
    /// The text for stderr (without trailing newline).
    pub message: String,
    /// The process exit code.
    pub exit_code: i32,
}

const SEE_HELP: &str = "See 'nodetool help' or 'nodetool help <command>'.";

/// Bad use (exit 1), with nodetool's help hint.
pub(crate) fn bad_use(message: impl std::fmt::Display) -> NodetoolError {
    NodetoolError {
        message: format!("nodetool: {message}\n{SEE_HELP}"),
        exit_code: 1,
    }
}

impl From<ClientError> for NodetoolError {
    fn from(e: ClientError) -> Self {
        match e {
            ClientError::Connect { .. } => NodetoolError {
                message: format!("nodetool: {e}"),
                exit_code: 1,
            },
            other => NodetoolError {
                message: format!("error: {other}"),
                exit_code: 2,
            },
        }
    }
}

/// A parsed command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// REST host.
    pub host: String,
    /// REST port.
    pub port: u16,
    /// The command (`flush`, …); empty = help.
    pub command: String,
    /// Its positional arguments.
    pub args: Vec<String>,
    /// Its options (`--flush-memtables false` → `("flush-memtables", "false")`).
    pub options: Vec<(String, String)>,
}

/// Parses nodetool's arguments (without the program name). Global options may come before
/// or after the command, as in nodetool.
pub fn parse_args(args: &[String]) -> Result<Invocation, NodetoolError> {
    let mut inv = Invocation {
        host: DEFAULT_HOST.into(),
        port: DEFAULT_PORT,
        command: String::new(),
        args: Vec::new(),
        options: Vec::new(),
    };
    let mut it = args.iter();
    let mut positional = Vec::new();
    while let Some(a) = it.next() {
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with('-') => (n, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let mut value = |opt: &str| -> Result<String, NodetoolError> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => it.next().cloned().ok_or_else(|| {
                    bad_use(format!("Required values for option '{opt}' not provided"))
                }),
            }
        };
        match name {
            "-h" | "--host" => inv.host = value("host")?,
            "-p" | "--port" => {
                let v = value("port")?;
                inv.port = v
                    .parse()
                    .map_err(|_| bad_use(format!("port: can not convert \"{v}\" to a int")))?;
            }
            // JMX credentials: accepted for script compatibility, the REST API has none.
            "-u" | "--username" | "-pw" | "--password" | "-pwf" | "--password-file" => {
                value(name)?;
            }
            "--flush-memtables" | "-F" | "--format" => {
                let v = value(name)?;
                inv.options
                    .push((name.trim_start_matches('-').to_string(), v));
            }
            // snapshot, clearsnapshot, listsnapshots, refresh: stored under one name each.
            "-t" | "--tag" => inv.options.push(("tag".into(), value("tag")?)),
            "-cf" | "--column-family" | "--table" => {
                inv.options.push(("table".into(), value("table")?))
            }
            "-kt" | "--kt-list" | "-kc" | "--kc.list" => {
                inv.options.push(("kt-list".into(), value("ktlist")?))
            }
            "--ttl" => inv.options.push(("ttl".into(), value("ttl")?)),
            "-sf"
            | "--skip-flush"
            | "--all"
            | "-nt"
            | "--no-ttl"
            | "-e"
            | "--ephemeral"
            | "-las"
            | "--load-and-stream"
            | "-pro"
            | "--primary-replica-only" => {
                let canonical = match name {
                    "-sf" => "skip-flush",
                    "-nt" => "no-ttl",
                    "-e" => "ephemeral",
                    "-las" => "load-and-stream",
                    "-pro" => "primary-replica-only",
                    long => long.trim_start_matches('-'),
                };
                inv.options.push((canonical.to_string(), "true".into()));
            }
            // Accepted and ignored, as ScyllaDB's nodetool does.
            // `-T`: Cairn nodes have one token, which `info` always prints.
            "-s" | "--split-output" | "-H" | "--human-readable" | "-pr" | "--print-port" | "-T"
            | "--tokens" => {}
            "-st" | "--start-token" | "-et" | "--end-token" => {
                value(name)?;
            }
            "--help" => positional.insert(0, "help".to_string()),
            "--" => positional.extend(it.by_ref().cloned()),
            n if n.starts_with('-') && n.len() > 1 => {
                return Err(bad_use(format!("Found unexpected parameters: [{a}]")))
            }
            _ => positional.push(a.clone()),
        }
    }
    let mut positional = positional.into_iter();
    inv.command = positional.next().unwrap_or_default();
    inv.args = positional.collect();
    Ok(inv)
}

/// Runs a command; `Ok` holds what to print on stdout.
pub fn run(inv: &Invocation) -> Result<String, NodetoolError> {
    let client = Client::new(inv.host.clone(), inv.port);
    let args = &inv.args;
    let max_args = |n: usize| -> Result<(), NodetoolError> {
        if args.len() > n {
            Err(bad_use(format!(
                "Found unexpected parameters: {:?}",
                &args[n..]
            )))
        } else {
            Ok(())
        }
    };
    match inv.command.as_str() {
        "" | "help" => Ok(help()),
        "flush" => {
            if args.is_empty() {
                client.post("/storage_service/flush", &[])?;
            } else {
                check_keyspace(&client, &args[0])?;
                keyspace_op(
                    &client,
                    "/storage_service/keyspace_flush/",
                    &args[0],
                    &args[1..],
                    &[],
                )?;
            }
            Ok(String::new())
        }
        "compact" => {
            let flush = inv
                .options
                .iter()
                .find(|(k, _)| k == "flush-memtables")
                .map(|(_, v)| v.as_str());
            if let Some(f) = flush {
                if f != "true" && f != "false" {
                    return Err(bad_use(format!(
                        "flush-memtables: can not convert \"{f}\" to a boolean"
                    )));
                }
            }
            let extra: Vec<(&str, &str)> =
                flush.map(|f| ("flush_memtables", f)).into_iter().collect();
            if args.is_empty() {
                for ks in keyspaces(&client)? {
                    keyspace_op(
                        &client,
                        "/storage_service/keyspace_compaction/",
                        &ks,
                        &[],
                        &extra,
                    )?;
                }
            } else {
                check_keyspace(&client, &args[0])?;
                keyspace_op(
                    &client,
                    "/storage_service/keyspace_compaction/",
                    &args[0],
                    &args[1..],
                    &extra,
                )?;
            }
            Ok(String::new())
        }
        "compactionstats" => {
            max_args(0)?;
            compactionstats(&client)
        }
        "compactionhistory" => {
            max_args(0)?;
            compactionhistory(&client)
        }
        "getcompactionthroughput" => {
            max_args(0)?;
            let v = client.get("/storage_service/compaction_throughput", &[])?;
            let mb = v
                .as_i64()
                .ok_or_else(|| unexpected("compaction_throughput", &v))?;
            Ok(format!("Current compaction throughput: {mb} MB/s\n"))
        }
        "setcompactionthroughput" => {
            max_args(1)?;
            let Some(v) = args.first() else {
                return Err(bad_use("Missing required parameter: compaction_throughput"));
            };
            if v.parse::<u32>().is_err() {
                return Err(bad_use(format!(
                    "compaction_throughput: can not convert \"{v}\" to a int"
                )));
            }
            client.post("/storage_service/compaction_throughput", &[("value", v)])?;
            Ok(String::new())
        }
        "stop" => {
            max_args(1)?;
            let Some(t) = args.first() else {
                return Err(bad_use("Missing required parameter: compaction_type"));
            };
            const TYPES: &[&str] = &[
                "COMPACTION",
                "VALIDATION",
                "CLEANUP",
                "SCRUB",
                "UPGRADE",
                "UPGRADE_SSTABLES",
                "INDEX_BUILD",
                "RESHAPE",
                "RESHARD",
                "TOMBSTONE_COMPACTION",
                "ANTICOMPACTION",
                "VERIFY",
                "VIEW_BUILD",
                "INDEX_SUMMARY",
                "RELOCATE",
                "GARBAGE_COLLECT",
            ];
            if !TYPES.contains(&t.as_str()) {
                return Err(bad_use(format!(
                    "compaction_type: can not convert \"{t}\" to a OperationType"
                )));
            }
            let t = if t == "UPGRADE_SSTABLES" {
                "UPGRADE"
            } else {
                t.as_str()
            };
            client.post("/compaction_manager/stop_compaction", &[("type", t)])?;
            Ok(String::new())
        }
        "status" => {
            max_args(1)?;
            if let Some(ks) = args.first() {
                check_keyspace(&client, ks)?;
            }
            nodetool_reports::status(&client)
        }
        "info" => {
            max_args(0)?;
            nodetool_reports::info(&client)
        }
        "describering" => nodetool_reports::describering(&client, args),
        "snapshot" => nodetool_snapshots::snapshot(&client, inv),
        "listsnapshots" => nodetool_snapshots::listsnapshots(&client, inv),
        "clearsnapshot" => nodetool_snapshots::clearsnapshot(&client, inv),
        "enablebackup" | "disablebackup" | "statusbackup" => {
            nodetool_snapshots::backup(&client, inv)
        }
        "refresh" => nodetool_snapshots::refresh(&client, inv),
        "tablestats" | "cfstats" => nodetool_reports::tablestats(&client, args),
        "tablehistograms" | "cfhistograms" => nodetool_reports::tablehistograms(&client, args),
        "version" => {
            max_args(0)?;
            let v = client.get("/storage_service/release_version", &[])?;
            let s = v
                .as_str()
                .ok_or_else(|| unexpected("release_version", &v))?;
            Ok(format!("ReleaseVersion: {s}\n"))
        }
        other => Err(bad_use(format!("Found unexpected parameters: [{other}]"))),
    }
}

/// Parses and runs; the convenience the binary uses.
pub fn main(args: &[String]) -> Result<String, NodetoolError> {
    run(&parse_args(args)?)
}

fn help() -> String {
    let mut s = String::from(
        "usage: cairn nodetool [(-h <host> | --host <host>)] [(-p <port> | --port <port>)] <command> [<args>]\n\n\
         -p is the node's REST API port (api_port, default 10000).\n\n\
         The most commonly used nodetool commands are:\n",
    );
    for (_, synopsis) in COMMANDS {
        s.push_str("    ");
        s.push_str(synopsis);
        s.push('\n');
    }
    s
}

pub(crate) fn unexpected(what: &str, v: &Json) -> NodetoolError {
    NodetoolError {
        message: format!("error: unexpected {what} response: {}", v.to_text()),
        exit_code: 2,
    }
}

pub(crate) fn keyspaces(client: &Client) -> Result<Vec<String>, NodetoolError> {
    let v = client.get("/storage_service/keyspaces", &[])?;
    let arr = v.as_array().ok_or_else(|| unexpected("keyspaces", &v))?;
    Ok(arr
        .iter()
        .filter_map(|k| k.as_str().map(str::to_string))
        .collect())
}

pub(crate) fn check_keyspace(client: &Client, ks: &str) -> Result<(), NodetoolError> {
    if keyspaces(client)?.iter().any(|k| k == ks) {
        Ok(())
    } else {
        Err(bad_use(format!("Keyspace [{ks}] does not exist.")))
    }
}

fn keyspace_op(
    client: &Client,
    prefix: &str,
    ks: &str,
    tables: &[String],
    extra: &[(&str, &str)],
) -> Result<(), NodetoolError> {
    let path = format!("{prefix}{}", super::http::percent_encode(ks));
    let cf = tables.join(",");
    let mut params: Vec<(&str, &str)> = Vec::new();
    if !cf.is_empty() {
        params.push(("cf", &cf));
    }
    params.extend_from_slice(extra);
    client.post(&path, &params)?;
    Ok(())
}

/// Left-aligned columns separated by one space, each padded to its widest cell
/// (Cassandra's `TableBuilder`).
pub fn table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, s)| format!("{s:<w$}", w = widths[i]))
            .collect();
        out.push_str(&cells.join(" "));
        out.push('\n');
    }
    out
}

fn compactionstats(client: &Client) -> Result<String, NodetoolError> {
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
        remaining += (total - completed).max(0);
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

fn compactionhistory(client: &Client) -> Result<String, NodetoolError> {
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

/// Milliseconds since the epoch as `yyyy-MM-ddTHH:mm:ss.SSS` (UTC).
pub fn format_millis(ms: i64) -> String {
    let c = cairn_engine::snapshot::manifest::civil_from_millis(ms);
    let (h, mi, s) = c.hms;
    format!(
        "{:04}-{:02}-{:02}T{h:02}:{mi:02}:{s:02}.{:03}",
        c.year, c.month, c.day, c.millis
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn parses_global_options_anywhere() {
        let inv = parse_args(&args("-h 10.0.0.1 flush ks t1 t2 -p 10001")).unwrap();
        assert_eq!(inv.host, "10.0.0.1");
        assert_eq!(inv.port, 10001);
        assert_eq!(inv.command, "flush");
        assert_eq!(inv.args, ["ks", "t1", "t2"]);
        let inv = parse_args(&args("--port=7 compact --flush-memtables false ks")).unwrap();
        assert_eq!(inv.port, 7);
        assert_eq!(
            inv.options,
            [("flush-memtables".to_string(), "false".to_string())]
        );
        assert_eq!(parse_args(&args("-p x version")).unwrap_err().exit_code, 1);
        assert!(parse_args(&args("--bogus version")).is_err());
        assert!(parse_args(&args("-h")).is_err());
    }

    #[test]
    fn dates() {
        assert_eq!(format_millis(0), "1970-01-01T00:00:00.000");
        assert_eq!(format_millis(1_695_973_859_380), "2023-09-29T07:50:59.380");
        assert_eq!(format_millis(951_782_400_001), "2000-02-29T00:00:00.001");
    }

    #[test]
    fn tables_align() {
        let t = table(&[
            vec!["a".into(), "bb".into()],
            vec!["ccc".into(), "d".into()],
        ]);
        assert_eq!(t, "a   bb\nccc d \n");
    }
}
