"""Auto-checkers of the exercises: correct implementations pass, typical mistakes are diagnosed.

Every checker is fed the posenc reference, an independent correct implementation written here,
and each typical wrong implementation its docstring promises to recognise; the tests assert on
the verdict *and* on the key phrase of the diagnosis. Shared behaviour (not implemented yet,
exceptions, wrong return types, the global random state, argument validation, the report) is
tested for every checker at once.
"""

from __future__ import annotations

import math
from functools import partial

import pytest
import torch
from conftest import hf_t5_relative_position_bucket, paper_alibi_slopes, seeds
from hypothesis import given, settings

import posenc
from posenc import (
    alibi_slopes,
    apply_rope,
    apply_rope_2d,
    clipped_relative_positions,
    dynamic_ntk_frequencies,
    llama3_frequencies,
    ntk_frequencies,
    pi_frequencies,
    scaled_dot_product_attention,
    sinusoidal_encoding,
    t5_relative_position_bucket,
    yarn_frequencies,
)
from posenc.exercises import (
    CheckResult,
    check_alibi_slopes,
    check_apply_rope,
    check_apply_rope_2d,
    check_attention,
    check_dynamic_ntk_frequencies,
    check_llama3_frequencies,
    check_ntk_frequencies,
    check_padded_positions,
    check_pi_frequencies,
    check_relative_shift,
    check_repeat_kv,
    check_shaw_index,
    check_sinusoidal,
    check_t5_bucket,
    check_yarn_frequencies,
)


def feedback(result: CheckResult) -> str:
    return "\n".join(result.feedback)


def assert_fails_with(result: CheckResult, *phrases: str) -> None:
    assert isinstance(result, CheckResult)
    assert bool(result) is False, str(result)
    text = feedback(result)
    for phrase in phrases:
        assert phrase in text, f"{phrase!r} not in the feedback:\n{result}"


def assert_passes(result: CheckResult) -> None:
    assert isinstance(result, CheckResult)
    assert bool(result) is True, str(result)
    assert result.passed and result.cases > 0 and result.feedback


# --------------------------------------------------------------------------- attention


def reference_attention(q, k, v, mask=None):
    return scaled_dot_product_attention(q, k, v, mask)


def make_attention(scale=None, axis=-1, mask_mode="right", output="weights @ v"):
    """An attention implementation with one knob per typical mistake (defaults: correct)."""

    def attention(q, k, v, mask=None):
        d = q.shape[-1]
        factor = math.sqrt(d) if scale is None else scale(q, k, v)
        scores = q @ k.transpose(-2, -1) / factor
        if mask is not None and mask_mode == "right":
            scores = scores.masked_fill(~mask, float("-inf"))
        elif mask is not None and mask_mode == "inverted":
            scores = scores.masked_fill(mask, float("-inf"))
        elif mask is not None and mask_mode == "zero":
            scores = scores.masked_fill(~mask, 0.0)
        weights = torch.softmax(scores, dim=axis)
        if output == "weights @ v":
            out = weights @ v
        elif output == "transposed":
            out = weights.transpose(-2, -1) @ v
        else:
            out = weights @ k
        return out, weights

    return attention


def independent_attention(q, k, v, mask=None):
    """Row by row with explicit exponentials: a correct implementation that shares no code."""
    scores = torch.einsum("...qd,...kd->...qk", q, k) * q.shape[-1] ** -0.5
    if mask is not None:
        scores = torch.where(mask, scores, torch.full_like(scores, -math.inf))
    exponentials = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
    weights = exponentials / exponentials.sum(dim=-1, keepdim=True)
    return torch.einsum("...qk,...kv->...qv", weights, v), weights


@pytest.mark.parametrize("fn", [reference_attention, independent_attention, make_attention()])
def test_attention_correct_implementations_pass(fn):
    result = check_attention(fn)
    assert_passes(result)
    assert "scaled_dot_product_attention" in feedback(result)


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (make_attention(axis=-2), ["softmax over the wrong axis", "every column sums to 1", "dim=-1"]),
        (make_attention(scale=lambda q, k, v: 1.0), ["without scaling", "sqrt(d) = sqrt(12)"]),
        (make_attention(scale=lambda q, k, v: q.shape[-1]), ["you scale the scores by d = 12"]),
        (make_attention(scale=lambda q, k, v: math.sqrt(v.shape[-1])), ["sqrt(dv) = sqrt(5)", "value dimension"]),
        (make_attention(scale=lambda q, k, v: v.shape[-1]), ["you scale by dv = 5"]),
        (make_attention(scale=lambda q, k, v: math.sqrt(k.shape[-2])), ["number of keys"]),
        (make_attention(scale=lambda q, k, v: 1 / math.sqrt(q.shape[-1])), ["you multiply the scores by sqrt(d)"]),
        (make_attention(mask_mode="inverted"), ["mask convention inverted", "True means \"may attend\""]),
        (make_attention(mask_mode="ignored"), ["the mask is ignored", "unmasked softmax"]),
        (make_attention(mask_mode="zero"), ["must get weight exactly 0", "not with 0"]),
        (make_attention(output="transposed"), ["weights are right but the output is not", "weightsᵀ @ v"]),
        (make_attention(output="keys"), ["weights are right but the output is not", "weights @ k"]),
    ],
)
def test_attention_mistakes_are_diagnosed(fn, phrases):
    assert_fails_with(check_attention(fn), *phrases)


def test_attention_the_chapters_buggy_attention_is_diagnosed():
    def buggy_attention(q, k, v, mask=None):  # ex-perm-3
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-2)
        return weights @ v, weights

    assert_fails_with(check_attention(buggy_attention), "softmax over the wrong axis")


def test_attention_return_mistakes_are_reported():
    assert_fails_with(check_attention(lambda q, k, v, mask=None: reference_attention(q, k, v, mask)[0]),
                      "expected a pair (output, weights)")
    assert_fails_with(check_attention(lambda q, k, v, mask=None: reference_attention(q, k, v, mask)[::-1]),
                      "return (output, weights), output first")
    assert_fails_with(
        check_attention(lambda q, k, v, mask=None: (reference_attention(q, k, v, mask)[0].double(),
                                                    reference_attention(q, k, v, mask)[1].double())),
        "dtype float64; expected float32",
    )
    assert_fails_with(
        check_attention(lambda q, k, v, mask=None: (reference_attention(q, k, v, mask)[0][..., :1],
                                                    reference_attention(q, k, v, mask)[1])),
        "output of shape", "expected shape",
    )


def test_attention_in_place_scaling_is_reported():
    def scales_in_place(q, k, v, mask=None):
        q /= math.sqrt(q.shape[-1])
        return reference_attention(q * math.sqrt(q.shape[-1]), k, v, mask)

    assert_fails_with(check_attention(scales_in_place), "modified its input q in place")


def test_attention_batch_failure_names_the_shapes():
    def two_dimensional_only(q, k, v, mask=None):
        scores = q @ k.T / math.sqrt(q.shape[-1])  # .T is wrong for batched inputs
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(-1)
        return weights @ v, weights

    result = check_attention(two_dimensional_only)
    assert_fails_with(result, "q of shape (2, 3, 4, 8)", "raised")


# --------------------------------------------------------------------------- padded positions


def reference_positions(input_ids, padding_idx=1):
    """Hugging Face's ``create_position_ids_from_input_ids``."""
    mask = input_ids.ne(padding_idx).int()
    incremental_indices = torch.cumsum(mask, dim=1).type_as(mask) * mask
    return incremental_indices.long() + padding_idx


def loop_positions(input_ids, padding_idx=1):
    """A row-by-row loop in Python: an independent correct implementation."""
    rows = []
    for row in input_ids.tolist():
        count, positions = 0, []
        for token in row:
            if token == padding_idx:
                positions.append(padding_idx)
            else:
                count += 1
                positions.append(padding_idx + count)
        rows.append(positions)
    return torch.tensor(rows)


def buggy_positions(input_ids, padding_idx=1):  # ex-abs-5
    seq_len = input_ids.shape[-1]
    return torch.arange(seq_len).expand_as(input_ids) + padding_idx + 1


def slots_but_padding_set(input_ids, padding_idx=1):
    slots = torch.arange(input_ids.shape[-1]).expand_as(input_ids) + padding_idx + 1
    return torch.where(input_ids.ne(padding_idx), slots, padding_idx)


def padding_not_set(input_ids, padding_idx=1):
    return torch.cumsum(input_ids.ne(padding_idx).long(), dim=-1) + padding_idx


def starts_at_padding_idx(input_ids, padding_idx=1):
    mask = input_ids.ne(padding_idx).long()
    return torch.where(mask.bool(), torch.cumsum(mask, -1) + padding_idx - 1, padding_idx)


def starts_two_after(input_ids, padding_idx=1):
    mask = input_ids.ne(padding_idx).long()
    return torch.cumsum(mask, -1) * mask + (padding_idx + 1) * mask + padding_idx * (1 - mask)


def ignores_padding_idx(input_ids, padding_idx=1):
    return reference_positions(input_ids, 1)


def hard_codes_offset(input_ids, padding_idx=1):
    mask = input_ids.ne(padding_idx).long()
    return torch.cumsum(mask, -1) * mask + 1 * mask + padding_idx * (1 - mask)


@pytest.mark.parametrize("fn", [reference_positions, loop_positions])
@pytest.mark.parametrize("padding_idx", [1, 0, 3])
def test_padded_positions_correct_implementations_pass(fn, padding_idx):
    assert_passes(check_padded_positions(fn, padding_idx=padding_idx))


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (buggy_positions, ["counts slots instead of real tokens", "left padding", "cumulative sum"]),
        (slots_but_padding_set, ["counts slots instead of real tokens", "padding_idx + 1 = 2"]),
        (padding_not_set, ["padding tokens are not set to padding_idx", "multiply the cumulative count by the mask"]),
        (starts_at_padding_idx, ["off by one (-1)", "you start at 1 = padding_idx"]),
        (starts_two_after, ["off by one (+1)", "you start at 3"]),
        (ignores_padding_idx, ["the padding_idx argument is ignored", "behaves as if padding_idx were 1"]),
        (hard_codes_offset, ["the padding_idx argument is ignored", "numbers tokens from 1 + 1 = 2"]),
    ],
)
def test_padded_positions_mistakes_are_diagnosed(fn, phrases):
    assert_fails_with(check_padded_positions(fn), *phrases)


def test_padded_positions_right_padding_only_bug_names_a_left_padded_row():
    result = check_padded_positions(buggy_positions)
    assert "left padding" in feedback(result).split("counts slots")[1].split("\n")[0]


def test_padded_positions_dtype_and_shape():
    assert_fails_with(check_padded_positions(lambda ids, padding_idx=1: reference_positions(ids, padding_idx).float()),
                      "dtype float32", "torch.long")
    assert_fails_with(check_padded_positions(lambda ids, padding_idx=1: reference_positions(ids, padding_idx)[0]),
                      "expected shape")
    narrow = check_padded_positions(lambda ids, padding_idx=1: reference_positions(ids, padding_idx).int())
    assert_passes(narrow)
    assert "int32" in feedback(narrow)


def test_padded_positions_argument_validation():
    with pytest.raises(ValueError, match="padding_idx"):
        check_padded_positions(reference_positions, padding_idx=-1)
    with pytest.raises(TypeError, match="padding_idx"):
        check_padded_positions(reference_positions, padding_idx=1.5)


# --------------------------------------------------------------------------- sinusoidal encoding


def reference_sinusoidal(seq_len, dim, base=10000.0):
    return sinusoidal_encoding(seq_len, dim, base)


