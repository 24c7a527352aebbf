//! TLS on the native port: the ScyllaDB Rust driver over TLS with a client certificate (its
//! `openssl-010` feature), the session's TLS details, the handshake timeout and failure
//! count, and the start-time errors for files Cairn cannot use. The certificates are made
//! by the `openssl` command in a temporary directory (no network: `cairn_test_support::pki`),
//! as in tests/python/test_tls.py.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use cairn_server::config::{ClientEncryption, Config, InternodeEncryption, ServerEncryption};
use cairn_server::protocol::{
    ConnectionInfo, Handler, Reply, Request, RequestContext, Server, ServerConfig, TlsInfo,
};
use cairn_server::start_node;
use cairn_server::tls::{internode_tls, native_tls, server_config};
use cairn_test_support::pki::{openssl, TestPki};
use scylla::client::session_builder::SessionBuilder;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Generous bound so a hang shows as a failure rather than a stuck CI job.
const TIMEOUT: Duration = Duration::from_secs(60);

/// A CA, a server certificate for 127.0.0.1 and a client certificate it signs, and a second
/// CA with a client certificate of its own.
pub(crate) struct Certs {
    pki: TestPki,
}

impl Certs {
    pub(crate) fn make() -> Certs {
        let pki = TestPki::new();
        pki.ca("ca");
        pki.ca("other-ca");
        pki.leaf(
            "server",
            "ca",
            "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
        );
        let client = "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n";
        pki.leaf("client", "ca", client);
        pki.leaf("stranger", "other-ca", client);
        Certs { pki }
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.pki.path(name)
    }

    /// TLS required, with this node's certificate and key.
    pub(crate) fn required(&self) -> ClientEncryption {
        ClientEncryption {
            enabled: true,
            certificate: Some(self.path("server.crt")),
            private_key: Some(self.path("server.key")),
            ..ClientEncryption::default()
        }
    }

