//! Internode messaging: requests and responses between nodes over TCP.
//!
//! Every node listens on `listen_address:storage_port` (7000 by default, the same port on every
//! node, each node on its own address — as ccm runs Cassandra on 127.0.0.1, .2, .3). A node
//! sends a request with [`Messaging::request`] and gets the peer's answer, an error the peer's
//! handler returned, or a timeout. Handlers are registered per [`Verb`]; `ECHO` is built in
//! (liveness is a direct echo with a timeout, as ScyllaDB does it).
//!
//! Connections: one outgoing connection per peer, opened on the first request and again
//! after it breaks, **bound to this node's own address** before connecting — the peer knows
//! who is calling from the source address, and on one machine 127.0.0.2's requests must not
//! leave from 127.0.0.1. Requests are multiplexed on it by id; responses come back on the
//! same connection. The first frame of a connection is `HELLO` with the caller's cluster
//! name: a node of another cluster is refused (Cassandra's "ClusterName mismatch").
//!
//! TLS (`server_encryption_options`, [`InternodeTls`]): an outgoing connection is wrapped in
//! TLS when the `internode_encryption` policy says so for the peer (its data center and rack
//! come from the [`PeerLocations`] the node sets; a peer not known yet is encrypted). An
//! incoming connection whose first byte starts a TLS handshake (0x16, where a frame starts
//! with its magic) is accepted over TLS; one in plaintext is served only when the policy
//! leaves that peer in clear or `optional` is set, and is otherwise answered with an error at
//! `HELLO` and closed. A failed handshake, either way, is counted
//! ([`MessagingMetrics::tls_handshake_failures`]) and logged at most every
//! [`FAILURE_LOG_INTERVAL`] per peer; the peer is then simply unreachable (liveness marks
//! it down), never half-connected: no frame is sent or served before the handshake ends.
//!
//! Costs per message, on a node that answers thousands a second: a request whose connection
//! is open can be handed to it at once with [`Messaging::try_send`] and its [`Answer`]
//! awaited by the caller itself, with the caller's own deadline — no task and no timer per
//! request. An incoming request's handler is polled once on the connection's reading task and
//! answered from there when it finishes at once (the common case); only a handler that must
//! wait gets a task of its own.
//!
//! Tracing: a request sent for a traced client request ([`Messaging::request_traced`],
//! [`Messaging::try_send_traced`], given the request's trace) carries the tracing session's
//! id, as Cassandra's messages carry `TRACE_SESSION`, and the trace gets the request's leaving
//! and its answer's arrival in Cassandra 5.0's words ("Sending MUTATION_REQ message to …",
//! "MUTATION_RSP message received from …"); the peer's handler gets the session
//! ([`Messaging::register_traced`]) and records its own events under it. An untraced request carries nothing more and
//! costs its receiver one flag test.
//!
//! The wire format is [`frame`]'s. A peer that sends a frame that cannot be trusted (bad
//! magic, oversized) has its connection closed; it never crashes the node.
//!
//! Faults for tests: a [`LinkFilter`] decides, per request, whether it is delivered, dropped
//! (the caller sees a timeout, as over a partitioned link) or delayed.
//!
//! Invariants: a request's caller always gets exactly one outcome (answer, error or timeout);
//! a broken connection fails every request waiting on it at once; nothing here blocks a
//! thread (tokio tasks only).

pub mod frame;
pub mod verb;

use crate::error::{Error, Result};
use crate::tls::{InternodeTls, PeerLocations};
use bytes::{Bytes, BytesMut};
use cairn_engine::Trace;
use frame::{Frame, ERROR, RESPONSE, SESSION_LEN, TRACED};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::{mpsc, oneshot, watch};
pub use verb::Verb;

/// A connection's reading side: the socket's, or its TLS stream's.
type Reader = Box<dyn AsyncRead + Unpin + Send>;
/// A connection's writing side.
type Writer = Box<dyn AsyncWrite + Unpin + Send>;

/// The first byte of a TLS handshake record (content type 22); a frame starts with its
/// magic instead.
const TLS_HANDSHAKE: u8 = 0x16;

/// A peer's failed handshakes are logged at warning level at most this often (the others
/// at debug level): a misconfigured peer retries every second or so.
pub const FAILURE_LOG_INTERVAL: Duration = Duration::from_secs(60);

/// Messaging's counters (exported to Prometheus by the server).
#[derive(Debug, Default)]
pub struct MessagingMetrics {
    /// Connections, either way, that completed a TLS handshake.
    pub tls_connections: AtomicU64,
    /// Connections, either way, closed because TLS failed: a failed or timed-out
    /// handshake, or a peer in plaintext where TLS is required.
    pub tls_handshake_failures: AtomicU64,
}

