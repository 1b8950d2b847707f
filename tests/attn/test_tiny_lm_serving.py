"""attn.models.tiny_lm for serving: left-padded batches with position ids, attention weights,
and StreamingLLM's eviction (sinks + window).

Tolerances: logits of the same computation in float64, atol=1e-10, rtol=1e-8; where
RoPE rotates by other angles (the tables are float32, so a shifted position is not
exactly a relative rotation), float64 logits agree to atol=1e-6; keys rotated back by
the eviction, float64 with float32 tables, atol=1e-6.
"""
import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

import attn
from attn.models.tiny_lm import TinyLM, streaming_loss

TOL64 = dict(atol=1e-10, rtol=1e-8)
TABLES = dict(atol=1e-6, rtol=1e-6)


def _model(learned=False, seed=0, num_kv_heads=None):
    torch.manual_seed(seed)
    return TinyLM(11, 32, d_model=16, num_layers=2, num_heads=4, num_kv_heads=num_kv_heads,
                  rope_base=None if learned else 10000.0, learned_positions=learned).double().eval()


def _left_padded(lengths, seed=1):
    g = torch.Generator().manual_seed(seed)
    prompts = [torch.randint(0, 11, (n,), generator=g) for n in lengths]
    T = max(lengths)
    idx = torch.stack([F.pad(p, (T - len(p), 0)) for p in prompts])  # (B, T), padding id 0 on the left
    mask = torch.stack([torch.arange(T) >= T - len(p) for p in prompts])  # (B, T), True = real token
    pos = (mask.long().cumsum(-1) - 1).clamp(min=0)  # (B, T): 0 at the first real token
    return prompts, idx, mask, pos


@pytest.mark.parametrize("learned", [False, True])
@pytest.mark.parametrize("use_cache", [True, False])
def test_left_padded_batch_generates_what_each_prompt_generates_alone(learned, use_cache):
    m = _model(learned, num_kv_heads=2)
    prompts, idx, mask, _ = _left_padded([3, 7, 5])
    out = m.generate(idx, 12, use_cache=use_cache, key_padding_mask=mask)
    for b, p in enumerate(prompts):
        alone = m.generate(p[None], 12)
        assert torch.equal(out[b, 7:], alone[0, len(p):])


@pytest.mark.parametrize("learned", [False, True])
def test_padded_logits_equal_the_unpadded_ones_with_mask_and_position_ids(learned):
    m = _model(learned)
    prompts, idx, mask, pos = _left_padded([3, 7, 5])
    with torch.no_grad():
        padded = m(idx, key_padding_mask=mask, position_ids=pos)  # (3, 7, 11)
        for b, p in enumerate(prompts):
            assert_close(padded[b, 7 - len(p):], m(p[None])[0], **TOL64)


def test_without_the_mask_the_padding_changes_the_logits():
    for learned in (False, True):
        m = _model(learned)
        prompts, idx, mask, pos = _left_padded([3, 7])
        with torch.no_grad():
            wrong, alone = m(idx, position_ids=pos)[0, 4:], m(prompts[0][None])[0]
        assert (wrong - alone).abs().max() > 1e-2


def test_without_position_ids_absolute_positions_are_wrong_and_rope_only_rounds():
    prompts, idx, mask, _ = _left_padded([3, 7])
    for learned, differs in ((True, True), (False, False)):
        m = _model(learned)
        with torch.no_grad():
            shifted, alone = m(idx, key_padding_mask=mask)[0, 4:], m(prompts[0][None])[0]
        if differs:  # learned positions: the real tokens sit at positions 4 .. 6, not 0 .. 2
            assert (shifted - alone).abs().max() > 1e-2
        else:  # RoPE scores depend on p_q - p_k only: the same up to the float32 tables
            assert_close(shifted, alone, **TABLES)


def test_padded_prefill_then_cached_decode_equals_the_whole_padded_pass():
    m = _model(True)
    _, idx, mask, pos = _left_padded([2, 6, 4])
    nxt = torch.randint(0, 11, (3, 3), generator=torch.Generator().manual_seed(9))
    full_idx = torch.cat([idx, nxt], 1)  # (3, 9)
    full_mask = F.pad(mask, (0, 3), value=True)
    full_pos = (full_mask.long().cumsum(-1) - 1).clamp(min=0)
    caches = m.new_caches()
    with torch.no_grad():
        whole = m(full_idx, key_padding_mask=full_mask, position_ids=full_pos)
        first = m(idx, caches, key_padding_mask=mask, position_ids=pos)
        rest = [m(nxt[:, t:t + 1], caches, key_padding_mask=full_mask[:, :7 + t],
                  position_ids=full_pos[:, 6 + t:7 + t]) for t in range(3)]
    assert_close(torch.cat([first, *rest], 1), whole, **TOL64)


def test_position_ids_alone_keep_the_causal_mask():
    m = _model()
    idx = torch.randint(0, 11, (2, 9), generator=torch.Generator().manual_seed(3))
    pos = torch.arange(9).expand(2, 9)
    with torch.no_grad():
        assert_close(m(idx, position_ids=pos), m(idx), **TOL64)
        caches = m.new_caches()
        m(idx[:, :4], caches)
        assert_close(m(idx[:, 4:], caches, position_ids=pos[:, 4:]), m(idx)[:, 4:], **TOL64)


