#!/usr/bin/env bash
# Installs the Debian packages infer builds against, but only those missing, so that a machine
# that already has them (a developer's box, a warm CI image) pays nothing and needs no root.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  libeigen3-dev libopenblas-dev libspdlog-dev
  catch2 libcli11-dev nlohmann-json3-dev libcpp-httplib-dev
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata
  python3-venv
  chromium
)

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
# noninteractive: CI runs with no stdin, and a debconf prompt would hang it. Passed through env
# because sudo drops the caller's environment.
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
