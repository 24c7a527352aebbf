//! TLS material and configurations, shared by Cairn's two TLS faces: the native port
//! (`client_encryption_options`, built by the server) and internode messaging
//! (`server_encryption_options`, see [`InternodeTls`]). It lives in this crate because it is
//! the lowest one both faces reach; the server depends on it, never the other way.
//!
//! [`TlsFiles`] names the PEM files and choices of one face; [`TlsFiles::server_config`]
//! and [`TlsFiles::client_config`] read them into rustls configurations (the ring provider).
//! [`InternodeEncryption`] is Cassandra's `internode_encryption` policy: which peers a node
//! encrypts its connections to, and which peers must reach it over TLS.
//!
//! Invariants: every error names the options' section, the option and the file (a JKS or
//! PKCS12 keystore is refused with what Cairn reads instead, never skipped); only the
//! protocols and cipher suites asked for are offered; a certificate must match its private
//! key; a server certificate is always checked against the truststore's CAs, and against
//! the peer's address when name verification is asked for; with client authentication, a
//! peer without a certificate a truststore CA signs fails the handshake.

use crate::error::{Error, Result};
use crate::snitch::Location;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::{
    CertificateError, CipherSuite, ClientConfig, DigitallySignedStruct, RootCertStore,
    ServerConfig, SignatureScheme, SupportedProtocolVersion,
};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The PEM files and protocol choices of one TLS face.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    /// The options' section, for errors (`server_encryption_options`).
    pub section: &'static str,
    /// The option naming the certificate chain (`certificate` or `keystore`) and its file.
    pub certificate: (&'static str, PathBuf),
    /// The option naming the private key (`private_key`, or `keystore` holding both) and its
    /// file.
    pub private_key: (&'static str, PathBuf),
    /// `truststore`: PEM CA certificates.
    pub truststore: Option<PathBuf>,
    /// The protocol versions offered; never empty.
    pub versions: Vec<&'static SupportedProtocolVersion>,
    /// The cipher suites offered, in preference order; empty: every suite of the provider.
    pub cipher_suites: Vec<CipherSuite>,
}

impl TlsFiles {
    /// rustls' ring provider, limited to the chosen suites.
    fn provider(&self) -> Arc<CryptoProvider> {
        let mut provider = ring::default_provider();
        if !self.cipher_suites.is_empty() {
            // In the options' order: the preference.
            provider.cipher_suites = self
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
        Arc::new(provider)
    }

    fn config_error(&self, message: String) -> Error {
        Error::TlsConfig {
            section: self.section,
            message,
        }
    }

    /// The node's certificate chain and private key.
    fn identity(&self) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
        let (cert_key, cert_path) = &self.certificate;
        let (key_key, key_path) = &self.private_key;
        Ok((
            certificates(self.section, cert_key, cert_path)?,
            private_key(self.section, key_key, key_path)?,
        ))
    }

    /// The truststore's CAs; `why` says what needs them, for the error when it is unset.
    fn roots(&self, why: &str) -> Result<Arc<RootCertStore>> {
        let Some(path) = &self.truststore else {
            return Err(self.config_error(format!("{why} needs `truststore`")));
        };
        let mut roots = RootCertStore::empty();
        for cert in certificates(self.section, "truststore", path)? {
            roots.add(cert).map_err(|e| Error::TlsFile {
                section: self.section,
                key: "truststore",
                path: path.clone(),
                problem: format!("not a usable CA certificate: {e}"),
            })?;
        }
        Ok(Arc::new(roots))
    }

    /// The error for a certificate that does not go with its key.
    fn mismatch(&self, e: rustls::Error) -> Error {
        Error::TlsFile {
            section: self.section,
            key: self.private_key.0,
            path: self.private_key.1.clone(),
            problem: format!(
                "does not go with the certificate of `{}`: {e}",
                self.certificate.0
            ),
        }
    }

    /// The configuration of the accepting side. With `require_client_auth`, the peer must
    /// present a certificate the truststore's CAs sign.
    pub fn server_config(&self, require_client_auth: bool) -> Result<ServerConfig> {
        let (certs, key) = self.identity()?;
        let provider = self.provider();
        let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
            .with_protocol_versions(&self.versions)
            .map_err(|e| self.config_error(e.to_string()))?;
        let builder = if require_client_auth {
            let roots = self.roots("`require_client_auth: true`")?;
            let verifier = WebPkiClientVerifier::builder_with_provider(roots, provider)
                .build()
                .map_err(|e| self.config_error(format!("truststore: {e}")))?;
            builder.with_client_cert_verifier(verifier)
        } else {
            builder.with_no_client_auth()
        };
        builder
            .with_single_cert(certs, key)
            .map_err(|e| self.mismatch(e))
    }

    /// The configuration of the connecting side: it presents the node's certificate (for a
    /// peer that requires client authentication) and accepts a server certificate the
    /// truststore's CAs sign — and, with `verify_name`, only one naming the address
    /// connected to (Cassandra's `require_endpoint_verification`).
    pub fn client_config(&self, verify_name: bool) -> Result<ClientConfig> {
        let (certs, key) = self.identity()?;
        let provider = self.provider();
        let roots = self.roots("checking the peers' certificates")?;
        let webpki = WebPkiServerVerifier::builder_with_provider(roots, Arc::clone(&provider))
            .build()
            .map_err(|e| self.config_error(format!("truststore: {e}")))?;
        let verifier: Arc<dyn ServerCertVerifier> = if verify_name {
            webpki
        } else {
            Arc::new(ChainOnly(webpki))
        };
        ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&self.versions)
            .map_err(|e| self.config_error(e.to_string()))?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_client_auth_cert(certs, key)
            .map_err(|e| self.mismatch(e))
    }
}

