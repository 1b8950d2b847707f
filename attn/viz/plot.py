"""The book's one attention-heatmap style (matplotlib is imported only when drawing).

:func:`heatmap` and :func:`heatmap_grid` draw static figures; :func:`explore` gives the
same numbers a second, interactive form for the book's web pages.
"""
import itertools
import numbers
import re

import torch

from .. import _checks

__all__ = ["heatmap", "heatmap_grid", "explore", "Explorer", "EXPLORER_MIME"]


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


# -- the explorer ------------------------------------------------------------------------

#: The MIME type of an explorer's data in a notebook output (``docs/_ext/book_outputs.py``).
EXPLORER_MIME = "application/vnd.attn.explorer+json"
# The leading axes an explorer selects from, and the static figure's panel title of an entry.
EXPLORER_AXES = {"layer": "$\\ell={}$", "head": "$\\mathrm{{head}}_{{{}}}$", "scale": "{}", "formula": "{}"}
DIGITS = 4  # the values' decimals, as PyTorch prints a tensor
SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
TEX_TEXT = [(r"\^\\top", "ᵀ"), (r"\\sqrt\{([^{}]*)\}", r"√\1"), (r"\\(?:mathrm|text)\{([^{}]*)\}", r"\1")]


class Explorer:
    """Attention weights in two forms, what :func:`explore` returns.

    A notebook displays it (``_repr_mimebundle_``) as both: the explorer's data
    (``data``, a dict ready for JSON, under :data:`EXPLORER_MIME`), which the book's web
    pages draw, and the static heatmap as a PNG, which Jupyter, the PDF and the EPUB show.
    """

    def __init__(self, data, draw):
        self.data = data
        self._draw = draw

    def figure(self):
        """Draw the static heatmap; returns a ``matplotlib.figure.Figure``."""
        return self._draw()

    def _repr_mimebundle_(self, include=None, exclude=None):
        import base64
        import io

        import matplotlib.pyplot as plt

        fig = self._draw()
        png = io.BytesIO()
        fig.savefig(png, format="png", bbox_inches="tight", facecolor=fig.get_facecolor())
        plt.close(fig)  # shown once, here, not again by the notebook's backend
        return {
            EXPLORER_MIME: self.data,
            "image/png": base64.b64encode(png.getvalue()).decode("ascii"),
            "text/plain": repr(self),
        }

    def __repr__(self):
        sizes = [f"{a['name']}={len(a['options'])}" for a in self.data["axes"]]
        sizes += [f"T_q={len(self.data['y'])}", f"T_k={len(self.data['x'])}"]
        return f"Explorer({', '.join(sizes)})"


def _text_label(label):
    """A label as plain text: ``"$3_{0}$"`` -> ``"3₀"``, ``"$QK^\\top/\\sqrt{d_k}$"`` -> ``"QKᵀ/√d_k"``.

    Mathtext is for the figures; the explorer's labels are text.
    """
    text = str(label)
    if "$" not in text:
        return text
    text = text.replace("$", "")
    for pattern, plain in TEX_TEXT:
        text = re.sub(pattern, plain, text)
    text = re.sub(r"_\{?(\d+)\}?", lambda m: m[1].translate(SUBSCRIPTS), text)
    return re.sub(r"\\[A-Za-z]+\s*|[{}]", "", text)


def _view(name, values, hidden, lo=None, hi=None):
    """One view of the explorer: ``values`` as integers of ``DIGITS`` decimals, rounded
    as PyTorch prints them (``None`` where hidden), and the ends of its colour scale."""
    import numpy as np

    shown = values[~hidden]
    if not np.isfinite(shown).all():
        raise ValueError(f"{name} must be finite where not masked, got {shown[~np.isfinite(shown)][:3].tolist()}")
    lo = lo if lo is not None else float(shown.min()) if shown.size else 0.0
    hi = hi if hi is not None else float(shown.max()) if shown.size else 1.0
    fixed = [
        None if h else int(format(v, f".{DIGITS}f").replace(".", ""))
        for v, h in zip(values.ravel().tolist(), hidden.ravel().tolist())
    ]
    return {"name": name, "lo": round(float(lo), DIGITS), "hi": round(float(hi), DIGITS), "values": fixed}


def _explorer_number(x, decimals):
    """``x`` with ``decimals`` decimals as explorer.js writes it (``Intl.NumberFormat``): its
    shortest decimal form rounded half away from zero, ``0.945`` -> ``"0.95"`` (``"%.2f"``: 0.94)."""
    from decimal import ROUND_HALF_UP, Decimal

    return str(Decimal(repr(float(x))).quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_UP))


