r"""Grouped-query attention (GQA) and multi-query attention (MQA).

Multi-head attention gives each of its :math:`h` heads its own keys and values. In
grouped-query attention (Ainslie et al., 2023) the :math:`h` query heads share
:math:`h_{kv}` key-value heads, in groups of :math:`h / h_{kv}` consecutive query heads:
query head :math:`i` reads key-value head :math:`\lfloor i / (h / h_{kv}) \rfloor`.

.. math::

    \mathrm{head}_i = \operatorname{softmax}\!\left(
      \frac{Q_i K_{g(i)}^\top}{\sqrt{d_{head}}} + M\right) V_{g(i)},
    \qquad g(i) = \left\lfloor \frac{i}{h / h_{kv}} \right\rfloor

:math:`h_{kv} = h` is multi-head attention, :math:`h_{kv} = 1` is multi-query attention
(Shazeer, 2019). Fewer key-value heads mean fewer parameters in ``W_key`` and
``W_value`` and, above all, a :class:`attn.KVCache` :math:`h / h_{kv}` times smaller.

:func:`mean_pool_kv_heads` turns a trained multi-head layer into a grouped-query one by
averaging the key and value projections of each group of heads, as Ainslie et al. do
before uptraining.
"""
import torch
import torch.nn as nn

from .. import _checks
from .core import attend
from .multihead import MultiHeadAttention
from .rope import RotaryEmbedding

__all__ = ["GroupedQueryAttention", "mean_pool_kv_heads"]


class GroupedQueryAttention(nn.Module):
    r"""Causal attention whose ``num_heads`` query heads share ``num_kv_heads`` key-value heads.

    Query head ``i`` reads key-value head ``i // (num_heads // num_kv_heads)``, the
    convention of ``torch.nn.functional.scaled_dot_product_attention(...,
    enable_gqa=True)``. With ``num_kv_heads=num_heads`` it computes the same function
    as :class:`attn.MultiHeadAttention` given the same weights; with ``num_kv_heads=1``
    it is multi-query attention.

    Args:
        d_in (int): dimension of each input token.
        d_out (int): dimension of the output; ``d_out = num_heads * head_dim``.
        context_length (int): the most positions one sequence may have (cached ones
            included).
        dropout (float): dropout probability on the attention weights, in ``[0, 1)``.
        num_heads (int): number of query heads ``h``; must divide ``d_out``.
        num_kv_heads (int): number of key-value heads ``h_kv``; must divide ``num_heads``.
        qkv_bias (bool): add a bias to the query, key and value projections.
        rope_base (float, optional): when given, rotate queries and keys by the rotary
            position embedding (:class:`attn.RotaryEmbedding` with this ``base``) at
            their absolute positions; ``head_dim`` must then be even.

    Attributes:
        W_query (nn.Linear): ``d_in -> d_out``; then
        W_key, W_value (nn.Linear): ``d_in -> num_kv_heads * head_dim``; then
        out_proj (nn.Linear): ``d_out -> d_out``; created in this order.
        rope (attn.RotaryEmbedding or None): the rotation, when ``rope_base`` is given.

    Shape:
        - input ``x``: ``(T, d_in)`` or ``(B, T, d_in)``
        - output: ``(T, d_out)`` or ``(B, T, d_out)``; weights ``(..., h, T, T_cached + T)``
    """

    def __init__(
        self, d_in, d_out, context_length, dropout, num_heads, num_kv_heads, qkv_bias=False, rope_base=None
    ):
        super().__init__()
        self.d_in, self.d_out, self.context_length, self.num_heads, self.num_kv_heads = _checks.sizes(
            d_in=d_in, d_out=d_out, context_length=context_length, num_heads=num_heads, num_kv_heads=num_kv_heads
        )
        _checks.divisible("d_out", d_out, "num_heads", num_heads)
        _checks.divisible("num_heads", num_heads, "num_kv_heads", num_kv_heads)
        _checks.flags(qkv_bias=qkv_bias)
        self.head_dim = d_out // num_heads
        self.group_size = num_heads // num_kv_heads  # h / h_kv
        d_kv = num_kv_heads * self.head_dim
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_kv, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_kv, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(_checks.probability("dropout", dropout))
        self.rope = None if rope_base is None else _rope(rope_base, self.head_dim, context_length)

    causal = True  # every grouped-query layer is causal (a decoder's)

    @_checks.door(_checks.forward_inputs)
    def forward(self, x, *, cache=None, positions=None, mask=None, return_weights=False):
        """Causal grouped-query attention: :func:`attn.layers.core.attend` with this layer's weights.

        Args:
            x (torch.Tensor): ``(B, T, d_in)`` or ``(T, d_in)``; with a cache, only the
                new tokens.
            cache (attn.KVCache, optional): keys and values of the earlier positions,
                ``(B, num_kv_heads, T_cached, head_dim)``. The new tokens' keys and
                values are appended to it; new token ``i`` sits at position
                ``T_cached + i`` and attends to positions ``0 .. T_cached + i``.
            positions (torch.Tensor, optional): int64 ``(B, T)`` or ``(T,)``, the
                positions the rotation uses instead of ``T_cached .. T_cached + T - 1``
                (left-padded prompts).
            mask (torch.Tensor, optional): bool, broadcastable to
                ``(B, num_heads, T, T_cached + T)``, ``True`` = may attend; replaces the
                causal mask (it must include causality).
            return_weights (bool): also return the per-head weights (explicit path).

        Returns:
            torch.Tensor or tuple: ``z`` ``(..., T, d_out)``, or ``(z, weights)`` with
            ``weights`` ``(..., num_heads, T, T_cached + T)``.
        """
        return attend(self, x, cache=cache, positions=positions, mask=mask, return_weights=return_weights)


