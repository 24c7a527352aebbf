#!/bin/bash
# DWARF profile of a node under latte's `basic/write.rn` (`-p 16`, 25 s; perf records the
# node for 8 s after 8 s of warm-up):
#   scripts/bench/latte_profile.sh OUT [NODE_BIN]     then: perf report -i OUT.perf.data --no-children
set -e
OUT=$(realpath -m "$1"); BIN=$(realpath "${2:-target/release/cairn}")
LATTE=/work/latte/bin/latte
WL=$(dirname "$(find ~/.cargo/registry/src -path '*latte-cli-*/workloads/basic/write.rn' | sort | tail -1)")
D=$(mktemp -d /tmp/prof-latte.XXXX)
$BIN serve --data-dir $D --native-port 39242 --api-port 39200 --metrics-port 39380 >/dev/null 2>&1 &
NODE=$!
sleep 1
cd $D
$LATTE schema $WL/write.rn -- 127.0.0.1:39242 >/dev/null
$LATTE run $WL/write.rn -d 25s -p 16 -- 127.0.0.1:39242 > $OUT.latte.txt 2>&1 &
B=$!
sleep 8
perf record -F 499 --call-graph dwarf,16384 -p $NODE -o $OUT.perf.data -- sleep 8 2>/dev/null >/dev/null
wait $B
kill $NODE; wait $NODE 2>/dev/null || true
cd /; rm -rf $D
grep -E 'Throughput|Cycles' $OUT.latte.txt | head -3