def _explorer_cells(data, panel=0, view=0):
    """One panel of an explorer's ``data`` (:attr:`Explorer.data`) as its web page writes it.

    The book's pages write this table before their script (``docs/_static/explorer.js``)
    draws the same cells: shown without JavaScript, the same with it.

    Args:
        data (dict): :attr:`Explorer.data`.
        panel (int): the panel, counting through the leading axes in order (layer, head).
        view (int): ``0`` the weights, ``1`` the scores.

    Returns:
        list of list of tuple: ``T_q`` rows of ``T_k`` cells ``(text, background, ink)``:
        the value with the decimals of ``data["cells"]`` (2 if None, :func:`_explorer_number`),
        the background ``"#rrggbb"`` linear between the stops of ``data["colors"]`` over the
        view's scale (rounded half up, as explorer.js), the ink ``"black"`` or ``"white"``
        (:func:`_text_color`); ``(None, None, None)`` where masked.
    """
    shown = data["views"][view]
    stops = [[int(c[k:k + 2], 16) for k in (1, 3, 5)] for c in data["colors"]]
    span = shown["hi"] - shown["lo"] or 1
    scale = 10 ** data["digits"]
    T_q, T_k = len(data["y"]), len(data["x"])

    def cell(v):
        if v is None:
            return None, None, None
        x = min(max((v / scale - shown["lo"]) / span, 0), 1) * (len(stops) - 1)
        k = min(int(x), len(stops) - 2)
        rgb = [int(c + (x - k) * (d - c) + 0.5) for c, d in zip(stops[k], stops[k + 1])]  # Math.round
        text = _explorer_number(v / scale, 2 if data["cells"] is None else data["cells"])
        return text, "#{:02x}{:02x}{:02x}".format(*rgb), _text_color([c / 255 for c in rgb])

    values = shown["values"][panel * T_q * T_k:(panel + 1) * T_q * T_k]
    return [[cell(v) for v in values[i * T_k:(i + 1) * T_k]] for i in range(T_q)]


def _leading_axes(shape, axes, options):
    """``(axes, names)``: the checked names of the leading axes of ``shape`` and of their entries."""
    lead = shape[:-2]
    if axes is None:
        axes = ("layer", "head")[2 - len(lead):]
    if not isinstance(axes, (tuple, list)) or len(axes) != len(lead) or len(set(axes)) != len(axes) \
            or any(a not in EXPLORER_AXES for a in axes):
        raise ValueError(
            f"axes must name the {len(lead)} leading axes of weights (shape {tuple(shape)}) with distinct "
            f"names among {tuple(EXPLORER_AXES)}, got {axes!r}"
        )
    options = [None] * len(lead) if options is None else options
    if not isinstance(options, (tuple, list)) or len(options) != len(lead):
        raise ValueError(f"options must be a list of {len(lead)} lists of names, one per leading axis, got {options!r}")
    names = []
    for axis, n, given in zip(axes, lead, options):
        _check_labels(f"options[{len(names)}] (axis {axis!r})", given, n)
        names.append([str(o) for o in given] if given is not None else [str(k + 1) for k in range(n)])
    return tuple(axes), names


