"""Relative position methods: relative offsets, Shaw et al., T5 buckets and ALiBi."""

from __future__ import annotations

import itertools
import math

import pytest
import torch
from conftest import hf_t5_relative_position_bucket, leading_shapes, paper_alibi_slopes, randn, seeds
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import (
    RelativePositionEmbedding,
    T5RelativePositionBias,
    alibi_bias,
    alibi_slopes,
    causal_mask,
    clipped_relative_positions,
    relative_positions,
    scaled_dot_product_attention,
    shaw_attention,
    t5_relative_position_bucket,
)

SETTINGS = settings(max_examples=30, deadline=None)
lengths = st.integers(1, 12)


# --------------------------------------------------------------------------- independent references


def shaw_loop(q, k, v, a_key, a_value):
    """Shaw et al. (2018), eqs. (3)-(5), one scalar at a time.

    e_ij = q_i . (k_j + aK_ij) / sqrt(d);  alpha_ij = softmax_j(e_ij);  z_i = sum_j alpha_ij (v_j + aV_ij).
    """
    lead = q.shape[:-2]
    lq, d = q.shape[-2:]
    lk, dv = v.shape[-2:]
    out = torch.zeros(*lead, lq, dv, dtype=torch.float64)
    weights = torch.zeros(*lead, lq, lk, dtype=torch.float64)
    for index in itertools.product(*(range(size) for size in lead)):
        for i in range(lq):
            e = [
                sum(float(q[index + (i, c)]) * (float(k[index + (j, c)]) + float(a_key[i, j, c])) for c in range(d))
                / math.sqrt(d)
                for j in range(lk)
            ]
            top = max(e)
            exps = [math.exp(value - top) for value in e]
            total = sum(exps)
            for j in range(lk):
                alpha = exps[j] / total
                weights[index + (i, j)] = alpha
                for c in range(dv):
                    extra = 0.0 if a_value is None else float(a_value[i, j, c])
                    out[index + (i, c)] += alpha * (float(v[index + (j, c)]) + extra)
    return out, weights


# --------------------------------------------------------------------------- relative positions


@SETTINGS
@given(lq=lengths, lk=lengths)
def test_relative_positions_are_key_minus_query(lq, lk):
    rel = relative_positions(lq, lk)
    assert rel.shape == (lq, lk) and rel.dtype == torch.long
    for i in range(lq):
        for j in range(lk):
            assert rel[i, j] == j - i
    assert torch.equal(relative_positions(lq), relative_positions(lq, lq))


@SETTINGS
@given(lq=lengths, lk=lengths, max_distance=st.integers(0, 15))
def test_clipped_relative_positions_equal_clamp(lq, lk, max_distance):
    clipped = clipped_relative_positions(lq, lk, max_distance=max_distance)
    for i in range(lq):
        for j in range(lk):
            assert clipped[i, j] == max(-max_distance, min(max_distance, j - i))


# --------------------------------------------------------------------------- T5 buckets

# Bidirectional, 32 buckets, max_distance 128: 16 buckets per direction, keys after the query
# (j - i > 0) are offset by 16. Within a direction max_exact = 8: distances 0..7 are their own
# bucket; a distance d >= 8 gets 8 + floor(8 * ln(d/8) / ln(128/8)) = 8 + floor(2 * log2(d/8)),
# capped at 15.
#   d=20:  2*log2(2.5)   = 2.64 -> 10        d=31: 2*log2(3.875)  = 3.91 -> 11
#   d=33:  2*log2(4.125) = 4.09 -> 12        d=63: 2*log2(7.875)  = 5.95 -> 13
#   d=127: 2*log2(15.875)= 7.98 -> 15        d=200: 2*log2(25)    = 9.29 -> 17, capped to 15
BIDIRECTIONAL_CASES = [
    (0, 0),
    (-1, 1),
    (-7, 7),
    (-8, 8),
    (-20, 10),
    (-31, 11),
    (-33, 12),
    (-63, 13),
    (-127, 15),
    (-200, 15),
    (1, 17),
    (7, 23),
    (8, 24),
    (20, 26),
    (33, 28),
    (200, 31),
    (10**6, 31),
    (-(10**6), 15),
]
# Unidirectional, 32 buckets, 128: only the past counts (future keys -> bucket 0), distance
# d = max(i - j, 0); max_exact = 16, and d >= 16 gets 16 + floor(16 * ln(d/16) / ln(8))
# = 16 + floor((16/3) * log2(d/16)), capped at 31.
#   d=17: 5.33*0.087 = 0.47 -> 16     d=20: 5.33*0.32 = 1.72 -> 17    d=40: 5.33*1.32 = 7.05 -> 23
#   d=100: 5.33*2.64 = 14.1 -> 30     d=127: 5.33*2.99 = 15.94 -> 31   d=1000: capped at 31
UNIDIRECTIONAL_CASES = [
    (5, 0),
    (1, 0),
    (0, 0),
    (-1, 1),
    (-15, 15),
    (-16, 16),
    (-17, 16),
    (-20, 17),
    (-40, 23),
    (-100, 30),
    (-127, 31),
    (-1000, 31),
]


