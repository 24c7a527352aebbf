"""Regression tests for wrong answers once given on valid CQL (issue 15's list), each checked
against Apache Cassandra 5.0's behaviour: empty IN, row-level conditions next to static
columns, refused conditional writes showing the current row, dropped columns, null TTLs,
unset timestamps, and canonical frozen collections in bound values."""

import time

import pytest
from cassandra import InvalidRequest
from cassandra.query import UNSET_VALUE

from helpers import expect_error, server_message, tuples


@pytest.fixture
def t(session, ks, tname):
    session.execute(
        f"CREATE TABLE {ks}.{tname} (a int, b int, s int static, v int, PRIMARY KEY (a, b))")
    return f"{ks}.{tname}"


# --- empty IN -------------------------------------------------------------------------------

def test_delete_with_empty_in_is_a_no_op(session, t):
    session.execute(f"INSERT INTO {t} (a, b, v) VALUES (1, 1, 1)")
    session.execute(f"INSERT INTO {t} (a, b, v) VALUES (1, 2, 2)")
    session.execute(f"DELETE FROM {t} WHERE a = 1 AND b IN ()")
    session.execute(f"DELETE FROM {t} WHERE a IN ()")
    assert tuples(session, f"SELECT a, b, v FROM {t}") == [(1, 1, 1), (1, 2, 2)]


def test_update_with_empty_in_writes_nothing(session, t):
    session.execute(f"UPDATE {t} SET v = 5 WHERE a = 1 AND b IN ()")
    session.execute(f"UPDATE {t} SET v = 5 WHERE a IN () AND b = 1")
    assert tuples(session, f"SELECT * FROM {t}") == []


def test_select_with_empty_in_returns_nothing(session, t):
    session.execute(f"INSERT INTO {t} (a, b, v) VALUES (1, 1, 1)")
    assert tuples(session, f"SELECT * FROM {t} WHERE a = 1 AND b IN ()") == []
    assert tuples(session, f"SELECT * FROM {t} WHERE a IN ()") == []
    assert tuples(session, f"SELECT count(*) FROM {t} WHERE a IN ()") == [(0,)]


# --- conditions are about the row, not the partition ----------------------------------------

def test_update_if_exists_on_missing_row_next_to_a_static(session, t):
    session.execute(f"INSERT INTO {t} (a, s) VALUES (1, 7)")
    r = session.execute(f"UPDATE {t} SET v = 1 WHERE a = 1 AND b = 1 IF EXISTS").one()
    assert r[0] is False
    assert tuples(session, f"SELECT a, b, s, v FROM {t}") == [(1, None, 7, None)]


def test_insert_if_not_exists_on_missing_row_next_to_a_static(session, t):
    session.execute(f"INSERT INTO {t} (a, s) VALUES (1, 7)")
    r = session.execute(f"INSERT INTO {t} (a, b, v) VALUES (1, 1, 10) IF NOT EXISTS").one()
    assert r[0] is True
    assert tuples(session, f"SELECT a, b, s, v FROM {t}") == [(1, 1, 7, 10)]


def test_refused_insert_shows_the_current_row(session, t):
    session.execute(f"INSERT INTO {t} (a, b, v) VALUES (1, 1, 10)")
    rs = session.execute(f"INSERT INTO {t} (a, b, v) VALUES (1, 1, 20) IF NOT EXISTS")
    assert rs.column_names == ["[applied]", "a", "b", "s", "v"]
    # Statics are not read by a request that writes only the clustering row.
    assert tuple(rs.one()) == (False, 1, 1, None, 10)


def test_refused_column_condition_shows_the_condition_columns(session, t):
    session.execute(f"INSERT INTO {t} (a, b, v) VALUES (1, 1, 10)")
    rs = session.execute(f"UPDATE {t} SET v = 2 WHERE a = 1 AND b = 1 IF v = 5")
    assert rs.column_names == ["[applied]", "v"]
    assert tuple(rs.one()) == (False, 10)
    rs = session.execute(f"UPDATE {t} SET v = 2 WHERE a = 1 AND b = 1 IF v IN (3, 10)")
    assert tuple(rs.one()) == (True,)
    assert tuples(session, f"SELECT v FROM {t} WHERE a = 1 AND b = 1") == [(2,)]


