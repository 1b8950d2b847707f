r"""Multi-head attention, two ways: a list of single heads, and one fused module.

.. math::

    \operatorname{MultiHead}(X) = \operatorname{Concat}(\mathrm{head}_1, \dots,
        \mathrm{head}_h)\, W^O, \qquad
    \mathrm{head}_i = \operatorname{softmax}\!\left(
        \frac{Q_i K_i^\top}{\sqrt{d_k}} + M\right) V_i
"""
import torch
import torch.nn as nn

from .. import _checks
from .. import functional as AF
from .causal import CausalAttention
from .core import attend

__all__ = ["MultiHeadAttentionWrapper", "MultiHeadAttention"]


class MultiHeadAttentionWrapper(nn.Module):
    r"""``num_heads`` independent :class:`~attn.CausalAttention` heads, concatenated.

    :math:`Z = [\mathrm{head}_1(X) \,\|\, \dots \,\|\, \mathrm{head}_h(X)]`, no output
    projection, so the output width is ``num_heads * d_out``.

    Args:
        d_in (int): width of each input embedding.
        d_out (int): output width of *each* head.
        context_length (int): longest sequence accepted.
        dropout (float): dropout on each head's weights, in ``[0, 1)``.
        num_heads (int): number of heads :math:`h`.
        qkv_bias (bool): add a bias to every head's projections.

    Attributes:
        heads (nn.ModuleList): the ``num_heads`` :class:`~attn.CausalAttention` modules,
            created one after the other.

    Shape:
        - input ``x``: ``(T, d_in)`` or ``(B, T, d_in)``
        - output: ``(T, num_heads * d_out)`` or ``(B, T, num_heads * d_out)``
    """

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        num_heads = _checks.positive_int("num_heads", num_heads)
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)]
        )

    def forward(self, x, *, return_weights=False):
        """Concatenated context vectors of all heads.

        Args:
            x (torch.Tensor): ``(T, d_in)`` or ``(B, T, d_in)``.
            return_weights (bool): also return the heads' weights stacked as
                ``(h, T, T)`` or ``(B, h, T, T)``.

        Returns:
            torch.Tensor or tuple: ``z`` of shape ``(..., T, num_heads * d_out)``, or
            ``(z, weights)``.
        """
        _checks.flag("return_weights", return_weights)
        if not return_weights:
            return torch.cat([head(x) for head in self.heads], dim=-1)
        outs, weights = zip(*(head(x, return_weights=True) for head in self.heads))
        z = torch.cat(outs, dim=-1)  # h x (..., T, d_out) -> (..., T, h * d_out)
        return z, torch.stack(weights, dim=-3)  # h x (..., T, T) -> (..., h, T, T)


