"""Scaled dot-product attention and causal masks, checked against PyTorch's fused attention.

``torch.nn.functional.scaled_dot_product_attention`` (SDPA) is the independent reference.
Behaviour of SDPA for fully masked rows in the installed torch version: a query whose keys are
*all* masked out gets an output of zeros (recent PyTorch uses a "safe softmax" in the math and
CPU kernels; older releases returned NaN).  ``test_fully_masked_rows_give_zero_output`` checks
this first, so a future torch that changes it fails loudly with an explicit message instead of
silently changing the meaning of the comparison.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import leading_shapes, randn, seeds
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import attention_weights, causal_mask, scaled_dot_product_attention

lengths = st.integers(min_value=1, max_value=7)
dims = st.integers(min_value=1, max_value=8)
SETTINGS = settings(max_examples=40, deadline=None)


def numpy_attention(q, k, v, mask=None, bias=None):
    """Plain NumPy float64 attention, loop over queries; fully masked rows -> zeros."""
    q, k, v = (np.asarray(t, dtype=np.float64) for t in (q, k, v))
    lead = q.shape[:-2]
    lq, d = q.shape[-2:]
    lk, dv = v.shape[-2:]
    full = lead + (lq, lk)
    m = np.ones(full, dtype=bool) if mask is None else np.broadcast_to(np.asarray(mask), full)
    b = np.zeros(full) if bias is None else np.broadcast_to(np.asarray(bias, dtype=np.float64), full)
    out = np.zeros(lead + (lq, dv))
    weights = np.zeros(full)
    for index in np.ndindex(*lead):
        for i in range(lq):
            allowed = [j for j in range(lk) if m[index + (i, j)]]
            if not allowed:
                continue
            scores = {j: sum(q[index + (i, c)] * k[index + (j, c)] for c in range(d)) / math.sqrt(d)
                      + b[index + (i, j)] for j in allowed}
            top = max(scores.values())
            exps = {j: math.exp(s - top) for j, s in scores.items()}
            total = sum(exps.values())
            for j in allowed:
                weights[index + (i, j)] = exps[j] / total
                out[index + (i,)] += weights[index + (i, j)] * v[index + (j,)]
    return out, weights


def random_qkv(lead, lq, lk, d, dv, seed):
    q = randn(*lead, lq, d, seed=seed)
    k = randn(*lead, lk, d, seed=seed + 1)
    v = randn(*lead, lk, dv, seed=seed + 2)
    return q, k, v


# --------------------------------------------------------------------------- agreement with SDPA


@SETTINGS
@given(lead=leading_shapes, lq=lengths, lk=lengths, d=dims, dv=dims, seed=seeds)
def test_matches_torch_sdpa_without_mask(lead, lq, lk, d, dv, seed):
    q, k, v = random_qkv(lead, lq, lk, d, dv, seed)
    output, weights = scaled_dot_product_attention(q, k, v)
    assert output.shape == (*lead, lq, dv)
    torch.testing.assert_close(output, F.scaled_dot_product_attention(q, k, v))
    torch.testing.assert_close(weights.sum(-1), torch.ones(*lead, lq, dtype=q.dtype))


@SETTINGS
@given(lead=leading_shapes, lq=lengths, lk=lengths, d=dims, dv=dims, seed=seeds)
def test_matches_torch_sdpa_with_boolean_mask(lead, lq, lk, d, dv, seed):
    q, k, v = random_qkv(lead, lq, lk, d, dv, seed)
    # True = may attend, in both APIs. Some rows may end up fully masked: both give zeros.
    mask = torch.rand(lq, lk, generator=torch.Generator().manual_seed(seed)) < 0.6
    output, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    torch.testing.assert_close(output, F.scaled_dot_product_attention(q, k, v, attn_mask=mask))
    # Masked positions get exactly zero weight.
    assert torch.all(weights.masked_select(~mask.expand_as(weights)) == 0)


@SETTINGS
@given(lead=leading_shapes, lq=lengths, lk=lengths, d=dims, dv=dims, seed=seeds)
def test_bias_matches_float_attn_mask_of_sdpa(lead, lq, lk, d, dv, seed):
    q, k, v = random_qkv(lead, lq, lk, d, dv, seed)
    bias = 3 * randn(lq, lk, seed=seed + 3)
    output, weights = scaled_dot_product_attention(q, k, v, bias=bias)
    torch.testing.assert_close(output, F.scaled_dot_product_attention(q, k, v, attn_mask=bias))
    torch.testing.assert_close(weights.sum(-1), torch.ones(*lead, lq, dtype=q.dtype))


def test_bias_with_minus_infinity_entries_masks_like_sdpa():
    # ALiBi/causal implementations sometimes mask through the bias; every row keeps one finite key.
    q, k, v = random_qkv((2, 3), 4, 6, 5, 3, seed=9)
    bias = randn(4, 6, seed=10).masked_fill(torch.ones(4, 6).triu(1).bool(), float("-inf"))
    output, weights = scaled_dot_product_attention(q, k, v, bias=bias)
    torch.testing.assert_close(output, F.scaled_dot_product_attention(q, k, v, attn_mask=bias))
    assert torch.all(weights[..., torch.isinf(bias)] == 0)


def test_row_of_minus_infinity_bias_attends_to_nothing_like_sdpa():
    q, k, v = random_qkv((2,), 3, 4, 5, 2, seed=11)
    bias = torch.zeros(3, 4)
    bias[1] = float("-inf")  # query 1 is cut off from every key through the bias alone
    output, weights = scaled_dot_product_attention(q, k, v, bias=bias)
    assert not torch.isnan(weights).any()
    assert torch.all(weights[..., 1, :] == 0) and torch.all(output[..., 1, :] == 0)
    torch.testing.assert_close(output, F.scaled_dot_product_attention(q, k, v, attn_mask=bias))


@SETTINGS
@given(lead=leading_shapes, lq=lengths, lk=lengths, d=dims, dv=dims, seed=seeds)
def test_bias_and_mask_together_match_sdpa_with_combined_float_mask(lead, lq, lk, d, dv, seed):
    q, k, v = random_qkv(lead, lq, lk, d, dv, seed)
    bias = randn(lq, lk, seed=seed + 3)
    mask = torch.rand(lq, lk, generator=torch.Generator().manual_seed(seed)) < 0.7
    output, _ = scaled_dot_product_attention(q, k, v, mask=mask, bias=bias)
    combined = bias.masked_fill(~mask, float("-inf"))
    torch.testing.assert_close(output, F.scaled_dot_product_attention(q, k, v, attn_mask=combined))


@SETTINGS
@given(lead=leading_shapes, lq=lengths, lk=lengths, d=dims, dv=dims, seed=seeds)
def test_causal_mask_matches_sdpa_is_causal(lead, lq, lk, d, dv, seed):
    q, k, v = random_qkv(lead, lq, lk, d, dv, seed)
    output, weights = scaled_dot_product_attention(q, k, v, mask=causal_mask(lq, lk))
    torch.testing.assert_close(output, F.scaled_dot_product_attention(q, k, v, is_causal=True))
    # Query i never looks at a key j > i.
    future = torch.ones(lq, lk, dtype=torch.bool).triu(diagonal=1)
    assert torch.all(weights[..., future] == 0)


def test_batched_multihead_shapes_with_lq_ne_lk_and_dv_ne_d():
    b, h, lq, lk, d, dv = 2, 3, 4, 6, 5, 7
    q, k, v = random_qkv((b, h), lq, lk, d, dv, seed=11)
    mask = randn(b, 1, lq, lk, seed=5) > -0.5  # broadcast over heads
    output, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    assert output.shape == (b, h, lq, dv) and weights.shape == (b, h, lq, lk)
    torch.testing.assert_close(output, F.scaled_dot_product_attention(q, k, v, attn_mask=mask))


@settings(max_examples=15, deadline=None)
@given(lead=leading_shapes, lq=lengths, lk=lengths, d=dims, dv=dims, seed=seeds)
def test_matches_plain_numpy_loop_including_weights(lead, lq, lk, d, dv, seed):
    q, k, v = random_qkv(lead, lq, lk, d, dv, seed)
    mask = torch.rand(lq, lk, generator=torch.Generator().manual_seed(seed)) < 0.7
    bias = randn(lq, lk, seed=seed + 4)
    output, weights = scaled_dot_product_attention(q, k, v, mask=mask, bias=bias)
    ref_out, ref_weights = numpy_attention(q.numpy(), k.numpy(), v.numpy(), mask.numpy(), bias.numpy())
    np.testing.assert_allclose(weights.numpy(), ref_weights, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(output.numpy(), ref_out, rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------- weights and masking


@SETTINGS
@given(lq=lengths, lk=lengths, seed=seeds)
def test_attention_weights_rows_sum_to_one_or_zero(lq, lk, seed):
    scores = 5 * randn(2, lq, lk, seed=seed)
    mask = torch.rand(2, lq, lk, generator=torch.Generator().manual_seed(seed)) < 0.5
    weights = attention_weights(scores, mask=mask)
    expected = mask.any(-1).to(scores.dtype)  # 1 where some key is allowed, else 0
    torch.testing.assert_close(weights.sum(-1), expected)
    assert torch.all(weights >= 0) and not torch.isnan(weights).any()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fully_masked_rows_give_zero_output(dtype):
    q, k, v = (t.to(dtype) for t in random_qkv((2, 2), 3, 4, 8, 6, seed=3))
    mask = torch.ones(3, 4, dtype=torch.bool)
    mask[1] = False  # query 1 may attend to nothing
    output, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    assert torch.all(weights[..., 1, :] == 0) and torch.all(output[..., 1, :] == 0)
    assert torch.all(weights[..., [0, 2], :].sum(-1).sub(1).abs() < 1e-5)
    assert not torch.isnan(output).any()
    reference = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert not torch.isnan(reference).any(), (
        f"torch {torch.__version__} SDPA now returns NaN for fully masked rows; "
        "posenc deliberately returns zeros (the convention of torch's safe softmax)"
    )
    assert torch.all(reference[..., 1, :] == 0)
    torch.testing.assert_close(output, reference)


def test_extreme_scores_do_not_overflow():
    q = torch.tensor([[1000.0, 0.0]], dtype=torch.float64)
    k = torch.tensor([[1000.0, 0.0], [-1000.0, 0.0]], dtype=torch.float64)
    v = torch.tensor([[1.0], [2.0]], dtype=torch.float64)
    output, weights = scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(weights, torch.tensor([[1.0, 0.0]], dtype=torch.float64))
    torch.testing.assert_close(output, torch.tensor([[1.0]], dtype=torch.float64))


# --------------------------------------------------------------------------- causal_mask


@settings(max_examples=30, deadline=None)
@given(lq=st.integers(1, 12), lk=st.integers(1, 12))
def test_causal_mask_is_lower_triangular_ones(lq, lk):
    mask = causal_mask(lq, lk)
    assert mask.dtype == torch.bool
    assert torch.equal(mask, torch.ones(lq, lk).tril().bool())
    for i in range(lq):
        for j in range(lk):
            assert bool(mask[i, j]) == (j <= i)


def test_causal_mask_defaults_to_square():
    assert torch.equal(causal_mask(5), causal_mask(5, 5))
    assert causal_mask(5).shape == (5, 5)


# --------------------------------------------------------------------------- bad inputs


def test_rejects_mismatched_query_key_dimension():
    q, k, v = randn(3, 4, seed=0), randn(5, 3, seed=1), randn(5, 2, seed=2)
    with pytest.raises(ValueError, match=r"q and k .* last dimension"):
        scaled_dot_product_attention(q, k, v)


def test_rejects_mismatched_number_of_keys_and_values():
    q, k, v = randn(3, 4, seed=0), randn(5, 4, seed=1), randn(6, 2, seed=2)
    with pytest.raises(ValueError, match=r"k and v .* keys"):
        scaled_dot_product_attention(q, k, v)


def test_rejects_non_boolean_mask():
    q, k, v = random_qkv((), 3, 5, 4, 2, seed=0)
    with pytest.raises(TypeError, match="mask"):
        scaled_dot_product_attention(q, k, v, mask=torch.ones(3, 5))
    with pytest.raises(TypeError, match="mask"):
        scaled_dot_product_attention(q, k, v, mask=[[True] * 5] * 3)


@pytest.mark.parametrize("shape", [(5, 3), (3, 4), (2, 3, 5), (4, 1)])
def test_rejects_mask_not_broadcastable_to_scores(shape):
    q, k, v = random_qkv((), 3, 5, 4, 2, seed=0)
    with pytest.raises(ValueError, match="mask"):
        scaled_dot_product_attention(q, k, v, mask=torch.ones(shape, dtype=torch.bool))


def test_rejects_bad_bias():
    q, k, v = random_qkv((), 3, 5, 4, 2, seed=0)
    with pytest.raises(ValueError, match="bias"):
        scaled_dot_product_attention(q, k, v, bias=torch.zeros(5, 3, dtype=torch.float64))
    with pytest.raises(TypeError, match="bias"):
        scaled_dot_product_attention(q, k, v, bias=torch.zeros(3, 5, dtype=torch.long))


def test_rejects_bad_qkv_types_and_ranks():
    q, k, v = random_qkv((), 3, 5, 4, 2, seed=0)
    with pytest.raises(TypeError, match="q"):
        scaled_dot_product_attention(q.numpy(), k, v)
    with pytest.raises(TypeError, match="k"):
        scaled_dot_product_attention(q, k.long(), v)
    with pytest.raises(ValueError, match="v"):
        scaled_dot_product_attention(q, k, torch.ones(5, dtype=torch.float64))


@pytest.mark.parametrize(("args", "name"), [((0,), "q_len"), ((-2, 3), "q_len"), ((3, 0), "k_len")])
def test_causal_mask_rejects_lengths_below_one(args, name):
    with pytest.raises(ValueError, match=name):
        causal_mask(*args)


def test_causal_mask_rejects_non_integer_lengths():
    with pytest.raises(TypeError, match="q_len"):
        causal_mask(2.0)
    with pytest.raises(TypeError, match="k_len"):
        causal_mask(2, True)
