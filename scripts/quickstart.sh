#!/usr/bin/env bash
# Installs what is missing, configures the default preset, builds the key_audit
# example and runs it on the sample response it carries. Arguments go to
# key_audit; without any it shows the sample at the instant the sample was
# written for (2026-11-22T12:00:00Z), so the statuses and warnings make sense.
#
#   scripts/quickstart.sh [key_audit options, e.g. --status all --format json]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-deps.sh
cmake --preset default
cmake --build --preset default --target key_audit
if [ "$#" -eq 0 ]; then set -- --now 2026-11-22T12:00:00Z; fi
echo "+ key_audit $*"
build/default/examples/key_audit/key_audit "$@"