@pytest.mark.parametrize(("relative", "bucket"), BIDIRECTIONAL_CASES)
def test_t5_bucket_hand_checked_bidirectional(relative, bucket):
    result = t5_relative_position_bucket(torch.tensor([relative]), bidirectional=True, num_buckets=32, max_distance=128)
    assert result.dtype == torch.long
    assert result.item() == bucket


@pytest.mark.parametrize(("relative", "bucket"), UNIDIRECTIONAL_CASES)
def test_t5_bucket_hand_checked_unidirectional(relative, bucket):
    result = t5_relative_position_bucket(
        torch.tensor([relative]), bidirectional=False, num_buckets=32, max_distance=128
    )
    assert result.item() == bucket


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize(("num_buckets", "max_distance"), [(32, 128), (16, 64), (8, 20), (64, 300), (6, 9), (4, 50)])
def test_t5_bucket_matches_hugging_face(bidirectional, num_buckets, max_distance):
    rel = torch.arange(-3 * max_distance, 3 * max_distance + 1)
    expected = hf_t5_relative_position_bucket(rel, bidirectional, num_buckets, max_distance)
    result = t5_relative_position_bucket(
        rel, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    assert torch.equal(result, expected)
    # Any integer dtype and any shape.
    grid = relative_positions(9, 13).to(torch.int32)
    assert torch.equal(
        t5_relative_position_bucket(grid, bidirectional, num_buckets, max_distance),
        hf_t5_relative_position_bucket(grid.long(), bidirectional, num_buckets, max_distance),
    )


@settings(max_examples=40, deadline=None)
@given(
    bidirectional=st.booleans(),
    num_buckets=st.integers(4, 64),
    extra_distance=st.integers(1, 200),
)
def test_t5_buckets_monotone_in_distance_and_in_range(bidirectional, num_buckets, extra_distance):
    per_direction = num_buckets // 2 if bidirectional else num_buckets
    max_distance = per_direction // 2 + extra_distance
    distance = torch.arange(0, 2 * max_distance + 5)
    past = t5_relative_position_bucket(-distance, bidirectional, num_buckets, max_distance)
    future = t5_relative_position_bucket(distance, bidirectional, num_buckets, max_distance)
    for buckets in (past, future):
        assert torch.all(buckets >= 0) and torch.all(buckets < num_buckets)
        assert torch.all(buckets[1:] >= buckets[:-1])  # farther never maps to a nearer bucket
    max_exact = per_direction // 2
    # Exact range: one bucket per distance.
    assert torch.equal(past[:max_exact], distance[:max_exact])
    # Saturation: everything at or beyond max_distance shares the direction's last bucket.
    assert torch.all(past[max_distance:] == per_direction - 1)
    if bidirectional:
        assert torch.all(future[1:] >= per_direction)  # future keys use the upper half
        assert torch.all(future[max_distance:] == 2 * per_direction - 1)
        assert torch.equal(future[1:max_exact], distance[1:max_exact] + per_direction)
    else:
        assert torch.all(future == 0)
    assert past[0] == 0 and future[0] == 0


def test_t5_bias_is_table_lookup_and_toeplitz():
    module = T5RelativePositionBias(num_heads=3, num_buckets=8, max_distance=20)
    lq, lk = 7, 30
    bias = module(lq, lk)
    assert bias.shape == (3, lq, lk)
    table = module.embedding.weight.detach()  # (num_buckets, heads)
    for i in range(lq):
        for j in range(lk):
            bucket = int(hf_t5_relative_position_bucket(torch.tensor(j - i), True, 8, 20))
            assert torch.equal(bias[:, i, j], table[bucket])
    # Toeplitz: depends on j - i only.
    assert torch.equal(bias[:, 1:, 1:], bias[:, :-1, :-1])


def test_t5_bias_unidirectional_ignores_the_future_and_is_trainable():
    module = T5RelativePositionBias(num_heads=2, num_buckets=8, max_distance=16, bidirectional=False)
    bias = module(6)
    future = torch.ones(6, 6, dtype=torch.bool).triu(1)
    table = module.embedding.weight.detach()
    assert torch.all(bias[:, future] == table[0][:, None])
    bias.sum().backward()
    assert module.embedding.weight.grad is not None and module.embedding.weight.grad.abs().sum() > 0


# --------------------------------------------------------------------------- ALiBi


def test_alibi_slopes_eight_heads():
    assert alibi_slopes(8).tolist() == [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]


def test_alibi_slopes_twelve_heads_by_hand():
    # The 8 slopes of 8 heads, then every other slope of 16 heads (2^-0.5, 2^-1, 2^-1.5, ...)
    # starting from the first: 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5.
    expected = [2.0**-e for e in (1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5)]
    torch.testing.assert_close(alibi_slopes(12), torch.tensor(expected))


@pytest.mark.parametrize("num_heads", [1, 2, 3, 4, 5, 6, 7, 12, 16, 20, 24, 32, 48, 64, 96])
def test_alibi_slopes_match_paper_reference(num_heads):
    slopes = alibi_slopes(num_heads)
    assert slopes.shape == (num_heads,) and slopes.dtype == torch.float32
    torch.testing.assert_close(slopes, torch.tensor(paper_alibi_slopes(num_heads), dtype=torch.float32))
    if math.log2(num_heads).is_integer():
        # Geometric sequence 2^(-8k/n), k = 1..n.
        formula = [2.0 ** (-8 * k / num_heads) for k in range(1, num_heads + 1)]
        torch.testing.assert_close(slopes, torch.tensor(formula, dtype=torch.float32))
    assert torch.all(slopes > 0) and torch.all(slopes <= 1)


@SETTINGS
@given(num_heads=st.integers(1, 16), lq=lengths, lk=lengths)
def test_alibi_bias_is_minus_slope_times_distance(num_heads, lq, lk):
    bias = alibi_bias(num_heads, lq, lk)
    assert bias.shape == (num_heads, lq, lk) and bias.dtype == torch.float32
    slopes = paper_alibi_slopes(num_heads)
    expected = torch.tensor(
        [[[-slopes[h] * abs(j - i) for j in range(lk)] for i in range(lq)] for h in range(num_heads)],
        dtype=torch.float32,
    )
    torch.testing.assert_close(bias, expected)
    assert torch.equal(alibi_bias(num_heads, lq), alibi_bias(num_heads, lq, lq))


# --------------------------------------------------------------------------- Shaw et al.


@settings(max_examples=15, deadline=None)
@given(
    lead=leading_shapes,
    lq=st.integers(1, 5),
    lk=st.integers(1, 5),
    d=st.integers(1, 4),
    dv=st.integers(1, 4),
    seed=seeds,
)
def test_shaw_attention_matches_per_element_loop(lead, lq, lk, d, dv, seed):
    q, k = randn(*lead, lq, d, seed=seed), randn(*lead, lk, d, seed=seed + 1)
    v = randn(*lead, lk, dv, seed=seed + 2)
    a_key, a_value = randn(lq, lk, d, seed=seed + 3), randn(lq, lk, dv, seed=seed + 4)
    output, weights = shaw_attention(q, k, v, a_key, a_value)
    ref_out, ref_weights = shaw_loop(q, k, v, a_key, a_value)
    torch.testing.assert_close(weights, ref_weights)
    torch.testing.assert_close(output, ref_out)
    # Without value embeddings, only the keys carry position.
    output_k_only, _ = shaw_attention(q, k, v, a_key)
    torch.testing.assert_close(output_k_only, shaw_loop(q, k, v, a_key, None)[0])


def test_shaw_attention_with_zero_embeddings_is_plain_attention():
    q, k, v = randn(2, 4, 3, seed=0), randn(2, 5, 3, seed=1), randn(2, 5, 3, seed=2)
    zeros = torch.zeros(4, 5, 3, dtype=torch.float64)
    mask = torch.ones(4, 5, dtype=torch.bool).tril()
    output, _ = shaw_attention(q, k, v, zeros, zeros, mask=mask)
    torch.testing.assert_close(output, torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask))


