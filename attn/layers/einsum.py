r"""Multi-head attention in the sequence-first layout of LabML's annotated implementation, with ``einsum``.

The layout and the names follow labml.ai's annotated ``MultiHeadAttention``
(https://nn.labml.ai/transformers/mha.html).

Tensors are laid out ``[seq, batch, heads, d_k]``; indices ``i`` (query position),
``j`` (key position), ``b`` (batch), ``h`` (head), ``d`` (feature):

.. math::

    S_{ijbh} = \frac{1}{\sqrt{d_k}} \sum_d Q_{ibhd} K_{jbhd}, \qquad
    A = \operatorname{softmax}_j(S), \qquad
    Z_{ibhd} = \sum_j A_{ijbh} V_{jbhd}

The softmax runs over ``j``, axis 1 of ``S`` (the keys), with the package's one
:func:`~attn.functional.masked_softmax`. The result equals the
batch-first :class:`~attn.MultiHeadAttention` once the weights are copied with
:meth:`SeqFirstMultiHeadAttention.load_from` (tested).
"""
import math

import torch
import torch.nn as nn

from .. import _checks
from .. import functional as AF
from .multihead import MultiHeadAttention

__all__ = ["PrepareForMultiHeadAttention", "SeqFirstMultiHeadAttention"]


class PrepareForMultiHeadAttention(nn.Module):
    """One linear projection split into heads.

    Args:
        d_model (int): input width.
        heads (int): number of heads.
        d_k (int): width of each head; the projection is ``d_model -> heads * d_k``.
        bias (bool): add a bias to the projection.

    Attributes:
        linear (nn.Linear): ``d_model -> heads * d_k``.

    Shape:
        - input: ``[seq, batch, d_model]`` or ``[batch, d_model]`` (any leading axes)
        - output: ``[seq, batch, heads, d_k]`` or ``[batch, heads, d_k]``
    """

    def __init__(self, d_model, heads, d_k, bias):
        super().__init__()
        self.d_model, self.heads, self.d_k = _checks.sizes(d_model=d_model, heads=heads, d_k=d_k)
        _checks.flags(bias=bias)
        self.linear = nn.Linear(d_model, heads * d_k, bias=bias)

    def forward(self, x):
        """Project the last axis and split it into ``[heads, d_k]``."""
        _checks.tensor("x", x, floating=True)
        if x.dtype != self.linear.weight.dtype:
            raise TypeError(f"x must have dtype {self.linear.weight.dtype} like the weights, got {x.dtype}")
        if x.dim() < 1 or x.size(-1) != self.d_model:
            raise ValueError(
                f"x must have last dimension d_model={self.d_model}, got shape {tuple(x.shape)}"
            )
        head_shape = x.shape[:-1]
        x = self.linear(x)  # [..., d_model] -> [..., heads * d_k]
        return x.view(*head_shape, self.heads, self.d_k)  # -> [..., heads, d_k]


