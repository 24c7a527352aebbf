//! What every connection of one server shares: its configuration and limits
//! ([`ServerConfig`], with its [`Tls`]), the [`EventBus`] events are published on, the
//! [`ServerStats`] counters, and the in-flight permits that bound requests and request bytes
//! in total.

use super::frame::DEFAULT_MAX_FRAME_SIZE;
use super::message::Event;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, Semaphore};

/// TLS on the port: the acceptor (certificates, protocols, client authentication), and
/// whether plaintext clients are refused.
#[derive(Clone)]
pub struct Tls {
    pub acceptor: tokio_rustls::TlsAcceptor,
    /// True: TLS only. False: TLS and plaintext, told apart by the client's first byte.
    pub required: bool,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls")
            .field("required", &self.required)
            .finish_non_exhaustive()
    }
}

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
    /// TLS, if the port speaks it.
    pub tls: Option<Tls>,
    /// How long a client may take to start a connection: to send its first byte and, with
    /// TLS, to complete the handshake (netty's `SslHandler` default, 10 s).
    pub handshake_timeout: Duration,
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
            tls: None,
            handshake_timeout: Duration::from_secs(10),
        }
    }
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
    pub(crate) tls_connections: AtomicU64,
    pub(crate) tls_handshake_failures: AtomicU64,
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
    /// Connections that completed a TLS handshake.
    pub fn tls_connections(&self) -> u64 {
        self.tls_connections.load(Ordering::Relaxed)
    }
    /// Connections closed before they started: a failed or timed-out TLS handshake, a
    /// plaintext client where TLS is required, or silence past the handshake timeout.
    pub fn tls_handshake_failures(&self) -> u64 {
        self.tls_handshake_failures.load(Ordering::Relaxed)
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
