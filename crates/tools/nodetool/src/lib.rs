//! `cairn nodetool`: nodetool's commands over a node's REST API, with nodetool's output layout
//! and messages, so scripts that parse nodetool keep working.
//!
//! `nodetool [-h HOST] [-p PORT] [--token-file FILE] [--ca PEM [--cert PEM --key PEM]]
//! <command> [args]` — `-p` is the REST port (10000), not JMX's 7199; `--token-file` sends
//! the node's bearer token (`api_authorization`), `--ca` speaks HTTPS (`--cert`/`--key`: a
//! client certificate), each also from the environment (`CAIRN_API_TOKEN_FILE`, …, see
//! [`args::ENV`]). Exit codes as nodetool: 1 for bad use (unknown command, unknown keyspace,
//! no connection, refused credentials), 2 for errors reported by the node.
//!
//! A client of the node, not part of it: it speaks the REST API's paths and JSON (the server
//! crate's `rest::json`, `rest::http::percent_encode`, `rest::column_family`'s histogram
//! decoding) over its own blocking HTTP [`client`]. This file parses nothing and formats
//! nothing: it dispatches a parsed [`Invocation`] to the command's module.
//!
//! * [`args`]: the command line; [`error`]: failures and exit codes; [`lookup`]: keyspace
//!   checks every command shares; [`format`]: nodetool's tables and dates.
//! * [`compactions`]: compactionstats and compactionhistory; [`reports`]: status, info,
//!   describering, tablestats, tablehistograms; [`snapshots`]: snapshots, backups, refresh.

pub mod args;
pub mod client;
pub mod compactions;
pub mod error;
pub mod format;
pub mod lookup;
pub mod reports;
pub mod snapshots;

pub use args::{parse_args, Invocation};
pub use error::NodetoolError;

use cairn_server::rest::http::percent_encode;
use client::Client;
use error::{bad_use, unexpected};
use lookup::{check_keyspace, keyspaces};

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
    ("describecluster", "describecluster                      Print the name, snitch, partitioner and schema versions of the cluster"),
    ("describering", "describering <keyspace>              Shows the token ranges info of a given keyspace"),
    ("disablebackup", "disablebackup                        Disable incremental backup"),
    ("enablebackup", "enablebackup                         Enable incremental backup"),
    ("flush", "flush [<keyspace> [<table>...]]      Flush one or more tables"),
    ("getcompactionthroughput", "getcompactionthroughput              Print the MB/s throughput cap for compaction in the system"),
    ("gettraceprobability", "gettraceprobability                  Print the current trace probability value"),
    ("getendpoints", "getendpoints <keyspace> <table> <key>  Print the end points that owns the key"),
    ("help", "help                                 Display help information"),
    ("info", "info                                 Print node information (uptime, load, ...)"),
    ("invalidatekeycache", "invalidatekeycache                   Invalidate the key cache (Cairn's cached index pages)"),
    ("invalidaterowcache", "invalidaterowcache                   Invalidate the row cache"),
    ("listsnapshots", "listsnapshots [-nt] [-e]             Lists all the snapshots along with the size on disk and true size"),
    ("refresh", "refresh <keyspace> <table>           Load newly placed SSTables (in the table's upload/ directory) to the system without restart"),
    ("ring", "ring [<keyspace>]                    Print information about the token ring"),
    ("setcompactionthroughput", "setcompactionthroughput <MB/s>       Set the MB/s throughput cap for compaction in the system, or 0 to disable throttling"),
    ("settraceprobability", "settraceprobability <value>          Sets the probability for tracing any given request to value. 0 disables, 1 enables for all requests, 0 is the default"),
    ("snapshot", "snapshot [-t <tag>] [-sf] [--ttl <d>] [-cf <table>] [<keyspace>...] | -kt <ks.table>,...  Take a snapshot of specified keyspaces or tables"),
    ("status", "status                               Print cluster information (state, load, IDs, ...)"),
    ("statusbackup", "statusbackup                         Status of incremental backup"),
    ("stop", "stop <compaction_type>               Stop compaction (COMPACTION, CLEANUP, SCRUB, …)"),
    ("tablehistograms", "tablehistograms <keyspace> <table>   Print statistic histograms for a given table"),
    ("tablestats", "tablestats [<keyspace>[.<table>]...] Print statistics on tables"),
    ("version", "version                              Print cassandra version"),
    ("viewbuildstatus", "viewbuildstatus <keyspace> <view> | <keyspace.view>  Show progress of a materialized view build"),
];

