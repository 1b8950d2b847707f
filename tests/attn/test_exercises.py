"""The grader (attn.exercises): stubs fail, solutions pass, wrong answers readers write are refused.

Every exercise gets at least two wrong answers below, each a slip that readers really
make (a top-left mask, ``view`` without ``transpose``, ``repeat`` for
``repeat_interleave``, a softmax over the wrong axis...). No test is timed: the
inputs of every check are small (the whole catalogue, stubs and solutions, runs in a
few seconds of CPU).
"""
import math
import re
import string
import subprocess
import sys
import textwrap
from pathlib import Path

import polib
import pytest
import torch

import attn.exercises as E
from attn.exercises import _messages

ROOT = Path(__file__).resolve().parents[2]
IDS = [ex.id for ex in E.catalog()]

# Wrong answers, two or more per exercise: source text of a function named after it.
WRONG = {
    "ch01.soft_lookup": [
        "def soft_lookup(query, keys, values, beta=1.0):\n    return torch.softmax(keys @ query, 0) @ values",
        "def soft_lookup(query, keys, values, beta=1.0):\n"
        "    e = torch.exp(beta * (keys @ query))\n    return (e / e.sum()) @ values",
        "def soft_lookup(query, keys, values, beta=1.0):\n    return values.mean(0)",
    ],
    "ch01.hard_lookup": [
        "def hard_lookup(query, keys, values):\n    return (keys @ query).argmax()",
        "def hard_lookup(query, keys, values):\n    return values[(keys @ query).argmin()]",
    ],
    "ch02.scores": [
        "def scores(x):\n    return x.transpose(-2, -1) @ x",
        "def scores(x):\n    return x @ x.transpose(-2, -1) / x.shape[-1] ** 0.5",
    ],
    "ch02.simplified_attention": [
        "def simplified_attention(x):\n    w = torch.softmax(x @ x.transpose(-2, -1), dim=-2)\n    return w @ x, w",
        "def simplified_attention(x):\n    w = x @ x.transpose(-2, -1)\n    return w @ x, w",
        "def simplified_attention(x):\n    w = torch.softmax(x @ x.transpose(-2, -1), -1)\n    return w, w @ x",
    ],
    "ch03.attention": [
        "def attention(q, k, v):\n    w = torch.softmax(q @ k.transpose(-2, -1), -1)\n    return w @ v, w",
        "def attention(q, k, v):\n    w = torch.softmax(q @ k.transpose(-2, -1) / v.shape[-1] ** 0.5, -1)\n    return w @ v, w",
        "def attention(q, k, v):\n    w = torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, -2)\n    return w @ v, w",
    ],
    "ch03.self_attention": [
        "def self_attention(x, W_q, W_k, W_v):\n    q, k, v = x @ W_q, x @ W_k, x @ W_v\n"
        "    return torch.softmax(q @ k.transpose(-2, -1), -1) @ v",
        "def self_attention(x, W_q, W_k, W_v):\n    q, k, v = x @ W_k, x @ W_q, x @ W_v\n"
        "    return torch.softmax(q @ k.transpose(-2, -1) / k.shape[-1] ** 0.5, -1) @ v",
    ],
    "ch04.scaled_scores": [
        "def scaled_scores(q, k):\n    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-2])",
        "def scaled_scores(q, k):\n    return q @ k.transpose(-2, -1) / q.shape[-1]",
    ],
    "ch04.softmax": [
        "def softmax(x):\n    e = torch.exp(x)\n    return e / e.sum(-1, keepdim=True)",
        "def softmax(x):\n    e = torch.exp(x - x.min(-1, keepdim=True).values)\n    return e / e.sum(-1, keepdim=True)",
    ],
    "ch05.causal_mask": [
        "def causal_mask(T_q, T_k):\n    return torch.ones(T_q, T_k, dtype=torch.bool).tril()",
        "def causal_mask(T_q, T_k):\n    return torch.ones(T_q, T_k, dtype=torch.bool).triu(T_k - T_q + 1)",
        "def causal_mask(T_q, T_k):\n    return torch.ones(T_q, T_k).tril(T_k - T_q)",
    ],
    "ch05.padding_mask": [
        "def padding_mask(lengths, T):\n    return torch.arange(T)[None, :] <= lengths[:, None]",
        "def padding_mask(lengths, T):\n    return torch.arange(T)[None, :] >= T - lengths[:, None]",
    ],
    "ch06.split_heads": [
        "def split_heads(x, num_heads):\n    B, T, d = x.shape\n    return x.view(B, num_heads, T, d // num_heads)",
        "def split_heads(x, num_heads):\n    B, T, d = x.shape\n"
        "    return x.view(B, T, d // num_heads, num_heads).permute(0, 3, 1, 2)",
    ],
    "ch06.masked_softmax": [
        "def masked_softmax(scores, mask):\n    return torch.softmax(scores.masked_fill(~mask, float('-inf')), -1)",
        "def masked_softmax(scores, mask):\n    return torch.softmax(scores, -1) * mask",
        "def masked_softmax(scores, mask):\n    return torch.softmax(scores.masked_fill(~mask, -1e9), -1)",
    ],
    "ch07.seq_first_scores": [
        "def seq_first_scores(q, k):\n    return torch.einsum('ibhd,jbhd->ijbh', q, k)",
        "def seq_first_scores(q, k):\n    return torch.einsum('ibhd,jbhd->jibh', q, k) / math.sqrt(q.shape[-1])",
    ],
    "ch07.seq_first_attention": [
        "def seq_first_attention(q, k, v):\n    s = torch.einsum('ibhd,jbhd->ijbh', q, k) / math.sqrt(q.shape[-1])\n"
        "    return torch.einsum('ijbh,jbhd->ibhd', s.softmax(dim=0), v)",
        "def seq_first_attention(q, k, v):\n    s = torch.einsum('ibhd,jbhd->ijbh', q, k) / math.sqrt(q.shape[-1])\n"
        "    return torch.einsum('ijbh,jbhd->ibhd', s.softmax(dim=-1), v)",
    ],
    "ch08.sinusoidal": [
        "def sinusoidal(T, d):\n    pos = torch.arange(T)[:, None]\n    inv = 10000.0 ** (-torch.arange(0, d, 2) / d)\n"
        "    return torch.cat((torch.sin(pos * inv), torch.cos(pos * inv)), -1)",
        "def sinusoidal(T, d):\n    pos = torch.arange(T)[:, None]\n    inv = 10000.0 ** (-torch.arange(0, d, 2) / d)\n"
        "    pe = torch.zeros(T, d)\n    pe[:, 0::2] = torch.cos(pos * inv)\n    pe[:, 1::2] = torch.sin(pos * inv)\n"
        "    return pe",
    ],
    "ch08.inverse_permutation": [
        "def inverse_permutation(perm):\n    return perm",
        "def inverse_permutation(perm):\n    return perm.flip(0)",
    ],
    "ch09.attention_entropy": [
        "def attention_entropy(weights):\n    return -(weights * torch.log(weights)).sum(-1)",
        "def attention_entropy(weights):\n    return -(weights * torch.log2(weights)).nan_to_num(0.0).sum(-1)",
    ],
    "ch09.mean_distance": [
        "def mean_distance(weights):\n    pos = torch.arange(weights.shape[-1])\n"
        "    return (weights * (pos[:, None] - pos[None, :]).to(weights.dtype)).sum(-1)",
        "def mean_distance(weights):\n    pos = torch.arange(weights.shape[-1])\n"
        "    return (weights * (pos[:, None] - pos[None, :]).abs().to(weights.dtype)).mean(-1)",
    ],
    "ch10.causal_weights": [
        "def causal_weights(scores):\n    T = scores.shape[-1]\n"
        "    mask = torch.zeros(T, T).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float('-inf'))\n"
        "    return torch.softmax(scores + (1 - mask) * -1e9, -1)",
        "def causal_weights(scores):\n    return torch.softmax(scores, -1) * torch.ones_like(scores).tril()",
        "def causal_weights(scores):\n    T = scores.shape[-1]\n"
        "    return torch.softmax(scores + torch.ones(T, T).tril() * -1e9, -1)",
    ],
    "ch10.merge_heads": [
        "def merge_heads(x):\n    B, h, T, d = x.shape\n    return x.reshape(B, T, h * d)",
        "def merge_heads(x):\n    B, h, T, d = x.shape\n    return x.transpose(2, 3).reshape(B, T, h * d)",
    ],
    "ch11.layer_norm": [
        "def layer_norm(x, eps=1e-5):\n    return (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + eps)",
        "def layer_norm(x, eps=1e-5):\n    return (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True, unbiased=False) + eps)",
    ],
    "ch11.pre_norm_block": [
        "def pre_norm_block(x, attn, ffn):\n    ln = lambda z: torch.nn.functional.layer_norm(z, z.shape[-1:])\n"
        "    h = ln(x + attn(x))\n    return ln(h + ffn(h))",
        "def pre_norm_block(x, attn, ffn):\n    ln = lambda z: torch.nn.functional.layer_norm(z, z.shape[-1:])\n"
        "    return x + attn(ln(x)) + ffn(ln(x))",
    ],
    "ch12.attention_lse": [
        "def attention_lse(q, k, v):\n    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
        "    return torch.softmax(s, -1) @ v, s.amax(-1)",
        "def attention_lse(q, k, v):\n    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
        "    return torch.softmax(s, -1) @ v, torch.log(torch.exp(s).sum(-1))",
    ],
    "ch12.merge_partial": [
        "def merge_partial(o1, lse1, o2, lse2):\n    lse = lse1 + torch.log(1 + torch.exp(lse2 - lse1))\n"
        "    return torch.exp(lse1 - lse)[..., None] * o1 + torch.exp(lse2 - lse)[..., None] * o2, lse",
        "def merge_partial(o1, lse1, o2, lse2):\n    return (o1 + o2) / 2, torch.logaddexp(lse1, lse2)",
        "def merge_partial(o1, lse1, o2, lse2):\n    lse = torch.logaddexp(lse1, lse2)\n"
        "    return torch.exp(lse1 - lse)[..., None] * o1 + torch.exp(lse2 - lse)[..., None] * o2, lse1 + lse2",
    ],
    "ch13.decode_attention": [
        "def decode_attention(q, k, v):\n    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
        "    return torch.softmax(s, -1) @ v",
        "def decode_attention(q, k, v):\n    T_q, T_k = q.shape[-2], k.shape[-2]\n"
        "    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
        "    s = s.masked_fill(~torch.ones(T_q, T_k, dtype=torch.bool).tril(), float('-inf'))\n"
        "    return torch.softmax(s, -1) @ v",
    ],
    "ch13.kv_cache_bytes": [
        "def kv_cache_bytes(num_layers, num_kv_heads, head_dim, seq_len, batch=1, bytes_per_element=2):\n"
        "    return num_layers * num_kv_heads * head_dim * seq_len * batch * bytes_per_element",
        "def kv_cache_bytes(num_layers, num_kv_heads, head_dim, seq_len, batch=1, bytes_per_element=2):\n"
        "    return 2 * num_layers * num_kv_heads * head_dim * seq_len * bytes_per_element",
    ],
    "ch14.repeat_kv": [
        "def repeat_kv(k, n_rep):\n    return k.repeat(1, n_rep, 1, 1)",
        "def repeat_kv(k, n_rep):\n    return k.repeat_interleave(n_rep, dim=2)",
    ],
    "ch14.gqa_attention": [
        "def gqa_attention(q, k, v):\n    n = q.shape[1] // k.shape[1]\n    k, v = k.repeat(1, n, 1, 1), v.repeat(1, n, 1, 1)\n"
        "    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1) @ v",
        "def gqa_attention(q, k, v):\n    n = q.shape[1] // k.shape[1]\n"
        "    k, v = k.repeat_interleave(n, 1), v.repeat_interleave(n, 1)\n"
        "    return torch.softmax(q @ k.transpose(-2, -1), -1) @ v",
    ],
    "ch15.rope": [
        E.get("ch15.rope").stub.source,
        "def rope(x, positions, base=10000.0):\n    d = x.shape[-1]\n"
        "    inv = base ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)\n"
        "    a = positions[:, None].to(x.dtype) * inv\n    x1, x2 = x[..., 0::2], x[..., 1::2]\n"
        "    out = torch.stack((x1 * a.cos() - x2 * a.sin(), x1 * a.sin() + x2 * a.cos()), -1)\n"
        "    return out.flatten(-2)",
        "def rope(x, positions, base=10000.0):\n    d = x.shape[-1]\n"
        "    inv = base ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)\n"
        "    a = torch.arange(x.shape[-2])[:, None].to(x.dtype) * inv\n    e = torch.cat((a, a), -1)\n"
        "    r = torch.cat((-x[..., d // 2:], x[..., :d // 2]), -1)\n    return x * e.cos() + r * e.sin()",
    ],
    "ch15.sliding_window_mask": [
        "def sliding_window_mask(T_q, T_k, window):\n    p = torch.arange(T_q)[:, None] + T_k - T_q\n"
        "    j = torch.arange(T_k)[None, :]\n    return (j <= p) & (p - j <= window)",
        "def sliding_window_mask(T_q, T_k, window):\n    i = torch.arange(T_q)[:, None]\n"
        "    j = torch.arange(T_k)[None, :]\n    return (j <= i) & (i - j < window)",
        "def sliding_window_mask(T_q, T_k, window):\n    p = torch.arange(T_q)[:, None] + T_k - T_q\n"
        "    j = torch.arange(T_k)[None, :]\n    return (j <= p) & (p - j < window - 1)",
    ],
    "ch15.window_cache": [
        "def window_cache(cache_k, window, num_tokens):\n    return cache_k[:, -window:, :, :]",
        "def window_cache(cache_k, window, num_tokens):\n    return cache_k[:, -(window + num_tokens):, :, :]",
    ],
    "ch16.cross_attention": [
        "def cross_attention(x, memory, W_q, W_k, W_v):\n    q, k, v = memory @ W_k, x @ W_q, x @ W_q\n"
        "    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1) @ v",
        "def cross_attention(x, memory, W_q, W_k, W_v):\n    q, k, v = x @ W_q, memory @ W_k, memory @ W_v\n"
        "    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n    T_q, T_k = s.shape[-2:]\n"
        "    s = s.masked_fill(~torch.ones(T_q, T_k, dtype=torch.bool).tril(), float('-inf'))\n"
        "    return torch.softmax(s, -1) @ v",
    ],
    "ch16.cross_mask": [
        "def cross_mask(T_q, memory_lengths, T_k):\n"
        "    real = torch.arange(T_k)[None, :] < memory_lengths[:, None]\n"
        "    return real[:, None, :] & torch.ones(T_q, T_k, dtype=torch.bool).tril()",
        "def cross_mask(T_q, memory_lengths, T_k):\n"
        "    return (torch.arange(T_q)[None, :] < memory_lengths[:, None])[:, :, None].expand(-1, T_q, T_k)",
    ],
    "ch17.previous_token_score": [
        "def previous_token_score(weights):\n    return weights.diagonal(offset=1, dim1=-2, dim2=-1).mean(-1)",
        "def previous_token_score(weights):\n    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).sum(-1)",
    ],
    "ch17.induction_score": [
        "def induction_score(weights, period):\n    i = torch.arange(period, weights.shape[-1])\n"
        "    return weights[..., i, i - period].mean(-1)",
        "def induction_score(weights, period):\n    i = torch.arange(period - 1, weights.shape[-1])\n"
        "    return weights[..., i, i - period + 1].mean(-1)",
    ],
    "ch18.position_ids": [
        "def position_ids(mask):\n    B, T = mask.shape\n    return torch.arange(T).expand(B, T)",
        "def position_ids(mask):\n    return mask.long().cumsum(-1)",
    ],
    "ch18.sink_window_mask": [
        "def sink_window_mask(T_q, T_k, window, num_sinks):\n    p = torch.arange(T_q)[:, None] + T_k - T_q\n"
        "    j = torch.arange(T_k)[None, :]\n    return (j <= p) & (p - j < window)",
        "def sink_window_mask(T_q, T_k, window, num_sinks):\n    p = torch.arange(T_q)[:, None] + T_k - T_q\n"
        "    j = torch.arange(T_k)[None, :]\n    return (j <= p) & (p - j < window) | (j < num_sinks)",
    ],
    "ch19.absorbed_scores": [
        "def absorbed_scores(q, c, W_uk):\n    return (q @ W_uk) @ c.transpose(-2, -1)",
        "def absorbed_scores(q, c, W_uk):\n    return (q @ W_uk) @ c.transpose(-2, -1) / math.sqrt(c.shape[-1])",
    ],
    "ch19.latent_cache_bytes": [
        "def latent_cache_bytes(num_layers, kv_latent_dim, seq_len, rope_head_dim=0, batch=1, bytes_per_element=2):\n"
        "    return 2 * num_layers * (kv_latent_dim + rope_head_dim) * seq_len * batch * bytes_per_element",
        "def latent_cache_bytes(num_layers, kv_latent_dim, seq_len, rope_head_dim=0, batch=1, bytes_per_element=2):\n"
        "    return num_layers * kv_latent_dim * seq_len * batch * bytes_per_element",
    ],
    "ch20.tree_mask": [
        "def tree_mask(parents, num_cached=0):\n    N = len(parents)\n"
        "    return torch.cat((torch.ones(N, num_cached, dtype=torch.bool), torch.ones(N, N, dtype=torch.bool).tril()), 1)",
        "def tree_mask(parents, num_cached=0):\n    N = len(parents)\n    m = torch.eye(N, dtype=torch.bool)\n"
        "    for i in range(N):\n        if parents[i] >= 0:\n            m[i, parents[i]] = True\n"
        "    return torch.cat((torch.ones(N, num_cached, dtype=torch.bool), m), 1)",
    ],
    "ch20.tree_bias": [
        "def tree_bias(parents):\n    N = len(parents)\n    return torch.full((N, N), float('-inf')).triu(1)",
        "def tree_bias(parents):\n    N = len(parents)\n    m = torch.eye(N, dtype=torch.bool)\n"
        "    for i in range(N):\n        if parents[i] >= 0:\n            m[i] |= m[parents[i]]\n    return m",
    ],
    "ch20.tree_positions": [
        "def tree_positions(parents, num_cached=0):\n    return num_cached + torch.arange(len(parents))",
        "def tree_positions(parents, num_cached=0):\n    return (parents + 1).clamp(min=0) + num_cached",
    ],
    "ch21.linear_attention": [
        "def linear_attention(q, k, v):\n    return (q @ k.transpose(-2, -1)) @ v",
        "def linear_attention(q, k, v):\n    T = q.shape[-2]\n"
        "    return ((q @ k.transpose(-2, -1)) * torch.ones(T, T).tril(-1)) @ v",
    ],
    "ch21.chunked_gated_linear": [
        E.get("ch21.chunked_gated_linear").stub.source,
        "def chunked_gated_linear(q, k, v, alpha, chunk_size):\n    T = q.shape[-2]\n"
        "    return ((q @ k.transpose(-2, -1)) * torch.ones(T, T).tril()) @ v",
    ],
}


