//! `client_encryption_options` (TLS on the native port) and `server_encryption_options` (TLS
//! between nodes), read with Cassandra's option names and checked as far as the text allows;
//! the files they name (certificates, keys, CA certificates) are read when the node starts
//! ([`crate::tls`]). Both sections share [`TlsOptions`] and one reader; the server section
//! adds `internode_encryption` ([`ServerEncryption`]).
//!
//! Cairn has no JVM keystores: it reads PEM. `keystore` is a PEM file holding the
//! certificate chain and the private key (Cassandra's `PEMBasedSslContextFactory` layout),
//! or Cairn's own `certificate` + `private_key` name them separately; `truststore` is a PEM
//! file of CA certificates.
//!
//! Invariants: an option Cairn does not enforce is refused, never accepted and ignored
//! (`require_endpoint_verification: true` for clients, a JKS/PKCS12 `store_type`, a custom
//! `ssl_context_factory`, a protocol older than TLS 1.2, a cipher suite rustls lacks, a
//! separate `outbound_keystore`, the legacy `ssl_storage_port`, `enabled: true` with
//! `internode_encryption: none`); the
//! passwords and `algorithm` are JVM details that change no protection and are accepted
//! unused (an encrypted private key is refused at start instead of decrypted). The accepted
//! protocols are never empty, and every one of them has a cipher suite.

use super::setters::Bad;
use super::yaml::{Node, Value};
pub use cairn_cluster::tls::InternodeEncryption;
use rustls::CipherSuite;
use std::path::{Path, PathBuf};

/// A TLS protocol version Cairn accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsProtocol {
    /// TLS 1.2 (`TLSv1.2`).
    V1_2,
    /// TLS 1.3 (`TLSv1.3`).
    V1_3,
}

impl TlsProtocol {
    /// The JSSE name (`TLSv1.3`), as Cassandra writes it in its options and
    /// `system_views.clients.ssl_protocol`.
    pub fn name(self) -> &'static str {
        match self {
            TlsProtocol::V1_2 => "TLSv1.2",
            TlsProtocol::V1_3 => "TLSv1.3",
        }
    }
}

/// The cipher suites Cairn's TLS (rustls with the ring provider) implements: the JSSE name
/// Cassandra's options and `ssl_cipher_suite` use (also the IANA name), the suite, and the
/// protocol it belongs to. rustls' own names (`TLS13_AES_128_GCM_SHA256`) are read too.
const CIPHER_SUITES: &[(&str, CipherSuite, TlsProtocol)] = &[
    (
        "TLS_AES_256_GCM_SHA384",
        CipherSuite::TLS13_AES_256_GCM_SHA384,
        TlsProtocol::V1_3,
    ),
    (
        "TLS_AES_128_GCM_SHA256",
        CipherSuite::TLS13_AES_128_GCM_SHA256,
        TlsProtocol::V1_3,
    ),
    (
        "TLS_CHACHA20_POLY1305_SHA256",
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
        TlsProtocol::V1_3,
    ),
    (
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        TlsProtocol::V1_2,
    ),
    (
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        TlsProtocol::V1_2,
    ),
    (
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
        TlsProtocol::V1_2,
    ),
    (
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        TlsProtocol::V1_2,
    ),
    (
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        TlsProtocol::V1_2,
    ),
    (
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
        TlsProtocol::V1_2,
    ),
];

/// The JSSE name of `suite` (`TLS_AES_128_GCM_SHA256`), as Cassandra shows it in
/// `system_views.clients.ssl_cipher_suite`; `None` for a suite Cairn does not offer.
pub fn cipher_suite_name(suite: CipherSuite) -> Option<&'static str> {
    CIPHER_SUITES
        .iter()
        .find(|(_, s, _)| *s == suite)
        .map(|(name, _, _)| *name)
}

/// How the native port treats TLS, once the options are resolved ([`ClientEncryption::mode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsMode {
    /// Plaintext only.
    Off,
    /// TLS and plaintext on the same port, told apart by the first byte.
    Optional,
    /// TLS only: a plaintext client is disconnected.
    Required,
}

/// `client_encryption_options` as read from the configuration.
pub type ClientEncryption = TlsOptions;