def column_sinusoidal(seq_len, dim, base=10000.0):
    """Column by column in float64: an independent correct implementation."""
    table = torch.empty(seq_len, dim, dtype=torch.float64)
    positions = torch.arange(seq_len, dtype=torch.float64)
    for column in range(dim):
        theta = base ** (-(column - column % 2) / dim)
        table[:, column] = torch.sin(positions * theta) if column % 2 == 0 else torch.cos(positions * theta)
    return table.float()


def make_sinusoidal(layout="interleaved", cos_first=False, exponent=2, fixed_base=None, offset=0,
                    angle_dtype=torch.float64):
    def encoding(seq_len, dim, base=10000.0):
        base = fixed_base if fixed_base is not None else base
        positions = torch.arange(seq_len, dtype=angle_dtype)[:, None] + offset
        k = torch.arange(dim // 2, dtype=angle_dtype)
        angles = positions / torch.tensor(base, dtype=angle_dtype) ** (exponent * k / dim)
        first, second = (angles.cos(), angles.sin()) if cos_first else (angles.sin(), angles.cos())
        if layout == "interleaved":
            table = torch.stack((first, second), dim=-1).flatten(-2)
        else:
            table = torch.cat((first, second), dim=-1)
        return table.to(torch.float32)

    return encoding


def d2l_encoding(seq_len, dim, base=10000.0):
    """d2l's ``PositionalEncoding`` table: angles formed in float32."""
    table = torch.zeros(seq_len, dim)
    angles = torch.arange(seq_len, dtype=torch.float32).reshape(-1, 1) / torch.pow(
        base, torch.arange(0, dim, 2, dtype=torch.float32) / dim
    )
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles)
    return table


def published_encoding(seq_len, dim, base=10000.0):  # ex-sin-3
    positions = torch.arange(seq_len, dtype=torch.float64)[:, None]
    two_k = torch.arange(0, dim, 2, dtype=torch.float64)
    angles = positions / 1000 ** (two_k / dim)
    pairs = torch.stack((angles.sin(), angles.cos()), dim=-1)
    return pairs.flatten(-2).to(torch.float32)


def annotated_transformer_encoding(seq_len, dim, base=10000.0):
    """The Annotated Transformer's table: float32 angles through exp and log."""
    table = torch.zeros(seq_len, dim)
    position = torch.arange(0, seq_len).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, dim, 2) * -(math.log(base) / dim))
    table[:, 0::2] = torch.sin(position * div_term)
    table[:, 1::2] = torch.cos(position * div_term)
    return table


@pytest.mark.parametrize("fn", [reference_sinusoidal, column_sinusoidal, make_sinusoidal()])
def test_sinusoidal_correct_implementations_pass(fn):
    result = check_sinusoidal(fn)
    assert_passes(result)
    assert "precision note" not in feedback(result)


def test_sinusoidal_float64_output_passes():
    assert_passes(check_sinusoidal(lambda seq_len, dim, base=10000.0: sinusoidal_encoding(seq_len, dim, base,
                                                                                          dtype=torch.float64)))


@pytest.mark.parametrize("fn", [d2l_encoding, annotated_transformer_encoding])
def test_sinusoidal_float32_angles_pass_with_a_precision_note(fn):
    result = check_sinusoidal(fn)
    assert_passes(result)
    assert "precision note" in feedback(result)
    assert "float32" in feedback(result)


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (make_sinusoidal(cos_first=True), ["sine and cosine are swapped", "parity of your column indices",
                                           "expected sin(1·θ_0)", "= cos(1·θ_0)"]),
        (published_encoding, ["fits base 1000 instead of 10000", "1000 vs 10000"]),
        (make_sinusoidal(fixed_base=10000.0), ["ignores its base argument", "base=500"]),
        (make_sinusoidal(fixed_base=2000.0), ["fits base 2000 instead of 10000"]),
        (make_sinusoidal(layout="concatenated"), ["concatenated layout", "interleaved layout"]),
        (make_sinusoidal(exponent=1), ["base^(-ℓ/dim) instead of", "2ℓ"]),
        (make_sinusoidal(offset=1), ["positions start at 1 instead of 0"]),
        (make_sinusoidal(cos_first=True, exponent=1), ["sine and cosine are swapped", "base^(-ℓ/dim)"]),
        (make_sinusoidal(angle_dtype=torch.float16), ["not accurate enough", "half precision"]),
    ],
)
def test_sinusoidal_mistakes_are_diagnosed(fn, phrases):
    assert_fails_with(check_sinusoidal(fn), *phrases)


@pytest.mark.parametrize(
    ("change", "phrases"),
    [
        (lambda table: table.T, ["your table is transposed"]),
        (lambda table: table[:, :2], ["expected shape"]),
        (lambda table: table.half(), ["dtype float16"]),
        (lambda table: table.tolist(), ["returned a list", "torch.Tensor"]),
    ],
)
def test_sinusoidal_shape_and_dtype(change, phrases):
    def changed(seq_len, dim, base=10000.0):
        return change(reference_sinusoidal(seq_len, dim, base))

    assert_fails_with(check_sinusoidal(changed), *phrases)


# --------------------------------------------------------------------------- T5 buckets


def python_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """Offset by offset with Python's float64 math: correct, but may differ from T5's float32 at boundaries."""

    def one(offset):
        n, bucket = num_buckets, 0
        if bidirectional:
            n //= 2
            bucket = n if offset > 0 else 0
            distance = abs(offset)
        else:
            distance = max(-offset, 0)
        exact = n // 2
        if distance < exact:
            return bucket + distance
        large = exact + int(math.log(distance / exact) / math.log(max_distance / exact) * (n - exact))
        return bucket + min(large, n - 1)

    return torch.tensor([one(offset) for offset in relative_position.flatten().tolist()]).reshape(
        relative_position.shape
    )


def make_bucket(sign=1, exact_shift=0, cap=True, rounding="floor", fixed=None):
    """T5's bucketing with one knob per typical mistake (defaults: correct)."""

    def bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
        if fixed is not None:
            bidirectional = fixed.get("bidirectional", bidirectional)
            num_buckets = fixed.get("num_buckets", num_buckets)
            max_distance = fixed.get("max_distance", max_distance)
        relative_position = sign * relative_position
        buckets = torch.zeros_like(relative_position)
        if bidirectional:
            num_buckets //= 2
            buckets += (relative_position > 0).long() * num_buckets
            distance = relative_position.abs()
        else:
            distance = (-relative_position).clamp(min=0)
        max_exact = num_buckets // 2 + exact_shift
        value = torch.log(distance.clamp(min=1).float() / max_exact) / math.log(max_distance / max_exact) * (
            num_buckets - max_exact
        )
        value = {"floor": value.floor(), "round": value.round(), "ceil": value.ceil()}[rounding]
        large = max_exact + value.long()
        if cap:
            large = large.clamp(max=num_buckets - 1)
        return buckets + torch.where(distance < max_exact, distance, large)

    return bucket


@pytest.mark.parametrize(
    "fn", [t5_relative_position_bucket, hf_t5_relative_position_bucket, python_bucket, make_bucket()]
)
def test_t5_correct_implementations_pass(fn):
    assert_passes(check_t5_bucket(fn))


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (make_bucket(sign=-1), ["past and future are swapped", "i - j", "offset j - i = -1"]),
        (make_bucket(fixed={"bidirectional": True}), ["the bidirectional argument is ignored"]),
        (make_bucket(fixed={"bidirectional": False}), ["the bidirectional argument is ignored"]),
        (make_bucket(exact_shift=1), ["the exact range is off by one"]),
        (make_bucket(exact_shift=-1), ["the exact range is off by one"]),
        (make_bucket(cap=False), ["the last bucket is not capped", "max_distance = 128"]),
        (make_bucket(rounding="round"), ["you round the logarithmic part", "floors"]),
        (make_bucket(rounding="ceil"), ["ceiling"]),
        (make_bucket(fixed={"num_buckets": 32}), ["the num_buckets argument is ignored"]),
        (make_bucket(fixed={"max_distance": 128}), ["the max_distance argument is ignored"]),
    ],
)
def test_t5_mistakes_are_diagnosed(fn, phrases):
    result = check_t5_bucket(fn)
    assert_fails_with(result, *phrases, "setting bidirectional=", "expected bucket")


def test_t5_report_names_setting_offset_and_buckets():
    result = check_t5_bucket(make_bucket(sign=-1))
    assert "setting bidirectional=True, num_buckets=32, max_distance=128: offset j - i = -1" in feedback(result)
    assert "expected bucket 1, got 17" in feedback(result)


def test_t5_float_output_is_reported():
    assert_fails_with(check_t5_bucket(lambda r, bidirectional=True, num_buckets=32, max_distance=128:
                                      t5_relative_position_bucket(r, bidirectional, num_buckets, max_distance).float()),
                      "dtype float32")


# --------------------------------------------------------------------------- ALiBi slopes


def geometric_slopes(n):
    return torch.tensor([2.0 ** (-8 * h / n) for h in range(1, n + 1)])


def truncated_slopes(n):
    return torch.tensor(paper_alibi_slopes(2 ** math.ceil(math.log2(n)))[:n])


@pytest.mark.parametrize(
    "fn",
    [
        alibi_slopes,
        paper_alibi_slopes,
        lambda n: torch.tensor(paper_alibi_slopes(n)).double(),
        lambda n: alibi_slopes(n).numpy(),
    ],
)
def test_alibi_correct_implementations_pass(fn):
    assert_passes(check_alibi_slopes(fn))


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (geometric_slopes, ["for 6 heads, not a power of two", "geometric sequence", "every other slope of 8 heads"]),
        (truncated_slopes, ["you took the first 6 slopes of 8 heads"]),
        (lambda n: alibi_slopes(n).flip(0), ["reverse order"]),
        (lambda n: torch.tensor([2.0 ** (-h / n) for h in range(1, n + 1)]), ["missing the factor 8"]),
        (lambda n: torch.tensor([2.0 ** (-8 * h / n) for h in range(n)]), ["numbered from 0", "2^0 = 1"]),
        (lambda n: torch.tensor(paper_alibi_slopes(2 ** math.floor(math.log2(n))) + paper_alibi_slopes(
            2 * 2 ** math.floor(math.log2(n)))[1::2][: n - 2 ** math.floor(math.log2(n))]), ["odd-indexed"]),
    ],
)
def test_alibi_mistakes_are_diagnosed(fn, phrases):
    assert_fails_with(check_alibi_slopes(fn), *phrases)


def test_alibi_non_power_failures_get_the_construction_hint():
    result = check_alibi_slopes(geometric_slopes)
    assert "right for powers of two" in feedback(result)
    assert "num_heads = 6: expected" in feedback(result)


def test_alibi_return_mistakes():
    assert_fails_with(check_alibi_slopes(lambda n: alibi_slopes(n)[None]), "expected a 1-D tensor")
    assert_fails_with(check_alibi_slopes(lambda n: alibi_slopes(n)[:-1]), "expected one per head")
    assert_fails_with(check_alibi_slopes(lambda n: "slopes"), "returned a str")


# --------------------------------------------------------------------------- RoPE


def reference_rope(x, positions=None, base=10000.0):
    return apply_rope(x, positions, base=base)


def reference_half_rope(x, positions=None, base=10000.0):
    return apply_rope(x, positions, base=base, layout="half")


def pairs_rope(x, positions=None, base=10000.0):
    """The formula of ex-ropea-2, pair by pair with float64 angles: an independent implementation."""
    seq_len, dim = x.shape[-2:]
    if positions is None:
        positions = torch.arange(seq_len)
    theta = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    angles = positions.to(torch.float64)[:, None] * theta[None, :]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)


