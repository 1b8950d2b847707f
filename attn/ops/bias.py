r"""Positions as masks and biases on the scores: sliding windows and ALiBi.

Two ways of today's models to tell attention where a key stands, without adding
anything to the embeddings:

* a **sliding window** (Longformer, Mistral): query ``i`` sees only the ``window`` most
  recent keys ``i - window + 1 .. i``; a boolean mask, ``True`` = may attend;
* **ALiBi** (Press et al., 2022): a fixed penalty, linear in the distance, added to the
  scores of head ``h``, :math:`-m_h\,(i - j)`; a float tensor added before the softmax.

Both count positions from the first key, for queries and keys alike (query ``i`` and key
``i`` are the same token), the convention of :func:`attn.functional.causal_mask` and of
``torch.nn.functional.scaled_dot_product_attention(..., is_causal=True)``. When ``T_q``
new queries follow ``n`` cached keys, build the full ``(n + T_q, n + T_q)`` tensor and keep
its last ``T_q`` rows: ``sliding_window_mask(n + T_q, window)[n:]``.

Import them from :mod:`attn.functional`.
"""
import math

import torch

from .. import _checks

__all__ = ["sliding_window_mask", "sink_window_mask", "alibi_slopes", "alibi_bias"]


def sliding_window_mask(T_q, window, T_k=None, *, device=None):
    """Boolean sliding-window causal mask, ``True`` = may attend.

    Query ``i`` may attend to keys ``i - window + 1 .. i`` (those that exist): itself and
    the ``window - 1`` keys before it. ``window=1`` lets each query see only itself;
    ``window >= T_k`` gives :func:`attn.functional.causal_mask`. Positions are aligned at
    the top-left corner as in :func:`attn.functional.causal_mask` (see the module's
    docstring for a KV cache).

    Args:
        T_q (int): number of queries (rows).
        window (int): number of keys each query sees, counting itself; at least 1.
        T_k (int, optional): number of keys (columns); defaults to ``T_q``.
        device (torch.device, optional): device of the returned tensor.

    Returns:
        torch.Tensor: bool tensor of shape ``(T_q, T_k)``; ``mask[i, j]`` is
        ``i - window < j <= i``.
    """
    T_q = _checks.positive_int("T_q", T_q)
    window = _checks.positive_int("window", window)
    T_k = T_q if T_k is None else _checks.positive_int("T_k", T_k)
    i = torch.arange(T_q, device=device)[:, None]  # (T_q, 1)
    j = torch.arange(T_k, device=device)[None, :]  # (1, T_k)
    return (j <= i) & (j > i - window)  # (T_q, T_k)


def alibi_slopes(num_heads, *, device=None):
    r"""ALiBi's slope :math:`m_h` of each head, a geometric sequence (Press et al., 2022).

    For ``num_heads`` a power of two, :math:`m_h = 2^{-8 (h + 1) / \text{num\_heads}}`,
    ``h = 0 .. num_heads - 1`` (for 8 heads: 1/2, 1/4, ..., 1/256). Otherwise, with
    :math:`n` the largest power of two below ``num_heads``, the slopes of :math:`n` heads
    followed by the first ``num_heads - n`` of the odd-numbered slopes of :math:`2n` heads,
    which fall between them (the rule of the paper's reference code).

    Args:
        num_heads (int): number of heads.
        device (torch.device, optional): device of the returned tensor.

    Returns:
        torch.Tensor: float32 tensor of shape ``(num_heads,)``, each slope in ``(0, 1)``.
    """
    num_heads = _checks.positive_int("num_heads", num_heads)
    n = 2 ** math.floor(math.log2(num_heads))  # n = 2^k <= num_heads < 2^(k+1)
    h = torch.arange(n, dtype=torch.float64)  # (n,)
    slopes = torch.exp2(-8.0 * (h + 1) / n)  # (n,): 2^(-8/n), 2^(-16/n), ...
    odd = torch.arange(num_heads - n, dtype=torch.float64)  # (num_heads - n,)
    extra = torch.exp2(-8.0 * (2 * odd + 1) / (2 * n))  # alibi_slopes(2n)[0::2][:num_heads - n]
    return torch.cat((slopes, extra)).to(dtype=torch.float32, device=device)  # (num_heads,)


