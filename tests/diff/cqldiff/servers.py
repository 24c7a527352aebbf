"""The two servers under comparison and how a statement is sent to each.

`CairnNode` starts `cairn serve` on free loopback ports in a scratch directory. `Endpoint` is
one Python-driver session to a server, speaking protocol v4 to both (the driver would pick v5
with Cassandra 5 otherwise) and keeping every result value as the raw bytes the server sent:
comparing bytes, not decoded Python values, is what makes "same answer" exact (a NaN equals
itself, 1.0 and 1.00 decimals differ, set order is visible).

Invariants:
- The protocol's default timestamp of every request is the statement's own logical timestamp
  (`Stmt.timestamp`), never the client clock, so both servers get the same one.
- Paging is off unless the statement sets a page size; then every page is fetched and the
  rows are concatenated.
- An error is an `Outcome` with the server's code and message; a failure of the driver or
  the connection (timeout, lost connection) is an Outcome with code "driver" so that it is
  compared, not raised.
"""

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from cassandra import ConsistencyLevel
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, NoHostAvailable
from cassandra.policies import ConstantReconnectionPolicy, RoundRobinPolicy
from cassandra.protocol import ErrorMessage, ResultMessage, _ProtocolHandler, read_int
from cassandra.query import UNSET_VALUE, BatchStatement, BatchType, SimpleStatement, tuple_factory

from . import peer
from . import types as ty

REPO = Path(__file__).resolve().parents[3]
REQUEST_TIMEOUT = 60.0


class DriverFailure(Exception):
    """A server error, as code and message (what the comparison needs)."""

    def __init__(self, code, message):
        super().__init__(f"code={code:04x} {message}")
        self.code = code
        self.message = message


class RawErrorMessage(ErrorMessage):
    """ERROR frames: decoded as the driver does (so it still re-prepares on 0x2500), but
    surfacing as DriverFailure with the code and message untouched."""

    @classmethod
    def recv_body(cls, f, protocol_version, *args):
        err = ErrorMessage.recv_body.__func__(ErrorMessage, f, protocol_version, *args)
        code, message = err.code, err.message
        err.to_exception = lambda: DriverFailure(code, message)
        return err


class RawResultMessage(ResultMessage):
    """RESULT frames whose rows keep each value's bytes (None for null)."""

    def recv_results_rows(self, f, protocol_version, user_type_map, result_metadata,
                          column_encryption_policy):
        self.recv_results_metadata(f, user_type_map)
        column_metadata = self.column_metadata or result_metadata
        rowcount = read_int(f)
        self.parsed_rows = [tuple(self.recv_row(f, len(column_metadata)))
                            for _ in range(rowcount)]
        self.column_names = [c[2] for c in column_metadata]
        self.column_types = [c[3] for c in column_metadata]


class RawProtocolHandler(_ProtocolHandler):
    message_types_by_opcode = dict(_ProtocolHandler.message_types_by_opcode)
    message_types_by_opcode[RawResultMessage.opcode] = RawResultMessage
    message_types_by_opcode[RawErrorMessage.opcode] = RawErrorMessage


