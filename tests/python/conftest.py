"""Fixtures for the Python driver tests: a Cairn node on free loopback ports, driver sessions,
and a fresh keyspace per test module.

The node binary is `target/release/cairn` (built by ../../test.sh); set CAIRN_BIN to use another.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from cassandra.cluster import Cluster, ExecutionProfile, EXEC_PROFILE_DEFAULT
from cassandra.policies import RoundRobinPolicy

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT = 10.0


def cairn_bin():
    return Path(os.environ.get("CAIRN_BIN", REPO / "target" / "release" / "cairn"))


def free_ports(n):
    """n distinct free TCP ports on 127.0.0.1 (held open together so they differ)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def port_open(host, port):
    try:
        with socket.create_connection((host, port), timeout=0.2):
            return True
    except OSError:
        return False


class Node:
    """One `cairn serve` process on its own data dir and ports; can be stopped, killed and
    restarted on the same data dir and ports."""

    def __init__(self, data_dir, extra_args=()):
        self.extra_args = list(extra_args)
        self.host = "127.0.0.1"
        self.data_dir = Path(data_dir)
        self.port, self.api_port, self.metrics_port = free_ports(3)
        self.proc = None
        self.log_path = self.data_dir.parent / (self.data_dir.name + ".log")
        self._log = None
        self.starts = 0
        # Extra environment variables of this node's process (on top of the test's).
        self.env = {}

    def start(self, timeout=START_TIMEOUT, wait=True):
        """Starts the process and (with wait) waits for its CQL port; without wait, call
        wait_started."""
        assert self.proc is None, "node already running"
        binary = cairn_bin()
        if not binary.exists():
            raise RuntimeError(f"cairn binary not found at {binary} (build it or set CAIRN_BIN)")
        self._log = open(self.log_path, "ab")
        self.starts += 1
        self._log.write(f"---- start #{self.starts} ----\n".encode())
        self._log.flush()
        self.proc = subprocess.Popen(
            [
                str(binary), "serve",
                "--data-dir", str(self.data_dir),
                "--native-port", str(self.port),
                "--api-port", str(self.api_port),
                "--metrics-port", str(self.metrics_port),
                *self.extra_args,
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **self.env},
        )
        return self.wait_started(timeout) if wait else self

    def wait_started(self, timeout=START_TIMEOUT):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"cairn exited with {self.proc.returncode} during start:\n{self.log_tail()}")
            if port_open(self.host, self.port):
                return self
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(
            f"cairn did not accept connections on {self.port} within {timeout}s:\n{self.log_tail()}")

    def log_tail(self, n=40):
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    def _wait(self, timeout):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, timeout=10.0):
        """Clean stop (Ctrl-C, which `cairn serve` handles). Returns the exit code."""
        if self.proc is None:
            return None
        self.proc.send_signal(signal.SIGINT)
        rc = self._wait(timeout)
        if rc is None:
            self.proc.kill()
            self.proc.wait()
            self._close()
            raise RuntimeError(f"cairn did not stop within {timeout}s of SIGINT:\n{self.log_tail()}")
        self._close()
        return rc

    def kill(self):
        """SIGKILL: no chance to flush anything."""
        if self.proc is None:
            return None
        self.proc.send_signal(signal.SIGKILL)
        rc = self.proc.wait()
        self._close()
        return rc

    def restart(self, kill=False):
        if kill:
            self.kill()
        else:
            self.stop()
        return self.start()

    def _close(self):
        self.proc = None
        if self._log:
            self._log.close()
            self._log = None


def serve_refused(tmp_path, yaml_text):
    """Runs `cairn serve` with `yaml_text` as its configuration, expecting it to refuse to
    start before opening its data; returns what it wrote on stderr."""
    cfg = tmp_path / "cairn.yaml"
    cfg.write_text(yaml_text)
    native, api, metrics = free_ports(3)
    p = subprocess.run(
        [str(cairn_bin()), "serve", "--config", str(cfg), "--data-dir", str(tmp_path / "data"),
         "--native-port", str(native), "--api-port", str(api), "--metrics-port", str(metrics)],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert p.returncode != 0, p.stdout + p.stderr
    assert not (tmp_path / "data").exists(), "the node opened its data before refusing"
    return p.stderr


def make_cluster(node, **kw):
    profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(), request_timeout=20)
    return Cluster(
        [node.host],
        port=node.port,
        protocol_version=4,
        execution_profiles={EXEC_PROFILE_DEFAULT: profile},
        connect_timeout=10,
        control_connection_timeout=10,
        **kw,
    )


@pytest.fixture(scope="session")
def tmp_root():
    d = tempfile.mkdtemp(prefix="cairn-pytest-")
    yield Path(d)
    if os.environ.get("CAIRN_KEEP_DATA"):
        print(f"data kept in {d}")
    else:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def node_factory(tmp_root):
    """Starts extra nodes (own data dir, own ports); all are killed at the end of the session."""
    nodes = []

    def make(name, extra_args=()):
        n = Node(tmp_root / name, extra_args)
        nodes.append(n)
        return n.start()

    yield make
    for n in nodes:
        if n.proc is not None:
            n.kill()


@pytest.fixture(scope="session")
def node(node_factory):
    """The shared node: host/port in node.host / node.port."""
    return node_factory("shared")


@pytest.fixture(scope="session")
def cluster(node):
    c = make_cluster(node)
    yield c
    c.shutdown()


@pytest.fixture(scope="session")
def session(cluster):
    return cluster.connect()


def _module_keyspace_name(request):
    name = re.sub(r"[^a-z0-9_]", "_", request.module.__name__.split(".")[-1].lower())
    return ("ks_" + name)[:48]


@pytest.fixture(scope="module")
def ks(request, session):
    """A fresh keyspace for the test module (dropped at the end)."""
    name = _module_keyspace_name(request)
    session.execute(f"DROP KEYSPACE IF EXISTS {name}")
    session.execute(
        f"CREATE KEYSPACE {name} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}")
    yield name
    try:
        session.execute(f"DROP KEYSPACE IF EXISTS {name}")
    except Exception:
        pass


@pytest.fixture(scope="module")
def kss(cluster, ks):
    """A session whose current keyspace is the module's keyspace."""
    s = cluster.connect(ks)
    yield s
    s.shutdown()


_counter = [0]


@pytest.fixture
def tname(request):
    """A table name unique within the session, derived from the test's name."""
    _counter[0] += 1
    base = re.sub(r"[^a-z0-9_]", "_", request.node.name.lower())
    return f"t{_counter[0]}_{base}"[:40]
