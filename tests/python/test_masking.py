"""Dynamic data masking, Cassandra 5.0's CEP-20 (crates/cql/src/values/masking.rs,
crates/cql/src/exec/masks.rs).

The masking functions answer as Cassandra's in any selection; column masks (`MASKED WITH`)
need `dynamic_data_masking_enabled` (off by default, refused with Cassandra's text), are kept
in the schema (system_schema.column_masks, DESCRIBE, a restart), and show masked values to
a role without UNMASK — in plain columns, functions, aggregates and JSON alike — while such a
role may restrict a masked column only with SELECT_MASKED. Without an authorizer (the shared
node) every value is clear, as for Cassandra's anonymous user."""

import hashlib

import pytest
from cassandra import InvalidRequest, Unauthorized
from cassandra.auth import PlainTextAuthProvider

from conftest import make_cluster
from test_cluster import three_nodes, wait_for

CONFIG = ("authenticator: PasswordAuthenticator\nauthorizer: CassandraAuthorizer\n"
          "dynamic_data_masking_enabled: true\n")
DISABLED = ("Cannot mask columns because dynamic data masking is not enabled. You can enable "
            "it with the dynamic_data_masking_enabled property on cassandra.yaml")


def invalid(s, query, text):
    with pytest.raises(InvalidRequest) as info:
        s.execute(query)
    assert text in str(info.value), str(info.value)


# --- The functions, on the shared node -----------------------------------------------------

@pytest.fixture(scope="module")
def ft(session, ks):
    session.execute(f"CREATE TABLE {ks}.f (k int PRIMARY KEY, s text, a ascii, i int, "
                    "l list<int>, d date, tu tuple<int, text>)")
    session.execute(f"INSERT INTO {ks}.f (k, s, a, i, l, d, tu) "
                    "VALUES (1, 'héllo😀x', 'abc', 42, [1, 2], '2024-01-02', (1, 'x'))")
    session.execute(f"INSERT INTO {ks}.f (k) VALUES (2)")
    return f"{ks}.f"


def test_masking_functions_answer_as_cassandra(session, ft):
    rs = session.execute(
        f"SELECT mask_inner(s, 1, 1), mask_outer(s, 2, 2), mask_inner(a, 1, 1, '#'), "
        f"mask_default(s), mask_default(i), mask_default(l), mask_default(tu), mask_null(i), "
        f"mask_replace(i, 7), system.mask_hash(s, 'MD5'), mask_hash(i) FROM {ft} WHERE k = 1")
    assert rs.column_names == [
        "system.mask_inner(s, 1, 1)", "system.mask_outer(s, 2, 2)",
        "system.mask_inner(a, 1, 1, '#')", "system.mask_default(s)", "system.mask_default(i)",
        "system.mask_default(l)", "system.mask_default(tu)", "system.mask_null(i)",
        "system.mask_replace(i, 7)", "system.mask_hash(s, 'MD5')", "system.mask_hash(i)"]
    row = rs.one()
    # Java's characters: '😀' is two UTF-16 units, the one left unmasked is written '?'.
    assert row[0] == "h******x"
    assert row[1] == "**llo?**"
    assert row[2] == "a#c"
    assert row[3:9] == ("****", 0, [], (0, "****"), None, 7)
    assert row[9] == hashlib.md5("héllo😀x".encode()).digest()
    assert row[10] == hashlib.sha256((42).to_bytes(4, "big")).digest()
    # A null value: mask_default still answers its default, the others null.
    row = session.execute(f"SELECT mask_default(s), mask_inner(s, 1, 1), mask_hash(s) "
                          f"FROM {ft} WHERE k = 2").one()
    assert tuple(row) == ("****", None, None)


def test_masking_function_refusals(session, ft):
    invalid(session, f"SELECT mask_inner(i, 1, 1) FROM {ft}",
            "Function system.mask_inner requires an argument of type [text|varchar|ascii], "
            "but found argument i of type int")
    invalid(session, f"SELECT mask_inner(s, 1) FROM {ft}",
            "Invalid number of arguments for function "
            "system.mask_inner([text|varchar|ascii], int, int, [text])")
    invalid(session, f"SELECT mask_inner(s, 'a', 1) FROM {ft}",
            "Function system.mask_inner requires an argument of type int, "
            "but found argument 'a' of type ascii")
    invalid(session, f"SELECT mask_replace(s, 1) FROM {ft}",
            "Type error: 1 cannot be passed as argument 1 of function system.mask_replace "
            "of type text")
    # Constant arguments are checked before any row.
    invalid(session, f"SELECT mask_inner(s, 1, 1, 'ab') FROM {ft} WHERE k = 99",
            "The padding argument for function system.mask_inner should be single-character, "
            "but 'ab' has 2 characters.")
    invalid(session, f"SELECT mask_hash(s, 'NOPE') FROM {ft} WHERE k = 99",
            "Hash algorithm not found: NOPE")
    invalid(session, f"SELECT mask_default(null) FROM {ft}",
            "Cannot infer type of argument NULL in call to function system.mask_default(any)")