/// What a handler returns: the response body, or an error text sent back to the caller.
pub type HandlerFuture = Pin<Box<dyn Future<Output = std::result::Result<Bytes, String>> + Send>>;

/// Answers the requests of one verb: `(caller's address, body)`.
pub type Handler = Arc<dyn Fn(IpAddr, Bytes) -> HandlerFuture + Send + Sync>;

/// A tracing session's id (a time UUID), carried by the requests of a traced client request.
pub type SessionId = [u8; SESSION_LEN];

/// Answers the requests of one verb, told the tracing session of a traced one:
/// `(caller's address, body, session)`.
pub type TracedHandler =
    Arc<dyn Fn(IpAddr, Bytes, Option<SessionId>) -> HandlerFuture + Send + Sync>;

/// What happens to a request on its way (see [`LinkFilter`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Sent.
    Deliver,
    /// Lost: the caller sees a timeout.
    Drop,
    /// Sent after a delay.
    Delay(Duration),
}

/// Decides the fate of each outgoing request (tests partition, slow or break links with it).
pub trait LinkFilter: Send + Sync {
    /// The fate of a `verb` request from `from` to `to`.
    fn delivery(&self, from: IpAddr, to: IpAddr, verb: Verb) -> Delivery;
}

/// Messaging's settings.
#[derive(Debug, Clone)]
pub struct MessagingConfig {
    /// `listen_address`: where the node listens, and what its outgoing sockets bind to.
    pub listen: IpAddr,
    /// `storage_port` (0: any free port, for tests).
    pub port: u16,
    /// `cluster_name`: peers of another cluster are refused.
    pub cluster_name: String,
    /// How long a connection attempt (TCP and `HELLO`) may take.
    pub connect_timeout: Duration,
    /// The largest body accepted.
    pub max_body: usize,
    /// TLS (`server_encryption_options`); `None`: plaintext only.
    pub tls: Option<InternodeTls>,
}

impl MessagingConfig {
    /// Defaults for a node at `listen`: port 7000, 2 s to connect, 256 MiB bodies.
    pub fn new(listen: IpAddr, cluster_name: impl Into<String>) -> MessagingConfig {
        MessagingConfig {
            listen,
            port: 7000,
            cluster_name: cluster_name.into(),
            connect_timeout: Duration::from_secs(2),
            max_body: 256 << 20,
            tls: None,
        }
    }
}

/// A node's messaging service. Dropping it (or [`Messaging::shutdown`]) stops listening and
/// closes its connections.
pub struct Messaging {
    inner: Arc<Inner>,
    local: SocketAddr,
}

struct Inner {
    config: MessagingConfig,
    /// The port peers listen on (this node's own, as every node uses the same).
    peer_port: u16,
    handlers: Mutex<HashMap<Verb, TracedHandler>>,
    /// One slot per peer; the slot's async lock serialises connecting to that peer only.
    peers: Mutex<HashMap<IpAddr, Arc<PeerSlot>>>,
    filter: Mutex<Option<Arc<dyn LinkFilter>>>,
    next_id: AtomicU64,
    shutdown: watch::Sender<bool>,
    /// Where peers are, for the TLS policy.
    locations: Mutex<Option<Arc<dyn PeerLocations>>>,
    metrics: MessagingMetrics,
    /// When each peer's last handshake failure was logged at warning level.
    failures_logged: Mutex<HashMap<IpAddr, tokio::time::Instant>>,
}

/// A peer's connection, once opened.
type PeerSlot = tokio::sync::Mutex<Option<Arc<Outbound>>>;

type Pending = Mutex<HashMap<u64, oneshot::Sender<std::result::Result<Bytes, Frame>>>>;

/// An outgoing connection: a writer task fed by `tx`, a reader task completing `pending`.
struct Outbound {
    tx: mpsc::Sender<Frame>,
    pending: Arc<Pending>,
    closed: Arc<AtomicBool>,
}

