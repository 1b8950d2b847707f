"""attn.models.two_relations: the task, model and training loop of chapter 9 and plot_09.

Tolerances: float32, atol=1e-6, rtol=1e-5 between two evaluations of the same float32
arithmetic in different orders (fast and explicit attention paths); exact (0) for
integer data and for reruns with the same seeds.
"""
import math

import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

from attn import MultiHeadAttention, PositionalEncoding
from attn.models.two_relations import TwoRelationNet, make_batch, train

F32 = dict(atol=1e-6, rtol=1e-5)
EXACT = dict(atol=0, rtol=0)


def test_make_batch_answers_by_hand():
    x, y = make_batch(5, torch.Generator().manual_seed(0), vocab_size=7, T=6)
    assert x.shape == y.shape == (5, 6) and x.dtype == torch.int64
    assert int(x.min()) >= 0 and int(x.max()) < 7
    for b in range(5):
        for t in range(2, 6):
            assert y[b, t].item() == (x[b, t - 1].item() - x[b, 0].item()) % 7
    again, _ = make_batch(5, torch.Generator().manual_seed(0), vocab_size=7, T=6)
    assert_close(again, x, **EXACT)  # the generator alone decides the data


def test_make_batch_checks():
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        make_batch(2, 0)
    with pytest.raises(ValueError, match="n must be a positive int"):
        make_batch(0, torch.Generator())
    with pytest.raises(TypeError, match="T must be an int"):
        make_batch(2, torch.Generator(), T=2.0)


def test_model_is_its_parts_in_order():
    torch.manual_seed(0)
    model = TwoRelationNet(10, 32, 10, 2).eval()
    names = [n for n, _ in model.named_children()]
    assert names == ["tok_emb", "pos", "mha", "readout"]
    assert isinstance(model.pos, PositionalEncoding) and isinstance(model.mha, MultiHeadAttention)
    assert model.mha.causal and model.mha.num_heads == 2
    x, _ = make_batch(3, torch.Generator().manual_seed(1))
    with torch.no_grad():
        by_parts = model.readout(model.mha(model.pos(model.tok_emb(x))))  # (3, T, V)
        out = model(x)
        out_w, att = model(x, return_weights=True)  # explicit path
    assert out.shape == (3, 10, 10) and att.shape == (3, 2, 10, 10)
    assert_close(out, by_parts, **EXACT)
    assert_close(out_w, out, **F32)
    assert_close(att.sum(-1), torch.ones(3, 2, 10), **F32)
    assert torch.all(att.triu(1) == 0)  # causal
    assert isinstance(TwoRelationNet(10, 32, 10, 2, positional=False).pos, torch.nn.Identity)
    with pytest.raises(TypeError, match="positional must be a bool"):
        TwoRelationNet(10, 32, 10, 2, positional=1)
    with pytest.raises(TypeError):
        TwoRelationNet(10, 32, 10, 2, False)  # positional is keyword-only


def test_train_is_the_loop_of_the_page():
    model, losses = train(T=6, steps=3, seed=4)
    assert not model.training and len(losses) == 3
    # the same loop written out: seeds, creation order, AdamW, fresh batches
    torch.manual_seed(4)
    ref = TwoRelationNet(10, 32, 6, 2)
    opt = torch.optim.AdamW(ref.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(5)
    ref_losses = []
    for _ in range(3):
        x, y = make_batch(64, g, T=6)
        loss = F.cross_entropy(ref(x)[:, 2:].reshape(-1, 10), y[:, 2:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        ref_losses.append(loss.item())
    assert losses == ref_losses  # same float32 arithmetic, in the same order
    for p, q in zip(model.parameters(), ref.parameters()):
        assert_close(p, q, **EXACT)
    assert abs(losses[0] - math.log(10)) < 0.3  # an untrained model guesses about uniformly


def test_train_checks():
    with pytest.raises(ValueError, match="steps must be a positive int"):
        train(steps=0)
    with pytest.raises(TypeError, match="seed must be an int"):
        train(seed=0.5)
