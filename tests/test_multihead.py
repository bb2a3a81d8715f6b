"""Multi-head self-attention with every position scheme: symmetry and relativity properties.

Without position information attention is permutation-equivariant; every scheme in
``POSITION_SCHEMES`` other than ``"none"`` must break that symmetry.  The relative schemes
(``shaw``, ``t5``, ``alibi``, ``rope``) must in addition be translation-invariant: the result
for a block of tokens cannot depend on where the block starts.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from conftest import randn, seeds
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from posenc import POSITION_SCHEMES, MultiHeadSelfAttention

EMBED_DIM, NUM_HEADS = 8, 2
RELATIVE_SCHEMES = ("shaw", "t5", "alibi", "rope")
ABSOLUTE_SCHEMES = ("sinusoidal", "learned")
SETTINGS = settings(max_examples=20, deadline=None)
# Every scheme, RoPE included (RotaryEmbedding keeps its angles and cos/sin tables in float64),
# is exact to float64 rounding in a float64 module. Failures of the properties below are O(1e-2)
# or larger.
EXACT = dict(rtol=1e-9, atol=1e-9)


def make_module(position, seed=0, **kwargs):
    torch.manual_seed(seed)
    module = MultiHeadSelfAttention(EMBED_DIM, NUM_HEADS, position=position, **kwargs).double()
    # nn.Linear biases start small; make sure every parameter matters.
    with torch.no_grad():
        for parameter in module.parameters():
            parameter.add_(0.1 * torch.randn_like(parameter))
    return module


@st.composite
def sequences_and_permutations(draw, min_len=2, max_len=7):
    seq_len = draw(st.integers(min_len, max_len))
    permutation = draw(st.permutations(range(seq_len)))
    return seq_len, torch.tensor(permutation)


def permute(output, weights, permutation):
    """Where the module's results must go if the module is permutation-equivariant."""
    return output[:, permutation], weights[..., permutation, :][..., :, permutation]


# --------------------------------------------------------------------------- "none": equivariance