def make_rope(layout="interleaved", sign=1, use_positions=True, use_base=True, exponent=2, angle_dtype=torch.float64):
    def rope(x, positions=None, base=10000.0):
        seq_len, dim = x.shape[-2:]
        if positions is None or not use_positions:
            positions = torch.arange(seq_len)
        base = base if use_base else 10000.0
        theta = base ** (-exponent * torch.arange(dim // 2, dtype=angle_dtype) / dim)
        angles = sign * positions.to(angle_dtype)[:, None] * theta[None, :]
        cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
        if layout == "interleaved":
            a, b = x[..., 0::2], x[..., 1::2]
            return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
        a, b = x.chunk(2, dim=-1)
        return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)

    return rope


def rope_evens_odds(x, positions=None, base=10000.0):  # ex-ropeb-2, the seed bug
    dim = x.shape[-1]
    if positions is None:
        positions = torch.arange(x.shape[-2])
    exponents = torch.arange(0, dim, 2, dtype=torch.float64) / dim
    angles = positions.double()[:, None] * base**-exponents
    angles = torch.cat((angles, angles), dim=-1)
    evens, odds = x[..., 0::2], x[..., 1::2]
    turned = torch.cat((-odds, evens), dim=-1)
    return (x * angles.cos().to(x.dtype) + turned * angles.sin().to(x.dtype)).to(x.dtype)


def squared_positions_rope(x, positions=None, base=10000.0):
    """A rotation by m²·θ_ℓ: norms are preserved, but scores are not relative."""
    positions = torch.arange(x.shape[-2]) if positions is None else positions
    return pairs_rope(x, positions.to(torch.float64) ** 2, base=base)


def two_dimensional_rope(x, positions=None, base=10000.0):
    seq_len, dim = x.shape  # fails with leading dimensions
    return pairs_rope(x, positions, base)


def integer_positions_rope(x, positions=None, base=10000.0):
    seq_len, dim = x.shape[-2:]
    table = pairs_rope(torch.ones(1, dim, dtype=torch.float64), torch.zeros(1), base)  # noqa: F841
    positions = torch.arange(seq_len) if positions is None else positions
    cache = torch.arange(-10, 10000)
    return pairs_rope(x, cache[positions + 10], base)  # indexing with real positions raises


@pytest.mark.parametrize("fn", [reference_rope, pairs_rope, make_rope()])
def test_rope_correct_implementations_pass(fn):
    result = check_apply_rope(fn)
    assert_passes(result)
    assert "preserves norms" in feedback(result)
    assert "precision note" not in feedback(result)


def test_rope_half_layout_passes_the_half_checker():
    assert_passes(check_apply_rope(reference_half_rope, layout="half"))
    assert_passes(check_apply_rope(make_rope(layout="half"), layout="half"))


def test_rope_float32_angles_pass_with_a_precision_note():
    result = check_apply_rope(make_rope(angle_dtype=torch.float32))
    assert_passes(result)
    assert "precision note" in feedback(result)


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (rope_evens_odds, ["does not preserve norms, so it is not a rotation",
                           "check which coordinates you pair with which angle"]),
        (make_rope(sign=-1), ["rotate the wrong way", "position -m"]),
        (make_rope(layout="half"), ["you implemented the half layout, but this exercise asks for interleaved pairs "
                                    "(2ℓ, 2ℓ+1)"]),
        (make_rope(use_positions=False), ["ignores its positions argument"]),
        (make_rope(use_base=False), ["ignores its base argument", "base=500"]),
        (make_rope(exponent=1), ["base^(-ℓ/d) instead of"]),
        (squared_positions_rope, ["scores are not relative", "same offset"]),
        (make_rope(angle_dtype=torch.float16), ["not accurate enough", "half precision"]),
        (two_dimensional_rope, ["x of shape (2, 3, 5, 16)", "raised ValueError", "leading batch and head dimensions"]),
        (integer_positions_rope, ["real-valued", "raised IndexError", "positions may be real numbers"]),
        (lambda x, positions=None, base=10000.0: reference_rope(x.double(), positions, base), ["dtype float64",
                                                                                               "expected float32"]),
        (lambda x, positions=None, base=10000.0: reference_rope(x, positions.long() if positions is not None else None,
                                                                base), ["truncated to integers"]),
    ],
)
def test_rope_mistakes_are_diagnosed(fn, phrases):
    assert_fails_with(check_apply_rope(fn), *phrases)


def test_rope_interleaved_code_fails_the_half_checker_with_the_layout_named():
    assert_fails_with(
        check_apply_rope(reference_rope, layout="half"),
        "you implemented the interleaved layout, but this exercise asks for pairs (ℓ, ℓ + d/2) of the half layout",
    )


def test_rope_in_place_rotation_is_reported():
    def in_place(x, positions=None, base=10000.0):
        x.copy_(reference_rope(x, positions, base))
        return x

    assert_fails_with(check_apply_rope(in_place), "modified its input x in place")


def test_rope_bad_layout_raises():
    with pytest.raises(ValueError, match="layout"):
        check_apply_rope(reference_rope, layout="neox")


# --------------------------------------------------------------------------- Shaw et al.'s row index


def reference_shaw_index(q_len, k_len, max_distance, query_offset=0):
    return clipped_relative_positions(q_len, k_len, max_distance=max_distance, query_offset=query_offset) + max_distance


def loop_shaw_index(q_len, k_len, max_distance, query_offset=0):
    """Row by row from the definition: an independent implementation."""
    return torch.tensor([
        [min(max(j - (query_offset + r), -max_distance), max_distance) + max_distance for j in range(k_len)]
        for r in range(q_len)
    ])


def make_shaw_index(sign=1, low=None, high=None, shift=True, shift_first=False, use_offset=True):
    def rows(q_len, k_len, max_distance, query_offset=0):
        start = query_offset if use_offset else 0
        offsets = sign * (torch.arange(k_len)[None, :] - (start + torch.arange(q_len))[:, None])
        lower = -max_distance if low is None else low(max_distance)
        upper = max_distance if high is None else high(max_distance)
        if shift_first:
            return (offsets + max_distance).clamp(lower, upper)
        return offsets.clamp(lower, upper) + (max_distance if shift else 0)

    return rows


@pytest.mark.parametrize("fn", [reference_shaw_index, loop_shaw_index, make_shaw_index()])
def test_shaw_index_correct_implementations_pass(fn):
    assert_passes(check_shaw_index(fn))


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (make_shaw_index(shift_first=True), ["you add c before clipping to [-c, c]", "clip the offset first"]),
        (make_shaw_index(low=lambda c: 0, high=lambda c: 2 * c), ["you clip the offset to [0, 2c] and then add c"]),
        (make_shaw_index(sign=-1), ["you use i - j", "read row clip("]),
        (make_shaw_index(shift=False), ["the shift by c is missing"]),
        (make_shaw_index(low=lambda c: -c + 1, high=lambda c: c - 1), ["you clip to [-(c - 1), c - 1]"]),
        (make_shaw_index(use_offset=False), ["query_offset is ignored", "only the cases with query_offset > 0 failed"]),
        (lambda q, k, c, query_offset=0: reference_shaw_index(q, k, c, query_offset).float(), ["dtype float32",
                                                                                               "int64"]),
        (lambda q, k, c, query_offset=0: reference_shaw_index(q, k, c, query_offset).T, ["shape", "(q_len, k_len)"]),
    ],
)
def test_shaw_index_mistakes_are_diagnosed(fn, phrases):
    assert_fails_with(check_shaw_index(fn), *phrases)


def test_shaw_index_report_names_the_pair_and_both_rows():
    result = check_shaw_index(make_shaw_index(shift_first=True))
    assert "fn(6, 6, 2): query 0 (position i = 0) and key j = 1, offset j - i = 1, read row clip(1, -2, 2) + 2 = 3; " \
           "got 2" in feedback(result)


# --------------------------------------------------------------------------- the relative shift


def loop_relative_shift(rel_logits):
    """Entry by entry from the definition (visible keys only; zeros above): an independent implementation."""
    *_, q_len, k_len = rel_logits.shape
    out = torch.zeros_like(rel_logits)
    for r in range(q_len):
        i = k_len - q_len + r
        for j in range(i + 1):
            out[..., r, j] = rel_logits[..., r, j - i + k_len - 1]
    return out


def transformer_xl_rel_shift(rel_logits):
    """The pad-and-reshape of Transformer-XL's ``_rel_shift``, with batch dimensions in front."""
    *batch, q_len, k_len = rel_logits.shape
    padded = torch.nn.functional.pad(rel_logits, (1, 0))
    return padded.reshape(*batch, k_len + 1, q_len)[..., 1:, :].reshape(*batch, q_len, k_len)


def first_rows_shift(rel_logits):  # ex-rel-9's bug, generalised
    *batch, q_len, k_len = rel_logits.shape
    padded = torch.nn.functional.pad(rel_logits, (1, 0))
    return padded.reshape(*batch, k_len + 1, q_len)[..., :-1, :].reshape(*batch, q_len, k_len)


def right_padded_shift(rel_logits):
    *batch, q_len, k_len = rel_logits.shape
    padded = torch.nn.functional.pad(rel_logits, (0, 1))
    return padded.reshape(*batch, k_len + 1, q_len)[..., 1:, :].reshape(*batch, q_len, k_len)


def square_skew(rel_logits):  # the chapter's skew: right for Lq == Lk only
    *batch, length, _ = rel_logits.shape
    padded = torch.nn.functional.pad(rel_logits, (1, 0))
    return padded.reshape(*batch, length + 1, length)[..., 1:, :]


@pytest.mark.parametrize("fn", [loop_relative_shift, transformer_xl_rel_shift])
def test_relative_shift_correct_implementations_pass(fn):
    assert_passes(check_relative_shift(fn))


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (first_rows_shift, ["you keep the first Lq rows", "drop the first row instead"]),
        (right_padded_shift, ["the zero column goes on the left"]),
        (lambda rel_logits: rel_logits.clone(), ["these are the unshifted logits"]),
        (lambda rel_logits: transformer_xl_rel_shift(rel_logits.flip(-1)), ["you read the table backwards"]),
        (square_skew, ["raised RuntimeError", "works when Lq == Lk but not with a memory"]),
        (lambda rel_logits: loop_relative_shift(rel_logits.double()), ["dtype float64", "expected float32"]),
        (lambda rel_logits: loop_relative_shift(rel_logits) * 2, ["should be rel_logits[..., ",
                                                                 "not an entry of rel_logits"]),
    ],
)
def test_relative_shift_mistakes_are_diagnosed(fn, phrases):
    assert_fails_with(check_relative_shift(fn), *phrases)


def test_relative_shift_names_where_a_wrong_entry_came_from():
    def one_query_late(rel_logits):
        shifted = transformer_xl_rel_shift(rel_logits)
        return torch.cat((shifted[..., :1, :], shifted[..., :-1, :]), dim=-2)

    result = check_relative_shift(one_query_late)
    assert "which is rel_logits[..., 0, " in feedback(result) or "the value of the zero padding" in feedback(result)


def test_relative_shift_in_place_is_reported():
    def in_place(rel_logits):
        shifted = transformer_xl_rel_shift(rel_logits)
        rel_logits.zero_()
        return shifted

    assert_fails_with(check_relative_shift(in_place), "modified its input rel_logits in place")


# --------------------------------------------------------------------------- grouped-query attention


