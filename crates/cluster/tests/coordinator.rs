//! The storage proxy as a coordinator of writes, between real sockets: three nodes on
//! 127.0.0.1–3 (same port), each with its own database holding the same table, a keyspace
//! replicated three times. Writes reach every replica up and are acknowledged at the level;
//! a replica that does not answer makes a write at ALL time out with the protocol's fields;
//! a replica known down makes it Unavailable before anything is applied; a replica that
//! refuses makes it fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use cairn_cluster::consistency::{Consistency, WriteType};
use cairn_cluster::messaging::{Delivery, LinkFilter, Messaging, MessagingConfig, Verb};
use cairn_cluster::node::{Endpoint, HostId};
use cairn_cluster::placement::ReplicationStrategy;
use cairn_cluster::proxy::{replica, RemoteReplicas, StorageProxy};
use cairn_cluster::topology::{Member, MemberState, Topology, TopologyHandle};
use cairn_cluster::Error;
use cairn_engine::model::{Mutation, Token};
use cairn_engine::{Database, DatabaseConfig, ReadCommand, Wait};
use cairn_test_support::kv;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

const KS: &str = "ks";
const TABLE_ID: u128 = 0x00c0_ffee;

fn ip(n: u8) -> IpAddr {
    IpAddr::from([127, 0, 0, n])
}

fn member(n: u8, up: bool) -> Member {
    Member {
        endpoint: Endpoint {
            host_id: HostId([n; 16]),
            address: ip(n),
            datacenter: "datacenter1".into(),
            rack: "rack1".into(),
        },
        rpc_address: ip(n),
        native_port: 9042,
        tokens: vec![Token(i64::from(n) * 1_000_000)],
        state: MemberState::Normal,
        up,
    }
}

struct Node {
    _dir: tempfile::TempDir,
    db: Arc<Database>,
    messaging: Arc<Messaging>,
    proxy: Arc<StorageProxy>,
}

/// Node `n` of three, all seen up unless listed in `down`; `with_table` false leaves the
/// table out (a replica that refuses writes to it).
async fn node(n: u8, port: u16, down: &[u8], with_table: bool) -> Node {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Database::open(DatabaseConfig::new(dir.path())).unwrap());
    if with_table {
        let mut schema = kv::kv_schema(KS, "t");
        schema.id = TABLE_ID;
        db.create_table(schema).unwrap();
    }
    let mut config = MessagingConfig::new(ip(n), "coordinator-test");
    config.port = port;
    let messaging = Arc::new(Messaging::start(config).await.unwrap());
    let members = (1..=3).map(|m| member(m, !down.contains(&m))).collect();
    let topology = TopologyHandle::new(Topology::new(HostId([n; 16]), members).unwrap());
    let proxy = StorageProxy::new(Arc::clone(&db), topology).with_remote(RemoteReplicas {
        messaging: Arc::clone(&messaging),
        runtime: tokio::runtime::Handle::current(),
        write_timeout: Duration::from_secs(2),
    });
    proxy.set_replication(
        KS,
        ReplicationStrategy::Simple {
            replication_factor: 3,
        },
    );
    let proxy = Arc::new(proxy);
    replica::serve(&proxy, &messaging);
    Node {
        _dir: dir,
        db,
        messaging,
        proxy,
    }
}

/// Three nodes on one port; node 1 sees the members listed in `down` as down, and the node
/// listed in `without_table` lacks the table.
async fn three(down: &[u8], without_table: Option<u8>) -> Vec<Node> {
    let first = node(1, 0, down, without_table != Some(1)).await;
    let port = first.messaging.local_addr().port();
    let mut nodes = vec![first];
    for n in 2..=3 {
        nodes.push(node(n, port, &[], without_table != Some(n)).await);
    }
    nodes
}

fn write(a: i32, value: &str) -> Mutation {
    Mutation {
        table: TABLE_ID,
        key: kv::pk(a),
        update: kv::insert(1, value, 1_000),
    }
}

fn holds(node: &Node, a: i32) -> bool {
    let t = node.db.table(KS, "t").unwrap();
    let cmd = ReadCommand::all(kv::now(), Wait::Allowed);
    t.read(&kv::pk(a), &cmd).unwrap().is_some()
}

