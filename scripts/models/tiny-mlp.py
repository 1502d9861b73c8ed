#!/usr/bin/env python3
"""Writes .cache/models/tiny-mlp/model.onnx: the small-model overhead benchmark of the CPU issue,
an MLP of 77 098 weights (Gemm 200→256, Relu, Gemm 256→96, Relu, Gemm 96→10; input x [batch,
200], output y [batch, 10]) with seeded random weights, built with onnx.helper as a framework
exports nn.Linear on 2-D inputs. At batch 1 its run is almost all fixed cost (validation, plan
lookup, arena binding, kernel dispatch), which is what it measures:

    ~/.cache/infer/venv/bin/python scripts/models/tiny-mlp.py
    build/bin/infer-bench tiny-mlp --devices cpu --batch 1,8 --threads 1 --json mlp.json
    ~/.cache/infer/venv/bin/python bench/peers/compare.py mlp.json --peers onnxruntime --infer-bench build/bin/infer-bench
"""
import pathlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = pathlib.Path(__file__).resolve().parents[2]
WIDTHS = [200, 256, 96, 10]


def main():
    rng = np.random.default_rng(0)
    nodes, weights, x = [], [], "x"
    for i, (fan_in, fan_out) in enumerate(zip(WIDTHS[:-1], WIDTHS[1:])):
        weights += [numpy_helper.from_array((rng.standard_normal((fan_in, fan_out)) * 0.1).astype(np.float32), f"W{i}"),
                    numpy_helper.from_array((rng.standard_normal(fan_out) * 0.1).astype(np.float32), f"B{i}")]
        last = i == len(WIDTHS) - 2
        nodes.append(helper.make_node("Gemm", [x, f"W{i}", f"B{i}"], ["y" if last else f"h{i}"]))
        if not last:
            nodes.append(helper.make_node("Relu", [f"h{i}"], [f"r{i}"]))
            x = f"r{i}"
    graph = helper.make_graph(nodes, "tiny-mlp",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", WIDTHS[0]])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", WIDTHS[-1]])], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    out = ROOT / ".cache" / "models" / "tiny-mlp"
    out.mkdir(parents=True, exist_ok=True)
    onnx.save(model, out / "model.onnx")
    print(f"tiny-mlp: {sum(int(np.prod(w.dims)) for w in weights)} weights, written to {out.relative_to(ROOT)}/model.onnx")


if __name__ == "__main__":
    main()
