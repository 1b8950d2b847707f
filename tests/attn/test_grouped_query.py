"""attn.GroupedQueryAttention against PyTorch, MultiHeadAttention and itself (with a KVCache).

Tolerances: float32 atol=2e-5, rtol=2e-4 (summation orders of a few dozen terms differ
between the paths compared); float64 atol=1e-10, rtol=1e-8.
"""
import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

import attn

TOL = {
    torch.float32: dict(atol=2e-5, rtol=2e-4),
    torch.float64: dict(atol=1e-10, rtol=1e-8),
}
DTYPES = [torch.float32, torch.float64]


def _gqa(h=4, h_kv=2, d_in=6, head_dim=4, context_length=16, rope_base=None, dtype=torch.float32, seed=0, bias=True):
    torch.manual_seed(seed)
    m = attn.GroupedQueryAttention(
        d_in, h * head_dim, context_length, 0.0, h, h_kv, qkv_bias=bias, rope_base=rope_base
    )
    return m.to(dtype).eval()


def _reference(m, x):
    """Projections, then PyTorch's own GQA: scaled_dot_product_attention(enable_gqa=True)."""
    B, T, _ = x.shape
    h, g, d = m.num_heads, m.num_kv_heads, m.head_dim
    q = m.W_query(x).view(B, T, h, d).transpose(1, 2)  # (B, h, T, d)
    k = m.W_key(x).view(B, T, g, d).transpose(1, 2)  # (B, g, T, d)
    v = m.W_value(x).view(B, T, g, d).transpose(1, 2)  # (B, g, T, d)
    if m.rope is not None:
        rope = attn.RotaryEmbedding(d, max_len=m.context_length, base=m.rope.base)
        q, k = rope(q), rope(k)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)  # (B, h, T, d)
    return m.out_proj(out.transpose(1, 2).reshape(B, T, h * d))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("h, h_kv", [(4, 4), (4, 2), (4, 1), (6, 3), (6, 2)])
@pytest.mark.parametrize("rope_base", [None, 10000.0])
def test_matches_torch_enable_gqa(dtype, h, h_kv, rope_base):
    m = _gqa(h, h_kv, rope_base=rope_base, dtype=dtype)
    x = torch.randn(3, 9, 6, dtype=dtype)
    with torch.no_grad():
        assert_close(m(x), _reference(m, x), **TOL[dtype])
        z, w = m(x, return_weights=True)  # explicit path
        assert_close(z, _reference(m, x), **TOL[dtype])
    assert w.shape == (3, h, 9, 9)
    assert_close(w.sum(-1), torch.ones(3, h, 9, dtype=dtype), **TOL[dtype])
    assert (w.triu(1) == 0).all()  # causal


def test_query_head_i_reads_kv_head_i_over_group():
    """Head i of GQA equals head i of an MHA whose kv head i is kv head i // group of GQA."""
    m = _gqa(h=6, h_kv=2, dtype=torch.float64)
    x = torch.randn(2, 7, 6, dtype=torch.float64)
    mha = attn.MultiHeadAttention(6, 24, 16, 0.0, 6, qkv_bias=True).double().eval()
    d = m.head_dim
    src = torch.arange(6) // 3  # query head i -> kv head i // (6 // 2)
    with torch.no_grad():
        mha.W_query.load_state_dict(m.W_query.state_dict())
        mha.out_proj.load_state_dict(m.out_proj.state_dict())
        for mine, theirs in ((mha.W_key, m.W_key), (mha.W_value, m.W_value)):
            W = theirs.weight.view(2, d, 6)[src].reshape(24, 6)  # (h_kv*d, d_in) -> (h*d, d_in)
            b = theirs.bias.view(2, d)[src].reshape(24)
            mine.weight.copy_(W)
            mine.bias.copy_(b)
        assert_close(m(x), mha(x), **TOL[torch.float64])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias", [False, True])
def test_num_kv_heads_equal_num_heads_is_multi_head_attention(dtype, bias):
    m = _gqa(h=4, h_kv=4, dtype=dtype, bias=bias)
    mha = attn.MultiHeadAttention(6, 16, 16, 0.0, 4, qkv_bias=bias).to(dtype).eval()
    mha.load_state_dict(m.state_dict(), strict=False)  # same names, same shapes
    for name in ("W_query", "W_key", "W_value", "out_proj"):
        assert_close(getattr(mha, name).weight, getattr(m, name).weight, atol=0, rtol=0)
    x = torch.randn(2, 10, 6, dtype=dtype)
    with torch.no_grad():
        assert_close(m(x), mha(x), **TOL[dtype])
        _, w_gqa = m(x, return_weights=True)
        _, w_mha = mha(x, return_weights=True)
    assert_close(w_gqa, w_mha, **TOL[dtype])


def test_attributes_created_in_order_and_sizes():
    m = attn.GroupedQueryAttention(10, 32, 8, 0.0, num_heads=8, num_kv_heads=2)
    names = [n for n, _ in m.named_children()][:4]
    assert names == ["W_query", "W_key", "W_value", "out_proj"]
    assert m.W_query.weight.shape == (32, 10)
    assert m.W_key.weight.shape == m.W_value.weight.shape == (2 * 4, 10)  # num_kv_heads * head_dim
    assert m.out_proj.weight.shape == (32, 32)
    mqa = attn.GroupedQueryAttention(10, 32, 8, 0.0, num_heads=8, num_kv_heads=1)
    assert mqa.W_key.weight.shape == (4, 10)  # multi-query: one key head


def _chunks(draw_sizes, T):
    """Chunk sizes, from the drawn ones, that add up to exactly T."""
    sizes, left = [], T
    for s in draw_sizes:
        if left == 0:
            break
        sizes.append(min(s, left))
        left -= sizes[-1]
    if left:
        sizes.append(left)
    return sizes


