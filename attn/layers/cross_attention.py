r"""Cross-attention: the queries come from one sequence, the keys and values from another.

.. math::

    \operatorname{CrossAttention}(X, C) = \operatorname{Concat}(\mathrm{head}_1, \dots,
        \mathrm{head}_h)\, W^O, \qquad
    \mathrm{head}_i = \operatorname{softmax}\!\left(
        \frac{(X W^Q_i)(C W^K_i)^\top}{\sqrt{d_{head}}} + M\right) C W^V_i

``X`` ``(T_q, d_in)`` asks (a decoder's tokens), ``C`` ``(T_ctx, d_context)`` answers
(an encoder's output); ``M`` masks the context's padding only: every query may read every
real context token, so there is no causal mask.
"""
import torch.nn as nn

from .. import _checks
from .core import attend

__all__ = ["CrossAttention"]


class CrossAttention(nn.Module):
    r"""Multi-head cross-attention: queries from ``x``, keys and values from ``context``.

    .. math::

        \mathrm{head}_i = \operatorname{softmax}\!\left(
            \frac{(X W^Q_i)(C W^K_i)^\top}{\sqrt{d_{head}}} + M\right) C W^V_i,
        \qquad
        \operatorname{out} = \operatorname{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)\, W^O

    where ``M`` is ``-inf`` on padded context tokens and 0 elsewhere. Equal to
    ``torch.nn.MultiheadAttention(d_out, num_heads, kdim=d_context, vdim=d_context,
    batch_first=True)`` given the same weights (when ``d_in == d_out``).

    Args:
        d_in (int): width of each query-side token of ``x``.
        d_context (int): width of each context token.
        d_out (int): total width of queries, keys, values and of the output; must be
            divisible by ``num_heads``.
        num_heads (int): number of heads :math:`h`.
        dropout (float): dropout on the attention weights, in ``[0, 1)`` (training only).
        qkv_bias (bool): add a bias to ``W_query``, ``W_key``, ``W_value``.

    Attributes:
        W_query (nn.Linear): ``d_in -> d_out``; then
        W_key, W_value (nn.Linear): ``d_context -> d_out``; then
        out_proj (nn.Linear): ``d_out -> d_out``, with bias; created in this order.
        dropout (nn.Dropout): dropout on the weights.

    Shape:
        - ``x``: ``(B, T_q, d_in)`` (or ``(T_q, d_in)``)
        - ``context``: ``(B, T_ctx, d_context)`` (or ``(T_ctx, d_context)``)
        - ``context_padding_mask``: bool ``(B, T_ctx)``, ``True`` = real token
        - output: ``(B, T_q, d_out)``; weights ``(B, h, T_q, T_ctx)``
    """

    def __init__(self, d_in, d_context, d_out, num_heads, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.d_in, self.d_context, self.d_out, self.num_heads = _checks.sizes(
            d_in=d_in, d_context=d_context, d_out=d_out, num_heads=num_heads
        )
        _checks.divisible("d_out", d_out, "num_heads", num_heads)
        _checks.flag("qkv_bias", qkv_bias)
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(_checks.probability("dropout", dropout))

    causal, rope = False, None  # every query may read every real context token; no rotation

    @property
    def num_kv_heads(self):
        """Number of key-value heads; equal to ``num_heads``."""
        return self.num_heads

    @_checks.door(_checks.cross_inputs)
    def forward(self, x, context, *, context_padding_mask=None, return_weights=False, cache=None):
        """Each token of ``x`` reads the tokens of ``context``.

        Args:
            x (torch.Tensor): the queries' sequence, ``(B, T_q, d_in)``.
            context (torch.Tensor): the keys' and values' sequence, ``(B, T_ctx, d_context)``.
            context_padding_mask (torch.Tensor, optional): bool ``(B, T_ctx)``,
                ``True`` = real token; padded context tokens get weight exactly 0.
            return_weights (bool): also return the per-head weights (after dropout).
            cache (attn.KVCache, optional): the context's keys and values: an empty
                cache gets them at the first call, and later calls read them instead of
                projecting ``context`` again (a decoder generating token by token).

        Returns:
            torch.Tensor or tuple: ``out`` ``(B, T_q, d_out)``, or ``(out, weights)``
            with ``weights`` ``(B, h, T_q, T_ctx)``.
        """
        mask = context_padding_mask
        if mask is not None:  # (B, T_ctx) -> (B, 1, 1, T_ctx), broadcast: (B, h, T_q, T_ctx)
            mask = mask.reshape(*context.shape[:-2], 1, 1, -1)
        return attend(self, x, context=context, cache=cache, mask=mask, return_weights=return_weights)
