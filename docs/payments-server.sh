# Sourced, not run, by the docs' scripts that need a payments server on a free port of
# 127.0.0.1: `start_payments FLAGS...` builds and starts it, waits for the address it prints and
# sets URL; `stop_payments` stops it as Ctrl-C does, then fails if it is still up after ten
# seconds. Whatever happens, the server is killed by its own pid when the script exits, and its
# log (PAYMENTS_LOG, with any file named PAYMENTS_LOG.*) is removed.

start_payments() {
    cargo build -q -p retrykey-replicas --features demo --bin payments
    PAYMENTS_LOG=$(mktemp)
    # `cargo run` replaces itself with the server, so $! is the server's own pid.
    cargo run -q -p retrykey-replicas --features demo --bin payments -- --listen 127.0.0.1:0 "$@" \
        >"$PAYMENTS_LOG" &
    PAYMENTS_PID=$!
    trap 'kill -KILL "$PAYMENTS_PID" 2>/dev/null || true; rm -f "$PAYMENTS_LOG" "$PAYMENTS_LOG".*' \
        EXIT

    # The first line the server prints is its address.
    for _ in $(seq 300); do
        grep -q '^listening on ' "$PAYMENTS_LOG" && break
        if ! kill -0 "$PAYMENTS_PID" 2>/dev/null; then
            cat "$PAYMENTS_LOG"
            echo "the server did not start"
            exit 1
        fi
        sleep 0.1
    done
    URL=$(sed -n 's/^listening on //p' "$PAYMENTS_LOG")
    [ -n "$URL" ] || { echo "no address after 30 s"; exit 1; }
    echo "listening on $URL"
}

stop_payments() {
    kill -INT "$PAYMENTS_PID"
    for _ in $(seq 100); do
        kill -0 "$PAYMENTS_PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$PAYMENTS_PID" 2>/dev/null; then
        echo "the server did not stop within 10 s"
        exit 1
    fi
    wait "$PAYMENTS_PID" || true
}
