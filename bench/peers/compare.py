#!/usr/bin/env python3
"""Times peers of infer on the model, inputs and timing rules of an infer-bench run, on this
machine, and writes the infer-bench document again with a "peers" array: every peer point with
its latency and the ratios infer median / peer median (below 1: infer is faster) and infer
throughput / peer throughput (above 1: infer is faster).

Peers: onnxruntime (the CPU, f32 and int8), torch (PyTorch eager on the GPU for every cuda point,
the module converted with .half() / .to(bfloat16), and on the CPU in f32) and torch.compile (on
the GPU: the converted module, then torch.compile). See bench/README.md.

Point by point: each peer is made ready once (sessions, converted modules), then for every point
of the document in turn, infer first (with --infer-bench, which measures that one point again
right there) and then each peer, so that drift of the machine (clocks, heat, neighbours) hits
infer and its peers alike instead of whichever ran last.

Peers already in INFER_JSON (from an earlier run with other --peers) are kept, so the two may run
from different Pythons (ONNX Runtime from a small venv, torch from one that has it).
usage: compare.py INFER_JSON [--out MERGED_JSON] [--peers onnxruntime,torch] [--no-torch-cpu]
                  [--onnx FILE] [--infer-bench BINARY]"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
from typing import NamedTuple, Optional

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import ort_peer  # noqa: E402  (after the path above)
import torch_compile_peer  # noqa: E402
import torch_peer  # noqa: E402

PEERS = {ort_peer.NAME: ort_peer, torch_peer.NAME: torch_peer, torch_compile_peer.NAME: torch_compile_peer}


class Point(NamedTuple):
    """One configuration infer-bench measured; peers are timed at the same ones."""
    device: str
    precision: str
    batch: int
    host_memory: Optional[str]

    def label(self):
        return " ".join(part for part in (self.device, self.precision, self.host_memory) if part)


def point_of(entry):
    return Point(entry["device"], entry["precision"], int(entry["batch"]), entry.get("host_memory"))


def infer_points(doc):
    """The measured points in document order, each once."""
    return list(dict.fromkeys(point_of(m) for m in doc.get("measurements", [])))


def peer_entry(peer, point, summary, infer_by_point):
    entry = {"peer": peer, "device": point.device, "precision": point.precision, "batch": point.batch,
             "host_memory": point.host_memory, **summary,
             "infer_latency_ratio": None, "infer_throughput_ratio": None}
    infer = infer_by_point.get(point)
    if infer is not None:
        entry["infer_latency_ratio"] = infer["latency_ms"]["median"] / summary["latency_ms"]["median"]
        entry["infer_throughput_ratio"] = infer["throughput_per_s"] / summary["throughput_per_s"]
    return entry


def measure_infer(binary, doc, point):
    """infer-bench's measurement of this one point, made now by `binary` with the document's
    settings, or None (said) when it failed."""
    settings = doc["settings"]
    with tempfile.TemporaryDirectory() as folder:
        out = pathlib.Path(folder) / "point.json"
        command = [str(binary), doc["model"]["path"], "--devices", point.device, "--precision", point.precision,
                   "--batch", str(point.batch), "--seq", str(doc["model"]["sequence"]),
                   "--threads", str(settings.get("threads", 0)), "--warmup", str(settings["warmup"]),
                   "--min-time", str(settings["min_time_s"]), "--min-runs", str(settings["min_runs"]),
                   "--profiled-runs", str(settings.get("profiled_runs", 5)), "--json", str(out)]
        if doc["model"].get("vocabulary"):
            command += ["--vocabulary", str(doc["model"]["vocabulary"])]
        if point.device == "cpu":
            command += ["--cpu-precision", point.precision]
        if point.host_memory:
            command += ["--host-memory", point.host_memory]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0 or not out.exists():
            print(f"infer: {point.label()} batch {point.batch}: infer-bench failed ({result.returncode}): "
                  f"{result.stderr.strip()[-400:]}")
            return None
        fresh = [m for m in json.loads(out.read_text())["measurements"] if point_of(m) == point]
        return fresh[0] if fresh else None


def replace_measurement(doc, point, fresh):
    doc["measurements"] = [fresh if point_of(m) == point else m for m in doc["measurements"]]


def print_table(entries, infer_by_point):
    columns = ("peer", "device", "precision", "batch", "host memory", "infer median ms", "peer median ms",
               "ratio infer/peer", "fastest")
    rows = []
    for e in entries:
        point = point_of(e)
        infer = infer_by_point.get(point)
        ratio = e["infer_latency_ratio"]
        medians = [(p["latency_ms"]["median"], p["peer"]) for p in entries if point_of(p) == point]
        if infer:
            medians.append((infer["latency_ms"]["median"], "infer"))
        rows.append((e["peer"], e["device"], e["precision"], str(e["batch"]), e["host_memory"] or "-",
                     f"{infer['latency_ms']['median']:.3f}" if infer else "-", f"{e['latency_ms']['median']:.3f}",
                     f"{ratio:.2f}" if ratio is not None else "-", min(medians)[1]))
    widths = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c) for i, c in enumerate(columns)]
    print("  ".join(c.rjust(w) for c, w in zip(columns, widths)))
    for row in rows:
        print("  ".join(cell.rjust(w) for cell, w in zip(row, widths)))
    print("ratio = infer median / peer median: below 1, infer is faster")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("infer_json", type=pathlib.Path, help="the document infer-bench wrote")
    parser.add_argument("--out", type=pathlib.Path,
                        help="where to write the document with peers (default: INFER_JSON's name + .peers.json)")
    parser.add_argument("--peers", default=",".join(PEERS), help=f"comma-separated, of {', '.join(PEERS)}")
    parser.add_argument("--no-torch-cpu", action="store_true", help="time torch on the GPU only")
    parser.add_argument("--infer-bench", type=pathlib.Path,
                        help="measure infer again at each point, just before its peers, with this infer-bench "
                             "binary (its earlier figures are replaced)")
    parser.add_argument("--onnx", type=pathlib.Path,
                        help="the ONNX file ONNX Runtime runs, where infer-bench measured a model that is not "
                             "one (a Hugging Face folder: infer-run FOLDER --save-onnx FILE writes it)")
    args = parser.parse_args()
    peers = [name.strip() for name in args.peers.split(",") if name.strip()]
    unknown = [name for name in peers if name not in PEERS]
    if unknown:
        parser.error(f"unknown peer {', '.join(unknown)}; known: {', '.join(PEERS)}")

    doc = json.loads(args.infer_json.read_text())
    if doc.get("schema") != "infer-bench/1":
        sys.exit(f"compare: {args.infer_json} is not an infer-bench/1 document (schema {doc.get('schema')!r})")
    if args.onnx:
        doc["model"]["onnx_path"] = str(args.onnx)
    points = infer_points(doc)
    infer_by_point = {point_of(m): m for m in doc.get("measurements", [])}

    ready = {}
    for name in peers:
        print(f"{name}: preparing {doc['model']['name']} (sequence {doc['model']['sequence']})", flush=True)
        peer = PEERS[name].prepare(doc, points, include_cpu=not args.no_torch_cpu)
        if peer is not None:
            ready[name] = peer

    entries = []
    for point in points:
        if args.infer_bench:
            fresh = measure_infer(args.infer_bench, doc, point)
            if fresh is not None:
                replace_measurement(doc, point, fresh)
                infer_by_point[point] = fresh
                print(f"infer: {point.label()} batch {point.batch}: median {fresh['latency_ms']['median']:.3f} ms "
                      f"over {fresh['runs']} runs", flush=True)
        for name, peer in ready.items():
            summary = peer.measure(point)
            if summary is None:
                continue
            entries.append(peer_entry(name, point, summary, infer_by_point))
            print(f"{name}: {point.label()} batch {point.batch}: median {summary['latency_ms']['median']:.3f} ms "
                  f"over {summary['runs']} runs", flush=True)

    print()
    print_table(entries, infer_by_point)
    doc["peers"] = [e for e in doc.get("peers", []) if e["peer"] not in peers] + entries
    out = args.out or args.infer_json.with_name(args.infer_json.stem + ".peers.json")
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"compare: wrote {out}")


if __name__ == "__main__":
    main()
