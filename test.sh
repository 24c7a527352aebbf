#!/usr/bin/env bash
# Runs every test of the project. Installs nothing by hand: cargo fetches the Rust crates, the
# Python driver tests set up their own virtualenv (.venv, scripts/venv) from
# tests/python/requirements.txt, the Go driver tests fetch gocql and ScyllaDB's fork from the Go
# module proxy as pinned in tests/go/go.sum and go.scylla.sum, Maven fetches the Java driver from
# Maven Central, and the differential run installs Apache Cassandra 5.0.9 from Maven Central
# into .cache/cassandra/ (scripts/cassandra-peer).
set -euo pipefail
cd "$(dirname "$0")"
# The TLS tests make their certificates with the openssl command; the Rust driver's TLS test
# links OpenSSL (libssl-dev) through the scylla crate's openssl-010 feature.
command -v openssl >/dev/null || { echo "test.sh: the openssl command is required (TLS tests)" >&2; exit 1; }
cargo fmt --all -- --check
# Every link in README.md and docs/ resolves inside the repository.
scripts/doc-links
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

# --- Go drivers: upstream gocql, then ScyllaDB's fork of it (what scylla-bench runs; it reads
# system.peers_v2 with no fallback) on the same test source; tests/go starts the node itself.
command -v go >/dev/null || { echo "test.sh: go is required for tests/go (gocql)" >&2; exit 1; }
(cd tests/go && go test -count=1 ./... && go test -count=1 -modfile=go.scylla.mod ./...)

# --- Java driver 4.x (org.apache.cassandra:java-driver-core from Maven Central); tests/java
# starts its nodes itself.
command -v mvn >/dev/null || { echo "test.sh: mvn (and Java 17) is required for tests/java" >&2; exit 1; }
(cd tests/java && mvn -B -q test)

# --- Differential run against Apache Cassandra 5.0 (tests/diff/, docs/cql.md): a short seeded
# run of random statements on Cairn and on Cassandra, every answer compared. It starts the
# Cassandra peer (and stops it) unless one is running (scripts/cassandra-peer start). Java 17
# and Maven were checked just above.
scripts/cql-diff --statements 5000 --seed 1 --max-differences 3 --shrink-seconds 60