/// Checks a server certificate's chain against the truststore but not the name it is
/// issued to: Cassandra's default (`require_endpoint_verification: false`), where node
/// certificates often name a host rather than the address connected to. webpki checks the
/// chain before the name, so a name error means the chain was good.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// A PEM file's text; `key` names the option in errors. A file that is not PEM (a JVM
/// keystore, most likely) is refused with what Cairn reads instead.
fn pem_text(section: &'static str, key: &'static str, path: &Path) -> Result<Vec<u8>> {
    let fail = |problem: String| Error::TlsFile {
        section,
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

/// Every certificate of a PEM file (at least one); `section` and `key` name the option in
/// errors.
pub fn certificates(
    section: &'static str,
    key: &'static str,
    path: &Path,
) -> Result<Vec<CertificateDer<'static>>> {
    let text = pem_text(section, key, path)?;
    let fail = |problem: String| Error::TlsFile {
        section,
        key,
        path: path.to_path_buf(),
        problem,
    };
    let certs = CertificateDer::pem_slice_iter(&text)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| fail(format!("bad PEM: {e}")))?;
    if certs.is_empty() {
        return Err(fail("holds no CERTIFICATE".into()));
    }
    Ok(certs)
}

/// The private key of a PEM file (PKCS#8, PKCS#1 or SEC1); `section` and `key` name the
/// option in errors.
pub fn private_key(
    section: &'static str,
    key: &'static str,
    path: &Path,
) -> Result<PrivateKeyDer<'static>> {
    let text = pem_text(section, key, path)?;
    let fail = |problem: String| Error::TlsFile {
        section,
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

/// Cassandra's `internode_encryption`: which peers' connections are encrypted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InternodeEncryption {
    /// None.
    #[default]
    None,
    /// Every peer's.
    All,
    /// Peers in another data center.
    Dc,
    /// Peers in another rack (or data center).
    Rack,
}

