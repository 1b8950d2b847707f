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
- :mod:`attn.linear`: linear attention, the delta rule and the gated delta rule, each
  in a parallel, a recurrent and a chunked form; :mod:`attn.recall`, the associative-recall
  task and small models that compare them with softmax attention;
- :class:`CrossAttention`: queries from one sequence, keys and values from another;
  :mod:`attn.seq2seq`, a tiny encoder–decoder that uses it to rewrite dates;
- :mod:`attn.plot`: the shared heatmap (matplotlib is imported only when drawing);
- :mod:`attn.diagrams`: diagrams of the mechanism, drawn from the shapes of real tensors;
- :func:`journey`: the six-token example sentence of Raschka, *Build a Large Language
  Model (From Scratch)* (Manning 2024), chapter 3.

Depends only on PyTorch.

How the code is laid out (new code follows the same pattern):

- **Check once, where the user calls in.** A public function, a constructor and a
  module's ``forward`` check their arguments with :mod:`attn._checks` (``TypeError``
  for a wrong kind of object or dtype, ``ValueError`` for a wrong value or shape, each
  message naming the argument and what was expected), then call a private kernel that
  checks nothing: ``scaled_dot_product_attention`` -> ``functional._attention``,
  ``attention_weights`` -> ``functional._weights``, ``masked_softmax`` ->
  ``functional._masked_softmax``, ``RotaryEmbedding.forward`` -> ``_rotate``. Modules
  call the kernels, never the public, checked functions, so nothing is checked twice
  on the way down, and nothing on the fast path waits for a tensor's value on the
  host (no ``bool(tensor)``, ``.item()``).
- **One forward pass for causal layers with a cache.** ``kv_cache._causal_attention(m,
  x, cache, return_weights)`` projects, splits into heads, rotates (``m.rope``),
  appends to the cache, and makes one attention call (``enable_gqa`` when ``m`` has
  fewer key-value heads than query heads; no mask when every key is visible).
  :class:`MultiHeadAttention` (with ``cache=``) and :class:`GroupedQueryAttention` both
  call it; a new causal layer with a cache should too.
- **A cache is any object with** ``update(k, v) -> (k_all, v_all)`` **and** ``len()``.
  It owns the check that new keys fit the ones it holds (batch, heads, head width,
  dtype) and keeps copies, never the caller's tensors; the module checks only that it
  is such an object and has room (``len(cache) + T <= context_length``).
- **No import inside a function, no import circle** (``tests/attn/test_one_hop.py``):
  ``_checks`` imports nothing of the package; ``functional`` imports ``bias`` and
  ``tiled``; modules import ``functional`` and the modules they build on.
"""
from . import diagrams, functional, linear, plot, seq2seq
from .causal import CausalAttention
from .cross_attention import CrossAttention
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
    "CrossAttention",
    "seq2seq",
    "linear",
]
