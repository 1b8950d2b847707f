"""Exercises that check the reader's code: ``check("ch05.causal_mask", causal_mask)``.

Each exercise of the book names a function to write (``kind="write"``) or a function
to fix (``kind="bug_hunt"``: the stub holds a bug reported in a public project, whose
issue or pull request is the exercise's ``source``). :func:`check` runs the reader's
function on fixed-seed inputs and on the edge cases that matter (one query, fewer
queries than keys, one key-value head, lengths that are not multiples, fully padded
rows, large scores), compares with a reference at stated tolerances and says what
differs: which shape, row, key or position. Everything runs offline on a CPU, each
check in well under a second.

Messages exist in English and Spanish (``lang="es"``, or :func:`set_language` once per
notebook, or the environment variable ``ATTN_EXERCISES_LANG``). From the command line::

    python -m attn.exercises --list [--lang es]
    python -m attn.exercises check ch05.causal_mask my_masks.py [--lang es]
"""
import difflib
import os
from dataclasses import dataclass

from . import _compare, chapters  # noqa: F401 (importing the chapter modules registers their exercises)
from ._messages import LANGUAGES, msg
from ._registry import _REGISTRY, Exercise

__all__ = ["Exercise", "Verdict", "catalog", "check", "get_language", "set_language"]

_language = None


@dataclass(frozen=True)
class Verdict:
    """The result of :func:`check`: ``passed``, the ``message`` printed, and the counts."""

    id: str
    passed: bool
    message: str
    checks: int
    failed_check: object = None

    def __bool__(self):
        return self.passed

    def __str__(self):
        return self.message


def _load():
    return _REGISTRY


def catalog():
    """Every exercise, in book order (chapter, then the order of the chapter's section).

    Returns:
        list of :class:`Exercise`.
    """
    return list(_load().values())


def get(exercise_id):
    """The exercise ``exercise_id``; ``ValueError`` naming the nearest ids if unknown."""
    reg = _load()
    if not isinstance(exercise_id, str):
        raise TypeError(f"exercise_id must be a str such as 'ch05.causal_mask', got {type(exercise_id).__name__}")
    if exercise_id not in reg:
        raise ValueError(f"unknown exercise_id {exercise_id!r}; nearest: {', '.join(_nearest(exercise_id))}")
    return reg[exercise_id]


def _nearest(exercise_id):
    """The (at most four) ids closest to an unknown ``exercise_id``."""
    reg = _load()
    near = difflib.get_close_matches(exercise_id, list(reg), n=4, cutoff=0.5)
    return near or [i for i in reg if i.split(".")[0] == exercise_id.split(".")[0]] or list(reg)[:4]


def set_language(lang):
    """Set the language of the messages for every later :func:`check` without ``lang``.

    Args:
        lang (str): ``"en"`` or ``"es"``.
    """
    global _language
    _language = _lang(lang)


def get_language():
    """The language :func:`check` uses without ``lang``: :func:`set_language`, else the
    environment variable ``ATTN_EXERCISES_LANG``, else ``"en"``."""
    return _language or _lang(os.environ.get("ATTN_EXERCISES_LANG") or "en")


def _lang(lang):
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {', '.join(LANGUAGES)}, got {lang!r}")
    return lang


def check(exercise_id, candidate, *, lang=None, quiet=False):
    """Check the reader's function ``candidate`` against exercise ``exercise_id``.

    Runs ``candidate`` on every case of the exercise (fixed-seed inputs and edge cases),
    stops at the first answer that differs from the reference and says what differs. A
    candidate that raises fails, and the message names the exception.

    Args:
        exercise_id (str): e.g. ``"ch05.causal_mask"`` (:func:`catalog` lists them).
        candidate (callable): the reader's function, with the exercise's signature.
        lang (str, optional): ``"en"`` or ``"es"``; defaults to :func:`get_language`.
        quiet (bool): if ``True``, do not print the message.

    Returns:
        Verdict: ``.passed`` (bool) and ``.message`` (str, in ``lang``).

    Raises:
        ValueError: unknown ``exercise_id`` (the message lists the nearest ids) or ``lang``.
        TypeError: ``candidate`` is not callable.
    """
    ex = get(exercise_id)
    if not callable(candidate):
        raise TypeError(f"candidate must be a callable (the function {ex.name}), got {type(candidate).__name__}")
    lang = get_language() if lang is None else _lang(lang)
    n, i, case, fail = _compare.run(candidate, ex.cases(), ex.arg_names)
    if fail is None:
        text = msg("passed", lang, id=ex.id, n=n)
    else:
        text = msg("failed", lang, id=ex.id, i=i, n=n, call=case.call, detail=fail.render(lang))
        if fail.hint is not None:
            text += "\n" + msg("hint", lang, text=fail.hint.render(lang))
    if not quiet:
        print(text)
    return Verdict(ex.id, fail is None, text, n, i)