def compile_fn(source, name):
    namespace = {"torch": torch, "math": math}
    exec(source, namespace)
    return namespace[name]


def test_catalogue_size_and_order():
    cat = E.catalog()
    assert len(cat) >= 40
    assert sum(ex.kind == "bug_hunt" for ex in cat) >= 12
    chapters = [ex.chapter for ex in cat]
    assert chapters == sorted(chapters)
    for n in range(1, 22):
        assert chapters.count(n) >= 2, f"chapter {n} has {chapters.count(n)} exercises"


def test_core_ids_and_signatures():
    core = {
        "ch03.attention": ("q", "k", "v"), "ch05.causal_mask": ("T_q", "T_k"),
        "ch05.padding_mask": ("lengths", "T"), "ch06.split_heads": ("x", "num_heads"),
        "ch12.merge_partial": ("o1", "lse1", "o2", "lse2"), "ch14.repeat_kv": ("k", "n_rep"),
        "ch15.rope": ("x", "positions", "base"), "ch15.sliding_window_mask": ("T_q", "T_k", "window"),
        "ch18.position_ids": ("mask",),
    }
    for id_, args in core.items():
        assert E.get(id_).arg_names == args


@pytest.mark.parametrize("id_", IDS)
def test_fields(id_):
    ex = E.get(id_)
    assert re.fullmatch(r"ch\d\d\.[a-z_0-9]+", ex.id) and ex.chapter == int(ex.id[2:4])
    assert ex.kind in ("write", "bug_hunt") and callable(ex.stub) and callable(ex.solution)
    assert ex.stub.__name__ == ex.solution.__name__ == ex.name
    if ex.kind == "bug_hunt":
        assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+/(issues|pull)/\d+", ex.source)
    else:
        assert ex.source is None


