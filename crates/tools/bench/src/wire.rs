//! The bench's own CQL v4 client for its hot path: pipelined EXECUTE and BATCH frames with
//! prepared ids over `-connection-count` connections per node.
//!
//! Why not the driver: with the driver, most of the client's CPU per operation was its request
//! path (futures moved between layers, a channel to each connection's task, per-request
//! metadata, retry and speculative-execution layers), not the bench (docs/benchmarks.md,
//! "`cairn bench`'s own CPU"). Here a request is encoded straight into its connection's
//! output buffer and answered through a stream-id slot; nothing else sits in between.
//!
//! Shape, per connection: one task owns the socket (TCP, or TLS over it with `-tls-ca-cert-file`). Workers append whole frames to the
//! connection's shared output buffer (under its lock) and wait on the slot of their stream
//! id; the task writes everything queued since its last write in one `write`, reads everything
//! available, and completes every reply it found. Requests are spread over all connections
//! round robin, as gocql (scylla-bench's driver) does: a worker is not pinned to a connection.
//!
//! Frames are the ones the driver sent: STARTUP with CQL_VERSION (and COMPRESSION when
//! `-client-compression`), SASL PLAIN when asked for a password, PREPARE once per
//! connection, then EXECUTE / BATCH with the prepared id, consistency, values and, for reads,
//! page size, paging state and Skip_metadata — but no serial consistency (the driver sent its
//! default LOCAL_SERIAL; gocql sends none unless asked) and no client-side timestamp (the
//! driver sent none either). Frame headers, `[bytes]`/`[string]` notations, compression and
//! response decoding are `cairn_protocol`'s.
//!
//! Invariants:
//! * A stream id is reused only after its reply arrived: a request abandoned by its caller
//!   (`-timeout`) keeps its id until the node answers it, so a late reply can never be taken
//!   for another request's.
//! * A connection that closes or sends something that is not a v4 response frame fails every
//!   request waiting on it and every later one with an error; nothing waits forever on it.
//! * Nothing from the network is trusted: a declared frame length above [`MAX_FRAME`] closes
//!   the connection; bodies are decoded by the server crate's bounds-checked readers.

use bytes::Bytes;
use cairn_protocol::codec::{
    write_bytes, write_consistency, write_int, write_long_string, write_short, write_short_bytes,
    write_string_map,
};
use cairn_protocol::frame::{flags, HEADER_LEN};
use cairn_protocol::message::{query_flags, BatchType};
use cairn_protocol::{
    Compression, Consistency, CqlError, ErrorKind, Frame, FrameHeader, Opcode, Reply, Response,
    ResultBody,
};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// The protocol version spoken.
pub const VERSION: u8 = 4;
/// Largest response body accepted (Cassandra's default maximum frame size).
pub const MAX_FRAME: usize = cairn_protocol::frame::DEFAULT_MAX_FRAME_SIZE;
/// v4 stream ids are non-negative `i16`s.
const MAX_STREAMS: usize = 1 << 15;
/// Initial size of a connection's read buffer; it grows to fit a larger frame.
const READ_BUF: usize = 64 * 1024;

/// Why a request failed.
#[derive(Debug)]
pub enum WireError {
    /// The node answered with an ERROR frame.
    Cql(CqlError),
    /// The connection failed, or the reply could not be decoded.
    Other(String),
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Cql(e) => write!(f, "server error: {e}"),
            WireError::Other(s) => f.write_str(s),
        }
    }
}

impl WireError {
    /// Whether the node no longer knows the prepared id (it restarted or evicted it).
    pub fn is_unprepared(&self) -> bool {
        matches!(self, WireError::Cql(e) if matches!(e.kind, ErrorKind::Unprepared { .. }))
    }
}

/// Paging options of a read (`<query_parameters>` flags 0x02, 0x04, 0x08).
#[derive(Debug, Clone, Copy)]
pub struct Page<'a> {
    pub size: i32,
    pub state: Option<&'a [u8]>,
    pub skip_metadata: bool,
}

