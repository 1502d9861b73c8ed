#!/usr/bin/env python3
"""Packs all-MiniLM-L6-v2 small enough to travel to a machine without a registry that accepts
little data per call (the GPU machine: 64 MiB a call, build dependencies included).

    ~/.cache/infer/venv/bin/python scripts/models/pack-minilm-for-device.py   # writes .carry/all-MiniLM-L6-v2/
    python3 scripts/models/pack-minilm-for-device.py --unpack .carry/all-MiniLM-L6-v2   # on the device

.carry/all-MiniLM-L6-v2/ has the layout of .cache/models/all-MiniLM-L6-v2/ (model.onnx, vocab.txt,
sentences.json, embeddings.npy, test_data_set_0/, tokenizer_corpus.json, manifest.json) with two
differences, both written in manifest.json ("transport"):

  * the weights are rounded to float16: every parameter of the torch model is rounded
    (param.data = param.data.half().float()) before the export, and ALL references (the
    last_hidden_state of test_data_set_0 and sentence-transformers' encode() in embeddings.npy)
    are recomputed from the rounded model, so infer is compared with the same function as in
    .cache/models. In model.onnx the large float initializers are stored as float16, each followed
    by a Cast to float: the graph computes in float32 as before, the file is half the size.
  * when the folder would still be over --limit-mb (default 38 MB), model.onnx is compressed into
    model.onnx.xz (Python's lzma), which the device must unpack before the tests run:
    `python3 scripts/models/pack-minilm-for-device.py --unpack DIR` (standard library only) or
    `xz -dk DIR/model.onnx.xz`.

The tests then use it through INFER_MODEL_CACHE=$PWD/.carry. --unpack needs only Python's
standard library; packing needs what prepare.sh installs, and the prepared .cache/models/
all-MiniLM-L6-v2 for its tokenizer corpus.
"""
import argparse
import json
import lzma
import pathlib
import shutil
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
NAME = "all-MiniLM-L6-v2"
# Initializers with at least this many elements are stored as float16 (when exact): the
# matrices and the embeddings; LayerNorm scales and biases stay float32 (the few KB are not worth
# a node each).
MIN_ELEMENTS = 4096


# Plain xz (`xz -d` reads it), tuned for 2-byte values: no literal context bits, literal and
# position states aligned to 2 bytes. On this model: 38.7 MB, where preset 9e gives 40.6 MB; the
# float16 weights' own entropy (random mantissas) leaves little more to take.
XZ_FILTERS = [{"id": lzma.FILTER_LZMA2, "preset": 6, "lc": 0, "lp": 1, "pb": 1}]


def log(message):
    print(f"pack: {message}", flush=True)


def unpack(folder):
    packed = folder / "model.onnx.xz"
    if not packed.exists():
        log(f"nothing to unpack in {folder}" + (" (model.onnx is there)" if (folder / "model.onnx").exists() else ""))
        return
    with lzma.open(packed) as source, open(folder / "model.onnx.partial", "wb") as target:
        shutil.copyfileobj(source, target, 1 << 20)
    (folder / "model.onnx.partial").rename(folder / "model.onnx")
    packed.unlink()
    log(f"unpacked {folder / 'model.onnx'}")