@SETTINGS
@given(case=sequences_and_permutations(), seed=seeds)
def test_no_position_is_permutation_equivariant(case, seed):
    seq_len, permutation = case
    module = make_module("none")
    x = randn(2, seq_len, EMBED_DIM, seed=seed)
    output, weights = module(x)
    assert output.shape == (2, seq_len, EMBED_DIM) and weights.shape == (2, NUM_HEADS, seq_len, seq_len)
    permuted_output, permuted_weights = module(x[:, permutation])
    expected_output, expected_weights = permute(output, weights, permutation)
    torch.testing.assert_close(permuted_output, expected_output, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(permuted_weights, expected_weights, rtol=1e-10, atol=1e-12)
    # Mean-pooling the equivariant outputs gives a permutation-invariant summary.
    torch.testing.assert_close(permuted_output.mean(1), output.mean(1), rtol=1e-10, atol=1e-12)


@SETTINGS
@given(case=sequences_and_permutations(min_len=3), seed=seeds)
def test_causal_mask_breaks_equivariance_even_without_positions(case, seed):
    seq_len, permutation = case
    assume(not torch.equal(permutation, torch.arange(seq_len)))
    module = make_module("none")
    x = randn(1, seq_len, EMBED_DIM, seed=seed)
    output, _ = module(x, causal=True)
    permuted_output, _ = module(x[:, permutation], causal=True)
    expected, _ = permute(output, torch.zeros(1, 1, seq_len, seq_len), permutation)
    assert not torch.allclose(permuted_output, expected, atol=1e-6)


@pytest.mark.parametrize("position", [p for p in POSITION_SCHEMES if p != "none"])
@SETTINGS
@given(case=sequences_and_permutations(), seed=seeds)
def test_every_position_scheme_breaks_equivariance(position, case, seed):
    seq_len, permutation = case
    assume(not torch.equal(permutation, torch.arange(seq_len)))
    if position == "alibi":
        # Symmetric ALiBi, -m|j - i|, only sees distances, which a reversal preserves (see below).
        assume(not torch.equal(permutation, torch.arange(seq_len).flip(0)))
    module = make_module(position)
    x = randn(2, seq_len, EMBED_DIM, seed=seed)
    output, weights = module(x)
    permuted_output, permuted_weights = module(x[:, permutation])
    expected_output, expected_weights = permute(output, weights, permutation)
    assert not torch.allclose(permuted_output, expected_output, atol=1e-6)
    assert not torch.allclose(permuted_weights, expected_weights, atol=1e-6)


def test_symmetric_alibi_is_equivariant_under_reversal():
    # The bidirectional ALiBi bias -m|j - i| is unchanged by i -> L-1-i, j -> L-1-j: reversal is
    # the one non-trivial permutation it cannot detect.
    module = make_module("alibi")
    x = randn(2, 6, EMBED_DIM, seed=1)
    reverse = torch.arange(6).flip(0)
    output, weights = module(x)
    reversed_output, reversed_weights = module(x[:, reverse])
    expected_output, expected_weights = permute(output, weights, reverse)
    torch.testing.assert_close(reversed_output, expected_output)
    torch.testing.assert_close(reversed_weights, expected_weights)


# --------------------------------------------------------------------------- independent re-implementation


@pytest.mark.parametrize("num_heads", [1, 2, 4])
@pytest.mark.parametrize("causal", [False, True])
def test_no_position_matches_independent_implementation(num_heads, causal):
    torch.manual_seed(3)
    module = MultiHeadSelfAttention(EMBED_DIM, num_heads).double()
    x = randn(3, 5, EMBED_DIM, seed=4)
    output, weights = module(x, causal=causal)

    head_dim = EMBED_DIM // num_heads
    w_q, w_k, w_v = module.qkv.weight.detach().split(EMBED_DIM)  # nn.Linear: y = x W^T + b
    b_q, b_k, b_v = module.qkv.bias.detach().split(EMBED_DIM)

    def heads(t):  # (b, L, D) -> (b, h, L, d)
        return t.reshape(3, 5, num_heads, head_dim).permute(0, 2, 1, 3)

    q, k, v = heads(x @ w_q.T + b_q), heads(x @ w_k.T + b_k), heads(x @ w_v.T + b_v)
    attended = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    merged = attended.permute(0, 2, 1, 3).reshape(3, 5, EMBED_DIM)
    expected = merged @ module.out.weight.detach().T + module.out.bias.detach()
    torch.testing.assert_close(output, expected)

    scores = q @ k.transpose(-2, -1) / head_dim**0.5
    if causal:
        scores = scores.masked_fill(torch.ones(5, 5).triu(1).bool(), float("-inf"))
    torch.testing.assert_close(weights, scores.softmax(-1))


def test_user_mask_is_applied_to_every_head():
    module = make_module("none")
    x = randn(1, 4, EMBED_DIM, seed=2)
    mask = torch.tensor([[1, 1, 0, 0], [1, 1, 1, 0], [0, 1, 1, 1], [1, 0, 0, 1]], dtype=torch.bool)
    _, weights = module(x, mask)
    assert torch.all(weights[..., ~mask] == 0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(1, NUM_HEADS, 4, dtype=torch.float64))
    _, both = module(x, mask, causal=True)
    assert torch.all(both[..., ~(mask & torch.ones(4, 4).tril().bool())] == 0)


# --------------------------------------------------------------------------- relativity


@pytest.mark.parametrize("position", RELATIVE_SCHEMES + ("none",))
@SETTINGS
@given(seq_len=st.integers(1, 6), shift=st.integers(1, 6), seed=seeds)
def test_relative_schemes_are_translation_invariant(position, seq_len, shift, seed):
    """Put the same tokens after ``shift`` padding tokens that nobody may attend to: for a scheme
    that only sees offsets j - i the real tokens cannot tell they moved."""
    module = make_module(position)
    x = randn(1, seq_len, EMBED_DIM, seed=seed)
    padding = randn(1, shift, EMBED_DIM, seed=seed + 1)
    output, weights = module(x)
    keys_allowed = torch.arange(shift + seq_len) >= shift  # mask out the padding keys
    mask = keys_allowed.expand(shift + seq_len, shift + seq_len)
    shifted_output, shifted_weights = module(torch.cat((padding, x), dim=1), mask)
    torch.testing.assert_close(shifted_output[:, shift:], output, **EXACT)
    torch.testing.assert_close(shifted_weights[..., shift:, shift:], weights, **EXACT)


@pytest.mark.parametrize("position", ABSOLUTE_SCHEMES)
def test_absolute_schemes_are_not_translation_invariant(position):
    module = make_module(position)
    x = randn(1, 5, EMBED_DIM, seed=5)
    padding = randn(1, 3, EMBED_DIM, seed=6)
    output, _ = module(x)
    mask = (torch.arange(8) >= 3).expand(8, 8)
    shifted_output, _ = module(torch.cat((padding, x), dim=1), mask)
    assert not torch.allclose(shifted_output[:, 3:], output, atol=1e-6)


@pytest.mark.parametrize("position", RELATIVE_SCHEMES)
@pytest.mark.parametrize("causal", [False, True])
def test_relative_scores_of_a_repeated_token_are_toeplitz(position, causal):
    """All tokens identical: the score of (i, j) is f(j - i), so log w[i, j] - log w[i, i] =
    f(j - i) - f(0) depends only on j - i (the softmax normaliser cancels within a row)."""
    module = make_module(position)
    x = randn(1, 1, EMBED_DIM, seed=8).expand(1, 7, EMBED_DIM)
    _, weights = module(x, causal=causal)
    log_weights = weights.log()
    relative = log_weights - log_weights.diagonal(dim1=-2, dim2=-1)[..., :, None]
    allowed = torch.ones(7, 7).tril().bool() if causal else torch.ones(7, 7, dtype=torch.bool)
    # Compare each entry with its neighbour one step down the diagonal.
    both = allowed[1:, 1:] & allowed[:-1, :-1]
    torch.testing.assert_close(relative[..., 1:, 1:][..., both], relative[..., :-1, :-1][..., both])
    # ...and the position really matters: the weights are not uniform.
    assert not torch.allclose(weights[..., 3, :], torch.full((7,), 1 / 7, dtype=torch.float64))


@pytest.mark.parametrize("position", ABSOLUTE_SCHEMES)
def test_absolute_scores_of_a_repeated_token_are_not_toeplitz(position):
    module = make_module(position)
    x = randn(1, 1, EMBED_DIM, seed=8).expand(1, 7, EMBED_DIM)
    _, weights = module(x)
    log_weights = weights.log()
    relative = log_weights - log_weights.diagonal(dim1=-2, dim2=-1)[..., :, None]
    assert not torch.allclose(relative[..., 1:, 1:], relative[..., :-1, :-1], atol=1e-6)


@pytest.mark.parametrize("position", POSITION_SCHEMES)
def test_every_scheme_runs_batched_with_consistent_shapes_and_gradients(position):
    module = make_module(position)
    x = randn(2, 3, 5, EMBED_DIM, seed=9).requires_grad_()
    output, weights = module(x, causal=True)
    assert output.shape == x.shape and weights.shape == (2, 3, NUM_HEADS, 5, 5)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3, NUM_HEADS, 5, dtype=torch.float64))
    # Batch elements are independent: each equals the module applied to it alone.
    torch.testing.assert_close(output[1, 2], module(x[1, 2], causal=True)[0])
    output.sum().backward()
    assert all(p.grad is not None for p in module.parameters() if p.requires_grad)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_rope_layouts_both_relative(layout):
    module = make_module("rope", rope_layout=layout)
    assert module.rotary.layout == layout
    x = randn(1, 4, EMBED_DIM, seed=0)
    out, _ = module(x)
    shifted, _ = module(torch.cat((x[:, :2], x), 1), (torch.arange(6) >= 2).expand(6, 6))
    torch.testing.assert_close(shifted[:, 2:], out, **EXACT)


