//! A blocking HTTP/1.1 client for the REST API over `std::net::TcpStream` (one connection
//! per request, `Connection: close`), used by `cairn nodetool`; HTTPS through rustls (the
//! server's TLS library) when given a CA ([`tls_config`]), with the node's bearer token
//! when given one ([`Client::with_token`]).
//!
//! Invariant: the token is only ever written into the `Authorization` header, never into an
//! error message.

use cairn_server::rest::guard::Token;
use cairn_server::rest::http::percent_encode;
use cairn_server::rest::json::Json;
use cairn_server::tls::{certificates, private_key, TlsError};
use rustls::crypto::ring;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Connecting gives up after this long.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a request failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientError {
    /// No connection to `addr`.
    Connect {
        /// `host:port`.
        addr: String,
        /// The system's reason.
        reason: String,
    },
    /// The connection broke or the response was not HTTP.
    Protocol(String),
    /// The TLS handshake or session failed.
    Tls {
        /// `host:port`.
        addr: String,
        /// rustls' reason, with a hint.
        reason: String,
    },
    /// The node answered 401: no bearer token, or not its token.
    Unauthorized {
        /// `host:port`.
        addr: String,
        /// Whether a token was sent.
        sent_token: bool,
    },
    /// The server answered with an error status.
    Http {
        /// The status.
        status: u16,
        /// The error body's `message` (or the body).
        message: String,
    },
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Connect { addr, reason } => {
                write!(
                    f,
                    "Failed to connect to '{addr}' - ConnectException: '{reason}'."
                )
            }
            ClientError::Protocol(m) => write!(f, "bad response from the REST API: {m}"),
            ClientError::Tls { addr, reason } => {
                write!(f, "Failed to connect to '{addr}' - TLS: '{reason}'.")
            }
            ClientError::Unauthorized { addr, sent_token } => {
                let why = if *sent_token {
                    "the node refused the bearer token: --token-file (or CAIRN_API_TOKEN_FILE) \
                     must name a file holding the token of the node's \
                     api_authorization.token_file"
                } else {
                    "the REST API requires a bearer token: pass --token-file FILE (or set \
                     CAIRN_API_TOKEN_FILE=FILE) naming a file that holds the token of the \
                     node's api_authorization.token_file"
                };
                write!(
                    f,
                    "Failed to connect to '{addr}' - 401 Unauthorized: '{why}'."
                )
            }
            ClientError::Http { message, .. } => f.write_str(message),
        }
    }
}

impl std::error::Error for ClientError {}

/// A REST API endpoint.
#[derive(Debug, Clone)]
pub struct Client {
    host: String,
    port: u16,
    read_timeout: Option<Duration>,
    token: Option<Token>,
    tls: Option<Arc<ClientConfig>>,
}

/// The HTTPS configuration for a node whose certificate `ca` (PEM CA certificates) signs,
/// presenting `client` (PEM certificate chain, PEM private key) when given. Errors name the
/// option and the file.
pub fn tls_config(ca: &Path, client: Option<(&Path, &Path)>) -> Result<Arc<ClientConfig>, String> {
    let file_error = |option: &str, e: TlsError| match e {
        TlsError::File { path, problem, .. } => format!("{option} {}: {problem}", path.display()),
        TlsError::Config { problem, .. } => format!("{option}: {problem}"),
    };
    let mut roots = RootCertStore::empty();
    for cert in certificates("truststore", ca).map_err(|e| file_error("--ca", e))? {
        roots
            .add(cert)
            .map_err(|e| format!("--ca {}: not a usable CA certificate: {e}", ca.display()))?;
    }
    let builder = ClientConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots);
    let config = match client {
        None => builder.with_no_client_auth(),
        Some((cert, key)) => {
            let chain = certificates("certificate", cert).map_err(|e| file_error("--cert", e))?;
            let key_der = private_key("private_key", key).map_err(|e| file_error("--key", e))?;
            builder
                .with_client_auth_cert(chain, key_der)
                .map_err(|e| format!("--key {}: does not go with --cert: {e}", key.display()))?
        }
    };
    Ok(Arc::new(config))
}

