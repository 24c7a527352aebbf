//! `cairn nodetool`'s commands against a live REST API: output layouts and errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use cairn_engine::Wait;

use cairn_nodetool::{self as nodetool, NodetoolError};
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

/// `key: value` lines of `info` / `tablestats` output (trimmed key → value).
fn fields(out: &str) -> Vec<(String, String)> {
    out.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

fn field<'a>(fields: &'a [(String, String)], key: &str) -> &'a str {
    fields
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {key}"))
}

#[test]
fn status_and_info() {
    let node = Node::start();
    node.write("t", 1, 100);
    run(&node, "flush").unwrap();
    let out = run(&node, "status").unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "Datacenter: datacenter1");
    assert_eq!(lines[1], "=======================");
    assert_eq!(lines[2], "Status=Up/Down");
    assert_eq!(lines[3], "|/ State=Normal/Leaving/Joining/Moving");
    let header: Vec<&str> = lines[4].split_whitespace().collect();
    assert_eq!(
        header,
        [
            "--",
            "Address",
            "Load",
            "Tokens",
            "Owns",
            "(effective)",
            "Host",
            "ID",
            "Rack"
        ]
    );
    let row: Vec<&str> = lines[5].split_whitespace().collect();
    let load = node.db.table_stats("ks", "t").unwrap().live_disk_bytes;
    assert_eq!(row[0], "UN");
    assert_eq!(row[1], "127.0.0.1");
    // Load in Cassandra's units ("4.12 KiB").
    let (n, unit) = (row[2].parse::<f64>().unwrap(), row[3]);
    let bytes = match unit {
        "bytes" => n,
        "KiB" => n * 1024.0,
        other => panic!("unit {other}"),
    };
    assert!((bytes - load as f64).abs() <= 0.01 * 1024.0, "{out}");
    assert_eq!(
        &row[4..],
        [
            "1",
            "100.0%",
            "11111111-2222-4333-8444-555555555555",
            "rack1"
        ]
    );
    assert!(run(&node, "status ks").is_ok());
    assert_eq!(run(&node, "status nope").unwrap_err().exit_code, 1);

    let out = run(&node, "info").unwrap();
    let f = fields(&out);
    assert!(out.starts_with("ID                     : 11111111-2222-4333-8444-555555555555\n"));
    assert_eq!(field(&f, "Gossip active"), "true");
    assert_eq!(field(&f, "Native Transport active"), "false");
    assert!(field(&f, "Load").ends_with("KiB"));
    let generation: i64 = field(&f, "Generation No").parse().unwrap();
    assert!(generation > 1_700_000_000);
    let uptime: u64 = field(&f, "Uptime (seconds)").parse().unwrap();
    assert!(uptime < 120);
    let heap = field(&f, "Heap Memory (MB)");
    let (used, total) = heap.split_once(" / ").unwrap();
    assert!(used.parse::<f64>().unwrap() > 1.0);
    assert!(total.parse::<f64>().unwrap() >= used.parse::<f64>().unwrap());
    assert_eq!(field(&f, "Data Center"), "datacenter1");
    assert_eq!(field(&f, "Rack"), "rack1");
    assert_eq!(field(&f, "Exceptions"), "0");
    assert!(field(&f, "Key Cache").starts_with("entries "));
    assert!(field(&f, "Key Cache").ends_with("14400 save period in seconds"));
    assert!(field(&f, "Row Cache").starts_with("entries "));
    assert!(field(&f, "Row Cache").ends_with("0 save period in seconds"));
    assert_eq!(run(&node, "invalidaterowcache").unwrap(), "");
    assert_eq!(run(&node, "invalidaterowcache x").unwrap_err().exit_code, 1);
    assert_eq!(field(&f, "Token"), "0");
}

#[test]
fn describering_lists_the_ring() {
    let node = Node::start();
    let out = run(&node, "describering ks").unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("Schema Version:"));
    assert_eq!(lines[1], "TokenRange: ");
    assert_eq!(
        lines[2],
        "\tTokenRange(start_token:0, end_token:0, endpoints:[127.0.0.1], rpc_endpoints:[127.0.0.1], endpoint_details:[EndpointDetails(host:127.0.0.1, datacenter:datacenter1, rack:rack1)])"
    );
    assert_eq!(lines.len(), 3);
    assert_eq!(run(&node, "describering nope").unwrap_err().exit_code, 1);
    assert_eq!(run(&node, "describering").unwrap_err().exit_code, 1);
}

