r"""Scaled dot-product attention as plain functions, and the masks it uses.

.. math::

    \operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(
        \frac{Q K^\top}{\sqrt{d_k}} + M\right) V

where :math:`M` is 0 where a query may attend to a key and :math:`-\infty` where it
may not. Masks in this package are boolean with ``True`` = may attend; the attention
functions also take a float mask, added to the scores as it is (a bias such as
:func:`alibi_bias`, ``-inf`` where a query may not attend).

Import as ``import attn.functional as AF``.
"""
import math

import torch
import torch.nn.functional as F

from . import _checks
from .ops.bias import alibi_bias, alibi_slopes, sink_window_mask, sliding_window_mask
from .ops.tiled import merge_partial_attention, tiled_attention

__all__ = [
    "scaled_dot_product_attention",
    "attention_weights",
    "masked_softmax",
    "split_heads",
    "merge_heads",
    "causal_mask",
    "padding_mask",
    "tree_mask",
    "simplified_self_attention",
    "sliding_window_mask",
    "sink_window_mask",
    "alibi_slopes",
    "alibi_bias",
    "tiled_attention",
    "merge_partial_attention",
    "previous_token_score",
    "induction_score",
]


def causal_mask(T_q, T_k=None, *, align="top_left", device=None):
    """Boolean causal mask, ``True`` = may attend.

    A lower triangle, the diagonal included, aligned at one corner of the
    ``(T_q, T_k)`` matrix:

    * ``align="top_left"`` (the default): query ``i`` may attend to keys ``0 .. i``, as
      ``torch.nn.functional.scaled_dot_product_attention`` with ``is_causal=True``;
    * ``align="bottom_right"``: the queries are the *last* ``T_q`` positions, query ``i``
      may attend to keys ``0 .. i + T_k - T_q``, as
      ``torch.nn.attention.bias.causal_lower_right``: the mask of ``T_q`` new tokens that
      follow ``T_k - T_q`` cached ones (a chunk of a prompt, a decoding step).

    With ``T_q = T_k`` the two are the same. With ``T_q > T_k`` and ``"bottom_right"``, the
    first ``T_q - T_k`` rows have no key.

    Args:
        T_q (int): number of queries (rows).
        T_k (int, optional): number of keys (columns); defaults to ``T_q``.
        align (str): ``"top_left"`` or ``"bottom_right"``, the corner the triangle
            starts from.
        device (torch.device, optional): device of the returned tensor.

    Returns:
        torch.Tensor: bool tensor of shape ``(T_q, T_k)``.
    """
    T_q = _checks.positive_int("T_q", T_q)
    T_k = T_q if T_k is None else _checks.positive_int("T_k", T_k)
    if align not in ("top_left", "bottom_right"):
        raise ValueError(f'align must be "top_left" or "bottom_right", got {align!r}')
    shift = 0 if align == "top_left" else T_k - T_q  # query i sees keys j <= i + shift
    return torch.ones(T_q, T_k, dtype=torch.bool, device=device).tril(shift)  # (T_q, T_k)


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


def _check_split(x, num_heads):
    """The checks of :func:`split_heads`."""
    _checks.tensor("x", x)
    _checks.positive_int("num_heads", num_heads)
    if x.dim() < 2:
        raise ValueError(f"x must have shape (..., T, d_out), got shape {tuple(x.shape)}")
    _checks.divisible("d_out", x.size(-1), "num_heads", num_heads)


@_checks.door(_check_split)
def split_heads(x, num_heads):
    """Split the last axis into heads and move the heads before the sequence axis.

    ``(B, T, h * d_head) -> (B, T, h, d_head) -> (B, h, T, d_head)``; any leading axes
    are kept, so ``(T, h * d_head)`` gives ``(h, T, d_head)``. Column block ``i`` of the
    last axis, ``i * d_head : (i + 1) * d_head``, becomes head ``i``. The inverse is
    :func:`merge_heads`. Every attention layer of the package splits its heads with it
    (:func:`attn.layers.core.attend`).

    Args:
        x (torch.Tensor): ``(..., T, d_out)`` with ``d_out`` divisible by ``num_heads``.
        num_heads (int): number of heads :math:`h`.

    Returns:
        torch.Tensor: ``(..., h, T, d_out // h)`` (a view of ``x``).
    """
    x = x.unflatten(-1, (num_heads, -1))  # (..., T, d_out) -> (..., T, h, d_head)
    return x.transpose(-3, -2)  # (..., T, h, d_head) -> (..., h, T, d_head)