class SeqFirstMultiHeadAttention(nn.Module):
    r"""Multi-head attention on sequence-first tensors, scores with ``einsum``.

    :math:`Z = \operatorname{Concat}_h\big(\operatorname{softmax}_j(Q K^\top / \sqrt{d_k})
    V\big) W^O` with ``d_k = d_model // heads``.

    Args:
        heads (int): number of heads; must divide ``d_model``.
        d_model (int): input and output width.
        dropout (float): dropout on the weights, in ``[0, 1)`` (training only).
        bias (bool): biases in the query, key and value projections.
        out_bias (bool): bias in the output projection (LabML's implementation always has one).

    Attributes:
        query, key, value (PrepareForMultiHeadAttention): created in this order.
        output (nn.Linear): ``d_model -> d_model``.
        attn (torch.Tensor or None): the last weights ``[seq_q, seq_k, batch, heads]``,
            detached.

    Shape:
        - ``query``: ``[seq_q, batch, d_model]``; ``key``, ``value``: ``[seq_k, batch, d_model]``
        - ``mask``: bool, broadcastable to ``[seq_q, seq_k, batch]`` (each axis its full
          size or 1), ``True`` = may attend
        - output: ``[seq_q, batch, d_model]``
    """

    def __init__(self, heads, d_model, dropout=0.0, bias=True, *, out_bias=True):
        super().__init__()
        self.heads, self.d_model = _checks.sizes(heads=heads, d_model=d_model)
        _checks.divisible("d_model", d_model, "heads", heads)
        _checks.flags(bias=bias, out_bias=out_bias)
        self.d_k = d_model // heads
        self.query = PrepareForMultiHeadAttention(d_model, heads, self.d_k, bias=bias)
        self.key = PrepareForMultiHeadAttention(d_model, heads, self.d_k, bias=bias)
        self.value = PrepareForMultiHeadAttention(d_model, heads, self.d_k, bias=bias)
        self.output = nn.Linear(d_model, d_model, bias=out_bias)
        self.dropout = nn.Dropout(_checks.probability("dropout", dropout))
        self.scale = 1 / math.sqrt(self.d_k)
        self.attn = None

    def get_scores(self, query, key):
        """Raw scores ``[seq_q, seq_k, batch, heads]`` from ``[seq, batch, heads, d_k]`` inputs."""
        return torch.einsum("ibhd,jbhd->ijbh", query, key)

    def prepare_mask(self, mask, query_shape, key_shape):
        """Check a ``[seq_q, seq_k, batch]`` bool mask and add a heads axis: ``[.., .., .., 1]``."""
        _checks.tensor("mask", mask)
        if mask.dtype != torch.bool:
            raise TypeError(f"mask must be a torch.bool tensor (True = may attend), got dtype {mask.dtype}")
        seq_q, batch = query_shape[0], query_shape[1]
        seq_k = key_shape[0]
        ok = (
            mask.dim() == 3
            and mask.shape[0] in (1, seq_q)
            and mask.shape[1] in (1, seq_k)
            and mask.shape[2] in (1, batch)
        )
        if not ok:
            raise ValueError(
                f"mask must have shape [seq_q, seq_k, batch] = {[seq_q, seq_k, batch]} "
                f"(or 1 on any axis), got shape {list(mask.shape)}"
            )
        return mask.unsqueeze(-1)  # [seq_q, seq_k, batch] -> [seq_q, seq_k, batch, 1]

    def forward(self, query, key, value, mask=None, *, return_weights=False):
        """Attend from ``query`` to ``key``/``value`` (pass the same tensor three times
        for self-attention).

        Args:
            query (torch.Tensor): ``[seq_q, batch, d_model]``.
            key (torch.Tensor): ``[seq_k, batch, d_model]``.
            value (torch.Tensor): ``[seq_k, batch, d_model]``.
            mask (torch.Tensor, optional): bool ``[seq_q, seq_k, batch]`` (axes may be 1),
                ``True`` = may attend. Rows with no allowed key give zero weights.
            return_weights (bool): also return the weights ``[seq_q, seq_k, batch, heads]``.

        Returns:
            torch.Tensor or tuple: ``[seq_q, batch, d_model]``, or ``(output, weights)``.
        """
        _checks.seq_first(query, key, value, self.d_model, self.output.weight.dtype, return_weights)
        seq_len, batch_size, _ = query.shape
        if mask is not None:
            mask = self.prepare_mask(mask, query.shape, key.shape)  # [seq_q, seq_k, batch, 1]
        q = self.query(query)  # [seq_q, batch, d_model] -> [seq_q, batch, heads, d_k]
        k = self.key(key)  # [seq_k, batch, d_model] -> [seq_k, batch, heads, d_k]
        v = self.value(value)  # [seq_k, batch, d_model] -> [seq_k, batch, heads, d_k]
        scores = self.get_scores(q, k) * self.scale  # -> [seq_q, seq_k, batch, heads]
        attn = AF._masked_softmax(scores, mask, dim=1)  # softmax_j (dim=1: j)
        attn = self.dropout(attn)
        x = torch.einsum("ijbh,jbhd->ibhd", attn, v)  # -> [seq_q, batch, heads, d_k]
        self.attn = attn.detach()
        x = x.reshape(seq_len, batch_size, -1)  # [seq_q, batch, heads, d_k] -> [seq_q, batch, d_model]
        out = self.output(x)
        return (out, attn) if return_weights else out

    @torch.no_grad()
    def load_from(self, mha):
        """Copy the weights of a batch-first :class:`~attn.MultiHeadAttention`.

        ``W_query``, ``W_key``, ``W_value`` go to ``query.linear``, ``key.linear``,
        ``value.linear`` and ``out_proj`` to ``output`` (a missing ``out_proj`` bias
        becomes a zero bias). Head ``i`` of both modules then uses the same rows
        ``i * d_k : (i + 1) * d_k``, so both compute the same function (causal
        ``mha`` corresponds to a ``[seq, seq, 1]`` lower-triangular mask here).

        Args:
            mha (attn.MultiHeadAttention): with ``d_in == d_out == d_model`` and the
                same number of heads.

        Returns:
            SeqFirstMultiHeadAttention: ``self``.
        """
        if not isinstance(mha, MultiHeadAttention):
            raise TypeError(f"mha must be an attn.MultiHeadAttention, got {type(mha).__name__}")
        if (mha.d_in, mha.d_out, mha.num_heads) != (self.d_model, self.d_model, self.heads):
            raise ValueError(
                f"mha must have d_in = d_out = d_model={self.d_model} and num_heads={self.heads}, "
                f"got d_in={mha.d_in}, d_out={mha.d_out}, num_heads={mha.num_heads}"
            )
        pairs = [
            (self.query.linear, mha.W_query),
            (self.key.linear, mha.W_key),
            (self.value.linear, mha.W_value),
            (self.output, mha.out_proj),
        ]
        for mine, theirs in pairs:
            if theirs.bias is not None and mine.bias is None:
                raise ValueError("mha has biases that this module lacks: create it with bias=True/out_bias=True")
        for mine, theirs in pairs:
            mine.weight.copy_(theirs.weight)
            if mine.bias is not None:
                if theirs.bias is None:
                    mine.bias.zero_()
                else:
                    mine.bias.copy_(theirs.bias)
        return self
