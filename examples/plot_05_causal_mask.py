"""
Causal mask, step by step
=========================

A causal mask lets the query of token :math:`i` attend only to the keys of tokens
:math:`0, \\dots, i`. This script follows one causal attention module on the sentence
"Your journey starts with one step": the scaled scores, the scores with the future
filled with :math:`-\\infty` (``True`` in the mask = may attend), and the weights after
the softmax, whose rows still sum to 1. Companion of :ref:`chapter 5 <ch-05>`.
"""

# %%
# Scores of a causal attention module
# -----------------------------------
# The module is created with seed 123. Its queries and keys give the
# scaled scores :math:`q k^\top / \sqrt{d_k}`, one row per query, one column per key.
import matplotlib.pyplot as plt
import torch

import attn
import attn.functional as AF
from attn.viz.plot import heatmap

tokens, inputs = attn.journey()  # inputs: (6, 3)
T = len(tokens)
torch.manual_seed(123)
ca = attn.CausalAttention(d_in=3, d_out=2, context_length=T, dropout=0.0)
with torch.no_grad():
    q = ca.W_query(inputs)  # (6, 3) -> (6, 2)
    k = ca.W_key(inputs)  # (6, 3) -> (6, 2)
    scores = q @ k.T / k.shape[-1] ** 0.5  # (6, 2) @ (2, 6) -> (6, 6)
print("scores:", scores, sep="\n")

# %%
# Fill the future with minus infinity
# -----------------------------------
# The mask is ``True`` on and below the diagonal (key :math:`j \le` query :math:`i`):
# those entries are kept. The others are replaced by :math:`-\infty`, which the softmax
# turns into a weight of exactly 0.
mask = AF.causal_mask(T)  # (6, 6) bool, mask[i, j] = (j <= i)
masked = scores.masked_fill(~mask, float("-inf"))  # (6, 6)
weights = torch.softmax(masked, dim=-1)  # (6, 6), softmax_j (dim=-1)
print("weights:", weights, sep="\n")
print("sum:", weights.sum(dim=-1))

# %%
# The module computes the same weights
# ------------------------------------
# ``return_weights=True`` makes the module return the weights it applied, here for the
# unbatched input ``(T, d_in)``; they equal the ones computed by hand above.
with torch.no_grad():
    z, w = ca(inputs, return_weights=True)  # (6, 2), (6, 6)
torch.testing.assert_close(w, weights)
print("z:", z, sep="\n")

# %%
# Scores, mask and weights side by side
# -------------------------------------
# Left, the scaled scores of every query-key pair; middle, the mask :math:`M`
# (1 = may attend); right, the causal weights :math:`\alpha`. Keys on the horizontal
# axis, queries on the vertical one.
fig, axes = plt.subplots(1, 3, figsize=(15, 4.4), facecolor="white")
heatmap(scores, x_labels=tokens, ax=axes[0], vmin=float(scores.min()), title=r"$qk^\top/\sqrt{d_k}$",
        colorbar=False)
heatmap(mask.float(), x_labels=tokens, ax=axes[1], fmt=".0f", title="$M$", colorbar=False)
heatmap(weights, x_labels=tokens, ax=axes[2], title=r"$\alpha$")
fig.tight_layout()
# sphinx_gallery_alt = "Three six-by-six heatmaps with their numbers, queries down and keys across: the scaled scores; the mask, ones on and below the diagonal and zeros above it; and the causal weights, zero above the diagonal."
plt.show()
