"""Every bad input a student may give raises the documented error, naming the argument."""
import ast
import pathlib

import numpy as np
import pytest
import torch

import attn
import attn.functional as AF

ROOT = pathlib.Path(__file__).resolve().parents[2]

# The batch-first modules, each taking inputs of width d_in = 3 (T <= 8).
D_IN_3_MODULES = [
    pytest.param(lambda: attn.SelfAttentionV1(3, 2), id="SelfAttentionV1"),
    pytest.param(lambda: attn.SelfAttentionV2(3, 2), id="SelfAttentionV2"),
    pytest.param(lambda: attn.CausalAttention(3, 2, 8, 0.0), id="CausalAttention"),
    pytest.param(lambda: attn.MultiHeadAttentionWrapper(3, 2, 8, 0.0, 2), id="MultiHeadAttentionWrapper"),
    pytest.param(lambda: attn.MultiHeadAttention(3, 4, 8, 0.0, 2), id="MultiHeadAttention"),
]


def test_d_out_not_divisible_by_num_heads():
    with pytest.raises(ValueError, match=r"d_out.*num_heads.*d_out=10.*num_heads=3"):
        attn.MultiHeadAttention(4, 10, 8, 0.0, 3)
    with pytest.raises(ValueError, match=r"d_model.*heads"):
        attn.SeqFirstMultiHeadAttention(3, 10)
    with pytest.raises(ValueError, match=r"d_out.*num_heads"):
        attn.TransformerInputBlock(10, 10, 3)


@pytest.mark.parametrize(
    "make",
    [
        lambda: attn.CausalAttention(4, 2, 5, 0.0),
        lambda: attn.MultiHeadAttentionWrapper(4, 2, 5, 0.0, 2),
        lambda: attn.MultiHeadAttention(4, 4, 5, 0.0, 2),
        lambda: attn.MultiHeadAttention(4, 4, 5, 0.0, 2, causal=False),
    ],
)
def test_sequence_longer_than_context_length(make):
    m = make()
    with pytest.raises(ValueError, match=r"T=6.*context_length=5"):
        m(torch.randn(2, 6, 4))
    with pytest.raises(ValueError, match=r"T=6.*context_length=5"):
        m(torch.randn(6, 4), return_weights=True)


def test_sequence_longer_than_positional_table_or_block():
    with pytest.raises(ValueError, match=r"T=4.*context_length=3"):
        attn.PositionalEncoding(2, max_len=3)(torch.randn(1, 4, 2))
    with pytest.raises(ValueError, match=r"tokens.*T=9.*context_length=8"):
        attn.TransformerInputBlock(10, 4, 2, context_length=8)(torch.ones(1, 9, dtype=torch.long))


@pytest.mark.parametrize("make", D_IN_3_MODULES)
def test_last_dimension_not_d_in(make):
    m = make()
    with pytest.raises(ValueError, match=r"x.*d_in=3.*\(2, 5, 4\)"):
        m(torch.randn(2, 5, 4))
    with pytest.raises(ValueError, match=r"x must have shape \(T, d_in\) or \(B, T, d_in\)"):
        m(torch.randn(1, 2, 5, 3))
    with pytest.raises(TypeError, match=r"x must be a torch.Tensor, got list"):
        m([[0.1, 0.2, 0.3]])
    with pytest.raises(TypeError, match=r"x must be a floating-point tensor, got dtype torch.int64"):
        m(torch.ones(2, 3, dtype=torch.long))


@pytest.mark.parametrize("make", D_IN_3_MODULES)
def test_dtype_differs_from_the_weights(make):
    m = make()
    with pytest.raises(TypeError, match=r"x must have dtype torch.float32 like the module's weights, got torch.float64"):
        m(torch.randn(2, 5, 3, dtype=torch.float64))
    assert m.double()(torch.randn(2, 5, 3, dtype=torch.float64)).dtype == torch.float64
    seq = attn.SeqFirstMultiHeadAttention(2, 4)
    x = torch.randn(3, 2, 4, dtype=torch.float64)
    with pytest.raises(TypeError, match=r"query must have dtype torch.float32"):
        seq(x, x, x)


def test_last_dimension_not_d_model():
    with pytest.raises(ValueError, match=r"x.*d_model=4"):
        attn.PositionalEncoding(4)(torch.randn(2, 3, 5))
    seq = attn.SeqFirstMultiHeadAttention(2, 4)
    x = torch.randn(3, 2, 5)
    with pytest.raises(ValueError, match=r"query.*d_model=4"):
        seq(x, x, x)
    with pytest.raises(ValueError, match=r"x.*d_model=4"):
        seq.query(torch.randn(3, 5))
    good = torch.randn(3, 2, 4)
    with pytest.raises(ValueError, match=r"key and value"):
        seq(good, torch.randn(3, 1, 4), torch.randn(3, 1, 4))


