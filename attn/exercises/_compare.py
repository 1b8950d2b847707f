"""The grader's machinery: cases, comparisons and messages that say what differs.

A :class:`Case` is one call of the reader's function (``call`` is how the message shows
it, e.g. ``causal_mask(T_q=3, T_k=7)``), the reference's answer and the comparison that
judges the reader's. A comparison returns ``None`` or a :class:`Failure`: a message key
and its arguments, rendered in the reader's language only when printed.
"""
import math

import torch

from ._messages import msg, number


class Failure:
    """What differs: ``key`` of :data:`MESSAGES` and its arguments; an optional hint."""

    def __init__(self, key, hint=None, **kw):
        self.key, self.kw, self.hint = key, kw, hint

    def render(self, lang):
        return msg(self.key, lang, **{k: _render(v, lang) for k, v in self.kw.items()})


class Text:
    """A message of :data:`MESSAGES` used as an argument of another one."""

    def __init__(self, key, **kw):
        self.key, self.kw = key, kw

    def render(self, lang):
        return msg(self.key, lang, **{k: _render(v, lang) for k, v in self.kw.items()})


def _render(value, lang):
    if isinstance(value, (Text, Failure)):
        return value.render(lang)
    if isinstance(value, float):
        return number(value, lang)
    return str(value)


class Case:
    """One call: ``fn(*args, **kwargs)`` judged by ``compare(got, want)`` against ``want``."""

    def __init__(self, call, args, want, compare, kwargs=None, hint=None):
        self.call, self.args, self.want, self.compare = call, args, want, compare
        self.kwargs = kwargs or {}
        self.hint = hint  # hint(got) -> Text or None: a slip readers really make


def shape(t):
    return "(" + ", ".join(str(s) for s in t.shape) + ")"


def keys_text(idx):
    idx = [int(i) for i in idx]
    return ", ".join(str(i) for i in idx[:8]) + (", …" if len(idx) > 8 else "")


def _what(i, names):
    return Text("the_result") if names is None else Text("output_named", i=i, name=names[i])


def _parts(got, names):
    """The parts of a result: one tensor, or a tuple with one tensor per name."""
    if names is None:
        return [got], None
    if not isinstance(got, (tuple, list)) or len(got) != len(names):
        return None, Failure("not_tuple", n=len(names), names=", ".join(names), type=type(got).__name__)
    return list(got), None


def _is_tensor(got, what):
    if not isinstance(got, torch.Tensor):
        return Failure("not_tensor", what=what, type=type(got).__name__)
    return None


def close(*, names=None, atol=1e-5, rtol=1e-4):
    """Compare floating-point tensors (or a tuple of them) at ``|Δ| <= atol + rtol |want|``."""

    def compare(got, want):
        parts, fail = _parts(got, names)
        if fail:
            return fail
        wants = [want] if names is None else list(want)
        for i, (g, w) in enumerate(zip(parts, wants)):
            what = _what(i, names)
            fail = _is_tensor(g, what)
            if fail:
                return fail
            if tuple(g.shape) != tuple(w.shape):
                return Failure("shape", what=what, got=shape(g), want=shape(w))
            if not g.dtype.is_floating_point:
                return Failure("dtype_float", what=what, got=str(g.dtype), want=str(w.dtype))
            fail = _values(g.detach().to(torch.float64), w.to(torch.float64), what, atol, rtol)
            if fail:
                return fail
        return None

    return compare


def _values(g, w, what, atol, rtol):
    same_inf = (g == w) & torch.isinf(w)  # -inf where -inf is expected (a log-sum-exp of nothing)
    bad_nan = ~torch.isfinite(g) & ~same_inf
    if bad_nan.any():
        idx = tuple(int(i) for i in bad_nan.nonzero()[0])
        return Failure("nan", what=what, index=idx, want=float(w[idx]))
    diff = torch.where(same_inf, 0.0, (g - w).abs())
    tol = atol + rtol * torch.where(torch.isinf(w), 0.0, w.abs())
    bad = diff > tol
    if bad.any():
        idx = tuple(int(i) for i in bad.nonzero()[0])
        return Failure("value", what=what, index=idx, got=float(g[idx]), want=float(w[idx]),
                       diff=float(diff.max()), tol=float(atol))
    return None


