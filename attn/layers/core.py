r"""The attention core: the one forward pass every attention layer of the package runs.

.. math::

    \operatorname{out} = \operatorname{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)\, W^O,
    \qquad
    \mathrm{head}_i = \operatorname{softmax}\!\left(
        \frac{R_p(Q_i)\, R_p(K_{g(i)})^\top}{\sqrt{d_{head}}} + M\right) V_{g(i)}

A layer ``m`` owns its weights; :func:`attend` does the rest, in this order:
:func:`project` projects ``x`` with ``m.W_query``, ``m.W_key``, ``m.W_value`` (keys and
values from ``context`` for cross-attention) and splits it into ``m.num_heads`` query
heads and ``m.num_kv_heads`` key-value heads (:func:`split_heads`); queries and keys are
rotated by their positions (``m.rope``, :math:`R_p`); the keys and values are appended to
the cache; the causal mask of the new tokens is built (:func:`bottom_right_mask`);
:func:`attend_heads` makes one call to the attention kernel (PyTorch's fused one,
``enable_gqa`` when :math:`h_{kv} < h`: query head :math:`i` reads key-value head
:math:`g(i) = \lfloor i / (h / h_{kv}) \rfloor`), with dropout while training, merges
the heads (:func:`merge_heads`) and applies ``m.out_proj``.

:class:`attn.MultiHeadAttention`, :class:`attn.GroupedQueryAttention` and
:class:`attn.CrossAttention` call :func:`attend`; :class:`attn.models.circuits.AttentionLayer`
(which switches heads off) and :class:`attn.MultiHeadLatentAttention` (which
decompresses its keys and values) use its pieces. The book's
step-by-step classes (``SelfAttentionV1`` to ``MultiHeadAttentionWrapper``) keep their own
code, as the chapters teach it.

:func:`attend` checks nothing: the layer checked its inputs at its door
(:func:`attn._checks.door`).
"""
import torch

from ..functional import _attention, merge_heads, split_heads

__all__ = ["attend", "project", "attend_heads", "split_heads", "merge_heads", "bottom_right_mask"]


def bottom_right_mask(T, P, device=None):
    """The causal mask of ``T`` new tokens after ``P`` cached ones: ``(T, P + T)`` bool.

    New token ``i`` sits at position ``P + i`` and may attend to keys ``0 .. P + i``
    (``True`` = may attend): the lower triangle aligned at the bottom right, as
    :func:`attn.functional.causal_mask` with ``align="bottom_right"``, without its checks.
    """
    return torch.ones(T, P + T, dtype=torch.bool, device=device).tril(P)  # (T, P + T)


def project(m, x, context=None):
    """Queries of ``x``, keys and values of ``context`` (default: ``x``), each split into heads.

    Returns ``q`` ``(B, h, T, d_head)`` and ``k``, ``v`` ``(B, h_kv, T_k, d_head)``, with
    ``h = m.num_heads`` and ``h_kv = m.num_kv_heads``.
    """
    kv = x if context is None else context  # self | cross
    q = split_heads(m.W_query(x), m.num_heads)  # (B, T, d_out) -> (B, h, T, d_head)
    k = split_heads(m.W_key(kv), m.num_kv_heads)  # (B, T_k, d_kv) -> (B, h_kv, T_k, d_head)
    v = split_heads(m.W_value(kv), m.num_kv_heads)  # (B, T_k, d_kv) -> (B, h_kv, T_k, d_head)
    return q, k, v


def attend_heads(m, q, k, v, mask=None, *, is_causal=False, return_weights=False):
    """All heads in one kernel call (dropout while training), the heads merged, then ``m.out_proj``.

    ``q`` ``(B, h, T, d_head)``, ``k``, ``v`` ``(B, h_kv, T_k, d_head)``; ``mask`` bool,
    broadcastable to ``(B, h, T, T_k)``. Returns ``z`` ``(B, T, d_out)``, or ``(z, weights)``.
    """
    p = m.dropout.p if m.training else 0.0
    out, att = _attention(  # F.scaled_dot_product_attention | return_weights: softmax(S + mask) V
        q, k, v, mask, is_causal=is_causal, dropout_p=p, return_weights=return_weights,
        enable_gqa=m.num_kv_heads != m.num_heads,  # q head i -> kv head i // (h / h_kv)
    )
    z = m.out_proj(merge_heads(out))  # (B, h, T, d_head) -> (B, T, h * d_head) -> (B, T, d_out)
    return (z, att) if return_weights else z