impl Client {
    /// A client for `host:port`. Reads wait forever by default (a major compaction
    /// answers when it is done).
    pub fn new(host: impl Into<String>, port: u16) -> Client {
        Client {
            host: host.into(),
            port,
            read_timeout: None,
            token: None,
            tls: None,
        }
    }

    /// Sends `Authorization: Bearer <token>` with every request.
    pub fn with_token(mut self, token: Token) -> Client {
        self.token = Some(token);
        self
    }

    /// Speaks HTTPS with `config` ([`tls_config`]).
    pub fn with_tls(mut self, config: Arc<ClientConfig>) -> Client {
        self.tls = Some(config);
        self
    }

    /// Limits how long a response may take.
    pub fn with_read_timeout(mut self, timeout: Duration) -> Client {
        self.read_timeout = Some(timeout);
        self
    }

    /// `host:port`.
    pub fn addr(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// GET `path` with query parameters; the JSON body (`Null` when empty).
    pub fn get(&self, path: &str, params: &[(&str, &str)]) -> Result<Json, ClientError> {
        self.request("GET", path, params)
    }

    /// POST `path` with query parameters; the JSON body (`Null` when empty).
    pub fn post(&self, path: &str, params: &[(&str, &str)]) -> Result<Json, ClientError> {
        self.request("POST", path, params)
    }

    /// GET `path`; the body as text (the Prometheus page), an error for a non-200 status.
    pub fn get_text(&self, path: &str) -> Result<String, ClientError> {
        let (status, body) = self.exchange("GET", path)?;
        let text = String::from_utf8_lossy(&body).into_owned();
        self.check_authorized(status)?;
        if status != 200 {
            return Err(ClientError::Http {
                status,
                message: format!("HTTP {status}: {}", text.trim()),
            });
        }
        Ok(text)
    }

    /// Sends one request.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        params: &[(&str, &str)],
    ) -> Result<Json, ClientError> {
        let mut target = path.to_string();
        for (i, (k, v)) in params.iter().enumerate() {
            target.push(if i == 0 { '?' } else { '&' });
            target.push_str(&percent_encode(k));
            target.push('=');
            target.push_str(&percent_encode(v));
        }
        let (status, body) = self.exchange(method, &target)?;
        self.check_authorized(status)?;
        let text = String::from_utf8_lossy(&body);
        let parsed = if text.trim().is_empty() {
            Ok(Json::Null)
        } else {
            Json::parse(&text)
        };
        if status != 200 {
            let message = parsed
                .ok()
                .and_then(|j| j.get("message").and_then(Json::as_str).map(str::to_string))
                .unwrap_or_else(|| format!("HTTP {status}: {}", text.trim()));
            return Err(ClientError::Http { status, message });
        }
        parsed.map_err(|e| ClientError::Protocol(format!("invalid JSON body: {e}")))
    }

    fn check_authorized(&self, status: u16) -> Result<(), ClientError> {
        if status == 401 {
            return Err(ClientError::Unauthorized {
                addr: self.addr(),
                sent_token: self.token.is_some(),
            });
        }
        Ok(())
    }