class MultiHeadAttention(nn.Module):
    r"""Fused multi-head self-attention: one projection per role, split into heads.

    Queries, keys and values are computed with one ``d_in -> d_out`` projection each and
    split into ``num_heads`` heads of width ``d_head = d_out // num_heads``; each head
    runs scaled dot-product attention; the heads are concatenated and mixed by
    ``out_proj``:

    .. math::

        \operatorname{MultiHead}(X) = \operatorname{Concat}(\mathrm{head}_1, \dots,
            \mathrm{head}_h)\, W^O, \quad
        \mathrm{head}_i = \operatorname{softmax}\!\left(
            \frac{Q_i K_i^\top}{\sqrt{d_{head}}} + M\right) V_i

    The forward pass is the one of every attention layer of the package,
    :func:`attn.layers.core.attend`: the heads are split and joined with
    :func:`attn.functional.split_heads` and :func:`attn.functional.merge_heads`; the
    attention itself is one call to the kernel of
    :func:`attn.functional.scaled_dot_product_attention`, which chooses the path. Two
    paths, tested equal: without weights requested, one call to
    ``torch.nn.functional.scaled_dot_product_attention`` (with ``is_causal=True`` when
    there is no padding mask and no cached position); with ``return_weights=True``, the
    explicit path (scores, mask, softmax, dropout) that also returns the per-head
    weights. With a :class:`attn.KVCache`, the new tokens attend to the cached ones too.

    Args:
        d_in (int): width of each input embedding.
        d_out (int): total width of queries, keys, values and of the output; must be
            divisible by ``num_heads``.
        context_length (int): longest sequence accepted.
        dropout (float): dropout on the attention weights, in ``[0, 1)`` (training only).
        num_heads (int): number of heads :math:`h`.
        qkv_bias (bool): add a bias to ``W_query``, ``W_key``, ``W_value``.
        causal (bool): ``True`` (decoder, GPT): token ``t`` attends to tokens ``<= t``;
            ``False`` (encoder): every token attends to every (non-padding) token.
        out_bias (bool): add a bias to ``out_proj``.

    Attributes:
        W_query, W_key, W_value (nn.Linear): ``d_in -> d_out``; then
        out_proj (nn.Linear): ``d_out -> d_out``; created in this order.
        dropout (nn.Dropout): dropout on the weights.
        mask (torch.Tensor or None): buffer, bool ``(context_length, context_length)``
            lower-triangular (``True`` = may attend) when ``causal``, else ``None``; as
            in Raschka's ``MultiHeadAttention`` (*Build a Large Language Model (From
            Scratch)*, Manning 2024, section 3.6), kept in the ``state_dict``; the forward
            pass passes ``is_causal`` instead, and uses ``mask[:T, :T]`` with a padding mask.

    Shape:
        - input ``x``: ``(T, d_in)`` or ``(B, T, d_in)``, ``T <= context_length``
        - ``key_padding_mask``: bool ``(T,)`` or ``(B, T)``, ``True`` = real token
        - output: ``(T, d_out)`` or ``(B, T, d_out)``; weights ``(h, T, T)`` or
          ``(B, h, T, T)`` (``T_cached + T`` keys with a :class:`attn.KVCache`)
    """

    def __init__(
        self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False, *, causal=True, out_bias=True
    ):
        super().__init__()
        self.d_in, self.d_out, self.context_length, self.num_heads = _checks.sizes(
            d_in=d_in, d_out=d_out, context_length=context_length, num_heads=num_heads
        )
        _checks.divisible("d_out", d_out, "num_heads", num_heads)
        _checks.flags(qkv_bias=qkv_bias, causal=causal, out_bias=out_bias)
        self.causal = causal
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out, bias=out_bias)
        self.dropout = nn.Dropout(_checks.probability("dropout", dropout))
        self.register_buffer("mask", AF.causal_mask(context_length) if causal else None)

    rope = None  # no rotary position embedding (chapter 15; see GroupedQueryAttention)

    @property
    def num_kv_heads(self):
        """Number of key-value heads; equal to ``num_heads`` (each query head has its own keys and values)."""
        return self.num_heads

    @_checks.door(_checks.forward_inputs)
    def forward(self, x, *, key_padding_mask=None, return_weights=False, cache=None, positions=None, mask=None):
        """Multi-head context vectors: :func:`attn.layers.core.attend` with this layer's weights.

        Args:
            x (torch.Tensor): ``(T, d_in)`` or ``(B, T, d_in)``, ``T <= context_length``;
                with a cache, only the new tokens.
            key_padding_mask (torch.Tensor, optional): bool ``(B, T)`` (``(T,)`` for
                unbatched ``x``), ``True`` = real token; padding keys get no attention.
                A query whose keys are all excluded gets a zero context before
                ``out_proj``. Not with ``cache``.
            return_weights (bool): also return the per-head weights (after dropout).
            cache (attn.KVCache, optional): keys and values of the earlier positions
                (causal modules only). The new tokens' keys and values are appended to
                it; new token ``i`` sits at position ``T_cached + i`` and attends to
                positions ``0 .. T_cached + i``; ``T_cached + T <= context_length``.
            positions (torch.Tensor, optional): int64 ``(B, T)`` or ``(T,)``, the new
                tokens' positions (used by a rotation; this layer has none).
            mask (torch.Tensor, optional): bool, broadcastable to
                ``(B, h, T, T_cached + T)``, ``True`` = may attend; replaces the causal
                mask. Not with ``key_padding_mask``.

        Returns:
            torch.Tensor or tuple: ``z`` of shape ``(..., T, d_out)``, or ``(z, weights)``
            with ``weights`` of shape ``(..., h, T, T_cached + T)``.
        """
        if key_padding_mask is not None:  # (B, T) -> (B, 1, 1, T)
            mask = key_padding_mask.reshape(*x.shape[:-2], 1, 1, -1)
            if self.causal:  # (B, 1, 1, T) & (T, T) -> (B, 1, T, T)
                mask = mask & self.mask[:x.size(-2), :x.size(-2)]
        return attend(self, x, cache=cache, positions=positions, mask=mask, return_weights=return_weights)
