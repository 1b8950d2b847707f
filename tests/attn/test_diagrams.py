"""attn.viz.diagrams: every drawing runs, writes the shapes it was given, and refuses bad input."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

import attn.functional as AF  # noqa: E402
from attn.viz import diagrams  # noqa: E402


def texts(fig):
    """Every string drawn in the figure's axes (box labels, arrow labels, cell numbers)."""
    out = []
    for ax in fig.axes:
        out += [t.get_text() for t in ax.texts]
    plt.close(fig)
    return "\n".join(out)


def test_query_path_labels_the_given_shapes():
    x, q, k, v = torch.rand(7, 4), torch.rand(3), torch.rand(7, 3), torch.rand(7, 5)
    scores, weights, context = torch.rand(7), torch.rand(7), torch.rand(5)
    drawn = texts(diagrams.query_path(x, q, k, v, scores, weights, context, i=4))
    for shape in ("(7, 4)", "(3,)", "(7, 3)", "(7, 5)", "(7,)", "(5,)"):
        assert shape in drawn
    assert "q^{(4)}" in drawn and "z^{(4)}" in drawn
    # shapes may also be given as tuples or torch.Size
    drawn = texts(diagrams.query_path((9, 2), torch.Size([6]), (9, 6), (9, 1), (9,), (9,), (1,)))
    assert "(9, 2)" in drawn and "(1,)" in drawn


def test_query_path_rejects_shapes_that_do_not_fit():
    with pytest.raises(ValueError, match="T=6"):
        diagrams.query_path((6, 3), (2,), (5, 2), (6, 2), (6,), (6,), (2,))
    with pytest.raises(ValueError, match="d_k"):
        diagrams.query_path((6, 3), (3,), (6, 2), (6, 2), (6,), (6,), (2,))
    with pytest.raises(TypeError, match="x must be a torch.Tensor or a shape"):
        diagrams.query_path("x", (2,), (6, 2), (6, 2), (6,), (6,), (2,))


def test_causal_masking_writes_minus_infinity_above_the_diagonal_and_row_sums():
    torch.manual_seed(0)
    T = 5
    scores = torch.randn(T, T)
    mask = AF.causal_mask(T)
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    drawn = texts(diagrams.causal_masking(scores, mask, weights))
    assert drawn.count(r"$-\infty$") == T * (T - 1) // 2
    assert drawn.count("$=$1.00") == T
    assert format(scores[0, 0].item(), ".2f") in drawn


def test_causal_masking_rejects_bad_input():
    s = torch.zeros(4, 4)
    with pytest.raises(TypeError, match="mask must be a boolean"):
        diagrams.causal_masking(s, torch.ones(4, 4), s)
    with pytest.raises(ValueError, match="weights must have the shape of scores"):
        diagrams.causal_masking(s, AF.causal_mask(4), torch.zeros(4, 3))
    with pytest.raises(ValueError, match=r"scores must have shape \(T, T\)"):
        diagrams.causal_masking(torch.zeros(4, 3), AF.causal_mask(4), s)


def test_head_split_labels_every_stage():
    B, T, h, d = 3, 7, 2, 4
    shapes = [(B, T, h * d), (B, T, h, d), (B, h, T, d), (B, h, T, d), (B, T, h, d), (B, T, h * d)]
    drawn = texts(diagrams.head_split(*shapes))
    for shape in ("(3, 7, 8)", "(3, 7, 2, 4)", "(3, 2, 7, 4)"):
        assert drawn.count(shape) == 2
    bad = list(shapes)
    bad[2] = (B, T, h, d)                        # transpose forgotten
    with pytest.raises(ValueError, match="heads_first must have shape"):
        diagrams.head_split(*bad)


def test_transformer_block_labels_its_shapes():
    x = torch.rand(2, 10, 16)
    drawn = texts(diagrams.transformer_block(x, (2, 10, 64), x))
    assert "(2, 10, 16)" in drawn and "(2, 10, 64)" in drawn
    assert r"$\mathrm{LN}_1$" in drawn and r"$\mathrm{FFN}$" in drawn
    with pytest.raises(ValueError, match="out must have the shape of x"):
        diagrams.transformer_block(x, (2, 10, 64), (2, 10, 8))


def test_latent_attention_labels_both_paths():
    B, h, P, T, d_head, d_c, d_r = 2, 4, 6, 3, 8, 12, 4
    shapes = dict(x=(B, T, 32), q=(B, h, T, d_head + d_r), cache=(B, 1, P + T, d_c + d_r),
                  k=(B, h, P + T, d_head + d_r), v=(B, h, P + T, d_head), q_latent=(B, h, T, d_c + d_r),
                  out_latent=(B, h, T, d_c), out=(B, h, T, d_head), z=(B, T, h * d_head))
    drawn = texts(diagrams.latent_attention(**shapes))
    for shape in shapes.values():
        assert _fmt(shape) in drawn, shape
    assert r"$\mathtt{absorb=True}$" in drawn and r"$\mathtt{absorb=False}$" in drawn
    with pytest.raises(ValueError, match="q_latent must have shape"):
        diagrams.latent_attention(**{**shapes, "q_latent": (B, h, T, d_head + d_r)})  # W^UK not applied
    with pytest.raises(ValueError, match="k must have shape"):
        diagrams.latent_attention(**{**shapes, "k": (B, h, P, d_head + d_r)})  # new tokens not cached
    with pytest.raises(ValueError, match="cache must have 4 dimensions"):
        diagrams.latent_attention(**{**shapes, "cache": (B, P + T, d_c + d_r)})


def _fmt(shape):
    return str(tuple(shape))
