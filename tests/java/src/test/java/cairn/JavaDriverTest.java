package cairn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.datastax.oss.driver.api.core.CqlIdentifier;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.ProtocolVersion;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchType;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.data.CqlDuration;
import com.datastax.oss.driver.api.core.data.TupleValue;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.metadata.schema.ClusteringOrder;
import com.datastax.oss.driver.api.core.metadata.schema.ColumnMetadata;
import com.datastax.oss.driver.api.core.metadata.schema.KeyspaceMetadata;
import com.datastax.oss.driver.api.core.metadata.schema.TableMetadata;
import com.datastax.oss.driver.api.core.servererrors.AlreadyExistsException;
import com.datastax.oss.driver.api.core.servererrors.InvalidConfigurationInQueryException;
import com.datastax.oss.driver.api.core.servererrors.InvalidQueryException;
import com.datastax.oss.driver.api.core.servererrors.SyntaxError;
import com.datastax.oss.driver.api.core.servererrors.UnauthorizedException;
import com.datastax.oss.driver.api.core.type.DataTypes;
import com.datastax.oss.driver.api.core.type.TupleType;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Cairn through the Apache Cassandra Java driver 4.18: what the driver learns at connect
 * (nodes, schema metadata of normal and virtual keyspaces), schema agreement, every CQL type,
 * paging, batches, lightweight-transaction results, the exception classes the driver maps from
 * error codes, and async execution. One node and one session for the class.
 */
class JavaDriverTest {
  private static final String KS = "java_ks";
  private static CairnNode node;
  private static CqlSession session;

