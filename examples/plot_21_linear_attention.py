"""
Linear attention: one recurrence, three forms, a state of fixed size
====================================================================

The gated delta rule of :mod:`attn.ops.linear` computed as a loop over tokens, as one masked
product and in chunks gives the same outputs; the mask of the parallel form is the causal
mask weighted by the decay of the gate; and the state a layer keeps has a fixed size,
where a KV cache grows with every token. Companion of :ref:`chapter 21 <ch-21>`.
"""

# %%
# Three forms, one output
# -----------------------
# The loop over tokens is the definition; the parallel form (one triangular solve for the
# whole sequence) and the chunked form (chunks of 16, the state carried between them) must
# give its outputs up to rounding, here for 100 tokens, not a multiple of 16.
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

import attn
from attn.ops.linear import gated_delta_rule

torch.manual_seed(0)
B, h, T, d_k, d_v = 1, 2, 100, 8, 8
q = F.normalize(torch.randn(B, h, T, d_k, dtype=torch.float64), dim=-1)  # (B, h, T, d_k)
k = F.normalize(torch.randn(B, h, T, d_k, dtype=torch.float64), dim=-1)  # (B, h, T, d_k)
v = torch.randn(B, h, T, d_v, dtype=torch.float64)  # (B, h, T, d_v)
alpha = 0.85 + 0.15 * torch.rand(B, h, T, dtype=torch.float64)  # (B, h, T)
beta = torch.rand(B, h, T, dtype=torch.float64)  # (B, h, T)
ref = gated_delta_rule(q, k, v, alpha, beta, form="recurrent")
for form in ("parallel", "chunked"):
    o = gated_delta_rule(q, k, v, alpha, beta, form=form, chunk_size=16)
    err = (o - ref).abs().max().item()
    print(f"{form}: max |o - ref| = {err:.1e}")
    assert err < 1e-10

# %%
# The causal mask and the decay-aware mask
# ----------------------------------------
# Linear attention weights the scores with the causal mask :math:`M`; with a gate, what
# token :math:`i` wrote reaches token :math:`t` multiplied by
# :math:`\Gamma_{ti} = \prod_{s=i+1}^{t} \alpha_s`, which fades away from the diagonal.
n = 16
g = alpha[0, 0, :n].log().cumsum(-1)  # (n,): log gamma_t
M = torch.ones(n, n, dtype=torch.bool).tril()  # (n, n)
Gamma = (g[:, None] - g[None, :]).masked_fill(~M, float("-inf")).exp()  # (n, n): gamma_t / gamma_i
fig, axes = plt.subplots(1, 2, figsize=(7, 3.4), facecolor="white")
for ax, mat, title in zip(axes, (M.double(), Gamma), ("$M$", r"$\Gamma$")):
    im = ax.imshow(mat, vmin=0, vmax=1, cmap="viridis")
    ax.set_title(title)
    ax.set_xlabel("$i$")
    ax.set_ylabel("$t$")
fig.colorbar(im, ax=axes, shrink=0.8)
# sphinx_gallery_alt = "Two 16 by 16 heatmaps side by side with a shared colour scale from 0 to 1. Left, the causal mask M: ones on and below the diagonal, zeros above. Right, the decay-aware mask Gamma: zeros above the diagonal, ones on it, and values that fade towards 0 away from the diagonal, down towards the bottom left corner."
plt.show()

# %%
# A state of fixed size against a growing cache
# ---------------------------------------------
# One layer with 32 heads of :math:`128 \times 128` states keeps the same bytes whatever
# the length; a softmax layer with 2 key-value heads of 256 (the layers of Qwen3-Next)
# keeps :math:`2 \cdot 2 \cdot 256` numbers more per token (16-bit numbers, one sequence):
# the two are equal at 512 tokens.
Ts = [2**p for p in range(8, 19)]
state = 32 * 128 * 128 * 2  # bytes: h x d_k x d_v x 2
cache = [attn.kv_cache_bytes(1, 2, 256, T_) for T_ in Ts]
cross = next(T_ for T_, c in zip(Ts, cache) if c > state)
print(f"state = {state / 2**20:.0f} MiB, cache(T) > state: T >= {cross}")
assert cross == 1024 and attn.kv_cache_bytes(1, 2, 256, 512) == state
fig, ax = plt.subplots(figsize=(6, 3.4), facecolor="white")
ax.plot(Ts, [state / 2**20] * len(Ts), label="state")
ax.plot(Ts, [c / 2**20 for c in cache], label="KV cache")
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xlabel("$T$")
ax.set_ylabel("MiB")
ax.legend()
ax.grid(alpha=0.3)
# sphinx_gallery_alt = "Line plot on logarithmic axes of MiB against the number of tokens T, from 256 to 262144. The state is a flat line at 1 MiB; the KV cache is a straight rising line that crosses it at T = 512 and ends far above it."
plt.show()
