"""
RoPE and ALiBi: scores that see only the distance
=================================================

Today's models give attention positions without adding anything to the embeddings.
RoPE rotates each query and key by an angle proportional to its position, so the score
of a query at position ``m`` with a key at position ``n`` depends only on ``m - n``.
ALiBi adds to each score a penalty proportional to ``i - j``, with one slope per head.
This script checks the first fact numerically and draws both. Companion of :ref:`chapter 15 <ch-15>`.
"""

# %%
# RoPE: equal offsets, equal scores
# ---------------------------------
# One random query vector and one random key vector of dimension 64, rotated by
# :class:`attn.RotaryEmbedding` to every position from 0 to 63. ``S[m, n]`` is the score
# of the query at ``m`` with the key at ``n``. Every diagonal (fixed ``m - n``) is
# constant: the printed spread is float32 rounding.
import matplotlib.pyplot as plt
import torch

import attn
import attn.functional as AF
from attn.viz.plot import heatmap

torch.manual_seed(0)
d, T = 64, 64
rope = attn.RotaryEmbedding(d, max_len=T)
q, k = torch.randn(d), torch.randn(d)
S = rope(q.expand(T, d)) @ rope(k.expand(T, d)).T  # (T, d) @ (d, T) -> (T, T)
spread = max((S.diagonal(o).max() - S.diagonal(o).min()).item() for o in range(-T + 1, T))  # max_o (max - min)(diagonal(S, o))
print(f"S[3, 0] = {S[3, 0].item():+.4f}   S[60, 57] = {S[60, 57].item():+.4f}")
print(f"{spread=:.1e}")

# %%
# The same matrix as an image
# ---------------------------
# Stripes parallel to the diagonal: the score is a function of ``m - n`` alone. On the
# diagonal the rotations cancel and the plain dot product ``q . k`` is left.
fig, ax = plt.subplots(figsize=(5, 4.3), facecolor="white")
top = S.abs().max().item()
im = ax.imshow(S.numpy(), cmap="RdBu", vmin=-top, vmax=top)
ax.set_xlabel("$n$")
ax.set_ylabel("$m$")
ax.set_title(rf"$q\cdot k={(q @ k).item():.2f}$")
_ = fig.colorbar(im, ax=ax)
# sphinx_gallery_alt = "Heatmap of the RoPE score of one query and one key placed at every pair of positions m (down) and n (across), red for negative and blue for positive: straight stripes parallel to the diagonal."

# %%
# ALiBi: one decay per head
# -------------------------
# :func:`attn.functional.alibi_bias` gives ``-m_h (i - j)`` for 8 heads with slopes
# ``1/2, 1/4, ..., 1/256``. With equal content everywhere (``q . k = 0``) the weights
# come from the bias alone: the steep head 0 looks at the last few tokens, the gentle
# head 7 almost uniformly at all of them.
H, T = 8, 12
print(f"alibi_slopes({H}):", AF.alibi_slopes(H).tolist())
w = AF.attention_weights(torch.zeros(H, T, 1), torch.zeros(H, T, 1), AF.alibi_bias(H, T),
                         is_causal=True)  # (H, T, T)
fig, axes = plt.subplots(1, 3, figsize=(12, 3.9), facecolor="white")
for ax, h in zip(axes, (0, 3, 7)):
    heatmap(w[h], ax=ax, title=f"$h={h}$", annotate=False, vmax=1.0, colorbar=False,
            xlabel="$j$", ylabel="$i$")
fig.tight_layout()
# sphinx_gallery_alt = "Three twelve-by-twelve causal heatmaps of ALiBi weights for heads 0, 3 and 7, queries down and keys across. Head 0 keeps its weight on the diagonal and the few keys before it; head 7 spreads it almost evenly over all earlier keys."
plt.show()
