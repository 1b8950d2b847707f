"""Fuzz of bad inputs over the public API: nothing but ``ValueError`` or ``TypeError``.

hypothesis draws, for every argument of every public function, constructor and
``forward``, a value of any kind: tensors of odd shapes (empty axes included) and
dtypes, numbers (negative, zero, NaN), strings, ``None``, lists.  Good inputs may
succeed; a bad one must be refused at the public boundary with a ``ValueError`` or a
``TypeError`` (the package's rule, ``attn/_checks.py``), never an ``IndexError``,
``RuntimeError``, ``ZeroDivisionError`` or a bare ``AssertionError`` from inside.

Not vacuous: a package that refused every input would pass the tests above, so each class's
constructor and ``forward`` (a cache's ``update``) must accept at least one drawn input.
A quarter of the draws take every argument good (``SIZES``, :func:`good_inputs`), and
the others draw each required argument either from the values above or good.
"""

import inspect

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import attn
import attn.models.circuits
import attn.functional as AF
import attn.models.two_relations
from attn.models.tiny_lm import TinyLM

FUNCTIONS = [
    AF.alibi_bias, AF.alibi_slopes, AF.attention_weights, AF.causal_mask, AF.masked_softmax,
    AF.merge_heads, AF.merge_partial_attention, AF.padding_mask, AF.scaled_dot_product_attention,
    AF.simplified_self_attention, AF.sink_window_mask, AF.sliding_window_mask, AF.split_heads,
    AF.tiled_attention, AF.previous_token_score, AF.induction_score, attn.kv_cache_bytes, attn.latent_cache_bytes, attn.mean_pool_kv_heads,
]
MODULES = [
    attn.SelfAttentionV1, attn.SelfAttentionV2, attn.CausalAttention, attn.MultiHeadAttentionWrapper,
    attn.MultiHeadAttention, attn.SeqFirstMultiHeadAttention, attn.PositionalEncoding,
    attn.TransformerInputBlock, attn.RotaryEmbedding, attn.GroupedQueryAttention,
    attn.MultiHeadLatentAttention, attn.PrepareForMultiHeadAttention, attn.CrossAttention,
    attn.models.seq2seq.Seq2Seq, attn.models.circuits.AttentionOnly, attn.models.circuits.AttentionLayer, TinyLM,
    attn.models.two_relations.TwoRelationNet, attn.KVCache, attn.PagedKVCache,
]
METHOD = {attn.KVCache: "update", attn.PagedKVCache: "update"}  # what a cache has instead of forward
SIZES = {"d_in": 2, "d_out": 2, "d_model": 2, "d": 2, "context_length": 3, "max_len": 3,
         "num_heads": 2, "heads": 2, "d_context": 2, "h": 2, "d_k": 1, "head_dim": 2, "d_head": 2, "dim": 2,
         "vocab_size": 3, "num_kv_heads": 1, "dropout": 0.0, "kv_latent_dim": 2, "bias": True,
         "num_blocks": 4, "block_size": 2}


def good_inputs(m):
    """Good arguments for the ``forward`` (or ``update``) of ``m``, built with ``SIZES``."""
    ids = torch.tensor([[0, 1, 2]])  # (B, T) = (1, 3), ids < vocab_size = 3
    seq_first = torch.randn(3, 1, 2)  # [seq, batch, d_model]
    kv = torch.randn(1, 2, 3, 2)  # (B, h_kv, T, d)
    return {"x": seq_first if isinstance(m, attn.PrepareForMultiHeadAttention) else torch.randn(1, 3, 2),
            "query": seq_first, "key": seq_first, "value": seq_first, "context": torch.randn(1, 2, 2),
            "tokens": ids, "idx": ids, "src": ids, "tgt_in": ids, "keep": torch.ones(2), "k": kv, "v": kv}

ALLOWED = (ValueError, TypeError)

shapes = st.lists(st.integers(0, 3), min_size=0, max_size=4)
dtypes = st.sampled_from([torch.float32, torch.float64, torch.float16, torch.int64, torch.bool])


@st.composite
def tensors(draw):
    shape, dtype = draw(shapes), draw(dtypes)
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    if dtype == torch.int64:
        return torch.randint(-2, 4, shape)
    return torch.randn(shape).to(dtype)


values = st.one_of(
    tensors(),
    st.integers(-2, 4),
    st.sampled_from([0.0, -1.0, 0.5, float("nan"), float("inf"), True, None, "x", "bottom_right", [1, 2], ()]),
)


def required(fn):
    params = inspect.signature(fn).parameters.values()
    return [p for p in params if p.default is inspect.Parameter.empty
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def optional(fn):
    params = inspect.signature(fn).parameters.values()
    # device and dtype go to torch as they are: torch's own errors, not the package's.
    return [p.name for p in params if p.default is not inspect.Parameter.empty
            and p.name not in ("device", "dtype")]


def call(fn, data, good=None):
    good = good or {}
    if good and data.draw(st.integers(0, 3), label="every argument good") == 0:
        return fn(**{p.name: good[p.name] for p in required(fn) if p.name in good})
    args = {p.name: good[p.name] if p.name in good and data.draw(st.booleans(), label=f"good {p.name}")
            else data.draw(values, label=p.name) for p in required(fn)}
    for name in optional(fn):
        if data.draw(st.booleans(), label=f"set {name}"):
            args[name] = data.draw(values, label=name)
    return fn(**args)


def check(fn, data, good=None):
    """Call ``fn`` on drawn arguments; True when it accepted them, False when it refused them."""
    try:
        call(fn, data, good)
    except ALLOWED:
        return False
    return True


fuzz = settings(max_examples=100, suppress_health_check=list(HealthCheck))


def fuzz_accepts(fn, good=None):
    """Run the fuzz on ``fn``; return the number of drawn inputs it accepted."""
    accepted = []

    @fuzz
    @given(data=st.data())
    def run(data):
        if check(fn, data, good):
            accepted.append(1)

    run()
    return len(accepted)


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
@fuzz
@given(data=st.data())
def test_functions_refuse_bad_input_with_value_or_type_error(fn, data):
    check(fn, data)


@pytest.mark.parametrize("cls", MODULES, ids=lambda c: c.__name__)
def test_modules_refuse_bad_arguments_with_value_or_type_error(cls):
    good = {p.name: SIZES[p.name] for p in required(cls) if p.name in SIZES}
    assert fuzz_accepts(cls, good) > 0, f"{cls.__name__} accepted none of the drawn arguments"


@pytest.mark.parametrize("cls", MODULES, ids=lambda c: c.__name__)
def test_module_forward_refuses_bad_input_with_value_or_type_error(cls):
    # A module built with small sizes (widths 2, two heads), then fed anything, good inputs among it.
    try:
        m = cls(**{p.name: SIZES[p.name] for p in required(cls) if p.name in SIZES})
    except ALLOWED:
        pytest.skip(f"{cls.__name__}: the fuzz's sizes do not fit its constructor")
    method = getattr(m, METHOD.get(cls, "forward"))
    assert fuzz_accepts(method, good_inputs(m)) > 0, f"{cls.__name__}.{method.__name__} accepted no drawn input"
