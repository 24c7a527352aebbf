"""`cql-diff`: runs N random statements against Cairn and Apache Cassandra 5.0 and compares
every answer.

A run is a sequence of episodes. An episode is one random table and a random history on it
(episode k draws everything from the seed string "S:k", so any episode can be regenerated
alone). An episode ends at its first difference: the case is shrunk, printed and saved as a
regression file, and the run goes on with the next episode until N statements were compared.
The last line of the output is `compared N statements: D differences`.

Invariants:
- Only the run's own processes are started and stopped: the Cairn node always, the Cassandra
  peer only when it was not running already (a running one is reused and left running).
- Every statement counted was sent to both servers and its two answers compared.
"""

import copy
import random
import re
import signal
import sys
import time
import tomllib
from pathlib import Path

from . import peer
from .case import Replayer, difference_signature, save
from .compare import compare
from .gen import Features, Generator
from .servers import CairnNode, Endpoint, run_both
from .shrink import Budget, shrink
from .stmt import Stmt

DIFF_DIR = Path(__file__).resolve().parents[1]
KEYSPACE = "cqldiff"


def load_features(path, include_open=False, overrides=()):
    table = tomllib.loads(Path(path).read_text())
    for item in overrides:
        name, _, weight = item.partition("=")
        for section in ("statements", "clauses", "schema", "types"):
            if name in table.get(section, {}):
                table[section][name] = float(weight)
                break
        else:
            raise SystemExit(f"cql-diff: unknown feature {name!r} in --set")
        table.get("known_open", {}).pop(name, None)
    return Features(table, include_open=include_open), table.get("run", {})


class NodeExited(Exception):
    """The Cairn node died during a run (reported as a difference; the run stops)."""


class Progress:
    def __init__(self, total, quiet):
        self.total = total
        self.quiet = quiet
        self.start = time.monotonic()
        self.last = self.start

    def rate(self, done):
        return done / max(time.monotonic() - self.start, 1e-9)

    def tick(self, done, differences, episode, force=False):
        now = time.monotonic()
        if self.quiet or (not force and now - self.last < 5):
            return
        self.last = now
        print(f"cql-diff: {done}/{self.total} statements, {differences} differences, "
              f"{self.rate(done):.0f} statements/s, episode {episode}", file=sys.stderr, flush=True)


