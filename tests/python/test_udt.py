"""User-defined types through the Python driver: CREATE / ALTER / DROP TYPE with Cassandra 5.0's
checks and texts (cql3/statements/schema/*TypeStatement.java, CQL3Type.java, UserTypes.java),
frozen UDT columns (in keys and collections too), literals, bound values, field selection,
JSON, the driver's metadata (system_schema.types) and DESCRIBE."""

import json
import pytest
from cassandra import InvalidRequest


def err(session, query, *args):
    with pytest.raises(InvalidRequest) as e:
        session.execute(query, *args)
    return str(e.value)


@pytest.fixture
def ty(session, ks, tname):
    """A fresh type `<tname>_a (street text, zip int)`."""
    name = f"{tname}_a"[:40]
    session.execute(f"CREATE TYPE {ks}.{name} (street text, zip int)")
    return name


def test_create_alter_drop_and_their_errors(session, ks, ty):
    q = f"{ks}.{ty}"
    assert f"A user type with name '{ty}' already exists" in err(session, f"CREATE TYPE {q} (x int)")
    session.execute(f"CREATE TYPE IF NOT EXISTS {q} (x int)")
    assert "Duplicate field name 'x' in type 'dup'" in err(session, f"CREATE TYPE {ks}.dup (x int, x text)")
    assert "A user type cannot contain counters" in err(session, f"CREATE TYPE {ks}.c (x counter)")
    assert "A user type cannot contain non-frozen UDTs" in err(session, f"CREATE TYPE {ks}.n (x {ty})")
    assert f"Unknown type {ks}.nope" in err(session, f"CREATE TYPE {ks}.n (x frozen<nope>)")
    assert "Keyspace 'nokeyspace' doesn't exist" in err(session, "CREATE TYPE nokeyspace.t (x int)")

    session.execute(f"ALTER TYPE {q} ADD country text")
    assert (f"Cannot add field zip to type {q}: a field with name zip already exists"
            in err(session, f"ALTER TYPE {q} ADD zip int"))
    assert (f"Cannot add new field me of type frozen<{ty}> to user type {q} as it would create a circular reference"
            in err(session, f"ALTER TYPE {q} ADD me frozen<{ty}>"))
    session.execute(f"ALTER TYPE {q} RENAME zip TO postcode")
    assert f"Unkown field nope in user type {q}" in err(session, f"ALTER TYPE {q} RENAME nope TO x")
    assert f"Type {ks}.nope doesn't exist" in err(session, f"ALTER TYPE {ks}.nope ADD x int")
    row = session.execute(
        "SELECT field_names, field_types FROM system_schema.types WHERE keyspace_name = %s AND type_name = %s",
        (ks, ty)).one()
    assert list(row.field_names) == ["street", "postcode", "country"]
    assert list(row.field_types) == ["text", "int", "text"]

    session.execute(f"CREATE TYPE {ks}.{ty}_o (inner frozen<{ty}>)")
    assert (f"Cannot drop user type '{q}' as it is still used by user types {ty}_o"
            in err(session, f"DROP TYPE {q}"))
    session.execute(f"DROP TYPE {ks}.{ty}_o")
    session.execute(f"CREATE TABLE {ks}.{ty}_t (k int PRIMARY KEY, v frozen<{ty}>)")
    assert (f"Cannot drop user type '{q}' as it is still used by tables {ty}_t"
            in err(session, f"DROP TYPE {q}"))
    session.execute(f"DROP TABLE {ks}.{ty}_t")
    session.execute(f"DROP TYPE {q}")
    assert f"Type '{q}' doesn't exist" in err(session, f"DROP TYPE {q}")
    session.execute(f"DROP TYPE IF EXISTS {q}")


