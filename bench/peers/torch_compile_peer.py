"""PyTorch as a GPU user tuning for speed would run it: the weights converted with .half() (or
.to(torch.bfloat16)) for f16/bf16, then torch.compile (Inductor's default mode, which fuses
elementwise work into generated kernels and picks matrix kernels), for every cuda point that
infer-bench measured. The first runs compile the model for that batch shape; they are the
warm-up, never timed (the compile time is printed). Inputs, copies and synchronisation are those
of the eager peer (torch_peer.py): host inputs copied in, the output copied back to the host."""
import copy
import time

from inputs import input_specs, make_inputs
from timing import measure
from torch_peer import load_module

NAME = "torch.compile"
DTYPES = {"f16": "float16", "bf16": "bfloat16"}


def measure_points(doc, points):
    """[(point, timing summary)] for the cuda points, when torch has a GPU."""
    try:
        import torch
    except ImportError:
        print(f"{NAME}: skipped: torch is not installed")
        return []
    gpu_points = [p for p in points if p.device.startswith("cuda")]
    if not gpu_points:
        return []
    if not torch.cuda.is_available():
        print(f"{NAME}: torch sees no GPU: no peer for the {len(gpu_points)} cuda points")
        return []
    try:
        base, input_names = load_module(doc["model"]["name"])
    except Exception as error:  # any failure to build the model only means no peer
        print(f"{NAME}: skipped: no PyTorch module for {doc['model']['name']}: {error}")
        return []
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    settings = doc["settings"]
    specs = input_specs(doc)
    sequence = doc["model"]["sequence"]
    timing = (settings["warmup"], settings["min_time_s"], settings["min_runs"])
    compiled = {}  # (device, precision) -> compiled module: one conversion, shapes recompile inside
    results = []
    for point in gpu_points:
        device = torch.device(point.device)
        key = (point.device, point.precision)
        dtype = getattr(torch, DTYPES[point.precision]) if point.precision in DTYPES else torch.float32
        if key not in compiled:
            module = copy.deepcopy(base).to(device=device, dtype=dtype).eval()
            compiled[key] = torch.compile(module)
        module = compiled[key]
        arrays = make_inputs(specs, point.batch, sequence)
        pinned = point.host_memory == "pinned"
        host_inputs = [torch.from_numpy(arrays[name]) for name in input_names]
        # Floating inputs (pixel values) in the model's type; ids and masks stay integers.
        host_inputs = [t.to(dtype) if t.is_floating_point() else t for t in host_inputs]
        if pinned:
            host_inputs = [t.pin_memory() for t in host_inputs]
        output_on_host = []

        def run_once():
            with torch.inference_mode():
                output = module(*(t.to(device, non_blocking=True) for t in host_inputs))
            if not pinned:
                return output.cpu()
            if not output_on_host or output_on_host[0].shape != output.shape or output_on_host[0].dtype != output.dtype:
                output_on_host[:] = [torch.empty(output.shape, dtype=output.dtype, pin_memory=True)]
            return output_on_host[0].copy_(output, non_blocking=True)

        try:
            started = time.perf_counter()
            run_once()
            torch.cuda.synchronize(device)
            print(f"{NAME}: {point.label()} batch {point.batch}: compiled in {time.perf_counter() - started:.1f} s",
                  flush=True)
            summary = measure(run_once, point.batch, *timing, synchronize=lambda: torch.cuda.synchronize(device))
        except torch.cuda.OutOfMemoryError:
            print(f"{NAME}: {point.label()} batch {point.batch}: out of GPU memory, skipped")
            torch.cuda.empty_cache()
            continue
        results.append((point, summary))
    return results