def test_condition_on_a_missing_row_sees_nulls(session, t):
    rs = session.execute(f"UPDATE {t} SET v = 3 WHERE a = 2 AND b = 2 IF v = null")
    assert tuple(rs.one()) == (True,)
    rs = session.execute(f"UPDATE {t} SET v = 4 WHERE a = 2 AND b = 3 IF v > 1")
    assert tuple(rs.one()) == (False,)
    assert tuples(session, f"SELECT b, v FROM {t} WHERE a = 2") == [(2, 3)]


def test_static_condition_and_if_exists_on_the_static_row(session, t):
    rs = session.execute(f"UPDATE {t} SET s = 1 WHERE a = 3 IF EXISTS")
    assert tuple(rs.one()) == (False,)
    session.execute(f"INSERT INTO {t} (a, s) VALUES (3, 5)")
    rs = session.execute(f"UPDATE {t} SET s = 6 WHERE a = 3 IF s = 5")
    assert tuple(rs.one()) == (True,)
    rs = session.execute(f"UPDATE {t} SET s = 7 WHERE a = 3 IF s = 5")
    assert tuple(rs.one()) == (False, 6)


def test_conditional_batch_on_one_partition(session, t):
    session.execute(f"INSERT INTO {t} (a, b, v) VALUES (4, 1, 1)")
    rs = session.execute(
        f"BEGIN BATCH UPDATE {t} SET v = 2 WHERE a = 4 AND b = 1 IF v = 9; "
        f"INSERT INTO {t} (a, b, v) VALUES (4, 2, 2) APPLY BATCH")
    assert rs.column_names == ["[applied]", "a", "b", "v"]
    assert tuple(rs.one()) == (False, 4, 1, 1)
    rs = session.execute(
        f"BEGIN BATCH UPDATE {t} SET v = 2 WHERE a = 4 AND b = 1 IF v = 1; "
        f"INSERT INTO {t} (a, b, v) VALUES (4, 2, 2) APPLY BATCH")
    assert tuple(rs.one()) == (True,)
    assert tuples(session, f"SELECT b, v FROM {t} WHERE a = 4") == [(1, 2), (2, 2)]
    err = expect_error(InvalidRequest, session.execute,
                       f"BEGIN BATCH UPDATE {t} SET v = 2 WHERE a = 4 AND b = 1 IF v = 1; "
                       f"INSERT INTO {t} (a, b, v) VALUES (5, 2, 2) APPLY BATCH")
    assert "cannot span multiple partitions" in server_message(err)


def test_conditional_write_refuses_a_custom_timestamp(session, t):
    err = expect_error(InvalidRequest, session.execute,
                       f"UPDATE {t} USING TIMESTAMP 5 SET v = 1 WHERE a = 1 AND b = 1 IF EXISTS")
    assert server_message(err) == "Cannot provide custom timestamp for conditional updates"


# --- dropped columns ---------------------------------------------------------------------------

def test_row_made_by_update_goes_with_its_dropped_column(session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, x int, y int)")
    session.execute(f"UPDATE {t} SET x = 1 WHERE k = 1")
    session.execute(f"INSERT INTO {t} (k) VALUES (2)")
    session.execute(f"ALTER TABLE {t} DROP x")
    assert tuples(session, f"SELECT * FROM {t}") == [(2, None)]
    # Re-added, the column does not bring the old cells back.
    session.execute(f"ALTER TABLE {t} ADD x int")
    assert tuples(session, f"SELECT k, x FROM {t}") == [(2, None)]
    err = expect_error(InvalidRequest, session.execute, f"ALTER TABLE {t} DROP y2")
    assert server_message(err) == f"Column y2 was not found in table '{t}'"


def test_readding_a_dropped_column_with_another_type_is_refused(session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, x int)")
    session.execute(f"ALTER TABLE {t} DROP x")
    err = expect_error(InvalidRequest, session.execute, f"ALTER TABLE {t} ADD x text")
    assert server_message(err) == (
        "Cannot add a column 'x' of type text, incompatible with previously dropped column "
        "'x' of type int")