def test_t5_unidirectional_and_shaw_max_distance_are_used():
    t5 = make_module("t5", bidirectional=False, num_buckets=8, max_distance=10)
    assert not t5.relative_bias.bidirectional and t5.relative_bias.max_distance == 10
    shaw = make_module("shaw", max_distance=2)
    assert shaw.relative_keys.max_distance == 2 and shaw.relative_values.max_distance == 2
    learned = make_module("learned", max_len=6)
    with pytest.raises(ValueError, match="max_len"):
        learned(torch.zeros(1, 7, EMBED_DIM, dtype=torch.float64))


# --------------------------------------------------------------------------- bad inputs


def test_rejects_embed_dim_not_divisible_by_num_heads():
    with pytest.raises(ValueError, match="embed_dim"):
        MultiHeadSelfAttention(10, 3)


@pytest.mark.parametrize("num_heads", [0, -2])
def test_rejects_num_heads_below_one(num_heads):
    with pytest.raises(ValueError, match="num_heads"):
        MultiHeadSelfAttention(8, num_heads)


def test_rejects_embed_dim_below_one_and_non_integers():
    with pytest.raises(ValueError, match="embed_dim"):
        MultiHeadSelfAttention(0, 1)
    with pytest.raises(TypeError, match="num_heads"):
        MultiHeadSelfAttention(8, 2.0)


@pytest.mark.parametrize("position", ["absolute", "RoPE", "", None])
def test_rejects_unknown_position(position):
    with pytest.raises(ValueError, match="position"):
        MultiHeadSelfAttention(8, 2, position=position)


