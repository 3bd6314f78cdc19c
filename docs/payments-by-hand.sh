#!/usr/bin/env bash
# Chapter 4, "The server, by hand", as one script the docs check can run: it starts the payments
# server on a free port, sends the requests the chapter discusses, prints each request and its
# answer, and stops the server (Ctrl-C, then a hard stop after ten seconds).
set -euo pipefail

cargo build -q -p retrykey-replicas --bin payments
log=$(mktemp)
# `cargo run` replaces itself with the server, so $! is the server's own pid.
cargo run -q -p retrykey-replicas --bin payments -- --listen 127.0.0.1:0 >"$log" &
server=$!
trap 'kill -KILL "$server" 2>/dev/null || true; rm -f "$log" "$log.bg"' EXIT

# The first line the server prints is its address.
for _ in $(seq 300); do
    grep -q '^listening on ' "$log" && break
    kill -0 "$server" 2>/dev/null || { cat "$log"; echo "the server did not start"; exit 1; }
    sleep 0.1
done
URL=$(sed -n 's/^listening on //p' "$log")
[ -n "$URL" ] || { echo "no address after 30 s"; exit 1; }
echo "listening on $URL"

# Prints a curl request as you would type it (with $URL for the address), sends it with a time
# limit, and prints the answer.
request() {
    local shown=(curl) arg
    for arg in "$@"; do
        if [[ $arg =~ [^A-Za-z0-9_./:=-] ]]; then arg="'$arg'"; fi
        shown+=("${arg/#$URL/\$URL}")
    done
    printf '\n> %s\n' "${shown[*]}"
    local answer
    answer=$(curl --max-time 10 "$@")
    printf '%s\n' "$answer"
}

# Waits until the handler has run `n` times: the slow first attempt has then arrived.
wait_for_attempts() {
    for _ in $(seq 100); do
        curl -s --max-time 5 "$URL/payments/count" | grep -q "\"attempts\":$1}" && return
        sleep 0.1
    done
    echo "the handler never reached $1 attempts"
    exit 1
}

json=(-H 'Content-Type: application/json')
request -si "$URL/payments" -H 'Idempotency-Key: "k-1"' "${json[@]}" -d '{"amount": 5}'
request -si "$URL/payments" -H 'Idempotency-Key: k-1' "${json[@]}" -d '{ "amount":5 }'
request -s "$URL/payments/count"

# A first attempt that is slow (X-Delay-Ms) and then fails (X-Flaky), and a duplicate of it.
printf '\n> %s &\n' "curl -si \$URL/payments -H 'Idempotency-Key: k-2' -H 'X-Flaky: k-2' -H 'X-Delay-Ms: 3000' -d '{\"amount\":5}'"
curl -si --max-time 10 "$URL/payments" -H 'Idempotency-Key: k-2' -H 'X-Flaky: k-2' \
    -H 'X-Delay-Ms: 3000' -d '{"amount":5}' >"$log.bg" &
first=$!
wait_for_attempts 2
request -si "$URL/payments" -H 'Idempotency-Key: k-2' -H 'X-Flaky: k-2' -d '{"amount":5}'
wait "$first"
printf '\n(the first attempt, answered meanwhile)\n%s\n' "$(cat "$log.bg")"
# The retry after Retry-After: X-Flaky fails only once per token, so this one charges.
request -si "$URL/payments" -H 'Idempotency-Key: k-2' -H 'X-Flaky: k-2' -d '{"amount":5}'

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
echo
tail -n +2 "$log"
