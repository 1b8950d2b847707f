"""The package against PyTorch's own attention and its formulations against each other.

Forward and backward (gradients), float32 and float64. Tolerances (documented in TOL):
float32 atol=2e-5, rtol=2e-4 (different summation orders of a few dozen terms);
float64 atol=1e-10, rtol=1e-8.
"""
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st
from torch.testing import assert_close

import attn
import attn.functional as AF

TOL = {
    torch.float32: dict(atol=2e-5, rtol=2e-4),  # float32
    torch.float64: dict(atol=1e-10, rtol=1e-8),  # float64
}
DTYPES = [torch.float32, torch.float64]


def _torch_mha_from(mha, bias):
    """A torch.nn.MultiheadAttention holding the same weights as an attn.MultiHeadAttention."""
    d = mha.d_out
    ref = torch.nn.MultiheadAttention(d, mha.num_heads, bias=bias, batch_first=True)
    ref = ref.to(mha.W_query.weight.dtype)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        ref.out_proj.weight.copy_(mha.out_proj.weight)
        if bias:
            ref.in_proj_bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]))
            ref.out_proj.bias.copy_(mha.out_proj.bias)
    return ref


def _lengths(B, T, g):
    return torch.randint(1, T + 1, (B,), generator=g)  # >= 1 real token: no empty row in torch


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("padding", [False, True])
@pytest.mark.parametrize("return_weights", [False, True])
def test_multihead_matches_torch(dtype, bias, causal, padding, return_weights):
    g = torch.Generator().manual_seed(7)
    B, T, d, h = 3, 7, 12, 3
    torch.manual_seed(0)
    mha = attn.MultiHeadAttention(d, d, 16, 0.0, h, qkv_bias=bias, causal=causal, out_bias=bias).to(dtype)
    ref = _torch_mha_from(mha, bias)
    x = torch.randn(B, T, d, generator=g, dtype=dtype, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_(True)
    kpm = AF.padding_mask(_lengths(B, T, g), T) if padding else None

    got = mha(x, key_padding_mask=kpm, return_weights=return_weights)
    want, want_w = ref(
        x_ref, x_ref, x_ref,
        key_padding_mask=None if kpm is None else ~kpm,  # torch: True = ignore
        attn_mask=~AF.causal_mask(T) if causal else None,  # torch: True = not allowed
        need_weights=True, average_attn_weights=False,
    )
    if return_weights:
        got, got_w = got
        assert_close(got_w, want_w, **TOL[dtype])
    assert_close(got, want, **TOL[dtype])

    g_out = torch.randn(B, T, d, generator=g, dtype=dtype)
    got.backward(g_out)
    want.backward(g_out)
    assert_close(x.grad, x_ref.grad, **TOL[dtype])
    w_grad = torch.cat([mha.W_query.weight.grad, mha.W_key.weight.grad, mha.W_value.weight.grad])
    assert_close(w_grad, ref.in_proj_weight.grad, **TOL[dtype])
    assert_close(mha.out_proj.weight.grad, ref.out_proj.weight.grad, **TOL[dtype])
    if bias:
        b_grad = torch.cat([mha.W_query.bias.grad, mha.W_key.bias.grad, mha.W_value.bias.grad])
        assert_close(b_grad, ref.in_proj_bias.grad, **TOL[dtype])


def _qkv(g, dtype, batch, T_q, T_k, d_k, d_v):
    q = torch.randn(*batch, T_q, d_k, generator=g, dtype=dtype, requires_grad=True)
    k = torch.randn(*batch, T_k, d_k, generator=g, dtype=dtype, requires_grad=True)
    v = torch.randn(*batch, T_k, d_v, generator=g, dtype=dtype, requires_grad=True)
    return q, k, v


def _grads(out, inputs, g_out):
    return torch.autograd.grad(out, inputs, g_out)


@given(
    seed=st.integers(0, 2**16),
    batch=st.lists(st.integers(1, 3), min_size=0, max_size=2),
    T_q=st.integers(1, 9),
    T_k=st.integers(1, 9),
    d_k=st.integers(1, 8),
    d_v=st.integers(1, 8),
    masked=st.booleans(),
    is_causal=st.booleans(),
    dtype=st.sampled_from(DTYPES),
)
def test_functional_matches_torch_sdpa(seed, batch, T_q, T_k, d_k, d_v, masked, is_causal, dtype):
    g = torch.Generator().manual_seed(seed)
    q, k, v = _qkv(g, dtype, batch, T_q, T_k, d_k, d_v)
    mask = None
    if masked:
        mask = torch.rand(*batch, T_q, T_k, generator=g) < 0.7
        mask[..., 0] = True  # every query keeps key 0: no empty rows, where torch and we agree anyway
    want = F.scaled_dot_product_attention(
        q, k, v,
        attn_mask=(mask if not is_causal else mask & AF.causal_mask(T_q, T_k)) if masked else None,
        is_causal=is_causal and not masked,
    )
    fast = AF.scaled_dot_product_attention(q, k, v, mask, is_causal=is_causal)
    explicit, w = AF.scaled_dot_product_attention(q, k, v, mask, is_causal=is_causal, return_weights=True)
    assert_close(fast, want, **TOL[dtype])
    assert_close(explicit, want, **TOL[dtype])
    assert_close(w, AF.attention_weights(q, k, mask, is_causal=is_causal), **TOL[dtype])
    g_out = torch.randn(want.shape, generator=g, dtype=dtype)
    want_grads = _grads(want, (q, k, v), g_out)
    for got in (fast, explicit):
        for a, b in zip(_grads(got, (q, k, v), g_out), want_grads):
            assert_close(a, b, **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_functional_custom_scale(dtype):
    g = torch.Generator().manual_seed(3)
    q, k, v = _qkv(g, dtype, (2,), 5, 6, 4, 3)
    want = F.scaled_dot_product_attention(q, k, v, scale=0.3)
    assert_close(AF.scaled_dot_product_attention(q, k, v, scale=0.3), want, **TOL[dtype])
    out, _ = AF.scaled_dot_product_attention(q, k, v, scale=0.3, return_weights=True)
    assert_close(out, want, **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("qkv_bias", [False, True])
def test_wrapper_equals_fused_with_assembled_weights(dtype, qkv_bias):
    torch.manual_seed(1)
    d_in, d_head, h, ctx = 5, 3, 4, 10
    wrapper = attn.MultiHeadAttentionWrapper(d_in, d_head, ctx, 0.0, h, qkv_bias=qkv_bias).to(dtype)
    fused = attn.MultiHeadAttention(d_in, h * d_head, ctx, 0.0, h, qkv_bias=qkv_bias, out_bias=False).to(dtype)
    with torch.no_grad():
        for name in ("W_query", "W_key", "W_value"):
            mine = getattr(fused, name)
            # head i owns rows i*d_head:(i+1)*d_head of the fused projection
            mine.weight.copy_(torch.cat([getattr(head, name).weight for head in wrapper.heads]))
            if qkv_bias:
                mine.bias.copy_(torch.cat([getattr(head, name).bias for head in wrapper.heads]))
        fused.out_proj.weight.copy_(torch.eye(h * d_head, dtype=dtype))  # concatenation, no mixing
    x = torch.randn(2, 8, d_in, dtype=dtype, requires_grad=True)
    for return_weights in (False, True):
        a = wrapper(x, return_weights=return_weights)
        b = fused(x, return_weights=return_weights)
        if return_weights:
            (a, wa), (b, wb) = a, b
            assert_close(wa, wb, **TOL[dtype])
        assert_close(a, b, **TOL[dtype])
        g_out = torch.randn_like(a)
        wrapper.zero_grad()
        fused.zero_grad()
        ga = torch.autograd.grad(a, x, g_out, retain_graph=True)[0]
        gb = torch.autograd.grad(b, x, g_out, retain_graph=True)[0]
        assert_close(ga, gb, **TOL[dtype])
        a.backward(g_out)
        b.backward(g_out)
        for name in ("W_query", "W_key", "W_value"):
            heads_grad = torch.cat([getattr(head, name).weight.grad for head in wrapper.heads])
            assert_close(heads_grad, getattr(fused, name).weight.grad, **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding"])
def test_einsum_sequence_first_equals_batch_first(dtype, bias, mask_kind):
    torch.manual_seed(2)
    B, T, d, h = 3, 6, 8, 2
    mha = attn.MultiHeadAttention(d, d, T, 0.0, h, qkv_bias=bias, causal=mask_kind == "causal", out_bias=bias)
    mha = mha.to(dtype)
    seq = attn.SeqFirstMultiHeadAttention(h, d, dropout=0.0, bias=bias, out_bias=bias).to(dtype).load_from(mha)
    x = torch.randn(B, T, d, dtype=dtype, requires_grad=True)
    kpm, mask = None, None
    if mask_kind == "causal":
        mask = AF.causal_mask(T)[:, :, None]  # [seq_q, seq_k, 1]
    elif mask_kind == "padding":
        kpm = AF.padding_mask([T, 2, 4], T)  # (B, T)
        mask = kpm.T[None]  # (B, T) -> [1, seq_k, batch]
    want, want_w = mha(x, key_padding_mask=kpm, return_weights=True)
    xs = x.transpose(0, 1)  # (B, T, d) -> [seq, batch, d]
    got, got_w = seq(xs, xs, xs, mask=mask, return_weights=True)
    assert_close(got.transpose(0, 1), want, **TOL[dtype])
    assert_close(got_w.permute(2, 3, 0, 1), want_w, **TOL[dtype])  # [i, j, b, h] -> (b, h, i, j)
    assert_close(seq.attn, got_w.detach(), atol=0.0, rtol=0.0)  # stored copy
    assert_close(mha(x, key_padding_mask=kpm), want, **TOL[dtype])  # fast path too
    g_out = torch.randn(B, T, d, dtype=dtype)
    ga = torch.autograd.grad(got.transpose(0, 1), x, g_out)[0]
    gb = torch.autograd.grad(want, x, g_out)[0]
    assert_close(ga, gb, **TOL[dtype])


def test_einsum_load_from_refuses_missing_bias():
    mha = attn.MultiHeadAttention(8, 8, 4, 0.0, 2, qkv_bias=True)
    seq = attn.SeqFirstMultiHeadAttention(2, 8, bias=False)
    with pytest.raises(ValueError, match="bias"):
        seq.load_from(mha)
    with pytest.raises(TypeError, match="mha"):
        seq.load_from(torch.nn.Linear(8, 8))
    with pytest.raises(ValueError, match="num_heads"):
        attn.SeqFirstMultiHeadAttention(4, 8).load_from(mha)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("module", ["causal", "v1", "v2", "mha", "wrapper"])
def test_modules_match_functional(dtype, module):
    torch.manual_seed(4)
    x = torch.randn(2, 5, 6, dtype=dtype)
    if module == "causal":
        m = attn.CausalAttention(6, 4, 8, 0.0).to(dtype)
        q, k, v = m.W_query(x), m.W_key(x), m.W_value(x)
        want = AF.scaled_dot_product_attention(q, k, v, is_causal=True)
    elif module == "v1":
        m = attn.SelfAttentionV1(6, 4).to(dtype)
        want = AF.scaled_dot_product_attention(x @ m.W_query, x @ m.W_key, x @ m.W_value)
    elif module == "v2":
        m = attn.SelfAttentionV2(6, 4, qkv_bias=True).to(dtype)
        want = AF.scaled_dot_product_attention(m.W_query(x), m.W_key(x), m.W_value(x))
    elif module == "mha":
        m = attn.MultiHeadAttention(6, 4, 8, 0.0, 2).to(dtype)
        split = lambda t: t.view(2, 5, 2, 2).transpose(1, 2)  # (B, T, 4) -> (B, 2, T, 2)
        out = AF.scaled_dot_product_attention(split(m.W_query(x)), split(m.W_key(x)), split(m.W_value(x)), is_causal=True)
        want = m.out_proj(out.transpose(1, 2).reshape(2, 5, 4))
    else:
        m = attn.MultiHeadAttentionWrapper(6, 2, 8, 0.0, 3).to(dtype)
        want = torch.cat([AF.scaled_dot_product_attention(hd.W_query(x), hd.W_key(x), hd.W_value(x), is_causal=True)
                          for hd in m.heads], dim=-1)
    assert_close(m(x), want, **TOL[dtype])
    z, w = m(x, return_weights=True)
    assert_close(z, want, **TOL[dtype])
    # unbatched input gives the batch's first row
    z0 = m(x[0])
    assert_close(z0, want[0], **TOL[dtype])
