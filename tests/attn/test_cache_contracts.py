"""Contracts every causal layer and every cache keep, written once (as Hugging Face's tester mixins).

* Chunked with a cache equals the whole pass: a sequence fed in chunks of any sizes through
  any cache gives the outputs (and, on the explicit path, the weights) of one call on all
  of it, for every causal layer of the package: ``MultiHeadAttention``,
  ``GroupedQueryAttention`` with ``h_kv`` in {1, 2, h}, with and without RoPE,
  ``MultiHeadLatentAttention`` (both forms) and ``TinyLM``; and every cache: ``KVCache``,
  ``KVCache(capacity=...)``, ``PagedKVCache`` (blocks of 1 and 3 positions) and any object
  with ``update`` and ``len`` (``ListCache``).
* A cache keeps no reference to the caller's tensors.

Tolerances: float32 atol=1e-5, rtol=1e-4; float64 atol=1e-10, rtol=1e-8.
"""
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.testing import assert_close

import attn
from attn.models.tiny_lm import TinyLM
from tests.helpers.caches import ListCache

TOL = {torch.float32: dict(atol=1e-5, rtol=1e-4), torch.float64: dict(atol=1e-10, rtol=1e-8)}
T_MAX = 12
D = 8


def _layer(name, dtype):
    torch.manual_seed(0)
    h = 4
    layers = {
        "MHA": lambda: attn.MultiHeadAttention(D, D, T_MAX, 0.0, h, qkv_bias=True),
        "GQA h_kv=1": lambda: attn.GroupedQueryAttention(D, D, T_MAX, 0.0, h, 1),
        "GQA h_kv=2": lambda: attn.GroupedQueryAttention(D, D, T_MAX, 0.0, h, 2),
        "GQA h_kv=h": lambda: attn.GroupedQueryAttention(D, D, T_MAX, 0.0, h, h),
        "GQA h_kv=2, RoPE": lambda: attn.GroupedQueryAttention(D, 16, T_MAX, 0.0, h, 2, rope_base=100.0),
        "GQA h_kv=h, RoPE": lambda: attn.GroupedQueryAttention(D, 16, T_MAX, 0.0, h, h, rope_base=100.0),
        "MLA": lambda: attn.MultiHeadLatentAttention(D, D, T_MAX, 2, 4, rope_head_dim=2),
        "MLA absorb": lambda: attn.MultiHeadLatentAttention(D, D, T_MAX, 2, 4, rope_head_dim=2),
        "TinyLM": lambda: TinyLM(11, T_MAX, d_model=16, num_layers=2, num_heads=4, num_kv_heads=2),
    }
    return layers[name]().to(dtype).eval()


LAYERS = ["MHA", "GQA h_kv=1", "GQA h_kv=2", "GQA h_kv=h", "GQA h_kv=2, RoPE", "GQA h_kv=h, RoPE",
          "MLA", "MLA absorb", "TinyLM"]
CACHES = {
    "KVCache": lambda: attn.KVCache(),
    "KVCache(capacity)": lambda: attn.KVCache(capacity=T_MAX),
    "PagedKVCache(block 1)": lambda: attn.PagedKVCache(num_blocks=2 * T_MAX, block_size=1),
    "PagedKVCache(block 3)": lambda: attn.PagedKVCache(num_blocks=2 * T_MAX, block_size=3),
    "ListCache": ListCache,
}


def _call(name, m, x, cache=None, return_weights=False):
    """One call of layer ``m`` (``cache``: one per layer; TinyLM takes one per block)."""
    if name == "TinyLM":
        return m(x, cache, return_weights=return_weights)
    kwargs = dict(absorb=True) if name == "MLA absorb" else {}
    return m(x, cache=cache, return_weights=return_weights, **kwargs)


def _input(name, T, dtype, batched):
    g = torch.Generator().manual_seed(T)
    if name == "TinyLM":
        return torch.randint(0, 11, (2, T), generator=g)  # (B, T) ids
    return torch.randn(*((2, T, D) if batched else (T, D)), generator=g).to(dtype)


