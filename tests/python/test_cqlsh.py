"""A scripted session with the real `cqlsh` (PyPI package) installed in the virtualenv."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def cqlsh_path():
    p = Path(sys.executable).parent / "cqlsh"
    if p.exists():
        return str(p)
    found = shutil.which("cqlsh")
    if not found:
        pytest.fail("cqlsh is not installed (tests/python/requirements.txt installs it)")
    return found


def cqlsh(node, statement, timeout=60):
    env = dict(os.environ, HOME=str(Path(node.data_dir).parent))
    proc = subprocess.run([cqlsh_path(), node.host, str(node.port), "--no-color", "-e", statement],
                          capture_output=True, text=True, timeout=timeout, env=env)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def table(session, ks):
    session.execute(f"CREATE TABLE {ks}.shown (p int, c text, v double, PRIMARY KEY (p, c)) "
                    "WITH CLUSTERING ORDER BY (c DESC) AND comment = 'for cqlsh'")
    session.execute(f"INSERT INTO {ks}.shown (p, c, v) VALUES (1, 'a', 1.5)")
    session.execute(f"INSERT INTO {ks}.shown (p, c, v) VALUES (1, 'b', 2.5)")
    session.execute(f"INSERT INTO {ks}.shown (p, c, v) VALUES (2, 'z', -3)")
    return f"{ks}.shown"


def test_cqlsh_connects(node):
    rc, out, err = cqlsh(node, "SELECT cluster_name, release_version FROM system.local")
    assert rc == 0, err
    assert "cluster_name" in out and "release_version" in out
    assert "(1 rows)" in out


def test_cqlsh_describe_keyspaces(node, ks, table):
    rc, out, err = cqlsh(node, "DESCRIBE KEYSPACES")
    assert rc == 0 and not err.strip(), err
    names = out.split()
    assert ks in names and "system" in names and "system_schema" in names


def test_cqlsh_describe_table(node, ks, table):
    rc, out, err = cqlsh(node, f"DESCRIBE TABLE {table}")
    assert rc == 0 and not err.strip(), err
    assert f"CREATE TABLE {table} (" in out
    assert "p int" in out and "c text" in out and "v double" in out
    assert "PRIMARY KEY (p, c)" in out
    assert "CLUSTERING ORDER BY (c DESC)" in out
    assert "comment = 'for cqlsh'" in out


def test_cqlsh_select(node, table):
    rc, out, err = cqlsh(node, f"SELECT * FROM {table} WHERE p = 1")
    assert rc == 0, err
    # cqlsh 6.2 warns on stdout when the server's release_version differs from its own (5.0)
    lines = [l.rstrip() for l in out.splitlines() if l.strip() and not l.startswith("WARNING: cqlsh was built against")]
    assert lines[0].split("|") and [x.strip() for x in lines[0].split("|")] == ["p", "c", "v"]
    assert set(lines[1]) <= {"-", "+"}
    body = [[x.strip() for x in l.split("|")] for l in lines[2:-1]]
    assert body == [["1", "b", "2.5"], ["1", "a", "1.5"]]
    assert lines[-1] == "(2 rows)"


def test_cqlsh_error_output(node, ks):
    rc, out, err = cqlsh(node, f"SELECT * FROM {ks}.nosuch")
    assert rc != 0
    assert "InvalidRequest" in err and "unconfigured table nosuch" in err


def test_cqlsh_script_with_several_statements(node, ks):
    script = (f"CREATE TABLE {ks}.scripted (k int PRIMARY KEY, v text); "
              f"INSERT INTO {ks}.scripted (k, v) VALUES (1, 'one'); "
              f"UPDATE {ks}.scripted SET v = 'uno' WHERE k = 1; "
              f"SELECT k, v FROM {ks}.scripted;")
    rc, out, err = cqlsh(node, script)
    assert rc == 0, err
    assert "uno" in out and "(1 rows)" in out
