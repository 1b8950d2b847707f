"""
A small serving engine
======================

:class:`attn.serving.Engine` serves twelve requests to a small causal language model,
:class:`attn.models.tiny_lm.TinyLM`, one forward pass per step over the new tokens of every
running request, their keys and values in the blocks of one pool. Each request's tokens
are those of greedy decoding. Then :func:`attn.serving.speculative_generate` writes the
same tokens with a draft model guessing chains and trees. Companion of :ref:`chapter 20 <ch-20>`.
"""

# %%
# The pool, step by step
# ----------------------
# The pool has 16 blocks of 4 positions, too few for all the requests at once: a
# request waits until the pool can hold every position it will write. Each column of
# the figure is a step, each row a block, coloured by the request that holds it.
import matplotlib.pyplot as plt
import torch

from attn.serving import Engine, speculative_generate, static_batching
from attn.models.tiny_lm import TinyLM

torch.set_num_threads(1)
torch.manual_seed(0)
model = TinyLM(vocab_size=50, context_length=64, d_model=32, num_layers=2, num_heads=4).eval()
g = torch.Generator().manual_seed(1)
work = [(torch.randint(0, 50, (int(torch.randint(2, 20, (1,), generator=g)),), generator=g),
         int(torch.randint(2, 16, (1,), generator=g))) for _ in range(12)]

engine = Engine(model, num_blocks=16, block_size=4)
ids = [engine.add_request(p, n) for p, n in work]
grid = []
while engine.waiting or engine.running:
    engine.step()
    row = [-1] * 16  # row[b] = rid of block b, -1: free
    for rid, table in engine.manager.tables.items():
        for b in table:
            row[b] = rid
    grid.append(row)
print(engine.stats)
for rid, (p, n) in zip(ids, work):
    assert torch.equal(engine.done[rid], model.generate(p[None], n)[0, p.numel():])

grid = torch.tensor(grid, dtype=torch.float64).T  # (blocks, steps)
fig, ax = plt.subplots(figsize=(7, 3))
ax.imshow(grid.masked_fill(grid < 0, float("nan")), cmap="tab20", aspect="auto", vmin=0, vmax=19)
ax.set(xlabel="$t$", ylabel="$b$")  # step t, block b
# sphinx_gallery_alt = "A grid with one column per step and one row per block of the pool, each cell coloured by the request that holds the block, white when it is free: the blocks of different requests interleave, and a finished request's blocks soon go to a waiting one."
plt.show()

# %%
# Continuous against static batching
# ----------------------------------
# Static batching in groups of 4 pads each group's prompts to the longest and keeps
# every request's slot until the group's longest request is done. The bars count the
# token slots each schedule computes.
lengths, news = [p.numel() for p, _ in work], [n for _, n in work]
static = static_batching(lengths, news, batch_size=4)
print(f"{static=}")
assert engine.stats["tokens"] < static["slots"]

fig, ax = plt.subplots(figsize=(5, 3))
ax.bar(["engine", "static"], [engine.stats["tokens"], static["slots"]])
ax.set(ylabel="tokens")
# sphinx_gallery_alt = "Bar chart of the token slots computed for the same twelve requests: continuous batching computes only the requests' tokens, static batching also computes padding, and its bar is taller."
plt.show()

# %%
# Speculative decoding: chains and trees
# --------------------------------------
# A draft model with random weights guesses 4 tokens per round, as one chain or as a
# tree of 2 or 3 branches; the target checks them in one pass. With the target itself
# as the draft every guess is right: 5 tokens per pass, the most a round can write.
target = model
draft = TinyLM(vocab_size=50, context_length=64, d_model=16, num_layers=1, num_heads=2).eval()
per_pass = {}
for name, d in (("draft", draft), ("target", target)):
    for branches in (1, 2, 3):
        passes = 0
        for p, _ in work[:4]:
            tokens, stats = speculative_generate(target, d, p[None], 20, k=4, branches=branches)
            assert torch.equal(tokens, target.generate(p[None], 20))
            passes += stats["target_passes"]
        per_pass[name, branches] = 4 * 20 / passes
print({key: round(v, 2) for key, v in per_pass.items()})
assert per_pass["target", 1] == 5.0 and per_pass["draft", 3] >= per_pass["draft", 1]

fig, ax = plt.subplots(figsize=(5, 3))
for i, name in enumerate(("draft", "target")):
    ax.bar([b + 0.35 * i for b in (1, 2, 3)], [per_pass[name, b] for b in (1, 2, 3)], width=0.35, label=name)
ax.set(xlabel="branches=", ylabel="tokens / target_passes", xticks=[1.175, 2.175, 3.175], xticklabels=["1", "2", "3"])
ax.legend()
# sphinx_gallery_alt = "Grouped bar chart of the tokens written per target pass for 1, 2 and 3 branches: with a random draft the bars stay a little above 1 and grow with the branches; with the target as its own draft they all reach 5."
plt.show()