@pytest.mark.parametrize("id_", IDS)
def test_stub_fails_and_solution_passes(id_, capsys):
    ex = E.get(id_)
    good = E.check(id_, ex.solution)
    assert good.passed, good.message
    assert capsys.readouterr().out.strip() == good.message == f"✓ {id_} {good.checks}/{good.checks}"
    for lang in ("en", "es"):
        bad = E.check(id_, ex.stub, lang=lang, quiet=True)
        assert not bad.passed and bad.message.startswith(f"✗ {id_}:")


@pytest.mark.parametrize("id_", IDS)
def test_wrong_answers_are_refused(id_):
    wrong = WRONG[id_]
    assert len(wrong) >= 2
    name = E.get(id_).name
    for source in wrong:
        verdict = E.check(id_, compile_fn(source, name), quiet=True)
        assert not verdict.passed, f"{id_} accepted:\n{source}"


def test_every_exercise_has_wrong_answers():
    assert set(WRONG) == set(IDS)


def test_correct_answers_written_differently_pass():
    others = {
        "ch05.causal_mask": "def causal_mask(T_q, T_k):\n"
                            "    return torch.ones(T_q, T_k, dtype=torch.bool).tril(diagonal=T_k - T_q)",
        "ch03.attention": "def attention(q, k, v):\n"
                          "    w = torch.einsum('...id,...jd->...ij', q, k).div(q.shape[-1] ** 0.5).softmax(-1)\n"
                          "    return torch.einsum('...ij,...jd->...id', w, v), w",
        "ch06.split_heads": "def split_heads(x, num_heads):\n    return x.unflatten(-1, (num_heads, -1)).permute(0, 2, 1, 3)",
        "ch14.repeat_kv": "def repeat_kv(k, n_rep):\n    B, h, T, d = k.shape\n"
                          "    return k[:, :, None].expand(B, h, n_rep, T, d).reshape(B, h * n_rep, T, d)",
        "ch18.position_ids": "def position_ids(mask):\n    return (mask.long().cumsum(-1) - 1).clamp(min=0)",
        "ch12.merge_partial": "def merge_partial(o1, lse1, o2, lse2):\n    m = torch.maximum(lse1, lse2)\n"
                              "    w1, w2 = torch.exp(lse1 - m), torch.exp(lse2 - m)\n"
                              "    return (w1[..., None] * o1 + w2[..., None] * o2) / (w1 + w2)[..., None], m + torch.log(w1 + w2)",
    }
    for id_, source in others.items():
        assert E.check(id_, compile_fn(source, E.get(id_).name), quiet=True).passed, id_


