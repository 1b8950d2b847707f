"""attn.functional.merge_partial_attention and sink_window_mask, against independent references.

Tolerances: the defaults of torch.testing.assert_close for the dtype (float32 rtol=1.3e-6,
atol=1e-5; float64 rtol=1e-7, atol=1e-7): a merge adds the same terms as one softmax, in
another order.
"""
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn.attention.bias import causal_lower_right
from torch.testing import assert_close

import attn.functional as AF

DTYPES = [torch.float32, torch.float64]


def _part(q, k, v, mask=None):
    """Reference attention over one part of the keys: (output, log-sum-exp of the scores)."""
    s = q @ k.transpose(-2, -1) / q.size(-1) ** 0.5  # (..., T_q, n)
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s, dim=-1) @ v, torch.logsumexp(s, dim=-1)


@settings(max_examples=25, deadline=None)
@given(
    cuts=st.lists(st.integers(1, 60), min_size=0, max_size=5),
    T_q=st.integers(1, 5),
    dtype=st.sampled_from(DTYPES),
)
def test_merge_of_parts_equals_one_pass(cuts, T_q, dtype):
    g = torch.Generator().manual_seed(len(cuts) * 7 + T_q)
    T_k = 61
    q = torch.randn(2, 3, T_q, 16, generator=g, dtype=dtype)
    k = torch.randn(2, 3, T_k, 16, generator=g, dtype=dtype)
    v = torch.randn(2, 3, T_k, 8, generator=g, dtype=dtype)
    bounds = [0, *sorted(set(cuts)), T_k]
    parts = [_part(q, k[..., a:b, :], v[..., a:b, :]) for a, b in zip(bounds, bounds[1:])]
    out, lse = AF.merge_partial_attention([o for o, _ in parts], [l for _, l in parts])
    assert_close(out, F.scaled_dot_product_attention(q, k, v))
    assert_close(lse, torch.logsumexp(q @ k.transpose(-2, -1) / 4.0, dim=-1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_merge_is_associative(dtype):
    g = torch.Generator().manual_seed(0)
    q = torch.randn(4, 1, 8, generator=g, dtype=dtype)  # (B, T_q, d)
    k, v = torch.randn(2, 4, 12, 8, generator=g, dtype=dtype).unbind(0)  # (B, T_k, d) each
    parts = [_part(q, k[:, a:a + 4], v[:, a:a + 4]) for a in (0, 4, 8)]
    left = AF.merge_partial_attention([parts[0][0], parts[1][0]], [parts[0][1], parts[1][1]])
    nested = AF.merge_partial_attention([left[0], parts[2][0]], [left[1], parts[2][1]])
    flat = AF.merge_partial_attention([p[0] for p in parts], [p[1] for p in parts])
    assert_close(nested[0], flat[0])
    assert_close(nested[1], flat[1])


def test_a_part_with_no_visible_key_weighs_nothing():
    g = torch.Generator().manual_seed(1)
    q, k, v = torch.randn(3, 8, generator=g), torch.randn(10, 8, generator=g), torch.randn(10, 4, generator=g)
    seen = torch.tensor([True, False, True])[:, None]  # query 1 sees no key of the first part
    o1, l1 = _part(q, k[:6], v[:6], seen.expand(3, 6))
    o2, l2 = _part(q, k[6:], v[6:])
    assert torch.isnan(o1[1]).all() and l1[1] == float("-inf")  # the naive part: 0 / 0
    out, lse = AF.merge_partial_attention([o1, o2], [l1, l2])
    mask = torch.cat([seen.expand(3, 6), torch.ones(3, 4, dtype=torch.bool)], dim=1)
    assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask))
    # no key at all in any part: zeros and -inf, never NaN
    out, lse = AF.merge_partial_attention([torch.full((1, 4), float("nan"))], [torch.full((1,), float("-inf"))])
    assert torch.equal(out, torch.zeros(1, 4)) and lse.item() == float("-inf")


