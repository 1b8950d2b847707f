"""
Two heads, two relations
========================

A tiny model learns to output
:math:`y_t = (x_{t-1} - x_0) \\bmod 10` for sequences of random digits: the answer needs the
previous token and the first token. The model is an embedding, the sinusoidal
:class:`attn.PositionalEncoding`, a causal :class:`attn.MultiHeadAttention` with two heads
and a small readout. After training, one head reads the first token and the other the
previous one. Companion of :ref:`ch-09`, which trains longer, on longer sequences, and
measures the heads in detail.
"""

# %%
# The task and the model
# ----------------------
# Each sequence holds ``T = 8`` random digits; positions 0 and 1 are not scored (position 0
# has no previous token, and at position 1 the previous token is the first token). The
# readout sees only the attention output, so everything about other positions passes
# through the two heads.
import matplotlib.pyplot as plt
import torch
import torch.nn as nn
import torch.nn.functional as F

import attn

V, T, d_model = 10, 8, 32


def make_batch(n, generator):
    x = torch.randint(0, V, (n, T), generator=generator)  # (n, T)
    y = (x.roll(1, dims=1) - x[:, :1]) % V  # (n, T): y[:, t] = (x[:, t-1] - x[:, 0]) mod V
    return x, y


class TwoRelationNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_emb = nn.Embedding(V, d_model)
        self.pos = attn.PositionalEncoding(d_model, max_len=T, dropout=0.0)
        self.mha = attn.MultiHeadAttention(d_model, d_model, T, dropout=0.0, num_heads=2)
        self.readout = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.ReLU(),
                                     nn.Linear(4 * d_model, V))

    def forward(self, tokens, return_weights=False):
        x = self.pos(self.tok_emb(tokens))  # (B, T) -> (B, T, d_model)
        if not return_weights:
            return self.readout(self.mha(x))  # (B, T, d_model) -> (B, T, V)
        z, att = self.mha(x, return_weights=True)  # (B, T, d_model), (B, h, T, T)
        return self.readout(z), att


# %%
# Training
# --------
# 600 steps of 64 fresh random sequences; the seeds are fixed.
torch.manual_seed(0)
model = TwoRelationNet()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
g = torch.Generator().manual_seed(1)
for _ in range(600):
    x, y = make_batch(64, g)
    loss = F.cross_entropy(model(x)[:, 2:].reshape(-1, V), y[:, 2:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
model.eval()
print(f"{loss.item()=:.2e}")

# %%
# Accuracy and where each head looks
# -----------------------------------
# On 500 new sequences: the accuracy at positions 2 to 7, then each head's average weight
# on key :math:`t-1`, on key 0 and on key :math:`t` (queries :math:`t = 2..7`).
x_test, y_test = make_batch(500, torch.Generator().manual_seed(1234))
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
fig = attn.plot.heatmap_grid(att[0], labels, ncols=2)
plt.show()