def test_messages_say_what_differs():
    top_left = compile_fn(WRONG["ch05.causal_mask"][0], "causal_mask")
    text = E.check("ch05.causal_mask", top_left, quiet=True).message
    assert "causal_mask(T_q=3, T_k=7)" in text and "row 0 (query at position 4)" in text
    assert "keys 1, 2, 3, 4" in text.replace("key(s)", "keys") and "all 7 keys" in text
    es = E.check("ch05.causal_mask", top_left, lang="es", quiet=True).message
    assert "la fila 0 (consulta en la posición 4)" in es and "las 7 claves" in es
    view = E.check("ch06.split_heads", E.get("ch06.split_heads").stub, quiet=True).message
    assert "view(B, T, h, d_head).transpose(1, 2)" in view
    tile = E.check("ch14.repeat_kv", E.get("ch14.repeat_kv").stub, quiet=True).message
    assert "repeat_interleave" in tile and "n_rep=2" in tile


def test_spanish_numbers_use_a_decimal_comma():
    text = E.check("ch10.causal_weights", E.get("ch10.causal_weights").stub, lang="es", quiet=True).message
    assert re.search(r"\d,\d", text) and not re.search(r"\d\.\d", text.split("\n", 1)[1]), text


def test_raising_candidate_fails_naming_the_exception():
    def boom(T_q, T_k):
        raise ZeroDivisionError("x / 0")
    verdict = E.check("ch05.causal_mask", boom, quiet=True)
    assert not verdict.passed and "ZeroDivisionError: x / 0" in verdict.message
    assert "ZeroDivisionError" in E.check("ch05.causal_mask", boom, lang="es", quiet=True).message


