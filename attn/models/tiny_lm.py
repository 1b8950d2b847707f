r"""A tiny causal language model, small enough to train while the book is built.

A token embedding, ``num_layers`` pre-norm blocks (grouped-query attention and a
two-layer MLP, each added to a residual stream), a final layer norm and a linear readout
to one score per vocabulary token. Positions enter through the rotary embedding of the
attention layers (:class:`attn.RotaryEmbedding`), so the model has no position table.
It generates greedily, with or without a :class:`attn.KVCache` per layer: the tokens are
the same, only the work per token differs. A batch of prompts of unequal lengths,
left-padded, takes a ``key_padding_mask`` and ``position_ids``; :meth:`TinyLM.evict_caches`
and :func:`streaming_loss` keep the first positions and a sliding window of the caches,
as StreamingLLM (Xiao et al., 2023) does.

:func:`pattern_batch` gives its toy task (continue a repeating pattern), :func:`train`
and :func:`evaluate` train and score it, and :func:`step_times` times each step of
:meth:`TinyLM.generate`.
"""
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from .. import _checks
from .train import cached, fit
from ..layers.grouped_query import GroupedQueryAttention
from ..layers.core import bottom_right_mask
from ..cache.kv_cache import KVCache
from ..layers.rope import rotate_half

__all__ = ["TinyLM", "Block", "pattern_batch", "train", "evaluate", "step_times", "streaming_loss"]


def _check_block(block, x, cache=None, *, positions=None, mask=None, return_weights=False):
    """The checks of :meth:`Block.forward`: those of its attention layer."""
    _checks.forward_inputs(block.attn, x, return_weights, cache=cache, positions=positions, mask=mask)


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

    @_checks.door(_check_block)
    def forward(self, x, cache=None, *, positions=None, mask=None, return_weights=False):
        """``x`` ``(B, T, d_model)``; ``cache``: this block's :class:`attn.KVCache` or ``None``.

        ``positions`` and ``mask``: as :meth:`attn.GroupedQueryAttention.forward`. With
        ``return_weights``, returns ``(x, weights)``.
        """
        a = self.attn(self.ln1(x), cache=cache, positions=positions, mask=mask, return_weights=return_weights)
        a, att = a if return_weights else (a, None)
        x = x + a  # (B, T, d_model)
        x = x + self.mlp(self.ln2(x))  # (B, T, d_model)
        return (x, att) if return_weights else x


def _check_forward(model, idx, caches=None, *, position_ids=None, key_padding_mask=None, mask=None,
                   return_weights=False):
    """The checks of :meth:`TinyLM.forward`."""
    P = model._check_inputs(idx, caches)
    _checks.flag("return_weights", return_weights)
    B, T = idx.shape
    if position_ids is not None:
        _checks.tensor("position_ids", position_ids)
        if tuple(position_ids.shape) != (B, T):
            raise ValueError(f"position_ids must have the shape of idx, (B, T) = {(B, T)}, "
                             f"got shape {tuple(position_ids.shape)}")
        _checks.position_ids("position_ids", position_ids, (B, T), model.context_length)
    if key_padding_mask is not None:
        _checks.padding("key_padding_mask", key_padding_mask, B, P + T)  # (B, T_cached + T)
    if mask is not None:
        if key_padding_mask is not None:
            raise ValueError("mask and key_padding_mask cannot both be given: mask replaces the "
                             "causal and padding masks (fold the padding into it)")
        _checks.bool_mask("mask", mask, (B, 1, T, P + T))


def _check_generate(model, idx, max_new_tokens, use_cache=True, *, key_padding_mask=None):
    """The checks of :meth:`TinyLM.generate`."""
    _checks.positive_int("max_new_tokens", max_new_tokens)
    _checks.flag("use_cache", use_cache)
    model._check_inputs(idx, None, extra=max_new_tokens)
    _check_prompt_mask(idx, key_padding_mask)


