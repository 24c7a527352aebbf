//! Who may use the admin faces — the REST API and the Prometheus endpoint — and where they
//! may listen. Cassandra and ScyllaDB have no such keys (their REST API and metrics port
//! have no authentication at all): these are Cairn's own, one set per face `F` (`api`,
//! `prometheus`):
//!
//! - `F_authorization: {token_file: PATH}`: requests must carry `Authorization: Bearer
//!   <the file's content>`. The token lives in a file, never inline in the YAML, so the
//!   configuration can be shared and shown (`system_views.settings`) without the secret.
//! - `F_encryption_options`: TLS on the face, with `client_encryption_options`' names and
//!   rules (PEM `certificate` + `private_key` or `keystore`, `truststore`,
//!   `require_client_auth`, protocols, cipher suites). A face is TLS-only or plaintext:
//!   `optional: true` is refused.
//! - `F_allow_unauthenticated: true`: the operator accepts an open endpoint on a
//!   non-loopback address (a scrape on a trusted network; a container's private network).
//!
//! One block per face rather than one shared block: the credential a Prometheus server
//! holds to scrape should not also let it flush, drop snapshots or stop the native
//! transport. Both may name the same file when the operator wants one secret.
//!
//! Invariants: loading reads only text (the files are read when the node starts, by
//! `crate::rest::guard`); a face on a non-loopback address without a token, without TLS
//! that checks client certificates and without its opt-out never starts
//! ([`Config::admin_exposure`]).

use super::encryption::set_encryption_options;
use super::setters::Bad;
use super::yaml::{Node, Value};
use super::{ClientEncryption, Config};
use std::net::IpAddr;
use std::path::PathBuf;

/// One of the node's admin faces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdminFace {
    /// The REST admin API (`api_address:api_port`).
    Api,
    /// The Prometheus endpoint (`prometheus_address:prometheus_port`).
    Prometheus,
}

impl AdminFace {
    /// The face's key prefix (`api`, `prometheus`), also its `face` label in metrics.
    pub fn name(self) -> &'static str {
        match self {
            AdminFace::Api => "api",
            AdminFace::Prometheus => "prometheus",
        }
    }

    /// The face for people (`REST API`).
    pub fn title(self) -> &'static str {
        match self {
            AdminFace::Api => "REST API",
            AdminFace::Prometheus => "Prometheus endpoint",
        }
    }

    /// Where it listens: `api_address`, `prometheus_address`.
    pub fn address_key(self) -> &'static str {
        match self {
            AdminFace::Api => "api_address",
            AdminFace::Prometheus => "prometheus_address",
        }
    }

    /// `api_authorization`, `prometheus_authorization`.
    pub fn authorization_key(self) -> &'static str {
        match self {
            AdminFace::Api => "api_authorization",
            AdminFace::Prometheus => "prometheus_authorization",
        }
    }

    /// `api_encryption_options`, `prometheus_encryption_options`.
    pub fn encryption_key(self) -> &'static str {
        match self {
            AdminFace::Api => "api_encryption_options",
            AdminFace::Prometheus => "prometheus_encryption_options",
        }
    }

    /// `api_allow_unauthenticated`, `prometheus_allow_unauthenticated`.
    pub fn opt_out_key(self) -> &'static str {
        match self {
            AdminFace::Api => "api_allow_unauthenticated",
            AdminFace::Prometheus => "prometheus_allow_unauthenticated",
        }
    }

    /// What anyone who reaches an open face can do (for the refusal).
    fn exposure(self) -> &'static str {
        match self {
            AdminFace::Api => {
                "flush and compact tables, take and clear snapshots, load sstables and stop \
                 the native transport"
            }
            AdminFace::Prometheus => "read every metric of the node, its keyspaces and tables",
        }
    }
}

/// A face's access settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AdminAccess {
    /// `F_authorization.token_file`: the file holding the bearer token.
    pub token_file: Option<PathBuf>,
    /// `F_encryption_options`: TLS on the face (on when `enabled`).
    pub encryption: ClientEncryption,
    /// `F_allow_unauthenticated`: an open face on a non-loopback address is accepted.
    pub allow_unauthenticated: bool,
}

