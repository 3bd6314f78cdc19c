#!/usr/bin/env bash
# "Checking someone else's server", as one script the docs check can run: it starts the payments
# server on a free port with the settings the lab's profile declares, runs the conformance kit
# against it, prints the kit's table, and stops the server (Ctrl-C's signal, then a hard stop
# after ten seconds). Its arguments go to the kit (`--chaos 200 --seed 7`, say).
set -euo pipefail

cargo build -q -p retrykey-conform --bin conform
. "$(dirname "$0")/payments-server.sh"
start_payments --require-key --retention 3s
echo

# The kit's verdict is the script's: its exit status is kept for after the server has stopped.
status=0
cargo run -q -p retrykey-conform --bin conform -- --base "$URL" "$@" || status=$?

stop_payments
exit "$status"
