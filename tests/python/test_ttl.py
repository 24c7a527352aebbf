"""TTL expiry: rows and cells written with a short TTL are gone after it passes."""

import time

import pytest

from helpers import rows, tuples


@pytest.fixture(scope="module")
def expired(session, ks):
    """Writes every TTL case once, then waits for the 1 s TTLs to pass (one sleep for the module)."""
    t = f"{ks}.ttl"
    session.execute(f"CREATE TABLE {t} (p int, c int, v text, w int, PRIMARY KEY (p, c))")
    session.execute(f"CREATE TABLE {ks}.ttl_default (p int PRIMARY KEY, v text) WITH default_time_to_live = 1")
    # 1: whole row with TTL
    session.execute(f"INSERT INTO {t} (p, c, v, w) VALUES (1, 1, 'a', 1) USING TTL 1")
    # 2: row without TTL, one cell updated with TTL
    session.execute(f"INSERT INTO {t} (p, c, v, w) VALUES (2, 1, 'a', 1)")
    session.execute(f"UPDATE {t} USING TTL 1 SET v = 'b' WHERE p = 2 AND c = 1")
    # 3: UPDATE-created row (no row marker) whose only cell expires
    session.execute(f"UPDATE {t} USING TTL 1 SET v = 'c' WHERE p = 3 AND c = 1")
    # 4: row with TTL, one cell rewritten without TTL keeps the row alive
    session.execute(f"INSERT INTO {t} (p, c, v, w) VALUES (4, 1, 'a', 1) USING TTL 1")
    session.execute(f"UPDATE {t} SET w = 2 WHERE p = 4 AND c = 1")
    # 5: long TTL survives
    session.execute(f"INSERT INTO {t} (p, c, v) VALUES (5, 1, 'long') USING TTL 100000")
    # 6: prepared with a bound TTL, many rows in one partition
    ins = session.prepare(f"INSERT INTO {t} (p, c, v) VALUES (6, ?, 'x') USING TTL ?")
    for c in range(20):
        session.execute(ins, (c, 1 if c % 2 else 100000))
    # 7: TTL 0 means no TTL
    session.execute(f"INSERT INTO {t} (p, c, v) VALUES (7, 1, 'forever') USING TTL 0")
    # table default TTL
    session.execute(f"INSERT INTO {ks}.ttl_default (p, v) VALUES (1, 'dflt')")
    session.execute(f"INSERT INTO {ks}.ttl_default (p, v) VALUES (2, 'override') USING TTL 100000")
    default_ttl = session.execute(f"SELECT ttl(v) FROM {ks}.ttl_default WHERE p = 1").one()
    time.sleep(2.2)
    return t, default_ttl


def test_row_with_ttl_expires(session, expired):
    t, _ = expired
    assert rows(session, f"SELECT * FROM {t} WHERE p = 1") == []


def test_cell_ttl_expires_row_stays(session, expired):
    t, _ = expired
    assert tuples(session, f"SELECT v, w FROM {t} WHERE p = 2") == [(None, 1)]


def test_updated_row_disappears_when_its_cell_expires(session, expired):
    t, _ = expired
    assert rows(session, f"SELECT * FROM {t} WHERE p = 3") == []


def test_row_kept_alive_by_non_ttl_cell(session, expired):
    t, _ = expired
    assert tuples(session, f"SELECT p, c, v, w FROM {t} WHERE p = 4") == [(4, 1, None, 2)]


def test_long_ttl_and_ttl_zero_survive(session, expired):
    t, _ = expired
    assert tuples(session, f"SELECT v FROM {t} WHERE p = 5") == [("long",)]
    assert tuples(session, f"SELECT v, ttl(v) FROM {t} WHERE p = 7") == [("forever", None)]


def test_partial_partition_expiry(session, expired):
    t, _ = expired
    assert [r.c for r in session.execute(f"SELECT c FROM {t} WHERE p = 6")] == list(range(0, 20, 2))
    assert session.execute(f"SELECT count(*) FROM {t} WHERE p = 6").one()[0] == 10


def test_expired_not_in_full_scan(session, expired):
    t, _ = expired
    got = sorted(set(r.p for r in session.execute(f"SELECT p FROM {t}")))
    assert got == [2, 4, 5, 6, 7]


def test_table_default_ttl(session, ks, expired):
    _, default_ttl = expired
    assert default_ttl is not None and 0 <= default_ttl[0] <= 1
    assert tuples(session, f"SELECT p, v FROM {ks}.ttl_default") == [(2, "override")]