impl Messaging {
    /// Listens on `config.listen:config.port` and serves registered verbs.
    pub async fn start(config: MessagingConfig) -> Result<Messaging> {
        let addr = SocketAddr::new(config.listen, config.port);
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|e| Error::Config(format!("cannot listen for nodes on {addr}: {e}")))?;
        let local = listener
            .local_addr()
            .map_err(|e| Error::Config(format!("cannot listen for nodes on {addr}: {e}")))?;
        let (shutdown, stop) = watch::channel(false);
        let inner = Arc::new(Inner {
            peer_port: local.port(),
            config,
            handlers: Mutex::new(HashMap::new()),
            peers: Mutex::new(HashMap::new()),
            filter: Mutex::new(None),
            next_id: AtomicU64::new(1),
            shutdown,
            locations: Mutex::new(None),
            metrics: MessagingMetrics::default(),
            failures_logged: Mutex::new(HashMap::new()),
        });
        let echo: TracedHandler = Arc::new(|_, _, _| Box::pin(async { Ok(Bytes::new()) }));
        inner.handlers.lock().insert(Verb::Echo, echo);
        tokio::spawn(accept_loop(listener, Arc::clone(&inner), stop));
        Ok(Messaging { inner, local })
    }

    /// The address this node listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The port peers listen on (`storage_port`: the same on every node).
    pub fn peer_port(&self) -> u16 {
        self.inner.peer_port
    }

    /// A traced request's event as it leaves for `to`, as Cassandra 5.0 writes it
    /// (`Tracing.traceOutgoingMessage`): "Sending MUTATION_REQ message to /10.0.0.2:7000
    /// message size 123 bytes" — the verb by Cassandra's name ([`Verb::trace_name`]), the
    /// peer with its storage port, the size of the frame on the wire (header, session id,
    /// `body_len` bytes of body).
    pub fn sending_event(&self, verb: Verb, to: IpAddr, body_len: usize) -> String {
        self.sending(verb.trace_name(), to, body_len)
    }

    /// A traced request's answer as it leaves for the coordinator `to` ("Sending
    /// MUTATION_RSP message to /10.0.0.1:7000 message size 39 bytes"; see
    /// [`Verb::response_trace_name`]).
    pub fn response_sending_event(&self, verb: Verb, to: IpAddr, body_len: usize) -> String {
        self.sending(verb.response_trace_name(), to, body_len)
    }

    fn sending(&self, name: &str, to: IpAddr, body_len: usize) -> String {
        format!(
            "Sending {name} message to /{} message size {} bytes",
            SocketAddr::new(to, self.inner.peer_port),
            frame::HEADER_LEN + frame::SESSION_LEN + body_len
        )
    }

    /// A traced request's event as it arrives from `from`, as Cassandra 5.0 writes it
    /// ("MUTATION_REQ message received from /10.0.0.1:7000").
    pub fn received_event(&self, verb: Verb, from: IpAddr) -> String {
        received_text(
            verb.trace_name(),
            SocketAddr::new(from, self.inner.peer_port),
        )
    }

    /// Serves `verb` with `handler` (replacing any earlier one).
    pub fn register(&self, verb: Verb, handler: Handler) {
        let traced: TracedHandler = Arc::new(move |from, body, _| handler(from, body));
        self.inner.handlers.lock().insert(verb, traced);
    }

    /// Serves `verb` with `handler`, which is told the tracing session of a traced request
    /// (replacing any earlier handler).
    pub fn register_traced(&self, verb: Verb, handler: TracedHandler) {
        self.inner.handlers.lock().insert(verb, handler);
    }

    /// Stops serving `verb` (its requests are answered with an error).
    pub fn unregister(&self, verb: Verb) {
        self.inner.handlers.lock().remove(&verb);
    }

    /// Tells messaging where peers are (the TLS policy's `dc` and `rack` need it).
    pub fn set_peer_locations(&self, locations: Option<Arc<dyn PeerLocations>>) {
        *self.inner.locations.lock() = locations;
    }

    /// The counters.
    pub fn metrics(&self) -> &MessagingMetrics {
        &self.inner.metrics
    }

    /// Puts `filter` on every request this node sends (`None` removes it).
    pub fn set_filter(&self, filter: Option<Arc<dyn LinkFilter>>) {
        *self.inner.filter.lock() = filter;
    }

    /// Sends a `verb` request to node `to` and waits at most `timeout` for its answer.
    pub async fn request(
        &self,
        to: IpAddr,
        verb: Verb,
        body: Bytes,
        timeout: Duration,
    ) -> Result<Bytes> {
        self.request_traced(to, verb, body, timeout, None).await
    }

    /// [`Messaging::request`] for a traced client request: the request carries the trace's
    /// session (when there is a trace) for the peer to record its events under, and the trace
    /// gets the request's leaving and its answer's arrival, as Cassandra 5.0 records them.
    pub async fn request_traced(
        &self,
        to: IpAddr,
        verb: Verb,
        body: Bytes,
        timeout: Duration,
        trace: Option<Trace>,
    ) -> Result<Bytes> {
        let session = trace.as_ref().and_then(Trace::session);
        if let Some(t) = &trace {
            t.event(self.sending_event(verb, to, body.len()));
        }
        let timed_out = || Error::Timeout {
            peer: to,
            verb: verb.name(),
            millis: timeout.as_millis(),
        };
        if traced_len(&body, session) > self.inner.config.max_body {
            // The frame's length field could not say it, and the peer would refuse it.
            return Err(Error::Unreachable {
                peer: to,
                message: format!(
                    "a {} message of {} bytes, over the {}-byte limit",
                    verb.name(),
                    body.len(),
                    self.inner.config.max_body
                ),
            });
        }
        let filter = self.inner.filter.lock().clone();
        let delivery = filter.map_or(Delivery::Deliver, |f| {
            f.delivery(self.inner.config.listen, to, verb)
        });
        let started = tokio::time::Instant::now();
        match delivery {
            Delivery::Deliver => {}
            Delivery::Drop => {
                tokio::time::sleep(timeout).await;
                return Err(timed_out());
            }
            Delivery::Delay(d) => tokio::time::sleep(d.min(timeout)).await,
        }
        let left = timeout.saturating_sub(started.elapsed());
        let outbound = tokio::time::timeout(left, self.inner.outbound(to))
            .await
            .map_err(|_| timed_out())??;
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        outbound.pending.lock().insert(id, tx);
        let frame = request_frame(verb, id, body, session);
        if outbound.tx.send(frame).await.is_err() {
            outbound.pending.lock().remove(&id);
            return Err(Error::Unreachable {
                peer: to,
                message: "connection closed".into(),
            });
        }
        let left = timeout.saturating_sub(started.elapsed());
        match tokio::time::timeout(left, rx).await {
            Ok(Ok(Ok(body))) => {
                if let Some(t) = &trace {
                    let from = SocketAddr::new(to, self.inner.peer_port);
                    t.event(received_text(verb.response_trace_name(), from));
                }
                Ok(body)
            }
            Ok(Ok(Err(f))) => Err(Error::Remote {
                peer: to,
                verb: verb.name(),
                message: String::from_utf8_lossy(&f.body).into_owned(),
            }),
            Ok(Err(_)) => Err(Error::Unreachable {
                peer: to,
                message: "connection lost before the answer".into(),
            }),
            Err(_) => {
                outbound.pending.lock().remove(&id);
                Err(timed_out())
            }
        }
    }

    /// Hands a `verb` request to `to`'s connection now, without awaiting anything, when that
    /// can be done at once: the connection is open, no [`LinkFilter`] is set, its queue has
    /// room. Its answer is then the returned [`Answer`], to be awaited by the caller (with
    /// its own deadline) — no task per request, and the request leaves even if the caller
    /// stops waiting. `Err(body)` when it cannot be sent at once: use [`Messaging::request`].
    pub fn try_send(
        &self,
        to: IpAddr,
        verb: Verb,
        body: Bytes,
    ) -> std::result::Result<Answer, Bytes> {
        self.try_send_traced(to, verb, body, None)
    }

    /// [`Messaging::try_send`] for a traced client request, traced as
    /// [`Messaging::request_traced`] is (the answer's arrival recorded by the [`Answer`]).
    pub fn try_send_traced(
        &self,
        to: IpAddr,
        verb: Verb,
        body: Bytes,
        trace: Option<Trace>,
    ) -> std::result::Result<Answer, Bytes> {
        let session = trace.as_ref().and_then(Trace::session);
        let too_big = traced_len(&body, session) > self.inner.config.max_body;
        if too_big || self.inner.filter.lock().is_some() {
            return Err(body);
        }
        let Some(outbound) = self.inner.open_outbound(to) else {
            return Err(body);
        };
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        outbound.pending.lock().insert(id, tx);
        let body_len = body.len();
        let frame = request_frame(verb, id, body, session);
        if let Err(e) = outbound.tx.try_send(frame) {
            outbound.pending.lock().remove(&id);
            let frame = match e {
                mpsc::error::TrySendError::Full(f) | mpsc::error::TrySendError::Closed(f) => f,
            };
            // The caller's body, without the session id this put in front of it.
            let lead = if frame.flags & TRACED != 0 {
                SESSION_LEN
            } else {
                0
            };
            return Err(frame.body.slice(lead..));
        }
        if let Some(t) = &trace {
            t.event(self.sending_event(verb, to, body_len));
        }
        Ok(Answer {
            rx,
            pending: Arc::clone(&outbound.pending),
            id,
            peer: to,
            peer_port: self.inner.peer_port,
            verb,
            trace,
            done: false,
        })
    }

    /// Stops listening and closes the connections.
    pub fn shutdown(&self) {
        let _ = self.inner.shutdown.send(true);
        self.inner.peers.lock().clear();
    }
}

