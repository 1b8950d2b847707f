"""
Attention in tiles, one block of keys at a time
===============================================

The online softmax reads the keys in blocks and keeps, for each query, the largest score
seen so far, a running sum and a running output. This script follows one query over 64
keys read in blocks of 8: after each block, the running output is exactly the attention
over the keys read so far, and after the last block it equals the attention over the
whole sequence. Companion of :ref:`chapter 12 <ch-12>`.
"""

# %%
# One query, 64 keys, blocks of 8
# -------------------------------
# The scores :math:`s_j = q \cdot k_j / \sqrt{d}` of one query are drawn as bars, the
# blocks separated by dotted lines. The step line is the running maximum :math:`m` after
# each block: each time it rises, the sums accumulated so far are multiplied by
# :math:`e^{m - m'} < 1`. Each value is a single number (:math:`d_v = 1`), so that the
# output can be drawn as a curve.
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

import attn.functional as AF

torch.manual_seed(0)
T, d, block = 64, 16, 8
q = torch.randn(1, d)  # (T_q, d) = (1, 16)
k = torch.randn(T, d)  # (T_k, d) = (64, 16)
v = torch.randn(T, 1)  # (T_k, d_v) = (64, 1)
s = (q @ k.T / d**0.5)[0]  # (1, 64) -> (64,) scores
ends = list(range(block, T + 1, block))  # n = 8, 16, ..., 64
running_max = [s[:n].max().item() for n in ends]
fixes = [torch.exp(torch.tensor(a - b)).item() for a, b in zip(running_max, running_max[1:])]  # blocks 2 .. 8
print("m (n = 8, 16, ..., 64):", [round(m, 3) for m in running_max])
print("exp(m - m') (b = 2..8):", [round(f, 3) for f in fixes])

fig, ax_s = plt.subplots(figsize=(6, 3.6), facecolor="white")
ax_s.bar(range(T), s, color="tab:blue", alpha=0.6, label="$s_j$")
ax_s.step([n - block - 0.5 for n in ends] + [T - 0.5], running_max + running_max[-1:], where="post",
          color="tab:red", label="$m$")
for n in ends[:-1]:
    ax_s.axvline(n - 0.5, color="gray", ls=":", lw=1)
ax_s.set_xlabel("$j$")
_ = ax_s.legend()
# sphinx_gallery_alt = "Bar chart of the 64 scores of one query, one bar per key, with dotted vertical lines between the blocks of eight and a red step line for the running maximum, which rises at some blocks and stays level at the others."

# %%
# The running output after each block
# -----------------------------------
# After reading the first :math:`n` keys, the running output :math:`a / \ell` is the
# attention of the query over those :math:`n` keys: the same number that
# ``tiled_attention`` returns on the first :math:`n` keys and values. It moves as blocks
# arrive and stops, after the last block, on the attention over all 64 keys, which the
# fused path of PyTorch computes in one call.
partial = [AF.tiled_attention(q, k[:n], v[:n], block_size=block).item() for n in ends]
exact = F.scaled_dot_product_attention(q, k, v).item()
print("a / l (n = 8, 16, ..., 64):", [round(o, 4) for o in partial])
print(f"F.scaled_dot_product_attention: {exact:.4f}   |partial[-1] - exact| = {abs(partial[-1] - exact):.1e}")
fig, ax_o = plt.subplots(figsize=(6, 3.6), facecolor="white")
ax_o.plot(ends, partial, marker="o", label=r"$a / \ell$")
ax_o.axhline(exact, color="gray", ls="--", label="F.scaled_dot_product_attention")
ax_o.set_xlabel("$n$")
ax_o.set_xticks(ends)
ax_o.legend()
fig.tight_layout()
# sphinx_gallery_alt = "Line plot of the running output after each block of eight keys, one point per block, and a dashed horizontal line at the output of the fused path. The points move as the blocks arrive and the last one lands on the dashed line."
plt.show()
