"""Chapter 18, serving: positions of left-padded prompts, and a window with sinks."""
import torch

from ._compare import Case, Text, equal, ints, mask
from ._define import exercise
from ..ops import bias


def _pos_ref(m):
    out = torch.zeros(m.shape, dtype=torch.int64)
    for b in range(m.shape[0]):
        n = 0
        for t in range(m.shape[1]):
            if m[b, t]:
                out[b, t] = n  # the n-th real token of row b
                n += 1
    return out


def _pos_cases():
    cases = []
    for rows in ([[1, 1, 1, 1]], [[0, 0, 1, 1], [1, 1, 1, 1]], [[0, 0, 0, 1, 1, 1], [0, 1, 1, 1, 1, 1],
                                                                 [1, 1, 1, 1, 1, 1]], [[0, 0, 0, 1]]):
        m = torch.tensor(rows, dtype=torch.bool)
        T = m.shape[1]
        cases.append(Case(f"position_ids(mask = torch.tensor({rows}, dtype=torch.bool))", (m,), _pos_ref(m),
                          ints(where=m),
                          hint=lambda got, B=m.shape[0], T=T: Text("hint_positions_shared")
                          if equal(got, torch.arange(T).expand(B, T)) else None))
    return cases


exercise(
    "ch18.position_ids", kind="bug_hunt", source="https://github.com/unslothai/unsloth/issues/3699",
    en="Position ids of left-padded prompts",
    es="Las posiciones de secuencias rellenadas por la izquierda",
    stub='''\
def position_ids(mask):
    # mask (B, T) bool, [0, 0, 1, 1, 1] -> (B, T) int64, [., ., 0, 1, 2]
    B, T = mask.shape
    return torch.arange(T).expand(B, T)
''',
    solution='''\
def position_ids(mask):
    return mask.long().cumsum(dim=-1) - 1         # (B, T): 0, 1, 2, ... from mask[b, t] = True
''',
    cases=_pos_cases,
)


def _sink_cases():
    return [Case(f"sink_window_mask(T_q={T_q}, T_k={T_k}, window={w}, num_sinks={s})", (T_q, T_k, w, s),
                 bias.sink_window_mask(T_q, w, s, T_k), mask())
            for T_q, T_k, w, s in [(6, 6, 2, 1), (1, 10, 3, 2), (3, 8, 2, 0), (4, 4, 4, 2), (2, 9, 1, 3)]]


exercise(
    "ch18.sink_window_mask", kind="write",
    en="A sliding window that keeps the first tokens: attention sinks",
    es="Una ventana deslizante que conserva los primeros tokens: sumideros de atención",
    stub='''\
def sink_window_mask(T_q, T_k, window, num_sinks):
    # (T_q, T_k) bool, p = i + T_k - T_q
    # mask[i, j] = (j <= p) & ((p - j < window) | (j < num_sinks))
    raise NotImplementedError
''',
    solution='''\
def sink_window_mask(T_q, T_k, window, num_sinks):
    p = torch.arange(T_q)[:, None] + (T_k - T_q)  # (T_q, 1)
    j = torch.arange(T_k)[None, :]                # (1, T_k)
    return (j <= p) & ((p - j < window) | (j < num_sinks))   # (T_q, T_k)
''',
    cases=_sink_cases,
)
