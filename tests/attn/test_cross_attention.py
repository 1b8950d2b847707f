"""attn.CrossAttention against torch.nn.MultiheadAttention, and the tiny encoder–decoder.

Tolerances: float64 atol=1e-10, rtol=1e-8; float32 atol=1e-5, rtol=1e-4 (the two
implementations sum in different orders).
"""
import pytest
import torch
from torch.testing import assert_close

import attn
from attn.models import seq2seq as S

TOL = {torch.float64: dict(atol=1e-10, rtol=1e-8), torch.float32: dict(atol=1e-5, rtol=1e-4)}


def _pair(dtype, qkv_bias, d=8, d_context=6, h=2, seed=0):
    """A CrossAttention and a torch.nn.MultiheadAttention with the same weights."""
    torch.manual_seed(seed)
    ca = attn.CrossAttention(d, d_context, d, h, qkv_bias=qkv_bias).to(dtype).eval()
    mha = torch.nn.MultiheadAttention(d, h, kdim=d_context, vdim=d_context, batch_first=True).to(dtype).eval()
    with torch.no_grad():
        mha.q_proj_weight.copy_(ca.W_query.weight)
        mha.k_proj_weight.copy_(ca.W_key.weight)
        mha.v_proj_weight.copy_(ca.W_value.weight)
        mha.in_proj_bias.zero_()
        if qkv_bias:
            mha.in_proj_bias.copy_(torch.cat([ca.W_query.bias, ca.W_key.bias, ca.W_value.bias]))
        mha.out_proj.weight.copy_(ca.out_proj.weight)
        mha.out_proj.bias.copy_(ca.out_proj.bias)
    return ca, mha


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("qkv_bias", [False, True])
@pytest.mark.parametrize("padded", [False, True])
def test_equals_torch_multihead_attention(dtype, qkv_bias, padded):
    ca, mha = _pair(dtype, qkv_bias)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(3, 5, 8, generator=g, dtype=dtype)
    context = torch.randn(3, 7, 6, generator=g, dtype=dtype)
    real = attn.functional.padding_mask(torch.tensor([7, 4, 2]), 7) if padded else None
    out, w = ca(x, context, context_padding_mask=real, return_weights=True)
    ref, ref_w = mha(x, context, context, key_padding_mask=None if real is None else ~real,
                     average_attn_weights=False)
    assert out.shape == (3, 5, 8) and w.shape == (3, 2, 5, 7)
    assert_close(out, ref, **TOL[dtype])
    assert_close(w, ref_w, **TOL[dtype])
    assert_close(ca(x, context, context_padding_mask=real), out, **TOL[dtype])  # fused path agrees
    if padded:
        assert not ref_w[1, :, :, 4:].any()  # the reference's padding really is ignored
        assert_close(w.sum(-1), torch.ones(3, 2, 5, dtype=dtype), **TOL[dtype])


def test_padded_context_gets_weight_exactly_zero_and_does_not_matter():
    ca, _ = _pair(torch.float64, False)
    g = torch.Generator().manual_seed(2)
    x, context = torch.randn(2, 4, 8, generator=g, dtype=torch.float64), torch.randn(2, 6, 6, generator=g, dtype=torch.float64)
    real = attn.functional.padding_mask(torch.tensor([6, 3]), 6)
    out, w = ca(x, context, context_padding_mask=real, return_weights=True)
    assert torch.equal(w[1, :, :, 3:], torch.zeros(2, 4, 3, dtype=torch.float64))
    assert (w[1, :, :, :3] > 0).all()
    changed = context.clone()
    changed[1, 3:] = 100.0  # what sits in the padding cannot change the output
    assert_close(ca(x, changed, context_padding_mask=real), out, **TOL[torch.float64])


def test_no_causal_mask_every_query_reads_every_context_token():
    ca, _ = _pair(torch.float64, False)
    g = torch.Generator().manual_seed(3)
    _, w = ca(torch.randn(1, 4, 8, generator=g, dtype=torch.float64),
              torch.randn(1, 4, 6, generator=g, dtype=torch.float64), return_weights=True)
    assert (w > 0).all()  # the first query too reads the last context token


