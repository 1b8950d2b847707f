"""A float ``mask`` is added to the scores (ALiBi and other biases), on both paths,
as ``attn_mask`` of torch.nn.functional.scaled_dot_product_attention."""
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st
from torch.testing import assert_close

import attn.functional as AF

seeds = st.integers(0, 2**16)
TOL = {torch.float32: dict(atol=1e-5, rtol=1e-5), torch.float64: dict(atol=1e-10, rtol=1e-10)}


def qkv(seed, B, H, T_q, T_k, d, dtype):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(B, H, T_q, d, generator=g, dtype=dtype),
            torch.randn(B, H, T_k, d, generator=g, dtype=dtype),
            torch.randn(B, H, T_k, d + 1, generator=g, dtype=dtype))


@given(seed=seeds, H=st.integers(1, 4), T_q=st.integers(1, 7), T_k=st.integers(1, 7),
       is_causal=st.booleans(), dtype=st.sampled_from([torch.float32, torch.float64]))
def test_alibi_bias_matches_torch(seed, H, T_q, T_k, is_causal, dtype):
    q, k, v = qkv(seed, 2, H, T_q, T_k, 4, dtype)
    bias = AF.alibi_bias(H, T_q, T_k).to(dtype)  # (H, T_q, T_k), broadcast over B
    ref_mask = bias
    if is_causal:
        ref_mask = bias.masked_fill(~AF.causal_mask(T_q, T_k), float("-inf"))
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=ref_mask)
    if is_causal and T_q > T_k:  # PyTorch gives NaN on rows with no key; the package zeros
        ref = torch.nan_to_num(ref, nan=0.0)
    out = AF.scaled_dot_product_attention(q, k, v, bias, is_causal=is_causal)  # fast path
    out_e, w = AF.scaled_dot_product_attention(q, k, v, bias, is_causal=is_causal,
                                               return_weights=True)  # explicit path
    assert out.dtype == out_e.dtype == dtype
    assert_close(out, ref, **TOL[dtype])
    assert_close(out_e, ref, **TOL[dtype])
    expected_w = torch.softmax(q @ k.transpose(-2, -1) / 2.0 + ref_mask, dim=-1)  # d = 4
    assert_close(w, torch.nan_to_num(expected_w, nan=0.0), **TOL[dtype])
    assert_close(AF.attention_weights(q, k, bias, is_causal=is_causal), w, **TOL[dtype])


@given(seed=seeds, T=st.integers(1, 6))
def test_float_mask_with_neg_inf_equals_bool_mask(seed, T):
    """0 where allowed and -inf where not is the same as the boolean mask."""
    q, k, v = qkv(seed, 1, 2, T, T, 3, torch.float64)
    allowed = AF.sliding_window_mask(T, 2)
    as_float = torch.zeros(T, T, dtype=torch.float64).masked_fill(~allowed, float("-inf"))
    for return_weights in (False, True):
        a = AF.scaled_dot_product_attention(q, k, v, allowed, return_weights=return_weights)
        b = AF.scaled_dot_product_attention(q, k, v, as_float, return_weights=return_weights)
        assert_close(a, b, atol=1e-12, rtol=1e-12)


def test_row_of_neg_inf_gives_zeros_not_nan():
    q, k, v = qkv(0, 1, 1, 3, 3, 4, torch.float32)
    bias = torch.zeros(3, 3)
    bias[1] = float("-inf")  # query 1 may see no key
    out = AF.scaled_dot_product_attention(q, k, v, bias)
    out_e, w = AF.scaled_dot_product_attention(q, k, v, bias, return_weights=True)
    for t in (out, out_e, w):
        assert torch.isfinite(t).all()
        assert (t[..., 1, :] == 0).all()
    assert_close(out, out_e, atol=1e-6, rtol=1e-6)  # float32


def test_bias_shifts_weights_towards_favoured_key():
    """A bias is really added: +10 on key 0 moves nearly all weight there."""
    q, k, v = qkv(1, 1, 1, 2, 4, 4, torch.float64)
    bias = torch.zeros(2, 4, dtype=torch.float64)
    bias[:, 0] = 10.0
    _, w0 = AF.scaled_dot_product_attention(q, k, v, return_weights=True)
    _, w1 = AF.scaled_dot_product_attention(q, k, v, bias, return_weights=True)
    assert (w1[..., 0] > w0[..., 0]).all() and (w1[..., 0] > 0.99).all()


def test_float32_bias_with_float64_inputs_is_used_at_their_precision():
    q, k, v = qkv(2, 1, 8, 5, 5, 4, torch.float64)
    bias = AF.alibi_bias(8, 5)  # float32
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=bias.double())
    assert_close(AF.scaled_dot_product_attention(q, k, v, bias), ref, atol=1e-10, rtol=1e-10)


@pytest.mark.parametrize(
    "mask, error, match",
    [
        (torch.zeros(3, 3, dtype=torch.long), TypeError,
         "mask must be a torch.bool tensor .* or a floating-point tensor"),
        (torch.zeros(4, 3), ValueError, r"mask must broadcast to shape \(1, 2, 3, 3\)"),
        (torch.zeros(3, 2, 3, 3), ValueError, "mask must broadcast to shape"),
    ],
)
def test_mask_errors(mask, error, match):
    q, k, v = qkv(0, 1, 2, 3, 3, 4, torch.float32)
    for return_weights in (False, True):
        with pytest.raises(error, match=match):
            AF.scaled_dot_product_attention(q, k, v, mask, return_weights=return_weights)