impl Drop for Messaging {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// "MUTATION_REQ message received from /10.0.0.1:7000": a traced message's arrival, a
/// request's at a replica or an answer's (`MUTATION_RSP`) back at its coordinator.
fn received_text(name: &str, from: SocketAddr) -> String {
    format!("{name} message received from /{from}")
}

/// The answer to a request sent with [`Messaging::try_send`]: the peer's answer, its error
/// (`Error::Remote`) or `Error::Unreachable` when the connection broke first. It never times
/// out by itself: the caller awaits it with its deadline. Dropped before the answer came,
/// it forgets the request (a late answer is then dropped, as after a timeout).
pub struct Answer {
    rx: oneshot::Receiver<std::result::Result<Bytes, Frame>>,
    pending: Arc<Pending>,
    id: u64,
    peer: IpAddr,
    peer_port: u16,
    verb: Verb,
    /// A traced request's trace: the answer's arrival is recorded in it.
    trace: Option<Trace>,
    done: bool,
}

impl Future for Answer {
    type Output = Result<Bytes>;
    fn poll(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<Bytes>> {
        let outcome = std::task::ready!(Pin::new(&mut self.rx).poll(cx));
        self.done = true;
        std::task::Poll::Ready(match outcome {
            Ok(Ok(body)) => {
                if let Some(t) = &self.trace {
                    let from = SocketAddr::new(self.peer, self.peer_port);
                    t.event(received_text(self.verb.response_trace_name(), from));
                }
                Ok(body)
            }
            Ok(Err(f)) => Err(Error::Remote {
                peer: self.peer,
                verb: self.verb.name(),
                message: String::from_utf8_lossy(&f.body).into_owned(),
            }),
            Err(_) => Err(Error::Unreachable {
                peer: self.peer,
                message: "connection lost before the answer".into(),
            }),
        })
    }
}

impl Drop for Answer {
    fn drop(&mut self) {
        if !self.done {
            self.pending.lock().remove(&self.id);
        }
    }
}

impl Inner {
    /// The open connection to `to`, if there is one and no one is opening it now.
    fn open_outbound(&self, to: IpAddr) -> Option<Arc<Outbound>> {
        let slot = Arc::clone(self.peers.lock().get(&to)?);
        let guard = slot.try_lock().ok()?;
        guard
            .as_ref()
            .filter(|o| !o.closed.load(Ordering::Acquire))
            .cloned()
    }