def test_column_type_checks(session, ks, ty, tname):
    t = f"{ks}.{tname}"
    assert (f"Invalid non-frozen user-defined type {ty} for PRIMARY KEY column 'k'"
            in err(session, f"CREATE TABLE {t} (k {ty} PRIMARY KEY)"))
    assert (f"Non-frozen UDTs are not allowed inside collections: list<{ty}>"
            in err(session, f"CREATE TABLE {t} (k int PRIMARY KEY, l list<{ty}>)"))
    assert (f"Statement on keyspace {ks} cannot refer to a user type in keyspace other; "
            "user types can only be used in the keyspace they are defined in"
            in err(session, f"CREATE TABLE {t} (k int PRIMARY KEY, v frozen<other.{ty}>)"))
    assert f"Unknown type {ks}.nope" in err(session, f"CREATE TABLE {t} (k int PRIMARY KEY, v frozen<nope>)")
    session.execute(f"CREATE TYPE {ks}.{ty}_l (l list<int>)")
    assert "Non-frozen UDTs with nested non-frozen collections are not supported" in err(
        session, f"CREATE TABLE {t} (k int PRIMARY KEY, v {ty}_l)")


def test_frozen_values_literals_binds_selection(session, ks, ty, tname):
    t = f"{ks}.{tname}"
    session.execute(
        f"CREATE TABLE {t} (k int, c frozen<{ty}>, v frozen<{ty}>, l list<frozen<{ty}>>, "
        f"m map<text, frozen<{ty}>>, PRIMARY KEY (k, c))")
    session.execute(
        f"INSERT INTO {t} (k, c, v, l, m) VALUES (1, {{street: 'b', zip: 2}}, {{street: 'x'}}, "
        f"[{{zip: 7}}], {{'home': {{street: 'h', zip: 1}}}})")
    session.execute(f"INSERT INTO {t} (k, c, v) VALUES (1, {{street: 'a', zip: 9}}, null)")
    rows = list(session.execute(f"SELECT c, v, l, m FROM {t} WHERE k = 1"))
    # Clustering order is the tuple order of the fields.
    assert [(r.c.street, r.c.zip) for r in rows] == [("a", 9), ("b", 2)]
    r = rows[1]
    assert (r.v.street, r.v.zip) == ("x", None)
    assert [(u.street, u.zip) for u in r.l] == [(None, 7)]
    assert {k: (u.street, u.zip) for k, u in r.m.items()} == {"home": ("h", 1)}

    # Field selection, a key equal to a UDT literal.
    row = session.execute(f"SELECT v.street, c.zip FROM {t} WHERE k = 1 AND c = {{street: 'b', zip: 2}}").one()
    assert tuple(row) == ("x", 2)
    assert row._fields == ("v_street", "c_zip")
    assert f"v of type frozen<{ty}> has no field nope" in err(session, f"SELECT v.nope FROM {t}")
    assert "Invalid field selection: k of type int is not a user type" in err(session, f"SELECT k.x FROM {t}")

    # Literal errors.
    assert f"Unknown field 'nope' in value of user defined type {ty}" in err(
        session, f"INSERT INTO {t} (k, c, v) VALUES (2, {{street: 'a'}}, {{nope: 1}})")
    assert "Invalid user type literal for v: field zip is not of type int" in err(
        session, f"INSERT INTO {t} (k, c, v) VALUES (2, {{street: 'a'}}, {{zip: 'x'}})")
    assert f"Invalid operation (v.zip = 3) for frozen UDT column v" in err(
        session, f"UPDATE {t} SET v.zip = 3 WHERE k = 1 AND c = {{street: 'b', zip: 2}}")

    # Prepared statements: the driver encodes the bound value from its registered class or a tuple.
    ins = session.prepare(f"INSERT INTO {t} (k, c, v) VALUES (?, ?, ?)")
    session.execute(ins, (3, ("p", 1), ("q", None)))
    sel = session.prepare(f"SELECT v FROM {t} WHERE k = ? AND c = ?")
    v = session.execute(sel, (3, ("p", 1))).one().v
    assert (v.street, v.zip) == ("q", None)
    # A field marker is named `column.field`.
    ins2 = session.prepare(f"INSERT INTO {t} (k, c, v) VALUES (4, {{street: 's', zip: ?}}, {{street: ?}})")
    assert [c.name for c in ins2.column_metadata] == ["c.zip", "v.street"]
    session.execute(ins2, (5, "w"))
    v = session.execute(f"SELECT v FROM {t} WHERE k = 4").one().v
    assert v.street == "w"

    # JSON both ways.
    row = session.execute(f"SELECT JSON v FROM {t} WHERE k = 4").one()
    assert row[0] == '{"v": {"street": "w", "zip": null}}'
    session.execute(f"""INSERT INTO {t} JSON '{{"k": 5, "c": {{"street": "j"}}, "v": {{"zip": 3}}}}'""")
    v = session.execute(f"SELECT v FROM {t} WHERE k = 5").one().v
    assert (v.street, v.zip) == (None, 3)


