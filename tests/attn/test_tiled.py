"""``attn.functional.tiled_attention`` against PyTorch's fused attention.

Tolerances (torch.testing.assert_close): float32 atol=2e-5, rtol=2e-4 (the tiles add the
same terms in another order, a few hundred terms at most); float64 atol=1e-10, rtol=1e-8.
The memory claim (peak memory linear in T at a fixed block size) is measured by
``bench/tiled.py`` and on chapter 12's page, not by a test.
"""
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.testing import assert_close

import attn.functional as AF

TOL = {
    torch.float32: dict(atol=2e-5, rtol=2e-4),
    torch.float64: dict(atol=1e-10, rtol=1e-8),
}
DTYPES = [torch.float32, torch.float64]


def qkv(B, T_q, T_k, d_k=8, d_v=5, dtype=torch.float64, seed=0, heads=2):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(B, heads, T_q, d_k, generator=g, dtype=dtype)  # (B, h, T_q, d_k)
    k = torch.randn(B, heads, T_k, d_k, generator=g, dtype=dtype)  # (B, h, T_k, d_k)
    v = torch.randn(B, heads, T_k, d_v, generator=g, dtype=dtype)  # (B, h, T_k, d_v)
    return q, k, v


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize(
    "T_q, T_k, block_size",
    [
        (1, 1, 1),
        (16, 16, 4),  # T a multiple of the block size
        (17, 17, 4),  # a last block of one key
        (10, 10, 128),  # one block, shorter than block_size
        (23, 23, 1),  # one key per block
        (7, 19, 5),  # fewer queries than keys
        (19, 7, 3),  # more queries than keys
        (64, 64, 64),
    ],
)
def test_equals_torch(dtype, is_causal, T_q, T_k, block_size):
    q, k, v = qkv(2, T_q, T_k, dtype=dtype)
    out = AF.tiled_attention(q, k, v, block_size=block_size, is_causal=is_causal)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)
    assert out.shape == ref.shape == (2, 2, T_q, 5)
    assert out.dtype == dtype
    assert_close(out, ref, **TOL[dtype])


@settings(max_examples=60, deadline=None)
@given(
    T_q=st.integers(1, 40),
    T_k=st.integers(1, 40),
    block_size=st.integers(1, 50),
    is_causal=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_equals_torch_for_any_length_and_block(T_q, T_k, block_size, is_causal, seed):
    q, k, v = qkv(1, T_q, T_k, seed=seed)
    out = AF.tiled_attention(q, k, v, block_size=block_size, is_causal=is_causal)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)
    assert_close(out, ref, **TOL[torch.float64])


@pytest.mark.parametrize("block_size", [1, 3, 8, 1000])
def test_result_does_not_depend_on_the_block_size(block_size):
    q, k, v = qkv(1, 30, 30)
    one_block = AF.tiled_attention(q, k, v, block_size=30)
    assert_close(AF.tiled_attention(q, k, v, block_size=block_size), one_block, **TOL[torch.float64])


def test_scale_and_unbatched_input():
    q, k, v = qkv(1, 9, 11)
    q, k, v = q[0, 0], k[0, 0], v[0, 0]  # (T, d): no batch axes
    out = AF.tiled_attention(q, k, v, block_size=4, scale=0.3)
    assert_close(out, F.scaled_dot_product_attention(q, k, v, scale=0.3), **TOL[torch.float64])
    # the package's own explicit path agrees too
    explicit, _ = AF.scaled_dot_product_attention(q, k, v, scale=0.3, return_weights=True)
    assert_close(out, explicit, **TOL[torch.float64])


def test_broadcast_batch_axes():
    q, k, v = qkv(3, 6, 10)
    out = AF.tiled_attention(q, k[:1], v[:1], block_size=4)  # keys shared by the batch
    assert_close(out, F.scaled_dot_product_attention(q, k[:1].expand_as(k), v[:1].expand_as(v)),
                 **TOL[torch.float64])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("is_causal", [False, True])
def test_finite_for_large_scores(dtype, is_causal):
    # scores of about 1e4: exp(1e4) overflows in both dtypes, the running max keeps
    # every exponent at or below 0
    q, k, v = qkv(1, 12, 12, dtype=dtype)
    q = q * 1e2
    k = k * 1e2
    scores = q @ k.transpose(-2, -1) / q.size(-1) ** 0.5
    assert scores.abs().max() > 1e3
    out = AF.tiled_attention(q, k, v, block_size=5, is_causal=is_causal)
    assert torch.isfinite(out).all()
    assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=is_causal), **TOL[dtype])
    naive = torch.exp(scores.to(dtype)) @ v  # what a softmax without the max would do
    assert not torch.isfinite(naive).all()


def test_gradients_match_torch():
    q, k, v = (t.requires_grad_(True) for t in qkv(1, 9, 13))
    out = AF.tiled_attention(q, k, v, block_size=4, is_causal=True)
    grads = torch.autograd.grad(out.sum(), (q, k, v))
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    ref_grads = torch.autograd.grad(ref.sum(), (q, k, v))
    for g, r in zip(grads, ref_grads):
        assert_close(g, r, **TOL[torch.float64])


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(block_size=0), ValueError, "block_size must be a positive int"),
        (dict(block_size=-3), ValueError, "block_size must be a positive int"),
        (dict(block_size=2.0), TypeError, "block_size must be an int"),
        (dict(block_size=True), TypeError, "block_size must be an int"),
        (dict(is_causal=1), TypeError, "is_causal must be a bool"),
        (dict(scale="0.5"), TypeError, "scale must be a float"),
    ],
)
def test_bad_arguments(kwargs, error, message):
    q, k, v = qkv(1, 4, 4)
    with pytest.raises(error, match=message):
        AF.tiled_attention(q, k, v, **kwargs)


def test_bad_tensors():
    q, k, v = qkv(2, 4, 6)
    with pytest.raises(TypeError, match="q must be a torch.Tensor"):
        AF.tiled_attention(q.tolist(), k, v)
    with pytest.raises(TypeError, match="k must be a floating-point tensor"):
        AF.tiled_attention(q, k.long(), v)
    with pytest.raises(ValueError, match="k must have last dimension d_k=8"):
        AF.tiled_attention(q, k[..., :3], v)
    with pytest.raises(ValueError, match="v must have T_k=6 rows"):
        AF.tiled_attention(q, k, v[..., :5, :])
    with pytest.raises(ValueError, match="v must have at least 2 dimensions"):
        AF.tiled_attention(q, k, v[0, 0, 0])
    with pytest.raises(ValueError, match="batch dimensions"):
        AF.tiled_attention(q, k[:, :1].expand(2, 3, 6, 8), v)
    with pytest.raises(ValueError, match="at least one position"):
        AF.tiled_attention(q, k[..., :0, :], v[..., :0, :])
    with pytest.raises(TypeError, match="same dtype"):
        AF.tiled_attention(q, k, v.float())
