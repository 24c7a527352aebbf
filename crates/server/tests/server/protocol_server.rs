//! End-to-end tests of the native-protocol server over TCP with a dummy handler.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::{Bytes, BytesMut};
use cairn_server::protocol::frame::{FrameHeader, HEADER_LEN};
use cairn_server::protocol::*;
use rand::{Rng, SeedableRng};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const TIMEOUT: Duration = Duration::from_secs(10);

struct Dummy {
    events: EventBus,
    auth: bool,
}

#[derive(Default)]
struct Session {
    keyspace: Mutex<Option<String>>,
}

fn canned_rows(text: &str) -> Response {
    let md = Arc::new(ResultMetadata::for_table(
        TableSpec::new("system", "local"),
        vec![
            ("key".to_string(), ColumnType::Varchar),
            ("n".to_string(), ColumnType::Int),
        ],
    ));
    let mut b = RowsBuilder::new(2);
    b.push_row([Some(text.as_bytes()), Some(&[0, 0, 0, 42][..])]);
    Response::Result(ResultBody::Rows(b.finish(md).unwrap()))
}

impl Handler for Dummy {
    type Session = Session;

    fn new_session(&self, _info: &ConnectionInfo) -> Session {
        Session::default()
    }

    fn authenticator(&self) -> Option<String> {
        self.auth
            .then(|| "org.apache.cassandra.auth.PasswordAuthenticator".to_string())
    }

    /// Queries starting with `INLINE` are answered on the reactor; `INLINE PANIC` panics
    /// there; everything else is declined and goes to `handle`.
    fn handle_inline(&self, request: Request, ctx: RequestContext<Session>) -> Option<Reply> {
        let Request::Query(q) = &request else {
            return None;
        };
        if q.query == "INLINE PANIC" {
            panic!("inline handler bug");
        }
        let rest = q.query.strip_prefix("INLINE")?;
        let ks = ctx.session.keyspace.lock().unwrap().clone();
        Some(canned_rows(&format!("inline{rest} in {}", ks.unwrap_or_default())).into())
    }

    fn handle(
        &self,
        request: Request,
        ctx: RequestContext<Session>,
    ) -> impl Future<Output = Reply> + Send {
        let events = self.events.clone();
        async move {
            match request {
                Request::Query(q) => {
                    let text = q.query.clone();
                    if let Some(ms) = text.strip_prefix("SLEEP ") {
                        let ms: u64 = ms.trim().parse().unwrap_or(0);
                        tokio::time::sleep(Duration::from_millis(ms)).await;
                        return canned_rows(&text).into();
                    }
                    if let Some(ks) = text.strip_prefix("USE ") {
                        *ctx.session.keyspace.lock().unwrap() = Some(ks.to_string());
                        return Response::Result(ResultBody::SetKeyspace(ks.to_string())).into();
                    }
                    if text == "PANIC" {
                        panic!("handler bug");
                    }
                    if text == "FAIL" {
                        return CqlError::invalid("unconfigured table nope").into();
                    }
                    if let Some(ks) = text.strip_prefix("CREATE KEYSPACE ") {
                        let sc = SchemaChange {
                            change: SchemaChangeType::Created,
                            target: SchemaChangeTarget::Keyspace {
                                keyspace: ks.to_string(),
                            },
                        };
                        events.publish(Event::SchemaChange(sc.clone()));
                        return Response::Result(ResultBody::SchemaChange(sc)).into();
                    }
                    canned_rows(&text).into()
                }
                Request::Prepare(_) => Response::Result(ResultBody::Prepared(Prepared {
                    id: Bytes::from_static(&[1; 16]),
                    metadata: PreparedMetadata::default(),
                    result_metadata: Arc::new(ResultMetadata::default()),
                }))
                .into(),
                Request::Execute(e) => CqlError::unprepared(e.id).into(),
                Request::Batch(_) => Response::Result(ResultBody::Void).into(),
                Request::AuthResponse(token) => {
                    if token.as_deref() == Some(&b"\0cassandra\0cassandra"[..]) {
                        Response::AuthSuccess(None).into()
                    } else {
                        CqlError::new(
                            ErrorKind::BadCredentials,
                            "Provided username cassandra and/or password are incorrect",
                        )
                        .into()
                    }
                }
                other => CqlError::server(format!("unexpected {:?}", other.opcode())).into(),
            }
        }
    }
}

