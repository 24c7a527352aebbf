"""Authorization: `authorizer: CassandraAuthorizer` (crates/cql/src/exec/auth.rs, permissions.rs).

A role without permissions is refused every kind of statement with Unauthorized and
Cassandra's texts; each GRANT opens exactly what it names and REVOKE closes it; permissions
are inherited through GRANT role TO role; superusers bypass; a keyspace's or table's creator
gets its permissions; permissions survive a restart and are listed as Cassandra lists them;
on a three-node ring a role and a grant made on node 1 hold on node 3 (they are entries of
the schema log, group 0)."""

import pytest
from cassandra import InvalidRequest, Unauthorized
from cassandra.protocol import SyntaxException
from cassandra.auth import PlainTextAuthProvider
from cassandra.query import BatchStatement

from conftest import make_cluster, serve_refused
from test_cluster import alone, three_nodes, wait_for

AUTH = "authenticator: PasswordAuthenticator\nauthorizer: CassandraAuthorizer\n"


@pytest.fixture(scope="module")
def znode(node_factory, tmp_path_factory):
    cfg = tmp_path_factory.mktemp("authz-config") / "cairn.yaml"
    cfg.write_text(AUTH)
    return node_factory("authz", ["--config", str(cfg)])


class Login:
    """A driver session logged in as `user` (closed by `close`)."""

    def __init__(self, node, user, password):
        kw = {"auth_provider": PlainTextAuthProvider(username=user, password=password)}
        self.cluster = make_cluster(node, **kw)
        self.session = self.cluster.connect()

    def close(self):
        self.cluster.shutdown()


