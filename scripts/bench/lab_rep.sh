#!/usr/bin/env bash
# Runs one cairn binary N times on `lab compression --codecs lz4 --chunk-kb 4`: flush and scan % of raw, flush ms mean/std.
set -euo pipefail
BIN=$1; N=${2:-20}
for i in $(seq 1 "$N"); do
  out=$(mktemp -d)
  "$BIN" lab compression --codecs lz4 --chunk-kb 4 --out "$out" >/dev/null 2>&1
  echo "$(date +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg) flush_ms $(sed -n 2p "$out/compression.csv" | cut -d, -f7,8) $(grep '^| lz4 ' "$out/compression.md" | tail -1)"
  rm -rf "$out"
done
