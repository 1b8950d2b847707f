r"""A tiny causal language model, small enough to train while the book is built.

A token embedding, ``num_layers`` pre-norm blocks (grouped-query attention and a
two-layer MLP, each added to a residual stream), a final layer norm and a linear readout
to one score per vocabulary token. Positions enter through the rotary embedding of the
attention layers (:class:`attn.RotaryEmbedding`), so the model has no position table.
It generates greedily, with or without a :class:`attn.KVCache` per layer: the tokens are
the same, only the work per token differs.

:func:`pattern_batch` gives its toy task (continue a repeating pattern), :func:`train`
and :func:`evaluate` train and score it, and :func:`step_times` times each step of
:meth:`TinyLM.generate`.
"""
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import _checks
from .grouped_query import GroupedQueryAttention
from .kv_cache import KVCache, _causal_attention

__all__ = ["TinyLM", "Block", "pattern_batch", "train", "evaluate", "step_times"]


class Block(nn.Module):
    r"""One pre-norm Transformer block: :math:`x + \operatorname{attn}(\operatorname{LN}(x))`,
    then :math:`x + \operatorname{MLP}(\operatorname{LN}(x))`.

    Args:
        d_model (int): dimension of the residual stream.
        context_length (int): the most positions a sequence may have.
        num_heads (int): query heads of the attention.
        num_kv_heads (int): key-value heads of the attention (see
            :class:`attn.GroupedQueryAttention`).
        dropout (float): dropout on the attention weights.
        rope_base (float, optional): base of the rotary embedding (``None``: no positions).

    Shape:
        ``(B, T, d_model) -> (B, T, d_model)``.
    """

    def __init__(self, d_model, context_length, num_heads, num_kv_heads, dropout=0.0, rope_base=10000.0):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = GroupedQueryAttention(
            d_model, d_model, context_length, dropout, num_heads, num_kv_heads, rope_base=rope_base
        )
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x, cache=None):
        """``x`` ``(B, T, d_model)``; ``cache``: this block's :class:`attn.KVCache` or ``None``."""
        _checks.forward_inputs(self.attn, x, False, cache=cache)
        return self._forward(x, cache)

    def _forward(self, x, cache):
        """:meth:`forward` on checked inputs (what :class:`TinyLM` calls at every step)."""
        x = x + _causal_attention(self.attn, self.ln1(x), cache, False)  # (B, T, d_model)
        return x + self.mlp(self.ln2(x))  # (B, T, d_model)