/// The options `client_encryption_options` and `server_encryption_options` share, as read
/// from the configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct TlsOptions {
    /// `enabled`.
    pub enabled: bool,
    /// `optional`, if set (unset, it follows Cassandra's rule: see [`ClientEncryption::mode`]).
    pub optional: Option<bool>,
    /// `keystore`: a PEM file with the certificate chain and the private key.
    pub keystore: Option<PathBuf>,
    /// `certificate` (Cairn's): the PEM certificate chain, leaf first.
    pub certificate: Option<PathBuf>,
    /// `private_key` (Cairn's): the PEM private key of `certificate`.
    pub private_key: Option<PathBuf>,
    /// `truststore`: PEM CA certificates that sign accepted client certificates.
    pub truststore: Option<PathBuf>,
    /// `require_client_auth`: clients must present a certificate the truststore signs.
    pub require_client_auth: bool,
    /// `require_endpoint_verification`: a peer's certificate must name its address
    /// (server options only; refused for clients).
    pub require_endpoint_verification: bool,
    /// `protocol` and `accepted_protocols` combined as Cassandra does; never empty.
    pub protocols: Vec<TlsProtocol>,
    /// `cipher_suites`, in preference order; empty: every suite Cairn offers.
    pub cipher_suites: Vec<CipherSuite>,
}

impl Default for TlsOptions {
    fn default() -> Self {
        TlsOptions {
            enabled: false,
            optional: None,
            keystore: None,
            certificate: None,
            private_key: None,
            truststore: None,
            require_client_auth: false,
            require_endpoint_verification: false,
            protocols: vec![TlsProtocol::V1_3, TlsProtocol::V1_2],
            cipher_suites: Vec::new(),
        }
    }
}

impl TlsOptions {
    /// The file with the node's certificate, and the option that names it.
    pub fn certificate_source(&self) -> Option<(&'static str, &Path)> {
        match (&self.certificate, &self.keystore) {
            (Some(c), _) => Some(("certificate", c)),
            (None, Some(k)) => Some(("keystore", k)),
            (None, None) => None,
        }
    }

    /// Cassandra's rule (`EncryptionOptions.applyConfig`): `optional` when set; unset, TLS
    /// is optional when it is not enabled but a keystore file exists (to ease a move to
    /// TLS), and off when there is none. Reads whether that file exists.
    pub fn mode(&self) -> TlsMode {
        let optional = self.optional.unwrap_or_else(|| {
            !self.enabled && self.certificate_source().is_some_and(|(_, p)| p.exists())
        });
        if optional {
            TlsMode::Optional
        } else if self.enabled {
            TlsMode::Required
        } else {
            TlsMode::Off
        }
    }
}

/// `server_encryption_options` as read from the configuration.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServerEncryption {
    /// `internode_encryption`: which peers' connections are encrypted.
    pub internode_encryption: InternodeEncryption,
    /// The options shared with `client_encryption_options`.
    pub options: TlsOptions,
}

impl ServerEncryption {
    /// Whether the storage port speaks TLS at all: when some peers' connections are
    /// encrypted, or (with `none`) when TLS is accepted from peers ahead in a rolling move
    /// to TLS — Cassandra's `optional` rule, as for clients.
    pub fn active(&self) -> bool {
        self.internode_encryption != InternodeEncryption::None
            || self.options.mode() == TlsMode::Optional
    }

    /// Plaintext accepted from every peer: `optional: true` (Cassandra's
    /// `isExplicitlyOptional`), or `internode_encryption: none`.
    pub fn accepts_plaintext(&self) -> bool {
        self.options.optional == Some(true)
            || self.internode_encryption == InternodeEncryption::None
    }
}

/// The options both sections read.
const KNOWN: &str = "enabled, optional, keystore, keystore_password, certificate, private_key, \
     truststore, truststore_password, require_client_auth, require_endpoint_verification, \
     protocol, accepted_protocols, cipher_suites, store_type, algorithm, ssl_context_factory";

/// The options only `server_encryption_options` reads.
const SERVER_KNOWN: &str = "internode_encryption, outbound_keystore, outbound_keystore_password, \
     legacy_ssl_storage_port_enabled";

/// Reads `client_encryption_options` into `out`.
pub(super) fn set_client_encryption(out: &mut ClientEncryption, v: &Node) -> Result<(), Bad> {
    set_encryption_options("client_encryption_options", out, v)
}