def make_repeat_kv(mode="interleave"):
    def repeat_kv(kv, num_heads):
        group = num_heads // kv.shape[-3]
        if mode == "interleave":
            return kv.repeat_interleave(group, dim=-3)
        if mode == "tile":
            return torch.cat([kv] * group, dim=-3)
        if mode == "sequence":
            return kv.repeat_interleave(group, dim=-2)
        if mode == "group = h":
            return kv.repeat_interleave(num_heads, dim=-3)
        if mode == "expand only":
            return kv.unsqueeze(-3).expand(*kv.shape[:-2], group, *kv.shape[-2:])
        raise AssertionError(mode)

    return repeat_kv


def hf_repeat_kv(kv, num_heads):
    """``transformers``' own ``repeat_kv`` (4-D inputs), the reference real models use."""
    from transformers.models.llama.modeling_llama import repeat_kv

    squeeze = kv.dim() == 3
    batched = kv[None] if squeeze else kv
    out = repeat_kv(batched, num_heads // kv.shape[-3])
    return out[0] if squeeze else out


@pytest.mark.parametrize("fn", [hf_repeat_kv, make_repeat_kv()])
def test_repeat_kv_correct_implementations_pass(fn):
    assert_passes(check_repeat_kv(fn))


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (make_repeat_kv("tile"), ["should read key-value heads [0, 0, 1, 1], yours read [0, 1, 0, 1]",
                                  "instead of repeating each one in place with repeat_interleave"]),
        (make_repeat_kv("sequence"), ["you repeated along the sequence axis", "dim=-3"]),
        (make_repeat_kv("group = h"), ["repeated h / h_kv = 2 times, not h times"]),
        (make_repeat_kv("expand only"), ["merge the two head axes with a reshape"]),
        (lambda kv, h: make_repeat_kv()(kv, h).flip(-3), ["yours read [1, 1, 0, 0]"]),
        (lambda kv, h: make_repeat_kv()(kv, h) + 1, ["'?': a head that is not a copy"]),
    ],
)
def test_repeat_kv_mistakes_are_diagnosed(fn, phrases):
    assert_fails_with(check_repeat_kv(fn), *phrases)


# --------------------------------------------------------------------------- 2-D RoPE