def test_relative_position_embedding_is_clipped_toeplitz_lookup():
    module = RelativePositionEmbedding(max_distance=2, dim=3)
    table = module.embedding.weight.detach()
    assert table.shape == (5, 3)
    out = module(4, 7)
    assert out.shape == (4, 7, 3)
    for i in range(4):
        for j in range(7):
            assert torch.equal(out[i, j], table[max(-2, min(2, j - i)) + 2])
    assert torch.equal(out[1:, 1:], out[:-1, :-1])  # Toeplitz
    # Clipping: every key at least 2 after the query reads the same vector.
    assert torch.equal(out[0, 2], out[0, 6]) and torch.equal(out[3, 0], out[2, 0])
    assert not torch.equal(out[0, 1], out[0, 2])


def test_relative_position_embedding_zero_distance_has_one_vector():
    module = RelativePositionEmbedding(max_distance=0, dim=2)
    out = module(3)
    assert torch.equal(out, module.embedding.weight.detach()[0].expand(3, 3, 2))


# --------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize("num_heads", [0, -1])
def test_rejects_num_heads_below_one(num_heads):
    with pytest.raises(ValueError, match="num_heads"):
        alibi_slopes(num_heads)
    with pytest.raises(ValueError, match="num_heads"):
        alibi_bias(num_heads, 3)
    with pytest.raises(ValueError, match="num_heads"):
        T5RelativePositionBias(num_heads)


