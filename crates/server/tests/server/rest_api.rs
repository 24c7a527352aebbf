//! The REST admin API against a live engine: flush, compaction, history, throughput,
//! listings, errors, and malformed HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use cairn_nodetool::client::ClientError;
use cairn_server::rest::json::Json;
use common::Node;
use rand::{Rng, SeedableRng};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

fn metric(node: &Node, name: &str, table: &str) -> i64 {
    node.client()
        .get(&format!("/column_family/metrics/{name}/ks:{table}"), &[])
        .unwrap()
        .as_i64()
        .unwrap()
}

#[test]
fn flush_creates_sstables_and_compaction_merges_them() {
    let node = Node::start();
    let c = node.client();
    assert_eq!(metric(&node, "live_ss_table_count", "t"), 0);
    for round in 0..3 {
        node.write("t", round, 50);
        let r = c
            .post("/storage_service/keyspace_flush/ks", &[("cf", "t")])
            .unwrap();
        assert_eq!(r, Json::Null);
        assert_eq!(node.sstables("t"), round as usize + 1);
        assert_eq!(
            metric(&node, "live_ss_table_count", "t"),
            i64::from(round) + 1
        );
    }
    // ks.u was not flushed.
    assert_eq!(node.sstables("u"), 0);
    assert!(metric(&node, "live_disk_space_used", "t") > 0);

    assert_eq!(
        c.get("/compaction_manager/compaction_history", &[])
            .unwrap(),
        Json::Arr(vec![])
    );
    c.post("/storage_service/keyspace_compaction/ks", &[("cf", "t")])
        .unwrap();
    assert_eq!(node.sstables("t"), 1);

    let h = c
        .get("/compaction_manager/compaction_history", &[])
        .unwrap();
    let h = h.as_array().unwrap();
    assert_eq!(h.len(), 1);
    let e = &h[0];
    assert_eq!(e.get("ks").unwrap().as_str(), Some("ks"));
    assert_eq!(e.get("cf").unwrap().as_str(), Some("t"));
    assert!(e.get("bytes_in").unwrap().as_i64().unwrap() > 0);
    assert!(e.get("bytes_out").unwrap().as_i64().unwrap() > 0);
    assert!(
        e.get("compacted_at").unwrap().as_i64().unwrap()
            >= e.get("started_at").unwrap().as_i64().unwrap()
    );
    assert_eq!(e.get("id").unwrap().as_str().unwrap().len(), 36);
    // Three partitions, each from one sstable.
    assert_eq!(
        e.get("rows_merged").unwrap(),
        &Json::Arr(vec![Json::obj([
            ("key", Json::Int(1)),
            ("value", Json::Int(3))
        ])])
    );
    assert_eq!(e.get("sstables_in").unwrap().as_array().unwrap().len(), 3);
    assert_eq!(
        c.get("/compaction_manager/metrics/completed_tasks", &[])
            .unwrap(),
        Json::Int(1)
    );
    assert!(
        c.get("/compaction_manager/metrics/bytes_compacted", &[])
            .unwrap()
            .as_i64()
            .unwrap()
            > 0
    );
    assert_eq!(
        c.get("/compaction_manager/compactions", &[]).unwrap(),
        Json::Arr(vec![])
    );
    assert_eq!(
        c.get("/compaction_manager/metrics/pending_tasks", &[])
            .unwrap(),
        Json::Int(0)
    );
    assert_eq!(
        c.get("/compaction_manager/metrics/pending_tasks_by_table", &[])
            .unwrap(),
        Json::Arr(vec![])
    );
}

#[test]
fn flush_without_cf_flushes_the_keyspace_and_global_flush_everything() {
    let node = Node::start();
    let c = node.client();
    node.write("t", 1, 10);
    node.write("u", 1, 10);
    c.post("/storage_service/keyspace_flush/ks", &[]).unwrap();
    assert_eq!((node.sstables("t"), node.sstables("u")), (1, 1));
    node.write("t", 2, 10);
    c.post("/storage_service/flush", &[]).unwrap();
    assert_eq!(node.sstables("t"), 2);
    // Compaction without flush_memtables leaves the memtable alone.
    node.write("t", 3, 10);
    c.post(
        "/storage_service/keyspace_compaction/ks",
        &[("cf", "t"), ("flush_memtables", "false")],
    )
    .unwrap();
    assert_eq!(node.sstables("t"), 1);
    assert!(metric(&node, "memtable_live_data_size", "t") > 0);
    c.post("/storage_service/compact", &[]).unwrap();
    assert_eq!(node.sstables("t"), 1);
    assert_eq!(metric(&node, "memtable_live_data_size", "t"), 0);
}