# --- TTL and timestamp markers ----------------------------------------------------------------

def test_bound_null_ttl_means_no_ttl(session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v int) WITH default_time_to_live = 1000")
    ins = session.prepare(f"INSERT INTO {t} (k, v) VALUES (?, ?) USING TTL ?")
    session.execute(ins, (1, 1, None))
    session.execute(ins, (2, 2, UNSET_VALUE))
    rows = dict(tuples(session, f"SELECT k, ttl(v) FROM {t}"))
    assert rows[1] is None
    assert 990 <= rows[2] <= 1000


def test_unset_timestamp_means_now(session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v int)")
    ins = session.prepare(f"INSERT INTO {t} (k, v) VALUES (?, ?) USING TIMESTAMP ?")
    before = int(time.time() * 1e6)
    session.execute(ins, (1, 1, UNSET_VALUE))
    (wt,) = session.execute(f"SELECT writetime(v) FROM {t} WHERE k = 1").one()
    assert before - 60_000_000 <= wt <= int(time.time() * 1e6) + 60_000_000


# --- canonical frozen collections in bound values ------------------------------------------------

def test_nested_frozen_set_in_a_bound_value_is_canonical(session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(
        f"CREATE TABLE {t} (k frozen<list<frozen<set<int>>>> PRIMARY KEY, v int)")
    ins = session.prepare(f"INSERT INTO {t} (k, v) VALUES (?, ?)")
    # The driver serialises a Python list in its own order; the server must sort the sets.
    session.execute(ins, ([[3, 1, 2]], 1))
    assert tuples(session, f"SELECT v FROM {t} WHERE k = [{{1, 2, 3}}]") == [(1,)]


# --- restrictions as Cassandra resolves them ------------------------------------------------------

@pytest.fixture
def m(session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(
        f"CREATE TABLE {t} (a int, b int, c int, d int, m map<int, int>, PRIMARY KEY (a, b, c, d)) "
        f"WITH CLUSTERING ORDER BY (b ASC, c DESC, d ASC)")
    for b, c, d, mk, mv in [(1, 1, 1, 1, 2), (1, 2, 1, 1, 3), (2, 1, 1, 2, 2), (2, 2, 2, 2, 2),
                            (2, 3, 0, 2, 2)]:
        session.execute(f"INSERT INTO {t} (a, b, c, d, m) VALUES (0, {b}, {c}, {d}, {{{mk}: {mv}}})")
    return t


def test_contradictory_restrictions_are_refused(session, m):
    err = expect_error(InvalidRequest, session.execute,
                       f"SELECT * FROM {m} WHERE a = 0 AND (b, c) = (1, 1) AND b = 2")
    assert server_message(err) == "b cannot be restricted by more than one relation if it includes an Equal"
    err = expect_error(InvalidRequest, session.execute,
                       f"SELECT * FROM {m} WHERE a = 0 AND b > 1 AND b > 2")
    assert server_message(err) == "More than one restriction was found for the start bound on b"


def test_a_short_tuple_is_refused(session, m):
    err = expect_error(InvalidRequest, session.execute,
                       f"SELECT * FROM {m} WHERE a = 0 AND (b, c, d) = (1, 2)")
    assert server_message(err) == "Expected 3 elements in value tuple, but got 2: (1, 2)"


def test_multi_column_slices_over_mixed_order(session, m):
    assert tuples(session, f"SELECT b, c, d FROM {m} WHERE a = 0 AND (b, c) > (1, 1)") == [
        (1, 2, 1), (2, 3, 0), (2, 2, 2), (2, 1, 1)]
    assert tuples(session, f"SELECT b, c, d FROM {m} WHERE a = 0 AND (b, c, d) >= (1, 2, 1) "
                           f"AND (b, c) < (2, 2)") == [(1, 2, 1), (2, 1, 1)]
    assert tuples(session, f"SELECT b, c, d FROM {m} WHERE a = 0 AND b > 0 AND (b, c) < (2, 2)") == [
        (1, 2, 1), (1, 1, 1), (2, 1, 1)]


def test_filtering_on_clustering_map_entries_and_key_parts(session, m, ks, tname):
    assert tuples(session, f"SELECT b, c, d FROM {m} WHERE a = 0 AND c = 2 ALLOW FILTERING") == [
        (1, 2, 1), (2, 2, 2)]
    err = expect_error(InvalidRequest, session.execute, f"SELECT * FROM {m} WHERE a = 0 AND c = 2")
    assert server_message(err) == (
        'PRIMARY KEY column "c" cannot be restricted as preceding column "b" is not restricted')
    assert tuples(session, f"SELECT b, c, d FROM {m} WHERE a = 0 AND m[1] = 2 ALLOW FILTERING") == [
        (1, 1, 1)]
    assert tuples(session, f"SELECT b, c, d FROM {m} WHERE a = 0 AND b > 1 AND c = 2 "
                           f"ALLOW FILTERING") == [(2, 2, 2)]
    pk = f"{ks}.{tname}_pk"
    session.execute(f"CREATE TABLE {pk} (a int, b int, c int, PRIMARY KEY ((a, b), c))")
    session.execute(f"INSERT INTO {pk} (a, b, c) VALUES (1, 2, 3)")
    session.execute(f"INSERT INTO {pk} (a, b, c) VALUES (1, 3, 3)")
    assert sorted(tuples(session, f"SELECT * FROM {pk} WHERE a = 1 ALLOW FILTERING")) == [
        (1, 2, 3), (1, 3, 3)]
    assert tuples(session, f"SELECT * FROM {pk} WHERE a = 1 AND b > 2 ALLOW FILTERING") == [(1, 3, 3)]


def test_in_on_the_partition_key_reads_in_key_order(session, t):
    for a in (4, 1, 3, 2):
        session.execute(f"INSERT INTO {t} (a, b, v) VALUES ({a}, 0, {a})")
    assert tuples(session, f"SELECT a FROM {t} WHERE a IN (4, 1, 3, 1, 2)") == [(1,), (2,), (3,), (4,)]
    assert tuples(session, f"SELECT a FROM {t} WHERE a IN (4, 1, 3, 2) LIMIT 3") == [(1,), (2,), (3,)]


def test_token_of_literal_values_in_where(session, m):
    assert len(tuples(session, f"SELECT b FROM {m} WHERE token(a) = token(0)")) == 5


def test_partition_delete_with_if_exists_is_refused_on_a_table_with_rows(session, t):
    err = expect_error(InvalidRequest, session.execute, f"DELETE FROM {t} WHERE a = 1 IF EXISTS")
    assert server_message(err) == (
        "DELETE statements must restrict all PRIMARY KEY columns with equality relations in order "
        "to delete non static columns")


def test_selecting_only_statics_refuses_clustering_restrictions(session, t):
    err = expect_error(InvalidRequest, session.execute, f"SELECT s FROM {t} WHERE a = 4 AND b = 1")
    assert server_message(err) == "Cannot restrict clustering columns when selecting only static columns"


# --- SELECT: filtering before limits, GROUP BY, ORDER BY across partitions ----------------------

@pytest.fixture
def g(session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (k int, c int, d int, s int static, v int, PRIMARY KEY (k, c, d))")
    for k, c, d, v in [(0, 0, 0, 1), (0, 0, 1, 2), (0, 1, 0, 3), (1, 0, 0, 4), (1, 2, 0, 5)]:
        session.execute(f"INSERT INTO {t} (k, c, d, v) VALUES ({k}, {c}, {d}, {v})")
    session.execute(f"INSERT INTO {t} (k, s) VALUES (2, 9)")
    return t


def test_per_partition_limit_counts_rows_that_pass_the_filter(session, g):
    assert sorted(tuples(session, f"SELECT k, c, v FROM {g} WHERE v > 1 PER PARTITION LIMIT 1 "
                                  f"ALLOW FILTERING")) == [(0, 0, 2), (1, 0, 4)]


def test_group_by_is_executed(session, g):
    assert sorted(tuples(session, f"SELECT k, c, count(*), max(v) FROM {g} GROUP BY k, c")) == [
        (0, 0, 2, 2), (0, 1, 1, 3), (1, 0, 1, 4), (1, 2, 1, 5), (2, None, 1, None)]
    assert tuples(session, f"SELECT k, c, sum(v) FROM {g} WHERE k = 0 GROUP BY c") == [
        (0, 0, 3), (0, 1, 3)]
    assert tuples(session, f"SELECT k, c, sum(v) FROM {g} WHERE k = 0 GROUP BY k, c LIMIT 1") == [
        (0, 0, 3)]
    err = expect_error(InvalidRequest, session.execute, f"SELECT k FROM {g} GROUP BY nope")
    assert server_message(err).startswith("Undefined column name nope")
    err = expect_error(InvalidRequest, session.execute, f"SELECT k FROM {g} GROUP BY k, d")
    assert server_message(err) == ("Group by currently only support groups of columns following "
                                   "their declared order in the PRIMARY KEY")


def test_group_by_pages_by_groups(session, g):
    from cassandra.query import SimpleStatement
    rs = session.execute(SimpleStatement(f"SELECT k, c, count(*) FROM {g} GROUP BY k, c",
                                         fetch_size=2))
    assert sorted(tuple(r) for r in rs) == [(0, 0, 2), (0, 1, 1), (1, 0, 1), (1, 2, 1), (2, None, 1)]


def test_in_with_order_by_sorts_across_partitions(session, g):
    from cassandra.query import SimpleStatement
    q = f"SELECT k, c, d FROM {g} WHERE k IN (1, 0) ORDER BY c DESC"
    assert tuples(session, SimpleStatement(q, fetch_size=None)) == [
        (1, 2, 0), (0, 1, 0), (0, 0, 1), (0, 0, 0), (1, 0, 0)]
    assert tuples(session, SimpleStatement(q + " LIMIT 2", fetch_size=None)) == [(1, 2, 0), (0, 1, 0)]
    err = expect_error(InvalidRequest, session.execute, SimpleStatement(q, fetch_size=100))
    assert server_message(err).startswith("Cannot page queries with both ORDER BY and a IN restriction")


def test_distinct_of_static_columns(session, g):
    session.execute(f"INSERT INTO {g} (k, s) VALUES (0, 7)")
    assert sorted(tuples(session, f"SELECT DISTINCT k, s FROM {g}")) == [(0, 7), (1, None), (2, 9)]
    assert tuples(session, f"SELECT DISTINCT k, s FROM {g} WHERE s = 7 ALLOW FILTERING") == [(0, 7)]


# --- prepared bind-marker metadata (drivers bind by these names and types) -------------------------

def test_bind_marker_names_and_types(session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (pk int, a int, b int, l list<int>, s set<int>, "
                    f"m map<int, text>, v int, PRIMARY KEY (pk, a, b))")

    def markers(q):
        return [(c.name, c.type.cql_parameterized_type()) for c in session.prepare(q).column_metadata]

    assert markers(f"SELECT * FROM {t} WHERE pk = ? AND (a, b) > (?, ?)") == [
        ("pk", "int"), ("a", "int"), ("b", "int")]
    assert markers(f"SELECT * FROM {t} WHERE pk = ? AND (a, b) IN ?") == [
        ("pk", "int"), ("in(a,b)", "list<frozen<tuple<int, int>>>")]
    assert markers(f"UPDATE {t} SET l[?] = ? WHERE pk = 1 AND a = 1 AND b = 1") == [
        ("idx(l)", "int"), ("value(l)", "int")]
    assert markers(f"UPDATE {t} SET m = m - ? WHERE pk = 1 AND a = 1 AND b = 1") == [
        ("m", "set<int>")]
    assert markers(f"SELECT * FROM {t} WHERE m CONTAINS KEY ? AND s CONTAINS ? ALLOW FILTERING") == [
        ("key(m)", "int"), ("value(s)", "int")]
    assert markers(f"BEGIN BATCH USING TIMESTAMP ? INSERT INTO {t} (pk, a, b) VALUES (1, 1, 1); "
                   f"APPLY BATCH") == [("[timestamp]", "bigint")]
