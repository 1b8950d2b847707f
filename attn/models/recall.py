r"""Multi-query associative recall (MQAR): the task that separates attention from a fixed state.

A sequence lists ``num_pairs`` key-value pairs, ``k_1 v_1 k_2 v_2 ...``, then asks for
keys again, ``k_{\pi(1)} k_{\pi(2)} ...`` in a random order; at each query the model must
output the value that followed that key (Arora et al., 2023, "Zoology"). Softmax
attention looks the key up among all the tokens it keeps; a linear-attention layer must
have written the pair into its fixed state of ``d_k x d_v`` numbers per head, and reads
back what the other pairs left there too.

:class:`RecallModel` is a small stack of mixers (``"softmax"``, ``"linear"``,
``"delta"``, ``"gated"``; e.g. ``("gated", "gated", "gated", "softmax")`` for a 3:1
hybrid) with one head of width ``d_head`` each; :func:`train_recall` trains it and
returns its accuracy on the queries of fresh sequences.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from .. import _checks
from ..functional import _attention
from ..ops.linear import _run
from .train import cached, fit

__all__ = ["mqar", "Mixer", "RecallModel", "train_recall"]

KINDS = ("softmax", "linear", "delta", "gated")


def mqar(batch_size, num_pairs, num_keys, num_values, generator=None):
    """A batch of MQAR sequences and their targets.

    Keys are ids ``0 .. num_keys - 1``, values ``num_keys .. num_keys + num_values - 1``;
    the keys of a sequence are distinct.

    Args:
        batch_size (int): number of sequences ``B``.
        num_pairs (int): pairs per sequence ``N`` (``<= num_keys``); the sequence has
            ``T = 3 N`` tokens, ``N`` queries.
        num_keys (int): number of distinct keys.
        num_values (int): number of distinct values.
        generator (torch.Generator, optional): source of randomness.

    Returns:
        tuple: ``(x, y)``, ids ``(B, T)`` and targets ``(B, T)``: the value at each query
        position, ``-100`` (ignored by :func:`torch.nn.functional.cross_entropy`) elsewhere.
    """
    B, N = _checks.sizes(batch_size=batch_size, num_pairs=num_pairs)
    if N > num_keys:
        raise ValueError(f"num_pairs={N} needs num_keys >= {N} distinct keys, got {num_keys}")
    keys = torch.rand(B, num_keys, generator=generator).argsort(-1)[:, :N]  # (B, N): distinct keys
    values = num_keys + torch.randint(num_values, (B, N), generator=generator)  # (B, N)
    order = torch.rand(B, N, generator=generator).argsort(-1)  # (B, N): the order of the queries
    pairs = torch.stack([keys, values], dim=-1).reshape(B, 2 * N)  # (B, N, 2) -> (B, 2N)
    x = torch.cat([pairs, keys.gather(1, order)], dim=1)  # (B, 3N)
    y = torch.full_like(x, -100)
    y[:, 2 * N:] = values.gather(1, order)  # (B, N): the value of each queried key
    return x, y


class Mixer(nn.Module):
    r"""One token mixer with one head: softmax attention or a linear-attention recurrence.

    Each position sees itself and its previous token, :math:`[x_t; x_{t-1}]` (a short
    convolution, as in Gated DeltaNet), so a value can be written under the key before
    it. For the recurrences :math:`q_t, k_t` are unit vectors,
    :math:`\beta_t = \sigma(w_\beta \cdot x)` and :math:`\alpha_t = \sigma(w_\alpha \cdot x + 5)`.

    Args:
        kind (str): ``"softmax"``, ``"linear"``, ``"delta"`` or ``"gated"``.
        d_model (int): width of the residual stream.
        d_head (int): width ``d_k = d_v`` of the head; a recurrence's state is
            ``d_head x d_head``.

    Shape:
        ``(B, T, d_model) -> (B, T, d_model)``.
    """

    def __init__(self, kind, d_model, d_head):
        super().__init__()
        self.kind = kind
        self.qkv = nn.Linear(2 * d_model, 3 * d_head, bias=False)
        self.gates = nn.Linear(2 * d_model, 2)  # beta, alpha
        self.out = nn.Linear(d_head, d_model, bias=False)

    def extra_repr(self):
        """``kind='gated'``, say: what ``print(model)`` shows beside the layers."""
        return f"kind={self.kind!r}"

    def forward(self, x):
        xs = torch.cat([x, F.pad(x, (0, 0, 1, -1))], dim=-1)  # (B, T, 2 d_model): [x_t; x_{t-1}]
        q, k, v = self.qkv(xs).unsqueeze(1).chunk(3, dim=-1)  # 3 x (B, 1, T, d_head)
        if self.kind == "softmax":
            o, _ = _attention(q, k, v, is_causal=True)  # (B, 1, T, d_head)
        else:
            q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
            b, a = self.gates(xs).unsqueeze(1).unbind(-1)  # 2 x (B, 1, T)
            beta = None if self.kind == "linear" else torch.sigmoid(b)
            alpha = torch.sigmoid(a + 5.0) if self.kind == "gated" else None
            o = _run(q, k, v, alpha, beta, "parallel", 0, None, False)  # (B, 1, T, d_head)
        return self.out(o[:, 0])  # (B, T, d_head) -> (B, T, d_model)


class RecallModel(nn.Module):
    r"""Embedding, a residual stack of :class:`Mixer`, readout: :math:`x \leftarrow x + \mathrm{Mixer}_\ell(x)`.

    Args:
        vocab_size (int): number of token ids.
        kinds (tuple of str): the mixer of each layer, e.g. ``("softmax",) * 4``.
        d_model (int): width of the residual stream.
        d_head (int): width of each mixer's head.

    Shape:
        ids ``(B, T)`` -> logits ``(B, T, vocab_size)``.
    """

    def __init__(self, vocab_size, kinds, d_model=32, d_head=8):
        super().__init__()
        _checks.sizes(vocab_size=vocab_size, d_model=d_model, d_head=d_head)
        if not kinds or any(kind not in KINDS for kind in kinds):
            raise ValueError(f"kinds must be a non-empty tuple of {KINDS}, got {kinds!r}")
        self.emb = nn.Embedding(vocab_size, d_model)
        self.layers = nn.ModuleList(Mixer(kind, d_model, d_head) for kind in kinds)
        self.readout = nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, idx):
        x = self.emb(idx)  # (B, T) -> (B, T, d_model)
        for layer in self.layers:
            x = x + layer(x)
        return self.readout(x)  # (B, T, vocab_size)


@cached(draws_init=True)
def train_recall(model, steps=100, batch_size=64, num_pairs=8, num_keys=32, num_values=32,
                 lr=1e-2, seed=0):
    """Train ``model`` on fresh MQAR batches with Adam; return its accuracy on 512 new sequences.

    Args:
        model (RecallModel): trained in place (seeded initialisation), left in ``eval()`` mode.
        steps (int): optimisation steps, one fresh batch each.
        batch_size (int): sequences per batch.
        num_pairs (int): key-value pairs per sequence.
        num_keys (int): distinct keys; the model's vocabulary holds keys then values.
        num_values (int): distinct values.
        lr (float): learning rate.
        seed (int): seeds the initialisation, the batches and the test set.

    Returns:
        float: the fraction of queries answered with the right value.
    """
    _checks.sizes(steps=steps, batch_size=batch_size)
    torch.manual_seed(seed)
    for m in model.modules():
        if hasattr(m, "reset_parameters"):
            m.reset_parameters()
    g = torch.Generator().manual_seed(seed)

    def loss(m, g):
        x, y = mqar(batch_size, num_pairs, num_keys, num_values, g)
        return F.cross_entropy(m(x).flatten(0, 1), y.flatten())  # (B T, V) against (B T,)

    fit(model, loss, steps, torch.optim.Adam(model.parameters(), lr=lr), generator=g)
    x, y = mqar(512, num_pairs, num_keys, num_values, g)
    with torch.no_grad():
        pred = model(x).argmax(-1)  # (B, T)
    asked = y != -100
    return (pred[asked] == y[asked]).float().mean().item()
