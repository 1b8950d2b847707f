r"""Scaled dot-product attention as plain functions, and the masks it uses.

.. math::

    \operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(
        \frac{Q K^\top}{\sqrt{d_k}} + M\right) V

where :math:`M` is 0 where a query may attend to a key and :math:`-\infty` where it
may not. Masks in this package are boolean with ``True`` = may attend.

Import as ``import attn.functional as AF``.
"""
import math

import torch
import torch.nn.functional as F

from . import _checks
from .bias import alibi_bias, alibi_slopes, sliding_window_mask

__all__ = [
    "scaled_dot_product_attention",
    "attention_weights",
    "causal_mask",
    "padding_mask",
    "simplified_self_attention",
    "sliding_window_mask",
    "alibi_slopes",
    "alibi_bias",
    "tiled_attention",
]


def causal_mask(T_q, T_k=None, *, device=None):
    """Boolean causal mask, ``True`` = may attend.

    Query ``i`` may attend to keys ``0 .. i`` (lower triangle, including the diagonal,
    aligned at the top-left corner as in ``torch.nn.functional.scaled_dot_product_attention``
    with ``is_causal=True``).

    Args:
        T_q (int): number of queries (rows).
        T_k (int, optional): number of keys (columns); defaults to ``T_q``.
        device (torch.device, optional): device of the returned tensor.

    Returns:
        torch.Tensor: bool tensor of shape ``(T_q, T_k)``.
    """
    T_q = _checks.positive_int("T_q", T_q)
    T_k = T_q if T_k is None else _checks.positive_int("T_k", T_k)
    return torch.ones(T_q, T_k, dtype=torch.bool, device=device).tril()


def padding_mask(lengths, max_len):
    """Boolean key-padding mask from sequence lengths, ``True`` = real token.

    Sequence ``b`` has ``lengths[b]`` real tokens followed by padding.

    Args:
        lengths (torch.Tensor or sequence of int): shape ``(B,)``, each in ``[0, max_len]``.
        max_len (int): padded length ``T``.

    Returns:
        torch.Tensor: bool tensor of shape ``(B, max_len)``; ``mask[b, t]`` is
        ``t < lengths[b]``.
    """
    max_len = _checks.positive_int("max_len", max_len)
    if not isinstance(lengths, torch.Tensor):
        if isinstance(lengths, (list, tuple)) and all(
            isinstance(n, int) and not isinstance(n, bool) for n in lengths
        ):
            lengths = torch.tensor(lengths, dtype=torch.long)
        else:
            raise TypeError(
                f"lengths must be a torch.Tensor or a list of int, got {type(lengths).__name__}"
            )
    if lengths.dtype.is_floating_point or lengths.dtype.is_complex or lengths.dtype == torch.bool:
        raise TypeError(f"lengths must hold integers, got dtype {lengths.dtype}")
    if lengths.dim() != 1:
        raise ValueError(f"lengths must have shape (B,), got shape {tuple(lengths.shape)}")
    if lengths.numel() and (lengths.min() < 0 or lengths.max() > max_len):
        raise ValueError(
            f"lengths must lie in [0, max_len={max_len}], got {lengths.tolist()}"
        )
    positions = torch.arange(max_len, device=lengths.device)  # (T,)
    return positions[None, :] < lengths[:, None]  # (1, T) < (B, 1) -> (B, T)


def _check_qkv(q, k, v):
    for name, t in (("q", q), ("k", k), ("v", v)):
        _checks.tensor(name, t, floating=True)
        if t.dim() < 2:
            raise ValueError(
                f"{name} must have at least 2 dimensions (..., T, d), got shape {tuple(t.shape)}"
            )
    if k.size(-1) != q.size(-1):
        raise ValueError(
            f"k must have last dimension d_k={q.size(-1)} like q, got k shape {tuple(k.shape)} "
            f"and q shape {tuple(q.shape)}"
        )
    if v.size(-2) != k.size(-2):
        raise ValueError(
            f"v must have T_k={k.size(-2)} rows like k, got v shape {tuple(v.shape)} "
            f"and k shape {tuple(k.shape)}"
        )


def _scale(scale, d_k):
    if scale is None:
        return 1.0 / math.sqrt(d_k)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise TypeError(f"scale must be a float or None, got {type(scale).__name__}")
    return float(scale)


def _full_mask(q, k, mask, is_causal):
    """Combine a user mask and ``is_causal`` into one bool mask, or None."""
    T_q, T_k = q.size(-2), k.size(-2)
    batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    if mask is not None:
        _checks.bool_mask("mask", mask, (*batch, T_q, T_k))
    if is_causal:
        causal = causal_mask(T_q, T_k, device=q.device)  # (T_q, T_k)
        mask = causal if mask is None else mask & causal
    return mask


def attention_weights(q, k, mask=None, *, is_causal=False, scale=None):
    r"""Attention weights :math:`\operatorname{softmax}(q k^\top \cdot s)` (explicit path).

    Scores :math:`q k^\top s` with :math:`s = 1/\sqrt{d_k}` by default, ``-inf`` where the
    mask is False, softmax over the key axis. A query row whose keys are all masked gets
    weights of zero (not NaN).

    Args:
        q (torch.Tensor): queries ``(..., T_q, d_k)``.
        k (torch.Tensor): keys ``(..., T_k, d_k)``.
        mask (torch.Tensor, optional): bool, broadcastable to ``(..., T_q, T_k)``,
            ``True`` = may attend.
        is_causal (bool): also forbid keys after the query (see :func:`causal_mask`).
        scale (float, optional): factor :math:`s`; defaults to ``1 / sqrt(d_k)``.

    Returns:
        torch.Tensor: weights ``(..., T_q, T_k)``; each row sums to 1 (or is all zeros).
    """
    _check_qkv(q, k, k)
    _checks.flag("is_causal", is_causal)
    mask = _full_mask(q, k, mask, is_causal)
    return _weights(q, k, mask, _scale(scale, q.size(-1)))