impl InternodeEncryption {
    /// The option's value (`all`).
    pub fn name(self) -> &'static str {
        match self {
            InternodeEncryption::None => "none",
            InternodeEncryption::All => "all",
            InternodeEncryption::Dc => "dc",
            InternodeEncryption::Rack => "rack",
        }
    }

    /// Whether a connection between a node at `local` and a peer at `peer` is encrypted
    /// (Cassandra's `shouldEncrypt`); a peer whose place is not known yet is encrypted.
    pub fn should_encrypt(self, local: &Location, peer: Option<&Location>) -> bool {
        match (self, peer) {
            (InternodeEncryption::None, _) => false,
            (InternodeEncryption::All, _) | (_, None) => true,
            (InternodeEncryption::Dc, Some(p)) => p.datacenter != local.datacenter,
            (InternodeEncryption::Rack, Some(p)) => {
                p.datacenter != local.datacenter || p.rack != local.rack
            }
        }
    }
}

/// Where peers are: messaging asks it, per connection, whether to encrypt (the topology
/// answers, once the peer is in it).
pub trait PeerLocations: Send + Sync {
    /// `peer`'s data center and rack, if known.
    fn location(&self, peer: IpAddr) -> Option<Location>;
}

/// Internode messaging's TLS (`server_encryption_options`, resolved).
#[derive(Clone)]
pub struct InternodeTls {
    /// Which peers' connections are encrypted.
    pub encryption: InternodeEncryption,
    /// `optional: true`: plaintext is accepted from any peer (a rolling move to TLS);
    /// otherwise only from peers [`InternodeEncryption::should_encrypt`] leaves in clear.
    pub accept_plaintext: bool,
    /// This node's data center and rack.
    pub local: Location,
    /// Wraps outgoing connections (with the node's certificate for client authentication);
    /// `None` with `internode_encryption: none`, which never connects over TLS (and so
    /// needs no truststore) but may accept TLS.
    pub connector: Option<tokio_rustls::TlsConnector>,
    /// Wraps incoming connections that start with a TLS handshake.
    pub acceptor: tokio_rustls::TlsAcceptor,
}

impl InternodeTls {
    /// Built from the files, the policy and the client-authentication choice.
    pub fn new(
        files: &TlsFiles,
        encryption: InternodeEncryption,
        accept_plaintext: bool,
        require_client_auth: bool,
        verify_name: bool,
        local: Location,
    ) -> Result<InternodeTls> {
        let server = files.server_config(require_client_auth)?;
        let connector = match encryption {
            InternodeEncryption::None => None,
            _ => Some(tokio_rustls::TlsConnector::from(Arc::new(
                files.client_config(verify_name)?,
            ))),
        };
        Ok(InternodeTls {
            encryption,
            accept_plaintext,
            local,
            connector,
            acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(server)),
        })
    }

    /// Whether connections with a peer at `peer` are encrypted.
    pub fn should_encrypt(&self, peer: Option<&Location>) -> bool {
        self.encryption.should_encrypt(&self.local, peer)
    }
}

impl std::fmt::Debug for InternodeTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InternodeTls")
            .field("encryption", &self.encryption)
            .field("accept_plaintext", &self.accept_plaintext)
            .field("local", &self.local)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(dc: &str, rack: &str) -> Location {
        Location {
            datacenter: dc.into(),
            rack: rack.into(),
        }
    }

    /// Cassandra's `shouldEncrypt`, and a peer not known yet encrypted.
    #[test]
    fn which_peers_are_encrypted() {
        use InternodeEncryption::*;
        let local = at("dc1", "r1");
        let (same, rack, dc) = (at("dc1", "r1"), at("dc1", "r2"), at("dc2", "r1"));
        let cases = [
            (None, [false, false, false, false]),
            (All, [true, true, true, true]),
            (Dc, [false, false, true, true]),
            (Rack, [false, true, true, true]),
        ];
        for (policy, want) in cases {
            let got = [
                policy.should_encrypt(&local, Some(&same)),
                policy.should_encrypt(&local, Some(&rack)),
                policy.should_encrypt(&local, Some(&dc)),
                policy.should_encrypt(&local, Option::None),
            ];
            assert_eq!(got, want, "{}", policy.name());
        }
    }
}
