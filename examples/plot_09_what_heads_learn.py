"""
Two heads, two relations
========================

A tiny model learns to output
:math:`y_t = (x_{t-1} - x_0) \\bmod 10` for sequences of random digits: the answer needs the
previous token and the first token. The model is an embedding, the sinusoidal
:class:`attn.PositionalEncoding`, a causal :class:`attn.MultiHeadAttention` with two heads
and a small readout. After training, one head reads the first token and the other the
previous one. Companion of :ref:`chapter 9 <ch-09>`, which trains longer, on longer sequences, and
measures the heads in detail.
"""

# %%
# The task and the model
# ----------------------
# Each sequence holds ``T = 8`` random digits; positions 0 and 1 are not scored (position 0
# has no previous token, and at position 1 the previous token is the first token). The
# readout sees only the attention output, so everything about other positions passes
# through the two heads. The data, the model and the training loop are those of
# :ref:`chapter 9 <ch-09>`, from the package's module :mod:`attn.models.two_relations`.
import matplotlib.pyplot as plt
import torch

import attn
from attn.models.two_relations import make_batch, train

T = 8  # T (ch. 9: T = 10)

# %%
# Training
# --------
# 600 steps of 64 fresh random sequences; the seeds are fixed.
# Run on its own, outside the book's build, the script trains the model here, on one
# thread: a minute or two.
model, losses = train(T=T, steps=600, seed=0)  # attn.models.two_relations.TwoRelationNet
print(f"{losses[-1]=:.2e}")  # losses[-1]: step 600

# %%
# Accuracy and where each head looks
# -----------------------------------
# On 500 new sequences: the accuracy at positions 2 to 7, then each head's average weight
# on key :math:`t-1`, on key 0 and on key :math:`t` (queries :math:`t = 2..7`).
x_test, y_test = make_batch(500, torch.Generator().manual_seed(1234), T=T)
with torch.no_grad():
    logits, att = model(x_test, return_weights=True)  # (500, T, V), (500, h, T, T)
acc = (logits[:, 2:].argmax(dim=-1) == y_test[:, 2:]).float().mean().item()
print(f"{acc=:.4f}")
t = torch.arange(2, T)
print("k=t-1:", att[:, :, t, t - 1].mean(dim=(0, 2)))
print("k=0:  ", att[:, :, t, 0].mean(dim=(0, 2)))
print("k=t:  ", att[:, :, t, t].mean(dim=(0, 2)))

# %%
# The two heads on one sequence
# -----------------------------
# Keys on the horizontal axis, queries on the vertical axis; each label is a token with
# its position as a subscript. One head fills the first column (the first token), the
# other the diagonal just below the main one (the previous token).
labels = [f"${tok}_{{{i}}}$" for i, tok in enumerate(x_test[0].tolist())]
fig = attn.viz.plot.heatmap_grid(att[0], labels, ncols=2)
# sphinx_gallery_alt = "Two causal heatmaps, one per head of the trained model, queries down and keys across, each labelled with a token and its position. One head fills the first column; the other the cells just left of the diagonal."
plt.show()
