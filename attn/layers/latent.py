r"""Multi-head latent attention (MLA; DeepSeek-AI, 2024, "DeepSeek-V2").

Grouped-query attention shrinks the KV cache by sharing key-value heads. MLA keeps one
key and one value per head but caches neither: each token is compressed into one
**latent** vector of width :math:`d_c`, and every head's key and value are linear
functions of it,

.. math::

    c_t = W^{DKV} x_t, \qquad k^{(i)}_t = W^{UK}_i\, c_t, \qquad v^{(i)}_t = W^{UV}_i\, c_t ,

so the cache holds :math:`c_t` only. Positions enter through a small decoupled RoPE part
of width :math:`d_r`: a rotated key :math:`k^R_t = \operatorname{RoPE}_t(W^{KR} x_t)`
shared by the heads (cached next to :math:`c_t`), and a rotated query part per head.
The score of head :math:`i` is

.. math::

    s^{(i)}_{tj} = \frac{q^{(i)}_t \cdot k^{(i)}_j + q^{R,(i)}_t \cdot k^R_j}{\sqrt{d_{head} + d_r}} .

Since :math:`q \cdot (W^{UK} c) = (W^{UK\top} q) \cdot c`, the up-projection of the keys
can move to the query, and that of the values to the output: attention then runs
directly on the cached latents (the "absorbed" form), which is what makes the small
cache cheap to read. The rotation cannot move the same way: it sits between the query
and :math:`W^{UK}` and changes with the distance between the two positions, hence the
separate RoPE part.

The cache of a batch of :math:`B` sequences after :math:`T` tokens holds
:math:`B \cdot T \cdot (d_c + d_r)` numbers per layer; :func:`latent_cache_bytes` gives it
for a whole model.
"""
import math

import torch
import torch.nn as nn

from .. import _checks
from .core import bottom_right_mask, merge_heads, split_heads
from ..functional import _attention
from .rope import RotaryEmbedding

__all__ = ["MultiHeadLatentAttention", "latent_cache_bytes"]


