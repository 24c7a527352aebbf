//! The ScyllaDB Rust driver (`scylla` crate) against a live Cairn cluster: nodes started
//! in-process on 127.0.0.1, 127.0.0.2, … with the same native and storage ports (as ccm runs
//! Cassandra; drivers take every node's CQL port from the one they connected to) and the same
//! seeds, forming one ring through group 0.
//!
//! What the driver computes must be what Cairn does, because drivers route requests
//! themselves: the nodes and tokens the driver reads from `system.local` / `system.peers` are
//! Cairn's ring, and for every keyspace (SimpleStrategy and NetworkTopologyStrategy,
//! replication factors 1–3) the replicas the driver's `ReplicaLocator` gives a token are the
//! replicas Cairn's own placement gives it on the live ring — and, for keys, the ones the REST
//! API's `natural_endpoints` (`nodetool getendpoints`) names. Two ring shapes: three nodes of
//! `SimpleSnitch` with 16 vnodes each, and five nodes of `GossipingPropertyFileSnitch` in two
//! data centers with two racks each and 2 to 32 vnodes. Token-aware prepared statements reach a
//! replica, and QUORUM writes and reads work across the ring.
//!
//! Against random rings and the Python driver's placement, without nodes, see
//! `crates/cluster/tests/placement.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use cairn_cluster::placement::ReplicationStrategy;
use cairn_cluster::ring::TokenRing;
use cairn_engine::model::Token as CairnToken;
use cairn_server::config::Config;
use cairn_server::{start_node, Node};
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::cluster::ClusterState;
use scylla::routing::Token;
use scylla::statement::Consistency;
use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::time::{Duration, Instant};

/// Generous bound so a hang shows as a failure rather than a stuck CI job.
const TIMEOUT: Duration = Duration::from_secs(180);

/// Where one node is and how many vnodes it has.
struct Spec {
    dc: &'static str,
    rack: &'static str,
    num_tokens: u32,
}

/// Running nodes; node i listens on 127.0.0.(i+1).
struct Cluster {
    nodes: Vec<Node>,
    native_port: u16,
    _root: tempfile::TempDir,
}

fn host(i: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, i as u8 + 1))
}

/// `n` distinct ports free on every one of `hosts` (a port free on 127.0.0.1 may be taken on
/// 127.0.0.2: internode connections bind their source address).
fn free_ports_on(hosts: &[IpAddr], n: usize) -> Vec<u16> {
    let mut held = Vec::new();
    let mut ports = Vec::new();
    while ports.len() < n {
        let first = TcpListener::bind(SocketAddr::new(hosts[0], 0)).unwrap();
        let port = first.local_addr().unwrap().port();
        held.push(first);
        let others: Result<Vec<_>, _> = hosts[1..]
            .iter()
            .map(|h| TcpListener::bind(SocketAddr::new(*h, port)))
            .collect();
        if let Ok(others) = others {
            held.extend(others);
            ports.push(port);
        }
    }
    ports
}

