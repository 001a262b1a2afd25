#!/usr/bin/env bash
# Instruction counts of keyhook's hot paths against their in-process baselines,
# under valgrind's callgrind: deterministic on any machine, loaded or not, so
# CI can fail on a regression that timing could only suggest (instruction-count regression guards).
# Each ratio is checked against its bound (benchmarks/icount.py explains how the
# bounds were calibrated against scripts/bench.sh); exit status 1 if one fails.
#
#   scripts/icount.sh [--no-install] [CASE-FILTER]
#
# Build directory: build-icount (override with KEYHOOK_ICOUNT_BUILD_DIR).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${KEYHOOK_ICOUNT_BUILD_DIR:-$root/build-icount}"
install=1
filter=""
for arg in "$@"; do
    case "$arg" in
        --no-install) install=0 ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        -*) echo "icount.sh: unknown option '$arg'" >&2; exit 2 ;;
        *) filter="$arg" ;;
    esac
done
[ "$install" -eq 1 ] && "$root/scripts/install-deps.sh" --valgrind

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKEYHOOK_CCACHE=ON -DKEYHOOK_BUILD_ICOUNT=ON \
    -DKEYHOOK_BUILD_TESTS=OFF -DKEYHOOK_BUILD_EXAMPLES=OFF -DKEYHOOK_INSTALL=OFF >/dev/null
cmake --build "$build" --target keyhook_icount
python3 "$root/benchmarks/icount.py" "$build/benchmarks/keyhook_icount" $filter
