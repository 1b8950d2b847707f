"""``exercise(...)``: one call per exercise in the chapter modules.

The stub and the solution are kept as source text (what the book's cells show and a
test compares with the pages) and compiled here into functions.
"""
import inspect
import math

import torch

from ._registry import Exercise, _register
from ._messages import TITLES


def _compile(source, name):
    namespace = {"torch": torch, "math": math}
    exec(compile(source, f"<attn.exercises {name}>", "exec"), namespace)
    fn = namespace[name]
    fn.source = source
    return fn


def exercise(id, *, kind, en, es, stub, solution, cases, source=None):
    """Register exercise ``id`` (``"chNN.name"``); ``stub``/``solution`` are source texts."""
    chapter, name = id.split(".", 1)
    if kind not in ("write", "bug_hunt"):
        raise ValueError(f"kind must be 'write' or 'bug_hunt', got {kind!r}")
    if (kind == "bug_hunt") != (source is not None):
        raise ValueError(f"{id}: a bug hunt, and only a bug hunt, cites its source")
    stub_fn, solution_fn = _compile(stub, name), _compile(solution, name)
    arg_names = tuple(inspect.signature(solution_fn).parameters)
    TITLES[id] = {"en": en, "es": es}
    return _register(Exercise(id, int(chapter[2:]), kind, TITLES[id], source, stub_fn, solution_fn, cases,
                              arg_names))
