"""The attention layers (``nn.Module``), in the order the book teaches them.

The book's step-by-step classes (:mod:`~attn.layers.self_attention`,
:mod:`~attn.layers.causal`, the wrapper of :mod:`~attn.layers.multihead`,
:mod:`~attn.layers.einsum`) keep the code each chapter teaches; the production layers
(:class:`~attn.layers.multihead.MultiHeadAttention`,
:class:`~attn.layers.grouped_query.GroupedQueryAttention`,
:class:`~attn.layers.cross_attention.CrossAttention`, and the pieces
:class:`~attn.layers.latent.MultiHeadLatentAttention` shares) run one forward pass,
:mod:`attn.layers.core`. Positions: :mod:`~attn.layers.positional` (sinusoidal, added to
the input) and :mod:`~attn.layers.rope` (rotary, applied to queries and keys);
:mod:`~attn.layers.input_block` puts embedding, positions and attention together.
"""
from . import (causal, core, cross_attention, einsum, grouped_query, input_block, latent, multihead, positional,
               rope, self_attention)

__all__ = ["core", "self_attention", "causal", "multihead", "einsum", "positional", "input_block", "rope",
           "grouped_query", "latent", "cross_attention"]
