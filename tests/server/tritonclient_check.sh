#!/usr/bin/env bash
# Drives infer-serve with the real tritonclient package on all-MiniLM-L6-v2 (tritonclient_test.py).
#   tritonclient_check.sh INFER_SERVE_BINARY MODEL_CACHE
# Skipped (77) only where infer-serve was not built (no cpp-httplib). tritonclient[http] is
# installed from PyPI into the models' virtual environment (${INFER_VENV:-~/.cache/infer/venv})
# when it is missing; INFER_PYTHON=/path/to/python uses that interpreter as it is.
set -euo pipefail
serve=$1
models=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [[ -z "$serve" ]]; then
  echo "SKIP: infer-serve was not built: cpp-httplib was not found when configuring" \
       "(install libcpp-httplib-dev, e.g. with scripts/install-deps.sh, and configure again)"
  exit 77
fi
if [[ ! -f "$models/all-MiniLM-L6-v2/model.onnx" ]]; then
  echo "FAIL: $models/all-MiniLM-L6-v2 is not prepared: run scripts/models/prepare.sh all-MiniLM-L6-v2" >&2
  exit 1
fi

python=${INFER_PYTHON:-}
if [[ -z "$python" ]]; then
  venv=${INFER_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/infer/venv}
  [[ -x "$venv/bin/python" ]] || python3 -m venv --system-site-packages "$venv"
  python=$venv/bin/python
  if ! "$python" -c 'import tritonclient.http, numpy' 2>/dev/null; then
    echo "tritonclient_check: installing tritonclient[http] and numpy into $venv"
    "$python" -m pip install --disable-pip-version-check -q "tritonclient[http]" numpy
  fi
fi
exec "$python" "$here/tritonclient_test.py" --serve "$serve" --model "$models/all-MiniLM-L6-v2"
