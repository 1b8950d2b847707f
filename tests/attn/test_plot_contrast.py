"""Numbers written on heatmaps are readable: at least 4.5:1 against their cell (WCAG AA)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

from attn.viz.plot import heatmap  # noqa: E402


def luminance(rgba):
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgba[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b):
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("cmap", ["Blues", "viridis", "magma", "RdBu"])
def test_every_written_number_contrasts_with_its_cell(cmap):
    # Every shade of the map: 0.00, 0.01, ..., 0.99 in a 10 x 10 matrix.
    w = torch.arange(100, dtype=torch.float64).reshape(10, 10) / 100
    ax = heatmap(w, annotate=True, cmap=cmap, vmax=1.0, colorbar=False)
    try:
        im = ax.images[0]
        texts = ax.texts
        assert len(texts) == 100
        worst = min(
            contrast(to_rgba(t.get_color()), im.cmap(im.norm(w[i // 10, i % 10].item())))
            for i, t in enumerate(texts)
        )
        # The former rule (white above the middle of the scale) gave 2.4:1 on "Blues".
        assert worst >= 4.5, f"{cmap}: a number has contrast {worst:.2f}:1 with its cell"
    finally:
        plt.close(ax.figure)