/// Waits until `f` holds (the replicas that were not waited for get the write a moment
/// later); false after 30 s.
fn eventually(f: impl Fn() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(30);
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// Runs a proxy write on a blocking thread, where waiting for replicas is allowed.
async fn mutate(node: &Node, m: Mutation, cl: Consistency) -> Result<(), Error> {
    let proxy = Arc::clone(&node.proxy);
    tokio::task::spawn_blocking(move || proxy.mutate(vec![m], cl, Wait::Allowed))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_reaches_every_replica_and_is_acknowledged_at_its_level() {
    let nodes = three(&[], None).await;
    for (a, cl) in [
        (1, Consistency::One),
        (2, Consistency::Quorum),
        (3, Consistency::All),
        (4, Consistency::LocalQuorum),
        (5, Consistency::Any),
    ] {
        mutate(&nodes[0], write(a, "x"), cl).await.unwrap();
        for n in &nodes {
            assert!(eventually(|| holds(n, a)), "{cl}: every replica has it");
        }
    }
    // A write that must wait for other nodes is refused on a reactor thread, unapplied.
    let r = nodes[0]
        .proxy
        .mutate(vec![write(9, "x")], Consistency::One, Wait::Never);
    assert!(matches!(
        r,
        Err(Error::Engine(cairn_engine::Error::WouldBlock))
    ));
    assert!(!holds(&nodes[0], 9));
    let received: u64 = nodes
        .iter()
        .map(|n| {
            n.proxy
                .metrics()
                .replica_received_mutations
                .load(std::sync::atomic::Ordering::Relaxed)
        })
        .sum();
    assert_eq!(received, 10, "five writes to two remote replicas each");
}

/// Drops node 1's messages to node 3.
struct Partition;

impl LinkFilter for Partition {
    fn delivery(&self, _from: IpAddr, to: IpAddr, verb: Verb) -> Delivery {
        if to == ip(3) && verb == Verb::Mutation {
            Delivery::Drop
        } else {
            Delivery::Deliver
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_that_does_not_answer_times_out_a_write_at_all() {
    let nodes = three(&[], None).await;
    nodes[0].messaging.set_filter(Some(Arc::new(Partition)));
    mutate(&nodes[0], write(1, "x"), Consistency::Quorum)
        .await
        .unwrap();
    match mutate(&nodes[0], write(2, "x"), Consistency::All).await {
        Err(Error::WriteTimeout(t)) => {
            assert_eq!((t.received, t.block_for), (2, 3));
            assert_eq!(t.write_type, WriteType::Simple);
            assert_eq!(
                t.to_string(),
                "Operation timed out - received only 2 responses."
            );
        }
        other => panic!("expected a write timeout, got {other:?}"),
    }
    // Applied where it reached, as in Cassandra: a timeout is not a rollback.
    assert!(eventually(|| holds(&nodes[1], 2)));
    assert!(!holds(&nodes[2], 2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_known_down_makes_all_unavailable_before_anything_is_applied() {
    let nodes = three(&[3], None).await;
    mutate(&nodes[0], write(1, "x"), Consistency::Quorum)
        .await
        .unwrap();
    assert!(eventually(|| holds(&nodes[1], 1)));
    match mutate(&nodes[0], write(2, "x"), Consistency::All).await {
        Err(Error::Unavailable(u)) => assert_eq!((u.required, u.alive), (3, 2)),
        other => panic!("expected unavailable, got {other:?}"),
    }
    assert!(!holds(&nodes[0], 2) && !holds(&nodes[1], 2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_that_refuse_fail_the_write() {
    let nodes = three(&[], Some(2)).await;
    mutate(&nodes[0], write(1, "x"), Consistency::Quorum)
        .await
        .unwrap();
    match mutate(&nodes[0], write(2, "x"), Consistency::All).await {
        Err(Error::WriteFailure(f)) => {
            assert_eq!(f.block_for, 3);
            assert_eq!(f.failures.len(), 1);
            assert_eq!(f.failures[0].0, ip(2));
            assert!(
                f.to_string().starts_with("Operation failed - received"),
                "{f}"
            );
        }
        other => panic!("expected a write failure, got {other:?}"),
    }
}
