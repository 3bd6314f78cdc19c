#!/usr/bin/env bash
# Chapter 4, "The server, by hand", as one script the docs check can run: it starts the payments
# server on a free port, sends the requests the chapter discusses, prints each request and its
# answer, and stops the server (Ctrl-C, then a hard stop after ten seconds).
set -euo pipefail

. "$(dirname "$0")/payments-server.sh"
start_payments

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
    -H 'X-Delay-Ms: 3000' -d '{"amount":5}' >"$PAYMENTS_LOG.bg" &
first=$!
wait_for_attempts 2
request -si "$URL/payments" -H 'Idempotency-Key: k-2' -H 'X-Flaky: k-2' -d '{"amount":5}'
wait "$first"
printf '\n(the first attempt, answered meanwhile)\n%s\n' "$(cat "$PAYMENTS_LOG.bg")"
# The retry after Retry-After: X-Flaky fails only once per token, so this one charges.
request -si "$URL/payments" -H 'Idempotency-Key: k-2' -H 'X-Flaky: k-2' -d '{"amount":5}'

stop_payments
echo
tail -n +2 "$PAYMENTS_LOG"
