"""attn.KVCache, and MultiHeadAttention's cache= argument.

Tolerances: float32 atol=2e-5, rtol=2e-4 (summation orders of a few dozen terms differ
between one call and chunked calls); float64 atol=1e-10, rtol=1e-8.
"""
import pytest
import torch
from torch.testing import assert_close

import attn

TOL = {
    torch.float32: dict(atol=2e-5, rtol=2e-4),
    torch.float64: dict(atol=1e-10, rtol=1e-8),
}
DTYPES = [torch.float32, torch.float64]


def _mha(dtype=torch.float32, context_length=16, bias=True, causal=True):
    torch.manual_seed(0)
    m = attn.MultiHeadAttention(6, 8, context_length, 0.0, 2, qkv_bias=bias, causal=causal)
    return m.to(dtype).eval()


def test_mha_one_token_at_a_time_matches_torch_multihead_attention():
    """Decoding token by token with the cache gives nn.MultiheadAttention's causal output."""
    torch.manual_seed(0)
    m = attn.MultiHeadAttention(8, 8, 10, 0.0, 2, qkv_bias=True).double().eval()
    ref = torch.nn.MultiheadAttention(8, 2, bias=True, batch_first=True).double().eval()
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([m.W_query.weight, m.W_key.weight, m.W_value.weight]))
        ref.in_proj_bias.copy_(torch.cat([m.W_query.bias, m.W_key.bias, m.W_value.bias]))
        ref.out_proj.load_state_dict(m.out_proj.state_dict())
    x = torch.randn(3, 10, 8, dtype=torch.float64)
    future = torch.ones(10, 10, dtype=torch.bool).triu(1)  # torch's mask: True = may NOT attend
    cache = attn.KVCache()
    with torch.no_grad():
        ours = torch.cat([m(x[:, t:t + 1], cache=cache) for t in range(10)], dim=1)
        theirs, _ = ref(x, x, x, attn_mask=future, need_weights=False)
    assert_close(ours, theirs, **TOL[torch.float64])


def test_mha_cache_errors():
    m = _mha(context_length=6)
    cache = attn.KVCache()
    m(torch.randn(2, 5, 6), cache=cache)
    with pytest.raises(ValueError, match="cache holds 5 positions and x adds T_new=2: 7 positions, more than context_length=6"):
        m(torch.randn(2, 2, 6), cache=cache)
    with pytest.raises(ValueError, match="batch size B=2"):
        m(torch.randn(3, 1, 6), cache=cache)
    with pytest.raises(ValueError, match="batched and unbatched"):
        m(torch.randn(1, 6), cache=cache)
    other = attn.MultiHeadAttention(6, 8, 6, 0.0, 4)  # 4 heads of 2
    with pytest.raises(ValueError, match="number of key-value heads h_kv=2"):
        other(torch.randn(2, 1, 6), cache=cache)
    wider = attn.MultiHeadAttention(6, 12, 6, 0.0, 2)  # 2 heads of 6
    with pytest.raises(ValueError, match="head_dim=4"):
        wider(torch.randn(2, 1, 6), cache=cache)
    assert len(cache) == 5  # unchanged by the failed calls
    with pytest.raises(TypeError, match="cache must be an attn.KVCache"):
        m(torch.randn(2, 1, 6), cache={"k": None})
    with pytest.raises(ValueError, match="causal"):
        _mha(causal=False)(torch.randn(2, 1, 6), cache=attn.KVCache())
    with pytest.raises(ValueError, match="key_padding_mask cannot be combined with cache"):
        m(torch.randn(2, 1, 6), key_padding_mask=torch.ones(2, 1, dtype=torch.bool), cache=attn.KVCache())


# --------------------------------------------------------------------------- KVCache


def test_kv_cache_appends_and_reports_its_size():
    cache = attn.KVCache()
    assert len(cache) == 0 and cache.nbytes == 0 and cache.k is None
    assert "empty" in repr(cache)
    k1, v1 = torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 5)
    k, v = cache.update(k1, v1)
    assert k is cache.k and len(cache) == 4
    k2, v2 = torch.randn(2, 3, 1, 5), torch.randn(2, 3, 1, 5)
    k, v = cache.update(k2, v2)
    assert_close(k, torch.cat([k1, k2], dim=2), atol=0, rtol=0)
    assert_close(v, torch.cat([v1, v2], dim=2), atol=0, rtol=0)
    assert len(cache) == 5
    assert cache.nbytes == 2 * 2 * 3 * 5 * 5 * 4  # 2 (k, v) * B * h_kv * T * d_head * 4 bytes
    assert "T=5" in repr(cache)
    cache.reset()
    assert len(cache) == 0 and cache.v is None


