"""Snapshots, incremental backups and restores through a real node: `cairn nodetool`, the
files on disk, and rows read back with the Python driver. The procedures of
docs/operations.md are run as written: the shell blocks marked `<!-- test: NAME -->` are
extracted and run by bash, with `cairn` and `cqlsh` pointing at the test's node."""

import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest
from cassandra.concurrent import execute_concurrent_with_args

from conftest import REPO, cairn_bin, make_cluster
from helpers import nodetool

DOC = REPO / "docs" / "operations.md"


def doc_blocks():
    """{name: shell text} of the blocks of docs/operations.md marked for testing."""
    text = DOC.read_text()
    blocks = dict(re.findall(r"<!-- test: ([\w-]+) -->\n```sh\n(.*?)```", text, re.S))
    assert {"backup-node", "ship-backups", "restore-table", "restore-keyspace-function",
            "restore-keyspace", "restore-node"} <= set(blocks), sorted(blocks)
    return blocks


def cqlsh_path():
    p = Path(sys.executable).parent / "cqlsh"
    return str(p) if p.exists() else shutil.which("cqlsh")


def run_doc(node, names, **env):
    """Runs the named blocks of docs/operations.md, in order, in one bash, against `node`."""
    blocks = doc_blocks()
    prelude = f"""
cairn() {{ if [ "$1" = nodetool ]; then shift; "{cairn_bin()}" nodetool -p {node.api_port} "$@"; else "{cairn_bin()}" "$@"; fi; }}
cqlsh() {{ "{cqlsh_path()}" {node.host} {node.port} --no-color "$@"; }}
"""
    script = prelude + "\n".join(blocks[n] for n in names)
    full_env = dict(os.environ, HOME=str(node.data_dir.parent), DATA=str(node.data_dir / "data"), **env)
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True,
                          timeout=300, env=full_env)
    assert proc.returncode == 0, f"{names} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout




@pytest.fixture(scope="module")
def bnode(node_factory):
    """A node of its own: these tests drop, truncate and restore."""
    return node_factory("backups")


@pytest.fixture(scope="module")
def bsession(bnode):
    c = make_cluster(bnode)
    s = c.connect()
    yield s
    c.shutdown()


def table_dirs(node, ks, table):
    return sorted((node.data_dir / "data" / ks).glob(f"{table}-*"))


def live_dir(node, ks, table):
    [d] = [d for d in table_dirs(node, ks, table) if (d / "schema.cairn").exists()]
    return d


def fill(session, table, n, start=0):
    ins = session.prepare(f"INSERT INTO {table} (p, c, v) VALUES (?, ?, ?)")
    execute_concurrent_with_args(session, ins, [(i % 50, i, f"v{i}") for i in range(start, start + n)],
                                 concurrency=32, raise_on_first_error=True)


def content(session, table):
    return sorted(tuple(r) for r in session.execute(f"SELECT p, c, v FROM {table}"))


def new_keyspace(session, ks):
    session.execute(f"DROP KEYSPACE IF EXISTS {ks}")
    session.execute(f"CREATE KEYSPACE {ks} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}")


def test_drop_table_then_restore_from_the_automatic_snapshot(bnode, bsession):
    s = bsession
    new_keyspace(s, "br_drop")
    s.execute("CREATE TABLE br_drop.t (p int, c int, v text, gone int, PRIMARY KEY (p, c))")
    fill(s, "br_drop.t", 400)
    nodetool(bnode, "flush", "br_drop", "t")
    s.execute("ALTER TABLE br_drop.t DROP gone")
    s.execute("ALTER TABLE br_drop.t ADD extra text")
    fill(s, "br_drop.t", 300, start=400)            # in the memtable: the snapshot flushes it
    before = content(s, "br_drop.t")
    assert len(before) == 700

    s.execute("DROP TABLE br_drop.t")
    out = nodetool(bnode, "listsnapshots").stdout
    assert re.search(r"^dropped-\d+-t +br_drop +t ", out, re.M), out
    run_doc(bnode, ["restore-table"], KS="br_drop", TABLE="t")
    assert content(s, "br_drop.t") == before
    # The table came back with its columns (the dropped one dropped again).
    cols = {r.column_name for r in s.execute(
        "SELECT column_name FROM system_schema.columns WHERE keyspace_name = 'br_drop' AND table_name = 't'")}
    assert cols == {"p", "c", "v", "extra"}


