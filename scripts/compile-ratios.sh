#!/usr/bin/env bash
# scripts/compile-ratios.sh INCLUDE_DIR [RUNS] [HEADER...]
# The compile rows of scripts/compile_ratios.py (which CI's compile stage runs
# with --check) for any include directory, e.g. a `git archive` of another
# commit unpacked beside this one. CPU time (user+sys) of one-line TUs
# compiled with g++ -std=c++17 -O3 -DNDEBUG, as a ratio of a TU of
# nlohmann/json.hpp + date/date.h measured interleaved in the same run.
# Rows: the umbrella header-only (guard 2.3) and with KEYHOOK_COMPILED (0.6),
# then each HEADER (default: every public header) header-only (1.15) and
# compiled (0.6).
set -eu
inc=$1; runs=${2:-3}; shift 2 2>/dev/null || shift $#
exec python3 "$(dirname "${BASH_SOURCE[0]}")/compile_ratios.py" --include "$inc" --runs "$runs" "$@"
