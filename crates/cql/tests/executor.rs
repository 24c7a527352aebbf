//! The executor end to end on a real engine directory: DDL, writes, reads, paging, schema
//! persistence, errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use cairn_cluster::node::HostId;
use cairn_cluster::proxy::StorageProxy;
use cairn_cluster::topology::{Member, Topology, TopologyHandle};
use cairn_cql::exec::system::NodeInfo;
use cairn_cql::exec::{BoundValue, Executor, Outcome, QueryParams, ResultSet, Session};
use cairn_cql::Error;
use cairn_engine::{Database, DatabaseConfig, Wait};
use std::sync::Arc;

fn open(dir: &std::path::Path) -> Executor {
    let db = Arc::new(Database::open(DatabaseConfig::new(dir)).unwrap());
    Executor::open(
        Arc::new(StorageProxy::new(db, alone())),
        NodeInfo::default(),
    )
    .unwrap()
}

/// A node alone in its ring, in `datacenter1`.
fn alone() -> TopologyHandle {
    TopologyHandle::new(
        Topology::single(Member::alone(HostId([1; 16]), [127, 0, 0, 1].into())).unwrap(),
    )
}

fn run(ex: &Executor, s: &Session, q: &str) -> Outcome {
    ex.query(s, q, &QueryParams::default(), Wait::Allowed)
        .unwrap_or_else(|e| panic!("{q}: {e}"))
}

fn rows(ex: &Executor, s: &Session, q: &str) -> ResultSet {
    match run(ex, s, q) {
        Outcome::Rows(r) => r,
        other => panic!("{q}: {other:?}"),
    }
}

fn int(b: &Option<Bytes>) -> i32 {
    i32::from_be_bytes(b.as_deref().unwrap().try_into().unwrap())
}

/// A new executor on its own directory, with [`setup`]'s keyspace and table (the directory
/// lives as long as the returned guard).
fn fresh() -> (tempfile::TempDir, Executor, Session) {
    let dir = tempfile::tempdir().unwrap();
    let ex = open(dir.path());
    let s = Session::default();
    setup(&ex, &s);
    (dir, ex, s)
}

