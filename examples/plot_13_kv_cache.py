"""
Time per token, with and without a KV cache
===========================================

A small causal language model, :class:`attn.models.tiny_lm.TinyLM`, writes tokens greedily, once
sending the whole sequence through the model at every step and once keeping the keys and
values of earlier positions in one :class:`attn.KVCache` per layer. The tokens are the
same; the time of a step grows with the position without the cache and far more slowly
with it (the cache is read, and copied, at every step). The weights are random: the amount of work per step does not depend on
training. Companion of :ref:`chapter 13 <ch-13>`, which trains the model first.
"""

# %%
# The model and the prompt
# ------------------------
# Vocabulary of 50 tokens, two blocks, four heads of dimension 16, up to 128 positions;
# a batch of 4 prompts of 4 random tokens each.
import time

import matplotlib.pyplot as plt
import torch

from attn.models.tiny_lm import TinyLM, step_times

torch.set_num_threads(1)
torch.manual_seed(0)
T_MAX = 128
model = TinyLM(vocab_size=50, context_length=T_MAX, d_model=64, num_layers=2, num_heads=4).eval()
prompt = torch.randint(0, 50, (4, 4), generator=torch.Generator().manual_seed(1))  # (B, T_prompt)

# %%
# Same tokens
# -----------
# ``generate`` with ``use_cache=False`` and ``use_cache=True`` writes the same tokens.
a = model.generate(prompt, T_MAX - 4, use_cache=False)  # (4, 128)
b = model.generate(prompt, T_MAX - 4, use_cache=True)  # (4, 128)
print("torch.equal:", torch.equal(a, b))
assert torch.equal(a, b)


# %%
# A clock around each step
# ------------------------
# :func:`attn.models.tiny_lm.step_times` runs the loop of ``generate`` with a clock around each
# step; each step is run five times and the median kept. The clock is the CPU time of the
# thread that runs the model (PyTorch on one thread), which leaves out other programs.
# Step :math:`t` writes the token at position :math:`t`. The ``assert`` lines stop the
# build if the measurement contradicts the text.
positions = torch.arange(4, T_MAX)
ms_full = 1e3 * step_times(model, prompt, T_MAX - 4, use_cache=False, repeats=5, clock=time.thread_time)[0]
ms_cache = 1e3 * step_times(model, prompt, T_MAX - 4, use_cache=True, repeats=5, clock=time.thread_time)[0]
print(f"sum: use_cache=False {ms_full.sum() / 1e3:.2f} s, use_cache=True {ms_cache.sum() / 1e3:.2f} s")
print(f"median(t[-10:]): use_cache=False {ms_full[-10:].median():.2f} ms, "
      f"use_cache=True {ms_cache[-10:].median():.2f} ms")
assert ms_full[-10:].median() > 1.5 * ms_full[:10].median()
assert ms_full[-10:].median() > 1.5 * ms_cache[-10:].median()
assert ms_full.sum() > 1.5 * ms_cache.sum()

# %%
# Time against position
# ---------------------
# Without the cache each step runs on all :math:`t` tokens so far; with it, on one.
fig, ax = plt.subplots(figsize=(6, 3.2), facecolor="white", layout="constrained")
ax.plot(positions, ms_full, lw=1, label="use_cache=False")
ax.plot(positions, ms_cache, lw=1, label="use_cache=True")
ax.set_xlabel("$t$")
ax.set_ylabel("ms")
ax.set_ylim(bottom=0)
ax.legend()
# sphinx_gallery_alt = "Line plot of the milliseconds per generation step against the position t, one line without the cache and one with it. The line without the cache climbs as t grows; the line with the cache stays low and nearly flat."
plt.show()