class TinyLM(nn.Module):
    r"""A small causal language model built on :class:`attn.GroupedQueryAttention`.

    Args:
        vocab_size (int): number of distinct tokens ``V``.
        context_length (int): the most positions a sequence may have (prompt and
            generated tokens together).
        d_model (int): dimension of the embeddings and of the residual stream.
        num_layers (int): number of :class:`Block`.
        num_heads (int): query heads per attention layer.
        num_kv_heads (int, optional): key-value heads per layer; defaults to
            ``num_heads`` (multi-head attention).
        dropout (float): dropout on the attention weights.
        rope_base (float): base of the rotary embedding in every attention layer.

    Attributes:
        tok_emb (nn.Embedding): ``V -> d_model``.
        blocks (nn.ModuleList): the ``num_layers`` blocks.
        ln_f (nn.LayerNorm): the final layer norm.
        head (nn.Linear): the readout ``d_model -> V``.
    """

    def __init__(
        self,
        vocab_size,
        context_length,
        d_model=64,
        num_layers=2,
        num_heads=4,
        num_kv_heads=None,
        dropout=0.0,
        rope_base=10000.0,
    ):
        super().__init__()
        self.vocab_size = _checks.positive_int("vocab_size", vocab_size)
        self.context_length = _checks.positive_int("context_length", context_length)
        _checks.positive_int("num_layers", num_layers)
        num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList(
            Block(d_model, context_length, num_heads, num_kv_heads, dropout, rope_base) for _ in range(num_layers)
        )
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def new_caches(self):
        """One empty :class:`attn.KVCache` per block, for :meth:`forward`'s ``caches``."""
        return [KVCache() for _ in self.blocks]

    def forward(self, idx, caches=None):
        """Scores of the next token at every position.

        Args:
            idx (torch.Tensor): token ids ``(B, T)``, int64 in ``[0, vocab_size)``; with
                caches, only the new tokens.
            caches (list of attn.KVCache, optional): one per block (:meth:`new_caches`).
                The new tokens sit at positions ``T_cached .. T_cached + T - 1``; each
                attention layer rotates them by these positions.

        Returns:
            torch.Tensor: logits ``(B, T, vocab_size)``.
        """
        self._check_inputs(idx, caches)
        return self._forward(idx, caches)

    def _forward(self, idx, caches):
        """:meth:`forward` on checked inputs (the decoding loops call this one)."""
        x = self.tok_emb(idx)  # (B, T) -> (B, T, d_model)
        for i, block in enumerate(self.blocks):
            x = block._forward(x, None if caches is None else caches[i])  # (B, T, d_model)
        return self.head(self.ln_f(x))  # (B, T, d_model) -> (B, T, V)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, use_cache=True):
        """Greedy decoding: append the most likely next token, ``max_new_tokens`` times.

        Without the cache each step runs the model on the whole sequence so far; with
        it, the first step runs on the prompt and fills one :class:`attn.KVCache` per
        block, and every later step runs on the one new token.

        Args:
            idx (torch.Tensor): prompt ``(B, T_prompt)``, int64.
            max_new_tokens (int): tokens to append; ``T_prompt + max_new_tokens`` must
                not exceed ``context_length``.
            use_cache (bool): keep the keys and values of earlier positions.

        Returns:
            torch.Tensor: ``(B, T_prompt + max_new_tokens)``, the prompt then the new tokens.
        """
        _checks.positive_int("max_new_tokens", max_new_tokens)
        _checks.flag("use_cache", use_cache)
        self._check_inputs(idx, None, extra=max_new_tokens)
        caches = self.new_caches() if use_cache else None
        step_input = idx  # (B, T_prompt)
        for _ in range(max_new_tokens):
            logits = self._forward(step_input, caches)  # (B, T_step, V)
            nxt = logits[:, -1].argmax(dim=-1, keepdim=True)  # (B, V) -> (B, 1)
            idx = torch.cat([idx, nxt], dim=1)  # (B, T) -> (B, T + 1)
            step_input = nxt if use_cache else idx  # (B, 1) | (B, T + 1)
        return idx

    def _check_inputs(self, idx, caches, extra=0):
        """Check token ids (and caches); return the number of cached positions."""
        _checks.tensor("idx", idx)
        if idx.dtype != torch.long:
            raise TypeError(f"idx must hold int64 token ids, got dtype {idx.dtype}")
        if idx.dim() != 2 or idx.size(1) == 0:
            raise ValueError(f"idx must have shape (B, T) with T >= 1, got shape {tuple(idx.shape)}")
        if idx.numel() and (idx.min() < 0 or idx.max() >= self.vocab_size):
            raise ValueError(f"idx must lie in [0, vocab_size={self.vocab_size}), got values "
                             f"from {idx.min().item()} to {idx.max().item()}")
        if caches is not None and (not isinstance(caches, (list, tuple)) or len(caches) != len(self.blocks)):
            raise ValueError(f"caches must be a list of {len(self.blocks)} KVCache (new_caches()), got {caches!r}")
        P = 0 if caches is None else len(caches[0])
        if P + idx.size(1) + extra > self.context_length:
            raise ValueError(
                f"{P} cached + {idx.size(1)} given + {extra} new tokens = {P + idx.size(1) + extra} "
                f"positions, more than context_length={self.context_length}"
            )
        return P