def halve_initializers(path):
    """Stores the large float32 initializers of the ONNX file at path as float16 followed by a
    Cast to float32, where float16 holds them exactly (all of them, the weights being rounded)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(path))
    graph = model.graph
    graph_inputs = {value.name for value in graph.input}
    casts, kept, halved = [], [], 0
    for initializer in graph.initializer:
        array = numpy_helper.to_array(initializer)
        if (initializer.data_type != TensorProto.FLOAT or array.size < MIN_ELEMENTS
                or initializer.name in graph_inputs):
            kept.append(initializer)
            continue
        half = array.astype(np.float16)
        if not np.array_equal(half.astype(np.float32), array):
            log(f"{initializer.name} is not exactly float16 (folded by the export?): kept as float32")
            kept.append(initializer)
            continue
        stored = f"{initializer.name}_float16"
        kept.append(numpy_helper.from_array(half, stored))
        casts.append(helper.make_node("Cast", [stored], [initializer.name], to=TensorProto.FLOAT,
                                      name=f"{initializer.name}_to_float"))
        halved += 1
    del graph.initializer[:]
    graph.initializer.extend(kept)
    nodes = casts + list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    log(f"model.onnx: {halved} initializers stored as float16 with a Cast to float")


def pack(out, limit_mb):
    import numpy as np
    import torch

    sys.path.insert(0, str(HERE))
    import prepare  # the export and the reference of .cache/models, shared

    source = prepare.CACHE / NAME
    if not (source / "tokenizer_corpus.json").exists():
        sys.exit(f"pack: {source} is not prepared: run scripts/models/prepare.sh {NAME} first")
    from sentence_transformers import SentenceTransformer

    partial = out.parent / f"{out.name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)

    def round_to_half(module):
        with torch.no_grad():
            for parameter in module.parameters():
                parameter.data = parameter.data.half().float()

    # The exported encoder (eager attention), rounded, exported as prepare.py does.
    module, input_names, output_name = prepare.torch_model(NAME)
    round_to_half(module)
    torch.manual_seed(prepare.SEED)
    sentence_model = SentenceTransformer(str(prepare.minilm_weights()), device="cpu")
    round_to_half(sentence_model)
    tokenizer = sentence_model.tokenizer
    example = tokenizer(prepare.SENTENCES[:2], padding=True, return_tensors="pt")
    prepare.export_model(NAME, module, example, partial / "model.onnx")
    halve_initializers(partial / "model.onnx")

    # References from the rounded model, as prepare_minilm makes them from the original.
    encoded = tokenizer(prepare.SENTENCES, padding=True, truncation=True,
                        max_length=sentence_model.max_seq_length, return_tensors="pt")
    with torch.no_grad():
        hidden = sentence_model[0].auto_model(**encoded).last_hidden_state
        exported = module(*(encoded[name] for name in input_names))
    for index, name in enumerate(input_names):
        prepare.save_npy(partial / "test_data_set_0" / f"input_{index}.npy", encoded[name].numpy().astype(np.int64))
    prepare.save_npy(partial / "test_data_set_0" / "output_0.npy", hidden.numpy().astype(np.float32))
    embeddings = sentence_model.encode(prepare.SENTENCES, convert_to_numpy=True, batch_size=len(prepare.SENTENCES))
    prepare.save_npy(partial / "embeddings.npy", embeddings.astype(np.float32))
    original = np.load(source / "embeddings.npy")
    log(f"rounding the weights to float16 moved the embeddings by at most {np.abs(embeddings - original).max():.2e}"
        f"; the exported module and sentence-transformers' encoder differ by "
        f"{(exported - hidden).abs().max().item():.2e} on last_hidden_state")

    for name in ("vocab.txt", "sentences.json", "tokenizer_corpus.json"):
        shutil.copyfile(source / name, partial / name)
    manifest = json.loads((source / "manifest.json").read_text())
    manifest["reference"] = ("test_data_set_0: last_hidden_state of the 10 sentences; embeddings.npy: "
                             "sentence-transformers encode() of sentences.json; both from the model with "
                             "its weights rounded to float16 (see transport)")
    transport = {
        "weights": "every parameter rounded to float16 (param.data = param.data.half().float()) before the "
                   "export and before computing the references: the same function as .cache/models' "
                   "all-MiniLM-L6-v2 up to that rounding, compared exactly as there",
        "model.onnx": f"float32 initializers of at least {MIN_ELEMENTS} elements stored as float16, each "
                      "followed by a Cast to float32; the graph computes in float32",
        "packed_by": "scripts/models/pack-minilm-for-device.py",
    }
    manifest["transport"] = transport
    manifest["versions"] = prepare.versions()

    def size(folder):
        return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())

    if size(partial) > limit_mb * 1e6:
        with open(partial / "model.onnx", "rb") as source_file, \
                lzma.open(partial / "model.onnx.xz", "wb", filters=XZ_FILTERS) as target:
            shutil.copyfileobj(source_file, target, 1 << 20)
        (partial / "model.onnx").unlink()
        transport["compressed"] = ("model.onnx.xz: unpack before use with `python3 "
                                   "scripts/models/pack-minilm-for-device.py --unpack DIR` or `xz -dk`")
    (partial / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    partial.rename(out)
    files = ", ".join(f"{f.relative_to(out)} {f.stat().st_size / 1e6:.1f} MB"
                      for f in sorted(out.rglob("*")) if f.is_file() and f.stat().st_size > 1e6)
    log(f"wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}: {size(out) / 1e6:.1f} MB "
        f"({size(out) / 2**20:.1f} MiB) in all; {files}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / ".carry" / NAME,
                        help="the folder to write (default .carry/all-MiniLM-L6-v2)")
    parser.add_argument("--limit-mb", type=float, default=38,
                        help="compress model.onnx when the folder is larger than this (default 38)")
    parser.add_argument("--unpack", type=pathlib.Path, metavar="DIR",
                        help="only unpack DIR/model.onnx.xz into DIR/model.onnx (standard library only)")
    args = parser.parse_args()
    if args.unpack:
        unpack(args.unpack)
        return
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    pack(args.out.resolve(), args.limit_mb)


if __name__ == "__main__":
    main()