    /// The open connection to `to`, connecting if there is none.
    async fn outbound(self: &Arc<Self>, to: IpAddr) -> Result<Arc<Outbound>> {
        let slot = Arc::clone(self.peers.lock().entry(to).or_default());
        let mut slot = slot.lock().await;
        if let Some(o) = slot.as_ref() {
            if !o.closed.load(Ordering::Acquire) {
                return Ok(Arc::clone(o));
            }
        }
        let o = Arc::new(self.connect(to).await?);
        *slot = Some(Arc::clone(&o));
        Ok(o)
    }

    /// Opens a connection to `to` from this node's own address and says `HELLO`.
    async fn connect(&self, to: IpAddr) -> Result<Outbound> {
        let unreachable = |message: String| Error::Unreachable { peer: to, message };
        let socket = match to {
            IpAddr::V4(_) => TcpSocket::new_v4(),
            IpAddr::V6(_) => TcpSocket::new_v6(),
        }
        .map_err(|e| unreachable(e.to_string()))?;
        socket
            .bind(SocketAddr::new(self.config.listen, 0))
            .map_err(|e| unreachable(format!("cannot bind to {}: {e}", self.config.listen)))?;
        let stream = tokio::time::timeout(
            self.config.connect_timeout,
            socket.connect(SocketAddr::new(to, self.peer_port)),
        )
        .await
        .map_err(|_| unreachable("connection timed out".into()))?
        .map_err(|e| unreachable(e.to_string()))?;
        let _ = stream.set_nodelay(true);
        let connector = self
            .config
            .tls
            .as_ref()
            .filter(|tls| tls.should_encrypt(self.location(to).as_ref()))
            .and_then(|tls| tls.connector.as_ref());
        let encrypted = connector.is_some();
        let (mut rd, mut wr): (Reader, Writer) = match connector {
            Some(connector) => {
                let name = rustls::pki_types::ServerName::IpAddress(to.into());
                let handshake = tokio::time::timeout(
                    self.config.connect_timeout,
                    connector.connect(name, stream),
                )
                .await;
                match handshake {
                    Ok(Ok(s)) => {
                        self.metrics.tls_connections.fetch_add(1, Ordering::Relaxed);
                        let (rd, wr) = tokio::io::split(s);
                        (Box::new(rd), Box::new(wr))
                    }
                    Ok(Err(e)) => return Err(unreachable(self.handshake_failed(to, e))),
                    Err(_) => {
                        return Err(unreachable(
                            self.handshake_failed(to, "no TLS handshake in time"),
                        ))
                    }
                }
            }
            None => {
                let (rd, wr) = stream.into_split();
                (Box::new(rd), Box::new(wr))
            }
        };
        let mut out = BytesMut::new();
        Frame {
            verb: Verb::Hello.code(),
            flags: 0,
            id: 0,
            body: Bytes::from(self.config.cluster_name.clone()),
        }
        .encode(&mut out);
        send(&mut wr, &out)
            .await
            .map_err(|e| unreachable(e.to_string()))?;
        let mut buf = BytesMut::with_capacity(4096);
        let hello = tokio::time::timeout(
            self.config.connect_timeout,
            read_frame(&mut rd, &mut buf, self.config.max_body),
        )
        .await
        .map_err(|_| unreachable("no HELLO answer".into()))?
        // Over TLS 1.3 the peer checks this node's certificate after the handshake has
        // ended here: its refusal (an alert) arrives as the HELLO answer's read error.
        .map_err(|e| match encrypted {
            true => unreachable(self.handshake_failed(to, e)),
            false => unreachable(e),
        })?
        .ok_or_else(|| unreachable("closed during HELLO".into()))?;
        if hello.flags & ERROR != 0 {
            return Err(unreachable(
                String::from_utf8_lossy(&hello.body).into_owned(),
            ));
        }
        let pending: Arc<Pending> = Arc::new(Mutex::new(HashMap::new()));
        let closed = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel(1024);
        tokio::spawn(write_loop(wr, rx, Arc::clone(&closed)));
        tokio::spawn(read_responses(
            rd,
            buf,
            Arc::clone(&pending),
            Arc::clone(&closed),
            self.config.max_body,
            to,
        ));
        Ok(Outbound {
            tx,
            pending,
            closed,
        })
    }
}

impl Inner {
    /// Where `peer` is, if the node has told messaging.
    fn location(&self, peer: IpAddr) -> Option<crate::snitch::Location> {
        let locations = self.locations.lock().clone();
        locations.and_then(|l| l.location(peer))
    }

