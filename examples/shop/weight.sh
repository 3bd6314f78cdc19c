#!/usr/bin/env bash
# The shop's weight beside the same service without the lab's crates (its manifest less the
# retrykey-* lines, the same Cargo.lock): the packages each builds, and each one's cold debug
# build time, measured in one run, one after the other, in target folders of their own. The
# shop calls a payment provider, so the service without the lab's crates has an HTTP client of
# its own: the reqwest that the lab's retry client brings, with the same features.
set -euo pipefail
shop=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/baseline/src"
echo 'fn main() {}' >"$work/baseline/src/main.rs"
cp "$shop/Cargo.lock" "$work/baseline/"
# The [lib] and [[bin]] tables name the shop's own files: the baseline keeps only its package,
# its workspace and its dependencies.
sed -e '/^retrykey-/d' -e 's/^name = "shop"/name = "baseline"/' "$shop/Cargo.toml" |
    awk '/^\[lib\]|^\[\[bin\]\]/ { skip = 1 } /^\[dependencies\]/ { skip = 0 } !skip' |
    awk '{ print } /^\[dependencies\]/ { print "reqwest = { version = \"0.13\", default-features = false }" }' \
        >"$work/baseline/Cargo.toml"

packages() { cargo tree --manifest-path "$1/Cargo.toml" -e normal --prefix none | sed 's/ (\*)//' | sort -u | wc -l; }
# Bounded: a cold build that takes longer than 30 minutes is a finding of its own.
cold() {
    local start=$SECONDS
    CARGO_TARGET_DIR="$work/target-$2" timeout 1800 cargo build -q --manifest-path "$1/Cargo.toml"
    echo $((SECONDS - start))
}

shop_packages=$(packages "$shop")
base_packages=$(packages "$work/baseline")
shop_seconds=$(cold "$shop" shop)
base_seconds=$(cold "$work/baseline" baseline)
echo "shop:     packages=$shop_packages cold_build_s=$shop_seconds"
echo "baseline: packages=$base_packages cold_build_s=$base_seconds"
awk -v a="$shop_packages" -v b="$base_packages" -v c="$shop_seconds" -v d="$base_seconds" \
    'BEGIN { printf "ratio:    packages %.2fx, cold build %.2fx (goal: packages at most 1.2x)\n", a / b, c / d }'
