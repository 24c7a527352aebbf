#!/usr/bin/env bash
# Runs every test of the project. Installs nothing by hand: cargo fetches the Rust crates and
# the Python driver tests set up their own virtualenv (.venv) from tests/python/requirements.txt.
set -euo pipefail
cd "$(dirname "$0")"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace --release

# Python driver tests (cassandra-driver, cqlsh) against a node started by tests/python/conftest.py.
cargo build --release -p cairn
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
export CAIRN_BIN="${CAIRN_BIN:-$target_dir/release/cairn}"
req=tests/python/requirements.txt
stamp=.venv/.requirements.stamp
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
if [ ! -f "$stamp" ] || ! cmp -s "$req" "$stamp"; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$req"
    cp "$req" "$stamp"
fi
.venv/bin/python -m pytest -q tests/python

# --- Go driver (gocql) -------------------------------------------------------------------
# tests/go starts the release `cairn` binary itself (CAIRN_BIN) and talks to it through gocql,
# fetched from the Go module proxy as pinned in tests/go/go.sum.
cargo build --release -p cairn
cairn_target="${CARGO_TARGET_DIR:-target}"
case "$cairn_target" in /*) ;; *) cairn_target="$PWD/$cairn_target" ;; esac
command -v go >/dev/null || { echo "test.sh: go is required for tests/go (gocql)" >&2; exit 1; }
(cd tests/go && CAIRN_BIN="$cairn_target/release/cairn" go test -count=1 ./...)
# --- end Go driver ------------------------------------------------------------------------
