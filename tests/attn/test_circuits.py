"""attn.functional's circuit scores and attn.models.circuits, the attention-only model.

Tolerances: scores of hand-built float64 patterns atol=1e-12, rtol=0; the model's
layers against torch.nn.functional.scaled_dot_product_attention float64 atol=1e-12,
rtol=1e-10.
"""
import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

import attn.functional as AF
from attn.models.circuits import AttentionOnly, copy_accuracy, repeated_tokens, train_induction

EXACT = dict(atol=1e-12, rtol=0.0)


def _one_hot_rows(T, cols):
    """``(T, T)`` float64 weights, row ``i`` all on column ``cols[i]``."""
    w = torch.zeros(T, T, dtype=torch.float64)
    w[torch.arange(T), torch.as_tensor(cols)] = 1.0
    return w


def test_previous_token_pattern_scores_one():
    T = 9
    w = _one_hot_rows(T, [0] + list(range(T - 1)))  # row i on i-1 (row 0 on itself)
    assert_close(AF.previous_token_score(w), torch.tensor(1.0, dtype=torch.float64), **EXACT)
    assert_close(AF.previous_token_score(torch.eye(T, dtype=torch.float64)), torch.tensor(0.0, dtype=torch.float64), **EXACT)


def test_uniform_weights_score_one_over_T():
    T, p = 8, 3
    w = torch.full((2, 5, T, T), 1.0 / T, dtype=torch.float64)
    assert AF.previous_token_score(w).shape == (2, 5)
    assert_close(AF.previous_token_score(w), torch.full((2, 5), 1.0 / T, dtype=torch.float64), **EXACT)
    assert_close(AF.induction_score(w, p), torch.full((2, 5), 1.0 / T, dtype=torch.float64), **EXACT)


def test_causal_uniform_previous_token_score_is_the_mean_of_one_over_row_length():
    T = 6
    w = torch.tril(torch.ones(T, T, dtype=torch.float64))
    w = w / w.sum(-1, keepdim=True)  # row i: 1 / (i + 1) on keys 0..i
    want = sum(1.0 / (i + 1) for i in range(1, T)) / (T - 1)
    assert_close(AF.previous_token_score(w), torch.tensor(want, dtype=torch.float64), **EXACT)


def test_induction_pattern_scores_one_and_previous_token_pattern_does_not():
    T, p = 12, 5
    cols = [0] * p + [i - p + 1 for i in range(p, T)]  # rows i >= p on i - p + 1
    w = _one_hot_rows(T, cols)
    assert_close(AF.induction_score(w, p), torch.tensor(1.0, dtype=torch.float64), **EXACT)
    prev = _one_hot_rows(T, [0] + list(range(T - 1)))
    assert_close(AF.induction_score(prev, p), torch.tensor(0.0, dtype=torch.float64), **EXACT)
    # only rows i >= p count: one row moved off the diagonal costs 1 / (T - p)
    w[T - 1] = 0.0
    w[T - 1, 0] = 1.0
    assert_close(AF.induction_score(w, p), torch.tensor(1 - 1 / (T - p), dtype=torch.float64), **EXACT)


def test_scores_refuse_bad_input():
    w = torch.rand(4, 4)
    with pytest.raises(ValueError, match="period"):
        AF.induction_score(w, 4)  # period >= T
    with pytest.raises(ValueError, match="period"):
        AF.induction_score(w, 0)
    with pytest.raises(TypeError, match="period"):
        AF.induction_score(w, 1.5)
    for f in (AF.previous_token_score, lambda x: AF.induction_score(x, 1)):
        with pytest.raises(ValueError, match=r"\(\.\.\., T, T\)"):
            f(torch.rand(4, 5))
        with pytest.raises(ValueError, match=r"\(\.\.\., T, T\)"):
            f(torch.rand(4))
        with pytest.raises(TypeError, match="weights"):
            f(torch.ones(4, 4, dtype=torch.long))
        with pytest.raises(TypeError, match="weights"):
            f([[1.0]])
    with pytest.raises(ValueError, match="T >= 2"):
        AF.previous_token_score(torch.ones(3, 1, 1))