def test_column_masks_need_the_setting(session, ks):
    invalid(session, f"CREATE TABLE {ks}.off (k int PRIMARY KEY, v text MASKED WITH DEFAULT)",
            DISABLED)
    session.execute(f"CREATE TABLE IF NOT EXISTS {ks}.off (k int PRIMARY KEY, v text)")
    invalid(session, f"ALTER TABLE {ks}.off ALTER v MASKED WITH DEFAULT", DISABLED)
    invalid(session, f"ALTER TABLE {ks}.off ADD w int MASKED WITH DEFAULT", DISABLED)
    # Dropping a mask needs no setting (here there is none to drop: nothing changes).
    session.execute(f"ALTER TABLE {ks}.off ALTER v DROP MASKED")


# --- Column masks and who sees them, on a node with an authorizer ------------------------

class Login:
    def __init__(self, node, user, password):
        kw = {"auth_provider": PlainTextAuthProvider(username=user, password=password)}
        self.cluster = make_cluster(node, **kw)
        self.session = self.cluster.connect()

    def close(self):
        self.cluster.shutdown()


@pytest.fixture(scope="module")
def mnode(node_factory, tmp_path_factory):
    cfg = tmp_path_factory.mktemp("masking-config") / "cairn.yaml"
    cfg.write_text(CONFIG)
    return node_factory("masking", ["--config", str(cfg)])


