//! The native-protocol TCP server: configuration, the [`Handler`] trait the CQL executor
//! implements, the [`EventBus`] it publishes events on, and the accept loop.
//!
//! Invariants:
//! * One tokio task per connection; it reads, runs what [`Handler::handle_inline`] accepts,
//!   and writes. One more task per statement that must run elsewhere. Nothing here blocks
//!   a reactor thread: compressing or decompressing a body larger than
//!   [`ServerConfig::blocking_threshold`] runs on the blocking pool, and handlers must
//!   likewise move blocking work off the reactor.
//! * In-flight work is bounded three ways — requests per connection, requests in total,
//!   and request bytes in total. A statement that would exceed any bound is answered at
//!   once with OVERLOADED (0x1001) on its stream; nothing queues without bound. Responses
//!   waiting for the socket hold their permits, so a client that stops reading is bounded
//!   too (and is then not read from: TCP backpressure).
//! * A panicking handler costs one SERVER_ERROR response, never the connection or server.

use super::compression::Compression;
use super::connection;
use super::frame::DEFAULT_MAX_FRAME_SIZE;
use super::message::{Event, Reply, Request, Startup};
use bytes::Bytes;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::sync::{broadcast, watch, Semaphore};
use tokio::task::JoinHandle;

/// Server limits and advertised options.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Largest accepted frame body, compressed or not (Cassandra's
    /// `native_transport_max_frame_size`, 256 MiB by default).
    pub max_frame_size: usize,
    /// Statement requests one connection may have in flight.
    pub max_in_flight_per_connection: usize,
    /// Statement requests all connections together may have in flight.
    pub max_in_flight_total: usize,
    /// Request body bytes all in-flight statements together may hold.
    pub max_in_flight_bytes: usize,
    /// Advertised in SUPPORTED as `CQL_VERSION`; `system.local.cql_version` should agree.
    pub cql_version: String,
    /// Bodies above this size are (de)compressed on the blocking pool.
    pub blocking_threshold: usize,
    /// Events buffered per subscriber before a slow connection starts missing them.
    pub event_capacity: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_frame_size: DEFAULT_MAX_FRAME_SIZE,
            max_in_flight_per_connection: 2048,
            max_in_flight_total: 32 * 1024,
            max_in_flight_bytes: 512 * 1024 * 1024,
            cql_version: "3.4.5".to_string(),
            blocking_threshold: 256 * 1024,
            event_capacity: 1024,
        }
    }
}

/// What is known about a connection once STARTUP has been received.
#[derive(Debug, Clone)]
pub struct ConnectionInfo {
    /// Unique within this server process.
    pub id: u64,
    pub peer: SocketAddr,
    pub local: SocketAddr,
    /// Negotiated protocol version (3 or 4).
    pub version: u8,
    /// Negotiated frame compression.
    pub compression: Option<Compression>,
    /// The STARTUP options (`DRIVER_NAME`, `DRIVER_VERSION`, …).
    pub startup: Startup,
}

/// Per-request context passed to [`Handler::handle`].
#[derive(Debug)]
pub struct RequestContext<S> {
    /// The connection's session state (current keyspace, authenticated user, …).
    pub session: Arc<S>,
    pub connection: Arc<ConnectionInfo>,
    pub stream: i16,
    /// The client asked for tracing.
    pub tracing: bool,
    /// The request's custom payload (v4 flag 0x04), if any.
    pub custom_payload: Option<Vec<(String, Option<Bytes>)>>,
}

/// The statement-level request handler (the CQL executor implements it).
///
/// The server answers OPTIONS, STARTUP and REGISTER itself and passes QUERY, PREPARE,
/// EXECUTE, BATCH and AUTH_RESPONSE to [`Handler::handle`]. Requests of one connection are
/// handled concurrently; their replies may complete in any order.
pub trait Handler: Send + Sync + 'static {
    /// Per-connection state, created when STARTUP arrives.
    type Session: Send + Sync + 'static;

    /// Creates the session of a connection that sent STARTUP.
    fn new_session(&self, info: &ConnectionInfo) -> Self::Session;

    /// `Some(class name)` when clients must authenticate: STARTUP is then answered with
    /// AUTHENTICATE and only AUTH_RESPONSE is accepted until the handler answers one with
    /// `Response::AuthSuccess`.
    fn authenticator(&self) -> Option<String> {
        None
    }

    /// Handles one request. Must not block the calling thread: move blocking or CPU-heavy
    /// work to `tokio::task::spawn_blocking` or a dedicated pool.
    fn handle(
        &self,
        request: Request,
        ctx: RequestContext<Self::Session>,
    ) -> impl Future<Output = Reply> + Send;

    /// Handles a QUERY, PREPARE, EXECUTE or BATCH on the calling thread — a reactor thread
    /// — if it can finish without waiting; `None` when it cannot (nothing changed then), and
    /// the server passes it to [`Handler::handle`]. Inline requests skip every hand-off
    /// between threads; their replies leave with the connection's next socket write.
    /// The default runs nothing inline.
    fn handle_inline(
        &self,
        _request: Request,
        _ctx: RequestContext<Self::Session>,
    ) -> Option<Reply> {
        None
    }

    /// Called once when a connection that had a session closes.
    fn connection_closed(&self, _session: &Self::Session) {}
}

/// Publishes server events to the connections registered for their type.
#[derive(Debug, Clone)]
pub struct EventBus {
    tx: broadcast::Sender<Arc<Event>>,
}

