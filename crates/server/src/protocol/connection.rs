//! One client connection, over TCP or TLS once started ([`super::transport`]): a single task
//! that reads frames, runs what it can inline, and writes the replies; plus one task per
//! statement that must run elsewhere.
//!
//! The loop: split every complete frame off the input; answer OPTIONS / STARTUP / REGISTER
//! itself and await AUTH_RESPONSE inline (the client waits for it anyway); offer each QUERY /
//! PREPARE / EXECUTE / BATCH to [`Handler::handle_inline`], and spawn a task for those it
//! declines (to [`Handler::start_inline`], with the statement's in-flight permits taken, when
//! the handler [`Handler::starts_inline`]: what it started and must wait for goes on in a
//! task holding them). Replies — inline ones, and those the spawned tasks have queued on the
//! connection's bounded channel by then — are gathered into one buffer and written with one
//! socket write; then the task waits for more input, a queued reply or an event (stream -1,
//! for registered types). Requests that arrive together thus cost one read and one write,
//! and an inline request never changes thread.
//!
//! Invariants:
//! * State machine as in Cassandra: before STARTUP only OPTIONS and STARTUP are accepted;
//!   while authenticating only AUTH_RESPONSE; after it everything but STARTUP. A request
//!   out of place gets a PROTOCOL_ERROR on its stream and the connection stays open.
//! * The first frame fixes the protocol version; a frame in another version, an
//!   unsupported version, an oversized frame or a response frame is answered with a
//!   PROTOCOL_ERROR and the connection is closed (the byte stream can no longer be
//!   trusted). Before closing, unread input is drained briefly so the error frame is not
//!   lost to a TCP reset.
//! * A body that fails to decode or decompress is a PROTOCOL_ERROR on its stream; framing
//!   is intact, so the connection stays open.
//! * Input is read only after the previous replies are written, so a client that does not
//!   read its replies is not read from (TCP backpressure). Spawned statements hold their
//!   in-flight permits until their reply is written; the channel is bounded.
//! * [`Handler::handle_inline`] runs on the reactor: handlers accept only work that cannot
//!   wait (the CQL handler runs it with `Wait::Never`, see `cairn_engine::io::Wait`).

use super::compression::{Compression, SUPPORTED_COMPRESSIONS};
use super::frame::{flags, protocol_error_frame, Frame, FrameDecoder, Opcode};
use super::handler::{ConnectionInfo, Handler, Inline, RequestContext};
use super::message::{CqlError, EventType, Reply, Request, RequestFrame, Response, Startup};
use super::shared::Shared;
use super::transport::Transport;
use bytes::{Bytes, BytesMut};
use std::future::Future;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{broadcast, mpsc, watch, OwnedSemaphorePermit, Semaphore};

/// Message Cassandra sends when it sheds load.
pub const OVERLOADED_MESSAGE: &str =
    "Server is in overloaded state. Cannot accept more requests at this point";

/// Frames queued for the writer per connection.
const WRITE_QUEUE: usize = 256;
/// Bytes gathered into one socket write.
const WRITE_BATCH: usize = 256 * 1024;
/// How long, and how much, input is drained after a fatal error before closing.
const DRAIN_TIME: Duration = Duration::from_secs(1);
const DRAIN_BYTES: usize = 4 * 1024 * 1024;

/// A reply from a spawned statement: the encoded frame and the permits it releases once
/// written.
struct Outgoing(Vec<u8>, Permits);

#[allow(dead_code)] // held for their Drop
struct Permits {
    connection: OwnedSemaphorePermit,
    total: OwnedSemaphorePermit,
    bytes: OwnedSemaphorePermit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Uninitialized,
    Authenticating,
    Ready,
}

/// What the reader does after a frame.
enum Next {
    Continue,
    Close,
}

struct Conn<H: Handler> {
    shared: Arc<Shared<H>>,
    /// Where spawned statements queue their replies.
    tx: mpsc::Sender<Outgoing>,
    /// Replies waiting for the next socket write.
    out: Vec<u8>,
    /// Permits of spawned statements whose replies are in `out`.
    held: Vec<Permits>,
    /// The REGISTERed event types, once the client registered any.
    events: Option<Subscription>,
    id: u64,
    peer: SocketAddr,
    local: SocketAddr,
    state: State,
    version: Option<u8>,
    compression: Option<Compression>,
    info: Option<Arc<ConnectionInfo>>,
    tls: Option<super::handler::TlsInfo>,
    session: Option<Arc<H::Session>>,
    per_connection: Arc<Semaphore>,
}

