r"""Attention computed in tiles of keys with the online softmax.

The explicit path builds every score of a query row before its softmax: a
``(T_q, T_k)`` matrix per head. The online softmax (Milakov and Gimelshein, 2018)
reads the keys one block at a time and keeps, for each query row, three running
quantities: the largest score seen so far :math:`m`, the sum of exponentials
:math:`\ell = \sum_j e^{s_j - m}` and the unnormalised output
:math:`a = \sum_j e^{s_j - m} v_j`. When a block raises the maximum from :math:`m` to
:math:`m'`, the old sums are multiplied by :math:`e^{m - m'}`, which puts them on the
new reference; at the end :math:`a / \ell` is exactly
:math:`\operatorname{softmax}(s)\, V`. Only a ``(T_q, block_size)`` tile of scores
exists at any time, so memory grows linearly in the sequence length.

FlashAttention (Dao et al., 2022) is the same computation written as one GPU kernel
whose tiles stay in on-chip memory; this module is the plain PyTorch version, for
reading and for checking.

It is exposed as :func:`attn.functional.tiled_attention`.
"""
import math

import torch

from .. import _checks

__all__ = ["tiled_attention", "merge_partial_attention"]


def tiled_attention(q, k, v, *, block_size=128, is_causal=False, scale=None, return_lse=False):
    r"""Attention :math:`\operatorname{softmax}(q k^\top s)\, v`, one block of keys at a time.

    Same result as :func:`torch.nn.functional.scaled_dot_product_attention` (tested),
    computed with the online softmax: the scores of at most ``block_size`` keys exist
    at once, never the whole ``(T_q, T_k)`` matrix.

    Args:
        q (torch.Tensor): queries ``(..., T_q, d_k)``.
        k (torch.Tensor): keys ``(..., T_k, d_k)``.
        v (torch.Tensor): values ``(..., T_k, d_v)``.
        block_size (int): number of keys per block; the last block may be shorter.
        is_causal (bool): query ``i`` attends to keys ``0 .. i`` only (top-left
            aligned, as in PyTorch).
        scale (float, optional): factor :math:`s`; defaults to ``1 / sqrt(d_k)``.
        return_lse (bool): also return the log-sum-exp of each query's scaled scores,
            :math:`\log \sum_j e^{s_j} = m + \log \ell`, which
            :func:`merge_partial_attention` needs to merge attention over parts of the keys.

    Returns:
        torch.Tensor or tuple: ``out`` of shape ``(..., T_q, d_v)``, or ``(out, lse)``
        with ``lse`` of shape ``(..., T_q)``.
    """
    block_size, scale = _check_tiled(q, k, v, block_size, is_causal, scale)
    _checks.flag("return_lse", return_lse)
    s = 1.0 / math.sqrt(q.size(-1)) if scale is None else scale  # scale=None: s = 1 / sqrt(d_k)
    T_q, T_k = q.size(-2), k.size(-2)
    m = q.new_full((*q.shape[:-1], 1), float("-inf"))  # (..., T_q, 1): m = max_j s_j
    l = q.new_zeros((*q.shape[:-1], 1))  # (..., T_q, 1): l = sum_j exp(s_j - m)
    acc = q.new_zeros((*q.shape[:-1], v.size(-1)))  # (..., T_q, d_v): a = sum_j exp(s_j - m) v_j
    rows = torch.arange(T_q, device=q.device)[:, None]  # (T_q, 1): i
    for start in range(0, T_k, block_size):
        if is_causal and start >= T_q:
            break  # start >= T_q: j > i, ∀ i, j
        kb = k[..., start : start + block_size, :]  # (..., b, d_k), b <= block_size
        vb = v[..., start : start + block_size, :]  # (..., b, d_v)
        att = (q @ kb.transpose(-2, -1)) * s  # (..., T_q, d_k) @ (..., d_k, b) -> (..., T_q, b)
        if is_causal:
            cols = torch.arange(start, start + kb.size(-2), device=q.device)  # (b,): j
            att = att.masked_fill(cols > rows, float("-inf"))  # (T_q, b) mask, broadcast
        m_new = torch.maximum(m, att.amax(dim=-1, keepdim=True))  # (..., T_q, 1)
        p = torch.exp(att - m_new)  # (..., T_q, b), 0 <= p <= 1
        fix = torch.exp(m - m_new)  # (..., T_q, 1): e^(m - m'), m' = m_new
        l = l * fix + p.sum(dim=-1, keepdim=True)  # (..., T_q, 1)
        acc = acc * fix + p @ vb  # (..., T_q, b) @ (..., b, d_v) -> (..., T_q, d_v)
        m = m_new
    if return_lse:
        return acc / l, (m + torch.log(l)).squeeze(-1)  # (..., T_q, d_v), (..., T_q): log sum_j e^(s_j)
    return acc / l  # (..., T_q, d_v)