#[test]
fn throughput_set_and_get() {
    let node = Node::start();
    let c = node.client();
    assert_eq!(
        c.get("/storage_service/compaction_throughput", &[])
            .unwrap(),
        Json::Int(0)
    );
    c.post("/storage_service/compaction_throughput", &[("value", "16")])
        .unwrap();
    assert_eq!(
        c.get("/storage_service/compaction_throughput", &[])
            .unwrap(),
        Json::Int(16)
    );
    assert_eq!(node.db.compaction().throughput(), 16 << 20);
    for bad in ["abc", "-1", ""] {
        let e = c
            .post("/storage_service/compaction_throughput", &[("value", bad)])
            .unwrap_err();
        assert!(
            matches!(e, ClientError::Http { status: 400, .. }),
            "{bad}: {e:?}"
        );
    }
    let e = c
        .post("/storage_service/compaction_throughput", &[])
        .unwrap_err();
    assert!(matches!(e, ClientError::Http { status: 400, .. }));
    assert_eq!(
        c.get("/storage_service/compaction_throughput", &[])
            .unwrap(),
        Json::Int(16)
    );
}

#[test]
fn listings_and_node_info() {
    let node = Node::start();
    let c = node.client();
    assert_eq!(
        c.get("/storage_service/keyspaces", &[]).unwrap(),
        Json::Arr(vec![Json::str("ks"), Json::str("other")])
    );
    let cfs = c.get("/column_family/", &[]).unwrap();
    let cfs = cfs.as_array().unwrap();
    assert_eq!(cfs.len(), 3);
    assert_eq!(
        cfs[0],
        Json::obj([
            ("ks", Json::str("ks")),
            ("cf", Json::str("t")),
            ("type", Json::str("ColumnFamilies"))
        ])
    );
    assert_eq!(
        c.get("/column_family/name", &[]).unwrap(),
        Json::Arr(vec![
            Json::str("ks:t"),
            Json::str("ks:u"),
            Json::str("other:v")
        ])
    );
    assert_eq!(
        c.get("/storage_service/release_version", &[]).unwrap(),
        Json::str("3.0.8")
    );
    assert_eq!(
        c.get("/storage_service/hostid/local", &[]).unwrap(),
        Json::str("11111111-2222-4333-8444-555555555555")
    );
    let ids = c.get("/storage_service/host_id", &[]).unwrap();
    assert_eq!(
        ids.as_array().unwrap()[0].get("key"),
        Some(&Json::str("127.0.0.1"))
    );
    assert_eq!(
        c.get("/storage_service/cluster_name", &[]).unwrap(),
        Json::str("Test Cluster")
    );
}

fn http_error(e: ClientError) -> (u16, String) {
    match e {
        ClientError::Http { status, message } => (status, message),
        other => panic!("expected an HTTP error, got {other:?}"),
    }
}

