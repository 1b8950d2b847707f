"""attn: the attention mechanism of Transformers, one small module per idea.

The package is laid out by role, one floor per folder; a floor imports only the floors
above it in this list:

- :mod:`attn.ops`: the operations, as functions of tensors: masks and biases
  (:mod:`attn.ops.bias`), attention in tiles with the online softmax
  (:mod:`attn.ops.tiled`), linear attention and the delta rules (:mod:`attn.ops.linear`).
  :mod:`attn.functional` (``import attn.functional as AF``) is the public functional
  API over them: scaled dot-product attention, masks, the simplified (weight-free)
  self-attention, heads split and merged.
- :mod:`attn.layers`: the attention layers, in the order the book teaches them:
  :class:`SelfAttentionV1`, :class:`SelfAttentionV2` (trainable weights),
  :class:`CausalAttention` (masked, with dropout), :class:`MultiHeadAttentionWrapper`
  and :class:`MultiHeadAttention` (several heads), :class:`SeqFirstMultiHeadAttention`
  (the sequence-first ``einsum`` form), :class:`PositionalEncoding`,
  :class:`TransformerInputBlock`, :class:`RotaryEmbedding`,
  :class:`GroupedQueryAttention`, :class:`MultiHeadLatentAttention`,
  :class:`CrossAttention`; :mod:`attn.layers.core` is the forward pass they share.
- :mod:`attn.cache`: what a decoder keeps between steps: :class:`KVCache` (and
  :func:`kv_cache_bytes`, its size) and :class:`PagedKVCache`, the cache in blocks of a
  shared pool.
- :mod:`attn.models`: the toy models the book trains while it builds, each with its
  data and its metrics: :class:`TinyLM` (:mod:`attn.models.tiny_lm`),
  :mod:`attn.models.seq2seq`, :mod:`attn.models.circuits`,
  :mod:`attn.models.two_relations`, :mod:`attn.models.recall`; and
  :mod:`attn.models.train`, the one training loop they all use.
- :mod:`attn.serving`: a small serving engine over :class:`TinyLM`.
- :mod:`attn.viz`: the shared heatmap (:mod:`attn.viz.plot`) and the diagrams of the
  mechanism (:mod:`attn.viz.diagrams`); matplotlib is imported only when drawing.
- :mod:`attn.exercises`: checks of the reader's own code, chapter by chapter;
  :mod:`attn.measure`, the time and memory measurements of chapter 12;
  :func:`journey`, the six-token example sentence of Raschka, *Build a Large Language
  Model (From Scratch)* (Manning 2024), chapter 3.

Depends only on PyTorch.

How the code is laid out (new code follows the same pattern):

- **Check once, where the user calls in.** A public function, a constructor and a
  module's ``forward`` check their arguments with :mod:`attn._checks` (``TypeError``
  for a wrong kind of object or dtype, ``ValueError`` for a wrong value or shape, each
  message naming the argument and what was expected). A ``forward`` (or a model's
  ``generate``) is a door, ``@_checks.door(check)``: it runs ``check`` on its arguments
  only when it is the outermost checked call, and its body runs inside
  ``_checks.checked()``, so the layers it calls as modules (``self.attn(...)``, which
  fires their hooks) skip their checks. Nothing is checked twice on the way down, no
  checked function runs inside a decoding loop, and nothing on the fast path waits for
  a tensor's value on the host (no ``bool(tensor)``, ``.item()``). The functional API
  keeps unchecked kernels for the modules: ``scaled_dot_product_attention`` ->
  ``functional._attention``, ``attention_weights`` -> ``functional._weights``,
  ``masked_softmax`` -> ``functional._masked_softmax``, ``RotaryEmbedding.forward`` ->
  ``_rotate``.
- **One attention core.** :mod:`attn.layers.core` is the forward pass of every attention
  layer: ``attend(m, x, *, cache, positions, mask, context, return_weights)`` projects
  and splits into heads (``project``, with :func:`attn.functional.split_heads`), rotates
  (``m.rope``), appends to the cache, builds the bottom-right causal mask of the new
  tokens, makes one attention call (``enable_gqa`` when ``m`` has fewer key-value heads
  than query heads; no mask when every key is visible) and merges the heads
  (``attend_heads``). :class:`MultiHeadAttention`, :class:`GroupedQueryAttention` and
  :class:`CrossAttention` call it; the circuits layer and
  :class:`MultiHeadLatentAttention` use its pieces; a new attention layer should too.
  The book's step-by-step classes (``SelfAttentionV1`` to ``MultiHeadAttentionWrapper``,
  ``SeqFirstMultiHeadAttention``) keep the code the chapters teach.
- **A cache is any object with** ``update(k, v) -> (k_all, v_all)`` **and** ``len()``.
  It owns the check that new keys fit the ones it holds (batch, heads, head width,
  dtype) and keeps copies, never the caller's tensors; the module checks only that it
  is such an object and has room (``len(cache) + T <= context_length``).
- **No import inside a function, no import circle, no floor importing a floor below
  it** (``tests/attn/test_one_hop.py``): ``_checks`` imports nothing of the package;
  ``ops`` imports ``_checks``; ``functional`` imports ``ops``; ``layers`` import
  ``functional`` and ``layers.core``; ``cache`` imports only ``_checks``; ``models``
  import layers and caches; ``serving`` imports a model. (:mod:`attn.viz.plot` and
  :mod:`attn.viz.diagrams` import matplotlib and numpy inside their functions, on
  purpose: ``import attn`` needs only PyTorch; ``pip install attn[plot]`` adds them.)
"""
from . import cache, functional, layers, models, ops, viz
from .cache.kv_cache import KVCache, kv_cache_bytes
from .cache.paged_cache import PagedKVCache
from .data import journey
from .layers.causal import CausalAttention
from .layers.cross_attention import CrossAttention
from .layers.einsum import PrepareForMultiHeadAttention, SeqFirstMultiHeadAttention
from .layers.grouped_query import GroupedQueryAttention, mean_pool_kv_heads
from .layers.input_block import TransformerInputBlock
from .layers.latent import MultiHeadLatentAttention, latent_cache_bytes
from .layers.multihead import MultiHeadAttention, MultiHeadAttentionWrapper
from .layers.positional import PositionalEncoding
from .layers.rope import RotaryEmbedding
from .layers.self_attention import SelfAttentionV1, SelfAttentionV2
from .models.tiny_lm import TinyLM

__all__ = [
    "functional",
    "ops",
    "layers",
    "cache",
    "models",
    "viz",
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
    "TinyLM",
]
