"""The placement oracle is the driver's answer today.

crates/cluster/tests/placement.rs checks Cairn's replica placement against
crates/cluster/tests/testdata/placement.json, which scripts/placement-oracle makes with the Python
driver's own strategies (what drivers route requests by). This test runs the script again with the
driver installed here and checks the committed file is exactly what it answers, so the Rust test
compares with the driver and not with a stale copy.
"""

import subprocess
import sys

from conftest import REPO


def test_committed_placement_oracle_is_the_drivers_answer():
    fresh = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "placement-oracle")],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    committed = (REPO / "crates" / "cluster" / "tests" / "testdata" / "placement.json").read_text()
    assert fresh == committed, "run scripts/placement-oracle to regenerate the file"
