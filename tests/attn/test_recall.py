"""``attn.models.recall``: the MQAR task and the small models of chapter 21's recall experiment.

What the trained models reach is asserted on chapter 21's page (it trains them at build
time); here, the task's sequences, the models' shapes and arguments.
"""
import pytest
import torch

from attn.models.recall import Mixer, RecallModel, mqar, train_recall


def test_mqar_asks_for_the_value_that_followed_each_key():
    g = torch.Generator().manual_seed(0)
    x, y = mqar(16, 5, num_keys=12, num_values=7, generator=g)
    assert x.shape == y.shape == (16, 15)
    for row_x, row_y in zip(x.tolist(), y.tolist()):
        keys, values = row_x[0:10:2], row_x[1:10:2]
        assert len(set(keys)) == 5 and all(0 <= k < 12 for k in keys)
        assert all(12 <= v < 19 for v in values)
        assert sorted(row_x[10:]) == sorted(keys)  # every key asked once
        assert row_y[:10] == [-100] * 10
        assert row_y[10:] == [values[keys.index(k)] for k in row_x[10:]]


@pytest.mark.parametrize("kind", ["softmax", "linear", "delta", "gated"])
def test_mixer_is_causal(kind):
    torch.manual_seed(0)
    m = Mixer(kind, 8, 4)
    x = torch.randn(2, 9, 8)  # (B, T, d_model)
    y = m(x)
    x2 = x.clone()
    x2[:, 5:] = torch.randn(2, 4, 8)  # change the future of position 4
    assert y.shape == (2, 9, 8)
    torch.testing.assert_close(m(x2)[:, :5], y[:, :5], atol=1e-6, rtol=1e-6)
    assert not torch.allclose(m(x2)[:, 5:], y[:, 5:])


def test_model_shapes_and_kinds():
    m = RecallModel(20, ("gated", "gated", "gated", "softmax"), d_model=8, d_head=4)
    assert [layer.kind for layer in m.layers] == ["gated", "gated", "gated", "softmax"]
    assert m(torch.randint(20, (3, 12))).shape == (3, 12, 20)
    with pytest.raises(ValueError, match="kinds must be"):
        RecallModel(20, ("mamba",))
    with pytest.raises(ValueError, match="num_pairs=9 needs num_keys >= 9"):
        mqar(2, 9, 8, 8)


def test_training_is_seeded_and_returns_an_accuracy():
    accs = [train_recall(RecallModel(16, ("softmax",), d_model=8, d_head=4), steps=3, batch_size=8,
                         num_pairs=4, num_keys=8, num_values=8, seed=1) for _ in range(2)]
    assert accs[0] == accs[1] and 0.0 <= accs[0] <= 1.0
