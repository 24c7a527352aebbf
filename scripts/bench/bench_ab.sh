#!/bin/bash
# A/B of two `cairn bench` binaries by client CPU per operation: bench_ab.sh NODE_BIN BENCH_A BENCH_B [PAIRS]
# Starts a fresh node of NODE_BIN (the same binary for both sides) per pair, writes 50 000 keys, then runs
# memory-served single-row SELECTs and INSERTs (-duration 35s -warmup 5s, 30 measured seconds, default flags:
# 4 connections, concurrency 16) with A and B back to back, alternating which goes first, and prints client and
# server CPU µs per operation, ops/s and the load average before and after each run.
# BENCH_ARGS adds flags to both; DUR and WARM change the run length.
NODE_BIN=$1; A=$2; B=$3; PAIRS=${4:-2}; DUR=${DUR:-35s}; WARM=${WARM:-5s}
C="-nodes 127.0.0.1:19042 -partition-count 50000 -clustering-row-count 1 -clustering-row-size 16 -rows-per-request 1 -consistency-level one -concurrency 16 $BENCH_ARGS"
run() { # label bench mode
  local before; before=$(cut -d' ' -f1 /proc/loadavg)
  local out; out=$($2 bench $C -mode $3 -workload uniform -duration $DUR -warmup $WARM -server-pid $NODE 2>&1)
  local cl sv ops
  cl=$(echo "$out" | awk '/^Client CPU/ {print $3}')
  sv=$(echo "$out" | awk '/^Server CPU/ {print $3}')
  ops=$(echo "$out" | awk '/^Operations\/s/ {print $2}')
  echo "$1 $3 client $cl server $sv ops/s $ops load $before-$(cut -d' ' -f1 /proc/loadavg)"
}
for p in $(seq 1 $PAIRS); do
  D=$(mktemp -d /tmp/bench-ab.XXXX)
  $NODE_BIN serve --data-dir $D --native-port 19042 --api-port 19000 --metrics-port 19180 >/dev/null 2>&1 &
  NODE=$!; sleep 1
  $A bench $C -mode write -workload sequential >/dev/null 2>&1
  for m in read write; do
    if [ $((p % 2)) = 1 ]; then run "pair$p A" $A $m; run "pair$p B" $B $m
    else run "pair$p B" $B $m; run "pair$p A" $A $m; fi
  done
  kill $NODE; wait $NODE 2>/dev/null; rm -rf $D
done
