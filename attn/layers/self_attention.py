r"""Self-attention with trainable weights, in the two versions of Raschka's chapter 3.

Raschka, *Build a Large Language Model (From Scratch)*, Manning 2024, section 3.4:
``SelfAttention_v1`` with ``nn.Parameter`` matrices, ``SelfAttention_v2`` with ``nn.Linear``.

.. math::

    Q = X W_q, \quad K = X W_k, \quad V = X W_v, \qquad
    Z = \operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V
"""
import torch
import torch.nn as nn

from .. import _checks
from .. import functional as AF

__all__ = ["SelfAttentionV1", "SelfAttentionV2"]


class SelfAttentionV1(nn.Module):
    r"""Self-attention with weight matrices stored as ``nn.Parameter``.

    :math:`Z = \operatorname{softmax}(Q K^\top / \sqrt{d_{out}})\, V` with
    :math:`Q = X W_q`, :math:`K = X W_k`, :math:`V = X W_v`.

    Args:
        d_in (int): width of each input embedding.
        d_out (int): width of queries, keys, values and of the output.

    Attributes:
        W_query, W_key, W_value (nn.Parameter): ``(d_in, d_out)`` each, initialised with
            ``torch.rand`` (uniform in ``[0, 1)``), created in this order.

    Shape:
        - input ``x``: ``(T, d_in)`` or ``(B, T, d_in)``
        - output: ``(T, d_out)`` or ``(B, T, d_out)``
    """

    def __init__(self, d_in, d_out):
        super().__init__()
        self.d_in, self.d_out = _checks.sizes(d_in=d_in, d_out=d_out)
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def project(self, x):
        """Queries, keys and values, each ``(..., T, d_in) -> (..., T, d_out)``."""
        return x @ self.W_query, x @ self.W_key, x @ self.W_value

    def forward(self, x, *, return_weights=False):
        """Context vectors for every token.

        Args:
            x (torch.Tensor): ``(T, d_in)`` or ``(B, T, d_in)``.
            return_weights (bool): also return the weights ``(T, T)`` / ``(B, T, T)``.

        Returns:
            torch.Tensor or tuple: ``z`` of shape ``(..., T, d_out)``, or ``(z, weights)``.
        """
        _checks.forward_inputs(self, x, return_weights)
        q, k, v = self.project(x)  # (..., T, d_in) -> 3 x (..., T, d_out)
        att = AF._weights(q, k)  # softmax(q k^T / sqrt(d_out)): (..., T, T)
        z = att @ v  # (..., T, T) @ (..., T, d_out) -> (..., T, d_out)
        return (z, att) if return_weights else z


class SelfAttentionV2(nn.Module):
    r"""Self-attention with ``nn.Linear`` projections (better initialisation, optional bias).

    :math:`Z = \operatorname{softmax}(Q K^\top / \sqrt{d_{out}})\, V`; ``nn.Linear`` stores
    :math:`W^\top`, so ``v1.W_query.data = v2.W_query.weight.data.T`` makes a
    :class:`SelfAttentionV1` compute the same thing (when ``qkv_bias=False``). Only the
    projections change: ``forward`` is :meth:`SelfAttentionV1.forward`.

    Args:
        d_in (int): width of each input embedding.
        d_out (int): width of queries, keys, values and of the output.
        qkv_bias (bool): add a bias to the three projections.

    Attributes:
        W_query, W_key, W_value (nn.Linear): ``d_in -> d_out``, created in this order.

    Shape:
        - input ``x``: ``(T, d_in)`` or ``(B, T, d_in)``
        - output: ``(T, d_out)`` or ``(B, T, d_out)``
    """

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_in, self.d_out = _checks.sizes(d_in=d_in, d_out=d_out)
        _checks.flags(qkv_bias=qkv_bias)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def project(self, x):
        """Queries, keys and values, each ``(..., T, d_in) -> (..., T, d_out)``."""
        return self.W_query(x), self.W_key(x), self.W_value(x)

    forward = SelfAttentionV1.forward  # V2.forward = V1.forward; V2.project != V1.project
