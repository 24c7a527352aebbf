package cairn;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.datastax.oss.driver.api.core.AllNodesFailedException;
import com.datastax.oss.driver.api.core.CqlSession;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;

/**
 * TLS on the native port through the Java driver: the node requires TLS and a client
 * certificate its truststore signs; the certificates are PEM files made by the {@code openssl}
 * command, as Cairn reads them.
 */
class TlsTest {

  private static void openssl(Path dir, String... args) throws IOException, InterruptedException {
    List<String> cmd = new java.util.ArrayList<>(List.of("openssl"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    if (p.waitFor() != 0) {
      throw new IllegalStateException("openssl " + String.join(" ", args) + ":\n" + out);
    }
  }

  /** A P-256 key and certificate {@code name}, signed by {@code ca.crt}/{@code ca.key}. */
  private static void leaf(Path dir, String name, String extensions) throws Exception {
    Files.writeString(dir.resolve(name + ".ext"), extensions);
    openssl(dir, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", name + ".key", "-out", name + ".csr", "-subj", "/CN=" + name);
    openssl(dir, "x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", name + ".crt", "-days", "2", "-extfile", name + ".ext");
  }

  private static Certificate certificate(Path pem) throws Exception {
    return CertificateFactory.getInstance("X.509")
        .generateCertificate(new ByteArrayInputStream(Files.readAllBytes(pem)));
  }

  private static PrivateKey privateKey(Path pem) throws Exception {
    String base64 =
        Files.readString(pem).replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
    return KeyFactory.getInstance("EC")
        .generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(base64)));
  }

  /** Trusts ca.crt; presents {@code client}'s certificate unless null. */
  private static SSLContext context(Path dir, String client) throws Exception {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("ca", certificate(dir.resolve("ca.crt")));
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    KeyManagerFactory kmf = null;
    if (client != null) {
      KeyStore keys = KeyStore.getInstance("PKCS12");
      keys.load(null, null);
      keys.setKeyEntry("client", privateKey(dir.resolve(client + ".key")), new char[0],
          new Certificate[] {certificate(dir.resolve(client + ".crt"))});
      kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(keys, new char[0]);
    }
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
    return ctx;
  }

  @Test
  void clientCertificateRequired() throws Exception {
    Path dir = Files.createTempDirectory("cairn-tls");
    openssl(dir, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=java test CA");
    leaf(dir, "node", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
    leaf(dir, "client", "extendedKeyUsage=clientAuth\n");
    Path config = dir.resolve("cairn.yaml");
    Files.writeString(config,
        "client_encryption_options:\n  enabled: true\n"
            + "  certificate: " + dir.resolve("node.crt") + "\n"
            + "  private_key: " + dir.resolve("node.key") + "\n"
            + "  require_client_auth: true\n"
            + "  truststore: " + dir.resolve("ca.crt") + "\n");
    try (CairnNode node = CairnNode.start("--config", config.toString())) {
      try (CqlSession s = node.builder().withSslContext(context(dir, "client")).build()) {
        String version =
            s.execute("SELECT release_version FROM system.local").one().getString(0);
        assertFalse(version == null || version.isEmpty());
      }
      assertThrows(
          AllNodesFailedException.class,
          () -> node.builder().withSslContext(context(dir, null)).build().close());
      assertThrows(AllNodesFailedException.class, () -> node.builder().build().close());
    } finally {
      CairnNode.deleteTree(dir);
    }
  }
}
