"""The package's hot path: checked once where the user calls in, then one hop to the kernel.

What the tests pin down: no import circle in ``attn``; a decode step (T = 1 after a
cache) passes no mask and ``is_causal=False`` to PyTorch's fused attention; grouped-query
attention shares its key-value heads with ``enable_gqa=True`` instead of copying them; no
host sync (``bool(tensor)``, ``.item()``) on the fast path, left-padded decoding included;
``d_k = 0`` gives one ``ValueError`` on every path; any object with ``update(k, v)`` and
``len()`` works as a cache; the checks run once per call from outside, however many
layers and steps it runs, and forward hooks fire on every block and attention layer.
(``tests/attn/test_cache_contracts.py``: a cache keeps copies, and chunks through any
cache equal the whole pass.)

Tolerances: float64, atol=1e-10, rtol=1e-8.
"""
import ast
import pathlib

import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

import attn
import attn.functional as AF
from attn.models.tiny_lm import TinyLM
from tests.helpers.caches import ListCache

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "attn"
TOL = dict(atol=1e-10, rtol=1e-8)


# The floors of the package (attn/__init__.py): a module imports only modules of its own
# folder or of a lower floor.
FLOORS = {"_checks": 0, "data": 0, "ops": 1, "viz": 1, "functional": 2, "layers": 3, "cache": 3, "measure": 3,
          "models": 4, "serving": 5, "exercises": 6, "": 7}


def _exists(parts):
    where = PACKAGE.joinpath(*parts)
    return bool(parts) and (where.with_suffix(".py").is_file() or (where / "__init__.py").is_file())


