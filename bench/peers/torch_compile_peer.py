"""PyTorch as a GPU user tuning for speed would run it: the weights converted with .half() (or
.to(torch.bfloat16)) for f16/bf16, then torch.compile (Inductor's default mode, which fuses
elementwise work into generated kernels and picks matrix kernels), for every cuda point that
infer-bench measured. The first runs compile the model for that batch shape; they are the
warm-up, never timed (the compile time is printed). Inputs, copies and synchronisation are those
of the eager peer (torch_peer.py): host inputs copied in, the output copied back to the host."""
import copy
import time

from inputs import make_inputs
from torch_peer import copy_back_run, host_inputs_for, measure_on_gpu, setup

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
    ready = setup(torch, doc, NAME)
    if ready is None:
        return []
    base, input_names, specs, sequence, timing = ready
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
        # Floating inputs (pixel values) in the model's type; ids and masks stay integers.
        host_inputs = host_inputs_for(torch, arrays, input_names, point.host_memory == "pinned", dtype)
        run_once = copy_back_run(torch, module, host_inputs, device, point.host_memory == "pinned")

        def compile_first():
            started = time.perf_counter()
            run_once()
            torch.cuda.synchronize(device)
            print(f"{NAME}: {point.label()} batch {point.batch}: compiled in {time.perf_counter() - started:.1f} s",
                  flush=True)

        summary = measure_on_gpu(torch, NAME, point, run_once, timing, device, before=compile_first)
        if summary is not None:
            results.append((point, summary))
    return results
