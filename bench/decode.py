"""Greedy decoding with and without the KV cache, and one decode step, on the CPU.

Run from the repository root: ``python bench/decode.py`` (a minute or so on 2 idle cores;
PyTorch gets ``THREADS = 2`` threads)
runs both parts; ``python bench/decode.py step`` or ``python bench/decode.py generate``
one of them; ``python bench/attention.py decode`` runs both as one section.

**One decode step** (``step``): one attention layer of the model below (d_model=128, 4
query heads of 32) reads one new token (B=1, T=1) after a cache of 255 positions, and
appends it; 16 such steps make one sample. The package's module,
``layer(x, cache=cache)`` with an ``attn.KVCache``, against the same step written
directly with PyTorch, with the layer's own weights: the three projections, ``view`` and
``transpose``, the rotation for RoPE, ``torch.cat`` onto the cached keys and values, one
``F.scaled_dot_product_attention`` (``enable_gqa=True`` when ``h_kv < h``), the output
projection. Three layers: ``MultiHeadAttention``, ``GroupedQueryAttention`` with
``h_kv=1``, and the model's own layer (``h_kv=4`` and RoPE). Time: the median, over
interleaved samples, of the calling thread's CPU time (``time.thread_time``: it leaves
out the time other programs take on a busy machine, and the spinning of idle worker
threads; steps this small run on the calling thread); ``ratio`` is package / direct, target <= 1.5.
``calls`` is the number of Python function calls one step makes, counted by ``cProfile``.
Both must give the same output (checked).

**Generation** (``generate``):

Setting: ``attn.models.tiny_lm.TinyLM`` with vocabulary 256, d_model=128, 4 layers, 4 query
heads of d_head=32, context_length=512, random weights (the time of a step does not
depend on training), float32, ``eval()`` mode, under ``torch.no_grad()``; one prompt of
16 tokens (B=1); ``generate(prompt, 256, use_cache=...)`` appends 256 tokens greedily.

* ``no cache``: every step runs the model on the whole sequence so far (16 to 271
  tokens), the reference;
* ``KV cache``: the first step runs on the prompt and fills one ``attn.KVCache`` per
  layer, every later step on the one new token.

Two models: ``h_kv=4`` (multi-head attention) and ``h_kv=1`` (multi-query attention,
one key-value head for the four query heads). Time: the median CPU time of the
calling thread (``time.thread_time``) of a few interleaved runs after a short warm-up; ``speed-up`` is time without the cache / time
with it. The cache's size after the run is printed next to the formula
``2 * layers * h_kv * d_head * T * 4 bytes`` (``attn.kv_cache_bytes``). Both paths must produce the same tokens;
the script says whether they did.
"""
import cProfile
import os
import pstats
import statistics
import sys
import time

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
import attn  # noqa: E402
from attn import kv_cache_bytes  # noqa: E402
from attn.layers.rope import rotate_half  # noqa: E402
from attn.models.tiny_lm import TinyLM  # noqa: E402

V, D, LAYERS, HEADS, CONTEXT = 256, 128, 4, 4, 512
PROMPT, NEW, REPEATS = 16, 256, 5
THREADS = 2  # PyTorch's intra-op threads, set by main(): both cores of the project's machine
TARGET = 3  # the cache must make generation at least this many times faster
STEP_CACHED, STEP_RUN, STEP_SAMPLES = 255, 16, 41
STEP_TARGET = 1.5  # a decode step of the package's module / the same step written directly


def timed(fn):
    start = time.thread_time()
    out = fn()
    return time.thread_time() - start, out


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


def _direct_step(m, x, k_cache, v_cache):
    """One decode step of layer ``m`` written directly with PyTorch: ``x`` (1, 1, d_in)."""
    B, T, P = x.size(0), x.size(1), k_cache.size(2)
    h, h_kv, d = m.num_heads, m.num_kv_heads, m.head_dim
    q = m.W_query(x).view(B, T, h, d).transpose(1, 2)  # (B, T, h * d) -> (B, h, T, d)
    k = m.W_key(x).view(B, T, h_kv, d).transpose(1, 2)  # (B, T, h_kv * d) -> (B, h_kv, T, d)
    v = m.W_value(x).view(B, T, h_kv, d).transpose(1, 2)  # (B, T, h_kv * d) -> (B, h_kv, T, d)
    if m.rope is not None:
        cos, sin = m.rope.cos[P:P + T], m.rope.sin[P:P + T]  # (T, d)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
    k_cache = torch.cat([k_cache, k], dim=2)  # (B, h_kv, P + 1, d)
    v_cache = torch.cat([v_cache, v], dim=2)  # (B, h_kv, P + 1, d)
    out = F.scaled_dot_product_attention(q, k_cache, v_cache, enable_gqa=h_kv != h)  # (B, h, T, d)
    return m.out_proj(out.transpose(1, 2).reshape(B, T, h * d)), k_cache, v_cache  # (B, T, d_out)


