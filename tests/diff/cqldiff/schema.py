"""The generator's model of one table: its columns by kind, and random schemas.

Invariants:
- The model is what Cassandra accepted: DDL changes it only after Cassandra applied the
  statement (`Generator.observe`), so a refused ALTER leaves it as it was.
- Column names are unique for the table's life: a dropped column's name may come back only
  through ALTER TABLE ADD with the type it had (Cassandra refuses another type; that case
  is generated on purpose and expected to fail on both).
"""

from .stmt import TABLE, Stmt
from .types import CqlType, random_type


class Column:
    __slots__ = ("name", "type", "kind", "order")

    def __init__(self, name, ctype, kind, order="ASC"):
        self.name = name
        self.type = ctype
        self.kind = kind  # "pk" | "ck" | "static" | "regular"
        self.order = order

    def __repr__(self):
        return f"{self.name} {self.type.cql()} ({self.kind})"

    def to_json(self):
        return [self.name, self.type.spec(), self.kind, self.order]


class Table:
    def __init__(self, name, columns, default_ttl=0, counter=False, order_clause=True):
        self.name = name
        self.columns = list(columns)
        self.default_ttl = default_ttl
        self.counter = counter
        self.order_clause = order_clause
        self.dropped = {}  # name -> (CqlType, kind)

    @property
    def pk(self):
        return [c for c in self.columns if c.kind == "pk"]

    @property
    def ck(self):
        return [c for c in self.columns if c.kind == "ck"]

    @property
    def key(self):
        return self.pk + self.ck

    @property
    def statics(self):
        return [c for c in self.columns if c.kind == "static"]

    @property
    def regulars(self):
        return [c for c in self.columns if c.kind == "regular"]

    @property
    def values(self):
        """Non-key columns."""
        return [c for c in self.columns if c.kind in ("static", "regular")]

    def column(self, name):
        return next((c for c in self.columns if c.name == name), None)

    def udts(self):
        """The user types the columns use, each once, a nested one before its user."""
        out = []
        for c in self.columns:
            out += [u for u in c.type.udts() if u.name not in {o.name for o in out}]
        return out

    def create_stmt(self):
        """The CREATE TABLE statement (its user types created first)."""
        head, tail = self.create_cql("\0").split("\0")
        return Stmt("create_table", [head, TABLE, tail], "ddl",
                    setup=[u.create_type_cql() for u in self.udts()])

    def create_cql(self, name=None):
        name = name or self.name
        defs = []
        for c in self.columns:
            defs.append(f"{c.name} {c.type.cql()}" + (" static" if c.kind == "static" else ""))
        pk = ", ".join(c.name for c in self.pk)
        if len(self.pk) > 1:
            pk = f"({pk})"
        key = ", ".join([pk] + [c.name for c in self.ck])
        text = f"CREATE TABLE {name} ({', '.join(defs)}, PRIMARY KEY ({key}))"
        opts = []
        if self.ck and (self.order_clause or any(c.order == "DESC" for c in self.ck)):
            order = ", ".join(f"{c.name} {c.order}" for c in self.ck)
            opts.append(f"CLUSTERING ORDER BY ({order})")
        if self.default_ttl:
            opts.append(f"default_time_to_live = {self.default_ttl}")
        if opts:
            text += " WITH " + " AND ".join(opts)
        return text


def random_table(rng, name, f, type_weights):
    """A random table. f(name) reads a [schema] or feature weight."""
    counter = rng.random() < f("counter_table")
    n_pk = rng.choices([1, 2, 3], weights=[6, 3, 1])[0] if f("composite_partition_key") else 1
    n_ck = rng.choices([0, 1, 2, 3], weights=[2, 3, 3, 2])[0]
    cols = []
    for i in range(n_pk):
        cols.append(Column(f"pk{i}", random_type(rng, type_weights, need_comparable=True), "pk"))
    for i in range(n_ck):
        ctype = random_type(rng, type_weights, need_comparable=True)
        order = "DESC" if rng.random() < f("desc_clustering") else "ASC"
        if order == "DESC" and (ctype.kind in ("set", "map") or ctype.nested_unordered()) and not (
                rng.random() < f("desc_collection_clustering")):
            order = "ASC"  # a deliberate difference, see features.toml
        cols.append(Column(f"ck{i}", ctype, "ck", order))
    if counter:
        for i in range(rng.randint(1, 3)):
            cols.append(Column(f"n{i}", CqlType.native("counter"), "regular"))
        return Table(name, cols, counter=True, order_clause=rng.random() < 0.5)
    if n_ck and rng.random() < f("static_columns"):
        for i in range(rng.randint(1, 2)):
            cols.append(Column(f"s{i}", random_type(rng, type_weights), "static"))
    for i in range(rng.choices([0, 1, 2, 3, 5], weights=[1, 4, 4, 3, 2])[0]):
        cols.append(Column(f"v{i}", random_type(rng, type_weights), "regular"))
    ttl = 0
    if rng.random() < f("default_ttl"):
        ttl = rng.choice([86_400 * 30, 10_000_000, 123_456])
    return Table(name, cols, default_ttl=ttl, order_clause=rng.random() < 0.5)
