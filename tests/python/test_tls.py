"""TLS on the native port (`client_encryption_options`): the Python driver and cqlsh connect
with TLS, a plaintext client is refused when TLS is required, `optional: true` serves both,
`require_client_auth` accepts only client certificates its truststore signs, and a JVM
keystore or an unsupported protocol or cipher stops the node at start; the Prometheus endpoint
with `prometheus_encryption_options` serves only scrapers with an accepted certificate.

The certificates are made here with the `openssl` command (no network): a CA, a server
certificate for 127.0.0.1 and a client certificate signed by it, and a second CA with a
client certificate of its own."""

import http.client
import shutil
import socket
import ssl
import subprocess
import urllib.error
import urllib.request

import pytest
from cassandra.cluster import NoHostAvailable

from conftest import make_cluster, serve_refused
from test_cqlsh import cqlsh_path


def openssl(*args, cwd):
    exe = shutil.which("openssl")
    if exe is None:
        pytest.fail("the `openssl` command is needed to make the test certificates")
    subprocess.run([exe, *args], cwd=cwd, check=True, capture_output=True)


def make_ca(d, name):
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", f"{name}.key", "-out", f"{name}.crt", "-days", "2",
            "-subj", f"/CN=Cairn test {name}", cwd=d)


def make_cert(d, name, ca, extensions):
    (d / f"{name}.ext").write_text(extensions)
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=d)
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key",
            "-CAcreateserial", "-out", f"{name}.crt", "-days", "2",
            "-extfile", f"{name}.ext", cwd=d)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = tmp_path_factory.mktemp("tls-certs")
    make_ca(d, "ca")
    make_ca(d, "other-ca")
    make_cert(d, "server", "ca", "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
              "extendedKeyUsage=serverAuth\n")
    client_ext = "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n"
    make_cert(d, "client", "ca", client_ext)
    make_cert(d, "stranger", "other-ca", client_ext)
    # Cassandra's PEM layout: one keystore file with the chain and the key.
    (d / "keystore.pem").write_text((d / "server.crt").read_text() + (d / "server.key").read_text())
    # A JVM-style keystore (PKCS12), which Cairn refuses.
    openssl("pkcs12", "-export", "-in", "server.crt", "-inkey", "server.key",
            "-out", "keystore.p12", "-passout", "pass:cassandra", cwd=d)
    return d


def tls_node(node_factory, certs, name, options):
    cfg = certs / f"{name}.yaml"
    cfg.write_text("client_encryption_options:\n" + "".join(f"  {k}: {v}\n" for k, v in options.items()))
    return node_factory(name, ["--config", str(cfg)])


@pytest.fixture(scope="module")
def required(node_factory, certs):
    return tls_node(node_factory, certs, "tls-required", {
        "enabled": "true", "keystore": certs / "keystore.pem", "keystore_password": "cassandra"})


@pytest.fixture(scope="module")
def optional(node_factory, certs):
    return tls_node(node_factory, certs, "tls-optional", {
        "enabled": "true", "optional": "true", "certificate": certs / "server.crt",
        "private_key": certs / "server.key", "accepted_protocols": "[TLSv1.2]",
        "cipher_suites": "[TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256]"})


@pytest.fixture(scope="module")
def mutual(node_factory, certs):
    return tls_node(node_factory, certs, "tls-client-auth", {
        "enabled": "true", "certificate": certs / "server.crt", "private_key": certs / "server.key",
        "require_client_auth": "true", "truststore": certs / "ca.crt"})


