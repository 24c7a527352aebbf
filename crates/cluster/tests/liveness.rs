//! Liveness by direct echo between nodes on 127.0.0.1-3: peers come UP, a partitioned or
//! stopped peer goes DOWN after the silence limit, a healed one comes back UP, and each
//! change is published once.

use cairn_cluster::liveness::{Liveness, LivenessConfig, Status, StatusChange};
use cairn_cluster::messaging::{Delivery, LinkFilter, Messaging, MessagingConfig, Verb};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;

fn ip(last: u8) -> IpAddr {
    IpAddr::from([127, 0, 0, last])
}

async fn node(last: u8, port: u16) -> Messaging {
    let mut config = MessagingConfig::new(ip(last), "c");
    config.port = port;
    config.connect_timeout = Duration::from_millis(200);
    Messaging::start(config).await.unwrap()
}

/// Waits (within a generous limit: the machine may be busy) until `peer` is `status`.
async fn until(liveness: &Liveness, peer: IpAddr, status: Status) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while liveness.status(peer) != Some(status) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{peer} never became {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The changes published so far for `peer`, in order.
fn changes_of(rx: &mut broadcast::Receiver<StatusChange>, peer: IpAddr) -> Vec<Status> {
    let mut out = Vec::new();
    while let Ok(c) = rx.try_recv() {
        if c.peer == peer {
            out.push(c.status);
        }
    }
    out
}

struct Cut(IpAddr);

impl LinkFilter for Cut {
    fn delivery(&self, _from: IpAddr, to: IpAddr, _verb: Verb) -> Delivery {
        if to == self.0 {
            Delivery::Drop
        } else {
            Delivery::Deliver
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn peers_go_up_down_and_up_again() {
    let a = Arc::new(node(1, 0).await);
    let port = a.local_addr().port();
    let b = node(2, port).await;
    let _c = node(3, port).await;
    let liveness = Liveness::new(
        Arc::clone(&a),
        LivenessConfig {
            interval: Duration::from_millis(100),
            down_after: Duration::from_millis(600),
        },
    );
    let mut rx = liveness.subscribe();
    liveness.watch(ip(2));
    liveness.watch(ip(3));
    until(&liveness, ip(2), Status::Up).await;
    until(&liveness, ip(3), Status::Up).await;

    // A partitioned peer goes DOWN; healed, it comes back UP; each change published once.
    a.set_filter(Some(Arc::new(Cut(ip(3)))));
    until(&liveness, ip(3), Status::Down).await;
    a.set_filter(None);
    until(&liveness, ip(3), Status::Up).await;
    // UP, then DOWN, then UP again: every change once (a busy machine may add a flap, never a
    // repeat of the same status).
    let seen = changes_of(&mut rx, ip(3));
    assert_eq!(seen.first(), Some(&Status::Up), "{seen:?}");
    assert_eq!(seen.last(), Some(&Status::Up), "{seen:?}");
    assert!(seen.contains(&Status::Down), "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0] != w[1]), "{seen:?}");

    // A stopped peer goes DOWN; a forgotten one is not reported.
    drop(b);
    until(&liveness, ip(2), Status::Down).await;
    liveness.forget(ip(2));
    assert_eq!(liveness.status(ip(2)), None);
}