def mask(kind="attention"):
    """Compare boolean masks and name the first row that differs and its keys.

    ``kind``: ``"attention"`` (rows are queries, the last ``T_q`` of ``T_k`` positions),
    ``"batch"`` (rows are sequences, columns positions) or ``"tree"`` (rows are tree nodes
    after ``T_k - T_q`` cached keys).
    """

    def compare(got, want):
        what = Text("the_result")
        fail = _is_tensor(got, what)
        if fail:
            return fail
        if tuple(got.shape) != tuple(want.shape):
            return Failure("shape", what=what, got=shape(got), want=shape(want))
        if got.dtype != torch.bool:
            return Failure("dtype_bool", what=what, got=str(got.dtype))
        rows = (got != want).reshape(-1, want.shape[-1]).any(-1).nonzero()
        if len(rows) == 0:
            return None
        r = int(rows[0])
        g, w = got.reshape(-1, want.shape[-1])[r], want.reshape(-1, want.shape[-1])[r]
        extra, missing = (g & ~w).nonzero().flatten(), (~g & w).nonzero().flatten()
        T_q, T_k = want.shape[-2], want.shape[-1]
        pos = r % T_q + T_k - T_q
        if kind == "batch":
            key = "mask_batch_extra" if len(extra) else "mask_batch_missing"
            return Failure(key, row=r, keys=keys_text(extra if len(extra) else missing))
        if kind == "tree":
            if len(extra):
                return Failure("tree_extra", row=r % T_q, keys=keys_text(extra - (T_k - T_q)))
            return Failure("tree_missing", row=r % T_q, keys=keys_text(missing))
        if len(extra):
            return Failure("mask_extra", row=r % T_q, pos=pos, keys=keys_text(extra))
        return Failure("mask_missing", row=r % T_q, pos=pos, keys=keys_text(missing))

    return compare


def ints(*, where=None):
    """Compare integer tensors exactly, only where ``where`` (a bool tensor) is True."""

    def compare(got, want):
        what = Text("the_result")
        fail = _is_tensor(got, what)
        if fail:
            return fail
        if tuple(got.shape) != tuple(want.shape):
            return Failure("shape", what=what, got=shape(got), want=shape(want))
        if got.dtype.is_floating_point or got.dtype.is_complex or got.dtype == torch.bool:
            return Failure("dtype_int", what=what, got=str(got.dtype))
        bad = got != want
        if where is not None:
            bad &= where
        if bad.any():
            idx = tuple(int(i) for i in bad.nonzero()[0])
            return Failure("int_value", what=what, index=idx, got=int(got[idx]), want=int(want[idx]))
        return None

    return compare


def scalar(*, rel=1e-9):
    """Compare a number (int, float or 0-d tensor) at relative tolerance ``rel``."""

    def compare(got, want):
        what = Text("the_result")
        if isinstance(got, torch.Tensor) and got.numel() == 1:
            got = got.item()
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            return Failure("not_number", what=what, type=type(got).__name__)
        if not math.isclose(float(got), float(want), rel_tol=rel, abs_tol=1e-12):
            return Failure("scalar", what=what, got=got, want=want)
        return None

    return compare


def randn(*size, seed=0, dtype=torch.float64):
    """Fixed-seed normal tensor: the same inputs on every run and every machine."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*size, generator=g, dtype=dtype)


def clone(x):
    if isinstance(x, torch.Tensor):
        return x.clone()
    if isinstance(x, (tuple, list)):
        return type(x)(clone(v) for v in x)
    return x


def run(fn, cases, arg_names):
    """Run ``fn`` on every case; return ``(n, i, failure)`` for the first failing case (1-based)."""
    for i, case in enumerate(cases, start=1):
        args = clone(case.args)
        try:
            got = fn(*args, **clone(case.kwargs))
        except Exception as exc:  # the reader's code: any exception is a verdict, not a crash
            text = str(exc).split("\n")[0]
            if not text:
                return len(cases), i, case, Failure("raised_bare", exc=type(exc).__name__)
            return len(cases), i, case, Failure("raised", exc=type(exc).__name__, text=text)
        for name, before, after in zip(arg_names, case.args, args):
            if isinstance(before, torch.Tensor) and not _same(before, after):
                return len(cases), i, case, Failure("mutated", name=name)
        if got is None and case.want is not None:
            return len(cases), i, case, Failure("returned_none")
        fail = case.compare(got, case.want)
        if fail is not None:
            if case.hint is not None:
                try:
                    fail.hint = case.hint(got)
                except Exception:  # a hint that cannot judge the answer stays silent
                    fail.hint = None
            return len(cases), i, case, fail
    return len(cases), None, None, None


def _same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and bool(torch.equal(a.nan_to_num(0.5), b.nan_to_num(0.5)))


def equal(got, want):
    """True when ``got`` is a tensor equal to ``want`` (for hints)."""
    return isinstance(got, torch.Tensor) and got.shape == want.shape and bool((got == want).all())


def near(got, want, atol=1e-6):
    """True when ``got`` is a tensor close to ``want`` (for hints)."""
    return (isinstance(got, torch.Tensor) and got.shape == want.shape
            and bool(torch.allclose(got.to(torch.float64), want.to(torch.float64), atol=atol, equal_nan=True)))