def test_mutating_candidate_fails():
    def in_place(scores, mask):
        return torch.softmax(scores.masked_fill_(~mask, float("-inf")), -1).nan_to_num(0.0)
    assert "in place" in E.check("ch06.masked_softmax", in_place, quiet=True).message


def test_unknown_id_names_the_nearest():
    with pytest.raises(ValueError, match="ch05.causal_mask"):
        E.check("ch05.causl_mask", lambda T_q, T_k: None)
    with pytest.raises(ValueError, match="nearest"):
        E.check("ch99.nothing", lambda: None)


def test_non_callable_candidate():
    with pytest.raises(TypeError, match="callable"):
        E.check("ch05.causal_mask", torch.ones(3, 3))


def test_language():
    with pytest.raises(ValueError, match="lang"):
        E.check("ch05.causal_mask", E.get("ch05.causal_mask").stub, lang="fr")
    try:
        E.set_language("es")
        assert "falla" in E.check("ch05.causal_mask", E.get("ch05.causal_mask").stub, quiet=True).message
    finally:
        E._language = None
    assert E.get_language() == "en"


def test_messages_exist_in_both_languages_with_the_same_fields():
    fields = lambda s: sorted(f for _, f, _, _ in string.Formatter().parse(s) if f)  # noqa: E731
    for key, texts in _messages.MESSAGES.items():
        assert set(texts) == {"en", "es"}, key
        assert fields(texts["en"]) == fields(texts["es"]), key
        assert texts["es"] and texts["en"]
    for ex in E.catalog():
        assert set(ex.titles) == {"en", "es"} and all(ex.titles.values())
        assert ex.titles["en"] != ex.titles["es"], ex.id


