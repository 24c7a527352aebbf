//! The admin faces' access control on a node started by `start_node`: bearer tokens on the
//! REST API and the Prometheus endpoint (401 without, with a wrong one, 200 with the face's
//! own), nodetool with `--token-file`, TLS with client certificates on the REST API, the
//! refusals counted on `/metrics`, and the start-time refusals (a non-loopback face without
//! authentication, a world-readable token file).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tls::Certs;
use cairn_server::config::{AdminFace, Config};
use cairn_server::{start_node, Node};
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

const API_TOKEN: &str = "api-token-0123456789abcdef";
const PROMETHEUS_TOKEN: &str = "scrape-token-0123456789abcdef";

/// A node on its own runtime, so the test can use blocking clients.
struct Running {
    rt: tokio::runtime::Runtime,
    node: Option<Node>,
    _dir: tempfile::TempDir,
}

impl Running {
    fn start(mut cfg: Config) -> Running {
        let dir = tempfile::tempdir().unwrap();
        cfg.workdir = dir.path().to_path_buf();
        cfg.native_transport_port = 0;
        cfg.api_port = 0;
        cfg.prometheus_port = 0;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let node = rt.block_on(start_node(&cfg)).expect("node starts");
        Running {
            rt,
            node: Some(node),
            _dir: dir,
        }
    }

    fn node(&self) -> &Node {
        self.node.as_ref().unwrap()
    }

    fn api_port(&self) -> u16 {
        self.node().rest.local_addr().port()
    }

    fn metrics_port(&self) -> u16 {
        self.node().metrics.local_addr().port()
    }

    fn nodetool(&self, extra: &[&str], cmd: &str) -> Result<String, cairn_nodetool::NodetoolError> {
        let mut args = vec!["-p".to_string(), self.api_port().to_string()];
        args.extend(extra.iter().map(|s| s.to_string()));
        args.extend(cmd.split_whitespace().map(str::to_string));
        let mut inv = cairn_nodetool::parse_args(&args)?;
        // Not the process environment: tests run in parallel.
        inv.fill_from_env(|_| None);
        cairn_nodetool::run(&inv)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(n) = self.node.take() {
            self.rt.block_on(n.shutdown());
        }
    }
}

/// A token file with mode 0600.
fn token_file(dir: &Path, name: &str, token: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("{token}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    p
}

/// One plaintext HTTP/1.1 GET; the status line, the headers and the body.
fn get(port: u16, path: &str, token: Option<&str>) -> (u16, String, String) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\n{auth}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_string(), body.to_string())
}

#[test]
fn bearer_tokens_on_both_faces() {
    let files = tempfile::tempdir().unwrap();
    let mut cfg = Config::default();
    cfg.api_access.token_file = Some(token_file(files.path(), "api", API_TOKEN));
    cfg.prometheus_access.token_file =
        Some(token_file(files.path(), "prometheus", PROMETHEUS_TOKEN));
    let n = Running::start(cfg);
    let (api, metrics) = (n.api_port(), n.metrics_port());
    let version = "/storage_service/release_version";

    let (status, head, body) = get(api, version, None);
    assert_eq!(status, 401, "{head}");
    assert!(
        head.contains("\r\nWWW-Authenticate: Bearer realm=\"cairn-api\""),
        "{head}"
    );
    assert!(!head.contains("invalid_token"), "{head}");
    assert!(
        body.contains("requires `Authorization: Bearer <token>`"),
        "{body}"
    );
    let (status, head, _) = get(api, version, Some("not-the-token-0123456789"));
    assert_eq!(status, 401);
    assert!(head.contains("error=\"invalid_token\""), "{head}");
    // Each face has its own token.
    assert_eq!(get(api, version, Some(PROMETHEUS_TOKEN)).0, 401);
    let (status, _, body) = get(api, version, Some(API_TOKEN));
    assert_eq!((status, body.as_str()), (200, "\"3.0.8\""));

    assert_eq!(get(metrics, "/metrics", None).0, 401);
    assert_eq!(get(metrics, "/metrics", Some(API_TOKEN)).0, 401);
    let (status, _, page) = get(metrics, "/metrics", Some(PROMETHEUS_TOKEN));
    assert_eq!(status, 200);
    assert!(
        page.contains("scylla_admin_unauthorized_requests{face=\"api\"} 3\n"),
        "{page}"
    );
    assert!(
        page.contains("scylla_admin_unauthorized_requests{face=\"prometheus\"} 2\n"),
        "{page}"
    );
    assert!(page.contains("# TYPE scylla_admin_tls_handshake_failures counter"));

    // nodetool: a clear error without the token or with another, the command with it.
    let e = n.nodetool(&[], "version").unwrap_err();
    assert_eq!(e.exit_code, 1);
    assert!(
        e.message.contains("401 Unauthorized") && e.message.contains("--token-file FILE"),
        "{}",
        e.message
    );
    let wrong = token_file(files.path(), "wrong", "wrong-token-0123456789");
    let e = n
        .nodetool(&["--token-file", wrong.to_str().unwrap()], "version")
        .unwrap_err();
    assert!(
        e.message.contains("refused the bearer token"),
        "{}",
        e.message
    );
    let right = files.path().join("api");
    let right = right.to_str().unwrap();
    assert_eq!(
        n.nodetool(&["--token-file", right], "version").unwrap(),
        "ReleaseVersion: 3.0.8\n"
    );
    assert!(n
        .nodetool(&["--token-file", right], "status")
        .unwrap()
        .contains("UN  127.0.0.1"));
    // nodetool checks its token file as the node does.
    std::fs::set_permissions(&wrong, std::fs::Permissions::from_mode(0o644)).unwrap();
    let e = n
        .nodetool(&["--token-file", wrong.to_str().unwrap()], "version")
        .unwrap_err();
    assert!(
        e.message.contains("readable by every user"),
        "{}",
        e.message
    );
}

