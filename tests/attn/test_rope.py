"""attn.RotaryEmbedding: a rotation of each pair (i, i + head_dim/2) by position * theta_i."""
import inspect

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.testing import assert_close

import attn

seeds = st.integers(0, 2**16)


def reference_rope(x, positions, base=10000.0):
    """Independent reference: pairs (i, i + d/2) as complex numbers, times e^{i p theta_i}.

    Written with complex float64 arithmetic, not with the package's cos/sin tables.
    """
    d = x.size(-1)
    x = x.double()
    z = torch.complex(x[..., : d // 2], x[..., d // 2 :])  # (..., T, d/2)
    theta = torch.tensor([base ** (-2.0 * i / d) for i in range(d // 2)], dtype=torch.float64)
    p = torch.as_tensor(positions, dtype=torch.float64)  # (T,)
    rot = torch.polar(torch.ones(len(p), d // 2, dtype=torch.float64), p[:, None] * theta)
    z = z * rot  # (..., T, d/2) * (T, d/2)
    return torch.cat((z.real, z.imag), dim=-1)  # (..., T, d)


def test_signature():
    assert str(inspect.signature(attn.RotaryEmbedding)) == "(head_dim, max_len=4096, base=10000.0)"
    assert str(inspect.signature(attn.RotaryEmbedding.forward)) == "(self, x, offset=0)"


def test_buffers_are_not_persistent_and_not_parameters():
    rope = attn.RotaryEmbedding(8, max_len=16)
    assert list(rope.parameters()) == []
    assert rope.state_dict() == {}
    assert rope.cos.shape == rope.sin.shape == (16, 8)


@given(seed=seeds, half=st.integers(1, 16), T=st.integers(1, 12), offset=st.integers(0, 20),
       base=st.sampled_from([10000.0, 500.0, 1e6]))
def test_matches_complex_reference(seed, half, T, offset, base):
    g = torch.Generator().manual_seed(seed)
    d = 2 * half
    x = torch.randn(2, 3, T, d, generator=g)
    rope = attn.RotaryEmbedding(d, max_len=offset + T, base=base)
    expected = reference_rope(x, range(offset, offset + T), base).float()
    # float32 input and float32 tables: a few ulps of |x| (values are O(1))
    assert_close(rope(x, offset=offset), expected, atol=1e-5, rtol=1e-5)


def test_matches_reference_at_long_positions():
    # angles up to 8000 rad: the tables are computed in float64 before rounding to float32
    x = torch.randn(1, 4, 64, generator=torch.Generator().manual_seed(0))
    rope = attn.RotaryEmbedding(64, max_len=8000)
    got = rope(x, offset=7996)
    assert_close(got, reference_rope(x, range(7996, 8000)).float(), atol=1e-5, rtol=1e-5)


@given(seed=seeds, half=st.integers(1, 16), m=st.integers(0, 40), n=st.integers(0, 40),
       shift=st.integers(0, 40))
def test_score_depends_only_on_offset(seed, half, m, n, shift):
    """q at m, k at n gives the same score as q at m + s, k at n + s."""
    g = torch.Generator().manual_seed(seed)
    d = 2 * half
    q = torch.randn(1, d, generator=g, dtype=torch.float64)
    k = torch.randn(1, d, generator=g, dtype=torch.float64)
    rope = attn.RotaryEmbedding(d, max_len=81).double()

    def score(a, b):
        return (rope(q, offset=a) @ rope(k, offset=b).T).item()

    s0, s1 = score(m, n), score(m + shift, n + shift)
    # float64 buffers here come from float32 tables: about 1e-7 relative per rotation
    assert abs(s0 - s1) <= 1e-5 * (1 + abs(s0))
    if m == n:  # same position: the rotations cancel, the plain dot product is left
        assert abs(s0 - (q @ k.T).item()) <= 1e-5 * (1 + abs(s0))


def test_score_changes_with_offset():
    """The property above is not trivial: different offsets give different scores."""
    g = torch.Generator().manual_seed(1)
    q, k = torch.randn(1, 16, generator=g), torch.randn(1, 16, generator=g)
    rope = attn.RotaryEmbedding(16, max_len=10)
    scores = [(rope(q, offset=m) @ rope(k).T).item() for m in range(10)]
    assert len({round(s, 4) for s in scores}) == 10


@given(seed=seeds, half=st.integers(1, 16), T=st.integers(1, 10), offset=st.integers(0, 10))
def test_norms_are_kept(seed, half, T, offset):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(3, T, 2 * half, generator=g)
    y = attn.RotaryEmbedding(2 * half, max_len=20)(x, offset=offset)
    assert_close(y.norm(dim=-1), x.norm(dim=-1), atol=1e-5, rtol=1e-5)  # float32
    # and each pair (i, i + d/2) keeps its own length: a rotation of every pair
    pairs = lambda t: t[..., :half] ** 2 + t[..., half:] ** 2  # noqa: E731
    assert_close(pairs(y), pairs(x), atol=1e-5, rtol=1e-5)


@given(seed=seeds, T=st.integers(1, 8), offset=st.integers(0, 8))
def test_offset_equals_slicing_a_longer_sequence(seed, T, offset):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(2, offset + T, 8, generator=g)
    rope = attn.RotaryEmbedding(8, max_len=16)
    assert torch.equal(rope(x[:, offset:], offset=offset), rope(x)[:, offset:])


def test_position_zero_is_identity_and_dtype_is_kept():
    x = torch.randn(2, 1, 6, dtype=torch.float64)
    rope = attn.RotaryEmbedding(6, max_len=4)
    y = rope(x)
    assert y.dtype == torch.float64
    assert torch.equal(y, x)
    assert rope(x.to(torch.bfloat16)).dtype == torch.bfloat16


def test_first_pair_turns_by_one_radian_per_position():
    """theta_0 = base**0 = 1: the pair (x_0, x_{d/2}) turns by exactly p radians."""
    rope = attn.RotaryEmbedding(4, max_len=8)
    x = torch.tensor([[1.0, 0.0, 0.0, 0.0]]).expand(8, 4)  # unit vector on coordinate 0, 8 positions
    y = rope(x)
    p = torch.arange(8.0)
    assert_close(y[:, 0], torch.cos(p), atol=1e-6, rtol=0.0)
    assert_close(y[:, 2], torch.sin(p), atol=1e-6, rtol=0.0)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(head_dim=7), ValueError, "head_dim must be even"),
        (dict(head_dim=0), ValueError, "head_dim must be a positive int"),
        (dict(head_dim=8.0), TypeError, "head_dim must be an int"),
        (dict(head_dim=8, max_len=0), ValueError, "max_len must be a positive int"),
        (dict(head_dim=8, base=1.0), ValueError, "base must be greater than 1"),
        (dict(head_dim=8, base="10000"), TypeError, "base must be a float"),
    ],
)
def test_constructor_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        attn.RotaryEmbedding(**kwargs)


@pytest.mark.parametrize(
    "x, offset, error, match",
    [
        (torch.randn(2, 4, 6), 0, ValueError, r"x must have shape \(\.\.\., T, head_dim=8\)"),
        (torch.randn(8), 0, ValueError, r"x must have shape \(\.\.\., T, head_dim=8\)"),
        (torch.ones(2, 4, 8, dtype=torch.long), 0, TypeError, "x must be a floating-point"),
        ([[0.0] * 8], 0, TypeError, "x must be a torch.Tensor"),
        (torch.randn(2, 4, 8), 13, ValueError, r"offset \+ T = 13 \+ 4 = 17 positions, more than max_len=16"),
        (torch.randn(2, 17, 8), 0, ValueError, "more than max_len=16"),
        (torch.randn(2, 4, 8), -1, ValueError, "offset must be >= 0"),
        (torch.randn(2, 4, 8), 1.0, TypeError, "offset must be an int"),
    ],
)
def test_forward_errors(x, offset, error, match):
    with pytest.raises(error, match=match):
        attn.RotaryEmbedding(8, max_len=16)(x, offset=offset)


def test_follows_the_module_to_another_dtype():
    rope = attn.RotaryEmbedding(8, max_len=4).double()
    assert rope.cos.dtype == torch.float64
    x = torch.randn(4, 8, dtype=torch.float64)
    assert_close(rope(x), reference_rope(x, range(4)), atol=1e-6, rtol=1e-6)
