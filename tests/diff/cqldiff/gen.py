"""The random statement generator: one table's history of writes, deletes, conditional
writes, batches, reads and schema changes.

The generator is data-driven: every statement kind and every optional clause has a weight or
probability in the feature file (`tests/diff/features.toml`), read through `Features`; a
feature listed there under `[known_open]` is off, so that the shapes Cairn still answers
differently can be switched off one by one (each entry names its FINDINGS.md section).

Invariants:
- All randomness comes from the generator's own `random.Random`: a seed reproduces a run.
- Nothing the generator sends depends on a server's clock: every non-conditional write
  carries a timestamp from `Clock` (in the text as `USING TIMESTAMP` or as the protocol's
  default timestamp), no statement calls now()/uuid(), and TTLs are long enough never to
  expire during a run. Conditional writes get the server's timestamp on both; their
  writetime() is compared loosely (see compare.py).
- Timestamp ties are produced only where Cassandra's tie-break does not depend on the
  moment a write arrived (no TTL involved), see `Clock.next`.
- The generator mostly writes valid CQL but also, on purpose, statements that Cassandra
  refuses (a missing key column, a filter without ALLOW FILTERING, a bad ORDER BY...): both
  servers must refuse them alike.
"""

import json

from . import types as ty
from .schema import Column, random_table
from .stmt import TABLE, Arg, Stmt
from .types import CqlType

INT = CqlType.native("int")
BIGINT = CqlType.native("bigint")
TEXT = CqlType.native("text")
EMPTIABLE = {"text", "ascii", "blob"}  # types whose generated values include the empty value
NUMERIC = {"tinyint", "smallint", "int", "bigint", "varint", "float", "double", "decimal"}
# Timestamps above any real clock (2033): a conditional write (server clock) never shadows
# a generated write that came before it.
CLOCK_START = 2_000_000_000_000_000
STEP = 1000


class Features:
    """Weights and probabilities by name; a known-open or unknown name is an error to read
    only if unknown (known-open ones read as 0)."""

    def __init__(self, table, include_open=False):
        self.values = {}
        for section in ("statements", "clauses", "schema", "types"):
            for k, v in table.get(section, {}).items():
                self.values[k] = float(v)
        self.types = {k: float(v) for k, v in table.get("types", {}).items()}
        self.known_open = dict(table.get("known_open", {}))
        self.statements = list(table.get("statements", {}))
        if not include_open:
            for name in self.known_open:
                if name not in self.values:
                    raise KeyError(f"[known_open] names an unknown feature {name!r}")
                self.values[name] = 0.0
                if name in self.types:
                    self.types[name] = 0.0

    def __call__(self, name):
        return self.values[name]


class Clock:
    """Logical write timestamps (microseconds), shared by both servers.

    Fresh timestamps step by multiples of STEP; a write "from the past" takes an unused value
    between earlier ones; a tie reuses the last timestamp and is asked for only when neither
    write carries a TTL (Cassandra breaks ties between expiring cells by their expiry second,
    which depends on when each server received the write)."""

    def __init__(self, rng, f):
        self.rng = rng
        self.f = f
        self.now = CLOCK_START
        self.last = None
        self.last_had_ttl = True
        self.issued = set()

    def next(self, ttl_free):
        r = self.rng.random()
        if (ttl_free and not self.last_had_ttl and self.last is not None
                and r < self.f("timestamp_tie")):
            ts = self.last
        elif r < self.f("timestamp_tie") + self.f("timestamp_past") and self.now > CLOCK_START:
            while True:
                ts = self.now - self.rng.randint(1, 20) * STEP + self.rng.randint(1, STEP - 1)
                if ts not in self.issued:
                    break
        else:
            self.now += self.rng.randint(1, 5) * STEP
            ts = self.now
        self.issued.add(ts)
        self.last = ts
        self.last_had_ttl = not ttl_free
        return ts


