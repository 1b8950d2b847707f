"""One training loop for every toy model, and one training per build (attn/models/train.py).

Tolerances: the loop is compared with the loop it replaced exactly (``rtol=0, atol=0``):
the same operations in the same order give the same bits.
"""
import ast
import pathlib

import pytest
import torch
import torch.nn as nn

from attn.models import seq2seq, tiny_lm
from attn.models import train as T
from attn.models.circuits import AttentionOnly, train_induction
from attn.models.recall import RecallModel, train_recall
from attn.models.tiny_lm import TinyLM, pattern_batch

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXACT = dict(rtol=0, atol=0)


def _net(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))


def _batch_loss(m, g):
    x = torch.randn(16, 4, generator=g)
    return ((m(x) - x[:, :2]) ** 2).mean()


def test_fit_is_the_loop_it_replaced():
    """AdamW, linear decay to 0, clipped gradients, eval() after: step for step as written out by hand."""
    a, b = _net(), _net()
    opt = torch.optim.AdamW(a.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(3)
    by_hand = []
    a.train()
    for step in range(5):
        for group in opt.param_groups:
            group["lr"] = 1e-2 * (1 - step / 5)
        loss = _batch_loss(a, g)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(a.parameters(), 0.5)
        opt.step()
        by_hand.append(loss.item())
    losses = T.fit(b, _batch_loss, 5, torch.optim.AdamW(b.parameters(), lr=1e-2),
                   generator=torch.Generator().manual_seed(3), decay=True, clip=0.5)
    assert losses == by_hand and not b.training
    for p, q in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(q, p, **EXACT)


def test_fit_trains_on_the_mean_of_several_losses_and_returns_each():
    seen = []
    a, b = _net(), _net()
    two = lambda m, g: (_batch_loss(m, g), 2 * _batch_loss(m, g))
    first, second = T.fit(a, two, 3, torch.optim.SGD(a.parameters(), lr=0.1), generator=torch.Generator(),
                          before_step=seen.append)
    assert seen == [0, 1, 2] and len(first) == len(second) == 3
    mean = lambda m, g: sum(two(m, g)) / 2
    T.fit(b, mean, 3, torch.optim.SGD(b.parameters(), lr=0.1), generator=torch.Generator())
    for p, q in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(q, p, **EXACT)


def test_fit_checks_its_arguments():
    m = _net()
    with pytest.raises(ValueError, match="steps must be a positive int"):
        T.fit(m, _batch_loss, 0, torch.optim.SGD(m.parameters(), lr=0.1), generator=torch.Generator())
    with pytest.raises(TypeError, match="opt must be a torch.optim.Optimizer, got str"):
        T.fit(m, _batch_loss, 1, "adam", generator=torch.Generator())


def test_every_toy_model_trains_with_fit_and_is_cached():
    """No other backward() in attn/models; every function there that builds an optimiser is cached."""
    loops, uncached = [], []
    for path in sorted((ROOT / "attn" / "models").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "backward" and path.name != "train.py":
                loops.append(f"{path.name}:{node.lineno}")
            if isinstance(node, ast.FunctionDef) and "torch.optim." in ast.unparse(node) and path.name != "train.py":
                names = [ast.unparse(d) for d in node.decorator_list]
                if not any(d.startswith("cached(") for d in names):
                    uncached.append(f"{path.name}:{node.name}")
    assert not loops, f"training loops outside fit: {loops}"
    assert not uncached, f"training functions without @cached(): {uncached}"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv(T.ENV, str(tmp_path))
    return tmp_path


def _seq2seq():
    torch.manual_seed(0)
    return seq2seq.Seq2Seq(d_model=8, num_heads=1)


def test_second_run_loads_the_same_model_losses_and_random_state(folder):
    a = _seq2seq()
    losses = seq2seq.train(a, steps=3, batch_size=4)
    after = torch.get_rng_state()
    (saved,) = folder.glob("train-*.pt")
    stamp = saved.stat().st_mtime_ns

    torch.manual_seed(123)  # the loaded state replaces whatever came before
    b = _seq2seq()
    assert seq2seq.train(b, steps=3, batch_size=4) == losses
    assert saved.stat().st_mtime_ns == stamp  # read, not trained and written again
    assert torch.equal(torch.get_rng_state(), after)
    assert not b.training
    for (name, p), q in zip(a.state_dict().items(), b.state_dict().values()):
        torch.testing.assert_close(q, p, rtol=0, atol=0, msg=name)


def test_other_arguments_or_initial_weights_train_again(folder):
    seq2seq.train(_seq2seq(), steps=2, batch_size=4)
    seq2seq.train(_seq2seq(), steps=2, batch_size=4, lr=1e-3)  # another argument
    other = _seq2seq()
    with torch.no_grad():
        next(other.parameters()).add_(1.0)  # other initial weights
    seq2seq.train(other, steps=2, batch_size=4)
    assert len(list(folder.glob("train-*.pt"))) == 3


def test_a_function_that_draws_its_own_init_ignores_the_initial_weights(folder):
    fresh, repeat = train_induction(AttentionOnly(8, 8), steps=2, batch_size=4, half=4)
    again = train_induction(AttentionOnly(8, 8), steps=2, batch_size=4, half=4)  # other random init
    assert again == (fresh, repeat)
    assert len(list(folder.glob("train_induction-*.pt"))) == 1
    train_induction(AttentionOnly(8, 10), steps=2, batch_size=4, half=4)  # other sizes
    assert len(list(folder.glob("train_induction-*.pt"))) == 2


def test_without_the_variable_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.delenv(T.ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    seq2seq.train(_seq2seq(), steps=1, batch_size=2)
    assert list(tmp_path.iterdir()) == []


def test_bad_input_gets_the_training_functions_own_errors(folder):
    with pytest.raises(TypeError, match="model must be an attn.models.seq2seq.Seq2Seq"):
        seq2seq.train(torch.nn.Linear(2, 2))
    with pytest.raises(TypeError, match="model must be an attn.models.circuits.AttentionOnly"):
        train_induction("model")
    with pytest.raises(ValueError, match="steps must be a positive int"):
        seq2seq.train(_seq2seq(), steps=0)
    assert list(folder.iterdir()) == []


LENGTH, PERIOD = 16, 4


def test_a_batch_function_enters_the_key_by_its_code_and_the_values_it_reads(folder, monkeypatch):
    """Two chapters that pass the same lambda train once; another value of a global it reads trains again."""
    def lm():
        torch.manual_seed(0)
        return TinyLM(vocab_size=10, context_length=LENGTH, d_model=8, num_layers=1, num_heads=2)

    first = tiny_lm.train(lm(), lambda g: pattern_batch(2, LENGTH, PERIOD, generator=g), steps=2)
    again = tiny_lm.train(lm(), lambda g: pattern_batch(2, LENGTH, PERIOD, generator=g), steps=2)
    assert again == first and len(list(folder.glob("train-*.pt"))) == 1
    monkeypatch.setitem(globals(), "PERIOD", 8)
    tiny_lm.train(lm(), lambda g: pattern_batch(2, LENGTH, PERIOD, generator=g), steps=2)
    assert len(list(folder.glob("train-*.pt"))) == 2


def test_models_that_differ_only_in_a_plain_attribute_train_apart(folder):
    """Chapter 21 trains one RecallModel per mixer kind, all of the same sizes: the kind enters the key.

    (Once it did not: the four kinds at d_head = 4 loaded the softmax model's weights and
    its accuracy, 0.99 for the linear recurrences too.)
    """
    def accuracy(kinds):
        return train_recall(RecallModel(16, kinds, d_model=8, d_head=4), steps=2, batch_size=4,
                            num_pairs=2, num_keys=4, num_values=4)

    results = {kind: accuracy((kind,)) for kind in ("softmax", "linear", "gated")}
    assert len(list(folder.glob("train_recall-*.pt"))) == 3, results
    assert accuracy(("gated",)) == results["gated"] and len(list(folder.glob("train_recall-*.pt"))) == 3
    assert "kind='gated'" in repr(RecallModel(16, ("gated",)))  # a reader sees it too

    class Mixer(nn.Module):  # an attribute its repr does not show still enters the key
        def __init__(self, kind):
            super().__init__()
            self.kind, self.proj = kind, nn.Linear(2, 2)

    assert repr(Mixer("linear")) == repr(Mixer("gated"))
    assert T._key(train_recall, Mixer("linear"), {}, True) != T._key(train_recall, Mixer("gated"), {}, True)
    # the mode it comes in does not: fit trains in training mode either way
    assert T._key(train_recall, Mixer("gated").eval(), {}, True) == T._key(train_recall, Mixer("gated"), {}, True)
