"""Diagrams of the mechanism: how data flows through attention, drawn with matplotlib.

Each function draws one picture the book needs and returns its
:class:`matplotlib.figure.Figure`. The shapes written in a diagram are never typed
in: the caller passes the real tensors (or their ``.shape``), so a diagram shows
what the code on the page computed. The only text drawn is symbols, tensor names,
code and shapes, so one figure serves every language; the words go in the caption.

All share one style: tensors in blue boxes, operations in orange boxes,
arrows from inputs to outputs, a white background. matplotlib is imported only
when drawing.

- :func:`query_path`: one query, from ``x`` to its context vector;
- :func:`causal_masking`: the causal mask added to the scores before the softmax;
- :func:`head_split`: splitting ``(B, T, d_out)`` into heads and joining them back;
- :func:`transformer_block`: a pre-norm Transformer block;
- :func:`latent_attention`: multi-head latent attention, plain and absorbed.
"""
import numbers

import torch

__all__ = ["query_path", "causal_masking", "head_split", "transformer_block", "latent_attention"]

# The shared style.
TENSOR = "#dbe9f6"   # fill of a tensor box
OP = "#fde4c8"       # fill of an operation box
EDGE = "#333333"     # box edges, arrows and text
HIDDEN = "#d9d9d9"   # a masked (hidden) cell
HEAD_COLOURS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2",
                "#edc948", "#9c755f", "#ff9da7", "#bab0ac"]
FONT = 10


def _shape(name, obj):
    """The shape of a tensor, or a shape given as a sequence of ints, as a tuple."""
    if isinstance(obj, torch.Tensor):
        return tuple(obj.shape)
    if isinstance(obj, (tuple, list, torch.Size)) and all(
        isinstance(n, numbers.Integral) and not isinstance(n, bool) and n > 0 for n in obj
    ):
        return tuple(int(n) for n in obj)
    raise TypeError(
        f"{name} must be a torch.Tensor or a shape (a tuple of positive ints), "
        f"got {type(obj).__name__} ({obj!r})"
    )


def _ndim(name, shape, n):
    if len(shape) != n:
        raise ValueError(f"{name} must have {n} dimensions, got shape {shape}")


def _fmt(shape):
    """(6, 3) -> '(6, 3)'; (2,) -> '(2,)', as Python prints a tuple."""
    return str(tuple(shape))


def _num(value, fmt):
    """``value`` formatted with ``fmt``, without the sign of a number that rounds to 0."""
    text = format(float(value), fmt)
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def _canvas(width, height, xlim, ylim):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width, height), facecolor="white")
    fig.subplots_adjust(0, 0, 1, 1)
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig, ax


def _box(ax, x, y, text, *, kind="tensor", w=1.8, h=0.9, fontsize=FONT):
    """A rounded box centred at ``(x, y)``; returns its (left, right, bottom, top)."""
    from matplotlib.patches import FancyBboxPatch

    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h,
                                boxstyle="round,pad=0.02,rounding_size=0.12",
                                facecolor=TENSOR if kind == "tensor" else OP,
                                edgecolor=EDGE, linewidth=1.0))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, color=EDGE)
    return (x - w / 2, x + w / 2, y - h / 2, y + h / 2)


def _arrow(ax, start, end, label=None, *, offset=(0.0, 0.18), fontsize=FONT - 1, ha="center"):
    ax.annotate("", xy=end, xytext=start,
                arrowprops=dict(arrowstyle="-|>", color=EDGE, lw=1.1, shrinkA=0, shrinkB=0))
    if label:
        ax.text((start[0] + end[0]) / 2 + offset[0], (start[1] + end[1]) / 2 + offset[1], label,
                ha=ha, va="center", fontsize=fontsize, color=EDGE)