@pytest.fixture(scope="module")
def su(mnode):
    login = Login(mnode, "cassandra", "cassandra")
    s = login.session
    s.execute("CREATE KEYSPACE ddm WITH replication = "
              "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute("CREATE TABLE ddm.t (k int MASKED WITH DEFAULT, c int, "
              "s int static MASKED WITH mask_replace(5), "
              "v text MASKED WITH mask_inner(1, null, '#'), w int, PRIMARY KEY (k, c))")
    s.execute("INSERT INTO ddm.t (k, c, s, v, w) VALUES (7, 7, 7, 'secret', 7)")
    s.execute("CREATE ROLE reader WITH PASSWORD = 'pw' AND LOGIN = true")
    s.execute("GRANT SELECT ON KEYSPACE ddm TO reader")
    yield s
    login.close()


@pytest.fixture()
def reader(mnode, su):
    login = Login(mnode, "reader", "pw")
    yield login.session
    login.close()


def unauthorized(s, query, columns):
    with pytest.raises(Unauthorized) as info:
        s.execute(query)
    assert ("User reader has no UNMASK nor SELECT_MASKED permission on table ddm.t, "
            f"cannot query masked columns {columns}") in str(info.value), str(info.value)


def test_superuser_sees_clear_values(su):
    assert tuple(su.execute("SELECT k, c, s, v, w FROM ddm.t").one()) == (7, 7, 7, "secret", 7)


def test_a_role_without_unmask_sees_masked_values(reader):
    rs = reader.execute("SELECT * FROM ddm.t")
    assert rs.column_names == ["k", "c", "s", "v", "w"]
    assert tuple(rs.one()) == (0, 7, 5, "s#####", 7)
    # Everything computed from a masked column is computed from its masked value.
    row = reader.execute("SELECT mask_inner(v, 0, 0), writetime(v), k + 1 FROM ddm.t").one()
    assert row[0] == "******" and row[1] > 0 and row[2] == 1
    assert reader.execute("SELECT max(k), count(v) FROM ddm.t").one() == (0, 1)
    # Inside a tuple of selectors and under a type hint too.
    assert reader.execute("SELECT (k, v), (int) k FROM ddm.t").one() == ((0, "s#####"), 0)
    # A prepared statement's cached plan is masked at each execution, per session.
    prepared = reader.prepare("SELECT k, v FROM ddm.t WHERE c = ? ALLOW FILTERING")
    assert tuple(reader.execute(prepared, [7]).one()) == (0, "s#####")
    js = reader.execute("SELECT JSON k, v FROM ddm.t").one()[0]
    assert js == '{"k": 0, "v": "s#####"}'
    # Restricting a masked column needs SELECT_MASKED; others are free.
    assert reader.execute("SELECT c FROM ddm.t WHERE w = 7 ALLOW FILTERING").one().c == 7
    unauthorized(reader, "SELECT * FROM ddm.t WHERE k = 7", "[k]")
    unauthorized(reader, "SELECT * FROM ddm.t WHERE token(k) = token(7)", "[k]")
    unauthorized(reader, "SELECT * FROM ddm.t WHERE v = 'secret' ALLOW FILTERING", "[v]")
    unauthorized(reader, "SELECT * FROM ddm.t WHERE k = 7 AND s = 7 ALLOW FILTERING", "[k, s]")


def test_select_masked_and_unmask(su, reader):
    su.execute("GRANT SELECT_MASKED ON TABLE ddm.t TO reader")
    try:
        # Restrictions on masked columns are allowed; the values stay masked.
        row = reader.execute("SELECT k, v FROM ddm.t WHERE k = 7").one()
        assert tuple(row) == (0, "s#####")
        su.execute("GRANT UNMASK ON KEYSPACE ddm TO reader")
        row = reader.execute("SELECT k, s, v FROM ddm.t WHERE k = 7").one()
        assert tuple(row) == (7, 7, "secret")
        su.execute("REVOKE UNMASK ON KEYSPACE ddm FROM reader")
        su.execute("REVOKE SELECT_MASKED ON TABLE ddm.t FROM reader")
        unauthorized(reader, "SELECT * FROM ddm.t WHERE k = 7", "[k]")
        assert tuple(reader.execute("SELECT k, v FROM ddm.t").one()) == (0, "s#####")
    finally:
        su.execute("REVOKE UNMASK ON KEYSPACE ddm FROM reader")
        su.execute("REVOKE SELECT_MASKED ON TABLE ddm.t FROM reader")


def test_masks_in_the_schema_tables_and_describe(su):
    rows = {r.column_name: r for r in su.execute(
        "SELECT * FROM system_schema.column_masks WHERE keyspace_name = 'ddm' "
        "AND table_name = 't'")}
    assert sorted(rows) == ["k", "s", "v"]
    v = rows["v"]
    assert (v.function_keyspace, v.function_name) == ("system", "mask_inner")
    assert v.function_argument_types == ["int", "int", "text"]
    assert v.function_argument_values == ["1", "", "#"]
    assert v.function_argument_nulls == [False, True, False]
    assert rows["k"].function_name == "mask_default" and rows["k"].function_argument_types == []
    ddl = su.execute("DESCRIBE TABLE ddm.t").one().create_statement
    assert "    k int MASKED WITH system.mask_default(),\n" in ddl
    assert "    s int static MASKED WITH system.mask_replace(5),\n" in ddl
    assert "    v text MASKED WITH system.mask_inner(1, null, '#'),\n" in ddl
    assert "    w int,\n" in ddl


def test_mask_arguments_of_other_types(su):
    su.execute("CREATE TABLE ddm.typed (k int PRIMARY KEY, "
               "l frozen<list<int>> MASKED WITH mask_replace([1, 2]), "
               "ts timestamp MASKED WITH mask_replace('2024-01-02 03:04:05+0000'), "
               "tu tuple<int, text> MASKED WITH mask_replace((1, 'a')))")
    rows = {r.column_name: r for r in su.execute(
        "SELECT * FROM system_schema.column_masks WHERE keyspace_name = 'ddm' "
        "AND table_name = 'typed'")}
    # Cassandra's getString: hex for a collection, Java's toString, components joined by ':'.
    assert rows["l"].function_argument_values == ["0000000200000004000000010000000400000002"]
    assert rows["ts"].function_argument_values == ["2024-01-02T03:04:05.000Z"]
    assert rows["tu"].function_argument_values == ["1:a"]
    assert rows["tu"].function_argument_types == ["frozen<tuple<int, text>>"]
    ddl = su.execute("DESCRIBE TABLE ddm.typed").one().create_statement
    assert "MASKED WITH system.mask_replace('2024-01-02T03:04:05.000Z')" in ddl


def test_alter_masks(su, mnode):
    su.execute("CREATE TABLE ddm.a (k int PRIMARY KEY, v text, n int)")
    su.execute("INSERT INTO ddm.a (k, v, n) VALUES (1, 'abcdef', 3)")
    su.execute("ALTER TABLE ddm.a ALTER v MASKED WITH mask_outer(1, 1)")
    su.execute("ALTER TABLE ddm.a ADD z int MASKED WITH mask_null()")
    invalid(su, "ALTER TABLE ddm.a ALTER n MASKED WITH mask_hash()",
            "Masking function mask_hash() return type is blob. This is different to the type "
            "of the masked column n of type int.")
    invalid(su, "ALTER TABLE ddm.a ALTER n MASKED WITH mask_inner(1, 1)",
            "Function system.mask_inner requires an argument of type [text|varchar|ascii], "
            "but found argument org.apache.cassandra.db.marshal.Int32Type of type int")
    invalid(su, "ALTER TABLE ddm.a ALTER n MASKED WITH abs()",
            "Not-masking function abs() cannot be used for masking table columns")
    invalid(su, "ALTER TABLE ddm.a ALTER n MASKED WITH nope()",
            "Unable to find masking function for n, no declared function matches the "
            "signature nope()")
    invalid(su, "ALTER TABLE ddm.a ALTER missing MASKED WITH DEFAULT",
            "Column with name 'missing' doesn't exist on table 'a'")
    login = Login(mnode, "reader", "pw")
    try:
        row = login.session.execute("SELECT v, n, z FROM ddm.a").one()
        assert tuple(row) == ("*bcde*", 3, None)
        su.execute("ALTER TABLE ddm.a ALTER v DROP MASKED")
        assert login.session.execute("SELECT v FROM ddm.a").one().v == "abcdef"
    finally:
        login.close()
    names = [r.column_name for r in su.execute(
        "SELECT column_name FROM system_schema.column_masks WHERE keyspace_name = 'ddm' "
        "AND table_name = 'a'")]
    assert names == ["z"]


def test_masks_survive_a_restart(mnode, su):
    mnode.restart()
    login = Login(mnode, "reader", "pw")
    try:
        assert tuple(login.session.execute("SELECT k, v FROM ddm.t").one()) == (0, "s#####")
    finally:
        login.close()
    admin = Login(mnode, "cassandra", "cassandra")
    try:
        ddl = admin.session.execute("DESCRIBE TABLE ddm.t").one().create_statement
        assert "v text MASKED WITH system.mask_inner(1, null, '#')" in ddl
    finally:
        admin.close()


def test_the_setting_in_system_views(session, mnode, su):
    q = "SELECT value FROM system_views.settings WHERE name = 'dynamic_data_masking_enabled'"
    assert session.execute(q).one().value == "false"
    admin = Login(mnode, "cassandra", "cassandra")
    try:
        assert admin.session.execute(q).one().value == "true"
    finally:
        admin.close()


# --- A ring: masks are schema, made on one node and applied on every node ----------------

@pytest.fixture(scope="module")
def masking_ring(tmp_root):
    with three_nodes(tmp_root / "cluster-masking", CONFIG) as nodes:
        yield nodes


def test_a_mask_made_on_one_node_holds_on_another(masking_ring):
    n1, _, n3 = masking_ring
    a = Login(n1, "cassandra", "cassandra")
    try:
        s = a.session
        s.execute("CREATE KEYSPACE ringddm WITH replication = "
                  "{'class': 'NetworkTopologyStrategy', 'datacenter1': 3}")
        s.execute("CREATE TABLE ringddm.t (k int PRIMARY KEY, v text)")
        s.execute("INSERT INTO ringddm.t (k, v) VALUES (1, 'secret')")
        s.execute("CREATE ROLE ringer WITH PASSWORD = 'pw' AND LOGIN = true")
        s.execute("GRANT SELECT ON TABLE ringddm.t TO ringer")
        s.execute("ALTER TABLE ringddm.t ALTER v MASKED WITH mask_outer(1, 1)")
    finally:
        a.close()

    def masked_on_n3():
        try:
            lg = Login(n3, "ringer", "pw")
        except Exception:  # noqa: BLE001 - the role is not there yet
            return False
        try:
            return lg.session.execute("SELECT v FROM ringddm.t WHERE k = 1").one().v == "*ecre*"
        finally:
            lg.close()

    wait_for("the mask on node 3", masked_on_n3)