/// Reads a mapping of `client_encryption_options`' options (named `section` in errors: the
/// admin faces' `api_encryption_options` take the same) into `out`.
pub(super) fn set_encryption_options(
    section: &'static str,
    out: &mut ClientEncryption,
    v: &Node,
) -> Result<(), Bad> {
    let c = read_options(v, section, &mut |_, _, _| None)?;
    if (c.enabled || c.optional == Some(true)) && c.certificate_source().is_none() {
        return Err(no_certificate());
    }
    *out = c;
    Ok(())
}

/// Reads `server_encryption_options` into `out`.
pub(super) fn set_server_encryption(out: &mut ServerEncryption, v: &Node) -> Result<(), Bad> {
    let mut internode = InternodeEncryption::None;
    let options = read_options(v, "server_encryption_options", &mut |k, line, n| {
        let at = |e: String| Bad::Invalid(format!("`{k}` (line {line}): {e}"));
        Some(match k {
            "internode_encryption" => internode_encryption(n).map_err(at).map(|e| {
                internode = e;
            }),
            "outbound_keystore" => Err(Bad::Refused(format!(
                "`outbound_keystore` (line {line}): outgoing connections present the \
                 `certificate` (or `keystore`) incoming ones do"
            ))),
            // A JVM keystore's password: nothing to enforce on PEM files.
            "outbound_keystore_password" => n.string().map(|_| ()).map_err(at),
            "legacy_ssl_storage_port_enabled" | "enable_legacy_ssl_storage_port" => {
                match n.boolean().map_err(at) {
                    Ok(false) => Ok(()),
                    Ok(true) => Err(Bad::Refused(format!(
                        "`{k}: true` (line {line}): TLS runs on `storage_port`"
                    ))),
                    Err(e) => Err(e),
                }
            }
            _ => return None,
        })
    })?;
    let s = ServerEncryption {
        internode_encryption: internode,
        options,
    };
    if s.options.enabled && internode == InternodeEncryption::None {
        return Err(Bad::Refused(
            "`enabled: true` with `internode_encryption: none` (Cassandra ignores `enabled` \
             here: set `internode_encryption: all`, `dc` or `rack`)"
                .into(),
        ));
    }
    if (internode != InternodeEncryption::None || s.options.optional == Some(true))
        && s.options.certificate_source().is_none()
    {
        return Err(no_certificate());
    }
    if internode != InternodeEncryption::None && s.options.truststore.is_none() {
        return Err(Bad::Invalid(format!(
            "`internode_encryption: {}` needs `truststore` (PEM CA certificates that sign \
             the nodes' certificates: each node checks its peers' against them)",
            internode.name()
        )));
    }
    *out = s;
    Ok(())
}

fn internode_encryption(n: &Node) -> Result<InternodeEncryption, String> {
    let name = n.string()?;
    Ok(match name.to_ascii_lowercase().as_str() {
        "none" => InternodeEncryption::None,
        "all" => InternodeEncryption::All,
        "dc" => InternodeEncryption::Dc,
        "rack" => InternodeEncryption::Rack,
        _ => return Err(format!("`{name}`: expected none, all, dc or rack")),
    })
}

fn no_certificate() -> Bad {
    "TLS needs the node's certificate and key: set `certificate` and `private_key` (PEM \
     files), or `keystore` (one PEM file holding both)"
        .into()
}

/// What a section's own option did: `None` when `key` is not one of its own.
type SectionKey<'a> = dyn FnMut(&str, usize, &Node) -> Option<Result<(), Bad>> + 'a;