/// Serves one started connection (TCP or TLS: [`super::transport`]) until it closes or the
/// server shuts down. One task reads and writes it, so it is not split.
pub(crate) async fn serve<H: Handler, S: Transport>(
    mut stream: S,
    peer: SocketAddr,
    local: SocketAddr,
    shared: Arc<Shared<H>>,
    mut shutdown: watch::Receiver<bool>,
) {
    let (tx, mut rx) = mpsc::channel(WRITE_QUEUE);
    let mut conn = Conn {
        id: shared.next_connection_id.fetch_add(1, Ordering::Relaxed),
        per_connection: Arc::new(Semaphore::new(
            shared
                .config
                .max_in_flight_per_connection
                .clamp(1, Semaphore::MAX_PERMITS),
        )),
        shared,
        tx,
        out: Vec::with_capacity(16 * 1024),
        held: Vec::new(),
        events: None,
        peer,
        local,
        state: State::Uninitialized,
        version: None,
        compression: None,
        info: None,
        tls: stream.tls_info(),
        session: None,
    };
    let decoder = FrameDecoder::new(conn.shared.config.max_frame_size);
    let mut buf = BytesMut::with_capacity(16 * 1024);
    let mut fatal = false;
    'outer: loop {
        while conn.out.len() < WRITE_BATCH {
            match decoder.decode(&mut buf) {
                Ok(Some(frame)) => {
                    conn.shared.stats.requests.fetch_add(1, Ordering::Relaxed);
                    if let Next::Close = conn.on_frame(frame).await {
                        fatal = true;
                        break 'outer;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    tracing::debug!(peer = %peer, "closing connection: {e}");
                    conn.count_protocol_error();
                    conn.out.extend_from_slice(&e.error_frame(conn.version));
                    fatal = true;
                    break 'outer;
                }
            }
        }
        // Replies the spawned statements have finished meanwhile leave in the same write.
        while conn.out.len() < WRITE_BATCH {
            match rx.try_recv() {
                Ok(o) => conn.take(o),
                Err(_) => break,
            }
        }
        if conn.flush(&mut stream).await.is_err() {
            break;
        }
        if !buf.is_empty() && decoder_has_frame(&buf) {
            // More complete frames are buffered (the batch limit stopped us): go on with them.
            continue;
        }
        if buf.capacity() - buf.len() < 4096 {
            // Grow geometrically with what has arrived, never on a header's word.
            buf.reserve(buf.len().max(16 * 1024));
        }
        tokio::select! {
            read = stream.read_buf(&mut buf) => match read {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            },
            Some(o) = rx.recv() => {
                conn.take(o);
                // Spawned statements often finish together (one internode read brought
                // all their replicas' answers): let them run before writing, so that their
                // replies leave in one write instead of one `sendto` each.
                tokio::task::yield_now().await;
            }
            ev = next_event(&mut conn.events) => {
                if let Some(f) = ev {
                    conn.out.extend_from_slice(&f);
                }
            }
            _ = shutdown.changed() => break,
        }
    }
    let _ = conn.flush(&mut stream).await;
    if fatal {
        drain(&mut stream).await;
    }
    let _ = stream.shutdown().await;
    if let Some(session) = conn.session.take() {
        conn.shared.handler.connection_closed(&session);
    }
}

/// True when `buf` starts with a whole frame (header and body).
fn decoder_has_frame(buf: &[u8]) -> bool {
    if buf.len() < super::frame::HEADER_LEN {
        return false;
    }
    let len = u32::from_be_bytes([buf[5], buf[6], buf[7], buf[8]]) as usize;
    buf.len() - super::frame::HEADER_LEN >= len
}

