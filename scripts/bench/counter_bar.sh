#!/bin/bash
# Issue 18's counter bar: counter increments against plain single-row INSERTs on the same node,
# in the same run: counter_bar.sh [NODE_BIN] [BENCH_BIN] [ROUNDS] [DURATION]
# Starts one fresh node (127.0.0.1, RF=1), then alternates, ROUNDS times, DURATION of
# `cairn bench -mode write` (INSERT … (pk, ck, v), one row, 16-byte values) and DURATION of
# `-mode counter_update` (scylla-bench's: UPDATE … SET c1 = c1 + ?, … c5 = c5 + ? WHERE pk = ?
# AND ck = ?), both on a uniform workload over 50 000 partitions at QUORUM (2 s warm-up each),
# and prints throughput, p50/p99 and server CPU µs per operation with the ratio counter / INSERT.
set -u
BIN=${1:-target/release/cairn}; BENCH=${2:-$BIN}; ROUNDS=${3:-2}; DUR=${4:-15s}
PORTS="--native-port 39142 --api-port 39100 --metrics-port 39280"
C="-nodes 127.0.0.1:39142 -concurrency 16 -partition-count 50000 -clustering-row-count 1 -clustering-row-size 16 -rows-per-request 1 -consistency-level quorum -workload uniform -duration $DUR -warmup 2s"
D=$(mktemp -d /tmp/counter-bar.XXXX)
$BIN serve --data-dir $D/n1 $PORTS --listen-address 127.0.0.1 >$D/n1.log 2>&1 &
NODE=$!
trap 'kill $NODE 2>/dev/null; wait $NODE 2>/dev/null; rm -rf $D' EXIT
sleep 1
for r in $(seq 1 $ROUNDS); do
  for m in write counter_update; do
    out=$($BENCH bench $C -mode $m -server-pid $NODE 2>&1)
    ops=$(echo "$out" | awk -F'\t' '/^Operations\/s/ {print $NF}' | tr -d ' ')
    p50=$(echo "$out" | awk '/^  median:/ {print $2; exit}')
    p99=$(echo "$out" | awk '/^  99th:/ {print $2; exit}')
    cpu=$(echo "$out" | awk '/^Server CPU/ {print $3}')
    echo "round $r $m ops/s $ops p50 $p50 p99 $p99 server_cpu_us_per_op $cpu load $(cut -d' ' -f1 /proc/loadavg)"
    eval "ops_$m=$ops"
  done
  echo "round $r counter_update / write throughput: $(awk -v a="$ops_counter_update" -v b="$ops_write" 'BEGIN {printf "%.2f", a / b}')"
done
