"""PyTorch eager: on the GPU for every cuda point infer-bench measured (same device, precision,
batch and host memory) when torch sees a GPU, and on the CPU in f32. The module comes from
scripts/models/prepare.py's torch_model(name), the model that was exported to the ONNX file.

On the GPU the module is converted to the point's type with .half() / .to(torch.bfloat16), as a
user after speed does (autocast keeps f32 weights and casts them at every product), and a timed
run is what infer-bench's is: for "pinned" and "pageable" the inputs start on the host (page-locked
with pin_memory() for "pinned"), are copied with .to(device, non_blocking=True), the forward runs
under inference_mode, and the output is copied back to the host (into a page-locked tensor for
"pinned", with .cpu() for "pageable"); for "device" (compute only) the inputs are on the GPU
before the clock starts and the output stays there. Then torch.cuda.synchronize() before the clock
is read. f32 means f32: TF32 is off, as in infer-bench."""
import copy
import os
import pathlib
import sys
from typing import NamedTuple

from inputs import input_specs, make_inputs
from timing import measure

NAME = "torch"
PREPARE = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "models"


def load_module(model_name):
    """(module, input_names) from prepare.torch_model, or raises with the reason it cannot."""
    # As prepare.py's own main() does: the weights are local, and progress bars are noise here.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    sys.path.insert(0, str(PREPARE))
    try:
        import prepare
    finally:
        sys.path.remove(str(PREPARE))
    if not hasattr(prepare, "torch_model"):
        raise RuntimeError(f"{PREPARE / 'prepare.py'} has no torch_model()")
    if model_name not in getattr(prepare, "MODELS", {}):
        raise RuntimeError(f"prepare.py does not know the model {model_name!r}")
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    module, input_names, _ = prepare.torch_model(model_name)
    return module, input_names


DTYPES = {"f16": "float16", "bf16": "bfloat16"}


def point_dtype(torch, precision):
    """The torch dtype of a point's weights and floating inputs."""
    return getattr(torch, DTYPES[precision]) if precision in DTYPES else torch.float32


def gpu_run(torch, forward, host_inputs, device, host_memory):
    """One timed GPU run as described above, as a function of no arguments."""
    if host_memory == "device":
        device_inputs = [tensor.to(device) for tensor in host_inputs]

        def run_on_device():
            with torch.inference_mode():
                return forward(*device_inputs)

        return run_on_device
    output_on_host = []

    def run_once():
        with torch.inference_mode():
            output = forward(*(tensor.to(device, non_blocking=True) for tensor in host_inputs))
        if host_memory != "pinned":
            return output.cpu()
        if not output_on_host or output_on_host[0].shape != output.shape or output_on_host[0].dtype != output.dtype:
            output_on_host[:] = [torch.empty(output.shape, dtype=output.dtype, pin_memory=True)]
        return output_on_host[0].copy_(output, non_blocking=True)

    return run_once


def is_image(tensor):
    """A 4-D floating input: a CNN's batch of images."""
    return tensor.dim() == 4 and tensor.is_floating_point()


def host_inputs_for(torch, arrays, input_names, pinned, dtype=None, channels_last=False):
    """The inputs as host tensors (floating ones in `dtype` when given, images channel-last when
    asked), page-locked if pinned."""
    tensors = [torch.from_numpy(arrays[name]) for name in input_names]
    if dtype is not None:
        tensors = [t.to(dtype) if t.is_floating_point() else t for t in tensors]
    if channels_last:
        tensors = [t.contiguous(memory_format=torch.channels_last) if is_image(t) else t for t in tensors]
    return [t.pin_memory() for t in tensors] if pinned else tensors


class Setup(NamedTuple):
    """What every torch-based peer needs for a document: the module, its input names, the
    input specs, the sequence length, the vocabulary ids are drawn below and the timing settings."""
    module: object
    input_names: list
    specs: object
    sequence: int
    vocabulary: int
    timing: tuple


