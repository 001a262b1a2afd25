#!/usr/bin/env bash
# scripts/compile-ratios.sh INCLUDE_DIR [RUNS] [HEADER...]
# A quick form of the compile rows of scripts/bench.sh (benchmarks/report.py compile) that needs no
# Release build directory: it compiles with the system g++ directly. Compare trees with it, e.g. a
# `git archive` of another commit unpacked beside this one.
# CPU time (user+sys, min of RUNS) of one-line TUs compiled like the Release benchmarks
# (g++ -std=c++17 -O3 -DNDEBUG), as a ratio of a TU of nlohmann/json.hpp + date/date.h
# measured interleaved in the same run. Rows: umbrella header-only, umbrella KEYHOOK_COMPILED,
# then each HEADER (default: every public header) header-only.
set -u
[ -x /usr/bin/time ] || { echo "compile-ratios.sh: needs GNU time (Debian package time)" >&2; exit 2; }
inc=$1; runs=${2:-3}; shift 2 2>/dev/null || shift $#
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf '#include <nlohmann/json.hpp>\n#include <date/date.h>\nint main() { return 0; }\n' > "$tmp/base.cpp"
cpu() {  # cpu FILE FLAGS...: seconds of one compile
    local f=$1; shift
    { /usr/bin/time -f "%U %S" g++ -std=c++17 -O3 -DNDEBUG -I"$inc" "$@" -c "$f" -o /dev/null; } 2>&1 >/dev/null | tail -1 | awk '{print $1+$2}'
}
measure() {  # measure LABEL FILE FLAGS...
    local label=$1 f=$2; shift 2
    local best=999 bbest=999 t b
    for ((i = 0; i < runs; i++)); do
        b=$(cpu "$tmp/base.cpp"); t=$(cpu "$f" "$@")
        bbest=$(python3 -c "print(min($bbest, $b))"); best=$(python3 -c "print(min($best, $t))")
    done
    python3 -c "print('%-44s %6.2f s  ratio %.2f' % ('$label', $best, $best / $bbest))"
}
printf '#include <keyhook/keyhook.hpp>\nint main() { return 0; }\n' > "$tmp/umb.cpp"
if [ $# -eq 0 ]; then
    measure "keyhook.hpp header-only (<= 1.5)" "$tmp/umb.cpp"
    measure "keyhook.hpp KEYHOOK_COMPILED (<= 0.3)" "$tmp/umb.cpp" -DKEYHOOK_COMPILED
    set -- $(cd "$inc" && ls keyhook/*.hpp keyhook/crypto/*.hpp | grep -v -e testing -e 'keyhook/keyhook.hpp')
fi
for h in "$@"; do
    printf '#include <%s>\nint main() { return 0; }\n' "$h" > "$tmp/one.cpp"
    measure "$h (<= 1.15)" "$tmp/one.cpp"
done