def test_kv_cache_update_errors_leave_it_unchanged():
    cache = attn.KVCache()
    cache.update(torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 5))
    with pytest.raises(ValueError, match="batch size B=2"):
        cache.update(torch.randn(1, 3, 1, 5), torch.randn(1, 3, 1, 5))
    with pytest.raises(ValueError, match="h_kv=3"):
        cache.update(torch.randn(2, 1, 1, 5), torch.randn(2, 1, 1, 5))
    with pytest.raises(ValueError, match="head_dim=5"):
        cache.update(torch.randn(2, 3, 1, 4), torch.randn(2, 3, 1, 4))
    with pytest.raises(ValueError, match="k and v must have shapes"):
        cache.update(torch.randn(2, 3, 1, 5), torch.randn(2, 3, 2, 5))
    with pytest.raises(ValueError, match="k and v must have shapes"):
        cache.update(torch.randn(1, 5), torch.randn(1, 5))
    with pytest.raises(ValueError, match="batched and unbatched"):
        cache.update(torch.randn(3, 1, 5), torch.randn(3, 1, 5))
    with pytest.raises(ValueError, match="head_dim=5.*head_dim=4"):  # the values' width, d_v
        cache.update(torch.randn(2, 3, 1, 5), torch.randn(2, 3, 1, 4))
    with pytest.raises(TypeError, match="dtype"):
        cache.update(torch.randn(2, 3, 1, 5).double(), torch.randn(2, 3, 1, 5).double())
    with pytest.raises(TypeError, match="k must be a torch.Tensor"):
        cache.update([1.0], torch.randn(2, 3, 1, 5))
    assert len(cache) == 4


# --------------------------------------------------------------------------- kv_cache_bytes


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("num_kv_heads", [4, 2, 1])
def test_kv_cache_bytes_is_what_a_models_caches_hold(dtype, num_kv_heads):
    """The formula = the sum of KVCache.nbytes over the layers, after a prompt and one step."""
    from attn.models.tiny_lm import TinyLM

    torch.manual_seed(0)
    model = TinyLM(11, 16, d_model=16, num_layers=3, num_heads=4, num_kv_heads=num_kv_heads).to(dtype)
    idx = torch.randint(0, 11, (2, 7))
    caches = model.new_caches()
    with torch.no_grad():
        model(idx, caches)
        model(idx[:, :1], caches)  # one more position: T = 8
    held = sum(c.nbytes for c in caches)
    size = torch.empty((), dtype=dtype).element_size()
    layer = model.blocks[0].attn
    assert held == attn.kv_cache_bytes(3, num_kv_heads, layer.head_dim, 8, batch=2, bytes_per_element=size)
    assert held == attn.kv_cache_bytes(3, num_kv_heads, 4, 8, batch=2, bytes_per_element=size)


def test_kv_cache_bytes_formula_and_window():
    assert attn.kv_cache_bytes(32, 8, 128, 8192) == 2 * 32 * 8 * 128 * 8192 * 2 == 2**30
    assert attn.kv_cache_bytes(12, 12, 64, 1024, bytes_per_element=4, batch=3) == 2 * 12 * 12 * 64 * 1024 * 4 * 3
    assert attn.kv_cache_bytes(2, 2, 4, 0) == 0
    full = attn.kv_cache_bytes(32, 8, 128, 4096)
    for T in (4096, 4097, 32768):  # min(T, w)
        assert attn.kv_cache_bytes(32, 8, 128, T, window=4096) == full
    assert attn.kv_cache_bytes(32, 8, 128, 100, window=4096) == attn.kv_cache_bytes(32, 8, 128, 100)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(num_layers=0), ValueError, "num_layers must be a positive int, got 0"),
        (dict(num_kv_heads=-1), ValueError, "num_kv_heads must be a positive int"),
        (dict(head_dim=2.0), TypeError, "head_dim must be an int, got float"),
        (dict(seq_len=-1), ValueError, r"seq_len must be an int >= 0, got -1"),
        (dict(seq_len=torch.tensor(3)), TypeError, "seq_len must be an int, got Tensor"),
        (dict(batch=True), TypeError, "batch must be an int, got bool"),
        (dict(bytes_per_element=0), ValueError, "bytes_per_element must be a positive int"),
        (dict(window=0), ValueError, "window must be a positive int, got 0"),
        (dict(window=1.5), TypeError, "window must be an int"),
    ],
)
def test_kv_cache_bytes_errors(kwargs, error, message):
    args = dict(num_layers=2, num_kv_heads=2, head_dim=4, seq_len=3)
    args.update(kwargs)
    with pytest.raises(error, match=message):
        attn.kv_cache_bytes(**args)


