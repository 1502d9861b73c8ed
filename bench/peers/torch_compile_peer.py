"""PyTorch as a GPU user tuning for speed would run it: the weights converted with .half() (or
.to(torch.bfloat16)) for f16/bf16, then torch.compile (Inductor's default mode, which fuses
elementwise work into generated kernels and picks matrix kernels), a CNN channel-last (module
and images, the layout cuDNN's tensor-core convolutions take without transposes), for every cuda point that
infer-bench measured. The first runs compile the model for that batch shape; they are the
warm-up, never timed (the compile time is printed). Inputs, copies and synchronisation are those
of the eager peer (torch_peer.py), host memory or compute only ("device") as the point says."""
import time

from inputs import make_inputs
from torch_peer import gpu_ready, gpu_run, host_inputs_for, is_image, measure_on_gpu, point_dtype, setup

NAME = "torch.compile"


class Peer:
    """One compiled module per (device, precision), converted once (shapes recompile inside);
    measure(point) times one point."""

    def __init__(self, torch, ready):
        self.torch = torch
        self.ready = ready
        self.compiled = {}
        # Whether the model takes images (then it runs channel-last).
        arrays = make_inputs(ready.specs, 1, ready.sequence, ready.vocabulary)
        self.images = any(is_image(torch.from_numpy(arrays[name])) for name in ready.input_names)

    def measure(self, point):
        torch, ready = self.torch, self.ready
        if not point.device.startswith("cuda"):
            return None
        device = torch.device(point.device)
        key = (point.device, point.precision)
        dtype = point_dtype(torch, point.precision)
        if key not in self.compiled:
            import copy
            self.compiled.clear()  # one converted copy of the weights on the GPU at a time
            module = copy.deepcopy(ready.module).to(device=device, dtype=dtype).eval()
            if self.images:
                module = module.to(memory_format=torch.channels_last)
            self.compiled[key] = torch.compile(module)
        module = self.compiled[key]
        arrays = make_inputs(ready.specs, point.batch, ready.sequence, ready.vocabulary)
        # Floating inputs (pixel values) in the model's type; ids and masks stay integers.
        host_inputs = host_inputs_for(torch, arrays, ready.input_names, point.host_memory == "pinned", dtype,
                                      channels_last=self.images)
        run_once = gpu_run(torch, module, host_inputs, device, point.host_memory)

        def compile_first():
            started = time.perf_counter()
            run_once()
            torch.cuda.synchronize(device)
            print(f"{NAME}: {point.label()} batch {point.batch}: compiled in {time.perf_counter() - started:.1f} s",
                  flush=True)

        return measure_on_gpu(torch, NAME, point, run_once, ready.timing, device, before=compile_first)


def prepare(doc, points, **_):
    """A Peer, or None (having said why) when there is no GPU point torch can time."""
    try:
        import torch
    except ImportError:
        print(f"{NAME}: skipped: torch is not installed")
        return None
    if not gpu_ready(torch, points):
        return None
    ready = setup(torch, doc, NAME)
    return Peer(torch, ready) if ready is not None else None
