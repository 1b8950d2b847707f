"""attn.serving: the engine and speculative decoding write exactly greedy decoding's tokens.

Exactness is token equality (torch.equal) with ``TinyLM.generate``, no tolerance: the
engine packs the requests of a step into one pass with a block-diagonal causal mask and
reads keys from a paged pool; speculative decoding verifies a draft tree with
``tree_mask``. Logits of one row through the engine and through ``generate`` agree to a
few ulps (float64: atol=1e-10, rtol=1e-8). ``tree_mask`` is compared with an
independent oracle that walks the parents.
"""
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.testing import assert_close

import attn
import attn._checks as C
import attn.functional as AF
from attn.serving import BlockManager, Engine, speculative_generate, static_batching
from attn.models.tiny_lm import TinyLM

DTYPES = [torch.float64, torch.float32]
V = 13


def _model(dtype=torch.float64, seed=0, **kw):
    torch.manual_seed(seed)
    cfg = dict(d_model=32, num_layers=2, num_heads=4, num_kv_heads=2) | kw
    return TinyLM(V, 40, **cfg).to(dtype).eval()


def _greedy(model, prompt, n):
    return model.generate(prompt[None], n)[0, prompt.numel():]


# tree_mask


@settings(max_examples=60, deadline=None)
@given(data=st.data(), N=st.integers(1, 12), P=st.integers(0, 5))
def test_tree_mask_sees_the_prefix_itself_and_its_ancestors_only(data, N, P):
    parents = [data.draw(st.integers(-1, i - 1)) for i in range(N)]
    mask = AF.tree_mask(torch.tensor(parents), P)
    assert mask.shape == (N, P + N) and mask.dtype == torch.bool
    for i in range(N):
        seen, j = {i}, parents[i]
        while j >= 0:  # walk up to the prefix
            seen.add(j)
            j = parents[j]
        assert mask[i, :P].all()
        assert [bool(b) for b in mask[i, P:]] == [j in seen for j in range(N)]  # no sibling, no cousin


def test_tree_mask_of_a_chain_is_the_bottom_right_causal_mask():
    for N, P in ((1, 0), (5, 0), (4, 3)):
        chain = torch.arange(-1, N - 1)
        assert torch.equal(AF.tree_mask(chain, P), AF.causal_mask(N, P + N, align="bottom_right"))


def test_tree_mask_siblings_do_not_see_each_other():
    m = AF.tree_mask(torch.tensor([-1, 0, 0, 1, 2]), 2)  # root, two children, one grandchild each
    assert not m[2, 2 + 1] and not m[1, 2 + 2] and not m[3, 2 + 2] and not m[4, 2 + 3]
    assert m[3, 2 + 1] and m[3, 2 + 0] and m[4, 2 + 2]


@pytest.mark.parametrize("parents, err", [
    (torch.tensor([-1, 1]), ValueError),  # a node is its own parent
    (torch.tensor([-1, 2, 0]), ValueError),  # a later parent
    (torch.tensor([-2]), ValueError),
    (torch.tensor([[-1]]), ValueError),
    (torch.tensor([], dtype=torch.long), ValueError),
    (torch.tensor([-1, 0], dtype=torch.int32), TypeError),
    ([-1, 0], TypeError),
])
def test_tree_mask_refuses_bad_parents(parents, err):
    with pytest.raises(err, match="parents"):
        AF.tree_mask(parents)


def test_tree_mask_refuses_a_negative_prefix():
    with pytest.raises(ValueError, match="num_cached"):
        AF.tree_mask(torch.tensor([-1]), -1)


# the block manager


def test_block_manager_counts_references_and_frees_in_order():
    m = BlockManager(4, 2)
    assert [m.allocate("a") for _ in range(3)] == [0, 1, 2]
    m.commit("a", [5, 6, 7, 8, 9], 5)  # blocks 0, 1 full
    assert m.match([5, 6, 7, 8, 1]) == [0, 1] and m.match([5, 7]) == []
    m.share("b", m.match([5, 6, 7, 8]))
    assert m.ref[:3] == [2, 2, 1] and m.num_free() == 1
    m.release("a")
    assert m.ref[:3] == [1, 1, 0] and list(m.free) == [3, 2]
    m.release("b")
    assert list(m.free) == [3, 2, 1, 0]  # the tail of a table is evicted first
    assert [m.allocate("c") for _ in range(3)] == [3, 2, 1]  # block 1's prefix is forgotten
    assert m.match([5, 6, 7, 8]) == [0]


