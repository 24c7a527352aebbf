//! One client connection: the reader loop, the per-request tasks and the writer task.
//!
//! The reader splits frames off the socket, enforces the connection state machine and
//! limits, answers OPTIONS / STARTUP / REGISTER itself, awaits AUTH_RESPONSE inline (the
//! client waits for it anyway), and spawns one task per QUERY / PREPARE / EXECUTE / BATCH.
//! Every response goes through a bounded channel to the writer task, which batches frames
//! into socket writes and interleaves EVENT frames (stream -1) for registered types.
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
//! * A response frame is queued before the permits of its request are released, and the
//!   queue is bounded, so buffered responses are bounded by the in-flight limits.

use super::compression::{Compression, SUPPORTED_COMPRESSIONS};
use super::frame::{flags, protocol_error_frame, Frame, FrameDecoder, Opcode};
use super::message::{CqlError, EventType, Reply, Request, RequestFrame, Response, Startup};
use super::server::{ConnectionInfo, Handler, RequestContext, Shared};
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
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
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

enum Outgoing {
    /// An encoded frame; the permits are released once it is written.
    Frame(Vec<u8>, Option<Permits>),
    /// Start delivering events of these types, encoded for this version/compression.
    Subscribe {
        types: Vec<EventType>,
        version: u8,
        compression: Option<Compression>,
    },
    /// Flush, then shut the write side down.
    Close,
}

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
    tx: mpsc::Sender<Outgoing>,
    id: u64,
    peer: SocketAddr,
    local: SocketAddr,
    state: State,
    version: Option<u8>,
    compression: Option<Compression>,
    info: Option<Arc<ConnectionInfo>>,
    session: Option<Arc<H::Session>>,
    per_connection: Arc<Semaphore>,
}

/// Serves one accepted socket until it closes or the server shuts down.
pub(crate) async fn serve<H: Handler>(
    socket: TcpStream,
    peer: SocketAddr,
    shared: Arc<Shared<H>>,
    mut shutdown: watch::Receiver<bool>,
) {
    let local = socket
        .local_addr()
        .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
    let (mut rd, wr) = socket.into_split();
    let (tx, rx) = mpsc::channel(WRITE_QUEUE);
    let writer = tokio::spawn(writer_loop(wr, rx, shared.events.subscribe_lazy()));
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
        peer,
        local,
        state: State::Uninitialized,
        version: None,
        compression: None,
        info: None,
        session: None,
    };
    let decoder = FrameDecoder::new(conn.shared.config.max_frame_size);
    let mut buf = BytesMut::with_capacity(16 * 1024);
    let mut fatal = false;
    'outer: loop {
        loop {
            match decoder.decode(&mut buf) {
                Ok(Some(frame)) => {
                    conn.shared.stats.requests.fetch_add(1, Ordering::Relaxed);
                    match conn.on_frame(frame).await {
                        Next::Continue => {}
                        Next::Close => {
                            fatal = true;
                            break 'outer;
                        }
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    tracing::debug!(peer = %peer, "closing connection: {e}");
                    conn.count_protocol_error();
                    let frame = e.error_frame(conn.version);
                    let _ = conn.tx.send(Outgoing::Frame(frame, None)).await;
                    fatal = true;
                    break 'outer;
                }
            }
        }
        if buf.capacity() - buf.len() < 4096 {
            // Grow geometrically with what has arrived, never on a header's word.
            buf.reserve(buf.len().max(16 * 1024));
        }
        tokio::select! {
            read = rd.read_buf(&mut buf) => match read {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            },
            _ = shutdown.changed() => break,
            _ = conn.tx.closed() => break,
        }
    }
    let _ = conn.tx.send(Outgoing::Close).await;
    if fatal {
        drain(&mut rd).await;
    }
    drop(conn.tx);
    let _ = writer.await;
    if let Some(session) = conn.session.take() {
        conn.shared.handler.connection_closed(&session);
    }
}

