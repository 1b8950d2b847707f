"""
The latent cache of MLA against the caches of MHA and GQA
=========================================================

Three causal attention layers of the same width, 8 heads of 8, read the same tokens one
at a time, each through its own :class:`attn.KVCache`: multi-head attention, grouped-query
attention with 2 key-value heads, and multi-head latent attention with a latent of width
8 and a RoPE part of width 4. The MLA layer decoded token by token, in its plain and its
absorbed form, gives the output of one pass over the whole sequence, and its cache holds
:math:`d_c + d_r` numbers per token, against :math:`2 \\cdot h_{kv} \\cdot d_{head}`.
Companion of :ref:`chapter 19 <ch-19>`.
"""

# %%
# Three layers, three caches
# --------------------------
# Each token goes through the three layers; each layer appends what it caches to its own
# cache: keys and values of 8 or 2 heads, or one latent and one rotated key.
import matplotlib.pyplot as plt
import torch

import attn

torch.manual_seed(0)
d_model, h, T = 64, 8, 48
x = torch.randn(1, T, d_model)  # (B, T, d_model), B = 1
layers = {
    "MHA": attn.MultiHeadAttention(d_model, d_model, T, 0.0, h),
    "GQA": attn.GroupedQueryAttention(d_model, d_model, T, 0.0, h, 2),
    "MLA": attn.MultiHeadLatentAttention(d_model, d_model, T, h, kv_latent_dim=8, rope_head_dim=4),
}
caches = {name: attn.KVCache() for name in layers}
held = {name: [] for name in layers}
with torch.no_grad():
    for t in range(T):
        for name, layer in layers.items():
            layer.eval()(x[:, t:t + 1], cache=caches[name])  # (B, 1, d_model)
            held[name].append(caches[name].nbytes)
for name in layers:
    print(f"{name}: T={T}, nbytes={held[name][-1]}, nbytes/T={held[name][-1] // T}")

# %%
# Decoding equals the full pass, in both forms
# --------------------------------------------
# The latent cache is enough to decode: token by token, with the up-projections applied to
# the keys and values (plain) or absorbed into the queries and outputs, the outputs are
# those of one pass.
mla = layers["MLA"]
with torch.no_grad():
    full = mla(x)
    for absorb in (False, True):
        cache = attn.KVCache()
        steps = torch.cat([mla(x[:, t:t + 1], cache=cache, absorb=absorb) for t in range(T)], dim=1)
        torch.testing.assert_close(steps, full)
        print(f"absorb={absorb}: max |steps - full| = {(steps - full).abs().max().item():.1e}")

# %%
# Bytes against the number of cached positions
# --------------------------------------------
# The measured sizes equal the formulas of :func:`attn.kv_cache_bytes` and
# :func:`attn.latent_cache_bytes` for one layer of float32 numbers (checked below).
formula = {
    "MHA": lambda t: attn.kv_cache_bytes(1, h, d_model // h, t, bytes_per_element=4),
    "GQA": lambda t: attn.kv_cache_bytes(1, 2, d_model // h, t, bytes_per_element=4),
    "MLA": lambda t: attn.latent_cache_bytes(1, 8, t, rope_head_dim=4, bytes_per_element=4),
}
for name in layers:
    assert held[name] == [formula[name](t + 1) for t in range(T)]

fig, ax = plt.subplots(figsize=(6, 3.4), facecolor="white")
for name in layers:
    ax.plot(range(1, T + 1), held[name], marker=".", label=name)
ax.set_xlabel("$T$")
ax.set_ylabel("B")
ax.grid(alpha=0.3)
ax.legend()
fig.tight_layout()
# sphinx_gallery_alt = "Line plot of the bytes held by the cache against the number of cached positions T, one straight line each for multi-head, grouped-query and latent attention. All three rise in proportion to T; the multi-head line is the steepest and the latent one the flattest."
plt.show()
