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
#                 and gMock for tests/testing_gtest/; prometheus-cpp's core
#                 (prometheus-cpp-dev), the registry and text format behind the
#                 programs' --metrics-listen (rule O4; optional for them)
#   --bench       Google Benchmark (benchmarks/)
#   --sanitizers  clang's runtimes (LeakSanitizer and libFuzzer with clang)
#   --valgrind    valgrind
#   --stores      SQLite and libpq, for webhook_deliver --store (rule B6)
#   --interop     Node.js and npm, when `node` or `npm` is missing, the stores'
#                 libraries and the PostgreSQL server their crash test starts,
#                 nginx-light for key_gateway's stage, and the Prometheus server
#                 (Debian's prometheus, with promtool) that scrapes the programs
#                 in interop.metrics_prometheus (tests/interop/)
#
# The prometheus package comes with a service: the tests start their own
# server, never that one. It is kept from starting while it is installed (a
# policy-rc.d that denies every start stands in for that install only; one
# that was there is put back after), and, where systemd runs, disabled and
# stopped on every run (so a second run changes nothing, and one on a machine
# where the service was enabled by hand turns it off again).
set -euo pipefail

interop=0
packages=(cmake ninja-build g++ clang python3 nlohmann-json3-dev libhowardhinnant-date-dev catch2 libssl-dev pkg-config ccache
          libcurl4-openssl-dev libboost1.81-dev libcli11-dev libgtest-dev libgmock-dev prometheus-cpp-dev)
for arg in "$@"; do
    case "$arg" in
        --bench) packages+=(libbenchmark-dev) ;;
        --sanitizers) packages+=(libclang-rt-14-dev) ;;
        --valgrind) packages+=(valgrind) ;;
        --stores) packages+=(libsqlite3-dev libpq-dev) ;;
        --interop) packages+=(libsqlite3-dev libpq-dev postgresql-15 nginx-light prometheus); interop=1 ;;
        --all) packages+=(libbenchmark-dev libclang-rt-14-dev valgrind libsqlite3-dev libpq-dev postgresql-15 nginx-light
                          prometheus); interop=1 ;;
        -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
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
    # Its status, not dpkg -s's success (which holds for a removed package whose
    # configuration remains); not piped into grep -q either, which under
    # pipefail fails when dpkg is cut off by SIGPIPE (prometheus's long entry).
    if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then
        missing+=("$p")
    fi
done

if [ "$(id -u)" -eq 0 ]; then
    sudo=()
elif command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
else
    sudo=(false)  # only an error if something must be done as root
fi

# The packaged Prometheus service stays off (tests start their own server),
# on every run, installed now or before: idempotent. With systemd: disabled
# and stopped. Without it (a container, most CI machines) nothing starts
# services at boot, and the install itself started none (policy-rc.d below);
# the init script's boot links are removed all the same.
keep_prometheus_service_off() {
    if [ ! -d /run/systemd/system ] && [ -e /etc/rc2.d ] && ls /etc/rc[2-5].d/S*prometheus >/dev/null 2>&1 &&
        command -v update-rc.d >/dev/null 2>&1; then
        "${sudo[@]}" update-rc.d prometheus disable >/dev/null 2>&1 || true
    fi
    if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1 &&
        systemctl list-unit-files prometheus.service >/dev/null 2>&1 &&
        { systemctl is-enabled --quiet prometheus.service 2>/dev/null ||
          systemctl is-active --quiet prometheus.service 2>/dev/null; }; then
        echo "install-deps: disabling and stopping the packaged prometheus service (the tests start their own)"
        "${sudo[@]}" systemctl disable --now prometheus.service
    fi
}

if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages already installed"
    if [[ " ${packages[*]} " == *" prometheus "* ]]; then keep_prometheus_service_off; fi
    exit 0
fi

if [ "${sudo[0]:-}" = false ]; then
    echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
fi

# While the prometheus package is installed, its service must not start: a
# policy-rc.d that denies every start (invoke-rc.d and deb-systemd-invoke
# read it) stands in for that install only; one that was there (a
# container's) is put back after, whatever happens.
policy=/usr/sbin/policy-rc.d
policy_saved=
restore_policy() {
    "${sudo[@]}" rm -f "$policy"
    if [ -n "$policy_saved" ]; then "${sudo[@]}" mv "$policy_saved" "$policy"; fi
}
if [[ " ${missing[*]} " == *" prometheus "* ]]; then
    if [ -e "$policy" ]; then
        policy_saved="$policy.install-deps.$$"
        "${sudo[@]}" mv "$policy" "$policy_saved"
    fi
    trap restore_policy EXIT
    printf '#!/bin/sh\n# scripts/install-deps.sh: no service starts while it installs packages\nexit 101\n' |
        "${sudo[@]}" tee "$policy" >/dev/null
    "${sudo[@]}" chmod 755 "$policy"
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
if [[ " ${packages[*]} " == *" prometheus "* ]]; then keep_prometheus_service_off; fi
