package cairn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.datastax.oss.driver.api.core.AllNodesFailedException;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.auth.AuthenticationException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Authentication through the Java driver (its PlainTextAuthProvider against Cairn's
 * PasswordAuthenticator), and a node configured with a security setting Cairn does not
 * implement refusing to start.
 */
class AuthTest {

  @Test
  void passwordAuthenticator() throws Exception {
    Path config = Files.createTempFile("cairn-auth", ".yaml");
    Files.writeString(config, "authenticator: PasswordAuthenticator\n");
    try (CairnNode node = CairnNode.start("--config", config.toString())) {
      try (CqlSession s = node.builder().withAuthCredentials("cassandra", "cassandra").build()) {
        assertEquals(
            "cassandra",
            s.execute("SELECT role FROM system_auth.roles WHERE role = 'cassandra'")
                .one()
                .getString("role"));
      }
      // Bad credentials: the driver's AuthenticationException for the node, inside the
      // connect failure.
      AllNodesFailedException e =
          assertThrows(
              AllNodesFailedException.class,
              () -> node.builder().withAuthCredentials("cassandra", "wrong").build());
      List<Throwable> causes = e.getAllErrors().values().iterator().next();
      assertTrue(
          causes.stream().anyMatch(c -> c instanceof AuthenticationException), causes.toString());
    } finally {
      Files.deleteIfExists(config);
    }
  }

  @Test
  void unimplementedAuthorizerStopsTheNode() throws Exception {
    Path config = Files.createTempFile("cairn-authz", ".yaml");
    Files.writeString(config, "cluster_name: secure\nauthorizer: LdapAuthorizer\n");
    try {
      CairnNode.Finished f = CairnNode.run("--config", config.toString());
      assertNotEquals(0, f.exitCode(), f.output());
      assertTrue(
          f.output().contains("line 2: authorizer: `LdapAuthorizer` is a security setting"),
          f.output());
      assertTrue(f.output().contains("Supported: AllowAllAuthorizer"), f.output());
    } finally {
      Files.deleteIfExists(config);
    }
  }
}