def test_functional_shapes_and_types():
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)
    with pytest.raises(TypeError, match=r"q must be a torch.Tensor, got ndarray"):
        AF.scaled_dot_product_attention(np.ones((3, 4)), k, v)
    with pytest.raises(TypeError, match=r"v must be a floating-point tensor"):
        AF.scaled_dot_product_attention(q, k, v.long())
    with pytest.raises(ValueError, match=r"k must have last dimension d_k=4"):
        AF.scaled_dot_product_attention(q, torch.randn(2, 5, 3), v)
    with pytest.raises(ValueError, match=r"v must have T_k=5 rows"):
        AF.scaled_dot_product_attention(q, k, torch.randn(2, 4, 6))
    with pytest.raises(ValueError, match=r"q must have at least 2 dimensions"):
        AF.scaled_dot_product_attention(torch.randn(4), k, v)
    with pytest.raises(TypeError, match=r"is_causal must be a bool"):
        AF.scaled_dot_product_attention(q, k, v, is_causal=1)
    with pytest.raises(TypeError, match=r"scale must be a float"):
        AF.scaled_dot_product_attention(q, k, v, scale="0.5")
    with pytest.raises(TypeError, match=r"x must be a torch.Tensor"):
        AF.simplified_self_attention([[1.0, 2.0]])
    with pytest.raises(ValueError, match=r"x must have shape \(T, d\)"):
        AF.simplified_self_attention(torch.randn(3))


@pytest.mark.parametrize("return_weights", [False, True])
def test_mask_wrong_shape_or_dtype(return_weights):
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)
    call = lambda mask: AF.scaled_dot_product_attention(q, k, v, mask, return_weights=return_weights)
    with pytest.raises(ValueError, match=r"mask must broadcast to shape \(2, 3, 5\), got shape \(3, 3\)"):
        call(torch.ones(3, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"mask must broadcast to shape \(2, 3, 5\), got shape \(4, 3, 5\)"):
        call(torch.ones(4, 3, 5, dtype=torch.bool))
    with pytest.raises(TypeError, match=r"mask must be a torch.bool tensor.* or a floating-point tensor.*torch.int64"):
        call(torch.ones(3, 5, dtype=torch.long))  # a float mask is a bias (tests/attn/test_float_mask.py)
    with pytest.raises(TypeError, match=r"mask must be a torch.Tensor, got list"):
        call([[True] * 5] * 3)
    with pytest.raises(ValueError, match=r"mask must broadcast"):
        AF.attention_weights(q, k, torch.ones(5, 3, dtype=torch.bool))


def test_key_padding_mask_wrong_shape_or_dtype():
    mha = attn.MultiHeadAttention(4, 4, 8, 0.0, 2, causal=False)
    x = torch.randn(2, 5, 4)
    with pytest.raises(ValueError, match=r"key_padding_mask must have shape \(B, T\) = \(2, 5\), got shape \(5, 2\)"):
        mha(x, key_padding_mask=torch.ones(5, 2, dtype=torch.bool))
    with pytest.raises(TypeError, match=r"key_padding_mask must be a torch.bool tensor.*torch.int64"):
        mha(x, key_padding_mask=torch.ones(2, 5, dtype=torch.long))
    with pytest.raises(TypeError, match=r"key_padding_mask must be a torch.Tensor"):
        mha(x, key_padding_mask=[[True] * 5] * 2)
    block = attn.TransformerInputBlock(10, 4, 2)
    with pytest.raises(ValueError, match=r"key_padding_mask must have shape"):
        block(torch.ones(2, 5, dtype=torch.long), key_padding_mask=torch.ones(2, 4, dtype=torch.bool))


def test_einsum_mask_wrong_shape_or_dtype():
    seq = attn.SeqFirstMultiHeadAttention(2, 4)
    x = torch.randn(3, 2, 4)
    with pytest.raises(ValueError, match=r"mask must have shape \[seq_q, seq_k, batch\] = \[3, 3, 2\].*\[3, 3, 4\]"):
        seq(x, x, x, mask=torch.ones(3, 3, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"mask must have shape"):
        seq(x, x, x, mask=torch.ones(3, 3, dtype=torch.bool))
    with pytest.raises(TypeError, match=r"mask must be a torch.bool tensor"):
        seq(x, x, x, mask=torch.ones(3, 3, 1))


@pytest.mark.parametrize("p", [-0.1, 1.0, 1.5])
def test_dropout_outside_unit_interval(p):
    for make in (
        lambda: attn.CausalAttention(4, 2, 5, p),
        lambda: attn.MultiHeadAttentionWrapper(4, 2, 5, p, 2),
        lambda: attn.MultiHeadAttention(4, 4, 5, p, 2),
        lambda: attn.PositionalEncoding(4, dropout=p),
        lambda: attn.SeqFirstMultiHeadAttention(2, 4, dropout=p),
        lambda: attn.TransformerInputBlock(10, 4, 2, dropout=p),
    ):
        with pytest.raises(ValueError, match=rf"dropout must be in \[0, 1\), got {p}"):
            make()
    q = torch.randn(2, 3)
    with pytest.raises(ValueError, match=r"dropout_p must be in \[0, 1\)"):
        AF.scaled_dot_product_attention(q, q, q, dropout_p=p)


def test_dropout_not_a_number():
    with pytest.raises(TypeError, match=r"dropout must be a float in \[0, 1\), got str"):
        attn.MultiHeadAttention(4, 4, 5, "0.1", 2)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: attn.SelfAttentionV1(0, 2), "d_in"),
        (lambda: attn.SelfAttentionV2(3, 2.5), "d_out"),
        (lambda: attn.CausalAttention(3, 2, -1, 0.0), "context_length"),
        (lambda: attn.MultiHeadAttention(4, 4, 5, 0.0, 0), "num_heads"),
        (lambda: attn.MultiHeadAttentionWrapper(4, 4, 5, 0.0, "2"), "num_heads"),
        (lambda: attn.PositionalEncoding(True), "d_model"),
        (lambda: attn.TransformerInputBlock(0, 4, 2), "vocab_size"),
        (lambda: attn.PrepareForMultiHeadAttention(4, 2, 0, True), "d_k"),
        (lambda: AF.causal_mask(0), "T_q"),
        (lambda: AF.padding_mask([1], 0), "max_len"),
    ],
)
def test_sizes_must_be_positive_ints(call, name):
    with pytest.raises((TypeError, ValueError), match=rf"{name} must be"):
        call()


