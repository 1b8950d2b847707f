"""``attn.ops.linear``: the parallel, recurrent and chunked forms of three recurrences agree.

The recurrent loop is the reference (it is the definition). Tolerances
(torch.testing.assert_close): float64 atol=1e-10, rtol=1e-10; float32 atol=1e-5,
rtol=1e-5. Keys are unit vectors and beta lies in [0, 1], as the layers that use
these functions make them (a delta rule with beta * |k|^2 > 2 diverges in every form).
"""
import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

from attn.ops.linear import delta_rule, gated_delta_rule, linear_attention

TOL = {torch.float64: dict(atol=1e-10, rtol=1e-10), torch.float32: dict(atol=1e-5, rtol=1e-5)}
FORMS = ["parallel", "recurrent", "chunked"]


def inputs(T, *, B=2, h=2, d_k=8, d_v=6, dtype=torch.float64, seed=0):
    """q, k (unit rows), v, alpha in [0.8, 1], beta in [0, 1] and a random state S_0."""
    g = torch.Generator().manual_seed(seed)
    q = F.normalize(torch.randn(B, h, T, d_k, generator=g, dtype=dtype), dim=-1)  # (B, h, T, d_k)
    k = F.normalize(torch.randn(B, h, T, d_k, generator=g, dtype=dtype), dim=-1)  # (B, h, T, d_k)
    v = torch.randn(B, h, T, d_v, generator=g, dtype=dtype)  # (B, h, T, d_v)
    alpha = 0.8 + 0.2 * torch.rand(B, h, T, generator=g, dtype=dtype)  # (B, h, T)
    beta = torch.rand(B, h, T, generator=g, dtype=dtype)  # (B, h, T)
    S0 = torch.randn(B, h, d_k, d_v, generator=g, dtype=dtype)  # (B, h, d_k, d_v)
    return q, k, v, alpha, beta, S0


def call(name, x, **kw):
    """Call one of the three functions on the tuple of ``inputs``."""
    q, k, v, alpha, beta, _ = x
    if name == "linear":
        return linear_attention(q, k, v, **kw)
    if name == "delta":
        return delta_rule(q, k, v, beta, **kw)
    return gated_delta_rule(q, k, v, alpha, beta, **kw)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("name", ["linear", "delta", "gated"])
@pytest.mark.parametrize("T", [1, 17, 64, 257])
def test_three_forms_agree(name, T, dtype):
    for seed in range(3):
        x = inputs(T, dtype=dtype, seed=seed)
        S0 = x[-1] if seed else None  # seed 0 from zeros, the others from a random state
        ref_o, ref_S = call(name, x, form="recurrent", initial_state=S0, return_state=True)
        o, S = call(name, x, form="parallel", initial_state=S0, return_state=True)
        assert_close(o, ref_o, **TOL[dtype])
        assert_close(S, ref_S, **TOL[dtype])
        for C in (8, 16, 64):
            o, S = call(name, x, form="chunked", chunk_size=C, initial_state=S0, return_state=True)
            assert_close(o, ref_o, **TOL[dtype])
            assert_close(S, ref_S, **TOL[dtype])


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", ["linear", "delta", "gated"])
def test_prefix_then_rest_equals_whole(name, form):
    x = inputs(41, seed=4)
    whole, S_whole = call(name, x, form=form, chunk_size=8, return_state=True)
    first = tuple(t[:, :, :13] for t in x[:-1]) + (None,)
    rest = tuple(t[:, :, 13:] for t in x[:-1]) + (None,)
    o1, S1 = call(name, first, form=form, chunk_size=8, return_state=True)
    o2, S2 = call(name, rest, form=form, chunk_size=8, initial_state=S1, return_state=True)
    assert_close(torch.cat([o1, o2], dim=2), whole, **TOL[torch.float64])
    assert_close(S2, S_whole, **TOL[torch.float64])


@pytest.mark.parametrize("form", FORMS)
def test_linear_attention_is_masked_product(form):
    q, k, v, *_ = inputs(23, seed=5)
    T = q.size(-2)
    M = torch.ones(T, T, dtype=torch.bool).tril()  # (T, T): i <= t, token t included
    ref = (q @ k.mT).masked_fill(~M, 0.0) @ v  # (B, h, T, d_v): (Q K^T . M) V
    assert_close(linear_attention(q, k, v, form=form, chunk_size=8), ref, **TOL[torch.float64])


