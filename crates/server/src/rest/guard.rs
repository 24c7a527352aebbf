//! Who may use an admin face (the REST API, the Prometheus endpoint): its bearer token and
//! its TLS, set up when the node starts from the face's [`AdminAccess`], and the check every
//! request passes before its handler runs ([`Guard::check`]).
//!
//! Invariants:
//! - a face on a non-loopback address without a token, without TLS that checks client
//!   certificates and without its opt-out never starts ([`AdminGuards::start`] refuses it
//!   with [`Config::admin_exposure`]'s message);
//! - a token file that is missing, empty, too short, not one line of visible characters or
//!   readable or writable by others is refused with its path ([`read_token_file`]);
//! - with a token, a request without `Authorization: Bearer <token>` is answered 401 with
//!   `WWW-Authenticate: Bearer` and never reaches the handler; tokens are compared in
//!   constant time and never logged (their `Debug` is redacted); each refusal is counted
//!   ([`FaceStats`], exported on `/metrics`);
//! - with TLS, nothing is read from a connection before its handshake completes, so a
//!   client without a certificate the truststore signs (when `require_client_auth`) never
//!   gets an HTTP answer.

use super::http::{Request, Response};
use crate::config::{is_loopback, AdminAccess, AdminFace, Config};
use crate::protocol::Tls;
use crate::tls::{server_config, TlsError};
use parking_lot::Mutex;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The shortest token accepted: 16 characters (a `openssl rand -hex 32` token has 64).
pub const MIN_TOKEN_LEN: usize = 16;

/// Refusals are logged at most this often per face (each one is counted).
const LOG_EVERY: Duration = Duration::from_secs(60);

/// A bearer token. Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// The token's text (to send it: nodetool's `Authorization` header).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether `offered` is this token, in time that does not depend on where they differ.
    pub fn matches(&self, offered: &[u8]) -> bool {
        constant_time_eq(self.0.as_bytes(), offered)
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

/// Equality whose time depends only on the lengths: every byte pair is compared, and the
/// comparison is hidden from the optimizer so it cannot stop at the first difference.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = u8::from(a.len() != b.len());
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= std::hint::black_box(x ^ y);
    }
    std::hint::black_box(diff) == 0
}

/// A token file that cannot be used: its path and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct TokenFileError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong with it.
    pub problem: String,
}

/// Reads a bearer token from `path`: one line of visible ASCII characters (surrounding
/// whitespace and the final newline are trimmed, as Prometheus' `credentials_file` is), at
/// least [`MIN_TOKEN_LEN`] of them, in a regular file nobody but its owner and group may
/// read or write. The node and nodetool read theirs with it.
pub fn read_token_file(path: &Path) -> Result<Token, TokenFileError> {
    let fail = |problem: String| TokenFileError {
        path: path.to_path_buf(),
        problem,
    };
    let meta = std::fs::metadata(path).map_err(|e| fail(format!("cannot read it: {e}")))?;
    if !meta.is_file() {
        return Err(fail("is not a regular file".into()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o006 != 0 {
            return Err(fail(format!(
                "is {} by every user (mode {mode:04o}): a token anyone can read protects \
                 nothing; make it readable only by its owner (and group): `chmod 600 {}`",
                if mode & 0o004 != 0 {
                    "readable"
                } else {
                    "writable"
                },
                path.display()
            )));
        }
    }
    let bytes = std::fs::read(path).map_err(|e| fail(format!("cannot read it: {e}")))?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| fail("is not text: the token is one line of visible characters".into()))?
        .trim();
    if text.is_empty() {
        return Err(fail(
            "is empty: put the token in it (e.g. `openssl rand -hex 32 > FILE`)".into(),
        ));
    }
    if !text.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(fail(
            "does not hold one token: the token is one line of visible ASCII characters, \
             without spaces"
                .into(),
        ));
    }
    if text.len() < MIN_TOKEN_LEN {
        return Err(fail(format!(
            "holds a token of {} characters: use at least {MIN_TOKEN_LEN} (e.g. `openssl \
             rand -hex 32 > FILE`)",
            text.len()
        )));
    }
    Ok(Token(text.to_string()))
}

/// What a face refused, for `/metrics`.
#[derive(Debug, Default)]
pub struct FaceStats {
    unauthorized: AtomicU64,
    tls_handshake_failures: AtomicU64,
    last_logged: Mutex<Option<Instant>>,
}

