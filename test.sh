#!/usr/bin/env bash
# Runs every test of the project. Installs nothing by hand: cargo fetches the Rust crates.
# (Python driver tests will set up their own virtualenv here when the CQL server lands.)
set -euo pipefail
cd "$(dirname "$0")"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace --release

# --- Go driver (gocql) -------------------------------------------------------------------
# tests/go starts the release `cairn` binary itself (CAIRN_BIN) and talks to it through gocql,
# fetched from the Go module proxy as pinned in tests/go/go.sum.
cargo build --release -p cairn
cairn_target="${CARGO_TARGET_DIR:-target}"
case "$cairn_target" in /*) ;; *) cairn_target="$PWD/$cairn_target" ;; esac
command -v go >/dev/null || { echo "test.sh: go is required for tests/go (gocql)" >&2; exit 1; }
(cd tests/go && CAIRN_BIN="$cairn_target/release/cairn" go test -count=1 ./...)
# --- end Go driver ------------------------------------------------------------------------