#[test]
fn errors_carry_status_and_scylla_messages() {
    let node = Node::start();
    let c = node.client();
    let (s, m) = http_error(
        c.post("/storage_service/keyspace_flush/nope", &[])
            .unwrap_err(),
    );
    assert_eq!((s, m.as_str()), (400, "Can't find a keyspace nope"));
    let (s, m) = http_error(
        c.post("/storage_service/keyspace_compaction/ks", &[("cf", "t,zz")])
            .unwrap_err(),
    );
    assert_eq!(
        (s, m.as_str()),
        (400, "Can't find a column family zz in keyspace ks")
    );
    let (s, _) = http_error(
        c.get("/column_family/metrics/live_ss_table_count/ks:zz", &[])
            .unwrap_err(),
    );
    assert_eq!(s, 400);
    let (s, _) = http_error(
        c.get("/column_family/metrics/live_ss_table_count/kst", &[])
            .unwrap_err(),
    );
    assert_eq!(s, 400);
    let (s, m) = http_error(c.get("/no/such/path", &[]).unwrap_err());
    assert_eq!((s, m.as_str()), (404, "Not found"));
    let (s, _) = http_error(
        c.get("/storage_service/keyspace_flush/ks", &[])
            .unwrap_err(),
    );
    assert_eq!(s, 405);
    let (s, _) = http_error(
        c.post("/compaction_manager/stop_compaction", &[("type", "FOO")])
            .unwrap_err(),
    );
    assert_eq!(s, 400);
    let (s, m) = http_error(
        c.post(
            "/compaction_manager/stop_compaction",
            &[("type", "VALIDATION")],
        )
        .unwrap_err(),
    );
    assert_eq!(
        (s, m.as_str()),
        (500, "Compaction type VALIDATION is unsupported")
    );
    c.post(
        "/compaction_manager/stop_compaction",
        &[("type", "COMPACTION")],
    )
    .unwrap();
    c.post(
        "/compaction_manager/stop_keyspace_compaction/ks",
        &[("type", "COMPACTION")],
    )
    .unwrap();
    let (s, _) = http_error(
        c.post(
            "/storage_service/keyspace_compaction/ks",
            &[("flush_memtables", "maybe")],
        )
        .unwrap_err(),
    );
    assert_eq!(s, 400);

    // The raw error body is ScyllaDB's shape.
    let raw = raw_exchange(
        node.port,
        b"POST /storage_service/keyspace_flush/nope HTTP/1.1\r\nConnection: close\r\n\r\n",
    );
    assert!(raw.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{raw}");
    assert!(
        raw.ends_with(r#"{"message":"Can't find a keyspace nope","code":400}"#),
        "{raw}"
    );
}

fn raw_exchange(port: u16, bytes: &[u8]) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let _ = s.write_all(bytes);
    let _ = s.shutdown(std::net::Shutdown::Write);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn keep_alive_and_pipelining() {
    let node = Node::start();
    let raw = raw_exchange(
        node.port,
        b"GET /storage_service/release_version HTTP/1.1\r\n\r\nGET /storage_service/keyspaces HTTP/1.1\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(raw.matches("HTTP/1.1 200 OK").count(), 2, "{raw}");
    assert!(raw.contains("\"3.0.8\""));
    assert!(raw.ends_with("[\"ks\",\"other\"]"));
    // A form-encoded body works like the query string.
    let raw = raw_exchange(
        node.port,
        b"POST /storage_service/compaction_throughput HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 7\r\nConnection: close\r\n\r\nvalue=5",
    );
    assert!(raw.starts_with("HTTP/1.1 200 OK"), "{raw}");
    assert_eq!(node.db.compaction().throughput(), 5 << 20);
}

#[test]
fn malformed_http_gets_errors_and_never_breaks_the_server() {
    let node = Node::start();
    let cases: &[(&[u8], &str)] = &[
        (b"GARBAGE\r\n\r\n", "HTTP/1.1 400"),
        (b"GET / HTTP/2.0\r\n\r\n", "HTTP/1.1 505"),
        (b"GET /%zz HTTP/1.1\r\n\r\n", "HTTP/1.1 400"),
        (b"GET nothing HTTP/1.1\r\n\r\n", "HTTP/1.1 400"),
        (b"GET / HTTP/1.1\r\nno colon\r\n\r\n", "HTTP/1.1 400"),
        (
            b"POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
            "HTTP/1.1 400",
        ),
        (
            b"POST / HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n",
            "HTTP/1.1 413",
        ),
        (
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "HTTP/1.1 501",
        ),
        (
            b"POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc",
            "HTTP/1.1 400",
        ),
        (b"GET /\xff\xfe HTTP/1.1\r\n\r\n", "HTTP/1.1 400"),
    ];
    for (req, expect) in cases {
        let raw = raw_exchange(node.port, req);
        assert!(
            raw.starts_with(expect),
            "{:?} → {raw}",
            String::from_utf8_lossy(req)
        );
    }
    let mut huge = b"GET / HTTP/1.1\r\nX: ".to_vec();
    huge.extend(std::iter::repeat_n(b'a', 20_000));
    assert!(raw_exchange(node.port, &huge).starts_with("HTTP/1.1 431"));

    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for i in 0..200 {
        let len = rng.gen_range(0..600);
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        if i % 3 == 0 {
            // Plausible-looking prefixes reach deeper into the parser.
            let mut v = b"POST /storage_service/keyspace_flush/".to_vec();
            v.append(&mut bytes);
            bytes = v;
        }
        if i % 2 == 0 {
            bytes.extend_from_slice(b"\r\n\r\n");
        }
        let raw = raw_exchange(node.port, &bytes);
        assert!(raw.is_empty() || raw.starts_with("HTTP/1.1 "), "{raw}");
    }
    // Still serving.
    assert_eq!(
        node.client()
            .get("/storage_service/release_version", &[])
            .unwrap(),
        Json::str("3.0.8")
    );
}

#[test]
fn shutdown_closes_the_listener() {
    let mut node = Node::start();
    let port = node.port;
    node.client()
        .get("/storage_service/keyspaces", &[])
        .unwrap();
    node.stop();
    let e = node
        .client()
        .get("/storage_service/keyspaces", &[])
        .unwrap_err();
    assert!(
        matches!(e, ClientError::Connect { .. }),
        "{e:?} on port {port}"
    );
}
