"""attn.viz.plot.explore: the explorer's numbers are the tensor's, its picture is the heatmap's."""

import base64
import io
import json
import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.image as mpimg  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

import attn  # noqa: E402
import attn.functional as AF  # noqa: E402
from attn.viz.plot import EXPLORER_MIME, explore, heatmap, heatmap_grid  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def journey():
    tokens, x = attn.journey()
    scores = x @ x.T  # (6, 6)
    return tokens, scores, torch.softmax(scores, dim=-1)


def printed(tensor):
    """The numbers of ``print(tensor)`` as PyTorch writes them (four decimals)."""
    return [float(n) for n in re.findall(r"-?\d+\.\d+", str(tensor))]


def pixels(png):
    return mpimg.imread(io.BytesIO(png), format="png")


def figure_png(fig):
    out = io.BytesIO()
    fig.savefig(out, format="png", bbox_inches="tight", facecolor=fig.get_facecolor())
    return out.getvalue()


def test_the_values_are_those_pytorch_prints():
    tokens, scores, weights = journey()
    data = explore(weights, tokens, scores=scores).data
    scale = 10 ** data["digits"]
    assert data["digits"] == 4
    for view, tensor in zip(data["views"], (weights, scores)):
        assert [v / scale for v in view["values"]] == printed(tensor), view["name"]
    assert [v["name"] for v in data["views"]] == ["weights", "scores"]
    assert data["x"] == data["y"] == tokens
    # Each row of weights sums to 1, up to the rounding of its 6 values.
    w = torch.tensor(data["views"][0]["values"], dtype=torch.float64).view(6, 6) / scale
    torch.testing.assert_close(w.sum(-1), torch.ones(6, dtype=torch.float64), atol=6 * 0.5e-4, rtol=0)
    # The weights' colour scale is the heatmap's: from 0 to the largest weight.
    assert (data["views"][0]["lo"], data["views"][0]["hi"]) == (0.0, round(weights.max().item(), 4))
    assert data["cells"] == 2 and len(data["colors"]) == 17 and data["colors"][0] == "#f7fbff"


def test_the_bundle_holds_the_data_and_the_heatmap_as_drawn_by_heatmap():
    tokens, scores, weights = journey()
    bundle = explore(weights, tokens, title="$A$")._repr_mimebundle_()
    assert set(bundle) == {EXPLORER_MIME, "image/png", "text/plain"}
    assert json.loads(json.dumps(bundle[EXPLORER_MIME])) == bundle[EXPLORER_MIME]
    assert bundle["text/plain"] == "Explorer(T_q=6, T_k=6)"
    assert plt.get_fignums() == []  # drawn and closed: the notebook shows it once
    expected = figure_png(heatmap(weights, tokens, tokens, title="$A$").figure)
    got = pixels(base64.b64decode(bundle["image/png"]))
    assert got.shape == pixels(expected).shape
    assert (got == pixels(expected)).all()


def test_heads_and_layers_are_selectable_axes_and_panels():
    torch.manual_seed(0)
    w = torch.softmax(torch.randn(2, 3, 4, 4), dim=-1)  # (L, h, T, T)
    e = explore(w)
    assert [a["name"] for a in e.data["axes"]] == ["layer", "head"]
    assert e.data["axes"][1]["options"] == ["1", "2", "3"]
    assert len(e.data["views"][0]["values"]) == 2 * 3 * 16
    # Flat in the order of the tensor: layer, head, query, key.
    assert e.data["views"][0]["values"][(1 * 3 + 2) * 16 + 1 * 4 + 3] == round(w[1, 2, 1, 3].item() * 1e4)
    fig = e.figure()
    titles = [a.get_title() for a in fig.axes if a.images]
    assert titles[:2] == ["$\\ell=1$, $\\mathrm{head}_{1}$", "$\\ell=1$, $\\mathrm{head}_{2}$"]
    assert len(titles) == 6
    heads = explore(w[0], ncols=3).figure()
    reference = heatmap_grid(w[0], ncols=3)
    assert (pixels(figure_png(heads)) == pixels(figure_png(reference))).all()
    scales = explore(w[0], axes=("scale",), options=[["1/√T", "1/√d_k", "1/√C"]])
    assert scales.data["axes"] == [{"name": "scale", "options": ["1/√T", "1/√d_k", "1/√C"]}]
    assert [a.get_title() for a in scales.figure().axes if a.images] == ["1/√T", "1/√d_k", "1/√C"]


def test_masked_entries_are_not_numbers_of_the_scale():
    tokens, scores, _ = journey()
    mask = AF.causal_mask(6)
    masked_scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(masked_scores, dim=-1)
    by_scores = explore(weights, tokens, scores=masked_scores).data
    by_mask = explore(weights, tokens, mask=mask).data
    hidden = (~mask).flatten().tolist()
    for view in by_scores["views"] + by_mask["views"]:
        assert [v is None for v in view["values"]] == hidden
    # The scores' scale spans the visible scores only.
    assert by_scores["views"][1]["lo"] == round(scores[mask].min().item(), 4)


