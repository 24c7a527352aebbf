#!/bin/bash
# A/B of node binaries under latte's own `basic/write.rn` (a new single-row partition per
# INSERT, `-p 16`, 1 connection, as in latte_bars.sh), write only, alternating the binaries:
#   scripts/bench/latte_write_ab.sh DURATION ROUNDS NODE_BIN...
# Prints per run: server CPU µs/op (Δ utime+stime of the node ÷ latte's cycles), ops/s, the
# node's peak RSS, and 4 mid-run samples of the memtables' accounted bytes (Prometheus
# `scylla_database_memtable_bytes`) beside the node's RSS; with the load average.
DUR=$1; ROUNDS=$2; shift 2
LATTE=/work/latte/bin/latte
WL=$(dirname "$(find ~/.cargo/registry/src -path '*latte-cli-*/workloads/basic/write.rn' | sort | tail -1)")
HZ=$(getconf CLK_TCK)
for round in $(seq $ROUNDS); do
 for BIN in "$@"; do
  D=$(mktemp -d /tmp/wab-node.XXXX)
  $BIN serve --data-dir "$D" --native-port 39442 --api-port 39400 --metrics-port 39480 >/dev/null 2>&1 &
  NODE=$!
  sleep 1
  cd $D
  $LATTE schema "$WL/write.rn" -- 127.0.0.1:39442 >/dev/null 2>&1
  l0=$(cut -d' ' -f1 /proc/loadavg)
  before=$(awk '{print $14 + $15}' /proc/$NODE/stat)
  # Mid-run: the memtables' accounted bytes (Prometheus) beside the node's RSS, 4 samples.
  (for i in 1 2 3 4; do sleep 4; m=$(curl -s 127.0.0.1:39480/metrics | awk '/^scylla_database_memtable_bytes/{s+=$2} END{print s}'); r=$(awk '/VmRSS/{print $2}' /proc/$NODE/status); echo "memtables ${m} B, RSS ${r} kB"; done > $D/mem.txt) &
  out=$($LATTE run "$WL/write.rn" -d "$DUR" -p 16 -- 127.0.0.1:39442 2>&1)
  after=$(awk '{print $14 + $15}' /proc/$NODE/stat)
  rss=$(awk '/VmHWM/{print $2}' /proc/$NODE/status)
  kill $NODE; wait $NODE 2>/dev/null
  cycles=$(echo "$out" | grep -m1 -E '^ *Cycles' | awk '{print $3}' | tr -d ,)
  tput=$(echo "$out" | grep -m1 -E '^ *Throughput' | awk '{print $3}')
  python3 -c "t=($after-$before)/$HZ; c=$cycles; print(f'$(date -u +%H:%M:%S) $(basename $BIN): {c} cycles {float(\"$tput\"):.0f} op/s, server CPU {t*1e6/c:.2f} µs/op, peak RSS {$rss/1024:.0f} MiB, load $l0..$(cut -d' ' -f1 /proc/loadavg)')"
  paste -sd' ' $D/mem.txt
  cd /; rm -rf $D
 done
done
