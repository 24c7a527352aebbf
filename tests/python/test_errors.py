"""Error classes and texts: SyntaxException, InvalidRequest, AlreadyExists, ConfigurationException."""

import re

import pytest
from cassandra import AlreadyExists, InvalidRequest
from cassandra.protocol import ConfigurationException, SyntaxException

from helpers import expect_error, server_code, server_message


@pytest.fixture(scope="module")
def t(session, ks):
    session.execute(f"CREATE TABLE {ks}.errs (p int, c int, v text, PRIMARY KEY (p, c))")
    return f"{ks}.errs"


# ---- SyntaxException (code 0x2000), message "line L:C ..." like Cassandra's ANTLR parser ----

def test_syntax_error_unknown_statement(session):
    err = expect_error(SyntaxException, session.execute, "SELEC * FROM system.local")
    assert server_code(err) == 0x2000
    assert server_message(err).startswith("line 1:0 ")
    assert "SELEC" in server_message(err)


def test_syntax_error_position(session, t):
    err = expect_error(SyntaxException, session.execute, f"SELECT * FORM {t}")
    msg = server_message(err)
    assert msg.startswith("line 1:9 "), msg
    assert "FORM" in msg


def test_syntax_error_on_second_line(session, t):
    err = expect_error(SyntaxException, session.execute, f"SELECT *\nFROM {t}\nWHERE p = = 1")
    assert server_message(err).startswith("line 3:"), server_message(err)


def test_syntax_error_truncated(session, t):
    err = expect_error(SyntaxException, session.execute, f"INSERT INTO {t} (p, c) VALUES (1,")
    assert re.match(r"line 1:\d+ ", server_message(err)), server_message(err)


def test_syntax_error_unterminated_string(session, t):
    err = expect_error(SyntaxException, session.execute, f"INSERT INTO {t} (p, c, v) VALUES (1, 1, 'abc)")
    assert server_message(err).startswith("line 1:"), server_message(err)


def test_syntax_error_reserved_word_as_identifier(session, ks):
    expect_error(SyntaxException, session.execute, f"CREATE TABLE {ks}.select (k int PRIMARY KEY)")


def test_unreserved_keywords_as_identifiers(session, ks):
    session.execute(f"CREATE TABLE {ks}.kw (key int PRIMARY KEY, type text, ttl int, writetime int, count int, "
                    f"list int, map int, date date, time int, user text, role text, static int, values text)")
    session.execute(f"INSERT INTO {ks}.kw (key, type, ttl, count) VALUES (1, 'a', 2, 3)")
    r = session.execute(f"SELECT key, type, ttl, count FROM {ks}.kw").one()
    assert tuple(r) == (1, "a", 2, 3)


def test_unknown_table_property_is_syntax_error(session, ks):
    err = expect_error(SyntaxException, session.execute,
                       f"CREATE TABLE {ks}.badprop (k int PRIMARY KEY) WITH foo = 1")
    assert "Unknown property 'foo'" in server_message(err)


# ---- InvalidRequest (0x2200) ----

def test_unconfigured_table(session, ks):
    err = expect_error(InvalidRequest, session.execute, f"SELECT * FROM {ks}.nosuch")
    assert server_code(err) == 0x2200
    assert "unconfigured table nosuch" in server_message(err)
    err = expect_error(InvalidRequest, session.execute, f"INSERT INTO {ks}.nosuch (k) VALUES (1)")
    assert "unconfigured table nosuch" in server_message(err)


def test_unknown_keyspace(session):
    err = expect_error(InvalidRequest, session.execute, "SELECT * FROM nosuch_ks.t")
    assert re.search(r"(?i)keyspace '?nosuch_ks'? does not exist", server_message(err)), server_message(err)
    err = expect_error(InvalidRequest, session.execute, "USE nosuch_ks")
    assert re.search(r"(?i)keyspace '?nosuch_ks'? does not exist", server_message(err)), server_message(err)


def test_create_table_in_unknown_keyspace(session):
    expect_error((InvalidRequest, ConfigurationException), session.execute,
                 "CREATE TABLE nosuch_ks.t (k int PRIMARY KEY)")


def test_no_keyspace_specified(cluster):
    s = cluster.connect()
    try:
        err = expect_error(InvalidRequest, s.execute, "SELECT * FROM errs")
        assert "No keyspace has been specified" in server_message(err)
    finally:
        s.shutdown()


def test_undefined_column(session, t):
    err = expect_error(InvalidRequest, session.execute, f"SELECT nope FROM {t}")
    assert server_message(err).startswith("Undefined column name nope")
    err = expect_error(InvalidRequest, session.execute, f"INSERT INTO {t} (p, c, nope) VALUES (1, 1, 1)")
    assert "Undefined column name nope" in server_message(err)


def test_type_mismatch(session, t):
    err = expect_error(InvalidRequest, session.execute, f"INSERT INTO {t} (p, c, v) VALUES ('x', 1, 'a')")
    assert 'Invalid STRING constant (x) for "p" of type int' in server_message(err)