impl Cluster {
    /// Starts one node per spec, all at once (discovery must form one group), each from a
    /// `cairn.yaml` of its own; with `racks`, the snitch is GossipingPropertyFileSnitch and
    /// each node's `cassandra-rackdc.properties` lies beside its yaml.
    async fn start(specs: &[Spec], racks: bool) -> Cluster {
        let root = tempfile::tempdir().unwrap();
        let hosts: Vec<IpAddr> = (0..specs.len()).map(host).collect();
        let ports = free_ports_on(&hosts, 2);
        let (native_port, storage_port) = (ports[0], ports[1]);
        let seeds = hosts[..3.min(hosts.len())]
            .iter()
            .map(IpAddr::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let mut configs = Vec::new();
        for (i, spec) in specs.iter().enumerate() {
            let dir = root.path().join(format!("n{}", i + 1));
            std::fs::create_dir_all(&dir).unwrap();
            let h = host(i);
            let mut yaml = format!(
                "cluster_name: scylla driver cluster\n\
                 listen_address: {h}\nrpc_address: {h}\napi_address: {h}\nprometheus_address: {h}\n\
                 native_transport_port: {native_port}\nstorage_port: {storage_port}\n\
                 num_tokens: {}\n\
                 seed_provider:\n  - class_name: org.apache.cassandra.locator.SimpleSeedProvider\n    \
                 parameters:\n      - seeds: \"{seeds}\"\n",
                spec.num_tokens
            );
            if racks {
                yaml.push_str("endpoint_snitch: GossipingPropertyFileSnitch\n");
                std::fs::write(
                    dir.join("cassandra-rackdc.properties"),
                    format!("dc={}\nrack={}\n", spec.dc, spec.rack),
                )
                .unwrap();
            }
            let path = dir.join("cairn.yaml");
            std::fs::write(&path, yaml).unwrap();
            let mut cfg = Config::load(&path).expect("the yaml loads").config;
            cfg.workdir = dir.join("data");
            // Each node's admin faces on its own address, any port.
            cfg.api_port = 0;
            cfg.prometheus_port = 0;
            configs.push(cfg);
        }
        let nodes = futures::future::try_join_all(configs.iter().map(start_node))
            .await
            .expect("every node starts and joins");
        Cluster {
            nodes,
            native_port,
            _root: root,
        }
    }

    /// A driver session given only the first node, once it sees every node with its tokens.
    async fn session(&self) -> Session {
        let s = SessionBuilder::new()
            .known_node_addr(SocketAddr::new(host(0), self.native_port))
            .connection_timeout(Duration::from_secs(10))
            .build()
            .await
            .expect("driver connects");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let state = s.get_cluster_state();
            let seen = state.get_nodes_info().len();
            if seen == self.nodes.len() && driver_ring(&state).len() == cairn_ring(self).len() {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "the driver sees {seen} of {} nodes",
                self.nodes.len()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
            s.refresh_metadata().await.expect("metadata refresh");
        }
    }

    async fn stop(self) {
        for n in self.nodes {
            n.shutdown().await;
        }
    }
}

/// The driver's ring: token → node address.
fn driver_ring(state: &ClusterState) -> BTreeMap<i64, IpAddr> {
    state
        .replica_locator()
        .ring()
        .iter()
        .map(|(t, n)| (t.value(), n.address.ip()))
        .collect()
}

/// Cairn's ring as node 0 holds it: token → node address.
fn cairn_ring(c: &Cluster) -> BTreeMap<i64, IpAddr> {
    let ring = live_ring(c);
    ring.tokens()
        .iter()
        .map(|(t, i)| (t.0, ring.endpoints()[*i].address))
        .collect()
}

fn live_ring(c: &Cluster) -> TokenRing {
    c.nodes[0].membership.topology().get().ring().clone()
}

/// Tokens to probe: every ring token, its neighbours, the ends of the range and a
/// deterministic spread (splitmix64) in between.
fn probes(ring: &BTreeMap<i64, IpAddr>) -> Vec<i64> {
    let mut out: Vec<i64> = vec![i64::MIN + 1, -1, 0, 1, i64::MAX];
    for &t in ring.keys() {
        out.extend([t.saturating_sub(1), t, t.saturating_add(1)]);
    }
    let mut x: u64 = 0x5eed;
    for _ in 0..1000 {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        out.push((z ^ (z >> 31)) as i64);
    }
    // The driver normalises i64::MIN to i64::MAX, as Murmur3Partitioner does.
    out.retain(|&t| t != i64::MIN);
    out
}

/// Creates keyspace `ks` with `replication` and a table `kv (k int PRIMARY KEY, v text)`.
async fn create(s: &Session, ks: &str, replication: &str) {
    ddl(
        s,
        format!("CREATE KEYSPACE {ks} WITH replication = {replication}"),
    )
    .await;
    ddl(
        s,
        format!("CREATE TABLE {ks}.kv (k int PRIMARY KEY, v text)"),
    )
    .await;
}

/// Runs a schema statement; while the node sees too few members of the schema group up
/// (on a loaded machine a node may miss echoes and be marked down for a moment), the
/// statement is refused with nothing changed and is tried again, for at most a minute.
async fn ddl(s: &Session, statement: String) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match s.query_unpaged(statement.clone(), ()).await {
            Ok(_) => return,
            Err(e)
                if e.to_string().contains("Cannot change the schema")
                    && Instant::now() < deadline =>
            {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!("{statement}: {e}"),
        }
    }
}

/// Cairn's placement of a keyspace on the live ring, as node 0 holds both.
struct CairnPlacement {
    ring: TokenRing,
    strategy: ReplicationStrategy,
}