/// Runs a command; `Ok` holds what to print on stdout.
pub fn run(inv: &Invocation) -> Result<String, NodetoolError> {
    let client = connect(inv)?;
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
        "viewbuildstatus" => {
            max_args(2)?;
            let usage = || bad_use("viewbuildstatus requires keyspace and view name arguments");
            let (ks, view) = match args.as_slice() {
                [ks, view] => (ks.clone(), view.clone()),
                [both] => match both.split('.').collect::<Vec<_>>().as_slice() {
                    [ks, view] => (ks.to_string(), view.to_string()),
                    _ => return Err(usage()),
                },
                _ => return Err(usage()),
            };
            compactions::viewbuildstatus(&client, &ks, &view)
        }
        "compactionstats" => {
            max_args(0)?;
            compactions::compactionstats(&client)
        }
        "compactionhistory" => {
            max_args(0)?;
            compactions::compactionhistory(&client)
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
        "gettraceprobability" => {
            max_args(0)?;
            let v = client.get("/storage_service/trace_probability", &[])?;
            let p = v
                .as_f64()
                .ok_or_else(|| unexpected("trace_probability", &v))?;
            Ok(format!("Current trace probability: {}\n", java_double(p)))
        }
        "settraceprobability" => {
            max_args(1)?;
            let Some(v) = args.first() else {
                return Err(bad_use("settraceprobability requires a probability value"));
            };
            let p: f64 = v.parse().map_err(|_| {
                bad_use(format!(
                    "trace_probability: can not convert \"{v}\" to a Double"
                ))
            })?;
            if !(0.0..=1.0).contains(&p) {
                return Err(bad_use("Trace probability must be between 0 and 1"));
            }
            client.post("/storage_service/trace_probability", &[("probability", v)])?;
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
            reports::status(&client, args.first().map(String::as_str))
        }
        "info" => {
            max_args(0)?;
            let all_tokens = inv.options.iter().any(|(k, _)| k == "tokens");
            reports::info(&client, all_tokens)
        }
        "describecluster" => {
            max_args(0)?;
            reports::describecluster(&client)
        }
        "invalidaterowcache" | "invalidatekeycache" => {
            max_args(0)?;
            let which = inv
                .command
                .trim_start_matches("invalidate")
                .replace("cache", "");
            client.post(&format!("/cache_service/invalidate_{which}_cache"), &[])?;
            Ok(String::new())
        }
        "describering" => reports::describering(&client, args),
        "ring" => reports::ring(&client, args),
        "getendpoints" => reports::getendpoints(&client, args),
        "snapshot" => snapshots::snapshot(&client, inv),
        "listsnapshots" => snapshots::listsnapshots(&client, inv),
        "clearsnapshot" => snapshots::clearsnapshot(&client, inv),
        "enablebackup" | "disablebackup" | "statusbackup" => snapshots::backup(&client, inv),
        "refresh" => snapshots::refresh(&client, inv),
        "tablestats" | "cfstats" => reports::tablestats(&client, args),
        "tablehistograms" | "cfhistograms" => reports::tablehistograms(&client, args),
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
    let mut inv = parse_args(args)?;
    inv.fill_from_env(|k| std::env::var_os(k));
    run(&inv)
}

/// The client for `inv`'s node, with its token and TLS, their files read.
fn connect(inv: &Invocation) -> Result<Client, NodetoolError> {
    let fail = |message: String| NodetoolError {
        message: format!("nodetool: {message}"),
        exit_code: 1,
    };
    let mut client = Client::new(inv.host.clone(), inv.port);
    if let Some(path) = &inv.token_file {
        let token = cairn_server::rest::guard::read_token_file(path)
            .map_err(|e| fail(format!("--token-file {e}")))?;
        client = client.with_token(token);
    }
    let pair = match (&inv.cert, &inv.key) {
        (Some(c), Some(k)) => Some((c.as_path(), k.as_path())),
        (None, None) => None,
        _ => return Err(bad_use("--cert and --key go together")),
    };
    match (&inv.ca, pair) {
        (Some(ca), pair) => {
            client = client.with_tls(client::tls_config(ca, pair).map_err(fail)?);
        }
        (None, Some(_)) => {
            return Err(bad_use(
                "--cert and --key need --ca (the CA that signs the node's certificate)",
            ))
        }
        (None, None) => {}
    }
    Ok(client)
}

fn help() -> String {
    let mut s = String::from(
        "usage: cairn nodetool [(-h <host> | --host <host>)] [(-p <port> | --port <port>)] [--token-file <file>] [--ca <pem> [--cert <pem> --key <pem>]] <command> [<args>]\n\n\
         -p is the node's REST API port (api_port, default 10000).\n\
         --token-file names a file holding the REST API's bearer token (api_authorization; or set CAIRN_API_TOKEN_FILE).\n\
         --ca speaks HTTPS, checking the node's certificate against these CA certificates (api_encryption_options; or CAIRN_API_CA);\n\
         --cert and --key present a client certificate (or CAIRN_API_CERT and CAIRN_API_KEY).\n\n\
         The most commonly used nodetool commands are:\n",
    );
    for (_, synopsis) in COMMANDS {
        s.push_str("    ");
        s.push_str(synopsis);
        s.push('\n');
    }
    s
}

fn keyspace_op(
    client: &Client,
    prefix: &str,
    ks: &str,
    tables: &[String],
    extra: &[(&str, &str)],
) -> Result<(), NodetoolError> {
    let path = format!("{prefix}{}", percent_encode(ks));
    let cf = tables.join(",");
    let mut params: Vec<(&str, &str)> = Vec::new();
    if !cf.is_empty() {
        params.push(("cf", &cf));
    }
    params.extend_from_slice(extra);
    client.post(&path, &params)?;
    Ok(())
}

/// A number as Java's `Double.toString` writes it for the values a probability takes
/// (`0.0`, `0.5`, `1.0`).
fn java_double(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e7 {
        format!("{v:.1}")
    } else {
        format!("{v}")
    }
}