def test_partition_key_required(session, t):
    err = expect_error(InvalidRequest, session.execute, f"SELECT * FROM {t} WHERE c = 1")
    assert "ALLOW FILTERING" in server_message(err)
    expect_error(InvalidRequest, session.execute, f"DELETE FROM {t} WHERE c = 1")
    expect_error(InvalidRequest, session.execute, f"UPDATE {t} SET v = 'a' WHERE c = 1")


def test_primary_key_column_cannot_be_set(session, t):
    err = expect_error(InvalidRequest, session.execute, f"UPDATE {t} SET c = 2 WHERE p = 1 AND c = 1")
    assert "PRIMARY KEY part c found in SET part" in server_message(err)


def test_invalid_table_definitions(session, ks):
    expect_error(InvalidRequest, session.execute, f"CREATE TABLE {ks}.nopk (k int, v int)")
    expect_error(InvalidRequest, session.execute, f"CREATE TABLE {ks}.dupcol (k int PRIMARY KEY, k text)")
    expect_error(InvalidRequest, session.execute,
                 f"CREATE TABLE {ks}.badorder (k int, c int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (k DESC)")
    expect_error(InvalidRequest, session.execute,
                 f"CREATE TABLE {ks}.listpk (k list<int> PRIMARY KEY)")


# ---- AlreadyExists (0x2400) with keyspace/table ----

def test_already_exists_table(session, t, ks):
    err = expect_error(AlreadyExists, session.execute, f"CREATE TABLE {t} (p int PRIMARY KEY)")
    assert (err.keyspace, err.table) == (ks, "errs")


def test_already_exists_keyspace(session, ks):
    err = expect_error(AlreadyExists, session.execute,
                       f"CREATE KEYSPACE {ks} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}")
    assert err.keyspace == ks
    assert not err.table


# ---- ConfigurationException (0x2300) ----

def test_unknown_compaction_class(session, ks):
    err = expect_error(ConfigurationException, session.execute,
                       f"CREATE TABLE {ks}.badcomp (k int PRIMARY KEY) WITH compaction = {{'class': 'Foo'}}")
    assert server_code(err) == 0x2300
    assert server_message(err) == \
        "Unable to find compaction strategy class 'org.apache.cassandra.db.compaction.Foo'"


def test_unknown_compaction_option(session, ks):
    err = expect_error(ConfigurationException, session.execute,
                       f"CREATE TABLE {ks}.badcompopt (k int PRIMARY KEY) WITH compaction = "
                       "{'class': 'SizeTieredCompactionStrategy', 'foo': 'bar'}")
    assert "foo" in server_message(err)


def test_bad_compaction_on_alter(session, t):
    err = expect_error(ConfigurationException, session.execute,
                       f"ALTER TABLE {t} WITH compaction = {{'class': 'NoSuchStrategy'}}")
    assert server_message(err) == \
        "Unable to find compaction strategy class 'org.apache.cassandra.db.compaction.NoSuchStrategy'"


def test_unknown_compression_class(session, ks):
    expect_error(ConfigurationException, session.execute,
                 f"CREATE TABLE {ks}.badcompr (k int PRIMARY KEY) WITH compression = {{'class': 'FooCompressor'}}")


def test_bad_compression_chunk_length(session, ks):
    expect_error(ConfigurationException, session.execute,
                 f"CREATE TABLE {ks}.badchunk (k int PRIMARY KEY) WITH compression = "
                 "{'class': 'LZ4Compressor', 'chunk_length_in_kb': '3'}")


def test_bad_numeric_table_options(session, ks):
    expect_error(ConfigurationException, session.execute,
                 f"CREATE TABLE {ks}.badgc (k int PRIMARY KEY) WITH gc_grace_seconds = -1")
    expect_error(ConfigurationException, session.execute,
                 f"CREATE TABLE {ks}.badbf (k int PRIMARY KEY) WITH bloom_filter_fp_chance = 2.0")


def test_bad_replication(session):
    # Cassandra 5.0 defaults a missing factor to default_keyspace_rf (1).
    err = expect_error(ConfigurationException, session.execute,
                       "CREATE KEYSPACE bad_repl WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 'x'}")
    assert server_message(err) == 'For input string: "x"'
    err = expect_error(ConfigurationException, session.execute,
                       "CREATE KEYSPACE bad_repl WITH replication = {'class': 'FooStrategy', 'replication_factor': 1}")
    assert "FooStrategy" in server_message(err)


def test_a_null_in_a_row_filter_is_unsupported_as_cassandra_says(session, t):
    # Cassandra 5.0.9's text for a null compared with a regular (or static) column, indexed or
    # filtered; a key column keeps "Invalid null value in condition for column …".
    for query in [f"SELECT * FROM {t} WHERE v = null ALLOW FILTERING",
                  f"SELECT * FROM {t} WHERE p = 1 AND v > null ALLOW FILTERING"]:
        e = expect_error(InvalidRequest, session.execute, query)
        assert server_message(e) == "Unsupported null value for column v"
    prepared = session.prepare(f"SELECT * FROM {t} WHERE v = ? ALLOW FILTERING")
    e = expect_error(InvalidRequest, session.execute, prepared, (None,))
    assert server_message(e) == "Unsupported null value for column v"
    e = expect_error(InvalidRequest, session.execute, f"SELECT * FROM {t} WHERE p = 1 AND c = null")
    assert server_message(e) == "Invalid null value in condition for column c"
