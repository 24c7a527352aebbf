"""Authentication: PasswordAuthenticator (SASL PLAIN), default superuser cassandra/cassandra,
CREATE / ALTER / DROP ROLE, LIST ROLES, passwords stored hashed, roles survive a restart."""

import os

import pytest
from cassandra import AuthenticationFailed, Unauthorized
from cassandra.auth import AuthProvider, Authenticator, PlainTextAuthProvider
from cassandra.cluster import NoHostAvailable

from conftest import make_cluster


@pytest.fixture(scope="module")
def anode(node_factory, tmp_path_factory):
    # Authentication is switched on the way users do it: in the YAML configuration.
    cfg = tmp_path_factory.mktemp("auth-config") / "cairn.yaml"
    cfg.write_text("authenticator: PasswordAuthenticator\n")
    return node_factory("auth", ["--config", str(cfg)])


def login(n, user, password):
    c = make_cluster(n, auth_provider=PlainTextAuthProvider(username=user, password=password))
    try:
        return c, c.connect()
    except Exception:
        c.shutdown()
        raise


def login_fails(n, user, password):
    with pytest.raises(NoHostAvailable) as info:
        login(n, user, password)
    errs = list(info.value.errors.values())
    assert errs and isinstance(errs[0], AuthenticationFailed), errs
    return str(errs[0])


@pytest.fixture(scope="module")
def su(anode):
    c, s = login(anode, "cassandra", "cassandra")
    yield s
    c.shutdown()


def test_no_credentials_refused(anode):
    c = make_cluster(anode)
    try:
        with pytest.raises(NoHostAvailable) as info:
            c.connect()
        assert "requires authentication" in str(info.value) or "AuthenticationFailed" in str(info.value)
    finally:
        c.shutdown()


def test_default_superuser(su):
    assert su.execute("SELECT release_version FROM system.local").one() is not None


def test_wrong_password(anode):
    msg = login_fails(anode, "cassandra", "wrong")
    assert "Provided username cassandra and/or password are incorrect" in msg
    login_fails(anode, "nobody", "x")


def test_role_lifecycle(anode, su):
    su.execute("CREATE ROLE alice WITH PASSWORD = 'pw1' AND LOGIN = true")
    c, s = login(anode, "alice", "pw1")
    c.shutdown()
    roles = {r.role: r for r in su.execute("LIST ROLES")}
    assert {"cassandra", "alice"} <= set(roles)
    assert roles["alice"].super is False and roles["alice"].login is True
    assert roles["cassandra"].super is True
    su.execute("ALTER ROLE alice WITH PASSWORD = 'pw2'")
    login_fails(anode, "alice", "pw1")
    c, s = login(anode, "alice", "pw2")
    c.shutdown()
    su.execute("DROP ROLE alice")
    login_fails(anode, "alice", "pw2")
    su.execute("DROP ROLE IF EXISTS alice")


def test_role_without_login_cannot_connect(anode, su):
    su.execute("CREATE ROLE nologin WITH PASSWORD = 'pw'")
    login_fails(anode, "nologin", "pw")


def test_create_user_legacy_syntax(anode, su):
    su.execute("CREATE USER bob WITH PASSWORD 'bobpw' NOSUPERUSER")
    c, s = login(anode, "bob", "bobpw")
    c.shutdown()
    assert "bob" in {r.name for r in su.execute("LIST USERS")}


def test_passwords_stored_hashed(su):
    su.execute("CREATE ROLE IF NOT EXISTS hashed WITH PASSWORD = 'secret' AND LOGIN = true")
    h = su.execute("SELECT salted_hash FROM system_auth.roles WHERE role = 'hashed'").one()[0]
    assert h and h != "secret" and h.startswith("$2")


def test_non_superuser_cannot_grant_superuser(anode, su):
    su.execute("CREATE ROLE IF NOT EXISTS plain WITH PASSWORD = 'p' AND LOGIN = true")
    c, s = login(anode, "plain", "p")
    try:
        with pytest.raises(Unauthorized) as info:
            s.execute("CREATE ROLE sneaky WITH SUPERUSER = true AND PASSWORD = 'x' AND LOGIN = true")
        assert "Only superusers can create a role with superuser status" in str(info.value)
    finally:
        c.shutdown()


def test_roles_survive_restart(anode, su):
    su.execute("CREATE ROLE IF NOT EXISTS durable WITH PASSWORD = 'dpw' AND LOGIN = true")
    anode.restart()
    c, s = login(anode, "durable", "dpw")
    c.shutdown()
    login_fails(anode, "durable", "nope")


@pytest.mark.parametrize("yaml_text,key,line", [
    ("cluster_name: c\nauthorizer: LdapAuthorizer\n", "authorizer", 2),
    ("client_encryption_options:\n  enabled: true\n  keystore: conf/.keystore\n"
     "  require_endpoint_verification: true\n",
     "client_encryption_options", 2),
    ("role_manager: LDAPRoleManager\n", "role_manager", 1),
])
def test_unimplemented_security_settings_stop_the_node(tmp_path, yaml_text, key, line):
    """Fail closed: a security setting Cairn does not implement stops `cairn serve` with the
    key, its line and what is supported, instead of starting without it."""
    from conftest import serve_refused
    err = serve_refused(tmp_path, yaml_text)
    assert f"line {line}: {key}: " in err, err
    assert "Cairn refuses to start" in err and "Supported: " in err, err


class _RawAuthenticator(Authenticator):
    """Sends `payload` as the SASL token, whatever the server asks."""

    def __init__(self, payload):
        self.payload = payload

    def initial_response(self):
        return self.payload

    def evaluate_challenge(self, challenge):
        return self.payload


class _RawAuthProvider(AuthProvider):
    def __init__(self, payload):
        self.payload = payload

    def new_authenticator(self, host):
        return _RawAuthenticator(self.payload)


def test_bad_input_on_the_auth_path_never_takes_the_node_down(anode):
    # Garbage SASL tokens: no NUL, too few or too many parts, invalid UTF-8, random bytes.
    for payload in [b"", b"\x00", b"\x00\x00", b"no-separators", b"\x00" * 1000,
                    b"\x00user\x00pw\x00extra", b"\x00\xc3\x28\xff\x00\xfe", os.urandom(4096)]:
        c = make_cluster(anode, auth_provider=_RawAuthProvider(payload))
        try:
            with pytest.raises(NoHostAvailable):
                c.connect()
        finally:
            c.shutdown()
    # Long names and passwords, and many failed logins in a row.
    login_fails(anode, "u" * 60_000, "p")
    login_fails(anode, "cassandra", "p" * 60_000)
    for i in range(20):
        login_fails(anode, "cassandra", f"wrong-{i}")
    # The node still serves, and logs in the right password (a new session: an earlier
    # test restarts the node under the module's).
    c, s = login(anode, "cassandra", "cassandra")
    try:
        assert s.execute("SELECT release_version FROM system.local").one() is not None
    finally:
        c.shutdown()
    assert "panicked" not in anode.log_path.read_text(errors="replace")