@pytest.mark.parametrize("cache_kind", list(CACHES))
@pytest.mark.parametrize("name", LAYERS)
@settings(max_examples=6, deadline=None)
@given(sizes=st.lists(st.integers(1, 5), min_size=1, max_size=T_MAX).filter(lambda s: sum(s) <= T_MAX),
       dtype=st.sampled_from([torch.float32, torch.float64]), batched=st.booleans(),
       explicit=st.booleans())
def test_chunked_with_a_cache_equals_the_whole_pass(name, cache_kind, sizes, dtype, batched, explicit):
    m = _layer(name, dtype)
    T = sum(sizes)
    x = _input(name, T, dtype, batched)
    new = CACHES[cache_kind]
    cache = [new() for _ in m.blocks] if name == "TinyLM" else new()
    with torch.no_grad():
        whole = _call(name, m, x, return_weights=explicit)
        parts, start = [], 0
        for n in sizes:
            parts.append(_call(name, m, x[..., start:start + n] if name == "TinyLM" else x[..., start:start + n, :],
                               cache, return_weights=explicit))
            start += n
    held = cache[0] if name == "TinyLM" else cache
    assert len(held) == T
    if not explicit:
        assert_close(torch.cat(parts, dim=-2), whole, **TOL[dtype])
        return
    outs, weights = zip(*parts)
    z_whole, w_whole = whole
    assert_close(torch.cat(outs, dim=-2), z_whole, **TOL[dtype])
    start = 0
    for n, w in zip(sizes, weights):  # n new queries read every position so far
        w, w_ref = (w[-1], w_whole[-1]) if name == "TinyLM" else (w, w_whole)  # the last block's
        assert w.shape[-2:] == (n, start + n)
        assert_close(w, w_ref[..., start:start + n, :start + n], **TOL[dtype])
        start += n


@pytest.mark.parametrize("cache_kind", list(CACHES))
def test_the_cache_keeps_no_reference_to_the_callers_tensors(cache_kind):
    cache = CACHES[cache_kind]()
    k1, v1 = torch.randn(2, 2, 3, 4), torch.randn(2, 2, 3, 4)
    k1_copy, v1_copy = k1.clone(), v1.clone()
    cache.update(k1, v1)
    k1.add_(1.0)  # the caller changes its tensors afterwards
    v1.zero_()
    k2, v2 = torch.randn(2, 2, 1, 4), torch.randn(2, 2, 1, 4)
    k2_copy, v2_copy = k2.clone(), v2.clone()
    k_all, v_all = cache.update(k2, v2)
    k2.mul_(0.0)
    v2.mul_(0.0)
    assert_close(k_all, torch.cat([k1_copy, k2_copy], dim=2), atol=0, rtol=0)
    assert_close(v_all, torch.cat([v1_copy, v2_copy], dim=2), atol=0, rtol=0)
    # and a layer's cache does not hold the projections' outputs either
    m = _layer("MHA", torch.float64)
    cache = CACHES[cache_kind]()
    x = torch.randn(1, 4, D, dtype=torch.float64)
    with torch.no_grad():
        m(x[:, :3], cache=cache)
        k_held, v_held = (t[..., :3, :].clone() for t in cache.update(*_one_position()))
        m.W_key.weight.zero_()
        m.W_value.weight.zero_()
        k_all, v_all = cache.update(*_one_position())
    assert_close(k_all[..., :3, :], k_held, atol=0, rtol=0)
    assert_close(v_all[..., :3, :], v_held, atol=0, rtol=0)


def _one_position():
    """Keys and values of one more position for the MHA layer of the test above, ``(1, h, 1, d_head)``."""
    return torch.randn(1, 4, 1, 2, dtype=torch.float64), torch.randn(1, 4, 1, 2, dtype=torch.float64)
