"""
Cross-attention aligns a rewritten date
=======================================

A tiny encoder–decoder (:mod:`attn.models.seq2seq`) learns to rewrite a date written
``DD/MM/YYYY`` as ``YYYY-MM-DD``. Its decoder reads the encoder's output through
:class:`attn.CrossAttention`: the queries come from the date being written, the keys and
values from the date being read. After training, each output digit looks at the source
digit it copies. Companion of :ref:`chapter 16 <ch-16>`, which trains the same model with the same
seed and measures the alignment on 1000 test dates.
"""

# %%
# Training
# --------
# 400 steps of 64 fresh random dates, with the seeds of :ref:`chapter 16 <ch-16>`.
# Run on its own, outside the book's build, the script trains the model here, on one
# thread: a minute or two.
import matplotlib.pyplot as plt
import torch

from attn.models import seq2seq
from attn.viz.plot import heatmap

torch.manual_seed(0)
model = seq2seq.Seq2Seq(d_model=32, num_heads=1)
losses = seq2seq.train(model, steps=400, seed=0)
print(f"{losses[0]=:.3f} {losses[-1]=:.4f}")

# %%
# Alignment on test dates
# -----------------------
# The share of output digits whose largest cross-attention weight falls on the source
# digit they copy, over 1000 dates drawn with another seed.
src, tgt = seq2seq.date_batch(1000, torch.Generator().manual_seed(1234))
print(f"alignment_accuracy = {seq2seq.alignment_accuracy(model, src, tgt):.3f}")

# %%
# Where the decoder looks
# -----------------------
# One row per output token, one column per source token: the year digits read source
# positions 6 to 9, the month digits 3 and 4, the day digits 0 and 1.
w = seq2seq.cross_weights(model, src[:1], tgt[:1])[0, 0]  # (T_tgt, T_src)
s, t = seq2seq.decode(src[0]), seq2seq.decode(tgt[0])
heatmap(w, [f"${c}_{{{k}}}$" for k, c in enumerate(s)], [f"${c}_{{{k}}}$" for k, c in enumerate(t)])
# sphinx_gallery_alt = "Heatmap of the cross-attention weights, one row per output character and one column per source character, each labelled with its position. The weight of each output digit sits on the matching source digit, so the dark cells trace the year, then the month, then the day."
plt.show()
