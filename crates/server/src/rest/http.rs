//! A minimal HTTP/1.1 server side: request heads and bodies read from a socket with size
//! limits, query strings decoded, responses written with `Content-Length`. Keep-alive and
//! pipelining work; chunked request bodies are refused (no client of the admin API sends
//! them). Every malformed input becomes an error status, never a panic.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Largest request head (request line and headers).
pub const MAX_HEAD: usize = 16 << 10;
/// Largest request body.
pub const MAX_BODY: usize = 1 << 20;

/// A parsed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// `GET`, `POST`, …
    pub method: String,
    /// The decoded path segments (`/a/b/` → `["a", "b"]`).
    pub segments: Vec<String>,
    /// The raw path (without query).
    pub path: String,
    /// Query parameters (and form-encoded body parameters), decoded, in order.
    pub params: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// Whether the connection stays open after the response.
    pub keep_alive: bool,
    /// The `Authorization` header, if any.
    pub authorization: Option<Authorization>,
}

/// An `Authorization` header's value. Its `Debug` never shows the credentials.
#[derive(Clone, PartialEq, Eq)]
pub struct Authorization(String);

impl Authorization {
    /// The token of a `Bearer` credential (the scheme is case-insensitive).
    pub fn bearer(&self) -> Option<&str> {
        let (scheme, token) = self.0.split_once(' ')?;
        scheme
            .eq_ignore_ascii_case("bearer")
            .then(|| token.trim())
            .filter(|t| !t.is_empty())
    }
}

impl std::fmt::Debug for Authorization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Authorization(<redacted>)")
    }
}

impl Request {
    /// The first value of a parameter.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A response: a status and a body (JSON, empty for `void`; text for `/metrics`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// HTTP status.
    pub status: u16,
    /// Body text.
    pub body: String,
    /// `Content-Type` of the body.
    pub content_type: &'static str,
    /// Other headers (`WWW-Authenticate` of a 401).
    pub headers: Vec<(&'static str, String)>,
}

/// The REST API's content type.
pub const JSON: &str = "application/json";

impl Response {
    /// 200 with a JSON body.
    pub fn ok(body: String) -> Response {
        Response {
            status: 200,
            body,
            content_type: JSON,
            headers: Vec::new(),
        }
    }

    /// 200 with a body of another type.
    pub fn typed(body: String, content_type: &'static str) -> Response {
        Response {
            status: 200,
            body,
            content_type,
            headers: Vec::new(),
        }
    }

    /// 200 with no body (ScyllaDB's `json_void`).
    pub fn void() -> Response {
        Response::ok(String::new())
    }

    /// An error in ScyllaDB's shape: `{"message": …, "code": status}`.
    pub fn error(status: u16, message: impl Into<String>) -> Response {
        let body = super::json::Json::obj([
            ("message", super::json::Json::Str(message.into())),
            ("code", super::json::Json::Int(i64::from(status))),
        ])
        .to_text();
        Response {
            status,
            body,
            content_type: JSON,
            headers: Vec::new(),
        }
    }
}

/// Why a request could not be read: the status to answer before closing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpError {
    /// Status to send.
    pub status: u16,
    /// Message for the error body.
    pub message: String,
}

fn bad(status: u16, message: impl Into<String>) -> HttpError {
    HttpError {
        status,
        message: message.into(),
    }
}

/// Reads one request from `stream`, using and refilling `buf` (bytes past the request
/// stay in it for the next one). `Ok(None)`: the peer closed the connection cleanly.
pub async fn read_request<S: AsyncRead + Unpin>(
    stream: &mut S,
    buf: &mut Vec<u8>,
) -> Result<Option<Request>, HttpError> {
    let head_len = loop {
        if let Some(pos) = find_head_end(buf) {
            break pos;
        }
        if buf.len() > MAX_HEAD {
            return Err(bad(431, "request head too large"));
        }
        if fill(stream, buf).await? == 0 {
            if buf.iter().all(|b| b.is_ascii_whitespace()) {
                return Ok(None);
            }
            return Err(bad(400, "connection closed in the middle of a request"));
        }
    };
    if head_len > MAX_HEAD {
        return Err(bad(431, "request head too large"));
    }
    let head =
        std::str::from_utf8(&buf[..head_len]).map_err(|_| bad(400, "request head is not UTF-8"))?;
    let mut req = parse_head(head)?;
    let content_length = req.1;
    if content_length > MAX_BODY {
        return Err(bad(413, "request body too large"));
    }
    let total = head_len + 4 + content_length;
    while buf.len() < total {
        if fill(stream, buf).await? == 0 {
            return Err(bad(
                400,
                "connection closed in the middle of a request body",
            ));
        }
    }
    req.0.body = buf[head_len + 4..total].to_vec();
    buf.drain(..total);
    if req.2 {
        let body = String::from_utf8_lossy(&req.0.body).into_owned();
        req.0.params.extend(parse_query(&body)?);
    }
    Ok(Some(req.0))
}