def _layers():
    torch.manual_seed(0)
    return {
        "MultiHeadAttention": attn.MultiHeadAttention(D, D, CONTEXT, 0.0, HEADS).eval(),
        "GQA h_kv=1": attn.GroupedQueryAttention(D, D, CONTEXT, 0.0, HEADS, 1).eval(),
        "GQA h_kv=4, RoPE": attn.GroupedQueryAttention(D, D, CONTEXT, 0.0, HEADS, HEADS, rope_base=10000.0).eval(),
    }


def _package_steps(m, full, xs):
    """The package's module: one step per new token in ``xs``, after the positions of ``full``."""
    cache = attn.KVCache.from_tensors(full.k, full.v)  # a copy of the cached positions
    return [m(x, cache=cache) for x in xs]


def _direct_steps(m, full, xs):
    """The same steps written directly with PyTorch."""
    k, v, outs = full.k, full.v, []
    for x in xs:
        out, k, v = _direct_step(m, x, k, v)
        outs.append(out)
    return outs


def _step_row(m, g):
    """``(direct ms, attn ms, calls of one step (attn, direct), same output)`` for layer ``m``."""
    prompt = torch.randn(1, STEP_CACHED, D, generator=g)
    xs = torch.randn(STEP_RUN, 1, 1, D, generator=g)  # the new tokens, one per step
    with torch.no_grad():
        full = attn.KVCache()
        m(prompt, cache=full)  # (1, h_kv, P, d_head) each
        pairs = zip(_package_steps(m, full, xs), _direct_steps(m, full, xs))
        same = all(torch.allclose(a, b, atol=1e-5, rtol=1e-4) for a, b in pairs)
        times = {_direct_steps: [], _package_steps: []}
        for _ in range(STEP_SAMPLES):
            for fn, ts in times.items():
                start = time.thread_time()
                fn(m, full, xs)
                ts.append(time.thread_time() - start)
        cache = attn.KVCache.from_tensors(full.k, full.v)
        calls = []
        for fn, args, kwargs in ((m, (xs[0],), {"cache": cache}), (_direct_step, (m, xs[0], full.k, full.v), {})):
            prof = cProfile.Profile()
            prof.runcall(fn, *args, **kwargs)  # one step, the call itself included
            calls.append(pstats.Stats(prof).total_calls)
    ms = [statistics.median(times[fn]) * 1e3 for fn in (_direct_steps, _package_steps)]
    return ms[0], ms[1], calls, same


def step():
    """One decode step: the package's module against the same step written directly."""
    print(f"\none decode step: torch {torch.__version__}, threads {torch.get_num_threads()}, "
          f"d_model={D}, {HEADS} heads of {D // HEADS}, B=1, T=1 after {STEP_CACHED} cached positions, "
          f"float32, CPU; CPU ms per {STEP_RUN} steps (median of {STEP_SAMPLES})")
    print(f"  {'layer':20s} {'direct ms':>10s} {'attn ms':>8s} {'ratio':>6s} {'calls':>12s} {'same':>5s}")
    ratios = []
    g = torch.Generator().manual_seed(2)
    for name, m in _layers().items():
        t_direct, t_attn, calls, same = _step_row(m, g)
        ratios.append(t_attn / t_direct)
        print(f"  {name:20s} {t_direct:10.2f} {t_attn:8.2f} {t_attn / t_direct:6.2f} "
              f"{calls[0]:>5d} vs {calls[1]:<4d} {str(same):>5s}")
    verdict = "ok" if max(ratios) <= STEP_TARGET else "MISSED"
    print(f"decode step, package / direct: {max(ratios):.2f}x at most (target <= {STEP_TARGET}: {verdict})")
    return verdict == "ok"


def generate():
    print(f"\ngreedy decoding: torch {torch.__version__}, threads {torch.get_num_threads()}, "
          f"TinyLM d_model={D}, {LAYERS} layers, {HEADS} heads of {D // HEADS}, float32, CPU; "
          f"prompt {PROMPT} tokens, {NEW} new tokens (median of {REPEATS})")
    print(f"  {'model':14s} {'':9s} {'CPU s':>8s} {'ms/token':>9s} {'speed-up':>9s} "
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
    return verdict == "ok"


def main(names=()):
    """Run the parts named (all by default); return True when every target was met."""
    torch.set_num_threads(THREADS)
    parts = {"step": step, "generate": generate}
    unknown = [n for n in names if n not in parts]
    if unknown:
        sys.exit(f"unknown part(s) {unknown}; choose from {list(parts)}")
    return all([parts[name]() for name in names or parts])  # every part runs, then all()


if __name__ == "__main__":
    sys.exit(0 if main(sys.argv[1:]) else 1)  # a MISSED target fails the run
