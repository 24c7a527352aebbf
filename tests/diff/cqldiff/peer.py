"""Apache Cassandra 5.0 as a local reference peer for the differential tester.

What this module is for: installing Cassandra's jars from Maven Central into a git-ignored cache
inside the repository (`.cache/cassandra/`), writing a minimal configuration, and starting and
stopping one Cassandra daemon on free loopback ports. `scripts/cassandra-peer` is its command
line; `cqldiff.runner` calls it to get a peer.

Invariants:
- Standard library only: the entry script runs on a clean clone with Java 17, Maven and
  Python 3, before any virtualenv exists.
- One peer per checkout. Its state (pid, ports) is `.cache/cassandra/run/state.json`, written
  only once CQL answers; `start` on a running peer prints where it listens and changes nothing.
- Never the ports later cluster tests use (7000, 9042, 7199): every port is chosen free.
- `stop` only signals the pid the state file names, and only when that process's command line
  is the daemon started from this checkout's configuration (a recycled pid is left alone).
- Every start wipes the data directories: the peer is a test fixture, not a database.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

VERSION = "5.0.9"
HOST = "127.0.0.1"
REPO = Path(__file__).resolve().parents[3]
CACHE = REPO / ".cache" / "cassandra"
LIB = CACHE / VERSION / "lib"
INSTALLED = CACHE / VERSION / ".installed"
RUN = CACHE / "run"
STATE = RUN / "state.json"
MAIN_CLASS = "org.apache.cassandra.service.CassandraDaemon"
START_TIMEOUT = 240.0
STOP_TIMEOUT = 60.0
RESERVED_PORTS = {7000, 7001, 7199, 9042, 9160}

# Cassandra's conf/jvm17-server.options JPMS block: without it the daemon fails on Java 17.
JPMS_FLAGS = [
    "-Djdk.attach.allowAttachSelf=true",
    *(f"--add-exports={m}=ALL-UNNAMED" for m in (
        "java.base/jdk.internal.misc",
        "java.management.rmi/com.sun.jmx.remote.internal.rmi",
        "java.rmi/sun.rmi.registry",
        "java.rmi/sun.rmi.server",
        "java.sql/java.sql",
        "java.base/java.lang.ref",
        "jdk.unsupported/sun.misc",
        "jdk.compiler/com.sun.tools.javac.file",
        "jdk.attach/sun.tools.attach",
    )),
    *(f"--add-opens={m}=ALL-UNNAMED" for m in (
        "java.base/java.lang.module",
        "java.base/jdk.internal.loader",
        "java.base/jdk.internal.ref",
        "java.base/jdk.internal.reflect",
        "java.base/jdk.internal.math",
        "java.base/jdk.internal.module",
        "java.base/jdk.internal.util.jar",
        "jdk.management/com.sun.management.internal",
        "java.base/sun.nio.ch",
        "java.base/java.io",
        "java.base/java.lang.reflect",
        "jdk.compiler/com.sun.tools.javac",
        "java.base/java.lang",
        "java.base/java.util",
    )),
    "-Dio.netty.tryReflectionSetAccessible=true",
]

# A one-node peer does not need to wait for a ring to settle: 10-18 s to CQL instead of ~40 s.
FAST_START_FLAGS = [
    "-Dcassandra.ring_delay_ms=1000",
    "-Dcassandra.schema_delay_ms=1000",
    "-Dcassandra.skip_wait_for_gossip_to_settle=0",
]

POM = f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>cairn.test</groupId>
  <artifactId>cassandra-peer</artifactId>
  <version>1</version>
  <dependencies>
    <dependency>
      <groupId>org.apache.cassandra</groupId>
      <artifactId>cassandra-all</artifactId>
      <version>{VERSION}</version>
    </dependency>
  </dependencies>
</project>
"""

LOGBACK = """<configuration scan="false">
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>${cassandra.logdir}/system.log</file>
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="FILE"/></root>
</configuration>
"""


class PeerError(Exception):
    """Installing, starting or stopping the peer failed; the message says why."""


def log(msg):
    print(f"cassandra-peer: {msg}", file=sys.stderr, flush=True)


