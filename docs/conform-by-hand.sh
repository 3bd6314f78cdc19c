#!/usr/bin/env bash
# "Checking someone else's server", as one script the docs check can run: it starts the payments
# server on a free port with the settings the lab's profile declares, runs the conformance kit
# against it, prints the kit's table, and stops the server (Ctrl-C's signal, then a hard stop
# after ten seconds).
set -euo pipefail

cargo build -q -p retrykey-replicas --bin payments
cargo build -q -p retrykey-conform --bin conform
log=$(mktemp)
# `cargo run` replaces itself with the server, so $! is the server's own pid.
cargo run -q -p retrykey-replicas --bin payments -- \
    --listen 127.0.0.1:0 --require-key --retention 3s >"$log" &
server=$!
trap 'kill -KILL "$server" 2>/dev/null || true; rm -f "$log"' EXIT

# The first line the server prints is its address.
for _ in $(seq 300); do
    grep -q '^listening on ' "$log" && break
    kill -0 "$server" 2>/dev/null || { cat "$log"; echo "the server did not start"; exit 1; }
    sleep 0.1
done
URL=$(sed -n 's/^listening on //p' "$log")
[ -n "$URL" ] || { echo "no address after 30 s"; exit 1; }
echo "listening on $URL"
echo

# The kit's verdict is the script's: its exit status is kept for after the server has stopped.
status=0
cargo run -q -p retrykey-conform --bin conform -- --base "$URL" || status=$?

kill -INT "$server"
for _ in $(seq 100); do
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
done
if kill -0 "$server" 2>/dev/null; then
    echo "the server did not stop within 10 s"
    exit 1
fi
wait "$server" || true
exit "$status"
