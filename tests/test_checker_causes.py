"""The causes a checker names are the student's own (issue #32, blind batch 27, cases 1-64).

Each family of slip below was once named with a cause the student did not make, or not named at all: a T5 cap at
``n`` called "not capped", a bidirectional T5 without halving called an ignored or scaled ``num_buckets``, ALiBi
slopes numbered from 0 in one part called "odd-indexed" in the other, a 2-D RoPE half left at the default base called
"base²", transposed cross-attention weights reported as a bare shape error. Each is written here in two ways, and
the message must name the slip and must not name the wrong cause.
"""

from __future__ import annotations

import math

import pytest
import torch
from test_exercises import assert_fails_with, assert_passes, feedback

from posenc import apply_rope
from posenc.exercises import (
    check_alibi_slopes,
    check_apply_rope_2d,
    check_cross_attention,
    check_decayed_rows,
    check_relative_shift,
    check_t5_bucket,
)
from posenc.relative import alibi_slopes, t5_relative_position_bucket
from posenc.rope2d import apply_rope_2d

# --------------------------------------------------------------------------- T5: the cap and the halving


def t5_with(cap_at=None, halve=True):
    """T5's buckets, vectorised, with the cap at ``cap_at(n)`` and the bidirectional halving optional."""

    def bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
        n = num_buckets // 2 if bidirectional and halve else num_buckets
        upper = (relative_position > 0).long() * n if bidirectional else torch.zeros_like(relative_position)
        distance = relative_position.abs() if bidirectional else (-relative_position).clamp(min=0)
        exact = n // 2
        large = exact + (torch.log(distance.clamp(min=1).float() / exact) / math.log(max_distance / exact)
                         * (n - exact)).long()
        large = large.clamp(max=n - 1 if cap_at is None else cap_at(n))
        return upper + torch.where(distance < exact, distance, large)

    return bucket


def t5_loop_with(cap_at=None, halve=True):
    """The same, offset by offset in Python, as a student translating the paper would write it."""

    def bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
        def one(offset):
            n = num_buckets // 2 if bidirectional and halve else num_buckets
            first = n if bidirectional and offset > 0 else 0
            distance = abs(offset) if bidirectional else max(-offset, 0)
            exact = n // 2
            if distance < exact:
                return first + distance
            large = exact + int(math.log(distance / exact) / math.log(max_distance / exact) * (n - exact))
            return first + min(large, n - 1 if cap_at is None else cap_at(n))

        values = [one(offset) for offset in relative_position.flatten().tolist()]
        return torch.tensor(values, dtype=torch.long).reshape(relative_position.shape)

    return bucket


@pytest.mark.parametrize("fn", [t5_with(), t5_loop_with()])
def test_t5_renderings_without_mistakes_pass(fn):
    assert_passes(check_t5_bucket(fn))


@pytest.mark.parametrize("fn", [t5_with(cap_at=lambda n: n), t5_loop_with(cap_at=lambda n: n)])
def test_t5_cap_at_n_is_named_and_not_called_uncapped(fn):
    result = check_t5_bucket(fn)
    assert_fails_with(result, "capped at 16, one too high", "n - 1 = 15", "not .clamp(max=n)")
    assert "not capped" not in feedback(result)


