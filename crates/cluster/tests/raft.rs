//! The Raft group (group 0) of three nodes on 127.0.0.1-3: commands proposed on any node are
//! applied on all in the same order; a minority down changes nothing; with a majority down a
//! proposal fails instead of diverging; restarted nodes catch up from their own log.

use cairn_cluster::messaging::{Messaging, MessagingConfig};
use cairn_cluster::raft::command::{Command, CommandResult, Op};
use cairn_cluster::raft::{Group0, RaftSettings};
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(20);

fn ip(n: u64) -> IpAddr {
    IpAddr::from([127, 0, 0, n as u8])
}

fn settings() -> RaftSettings {
    RaftSettings {
        heartbeat: Duration::from_millis(100),
        election: Duration::from_millis(1000),
        // Snapshots (and log purges) happen within the test.
        snapshot_after: 8,
    }
}

struct Member {
    messaging: Arc<Messaging>,
    group: Group0,
}

async fn member(n: u64, port: u16, root: &Path) -> Member {
    let mut config = MessagingConfig::new(ip(n), "c");
    config.port = port;
    config.connect_timeout = Duration::from_millis(200);
    let messaging = Arc::new(Messaging::start(config).await.unwrap());
    let group = Group0::start(
        n,
        &root.join(format!("n{n}")),
        Arc::clone(&messaging),
        settings(),
    )
    .await
    .unwrap();
    Member { messaging, group }
}

async fn stop(m: Member) {
    m.group.shutdown().await;
    m.messaging.shutdown();
}

fn put(key: &str, value: &str) -> Command {
    Command {
        expect_version: None,
        ops: vec![Op::Put {
            key: key.into(),
            value: value.into(),
        }],
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_apply_everywhere_and_never_diverge() {
    let root = tempfile::tempdir().unwrap();
    let first = member(1, 0, root.path()).await;
    let port = first.messaging.local_addr().port();
    let mut nodes = vec![
        first,
        member(2, port, root.path()).await,
        member(3, port, root.path()).await,
    ];
    let all: Vec<(u64, IpAddr)> = (1..=3).map(|n| (n, ip(n))).collect();
    nodes[0].group.initialize(&all).await.unwrap();

    // Proposed on any node (forwarded to the leader), applied on all.
    for (i, n) in nodes.iter().enumerate() {
        let r = n
            .group
            .propose(put(&format!("schema/t{i}"), "def"), WAIT)
            .await
            .unwrap();
        assert_eq!(
            r,
            CommandResult::Applied {
                version: i as u64 + 1
            }
        );
    }
    for n in &nodes {
        n.group.wait_for_version(3, WAIT).await.unwrap();
    }
    let state = nodes[0].group.state();
    assert!(nodes.iter().all(|n| n.group.state() == state));
    // A command prepared against an old version is refused, everywhere alike.
    let stale = Command {
        expect_version: Some(1),
        ops: vec![Op::Delete {
            key: "schema/t0".into(),
        }],
    };
    let r = nodes[1].group.propose(stale, WAIT).await.unwrap();
    assert_eq!(r, CommandResult::Conflict { version: 3 });

    // A minority down: commands go on — more than a snapshot's worth, so the leader purges
    // the log the stopped node misses and must send it a snapshot when it is back.
    let third = nodes.pop().unwrap();
    stop(third).await;
    for i in 0..20 {
        nodes[i % 2]
            .group
            .propose(put(&format!("fill/{i}"), "v"), WAIT)
            .await
            .unwrap();
    }
    let r = nodes[1]
        .group
        .propose(put("node/x", "1"), WAIT)
        .await
        .unwrap();
    assert_eq!(r, CommandResult::Applied { version: 24 });

    // A majority down: a proposal fails (its outcome is then unknown, as a timed-out write's
    // is: the leader may have logged it, and it commits if that log wins later — on every
    // node alike).
    let second = nodes.pop().unwrap();
    stop(second).await;
    let r = nodes[0]
        .group
        .propose(put("node/y", "1"), Duration::from_secs(2))
        .await;
    assert!(r.is_err(), "{r:?}");

    // The stopped nodes come back from their own logs and catch up; all agree again.
    nodes.push(member(2, port, root.path()).await);
    nodes.push(member(3, port, root.path()).await);
    let r = nodes[2]
        .group
        .propose(put("node/z", "1"), WAIT)
        .await
        .unwrap();
    let CommandResult::Applied { version } = r else {
        panic!("{r:?}");
    };
    for n in &nodes {
        n.group.wait_for_version(version, WAIT).await.unwrap();
    }
    let state = nodes[0].group.state();
    assert!(nodes.iter().all(|n| n.group.state() == state));
    assert!(state.entries.contains_key("schema/t2") && state.entries.contains_key("node/z"));
    assert!(state.entries.contains_key("fill/19"), "{state:?}");
    // Snapshots were taken and kept on disk.
    assert!(root.path().join("n1").join("snapshot").exists());
    for n in nodes {
        stop(n).await;
    }
}
