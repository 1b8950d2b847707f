"""The public API keeps the contract the book is written against."""
import inspect
import pathlib
import re
import subprocess
import sys

import pytest
import torch

import attn
import attn.models.circuits
import attn.functional as AF
import attn.ops.linear
import attn.models.recall

ROOT = pathlib.Path(__file__).resolve().parents[2]

SIGNATURES = {
    AF.scaled_dot_product_attention: "(q, k, v, mask=None, *, is_causal=False, dropout_p=0.0, scale=None, return_weights=False)",
    AF.attention_weights: "(q, k, mask=None, *, is_causal=False, scale=None)",
    AF.causal_mask: "(T_q, T_k=None, *, align='top_left', device=None)",
    AF.padding_mask: "(lengths, max_len)",
    AF.simplified_self_attention: "(x, *, return_weights=False)",
    AF.masked_softmax: "(scores, mask=None, *, dim=-1)",
    AF.split_heads: "(x, num_heads)",
    AF.merge_heads: "(x)",
    attn.journey: "()",
    attn.SelfAttentionV1: "(d_in, d_out)",
    attn.SelfAttentionV2: "(d_in, d_out, qkv_bias=False)",
    attn.CausalAttention: "(d_in, d_out, context_length, dropout, qkv_bias=False)",
    attn.MultiHeadAttentionWrapper: "(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False)",
    attn.MultiHeadAttention: "(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False, *, causal=True, out_bias=True)",
    attn.PrepareForMultiHeadAttention: "(d_model, heads, d_k, bias)",
    attn.SeqFirstMultiHeadAttention: "(heads, d_model, dropout=0.0, bias=True, *, out_bias=True)",
    attn.PositionalEncoding: "(d_model, max_len=5000, dropout=0.1)",
    attn.TransformerInputBlock: "(vocab_size, d_model, num_heads, context_length=512, dropout=0.1, *, bias=False, causal=False)",
    attn.KVCache: "(capacity=None)",
    attn.GroupedQueryAttention: "(d_in, d_out, context_length, dropout, num_heads, num_kv_heads, qkv_bias=False, rope_base=None)",
    attn.mean_pool_kv_heads: "(module, num_kv_heads)",
    attn.kv_cache_bytes: "(num_layers, num_kv_heads, head_dim, seq_len, *, batch=1, bytes_per_element=2, window=None)",
    AF.tiled_attention: "(q, k, v, *, block_size=128, is_causal=False, scale=None, return_lse=False)",
    AF.merge_partial_attention: "(outputs, lses)",
    AF.sink_window_mask: "(T_q, window, num_sinks, T_k=None, *, device=None)",
    attn.PagedKVCache: "(num_blocks, block_size)",
    attn.MultiHeadLatentAttention: "(d_in, d_out, context_length, num_heads, kv_latent_dim, *, rope_head_dim=0, dropout=0.0)",
    attn.latent_cache_bytes: "(num_layers, kv_latent_dim, seq_len, *, rope_head_dim=0, batch=1, bytes_per_element=2)",
    attn.CrossAttention: "(d_in, d_context, d_out, num_heads, dropout=0.0, qkv_bias=False)",
    AF.previous_token_score: "(weights)",
    AF.induction_score: "(weights, period)",
    attn.models.circuits.AttentionOnly: "(vocab_size, context_length, d_model=64, num_layers=2, num_heads=2)",
    attn.models.circuits.repeated_tokens: "(batch_size, half, vocab_size, generator=None)",
    attn.models.circuits.train_induction: "(model, steps=600, batch_size=64, half=12, lr=0.01, seed=0, record=0)",
    attn.models.circuits.copy_accuracy: "(model, x, *, ablate=())",
    attn.layers.core.attend: "(m, x, *, cache=None, positions=None, mask=None, context=None, return_weights=False)",
    attn.layers.core.bottom_right_mask: "(T, P, device=None)",
    attn.ops.linear.linear_attention: "(q, k, v, *, form, chunk_size=64, initial_state=None, return_state=False)",
    attn.ops.linear.delta_rule: "(q, k, v, beta, *, form, chunk_size=64, initial_state=None, return_state=False)",
    attn.models.recall.mqar: "(batch_size, num_pairs, num_keys, num_values, generator=None)",
    attn.models.recall.RecallModel: "(vocab_size, kinds, d_model=32, d_head=8)",
    attn.models.recall.Mixer: "(kind, d_model, d_head)",
    attn.models.recall.train_recall: "(model, steps=100, batch_size=64, num_pairs=8, num_keys=32, num_values=32, lr=0.01, seed=0)",
    attn.ops.linear.gated_delta_rule: "(q, k, v, alpha, beta, *, form, chunk_size=64, initial_state=None, return_state=False)",
}
FORWARDS = {
    attn.SelfAttentionV1: "(x, *, return_weights=False)",
    attn.SelfAttentionV2: "(x, *, return_weights=False)",
    attn.CausalAttention: "(x, *, return_weights=False)",
    attn.MultiHeadAttentionWrapper: "(x, *, return_weights=False)",
    attn.MultiHeadAttention: "(x, *, key_padding_mask=None, return_weights=False, cache=None, positions=None, mask=None)",
    attn.SeqFirstMultiHeadAttention: "(query, key, value, mask=None, *, return_weights=False)",
    attn.TransformerInputBlock: "(tokens, key_padding_mask=None, *, return_weights=False)",
    attn.PositionalEncoding: "(x)",
    attn.GroupedQueryAttention: "(x, *, cache=None, positions=None, mask=None, return_weights=False)",
    attn.MultiHeadLatentAttention: "(x, *, cache=None, absorb=False, return_weights=False)",
    attn.CrossAttention: "(x, context, *, context_padding_mask=None, return_weights=False, cache=None)",
    attn.models.circuits.AttentionOnly: "(idx, *, return_weights=False, ablate=())",
}


