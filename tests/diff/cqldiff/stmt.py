"""A generated statement: CQL text with typed value slots, and how it is sent.

A statement is a list of parts: text, `TABLE` (the table's name, filled in at render time so
that a shrinking replay can run the same history on a fresh table) and `Arg`s (typed values,
each sent either as a CQL literal or as a bound value). Everything else a server sees is here
too: the page size, the protocol's default timestamp, and for protocol batches the children.

Invariants:
- Rendering is a pure function of the statement and the table name: a statement sent twice
  (to Cairn and to Cassandra, or again while shrinking) is the same request.
- An Arg with `unset` is always bound (CQL has no literal for "unset").
- `setup`: statements a server runs first, not compared (the `CREATE TYPE IF NOT EXISTS` of
  the user types a CREATE TABLE or ALTER TABLE ADD names; each type's name is unique to its
  definition, so running them again is harmless).
"""

from . import types as ty

TABLE = object()


class Arg:
    __slots__ = ("type", "value", "style", "bound", "unset", "in_list")

    def __init__(self, ctype, value, style=0, bound=False, unset=False, in_list=False):
        self.type = ctype
        self.value = value
        self.style = style
        self.bound = bound or unset
        self.unset = unset
        # An IN list sent as one value: `IN ?` bound, `IN (a, b)` as literals.
        self.in_list = in_list

    def literal(self):
        if self.in_list:
            return "(" + ", ".join(ty.literal(self.type.params[0], v, self.style)
                                   for v in self.value) + ")"
        return ty.literal(self.type, self.value, self.style)

    def copy(self, value):
        return Arg(self.type, value, self.style, self.bound, self.unset, self.in_list)


class Stmt:
    """kind: "ddl" | "write" | "lwt" | "read" | "batch" (a protocol BATCH of children)."""

    def __init__(self, feature, parts, kind, cols=(), fetch_size=None, timestamp=None,
                 loose=None, children=None, batch_type=None, effect=None, setup=()):
        self.feature = feature
        self.parts = list(parts)
        self.kind = kind
        self.cols = set(cols)
        self.fetch_size = fetch_size
        self.timestamp = timestamp
        self.loose = dict(loose or {})  # result column index -> "ttl" | "writetime" | "json"
        self.children = children or []
        self.batch_type = batch_type
        self.effect = effect
        self.setup = list(setup)

    def args(self):
        return [p for p in self.parts if isinstance(p, Arg)]

    def text(self, table):
        """What is sent: bound values as `?`, the others as literals."""
        return self._render(table, lambda a: "?" if a.bound else a.literal())

    def literal_text(self, table):
        """The text with every value as a literal (unset ones as `?`): for reports."""
        return self._render(table, lambda a: "?" if a.unset else a.literal())

    def _render(self, table, arg_text):
        return "".join(table if p is TABLE else arg_text(p) if isinstance(p, Arg) else p
                       for p in self.parts)

    def bound_args(self):
        return [p for p in self.parts if isinstance(p, Arg) and p.bound]

    @property
    def prepared(self):
        return any(isinstance(p, Arg) and p.bound for p in self.parts)

    def replace_arg(self, index, value):
        """A copy whose index-th Arg holds value."""
        parts, i = [], 0
        for p in self.parts:
            if isinstance(p, Arg):
                if i == index:
                    p = p.copy(value)
                i += 1
            parts.append(p)
        return self.with_parts(parts)

    def with_parts(self, parts):
        s = Stmt(self.feature, parts, self.kind, self.cols, self.fetch_size, self.timestamp,
                 self.loose, self.children, self.batch_type, self.effect, self.setup)
        return s

    def describe(self, table):
        """One line for progress output and reports."""
        text = self.literal_text(table)
        extra = []
        if self.prepared:
            extra.append("prepared")
        if self.fetch_size:
            extra.append(f"page size {self.fetch_size}")
        if self.children:
            kinds = {0: "LOGGED", 1: "UNLOGGED", 2: "COUNTER"}
            text = f"protocol {kinds[self.batch_type]} BATCH: " + "; ".join(
                c.literal_text(table) for c in self.children)
        if self.timestamp is not None and self.kind in ("write", "batch"):
            extra.append(f"default timestamp {self.timestamp}")
        return text + (f"   [{', '.join(extra)}]" if extra else "")