def test_t5_rejects_too_few_buckets_and_too_small_max_distance():
    rel = relative_positions(3)
    with pytest.raises(ValueError, match="num_buckets"):
        t5_relative_position_bucket(rel, bidirectional=True, num_buckets=3)
    with pytest.raises(ValueError, match="num_buckets"):
        t5_relative_position_bucket(rel, bidirectional=False, num_buckets=1)
    # 32 bidirectional buckets: max_exact = 8, so max_distance must exceed 8.
    with pytest.raises(ValueError, match="max_distance"):
        t5_relative_position_bucket(rel, num_buckets=32, max_distance=8)
    t5_relative_position_bucket(rel, num_buckets=32, max_distance=9)
    with pytest.raises(ValueError, match="max_distance"):
        t5_relative_position_bucket(rel, bidirectional=False, num_buckets=32, max_distance=16)
    with pytest.raises(ValueError, match="num_buckets"):
        T5RelativePositionBias(2, num_buckets=2)
    with pytest.raises(ValueError, match="max_distance"):
        T5RelativePositionBias(2, num_buckets=32, max_distance=4)


def test_t5_rejects_non_integer_relative_positions():
    with pytest.raises(TypeError, match="relative_position"):
        t5_relative_position_bucket(torch.tensor([1.0, -2.0]))
    with pytest.raises(TypeError, match="relative_position"):
        t5_relative_position_bucket(torch.tensor([True]))
    with pytest.raises(TypeError, match="relative_position"):
        t5_relative_position_bucket([1, 2])


def test_rejects_negative_max_distance_and_bad_lengths():
    with pytest.raises(ValueError, match="max_distance"):
        clipped_relative_positions(3, max_distance=-1)
    with pytest.raises(ValueError, match="max_distance"):
        RelativePositionEmbedding(-1, 4)
    with pytest.raises(ValueError, match="dim"):
        RelativePositionEmbedding(2, 0)
    with pytest.raises(ValueError, match="q_len"):
        relative_positions(0)
    with pytest.raises(ValueError, match="k_len"):
        relative_positions(2, 0)
    with pytest.raises(ValueError, match="q_len"):
        alibi_bias(2, 0)