@pytest.mark.parametrize("obj", list(SIGNATURES), ids=lambda o: o.__name__)
def test_signature(obj):
    assert str(inspect.signature(obj)) == SIGNATURES[obj]


@pytest.mark.parametrize("cls", list(FORWARDS), ids=lambda o: o.__name__)
def test_forward_signature(cls):
    assert str(inspect.signature(cls.forward)).replace("self, ", "") == FORWARDS[cls]


# A shape as the docstrings write it: ``(B, T, d_in)``, ``(..., T_q, d_k)``, ``[seq, batch, d_model]``;
# at least two axes, one of them a sequence, batch or width axis (not ``(float, optional)``).
_AXIS = r"(?:\.\.\.|[A-Za-z_]\w*(?: [*/+-]{1,2} \w+)*)"
_SHAPE = re.compile(rf"[(\[]{_AXIS}(?:, {_AXIS})+[)\]]")
_SEQ_AXIS = re.compile(r"(?<![\w.])(?:B|T(?:_\w+)?|d(?:_\w+)?|h(?:_\w+)?|seq(?:_\w+)?|batch|\.\.\.)(?!\w)")
NO_SHAPES = {attn.journey, attn.kv_cache_bytes, attn.latent_cache_bytes,  # they return sizes, not tensors
             attn.models.circuits.train_induction,  # it returns lists of losses
             attn.models.recall.train_recall}  # it returns an accuracy


def shapes(doc):
    """The tensor shapes a docstring states."""
    return [m.group(0) for m in _SHAPE.finditer(doc) if _SEQ_AXIS.search(m.group(0))]


def test_shapes_finds_shapes_only():
    assert shapes("x (torch.Tensor): ``(B, T, d_in)``; out ``[seq, batch, h * d_k]``") == [
        "(B, T, d_in)", "[seq, batch, h * d_k]"]
    assert not shapes("The model (T) reads the text (float, optional) (int) (torch.Tensor or int)")


@pytest.mark.parametrize("obj", list(SIGNATURES), ids=lambda o: o.__name__)
def test_docstrings_give_shapes(obj):
    doc = inspect.getdoc(obj) or ""
    assert len(doc) > 80
    if obj not in NO_SHAPES:
        assert shapes(doc), f"{obj.__name__} docstring states no shape such as (B, T, d_in)"
    if inspect.isclass(obj):
        params = inspect.signature(obj).parameters
        for name in params:  # every constructor argument is described
            assert name in doc, f"{obj.__name__} docstring lacks {name}"