    /// Counts and logs (rate-limited) a TLS failure with `peer`; returns its text.
    fn handshake_failed(&self, peer: IpAddr, why: impl std::fmt::Display) -> String {
        self.metrics
            .tls_handshake_failures
            .fetch_add(1, Ordering::Relaxed);
        let text = format!("TLS with node {peer} failed: {why}");
        let now = tokio::time::Instant::now();
        let loud = {
            let mut logged = self.failures_logged.lock();
            let due = logged
                .get(&peer)
                .is_none_or(|at| now.duration_since(*at) >= FAILURE_LOG_INTERVAL);
            if due {
                // Bounded whatever connects: forgetting costs at most one more warning each.
                if logged.len() >= 4096 {
                    logged.clear();
                }
                logged.insert(peer, now);
            }
            due
        };
        if loud {
            tracing::warn!(%peer, "{text} (server_encryption_options)");
        } else {
            tracing::debug!(%peer, "{text}");
        }
        text
    }

    /// Starts an incoming connection from `from`: over TLS if it opens with a handshake;
    /// otherwise in plaintext, with the text to refuse it with when TLS is required of it.
    async fn open_inbound(
        &self,
        stream: TcpStream,
        from: IpAddr,
    ) -> Option<(Reader, Writer, Option<String>)> {
        let Some(tls) = &self.config.tls else {
            let (rd, wr) = stream.into_split();
            return Some((Box::new(rd), Box::new(wr), None));
        };
        let timeout = self.config.connect_timeout;
        let mut first = [0u8; 1];
        match tokio::time::timeout(timeout, stream.peek(&mut first)).await {
            Ok(Ok(1..)) => {}
            _ => return None,
        }
        if first[0] == TLS_HANDSHAKE {
            return match tokio::time::timeout(timeout, tls.acceptor.accept(stream)).await {
                Ok(Ok(s)) => {
                    self.metrics.tls_connections.fetch_add(1, Ordering::Relaxed);
                    let (rd, wr) = tokio::io::split(s);
                    Some((Box::new(rd), Box::new(wr), None))
                }
                Ok(Err(e)) => {
                    self.handshake_failed(from, e);
                    None
                }
                Err(_) => {
                    self.handshake_failed(from, "no TLS handshake in time");
                    None
                }
            };
        }
        let refuse = (!tls.accept_plaintext && tls.should_encrypt(self.location(from).as_ref()))
            .then(|| {
                let text = format!(
                    "node {} requires TLS from {from} (server_encryption_options:                      internode_encryption: {})",
                    self.config.listen,
                    tls.encryption.name()
                );
                self.handshake_failed(from, "it connected in plaintext");
                text
            });
        let (rd, wr) = stream.into_split();
        Some((Box::new(rd), Box::new(wr), refuse))
    }
}

/// Writes `bytes` and flushes them (a TLS stream holds records back until flushed).
async fn send(wr: &mut Writer, bytes: &[u8]) -> std::io::Result<()> {
    wr.write_all(bytes).await?;
    wr.flush().await
}

/// Reads one frame: `Ok(None)` at a clean end of stream.
async fn read_frame(
    rd: &mut Reader,
    buf: &mut BytesMut,
    max_body: usize,
) -> std::result::Result<Option<Frame>, String> {
    loop {
        if let Some(f) = Frame::decode(buf, max_body)? {
            return Ok(Some(f));
        }
        buf.reserve(4096);
        match rd.read_buf(buf).await {
            Ok(0) => return Ok(None),
            Ok(_) => {}
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Writes the frames `rx` brings, several per socket write when they queue up.
async fn write_loop(mut wr: Writer, mut rx: mpsc::Receiver<Frame>, closed: Arc<AtomicBool>) {
    let mut out = BytesMut::with_capacity(16 * 1024);
    while let Some(f) = rx.recv().await {
        f.encode(&mut out);
        // The tasks that produce frames (handlers answering, requests being sent) are often
        // woken together — by one read that brought many frames — and the wake-up of this
        // task puts it first in line. Letting them run before writing puts their frames in
        // the same `sendto`: on loopback a send costs the receiver's processing too, and
        // without this a busy node made about five sends per QUORUM write.
        tokio::task::yield_now().await;
        while out.len() < 256 * 1024 {
            match rx.try_recv() {
                Ok(f) => f.encode(&mut out),
                Err(_) => break,
            }
        }
        if send(&mut wr, &out).await.is_err() {
            break;
        }
        out.clear();
    }
    closed.store(true, Ordering::Release);
}

/// Completes the requests of an outgoing connection as their answers arrive; when the
/// connection ends, fails every request still waiting.
async fn read_responses(
    mut rd: Reader,
    mut buf: BytesMut,
    pending: Arc<Pending>,
    closed: Arc<AtomicBool>,
    max_body: usize,
    peer: IpAddr,
) {
    loop {
        match read_frame(&mut rd, &mut buf, max_body).await {
            Ok(Some(f)) if f.flags & RESPONSE != 0 => {
                if let Some(tx) = pending.lock().remove(&f.id) {
                    let _ = tx.send(if f.flags & ERROR != 0 {
                        Err(f)
                    } else {
                        Ok(f.body)
                    });
                }
            }
            Ok(Some(_)) => {
                tracing::debug!(%peer, "a request on an outgoing connection: closing it");
                break;
            }
            Ok(None) => break,
            Err(e) => {
                tracing::debug!(%peer, "closing the connection: {e}");
                break;
            }
        }
    }
    closed.store(true, Ordering::Release);
    // Dropping the senders fails the waiting requests ("connection lost").
    pending.lock().clear();
}

async fn accept_loop(listener: TcpListener, inner: Arc<Inner>, mut stop: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, from)) => {
                    tokio::spawn(serve_inbound(stream, from.ip(), Arc::clone(&inner), stop.clone()));
                }
                Err(e) => {
                    tracing::warn!("accepting a node connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            _ = stop.changed() => return,
        }
    }
}

/// Serves the requests of one incoming connection from node `from`.
async fn serve_inbound(
    stream: TcpStream,
    from: IpAddr,
    inner: Arc<Inner>,
    mut stop: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let Some((mut rd, wr, refuse)) = inner.open_inbound(stream, from).await else {
        return;
    };
    let (tx, rx) = mpsc::channel::<Frame>(1024);
    let closed = Arc::new(AtomicBool::new(false));
    tokio::spawn(write_loop(wr, rx, Arc::clone(&closed)));
    let mut buf = BytesMut::with_capacity(4096);
    let max_body = inner.config.max_body;
    // HELLO first: a node of this cluster.
    let hello = tokio::time::timeout(
        inner.config.connect_timeout,
        read_frame(&mut rd, &mut buf, max_body),
    )
    .await;
    let Ok(Ok(Some(hello))) = hello else {
        tracing::debug!(%from, "a node connection without HELLO: closed");
        return;
    };
    if let Some(text) = refuse {
        let _ = tx
            .send(Frame {
                verb: Verb::Hello.code(),
                flags: RESPONSE | ERROR,
                id: hello.id,
                body: Bytes::from(text),
            })
            .await;
        return;
    }
    let theirs = String::from_utf8_lossy(&hello.body).into_owned();
    if hello.verb != Verb::Hello.code() || theirs != inner.config.cluster_name {
        tracing::warn!(
            %from,
            "refusing a node of cluster {theirs:?}: this node is in {:?}",
            inner.config.cluster_name
        );
        let _ = tx
            .send(Frame {
                verb: Verb::Hello.code(),
                flags: RESPONSE | ERROR,
                id: hello.id,
                body: Bytes::from(format!(
                    "ClusterName mismatch: {:?} != {:?}",
                    theirs, inner.config.cluster_name
                )),
            })
            .await;
        return;
    }
    let answer = Frame {
        verb: Verb::Hello.code(),
        flags: RESPONSE,
        id: hello.id,
        body: Bytes::from(inner.config.cluster_name.clone()),
    };
    if tx.send(answer).await.is_err() {
        return;
    }
    loop {
        let frame = tokio::select! {
            f = read_frame(&mut rd, &mut buf, max_body) => f,
            _ = stop.changed() => return,
        };
        let f = match frame {
            Ok(Some(f)) if f.flags & RESPONSE == 0 => f,
            Ok(Some(_)) => {
                tracing::debug!(%from, "a response on an incoming connection: closing it");
                return;
            }
            Ok(None) => return,
            Err(e) => {
                tracing::debug!(%from, "closing the connection: {e}");
                return;
            }
        };
        let handler = Verb::from_code(f.verb).and_then(|v| inner.handlers.lock().get(&v).cloned());
        let (verb, id) = (f.verb, f.id);
        let (session, body) = match f.flags & TRACED {
            0 => (None, f.body),
            _ => split_session(f.body),
        };
        let mut answer: HandlerFuture = match handler {
            Some(h) => h(from, body, session),
            None => {
                Box::pin(async move { Err::<Bytes, String>(format!("no handler for verb {verb}")) })
            }
        };
        // Most handlers finish in their first poll (a mutation applied to memtables, a read
        // from memory): polled here, on the connection's task, they cost no task of their
        // own — a spawn and a wake-up per message were a large share of a replica's CPU.
        // A handler that must wait (it handed work to the blocking pool) is moved to its own
        // task, which polls it again with a real waker; the no-op waker's wake-up is not
        // needed since that first poll of the task re-registers.
        match poll_once(&mut answer) {
            Some(result) => {
                if tx.send(response(verb, id, result, max_body)).await.is_err() {
                    return;
                }
            }
            None => {
                let tx = tx.clone();
                tokio::spawn(async move {
                    let result = CatchPanic(answer).await;
                    let _ = tx.send(response(verb, id, result, max_body)).await;
                });
            }
        }
    }
}

/// A request's frame: its body led by the tracing session's id when it has one.
fn request_frame(verb: Verb, id: u64, body: Bytes, session: Option<SessionId>) -> Frame {
    let (flags, body) = match session {
        None => (0, body),
        Some(s) => {
            let mut traced = BytesMut::with_capacity(SESSION_LEN + body.len());
            traced.extend_from_slice(&s);
            traced.extend_from_slice(&body);
            (TRACED, traced.freeze())
        }
    };
    Frame {
        verb: verb.code(),
        flags,
        id,
        body,
    }
}

/// The length of a request's frame body: its body, and its session id when traced.
fn traced_len(body: &Bytes, session: Option<SessionId>) -> usize {
    body.len() + session.map_or(0, |_| SESSION_LEN)
}

/// A traced request's session id and its own body (`Frame::decode` checked the length).
fn split_session(mut body: Bytes) -> (Option<SessionId>, Bytes) {
    let rest = body.split_off(SESSION_LEN.min(body.len()));
    (<SessionId>::try_from(body.as_ref()).ok(), rest)
}

/// Polls a handler's answer once without a task of its own: `Some` when it finished (a
/// panicking handler answers with an error, as a spawned one's lost task would fail the
/// caller's request), `None` when it must wait.
fn poll_once(answer: &mut HandlerFuture) -> Option<std::result::Result<Bytes, String>> {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        answer.as_mut().poll(&mut cx)
    })) {
        Ok(std::task::Poll::Ready(r)) => Some(r),
        Ok(std::task::Poll::Pending) => None,
        Err(_) => Some(Err(HANDLER_PANICKED.into())),
    }
}

const HANDLER_PANICKED: &str = "the request's handler failed (panicked)";

/// A handler's answer awaited on its own task, a panic turned into an error answer.
struct CatchPanic(HandlerFuture);

impl Future for CatchPanic {
    type Output = std::result::Result<Bytes, String>;
    fn poll(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let answer = self.0.as_mut();
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| answer.poll(cx))) {
            Ok(p) => p,
            Err(_) => std::task::Poll::Ready(Err(HANDLER_PANICKED.into())),
        }
    }
}

/// The response frame to request `id` of `verb`.
fn response(
    verb: u8,
    id: u64,
    result: std::result::Result<Bytes, String>,
    max_body: usize,
) -> Frame {
    let (flags, body) = match result {
        Ok(body) if body.len() > max_body => (
            RESPONSE | ERROR,
            Bytes::from(format!("an answer of {} bytes, over the limit", body.len())),
        ),
        Ok(body) => (RESPONSE, body),
        Err(text) => (RESPONSE | ERROR, Bytes::from(text)),
    };
    Frame {
        verb,
        flags,
        id,
        body,
    }
}