impl CairnPlacement {
    fn of(c: &Cluster, ks: &str) -> CairnPlacement {
        let strategy = c.nodes[0]
            .executor
            .catalog()
            .keyspace(ks)
            .unwrap_or_else(|| panic!("keyspace {ks} in Cairn's catalog"))
            .placement();
        CairnPlacement {
            ring: live_ring(c),
            strategy,
        }
    }

    /// The addresses of `token`'s replicas, the primary first.
    fn replicas(&self, token: i64) -> Vec<IpAddr> {
        self.strategy
            .replicas(&self.ring, CairnToken(token), None)
            .into_iter()
            .map(|i| self.ring.endpoints()[i].address)
            .collect()
    }
}

/// For every probe token, the driver's replicas of `ks` (from the replication it read in
/// `system_schema.keyspaces`) are Cairn's on the live ring: in the same order for
/// SimpleStrategy (both walk the ring once), as sets for NetworkTopologyStrategy (the driver
/// lists them data center by data center, Cassandra in ring order). Returns how many tokens
/// were compared.
fn same_placement(c: &Cluster, state: &ClusterState, ks: &str, ordered: bool) -> usize {
    let placement = CairnPlacement::of(c, ks);
    let tokens = probes(&cairn_ring(c));
    for &t in &tokens {
        let driver: Vec<IpAddr> = state
            .get_token_endpoints(ks, "kv", Token::new(t))
            .iter()
            .map(|(n, _)| n.address.ip())
            .collect();
        let cairn = placement.replicas(t);
        if ordered {
            assert_eq!(driver, cairn, "{ks}: replicas of token {t}");
        } else {
            let (d, k): (BTreeSet<_>, BTreeSet<_>) =
                (driver.iter().collect(), cairn.iter().collect());
            assert_eq!(
                (d, driver.len()),
                (k, cairn.len()),
                "{ks}: replicas of token {t}"
            );
        }
    }
    tokens.len()
}

/// For keys 0..n of `ks.kv`, the driver's replicas are the ones `natural_endpoints` (what
/// `nodetool getendpoints` prints) names on a node chosen in turn.
fn same_endpoints_for_keys(c: &Cluster, state: &ClusterState, ks: &str, ordered: bool, n: i32) {
    for k in 0..n {
        let node = &c.nodes[k as usize % c.nodes.len()];
        let api = node.rest.local_addr();
        let client = cairn_nodetool::client::Client::new(api.ip().to_string(), api.port());
        let v = client
            .get(
                &format!("/storage_service/natural_endpoints/{ks}"),
                &[("cf", "kv"), ("key", &k.to_string())],
            )
            .expect("natural_endpoints");
        let mut cairn: Vec<String> = v
            .as_array()
            .expect("an array")
            .iter()
            .map(|e| e.as_str().expect("an address").to_string())
            .collect();
        let mut driver: Vec<String> = state
            .get_endpoints(ks, "kv", &(k,))
            .expect("the driver computes the key's token")
            .iter()
            .map(|(n, _)| n.address.ip().to_string())
            .collect();
        if !ordered {
            cairn.sort();
            driver.sort();
        }
        assert_eq!(driver, cairn, "{ks}: replicas of key {k}");
    }
}

/// Keyspaces `simple1` … `simple3`: SimpleStrategy with replication factors 1 to 3.
async fn create_simple(s: &Session) {
    for rf in 1..=3 {
        create(
            s,
            &format!("simple{rf}"),
            &format!("{{'class': 'SimpleStrategy', 'replication_factor': {rf}}}"),
        )
        .await;
    }
}

/// Both checks of `ks`: placement for every probe token, `natural_endpoints` for `keys` keys.
/// Returns how many tokens were compared.
fn check_keyspace(c: &Cluster, state: &ClusterState, ks: &str, ordered: bool, keys: i32) -> usize {
    let compared = same_placement(c, state, ks, ordered);
    same_endpoints_for_keys(c, state, ks, ordered, keys);
    compared
}