class Outcome:
    """What a server answered: an error, or a result (columns and raw rows; `columns` is
    None for a result without rows, e.g. a write)."""

    __slots__ = ("error", "columns", "rows", "driver_types", "pages", "prepared", "at_prepare")

    def __init__(self, error=None, columns=None, rows=(), driver_types=None, pages=0,
                 prepared=None):
        self.error = error  # (code, message) or None
        self.columns = columns  # [(name, type)] or None
        self.rows = list(rows)
        self.driver_types = driver_types
        self.pages = pages
        # For prepared statements: per statement prepared, [bind markers as [name, type],
        # partition key indexes, result columns as [name, type] or None].
        self.prepared = prepared
        # The error came from PREPARE (so `prepared` covers only what was prepared before).
        self.at_prepare = False

    def decoded_rows(self):
        """Rows as the driver would decode them (for reports)."""
        out = []
        for row in self.rows:
            cells = []
            for raw, t in zip(row, self.driver_types or [None] * len(row)):
                if raw is None:
                    cells.append(None)
                    continue
                try:
                    cells.append(t.from_binary(raw, 4))
                except Exception:  # noqa: BLE001 - a report shows the bytes instead
                    cells.append("0x" + raw.hex())
            out.append(cells)
        return out

    def describe(self):
        text = self._describe_answer()
        if self.prepared:
            text += "\n    prepared (bind markers, pk indexes, result columns): " + "; ".join(
                repr(p) for p in self.prepared)
        return text

    def _describe_answer(self):
        if self.error is not None:
            code, message = self.error
            return f"error {code if isinstance(code, str) else f'{code:#06x}'}: {message}"
        if self.columns is None:
            return "done (no rows)"
        head = ", ".join(f"{n} {t}" for n, t in self.columns)
        rows = "\n".join("    " + repr(tuple(r)) for r in self.decoded_rows())
        return f"{len(self.rows)} row(s) [{head}]" + (f"\n{rows}" if rows else "")

    def to_json(self):
        if self.error is not None:
            j = {"error": list(self.error)}
        elif self.columns is None:
            j = {"void": True}
        else:
            j = {"columns": [list(c) for c in self.columns],
                 "rows": [[None if v is None else v.hex() for v in r] for r in self.rows]}
        if self.prepared is not None:
            j["prepared"] = self.prepared
        if self.at_prepare:
            j["at_prepare"] = True
        return j

    @staticmethod
    def from_json(j):
        prepared = j.get("prepared")
        if "error" in j:
            out = Outcome(error=tuple(j["error"]), prepared=prepared)
            out.at_prepare = bool(j.get("at_prepare"))
            return out
        if j.get("void"):
            return Outcome(prepared=prepared)
        return Outcome(columns=[tuple(c) for c in j["columns"]],
                       rows=[[None if v is None else bytes.fromhex(v) for v in r]
                             for r in j["rows"]], prepared=prepared)


class _Timestamps:
    """The driver's timestamp generator: returns whatever the endpoint set last."""

    def __init__(self):
        self.value = None

    def __call__(self):
        return self.value