impl EventBus {
    /// A bus buffering `capacity` events per subscriber.
    pub fn new(capacity: usize) -> Self {
        let (tx, _) = broadcast::channel(capacity.max(1));
        EventBus { tx }
    }

    /// Sends `event` to every connection registered for its type; returns the number of
    /// connections subscribed to events at all.
    pub fn publish(&self, event: Event) -> usize {
        self.tx.send(Arc::new(event)).unwrap_or(0)
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.tx.subscribe()
    }
}

/// Counters of the server's activity.
#[derive(Debug, Default)]
pub struct ServerStats {
    pub(crate) connections_accepted: AtomicU64,
    pub(crate) connections_open: AtomicU64,
    pub(crate) requests: AtomicU64,
    pub(crate) overloaded: AtomicU64,
    pub(crate) protocol_errors: AtomicU64,
    pub(crate) inline: AtomicU64,
    pub(crate) spawned: AtomicU64,
}

impl ServerStats {
    pub fn connections_accepted(&self) -> u64 {
        self.connections_accepted.load(Ordering::Relaxed)
    }
    pub fn connections_open(&self) -> u64 {
        self.connections_open.load(Ordering::Relaxed)
    }
    /// Frames received with a valid header.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
    /// Requests answered with OVERLOADED.
    pub fn overloaded(&self) -> u64 {
        self.overloaded.load(Ordering::Relaxed)
    }
    /// PROTOCOL_ERROR responses sent.
    pub fn protocol_errors(&self) -> u64 {
        self.protocol_errors.load(Ordering::Relaxed)
    }
    /// Statements answered inline, on the connection's reactor thread.
    pub fn inline(&self) -> u64 {
        self.inline.load(Ordering::Relaxed)
    }
    /// Statements the handler declined inline, run by a task of their own.
    pub fn spawned(&self) -> u64 {
        self.spawned.load(Ordering::Relaxed)
    }
}

/// State shared by all connections of a server.
pub(crate) struct Shared<H> {
    pub(crate) config: ServerConfig,
    pub(crate) handler: Arc<H>,
    pub(crate) events: EventBus,
    pub(crate) stats: Arc<ServerStats>,
    pub(crate) in_flight: Arc<Semaphore>,
    pub(crate) in_flight_bytes: Arc<Semaphore>,
    pub(crate) next_connection_id: AtomicU64,
}

/// A running server. Dropping it does not stop it; call [`Server::shutdown`].
pub struct Server {
    local_addr: SocketAddr,
    events: EventBus,
    stats: Arc<ServerStats>,
    shutdown: watch::Sender<bool>,
    accept: JoinHandle<()>,
}

impl Server {
    /// Binds `addr` and starts serving with a fresh [`EventBus`].
    pub async fn bind<H: Handler>(
        addr: impl ToSocketAddrs,
        config: ServerConfig,
        handler: H,
    ) -> std::io::Result<Server> {
        let events = EventBus::new(config.event_capacity);
        Self::bind_with_events(addr, config, handler, events).await
    }

    /// Binds `addr` and starts serving, publishing `events` (a bus the handler may hold).
    pub async fn bind_with_events<H: Handler>(
        addr: impl ToSocketAddrs,
        config: ServerConfig,
        handler: H,
        events: EventBus,
    ) -> std::io::Result<Server> {
        let listener = TcpListener::bind(addr).await?;
        let local_addr = listener.local_addr()?;
        let stats = Arc::new(ServerStats::default());
        let shared = Arc::new(Shared {
            in_flight: Arc::new(Semaphore::new(
                config.max_in_flight_total.clamp(1, Semaphore::MAX_PERMITS),
            )),
            in_flight_bytes: Arc::new(Semaphore::new(
                config.max_in_flight_bytes.clamp(1, Semaphore::MAX_PERMITS),
            )),
            config,
            handler: Arc::new(handler),
            events: events.clone(),
            stats: stats.clone(),
            next_connection_id: AtomicU64::new(1),
        });
        let (shutdown, shutdown_rx) = watch::channel(false);
        let accept = crate::stall::spawn(
            crate::stall::TaskKind::CqlAccept,
            accept_loop(listener, shared, shutdown_rx),
        );
        tracing::info!("CQL native protocol listening on {local_addr}");
        Ok(Server {
            local_addr,
            events,
            stats,
            shutdown,
            accept,
        })
    }

    /// The bound address (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The bus events are published on.
    pub fn events(&self) -> &EventBus {
        &self.events
    }

    pub fn stats(&self) -> &Arc<ServerStats> {
        &self.stats
    }

    /// Stops accepting and closes every connection (in-flight requests complete but their
    /// responses may not be delivered).
    pub async fn shutdown(self) {
        let _ = self.shutdown.send(true);
        let _ = self.accept.await;
    }
}

async fn accept_loop<H: Handler>(
    listener: TcpListener,
    shared: Arc<Shared<H>>,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            _ = shutdown.changed() => break,
            accepted = listener.accept() => match accepted {
                Ok((socket, peer)) => {
                    let _ = socket.set_nodelay(true);
                    shared.stats.connections_accepted.fetch_add(1, Ordering::Relaxed);
                    let shared = shared.clone();
                    let shutdown = shutdown.clone();
                    crate::stall::spawn(crate::stall::TaskKind::CqlConnection, async move {
                        shared.stats.connections_open.fetch_add(1, Ordering::Relaxed);
                        connection::serve(socket, peer, shared.clone(), shutdown).await;
                        shared.stats.connections_open.fetch_sub(1, Ordering::Relaxed);
                    });
                }
                Err(e) => {
                    // EMFILE and friends: back off instead of spinning.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            }
        }
    }
}
