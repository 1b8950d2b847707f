"""The numbers printed in the course notes (/work/shared/seeds) reproduce exactly.

Printed with 4 decimals, so every comparison allows the rounding: atol=5e-5, rtol=0.
"""
import torch
from torch.testing import assert_close

import attn
import attn.functional as AF

PRINTED = dict(atol=5e-5, rtol=0.0)  # the notes print 4 decimals


def seeded(seed, make):
    """``make()`` right after ``torch.manual_seed(seed)``, as the notes create each module."""
    torch.manual_seed(seed)
    return make()


def journey_batch():
    """The notes' batch of two copies of the running sentence, ``(2, 6, 3)``."""
    _, inputs = attn.journey()
    return torch.stack((inputs, inputs), dim=0)


def test_journey_data():
    tokens, inputs = attn.journey()
    assert tokens == ["Your", "journey", "starts", "with", "one", "step"]
    assert inputs.shape == (6, 3) and inputs.dtype == torch.float32
    assert_close(inputs[1], torch.tensor([0.55, 0.87, 0.66]), atol=0.0, rtol=0.0)  # exact copy
    inputs[0, 0] = 9.0  # a fresh tensor each call: mutating one does not leak
    assert attn.journey()[1][0, 0].item() != 9.0


def test_x2_step_by_step():
    _, inputs = attn.journey()
    torch.manual_seed(123)
    W_query = torch.nn.Parameter(torch.rand(3, 2), requires_grad=False)
    W_key = torch.nn.Parameter(torch.rand(3, 2), requires_grad=False)
    W_value = torch.nn.Parameter(torch.rand(3, 2), requires_grad=False)
    x_2 = inputs[1]
    query_2 = x_2 @ W_query
    keys = inputs @ W_key
    values = inputs @ W_value
    assert_close(query_2, torch.tensor([0.4306, 1.4551]), **PRINTED)
    assert_close(query_2.dot(keys[1]), torch.tensor(1.8524), **PRINTED)
    scores = query_2 @ keys.T
    assert_close(scores, torch.tensor([1.2705, 1.8524, 1.8111, 1.0795, 0.5577, 1.5440]), **PRINTED)
    weights = torch.softmax(scores / 2**0.5, dim=-1)
    assert_close(weights, torch.tensor([0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820]), **PRINTED)
    assert_close(weights @ values, torch.tensor([0.3061, 0.8210]), **PRINTED)
    # the same query row through the package's functional core (explicit path)
    _, w = AF.scaled_dot_product_attention(
        query_2[None], keys, values, return_weights=True
    )
    assert_close(w[0], weights, atol=1e-7, rtol=1e-6)  # float32, same arithmetic


V1_123 = torch.tensor(
    [[0.2996, 0.8053], [0.3061, 0.8210], [0.3058, 0.8203],
     [0.2948, 0.7939], [0.2927, 0.7891], [0.2990, 0.8040]]
)
V2_789 = torch.tensor(
    [[-0.0739, 0.0713], [-0.0748, 0.0703], [-0.0749, 0.0702],
     [-0.0760, 0.0685], [-0.0763, 0.0679], [-0.0754, 0.0693]]
)


def test_self_attention_v1_seed_123():
    _, inputs = attn.journey()
    out = seeded(123, lambda: attn.SelfAttentionV1(3, 2))(inputs)
    assert_close(out, V1_123, **PRINTED)
    assert out.grad_fn.name() == "MmBackward0"  # printed as grad_fn=<MmBackward0>


def test_self_attention_v2_seed_789_and_weight_copy():
    _, inputs = attn.journey()
    sa_v1 = seeded(123, lambda: attn.SelfAttentionV1(3, 2))
    sa_v2 = seeded(789, lambda: attn.SelfAttentionV2(3, 2))
    assert_close(sa_v2(inputs), V2_789, **PRINTED)
    sa_v1.W_query.data = sa_v2.W_query.weight.data.T.clone()
    sa_v1.W_key.data = sa_v2.W_key.weight.data.T.clone()
    sa_v1.W_value.data = sa_v2.W_value.weight.data.T.clone()
    assert_close(sa_v1(inputs), sa_v2(inputs), atol=1e-7, rtol=1e-6)  # float32, same maths
    assert_close(sa_v1(inputs), V2_789, **PRINTED)


