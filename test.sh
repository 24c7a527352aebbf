#!/usr/bin/env bash
# Runs every test of the project. Installs nothing by hand: cargo fetches the Rust crates.
# (Python driver tests will set up their own virtualenv here when the CQL server lands.)
set -euo pipefail
cd "$(dirname "$0")"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace --release
