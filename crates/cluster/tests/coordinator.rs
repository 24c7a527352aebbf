//! The storage proxy as a coordinator of writes, between real sockets: three nodes on
//! 127.0.0.1–3 (same port), each with its own database holding the same table, a keyspace
//! replicated three times. Writes reach every replica up and are acknowledged at the level;
//! a replica that does not answer makes a write at ALL time out with the protocol's fields;
//! a replica known down makes it Unavailable before anything is applied; a replica that
//! refuses makes it fail. Conditional writes run Paxos rounds across the three: increments
//! from every node at once lose none, a proposal an earlier round left accepted is finished
//! first, and a round needs a quorum of replicas up.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use cairn_cluster::consistency::{Consistency, WriteType};
use cairn_cluster::messaging::{Delivery, LinkFilter, Messaging, MessagingConfig, Verb};
use cairn_cluster::node::{Endpoint, HostId};
use cairn_cluster::placement::ReplicationStrategy;
use cairn_cluster::proxy::paxos::ballot::Ballot;
use cairn_cluster::proxy::paxos::state::Proposal;
use cairn_cluster::proxy::{replica, CasDecision, RemoteReplicas, StorageProxy};
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
/// A keyspace with one replica per partition, and its table.
const KS1: &str = "ks1";
const TABLE_ID_RF1: u128 = 0x00c0_ffef;

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
        let mut schema = kv::kv_schema(KS1, "t");
        schema.id = TABLE_ID_RF1;
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
        read_timeout: Duration::from_secs(2),
        cas_contention_timeout: Duration::from_secs(1),
    });
    proxy.set_replication(
        KS,
        ReplicationStrategy::Simple {
            replication_factor: 3,
        },
    );
    proxy.set_replication(
        KS1,
        ReplicationStrategy::Simple {
            replication_factor: 1,
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
    // Counted once applied, so a moment after the data shows.
    let received = || -> u64 {
        nodes
            .iter()
            .map(|n| {
                n.proxy
                    .metrics()
                    .replica_received_mutations
                    .load(std::sync::atomic::Ordering::Relaxed)
            })
            .sum()
    };
    assert!(
        eventually(|| received() == 10),
        "five writes to two remote replicas each: {}",
        received()
    );
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

fn write_at(a: i32, value: &str, ts: i64) -> Mutation {
    Mutation {
        table: TABLE_ID,
        key: kv::pk(a),
        update: kv::insert(1, value, ts),
    }
}

fn delete_at(a: i32, ts: i64) -> Mutation {
    Mutation {
        table: TABLE_ID,
        key: kv::pk(a),
        update: cairn_engine::model::Partition {
            deletion: Some(cairn_engine::model::DeletionTime {
                marked_at: ts,
                local_deletion_time: kv::now(),
            }),
            ..Default::default()
        },
    }
}

/// Writes straight into one replica, as if the others had missed it.
fn only_on(node: &Node, m: Mutation) {
    node.db.apply(vec![m], Wait::Allowed).unwrap();
}

/// The value of row `b = 1` of partition `a` on `node` alone.
fn local_value(node: &Node, a: i32) -> Option<String> {
    let t = node.db.table(KS, "t").unwrap();
    let cmd = ReadCommand::all(kv::now(), Wait::Allowed);
    value_of(t.read(&kv::pk(a), &cmd).unwrap())
}

fn value_of(p: Option<cairn_engine::PartitionResult>) -> Option<String> {
    let p = p?;
    let (_, row) = p.rows.first()?;
    let cell = row.cell(2)?;
    Some(String::from_utf8(cell.value.to_vec()).unwrap())
}

/// A proxy read on a blocking thread, where waiting for replicas is allowed.
async fn read(node: &Node, a: i32, cl: Consistency) -> Result<Option<String>, Error> {
    let proxy = Arc::clone(&node.proxy);
    let table = node.db.table(KS, "t").unwrap();
    tokio::task::spawn_blocking(move || {
        let cmd = ReadCommand::all(kv::now(), Wait::Allowed);
        proxy.read(&table, &kv::pk(a), &cmd, cl).map(value_of)
    })
    .await
    .unwrap()
}

fn repairs(node: &Node) -> u64 {
    let m = node.proxy.metrics();
    m.foreground_read_repairs
        .load(std::sync::atomic::Ordering::Relaxed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_answers_the_newest_and_repairs_the_replicas_that_lacked_it() {
    let nodes = three(&[], None).await;
    only_on(&nodes[0], write_at(1, "new", 2_000));
    only_on(&nodes[1], write_at(1, "old", 1_000));
    // Replicas agreeing need no repair.
    mutate(&nodes[0], write_at(2, "same", 1_000), Consistency::All)
        .await
        .unwrap();
    assert_eq!(
        read(&nodes[1], 2, Consistency::All)
            .await
            .unwrap()
            .as_deref(),
        Some("same")
    );
    assert_eq!(repairs(&nodes[1]), 0);

    assert_eq!(
        read(&nodes[0], 1, Consistency::All)
            .await
            .unwrap()
            .as_deref(),
        Some("new")
    );
    assert_eq!(repairs(&nodes[0]), 1);
    // Blocking read repair: the replicas hold it once the read has answered.
    for n in &nodes {
        assert_eq!(local_value(n, 1).as_deref(), Some("new"));
    }
    assert_eq!(
        read(&nodes[2], 1, Consistency::All)
            .await
            .unwrap()
            .as_deref(),
        Some("new")
    );
    assert_eq!(repairs(&nodes[2]), 0, "nothing left to repair");

    // A tombstone on one replica wins over older data on the others, and is repaired too.
    mutate(&nodes[0], write_at(3, "doomed", 1_000), Consistency::All)
        .await
        .unwrap();
    only_on(&nodes[2], delete_at(3, 5_000));
    assert_eq!(read(&nodes[1], 3, Consistency::All).await.unwrap(), None);
    for n in &nodes {
        assert_eq!(local_value(n, 3), None);
    }
    // At ONE the local replica answers alone: its own (stale) view.
    only_on(&nodes[1], write_at(4, "mine", 1_000));
    assert_eq!(
        read(&nodes[1], 4, Consistency::One)
            .await
            .unwrap()
            .as_deref(),
        Some("mine")
    );
    assert_eq!(read(&nodes[0], 4, Consistency::One).await.unwrap(), None);
}

/// Drops node 1's reads sent to node 3.
struct SilentReads;

impl LinkFilter for SilentReads {
    fn delivery(&self, _from: IpAddr, to: IpAddr, verb: Verb) -> Delivery {
        if to == ip(3) && matches!(verb, Verb::ReadData | Verb::ReadDigest) {
            Delivery::Drop
        } else {
            Delivery::Deliver
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_that_does_not_answer_times_out_a_read_and_one_that_fails_fails_it() {
    let nodes = three(&[], None).await;
    mutate(&nodes[0], write_at(1, "x", 1_000), Consistency::All)
        .await
        .unwrap();
    nodes[0].messaging.set_filter(Some(Arc::new(SilentReads)));
    match read(&nodes[0], 1, Consistency::All).await {
        Err(Error::ReadTimeout(t)) => {
            assert_eq!((t.received, t.block_for, t.data_present), (2, 3, true));
        }
        other => panic!("expected a read timeout, got {other:?}"),
    }
    let nodes = three(&[], Some(3)).await;
    match read(&nodes[0], 1, Consistency::All).await {
        Err(Error::ReadFailure(f)) => {
            assert_eq!(f.failures.len(), 1);
            assert_eq!(f.failures[0].0, ip(3));
        }
        other => panic!("expected a read failure, got {other:?}"),
    }
}

/// Flips a byte of the first data chunk of every sstable of `ks`.t on `node`.
fn corrupt_sstables(node: &Node) {
    let ks_dir = node.db.config().data_dir.join(KS);
    for table_dir in std::fs::read_dir(ks_dir).unwrap() {
        for file in std::fs::read_dir(table_dir.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            if path.to_string_lossy().ends_with("-Data.db") {
                let mut bytes = std::fs::read(&path).unwrap();
                bytes[20] ^= 0x5A;
                std::fs::write(&path, bytes).unwrap();
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_that_fails_a_read_is_replaced_by_one_that_was_not_asked() {
    // The third node has no table: it fails every read (and refused the write).
    let nodes = three(&[], Some(3)).await;
    mutate(&nodes[0], write_at(1, "x", 1_000), Consistency::Quorum)
        .await
        .unwrap();
    for cl in [Consistency::One, Consistency::Quorum] {
        assert_eq!(read(&nodes[1], 1, cl).await.unwrap().as_deref(), Some("x"));
    }
    // This node's own copy cannot be read (a storage fault): another replica answers — the
    // one left that can, after the third fails too.
    nodes[0].db.flush(KS, "t").unwrap();
    corrupt_sstables(&nodes[0]);
    assert_eq!(
        read(&nodes[0], 1, Consistency::One)
            .await
            .unwrap()
            .as_deref(),
        Some("x")
    );
    // One good copy is not a quorum: the read fails, as it must.
    for cl in [Consistency::Quorum, Consistency::All] {
        match read(&nodes[0], 1, cl).await {
            Err(Error::ReadFailure(_)) | Err(Error::Engine(_)) => {}
            other => panic!("expected a read failure at {cl:?}, got {other:?}"),
        }
    }
}

/// Every partition key a proxy scan of `ks`.t at `cl` from `node` answers, in scan order.
async fn scan(node: &Node, ks: &'static str, cl: Consistency) -> Result<Vec<i32>, Error> {
    let proxy = Arc::clone(&node.proxy);
    tokio::task::spawn_blocking(move || {
        let cmd = ReadCommand::all(kv::now(), Wait::Allowed);
        let start = cairn_engine::model::PartitionPos::TokenStart(Token::MIN);
        let mut keys = Vec::new();
        for p in proxy.scan(ks, "t", start, None, cmd, cl)? {
            let p = p?;
            keys.push(i32::from_be_bytes(p.key.key.as_ref().try_into().unwrap()));
        }
        Ok(keys)
    })
    .await
    .unwrap()
}

/// The keys in token order.
fn in_token_order(mut keys: Vec<i32>) -> Vec<i32> {
    keys.sort_by_key(|&a| kv::pk(a));
    keys
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scan_reads_the_ring_in_token_order_reconciles_and_repairs() {
    let nodes = three(&[], None).await;
    // More than a page of partitions on every replica.
    for a in 0..300 {
        mutate(&nodes[0], write_at(a, "v", 1_000), Consistency::All)
            .await
            .unwrap();
    }
    // A partition only one replica has, and one whose replicas disagree.
    only_on(&nodes[2], write_at(1_000, "lonely", 1_000));
    only_on(&nodes[1], write_at(5, "newer", 2_000));
    let all: Vec<i32> = (0..300).chain([1_000]).collect();
    let keys = scan(&nodes[0], KS, Consistency::All).await.unwrap();
    assert_eq!(keys, in_token_order(all.clone()));
    // Repaired while scanning: every replica now has both.
    for n in &nodes {
        assert_eq!(local_value(n, 1_000).as_deref(), Some("lonely"));
        assert_eq!(local_value(n, 5).as_deref(), Some("newer"));
    }
    // At ONE a node scans itself: every piece's replicas include it.
    assert_eq!(
        scan(&nodes[1], KS, Consistency::One).await.unwrap(),
        in_token_order(all)
    );

    // One replica per partition: the pieces other nodes own are read from them.
    for a in 0..50 {
        let m = Mutation {
            table: TABLE_ID_RF1,
            key: kv::pk(a),
            update: kv::insert(1, "x", 1_000),
        };
        mutate(&nodes[0], m, Consistency::One).await.unwrap();
    }
    let held: usize = nodes
        .iter()
        .map(|n| {
            let t = n.db.table(KS1, "t").unwrap();
            let cmd = ReadCommand::all(kv::now(), Wait::Allowed);
            (0..50)
                .filter(|&a| t.read(&kv::pk(a), &cmd).unwrap().is_some())
                .count()
        })
        .sum();
    assert_eq!(held, 50, "each partition on its one replica");
    for n in &nodes {
        let keys = scan(n, KS1, Consistency::One).await.unwrap();
        assert_eq!(keys, in_token_order((0..50).collect()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scan_needing_a_replica_known_down_is_unavailable() {
    let nodes = three(&[3], None).await;
    match scan(&nodes[0], KS, Consistency::All).await {
        Err(Error::Unavailable(u)) => assert_eq!((u.required, u.alive), (3, 2)),
        other => panic!("expected unavailable, got {other:?}"),
    }
    assert_eq!(
        scan(&nodes[0], KS, Consistency::Quorum).await.unwrap(),
        Vec::<i32>::new()
    );
}

/// A conditional write on `node`: the row `b = 1` of partition `a` becomes `next(current)`
/// unless that is `None`; returns whether it was applied and the value it saw.
async fn cas(
    node: &Node,
    a: i32,
    serial: Consistency,
    next: impl Fn(Option<&str>) -> Option<String> + Send + 'static,
) -> Result<(bool, Option<String>), Error> {
    let (proxy, table) = (Arc::clone(&node.proxy), node.db.table(KS, "t").unwrap());
    tokio::task::spawn_blocking(move || {
        let levels = (serial, Consistency::Quorum);
        proxy.cas(&table, &kv::pk(a), levels, Wait::Allowed, None, |round| {
            let cmd = ReadCommand::all(kv::now(), Wait::Allowed);
            let seen = value_of(round.read(&table, &kv::pk(a), &cmd)?);
            Ok::<_, Error>(match next(seen.as_deref()) {
                Some(v) => {
                    let m = write_at(a, &v, round.timestamp());
                    CasDecision::Apply(vec![m], (true, seen))
                }
                None => CasDecision::Refuse((false, seen)),
            })
        })
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conditional_increments_from_every_node_at_once_lose_none() {
    let nodes = Arc::new(three(&[], None).await);
    let (applied, _) = cas(&nodes[0], 1, Consistency::Serial, |seen| match seen {
        None => Some("0".into()),
        Some(_) => None,
    })
    .await
    .unwrap();
    assert!(applied);
    let mut tasks = Vec::new();
    for n in 0..3 {
        let nodes = Arc::clone(&nodes);
        tasks.push(tokio::spawn(async move {
            let (mut applied, mut unknown) = (0u32, 0u32);
            while applied + unknown < 10 {
                // Each round reads and increments; a round that lost re-reads.
                let bump = |seen: Option<&str>| {
                    let v: u32 = seen.and_then(|s| s.parse().ok()).unwrap_or(0);
                    Some((v + 1).to_string())
                };
                match cas(&nodes[n], 1, Consistency::Serial, bump).await {
                    Ok((true, _)) => applied += 1,
                    Ok((false, _)) => {}
                    // Accepted by some replicas only: applied or not, a later round decides.
                    Err(Error::WriteTimeout(t)) if t.write_type == WriteType::Cas => unknown += 1,
                    Err(e) => panic!("{e:?}"),
                }
            }
            (applied, unknown)
        }));
    }
    let (mut applied, mut unknown) = (0, 0);
    for t in tasks {
        let (a, u) = t.await.unwrap();
        applied += a;
        unknown += u;
    }
    let final_value = |v: Option<String>| v.and_then(|s| s.parse::<u32>().ok()).unwrap();
    let seen = final_value(read(&nodes[0], 1, Consistency::Serial).await.unwrap());
    // None lost (a lost update would leave fewer), none applied twice.
    assert!(
        (applied..=applied + unknown).contains(&seen),
        "{applied} applied, {unknown} unknown, value {seen}"
    );
    for n in nodes.iter() {
        let v = read(n, 1, Consistency::Serial).await.unwrap();
        assert_eq!(final_value(v), seen, "every coordinator reads the same");
    }
    // The commit reached every replica.
    for n in nodes.iter() {
        assert!(eventually(|| local_value(n, 1) == Some(seen.to_string())));
    }
}

/// A ballot ten seconds ahead of every ballot a coordinator makes now.
fn future_ballot() -> Ballot {
    Ballot {
        micros: i64::from(kv::now()) * 1_000_000 + 10_000_000,
        node: 42,
    }
}

/// On node 1's first PROPOSE to node 2, makes node 2 promise a higher ballot before the
/// message leaves (so node 2 refuses it); delays node 1's first PROPOSE to node 3, which
/// accepts it late. Each happens once, whatever order the two sends run in.
struct OutbidSecondThenLateAccept {
    second: Arc<StorageProxy>,
    outbid: std::sync::atomic::AtomicBool,
    delayed: std::sync::atomic::AtomicBool,
}

impl LinkFilter for OutbidSecondThenLateAccept {
    fn delivery(&self, _from: IpAddr, to: IpAddr, verb: Verb) -> Delivery {
        use std::sync::atomic::Ordering;
        if verb != Verb::PaxosPropose {
            return Delivery::Deliver;
        }
        if to == ip(3) && !self.delayed.swap(true, Ordering::AcqRel) {
            return Delivery::Delay(Duration::from_millis(100));
        }
        if to == ip(2) && !self.outbid.swap(true, Ordering::AcqRel) {
            self.second
                .paxos_state()
                .prepare(TABLE_ID, &kv::pk(5), future_ballot(), Wait::Allowed)
                .unwrap();
        }
        Delivery::Deliver
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposal_refused_by_a_quorum_but_accepted_late_by_one_is_an_unknown_outcome() {
    let nodes = three(&[], None).await;
    let (applied, _) = cas(&nodes[0], 5, Consistency::Serial, |seen| match seen {
        None => Some("0".into()),
        Some(_) => None,
    })
    .await
    .unwrap();
    assert!(applied);
    // Node 1 (the coordinator's own replica) has promised a later ballot: it refuses the
    // prepare (nodes 2 and 3 are the quorum) and the proposal. Node 2 is outbid between its
    // promise and the proposal; node 3 accepts, 100 ms late.
    nodes[0]
        .proxy
        .paxos_state()
        .prepare(TABLE_ID, &kv::pk(5), future_ballot(), Wait::Allowed)
        .unwrap();
    nodes[0]
        .messaging
        .set_filter(Some(Arc::new(OutbidSecondThenLateAccept {
            second: Arc::clone(&nodes[1].proxy),
            outbid: Default::default(),
            delayed: Default::default(),
        })));
    let bump = |seen: Option<&str>| {
        let v: u32 = seen.and_then(|s| s.parse().ok()).unwrap_or(0);
        Some((v + 1).to_string())
    };
    // Two replicas refused, one accepted: a later round may find the accepted proposal and
    // commit it, so the request may neither start over (it would report one write and may
    // make two) nor say it was not applied (Cassandra's ProposeCallback waits for every
    // answer to know). Before: the round gave up at the second refusal and started over.
    match cas(&nodes[0], 5, Consistency::Serial, bump).await {
        Err(Error::WriteTimeout(t)) => assert_eq!(t.write_type, WriteType::Cas),
        other => panic!("expected an unknown outcome, got {other:?}"),
    }
    let seen = read(&nodes[0], 5, Consistency::Serial).await.unwrap();
    assert!(
        matches!(seen.as_deref(), Some("0") | Some("1")),
        "applied at most once: {seen:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposal_left_accepted_by_a_quorum_is_committed_by_the_next_round() {
    let nodes = three(&[], None).await;
    // An earlier coordinator got a quorum (nodes 2 and 3) to accept, then vanished.
    let earlier = Ballot {
        micros: i64::try_from(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_micros(),
        )
        .unwrap()
            - 1_000_000,
        node: 99,
    };
    let chosen = Proposal::of(earlier, &[write_at(7, "chosen", earlier.micros)]);
    for n in &nodes[1..] {
        let state = n.proxy.paxos_state();
        state
            .prepare(TABLE_ID, &kv::pk(7), earlier, Wait::Allowed)
            .unwrap();
        assert!(state
            .propose(TABLE_ID, &kv::pk(7), &chosen, Wait::Allowed)
            .unwrap());
    }
    assert!(nodes.iter().all(|n| local_value(n, 7).is_none()));
    // INSERT … IF NOT EXISTS finds the chosen value: it was committed first.
    let (applied, seen) = cas(&nodes[0], 7, Consistency::Serial, |seen| match seen {
        None => Some("mine".into()),
        Some(_) => None,
    })
    .await
    .unwrap();
    assert!(!applied);
    assert_eq!(seen.as_deref(), Some("chosen"));
    for n in &nodes {
        assert!(eventually(|| local_value(n, 7).as_deref() == Some("chosen")));
    }
    // A higher ballot promised on a replica makes a lower proposal fail there.
    let state = nodes[1].proxy.paxos_state();
    assert!(!state
        .propose(TABLE_ID, &kv::pk(7), &chosen, Wait::Allowed)
        .unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_needs_a_quorum_of_replicas_up() {
    let nodes = three(&[2, 3], None).await;
    let any = |_: Option<&str>| Some("x".to_string());
    match cas(&nodes[0], 3, Consistency::Serial, any).await {
        Err(Error::Unavailable(u)) => {
            assert_eq!(
                (u.consistency, u.required, u.alive),
                (Consistency::Serial, 2, 1)
            )
        }
        other => panic!("expected unavailable, got {other:?}"),
    }
    assert!(matches!(
        read(&nodes[0], 3, Consistency::Serial).await,
        Err(Error::Unavailable(_))
    ));
    assert!(local_value(&nodes[0], 3).is_none(), "nothing applied");
    // One node down: a quorum is left.
    let nodes = three(&[3], None).await;
    let (applied, _) = cas(&nodes[0], 3, Consistency::Serial, any).await.unwrap();
    assert!(applied);
}