def test_bool_flags():
    with pytest.raises(TypeError, match=r"qkv_bias must be a bool, got str"):
        attn.SelfAttentionV2(3, 2, qkv_bias="no")
    with pytest.raises(TypeError, match=r"causal must be a bool"):
        attn.MultiHeadAttention(4, 4, 5, 0.0, 2, causal=None)
    with pytest.raises(TypeError, match=r"return_weights must be a bool"):
        attn.SelfAttentionV1(3, 2)(torch.randn(2, 3), return_weights="yes")


def test_padding_mask_lengths():
    with pytest.raises(ValueError, match=r"lengths must lie in \[0, max_len=3\], got \[4\]"):
        AF.padding_mask(torch.tensor([4]), 3)
    with pytest.raises(TypeError, match=r"lengths must hold integers"):
        AF.padding_mask(torch.tensor([1.0]), 3)
    with pytest.raises(TypeError, match=r"lengths must be a torch.Tensor or a list of int"):
        AF.padding_mask("12", 3)
    with pytest.raises(ValueError, match=r"lengths must have shape \(B,\)"):
        AF.padding_mask(torch.tensor([[1]]), 3)


def test_tokens_must_be_integer_ids_in_range():
    block = attn.TransformerInputBlock(10, 4, 2)
    with pytest.raises(TypeError, match=r"tokens must be an integer tensor"):
        block(torch.ones(1, 3))
    with pytest.raises(ValueError, match=r"tokens must lie in \[0, vocab_size=10\)"):
        block(torch.tensor([[1, 10]]))
    with pytest.raises(ValueError, match=r"tokens must have shape \(T,\) or \(B, T\)"):
        block(torch.ones(1, 1, 3, dtype=torch.long))
    with pytest.raises(TypeError, match=r"tokens must be a torch.Tensor"):
        block([1, 2])


def test_heatmap_checks():
    plot = pytest.importorskip("attn.viz.plot")
    with pytest.raises(ValueError, match=r"weights must have shape \(T_q, T_k\)"):
        plot.heatmap(torch.ones(2, 2, 2))
    with pytest.raises(ValueError, match=r"x_labels must have 3 entries, got 2"):
        plot.heatmap(torch.ones(2, 3), x_labels=["a", "b"])
    # wrong kinds of values are TypeErrors, wrong values ValueErrors
    with pytest.raises(TypeError, match=r"x_labels must be a list of str or None, got str"):
        plot.heatmap(torch.ones(2, 3), x_labels="abc")
    with pytest.raises(TypeError, match=r"annotate must be a bool"):
        plot.heatmap(torch.ones(2, 2), annotate="yes")
    with pytest.raises(TypeError, match=r"colorbar must be a bool"):
        plot.heatmap(torch.ones(2, 2), colorbar=1)
    with pytest.raises(TypeError, match=r"fmt must be a str"):
        plot.heatmap(torch.ones(2, 2), fmt=2)
    with pytest.raises(TypeError, match=r"vmax must be a float"):
        plot.heatmap(torch.ones(2, 2), vmax="1")
    with pytest.raises(TypeError, match=r"ncols must be an int, got float"):
        plot.heatmap_grid(torch.ones(2, 2, 2), ncols=2.0)
    with pytest.raises(ValueError, match=r"ncols must be a positive int, got 0"):
        plot.heatmap_grid(torch.ones(2, 2, 2), ncols=0)
    with pytest.raises(TypeError, match=r"titles must be a list of str or None"):
        plot.heatmap_grid(torch.ones(2, 2, 2), titles="ab")
    with pytest.raises(ValueError, match=r"titles must have 2 entries, got 1"):
        plot.heatmap_grid(torch.ones(2, 2, 2), titles=["a"])
    with pytest.raises(TypeError, match=r"positional argument"):
        plot.heatmap_grid(torch.ones(2, 2, 2), None, None, 2)  # ncols is keyword-only


def test_no_bare_assert_in_the_package():
    found = []
    for path in sorted((ROOT / "attn").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Assert):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, f"assert statements in attn/: {found}"
