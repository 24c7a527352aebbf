//! A data directory from before roles moved into the schema log: its roles, kept in the
//! engine table `system_auth.roles` (role text PRIMARY KEY, can_login boolean, is_superuser
//! boolean, salted_hash text — the layout `Roles::open` wrote then), are put into the log on
//! the first start of this Cairn, unless the log holds roles already (`exec::auth`'s module
//! doc). The old on-disk state is made through the engine's API, as the old code made it,
//! then the engine is closed and opened again from disk.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use cairn_cluster::node::HostId;
use cairn_cluster::proxy::StorageProxy;
use cairn_cluster::schema_log::{LocalSchemaLog, SchemaLog};
use cairn_cluster::topology::{Member, Topology, TopologyHandle};
use cairn_cql::exec::system::NodeInfo;
use cairn_cql::exec::{Executor, Outcome, QueryParams, Session};
use cairn_cql::Error;
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{
    Cell, ClusteringKey, ColumnData, DecoratedKey, LivenessInfo, Mutation, Partition, Row,
};
use cairn_engine::schema::{ColumnKind, TableSchema};
use cairn_engine::{Database, DatabaseConfig, Wait};
use std::collections::BTreeMap;
use std::sync::Arc;

fn alone() -> TopologyHandle {
    TopologyHandle::new(
        Topology::single(Member::alone(HostId([1; 16]), [127, 0, 0, 1].into())).unwrap(),
    )
}

/// The roles of an older Cairn: (name, can_login, is_superuser, password).
const OLD_ROLES: [(&str, bool, bool, Option<&str>); 3] = [
    ("admin", true, true, Some("admin-pw")),
    ("app", true, false, Some("app-pw")),
    ("group", false, false, None),
];

/// Writes `system_auth.roles` as the Cairn before the schema log did (its `Roles::put`),
/// with no default `cassandra` role (an operator who had dropped it), and closes the engine.
fn old_data_dir(dir: &std::path::Path) {
    let db = Database::open(DatabaseConfig::new(dir)).unwrap();
    let table = db
        .create_table(
            TableSchema::new("system_auth", "roles")
                .with_column("role", CqlType::Text, ColumnKind::PartitionKey)
                .with_column("can_login", CqlType::Boolean, ColumnKind::Regular)
                .with_column("is_superuser", CqlType::Boolean, ColumnKind::Regular)
                .with_column("salted_hash", CqlType::Text, ColumnKind::Regular),
        )
        .unwrap();
    let ts = 1_700_000_000_000_000;
    let flag = |v: bool| ColumnData::Simple(Cell::live(ts, Bytes::from(vec![u8::from(v)])));
    let mut muts = Vec::new();
    for (name, login, superuser, password) in OLD_ROLES {
        let mut row = Row {
            marker: Some(LivenessInfo::live(ts)),
            ..Row::default()
        };
        row.columns.push((1, flag(login)));
        row.columns.push((2, flag(superuser)));
        if let Some(p) = password {
            let hash = bcrypt::hash(p, 4).unwrap();
            row.columns
                .push((3, ColumnData::Simple(Cell::live(ts, Bytes::from(hash)))));
        }
        let mut update = Partition::default();
        update.rows.insert(ClusteringKey::empty(), row);
        muts.push(Mutation {
            table: table.schema().id,
            key: DecoratedKey::new(Bytes::copy_from_slice(name.as_bytes())),
            update,
        });
    }
    db.apply(muts, Wait::Allowed).unwrap();
    // Half on disk, half in the commitlog, as a node stopped at any moment leaves it.
    db.flush("system_auth", "roles").unwrap();
}

fn executor(dir: &std::path::Path, log: Arc<dyn SchemaLog>) -> Executor {
    let db = Arc::new(Database::open(DatabaseConfig::new(dir)).unwrap());
    Executor::open_with_log(
        Arc::new(StorageProxy::new(db, alone())),
        NodeInfo::default(),
        log,
    )
    .unwrap()
    .with_authentication(true)
}

