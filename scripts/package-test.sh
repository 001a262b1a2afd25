#!/usr/bin/env bash
# Checks keyhook as its users get it: installs it to a temporary prefix, then
# builds and runs tests/package/consumer against the installed tree with
# find_package (core; and the crypto component when OpenSSL is there), with
# pkg-config, against the source tree with add_subdirectory (once with a parent
# that defines the dependencies' targets itself), and with FetchContent from
# this repository's HEAD commit; find_package, add_subdirectory and
# FetchContent once more linking keyhook::compiled (definitions compiled once,
# KEYHOOK_COMPILED) instead of the header-only targets.
#
#   scripts/package-test.sh            (KEYHOOK_PACKAGE_WORK=dir keeps the work files there)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
consumer="$root/tests/package/consumer"
if [ -n "${KEYHOOK_PACKAGE_WORK:-}" ]; then
    work="$KEYHOOK_PACKAGE_WORK"
    rm -rf "$work"
    mkdir -p "$work"
else
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
fi
prefix="$work/prefix"
cmake_args=()
if command -v ninja >/dev/null 2>&1; then cmake_args=(-G Ninja); fi
# The consumers compile the same few files again and again: through ccache
# when it is there (CI's run shares one cache between all its builds).
if command -v ccache >/dev/null 2>&1; then cmake_args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
step() { printf '\n=== package-test: %s\n' "$*"; }

step "install to $prefix"
cmake -S "$root" -B "$work/keyhook" "${cmake_args[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DKEYHOOK_BUILD_TESTS=OFF -DKEYHOOK_BUILD_EXAMPLES=OFF -DCMAKE_INSTALL_PREFIX="$prefix"
cmake --build "$work/keyhook"
cmake --install "$work/keyhook"
with_crypto=0
if [ -f "$prefix/share/cmake/keyhook/keyhookCryptoTargets.cmake" ]; then with_crypto=1; fi

# The consumers are independent: they run as many at once as there are cores
# (KEYHOOK_PACKAGE_JOBS overrides), each into its own log, printed in order
# once all are done. Most compile one source, so one at a time left a core idle.
jobs_max="${KEYHOOK_PACKAGE_JOBS:-$(nproc 2>/dev/null || echo 2)}"
consumers=()
consumer_steps() {  # consumer_steps NAME [cmake args...]: configure, build and run one consumer
    local name="$1"; shift
    cmake -S "$consumer" -B "$work/$name" "${cmake_args[@]}" -DCMAKE_BUILD_TYPE=Debug "$@" &&
        cmake --build "$work/$name" &&
        "$work/$name/consumer" &&
        { [ ! -x "$work/$name/consumer_crypto" ] || "$work/$name/consumer_crypto"; }
}
consume() {  # consume NAME [cmake args...]: starts a consumer once a job slot is free
    local name="$1"
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
    # The status is tested, not left to set -e, so that it is always written.
    { if consumer_steps "$@" >"$work/$name.log" 2>&1; then echo 0; else echo 1; fi >"$work/$name.status"; } &
    consumers+=("$name")
}
finish_consumers() {  # waits for every consumer, prints each log, fails if one failed
    wait
    local name failed=()
    for name in "${consumers[@]}"; do
        step "consumer: $name"
        cat "$work/$name.log"
        [ "$(cat "$work/$name.status" 2>/dev/null)" = 0 ] || failed+=("$name")
    done
    if [ "${#failed[@]}" -gt 0 ]; then
        echo "package-test: consumers failed: ${failed[*]}" >&2
        exit 1
    fi
}

consume find-package -DCMAKE_PREFIX_PATH="$prefix" -DKEYHOOK_EXPECTED_PREFIX="$prefix"
if [ "$with_crypto" = 1 ]; then
    consume find-package-crypto -DCMAKE_PREFIX_PATH="$prefix" -DKEYHOOK_EXPECTED_PREFIX="$prefix" \
        -DKEYHOOK_CONSUMER_CRYPTO=ON
else
    echo "package-test: keyhook::crypto was not installed (no OpenSSL): crypto consumer skipped"
fi
consume add-subdirectory -DKEYHOOK_CONSUMER_MODE=subdirectory -DKEYHOOK_SOURCE_DIR="$root"
consume add-subdirectory-own-deps -DKEYHOOK_CONSUMER_MODE=subdirectory -DKEYHOOK_SOURCE_DIR="$root" \
    -DKEYHOOK_CONSUMER_OWN_DEPENDENCIES=ON
compiled_crypto=()
if [ "$with_crypto" = 1 ]; then compiled_crypto=(-DKEYHOOK_CONSUMER_CRYPTO=ON); fi
consume find-package-compiled -DCMAKE_PREFIX_PATH="$prefix" -DKEYHOOK_EXPECTED_PREFIX="$prefix" \
    -DKEYHOOK_CONSUMER_COMPILED=ON "${compiled_crypto[@]}"
consume add-subdirectory-compiled -DKEYHOOK_CONSUMER_MODE=subdirectory -DKEYHOOK_SOURCE_DIR="$root" \
    -DKEYHOOK_CONSUMER_COMPILED=ON "${compiled_crypto[@]}"
if head="$(git -C "$root" rev-parse --verify HEAD 2>/dev/null)"; then
    # FetchContent clones the committed tree: uncommitted changes are not in this check.
    consume fetchcontent -DKEYHOOK_CONSUMER_MODE=fetchcontent -DKEYHOOK_GIT_REPOSITORY="$root" \
        -DKEYHOOK_GIT_TAG="$head"
    consume fetchcontent-compiled -DKEYHOOK_CONSUMER_MODE=fetchcontent -DKEYHOOK_GIT_REPOSITORY="$root" \
        -DKEYHOOK_GIT_TAG="$head" -DKEYHOOK_CONSUMER_COMPILED=ON "${compiled_crypto[@]}"
else
    echo "package-test: $root is not a git repository: FetchContent consumer skipped"
fi
finish_consumers

step "pkg-config"
export PKG_CONFIG_PATH="$prefix/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
cxx="${CXX:-c++}"
flags=(-std=c++17 -Wall -Wextra -Wpedantic -Werror)
echo "keyhook: $(pkg-config --modversion keyhook), cflags: $(pkg-config --cflags keyhook)"
# shellcheck disable=SC2046  # pkg-config's output is a list of flags
"$cxx" "${flags[@]}" $(pkg-config --cflags keyhook) "$consumer/main.cpp" -o "$work/pkg-consumer"
"$work/pkg-consumer"
if [ "$with_crypto" = 1 ]; then
    echo "keyhook-crypto: cflags and libs: $(pkg-config --cflags --libs keyhook-crypto)"
    # shellcheck disable=SC2046
    "$cxx" "${flags[@]}" $(pkg-config --cflags keyhook-crypto) "$consumer/crypto_main.cpp" -o "$work/pkg-consumer-crypto" \
        $(pkg-config --libs keyhook-crypto)
    "$work/pkg-consumer-crypto"
fi

step "all passed"