impl FaceStats {
    /// Requests answered 401: no bearer token, or a wrong one.
    pub fn unauthorized(&self) -> u64 {
        self.unauthorized.load(Ordering::Relaxed)
    }

    /// Connections closed before their first request: a failed or timed-out TLS handshake
    /// (a client without an accepted certificate, a plaintext client).
    pub fn tls_handshake_failures(&self) -> u64 {
        self.tls_handshake_failures.load(Ordering::Relaxed)
    }

    pub(crate) fn count_handshake_failure(&self) {
        self.tls_handshake_failures.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether a refusal may be logged now (at most once a [`LOG_EVERY`]).
    fn may_log(&self) -> bool {
        let mut last = self.last_logged.lock();
        let now = Instant::now();
        if last.is_some_and(|t| now.duration_since(t) < LOG_EVERY) {
            return false;
        }
        *last = Some(now);
        true
    }
}

/// Why an admin face cannot start.
#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    /// It would listen on a non-loopback address without authentication.
    #[error("{0}")]
    Exposed(String),
    /// Its token file cannot be used.
    #[error("{key}.token_file: {problem}")]
    TokenFile {
        /// `api_authorization`, `prometheus_authorization`.
        key: &'static str,
        /// The file and what is wrong with it (not a `source`: the message has it).
        problem: TokenFileError,
    },
    /// Its TLS cannot be set up; `section` is the face's `*_encryption_options`.
    #[error("{section}.{key}: {}: {problem}", path.display())]
    TlsFile {
        section: &'static str,
        key: &'static str,
        path: PathBuf,
        problem: String,
    },
    /// Its TLS options do not go together.
    #[error("{section}: {problem}")]
    TlsConfig {
        section: &'static str,
        problem: String,
    },
}

/// One face's access control: its token, its TLS, its counters.
pub struct Guard {
    face: AdminFace,
    token: Option<Token>,
    tls: Option<Tls>,
    stats: Arc<FaceStats>,
}

impl Guard {
    /// A face anyone who reaches it may use (a loopback face without settings; tests).
    pub fn open(face: AdminFace) -> Guard {
        Guard {
            face,
            token: None,
            tls: None,
            stats: Arc::default(),
        }
    }

    /// Requires `Authorization: Bearer <token>` on every request.
    pub fn with_token(mut self, token: Token) -> Guard {
        self.token = Some(token);
        self
    }

    /// Serves only TLS, with `tls`'s configuration (its `required` is ignored: always).
    pub fn with_tls(mut self, tls: Tls) -> Guard {
        self.tls = Some(Tls {
            required: true,
            ..tls
        });
        self
    }

    /// The guard `access` describes for `face`, listening on `ip`: refuses an exposed face,
    /// reads the token file and the TLS files.
    pub fn for_face(config: &Config, face: AdminFace, ip: IpAddr) -> Result<Guard, GuardError> {
        if let Some(why) = config.admin_exposure(face, ip) {
            return Err(GuardError::Exposed(why));
        }
        let access: &AdminAccess = config.admin_access(face);
        let mut guard = Guard::open(face);
        if let Some(path) = &access.token_file {
            let token = read_token_file(path).map_err(|problem| GuardError::TokenFile {
                key: face.authorization_key(),
                problem,
            })?;
            guard = guard.with_token(token);
        }
        if access.encryption.enabled {
            let section = face.encryption_key();
            let config = server_config(&access.encryption).map_err(|e| match e {
                TlsError::File {
                    key, path, problem, ..
                } => GuardError::TlsFile {
                    section,
                    key,
                    path,
                    problem,
                },
                TlsError::Config { problem, .. } => GuardError::TlsConfig { section, problem },
            })?;
            guard = guard.with_tls(Tls {
                acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
                required: true,
            });
        }
        if access.allow_unauthenticated
            && !is_loopback(ip)
            && guard.token.is_none()
            && !access.checks_client_certificates()
        {
            tracing::warn!(
                "{}: {} is set: anyone who reaches {ip} may use it",
                face.title(),
                face.opt_out_key()
            );
        }
        Ok(guard)
    }

    /// The face.
    pub fn face(&self) -> AdminFace {
        self.face
    }

    /// Its counters.
    pub fn stats(&self) -> &Arc<FaceStats> {
        &self.stats
    }

    /// Its TLS, if it serves TLS.
    pub fn tls(&self) -> Option<&Tls> {
        self.tls.as_ref()
    }

