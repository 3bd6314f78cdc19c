#!/usr/bin/env bash
# Chapter 6's demo as one command the docs check can run: three payments replicas (each with
# its own memory store, or all on one SQLite file), nine copies of one keyed payment sprayed
# over them at once, then every replica stopped by its own pid.
#   docs/replicas-demo.sh memory|sqlite
set -euo pipefail

case ${1:-} in
    memory) store=memory ;;
    sqlite) store="" ;; # .ci/replicas then opens one new SQLite file for all three
    *) echo "usage: docs/replicas-demo.sh memory|sqlite" >&2; exit 2 ;;
esac

cargo build -q -p retrykey-replicas --features demo --bin payments --bin spray
bin=${CARGO_TARGET_DIR:-target}/debug
log=$(mktemp)
# A non-interactive shell starts background jobs with SIGINT ignored; .ci/replicas stops its
# replicas on SIGTERM as well.
bash .ci/replicas "$bin/payments" 3 "$store" --work-ms 100 >"$log" &
replicas=$!
trap 'kill -TERM "$replicas" 2>/dev/null || true; wait "$replicas" 2>/dev/null || true; rm -f "$log"' EXIT

# .ci/replicas prints each address, then the store line once all three answer.
for _ in $(seq 300); do
    grep -q '^store: ' "$log" && break
    kill -0 "$replicas" 2>/dev/null || { cat "$log"; echo "the replicas did not start"; exit 1; }
    sleep 0.1
done
grep -q '^store: ' "$log" || { echo "the replicas did not start within 30 s"; exit 1; }
sed -n '/^replica .: /p' "$log"
urls=$(sed -n 's/^replica .: //p' "$log" | paste -sd, -)

"$bin/spray" --replicas "$urls" --copies 9

kill -TERM "$replicas"
wait "$replicas" || true
sed -n '/ stopped: /p' "$log"
