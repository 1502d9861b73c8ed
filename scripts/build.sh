#!/usr/bin/env bash
# Configures and builds infer into build/ (tools and examples in build/bin/). Extra arguments
# go to the CMake configure step, e.g. -DINFER_WITH_CUDA=OFF.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

./scripts/install-deps.sh

configure=(cmake -S . -B build -DCMAKE_BUILD_TYPE=Release)
# A generator can only be chosen when the build tree is first made.
if [[ ! -f build/CMakeCache.txt ]] && command -v ninja >/dev/null; then
  configure+=(-G Ninja)
fi
"${configure[@]}" "$@"
cmake --build build --parallel "${INFER_BUILD_JOBS:-$(nproc)}"