#[test]
fn tablestats_follow_flushes_compaction_and_requests() {
    let node = Node::start();
    node.write("t", 1, 10);
    node.write("t", 2, 10);
    run(&node, "flush ks t").unwrap();
    node.write("t", 3, 10);
    run(&node, "flush ks t").unwrap();
    node.write("t", 4, 5);
    assert_eq!(node.read("t", 1), 10);
    assert_eq!(node.read("t", 3), 10);

    let out = run(&node, "tablestats ks.t").unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "Total number of tables: 1");
    assert_eq!(lines[1], "----------------");
    assert_eq!(lines[2], "Keyspace : ks");
    assert_eq!(lines[3], "\tRead Count: 2");
    assert!(lines[4].starts_with("\tRead Latency: ") && lines[4].ends_with(" ms"));
    assert_eq!(lines[5], "\tWrite Count: 35");
    assert_eq!(lines[7], "\tPending Flushes: 0");
    assert_eq!(lines[8], "\t\tTable: t");
    assert_eq!(lines[9], "\t\tSSTable count: 2");
    assert_eq!(lines.last(), Some(&"----------------"));
    let f = fields(&out);
    assert_eq!(field(&f, "SSTables in each level"), "[2]");
    let live: u64 = field(&f, "Space used (live)").parse().unwrap();
    assert_eq!(
        live,
        node.db.table_stats("ks", "t").unwrap().live_disk_bytes
    );
    assert_eq!(field(&f, "Space used (total)"), live.to_string());
    assert_eq!(field(&f, "Number of partitions (estimate)"), "4");
    assert_eq!(field(&f, "Memtable cell count"), "5");
    assert!(field(&f, "Memtable data size").parse::<u64>().unwrap() > 0);
    assert_eq!(field(&f, "Memtable switch count"), "2");
    assert_eq!(field(&f, "Local read count"), "2");
    assert_eq!(field(&f, "Local write count"), "35");
    assert!(field(&f, "Local write latency").ends_with(" ms"));
    let ratio: f64 = field(&f, "SSTable Compression Ratio").parse().unwrap();
    assert!(ratio > 0.0);
    let min: u64 = field(&f, "Compacted partition minimum bytes")
        .parse()
        .unwrap();
    let max: u64 = field(&f, "Compacted partition maximum bytes")
        .parse()
        .unwrap();
    assert!(min > 0 && max >= min);
    assert!(field(&f, "Bloom filter space used").parse::<u64>().unwrap() > 0);

    run(&node, "compact ks t").unwrap();
    let f = fields(&run(&node, "cfstats ks").unwrap());
    // `compact` flushes first: 3 sstables → 1.
    assert_eq!(field(&f, "SSTable count"), "1");
    assert_eq!(field(&f, "Memtable cell count"), "0");
    // `cfstats ks` lists both of ks's tables.
    assert_eq!(field(&f, "Total number of tables"), "2");

    let all = run(&node, "tablestats").unwrap();
    assert!(all.starts_with("Total number of tables: 3\n"));
    assert!(all.contains("Keyspace : other\n"));
    assert_eq!(run(&node, "tablestats nope").unwrap_err().exit_code, 1);
    assert_eq!(run(&node, "tablestats ks.nope").unwrap_err().exit_code, 1);
}