async fn start(config: ServerConfig, auth: bool) -> Server {
    let events = EventBus::new(64);
    let handler = Dummy {
        events: events.clone(),
        auth,
    };
    Server::bind_with_events("127.0.0.1:0", config, handler, events)
        .await
        .unwrap()
}

struct Client {
    sock: TcpStream,
    buf: BytesMut,
    compression: Option<Compression>,
    version: u8,
}

impl Client {
    async fn connect(server: &Server) -> Client {
        Client {
            sock: TcpStream::connect(server.local_addr()).await.unwrap(),
            buf: BytesMut::new(),
            compression: None,
            version: 4,
        }
    }

    async fn send(&mut self, stream: i16, req: &Request) {
        let f = req.encode_frame(self.version, stream, self.compression);
        self.sock.write_all(&f).await.unwrap();
    }

    async fn send_raw(&mut self, bytes: &[u8]) {
        self.sock.write_all(bytes).await.unwrap();
    }

    /// Next frame, or None at EOF.
    async fn recv_opt(&mut self) -> Option<(FrameHeader, Reply)> {
        loop {
            if self.buf.len() >= HEADER_LEN {
                let mut hb = [0u8; HEADER_LEN];
                hb.copy_from_slice(&self.buf[..HEADER_LEN]);
                let h = FrameHeader::parse(&hb);
                let total = HEADER_LEN + h.length as usize;
                if self.buf.len() >= total {
                    let frame = self.buf.split_to(total).freeze();
                    let reply = Reply::decode_frame(
                        &h,
                        frame.slice(HEADER_LEN..),
                        self.compression,
                        1 << 30,
                    )
                    .unwrap();
                    return Some((h, reply));
                }
            }
            let n = tokio::time::timeout(TIMEOUT, self.sock.read_buf(&mut self.buf))
                .await
                .expect("timed out waiting for a frame")
                .unwrap_or(0);
            if n == 0 {
                return None;
            }
        }
    }

    async fn recv(&mut self) -> (FrameHeader, Response) {
        let (h, r) = self.recv_opt().await.expect("connection closed");
        (h, r.response)
    }

    async fn request(&mut self, stream: i16, req: &Request) -> Response {
        self.send(stream, req).await;
        let (h, r) = self.recv().await;
        assert_eq!(h.stream, stream);
        r
    }

    async fn startup(&mut self, compression: Option<Compression>) {
        let mut options = vec![("CQL_VERSION".to_string(), "3.0.0".to_string())];
        if let Some(c) = compression {
            options.push(("COMPRESSION".to_string(), c.name().to_string()));
        }
        let r = self
            .request(0, &Request::Startup(Startup { options }))
            .await;
        assert_eq!(r, Response::Ready);
        self.compression = compression;
    }

    async fn expect_closed(&mut self) {
        assert!(
            self.recv_opt().await.is_none(),
            "expected the server to close"
        );
    }
}

fn query(text: &str) -> Request {
    Request::Query(Query {
        query: text.to_string(),
        params: QueryParams::new(Consistency::One),
    })
}

fn error_code(r: &Response) -> Option<ErrorCode> {
    match r {
        Response::Error(e) => Some(e.code()),
        _ => None,
    }
}

fn rows_text(r: &Response) -> String {
    let Response::Result(ResultBody::Rows(rows)) = r else {
        panic!("expected rows, got {r:?}")
    };
    let cells = rows.decode_rows().unwrap();
    String::from_utf8(cells[0][0].clone().unwrap().to_vec()).unwrap()
}