def complex_rope_2d(x, rows, columns, base=10000.0):
    """Axial 2-D RoPE with complex numbers, half by half: an independent implementation."""
    dim = x.shape[-1]
    theta = base ** (-torch.arange(0, dim // 2, 2, dtype=torch.float64) / (dim // 2))
    halves = []
    for half, positions in zip(x.chunk(2, dim=-1), (rows, columns), strict=True):
        pairs = torch.view_as_complex(half.double().reshape(*half.shape[:-1], -1, 2).contiguous())
        turned = pairs * torch.polar(torch.ones(1, dtype=torch.float64), positions.double()[:, None] * theta)
        halves.append(torch.view_as_real(turned).flatten(-2))
    return torch.cat(halves, dim=-1).to(x.dtype)


def make_rope_2d(first="rows", second="columns", split="halves", layout="interleaved", dim_of_theta="half",
                 use_base=True):
    def rope_2d(x, rows, columns, base=10000.0):
        dim = x.shape[-1]
        base = base if use_base else 10000.0
        positions = {"rows": rows, "columns": columns}
        if split == "halves":
            parts = x.chunk(2, dim=-1)
        else:
            parts = (x[..., 0::2], x[..., 1::2])
        theta_dim = dim // 2 if dim_of_theta == "half" else dim
        frequencies = base ** (-torch.arange(0, dim // 2, 2, dtype=torch.float64) / theta_dim)
        turned = [apply_rope(part, positions[name], frequencies=frequencies, layout=layout)
                  for part, name in zip(parts, (first, second), strict=True)]
        if split == "halves":
            return torch.cat(turned, dim=-1)
        return torch.stack(turned, dim=-1).flatten(-2)

    return rope_2d


@pytest.mark.parametrize(
    "fn",
    [lambda x, rows, columns, base=10000.0: apply_rope_2d(x, rows, columns, base=base), complex_rope_2d,
     make_rope_2d()],
)
def test_rope_2d_correct_implementations_pass(fn):
    result = check_apply_rope_2d(fn)
    assert_passes(result)
    assert "depend only on the 2-D offset" in feedback(result)


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (make_rope_2d(second="rows"), ["both halves are rotated by the rows", "must be rotated by the columns"]),
        (make_rope_2d(first="columns"), ["both halves are rotated by the columns"]),
        (make_rope_2d(first="columns", second="rows"), ["rows and columns are swapped"]),
        (make_rope_2d(dim_of_theta="full"), ["frequencies of the full dimension d = 8", "base^(-4ℓ/d)"]),
        (make_rope_2d(split="strided"), ["you split the coordinates into evens and odds"]),
        (make_rope_2d(layout="half"), ["inside each half you pair (ℓ, ℓ + d/4), the half layout"]),
        (make_rope_2d(use_base=False), ["ignores its base argument", "base=100"]),
        (lambda x, rows, columns, base=10000.0: make_rope_2d()(x, rows, columns, base) * 1.01,
         ["should be", "the first d/2 coordinates are rotated by 1-D RoPE of dimension d/2 at the row"]),
        (lambda x, rows, columns, base=10000.0: make_rope_2d()(x.double(), rows, columns, base),
         ["dtype float64", "expected float32"]),
    ],
)
def test_rope_2d_mistakes_are_diagnosed(fn, phrases):
    assert_fails_with(check_apply_rope_2d(fn), *phrases)


# --------------------------------------------------------------------------- scaling rules of Part V


def theta(dim, base):
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def formula_pi(dim, base, factor):
    return theta(dim, base) / factor


def formula_ntk(dim, base, factor, exponent=None):
    exponent = dim / (dim - 2) if exponent is None else exponent(dim)
    return theta(dim, base * factor**exponent)


def formula_dynamic(dim, base, factor, train_len, seq_len, floor=True, minus=True):
    length = max(seq_len, train_len) if floor else seq_len
    scale = factor * length / train_len - ((factor - 1) if minus else 0)
    return theta(dim, base * abs(scale) ** (dim / (dim - 2)))


def formula_yarn(dim, base, factor, train_len, beta_fast, beta_slow, swap=False, invert=False):
    """YaRN as transformers' ``_compute_yarn_parameters`` writes it, re-typed (truncate=True)."""

    def correction_dim(rotations):
        return (dim * math.log(train_len / (rotations * 2 * math.pi))) / (2 * math.log(base))

    fast, slow = (beta_slow, beta_fast) if swap else (beta_fast, beta_slow)
    low = max(math.floor(correction_dim(fast)), 0)
    high = min(math.ceil(correction_dim(slow)), dim - 1)
    if low == high:
        high += 0.001
    ramp = ((torch.arange(dim // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
    extrapolation = 1 - ramp if not invert else ramp
    inv_freq = theta(dim, base)
    return inv_freq / factor * (1 - extrapolation) + inv_freq * extrapolation


def formula_llama3(dim, base, factor, train_len, low, high, invert=False, clamp=True):
    """The ``llama3`` rule as Meta's reference code writes it, with wavelengths."""
    inv_freq = theta(dim, base)
    wavelength = 2 * math.pi / inv_freq
    smooth = (train_len / wavelength - low) / (high - low)
    if clamp:
        smooth = smooth.clamp(0, 1)
    if invert:
        smooth = 1 - smooth
    return (1 - smooth) * inv_freq / factor + smooth * inv_freq


@pytest.mark.parametrize(
    ("check", "fn"),
    [
        (check_pi_frequencies, lambda d, b, s: pi_frequencies(d, b, factor=s)),
        (check_pi_frequencies, formula_pi),
        (check_pi_frequencies, lambda d, b, s: formula_pi(d, b, s).float()),
        (check_ntk_frequencies, lambda d, b, s: ntk_frequencies(d, b, factor=s)),
        (check_ntk_frequencies, formula_ntk),
        (check_dynamic_ntk_frequencies, lambda d, b, s, n_train, n: dynamic_ntk_frequencies(
            d, b, factor=s, original_max_position=n_train, seq_len=n)),
        (check_dynamic_ntk_frequencies, formula_dynamic),
        (check_yarn_frequencies, lambda d, b, s, n, fast, slow: yarn_frequencies(
            d, b, factor=s, original_max_position=n, beta_fast=fast, beta_slow=slow)),
        (check_yarn_frequencies, formula_yarn),
        (check_llama3_frequencies, lambda d, b, s, n, low, high: llama3_frequencies(
            d, b, factor=s, original_max_position=n, low_freq_factor=low, high_freq_factor=high)),
        (check_llama3_frequencies, formula_llama3),
    ],
)
def test_scaling_correct_implementations_pass(check, fn):
    assert_passes(check(fn))


@pytest.mark.parametrize(
    ("check", "fn", "phrases"),
    [
        (check_pi_frequencies, lambda d, b, s: theta(d, b) * s, ["you multiply the frequencies by the factor",
                                                                "ratio got / expected = 64"]),
        (check_pi_frequencies, lambda d, b, s: theta(d, b * s), ["you multiplied the base by s"]),
        (check_pi_frequencies, lambda d, b, s: theta(d, b), ["the factor is not applied"]),
        (check_pi_frequencies, lambda d, b, s: theta(d, b).repeat_interleave(2) / s, ["one frequency per pair, d/2"]),
        (check_ntk_frequencies, partial(formula_ntk, exponent=lambda d: 1.0), ["without the exponent d/(d-2)"]),
        (check_ntk_frequencies, partial(formula_ntk, exponent=lambda d: (d - 2) / d), ["your exponent is (d-2)/d"]),
        (check_ntk_frequencies, formula_pi, ["these are PI's frequencies"]),
        (check_ntk_frequencies, lambda d, b, s: theta(d, 10000.0 * s ** (d / (d - 2))), ["ignores its base"]),
        (check_dynamic_ntk_frequencies, partial(formula_dynamic, floor=False),
         ["below the training length you changed the base too", "only the settings with seq_len below"]),
        (check_dynamic_ntk_frequencies, partial(formula_dynamic, minus=False), ["your scale is s·n/L"]),
        (check_dynamic_ntk_frequencies, lambda d, b, s, n_train, n: formula_ntk(d, b, s),
         ["these are static NTK frequencies"]),
        (check_yarn_frequencies, partial(formula_yarn, swap=True), ["the ramp's bounds are swapped"]),
        (check_yarn_frequencies, partial(formula_yarn, invert=True), ["your ramp runs the wrong way"]),
        (check_yarn_frequencies, lambda d, b, s, n, fast, slow: formula_llama3(d, b, s, n, slow, fast),
         ["linear in the number of turns r_ℓ, as the YaRN paper writes it"]),
        (check_yarn_frequencies, lambda *args: (formula_yarn(*args), (0.1 * math.log(args[2]) + 1) ** 2),
         ["you returned 1/t = (0.1 ln s + 1)^2"]),
        (check_llama3_frequencies, partial(formula_llama3, invert=True), ["the blend is inverted"]),
        (check_llama3_frequencies, lambda d, b, s, n, low, high: formula_llama3(d, b, s, n, high, low),
         ["the blend is inverted", "Swapping low_freq_factor and high_freq_factor gives the same"]),
        (check_llama3_frequencies, partial(formula_llama3, clamp=False), ["is not clamped to [0, 1]"]),
        (check_llama3_frequencies, lambda d, b, s, n, low, high: formula_llama3(d, b, s, n * 2 * math.pi, low, high),
         ["missing the 2π"]),
    ],
)
def test_scaling_mistakes_are_diagnosed(check, fn, phrases):
    assert_fails_with(check(fn), *phrases)


def test_scaling_reports_the_first_pair_that_differs():
    result = check_ntk_frequencies(partial(formula_ntk, exponent=lambda d: 1.0))
    assert "fn(dim=128, base=10000, factor=8): pair ℓ = 1 (of 64) should have frequency" in feedback(result)


def test_yarn_accepts_the_frequencies_with_the_attention_factor():
    def with_factor(dim, base, factor, train_len, beta_fast, beta_slow):
        return formula_yarn(dim, base, factor, train_len, beta_fast, beta_slow), 0.1 * math.log(factor) + 1

    assert_passes(check_yarn_frequencies(with_factor))


# --------------------------------------------------------------------------- behaviour shared by every checker

CHECKERS = {
    "attention": (check_attention, reference_attention),
    "padded positions": (check_padded_positions, reference_positions),
    "sinusoidal": (check_sinusoidal, reference_sinusoidal),
    "t5": (check_t5_bucket, t5_relative_position_bucket),
    "alibi": (check_alibi_slopes, alibi_slopes),
    "rope": (check_apply_rope, reference_rope),
    "shaw": (check_shaw_index, reference_shaw_index),
    "relative shift": (check_relative_shift, transformer_xl_rel_shift),
    "repeat kv": (check_repeat_kv, make_repeat_kv()),
    "rope 2d": (check_apply_rope_2d, make_rope_2d()),
    "pi": (check_pi_frequencies, formula_pi),
    "ntk": (check_ntk_frequencies, formula_ntk),
    "dynamic ntk": (check_dynamic_ntk_frequencies, formula_dynamic),
    "yarn": (check_yarn_frequencies, formula_yarn),
    "llama3": (check_llama3_frequencies, formula_llama3),
}



def _tensor_out(reference):
    def wrapped(*args, **kwargs):
        result = reference(*args, **kwargs)
        return result if isinstance(result, torch.Tensor) else torch.tensor(result, dtype=torch.float64)

    return wrapped


def _register_new_checkers():
    from posenc.exercises import biases, extrapolation, foundations, longrange, rotations

    for module in (foundations, biases, rotations, longrange, extrapolation):
        for name in module.__all__:
            reference = getattr(module, "reference_" + name.removeprefix("check_"))
            CHECKERS[name.removeprefix("check_").replace("_", " ")] = (getattr(module, name), _tensor_out(reference))


_register_new_checkers()


@pytest.fixture(params=sorted(CHECKERS))
def checker(request):
    return CHECKERS[request.param]


def test_not_implemented_stub_is_reported(checker):
    check, _ = checker

    def stub(*args, **kwargs):
        raise NotImplementedError

    result = check(stub)
    assert_fails_with(result, "not implemented yet", "raise NotImplementedError")
    assert result.cases == 1
    assert str(result).startswith("✘")


def test_other_exceptions_are_reported_with_their_input(checker):
    check, _ = checker

    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero in my code")

    result = check(broken)
    assert_fails_with(result, "raised ZeroDivisionError: division by zero in my code", "fn(", "(in broken, line ")
    assert 'raise ZeroDivisionError("division by zero in my code")' in feedback(result)


@pytest.mark.parametrize(
    "garbage",
    [
        "a string",
        {"a": 1},
        (1, 2, 3),
        torch.zeros(0),
        torch.zeros(3, dtype=torch.complex64),
        torch.full((2, 2), float("nan")),
        (torch.zeros(2), "x"),
    ],
    ids=repr,
)
def test_any_return_value_gives_a_report_not_an_exception(checker, garbage):
    check, _ = checker
    result = check(lambda *args, **kwargs: garbage)
    assert not result
    assert str(result).startswith("✘")
    assert "could not analyse" not in feedback(result)  # a specific message, not the safety net


def test_returning_none_is_reported(checker):
    check, _ = checker
    assert_fails_with(check(lambda *args, **kwargs: None), "None", "return")


def test_wrong_return_shape_is_reported(checker):
    check, reference = checker

    def wrong_shape(*args, **kwargs):
        result = reference(*args, **kwargs)
        if isinstance(result, tuple):
            return result[0], result[1][..., None]
        return torch.cat((result.flatten(), torch.ones(1)))

    result = check(wrong_shape)
    assert not result
    assert "shape" in feedback(result) or "slopes; expected one per head" in feedback(result)


def test_checkers_leave_the_global_random_state_alone(checker):
    check, reference = checker
    before = torch.get_rng_state()
    assert check(reference)
    assert torch.equal(torch.get_rng_state(), before)


def test_checkers_give_the_same_verdict_every_time(checker):
    check, reference = checker
    assert str(check(reference)) == str(check(reference))


@pytest.mark.parametrize("not_callable", [None, 3, "sinusoidal_encoding", torch.zeros(2)])
def test_non_callable_fn_raises(checker, not_callable):
    check, _ = checker
    with pytest.raises(TypeError, match="fn must be your function"):
        check(not_callable)


def test_report_format(checker):
    check, reference = checker
    passed = check(reference)
    text = str(passed)
    assert text.splitlines()[0] == f"✔ {passed.exercise}: all {passed.cases} checks passed"
    assert repr(passed) == text
    assert all(message.splitlines()[0] in text for message in passed.feedback)
    assert all(line.startswith("  ") for line in text.splitlines()[1:])

    failed = check(lambda *args, **kwargs: None)
    text = str(failed)
    assert text.splitlines()[0].startswith(f"✘ {failed.exercise}: ")
    assert all(message.splitlines()[0] in text for message in failed.feedback)
    assert "failed" in text


def test_checkers_are_fast(checker):
    import time

    check, reference = checker
    check(reference)  # warm-up: first calls of some kernels are slow
    # CPU time of this process, not wall time: a loaded machine must not fail the test
    start = time.process_time()
    check(reference)
    assert time.process_time() - start < 2.0


def test_check_result_is_a_frozen_boolean_report():
    result = CheckResult("demo", False, ("first\nsecond line",), 2)
    assert not result and bool(CheckResult("demo", True, (), 1))
    assert str(result) == "✘ demo: not passed yet (2 hidden cases run)\n  - first\n    second line"
    with pytest.raises(AttributeError):
        result.passed = True  # type: ignore[misc]


def test_exercises_are_exported():
    assert posenc.exercises.check_sinusoidal is check_sinusoidal
    names = {name for name in dir(posenc.exercises) if name.startswith("check_")}
    assert set(posenc.exercises.__all__) == {"CheckResult", *names}
    assert len(names) == 33
    assert all(getattr(posenc.exercises, name).__module__ == "posenc.exercises" for name in posenc.exercises.__all__)


@settings(max_examples=10, deadline=None)
@given(seed=seeds)
def test_student_randomness_does_not_leak_into_the_checker(seed):
    """A student function that draws from the global generator does not change the verdict."""
    torch.manual_seed(seed)

    def noisy_reference(seq_len, dim, base=10000.0):
        torch.rand(3)
        return reference_sinusoidal(seq_len, dim, base)

    assert check_sinusoidal(noisy_reference)


def test_score_is_the_share_of_hidden_cases_passed():
    """Partial credit: 1 for a correct function, strictly between 0 and 1 when only some cases fail."""
    assert check_sinusoidal(reference_sinusoidal).score == 1.0

    def base_ignored(seq_len, dim, base=10000.0):
        return reference_sinusoidal(seq_len, dim)

    partial = check_sinusoidal(base_ignored)
    assert not partial and 0 < partial.failed < partial.cases
    assert partial.score == (partial.cases - partial.failed) / partial.cases
    assert f"failed {partial.failed} of {partial.cases} hidden cases" in feedback(partial)

    def not_started(seq_len, dim, base=10000.0):
        raise NotImplementedError

    assert check_sinusoidal(not_started).score == 0.0
    assert CheckResult("demo", False, ("wrong",), 3, 3).score == 0.0


# =========================================================================== checkers of the other coding exercises
# Each: correct implementations in other styles pass; at least five wrong implementations, written as a
# student would write them, are rejected with the mistake named and the first differing input shown.

from posenc.exercises import (  # noqa: E402
    check_alibi_bias_at_positions,
    check_alibi_bias_from_slopes,
    check_concatenated_sinusoidal,
    check_cross_attention,
    check_decayed_rows,
    check_decode_positions,
    check_expected_score,
    check_extended_rows,
    check_linear_rope_attention,
    check_position_parameter_counts,
    check_position_recovery,
    check_positional_head_query,
    check_reversal_gap,
    check_rope_matrix_2d_blocks,
    check_score_asymmetry,
    check_slowest_wavelength,
    check_streaming_cache,
    check_unrotated_outputs,
)
from posenc.exercises.biases import (  # noqa: E402
    reference_alibi_bias_at_positions,
    reference_alibi_bias_from_slopes,
    reference_reversal_gap,
)
from posenc.exercises.extrapolation import reference_extended_rows  # noqa: E402
from posenc.exercises.foundations import (  # noqa: E402
    reference_concatenated_sinusoidal,
    reference_decayed_rows,
    reference_position_parameter_counts,
    reference_position_recovery,
)
from posenc.exercises.longrange import (  # noqa: E402
    reference_expected_score,
    reference_positional_head_query,
    reference_score_asymmetry,
    reference_slowest_wavelength,
)
from posenc.exercises.rotations import (  # noqa: E402
    reference_decode_positions,
    reference_linear_rope_attention,
    reference_rope_matrix_2d_blocks,
    reference_streaming_cache,
    reference_unrotated_outputs,
)

FIRST_INPUT = "first differing input: fn("


def assert_named(result: CheckResult, *phrases: str) -> None:
    """Rejected, the mistake named by its phrases, and the first differing input shown."""
    assert_fails_with(result, *phrases, FIRST_INPUT)


# --------------------------------------------------------------------------- ex-perm-2 cross-attention


def loop_cross_attention(y, z, w_q, w_k, w_v):
    q, k, v = y @ w_q, z @ w_k, z @ w_v
    rows = []
    for i in range(q.shape[0]):
        scores = torch.stack([q[i] @ k[j] for j in range(k.shape[0])]) / k.shape[1] ** 0.5
        weights = scores.exp() / scores.exp().sum()
        rows.append(weights @ v)
    return torch.stack(rows)


@pytest.mark.parametrize("fn", [
    loop_cross_attention,
    lambda y, z, q, k, v: torch.nn.functional.scaled_dot_product_attention(y @ q, z @ k, z @ v),
])
def test_cross_attention_correct_styles_pass(fn):
    assert_passes(check_cross_attention(fn))


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (lambda y, z, wq, wk, wv: torch.softmax((z @ wq) @ (y @ wk).T / wk.shape[1] ** 0.5, -1) @ (y @ wv),
         ["your queries come from z"]),
        (lambda y, z, wq, wk, wv: torch.softmax((y @ wq) @ (z @ wk).T / wk.shape[1] ** 0.5, 0) @ (z @ wv),
         ["normalises over the queries (dim=0)"]),
        (lambda y, z, wq, wk, wv: torch.softmax((y @ wq) @ (z @ wk).T, -1) @ (z @ wv), ["not divided by sqrt(d_k)"]),
        (lambda y, z, wq, wk, wv: torch.softmax((y @ wq) @ (z @ wk).T / math.sqrt(y.shape[1]), -1) @ (z @ wv),
         ["square root of the model width"]),
        (lambda y, z, wq, wk, wv: torch.softmax((y @ wq) @ (z @ wk).T / wk.shape[1], -1) @ (z @ wv),
         ["by d_k instead of sqrt(d_k)"]),
        (lambda y, z, wq, wk, wv: torch.softmax((y @ wq) @ (z @ wk).T / wk.shape[1] ** 0.5, -1),
         ["you returned the attention weights"]),
    ],
)
def test_cross_attention_mistakes_are_named(fn, phrases):
    assert_named(check_cross_attention(fn), *phrases)


# --------------------------------------------------------------------------- ex-perm-5 recovering positions


@pytest.mark.parametrize("fn", [
    reference_position_recovery,
    lambda o: [round(1 / value - 1) for value in o.double().tolist()],
    lambda o: torch.round(1 / o.double()) - 1,
])
def test_position_recovery_correct_styles_pass(fn):
    assert_passes(check_position_recovery(fn))


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (lambda o: torch.round(1 / o - 1), ["in the dtype of the outputs"]),
        (lambda o: torch.round(1 / o) - 1, ["in the dtype of the outputs"]),
        (lambda o: (1 / o.double() - 1).long(), ["you truncated"]),
        (lambda o: [int(1 / v - 1) for v in o.double().tolist()], ["you truncated"]),
        (lambda o: torch.ceil(1 / o.double() - 1), ["rounded 1/o - 1 up"]),
        (lambda o: torch.round(1 / o.double()), ["which is i + 1"]),
        (lambda o: 1 / o.double() - 1, ["not rounded"]),
    ],
)
def test_position_recovery_mistakes_are_named(fn, phrases):
    assert_named(check_position_recovery(fn), *phrases)


# --------------------------------------------------------------------------- ex-abs-1 parameter counts


def counted_with_linear(positions, width):
    learned = torch.nn.Embedding(positions, width).weight.numel()
    with_positions = 3 * torch.nn.Linear(width + positions, width, bias=False).weight.numel()
    return learned, learned, with_positions - 3 * width * width


@pytest.mark.parametrize("fn", [reference_position_parameter_counts, counted_with_linear,
                                lambda n, d: torch.tensor([n * d, n * d, 3 * n * d])])
def test_parameter_counts_correct_styles_pass(fn):
    assert_passes(check_position_parameter_counts(fn))


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (lambda n, d: (n * d, (n + d) * d, 3 * (n + d) * d), ["you counted the whole linear map"]),
        (lambda n, d: (n * d, n * d, n * d), ["your part 3 counts one projection"]),
        (lambda n, d: (n + d, n + d, 3 * (n + d)), ["you added N and d"]),
        (lambda n, d: (n * d, 0, 3 * n * d), ["no parameters for the one-hot code"]),
        (lambda n, d: (n * d, n ** 2, 3 * n ** 2), ["N x N weights"]),
    ],
)
def test_parameter_counts_mistakes_are_named(fn, phrases):
    assert_named(check_position_parameter_counts(fn), *phrases)


