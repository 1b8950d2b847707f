"""The exercises of the book, registered by the chapter modules as they are imported."""
from dataclasses import dataclass


@dataclass(frozen=True)
class Exercise:
    """One exercise: what to write or fix, a stub to start from and a correct solution.

    Attributes:
        id (str): ``"chNN.name"``; ``name`` is the function the reader writes.
        chapter (int): the chapter whose Exercises section holds it.
        kind (str): ``"write"`` or ``"bug_hunt"``.
        title (str): the English title (:attr:`titles` has both languages).
        titles (dict): ``{"en": ..., "es": ...}``.
        source (str or None): for a bug hunt, the URL of the issue or pull request that
            reported the bug; else ``None``.
        stub (callable): the function the reader starts from (fails its check).
        solution (callable): a correct function (passes its check).
        cases (callable): ``cases() -> list`` of :class:`attn.exercises._compare.Case`.
        arg_names (tuple): the names of the function's arguments, in order.
    """

    id: str
    chapter: int
    kind: str
    titles: dict
    source: object
    stub: object
    solution: object
    cases: object
    arg_names: tuple

    @property
    def title(self):
        return self.titles["en"]

    @property
    def name(self):
        return self.id.split(".", 1)[1]


_REGISTRY = {}


def _register(ex):
    if ex.id in _REGISTRY:
        raise RuntimeError(f"exercise {ex.id} registered twice")
    _REGISTRY[ex.id] = ex
    return ex
