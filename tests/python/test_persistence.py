"""Data surviving a restart: clean stop (Ctrl-C) and SIGKILL; schema, rows, tombstones, options."""

import pytest
from cassandra.concurrent import execute_concurrent_with_args

from conftest import make_cluster
from helpers import rows, tuples

KS = "persist"


@pytest.fixture(scope="module")
def pnode(node_factory):
    """A node of its own, so restarting it does not disturb the other modules."""
    return node_factory("persist")


def connect(n):
    c = make_cluster(n)
    return c, c.connect()


def write_dataset(s, tag):
    s.execute(f"CREATE KEYSPACE IF NOT EXISTS {KS} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}")
    t = f"{KS}.data_{tag}"
    s.execute(f"CREATE TABLE {t} (p int, c int, v text, s int static, PRIMARY KEY (p, c)) "
              "WITH CLUSTERING ORDER BY (c DESC) AND gc_grace_seconds = 1234 "
              "AND compaction = {'class': 'LeveledCompactionStrategy'} "
              "AND compression = {'class': 'ZstdCompressor'}")
    ins = s.prepare(f"INSERT INTO {t} (p, c, v) VALUES (?, ?, ?)")
    execute_concurrent_with_args(s, ins, [(p, c, f"{tag}-{p}-{c}") for p in range(20) for c in range(50)],
                                 concurrency=32, raise_on_first_error=True)
    s.execute(f"UPDATE {t} SET s = 42 WHERE p = 0")
    s.execute(f"DELETE FROM {t} WHERE p = 1")                          # partition tombstone
    s.execute(f"DELETE FROM {t} WHERE p = 2 AND c >= 10 AND c < 40")   # range tombstone
    s.execute(f"DELETE FROM {t} WHERE p = 3 AND c = 7")                # row tombstone
    s.execute(f"DELETE v FROM {t} WHERE p = 4 AND c = 8")               # cell tombstone
    s.execute(f"ALTER TABLE {t} ADD extra int")
    s.execute(f"UPDATE {t} SET extra = 5 WHERE p = 5 AND c = 5")
    s.execute(f"CREATE TABLE {KS}.dropped_{tag} (k int PRIMARY KEY)")
    s.execute(f"DROP TABLE {KS}.dropped_{tag}")
    return t


def check_dataset(c, s, t, tag):
    tab = t.split(".")[1]
    tm = c.metadata.keyspaces[KS].tables[tab]
    assert [col.is_reversed for col in tm.clustering_key] == [True]
    assert tm.options["gc_grace_seconds"] == 1234
    assert tm.options["compaction"]["class"].endswith("LeveledCompactionStrategy")
    assert tm.options["compression"]["class"].endswith("ZstdCompressor")
    assert set(tm.columns) == {"p", "c", "v", "s", "extra"}
    assert f"dropped_{tag}" not in c.metadata.keyspaces[KS].tables
    got = {(r.p, r.c): (r.v, r.s, r.extra) for r in s.execute(f"SELECT p, c, v, s, extra FROM {t}")}
    exp = {}
    for p in range(20):
        for c_ in range(50):
            if p == 1 or (p == 2 and 10 <= c_ < 40) or (p == 3 and c_ == 7):
                continue
            v = None if (p, c_) == (4, 8) else f"{tag}-{p}-{c_}"
            exp[(p, c_)] = (v, 42 if p == 0 else None, 5 if (p, c_) == (5, 5) else None)
    assert got == exp
    assert [r.c for r in s.execute(f"SELECT c FROM {t} WHERE p = 2")] == list(range(49, 39, -1)) + list(range(9, -1, -1))


def test_clean_restart(pnode):
    c, s = connect(pnode)
    try:
        t = write_dataset(s, "clean")
        check_dataset(c, s, t, "clean")
    finally:
        c.shutdown()
    rc = pnode.stop()
    assert rc == 0, f"clean stop exited with {rc}:\n{pnode.log_tail()}"
    pnode.start()
    c, s = connect(pnode)
    try:
        check_dataset(c, s, t, "clean")
    finally:
        c.shutdown()


def test_sigkill_restart(pnode):
    c, s = connect(pnode)
    try:
        t = write_dataset(s, "kill")
        # the last acknowledged write before the kill
        s.execute(f"INSERT INTO {KS}.data_kill (p, c, v) VALUES (99, 0, 'last')")
    finally:
        c.shutdown()
    pnode.kill()
    pnode.start()
    c, s = connect(pnode)
    try:
        assert tuples(s, f"SELECT v FROM {KS}.data_kill WHERE p = 99") == [("last",)]
        s.execute(f"DELETE FROM {KS}.data_kill WHERE p = 99")
        check_dataset(c, s, t, "kill")
        # the earlier (clean) dataset is still intact too
        check_dataset(c, s, f"{KS}.data_clean", "clean")
    finally:
        c.shutdown()


def test_repeated_kill_restart_keeps_writes(pnode):
    for i in range(3):
        c, s = connect(pnode)
        try:
            s.execute(f"CREATE TABLE IF NOT EXISTS {KS}.counter_like (k int PRIMARY KEY, v int)")
            s.execute(f"INSERT INTO {KS}.counter_like (k, v) VALUES ({i}, {i})")
        finally:
            c.shutdown()
        pnode.restart(kill=True)
    c, s = connect(pnode)
    try:
        assert sorted(tuples(s, f"SELECT k, v FROM {KS}.counter_like")) == [(0, 0), (1, 1), (2, 2)]
    finally:
        c.shutdown()


def test_prepared_statement_survives_restart(pnode):
    c, s = connect(pnode)
    try:
        s.execute(f"CREATE TABLE IF NOT EXISTS {KS}.prep (k int PRIMARY KEY, v int)")
        ins = s.prepare(f"INSERT INTO {KS}.prep (k, v) VALUES (?, ?)")
        s.execute(ins, (1, 1))
        pnode.restart()
        # the driver reconnects; the server either still knows the id or answers UNPREPARED
        # and the driver re-prepares
        import time
        deadline = time.monotonic() + 20
        while True:
            try:
                s.execute(ins, (2, 2))
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        assert sorted(tuples(s, f"SELECT k, v FROM {KS}.prep")) == [(1, 1), (2, 2)]
    finally:
        c.shutdown()
