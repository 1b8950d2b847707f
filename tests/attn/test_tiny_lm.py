"""attn.tiny_lm: the small causal language model, its cache-based generation and training.

Tolerance for logits compared between paths: float64 atol=1e-10, rtol=1e-8.
"""
import pytest
import torch
from torch.testing import assert_close

from attn.tiny_lm import TinyLM, evaluate, pattern_batch, train

TOL64 = dict(atol=1e-10, rtol=1e-8)


def _model(num_kv_heads=None, seed=0):
    torch.manual_seed(seed)
    return TinyLM(11, 24, d_model=16, num_layers=2, num_heads=4, num_kv_heads=num_kv_heads).double().eval()


@pytest.mark.parametrize("num_kv_heads", [None, 2, 1])
def test_forward_in_chunks_with_caches_equals_whole(num_kv_heads):
    m = _model(num_kv_heads)
    idx = torch.randint(0, 11, (3, 20), generator=torch.Generator().manual_seed(1))
    caches = m.new_caches()
    with torch.no_grad():
        whole = m(idx)
        parts = [m(idx[:, a:b], caches) for a, b in ((0, 7), (7, 8), (8, 15), (15, 20))]
    assert [len(c) for c in caches] == [20, 20]
    assert_close(torch.cat(parts, dim=1), whole, **TOL64)


@pytest.mark.parametrize("num_kv_heads", [None, 1])
def test_generate_with_and_without_cache_gives_the_same_tokens(num_kv_heads):
    m = _model(num_kv_heads, seed=3)
    prompt = torch.randint(0, 11, (4, 5), generator=torch.Generator().manual_seed(2))
    a = m.generate(prompt, 19, use_cache=True)
    b = m.generate(prompt, 19, use_cache=False)
    assert a.shape == (4, 24)
    assert torch.equal(a[:, :5], prompt)
    assert torch.equal(a, b)
    with torch.no_grad():  # each new token is the argmax of the model on what precedes it
        logits = m(a[:, :-1])
    assert torch.equal(a[:, 5:], logits[:, 4:].argmax(-1))


def test_pattern_batch_repeats_its_first_period():
    x = pattern_batch(5, 21, period=4, vocab_size=7, generator=torch.Generator().manual_seed(0))
    assert x.shape == (5, 21) and x.dtype == torch.long
    assert torch.equal(x[:, 4:], x[:, :-4])
    assert x.min() >= 0 and x.max() < 7


def test_training_lowers_the_loss():
    torch.manual_seed(0)
    m = TinyLM(6, 16, d_model=16, num_layers=1, num_heads=2)
    x = pattern_batch(16, 16, period=3, vocab_size=6, generator=torch.Generator().manual_seed(5))
    before = evaluate(m, x)
    losses = train(m, lambda g: pattern_batch(8, 16, period=3, vocab_size=6, generator=g), steps=40, lr=1e-2)
    assert len(losses) == 40 and not m.training
    assert evaluate(m, x) < 0.8 * before


def test_errors():
    m = _model()
    with pytest.raises(ValueError, match="context_length=24"):
        m.generate(torch.zeros(1, 5, dtype=torch.long), 20)
    with pytest.raises(TypeError, match="int64"):
        m(torch.zeros(1, 5))
    with pytest.raises(ValueError, match="vocab_size=11"):
        m(torch.full((1, 5), 11))
    with pytest.raises(ValueError, match=r"shape \(B, T\)"):
        m(torch.zeros(5, dtype=torch.long))
    with pytest.raises(ValueError, match="caches must be a list of 2"):
        m(torch.zeros(1, 5, dtype=torch.long), caches=m.new_caches()[:1])
    with pytest.raises(TypeError, match="use_cache"):
        m.generate(torch.zeros(1, 5, dtype=torch.long), 2, use_cache="yes")
    with pytest.raises(ValueError, match="max_new_tokens"):
        m.generate(torch.zeros(1, 5, dtype=torch.long), 0)
