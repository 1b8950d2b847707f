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

from .. import _checks
from .train import cached, fit
from ..layers.core import attend_heads, split_heads
from ..functional import induction_score, previous_token_score

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

    causal, rope = True, None  # causal; positions come from the embeddings

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.d_model, self.num_heads = _checks.sizes(d_model=d_model, num_heads=num_heads)
        _checks.divisible("d_model", d_model, "num_heads", num_heads)
        self.num_kv_heads = num_heads
        self.W_query = nn.Linear(d_model, d_model, bias=False)
        self.W_key = nn.Linear(d_model, d_model, bias=False)
        self.W_value = nn.Linear(d_model, d_model, bias=False)
        self.out_proj = nn.Linear(d_model, d_model, bias=False)
        self.dropout = nn.Dropout(0.0)

    @_checks.door(_checks.gated_inputs)
    def forward(self, x, keep, x_key=None, x_value=None):
        """``x`` ``(B, T, d_model)``, ``keep`` ``(h,)`` (1 = head on); returns ``(out, weights)``.

        The pieces of :func:`attn.layers.core.attend`; head ``j``'s values are multiplied by
        ``keep[j]``, so its output is too (:math:`a (m v) = m (a v)`); weights ``(B, h, T, T)``.
        ``x_key`` and ``x_value`` ``(B, T, d_model)``, default ``x``, feed the keys and the
        values instead of ``x`` (path patching: each input read from another stream).
        """
        h = self.num_heads
        q = split_heads(self.W_query(x), h)  # (B, T, d) -> (B, h, T, d_h)
        k = split_heads(self.W_key(x if x_key is None else x_key), h)  # (B, T, d) -> (B, h, T, d_h)
        v = split_heads(self.W_value(x if x_value is None else x_value), h)  # (B, T, d) -> (B, h, T, d_h)
        v = v * keep[:, None, None]  # (B, h, T, d_h) * (h, 1, 1): keep = 0 -> 0
        return attend_heads(self, q, k, v, is_causal=True, return_weights=True)  # (B, T, d), (B, h, T, T)


def _check_forward(model, idx, *, return_weights=False, ablate=()):
    """The checks of :meth:`AttentionOnly.forward` (``ablate`` is checked as it is read)."""
    model._check(idx, return_weights)


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

    @_checks.door(_check_forward)
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
        keep = self._keep(ablate, idx.device)  # (num_layers, h): 0 = ablated
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

    def _check(self, idx, return_weights=False):
        """The checks of :meth:`forward`: ``idx`` int64 ``(B, T)``, ``T <= context_length``, ids in range."""
        _checks.flag("return_weights", return_weights)
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


def _losses(model, x, copy):
    """Cross-entropy on the targets that are not copies, and on those that are."""
    logits = model(x[:, :-1])  # (B, T-1) -> (B, T-1, V)
    loss = F.cross_entropy(logits.transpose(1, 2), x[:, 1:], reduction="none")  # (B, T-1)
    return loss[~copy].mean(), loss[copy].mean()


@torch.no_grad()
def _probe(model, x):
    """On ``x`` ``(B, 2n)`` of :func:`repeated_tokens`: ``s_-1`` and ``s_n`` ``(L, h)``, P(seen), P(target)."""
    n = x.size(1) // 2
    logits, w = model(x, return_weights=True)  # (B, 2n, V), (L, B, h, 2n, 2n)
    p = logits[:, n:-1].softmax(-1)  # (B, n - 1, V): predicts x_{n+1} .. x_{2n-1}
    seen = F.one_hot(x, model.vocab_size).cummax(1).values[:, n:-1]  # (B, n - 1, V): 1 if in x_{<=i}
    p_seen = (p * seen).sum(-1).mean()  # mass on tokens already in the sequence
    p_target = p.gather(-1, x[:, n + 1:, None]).mean()  # (B, n - 1, 1): mass on the copy
    return previous_token_score(w).mean(1), induction_score(w, n).mean(1), p_seen, p_target


@cached(draws_init=True)
def train_induction(model, steps=600, batch_size=64, half=12, lr=1e-2, seed=0, record=0):
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
        record (int): every ``record`` steps (0 = never), measure the model on 64 fixed
            sequences of :func:`repeated_tokens` (period ``half``) without changing the
            training: each head's scores and the probabilities of the copy targets.

    Returns:
        tuple: ``(fresh, repeat)``, two lists of ``steps`` floats: the loss (nats per
        token) at each step on the targets that are new random tokens and on those that
        repeat earlier ones. With ``record > 0``, ``(fresh, repeat, trace)``, ``trace`` a
        dict of tensors, one row per measurement: ``"step"`` ``(n,)``, the step before
        which it was taken; ``"prev"`` and ``"ind"`` ``(n, num_layers, num_heads)``, the
        previous-token and induction scores; ``"p_seen"`` and ``"p_target"`` ``(n,)``, the
        mean probability, on the copy targets, of any token already in the sequence and
        of the target itself.
    """
    if not isinstance(model, AttentionOnly):
        raise TypeError(f"model must be an attn.models.circuits.AttentionOnly, got {type(model).__name__}")
    _checks.sizes(steps=steps, batch_size=batch_size, half=half)
    if half < 2:
        raise ValueError(f"half must be >= 2, got {half}")
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not lr > 0:
        raise ValueError(f"lr must be a positive float, got {lr!r}")
    _checks.non_negative_int("seed", seed)
    _checks.non_negative_int("record", record)
    if 2 * half > model.context_length:
        raise ValueError(f"2 * half = {2 * half} exceeds context_length={model.context_length}")
    torch.manual_seed(seed)
    for p in model.parameters():  # a fresh, seeded start
        nn.init.normal_(p, std=0.02 if p.dim() == 2 and p.size(0) == p.size(1) else 0.1)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    device = model.unembed.weight.device
    probe = repeated_tokens(64, half, model.vocab_size, generator=torch.Generator().manual_seed(seed + 1))
    rows = []  # (step, s_-1, s_n, P(seen), P(target))

    def measure(step):
        if record and step % record == 0:
            rows.append((step, *_probe(model, probe.to(device))))

    def loss(m, g):  # (fresh, repeat), trained on their mean
        x, copy = (t.to(device) for t in _train_batch(batch_size, half, m.vocab_size, g))  # model's device
        return _losses(m, x, copy)

    fresh, repeat = fit(model, loss, steps, opt, generator=torch.Generator().manual_seed(seed), decay=True,
                        before_step=measure)
    if not record:
        return fresh, repeat
    rows.append((steps, *_probe(model, probe.to(device))))
    step, prev, ind, p_seen, p_target = zip(*rows)
    trace = {"step": torch.tensor(step), "prev": torch.stack(prev), "ind": torch.stack(ind),
             "p_seen": torch.stack(p_seen), "p_target": torch.stack(p_target)}
    return fresh, repeat, trace


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
        raise TypeError(f"model must be an attn.models.circuits.AttentionOnly, got {type(model).__name__}")
    model._check(x)
    if x.size(1) % 2 or x.size(1) < 4:
        raise ValueError(f"x must have an even length 2n >= 4 (two equal halves), got T={x.size(1)}")
    n = x.size(1) // 2
    with _checks.checked():  # x checked above
        logits = model(x[:, :-1], ablate=ablate)  # (B, 2n-1, V)
    pred = logits[:, n:].argmax(dim=-1)  # (B, n-1)
    return (pred == x[:, n + 1:]).float().mean().item()
