#!/bin/bash
# Issue 19's bar: node CPU per QUORUM write and read summed over three nodes at RF=3, beside one
# node at RF=1, in the same run: cluster_bar.sh [NODE_BIN] [BENCH_BIN] [ROUNDS]
# Each round starts a fresh single node (127.0.0.1) and a fresh three-node cluster (127.0.0.1–3,
# the same ports, seeds on all three), writes 50 000 keys, then 17 s of single-row SELECTs and
# 17 s of INSERTs (2 s warm-up each) at QUORUM from `cairn bench` (round-robin over the nodes it
# is given), and prints throughput, p50/p99 and server CPU µs per operation (summed over the
# nodes' /proc/PID/stat) with the ratio cluster / single. Alternate rounds; read them together.
# CONCURRENCY=N in the environment changes the bench's concurrency (16 by default).
set -u
BIN=${1:-target/release/cairn}; BENCH=${2:-$BIN}; ROUNDS=${3:-1}
PORTS="--native-port 39042 --api-port 39000 --metrics-port 39180"
C="-concurrency ${CONCURRENCY:-16} -partition-count 50000 -clustering-row-count 1 -clustering-row-size 16 -rows-per-request 1 -consistency-level quorum"
run() {  # label nodes rf pids
  local label=$1 nodes=$2 rf=$3 pids=$4
  $BENCH bench $C -nodes $nodes -replication-factor $rf -mode write -workload sequential >/dev/null 2>&1
  for m in read write; do
    out=$($BENCH bench $C -nodes $nodes -replication-factor $rf -mode $m -workload uniform -duration 17s -warmup 2s -server-pid $pids 2>&1)
    ops=$(echo "$out" | awk -F'\t' '/^Operations\/s/ {print $NF}' | tr -d ' ')
    p50=$(echo "$out" | awk '/^  median:/ {print $2; exit}')
    p99=$(echo "$out" | awk '/^  99th:/ {print $2; exit}')
    cpu=$(echo "$out" | awk '/^Server CPU/ {print $3}')
    echo "$label $m ops/s $ops p50 $p50 p99 $p99 server_cpu_us_per_op $cpu load $(cut -d' ' -f1 /proc/loadavg)"
  done
}
for r in $(seq 1 $ROUNDS); do
  D=$(mktemp -d /tmp/bar-one.XXXX)
  $BIN serve --data-dir $D/n1 $PORTS --listen-address 127.0.0.1 >$D/n1.log 2>&1 &
  ONE=$!; sleep 1
  run "single(rf=1)" 127.0.0.1:39042 1 $ONE
  kill $ONE; wait $ONE 2>/dev/null; rm -rf $D

  D=$(mktemp -d /tmp/bar-three.XXXX); PIDS=""
  for n in 1 2 3; do
    printf 'storage_port: 39700\nseed_provider:\n  - class_name: org.apache.cassandra.locator.SimpleSeedProvider\n    parameters:\n      - seeds: "127.0.0.1,127.0.0.2,127.0.0.3"\n' > $D/n$n.yaml
    $BIN serve --config $D/n$n.yaml --data-dir $D/n$n $PORTS --listen-address 127.0.0.$n >$D/n$n.log 2>&1 &
    PIDS="$PIDS${PIDS:+,}$!"
  done
  for i in $(seq 1 60); do
    [ "$($BIN nodetool -h 127.0.0.1 -p 39000 status 2>/dev/null | grep -c '^UN')" = 3 ] && break; sleep 1
  done
  run "three(rf=3)" 127.0.0.1:39042,127.0.0.2:39042,127.0.0.3:39042 3 $PIDS
  kill ${PIDS//,/ }; wait 2>/dev/null; rm -rf $D
done
