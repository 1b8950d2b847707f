"""
An induction head forms
=======================

A two-layer attention-only model (:class:`attn.models.circuits.AttentionOnly`) learns to copy
sequences of random tokens that repeat. The loss on the repeated tokens falls in two
stages: slowly while the model learns to favour tokens it has already seen, then
steeply while a previous-token head in layer 0 and an induction head in layer 1 form;
the loss on the fresh tokens stays near :math:`\\ln V`, since nothing predicts them. Companion of
:ref:`chapter 17 <ch-17>`, which trains the same model with the same seed and measures each head.
"""

# %%
# Training
# --------
# 600 steps of 64 sequences of 24 tokens whose last 6 to 12 tokens repeat the ones
# before them, with the seed of :ref:`chapter 17 <ch-17>`; every 10 steps, the heads' scores are
# measured on fixed test sequences.
# Run on its own, outside the book's build, the script trains the model here, on one
# thread: a minute or two.
import math

import matplotlib.pyplot as plt
import torch

import attn.functional as AF
from attn.models.circuits import AttentionOnly, repeated_tokens, train_induction
from attn.viz.plot import heatmap_grid

V, half = 64, 12
model = AttentionOnly(V, 2 * half)
fresh, repeat, trace = train_induction(model, steps=600, half=half, seed=0, record=10)
print(f"fresh: {fresh[0]:.3f} -> {fresh[-1]:.3f}, repeat: {repeat[0]:.3f} -> {repeat[-1]:.3f}")

# %%
# The two stages
# --------------
# Top, the losses; bottom, the previous-token score of the best head of layer 0 and
# the induction score of layer 1 (mean of its heads). The steep drop of the loss on the
# repeated tokens comes with the rise of both scores; the slow fall before it does not.
pt = trace["prev"][-1, 0].argmax().item()
fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.4, 5.2), sharex=True)
top.plot(fresh, label="fresh", color="tab:gray")
top.plot(repeat, label="repeat", color="tab:blue")
top.axhline(math.log(V), color="k", lw=0.8, ls="--", label="$\\ln V$")
top.set(ylabel="$\\mathcal{L}$", ylim=(0, 5))
top.legend()
bottom.plot(trace["step"], trace["prev"][:, 0, pt], label=f"$s_{{-1}}$ $(0, {pt})$", color="tab:orange")
bottom.plot(trace["step"], trace["ind"][:, 1].mean(-1), label="$s_{12}$ $(\\ell = 1)$", color="tab:blue")
bottom.set(xlabel="$s$", ylim=(0, 1))
bottom.legend()
# sphinx_gallery_alt = "Two stacked plots against the training step. Top: the losses on fresh and on repeated tokens, with a dashed line at the loss of a uniform guess; the loss on the repeated tokens falls slowly for a long stretch, then steeply. Bottom: the previous-token score of a layer-0 head and the induction score of layer 1, flat during the slow stretch, rising steeply with the steep drop."
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
