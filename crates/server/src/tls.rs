//! TLS when the node starts: the native port's rustls configuration from
//! `client_encryption_options` ([`ClientEncryption`]) and internode messaging's from
//! `server_encryption_options` ([`ServerEncryption`]). The PEM files are read, and the
//! rustls configurations built, by [`cairn_cluster::tls`], the one place both faces share.
//!
//! Invariants: every error names the section, the option and the file (a JKS or PKCS12
//! keystore is refused with what Cairn reads instead, never skipped); only the protocols and
//! cipher suites the options accept are offered (rustls' ring provider); with
//! `require_client_auth`, a peer without a certificate signed by a truststore CA fails the
//! handshake; the node's certificate must match its private key.

use crate::config::{
    ClientEncryption, InternodeEncryption, ServerEncryption, TlsMode, TlsOptions, TlsProtocol,
};
use crate::protocol::shared::Tls;
use cairn_cluster::snitch::Location;
use cairn_cluster::tls::{InternodeTls, TlsFiles};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::ServerConfig;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why TLS could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A file an option names is missing, unreadable or not what the option needs.
    #[error("{section}.{key}: {}: {problem}", path.display())]
    File {
        /// The options' section (`client_encryption_options`, …).
        section: &'static str,
        /// The option naming the file.
        key: &'static str,
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// rustls refused the combination of options, or one needs another.
    #[error("{section}: {problem}")]
    Config {
        /// The options' section.
        section: &'static str,
        /// What is wrong.
        problem: String,
    },
}

impl From<cairn_cluster::Error> for TlsError {
    fn from(e: cairn_cluster::Error) -> TlsError {
        match e {
            cairn_cluster::Error::TlsFile {
                section,
                key,
                path,
                problem,
            } => TlsError::File {
                section,
                key,
                path,
                problem,
            },
            cairn_cluster::Error::TlsConfig { section, message } => TlsError::Config {
                section,
                problem: message,
            },
            other => TlsError::Config {
                section: "TLS",
                problem: other.to_string(),
            },
        }
    }
}

/// Every certificate of a PEM file (at least one); `key` names the option in errors. Public
/// for nodetool's HTTPS client.
pub fn certificates(
    key: &'static str,
    path: &Path,
) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    Ok(cairn_cluster::tls::certificates(CLIENT, key, path)?)
}

/// The private key of a PEM file (PKCS#8, PKCS#1 or SEC1). Public for nodetool's HTTPS
/// client.
pub fn private_key(key: &'static str, path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    Ok(cairn_cluster::tls::private_key(CLIENT, key, path)?)
}

const CLIENT: &str = "client_encryption_options";

/// The native port's TLS, or `None` when `options` leave it off ([`TlsMode::Off`]).
pub fn native_tls(options: &ClientEncryption) -> Result<Option<Tls>, TlsError> {
    let required = match options.mode() {
        TlsMode::Off => return Ok(None),
        TlsMode::Optional => false,
        TlsMode::Required => true,
    };
    let config = server_config(options)?;
    Ok(Some(Tls {
        acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
        required,
    }))
}

/// The rustls server configuration `options` (client_encryption_options) describe.
pub fn server_config(options: &ClientEncryption) -> Result<ServerConfig, TlsError> {
    Ok(files(CLIENT, options)?.server_config(options.require_client_auth)?)
}

/// Internode messaging's TLS, or `None` when `options` leave the storage port in plaintext.
/// `local` is where this node is (the `dc` and `rack` policies compare peers with it).
pub fn internode_tls(
    options: &ServerEncryption,
    local: &Location,
) -> Result<Option<InternodeTls>, TlsError> {
    if !options.active() {
        return Ok(None);
    }
    let o = &options.options;
    if o.require_client_auth
        && matches!(
            options.internode_encryption,
            InternodeEncryption::Dc | InternodeEncryption::Rack
        )
    {
        // Cassandra's warning, as it gives it: the configuration works, with a gap.
        tracing::warn!(
            "server_encryption_options: require_client_auth with internode_encryption: {} \
             does not authenticate the peers this node accepts in plaintext (its own {}); \
             use internode_encryption: all for mutual TLS with every node",
            options.internode_encryption.name(),
            match options.internode_encryption {
                InternodeEncryption::Dc => "data center",
                _ => "rack",
            }
        );
    }
    let files = files("server_encryption_options", o)?;
    Ok(Some(InternodeTls::new(
        &files,
        options.internode_encryption,
        options.accepts_plaintext(),
        o.require_client_auth,
        o.require_endpoint_verification,
        local.clone(),
    )?))
}

/// The files and choices of one section.
fn files(section: &'static str, options: &TlsOptions) -> Result<TlsFiles, cairn_cluster::Error> {
    let Some((cert_key, cert_path)) = options.certificate_source() else {
        return Err(cairn_cluster::Error::TlsConfig {
            section,
            message: "TLS needs `certificate` and `private_key`, or a PEM `keystore`".into(),
        });
    };
    let private_key = match &options.private_key {
        Some(p) => ("private_key", p.clone()),
        None => (cert_key, cert_path.to_path_buf()),
    };
    Ok(TlsFiles {
        section,
        certificate: (cert_key, cert_path.to_path_buf()),
        private_key,
        truststore: options.truststore.clone(),
        versions: options
            .protocols
            .iter()
            .map(|p| match p {
                TlsProtocol::V1_2 => &rustls::version::TLS12,
                TlsProtocol::V1_3 => &rustls::version::TLS13,
            })
            .collect(),
        cipher_suites: options.cipher_suites.clone(),
    })
}
