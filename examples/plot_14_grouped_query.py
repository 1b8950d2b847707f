"""
The KV cache of MHA, GQA and MQA, measured
==========================================

Three causal attention layers with the same 8 query heads and 8, 2 and 1 key-value
heads read the same tokens, one at a time, through an :class:`attn.KVCache` each. The
bytes each cache holds are read after every token: they grow linearly with the number
of cached positions, in the ratio of the key-value heads, and match the size formula
:math:`2 \\cdot h_{kv} \\cdot d_{head} \\cdot T \\cdot b` of one layer. Companion of
:ref:`chapter 14 <ch-14>`.
"""

# %%
# Three layers, three caches
# --------------------------
# The layers differ only in ``num_kv_heads``; each token goes through all three, and
# each appends its keys and values to its own cache. The cache holds ``num_kv_heads``
# heads: the query heads of a group share them.
import matplotlib.pyplot as plt
import torch

import attn

torch.manual_seed(0)
d_model, h, T = 64, 8, 48
x = torch.randn(1, T, d_model)  # (B, T, d_model), B = 1
layers = {h_kv: attn.GroupedQueryAttention(d_model, d_model, T, 0.0, h, h_kv).eval() for h_kv in (8, 2, 1)}
caches = {h_kv: attn.KVCache() for h_kv in layers}
held = {h_kv: [] for h_kv in layers}
with torch.no_grad():
    for t in range(T):
        for h_kv, layer in layers.items():
            layer(x[:, t:t + 1], cache=caches[h_kv])  # (B, T_new, d_model) = (1, 1, 64)
            held[h_kv].append(caches[h_kv].nbytes)
for cache in caches.values():
    print(cache)

# %%
# Bytes against the number of cached positions
# --------------------------------------------
# Each line is a measurement; the formula (:func:`attn.kv_cache_bytes` for one layer), with
# ``d_head = 8`` and 4 bytes per float32 number, gives the same numbers exactly (checked
# below).
head_dim = d_model // h
for h_kv in layers:
    formula = [attn.kv_cache_bytes(1, h_kv, head_dim, t + 1, bytes_per_element=4) for t in range(T)]
    assert held[h_kv] == formula
    print(f"{h_kv=}: {T=}, {held[h_kv][-1]=}, {held[h_kv][-1] // T=}")

fig, ax = plt.subplots(figsize=(6, 3.4), facecolor="white")
for h_kv in layers:
    ax.plot(range(1, T + 1), held[h_kv], marker=".", label=f"$h={h},\\ h_{{kv}}={h_kv}$")
ax.set_xlabel("$T$")
ax.set_ylabel("B")
ax.grid(alpha=0.3)
ax.legend()
fig.tight_layout()
# sphinx_gallery_alt = "Line plot of the bytes held by the cache against the number of cached positions T, one straight line per number of key-value heads. Each line rises in proportion to T, and the fewer key-value heads, the lower the line."
plt.show()
