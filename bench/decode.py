"""Greedy decoding with and without the KV cache, on the CPU.

Run from the repository root: ``python bench/decode.py`` (a minute or so on 2 cores);
``python bench/attention.py decode`` runs the same section.

Setting: ``attn.tiny_lm.TinyLM`` with vocabulary 256, d_model=128, 4 layers, 4 query
heads of d_head=32, context_length=512, random weights (the time of a step does not
depend on training), float32, ``eval()`` mode, under ``torch.no_grad()``; one prompt of
16 tokens (B=1); ``generate(prompt, 256, use_cache=...)`` appends 256 tokens greedily.

* ``no cache``: every step runs the model on the whole sequence so far (16 to 271
  tokens), the reference;
* ``KV cache``: the first step runs on the prompt and fills one ``attn.KVCache`` per
  layer, every later step on the one new token.

Two models: ``h_kv=4`` (multi-head attention) and ``h_kv=1`` (multi-query attention,
one key-value head for the four query heads). Time: the median wall time
(``time.perf_counter``) of a few interleaved runs after a short warm-up; ``speed-up`` is time without the cache / time
with it. The cache's size after the run is printed next to the formula
``2 * layers * h_kv * d_head * T * 4 bytes`` (``attn.kv_cache_bytes``). Both paths must produce the same tokens;
the script says whether they did.
"""
import os
import statistics
import sys
import time

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
from attn import kv_cache_bytes  # noqa: E402
from attn.tiny_lm import TinyLM  # noqa: E402

V, D, LAYERS, HEADS, CONTEXT = 256, 128, 4, 4, 512
PROMPT, NEW, REPEATS = 16, 256, 3
TARGET = 3  # the cache must make generation at least this many times faster


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def run(num_kv_heads):
    torch.manual_seed(0)
    model = TinyLM(V, CONTEXT, d_model=D, num_layers=LAYERS, num_heads=HEADS, num_kv_heads=num_kv_heads).eval()
    prompt = torch.randint(0, V, (1, PROMPT), generator=torch.Generator().manual_seed(1))
    cases = {
        "no cache": lambda: model.generate(prompt, NEW, use_cache=False),
        "KV cache": lambda: model.generate(prompt, NEW, use_cache=True),
    }
    model.generate(prompt, 8, use_cache=False)  # warm-up
    model.generate(prompt, 8, use_cache=True)
    times = {name: [] for name in cases}
    tokens = {}
    for _ in range(REPEATS):
        for name, fn in cases.items():
            seconds, tokens[name] = timed(fn)
            times[name].append(seconds)
    caches = model.new_caches()
    with torch.no_grad():
        model(tokens["KV cache"][:, :-1], caches)  # fill the caches as generation leaves them
    nbytes = sum(c.nbytes for c in caches)
    T = PROMPT + NEW - 1
    formula = kv_cache_bytes(LAYERS, num_kv_heads, D // HEADS, T, bytes_per_element=4)
    same = torch.equal(tokens["no cache"], tokens["KV cache"])
    return {name: statistics.median(ts) for name, ts in times.items()}, same, nbytes, formula


def main():
    print(f"\ngreedy decoding: torch {torch.__version__}, threads {torch.get_num_threads()}, "
          f"TinyLM d_model={D}, {LAYERS} layers, {HEADS} heads of {D // HEADS}, float32, CPU; "
          f"prompt {PROMPT} tokens, {NEW} new tokens (median of {REPEATS})")
    print(f"  {'model':14s} {'':9s} {'wall s':>8s} {'ms/token':>9s} {'speed-up':>9s} "
          f"{'cache KiB':>10s} {'formula':>8s} {'same tokens':>12s}")
    speedups = []
    for h_kv in (HEADS, 1):
        seconds, same, nbytes, formula = run(h_kv)
        label = f"h_kv={h_kv}" + (" (MHA)" if h_kv == HEADS else " (MQA)")
        for name in ("no cache", "KV cache"):
            s = seconds[name]
            extra = f"{nbytes / 1024:10.0f} {formula / 1024:8.0f} {str(same):>12s}" if name == "KV cache" else ""
            print(f"  {label:14s} {name:9s} {s:8.2f} {s / NEW * 1e3:9.2f} "
                  f"{seconds['no cache'] / s:9.1f} {extra}")
        speedups.append(seconds["no cache"] / seconds["KV cache"])
    verdict = "ok" if min(speedups) >= TARGET else "MISSED"
    print(f"speed-up of the KV cache for {NEW} tokens: {min(speedups):.1f}x or more "
          f"(target >= {TARGET}: {verdict})")
    return speedups


if __name__ == "__main__":
    main()
