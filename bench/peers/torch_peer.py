"""PyTorch eager: on the GPU for every cuda point infer-bench measured (same device, precision,
batch and host memory) when torch sees a GPU, and on the CPU in f32. The module comes from
scripts/models/prepare.py's torch_model(name), the model that was exported to the ONNX file.

A timed GPU run is what infer-bench's is: inputs start on the host (page-locked with
pin_memory() for "pinned", ordinary memory for "pageable"), are copied with
.to(device, non_blocking=True), the forward runs under inference_mode (and autocast to f16/bf16
for those precisions), and the output is copied back to the host (into a page-locked tensor for
"pinned", with .cpu() for "pageable"); then torch.cuda.synchronize() before the clock is read.
f32 means f32: TF32 is off, as in infer-bench."""
import os
import pathlib
import sys
from typing import NamedTuple

from inputs import input_specs, make_inputs
from timing import measure

NAME = "torch"
PREPARE = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "models"
AUTOCAST = {"f16": "float16", "bf16": "bfloat16"}


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


def copy_back_run(torch, forward, host_inputs, device, pinned):
    """One timed GPU run as described above, as a function of no arguments: the inputs copied
    in, forward(*device_inputs) under inference_mode, the output copied back to the host."""
    output_on_host = []

    def run_once():
        with torch.inference_mode():
            output = forward(*(tensor.to(device, non_blocking=True) for tensor in host_inputs))
        if not pinned:
            return output.cpu()
        if not output_on_host or output_on_host[0].shape != output.shape or output_on_host[0].dtype != output.dtype:
            output_on_host[:] = [torch.empty(output.shape, dtype=output.dtype, pin_memory=True)]
        return output_on_host[0].copy_(output, non_blocking=True)

    return run_once


def gpu_run(torch, module, host_inputs, device, precision, pinned):
    """The eager run: under autocast for f16/bf16."""
    dtype = getattr(torch, AUTOCAST[precision]) if precision in AUTOCAST else None

    def forward(*inputs):
        with torch.autocast("cuda", dtype=dtype, enabled=dtype is not None):
            return module(*inputs)

    return copy_back_run(torch, forward, host_inputs, device, pinned)


def host_inputs_for(torch, arrays, input_names, pinned, dtype=None):
    """The inputs as host tensors (floating ones in `dtype` when given), page-locked if pinned."""
    tensors = [torch.from_numpy(arrays[name]) for name in input_names]
    if dtype is not None:
        tensors = [t.to(dtype) if t.is_floating_point() else t for t in tensors]
    return [t.pin_memory() for t in tensors] if pinned else tensors


class Setup(NamedTuple):
    """What every torch-based peer needs for a document: the module, its input names, the
    input specs, the sequence length and the timing settings."""
    module: object
    input_names: list
    specs: object
    sequence: int
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
    return Setup(module, input_names, input_specs(doc), doc["model"]["sequence"], timing)


def cpu_run(torch, module, host_inputs):
    def run_once():
        with torch.inference_mode():
            return module(*host_inputs)

    return run_once


def measure_points(doc, points, include_cpu=True):
    """[(point, timing summary)] for the cuda points (when torch has a GPU) and, with
    include_cpu, the cpu f32 points; says why it skips the others."""
    try:
        import torch
    except ImportError:
        print(f"{NAME}: skipped: torch is not installed")
        return []
    gpu_points = [p for p in points if p.device.startswith("cuda")]
    if gpu_points and not torch.cuda.is_available():
        print(f"{NAME}: torch sees no GPU: no peer for the {len(gpu_points)} cuda points")
        gpu_points = []
    cpu_points = [p for p in points if include_cpu and p.device == "cpu" and p.precision == "f32"]
    if not gpu_points and not cpu_points:
        return []
    ready = setup(torch, doc, NAME)
    if ready is None:
        return []
    module, input_names, specs, sequence, timing = ready
    settings = doc["settings"]
    results = []

    torch.set_num_threads(settings.get("threads") or os.cpu_count())
    for point in cpu_points:
        arrays = make_inputs(specs, point.batch, sequence)
        host_inputs = [torch.from_numpy(arrays[name]) for name in input_names]
        results.append((point, measure(cpu_run(torch, module, host_inputs), point.batch, *timing)))

    for point in gpu_points:
        device = torch.device(point.device)
        module.to(device)
        arrays = make_inputs(specs, point.batch, sequence)
        pinned = point.host_memory == "pinned"
        host_inputs = host_inputs_for(torch, arrays, input_names, pinned)
        run_once = gpu_run(torch, module, host_inputs, device, point.precision, pinned)
        summary = measure_on_gpu(torch, NAME, point, run_once, timing, device)
        if summary is not None:
            results.append((point, summary))
    return results


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
