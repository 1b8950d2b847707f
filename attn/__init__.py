"""attn: the attention mechanism of Transformers, one small module per idea.

Modules, in the order the book teaches them:

- :mod:`attn.functional` (``import attn.functional as AF``): scaled dot-product
  attention, masks, the simplified (weight-free) self-attention;
- :class:`SelfAttentionV1`, :class:`SelfAttentionV2`: trainable weights;
- :class:`CausalAttention`: masked attention with dropout;
- :class:`MultiHeadAttentionWrapper`, :class:`MultiHeadAttention`: several heads;
  :mod:`attn.core`: the forward pass every attention layer shares;
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
- **One attention core.** :mod:`attn.core` is the forward pass of every attention
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
- **No import inside a function, no import circle** (``tests/attn/test_one_hop.py``):
  ``_checks`` imports nothing of the package; ``functional`` imports ``bias`` and
  ``tiled``; ``core`` imports ``functional``; modules import ``core``, ``functional`` and
  the modules they build on. (:mod:`attn.plot` and :mod:`attn.diagrams` import
  matplotlib and numpy inside their functions, on purpose: ``import attn`` needs only
  PyTorch; ``pip install attn[plot]`` adds them.)
"""
from . import core, diagrams, functional, linear, plot, seq2seq
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
    "core",
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
