//! Internode messaging between real sockets on loopback addresses: every node on its own
//! address (127.0.0.1, .2, .3) and the same port, as a cluster on one machine runs.

use bytes::Bytes;
use cairn_cluster::messaging::{Delivery, Handler, LinkFilter, Messaging, MessagingConfig, Verb};
use cairn_cluster::Error;
use std::io::{Read, Write};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

const SECOND: Duration = Duration::from_secs(1);

fn ip(last: u8) -> IpAddr {
    IpAddr::from([127, 0, 0, last])
}

async fn node(last: u8, port: u16, cluster: &str) -> Messaging {
    let mut config = MessagingConfig::new(ip(last), cluster);
    config.port = port;
    config.connect_timeout = 2 * SECOND;
    Messaging::start(config).await.unwrap()
}

/// A handler answering with the caller's address and the body it got.
fn who_called() -> Handler {
    Arc::new(|from, body| {
        Box::pin(async move {
            let mut out = from.to_string().into_bytes();
            out.push(b'|');
            out.extend_from_slice(&body);
            Ok(Bytes::from(out))
        })
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_on_their_own_addresses_talk_and_know_who_calls() {
    let a = node(1, 0, "c").await;
    let port = a.local_addr().port();
    let b = node(2, port, "c").await;
    a.register(Verb::Mutation, who_called());
    b.register(Verb::Mutation, who_called());

    let echo = a.request(ip(2), Verb::Echo, Bytes::new(), SECOND).await;
    assert_eq!(echo.unwrap(), Bytes::new());
    // Outgoing sockets leave from the sender's own address.
    let r = a
        .request(ip(2), Verb::Mutation, Bytes::from_static(b"x"), SECOND)
        .await
        .unwrap();
    assert_eq!(r, Bytes::from_static(b"127.0.0.1|x"));
    let r = b
        .request(ip(1), Verb::Mutation, Bytes::from_static(b"y"), SECOND)
        .await
        .unwrap();
    assert_eq!(r, Bytes::from_static(b"127.0.0.2|y"));

    // Many requests at once on one connection: each gets its own answer.
    let a = Arc::new(a);
    let tasks: Vec<_> = (0..500u32)
        .map(|i| {
            let a = Arc::clone(&a);
            tokio::spawn(async move {
                let body = Bytes::from(i.to_string());
                let r = a.request(ip(2), Verb::Mutation, body, 5 * SECOND).await;
                (i, r.unwrap())
            })
        })
        .collect();
    for t in tasks {
        let (i, r) = t.await.unwrap();
        assert_eq!(r, Bytes::from(format!("127.0.0.1|{i}")));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handler_errors_unknown_verbs_and_foreign_clusters_are_answers() {
    let a = node(1, 0, "c").await;
    let port = a.local_addr().port();
    let b = node(2, port, "c").await;
    b.register(
        Verb::ReadData,
        Arc::new(|_, _| Box::pin(async { Err("no such table".to_string()) })),
    );
    match a.request(ip(2), Verb::ReadData, Bytes::new(), SECOND).await {
        Err(Error::Remote { message, verb, .. }) => {
            assert_eq!((message.as_str(), verb), ("no such table", "READ_DATA"));
        }
        other => panic!("{other:?}"),
    }
    match a.request(ip(2), Verb::Raft, Bytes::new(), SECOND).await {
        Err(Error::Remote { message, .. }) => assert!(message.contains("no handler"), "{message}"),
        other => panic!("{other:?}"),
    }
    // A node of another cluster refuses the connection.
    let c = node(3, port, "other").await;
    match a.request(ip(3), Verb::Echo, Bytes::new(), SECOND).await {
        Err(Error::Unreachable { message, .. }) => {
            assert!(message.contains("ClusterName mismatch"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    drop(c);
}

struct Partition {
    cut: IpAddr,
    delay: Option<Duration>,
}

impl LinkFilter for Partition {
    fn delivery(&self, _from: IpAddr, to: IpAddr, _verb: Verb) -> Delivery {
        match (to == self.cut, self.delay) {
            (true, None) => Delivery::Drop,
            (true, Some(d)) => Delivery::Delay(d),
            (false, _) => Delivery::Deliver,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_links_time_out_delayed_ones_arrive_late() {
    let a = node(1, 0, "c").await;
    let port = a.local_addr().port();
    let _b = node(2, port, "c").await;
    let short = Duration::from_millis(200);
    a.set_filter(Some(Arc::new(Partition {
        cut: ip(2),
        delay: None,
    })));
    let r = a.request(ip(2), Verb::Echo, Bytes::new(), short).await;
    assert!(
        matches!(r, Err(Error::Timeout { verb: "ECHO", .. })),
        "{r:?}"
    );
    a.set_filter(Some(Arc::new(Partition {
        cut: ip(2),
        delay: Some(Duration::from_millis(100)),
    })));
    let t0 = Instant::now();
    a.request(ip(2), Verb::Echo, Bytes::new(), SECOND)
        .await
        .unwrap();
    assert!(t0.elapsed() >= Duration::from_millis(100));
    a.set_filter(None);
    a.request(ip(2), Verb::Echo, Bytes::new(), SECOND)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_peer_is_reconnected_and_a_dead_one_is_unreachable() {
    let a = node(1, 0, "c").await;
    let port = a.local_addr().port();
    let b = node(2, port, "c").await;
    a.request(ip(2), Verb::Echo, Bytes::new(), SECOND)
        .await
        .unwrap();
    drop(b);
    // The old connection breaks; with nobody listening the next request cannot connect. A
    // request sent on the old connection before its end is noticed may time out instead (the
    // peer is gone before it answers): that is a lost request, not the refusal looked for.
    let mut refused = false;
    for _ in 0..50 {
        match a.request(ip(2), Verb::Echo, Bytes::new(), SECOND).await {
            Err(Error::Unreachable { .. }) => {
                refused = true;
                break;
            }
            Ok(_) | Err(Error::Timeout { .. }) => {
                tokio::time::sleep(Duration::from_millis(20)).await
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert!(refused);
    let _b = node(2, port, "c").await;
    a.request(ip(2), Verb::Echo, Bytes::new(), SECOND)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_on_the_port_closes_that_connection_only() {
    let a = node(1, 0, "c").await;
    let port = a.local_addr().port();
    let b = node(2, port, "c").await;
    let addr = a.local_addr();
    let answer = tokio::task::spawn_blocking(move || {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(5 * SECOND)).unwrap();
        s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
        rest
    })
    .await
    .unwrap();
    assert!(answer.is_empty(), "{answer:?}");
    b.request(ip(1), Verb::Echo, Bytes::new(), SECOND)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_over_the_limit_is_refused_before_it_is_sent() {
    let mut config = MessagingConfig::new(ip(1), "c");
    config.port = 0;
    config.max_body = 1024;
    let a = Messaging::start(config).await.unwrap();
    let port = a.local_addr().port();
    let _b = node(2, port, "c").await;
    match a
        .request(ip(2), Verb::Echo, Bytes::from(vec![0; 2048]), SECOND)
        .await
    {
        Err(Error::Unreachable { message, .. }) => assert!(message.contains("limit"), "{message}"),
        other => panic!("{other:?}"),
    }
    a.request(ip(2), Verb::Echo, Bytes::from(vec![0; 512]), SECOND)
        .await
        .unwrap();
}

/// Internode TLS (`server_encryption_options`): certificates made by `openssl` in a temporary
/// directory — a CA signing the nodes' certificates (127.0.0.1 to .4, used both to serve and
/// to connect), and another CA signing a stranger's.
mod tls {
    use super::*;
    use cairn_cluster::snitch::Location;
    use cairn_cluster::tls::{InternodeEncryption, InternodeTls, PeerLocations, TlsFiles};
    use cairn_test_support::pki::TestPki;
    use std::sync::atomic::Ordering;

    pub(super) fn pki() -> TestPki {
        let pki = TestPki::new();
        pki.ca("ca");
        pki.ca("other-ca");
        let node = |n: u8| {
            format!(
                "subjectAltName=IP:127.0.0.{n}\nbasicConstraints=CA:FALSE\n\
                 extendedKeyUsage=serverAuth,clientAuth\n"
            )
        };
        for n in 1..=4 {
            pki.leaf(&format!("node{n}"), "ca", &node(n));
        }
        pki.leaf("stranger", "other-ca", &node(3));
        pki
    }

    /// How a test node's TLS is set.
    pub(super) struct Tls<'a> {
        pub(super) cert: &'a str,
        pub(super) encryption: InternodeEncryption,
        pub(super) accept_plaintext: bool,
        pub(super) require_client_auth: bool,
        pub(super) verify_name: bool,
    }

    pub(super) fn all(cert: &str) -> Tls<'_> {
        Tls {
            cert,
            encryption: InternodeEncryption::All,
            accept_plaintext: false,
            require_client_auth: true,
            verify_name: false,
        }
    }

    pub(super) async fn tls_node(last: u8, port: u16, pki: &TestPki, tls: Tls<'_>) -> Messaging {
        let files = TlsFiles {
            section: "server_encryption_options",
            certificate: ("certificate", pki.path(&format!("{}.crt", tls.cert))),
            private_key: ("private_key", pki.path(&format!("{}.key", tls.cert))),
            truststore: Some(pki.path("ca.crt")),
            versions: vec![&rustls::version::TLS13, &rustls::version::TLS12],
            cipher_suites: Vec::new(),
        };
        let local = Location {
            datacenter: "dc1".into(),
            rack: "rack1".into(),
        };
        let internode = InternodeTls::new(
            &files,
            tls.encryption,
            tls.accept_plaintext,
            tls.require_client_auth,
            tls.verify_name,
            local,
        )
        .unwrap();
        let mut config = MessagingConfig::new(ip(last), "c");
        config.port = port;
        config.tls = Some(internode);
        Messaging::start(config).await.unwrap()
    }

    /// Peers' places, as the topology would tell them.
    pub(super) struct Places(pub(super) Vec<(IpAddr, &'static str)>);

    impl PeerLocations for Places {
        fn location(&self, peer: IpAddr) -> Option<Location> {
            let (_, dc) = self.0.iter().find(|(ip, _)| *ip == peer)?;
            Some(Location {
                datacenter: dc.to_string(),
                rack: "rack1".into(),
            })
        }
    }

    fn failures(m: &Messaging) -> u64 {
        m.metrics().tls_handshake_failures.load(Ordering::Relaxed)
    }

    fn unreachable(r: cairn_cluster::Result<Bytes>) -> String {
        match r {
            Err(Error::Unreachable { message, .. }) => message,
            other => panic!("expected Unreachable, got {other:?}"),
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn nodes_talk_over_tls_and_refuse_plaintext_and_strangers() {
        let pki = pki();
        let a = tls_node(1, 0, &pki, all("node1")).await;
        let port = a.local_addr().port();
        let b = tls_node(2, port, &pki, all("node2")).await;
        a.register(Verb::Mutation, who_called());
        b.register(Verb::Mutation, who_called());
        // Both ways, each checking the other's certificate.
        let r = a
            .request(ip(2), Verb::Mutation, Bytes::from_static(b"x"), 5 * SECOND)
            .await
            .unwrap();
        assert_eq!(r, Bytes::from_static(b"127.0.0.1|x"));
        let r = b
            .request(ip(1), Verb::Mutation, Bytes::from_static(b"y"), 5 * SECOND)
            .await
            .unwrap();
        assert_eq!(r, Bytes::from_static(b"127.0.0.2|y"));
        // Each side counts its outgoing and its incoming handshake.
        assert_eq!(a.metrics().tls_connections.load(Ordering::Relaxed), 2);
        assert_eq!(failures(&a), 0);

        // A node in plaintext is told why, and counted.
        let plain = node(3, port, "c").await;
        let message = unreachable(plain.request(ip(1), Verb::Echo, Bytes::new(), SECOND).await);
        assert!(message.contains("requires TLS from 127.0.0.3"), "{message}");
        assert_eq!(failures(&a), 1);
        // The TLS node cannot reach it either: its ClientHello is not a frame.
        unreachable(a.request(ip(3), Verb::Echo, Bytes::new(), SECOND).await);
        drop(plain);

        // A certificate from another CA fails the handshake with require_client_auth (on an
        // address of its own: the plaintext node's listener may not be gone yet).
        let stranger = tls_node(5, port, &pki, all("stranger")).await;
        let before = failures(&a);
        let message = unreachable(
            stranger
                .request(ip(1), Verb::Echo, Bytes::new(), SECOND)
                .await,
        );
        assert!(message.contains("TLS"), "{message}");
        // The node counts it once its handshake has sent the alert the stranger read.
        let t0 = Instant::now();
        while failures(&a) == before && t0.elapsed() < 10 * SECOND {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(failures(&a), before + 1);
        // Nor does it trust the nodes (its truststore is the right CA, but the nodes refuse
        // its certificate): the connection is never half-open.
        unreachable(a.request(ip(5), Verb::Echo, Bytes::new(), SECOND).await);
        // The nodes still talk.
        a.request(ip(2), Verb::Echo, Bytes::new(), SECOND)
            .await
            .unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn optional_accepts_plaintext_and_endpoint_verification_checks_the_address() {
        let pki = pki();
        // `optional: true`: TLS and plaintext on the same port.
        let a = tls_node(
            1,
            0,
            &pki,
            Tls {
                accept_plaintext: true,
                ..all("node1")
            },
        )
        .await;
        let port = a.local_addr().port();
        let plain = node(2, port, "c").await;
        plain
            .request(ip(1), Verb::Echo, Bytes::new(), SECOND)
            .await
            .unwrap();
        let tls = tls_node(3, port, &pki, all("node3")).await;
        tls.request(ip(1), Verb::Echo, Bytes::new(), SECOND)
            .await
            .unwrap();
        assert_eq!(failures(&a), 0);

        // Node .4 serving with .3's certificate: accepted on the chain alone (Cassandra's
        // default), refused when the certificate must name the address connected to.
        let _imposter = tls_node(4, port, &pki, all("node3")).await;
        tls.request(ip(4), Verb::Echo, Bytes::new(), SECOND)
            .await
            .unwrap();
        let strict = tls_node(
            5,
            port,
            &pki,
            Tls {
                verify_name: true,
                ..all("node2")
            },
        )
        .await;
        strict
            .request(ip(1), Verb::Echo, Bytes::new(), SECOND)
            .await
            .unwrap();
        let message = unreachable(
            strict
                .request(ip(4), Verb::Echo, Bytes::new(), SECOND)
                .await,
        );
        assert!(message.contains("TLS"), "{message}");
        assert_eq!(failures(&strict), 1);
    }
}

/// The cost of internode TLS, for docs/benchmarks.md (not a test: `cargo test --release -p
/// cairn-cluster --test messaging -- --ignored --nocapture tls_round_trip_figures`). Two
/// endpoints on 127.0.0.1 and .2 in this process, plaintext and TLS (`all`, mutual) side by
/// side in alternating pairs: one request at a time (µs per round trip, wall), then 32 at a
/// time (requests per second, and CPU µs per request of both endpoints together, from every
/// thread's schedstat).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark: run with --ignored --nocapture"]
async fn tls_round_trip_figures() {
    use std::sync::atomic::Ordering;
    let pairs: usize = std::env::var("PAIRS")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(4);
    let sequential = 20_000u32;
    let (tasks, per_task) = (32u32, 5_000u32);
    let body = Bytes::from(vec![7u8; 1024]);
    let pki = tls::pki();
    let echo: Handler = Arc::new(|_, body| Box::pin(async move { Ok(body) }));

    /// CPU time of every thread of this process so far.
    fn cpu() -> Duration {
        let mut ns = 0u64;
        for t in std::fs::read_dir("/proc/self/task").unwrap() {
            let path = t.unwrap().path().join("schedstat");
            if let Ok(text) = std::fs::read_to_string(path) {
                ns += text
                    .split_whitespace()
                    .next()
                    .and_then(|f| f.parse::<u64>().ok())
                    .unwrap_or(0);
            }
        }
        Duration::from_nanos(ns)
    }

    println!("| pair | mode | round trip µs (1 at a time) | requests/s (32 at a time) | CPU µs/request |");
    println!("|---:|---|---:|---:|---:|");
    for pair in 0..pairs {
        let order = if pair % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        for use_tls in order {
            let (a, b) = if use_tls {
                let a = tls::tls_node(1, 0, &pki, tls::all("node1")).await;
                let port = a.local_addr().port();
                (a, tls::tls_node(2, port, &pki, tls::all("node2")).await)
            } else {
                let a = node(1, 0, "c").await;
                let port = a.local_addr().port();
                (a, node(2, port, "c").await)
            };
            b.register(Verb::Mutation, Arc::clone(&echo));
            let a = Arc::new(a);
            for _ in 0..2_000 {
                a.request(ip(2), Verb::Mutation, body.clone(), 5 * SECOND)
                    .await
                    .unwrap();
            }
            let t0 = Instant::now();
            for _ in 0..sequential {
                a.request(ip(2), Verb::Mutation, body.clone(), 5 * SECOND)
                    .await
                    .unwrap();
            }
            let round_trip = t0.elapsed().as_secs_f64() * 1e6 / f64::from(sequential);
            let (t0, c0) = (Instant::now(), cpu());
            let handles: Vec<_> = (0..tasks)
                .map(|_| {
                    let (a, body) = (Arc::clone(&a), body.clone());
                    tokio::spawn(async move {
                        for _ in 0..per_task {
                            a.request(ip(2), Verb::Mutation, body.clone(), 5 * SECOND)
                                .await
                                .unwrap();
                        }
                    })
                })
                .collect();
            for h in handles {
                h.await.unwrap();
            }
            let n = f64::from(tasks * per_task);
            let (wall, spent) = (t0.elapsed(), cpu() - c0);
            assert_eq!(
                b.metrics().tls_connections.load(Ordering::Relaxed),
                u64::from(use_tls)
            );
            println!(
                "| {} | {} | {round_trip:.1} | {:.0} | {:.2} |",
                pair + 1,
                if use_tls { "TLS" } else { "plaintext" },
                n / wall.as_secs_f64(),
                spent.as_secs_f64() * 1e6 / n,
            );
            drop(b);
            drop(a);
            // Let the listeners of this pair go before the next binds the same addresses.
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// `internode_encryption: dc`: plaintext within the node's data center, both ways, and TLS
/// with (and only with) the other data centers and the peers not placed yet.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dc_encrypts_only_across_data_centers() {
    use cairn_cluster::tls::{InternodeEncryption, PeerLocations};
    let pki = tls::pki();
    let dc = |cert| tls::Tls {
        encryption: InternodeEncryption::Dc,
        ..tls::all(cert)
    };
    let a = tls::tls_node(1, 0, &pki, dc("node1")).await;
    let port = a.local_addr().port();
    // .2 is in a's data center (dc1, as the test nodes are), .3 in another; .4 not placed.
    let places: Arc<dyn PeerLocations> =
        Arc::new(tls::Places(vec![(ip(2), "dc1"), (ip(3), "dc2")]));
    a.set_peer_locations(Some(places));
    // A plaintext node in the same data center: plaintext both ways.
    let near = node(2, port, "c").await;
    a.request(ip(2), Verb::Echo, Bytes::new(), SECOND)
        .await
        .unwrap();
    near.request(ip(1), Verb::Echo, Bytes::new(), SECOND)
        .await
        .unwrap();
    // A plaintext node in another data center is refused.
    let far = node(3, port, "c").await;
    let r = far.request(ip(1), Verb::Echo, Bytes::new(), SECOND).await;
    assert!(
        matches!(&r, Err(Error::Unreachable { message, .. }) if message.contains("requires TLS")),
        "{r:?}"
    );
    // A TLS node not placed yet: a connects to it over TLS.
    let unknown = tls::tls_node(4, port, &pki, dc("node4")).await;
    a.request(ip(4), Verb::Echo, Bytes::new(), SECOND)
        .await
        .unwrap();
    assert_eq!(
        unknown
            .metrics()
            .tls_connections
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
}

/// `try_send` hands a request to an open connection at once and its answer is awaited
/// directly; it declines (giving the body back) when no connection is open yet or a link
/// filter is set. Handlers answered at once (polled on the connection's task), handlers that
/// wait, and a handler that panics all answer their own request, on one connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn try_send_and_handlers_that_finish_at_once_wait_or_panic() {
    let a = node(1, 0, "c").await;
    let port = a.local_addr().port();
    let b = node(2, port, "c").await;
    b.register(Verb::Mutation, who_called());
    b.register(
        Verb::ReadData,
        Arc::new(|_, body| {
            Box::pin(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                Ok(body)
            })
        }),
    );
    b.register(
        Verb::ReadDigest,
        Arc::new(|_, body: Bytes| {
            Box::pin(async move {
                if body.as_ref() == b"boom" {
                    panic!("a handler bug");
                }
                Ok(body)
            })
        }),
    );
    // No connection to 127.0.0.2 yet: declined, the body handed back.
    let body = a
        .try_send(ip(2), Verb::Mutation, Bytes::from_static(b"x"))
        .err()
        .expect("no connection yet");
    assert_eq!(body, Bytes::from_static(b"x"));
    a.request(ip(2), Verb::Echo, Bytes::new(), SECOND)
        .await
        .unwrap();

    let answers: Vec<_> = (0..200u32)
        .map(|i| {
            let verb = if i % 2 == 0 {
                Verb::Mutation
            } else {
                Verb::ReadData
            };
            let sent = a.try_send(ip(2), verb, Bytes::from(i.to_string()));
            (i, sent.expect("the connection is open"))
        })
        .collect();
    for (i, answer) in answers {
        let r = tokio::time::timeout(5 * SECOND, answer)
            .await
            .unwrap()
            .unwrap();
        let expected = match i % 2 {
            0 => format!("127.0.0.1|{i}"),
            _ => i.to_string(),
        };
        assert_eq!(r, Bytes::from(expected));
    }
    let panicked = a
        .try_send(ip(2), Verb::ReadDigest, Bytes::from_static(b"boom"))
        .expect("open");
    match tokio::time::timeout(5 * SECOND, panicked).await.unwrap() {
        Err(Error::Remote { message, .. }) => assert!(message.contains("panicked"), "{message}"),
        other => panic!("expected the handler's failure, got {other:?}"),
    }
    // The connection survived the panic.
    let fine = a
        .try_send(ip(2), Verb::ReadDigest, Bytes::from_static(b"ok"))
        .expect("open");
    let r = tokio::time::timeout(5 * SECOND, fine)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r, Bytes::from_static(b"ok"));

    // A link filter makes every request go through `request` (it may delay or drop them).
    struct Slow;
    impl LinkFilter for Slow {
        fn delivery(&self, _: IpAddr, _: IpAddr, _: Verb) -> Delivery {
            Delivery::Deliver
        }
    }
    a.set_filter(Some(Arc::new(Slow)));
    assert!(a
        .try_send(ip(2), Verb::Mutation, Bytes::from_static(b"y"))
        .is_err());
}

/// A trace with a session, keeping its events.
struct Events(parking_lot::Mutex<Vec<String>>, [u8; 16]);

impl cairn_engine::trace::TraceSink for Events {
    fn event(&self, activity: String) {
        self.0.lock().push(activity);
    }
    fn session(&self) -> Option<[u8; 16]> {
        Some(self.1)
    }
}

/// A traced request carries its session id to the peer's handler, its body unchanged, and
/// its trace gets the request's leaving and the answer's arrival in Cassandra 5.0's words; an
/// untraced one carries none — through `request` and through `try_send` alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_traced_request_carries_its_session_to_the_handler() {
    let a = node(1, 0, "c").await;
    let port = a.local_addr().port();
    let b = node(2, port, "c").await;
    b.register_traced(
        Verb::Mutation,
        Arc::new(|_, body, session| {
            Box::pin(async move {
                let mut out = session.map_or(b"-".to_vec(), |s| s.to_vec());
                out.push(b'|');
                out.extend_from_slice(&body);
                Ok(Bytes::from(out))
            })
        }),
    );
    let session = [9u8; 16];
    let events = Arc::new(Events(parking_lot::Mutex::new(Vec::new()), session));
    let trace = cairn_engine::Trace::new(Arc::clone(&events) as _);
    let body = Bytes::from_static(b"x");
    let traced = a
        .request_traced(
            ip(2),
            Verb::Mutation,
            body.clone(),
            SECOND,
            Some(trace.clone()),
        )
        .await
        .unwrap();
    assert_eq!(traced, Bytes::from([&session[..], b"|x"].concat()));
    let peer = format!("/127.0.0.2:{port}");
    let said = vec![
        format!("Sending MUTATION_REQ message to {peer} message size 37 bytes"),
        format!("MUTATION_RSP message received from {peer}"),
    ];
    assert_eq!(*events.0.lock(), said);
    let plain = a.request(ip(2), Verb::Mutation, body.clone(), SECOND).await;
    assert_eq!(plain.unwrap(), Bytes::from_static(b"-|x"));
    // The connection is open now: handed over at once.
    let answer = a
        .try_send_traced(ip(2), Verb::Mutation, body.clone(), Some(trace))
        .unwrap_or_else(|_| panic!("the connection is open"));
    let traced = answer.await.unwrap();
    assert_eq!(traced, Bytes::from([&session[..], b"|x"].concat()));
    assert_eq!(*events.0.lock(), [said.clone(), said].concat());
}
