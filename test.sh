#!/usr/bin/env bash
# Runs every test of the project. Installs nothing by hand: cargo fetches the Rust crates, the
# Python driver tests set up their own virtualenv (.venv, scripts/venv) from
# tests/python/requirements.txt, the Go driver test fetches gocql from the Go module proxy as
# pinned in tests/go/go.sum, and the differential run installs Apache Cassandra 5.0.9 from
# Maven Central into .cache/cassandra/ (scripts/cassandra-peer).
set -euo pipefail
cd "$(dirname "$0")"
cargo fmt --all -- --check
# Lints in the release profile, like the tests: the build scripts (jemalloc's and zstd's C
# builds) and proc-macros it compiles are then the ones `cargo test --release` reuses, instead
# of a second dev-profile set (about 12 CPU-minutes on a cold target).
cargo clippy --workspace --all-targets --release -- -D warnings
cargo test --workspace --release

# The release `cairn` binary the driver tests start. `cargo test` above built it already; the
# build below names every target, as `cargo test` does, so that cargo resolves the same crate
# features and finds it up to date. (`cargo build -p cairn` would resolve them without the
# tests' dev-dependencies and compile the engine, the server and the binary a second time.)
cargo build --workspace --all-targets --release
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
export CAIRN_BIN="${CAIRN_BIN:-$target_dir/release/cairn}"

# --- Python driver tests (cassandra-driver, cqlsh); tests/python/conftest.py starts the node.
scripts/venv
.venv/bin/python -m pytest -q tests/python

# --- Go driver (gocql); tests/go starts the node itself.
command -v go >/dev/null || { echo "test.sh: go is required for tests/go (gocql)" >&2; exit 1; }
(cd tests/go && go test -count=1 ./...)

# --- Differential run against Apache Cassandra 5.0 (tests/diff/, docs/cql.md): a short seeded
# run of random statements on Cairn and on Cassandra, every answer compared. It starts the
# Cassandra peer (and stops it) unless one is running (scripts/cassandra-peer start).
for tool in java mvn; do
    command -v "$tool" >/dev/null || { echo "test.sh: $tool is required for the differential run (Java 17, Maven)" >&2; exit 1; }
done
scripts/cql-diff --statements 5000 --seed 1 --max-differences 3 --shrink-seconds 60