/// Reads and discards input for a short while so that closing does not reset the
/// connection before the client has read our error frame.
async fn drain(rd: &mut impl Transport) {
    let mut scratch = vec![0u8; 16 * 1024];
    let mut total = 0;
    let _ = tokio::time::timeout(DRAIN_TIME, async {
        while total < DRAIN_BYTES {
            match rd.read(&mut scratch).await {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
    })
    .await;
}

impl<H: Handler> Conn<H> {
    fn count_protocol_error(&self) {
        self.shared
            .stats
            .protocol_errors
            .fetch_add(1, Ordering::Relaxed);
    }

    fn version(&self) -> u8 {
        self.version.unwrap_or(super::frame::MAX_VERSION)
    }

    /// Queues a reply on `stream` for the next write.
    fn send(&mut self, stream: i16, reply: Reply, compression: Option<Compression>) {
        if let Response::Error(e) = &reply.response {
            if e.code() == super::message::ErrorCode::ProtocolError {
                self.count_protocol_error();
            }
        }
        let version = self.version();
        reply.encode_frame_into(version, stream, compression, &mut self.out);
    }

    fn send_error(&mut self, stream: i16, e: CqlError) {
        self.send(stream, e.into(), self.compression);
    }

    /// Queues a spawned statement's reply for the next write.
    fn take(&mut self, Outgoing(frame, permits): Outgoing) {
        self.out.extend_from_slice(&frame);
        self.held.push(permits);
    }

    /// Writes the queued replies, then releases the permits of those that were spawned.
    async fn flush(&mut self, wr: &mut impl Transport) -> std::io::Result<()> {
        if !self.out.is_empty() {
            // A TLS stream may keep records buffered until flushed (a no-op on TCP).
            let written = match wr.write_all(&self.out).await {
                Ok(()) => wr.flush().await,
                e => e,
            };
            self.out.clear();
            if self.out.capacity() > 4 * WRITE_BATCH {
                self.out = Vec::with_capacity(16 * 1024);
            }
            written?;
        }
        self.held.clear();
        Ok(())
    }

    async fn on_frame(&mut self, frame: Frame) -> Next {
        let header = frame.header;
        let stream = header.stream;
        match self.version {
            None => self.version = Some(header.version),
            Some(v) if v != header.version => {
                self.count_protocol_error();
                let msg = format!(
                    "Invalid message version. Got v{} but previous messages on this connection had version v{v}",
                    header.version
                );
                self.out
                    .extend_from_slice(&protocol_error_frame(v, stream, &msg));
                return Next::Close;
            }
            Some(_) => {}
        }
        let Some(opcode) = Opcode::from_u8(header.opcode) else {
            self.send_error(
                stream,
                CqlError::protocol(format!("Unknown opcode {}", header.opcode)),
            );
            return Next::Continue;
        };
        if header.flags & flags::COMPRESSION != 0 && self.compression.is_none() {
            self.send_error(
                stream,
                CqlError::protocol(
                    "Received a compressed frame but no compression was negotiated in STARTUP",
                ),
            );
            return Next::Continue;
        }
        if let Some(msg) = self.state_violation(opcode) {
            self.send_error(stream, CqlError::protocol(msg));
            return Next::Continue;
        }
        match opcode {
            Opcode::Query | Opcode::Prepare | Opcode::Execute | Opcode::Batch => {
                self.run_statement(frame);
                return Next::Continue;
            }
            _ => {}
        }
        // Control messages: small, handled in order on this task.
        let body = match self.decompress(&frame) {
            Ok(b) => b,
            Err(e) => {
                self.send_error(stream, e);
                return Next::Continue;
            }
        };
        let req = match RequestFrame::decode(&header, body) {
            Ok(r) => r,
            Err(e) => {
                self.send_error(stream, CqlError::protocol(e.to_string()));
                return Next::Continue;
            }
        };
        match req.request {
            Request::Options => {
                let supported = Response::Supported(vec![
                    (
                        "CQL_VERSION".to_string(),
                        vec![self.shared.config.cql_version.clone()],
                    ),
                    (
                        "COMPRESSION".to_string(),
                        SUPPORTED_COMPRESSIONS
                            .iter()
                            .map(|s| s.to_string())
                            .collect(),
                    ),
                    (
                        "PROTOCOL_VERSIONS".to_string(),
                        vec!["3/v3".to_string(), "4/v4".to_string()],
                    ),
                ]);
                self.send(stream, supported.into(), self.compression);
            }
            Request::Startup(startup) => self.on_startup(stream, startup),
            Request::Register(types) => {
                self.subscribe(types);
                self.send(stream, Response::Ready.into(), self.compression);
            }
            Request::AuthResponse(token) => {
                let (Some(session), Some(info)) = (self.session.clone(), self.info.clone()) else {
                    self.send_error(stream, CqlError::protocol("AUTH_RESPONSE before STARTUP"));
                    return Next::Continue;
                };
                let ctx = RequestContext {
                    session,
                    connection: info,
                    stream,
                    tracing: req.tracing,
                    custom_payload: req.custom_payload,
                };
                let handler = self.shared.handler.clone();
                let reply = catch_panics(handler.handle(Request::AuthResponse(token), ctx)).await;
                if matches!(reply.response, Response::AuthSuccess(_)) {
                    self.state = State::Ready;
                }
                self.send(stream, reply, self.compression);
            }
            other => {
                // Statements were dispatched above; nothing else reaches here.
                self.send_error(
                    stream,
                    CqlError::protocol(format!("Unexpected message {}", other.opcode().name())),
                );
            }
        }
        Next::Continue
    }

    /// Cassandra's connection state checks; `Some(message)` when `opcode` is out of place.
    fn state_violation(&self, opcode: Opcode) -> Option<String> {
        let is_request = matches!(
            opcode,
            Opcode::Startup
                | Opcode::Options
                | Opcode::Query
                | Opcode::Prepare
                | Opcode::Execute
                | Opcode::Batch
                | Opcode::Register
                | Opcode::AuthResponse
        );
        if !is_request {
            return Some(format!(
                "Unexpected message {}, not a request",
                opcode.name()
            ));
        }
        match self.state {
            State::Uninitialized if !matches!(opcode, Opcode::Startup | Opcode::Options) => {
                Some(format!(
                    "Unexpected message {}, expecting STARTUP or OPTIONS",
                    opcode.name()
                ))
            }
            State::Authenticating if opcode != Opcode::AuthResponse => Some(format!(
                "Unexpected message {}, expecting SASL_RESPONSE",
                opcode.name()
            )),
            State::Ready if opcode == Opcode::Startup => {
                Some("Unexpected message STARTUP, the connection is already initialized".into())
            }
            State::Ready if opcode == Opcode::AuthResponse => Some(
                "Unexpected message AUTH_RESPONSE, the connection is already authenticated".into(),
            ),
            _ => None,
        }
    }

    fn on_startup(&mut self, stream: i16, startup: Startup) {
        if startup.get("CQL_VERSION").is_none() {
            self.send_error(
                stream,
                CqlError::protocol("Missing value CQL_VERSION in STARTUP message"),
            );
            return;
        }
        let compression = match startup.get("COMPRESSION") {
            None => None,
            Some(name) => match Compression::from_name(name) {
                Some(c) => Some(c),
                None => {
                    self.send_error(
                        stream,
                        CqlError::protocol(format!("Unknown compression algorithm: {name}")),
                    );
                    return;
                }
            },
        };
        let info = Arc::new(ConnectionInfo {
            id: self.id,
            peer: self.peer,
            local: self.local,
            version: self.version(),
            compression,
            startup,
            tls: self.tls,
        });
        let session = Arc::new(self.shared.handler.new_session(&info));
        self.info = Some(info);
        self.session = Some(session);
        // The answer to STARTUP goes out uncompressed (allowed by the spec, and safe for
        // drivers that enable decompression only after READY); later frames are compressed.
        let reply = match self.shared.handler.authenticator() {
            Some(class) => {
                self.state = State::Authenticating;
                Response::Authenticate(class)
            }
            None => {
                self.state = State::Ready;
                Response::Ready
            }
        };
        self.send(stream, reply.into(), None);
        self.compression = compression;
    }

    fn decompress(&self, frame: &Frame) -> Result<Bytes, CqlError> {
        decompress_body(frame, self.compression, self.shared.config.max_frame_size)
    }

    /// Starts delivering events of `types`, encoded for this connection.
    fn subscribe(&mut self, types: Vec<EventType>) {
        match self.events.as_mut() {
            Some(s) => {
                for t in types {
                    if !s.types.contains(&t) {
                        s.types.push(t);
                    }
                }
            }
            None => {
                self.events = Some(Subscription {
                    rx: self.shared.events.subscribe(),
                    types,
                    version: self.version(),
                    compression: self.compression,
                })
            }
        }
    }

    /// Runs a statement inline if the handler can, else admits it under the in-flight
    /// limits and spawns its task. A handler that [`Handler::starts_inline`] is offered the
    /// statement with its permits taken: what it starts here and must wait for (other nodes)
    /// goes on in a task holding them, without running the statement again.
    fn run_statement(&mut self, frame: Frame) {
        let (Some(session), Some(info)) = (self.session.clone(), self.info.clone()) else {
            // The state machine admits statements only after STARTUP.
            return;
        };
        let stream = frame.header.stream;
        let compressed = frame.header.flags & flags::COMPRESSION != 0;
        let mut permits = None;
        if !compressed || frame.body.len() <= self.shared.config.blocking_threshold {
            if self.shared.handler.starts_inline() {
                // Without permits now, only what finishes here is run here (as for any
                // handler); the rest is refused as overloaded below, as before.
                permits = self.permits(frame.body.len());
            }
            let inline = match self.decompress(&frame) {
                Err(e) => Inline::Done(Reply::from(e)),
                Ok(body) => match RequestFrame::decode(&frame.header, body) {
                    Err(e) => Inline::Done(CqlError::protocol(e.to_string()).into()),
                    Ok(req) => {
                        let ctx = RequestContext {
                            session: Arc::clone(&session),
                            connection: Arc::clone(&info),
                            stream,
                            tracing: req.tracing,
                            custom_payload: req.custom_payload,
                        };
                        let handler = &self.shared.handler;
                        let may_start = permits.is_some();
                        match std::panic::catch_unwind(AssertUnwindSafe(|| {
                            if may_start {
                                handler.start_inline(req.request, ctx)
                            } else {
                                match handler.handle_inline(req.request, ctx) {
                                    Some(reply) => Inline::Done(reply),
                                    None => Inline::Declined,
                                }
                            }
                        })) {
                            Ok(r) => r,
                            Err(_) => {
                                tracing::error!("request handler panicked");
                                Inline::Done(internal_error())
                            }
                        }
                    }
                },
            };
            match (inline, permits.take()) {
                (Inline::Done(reply), _) => {
                    self.shared.stats.inline.fetch_add(1, Ordering::Relaxed);
                    self.send(stream, reply, self.compression);
                    return;
                }
                (Inline::Started(rest), Some(p)) => {
                    self.shared.stats.spawned.fetch_add(1, Ordering::Relaxed);
                    self.spawn_reply(stream, p, rest);
                    return;
                }
                // Started only when offered with permits.
                (Inline::Started(_), None) => {
                    self.send(stream, internal_error(), self.compression);
                    return;
                }
                (Inline::Declined, p) => permits = p,
            }
        }
        self.shared.stats.spawned.fetch_add(1, Ordering::Relaxed);
        self.spawn_statement(frame, session, info, permits);
    }

    /// The in-flight permits of a statement of `body_len` bytes, if all are free now.
    fn permits(&self, body_len: usize) -> Option<Permits> {
        let bytes_needed = body_len
            .clamp(1, self.shared.config.max_in_flight_bytes.max(1))
            .min(Semaphore::MAX_PERMITS);
        Some(Permits {
            connection: self.per_connection.clone().try_acquire_owned().ok()?,
            total: self.shared.in_flight.clone().try_acquire_owned().ok()?,
            bytes: self
                .shared
                .in_flight_bytes
                .clone()
                .try_acquire_many_owned(u32::try_from(bytes_needed).unwrap_or(u32::MAX))
                .ok()?,
        })
    }

    /// Admits a statement under the in-flight limits (unless `permits` were taken already)
    /// and spawns its task.
    fn spawn_statement(
        &mut self,
        frame: Frame,
        session: Arc<H::Session>,
        info: Arc<ConnectionInfo>,
        permits: Option<Permits>,
    ) {
        let stream = frame.header.stream;
        let Some(permits) = permits.or_else(|| self.permits(frame.body.len())) else {
            self.shared.stats.overloaded.fetch_add(1, Ordering::Relaxed);
            self.send_error(stream, CqlError::overloaded(OVERLOADED_MESSAGE));
            return;
        };
        let compression = self.compression;
        let handler = self.shared.handler.clone();
        let max_frame = self.shared.config.max_frame_size;
        let threshold = self.shared.config.blocking_threshold;
        let work = async move {
            let header = frame.header;
            let body = if frame.body.len() > threshold && header.flags & flags::COMPRESSION != 0 {
                match tokio::task::spawn_blocking(move || {
                    decompress_body(&frame, compression, max_frame)
                })
                .await
                {
                    Ok(r) => r,
                    Err(_) => Err(CqlError::server("decompression task failed")),
                }
            } else {
                decompress_body(&frame, compression, max_frame)
            };
            let body = match body {
                Ok(b) => b,
                Err(e) => return Reply::from(e),
            };
            let req = match RequestFrame::decode(&header, body) {
                Ok(r) => r,
                Err(e) => return CqlError::protocol(e.to_string()).into(),
            };
            let ctx = RequestContext {
                session,
                connection: info,
                stream,
                tracing: req.tracing,
                custom_payload: req.custom_payload,
            };
            handler.handle(req.request, ctx).await
        };
        self.spawn_reply(stream, permits, work);
    }

    /// Spawns the task that awaits a statement's reply on `stream` (`work`), encodes it and
    /// queues it for the connection's next write, with the `permits` it releases then.
    fn spawn_reply(
        &self,
        stream: i16,
        permits: Permits,
        work: impl Future<Output = Reply> + Send + 'static,
    ) {
        let version = self.version();
        let compression = self.compression;
        let tx = self.tx.clone();
        let threshold = self.shared.config.blocking_threshold;
        let stats = self.shared.stats.clone();
        crate::stall::spawn(crate::stall::TaskKind::CqlStatement, async move {
            let reply = catch_panics(work).await;
            if let Response::Error(e) = &reply.response {
                if e.code() == super::message::ErrorCode::ProtocolError {
                    stats.protocol_errors.fetch_add(1, Ordering::Relaxed);
                }
            }
            let frame =
                if reply_size_hint(&reply) > threshold && compression.is_some() {
                    match tokio::task::spawn_blocking(move || {
                        reply.encode_frame(version, stream, compression)
                    })
                    .await
                    {
                        Ok(f) => f,
                        Err(_) => Reply::from(CqlError::server("encoding task failed"))
                            .encode_frame(version, stream, compression),
                    }
                } else {
                    reply.encode_frame(version, stream, compression)
                };
            let _ = tx.send(Outgoing(frame, permits)).await;
        });
    }
}

/// The reply to a request whose handler panicked.
fn internal_error() -> Reply {
    CqlError::server("internal error while handling the request").into()
}

/// A cheap lower bound of a reply's encoded size (the rows payload dominates).
fn reply_size_hint(reply: &Reply) -> usize {
    match &reply.response {
        Response::Result(super::message::ResultBody::Rows(r)) => r.rows_content.len(),
        _ => 0,
    }
}

fn decompress_body(
    frame: &Frame,
    compression: Option<Compression>,
    max_len: usize,
) -> Result<Bytes, CqlError> {
    if frame.header.flags & flags::COMPRESSION == 0 {
        return Ok(frame.body.clone());
    }
    let Some(c) = compression else {
        return Err(CqlError::protocol(
            "Received a compressed frame but no compression was negotiated in STARTUP",
        ));
    };
    c.decompress(&frame.body, max_len)
        .map(Bytes::from)
        .map_err(|e| CqlError::protocol(e.to_string()))
}

/// Turns a panic inside a handler future into a SERVER_ERROR reply.
fn catch_panics<F: Future<Output = Reply> + Send>(fut: F) -> impl Future<Output = Reply> + Send {
    CatchUnwind(Box::pin(fut))
}

struct CatchUnwind<F>(Pin<Box<F>>);

impl<F: Future<Output = Reply>> Future for CatchUnwind<F> {
    type Output = Reply;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Reply> {
        let inner = self.0.as_mut();
        match std::panic::catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(p) => p,
            Err(_) => {
                tracing::error!("request handler panicked");
                Poll::Ready(internal_error())
            }
        }
    }
}

struct Subscription {
    rx: broadcast::Receiver<Arc<super::message::Event>>,
    types: Vec<EventType>,
    version: u8,
    compression: Option<Compression>,
}

async fn next_event(sub: &mut Option<Subscription>) -> Option<Vec<u8>> {
    let Some(s) = sub.as_mut() else {
        return std::future::pending().await;
    };
    loop {
        match s.rx.recv().await {
            Ok(ev) => {
                if s.types.contains(&ev.event_type()) {
                    let reply = Reply::from(Response::Event((*ev).clone()));
                    return Some(reply.encode_frame(s.version, -1, s.compression));
                }
            }
            Err(broadcast::error::RecvError::Lagged(n)) => {
                tracing::warn!("connection lagged behind the event bus; {n} events dropped");
            }
            Err(broadcast::error::RecvError::Closed) => {
                *sub = None;
                return None;
            }
        }
    }
}