# --------------------------------------------------------------------------- ex-abs-4 weight decay


def simulated_decay(initial, lr, weight_decay, steps):
    """Runs AdamW on rows that get no gradient: a correct answer by experiment."""
    table = torch.nn.Parameter(initial.clone())
    optimizer = torch.optim.AdamW([table], lr=lr, weight_decay=weight_decay)
    for _ in range(steps):
        table.grad = torch.zeros_like(table)
        optimizer.step()
    return table.detach()


@pytest.mark.parametrize("fn", [reference_decayed_rows, simulated_decay,
                                lambda x, lr, wd, t: (x.float() * (1 - lr * wd) ** t)])
def test_decayed_rows_correct_styles_pass(fn):
    assert_passes(check_decayed_rows(fn))


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (lambda x, lr, wd, t: x * (1 - lr * wd) ** (t - 1), ["your exponent is T - 1"]),
        (lambda x, lr, wd, t: x * (1 - lr * wd) ** (t + 1), ["your exponent is T + 1"]),
        (lambda x, lr, wd, t: x * (1 - wd) ** t, ["scaled by the learning rate"]),
        (lambda x, lr, wd, t: x * (1 - lr) ** t, ["your factor is (1 - lr)^T"]),
        (lambda x, lr, wd, t: x * torch.exp(torch.tensor(-lr * wd * t)), ["continuous approximation"]),
        (lambda x, lr, wd, t: x * (1 - t * lr * wd), ["linear in T"]),
    ],
)
def test_decayed_rows_mistakes_are_named(fn, phrases):
    assert_named(check_decayed_rows(fn), *phrases)


# --------------------------------------------------------------------------- ex-sin-6 the concatenated table


def fsmt_style(seq_len, dim, base=10000.0):
    """As FSMT's get_embedding writes it, in float32."""
    half = dim // 2
    step = math.log(base) / (half - 1)
    frequencies = torch.exp(torch.arange(half, dtype=torch.float) * -step)
    angles = torch.arange(seq_len, dtype=torch.float).unsqueeze(1) * frequencies.unsqueeze(0)
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)


@pytest.mark.parametrize("fn", [reference_concatenated_sinusoidal, fsmt_style])
def test_concatenated_sinusoidal_correct_styles_pass(fn):
    assert_passes(check_concatenated_sinusoidal(fn))


def t2t_with(exponent=None, interleave=False, cos_first=False, first=0, start=0, fixed_base=None):
    def table(seq_len, dim, base=10000.0):
        base = fixed_base or base
        half = dim // 2
        ell = torch.arange(first, first + half, dtype=torch.float64)
        theta = base ** -(ell / (half - 1) if exponent is None else exponent(ell, dim))
        angles = torch.arange(start, start + seq_len, dtype=torch.float64)[:, None] * theta
        if interleave:
            return torch.stack((angles.sin(), angles.cos()), -1).reshape(seq_len, dim)
        parts = (angles.cos(), angles.sin()) if cos_first else (angles.sin(), angles.cos())
        return torch.cat(parts, -1)

    return table


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (t2t_with(exponent=lambda ell, d: 2 * ell / d), ["the paper's b^(-2ℓ/d)"]),
        (t2t_with(interleave=True), ["interleaves sin and cos"]),
        (t2t_with(cos_first=True), ["puts the cosines first"]),
        (t2t_with(first=1), ["pair index ℓ from 1"]),
        (t2t_with(start=1), ["positions start at 1"]),
        (t2t_with(fixed_base=10000.0), ["ignores its base"]),
    ],
)
def test_concatenated_sinusoidal_mistakes_are_named(fn, phrases):
    assert_named(check_concatenated_sinusoidal(fn), *phrases)


# --------------------------------------------------------------------------- ex-rel-4 ALiBi from its slopes


def masked_alibi(slopes, length):
    """Loops, float32, and -inf above the diagonal: accepted, only visible entries are compared."""
    bias = torch.full((len(slopes), length, length), float("-inf"))
    for r, slope in enumerate(slopes.tolist()):
        for i in range(length):
            for j in range(i + 1):
                bias[r, i, j] = slope * (j - i)
    return bias


@pytest.mark.parametrize("fn", [
    reference_alibi_bias_from_slopes,
    masked_alibi,
    lambda m, n: -m[:, None, None] * (torch.arange(n)[None, :] - torch.arange(n)[:, None]).abs(),
])
def test_alibi_bias_from_slopes_correct_styles_pass(fn):
    assert_passes(check_alibi_bias_from_slopes(fn))


def offsets_of(n):
    return torch.arange(n)[None, :] - torch.arange(n)[:, None]


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (lambda m, n: m[:, None, None] * (torch.arange(n)[:, None] - torch.arange(n)[None, :]), ["wrong sign"]),
        (lambda m, n: m[:, None, None] * torch.arange(n).float(), ["the key-only bias m_r j"]),
        (lambda m, n: offsets_of(n).float().repeat(len(m), 1, 1), ["does not use the slopes"]),
        (lambda m, n: m[None, None, :] * offsets_of(n), ["along the key axis"]),
        (lambda m, n: offsets_of(n) / m[:, None, None], ["divided the offsets by the slopes"]),
        (lambda m, n: m.flip(0)[:, None, None] * offsets_of(n), ["heads are in the reverse order"]),
    ],
)
def test_alibi_bias_from_slopes_mistakes_are_named(fn, phrases):
    assert_named(check_alibi_bias_from_slopes(fn), *phrases)


# --------------------------------------------------------------------------- ex-rel-8 reversal


def loop_reversal_gap(layer, x):
    reversed_x = torch.stack([x[len(x) - 1 - i] for i in range(len(x))])
    out, out_reversed = layer(x), layer(reversed_x)
    return max(float((out_reversed[i] - out[len(x) - 1 - i]).abs().max()) for i in range(len(x)))


@pytest.mark.parametrize("fn", [reference_reversal_gap, loop_reversal_gap,
                                lambda f, x: torch.max(torch.abs(f(x.flip(0)) - f(x).flip(0)))])
def test_reversal_gap_correct_styles_pass(fn):
    assert_passes(check_reversal_gap(fn))


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (lambda f, x: (f(x.flip(0)) - f(x)).abs().max(), ["reverse the output too"]),
        (lambda f, x: (f(x) - f(x).flip(0)).abs().max(), ["feed the reversed input"]),
        (lambda f, x: (f(x.flip(-1)) - f(x).flip(-1)).abs().max(), ["reversed the feature axis"]),
        (lambda f, x: (f(x.flip(0)) - f(x).flip(0)).abs().mean(), ["the mean absolute gap"]),
        (lambda f, x: (f(x.flip(0)) - f(x).flip(0)).max(), ["the largest signed difference"]),
    ],
)
def test_reversal_gap_mistakes_are_named(fn, phrases):
    assert_named(check_reversal_gap(fn), *phrases)


# --------------------------------------------------------------------------- ex-ropea-5 outputs turned back


def matrix_unrotate(outputs, positions, base=10000.0):
    dim = outputs.shape[-1]
    rows = [outputs[..., i, :].double() @ posenc.rope_matrix(float(p), dim, base, dtype=torch.float64)
            for i, p in enumerate(positions.tolist())]  # o^T R = (R^T o)^T
    return torch.stack(rows, dim=-2)


@pytest.mark.parametrize("fn", [reference_unrotated_outputs, matrix_unrotate])
def test_unrotated_outputs_correct_styles_pass(fn):
    assert_passes(check_unrotated_outputs(fn))


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (lambda o, p, base=10000.0: apply_rope(o, p, base=base), ["rotated the outputs forward"]),
        (lambda o, p, base=10000.0: o, ["not turned at all"]),
        (lambda o, p, base=10000.0: apply_rope(o, -p, base=base, layout="half"), ["the half layout"]),
        (lambda o, p, base=10000.0: apply_rope(o, -p), ["ignores its base"]),
        (lambda o, p, base=10000.0: apply_rope(
            o, -p, frequencies=base ** (-torch.arange(o.shape[-1] // 2) / o.shape[-1])),
         ["b^(-ℓ/d)"]),
        (lambda o, p, base=10000.0: apply_rope(o, -torch.arange(o.shape[-2]), base=base), ["the row index"]),
    ],
)
def test_unrotated_outputs_mistakes_are_named(fn, phrases):
    assert_named(check_unrotated_outputs(fn), *phrases)


# --------------------------------------------------------------------------- ex-ropea-6 linear attention


def running_sums(q, k, v, base=10000.0, rotate_denominator=False, causal=True, rotate=True, phi_after=False,
                 feature=True):
    """The O(n) form with running sums; knobs for the mistakes (defaults: correct)."""
    def phi(x):
        return torch.nn.functional.elu(x) + 1 if feature else x

    if phi_after:
        rot_q, rot_k = phi(apply_rope(q, base=base)), phi(apply_rope(k, base=base))
    else:
        rot_q = apply_rope(phi(q), base=base) if rotate else phi(q)
        rot_k = apply_rope(phi(k), base=base) if rotate else phi(k)
    den_q, den_k = (rot_q, rot_k) if rotate_denominator else (phi(q), phi(k))
    n = q.shape[0]
    if not causal:
        state, normaliser = rot_k.T @ v, den_k.sum(0)
        return (rot_q @ state) / (den_q @ normaliser)[:, None]
    state = torch.zeros(q.shape[1], v.shape[1], dtype=q.dtype)
    normaliser = torch.zeros(q.shape[1], dtype=q.dtype)
    out = []
    for i in range(n):
        state = state + torch.outer(rot_k[i], v[i])
        normaliser = normaliser + den_k[i]
        out.append(rot_q[i] @ state / (den_q[i] @ normaliser))
    return torch.stack(out)


@pytest.mark.parametrize("fn", [reference_linear_rope_attention, running_sums])
def test_linear_rope_attention_correct_styles_pass(fn):
    assert_passes(check_linear_rope_attention(fn))


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (partial(running_sums, rotate_denominator=True), ["your denominator is rotated too"]),
        (partial(running_sums, rotate=False), ["your numerator is not rotated"]),
        (partial(running_sums, causal=False), ["your sums run over all keys"]),
        (partial(running_sums, phi_after=True), ["after the rotation"]),
        (partial(running_sums, feature=False), ["without the feature map"]),
    ],
)
def test_linear_rope_attention_mistakes_are_named(fn, phrases):
    assert_named(check_linear_rope_attention(fn), *phrases)