def _check_tiled(q, k, v, block_size, is_causal, scale):
    """Input checks of :func:`tiled_attention`; returns ``(block_size, scale)``."""
    scale, _ = _checks.attention(q, k, v, is_causal=is_causal, scale=scale)
    block_size = _checks.positive_int("block_size", block_size)
    if q.size(-2) == 0 or k.size(-2) == 0:
        raise ValueError(
            f"q and k must hold at least one position each, got q shape {tuple(q.shape)} "
            f"and k shape {tuple(k.shape)}"
        )
    try:
        torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(
            f"q, k and v must have broadcastable batch dimensions (...), got shapes "
            f"{tuple(q.shape)}, {tuple(k.shape)} and {tuple(v.shape)}"
        ) from None
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(f"q, k and v must have the same dtype, got {q.dtype}, {k.dtype} and {v.dtype}")
    return block_size, scale


def merge_partial_attention(outputs, lses):
    r"""Merge attention computed over disjoint parts of the keys into attention over all of them.

    Part :math:`p` of the keys gives each query an output :math:`o_p` (its softmax-weighted
    average of the part's values) and the log-sum-exp of its scaled scores,
    :math:`\lambda_p = \log \sum_{j \in p} e^{s_j}` (:func:`tiled_attention` with
    ``return_lse=True``). Over all the keys,

    .. math::

        \lambda = \log \sum_p e^{\lambda_p}, \qquad
        o = \sum_p e^{\lambda_p - \lambda}\, o_p ,

    since :math:`e^{\lambda_p - \lambda}` is the share of the softmax's total weight that
    falls on part :math:`p`. This is the online softmax's update with a whole part as the
    block, and the last step of Flash-Decoding (Dao et al., 2023), which splits a long
    cache between processors. It is exact up to float rounding. A part where a query sees
    no key has :math:`\lambda_p = -\infty` and weighs nothing; a query that sees no key in
    any part gets an output of zeros and :math:`\lambda = -\infty`.

    Args:
        outputs (sequence of torch.Tensor): one output per part, each ``(..., T_q, d_v)``,
            all of one shape and dtype.
        lses (sequence of torch.Tensor): the matching log-sum-exps, each ``(..., T_q)``.

    Returns:
        tuple: ``(output, lse)``, ``(..., T_q, d_v)`` and ``(..., T_q)``.
    """
    _check_merge(outputs, lses)
    lse_p = torch.stack(list(lses))  # (n_parts, ..., T_q)
    lse = torch.logsumexp(lse_p, dim=0)  # (..., T_q): log sum_p e^(lambda_p)
    share = torch.exp(lse_p - lse)[..., None]  # (n_parts, ..., T_q, 1): e^(lambda_p - lambda)
    parts = torch.stack(list(outputs))  # (n_parts, ..., T_q, d_v)
    parts = torch.where(lse_p[..., None] > float("-inf"), share * parts, 0.0)  # lambda_p = -inf: 0
    return parts.sum(dim=0), lse  # (..., T_q, d_v), (..., T_q)


def _check_merge(outputs, lses):
    """Input checks of :func:`merge_partial_attention`."""
    for name, parts in (("outputs", outputs), ("lses", lses)):
        if not isinstance(parts, (list, tuple)) or not parts:
            raise TypeError(f"{name} must be a non-empty list or tuple of tensors, got {parts!r:.80}")
        for i, t in enumerate(parts):
            _checks.tensor(f"{name}[{i}]", t, floating=True)
    if len(outputs) != len(lses):
        raise ValueError(f"outputs and lses must have one entry per part, got {len(outputs)} and {len(lses)}")
    o0 = outputs[0]
    if o0.dim() < 2:
        raise ValueError(f"outputs[0] must have shape (..., T_q, d_v), got shape {tuple(o0.shape)}")
    for i, (o, lse) in enumerate(zip(outputs, lses)):
        if o.shape != o0.shape or o.dtype != o0.dtype:
            raise ValueError(
                f"outputs[{i}] must have the shape and dtype of outputs[0], {tuple(o0.shape)} "
                f"{o0.dtype}, got {tuple(o.shape)} {o.dtype}"
            )
        if lse.shape != o0.shape[:-1] or lse.dtype != o0.dtype:
            raise ValueError(
                f"lses[{i}] must have shape (..., T_q) = {tuple(o0.shape[:-1])} and dtype "
                f"{o0.dtype}, got {tuple(lse.shape)} {lse.dtype}"
            )