@pytest.mark.parametrize("num_kv_heads", [None, 2])
def test_return_weights_are_each_blocks_attention(num_kv_heads):
    m = _model(num_kv_heads=num_kv_heads)
    idx = torch.randint(0, 11, (2, 9), generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        logits, weights = m(idx, return_weights=True)
        assert_close(logits, m(idx), **TOL64)
        x = m.tok_emb(idx)
        _, att0 = m.blocks[0].attn(m.blocks[0].ln1(x), return_weights=True)
    assert len(weights) == 2 and weights[1].shape == (2, 4, 9, 9)
    assert_close(weights[0], att0, **TOL64)
    assert_close(weights[1].sum(-1), torch.ones(2, 4, 9, dtype=torch.float64), **TOL64)
    assert (weights[1].triu(1) == 0).all()


def test_eviction_renumbers_the_kept_keys_as_positions_within_the_cache():
    m = _model()
    x = torch.randint(0, 11, (2, 20), generator=torch.Generator().manual_seed(5))
    caches = m.new_caches()
    with torch.no_grad():
        m(x, caches)
        assert m.evict_caches(caches, 8, num_sinks=3) == 12
        kept = torch.cat([x[:, :3], x[:, 15:]], 1)  # (2, 8): the sinks, then the window
        fresh = m.new_caches()
        m(kept, fresh)  # positions 0 .. 7
    assert [len(c) for c in caches] == [8, 8]
    # the first layer's keys depend on their own token and position only
    assert_close(caches[0].k, fresh[0].k, **TABLES)
    assert_close(caches[0].v, fresh[0].v, **TOL64)
    assert m.evict_caches(caches, 8, num_sinks=3) == 0


def test_streaming_loss_without_eviction_is_the_causal_loss():
    m = _model()
    x = torch.randint(0, 11, (3, 25), generator=torch.Generator().manual_seed(6))
    with torch.no_grad():
        logits = m(x[:, :-1])  # (3, 24, 11)
    ref = F.cross_entropy(logits.transpose(1, 2), x[:, 1:], reduction="none")  # (3, 24)
    assert_close(streaming_loss(m, x, 32), ref, **TOL64)
    assert_close(streaming_loss(m, x, 24, num_sinks=4), ref, **TOL64)


def test_streaming_loss_with_a_window_reads_past_the_context_length():
    m = _model()
    x = torch.randint(0, 11, (2, 80), generator=torch.Generator().manual_seed(7))  # 80 > 32
    window, sinks = streaming_loss(m, x, 16), streaming_loss(m, x, 16, num_sinks=4)
    assert window.shape == sinks.shape == (2, 79)
    assert_close(window[:, :15], sinks[:, :15], **TOL64)  # nothing evicted yet
    assert (window[:, 20:] - sinks[:, 20:]).abs().max() > 1e-3  # different caches from then on


def test_bad_inputs_name_the_argument():
    m, g = _model(), torch.Generator().manual_seed(8)
    idx = torch.randint(0, 11, (2, 5), generator=g)
    mask = torch.ones(2, 5, dtype=torch.bool)
    with pytest.raises(TypeError, match="position_ids"):
        m(idx, position_ids=torch.zeros(2, 5))
    with pytest.raises(ValueError, match="position_ids"):
        m(idx, position_ids=torch.zeros(2, 4, dtype=torch.long))
    with pytest.raises(ValueError, match="position_ids"):
        m(idx, position_ids=torch.full((2, 5), 32))
    with pytest.raises(TypeError, match="key_padding_mask"):
        m(idx, key_padding_mask=mask.long())
    with pytest.raises(ValueError, match="key_padding_mask"):
        m(idx, key_padding_mask=mask[:, :4])
    with pytest.raises(TypeError, match="return_weights"):
        m(idx, return_weights=1)
    with pytest.raises(ValueError, match="key_padding_mask"):
        m.generate(idx, 2, key_padding_mask=mask & torch.tensor([[True], [False]]))
    with pytest.raises(ValueError, match="key_padding_mask"):
        m.generate(idx, 2, key_padding_mask=mask[:1])
    caches = m.new_caches()
    with pytest.raises(ValueError, match="num_sinks"):
        m.evict_caches(caches, 4, num_sinks=5)
    with pytest.raises(ValueError, match="size"):
        m.evict_caches(caches, 0)
    with pytest.raises(TypeError, match="caches"):
        m.evict_caches([attn.PagedKVCache(4, 4).new_sequence(), attn.KVCache()], 4)
    with pytest.raises(ValueError, match="caches"):
        m.evict_caches(caches[:1], 4)
    with pytest.raises(ValueError, match="learned_positions"):
        _model(True).evict_caches(caches, 4)
    with pytest.raises(ValueError, match="num_sinks"):
        streaming_loss(m, idx, 4, num_sinks=4)
    with pytest.raises(ValueError, match="size"):
        streaming_loss(m, idx, 33)
    with pytest.raises(ValueError, match="x"):
        streaming_loss(m, idx[:, :1], 4)
    with pytest.raises(TypeError, match="model"):
        streaming_loss(attn.KVCache(), idx, 4)
    with pytest.raises(TypeError, match="learned_positions"):
        TinyLM(11, 8, learned_positions="yes")
