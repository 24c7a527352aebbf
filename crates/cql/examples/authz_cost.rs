//! What a permission check costs: `cargo run --release -p cairn-cql --example authz_cost [N]`.
//!
//! Opens an executor on a temporary directory with the authorizer on, makes a keyspace and
//! table as the superuser, a role `app` that is not a superuser with SELECT and MODIFY on the
//! keyspace (so each check walks the table's parents), then checks the bench's single-row
//! SELECT and INSERT N times each (default 2 000 000) as `app`, and prints this thread's CPU
//! time per check (`/proc/thread-self/schedstat`: time on CPU, in ns, so a loaded machine's
//! waiting is not counted). The checks are the ones `Executor::run` / `execute` / `batch`
//! make before a statement runs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use cairn_cluster::node::HostId;
use cairn_cluster::proxy::StorageProxy;
use cairn_cluster::topology::{Member, Topology, TopologyHandle};
use cairn_cql::exec::auth::CacheSettings;
use cairn_cql::exec::system::NodeInfo;
use cairn_cql::exec::{Executor, QueryParams, Session};
use cairn_engine::{Database, DatabaseConfig, Wait};
use std::sync::Arc;

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2_000_000);
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Database::open(DatabaseConfig::new(dir.path())).unwrap());
    let ex = Executor::open(
        Arc::new(StorageProxy::new(db, alone())),
        NodeInfo::default(),
    )
    .unwrap()
    .with_authentication(true)
    .with_authorization(true, CacheSettings::default());
    let su = Session::default();
    *su.user.write() = Some("cassandra".into());
    let run = |s: &Session, q: &str| {
        ex.query(s, q, &QueryParams::default(), Wait::Allowed)
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    };
    run(
        &su,
        "CREATE KEYSPACE scylla_bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
    );
    run(
        &su,
        "CREATE TABLE scylla_bench.test (pk bigint, ck bigint, v blob, PRIMARY KEY (pk, ck))",
    );
    run(&su, "CREATE ROLE app WITH PASSWORD = 'pw' AND LOGIN = true");
    run(&su, "GRANT SELECT ON KEYSPACE scylla_bench TO app");
    run(&su, "GRANT MODIFY ON KEYSPACE scylla_bench TO app");
    let app = Session::default();
    *app.user.write() = Some("app".into());
    for (what, q) in [
        (
            "SELECT",
            "SELECT ck, v FROM scylla_bench.test WHERE pk = ? LIMIT 1",
        ),
        (
            "INSERT",
            "INSERT INTO scylla_bench.test (pk, ck, v) VALUES (?, ?, ?)",
        ),
    ] {
        let stmt = cairn_cql::parse_statement(q).unwrap().statement;
        // Warm the cache and the branch predictors.
        for _ in 0..10_000 {
            ex.roles().authorize(&app, &stmt, None).unwrap();
        }
        let before = cpu_ns();
        for _ in 0..n {
            ex.roles().authorize(&app, &stmt, None).unwrap();
        }
        let spent = cpu_ns() - before;
        println!(
            "{what}: {:.1} ns of CPU per check ({n} checks)",
            spent as f64 / n as f64
        );
    }
}

/// This thread's time on CPU, in ns.
fn cpu_ns() -> u64 {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
    s.split_whitespace().next().unwrap().parse().unwrap()
}

fn alone() -> TopologyHandle {
    TopologyHandle::new(
        Topology::single(Member::alone(HostId([1; 16]), [127, 0, 0, 1].into())).unwrap(),
    )
}