@pytest.fixture(scope="module")
def su(znode):
    login = Login(znode, "cassandra", "cassandra")
    s = login.session
    s.execute("CREATE KEYSPACE authz WITH replication = "
              "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute("CREATE TABLE authz.t (k int PRIMARY KEY, v int)")
    s.execute("CREATE TABLE authz.u (k int PRIMARY KEY, v int)")
    s.execute("INSERT INTO authz.t (k, v) VALUES (1, 1)")
    yield s
    login.close()


def user(znode, su, name):
    su.execute(f"CREATE ROLE IF NOT EXISTS {name} WITH PASSWORD = 'pw' AND LOGIN = true")
    return Login(znode, name, "pw")


def refused(s, query, text=None):
    with pytest.raises(Unauthorized) as info:
        s.execute(query)
    if text is not None:
        assert text in str(info.value), str(info.value)
    return str(info.value)


def no_perm(u, perm, resource):
    return f"User {u} has no {perm} permission on {resource} or any of its parents"


def test_a_role_without_permissions_is_refused_every_statement(znode, su):
    lg = user(znode, su, "nobody")
    s = lg.session
    try:
        refused(s, "SELECT * FROM authz.t", no_perm("nobody", "SELECT", "<table authz.t>"))
        for q in ["INSERT INTO authz.t (k, v) VALUES (2, 2)",
                  "UPDATE authz.t SET v = 3 WHERE k = 1",
                  "DELETE FROM authz.t WHERE k = 1",
                  "BEGIN BATCH INSERT INTO authz.t (k, v) VALUES (5, 5); APPLY BATCH",
                  "TRUNCATE authz.t"]:
            refused(s, q, no_perm("nobody", "MODIFY", "<table authz.t>"))
        refused(s, "CREATE TABLE authz.x (k int PRIMARY KEY)",
                no_perm("nobody", "CREATE", "<all tables in authz>"))
        refused(s, "ALTER TABLE authz.t ADD w int", no_perm("nobody", "ALTER", "<table authz.t>"))
        refused(s, "DROP TABLE authz.t", no_perm("nobody", "DROP", "<table authz.t>"))
        refused(s, "CREATE KEYSPACE nk WITH replication = "
                   "{'class': 'SimpleStrategy', 'replication_factor': 1}",
                no_perm("nobody", "CREATE", "<all keyspaces>"))
        refused(s, "ALTER KEYSPACE authz WITH durable_writes = true",
                no_perm("nobody", "ALTER", "<keyspace authz>"))
        refused(s, "DROP KEYSPACE authz", no_perm("nobody", "DROP", "<keyspace authz>"))
        privileges = "User nobody does not have sufficient privileges to perform the requested operation"
        refused(s, "CREATE ROLE r2", privileges)
        refused(s, "DROP ROLE cassandra", privileges)
        refused(s, "GRANT cassandra TO nobody", privileges)
        refused(s, "GRANT SELECT ON TABLE authz.t TO nobody",
                no_perm("nobody", "AUTHORIZE", "<table authz.t>"))
        refused(s, "LIST ALL PERMISSIONS", "You are not authorized to view everyone's permissions")
        # LIST ROLES shows a role without DESCRIBE only its own roles.
        assert [r.role for r in s.execute("LIST ROLES")] == ["nobody"]
        refused(s, "LIST ROLES OF cassandra", "You are not authorized to view roles granted to cassandra")
        # A BATCH of prepared statements is checked member by member.
        ins = s.prepare("INSERT INTO authz.t (k, v) VALUES (?, ?)")
        b = BatchStatement()
        b.add(ins, (7, 7))
        with pytest.raises(Unauthorized):
            s.execute(b)
        # USE needs a login only; what the drivers read is readable by everyone.
        s.execute("USE authz")
        refused(s, "SELECT * FROM t", no_perm("nobody", "SELECT", "<table authz.t>"))
        assert s.execute("SELECT release_version FROM system.local").one()
        assert s.execute("SELECT * FROM system_schema.tables WHERE keyspace_name = 'authz'").all()
        refused(s, "SELECT * FROM system_auth.roles",
                no_perm("nobody", "SELECT", "<table system_auth.roles>"))
    finally:
        lg.close()


def test_each_grant_opens_exactly_what_it_names_and_revoke_closes_it(znode, su):
    lg = user(znode, su, "app")
    s = lg.session
    try:
        sel = s.prepare("SELECT v FROM authz.t WHERE k = 1")
        su.execute("GRANT SELECT ON TABLE authz.t TO app")
        assert s.execute("SELECT v FROM authz.t WHERE k = 1").one().v == 1
        assert s.execute(sel).one().v == 1
        refused(s, "SELECT * FROM authz.u", no_perm("app", "SELECT", "<table authz.u>"))
        refused(s, "INSERT INTO authz.t (k, v) VALUES (2, 2)")

        su.execute("GRANT MODIFY ON KEYSPACE authz TO app")
        s.execute("INSERT INTO authz.t (k, v) VALUES (2, 2)")
        s.execute("INSERT INTO authz.u (k, v) VALUES (2, 2)")
        s.execute("TRUNCATE authz.u")
        refused(s, "SELECT * FROM authz.u")
        refused(s, "DROP TABLE authz.u")

        su.execute("REVOKE SELECT ON TABLE authz.t FROM app")
        # A prepared statement is checked at each execution, not only when prepared.
        with pytest.raises(Unauthorized):
            s.execute(sel)
        su.execute("REVOKE MODIFY ON KEYSPACE authz FROM app")
        refused(s, "INSERT INTO authz.t (k, v) VALUES (3, 3)")

        # ALL KEYSPACES opens every keyspace but the system ones.
        su.execute("GRANT SELECT ON ALL KEYSPACES TO app")
        s.execute("SELECT * FROM authz.u")
        refused(s, "SELECT * FROM system_auth.roles")
        su.execute("REVOKE SELECT ON ALL KEYSPACES FROM app")
        refused(s, "SELECT * FROM authz.u")
    finally:
        lg.close()


def test_permissions_are_inherited_through_roles(znode, su):
    su.execute("CREATE ROLE IF NOT EXISTS reader")
    su.execute("GRANT SELECT ON KEYSPACE authz TO reader")
    lg = user(znode, su, "member")
    s = lg.session
    try:
        refused(s, "SELECT * FROM authz.t")
        su.execute("GRANT reader TO member")
        s.execute("SELECT * FROM authz.t")
        with pytest.raises(InvalidRequest, match="member is a member of reader"):
            su.execute("GRANT reader TO member")
        # A cycle is refused (Cassandra names the role that would be granted first).
        with pytest.raises(InvalidRequest, match="member is a member of reader"):
            su.execute("GRANT member TO reader")
        rows = list(su.execute("SELECT * FROM system_auth.role_members WHERE role = 'reader'"))
        assert [(r.role, r.member) for r in rows] == [("reader", "member")]
        su.execute("REVOKE reader FROM member")
        refused(s, "SELECT * FROM authz.t")
        with pytest.raises(InvalidRequest, match="member is not a member of reader"):
            su.execute("REVOKE reader FROM member")
    finally:
        lg.close()


def test_the_creator_gets_all_and_dropping_removes_permissions(znode, su):
    lg = user(znode, su, "maker")
    s = lg.session
    try:
        su.execute("GRANT CREATE ON ALL KEYSPACES TO maker")
        s.execute("CREATE KEYSPACE mk WITH replication = "
                  "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE mk.t (k int PRIMARY KEY, v int)")
        s.execute("INSERT INTO mk.t (k, v) VALUES (1, 1)")
        assert s.execute("SELECT v FROM mk.t").one().v == 1
        listed = {(r.resource, r.permission) for r in su.execute("LIST ALL PERMISSIONS OF maker")}
        assert ("<keyspace mk>", "CREATE") in listed and ("<table mk.t>", "SELECT") in listed
        assert ("<table mk.t>", "CREATE") not in listed  # not applicable to a table
        s.execute("DROP TABLE mk.t")
        s.execute("DROP KEYSPACE mk")
        listed = {r.resource for r in su.execute("LIST ALL PERMISSIONS OF maker")}
        assert listed == {"<all keyspaces>"}
        # A superuser bypasses every check; system_auth's tables show the roles, read-only.
        su.execute("SELECT * FROM system_auth.role_permissions")
        with pytest.raises(InvalidRequest, match="Modification is not supported by table"):
            su.execute("INSERT INTO system_auth.roles (role) VALUES ('sneaky')")
    finally:
        lg.close()


def test_list_permissions_is_cassandras(znode, su):
    su.execute("CREATE ROLE IF NOT EXISTS lister")
    su.execute("GRANT SELECT ON TABLE authz.t TO lister")
    su.execute("GRANT MODIFY ON TABLE authz.t TO lister")
    su.execute("GRANT ALTER ON KEYSPACE authz TO lister")
    rs = su.execute("LIST ALL PERMISSIONS OF lister")
    assert rs.column_names == ["role", "username", "resource", "permission"]
    assert [tuple(r) for r in rs] == [
        ("lister", "lister", "<keyspace authz>", "ALTER"),
        ("lister", "lister", "<table authz.t>", "SELECT"),
        ("lister", "lister", "<table authz.t>", "MODIFY"),
    ]
    rows = [tuple(r) for r in su.execute("LIST SELECT ON TABLE authz.t OF lister")]
    assert rows == [("lister", "lister", "<table authz.t>", "SELECT")]
    # The resource's parents are listed too, unless NORECURSIVE.
    rows = [tuple(r)[2:] for r in su.execute("LIST ALL ON TABLE authz.t OF lister")]
    assert ("<keyspace authz>", "ALTER") in rows
    rows = [tuple(r)[2:] for r in su.execute("LIST ALL ON TABLE authz.t OF lister NORECURSIVE")]
    assert ("<keyspace authz>", "ALTER") not in rows
    perms = su.execute("SELECT permissions FROM system_auth.role_permissions "
                       "WHERE role = 'lister' AND resource = 'data/authz/t'").one().permissions
    assert set(perms) == {"SELECT", "MODIFY"}
    # What Cassandra refuses, as it refuses it.
    with pytest.raises(SyntaxException,
                       match="Resource type DataResource does not support any of the requested"):
        su.execute("GRANT CREATE ON TABLE authz.t TO lister")
    with pytest.raises(InvalidRequest, match=r"Resource <keyspace nope> doesn't exist"):
        su.execute("GRANT SELECT ON KEYSPACE nope TO lister")
    with pytest.raises(InvalidRequest, match="Role ghost doesn't exist"):
        su.execute("GRANT SELECT ON KEYSPACE authz TO ghost")
    with pytest.raises(Unauthorized, match="Granting permissions on system keyspaces is strictly"):
        su.execute("GRANT MODIFY ON KEYSPACE system TO lister")
    with pytest.raises(InvalidRequest, match="Functions are not supported"):
        su.execute("GRANT EXECUTE ON ALL FUNCTIONS TO lister")
    rs = su.execute("GRANT SELECT ON TABLE authz.t TO lister")
    assert rs.response_future.warnings == [
        "Role 'lister' was already granted SELECT on <table authz.t>"]


def test_permissions_survive_a_restart(znode, su):
    su.execute("CREATE ROLE IF NOT EXISTS durable WITH PASSWORD = 'pw' AND LOGIN = true")
    su.execute("GRANT SELECT ON TABLE authz.t TO durable")
    znode.restart()
    lg = Login(znode, "durable", "pw")
    try:
        lg.session.execute("SELECT * FROM authz.t")
        refused(lg.session, "SELECT * FROM authz.u")
    finally:
        lg.close()


def test_the_authorizer_needs_the_password_authenticator(tmp_path):
    err = serve_refused(tmp_path, "authorizer: CassandraAuthorizer\n")
    assert "line 1: authorizer: org.apache.cassandra.auth.CassandraAuthorizer has authorization " \
           "enabled which requires" in err, err


@pytest.mark.parametrize("line", [
    "permissions_update_interval: 1000ms", "permissions_update_interval_in_ms: 1000"])
def test_permissions_update_interval_is_refused(tmp_path, line):
    # Cairn's cache is rebuilt at every change: the key would change nothing.
    err = serve_refused(tmp_path, f"authenticator: PasswordAuthenticator\n{line}\n")
    assert "line 2: " in err and "no background refresh to schedule" in err, err


@pytest.fixture(scope="module")
def auth_ring(tmp_root):
    with three_nodes(tmp_root / "cluster-authz", AUTH) as nodes:
        yield nodes


def test_a_role_and_a_grant_made_on_one_node_hold_on_another(auth_ring):
    n1, _, n3 = auth_ring
    a = Login(n1, "cassandra", "cassandra")
    try:
        s = a.session
        s.execute("CREATE KEYSPACE shared WITH replication = "
                  "{'class': 'NetworkTopologyStrategy', 'datacenter1': 3}")
        s.execute("CREATE TABLE shared.t (k int PRIMARY KEY, v int)")
        s.execute("CREATE ROLE ringer WITH PASSWORD = 'pw' AND LOGIN = true")
        s.execute("GRANT SELECT ON TABLE shared.t TO ringer")
    finally:
        a.close()

    def can_select():
        try:
            lg = Login(n3, "ringer", "pw")
        except Exception:  # noqa: BLE001 - not there yet
            return False
        try:
            lg.session.execute("SELECT * FROM shared.t")
            return True
        except Unauthorized:
            return False
        finally:
            lg.close()

    wait_for("the role and its grant on node 3", can_select)
    lg = Login(n3, "ringer", "pw")
    try:
        refused(lg.session, "INSERT INTO shared.t (k, v) VALUES (1, 1)",
                no_perm("ringer", "MODIFY", "<table shared.t>"))
    finally:
        lg.close()


def test_a_role_made_on_one_node_can_be_granted_at_once_on_another(auth_ring):
    # The driver sends each statement where its policy says; a role change answers once the
    # nodes that are up have it, so the next statement finds the role wherever it lands
    # (CI once failed "Role ringer doesn't exist" on a GRANT sent to another node).
    kw = {"auth_provider": PlainTextAuthProvider(username="cassandra", password="cassandra")}
    ones = [alone(n, **kw) for n in auth_ring]
    try:
        sessions = [c.connect() for c in ones]
        sessions[0].execute("CREATE KEYSPACE IF NOT EXISTS shared WITH replication = "
                            "{'class': 'NetworkTopologyStrategy', 'datacenter1': 3}")
        sessions[0].execute("CREATE TABLE IF NOT EXISTS shared.t (k int PRIMARY KEY, v int)")
        for i in range(20):
            made, granted = sessions[i % 3], sessions[(i + 1) % 3]
            made.execute(f"CREATE ROLE quick{i} WITH PASSWORD = 'pw' AND LOGIN = true")
            granted.execute(f"GRANT SELECT ON TABLE shared.t TO quick{i}")
            granted.execute(f"DROP ROLE quick{i}")
            with pytest.raises(InvalidRequest, match=f"quick{i} doesn't exist"):
                made.execute(f"GRANT SELECT ON TABLE shared.t TO quick{i}")
    finally:
        for c in ones:
            c.shutdown()
