"""The public building blocks of attn.functional against PyTorch.

``split_heads``/``merge_heads`` only move entries, so they are compared with PyTorch's
own ``view``/``transpose`` exactly (atol=0, rtol=0). ``masked_softmax`` is compared with
``torch.softmax`` of ``-inf``-filled scores and with
``torch.nn.functional.scaled_dot_product_attention``: float32 atol=2e-5, rtol=2e-4,
float64 atol=1e-10, rtol=1e-8 (different summation orders).
"""
import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

import attn.functional as AF

EXACT = dict(atol=0.0, rtol=0.0)  # pure reshapes: the same numbers
TOL = {
    torch.float32: dict(atol=2e-5, rtol=2e-4),
    torch.float64: dict(atol=1e-10, rtol=1e-8),
}
DTYPES = [torch.float32, torch.float64]


def test_split_heads_is_view_then_transpose():
    x = torch.randn(2, 6, 20, generator=torch.Generator().manual_seed(0))  # (B, T, d_out)
    q = AF.split_heads(x, 4)
    assert q.shape == (2, 4, 6, 5)  # (B, h, T, d_head)
    assert_close(q, x.view(2, 6, 4, 5).transpose(1, 2), **EXACT)
    assert q.data_ptr() == x.data_ptr()  # a view, no copy
    assert_close(q[:, 1], x[..., 5:10], **EXACT)  # head 1 = columns 5..9


def test_split_heads_unbatched_and_kv_heads():
    x = torch.randn(6, 8, generator=torch.Generator().manual_seed(1))  # (T, d_out)
    assert_close(AF.split_heads(x, 2), x.view(6, 2, 4).transpose(0, 1), **EXACT)
    # fewer heads for keys and values (grouped-query attention): d_head stays the width / heads
    assert AF.split_heads(torch.zeros(2, 6, 4), 1).shape == (2, 1, 6, 4)


def test_merge_heads_inverts_split_heads():
    x = torch.randn(3, 5, 12, generator=torch.Generator().manual_seed(2))
    for h in (1, 2, 3, 4, 6, 12):
        assert_close(AF.merge_heads(AF.split_heads(x, h)), x, **EXACT)
    z = torch.randn(3, 4, 5, 2, generator=torch.Generator().manual_seed(3))  # (B, h, T, d_head)
    assert_close(AF.merge_heads(z), z.transpose(1, 2).contiguous().view(3, 5, 8), **EXACT)
    assert AF.merge_heads(z).is_contiguous()


def test_split_merge_errors():
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        AF.split_heads([[1.0, 2.0]], 1)
    with pytest.raises(TypeError, match="num_heads must be an int"):
        AF.split_heads(torch.zeros(2, 4), 2.0)
    with pytest.raises(ValueError, match="num_heads must be a positive int"):
        AF.split_heads(torch.zeros(2, 4), 0)
    with pytest.raises(ValueError, match="d_out must be divisible by num_heads"):
        AF.split_heads(torch.zeros(2, 6), 4)
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., T, d_out\)"):
        AF.split_heads(torch.zeros(6), 2)
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., h, T, d_head\)"):
        AF.merge_heads(torch.zeros(2, 6))
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        AF.merge_heads(None)


@pytest.mark.parametrize("dtype", DTYPES)
def test_masked_softmax_against_torch(dtype):
    g = torch.Generator().manual_seed(4)
    scores = torch.randn(2, 3, 5, 7, generator=g, dtype=dtype)  # (B, h, T_q, T_k)
    mask = torch.rand(2, 1, 5, 7, generator=g) > 0.3
    mask[..., 0] = True  # every row has a key
    expected = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    assert_close(AF.masked_softmax(scores, mask), expected, **TOL[dtype])
    assert_close(AF.masked_softmax(scores), torch.softmax(scores, dim=-1), **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_masked_softmax_times_v_is_torch_sdpa(dtype):
    g = torch.Generator().manual_seed(5)
    q = torch.randn(2, 3, 4, 8, generator=g, dtype=dtype)  # T_q = 4
    k = torch.randn(2, 3, 6, 8, generator=g, dtype=dtype)  # T_k = 6 > T_q
    v = torch.randn(2, 3, 6, 5, generator=g, dtype=dtype)
    mask = torch.rand(4, 6, generator=g) > 0.4
    mask[:, -1] = True
    att = AF.masked_softmax(q @ k.transpose(-2, -1) / 8**0.5, mask)
    assert_close(att @ v, F.scaled_dot_product_attention(q, k, v, attn_mask=mask), **TOL[dtype])


def test_masked_softmax_empty_rows_are_zero_with_finite_gradients():
    scores = torch.randn(2, 4, 5, requires_grad=True)
    mask = torch.ones(2, 4, 5, dtype=torch.bool)
    mask[0, 1] = False  # query 1 of sequence 0 may attend to nothing
    att = AF.masked_softmax(scores, mask)
    assert_close(att[0, 1], torch.zeros(5), **EXACT)
    assert_close(att.sum(-1)[1], torch.ones(4), **TOL[torch.float32])
    att.sum().backward()
    assert torch.isfinite(scores.grad).all()
    # the same rule on the fast path of scaled_dot_product_attention: zeros, not NaN
    q = k = v = torch.randn(2, 4, 3)
    out = AF.scaled_dot_product_attention(q, k, v, mask[..., :4])
    assert_close(out[0, 1], torch.zeros(3), **EXACT)
    assert torch.isfinite(out).all()


def test_masked_softmax_sequence_first_axis():
    g = torch.Generator().manual_seed(6)
    scores = torch.randn(5, 7, 2, 3, generator=g)  # [seq_q, seq_k, batch, heads]
    mask = torch.rand(5, 7, 2, 1, generator=g) > 0.5
    mask[:, 0] = True
    mask[2, :, 1] = False  # an empty row: query 2 of batch element 1
    got = AF.masked_softmax(scores, mask, dim=1)
    # the same numbers as the batch-first call on permuted tensors
    bf = AF.masked_softmax(scores.permute(2, 3, 0, 1), mask.permute(2, 3, 0, 1))  # (B, h, T_q, T_k)
    assert_close(got, bf.permute(2, 3, 0, 1), **TOL[torch.float32])
    assert_close(got[2, :, 1], torch.zeros(7, 3), **EXACT)


def test_masked_softmax_errors():
    with pytest.raises(TypeError, match="scores must be a floating-point tensor"):
        AF.masked_softmax(torch.ones(2, 2, dtype=torch.long))
    with pytest.raises(TypeError, match="mask must be a torch.bool tensor"):
        AF.masked_softmax(torch.ones(2, 2), torch.ones(2, 2))
    with pytest.raises(ValueError, match=r"mask must broadcast to shape \(2, 2\)"):
        AF.masked_softmax(torch.ones(2, 2), torch.ones(3, 2, dtype=torch.bool))
    with pytest.raises(TypeError, match="dim must be an int"):
        AF.masked_softmax(torch.ones(2, 2), dim=1.0)
