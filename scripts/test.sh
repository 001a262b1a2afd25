#!/usr/bin/env bash
# Installs what is missing, then configures, builds and tests the default
# preset (GCC, Debug): every test suite and example.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-deps.sh
cmake --preset default
cmake --build --preset default
ctest --preset default --output-on-failure