# --------------------------------------------------------------------------- ex-ropeb-5 decoding positions


@pytest.mark.parametrize("fn", [reference_decode_positions, lambda c, n: list(range(c, c + n)),
                                lambda c, n: torch.arange(c + n)[c:]])
def test_decode_positions_correct_styles_pass(fn):
    assert_passes(check_decode_positions(fn))


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (lambda c, n: torch.zeros(n, dtype=torch.long), ["the position-0 bug"]),
        (lambda c, n: torch.arange(n), ["restart at 0"]),
        (lambda c, n: torch.arange(1, n + 1) + c, ["start at cache_len + 1"]),
        (lambda c, n: [c - 1 + t for t in range(n)], ["start at cache_len - 1"]),
        (lambda c, n: [c] * n, ["the same position"]),
        (lambda c, n: torch.arange(c + n), ["the whole sequence"]),
        (lambda c, n: list(range(c, c + n + 1)), ["num_new + 1 positions"]),
    ],
)
def test_decode_positions_mistakes_are_named(fn, phrases):
    assert_named(check_decode_positions(fn), *phrases)


# --------------------------------------------------------------------------- ex-ropeb-9 StreamingLLM


def complex_streaming(cached, window, sinks=4):
    """With complex numbers: multiply the window's pairs by e^(-i s θ)."""
    total, dim = cached.shape[-2:]
    shift = total - window - sinks
    theta = 10000.0 ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    pairs = torch.view_as_complex(cached[..., total - window:, :].double().reshape(*cached.shape[:-2], window, -1, 2))
    moved = torch.view_as_real(pairs * torch.polar(torch.ones_like(theta), -shift * theta)).flatten(-2)
    return torch.cat((cached[..., :sinks, :].double(), moved), dim=-2)


@pytest.mark.parametrize("fn", [reference_streaming_cache, complex_streaming])
def test_streaming_cache_correct_styles_pass(fn):
    assert_passes(check_streaming_cache(fn))


def streaming_with(shift=lambda n, w, s: n - w - s, sign=-1, rotate_sinks=False, reencode=False):
    def cache(cached, window, sinks=4):
        total = cached.shape[-2]
        s = shift(total, window, sinks)
        window_keys = cached[..., -window:, :]
        if reencode:
            window_keys = apply_rope(window_keys, torch.arange(sinks, sinks + window))
        else:
            window_keys = apply_rope(window_keys, torch.full((window,), sign * s))
        sink_keys = cached[..., :sinks, :]
        if rotate_sinks:
            sink_keys = apply_rope(sink_keys, torch.full((sinks,), -s))
        return torch.cat([sink_keys, window_keys], dim=-2)

    return cache


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (streaming_with(sign=1), ["rotated the window keys forward"]),
        (lambda c, w, sinks=4: torch.cat((c[..., :sinks, :], c[..., -w:, :]), -2), ["are not rotated"]),
        (streaming_with(shift=lambda n, w, s: n - w), ["your shift is n - w"]),
        (streaming_with(rotate_sinks=True), ["rotated the sinks too"]),
        (streaming_with(reencode=True), ["already rotated"]),
        (streaming_with(shift=lambda n, w, s: n - w - s - 1), ["off by one"]),
    ],
)
def test_streaming_cache_mistakes_are_named(fn, phrases):
    assert_named(check_streaming_cache(fn), *phrases)


# --------------------------------------------------------------------------- ex-ropeb-10 blocks of four


def permuted_axial(row, column, dim, base=10000.0):
    """P^T R(row, column) P with the axial matrix: the exercise's own characterisation."""
    block = torch.arange(dim // 4)
    source = torch.cat([torch.stack([4 * block, 4 * block + 1], 1).flatten(),
                        torch.stack([4 * block + 2, 4 * block + 3], 1).flatten()])
    permutation = torch.eye(dim, dtype=torch.float64)[source]
    return permutation.T @ posenc.rope_matrix_2d(row, column, dim, base) @ permutation


@pytest.mark.parametrize("fn", [reference_rope_matrix_2d_blocks, permuted_axial])
def test_rope_matrix_2d_blocks_correct_styles_pass(fn):
    assert_passes(check_rope_matrix_2d_blocks(fn))


def blocks_with(ladder=4, transposed=False, swap=False, fixed_base=None):
    def matrix(row, column, dim, base=10000.0):
        base = fixed_base or base
        out = torch.zeros(dim, dim, dtype=torch.float64)
        for ell in range(dim // 4):
            frequency = base ** (-ladder * ell / dim)
            for half, position in enumerate((column, row) if swap else (row, column)):
                c, s = math.cos(position * frequency), math.sin(position * frequency)
                s = -s if transposed else s
                i = 4 * ell + 2 * half
                out[i, i], out[i, i + 1], out[i + 1, i], out[i + 1, i + 1] = c, -s, s, c
        return out

    return matrix


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (blocks_with(ladder=2), ["the 1-D ladder b^(-2ℓ/d)"]),
        (blocks_with(transposed=True), ["turn the wrong way"]),
        (blocks_with(swap=True), ["rows and columns are swapped"]),
        (lambda r, c, d, base=10000.0: posenc.rope_matrix_2d(r, c, d, base), ["you built the axial matrix"]),
        (blocks_with(fixed_base=10000.0), ["ignores its base"]),
        (blocks_with(ladder=8), ["your exponent is 8ℓ/d"]),
    ],
)
def test_rope_matrix_2d_blocks_mistakes_are_named(fn, phrases):
    assert_named(check_rope_matrix_2d_blocks(fn), *phrases)


# --------------------------------------------------------------------------- chapter 7


@pytest.mark.parametrize("fn", [reference_slowest_wavelength,
                                lambda d, b: (2 * math.pi / posenc.rope_frequencies(d, b))[-1],
                                lambda d, b: float(2 * torch.pi / torch.tensor(b, dtype=torch.float32)
                                                   ** (-(d - 2) / d))])
def test_slowest_wavelength_correct_styles_pass(fn):
    assert_passes(check_slowest_wavelength(fn))


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (lambda d, b: 2 * math.pi * b, ["you returned 2π b"]),
        (lambda d, b: posenc.rope_frequencies(d, b)[-1], ["you returned the frequency"]),
        (lambda d, b: 1 / posenc.rope_frequencies(d, b)[-1], ["lacks the factor 2π"]),
        (lambda d, b: (2 * math.pi / posenc.rope_frequencies(d, b))[-2], ["you took pair d/2 - 2"]),
        (lambda d, b: (2 * math.pi / posenc.rope_frequencies(d, b))[1], ["the fastest pairs"]),
        (lambda d, b: 2 * math.pi * b ** ((d - 1) / d), ["your exponent is 1 - 1/d"]),
        (lambda d, b: 2 * math.pi / b ** (-(d / 2 - 1) / d), ["your exponent lacks the factor 2"]),
    ],
)
def test_slowest_wavelength_mistakes_are_named(fn, phrases):
    assert_named(check_slowest_wavelength(fn), *phrases)


def trace_expected_score(cross, offsets, base=10000.0):
    """Σ_ℓ tr(B(δθ_ℓ) C^(ℓ)T) with explicit 2 x 2 rotation blocks."""
    dim = 2 * cross.shape[0]
    theta = posenc.rope_frequencies(dim, base).double()
    out = []
    for delta in offsets.tolist():
        total = 0.0
        for ell in range(cross.shape[0]):
            angle = delta * theta[ell]
            block = torch.stack([torch.stack([angle.cos(), -angle.sin()]), torch.stack([angle.sin(), angle.cos()])])
            total += torch.trace(block @ cross[ell].T).item()
        out.append(total)
    return torch.tensor(out)


@pytest.mark.parametrize("fn", [reference_expected_score, trace_expected_score])
def test_expected_score_correct_styles_pass(fn):
    assert_passes(check_expected_score(fn))


def expected_with(transpose=True, sine=True, symmetric=False, dim_of=lambda c: 2 * c.shape[0], swap=False):
    def score(cross, offsets, base=10000.0):
        theta = base ** (-2 * torch.arange(cross.shape[0], dtype=torch.float64) / dim_of(cross))
        angles = offsets.double()[:, None] * theta
        cos, sin = (angles.sin(), angles.cos()) if swap else (angles.cos(), angles.sin())
        c = cross.transpose(-1, -2) if transpose else cross  # tr(B C^T) uses C^T
        out = cos @ (c[:, 0, 0] + c[:, 1, 1])
        if sine:
            odd = c[:, 0, 1] + c[:, 1, 0] if symmetric else c[:, 0, 1] - c[:, 1, 0]
            out = out + sin @ odd
        return out

    return score


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (expected_with(transpose=False), ["the sine term has the wrong sign"]),
        (expected_with(sine=False), ["has no sine term"]),
        (expected_with(symmetric=True), ["uses C21 + C12"]),
        (expected_with(dim_of=lambda c: c.shape[0]), ["number of pairs d/2 as the dimension"]),
        (expected_with(swap=True), ["swapped sine and cosine"]),
    ],
)
def test_expected_score_mistakes_are_named(fn, phrases):
    assert_named(check_expected_score(fn), *phrases)


def score_of(query, key, offsets, base=10000.0, layout="interleaved"):
    """s(δ) = q^T R_δ k from rotations."""
    keys = apply_rope(key.expand(len(offsets), -1), offsets, base=base, layout=layout)
    return keys @ query


@pytest.mark.parametrize("fn", [
    reference_score_asymmetry,
    lambda q, k, o, base=10000.0: score_of(q, k, o, base) - score_of(q, k, -o, base),
])
def test_score_asymmetry_correct_styles_pass(fn):
    assert_passes(check_score_asymmetry(fn))


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (lambda q, k, o, base=10000.0: score_of(q, k, -o, base) - score_of(q, k, o, base), ["the wrong sign"]),
        (lambda q, k, o, base=10000.0: (score_of(q, k, o, base) - score_of(q, k, -o, base)) / 2,
         ["lacks the factor 2"]),
        (lambda q, k, o, base=10000.0: score_of(q, k, o, base) + score_of(q, k, -o, base), ["s(δ) + s(-δ)"]),
        (lambda q, k, o, base=10000.0: score_of(q, k, o, base, "half") - score_of(q, k, -o, base, "half"),
         ["the half layout"]),
        (lambda q, k, o, base=10000.0: (score_of(q, k, o, base) - score_of(q, k, -o, base)).abs(),
         ["keep the sign"]),
    ],
)
def test_score_asymmetry_mistakes_are_named(fn, phrases):
    assert_named(check_score_asymmetry(fn), *phrases)