def alibi_bias(num_heads, T_q, T_k=None, *, device=None):
    r"""ALiBi's additive bias :math:`-m_h\,(i - j)` for every head, query and key.

    Added to the scores :math:`q_i \cdot k_j / \sqrt{d_k}` of head ``h`` before the
    softmax: a key ``i - j`` positions behind the query loses :math:`m_h (i - j)`, so each
    head prefers recent keys, with its own slope :math:`m_h` (:func:`alibi_slopes`). No
    position vector is added to the embeddings. ALiBi is used with a causal mask: keys
    after the query (``j > i``) get a positive bias here, and the mask removes them. Pass
    the result as the float ``mask`` of :func:`attn.functional.scaled_dot_product_attention`
    with ``is_causal=True``. Positions are aligned at the top-left corner as in
    :func:`attn.functional.causal_mask` (see the module's docstring for a KV cache).

    Args:
        num_heads (int): number of heads ``h``.
        T_q (int): number of queries (rows).
        T_k (int, optional): number of keys (columns); defaults to ``T_q``.
        device (torch.device, optional): device of the returned tensor.

    Returns:
        torch.Tensor: float32 tensor of shape ``(num_heads, T_q, T_k)``, zero on the
        diagonal ``i = j``; it broadcasts against scores ``(B, num_heads, T_q, T_k)``.
    """
    num_heads = _checks.positive_int("num_heads", num_heads)
    T_q = _checks.positive_int("T_q", T_q)
    T_k = T_q if T_k is None else _checks.positive_int("T_k", T_k)
    m = alibi_slopes(num_heads, device=device)  # (num_heads,)
    i = torch.arange(T_q, device=device)[:, None]  # (T_q, 1)
    j = torch.arange(T_k, device=device)[None, :]  # (1, T_k)
    distance = (i - j).float()  # (T_q, T_k): i - j
    return -m[:, None, None] * distance  # (num_heads, 1, 1) * (T_q, T_k) -> (num_heads, T_q, T_k)


def sink_window_mask(T_q, window, num_sinks, T_k=None, *, device=None):
    """Boolean mask of a sliding window plus attention sinks, ``True`` = may attend.

    The cache that StreamingLLM keeps (Xiao et al., 2023): each query sees its sliding
    window, itself and the ``window - 1`` positions before it, and the first
    ``num_sinks`` positions of the sequence, never a position after itself. The queries
    are the *last* ``T_q`` of the ``T_k`` positions (aligned at the bottom-right corner,
    as new tokens that follow a cache): query ``i`` stands at position
    ``p = i + T_k - T_q``. ``num_sinks=0`` gives the sliding window alone.

    Args:
        T_q (int): number of queries (rows), the last ``T_q`` positions.
        window (int): positions of the window, counting the query's own; at least 1.
        num_sinks (int): first positions every query also sees; at least 0.
        T_k (int, optional): number of keys (columns), at least ``T_q``; defaults to ``T_q``.
        device (torch.device, optional): device of the returned tensor.

    Returns:
        torch.Tensor: bool tensor of shape ``(T_q, T_k)``; ``mask[i, j]`` is
        ``j <= p and (j > p - window or j < num_sinks)``, ``p = i + T_k - T_q``.
    """
    T_q = _checks.positive_int("T_q", T_q)
    window = _checks.positive_int("window", window)
    num_sinks = _checks.non_negative_int("num_sinks", num_sinks)
    T_k = T_q if T_k is None else _checks.positive_int("T_k", T_k)
    if T_k < T_q:
        raise ValueError(f"T_k must be at least T_q (the queries are the last T_q keys), got T_q={T_q} and T_k={T_k}")
    p = torch.arange(T_k - T_q, T_k, device=device)[:, None]  # (T_q, 1): p = i + T_k - T_q
    j = torch.arange(T_k, device=device)[None, :]  # (1, T_k)
    return (j <= p) & ((j > p - window) | (j < num_sinks))  # (T_q, T_k)
