#!/bin/bash
# The authorizer's cost by server CPU per operation: authz_ab.sh NODE_BIN on|off [BENCH_BIN]
# Starts a fresh node of NODE_BIN with `authenticator: PasswordAuthenticator` and, for `on`,
# `authorizer: CassandraAuthorizer`; makes a login role `bench` that is not a superuser (with
# `on`, it gets CREATE ON ALL KEYSPACES and, as the creator of the bench's keyspace and table,
# every permission on them: each request is checked through the table's parents); writes
# 50 000 keys, then 17 s of memory-served single-row SELECTs and 17 s of INSERTs (2 s warm-up
# each) from `cairn bench` as `bench`; prints client and server CPU µs per operation with the
# load average. Alternate `off` and `on` several times. Needs .venv (scripts/venv).
BIN=$1; MODE=$2; BENCH=${3:-target/release/cairn}
D=$(mktemp -d /tmp/authz-ab.XXXX)
echo "authenticator: PasswordAuthenticator" > $D/cairn.yaml
[ "$MODE" = on ] && echo "authorizer: CassandraAuthorizer" >> $D/cairn.yaml
$BIN serve --config $D/cairn.yaml --data-dir $D/data --native-port 39042 --api-port 39000 \
  --metrics-port 39180 >/dev/null 2>&1 &
NODE=$!; sleep 2
.venv/bin/python - "$MODE" <<'PY'
import sys
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import Cluster
c = Cluster(["127.0.0.1"], port=39042, protocol_version=4,
            auth_provider=PlainTextAuthProvider(username="cassandra", password="cassandra"))
s = c.connect()
s.execute("CREATE ROLE bench WITH PASSWORD = 'bench' AND LOGIN = true")
if sys.argv[1] == "on":
    s.execute("GRANT CREATE ON ALL KEYSPACES TO bench")
c.shutdown()
PY
C="-nodes 127.0.0.1:39042 -username bench -password bench -concurrency 16 -partition-count 50000 -clustering-row-count 1 -clustering-row-size 16 -rows-per-request 1 -consistency-level one $BENCH_ARGS"
$BENCH bench $C -mode write -workload sequential >/dev/null 2>&1
for m in read write; do
  r=$($BENCH bench $C -mode $m -workload uniform -duration 17s -warmup 2s -server-pid $NODE 2>&1 | grep -E "Server CPU|Client CPU" | awk '{print $3}' | tr '\n' ' ')
  echo "authorizer $MODE $m client/server µs: $r load $(cut -d' ' -f1 /proc/loadavg)"
done
kill $NODE; wait $NODE 2>/dev/null; rm -rf $D