def test_children_order_and_shapes():
    ca = attn.CrossAttention(8, 6, 4, 2, qkv_bias=True)
    assert [n for n, _ in ca.named_children()] == ["W_query", "W_key", "W_value", "out_proj", "dropout"]
    assert ca.W_query.weight.shape == (4, 8) and ca.W_key.weight.shape == (4, 6)
    assert ca.W_value.weight.shape == (4, 6) and ca.out_proj.bias is not None
    assert attn.CrossAttention(8, 6, 4, 2).W_key.bias is None
    out = ca(torch.randn(5, 8), torch.randn(3, 6))  # unbatched
    assert out.shape == (5, 4)


@pytest.mark.parametrize("args, exc, words", [
    ((8, 6, 8, 3), ValueError, "divisible by num_heads"),
    ((8, 0, 8, 2), ValueError, "d_context"),
    ((8, 6.0, 8, 2), TypeError, "d_context"),
    ((8, 6, 8, 2, 1.5), ValueError, "dropout"),
])
def test_bad_constructor_arguments(args, exc, words):
    with pytest.raises(exc, match=words):
        attn.CrossAttention(*args)


@pytest.mark.parametrize("call, exc, words", [
    (lambda ca: ca([[1.0]], torch.randn(2, 3, 6)), TypeError, "x must be a torch.Tensor"),
    (lambda ca: ca(torch.randn(2, 4, 7), torch.randn(2, 3, 6)), ValueError, "x must have last dimension d_in=8"),
    (lambda ca: ca(torch.randn(2, 4, 8), torch.randn(2, 3, 8)), ValueError, "context must have last dimension d_context=6"),
    (lambda ca: ca(torch.randn(2, 4, 8), torch.randn(3, 3, 6)), ValueError, "same B"),
    (lambda ca: ca(torch.randn(2, 4, 8), torch.randn(3, 6)), ValueError, "both unbatched"),
    (lambda ca: ca(torch.randn(2, 4, 8), torch.randn(2, 3, 6).double()), TypeError, "context must have dtype"),
    (lambda ca: ca(torch.randn(2, 4, 8), torch.randn(2, 0, 6)), ValueError, "at least one token"),
    (lambda ca: ca(torch.randn(2, 4, 8), torch.randn(2, 3, 6), context_padding_mask=torch.ones(2, 3)),
     TypeError, "context_padding_mask must be a torch.bool"),
    (lambda ca: ca(torch.randn(2, 4, 8), torch.randn(2, 3, 6), context_padding_mask=torch.ones(2, 4, dtype=torch.bool)),
     ValueError, r"context_padding_mask must have shape \(B, T\) = \(2, 3\)"),
    (lambda ca: ca(torch.randn(2, 4, 8), torch.randn(2, 3, 6), return_weights=1), TypeError, "return_weights"),
])
def test_bad_forward_inputs(call, exc, words):
    with pytest.raises(exc, match=words):
        call(attn.CrossAttention(8, 6, 8, 2))


# The encoder–decoder of attn.models.seq2seq


def test_date_batch_rewrites_dates_and_alignment_points_at_the_copied_digit():
    src, tgt = S.date_batch(50, torch.Generator().manual_seed(0))
    assert src.shape == tgt.shape == (50, 10)
    for a, b in zip(src, tgt):
        s, t = S.decode(a), S.decode(b)
        assert t == f"{s[6:]}-{s[3:5]}-{s[:2]}"
        assert all(j is None or t[i] == s[j] for i, j in enumerate(S.ALIGNMENT))


