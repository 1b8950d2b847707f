"""attn.PagedKVCache: blocks of a shared pool, the same outputs as attn.KVCache.

The paged cache stores the same numbers as the contiguous one and gathers them back in
position order, so the modules' outputs are compared with float tolerances of a few ulps
(float32 atol=1e-6, rtol=1e-5; float64 atol=1e-12, rtol=1e-10); the gathered keys and
values themselves must be equal exactly.
"""
import math

import pytest
import torch

import attn

TOL = {torch.float32: dict(atol=1e-6, rtol=1e-5), torch.float64: dict(atol=1e-12, rtol=1e-10)}
DTYPES = [torch.float32, torch.float64]


def _layers(dtype):
    torch.manual_seed(0)
    return {
        "MultiHeadAttention": attn.MultiHeadAttention(6, 8, 24, 0.0, 2, qkv_bias=True).to(dtype).eval(),
        "GroupedQueryAttention": attn.GroupedQueryAttention(6, 8, 24, 0.0, 4, 2, rope_base=100.0).to(dtype).eval(),
    }


@pytest.mark.parametrize("dtype", DTYPES)
def test_update_returns_exactly_the_contiguous_keys_and_values(dtype):
    g = torch.Generator().manual_seed(1)
    paged, contiguous = attn.PagedKVCache(40, 4), attn.KVCache()
    for n in (5, 1, 1, 7, 3):
        k, v = torch.randn(2, 3, n, 8, generator=g, dtype=dtype), torch.randn(2, 3, n, 8, generator=g, dtype=dtype)
        kp, vp = paged.update(k, v)
        kc, vc = contiguous.update(k, v)
        assert torch.equal(kp, kc) and torch.equal(vp, vc)