#[test]
fn tablestats_count_bloom_filter_answers_and_pending_flushes() {
    let node = Node::start();
    for a in 0..200 {
        node.write("t", a, 1);
    }
    run(&node, "flush ks t").unwrap();
    let f = fields(&run(&node, "tablestats ks.t").unwrap());
    assert_eq!(field(&f, "Bloom filter false positives"), "0");
    assert_eq!(field(&f, "Bloom filter false ratio"), "0.00000");
    // Present partitions: the filter admits them and the index confirms (true positives).
    for a in 0..50 {
        assert_eq!(node.read("t", a), 1);
    }
    // Absent ones: about 1 % (bloom_filter_fp_chance) get past the filter, and the index
    // read finds nothing. The keys are fixed, so the count is too.
    for a in 1000..6000 {
        assert_eq!(node.read("t", a), 0);
    }
    let stats = node.db.table_stats("ks", "t").unwrap();
    assert_eq!(stats.bloom_true_positives, 50);
    let fp = stats.bloom_false_positives;
    assert!((5..=150).contains(&fp), "{fp} false positives");
    let f = fields(&run(&node, "tablestats ks.t").unwrap());
    assert_eq!(field(&f, "Bloom filter false positives"), fp.to_string());
    let ratio: f64 = field(&f, "Bloom filter false ratio").parse().unwrap();
    assert!(
        (ratio - fp as f64 / (fp + 50) as f64).abs() < 1e-5,
        "{ratio}"
    );
    // The ratio is Cassandra's "recent" one: since the previous call, which this one was.
    let f = fields(&run(&node, "tablestats ks.t").unwrap());
    assert_eq!(field(&f, "Bloom filter false ratio"), "0.00000");
    assert_eq!(field(&f, "Bloom filter false positives"), fp.to_string());
    let recent = |m: &str| {
        node.client()
            .get(&format!("/column_family/metrics/{m}/ks:t"), &[])
            .unwrap()
            .as_f64()
            .unwrap()
    };
    assert_eq!(recent("recent_bloom_filter_false_positives"), 0.0);
    for a in 6000..11000 {
        assert_eq!(node.read("t", a), 0);
    }
    let fp2 = node
        .db
        .table_stats("ks", "t")
        .unwrap()
        .bloom_false_positives
        - fp;
    assert!(fp2 > 0);
    assert_eq!(recent("recent_bloom_filter_false_positives"), fp2 as f64);
    assert_eq!(recent("recent_bloom_filter_false_positives"), 0.0);
    assert_eq!(node.read("t", 1), 1);
    assert_eq!(recent("recent_bloom_filter_false_ratio"), 0.0);
    assert_eq!(
        recent("bloom_filter_false_positives"),
        (fp + fp2) as f64,
        "the totals are not reset"
    );
    let fp = fp + fp2;
    let page = node.scrape();
    assert!(page.contains(&format!(
        "scylla_column_family_bloom_filter_false_positives{{ks=\"ks\",cf=\"t\",shard=\"0\"}} {fp}\n"
    )));
    // Nothing repaired: every byte is unrepaired.
    let unrepaired = stats.uncompressed_data_bytes as f64 / 1024.0;
    assert_eq!(field(&f, "Bytes unrepaired"), format!("{unrepaired:.3}KiB"));

    // A memtable sealed but not flushed yet is a pending flush.
    assert_eq!(field(&f, "Pending flushes"), "0");
    node.write("t", 7, 3);
    let t = node.db.table("ks", "t").unwrap();
    assert!(t.switch_memtable(Default::default));
    let out = run(&node, "tablestats ks.t").unwrap();
    assert!(out.contains("\tPending Flushes: 1\n"), "{out}");
    assert_eq!(field(&fields(&out), "Pending flushes"), "1");
    assert!(node
        .scrape()
        .contains("scylla_column_family_pending_tasks{ks=\"ks\",cf=\"t\",shard=\"0\"} 1\n"));
    run(&node, "flush ks t").unwrap();
    let f = fields(&run(&node, "tablestats ks.t").unwrap());
    assert_eq!(field(&f, "Pending flushes"), "0");
    assert_eq!(field(&f, "SSTable count"), "2");
}

#[test]
fn tablestats_droppable_tombstone_ratio() {
    let node = Node::start();
    let id = node.db.table("ks", "t").unwrap().schema().id;
    let deleted = cairn_engine::model::Partition {
        deletion: Some(cairn_engine::model::DeletionTime {
            marked_at: 5000,
            local_deletion_time: 1_000_000,
        }),
        ..Default::default()
    };
    node.write("t", 1, 3);
    node.db
        .apply(
            vec![cairn_engine::model::Mutation {
                table: id,
                key: common::pk(2),
                update: deleted,
            }],
            Wait::Allowed,
        )
        .unwrap();
    run(&node, "flush ks t").unwrap();
    let f = fields(&run(&node, "tablestats ks.t").unwrap());
    // Deleted at second 1 000 000 of the epoch, long past gc_grace_seconds: droppable.
    let ratio: f64 = field(&f, "Droppable tombstone ratio").parse().unwrap();
    assert!(ratio > 0.0, "{ratio}");
}