def install(quiet=False):
    """Fetches cassandra-all and its runtime dependencies into LIB once."""
    if INSTALLED.exists():
        return
    for tool in ("java", "mvn"):
        if shutil.which(tool) is None:
            raise PeerError(f"{tool} is required to install Cassandra {VERSION} (Java 17 and Maven)")
    if not quiet:
        log(f"installing Cassandra {VERSION} from Maven Central into {LIB} ...")
    work = CACHE / VERSION
    if LIB.exists():
        shutil.rmtree(LIB)
    work.mkdir(parents=True, exist_ok=True)
    (work / "pom.xml").write_text(POM)
    cmd = ["mvn", "-B", "-q", "-f", str(work / "pom.xml"), "dependency:copy-dependencies",
           "-DincludeScope=runtime", f"-DoutputDirectory={LIB}"]
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if res.returncode != 0:
        raise PeerError(f"maven failed ({res.returncode}):\n{res.stdout[-4000:]}")
    if not any(LIB.glob("cassandra-all-*.jar")) or not any(LIB.glob("jamm-*.jar")):
        raise PeerError(f"maven finished but {LIB} lacks cassandra-all or jamm")
    INSTALLED.write_text(VERSION + "\n")


def free_ports(n):
    """n distinct free loopback ports, never one of the well-known Cassandra ports."""
    socks = []
    try:
        while len(socks) < n:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((HOST, 0))
            if s.getsockname()[1] in RESERVED_PORTS:
                s.close()
                continue
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def cassandra_yaml(native_port, storage_port):
    d = RUN / "data"
    return f"""# Written by tests/diff/cqldiff/peer.py: a one-node reference peer on loopback.
cluster_name: cairn-diff-peer
num_tokens: 1
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
data_file_directories: [{d / 'data'}]
commitlog_directory: {d / 'commitlog'}
saved_caches_directory: {d / 'saved_caches'}
hints_directory: {d / 'hints'}
cdc_raw_directory: {d / 'cdc_raw'}
commitlog_sync: periodic
commitlog_sync_period: 10000ms
commitlog_segment_size: 32MiB
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "{HOST}:{storage_port}"
listen_address: {HOST}
rpc_address: {HOST}
storage_port: {storage_port}
native_transport_port: {native_port}
start_native_transport: true
endpoint_snitch: SimpleSnitch
authenticator: AllowAllAuthenticator
authorizer: AllowAllAuthorizer
role_manager: CassandraRoleManager
row_cache_size: 0MiB
materialized_views_enabled: true
# Cassandra 5.0's dynamic data masking (MASKED WITH columns), off by default in Cassandra.
dynamic_data_masking_enabled: true
# A test peer: no snapshots on DROP/TRUNCATE (they would make both slow), one compactor.
auto_snapshot: false
snapshot_before_compaction: false
concurrent_compactors: 1
"""


def cql_answers(port, timeout=1.0):
    """True when the native port answers a protocol v4 OPTIONS with SUPPORTED."""
    try:
        with socket.create_connection((HOST, port), timeout=timeout) as s:
            s.sendall(bytes([0x04, 0, 0, 0, 0x05, 0, 0, 0, 0]))
            head = b""
            while len(head) < 9:
                chunk = s.recv(9 - len(head))
                if not chunk:
                    return False
                head += chunk
            return head[4] == 0x06
    except OSError:
        return False


def _pid_is_ours(pid):
    """The process is alive and is the daemon started with this checkout's configuration."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    conf = str(RUN / "conf" / "cassandra.yaml").encode()
    return MAIN_CLASS.encode() in cmdline and any(conf in part for part in cmdline)


def read_state():
    """The running peer's state ({pid, host, native_port, ...}) or None."""
    try:
        state = json.loads(STATE.read_text())
    except (OSError, ValueError):
        return None
    if not _pid_is_ours(state.get("pid", -1)) or not cql_answers(state["native_port"]):
        return None
    return state


def describe(state):
    return (f"Cassandra {VERSION} listening on {state['host']}:{state['native_port']} "
            f"(storage {state['storage_port']}, jmx {state['jmx_port']}, pid {state['pid']}, "
            f"log {RUN / 'logs' / 'system.log'})")


