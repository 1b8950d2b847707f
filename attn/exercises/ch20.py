"""Chapter 20, a serving engine: the masks and positions of a draft tree.

Self-contained references (a loop over each node's ancestors), so that these checks
do not depend on the chapter's own code.
"""
import torch

from ._compare import Case, Failure, Text, ints, mask
from ._define import exercise

# The tree of the report (PaddlePaddle/FastDeploy#3514): 0 -> {1, 2}, 1 -> 3, 2 -> 4.
TREES = [[-1, 0, 0, 1, 2], [-1, 0, 1, 2], [-1, -1, 0, 1, 0], [-1], [-1, 0, 0, 0, 1, 1, 2]]


def _ancestors(parents, i):
    out = {i}
    while parents[i] >= 0:
        i = parents[i]
        out.add(i)
    return out


def _tree_ref(parents, num_cached=0):
    N = len(parents)
    m = torch.zeros(N, num_cached + N, dtype=torch.bool)
    m[:, :num_cached] = True  # the cached prefix
    for i in range(N):
        for a in _ancestors(parents, i):
            m[i, num_cached + a] = True  # itself and its ancestors
    return m


def _tree_cases():
    cases = []
    for parents, n in zip(TREES, (0, 3, 2, 4, 1)):
        cases.append(Case(f"tree_mask(parents=torch.tensor({parents}), num_cached={n})",
                          (torch.tensor(parents),), _tree_ref(parents, n), mask("tree"), kwargs={"num_cached": n}))
    return cases


exercise(
    "ch20.tree_mask", kind="write",
    en="The attention mask of a draft tree: the prefix, the node and its ancestors",
    es="La máscara de atención de un árbol del modelo borrador: el prefijo, el nodo y sus antepasados",
    stub='''\
def tree_mask(parents, num_cached=0):
    # parents (N,) int64, parents[i] < i or -1 -> (N, num_cached + N) bool
    raise NotImplementedError
''',
    solution='''\
def tree_mask(parents, num_cached=0):
    N = len(parents)
    m = torch.eye(N, dtype=torch.bool)                       # (N, N): m[i, i] = True
    for i in range(N):
        if parents[i] >= 0:
            m[i] |= m[parents[i]]                            # m[i] |= m[parent(i)]
    prefix = torch.ones(N, num_cached, dtype=torch.bool)     # (N, num_cached)
    return torch.cat((prefix, m), dim=1)                     # (N, num_cached + N)
''',
    cases=_tree_cases,
)


def _bias_compare(got, want):
    if isinstance(got, torch.Tensor) and got.dtype.is_floating_point and got.shape == want.shape:
        odd = ~((got == 0) | (got == float("-inf")))
        if odd.any():
            idx = tuple(int(i) for i in odd.nonzero()[0])
            return Failure("int_value", what=Text("the_result"), index=idx, got=float(got[idx]), want="0 / -inf")
        return mask("tree")(got == 0, want == 0)
    if isinstance(got, torch.Tensor) and got.shape == want.shape:
        return Failure("dtype_float", what=Text("the_result"), got=str(got.dtype), want=str(want.dtype))
    return mask("tree")(got, want == 0)


def _bias_cases():
    cases = []
    for parents in TREES:
        want = torch.zeros(len(parents), len(parents)).masked_fill(~_tree_ref(parents), float("-inf"))
        cases.append(Case(f"tree_bias(parents=torch.tensor({parents}))", (torch.tensor(parents),), want,
                          _bias_compare))
    return cases


exercise(
    "ch20.tree_bias", kind="bug_hunt", source="https://github.com/PaddlePaddle/FastDeploy/pull/3514",
    en="A tree is not a triangle: the additive mask of a draft tree",
    es="Un árbol no es un triángulo: la máscara aditiva de un árbol del modelo borrador",
    stub='''\
def tree_bias(parents):
    # parents (N,) int64 -> (N, N) float, 0 | -inf
    N = len(parents)
    return torch.full((N, N), float("-inf")).triu(1)      # (N, N)
''',
    solution='''\
def tree_bias(parents):
    N = len(parents)
    seen = torch.eye(N, dtype=torch.bool)                  # (N, N)
    for i in range(N):
        if parents[i] >= 0:
            seen[i] |= seen[parents[i]]                    # ancestors of i
    return torch.zeros(N, N).masked_fill(~seen, float("-inf"))
''',
    cases=_bias_cases,
)


def _depths(parents, num_cached):
    return torch.tensor([num_cached + len(_ancestors(parents, i)) - 1 for i in range(len(parents))])


exercise(
    "ch20.tree_positions", kind="write",
    en="The positions of a draft tree's nodes: the prefix length plus the depth",
    es="Las posiciones de los nodos de un árbol del modelo borrador: la longitud del prefijo más la profundidad",
    stub='''\
def tree_positions(parents, num_cached=0):
    # parents (N,) int64 -> (N,) int64: num_cached + depth, depth = 0 when parents[i] = -1
    raise NotImplementedError
''',
    solution='''\
def tree_positions(parents, num_cached=0):
    pos = torch.empty(len(parents), dtype=torch.int64)    # (N,)
    for i, p in enumerate(parents.tolist()):
        pos[i] = num_cached if p < 0 else pos[p] + 1
    return pos
''',
    cases=lambda: [Case(f"tree_positions(parents=torch.tensor({p}), num_cached={n})", (torch.tensor(p),),
                        _depths(p, n), ints(), kwargs={"num_cached": n}) for p, n in zip(TREES, (0, 3, 2, 4, 1))],
)
