#!/bin/bash
# Issue 4's CPU bars measured with latte (crates.io `latte-cli`), the bar's own tool, in its
# default shape (1 connection, 1 thread) at concurrency 16, with latte's own basic workloads:
#   write.rn — single-row INSERTs of tiny partitions (`basic (id bigint PRIMARY KEY)`);
#   read.rn  — single-row SELECTs by key over 100 000 rows loaded first (served from memory).
#
#   cargo install latte-cli --root /work/latte          # once; ~10 min
#   scripts/bench/latte_bars.sh [LATTE] [CAIRN] [DURATION]
#
# Server CPU = Δ(utime + stime) of the node over the `latte run` (1 s warm-up included) ÷
# the cycles latte reports; each cycle of these workloads is one request.
set -e
LATTE=${1:-/work/latte/bin/latte}
CAIRN=$(realpath "${2:-target/release/cairn}")
DUR=${3:-30s}
OUT=$(pwd)/docs/results/cql-server
WL=$(dirname "$(find ~/.cargo/registry/src -path '*latte-cli-*/workloads/basic/write.rn' | sort | tail -1)")
D=$(mktemp -d /tmp/latte-node.XXXX)
$CAIRN serve --data-dir "$D" --native-port 39142 --api-port 39100 --metrics-port 39280 >/dev/null 2>&1 &
NODE=$!
trap 'kill $NODE 2>/dev/null; wait $NODE 2>/dev/null; rm -rf "$D"' EXIT
sleep 1
cd "$D"   # latte writes a log file per command into the working directory
ticks() { awk '{print $14 + $15}' /proc/$NODE/stat; }
HZ=$(getconf CLK_TCK)
for w in write read; do
  $LATTE schema "$WL/$w.rn" -- 127.0.0.1:39142 >/dev/null
  $LATTE load "$WL/$w.rn" -- 127.0.0.1:39142 >/dev/null
  before=$(ticks)
  out=$($LATTE run "$WL/$w.rn" -d "$DUR" -p 16 --output "$D/latte-$w.json" -- 127.0.0.1:39142 2>&1)
  after=$(ticks)
  # The summary only (the progress lines are terminal redraws).
  echo "$out" | sed -n '/SUMMARY STATS/,$p' > "$OUT/latte-$w.txt"
  cycles=$(echo "$out" | grep -m1 -E '^ *Cycles' | awk '{print $3}')
  tput=$(echo "$out" | grep -m1 -E '^ *Throughput' | awk '{print $3}')
  lat=$(echo "$out" | sed -n '/CYCLE LATENCY/,$p' | awk '$1=="50"||$1=="99"||$1=="99.9"{printf "p%s %s ms  ", $1, $2}')
  python3 -c "import sys; t=($after-$before)/$HZ; c=float('$cycles'.replace(',','')); print(f'$w: {c:.0f} cycles, throughput $tput op/s, server CPU {t*1e6/c:.2f} µs/op ({t:.2f} s); $lat; load $(cut -d' ' -f1 /proc/loadavg)')"
done