  @BeforeAll
  static void start() throws Exception {
    node = CairnNode.start();
    // Every keyspace in the metadata: the driver's default leaves the system ones out.
    session = node.builder(List.of()).build();
    session.execute(
        "CREATE KEYSPACE "
            + KS
            + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
  }

  @AfterAll
  static void stop() {
    if (session != null) {
      session.close();
    }
    if (node != null) {
      node.close();
    }
  }

  @Test
  void connectsAndSeesTheNode() {
    // The driver offers v5 first and settles on v4 after Cairn's refusal, as with ScyllaDB.
    assertEquals(
        ProtocolVersion.V4, session.getContext().getProtocolVersion(), "negotiated version");
    Map<UUID, Node> nodes = session.getMetadata().getNodes();
    assertEquals(1, nodes.size(), nodes.toString());
    Node n = nodes.values().iterator().next();
    assertEquals("datacenter1", n.getDatacenter());
    assertEquals("rack1", n.getRack());
    assertNotNull(n.getHostId());
    assertNotNull(n.getSchemaVersion());
    assertTrue(n.getCassandraVersion().getMajor() >= 4, n.getCassandraVersion().toString());
    // The token map needs the partitioner and the node's tokens.
    assertTrue(session.getMetadata().getTokenMap().isPresent(), "token map");
    // A single node has no peers; Cassandra 4's peers_v2 is there, empty.
    assertEquals(0, session.execute("SELECT * FROM system.peers_v2").all().size());
    ResultSet peers = session.execute("SELECT peer, peer_port, native_address, native_port FROM system.peers_v2");
    assertEquals(4, peers.getColumnDefinitions().size());
  }

  @Test
  void schemaMetadataOfTablesAndColumns() {
    session.execute(
        "CREATE TABLE "
            + KS
            + ".shape (a int, b text, c timeuuid, d bigint, s text static, v map<text, int>,"
            + " PRIMARY KEY ((a, b), c, d)) WITH CLUSTERING ORDER BY (c DESC, d ASC)"
            + " AND comment = 'shapes'");
    TableMetadata t = table(KS, "shape");
    assertEquals(List.of("a", "b"), names(t.getPartitionKey()));
    assertEquals(List.of("c", "d"), names(t.getClusteringColumns().keySet()));
    assertEquals(
        List.of(ClusteringOrder.DESC, ClusteringOrder.ASC),
        new ArrayList<>(t.getClusteringColumns().values()));
    assertEquals(DataTypes.INT, column(t, "a").getType());
    assertEquals(DataTypes.TEXT, column(t, "b").getType());
    assertEquals(DataTypes.TIMEUUID, column(t, "c").getType());
    assertTrue(column(t, "s").isStatic());
    assertEquals(DataTypes.mapOf(DataTypes.TEXT, DataTypes.INT), column(t, "v").getType());
    assertEquals("shapes", t.getOptions().get(CqlIdentifier.fromCql("comment")));
    assertFalse(t.isVirtual());
    assertTrue(t.describe(true).contains("CLUSTERING ORDER BY (c DESC, d ASC)"), t.describe(true));

    KeyspaceMetadata ks = keyspace(KS);
    assertEquals("org.apache.cassandra.locator.SimpleStrategy", ks.getReplication().get("class"));
    assertTrue(ks.isDurableWrites());
    // The system keyspaces are there too, with the tables drivers read.
    assertTrue(keyspace("system_schema").getTable("columns").isPresent());
    assertTrue(keyspace("system").getTable("peers_v2").isPresent());
  }

  @Test
  void virtualKeyspacesAsCassandraListsThem() {
    KeyspaceMetadata vs = keyspace("system_virtual_schema");
    assertTrue(vs.isVirtual());
    TableMetadata cols = vs.getTable("columns").orElseThrow();
    assertTrue(cols.isVirtual());
    assertEquals(List.of("keyspace_name"), names(cols.getPartitionKey()));
    assertEquals(List.of("table_name", "column_name"), names(cols.getClusteringColumns().keySet()));
    assertEquals(DataTypes.INT, column(cols, "position").getType());

    KeyspaceMetadata views = keyspace("system_views");
    assertTrue(views.isVirtual());
    TableMetadata settings = views.getTable("settings").orElseThrow();
    assertEquals(List.of("name"), names(settings.getPartitionKey()));

    Row authorizer =
        session
            .execute("SELECT value FROM system_views.settings WHERE name = 'authorizer'")
            .one();
    assertNotNull(authorizer);
    assertEquals("AllowAllAuthorizer", authorizer.getString("value"));
    Set<String> virtualKs = new HashSet<>();
    for (Row r : session.execute("SELECT keyspace_name FROM system_virtual_schema.keyspaces")) {
      virtualKs.add(r.getString("keyspace_name"));
    }
    assertEquals(Set.of("system_views", "system_virtual_schema"), virtualKs);
    // Virtual keyspaces are not in system_schema, as in Cassandra.
    assertNull(
        session
            .execute(
                "SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = 'system_views'")
            .one());
  }

  /**
   * A driver told which keyspaces to load asks each schema table with {@code WHERE
   * keyspace_name IN (…)}, the virtual ones included.
   */
  @Test
  void metadataOfChosenKeyspacesOnly() {
    try (CqlSession s = node.builder(List.of(KS, "system_virtual_schema")).build()) {
      assertEquals(
          Set.of(KS, "system_virtual_schema"),
          names(s.getMetadata().getKeyspaces().keySet()));
      assertTrue(s.getMetadata().getKeyspace("system_virtual_schema").orElseThrow().isVirtual());
      assertTrue(
          s.getMetadata()
              .getKeyspace("system_virtual_schema")
              .orElseThrow()
              .getTable("tables")
              .isPresent());
    }
    // By default the driver loads the user keyspaces only.
    try (CqlSession s = node.session()) {
      assertTrue(s.getMetadata().getKeyspace(KS).isPresent());
      assertFalse(s.getMetadata().getKeyspace("system_views").isPresent());
    }
  }

  @Test
  void schemaAgreementAfterDdl() {
    ResultSet created =
        session.execute("CREATE TABLE " + KS + ".agree (k int PRIMARY KEY, v text)");
    assertTrue(created.getExecutionInfo().isSchemaInAgreement(), "after CREATE TABLE");
    assertTrue(session.checkSchemaAgreement());
    // The driver refreshed its metadata from the schema change.
    assertTrue(keyspace(KS).getTable("agree").isPresent());

    ResultSet altered = session.execute("ALTER TABLE " + KS + ".agree ADD w int");
    assertTrue(altered.getExecutionInfo().isSchemaInAgreement(), "after ALTER TABLE");
    assertTrue(table(KS, "agree").getColumn("w").isPresent());

    ResultSet dropped = session.execute("DROP TABLE " + KS + ".agree");
    assertTrue(dropped.getExecutionInfo().isSchemaInAgreement(), "after DROP TABLE");
    assertFalse(keyspace(KS).getTable("agree").isPresent());
  }

  @Test
  void everyTypeRoundTrips() throws Exception {
    session.execute(
        "CREATE TABLE "
            + KS
            + ".types (k int PRIMARY KEY, asci ascii, big bigint, bl blob, bo boolean, da date,"
            + " de decimal, do double, du duration, fl float, ine inet, i int, sm smallint,"
            + " te text, ti time, ts timestamp, tu timeuuid, tin tinyint, u uuid, vc varchar,"
            + " vi varint, li list<int>, se set<text>, ma map<text, bigint>,"
            + " tup tuple<int, text, double>, fli frozen<list<frozen<set<int>>>>,"
            + " nested map<int, frozen<map<text, text>>>)");
    PreparedStatement insert =
        session.prepare(
            "INSERT INTO "
                + KS
                + ".types (k, asci, big, bl, bo, da, de, do, du, fl, ine, i, sm, te, ti, ts, tu,"
                + " tin, u, vc, vi, li, se, ma, tup, fli, nested)"
                + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    TupleType tupleType = DataTypes.tupleOf(DataTypes.INT, DataTypes.TEXT, DataTypes.DOUBLE);
    TupleValue tup = tupleType.newValue(7, "seven", 7.5);
    UUID timeuuid = UUID.fromString("50554d6e-29bb-11e5-b345-feff819cdc9f");
    UUID uuid = UUID.randomUUID();
    Instant ts = Instant.parse("2024-02-29T12:34:56.789Z");
    Map<String, Long> ma = new LinkedHashMap<>();
    ma.put("a", 1L);
    ma.put("b", Long.MIN_VALUE);
    Map<Integer, Map<String, String>> nested = Map.of(1, Map.of("x", "y"), 2, Map.of());
    List<Set<Integer>> fli = List.of(Set.of(1, 2), Set.of());
    Object[] values = {
      1,
      "ascii",
      Long.MAX_VALUE,
      ByteBuffer.wrap(new byte[] {0, 1, (byte) 0xff}),
      true,
      LocalDate.of(1969, 7, 20),
      new BigDecimal("-12345678901234567890.0123456789"),
      Math.PI,
      CqlDuration.from("1mo2d3h4m5s6ms7us8ns"),
      1.5f,
      InetAddress.getByName("::1"),
      Integer.MIN_VALUE,
      (short) -32768,
      "héllo wörld ✓",
      LocalTime.of(23, 59, 59, 999_999_999),
      ts,
      timeuuid,
      (byte) -128,
      uuid,
      "varchar",
      new BigInteger("-123456789012345678901234567890"),
      List.of(3, 1, 2, 1),
      Set.of("b", "a"),
      ma,
      tup,
      fli,
      nested
    };
    session.execute(insert.bind(values));
    Row r = session.execute("SELECT * FROM " + KS + ".types WHERE k = 1").one();
    assertNotNull(r);
    assertEquals("ascii", r.getString("asci"));
    assertEquals(Long.MAX_VALUE, r.getLong("big"));
    assertEquals(ByteBuffer.wrap(new byte[] {0, 1, (byte) 0xff}), r.getByteBuffer("bl"));
    assertTrue(r.getBoolean("bo"));
    assertEquals(LocalDate.of(1969, 7, 20), r.getLocalDate("da"));
    assertEquals(new BigDecimal("-12345678901234567890.0123456789"), r.getBigDecimal("de"));
    assertEquals(Math.PI, r.getDouble("do"));
    assertEquals(CqlDuration.from("1mo2d3h4m5s6ms7us8ns"), r.getCqlDuration("du"));
    assertEquals(1.5f, r.getFloat("fl"));
    assertEquals(InetAddress.getByName("::1"), r.getInetAddress("ine"));
    assertEquals(Integer.MIN_VALUE, r.getInt("i"));
    assertEquals((short) -32768, r.getShort("sm"));
    assertEquals("héllo wörld ✓", r.getString("te"));
    assertEquals(LocalTime.of(23, 59, 59, 999_999_999), r.getLocalTime("ti"));
    assertEquals(ts, r.getInstant("ts"));
    assertEquals(timeuuid, r.getUuid("tu"));
    assertEquals((byte) -128, r.getByte("tin"));
    assertEquals(uuid, r.getUuid("u"));
    assertEquals("varchar", r.getString("vc"));
    assertEquals(new BigInteger("-123456789012345678901234567890"), r.getBigInteger("vi"));
    assertEquals(List.of(3, 1, 2, 1), r.getList("li", Integer.class));
    assertEquals(Set.of("a", "b"), r.getSet("se", String.class));
    assertEquals(ma, r.getMap("ma", String.class, Long.class));
    assertEquals(tup, r.getTupleValue("tup"));
    assertEquals(fli, r.getObject("fli"));
    assertEquals(nested, r.getObject("nested"));
    // The result metadata carries the types (what a driver decodes with).
    assertEquals(tupleType, r.getColumnDefinitions().get("tup").getType());
    assertEquals(DataTypes.DURATION, r.getColumnDefinitions().get("du").getType());

    // Nulls, and unset values that leave a column alone.
    BoundStatement partial = insert.bind().setInt("k", 2).setString("te", "only text");
    session.execute(partial);
    Row p = session.execute("SELECT te, i, li, tup FROM " + KS + ".types WHERE k = 2").one();
    assertEquals("only text", p.getString("te"));
    assertTrue(p.isNull("i"));
    assertTrue(p.getList("li", Integer.class).isEmpty());
    assertNull(p.getTupleValue("tup"));
    // (Counter columns cannot share a table with these; tests/python/test_counters.py has them.)
  }

  @Test
  void pagingThroughAPartitionAndTheTable() {
    session.execute("CREATE TABLE " + KS + ".pages (p int, c int, v text, PRIMARY KEY (p, c))");
    PreparedStatement insert =
        session.prepare("INSERT INTO " + KS + ".pages (p, c, v) VALUES (?, ?, ?)");
    // One partition (250 writes) in flight at a time: the driver refuses a request outright
    // ("No connection was available") once a connection holds 1024 in flight
    // (advanced.connection.max-requests-per-connection), against any server.
    for (int p = 0; p < 5; p++) {
      List<CompletionStage<AsyncResultSet>> writes = new ArrayList<>();
      for (int c = 0; c < 250; c++) {
        writes.add(session.executeAsync(insert.bind(p, c, "v" + p + "-" + c)));
      }
      waitAll(writes);
    }

    // Automatic paging, one partition: rows in clustering order across pages.
    ResultSet rs =
        session.execute(
            SimpleStatement.newInstance("SELECT c, v FROM " + KS + ".pages WHERE p = ?", 3)
                .setPageSize(40));
    assertEquals(40, rs.getAvailableWithoutFetching());
    assertFalse(rs.isFullyFetched());
    int i = 0;
    for (Row r : rs) {
      assertEquals(i, r.getInt("c"));
      assertEquals("v3-" + i, r.getString("v"));
      i++;
    }
    assertEquals(250, i);

    // Manual paging with the paging state, across partitions.
    SimpleStatement all =
        SimpleStatement.newInstance("SELECT p, c FROM " + KS + ".pages").setPageSize(100);
    Set<String> seen = new HashSet<>();
    ByteBuffer state = null;
    int pages = 0;
    do {
      ResultSet page = session.execute(all.setPagingState(state));
      int n = page.getAvailableWithoutFetching();
      for (int k = 0; k < n; k++) {
        Row r = page.one();
        assertTrue(seen.add(r.getInt("p") + ":" + r.getInt("c")), "row twice");
      }
      state = page.getExecutionInfo().getPagingState();
      pages++;
      assertTrue(pages <= 20, "paging does not end");
    } while (state != null);
    assertEquals(1250, seen.size());
    assertTrue(pages >= 12, pages + " pages");

    // Paging with a prepared statement and LIMIT.
    PreparedStatement limited =
        session.prepare("SELECT c FROM " + KS + ".pages WHERE p = ? LIMIT 95");
    List<Row> rows = session.execute(limited.bind(1).setPageSize(30)).all();
    assertEquals(95, rows.size());
    assertEquals(94, rows.get(94).getInt("c"));
  }

  @Test
  void batches() {
    session.execute("CREATE TABLE " + KS + ".batched (p int, c int, v text, PRIMARY KEY (p, c))");
    PreparedStatement insert =
        session.prepare("INSERT INTO " + KS + ".batched (p, c, v) VALUES (?, ?, ?)");
    BatchStatement logged =
        BatchStatement.newInstance(
            BatchType.LOGGED,
            insert.bind(1, 1, "a"),
            insert.bind(2, 1, "b"),
            SimpleStatement.newInstance(
                "UPDATE " + KS + ".batched SET v = ? WHERE p = ? AND c = ?", "c", 1, 2));
    session.execute(logged);
    BatchStatement unlogged = BatchStatement.newInstance(BatchType.UNLOGGED);
    for (int c = 10; c < 30; c++) {
      unlogged = unlogged.add(insert.bind(1, c, "u" + c));
    }
    session.execute(unlogged);
    session.execute(
        BatchStatement.newInstance(
            BatchType.LOGGED,
            SimpleStatement.newInstance("DELETE FROM " + KS + ".batched WHERE p = 1 AND c = 10")));
    assertEquals(21, session.execute("SELECT * FROM " + KS + ".batched WHERE p = 1").all().size());
    assertEquals("c", session.execute("SELECT v FROM " + KS + ".batched WHERE p = 1 AND c = 2").one().getString("v"));
    // (COUNTER batches wait for counters, which Cairn does not support yet.)
  }

  /**
   * Lightweight transactions as Cassandra answers them: {@code [applied]}, and on a refused
   * write the current row's columns, which the driver reads by name.
   */
  @Test
  void lightweightTransactionResults() {
    session.execute("CREATE TABLE " + KS + ".lwt (k int PRIMARY KEY, v int, w text)");
    ResultSet first = session.execute("INSERT INTO " + KS + ".lwt (k, v, w) VALUES (1, 10, 'x') IF NOT EXISTS");
    assertTrue(first.wasApplied());

    ResultSet again = session.execute("INSERT INTO " + KS + ".lwt (k, v, w) VALUES (1, 20, 'y') IF NOT EXISTS");
    assertFalse(again.wasApplied());
    Row current = again.one();
    assertNotNull(current);
    assertFalse(current.getBoolean("[applied]"));
    assertEquals(10, current.getInt("v"));
    assertEquals("x", current.getString("w"));

    PreparedStatement cas = session.prepare("UPDATE " + KS + ".lwt SET v = ? WHERE k = ? IF v = ?");
    ResultSet refused = session.execute(cas.bind(30, 1, 99));
    assertFalse(refused.wasApplied());
    assertEquals(10, refused.one().getInt("v"));
    assertTrue(session.execute(cas.bind(30, 1, 10)).wasApplied());
    assertEquals(30, session.execute("SELECT v FROM " + KS + ".lwt WHERE k = 1").one().getInt("v"));

    ResultSet missing = session.execute("UPDATE " + KS + ".lwt SET v = 1 WHERE k = 2 IF EXISTS");
    assertFalse(missing.wasApplied());
    assertTrue(session.execute("DELETE FROM " + KS + ".lwt WHERE k = 1 IF EXISTS").wasApplied());
  }

  @Test
  void errorsMapToTheDriversExceptionClasses() {
    session.execute("CREATE TABLE IF NOT EXISTS " + KS + ".errs (k int PRIMARY KEY, v int)");
    // 0x2000 Syntax error.
    assertThrows(SyntaxError.class, () -> session.execute("SELEKT * FROM " + KS + ".errs"));
    // 0x2200 Invalid: unknown table, bad value, wrong column.
    InvalidQueryException unknown =
        assertThrows(
            InvalidQueryException.class, () -> session.execute("SELECT * FROM " + KS + ".nope"));
    assertTrue(unknown.getMessage().contains("nope"), unknown.getMessage());
    assertThrows(
        InvalidQueryException.class,
        () -> session.execute("INSERT INTO " + KS + ".errs (k, zz) VALUES (1, 2)"));
    InvalidQueryException filtering =
        assertThrows(
            InvalidQueryException.class,
            () -> session.execute("SELECT * FROM " + KS + ".errs WHERE v = 1"));
    assertTrue(filtering.getMessage().contains("ALLOW FILTERING"), filtering.getMessage());
    // 0x2300 Configuration: a compaction option Cassandra refuses.
    assertThrows(
        InvalidConfigurationInQueryException.class,
        () ->
            session.execute(
                "CREATE TABLE " + KS + ".badopt (k int PRIMARY KEY)"
                    + " WITH compaction = {'class': 'NoSuchStrategy'}"));
    // 0x2400 Already exists, with the keyspace and table.
    AlreadyExistsException exists =
        assertThrows(
            AlreadyExistsException.class,
            () -> session.execute("CREATE TABLE " + KS + ".errs (k int PRIMARY KEY)"));
    // The driver words its message from the keyspace and table the error carries.
    assertEquals("Object " + KS + ".errs already exists", exists.getMessage());
    AlreadyExistsException ksExists =
        assertThrows(
            AlreadyExistsException.class,
            () ->
                session.execute(
                    "CREATE KEYSPACE " + KS + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"));
    assertEquals("Keyspace " + KS + " already exists", ksExists.getMessage());
    // 0x2100 Unauthorized: the system keyspaces are not user-modifiable.
    assertThrows(
        UnauthorizedException.class,
        () -> session.execute("DROP TABLE system_schema.keyspaces"));
    assertThrows(
        UnauthorizedException.class,
        () -> session.execute("CREATE TABLE system_views.mine (k int PRIMARY KEY)"));
    // Virtual tables are read-only, with Cassandra's text.
    InvalidQueryException readOnly =
        assertThrows(
            InvalidQueryException.class,
            () ->
                session.execute(
                    "INSERT INTO system_views.settings (name, value) VALUES ('a', 'b')"));
    assertEquals(
        "Modification is not supported by table system_views.settings", readOnly.getMessage());
    InvalidQueryException truncate =
        assertThrows(
            InvalidQueryException.class,
            () -> session.execute("TRUNCATE system_virtual_schema.tables"));
    assertEquals(
        "Truncation is not supported by table system_virtual_schema.tables", truncate.getMessage());
    // The session still works after every error.
    assertEquals(0, session.execute("SELECT * FROM " + KS + ".errs").all().size());
  }

  @Test
  void asyncExecution() throws Exception {
    session.execute("CREATE TABLE " + KS + ".async (k int PRIMARY KEY, v text)");
    PreparedStatement insert =
        session
            .prepareAsync("INSERT INTO " + KS + ".async (k, v) VALUES (?, ?)")
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
    List<CompletionStage<AsyncResultSet>> writes = new ArrayList<>();
    for (int k = 0; k < 500; k++) {
      writes.add(session.executeAsync(insert.bind(k, "v" + k)));
    }
    waitAll(writes);
    PreparedStatement select = session.prepare("SELECT v FROM " + KS + ".async WHERE k = ?");
    List<CompletableFuture<String>> reads = new ArrayList<>();
    for (int k = 0; k < 500; k++) {
      reads.add(
          session
              .executeAsync(select.bind(k))
              .thenApply(rs -> rs.one().getString("v"))
              .toCompletableFuture());
    }
    for (int k = 0; k < 500; k++) {
      assertEquals("v" + k, reads.get(k).get(30, TimeUnit.SECONDS));
    }
    // Async paging: fetch the next pages by hand.
    AsyncResultSet page =
        session
            .executeAsync(SimpleStatement.newInstance("SELECT k FROM " + KS + ".async").setPageSize(64))
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
    int count = 0;
    while (true) {
      for (Row ignored : page.currentPage()) {
        count++;
      }
      if (!page.hasMorePages()) {
        break;
      }
      page = page.fetchNextPage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    assertEquals(500, count);
    // A failed async request completes exceptionally with the mapped class.
    CompletableFuture<AsyncResultSet> bad =
        session.executeAsync("SELECT * FROM " + KS + ".missing").toCompletableFuture();
    Exception e = assertThrows(Exception.class, () -> bad.get(30, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof InvalidQueryException, e.toString());
  }

  private static void waitAll(List<CompletionStage<AsyncResultSet>> stages) {
    CompletableFuture.allOf(
            stages.stream().map(CompletionStage::toCompletableFuture).toArray(CompletableFuture[]::new))
        .join();
  }

  private static KeyspaceMetadata keyspace(String name) {
    return session
        .getMetadata()
        .getKeyspace(name)
        .orElseThrow(() -> new AssertionError("keyspace " + name + " missing from metadata"));
  }

  private static TableMetadata table(String ks, String name) {
    return keyspace(ks)
        .getTable(name)
        .orElseThrow(() -> new AssertionError("table " + ks + "." + name + " missing from metadata"));
  }

  private static ColumnMetadata column(TableMetadata t, String name) {
    return t.getColumn(name).orElseThrow(() -> new AssertionError("column " + name + " missing"));
  }

  private static Set<String> names(Set<CqlIdentifier> ids) {
    Set<String> out = new HashSet<>();
    for (CqlIdentifier id : ids) {
      out.add(id.asInternal());
    }
    return out;
  }

  private static List<String> names(Iterable<ColumnMetadata> columns) {
    List<String> out = new ArrayList<>();
    for (ColumnMetadata c : columns) {
      out.add(c.getName().asInternal());
    }
    return out;
  }
}