def test_truncate_then_restore_from_the_automatic_snapshot(bnode, bsession):
    s = bsession
    new_keyspace(s, "br_trunc")
    s.execute("CREATE TABLE br_trunc.t (p int, c int, v text, PRIMARY KEY (p, c))")
    fill(s, "br_trunc.t", 500)
    before = content(s, "br_trunc.t")
    s.execute("TRUNCATE br_trunc.t")
    assert content(s, "br_trunc.t") == []
    table_dir = live_dir(bnode, "br_trunc", "t")
    [snap] = (table_dir / "snapshots").glob("truncated-*-t")
    for f in snap.glob("ca-*"):
        shutil.copy(f, table_dir / "upload")
    assert nodetool(bnode, "refresh", "br_trunc", "t").stdout == ""
    assert content(s, "br_trunc.t") == before
    assert not list((table_dir / "upload").glob("ca-*"))


def disk_bytes(path):
    """Bytes allocated under `path`, each file counted once however many links it has."""
    seen, total = set(), 0
    for root, _, files in os.walk(path):
        for f in files:
            st = os.lstat(os.path.join(root, f))
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
    return total


def test_snapshot_under_load_survives_compaction_and_clearing_frees_the_space(bnode, bsession):
    s = bsession
    new_keyspace(s, "br_load")
    s.execute("CREATE TABLE br_load.t (p int, c int, v text, PRIMARY KEY (p, c))")
    fill(s, "br_load.t", 2000)
    acknowledged = set()
    stop = threading.Event()
    errors = []

    def writer():
        ins = s.prepare("INSERT INTO br_load.t (p, c, v) VALUES (?, ?, ?)")
        i = 100_000
        while not stop.is_set():
            try:
                s.execute(ins, (i % 50, i, "w" * 200))
                acknowledged.add(i)
                i += 1
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)
                return

    t = threading.Thread(target=writer)
    t.start()
    try:
        while len(acknowledged) < 500:
            stop.wait(0.01)
        before_snapshot = set(acknowledged)
        out = nodetool(bnode, "snapshot", "-t", "under-load", "br_load").stdout
        assert out == ("Requested creating snapshot(s) for [br_load] with snapshot name [under-load] "
                       "and options {skipFlush=false}\nSnapshot directory: under-load\n")
        while len(acknowledged) < len(before_snapshot) + 500:
            stop.wait(0.01)
    finally:
        stop.set()
        t.join()
    assert not errors, errors
    table_dir = live_dir(bnode, "br_load", "t")
    snap = table_dir / "snapshots" / "under-load"
    shared = {f.name for f in snap.glob("ca-*")}
    assert shared and (snap / "manifest.json").exists() and (snap / "schema.cql").exists()

    # Compaction replaces the sstables the snapshot links; the snapshot keeps them whole.
    nodetool(bnode, "compact", "br_load", "t")
    live = {f.name for f in table_dir.glob("ca-*")}
    assert not shared & live
    stats = nodetool(bnode, "tablestats", "br_load.t").stdout
    true_size = int(re.search(r"Space used by snapshots \(total\): (\d+)", stats).group(1))
    assert true_size >= sum((snap / n).stat().st_size for n in shared)
    with urllib.request.urlopen(f"http://{bnode.host}:{bnode.metrics_port}/metrics", timeout=10) as r:
        page = r.read().decode()
    metric = re.search(r'^scylla_column_family_snapshots_size\{[^}]*ks="br_load",[^}]*cf="t"[^}]*\} (\d+)$',
                       page, re.M)
    assert metric and int(metric.group(1)) == true_size, metric

    # The snapshot holds every row acknowledged before it was asked for: load it into a copy.
    s.execute("CREATE TABLE br_load.copy (p int, c int, v text, PRIMARY KEY (p, c))")
    copy_dir = live_dir(bnode, "br_load", "copy")
    for f in snap.glob("ca-*"):
        shutil.copy(f, copy_dir / "upload")
    nodetool(bnode, "refresh", "br_load", "copy")
    in_copy = {r.c for r in s.execute("SELECT c FROM br_load.copy")}
    assert before_snapshot <= in_copy

    # Clearing frees what only the snapshot held.
    before = disk_bytes(table_dir)
    out = nodetool(bnode, "clearsnapshot", "-t", "under-load").stdout
    assert out == "Requested clearing snapshot(s) for [all keyspaces] with snapshot name [under-load]\n"
    after = disk_bytes(table_dir)
    assert not snap.exists()
    assert before - after >= true_size * 0.9, (before, after, true_size)
    assert "Space used by snapshots (total): 0\n" in nodetool(bnode, "tablestats", "br_load.t").stdout