/// Reads the options both sections share; `own` reads the section's own options first.
fn read_options(v: &Node, section: &str, own: &mut SectionKey<'_>) -> Result<TlsOptions, Bad> {
    let Value::Map(entries) = &v.value else {
        return Err("expected a mapping (e.g. `enabled: true`)".into());
    };
    let mut c = TlsOptions::default();
    let mut protocol: Option<TlsProtocolChoice> = None;
    let mut accepted: Option<Vec<TlsProtocol>> = None;
    for (k, line, n) in entries {
        let at = |e: String| Bad::Invalid(format!("`{k}` (line {line}): {e}"));
        if matches!(n.value, Value::Null) {
            // `key:` with no value keeps the default, as at the top level.
            continue;
        }
        if let Some(done) = own(k, *line, n) {
            done?;
            continue;
        }
        match k.as_str() {
            "enabled" => c.enabled = n.boolean().map_err(at)?,
            "optional" => c.optional = Some(n.boolean().map_err(at)?),
            "keystore" => c.keystore = Some(n.path().map_err(at)?),
            "certificate" => c.certificate = Some(n.path().map_err(at)?),
            "private_key" => c.private_key = Some(n.path().map_err(at)?),
            "truststore" => c.truststore = Some(n.path().map_err(at)?),
            // JVM keystore passwords and the key manager's algorithm: nothing to enforce on
            // PEM files (an encrypted key is refused when read).
            "keystore_password" | "truststore_password" | "algorithm" => {
                n.string().map_err(at)?;
            }
            "require_client_auth" => c.require_client_auth = n.boolean().map_err(at)?,
            "require_endpoint_verification" => {
                c.require_endpoint_verification = n.boolean().map_err(at)?;
                // Checked against the peer's address between nodes only.
                if c.require_endpoint_verification && section != "server_encryption_options" {
                    return Err(Bad::Refused(format!(
                        "`require_endpoint_verification: true` (line {line})"
                    )));
                }
            }
            "store_type" => {
                let t = n.string().map_err(at)?;
                if !t.eq_ignore_ascii_case("PEM") {
                    return Err(Bad::Invalid(format!(
                        "`store_type: {t}` (line {line}): Cairn has no JVM keystores and \
                         reads PEM files: set `store_type: PEM` or remove it, and give \
                         `certificate` and `private_key` (or a PEM `keystore` holding both)"
                    )));
                }
            }
            "ssl_context_factory" => ssl_context_factory(n, *line)?,
            "protocol" => protocol = Some(parse_protocol(&n.string().map_err(at)?).map_err(at)?),
            "accepted_protocols" => {
                let mut list = Vec::new();
                for name in strings(n).map_err(at)? {
                    match parse_protocol(&name).map_err(at)? {
                        TlsProtocolChoice::One(p) => push_unique(&mut list, p),
                        TlsProtocolChoice::Any => {
                            return Err(at("list TLSv1.2 and/or TLSv1.3, not `TLS`".into()))
                        }
                    }
                }
                if list.is_empty() {
                    return Err(at("accepts no protocol".into()));
                }
                accepted = Some(list);
            }
            "cipher_suites" => {
                for name in strings(n).map_err(at)? {
                    let suite = cipher_suite(&name).map_err(at)?;
                    if !c.cipher_suites.contains(&suite) {
                        c.cipher_suites.push(suite);
                    }
                }
                if c.cipher_suites.is_empty() {
                    return Err(at("names no cipher suite".into()));
                }
            }
            other => {
                let also = if section == "server_encryption_options" {
                    format!(", {SERVER_KNOWN}")
                } else {
                    String::new()
                };
                return Err(Bad::Invalid(format!(
                    "unknown option `{other}` (line {line}); {section} reads {KNOWN}{also}"
                )));
            }
        }
    }
    c.protocols = combine_protocols(protocol, accepted);
    check_pairs(&c)?;
    Ok(c)
}

/// `protocol`'s value: one version, or Cassandra's generic `TLS` (any version).
enum TlsProtocolChoice {
    Any,
    One(TlsProtocol),
}

fn parse_protocol(name: &str) -> Result<TlsProtocolChoice, String> {
    match name.to_ascii_uppercase().as_str() {
        "TLS" => Ok(TlsProtocolChoice::Any),
        "TLSV1.2" => Ok(TlsProtocolChoice::One(TlsProtocol::V1_2)),
        "TLSV1.3" => Ok(TlsProtocolChoice::One(TlsProtocol::V1_3)),
        _ => Err(format!(
            "`{name}` is not a protocol Cairn accepts: TLSv1.2 and TLSv1.3 only (older \
             versions are insecure and rustls does not implement them)"
        )),
    }
}