def test_alter_type_reaches_existing_tables(session, ks, ty, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v frozen<{ty}>)")
    session.execute(f"INSERT INTO {t} (k, v) VALUES (1, {{street: 'old', zip: 1}})")
    session.execute(f"ALTER TYPE {ks}.{ty} ADD country text")
    session.execute(f"ALTER TYPE {ks}.{ty} RENAME street TO road")
    session.execute(f"INSERT INTO {t} (k, v) VALUES (2, {{road: 'new', country: 'fr'}})")
    assert session.execute(f"SELECT v.road, v.country FROM {t} WHERE k = 1").one() == ("old", None)
    assert session.execute(f"SELECT v.road, v.country FROM {t} WHERE k = 2").one() == ("new", "fr")


def test_driver_metadata_and_describe(cluster, session, ks, ty):
    session.execute(f"CREATE TYPE {ks}.{ty}_n (addr frozen<{ty}>, tags list<text>)")
    cluster.refresh_schema_metadata()
    types = cluster.metadata.keyspaces[ks].user_types
    assert types[ty].field_names == ["street", "zip"]
    assert types[ty].field_types == ["text", "int"]
    assert types[f"{ty}_n"].field_types == [f"frozen<{ty}>", "list<text>"]
    rows = list(session.execute(f"DESCRIBE TYPE {ks}.{ty}_n"))
    assert rows[0].create_statement == (
        f"CREATE TYPE {ks}.{ty}_n (\n    addr frozen<{ty}>,\n    tags list<text>\n);")
    described = [(r.type, r.name) for r in session.execute(f"DESCRIBE KEYSPACE {ks}")]
    # A type comes after the types it uses.
    names = [n for (k, n) in described if k == "type"]
    assert names.index(ty) < names.index(f"{ty}_n")
    assert (ks, ty) in [(r.keyspace_name, r.name) for r in session.execute("DESCRIBE TYPES")]
    assert f"User defined type 'nope' not found in '{ks}'" in err(session, f"DESCRIBE TYPE {ks}.nope")


def test_types_and_their_values_survive_a_restart(node_factory):
    from conftest import make_cluster
    n = node_factory("udt-restart")
    c = make_cluster(n)
    s = c.connect()
    s.execute("CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute("CREATE TYPE k.p (x int, y int)")
    s.execute("CREATE TYPE k.unused (z text)")
    s.execute("CREATE TABLE k.t (k frozen<p> PRIMARY KEY, v list<frozen<p>>)")
    s.execute("INSERT INTO k.t (k, v) VALUES ({x: 1, y: 2}, [{x: 3}])")
    c.shutdown()
    n.restart(kill=True)
    c = make_cluster(n)
    try:
        s = c.connect()
        names = {r.type_name for r in s.execute("SELECT type_name FROM system_schema.types WHERE keyspace_name = 'k'")}
        assert names == {"p", "unused"}
        row = s.execute("SELECT k, v FROM k.t").one()
        assert (row.k.x, row.k.y) == (1, 2) and [(p.x, p.y) for p in row.v] == [(3, None)]
    finally:
        c.shutdown()


def test_cqlsh_shows_values_and_describes_types(node, session, ks, ty, tname):
    from test_cqlsh import cqlsh
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v frozen<{ty}>)")
    session.execute(f"INSERT INTO {t} (k, v) VALUES (1, {{street: 'x'}})")
    rc, out, err = cqlsh(node, f"SELECT v FROM {t}")
    assert rc == 0, err
    assert "{street: 'x', zip: null}" in out
    rc, out, err = cqlsh(node, f"DESCRIBE TYPE {ks}.{ty}")
    assert rc == 0 and not err.strip(), err
    assert f"CREATE TYPE {ks}.{ty} (\n    street text,\n    zip int\n);" in out
    rc, out, err = cqlsh(node, f"DESCRIBE TABLE {t}")
    assert rc == 0 and not err.strip(), err
    assert f"v frozen<{ty}>" in out


