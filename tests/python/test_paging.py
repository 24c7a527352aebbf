"""Paging across many pages: single partition and full table scans, complete and in order."""

import pytest
from cassandra.concurrent import execute_concurrent_with_args
from cassandra.metadata import Murmur3Token
from cassandra.query import SimpleStatement

N = 1000
FETCH = 7


def murmur(p):
    return Murmur3Token.from_key(p.to_bytes(4, "big", signed=True)).value


@pytest.fixture(scope="module")
def one_partition(session, ks):
    session.execute(f"CREATE TABLE {ks}.onep (p int, c int, v text, PRIMARY KEY (p, c))")
    ins = session.prepare(f"INSERT INTO {ks}.onep (p, c, v) VALUES (?, ?, ?)")
    execute_concurrent_with_args(session, ins, [(1, c, f"v{c}") for c in range(N)], concurrency=32)
    return f"{ks}.onep"


@pytest.fixture(scope="module")
def many_partitions(session, ks):
    session.execute(f"CREATE TABLE {ks}.manyp (p int, c int, v int, PRIMARY KEY (p, c))")
    ins = session.prepare(f"INSERT INTO {ks}.manyp (p, c, v) VALUES (?, ?, ?)")
    execute_concurrent_with_args(session, ins, [(p, c, p * 10 + c) for p in range(100) for c in range(10)],
                                 concurrency=32)
    return f"{ks}.manyp"


def fetch_all(session, query, params=None, fetch_size=FETCH):
    """Reads every page; returns (rows, number of pages)."""
    stmt = SimpleStatement(query, fetch_size=fetch_size) if isinstance(query, str) else query
    rs = session.execute(stmt, params)
    size = stmt.fetch_size
    out = list(rs.current_rows)
    pages = 1
    assert len(rs.current_rows) <= size, f"page 1 has {len(rs.current_rows)} rows, page size {size}"
    while rs.has_more_pages:
        rs.fetch_next_page()
        assert len(rs.current_rows) <= size, f"page {pages + 1} has {len(rs.current_rows)} rows, page size {size}"
        out += rs.current_rows
        pages += 1
    return out, pages


def test_single_partition_pages(session, one_partition):
    got, pages = fetch_all(session, f"SELECT c, v FROM {one_partition} WHERE p = 1")
    assert [r.c for r in got] == list(range(N))
    assert all(r.v == f"v{r.c}" for r in got)
    assert pages >= N // FETCH
    # the driver's iterator fetches the pages transparently too
    it = session.execute(SimpleStatement(f"SELECT c FROM {one_partition} WHERE p = 1", fetch_size=FETCH))
    assert [r.c for r in it] == list(range(N))


def test_single_partition_pages_desc(session, one_partition):
    got, _ = fetch_all(session, f"SELECT c FROM {one_partition} WHERE p = 1 ORDER BY c DESC")
    assert [r.c for r in got] == list(range(N - 1, -1, -1))


def test_single_partition_slice_pages(session, one_partition):
    got, _ = fetch_all(session, f"SELECT c FROM {one_partition} WHERE p = 1 AND c >= 100 AND c < 333")
    assert [r.c for r in got] == list(range(100, 333))


def test_pages_with_limit(session, one_partition):
    got, _ = fetch_all(session, f"SELECT c FROM {one_partition} WHERE p = 1 LIMIT 50")
    assert [r.c for r in got] == list(range(50))


def test_full_table_scan_pages(session, many_partitions):
    got, pages = fetch_all(session, f"SELECT p, c, v FROM {many_partitions}")
    keys = [(r.p, r.c) for r in got]
    assert len(keys) == 1000 and len(set(keys)) == 1000
    expected = sorted(((p, c) for p in range(100) for c in range(10)), key=lambda k: (murmur(k[0]), k[1]))
    assert keys == expected
    assert pages >= 1000 // FETCH


def test_full_table_scan_pages_prepared(session, many_partitions):
    ps = session.prepare(f"SELECT p, c FROM {many_partitions}")
    ps.fetch_size = FETCH
    got, pages = fetch_all(session, ps)
    assert len(got) == 1000 and len(set((r.p, r.c) for r in got)) == 1000
    assert pages > 1


def test_paging_distinct_and_per_partition_limit(session, many_partitions):
    got, _ = fetch_all(session, f"SELECT DISTINCT p FROM {many_partitions}")
    assert [r.p for r in got] == sorted(range(100), key=murmur)
    got, _ = fetch_all(session, f"SELECT p, c FROM {many_partitions} PER PARTITION LIMIT 3")
    assert sorted((r.p, r.c) for r in got) == [(p, c) for p in range(100) for c in range(3)]


def test_paging_with_in(session, many_partitions):
    got, _ = fetch_all(session, f"SELECT p, c FROM {many_partitions} WHERE p IN (3, 5, 7, 9)", fetch_size=3)
    assert sorted((r.p, r.c) for r in got) == [(p, c) for p in (3, 5, 7, 9) for c in range(10)]


def test_paging_token_range(session, many_partitions):
    got, _ = fetch_all(session, f"SELECT p, c FROM {many_partitions} WHERE token(p) > 0")
    exp = sorted(((p, c) for p in range(100) if murmur(p) > 0 for c in range(10)),
                 key=lambda k: (murmur(k[0]), k[1]))
    assert [(r.p, r.c) for r in got] == exp


def test_count_over_pages(session, one_partition, many_partitions):
    rs = session.execute(SimpleStatement(f"SELECT count(*) FROM {many_partitions}", fetch_size=FETCH))
    assert [r[0] for r in rs] == [1000]
    rs = session.execute(SimpleStatement(f"SELECT count(*) FROM {one_partition} WHERE p = 1", fetch_size=FETCH))
    assert [r[0] for r in rs] == [N]


def test_manual_paging_state(session, one_partition):
    q = SimpleStatement(f"SELECT c FROM {one_partition} WHERE p = 1", fetch_size=100)
    first = session.execute(q)
    assert [r.c for r in first.current_rows] == list(range(100))
    state = first.paging_state
    assert state
    second = session.execute(q, paging_state=state)
    assert [r.c for r in second.current_rows] == list(range(100, 200))
    # the same paging state can be used again
    again = session.execute(q, paging_state=state)
    assert [r.c for r in again.current_rows] == list(range(100, 200))


def test_paging_skips_deleted_rows(session, ks):
    session.execute(f"CREATE TABLE {ks}.pdel (p int, c int, PRIMARY KEY (p, c))")
    ins = session.prepare(f"INSERT INTO {ks}.pdel (p, c) VALUES (0, ?)")
    execute_concurrent_with_args(session, ins, [(c,) for c in range(300)], concurrency=32)
    session.execute(f"DELETE FROM {ks}.pdel WHERE p = 0 AND c >= 10 AND c < 250")
    for c in range(260, 300, 2):
        session.execute(f"DELETE FROM {ks}.pdel WHERE p = 0 AND c = {c}")
    got, _ = fetch_all(session, f"SELECT c FROM {ks}.pdel WHERE p = 0")
    assert [r.c for r in got] == list(range(10)) + list(range(250, 260)) + list(range(261, 300, 2))
