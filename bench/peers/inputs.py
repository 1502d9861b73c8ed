"""Model inputs by infer-bench's rules (tools/infer_bench/inputs.hpp): dim 0 is the batch, other
dynamic dims the sequence length; integer inputs named like *mask* are ones, *token_type* or
*type_ids* zeros, other integers ids in [1000, 2000) (for a vocabulary of fewer than 2000 ids,
the document's model.vocabulary, its upper half); float inputs standard normal float32.
Seeded, so every peer gets the same values. The values differ from infer-bench's own (another
generator), which does not matter for timing: only shapes, dtypes and roles do."""
import numpy as np

SEED = 1234
DTYPES = {"i64": np.int64, "i32": np.int32, "f32": np.float32, "int64": np.int64, "int32": np.int32,
          "float32": np.float32}


def input_specs(doc):
    """[(name, numpy dtype, shape with -1 for dynamic dims)] in graph-input order, from the
    infer-bench document's model.inputs."""
    specs = []
    for entry in doc["model"]["inputs"]:
        dtype = DTYPES.get(entry["dtype"])
        if dtype is None:
            raise ValueError(f"input {entry['name']}: no peer input generator for dtype {entry['dtype']}")
        specs.append((entry["name"], dtype, [int(d) if d is not None else -1 for d in entry["shape"]]))
    return specs


def concrete_shape(shape, batch, sequence):
    return tuple(batch if axis == 0 and d < 0 else sequence if d < 0 else d for axis, d in enumerate(shape))


def token_ids(vocabulary):
    """[low, high) of the token ids drawn, as infer-bench's TokenIds::below (0: unknown)."""
    if not vocabulary or vocabulary >= 2000:
        return 1000, 2000
    return vocabulary // 2, vocabulary


def make_inputs(specs, batch, sequence, vocabulary=0):
    """{name: numpy array}, in graph-input order."""
    low, high = token_ids(vocabulary)
    rng = np.random.default_rng(SEED)
    arrays = {}
    for name, dtype, shape in specs:
        dims = concrete_shape(shape, batch, sequence)
        role = name.lower()
        if np.issubdtype(dtype, np.integer):
            if "mask" in role:
                arrays[name] = np.ones(dims, dtype=dtype)
            elif "token_type" in role or "type_ids" in role:
                arrays[name] = np.zeros(dims, dtype=dtype)
            else:
                arrays[name] = rng.integers(low, high, size=dims, dtype=dtype)
        else:
            arrays[name] = rng.standard_normal(dims, dtype=np.float32)
    return arrays
