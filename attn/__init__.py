"""attn: the attention mechanism of Transformers, one small module per idea.

Modules, in the order the book teaches them:

- :mod:`attn.functional` (``import attn.functional as AF``): scaled dot-product
  attention, masks, the simplified (weight-free) self-attention;
- :class:`SelfAttentionV1`, :class:`SelfAttentionV2`: trainable weights;
- :class:`CausalAttention`: masked attention with dropout;
- :class:`MultiHeadAttentionWrapper`, :class:`MultiHeadAttention`: several heads;
- :class:`PrepareForMultiHeadAttention`, :class:`SeqFirstMultiHeadAttention`: the
  sequence-first ``einsum`` formulation;
- :class:`PositionalEncoding`, :class:`TransformerInputBlock`;
- :class:`KVCache`, :func:`kv_cache_bytes`, :class:`GroupedQueryAttention`,
  :func:`mean_pool_kv_heads`: decoding with a cache, its size, shared keys and values;
- :class:`PagedKVCache`: the cache in blocks of a shared pool, as serving engines keep it;
- :class:`MultiHeadLatentAttention`, :func:`latent_cache_bytes`: keys and values
  decompressed from one cached latent per token;
- :mod:`attn.plot`: the shared heatmap (matplotlib is imported only when drawing);
- :mod:`attn.diagrams`: diagrams of the mechanism, drawn from the shapes of real tensors;
- :func:`journey`: the notes' six-token example.

Depends only on PyTorch.
"""
from . import diagrams, functional, plot
from .causal import CausalAttention
from .data import journey
from .einsum import PrepareForMultiHeadAttention, SeqFirstMultiHeadAttention
from .grouped_query import GroupedQueryAttention, mean_pool_kv_heads
from .input_block import TransformerInputBlock
from .kv_cache import KVCache, kv_cache_bytes
from .latent import MultiHeadLatentAttention, latent_cache_bytes
from .multihead import MultiHeadAttention, MultiHeadAttentionWrapper
from .paged_cache import PagedKVCache
from .positional import PositionalEncoding
from .rope import RotaryEmbedding
from .self_attention import SelfAttentionV1, SelfAttentionV2

__all__ = [
    "functional",
    "plot",
    "diagrams",
    "journey",
    "SelfAttentionV1",
    "SelfAttentionV2",
    "CausalAttention",
    "MultiHeadAttentionWrapper",
    "MultiHeadAttention",
    "PrepareForMultiHeadAttention",
    "SeqFirstMultiHeadAttention",
    "PositionalEncoding",
    "TransformerInputBlock",
    "RotaryEmbedding",
    "KVCache",
    "kv_cache_bytes",
    "GroupedQueryAttention",
    "mean_pool_kv_heads",
    "PagedKVCache",
    "MultiHeadLatentAttention",
    "latent_cache_bytes",
]
