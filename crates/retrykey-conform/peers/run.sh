#!/usr/bin/env bash
# The conformance kit against third-party Idempotency-Key libraries, each mounted in front of the
# lab's payments handler by a small server in its own language (servers/), each judged by its own
# profile (<name>.toml), and a Markdown report of what the kit found.
#
#   crates/retrykey-conform/peers/run.sh KIT REPORT.md      (from the repository's root)
#
# KIT is the conform binary (target/debug/conform); REPORT.md is written. The packages go into
# target/peers/ (a Python venv per library and one node_modules), with a time limit: a library
# whose packages cannot be installed is named in the report as not run, and the script goes on.
# Servers listen on 127.0.0.1 only, each is stopped by its own PID, and every step has a limit.
set -euo pipefail

if [[ $# -ne 2 ]]; then
    echo "usage: $0 KIT REPORT.md" >&2
    exit 2
fi
kit=$1
report=$2
peers=crates/retrykey-conform/peers
scratch=target/peers
out=$scratch/out

if [[ ! -f $peers/run.sh ]]; then
    echo "run this from the repository's root (no $peers/run.sh here)" >&2
    exit 2
fi
if [[ ! -x $kit ]]; then
    echo "no kit binary at $kit" >&2
    exit 2
fi
for tool in python3 curl timeout; do
    if ! command -v "$tool" >/dev/null; then
        echo "$tool is needed (free ports and the report, a server's readiness, time limits)" >&2
        exit 2
    fi
done

# Seconds: installing one registry's packages, a server's start, one kit run.
install_limit=300
start_limit=30
kit_limit=180

mkdir -p "$scratch"
rm -rf "$out"
mkdir -p "$out"

# name | language | server under servers/ | its package | what serves it (versions in the report)
libraries=(
    "express-idempotency|node|express-idempotency.js|express-idempotency|express"
    "node-idempotency-nestjs|node|node-idempotency-nestjs.js|@node-idempotency/nestjs|@node-idempotency/core @nestjs/core @nestjs/platform-express"
    "asgi-idempotency-header|python|asgi-idempotency-header.py|asgi-idempotency-header|starlette uvicorn"
    "django-idempotency-key|python|django-idempotency-key.py|django-idempotency-key|Django waitress"
    "fastapi-idempotency-key|python|fastapi-idempotency-key.py|fastapi-idempotency-key|starlette uvicorn"
)

server_pid=
stop_server() {
    local pid=$server_pid
    server_pid=
    [[ -n $pid ]] || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}
trap stop_server EXIT
trap 'exit 130' INT TERM

# A log's first error line (the client's own first), else its last line: a skip's reason.
why() {
    local line
    line=$(grep -m1 -E '^(ERROR:|npm error code|npm ERR! code)' "$1" 2>/dev/null || true)
    [[ -n $line ]] || line=$(grep -m1 -iE 'error|could not|failed|not found' "$1" 2>/dev/null || true)
    [[ -n $line ]] || line=$(tail -n1 "$1" 2>/dev/null || true)
    printf '%s' "${line:0:200}" | tr '\t' ' '
}

fingerprint() {
    cat "$@" | sha256sum | cut -d' ' -f1
}

# --- Python: a venv per library (their pins differ), made when first needed -----------------
# python_install NAME: 0 when target/peers/venv/NAME holds requirements/NAME.txt, else 1 with
# the reason in $python_why.
python_why=
python_install() {
    local venv=$scratch/venv/$1 requirements=$peers/requirements/$1.txt stamp
    stamp="$(fingerprint "$requirements") $(python3 --version 2>&1)"
    if [[ -f $venv/.installed && $(cat "$venv/.installed") == "$stamp" ]]; then
        return 0
    fi
    rm -rf "$venv"
    mkdir -p "$scratch/venv"
    if ! timeout 60 python3 -m venv "$venv" >"$out/$1.venv.log" 2>&1; then
        python_why="python3 -m venv failed: $(why "$out/$1.venv.log")"
        return 1
    fi
    if ! timeout "$install_limit" "$venv/bin/pip" install --disable-pip-version-check \
        --timeout 20 --retries 1 -q -r "$requirements" >"$out/$1.pip.log" 2>&1; then
        python_why="pip install from PyPI failed or timed out: $(why "$out/$1.pip.log")"
        return 1
    fi
    printf '%s' "$stamp" >"$venv/.installed"
}

# --- Node: one node_modules for both Node peers ---------------------------------------------
node_dir=$scratch/node
node_ready=
node_why=
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    node_why="node or npm is not installed"
else
    node_stamp="$(fingerprint "$peers/package.json" "$peers/package-lock.json") $(node --version)"
    if [[ -f $node_dir/.installed && $(cat "$node_dir/.installed") == "$node_stamp" ]]; then
        node_ready=1
    else
        rm -rf "$node_dir"
        mkdir -p "$node_dir"
        cp "$peers/package.json" "$peers/package-lock.json" "$node_dir/"
        if (cd "$node_dir" && timeout "$install_limit" npm ci --ignore-scripts --no-audit \
            --no-fund --fetch-timeout=20000 --fetch-retries=1) >"$out/npm.log" 2>&1; then
            printf '%s' "$node_stamp" >"$node_dir/.installed"
            node_ready=1
        else
            node_why="npm ci from the npm registry failed or timed out: $(why "$out/npm.log")"
        fi
    fi
fi

# The version a library is pinned to, for one that could not be installed.
pinned() { # LANGUAGE NAME PACKAGE
    if [[ $1 == node ]]; then
        python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["dependencies"][sys.argv[2]])' \
            "$peers/package.json" "$3" 2>/dev/null || echo "?"
    else
        sed -nE "s/^$3(\[[^]]*\])?==([^ ]+).*/\2/p" "$peers/requirements/$2.txt" | head -n1
    fi
}

python_version() { # NAME PACKAGE: PACKAGE's version in NAME's venv
    "$scratch/venv/$1/bin/python" -c \
        "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$2" \
        2>/dev/null || echo "?"
}
node_version() {
    node -p "require(require('path').resolve(process.argv[1], 'package.json')).version" \
        "$node_dir/node_modules/$1" \
        2>/dev/null || echo "?"
}

# --- The run's facts, for the report's head --------------------------------------------------
{
    printf 'generated\t%s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
    printf 'Python\t%s\n' "$(python3 -c 'import platform; print(platform.python_version())')"
    if command -v node >/dev/null; then
        printf 'Node\t%s\n' "$(node --version | sed 's/^v//')"
    else
        printf 'Node\tnot installed\n'
    fi
} >"$out/facts.tsv"

# --- Each library: serve, judge, stop --------------------------------------------------------
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1]); s.close()'
}