def test_alter_table_add_and_drop_keyspace(session, ks, ty, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY)")
    session.execute(f"ALTER TABLE {t} ADD v frozen<{ty}>")
    session.execute(f"ALTER TABLE {t} ADD w {ty}")
    session.execute(f"INSERT INTO {t} (k, v) VALUES (1, {{zip: 5}})")
    assert session.execute(f"SELECT v.zip FROM {t}").one()[0] == 5
    session.execute("CREATE KEYSPACE udt_gone WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TYPE udt_gone.x (a int)")
    session.execute("DROP KEYSPACE udt_gone")
    assert list(session.execute("SELECT * FROM system_schema.types WHERE keyspace_name = 'udt_gone'")) == []


def test_non_frozen_values_are_stored_field_by_field(session, ks, ty, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v {ty})")
    session.execute(f"INSERT INTO {t} (k, v) VALUES (1, {{street: 'a', zip: 1}})")
    session.execute(f"UPDATE {t} SET v.zip = 2 WHERE k = 1")
    assert session.execute(f"SELECT v.street, v.zip FROM {t} WHERE k = 1").one() == ("a", 2)
    # A whole value replaces every field (the missing ones become null).
    session.execute(f"UPDATE {t} SET v = {{zip: 3}} WHERE k = 1")
    v = session.execute(f"SELECT v FROM {t} WHERE k = 1").one().v
    assert (v.street, v.zip) == (None, 3)
    session.execute(f"UPDATE {t} SET v.street = 's' WHERE k = 2")
    v = session.execute(f"SELECT v FROM {t} WHERE k = 2").one().v
    assert (v.street, v.zip) == ("s", None)
    session.execute(f"DELETE v.street FROM {t} WHERE k = 2")
    # The row was made by UPDATE (no row marker): without its last cell it is gone.
    assert session.execute(f"SELECT v FROM {t} WHERE k = 2").one() is None
    upd = session.prepare(f"UPDATE {t} SET v.zip = ? WHERE k = ?")
    session.execute(upd, (9, 3))
    assert session.execute(f"SELECT v.zip FROM {t} WHERE k = 3").one()[0] == 9
    session.execute(f"DELETE v FROM {t} WHERE k = 1")
    assert session.execute(f"SELECT v FROM {t} WHERE k = 1").one().v is None
    assert f"UDT column v does not have a field named nope" in err(
        session, f"UPDATE {t} SET v.nope = 1 WHERE k = 1")
    assert f"Non-frozen UDT column 'v' ({ty}) cannot be restricted by any relation" in err(
        session, f"SELECT * FROM {t} WHERE v = {{zip: 1}} ALLOW FILTERING")


