r"""The input block of a Transformer encoder: embedding, positional encoding, attention.

.. math::

    X' = \operatorname{Embedding}(w) + PE, \qquad Z = \operatorname{MultiHead}(X')
"""
import torch.nn as nn

from .. import _checks
from .multihead import MultiHeadAttention
from .positional import PositionalEncoding

__all__ = ["TransformerInputBlock"]


class TransformerInputBlock(nn.Module):
    r"""Token embedding + sinusoidal positional encoding + multi-head self-attention.

    A simplified block (no residual connection, normalisation or feed-forward layer).
    Parameter count: ``vocab_size * d_model`` for the embedding plus
    ``4 * d_model**2`` for the attention (plus ``4 * d_model`` biases when ``bias``);
    for ``vocab_size=10_000, d_model=64, num_heads=8, bias=False`` that is 656,384.

    Args:
        vocab_size (int): number of token ids; id 0 is padding (its embedding is zero
            and gets no gradient).
        d_model (int): embedding width, also the attention's input and output width;
            divisible by ``num_heads``.
        num_heads (int): number of attention heads.
        context_length (int): longest sequence accepted (size of the ``pe`` table and
            of the attention mask).
        dropout (float): dropout after the positional encoding and on the attention
            weights, in ``[0, 1)``.
        bias (bool): biases in the attention's projections (``qkv_bias`` and ``out_bias``).
        causal (bool): causal attention (decoder) instead of full attention (encoder).

    Attributes:
        embedding (nn.Embedding): ``(vocab_size, d_model)``, ``padding_idx=0``.
        pe (PositionalEncoding): the positional encoding.
        mha (MultiHeadAttention): the attention.

    Shape:
        - input ``tokens``: integer ``(T,)`` or ``(B, T)``
        - output: ``(T, d_model)`` or ``(B, T, d_model)``; weights ``(..., h, T, T)``
    """

    def __init__(
        self, vocab_size, d_model, num_heads, context_length=512, dropout=0.1, *, bias=False, causal=False
    ):
        super().__init__()
        self.vocab_size = _checks.positive_int("vocab_size", vocab_size)
        _checks.positive_int("d_model", d_model)
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=0)
        self.pe = PositionalEncoding(d_model, context_length, dropout)
        self.mha = MultiHeadAttention(
            d_model, d_model, context_length, dropout, num_heads, qkv_bias=bias, causal=causal, out_bias=bias
        )

    def forward(self, tokens, key_padding_mask=None, *, return_weights=False):
        """Contextual vectors for a batch of token ids.

        Args:
            tokens (torch.Tensor): integer ids ``(T,)`` or ``(B, T)`` in ``[0, vocab_size)``.
            key_padding_mask (torch.Tensor, optional): bool, same shape as ``tokens``,
                ``True`` = real token (for instance ``tokens != 0``).
            return_weights (bool): also return the attention weights ``(..., h, T, T)``.

        Returns:
            torch.Tensor or tuple: ``z`` of shape ``(..., T, d_model)``, or ``(z, weights)``.
        """
        _checks.token_ids("tokens", tokens, self.vocab_size, self.pe.max_len)
        e = self.embedding(tokens)  # (..., T) -> (..., T, d_model)
        e = self.pe(e)
        return self.mha(e, key_padding_mask=key_padding_mask, return_weights=return_weights)