/// Appends an EXECUTE body: the prepared id, consistency, the values as `[bytes]`, and the
/// paging options for reads.
pub fn execute_body(
    out: &mut Vec<u8>,
    id: &[u8],
    consistency: Consistency,
    values: &[&[u8]],
    page: Option<Page<'_>>,
) {
    write_short_bytes(out, id);
    write_consistency(out, consistency);
    let mut fl = 0u8;
    if !values.is_empty() {
        fl |= query_flags::VALUES;
    }
    if let Some(p) = &page {
        fl |= query_flags::PAGE_SIZE;
        if p.skip_metadata {
            fl |= query_flags::SKIP_METADATA;
        }
        if p.state.is_some() {
            fl |= query_flags::PAGING_STATE;
        }
    }
    out.push(fl);
    if !values.is_empty() {
        write_short(out, u16::try_from(values.len()).unwrap_or(u16::MAX));
        for v in values.iter().take(u16::MAX as usize) {
            write_bytes(out, Some(v));
        }
    }
    if let Some(p) = page {
        write_int(out, p.size);
        if let Some(s) = p.state {
            write_bytes(out, Some(s));
        }
    }
}

/// Appends an unlogged BATCH body of one prepared statement executed once per row of
/// `rows`.
pub fn batch_body<const N: usize>(
    out: &mut Vec<u8>,
    id: &[u8],
    consistency: Consistency,
    rows: &[[&[u8]; N]],
) {
    out.push(BatchType::Unlogged as u8);
    let n = rows.len().min(u16::MAX as usize);
    write_short(out, n as u16);
    for row in &rows[..n] {
        out.push(1); // a prepared id, not a query string
        write_short_bytes(out, id);
        write_short(out, N as u16);
        for v in row {
            write_bytes(out, Some(v));
        }
    }
    write_consistency(out, consistency);
    out.push(0); // no serial consistency, no timestamp, no names
}

/// If `buf` starts with a whole response frame, its header and total length (header +
/// body); `Ok(None)` if more bytes are needed; an error if the bytes cannot be a v4 response.
pub fn split_frame(buf: &[u8]) -> Result<Option<(FrameHeader, usize)>, String> {
    let Some(h) = buf.first_chunk::<HEADER_LEN>() else {
        return Ok(None);
    };
    let header = FrameHeader::parse(h);
    if !header.is_response || header.version != VERSION {
        return Err(format!(
            "the node sent a frame that is not a protocol v{VERSION} response (version byte 0x{:02x})",
            h[0]
        ));
    }
    let len = header.length as usize;
    if len > MAX_FRAME {
        return Err(format!(
            "the node sent a frame of {len} bytes (maximum {MAX_FRAME})"
        ));
    }
    if buf.len() < HEADER_LEN + len {
        return Ok(None);
    }
    Ok(Some((header, HEADER_LEN + len)))
}

/// Decodes a reply: its response, or the node's ERROR as [`WireError::Cql`].
pub fn decode(frame: Frame, compression: Option<Compression>) -> Result<Response, WireError> {
    let reply = Reply::decode_frame(&frame.header, frame.body, compression, MAX_FRAME)
        .map_err(|e| WireError::Other(format!("undecodable reply: {e}")))?;
    match reply.response {
        Response::Error(e) => Err(WireError::Cql(e)),
        r => Ok(r),
    }
}

/// Decodes a reply expected to be a RESULT.
pub fn decode_result(
    frame: Frame,
    compression: Option<Compression>,
) -> Result<ResultBody, WireError> {
    match decode(frame, compression)? {
        Response::Result(r) => Ok(r),
        other => Err(WireError::Other(format!(
            "expected a RESULT, the node sent {}",
            other.opcode().name()
        ))),
    }
}

/// One stream id's request.
enum Slot {
    Free,
    /// Sent; the waker of whoever waits for the reply (none before the first poll).
    Waiting(Option<Waker>),
    Done(Result<Frame, String>),
    /// The caller gave up (timeout); the id is freed when the reply comes.
    Abandoned,
}