class Generator:
    def __init__(self, rng, features, table_name):
        self.rng = rng
        self.f = features
        self.clock = Clock(rng, features)
        self.table = random_table(rng, table_name, features, features.types)
        # A counter table where a DELETE ran: Cassandra's answer to a later increment of a
        # deleted counter is undefined (its counter cache may bring the old value back), so
        # no statement increments counters after one (FINDINGS.md, F4).
        self._counters_deleted = False
        self.partitions = []
        self.clusterings = []
        self.recent = {}
        self.next_col = len(self.table.columns)
        self._bind = False
        self._bind_mixed = False
        self._conditional_batch = False
        self._in_conditional_batch = False
        self._in_batch = False
        self._missing_key = False  # the statement being generated leaves out a key column
        self._list_read = False  # ... has a list operation that reads the list first
        self._static_list_add = False  # ... appends or prepends to a static list
        self._empty_in = False  # ... has an IN ()
        self._empty_key = False  # ... names an empty partition key value
        # A materialized view on the table, created right after it (while it is empty, so
        # that no background build races the statements that follow), when drawn.
        self._view_pending = not self.table.counter and not self.table.statics and \
            self.chance("materialized_view")
        self.view = None  # (partition key names, clustering names) once Cassandra created it
        # A secondary index on one column, created right after the table (and its view) for
        # the same reason, when drawn.
        self._index_pending = not self.table.counter and self.chance("secondary_index")
        self.index = None  # (column name, target kind) once Cassandra created it
        self.index_sai = False  # ... and it is a storage-attached index (`sai_index`)
        self.value_opts = ty.ValueOptions(rng, {
            "decimal_scale": features("decimal_scale"),
            "duplicate_map_keys": features("duplicate_map_keys")})

    # -- helpers ---------------------------------------------------------------------------

    def chance(self, name):
        return self.rng.random() < self.f(name)

    def arg(self, ctype, value, in_list=False, multi=False):
        """A value slot; multi: part of a multi-column relation's tuple."""
        if self._bind_mixed:
            bound = self.rng.random() < 0.5
        else:
            bound = self._bind
        if multi and bound and not self.chance("bind_multi_column"):
            bound = False
        if bound and ctype.nested_unordered() and not self.chance("bind_nested_collections"):
            bound = False
        if bound and ctype.unordered_in_tuple() and not self.chance("bind_unordered_in_tuple"):
            bound = False
        return Arg(ctype, value, style=self.rng.randrange(4), bound=bound, in_list=in_list)

    def rv(self, ctype, small=False):
        """A random value of ctype, in the shapes the features allow."""
        return ty.random_value(self.rng, ctype, small, self.value_opts)

    def element_arg(self, ctype, value):
        """The key or index of a collection element in SET/DELETE."""
        a = self.arg(ctype, value)
        if a.bound and not self.chance("bind_collection_element"):
            a.bound = False
        return a

    def value(self, col, small=False):
        if col.type.kind == "native" and col.type.name == "counter":
            return self.rng.randint(-5, 5)
        v = self.rv(col.type, small)
        self.recent.setdefault(col.name, []).append(v)
        if len(self.recent[col.name]) > 8:
            self.recent[col.name].pop(0)
        return v

    def seen_value(self, col):
        """A value this column held recently (so conditions and filters can match), or a new one."""
        pool = self.recent.get(col.name)
        if pool and self.rng.random() < 0.7:
            return self.rng.choice(pool)
        return self.rv(col.type, True)

    def partition(self):
        """A partition key (values of the pk columns), mostly one used before."""
        pk = self.table.pk
        if not self.partitions or (len(self.partitions) < 12 and self.rng.random() < 0.15):
            key = [self.rv(c.type, True) for c in pk]
            if not self.chance("empty_partition_key"):
                key = [_nonempty(c.type) if _empty(v) else v for c, v in zip(pk, key)]
            self.partitions.append(key)
        return self.rng.choice(self.partitions)

    def _note_empty_key(self, key):
        """Whether a key has an empty value, remembered for the statement (F41's order)."""
        empty = any(_empty(v) for v in key)
        self._empty_key = self._empty_key or empty
        return empty

    def select_key(self, key):
        """A partition key for a SELECT: an empty single-column key only with the feature
        (Cassandra refuses it, unless an impossible clustering slice answers first)."""
        if len(key) == 1 and _empty(key[0]) and not self.chance("empty_key_in_select"):
            return [_nonempty(self.table.pk[0].type)]
        return key

    def clustering(self):
        ck = self.table.ck
        if not self.clusterings or (len(self.clusterings) < 16 and self.rng.random() < 0.2):
            self.clusterings.append([self.new_ck_value(c) for c in ck])
        return self.rng.choice(self.clusterings)

    def ck_value(self, i):
        """A value for clustering column i, mostly one some row has."""
        if self.clusterings and self.rng.random() < 0.8:
            return self.rng.choice(self.clusterings)[i]
        return self.new_ck_value(self.table.ck[i])

    def new_ck_value(self, c):
        return self.rv(c.type, True)

    def eq(self, col, value, parts, cols):
        parts += [f"{col.name} = ", self.arg(col.type, value)]
        cols.add(col.name)

    def in_list(self, col, values, parts, cols):
        """`col IN (...)`, or `col IN ?` binding the whole list."""
        cols.add(col.name)
        if self._bind and self.rng.random() < 0.5:
            parts += [f"{col.name} IN ",
                      self.arg(CqlType("list", params=[col.type]), values, in_list=True)]
            return
        parts.append(f"{col.name} IN (")
        for i, v in enumerate(values):
            if i:
                parts.append(", ")
            a = self.arg(col.type, v)
            if col.kind == "pk" and a.bound and not self.chance("bind_partition_in_values"):
                a.bound = False
            parts.append(a)
        parts.append(")")

    def join(self, clauses, sep=" AND "):
        """Joins lists of parts."""
        out = []
        for i, c in enumerate(clauses):
            if i:
                out.append(sep)
            out += c
        return out

    def key_where(self, full_key, allow_in=True, allow_empty_in=True):
        """WHERE parts for the partition key and (full_key) every clustering column, with IN
        sometimes; returns (parts, cols)."""
        t = self.table
        allow_in = allow_in and not self._conditional_batch
        cols = set()
        clauses = []
        pk = self.partition()
        self._note_empty_key(pk)
        pk_in_ok = allow_in and (not self._in_conditional_batch
                                 or self.chance("lwt_batch_partition_in"))
        for i, c in enumerate(t.pk):
            p = []
            if pk_in_ok and self.chance("where_pk_in"):
                values = [pk[i]] + [self.partition()[i] for _ in range(self.rng.randint(0, 2))]
                self._note_empty_key(values)
                if self.chance("empty_in") and allow_empty_in:
                    values = []
                    self._empty_in = True
                self.in_list(c, values, p, cols)
            else:
                self.eq(c, pk[i], p, cols)
            clauses.append(p)
        if full_key:
            ck = self.clustering()
            ck_in_ok = allow_in and (not self._static_list_add or self.chance(
                "static_list_add_rows"))
            for i, c in enumerate(t.ck):
                if self.chance("missing_key_column") and not (
                        (self._in_batch or self._empty_key) and not self.chance("validation_order")):
                    self._missing_key = True
                    continue
                p = []
                if ck_in_ok and self.chance("where_ck_in"):
                    values = [ck[i]] + [self.ck_value(i) for _ in range(self.rng.randint(0, 2))]
                    if self.chance("empty_in") and allow_empty_in:
                        values = []
                        self._empty_in = True
                    self.in_list(c, values, p, cols)
                else:
                    self.eq(c, ck[i], p, cols)
                clauses.append(p)
        return ["WHERE "] + self.join(clauses), cols

    def using(self, lwt, allow_ttl=True):
        """(parts, timestamp) of a write's USING clause. The TTL is chosen first: a write
        with a TTL never ties with another's timestamp (see Clock)."""
        clauses = []
        has_ttl = False
        if allow_ttl and self.chance("using_ttl"):
            ttl = self.rng.choice([0, 100_000, 2_000_000, 31_536_000, 5_000_000])
            if self.chance("bad_values") and (not lwt or self.chance("lwt_bad_ttl")) and (
                    not self._two_faults() or self.chance("validation_order")):
                ttl = self.rng.choice([-1, 2 ** 31 - 1, 630_720_001])
            has_ttl = ttl != 0
            clauses.append(["TTL ", self.arg(INT, ttl)])
        ts = self.write_timestamp(has_ttl)
        if self.chance("using_timestamp") if not lwt else (self.chance("lwt_using_timestamp") and (
                not self._two_faults() or self.chance("validation_order"))):
            clauses.append(["TIMESTAMP ", self.arg(BIGINT, ts)])
        if self.rng.random() < 0.5:
            clauses.reverse()
        if not clauses:
            return [], ts
        return [" USING "] + self.join(clauses), ts

    def lwt_timestamp(self, ts):
        """The protocol's default timestamp of a conditional write: drivers send one, and
        Cassandra ignores it (the write gets the Paxos ballot's time)."""
        return ts if self.chance("lwt_default_timestamp") else None

    def _two_faults(self):
        """The statement already has a fault another check may report first (F41)."""
        return self._missing_key or self._empty_in or self._empty_key

    def write_timestamp(self, has_ttl):
        return self.clock.next(ttl_free=not has_ttl and not self.table.default_ttl)

    # -- statements ------------------------------------------------------------------------

    def create(self):
        return self.table.create_stmt()

    def next(self):
        """The next statement."""
        self._missing_key = False
        self._empty_in = False
        self._empty_key = False
        self._bind = self.chance("bind")
        self._bind_mixed = self._bind and self.chance("bind_mixed")
        if self._view_pending:
            self._view_pending = False
            return self.g_create_view()
        if self._index_pending:
            self._index_pending = False
            return self.g_create_index()
        counter = self.table.counter
        kinds = []
        for name in self.f.statements:
            w = self.f(name)
            if w <= 0:
                continue
            if counter and name not in COUNTER_KINDS:
                continue
            if not counter and name == "update_counter":
                continue
            if self._counters_deleted and name in COUNTER_INCREMENTS:
                continue
            if name in LWT_KINDS and self.table.statics and self.f("lwt_on_static_tables") <= 0:
                continue
            kinds.append((name, w))
        name = ty.weighted(self.rng, kinds)
        if counter and name.startswith("delete"):
            self._counters_deleted = True
        stmt = getattr(self, "g_" + name)()
        if stmt is None:
            return self.next()
        stmt.feature = stmt.feature or name
        return stmt

    def g_insert(self, lwt=False, in_batch=False):
        t = self.table
        if not t.values and not t.key:
            return None
        pk, ck = self.partition(), self.clustering()
        self._note_empty_key(pk)
        names, values = [], []
        for c, v in zip(t.pk, pk):
            names.append(c)
            values.append(v)
        static_only = t.statics and self.rng.random() < 0.15 and (
            not lwt or self.chance("lwt_static_insert"))
        if not static_only:
            for c, v in zip(t.ck, ck):
                if not self.chance("missing_key_column"):
                    names.append(c)
                    values.append(v)
        candidates = t.statics if static_only else t.values
        chosen = [c for c in candidates if self.rng.random() < 0.6]
        if static_only and not chosen and not self.chance("insert_without_clustering"):
            chosen = [self.rng.choice(t.statics)]
        self.rng.shuffle(chosen)
        for c in chosen:
            names.append(c)
            values.append(None if self.rng.random() < 0.08 else self.value(c))
        if t.ck and all(c.kind == "pk" for c in names) and not self.chance(
                "insert_without_clustering"):
            return None
        order = list(range(len(names)))
        if self.rng.random() < 0.3:
            self.rng.shuffle(order)
        parts = ["INSERT INTO ", TABLE, " (" + ", ".join(names[i].name for i in order) + ") VALUES ("]
        for j, i in enumerate(order):
            if j:
                parts.append(", ")
            a = self.arg(names[i].type, values[i])
            if a.bound and names[i].kind in ("static", "regular") and self.chance("unset_value"):
                a = Arg(names[i].type, None, unset=True)
            parts.append(a)
        parts.append(")")
        if lwt:
            parts.append(" IF NOT EXISTS")
        ts = None
        if not in_batch:
            using, ts = self.using(lwt)
            parts += using
        return Stmt("insert_lwt" if lwt else "insert", parts, "lwt" if lwt else "write",
                    cols={c.name for c in names}, timestamp=self.lwt_timestamp(ts) if lwt else ts)

    def g_insert_lwt(self):
        return self.g_insert(lwt=True)

    def g_insert_json(self):
        t = self.table
        pk, ck = self.partition(), self.clustering()
        obj = {}
        cols = set()
        for c, v in list(zip(t.pk, pk)) + list(zip(t.ck, ck)):
            obj[c.name] = ty.json_value(c.type, v)
            cols.add(c.name)
        for c in t.values:
            if self.rng.random() < 0.6:
                obj[c.name] = ty.json_value(c.type, self.value(c))
                cols.add(c.name)
        text = json.dumps(obj, ensure_ascii=self.rng.random() < 0.5)
        parts = ["INSERT INTO ", TABLE, " JSON ", self.arg(TEXT, text)]
        r = self.rng.random()
        if r < 0.3:
            parts.append(" DEFAULT UNSET")
        elif r < 0.45:
            parts.append(" DEFAULT NULL")
        using, ts = self.using(False)
        return Stmt("insert_json", parts + using, "write", cols=cols, timestamp=ts)

    def assignment(self, c, lwt=False):
        """One `SET` assignment for column c: parts."""
        ct = c.type
        r = self.rng.random()
        if ct.multicell_udt and r < self.f("udt_field_ops"):
            field = self.rng.choice(ct.fields)
            ft = ct.field_type(field)
            return [f"{c.name}.{field} = ",
                    self.arg(ft, None if self.rng.random() < 0.1 else self.rv(ft))]
        if ct.multicell and r < self.f("collection_ops"):
            elem = ct.params[0]
            if ct.kind == "list":
                op = self.rng.choice(["append", "prepend", "remove", "index", "plus_eq"])
                if op == "index" and (lwt or self._in_conditional_batch) and not self.chance(
                        "lwt_list_index"):
                    op = "append"
                items = [self.rv(elem, True) for _ in range(self.rng.randint(0, 3))]
                if op in ("index", "remove"):
                    self._list_read = True  # Cassandra reads the list before writing
                elif c.kind == "static":
                    self._static_list_add = True
                if op == "index":
                    return [f"{c.name}[", self.element_arg(INT, self.rng.randint(-1, 3)), "] = ",
                            self.arg(elem, self.rv(elem, True))]
                if op == "append":
                    return [f"{c.name} = {c.name} + ", self.arg(ct, items)]
                if op == "prepend":
                    return [f"{c.name} = ", self.arg(ct, items), f" + {c.name}"]
                if op == "remove":
                    return [f"{c.name} = {c.name} - ", self.arg(ct, items)]
                return [f"{c.name} += ", self.arg(ct, items)]
            if ct.kind == "set":
                items = [self.rv(elem, True) for _ in range(self.rng.randint(0, 3))]
                op = self.rng.choice(["+", "-", "+=", "-="])
                if op in ("+", "-"):
                    return [f"{c.name} = {c.name} {op} ", self.arg(ct, items)]
                return [f"{c.name} {op} ", self.arg(ct, items)]
            # map
            op = self.rng.choice(["put", "remove", "element", "plus_eq", "minus_eq"])
            key_t, val_t = ct.params
            if op == "element":
                return [f"{c.name}[", self.element_arg(key_t, self.rv(key_t, True)),
                        "] = ", self.arg(val_t, None if self.rng.random() < 0.1
                                         else self.rv(val_t, True))]
            if op in ("remove", "minus_eq"):
                keys = [self.rv(key_t, True) for _ in range(self.rng.randint(0, 2))]
                st = CqlType("set", params=[key_t])
                a = self.arg(st, keys)
                a.bound = a.bound and self.chance("bind_map_key_removal")
                return [f"{c.name} = {c.name} - " if op == "remove" else f"{c.name} -= ", a]
            items = self.rv(CqlType("map", params=[key_t, val_t]), True)
            return [f"{c.name} = {c.name} + " if op == "put" else f"{c.name} += ",
                    self.arg(CqlType("map", params=[key_t, val_t]), items)]
        if c.kind == "static" and ct.kind == "list" and ct.multicell:
            self._static_list_add = True  # the new elements get one cell path per row named
        return [f"{c.name} = ", self.arg(ct, None if self.rng.random() < 0.08 else self.value(c))]

    def g_update(self, lwt=False, static=False, collection=False, in_batch=False):
        t = self.table
        if static:
            targets = list(t.statics)
        elif collection:
            targets = [c for c in t.values if c.type.multicell]
        else:
            targets = [c for c in t.values]
        if not targets:
            return None
        chosen = self.rng.sample(targets, self.rng.randint(1, min(3, len(targets))))
        if not static and not collection and t.statics and self.rng.random() < 0.2:
            chosen.append(self.rng.choice(t.statics))
            chosen = list(dict.fromkeys(chosen))
        if not static and all(c.kind == "static" for c in chosen) and not self.chance(
                "static_only_update_with_clustering"):
            static = True
        self._list_read = False
        self._static_list_add = False
        sets = [self.assignment(c, lwt) for c in chosen]
        where, cols = self.key_where(
            full_key=not static, allow_in=not lwt or self.chance("lwt_with_in"),
            allow_empty_in=not self._list_read or self.chance("empty_in_list_read"))
        ts = None
        parts = ["UPDATE ", TABLE]
        if not in_batch:
            using, ts = self.using(lwt)
            parts += using
        parts += [" SET "] + self.join(sets, ", ") + [" "] + where
        cols |= {c.name for c in chosen}
        if lwt:
            parts += self.conditions(static_only=static)
        feature = "update_lwt" if lwt else "update_static" if static else (
            "update_collection" if collection else "update")
        return Stmt(feature, parts, "lwt" if lwt else "write", cols=cols,
                    timestamp=self.lwt_timestamp(ts) if lwt else ts)

    def g_update_static(self):
        return self.g_update(static=True)

    def g_update_collection(self):
        return self.g_update(collection=True)

    def g_update_lwt(self):
        return self.g_update(lwt=True, static=bool(self.table.statics) and self.chance("lwt_static_update"))

    def g_update_counter(self, in_batch=False):
        t = self.table
        chosen = self.rng.sample(t.regulars, self.rng.randint(1, len(t.regulars)))
        sets = []
        for c in chosen:
            op = self.rng.choice(["+", "-", "+=", "-="])
            n = self.arg(BIGINT, self.rng.randint(-3, 10))
            sets.append([f"{c.name} = {c.name} {op} ", n] if len(op) == 1 else [f"{c.name} {op} ", n])
        where, cols = self.key_where(full_key=True)
        parts = ["UPDATE ", TABLE]
        if self.chance("bad_values"):
            parts += [" USING TIMESTAMP ", self.arg(BIGINT, self.clock.now)]
        parts += [" SET "] + self.join(sets, ", ") + [" "] + where
        return Stmt("update_counter", parts, "write", cols=cols | {c.name for c in chosen},
                    timestamp=self.clock.next(False))

    def conditions(self, static_only=False):
        """` IF EXISTS` or ` IF cond AND ...` parts."""
        t = self.table
        if not self.chance("lwt_column_conditions"):
            return [" IF EXISTS"]
        if static_only:
            pool = t.statics
        else:
            pool = [c for c in t.values if c.kind == "regular" or self.chance("lwt_static_condition")]
        if not pool:
            return [" IF EXISTS"]
        conds = []
        for c in self.rng.sample(pool, self.rng.randint(1, min(2, len(pool)))):
            r = self.rng.random()
            ct = c.type
            same_types = ct.kind == "map" and ct.params[0] == ct.params[1]
            if ct.kind == "udt" and r < 0.3 and self.chance("lwt_udt_field"):
                field = self.rng.choice(ct.fields)
                ft = ct.field_type(field)
                ops = ["=", "=", "!="] + (["<", ">="] if ft.kind == "native" and ft.name != "duration" else [])
                conds.append([f"{c.name}.{field} {self.rng.choice(ops)} ",
                              self.cond_arg(ft, self.rv(ft, True))])
            elif ct.kind == "map" and r < 0.25 and (
                    same_types or self.chance("lwt_element_cross_type")):
                k = self.rv(ct.params[0], True)
                while _null_or_empty_inside(k) and not self.chance("lwt_element_empty_key"):
                    k = self.rv(ct.params[0], False)
                conds.append([f"{c.name}[", self.cond_arg(ct.params[0], k), "] = ",
                              self.cond_arg(ct.params[1], self.rv(ct.params[1], True))])
            elif r < 0.15:
                conds.append([f"{c.name} = null"])
            elif r < 0.3:
                values = [self.seen_value(c) for _ in range(self.rng.randint(1, 3))]
                p = [f"{c.name} IN ("]
                for i, v in enumerate(values):
                    p += ([", "] if i else []) + [self.cond_arg(ct, v)]
                conds.append(p + [")"])
            else:
                ops = ["=", "=", "=", "!="]
                if (ct.kind == "native" and ct.name != "duration") or self.chance(
                        "lwt_slice_condition_collection"):
                    ops += ["<", ">=", ">", "<="]
                op = self.rng.choice(ops)
                conds.append([f"{c.name} {op} ", self.cond_arg(ct, self.seen_value(c))])
        return [" IF "] + self.join(conds)

    def cond_arg(self, ctype, value):
        """A value in an IF condition."""
        a = self.arg(ctype, value)
        a.bound = a.bound and self.chance("bind_lwt_conditions")
        return a

    def g_delete(self, kind, lwt=False, in_batch=False):
        t = self.table
        targets = []
        cols = set()
        if kind == "cells":
            pool = [c for c in t.values]
            if not pool:
                return None
            for c in self.rng.sample(pool, self.rng.randint(1, min(3, len(pool)))):
                if c.type.multicell_udt and self.chance("udt_field_ops"):
                    targets.append([f"{c.name}.{self.rng.choice(c.type.fields)}"])
                else:
                    targets.append([c.name])
                cols.add(c.name)
        elif kind == "elements":
            pool = [c for c in t.values if c.type.kind in ("map", "list")]
            if not pool:
                return None
            for c in self.rng.sample(pool, self.rng.randint(1, min(2, len(pool)))):
                key_t = c.type.params[0] if c.type.kind == "map" else INT
                key = self.rv(key_t, True) if c.type.kind == "map" else \
                    self.rng.randint(-1, 3)
                a = self.element_arg(key_t, key)
                if c.type.frozen and not self.chance("bind_frozen_element"):
                    a.bound = False
                targets.append([f"{c.name}[", a, "]"])
                cols.add(c.name)
        static_only = targets and all(t.column(n).kind == "static" for n in cols)
        empty_in_ok = kind != "elements" or self.chance("empty_in_list_read")
        if kind == "partition" or (static_only and not self.chance(
                "static_only_update_with_clustering")):
            where, wcols = self.key_where(full_key=False, allow_in=not lwt,
                                          allow_empty_in=empty_in_ok)
        elif kind == "range":
            where, wcols = self.range_where()
            if where is None:
                return None
        else:
            where, wcols = self.key_where(full_key=True, allow_in=not lwt,
                                          allow_empty_in=empty_in_ok)
        parts = ["DELETE "] + (self.join(targets, ", ") + [" "] if targets else []) + ["FROM ", TABLE]
        ts = None
        if not in_batch:
            using, ts = self.using(lwt, allow_ttl=self.chance("bad_values"))
            parts += using
        parts += [" "] + where
        if lwt:
            parts += self.conditions(static_only=bool(static_only))
        feature = "delete_lwt" if lwt else "delete_" + kind
        return Stmt(feature, parts, "lwt" if lwt else "write", cols=cols | wcols,
                    timestamp=self.lwt_timestamp(ts) if lwt else ts)

    def range_where(self):
        """WHERE for a range deletion: a clustering prefix and maybe a slice after it."""
        t = self.table
        if not t.ck:
            return None, None
        where, cols = self.key_where(full_key=False, allow_in=False)
        n_eq = self.rng.randint(0, len(t.ck) - 1)
        clauses = [where[1:]]
        for i in range(n_eq):
            p = []
            self.eq(t.ck[i], self.ck_value(i), p, cols)
            clauses.append(p)
        if self.rng.random() < 0.8:
            clauses += self.slice(n_eq, cols)
        return ["WHERE "] + self.join(clauses), cols

    def slice(self, i, cols, multi_ok=True):
        """One or two bounds on clustering column i, or a multi-column slice from i."""
        t = self.table
        out = []
        if multi_ok and self.chance("multi_column") and i + 1 < len(t.ck):
            n = self.rng.randint(2, len(t.ck) - i)
            if not self.chance("multi_column_mixed_order"):
                n = self.same_order_run(i, n)
            names = [c.name for c in t.ck[i:i + n]]
            for op in self.rng.sample([">", ">=", "<", "<="], self.rng.randint(1, 2)):
                m = self.rng.randint(1, n) if self.rng.random() < 0.3 else n
                p = [f"({', '.join(names[:m])}) {op} ("]
                for j in range(m):
                    p += ([", "] if j else []) + [self.arg(t.ck[i + j].type, self.ck_value(i + j),
                                                           multi=True)]
                out.append(p + [")"])
            cols |= set(names)
            return out
        c = t.ck[i]
        ops = self.rng.choice([[">"], [">="], ["<"], ["<="], [">", "<"], [">=", "<="], [">", "<="]])
        for op in ops:
            out.append([f"{c.name} {op} ", self.arg(c.type, self.ck_value(i))])
        cols.add(c.name)
        return out

    def same_order_run(self, i, n):
        """How many of the n clustering columns from i share column i's order."""
        ck = self.table.ck
        k = 1
        while k < n and ck[i + k].order == ck[i].order:
            k += 1
        return k

    def g_delete_partition(self):
        return self.g_delete("partition")

    def g_delete_row(self):
        return self.g_delete("row") if self.table.ck else self.g_delete("partition")

    def g_delete_range(self):
        return self.g_delete("range")

    def g_delete_cells(self):
        return self.g_delete("cells")

    def g_delete_elements(self):
        return self.g_delete("elements")

    def g_delete_lwt(self):
        kinds = ["row", "cells"] + (["partition"] if self.chance("lwt_delete_partition") else [])
        kind = self.rng.choice(kinds)
        return self.g_delete(kind, lwt=True)

    def batch_children(self, conditional):
        t = self.table
        n = self.rng.randint(1, 4)
        out = []
        if t.counter:
            return [self.g_update_counter(in_batch=True) for _ in range(n)]
        makers = [lambda: self.g_insert(in_batch=True),
                  lambda: self.g_update(in_batch=True)]
        if not conditional or self.chance("lwt_batch_delete"):
            makers += [lambda: self.g_delete("row" if t.ck else "partition", in_batch=True),
                       lambda: self.g_delete("cells", in_batch=True)]
        if conditional:
            makers += [lambda: self.g_insert(lwt=True, in_batch=True),
                       lambda: self.g_update(lwt=True, in_batch=True)]
        self._conditional_batch = conditional and not self.chance("lwt_with_in")
        self._in_conditional_batch = conditional
        # Which of several invalid statements a batch reports first is F41's question.
        self._in_batch = True
        while len(out) < n:
            s = self.rng.choice(makers)()
            if s is not None:
                out.append(s)
        self._conditional_batch = False
        self._in_conditional_batch = False
        self._in_batch = False
        return out

    def g_batch(self):
        t = self.table
        conditional = self.chance("batch_conditional") and (
            not t.statics or self.chance("lwt_on_static_tables"))
        if conditional and len(self.partitions) > 1:
            # Conditional batches must stay in one partition: narrow the pool for a moment.
            saved, self.partitions = self.partitions, [self.rng.choice(self.partitions)]
        else:
            saved = None
        children = self.batch_children(conditional)
        if saved is not None:
            self.partitions = saved + [p for p in self.partitions if p not in saved]
        kind = "COUNTER " if t.counter else self.rng.choice(["", "UNLOGGED ", "LOGGED "])
        ts = self.write_timestamp(False)
        parts = [f"BEGIN {kind}BATCH"]
        if not t.counter and not conditional and self.chance("using_timestamp"):
            a = self.arg(BIGINT, ts)
            a.bound = a.bound and self.chance("bind_batch_using")
            parts += [" USING TIMESTAMP ", a]
        parts.append(" ")
        cols = set()
        for c in children:
            parts += c.parts + ["; "]
            cols |= c.cols
        parts.append("APPLY BATCH")
        if not self.chance("bind_text_batch"):
            for a in parts:
                if isinstance(a, Arg) and not a.unset:
                    a.bound = False
        return Stmt("batch", parts, "lwt" if conditional else "write", cols=cols,
                    timestamp=self.lwt_timestamp(ts) if conditional else ts)

    def g_batch_protocol(self):
        t = self.table
        children = self.batch_children(conditional=False)
        ts = self.write_timestamp(True)
        batch_type = 2 if t.counter else self.rng.choice([0, 1])
        cols = set().union(*(c.cols for c in children))
        return Stmt("batch_protocol", [], "batch", cols=cols, timestamp=ts, children=children,
                    batch_type=batch_type)

    # -- schema changes --------------------------------------------------------------------

    def g_alter_add(self):
        t = self.table
        if t.counter:
            return None
        static = bool(t.ck) and self.rng.random() < 0.2
        if t.dropped and self.rng.random() < 0.4 and self.chance("readd_dropped"):
            name, (old, kind) = self.rng.choice(sorted(t.dropped.items(), key=lambda x: x[0]))
            ctype = old if self.rng.random() < 0.8 else ty.random_type(self.rng, self.f.types)
            if not self.chance("readd_dropped_other_kind"):
                static = kind == "static"
        else:
            name = f"v{self.next_col}"
            self.next_col += 1
            ctype = ty.random_type(self.rng, self.f.types)
        text = f"ALTER TABLE \0 ADD {name} {ctype.cql()}{' static' if static else ''}"
        a, b = text.split("\0")
        return Stmt("alter_add", [a, TABLE, b], "ddl", cols={name},
                    effect=["add", name, ctype.spec(), "static" if static else "regular"],
                    setup=[u.create_type_cql() for u in ctype.udts()])

    def g_alter_drop(self):
        t = self.table
        pool = t.values if not t.counter else []
        if not pool:
            return None
        c = self.rng.choice(pool)
        parts = ["ALTER TABLE ", TABLE, f" DROP {c.name}"]
        if self.chance("drop_using_timestamp"):
            # Literal only: DDL takes no bind markers.
            parts.append(f" USING TIMESTAMP {self.clock.now + STEP}")
        return Stmt("alter_drop", parts, "ddl", cols={c.name}, effect=["drop", c.name])

    def g_create_view(self):
        """`CREATE MATERIALIZED VIEW <table>_mv`: the base key's columns in a random order,
        maybe after one regular column, each `IS NOT NULL`."""
        t = self.table
        names = [c.name for c in t.key]
        self.rng.shuffle(names)
        extra = [c for c in t.regulars if c.type.comparable()]
        if extra and self.rng.random() < 0.6:
            names.insert(0, self.rng.choice(extra).name)
        n_part = self.rng.randint(1, min(2, len(names)))
        part, clust = names[:n_part], names[n_part:]
        key = ", ".join(part)
        key = f"({key})" if n_part > 1 or (clust and self.rng.random() < 0.3) else key
        key = ", ".join([key] + clust)
        if self.rng.random() < 0.7:
            selected = "*"
        else:
            others = [c.name for c in t.regulars if c.name not in names]
            selected = ", ".join(names + self.rng.sample(others, self.rng.randint(0, len(others))))
        relations = [f"{n} IS NOT NULL" for n in names]
        if self.chance("view_key_restriction"):
            # A restriction on one base key column: the view filters base rows by it.
            c = self.rng.choice(t.key)
            i = names.index(c.name)
            op = self.rng.choice(["=", "<", "<=", ">", ">=", "IN"])
            if op == "IN":
                values = ", ".join(ty.literal(c.type, self.rv(c.type, True))
                                   for _ in range(self.rng.randint(1, 3)))
                relations[i] = f"{c.name} IN ({values})"
            else:
                relations[i] = f"{c.name} {op} {ty.literal(c.type, self.rv(c.type, True))}"
        where = " AND ".join(relations)
        return Stmt("create_view", [
            "CREATE MATERIALIZED VIEW ", TABLE, f"_mv AS SELECT {selected} FROM ", TABLE,
            f" WHERE {where} PRIMARY KEY ({key})"], "ddl", cols=set(names),
            effect=["view", part, clust])

    def g_select_view(self):
        """A read of the view: the whole view, or one of its partitions."""
        if self.view is None:
            return None
        part, _ = self.view
        parts = ["SELECT * FROM ", TABLE, "_mv"]
        cols = set()
        if self.rng.random() < 0.6:
            clauses = []
            for name in part:
                c = self.table.column(name)
                if c is None:
                    return None
                p = []
                self.eq(c, self.seen_value(c), p, cols)
                clauses.append(p)
            parts += [" WHERE "] + self.join(clauses)
        if self.chance("select_limit"):
            parts += [" LIMIT ", self.arg(INT, self.rng.choice([1, 2, 3, 5, 10]))]
        fetch = self.rng.choice([1, 2, 3, 5]) if self.chance("paging") else None
        if not cols and any(self.empty_key(name) for name in part):
            # F85 (deliberate): Cassandra fails paging a view scan through the empty key's
            # partition; a scan of a view keyed by a column that may be empty is not paged.
            fetch = None
        return Stmt("select_view", parts, "read", cols=cols, fetch_size=fetch,
                    timestamp=self.clock.now)

    def empty_key(self, name):
        """Whether column `name` can hold an empty value (a text or a blob)."""
        c = self.table.column(name)
        return c is not None and c.type.kind == "native" and c.type.name in (
            "text", "varchar", "ascii", "blob")

    def g_create_index(self):
        """`CREATE INDEX` on one column of any kind: the value (`c`, `full(c)` for a frozen
        collection) or, for a non-frozen collection, its `keys`, `values` or `entries`; with
        `bad_values`, a target Cassandra refuses for the column's type."""
        t = self.table
        if not t.columns:
            return None
        c = self.rng.choice(t.columns)
        ct = c.type
        if ct.is_collection and ct.multicell:
            kinds = ["values", "values"] + (["keys", "entries"] if ct.kind == "map" else [])
            kind = self.rng.choice(kinds)
            target = f"{kind}({c.name})" if self.rng.random() < 0.7 or kind != "values" else c.name
        elif ct.is_collection:
            kind = "full"
            target = f"full({c.name})" if self.rng.random() < 0.5 else c.name
        else:
            kind = "value"
            target = c.name
        if self.chance("bad_values"):
            target = f"{self.rng.choice(['keys', 'values', 'entries', 'full'])}({c.name})"
        parts = ["CREATE INDEX "]
        if self.rng.random() < 0.2:
            parts.append("IF NOT EXISTS ")
        if self.rng.random() < 0.5:
            parts += [TABLE, "_idx "]
        parts += ["ON ", TABLE, f" ({target})"]
        # (No draw at weight 0: earlier seeds generate what they did.)
        sai = self.f("sai_index") > 0 and self.chance("sai_index")
        if sai:
            parts.append(" USING 'sai'")
        return Stmt("create_index", parts, "ddl", cols={c.name},
                    effect=["index", c.name, kind, sai])

    def g_select_indexed(self):
        """A SELECT that an index on the table can serve: the indexed column restricted as
        its target allows (`=`, `CONTAINS`, `CONTAINS KEY`, `m[k] =`), maybe with the
        partition key, another filter, a limit, paging."""
        if self.index is None:
            return None
        t = self.table
        name, kind = self.index
        c = t.column(name)
        if c is None:
            return None
        cols = {c.name}
        seen = self.seen_value(c) if kind != "value" else None
        if kind == "value" and self.index_sai and self.rng.random() < 0.5:
            # SAI serves ranges (on ordered types; the others need ALLOW FILTERING).
            op = self.rng.choice([" > ", " >= ", " < ", " <= "])
            clause = [c.name + op, self.arg(c.type, self.seen_value(c))]
            if self.rng.random() < 0.3:
                op2 = " < " if op in (" > ", " >= ") else " > "
                clause += [" AND ", c.name + op2, self.arg(c.type, self.seen_value(c))]
        elif kind == "value" or kind == "full":
            clause = [f"{c.name} = ", self.arg(c.type, self.seen_value(c))]
        elif kind == "entries":
            kt, vt = c.type.params
            k, v = self.rng.choice(seen) if seen else (self.rv(kt, True), self.rv(vt, True))
            clause = [f"{c.name}[", self.element_arg(kt, k), "] = ", self.element_arg(vt, v)]
        else:
            elem = c.type.params[0] if kind == "keys" or c.type.kind != "map" else c.type.params[1]
            if seen:
                pick = self.rng.choice(seen)
                value = pick if c.type.kind != "map" else pick[0 if kind == "keys" else 1]
            else:
                value = self.rv(elem, True)
            op = "CONTAINS KEY " if kind == "keys" else "CONTAINS "
            clause = [f"{c.name} {op}", self.element_arg(elem, value)]
        clauses = [clause]
        needs_filtering = False
        if self.rng.random() < 0.3:
            pk = self.select_key(self.partition())
            for i, k in enumerate(t.pk):
                if k.name == c.name:
                    continue
                p = []
                self.eq(k, pk[i], p, cols)
                clauses.append(p)
        others = [o for o in t.values if o is not c and not (o.kind == "static" and o.type.multicell)]
        if others and self.chance("select_filter"):
            clauses.append(self.filter_restriction(self.rng.choice(others), cols))
            needs_filtering = True
        self.rng.shuffle(clauses)
        names = [k.name for k in t.key] + ([] if c in t.key else [c.name])
        sel = "*" if self.rng.random() < 0.7 else ", ".join(names)
        if self.rng.random() < 0.1:
            sel = "count(*)"
        parts = [f"SELECT {sel} FROM ", TABLE, " WHERE "] + self.join(clauses)
        if self.chance("select_limit"):
            parts += [" LIMIT ", self.arg(INT, self.rng.choice([1, 2, 3, 5, 10]))]
        if needs_filtering and self.rng.random() < 0.9 or self.rng.random() < 0.2:
            parts.append(" ALLOW FILTERING")
        fetch = self.rng.choice([1, 2, 3, 5]) if self.chance("paging") else None
        return Stmt("select_indexed", parts, "read", cols=cols, fetch_size=fetch,
                    timestamp=self.clock.now)

    def g_truncate(self):
        return Stmt("truncate", ["TRUNCATE ", TABLE], "ddl", effect=["truncate"])

    def observe(self, stmt, outcome):
        """Applies a DDL statement's effect to the model once Cassandra accepted it."""
        if stmt.effect is None or outcome.error is not None:
            return
        t = self.table
        if stmt.effect[0] == "add":
            _, name, ctype, kind = stmt.effect
            t.columns.append(Column(name, ty.parse_type(ctype), kind))
            t.dropped.pop(name, None)
        elif stmt.effect[0] == "drop":
            c = t.column(stmt.effect[1])
            t.columns.remove(c)
            t.dropped[c.name] = (c.type, c.kind)
            self.recent.pop(c.name, None)
        elif stmt.effect[0] == "truncate":
            pass
        elif stmt.effect[0] == "view":
            self.view = (stmt.effect[1], stmt.effect[2])
        elif stmt.effect[0] == "index":
            self.index = (stmt.effect[1], stmt.effect[2])
            self.index_sai = stmt.effect[3]

    # -- reads -----------------------------------------------------------------------------

    def g_select(self):
        t = self.table
        f = self.chance
        json = f("select_json")
        distinct = f("select_distinct")
        aggregate = not distinct and f("select_aggregate")
        group_by = aggregate and f("select_group_by")
        sel_parts, loose, cols = self.selectors(distinct, aggregate, json)
        parts = ["SELECT "] + (["JSON "] if json else []) + (["DISTINCT "] if distinct else [])
        parts += sel_parts + [" FROM ", TABLE]
        clauses = []
        needs_filtering = False
        # Partition key.
        mode = ty.weighted(self.rng, [(m, self.f("select_pk_" + m)) for m in PK_MODES
                                      if self.f("select_pk_" + m) > 0] or [("scan", 1)])
        pk = self.select_key(self.partition())
        if mode == "eq":
            for i, c in enumerate(t.pk):
                p = []
                self.eq(c, pk[i], p, cols)
                clauses.append(p)
        elif mode == "in":
            for i, c in enumerate(t.pk):
                p = []
                if self.rng.random() < 0.6 or i == len(t.pk) - 1:
                    values = [self.select_key(self.partition())[i]
                              for _ in range(self.rng.randint(1, 4))]
                    if f("empty_in"):
                        values = []
                    self.in_list(c, values, p, cols)
                else:
                    self.eq(c, pk[i], p, cols)
                clauses.append(p)
        elif mode == "token":
            names = ", ".join(c.name for c in t.pk)
            for op in self.rng.choice([[">"], [">="], ["<"], ["<="], [">", "<="], [">=", "<"]]):
                token = self.rng.choice([-(2 ** 63), 2 ** 63 - 1, 0,
                                         self.rng.randint(-(2 ** 63), 2 ** 63 - 1)])
                if token == -(2 ** 63) and op[0] == "<" and not self.chance("token_min_upper_bound"):
                    token += 1
                clauses.append([f"token({names}) {op} ", self.arg(BIGINT, token)])
            cols |= {c.name for c in t.pk}
        elif mode == "partial":
            needs_filtering = True
            for i, c in enumerate(t.pk):
                if self.rng.random() < 0.5:
                    p = []
                    self.eq(c, pk[i], p, cols)
                    clauses.append(p)
        single = mode in ("eq", "in")
        # Clustering columns.
        static_only = any(t.column(n).kind == "static" for n in cols) and all(
            t.column(n).kind in ("pk", "static") for n in cols) and sel_parts != ["*"]
        if t.ck and not distinct and f("select_ck") and (
                not static_only or f("static_select_with_ck_restriction")):
            ck_clauses, ck_filter = self.ck_restrictions(cols, single)
            clauses += ck_clauses
            needs_filtering |= ck_filter or not single
        # Filters on other columns.
        # CONTAINS on a static non-frozen collection: a deliberate difference (features.toml).
        filterable = [c for c in t.values if not (c.kind == "static" and c.type.multicell)
                      or f("filter_static_collection")]
        if filterable and not distinct and f("select_filter"):
            columns = [self.rng.choice(filterable)]
            if self.rng.random() < 0.4:
                other = self.rng.choice(filterable)
                if other is not columns[0] or f("filter_same_column_twice"):
                    columns.append(other)
            for c in columns:
                clauses.append(self.filter_restriction(c, cols))
            needs_filtering = True
        if clauses:
            parts += [" WHERE "] + self.join(clauses)
        if group_by:
            n = self.rng.randint(len(t.pk), len(t.key))
            gb = [c.name for c in t.key[:n]]
            if f("bad_values") and t.values:
                gb.append(self.rng.choice(t.values).name)
            parts.append(" GROUP BY " + ", ".join(gb))
        if t.ck and f("select_order_by") and (mode != "in" or f("order_by_with_pk_in")) and (
                not distinct or f("distinct_order_by")) and (
                not json or mode != "in" or f("json_order_by_with_pk_in")):
            n = self.rng.randint(1, len(t.ck))
            flip = self.rng.random() < 0.5
            order = []
            for c in t.ck[:n]:
                asc = (c.order == "ASC") != flip
                if f("bad_values"):
                    asc = not asc
                order.append(f"{c.name} {'ASC' if asc else 'DESC'}" if self.rng.random() < 0.8
                             or not asc else c.name)
            if f("bad_values") and n > 1 and f("order_by_out_of_order"):
                order.reverse()
            parts.append(" ORDER BY " + ", ".join(order))
        if f("select_per_partition_limit") and (
                not (aggregate or distinct) or f("per_partition_limit_aggregate")) and (
                not needs_filtering or f("per_partition_limit_filtering")):
            parts += [" PER PARTITION LIMIT ", self.arg(INT, self.rng.randint(1, 3))]
        if f("select_limit") and (not aggregate or f("aggregate_limit")) and (
                not group_by or f("group_by_limit")):
            parts += [" LIMIT ", self.arg(INT, self.rng.choice([1, 2, 3, 5, 10]))]
        if needs_filtering and self.rng.random() < 0.9 or self.rng.random() < 0.05:
            parts.append(" ALLOW FILTERING")
        fetch = None
        if f("paging") and (not t.statics or f("paging_static")) and (
                not group_by or f("group_by_paging")):
            fetch = self.rng.choice([1, 2, 3, 5])
        return Stmt("select", parts, "read", cols=cols, fetch_size=fetch, loose=loose,
                    timestamp=self.clock.now)

    def ck_restrictions(self, cols, single):
        """Clustering restrictions: (clauses, needs_filtering); single: the partition key is
        restricted by = or IN."""
        t = self.table
        r = self.rng.random()
        clauses = []
        multi_ok = single or self.chance("multi_column_without_partition")
        if r < self.f("multi_column") and len(t.ck) > 1 and multi_ok:
            n = self.rng.randint(1, len(t.ck))
            if not self.chance("multi_column_mixed_order"):
                n = self.same_order_run(0, n)
            names = [c.name for c in t.ck[:n]]
            kind = self.rng.choice(["eq", "in", "slice"])
            if kind == "slice":
                return self.slice(0, cols, multi_ok), False
            cols |= set(names)

            def tup():
                values = [[self.arg(t.ck[j].type, self.ck_value(j), multi=True)] for j in range(n)]
                return ["("] + self.join(values, ", ") + [")"]
            if kind == "eq":
                return [[f"({', '.join(names)}) = "] + tup()], False
            items = [] if self.chance("empty_in") else [tup() for _ in range(self.rng.randint(1, 3))]
            return [[f"({', '.join(names)}) IN ("] + self.join(items, ", ") + [")"]], False
        n_eq = self.rng.randint(0, len(t.ck))
        filtering = False
        for i in range(n_eq):
            c = t.ck[i]
            if self.chance("select_ck_gap"):
                continue  # a gap: filtering needed for what follows
            p = []
            if self.chance("where_ck_in"):
                values = [self.ck_value(i) for _ in range(self.rng.randint(1, 3))]
                if self.chance("empty_in"):
                    values = []
                self.in_list(c, values, p, cols)
            else:
                self.eq(c, self.ck_value(i), p, cols)
            clauses.append(p)
        gap = len(clauses) < n_eq
        if n_eq < len(t.ck) and self.rng.random() < 0.6:
            clauses += self.slice(n_eq, cols, multi_ok and (
                not gap or self.chance("multi_column_filtering")))
        if gap:
            filtering = True
        return clauses, filtering

    def filter_restriction(self, c, cols):
        cols.add(c.name)
        ct = c.type
        if ct.multicell and not self.chance("filter_collection_eq") or (
                ct.is_collection and self.rng.random() < 0.6):
            elem = ct.params[0] if ct.kind != "map" else ct.params[self.rng.randint(0, 1)]
            if ct.kind == "map" and self.rng.random() < 0.3 and self.chance("filter_map_entry"):
                key = self.element_arg(ct.params[0], self.rv(ct.params[0], True))
                value = self.element_arg(ct.params[1], self.rv(ct.params[1], True))
                if ct.frozen and not self.chance("bind_frozen_element"):
                    key.bound = value.bound = False
                return [f"{c.name}[", key, "] = ", value]
            value = self.element_arg(elem, self.rv(elem, True))
            if ct.kind == "map" and elem is ct.params[0]:
                return [f"{c.name} CONTAINS KEY ", value]
            return [f"{c.name} CONTAINS ", value]
        r = self.rng.random()
        if r < 0.2:
            values = [self.seen_value(c) for _ in range(self.rng.randint(1, 3))]
            p = []
            self.in_list(c, values, p, set())
            return p
        ops = ["=", "=", ">", ">=", "<", "<="]
        if ct.contains("duration") and not self.chance("filter_duration_slice"):
            ops = ["="]
        ops += ["!="] if self.chance("filter_neq") else []
        op = self.rng.choice(ops)
        return [f"{c.name} {op} ", self.arg(ct, self.seen_value(c))]

    def selectors(self, distinct, aggregate, json):
        """(parts, loose, cols) of the selection."""
        t = self.table
        loose = {}
        cols = set()
        if distinct:
            names = [c.name for c in t.pk]
            if t.statics and self.rng.random() < 0.5:
                names += [c.name for c in t.statics if self.rng.random() < 0.7]
            if self.rng.random() < 0.2 and t.ck:
                names.append(t.ck[0].name)  # refused by both
            return [", ".join(names)], loose, set(names)
        if aggregate:
            items = []
            counted = False
            for _ in range(self.rng.randint(1, 3)):
                r = self.rng.random()
                numeric = [c for c in t.columns if c.type.kind == "native" and c.type.name in NUMERIC
                           | {"counter"}]
                emptiable_ok = self.chance("aggregate_emptiable")
                comparable = [c for c in t.columns if c.type.kind == "native"
                              and c.type.name != "duration" and (
                                  c.type.name != "timeuuid" or self.chance("minmax_timeuuid"))
                              and (emptiable_ok or c.type.name not in EMPTIABLE)]
                if r < 0.3:
                    if counted and not self.chance("repeated_count"):
                        continue
                    counted = True
                    items.append(self.rng.choice(["count(*)", "COUNT(1)"]))
                elif r < 0.45:
                    c = self.rng.choice([c for c in t.columns if emptiable_ok or not (
                        c.type.kind == "native" and c.type.name in EMPTIABLE)] or t.key)
                    items.append(f"count({c.name})")
                    cols.add(c.name)
                elif r < 0.75 and comparable:
                    c = self.rng.choice(comparable)
                    items.append(f"{self.rng.choice(['min', 'max'])}({c.name})")
                    cols.add(c.name)
                elif numeric:
                    c = self.rng.choice(numeric)
                    items.append(f"{self.rng.choice(['sum', 'avg'])}({c.name})")
                    cols.add(c.name)
                else:
                    c = self.rng.choice(t.columns)
                    items.append(c.name)
                    cols.add(c.name)
            if self.rng.random() < 0.2:
                c = self.rng.choice(t.key)
                items.append(c.name)
                cols.add(c.name)
            return [", ".join(items)], loose, cols
        if self.chance("select_star"):
            if json:
                loose[0] = "json"
            return ["*"], loose, {c.name for c in t.columns}
        items = []
        n = self.rng.randint(1, min(5, len(t.columns) + 1))
        for i in range(n):
            c = self.rng.choice(t.columns)
            r = self.rng.random()
            if c.kind in ("static", "regular") and r < self.f("select_writetime") and not t.counter \
                    and (not c.type.multicell or self.chance("writetime_collection")) \
                    and (not (json and c.type.multicell_udt) or self.chance("json_writetime_udt")):
                fn = self.rng.choice(["writetime", "WRITETIME", "ttl"]) if not json else "writetime"
                if fn.lower() == "ttl":
                    loose[i] = "ttl"
                else:
                    loose[i] = "writetime"
                item = f"{fn}({c.name})"
            elif r < 0.3 and self.chance("select_token_fn"):
                item = f"token({', '.join(k.name for k in t.pk)})"
                c = None
                cols |= {k.name for k in t.pk}
            elif r < 0.4 and self.chance("select_cast") and (
                    c.type.kind == "native" or self.chance("cast_collection")) and (
                    c.type.name not in ("blob", "duration") or self.chance("cast_blob_duration")) and (
                    c.type.name not in ("float", "double", "inet") or self.chance("cast_float_text")
                    ) and (c.kind != "ck" or c.order == "ASC" or self.chance("cast_desc_clustering")):
                item = f"CAST({c.name} AS text)"
            elif r < 0.5 and self.chance("select_tojson"):
                item = f"toJson({c.name})"
            elif c.type.kind == "udt" and self.chance("select_udt_field"):
                item = f"{c.name}.{self.rng.choice(c.type.fields)}"
            # The knobs below are off by default; their draws are skipped when off, so the
            # statements of a seed stay the same.
            elif self.f("select_tuple") > 0 and self.chance("select_tuple"):
                others = [self.rng.choice(t.columns) for _ in range(self.rng.randint(1, 2))]
                cols |= {o.name for o in others}
                item = f"({', '.join([c.name] + [o.name for o in others])})"
            elif self.f("select_type_hint") > 0 and c.type.kind == "native" \
                    and self.chance("select_type_hint"):
                hints = [c.type.name, "blob"]
                if c.type.name in ("tinyint", "smallint", "int", "bigint"):
                    hints.append("varint")
                item = f"({self.rng.choice(hints)}) {c.name}"
            elif self.f("writetime_udt_field") > 0 and c.type.kind == "udt" \
                    and c.kind in ("static", "regular") and not t.counter \
                    and self.chance("writetime_udt_field"):
                fn = self.rng.choice(["writetime", "maxwritetime", "ttl"])
                loose[i] = "ttl" if fn == "ttl" else "writetime"
                item = f"{fn}({c.name}.{self.rng.choice(c.type.fields)})"
            else:
                item = c.name
            if c is not None:
                cols.add(c.name)
            if self.rng.random() < 0.2:
                item += f" AS a{i}"
            items.append(item)
        if json:
            loose = {0: "json"}
        return [", ".join(items)], loose, cols


PK_MODES = ["eq", "in", "token", "scan", "partial"]


def _null_or_empty_inside(v):
    """An empty collection, or a null anywhere inside a tuple or collection."""
    if v == []:
        return True
    if isinstance(v, list):
        return any(x is None or _null_or_empty_inside(x) for x in v)
    return False


def _empty(v):
    return isinstance(v, (str, bytes)) and len(v) == 0


def _nonempty(t):
    """A non-empty value of a type whose random value came out empty."""
    return b"\x00" if t.name == "blob" else "a"
LWT_KINDS = {"insert_lwt", "update_lwt", "delete_lwt"}
COUNTER_INCREMENTS = {"update_counter", "batch", "batch_protocol"}
COUNTER_KINDS = {"update_counter", "delete_partition", "delete_row", "select", "batch",
                 "batch_protocol", "truncate"}
