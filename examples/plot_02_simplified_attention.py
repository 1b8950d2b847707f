"""
Simplified self-attention on six tokens
=======================================

Self-attention without trainable weights: every token of "Your journey starts with one
step" is compared with every token by a dot product, the softmax turns each row of
scores into weights that sum to 1, and each context vector is the weighted average of
the embeddings. This script computes the :math:`6 \\times 6` weights with
``attn.functional.simplified_self_attention``, draws them as a heatmap, and shows one
row as the weights a single query gives to the six keys. Companion of :ref:`chapter 2 <ch-02>`.
"""

# %%
# Scores, weights and context vectors
# -----------------------------------
# The scores are :math:`\Omega = XX^\top`, of shape :math:`(T, T)`: row :math:`i` is the
# query, column :math:`j` the key. The softmax over each row (``dim=-1``) gives the
# weights :math:`A`, and :math:`Z = AX` the context vectors, one per row.
import matplotlib.pyplot as plt
import torch

import attn
import attn.functional as AF
from attn.viz.plot import heatmap

tokens, inputs = attn.journey()  # T = 6, inputs: (6, 3)
z, weights = AF.simplified_self_attention(inputs, return_weights=True)
print("weights:", weights.shape)  # (6, 6)
print("z:", z.shape)  # (6, 3)
print(weights.sum(dim=-1))  # sum_j w_ij = 1
print(torch.allclose(z, weights @ inputs))

# %%
# The weights as a heatmap
# ------------------------
# Keys along the horizontal axis, queries along the vertical one. *journey* and
# *starts*, the two longest and most similar embeddings, collect the largest weights.
heatmap(weights, x_labels=tokens, y_labels=tokens, title=r"$\mathrm{softmax}(XX^\top)$")
# sphinx_gallery_alt = "Heatmap of the six-by-six weights, one row per query token and one column per key token, each cell printed with its weight; darker blue means a larger weight. The rows of journey and starts are darkest in the columns of those two words."
plt.show()

# %%
# One query: *journey*
# --------------------
# Row 1 of the matrix (positions count from 0) holds the weights :math:`\alpha_{1j}`
# that the query *journey* gives to each key :math:`j`. Its context vector
# :math:`z^{(1)}` mixes the six
# embeddings with these weights.
fig, ax = plt.subplots(figsize=(6, 3), facecolor="white")
ax.bar(tokens, weights[1].numpy(), color="tab:blue")
ax.set_ylabel(r"$\alpha_{1j}$")
ax.set_title(r"$x^{(1)}$ = journey")
fig.tight_layout()
print("z_2:", z[1])
# sphinx_gallery_alt = "Bar chart of the six weights the query journey gives to the tokens of the sentence, one bar per token: the bars of journey and starts are the tallest."
plt.show()
