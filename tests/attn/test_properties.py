"""Properties of attention that hold for any input (hypothesis draws shapes and seeds)."""
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.testing import assert_close

import attn
import attn.functional as AF

seeds = st.integers(0, 2**16)


@given(seed=seeds, T_q=st.integers(1, 8), T_k=st.integers(1, 8), d=st.integers(1, 8),
       masked=st.booleans(), is_causal=st.booleans())
def test_weight_rows_sum_to_one(seed, T_q, T_k, d, masked, is_causal):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(2, T_q, d, generator=g)
    k = torch.randn(2, T_k, d, generator=g)
    mask = None
    if masked:
        mask = torch.rand(2, T_q, T_k, generator=g) < 0.5
        mask[..., 0] = True
    w = AF.attention_weights(q, k, mask, is_causal=is_causal)
    assert w.shape == (2, T_q, T_k)
    assert (w >= 0).all()
    assert_close(w.sum(-1), torch.ones(2, T_q), atol=1e-6, rtol=0.0)  # float32
    if mask is not None:
        assert (w[~mask.expand_as(w)] == 0).all()  # masked keys get exactly zero
    if is_causal:
        assert (w[..., ~AF.causal_mask(T_q, T_k)] == 0).all()


@given(seed=seeds, T=st.integers(1, 10), causal=st.booleans())
def test_module_weight_rows_sum_to_one(seed, T, causal):
    torch.manual_seed(seed)
    mha = attn.MultiHeadAttention(8, 8, 10, 0.0, 4, causal=causal)
    _, w = mha(torch.randn(3, T, 8), return_weights=True)
    assert w.shape == (3, 4, T, T)
    assert_close(w.sum(-1), torch.ones(3, 4, T), atol=1e-6, rtol=0.0)  # float32


CAUSAL_MODULES = {
    "causal": lambda: attn.CausalAttention(6, 4, 12, 0.0),
    "wrapper": lambda: attn.MultiHeadAttentionWrapper(6, 2, 12, 0.0, 3),
    "mha": lambda: attn.MultiHeadAttention(6, 6, 12, 0.0, 3),
    "block": lambda: attn.TransformerInputBlock(50, 6, 3, context_length=12, dropout=0.0, causal=True),
}


@pytest.mark.parametrize("name", sorted(CAUSAL_MODULES))
@given(seed=seeds, T=st.integers(2, 12), data=st.data())
def test_causal_output_ignores_the_future(name, seed, T, data):
    t = data.draw(st.integers(0, T - 2), label="t")
    torch.manual_seed(seed)
    m = CAUSAL_MODULES[name]().eval()
    if name == "block":
        x = torch.randint(1, 50, (2, T))
        y = x.clone()
        y[:, t + 1:] = torch.randint(1, 50, (2, T - t - 1))
    else:
        x = torch.randn(2, T, 6)
        y = x.clone()
        y[:, t + 1:] = torch.randn(2, T - t - 1, 6)  # change every token after t
    for return_weights in (False, True):
        a, b = m(x, return_weights=return_weights), m(y, return_weights=return_weights)
        if return_weights:
            a, b = a[0], b[0]
        assert_close(a[:, : t + 1], b[:, : t + 1], atol=1e-6, rtol=1e-5)  # float32


def test_non_causal_output_sees_the_future():
    torch.manual_seed(0)
    m = attn.MultiHeadAttention(6, 6, 12, 0.0, 3, causal=False)
    x = torch.randn(1, 5, 6)
    y = x.clone()
    y[:, 4] += 1.0
    assert (m(x)[:, 0] - m(y)[:, 0]).abs().max() > 1e-4


@given(seed=seeds, T=st.integers(2, 10), data=st.data())
def test_permutation_equivariance_without_pe_and_not_with_pe(seed, T, data):
    perm = torch.tensor(data.draw(st.permutations(range(T)), label="perm"))
    torch.manual_seed(seed)
    block = attn.TransformerInputBlock(100, 16, 4, context_length=16, dropout=0.0).eval()
    tokens = torch.randperm(99)[:T][None] + 1  # (1, T) distinct ids, no padding id 0
    # attention alone: permuting the tokens permutes the output
    e = block.embedding(tokens)
    assert_close(block.mha(e[:, perm]), block.mha(e)[:, perm], atol=1e-6, rtol=1e-5)  # float32
    # with the positional encoding, a real permutation changes the output
    out, out_p = block(tokens), block(tokens[:, perm])
    if (perm != torch.arange(T)).any():
        assert (out_p - out[:, perm]).abs().max() > 1e-3
    else:
        assert_close(out_p, out, atol=0.0, rtol=0.0)


