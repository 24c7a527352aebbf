#!/bin/bash
# A/B of two node binaries by server CPU per operation: cql_ab.sh NODE_BIN LABEL [BENCH_BIN]
# Starts a fresh node of NODE_BIN, writes 50 000 keys, then 17 s of memory-served single-row SELECTs and 17 s of
# INSERTs (2 s warm-up each) from `cairn bench` (BENCH_BIN, default target/release/cairn; keep it the same for A and B;
# BENCH_ARGS adds flags, e.g. BENCH_ARGS="-connection-count 1"),
# and prints client and server CPU µs per operation with the load average. Alternate A and B several times.
BIN=$1; L=$2; BENCH=${3:-target/release/cairn}
D=$(mktemp -d /tmp/ab-node.XXXX)
$BIN serve --data-dir $D --native-port 39042 --api-port 39000 --metrics-port 39180 >/dev/null 2>&1 &
NODE=$!; sleep 1
C="-nodes 127.0.0.1:39042 -concurrency 16 -partition-count 50000 -clustering-row-count 1 -clustering-row-size 16 -rows-per-request 1 -consistency-level one $BENCH_ARGS"
$BENCH bench $C -mode write -workload sequential >/dev/null 2>&1
for m in read write; do
  r=$($BENCH bench $C -mode $m -workload uniform -duration 17s -warmup 2s -server-pid $NODE 2>&1 | grep -E "Server CPU|Client CPU" | awk '{print $3}' | tr '\n' ' ')
  echo "$L $m client/server µs: $r load $(cut -d' ' -f1 /proc/loadavg)"
done
kill $NODE; wait $NODE 2>/dev/null; rm -rf $D
