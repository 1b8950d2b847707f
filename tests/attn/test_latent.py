"""attn.MultiHeadLatentAttention against a naive version written from DeepSeek-V2's equations.

The reference below loops over heads and positions, rotates with its own cos/sin (pairs
(x_i, x_{i+d/2}), the package's convention) and never uses the package's attention code.
Tolerances: float32 atol=2e-5, rtol=2e-4 (the absorbed form sums d_c products where the
naive one sums d_head, in another order); float64 atol=1e-10, rtol=1e-8.
"""
import math

import pytest
import torch
from torch.testing import assert_close

import attn

TOL = {torch.float32: dict(atol=2e-5, rtol=2e-4), torch.float64: dict(atol=1e-10, rtol=1e-8)}
DTYPES = [torch.float32, torch.float64]


def _mla(dtype=torch.float32, rope_head_dim=4, context_length=24, d_in=10, d_out=12, h=3, d_c=5):
    torch.manual_seed(0)
    m = attn.MultiHeadLatentAttention(d_in, d_out, context_length, h, d_c, rope_head_dim=rope_head_dim)
    return m.to(dtype).eval()


def _rotate(x, p, base=10000.0):
    """RoPE of one vector x (d,) at position p, pairs (x_i, x_{i + d/2}).

    cos and sin are rounded to float32, as attn.RotaryEmbedding stores its tables.
    """
    d = x.numel()
    out = x.clone()
    for i in range(d // 2):
        a = p * base ** (-2 * i / d)
        c, s = (torch.tensor(f(a), dtype=torch.float32).item() for f in (math.cos, math.sin))
        out[i], out[i + d // 2] = c * x[i] - s * x[i + d // 2], s * x[i] + c * x[i + d // 2]
    return out


def _naive(m, x):
    """DeepSeek-V2's MLA for one sequence x (T, d_in), head by head, position by position."""
    T, h, d, d_r = x.size(0), m.num_heads, m.head_dim, m.rope_head_dim
    c = x @ m.W_down.weight.T  # c_t = W^DKV x_t: (T, d_c)
    k_c = (c @ m.W_up_key.weight.T).view(T, h, d)  # k^C_t = W^UK c_t
    v_c = (c @ m.W_up_value.weight.T).view(T, h, d)  # v^C_t = W^UV c_t
    q_c = (x @ m.W_query.weight.T).view(T, h, d)
    if d_r:
        q_r = (x @ m.W_query_rope.weight.T).view(T, h, d_r)
        k_r = x @ m.W_key_rope.weight.T  # (T, d_r), one for all heads
        q_r = torch.stack([torch.stack([_rotate(q_r[t, i], t) for i in range(h)]) for t in range(T)])
        k_r = torch.stack([_rotate(k_r[t], t) for t in range(T)])
    heads = torch.zeros(T, h, d, dtype=x.dtype)
    for i in range(h):
        for t in range(T):
            s = torch.stack([q_c[t, i] @ k_c[j, i] + (q_r[t, i] @ k_r[j] if d_r else 0.0) for j in range(t + 1)])
            a = torch.softmax(s / math.sqrt(d + d_r), dim=0)  # keys 0 .. t
            heads[t, i] = (a[:, None] * v_c[: t + 1, i]).sum(0)
    return heads.reshape(T, h * d) @ m.out_proj.weight.T + m.out_proj.bias


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rope_head_dim", [0, 4])
@pytest.mark.parametrize("absorb", [False, True])
def test_equals_the_naive_equations(dtype, rope_head_dim, absorb):
    m = _mla(dtype, rope_head_dim)
    x = torch.randn(2, 7, 10, dtype=dtype, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        out = m(x, absorb=absorb)
        assert_close(out, torch.stack([_naive(m, seq) for seq in x]), **TOL[dtype])
        assert_close(m(x[1], absorb=absorb), out[1], **TOL[dtype])  # unbatched


@pytest.mark.parametrize("dtype", DTYPES)
def test_absorbed_and_naive_forms_agree_with_weights_and_gradients(dtype):
    m = _mla(dtype)
    x = torch.randn(3, 9, 10, dtype=dtype, generator=torch.Generator().manual_seed(2))
    z0, w0 = m(x, return_weights=True)
    z1, w1 = m(x, absorb=True, return_weights=True)
    assert w0.shape == (3, 3, 9, 9)
    assert_close(z0, z1, **TOL[dtype])
    assert_close(w0, w1, **TOL[dtype])
    assert_close(w0.sum(-1), torch.ones(3, 3, 9, dtype=dtype), **TOL[dtype])
    assert (w0.triu(1) == 0).all()  # causal
    g0 = torch.autograd.grad(z0.square().sum(), list(m.parameters()))
    g1 = torch.autograd.grad(m(x, absorb=True).square().sum(), list(m.parameters()))
    for a, b in zip(g0, g1):
        assert_close(a, b, **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rope_head_dim", [0, 4])
def test_the_cache_holds_only_the_latents(dtype, rope_head_dim):
    m = _mla(dtype, rope_head_dim)
    B, T, d_c = 3, 11, m.kv_latent_dim
    x = torch.randn(B, T, 10, dtype=dtype)
    cache = attn.KVCache()
    with torch.no_grad():
        for t in range(T):
            m(x[:, t:t + 1], cache=cache)
    element = torch.finfo(dtype).bits // 8
    assert cache.nbytes == B * T * (d_c + rope_head_dim) * element
    assert cache.nbytes == attn.latent_cache_bytes(1, d_c, T, rope_head_dim=rope_head_dim, batch=B,
                                                   bytes_per_element=element)
    with torch.no_grad():
        assert_close(cache.k[:, 0, :, :d_c], m.W_down(x), **TOL[dtype])  # c_t = W^DKV x_t
        if rope_head_dim:
            k_rope = m.W_key_rope(x)  # rotated at its own position
            for b in range(B):
                assert_close(cache.k[b, 0, 5, d_c:], _rotate(k_rope[b, 5], 5), **TOL[dtype])


def test_latent_cache_bytes():
    # DeepSeek-V2: 60 layers, d_c = 512, d_r = 64, 16-bit numbers
    assert attn.latent_cache_bytes(60, 512, 1, rope_head_dim=64) == 60 * 576 * 2 == 69120
    assert attn.latent_cache_bytes(2, 8, 10, batch=3, bytes_per_element=4) == 2 * 8 * 10 * 3 * 4
    assert attn.latent_cache_bytes(2, 8, 0) == 0
    with pytest.raises(ValueError, match="kv_latent_dim must be a positive int"):
        attn.latent_cache_bytes(2, 0, 10)
    with pytest.raises(ValueError, match="seq_len must be an int >= 0"):
        attn.latent_cache_bytes(2, 8, -1)
    with pytest.raises(ValueError, match="rope_head_dim must be an int >= 0"):
        attn.latent_cache_bytes(2, 8, 1, rope_head_dim=-2)
    with pytest.raises(TypeError, match="bytes_per_element must be an int"):
        attn.latent_cache_bytes(2, 8, 1, bytes_per_element=2.0)


def test_parameters_and_their_shapes():
    m = attn.MultiHeadLatentAttention(10, 12, 24, 3, 5, rope_head_dim=4)
    shapes = {n: tuple(p.shape) for n, p in m.named_parameters()}
    assert shapes == {
        "W_query.weight": (12, 10), "W_down.weight": (5, 10), "W_up_key.weight": (12, 5),
        "W_up_value.weight": (12, 5), "W_query_rope.weight": (12, 10), "W_key_rope.weight": (4, 10),
        "out_proj.weight": (12, 12), "out_proj.bias": (12,),
    }
    plain = attn.MultiHeadLatentAttention(10, 12, 24, 3, 5)
    assert plain.W_query_rope is None and plain.W_key_rope is None and plain.rope is None


def test_bad_inputs():
    with pytest.raises(ValueError, match=r"d_out must be divisible by num_heads.*d_out=10.*num_heads=3"):
        attn.MultiHeadLatentAttention(8, 10, 16, 3, 4)
    with pytest.raises(ValueError, match="kv_latent_dim must be a positive int"):
        attn.MultiHeadLatentAttention(8, 12, 16, 3, 0)
    with pytest.raises(ValueError, match="rope_head_dim must be even.*got 3"):
        attn.MultiHeadLatentAttention(8, 12, 16, 3, 4, rope_head_dim=3)
    with pytest.raises(TypeError, match="rope_head_dim must be an int"):
        attn.MultiHeadLatentAttention(8, 12, 16, 3, 4, rope_head_dim=2.0)
    with pytest.raises(ValueError, match=r"dropout must be in \[0, 1\)"):
        attn.MultiHeadLatentAttention(8, 12, 16, 3, 4, dropout=1.0)
    m = attn.MultiHeadLatentAttention(8, 12, 6, 3, 4, rope_head_dim=2)
    with pytest.raises(ValueError, match=r"x must have last dimension d_in=8"):
        m(torch.randn(2, 3, 7))
    with pytest.raises(ValueError, match=r"x must have shape \(T, d_in\) or \(B, T, d_in\)"):
        m(torch.randn(8))
    with pytest.raises(TypeError, match="x must have dtype torch.float32"):
        m(torch.randn(2, 3, 8, dtype=torch.float64))
    with pytest.raises(ValueError, match="T=7 tokens, more than context_length=6"):
        m(torch.randn(1, 7, 8))
    with pytest.raises(TypeError, match="absorb must be a bool"):
        m(torch.randn(1, 3, 8), absorb=1)
    with pytest.raises(TypeError, match="return_weights must be a bool"):
        m(torch.randn(1, 3, 8), return_weights=None)
    for bad in ([], {"k": None}):
        with pytest.raises(TypeError, match=r"cache must be an attn.KVCache or None \(an object with update\(k, v\) and len\(\)\)"):
            m(torch.randn(1, 3, 8), cache=bad)
    cache = attn.KVCache()
    m(torch.randn(1, 4, 8), cache=cache)
    with pytest.raises(ValueError, match=r"cache holds 4 positions and x adds T_new=3: 7 positions.*context_length=6"):
        m(torch.randn(1, 3, 8), cache=cache)
