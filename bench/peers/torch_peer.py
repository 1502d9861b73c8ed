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


def gpu_run(torch, module, host_inputs, device, precision, pinned):
    """One timed GPU run as described above, as a function of no arguments."""
    dtype = getattr(torch, AUTOCAST[precision]) if precision in AUTOCAST else None
    output_on_host = []

    def run_once():
        with torch.inference_mode(), torch.autocast("cuda", dtype=dtype, enabled=dtype is not None):
            output = module(*(tensor.to(device, non_blocking=True) for tensor in host_inputs))
        if not pinned:
            return output.cpu()
        if not output_on_host or output_on_host[0].shape != output.shape or output_on_host[0].dtype != output.dtype:
            output_on_host[:] = [torch.empty(output.shape, dtype=output.dtype, pin_memory=True)]
        return output_on_host[0].copy_(output, non_blocking=True)

    return run_once


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
    try:
        module, input_names = load_module(doc["model"]["name"])
    except Exception as error:  # any failure to build the model only means no torch peer
        print(f"{NAME}: skipped: no PyTorch module for {doc['model']['name']}: {error}")
        return []

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    settings = doc["settings"]
    specs = input_specs(doc)
    sequence = doc["model"]["sequence"]
    timing = (settings["warmup"], settings["min_time_s"], settings["min_runs"])
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
        host_inputs = [torch.from_numpy(arrays[name]) for name in input_names]
        if pinned:
            host_inputs = [tensor.pin_memory() for tensor in host_inputs]
        run_once = gpu_run(torch, module, host_inputs, device, point.precision, pinned)
        try:
            summary = measure(run_once, point.batch, *timing, synchronize=lambda: torch.cuda.synchronize(device))
        except torch.cuda.OutOfMemoryError:
            print(f"{NAME}: {point.label()} batch {point.batch}: out of GPU memory, skipped")
            torch.cuda.empty_cache()
            continue
        results.append((point, summary))
    return results
