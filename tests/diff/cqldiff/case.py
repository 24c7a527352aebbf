"""A case: a schema and a history of statements, replayed against servers; and its saved form,
the regression file.

A regression file (tests/diff/regressions/*.json) holds a shrunk case: the CREATE TABLE, each
statement exactly as it was sent (parts, bound values, page size, default timestamp) and
Cassandra's answer to each. `replay_saved` runs it against Cairn alone and compares every
answer with the recorded one, so the regression tests need no Cassandra.

Invariants:
- A replay uses a table name of its own, so replays never see each other's data, and drops
  it afterwards.
- `save`/`load` round-trip a statement exactly (parts, values with their literal style,
  bound/unset flags), so the replayed requests are the ones that differed.
"""

import json
import re
from pathlib import Path

from . import types as ty
from .compare import compare
from .servers import Outcome, run_both
from .stmt import TABLE, Arg, Stmt


class Replayer:
    """Runs cases against a list of endpoints (Cairn first, Cassandra second)."""

    def __init__(self, endpoints, prefix="r"):
        self.endpoints = endpoints
        self.prefix = prefix
        self.count = 0

    def run(self, create, stmts, stop_at_difference=True):
        """Replays create + stmts on a fresh table; returns [(stmt, outcomes, difference)]."""
        self.count += 1
        table = f"{self.prefix}{self.count}"
        out = []
        try:
            for s in [create] + list(stmts):
                outcomes = run_both(self.endpoints, s, table)
                diff = compare(s, outcomes[0], outcomes[-1]) if len(outcomes) > 1 else None
                out.append((s, outcomes, diff))
                if diff and stop_at_difference:
                    break
        finally:
            for ep in self.endpoints:
                try:
                    ep.drop_table(table)
                except Exception:  # noqa: BLE001 - a dead server is reported by the caller
                    pass
        return out

    def last_differs(self, create, stmts, signature=None):
        """True when replaying gives a difference at the last statement and nowhere before
        (and, given a signature, the same kind of difference: see `signature`)."""
        out = self.run(create, stmts)
        if len(out) != len(stmts) + 1 or out[-1][2] is None:
            return False
        return signature is None or difference_signature(out[-1][2]) == signature


def difference_signature(diff):
    """What kind of difference: the description without its numbers, so that shrinking does
    not drift from a wrong row to, say, a refusal the smaller values provoke."""
    return re.sub(r"\d+", "N", diff)


# ------------------------------------------------------------------------------------------
# Saved form


def stmt_to_json(s):
    parts = []
    for p in s.parts:
        if p is TABLE:
            parts.append({"table": True})
        elif isinstance(p, Arg):
            parts.append({"type": p.type.spec(), "value": ty.to_saved(p.type, p.value),
                          "style": p.style, "bound": p.bound, "unset": p.unset,
                          "in_list": p.in_list})
        else:
            parts.append(p)
    j = {"feature": s.feature, "kind": s.kind, "parts": parts}
    for key in ("fetch_size", "timestamp", "batch_type", "effect"):
        if getattr(s, key) is not None:
            j[key] = getattr(s, key)
    if s.loose:
        j["loose"] = {str(k): v for k, v in s.loose.items()}
    if s.children:
        j["children"] = [stmt_to_json(c) for c in s.children]
    if s.cols:
        j["cols"] = sorted(s.cols)
    if s.setup:
        j["setup"] = list(s.setup)
    return j


def stmt_from_json(j):
    parts = []
    for p in j["parts"]:
        if isinstance(p, str):
            parts.append(p)
        elif p.get("table"):
            parts.append(TABLE)
        else:
            t = ty.parse_type(p["type"])
            parts.append(Arg(t, ty.from_saved(t, p["value"]), p["style"], p["bound"],
                             p["unset"], p["in_list"]))
    return Stmt(j["feature"], parts, j["kind"], cols=j.get("cols", ()),
                fetch_size=j.get("fetch_size"), timestamp=j.get("timestamp"),
                loose={int(k): v for k, v in j.get("loose", {}).items()},
                children=[stmt_from_json(c) for c in j.get("children", [])],
                batch_type=j.get("batch_type"), effect=j.get("effect"),
                setup=j.get("setup", ()))


def save(path, run_result, info):
    """Writes a regression file from a replay's result: [(stmt, [cairn, cassandra], _)],
    the CREATE TABLE first."""
    statements = []
    for s, outcomes, _ in run_result:
        entry = stmt_to_json(s)
        entry["cql"] = s.describe("t")
        entry["cassandra"] = outcomes[-1].to_json()
        entry["cairn_when_found"] = outcomes[0].to_json()
        statements.append(entry)
    doc = dict(info)
    doc["statements"] = statements
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


def load(path):
    doc = json.loads(Path(path).read_text())
    stmts = [stmt_from_json(e) for e in doc["statements"]]
    expected = [Outcome.from_json(e["cassandra"]) for e in doc["statements"]]
    return doc, stmts, expected


def replay_saved(path, endpoint):
    """Replays a regression file against one endpoint (Cairn); returns a report of every
    statement whose answer differs from Cassandra's recorded one (empty when none)."""
    doc, stmts, expected = load(path)
    table = "t"
    endpoint.drop_table(table)
    problems = []
    try:
        for s, want in zip(stmts, expected):
            # Cassandra's recorded PREPARE answer guards the binding, as in a live run.
            reference = (want if want.at_prepare else "sent", want.prepared or [])
            got = endpoint.finish(endpoint.start(s, table, reference))
            if want.columns is not None and want.columns == got.columns:
                want.driver_types = got.driver_types  # to show the recorded rows decoded
            diff = compare(s, got, want, replay=True)
            if diff:
                problems.append(f"{s.describe(table)}\n  {diff}\n  Cassandra: {want.describe()}"
                                f"\n  Cairn:     {got.describe()}")
    finally:
        endpoint.drop_table(table)
    return problems
