//! Membership of three nodes on 127.0.0.1-3 (one process): started at once with the same
//! seeds they form exactly one group and one ring; a restarted node rejoins from its log with
//! its identity; a node that is not a seed joins through them; a ring holding data refuses
//! a joiner. Every wait is for a state, never a sleep.

use cairn_cluster::identity::TokenConfig;
use cairn_cluster::liveness::LivenessConfig;
use cairn_cluster::membership::{EventKind, LocalNode, Membership, MembershipConfig, NodeStatus};
use cairn_cluster::raft::RaftSettings;
use cairn_cluster::snitch::Location;
use cairn_cluster::topology::MemberState;
use std::net::IpAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(30);

fn ip(n: u8) -> IpAddr {
    IpAddr::from([127, 0, 0, n])
}

/// A node whose user data the test switches on.
#[derive(Default)]
struct Probe {
    data: AtomicBool,
}

impl LocalNode for Probe {
    fn status(&self) -> NodeStatus {
        NodeStatus::default()
    }

    fn user_data(&self) -> Option<String> {
        self.data
            .load(Ordering::Relaxed)
            .then(|| "ks.t".to_string())
    }

    fn schema_applied(&self) -> u64 {
        0
    }
}

fn config(n: u8, port: u16, seeds: &[u8], root: &Path) -> MembershipConfig {
    MembershipConfig {
        data_dir: root.join(format!("n{n}")),
        cluster_name: "test".into(),
        listen: ip(n),
        broadcast: ip(n),
        rpc_address: ip(n),
        native_port: 9042,
        storage_port: port,
        seeds: seeds.iter().map(|s| ip(*s)).collect(),
        reserved_ports: Vec::new(),
        tokens: TokenConfig {
            num_tokens: 4,
            initial_token: None,
        },
        location: Location {
            datacenter: "datacenter1".into(),
            rack: "rack1".into(),
        },
        liveness: LivenessConfig {
            interval: Duration::from_millis(200),
            down_after: Duration::from_secs(2),
        },
        raft: RaftSettings {
            heartbeat: Duration::from_millis(100),
            election: Duration::from_millis(1000),
            snapshot_after: 1000,
        },
        join_timeout: WAIT,
        status_interval: Duration::from_secs(1),
        tls: None,
    }
}

/// A port free on 127.0.0.1-5 (one address may have it where another has a socket bound to
/// it: internode connections bind their source address).
fn free_port() -> u16 {
    loop {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let others: Result<Vec<_>, _> = (2..=5)
            .map(|n| std::net::TcpListener::bind((ip(n), port)))
            .collect();
        if others.is_ok() {
            return port;
        }
    }
}

async fn wait_until(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !check() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn normal_with_tokens(m: &Membership, count: usize) -> bool {
    let t = m.topology().get();
    t.members().len() == count
        && t.members()
            .iter()
            .all(|x| x.state == MemberState::Normal && x.tokens.len() == 4)
        && t.ring().tokens().len() == 4 * count
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_started_at_once_form_one_ring_and_restart_from_their_log() {
    let root = tempfile::tempdir().unwrap();
    let port = free_port();
    let seeds = [1, 2, 3];
    let probe: Arc<Probe> = Arc::default();
    let starts = (1..=3).map(|n| {
        let c = config(n, port, &seeds, root.path());
        let p: Arc<dyn LocalNode> = probe.clone();
        tokio::spawn(Membership::start(c, p))
    });
    let mut nodes = Vec::new();
    for s in starts.collect::<Vec<_>>() {
        nodes.push(s.await.unwrap().unwrap());
    }
    // One group: every node sees the same three voters, and one ring of 12 tokens.
    for m in &nodes {
        wait_until("three Normal members", || normal_with_tokens(m, 3)).await;
    }
    let (members, voters) = nodes[0].group().members();
    assert_eq!(members.len(), 3);
    assert_eq!(voters.len(), 3);
    for m in &nodes[1..] {
        assert_eq!(m.group().members(), (members.clone(), voters.clone()));
    }
    for m in &nodes {
        wait_until("every peer up", || {
            m.topology().get().members().iter().all(|x| x.up)
        })
        .await;
    }

    // A restart rejoins from the log: same host id and tokens, same group.
    let mut events = nodes[0].subscribe();
    let third = nodes.pop().unwrap();
    let (id, tokens) = {
        let t = third.topology().get();
        let local = t.local().unwrap().clone();
        (local.endpoint.host_id, local.tokens)
    };
    third.shutdown().await;
    drop(third);
    wait_until("node 3 down", || {
        let t = nodes[0].topology().get();
        t.member(id).is_some_and(|m| !m.up)
    })
    .await;
    let p: Arc<dyn LocalNode> = probe.clone();
    let third = Membership::start(config(3, port, &seeds, root.path()), p)
        .await
        .unwrap();
    assert_eq!(third.host_id(), id);
    assert_eq!(third.topology().get().local().unwrap().tokens, tokens);
    nodes.push(third);
    wait_until("node 3 up again", || nodes[0].topology().get().is_up(id)).await;
    assert_eq!(nodes[2].group().members().1, voters, "no new group");
    // Drivers were told: DOWN then UP, for node 3's client address.
    let mut seen = Vec::new();
    while let Ok(e) = events.try_recv() {
        if e.rpc_address == ip(3) {
            seen.push(e.kind);
        }
    }
    assert_eq!(seen, [EventKind::Down, EventKind::Up]);

    // A node that is not a seed joins through them: NEW_NODE, then four members.
    let mut events = nodes[0].subscribe();
    let p: Arc<dyn LocalNode> = probe.clone();
    let fourth = Membership::start(config(4, port, &seeds, root.path()), p)
        .await
        .unwrap();
    for m in nodes.iter().chain([&fourth]) {
        wait_until("four Normal members", || normal_with_tokens(m, 4)).await;
    }
    let mut joined = false;
    while let Ok(e) = events.try_recv() {
        joined |= e.kind == EventKind::NewNode && e.rpc_address == ip(4);
    }
    assert!(joined, "NEW_NODE for 127.0.0.4");

    // With data in the ring, a fifth is refused and the ring stays as it was.
    probe.data.store(true, Ordering::Relaxed);
    let p: Arc<dyn LocalNode> = Arc::new(Probe::default());
    let e = Membership::start(config(5, port, &seeds, root.path()), p)
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("cannot join the ring") && e.contains("ks.t") && e.contains("streaming"),
        "{e}"
    );
    assert_eq!(nodes[0].topology().get().members().len(), 4);
    assert_eq!(nodes[0].group().members().0.len(), 4);

    fourth.shutdown().await;
    for m in nodes {
        m.shutdown().await;
    }
}