async fn fill<S: AsyncRead + Unpin>(stream: &mut S, buf: &mut Vec<u8>) -> Result<usize, HttpError> {
    let mut chunk = [0u8; 4096];
    let n = stream
        .read(&mut chunk)
        .await
        .map_err(|e| bad(400, format!("read error: {e}")))?;
    buf.extend_from_slice(&chunk[..n]);
    Ok(n)
}

fn find_head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n")
}

/// Parses the head; returns the request, the body length and whether the body is a form.
fn parse_head(head: &str) -> Result<(Request, usize, bool), HttpError> {
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or("");
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad(400, "malformed request line"));
    };
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(bad(400, "malformed method"));
    }
    let http10 = match version {
        "HTTP/1.1" => false,
        "HTTP/1.0" => true,
        _ => return Err(bad(505, "only HTTP/1.0 and HTTP/1.1 are supported")),
    };
    let mut keep_alive = !http10;
    let mut content_length = 0usize;
    let mut form = false;
    let mut authorization = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            return Err(bad(400, "malformed header line"));
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => {
                content_length = value
                    .parse()
                    .map_err(|_| bad(400, "invalid Content-Length"))?;
            }
            "transfer-encoding" if !value.eq_ignore_ascii_case("identity") => {
                return Err(bad(501, "chunked request bodies are not supported"));
            }
            "connection" => {
                let v = value.to_ascii_lowercase();
                if v.contains("close") {
                    keep_alive = false;
                } else if v.contains("keep-alive") {
                    keep_alive = true;
                }
            }
            "authorization" => authorization = Some(Authorization(value.to_string())),
            "content-type" => {
                form = value
                    .to_ascii_lowercase()
                    .starts_with("application/x-www-form-urlencoded");
            }
            _ => {}
        }
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    if !path.starts_with('/') {
        return Err(bad(400, "the request target must be an absolute path"));
    }
    let segments = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| percent_decode(s, false))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((
        Request {
            method: method.to_string(),
            segments,
            path: path.to_string(),
            params: parse_query(query)?,
            body: Vec::new(),
            keep_alive,
            authorization,
        },
        content_length,
        form,
    ))
}

/// Decodes `a=1&b=x%2Cy` (also `+` as space).
pub fn parse_query(q: &str) -> Result<Vec<(String, String)>, HttpError> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            Ok((percent_decode(k, true)?, percent_decode(v, true)?))
        })
        .collect()
}

fn percent_decode(s: &str, plus_is_space: bool) -> Result<String, HttpError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = b
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| bad(400, "invalid percent-encoding"))?;
                out.push(hex);
                i += 3;
            }
            b'+' if plus_is_space => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| bad(400, "percent-encoded text is not UTF-8"))
}

/// Percent-encodes a path segment or query value (for the client).
pub fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The reason phrase of the statuses we send.
pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Unknown",
    }
}

/// Writes a response.
pub async fn write_response<S: AsyncWrite + Unpin>(
    stream: &mut S,
    resp: &Response,
    keep_alive: bool,
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: {}\r\n",
        resp.status,
        reason(resp.status),
        resp.content_type,
        resp.body.len(),
        if keep_alive { "keep-alive" } else { "close" }
    );
    for (name, value) in &resp.headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    out.extend_from_slice(resp.body.as_bytes());
    stream.write_all(&out).await?;
    stream.flush().await
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn heads() {
        let (r, len, form) = parse_head(
            "POST /storage_service/keyspace_flush/k%20s?cf=a,b&x HTTP/1.1\r\nHost: x\r\nContent-Length: 3",
        )
        .unwrap();
        assert_eq!(r.segments, ["storage_service", "keyspace_flush", "k s"]);
        assert_eq!(r.param("cf"), Some("a,b"));
        assert_eq!(r.param("x"), Some(""));
        assert!(r.keep_alive);
        assert_eq!(len, 3);
        assert!(!form);
        assert!(parse_head("GET / HTTP/2").is_err());
        assert!(parse_head("GET /%zz HTTP/1.1").is_err());
        assert!(parse_head("get / HTTP/1.1").is_err());
        assert!(parse_head("GET / HTTP/1.1\r\nbroken").is_err());
        let (r, _, _) = parse_head("GET / HTTP/1.0").unwrap();
        assert!(!r.keep_alive);
        assert_eq!(r.authorization, None);
        let (r, _, _) = parse_head("GET / HTTP/1.1\r\nauthorization: bearer  abc ").unwrap();
        let a = r.authorization.unwrap();
        assert_eq!(a.bearer(), Some("abc"));
        assert_eq!(format!("{a:?}"), "Authorization(<redacted>)");
        let (r, _, _) = parse_head("GET / HTTP/1.1\r\nAuthorization: Basic YTpi").unwrap();
        assert_eq!(r.authorization.unwrap().bearer(), None);
    }
}
