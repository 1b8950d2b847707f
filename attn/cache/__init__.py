"""What a decoder keeps from one step to the next: the key-value caches.

A cache is any object with ``update(k, v) -> (k_all, v_all)`` and ``len()``; the layers
need nothing else of it. :mod:`attn.cache.kv_cache` holds one contiguous tensor per
layer (and :func:`~attn.cache.kv_cache.kv_cache_bytes`, its size);
:mod:`attn.cache.paged_cache` keeps the keys and values in blocks of a shared pool, as
serving engines do.
"""
from . import kv_cache, paged_cache

__all__ = ["kv_cache", "paged_cache"]