fn setup(ex: &Executor, s: &Session) {
    run(ex, s, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    run(ex, s, "USE ks");
    run(ex, s, "CREATE TABLE t (a int, b int, c text, s int STATIC, PRIMARY KEY (a, b)) WITH CLUSTERING ORDER BY (b DESC)");
}

#[test]
fn paging_resumes_exactly_across_partitions_and_slices() {
    let (_dir, ex, s) = fresh();
    for a in 0..7 {
        for b in 0..13 {
            run(
                &ex,
                &s,
                &format!("INSERT INTO t (a, b, c) VALUES ({a}, {b}, 'v{a}-{b}')"),
            );
        }
    }
    let queries = [
        ("SELECT a, b FROM t", 7 * 13),
        ("SELECT a, b FROM t WHERE a = 3", 13),
        ("SELECT a, b FROM t WHERE a IN (1, 4, 6) AND b < 5", 15),
        ("SELECT a, b FROM t WHERE a = 2 ORDER BY b ASC", 13),
        ("SELECT a, b FROM t LIMIT 40", 40),
        ("SELECT a, b FROM t PER PARTITION LIMIT 2", 14),
    ];
    for (q, expected) in queries {
        let all = rows(&ex, &s, q).rows;
        assert_eq!(all.len(), expected, "{q}");
        for page_size in [1, 3, 13, 50] {
            let mut got = Vec::new();
            let mut params = QueryParams {
                page_size: Some(page_size),
                ..QueryParams::default()
            };
            loop {
                let Outcome::Rows(r) = ex.query(&s, q, &params, Wait::Allowed).unwrap() else {
                    panic!()
                };
                assert!(r.rows.len() <= page_size as usize);
                got.extend(r.rows);
                match r.paging_state {
                    Some(p) => params.paging_state = Some(p),
                    None => break,
                }
            }
            assert_eq!(got, all, "{q} with pages of {page_size}");
        }
    }
    // DESC clustering: rows come b = 12 … 0.
    let r = rows(&ex, &s, "SELECT b FROM t WHERE a = 0");
    let bs: Vec<i32> = r.rows.iter().map(|r| int(&r[0])).collect();
    assert_eq!(bs, (0..13).rev().collect::<Vec<_>>());
}

#[test]
fn schema_and_data_survive_restart_and_errors_match_cassandra() {
    let dir = tempfile::tempdir().unwrap();
    {
        let ex = open(dir.path());
        let s = Session::default();
        setup(&ex, &s);
        run(&ex, &s, "INSERT INTO t (a, b, c, s) VALUES (1, 2, 'x', 7)");
        let e = ex.query(
            &s,
            "CREATE TABLE t (a int PRIMARY KEY)",
            &QueryParams::default(),
            Wait::Allowed,
        );
        assert!(
            matches!(e, Err(Error::AlreadyExists { ref table, .. }) if table == "t"),
            "{e:?}"
        );
        let e = ex.query(
            &s,
            "SELECT * FROM nope",
            &QueryParams::default(),
            Wait::Allowed,
        );
        assert_eq!(e.unwrap_err().to_string(), "unconfigured table nope");
        let e = ex.query(
            &s,
            "SELECT * FROM t WHERE c = 'x'",
            &QueryParams::default(),
            Wait::Allowed,
        );
        assert!(e.unwrap_err().to_string().contains("ALLOW FILTERING"));
        let e = ex.query(
            &s,
            "ALTER TABLE t WITH compaction = {'class': 'Foo'}",
            &QueryParams::default(),
            Wait::Allowed,
        );
        assert!(
            matches!(e, Err(Error::Configuration(ref m)) if m == "Unable to find compaction strategy class 'org.apache.cassandra.db.compaction.Foo'"),
            "{e:?}"
        );
        let e = ex.query(&s, "SELEC * FROM t", &QueryParams::default(), Wait::Allowed);
        assert!(matches!(e, Err(Error::Syntax(_))));
    }
    let ex = open(dir.path());
    let s = Session::default();
    let r = rows(&ex, &s, "SELECT c, s FROM ks.t WHERE a = 1 AND b = 2");
    assert_eq!(r.rows[0][0].as_deref(), Some(&b"x"[..]));
    assert_eq!(int(&r.rows[0][1]), 7);
    let r = rows(
        &ex,
        &s,
        "SELECT column_name, kind, clustering_order FROM system_schema.columns WHERE keyspace_name = 'ks' AND table_name = 't'",
    );
    assert_eq!(r.rows.len(), 4);
}

#[test]
fn prepared_statements_bind_by_position_and_name() {
    let (_dir, ex, s) = fresh();
    let ins = ex
        .prepare(&s, "INSERT INTO t (a, b, c) VALUES (?, ?, ?) USING TTL ?")
        .unwrap();
    assert_eq!(
        ins.bind_specs
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>(),
        ["a", "b", "c", "[ttl]"]
    );
    assert_eq!(ins.pk_indexes, vec![0]);
    let v = |x: i32| BoundValue::Value(Bytes::copy_from_slice(&x.to_be_bytes()));
    ex.execute(
        &s,
        &ins.id,
        &QueryParams {
            values: vec![
                v(5),
                v(6),
                BoundValue::Value(Bytes::from_static(b"six")),
                v(0),
            ],
            ..QueryParams::default()
        },
        Wait::Allowed,
    )
    .unwrap();
    let sel = ex
        .prepare(&s, "SELECT c FROM t WHERE a = :a AND b = :b")
        .unwrap();
    let Outcome::Rows(r) = ex
        .execute(
            &s,
            &sel.id,
            &QueryParams {
                values: vec![v(6), v(5)],
                names: Some(vec!["b".into(), "a".into()]),
                ..QueryParams::default()
            },
            Wait::Allowed,
        )
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(r.rows, vec![vec![Some(Bytes::from_static(b"six"))]]);
    assert!(matches!(
        ex.execute(&s, &[1, 2, 3], &QueryParams::default(), Wait::Allowed),
        Err(Error::Unprepared(_))
    ));
}

/// A prepared INSERT works out once where its values go; its executions (columns named in
/// any order, unset values, static columns only) write what the same INSERTs as text write,
/// and the column list is checked at PREPARE with Cassandra's messages.
#[test]
fn prepared_inserts_write_what_their_text_writes() {
    let (_dir, ex, s) = fresh();
    let v = |x: i32| BoundValue::Value(Bytes::copy_from_slice(&x.to_be_bytes()));
    let text = |x: &'static str| BoundValue::Value(Bytes::from_static(x.as_bytes()));
    let exec = |q: &str, values: Vec<BoundValue>| {
        let p = ex.prepare(&s, q).unwrap();
        ex.execute(
            &s,
            &p.id,
            &QueryParams {
                values,
                ..QueryParams::default()
            },
            Wait::Allowed,
        )
    };
    let ins = "INSERT INTO t (s, c, b, a) VALUES (?, ?, ?, ?)";
    exec(ins, vec![v(10), text("x"), v(1), v(1)]).unwrap();
    exec(ins, vec![v(20), text("y"), v(2), v(1)]).unwrap();
    exec(ins, vec![BoundValue::Unset, text("z"), v(3), v(2)]).unwrap();
    exec("INSERT INTO t (a, s) VALUES (?, ?)", vec![v(3), v(30)]).unwrap();
    run(&ex, &s, "INSERT INTO t (a, b, c) VALUES (4, 4, 'w')");
    type Got = (i32, Option<i32>, Option<Bytes>, Option<i32>);
    let mut got: Vec<Got> = rows(&ex, &s, "SELECT a, b, c, s FROM t")
        .rows
        .iter()
        .map(|r| {
            (
                int(&r[0]),
                r[1].as_ref().map(|_| int(&r[1])),
                r[2].clone(),
                r[3].as_ref().map(|_| int(&r[3])),
            )
        })
        .collect();
    got.sort_by_key(|r| (r.0, r.1));
    let b = |x: &'static str| Some(Bytes::from_static(x.as_bytes()));
    assert_eq!(
        got,
        vec![
            (1, Some(1), b("x"), Some(20)),
            (1, Some(2), b("y"), Some(20)),
            (2, Some(3), b("z"), None),
            (3, None, None, Some(30)),
            (4, Some(4), b("w"), None),
        ]
    );
    for (q, message) in [
        (
            "INSERT INTO t (a, b, a) VALUES (?, ?, ?)",
            "Multiple definitions found for column a",
        ),
        (
            "INSERT INTO t (a, b, zz) VALUES (?, ?, ?)",
            "Undefined column name zz",
        ),
        (
            "INSERT INTO t (a, c) VALUES (?, ?)",
            "Some clustering keys are missing: b",
        ),
        (
            "INSERT INTO t (b, c) VALUES (?, ?)",
            "Some partition key parts are missing: a",
        ),
    ] {
        // Refused at PREPARE, as Cassandra does, and again: a failed plan is not kept.
        for _ in 0..2 {
            let err = ex.prepare(&s, q).err().map(|e| e.to_string());
            assert!(
                err.as_deref().is_some_and(|e| e.contains(message)),
                "{q}: {err:?}"
            );
        }
    }
}

/// Random mutations of valid statements never panic the executor (errors are fine).
#[test]
fn mutated_statements_never_panic() {
    use rand::{Rng, SeedableRng};
    let (_dir, ex, s) = fresh();
    run(&ex, &s, "CREATE TABLE c (k int PRIMARY KEY, l list<int>, m map<text, int>, st set<text>, f frozen<list<int>>, tu tuple<int, text>)");
    let seeds = [
        "INSERT INTO t (a, b, c, s) VALUES (1, 2, 'x', 3) USING TTL 10",
        "UPDATE t SET c = 'y' WHERE a = 1 AND b = 2",
        "DELETE c FROM t WHERE a = 1 AND b = 2",
        "DELETE FROM t WHERE a = 1 AND b > 3 AND b <= 9",
        "SELECT a, b, writetime(c), ttl(c), token(a) FROM t WHERE a IN (1, 2) AND b >= 0 ORDER BY b ASC LIMIT 5",
        "SELECT count(*), max(b), min(c), sum(b), avg(b) FROM t WHERE a = 1",
        "SELECT DISTINCT a, s FROM t",
        "SELECT * FROM t WHERE token(a) > -100 AND token(a) <= 100 ALLOW FILTERING",
        "SELECT * FROM t WHERE (b) > (1) AND a = 2",
        "SELECT * FROM t WHERE c = 'x' ALLOW FILTERING",
        "UPDATE c SET l = l + [1, 2], m['a'] = 1, st = st + {'q'} WHERE k = 1",
        "UPDATE c SET l[0] = 5, m = m - {'a'} WHERE k = 1",
        "DELETE l[0], m['a'] FROM c WHERE k = 1",
        "INSERT INTO c (k, f, tu) VALUES (2, [1, 2], (1, 'a'))",
        "SELECT * FROM system_schema.columns WHERE keyspace_name = 'ks'",
        "BEGIN BATCH INSERT INTO t (a, b) VALUES (5, 5); DELETE FROM t WHERE a = 6; APPLY BATCH",
        "ALTER TABLE t ADD d int",
        "ALTER TABLE t WITH compaction = {'class': 'LeveledCompactionStrategy'} AND gc_grace_seconds = 1",
        "CREATE TABLE IF NOT EXISTS u (x int, y int, PRIMARY KEY ((x, y)))",
        "SELECT cast(b as text), blobasint(intasblob(b)) FROM t WHERE a = 1",
    ];
    let junk = [
        "",
        "0",
        "-1",
        "2147483648",
        "'z'",
        "NULL",
        "?",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        ",",
        "a",
        "b",
        "c",
        "k",
        "l",
        "m",
        "t",
        "ks",
        "token",
        "IN",
        "AND",
        ">",
        "<=",
        "=",
        "*",
        "0x00",
        "1.5",
        "NaN",
        "true",
        "uuid()",
        "now()",
        "LIMIT",
        "ALLOW FILTERING",
    ];
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    let mut executed = 0;
    for _ in 0..3000 {
        let seed = seeds[rng.gen_range(0..seeds.len())];
        let mut words: Vec<String> = seed.split(' ').map(str::to_string).collect();
        for _ in 0..rng.gen_range(1..4) {
            let i = rng.gen_range(0..words.len());
            match rng.gen_range(0..3) {
                0 => words[i] = junk[rng.gen_range(0..junk.len())].to_string(),
                1 => {
                    words.remove(i);
                    if words.is_empty() {
                        words.push("SELECT".into());
                    }
                }
                _ => words.insert(i, junk[rng.gen_range(0..junk.len())].to_string()),
            }
        }
        let q = words.join(" ");
        if ex
            .query(&s, &q, &QueryParams::default(), Wait::Allowed)
            .is_ok()
        {
            executed += 1;
        }
    }
    assert!(
        executed > 20,
        "too few mutated statements were valid: {executed}"
    );
}

/// Two executors on one schema log (two nodes of a group 0, in memory): roles, memberships
/// and grants made on one are the other's once it follows the log, and the node that made a
/// change sees it at once.
#[test]
fn roles_and_permissions_follow_the_shared_log() {
    use cairn_cluster::schema_log::{LocalSchemaLog, SchemaLog};
    use cairn_cql::exec::auth::CacheSettings;
    let log: Arc<dyn SchemaLog> = Arc::new(LocalSchemaLog::default());
    let node = |dir: &std::path::Path| {
        let db = Arc::new(Database::open(DatabaseConfig::new(dir)).unwrap());
        Executor::open_with_log(
            Arc::new(StorageProxy::new(db, alone())),
            NodeInfo::default(),
            Arc::clone(&log),
        )
        .unwrap()
        .with_authentication(true)
        .with_authorization(true, CacheSettings::default())
    };
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, b) = (node(d1.path()), node(d2.path()));
    let su = Session::default();
    *su.user.write() = Some("cassandra".into());
    run(&a, &su, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    run(&a, &su, "CREATE TABLE ks.t (k int PRIMARY KEY, v int)");
    run(&a, &su, "CREATE ROLE reader");
    run(
        &a,
        &su,
        "CREATE ROLE app WITH PASSWORD = 'pw' AND LOGIN = true",
    );
    run(&a, &su, "GRANT SELECT ON KEYSPACE ks TO reader");
    run(&a, &su, "GRANT reader TO app");
    let app = Session::default();
    *app.user.write() = Some("app".into());
    let select = "SELECT * FROM ks.t";
    // At once where it was made.
    assert_eq!(rows(&a, &app, select).rows.len(), 0);
    // On the other node once it follows the log.
    b.sync_schema().unwrap();
    b.authenticate(&app, b"\0app\0pw").unwrap();
    assert_eq!(rows(&b, &app, select).rows.len(), 0);
    let refused = |ex: &Executor| {
        ex.query(&app, select, &QueryParams::default(), Wait::Allowed)
            .unwrap_err()
    };
    run(&b, &su, "REVOKE reader FROM app");
    assert!(matches!(refused(&b), Error::Unauthorized(m)
        if m == "User app has no SELECT permission on <table ks.t> or any of its parents"));
    a.sync_schema().unwrap();
    assert!(matches!(refused(&a), Error::Unauthorized(_)));
    // The node's view of system_auth is the log's.
    let members = rows(&a, &su, "SELECT * FROM system_auth.role_members");
    assert!(members.rows.is_empty());
    // The superuser created the keyspace, the table and both roles: it was granted them too
    // (reader's SELECT on ks is the fifth row).
    let perms = rows(
        &a,
        &su,
        "SELECT role, resource FROM system_auth.role_permissions",
    );
    assert_eq!(perms.rows.len(), 5);
}

#[test]
fn a_traced_read_records_its_steps_and_is_stored_in_system_traces() {
    use cairn_cql::trace::{TraceConfig, TraceRequest, Tracing};
    let (_dir, ex, s) = fresh();
    let ex = Arc::new(ex);
    run(&ex, &s, "INSERT INTO t (a, b, c) VALUES (1, 1, 'x')");
    ex.catalog().db().flush("ks", "t").unwrap();
    run(&ex, &s, "INSERT INTO t (a, b, c) VALUES (1, 2, 'y')");
    let node = "127.0.0.1:9042".parse().unwrap();
    let tracing = Tracing::start(&ex, node, TraceConfig::default()).unwrap();
    let query = "SELECT * FROM t WHERE a = 1";
    let session = tracing.begin(TraceRequest {
        request: "Execute CQL3 query",
        client: "127.0.0.9:5000".parse().unwrap(),
        parameters: vec![("query".into(), query.into())],
    });
    let params = QueryParams {
        trace: Some(session.trace()),
        ..QueryParams::default()
    };
    match ex.query(&s, query, &params, Wait::Allowed).unwrap() {
        Outcome::Rows(r) => assert_eq!(r.rows.len(), 2),
        other => panic!("{other:?}"),
    }
    let acts: Vec<String> = session.events().into_iter().map(|e| e.activity).collect();
    assert_eq!(acts[0], format!("Parsing {query}"));
    for want in [
        "Preparing statement",
        "Executing single-partition query on t",
        "Partition found in memtable",
        "Merged data from memtables and 1 sstables",
        "Read 2 live rows and 0 tombstone cells",
    ] {
        assert!(acts.iter().any(|a| a == want), "{want} not in {acts:?}");
    }
    assert!(
        acts.iter()
            .any(|a| a.starts_with("Reading partition from sstable")),
        "{acts:?}"
    );
    let elapsed: Vec<i32> = session.events().iter().map(|e| e.elapsed_micros).collect();
    assert!(elapsed.windows(2).all(|w| w[0] <= w[1]), "{elapsed:?}");
    tracing.finish(&session);
    // The writer stores it after the request: poll for `duration`, set last.
    let id = cairn_cql::values::temporal::format_uuid(&session.id());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let stored = loop {
        let r = rows(
            &ex,
            &s,
            &format!("SELECT duration, request, client FROM system_traces.sessions WHERE session_id = {id}"),
        );
        if r.rows.first().is_some_and(|row| row[0].is_some()) {
            break r;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "session {id} not stored"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(
        stored.rows[0][1].as_deref(),
        Some(&b"Execute CQL3 query"[..])
    );
    assert_eq!(stored.rows[0][2].as_deref(), Some(&[127u8, 0, 0, 9][..]));
    let events = rows(
        &ex,
        &s,
        &format!("SELECT activity FROM system_traces.events WHERE session_id = {id}"),
    );
    let stored: Vec<String> = events
        .rows
        .iter()
        .map(|r| String::from_utf8(r[0].clone().unwrap().to_vec()).unwrap())
        .collect();
    assert_eq!(stored, acts);
    // Clients read system_traces; they do not write it.
    let e = ex
        .query(
            &s,
            &format!("INSERT INTO system_traces.sessions (session_id, duration) VALUES ({id}, 1)"),
            &QueryParams::default(),
            Wait::Allowed,
        )
        .unwrap_err();
    assert!(matches!(e, Error::Unauthorized(_)), "{e}");
}

fn bigint(b: &Option<Bytes>) -> i64 {
    i64::from_be_bytes(b.as_deref().unwrap().try_into().unwrap())
}

/// Counter increments from several threads sum exactly, and a commitlog replayed after the
/// executor goes away (no clean shutdown: the writes after the flush live only in the
/// commitlog) counts each increment once, as does a second replay.
#[test]
fn counter_increments_sum_exactly_and_replay_once() {
    let dir = tempfile::tempdir().unwrap();
    let q = "SELECT k, n FROM c";
    {
        let ex = Arc::new(open(dir.path()));
        let s = Session::default();
        run(&ex, &s, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
        run(&ex, &s, "USE ks");
        run(&ex, &s, "CREATE TABLE c (k int PRIMARY KEY, n counter)");
        let work = |ex: Arc<Executor>, by: i64| {
            std::thread::spawn(move || {
                let s = Session::default();
                run(&ex, &s, "USE ks");
                for i in 0..200 {
                    run(
                        &ex,
                        &s,
                        &format!("UPDATE c SET n = n + {by} WHERE k = {}", i % 3),
                    );
                }
            })
        };
        let threads: Vec<_> = (1..=4).map(|by| work(Arc::clone(&ex), by)).collect();
        for t in threads {
            t.join().unwrap();
        }
        ex.proxy().db().flush_all().unwrap();
        run(&ex, &s, "UPDATE c SET n = n - 5 WHERE k = 0");
        run(&ex, &s, "BEGIN COUNTER BATCH UPDATE c SET n = n + 1 WHERE k = 1; UPDATE c SET n = n + 1 WHERE k = 1; APPLY BATCH");
    }
    // Each thread added `by` to each key 200/3 times (67 for k = 0, 67 for 1, 66 for 2).
    let times = |k: i64| if k < 2 { 67 } else { 66 };
    let want = |k: i64| {
        times(k) * 10
            + if k == 0 {
                -5
            } else if k == 1 {
                2
            } else {
                0
            }
    };
    for _ in 0..2 {
        let ex = open(dir.path());
        let s = Session::default();
        run(&ex, &s, "USE ks");
        let r = rows(&ex, &s, q);
        let mut got: Vec<(i32, i64)> = r.rows.iter().map(|r| (int(&r[0]), bigint(&r[1]))).collect();
        got.sort();
        assert_eq!(got, (0..3).map(|k| (k as i32, want(k))).collect::<Vec<_>>());
    }
}
