"""ONNX Runtime on the CPU (CPUExecutionProvider): the model file infer-bench measured, in f32,
and for int8 points the same file quantized by onnxruntime.quantization.quantize_dynamic (s8
weights, u8 activations quantized at run time: what ORT's documentation suggests for
transformers), with intra-op threads as infer-bench's settings.threads (0: every core)."""
import os
import tempfile

from inputs import input_specs, make_inputs
from timing import measure

NAME = "onnxruntime"


class Peer:
    """ONNX Runtime sessions for a document's model, made once; measure(point) times one point."""

    def __init__(self, onnxruntime, doc, model_file):
        self.doc = doc
        self.settings = doc["settings"]
        self.options = onnxruntime.SessionOptions()
        self.options.intra_op_num_threads = self.settings.get("threads") or os.cpu_count()
        self.options.inter_op_num_threads = 1
        self.options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        self.onnxruntime = onnxruntime
        self.model_file = model_file
        self.sessions = {}
        self.specs = input_specs(doc)

    def session(self, precision):
        if precision not in self.sessions:
            model = self.model_file
            folder = None
            if precision == "int8":
                from onnxruntime.quantization import QuantType, quantize_dynamic
                folder = tempfile.TemporaryDirectory()
                model = os.path.join(folder.name, "model.int8.onnx")
                quantize_dynamic(self.model_file, model, weight_type=QuantType.QInt8)
            self.sessions[precision] = self.onnxruntime.InferenceSession(model, self.options,
                                                                         providers=["CPUExecutionProvider"])
            if folder is not None:
                folder.cleanup()
        return self.sessions[precision]

    def measure(self, point):
        """The timing summary of the point, or None for points it has no peer for."""
        if point.device != "cpu" or point.precision not in ("f32", "int8"):
            return None
        session = self.session(point.precision)
        feeds = make_inputs(self.specs, point.batch, self.doc["model"]["sequence"], self.doc["model"].get("vocabulary", 0))
        s = self.settings
        return measure(lambda: session.run(None, feeds), point.batch, s["warmup"], s["min_time_s"], s["min_runs"])


def prepare(doc, points, **_):
    """A Peer, or None (having said why) when ONNX Runtime cannot time any of the points."""
    cpu = [p for p in points if p.device == "cpu"]
    lowered = sorted({p.precision for p in cpu if p.precision not in ("f32", "int8")})
    if lowered:
        print(f"{NAME}: ONNX Runtime's CPU is measured in f32 and int8; no peer for cpu {', '.join(lowered)}")
    if len(cpu) < len(points):
        print(f"{NAME}: the CPU execution provider only; GPU points are the torch peers'")
    if not any(p.precision in ("f32", "int8") for p in cpu):
        return None
    try:
        import onnxruntime
    except ImportError:
        print(f"{NAME}: skipped: the onnxruntime package is not installed (pip install onnxruntime)")
        return None
    # A Hugging Face folder is not a file ONNX Runtime reads: compare.py --onnx gives the ONNX
    # file of the graph infer built from it.
    model_file = doc["model"].get("onnx_path", doc["model"]["path"])
    if not model_file.endswith(".onnx"):
        print(f"{NAME}: skipped: {model_file} is not an ONNX file (pass compare.py --onnx FILE)")
        return None
    return Peer(onnxruntime, doc, model_file)
