r"""Causal (masked) self-attention: a token attends only to itself and earlier tokens.

.. math::

    Z = \operatorname{dropout}\!\left(\operatorname{softmax}\!\left(
        \frac{Q K^\top}{\sqrt{d_k}} + M\right)\right) V, \qquad
    M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}
"""
import torch.nn as nn

from .. import _checks
from .. import functional as AF

__all__ = ["CausalAttention"]


class CausalAttention(nn.Module):
    r"""Single-head causal self-attention with dropout on the weights.

    Args:
        d_in (int): width of each input embedding.
        d_out (int): width of queries, keys, values and of the output (:math:`d_k`).
        context_length (int): longest sequence accepted; size of the mask buffer.
        dropout (float): dropout probability on the attention weights, in ``[0, 1)``
            (active in training mode only).
        qkv_bias (bool): add a bias to the three projections.

    Attributes:
        W_query, W_key, W_value (nn.Linear): ``d_in -> d_out``, created in this order.
        dropout (nn.Dropout): dropout on the weights.
        mask (torch.Tensor): buffer, bool ``(context_length, context_length)``,
            lower-triangular, ``True`` = may attend (see :func:`attn.functional.causal_mask`).

    Shape:
        - input ``x``: ``(T, d_in)`` or ``(B, T, d_in)`` with ``T <= context_length``
        - output: ``(T, d_out)`` or ``(B, T, d_out)``

    The forward pass checks ``x`` once, then calls the kernel of
    :func:`attn.functional.scaled_dot_product_attention` with ``is_causal=True``: without
    weights requested, one call to PyTorch's fused kernel; with ``return_weights=True``,
    the explicit path (scores, the causal mask, softmax, dropout). The ``mask`` buffer of
    Raschka's ``CausalAttention`` (*Build a Large Language Model (From Scratch)*, Manning
    2024, section 3.5) is kept (it is part of the ``state_dict``); it equals the mask the
    explicit path builds, ``mask[:T, :T]``.
    """

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_in, self.d_out, self.context_length = _checks.sizes(
            d_in=d_in, d_out=d_out, context_length=context_length
        )
        _checks.flags(qkv_bias=qkv_bias)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(_checks.probability("dropout", dropout))
        self.register_buffer("mask", AF.causal_mask(context_length))

    def forward(self, x, *, return_weights=False):
        """Causal context vectors.

        Args:
            x (torch.Tensor): ``(T, d_in)`` or ``(B, T, d_in)``, ``T <= context_length``.
            return_weights (bool): also return the weights ``(..., T, T)`` (after dropout).

        Returns:
            torch.Tensor or tuple: ``z`` of shape ``(..., T, d_out)``, or ``(z, weights)``.
        """
        _checks.forward_inputs(self, x, return_weights)
        q = self.W_query(x)  # (..., T, d_in) -> (..., T, d_out)
        k = self.W_key(x)
        v = self.W_value(x)
        p = self.dropout.p if self.training else 0.0
        out, att = AF._attention(  # F.scaled_dot_product_attention | return_weights: softmax(S + mask) V
            q, k, v, is_causal=True, dropout_p=p, return_weights=return_weights
        )
        return (out, att) if return_weights else out
