#!/usr/bin/env bash
# The main job: builds infer, prepares the default model (all-MiniLM-L6-v2), and runs the
# CPU-versus-GPU comparison on every device present: the table and the recommendation are
# printed, the JSON and the HTML report written to build/bench/. When the Python peers can run
# (ONNX Runtime on the CPU, PyTorch where a GPU is present), their ratios join the report.
# Extra arguments go to infer-bench, e.g. --batch 1,8,64 --precision f32,f16 --devices cpu.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

./scripts/build.sh
./scripts/models/prepare.sh all-MiniLM-L6-v2
out=build/bench
mkdir -p "$out"
build/bin/infer-bench all-MiniLM-L6-v2 --devices cpu,cuda --precision f32,f16 --batch 1,2,4,8,16,32 \
  --min-time 0.5 --json "$out/bench.json" --report "$out/report.html" "$@"

# The peers need onnxruntime (and torch for the GPU): the venv prepare.sh made has torch, and
# gets onnxruntime here from PyPI when it lacks it (where there is no registry, the peers are
# left out with a message).
python=${INFER_PYTHON:-${INFER_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/infer/venv}/bin/python}
if [[ -x "$python" ]] && ! "$python" -c "import onnxruntime" 2>/dev/null; then
  echo "demo: installing onnxruntime into $("$python" -c 'import sys; print(sys.prefix)')"
  "$python" -m pip install --quiet onnxruntime || echo "demo: could not install onnxruntime"
fi
if [[ -x "$python" ]] && "$python" bench/peers/compare.py "$out/bench.json" --out "$out/bench-with-peers.json"; then
  build/bin/infer-bench --from-json "$out/bench-with-peers.json" --report "$out/report.html" >/dev/null
  echo "demo: report with peers in $out/report.html"
else
  echo "demo: peers not run (no Python with onnxruntime); report in $out/report.html"
fi
