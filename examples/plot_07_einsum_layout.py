"""
Sequence first or batch first: the same attention
=================================================

The LabML formulation of multi-head attention keeps tensors in the layout
``[seq, batch, heads, d_k]`` and computes the scores with
``torch.einsum("ibhd,jbhd->ijbh", q, k)``. This script loads the weights of a
batch-first :class:`attn.MultiHeadAttention` into an
:class:`attn.SeqFirstMultiHeadAttention`, checks that both give the same output and the
same weights, and draws the weights of every head from both modules. Companion of
:ref:`chapter 7 <ch-07>`.
"""

# %%
# Two modules, one set of weights
# -------------------------------
# ``load_from`` copies the query, key, value and output projections. The input is
# transposed from ``(B, T, d_model)`` to ``[T, B, d_model]`` for the sequence-first
# module, and its output transposed back before the comparison. The tolerances are
# those of ``torch.testing.assert_close`` for float32 (``rtol=1.3e-6``,
# ``atol=1e-5``).
import matplotlib.pyplot as plt
import torch

import attn
from attn.viz.plot import heatmap

torch.manual_seed(123)
B, T, d_model, heads = 2, 6, 12, 3
mha = attn.MultiHeadAttention(d_model, d_model, context_length=T, dropout=0.0,
                              num_heads=heads, qkv_bias=True, causal=False)
sf = attn.SeqFirstMultiHeadAttention(heads, d_model, bias=True).load_from(mha)

x = torch.randn(B, T, d_model)  # (B, T, d_model)
x_sf = x.transpose(0, 1)  # (B, T, d_model) -> [T, B, d_model]
with torch.no_grad():
    z_bf, w_bf = mha(x, return_weights=True)  # (B, T, d_model), (B, h, T, T)
    z_sf, w_sf = sf(x_sf, x_sf, x_sf, return_weights=True)  # [T, B, d_model], [T, T, B, h]

torch.testing.assert_close(z_sf.transpose(0, 1), z_bf)  # [T, B, d] -> (B, T, d)
torch.testing.assert_close(w_sf.permute(2, 3, 0, 1), w_bf)  # [T_q, T_k, B, h] -> (B, h, T_q, T_k)
print("z_bf:", tuple(z_bf.shape), " z_sf:", tuple(z_sf.shape))
print("w_bf:", tuple(w_bf.shape), " w_sf:", tuple(w_sf.shape))
print(f"max|z_sf - z_bf| = {(z_sf.transpose(0, 1) - z_bf).abs().max().item():.2e}")

# %%
# The scores, one einsum
# ----------------------
# The letters name the axes: ``i`` query position, ``j`` key position, ``b`` batch,
# ``h`` head, ``d`` feature. ``d`` is missing from the output, so it is summed: a dot
# product for every ``(i, j, b, h)``. A ``permute`` turns the result into the
# batch-first scores ``(B, h, T_q, T_k)``.
d_k = d_model // heads
with torch.no_grad():
    s_sf = torch.einsum("ibhd,jbhd->ijbh", sf.query(x_sf), sf.key(x_sf))  # [T, T, B, h]
    q_bf = mha.W_query(x).view(B, T, heads, d_k).transpose(1, 2)  # (B, T, d_model) -> (B, h, T, d_k)
    k_bf = mha.W_key(x).view(B, T, heads, d_k).transpose(1, 2)  # (B, T, d_model) -> (B, h, T, d_k)
    s_bf = q_bf @ k_bf.transpose(-2, -1)  # (B, h, T, d_k) @ (B, h, d_k, T) -> (B, h, T, T)
torch.testing.assert_close(s_sf.permute(2, 3, 0, 1), s_bf)
print("s_sf:", tuple(s_sf.shape), " s_bf:", tuple(s_bf.shape))

# %%
# Every head, from both modules
# -----------------------------
# Top row: the batch-first weights ``w_bf[0, h]``; bottom row: the sequence-first
# weights ``w_sf[:, :, 0, h]``, softmax over axis 1 (the keys). Keys :math:`j` on the
# horizontal axis, queries :math:`i` on the vertical one.
pos = [str(t) for t in range(T)]
fig, axes = plt.subplots(2, heads, figsize=(12, 7.5), facecolor="white")
for h in range(heads):
    heatmap(w_bf[0, h], x_labels=pos, ax=axes[0, h], xlabel="$j$", ylabel="$i$")
    axes[0, h].set_title(f"w_bf[0, {h}]", pad=30)
    heatmap(w_sf[:, :, 0, h], x_labels=pos, ax=axes[1, h], xlabel="$j$", ylabel="$i$")
    axes[1, h].set_title(f"w_sf[:, :, 0, {h}]", pad=30)
fig.tight_layout()
# sphinx_gallery_alt = "A grid of heatmaps, two rows with one column per head, positions j across and i down. The top row shows the weights of the batch-first module, the bottom row those of the sequence-first module: each column's two heatmaps are identical."
plt.show()