def _check_merge(x):
    """The checks of :func:`merge_heads`."""
    _checks.tensor("x", x)
    if x.dim() < 3:
        raise ValueError(f"x must have shape (..., h, T, d_head), got shape {tuple(x.shape)}")


@_checks.door(_check_merge)
def merge_heads(x):
    """Join the heads back into one axis, the inverse of :func:`split_heads`.

    ``(B, h, T, d_head) -> (B, T, h, d_head) -> (B, T, h * d_head)``: the heads' outputs
    are concatenated along the last axis, head ``i`` in columns
    ``i * d_head : (i + 1) * d_head``.

    Args:
        x (torch.Tensor): ``(..., h, T, d_head)``.

    Returns:
        torch.Tensor: ``(..., T, h * d_head)``.
    """
    x = x.transpose(-3, -2)  # (..., h, T, d_head) -> (..., T, h, d_head)
    return x.flatten(-2)  # (..., T, h, d_head) -> (..., T, h * d_head)


def _open_empty_rows(mask, dim):
    """The rule for a query row with no allowed key, in one place.

    ``softmax(-inf, ..., -inf)`` is NaN; instead such a row may see every key, and the
    caller multiplies its result by ``keep`` (False on those rows) so that the row becomes
    zeros with finite gradients. Returns ``(mask, keep)``. It never asks whether some row
    is empty (that question would wait for the result on the host, a sync on a GPU): it
    opens and multiplies every row, which changes nothing on the rows that have a key.
    """
    keep = mask.any(dim=dim, keepdim=True)  # (..., T_q, T_k) -> (..., T_q, 1)
    return mask | ~keep, keep


def masked_softmax(scores, mask=None, *, dim=-1):
    """Softmax over the keys with a boolean mask, ``True`` = may attend.

    Scores where the mask is False become ``-inf`` before the softmax, so they get a
    weight of zero. A query whose keys are all masked gets weights of zero (not NaN).

    Args:
        scores (torch.Tensor): attention scores, keys along ``dim``, e.g. ``(..., T_q, T_k)``.
        mask (torch.Tensor, optional): bool, broadcastable to ``scores.shape``.
        dim (int): the key axis; ``-1`` in the batch-first layout, ``1`` in the
            sequence-first ``[seq_q, seq_k, batch, heads]`` layout.

    Returns:
        torch.Tensor: weights with the shape of ``scores``; each row sums to 1 (or is
        all zeros).
    """
    _checks.tensor("scores", scores, floating=True)
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"dim must be an int, got {type(dim).__name__}")
    n = max(scores.dim(), 1)
    if not -n <= dim < n:
        raise ValueError(f"dim must be an axis of scores, in [-{n}, {n}), got {dim}")
    if mask is not None:
        _checks.bool_mask("mask", mask, scores.shape)
    return _masked_softmax(scores, mask, dim)


def _masked_softmax(scores, mask, dim=-1):
    """:func:`masked_softmax` without its checks (the package's modules call this one)."""
    if mask is None:
        return torch.softmax(scores, dim=dim)
    mask, keep = _open_empty_rows(mask, dim)
    att = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=dim)
    return att * keep  # rows without any allowed key -> zeros


def _split_mask(mask, dtype):
    """A float mask is a bias plus a bool mask: returns ``(mask, bias)``, either may be None.

    A bool mask is returned as it is. A float mask is cast to ``dtype``; its ``-inf``
    entries become ``False`` in the bool mask (and 0 in the bias), so that they follow
    the rule of :func:`_open_empty_rows`.
    """
    if mask is None or mask.dtype == torch.bool:
        return mask, None
    bias = mask.to(dtype)
    allowed = bias != float("-inf")  # (..., T_q, T_k)
    return allowed, bias.masked_fill(~allowed, 0.0)