def test_writetime_and_ttl_of_a_non_frozen_value_list_its_fields(session, ks, ty, tname):
    # Cassandra 5.0: one entry per field of the type (null for a null field), a list<bigint>
    # for writetime and a list<int> for ttl; maxwritetime the greatest; no field set: null.
    # (The Python driver cannot decode a list holding a null, so no list here holds one.)
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v {ty}, f frozen<{ty}>)")
    session.execute(f"UPDATE {t} USING TIMESTAMP 100 AND TTL 2000 SET v.zip = 7 WHERE k = 1")
    session.execute(f"UPDATE {t} USING TIMESTAMP 200 AND TTL 1000 SET v.street = 's' WHERE k = 1")
    session.execute(f"UPDATE {t} USING TIMESTAMP 300 SET f = {{zip: 1}} WHERE k = 1")
    r = session.execute(
        f"SELECT writetime(v), maxwritetime(v), ttl(v), writetime(f), ttl(f) FROM {t} WHERE k = 1").one()
    assert r[0] == [200, 100] and r[1] == 200 and r[3] == 300 and r[4] is None, r
    assert 0 < r[2][0] <= 1000 and 1000 < r[2][1] <= 2000, r
    # A null field has no time: the greatest of the others.
    session.execute(f"UPDATE {t} USING TIMESTAMP 400 SET v.street = null WHERE k = 1")
    assert session.execute(f"SELECT maxwritetime(v) FROM {t} WHERE k = 1").one()[0] == 100
    session.execute(f"INSERT INTO {t} (k) VALUES (2)")
    assert session.execute(f"SELECT writetime(v), ttl(v) FROM {t} WHERE k = 2").one() == (None, None)
    # The result's type is a list: arithmetic on it is refused, as Cassandra refuses it.
    assert "the '+' operation is not supported between writetime(v) and 1" in err(
        session, f"SELECT writetime(v) + 1 FROM {t}")
    # As JSON the null field is null (Cassandra 5.0.9 fails: a NullPointerException).
    j = session.execute(f"SELECT JSON writetime(v), ttl(v) FROM {t} WHERE k = 1").one()[0]
    assert json.loads(j)["writetime(v)"] == [None, 100], j


def test_conditions_on_fields_and_whole_values(session, ks, ty, tname):
    # Cassandra 5.0's ColumnCondition: `IF u.f op …` on frozen and non-frozen values, and the
    # whole value compared as one.
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v {ty}, f frozen<{ty}>, n int)")
    session.execute(f"INSERT INTO {t} (k, v, f) VALUES (1, {{street: 'a', zip: 1}}, {{street: 'b', zip: 2}})")

    def applied(cond, set_="n = 1"):
        return session.execute(f"UPDATE {t} SET {set_} WHERE k = 1 IF {cond}").one()[0]

    assert applied("v.zip = 1", "v.zip = 5")
    assert not applied("v.zip = 1")
    assert applied("v.zip > 4 AND f.street = 'b'")
    assert applied("v.street IN ('x', 'a')")
    assert not applied("f.zip != 2")
    assert applied("v = {street: 'a', zip: 5}")
    assert not applied("v = {street: 'a', zip: 1}")
    assert applied("f = {street: 'b', zip: 2}")
    # A null field: `= null` holds, any other comparison but != does not.
    session.execute(f"UPDATE {t} SET v.street = null WHERE k = 1")
    assert applied("v.street = null")
    assert not applied("v.street > 'a'")
    assert applied("v.street != 'a'")
    # A missing row: every field is null.
    assert session.execute(f"UPDATE {t} SET n = 1 WHERE k = 9 IF v.zip = null").one()[0]
    # The refused request shows the column.
    r = session.execute(f"UPDATE {t} SET n = 2 WHERE k = 1 IF v.zip = 7").one()
    assert not r[0] and r.v.zip == 5, r

    assert "Unknown field nope for column v" in err(
        session, f"UPDATE {t} SET n = 1 WHERE k = 1 IF v.nope = 1")
    assert "Unknown field nope for column f" in err(
        session, f"UPDATE {t} SET n = 1 WHERE k = 1 IF f.nope = 1")
    assert "Cannot use CONTAINS on non-collection column v.zip" in err(
        session, f"UPDATE {t} SET n = 1 WHERE k = 1 IF v.zip CONTAINS 1")
    assert "Invalid field selection: n of type int is not a user type" in err(
        session, f"UPDATE {t} SET n = 1 WHERE k = 1 IF n.x = 1")
    prepared = session.prepare(f"UPDATE {t} SET n = 3 WHERE k = 1 IF v.zip = ?")
    assert session.execute(prepared, (5,)).one()[0]