def _check_prompt_mask(idx, key_padding_mask):
    """The check of :meth:`TinyLM.generate`'s ``key_padding_mask`` ``(B, T_prompt)``."""
    if key_padding_mask is None:
        return
    _checks.padding("key_padding_mask", key_padding_mask, *idx.shape)
    if not key_padding_mask.any(dim=1).all():
        raise ValueError("key_padding_mask must mark at least one real token (True) in every prompt, "
                         f"got a row of False: {key_padding_mask.any(dim=1).tolist()}")


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
        rope_base (float, optional): base of the rotary embedding in every attention
            layer; ``None`` for no rotation.
        learned_positions (bool): add a learned position embedding to the token
            embeddings (absolute positions, as GPT-2); usually with ``rope_base=None``.

    Attributes:
        tok_emb (nn.Embedding): ``V -> d_model``.
        pos_emb (nn.Embedding or None): ``context_length -> d_model``, with
            ``learned_positions``.
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
        learned_positions=False,
    ):
        super().__init__()
        self.vocab_size = _checks.positive_int("vocab_size", vocab_size)
        self.context_length = _checks.positive_int("context_length", context_length)
        _checks.positive_int("num_layers", num_layers)
        _checks.flag("learned_positions", learned_positions)
        num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(context_length, d_model) if learned_positions else None
        self.blocks = nn.ModuleList(
            Block(d_model, context_length, num_heads, num_kv_heads, dropout, rope_base) for _ in range(num_layers)
        )
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def new_caches(self):
        """One empty :class:`attn.KVCache` per block, for :meth:`forward`'s ``caches``."""
        return [KVCache() for _ in self.blocks]

    @_checks.door(_check_forward)
    def forward(self, idx, caches=None, *, position_ids=None, key_padding_mask=None, mask=None,
                return_weights=False):
        """Scores of the next token at every position.

        Args:
            idx (torch.Tensor): token ids ``(B, T)``, int64 in ``[0, vocab_size)``; with
                caches, only the new tokens.
            caches (list of attn.KVCache, optional): one per block (:meth:`new_caches`).
                The new tokens sit at positions ``T_cached .. T_cached + T - 1``; each
                attention layer rotates them by these positions.
            position_ids (torch.Tensor, optional): int64 ``(B, T)`` in
                ``[0, context_length)``, the positions of the new tokens instead (for
                left-padded prompts: 0 at each prompt's first real token).
            key_padding_mask (torch.Tensor, optional): bool ``(B, T_cached + T)``,
                ``True`` = real token, ``False`` = padding, which no query attends to.
            mask (torch.Tensor, optional): bool, broadcastable to ``(B, 1, T, T_cached + T)``,
                ``True`` = may attend; it replaces the causal mask (e.g. the tree of guessed
                tokens of :func:`attn.serving.speculative_generate`, :func:`attn.functional.tree_mask`).
                Not with ``key_padding_mask``.
            return_weights (bool): also return each block's attention weights.

        Returns:
            torch.Tensor or tuple: logits ``(B, T, vocab_size)``, or ``(logits, weights)``
            with ``weights`` a list of ``(B, num_heads, T, T_cached + T)``, one per block.
        """
        B, T = idx.shape
        P = 0 if caches is None else len(caches[0])  # T_cached
        # mask None: causal; with padding: (T, P + T) & (B, 1, 1, P + T) -> (B, 1, T, P + T)
        if key_padding_mask is not None:
            mask = bottom_right_mask(T, P, idx.device) & key_padding_mask[:, None, None, :]
        x = self.tok_emb(idx)  # (B, T) -> (B, T, d_model)
        if self.pos_emb is not None:  # absolute positions: P .. P + T - 1, or position_ids
            x = x + self.pos_emb(torch.arange(P, P + T, device=idx.device) if position_ids is None else position_ids)
        weights = []  # with return_weights: one (B, h, T, P + T) per block
        for i, block in enumerate(self.blocks):
            cache = None if caches is None else caches[i]
            x = block(x, cache, positions=position_ids, mask=mask, return_weights=return_weights)
            if return_weights:
                x, att = x  # (B, T, d_model), (B, h, T, P + T)
                weights.append(att)
        logits = self.head(self.ln_f(x))  # (B, T, d_model) -> (B, T, V)
        return (logits, weights) if return_weights else logits

    @torch.no_grad()
    @_checks.door(_check_generate)
    def generate(self, idx, max_new_tokens, use_cache=True, *, key_padding_mask=None):
        """Greedy decoding: append the most likely next token, ``max_new_tokens`` times.

        Without the cache each step runs the model on the whole sequence so far; with
        it, the first step runs on the prompt and fills one :class:`attn.KVCache` per
        block, and every later step runs on the one new token.

        Args:
            idx (torch.Tensor): prompt ``(B, T_prompt)``, int64.
            max_new_tokens (int): tokens to append; ``T_prompt + max_new_tokens`` must
                not exceed ``context_length``.
            use_cache (bool): keep the keys and values of earlier positions.
            key_padding_mask (torch.Tensor, optional): bool ``(B, T_prompt)`` for
                left-padded prompts, ``True`` = real token: the padding is masked and the
                positions start at 0 at each prompt's first real token.

        Returns:
            torch.Tensor: ``(B, T_prompt + max_new_tokens)``, the prompt then the new tokens.
        """
        mask = torch.ones_like(idx, dtype=torch.bool) if key_padding_mask is None else key_padding_mask  # (B, T_prompt)
        caches = self.new_caches() if use_cache else None
        step_input = idx  # (B, T_prompt)
        for _ in range(max_new_tokens):
            pos = None if key_padding_mask is None else _left_padded(mask, step_input.size(1))  # (B, T)
            kpm = None if key_padding_mask is None else mask  # (B, P + T)
            logits = self(step_input, caches, position_ids=pos, key_padding_mask=kpm)  # (B, T, V)
            nxt = logits[:, -1].argmax(dim=-1, keepdim=True)  # (B, V) -> (B, 1)
            idx = torch.cat([idx, nxt], dim=1)  # (B, T) -> (B, T + 1)
            mask = F.pad(mask, (0, 1), value=True)  # (B, T) -> (B, T + 1)
            step_input = nxt if use_cache else idx  # (B, 1) | (B, T + 1)
        return idx

    @torch.no_grad()
    def evict_caches(self, caches, size, num_sinks=0):
        r"""Keep at most ``size`` positions in each cache: the first ``num_sinks`` and the last ones.

        The eviction of StreamingLLM (Xiao et al., 2023): the "attention sinks" (the
        first ``num_sinks`` positions) and a window of the latest ``size - num_sinks``
        stay, the positions between them go. The kept positions are renumbered
        ``0 .. size - 1``, positions within the cache: the window's keys, rotated at
        their old positions :math:`p`, are rotated back by the :math:`n` evicted
        positions, :math:`R(p)\,R(-n) = R(p - n)`, and the next token goes at position
        ``size``. ``num_sinks=0`` is a plain sliding window.

        Args:
            caches (list of attn.KVCache): one per block (:meth:`new_caches`), changed in place.
            size (int): the most positions each cache keeps.
            num_sinks (int): first positions that are never evicted, ``<= size``.

        Returns:
            int: the number of positions evicted from each cache (0 if it held ``<= size``).

        Raises:
            TypeError: when a cache is not an :class:`attn.KVCache`, or ``size`` or
                ``num_sinks`` is not an ``int``.
            ValueError: when ``caches`` is not one per block, ``size`` is not positive,
                ``num_sinks`` is negative or more than ``size``, or the model has
                ``learned_positions`` (absolute positions cannot be renumbered).
        """
        _check_evict(self, caches, size, num_sinks)
        return self._evict(caches, size, num_sinks)

    def _evict(self, caches, size, num_sinks):
        """:meth:`evict_caches` on checked inputs."""
        S, n = num_sinks, len(caches[0]) - size  # evicted: positions S .. S + n - 1
        if n <= 0:
            return 0
        for block, cache in zip(self.blocks, caches):
            k, v = cache.k, cache.v  # (B, h_kv, P, d_head)
            win = k[..., S + n:, :]  # (B, h_kv, size - S, d_head): positions S + n .. P - 1
            if block.attn.rope is not None:  # R(-n): positions S .. size - 1
                cos, sin = block.attn.rope.cos[n].to(k.dtype), block.attn.rope.sin[n].to(k.dtype)  # (d_head,)
                win = win * cos - rotate_half(win) * sin  # angle -n theta_i
            k = torch.cat([k[..., :S, :], win], dim=-2)  # (B, h_kv, size, d_head)
            v = torch.cat([v[..., :S, :], v[..., S + n:, :]], dim=-2)  # (B, h_kv, size, d_head)
            cache.reset()
            cache.update(k, v)
        return n

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