def _full_mask(q, k, mask, is_causal):
    """Combine a user mask and ``is_causal`` into one bool mask, or None."""
    if is_causal:
        causal = torch.ones(q.size(-2), k.size(-2), dtype=torch.bool, device=q.device).tril()  # (T_q, T_k)
        mask = causal if mask is None else mask & causal
    return mask


def _repeat_kv(x, group_size):
    """``(..., h_kv, T, d) -> (..., h_kv * group_size, T, d)``: head ``i`` reads head ``i // group_size``.

    As Hugging Face's ``repeat_kv``: a broadcast view, then one copy. Only the explicit
    path needs it; the fused path passes ``enable_gqa=True`` and copies nothing.
    """
    if group_size == 1:
        return x
    x = x.unsqueeze(-3).expand(*x.shape[:-2], group_size, *x.shape[-2:])  # (..., h_kv, g, T, d), a view
    return x.flatten(-4, -3)  # (..., h_kv, g, T, d) -> (..., h_kv * g, T, d)


def attention_weights(q, k, mask=None, *, is_causal=False, scale=None):
    r"""Attention weights :math:`\operatorname{softmax}(q k^\top \cdot s + M)` (explicit path).

    Scores :math:`q k^\top s` with :math:`s = 1/\sqrt{d_k}` by default, plus the mask when
    it is a float tensor, ``-inf`` where a bool mask is False, softmax over the key axis
    (:func:`masked_softmax`). A query row whose keys are all masked gets weights of zero
    (not NaN).

    Args:
        q (torch.Tensor): queries ``(..., T_q, d_k)``.
        k (torch.Tensor): keys ``(..., T_k, d_k)``.
        mask (torch.Tensor, optional): broadcastable to ``(..., T_q, T_k)``; bool,
            ``True`` = may attend, or float, added to the scores (``-inf`` = may not
            attend), e.g. :func:`alibi_bias`.
        is_causal (bool): also forbid keys after the query (see :func:`causal_mask`).
        scale (float, optional): factor :math:`s`; defaults to ``1 / sqrt(d_k)``.

    Returns:
        torch.Tensor: weights ``(..., T_q, T_k)``; each row sums to 1 (or is all zeros).
    """
    scale, _ = _checks.attention(q, k, k, mask, is_causal=is_causal, scale=scale)
    return _weights(q, k, mask, is_causal, scale)


def _weights(q, k, mask=None, is_causal=False, scale=None):
    """:func:`attention_weights` without its checks."""
    if scale is None:
        scale = 1.0 / math.sqrt(q.size(-1))  # s = 1 / sqrt(d_k), d_k = q.size(-1)
    mask, bias = _split_mask(mask, q.dtype)
    att = (q @ k.transpose(-2, -1)) * scale  # (..., T_q, d_k) @ (..., d_k, T_k) -> (..., T_q, T_k)
    if bias is not None:
        att = att + bias  # (..., T_q, T_k) + M, M float
    return _masked_softmax(att, _full_mask(q, k, mask, is_causal))


def scaled_dot_product_attention(
    q, k, v, mask=None, *, is_causal=False, dropout_p=0.0, scale=None, return_weights=False
):
    r"""Scaled dot-product attention :math:`\operatorname{softmax}(q k^\top s + M)\, v`.

    With :math:`s = 1/\sqrt{d_k}` by default and :math:`M = -\infty` where the query may
    not attend to the key (or a float mask, added as it is). ``q`` and ``k`` may have
    different lengths ``T_q`` and ``T_k``. Two paths give the same result (tested), chosen
    here and nowhere else:

    * fast path, when ``return_weights=False``: one call to
      :func:`torch.nn.functional.scaled_dot_product_attention` (``is_causal`` without a
      mask is passed on as ``is_causal=True``, no mask is built);
    * explicit path, when ``return_weights=True``: :func:`attention_weights` (scores,
      mask, softmax), dropout on the weights, weighted sum of the values.

    A query row whose keys are all masked gives an output row of zeros and weights of
    zeros, never NaN.

    Args:
        q (torch.Tensor): queries ``(..., T_q, d_k)``.
        k (torch.Tensor): keys ``(..., T_k, d_k)``.
        v (torch.Tensor): values ``(..., T_k, d_v)``.
        mask (torch.Tensor, optional): broadcastable to ``(..., T_q, T_k)``; bool,
            ``True`` = may attend, or float, added to the scores (``-inf`` = may not
            attend) like ``attn_mask`` in PyTorch, e.g. :func:`alibi_bias`.
        is_causal (bool): forbid each query ``i`` to attend to keys after ``i`` (the
            top-left aligned lower triangle of :func:`causal_mask`, as in PyTorch);
            combined with ``mask`` (logical and) when both are given.
        dropout_p (float): dropout probability on the weights, in ``[0, 1)``. Applied
            whenever it is positive: pass ``0.0`` at evaluation time.
        scale (float, optional): factor :math:`s`; defaults to ``1 / sqrt(d_k)``.
        return_weights (bool): also return the weights actually applied to ``v``
            (after dropout); selects the explicit path.

    Returns:
        torch.Tensor or tuple: ``out`` of shape ``(..., T_q, d_v)``, or
        ``(out, weights)`` with ``weights`` of shape ``(..., T_q, T_k)``.
    """
    scale, dropout_p = _checks.attention(
        q, k, v, mask, is_causal=is_causal, scale=scale, dropout_p=dropout_p,
        return_weights=return_weights,
    )
    out, att = _attention(q, k, v, mask, is_causal, dropout_p, scale, return_weights)
    return (out, att) if return_weights else out