    /// A driver-side context trusting `ca.crt`, presenting `client`'s certificate if any.
    fn openssl_context(&self, client: Option<&str>) -> openssl::ssl::SslContext {
        use openssl::ssl::{SslContextBuilder, SslFiletype, SslMethod, SslVerifyMode};
        let mut b = SslContextBuilder::new(SslMethod::tls()).unwrap();
        b.set_ca_file(self.path("ca.crt")).unwrap();
        b.set_verify(SslVerifyMode::PEER);
        if let Some(c) = client {
            b.set_certificate_file(self.path(&format!("{c}.crt")), SslFiletype::PEM)
                .unwrap();
            b.set_private_key_file(self.path(&format!("{c}.key")), SslFiletype::PEM)
                .unwrap();
        }
        b.build()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scylla_driver_with_a_client_certificate() {
    let certs = Certs::make();
    let dir = tempfile::tempdir().unwrap();
    let cfg = Config {
        workdir: dir.path().to_path_buf(),
        native_transport_port: 0,
        api_port: 0,
        prometheus_port: 0,
        client_encryption: ClientEncryption {
            require_client_auth: true,
            truststore: Some(certs.path("ca.crt")),
            ..certs.required()
        },
        ..Config::default()
    };
    let node = start_node(&cfg).await.expect("node starts");
    let addr = node.cql.local_addr();
    let builder = |ctx: Option<openssl::ssl::SslContext>| {
        SessionBuilder::new()
            .known_node_addr(addr)
            .connection_timeout(Duration::from_secs(10))
            .tls_context(ctx)
    };
    tokio::time::timeout(TIMEOUT, async {
        let s = builder(Some(certs.openssl_context(Some("client"))))
            .build()
            .await
            .expect("the driver connects over TLS with a client certificate");
        let rows = s
            .query_unpaged("SELECT release_version FROM system.local", ())
            .await
            .unwrap()
            .into_rows_result()
            .unwrap();
        assert_eq!(rows.rows_num(), 1);
        // No client certificate, one from another CA, plaintext: refused.
        for ctx in [
            Some(certs.openssl_context(None)),
            Some(certs.openssl_context(Some("stranger"))),
            None,
        ] {
            assert!(builder(ctx).build().await.is_err());
        }
    })
    .await
    .expect("test finished within the timeout");
    assert!(node.cql.stats().tls_connections() >= 1);
    // The server counts a failed handshake on its connection's task, which may finish after
    // the client has seen the refusal: wait for the count.
    let counted = tokio::time::timeout(Duration::from_secs(30), async {
        while node.cql.stats().tls_handshake_failures() < 3 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(counted.is_ok(), "three failed handshakes counted");
    node.shutdown().await;
}

/// A handler that records what each session was told of its connection's TLS.
#[derive(Clone, Default)]
struct Recorder {
    seen: Arc<Mutex<Vec<Option<TlsInfo>>>>,
}

impl Handler for Recorder {
    type Session = ();

    fn new_session(&self, info: &ConnectionInfo) {
        self.seen.lock().unwrap().push(info.tls);
    }

    async fn handle(&self, _: Request, _: RequestContext<()>) -> Reply {
        cairn_server::protocol::message::CqlError::server("unused").into()
    }
}

/// A v4 STARTUP frame (`CQL_VERSION: 3.0.0`).
fn startup_frame() -> Vec<u8> {
    let mut body = vec![0, 1];
    for s in ["CQL_VERSION", "3.0.0"] {
        body.extend((s.len() as u16).to_be_bytes());
        body.extend(s.as_bytes());
    }
    let mut f = vec![0x04, 0, 0, 0, 0x01];
    f.extend((body.len() as u32).to_be_bytes());
    f.extend(body);
    f
}

async fn bind(tls: ClientEncryption, handshake_timeout: Duration) -> (Server, Recorder) {
    let recorder = Recorder::default();
    let config = ServerConfig {
        tls: native_tls(&tls).unwrap(),
        handshake_timeout,
        ..ServerConfig::default()
    };
    let server = Server::bind("127.0.0.1:0", config, recorder.clone())
        .await
        .unwrap();
    (server, recorder)
}

fn client_config(certs: &Certs, only_tls12: bool) -> Arc<rustls::ClientConfig> {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for c in rustls::pki_types::CertificateDer::pem_file_iter(certs.path("ca.crt")).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let versions: &[&rustls::SupportedProtocolVersion] = if only_tls12 {
        &[&rustls::version::TLS12]
    } else {
        rustls::DEFAULT_VERSIONS
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Arc::new(
        rustls::ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(versions)
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

/// STARTUP over TLS; the opcode of the answer.
async fn tls_startup(server: &Server, config: Arc<rustls::ClientConfig>) -> u8 {
    let tcp = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let mut s = tokio_rustls::TlsConnector::from(config)
        .connect(name, tcp)
        .await
        .unwrap();
    s.write_all(&startup_frame()).await.unwrap();
    let mut header = [0u8; 9];
    s.read_exact(&mut header).await.unwrap();
    header[4]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_see_the_negotiated_protocol_and_suite() {
    let certs = Certs::make();
    let (server, recorder) = bind(
        ClientEncryption {
            optional: Some(true),
            ..certs.required()
        },
        TIMEOUT,
    )
    .await;
    tokio::time::timeout(TIMEOUT, async {
        const READY: u8 = 0x02;
        assert_eq!(
            tls_startup(&server, client_config(&certs, false)).await,
            READY
        );
        assert_eq!(
            tls_startup(&server, client_config(&certs, true)).await,
            READY
        );
        // Optional TLS: plaintext too.
        let mut plain = tokio::net::TcpStream::connect(server.local_addr())
            .await
            .unwrap();
        plain.write_all(&startup_frame()).await.unwrap();
        let mut header = [0u8; 9];
        plain.read_exact(&mut header).await.unwrap();
        assert_eq!(header[4], READY);
    })
    .await
    .expect("test finished within the timeout");
    let seen = recorder.seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![
            Some(TlsInfo {
                protocol: "TLSv1.3",
                cipher_suite: "TLS_AES_256_GCM_SHA384"
            }),
            Some(TlsInfo {
                protocol: "TLSv1.2",
                cipher_suite: "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"
            }),
            None,
        ]
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_client_is_closed_and_counted() {
    let certs = Certs::make();
    let (server, _) = bind(certs.required(), Duration::from_millis(200)).await;
    tokio::time::timeout(TIMEOUT, async {
        let mut silent = tokio::net::TcpStream::connect(server.local_addr())
            .await
            .unwrap();
        // The node closes the connection (no handshake came): EOF, or a reset.
        let mut buf = [0u8; 64];
        let got = silent.read(&mut buf).await.unwrap_or(0);
        assert_eq!(got, 0, "{:?}", &buf[..got]);
    })
    .await
    .expect("the silent client was closed");
    while server.stats().tls_handshake_failures() == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(server.stats().tls_connections(), 0);
    server.shutdown().await;
}

/// Files Cairn cannot serve TLS with stop the node, naming the option and the file.
#[test]
fn unusable_files_are_refused_with_the_option_and_the_file() {
    let certs = Certs::make();
    let d = certs.pki.dir();
    openssl(
        d,
        &[
            "pkcs12",
            "-export",
            "-in",
            "server.crt",
            "-inkey",
            "server.key",
            "-out",
            "keystore.p12",
            "-passout",
            "pass:cassandra",
        ],
    );
    openssl(
        d,
        &[
            "pkcs8",
            "-topk8",
            "-in",
            "server.key",
            "-out",
            "encrypted.key",
            "-passout",
            "pass:secret",
        ],
    );
    let err = |options: ClientEncryption| server_config(&options).unwrap_err().to_string();
    let jks = err(ClientEncryption {
        enabled: true,
        keystore: Some(certs.path("keystore.p12")),
        ..ClientEncryption::default()
    });
    let p12 = certs.path("keystore.p12").display().to_string();
    assert!(
        jks.contains(&format!(
            "client_encryption_options.keystore: {p12}: is not a PEM file"
        )) && jks.contains("`certificate`")
            && jks.contains("`private_key`"),
        "{jks}"
    );
    let wrong = err(ClientEncryption {
        private_key: Some(certs.path("client.key")),
        ..certs.required()
    });
    assert!(
        wrong.contains("client_encryption_options.private_key")
            && wrong.contains("client.key")
            && wrong.contains("does not go with the certificate"),
        "{wrong}"
    );
    let encrypted = err(ClientEncryption {
        private_key: Some(certs.path("encrypted.key")),
        ..certs.required()
    });
    assert!(encrypted.contains("encrypted private key"), "{encrypted}");
    let missing = err(ClientEncryption {
        certificate: Some(certs.path("nope.crt")),
        ..certs.required()
    });
    assert!(
        missing.contains("client_encryption_options.certificate") && missing.contains("nope.crt"),
        "{missing}"
    );
    let trust = err(ClientEncryption {
        require_client_auth: true,
        truststore: Some(certs.path("keystore.p12")),
        ..certs.required()
    });
    assert!(
        trust.contains("client_encryption_options.truststore") && trust.contains("not a PEM"),
        "{trust}"
    );
}

/// `server_encryption_options` read the same files the same way: its errors name its own
/// section, and its truststore (every node checks its peers' certificates) is read even
/// without `require_client_auth`.
#[test]
fn internode_files_are_refused_with_the_section_the_option_and_the_file() {
    let certs = Certs::make();
    let local = cairn_cluster::snitch::Location {
        datacenter: "datacenter1".into(),
        rack: "rack1".into(),
    };
    let internode = |options: ClientEncryption| ServerEncryption {
        internode_encryption: InternodeEncryption::All,
        options: ClientEncryption {
            truststore: Some(certs.path("ca.crt")),
            ..options
        },
    };
    let err = |s: ServerEncryption| internode_tls(&s, &local).unwrap_err().to_string();
    let missing = err(internode(ClientEncryption {
        certificate: Some(certs.path("nope.crt")),
        ..certs.required()
    }));
    assert!(
        missing.contains("server_encryption_options.certificate") && missing.contains("nope.crt"),
        "{missing}"
    );
    let trust = err(ServerEncryption {
        options: ClientEncryption {
            truststore: Some(certs.path("server.key")),
            ..certs.required()
        },
        ..internode(certs.required())
    });
    assert!(
        trust.contains("server_encryption_options.truststore") && trust.contains("CERTIFICATE"),
        "{trust}"
    );
    // Good files make a configuration; `none` without `optional` makes none.
    assert!(internode_tls(&internode(certs.required()), &local)
        .unwrap()
        .is_some());
    assert!(internode_tls(&ServerEncryption::default(), &local)
        .unwrap()
        .is_none());
    // `none` accepting TLS (a rolling move) never connects over it: no truststore needed.
    let accepting = ServerEncryption {
        options: ClientEncryption {
            enabled: false,
            optional: Some(true),
            ..certs.required()
        },
        ..ServerEncryption::default()
    };
    let tls = internode_tls(&accepting, &local).unwrap().unwrap();
    assert!(tls.connector.is_none() && tls.accept_plaintext);
}