impl AdminAccess {
    /// Whether the face only answers clients with a certificate its truststore signs.
    pub fn checks_client_certificates(&self) -> bool {
        self.encryption.enabled && self.encryption.require_client_auth
    }
}

impl Config {
    /// The access settings of `face`.
    pub fn admin_access(&self, face: AdminFace) -> &AdminAccess {
        match face {
            AdminFace::Api => &self.api_access,
            AdminFace::Prometheus => &self.prometheus_access,
        }
    }

    /// The address `face` listens on, as configured.
    pub fn admin_address(&self, face: AdminFace) -> &str {
        match face {
            AdminFace::Api => &self.api_address,
            AdminFace::Prometheus => &self.prometheus_address,
        }
    }

    /// Why `face` may not listen on `ip` (its address, resolved) as configured: `None` on a
    /// loopback address, with a bearer token, with TLS that checks client certificates, or
    /// with the face's opt-out; otherwise the refusal, naming the address key (and its line
    /// in the file) and what to set. Pure: reads no file.
    pub fn admin_exposure(&self, face: AdminFace, ip: IpAddr) -> Option<String> {
        let access = self.admin_access(face);
        if is_loopback(ip)
            || access.token_file.is_some()
            || access.checks_client_certificates()
            || access.allow_unauthenticated
        {
            return None;
        }
        let key = face.address_key();
        let written = self.admin_address(face);
        let at = match (self.key_line(key), &self.source) {
            (Some(line), Some(file)) => {
                format!("`{key}: {written}` (line {line} of {})", file.display())
            }
            (Some(line), None) => format!("`{key}: {written}` (line {line})"),
            (None, _) => format!("`{key}` ({written}, from --listen-address or the default)"),
        };
        let f = face.name();
        Some(format!(
            "{at} is not a loopback address and the {title} has no authentication: anyone who \
             reaches it could {what}. Set `{f}_authorization: {{token_file: /path/to/token}}` \
             (a file readable only by the node's user holding at least 16 characters, e.g. \
             from `openssl rand -hex 32`), or `{f}_encryption_options` with `enabled: true`, \
             `require_client_auth: true` and a `truststore`; or accept an open endpoint with \
             `{f}_allow_unauthenticated: true`; or bind it to 127.0.0.1",
            title = face.title(),
            what = face.exposure(),
        ))
    }
}

impl Config {
    fn admin_access_mut(&mut self, face: AdminFace) -> &mut AdminAccess {
        match face {
            AdminFace::Api => &mut self.api_access,
            AdminFace::Prometheus => &mut self.prometheus_access,
        }
    }
}

/// Whether `ip` is a loopback address (127.0.0.0/8, ::1, or 127.x mapped into IPv6): only
/// the machine's own users reach a face bound there.
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// `F_allow_unauthenticated`.
pub(super) fn set_allow_unauthenticated(
    c: &mut Config,
    face: AdminFace,
    v: &Node,
) -> Result<(), Bad> {
    c.admin_access_mut(face).allow_unauthenticated = v.boolean()?;
    Ok(())
}

/// `F_authorization`: a mapping with `token_file`.
pub(super) fn set_authorization(c: &mut Config, face: AdminFace, v: &Node) -> Result<(), Bad> {
    let Value::Map(entries) = &v.value else {
        return Err(
            "expected a mapping: `{token_file: /path/to/token}` (the token itself never goes \
             in the configuration)"
                .into(),
        );
    };
    let mut token_file = None;
    for (k, line, n) in entries {
        match k.as_str() {
            "token_file" => {
                token_file = Some(
                    n.path()
                        .map_err(|e| Bad::Invalid(format!("`token_file` (line {line}): {e}")))?,
                )
            }
            "token" => {
                return Err(Bad::Invalid(format!(
                    "`token` (line {line}): the token never goes in the configuration; put it \
                     in a file readable only by the node's user and name it with `token_file`"
                )))
            }
            other => {
                return Err(Bad::Invalid(format!(
                    "unknown option `{other}` (line {line}); it reads token_file"
                )))
            }
        }
    }
    let Some(path) = token_file else {
        return Err("needs `token_file` (the file holding the bearer token)".into());
    };
    c.admin_access_mut(face).token_file = Some(path);
    Ok(())
}

