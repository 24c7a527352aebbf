package cairn;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.CqlSessionBuilder;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.config.ProgrammaticDriverConfigLoaderBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One {@code cairn serve} process on free loopback ports and a temporary data directory,
 * like tests/python/conftest.py's Node. The binary is {@code CAIRN_BIN}, else
 * {@code target/release/cairn} of the repository.
 */
final class CairnNode implements AutoCloseable {
  private static final Duration START_TIMEOUT = Duration.ofSeconds(30);

  final int port;
  private final Path dir;
  private final Path log;
  private final Process process;

  private CairnNode(Path dir, List<String> extraArgs) throws IOException {
    this.dir = dir;
    this.log = dir.resolve("cairn.log");
    int[] ports = freePorts(3);
    this.port = ports[0];
    List<String> cmd = new ArrayList<>();
    cmd.add(binary().toString());
    cmd.add("serve");
    cmd.add("--data-dir");
    cmd.add(dir.resolve("data").toString());
    cmd.add("--native-port");
    cmd.add(Integer.toString(ports[0]));
    cmd.add("--api-port");
    cmd.add(Integer.toString(ports[1]));
    cmd.add("--metrics-port");
    cmd.add(Integer.toString(ports[2]));
    cmd.addAll(extraArgs);
    this.process =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
            .start();
  }

  /** Starts a node and waits until it accepts CQL connections. */
  static CairnNode start(String... extraArgs) throws IOException, InterruptedException {
    CairnNode node = new CairnNode(Files.createTempDirectory("cairn-java"), List.of(extraArgs));
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      if (!node.process.isAlive()) {
        String out = node.output();
        node.close();
        throw new IllegalStateException(
            "cairn exited with " + node.process.exitValue() + " during start:\n" + out);
      }
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", node.port), 200);
        return node;
      } catch (IOException notYet) {
        Thread.sleep(50);
      }
    }
    String out = node.output();
    node.close();
    throw new IllegalStateException("cairn did not listen within " + START_TIMEOUT + ":\n" + out);
  }

  /** Runs {@code cairn serve} with these arguments to its end (a node that refuses to start). */
  static Finished run(String... args) throws IOException, InterruptedException {
    Path dir = Files.createTempDirectory("cairn-java");
    try (CairnNode node = new CairnNode(dir, List.of(args))) {
      if (!node.process.waitFor(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
        throw new IllegalStateException("cairn kept running:\n" + node.output());
      }
      return new Finished(node.process.exitValue(), node.output());
    }
  }

  /** How a process that ran to its end finished. */
  record Finished(int exitCode, String output) {}

  /** A driver session on this node, with timeouts generous enough for a loaded machine. */
  CqlSession session() {
    return builder().build();
  }

  CqlSessionBuilder builder() {
    return builder(null);
  }

  /**
   * A session builder; {@code refreshedKeyspaces} is the driver's
   * {@code metadata.schema.refreshed-keyspaces} ({@code null}: the driver's default, which
   * leaves the system keyspaces out; empty: every keyspace).
   */
  CqlSessionBuilder builder(List<String> refreshedKeyspaces) {
    Duration t = Duration.ofSeconds(20);
    ProgrammaticDriverConfigLoaderBuilder config =
        DriverConfigLoader.programmaticBuilder()
            .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, t)
            .withDuration(DefaultDriverOption.CONNECTION_CONNECT_TIMEOUT, t)
            .withDuration(DefaultDriverOption.CONNECTION_INIT_QUERY_TIMEOUT, t)
            .withDuration(DefaultDriverOption.CONNECTION_SET_KEYSPACE_TIMEOUT, t)
            .withDuration(DefaultDriverOption.CONTROL_CONNECTION_TIMEOUT, t)
            .withDuration(DefaultDriverOption.CONTROL_CONNECTION_AGREEMENT_TIMEOUT, t)
            .withDuration(DefaultDriverOption.METADATA_SCHEMA_REQUEST_TIMEOUT, t)
            // The driver waits this long after a schema change before refreshing its
            // metadata (1 s by default): short, so that DDL-heavy tests stay fast.
            .withDuration(DefaultDriverOption.METADATA_SCHEMA_WINDOW, Duration.ofMillis(50));
    if (refreshedKeyspaces != null) {
      config =
          config.withStringList(
              DefaultDriverOption.METADATA_SCHEMA_REFRESHED_KEYSPACES, refreshedKeyspaces);
    }
    return CqlSession.builder()
        .addContactPoint(new InetSocketAddress("127.0.0.1", port))
        .withLocalDatacenter("datacenter1")
        .withConfigLoader(config.build());
  }

  String output() {
    try {
      return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
    } catch (IOException e) {
      return "(log unreadable: " + e + ")";
    }
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    if (System.getenv("CAIRN_KEEP_DATA") == null) {
      deleteTree(dir);
    }
  }

  private static Path binary() {
    String env = System.getenv("CAIRN_BIN");
    Path bin =
        env != null && !env.isEmpty()
            ? Paths.get(env)
            : Paths.get(System.getProperty("user.dir"), "..", "..", "target", "release", "cairn");
    bin = bin.toAbsolutePath().normalize();
    if (!Files.isExecutable(bin)) {
      throw new IllegalStateException(
          "cairn binary not found at " + bin + " (build it or set CAIRN_BIN)");
    }
    return bin;
  }

  /** n distinct free TCP ports on 127.0.0.1 (held open together so that they differ). */
  private static int[] freePorts(int n) throws IOException {
    List<ServerSocket> sockets = new ArrayList<>();
    try {
      int[] ports = new int[n];
      for (int i = 0; i < n; i++) {
        ServerSocket s = new ServerSocket();
        s.bind(new InetSocketAddress("127.0.0.1", 0));
        sockets.add(s);
        ports[i] = s.getLocalPort();
      }
      return ports;
    } finally {
      for (ServerSocket s : sockets) {
        s.close();
      }
    }
  }

  static void deleteTree(Path root) {
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
