r"""A two-layer attention-only Transformer, small enough to grow an induction head
while the book is built.

Token and learned position embeddings are added into a residual stream; each layer adds
the output of its causal multi-head attention to it; a linear readout gives one score
per vocabulary token. There is no MLP and no layer norm, so everything the model does
is done by attention heads reading from and writing to the stream, the setting of
Elhage et al. (2021). On sequences whose second half repeats the first
(:func:`repeated_tokens`) it learns to copy: a *previous-token head* in layer 0 writes
"the token before me was ``a``" at each position, and an *induction head* in layer 1
looks for the position whose previous token equals the current token and copies the
token found there.

:func:`train_induction` trains it, :func:`copy_accuracy` scores the copying, and the
``ablate`` argument of :meth:`AttentionOnly.forward` zeroes chosen heads.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from . import _checks, _trained
from .functional import _attention

__all__ = ["AttentionOnly", "AttentionLayer", "repeated_tokens", "train_induction", "copy_accuracy"]


class AttentionLayer(nn.Module):
    r"""Causal multi-head attention whose heads can be switched off one by one.

    :math:`\operatorname{head}_j = \operatorname{softmax}(q_j k_j^\top/\sqrt{d_h} + M) v_j`,
    output :math:`W_o [m_1 \operatorname{head}_1; \dots; m_h \operatorname{head}_h]` with
    :math:`m_j \in \{0, 1\}` (0 = ablated head).

    Args:
        d_model (int): width of the residual stream, divisible by ``num_heads``.
        num_heads (int): number of heads :math:`h`.

    Shape:
        ``(B, T, d_model) -> (B, T, d_model)``; weights ``(B, h, T, T)``.
    """

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.W_query = nn.Linear(d_model, d_model, bias=False)
        self.W_key = nn.Linear(d_model, d_model, bias=False)
        self.W_value = nn.Linear(d_model, d_model, bias=False)
        self.out_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, keep):
        """``x`` ``(B, T, d_model)``, ``keep`` ``(h,)`` (1 = head on); returns ``(out, weights)``."""
        B, T, d = x.shape
        h = self.num_heads
        q = self.W_query(x).view(B, T, h, d // h).transpose(1, 2)  # (B, T, d) -> (B, h, T, d_h)
        k = self.W_key(x).view(B, T, h, d // h).transpose(1, 2)  # (B, T, d) -> (B, h, T, d_h)
        v = self.W_value(x).view(B, T, h, d // h).transpose(1, 2)  # (B, T, d) -> (B, h, T, d_h)
        out, att = _attention(q, k, v, is_causal=True, return_weights=True)  # (B, h, T, d_h), (B, h, T, T)
        out = out * keep[:, None, None]  # (B, h, T, d_h) * (h, 1, 1): keep = 0 -> 0
        out = out.transpose(1, 2).reshape(B, T, d)  # (B, h, T, d_h) -> (B, T, d)
        return self.out_proj(out), att


class AttentionOnly(nn.Module):
    r"""Attention-only Transformer: embeddings, ``num_layers`` attention layers, readout.

    .. math::

        x^{(0)} = E[t] + P[\mathrm{pos}], \quad
        x^{(\ell+1)} = x^{(\ell)} + \operatorname{Attn}_\ell(x^{(\ell)}), \quad
        \mathrm{logits} = x^{(L)} U

    Args:
        vocab_size (int): number of distinct tokens ``V``.
        context_length (int): the most positions a sequence may have.
        d_model (int): width of the residual stream, divisible by ``num_heads``.
        num_layers (int): number of :class:`AttentionLayer`.
        num_heads (int): heads per layer.

    Attributes:
        tok_emb (nn.Embedding): ``V -> d_model``.
        pos_emb (nn.Embedding): ``context_length -> d_model``, learned positions.
        layers (nn.ModuleList): the :class:`AttentionLayer`.
        unembed (nn.Linear): ``d_model -> V``.

    Shape:
        token ids ``(B, T)`` -> logits ``(B, T, V)``; weights ``(num_layers, B, num_heads, T, T)``.
    """

    def __init__(self, vocab_size, context_length, d_model=64, num_layers=2, num_heads=2):
        super().__init__()
        _checks.sizes(vocab_size=vocab_size, context_length=context_length, d_model=d_model,
                      num_layers=num_layers, num_heads=num_heads)
        _checks.divisible("d_model", d_model, "num_heads", num_heads)
        self.vocab_size, self.context_length = vocab_size, context_length
        self.num_layers, self.num_heads = num_layers, num_heads
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(context_length, d_model)
        self.layers = nn.ModuleList(AttentionLayer(d_model, num_heads) for _ in range(num_layers))
        self.unembed = nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, idx, *, return_weights=False, ablate=()):
        """Scores of the next token at every position.

        Args:
            idx (torch.Tensor): token ids ``(B, T)``, int64 in ``[0, vocab_size)``,
                ``T <= context_length``.
            return_weights (bool): also return every head's attention weights.
            ablate (iterable of (int, int)): ``(layer, head)`` pairs whose output is
                replaced by zeros.

        Returns:
            torch.Tensor or tuple: logits ``(B, T, V)``, or ``(logits, weights)`` with
            weights ``(num_layers, B, num_heads, T, T)``.
        """
        _checks.flag("return_weights", return_weights)
        self._check_idx(idx)
        keep = self._keep(ablate, idx.device)
        return self._forward(idx, keep, return_weights)

    def _forward(self, idx, keep, return_weights=False):
        """:meth:`forward` on checked inputs; ``keep`` ``(num_layers, h)`` of 0/1."""
        T = idx.size(1)
        x = self.tok_emb(idx) + self.pos_emb.weight[:T]  # (B, T, d) + (T, d) -> (B, T, d)
        weights = []
        for layer, keep_l in zip(self.layers, keep):
            out, att = layer(x, keep_l)  # (B, T, d), (B, h, T, T)
            x = x + out  # x^(l+1) = x^(l) + out, (B, T, d)
            weights.append(att)
        logits = self.unembed(x)  # (B, T, d) -> (B, T, V)
        return (logits, torch.stack(weights)) if return_weights else logits  # (L, B, h, T, T)

    def _keep(self, ablate, device=None):
        """``(num_layers, num_heads)`` float mask, 0 at the ``(layer, head)`` pairs of ``ablate``."""
        keep = torch.ones(self.num_layers, self.num_heads, device=device)
        try:
            pairs = [tuple(p) for p in ablate]
        except TypeError:
            raise TypeError(f"ablate must be an iterable of (layer, head) pairs, got {ablate!r}") from None
        for pair in pairs:
            ok = len(pair) == 2 and all(isinstance(i, int) and not isinstance(i, bool) for i in pair)
            if not ok or not (0 <= pair[0] < self.num_layers and 0 <= pair[1] < self.num_heads):
                raise ValueError(
                    f"ablate must hold (layer, head) pairs with 0 <= layer < {self.num_layers} "
                    f"and 0 <= head < {self.num_heads}, got {pair!r}"
                )
            keep[pair] = 0.0
        return keep

    def _check_idx(self, idx):
        _checks.tensor("idx", idx)
        if idx.dtype != torch.long:
            raise TypeError(f"idx must hold int64 token ids, got dtype {idx.dtype}")
        if idx.dim() != 2 or idx.numel() == 0:
            raise ValueError(f"idx must have shape (B, T) with B, T >= 1, got shape {tuple(idx.shape)}")
        if idx.size(1) > self.context_length:
            raise ValueError(f"idx has T={idx.size(1)} tokens, more than context_length={self.context_length}")
        if idx.min() < 0 or idx.max() >= self.vocab_size:
            raise ValueError(f"idx must lie in [0, vocab_size={self.vocab_size}), got values "
                             f"from {idx.min().item()} to {idx.max().item()}")


def repeated_tokens(batch_size, half, vocab_size, generator=None):
    r"""Random tokens, then the same tokens again: :math:`x_{t+n} = x_t` for :math:`t < n`.

    Args:
        batch_size (int): number of sequences ``B``.
        half (int): length ``n`` of the random half; sequences have ``T = 2n`` tokens.
        vocab_size (int): tokens are drawn uniformly from ``[0, vocab_size)``.
        generator (torch.Generator, optional): for reproducible sequences.

    Returns:
        torch.Tensor: int64 ``(B, T)``, ``T = 2 * half``.
    """
    _checks.sizes(batch_size=batch_size, half=half, vocab_size=vocab_size)
    first = torch.randint(0, vocab_size, (batch_size, half), generator=generator)  # (B, n)
    return torch.cat([first, first], dim=1)  # (B, n) -> (B, 2n)


def _train_batch(batch_size, half, vocab_size, g):
    """Sequences of ``2 * half`` random tokens whose last ``n`` tokens copy the ``n`` before.

    Each row has its own ``n`` in ``half // 2 .. half``; returns ``x`` ``(B, 2 half)`` and
    ``copy`` ``(B, 2 half - 1)``, True where the target ``x[:, 1:]`` can be predicted by
    copying (the copied token's predecessor was copied too).
    """
    T = 2 * half
    x = torch.randint(0, vocab_size, (batch_size, T), generator=g)  # (B, T)
    n = torch.randint(half // 2, half + 1, (batch_size, 1), generator=g)  # (B, 1)
    pos = torch.arange(T)  # (T,)
    src = torch.where(pos >= T - n, pos - n, pos)  # (B, T): x_t = x_{t-n}, t >= T - n
    x = x.gather(1, src)  # (B, T)
    copy = pos[1:] >= T - n + 1  # (B, T - 1): targets x_t, t >= T - n + 1
    return x, copy


def _losses(model, x, copy, keep):
    """Cross-entropy on the targets that are not copies, and on those that are."""
    logits = model._forward(x[:, :-1], keep)  # (B, T-1) -> (B, T-1, V)
    loss = F.cross_entropy(logits.transpose(1, 2), x[:, 1:], reduction="none")  # (B, T-1)
    return loss[~copy].mean(), loss[copy].mean()


@_trained.shared(draws_init=True)
@_trained.one_thread
def train_induction(model, steps=600, batch_size=64, half=12, lr=1e-2, seed=0):
    """Train on sequences that end with a copy, with AdamW; return the losses of new and copied tokens.

    Each training sequence has ``2 * half`` random tokens whose last ``n`` tokens copy
    the ``n`` before them, ``n`` drawn per sequence from ``half // 2 .. half``: the copy
    starts at a different place in every row and only the tokens say where, so no head
    can copy by looking a fixed number of positions back. The loss trained on is the
    mean of the cross-entropy on the targets that are copies and on those that are not.

    Args:
        model (AttentionOnly): trained in place (left in ``eval()`` mode).
        steps (int): optimisation steps, one fresh batch each.
        batch_size (int): sequences per batch.
        half (int): the longest random half (``2 * half <= context_length``), ``>= 2``.
        lr (float): peak learning rate (linear decay to 0).
        seed (int): seeds the model's initialisation and the batches.

    Returns:
        tuple: ``(fresh, repeat)``, two lists of ``steps`` floats: the loss (nats per
        token) at each step on the targets that are new random tokens and on those that
        repeat earlier ones.
    """
    if not isinstance(model, AttentionOnly):
        raise TypeError(f"model must be an attn.circuits.AttentionOnly, got {type(model).__name__}")
    _checks.sizes(steps=steps, batch_size=batch_size, half=half)
    if half < 2:
        raise ValueError(f"half must be >= 2, got {half}")
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not lr > 0:
        raise ValueError(f"lr must be a positive float, got {lr!r}")
    _checks.non_negative_int("seed", seed)
    if 2 * half > model.context_length:
        raise ValueError(f"2 * half = {2 * half} exceeds context_length={model.context_length}")
    torch.manual_seed(seed)
    for p in model.parameters():  # a fresh, seeded start
        nn.init.normal_(p, std=0.02 if p.dim() == 2 and p.size(0) == p.size(1) else 0.1)
    g = torch.Generator().manual_seed(seed)
    keep = model._keep(())
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    model.train()
    fresh, repeat = [], []
    for step in range(steps):
        for group in opt.param_groups:
            group["lr"] = lr * (1 - step / steps)
        x, copy = _train_batch(batch_size, half, model.vocab_size, g)
        l1, l2 = _losses(model, x, copy, keep)
        loss = (l1 + l2) / 2
        opt.zero_grad()
        loss.backward()
        opt.step()
        fresh.append(l1.item())
        repeat.append(l2.item())
    model.eval()
    return fresh, repeat


@torch.no_grad()
def copy_accuracy(model, x, *, ablate=()):
    """Share of the repeated half's predictable tokens that ``model`` predicts (argmax).

    For ``x`` ``(B, 2n)`` from :func:`repeated_tokens`, the targets are
    :math:`x_{n+1} .. x_{2n-1}` (each a copy of a token seen ``n`` positions earlier).

    Args:
        model (AttentionOnly): the model.
        x (torch.Tensor): token ids ``(B, T)``, ``T = 2n``, ``n >= 2``.
        ablate (iterable of (int, int)): heads to zero, as in :meth:`AttentionOnly.forward`.

    Returns:
        float: accuracy in ``[0, 1]``.
    """
    if not isinstance(model, AttentionOnly):
        raise TypeError(f"model must be an attn.circuits.AttentionOnly, got {type(model).__name__}")
    model._check_idx(x)
    if x.size(1) % 2 or x.size(1) < 4:
        raise ValueError(f"x must have an even length 2n >= 4 (two equal halves), got T={x.size(1)}")
    n = x.size(1) // 2
    logits = model._forward(x[:, :-1], model._keep(ablate, x.device))  # (B, 2n-1, V)
    pred = logits[:, n:].argmax(dim=-1)  # (B, n-1)
    return (pred == x[:, n + 1:]).float().mean().item()