def test_incremental_backups_collect_exactly_the_flushed_sstables(bnode, bsession, tmp_path):
    s = bsession
    new_keyspace(s, "br_inc")
    # No compaction: the test counts the flushed sstables.
    s.execute("CREATE TABLE br_inc.t (p int, c int, v text, PRIMARY KEY (p, c)) "
              "WITH compaction = {'class': 'SizeTieredCompactionStrategy', 'enabled': 'false'}")
    fill(s, "br_inc.t", 100)
    nodetool(bnode, "flush", "br_inc", "t")
    assert nodetool(bnode, "statusbackup").stdout == "not running\n"
    nodetool(bnode, "enablebackup")
    assert nodetool(bnode, "statusbackup").stdout == "running\n"
    try:
        table_dir = live_dir(bnode, "br_inc", "t")
        before = {f.name for f in table_dir.glob("ca-*-Data.db")}
        for i in range(3):
            fill(s, "br_inc.t", 100, start=1000 * (i + 1))
            nodetool(bnode, "flush", "br_inc", "t")
        flushed = {f.name for f in table_dir.glob("ca-*-Data.db")} - before
        assert len(flushed) == 3
        backups = table_dir / "backups"
        assert {f.name for f in backups.glob("ca-*-Data.db")} == flushed
        assert len(list(backups.iterdir())) == 3 * 8
        # Shipping them (as docs/operations.md does) empties backups/.
        run_doc(bnode, ["ship-backups"], BACKUP=str(tmp_path))
        assert not list(backups.glob("ca-*"))
        shipped = tmp_path / "incremental" / "br_inc" / table_dir.name
        assert {f.name for f in shipped.glob("ca-*-Data.db")} == flushed
    finally:
        nodetool(bnode, "disablebackup")
    fill(s, "br_inc.t", 100, start=9000)
    nodetool(bnode, "flush", "br_inc", "t")
    assert not list((table_dir / "backups").glob("ca-*"))


