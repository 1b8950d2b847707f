"""attn.models.tiny_lm: the small causal language model, its cache-based generation and training.

Tolerance for logits compared between paths: float64 atol=1e-10, rtol=1e-8.
"""
import pytest
import torch

from attn.models.tiny_lm import TinyLM, evaluate, pattern_batch, step_times, train

TOL64 = dict(atol=1e-10, rtol=1e-8)


def _model(num_kv_heads=None, seed=0):
    torch.manual_seed(seed)
    return TinyLM(11, 24, d_model=16, num_layers=2, num_heads=4, num_kv_heads=num_kv_heads).double().eval()


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


class _Clock:
    """A fake clock: every call advances by 1 s, so each step of step_times lasts 1 s."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        self.now += 1.0
        return self.now


@pytest.mark.parametrize("use_cache", [False, True])
def test_step_times_times_every_step_of_generate(use_cache):
    m = _model()
    prompt = torch.randint(0, 11, (2, 5), generator=torch.Generator().manual_seed(2))
    clock = _Clock()
    seconds, fed = step_times(m, prompt, 19, use_cache=use_cache, repeats=2, clock=clock)
    assert seconds.shape == (19,) and seconds.dtype == torch.float64
    assert torch.equal(seconds, torch.ones(19, dtype=torch.float64))
    assert clock.now == 2 * 2 * 19  # two calls per step, 19 steps, 2 runs
    # tokens sent through the model: p + (p + 1) + ... without the cache, p + n - 1 with it
    assert fed == (sum(range(5, 24)) if not use_cache else 5 + 18)


def test_step_times_errors():
    m, prompt = _model(), torch.zeros(1, 3, dtype=torch.long)
    with pytest.raises(TypeError, match="model must be an attn.models.tiny_lm.TinyLM"):
        step_times(torch.nn.Linear(2, 2), prompt, 4)
    with pytest.raises(ValueError, match="repeats must be a positive int, got 0"):
        step_times(m, prompt, 4, repeats=0)
    with pytest.raises(TypeError, match="clock must be callable"):
        step_times(m, prompt, 4, clock=3.0)
    with pytest.raises(TypeError, match="use_cache must be a bool"):
        step_times(m, prompt, 4, use_cache=1)
    with pytest.raises(ValueError, match="more than context_length=24"):
        step_times(m, prompt, 22)
