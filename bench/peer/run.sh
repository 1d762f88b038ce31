#!/usr/bin/env bash
# bench/peer/run.sh — phasegate serve's webhook acknowledgement against a
# palantir/go-githubapp v0.30.0 receiver with a no-op handler (issue 20),
# under the same driver. Builds the peer (bench/peer, its own module) and
# bench/cmd/ackcompare (the bench module) into $OUT (default /tmp/phasegate-ackcompare), then
# runs the comparison; arguments go to ackcompare:
#
#   bench/peer/run.sh                               # 3 rotated rounds of 10 s runs
#   bench/peer/run.sh -duration 30s -rounds 5
#   bench/peer/run.sh -rates 2000,4000,6000 -paced-conns 64
#
# Everything listens on 127.0.0.1; both servers are child processes that
# stop when it ends. See bench/serve/README.md, "Against go-githubapp".
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/phasegate-ackcompare}
mkdir -p "$OUT"
(cd bench/peer && go build -o "$OUT/peer" .)
go -C bench build -o "$OUT/ackcompare" ./cmd/ackcompare
exec "$OUT/ackcompare" -peer "$OUT/peer" "$@"
