"""The node's place on the ring: vnode tokens made on first start and kept, the snitch's data
center and rack, and what drivers and nodetool read of them (crates/cluster).

Drivers build their token map from system.local (and system.peers) and route each request to a
replica they compute themselves; these tests check the Python driver's map holds the node's
tokens and its replica computation lands on the node, and that nodetool's ring views agree.
"""

import subprocess

import pytest

from conftest import Node, cairn_bin, make_cluster
from helpers import nodetool




def local_row(session):
    return session.execute(
        "SELECT host_id, tokens, data_center, rack FROM system.local WHERE key = 'local'").one()


def ring_ranges(out):
    """(start, end, endpoints) of each TokenRange line of `nodetool describering`."""
    ranges = []
    for line in out.splitlines():
        line = line.strip()
        if not line.startswith("TokenRange(start_token:"):
            continue
        start = int(line.split("start_token:")[1].split(",")[0])
        end = int(line.split("end_token:")[1].split(",")[0])
        endpoints = line.split("endpoints:[")[1].split("]")[0]
        ranges.append((start, end, endpoints))
    return ranges


def test_vnode_tokens_are_kept_and_drivers_route_by_them(node_factory):
    node = node_factory("ring-vnodes")
    cluster = make_cluster(node)
    session = cluster.connect()
    first = local_row(session)
    tokens = sorted(int(t) for t in first.tokens)
    # num_tokens 16 by default (Cassandra 5.0's default), spread over the ring.
    assert len(tokens) == 16 and len(set(tokens)) == 16
    assert tokens[0] < -2**62 and tokens[-1] > 2**62
    assert (first.data_center, first.rack) == ("datacenter1", "rack1")

    session.execute("CREATE KEYSPACE ring_ks WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE ring_ks.t (k int PRIMARY KEY, v int)")
    cluster.refresh_schema_metadata()
    token_map = cluster.metadata.token_map
    assert sorted(t.value for t in token_map.ring) == tokens
    host = cluster.metadata.get_host(node.host, node.port)
    for k in range(20):
        key = k.to_bytes(4, "big", signed=True)
        assert cluster.metadata.get_replicas("ring_ks", key) == [host]
    cluster.shutdown()

    # describering: one range per token, contiguous, each ending at a token, on this node.
    ranges = ring_ranges(nodetool(node, "describering", "ring_ks").stdout)
    assert sorted(end for _, end, _ in ranges) == tokens
    by_end = {end: (start, ep) for start, end, ep in ranges}
    for i, t in enumerate(tokens):
        assert by_end[t] == (tokens[i - 1], node.host)

    # getendpoints: the replicas of a key given as text; a key its type refuses is an error.
    assert nodetool(node, "getendpoints", "ring_ks", "t", "5").stdout == f"{node.host}\n"
    bad = nodetool(node, "getendpoints", "ring_ks", "t", "five", ok=False)
    assert bad.returncode != 0 and "five" in bad.stderr
    # ring: a line per token, sorted, with the node's share; status: the same share.
    lines = nodetool(node, "ring", "ring_ks").stdout.splitlines()
    rows = [l.split() for l in lines if l.startswith(node.host)]
    assert [int(r[-1]) for r in rows] == tokens
    assert all(r[1:4] == ["rack1", "Up", "Normal"] and r[-2] == "100.00%" for r in rows)
    assert "100.0%" in nodetool(node, "status", "ring_ks").stdout

    # The identity survives a restart: same host id, same tokens.
    node.restart()
    cluster = make_cluster(node)
    again = local_row(cluster.connect())
    assert (again.host_id, sorted(again.tokens)) == (first.host_id, sorted(first.tokens))
    cluster.shutdown()


def test_snitch_location_num_tokens_and_placement(tmp_root):
    conf_dir = tmp_root / "ring-conf"
    conf_dir.mkdir()
    (conf_dir / "cassandra-rackdc.properties").write_text("# this node\ndc=dc_east\nrack=rk7\n")
    config = conf_dir / "cairn.yaml"
    config.write_text("num_tokens: 4\nendpoint_snitch: GossipingPropertyFileSnitch\n")
    node = Node(tmp_root / "ring-snitch", ["--config", str(config)]).start()
    try:
        cluster = make_cluster(node)
        session = cluster.connect()
        row = local_row(session)
        assert (row.data_center, row.rack) == ("dc_east", "rk7")
        assert len(row.tokens) == 4
        session.execute("CREATE KEYSPACE nts_ks WITH replication = "
                        "{'class': 'NetworkTopologyStrategy', 'dc_east': 1}")
        session.execute("CREATE TABLE nts_ks.t (k int PRIMARY KEY)")
        cluster.refresh_schema_metadata()
        host = cluster.metadata.get_host(node.host, node.port)
        assert cluster.metadata.get_replicas("nts_ks", b"\x00\x00\x00\x01") == [host]
        cluster.shutdown()
        out = nodetool(node, "describering", "nts_ks").stdout
        assert len(ring_ranges(out)) == 4
        assert "datacenter:dc_east, rack:rk7" in out

        # The number of tokens cannot change after the first start.
        node.stop()
        config.write_text("num_tokens: 8\nendpoint_snitch: GossipingPropertyFileSnitch\n")
        with pytest.raises(RuntimeError, match="exited"):
            node.start()
        node._close()
        assert "Cannot change the number of tokens from 4 to 8" in node.log_path.read_text()
    finally:
        if node.proc is not None:
            node.kill()


def test_unknown_snitch_and_missing_rackdc_stop_the_node(tmp_root):
    conf_dir = tmp_root / "ring-bad"
    conf_dir.mkdir()
    config = conf_dir / "cairn.yaml"
    config.write_text("endpoint_snitch: Ec2Snitch\n")
    out = subprocess.run([str(cairn_bin()), "serve", "--config", str(config),
                          "--data-dir", str(tmp_root / "ring-bad-data")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "Cairn supports SimpleSnitch and GossipingPropertyFileSnitch" in out.stderr + out.stdout
    config.write_text("endpoint_snitch: GossipingPropertyFileSnitch\n")
    out = subprocess.run([str(cairn_bin()), "serve", "--config", str(config),
                          "--data-dir", str(tmp_root / "ring-bad-data"), "--native-port", "0",
                          "--api-port", "0", "--metrics-port", "0"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "cassandra-rackdc.properties" in out.stderr + out.stdout