def test_corrupt_or_foreign_uploads_are_refused_whole(bnode, bsession):
    s = bsession
    new_keyspace(s, "br_bad")
    s.execute("CREATE TABLE br_bad.t (p int, c int, v text, PRIMARY KEY (p, c))")
    s.execute("CREATE TABLE br_bad.other (k text PRIMARY KEY, x blob)")
    for i in range(2):
        fill(s, "br_bad.t", 300, start=i * 1000)
        nodetool(bnode, "flush", "br_bad", "t")
    nodetool(bnode, "snapshot", "-t", "good", "-kt", "br_bad.t")
    s.execute("CREATE TABLE br_bad.dst (p int, c int, v text, PRIMARY KEY (p, c))")
    snap = live_dir(bnode, "br_bad", "t") / "snapshots" / "good"
    dst = live_dir(bnode, "br_bad", "dst") / "upload"

    def upload(target=dst):
        for f in target.iterdir():
            f.unlink()
        for f in snap.iterdir():
            shutil.copy(f, target)

    upload()
    data_files = sorted(dst.glob("ca-*-Data.db"))
    victim = data_files[-1]
    raw = bytearray(victim.read_bytes())
    raw[len(raw) // 2] ^= 0x20
    victim.write_bytes(bytes(raw))
    out = nodetool(bnode, "refresh", "br_bad", "dst", ok=False)
    assert out.returncode == 2
    assert f"corruption in {victim} at offset " in out.stderr and "checksum mismatch" in out.stderr, out.stderr
    assert content(s, "br_bad.dst") == []
    assert (dst / data_files[0].name).exists(), "the upload is left whole"

    upload()
    (dst / "nb-1-big-Data.db").write_bytes(b"cassandra's")
    out = nodetool(bnode, "refresh", "br_bad", "dst", ok=False)
    assert out.returncode == 2
    assert "nb-1-big-Data.db: not a component of a Cairn sstable" in out.stderr, out.stderr
    assert content(s, "br_bad.dst") == []

    other = live_dir(bnode, "br_bad", "other") / "upload"
    upload(other)
    out = nodetool(bnode, "refresh", "br_bad", "other", ok=False)
    assert out.returncode == 2
    assert "was not written for a table like br_bad.other" in out.stderr, out.stderr
    assert list(s.execute("SELECT * FROM br_bad.other")) == []

    (dst / "nb-1-big-Data.db").unlink()
    nodetool(bnode, "refresh", "br_bad", "dst")
    assert content(s, "br_bad.dst") == content(s, "br_bad.t")


def test_nodetool_snapshot_errors_and_listing(bnode, bsession):
    s = bsession
    new_keyspace(s, "br_list")
    s.execute("CREATE TABLE br_list.t (p int, c int, v text, PRIMARY KEY (p, c))")
    fill(s, "br_list.t", 10)
    nodetool(bnode, "snapshot", "-t", "one", "br_list")
    again = nodetool(bnode, "snapshot", "-t", "one", "br_list", ok=False)
    assert again.returncode == 2 and again.stderr.strip() == "error: Snapshot one already exists."
    bad = nodetool(bnode, "snapshot", "-t", "no/slash", "br_list", ok=False)
    assert bad.returncode == 2 and "invalid snapshot name" in bad.stderr
    missing = nodetool(bnode, "snapshot", "-t", "x", "nosuchks", ok=False)
    assert missing.returncode == 1 and "Keyspace [nosuchks] does not exist." in missing.stderr
    out = nodetool(bnode, "snapshot", "-t", "two", "--ttl", "1h", "-kt", "br_list.t").stdout
    assert out.startswith("Requested creating snapshot(s) for [br_list.t] with snapshot name [two] "
                          "and options {skipFlush=false, ttl=1h}\n")
    listing = nodetool(bnode, "listsnapshots").stdout
    lines = listing.splitlines()
    assert lines[0] == "Snapshot Details: "
    assert lines[1].split() == ["Snapshot", "name", "Keyspace", "name", "Column", "family", "name",
                                "True", "size", "Size", "on", "disk", "Creation", "time", "Expiration", "time"]
    one = next(l for l in lines if l.startswith("one "))
    two = next(l for l in lines if l.startswith("two "))
    assert re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z\s*$", one), one
    assert len(re.findall(r"\d{4}-\d\d-\d\dT", two)) == 2, two
    assert re.search(r"\nTotal TrueDiskSpaceUsed: [\d.]+ (bytes|KiB|MiB|GiB)\n\n$", listing), listing
    no_ttl = nodetool(bnode, "listsnapshots", "-nt").stdout
    assert "\none " in no_ttl and "\ntwo " not in no_ttl
    assert nodetool(bnode, "clearsnapshot", ok=False).stderr.strip() == "error: Specify snapshot name or --all"
    nodetool(bnode, "clearsnapshot", "--all", "br_list")
    assert "br_list" not in nodetool(bnode, "listsnapshots").stdout


def test_documented_node_backup_and_restores(bnode, bsession, node_factory, tmp_path):
    """docs/operations.md as written: back a node up, restore a dropped keyspace on it, and
    restore the whole copy onto a new node."""
    s = bsession
    new_keyspace(s, "br_doc")
    s.execute("CREATE TABLE br_doc.a (p int, c int, v text, PRIMARY KEY (p, c))")
    s.execute("CREATE TABLE br_doc.b (p int, c int, v text, old int, PRIMARY KEY (p, c))")
    s.execute("CREATE TABLE br_doc.empty (p int PRIMARY KEY)")
    fill(s, "br_doc.a", 300)
    fill(s, "br_doc.b", 200)
    s.execute("ALTER TABLE br_doc.b DROP old")
    fill(s, "br_doc.b", 100, start=500)
    want = {t: content(s, f"br_doc.{t}") for t in ("a", "b")}
    backup = tmp_path / "backup"

    run_doc(bnode, ["backup-node"], BACKUP=str(backup))
    assert (backup / "br_doc" / "keyspace.cql").exists()
    assert not list(backup.glob("system*"))
    assert "backup-" not in nodetool(bnode, "listsnapshots").stdout

    # A keyspace dropped by mistake comes back from the copy.
    s.execute("DROP KEYSPACE br_doc")
    run_doc(bnode, ["restore-keyspace-function", "restore-keyspace"], BACKUP=str(backup), KS="br_doc")
    for t, rows_ in want.items():
        assert content(s, f"br_doc.{t}") == rows_

    # A new node gets every keyspace of the copy.
    fresh = node_factory("restored")
    run_doc(fresh, ["restore-keyspace-function", "restore-node"], BACKUP=str(backup))
    c = make_cluster(fresh)
    try:
        s2 = c.connect()
        for t, rows_ in want.items():
            assert content(s2, f"br_doc.{t}") == rows_
        assert list(s2.execute("SELECT * FROM br_doc.empty")) == []
    finally:
        c.shutdown()