def pattern_batch(batch_size, length, period=8, vocab_size=10, generator=None):
    r"""Random patterns of ``period`` tokens, each repeated to ``length`` tokens.

    :math:`x_0 .. x_{p-1}` are random in ``[0, vocab_size)`` and :math:`x_t = x_{t-p}` for
    :math:`t \ge p`: after the first period every token is a copy of the one ``period``
    positions back, which attention can learn to read.

    Args:
        batch_size (int): number of sequences ``B``.
        length (int): tokens per sequence ``T``.
        period (int): pattern length ``p``.
        vocab_size (int): tokens are drawn from ``[0, vocab_size)``.
        generator (torch.Generator, optional): for reproducible sequences.

    Returns:
        torch.Tensor: int64 ``(B, T)``.
    """
    _checks.positive_int("batch_size", batch_size)
    _checks.positive_int("length", length)
    _checks.positive_int("period", period)
    _checks.positive_int("vocab_size", vocab_size)
    pattern = torch.randint(0, vocab_size, (batch_size, period), generator=generator)  # (B, p)
    reps = -(-length // period)  # ceil(length / period)
    return pattern.repeat(1, reps)[:, :length]  # (B, p) -> (B, reps * p) -> (B, T)


def train(model, batch, steps, lr=3e-3, seed=0):
    """Train ``model`` on next-token prediction with AdamW; return the loss of every step.

    Args:
        model (TinyLM): the model, trained in place (left in ``eval()`` mode).
        batch (callable): ``batch(generator)`` returns token ids ``(B, T)``, ``T >= 2``;
            the model learns to predict ``x[:, 1:]`` from ``x[:, :-1]``.
        steps (int): optimisation steps, one batch each.
        lr (float): learning rate.
        seed (int): seeds the generator passed to ``batch``.

    Returns:
        list of float: the training loss (cross-entropy, nats per token) at each step.
    """
    _checks.positive_int("steps", steps)
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    losses = []
    for step in range(steps):
        for group in opt.param_groups:  # learning rate decays linearly to 0
            group["lr"] = lr * (1 - step / steps)
        loss = _loss(model, batch(g))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # no spikes in the loss
        opt.step()
        losses.append(loss.item())
    model.eval()
    return losses


@torch.no_grad()
def evaluate(model, x):
    """Mean next-token cross-entropy (nats per token) of ``model`` on token ids ``x`` ``(B, T)``."""
    model.eval()
    return _loss(model, x).item()


@torch.no_grad()
def step_times(model, idx, max_new_tokens, *, use_cache=True, repeats=3, clock=time.perf_counter):
    """Time each step of greedy decoding, :meth:`TinyLM.generate`'s loop with a clock.

    Step :math:`t` (``t = 0 .. max_new_tokens - 1``) writes the token at position
    ``T_prompt + t``; without the cache it runs the model on all ``T_prompt + t`` tokens
    so far, with it on the prompt (first step) or the one new token. The whole
    generation runs ``repeats`` times and each step keeps its median time, which is
    steadier than one run. The model is used in the mode it is in (call ``eval()`` first
    for dropout-free timings).

    Args:
        model (TinyLM): the model.
        idx (torch.Tensor): prompt ``(B, T_prompt)``, int64.
        max_new_tokens (int): steps to time; ``T_prompt + max_new_tokens`` must not
            exceed ``context_length``.
        use_cache (bool): decode with one :class:`attn.KVCache` per block.
        repeats (int): runs of the whole generation; each step keeps its median time.
        clock (callable): returns seconds, e.g. ``time.perf_counter`` (wall time, the
            default) or ``time.thread_time`` (CPU time of the calling thread, which leaves
            out the time the machine spends on other programs).

    Returns:
        tuple: ``(seconds, fed)``: ``seconds`` a float64 tensor ``(max_new_tokens,)``, the
        median time of each step; ``fed`` the number of tokens each sequence sent through
        the model over one generation.

    Raises:
        TypeError: as :meth:`TinyLM.generate`, or when ``repeats`` is not an ``int`` or
            ``clock`` is not callable.
        ValueError: as :meth:`TinyLM.generate`, or when ``repeats`` is not positive.
    """
    _check_step_times(model, idx, max_new_tokens, use_cache, repeats, clock)
    runs = []
    for _ in range(repeats):
        caches = model.new_caches() if use_cache else None
        seq, step_input, times, fed = idx, idx, [], 0  # (B, T_prompt)
        for _ in range(max_new_tokens):
            start = clock()
            logits = model._forward(step_input, caches)  # (B, T_step, V)
            nxt = logits[:, -1].argmax(dim=-1, keepdim=True)  # (B, V) -> (B, 1)
            times.append(clock() - start)
            fed += step_input.size(1)  # T_step
            seq = torch.cat([seq, nxt], dim=1)  # (B, T) -> (B, T + 1)
            step_input = nxt if use_cache else seq
        runs.append(times)
    return torch.tensor(runs, dtype=torch.float64).median(dim=0).values, fed  # (repeats, n) -> (n,)


def _check_step_times(model, idx, max_new_tokens, use_cache, repeats, clock):
    """The input checks of :func:`step_times`, in one call."""
    if not isinstance(model, TinyLM):
        raise TypeError(f"model must be an attn.tiny_lm.TinyLM, got {type(model).__name__}")
    _checks.positive_int("max_new_tokens", max_new_tokens)
    _checks.positive_int("repeats", repeats)
    _checks.flag("use_cache", use_cache)
    if not callable(clock):
        raise TypeError(f"clock must be callable (e.g. time.perf_counter), got {type(clock).__name__}")
    model._check_inputs(idx, None, extra=max_new_tokens)


def _loss(model, x):
    logits = model(x[:, :-1])  # (B, T-1) -> (B, T-1, V)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), x[:, 1:].reshape(-1))  # (B*(T-1), V)
