"""ONNX Runtime on the CPU (CPUExecutionProvider): the model file infer-bench measured, in f32,
and for int8 points the same file quantized by onnxruntime.quantization.quantize_dynamic (s8
weights, u8 activations quantized at run time: what ORT's documentation suggests for
transformers), with intra-op threads as infer-bench's settings.threads (0: every core)."""
import os
import tempfile

from inputs import input_specs, make_inputs
from timing import measure

NAME = "onnxruntime"


def measure_points(doc, points):
    """[(point, timing summary)] for the cpu f32 points; says why it skips the others."""
    try:
        import onnxruntime
    except ImportError:
        print(f"{NAME}: skipped: the onnxruntime package is not installed (pip install onnxruntime)")
        return []
    cpu = [p for p in points if p.device == "cpu"]
    lowered = sorted({p.precision for p in cpu if p.precision not in ("f32", "int8")})
    if lowered:
        print(f"{NAME}: ONNX Runtime's CPU is measured in f32 and int8; no peer for cpu {', '.join(lowered)}")
    if len(cpu) < len(points):
        print(f"{NAME}: the CPU execution provider only; GPU points are the torch peer's")
    cpu = [p for p in cpu if p.precision in ("f32", "int8")]
    if not cpu:
        return []

    settings = doc["settings"]
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = settings.get("threads") or os.cpu_count()
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    # A Hugging Face folder is not a file ONNX Runtime reads: compare.py --onnx gives the ONNX
    # file of the graph infer built from it.
    model_file = doc["model"].get("onnx_path", doc["model"]["path"])
    if not model_file.endswith(".onnx"):
        print(f"{NAME}: skipped: {model_file} is not an ONNX file (pass compare.py --onnx FILE)")
        return []
    sessions = {"f32": onnxruntime.InferenceSession(model_file, options, providers=["CPUExecutionProvider"])}
    if any(p.precision == "int8" for p in cpu):
        from onnxruntime.quantization import QuantType, quantize_dynamic
        with tempfile.TemporaryDirectory() as folder:
            quantized = os.path.join(folder, "model.int8.onnx")
            quantize_dynamic(model_file, quantized, weight_type=QuantType.QInt8)
            sessions["int8"] = onnxruntime.InferenceSession(quantized, options, providers=["CPUExecutionProvider"])
    specs = input_specs(doc)
    sequence = doc["model"]["sequence"]
    results = []
    for point in cpu:
        session = sessions[point.precision]
        feeds = make_inputs(specs, point.batch, sequence)
        summary = measure(lambda: session.run(None, feeds), point.batch, settings["warmup"], settings["min_time_s"],
                          settings["min_runs"])
        results.append((point, summary))
    return results