def setup(torch, doc, name):
    """Setup for the document's model with TF32 off, or None (having said why) when there is
    no PyTorch module for it."""
    try:
        module, input_names = load_module(doc["model"]["name"])
    except Exception as error:  # any failure to build the model only means no torch peer
        print(f"{name}: skipped: no PyTorch module for {doc['model']['name']}: {error}")
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    settings = doc["settings"]
    timing = (settings["warmup"], settings["min_time_s"], settings["min_runs"])
    return Setup(module, input_names, input_specs(doc), doc["model"]["sequence"], doc["model"].get("vocabulary", 0),
                 timing)


def cpu_run(torch, module, host_inputs):
    def run_once():
        with torch.inference_mode():
            return module(*host_inputs)

    return run_once


def gpu_ready(torch, points):
    """Whether torch can time the cuda points among `points` (says why not)."""
    gpu_points = [p for p in points if p.device.startswith("cuda")]
    if gpu_points and not torch.cuda.is_available():
        print(f"torch sees no GPU: no torch peer for the {len(gpu_points)} cuda points")
        return False
    return bool(gpu_points)


class Peer:
    """PyTorch eager for a document's model: one module per (device, precision), converted once;
    measure(point) times one point."""

    def __init__(self, torch, ready, settings, include_cpu, gpu):
        self.torch = torch
        self.ready = ready
        self.include_cpu = include_cpu
        self.gpu = gpu
        self.modules = {}
        torch.set_num_threads(settings.get("threads") or os.cpu_count())

    def module_for(self, device, dtype):
        key = (str(device), dtype)
        if key not in self.modules:
            self.modules.clear()  # one converted copy of the weights on the GPU at a time
            self.modules[key] = copy.deepcopy(self.ready.module).to(device=device, dtype=dtype).eval()
        return self.modules[key]

    def measure(self, point):
        torch, ready = self.torch, self.ready
        arrays = make_inputs(ready.specs, point.batch, ready.sequence, ready.vocabulary)
        if point.device == "cpu":
            if not self.include_cpu or point.precision != "f32":
                return None
            host_inputs = [torch.from_numpy(arrays[name]) for name in ready.input_names]
            return measure(cpu_run(torch, ready.module, host_inputs), point.batch, *ready.timing)
        if not self.gpu or not point.device.startswith("cuda"):
            return None
        device = torch.device(point.device)
        dtype = point_dtype(torch, point.precision)
        module = self.module_for(device, dtype)
        host_inputs = host_inputs_for(torch, arrays, ready.input_names, point.host_memory == "pinned", dtype)
        run_once = gpu_run(torch, module, host_inputs, device, point.host_memory)
        return measure_on_gpu(torch, NAME, point, run_once, ready.timing, device)


def prepare(doc, points, include_cpu=True, **_):
    """A Peer, or None (having said why) when torch cannot time any of the points."""
    try:
        import torch
    except ImportError:
        print(f"{NAME}: skipped: torch is not installed")
        return None
    gpu = gpu_ready(torch, points)
    cpu = include_cpu and any(p.device == "cpu" and p.precision == "f32" for p in points)
    if not gpu and not cpu:
        return None
    ready = setup(torch, doc, NAME)
    return Peer(torch, ready, doc["settings"], include_cpu, gpu) if ready is not None else None


def measure_on_gpu(torch, name, point, run_once, timing, device, before=None):
    """The timing summary of run_once at this point (after `before()`, untimed, when given),
    or None when the GPU ran out of memory (said, and the cache emptied)."""
    try:
        if before is not None:
            before()
        return measure(run_once, point.batch, *timing, synchronize=lambda: torch.cuda.synchronize(device))
    except torch.cuda.OutOfMemoryError:
        print(f"{name}: {point.label()} batch {point.batch}: out of GPU memory, skipped")
        torch.cuda.empty_cache()
        return None
