"""infer's Generator against Hugging Face generate(), alternating point by point in one run on
one machine: for each (device, precision, batch), `infer-bench --generate` and hf_generate.py,
then again in the other order; the table gives each side's best of its two medians and the ratio
infer/HF of decode tokens/s (> 1: infer is faster) and HF/infer of prefill time.

    python3 compare.py FOLDER --infer-bench build/bin/infer-bench --points cuda:f16:1,cuda:f16:32,cpu:f32:1
    [--prompt 32 --new 64 --runs 5 --threads N --json out.json]
Under each row, infer's profiled decode step (device busy time, copies, ops, the host's share).
Each point a separate process for each side, so neither keeps the other's memory or threads."""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent


def run_infer(args, device, precision, batch):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        command = [args.infer_bench, args.folder, "--generate", "--devices", device, "--precision", precision,
                   "--cpu-precision", precision, "--batch", str(batch), "--prompt", str(args.prompt),
                   "--new-tokens", str(args.new), "--runs", str(args.runs), "--json", out.name]
        if args.threads and device == "cpu":
            command += ["--threads", str(args.threads)]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        measurements = json.loads(pathlib.Path(out.name).read_text())["measurements"]
        if not measurements:
            raise SystemExit(f"infer-bench measured nothing at {device} {precision} batch {batch}")
        return measurements[0]


def run_hf(args, device, precision, batch):
    command = [sys.executable, str(HERE / "hf_generate.py"), args.folder, "--device", device, "--precision", precision,
               "--batch", str(batch), "--prompt", str(args.prompt), "--new", str(args.new), "--runs", str(args.runs)]
    if args.threads and device == "cpu":
        command += ["--threads", str(args.threads)]
    result = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--infer-bench", default="build/bin/infer-bench")
    parser.add_argument("--points", default="cuda:f16:1,cuda:f16:32")
    parser.add_argument("--prompt", type=int, default=32)
    parser.add_argument("--new", type=int, default=64)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--json")
    args = parser.parse_args()

    rows = []
    print(f"{'device':8} {'prec':5} {'batch':>5} | {'infer prefill ms':>16} {'HF prefill ms':>13} | "
          f"{'infer tok/s':>11} {'HF tok/s':>9} {'infer/HF':>8}")
    for point in args.points.split(","):
        device, precision, batch = point.split(":")
        batch = int(batch)
        ours, theirs = [], []
        for order in (0, 1):  # alternate which side goes first
            for side in ((run_infer, ours), (run_hf, theirs))[:: 1 if order == 0 else -1]:
                side[1].append(side[0](args, device, precision, batch))
        best = lambda runs: max(runs, key=lambda r: r["decode_tokens_per_s"])
        a, b = best(ours), best(theirs)
        row = {"device": device, "precision": precision, "batch": batch, "prompt_tokens": args.prompt,
               "new_tokens": args.new, "infer": ours, "hf": theirs,
               "decode_ratio": a["decode_tokens_per_s"] / b["decode_tokens_per_s"],
               "prefill_ratio": b["prefill_ms"] / min(r["prefill_ms"] for r in ours)}
        rows.append(row)
        print(f"{device:8} {precision:5} {batch:>5} | {min(r['prefill_ms'] for r in ours):>16.2f} "
              f"{min(r['prefill_ms'] for r in theirs):>13.2f} | {a['decode_tokens_per_s']:>11.0f} "
              f"{b['decode_tokens_per_s']:>9.0f} {row['decode_ratio']:>8.2f}", flush=True)
        if "step_profile" in a:
            p = a["step_profile"]
            ops = ", ".join(f"{o['op']} {o['ms']:.3f}" for o in p["top_ops_ms"])
            print(f"    infer's decode step, profiled: wall {p['wall_ms']:.3f} ms, device busy {p['device_busy_ms']:.3f} ms, "
                  f"copies in {p['h2d_ms']:.3f} / out {p['d2h_ms']:.3f} ms, choosing tokens {p['choose_ms_per_step']:.3f} ms "
                  f"(host); ops (ms): {ops}", flush=True)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