def test_t5_cap_a_case_cannot_place_is_said_by_what_is_certain():
    """Capped at n on the one failed case, where no cap gives the same buckets: neither reading is asserted."""
    capped_at_n = t5_with(cap_at=lambda n: n)

    def short_offsets_only(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
        wrong = bidirectional and num_buckets == 32 and int(relative_position.abs().max()) <= 160
        fn = capped_at_n if wrong else t5_relative_position_bucket
        return fn(relative_position, bidirectional, num_buckets, max_distance)

    result = check_t5_bucket(short_offsets_only)
    assert_fails_with(result, "go past the last bucket of their direction, n - 1 = 15", "clamp the logarithmic "
                      "bucket at n - 1", "no cap at all and a cap at n = 16 give the same buckets", "failed 1 of 7")
    assert "one too high" not in feedback(result) and "is not capped" not in feedback(result)


@pytest.mark.parametrize("fn", [t5_with(cap_at=lambda n: n - 2), t5_loop_with(cap_at=lambda n: n - 2)])
def test_t5_cap_one_too_low_is_named(fn):
    result = check_t5_bucket(fn)
    assert_fails_with(result, "capped at 14, one too low", "n - 1 = 15")
    assert "not capped" not in feedback(result)


@pytest.mark.parametrize("fn", [t5_with(halve=False), t5_loop_with(halve=False)])
def test_t5_without_halving_is_named_and_not_called_an_ignored_argument(fn):
    result = check_t5_bucket(fn)
    assert_fails_with(result, "each direction gets all num_buckets", "num_buckets // 2 = 16")
    text = feedback(result)
    for wrong in ("is ignored", "happen to equal", "scales the argument", "use the value given, unchanged"):
        assert wrong not in text


def test_t5_no_halving_on_a_case_an_ignored_argument_also_explains_offers_both():
    no_halving = t5_with(halve=False)

    def at_sixteen_only(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
        fn = no_halving if num_buckets == 16 else t5_relative_position_bucket
        return fn(relative_position, bidirectional, num_buckets, max_distance)

    result = check_t5_bucket(at_sixteen_only)
    assert_fails_with(result, "each direction gets all num_buckets = 16", "or, equally on this setting, the "
                      "num_buckets argument is ignored", "failed 1 of 7")
    assert "scales the argument" not in feedback(result)


def test_t5_ignored_num_buckets_is_still_named_as_such():
    def fixed(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
        return t5_relative_position_bucket(relative_position, bidirectional, 32, max_distance)

    result = check_t5_bucket(fixed)
    assert_fails_with(result, "the num_buckets argument is ignored")
    assert "each direction gets all num_buckets" not in feedback(result)


# --------------------------------------------------------------------------- ALiBi: heads numbered from 0 in one part


def slopes_power_part_from_zero(num_heads):
    power = 2 ** math.floor(math.log2(num_heads))
    first = [2 ** (-8 * h / power) for h in range(power)]
    extra = [2 ** (-8 * (2 * h + 1) / (2 * power)) for h in range(num_heads - power)]
    return first + extra


def slopes_power_part_from_zero_torch(num_heads):
    power = 2 ** math.floor(math.log2(num_heads))
    first = torch.exp2(-8 * torch.arange(power, dtype=torch.float64) / power)
    return torch.cat((first, alibi_slopes(2 * power).double()[0::2][: num_heads - power]))


@pytest.mark.parametrize("fn", [slopes_power_part_from_zero, slopes_power_part_from_zero_torch])
def test_alibi_numbered_from_zero_in_the_power_part_does_not_blame_the_right_extras(fn):
    result = check_alibi_slopes(fn)
    assert_fails_with(result, "numbered from 0", "2^0 = 1")
    assert "odd-indexed" not in feedback(result)


def test_alibi_odd_extras_are_still_named():
    def odd(num_heads):
        power = 2 ** math.floor(math.log2(num_heads))
        return torch.cat((alibi_slopes(power), alibi_slopes(2 * power)[1::2][: num_heads - power]))

    assert_fails_with(check_alibi_slopes(odd), "odd-indexed")


# --------------------------------------------------------------------------- 2-D RoPE: a half at the default base


def columns_at_default_base(x, rows, columns, base=10000.0):
    first, second = x.chunk(2, dim=-1)
    return torch.cat((apply_rope(first, rows, base=base), apply_rope(second, columns)), dim=-1)


def rows_at_default_base(x, rows, columns, base=10000.0):
    half = x.shape[-1] // 2
    return torch.cat((apply_rope(x[..., :half], rows), apply_rope(x[..., half:], columns, base=base)), dim=-1)


def columns_at_squared_base(x, rows, columns, base=10000.0):
    first, second = x.chunk(2, dim=-1)
    return torch.cat((apply_rope(first, rows, base=base), apply_rope(second, columns, base=base ** 2)), dim=-1)


@pytest.mark.parametrize(("fn", "half"), [(columns_at_default_base, "second half (the columns)"),
                                          (rows_at_default_base, "first half (the rows)")])
def test_rope_2d_half_at_the_default_base_is_not_called_squared(fn, half):
    result = check_apply_rope_2d(fn)
    assert_fails_with(result, f"your {half} rotates with the default base 10000", "does not reach this half")
    assert "base²" not in feedback(result)


def test_rope_2d_squared_base_on_a_half_is_named_squared():
    result = check_apply_rope_2d(columns_at_squared_base)
    assert_fails_with(result, "rotates with the base base² = 1e+08, not the base 10000 given")
    assert "default base" not in feedback(result)


def test_rope_2d_raster_index_is_named_once():
    def raster(x, rows, columns, base=10000.0):
        return apply_rope(x, rows * (int(columns.max()) + 1) + columns, base=base)

    result = check_apply_rope_2d(raster)
    assert_fails_with(result, "one 1-D RoPE of dimension d")
    assert "turns the tokens by the positions" not in feedback(result)


@pytest.mark.parametrize("fn", [apply_rope_2d, lambda x, rows, columns, base=10000.0: torch.cat(
    (apply_rope(x[..., : x.shape[-1] // 2], rows, base=base), apply_rope(x[..., x.shape[-1] // 2:], columns,
                                                                         base=base)), dim=-1)])
def test_rope_2d_right_answers_pass(fn):
    assert_passes(check_apply_rope_2d(fn))


# --------------------------------------------------------------------------- cross-attention: weights transposed


def cross_transposed(y, z, w_q, w_k, w_v):
    q, k, v = y @ w_q.T, z @ w_k.T, z @ w_v.T
    return torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), -1) @ v


def cross_linear(y, z, w_q, w_k, w_v):
    linear = torch.nn.functional.linear
    scores = linear(y, w_q) @ linear(z, w_k).T / math.sqrt(w_k.shape[0])  # d_k, for a (d_k, d) weight
    return scores.softmax(dim=-1) @ linear(z, w_v)


@pytest.mark.parametrize("fn", [cross_transposed, cross_linear])
def test_cross_attention_transposed_weights_are_named(fn):
    result = check_cross_attention(fn)
    assert_fails_with(result, "reads w_q, w_k and w_v transposed", "without .T")
    assert "d/2 pairs" not in feedback(result)


def test_cross_attention_right_answer_in_another_style_passes():
    def einsum(y, z, w_q, w_k, w_v):
        scores = torch.einsum("md,dk,nc,ck->mn", y, w_q, z, w_k) / w_k.shape[1] ** 0.5
        return torch.einsum("mn,nc,cv->mv", scores.softmax(-1), z, w_v)

    assert_passes(check_cross_attention(einsum))


# --------------------------------------------------------------------------- wording: the rows kept, the argument named


def test_relative_shift_first_rows_says_lk_rows():
    def drop_last_row(rel_logits):
        *batch, q_len, k_len = rel_logits.shape
        padded = torch.nn.functional.pad(rel_logits, (1, 0))
        return padded.reshape(*batch, k_len + 1, q_len)[..., :-1, :].reshape(*batch, q_len, k_len)

    result = check_relative_shift(drop_last_row)
    assert_fails_with(result, "you keep the first Lk rows", "drop the first row instead")
    assert "first Lq rows" not in feedback(result)


@pytest.mark.parametrize("decay", [lambda initial, factor: initial.mul_(factor),
                                   lambda initial, factor: initial.__imul__(factor)])
def test_in_place_edit_names_the_argument_as_the_signature_does(decay):
    def in_place(initial, lr, weight_decay, steps):
        return decay(initial, (1 - lr * weight_decay) ** steps)

    result = check_decayed_rows(in_place)
    assert_fails_with(result, "modified its input initial in place", "initial.mul_(...)")
    assert "argument 1" not in feedback(result)