@pytest.mark.parametrize("position", POSITION_SCHEMES)
def test_rejects_wrong_input_width_and_type(position):
    module = MultiHeadSelfAttention(8, 2, position=position)
    with pytest.raises(ValueError, match="embed_dim"):
        module(torch.zeros(1, 4, 6))
    with pytest.raises(TypeError, match="x"):
        module(torch.zeros(1, 4, 8, dtype=torch.long))
    with pytest.raises(ValueError, match="x"):
        module(torch.zeros(8))
    with pytest.raises(TypeError, match="mask"):
        module(torch.zeros(1, 4, 8), torch.ones(4, 4))


def test_rejects_odd_dimension_for_pair_based_schemes():
    # sinusoidal needs an even embed_dim; rope an even head_dim (6 / 2 heads = 3).
    with pytest.raises(ValueError, match="dim"):
        MultiHeadSelfAttention(5, 1, position="sinusoidal")
    with pytest.raises(ValueError, match="dim"):
        MultiHeadSelfAttention(6, 2, position="rope")
    MultiHeadSelfAttention(6, 3, position="rope")  # head_dim 2 is fine


# --------------------------------------------------------------------------- positions= and need_weights=


def _spread_out(x, positions, padding_seed):
    """Put the tokens of ``x`` at the indices ``positions`` of a longer sequence of padding tokens,
    and build the mask that hides the padding keys: an independent way to place tokens at
    arbitrary (increasing, integer) positions with nothing but the default ``arange`` positions."""
    length = int(positions.max()) + 1
    spread = randn(x.shape[0], length, x.shape[-1], seed=padding_seed)
    spread[:, positions] = x
    real = torch.zeros(length, dtype=torch.bool)
    real[positions] = True
    return spread, real.expand(length, length)


@pytest.mark.parametrize("position", POSITION_SCHEMES)
@pytest.mark.parametrize("causal", [False, True])
@settings(max_examples=8, deadline=None)
@given(
    gaps=st.lists(st.integers(1, 4), min_size=1, max_size=6),
    start=st.integers(0, 5),
    seed=seeds,
)
def test_positions_place_tokens_where_an_explicit_layout_would(position, causal, gaps, start, seed):
    """``positions=p`` must equal running the tokens spread out at the indices ``p`` of a longer
    sequence whose other tokens are masked out: the absolute schemes read the table at ``p``,
    the relative ones see the offsets of ``p`` (not of ``0..L-1``)."""
    positions = start + torch.cumsum(torch.tensor([0] + gaps), 0)
    module = make_module(position, max_len=64)
    x = randn(2, len(positions), EMBED_DIM, seed=seed)
    output, weights = module(x, causal=causal, positions=positions)
    spread, mask = _spread_out(x, positions, seed + 1)
    expected_output, expected_weights = module(spread, mask, causal=causal)
    torch.testing.assert_close(output, expected_output[:, positions], **EXACT)
    torch.testing.assert_close(weights, expected_weights[..., positions, :][..., positions], **EXACT)


@pytest.mark.parametrize("position", RELATIVE_SCHEMES)
def test_relative_schemes_ignore_a_common_shift_of_positions(position):
    module = make_module(position)
    x = randn(2, 5, EMBED_DIM, seed=11)
    output, _ = module(x, causal=True)
    for shift in (1, 7, 1000):
        shifted, _ = module(x, causal=True, positions=torch.arange(5) + shift)
        torch.testing.assert_close(shifted, output, **EXACT)


@pytest.mark.parametrize("position", ABSOLUTE_SCHEMES)
def test_absolute_schemes_see_a_common_shift_of_positions(position):
    module = make_module(position)
    x = randn(2, 5, EMBED_DIM, seed=11)
    shifted, _ = module(x, positions=torch.arange(5) + 3)
    assert not torch.allclose(shifted, module(x)[0], atol=1e-6)