def attend(m, x, *, cache=None, positions=None, mask=None, context=None, return_weights=False):
    """The forward pass of attention layer ``m`` on checked inputs.

    ``m`` has ``W_query``, ``W_key``, ``W_value``, ``out_proj``, ``num_heads``,
    ``num_kv_heads``, ``causal``, ``rope`` (``None``: no rotation) and ``dropout``.

    Args:
        m (torch.nn.Module): the layer, whose weights are used.
        x (torch.Tensor): ``(B, T, d_in)`` or ``(T, d_in)``, the new tokens.
        cache (attn.KVCache, optional): self-attention: the earlier positions' keys and
            values, which the new ones are appended to. Cross-attention: the context's
            keys and values, computed and stored at the first call, read at the later ones.
        positions (torch.Tensor, optional): int64 ``(B, T)`` or ``(T,)``, the positions
            the rotation uses; default ``P .. P + T - 1``, ``P = len(cache)`` (or 0).
        mask (torch.Tensor, optional): bool, broadcastable to ``(B, h, T, P + T)``,
            ``True`` = may attend; replaces the causal mask (it includes causality).
        context (torch.Tensor, optional): ``(B, T_ctx, d_context)``: cross-attention,
            keys and values from ``context``, no causal mask.
        return_weights (bool): also return the weights (the explicit path).

    Returns:
        torch.Tensor or tuple: ``z`` ``(..., T, d_out)``, or ``(z, weights)`` with
        ``weights`` ``(..., h, T, P + T)``.
    """
    if context is not None:  # cross-attention: k, v <- context
        return _cross(m, x, context, cache, mask, return_weights)
    P, T = (0 if cache is None else len(cache)), x.size(-2)  # P = T_cached
    q, k, v = project(m, x)  # (B, h, T, d_head), (B, h_kv, T, d_head), (B, h_kv, T, d_head)
    if m.rope is not None:  # RoPE: p = P .. P + T - 1 | positions
        q, k = _rotate(m.rope, q, P, positions), _rotate(m.rope, k, P, positions)
    if cache is not None:
        k, v = cache.update(k, v)  # (B, h_kv, P + T, d_head) = cat(cached, new)
    if mask is None and m.causal and P and T > 1:  # P > 0, T > 1: rows P .. P + T - 1
        mask = bottom_right_mask(T, P, x.device)  # (T, P + T)
    is_causal = m.causal and mask is None and not P  # P = 0: is_causal=True; P > 0, T = 1: no mask
    return attend_heads(m, q, k, v, mask, is_causal=is_causal, return_weights=return_weights)


def _rotate(rope, x, P, positions):
    """``x`` ``(B, h, T, d_head)`` rotated at positions ``P .. P + T - 1``, or at ``positions``."""
    return rope._rotate(x, P) if positions is None else rope._rotate_at(x, positions)


def _cross(m, x, context, cache, mask, return_weights):
    """Cross-attention: with a cache, the context's keys and values are projected once."""
    if cache is not None and len(cache):  # k, v = cache.k, cache.v
        q, k, v = split_heads(m.W_query(x), m.num_heads), cache.k, cache.v  # (B, h, T, d_head), (B, h, T_ctx, d_head)
    else:
        q, k, v = project(m, x, context)  # (B, h, T, d_head), (B, h, T_ctx, d_head) x 2
        if cache is not None:
            k, v = cache.update(k, v)
    return attend_heads(m, q, k, v, mask, return_weights=return_weights)