/// `F_encryption_options`: `client_encryption_options`' options, TLS-only when enabled.
pub(super) fn set_face_encryption(c: &mut Config, face: AdminFace, v: &Node) -> Result<(), Bad> {
    let mut e = ClientEncryption::default();
    set_encryption_options(face.encryption_key(), &mut e, v)?;
    if e.optional == Some(true) {
        return Err(
            "`optional: true`: an admin face is TLS-only or plaintext, never both (plaintext \
             would bypass the client certificates); set `enabled: true`"
                .into(),
        );
    }
    c.admin_access_mut(face).encryption = e;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn load(text: &str) -> Config {
        Config::from_yaml_str(text, "t.yaml").unwrap().config
    }

    #[test]
    fn exposure_needs_loopback_or_protection() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let open = load("api_address: 10.1.2.3\nprometheus_address: 10.1.2.3\n");
        for face in [AdminFace::Api, AdminFace::Prometheus] {
            let msg = open.admin_exposure(face, ip("10.1.2.3")).unwrap();
            let key = face.address_key();
            assert!(msg.contains(&format!("`{key}: 10.1.2.3` (line")), "{msg}");
            assert!(msg.contains(face.authorization_key()), "{msg}");
            assert!(msg.contains(face.opt_out_key()), "{msg}");
            for lo in ["127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1"] {
                assert_eq!(open.admin_exposure(face, ip(lo)), None, "{lo}");
            }
            assert!(open.admin_exposure(face, ip("0.0.0.0")).is_some());
            assert!(open.admin_exposure(face, ip("::")).is_some());
        }
        let line = open
            .admin_exposure(AdminFace::Prometheus, ip("10.1.2.3"))
            .unwrap();
        assert!(line.contains("(line 2)"), "{line}");

        let token = load("api_address: 10.1.2.3\napi_authorization: {token_file: /t}\n");
        assert_eq!(token.admin_exposure(AdminFace::Api, ip("10.1.2.3")), None);
        assert!(token
            .admin_exposure(AdminFace::Prometheus, ip("10.1.2.3"))
            .is_some());

        let opt_out = load("prometheus_allow_unauthenticated: true\n");
        assert_eq!(
            opt_out.admin_exposure(AdminFace::Prometheus, ip("10.1.2.3")),
            None
        );
        assert!(opt_out
            .admin_exposure(AdminFace::Api, ip("10.1.2.3"))
            .is_some());

        // TLS without client certificates authenticates nobody.
        let tls = "api_encryption_options: {enabled: true, certificate: c.pem, private_key: k.pem";
        let server_only = load(&format!("{tls}}}\n"));
        assert!(server_only
            .admin_exposure(AdminFace::Api, ip("10.1.2.3"))
            .is_some());
        let mutual = load(&format!(
            "{tls}, require_client_auth: true, truststore: ca.pem}}\n"
        ));
        assert_eq!(mutual.admin_exposure(AdminFace::Api, ip("10.1.2.3")), None);
    }

    #[test]
    fn refusals() {
        let err = |text: &str| {
            Config::from_yaml_str(text, "t.yaml")
                .unwrap_err()
                .to_string()
        };
        let e = err("api_authorization: {token: abc}\n");
        assert!(e.contains("never goes in the configuration"), "{e}");
        let e = err("prometheus_authorization: /path\n");
        assert!(e.contains("expected a mapping"), "{e}");
        let e = err("api_authorization: {}\n");
        assert!(e.contains("needs `token_file`"), "{e}");
        let e = err("api_encryption_options: {enabled: true, optional: true, keystore: k.pem}\n");
        assert!(e.contains("TLS-only or plaintext"), "{e}");
        let e = err("prometheus_encryption_options: {enabled: true, bogus: 1, keystore: k}\n");
        assert!(e.contains("prometheus_encryption_options reads"), "{e}");
        let e = err("api_encryption_options: {enabled: true}\n");
        assert!(e.contains("certificate"), "{e}");
    }
}