def test_alter_type_if_exists_variants(session, ks, ty):
    q = f"{ks}.{ty}"
    # The type missing: IF EXISTS changes nothing.
    session.execute(f"ALTER TYPE IF EXISTS {ks}.nope ADD x int")
    assert f"Type {ks}.nope doesn't exist" in err(session, f"ALTER TYPE {ks}.nope RENAME a TO b")
    session.execute(f"ALTER TYPE {q} ADD IF NOT EXISTS zip text")  # there: nothing done
    session.execute(f"ALTER TYPE IF EXISTS {q} ADD IF NOT EXISTS country text")
    session.execute(f"ALTER TYPE {q} RENAME IF EXISTS nope TO x AND zip TO postcode")
    session.execute(f"ALTER TYPE {q} RENAME IF EXISTS nope TO y")
    row = session.execute(
        "SELECT field_names, field_types FROM system_schema.types WHERE keyspace_name = %s AND type_name = %s",
        (ks, ty)).one()
    assert list(row.field_names) == ["street", "postcode", "country"]
    assert list(row.field_types) == ["text", "int", "text"]
    assert "Altering field types is no longer supported" in err(
        session, f"ALTER TYPE {q} ALTER street TYPE blob")


def test_unreserved_keywords_name_types(session, ks, tname):
    # Cassandra's `non_type_ident`: unreserved keywords are type names unquoted (`type`,
    # `values`, `key`, `frozen`, `list`, …), but not the native types' names nor ttl, count,
    # writetime, maxwritetime, cast, json, distinct.
    from cassandra.protocol import SyntaxException
    session.execute(f"CREATE TYPE {ks}.type (key int, values text)")
    session.execute(f"CREATE TYPE {ks}.list (t frozen<type>)")
    session.execute(f"CREATE TABLE {ks}.{tname} (k int PRIMARY KEY, a type, b frozen<list>)")
    session.execute(f"INSERT INTO {ks}.{tname} (k, a, b) VALUES (1, {{key: 1, values: 'v'}}, "
                    f"{{t: {{key: 2}}}})")
    r = session.execute(f"SELECT a.key, a.values, b.t FROM {ks}.{tname} WHERE k = 1").one()
    assert (r[0], r[1], r[2].key) == (1, "v", 2), r
    session.execute(f"ALTER TYPE {ks}.type ADD frozen int")
    for bad in ("int", "ttl", "json"):
        with pytest.raises(SyntaxException):
            session.execute(f"CREATE TYPE {ks}.{bad} (a int)")
    session.execute(f'CREATE TYPE {ks}."int" (a int)')
    session.execute(f"DROP TABLE {ks}.{tname}")
    session.execute(f"DROP TYPE {ks}.list")
    session.execute(f"DROP TYPE {ks}.type")


def test_slices_on_user_types_holding_durations_are_refused(session, ks, tname):
    # Durations have no order: Cassandra refuses slices on a user type holding one, before
    # any other check of the column (the non-frozen column's "cannot be restricted" too).
    session.execute(f"CREATE TYPE {ks}.{tname}_d (a int, d duration)")
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v frozen<{tname}_d>, w {tname}_d)")
    for c in ("v", "w"):
        assert "Slice restrictions are not supported on UDTs containing durations" in err(
            session, f"SELECT * FROM {t} WHERE {c} > {{a: 0}} ALLOW FILTERING")
        assert "Slice conditions are not supported on UDTs containing durations" in err(
            session, f"UPDATE {t} SET v = {{a: 1}} WHERE k = 1 IF {c} >= {{a: 0, d: 1h}}")
    assert "Slice conditions ( > ) are not supported on durations" in err(
        session, f"UPDATE {t} SET v = {{a: 1}} WHERE k = 1 IF w.d > 1h")