fn start_error(cfg: &Config) -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = cfg.clone();
    cfg.workdir = dir.path().to_path_buf();
    cfg.native_transport_port = 0;
    cfg.api_port = 0;
    cfg.prometheus_port = 0;
    let rt = tokio::runtime::Runtime::new().unwrap();
    match rt.block_on(start_node(&cfg)) {
        Ok(_) => panic!("the node started"),
        Err(e) => e.to_string(),
    }
}

/// A face on a non-loopback address without authentication, and a token file others can
/// read, stop the node before anything is bound or opened.
#[test]
fn unsafe_faces_stop_the_node() {
    // 192.0.2.0/24 (TEST-NET-1) is never bound: the check comes first.
    let cfg = Config::from_yaml_str("cluster_name: c\napi_address: 192.0.2.10\n", "cairn.yaml")
        .unwrap()
        .config;
    let e = start_error(&cfg);
    assert!(
        e.contains("`api_address: 192.0.2.10` (line 2)")
            && e.contains("not a loopback address")
            && e.contains("api_authorization: {token_file:")
            && e.contains("api_allow_unauthenticated: true"),
        "{e}"
    );
    let cfg = Config::from_yaml_str("prometheus_address: 0.0.0.0\n", "cairn.yaml")
        .unwrap()
        .config;
    let e = start_error(&cfg);
    assert!(e.contains("`prometheus_address: 0.0.0.0` (line 1)"), "{e}");
    assert!(e.contains("prometheus_allow_unauthenticated"), "{e}");
    // The pure check agrees for an opt-out or a token (binding 192.0.2.10 would fail here).
    let ip = "192.0.2.10".parse().unwrap();
    let opted = Config::from_yaml_str("prometheus_allow_unauthenticated: true\n", "c")
        .unwrap()
        .config;
    assert_eq!(opted.admin_exposure(AdminFace::Prometheus, ip), None);
    assert!(opted.admin_exposure(AdminFace::Api, ip).is_some());

    let files = tempfile::tempdir().unwrap();
    let open = token_file(files.path(), "open", API_TOKEN);
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut cfg = Config::default();
    cfg.api_access.token_file = Some(open.clone());
    let e = start_error(&cfg);
    assert!(
        e.starts_with(&format!(
            "api_authorization.token_file: {}: is readable by every user",
            open.display()
        )),
        "{e}"
    );
    let mut cfg = Config::default();
    cfg.prometheus_access.token_file = Some(files.path().join("missing"));
    let e = start_error(&cfg);
    assert!(
        e.contains("prometheus_authorization.token_file:") && e.contains("missing: cannot read it"),
        "{e}"
    );
    let empty = token_file(files.path(), "empty", "");
    cfg.prometheus_access.token_file = Some(empty);
    assert!(start_error(&cfg).contains("is empty"));
}

/// TLS with client certificates on the REST API: nodetool over HTTPS with a certificate the
/// truststore's CA signs; without one, with another CA's, or in plaintext, no HTTP answer.
#[test]
fn client_certificates_on_the_rest_api() {
    let certs = Certs::make();
    let mut cfg = Config::default();
    cfg.api_access.encryption = cairn_server::config::ClientEncryption {
        require_client_auth: true,
        truststore: Some(certs.path("ca.crt")),
        ..certs.required()
    };
    let n = Running::start(cfg);
    let p = |name: &str| certs.path(name).to_str().unwrap().to_string();
    let (ca, crt, key) = (p("ca.crt"), p("client.crt"), p("client.key"));
    let out = n
        .nodetool(&["--ca", &ca, "--cert", &crt, "--key", &key], "version")
        .unwrap();
    assert_eq!(out, "ReleaseVersion: 3.0.8\n");

    let e = n.nodetool(&["--ca", &ca], "version").unwrap_err();
    assert!(
        e.message.contains("TLS") && e.message.contains("pass --cert and --key"),
        "{}",
        e.message
    );
    let (s_crt, s_key) = (p("stranger.crt"), p("stranger.key"));
    let e = n
        .nodetool(&["--ca", &ca, "--cert", &s_crt, "--key", &s_key], "version")
        .unwrap_err();
    assert!(
        e.message.contains("Failed to connect") && e.message.contains("TLS"),
        "{}",
        e.message
    );
    let e = n.nodetool(&[], "version").unwrap_err();
    assert!(e.message.contains("pass --ca"), "{}", e.message);
    let e = n
        .nodetool(&["--cert", &crt, "--key", &key], "version")
        .unwrap_err();
    assert!(e.message.contains("need --ca"), "{}", e.message);

    // Three connections never got past the handshake. The server counts each on its
    // connection's task, which may end after the client saw the refusal: wait for them.
    let metrics = n.metrics_port();
    let scrape = || get(metrics, "/metrics", None).2;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !scrape().contains("scylla_admin_tls_handshake_failures{face=\"api\"} 3\n") {
        assert!(std::time::Instant::now() < deadline, "{}", scrape());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
