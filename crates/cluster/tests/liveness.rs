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

/// The next change, within a generous limit (the machine may be busy).
async fn next(rx: &mut broadcast::Receiver<StatusChange>) -> StatusChange {
    tokio::time::timeout(Duration::from_secs(20), rx.recv())
        .await
        .expect("a status change")
        .unwrap()
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
            interval: Duration::from_millis(50),
            down_after: Duration::from_millis(300),
        },
    );
    let mut rx = liveness.subscribe();
    liveness.watch(ip(2));
    liveness.watch(ip(3));
    let mut ups = vec![next(&mut rx).await, next(&mut rx).await];
    ups.sort_by_key(|c| c.peer);
    assert_eq!(
        ups,
        [
            StatusChange {
                peer: ip(2),
                status: Status::Up
            },
            StatusChange {
                peer: ip(3),
                status: Status::Up
            }
        ]
    );

    // A partitioned peer goes DOWN; healed, it comes back UP.
    a.set_filter(Some(Arc::new(Cut(ip(3)))));
    assert_eq!(
        next(&mut rx).await,
        StatusChange {
            peer: ip(3),
            status: Status::Down
        }
    );
    assert_eq!(liveness.status(ip(3)), Some(Status::Down));
    assert_eq!(liveness.status(ip(2)), Some(Status::Up));
    a.set_filter(None);
    assert_eq!(
        next(&mut rx).await,
        StatusChange {
            peer: ip(3),
            status: Status::Up
        }
    );

    // A stopped peer goes DOWN; a forgotten one is not reported.
    drop(b);
    assert_eq!(
        next(&mut rx).await,
        StatusChange {
            peer: ip(2),
            status: Status::Down
        }
    );
    liveness.forget(ip(2));
    assert_eq!(liveness.status(ip(2)), None);
}