struct State {
    /// Frames queued since the connection's task last took them.
    out: Vec<u8>,
    slots: Vec<Slot>,
    free: Vec<i16>,
    /// The connection's task, when it waits for something to write.
    writer: Option<Waker>,
    /// Why the connection is unusable, once it is.
    closed: Option<String>,
    /// Scratch for a body before compression.
    scratch: Vec<u8>,
}

/// One connection: its shared state; the socket is owned by its task.
pub struct Conn {
    state: Mutex<State>,
    /// Set with `State::closed`, readable without the lock (to pick a connection).
    is_closed: std::sync::atomic::AtomicBool,
    compression: Option<Compression>,
    addr: String,
}

impl Conn {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves consistent slots (every update is one
        // assignment), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues a request frame whose body `encode` appends, and returns its reply.
    pub fn send(&self, opcode: Opcode, encode: impl FnOnce(&mut Vec<u8>)) -> Pending<'_> {
        let mut st = self.lock();
        if let Some(why) = &st.closed {
            let why = why.clone();
            return Pending {
                conn: self,
                stream: None,
                early: Some(why),
            };
        }
        let stream = match st.free.pop() {
            Some(s) => s,
            None if st.slots.len() < MAX_STREAMS => {
                st.slots.push(Slot::Free);
                (st.slots.len() - 1) as i16
            }
            None => {
                return Pending {
                    conn: self,
                    stream: None,
                    early: Some(format!("{}: all stream ids are in use", self.addr)),
                }
            }
        };
        st.slots[stream as usize] = Slot::Waiting(None);
        let was_empty = st.out.is_empty();
        // STARTUP is never compressed: compression is what it negotiates.
        let compression = self.compression.filter(|_| opcode != Opcode::Startup);
        let State { out, scratch, .. } = &mut *st;
        let start = out.len();
        out.extend_from_slice(&[0u8; HEADER_LEN]);
        let mut fl = 0u8;
        match compression {
            None => encode(out),
            Some(c) => {
                scratch.clear();
                encode(scratch);
                if !scratch.is_empty() {
                    out.extend_from_slice(&c.compress(scratch));
                    fl |= flags::COMPRESSION;
                }
            }
        }
        let header = FrameHeader {
            version: VERSION,
            is_response: false,
            flags: fl,
            stream,
            opcode: opcode as u8,
            length: u32::try_from(out.len() - start - HEADER_LEN).unwrap_or(u32::MAX),
        };
        out[start..start + HEADER_LEN].copy_from_slice(&header.encode());
        let writer = if was_empty { st.writer.take() } else { None };
        drop(st);
        if let Some(w) = writer {
            w.wake();
        }
        Pending {
            conn: self,
            stream: Some(stream),
            early: None,
        }
    }

    /// Prepares `query` on this connection: its id.
    pub async fn prepare(&self, query: &str) -> Result<Bytes, WireError> {
        let frame = self
            .send(Opcode::Prepare, |b| write_long_string(b, query))
            .await
            .map_err(WireError::Other)?;
        match decode_result(frame, self.compression)? {
            ResultBody::Prepared(p) => Ok(p.id),
            _ => Err(WireError::Other(format!(
                "PREPARE of {query:?} did not return a prepared id"
            ))),
        }
    }

    /// Hands a reply to its waiting request.
    fn complete(&self, stream: i16, frame: Frame) {
        let Ok(i) = usize::try_from(stream) else {
            return; // an EVENT (stream -1): never registered for, ignored
        };
        let mut st = self.lock();
        let waker = match st.slots.get_mut(i) {
            Some(slot @ Slot::Waiting(_)) => match std::mem::replace(slot, Slot::Done(Ok(frame))) {
                Slot::Waiting(w) => w,
                _ => None,
            },
            Some(slot @ Slot::Abandoned) => {
                *slot = Slot::Free;
                st.free.push(stream);
                None
            }
            // A reply on a stream with nothing in flight: ignored, as drivers do.
            _ => None,
        };
        drop(st);
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Whether the connection is closed.
    pub fn is_closed(&self) -> bool {
        self.is_closed.load(Ordering::Relaxed)
    }

    /// Marks the connection closed and fails every request in flight.
    fn fail_all(&self, why: String) {
        let mut st = self.lock();
        st.closed = Some(why.clone());
        self.is_closed.store(true, Ordering::Relaxed);
        st.out.clear();
        let mut wakers = Vec::new();
        for slot in st.slots.iter_mut() {
            match slot {
                Slot::Waiting(w) => {
                    if let Some(w) = w.take() {
                        wakers.push(w);
                    }
                    *slot = Slot::Done(Err(why.clone()));
                }
                Slot::Abandoned => *slot = Slot::Free,
                _ => {}
            }
        }
        drop(st);
        for w in wakers {
            w.wake();
        }
    }
}

/// A request's reply, as a future.
pub struct Pending<'a> {
    conn: &'a Conn,
    stream: Option<i16>,
    /// Failed before it was sent.
    early: Option<String>,
}