def _model(seed=0):
    torch.manual_seed(seed)
    return AttentionOnly(13, 16, d_model=12, num_layers=2, num_heads=3).double().eval()


def test_shapes_and_weights():
    m = _model()
    x = torch.randint(0, 13, (4, 10), generator=torch.Generator().manual_seed(1))
    logits, w = m(x, return_weights=True)
    assert logits.shape == (4, 10, 13)
    assert w.shape == (2, 4, 3, 10, 10)
    assert_close(w.sum(-1), torch.ones(2, 4, 3, 10, dtype=torch.float64), **EXACT)
    assert torch.all(w.triu(1) == 0)  # causal
    assert torch.equal(m(x), logits)


def test_layer_matches_pytorch_attention_and_ablation_zeroes_one_head():
    m = _model(seed=2)
    layer, h = m.layers[0], 3
    x = torch.randn(2, 7, 12, dtype=torch.float64)
    B, T, d = x.shape
    q, k, v = (W(x).view(B, T, h, d // h).transpose(1, 2) for W in (layer.W_query, layer.W_key, layer.W_value))
    heads = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, h, T, d_h)
    keep = torch.tensor([1.0, 0.0, 1.0], dtype=torch.float64)
    heads = heads * keep[:, None, None]
    want = layer.out_proj(heads.transpose(1, 2).reshape(B, T, d))
    out, _ = layer(x, keep)
    assert_close(out, want, atol=1e-12, rtol=1e-10)


def test_ablate_changes_only_what_follows():
    m = _model(seed=4)
    x = torch.randint(0, 13, (3, 12), generator=torch.Generator().manual_seed(5))
    _, w = m(x, return_weights=True)
    logits_a, w_a = m(x, return_weights=True, ablate=[(1, 2)])
    assert torch.equal(w_a[0], w[0]) and torch.equal(w_a[1], w[1])  # weights of layer 1 come before its output
    _, w_b = m(x, return_weights=True, ablate=[(0, 1)])
    assert torch.equal(w_b[0], w[0]) and not torch.equal(w_b[1], w[1])
    assert not torch.equal(logits_a, m(x))


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        (dict(idx=torch.zeros(2, 17, dtype=torch.long)), ValueError, "context_length"),
        (dict(idx=torch.zeros(2, 5)), TypeError, "int64"),
        (dict(idx=torch.zeros(5, dtype=torch.long)), ValueError, r"\(B, T\)"),
        (dict(idx=torch.full((1, 3), 13)), ValueError, "vocab_size"),
        (dict(ablate=[(2, 0)]), ValueError, "ablate"),
        (dict(ablate=[(0, 3)]), ValueError, "ablate"),
        (dict(ablate=[(0,)]), ValueError, "ablate"),
        (dict(ablate=5), TypeError, "ablate"),
        (dict(return_weights=1), TypeError, "return_weights"),
    ],
)
def test_forward_refuses_bad_input(kwargs, err, match):
    args = dict(idx=torch.zeros(2, 5, dtype=torch.long))
    args.update(kwargs)
    idx = args.pop("idx")
    with pytest.raises(err, match=match):
        _model()(idx, **args)


def test_constructor_and_helpers_refuse_bad_input():
    with pytest.raises(ValueError, match="num_heads"):
        AttentionOnly(10, 8, d_model=10, num_heads=3)
    with pytest.raises(ValueError, match="vocab_size"):
        AttentionOnly(0, 8)
    with pytest.raises(TypeError, match="model"):
        train_induction(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="context_length"):
        train_induction(_model(), half=9)
    with pytest.raises(ValueError, match="lr"):
        train_induction(_model(), lr=-1.0)
    with pytest.raises(ValueError, match="even"):
        copy_accuracy(_model(), torch.zeros(2, 7, dtype=torch.long))


def test_repeated_tokens_repeat():
    x = repeated_tokens(5, 6, 20, torch.Generator().manual_seed(0))
    assert x.shape == (5, 12) and x.dtype == torch.long
    assert torch.equal(x[:, :6], x[:, 6:])


