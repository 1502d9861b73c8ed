#!/usr/bin/env bash
# Builds, then runs the main job: for now the MLP example on a model it generates.
# Extra arguments go to it (a device name: cpu, cuda, cuda:1).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

./scripts/build.sh
build/bin/mlp "$@"