impl Future for Pending<'_> {
    type Output = Result<Frame, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(why) = self.early.take() {
            return Poll::Ready(Err(why));
        }
        let Some(stream) = self.stream else {
            return Poll::Ready(Err("reply polled after completion".into()));
        };
        let mut st = self.conn.lock();
        let i = stream as usize;
        match &mut st.slots[i] {
            Slot::Waiting(w) => {
                if !w.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    *w = Some(cx.waker().clone());
                }
                Poll::Pending
            }
            slot @ Slot::Done(_) => {
                let Slot::Done(r) = std::mem::replace(slot, Slot::Free) else {
                    unreachable!("matched Done above")
                };
                st.free.push(stream);
                drop(st);
                self.stream = None;
                Poll::Ready(r)
            }
            _ => Poll::Ready(Err("stream slot lost its request".into())),
        }
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        let Some(stream) = self.stream else {
            return;
        };
        let mut st = self.conn.lock();
        let slot = &mut st.slots[stream as usize];
        match slot {
            // The reply is here but nobody will read it: the id is free again.
            Slot::Done(_) => {
                *slot = Slot::Free;
                st.free.push(stream);
            }
            // Still in flight: keep the id until the reply comes.
            Slot::Waiting(_) => *slot = Slot::Abandoned,
            _ => {}
        }
    }
}

/// The connection's task: writes queued frames, reads replies, until the socket fails.
async fn drive<S: AsyncRead + AsyncWrite + Unpin>(conn: Arc<Conn>, mut sock: S) {
    let mut io = Io {
        rbuf: vec![0; READ_BUF],
        filled: 0,
        wbuf: Vec::new(),
        written: 0,
    };
    let why = std::future::poll_fn(|cx| io.poll(&conn, &mut sock, cx)).await;
    conn.fail_all(format!("connection to {}: {why}", conn.addr));
}

struct Io {
    rbuf: Vec<u8>,
    filled: usize,
    /// Frames taken from the shared buffer, being written; `written` of them are.
    wbuf: Vec<u8>,
    written: usize,
}