class Endpoint:
    """One server: a driver session on a keyspace."""

    def __init__(self, name, host, port):
        self.name = name
        self.timestamps = _Timestamps()
        profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(),
                                   request_timeout=REQUEST_TIMEOUT, row_factory=tuple_factory,
                                   consistency_level=ConsistencyLevel.ONE)
        # A protocol error (0x000A) closes the connection; reconnect at once, not after the
        # default exponential back-off, so that the next statement finds a connection.
        self.cluster = Cluster([host], port=port, protocol_version=4,
                               execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                               timestamp_generator=self.timestamps, connect_timeout=30,
                               control_connection_timeout=30, max_schema_agreement_wait=30,
                               reconnection_policy=ConstantReconnectionPolicy(0.2))
        self.session = self.cluster.connect()
        self.session.client_protocol_handler = RawProtocolHandler
        self.session.default_fetch_size = None
        self.prepared = {}

    def close(self):
        self.cluster.shutdown()

    def use(self, keyspace, fresh=True):
        self.keyspace = keyspace
        if fresh:
            self.execute_text(f"DROP KEYSPACE IF EXISTS {keyspace}")
            self.execute_text(
                f"CREATE KEYSPACE {keyspace} WITH replication = "
                "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        self.execute_text(f"USE {keyspace}")
        self.prepared.clear()

    def execute_text(self, text):
        """Runs a set-up statement (not compared); raises on error."""
        self.session.execute(SimpleStatement(text))

    def drop_table(self, table):
        """Drops a table the tester made, its materialized views first (a table with a view
        cannot be dropped): the generator's `<table>_mv`, and any other a saved case made."""
        self.execute_text(f"DROP MATERIALIZED VIEW IF EXISTS {table}_mv")
        keyspace = getattr(self, "keyspace", None)
        if keyspace:
            views = self.session.execute(SimpleStatement(
                "SELECT view_name, base_table_name FROM system_schema.views "
                "WHERE keyspace_name = %s"), [keyspace])
            for row in views:
                # The tester's session reads raw bytes.
                view_name, base = (x.decode() if isinstance(x, bytes) else x for x in row)
                if base == table:
                    self.execute_text(f"DROP MATERIALIZED VIEW IF EXISTS {view_name}")
        self.execute_text(f"DROP TABLE IF EXISTS {table}")

    def wait_ready(self, timeout=30.0):
        """After a lost connection: waits until a request goes through again."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.session.execute(SimpleStatement("SELECT release_version FROM system.local"))
                return
            except Exception:  # noqa: BLE001 - retried until the deadline
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    # -- running one statement ------------------------------------------------------------

    def _prepare(self, stmt, table, meta):
        """Prepares stmt (each prepared child of a batch), appending each PREPARE answer to
        meta; returns an Outcome when a PREPARE failed, else None."""
        for s in stmt.children or [stmt]:
            if not s.prepared:
                continue
            text = s.text(table)
            prepared = self.prepared.get(text)
            if prepared is None:
                try:
                    prepared = self.session.prepare(text)
                except Exception as e:  # noqa: BLE001 - compared like any answer
                    out = error_outcome(e)
                    out.at_prepare = True
                    return out
                self.prepared[text] = prepared
            meta.append(prepared_metadata(prepared))
        return None

    def _request(self, stmt, table):
        """The driver statement for stmt (prepared ones already are), or an Outcome when
        the driver could not bind the values."""
        if stmt.children:
            batch = BatchStatement(batch_type={0: BatchType.LOGGED, 1: BatchType.UNLOGGED,
                                               2: BatchType.COUNTER}[stmt.batch_type])
            for child in stmt.children:
                inner = self._request(child, table)
                if isinstance(inner, Outcome):
                    return inner
                batch.add(inner)
            return batch
        text = stmt.text(table)
        if not stmt.prepared:
            return SimpleStatement(text, fetch_size=stmt.fetch_size)
        values = [UNSET_VALUE if a.unset else ty.bind_value(a.type, a.value)
                  for a in stmt.bound_args()]
        try:
            bound = self.prepared[text].bind(values)
        except Exception as e:  # noqa: BLE001
            return Outcome(error=("bind", f"{type(e).__name__}: {e}"))
        bound.fetch_size = stmt.fetch_size
        return bound

    def start(self, stmt, table, reference=None):
        """Sends stmt; returns a handle for finish(). reference: the reference server's
        handle. When this server prepared the statement differently, its values are not even
        bound: they would be serialized by the wrong types (an int bound as a blob becomes
        that many zero bytes). When the reference refused it at PREPARE, the bind markers'
        types must be those of the values the generator meant."""
        if stmt.kind == "ddl":
            self.prepared.clear()
        for text in stmt.setup:
            try:
                self.execute_text(text)
            except Exception as e:  # noqa: BLE001 - the statement's outcome is the failure
                return error_outcome(e), []
        meta = []
        request = self._prepare(stmt, table, meta)
        if request is None and reference is not None and meta:
            ref_request, ref_meta = reference
            if isinstance(ref_request, Outcome):
                same = _marker_types(meta) == _arg_types(stmt)
            else:
                same = meta == ref_meta
            if not same:
                request = Outcome(error=("not sent", "its PREPARE answer differs"))
        if request is None:
            request = self._request(stmt, table)
        if not isinstance(request, Outcome):
            self.timestamps.value = stmt.timestamp
            try:
                request = self.session.execute_async(request)
            except Exception as e:  # noqa: BLE001
                request = error_outcome(e)
        return request, meta

    def finish(self, handle):
        request, meta = handle
        out = request if isinstance(request, Outcome) else self._collect(request)
        out.prepared = meta or None
        return out

    def _collect(self, handle):
        try:
            rs = handle.result()
            if rs.column_names is None:
                return Outcome()
            rows = list(rs.current_rows)
            pages = 1
            while rs.has_more_pages:
                rs.fetch_next_page()
                rows += rs.current_rows
                pages += 1
            columns = [(n, t.cql_parameterized_type()) for n, t in
                       zip(rs.column_names, rs.column_types)]
            return Outcome(columns=columns, rows=rows, driver_types=list(rs.column_types),
                           pages=pages)
        except Exception as e:  # noqa: BLE001
            return error_outcome(e)


_SERVER_ERROR = re.compile(r'code=([0-9a-fA-F]{4}) \[[^\]]*\] message="(.*)"', re.S)


def _marker_types(meta):
    return [t for bind, _, _ in meta for _, t in bind]


def _arg_types(stmt):
    args = [a for c in (stmt.children or [stmt]) for a in c.bound_args()]
    return [a.type.wire_name() for a in args]


def prepared_metadata(prepared):
    """What a PREPARE answered, in comparable form."""
    bind = [[c.name, c.type.cql_parameterized_type()] for c in prepared.column_metadata or ()]
    result = None
    if prepared.result_metadata:
        result = [[c[2], c[3].cql_parameterized_type()] for c in prepared.result_metadata]
    return [bind, list(prepared.routing_key_indexes or []), result]


def error_outcome(e):
    if isinstance(e, NoHostAvailable) and len(e.errors) == 1:
        # The driver tries the next host after a server error (0x0000), an overload or a
        # lost connection; with one host the server's own answer is the one error inside.
        inner = next(iter(e.errors.values()))
        if isinstance(inner, (DriverFailure, ErrorMessage)):
            e = inner
    if isinstance(e, DriverFailure):
        return Outcome(error=(e.code, e.message))
    if isinstance(e, ErrorMessage):
        return Outcome(error=(e.code, e.message))
    # PREPARE goes through the driver's own protocol handler, whose exceptions carry the
    # server's code and message only in their text.
    m = _SERVER_ERROR.search(str(e))
    if m:
        return Outcome(error=(int(m.group(1), 16), m.group(2)))
    return Outcome(error=("driver", f"{type(e).__name__}: {e}"))


def run_both(endpoints, stmt, table):
    """Runs stmt on every endpoint at once; returns their outcomes in order. The last
    endpoint is the reference (Cassandra): the others get its PREPARE answers to check."""
    reference = endpoints[-1].start(stmt, table)
    handles = [ep.start(stmt, table, reference) for ep in endpoints[:-1]] + [reference]
    return [ep.finish(h) for ep, h in zip(endpoints, handles)]


# ------------------------------------------------------------------------------------------
# Processes


def _die_with_parent():
    """In the child: ask Linux to SIGKILL the node when the tester dies, however it dies."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class CairnNode:
    """`cairn serve` on free loopback ports and a scratch data directory."""

    def __init__(self, binary=None):
        self.binary = Path(binary or os.environ.get("CAIRN_BIN")
                           or REPO / "target" / "release" / "cairn")
        if not self.binary.exists():
            raise RuntimeError(f"cairn binary not found at {self.binary} "
                               "(cargo build --release, or set CAIRN_BIN)")
        self.dir = Path(tempfile.mkdtemp(prefix="cqldiff-cairn-"))
        self.port, api, metrics = peer.free_ports(3)
        self.log_path = self.dir / "cairn.log"
        # What the peer's configuration turns on that is off by default in both servers
        # (peer.py's cassandra.yaml): dynamic data masking.
        config = self.dir / "cairn.yaml"
        config.write_text("dynamic_data_masking_enabled: true\n")
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [str(self.binary), "serve", "--config", str(config),
             "--data-dir", str(self.dir / "data"),
             "--native-port", str(self.port), "--api-port", str(api),
             "--metrics-port", str(metrics)],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            preexec_fn=_die_with_parent)
        log.close()
        deadline = time.monotonic() + 30
        while not peer.cql_answers(self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"cairn did not start:\n{self.log_tail()}")
            time.sleep(0.05)

    def alive(self):
        return self.proc.poll() is None

    def log_tail(self, n=30):
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    def stop(self, keep=False):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not keep:
            shutil.rmtree(self.dir, ignore_errors=True)