def test_values_may_be_narrower_than_keys():
    """d_v may differ from d_k (attn.MultiHeadLatentAttention caches values of width 0)."""
    cache = attn.KVCache()
    k1, v1 = torch.randn(2, 1, 3, 6), torch.randn(2, 1, 3, 0)
    k2, v2 = torch.randn(2, 1, 2, 6), torch.randn(2, 1, 2, 0)
    cache.update(k1, v1)
    k, v = cache.update(k2, v2)
    assert torch.equal(k, torch.cat([k1, k2], dim=-2)) and v.shape == (2, 1, 5, 0)
    assert cache.nbytes == 2 * 5 * 6 * 4


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batched", [True, False])
def test_a_cache_with_capacity_gives_the_growing_caches_outputs(dtype, batched):
    torch.manual_seed(0)
    layers = [_mha(dtype, context_length=20),
              attn.GroupedQueryAttention(6, 8, 20, 0.0, 4, 2, rope_base=100.0).to(dtype).eval()]
    x = torch.randn(*((2, 17, 6) if batched else (17, 6)), dtype=dtype)
    for m in layers:
        grow, room = attn.KVCache(), attn.KVCache(capacity=20)
        with torch.no_grad():
            for a, b in ((0, 5), (5, 6), (6, 13), (13, 17)):
                assert torch.equal(m(x[..., a:b, :], cache=room), m(x[..., a:b, :], cache=grow))
        assert len(room) == len(grow) == 17
        assert torch.equal(room.k, grow.k) and torch.equal(room.v, grow.v)


def test_a_cache_with_capacity_allocates_once_and_writes_in_place():
    cache = attn.KVCache(capacity=10)
    assert cache.nbytes == 0 and len(cache) == 0
    k, _ = cache.update(torch.ones(2, 3, 4, 5), torch.ones(2, 3, 4, 5))
    pointer = k.data_ptr()
    assert cache.nbytes == 2 * (2 * 3 * 10 * 5 * 4)  # k and v, capacity positions, float32
    for _ in range(6):
        k, v = cache.update(torch.zeros(2, 3, 1, 5), torch.zeros(2, 3, 1, 5))
        assert k.data_ptr() == pointer and k.shape == (2, 3, len(cache), 5)
    assert len(cache) == 10 and torch.equal(k[..., :4, :], torch.ones(2, 3, 4, 5))
    cache.reset()  # keeps its memory
    assert len(cache) == 0 and cache.nbytes == 2 * (2 * 3 * 10 * 5 * 4)
    k, _ = cache.update(torch.full((2, 3, 2, 5), 7.0), torch.full((2, 3, 2, 5), 7.0))
    assert k.data_ptr() == pointer and torch.equal(k, torch.full((2, 3, 2, 5), 7.0))
    cache.reset()  # another batch size: new memory
    k, _ = cache.update(torch.ones(1, 3, 2, 5), torch.ones(1, 3, 2, 5))
    assert k.shape == (1, 3, 2, 5) and cache.nbytes == 2 * (1 * 3 * 10 * 5 * 4)


def test_more_than_capacity_is_a_value_error_and_changes_nothing():
    cache = attn.KVCache(capacity=5)
    cache.update(torch.ones(1, 2, 4, 3), torch.ones(1, 2, 4, 3))
    with pytest.raises(ValueError, match=r"holds 4 positions.*T_new=2: 6 positions.*capacity=5"):
        cache.update(torch.zeros(1, 2, 2, 3), torch.zeros(1, 2, 2, 3))
    assert len(cache) == 4 and torch.equal(cache.k, torch.ones(1, 2, 4, 3))
    with pytest.raises(ValueError, match="capacity must be a positive int"):
        attn.KVCache(capacity=0)
    with pytest.raises(TypeError, match="capacity must be an int"):
        attn.KVCache(capacity=5.0)
    m = attn.MultiHeadAttention(6, 8, 16, 0.0, 2).eval()  # context_length=16, capacity=5
    with pytest.raises(ValueError, match="capacity=5"):
        m(torch.randn(1, 6, 6), cache=attn.KVCache(capacity=5))


