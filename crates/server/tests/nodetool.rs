//! `cairn nodetool`'s commands against a live REST API: output layouts and errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use cairn_server::rest::nodetool::{self, NodetoolError};
use common::Node;

fn run(node: &Node, cmd: &str) -> Result<String, NodetoolError> {
    let mut args = vec!["-p".to_string(), node.port.to_string()];
    args.extend(cmd.split_whitespace().map(str::to_string));
    nodetool::main(&args)
}

#[test]
fn flush_and_compact() {
    let node = Node::start();
    node.write("t", 1, 20);
    assert_eq!(run(&node, "flush ks t").unwrap(), "");
    assert_eq!(node.sstables("t"), 1);
    node.write("t", 2, 20);
    node.write("u", 2, 20);
    assert_eq!(run(&node, "flush ks").unwrap(), "");
    assert_eq!((node.sstables("t"), node.sstables("u")), (2, 1));
    node.write("t", 3, 20);
    assert_eq!(run(&node, "flush").unwrap(), "");
    assert_eq!(node.sstables("t"), 3);

    assert_eq!(run(&node, "compact ks t").unwrap(), "");
    assert_eq!(node.sstables("t"), 1);
    node.write("u", 3, 20);
    assert_eq!(run(&node, "compact").unwrap(), "");
    assert_eq!(node.sstables("u"), 1);
    node.write("u", 4, 20);
    assert_eq!(
        run(&node, "compact ks u --flush-memtables false").unwrap(),
        ""
    );
    assert_eq!(node.sstables("u"), 1);

    let out = run(&node, "compactionhistory").unwrap();
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("Compaction History:"));
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        [
            "id",
            "keyspace_name",
            "columnfamily_name",
            "compacted_at",
            "bytes_in",
            "bytes_out",
            "rows_merged"
        ]
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split_whitespace().collect()).collect();
    // ks.t's 3 → 1; then `compact` rewrites ks.t's single sstable and merges ks.u's two;
    // then ks.u's single sstable is rewritten (a major compaction always runs, as in
    // ScyllaDB). Newest first.
    assert_eq!(rows.len(), 4, "{out}");
    let tables: Vec<&str> = rows.iter().map(|r| r[2]).collect();
    assert_eq!(tables, ["u", "u", "t", "t"], "{out}");
    let t_row = &rows[3];
    assert_eq!(t_row[1], "ks");
    assert_eq!(t_row[0].len(), 36);
    assert_eq!(t_row[3].len(), "2024-01-01T00:00:00.000".len());
    assert!(t_row[4].parse::<u64>().unwrap() > 0);
    assert!(t_row[5].parse::<u64>().unwrap() > 0);
    assert_eq!(t_row[6], "{1:3}");
}

#[test]
fn stats_throughput_stop_version() {
    let node = Node::start();
    assert_eq!(
        run(&node, "compactionhistory").unwrap(),
        "Compaction History:\nThere is no compaction history\n"
    );
    assert_eq!(
        run(&node, "compactionstats").unwrap(),
        "pending tasks: 0\n\n"
    );
    assert_eq!(
        run(&node, "getcompactionthroughput").unwrap(),
        "Current compaction throughput: 0 MB/s\n"
    );
    assert_eq!(run(&node, "setcompactionthroughput 32").unwrap(), "");
    assert_eq!(
        run(&node, "getcompactionthroughput").unwrap(),
        "Current compaction throughput: 32 MB/s\n"
    );
    assert_eq!(node.db.compaction().throughput(), 32 << 20);
    assert_eq!(run(&node, "stop COMPACTION").unwrap(), "");
    assert_eq!(run(&node, "stop CLEANUP").unwrap(), "");
    assert_eq!(run(&node, "version").unwrap(), "ReleaseVersion: 3.0.8\n");
    assert!(run(&node, "help").unwrap().contains("compactionstats"));
}

#[test]
fn errors_read_like_nodetool() {
    let node = Node::start();
    let e = run(&node, "flush nope").unwrap_err();
    assert_eq!(e.exit_code, 1);
    assert_eq!(
        e.message,
        "nodetool: Keyspace [nope] does not exist.\nSee 'nodetool help' or 'nodetool help <command>'."
    );
    let e = run(&node, "compact nope t").unwrap_err();
    assert_eq!(e.exit_code, 1);
    assert!(e
        .message
        .starts_with("nodetool: Keyspace [nope] does not exist."));
    let e = run(&node, "flush ks nope").unwrap_err();
    assert_eq!(e.exit_code, 2);
    assert_eq!(
        e.message,
        "error: Can't find a column family nope in keyspace ks"
    );
    let e = run(&node, "stop FOO").unwrap_err();
    assert_eq!(e.exit_code, 1);
    assert!(e
        .message
        .starts_with("nodetool: compaction_type: can not convert \"FOO\" to a OperationType"));
    let e = run(&node, "stop VALIDATION").unwrap_err();
    assert_eq!(
        (e.exit_code, e.message.as_str()),
        (2, "error: Compaction type VALIDATION is unsupported")
    );
    let e = run(&node, "setcompactionthroughput fast").unwrap_err();
    assert_eq!(e.exit_code, 1);
    let e = run(&node, "frobnicate").unwrap_err();
    assert_eq!(e.exit_code, 1);
    assert!(e
        .message
        .starts_with("nodetool: Found unexpected parameters: [frobnicate]"));
    let e = run(&node, "compact ks t --flush-memtables perhaps").unwrap_err();
    assert_eq!(e.exit_code, 1);
}

#[test]
fn no_node_is_a_connection_error() {
    // A port nobody listens on: bind, note it, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let e = nodetool::main(&["-p".into(), port.to_string(), "version".into()]).unwrap_err();
    assert_eq!(e.exit_code, 1);
    assert_eq!(
        e.message,
        format!("nodetool: Failed to connect to '127.0.0.1:{port}' - ConnectException: 'Connection refused'.")
    );
}
