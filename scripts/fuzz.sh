#!/usr/bin/env bash
# Builds every libFuzzer target with clang and runs each for SECONDS (default 30),
# as many at once as there are cores (KEYHOOK_FUZZ_JOBS overrides).
#   scripts/fuzz.sh [SECONDS] [TARGET...]
# Seeds come from fuzz/corpus/<name>/ (committed, small); new inputs go to a
# working corpus under the build directory so the tree stays clean. Prints each
# target's executions; exits non-zero when a target finds something.
# KEYHOOK_FUZZ_BUILD_DIR names the build directory (default build-fuzz); one
# already configured with KEYHOOK_BUILD_FUZZERS=ON (the asan preset's, in CI)
# is used as it is, so the fuzzers are not compiled twice.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
shift || true

if [ -x scripts/install-deps.sh ]; then scripts/install-deps.sh --sanitizers; fi

build="${KEYHOOK_FUZZ_BUILD_DIR:-build-fuzz}"
if ! grep -q '^KEYHOOK_BUILD_FUZZERS:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
    generator=()
    command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
    cmake -S . -B "$build" "${generator[@]}" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DKEYHOOK_CCACHE=ON -DKEYHOOK_BUILD_FUZZERS=ON -DKEYHOOK_BUILD_TESTS=OFF -DKEYHOOK_BUILD_EXAMPLES=OFF >/dev/null
fi
fuzz_targets=()
for f in fuzz/fuzz_*.cpp; do fuzz_targets+=("$(basename "$f" .cpp)"); done
# A target whose part is not built (crypto without OpenSSL) is not a target of the build.
known="$(cmake --build "$build" --target help 2>/dev/null || true)"
buildable=()
for name in "${fuzz_targets[@]}"; do
    case "$known" in *"$name:"* | *" $name"*) buildable+=("$name") ;; esac
done
cmake --build "$build" -j "$(nproc)" --target "${buildable[@]}"

targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
    for name in "${buildable[@]}"; do
        [ -x "$build/fuzz/$name" ] && targets+=("$name")
    done
fi

run_one() {  # run_one NAME: fuzzes one target; its status says whether it found something
    local name="$1" short="${1#fuzz_}"
    local work="$build/corpus-run/$short"
    mkdir -p "$work"
    [ -d "fuzz/corpus/$short" ] && cp -n "fuzz/corpus/$short"/* "$work/" 2>/dev/null || true
    local dict=()
    [ -f "fuzz/dict/$short.dict" ] && dict=("-dict=fuzz/dict/$short.dict")
    "$build/fuzz/$name" "$work" "${dict[@]}" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
        -rss_limit_mb=4096 -artifact_prefix="$build/$name-" -print_final_stats=1 >"$build/$name.log" 2>&1
}

jobs="${KEYHOOK_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}"
declare -A pid_of=()
failed=()
finish() {  # finish NAME: waits for a target and reports it
    local name="$1" log="$build/$1.log"
    if wait "${pid_of[$name]}"; then
        local runs
        runs="$(grep -Eo 'Done [0-9]+ runs' "$log" | awk '{print $2}' | tail -n 1)"
        printf '%-28s %12s %8s\n' "$name" "${runs:-?}" "$seconds"
    else
        echo "FINDING in $name (see $log):"
        tail -n 40 "$log"
        failed+=("$name")
    fi
}
printf '%-28s %12s %8s\n' target executions seconds
running=()
for name in "${targets[@]}"; do
    if [ "${#running[@]}" -ge "$jobs" ]; then
        finish "${running[0]}"
        running=("${running[@]:1}")
    fi
    run_one "$name" &
    pid_of[$name]=$!
    running+=("$name")
done
for name in "${running[@]}"; do finish "$name"; done
if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzz.sh: findings in ${failed[*]}" >&2
    exit 1
fi