def _left_padded(mask, T):
    """Positions of the last ``T`` tokens of left-padded sequences.

    ``mask`` ``(B, P + T)``, ``True`` = real token. A token's position is the number of
    real tokens before it (0 at the first real one). Returns ``(B, T)`` int64.
    """
    return (mask.long().cumsum(dim=-1) - 1).clamp(min=0)[:, -T:]  # (B, P + T) -> (B, T)


def _check_evict(model, caches, size, num_sinks):
    """The checks of :meth:`TinyLM.evict_caches`."""
    if not isinstance(caches, (list, tuple)) or len(caches) != len(model.blocks):
        raise ValueError(f"caches must be a list of {len(model.blocks)} KVCache (new_caches()), got {caches!r}")
    for c in caches:
        if not isinstance(c, KVCache):
            raise TypeError(f"caches must hold attn.KVCache objects, got {type(c).__name__}")
    _checks.positive_int("size", size)
    _checks.non_negative_int("num_sinks", num_sinks)
    if num_sinks > size:
        raise ValueError(f"num_sinks must be at most size={size}, got num_sinks={num_sinks}")
    if model.pos_emb is not None:
        raise ValueError("evict_caches needs positions that can be renumbered (RoPE or none): "
                         "this model has learned_positions=True")


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


@cached()
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
    device = model.head.weight.device
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    return fit(model, lambda m, g: _loss(m, batch(g).to(device)), steps, opt,  # batch on the model's device
               generator=torch.Generator().manual_seed(seed), decay=True, clip=1.0)  # clip: no spikes in the loss


@torch.no_grad()
def evaluate(model, x):
    """Mean next-token cross-entropy (nats per token) of ``model`` on token ids ``x`` ``(B, T)``."""
    model.eval()
    return _loss(model, x).item()