impl Io {
    /// Runs until the socket has nothing to give and nothing to take; `Ready` only when the
    /// connection is unusable, with why.
    fn poll<S: AsyncRead + AsyncWrite + Unpin>(
        &mut self,
        conn: &Conn,
        sock: &mut S,
        cx: &mut Context<'_>,
    ) -> Poll<String> {
        loop {
            let mut progress = false;
            if self.written == self.wbuf.len() {
                self.wbuf.clear();
                self.written = 0;
                let mut st = conn.lock();
                if st.out.is_empty() {
                    // Registered under the lock a sender checks, so no frame is missed.
                    if !st.writer.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                        st.writer = Some(cx.waker().clone());
                    }
                } else {
                    // The two buffers swap roles: no copy, and both keep their capacity.
                    std::mem::swap(&mut st.out, &mut self.wbuf);
                }
            }
            while self.written < self.wbuf.len() {
                match Pin::new(&mut *sock).poll_write(cx, &self.wbuf[self.written..]) {
                    Poll::Ready(Ok(0)) => return Poll::Ready("the socket accepts no more".into()),
                    Poll::Ready(Ok(n)) => {
                        self.written += n;
                        progress = true;
                    }
                    Poll::Ready(Err(e)) => return Poll::Ready(format!("write failed: {e}")),
                    Poll::Pending => break,
                }
            }
            // A TLS stream may hold records it could not send yet: push them (a no-op on TCP;
            // Pending registers the socket's wake-up).
            if let Poll::Ready(Err(e)) = Pin::new(&mut *sock).poll_flush(cx) {
                return Poll::Ready(format!("write failed: {e}"));
            }
            let mut rb = ReadBuf::new(&mut self.rbuf[self.filled..]);
            match Pin::new(&mut *sock).poll_read(cx, &mut rb) {
                Poll::Ready(Ok(())) => {
                    let n = rb.filled().len();
                    if n == 0 {
                        return Poll::Ready("closed by the node".into());
                    }
                    self.filled += n;
                    if let Err(why) = self.complete_frames(conn) {
                        return Poll::Ready(why);
                    }
                    progress = true;
                }
                Poll::Ready(Err(e)) => return Poll::Ready(format!("read failed: {e}")),
                Poll::Pending => {}
            }
            if !progress {
                return Poll::Pending;
            }
        }
    }

    /// Completes every whole reply in the read buffer and keeps the torn tail for later.
    fn complete_frames(&mut self, conn: &Conn) -> Result<(), String> {
        let mut at = 0;
        while let Some((header, len)) = split_frame(&self.rbuf[at..self.filled])? {
            let body = Bytes::copy_from_slice(&self.rbuf[at + HEADER_LEN..at + len]);
            conn.complete(header.stream, Frame { header, body });
            at += len;
        }
        self.rbuf.copy_within(at..self.filled, 0);
        self.filled -= at;
        // Room for at least the rest of a torn frame (its header is known), or more bytes.
        let need = match split_frame(&self.rbuf[..self.filled]) {
            Ok(None) if self.filled >= HEADER_LEN => {
                let h = FrameHeader::parse(self.rbuf.first_chunk().unwrap_or(&[0; HEADER_LEN]));
                HEADER_LEN + h.length as usize
            }
            _ => 0,
        };
        let want = need.max(self.filled + 4096).max(READ_BUF);
        if self.rbuf.len() < want {
            self.rbuf.resize(want, 0);
        }
        Ok(())
    }
}

/// Connections to every node, used round robin.
pub struct Client {
    conns: Vec<Arc<Conn>>,
    next: AtomicUsize,
    compression: Option<Compression>,
}

/// Credentials for SASL PLAIN.
pub struct Auth {
    pub username: String,
    pub password: String,
}

impl Client {
    /// Opens `per_node` connections to each of `nodes` (`host:port`) and starts them
    /// (STARTUP, authentication). Must be called inside a tokio runtime.
    pub async fn connect(
        nodes: &[String],
        per_node: usize,
        compression: Option<Compression>,
        auth: Option<&Auth>,
        tls: Option<&Arc<rustls::ClientConfig>>,
        timeout: Duration,
    ) -> Result<Client, String> {
        let mut conns = Vec::new();
        for addr in nodes {
            for _ in 0..per_node.max(1) {
                let c = tokio::time::timeout(timeout, Self::open(addr, compression, auth, tls))
                    .await
                    .map_err(|_| format!("connecting to {addr}: timed out"))??;
                conns.push(c);
            }
        }
        if conns.is_empty() {
            // `next` indexes the connections: a client without any is refused here.
            return Err("no node to connect to".into());
        }
        Ok(Client {
            conns,
            next: AtomicUsize::new(0),
            compression,
        })
    }