def test_cached_weights_see_every_cached_position_and_causally_the_new_ones():
    m = _gqa(dtype=torch.float64)
    x = torch.randn(1, 9, 6, dtype=torch.float64)
    cache = attn.KVCache()
    with torch.no_grad():
        m(x[:, :5], cache=cache)
        z, w = m(x[:, 5:], cache=cache, return_weights=True)  # 4 new queries, 9 keys
        z_whole, w_whole = m(x, return_weights=True)
    assert w.shape == (1, 4, 4, 9)
    assert_close(w, w_whole[:, :, 5:], **TOL[torch.float64])
    assert_close(z, z_whole[:, 5:], **TOL[torch.float64])
    allowed = torch.ones(4, 9, dtype=torch.bool).tril(5)  # query 5+i sees keys 0..5+i
    assert (w[..., ~allowed] == 0).all() and (w[..., allowed] > 0).all()


def test_unbatched_input_with_cache():
    m = _gqa(rope_base=10000.0, dtype=torch.float64)
    x = torch.randn(7, 6, dtype=torch.float64)
    cache = attn.KVCache()
    with torch.no_grad():
        out = torch.cat([m(x[:3], cache=cache), m(x[3:], cache=cache)])
        assert_close(out, m(x), **TOL[torch.float64])
    assert out.shape == (7, 16)


def test_rope_rotates_queries_and_keys():
    """The same weights (same seed) with and without rope_base give different outputs."""
    x = torch.randn(1, 8, 6)
    with torch.no_grad():
        assert not torch.allclose(_gqa(rope_base=10000.0)(x), _gqa()(x))  # same weights (seed)


def test_dropout_only_in_training():
    m = attn.GroupedQueryAttention(6, 8, 8, 0.5, 2, 1)
    x = torch.randn(2, 8, 6)
    m.eval()
    with torch.no_grad():
        assert_close(m(x), m(x), atol=0, rtol=0)
    m.train()
    torch.manual_seed(0)
    a = m(x)
    torch.manual_seed(1)
    assert not torch.allclose(a, m(x))


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "kwargs, exc, words",
    [
        (dict(num_heads=4, num_kv_heads=3), ValueError, "num_heads must be divisible by num_kv_heads"),
        (dict(num_heads=3, num_kv_heads=1), ValueError, "d_out must be divisible by num_heads"),
        (dict(num_kv_heads=0), ValueError, "num_kv_heads"),
        (dict(num_kv_heads=2.0), TypeError, "num_kv_heads"),
        (dict(rope_base=1.0), ValueError, "rope_base"),
        (dict(rope_base="10000"), TypeError, "rope_base"),
        (dict(d_out=12, num_heads=4, num_kv_heads=2, rope_base=10000.0), ValueError, "even head_dim"),
        (dict(dropout=1.0), ValueError, "dropout"),
        (dict(qkv_bias=1), TypeError, "qkv_bias"),
    ],
)
def test_constructor_errors(kwargs, exc, words):
    args = dict(d_in=4, d_out=8, context_length=8, dropout=0.0, num_heads=4, num_kv_heads=2)
    args.update(kwargs)
    with pytest.raises(exc, match=words):
        attn.GroupedQueryAttention(**args)


def test_cache_longer_than_context_length_is_an_error():
    m = _gqa(context_length=6)
    cache = attn.KVCache()
    m(torch.randn(2, 4, 6), cache=cache)
    with pytest.raises(ValueError, match=r"cache holds 4 positions and x adds T_new=3: 7 .* context_length=6"):
        m(torch.randn(2, 3, 6), cache=cache)
    assert len(cache) == 4  # unchanged
    m(torch.randn(2, 2, 6), cache=cache)  # exactly context_length is fine
    with pytest.raises(ValueError, match="context_length"):
        m(torch.randn(2, 1, 6), cache=cache)


@pytest.mark.parametrize(
    "other, words",
    [
        (dict(B=3), "batch size B=2"),
        (dict(h_kv=1), "number of key-value heads h_kv=2"),
        (dict(head_dim=2, h=8), "head_dim=4"),
    ],
)
def test_cache_of_another_batch_or_layer_is_an_error(other, words):
    m = _gqa()
    cache = attn.KVCache()
    m(torch.randn(2, 3, 6), cache=cache)
    B = other.get("B", 2)
    m2 = m if "B" in other else _gqa(h=other.get("h", 4), h_kv=other.get("h_kv", 2), head_dim=other.get("head_dim", 4))
    with pytest.raises(ValueError, match=words):
        m2(torch.randn(B, 1, 6), cache=cache)
    assert len(cache) == 3


def test_cache_argument_type_and_dtype():
    m = _gqa()
    with pytest.raises(TypeError, match="cache must be an attn.KVCache"):
        m(torch.randn(2, 3, 6), cache=[])
    cache = attn.KVCache()
    m(torch.randn(2, 3, 6), cache=cache)
    m64 = _gqa(dtype=torch.float64)
    with pytest.raises(TypeError, match="dtype"):
        m64(torch.randn(2, 1, 6, dtype=torch.float64), cache=cache)


def test_input_errors():
    m = _gqa()
    with pytest.raises(ValueError, match="last dimension d_in=6"):
        m(torch.randn(2, 3, 5))
    with pytest.raises(ValueError, match="context_length"):
        m(torch.randn(2, 17, 6))
    with pytest.raises(TypeError, match="dtype"):
        m(torch.randn(2, 3, 6, dtype=torch.float64))
    with pytest.raises(TypeError, match="return_weights"):
        m(torch.randn(2, 3, 6), return_weights=1)