def query_path(x, q, k, v, scores, weights, context, *, i=2):
    r"""Draw the path of one query: ``x`` -> ``q``, ``k``, ``v`` -> scores -> weights -> context.

    The query of token ``i`` is compared with the keys of all ``T`` tokens; the
    softmax of the scaled scores gives one weight per token, and the weighted sum of
    the values is the context vector:

    .. math::

        \omega_i = q^{(i)} K^\top, \qquad
        \alpha_i = \operatorname{softmax}(\omega_i / \sqrt{d_k}), \qquad
        z^{(i)} = \alpha_i V .

    Args:
        x (torch.Tensor or shape): the inputs, ``(T, d_in)``.
        q (torch.Tensor or shape): the query of token ``i``, ``(d_k,)``.
        k (torch.Tensor or shape): the keys of all tokens, ``(T, d_k)``.
        v (torch.Tensor or shape): the values of all tokens, ``(T, d_v)``.
        scores (torch.Tensor or shape): ``omega_i``, ``(T,)``.
        weights (torch.Tensor or shape): ``alpha_i``, ``(T,)``.
        context (torch.Tensor or shape): ``z^(i)``, ``(d_v,)``.
        i (int): the query's position, written in the symbols (``q^(i)``).

    Returns:
        matplotlib.figure.Figure: the diagram.

    Raises:
        ValueError: if the shapes do not fit together as above.
    """
    x, q, k, v = (_shape(n, t) for n, t in (("x", x), ("q", q), ("k", k), ("v", v)))
    scores, weights, context = (_shape(n, t) for n, t in
                                (("scores", scores), ("weights", weights), ("context", context)))
    for name, s, n in (("x", x, 2), ("q", q, 1), ("k", k, 2), ("v", v, 2),
                       ("scores", scores, 1), ("weights", weights, 1), ("context", context, 1)):
        _ndim(name, s, n)
    T = x[0]
    if isinstance(i, bool) or not isinstance(i, numbers.Integral):
        raise TypeError(f"i must be an int, got {type(i).__name__} ({i!r})")
    if k[0] != T or v[0] != T or scores[0] != T or weights[0] != T:
        raise ValueError(f"k, v, scores and weights must have T={T} rows (x has shape {x}), got "
                         f"k {k}, v {v}, scores {scores}, weights {weights}")
    if q[0] != k[1]:
        raise ValueError(f"q and k must have the same width d_k, got q {q} and k {k}")
    if context[0] != v[1]:
        raise ValueError(f"context must have the width of v, {v[1]}, got {context}")

    fig, ax = _canvas(10.0, 4.0, (-0.2, 14.6), (-0.3, 5.5))
    _box(ax, 1.0, 2.6, f"$x$\n{_fmt(x)}")
    _box(ax, 4.6, 4.5, f"$q^{{({i})}}$\n{_fmt(q)}")
    _box(ax, 4.6, 2.6, f"$K$\n{_fmt(k)}")
    _box(ax, 4.6, 0.7, f"$V$\n{_fmt(v)}")
    _arrow(ax, (1.9, 2.9), (3.7, 4.4), f"$x^{{({i})}} W_q$", offset=(-0.35, 0.3))
    _arrow(ax, (1.9, 2.6), (3.7, 2.6), "$X W_k$")
    _arrow(ax, (1.9, 2.3), (3.7, 0.8), "$X W_v$", offset=(-0.35, -0.3))
    _box(ax, 8.0, 3.55, f"$\\omega_{{{i}}} = q^{{({i})}} K^\\top$\n{_fmt(scores)}", w=2.3)
    _arrow(ax, (5.5, 4.4), (6.85, 3.75))
    _arrow(ax, (5.5, 2.7), (6.85, 3.35))
    _box(ax, 11.0, 3.55, r"$\alpha_{%d}$" % i + f"\n{_fmt(weights)}", w=1.6)
    _arrow(ax, (9.15, 3.55), (10.2, 3.55), r"$\mathrm{softmax}(\cdot/\sqrt{d_k})$",
           offset=(0.0, 0.55), fontsize=FONT - 2)
    _box(ax, 13.4, 1.9, f"$z^{{({i})}} = \\alpha_{{{i}}} V$\n{_fmt(context)}", w=2.1)
    _arrow(ax, (11.5, 3.1), (12.9, 2.35))
    _arrow(ax, (5.5, 0.7), (12.35, 1.7))
    return fig