def explore(
    weights,
    x_labels=None,
    y_labels=None,
    *,
    scores=None,
    mask=None,
    axes=None,
    options=None,
    annotate=None,
    fmt=".2f",
    cmap="Blues",
    vmin=0.0,
    vmax=None,
    **figure,
):
    """Attention weights to explore on the book's web pages, a heatmap everywhere else.

    A notebook cell that ends with ``explore(...)`` shows the weights in two forms of
    the same numbers. The book's web pages show an explorer: a grid with the queries
    down and the keys across, in the colours of :func:`heatmap`; pointing at a cell,
    or moving with the arrow keys, reads out its query, key and weight; selectors
    choose the layer or the head, and a switch shows the scores before the softmax.
    Jupyter, the PDF and the EPUB show the static heatmap: :func:`heatmap` for one
    matrix, :func:`heatmap_grid` with one panel per head otherwise.

    Args:
        weights (torch.Tensor or array): ``(T_q, T_k)``, or with leading axes named by
            ``axes``: ``(n, T_q, T_k)`` or ``(n_1, n_2, T_q, T_k)``, e.g. ``(h, T, T)``.
        x_labels (list of str, optional): ``T_k`` key labels (the tokens); the explorer
            writes mathtext such as ``"$x_{0}$"`` as text, ``x₀``.
        y_labels (list of str, optional): ``T_q`` query labels; default ``x_labels`` when
            the matrix is square.
        scores (torch.Tensor or array, optional): the scores before the softmax, of the
            shape of ``weights``, which the explorer can show instead of the weights; a
            score of :math:`-\\infty` is a masked entry.
        mask (torch.Tensor, optional): bool, broadcastable to the shape of ``weights``,
            ``True`` where the query may attend to the key (as
            :func:`attn.functional.causal_mask`); the explorer draws the other entries
            as masked, not as zeros of the colour scale.
        axes (tuple of str, optional): the names of the leading axes, each ``"layer"``,
            ``"head"``, ``"scale"`` or ``"formula"``; default ``("head",)`` or
            ``("layer", "head")``.
        options (list of list of str, optional): for each leading axis, the names of its
            entries, symbols or formulas such as ``"$h=0$"`` or ``"1/√d_k"``: the titles
            of the static panels, and as text the choices of the explorer's selector;
            default ``1, 2, ...``.
        annotate (bool, optional): write the values in the cells; default when both
            sides are <= 12.
        fmt (str): format of the written values, ``".<n>f"``.
        cmap (str): colour map, of the explorer and the heatmap.
        vmin (float): bottom of the weights' colour scale.
        vmax (float, optional): top of the weights' colour scale; default the largest
            weight. The scores' scale spans their smallest and largest values.
        **figure: passed on to :func:`heatmap` or :func:`heatmap_grid` for the static
            figure (``title``, ``ncols``, ``xlabel``, ``ylabel``, ...).

    Returns:
        Explorer: displays itself in a notebook; ``.figure()`` draws the heatmap.
    """
    import matplotlib
    import numpy as np

    w = _as_matrix(weights)
    if not 2 <= w.ndim <= 4:
        raise ValueError(
            f"weights must have shape (T_q, T_k), (n, T_q, T_k) or (n_1, n_2, T_q, T_k), got shape {tuple(w.shape)}"
        )
    T_q, T_k = w.shape[-2:]
    if y_labels is None and x_labels is not None and T_q == T_k:
        y_labels = x_labels
    _check_labels("x_labels", x_labels, T_k)
    _check_labels("y_labels", y_labels, T_q)
    _check_style(annotate, fmt, vmin, vmax, True)
    if not re.fullmatch(r"\.\df", fmt):
        raise ValueError(f"fmt must have the form '.<n>f', such as '.2f', got {fmt!r}")
    if cmap not in matplotlib.colormaps:
        raise ValueError(f"cmap must name a matplotlib colour map, such as 'Blues', got {cmap!r}")
    axes, names = _leading_axes(w.shape, axes, options)
    hidden = np.zeros(w.shape, dtype=bool)  # masked entries
    if mask is not None:
        _checks.tensor("mask", mask)
        if mask.dtype != torch.bool:
            raise TypeError(f"mask must be a bool tensor (True = may attend), got dtype {mask.dtype}")
        try:
            hidden |= ~np.broadcast_to(mask.cpu().numpy(), w.shape)
        except ValueError as err:
            raise ValueError(f"mask of shape {tuple(mask.shape)} does not broadcast to the shape of weights, "
                             f"{tuple(w.shape)}") from err
    if scores is not None:
        scores = _as_matrix(scores, "scores")
        if scores.shape != w.shape:
            raise ValueError(f"scores must have the shape of weights, {tuple(w.shape)}, got {tuple(scores.shape)}")
        hidden |= np.isneginf(scores)
    if annotate is None:
        annotate = T_q <= 12 and T_k <= 12
    views = [_view("weights", w, hidden, vmin, vmax)]
    if scores is not None:
        views.append(_view("scores", scores, hidden))
    data = {
        "x": [_text_label(t) for t in x_labels] if x_labels is not None else [str(j) for j in range(T_k)],
        "y": [_text_label(t) for t in y_labels] if y_labels is not None else [str(i) for i in range(T_q)],
        "axes": [{"name": a, "options": [_text_label(o) for o in n]} for a, n in zip(axes, names)],
        "views": views,
        "digits": DIGITS,  # a value v is written as round(v * 10**DIGITS)
        "cells": int(fmt[1]) if annotate else None,  # decimals written in each cell
        "colors": [matplotlib.colors.to_hex(c) for c in matplotlib.colormaps[cmap](np.linspace(0.0, 1.0, 17))],
    }
    style = {"annotate": annotate, "fmt": fmt, "cmap": cmap, "vmin": vmin, **figure}
    if vmax is not None:
        style["vmax"] = vmax  # heatmap_grid's default is the largest weight of all panels

    def title(k, name):  # a static panel's title: entry `name` of leading axis k
        return EXPLORER_AXES[axes[k]].format(name) if options is None or options[k] is None else name

    def draw():
        if not axes:
            return heatmap(w, x_labels, y_labels, **style).figure
        titles = [", ".join(title(k, n) for k, n in enumerate(entry)) for entry in itertools.product(*names)]
        grid = {"titles": titles, **({"ncols": len(names[1])} if len(axes) == 2 else {}), **style}
        return heatmap_grid(w.reshape(-1, T_q, T_k), x_labels, y_labels, **grid)

    return Explorer(data, draw)
