r"""A toy task that needs two relations between positions, and the small model that learns it.

Each input is a sequence of ``T`` random tokens :math:`x_0, \dots, x_{T-1}` from a
vocabulary of ``V`` tokens; at every position :math:`t \ge 2` the answer is

.. math::

    y_t = (x_{t-1} - x_0) \bmod V ,

which needs the previous token (a relative position) and the first token (an absolute
position). Chapter 9 of the book and its gallery example train :class:`TwoRelationNet`
on it with :func:`train` and look at what its two heads learn.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from .. import _checks
from .train import cached, fit
from ..layers.multihead import MultiHeadAttention
from ..layers.positional import PositionalEncoding

__all__ = ["make_batch", "TwoRelationNet", "train"]


def make_batch(n, generator, *, vocab_size=10, T=10):
    r"""``n`` random sequences and their answers :math:`y_t = (x_{t-1} - x_0) \bmod V`.

    Args:
        n (int): number of sequences.
        generator (torch.Generator): source of the random tokens.
        vocab_size (int): :math:`V`, tokens are ``0 .. V - 1``.
        T (int): sequence length.

    Returns:
        tuple: ``(x, y)``, both ``(n, T)`` int64; ``y[:, t]`` is the answer at position
        ``t`` (meaningful for ``t >= 2`` only: ``y[:, 0]`` and ``y[:, 1]`` are not scored).
    """
    n, vocab_size, T = _checks.sizes(n=n, vocab_size=vocab_size, T=T)
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    x = torch.randint(0, vocab_size, (n, T), generator=generator)  # (n, T), x ~ U{0, ..., V-1}
    y = (x.roll(1, dims=1) - x[:, :1]) % vocab_size  # (n, T): y[:, t] = (x[:, t-1] - x[:, 0]) mod V
    return x, y


def _check_forward(model, tokens, *, return_weights=False):
    """The checks of :meth:`TwoRelationNet.forward`: ids ``(B, T)`` in ``[0, vocab_size)``, ``T <= context_length``."""
    _checks.token_ids("tokens", tokens, model.vocab_size, model.context_length)
    if tokens.dim() != 2:
        raise ValueError(f"tokens must have shape (B, T), got shape {tuple(tokens.shape)}")
    _checks.flag("return_weights", return_weights)


class TwoRelationNet(nn.Module):
    r"""Embedding, positional encoding, causal multi-head attention and a readout.

    ``readout(MultiHead(Embedding(x) + PE))``, with no residual connection: the readout
    at position ``t`` sees only the attention's output at ``t``, so everything it learns
    about the other positions passes through the heads.

    Args:
        vocab_size (int): number of tokens :math:`V`.
        d_model (int): embedding width, divisible by ``num_heads``.
        context_length (int): longest sequence accepted.
        num_heads (int): number of heads of the causal :class:`~attn.MultiHeadAttention`.
        positional (bool): add the sinusoidal :class:`~attn.PositionalEncoding`
            (otherwise the model gets no information about positions).

    Attributes:
        tok_emb (nn.Embedding): ``(vocab_size, d_model)``; then
        pos (PositionalEncoding or nn.Identity): the positional encoding, or nothing
            when ``positional=False``; then
        mha (MultiHeadAttention): the causal attention; then
        readout (nn.Sequential): ``Linear(d_model, 4 d_model)``, ReLU,
            ``Linear(4 d_model, vocab_size)``; created in this order.

    Shape:
        - input ``tokens``: integer ``(B, T)``
        - output: scores ``(B, T, vocab_size)``; weights ``(B, h, T, T)``
    """

    def __init__(self, vocab_size, d_model, context_length, num_heads, *, positional=True):
        super().__init__()
        self.vocab_size, _, self.context_length, _ = _checks.sizes(
            vocab_size=vocab_size, d_model=d_model, context_length=context_length, num_heads=num_heads)
        _checks.divisible("d_model", d_model, "num_heads", num_heads)
        _checks.flags(positional=positional)
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos = (PositionalEncoding(d_model, max_len=context_length, dropout=0.0)
                    if positional else nn.Identity())
        self.mha = MultiHeadAttention(d_model, d_model, context_length, dropout=0.0,
                                      num_heads=num_heads)
        self.readout = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.ReLU(),
                                     nn.Linear(4 * d_model, vocab_size))

    @_checks.door(_check_forward)
    def forward(self, tokens, *, return_weights=False):
        """Scores for every position (and the heads' weights when asked).

        Args:
            tokens (torch.Tensor): integer ids ``(B, T)``.
            return_weights (bool): also return the attention weights ``(B, h, T, T)``.

        Returns:
            torch.Tensor or tuple: ``(B, T, vocab_size)``, or ``(scores, weights)``.
        """
        x = self.pos(self.tok_emb(tokens))  # (B, T) -> (B, T, d_model)
        if not return_weights:
            return self.readout(self.mha(x))  # (B, T, d_model) -> (B, T, V)
        z, att = self.mha(x, return_weights=True)  # (B, T, d_model), (B, h, T, T)
        return self.readout(z), att  # (B, T, V), (B, h, T, T)


def train(*, T=10, num_heads=2, positional=True, steps=1000, seed=0, vocab_size=10,
          d_model=32, batch_size=64, lr=3e-3):
    """Train a :class:`TwoRelationNet` on fresh batches of :func:`make_batch`.

    ``torch.manual_seed(seed)`` then the model (so its initial weights depend only on
    ``seed``), AdamW, and a generator seeded with ``seed + 1`` for the data. At every step
    a new batch; the loss is the cross-entropy of the answers at positions ``2 .. T-1``.

    Args:
        T (int): sequence length (also the model's context length).
        num_heads (int): heads of the attention.
        positional (bool): use the positional encoding.
        steps (int): optimisation steps.
        seed (int): seed of the weights (``seed``) and of the data (``seed + 1``).
        vocab_size (int): number of tokens.
        d_model (int): embedding width.
        batch_size (int): sequences per step.
        lr (float): AdamW's learning rate.

    Returns:
        tuple: ``(model, losses)``: the trained model in evaluation mode and the list of
        the ``steps`` losses.
    """
    steps, batch_size = _checks.sizes(steps=steps, batch_size=batch_size)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    torch.manual_seed(seed)
    model = TwoRelationNet(vocab_size, d_model, T, num_heads, positional=positional)
    return model, _fit(model, steps=steps, seed=seed, batch_size=batch_size, lr=lr)


@cached()
def _fit(model, *, steps, seed, batch_size, lr):
    V, T = model.vocab_size, model.context_length

    def loss(m, g):
        x, y = make_batch(batch_size, g, vocab_size=V, T=T)  # (batch, T), (batch, T)
        logits = m(x)  # (batch, T, V)
        return F.cross_entropy(logits[:, 2:].reshape(-1, V), y[:, 2:].reshape(-1))  # answers at 2 .. T-1

    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    return fit(model, loss, steps, opt, generator=torch.Generator().manual_seed(seed + 1))
