#!/usr/bin/env bash
# Builds keyhook's benchmarks in Release, runs them with repetitions, times the
# compilation of the umbrella header, and prints every performance target of
# docs/performance.md as a ratio of medians measured in this same run, PASS or FAIL.
#
#   scripts/bench.sh [--repetitions N] [--filter REGEX] [--header-runs M] [--no-install]
#   (M: compilations of each public header on its own, default 3; 0 skips them.
#   Compile times are measured when REGEX is '.' (the default) or matches "compile".)
#
# Build directory: build-perf (override with KEYHOOK_BENCH_BUILD_DIR). Raw
# results go to build-perf/bench-results/. Exit status 1 if a measured target fails.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${KEYHOOK_BENCH_BUILD_DIR:-$root/build-perf}"
repetitions=5
filter="."
header_runs=3
install=1
while [ $# -gt 0 ]; do
    case "$1" in
        --repetitions) repetitions="$2"; shift 2 ;;
        --filter) filter="$2"; shift 2 ;;
        --header-runs) header_runs="$2"; shift 2 ;;
        --no-install) install=0; shift ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        *) echo "bench.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done

if [ "$install" -eq 1 ]; then
    if [ -x "$root/scripts/install-deps.sh" ] || [ -f "$root/scripts/install-deps.sh" ]; then
        bash "$root/scripts/install-deps.sh" --bench
    elif ! dpkg -s libbenchmark-dev 2>/dev/null | grep -q '^Status: install ok installed$'; then
        apt-get update -q && apt-get install -y -q --no-install-recommends libbenchmark-dev
    fi
fi
command -v python3 >/dev/null || { echo "bench.sh: python3 is needed for the report" >&2; exit 1; }

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DKEYHOOK_BUILD_BENCHMARKS=ON \
    -DKEYHOOK_BUILD_TESTS=OFF -DKEYHOOK_BUILD_EXAMPLES=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
targets=(keyhook_bench)
[ -f "$root/benchmarks/bench_authorize.cpp" ] && targets+=(keyhook_bench_authorize)
# Built only when keyhook::crypto is (OpenSSL found).
build_targets="$(cmake --build "$build" --target help 2>/dev/null || true)"
# Ninja lists "name: phony", Makefiles "... name".
case "$build_targets" in *" keyhook_bench_signing"* | *keyhook_bench_signing:*) targets+=(keyhook_bench_signing) ;; esac
case "$build_targets" in *" keyhook_bench_stored_key"* | *keyhook_bench_stored_key:*) targets+=(keyhook_bench_stored_key) ;; esac
jobs="$(nproc 2>/dev/null || echo 2)"
cmake --build "$build" --parallel "$jobs" --target "${targets[@]}"

results="$build/bench-results"
mkdir -p "$results"
rm -f "$results"/*.json
echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)"

# Repetitions of different benchmarks are interleaved at random, so that a burst
# of load from elsewhere falls on a baseline as often as on what it is compared with.
run() {  # run EXECUTABLE OUTPUT; the console shows medians only, the file has every aggregate
    "$1" --benchmark_filter="$filter" --benchmark_repetitions="$repetitions" \
        --benchmark_enable_random_interleaving=true \
        --benchmark_report_aggregates_only=true \
        --benchmark_out="$2" --benchmark_out_format=json | { grep -v -E '_(mean|stddev|cv) ' || true; }
}
for t in "${targets[@]}"; do
    run "$build/benchmarks/$t" "$results/$t.json"
done

# Compile times are measured on a full run, or when the filter names them.
if [ "$filter" = "." ] || [[ "compile" =~ $filter ]]; then
    python3 "$root/benchmarks/report.py" compile "$build" "$results/compile_time.json" --runs "$repetitions" \
        --header-runs "$header_runs"
fi
echo "load average after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$root/benchmarks/report.py" summary "$results"/*.json
