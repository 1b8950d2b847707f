"""
Sinusoidal positional encoding
==============================

Self-attention treats its input as a set: shuffle the tokens and the outputs are
shuffled the same way. The sinusoidal positional encoding adds to each embedding a
vector that depends only on the token's position. This script checks the first fact
numerically, draws the encoding table, and draws how similar two positions' vectors
are as a function of their distance. Companion of :ref:`chapter 8 <ch-08>`.
"""

# %%
# Attention alone: permuting the input permutes the output
# ---------------------------------------------------------
# A non-causal :class:`attn.MultiHeadAttention` on five random tokens, then on the
# same tokens reordered by ``perm``. The difference is float32 rounding, printed as the
# bound it meets.
import matplotlib.pyplot as plt
import torch

import attn

torch.manual_seed(1)
T, d = 5, 32
mha = attn.MultiHeadAttention(d, d, context_length=T, dropout=0.0, num_heads=4,
                              causal=False, out_bias=False)
x = torch.randn(1, T, d)  # (B, T, d)
perm = torch.tensor([2, 0, 4, 1, 3])
with torch.no_grad():
    diff = (mha(x[:, perm]) - mha(x)[:, perm]).abs().max().item()
print(f"{diff < 1e-6 = }")

# %%
# Adding the encoding breaks the symmetry
# ---------------------------------------
# The same test on token ids, with the two blocks of :ref:`chapter 8 <ch-08>`,
# in the same order after the same seed: an embedding followed by attention, then
# :class:`attn.TransformerInputBlock` (embedding, positional encoding, attention). Without
# the encoding the difference is rounding; with it, the permuted sentence gets different
# outputs, ``3.19e-02`` on average.
torch.manual_seed(7)
no_pe = torch.nn.Sequential(
    torch.nn.Embedding(500, 32, padding_idx=0),
    attn.MultiHeadAttention(32, 32, 512, 0.0, 4, causal=False, out_bias=False),
).eval()
block = attn.TransformerInputBlock(vocab_size=500, d_model=32, num_heads=4, dropout=0.0).eval()
sentence = torch.tensor([[10, 25, 87, 43, 62, 91, 15, 37]])  # (1, 8)
perm_idx = torch.tensor([3, 0, 6, 1, 7, 4, 2, 5])
with torch.no_grad():
    diff_no_pe = (no_pe(sentence[:, perm_idx]) - no_pe(sentence)[:, perm_idx]).abs().mean().item()
    diff_pe = (block(sentence[:, perm_idx]) - block(sentence)[:, perm_idx]).abs().mean().item()
print(f"{diff_no_pe < 1e-6 = }")
print(f"{diff_pe=:.2e}")

# %%
# The table
# ---------
# :math:`\mathrm{PE}(pos, 2i) = \sin(pos\,\omega_i)`,
# :math:`\mathrm{PE}(pos, 2i+1) = \cos(pos\,\omega_i)`,
# :math:`\omega_i = 10000^{-2i/d_{\mathrm{model}}}`. Positions down, columns across: the
# left columns turn fast, the right ones slowly.
d_model = 64
pe = attn.PositionalEncoding(d_model, max_len=1000, dropout=0.0).pe  # (1000, d_model)
print(pe[:5, :5].numpy().round(3))

fig, ax = plt.subplots(figsize=(8, 4.5), facecolor="white")
im = ax.imshow(pe[:100].numpy(), cmap="RdBu", vmin=-1, vmax=1, aspect="auto")
ax.set_xlabel("$2i$, $2i+1$")
ax.set_ylabel("$pos$")
ax.set_title(r"$\mathrm{PE}(pos, \cdot)$, $d_{\mathrm{model}}=64$")
fig.colorbar(im, ax=ax)
# sphinx_gallery_alt = "Image of the sinusoidal table, positions 0 to 99 down and its 64 columns across, red for negative values and blue for positive ones. The left columns alternate colour within a few rows; further right the bands widen until the last columns barely change."
plt.show()

# %%
# Similarity against distance
# ---------------------------
# :math:`\mathrm{PE}(p) \cdot \mathrm{PE}(p') = \sum_i \cos(\omega_i (p - p'))` depends
# only on the distance :math:`p' - p`. The cosine similarity is 1 at distance 0 and falls
# as the distance grows, fast at first, then slowly. The three curves start from three
# positions :math:`p` and lie exactly on top of each other: only the distance matters.
unit = pe / pe.norm(dim=1, keepdim=True)  # (1000, d_model)
fig, ax = plt.subplots(figsize=(7, 4), facecolor="white")
for p0 in (0, 300, 600):
    sim = unit[p0] @ unit[p0:p0 + 400].T  # (d_model,) @ (d_model, 400) -> (400,)
    ax.plot(sim.numpy(), label=f"$p={p0}$")
ax.set_xlabel("$p' - p$")
ax.set_ylabel(r"$\cos(\mathrm{PE}(p), \mathrm{PE}(p'))$")
ax.legend()
# sphinx_gallery_alt = "Line plot of the cosine similarity between two positions against their distance, from 0 to 400, with three curves that start from positions 0, 300 and 600. The curves fall from 1 with ripples and lie exactly on top of each other."
plt.show()
