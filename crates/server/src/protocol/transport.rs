//! What a connection reads and writes: the accepted TCP socket, or a TLS stream over it;
//! and how a connection starts on a port with TLS ([`open`]).
//!
//! Invariants: opening runs on the connection's own task, bounded by the handshake timeout,
//! so a silent or slow client holds nothing but its socket for that long; with TLS required,
//! a client that does not complete a handshake (a plaintext client among them) is closed
//! before any CQL is read; with TLS optional, the first byte decides, as in Cassandra: a TLS
//! record starts with its content type, a handshake being 0x16, while a CQL frame starts
//! with its version (at most 0x05 for a request, 0x85 for a response). Failures are
//! returned, never panics; the caller logs and counts them.

use super::handler::TlsInfo;
use super::shared::Tls;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;

/// The first byte of a TLS handshake record (content type 22).
const TLS_HANDSHAKE: u8 = 0x16;

/// A connection's byte stream.
pub trait Transport: AsyncRead + AsyncWrite + Unpin + Send + 'static {
    /// The negotiated protocol and cipher suite, for a TLS stream.
    fn tls_info(&self) -> Option<TlsInfo>;
}

impl Transport for TcpStream {
    fn tls_info(&self) -> Option<TlsInfo> {
        None
    }
}

impl Transport for TlsStream<TcpStream> {
    fn tls_info(&self) -> Option<TlsInfo> {
        let session = self.get_ref().1;
        let protocol = match session.protocol_version()? {
            rustls::ProtocolVersion::TLSv1_3 => "TLSv1.3",
            rustls::ProtocolVersion::TLSv1_2 => "TLSv1.2",
            _ => "TLS",
        };
        let suite = session.negotiated_cipher_suite()?.suite();
        let cipher_suite = crate::config::cipher_suite_name(suite)
            .or(suite.as_str())
            .unwrap_or("unknown");
        Some(TlsInfo {
            protocol,
            cipher_suite,
        })
    }
}

/// A started connection.
pub(crate) enum Opened {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

/// Why a connection did not start.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OpenError {
    #[error("no TLS handshake within {0:?}")]
    Timeout(Duration),
    #[error("TLS handshake failed: {0}")]
    Handshake(std::io::Error),
    #[error("closed before sending anything")]
    Closed,
}

/// Starts a connection on `socket`: as is without TLS; with TLS, after its handshake (or,
/// when TLS is optional, as is if the client's first byte is not a TLS handshake's).
pub(crate) async fn open(
    socket: TcpStream,
    tls: Option<&Tls>,
    timeout: Duration,
) -> Result<Opened, OpenError> {
    let Some(tls) = tls else {
        return Ok(Opened::Plain(socket));
    };
    let start = async {
        if !tls.required {
            let mut first = [0u8; 1];
            match socket.peek(&mut first).await {
                Ok(0) | Err(_) => return Err(OpenError::Closed),
                Ok(_) if first[0] != TLS_HANDSHAKE => return Ok(Opened::Plain(socket)),
                Ok(_) => {}
            }
        }
        tls.acceptor
            .accept(socket)
            .await
            .map(|s| Opened::Tls(Box::new(s)))
            .map_err(OpenError::Handshake)
    };
    tokio::time::timeout(timeout, start)
        .await
        .map_err(|_| OpenError::Timeout(timeout))?
}
