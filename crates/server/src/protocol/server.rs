//! The native-protocol TCP server: the accept loop that starts one [`connection`] task per
//! client with the state they share ([`super::shared`]) and the [`Handler`] the CQL executor
//! implements ([`super::handler`]).
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
//! * With TLS, the handshake runs on the connection's task within
//!   [`ServerConfig::handshake_timeout`]; the accept loop never waits for a client.

use super::connection;
use super::handler::Handler;
use super::shared::{EventBus, ServerConfig, ServerStats, Shared};
use super::transport::{self, Opened};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::net::{TcpListener, TcpStream, ToSocketAddrs};
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinHandle;

/// A running server. Dropping it does not stop it; call [`Server::shutdown`].
pub struct Server {
    local_addr: SocketAddr,
    events: EventBus,
    stats: Arc<ServerStats>,
    shutdown: Arc<watch::Sender<bool>>,
    accept: JoinHandle<()>,
}

/// Stops a server's listener and connections from anywhere (any thread, no runtime needed),
/// leaving the process running: what a failure policy's "stop transports" does.
#[derive(Clone)]
pub struct StopHandle(Arc<watch::Sender<bool>>);

impl StopHandle {
    /// Stops accepting and closes every connection; the port is released.
    pub fn stop(&self) {
        let _ = self.0.send(true);
    }

    /// Whether the server was stopped.
    pub fn is_stopped(&self) -> bool {
        *self.0.borrow()
    }
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
            shutdown: Arc::new(shutdown),
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

    /// A handle that stops the server without awaiting it (see [`StopHandle`]).
    pub fn stop_handle(&self) -> StopHandle {
        StopHandle(Arc::clone(&self.shutdown))
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
            _ = shutdown.changed() => {
                tracing::info!("CQL native protocol stopped listening");
                break;
            }
            accepted = listener.accept() => match accepted {
                Ok((socket, peer)) => {
                    let _ = socket.set_nodelay(true);
                    shared.stats.connections_accepted.fetch_add(1, Ordering::Relaxed);
                    let shared = shared.clone();
                    let shutdown = shutdown.clone();
                    crate::stall::spawn(crate::stall::TaskKind::CqlConnection, async move {
                        shared.stats.connections_open.fetch_add(1, Ordering::Relaxed);
                        start_connection(socket, peer, shared.clone(), shutdown).await;
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

/// Runs one accepted socket: starts it (TLS handshake if the port has TLS, bounded by the
/// handshake timeout), then serves it; a connection that fails to start is logged at debug
/// and counted.
async fn start_connection<H: Handler>(
    socket: TcpStream,
    peer: SocketAddr,
    shared: Arc<Shared<H>>,
    shutdown: watch::Receiver<bool>,
) {
    let local = socket
        .local_addr()
        .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
    let timeout = shared.config.handshake_timeout;
    match transport::open(socket, shared.config.tls.as_ref(), timeout).await {
        Ok(Opened::Plain(s)) => connection::serve(s, peer, local, shared, shutdown).await,
        Ok(Opened::Tls(s)) => {
            shared.stats.tls_connections.fetch_add(1, Ordering::Relaxed);
            connection::serve(*s, peer, local, shared, shutdown).await
        }
        Err(e) => {
            shared
                .stats
                .tls_handshake_failures
                .fetch_add(1, Ordering::Relaxed);
            tracing::debug!(peer = %peer, "closing connection: {e}");
        }
    }
}