def test_merge_bad_inputs():
    o, l = torch.zeros(2, 3, 4), torch.zeros(2, 3)
    with pytest.raises(TypeError, match="outputs must be a non-empty list"):
        AF.merge_partial_attention(o, [l])
    with pytest.raises(TypeError, match="lses must be a non-empty list"):
        AF.merge_partial_attention([o], [])
    with pytest.raises(TypeError, match=r"outputs\[1\] must be a torch.Tensor"):
        AF.merge_partial_attention([o, 1.0], [l, l])
    with pytest.raises(TypeError, match=r"lses\[0\] must be a floating-point tensor"):
        AF.merge_partial_attention([o], [l.long()])
    with pytest.raises(ValueError, match="one entry per part, got 2 and 1"):
        AF.merge_partial_attention([o, o], [l])
    with pytest.raises(ValueError, match=r"outputs\[1\] must have the shape and dtype of outputs\[0\]"):
        AF.merge_partial_attention([o, o[:1]], [l, l])
    with pytest.raises(ValueError, match=r"lses\[0\] must have shape \(\.\.\., T_q\) = \(2, 3\)"):
        AF.merge_partial_attention([o], [l[..., None]])
    with pytest.raises(ValueError, match=r"outputs\[0\] must have shape \(\.\.\., T_q, d_v\)"):
        AF.merge_partial_attention([torch.zeros(3)], [torch.zeros(())])


def _sink_window_reference(T_q, window, num_sinks, T_k):
    mask = torch.zeros(T_q, T_k, dtype=torch.bool)
    for i in range(T_q):
        p = i + T_k - T_q  # the query's position
        for j in range(T_k):
            mask[i, j] = j <= p and (p - j < window or j < num_sinks)
    return mask


@pytest.mark.parametrize("T_q, T_k", [(1, 1), (1, 12), (5, 12), (12, 12), (3, 3)])
@pytest.mark.parametrize("window", [1, 3, 12, 20])
@pytest.mark.parametrize("num_sinks", [0, 1, 4, 15])
def test_sink_window_mask_against_loops(T_q, T_k, window, num_sinks):
    got = AF.sink_window_mask(T_q, window, num_sinks, T_k)
    assert got.dtype == torch.bool and got.shape == (T_q, T_k)
    assert torch.equal(got, _sink_window_reference(T_q, window, num_sinks, T_k))


@pytest.mark.parametrize("T_q, T_k", [(1, 9), (4, 9), (9, 9)])
def test_sink_window_mask_special_cases(T_q, T_k):
    # no sinks: the sliding window, the last T_q rows of the square mask
    assert torch.equal(AF.sink_window_mask(T_q, 3, 0, T_k), AF.sliding_window_mask(T_k, 3)[T_k - T_q:])
    # a window as long as the keys: PyTorch's bottom-right causal mask
    lower_right = causal_lower_right(T_q, T_k)._materialize()
    assert torch.equal(AF.sink_window_mask(T_q, T_k, 0, T_k), lower_right)
    assert torch.equal(AF.sink_window_mask(T_q, 1, T_k, T_k), lower_right)  # every key a sink
    assert torch.equal(AF.sink_window_mask(T_q, 2, 1), AF.sink_window_mask(T_q, 2, 1, T_q))  # T_k defaults to T_q


def test_sink_window_mask_bad_inputs():
    with pytest.raises(ValueError, match="T_q must be a positive int"):
        AF.sink_window_mask(0, 2, 1)
    with pytest.raises(ValueError, match="window must be a positive int"):
        AF.sink_window_mask(3, 0, 1)
    with pytest.raises(ValueError, match=r"num_sinks must be an int >= 0"):
        AF.sink_window_mask(3, 2, -1)
    with pytest.raises(TypeError, match="num_sinks must be an int"):
        AF.sink_window_mask(3, 2, 1.0)
    with pytest.raises(ValueError, match="T_k must be at least T_q.*T_q=4 and T_k=3"):
        AF.sink_window_mask(4, 2, 1, 3)
    with pytest.raises(TypeError, match="T_k must be an int"):
        AF.sink_window_mask(4, 2, 1, "5")