# the engine


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_engine_writes_the_tokens_of_greedy_decoding(dtype, seed):
    """Random prompts arriving between steps, a shared prefix, a pool small enough to make requests wait."""
    model = _model(dtype, seed)
    g = torch.Generator().manual_seed(seed)
    system = torch.randint(0, V, (9,), generator=g)
    engine = Engine(model, num_blocks=10, block_size=4, token_budget=[None, 7, 16][seed])
    want, waited = {}, False
    for i in range(10):
        T = int(torch.randint(1, 14, (1,), generator=g))
        prompt = torch.randint(0, V, (T,), generator=g)
        if i % 3 == 0:
            prompt = torch.cat([system, prompt])[:26]
        n = int(torch.randint(1, 13, (1,), generator=g))
        want[engine.add_request(prompt, n)] = _greedy(model, prompt, n)
        for _ in range(int(torch.randint(0, 3, (1,), generator=g))):
            engine.step()
            waited |= bool(engine.waiting)
            assert engine.stats["blocks_in_use"] <= 10
    got = engine.run()
    assert waited
    assert got.keys() == want.keys()
    for rid in want:
        assert torch.equal(got[rid], want[rid]), rid
    assert engine.stats["blocks_in_use"] == 0 and engine.stats["prefix_blocks_reused"] > 0


def test_engine_logits_match_a_lone_forward_pass():
    model = _model()
    engine = Engine(model, num_blocks=8, block_size=3)
    a, b = torch.tensor([1, 2, 3, 4, 5]), torch.tensor([7, 8])
    engine.add_request(a, 2)
    engine.add_request(b, 2)
    batch = engine._schedule() or (engine._admit(), engine._schedule())[1]
    got = engine._pass(batch)  # (2, V): the last prompt token of each
    for row, p in zip(got, (a, b)):
        assert_close(row, model(p[None])[0, -1], atol=1e-10, rtol=1e-8)


def test_engine_hooks_fire_once_per_step_and_the_budget_holds():
    model = _model()
    calls = []
    hooks = [blk.register_forward_hook(lambda m, i, o: calls.append(o.size(1))) for blk in model.blocks]
    engine = Engine(model, num_blocks=12, block_size=4, token_budget=5)
    for T in (11, 3, 7):
        engine.add_request(torch.arange(T) % V, 4)
    engine.run()
    for h in hooks:
        h.remove()
    assert len(calls) == len(model.blocks) * engine.stats["steps"]
    assert max(calls) <= 5 and sum(calls) == len(model.blocks) * engine.stats["tokens"]


def test_engine_reuses_a_finished_requests_prefix_until_its_space_is_needed():
    model = _model()
    engine = Engine(model, num_blocks=6, block_size=4)
    system = torch.arange(8) % V  # two full blocks
    r0 = engine.add_request(torch.cat([system, torch.tensor([1])]), 2)
    engine.run()
    assert engine.stats["blocks_in_use"] == 0
    r1 = engine.add_request(torch.cat([system, torch.tensor([2, 3])]), 3)
    out = engine.run()
    assert engine.stats["prefix_blocks_reused"] == 2
    assert torch.equal(out[r1], _greedy(model, torch.cat([system, torch.tensor([2, 3])]), 3))
    engine.add_request(torch.full((20,), 4), 4)  # needs all 6 blocks: evicts the prefix
    engine.run()
    r3 = engine.add_request(torch.cat([system, torch.tensor([1])]), 2)
    out = engine.run()
    assert engine.stats["prefix_blocks_reused"] == 2
    assert torch.equal(out[r3], out[r0])


def test_engine_computes_the_last_prompt_token_even_when_all_blocks_are_cached():
    model = _model()
    engine = Engine(model, num_blocks=8, block_size=4)
    p = torch.arange(8) % V  # exactly two blocks
    engine.add_request(p, 3)
    engine.run()
    rid = engine.add_request(p, 3)
    assert torch.equal(engine.run()[rid], _greedy(model, p, 3))
    assert engine.stats["prefix_blocks_reused"] == 1  # the block holding the last token is recomputed


def test_engine_with_learned_positions_and_no_rope():
    model = _model(rope_base=None, learned_positions=True)
    engine = Engine(model, num_blocks=8, block_size=2)
    prompts = [torch.tensor([1, 2, 3]), torch.tensor([4]), torch.tensor([5, 6, 7, 8, 9])]
    ids = [engine.add_request(p, 4) for p in prompts]
    out = engine.run()
    for rid, p in zip(ids, prompts):
        assert torch.equal(out[rid], _greedy(model, p, 4))


@pytest.mark.parametrize("prompt, n, err, match", [
    (torch.tensor([], dtype=torch.long), 2, ValueError, "prompt"),
    (torch.tensor([1, V]), 2, ValueError, "vocab_size"),
    (torch.tensor([[1, 2]]), 2, ValueError, r"\(T,\)"),
    (torch.tensor([1.0, 2.0]), 2, TypeError, "int64"),
    (torch.tensor([1, 2]), 0, ValueError, "max_new_tokens"),
    (torch.tensor([1, 2]), 1.5, TypeError, "max_new_tokens"),
    (torch.tensor([1, 2]), 39, ValueError, "context_length"),
    (torch.ones(30, dtype=torch.long), 5, ValueError, "num_blocks"),
])
def test_add_request_refuses_bad_requests(prompt, n, err, match):
    engine = Engine(_model(), num_blocks=8, block_size=4)
    with pytest.raises(err, match=match):
        engine.add_request(prompt, n)
    assert not engine.waiting