class Run:
    def __init__(self, args):
        self.args = args
        self.features, self.settings = load_features(args.features, args.include_open, args.set)
        self.seed = args.seed if args.seed is not None else random.randrange(10 ** 9)
        lo, hi = self.settings.get("episode_statements", [50, 300])
        self.episode_len = (lo, hi)
        self.cairn = None
        self.started_peer = False
        self.endpoints = []
        self.differences = 0
        self.compared = 0

    def setup(self):
        if self.args.cairn_port:
            cairn_port = self.args.cairn_port
        else:
            self.cairn = CairnNode()
            cairn_port = self.cairn.port
        if self.args.cassandra_port:
            cassandra_port = self.args.cassandra_port
        else:
            state = peer.read_state()
            if state is None:
                state = peer.start()
                self.started_peer = True
            cassandra_port = state["native_port"]
        print(f"cql-diff: seed {self.seed}; Cairn on 127.0.0.1:{cairn_port}, Cassandra "
              f"{peer.VERSION} on 127.0.0.1:{cassandra_port}", file=sys.stderr, flush=True)
        self.endpoints = [Endpoint("cairn", "127.0.0.1", cairn_port),
                          Endpoint("cassandra", "127.0.0.1", cassandra_port)]
        for ep in self.endpoints:
            ep.use(self.args.keyspace)

    def teardown(self):
        for ep in self.endpoints:
            try:
                ep.close()
            except Exception:  # noqa: BLE001 - closing is best effort
                pass
        if self.cairn is not None:
            self.cairn.stop(keep=self.differences > 0 and self.args.keep_data)
        if self.started_peer and not self.args.keep_peer:
            peer.stop()

    def run(self):
        n = self.args.statements
        episode = self.args.first_episode
        progress = Progress(n, self.args.quiet)
        try:
            self.setup()
            while self.compared < n:
                try:
                    self.episode(episode, n - self.compared)
                except NodeExited:
                    print("cql-diff: stopping: the Cairn node exited", file=sys.stderr)
                    break
                progress.tick(self.compared, self.differences, episode)
                episode += 1
                if self.differences >= self.args.max_differences:
                    print(f"cql-diff: stopping after {self.differences} differences "
                          "(--max-differences)", file=sys.stderr)
                    break
            progress.tick(self.compared, self.differences, episode, force=True)
        finally:
            self.teardown()
        print(f"cql-diff: {progress.rate(self.compared):.0f} statements/s over "
              f"{time.monotonic() - progress.start:.0f} s", file=sys.stderr)
        print(f"compared {self.compared} statements: {self.differences} differences", flush=True)
        return 1 if self.differences else 0

    def try_statements(self, text):
        """--try: runs each statement of text on both servers and prints both answers."""
        self.setup()
        ran = []
        try:
            statements = [s.strip() for s in re.split(r";\s*\n", text + "\n")]
            for line in statements:
                line = "\n".join(x for x in line.splitlines() if not x.strip().startswith("--"))
                if not line.strip():
                    continue
                stmt = Stmt("try", [line.strip().rstrip(";")], "write")
                cairn, cassandra = run_both(self.endpoints, stmt, "t")
                diff = compare(stmt, cairn, cassandra)
                ran.append((stmt, [cairn, cassandra], diff))
                print(f"> {line.strip()}")
                print(f"  Cassandra: {cassandra.describe()}")
                print(f"  Cairn:     {cairn.describe()}" + (f"\n  DIFFERENT: {diff}" if diff else ""))
        finally:
            self.teardown()
        if self.args.save:
            diffs = [d for _, _, d in ran if d]
            save(self.args.save, ran, {
                "found_by": f"scripts/cql-diff --try {self.args.try_file}",
                "difference": diffs[0] if diffs else None,
                "open": self.args.open,
            })
            print(f"saved {self.args.save}")
        return 0

    def episode(self, k, limit):
        """Runs episode k (at most `limit` statements), counting them in self.compared."""
        rng = random.Random(f"{self.seed}:{k}")
        table = f"t{k}"
        gen = Generator(rng, self.features, table)
        initial = copy.deepcopy(gen.table)
        length = min(limit, rng.randint(*self.episode_len))
        history = []
        count = 0
        try:
            stmt = gen.create()
            while True:
                outcomes = run_both(self.endpoints, stmt, table)
                count += 1
                self.compared += 1
                history.append(stmt)
                if self.cairn is not None and not self.cairn.alive():
                    self.differences += 1
                    print(f"\n=== difference {self.differences} (seed {self.seed}, episode {k}, "
                          f"statement {count}): the Cairn node exited (code "
                          f"{self.cairn.proc.returncode})\n    {stmt.describe(table)}\n"
                          f"--- end of its log ---\n{self.cairn.log_tail()}", flush=True)
                    raise NodeExited()
                gen.observe(stmt, outcomes[1])
                if self.args.verbose:
                    print(f"[{k}:{count}] {stmt.describe(table)}\n    -> "
                          f"{outcomes[1].describe()}", file=sys.stderr)
                diff = compare(stmt, outcomes[0], outcomes[1])
                if diff:
                    for ep, out in zip(self.endpoints, outcomes):
                        if out.error is not None and out.error[0] in ("driver", 0x000A):
                            ep.wait_ready()  # a protocol error closed the connection
                    self.report(k, initial, history, outcomes, diff)
                    break
                if count >= length:
                    break
                stmt = gen.next()
        finally:
            for ep in self.endpoints:
                try:
                    ep.drop_table(table)
                except Exception:  # noqa: BLE001 - a dead node shows up in the next statement
                    pass

    def report(self, k, table, history, outcomes, diff):
        self.differences += 1
        last = history[-1]
        print(f"\n=== difference {self.differences} (seed {self.seed}, episode {k}, "
              f"statement {len(history)}, feature {last.feature}): {diff}")
        print(f"    {last.describe(f't{k}')}")
        print(f"  Cassandra: {outcomes[1].describe()}")
        print(f"  Cairn:     {outcomes[0].describe()}", flush=True)
        if self.args.no_shrink:
            return
        if len(history) < 2:
            # The table's own CREATE differs: nothing to shrink or replay after it.
            return
        replayer = Replayer(self.endpoints, prefix=f"s{k}_")
        budget = Budget(self.args.shrink_seconds, self.args.shrink_replays)
        small_table, stmts = shrink(replayer, table, history[1:], budget,
                                    difference_signature(diff))
        final = replayer.run(small_table.create_stmt(), stmts)
        if final[-1][2] is None or len(final) != len(stmts) + 1:
            print("  (the shrunk case no longer differs on a final replay; saving the "
                  "full history)")
            small_table, stmts = table, history[1:]
            final = replayer.run(small_table.create_stmt(), stmts)
        print(f"  shrunk to {len(stmts)} statement(s) after {replayer.count} replays:")
        for s, outs, d in final:
            print(f"    {s.describe('t')}")
        print(f"      Cassandra: {final[-1][1][1].describe()}")
        print(f"      Cairn:     {final[-1][1][0].describe()}")
        path = Path(self.args.save_dir) / f"{last.feature}-{self.seed}-{k}.json"
        save(path, final, {
            "found_by": f"scripts/cql-diff --seed {self.seed} --first-episode {k}",
            "difference": final[-1][2],
            "open": None,
        })
        print(f"  saved {path}", flush=True)