def test_positions_live_in_their_blocks_and_slots():
    """Position p of sequence b is in slot p % s of block block_tables[b][p // s]."""
    cache = attn.PagedKVCache(num_blocks=10, block_size=3)
    k = torch.arange(2 * 7, dtype=torch.float32).view(2, 1, 7, 1)  # k[b, 0, p, 0] = 7 b + p
    cache.update(k[:, :, :4], k[:, :, :4])
    cache.update(k[:, :, 4:], k[:, :, 4:])
    assert [len(t) for t in cache.block_tables] == [3, 3]  # ceil(7 / 3) blocks each
    pool = cache._pool.k  # (num_blocks, h, s, d)
    for b, table in enumerate(cache.block_tables):
        for p in range(7):
            assert pool[table[p // 3], 0, p % 3, 0].item() == 7 * b + p
    ids = [i for t in cache.block_tables for i in t]
    assert len(set(ids)) == len(ids) and cache.free_blocks == 10 - 6


@pytest.mark.parametrize("dtype", DTYPES)
def test_nbytes_counts_every_slot_of_the_blocks_held(dtype):
    cache = attn.PagedKVCache(num_blocks=50, block_size=8)
    B, h, d_k, d_v = 3, 2, 4, 5
    assert cache.nbytes == 0
    for T in (1, 7, 8, 9, 30):
        cache.reset()
        cache.update(torch.zeros(B, h, T, d_k, dtype=dtype), torch.zeros(B, h, T, d_v, dtype=dtype))
        blocks = B * math.ceil(T / 8)
        element = torch.finfo(dtype).bits // 8
        assert cache.nbytes == blocks * h * 8 * (d_k + d_v) * element
        assert cache.free_blocks == 50 - blocks


def test_sequences_share_the_pool_and_reset_gives_blocks_back():
    first = attn.PagedKVCache(num_blocks=6, block_size=2)
    second = first.new_sequence()
    assert second.num_blocks == 6 and second.block_size == 2 and len(second) == 0
    first.update(torch.zeros(1, 4, 3), torch.zeros(1, 4, 3))  # unbatched: 2 blocks
    second.update(torch.ones(1, 5, 3), torch.ones(1, 5, 3))  # 3 blocks
    assert first.free_blocks == second.free_blocks == 1
    assert set(first.block_tables[0]).isdisjoint(second.block_tables[0])
    k, _ = first.update(torch.zeros(1, 1, 3), torch.zeros(1, 1, 3))  # position 4: block 3 of first
    assert first.free_blocks == 0 and torch.equal(k, torch.zeros(1, 5, 3))
    second.reset()
    assert second.free_blocks == 3 and len(second) == 0 and second.nbytes == 0
    k, _ = second.update(torch.full((1, 6, 3), 2.0), torch.full((1, 6, 3), 2.0))
    assert torch.equal(k, torch.full((1, 6, 3), 2.0))
    assert torch.equal(first.update(torch.zeros(1, 1, 3), torch.zeros(1, 1, 3))[0], torch.zeros(1, 6, 3))


def test_out_of_blocks_is_a_value_error_and_changes_nothing():
    cache = attn.PagedKVCache(num_blocks=3, block_size=4)
    cache.update(torch.zeros(2, 1, 4, 2), torch.zeros(2, 1, 4, 2))  # 2 sequences x 1 block
    before = ([list(t) for t in cache.block_tables], len(cache), cache.free_blocks)
    with pytest.raises(ValueError, match=r"out of blocks.*need 2 more blocks.*block_size=4.*1 of num_blocks=3 are free"):
        cache.update(torch.zeros(2, 1, 1, 2), torch.zeros(2, 1, 1, 2))
    assert ([list(t) for t in cache.block_tables], len(cache), cache.free_blocks) == before


def test_bad_inputs():
    for bad, kind in ((0, ValueError), (-1, ValueError), (2.0, TypeError), (True, TypeError)):
        with pytest.raises(kind, match="num_blocks"):
            attn.PagedKVCache(bad, 4)
        with pytest.raises(kind, match="block_size"):
            attn.PagedKVCache(4, bad)
    cache = attn.PagedKVCache(8, 2)
    with pytest.raises(TypeError, match="k must be a torch.Tensor"):
        cache.update([[1.0]], torch.zeros(1, 1, 1))
    with pytest.raises(TypeError, match="v must be a floating-point tensor"):
        cache.update(torch.zeros(1, 1, 1), torch.zeros(1, 1, 1, dtype=torch.long))
    with pytest.raises(ValueError, match=r"k and v must have shapes.*\(1, 2, 3, 4\).*\(1, 2, 2, 4\)"):
        cache.update(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 2, 4))
    with pytest.raises(ValueError, match=r"k and v must have shapes"):
        cache.update(torch.zeros(3, 4), torch.zeros(3, 4))
    cache.update(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3, 4))
    with pytest.raises(ValueError, match=r"holds \(h_kv, d_k, d_v\)=\(2, 4, 4\).*\(1, 4, 4\).*one pool per layer"):
        cache.update(torch.zeros(1, 1, 1, 4), torch.zeros(1, 1, 1, 4))
    with pytest.raises(TypeError, match="holds dtype torch.float32.*torch.float64"):
        cache.update(torch.zeros(1, 2, 1, 4, dtype=torch.float64), torch.zeros(1, 2, 1, 4, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"batch shape \(1,\).*\(2, 2, 1, 4\)"):
        cache.update(torch.zeros(2, 2, 1, 4), torch.zeros(2, 2, 1, 4))
    assert len(cache) == 3


def test_modules_check_the_context_length_with_a_paged_cache():
    m = attn.MultiHeadAttention(6, 8, 8, 0.0, 2).eval()
    cache = attn.PagedKVCache(10, 4)
    m(torch.randn(1, 6, 6), cache=cache)
    with pytest.raises(ValueError, match=r"6 positions.*T_new=3.*context_length=8"):
        m(torch.randn(1, 3, 6), cache=cache)
    with pytest.raises(ValueError, match="cache.*batch shape"):
        m(torch.randn(2, 1, 6), cache=cache)