    async fn open(
        addr: &str,
        compression: Option<Compression>,
        auth: Option<&Auth>,
        tls: Option<&Arc<rustls::ClientConfig>>,
    ) -> Result<Arc<Conn>, String> {
        let sock = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connecting to {addr}: {e}"))?;
        // As the drivers do: a request must not wait for the previous one's ACK.
        sock.set_nodelay(true)
            .map_err(|e| format!("connecting to {addr}: {e}"))?;
        let conn = Arc::new(Conn {
            state: Mutex::new(State {
                out: Vec::new(),
                slots: Vec::new(),
                free: Vec::new(),
                writer: None,
                closed: None,
                scratch: Vec::new(),
            }),
            is_closed: std::sync::atomic::AtomicBool::new(false),
            compression,
            addr: addr.to_string(),
        });
        match tls {
            None => {
                tokio::spawn(drive(Arc::clone(&conn), sock));
            }
            Some(config) => {
                // The certificate must name the host as written in -nodes (an IP or a name).
                let host = addr.rsplit_once(':').map_or(addr, |(h, _)| h);
                let host = host.trim_start_matches('[').trim_end_matches(']');
                let name = rustls::pki_types::ServerName::try_from(host.to_string())
                    .map_err(|e| format!("connecting to {addr}: {e}"))?;
                let stream = tokio_rustls::TlsConnector::from(Arc::clone(config))
                    .connect(name, sock)
                    .await
                    .map_err(|e| format!("TLS handshake with {addr}: {e}"))?;
                tokio::spawn(drive(Arc::clone(&conn), stream));
            }
        }
        let mut options = vec![("CQL_VERSION", "3.0.0")];
        if let Some(c) = compression {
            options.push(("COMPRESSION", c.name()));
        }
        let startup = conn
            .send(Opcode::Startup, |b| write_string_map(b, &options))
            .await?;
        let fail = |e: WireError| format!("starting a connection to {addr}: {e}");
        match decode(startup, compression).map_err(fail)? {
            Response::Ready => {}
            Response::Authenticate(class) => {
                let Some(a) = auth else {
                    return Err(format!(
                        "{addr} asks for authentication ({class}): give -username and -password"
                    ));
                };
                // SASL PLAIN: authzid (empty) NUL authcid NUL password.
                let mut token = vec![0u8];
                token.extend_from_slice(a.username.as_bytes());
                token.push(0);
                token.extend_from_slice(a.password.as_bytes());
                let reply = conn
                    .send(Opcode::AuthResponse, |b| write_bytes(b, Some(&token)))
                    .await?;
                match decode(reply, compression).map_err(fail)? {
                    Response::AuthSuccess(_) => {}
                    other => {
                        return Err(format!(
                            "authenticating to {addr}: unexpected {}",
                            other.opcode().name()
                        ))
                    }
                }
            }
            other => {
                return Err(format!(
                    "starting a connection to {addr}: unexpected {}",
                    other.opcode().name()
                ))
            }
        }
        Ok(conn)
    }

    /// The next open connection, round robin (a closed one only when every one is closed:
    /// its requests then fail at once).
    pub fn next(&self) -> &Conn {
        let n = self.conns.len().max(1);
        let i = self.next.fetch_add(1, Ordering::Relaxed) % n;
        (0..n)
            .map(|k| &self.conns[(i + k) % n])
            .find(|c| !c.is_closed())
            .unwrap_or(&self.conns[i])
    }

    /// True when every connection is closed (there is no reconnection): nothing can succeed
    /// any more.
    pub fn all_closed(&self) -> bool {
        self.conns.iter().all(|c| c.is_closed())
    }

    /// Prepares `query` on every connection (a node keeps prepared statements per node, but
    /// this way no connection depends on another having run first); the id.
    pub async fn prepare(&self, query: &str) -> Result<Bytes, WireError> {
        let mut id = None;
        for c in &self.conns {
            let this = c.prepare(query).await?;
            if id.as_ref().is_some_and(|i| *i != this) {
                return Err(WireError::Other(format!(
                    "nodes disagree on the prepared id of {query:?}"
                )));
            }
            id = Some(this);
        }
        id.ok_or_else(|| WireError::Other("no connection".into()))
    }

