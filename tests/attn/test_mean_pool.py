"""attn.mean_pool_kv_heads: MHA/GQA -> GQA by averaging key/value heads (Ainslie et al., 2023).

Tolerances: float64 atol=1e-10, rtol=1e-8 (the compared paths add a few dozen terms in
different orders); float32 atol=2e-5, rtol=2e-4.
"""
import copy

import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

import attn

F64 = dict(atol=1e-10, rtol=1e-8)


def _mha(h=4, d_in=6, head_dim=3, bias=True, seed=0):
    torch.manual_seed(seed)
    return attn.MultiHeadAttention(d_in, h * head_dim, 16, 0.0, h, qkv_bias=bias).double().eval()


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("h, h_kv", [(4, 4), (4, 2), (4, 1), (6, 3), (6, 2)])
def test_output_is_attention_with_averaged_keys_and_values(h, h_kv, bias):
    """Pooled layer == projections of the MHA, keys/values averaged per group, then enable_gqa."""
    mha = _mha(h=h, bias=bias)
    gqa = attn.mean_pool_kv_heads(mha, h_kv)
    assert isinstance(gqa, attn.GroupedQueryAttention)
    assert (gqa.num_heads, gqa.num_kv_heads, gqa.head_dim) == (h, h_kv, mha.head_dim)
    assert gqa.W_key.weight.shape == (h_kv * mha.head_dim, 6)
    x = torch.randn(3, 9, 6, dtype=torch.float64)
    B, T, d = 3, 9, mha.head_dim
    with torch.no_grad():
        q = mha.W_query(x).view(B, T, h, d).transpose(1, 2)  # (B, h, T, d)
        k = mha.W_key(x).view(B, T, h_kv, h // h_kv, d).mean(dim=3).transpose(1, 2)  # (B, h_kv, T, d)
        v = mha.W_value(x).view(B, T, h_kv, h // h_kv, d).mean(dim=3).transpose(1, 2)  # (B, h_kv, T, d)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)  # (B, h, T, d)
        ref = mha.out_proj(out.transpose(1, 2).reshape(B, T, h * d))
        assert_close(gqa(x), ref, **F64)


def test_no_pooling_keeps_the_function():
    mha = _mha(h=4)
    x = torch.randn(2, 7, 6, dtype=torch.float64)
    with torch.no_grad():
        assert_close(attn.mean_pool_kv_heads(mha, 4)(x), mha(x), **F64)


def test_equal_heads_lose_nothing():
    """When the heads of each group already share keys and values, pooling changes nothing."""
    torch.manual_seed(1)
    src = attn.GroupedQueryAttention(6, 12, 16, 0.0, 4, 2, qkv_bias=True).double().eval()
    mha = _mha(h=4, bias=True)
    with torch.no_grad():
        mha.W_query.load_state_dict(src.W_query.state_dict())
        mha.out_proj.load_state_dict(src.out_proj.state_dict())
        for mine, theirs in ((mha.W_key, src.W_key), (mha.W_value, src.W_value)):
            mine.weight.copy_(theirs.weight.view(2, 3, 6).repeat_interleave(2, dim=0).reshape(12, 6))
            mine.bias.copy_(theirs.bias.view(2, 3).repeat_interleave(2, dim=0).reshape(12))
    x = torch.randn(2, 7, 6, dtype=torch.float64)
    with torch.no_grad():
        assert_close(mha(x), src(x), **F64)  # the construction above is right
        assert_close(attn.mean_pool_kv_heads(mha, 2)(x), src(x), **F64)


def test_gqa_to_mqa_with_rope_and_cache():
    """Pooling a GQA layer with RoPE: same as averaging its rotated keys; works with a cache."""
    torch.manual_seed(2)
    gqa = attn.GroupedQueryAttention(8, 16, 12, 0.0, 4, 2, rope_base=100.0).double().eval()
    mqa = attn.mean_pool_kv_heads(gqa, 1)
    assert mqa.rope is not None and mqa.rope.base == 100.0
    x = torch.randn(2, 10, 8, dtype=torch.float64)
    with torch.no_grad():
        B, T, d = 2, 10, 4
        q = gqa.rope(gqa.W_query(x).view(B, T, 4, d).transpose(1, 2))  # (B, 4, T, d)
        k = gqa.rope(gqa.W_key(x).view(B, T, 2, d).transpose(1, 2)).mean(dim=1, keepdim=True)  # (B, 1, T, d)
        v = gqa.W_value(x).view(B, T, 2, d).transpose(1, 2).mean(dim=1, keepdim=True)  # (B, 1, T, d)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        assert_close(mqa(x), gqa.out_proj(out.transpose(1, 2).reshape(B, T, 16)), **F64)
        cache = attn.KVCache()
        chunks = torch.cat([mqa(x[:, :6], cache=cache), mqa(x[:, 6:], cache=cache)], dim=1)
        assert_close(chunks, mqa(x), **F64)
    assert cache.k.shape == (2, 1, 10, 4)


def test_source_unchanged_copies_dtype_mode_and_out_bias():
    mha = attn.MultiHeadAttention(6, 12, 16, 0.25, 4, out_bias=False).train()
    before = copy.deepcopy(mha.state_dict())
    gqa = attn.mean_pool_kv_heads(mha, 2)
    for name, t in mha.state_dict().items():
        assert torch.equal(t, before[name]), name
    assert gqa.training and gqa.dropout.p == 0.25 and gqa.rope is None
    assert gqa.W_query.bias is None and gqa.W_key.bias is None
    assert torch.equal(gqa.out_proj.bias, torch.zeros(12))  # no bias before: a zero bias now
    assert attn.mean_pool_kv_heads(mha.double().eval(), 1).W_key.weight.dtype == torch.float64
    assert not attn.mean_pool_kv_heads(mha.eval(), 1).training
    # the result is trainable on its own: its parameters are not the source's
    assert all(p.requires_grad for p in gqa.parameters())
    assert gqa.W_query.weight.data_ptr() != mha.W_query.weight.data_ptr()


def test_bad_input():
    mha = attn.MultiHeadAttention(6, 12, 16, 0.0, 4)
    with pytest.raises(ValueError, match="num_kv_heads must divide the module's 4 key-value heads"):
        attn.mean_pool_kv_heads(mha, 3)
    with pytest.raises(ValueError, match="num_kv_heads must divide"):
        attn.mean_pool_kv_heads(attn.GroupedQueryAttention(6, 12, 16, 0.0, 4, 2), 4)
    with pytest.raises(ValueError, match="num_kv_heads"):
        attn.mean_pool_kv_heads(mha, 0)
    with pytest.raises(TypeError, match="num_kv_heads"):
        attn.mean_pool_kv_heads(mha, 2.0)
    with pytest.raises(TypeError, match="module must be"):
        attn.mean_pool_kv_heads(torch.nn.Linear(4, 4), 1)
    with pytest.raises(ValueError, match="causal"):
        attn.mean_pool_kv_heads(attn.MultiHeadAttention(6, 12, 16, 0.0, 4, causal=False), 2)