def test_engine_refuses_bad_arguments():
    with pytest.raises(TypeError, match="TinyLM"):
        Engine(torch.nn.Linear(2, 2), num_blocks=2, block_size=2)
    with pytest.raises(ValueError, match="num_blocks"):
        Engine(_model(), num_blocks=0, block_size=2)
    with pytest.raises(TypeError, match="token_budget"):
        Engine(_model(), num_blocks=2, block_size=2, token_budget=2.0)


def test_static_batching_counts_by_hand():
    # group 1: T = 3, 1; new = 2, 4 -> 4 passes, 2 x (3 + 4 - 1) = 12 slots; group 2: T = 2, new = 1 -> 1, 2
    got = static_batching([3, 1, 2], [2, 4, 1], 2)
    real = (3 + 1) + (1 + 3) + 2
    assert got == {"steps": 5, "slots": 14, "padded": 14 - real}


# speculative decoding


@pytest.mark.parametrize("dtype", DTYPES)
def test_speculative_generate_writes_the_targets_greedy_tokens(dtype):
    target = _model(dtype, 0)
    draft = _model(dtype, 1, d_model=16, num_layers=1, num_heads=2, num_kv_heads=1)
    g = torch.Generator().manual_seed(0)
    for trial in range(6):
        T, n = int(torch.randint(1, 12, (1,), generator=g)), int(torch.randint(1, 16, (1,), generator=g))
        prompt = torch.randint(0, V, (1, T), generator=g)
        want = target.generate(prompt, n)
        for k in (1, 2, 4):
            for branches in (1, 2):
                got, stats = speculative_generate(target, draft, prompt, n, k=k, branches=branches)
                assert torch.equal(got, want), (trial, k, branches)
                assert stats["accepted"] <= stats["proposed"]
                assert stats["target_passes"] + stats["accepted"] == n  # accepted + 1 per pass, never past n


def test_speculative_generate_with_the_target_as_draft_accepts_every_chain_token():
    target = _model()
    prompt = torch.tensor([[1, 2, 3]])
    got, stats = speculative_generate(target, target, prompt, 14, k=4)
    assert torch.equal(got, target.generate(prompt, 14))
    assert stats["target_passes"] == 3 and stats["accepted"] == stats["proposed"] == 4 + 4 + 3  # 5 + 5 + 4 tokens


def test_speculative_generate_with_a_tree_accepts_at_least_the_chain():
    target = _model()
    prompt = torch.tensor([[4, 5]])
    _, chain = speculative_generate(target, target, prompt, 10, k=3)
    _, tree = speculative_generate(target, target, prompt, 10, k=3, branches=3)
    assert tree["target_passes"] == chain["target_passes"] and tree["proposed"] == 3 * chain["proposed"]


def test_speculative_generate_refuses_bad_arguments():
    target, other = _model(), TinyLM(V + 1, 40)
    with pytest.raises(ValueError, match="vocab_size"):
        speculative_generate(target, other, torch.tensor([[1]]), 2)
    with pytest.raises(ValueError, match="k must"):
        speculative_generate(target, target, torch.tensor([[1]]), 2, k=0)
    with pytest.raises(ValueError, match="branches"):
        speculative_generate(target, target, torch.tensor([[1]]), 2, branches=V + 1)
    with pytest.raises(ValueError, match=r"\(1, T\)"):
        speculative_generate(target, target, torch.tensor([1]), 2)
    with pytest.raises(ValueError, match="context_length"):
        speculative_generate(target, target, torch.tensor([[1]]), 40)


# the block's keywords and the checked() context


def test_block_forward_with_positions_and_mask_equals_the_default_causal_path():
    model = _model()
    x = torch.randn(2, 5, 32, dtype=torch.float64)
    block = model.blocks[0]
    mask = AF.causal_mask(5)
    assert_close(block(x, positions=torch.arange(5), mask=mask), block(x), atol=1e-10, rtol=1e-8)
    assert_close(block(x, positions=torch.arange(5)[None].expand(2, 5)), block(x), atol=1e-10, rtol=1e-8)
    with pytest.raises(ValueError, match="positions"):
        block(x, positions=torch.arange(4))
    with pytest.raises(TypeError, match="mask"):
        block(x, mask=mask.float().long())
    with C.checked():  # no checks inside: a packed batch may be longer than context_length
        assert C.inside()
        block(torch.randn(1, 45, 32, dtype=torch.float64), positions=torch.arange(45) % 40)
    assert not C.inside()


def test_kv_cache_from_tensors_keeps_copies():
    k, v = torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4)
    cache = attn.KVCache.from_tensors(k, v)
    k += 1
    assert len(cache) == 3 and not torch.equal(cache.k, k)