def test_shaw_rejects_wrong_embedding_shapes():
    q, k, v = randn(3, 4, seed=0), randn(5, 4, seed=1), randn(5, 2, seed=2)
    good_key = randn(3, 5, 4, seed=3)
    with pytest.raises(ValueError, match="key_embeddings"):
        shaw_attention(q, k, v, randn(5, 3, 4, seed=3))
    with pytest.raises(ValueError, match="key_embeddings"):
        shaw_attention(q, k, v, randn(3, 5, 2, seed=3))
    with pytest.raises(ValueError, match="value_embeddings"):
        shaw_attention(q, k, v, good_key, randn(3, 5, 4, seed=4))
    with pytest.raises(TypeError, match="key_embeddings"):
        shaw_attention(q, k, v, good_key.numpy())
    with pytest.raises(ValueError, match="q and k"):
        shaw_attention(q, randn(5, 3, seed=1), v, good_key)
    with pytest.raises(ValueError, match="k and v"):
        shaw_attention(q, k, randn(4, 2, seed=2), good_key)


# --------------------------------------------------------------------------- cached decoding


@SETTINGS
@given(lq=lengths, lk=lengths, offset=st.integers(-20, 20))
def test_query_offset_moves_the_queries(lq, lk, offset):
    # Independent formula: query r sits at position offset + r, key j at j.
    expected = torch.tensor([[j - (offset + r) for j in range(lk)] for r in range(lq)])
    torch.testing.assert_close(relative_positions(lq, lk, query_offset=offset), expected)
    torch.testing.assert_close(
        clipped_relative_positions(lq, lk, max_distance=3, query_offset=offset), expected.clamp(-3, 3)
    )


@pytest.mark.parametrize("new_tokens", [1, 3])
def test_cached_decoding_reproduces_the_last_rows_of_the_full_bias(new_tokens):
    # Decoding the last `new_tokens` tokens against a cache of all 9 keys must give the same bias as
    # the last rows of the full 9 x 9 computation: query_offset = Lk - Lq aligns the queries.
    length, offset = 9, 9 - new_tokens
    t5 = T5RelativePositionBias(4, num_buckets=8, max_distance=6, bidirectional=False)
    shaw = RelativePositionEmbedding(3, 5)
    pairs = [
        (alibi_bias(4, new_tokens, length, query_offset=offset), alibi_bias(4, length)[:, offset:]),
        (t5(new_tokens, length, query_offset=offset), t5(length)[:, offset:]),
        (shaw(new_tokens, length, query_offset=offset), shaw(length)[offset:]),
    ]
    for cached, full in pairs:
        torch.testing.assert_close(cached, full, rtol=0, atol=0)
    # Without the offset, the newest query is treated as position 0: the newest keys get the
    # largest ALiBi penalty, the opposite of what the model was trained with.
    misaligned = alibi_bias(4, 1, length)[:, 0]
    assert bool((misaligned[:, -1] < misaligned[:, 0]).all())


def test_cached_decoding_attention_output_equals_full_causal_attention():
    # End to end with T5's bias: the last query attending over a cache of all keys, with the
    # offset, produces the same output as the last row of full causal attention.
    q, k, v = (randn(2, 4, 7, 8, seed=s) for s in (60, 61, 62))
    t5 = T5RelativePositionBias(4, num_buckets=8, max_distance=6, bidirectional=False).double()
    full, _ = scaled_dot_product_attention(q, k, v, mask=causal_mask(7), bias=t5(7))
    last, _ = scaled_dot_product_attention(q[..., -1:, :], k, v, bias=t5(1, 7, query_offset=6))
    torch.testing.assert_close(last, full[..., -1:, :], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("offset", [1.5, "3", True, None])
def test_rejects_non_integer_query_offset(offset):
    for call in (
        lambda: relative_positions(2, 3, query_offset=offset),
        lambda: alibi_bias(2, 2, 3, query_offset=offset),
        lambda: T5RelativePositionBias(2)(2, 3, query_offset=offset),
        lambda: RelativePositionEmbedding(2, 4)(2, 3, query_offset=offset),
    ):
        with pytest.raises(TypeError, match="query_offset must be an integer"):
            call()
