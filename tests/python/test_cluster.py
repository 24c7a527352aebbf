"""Three `cairn serve` processes on 127.0.0.1, 127.0.0.2 and 127.0.0.3 with the same ports (as
ccm runs Cassandra) form one ring through their seeds (crates/cluster/src/membership.rs).

The Python driver, connected to one node, discovers the other two from system.peers and builds
a token map of all their tokens; nodetool shows every node UN. A SIGKILLed node is marked down
by the driver and DN by nodetool, and comes back UP when restarted. A fourth node is refused
while the ring holds user data (joining it would need streaming, which Cairn does not have yet).

Data through the ring is `test_cluster_data.py`'s.
"""

import contextlib
import socket
import subprocess
import time

import pytest
from cassandra.cluster import Cluster, ExecutionProfile, EXEC_PROFILE_DEFAULT
from cassandra.policies import RoundRobinPolicy, WhiteListRoundRobinPolicy

from conftest import Node, cairn_bin

# Generous: the machine is shared and busy; every wait polls for a state.
WAIT = 45.0


class ClusterNode(Node):
    """A node at 127.0.0.n, with the cluster's ports and seeds."""

    def __init__(self, root, n, ports, seeds, extra_yaml=""):
        data_dir = root / f"n{n}"
        data_dir.mkdir(parents=True, exist_ok=True)
        config = root / f"n{n}.yaml"
        native, api, metrics, storage = ports
        config.write_text(
            "cluster_name: pytest cluster\n"
            f"storage_port: {storage}\n"
            "seed_provider:\n"
            "  - class_name: org.apache.cassandra.locator.SimpleSeedProvider\n"
            "    parameters:\n"
            f"      - seeds: \"{seeds}\"\n" + extra_yaml)
        super().__init__(data_dir, ["--config", str(config), "--listen-address", f"127.0.0.{n}"])
        self.host = f"127.0.0.{n}"
        self.port, self.api_port, self.metrics_port = native, api, metrics
        self.storage_port = storage

    def nodetool(self, *args):
        out = subprocess.run(
            [str(cairn_bin()), "nodetool", "-h", self.host, "-p", str(self.api_port), *args],
            capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        return out.stdout

    def states(self):
        """address -> status code (UN, DN, UJ, ...) from `nodetool status`."""
        found = {}
        for line in self.nodetool("status").splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[1].startswith("127.0.0.") and len(parts[0]) == 2:
                found[parts[1]] = parts[0]
        return found


def free_ports_on(hosts, n):
    """n distinct ports free on every one of hosts (127.0.0.1 may be free where 127.0.0.2 has
    another process's socket bound to it: internode connections bind their source address)."""
    ports, held = [], []
    try:
        while len(ports) < n:
            probe = socket.socket()
            probe.bind((hosts[0], 0))
            held.append(probe)
            port = probe.getsockname()[1]
            try:
                for h in hosts[1:]:
                    s = socket.socket()
                    held.append(s)
                    s.bind((h, port))
            except OSError:
                continue
            ports.append(port)
        return ports
    finally:
        for s in held:
            s.close()


def start_all(nodes):
    """Starts every node at once and waits until each serves CQL; a node that does not is
    reported with every node's log."""
    for n in nodes:
        n.start(wait=False)
    try:
        for n in nodes:
            n.wait_started(timeout=WAIT)
    except RuntimeError as e:
        logs = "\n".join(f"--- {n.host}:\n{n.log_tail(15)}" for n in nodes)
        raise RuntimeError(f"{e}\nevery node's log:\n{logs}") from None


def wait_all_up(nodes):
    """Waits until every node sees every node UN."""
    for m in nodes:
        wait_for(f"{len(nodes)} UN from {m.host}",
                 lambda m=m: m.states() == {n.host: "UN" for n in nodes})


@contextlib.contextmanager
def three_nodes(root, extra_yaml=""):
    """Three nodes on 127.0.0.1–3 (same ports, seeds on all three), each seeing all three UN;
    killed on exit."""
    ports = free_ports_on([f"127.0.0.{n}" for n in (1, 2, 3)], 4)
    seeds = "127.0.0.1,127.0.0.2,127.0.0.3"
    nodes = [ClusterNode(root, n, ports, seeds, extra_yaml=extra_yaml) for n in (1, 2, 3)]
    try:
        start_all(nodes)
        # Every node must see the others up: each coordinates some requests.
        wait_all_up(nodes)
        yield nodes
    finally:
        for n in nodes:
            if n.proc is not None:
                n.kill()


def wait_for(what, check, timeout=WAIT):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


@pytest.fixture(scope="module")
def ring(tmp_root):
    root = tmp_root / "cluster"
    ports = free_ports_on([f"127.0.0.{n}" for n in (1, 2, 3, 4)], 4)
    seeds = "127.0.0.1,127.0.0.2,127.0.0.3"
    nodes = [ClusterNode(root, n, ports, seeds) for n in (1, 2, 3)]
    try:
        # All at once: discovery must form exactly one group.
        start_all(nodes)
        yield root, ports, seeds, nodes
    finally:
        for n in nodes:
            if n.proc is not None:
                n.kill()


def driver(node, **kw):
    profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(), request_timeout=20)
    return Cluster([node.host], port=node.port, protocol_version=4,
                   execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                   connect_timeout=10, control_connection_timeout=10, **kw)