class MultiHeadLatentAttention(nn.Module):
    r"""Causal multi-head latent attention: keys and values decompressed from one cached latent.

    Each token's input :math:`x_t` is compressed into a latent
    :math:`c_t = W^{DKV} x_t` of width ``kv_latent_dim`` (:math:`d_c`); head :math:`i`'s key
    and value are :math:`W^{UK}_i c_t` and :math:`W^{UV}_i c_t`, of width
    :math:`d_{head} = d_{out} / h`. With ``rope_head_dim`` :math:`d_r > 0`, a rotated key
    of width :math:`d_r`, shared by the heads, and a rotated query part per head add
    positions to the scores (the decoupled RoPE of DeepSeek-V2). Scores are divided by
    :math:`\sqrt{d_{head} + d_r}`. With a cache, only :math:`c_t` and the rotated key are
    cached: :math:`B \cdot T \cdot (d_c + d_r)` numbers.

    DeepSeek-V2 also compresses the queries and normalises the latent (RMSNorm); both
    are left out here, as they change neither the cache nor the absorption.

    Args:
        d_in (int): dimension of each input token.
        d_out (int): dimension of the output, ``num_heads * head_dim``.
        context_length (int): the most positions a sequence may have (cached ones
            included).
        num_heads (int): number of heads :math:`h`; must divide ``d_out``.
        kv_latent_dim (int): width :math:`d_c` of the cached latent.
        rope_head_dim (int): width :math:`d_r` of the decoupled RoPE part of each query
            and of the shared rotated key; even, 0 (the default) for none.
        dropout (float): dropout probability on the attention weights, in ``[0, 1)``.

    Attributes:
        W_query (nn.Linear): ``d_in -> d_out``, the queries :math:`q^{(i)}`, no bias;
        W_down (nn.Linear): ``d_in -> kv_latent_dim``, :math:`W^{DKV}`, no bias;
        W_up_key, W_up_value (nn.Linear): ``kv_latent_dim -> d_out``, :math:`W^{UK}`
            and :math:`W^{UV}`, no bias;
        W_query_rope (nn.Linear or None): ``d_in -> num_heads * rope_head_dim``, no bias;
        W_key_rope (nn.Linear or None): ``d_in -> rope_head_dim``, :math:`W^{KR}`, no bias;
        out_proj (nn.Linear): ``d_out -> d_out``, with a bias; created in this order.
        rope (attn.RotaryEmbedding or None): the rotation of the RoPE parts.

    Shape:
        - input ``x``: ``(T, d_in)`` or ``(B, T, d_in)``
        - output: ``(T, d_out)`` or ``(B, T, d_out)``; weights ``(..., h, T, T_cached + T)``
    """

    def __init__(self, d_in, d_out, context_length, num_heads, kv_latent_dim, *, rope_head_dim=0, dropout=0.0):
        super().__init__()
        self.d_in, self.d_out, self.context_length, self.num_heads, self.kv_latent_dim = _checks.sizes(
            d_in=d_in, d_out=d_out, context_length=context_length, num_heads=num_heads,
            kv_latent_dim=kv_latent_dim,
        )
        _checks.divisible("d_out", d_out, "num_heads", num_heads)
        self.rope_head_dim = _checks.non_negative_int("rope_head_dim", rope_head_dim)
        if rope_head_dim % 2:
            raise ValueError(f"rope_head_dim must be even (RoPE rotates pairs of coordinates), got {rope_head_dim}")
        self.head_dim = d_out // num_heads
        self.scale = 1.0 / math.sqrt(self.head_dim + rope_head_dim)  # 1 / sqrt(d_head + d_r)
        self.W_query = nn.Linear(d_in, d_out, bias=False)
        self.W_down = nn.Linear(d_in, kv_latent_dim, bias=False)
        self.W_up_key = nn.Linear(kv_latent_dim, d_out, bias=False)
        self.W_up_value = nn.Linear(kv_latent_dim, d_out, bias=False)
        self.W_query_rope = nn.Linear(d_in, num_heads * rope_head_dim, bias=False) if rope_head_dim else None
        self.W_key_rope = nn.Linear(d_in, rope_head_dim, bias=False) if rope_head_dim else None
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(_checks.probability("dropout", dropout))
        self.rope = RotaryEmbedding(rope_head_dim, max_len=context_length) if rope_head_dim else None

    def forward(self, x, *, cache=None, absorb=False, return_weights=False):
        """Causal latent attention, optionally appending to a cache of latents.

        Args:
            x (torch.Tensor): ``(B, T, d_in)`` or ``(T, d_in)``; with a cache, only the
                new tokens.
            cache (attn.KVCache or attn.PagedKVCache, optional): the latents of the
                earlier positions. The new tokens' latents and rotated keys, one tensor
                ``(B, 1, T, kv_latent_dim + rope_head_dim)``, are appended to it as keys
                (with values of width 0); new token ``i`` sits at position
                ``T_cached + i`` and attends to positions ``0 .. T_cached + i``.
            absorb (bool): attend on the latents, with :math:`W^{UK}` applied to the
                queries and :math:`W^{UV}` to the outputs, instead of decompressing every
                cached latent into keys and values; the same result.
            return_weights (bool): also return the per-head weights (explicit path).

        Returns:
            torch.Tensor or tuple: ``z`` ``(..., T, d_out)``, or ``(z, weights)`` with
            ``weights`` ``(..., num_heads, T, T_cached + T)``.
        """
        P = self._check(x, cache, absorb, return_weights)  # P = T_cached
        x3 = x if x.dim() == 3 else x[None]  # (T, d_in) -> (1, T, d_in)
        B, T, _ = x3.shape
        h, d_c, d_r = self.num_heads, self.kv_latent_dim, self.rope_head_dim
        q = split_heads(self.W_query(x3), h)  # (B, T, d_out) -> (B, h, T, d_head)
        latent = self.W_down(x3)[:, None]  # (B, T, d_in) -> (B, 1, T, d_c)
        if self.rope is not None:  # positions P .. P + T - 1
            q_rope = self.rope._rotate(split_heads(self.W_query_rope(x3), h), P)  # (B, h, T, d_r)
            k_rope = self.rope._rotate(self.W_key_rope(x3)[:, None], P)  # (B, 1, T, d_r): 1 head, shared
            latent = torch.cat((latent, k_rope), dim=-1)  # (B, 1, T, d_c + d_r)
        if cache is not None:  # k <- [c, k_R]: (B, 1, T, d_c + d_r); v: (B, 1, T, 0)
            latent, _ = cache.update(latent, latent[..., :0])  # (B, 1, P + T, d_c + d_r)
        c, k_rope = latent.split((d_c, d_r), dim=-1)  # (B, 1, P + T, d_c), (B, 1, P + T, d_r)
        if absorb:  # q . (W_uk c) = (W_uk^T q) . c: k = [c, k_R], v = c, h_kv = 1
            q = q @ self.W_up_key.weight.view(h, self.head_dim, d_c)  # (B, h, T, d_head) @ (h, d_head, d_c) -> (B, h, T, d_c)
            k, v = latent, c  # (B, 1, P + T, d_c + d_r), (B, 1, P + T, d_c)
        else:  # k_i = W_uk,i c, v_i = W_uv,i c, i = 1 .. h
            k = split_heads(self.W_up_key(c[:, 0]), h)  # (B, P + T, d_c) -> (B, h, P + T, d_head)
            v = split_heads(self.W_up_value(c[:, 0]), h)  # (B, P + T, d_c) -> (B, h, P + T, d_head)
            k = torch.cat((k, k_rope.expand(-1, h, -1, -1)), dim=-1)  # (B, h, P + T, d_head + d_r)
        if self.rope is not None:
            q = torch.cat((q, q_rope), dim=-1)  # (B, h, T, d_head + d_r) | (B, h, T, d_c + d_r)
        mask = bottom_right_mask(T, P, x.device) if P and T > 1 else None  # (T, P + T): keys 0 .. P + i
        p = self.dropout.p if self.training else 0.0
        out, att = _attention(  # absorb: h_kv = 1, k, v (B, 1, ...) -> (B, h, ...); out (B, h, T, d_c | d_head), att (B, h, T, P + T)
            q, k, v, mask, is_causal=not P and T > 1, dropout_p=p, scale=self.scale, return_weights=return_weights
        )
        if absorb:  # sum_j a_j W_uv c_j = W_uv (sum_j a_j c_j)
            w_uv = self.W_up_value.weight.view(h, self.head_dim, d_c)  # (d_out, d_c) -> (h, d_head, d_c)
            out = out @ w_uv.transpose(-2, -1)  # (B, h, T, d_c) @ (h, d_c, d_head) -> (B, h, T, d_head)
        z = self.out_proj(merge_heads(out))  # (B, h, T, d_head) -> (B, T, d_out)
        if x.dim() == 2:
            z, att = z[0], None if att is None else att[0]  # (1, T, d_out) -> (T, d_out)
        return (z, att) if return_weights else z

    def _check(self, x, cache, absorb, return_weights):
        """The input checks of :meth:`forward`; returns the number of cached positions."""
        _checks.sequence("x", x, self.d_in, self.context_length, dtype=_checks.dtype_of(self))
        _checks.flags(absorb=absorb, return_weights=return_weights)
        if cache is None:
            return 0
        return _checks.kv_cache("cache", cache, x.size(-2), self.context_length)  # len(cache)