def context(certs, client=None):
    """A client context that checks the server's certificate (and its name, 127.0.0.1)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(str(certs / "ca.crt"))
    if client:
        ctx.load_cert_chain(str(certs / f"{client}.crt"), str(certs / f"{client}.key"))
    return ctx


def query(n, ssl_context=None, cql="SELECT release_version FROM system.local"):
    c = make_cluster(n, ssl_context=ssl_context)
    try:
        return list(c.connect().execute(cql))
    finally:
        c.shutdown()


def refused(n, ssl_context=None):
    with pytest.raises(NoHostAvailable):
        query(n, ssl_context)


def options_frame():
    # A v4 OPTIONS request: version, flags, stream 0, opcode 0x05, empty body.
    return bytes([0x04, 0, 0, 0, 0x05, 0, 0, 0, 0])


def plaintext_answer(n):
    """Everything the node sends back to a plaintext OPTIONS until it closes the connection
    (at most 9 bytes: a frame header)."""
    got = b""
    with socket.create_connection((n.host, n.port), timeout=20) as s:
        s.sendall(options_frame())
        try:
            while len(got) < 9:
                chunk = s.recv(9 - len(got))
                if not chunk:
                    break
                got += chunk
        except ConnectionResetError:
            pass
    return got


def test_driver_connects_with_tls(required, certs):
    c = make_cluster(required, ssl_context=context(certs))
    try:
        s = c.connect()
        s.execute("CREATE KEYSPACE IF NOT EXISTS ks_tls WITH replication = "
                  "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE IF NOT EXISTS ks_tls.t (k int PRIMARY KEY, v text)")
        # A value larger than a TLS record (16 KiB) crosses several of them each way.
        big = "x" * 100_000
        s.execute("INSERT INTO ks_tls.t (k, v) VALUES (1, %s)", [big])
        assert s.execute("SELECT v FROM ks_tls.t WHERE k = 1").one().v == big
    finally:
        c.shutdown()


def test_plaintext_refused_when_tls_required(required):
    refused(required)
    # No CQL answer, at most a TLS alert record (content type 0x15), then the node closes.
    answer = plaintext_answer(required)
    assert answer == b"" or answer[0] == 0x15, answer


def test_untrusted_server_certificate_is_refused_by_the_client(required, certs):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(str(certs / "other-ca.crt"))
    refused(required, ctx)


def test_optional_serves_tls_and_plaintext(optional, certs):
    assert query(optional, context(certs))
    assert query(optional)
    # The first byte decides; plaintext clients get CQL answers (SUPPORTED, opcode 0x06).
    answer = plaintext_answer(optional)
    assert len(answer) == 9 and answer[0] == 0x84 and answer[4] == 0x06
    # accepted_protocols: [TLSv1.2] is enforced.
    ctx13 = context(certs)
    ctx13.minimum_version = ssl.TLSVersion.TLSv1_3
    refused(optional, ctx13)


def test_client_certificates_when_required(mutual, certs):
    assert query(mutual, context(certs, "client"))
    refused(mutual, context(certs))               # no client certificate
    refused(mutual, context(certs, "stranger"))   # signed by another CA
    refused(mutual)                               # plaintext


def cqlsh_ssl(n, home, statement, env=()):
    proc = subprocess.run(
        [cqlsh_path(), n.host, str(n.port), "--ssl", "--no-color", "-e", statement],
        capture_output=True, text=True, timeout=60,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin", **dict(env)})
    return proc.returncode, proc.stdout, proc.stderr


def test_cqlsh_ssl_with_certfile_variable(required, certs, tmp_path):
    rc, out, err = cqlsh_ssl(required, tmp_path, "SELECT cluster_name FROM system.local",
                             {"SSL_CERTFILE": str(certs / "ca.crt")})
    assert rc == 0, err
    assert "(1 rows)" in out


def test_cqlsh_ssl_with_cqlshrc_client_certificate(mutual, certs, tmp_path):
    (tmp_path / ".cassandra").mkdir()
    (tmp_path / ".cassandra" / "cqlshrc").write_text(
        f"[ssl]\ncertfile = {certs / 'ca.crt'}\nvalidate = true\n"
        f"userkey = {certs / 'client.key'}\nusercert = {certs / 'client.crt'}\n")
    rc, out, err = cqlsh_ssl(mutual, tmp_path, "SELECT cluster_name FROM system.local")
    assert rc == 0, err
    assert "(1 rows)" in out


@pytest.mark.parametrize("options,says", [
    ({"enabled": "true", "keystore": "{certs}/keystore.p12", "keystore_password": "cassandra"},
     ["client_encryption_options.keystore: {certs}/keystore.p12", "is not a PEM file",
      "`certificate`", "`private_key`"]),
    ({"enabled": "true", "keystore": "{certs}/keystore.pem", "protocol": "TLSv1.1"},
     ["client_encryption_options: `protocol` (line 4)", "TLSv1.2 and TLSv1.3 only"]),
    ({"enabled": "true", "keystore": "{certs}/keystore.pem",
      "cipher_suites": "[TLS_RSA_WITH_AES_128_CBC_SHA]"},
     ["`TLS_RSA_WITH_AES_128_CBC_SHA` is not a cipher suite"]),
    ({"enabled": "true", "keystore": "{certs}/keystore.pem", "store_type": "JKS"},
     ["`store_type: JKS`", "reads PEM"]),
])
def test_what_cairn_cannot_serve_stops_the_node(certs, tmp_path, options, says):
    err = serve_refused(tmp_path, "client_encryption_options:\n" + "".join(
        f"  {k}: {v.format(certs=certs)}\n" for k, v in options.items()))
    for s in says:
        assert s.format(certs=certs) in err, err


def test_prometheus_endpoint_with_client_certificates(node_factory, certs):
    """`prometheus_encryption_options` with `require_client_auth`: a scraper presenting a
    certificate the truststore signs reads /metrics over HTTPS, as Prometheus' `tls_config`
    would; one without a certificate, or in plaintext, gets no HTTP answer."""
    cfg = certs / "prometheus-tls.yaml"
    cfg.write_text("prometheus_encryption_options:\n  enabled: true\n"
                   f"  keystore: {certs / 'keystore.pem'}\n  require_client_auth: true\n"
                   f"  truststore: {certs / 'ca.crt'}\n")
    n = node_factory("prometheus-tls", ["--config", str(cfg)])
    url = f"https://127.0.0.1:{n.metrics_port}/metrics"

    def context(client):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(str(certs / "ca.crt"))
        if client:
            ctx.load_cert_chain(str(certs / f"{client}.crt"), str(certs / f"{client}.key"))
        return ctx

    with urllib.request.urlopen(url, context=context("client"), timeout=10) as r:
        assert r.status == 200
        assert "scylla_admin_tls_handshake_failures" in r.read().decode()
    for client in (None, "stranger"):
        with pytest.raises((ssl.SSLError, ConnectionError, urllib.error.URLError)):
            with urllib.request.urlopen(url, context=context(client), timeout=10) as r:
                r.read()
    with pytest.raises((ConnectionError, urllib.error.URLError, http.client.HTTPException)):
        urllib.request.urlopen(url.replace("https", "http"), timeout=10).read()
