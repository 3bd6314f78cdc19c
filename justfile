# The verbs of the lab. `just --list` shows them with their cost.

set shell := ["bash", "-euo", "pipefail", "-c"]

loom_target := "target/loom"

# List the recipes.
default:
    @just --list --unsorted

# Stage 1: the lost-reply story (any flags after `run` go to the program).
run *args:
    cargo run -q -p retrykey -- {{args}}

# Build everything a class runs (debug, loom and release), so no class step waits on a compile.
prepare:
    #!/usr/bin/env bash
    set -euo pipefail
    # Each part says how long it took: on a slow laptop, that shows which one to start early.
    part() {
        local start=$SECONDS what=$1
        shift
        "$@"
        echo "prepare: $what in $((SECONDS - start)) s"
    }
    # Each package is built on its own, as the class commands select it: cargo unifies features
    # across the packages of one invocation, so a --workspace build would not be reused.
    debug() {
        cargo test -q --no-run
        for package in retrykey retrykey-client retrykey-http retrykey-durable retrykey-durable-checks retrykey-replicas retrykey-converter retrykey-outbox retrykey-reconcile retrykey-outbox-checks retrykey-conform retrykey-tests; do
            cargo build -q -p "$package" --bins
            cargo test -q -p "$package" --no-run
        done
        # `just payments` and `just spray` ask for the stores' demo feature: a build of its own.
        cargo build -q -p retrykey-replicas --features demo --bins
        # The database's edge, `just pg-faults` and `just disk-full`, as their recipes build it.
        cargo build -q -p retrykey-durable-checks -p retrykey-faults --bin crash-server --bin pg-faults --bin disk-full
        # `just outbox-faults` stops the outbox's programs at their crash points: a build of its own.
        cargo build -q -p retrykey-outbox -p retrykey-converter --bins --features retrykey-outbox/failpoints,retrykey-converter/failpoints
    }
    labs() {
        for lab in labs/*/; do cargo test -q -p "$(basename "$lab")" --no-run; done
    }
    loom() {
        for package in retrykey split-critical-section; do
            RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR={{loom_target}} cargo test -q -p "$package" --test it --no-run
        done
    }
    # The stress test, the simulator, and the load programs the chapters point to. The criterion benchmarks and
    # the appendices' programs (`just fuzz`, `flood`, `slow-clients`, `store-load`) build on
    # first use, reusing these builds' dependencies.
    release() {
        cargo test -q --release -p retrykey --test it stress:: --no-run
        cargo build -q --release -p retrykey-benches --bin load --bin pgbench-ratio --bin outbox-load
        cargo build -q --release -p retrykey-tests --bin simulate
    }
    # The release builds lock target/release and the others target/debug or target/loom, so
    # they run side by side: each build has stretches where one crate holds a single core.
    release_log=$(mktemp)
    set -m
    part "the stress run, the simulator and the load programs (release, side by side)" release >"$release_log" 2>&1 &
    release_pid=$!
    set +m
    # Job control made it a process group of its own: stopped whole if the rest fails.
    trap 'kill -- "-$release_pid" 2>/dev/null || true; rm -f "$release_log"' EXIT
    part "the tests, programs and crash-point builds (debug)" debug
    part "the variants' tests" labs
    part "the loom models" loom
    # The exercise checker's own test builds a scratch copy of the workspace; run it once.
    part "the exercise checker's scratch copy" cargo test -q -p retrykey-tests --test it exercise::
    wait "$release_pid" || { cat "$release_log" >&2; exit 1; }
    cat "$release_log"
    echo "prepared in $SECONDS s: the class commands now run without a compile step"

# Every default member's tests: core, stages, contract, in-process variant checks, docs (minutes).
test:
    cargo test

# Run each negative variant's real test suite; pass only if each fails exactly as declared.
# Without RETRYKEY_PG_URL the PostgreSQL variant is skipped and named; `--require-all` (or CI) fails on a skip.
[no-exit-message]
test-negatives *variants:
    @cargo run -q -p retrykey-tests --bin negatives -- {{variants}}

# Loom models of the core ledger (must pass) and of split-critical-section (must fail).
loom:
    RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR={{loom_target}} cargo test -q -p retrykey --test it
    @cargo run -q -p retrykey-tests --bin negatives -- --loom-only

# 64 threads on one key, then on 64 distinct keys, STRESS_ROUNDS rounds (default 50), release mode.
stress rounds="50":
    STRESS_ROUNDS={{rounds}} cargo test -q --release -p retrykey --test it stress::

# Criterion benchmarks of the core ledger (under a minute once built).
bench *args:
    cargo bench -p retrykey-benches --bench ledger -- {{args}}

# The one change a variant makes to the code it mirrors.
diff variant:
    @cargo run -q -p retrykey-tests --bin negatives -- --diff {{variant}}

# Copy a variant into exercises/ to fix it, or `--blank PIECE` to write a correct piece yourself (`--as NAME`, `--force`; instant).
[no-exit-message]
exercise +args:
    @cargo run -q -p retrykey-tests --bin exercise -- new {{args}}

# What still fails in an exercise: a variant's declared checks, or a blank piece's first failing check in teaching order, or "fixed" (seconds).
[no-exit-message]
check-exercise name:
    @cargo run -q -p retrykey-tests --bin exercise -- check {{name}}

# The class's plan: each page's session from what a student reads and writes, at the sourced pace in docs/src/class.toml, then the core's, the take-home work's and the total (`--parts` shows each piece's reads and writes; seconds).
class-plan *args:
    @cargo run -q -p retrykey-tests --bin class-plan -- {{args}}

# Where you stand: every piece and exercise by chapter and track (not started, N of M checks pass, fixed), then the next step; `--watch` reruns on each save (seconds).
[no-exit-message]
progress *args:
    @cargo run -q -p retrykey-tests --bin progress -- {{args}}

# Every write-it-yourself piece: the blank fails its first check, the reference passes all, each wrong solution is refused (minutes).
check-blanks:
    cargo test -q -p retrykey-tests --test it blanks:: -- --include-ignored

# Delete an exercise's copy (whole, so a build running meanwhile never sees it half gone; instant).
[no-exit-message]
remove-exercise name:
    @cargo run -q -p retrykey-tests --bin exercise -- remove {{name}}

# Formatting and clippy, warnings denied (the shop's formatting too).
lint:
    cargo fmt --all --check
    cargo fmt --check --manifest-path examples/shop/Cargo.toml
    cargo clippy --workspace --all-targets -q -- -D warnings

# The shop's packages and cold build time beside the same service without the lab's crates (minutes: two cold builds).
shop-weight:
    bash examples/shop/weight.sh

# The service outside the lab (examples/shop, its own workspace): clippy, then its tests on SQLite, and on PostgreSQL where RETRYKEY_PG_URL is set (minutes cold: its own build).
shop:
    cd examples/shop && CARGO_TARGET_DIR=../../target/shop cargo clippy -q --all-targets -- -D warnings
    cd examples/shop && CARGO_TARGET_DIR=../../target/shop cargo test -q

# Every command shown in docs/ and README.md, output compared (includes the slow ones).
docs-check:
    RETRYKEY_DOCS_SLOW=1 cargo test -q -p retrykey-tests --test it walkthrough::

# What CI runs: lint, the book (built, then checked in Chromium), every test with every docs command (slow ones too), loom, variants, a short stress run, the flood's bounds, mutation testing of the core.
ci:
    #!/usr/bin/env bash
    set -euo pipefail
    # Each step says how long it took, so a slow CI run shows where its time went.
    # The status is kept by hand: in a `&&` or `||` list bash ignores `set -e` inside the
    # function, so a failing step would otherwise return the status of its last `echo`.
    step() {
        local start=$SECONDS rc=0
        echo "== ci: $*"
        "$@" || rc=$?
        echo "== ci: $* took $((SECONDS - start)) s"
        if [ "$rc" -ne 0 ]; then
            echo "== ci: $* FAILED with exit $rc"
        fi
        return "$rc"
    }
    # Runs lanes (each a chain of steps) side by side, and prints each lane's log when all have
    # ended. Lanes never wait on one another's build lock for long: cargo locks each profile's
    # folder (target/debug, target/release, target/loom), and the mutation run builds in a copy.
    # Each lane is a process group of its own, stopped whole by its id if CI is interrupted, or
    # when the lanes run past `limit` seconds: a hung step then fails, and its lane's log (which
    # names the step it was in) is printed, well before CI's own limit would cut everything off.
    pids=()
    stop_lanes() { for pid in "${pids[@]}"; do kill -- "-$pid" 2>/dev/null || true; done; }
    trap 'stop_lanes; exit 130' INT TERM
    together() {
        local limit=$1 start=$SECONDS logs failed=0 i watchdog
        shift
        logs=$(mktemp -d)
        pids=()
        # Job control gives each background lane a process group of its own.
        set -m
        i=0
        for steps in "$@"; do
            echo "== ci: side by side: $steps"
            bash -euo pipefail -c "$steps" >"$logs/$i" 2>&1 &
            pids+=("$!")
            i=$((i + 1))
        done
        (
            sleep "$limit"
            echo "== ci: side by side ran past its limit of $limit s: stopping its lanes"
            stop_lanes
        ) &
        watchdog=$!
        i=0
        for steps in "$@"; do
            if ! wait "${pids[$i]}"; then
                failed=1
                echo "== ci: FAILED: $steps" >>"$logs/$i"
            fi
            cat "$logs/$i"
            i=$((i + 1))
        done
        kill -- "-$watchdog" 2>/dev/null || true
        wait "$watchdog" 2>/dev/null || true
        set +m
        rm -r "$logs"
        pids=()
        echo "== ci: side by side took $((SECONDS - start)) s"
        return "$failed"
    }
    # The docs walkthrough (in `cargo test`) adds and removes members under exercises/. A cargo
    # command started meanwhile in this workspace can glob a member, then find its manifest gone;
    # so the other lane starts only the mutation run (which builds in a copy) until tests end.
    tested=$(mktemp -d)/tested
    tests_then_mark() {
        local rc=0
        step env RETRYKEY_DOCS_SLOW=1 cargo test || rc=$?
        touch "$tested"
        return "$rc"
    }
    after_tests() {
        local waited=0
        while [ ! -e "$tested" ]; do
            if [ "$waited" -ge 3600 ]; then
                echo "== ci: cargo test did not end within an hour" >&2
                return 1
            fi
            sleep 1
            waited=$((waited + 1))
        done
        echo "== ci: waited ${waited} s for cargo test to end"
    }
    export -f step tests_then_mark after_tests
    export tested
    # The limits are far above what each part takes on two cores (about 1, 4 and 17 minutes).
    together 900 "step just lint" "step just book-check"
    # The simulator runs in release; its build goes beside the tests' own.
    together 1200 "step cargo test -q --no-run" \
        "step cargo build -q --release -p retrykey-tests --bin simulate"
    together 3000 "tests_then_mark && step just test-negatives" \
        "step just mutants && after_tests && step just shop && step just loom && step just stress 5 && step just simulate-ci && step just check-blanks && step just flood-check && step just pg-faults && step just foreign-matrix sqlite && step just foreign-matrix postgres && step just disk-full && step cargo test -q --release -p retrykey-benches --bin soak && step just soak --minutes 1 --store memory && step just soak --minutes 1 --store sqlite && step just soak --minutes 1 --store postgres"
    rm -r "$(dirname "$tested")"
    echo "== ci: all steps passed in $SECONDS s"

# Mutation testing of the core crate: at least 95% of mutants caught, survivors as listed in the book (minutes).
[no-exit-message]
mutants *args:
    #!/usr/bin/env bash
    set -euo pipefail
    source .ci/tools
    need_mutants
    cargo run -q -p retrykey-tests --bin mutants -- core {{args}}

# Mutation testing of the HTTP engine and memory store, and the client's executor, policy and budget: at least 85% each (many minutes).
[no-exit-message]
mutants-slow *args:
    #!/usr/bin/env bash
    set -euo pipefail
    source .ci/tools
    need_mutants
    cargo run -q -p retrykey-tests --bin mutants -- http client {{args}}

# --- Stage 8: simulation ---

# Stage 8: run seeds in the simulated network and judge each history (`--seeds N`, `--from S`, `--scenario NAME`, `--variant NAME`; `--seed S --trace [--svg FILE]` replays one; `--help` lists the rest; release build, minutes the first time).
[no-exit-message]
simulate *args:
    @cargo run -q --release -p retrykey-tests --bin simulate -- {{args}}

# The simulator's CI budget: the correct stack keeps every rule over 10,000 seeds of lost-reply, 5,000 of restart-surviving and 5,000 of foreign (about a minute once built).
[no-exit-message]
simulate-ci:
    @cargo run -q --release -p retrykey-tests --bin simulate -- --seeds 10000
    @cargo run -q --release -p retrykey-tests --bin simulate -- --scenario restart-surviving --seeds 5000
    @cargo run -q --release -p retrykey-tests --bin simulate -- --scenario foreign --seeds 5000

# --- Stage 3: retries ---

# Stage 3: the lost reply over loopback TCP (flags go to the program, e.g. `--fresh-key`).
lost-reply-tcp *args:
    cargo run -q -p retrykey-client --example lost-reply-tcp -- {{args}}

# Stage 3: calls to a failing dependency through nested retrying layers (e.g. `--layers 4`).
amplification *args:
    cargo run -q -p retrykey-client --example amplification -- {{args}}

# Stage 3: criterion benchmark of the retry executor's cost per attempt (under a minute once built).
bench-client *args:
    cargo bench -p retrykey-benches --bench executor -- {{args}}

# --- Stage 4: HTTP ---

# Stage 4: five clients retry one payment through the Idempotency-Key layer (seconds).
five-clients:
    cargo run -q -p retrykey-http --example five-clients

# Stage 4: the payments server behind the layer (`just payments --listen 127.0.0.1:8080`; `--store sqlite:PATH` in Stage 6).
payments *args:
    @cargo run -q -p retrykey-replicas --features demo --bin payments -- {{args}}

# The conformance kit against any Idempotency-Key server (`--base URL`, `--profile FILE`, `--json`, `--check NAME`, `--list`, `--init`, `--chaos N [--seed S]`; the lab's payments profile by default; seconds).
[no-exit-message]
conform *args:
    @cargo run -q -p retrykey-conform --bin conform -- {{args}}

# The kit against five Idempotency-Key libraries from PyPI and npm, pinned, each mounted in front of the same payments handler and judged by its own profile; rewrites crates/retrykey-conform/peers/REPORT.md (needs python3, node and npm; about a minute, more on a first install).
conform-peers:
    cargo build -q -p retrykey-conform --bin conform
    bash crates/retrykey-conform/peers/run.sh "${CARGO_TARGET_DIR:-target}/debug/conform" crates/retrykey-conform/peers/REPORT.md

# The conformance kit against an HTTP variant served behind the payments handler, or `correct`; `--chaos N` for a chaos run instead (seconds, a minute for chaos).
[no-exit-message]
conform-variant name *args:
    @cargo run -q -p retrykey-tests --bin conform-variant -- {{name}} {{args}}

# Stage 4: the HTTP check suite against the correct layer (seconds).
test-http:
    cargo test -q -p retrykey-http

# Stage 4: loopback load, bare handler vs fresh key / replay / no key (under a minute once built, release).
load *args:
    cargo run -q --release -p retrykey-benches --bin load -- {{args}}

# --- Stage 5: durable ---

# `just crash-matrix <variant>` runs a Stage 5 SQLite variant's crash server instead.
# Stage 5: crash the ledger process at every point, restart, retry with the same key; the table (seconds).
crash-matrix variant="":
    #!/usr/bin/env bash
    set -euo pipefail
    if [ -n "{{variant}}" ]; then
        cargo build -q -p {{variant}} --bin crash-server-{{variant}}
        exec cargo run -q -p retrykey-durable-checks --bin crash-matrix -- --variant {{variant}} --backend sqlite
    fi
    cargo build -q -p retrykey-durable-checks --bin crash-server
    exec cargo run -q -p retrykey-durable-checks --bin crash-matrix

# Stage 5: criterion benchmarks, SQLite (FULL, NORMAL) and PostgreSQL (1, 8 connections) (under a minute once built).
bench-durable *args:
    cargo bench -p retrykey-benches --bench durable -- {{args}}

# Stage 5: PostgreSQL new operations/s against `pgbench -N` at 1 and 8 clients, same run; the ratio (a minute or so).
pgbench-ratio *args:
    cargo run -q --release -p retrykey-benches --bin pgbench-ratio -- {{args}}

# Stage 6: the layer over PostgreSQL, SQLite and memory under loopback load, each fresh key beside its floor (pgbench's two commits, SQLite's commits), replays beside `pgbench -S`, five rounds; bytes per stored response (about 90 s once built, release).
store-load *args:
    cargo run -q --release -p retrykey-benches --bin store-load -- {{args}}

# Stage 6: the key table at production size: fills a store (`postgres`, the default, or `sqlite`) to 1M and 10M answered keys, half expired, and times the fresh key at 0, 1M and 10M with the sweeper running; one line per size (minutes: the fill; release).
store-scale store="postgres" *args:
    cargo run -q --release -p retrykey-benches --bin store-scale -- {{store}} {{args}}

# Stage 5: start a local PostgreSQL; prints the line to evaluate: eval "$(just postgres)".
postgres:
    bash .ci/postgres

# --- Stage 6: replicas ---

# Stage 6: N payments replicas on free ports over one store (default: a temporary SQLite file; or `postgres`); Ctrl-C stops them.
replicas n="3" store="" *args:
    cargo build -q -p retrykey-replicas --features demo --bin payments
    bash .ci/replicas "${CARGO_TARGET_DIR:-target}/debug/payments" {{n}} "{{store}}" {{args}}

# Stage 6: concurrent copies of one payment over replicas (`just spray --replicas URL,URL,URL --copies 9`).
spray *args:
    cargo run -q -p retrykey-replicas --features demo --bin spray -- {{args}}

# Stages 5 and 6: keyed payments on two replicas and the durable ledger while a PostgreSQL server of its own restarts fast, crashes, is severed and loses COMMIT replies; the table (about a minute once built).
pg-faults:
    cargo build -q -p retrykey-replicas --features demo --bin payments
    cargo build -q -p retrykey-durable-checks -p retrykey-faults --bin crash-server --bin pg-faults
    "${CARGO_TARGET_DIR:-target}/debug/pg-faults"

# Stage 9: the checkout on `sqlite` (default) or `postgres` (RETRYKEY_PG_URL) killed with SIGKILL at each point of its path, crossed with each provider fault, then settled by the client's retry or the completer; one table, every row exact (about a minute and a half once built).
foreign-matrix database="sqlite":
    @cargo build -q -p retrykey-foreign --features failpoints --bin provider --bin checkout
    @cargo build -q -p retrykey-faults --bin foreign-matrix
    @"${CARGO_TARGET_DIR:-target}/debug/foreign-matrix" {{database}}

# Stage 9: one run of the checkout's completer, bounded (`--store sqlite:PATH|postgres --provider URL [--idle 1m] [--limit 100]`).
foreign-complete *args:
    @cargo run -q -p retrykey-foreign --features demo --bin checkout -- complete {{args}}

# Stage 9: one run of the checkout's reaper, bounded (`--store sqlite:PATH|postgres [--retention 24h] [--limit 1000]`).
foreign-reap *args:
    @cargo run -q -p retrykey-foreign --features demo --bin checkout -- reap {{args}}

# Stages 5 and 6: keyed payments on the SQLite store (`sqlite`) or the durable SQLite ledger (`ledger`), both by default, while the small tmpfs under their files fills up and frees again; the table (as root; seconds once built).
disk-full target="":
    cargo build -q -p retrykey-replicas --features demo --bin payments
    cargo build -q -p retrykey-durable-checks -p retrykey-faults --bin crash-server --bin disk-full
    "${CARGO_TARGET_DIR:-target}/debug/disk-full" {{target}}

# --- Stage 7: the outbox ---

# Stage 7: accept a job into the outbox, or list the events (`just documents --db sqlite:PATH accept --key K --job J --units N`).
[no-exit-message]
documents *args:
    @cargo run -q -p retrykey-outbox --bin documents -- {{args}}

# Stage 7: the dispatcher, delivering the outbox's events at least once until Ctrl-C (`--db`, `--consumer URL`; `--help` lists the rest).
dispatcher *args:
    cargo run -q -p retrykey-outbox --bin dispatcher -- {{args}}

# Stage 7: the consumer, converting at most once per event id until Ctrl-C (`--db`, `--listen`).
converter *args:
    cargo run -q -p retrykey-converter --bin converter -- {{args}}

# Stage 7: what is uncertain (`list`), and the operator's actions (`redrive EVENT`, `fail EVENT --reason TEXT`); `--json` for scripts.
[no-exit-message]
reconcile *args:
    @cargo run -q -p retrykey-reconcile --bin reconcile -- {{args}}

# Stage 7: kill, stop and restart the outbox's processes mid-run and count conversions; the table (SQLite in seconds; with PostgreSQL under a minute).
[no-exit-message]
outbox-faults backend="all":
    @cargo build -q -p retrykey-outbox -p retrykey-converter --bins --features retrykey-outbox/failpoints,retrykey-converter/failpoints
    @cargo run -q -p retrykey-outbox-checks --bin outbox-faults -- --backend {{backend}}

# Stage 7: jobs accepted, events dispatched and accepted-to-converted latency, against pgbench -N in the same run (a minute or so, release).
outbox-load *args:
    cargo run -q --release -p retrykey-benches --bin outbox-load -- {{args}}

# --- Hostile clients ---

# Hostile input at length: the key parser and the layer's property tests with 100,000 cases each, release (seconds once built).
fuzz cases="100000":
    #!/usr/bin/env bash
    set -euo pipefail
    cargo build -q --release -p retrykey-http --tests
    start=$(date +%s%N)
    PROPTEST_CASES={{cases}} cargo test -q --release -p retrykey-http --test it hostile_input::
    tenths=$(( ($(date +%s%N) - start) / 100000000 ))
    echo "fuzz: {{cases}} cases for each property of hostile_input.rs in $((tenths / 10)).$((tenths % 10)) s"

# 100,000 fresh keys with 1 KiB bodies into a store bounded at 64 MiB: refusals, evictions, memory growth (seconds once built).
flood *args:
    cargo build -q --release -p retrykey-replicas --features demo --bin payments
    cargo build -q --release -p retrykey-benches --bin flood
    target/release/flood --payments target/release/payments {{args}}

# The flood's bounds checked on the debug build that `cargo test` made, with no release build (CI runs this).
flood-check *args:
    cargo build -q -p retrykey-replicas --features demo --bin payments
    cargo build -q -p retrykey-benches --bin flood
    target/debug/flood --payments target/debug/payments {{args}}

# Keyed payments' p50/p99 with no attack and while 1,000 connections hold unfinished heads, same run (seconds once built).
slow-clients *args:
    cargo build -q --release -p retrykey-replicas --features demo --bin payments
    cargo build -q --release -p retrykey-benches --bin slow-clients
    target/release/slow-clients --payments target/release/payments {{args}}

# Stage 6: a steady mix of fresh keys, replays, conflicts, keyless and abandoned payments against one payments process (`--minutes M`, default 10; `--store memory|sqlite|postgres`; `--rate R`); a row per minute, fails on growth, p99 drift or a wrong answer.
soak *args:
    cargo build -q --release -p retrykey-replicas --features demo --bin payments
    cargo build -q --release -p retrykey-benches --bin soak
    target/release/soak --payments target/release/payments {{args}}

# --- The book ---

# Redraw the SVG next to each diagram source in docs/src/diagrams (offline, seconds).
diagrams:
    cargo run -q -p retrykey-tests --bin diagrams

# Build the walkthrough into docs/book with mdBook; any mdBook WARN or ERROR fails it (seconds).
book:
    #!/usr/bin/env bash
    set -euo pipefail
    source .ci/tools
    need_mdbook
    log=$(mktemp)
    trap 'rm -f "$log"' EXIT
    # mdBook exits 0 even after a failed {{{{#include}}, so its log is the verdict.
    mdbook build docs 2>"$log" || { cat "$log" >&2; exit 1; }
    if sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^[[:space:]]*(WARN|ERROR)' >&2; then
        echo "book: mdBook reported the lines above; the book must build without a warning" >&2
        exit 1
    fi
    echo "book: built docs/book ($(find docs/book -name '*.html' | wc -l) pages)"

# Self-test the checker on its fixture, then load every built page in headless Chromium (under a minute).
book-check: book
    #!/usr/bin/env bash
    set -euo pipefail
    source .ci/tools
    need_node
    need_chromium
    cd docs/check
    [ -d node_modules ] || npm ci --no-audit --no-fund --silent
    node self-test.mjs
    node book-check.mjs ../book
