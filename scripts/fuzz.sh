#!/usr/bin/env bash
# Builds every libFuzzer target with clang and runs each for SECONDS (default 30).
#   scripts/fuzz.sh [SECONDS] [TARGET...]
# Seeds come from fuzz/corpus/<name>/ (committed, small); new inputs go to a
# working corpus under the build directory so the tree stays clean. Prints each
# target's executions; exits non-zero on the first finding.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
shift || true

if [ -x scripts/install-deps.sh ]; then scripts/install-deps.sh --sanitizers; fi

build="${KEYHOOK_FUZZ_BUILD_DIR:-build-fuzz}"
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DKEYHOOK_BUILD_FUZZERS=ON -DKEYHOOK_BUILD_TESTS=OFF -DKEYHOOK_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" -j "$(nproc)"

targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
    for f in fuzz/fuzz_*.cpp; do
        name="$(basename "$f" .cpp)"
        [ -x "$build/fuzz/$name" ] && targets+=("$name")
    done
fi

printf '%-28s %12s %8s\n' target executions seconds
for name in "${targets[@]}"; do
    short="${name#fuzz_}"
    work="$build/corpus-run/$short"
    mkdir -p "$work"
    [ -d "fuzz/corpus/$short" ] && cp -n "fuzz/corpus/$short"/* "$work/" 2>/dev/null || true
    dict=()
    [ -f "fuzz/dict/$short.dict" ] && dict=("-dict=fuzz/dict/$short.dict")
    log="$build/$name.log"
    if ! "$build/fuzz/$name" "$work" "${dict[@]}" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
            -rss_limit_mb=4096 -artifact_prefix="$build/$name-" -print_final_stats=1 >"$log" 2>&1; then
        echo "FINDING in $name (see $log):"
        tail -n 40 "$log"
        exit 1
    fi
    runs="$(grep -Eo 'Done [0-9]+ runs' "$log" | awk '{print $2}' | tail -n 1)"
    printf '%-28s %12s %8s\n' "$name" "${runs:-?}" "$seconds"
done