: >"$out/libraries.tsv"
record() { # name language version outcome detail served-by
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$out/libraries.tsv"
}

for entry in "${libraries[@]}"; do
    IFS='|' read -r name language server package serves <<<"$entry"
    served_by=
    if [[ $language == node ]]; then
        label=JavaScript
        if [[ -z $node_ready ]]; then
            record "$name" "$label" "$(pinned node "$name" "$package")" skipped "$node_why" ""
            echo "$name: skipped ($node_why)" >&2
            continue
        fi
        version=$(node_version "$package")
        for dependency in $serves; do
            served_by+="${served_by:+, }$dependency $(node_version "$dependency")"
        done
        serve=(node "$peers/servers/$server")
    else
        label=Python
        if ! python_install "$name"; then
            record "$name" "$label" "$(pinned python "$name" "$package")" skipped "$python_why" ""
            echo "$name: skipped ($python_why)" >&2
            continue
        fi
        version=$(python_version "$name" "$package")
        for dependency in $serves; do
            served_by+="${served_by:+, }$dependency $(python_version "$name" "$dependency")"
        done
        serve=("$scratch/venv/$name/bin/python" "$peers/servers/$server")
    fi

    port=$(free_port)
    log=$out/$name.server.log
    NODE_PATH=$node_dir/node_modules PYTHONDONTWRITEBYTECODE=1 "${serve[@]}" "$port" >"$log" 2>&1 &
    server_pid=$!

    ready=
    deadline=$((SECONDS + start_limit))
    while ((SECONDS < deadline)); do
        if ! kill -0 "$server_pid" 2>/dev/null; then
            break
        fi
        if curl -s -o /dev/null -m 1 "http://127.0.0.1:$port/payments/count"; then
            ready=1
            break
        fi
        sleep 0.1
    done
    if [[ -z $ready ]]; then
        stop_server
        record "$name" "$label" "$version" skipped "its server did not start: $(why "$log")" "$served_by"
        echo "$name: its server did not start" >&2
        continue
    fi

    echo "$name $version on 127.0.0.1:$port" >&2
    status=0
    timeout "$kit_limit" "$kit" --json --profile "$peers/$name.toml" \
        --base "http://127.0.0.1:$port" >"$out/$name.json" 2>"$out/$name.kit.log" || status=$?
    stop_server
    case $status in
        0 | 1) outcome=judged detail=$out/$name.json ;;
        3) outcome=skipped detail="the kit could not reach its server (exit 3): $(why "$out/$name.kit.log")" ;;
        124) outcome=skipped detail="the kit did not finish within ${kit_limit} s" ;;
        *) outcome=skipped detail="the kit failed (exit $status): $(why "$out/$name.kit.log")" ;;
    esac
    record "$name" "$label" "$version" "$outcome" "$detail" "$served_by"
done

mkdir -p "$(dirname "$report")"
python3 "$peers/report.py" "$out/facts.tsv" "$out/libraries.tsv" >"$report"
echo "report: $report" >&2