def test_trained_model_aligns_and_rewrites_held_out_dates():
    torch.manual_seed(0)
    m = S.Seq2Seq(d_model=32, num_heads=1)
    losses = S.train(m, steps=250, seed=0)
    assert losses[-1] < 0.1 * losses[0]
    src, tgt = S.date_batch(200, torch.Generator().manual_seed(99))
    assert S.alignment_accuracy(m, src, tgt) > 0.9
    assert S.exact_match(m, src, tgt) > 0.9
    assert S.cross_weights(m, src[:2], tgt[:2]).shape == (2, 1, 10, 10)


def test_untrained_model_does_not_align():
    torch.manual_seed(0)
    m = S.Seq2Seq(d_model=32, num_heads=1).eval()
    src, tgt = S.date_batch(200, torch.Generator().manual_seed(99))
    assert S.alignment_accuracy(m, src, tgt) < 0.5  # the measurement can fail
    assert S.exact_match(m, src, tgt) < 0.1


def test_seq2seq_bad_inputs():
    m = S.Seq2Seq(d_model=16)
    src, tgt = S.date_batch(2)
    with pytest.raises(ValueError, match="src must lie in"):
        m(src + 20, tgt)
    with pytest.raises(TypeError, match="integer tensor"):
        m(src.float(), tgt)
    with pytest.raises(ValueError, match="same B"):
        m(src, tgt[:1])
    with pytest.raises(ValueError, match=r"tgt must have shape \(B, 10\)"):
        S.alignment_accuracy(m, src, tgt[:, :5])
    with pytest.raises(TypeError, match="model must be"):
        S.train(torch.nn.Linear(2, 2), steps=1)
    with pytest.raises(ValueError, match="text must be"):
        S.encode("24.11.2026")
    with pytest.raises(ValueError, match="steps"):
        S.train(m, steps=0)


def test_cross_causal_masks_each_decoder_step_to_source_positions_up_to_its_own():
    torch.manual_seed(0)
    m = S.Seq2Seq(d_model=16, num_heads=2).double().eval()
    src, tgt = S.date_batch(3, torch.Generator().manual_seed(5))
    tgt_in = torch.cat([torch.full((3, 1), S.BOS), tgt[:, :-1]], 1)  # (B, 10)
    logits, w = m(src, tgt_in, return_weights=True)
    m.cross_causal = True  # an attribute: switched on after construction (or training)
    logits_c, w_c = m(src, tgt_in, return_weights=True)
    assert "cross_causal=True" in repr(m)
    assert torch.all(w_c.triu(1) == 0) and not torch.all(w.triu(1) == 0)
    assert_close(w_c.sum(-1), torch.ones(3, 2, 10, dtype=torch.float64), atol=1e-12, rtol=0.0)
    # reference: the same layer with a (T_q, T_ctx) causal mask, in one call
    with torch.no_grad():
        h = m.tok_emb(src) + m.src_pos.weight[:10]
        h = h + m.enc_attn(m.enc_ln(h))
        h = h + m.enc_mlp(h)  # (B, T_src, d)
        y = m.tok_emb(tgt_in) + m.tgt_pos.weight[:10]
        y = m.dec_ln2(y + m.dec_attn(m.dec_ln1(y)))  # (B, T_tgt, d)
        q, k, v = (W(t).view(3, 10, 2, 8).transpose(1, 2) for W, t in
                   ((m.cross.W_query, y), (m.cross.W_key, h), (m.cross.W_value, h)))  # (B, h, T, d_h)
        ref_w = (q @ k.transpose(-2, -1) / 8 ** 0.5).masked_fill(~torch.ones(10, 10).bool().tril(),
                                                                 float("-inf")).softmax(-1)
        _, w_mine = m._cross(y, h)
    assert_close(w_c, ref_w, atol=1e-10, rtol=1e-8)
    assert_close(w_mine, ref_w, atol=1e-10, rtol=1e-8)
    # the first step reads source position 0 only
    assert_close(w_c[..., 0, 0], torch.ones(3, 2, dtype=torch.float64), atol=0.0, rtol=0.0)
    with pytest.raises(TypeError, match="cross_causal"):
        S.Seq2Seq(d_model=16, cross_causal=1)