def test_short_training_lowers_the_loss_on_copies_and_is_seeded():
    m = AttentionOnly(16, 12, d_model=16, num_heads=2)
    fresh, repeat = train_induction(m, steps=30, batch_size=16, half=6, seed=3)
    assert len(fresh) == len(repeat) == 30
    assert sum(repeat[-5:]) / 5 < sum(repeat[:5]) / 5  # copies get easier
    m2 = AttentionOnly(16, 12, d_model=16, num_heads=2)
    assert train_induction(m2, steps=30, batch_size=16, half=6, seed=3) == (fresh, repeat)
    acc = copy_accuracy(m, repeated_tokens(8, 6, 16, torch.Generator().manual_seed(0)))
    assert 0.0 <= acc <= 1.0


def test_record_measures_the_heads_without_changing_the_training():
    kwargs = dict(steps=12, batch_size=8, half=5, seed=4)
    m, m2 = AttentionOnly(16, 10, d_model=16, num_heads=2), AttentionOnly(16, 10, d_model=16, num_heads=2)
    fresh, repeat = train_induction(m, **kwargs)
    fresh2, repeat2, trace = train_induction(m2, **kwargs, record=5)
    assert (fresh2, repeat2) == (fresh, repeat)  # the probes leave the training untouched
    for a, b in zip(m.state_dict().values(), m2.state_dict().values()):
        assert torch.equal(a, b)
    assert trace["step"].tolist() == [0, 5, 10, 12]  # every 5 steps, and after the last
    assert trace["prev"].shape == trace["ind"].shape == (4, 2, 2)
    assert trace["p_seen"].shape == trace["p_target"].shape == (4,)
    # the last row measures the trained model on the probe sequences
    probe = repeated_tokens(64, 5, 16, generator=torch.Generator().manual_seed(4 + 1))
    with torch.no_grad():
        logits, w = m(probe, return_weights=True)
    assert_close(trace["prev"][-1], AF.previous_token_score(w).mean(1), atol=0.0, rtol=0.0)
    assert_close(trace["ind"][-1], AF.induction_score(w, 5).mean(1), atol=0.0, rtol=0.0)
    p = logits[:, 5:-1].softmax(-1)  # (B, 4, V): targets x_6 .. x_9
    assert_close(trace["p_target"][-1], p.gather(-1, probe[:, 6:, None]).mean(), atol=1e-7, rtol=0.0)
    seen = torch.zeros_like(p)
    for i in range(4):  # tokens x_0 .. x_{5+i}
        seen[:, i].scatter_(1, probe[:, :6 + i], 1.0)
    assert_close(trace["p_seen"][-1], (p * seen).sum(-1).mean(), atol=1e-7, rtol=0.0)
    assert (trace["p_target"] <= trace["p_seen"] + 1e-6).all()  # the target is a seen token
    with pytest.raises(ValueError, match="record"):
        train_induction(m, steps=2, batch_size=4, half=5, record=-1)
    with pytest.raises(TypeError, match="record"):
        train_induction(m, steps=2, batch_size=4, half=5, record=1.5)


def test_layer_keys_and_values_can_read_other_streams():
    torch.manual_seed(0)
    layer = AttentionOnly(8, 6, d_model=8, num_heads=2).layers[0].double()
    x, xk, xv = torch.randn(3, 2, 6, 8, dtype=torch.float64)
    keep = torch.ones(2, dtype=torch.float64)
    out, w = layer(x, keep)
    out2, w2 = layer(x, keep, x_key=x, x_value=x)
    assert torch.equal(out, out2) and torch.equal(w, w2)
    out, w = layer(x, keep, x_key=xk, x_value=xv)
    q = layer.W_query(x).view(2, 6, 2, 4).transpose(1, 2)  # (B, T, d) -> (B, h, T, d_h)
    k = layer.W_key(xk).view(2, 6, 2, 4).transpose(1, 2)
    v = layer.W_value(xv).view(2, 6, 2, 4).transpose(1, 2)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, h, T, d_h)
    assert_close(out, layer.out_proj(ref.transpose(1, 2).reshape(2, 6, 8)), atol=1e-12, rtol=1e-10)
    want = (q @ k.transpose(-2, -1) / 2.0).masked_fill(~AF.causal_mask(6), float("-inf")).softmax(-1)
    assert_close(w, want, atol=1e-12, rtol=1e-10)