#[test]
fn tablehistograms_reflect_partition_sizes() {
    let node = Node::start();
    let out = run(&node, "tablehistograms ks t").unwrap();
    assert!(out.starts_with(
        "No SSTables exists, unable to calculate 'Partition Size' and 'Cell Count' percentiles\n"
    ));
    // 9 small partitions (2 rows) and one large (400 rows): the 50th percentile is small,
    // the maximum large.
    for a in 0..9 {
        node.write("t", a, 2);
    }
    node.write("t", 100, 400);
    run(&node, "flush ks t").unwrap();
    for a in 0..10 {
        node.read("t", a);
    }
    let out = run(&node, "cfhistograms ks.t").unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "ks/t histograms");
    assert_eq!(
        lines[1],
        format!(
            "{:<10}{:>18}{:>18}{:>18}{:>18}{:>18}",
            "Percentile",
            "Read Latency",
            "Write Latency",
            "SSTables",
            "Partition Size",
            "Cell Count"
        )
    );
    let rows: Vec<Vec<&str>> = lines[3..10]
        .iter()
        .map(|l| l.split_whitespace().collect())
        .collect();
    let labels: Vec<&str> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(labels, ["50%", "75%", "95%", "98%", "99%", "Min", "Max"]);
    let col = |row: usize, c: usize| rows[row][c].parse::<f64>().unwrap();
    let stats = node.db.table_stats("ks", "t").unwrap();
    // Partition Size column: percentiles of the flushed partitions' sizes.
    assert_eq!(col(0, 4) as u64, stats.partition_sizes.percentile(0.5));
    assert_eq!(col(6, 4) as u64, stats.partition_sizes.max());
    assert!(col(6, 4) > 50.0 * col(0, 4), "{out}");
    // Cell Count: the large partition holds 400 rows.
    assert!(col(6, 5) >= 400.0, "{out}");
    // SSTables: every read consulted at most the one sstable.
    assert!(col(6, 3) <= 1.0);
    // Latencies are positive and ordered.
    assert!(col(6, 2) >= col(0, 2) && col(6, 2) > 0.0);
    assert!(col(6, 1) >= col(0, 1) && col(6, 1) > 0.0);
    assert_eq!(run(&node, "tablehistograms ks").unwrap_err().exit_code, 1);
    assert_eq!(
        run(&node, "tablehistograms ks nope").unwrap_err().exit_code,
        1
    );
}

#[test]
fn tablestats_count_live_cells_and_tombstones_per_slice() {
    use cairn_engine::model::{Cell, ColumnData, DeletionTime, Partition, Row};
    let node = Node::start();
    let per_slice = |node: &Node| {
        let f = fields(&run(node, "tablestats ks.t").unwrap());
        [
            "Average live cells per slice (last five minutes)",
            "Maximum live cells per slice (last five minutes)",
            "Average tombstones per slice (last five minutes)",
            "Maximum tombstones per slice (last five minutes)",
        ]
        .map(|k| field(&f, k).to_string())
    };
    // No reads yet: as an idle Cassandra prints it.
    assert_eq!(per_slice(&node), ["NaN", "0", "NaN", "0"]);

    // Ten rows of one cell each.
    node.write("t", 1, 10);
    assert_eq!(node.read("t", 1), 10);
    assert_eq!(per_slice(&node), ["10.0", "10", "0.0", "0"]);

    // Rows 0-3 deleted, and row 4's cell: a read then visits 4 row tombstones, 1 cell
    // tombstone and the 5 live cells of rows 5..9 (row 4 lives on by its marker).
    let deleted = DeletionTime {
        marked_at: 5000,
        local_deletion_time: 1_000_000,
    };
    let mut update = Partition::default();
    for b in 0..4 {
        let row = Row {
            deletion: Some(deleted),
            ..Row::default()
        };
        update.rows.insert(common::ck(b), row);
    }
    let row = Row {
        columns: vec![(2, ColumnData::Simple(Cell::tombstone(5000, 1_000_000)))],
        ..Row::default()
    };
    update.rows.insert(common::ck(4), row);
    node.apply("t", 1, update);
    run(&node, "flush ks t").unwrap();
    assert_eq!(node.read("t", 1), 6);
    // A deleted partition: one tombstone, nothing live.
    node.write("t", 2, 3);
    node.apply(
        "t",
        2,
        Partition {
            deletion: Some(deleted),
            ..Partition::default()
        },
    );
    assert_eq!(node.read("t", 2), 0);
    // Reads (10, 0), (5, 5), (0, 1) live cells and tombstones.
    assert_eq!(per_slice(&node), ["5.0", "10", "2.0", "5"]);

    let histogram = |m: &str| {
        let v = node
            .client()
            .get(&format!("/column_family/metrics/{m}/ks:t"), &[])
            .unwrap();
        cairn_server::rest::column_family::histogram_from_json(&v).unwrap()
    };
    let t = histogram("tombstone_scanned_histogram");
    assert_eq!((t.count(), t.sum, t.max()), (3, 6, 5));
    let l = histogram("live_scanned_histogram");
    assert_eq!((l.count(), l.sum), (3, 15));
    let page = node.scrape();
    for line in [
        "scylla_column_family_live_scanned{ks=\"ks\",cf=\"t\",shard=\"0\"} 15\n",
        "scylla_column_family_tombstone_scanned{ks=\"ks\",cf=\"t\",shard=\"0\"} 6\n",
    ] {
        assert!(page.contains(line), "{line}");
    }
}