def test_every_message_is_used():
    source = "\n".join(p.read_text() for p in (ROOT / "attn" / "exercises").glob("*.py"))
    for key in _messages.MESSAGES:
        assert f'"{key}"' in source.replace(f'    "{key}": {{', ""), key


def test_case_descriptions_are_language_neutral():
    # A case is shown as the call, the same in both languages: no English words in it.
    words = {"the", "of", "with", "and", "rows", "row", "all", "one", "hidden", "large", "in", "is", "no"}
    for ex in E.catalog():
        for case in ex.cases():
            assert not words & set(re.findall(r"\b[a-z]+\b", case.call)), (ex.id, case.call)


def run_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "attn.exercises", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def test_cli_list_in_both_languages():
    en, es = run_cli("--list"), run_cli("--list", "--lang", "es")
    assert en.returncode == es.returncode == 0
    for ex in E.catalog():
        assert ex.id in en.stdout and ex.titles["en"] in en.stdout and ex.titles["es"] in es.stdout
    assert "capítulo" in es.stdout


def test_cli_check(tmp_path):
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text("import torch\n\n" + E.get("ch05.causal_mask").solution.source)
    bad.write_text("import torch\n\n" + E.get("ch05.causal_mask").stub.source)
    ok = run_cli("check", "ch05.causal_mask", str(good))
    assert ok.returncode == 0 and ok.stdout.startswith("✓ ch05.causal_mask")
    ko = run_cli("check", "ch05.causal_mask", str(bad), "--lang", "es")
    assert ko.returncode == 1 and "falla la comprobación" in ko.stdout
    missing = tmp_path / "other.py"
    missing.write_text("def something():\n    pass\n")
    assert "causal_mask" in run_cli("check", "ch05.causal_mask", str(missing)).stderr
    assert "nearest" in run_cli("check", "ch05.causl_mask", str(good)).stderr
    # With --lang es the command line's own errors are Spanish too.
    assert "no define ninguna función llamada 'causal_mask'" in run_cli(
        "check", "ch05.causal_mask", str(missing), "--lang", "es").stderr
    assert "los más parecidos: ch05.causal_mask" in run_cli(
        "check", "ch05.causl_mask", str(good), "--lang", "es").stderr
    assert "no existe el archivo" in run_cli("check", "ch05.causal_mask", str(tmp_path / "nada.py"), "--lang", "es").stderr


