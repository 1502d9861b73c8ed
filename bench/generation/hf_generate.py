"""Hugging Face generate() timed the way `infer-bench --generate` times infer: the same checkpoint
folder (GPT-2 or T5), device and precision (the model .half()/.to(bfloat16) for f16/bf16, as a PyTorch user
would), a batch of random prompts, every sequence exactly NEW tokens long (min_new_tokens), greedy
search with the cache. Prefill is generate(max_new_tokens=1); decode tokens/s is
batch·(NEW-1) / (time of NEW tokens - time of 1 token). torch.cuda.synchronize() before every
clock read; one warm-up call of each length first; medians of RUNS.

    python3 hf_generate.py FOLDER --device cuda --precision f16 --batch 8 --prompt 32 --new 64 --runs 5
Prints one JSON line."""
import argparse
import json
import os
import statistics
import time

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--precision", default="f32", choices=["f32", "f16", "bf16"])
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--prompt", type=int, default=32)
    parser.add_argument("--new", type=int, default=64)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()

    import torch
    import transformers

    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device("cuda" if args.device.startswith("cuda") else "cpu")
    dtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[args.precision]
    config = transformers.AutoConfig.from_pretrained(args.folder)
    loader = transformers.AutoModelForSeq2SeqLM if config.is_encoder_decoder else transformers.AutoModelForCausalLM
    model = loader.from_pretrained(args.folder).to(device=device, dtype=dtype).eval()
    new_from = 1 if config.is_encoder_decoder else args.prompt  # the decoder's start token, or the prompt
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(0, model.config.vocab_size, (args.batch, args.prompt), generator=generator).to(device)
    mask = torch.ones_like(ids)

    def timed(new):
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        with torch.inference_mode():
            out = model.generate(input_ids=ids, attention_mask=mask, do_sample=False, max_new_tokens=new,
                                 min_new_tokens=new, pad_token_id=0)
        if device.type == "cuda":
            torch.cuda.synchronize()
        assert out.shape[1] == new_from + new
        return (time.perf_counter() - start) * 1000.0

    timed(1)
    timed(args.new)
    prefill, decode = [], []
    for _ in range(args.runs):
        first = timed(1)
        whole = timed(args.new)
        prefill.append(first)
        decode.append(args.batch * (args.new - 1) * 1000.0 / max(whole - first, 1e-9))
    print(json.dumps({"peer": "transformers generate", "device": args.device, "precision": args.precision,
                      "batch": args.batch, "prompt_tokens": args.prompt, "new_tokens": args.new,
                      "prefill_ms": statistics.median(prefill), "decode_tokens_per_s": statistics.median(decode),
                      "runs": args.runs, "torch": torch.__version__, "transformers": transformers.__version__}))


if __name__ == "__main__":
    main()
