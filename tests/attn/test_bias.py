"""Sliding-window masks and ALiBi biases (attn.functional)."""
import inspect
import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import attn.functional as AF


def reference_get_slopes(n):
    """get_slopes from the ALiBi repository (ofirpress/attention_with_linear_biases,
    fairseq/models/transformer.py), reimplemented as written there."""

    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (get_slopes_power_of_2(closest_power_of_2)
            + reference_get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2])


def test_signatures():
    assert str(inspect.signature(AF.sliding_window_mask)) == "(T_q, window, T_k=None, *, device=None)"
    assert str(inspect.signature(AF.alibi_bias)) == "(num_heads, T_q, T_k=None, *, device=None)"
    assert str(inspect.signature(AF.alibi_slopes)) == "(num_heads, *, device=None)"


# ---------------------------------------------------------------- sliding window

@given(T_q=st.integers(1, 12), T_k=st.integers(1, 12), window=st.integers(1, 14))
def test_window_by_loops(T_q, T_k, window):
    mask = AF.sliding_window_mask(T_q, window, T_k)
    assert mask.dtype == torch.bool and mask.shape == (T_q, T_k)
    for i in range(T_q):
        for j in range(T_k):
            assert bool(mask[i, j]) == (i - window + 1 <= j <= i), (i, j)


def test_window_example():
    expected = torch.tensor([[1, 0, 0, 0, 0],
                             [1, 1, 0, 0, 0],
                             [0, 1, 1, 0, 0],
                             [0, 0, 1, 1, 0],
                             [0, 0, 0, 1, 1]], dtype=torch.bool)
    assert torch.equal(AF.sliding_window_mask(5, 2), expected)
    assert torch.equal(AF.sliding_window_mask(5, 1), torch.eye(5, dtype=torch.bool))


@given(T_q=st.integers(1, 10), T_k=st.integers(1, 10), extra=st.integers(0, 5))
def test_wide_window_is_causal_mask(T_q, T_k, extra):
    window = max(T_q, T_k) + extra
    assert torch.equal(AF.sliding_window_mask(T_q, window, T_k), AF.causal_mask(T_q, T_k))


@given(T=st.integers(1, 12), window=st.integers(1, 12))
def test_each_query_sees_at_most_window_keys(T, window):
    counts = AF.sliding_window_mask(T, window).sum(dim=-1)
    assert torch.equal(counts, torch.clamp(torch.arange(1, T + 1), max=window))


@given(n=st.integers(0, 8), T_q=st.integers(1, 6), window=st.integers(1, 8))
def test_cache_rows_are_the_last_rows(n, T_q, window):
    """After n cached keys, new queries use the last T_q rows of the full mask: query
    n + t sees keys n + t - window + 1 .. n + t."""
    rows = AF.sliding_window_mask(n + T_q, window)[n:]
    for t in range(T_q):
        seen = rows[t].nonzero().flatten().tolist()
        assert seen == list(range(max(0, n + t - window + 1), n + t + 1))


@pytest.mark.parametrize(
    "args, error, match",
    [
        ((4, 0), ValueError, "window must be a positive int, got 0"),
        ((4, -2), ValueError, "window must be a positive int"),
        ((4, 2.0), TypeError, "window must be an int"),
        ((0, 2), ValueError, "T_q must be a positive int"),
        ((4, 2, 0), ValueError, "T_k must be a positive int"),
        ((4, True), TypeError, "window must be an int"),
    ],
)
def test_window_errors(args, error, match):
    with pytest.raises(error, match=match):
        AF.sliding_window_mask(*args)


# ---------------------------------------------------------------- ALiBi

@pytest.mark.parametrize("num_heads", list(range(1, 33)) + [40, 48, 64, 96])
def test_slopes_match_reference_get_slopes(num_heads):
    expected = torch.tensor(reference_get_slopes(num_heads), dtype=torch.float32)
    torch.testing.assert_close(AF.alibi_slopes(num_heads), expected, rtol=1e-6, atol=0.0)  # float32


def test_slopes_of_eight_heads():
    """The paper's example: 1/2, 1/4, ..., 1/256 for 8 heads (exact powers of two)."""
    assert AF.alibi_slopes(8).tolist() == [2.0 ** -(h + 1) for h in range(8)]


@pytest.mark.parametrize("num_heads", [1, 2, 3, 4, 5, 6, 7, 8, 12, 16])
def test_slopes_power_of_two_formula_and_range(num_heads):
    m = AF.alibi_slopes(num_heads)
    assert m.shape == (num_heads,) and m.dtype == torch.float32
    assert ((m > 0) & (m < 1)).all()
    assert len(set(m.tolist())) == num_heads  # every head its own slope
    if num_heads & (num_heads - 1) == 0:
        for h in range(num_heads):
            assert m[h].item() == pytest.approx(2 ** (-8 * (h + 1) / num_heads), rel=1e-6)


@given(num_heads=st.integers(1, 12), T_q=st.integers(1, 8), T_k=st.integers(1, 8))
def test_bias_formula(num_heads, T_q, T_k):
    bias = AF.alibi_bias(num_heads, T_q, T_k)
    assert bias.shape == (num_heads, T_q, T_k) and bias.dtype == torch.float32
    m = reference_get_slopes(num_heads)
    for h in range(num_heads):
        for i in range(T_q):
            for j in range(T_k):
                assert bias[h, i, j].item() == pytest.approx(-m[h] * (i - j), rel=1e-6, abs=1e-7)


def test_bias_is_relative_and_shift_invariant_in_softmax():
    """Within a row the bias is m_h * j plus a constant, so the causal softmax of the bias
    alone is the same for every query that sees the same number of keys back."""
    bias = AF.alibi_bias(4, 10)
    assert torch.equal(torch.diagonal(bias, dim1=-2, dim2=-1), torch.zeros(4, 10))
    for d in range(1, 10):  # constant along each diagonal
        diag = torch.diagonal(bias, offset=-d, dim1=-2, dim2=-1)  # (4, 10 - d)
        assert (diag == diag[:, :1]).all()


@pytest.mark.parametrize(
    "args, error, match",
    [
        ((0, 4), ValueError, "num_heads must be a positive int"),
        ((2.0, 4), TypeError, "num_heads must be an int"),
        ((2, 0), ValueError, "T_q must be a positive int"),
        ((2, 4, -1), ValueError, "T_k must be a positive int"),
    ],
)
def test_bias_errors(args, error, match):
    with pytest.raises(error, match=match):
        AF.alibi_bias(*args)