def test_cli_help_in_both_languages():
    # argparse's own headings have no Spanish: the command line gives its own.
    for args in (("--help",), ("check", "--help")):
        en, es = run_cli(*args).stdout, run_cli(*args, "--lang", "es").stdout
        assert en.startswith("usage: ") and "options:" in en and "show this help message" in en
        assert es.startswith("uso: ") and "opciones:" in es and "muestra esta ayuda" in es, es
        assert not re.search(r"\b(usage|options|positional arguments|show this help)\b", es), es
    assert "Comprueba tu código" in run_cli("--help", "--lang", "es").stdout


@pytest.mark.parametrize("args, en, es", [
    (("chek",), "argument {check}: invalid choice: 'chek' (choose from 'check')",
     "argumento {check}: valor no válido: 'chek' (elige entre 'check')"),
    (("check",), "the following arguments are required: id, file", "faltan argumentos obligatorios: id, file"),
    (("check", "ch05.causal_mask"), "the following arguments are required: file", "faltan argumentos obligatorios: file"),
    (("--bogus",), "unrecognized arguments: --bogus", "argumentos no reconocidos: --bogus"),
    (("--list", "--lang"), "argument --lang: expected one argument", "argumento --lang: necesita un valor"),
    (("--list", "--lang=es", "--list=1"), "argument --list: ignored explicit argument '1'",
     "argumento --list: no admite ningún valor ('1')"),
])
def test_cli_argparse_errors_in_both_languages(args, en, es):
    # argparse writes its own error lines in English; with --lang es (or --lang=es) they are Spanish,
    # exit code and usage line as argparse gives them, the values quoted as typed.
    english = run_cli(*[a for a in args if a != "--lang=es"])
    spanish = run_cli(*args, "--lang", "es") if "--lang" not in args and "--lang=es" not in args else run_cli(*args)
    assert english.returncode == 2 and english.stderr.rstrip().endswith(f"error: {en}"), english.stderr
    if "--lang" in args:  # "--lang" with no value: the language is not known, the line stays English
        assert spanish.stderr.rstrip().endswith(f"error: {en}"), spanish.stderr
        return
    assert spanish.returncode == 2 and spanish.stderr.rstrip().endswith(f"error: {es}"), spanish.stderr
    assert spanish.stderr.startswith("uso: "), spanish.stderr


