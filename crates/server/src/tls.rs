//! TLS for the native port: builds the server's rustls configuration from
//! `client_encryption_options` ([`ClientEncryption`]) when the node starts, reading the PEM
//! files it names.
//!
//! Invariants: every error names the option and the file (a JKS or PKCS12 keystore is
//! refused with what Cairn reads instead, never skipped); only the protocols and cipher
//! suites the options accept are offered (rustls' ring provider); with
//! `require_client_auth`, a client without a certificate signed by a truststore CA fails
//! the handshake; the node's certificate must match its private key.

use crate::config::{ClientEncryption, TlsMode, TlsProtocol};
use crate::protocol::shared::Tls;
use rustls::crypto::ring;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why the native port's TLS could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A file an option names is missing, unreadable or not what the option needs.
    #[error("client_encryption_options.{key}: {}: {problem}", path.display())]
    File {
        key: &'static str,
        path: PathBuf,
        problem: String,
    },
    /// rustls refused the combination of options.
    #[error("client_encryption_options: {0}")]
    Config(String),
}

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

/// The rustls server configuration `options` describe.
pub fn server_config(options: &ClientEncryption) -> Result<ServerConfig, TlsError> {
    let Some((cert_key, cert_path)) = options.certificate_source() else {
        return Err(TlsError::Config(
            "TLS needs `certificate` and `private_key`, or a PEM `keystore`".into(),
        ));
    };
    let certs = certificates(cert_key, cert_path)?;
    let (key_key, key_path) = match &options.private_key {
        Some(p) => ("private_key", p.as_path()),
        None => (cert_key, cert_path),
    };
    let key = private_key(key_key, key_path)?;

    let mut provider = ring::default_provider();
    if !options.cipher_suites.is_empty() {
        // In the options' order: the server's preference.
        provider.cipher_suites = options
            .cipher_suites
            .iter()
            .filter_map(|s| {
                provider
                    .cipher_suites
                    .iter()
                    .find(|p| p.suite() == *s)
                    .copied()
            })
            .collect();
    }
    let versions: Vec<&'static rustls::SupportedProtocolVersion> = options
        .protocols
        .iter()
        .map(|p| match p {
            TlsProtocol::V1_2 => &rustls::version::TLS12,
            TlsProtocol::V1_3 => &rustls::version::TLS13,
        })
        .collect();
    let provider = Arc::new(provider);
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| TlsError::Config(e.to_string()))?;
    let builder = if options.require_client_auth {
        let Some(trust_path) = &options.truststore else {
            return Err(TlsError::Config(
                "`require_client_auth: true` needs `truststore`".into(),
            ));
        };
        let mut roots = RootCertStore::empty();
        for cert in certificates("truststore", trust_path)? {
            roots.add(cert).map_err(|e| TlsError::File {
                key: "truststore",
                path: trust_path.clone(),
                problem: format!("not a usable CA certificate: {e}"),
            })?;
        }
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .map_err(|e| TlsError::File {
                key: "truststore",
                path: trust_path.clone(),
                problem: e.to_string(),
            })?;
        builder.with_client_cert_verifier(verifier)
    } else {
        builder.with_no_client_auth()
    };
    builder
        .with_single_cert(certs, key)
        .map_err(|e| TlsError::File {
            key: key_key,
            path: key_path.to_path_buf(),
            problem: format!("does not go with the certificate of `{cert_key}`: {e}"),
        })
}

/// A PEM file's text; `key` names the option in errors. A file that is not PEM (a JVM
/// keystore, most likely) is refused with what Cairn reads instead.
fn pem_text(key: &'static str, path: &Path) -> Result<Vec<u8>, TlsError> {
    let fail = |problem: String| TlsError::File {
        key,
        path: path.to_path_buf(),
        problem,
    };
    let bytes = std::fs::read(path).map_err(|e| fail(format!("cannot read it: {e}")))?;
    if !bytes.windows(11).any(|w| w == b"-----BEGIN ") {
        return Err(fail(
            "is not a PEM file (a JKS or PKCS12 keystore?): Cairn has no JVM keystores and \
             reads PEM: set `certificate` (the PEM certificate chain) and `private_key` (the \
             PEM private key), or make `keystore` one PEM file holding both; for a \
             truststore, a PEM file of CA certificates"
                .into(),
        ));
    }
    Ok(bytes)
}

/// Every certificate of a PEM file (at least one). Public for nodetool's HTTPS client.
pub fn certificates(
    key: &'static str,
    path: &Path,
) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let text = pem_text(key, path)?;
    let fail = |problem: String| TlsError::File {
        key,
        path: path.to_path_buf(),
        problem,
    };
    let certs = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| fail(format!("bad PEM: {e}")))?;
    if certs.is_empty() {
        return Err(fail("holds no CERTIFICATE".into()));
    }
    Ok(certs)
}

/// The private key of a PEM file (PKCS#8, PKCS#1 or SEC1). Public for nodetool's HTTPS
/// client.
pub fn private_key(key: &'static str, path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    let text = pem_text(key, path)?;
    let fail = |problem: String| TlsError::File {
        key,
        path: path.to_path_buf(),
        problem,
    };
    if text.windows(9).any(|w| w == b"ENCRYPTED") {
        return Err(fail(
            "holds an encrypted private key: Cairn reads unencrypted PEM keys (decrypt it with \
             `openssl pkey -in KEY -out KEY.pem` and protect the file's permissions)"
                .into(),
        ));
    }
    PrivateKeyDer::from_pem_slice(&text).map_err(|e| match e {
        rustls::pki_types::pem::Error::NoItemsFound => {
            fail("holds no PRIVATE KEY (PKCS#8, RSA or EC)".into())
        }
        e => fail(format!("bad PEM: {e}")),
    })
}