    fn exchange(&self, method: &str, target: &str) -> Result<(u16, Vec<u8>), ClientError> {
        let addr = self.addr();
        let connect_err = |reason: String| ClientError::Connect {
            addr: addr.clone(),
            reason,
        };
        let addrs: Vec<_> = (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|e| connect_err(e.to_string()))?
            .collect();
        let mut last = String::from("no address");
        let mut stream = None;
        for a in addrs {
            match TcpStream::connect_timeout(&a, CONNECT_TIMEOUT) {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = describe(&e),
            }
        }
        let stream = stream.ok_or_else(|| connect_err(last))?;
        let io = |e: std::io::Error| ClientError::Protocol(e.to_string());
        stream.set_read_timeout(self.read_timeout).map_err(io)?;
        let mut req = format!(
            "{method} {target} HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json\r\nContent-Length: 0\r\nConnection: close\r\n"
        );
        if let Some(token) = &self.token {
            req.push_str("Authorization: Bearer ");
            req.push_str(token.expose());
            req.push_str("\r\n");
        }
        req.push_str("\r\n");
        let raw = match &self.tls {
            None => {
                // A TLS-only face closes a plaintext client without an HTTP answer.
                let tls_only = || {
                    ClientError::Protocol(
                        "the node closed the connection without answering: if its REST API \
                         serves TLS (api_encryption_options), pass --ca (and --cert and --key \
                         when it checks client certificates)"
                            .into(),
                    )
                };
                match send(stream, req.as_bytes()) {
                    // Nothing, or a TLS alert record (content type 21) refusing the
                    // "handshake".
                    Ok(raw) if raw.first().is_none_or(|b| *b == 0x15) => return Err(tls_only()),
                    Ok(raw) => raw,
                    Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                        return Err(tls_only())
                    }
                    Err(e) => return Err(io(e)),
                }
            }
            Some(config) => {
                let tls_err = |reason: String| ClientError::Tls {
                    addr: addr.clone(),
                    reason,
                };
                let name = ServerName::try_from(self.host.clone())
                    .map_err(|e| tls_err(format!("`{}` is not a server name: {e}", self.host)))?;
                let conn = ClientConnection::new(Arc::clone(config), name)
                    .map_err(|e| tls_err(e.to_string()))?;
                send(StreamOwned::new(conn, stream), req.as_bytes()).map_err(|e| {
                    let reason = e.to_string();
                    let hint = if reason.contains("CertificateRequired")
                        || reason.contains("certificate required")
                    {
                        " (the node checks client certificates: pass --cert and --key)"
                    } else if reason.contains("InvalidContentType")
                        || reason.contains("corrupt message")
                    {
                        " (the node's REST API does not seem to serve TLS: leave out --ca)"
                    } else {
                        ""
                    };
                    tls_err(format!("{reason}{hint}"))
                })?
            }
        };
        parse_response(&raw)
    }
}

/// Writes `req` and reads the whole response (the server closes after it).
fn send<S: Read + Write>(mut stream: S, req: &[u8]) -> std::io::Result<Vec<u8>> {
    stream.write_all(req)?;
    stream.flush()?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    Ok(raw)
}

/// `Connection refused` rather than `Connection refused (os error 111)`.
fn describe(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Parses a complete response: status and body (Content-Length, chunked, or to EOF).
pub fn parse_response(raw: &[u8]) -> Result<(u16, Vec<u8>), ClientError> {
    let bad = |m: &str| ClientError::Protocol(m.to_string());
    let head_end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| bad("no complete response head"))?;
    let head =
        std::str::from_utf8(&raw[..head_end]).map_err(|_| bad("response head is not UTF-8"))?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or("");
    if !version.starts_with("HTTP/1.") {
        return Err(bad("not an HTTP/1.x response"));
    }
    let status: u16 = parts
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("bad status line"))?;
    let mut length = None;
    let mut chunked = false;
    for line in lines {
        if let Some((k, v)) = line.split_once(':') {
            match k.trim().to_ascii_lowercase().as_str() {
                "content-length" => length = v.trim().parse::<usize>().ok(),
                "transfer-encoding" => chunked = v.to_ascii_lowercase().contains("chunked"),
                _ => {}
            }
        }
    }
    let body = &raw[head_end + 4..];
    let body = if chunked {
        dechunk(body).ok_or_else(|| bad("bad chunked body"))?
    } else if let Some(n) = length {
        body.get(..n).ok_or_else(|| bad("truncated body"))?.to_vec()
    } else {
        body.to_vec()
    };
    Ok((status, body))
}

fn dechunk(mut b: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = b.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&b[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        b = &b[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(b.get(..size)?);
        b = b.get(size + 2..)?;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn responses() {
        let (s, b) = parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n[]").unwrap();
        assert_eq!((s, b.as_slice()), (200, &b"[]"[..]));
        let (s, b) = parse_response(
            b"HTTP/1.1 400 Bad\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
        )
        .unwrap();
        assert_eq!((s, b.as_slice()), (400, &b"abcde"[..]));
        assert!(parse_response(b"garbage").is_err());
        assert!(parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n[]").is_err());
    }
}