def alone(node, **kw):
    """A driver that sends every request to `node`."""
    return Cluster([node.host], port=node.port, protocol_version=4,
                   execution_profiles={EXEC_PROFILE_DEFAULT: ExecutionProfile(
                       load_balancing_policy=WhiteListRoundRobinPolicy([node.host]))},
                   connect_timeout=10, control_connection_timeout=10, **kw)


def on(node, query, *args, agreement=True):
    """`query` sent to `node` alone; the rows. Without `agreement`, a schema change does not
    wait for the driver to find the schema agreed: a driver that sends to one node only never
    learns that another is down (it would wait for that node's version in system.peers)."""
    c = alone(node, **({} if agreement else {"max_schema_agreement_wait": 0}))
    try:
        return list(c.connect().execute(query, *args))
    finally:
        c.shutdown()


def test_three_nodes_form_one_ring_that_drivers_and_nodetool_see(ring):
    _, _, _, nodes = ring
    first = nodes[0]
    # Every node's own view: a node learns of the others through group 0 a moment apart.
    wait_all_up(nodes)
    c = driver(first)
    try:
        c.connect()
        hosts = {h.address for h in c.metadata.all_hosts()}
        assert hosts == {"127.0.0.1", "127.0.0.2", "127.0.0.3"}
        ring_tokens = [t.value for t in c.metadata.token_map.ring]
        assert len(ring_tokens) == 48 and len(set(ring_tokens)) == 48
        owners = {c.metadata.token_map.token_to_host_owner[t].address
                  for t in c.metadata.token_map.ring}
        assert owners == hosts
        # Every node lists the other two in system.peers as they describe themselves.
        local, peers = {}, {}
        for n in nodes:
            one = alone(n)
            try:
                s = one.connect()
                local[n.host] = s.execute(
                    "SELECT host_id, tokens, rpc_address, listen_port FROM system.local").one()
                peers[n.host] = {r.peer: r for r in s.execute(
                    "SELECT peer, host_id, tokens, data_center, rack, rpc_address "
                    "FROM system.peers")}
                # Cassandra 4's table names each peer's storage port (the ring's, not 7000).
                assert {(r.peer, r.peer_port) for r in s.execute(
                    "SELECT peer, peer_port FROM system.peers_v2")} == {
                    (m.host, m.storage_port) for m in nodes if m is not n}
            finally:
                one.shutdown()
        for n in nodes:
            assert local[n.host].rpc_address == n.host
            assert local[n.host].listen_port == n.storage_port
            assert set(peers[n.host]) == {m.host for m in nodes if m is not n}
            for address, row in peers[n.host].items():
                assert row.host_id == local[address].host_id
                assert set(row.tokens) == set(local[address].tokens)
                assert (row.rpc_address, row.data_center, row.rack) == (
                    address, "datacenter1", "rack1")
        # describecluster: one schema version, held by every node (schema is group 0's).
        def versions():
            out = first.nodetool("describecluster")
            listed = [line for line in out.splitlines() if line.strip().endswith("]")]
            agreed = len(listed) == 1 and all(n.host in listed[0] for n in nodes)
            return out if agreed else None
        out = wait_for("one schema version on every node", versions)
        assert "Name: pytest cluster" in out and "Murmur3Partitioner" in out
    finally:
        c.shutdown()


def test_a_killed_node_is_down_then_up_again(ring):
    _, _, _, nodes = ring
    first, third = nodes[0], nodes[2]
    c = driver(first)
    try:
        c.connect()
        host = c.metadata.get_host(third.host)
        wait_for("the driver to see 127.0.0.3 up", lambda: host.is_up)
        third.kill()
        wait_for("the driver to mark 127.0.0.3 down", lambda: host.is_up is False)
        wait_for("nodetool DN", lambda: first.states().get(third.host) == "DN")
        assert first.states()[nodes[1].host] == "UN"
        third.start(timeout=WAIT)
        wait_for("nodetool UN again", lambda: first.states().get(third.host) == "UN")
        wait_for("the driver to see 127.0.0.3 up again", lambda: host.is_up)
        # It came back with its identity: still three nodes, 48 tokens.
        assert len(c.metadata.all_hosts()) == 3
        assert len(c.metadata.token_map.ring) == 48
    finally:
        c.shutdown()


def test_joining_a_ring_that_holds_data_is_refused(ring):
    root, ports, seeds, nodes = ring
    first = nodes[0]
    # The schema is shared: made on one node, every node has it. Then a row whose replica
    # is the node written to.
    on(nodes[1], "CREATE KEYSPACE joinks WITH replication = "
                 "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    on(nodes[1], "CREATE TABLE joinks.t (k int PRIMARY KEY, v int)")
    c = alone(first)
    try:
        s = c.connect()
        c.refresh_schema_metadata()
        host = c.metadata.get_host(first.host)
        k = next(k for k in range(1000) if c.metadata.get_replicas(
            "joinks", k.to_bytes(4, "big", signed=True)) == [host])
        s.execute("INSERT INTO joinks.t (k, v) VALUES (%s, 1)", (k,))
    finally:
        c.shutdown()
    fourth = ClusterNode(root, 4, ports, seeds)
    fourth.start(wait=False)
    try:
        rc = fourth.proc.wait(timeout=WAIT)
    except subprocess.TimeoutExpired:
        fourth.kill()
        pytest.fail(f"the fourth node did not stop:\n{fourth.log_tail()}")
    fourth._close()
    log = fourth.log_tail(80)
    assert rc != 0, log
    assert "cannot join the ring" in log and "joinks.t" in log and "streaming" in log, log
    # The ring did not change.
    assert set(first.states()) == {n.host for n in nodes}