def _name(path):
    """``attn/layers/core.py`` -> ``"layers.core"``; a folder's ``__init__.py`` -> the folder."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_imports(path):
    """``(module-level, function-level)`` modules of the package that ``path`` imports, dotted below ``attn``."""
    here = _name(path).split(".") if _name(path) else []
    folder = here if path.name == "__init__.py" else here[:-1]
    top, inner = set(), []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level:  # from . import x / from ..x import y
            base = folder[:len(folder) - node.level + 1] + (node.module.split(".") if node.module else [])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "attn":
            base = node.module.split(".")[1:]
        elif isinstance(node, ast.Import):
            found = [a.name.split(".")[1:] for a in node.names if a.name.startswith("attn.")]
            (top if node.col_offset == 0 else inner).update(".".join(f) for f in found if _exists(f)) \
                if node.col_offset == 0 else inner.extend(".".join(f) for f in found if _exists(f))
            continue
        else:
            continue
        found = {".".join(base + [a.name] if _exists(base + [a.name]) else base) for a in node.names}
        found = {f for f in found if f and _exists(f.split("."))}
        (top.update(found) if node.col_offset == 0 else inner.extend(sorted(found)))
    return top, inner


def _graph():
    graph, inner = {}, {}
    for path in sorted(PACKAGE.rglob("*.py")):
        graph[_name(path)], found = _package_imports(path)
        if found:
            inner[_name(path)] = found
    return graph, inner


def test_no_import_inside_a_function_and_no_import_circle():
    graph, inner = _graph()
    assert not inner, f"imports of the package's modules inside functions (a hidden circle): {inner}"
    assert {"functional", "cache.kv_cache", "layers.multihead", "layers.grouped_query"} <= graph.keys()
    assert _circle(graph) is None, f"import circle: {' -> '.join(_circle(graph))}"


def _upward(graph):
    """The imports that go up a floor or sideways between folders, as ``(importer, imported)``."""
    floor = {m: FLOORS.get(m.split(".")[0]) for m in graph}
    unknown = sorted(m for m, f in floor.items() if f is None)
    assert not unknown, f"modules on no floor (add their folder to FLOORS): {unknown}"
    return sorted((a, b) for a, deps in graph.items() for b in deps
                  if a.split(".")[0] != b.split(".")[0] and floor[b] >= floor[a] and a)


def test_every_module_imports_only_lower_floors():
    assert not _upward(_graph()[0]), "imports against the floors of attn/__init__.py"


def _circle(graph):
    """A circle of ``graph`` (module -> modules it imports) as a list of names, or None."""
    done, stack = set(), []

    def visit(name):  # depth-first search; a node met again on the stack closes a circle
        if name in stack:
            return stack[stack.index(name):] + [name]
        if name in done:
            return None
        stack.append(name)
        for dep in sorted(graph.get(name, ())):
            found = visit(dep)
            if found:
                return found
        stack.pop()
        done.add(name)
        return None

    for name in graph:
        found = visit(name)
        if found:
            return found
    return None


def test_the_import_checks_find_what_they_look_for(tmp_path, monkeypatch):
    """Not vacuous: a function-level import is found, so are a circle and an import against the floors."""
    monkeypatch.setattr(f"{__name__}.PACKAGE", tmp_path)
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "__init__.py").write_text("from . import b\n")
    (tmp_path / "a.py").write_text("from .ops import b\nfrom .c import f\n")
    (tmp_path / "ops" / "b.py").write_text("import torch\n\n\ndef f():\n    from ..a import g\n")
    (tmp_path / "c.py").write_text("import attn.ops.b\nfrom .. import nothing\n")
    (tmp_path / "functional.py").write_text("from .ops import b\n")
    assert _package_imports(tmp_path / "a.py") == ({"ops.b", "c"}, [])
    assert _package_imports(tmp_path / "ops" / "b.py") == (set(), ["a"])
    assert _package_imports(tmp_path / "ops" / "__init__.py") == ({"ops.b"}, [])
    assert _package_imports(tmp_path / "c.py") == ({"ops.b"}, [])
    assert _circle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert _circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _upward({"functional": {"ops.b"}, "ops.b": set()}) == []
    assert _upward({"functional": set(), "ops.b": {"functional"}}) == [("ops.b", "functional")]


class _Spy:
    """Records the keyword arguments of every call to F.scaled_dot_product_attention."""

    def __init__(self, monkeypatch):
        self.calls = []
        real = F.scaled_dot_product_attention

        def spy(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
            self.calls.append(dict(q=q.shape, k=k.shape, attn_mask=attn_mask, is_causal=is_causal,
                                   enable_gqa=enable_gqa))
            return real(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal,
                        scale=scale, enable_gqa=enable_gqa)

        monkeypatch.setattr(F, "scaled_dot_product_attention", spy)


def _layers():
    torch.manual_seed(0)
    return {
        "mha": attn.MultiHeadAttention(8, 8, 16, 0.0, 4, qkv_bias=True).double().eval(),
        "gqa": attn.GroupedQueryAttention(8, 8, 16, 0.0, 4, 2, rope_base=100.0).double().eval(),
        "mqa": attn.GroupedQueryAttention(8, 8, 16, 0.0, 4, 1).double().eval(),
    }


@pytest.mark.parametrize("name", ["mha", "gqa", "mqa"])
def test_what_each_step_passes_to_the_fused_kernel(name, monkeypatch):
    m = _layers()[name]
    x = torch.randn(2, 7, 8, dtype=torch.float64)
    spy = _Spy(monkeypatch)

    def no_copies(*args, **kwargs):
        raise AssertionError("repeat_interleave copies the key-value heads")

    monkeypatch.setattr(torch.Tensor, "repeat_interleave", no_copies)
    monkeypatch.setattr(torch, "repeat_interleave", no_copies)
    cache = attn.KVCache()
    with torch.no_grad():
        m(x[:, :4], cache=cache)  # prefill: P = 0, T = 4
        m(x[:, 4:5], cache=cache)  # decode: P = 4, T = 1
        m(x[:, 5:7], cache=cache)  # two at once: P = 5, T = 2
    prefill, decode, chunk = spy.calls
    assert prefill["attn_mask"] is None and prefill["is_causal"] is True
    assert decode["attn_mask"] is None and decode["is_causal"] is False  # every key is visible
    assert decode["k"][-2] == 5
    assert chunk["is_causal"] is False and chunk["attn_mask"].shape == (2, 7)  # rows P .. P + T - 1
    assert chunk["attn_mask"].tolist() == [[True] * 6 + [False], [True] * 7]
    h_kv = m.num_kv_heads
    for call in spy.calls:
        assert call["k"][1] == h_kv  # h_kv heads reach the kernel, not h copies
        assert call["enable_gqa"] is (h_kv != m.num_heads)


def test_explicit_path_of_gqa_equals_the_fused_one_without_repeat_interleave(monkeypatch):
    m = _layers()["mqa"]
    monkeypatch.setattr(torch.Tensor, "repeat_interleave", None)
    x = torch.randn(2, 6, 8, dtype=torch.float64)
    with torch.no_grad():
        z, w = m(x, return_weights=True)
        assert_close(z, m(x), **TOL)
    assert w.shape == (2, 4, 6, 6)


@pytest.mark.parametrize("name", ["mha", "gqa", "mqa"])
def test_no_host_sync_on_the_fast_path(name, monkeypatch):
    """bool(tensor), tensor.item() and tensor.tolist() wait for the device: none on the way."""
    m = _layers()[name]
    x = torch.randn(2, 6, 8, dtype=torch.float64)
    cache = attn.KVCache()

    def sync(self, *args):
        raise AssertionError("a host sync on the fast path")

    for method in ("__bool__", "item", "tolist", "__int__", "__float__"):
        monkeypatch.setattr(torch.Tensor, method, sync)
    with torch.no_grad():
        m(x)
        m(x[:, :3], cache=cache)
        m(x[:, 3:4], cache=cache)
        m(x[:, 4:6], cache=cache)
        if name == "mha":  # a padding mask, with one sequence all padding: zeros, no sync
            out = m(x, key_padding_mask=torch.tensor([[True] * 6, [False] * 6]))
    monkeypatch.undo()
    if name == "mha":
        assert (out[1] == m.out_proj.bias).all()  # zero context, then out_proj: its bias


def test_the_sync_spy_sees_a_sync(monkeypatch):
    """The spy above is not vacuous: the check the package used to make, bool(mask.all()), trips it."""
    def sync(self, *args):
        raise AssertionError("sync")

    monkeypatch.setattr(torch.Tensor, "__bool__", sync)
    with pytest.raises(AssertionError, match="sync"):
        bool(torch.ones(2, 3, dtype=torch.bool).all())


D_K_ZERO = r"q and k must have d_k >= 1 features, got q shape \(2, 3, 0\)"


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda q, k, v: AF.scaled_dot_product_attention(q, k, v), id="fast"),
        pytest.param(lambda q, k, v: AF.scaled_dot_product_attention(q, k, v, is_causal=True), id="fast-causal"),
        pytest.param(lambda q, k, v: AF.scaled_dot_product_attention(q, k, v, return_weights=True), id="explicit"),
        pytest.param(lambda q, k, v: AF.scaled_dot_product_attention(
            q, k, v, torch.ones(3, 3, dtype=torch.bool), return_weights=True), id="explicit-mask"),
        pytest.param(lambda q, k, v: AF.attention_weights(q, k), id="attention_weights"),
        pytest.param(lambda q, k, v: AF.tiled_attention(q, k, v), id="tiled"),
        pytest.param(lambda q, k, v: AF.tiled_attention(q, k, v, is_causal=True), id="tiled-causal"),
    ],
)
def test_d_k_zero_is_one_value_error_on_every_path(call):
    q = k = torch.randn(2, 3, 0)
    v = torch.randn(2, 3, 5)
    with pytest.raises(ValueError, match=D_K_ZERO):
        call(q, k, v)


@pytest.mark.parametrize("name", ["mha", "gqa", "mqa"])
def test_any_object_with_update_and_len_is_a_cache(name):
    m = _layers()[name]
    x = torch.randn(2, 9, 8, dtype=torch.float64)
    cache = ListCache()
    with torch.no_grad():
        parts = [m(x[:, a:b], cache=cache) for a, b in ((0, 4), (4, 5), (5, 9))]
        assert_close(torch.cat(parts, dim=1), m(x), **TOL)
    assert len(cache) == 9
    for wrong in ({"k": None}, {1, 2}, [], object()):
        with pytest.raises(TypeError, match=r"cache must be an attn.KVCache or None \(an object with update"):
            m(x[:, :1], cache=wrong)


def _count_checker_calls(monkeypatch):
    """Wrap every public function of ``attn._checks``; return the dict of call counts."""
    from attn import _checks

    counts = {}
    for name, fn in list(vars(_checks).items()):
        if callable(fn) and not name.startswith("_") and getattr(fn, "__module__", "") == _checks.__name__:
            def counted(*args, _fn=fn, _name=name, **kwargs):
                counts[_name] = counts.get(_name, 0) + 1
                return _fn(*args, **kwargs)
            monkeypatch.setattr(_checks, name, counted)
    return counts


@pytest.mark.parametrize("h_kv", [4, 1])
def test_generation_checks_at_the_boundary_only(h_kv, monkeypatch):
    # generate() checks its arguments once; the decoding loop calls the blocks' kernels,
    # so the number of checker calls does not grow with the tokens generated.
    torch.manual_seed(0)
    model = TinyLM(16, 32, d_model=16, num_layers=2, num_heads=4, num_kv_heads=h_kv).eval()
    prompt = torch.zeros(1, 3, dtype=torch.long)
    totals = []
    for new in (2, 6):
        counts = _count_checker_calls(monkeypatch)
        model.generate(prompt, new)
        totals.append(sum(counts.values()))
        monkeypatch.undo()
    assert totals[0] > 0, "the spy saw no check at all"
    assert totals[0] == totals[1], f"checker calls grow with the tokens generated: {totals}"


def test_a_module_call_is_checked_once(monkeypatch):
    # The counter sees the checks of a public forward: one forward_inputs per call.
    m = attn.GroupedQueryAttention(16, 16, 8, 0.0, 4, 2).eval()
    counts = _count_checker_calls(monkeypatch)
    cache = attn.KVCache()
    m(torch.randn(1, 3, 16), cache=cache)
    m(torch.randn(1, 1, 16), cache=cache)
    assert counts.get("forward_inputs") == 2, counts


def _padded_prompt():
    """Two prompts of 3 and 5 tokens, left-padded to 5: ``(idx, key_padding_mask)``."""
    idx = torch.tensor([[0, 0, 3, 4, 5], [1, 2, 3, 4, 5]])
    return idx, idx != 0  # (2, 5), (2, 5)


@pytest.mark.parametrize("h_kv", [4, 1])
def test_left_padded_generation_checks_at_the_boundary_only(h_kv, monkeypatch):
    # generate(key_padding_mask=...) checks once too: no checked function in its loop.
    torch.manual_seed(0)
    model = TinyLM(16, 32, d_model=16, num_layers=2, num_heads=4, num_kv_heads=h_kv).eval()
    idx, mask = _padded_prompt()
    totals = []
    for new in (2, 6):
        counts = _count_checker_calls(monkeypatch)
        model.generate(idx, new, key_padding_mask=mask)
        totals.append(sum(counts.values()))
        monkeypatch.undo()
    assert totals[0] > 0, "the spy saw no check at all"
    assert totals[0] == totals[1], f"checker calls grow with the tokens generated: {totals}"


def test_what_a_left_padded_step_passes_to_the_fused_kernel(monkeypatch):
    # With padding, every step passes its mask (B, 1, T, P + T), bottom-right and without the padded
    # keys, and no is_causal; the key-value heads are shared with enable_gqa, never copied.
    torch.manual_seed(0)
    model = TinyLM(16, 32, d_model=16, num_layers=1, num_heads=4, num_kv_heads=2).eval()
    idx, mask = _padded_prompt()
    monkeypatch.setattr(torch.Tensor, "repeat_interleave", None)
    spy = _Spy(monkeypatch)
    model.generate(idx, 2, key_padding_mask=mask)
    prefill, decode = spy.calls
    assert prefill["is_causal"] is False and prefill["attn_mask"].shape == (2, 1, 5, 5)
    assert prefill["attn_mask"][0, 0, 2:].tolist() == [[False, False, True, False, False],
                                                       [False, False, True, True, False],
                                                       [False, False, True, True, True]]
    assert prefill["attn_mask"][1, 0].tolist() == AF.causal_mask(5).tolist()
    assert decode["attn_mask"].shape == (2, 1, 1, 6) and decode["is_causal"] is False
    assert decode["attn_mask"][:, 0, 0].tolist() == [[False, False, True, True, True, True], [True] * 6]
    for call in spy.calls:
        assert call["k"][1] == 2 and call["enable_gqa"] is True


def test_no_host_sync_in_a_left_padded_step(monkeypatch):
    # The loop of generate(key_padding_mask=...): positions from the mask, the mask of the new
    # tokens, one model call; none of it waits for the device.
    from attn import _checks
    from attn.models.tiny_lm import _left_padded

    torch.manual_seed(0)
    model = TinyLM(16, 32, d_model=16, num_layers=2, num_heads=4, num_kv_heads=2).eval()
    idx, mask = _padded_prompt()
    caches = model.new_caches()

    def sync(self, *args):
        raise AssertionError("a host sync on the fast path")

    for method in ("__bool__", "item", "tolist", "__int__", "__float__"):
        monkeypatch.setattr(torch.Tensor, method, sync)
    with torch.no_grad(), _checks.checked():  # what generate() runs once its inputs are checked
        model(idx, caches, position_ids=_left_padded(mask, 5), key_padding_mask=mask)  # prefill
        mask = torch.cat([mask, torch.ones(2, 1, dtype=torch.bool)], dim=1)  # (2, 6)
        model(idx[:, -1:], caches, position_ids=_left_padded(mask, 1), key_padding_mask=mask)  # decode
    monkeypatch.undo()
    assert len(caches[0]) == 6


def _count_hooks(model):
    """Forward hooks on every block and attention layer; returns the dict of call counts."""
    counts = {"blocks": 0, "attn": 0}

    def hook(key):
        return lambda module, args, out: counts.__setitem__(key, counts[key] + 1)

    for block in model.blocks:
        block.register_forward_hook(hook("blocks"))
        block.attn.register_forward_hook(hook("attn"))
    return counts


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("use_cache", [True, False])
def test_hooks_fire_on_every_block_and_attention_layer(padded, use_cache):
    # TinyLM calls its blocks, and a block its attention layer, as modules (nn.Module.__call__),
    # so forward hooks (chapter 9) see every call: forward, generate, left-padded generate.
    torch.manual_seed(0)
    model = TinyLM(16, 32, d_model=16, num_layers=3, num_heads=4, num_kv_heads=2).eval()
    counts = _count_hooks(model)
    idx, mask = _padded_prompt()
    with torch.no_grad():
        model(idx, key_padding_mask=mask if padded else None)
    assert counts == {"blocks": 3, "attn": 3}
    model.generate(idx, 4, use_cache, key_padding_mask=mask if padded else None)
    assert counts == {"blocks": 3 + 4 * 3, "attn": 3 + 4 * 3}  # 4 steps x 3 blocks


def test_hooks_fire_on_the_layers_of_the_encoder_decoder():
    from attn.models import seq2seq

    torch.manual_seed(0)
    model = seq2seq.Seq2Seq(d_model=16, num_heads=2).eval()
    counts = {}
    for name in ("enc_attn", "dec_attn", "cross"):
        getattr(model, name).register_forward_hook(
            lambda module, args, out, name=name: counts.__setitem__(name, counts.get(name, 0) + 1))
    src, _ = seq2seq.date_batch(2, torch.Generator().manual_seed(0))
    model.generate(src)
    assert counts == {"enc_attn": 1, "dec_attn": seq2seq.TGT_LEN, "cross": seq2seq.TGT_LEN}
