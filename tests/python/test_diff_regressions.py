"""Replays the differential tester's saved cases (tests/diff/regressions/*.json) against Cairn
alone: each file holds a shrunk case that once differed, with Cassandra 5.0's recorded answer
to every statement, and every answer must now be Cassandra's (compared as cql-diff compares,
tests/diff/cqldiff/compare.py), on a node configured as cql-diff configures Cairn. A case whose finding is still open (`"open": "F…"`, the
section of tests/diff/FINDINGS.md) is expected to fail, strictly: when it passes, the fix is in
and the mark must go."""

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "diff"))
from cqldiff import case  # noqa: E402
from cqldiff.servers import Endpoint  # noqa: E402

CASES = sorted((REPO / "tests" / "diff" / "regressions").glob("*.json"))


def _param(path):
    doc, _, _ = case.load(path)
    marks = []
    if doc.get("open"):
        marks.append(pytest.mark.xfail(strict=True, reason=f"open: {doc['open']}"))
    return pytest.param(path, id=path.stem, marks=marks)


@pytest.fixture(scope="module")
def endpoint(node_factory, tmp_path_factory):
    # Configured as cql-diff configures Cairn (servers.CairnNode): what the peer turns on
    # that is off by default — dynamic data masking.
    cfg = tmp_path_factory.mktemp("regressions-config") / "cairn.yaml"
    cfg.write_text("dynamic_data_masking_enabled: true\n")
    node = node_factory("regressions", ["--config", str(cfg)])
    ep = Endpoint("cairn", node.host, node.port)
    yield ep
    ep.close()


@pytest.mark.parametrize("path", [_param(p) for p in CASES])
def test_saved_case(endpoint, path):
    endpoint.use("diff_" + path.stem.replace("-", "_")[:40])
    problems = case.replay_saved(path, endpoint)
    assert not problems, f"{path.name}:\n" + "\n".join(problems)
