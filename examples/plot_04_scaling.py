"""
Scores spread with the key width
================================

The dot product of two random vectors with unit-variance components has variance
:math:`d_k`, so attention scores spread more and more as the key width grows, and the
softmax turns into a hard maximum. This script draws the distribution of the scores
for three widths, before and after dividing by :math:`\\sqrt{d_k}`, and the weights one
query gives to eight keys at a large width. Companion of :ref:`chapter 4 <ch-04>`.
"""

# %%
# Scores for three key widths
# ---------------------------
# For each width :math:`d_k` we draw 20,000 query-key pairs with independent
# :math:`\mathcal{N}(0, 1)` components and histogram the dot products :math:`q \cdot k`
# (left) and the scaled scores :math:`q \cdot k / \sqrt{d_k}` (right). The printed
# standard deviations are close to :math:`\sqrt{d_k}` on the left and to 1 on the right.
import matplotlib.pyplot as plt
import torch

import attn.functional as AF
from attn.viz.plot import heatmap

torch.manual_seed(0)
n = 20_000
fig, (ax_raw, ax_scaled) = plt.subplots(1, 2, figsize=(10, 3.6), facecolor="white")
for d_k in [4, 64, 1024]:
    q = torch.randn(n, d_k)  # (n, d_k)
    k = torch.randn(n, d_k)  # (n, d_k)
    s = (q * k).sum(dim=-1)  # (n,)
    print(f"d_k={d_k:>4}  std(q.k)={s.std().item():6.2f}  std(q.k/sqrt(d_k))={(s / d_k**0.5).std().item():.3f}")
    ax_raw.hist(s.numpy(), bins=160, range=(-120, 120), histtype="step", density=True, label=f"$d_k={d_k}$")
    ax_scaled.hist((s / d_k**0.5).numpy(), bins=80, range=(-5, 5), histtype="step", density=True, label=f"$d_k={d_k}$")
ax_raw.set_xlabel(r"$q \cdot k$")
ax_scaled.set_xlabel(r"$q \cdot k / \sqrt{d_k}$")
for ax in (ax_raw, ax_scaled):
    ax.legend()
fig.tight_layout()
# sphinx_gallery_alt = "Two sets of histograms, one curve per key dimension 4, 64 and 1024. Left, the raw dot products: the larger the dimension, the wider and flatter the curve. Right, the same products divided by the square root of the dimension: the three curves lie on top of each other."

# %%
# One query, eight keys
# ---------------------
# With :math:`d_k = 512`, one query is compared with eight random keys. Without the
# factor (top row) almost all the weight lands on one key; with it (bottom row) the
# weights are spread over several keys, as they are at small widths.
torch.manual_seed(1)
d_k, T = 512, 8
q = torch.randn(1, d_k)  # (T_q, d_k) = (1, 512)
k = torch.randn(T, d_k)  # (T_k, d_k) = (8, 512)
w_raw = AF.attention_weights(q, k, scale=1.0)  # (1, 8)
w_scaled = AF.attention_weights(q, k)  # (1, 8), scale = 1/sqrt(d_k)
w = torch.cat([w_raw, w_scaled])  # (2, 8)
print("w:", w)
heatmap(
    w,
    x_labels=[f"$k_{j}$" for j in range(T)],
    y_labels=[r"$qk^\top$", r"$qk^\top/\sqrt{d_k}$"],
    title=f"$d_k={d_k}$",
    ylabel=None,                                   # rows: qk^T, qk^T/sqrt(d_k)
)
# sphinx_gallery_alt = "Heatmap of two rows of eight weights, one query against eight keys. In the top row, without scaling, one cell takes nearly all the weight; in the bottom row, with scaling, the weight is shared among several keys."
plt.show()
