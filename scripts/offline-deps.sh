#!/usr/bin/env bash
# Fetches the Debian packages infer builds against into .deps/debs/, on a connected Debian 12
# machine, for a GPU machine that has no package registry (scripts/gpu-check.sh unpacks them).
# Only downloads: nothing is installed here, and no root is needed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The list seen working on the GPU machines (docs: offline-gpu-build.md), plus the header-only
# libraries the tools use.
packages=(
  libeigen3-dev
  libopenblas-dev libopenblas0-pthread libopenblas-pthread-dev libopenblas0 libgfortran5
  libspdlog-dev libspdlog1.10 libfmt-dev libfmt9
  catch2 libonnx-testdata
  libprotobuf-dev libprotobuf32 protobuf-compiler libprotoc32
  libonnx-dev libonnx1 libonnxifi
  libcli11-dev nlohmann-json3-dev
  # infer-serve: cpp-httplib, the OpenSSL headers its header needs, and its brotli runtime
  # (the machine's own libssl3 and zlib serve at run time)
  libcpp-httplib-dev libcpp-httplib0.11 libssl-dev libbrotli1
)

mkdir -p .deps/debs
cd .deps/debs
# apt-get download skips nothing silently: a missing package fails the script.
apt-get download "${packages[@]}"
echo "offline-deps: $(ls -1 ./*.deb | wc -l) packages, $(du -sh . | cut -f1) in .deps/debs"