def test_labels_in_mathtext_become_text_and_big_grids_are_not_annotated():
    w = torch.full((13, 13), 1 / 13)
    data = explore(w, [f"${i % 10}_{{{i}}}$" for i in range(13)]).data
    assert data["x"][:2] == ["0₀", "1₁"] and data["x"][12] == "2₁₂"
    assert data["cells"] is None
    assert explore(w, annotate=True, fmt=".1f").data["cells"] == 1


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"weights": torch.rand(2, 2, 2, 3, 3)}, ValueError, r"weights must have shape .*\(2, 2, 2, 3, 3\)"),
        ({"x_labels": ["a", "b"]}, ValueError, r"x_labels must have 3 entries, got 2"),
        ({"scores": torch.rand(3, 4)}, ValueError, r"scores must have the shape of weights, \(3, 3\)"),
        ({"mask": torch.ones(3, 3)}, TypeError, r"mask must be a bool tensor"),
        ({"mask": torch.ones(2, 3, dtype=torch.bool)}, ValueError, r"mask of shape \(2, 3\) does not broadcast"),
        ({"axes": ("head",)}, ValueError, r"axes must name the 0 leading axes"),
        ({"fmt": "{:.2f}"}, ValueError, r"fmt must have the form '\.<n>f'"),
        ({"cmap": "Bluez"}, ValueError, r"cmap must name a matplotlib colour map.*'Bluez'"),
        ({"weights": torch.tensor([[float("nan"), 1.0], [0.5, 0.5]])}, ValueError, r"weights must be finite"),
    ],
)
def test_bad_input_names_the_argument(kwargs, error, message):
    args = {"weights": torch.full((3, 3), 1 / 3), **kwargs}
    with pytest.raises(error, match=message):
        explore(**args)


def test_bad_axes_and_options_of_stacked_weights():
    w = torch.full((2, 3, 3), 1 / 3)
    with pytest.raises(ValueError, match=r"axes must name the 1 leading axes .* among \('layer', 'head', 'scale', 'formula'\)"):
        explore(w, axes=("batch",))
    with pytest.raises(ValueError, match=r"options\[0\] \(axis 'head'\) must have 2 entries, got 3"):
        explore(w, options=[["a", "b", "c"]])


def test_the_cells_written_before_the_script_are_in_the_heatmaps_colours():
    # The table a web page shows without JavaScript (docs/_ext/book_outputs.py): the
    # ends of the scale take the colour map's end stops, a value half-way between two
    # stops their mean, black text on light cells and white on dark ones, nothing masked.
    from attn.viz.plot import _explorer_cells, _explorer_number

    tokens, scores, weights = journey()
    mask = AF.causal_mask(6)
    data = explore(weights, tokens, scores=scores.masked_fill(~mask, float("-inf"))).data
    cells = _explorer_cells(data)
    assert len(cells) == 6 and all(len(row) == 6 for row in cells)
    scale = 10 ** data["digits"]
    values = data["views"][0]["values"]
    texts = [c[0] for row in cells for c in row]
    assert [t is None for t in texts] == [v is None for v in values]
    assert all(abs(float(t) - v / scale) <= 0.005 and len(t.split(".")[1]) == 2 for t, v in zip(texts, values) if t)
    assert all(c == (None, None, None) for row, m in zip(cells, mask) for c, keep in zip(row, m) if not keep)
    # The largest weight is the top of the scale: the last stop, white text.
    top = max(range(36), key=lambda n: values[n] or 0)
    assert cells[top // 6][top % 6][1:] == (data["colors"][-1], "white")
    # A value half-way between the second and third stops of a 0..16 scale.
    data = {"x": ["a"], "y": ["b"], "digits": 4, "cells": 2, "colors": data["colors"],
            "views": [{"name": "weights", "lo": 0.0, "hi": 16.0, "values": [15000]}]}
    (value, background, text), = _explorer_cells(data)[0]
    rgb = [[int(c[k:k + 2], 16) for k in (1, 3, 5)] for c in data["colors"][1:3]]
    assert value == "1.50" and background == "#" + "".join(f"{int((a + b) / 2 + 0.5):02x}" for a, b in zip(*rgb))
    assert text == "black"
    # Panels: the second head's cells are its own numbers.
    w = torch.softmax(torch.randn(2, 3, 3, generator=torch.Generator().manual_seed(0)), dim=-1)  # (h, T, T)
    second = _explorer_cells(explore(w).data, panel=1)
    torch.testing.assert_close(torch.tensor([[float(c[0]) for c in row] for row in second]), w[1], atol=0.5e-2, rtol=0)
    # Ties round away from zero, as the browser writes them (Intl.NumberFormat), not as "%.2f".
    assert [_explorer_number(x, 2) for x in (0.945, -0.125, 0.5561, 1.0)] == ["0.95", "-0.13", "0.56", "1.00"]
