"""The book's one attention-heatmap style (matplotlib is imported only when drawing)."""
import numbers

import torch

from . import _checks

__all__ = ["heatmap", "heatmap_grid"]


def _as_matrix(weights, name="weights"):
    if isinstance(weights, torch.Tensor):
        weights = weights.detach().to("cpu", torch.float64).numpy()
    else:
        import numpy as np

        try:
            weights = np.asarray(weights, dtype=float)
        except (TypeError, ValueError) as err:
            raise TypeError(
                f"{name} must be a torch.Tensor or an array of numbers, got {type(weights).__name__}"
            ) from err
    return weights


def _check_labels(name, labels, n):
    """``labels`` is None or a list/tuple of ``n`` entries (strings or numbers)."""
    if labels is None:
        return
    if isinstance(labels, str) or not isinstance(labels, (list, tuple)):
        raise TypeError(f"{name} must be a list of str or None, got {type(labels).__name__}")
    if len(labels) != n:
        raise ValueError(f"{name} must have {n} entries, got {len(labels)}")


def _check_style(annotate, fmt, vmin, vmax, colorbar):
    """Type checks of :func:`heatmap`'s keyword arguments."""
    if annotate is not None:
        _checks.flag("annotate", annotate)
    _checks.flag("colorbar", colorbar)
    if not isinstance(fmt, str):
        raise TypeError(f"fmt must be a str such as '.2f', got {type(fmt).__name__}")
    for name, value in (("vmin", vmin), ("vmax", vmax)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
            raise TypeError(f"{name} must be a float, got {type(value).__name__} ({value!r})")


def _text_color(rgba):
    """Black or white, whichever contrasts more with the cell colour ``rgba`` (WCAG 2.1).

    One of the two always reaches at least 4.58:1, above the 4.5:1 that WCAG AA asks
    of text: the relative luminance ``L`` of the cell gives ``(L + 0.05) / 0.05``
    against black and ``1.05 / (L + 0.05)`` against white.
    """
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgba[:3])
    lum = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "black" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "white"


def heatmap(
    weights,
    x_labels=None,
    y_labels=None,
    ax=None,
    title=None,
    *,
    annotate=None,
    fmt=".2f",
    cmap="Blues",
    vmin=0.0,
    vmax=None,
    colorbar=True,
    xlabel="$j$",
    ylabel="$i$",
):
    """Draw attention weights as a heatmap: rows = queries (``y``), columns = keys (``x``).

    White background, values written in the cells when the matrix is small, key labels
    on top rotated, query labels on the left. Text drawn is only what is passed in
    (labels, title), so figures stay language-neutral.

    Args:
        weights (torch.Tensor or array): ``(T_q, T_k)``; a tensor is detached and moved
            to the CPU.
        x_labels (list of str, optional): ``T_k`` key labels (e.g. the tokens).
        y_labels (list of str, optional): ``T_q`` query labels; default ``x_labels``
            when the matrix is square.
        ax (matplotlib.axes.Axes, optional): axes to draw on; a new figure otherwise.
        title (str, optional): axes title (a symbol or a token, not a sentence).
        annotate (bool, optional): write the values; default when both sides are <= 12.
        fmt (str): format of the written values.
        cmap (str): colour map.
        vmin (float): colour scale minimum (weights are >= 0).
        vmax (float, optional): colour scale maximum; default the largest weight.
        colorbar (bool): draw a colour bar.
        xlabel (str, optional): label of the key axis; default ``"$j$"``, the key index
            of :math:`\\alpha_{ij}`; ``None`` for none.
        ylabel (str, optional): label of the query axis; default ``"$i$"``, the query
            index; ``None`` for none.

    Returns:
        matplotlib.axes.Axes: the axes drawn on.
    """
    import matplotlib.pyplot as plt

    w = _as_matrix(weights)
    if w.ndim != 2:
        raise ValueError(f"weights must have shape (T_q, T_k), got shape {tuple(w.shape)}")
    T_q, T_k = w.shape
    if y_labels is None and x_labels is not None and T_q == T_k:
        y_labels = x_labels
    _check_labels("x_labels", x_labels, T_k)
    _check_labels("y_labels", y_labels, T_q)
    _check_style(annotate, fmt, vmin, vmax, colorbar)
    if ax is None:
        size = (max(3.0, 0.55 * T_k + 1.5), max(2.5, 0.55 * T_q + 1.0))
        fig, ax = plt.subplots(figsize=size, facecolor="white", layout="constrained")
    ax.set_facecolor("white")
    ax.figure.set_facecolor("white")
    top = float(w.max()) if vmax is None and w.size else (1.0 if vmax is None else vmax)
    im = ax.imshow(w, cmap=cmap, vmin=vmin, vmax=top if top > vmin else vmin + 1.0, aspect="auto")
    ax.set_xticks(range(T_k))
    ax.set_yticks(range(T_q))
    ax.xaxis.tick_top()
    if x_labels is not None:
        ax.set_xticklabels(x_labels, rotation=45, ha="left")
    else:
        ax.set_xticklabels(range(T_k))
    ax.set_yticklabels(y_labels if y_labels is not None else range(T_q))
    if xlabel:
        ax.set_xlabel(xlabel)
        ax.xaxis.set_label_position("top")
    if ylabel:
        ax.set_ylabel(ylabel)
    if annotate is None:
        annotate = T_q <= 12 and T_k <= 12
    if annotate:
        for i in range(T_q):
            for j in range(T_k):
                cell = im.cmap(im.norm(w[i, j]))  # the cell's colour, RGBA in [0, 1]
                ax.text(j, i, format(w[i, j], fmt), ha="center", va="center", fontsize=8,
                        color=_text_color(cell))
    if title:
        ax.set_title(title)
    if colorbar:
        ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    return ax