def _weights(q, k, mask, scale):
    att = (q @ k.transpose(-2, -1)) * scale  # (..., T_q, d_k) @ (..., d_k, T_k) -> (..., T_q, T_k)
    if mask is None:
        return torch.softmax(att, dim=-1)
    # A row with no allowed key would be softmax(-inf, ..., -inf) = NaN: let such rows see
    # every key, then zero their weights, so values and gradients stay finite.
    has_key = mask.any(dim=-1, keepdim=True)  # (..., T_q, T_k) -> (..., T_q, 1)
    empty_rows = not bool(has_key.all())
    if empty_rows:
        mask = mask | ~has_key
    att = att.masked_fill(~mask, float("-inf"))
    att = torch.softmax(att, dim=-1)
    if empty_rows:
        att = att * has_key
    return att


def scaled_dot_product_attention(
    q, k, v, mask=None, *, is_causal=False, dropout_p=0.0, scale=None, return_weights=False
):
    r"""Scaled dot-product attention :math:`\operatorname{softmax}(q k^\top s + M)\, v`.

    With :math:`s = 1/\sqrt{d_k}` by default and :math:`M = -\infty` where the query may
    not attend to the key. Two paths give the same result (tested):

    * fast path, when ``return_weights=False``: one call to
      :func:`torch.nn.functional.scaled_dot_product_attention` (``is_causal`` without a
      mask is passed on as ``is_causal=True``, no mask is built);
    * explicit path, when ``return_weights=True``: scores, mask, softmax, dropout on the
      weights, weighted sum of the values, as written above.

    A query row whose keys are all masked gives an output row of zeros and weights of
    zeros, never NaN.

    Args:
        q (torch.Tensor): queries ``(..., T_q, d_k)``.
        k (torch.Tensor): keys ``(..., T_k, d_k)``.
        v (torch.Tensor): values ``(..., T_k, d_v)``.
        mask (torch.Tensor, optional): bool, broadcastable to ``(..., T_q, T_k)``,
            ``True`` = may attend.
        is_causal (bool): forbid each query ``i`` to attend to keys after ``i``; combined
            with ``mask`` (logical and) when both are given.
        dropout_p (float): dropout probability on the weights, in ``[0, 1)``. Applied
            whenever it is positive: pass ``0.0`` at evaluation time.
        scale (float, optional): factor :math:`s`; defaults to ``1 / sqrt(d_k)``.
        return_weights (bool): also return the weights actually applied to ``v``
            (after dropout); selects the explicit path.

    Returns:
        torch.Tensor or tuple: ``out`` of shape ``(..., T_q, d_v)``, or
        ``(out, weights)`` with ``weights`` of shape ``(..., T_q, T_k)``.
    """
    _check_qkv(q, k, v)
    _checks.flag("is_causal", is_causal)
    _checks.flag("return_weights", return_weights)
    dropout_p = _checks.probability("dropout_p", dropout_p)
    s = _scale(scale, q.size(-1))
    if not return_weights:
        if mask is None:
            return F.scaled_dot_product_attention(
                q, k, v, dropout_p=dropout_p, is_causal=is_causal, scale=s
            )
        mask = _full_mask(q, k, mask, is_causal)
        has_key = mask.any(dim=-1, keepdim=True)  # (..., T_q, T_k) -> (..., T_q, 1)
        if bool(has_key.all()):
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p, scale=s)
        # rows with no allowed key: attend everywhere, then zero those rows (finite gradients)
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask | ~has_key, dropout_p=dropout_p, scale=s
        )
        return out * has_key
    mask = _full_mask(q, k, mask, is_causal)
    att = _weights(q, k, mask, s)  # (..., T_q, T_k)
    if dropout_p > 0.0:
        att = F.dropout(att, p=dropout_p)
    out = att @ v  # (..., T_q, T_k) @ (..., T_k, d_v) -> (..., T_q, d_v)
    return out, att


def simplified_self_attention(x, return_weights=False):
    r"""Self-attention without trainable weights (the first, unscaled mechanism).

    .. math::

        \omega = x x^\top, \qquad \alpha = \operatorname{softmax}(\omega), \qquad
        z = \alpha x

    The scores are not scaled by :math:`1/\sqrt{d}`, as in the course notes' first step.

    Args:
        x (torch.Tensor): embeddings ``(T, d)`` or ``(B, T, d)``.
        return_weights (bool): also return the attention weights.

    Returns:
        torch.Tensor or tuple: context vectors ``z`` with the shape of ``x``, or
        ``(z, weights)`` with ``weights`` of shape ``(T, T)`` or ``(B, T, T)``.
    """
    _checks.tensor("x", x, floating=True)
    _checks.flag("return_weights", return_weights)
    if x.dim() not in (2, 3):
        raise ValueError(
            f"x must have shape (T, d) or (B, T, d), got {x.dim()} dimensions "
            f"with shape {tuple(x.shape)}"
        )
    scores = x @ x.transpose(-2, -1)  # (..., T, d) @ (..., d, T) -> (..., T, T)
    weights = torch.softmax(scores, dim=-1)
    z = weights @ x  # (..., T, T) @ (..., T, d) -> (..., T, d)
    return (z, weights) if return_weights else z


# Attention in tiles lives in its own module, which uses the checks above.
from .tiled import tiled_attention  # noqa: E402
