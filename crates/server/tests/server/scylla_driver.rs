//! End-to-end tests through the real ScyllaDB Rust driver (`scylla` crate): a node is started
//! in-process on a free loopback port and the driver connects to it as it would to ScyllaDB or
//! Cassandra (control connection reading `system.local` / `system.peers` / `system_schema.*`,
//! schema agreement after DDL, prepared statements, paging, batches, typed deserialization).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use cairn_server::config::Config;
use cairn_server::{start_node, Node};
use futures::{StreamExt, TryStreamExt};
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::errors::{DbError, ExecutionError, PrepareError, RequestAttemptError};
use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::unprepared::Statement;
use scylla::value::CqlTimestamp;
use std::time::Duration;

/// Generous bound so a hang shows as a failure rather than a stuck CI job.
const TIMEOUT: Duration = Duration::from_secs(60);

struct TestNode {
    node: Node,
    _dir: tempfile::TempDir,
}

impl TestNode {
    async fn start() -> TestNode {
        let dir = tempfile::tempdir().unwrap();
        let cfg = Config {
            workdir: dir.path().to_path_buf(),
            listen_address: "127.0.0.1".into(),
            rpc_address: "127.0.0.1".into(),
            native_transport_port: 0,
            api_address: "127.0.0.1".into(),
            api_port: 0,
            prometheus_port: 0,
            ..Config::default()
        };
        let node = start_node(&cfg).await.expect("node starts");
        TestNode { node, _dir: dir }
    }

    async fn session(&self) -> Session {
        self.builder().build().await.expect("driver connects")
    }

    fn builder(&self) -> SessionBuilder {
        SessionBuilder::new()
            .known_node_addr(self.node.cql.local_addr())
            .connection_timeout(Duration::from_secs(10))
    }

    async fn stop(self) {
        self.node.shutdown().await;
    }
}

async fn run<F: std::future::Future<Output = ()>>(f: F) {
    tokio::time::timeout(TIMEOUT, f)
        .await
        .expect("test finished within the timeout");
}

/// The `DbError` of a failed request, or a panic naming what came back instead.
fn db_error(err: &ExecutionError) -> (&DbError, &str) {
    match err {
        ExecutionError::LastAttemptError(RequestAttemptError::DbError(e, msg)) => (e, msg),
        other => panic!("expected a database error, got {other:?}"),
    }
}

