"""TLS between nodes (`server_encryption_options`, crates/cluster/src/tls.rs): three `cairn
serve` processes on 127.0.0.1–3 with `internode_encryption: all` and `require_client_auth`
form one ring (every node sees the others UN), a table made on one node (schema through group 0,
over TLS) takes a QUORUM write through one node that a QUORUM read through another finds, and
the nodes count their TLS connections.

The certificates are made here with the `openssl` command (no network), as in test_tls.py: a CA
and one certificate per node (its address, for serving and connecting).
"""

import urllib.request

import pytest
from cassandra import ConsistencyLevel as CL
from cassandra.query import SimpleStatement

from test_cluster import ClusterNode, alone, free_ports_on, on, start_all, wait_all_up
from test_tls import make_ca, make_cert


@pytest.fixture(scope="module")
def tls_ring(tmp_root):
    root = tmp_root / "cluster-tls"
    root.mkdir(parents=True, exist_ok=True)
    make_ca(root, "ca")
    for n in (1, 2, 3):
        make_cert(root, f"node{n}", "ca", f"subjectAltName=IP:127.0.0.{n}\n"
                  "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth,clientAuth\n")
    ports = free_ports_on([f"127.0.0.{n}" for n in (1, 2, 3)], 4)
    seeds = "127.0.0.1,127.0.0.2,127.0.0.3"

    def tls(n):
        return ("server_encryption_options:\n"
                "  internode_encryption: all\n"
                f"  certificate: {root / f'node{n}.crt'}\n"
                f"  private_key: {root / f'node{n}.key'}\n"
                f"  truststore: {root / 'ca.crt'}\n"
                "  require_client_auth: true\n")

    nodes = [ClusterNode(root, n, ports, seeds, extra_yaml=tls(n)) for n in (1, 2, 3)]
    try:
        start_all(nodes)
        yield nodes
    finally:
        for n in nodes:
            if n.proc is not None:
                n.kill()


def metric(node, name):
    body = urllib.request.urlopen(f"http://{node.host}:{node.metrics_port}/metrics",
                                  timeout=10).read().decode()
    return sum(float(line.split()[-1]) for line in body.splitlines()
               if line.startswith(name + "{") or line.startswith(name + " "))


def test_three_nodes_over_tls_form_one_ring_and_serve_quorum(tls_ring):
    nodes = tls_ring
    wait_all_up(nodes)
    # Schema goes through group 0, itself over TLS.
    on(nodes[0], "CREATE KEYSPACE tls WITH replication = "
                 "{'class': 'NetworkTopologyStrategy', 'datacenter1': 3}")
    on(nodes[0], "CREATE TABLE tls.t (k int PRIMARY KEY, v text)")
    writer, reader = alone(nodes[0]), alone(nodes[1])
    try:
        w, r = writer.connect(), reader.connect()
        for k in range(20):
            w.execute(SimpleStatement("INSERT INTO tls.t (k, v) VALUES (%s, %s)",
                                      consistency_level=CL.QUORUM), (k, f"v{k}"))
        rows = r.execute(SimpleStatement("SELECT k, v FROM tls.t",
                                         consistency_level=CL.QUORUM))
        assert sorted((row.k, row.v) for row in rows) == [(k, f"v{k}") for k in range(20)]
    finally:
        writer.shutdown()
        reader.shutdown()
    for n in nodes:
        # Each node connected to the other two and was connected to by them, over TLS.
        assert metric(n, "scylla_messaging_tls_connections") >= 4, n.host
        assert metric(n, "scylla_messaging_tls_handshake_failures") == 0, n.host