def test_parameter_order():
    names = [n for n, _ in attn.MultiHeadAttention(4, 4, 5, 0.0, 2).named_parameters()]
    assert names == ["W_query.weight", "W_key.weight", "W_value.weight", "out_proj.weight", "out_proj.bias"]
    names = [n for n, _ in attn.MultiHeadAttention(4, 4, 5, 0.0, 2, qkv_bias=True).named_parameters()]
    assert names == ["W_query.weight", "W_query.bias", "W_key.weight", "W_key.bias",
                     "W_value.weight", "W_value.bias", "out_proj.weight", "out_proj.bias"]
    assert [n for n, _ in attn.SelfAttentionV1(2, 2).named_parameters()] == ["W_query", "W_key", "W_value"]
    assert isinstance(attn.MultiHeadAttentionWrapper(2, 2, 3, 0.0, 2).heads, torch.nn.ModuleList)


def test_import_needs_only_torch_and_runs_under_O():
    # one fresh interpreter, with -O (asserts stripped): the import works and the
    # package and its seeded modules run without matplotlib being loaded
    code = (
        "import sys, torch, attn; torch.manual_seed(123); "
        "m = attn.MultiHeadAttention(3, 2, 6, 0.0, 2); m(attn.journey()[1]); "
        "print(sys.flags.optimize, 'matplotlib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-O", "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "False"]


def test_heatmap_draws_keys_on_x_and_queries_on_y():
    plt = pytest.importorskip("matplotlib.pyplot")
    from attn.viz import plot

    tokens, inputs = attn.journey()
    _, w = AF.simplified_self_attention(inputs, return_weights=True)
    ax = plot.heatmap(w[:4, :], x_labels=tokens, y_labels=tokens[:4], title="$\\alpha$")
    assert [t.get_text() for t in ax.get_xticklabels()] == tokens
    assert [t.get_text() for t in ax.get_yticklabels()] == tokens[:4]
    assert len(ax.texts) == 24  # small matrix: every value written
    assert ax.texts[0].get_text() == format(w[0, 0].item(), ".2f")
    assert ax.get_title() == "$\\alpha$"
    assert ax.images[0].get_array().shape == (4, 6)
    fig = plot.heatmap_grid(torch.rand(3, 5, 5), ncols=2)
    assert len([a for a in fig.axes if a.images]) == 3
    assert [a.get_title() for a in fig.axes if a.images] == [
        "$\\mathrm{head}_{1}$", "$\\mathrm{head}_{2}$", "$\\mathrm{head}_{3}$"]
    # axes named by the indices of alpha_ij, one shared colour scale and colour bar
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("$j$", "$i$")
    panels = [a for a in fig.axes if a.images]
    assert len({a.images[0].get_clim() for a in panels}) == 1
    assert len(fig.axes) == len(panels) + 1 + 1  # 3 panels, the unused 4th, the colour bar
    plt.close("all")


def test_one_spelling_of_journey():
    # the book and the examples call attn.journey(), never attn.data.journey()
    places = sorted((ROOT / "docs" / "chapters").glob("*.md")) + sorted((ROOT / "examples").glob("*.py"))
    assert len(places) > 10
    found = [p.name for p in places if "attn.data.journey" in p.read_text(encoding="utf-8")]
    assert not found, f"attn.data.journey() instead of attn.journey() in {found}"


def test_every_public_module_is_on_the_api_page():
    # The API page gathers the docstrings module by module: a module left out has no
    # reference page in either language (attn.serving and attn.exercises were).
    import pkgutil

    # Every module of every folder, the exercises once (their chapter modules fill catalog()).
    public = {m.name for m in pkgutil.walk_packages(attn.__path__, "attn.")
              if not any(part.startswith("_") for part in m.name.split(".")) and not m.name.startswith("attn.exercises.")}
    listed = set(re.findall(r"^\.\. automodule:: (attn[\w.]*)$", (ROOT / "docs" / "api.rst").read_text(), re.M))
    assert len(public) > 30 and not public - listed, f"modules missing from docs/api.rst: {sorted(public - listed)}"


def test_every_package_folder_is_installed():
    # pyproject.toml lists the packages a wheel holds: a new folder missing there would import
    # from a clone (editable install) and be absent from `pip install .`.
    import tomllib

    root = pathlib.Path(attn.__file__).resolve().parent
    listed = set(tomllib.loads((root.parent / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {"attn." + p.parent.relative_to(root).as_posix().replace("/", ".") if p.parent != root else "attn"
               for p in root.rglob("__init__.py")}
    assert listed == folders, f"pyproject.toml lists {sorted(listed - folders)}, misses {sorted(folders - listed)}"