def java_command(native_port, storage_port, jmx_port, heap):
    jars = sorted(LIB.glob("*.jar"))
    jamm = next((j for j in jars if j.name.startswith("jamm-")), None)
    if jamm is None:
        raise PeerError(f"no jamm jar in {LIB}; remove {INSTALLED} to reinstall")
    conf = RUN / "conf"
    classpath = ":".join([str(conf)] + [str(j) for j in jars])
    return [
        "java", f"-Xms{heap}", f"-Xmx{heap}", "-XX:+UseG1GC",
        *JPMS_FLAGS,
        f"-javaagent:{jamm}",
        f"-Dcassandra.config=file://{conf / 'cassandra.yaml'}",
        f"-Dcassandra.storagedir={RUN / 'data'}",
        f"-Dcassandra.logdir={RUN / 'logs'}",
        f"-Dlogback.configurationFile={conf / 'logback.xml'}",
        "-Dcassandra-foreground=yes",
        f"-Dcassandra.jmx.local.port={jmx_port}",
        *FAST_START_FLAGS,
        "-cp", classpath, MAIN_CLASS,
    ]


def start(heap="1G", quiet=False):
    """Starts the peer unless it runs already; returns its state."""
    state = read_state()
    if state is not None:
        return state
    install(quiet=quiet)
    if shutil.which("java") is None:
        raise PeerError("java (17) is required")
    for sub in ("data", "logs", "conf"):
        shutil.rmtree(RUN / sub, ignore_errors=True)
        (RUN / sub).mkdir(parents=True)
    STATE.unlink(missing_ok=True)
    native_port, storage_port, jmx_port = free_ports(3)
    (RUN / "conf" / "cassandra.yaml").write_text(cassandra_yaml(native_port, storage_port))
    (RUN / "conf" / "logback.xml").write_text(LOGBACK)
    out = open(RUN / "logs" / "stdout.log", "ab")
    if not quiet:
        log(f"starting Cassandra {VERSION} on {HOST}:{native_port} ...")
    proc = subprocess.Popen(
        java_command(native_port, storage_port, jmx_port, heap),
        stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        cwd=RUN, start_new_session=True)
    out.close()
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise PeerError(f"Cassandra exited with {proc.returncode} during start; "
                            f"see {RUN / 'logs'}:\n{_log_tail()}")
        if cql_answers(native_port):
            state = {"pid": proc.pid, "host": HOST, "native_port": native_port,
                     "storage_port": storage_port, "jmx_port": jmx_port, "version": VERSION}
            tmp = STATE.with_suffix(".tmp")
            tmp.write_text(json.dumps(state) + "\n")
            tmp.replace(STATE)
            return state
        time.sleep(0.25)
    _signal_and_wait(proc.pid)
    raise PeerError(f"Cassandra did not answer CQL within {START_TIMEOUT:.0f}s:\n{_log_tail()}")


def _log_tail(n=30):
    lines = []
    for name in ("stdout.log", "system.log"):
        try:
            lines += (RUN / "logs" / name).read_text(errors="replace").splitlines()[-n:]
        except OSError:
            pass
    return "\n".join(lines[-n:])


def _signal_and_wait(pid):
    """SIGTERM, then SIGKILL after STOP_TIMEOUT; returns once the pid is gone."""
    for sig, wait in ((signal.SIGTERM, STOP_TIMEOUT), (signal.SIGKILL, 10.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
                if done == pid:
                    return
            except ChildProcessError:
                if not Path(f"/proc/{pid}").exists():
                    return
            time.sleep(0.1)


def stop():
    """Stops the peer this checkout started; returns False when none was running."""
    try:
        state = json.loads(STATE.read_text())
    except (OSError, ValueError):
        return False
    pid = state.get("pid", -1)
    running = _pid_is_ours(pid)
    if running:
        _signal_and_wait(pid)
    STATE.unlink(missing_ok=True)
    return running


def main(argv):
    import argparse
    p = argparse.ArgumentParser(
        prog="cassandra-peer",
        description=f"Apache Cassandra {VERSION} as a local reference peer on free loopback ports.")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("start", help="install if needed, start, wait until CQL answers")
    s.add_argument("--heap", default="1G", help="JVM heap (-Xms/-Xmx), default 1G")
    sub.add_parser("stop", help="stop the peer")
    sub.add_parser("status", help="print where the peer listens (exit 3 when not running)")
    sub.add_parser("install", help="only fetch the jars")
    args = p.parse_args(argv)
    try:
        if args.cmd == "install":
            install()
        elif args.cmd == "start":
            print(describe(start(heap=args.heap)))
        elif args.cmd == "stop":
            log("stopped" if stop() else "not running")
        elif args.cmd == "status":
            state = read_state()
            if state is None:
                print("not running")
                return 3
            print(describe(state))
    except PeerError as e:
        log(str(e))
        return 1
    return 0
