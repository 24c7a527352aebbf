#!/usr/bin/env bash
# Alternates two cairn binaries on `lab compression --codecs lz4 --chunk-kb 4`, N pairs.
set -euo pipefail
A=$1; B=$2; N=${3:-8}
for i in $(seq 1 "$N"); do
  for side in A B; do
    bin=${!side}
    out=$(mktemp -d)
    "$bin" lab compression --codecs lz4 --chunk-kb 4 --out "$out" >/dev/null 2>&1
    echo "$side $(date +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg) $(grep '^| lz4 ' "$out/compression.md" | tail -1)"
    rm -rf "$out"
  done
done