def _attention(q, k, v, mask=None, is_causal=False, dropout_p=0.0, scale=None, return_weights=False,
               enable_gqa=False):
    """:func:`scaled_dot_product_attention` without its checks: the kernel the modules call.

    Returns ``(out, weights)``, ``weights`` None on the fast path. With ``enable_gqa``,
    ``k`` and ``v`` may have fewer heads (axis -3) than ``q``, a divisor of them: query
    head ``i`` reads key-value head ``i // (h / h_kv)``, as in PyTorch.
    """
    if not return_weights:  # fast path: PyTorch's fused kernel, no weights kept
        if mask is None:
            out = F.scaled_dot_product_attention(
                q, k, v, dropout_p=dropout_p, is_causal=is_causal, scale=scale, enable_gqa=enable_gqa
            )
            return out, None
        mask, bias = _split_mask(mask, q.dtype)
        mask, keep = _open_empty_rows(_full_mask(q, k, mask, is_causal), dim=-1)
        if bias is not None:  # float attn_mask: the bias where allowed, -inf elsewhere
            mask = torch.where(mask, bias, float("-inf"))
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, dropout_p=dropout_p, scale=scale, enable_gqa=enable_gqa
        )
        return out * keep, None  # rows without any allowed key -> zeros
    if enable_gqa:  # (B, h_kv, T_k, d) -> (B, h, T_k, d)
        k, v = _repeat_kv(k, q.size(-3) // k.size(-3)), _repeat_kv(v, q.size(-3) // v.size(-3))
    att = _weights(q, k, mask, is_causal, scale)  # (..., T_q, T_k)
    if dropout_p > 0.0:
        att = F.dropout(att, p=dropout_p)
    return att @ v, att  # (..., T_q, T_k) @ (..., T_k, d_v) -> (..., T_q, d_v)


def simplified_self_attention(x, *, return_weights=False):
    r"""Self-attention without trainable weights (the first, unscaled mechanism).

    .. math::

        \omega = x x^\top, \qquad \alpha = \operatorname{softmax}(\omega), \qquad
        z = \alpha x

    The scores are not scaled by :math:`1/\sqrt{d}`: this is the first, simplest form of
    the mechanism in Raschka, *Build a Large Language Model (From Scratch)*, Manning 2024,
    section 3.3; the scale arrives with the trainable weights.

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


def _square_weights(weights):
    """Check attention weights of shape ``(..., T, T)``, floating point."""
    _checks.tensor("weights", weights, floating=True)
    if weights.dim() < 2 or weights.size(-1) != weights.size(-2):
        raise ValueError(f"weights must have shape (..., T, T), got shape {tuple(weights.shape)}")
    return weights


def previous_token_score(weights):
    r"""Mean weight a query puts on the position just before it.

    .. math::

        s_{-1}(w) = \frac{1}{T - 1} \sum_{i=1}^{T-1} w_{i,\, i-1}

    1 for a head that always looks one token back (a *previous-token head*), :math:`1/T`
    for uniform weights over all ``T`` keys.

    Args:
        weights (torch.Tensor): attention weights ``(..., T, T)``, ``T >= 2``, e.g. a
            model's ``(layers, B, heads, T, T)``.

    Returns:
        torch.Tensor: ``(...)``, one score per matrix.
    """
    _square_weights(weights)
    if weights.size(-1) < 2:
        raise ValueError(f"weights must have T >= 2 positions, got shape {tuple(weights.shape)}")
    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)  # (..., T, T) -> (..., T-1) -> (...)


def induction_score(weights, period):
    r"""Mean weight a query puts on the token after the previous occurrence of its own token.

    For a sequence that repeats with period :math:`p` (:math:`x_i = x_{i-p}`), the token
    at position :math:`i` last occurred at :math:`i - p`, and the token that followed it
    sits at :math:`i - p + 1`:

    .. math::

        s_p(w) = \frac{1}{T - p} \sum_{i=p}^{T-1} w_{i,\, i-p+1}

    1 for a head that always attends there (an *induction head*).

    Args:
        weights (torch.Tensor): attention weights ``(..., T, T)``.
        period (int): the period :math:`p`, ``1 <= period < T``.

    Returns:
        torch.Tensor: ``(...)``, one score per matrix.
    """
    _square_weights(weights)
    period = _checks.positive_int("period", period)
    T = weights.size(-1)
    if period >= T:
        raise ValueError(f"period must be smaller than T={T} (the weights' last axis), got {period}")
    diag = weights.diagonal(offset=1 - period, dim1=-2, dim2=-1)  # w[i, i-p+1], i = p-1 .. T-1
    return diag[..., 1:].mean(-1)  # keep i = p .. T-1: (..., T-p+1) -> (..., T-p) -> (...)


def tree_mask(parents, num_cached=0):
    """Boolean mask of a token tree that follows a cached prefix, ``True`` = may attend.

    Speculative decoding verifies a tree of guessed tokens in one pass (Miao et al.,
    2024): node ``i`` continues node ``parents[i]``, or the cached prefix directly when
    ``parents[i] = -1``. Node ``i`` sees the ``num_cached`` positions of the prefix,
    itself and its ancestors, never a sibling or a cousin, so it reads exactly the
    sequence that ends at it. A chain ``parents = [-1, 0, 1, ...]`` gives the causal
    mask aligned bottom-right. Each node's position is ``num_cached`` plus its depth.

    Args:
        parents (torch.Tensor): int64 ``(N,)``, ``parents[i] < i``, or ``-1``.
        num_cached (int): positions already in the cache, ``P``.

    Returns:
        torch.Tensor: bool tensor of shape ``(N, P + N)``; the first ``P`` columns are
        the cached prefix, column ``P + j`` is node ``j``.

    Raises:
        TypeError: when ``parents`` is not an int64 tensor or ``num_cached`` is not an ``int``.
        ValueError: when ``parents`` is not ``(N,)`` with ``N >= 1``, or a parent is
            not an earlier node or ``-1``.
    """
    _checks.tensor("parents", parents)
    if parents.dtype != torch.long:
        raise TypeError(f"parents must be an int64 tensor, got dtype {parents.dtype}")
    if parents.dim() != 1 or parents.numel() == 0:
        raise ValueError(f"parents must have shape (N,) with N >= 1, got shape {tuple(parents.shape)}")
    P = _checks.non_negative_int("num_cached", num_cached)
    N = parents.numel()
    node = torch.arange(N, device=parents.device)  # (N,)
    bad = (parents >= node) | (parents < -1)  # (N,)
    if bad.any():
        i = int(bad.nonzero()[0])
        raise ValueError(f"parents[i] must be -1 or an earlier node (< i), got parents[{i}] = {int(parents[i])}")
    seen = torch.eye(N, dtype=torch.bool, device=parents.device)  # (N, N): itself
    for i, p in enumerate(parents.tolist()):
        if p >= 0:  # seen[i] = {i} | seen[p]
            seen[i] |= seen[p]
    prefix = torch.ones(N, P, dtype=torch.bool, device=parents.device)  # (N, P)
    return torch.cat([prefix, seen], dim=1)  # (N, P + N)
