//! What the native-protocol server asks of the statement layer: the [`Handler`] trait the CQL
//! executor implements, with the [`ConnectionInfo`] (and its [`TlsInfo`]) and
//! [`RequestContext`] it is handed.
//!
//! Handlers run on the reactor when they accept [`Handler::handle_inline`], so they must
//! move blocking work off it; a panicking handler costs one SERVER_ERROR response, never the
//! connection.

use super::compression::Compression;
use super::message::{Reply, Request, Startup};
use bytes::Bytes;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

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
    /// The TLS session, if the connection is encrypted (Cassandra's `ssl_enabled`).
    pub tls: Option<TlsInfo>,
}

/// What Cassandra's `system_views.clients` shows of a TLS connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TlsInfo {
    /// `ssl_protocol`: `TLSv1.3` or `TLSv1.2`.
    pub protocol: &'static str,
    /// `ssl_cipher_suite`, by its JSSE name (`TLS_AES_256_GCM_SHA384`).
    pub cipher_suite: &'static str,
}

/// What [`Handler::start_inline`] did with a request.
pub enum Inline {
    /// Answered on the calling thread.
    Done(Reply),
    /// Not run, nothing changed: the server passes it to [`Handler::handle`].
    Declined,
    /// Started on the calling thread; its reply is this future's, awaited on a task.
    Started(Pin<Box<dyn Future<Output = Reply> + Send>>),
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

    /// Whether [`Handler::start_inline`] may start requests on the calling thread and hand
    /// back the rest as a future: the server then takes a request's in-flight permits before
    /// offering it (the default: no, only [`Handler::handle_inline`] is used).
    fn starts_inline(&self) -> bool {
        false
    }

    /// [`Handler::handle_inline`] for a handler that [`Handler::starts_inline`], called when
    /// the server holds the request's in-flight permits: besides answering or declining, it
    /// may start the request here — what cannot wait done, e.g. a write applied locally and
    /// sent to other nodes — and hand back the rest ([`Inline::Started`]: waiting for the
    /// other nodes), which the server awaits on the statement's task without running the
    /// request again.
    fn start_inline(&self, request: Request, ctx: RequestContext<Self::Session>) -> Inline {
        match self.handle_inline(request, ctx) {
            Some(reply) => Inline::Done(reply),
            None => Inline::Declined,
        }
    }

    /// Called once when a connection that had a session closes.
    fn connection_closed(&self, _session: &Self::Session) {}
}