    /// How it is protected, for the startup log line.
    pub fn describe(&self) -> &'static str {
        match (&self.token, &self.tls) {
            (Some(_), Some(_)) => "TLS, bearer token required",
            (Some(_), None) => "bearer token required",
            (None, Some(_)) => "TLS",
            (None, None) => "no authentication",
        }
    }

    /// `Ok` when `req` may reach the handler; otherwise the 401 to send. `peer` is only for
    /// the (rate-limited) log line.
    pub fn check(&self, req: &Request, peer: SocketAddr) -> Result<(), Response> {
        let Some(token) = &self.token else {
            return Ok(());
        };
        let offered = req.authorization.as_ref().and_then(|a| a.bearer());
        if offered.is_some_and(|t| token.matches(t.as_bytes())) {
            return Ok(());
        }
        self.stats.unauthorized.fetch_add(1, Ordering::Relaxed);
        if self.stats.may_log() {
            tracing::warn!(
                peer = %peer,
                "{}: refused {} {} ({}); {} refused so far",
                self.face.title(),
                req.method,
                req.path,
                if offered.is_some() { "wrong bearer token" } else { "no bearer token" },
                self.stats.unauthorized()
            );
        }
        let realm = format!("realm=\"cairn-{}\"", self.face.name());
        let (challenge, message) = match offered {
            None => (
                format!("Bearer {realm}"),
                "Unauthorized: this endpoint requires `Authorization: Bearer <token>` (the \
                 token in the node's token_file)",
            ),
            Some(_) => (
                format!("Bearer {realm}, error=\"invalid_token\""),
                "Unauthorized: the bearer token is not this endpoint's",
            ),
        };
        let mut resp = Response::error(401, message);
        resp.headers.push(("WWW-Authenticate", challenge));
        Err(resp)
    }
}

/// Both faces' guards, made when the node starts.
pub struct AdminGuards {
    /// The REST API's.
    pub api: Guard,
    /// The Prometheus endpoint's.
    pub prometheus: Guard,
}

impl AdminGuards {
    /// The guards `config` describes for the faces listening on `api` and `prometheus`
    /// (their resolved addresses); the first face that cannot start stops the node.
    pub fn start(
        config: &Config,
        api: IpAddr,
        prometheus: IpAddr,
    ) -> Result<AdminGuards, GuardError> {
        Ok(AdminGuards {
            api: Guard::for_face(config, AdminFace::Api, api)?,
            prometheus: Guard::for_face(config, AdminFace::Prometheus, prometheus)?,
        })
    }

    /// Each face's counters, for `/metrics`.
    pub fn stats(&self) -> Vec<(AdminFace, Arc<FaceStats>)> {
        vec![
            (AdminFace::Api, Arc::clone(&self.api.stats)),
            (AdminFace::Prometheus, Arc::clone(&self.prometheus.stats)),
        ]
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        let t = Token("0123456789abcdef".into());
        assert!(t.matches(b"0123456789abcdef"));
        assert!(!t.matches(b"0123456789abcdeF"));
        assert!(!t.matches(b"0123456789abcde"));
        assert!(!t.matches(b"0123456789abcdef0"));
        assert!(!t.matches(b""));
        assert_eq!(format!("{t:?}"), "Token(<redacted>)");
    }

    #[test]
    fn token_files() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str, mode: u32| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
            p
        };
        let good = write("good", "  0123456789abcdef0123\n", 0o600);
        assert_eq!(
            read_token_file(&good).unwrap().expose(),
            "0123456789abcdef0123"
        );
        assert!(read_token_file(&write("group", "0123456789abcdef", 0o640)).is_ok());
        let problem = |p: &Path| read_token_file(p).unwrap_err().to_string();
        let e = problem(&write("world", "0123456789abcdef", 0o644));
        assert!(
            e.contains("world") && e.contains("readable by every user"),
            "{e}"
        );
        let e = problem(&write("ww", "0123456789abcdef", 0o602));
        assert!(e.contains("writable by every user"), "{e}");
        assert!(problem(&write("empty", "\n", 0o600)).contains("is empty"));
        assert!(problem(&write("short", "abc", 0o600)).contains("3 characters"));
        assert!(problem(&write("two", "0123456789 abcdef", 0o600)).contains("one token"));
        let e = problem(&dir.path().join("missing"));
        assert!(e.contains("missing: cannot read it"), "{e}");
        assert!(problem(dir.path()).contains("not a regular file"));
    }
}