fn login(ex: &Executor, user: &str, password: &str) -> Result<Session, Error> {
    let s = Session::default();
    ex.authenticate(&s, format!("\0{user}\0{password}").as_bytes())?;
    Ok(s)
}

/// `system_auth.roles` as a client reads it: name → (can_login, is_superuser).
fn listed(ex: &Executor, s: &Session) -> BTreeMap<String, (bool, bool)> {
    let q = "SELECT role, can_login, is_superuser FROM system_auth.roles";
    let Outcome::Rows(rs) = ex
        .query(s, q, &QueryParams::default(), Wait::Allowed)
        .unwrap()
    else {
        panic!("{q}: no rows");
    };
    let flag = |b: &Option<Bytes>| b.as_deref() == Some(&[1][..]);
    rs.rows
        .iter()
        .map(|r| {
            let name = String::from_utf8(r[0].as_deref().unwrap().to_vec()).unwrap();
            (name, (flag(&r[1]), flag(&r[2])))
        })
        .collect()
}

#[test]
fn an_older_nodes_roles_go_into_an_empty_log() {
    let dir = tempfile::tempdir().unwrap();
    old_data_dir(dir.path());
    let log: Arc<dyn SchemaLog> = Arc::new(LocalSchemaLog::default());
    let ex = executor(dir.path(), Arc::clone(&log));

    // The old passwords log in; the default superuser is not made beside them.
    let admin = login(&ex, "admin", "admin-pw").unwrap();
    login(&ex, "app", "app-pw").unwrap();
    assert!(matches!(
        login(&ex, "app", "wrong"),
        Err(Error::BadCredentials(_))
    ));
    assert!(login(&ex, "cassandra", "cassandra").is_err());
    // A role that cannot log in stays so.
    assert!(login(&ex, "group", "").is_err());
    let want: BTreeMap<String, (bool, bool)> = OLD_ROLES
        .iter()
        .map(|(n, l, s, _)| (n.to_string(), (*l, *s)))
        .collect();
    assert_eq!(listed(&ex, &admin), want);

    // They are the log's now: another node (another data directory, no old table) on the
    // same log sees them, and its own default superuser is not added.
    let other = tempfile::tempdir().unwrap();
    let ex2 = executor(other.path(), Arc::clone(&log));
    let admin2 = login(&ex2, "admin", "admin-pw").unwrap();
    assert!(login(&ex2, "cassandra", "cassandra").is_err());
    assert_eq!(listed(&ex2, &admin2), want);

    // A change made through the log is what both see; the old table is not read again.
    ex2.query(
        &admin2,
        "ALTER ROLE app WITH PASSWORD = 'new-pw'",
        &QueryParams::default(),
        Wait::Allowed,
    )
    .unwrap();
    drop(ex);
    let ex = executor(dir.path(), Arc::clone(&log));
    login(&ex, "app", "new-pw").unwrap();
    assert!(login(&ex, "app", "app-pw").is_err());
}

#[test]
fn a_log_holding_roles_wins_over_an_older_nodes() {
    // A cluster whose log already holds roles (the default superuser, from a new node).
    let log: Arc<dyn SchemaLog> = Arc::new(LocalSchemaLog::default());
    let first = tempfile::tempdir().unwrap();
    let ex1 = executor(first.path(), Arc::clone(&log));
    login(&ex1, "cassandra", "cassandra").unwrap();

    // An older node joining it keeps the log's roles: its own are not imported.
    let dir = tempfile::tempdir().unwrap();
    old_data_dir(dir.path());
    let ex = executor(dir.path(), Arc::clone(&log));
    let su = login(&ex, "cassandra", "cassandra").unwrap();
    assert!(login(&ex, "admin", "admin-pw").is_err());
    assert_eq!(
        listed(&ex, &su).into_keys().collect::<Vec<_>>(),
        vec!["cassandra".to_string()]
    );
}