/// Reads and discards input for a short while so that closing does not reset the
/// connection before the client has read our error frame.
async fn drain(rd: &mut OwnedReadHalf) {
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

    /// Queues a reply on `stream` (encoded inline: replies sent from here are small).
    async fn send(&self, stream: i16, reply: Reply, compression: Option<Compression>) {
        if let Response::Error(e) = &reply.response {
            if e.code() == super::message::ErrorCode::ProtocolError {
                self.count_protocol_error();
            }
        }
        let frame = reply.encode_frame(self.version(), stream, compression);
        let _ = self.tx.send(Outgoing::Frame(frame, None)).await;
    }

    async fn send_error(&self, stream: i16, e: CqlError) {
        self.send(stream, e.into(), self.compression).await;
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
                let frame = protocol_error_frame(v, stream, &msg);
                let _ = self.tx.send(Outgoing::Frame(frame, None)).await;
                return Next::Close;
            }
            Some(_) => {}
        }
        let Some(opcode) = Opcode::from_u8(header.opcode) else {
            self.send_error(
                stream,
                CqlError::protocol(format!("Unknown opcode {}", header.opcode)),
            )
            .await;
            return Next::Continue;
        };
        if header.flags & flags::COMPRESSION != 0 && self.compression.is_none() {
            self.send_error(
                stream,
                CqlError::protocol(
                    "Received a compressed frame but no compression was negotiated in STARTUP",
                ),
            )
            .await;
            return Next::Continue;
        }
        if let Some(msg) = self.state_violation(opcode) {
            self.send_error(stream, CqlError::protocol(msg)).await;
            return Next::Continue;
        }
        match opcode {
            Opcode::Query | Opcode::Prepare | Opcode::Execute | Opcode::Batch => {
                self.spawn_statement(frame).await;
                return Next::Continue;
            }
            _ => {}
        }
        // Control messages: small, handled in order on this task.
        let body = match self.decompress(&frame) {
            Ok(b) => b,
            Err(e) => {
                self.send_error(stream, e).await;
                return Next::Continue;
            }
        };
        let req = match RequestFrame::decode(&header, body) {
            Ok(r) => r,
            Err(e) => {
                self.send_error(stream, CqlError::protocol(e.to_string()))
                    .await;
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
                self.send(stream, supported.into(), self.compression).await;
            }
            Request::Startup(startup) => self.on_startup(stream, startup).await,
            Request::Register(types) => {
                let _ = self
                    .tx
                    .send(Outgoing::Subscribe {
                        types,
                        version: self.version(),
                        compression: self.compression,
                    })
                    .await;
                self.send(stream, Response::Ready.into(), self.compression)
                    .await;
            }
            Request::AuthResponse(token) => {
                let (Some(session), Some(info)) = (self.session.clone(), self.info.clone()) else {
                    self.send_error(stream, CqlError::protocol("AUTH_RESPONSE before STARTUP"))
                        .await;
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
                self.send(stream, reply, self.compression).await;
            }
            other => {
                // Statements were dispatched above; nothing else reaches here.
                self.send_error(
                    stream,
                    CqlError::protocol(format!("Unexpected message {}", other.opcode().name())),
                )
                .await;
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

    async fn on_startup(&mut self, stream: i16, startup: Startup) {
        if startup.get("CQL_VERSION").is_none() {
            self.send_error(
                stream,
                CqlError::protocol("Missing value CQL_VERSION in STARTUP message"),
            )
            .await;
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
                    )
                    .await;
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
        self.send(stream, reply.into(), None).await;
        self.compression = compression;
    }

    fn decompress(&self, frame: &Frame) -> Result<Bytes, CqlError> {
        decompress_body(frame, self.compression, self.shared.config.max_frame_size)
    }

    /// Admits a statement under the in-flight limits and spawns its task.
    async fn spawn_statement(&mut self, frame: Frame) {
        let stream = frame.header.stream;
        let bytes_needed = frame
            .body
            .len()
            .clamp(1, self.shared.config.max_in_flight_bytes.max(1))
            .min(Semaphore::MAX_PERMITS);
        let permits = (|| {
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
        })();
        let version = self.version();
        let compression = self.compression;
        let tx = self.tx.clone();
        let Some(permits) = permits else {
            self.shared.stats.overloaded.fetch_add(1, Ordering::Relaxed);
            let reply: Reply = CqlError::overloaded(OVERLOADED_MESSAGE).into();
            let frame = reply.encode_frame(version, stream, compression);
            // If the queue is full the client is not reading its answers: waiting here stops
            // us reading its requests too (TCP backpressure), and every stream gets an answer.
            let _ = tx.send(Outgoing::Frame(frame, None)).await;
            return;
        };
        let (Some(session), Some(info)) = (self.session.clone(), self.info.clone()) else {
            // The state machine admits statements only after STARTUP.
            return;
        };
        let handler = self.shared.handler.clone();
        let max_frame = self.shared.config.max_frame_size;
        let threshold = self.shared.config.blocking_threshold;
        let stats = self.shared.stats.clone();
        tokio::spawn(async move {
            let reply = async {
                let header = frame.header;
                let body = if frame.body.len() > threshold && header.flags & flags::COMPRESSION != 0
                {
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
                catch_panics(handler.handle(req.request, ctx)).await
            }
            .await;
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
            let _ = tx.send(Outgoing::Frame(frame, Some(permits))).await;
        });
    }
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
                Poll::Ready(CqlError::server("internal error while handling the request").into())
            }
        }
    }
}

/// Lazily subscribed event receiver: connections that never REGISTER cost the bus nothing.
pub(crate) struct LazyEvents {
    bus: super::server::EventBus,
}

impl super::server::EventBus {
    pub(crate) fn subscribe_lazy(&self) -> LazyEvents {
        LazyEvents { bus: self.clone() }
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

async fn writer_loop(mut wr: OwnedWriteHalf, mut rx: mpsc::Receiver<Outgoing>, lazy: LazyEvents) {
    let mut sub: Option<Subscription> = None;
    let mut batch: Vec<u8> = Vec::with_capacity(16 * 1024);
    let mut held: Vec<Permits> = Vec::new();
    loop {
        let mut close = false;
        tokio::select! {
            msg = rx.recv() => {
                let Some(msg) = msg else { break };
                let mut next = Some(msg);
                // Gather whatever is already queued into one write.
                while let Some(m) = next.take() {
                    match m {
                        Outgoing::Frame(f, p) => {
                            batch.extend_from_slice(&f);
                            held.extend(p);
                        }
                        Outgoing::Subscribe { types, version, compression } => match sub.as_mut() {
                            Some(s) => {
                                for t in types {
                                    if !s.types.contains(&t) {
                                        s.types.push(t);
                                    }
                                }
                            }
                            None => {
                                sub = Some(Subscription {
                                    rx: lazy.bus.subscribe(),
                                    types,
                                    version,
                                    compression,
                                })
                            }
                        },
                        Outgoing::Close => {
                            close = true;
                            break;
                        }
                    }
                    if batch.len() < WRITE_BATCH {
                        next = rx.try_recv().ok();
                    }
                }
            }
            ev = next_event(&mut sub) => {
                if let Some(f) = ev {
                    batch.extend_from_slice(&f);
                }
            }
        }
        if !batch.is_empty() {
            if wr.write_all(&batch).await.is_err() {
                break;
            }
            batch.clear();
            if batch.capacity() > 4 * WRITE_BATCH {
                batch = Vec::with_capacity(16 * 1024);
            }
        }
        held.clear();
        if close {
            let _ = wr.shutdown().await;
            break;
        }
    }
}