    /// Response compression, for [`decode`].
    pub fn compression(&self) -> Option<Compression> {
        self.compression
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use cairn_protocol::{Execute, QueryParams, Request, RequestFrame, Rows, RowsBuilder, Value};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn request_of(opcode: Opcode, body: Vec<u8>) -> Request {
        let h = FrameHeader {
            version: VERSION,
            is_response: false,
            flags: 0,
            stream: 3,
            opcode: opcode as u8,
            length: body.len() as u32,
        };
        RequestFrame::decode(&h, Bytes::from(body)).unwrap().request
    }

    #[test]
    fn execute_decodes_as_the_node_reads_it() {
        let mut b = Vec::new();
        execute_body(
            &mut b,
            b"ID",
            Consistency::One,
            &[&7i64.to_be_bytes(), b"vv"],
            None,
        );
        let mut want = QueryParams::new(Consistency::One);
        want.values = vec![
            Value::Bytes(Bytes::copy_from_slice(&7i64.to_be_bytes())),
            Value::Bytes(Bytes::from_static(b"vv")),
        ];
        assert_eq!(
            request_of(Opcode::Execute, b),
            Request::Execute(Execute {
                id: Bytes::from_static(b"ID"),
                params: want.clone()
            })
        );

        let mut b = Vec::new();
        let page = Page {
            size: 100,
            state: Some(b"st"),
            skip_metadata: true,
        };
        execute_body(&mut b, b"ID", Consistency::Quorum, &[b"k"], Some(page));
        let mut want = QueryParams::new(Consistency::Quorum);
        want.values = vec![Value::Bytes(Bytes::from_static(b"k"))];
        want.page_size = Some(100);
        want.paging_state = Some(Bytes::from_static(b"st"));
        want.skip_metadata = true;
        let Request::Execute(e) = request_of(Opcode::Execute, b) else {
            panic!("not an EXECUTE")
        };
        assert_eq!(e.params, want);
    }

    #[test]
    fn batch_decodes_as_the_node_reads_it() {
        let mut b = Vec::new();
        batch_body(
            &mut b,
            b"ID",
            Consistency::Two,
            &[[b"a" as &[u8], b"b"], [b"c", b"d"]],
        );
        let Request::Batch(batch) = request_of(Opcode::Batch, b) else {
            panic!("not a BATCH")
        };
        assert_eq!(batch.batch_type, BatchType::Unlogged);
        assert_eq!(batch.consistency, Consistency::Two);
        assert_eq!(batch.statements.len(), 2);
        assert_eq!(
            batch.statements[1].values,
            vec![
                Value::Bytes(Bytes::from_static(b"c")),
                Value::Bytes(Bytes::from_static(b"d"))
            ]
        );
    }

    fn reply(stream: i16, r: Response) -> Vec<u8> {
        Reply::from(r).encode_frame(VERSION, stream, None)
    }

    fn rows_reply(stream: i16, paging: Option<&'static [u8]>) -> Vec<u8> {
        let mut rb = RowsBuilder::new(3);
        rb.push_row([
            Some(&1i64.to_be_bytes()[..]),
            Some(&2i64.to_be_bytes()[..]),
            Some(b"v"),
        ]);
        let mut rows: Rows = rb.finish_without_metadata().unwrap();
        rows.paging_state = paging.map(Bytes::from_static);
        reply(stream, Response::Result(ResultBody::Rows(rows)))
    }

    #[test]
    fn whole_frames_split_and_a_torn_one_waits() {
        let mut buf = rows_reply(5, Some(b"next"));
        let first = buf.len();
        buf.extend(reply(6, Response::Result(ResultBody::Void)));
        let (h, len) = split_frame(&buf).unwrap().unwrap();
        assert_eq!((h.stream, len), (5, first));
        let (h, _) = split_frame(&buf[first..]).unwrap().unwrap();
        assert_eq!(h.stream, 6);
        // Short of the last byte, and short of a whole header: both wait for more.
        assert_eq!(split_frame(&buf[first..buf.len() - 1]).unwrap(), None);
        assert_eq!(split_frame(&buf[..4]).unwrap(), None);
        // A request frame, or another version, is refused.
        let mut bad = buf.clone();
        bad[0] = VERSION;
        assert!(split_frame(&bad).is_err());

        let body = Bytes::copy_from_slice(&buf[HEADER_LEN..first]);
        let frame = Frame { header: h, body };
        let ResultBody::Rows(rows) = decode_result(frame, None).unwrap() else {
            panic!("not rows")
        };
        assert_eq!(rows.rows_count, 1);
        assert_eq!(rows.paging_state.as_deref(), Some(&b"next"[..]));
    }

    #[test]
    fn an_error_reply_is_an_error() {
        let buf = reply(
            2,
            Response::Error(CqlError::invalid("unconfigured table nope")),
        );
        let (header, len) = split_frame(&buf).unwrap().unwrap();
        let frame = Frame {
            header,
            body: Bytes::copy_from_slice(&buf[HEADER_LEN..len]),
        };
        let e = decode_result(frame, None).unwrap_err();
        assert!(!e.is_unprepared());
        assert_eq!(
            e.to_string(),
            "server error: Invalid (0x2200): unconfigured table nope"
        );

        let buf = reply(
            2,
            Response::Error(CqlError::unprepared(Bytes::from_static(b"ID"))),
        );
        let frame = Frame {
            header: split_frame(&buf).unwrap().unwrap().0,
            body: Bytes::copy_from_slice(&buf[HEADER_LEN..]),
        };
        assert!(decode(frame, None).unwrap_err().is_unprepared());
    }

    /// A fake node: answers STARTUP, then sends replies in two torn pieces (the second
    /// request's reply first), then closes; requests in flight fail rather than hang.
    #[tokio::test(flavor = "current_thread")]
    async fn replies_match_streams_and_a_closed_connection_fails_requests() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let node = tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut buf = vec![0u8; 4096];
            // STARTUP
            let mut got = Vec::new();
            let mut streams = Vec::new();
            while streams.is_empty() {
                let n = s.read(&mut buf).await.unwrap();
                got.extend_from_slice(&buf[..n]);
                if got.len() >= HEADER_LEN {
                    let h = FrameHeader::parse(got.first_chunk().unwrap());
                    if got.len() >= HEADER_LEN + h.length as usize {
                        streams.push(h.stream);
                        got.drain(..HEADER_LEN + h.length as usize);
                    }
                }
            }
            s.write_all(&reply(streams[0], Response::Ready))
                .await
                .unwrap();
            // Three EXECUTEs.
            let mut streams = Vec::new();
            while streams.len() < 3 {
                while let Some(h) = got.first_chunk::<HEADER_LEN>().map(FrameHeader::parse) {
                    if got.len() < HEADER_LEN + h.length as usize {
                        break;
                    }
                    streams.push(h.stream);
                    got.drain(..HEADER_LEN + h.length as usize);
                }
                if streams.len() < 3 {
                    let n = s.read(&mut buf).await.unwrap();
                    got.extend_from_slice(&buf[..n]);
                }
            }
            let mut out = rows_reply(streams[1], None);
            out.extend(reply(streams[0], Response::Result(ResultBody::Void)));
            let cut = out.len() - 3;
            s.write_all(&out[..cut]).await.unwrap();
            s.flush().await.unwrap();
            tokio::time::sleep(Duration::from_millis(20)).await;
            s.write_all(&out[cut..]).await.unwrap();
            // The third is never answered: the connection closes.
            tokio::time::sleep(Duration::from_millis(20)).await;
            drop(s);
        });
        let client = Client::connect(&[addr], 1, None, None, None, Duration::from_secs(5))
            .await
            .unwrap();
        let c = client.next();
        let exec = |b: &mut Vec<u8>| execute_body(b, b"ID", Consistency::One, &[b"k"], None);
        let (a, b, third) = (
            c.send(Opcode::Execute, exec),
            c.send(Opcode::Execute, exec),
            c.send(Opcode::Execute, exec),
        );
        let (a, b, third) = tokio::join!(a, b, third);
        assert!(matches!(
            decode_result(a.unwrap(), None).unwrap(),
            ResultBody::Void
        ));
        assert!(matches!(
            decode_result(b.unwrap(), None).unwrap(),
            ResultBody::Rows(_)
        ));
        let e = third.unwrap_err();
        assert!(e.contains("closed by the node"), "{e}");
        // Later requests fail at once.
        assert!(c.send(Opcode::Execute, exec).await.is_err());
        node.await.unwrap();
    }
}