def _rope(base, head_dim, context_length):
    """A RotaryEmbedding for ``rope_base``, with errors that name this module's arguments."""
    if isinstance(base, bool) or not isinstance(base, (int, float)):
        raise TypeError(f"rope_base must be a float or None, got {type(base).__name__} ({base!r})")
    if not base > 1:
        raise ValueError(f"rope_base must be greater than 1, got {base}")
    if head_dim % 2:
        raise ValueError(
            f"rope_base needs an even head_dim = d_out // num_heads, got head_dim={head_dim}"
        )
    return RotaryEmbedding(head_dim, max_len=context_length, base=float(base))


def mean_pool_kv_heads(module, num_kv_heads):
    r"""A grouped-query layer made from a trained one by mean-pooling its key-value heads.

    The :math:`h'_{kv}` key-value heads of ``module`` are taken in ``num_kv_heads``
    (:math:`h_{kv}`) groups of :math:`r` consecutive heads, and the rows of ``W_key`` and
    ``W_value`` (and their biases) that belong to the heads of a group are averaged: new
    head :math:`g` gets

    .. math::

        W^K_g = \frac{1}{r} \sum_{j = g r}^{g r + r - 1} W^K_j, \qquad
        W^V_g = \frac{1}{r} \sum_{j = g r}^{g r + r - 1} W^V_j, \qquad
        r = \frac{h'_{kv}}{h_{kv}},

    the conversion of Ainslie et al. (2023, "GQA: Training Generalized Multi-Query
    Transformer Models from Multi-Head Checkpoints"), which then trains the result a
    little more ("uptraining"). ``W_query`` and ``out_proj`` are copied unchanged, so
    query head ``i`` keeps its weights and now reads the averaged head
    ``i // (num_heads // num_kv_heads)``. Averaging the projections is the same as
    averaging the keys and values they produce (and, with RoPE, the rotated keys: the
    rotation is linear and the same for every head). ``module`` is left unchanged.

    Args:
        module (attn.MultiHeadAttention or attn.GroupedQueryAttention): a causal layer
            with ``h_kv_old`` key-value heads (``num_heads`` for multi-head attention).
        num_kv_heads (int): key-value heads of the result; must divide ``h_kv_old``.
            ``1`` gives multi-query attention.

    Returns:
        attn.GroupedQueryAttention: a new layer with the same ``d_in``, ``d_out``,
        ``context_length``, ``num_heads``, dropout, bias setting and rotary embedding,
        on the same device and with the same dtype, in the same training mode.
        ``W_key`` and ``W_value`` have shape ``(num_kv_heads * head_dim, d_in)``.

    Raises:
        TypeError: when ``module`` is neither of the two classes.
        ValueError: when ``num_kv_heads`` is not a positive int dividing ``h_kv_old``,
            or ``module`` is a non-causal ``MultiHeadAttention``.
    """
    old = _check_pool(module, num_kv_heads)  # h_kv_old
    rope = getattr(module, "rope", None)
    new = GroupedQueryAttention(
        module.d_in, module.d_out, module.context_length, module.dropout.p, module.num_heads, num_kv_heads,
        qkv_bias=module.W_query.bias is not None, rope_base=None if rope is None else rope.base,
    )
    new = new.to(device=module.W_query.weight.device, dtype=module.W_query.weight.dtype)
    r, d = old // num_kv_heads, module.head_dim  # r = h_kv_old / h_kv
    with torch.no_grad():
        new.W_query.load_state_dict(module.W_query.state_dict())
        new.out_proj.weight.copy_(module.out_proj.weight)
        new.out_proj.bias.copy_(0 if module.out_proj.bias is None else module.out_proj.bias)
        for mine, theirs in ((new.W_key, module.W_key), (new.W_value, module.W_value)):
            w = theirs.weight.view(num_kv_heads, r, d, module.d_in)  # (h_kv_old * d, d_in) -> (h_kv, r, d, d_in)
            mine.weight.copy_(w.mean(dim=1).reshape(num_kv_heads * d, module.d_in))  # -> (h_kv * d, d_in)
            if theirs.bias is not None:
                mine.bias.copy_(theirs.bias.view(num_kv_heads, r, d).mean(dim=1).reshape(-1))  # (h_kv * d,)
    return new.train(module.training)


def _check_pool(module, num_kv_heads):
    """The input checks of :func:`mean_pool_kv_heads`; returns ``h_kv_old``."""
    if not isinstance(module, (MultiHeadAttention, GroupedQueryAttention)):
        raise TypeError(
            "module must be an attn.MultiHeadAttention or attn.GroupedQueryAttention, "
            f"got {type(module).__name__}"
        )
    if isinstance(module, MultiHeadAttention) and not module.causal:
        raise ValueError("module must be causal (GroupedQueryAttention is), got causal=False")
    old = getattr(module, "num_kv_heads", module.num_heads)
    _checks.positive_int("num_kv_heads", num_kv_heads)
    if old % num_kv_heads:
        raise ValueError(f"num_kv_heads must divide the module's {old} key-value heads, got num_kv_heads={num_kv_heads}")
    return old
