#!/usr/bin/env bash
# Installs, with apt-get, the Debian packages keyhook's build needs that are not
# installed yet. Runs apt-get update once, and only when something is missing.
#
#   scripts/install-deps.sh [--bench] [--sanitizers] [--valgrind] [--stores] [--interop] [--all]
#
#   (no flag)     compilers, CMake, Ninja, pkg-config, ccache, python3 (the hostile
#                 stage drives the examples with it) and the libraries;
#                 libcurl and Boost.Beast (libboost1.81-dev) are for the examples' HTTP parts only
#                 (the core and the quick start build without them); CLI11 (libcli11-dev),
#                 the examples' argument parser (required for them); GoogleTest
#                 and gMock for tests/testing_gtest/
#   --bench       Google Benchmark (benchmarks/)
#   --sanitizers  clang's runtimes (LeakSanitizer and libFuzzer with clang)
#   --valgrind    valgrind
#   --stores      SQLite and libpq, for webhook_deliver --store (rule B6)
#   --interop     Node.js and npm, when `node` or `npm` is missing, the stores'
#                 libraries and the PostgreSQL server their crash test starts,
#                 nginx-light for key_gateway's stage (tests/interop/)
set -euo pipefail

interop=0
packages=(cmake ninja-build g++ clang python3 nlohmann-json3-dev libhowardhinnant-date-dev catch2 libssl-dev pkg-config ccache
          libcurl4-openssl-dev libboost1.81-dev libcli11-dev libgtest-dev libgmock-dev)
for arg in "$@"; do
    case "$arg" in
        --bench) packages+=(libbenchmark-dev) ;;
        --sanitizers) packages+=(libclang-rt-14-dev) ;;
        --valgrind) packages+=(valgrind) ;;
        --stores) packages+=(libsqlite3-dev libpq-dev) ;;
        --interop) packages+=(libsqlite3-dev libpq-dev postgresql-15 nginx-light); interop=1 ;;
        --all) packages+=(libbenchmark-dev libclang-rt-14-dev valgrind libsqlite3-dev libpq-dev postgresql-15 nginx-light); interop=1 ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        *) echo "install-deps.sh: unknown option '$arg'" >&2
           echo "usage: scripts/install-deps.sh [--bench] [--sanitizers] [--valgrind] [--stores] [--interop] [--all]" >&2
           exit 2 ;;
    esac
done

missing=()
# Node.js may come from elsewhere (NodeSource's nodejs bundles npm and
# conflicts with Debian's npm): ask for Debian's only when a command is missing.
if [ "$interop" -eq 1 ] && ! { command -v node && command -v npm; } >/dev/null 2>&1; then
    packages+=(nodejs npm)
fi
for p in "${packages[@]}"; do
    # dpkg -s also succeeds for a removed package whose configuration remains.
    if ! dpkg -s "$p" 2>/dev/null | grep -q '^Status: install ok installed$'; then
        missing+=("$p")
    fi
done

if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages already installed"
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    sudo=()
elif command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
else
    echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