async fn create_ks(s: &Session, ks: &str) {
    s.query_unpaged(
        format!(
            "CREATE KEYSPACE {ks} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}"
        ),
        (),
    )
    .await
    .expect("CREATE KEYSPACE");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connects_and_sees_cluster_and_schema() {
    run(async {
        let n = TestNode::start().await;
        let s = n.session().await;

        // One node, known by the address we connected to, with the local row's dc/rack/tokens.
        let state = s.get_cluster_state();
        let nodes = state.get_nodes_info();
        assert_eq!(nodes.len(), 1, "nodes seen by the driver: {nodes:?}");
        assert_eq!(nodes[0].address.ip(), n.node.cql.local_addr().ip());
        assert!(nodes[0].datacenter.is_some(), "datacenter: {:?}", nodes[0]);
        assert!(nodes[0].rack.is_some(), "rack: {:?}", nodes[0]);

        // The connections' tasks ran on the runtime's worker threads, which the stall
        // detector now watches (it refreshes its list every quarter of the threshold).
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while n.node.stalls.stats().threads == 0 {
            assert!(std::time::Instant::now() < deadline, "no reactor thread watched");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }

        // Schema agreement reads system.local.schema_version (and peers).
        let before = s.await_schema_agreement().await.expect("schema agreement");
        create_ks(&s, "drv_meta").await;
        s.query_unpaged(
            "CREATE TABLE drv_meta.t (pk int, ck text, v bigint, s int static, PRIMARY KEY (pk, ck))",
            (),
        )
        .await
        .expect("CREATE TABLE");
        let after = s.await_schema_agreement().await.expect("schema agreement");
        assert_ne!(before, after, "schema_version changes on DDL");
        assert_eq!(s.check_schema_agreement().await.unwrap(), Some(after));

        // The driver's schema metadata (system_schema.keyspaces/tables/columns).
        s.refresh_metadata().await.expect("metadata refresh");
        let state = s.get_cluster_state();
        let ks = state
            .get_keyspace("drv_meta")
            .expect("keyspace drv_meta in driver metadata");
        let t = ks.tables.get("t").expect("table t in driver metadata");
        assert_eq!(t.partition_key, vec!["pk".to_string()]);
        assert_eq!(t.clustering_key, vec!["ck".to_string()]);
        let mut cols: Vec<_> = t.columns.keys().cloned().collect();
        cols.sort();
        assert_eq!(cols, ["ck", "pk", "s", "v"]);
        assert!(state.get_keyspace("system_schema").is_some() || state.get_keyspace("system").is_some(),
            "system keyspaces listed: {:?}", state.keyspaces_iter().map(|(k, _)| k).collect::<Vec<_>>());

        n.stop().await;
    })
    .await;
}

/// gocql (and the Java driver) read schema metadata with *prepared* statements on system tables
/// and execute them with skip_metadata, trusting the PREPARED result metadata. So a PREPARE of a
/// system-table SELECT must describe its bind markers and its result columns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_system_table_select_has_metadata() {
    run(async {
        let n = TestNode::start().await;
        let s = n.session().await;
        create_ks(&s, "drv_sysprep").await;

        let mut p = s
            .prepare("SELECT durable_writes, replication FROM system_schema.keyspaces WHERE keyspace_name = ?")
            .await
            .expect("PREPARE on system_schema.keyspaces");
        let vars: Vec<String> = p
            .get_variable_col_specs()
            .iter()
            .map(|c| format!("{}:{:?}", c.name(), c.typ()))
            .collect();
        let result: Vec<String> = p
            .get_current_result_set_col_specs()
            .get()
            .iter()
            .map(|c| format!("{}:{:?}", c.name(), c.typ()))
            .collect();
        assert_eq!(
            result.len(),
            2,
            "PREPARED result metadata columns: {result:?} (bind markers: {vars:?})"
        );
        assert_eq!(
            vars.len(),
            1,
            "PREPARED bind markers: {vars:?}"
        );
        assert!(
            vars[0].starts_with("keyspace_name:"),
            "bind marker described as {vars:?}, want keyspace_name text"
        );

        // Execute as gocql does: skip_metadata, decoding with the PREPARED metadata.
        p.set_use_cached_result_metadata(true);
        let (durable, repl): (bool, std::collections::HashMap<String, String>) = s
            .execute_unpaged(&p, ("drv_sysprep",))
            .await
            .expect("EXECUTE with cached result metadata")
            .into_rows_result()
            .expect("rows")
            .single_row()
            .expect("one typed row");
        assert!(durable);
        assert_eq!(
            repl.get("class").map(String::as_str),
            Some("org.apache.cassandra.locator.SimpleStrategy"),
            "{repl:?}"
        );

        n.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_writes_single_partition_read_and_paging() {
    run(async {
        let n = TestNode::start().await;
        let s = n.session().await;
        create_ks(&s, "drv_page").await;
        s.query_unpaged(
            "CREATE TABLE drv_page.t (pk int, ck int, v text, PRIMARY KEY (pk, ck))",
            (),
        )
        .await
        .expect("CREATE TABLE");

        let insert = s
            .prepare("INSERT INTO drv_page.t (pk, ck, v) VALUES (?, ?, ?)")
            .await
            .expect("PREPARE INSERT");
        assert_eq!(insert.get_variable_col_specs().len(), 3);

        // 3000 rows in partition 1, 10 rows in each of partitions 2..=51, written concurrently.
        const BIG: i32 = 3000;
        let mut rows: Vec<(i32, i32)> = (0..BIG).map(|ck| (1, ck)).collect();
        for pk in 2..=51 {
            rows.extend((0..10).map(|ck| (pk, ck)));
        }
        let total = rows.len();
        futures::stream::iter(rows)
            .map(|(pk, ck)| {
                let (s, insert) = (&s, &insert);
                async move {
                    s.execute_unpaged(insert, (pk, ck, format!("v{pk}-{ck}")))
                        .await
                        .map(|_| ())
                }
            })
            .buffer_unordered(32)
            .try_collect::<Vec<()>>()
            .await
            .expect("prepared INSERTs");

        // Single row, single partition.
        let get = s
            .prepare("SELECT v FROM drv_page.t WHERE pk = ? AND ck = ?")
            .await
            .expect("PREPARE SELECT row");
        let (v,): (String,) = s
            .execute_unpaged(&get, (1, 1234))
            .await
            .unwrap()
            .into_rows_result()
            .unwrap()
            .single_row()
            .unwrap();
        assert_eq!(v, "v1-1234");
        let none = s
            .execute_unpaged(&get, (1, BIG + 5))
            .await
            .unwrap()
            .into_rows_result()
            .unwrap();
        assert_eq!(none.rows_num(), 0);

        // A whole small partition, unpaged.
        let small: Vec<(i32, String)> = s
            .query_unpaged("SELECT ck, v FROM drv_page.t WHERE pk = 7", ())
            .await
            .unwrap()
            .into_rows_result()
            .unwrap()
            .rows::<(i32, String)>()
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let want: Vec<(i32, String)> = (0..10).map(|ck| (ck, format!("v7-{ck}"))).collect();
        assert_eq!(small, want);

        // The big partition through many small pages, every row in clustering order.
        let mut scan = s
            .prepare("SELECT ck, v FROM drv_page.t WHERE pk = ?")
            .await
            .expect("PREPARE partition scan");
        scan.set_page_size(7);
        let got: Vec<(i32, String)> = s
            .execute_iter(scan.clone(), (1,))
            .await
            .expect("execute_iter")
            .rows_stream::<(i32, String)>()
            .expect("typed rows")
            .try_collect()
            .await
            .expect("all pages");
        assert_eq!(got.len(), BIG as usize);
        for (i, (ck, v)) in got.iter().enumerate() {
            assert_eq!(*ck, i as i32, "row {i} out of order");
            assert_eq!(*v, format!("v1-{i}"));
        }

        // Page by page by hand: every page but the last is full and carries a paging state.
        let mut state = scylla::response::PagingState::start();
        let mut seen = 0usize;
        let mut pages = 0usize;
        loop {
            let (res, next) = s
                .execute_single_page(&scan, (1,), state)
                .await
                .expect("single page");
            let res = res.into_rows_result().unwrap();
            for r in res.rows::<(i32, String)>().unwrap() {
                let (ck, _) = r.unwrap();
                assert_eq!(ck, seen as i32);
                seen += 1;
            }
            pages += 1;
            match next.into_paging_control_flow() {
                std::ops::ControlFlow::Break(()) => break,
                std::ops::ControlFlow::Continue(st) => {
                    assert_eq!(res.rows_num(), 7, "non-final page {pages} is full");
                    state = st;
                }
            }
        }
        assert_eq!(seen, BIG as usize);
        assert_eq!(pages, (BIG as usize).div_ceil(7));

        // Full-table scan across partitions with an unprepared paged statement.
        let mut all = Statement::new("SELECT pk, ck, v FROM drv_page.t");
        all.set_page_size(100);
        let mut got: Vec<(i32, i32, String)> = s
            .query_iter(all, ())
            .await
            .expect("query_iter")
            .rows_stream::<(i32, i32, String)>()
            .unwrap()
            .try_collect()
            .await
            .expect("all pages of the table");
        assert_eq!(got.len(), total);
        // Within each partition the rows come in clustering order, partitions contiguous.
        let mut last: Option<(i32, i32)> = None;
        for (pk, ck, _) in &got {
            if let Some((lpk, lck)) = last {
                if lpk == *pk {
                    assert_eq!(*ck, lck + 1, "partition {pk} out of order");
                } else {
                    assert_eq!(*ck, 0, "partition {pk} starts at its first row");
                }
            }
            last = Some((*pk, *ck));
        }
        got.sort();
        got.dedup();
        assert_eq!(got.len(), total, "no row twice");

        // COUNT(*) over the paged partition.
        let (count,): (i64,) = s
            .query_unpaged("SELECT COUNT(*) FROM drv_page.t WHERE pk = 1", ())
            .await
            .unwrap()
            .into_rows_result()
            .unwrap()
            .single_row()
            .unwrap();
        assert_eq!(count, i64::from(BIG));

        n.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches() {
    run(async {
        let n = TestNode::start().await;
        let s = n.session().await;
        create_ks(&s, "drv_batch").await;
        s.query_unpaged(
            "CREATE TABLE drv_batch.t (pk int, ck int, v text, PRIMARY KEY (pk, ck))",
            (),
        )
        .await
        .unwrap();
        let insert = s
            .prepare("INSERT INTO drv_batch.t (pk, ck, v) VALUES (?, ?, ?)")
            .await
            .unwrap();

        // Logged batch mixing prepared and simple statements, with bound values.
        let mut b = Batch::new(BatchType::Logged);
        b.append_statement(insert.clone());
        b.append_statement(insert.clone());
        b.append_statement("INSERT INTO drv_batch.t (pk, ck, v) VALUES (?, ?, ?)");
        b.append_statement("INSERT INTO drv_batch.t (pk, ck, v) VALUES (1, 3, 'lit')");
        s.batch(&b, ((1, 0, "a"), (1, 1, "b"), (1, 2, "c"), ()))
            .await
            .expect("logged batch");

        // Unlogged batch of prepared statements (prepared as a whole by the driver).
        let mut u = Batch::new(BatchType::Unlogged);
        for _ in 0..20 {
            u.append_statement(insert.clone());
        }
        let u = s.prepare_batch(&u).await.expect("prepare batch");
        let values: Vec<(i32, i32, String)> = (0..20).map(|i| (2, i, format!("u{i}"))).collect();
        s.batch(&u, values).await.expect("unlogged batch");

        // A batch with a bound DELETE.
        let mut d = Batch::new(BatchType::Unlogged);
        d.append_statement("DELETE FROM drv_batch.t WHERE pk = ? AND ck = ?");
        s.batch(&d, ((1, 1),)).await.expect("batch with a delete");

        let rows: Vec<(i32, i32, String)> = s
            .query_unpaged("SELECT pk, ck, v FROM drv_batch.t WHERE pk IN (1, 2)", ())
            .await
            .unwrap()
            .into_rows_result()
            .unwrap()
            .rows()
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let mut want = vec![
            (1, 0, "a".to_string()),
            (1, 2, "c".to_string()),
            (1, 3, "lit".to_string()),
        ];
        want.extend((0..20).map(|i| (2, i, format!("u{i}"))));
        assert_eq!(rows, want);

        // Counter batches are refused for non-counter tables (Invalid), not silently applied.
        let mut c = Batch::new(BatchType::Counter);
        c.append_statement("INSERT INTO drv_batch.t (pk, ck, v) VALUES (9, 9, 'x')");
        let err = s
            .batch(&c, ((),))
            .await
            .expect_err("counter batch of an insert");
        let (e, msg) = db_error(&err);
        assert_eq!(*e, DbError::Invalid, "{msg}");

        n.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn native_types_round_trip() {
    run(async {
        let n = TestNode::start().await;
        let s = n.session().await;
        create_ks(&s, "drv_types").await;
        s.query_unpaged(
            "CREATE TABLE drv_types.t (id uuid PRIMARY KEY, i int, b bigint, t text, bl blob, \
             f boolean, d double, ts timestamp)",
            (),
        )
        .await
        .unwrap();
        let insert = s
            .prepare("INSERT INTO drv_types.t (id, i, b, t, bl, f, d, ts) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
            .await
            .unwrap();
        let select = s
            .prepare("SELECT id, i, b, t, bl, f, d, ts FROM drv_types.t WHERE id = ?")
            .await
            .unwrap();

        type Row = (
            uuid::Uuid,
            i32,
            i64,
            String,
            Vec<u8>,
            bool,
            f64,
            CqlTimestamp,
        );
        let cases: Vec<Row> = vec![
            (
                uuid::Uuid::new_v4(),
                i32::MIN,
                i64::MAX,
                "héllo wörld ✓".to_string(),
                vec![0, 1, 2, 255],
                true,
                -1.5e300,
                CqlTimestamp(1_700_000_000_123),
            ),
            (
                uuid::Uuid::new_v4(),
                0,
                -1,
                String::new(),
                Vec::new(),
                false,
                f64::INFINITY,
                CqlTimestamp(-1),
            ),
        ];
        for row in &cases {
            s.execute_unpaged(&insert, row.clone()).await.expect("typed insert");
            let back: Row = s
                .execute_unpaged(&select, (row.0,))
                .await
                .unwrap()
                .into_rows_result()
                .unwrap()
                .single_row()
                .expect("typed row");
            assert_eq!(&back, row);
        }

        // Literals in a simple statement, and nulls read back as None.
        let id = uuid::Uuid::new_v4();
        s.query_unpaged(
            format!(
                "INSERT INTO drv_types.t (id, i, t, bl, ts) VALUES ({id}, 42, 'lit', 0xcafe, 1704164645678)"
            ),
            (),
        )
        .await
        .unwrap();
        type OptRow = (
            uuid::Uuid,
            Option<i32>,
            Option<i64>,
            Option<String>,
            Option<Vec<u8>>,
            Option<bool>,
            Option<f64>,
            Option<CqlTimestamp>,
        );
        let back: OptRow = s
            .execute_unpaged(&select, (id,))
            .await
            .unwrap()
            .into_rows_result()
            .unwrap()
            .single_row()
            .unwrap();
        assert_eq!(
            back,
            (
                id,
                Some(42),
                None,
                Some("lit".to_string()),
                Some(vec![0xca, 0xfe]),
                None,
                None,
                Some(CqlTimestamp(1_704_164_645_678)),
            )
        );

        // Result metadata carries the declared types: a wrong Rust type is a type-check error.
        let res = s
            .execute_unpaged(&select, (id,))
            .await
            .unwrap()
            .into_rows_result()
            .unwrap();
        assert!(res.single_row::<(uuid::Uuid, i64)>().is_err());
        let specs: Vec<String> = res
            .column_specs()
            .iter()
            .map(|c| format!("{}:{:?}", c.name(), c.typ()))
            .collect();
        assert_eq!(specs.len(), 8, "{specs:?}");

        n.stop().await;
    })
    .await;
}

/// Timestamp literals in the forms Cassandra accepts (milliseconds since the epoch, and ISO 8601
/// dates and date-times with or without a zone); every form that fails is listed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timestamp_literals() {
    run(async {
        let n = TestNode::start().await;
        let s = n.session().await;
        create_ks(&s, "drv_ts").await;
        s.query_unpaged(
            "CREATE TABLE drv_ts.t (k int PRIMARY KEY, ts timestamp)",
            (),
        )
        .await
        .unwrap();
        let cases: [(&str, i64); 6] = [
            ("1704164645678", 1_704_164_645_678),
            ("'2024-01-02T03:04:05.678Z'", 1_704_164_645_678),
            ("'2024-01-02 03:04:05.678+0000'", 1_704_164_645_678),
            ("'2024-01-02T03:04:05+01:00'", 1_704_161_045_000),
            ("'2024-01-02 03:04:05Z'", 1_704_164_645_000),
            ("'2024-01-02+0000'", 1_704_153_600_000),
        ];
        let mut failures = Vec::new();
        for (k, (lit, want)) in cases.iter().enumerate() {
            let r = s
                .query_unpaged(
                    format!("INSERT INTO drv_ts.t (k, ts) VALUES ({k}, {lit})"),
                    (),
                )
                .await;
            if let Err(e) = r {
                failures.push(format!("{lit}: {e}"));
                continue;
            }
            let (ts,): (CqlTimestamp,) = s
                .query_unpaged(format!("SELECT ts FROM drv_ts.t WHERE k = {k}"), ())
                .await
                .unwrap()
                .into_rows_result()
                .unwrap()
                .single_row()
                .unwrap();
            if ts.0 != *want {
                failures.push(format!("{lit}: read back {} ms, want {want}", ts.0));
            }
        }
        assert!(failures.is_empty(), "timestamp literals: {failures:#?}");
        n.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_have_the_right_codes() {
    run(async {
        let n = TestNode::start().await;
        let s = n.session().await;

        let err = s
            .query_unpaged("SELEKT * FROM nowhere", ())
            .await
            .expect_err("syntax error");
        let (e, msg) = db_error(&err);
        assert_eq!(*e, DbError::SyntaxError, "{msg}");

        let err = s
            .query_unpaged("SELECT * FROM system.no_such_table", ())
            .await
            .expect_err("unknown table");
        let (e, msg) = db_error(&err);
        assert_eq!(*e, DbError::Invalid, "{msg}");

        let err = s
            .query_unpaged("SELECT * FROM no_such_ks.t", ())
            .await
            .expect_err("unknown keyspace");
        let (e, msg) = db_error(&err);
        assert_eq!(*e, DbError::Invalid, "{msg}");

        // The same errors through PREPARE.
        match s.prepare("SELECT * FROM no_such_ks.t").await {
            Err(PrepareError::AllAttemptsFailed { first_attempt }) => match first_attempt {
                RequestAttemptError::DbError(DbError::Invalid, _) => {}
                other => panic!("PREPARE unknown table: expected Invalid, got {other:?}"),
            },
            other => panic!("PREPARE unknown table: expected Invalid, got {other:?}"),
        }
        match s.prepare("INSERT INTO").await {
            Err(PrepareError::AllAttemptsFailed { first_attempt }) => match first_attempt {
                RequestAttemptError::DbError(DbError::SyntaxError, _) => {}
                other => panic!("PREPARE syntax error: expected SyntaxError, got {other:?}"),
            },
            other => panic!("PREPARE syntax error: expected SyntaxError, got {other:?}"),
        }

        // AlreadyExists carries the keyspace (and table) names.
        create_ks(&s, "drv_err").await;
        let err = s
            .query_unpaged(
                "CREATE KEYSPACE drv_err WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
                (),
            )
            .await
            .expect_err("keyspace exists");
        let (e, msg) = db_error(&err);
        assert_eq!(
            *e,
            DbError::AlreadyExists {
                keyspace: "drv_err".into(),
                table: String::new()
            },
            "{msg}"
        );
        s.query_unpaged("CREATE TABLE drv_err.t (k int PRIMARY KEY, v int)", ())
            .await
            .unwrap();
        let err = s
            .query_unpaged("CREATE TABLE drv_err.t (k int PRIMARY KEY, v int)", ())
            .await
            .expect_err("table exists");
        let (e, msg) = db_error(&err);
        assert_eq!(
            *e,
            DbError::AlreadyExists {
                keyspace: "drv_err".into(),
                table: "t".into()
            },
            "{msg}"
        );

        // Wrong value type for a column: Invalid, and the connection stays usable.
        let err = s
            .query_unpaged("INSERT INTO drv_err.t (k, v) VALUES (1, 'text')", ())
            .await
            .expect_err("type mismatch");
        let (e, msg) = db_error(&err);
        assert_eq!(*e, DbError::Invalid, "{msg}");
        s.query_unpaged("INSERT INTO drv_err.t (k, v) VALUES (1, 2)", ())
            .await
            .expect("connection still usable");

        n.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn use_keyspace() {
    run(async {
        let n = TestNode::start().await;
        let s = n.session().await;
        create_ks(&s, "drv_use").await;
        s.query_unpaged("CREATE TABLE drv_use.kv (k text PRIMARY KEY, v int)", ())
            .await
            .unwrap();

        // Session::use_keyspace sends `USE` on every connection.
        s.use_keyspace("drv_use", false).await.expect("USE drv_use");
        assert_eq!(
            s.get_keyspace().as_deref().map(String::as_str),
            Some("drv_use")
        );
        s.query_unpaged("INSERT INTO kv (k, v) VALUES ('a', 1)", ())
            .await
            .expect("unqualified INSERT after USE");
        let p = s
            .prepare("SELECT v FROM kv WHERE k = ?")
            .await
            .expect("unqualified PREPARE");
        let (v,): (i32,) = s
            .execute_unpaged(&p, ("a",))
            .await
            .unwrap()
            .into_rows_result()
            .unwrap()
            .single_row()
            .unwrap();
        assert_eq!(v, 1);

        // A `USE` statement sent as a query answers SetKeyspace.
        let s2 = n.session().await;
        s2.query_unpaged("USE drv_use", ())
            .await
            .expect("USE as a query");
        assert_eq!(
            s2.get_keyspace().as_deref().map(String::as_str),
            Some("drv_use")
        );

        // SessionBuilder::use_keyspace on connect.
        let s3 = n
            .builder()
            .use_keyspace("drv_use", false)
            .build()
            .await
            .expect("connect with keyspace");
        let (v,): (i32,) = s3
            .query_unpaged("SELECT v FROM kv WHERE k = 'a'", ())
            .await
            .unwrap()
            .into_rows_result()
            .unwrap()
            .single_row()
            .unwrap();
        assert_eq!(v, 1);

        // Unknown keyspace: Invalid.
        let err = s
            .use_keyspace("no_such_ks", false)
            .await
            .expect_err("unknown keyspace");
        let msg = format!("{err:?}");
        assert!(msg.contains("Invalid"), "USE no_such_ks: {msg}");

        n.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_missing_the_page_cache_leave_the_reactor_and_answer_right() {
    run(async {
        let n = TestNode::start().await;
        let s = n.session().await;
        create_ks(&s, "cold").await;
        s.query_unpaged("CREATE TABLE cold.t (k int PRIMARY KEY, v text)", ())
            .await
            .unwrap();
        let stats = std::sync::Arc::clone(n.node.cql.stats());
        let insert = s
            .prepare("INSERT INTO cold.t (k, v) VALUES (?, ?)")
            .await
            .unwrap();
        let inline_before = stats.inline();
        for k in 0..300i32 {
            s.execute_unpaged(&insert, (k, format!("value-{k}-{}", "x".repeat(100))))
                .await
                .unwrap();
        }
        assert!(
            stats.inline() >= inline_before + 300,
            "writes that find memtable space run inline"
        );
        let db = std::sync::Arc::clone(&n.node.db);
        tokio::task::spawn_blocking(move || db.flush_all().unwrap())
            .await
            .unwrap();
        cairn_test_support::page_cache::evict(n._dir.path());
        let select = s.prepare("SELECT v FROM cold.t WHERE k = ?").await.unwrap();
        let spawned_before = stats.spawned();
        for k in (0..300i32).step_by(29) {
            let (v,): (String,) = s
                .execute_unpaged(&select, (k,))
                .await
                .unwrap()
                .into_rows_result()
                .unwrap()
                .single_row()
                .unwrap();
            assert_eq!(v, format!("value-{k}-{}", "x".repeat(100)));
        }
        assert!(
            stats.spawned() > spawned_before,
            "a read that misses the page cache runs off the reactor"
        );
        n.stop().await;
    })
    .await;
}

/// A user type as the driver maps it (fields matched by name).
#[derive(Debug, Clone, PartialEq, scylla::SerializeValue, scylla::DeserializeValue)]
struct Addr {
    street: String,
    zip: Option<i32>,
}

async fn read_udts(
    s: &Session,
    select: &scylla::statement::prepared::PreparedStatement,
) -> (Addr, Addr, Vec<Addr>) {
    s.execute_unpaged(select, (1,))
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .single_row::<(Addr, Addr, Vec<Addr>)>()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_types_round_trip() {
    run(async {
        let n = TestNode::start().await;
        let s = n.session().await;
        create_ks(&s, "drv_udt").await;
        for q in [
            "CREATE TYPE drv_udt.addr (street text, zip int)",
            "CREATE TABLE drv_udt.t (k int PRIMARY KEY, f frozen<addr>, n addr, \
             l list<frozen<addr>>)",
        ] {
            s.query_unpaged(q, ()).await.expect(q);
        }
        let a = Addr {
            street: "a".into(),
            zip: Some(1),
        };
        let b = Addr {
            street: "b".into(),
            zip: None,
        };
        let insert = s
            .prepare("INSERT INTO drv_udt.t (k, f, n, l) VALUES (?, ?, ?, ?)")
            .await
            .expect("PREPARE INSERT");
        s.execute_unpaged(&insert, (1, &a, &b, vec![a.clone(), b.clone()]))
            .await
            .expect("INSERT bound user type values");
        let select = s
            .prepare("SELECT f, n, l FROM drv_udt.t WHERE k = ?")
            .await
            .expect("PREPARE SELECT");
        assert_eq!(
            read_udts(&s, &select).await,
            (a.clone(), b.clone(), vec![a.clone(), b.clone()])
        );
        // A field of the non-frozen value, bound.
        let set_zip = s
            .prepare("UPDATE drv_udt.t SET n.zip = ? WHERE k = ?")
            .await
            .expect("PREPARE UPDATE field");
        s.execute_unpaged(&set_zip, (Some(7), 1)).await.unwrap();
        let b7 = Addr {
            zip: Some(7),
            ..b.clone()
        };
        assert_eq!(read_udts(&s, &select).await, (a.clone(), b7, vec![a, b]));
        n.stop().await;
    })
    .await;
}