/// Writes keys 0..n of `ks.kv` through the token-aware driver at `write`, then reads each
/// back at `read`.
async fn round_trips(s: &Session, ks: &str, write: Consistency, read: Consistency, n: i32) {
    let mut insert = s
        .prepare(format!("INSERT INTO {ks}.kv (k, v) VALUES (?, ?)"))
        .await
        .unwrap();
    insert.set_consistency(write);
    let mut select = s
        .prepare(format!("SELECT v FROM {ks}.kv WHERE k = ?"))
        .await
        .unwrap();
    select.set_consistency(read);
    for k in 0..n {
        s.execute_unpaged(&insert, (k, format!("{ks}-{k}")))
            .await
            .unwrap_or_else(|e| panic!("{write:?} write of {k} in {ks}: {e}"));
    }
    for k in 0..n {
        let (v,): (String,) = s
            .execute_unpaged(&select, (k,))
            .await
            .unwrap_or_else(|e| panic!("{read:?} read of {k} in {ks}: {e}"))
            .into_rows_result()
            .unwrap()
            .single_row()
            .unwrap();
        assert_eq!(v, format!("{ks}-{k}"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_seen_placed_and_routed_as_the_driver_computes() {
    tokio::time::timeout(TIMEOUT, async {
        let specs: Vec<Spec> = (0..3)
            .map(|_| Spec {
                dc: "datacenter1",
                rack: "rack1",
                num_tokens: 16,
            })
            .collect();
        let c = Cluster::start(&specs, false).await;
        let s = c.session().await;

        // The driver's view of the cluster: three nodes, each with the host id, data center
        // and rack Cairn gives it, and the ring Cairn holds.
        let state = s.get_cluster_state();
        let mut seen: Vec<(IpAddr, uuid::Uuid, Option<String>, Option<String>)> = state
            .get_nodes_info()
            .iter()
            .map(|n| {
                (
                    n.address.ip(),
                    n.host_id,
                    n.datacenter.clone(),
                    n.rack.clone(),
                )
            })
            .collect();
        seen.sort();
        let mut want: Vec<_> = c
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                (
                    host(i),
                    uuid::Uuid::from_bytes(n.membership.host_id().0),
                    Some("datacenter1".to_string()),
                    Some("rack1".to_string()),
                )
            })
            .collect();
        want.sort();
        assert_eq!(seen, want);
        assert!(state
            .get_nodes_info()
            .iter()
            .all(|n| n.address.port() == c.native_port));
        let ring = driver_ring(&state);
        assert_eq!(ring.len(), 48);
        assert_eq!(ring, cairn_ring(&c));

        // Placement, for every replication this ring can hold.
        create_simple(&s).await;
        for rf in 1..=3 {
            create(
                &s,
                &format!("nts{rf}"),
                &format!("{{'class': 'NetworkTopologyStrategy', 'datacenter1': {rf}}}"),
            )
            .await;
        }
        s.refresh_metadata().await.unwrap();
        let state = s.get_cluster_state();
        let mut compared = 0;
        for rf in 1..=3 {
            compared += check_keyspace(&c, &state, &format!("simple{rf}"), true, 20);
            compared += check_keyspace(&c, &state, &format!("nts{rf}"), false, 20);
        }
        assert!(compared > 6 * 1000, "{compared} tokens compared");

        // Token-aware prepared statements: with one replica per key, the coordinator the
        // driver chose is that replica — Cairn's, for the token the driver computed — for
        // writes and reads.
        let cairn = CairnPlacement::of(&c, "simple1");
        let mut insert = s
            .prepare("INSERT INTO simple1.kv (k, v) VALUES (?, ?)")
            .await
            .unwrap();
        let select = s
            .prepare("SELECT v FROM simple1.kv WHERE k = ?")
            .await
            .unwrap();
        assert!(insert.is_token_aware() && select.is_token_aware());
        let mut coordinators = BTreeSet::new();
        for k in 0..60i32 {
            let replicas = state.get_endpoints("simple1", "kv", &(k,)).unwrap();
            assert_eq!(replicas.len(), 1);
            let replica = replicas[0].0.host_id;
            let token = state.compute_token("simple1", "kv", &(k,)).unwrap();
            assert_eq!(
                cairn.replicas(token.value()),
                [replicas[0].0.address.ip()],
                "replica of key {k}"
            );
            let r = s
                .execute_unpaged(&insert, (k, format!("v{k}")))
                .await
                .unwrap();
            assert_eq!(
                r.request_coordinator().node().host_id,
                replica,
                "write of {k}"
            );
            coordinators.insert(replica);
            let r = s.execute_unpaged(&select, (k,)).await.unwrap();
            assert_eq!(
                r.request_coordinator().node().host_id,
                replica,
                "read of {k}"
            );
            let (v,): (String,) = r.into_rows_result().unwrap().single_row().unwrap();
            assert_eq!(v, format!("v{k}"));
        }
        assert_eq!(coordinators.len(), 3, "60 keys reach every node");

        // Two replicas of three: the coordinator is always one of them.
        insert = s
            .prepare("INSERT INTO simple2.kv (k, v) VALUES (?, ?)")
            .await
            .unwrap();
        for k in 0..30i32 {
            let replicas: Vec<uuid::Uuid> = state
                .get_endpoints("simple2", "kv", &(k,))
                .unwrap()
                .iter()
                .map(|(n, _)| n.host_id)
                .collect();
            let r = s.execute_unpaged(&insert, (k, "x")).await.unwrap();
            let coordinator = r.request_coordinator().node().host_id;
            assert!(
                replicas.contains(&coordinator),
                "write of {k} to {coordinator}"
            );
        }

        // QUORUM writes and reads of an RF=3 keyspace, coordinated across the ring.
        round_trips(&s, "nts3", Consistency::Quorum, Consistency::Quorum, 30).await;

        c.stop().await;
    })
    .await
    .expect("test finished within the timeout");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racks_and_datacenters_placed_as_the_driver_computes() {
    tokio::time::timeout(TIMEOUT, async {
        // Two data centers, two racks in each, uneven vnode counts (as a cluster grown over
        // time has): rack-aware NetworkTopologyStrategy must skip nodes of used racks and
        // come back to them exactly as Cassandra (and the driver) does.
        let specs = [
            Spec {
                dc: "dc1",
                rack: "r1",
                num_tokens: 8,
            },
            Spec {
                dc: "dc1",
                rack: "r2",
                num_tokens: 16,
            },
            Spec {
                dc: "dc1",
                rack: "r1",
                num_tokens: 4,
            },
            Spec {
                dc: "dc2",
                rack: "r1",
                num_tokens: 32,
            },
            Spec {
                dc: "dc2",
                rack: "r2",
                num_tokens: 2,
            },
        ];
        let c = Cluster::start(&specs, true).await;
        let s = c.session().await;
        let state = s.get_cluster_state();
        let mut seen: Vec<(IpAddr, Option<String>, Option<String>)> = state
            .get_nodes_info()
            .iter()
            .map(|n| (n.address.ip(), n.datacenter.clone(), n.rack.clone()))
            .collect();
        seen.sort();
        let want: Vec<_> = specs
            .iter()
            .enumerate()
            .map(|(i, sp)| (host(i), Some(sp.dc.to_string()), Some(sp.rack.to_string())))
            .collect();
        assert_eq!(seen, want);
        assert_eq!(driver_ring(&state), cairn_ring(&c));
        assert_eq!(driver_ring(&state).len(), 8 + 16 + 4 + 32 + 2);

        let nts = [
            ("nts_a", "'dc1': 1"),
            ("nts_b", "'dc1': 2"),
            ("nts_c", "'dc1': 3"),
            ("nts_d", "'dc2': 2"),
            ("nts_e", "'dc1': 2, 'dc2': 1"),
            ("nts_f", "'dc1': 3, 'dc2': 2"),
            ("nts_g", "'dc1': 1, 'dc2': 2"),
        ];
        for (ks, dcs) in nts {
            create(
                &s,
                ks,
                &format!("{{'class': 'NetworkTopologyStrategy', {dcs}}}"),
            )
            .await;
        }
        create_simple(&s).await;
        s.refresh_metadata().await.unwrap();
        let state = s.get_cluster_state();
        for (ks, _) in nts {
            check_keyspace(&c, &state, ks, false, 10);
        }
        for rf in 1..=3 {
            check_keyspace(&c, &state, &format!("simple{rf}"), true, 10);
        }

        // QUORUM across both data centers, LOCAL_QUORUM in the coordinator's.
        round_trips(
            &s,
            "nts_f",
            Consistency::Quorum,
            Consistency::LocalQuorum,
            20,
        )
        .await;

        c.stop().await;
    })
    .await
    .expect("test finished within the timeout");
}