def main(argv):
    import argparse
    p = argparse.ArgumentParser(prog="cql-diff", description=__doc__.split("\n\n")[0])
    p.add_argument("--statements", type=int, help="how many statements to compare")
    p.add_argument("--try", dest="try_file", metavar="FILE",
                   help="instead: run the statements in FILE ('-': stdin; `;` at a line's end "
                        "separates them) on both servers and print both answers")
    p.add_argument("--seed", type=int, help="random seed (default: a random one, printed)")
    p.add_argument("--features", default=str(DIFF_DIR / "features.toml"),
                   help="feature weights (default tests/diff/features.toml)")
    p.add_argument("--include-open", action="store_true",
                   help="also generate the [known_open] shapes")
    p.add_argument("--set", action="append", default=[], metavar="NAME=WEIGHT",
                   help="override one feature's weight (and take it off [known_open])")
    p.add_argument("--save", metavar="FILE",
                   help="with --try: save the statements and Cassandra's answers as a regression file")
    p.add_argument("--open", metavar="FINDING",
                   help="with --save: the FINDINGS.md section the case belongs to while it differs")
    p.add_argument("--first-episode", type=int, default=0,
                   help="start at this episode (to rerun one found by a longer run)")
    p.add_argument("--max-differences", type=int, default=25,
                   help="stop after this many differences (default 25)")
    p.add_argument("--no-shrink", action="store_true", help="report differences unshrunk")
    p.add_argument("--shrink-seconds", type=float, default=300,
                   help="time budget to shrink one difference (default 300)")
    p.add_argument("--shrink-replays", type=int, default=400,
                   help="replay budget to shrink one difference (default 400)")
    p.add_argument("--save-dir", default=str(DIFF_DIR / "found"),
                   help="where shrunk cases are saved (default tests/diff/found/)")
    p.add_argument("--keyspace", default=KEYSPACE,
                   help=f"the keyspace to (re)create on both servers (default {KEYSPACE}); give "
                        "concurrent runs against one Cassandra peer different keyspaces")
    p.add_argument("--cairn-port", type=int, help="use a running Cairn node")
    p.add_argument("--cassandra-port", type=int, help="use a running Cassandra")
    p.add_argument("--keep-peer", action="store_true",
                   help="leave the Cassandra peer running when this run started it")
    p.add_argument("--keep-data", action="store_true",
                   help="keep the Cairn node's data directory when differences were found")
    p.add_argument("--verbose", action="store_true", help="print every statement")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    args = p.parse_args(argv)
    # SIGTERM unwinds like Ctrl-C, so that the Cairn node (and a peer this run started) stop.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if (args.statements is None) == (args.try_file is None):
        p.error("give --statements N or --try FILE")
    try:
        if args.try_file:
            text = sys.stdin.read() if args.try_file == "-" else Path(args.try_file).read_text()
            return Run(args).try_statements(text)
        return Run(args).run()
    except (peer.PeerError, RuntimeError) as e:
        print(f"cql-diff: {e}", file=sys.stderr)
        return 2