@pytest.mark.parametrize("return_weights", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fully_masked_row_gives_zeros_and_finite_gradients(return_weights, dtype):
    g = torch.Generator().manual_seed(5)
    q = torch.randn(2, 4, 3, generator=g, dtype=dtype, requires_grad=True)
    k = torch.randn(2, 5, 3, generator=g, dtype=dtype, requires_grad=True)
    v = torch.randn(2, 5, 2, generator=g, dtype=dtype, requires_grad=True)
    mask = torch.rand(2, 4, 5, generator=g) < 0.6
    mask[..., 0] = True
    mask[0, 1] = False  # query 1 of batch 0 may attend to nothing
    mask[1, 3] = False
    out = AF.scaled_dot_product_attention(q, k, v, mask, return_weights=return_weights)
    if return_weights:
        out, w = out
        assert torch.isfinite(w).all()
        assert (w[0, 1] == 0).all() and (w[1, 3] == 0).all()
        assert_close(w[0, 0].sum(), torch.tensor(1.0, dtype=dtype), atol=1e-6, rtol=0.0)
    assert torch.isfinite(out).all()
    assert (out[0, 1] == 0).all() and (out[1, 3] == 0).all()
    out.sum().backward()
    for t in (q, k, v):
        assert torch.isfinite(t.grad).all()
    assert (q.grad[0, 1] == 0).all()  # an empty row depends on nothing


def test_fully_masked_rows_in_modules():
    torch.manual_seed(0)
    mha = attn.MultiHeadAttention(4, 4, 6, 0.0, 2, causal=False)
    x = torch.randn(2, 6, 4, requires_grad=True)
    kpm = torch.tensor([[True] * 6, [False] * 6])  # second sequence: padding only
    for return_weights in (False, True):
        out = mha(x, key_padding_mask=kpm, return_weights=return_weights)
        if return_weights:
            out, w = out
            assert (w[1] == 0).all()
        assert torch.isfinite(out).all()
        # zero context before out_proj: the output row is out_proj's bias
        assert_close(out[1], mha.out_proj.bias.expand(6, 4), atol=0.0, rtol=0.0)
        grad = torch.autograd.grad(out.sum(), x)[0]
        assert torch.isfinite(grad).all()
    seq = attn.SeqFirstMultiHeadAttention(2, 4).load_from(mha)
    xs = x.transpose(0, 1)
    got = seq(xs, xs, xs, mask=kpm.T[None])
    assert torch.isfinite(got).all()
    assert_close(got.transpose(0, 1), mha(x, key_padding_mask=kpm), atol=1e-6, rtol=1e-5)  # float32


def test_dropout_on_explicit_path_scales_kept_weights():
    g = torch.Generator().manual_seed(1)
    q, k, v = torch.randn(3, 8, 4, generator=g), torch.randn(3, 8, 4, generator=g), torch.randn(3, 8, 4, generator=g)
    clean = AF.attention_weights(q, k)
    torch.manual_seed(0)
    out, w = AF.scaled_dot_product_attention(q, k, v, dropout_p=0.5, return_weights=True)
    dropped = w == 0
    assert dropped.any() and (~dropped).any()
    assert_close(w[~dropped], clean[~dropped] / 0.5, atol=1e-6, rtol=1e-5)  # float32
    assert_close(out, w @ v, atol=1e-6, rtol=1e-5)  # float32


def test_dropout_only_in_training_mode():
    torch.manual_seed(0)
    m = attn.MultiHeadAttention(8, 8, 10, 0.5, 2)
    x = torch.randn(2, 10, 8)
    m.eval()
    assert_close(m(x), m(x), atol=0.0, rtol=0.0)
    m.train()
    assert (m(x) - m.eval()(x)).abs().max() > 1e-4
    ca = attn.CausalAttention(8, 4, 10, 0.5).train()
    _, w = ca(x, return_weights=True)
    assert (w == 0).sum() > (~AF.causal_mask(10)).sum() * 2  # more zeros than the mask alone


def test_masks():
    assert AF.causal_mask(3).tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    assert AF.causal_mask(2, 3).tolist() == [[True, False, False], [True, True, False]]
    assert AF.padding_mask(torch.tensor([2, 0, 3]), 3).tolist() == [
        [True, True, False], [False, False, False], [True, True, True]
    ]
    assert AF.padding_mask([1], 2).tolist() == [[True, False]]
    ca = attn.CausalAttention(2, 2, 4, 0.0)
    assert ca.mask.dtype == torch.bool and torch.equal(ca.mask, AF.causal_mask(4))
    assert attn.MultiHeadAttention(2, 2, 4, 0.0, 1, causal=False).mask is None


def test_positional_encoding_adds_the_table():
    pe = attn.PositionalEncoding(6, max_len=10, dropout=0.0)
    x = torch.randn(2, 7, 6)
    assert_close(pe(x), x + pe.pe[:7], atol=0.0, rtol=0.0)
    assert_close(pe(x[0]), x[0] + pe.pe[:7], atol=0.0, rtol=0.0)


@pytest.mark.parametrize("d_model", [4, 5, 8])
def test_positional_table_follows_the_formula(d_model):
    pe = attn.PositionalEncoding(d_model, max_len=20, dropout=0.0).pe
    pos = torch.arange(20, dtype=torch.float64)[:, None]  # (20, 1)
    i2 = torch.arange(d_model, dtype=torch.float64) // 2 * 2  # 2i for columns 2i and 2i+1
    angle = pos / 10000 ** (i2 / d_model)  # (20, d_model)
    want = torch.where(torch.arange(d_model) % 2 == 0, torch.sin(angle), torch.cos(angle))
    assert_close(pe.double(), want, atol=1e-5, rtol=0.0)  # float32 table vs float64 formula

def test_unbatched_padding_mask_and_weights_shape():
    torch.manual_seed(0)
    mha = attn.MultiHeadAttention(4, 4, 6, 0.0, 2, causal=False)
    x = torch.randn(5, 4)
    kpm = torch.tensor([True, True, True, False, False])
    z, w = mha(x, key_padding_mask=kpm, return_weights=True)
    assert z.shape == (5, 4) and w.shape == (2, 5, 5)
    assert (w[..., 3:] == 0).all()
    assert_close(z, mha(x[None], key_padding_mask=kpm[None])[0], atol=1e-6, rtol=1e-5)  # float32
