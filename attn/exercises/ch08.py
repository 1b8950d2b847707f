"""Chapter 8, order: permutations and the sinusoidal positional encoding."""
import math

import torch

from ._compare import Case, close, ints
from ._define import exercise


def _sin_ref(T, d):
    pe = torch.zeros(T, d, dtype=torch.float64)
    for pos in range(T):
        for c in range(d):
            angle = pos / 10000 ** ((c - c % 2) / d)  # columns 2i and 2i + 1 share pos / 10000^(2i/d)
            pe[pos, c] = math.sin(angle) if c % 2 == 0 else math.cos(angle)
    return pe


def _sin_cases():
    return [Case(f"sinusoidal(T={T}, d={d})", (T, d), _sin_ref(T, d), close(atol=1e-5))
            for T, d in [(6, 4), (1, 8), (50, 16), (3, 2)]]


exercise(
    "ch08.sinusoidal", kind="write",
    en="The sinusoidal positional encoding table",
    es="La tabla de la codificación posicional sinusoidal",
    stub='''\
def sinusoidal(T, d):
    # -> (T, d);  PE[pos, 2i] = sin(pos / 10000^(2i/d)),  PE[pos, 2i+1] = cos(pos / 10000^(2i/d))
    raise NotImplementedError
''',
    solution='''\
def sinusoidal(T, d):
    pos = torch.arange(T, dtype=torch.float64)[:, None]                  # (T, 1)
    inv = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)    # (d/2,)
    pe = torch.zeros(T, d, dtype=torch.float64)                           # (T, d)
    pe[:, 0::2] = torch.sin(pos * inv)                                    # (T, d/2)
    pe[:, 1::2] = torch.cos(pos * inv)                                    # (T, d/2)
    return pe
''',
    cases=_sin_cases,
)


def _inv_cases():
    cases = []
    for perm in ([2, 0, 1], [0], [3, 1, 0, 2], [4, 3, 2, 1, 0], [1, 2, 3, 4, 5, 0]):
        want = torch.empty(len(perm), dtype=torch.int64)
        for i, p in enumerate(perm):
            want[p] = i  # inv[perm[i]] = i
        cases.append(Case(f"inverse_permutation(perm=torch.tensor({perm}))", (torch.tensor(perm),), want, ints()))
    return cases


exercise(
    "ch08.inverse_permutation", kind="write",
    en="Undo a shuffle of the tokens: the inverse permutation",
    es="Deshacer una permutación de los tokens: la permutación inversa",
    stub='''\
def inverse_permutation(perm):
    # perm (T,) int64 -> inv (T,) int64, inv[perm[i]] = i: x[perm][inv] = x
    raise NotImplementedError
''',
    solution='''\
def inverse_permutation(perm):
    inv = torch.empty_like(perm)                  # (T,)
    inv[perm] = torch.arange(len(perm))           # inv[perm[i]] = i
    return inv
''',
    cases=_inv_cases,
)