def heatmap_grid(weights, x_labels=None, y_labels=None, *, ncols=4, titles=None, **kwargs):
    """Draw several heatmaps (e.g. one per head) in one figure, same style as :func:`heatmap`.

    Args:
        weights (torch.Tensor or array): ``(n, T_q, T_k)``, e.g. ``(h, T, T)``.
        x_labels, y_labels (list of str, optional): as in :func:`heatmap`.
        ncols (int): panels per row.
        titles (list of str, optional): one title per panel; default
            ``"$\\mathrm{head}_{i}$"`` (1-based, as in the formula of multi-head attention).
        **kwargs: passed on to :func:`heatmap`. The panels share one colour scale
            (``vmax`` defaults to the largest weight of all panels) and one colour bar,
            drawn at the right unless ``colorbar=False``.

    Returns:
        matplotlib.figure.Figure: the figure.
    """
    import matplotlib.pyplot as plt

    w = _as_matrix(weights)
    if w.ndim != 3:
        raise ValueError(f"weights must have shape (n, T_q, T_k), got shape {tuple(w.shape)}")
    n = w.shape[0]
    ncols = _checks.positive_int("ncols", ncols)
    _check_labels("titles", titles, n)
    ncols = min(ncols, n)
    nrows = -(-n // ncols)
    T_q, T_k = w.shape[1:]
    fig, axes = plt.subplots(
        nrows, ncols, squeeze=False, facecolor="white", layout="constrained",
        figsize=(ncols * max(2.5, 0.4 * T_k + 1.0) + 0.8, nrows * max(2.5, 0.4 * T_q + 1.2)),
    )
    colorbar = kwargs.pop("colorbar", True)
    if w.size:
        kwargs.setdefault("vmax", float(w.max()))
    for i, ax in enumerate(axes.flat):
        if i >= n:
            ax.axis("off")
            continue
        title = titles[i] if titles is not None else f"$\\mathrm{{head}}_{{{i + 1}}}$"
        heatmap(w[i], x_labels, y_labels, ax=ax, title=title, colorbar=False, **kwargs)
    if colorbar and n:
        fig.colorbar(axes.flat[0].images[0], ax=axes.ravel().tolist(), fraction=0.046, pad=0.04)
    return fig
