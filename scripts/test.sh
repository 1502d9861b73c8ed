#!/usr/bin/env bash
# Builds, then runs every test. Extra arguments go to ctest: -L cuda, -R mlp, -j 4, ...
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

./scripts/build.sh
ctest --test-dir build --output-on-failure "$@"