def latent_cache_bytes(num_layers, kv_latent_dim, seq_len, *, rope_head_dim=0, batch=1, bytes_per_element=2):
    r"""Bytes that the caches of a model with multi-head latent attention hold.

    Each of the :math:`L` layers keeps, per cached position, one latent of :math:`d_c`
    numbers and one rotated key of :math:`d_r` numbers, whatever the number of heads:

    .. math::

        L \cdot (d_c + d_r) \cdot T \cdot b \cdot B \quad \text{bytes}.

    Compare :func:`attn.kv_cache_bytes`, :math:`2 \cdot L \cdot h_{kv} \cdot d_{head}
    \cdot T \cdot b \cdot B`, for multi-head, grouped-query and multi-query attention.
    For the caches of a model that has read ``seq_len`` positions, it equals the sum of
    their ``nbytes``.

    Args:
        num_layers (int): attention layers :math:`L`, one cache each.
        kv_latent_dim (int): width :math:`d_c` of the latent.
        seq_len (int): positions read so far, :math:`T`.
        rope_head_dim (int): width :math:`d_r` of the shared rotated key; 0 for none.
        batch (int): sequences :math:`B`. Default: 1.
        bytes_per_element (int): bytes per number, :math:`b`: 2 for 16-bit numbers (the
            default), 4 for float32.

    Returns:
        int: the size in bytes.

    Example::

        >>> attn.latent_cache_bytes(60, 512, 1, rope_head_dim=64)  # DeepSeek-V2: bytes per token
        69120
    """
    L, d_c, B, b = _checks.sizes(num_layers=num_layers, kv_latent_dim=kv_latent_dim, batch=batch,
                                 bytes_per_element=bytes_per_element)
    T = _checks.non_negative_int("seq_len", seq_len)
    d_r = _checks.non_negative_int("rope_head_dim", rope_head_dim)
    return L * (d_c + d_r) * T * b * B