def matrix_query(key, target, base=10000.0):
    return posenc.rope_matrix(float(target), key.shape[-1], base, dtype=torch.float64) @ key.double()


@pytest.mark.parametrize("fn", [reference_positional_head_query, matrix_query,
                                lambda k, t, base=10000.0: 3 * matrix_query(k, t, base).float()])
def test_positional_head_query_correct_styles_pass(fn):
    assert_passes(check_positional_head_query(fn))


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (lambda k, t, base=10000.0: matrix_query(k, -t, base), ["rotated the wrong way"]),
        (lambda k, t, base=10000.0: k, ["the key itself"]),
        (lambda k, t, base=10000.0: apply_rope(k[None], torch.tensor([t]), base=base, layout="half")[0],
         ["the half layout"]),
        (lambda k, t, base=10000.0: matrix_query(k, t), ["ignores its base"]),
        (lambda k, t, base=10000.0: -matrix_query(k, t, base), ["a minimum, not a maximum"]),
    ],
)
def test_positional_head_query_mistakes_are_named(fn, phrases):
    assert_named(check_positional_head_query(fn), *phrases)


def test_positional_head_query_reports_where_an_unnamed_answer_peaks():
    result = check_positional_head_query(lambda k, t, base=10000.0: matrix_query(k, t + 1, base))
    assert_fails_with(result, "the score of your query peaks at δ = -2, not at -3")
    assert FIRST_INPUT not in feedback(result)


# --------------------------------------------------------------------------- chapter 8


def loop_rows(table, length, option):
    rows = table.shape[0]
    out = []
    for m in range(length):
        if option == "clip":
            out.append(table[min(m, rows - 1)])
        elif option == "copy":
            out.append(table[m % rows])
        else:
            x = m * (rows - 1) / (length - 1)
            low = min(int(x), rows - 2)
            out.append((1 - (x - low)) * table[low] + (x - low) * table[low + 1])
    return torch.stack(out)


def interpolated(table, length, option):
    if option != "interpolate":
        return reference_extended_rows(table, length, option)
    return torch.nn.functional.interpolate(table.T[None], size=length, mode="linear", align_corners=True)[0].T


@pytest.mark.parametrize("fn", [reference_extended_rows, loop_rows, interpolated])
def test_extended_rows_correct_styles_pass(fn):
    assert_passes(check_extended_rows(fn))


def rows_with(copy=None, points=None, blend=True, swap=False):
    def rows_for(table, length, option):
        rows = table.shape[0]
        if option == "clip":
            return table[torch.arange(length).clamp(max=rows - 1)]
        if option == "copy":
            return table[copy(length, rows)] if copy else table[torch.arange(length) % rows]
        where = points(length, rows) if points else torch.linspace(0, rows - 1, length)
        if not blend:
            return table[where.round().long()]
        low = where.floor().long().clamp(max=rows - 2)
        fraction = (where - low)[:, None]
        if swap:
            return fraction * table[low] + (1 - fraction) * table[low + 1]
        return (1 - fraction) * table[low] + fraction * table[low + 1]

    return rows_for


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (rows_with(copy=lambda n, rows: torch.arange(n).clamp(max=rows - 1)), ["clips to the last row"]),
        (rows_with(points=lambda n, rows: torch.linspace(0, rows, n)),
         ["run from 0 to L"]),
        (rows_with(points=lambda n, rows: torch.arange(n) * rows / n), ["m L/L'"]),
        (rows_with(blend=False), ["reads the nearest row"]),
        (rows_with(swap=True), ["weights are swapped"]),
        (rows_with(copy=lambda n, rows: torch.arange(rows).repeat_interleave(math.ceil(n / rows))[:n]),
         ["repeats each row"]),
    ],
)
def test_extended_rows_mistakes_are_named(fn, phrases):
    assert_named(check_extended_rows(fn), *phrases)


@pytest.mark.parametrize("fn", [reference_alibi_bias_at_positions,
                                lambda m, p: -m[:, None, None] * torch.cdist(p[:, None].double(), p[:, None].double())])
def test_alibi_bias_at_positions_correct_styles_pass(fn):
    assert_passes(check_alibi_bias_at_positions(fn))


def distances(p):
    return (p[None, :] - p[:, None]).abs()


@pytest.mark.parametrize(
    ("fn", "phrases"),
    [
        (lambda m, p: -m[:, None, None] * distances(p.long()), ["converted the positions to integers"]),
        (lambda m, p: -m[:, None, None] * distances(torch.arange(len(p))), ["uses the indices 0, ..., L-1"]),
        (lambda m, p: m[:, None, None] * (p[None, :] - p[:, None]), ["the causal form"]),
        (lambda m, p: m[:, None, None] * distances(p), ["+m_r |p_j - p_i|"]),
        (lambda m, p: -distances(p).expand(len(m), -1, -1), ["does not use the slopes"]),
        (lambda m, p: -(m * (p[1] - p[0]))[:, None, None] * distances(p), ["you scaled twice"]),
    ],
)
def test_alibi_bias_at_positions_mistakes_are_named(fn, phrases):
    assert_named(check_alibi_bias_at_positions(fn), *phrases)


# ------------------------------------------------------------------ more scaling mistakes, as students write them


def meta_llama3(dim, base, factor, train_len, low, high, compare="wavelength", swapped=False, ramp="turns",
                start=0):
    """Meta's reference loop, with knobs for the threshold's unit and direction and the ramp's variable."""
    frequencies = 1.0 / base ** (torch.arange(start, dim + start, 2, dtype=torch.float64) / dim)
    low_wavelength, high_wavelength = train_len / low, train_len / high
    out = []
    for freq in frequencies.tolist():
        wavelength = 2 * math.pi / freq
        measured = wavelength if compare == "wavelength" else freq
        if swapped:  # `<` and `>` exchanged
            fast, slow = measured > high_wavelength, measured < low_wavelength
        else:
            fast, slow = measured < high_wavelength, measured > low_wavelength
        if fast:
            out.append(freq)
        elif slow:
            out.append(freq / factor)
        else:
            if ramp == "turns":
                smooth = (train_len / wavelength - low) / (high - low)
            else:
                smooth = (low_wavelength - wavelength) / (low_wavelength - high_wavelength)
            out.append((1 - smooth) * freq / factor + smooth * freq)
    return torch.tensor(out)


def test_meta_llama3_loop_is_accepted():
    assert_passes(check_llama3_frequencies(meta_llama3))


def dynamic_from_one(d, b, s, n_train, n):
    scale = s * max(n, n_train) / n_train - (s - 1)
    return (b * scale ** (d / (d - 2))) ** (-torch.arange(2, d + 2, 2, dtype=torch.float64) / d)


@pytest.mark.parametrize(
    ("check", "fn", "phrases"),
    [
        (check_pi_frequencies, lambda d, b, s: b ** (-torch.arange(d // 2) / d) / s,
         ["the exponent needs the factor 2"]),
        (check_pi_frequencies, lambda d, b, s: b ** (-torch.arange(2, d + 2, 2) / d) / s, ["ℓ counts from 1"]),
        (check_pi_frequencies, lambda d, b, s: theta(d, b) / s / s, ["divided by the factor twice"]),
        (check_pi_frequencies, lambda d, b, s: theta(d, 10000.0) / s, ["ignores its base"]),
        (check_ntk_frequencies, lambda d, b, s: b ** (-torch.arange(2, d + 2, 2) / d) * s ** (-2 * torch.arange(
            1, d // 2 + 1) / (d - 2)), ["ℓ counts from 1"]),
        (check_ntk_frequencies, lambda d, b, s: theta(d, b / s ** (d / (d - 2))), ["you divided the base"]),
        (check_ntk_frequencies, lambda d, b, s: theta(d, b) / s ** (d / (d - 2)), ["the factor belongs to the base"]),
        (check_dynamic_ntk_frequencies, lambda d, b, s, n_train, n: theta(
            d, b * (s * max(n, n_train) / n_train - (s - 1))), ["without the exponent d/(d-2)"]),
        (check_dynamic_ntk_frequencies, lambda d, b, s, n_train, n: theta(
            d, b * (max(n, n_train) / n_train) ** (d / (d - 2))), ["without the factor"]),
        (check_dynamic_ntk_frequencies, lambda d, b, s, n_train, n: theta(d, b), ["these are the original"]),
        (check_dynamic_ntk_frequencies, dynamic_from_one, ["ℓ counts from 1"]),
        (check_yarn_frequencies, lambda d, b, s, n, fast, slow: formula_yarn(d, b, s, n, fast, slow) * (
            0.1 * math.log(s) + 1), ["multiplied the frequencies by the attention factor"]),
        (check_yarn_frequencies, lambda d, b, s, n, fast, slow: formula_yarn(d, b, s, n, fast, slow) / (
            0.1 * math.log(s) + 1), ["divided the frequencies by the attention factor"]),
        (check_yarn_frequencies, lambda d, b, s, n, fast, slow: theta(d, b) / s, ["these are PI's frequencies"]),
        (check_llama3_frequencies, partial(meta_llama3, compare="frequency"),
         ["compare the frequency θ_ℓ with the wavelength bounds"]),
        (check_llama3_frequencies, partial(meta_llama3, swapped=True), ["your thresholds point the wrong way"]),
        (check_llama3_frequencies, partial(meta_llama3, ramp="wavelength"), ["linear in the wavelength λ_ℓ"]),
        (check_llama3_frequencies, partial(meta_llama3, start=2), ["ℓ counts from 1"]),
    ],
)
def test_scaling_student_mistakes_are_named(check, fn, phrases):
    assert_fails_with(check(fn), *phrases, "should have frequency")


# --------------------------------------------------------------------------- no message names a mistake not made


def test_relative_shift_single_query_bug_gets_no_memory_hint_and_no_named_mistake():
    def squeezes(rel_logits):  # breaks only when Lq == 1: a bug of its own, not the memory
        shifted = transformer_xl_rel_shift(rel_logits)
        return shifted * 0 if rel_logits.shape[-2] == 1 else shifted

    text = feedback(check_relative_shift(squeezes))
    assert "works when Lq == Lk but not with a memory" not in text
    assert "you keep the first Lq rows" not in text and "these are the unshifted logits" not in text
    assert "Lq = 1" in text and "the value of the zero padding" in text


def test_dynamic_ntk_hint_only_when_it_explains_the_failures():
    def one_short_case_wrong(d, b, s, n_train, n):
        right = formula_dynamic(d, b, s, n_train, n)
        return right * 1.01 if (n_train, n) == (64, 48) else right

    text = feedback(check_dynamic_ntk_frequencies(one_short_case_wrong))
    assert "only the settings with seq_len below the training length failed" not in text
    assert "pair ℓ = 0" in text


def test_a_mistake_matching_only_some_failed_cases_is_not_named():
    from posenc.exercises.foundations import reference_cross_attention

    def sometimes_unscaled(y, z, wq, wk, wv):  # unscaled on one shape, a different bug on the others
        if y.shape[0] == 3:
            return torch.softmax((y @ wq) @ (z @ wk).T, -1) @ (z @ wv)
        return reference_cross_attention(y, z, wq, wk, wv) + 0.5

    text = feedback(check_cross_attention(sometimes_unscaled))
    assert "not divided by sqrt(d_k)" not in text and "first wrong entry of the output" in text
