"""
An induction head forms
=======================

A two-layer attention-only model (:class:`attn.circuits.AttentionOnly`) learns to copy
sequences of random tokens that repeat. The loss on the repeated tokens drops suddenly
when a previous-token head in layer 0 and an induction head in layer 1 form; the loss
on the fresh tokens stays at :math:`\\ln V`, since nothing predicts them. Companion of
:ref:`ch-17`, which trains the same model with the same seed and measures each head.
"""

# %%
# Training
# --------
# 600 steps of 64 sequences of 24 tokens whose last 6 to 12 tokens repeat the ones
# before them, with the seed of :ref:`ch-17`.
# Run on its own, outside the book's build, the script trains the model here, on one
# thread: a minute or two.
import math

import matplotlib.pyplot as plt
import torch

import attn.functional as AF
from attn.circuits import AttentionOnly, repeated_tokens, train_induction
from attn.plot import heatmap_grid

V, half = 64, 12
model = AttentionOnly(V, 2 * half)
fresh, repeat = train_induction(model, steps=600, half=half, seed=0)
print(f"fresh: {fresh[0]:.3f} -> {fresh[-1]:.3f}, repeat: {repeat[0]:.3f} -> {repeat[-1]:.3f}")

# %%
# The drop
# --------
# The loss on the repeated tokens leaves :math:`\ln V` when the induction circuit forms.
fig, ax = plt.subplots(figsize=(6.4, 3.4))
ax.plot(fresh, label="fresh", color="tab:gray")
ax.plot(repeat, label="repeat", color="tab:blue")
ax.axhline(math.log(V), color="k", lw=0.8, ls="--", label="$\\ln V$")
ax.set(xlabel="$s$", ylabel="$\\mathcal{L}$", ylim=(0, 5))
ax.legend()
# sphinx_gallery_alt = "Line plot of two training losses against the step, one on fresh tokens and one on repeated tokens, with a dashed horizontal line at the loss of a uniform guess. Later in training the loss on the repeated tokens drops well below the line, while the loss on the fresh tokens stays near it."
plt.show()

# %%
# The two heads
# -------------
# On a fresh sequence that repeats after 12 tokens: the head of layer 0 with the largest
# previous-token score, and the head of layer 1 with the largest induction score.
x = repeated_tokens(1, half, V, generator=torch.Generator().manual_seed(1))  # (1, 24)
with torch.no_grad():
    _, w = model(x, return_weights=True)  # (layers, 1, h, T, T)
pt = AF.previous_token_score(w[0, 0]).argmax().item()
ih = AF.induction_score(w[1, 0], half).argmax().item()
labels = [f"${tok}_{{{i}}}$" for i, tok in enumerate(x[0].tolist())]
heatmap_grid(torch.stack([w[0, 0, pt], w[1, 0, ih]]), labels, titles=[f"$(0, {pt})$", f"$(1, {ih})$"], ncols=2)
# sphinx_gallery_alt = "Two causal heatmaps on a sequence that repeats after twelve tokens, queries down and keys across. Left, the previous-token head of layer 0: the weight sits just left of the diagonal. Right, the induction head of layer 1: in the second half, the weight sits on a line eleven positions left of the diagonal, the token after the earlier occurrence."
plt.show()