def _check_step_times(model, idx, max_new_tokens, *, use_cache=True, repeats=3, clock=time.perf_counter):
    """The input checks of :func:`step_times`, in one call."""
    if not isinstance(model, TinyLM):
        raise TypeError(f"model must be an attn.models.tiny_lm.TinyLM, got {type(model).__name__}")
    _checks.positive_int("max_new_tokens", max_new_tokens)
    _checks.positive_int("repeats", repeats)
    _checks.flag("use_cache", use_cache)
    if not callable(clock):
        raise TypeError(f"clock must be callable (e.g. time.perf_counter), got {type(clock).__name__}")
    model._check_inputs(idx, None, extra=max_new_tokens)


def _check_streaming(model, x, size, num_sinks=0):
    """The checks of :func:`streaming_loss`."""
    if not isinstance(model, TinyLM):
        raise TypeError(f"model must be an attn.models.tiny_lm.TinyLM, got {type(model).__name__}")
    _checks.tensor("x", x)
    if x.dtype != torch.long:
        raise TypeError(f"x must hold int64 token ids, got dtype {x.dtype}")
    if x.dim() != 2 or x.size(1) < 2:
        raise ValueError(f"x must have shape (B, T) with T >= 2, got shape {tuple(x.shape)}")
    _checks.token_ids("x", x, model.vocab_size, x.size(1))
    _checks.positive_int("size", size)
    if size > model.context_length:
        raise ValueError(f"size must be at most context_length={model.context_length}, got {size}")
    _checks.non_negative_int("num_sinks", num_sinks)
    if num_sinks >= size:
        raise ValueError(f"num_sinks must be less than size={size}, got num_sinks={num_sinks}")
    if model.pos_emb is not None:
        raise ValueError("streaming_loss needs positions that can be renumbered (RoPE or none): "
                         "this model has learned_positions=True")


@torch.no_grad()
@_checks.door(_check_step_times)
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
    runs = []
    for _ in range(repeats):
        caches = model.new_caches() if use_cache else None
        seq, step_input, times, fed = idx, idx, [], 0  # (B, T_prompt)
        for _ in range(max_new_tokens):
            start = clock()
            logits = model(step_input, caches)  # (B, T_step, V)
            nxt = logits[:, -1].argmax(dim=-1, keepdim=True)  # (B, V) -> (B, 1)
            times.append(clock() - start)
            fed += step_input.size(1)  # T_step
            seq = torch.cat([seq, nxt], dim=1)  # (B, T) -> (B, T + 1)
            step_input = nxt if use_cache else seq
        runs.append(times)
    return torch.tensor(runs, dtype=torch.float64).median(dim=0).values, fed  # (repeats, n) -> (n,)


@torch.no_grad()
@_checks.door(_check_streaming)
def streaming_loss(model, x, size, num_sinks=0):
    """Next-token losses of ``model`` reading ``x`` one token at a time, with evicting caches.

    Before each token goes in, :meth:`TinyLM.evict_caches` keeps ``size - 1`` positions
    of every cache (the first ``num_sinks`` and the latest ones), so that the token
    attends to at most ``size`` positions, itself included, numbered within the cache:
    ``x`` may be longer than ``context_length``. With ``size >= T - 1`` nothing is
    evicted and the losses are those of one causal pass.

    Args:
        model (TinyLM): the model, in the mode it is in (call ``eval()`` first).
        x (torch.Tensor): token ids ``(B, T)``, int64, ``T >= 2``.
        size (int): positions each query attends to, at most ``context_length``.
        num_sinks (int): first positions never evicted, less than ``size``.

    Returns:
        torch.Tensor: ``(B, T - 1)``, the cross-entropy (nats) of predicting ``x[:, t + 1]``.

    Raises:
        TypeError: when ``model`` is not a :class:`TinyLM`, ``x`` is not int64, or
            ``size`` or ``num_sinks`` is not an ``int``.
        ValueError: when ``x`` is not ``(B, T)`` with ``T >= 2`` or holds ids out of
            range, ``size`` exceeds ``context_length``, or ``num_sinks >= size``.
    """
    caches, losses = model.new_caches(), []
    for t in range(x.size(1) - 1):
        model._evict(caches, size - 1, num_sinks)  # len(cache) <= size - 1
        logits = model(x[:, t:t + 1], caches)  # (B, 1, V), at position len(cache)
        losses.append(F.cross_entropy(logits[:, 0], x[:, t + 1], reduction="none"))  # (B,)
    return torch.stack(losses, dim=1)  # (T - 1) x (B,) -> (B, T - 1)


def _loss(model, x):
    logits = model(x[:, :-1])  # (B, T-1) -> (B, T-1, V)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), x[:, 1:].reshape(-1))  # (B*(T-1), V)
