"""
Two implementations of self-attention, one computation
======================================================

``SelfAttentionV1`` stores its projections as ``nn.Parameter`` matrices of shape
:math:`(d_\\text{in}, d_\\text{out})` and computes :math:`xW`; ``SelfAttentionV2`` uses
``nn.Linear``, which stores a matrix of shape :math:`(d_\\text{out}, d_\\text{in})` and
computes :math:`xW^\\top`. With their own random initialisations they give different
outputs. This script copies V2's weights, transposed, into V1 and shows that both then
produce the same context vectors and the same attention weights. Companion of
:ref:`chapter 3 <ch-03>`.
"""

# %%
# Two modules, two initialisations
# --------------------------------
# Seeds 123 and 789, the seeds of Raschka's chapter 3: the outputs differ because the weights
# differ.
import matplotlib.pyplot as plt
import torch

import attn
from attn.viz.plot import heatmap

tokens, inputs = attn.journey()  # inputs: (6, 3)
d_in, d_out = 3, 2

torch.manual_seed(123)
sa_v1 = attn.SelfAttentionV1(d_in, d_out)
torch.manual_seed(789)
sa_v2 = attn.SelfAttentionV2(d_in, d_out)
print("v1:", sa_v1(inputs))
print("v2:", sa_v2(inputs))

# %%
# Copy the weights, transposed
# ----------------------------
# ``nn.Linear`` keeps :math:`W^\top`, so its weight, transposed, is the matrix that
# ``SelfAttentionV1`` multiplies by. After the copy the two modules agree.
print(sa_v2.W_query.weight.shape, sa_v1.W_query.shape)
with torch.no_grad():
    for name in ("W_query", "W_key", "W_value"):
        getattr(sa_v1, name).copy_(getattr(sa_v2, name).weight.T)  # (d_out, d_in) -> (d_in, d_out)

z1, w1 = sa_v1(inputs, return_weights=True)  # (6, 2), (6, 6)
z2, w2 = sa_v2(inputs, return_weights=True)  # (6, 2), (6, 6)
print("v1:", z1)
print(f"max|z1 - z2| = {(z1 - z2).abs().max().item():.2e}")
print(f"max|w1 - w2| = {(w1 - w2).abs().max().item():.2e}")

# %%
# The same attention weights
# --------------------------
# Both heatmaps show :math:`\mathrm{softmax}(QK^\top/\sqrt{d_k})`, keys along the
# horizontal axis and queries along the vertical one. The weights are close to uniform,
# :math:`1/6 \approx 0.17`: ``nn.Linear`` starts with small weights, so the scores are
# small too, and nothing has been trained yet.
fig, axes = plt.subplots(1, 2, figsize=(10, 4.4), facecolor="white")
heatmap(w1.detach(), x_labels=tokens, y_labels=tokens, ax=axes[0], title="SelfAttentionV1")
heatmap(w2.detach(), x_labels=tokens, y_labels=tokens, ax=axes[1], title="SelfAttentionV2")
fig.tight_layout()
# sphinx_gallery_alt = "Two six-by-six heatmaps of weights, one per module, queries down and keys across, each cell printed with its weight. Both grids are almost evenly shaded: before training every weight is close to one sixth."
plt.show()
