"""Operations through a real node: CQL traffic from the driver shows up in Prometheus metrics
(parsed with a small strict parser) and in `cairn nodetool` output, as ScyllaDB's do; the admin
faces' bearer tokens, through `cairn nodetool` and a Prometheus-style scrape."""

import os
import re
import subprocess
import urllib.error
import urllib.request

from conftest import cairn_bin, serve_refused

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)')


def scrape(node, token=None):
    """The /metrics page as {(name, frozenset(labels)): value}; every line must parse. With
    `token`, sent as Prometheus sends its `authorization: credentials_file:`."""
    req = urllib.request.Request(f"http://{node.host}:{node.metrics_port}/metrics")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = r.read().decode()
    samples = {}
    for line in text.splitlines():
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            continue
        m = SAMPLE.match(line)
        assert m, f"unparsable line: {line!r}"
        name, _, labels, value = m.groups()
        pairs = []
        rest = labels or ""
        while rest:
            lm = LABEL.match(rest)
            assert lm, f"bad labels in {line!r}"
            pairs.append((lm.group(1), lm.group(2)))
            rest = rest[lm.end():]
        key = (name, frozenset(pairs))
        assert key not in samples, f"duplicate series {line!r}"
        samples[key] = float(value)
    return samples


def value(samples, name, **labels):
    want = set(labels.items())
    found = [v for (n, ls), v in samples.items() if n == name and want <= ls]
    assert len(found) == 1, f"{name} {labels}: {found}"
    return found[0]


