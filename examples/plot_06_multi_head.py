"""
Multi-head attention, head by head
==================================

A multi-head attention module projects the input once per role (query, key, value),
splits each projection into :math:`h` heads with ``view`` and ``transpose``, and runs
one causal attention per head in a single batched matrix product. This script prints
the shape of every intermediate tensor, checks that the fused module equals a list of
single heads given the same weights, and draws the weights of every head on the
sentence "Your journey starts with one step". Companion of :ref:`chapter 6 <ch-06>`.
"""

# %%
# Every shape of the forward pass
# -------------------------------
# :math:`B = 2` sentences, :math:`T = 6` tokens, :math:`d_\text{in} = 3`, :math:`h = 4`
# heads of width :math:`d_\text{head} = 5`, so :math:`d_\text{out} = 20`: every axis has
# its own size, so each printed shape tells which axis is where.
import matplotlib.pyplot as plt
import torch

import attn
from attn.viz.plot import heatmap_grid

tokens, inputs = attn.journey()  # inputs: (6, 3)
x = torch.stack((inputs, inputs), dim=0)  # (B, T, d_in) = (2, 6, 3)
B, T, _ = x.shape
torch.manual_seed(0)
mha = attn.MultiHeadAttention(d_in=3, d_out=20, context_length=T, dropout=0.0, num_heads=4)
h, d_head = mha.num_heads, mha.head_dim

with torch.no_grad():
    q = mha.W_query(x).view(B, T, h, d_head).transpose(1, 2)  # (B, T, d_out) -> (B, h, T, d_head)
    k = mha.W_key(x).view(B, T, h, d_head).transpose(1, 2)  # (B, T, d_out) -> (B, h, T, d_head)
    v = mha.W_value(x).view(B, T, h, d_head).transpose(1, 2)  # (B, T, d_out) -> (B, h, T, d_head)
    att = q @ k.transpose(2, 3) / d_head**0.5  # (B, h, T, d_head) @ (B, h, d_head, T) -> (B, h, T, T)
    att = torch.softmax(att.masked_fill(~mha.mask[:T, :T], float("-inf")), dim=-1)  # (B, h, T, T)
    z = (att @ v).transpose(1, 2)  # (B, h, T, d_head) -> (B, T, h, d_head)
    z = z.contiguous().view(B, T, h * d_head)  # (B, T, h, d_head) -> (B, T, d_out)
    out = mha.out_proj(z)  # (B, T, d_out)
for name, t in [("x", x), ("q", q), ("k", k), ("v", v), ("att", att), ("z", z), ("out", out)]:
    print(f"{name:>4}", tuple(t.shape))
torch.testing.assert_close(out, mha(x))

# %%
# The same function as a list of heads
# ------------------------------------
# Stacking the heads' projection weights (``nn.Linear`` keeps them as
# ``(out_features, in_features)``, so along dim 0) and making ``out_proj`` the identity
# turns the fused module into the wrapper of single heads.
torch.manual_seed(123)
wrapper = attn.MultiHeadAttentionWrapper(3, d_head, T, 0.0, num_heads=h)
fused = attn.MultiHeadAttention(3, h * d_head, T, 0.0, num_heads=h)
with torch.no_grad():
    for name in ("W_query", "W_key", "W_value"):
        weights = [getattr(head, name).weight for head in wrapper.heads]  # h x (d_head, d_in)
        getattr(fused, name).weight.copy_(torch.cat(weights, dim=0))  # (h * d_head, d_in)
    fused.out_proj.weight.copy_(torch.eye(h * d_head))
    fused.out_proj.bias.zero_()
    z_fused, z_wrapper = fused(x), wrapper(x)  # (B, T, h * d_head), (B, T, h * d_head)
torch.testing.assert_close(z_fused, z_wrapper)
diff = (z_fused - z_wrapper).abs().max().item()
print(f"{diff=:.1e}")

# %%
# The weights of every head
# -------------------------
# ``return_weights=True`` returns the weights as ``(B, h, T, T)``; one panel per head
# for the first sentence, keys on the horizontal axis, queries on the vertical one.
with torch.no_grad():
    _, w = mha(x, return_weights=True)  # (2, 4, 6, 6)
print("w.shape:", w.shape)
heatmap_grid(w[0], x_labels=tokens, ncols=4)
# sphinx_gallery_alt = "Four six-by-six heatmaps in a row, one per head, queries down and keys across, each cell printed with its weight: every head weighs the same six tokens in its own way."
plt.show()