WRAPPER_123 = torch.tensor(
    [[-0.4519, 0.2216, 0.4772, 0.1063], [-0.5874, 0.0058, 0.5891, 0.3257],
     [-0.6300, -0.0632, 0.6202, 0.3860], [-0.5675, -0.0843, 0.5478, 0.3589],
     [-0.5526, -0.0981, 0.5321, 0.3428], [-0.5299, -0.1081, 0.5077, 0.3493]]
)
MHA_123 = torch.tensor(
    [[0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593],
     [0.2693, 0.3873], [0.2639, 0.3928], [0.2575, 0.4028]]
)


def test_wrapper_seed_123():
    batch = journey_batch()
    mha = seeded(123, lambda: attn.MultiHeadAttentionWrapper(3, 2, batch.shape[1], 0.0, num_heads=2))
    out = mha(batch)
    assert out.shape == (2, 6, 4)
    assert_close(out, WRAPPER_123.expand(2, 6, 4), **PRINTED)
    out.sum().backward()  # every head's weights are on the graph of the concatenated output
    assert all(head.W_query.weight.grad.abs().sum() > 0 for head in mha.heads)


def test_multihead_seed_123_both_paths():
    batch = journey_batch()
    mha = seeded(123, lambda: attn.MultiHeadAttention(3, 2, batch.shape[1], 0.0, num_heads=2))
    out = mha(batch)
    assert out.shape == (2, 6, 2)
    assert_close(out, MHA_123.expand(2, 6, 2), **PRINTED)
    out.sum().backward()  # the output is differentiable in every projection
    assert all(w.weight.grad.abs().sum() > 0 for w in (mha.W_query, mha.W_key, mha.W_value, mha.out_proj))
    out_explicit, weights = mha(batch, return_weights=True)
    assert weights.shape == (2, 2, 6, 6)
    assert_close(out_explicit, MHA_123.expand(2, 6, 2), **PRINTED)


def test_head_batched_matmul_of_the_notes():
    a = torch.tensor([[[[0.2745, 0.6584, 0.2775, 0.8573],
                        [0.8993, 0.0390, 0.9268, 0.7388],
                        [0.7179, 0.7058, 0.9156, 0.4340]],
                       [[0.0772, 0.3565, 0.1479, 0.5331],
                        [0.4066, 0.2318, 0.4545, 0.9737],
                        [0.4606, 0.5159, 0.4220, 0.5786]]]])
    expected = torch.tensor([[[[1.3208, 1.1631, 1.2879], [1.1631, 2.2150, 1.8424], [1.2879, 1.8424, 2.0402]],
                              [[0.4391, 0.7003, 0.5903], [0.7003, 1.3737, 1.0620], [0.5903, 1.0620, 0.9912]]]])
    assert_close(a @ a.transpose(2, 3), expected, **PRINTED)


def test_positional_encoding_table():
    pe = attn.PositionalEncoding(d_model=64, dropout=0.0)
    assert pe.pe.shape == (5000, 64)
    expected = torch.tensor(
        [[0.0, 1.0, 0.0, 1.0, 0.0],
         [0.841, 0.54, 0.682, 0.732, 0.533],
         [0.909, -0.416, 0.997, 0.071, 0.902],
         [0.141, -0.99, 0.778, -0.628, 0.993],
         [-0.757, -0.654, 0.142, -0.99, 0.778]]
    )
    assert_close(pe.pe[:5, :5], expected, atol=5e-4, rtol=0.0)  # printed with 3 decimals
    assert not list(pe.parameters())  # a buffer, not trained


def test_parameter_counts_of_the_slides():
    mha = attn.MultiHeadAttention(64, 64, 10, 0.0, 8, qkv_bias=False, out_bias=False)
    assert sum(p.numel() for p in mha.parameters()) == 16_384
    block = attn.TransformerInputBlock(vocab_size=10_000, d_model=64, num_heads=8)
    assert sum(p.numel() for p in block.parameters()) == 656_384
    torch.manual_seed(42)
    tokens = torch.randint(1, 10_000, (3, 20))
    out, weights = block(tokens, return_weights=True)
    assert out.shape == (3, 20, 64) and weights.shape == (3, 8, 20, 20)


def test_simplified_self_attention_first_row():
    # the unscaled weight-free mechanism: z_i = sum_j softmax_j(x_i . x_j) x_j
    _, inputs = attn.journey()
    z, w = AF.simplified_self_attention(inputs, return_weights=True)
    manual = torch.softmax(inputs @ inputs[1], dim=0) @ inputs
    assert_close(z[1], manual, atol=1e-7, rtol=1e-6)  # float32
    assert_close(z[1], torch.tensor([0.4419, 0.6515, 0.5683]), **PRINTED)
    assert_close(w.sum(-1), torch.ones(6), atol=1e-6, rtol=0.0)  # float32