def test_import_attn_does_not_load_the_exercises():
    code = "import sys, attn; print('attn.exercises' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "False"


def test_stub_sources_are_short_and_symbolic():
    for ex in E.catalog():
        for fn in (ex.stub, ex.solution):
            assert len(fn.source.splitlines()) <= 25, ex.id
            assert textwrap.dedent(fn.source) == fn.source


# -- the book's pages (read as text, no build) ------------------------------------------------

DOCS = ROOT / "docs"
CELL = re.compile(r"^```\{code-cell\} ipython3\n(?::tags: \[([^\]]*)\]\n)?\n?(.*?)^```", re.S | re.M)


def chapter_page(n):
    return next((DOCS / "chapters").glob(f"{n:02d}_*.md"))


@pytest.mark.parametrize("n", sorted({ex.chapter for ex in E.catalog()}))
def test_chapter_page_shows_stub_check_and_solution(n):
    text = chapter_page(n).read_text(encoding="utf-8")
    section = text[text.index("## Exercises"):text.index("## See also")]
    cells = [(tags or "", src) for tags, src in CELL.findall(section)]
    for ex in [ex for ex in E.catalog() if ex.chapter == n]:
        assert re.search(rf"^```{{admonition}} Exercise {n}\.\d+: {re.escape(ex.title)}$", section, re.M), ex.id
        call = f'check("{ex.id}", {ex.name})'
        skipped = [src for tags, src in cells if "skip-execution" in tags]
        assert any(src.endswith(ex.stub.source) for src in skipped), f"{ex.id}: the stub cell is not the package's stub"
        assert any(src.strip().endswith(call) and "import check" in src for src in skipped), f"{ex.id}: no check cell"
        shown = [src for tags, src in cells if "hide-cell" in tags]
        assert any(ex.solution.source in src and src.strip().endswith(call) for src in shown), f"{ex.id}: solution"
        if ex.kind == "bug_hunt":
            assert ex.source in section, f"{ex.id}: the page does not cite {ex.source}"
    # A hidden cell asserts, at build time, that every stub fails and every solution passes.
    assert any("remove-cell" in tags and f"ex.chapter == {n}" in src and "not check(ex.id, ex.stub" in src
               for tags, src in cells)


def test_exercises_page_lists_every_exercise_in_both_languages():
    text = (DOCS / "exercises.md").read_text(encoding="utf-8")
    po = polib.pofile(str(ROOT / "locale" / "es" / "LC_MESSAGES" / "exercises.po"))
    spanish = {e.msgid: e.msgstr for e in po if e.msgstr and not e.fuzzy}
    for ex in E.catalog():
        line = next(l for l in text.splitlines() if l.startswith(f"* `{ex.id}`: "))
        assert ex.titles["en"] in line, ex.id
        msgid = line[2:]
        assert msgid in spanish and ex.titles["es"] in spanish[msgid], f"{ex.id}: {spanish.get(msgid)!r}"
        if ex.kind == "bug_hunt":
            assert ex.source in line
    assert "exercises" in (DOCS / "index.md").read_text(encoding="utf-8")



def test_the_references_agree_with_independent_formulas():
    # The grader's references: chapter 8's table is the package's sinusoidal table, and
    # chapter 12's merge of two partial attentions is attention over all the keys.
    from attn.exercises import ch08, ch12
    from attn.layers.positional import sinusoidal_table
    from attn.ops.tiled import merge_partial_attention

    torch.testing.assert_close(ch08._sin_ref(7, 6).float(), sinusoidal_table(7, 6), atol=1e-6, rtol=0)
    g = torch.Generator().manual_seed(0)
    q, k, v = (100 * torch.randn(2, 3, 4, generator=g, dtype=torch.float64),
               torch.randn(2, 9, 4, generator=g, dtype=torch.float64), torch.randn(2, 9, 5, generator=g, dtype=torch.float64))
    parts = [ch12._with_lse(q, k[:, s], v[:, s]) for s in (slice(0, 4), slice(4, 9))]
    o, lse = merge_partial_attention([p[0] for p in parts], [p[1] for p in parts])
    want_o, want_lse = ch12._with_lse(q, k, v)
    torch.testing.assert_close(o, want_o, atol=1e-10, rtol=1e-10)
    torch.testing.assert_close(lse, want_lse, atol=1e-10, rtol=1e-10)