@pytest.mark.parametrize("form", FORMS)
def test_gated_with_alpha_one_is_delta_rule(form):
    q, k, v, alpha, beta, S0 = inputs(30, seed=6)
    a1 = torch.ones_like(alpha)
    got = gated_delta_rule(q, k, v, a1, beta, form=form, chunk_size=8, initial_state=S0)
    want = delta_rule(q, k, v, beta, form=form, chunk_size=8, initial_state=S0)
    assert_close(got, want, **TOL[torch.float64])
    assert not torch.allclose(got, gated_delta_rule(q, k, v, alpha, beta, form=form, initial_state=S0))


@pytest.mark.parametrize("form", FORMS)
def test_delta_rule_with_beta_zero_keeps_the_state(form):
    q, k, v, _, beta, S0 = inputs(19, seed=7)
    o, S = delta_rule(q, k, v, torch.zeros_like(beta), form=form, chunk_size=8,
                      initial_state=S0, return_state=True)
    assert_close(S, S0, **TOL[torch.float64])
    assert_close(o, q @ S0, **TOL[torch.float64])  # o_t = S_0^T q_t for every t


def test_delta_rule_with_beta_one_stores_the_value():
    # unit key, beta = 1: afterwards the state returns v_t for k_t exactly
    q, k, v, _, beta, S0 = inputs(1, seed=8)
    _, S = delta_rule(q, k, v, torch.ones_like(beta), form="parallel", initial_state=S0, return_state=True)
    assert_close((S.mT @ k[:, :, 0, :, None])[..., 0], v[:, :, 0], **TOL[torch.float64])


def test_recurrence_by_hand():
    # one head, d_k = d_v = 1: S_1 = a S_0 + b k (v - a S_0 k), o_1 = S_1 q
    t = lambda x: torch.tensor(x, dtype=torch.float64).reshape(1, 1, 1, -1)  # noqa: E731
    q, k, v, S0 = t([2.0]), t([1.0]), t([3.0]), t([4.0])
    alpha, beta = t([0.5])[..., 0], t([0.25])[..., 0]
    o, S = gated_delta_rule(q, k, v, alpha, beta, form="chunked", chunk_size=4,
                            initial_state=S0, return_state=True)
    S1 = 0.5 * 4 + 0.25 * 1 * (3 - 0.5 * 4 * 1)  # 2.25
    assert S.item() == S1 and o.item() == 2 * S1


@pytest.mark.parametrize("bad, exc, words", [
    (dict(q=torch.zeros(2, 5, 4)), ValueError, "q must have shape (B, h, T, d_k)"),
    (dict(k=torch.zeros(1, 2, 5, 3)), ValueError, "k must have the shape of q"),
    (dict(v=torch.zeros(1, 2, 4, 3)), ValueError, "v must have shape (B, h, T, d_v)"),
    (dict(v=torch.zeros(1, 2, 5, 3, dtype=torch.float64)), TypeError, "v must have the dtype of q"),
    (dict(q=torch.zeros(1, 2, 5, 4, dtype=torch.long)), TypeError, "q must be a floating-point"),
    (dict(beta=torch.zeros(1, 2, 4)), ValueError, "beta must have shape (B, h, T)"),
    (dict(alpha=torch.zeros(1, 2, 5)), ValueError, "alpha must lie in (0, 1]"),
    (dict(alpha=torch.full((1, 2, 5), 1.5)), ValueError, "alpha must lie in (0, 1]"),
    (dict(form="tiled"), ValueError, "form must be 'parallel', 'recurrent' or 'chunked'"),
    (dict(form=None), ValueError, "form must be"),
    (dict(chunk_size=0), ValueError, "chunk_size must be a positive int"),
    (dict(chunk_size=8.0), TypeError, "chunk_size must be an int"),
    (dict(initial_state=torch.zeros(1, 2, 3, 4)), ValueError, "initial_state must have shape (B, h, d_k, d_v)"),
    (dict(return_state=1), TypeError, "return_state must be a bool"),
    (dict(k=[[0.0]]), TypeError, "k must be a torch.Tensor"),
])
def test_bad_arguments_are_named(bad, exc, words):
    args = dict(q=torch.zeros(1, 2, 5, 4), k=torch.zeros(1, 2, 5, 4), v=torch.zeros(1, 2, 5, 3),
                alpha=torch.ones(1, 2, 5), beta=torch.ones(1, 2, 5), form="chunked", chunk_size=8,
                initial_state=None, return_state=False)
    args.update(bad)
    with pytest.raises(exc) as err:
        gated_delta_rule(**args)
    assert words in str(err.value)