def causal_masking(scores, mask, weights, *, fmt=".2f"):
    r"""Draw the causal mask applied to the scores before the softmax, with real numbers.

    Three matrices, one row per query ``i`` and one column per key ``j``: the scaled
    scores, the same scores with every hidden entry (``mask`` False, ``j > i``) set to
    :math:`-\infty`, and the weights :math:`\alpha = \operatorname{softmax}(S + M)`,
    with each row's sum written at its right end.

    Args:
        scores (torch.Tensor): the scaled scores, ``(T, T)``.
        mask (torch.Tensor): boolean, ``(T, T)``, ``True`` = may attend.
        weights (torch.Tensor): the weights after the softmax, ``(T, T)``.
        fmt (str): format of the numbers written in the cells.

    Returns:
        matplotlib.figure.Figure: the diagram.

    Raises:
        TypeError: if an argument is not a tensor or ``mask`` is not boolean.
        ValueError: if the three are not the same square shape, or ``T > 10``.
    """
    from matplotlib.patches import Rectangle

    for name, t in (("scores", scores), ("mask", mask), ("weights", weights)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if mask.dtype != torch.bool:
        raise TypeError(f"mask must be a boolean tensor (True = may attend), got dtype {mask.dtype}")
    S = tuple(scores.shape)
    if len(S) != 2 or S[0] != S[1]:
        raise ValueError(f"scores must have shape (T, T), got {S}")
    if S[0] > 10:
        raise ValueError(f"scores must have T <= 10 to be written out, got T={S[0]}")
    for name, t in (("mask", mask), ("weights", weights)):
        if tuple(t.shape) != S:
            raise ValueError(f"{name} must have the shape of scores, {S}, got {tuple(t.shape)}")
    T = S[0]
    s = scores.detach().to("cpu", torch.float64)
    m = mask.detach().to("cpu")
    w = weights.detach().to("cpu", torch.float64)
    sums = w.sum(dim=-1)

    gap = 2.2
    fig, ax = _canvas(11.5, 0.52 * T + 1.3, (-0.8, 3 * T + 2 * gap + 1.3), (-T - 0.2, 1.9))

    def grid(x0, title, values, hidden, text):
        for r in range(T):
            for c in range(T):
                face = HIDDEN if hidden[r][c] else (TENSOR if values is None else "white")
                ax.add_patch(Rectangle((x0 + c, -r - 1), 1, 1, facecolor=face,
                                       edgecolor=EDGE, linewidth=0.6))
                ax.text(x0 + c + 0.5, -r - 0.5, text(r, c), ha="center", va="center",
                        fontsize=FONT - 3 if T > 6 else FONT - 2, color=EDGE)
        ax.text(x0 + T / 2, 1.05, title, ha="center", va="center", fontsize=FONT + 1, color=EDGE)
        ax.text(x0 + T / 2, 0.35, "$j$", ha="center", va="center", fontsize=FONT, color=EDGE)
        ax.text(x0 - 0.35, -T / 2, "$i$", ha="center", va="center", fontsize=FONT, color=EDGE)

    none = [[False] * T for _ in range(T)]
    hidden = [[not bool(m[r, c]) for c in range(T)] for r in range(T)]
    grid(0, r"$S = QK^\top/\sqrt{d_k}$", None, none, lambda r, c: _num(s[r, c], fmt))
    x1 = T + gap
    grid(x1, r"$S + M$", None, hidden,
         lambda r, c: r"$-\infty$" if hidden[r][c] else _num(s[r, c], fmt))
    x2 = 2 * (T + gap)
    grid(x2, r"$\alpha = \mathrm{softmax}(S + M)$", None, hidden,
         lambda r, c: _num(w[r, c], fmt))
    for r in range(T):
        ax.text(x2 + T + 0.15, -r - 0.5, "$=$" + _num(sums[r], fmt), ha="left",
                va="center", fontsize=FONT - 2, color=EDGE)
    ax.text(x2 + T + 0.6, 0.35, r"$\sum_j$", ha="center", va="center", fontsize=FONT, color=EDGE)
    _arrow(ax, (T + 0.25, -T / 2), (x1 - 0.7, -T / 2), r"$+M$", offset=(-0.1, 0.35))
    _arrow(ax, (x1 + T + 0.25, -T / 2), (x2 - 0.7, -T / 2), r"$\mathrm{softmax}_j$",
           offset=(-0.1, 0.35))
    return fig


def head_split(projected, split, heads_first, attended, tokens_first, merged):
    """Draw how multi-head attention splits ``(B, T, d_out)`` into heads and joins them back.

    The six tensors of one query/key/value path through ``MultiHeadAttention``, in
    order, each drawn with its shape and, under it, one token's features coloured by
    head (the ``h`` colours show where each head's ``d_head`` features go):

    ``(B, T, d_out)`` ``-view->`` ``(B, T, h, d_head)`` ``-transpose(1, 2)->``
    ``(B, h, T, d_head)`` ``-attention per head->`` ``(B, h, T, d_head)``
    ``-transpose(1, 2)->`` ``(B, T, h, d_head)`` ``-view->`` ``(B, T, d_out)``.

    Args:
        projected (torch.Tensor or shape): ``W_query(x)``, ``(B, T, d_out)``.
        split (torch.Tensor or shape): after ``view``, ``(B, T, h, d_head)``.
        heads_first (torch.Tensor or shape): after ``transpose(1, 2)``, ``(B, h, T, d_head)``.
        attended (torch.Tensor or shape): ``att @ v``, ``(B, h, T, d_head)``.
        tokens_first (torch.Tensor or shape): after ``transpose(1, 2)``, ``(B, T, h, d_head)``.
        merged (torch.Tensor or shape): after ``contiguous().view``, ``(B, T, d_out)``.

    Returns:
        matplotlib.figure.Figure: the diagram.

    Raises:
        ValueError: if the shapes are not those of one split and join, or ``h > 10``.
    """
    from matplotlib.patches import Rectangle

    names = ("projected", "split", "heads_first", "attended", "tokens_first", "merged")
    shapes = [_shape(n, t) for n, t in zip(names, (projected, split, heads_first, attended,
                                                  tokens_first, merged))]
    for name, s, n in zip(names, shapes, (3, 4, 4, 4, 4, 3)):
        _ndim(name, s, n)
    B, T, h, d_head = shapes[1]
    expected = [(B, T, h * d_head), (B, T, h, d_head), (B, h, T, d_head), (B, h, T, d_head),
                (B, T, h, d_head), (B, T, h * d_head)]
    for name, s, e in zip(names, shapes, expected):
        if s != e:
            raise ValueError(f"{name} must have shape {e} (from split {shapes[1]}), got {s}")
    if h > len(HEAD_COLOURS):
        raise ValueError(f"head_split draws at most {len(HEAD_COLOURS)} heads, got h={h}")

    cell = min(0.16, 2.3 / (h * d_head))

    def features(cx, cy, layout):
        """One token's features (or, heads first, every token's), coloured by head."""
        if layout == "flat":          # d_out features in one row
            x0 = cx - h * d_head * cell / 2
            for f in range(h * d_head):
                ax.add_patch(Rectangle((x0 + f * cell, cy), cell, cell,
                                       facecolor=HEAD_COLOURS[f // d_head], edgecolor="white",
                                       linewidth=0.4))
        elif layout == "rows":        # h rows of d_head features
            x0 = cx - d_head * cell / 2
            for r in range(h):
                for f in range(d_head):
                    ax.add_patch(Rectangle((x0 + f * cell, cy + (h - 1 - r) * cell - h * cell / 3),
                                           cell, cell, facecolor=HEAD_COLOURS[r],
                                           edgecolor="white", linewidth=0.4))
        else:                         # h blocks of (T, d_head)
            c = min(cell, 0.9 / T, 2.3 / (h * d_head + (h - 1) * 2))
            x0 = cx - (h * d_head + (h - 1) * 2) * c / 2
            for r in range(h):
                for t in range(T):
                    for f in range(d_head):
                        ax.add_patch(Rectangle((x0 + (r * (d_head + 2) + f) * c,
                                                cy + (T / 2 - 1 - t) * c + 0.05), c, c,
                                               facecolor=HEAD_COLOURS[r], edgecolor="white",
                                               linewidth=0.4))

    fig, ax = _canvas(11.0, 4.6, (-0.1, 14.4), (-0.4, 5.2))
    top, bottom = 3.7, 0.9
    xs = (1.4, 6.6, 11.8)
    labels = ("$(B, T, d_{out})$", "$(B, T, h, d_{head})$", "$(B, h, T, d_{head})$")
    for x, lab, s, layout in zip(xs, labels, shapes[:3], ("flat", "rows", "blocks")):
        _box(ax, x, top, "", w=2.7, h=2.0)
        ax.text(x, top + 0.65, f"{lab}\n{_fmt(s)}", ha="center", va="center", fontsize=FONT,
                color=EDGE)
        features(x, top - 0.55, layout)
    back = ("$(B, T, d_{out})$", "$(B, T, h, d_{head})$", "$(B, h, T, d_{head})$")
    for x, lab, s, layout in zip(xs, back, shapes[:2:-1], ("flat", "rows", "blocks")):
        _box(ax, x, bottom, "", w=2.7, h=2.0)
        ax.text(x, bottom + 0.65, f"{lab}\n{_fmt(s)}", ha="center", va="center", fontsize=FONT,
                color=EDGE)
        features(x, bottom - 0.55, layout)
    _arrow(ax, (2.85, top), (5.15, top), "$\\mathtt{.view(B,\\ T,\\ h,\\ d_{head})}$",
           offset=(0, 0.3), fontsize=FONT - 2)
    _arrow(ax, (8.05, top), (10.35, top), "$\\mathtt{.transpose(1,\\ 2)}$", offset=(0, 0.3),
           fontsize=FONT - 2)
    _arrow(ax, (11.8, top - 1.05), (11.8, bottom + 1.05),
           r"$\mathrm{softmax}\left(\frac{q k^\top}{\sqrt{d_{head}}} + M\right) v$",
           offset=(0.12, 0.0), fontsize=FONT - 1, ha="left")
    _arrow(ax, (10.35, bottom), (8.05, bottom), "$\\mathtt{.transpose(1,\\ 2)}$",
           offset=(0, 0.3), fontsize=FONT - 2)
    _arrow(ax, (5.15, bottom), (2.85, bottom), "$\\mathtt{.contiguous().view(B,\\ T,\\ d_{out})}$",
           offset=(0, 0.3), fontsize=FONT - 3)
    return fig


def transformer_block(x, hidden, out):
    r"""Draw a pre-norm Transformer block, bottom to top, with its shapes.

    .. math::

        x \leftarrow x + \operatorname{MHA}(\operatorname{LN}_1(x)), \qquad
        x \leftarrow x + \operatorname{FFN}(\operatorname{LN}_2(x)),

    where the feed-forward network widens each token to ``d_ff`` (the shape of
    ``hidden``) and brings it back to ``d_model``.

    Args:
        x (torch.Tensor or shape): the block's input, ``(B, T, d_model)``.
        hidden (torch.Tensor or shape): the feed-forward network's hidden layer,
            ``(B, T, d_ff)``.
        out (torch.Tensor or shape): the block's output, ``(B, T, d_model)``.

    Returns:
        matplotlib.figure.Figure: the diagram.

    Raises:
        ValueError: if ``out`` differs from ``x`` or ``hidden`` has other ``B, T``.
    """
    from matplotlib.patches import Circle

    x, hidden, out = _shape("x", x), _shape("hidden", hidden), _shape("out", out)
    for name, s in (("x", x), ("hidden", hidden), ("out", out)):
        _ndim(name, s, 3)
    if out != x:
        raise ValueError(f"out must have the shape of x, {x}, got {out}")
    if hidden[:2] != x[:2]:
        raise ValueError(f"hidden must have the (B, T) of x, {x[:2]}, got {hidden}")

    fig, ax = _canvas(5.2, 7.2, (-2.6, 4.6), (-0.4, 10.6))
    cx, rx = 1.0, -1.6               # the main column, the residual path
    _box(ax, cx, 0.3, f"$x$\n{_fmt(x)}", w=2.4, h=0.75)
    _box(ax, cx, 1.75, r"$\mathrm{LN}_1$", kind="op", w=1.8, h=0.6)
    _box(ax, cx, 3.0, r"$\mathrm{MHA}$", kind="op", w=1.8, h=0.6)
    plus1, plus2 = 4.3, 8.55
    _box(ax, cx, 5.8, r"$\mathrm{LN}_2$", kind="op", w=1.8, h=0.6)
    _box(ax, cx, 7.25, r"$\mathrm{FFN}$", kind="op", w=1.8, h=0.6)
    _box(ax, cx, 9.95, f"{_fmt(out)}", w=2.4, h=0.6)
    for y in (plus1, plus2):
        ax.add_patch(Circle((cx, y), 0.25, facecolor="white", edgecolor=EDGE, linewidth=1.1))
        ax.text(cx, y, "$+$", ha="center", va="center", fontsize=FONT + 2, color=EDGE)
    _arrow(ax, (cx, 0.68), (cx, 1.45))
    _arrow(ax, (cx, 2.05), (cx, 2.7))
    _arrow(ax, (cx, 3.3), (cx, plus1 - 0.25))
    _arrow(ax, (cx, plus1 + 0.25), (cx, 5.5))
    _arrow(ax, (cx, 6.1), (cx, 6.95))
    _arrow(ax, (cx, 7.55), (cx, plus2 - 0.25))
    _arrow(ax, (cx, plus2 + 0.25), (cx, 9.65))
    for y0, y1 in ((1.05, plus1), (plus1 + 0.6, plus2)):
        ax.plot([cx, rx, rx], [y0, y0, y1], color=EDGE, lw=1.1)
        _arrow(ax, (rx, y1), (cx - 0.25, y1))
    ax.text(cx + 1.1, 3.65, _fmt(x), ha="left", va="center", fontsize=FONT - 1, color=EDGE)
    ax.text(cx + 1.1, 6.5, _fmt(x), ha="left", va="center", fontsize=FONT - 1, color=EDGE)
    ax.text(cx + 1.0, 7.25, r"$\to$ " + _fmt(hidden) + r" $\to$", ha="left", va="center",
            fontsize=FONT - 1, color=EDGE)
    return fig


def latent_attention(x, q, cache, k, v, q_latent, out_latent, out, z):
    r"""Draw multi-head latent attention: ``x`` down to the cached latent, then up or absorbed.

    The input is projected to the queries (with their RoPE part) and compressed into
    the cache, one latent and one rotated key per position, :math:`[c_j, k^R_j]`.
    From there the two forms of :class:`attn.MultiHeadLatentAttention` part:
    ``absorb=False`` decompresses every cached latent into the keys and values of
    each head, ``absorb=True`` moves :math:`W^{UK}` to the queries, attends on the
    latents and applies :math:`W^{UV}` after the average:

    .. math::

        \tilde q^{(i)} = [W^{UK\top}_i q^{(i)},\ q^{R,(i)}], \qquad
        o^{(i)} = W^{UV}_i \sum_j a^{(i)}_{tj}\, c_j = \sum_j a^{(i)}_{tj}\, W^{UV}_i c_j .

    Args:
        x (torch.Tensor or shape): the new tokens, ``(B, T, d_in)``.
        q (torch.Tensor or shape): the queries with their RoPE part,
            ``(B, h, T, d_head + d_r)``.
        cache (torch.Tensor or shape): what the cache holds, ``[c, k^R]`` of every
            position, ``(B, 1, P + T, d_c + d_r)``.
        k (torch.Tensor or shape): the decompressed keys with the shared rotated key,
            ``(B, h, P + T, d_head + d_r)``.
        v (torch.Tensor or shape): the decompressed values, ``(B, h, P + T, d_head)``.
        q_latent (torch.Tensor or shape): the absorbed queries :math:`\tilde q`,
            ``(B, h, T, d_c + d_r)``.
        out_latent (torch.Tensor or shape): the weighted average of the latents,
            ``(B, h, T, d_c)``.
        out (torch.Tensor or shape): the heads' outputs, ``(B, h, T, d_head)``.
        z (torch.Tensor or shape): the layer's output, ``(B, T, h * d_head)``.

    Returns:
        matplotlib.figure.Figure: the diagram.

    Raises:
        ValueError: if the shapes do not fit together as above.
    """
    names = ("x", "q", "cache", "k", "v", "q_latent", "out_latent", "out", "z")
    shapes = dict(zip(names, (_shape(n, t) for n, t in zip(names, (x, q, cache, k, v, q_latent,
                                                                    out_latent, out, z)))))
    for name, n in zip(names, (3, 4, 4, 4, 4, 4, 4, 4, 3)):
        _ndim(name, shapes[name], n)
    B, h, T, d_head = shapes["out"]
    S, d_cr = shapes["cache"][2:]  # S = P + T, d_cr = d_c + d_r
    d_r = shapes["q"][3] - d_head
    d_c = d_cr - d_r
    if S < T or d_r < 0 or d_c <= 0:
        raise ValueError(f"cache {shapes['cache']} and q {shapes['q']} must hold P + T >= T={T} positions "
                         f"of d_c + d_r numbers, d_r = q's width - d_head={d_head} >= 0, d_c > 0")
    expected = {"x": (B, T, shapes["x"][2]), "q": (B, h, T, d_head + d_r), "cache": (B, 1, S, d_c + d_r),
                "k": (B, h, S, d_head + d_r), "v": (B, h, S, d_head), "q_latent": (B, h, T, d_c + d_r),
                "out_latent": (B, h, T, d_c), "z": (B, T, h * d_head)}
    for name, e in expected.items():
        if shapes[name] != e:
            raise ValueError(f"{name} must have shape {e} (from out {shapes['out']} and cache "
                             f"{shapes['cache']}), got {shapes[name]}")

    fig, ax = _canvas(11.5, 4.6, (-0.2, 18.6), (-0.6, 6.9))
    f = FONT - 1
    _box(ax, 1.1, 3.2, f"$x$\n{_fmt(shapes['x'])}", w=2.0)
    _box(ax, 4.6, 4.0, f"$[q,\\ q^R]$\n{_fmt(shapes['q'])}", w=2.6, fontsize=f)
    _box(ax, 4.6, 2.2, f"$[c,\\ k^R]$\n{_fmt(shapes['cache'])}", w=2.6, fontsize=f)
    _arrow(ax, (2.1, 3.4), (3.3, 3.9), "$W^Q,\\ W^{QR}$", offset=(-0.2, 0.35), fontsize=f - 1)
    _arrow(ax, (2.1, 3.0), (3.3, 2.3), "$W^{DKV},\\ W^{KR}$", offset=(-0.2, -0.4), fontsize=f - 1)
    ax.text(4.6, 1.45, "cache.k", ha="center", va="center", fontsize=f, color=EDGE, family="monospace")
    # absorb=True, top row: q -> q_latent; attention on the cache itself
    _box(ax, 8.4, 5.8, f"$\\tilde q = [W^{{UK\\top}} q,\\ q^R]$\n{_fmt(shapes['q_latent'])}", w=3.2,
         fontsize=f)
    _arrow(ax, (5.9, 4.3), (6.8, 5.5))
    _box(ax, 12.3, 4.9, "$\\mathrm{softmax}(\\tilde q\\, [c,\\ k^R]^\\top / \\sqrt{d_{head} + d_r})\\, c$"
         f"\n{_fmt(shapes['out_latent'])}", kind="op", w=4.4, fontsize=f)
    _arrow(ax, (10.0, 5.7), (11.0, 5.35))
    _arrow(ax, (5.9, 2.5), (10.1, 4.6))
    ax.text(12.3, 6.0, r"$\mathtt{absorb=True}$", ha="center", va="center", fontsize=f, color=EDGE)
    # absorb=False, bottom row: cache -> k, v; attention on the decompressed keys and values
    _box(ax, 8.4, 0.6, f"$k = [W^{{UK}} c,\\ k^R],\\ v = W^{{UV}} c$\n{_fmt(shapes['k'])}, "
         f"{_fmt(shapes['v'])}", w=3.6, h=1.0, fontsize=f - 1)
    _arrow(ax, (5.9, 1.9), (6.6, 0.9))
    _box(ax, 12.3, 1.5, "$\\mathrm{softmax}(q\\, k^\\top / \\sqrt{d_{head} + d_r})\\, v$"
         f"\n{_fmt(shapes['out'])}", kind="op", w=4.4, fontsize=f)
    _arrow(ax, (10.2, 0.75), (11.0, 1.05))
    _arrow(ax, (5.9, 3.7), (10.1, 1.8))
    ax.text(12.3, 0.4, r"$\mathtt{absorb=False}$", ha="center", va="center", fontsize=f, color=EDGE)
    # both: heads joined and projected
    _box(ax, 17.2, 3.2, f"$z$\n{_fmt(shapes['z'])}", w=2.2)
    _arrow(ax, (14.5, 4.7), (16.1, 3.5), "$W^{UV},\\ W^O$", offset=(0.45, 0.35), fontsize=f - 1)
    _arrow(ax, (14.5, 1.7), (16.1, 2.9), "$W^O$", offset=(0.35, -0.3), fontsize=f - 1)
    return fig