@pytest.mark.parametrize("T_q, T_k", [(1, 1), (1, 9), (3, 7), (7, 7), (7, 3)])
def test_causal_mask_corners(T_q, T_k):
    assert torch.equal(AF.causal_mask(T_q, T_k), torch.ones(T_q, T_k, dtype=torch.bool).tril())
    assert torch.equal(AF.causal_mask(T_q, T_k, align="top_left"), AF.causal_mask(T_q, T_k))
    lower_right = causal_lower_right(T_q, T_k)._materialize()
    assert torch.equal(AF.causal_mask(T_q, T_k, align="bottom_right"), lower_right)


def test_causal_mask_bad_align():
    for bad in ("bottom-right", "lower_right", None, 1):
        with pytest.raises(ValueError, match=r'align must be "top_left" or "bottom_right", got'):
            AF.causal_mask(3, 5, align=bad)


@settings(max_examples=20, deadline=None)
@given(chunks=st.lists(st.integers(1, 6), min_size=1, max_size=6), dtype=st.sampled_from(DTYPES))
def test_prefill_in_chunks_with_bottom_right_masks_equals_one_causal_pass(chunks, dtype):
    T = sum(chunks)
    g = torch.Generator().manual_seed(T)
    q, k, v = torch.randn(3, 2, 4, T, 8, generator=g, dtype=dtype).unbind(0)  # (B, h, T, d)
    whole = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    parts, start = [], 0
    for n in chunks:  # queries start .. start + n - 1, keys 0 .. start + n - 1
        mask = AF.causal_mask(n, start + n, align="bottom_right")
        parts.append(AF.scaled_dot_product_attention(q[..., start:start + n, :], k[..., :start + n, :],
                                                     v[..., :start + n, :], mask))
        start += n
    assert_close(torch.cat(parts, dim=-2), whole)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("T_q, T_k, block", [(5, 37, 8), (37, 37, 5), (40, 12, 64)])
def test_tiled_attention_returns_the_log_sum_exp(dtype, is_causal, T_q, T_k, block):
    g = torch.Generator().manual_seed(T_q + T_k)
    q = torch.randn(2, 3, T_q, 16, generator=g, dtype=dtype)
    k, v = torch.randn(2, 2, 3, T_k, 16, generator=g, dtype=dtype).unbind(0)
    out, lse = AF.tiled_attention(q, k, v, block_size=block, is_causal=is_causal, return_lse=True)
    s = q @ k.transpose(-2, -1) / 4.0
    if is_causal:
        s = s.masked_fill(~AF.causal_mask(T_q, T_k), float("-inf"))
    assert lse.shape == (2, 3, T_q)
    assert_close(lse, torch.logsumexp(s, dim=-1))
    assert_close(out, AF.tiled_attention(q, k, v, block_size=block, is_causal=is_causal))
    with pytest.raises(TypeError, match="return_lse must be a bool"):
        AF.tiled_attention(q, k, v, return_lse=1)


@settings(max_examples=20, deadline=None)
@given(cuts=st.lists(st.integers(1, 199), min_size=1, max_size=6), dtype=st.sampled_from(DTYPES))
def test_split_kv_decoding_with_tiled_parts_equals_one_pass(cuts, dtype):
    """Flash-Decoding: tiled_attention over parts of a cache, merged = one pass."""
    g = torch.Generator().manual_seed(len(cuts))
    q = torch.randn(2, 4, 1, 32, generator=g, dtype=dtype)  # (B, h, 1, d): one decode step
    k, v = torch.randn(2, 2, 4, 200, 32, generator=g, dtype=dtype).unbind(0)  # (B, h, P, d)
    bounds = [0, *sorted(set(cuts)), 200]
    parts = [AF.tiled_attention(q, k[..., a:b, :], v[..., a:b, :], block_size=16, return_lse=True)
             for a, b in zip(bounds, bounds[1:])]
    out, _ = AF.merge_partial_attention([o for o, _ in parts], [l for _, l in parts])
    assert_close(out, F.scaled_dot_product_attention(q, k, v))
