"""
Prefill, decode and a paged cache
=================================

A small causal language model, :class:`attn.models.tiny_lm.TinyLM`, reads a prompt of 128
tokens once in one pass (prefill) and once one token per pass with a KV cache (decode):
the time per token, in thread CPU time, is far larger in decode. Then a layer decodes
with a :class:`attn.PagedKVCache`, a cache stored in blocks, and gives the same outputs
as with a contiguous :class:`attn.KVCache`. Companion of :ref:`chapter 18 <ch-18>`.
"""

# %%
# Prefill against decode
# ----------------------
# The weights are random: the amount of work does not depend on training. Each loop
# runs five times and keeps its median thread CPU time. With a model this small, the
# gap is mostly the fixed cost of each call, paid once per token in decode;
# :ref:`chapter 18 <ch-18>` counts why the decode of a large model is bound by reading
# memory instead.
import statistics
import time

import matplotlib.pyplot as plt
import torch

import attn
from attn.models.tiny_lm import TinyLM

torch.set_num_threads(1)
torch.manual_seed(0)
model = TinyLM(vocab_size=50, context_length=256, d_model=64, num_layers=2, num_heads=4).eval()
prompt = torch.randint(0, 50, (1, 128), generator=torch.Generator().manual_seed(1))  # (B, T)


def cpu_ms(fn, repeats=5):
    # ms = 1e3 * median(thread_time(fn))
    times = []
    for _ in range(repeats):
        start = time.thread_time()
        fn()
        times.append(time.thread_time() - start)
    return 1e3 * statistics.median(times)


def decode():
    caches = model.new_caches()
    for t in range(128):  # T = 1, P = t
        model(prompt[:, t:t + 1], caches)


with torch.no_grad():
    ms_prefill = cpu_ms(lambda: model(prompt, model.new_caches()))  # T = 128, P = 0
    ms_decode = cpu_ms(decode)
print(f"T = 128: {ms_prefill / 128:.3f} ms/token, T = 1: {ms_decode / 128:.3f} ms/token")
assert ms_decode > 5 * ms_prefill

fig, ax = plt.subplots(figsize=(5, 3))
ax.bar(["$T = 128$", "$T = 1$"], [ms_prefill / 128, ms_decode / 128])
ax.set(ylabel="ms / token", yscale="log")
# sphinx_gallery_alt = "Bar chart with two bars on a logarithmic axis, the milliseconds of thread CPU time per token when 128 tokens go through the model at once and when they go one at a time: the second bar is much taller."
plt.show()

# %%
# A paged cache gives the same outputs
# ------------------------------------
# A multi-head attention layer prefills 13 tokens and decodes 27 more, once with a
# contiguous cache and once with blocks of 8 positions from a pool of 16.
mha = attn.MultiHeadAttention(32, 32, context_length=64, dropout=0.0, num_heads=4).eval()
x = torch.randn(2, 40, 32)  # (B, T, d_in)
outs = []
with torch.no_grad():
    for cache in (attn.KVCache(), attn.PagedKVCache(num_blocks=16, block_size=8)):
        first = mha(x[:, :13], cache=cache)  # (2, 13, 32)
        rest = [mha(x[:, t:t + 1], cache=cache) for t in range(13, 40)]  # 27 x (2, 1, 32)
        outs.append(torch.cat([first, *rest], dim=1))  # (2, 40, 32)
print(cache)
torch.testing.assert_close(outs[1], outs[0], rtol=0, atol=0)
print("max |outs[1] - outs[0]| =", (outs[1] - outs[0]).abs().max().item())
