"""A chapter and its gallery script share one training per build (attn/_trained.py)."""
import pytest
import torch

from attn import _trained, seq2seq
from attn.circuits import AttentionOnly, train_induction


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv(_trained.ENV, str(tmp_path))
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
    monkeypatch.delenv(_trained.ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    seq2seq.train(_seq2seq(), steps=1, batch_size=2)
    assert list(tmp_path.iterdir()) == []


def test_bad_input_gets_the_training_functions_own_errors(folder):
    with pytest.raises(TypeError, match="model must be an attn.seq2seq.Seq2Seq"):
        seq2seq.train(torch.nn.Linear(2, 2))
    with pytest.raises(TypeError, match="model must be an attn.circuits.AttentionOnly"):
        train_induction("model")
    with pytest.raises(ValueError, match="steps must be a positive int"):
        seq2seq.train(_seq2seq(), steps=0)
    assert list(folder.iterdir()) == []