@pytest.mark.parametrize("position", POSITION_SCHEMES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shift", [None, 5])
@pytest.mark.parametrize("with_mask", [False, True])
def test_fused_path_equals_the_weights_path(position, causal, shift, with_mask):
    """need_weights=False (torch's fused attention, bias as attn_mask) computes the same output."""
    module = make_module(position)
    x = randn(3, 6, EMBED_DIM, seed=12)
    positions = None if shift is None else torch.arange(6) + shift
    # A user mask that leaves query 1 with no key at all: both paths must output zeros there.
    mask = torch.rand(6, 6, generator=torch.Generator().manual_seed(2)) > 0.4 if with_mask else None
    if mask is not None:
        mask[1] = False
        mask[4, 4] = True
    output, weights = module(x, mask, causal=causal, positions=positions)
    fused, none = module(x, mask, causal=causal, positions=positions, need_weights=False)
    assert none is None and weights is not None
    torch.testing.assert_close(fused, output, rtol=1e-10, atol=1e-12)
    # ... and so are the gradients (the fused path is the training path).
    x32 = x.float().requires_grad_()
    module32 = make_module(position).float()
    gradients = []
    for need_weights in (True, False):
        x32.grad = None
        module32.zero_grad()
        module32(x32, mask, causal=causal, positions=positions, need_weights=need_weights)[0].square().sum().backward()
        gradients.append([x32.grad.clone()] + [p.grad.clone() for p in module32.parameters()])
    for with_weights, without in zip(*gradients, strict=True):
        torch.testing.assert_close(without, with_weights, rtol=1e-4, atol=1e-5)


def test_fused_path_of_a_causal_layer_without_bias_uses_is_causal():
    # The fastest fused kernel: no materialised mask when nothing but causality is asked for.
    module = make_module("rope")
    x = randn(1, 4, EMBED_DIM, seed=3)
    calls = []
    real = F.scaled_dot_product_attention

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    try:
        F.scaled_dot_product_attention = spy
        module(x, causal=True, need_weights=False)
    finally:
        F.scaled_dot_product_attention = real
    assert calls == [{"is_causal": True}]


@pytest.mark.parametrize("position", ["shaw", "t5"])
def test_table_schemes_reject_real_positions(position):
    module = make_module(position)
    with pytest.raises(TypeError, match="integer positions"):
        module(randn(1, 3, EMBED_DIM, seed=0), positions=torch.tensor([0.0, 0.5, 1.0]))


@pytest.mark.parametrize("position", POSITION_SCHEMES)
def test_rejects_positions_of_the_wrong_shape(position):
    module = make_module(position)
    x = randn(1, 3, EMBED_DIM, seed=0)
    with pytest.raises(ValueError, match="positions"):
        module(x, positions=torch.arange(4))
    with pytest.raises(ValueError, match="positions"):
        module(x, positions=torch.arange(3)[None].expand(2, 3))
    with pytest.raises(ValueError, match="positions"):
        module(x, positions=torch.arange(3)[None, None])


def test_learned_rejects_positions_beyond_its_table():
    module = make_module("learned", max_len=8)
    with pytest.raises(ValueError, match="max_len"):
        module(randn(1, 3, EMBED_DIM, seed=0), positions=torch.tensor([5, 6, 8]))


def test_fused_alibi_mask_cache_follows_length_causality_and_dtype():
    """The fused ALiBi path keeps its last mask; a new length, causality or dtype must not reuse it."""
    module = make_module("alibi")
    for seq_len, causal, dtype in [
        (5, True, torch.float64),
        (7, True, torch.float64),
        (7, False, torch.float64),
        (5, True, torch.float64),
        (5, True, torch.float32),
    ]:
        layer = module.to(dtype)
        x = randn(2, seq_len, EMBED_DIM, seed=seq_len).to(dtype)
        expected, _ = layer(x, causal=causal)
        fused, _ = layer(x, causal=causal, need_weights=False)
        tolerance = dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-12)
        torch.testing.assert_close(fused, expected, **tolerance)


PER_SAMPLE_SCHEMES = [scheme for scheme in POSITION_SCHEMES if scheme != "shaw"]


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("position", PER_SAMPLE_SCHEMES)
def test_per_sample_positions_equal_one_call_per_sequence(position, causal, need_weights):
    # Each sequence of the batch at its own positions (left padding, packing) must give what
    # the layer gives for that sequence alone with 1-D positions.
    module = make_module(position).double()
    x = randn(3, 6, EMBED_DIM, seed=70)
    positions = torch.tensor([[0, 1, 2, 3, 4, 5], [0, 0, 0, 1, 2, 3], [4, 5, 6, 7, 8, 9]])
    batched, batched_weights = module(x, causal=causal, positions=positions, need_weights=need_weights)
    for row in range(3):
        alone, alone_weights = module(x[row], causal=causal, positions=positions[row], need_weights=need_weights)
        torch.testing.assert_close(batched[row], alone, rtol=1e-10, atol=1e-10)
        if need_weights:
            torch.testing.assert_close(batched_weights[row], alone_weights, rtol=1e-10, atol=1e-10)


def test_shaw_rejects_per_sample_positions():
    with pytest.raises(ValueError, match="shared by the batch"):
        make_module("shaw")(randn(2, 4, EMBED_DIM, seed=0), positions=torch.zeros(2, 4, dtype=torch.long))
