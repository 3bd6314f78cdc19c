#!/usr/bin/env bash
# Chapter 7's demos as commands the docs check can run, each on fresh files in a temporary
# folder, every process it starts stopped by its own pid:
#   docs/outbox-demo.sh deliver     a consumer and a dispatcher; three jobs (and a retry) delivered
#   docs/outbox-demo.sh reconcile   the consumer down: what the operator sees, and the two actions
set -euo pipefail

case ${1:-} in
    deliver | reconcile) demo=$1 ;;
    *) echo "usage: docs/outbox-demo.sh deliver|reconcile" >&2; exit 2 ;;
esac

cargo build -q -p retrykey-outbox -p retrykey-converter -p retrykey-reconcile --bins
bin=${CARGO_TARGET_DIR:-target}/debug
dir=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do
        # Each step may fail (the process is gone already); the clean-up goes on regardless.
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$dir"
}
trap cleanup EXIT
documents=(--db "sqlite:$dir/documents.sqlite")
consumer_db=(--db "sqlite:$dir/consumer.sqlite")

# Starts the consumer on a free port and waits for its address.
start_consumer() {
    # The log exists before the consumer starts: the wait below reads it at once, and the
    # background job's own redirection may not have created it yet.
    : >"$dir/converter.log"
    "$bin/converter" "${consumer_db[@]}" --listen "127.0.0.1:${port:-0}" >>"$dir/converter.log" 2>&1 &
    converter=$!
    pids+=("$converter")
    for _ in $(seq 300); do
        grep -q '^listening on ' "$dir/converter.log" && break
        sleep 0.1
    done
    url=$(sed -n 's/^listening on //p' "$dir/converter.log")
    [ -n "$url" ] || { cat "$dir/converter.log"; echo "the consumer did not start"; exit 1; }
    port=${url##*:}
}

# Waits (at most 30 s) until every event is delivered.
wait_delivered() {
    for _ in $(seq 300); do
        # Done when no job's line says anything but delivered.
        "$bin/documents" "${documents[@]}" events | grep '^job ' | grep -v ' delivered, ' >/dev/null ||
            return 0
        sleep 0.1
    done
    echo "not every event was delivered within 30 s"
    exit 1
}

# Stops a process with SIGTERM, waits for it, then prints its last line after its name.
stop() {
    kill -TERM "$1"
    wait "$1" 2>/dev/null || true
    echo "$3 $(tail -n 1 "$2")"
}

accept() {
    "$bin/documents" "${documents[@]}" accept --key "$1" --job "$2" --units "$3"
}

if [ "$demo" = deliver ]; then
    start_consumer
    "$bin/dispatcher" "${documents[@]}" --consumer "$url" --owner dispatcher-a >"$dir/dispatcher.log" 2>&1 &
    dispatcher=$!
    pids+=("$dispatcher")
    accept job-1 report.docx 7
    accept job-2 minutes.docx 2
    accept job-3 slides.docx 5
    accept job-2 minutes.docx 2 # a client's retry: the same answer, nothing written
    wait_delivered
    "$bin/documents" "${documents[@]}" events
    stop "$dispatcher" "$dir/dispatcher.log" dispatcher
    stop "$converter" "$dir/converter.log" converter
    exit 0
fi

# reconcile: a dispatcher with a long redelivery wait, and no consumer yet on the port it was
# given. Its jitter is seeded, so the run repeats exactly. Each delivery's three attempts are
# refused at once, and its budget (the default 10 s) holds them many times over: a delivery
# ends because its attempts ran out, however busy the machine.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin/dispatcher" "${documents[@]}" --consumer "http://127.0.0.1:$port" --owner dispatcher-a \
    --attempts 3 --redelivery-base 60s --redelivery-cap 60s \
    --seed ${SEED:-7} >"$dir/dispatcher.log" 2>&1 &
dispatcher=$!
pids+=("$dispatcher")
first=$(accept job-1 report.docx 7 | sed 's/.*, event //')
second=$(accept job-2 minutes.docx 2 | sed 's/.*, event //')
# Wait until both deliveries have failed and wait for their next try.
for _ in $(seq 300); do
    failed=$("$bin/reconcile" "${documents[@]}" --json list --after 1ms | grep -c '"last_error": "connection refused' || true)
    [ "$failed" = 2 ] && break
    sleep 0.1
done
sleep 1
show() {
    echo "> $1"
    shift
    "$@" 2>&1 || echo "(status $?)"
}
show "reconcile list --after 1s" "$bin/reconcile" "${documents[@]}" list --after 1s
show "reconcile fail <job 1's event> --reason \"customer withdrew the job\"" \
    "$bin/reconcile" "${documents[@]}" fail "$first" --reason "customer withdrew the job"
show "reconcile fail <job 1's event> --reason \"customer withdrew the job\"" \
    "$bin/reconcile" "${documents[@]}" fail "$first" --reason "customer withdrew the job"
show "reconcile redrive no-such-event" "$bin/reconcile" "${documents[@]}" redrive no-such-event
echo "(the consumer starts)"
start_consumer
show "reconcile redrive <job 2's event>" "$bin/reconcile" "${documents[@]}" redrive "$second"
for _ in $(seq 300); do
    "$bin/documents" "${documents[@]}" events | grep "event $second delivered" >/dev/null && break
    sleep 0.1
done
show "documents events" "$bin/documents" "${documents[@]}" events
show "reconcile list --after 1s" "$bin/reconcile" "${documents[@]}" list --after 1s
stop "$dispatcher" "$dir/dispatcher.log" dispatcher
stop "$converter" "$dir/converter.log" converter