def nodetool(node, *args):
    out = subprocess.run([str(cairn_bin()), "nodetool", "-p", str(node.api_port), *args],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_cql_traffic_moves_metrics_and_nodetool(node, session, ks, tname):
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (p int, c int, v text, PRIMARY KEY (p, c))")
    before = scrape(node)
    assert value(before, "scylla_column_family_write_latency_count", ks=ks, cf=tname) == 0
    ins = session.prepare(f"INSERT INTO {t} (p, c, v) VALUES (?, ?, ?)")
    for p in range(10):
        for c in range(p * 10 + 1):
            session.execute(ins, (p, c, "x" * 20))
    sel = session.prepare(f"SELECT * FROM {t} WHERE p = ?")
    for p in range(10):
        assert len(list(session.execute(sel, (p,)))) == p * 10 + 1

    after = scrape(node)
    writes = sum(p * 10 + 1 for p in range(10))
    assert value(after, "scylla_column_family_write_latency_count", ks=ks, cf=tname) == writes
    assert value(after, "scylla_column_family_read_latency_count", ks=ks, cf=tname) == 10
    assert value(after, "scylla_column_family_bytes_written", ks=ks, cf=tname, kind="commitlog") > 0
    assert value(after, "scylla_database_total_writes") >= writes
    # The CQL transport's counters: every statement above was a request, most ran inline.
    served = value(after, "scylla_transport_requests_served") - value(before, "scylla_transport_requests_served")
    assert served >= writes + 10
    inline = value(after, "scylla_transport_requests_inline") - value(before, "scylla_transport_requests_inline")
    assert inline >= writes
    assert value(after, "scylla_transport_current_connections") >= 1
    assert value(after, "scylla_transport_tls_connections") == 0
    assert value(after, "scylla_column_family_live_sstable", ks=ks, cf=tname) == 0

    assert nodetool(node, "flush", ks, tname) == ""
    stats = nodetool(node, "tablestats", f"{ks}.{tname}")
    assert f"\t\tTable: {tname}\n" in stats
    assert "\t\tSSTable count: 1\n" in stats
    assert f"\t\tLocal write count: {writes}\n" in stats
    assert "\t\tLocal read count: 10\n" in stats

    flushed = scrape(node)
    assert value(flushed, "scylla_column_family_live_sstable", ks=ks, cf=tname) == 1
    assert value(flushed, "scylla_column_family_estimated_partition_size_count", ks=ks, cf=tname) == 10

    hist = nodetool(node, "tablehistograms", ks, tname).splitlines()
    assert hist[0] == f"{ks}/{tname} histograms"
    rows = {line.split()[0]: line.split()[1:] for line in hist[3:10]}
    # Partition sizes: the smallest partition has 1 row, the largest 91.
    assert float(rows["Max"][3]) > 20 * float(rows["Min"][3])
    assert float(rows["Max"][4]) >= 91

    status = nodetool(node, "status").splitlines()
    assert status[0] == "Datacenter: datacenter1"
    assert status[5].split()[:2] == ["UN", "127.0.0.1"]
    info = dict(line.split(":", 1) for line in nodetool(node, "info").splitlines())
    assert info["Native Transport active"].strip() == "true"
    # The node's vnodes: counted by default, every one with -T (as Cassandra prints them).
    count = int({k.strip(): v for k, v in info.items()}["Token"].split()[-2])
    tokens = [line.split(":", 1)[1].strip() for line in nodetool(node, "info", "-T").splitlines()
              if line.startswith("Token ")]
    assert len(tokens) == count > 1
    assert all(t.lstrip("-").isdigit() for t in tokens)


def test_row_cache_serves_repeated_reads_and_shows_in_metrics(node, session, ks, tname):
    """The row cache is on by default: a partition read once from its sstable is read again
    from the cache (no sstable read, counted as a hit), a write after it is seen, a flush
    merges into it, and ScyllaDB's `scylla_cache_*` figures move accordingly."""
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (p int, c int, v text, PRIMARY KEY (p, c))")
    ins = session.prepare(f"INSERT INTO {t} (p, c, v) VALUES (?, ?, ?)")
    for c in range(20):
        session.execute(ins, (1, c, f"v{c}"))
    assert nodetool(node, "flush", ks, tname) == ""
    sel = session.prepare(f"SELECT c, v FROM {t} WHERE p = ? LIMIT 5")
    first5 = [(c, f"v{c}") for c in range(5)]

    before = scrape(node)
    assert 0 < value(before, "scylla_cache_bytes_total")
    assert [tuple(r) for r in session.execute(sel, (1,))] == first5
    cold = scrape(node)
    assert [tuple(r) for r in session.execute(sel, (1,))] == first5
    warm = scrape(node)

    def delta(a, b, name):
        return value(b, name) - value(a, name)

    assert delta(before, cold, "scylla_cache_reads") == 1
    assert delta(before, cold, "scylla_cache_reads_with_misses") == 1
    assert delta(before, cold, "scylla_cache_row_insertions") >= 5
    assert delta(cold, warm, "scylla_cache_reads") == 1
    assert delta(cold, warm, "scylla_cache_reads_with_misses") == 0
    assert delta(cold, warm, "scylla_cache_row_hits") >= 5
    assert 0 < value(warm, "scylla_cache_bytes_used") <= value(warm, "scylla_cache_bytes_total")

    # A write lands in the memtable and is merged with the cached rows; a flush merges it
    # into the cache, which stays warm.
    session.execute(ins, (1, -1, "new"))
    assert [tuple(r) for r in session.execute(sel, (1,))] == [(-1, "new")] + first5[:4]
    assert nodetool(node, "flush", ks, tname) == ""
    flushed = scrape(node)
    assert delta(warm, flushed, "scylla_cache_rows_merged_from_memtable") >= 1
    assert [tuple(r) for r in session.execute(sel, (1,))] == [(-1, "new")] + first5[:4]
    assert delta(flushed, scrape(node), "scylla_cache_reads_with_misses") == 0

    # TRUNCATE leaves nothing of the table cached.
    session.execute(f"TRUNCATE {t}")
    assert list(session.execute(sel, (1,))) == []


def rest_post(node, path):
    req = urllib.request.Request(f"http://{node.host}:{node.api_port}{path}", method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.status


def rest_get(node, path):
    with urllib.request.urlopen(f"http://{node.host}:{node.api_port}{path}", timeout=30) as r:
        return r.read().decode()


def test_row_cache_controls(node, session, ks, tname):
    """The row cache's controls: `caching = {'enabled': 'false'}` (ScyllaDB) and Cassandra's
    sub-options round-trip and decide whether reads use the cache; `BYPASS CACHE` reads past
    it; `/lsa/compact`, `/system/drop_sstable_caches`, `/cache_service/…` and nodetool's
    `info` / `invalidaterowcache` act on it and report it."""
    t = f"{ks}.{tname}"
    session.execute(f"CREATE TABLE {t} (p int, c int, v text, PRIMARY KEY (p, c))")
    ins = session.prepare(f"INSERT INTO {t} (p, c, v) VALUES (?, ?, ?)")
    for c in range(10):
        session.execute(ins, (1, c, f"v{c}"))
    assert nodetool(node, "flush", ks, tname) == ""
    sel = session.prepare(f"SELECT c FROM {t} WHERE p = ? LIMIT 3")
    head = [(0,), (1,), (2,)]

    def caching():
        row = session.execute(
            "SELECT caching FROM system_schema.tables WHERE keyspace_name = %s AND table_name = %s",
            (ks, tname)).one()
        return dict(row.caching)

    def reads(query, *args):
        """(result, cache reads, cache reads with misses) of one statement."""
        before = scrape(node)
        result = [tuple(r) for r in session.execute(query, *args)]
        after = scrape(node)
        return (result,
                value(after, "scylla_cache_reads") - value(before, "scylla_cache_reads"),
                value(after, "scylla_cache_reads_with_misses")
                - value(before, "scylla_cache_reads_with_misses"))

    # On by default; a repeated read hits.
    assert caching() == {"keys": "ALL", "rows_per_partition": "NONE"}
    assert reads(sel, (1,)) == (head, 1, 1)
    assert reads(sel, (1,)) == (head, 1, 0)

    # BYPASS CACHE neither consults nor fills the cache, and answers the same.
    bypass = f"SELECT c FROM {t} WHERE p = 1 LIMIT 3 BYPASS CACHE"
    assert reads(bypass) == (head, 0, 0)
    assert reads(f"SELECT c FROM {t} WHERE p = 1 AND c > 0 ALLOW FILTERING BYPASS CACHE") \
        == ([(c,) for c in range(1, 10)], 0, 0)

    # The REST surface: metrics of the row cache, then each way to empty it.
    assert int(rest_get(node, "/cache_service/metrics/row/entries")) >= 1
    assert int(rest_get(node, "/cache_service/metrics/row/size")) > 0
    assert int(rest_get(node, "/cache_service/metrics/row/capacity")) >= \
        int(rest_get(node, "/cache_service/metrics/row/size"))
    hits = int(rest_get(node, "/cache_service/metrics/row/hits"))
    assert hits >= 1 and int(rest_get(node, "/cache_service/metrics/row/requests")) > hits
    info = {k.strip(): v.strip() for k, v in
            (line.split(":", 1) for line in nodetool(node, "info").splitlines())}
    row_cache = re.fullmatch(r"entries (\d+), size (.+), capacity (.+), (\d+) hits, (\d+) requests, "
                             r"([0-9.]+|NaN) recent hit rate, 0 save period in seconds",
                             info["Row Cache"])
    assert row_cache, info["Row Cache"]
    assert int(row_cache.group(1)) >= 1 and int(row_cache.group(5)) > int(row_cache.group(4)) >= 1
    # The key cache is the cached index pages: the table's one page, read once (the repeated
    # reads were the row cache's, which reads no page).
    key_cache = re.fullmatch(r"entries (\d+), size (.+), capacity (.+), (\d+) hits, (\d+) requests, "
                             r"([0-9.]+|NaN) recent hit rate, 14400 save period in seconds",
                             info["Key Cache"])
    assert key_cache, info["Key Cache"]
    assert int(key_cache.group(1)) >= 1 and int(key_cache.group(5)) >= 1
    assert int(rest_get(node, "/cache_service/metrics/key/entries")) >= 1

    evictions = value(scrape(node), "scylla_cache_row_evictions")
    assert rest_post(node, "/lsa/compact") == 200
    after = scrape(node)
    assert value(after, "scylla_cache_row_evictions") > evictions
    assert value(after, "scylla_cache_partitions") == 0
    assert reads(sel, (1,)) == (head, 1, 1)
    assert rest_post(node, "/system/drop_sstable_caches") == 200
    assert value(scrape(node), "scylla_cache_partitions") == 0
    assert value(scrape(node), "scylla_sstables_index_page_cache_bytes") == 0
    assert reads(sel, (1,)) == (head, 1, 1)
    # The next read hits: an invalidation leaves the cache ready to fill at once.
    assert reads(sel, (1,)) == (head, 1, 0)
    assert nodetool(node, "invalidaterowcache") == ""
    assert value(scrape(node), "scylla_cache_partitions") == 0
    assert reads(sel, (1,)) == (head, 1, 1)
    assert reads(sel, (1,)) == (head, 1, 0)
    assert value(scrape(node), "scylla_sstables_index_page_cache_bytes") > 0
    assert nodetool(node, "invalidatekeycache") == ""
    assert value(scrape(node), "scylla_sstables_index_page_cache_bytes") == 0

    # ScyllaDB's switch: off for the table, reads leave the cache alone and the table's
    # entries are dropped; Cassandra's sub-options are kept and shown back.
    session.execute(f"ALTER TABLE {t} WITH caching = {{'enabled': 'false', 'keys': 'ALL', "
                    f"'rows_per_partition': '10'}}")
    assert caching() == {"enabled": "false", "keys": "ALL", "rows_per_partition": "10"}
    assert value(scrape(node), "scylla_cache_partitions") == 0
    assert reads(sel, (1,)) == (head, 0, 0)
    session.execute(ins, (1, -1, "new"))
    assert nodetool(node, "flush", ks, tname) == ""
    assert reads(sel, (1,)) == ([(-1,), (0,), (1,)], 0, 0)
    describe = session.execute(f"DESCRIBE TABLE {t}").one().create_statement
    assert "'enabled': 'false'" in describe

    # Back on: reads fill the cache again and see every write.
    session.execute(f"ALTER TABLE {t} WITH caching = {{'keys': 'ALL'}}")
    assert caching() == {"keys": "ALL", "rows_per_partition": "NONE"}
    assert reads(sel, (1,)) == ([(-1,), (0,), (1,)], 1, 1)
    assert reads(sel, (1,)) == ([(-1,), (0,), (1,)], 1, 0)

    # A table created without the cache.
    session.execute(f"CREATE TABLE {t}_off (p int PRIMARY KEY, v int) "
                    f"WITH caching = {{'enabled': 'false'}}")
    session.execute(f"INSERT INTO {t}_off (p, v) VALUES (1, 1)")
    assert reads(f"SELECT v FROM {t}_off WHERE p = 1") == ([(1,)], 0, 0)


def test_admin_faces_with_bearer_tokens(node_factory, tmp_path):
    """A node whose REST API and Prometheus endpoint require their own bearer tokens: a scrape
    as Prometheus' `credentials_file` sends it, `cairn nodetool` with `--token-file` and with
    CAIRN_API_TOKEN_FILE, clear refusals without them."""
    tokens = {}
    for face in ("api", "prometheus"):
        tokens[face] = f"{face}-0123456789abcdef0123456789"
        path = tmp_path / f"{face}.token"
        path.write_text(tokens[face] + "\n")
        path.chmod(0o600)
    cfg = tmp_path / "cairn.yaml"
    cfg.write_text(f"api_authorization:\n  token_file: {tmp_path / 'api.token'}\n"
                   f"prometheus_authorization: {{token_file: {tmp_path / 'prometheus.token'}}}\n")
    n = node_factory("admin-tokens", ["--config", str(cfg)])

    try:
        scrape(n)
        raise AssertionError("a scrape without the token was answered")
    except urllib.error.HTTPError as e:
        assert e.code == 401
        assert e.headers["WWW-Authenticate"].startswith("Bearer ")
    samples = scrape(n, tokens["prometheus"])
    assert value(samples, "scylla_admin_unauthorized_requests", face="prometheus") == 1

    def run(*args, env=None):
        return subprocess.run([str(cairn_bin()), "nodetool", "-p", str(n.api_port), *args],
                              capture_output=True, text=True, timeout=60,
                              env={**os.environ, **(env or {})})
    refused = run("status")
    assert refused.returncode == 1
    assert "401 Unauthorized" in refused.stderr and "--token-file" in refused.stderr, refused.stderr
    by_flag = run("--token-file", str(tmp_path / "api.token"), "status")
    assert by_flag.returncode == 0, by_flag.stderr
    assert "UN  127.0.0.1" in by_flag.stdout
    by_env = run("info", env={"CAIRN_API_TOKEN_FILE": str(tmp_path / "api.token")})
    assert by_env.returncode == 0, by_env.stderr
    # The scrape token does not open the REST API.
    wrong = run("--token-file", str(tmp_path / "prometheus.token"), "version")
    assert wrong.returncode == 1 and "refused the bearer token" in wrong.stderr, wrong.stderr


def test_exposed_admin_face_refused_at_start(tmp_path):
    """`api_address` off loopback without a token, client certificates or the opt-out: the
    node refuses to start, naming the key, its line and what to set."""
    err = serve_refused(tmp_path, "cluster_name: c\napi_address: 192.0.2.10\n")
    assert "`api_address: 192.0.2.10` (line 2" in err, err
    assert "api_authorization" in err and "api_allow_unauthenticated: true" in err, err