#[tokio::test]
async fn options_startup_lz4_query_concurrency_register() {
    let server = start(ServerConfig::default(), false).await;
    let mut c = Client::connect(&server).await;

    let Response::Supported(opts) = c.request(0, &Request::Options).await else {
        panic!()
    };
    let get = |k: &str| {
        opts.iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(get("CQL_VERSION"), Some(vec!["3.4.5".to_string()]));
    assert_eq!(
        get("COMPRESSION"),
        Some(vec!["lz4".to_string(), "snappy".to_string()])
    );
    assert!(opts.iter().all(|(k, _)| !k.starts_with("SCYLLA")));

    c.startup(Some(Compression::Lz4)).await;

    // A query: the response is compressed.
    c.send(1, &query("SELECT * FROM system.local")).await;
    let (h, r) = c.recv().await;
    assert_eq!(h.flags & 0x01, 0x01, "lz4 negotiated: response compressed");
    assert_eq!(rows_text(&r), "SELECT * FROM system.local");

    // Concurrent streams complete out of order.
    c.send(10, &query("SLEEP 1500")).await;
    c.send(11, &query("SLEEP 0")).await;
    c.send(12, &query("plain")).await;
    let mut order = Vec::new();
    for _ in 0..3 {
        let (h, r) = c.recv().await;
        assert!(matches!(r, Response::Result(ResultBody::Rows(_))));
        order.push(h.stream);
    }
    assert_eq!(
        order.last(),
        Some(&10),
        "the slow stream answers last: {order:?}"
    );

    // USE, PREPARE, EXECUTE (unprepared), BATCH, errors.
    assert_eq!(
        c.request(2, &query("USE ks")).await,
        Response::Result(ResultBody::SetKeyspace("ks".into()))
    );
    assert!(matches!(
        c.request(
            3,
            &Request::Prepare(Prepare {
                query: "SELECT".into()
            })
        )
        .await,
        Response::Result(ResultBody::Prepared(_))
    ));
    let r = c
        .request(
            4,
            &Request::Execute(Execute {
                id: Bytes::from_static(&[9; 16]),
                params: QueryParams::new(Consistency::One),
            }),
        )
        .await;
    assert_eq!(error_code(&r), Some(ErrorCode::Unprepared));
    let r = c
        .request(
            5,
            &Request::Batch(Batch {
                batch_type: BatchType::Logged,
                statements: vec![],
                consistency: Consistency::One,
                serial_consistency: None,
                default_timestamp: None,
            }),
        )
        .await;
    assert_eq!(r, Response::Result(ResultBody::Void));
    assert_eq!(
        error_code(&c.request(6, &query("FAIL")).await),
        Some(ErrorCode::Invalid)
    );
    // A panicking handler costs one SERVER_ERROR, not the connection.
    assert_eq!(
        error_code(&c.request(7, &query("PANIC")).await),
        Some(ErrorCode::ServerError)
    );

    // REGISTER, then a schema change made on another connection arrives as an EVENT.
    let r = c
        .request(8, &Request::Register(vec![EventType::SchemaChange]))
        .await;
    assert_eq!(r, Response::Ready);
    let mut other = Client::connect(&server).await;
    other.startup(Some(Compression::Snappy)).await;
    let r = other.request(1, &query("CREATE KEYSPACE ks2")).await;
    assert!(matches!(r, Response::Result(ResultBody::SchemaChange(_))));
    let (h, ev) = c.recv().await;
    assert_eq!(h.stream, -1);
    assert_eq!(
        ev,
        Response::Event(Event::SchemaChange(SchemaChange {
            change: SchemaChangeType::Created,
            target: SchemaChangeTarget::Keyspace {
                keyspace: "ks2".into()
            },
        }))
    );
    // The connection that did not register gets no event: its next frame is its answer.
    assert_eq!(rows_text(&other.request(2, &query("x")).await), "x");
    server.shutdown().await;
}

#[tokio::test]
async fn v5_is_refused_in_v4_then_closed_and_v3_works() {
    let server = start(ServerConfig::default(), false).await;
    let mut c = Client::connect(&server).await;
    c.send_raw(&[0x05, 0, 0, 0x07, 0x05, 0, 0, 0, 0]).await;
    let mut got = Vec::new();
    tokio::time::timeout(TIMEOUT, c.sock.read_to_end(&mut got))
        .await
        .unwrap()
        .unwrap();
    let msg = b"Invalid or unsupported protocol version (5); supported versions are (3/v3, 4/v4)";
    let mut expected = vec![0x84, 0, 0, 0x07, 0x00];
    expected.extend_from_slice(&(6 + msg.len() as u32).to_be_bytes());
    expected.extend_from_slice(&[0, 0, 0, 0x0A]);
    expected.extend_from_slice(&(msg.len() as u16).to_be_bytes());
    expected.extend_from_slice(msg);
    assert_eq!(got, expected, "then EOF");

    // v5 STARTUP with a body (what a v5 driver might send first) is refused the same way.
    let mut c = Client::connect(&server).await;
    c.version = 5;
    c.send(3, &Request::Startup(Startup::default())).await;
    let (h, r) = c.recv().await;
    assert_eq!((h.version, h.stream), (4, 3));
    assert_eq!(error_code(&r), Some(ErrorCode::ProtocolError));
    c.expect_closed().await;

    let mut c = Client::connect(&server).await;
    c.version = 3;
    c.startup(None).await;
    let (h, r) = {
        c.send(1, &query("v3 query")).await;
        c.recv().await
    };
    assert_eq!(h.version, 3);
    assert_eq!(rows_text(&r), "v3 query");
    server.shutdown().await;
}

#[tokio::test]
async fn state_machine_and_protocol_errors() {
    let server = start(ServerConfig::default(), false).await;
    let mut c = Client::connect(&server).await;
    // Before STARTUP: only OPTIONS / STARTUP.
    let r = c.request(1, &query("SELECT 1")).await;
    let Response::Error(e) = &r else { panic!() };
    assert_eq!(e.code(), ErrorCode::ProtocolError);
    assert_eq!(
        e.message,
        "Unexpected message QUERY, expecting STARTUP or OPTIONS"
    );
    let r = c
        .request(1, &Request::Register(vec![EventType::SchemaChange]))
        .await;
    assert_eq!(error_code(&r), Some(ErrorCode::ProtocolError));
    // STARTUP without CQL_VERSION / unknown compression.
    let r = c.request(2, &Request::Startup(Startup::default())).await;
    assert_eq!(error_code(&r), Some(ErrorCode::ProtocolError));
    let bad = Startup {
        options: vec![
            ("CQL_VERSION".into(), "3.0.0".into()),
            ("COMPRESSION".into(), "zstd".into()),
        ],
    };
    let r = c.request(2, &Request::Startup(bad)).await;
    let Response::Error(e) = &r else { panic!() };
    assert_eq!(e.message, "Unknown compression algorithm: zstd");
    // The connection survived all of that.
    c.startup(None).await;
    let r = c
        .request(
            3,
            &Request::Startup(Startup {
                options: vec![("CQL_VERSION".into(), "3.0.0".into())],
            }),
        )
        .await;
    assert_eq!(error_code(&r), Some(ErrorCode::ProtocolError));
    // Unknown opcode and a malformed body: error on the stream, connection stays.
    c.send_raw(&[0x04, 0, 0, 4, 0x42, 0, 0, 0, 0]).await;
    let (h, r) = c.recv().await;
    assert_eq!(
        (h.stream, error_code(&r)),
        (4, Some(ErrorCode::ProtocolError))
    );
    c.send_raw(&[0x04, 0, 0, 5, 0x07, 0, 0, 0, 3, 0xff, 0xff, 0xff])
        .await;
    let (h, r) = c.recv().await;
    assert_eq!(
        (h.stream, error_code(&r)),
        (5, Some(ErrorCode::ProtocolError))
    );
    // A compressed frame without negotiated compression.
    c.send_raw(&[0x04, 0x01, 0, 6, 0x05, 0, 0, 0, 0]).await;
    let (_, r) = c.recv().await;
    assert_eq!(error_code(&r), Some(ErrorCode::ProtocolError));
    assert_eq!(
        rows_text(&c.request(7, &query("still here")).await),
        "still here"
    );
    // Switching version mid-connection: error, then close.
    c.version = 3;
    c.send(8, &query("x")).await;
    let (h, r) = c.recv().await;
    assert_eq!(
        (h.version, error_code(&r)),
        (4, Some(ErrorCode::ProtocolError))
    );
    c.expect_closed().await;
    assert!(server.stats().protocol_errors() >= 8);
    server.shutdown().await;
}

#[tokio::test]
async fn oversized_frames_are_refused_without_reading_them() {
    let config = ServerConfig {
        max_frame_size: 1024,
        ..ServerConfig::default()
    };
    let server = start(config, false).await;
    let mut c = Client::connect(&server).await;
    c.startup(None).await;
    let mut h = vec![0x04, 0, 0, 9, 0x07];
    h.extend_from_slice(&(100_000_000u32).to_be_bytes());
    c.send_raw(&h).await;
    let (hd, r) = c.recv().await;
    let Response::Error(e) = &r else { panic!() };
    assert_eq!((hd.stream, e.code()), (9, ErrorCode::ProtocolError));
    assert!(
        e.message.contains("exceeds maximum allowed length 1024"),
        "{}",
        e.message
    );
    c.expect_closed().await;
    // Compressed bodies are bounded by the same limit once decompressed.
    let mut c = Client::connect(&server).await;
    c.startup(Some(Compression::Lz4)).await;
    let big = "x".repeat(10_000);
    c.send(1, &query(&big)).await;
    let (_, r) = c.recv().await;
    assert_eq!(error_code(&r), Some(ErrorCode::ProtocolError));
    assert_eq!(rows_text(&c.request(2, &query("ok")).await), "ok");
    server.shutdown().await;
}

#[tokio::test]
async fn in_flight_limits_answer_overloaded() {
    let config = ServerConfig {
        max_in_flight_per_connection: 2,
        ..ServerConfig::default()
    };
    let server = start(config, false).await;
    let mut c = Client::connect(&server).await;
    c.startup(None).await;
    for s in 1..=6 {
        c.send(s, &query("SLEEP 300")).await;
    }
    let mut overloaded = 0;
    let mut rows = 0;
    for _ in 0..6 {
        let (_, r) = c.recv().await;
        match error_code(&r) {
            Some(ErrorCode::Overloaded) => overloaded += 1,
            None => rows += 1,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((rows, overloaded), (2, 4));
    assert_eq!(server.stats().overloaded(), 4);
    // Permits come back once responses are written.
    assert_eq!(rows_text(&c.request(7, &query("after")).await), "after");

    // The global limit applies across connections.
    let server2 = start(
        ServerConfig {
            max_in_flight_total: 1,
            ..ServerConfig::default()
        },
        false,
    )
    .await;
    let mut a = Client::connect(&server2).await;
    let mut b = Client::connect(&server2).await;
    a.startup(None).await;
    b.startup(None).await;
    a.send(1, &query("SLEEP 2000")).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        error_code(&b.request(1, &query("x")).await),
        Some(ErrorCode::Overloaded)
    );
    assert!(matches!(a.recv().await.1, Response::Result(_)));
    server.shutdown().await;
    server2.shutdown().await;
}

#[tokio::test]
async fn authentication_flow() {
    let server = start(ServerConfig::default(), true).await;
    let mut c = Client::connect(&server).await;
    let startup = Startup {
        options: vec![("CQL_VERSION".into(), "3.0.0".into())],
    };
    let r = c.request(0, &Request::Startup(startup)).await;
    assert_eq!(
        r,
        Response::Authenticate("org.apache.cassandra.auth.PasswordAuthenticator".into())
    );
    let r = c.request(1, &query("SELECT 1")).await;
    let Response::Error(e) = &r else { panic!() };
    assert_eq!(
        e.message,
        "Unexpected message QUERY, expecting SASL_RESPONSE"
    );
    let r = c
        .request(
            2,
            &Request::AuthResponse(Some(Bytes::from_static(b"\0cassandra\0wrong"))),
        )
        .await;
    assert_eq!(error_code(&r), Some(ErrorCode::BadCredentials));
    let r = c
        .request(
            3,
            &Request::AuthResponse(Some(Bytes::from_static(b"\0cassandra\0cassandra"))),
        )
        .await;
    assert_eq!(r, Response::AuthSuccess(None));
    assert_eq!(rows_text(&c.request(4, &query("in")).await), "in");
    server.shutdown().await;
}

/// Valid frames a client sends, used as seeds for mutation.
fn seed_frames() -> Vec<Vec<u8>> {
    let startup = Request::Startup(Startup {
        options: vec![
            ("CQL_VERSION".into(), "3.0.0".into()),
            ("COMPRESSION".into(), "lz4".into()),
        ],
    });
    let mut v = vec![
        Request::Options.encode_frame(4, 0, None),
        startup.encode_frame(4, 1, None),
    ];
    let mut q = startup.encode_frame(4, 1, None);
    q.extend(query("SELECT * FROM t").encode_frame(4, 2, Some(Compression::Lz4)));
    q.extend(
        Request::Register(vec![EventType::SchemaChange]).encode_frame(4, 3, Some(Compression::Lz4)),
    );
    v.push(q);
    v
}

#[tokio::test]
async fn fuzzed_connections_never_take_the_server_down() {
    let server = start(
        ServerConfig {
            max_frame_size: 64 * 1024,
            ..ServerConfig::default()
        },
        false,
    )
    .await;
    let mut rng = rand::rngs::StdRng::seed_from_u64(1234);
    let seeds = seed_frames();
    let mut tasks = Vec::new();
    for i in 0..300 {
        let mut bytes: Vec<u8> = if i % 3 == 0 {
            (0..rng.gen_range(0..200)).map(|_| rng.gen()).collect()
        } else {
            let mut m = seeds[rng.gen_range(0..seeds.len())].clone();
            for _ in 0..rng.gen_range(1..5) {
                match rng.gen_range(0..3) {
                    0 if !m.is_empty() => {
                        let j = rng.gen_range(0..m.len());
                        m[j] = rng.gen();
                    }
                    1 if !m.is_empty() => m.truncate(rng.gen_range(0..m.len())),
                    _ => {
                        let j = rng.gen_range(0..=m.len());
                        m.insert(j, rng.gen());
                    }
                }
            }
            m
        };
        if i % 2 == 0 {
            // Keep the version byte valid half of the time so mutations reach deeper.
            if let Some(b) = bytes.first_mut() {
                *b = 4;
            }
        }
        let addr = server.local_addr();
        tasks.push(tokio::spawn(async move {
            let mut s = TcpStream::connect(addr).await.unwrap();
            let _ = s.write_all(&bytes).await;
            let _ = s.shutdown().await;
            let mut sink = Vec::new();
            let _ = tokio::time::timeout(TIMEOUT, s.read_to_end(&mut sink)).await;
        }));
        if tasks.len() >= 32 {
            for t in tasks.drain(..) {
                t.await.unwrap();
            }
        }
    }
    for t in tasks {
        t.await.unwrap();
    }
    // The server still serves a well-behaved client.
    let mut c = Client::connect(&server).await;
    c.startup(Some(Compression::Snappy)).await;
    assert_eq!(rows_text(&c.request(1, &query("alive")).await), "alive");
    assert!(server.stats().connections_accepted() >= 301);
    server.shutdown().await;
}

#[tokio::test]
async fn large_bodies_use_the_blocking_pool_path() {
    let server = start(
        ServerConfig {
            blocking_threshold: 64,
            ..ServerConfig::default()
        },
        false,
    )
    .await;
    for c in [Compression::Lz4, Compression::Snappy] {
        let mut client = Client::connect(&server).await;
        client.startup(Some(c)).await;
        let big = format!("SELECT '{}'", "y".repeat(300_000));
        assert_eq!(rows_text(&client.request(1, &query(&big)).await), big);
        // A corrupted compressed body is a protocol error on its stream only.
        let mut f = query(&big).encode_frame(4, 2, Some(c));
        let n = f.len();
        f[n / 2] ^= 0xff;
        f[9..13].copy_from_slice(&[0xff, 0xff, 0xff, 0x7f]);
        client.send_raw(&f).await;
        let (h, r) = client.recv().await;
        assert_eq!(
            (h.stream, error_code(&r)),
            (2, Some(ErrorCode::ProtocolError))
        );
        assert_eq!(rows_text(&client.request(3, &query("ok")).await), "ok");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_stalled_connection_does_not_block_others() {
    let server = start(ServerConfig::default(), false).await;
    // Half a header, then silence.
    let mut stalled = TcpStream::connect(server.local_addr()).await.unwrap();
    stalled.write_all(&[0x04, 0, 0]).await.unwrap();
    let mut c = Client::connect(&server).await;
    c.startup(None).await;
    assert_eq!(rows_text(&c.request(1, &query("fine")).await), "fine");
    drop(stalled);
    server.shutdown().await;
}

#[tokio::test]
async fn inline_replies_share_writes_and_do_not_wait_for_spawned_ones() {
    let server = start(ServerConfig::default(), false).await;
    let mut c = Client::connect(&server).await;
    c.startup(Some(Compression::Snappy)).await;
    assert_eq!(
        c.request(1, &query("USE ks")).await,
        Response::Result(ResultBody::SetKeyspace("ks".into()))
    );
    // One write carrying a slow declined request, inline ones, a panicking inline one and
    // a fast declined one: every stream is answered once, the slow one last.
    let mut bytes = Vec::new();
    let reqs = [
        (10, "SLEEP 800"),
        (11, "INLINE a"),
        (12, "INLINE PANIC"),
        (13, "plain"),
        (14, "INLINE b"),
    ];
    for (stream, text) in reqs {
        bytes.extend(query(text).encode_frame(4, stream, Some(Compression::Snappy)));
    }
    c.send_raw(&bytes).await;
    let mut answers = std::collections::BTreeMap::new();
    let mut order = Vec::new();
    for _ in 0..reqs.len() {
        let (h, r) = c.recv().await;
        order.push(h.stream);
        assert!(
            answers.insert(h.stream, r).is_none(),
            "stream {} twice",
            h.stream
        );
    }
    assert_eq!(
        order.last(),
        Some(&10),
        "the slow stream answers last: {order:?}"
    );
    assert_eq!(rows_text(&answers[&11]), "inline a in ks");
    assert_eq!(rows_text(&answers[&14]), "inline b in ks");
    assert_eq!(rows_text(&answers[&13]), "plain");
    assert_eq!(rows_text(&answers[&10]), "SLEEP 800");
    assert_eq!(error_code(&answers[&12]), Some(ErrorCode::ServerError));
    // The inline answers came before the slow declined one finished, in request order.
    let pos = |s: i16| order.iter().position(|&x| x == s).unwrap();
    assert!(pos(11) < pos(12) && pos(12) < pos(14));
    // The connection still works.
    assert_eq!(
        rows_text(&c.request(2, &query("INLINE c")).await),
        "inline c in ks"
    );
}