/// Cassandra's `AbstractSslContextFactory.getAcceptedProtocols`: `accepted_protocols` when
/// set, plus `protocol` when it names one version the list lacks; otherwise `protocol`'s
/// version, or every version for `TLS` or nothing.
fn combine_protocols(
    protocol: Option<TlsProtocolChoice>,
    accepted: Option<Vec<TlsProtocol>>,
) -> Vec<TlsProtocol> {
    let all = TlsOptions::default().protocols;
    match (accepted, protocol) {
        (Some(mut list), Some(TlsProtocolChoice::One(p))) => {
            push_unique(&mut list, p);
            list
        }
        (Some(list), _) => list,
        (None, Some(TlsProtocolChoice::One(p))) => vec![p],
        (None, _) => all,
    }
}

fn push_unique(list: &mut Vec<TlsProtocol>, p: TlsProtocol) {
    if !list.contains(&p) {
        list.push(p);
    }
}

/// A suite by its JSSE/IANA or rustls name.
fn cipher_suite(name: &str) -> Result<CipherSuite, String> {
    CIPHER_SUITES
        .iter()
        .find(|(jsse, suite, _)| {
            jsse.eq_ignore_ascii_case(name)
                || suite.as_str().is_some_and(|s| s.eq_ignore_ascii_case(name))
        })
        .map(|(_, suite, _)| *suite)
        .ok_or_else(|| {
            let names: Vec<&str> = CIPHER_SUITES.iter().map(|(n, _, _)| *n).collect();
            format!(
                "`{name}` is not a cipher suite Cairn's TLS (rustls) implements; it offers {}",
                names.join(", ")
            )
        })
}

/// A scalar or a list of scalars (`cipher_suites: [A, B]`, or `A,B` as Cassandra's
/// command line would have it).
fn strings(n: &Node) -> Result<Vec<String>, String> {
    match &n.value {
        Value::Seq(items) => items.iter().map(|i| i.string()).collect(),
        _ => Ok(n
            .string()?
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()),
    }
}

/// `ssl_context_factory`: Cassandra's default or PEM factory, which read the same options;
/// other factories (and inline PEM parameters) are refused.
fn ssl_context_factory(n: &Node, line: usize) -> Result<(), Bad> {
    let Value::Map(entries) = &n.value else {
        return Err(format!("`ssl_context_factory` (line {line}): expected a mapping").into());
    };
    for (k, kl, v) in entries {
        match k.as_str() {
            "class_name" => {
                let full = v.string()?;
                let short = full.rsplit('.').next().unwrap_or(&full);
                if !matches!(
                    short,
                    "DefaultSslContextFactory" | "PEMBasedSslContextFactory"
                ) {
                    return Err(Bad::Refused(format!(
                        "`ssl_context_factory: {full}` (line {kl})"
                    )));
                }
            }
            other => {
                return Err(Bad::Refused(format!(
                    "`ssl_context_factory.{other}` (line {kl}): Cairn reads the PEM files \
                     named by keystore/certificate/private_key/truststore, not inline \
                     parameters"
                )))
            }
        }
    }
    Ok(())
}

/// What needs another option: a key with its certificate, client authentication with a
/// truststore, each accepted protocol with a cipher suite. (What needs a certificate at
/// all differs by section: see the callers.)
fn check_pairs(c: &TlsOptions) -> Result<(), Bad> {
    match (&c.certificate, &c.private_key, &c.keystore) {
        (Some(_), None, _) => return Err("`certificate` needs `private_key`".into()),
        (None, Some(_), _) => return Err("`private_key` needs `certificate`".into()),
        (Some(_), Some(_), Some(_)) => {
            return Err(
                "set either `keystore` (a PEM file with the certificate chain and the \
                 key) or `certificate` and `private_key`, not both"
                    .into(),
            )
        }
        _ => {}
    }
    if c.require_client_auth && c.truststore.is_none() {
        return Err(
            "`require_client_auth: true` needs `truststore` (PEM CA certificates that \
             sign the client certificates)"
                .into(),
        );
    }
    if !c.cipher_suites.is_empty() {
        for p in &c.protocols {
            let has = CIPHER_SUITES
                .iter()
                .any(|(_, s, sp)| sp == p && c.cipher_suites.contains(s));
            if !has {
                return Err(Bad::Invalid(format!(
                    "`cipher_suites` names no suite for {}, an accepted protocol: add one or \
                     leave it out of `accepted_protocols`",
                    p.name()
                )));
            }
        }
    }
    Ok(())
}
