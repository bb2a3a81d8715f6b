"""Checkers of the relative-position exercises: Shaw's rows, the skew, T5's buckets, ALiBi's slopes.

- :func:`~posenc.exercises.check_shaw_index`: the row of Shaw et al.'s table that each
  query-key pair reads, ``clip(j - i, -c, c) + c``, with cached queries;
- :func:`~posenc.exercises.check_relative_shift`: the relative shift ("skew") of
  Transformer-XL, with a memory of cached keys;
- :func:`~posenc.exercises.check_t5_bucket`: T5's relative position buckets, region by region
  (sign, exact small offsets, logarithmic large ones, the clamp at ``num_buckets - 1``);
- :func:`~posenc.exercises.check_alibi_slopes`: ALiBi's per-head slopes, including head counts
  that are not powers of two.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import torch

from ..relative import alibi_slopes, t5_relative_position_bucket
from .checking import (
    _SEED,
    CheckResult,
    _describe,
    _dtype,
    _expect_integer,
    _expect_shape,
    _expect_tensor,
    _first_difference,
    _num,
    _Problem,
    _public,
    _run_checker,
    _Session,
    _type_name,
    _unchanged,
    _values,
)

__all__ = ["check_shaw_index", "check_relative_shift", "check_t5_bucket", "check_alibi_slopes"]


# --------------------------------------------------------------------------- Shaw et al.'s row index


def _shaw_rows(q_len: int, k_len: int, max_distance: int, query_offset: int, *, sign: int = 1, low: int | None = None,
               high: int | None = None, shift: bool = True, shift_first: bool = False) -> torch.Tensor:
    """Row numbers of Shaw et al.'s table, with knobs for the typical mistakes (reference by default)."""
    offsets = sign * (torch.arange(k_len)[None, :] - (query_offset + torch.arange(q_len))[:, None])
    low = -max_distance if low is None else low
    high = max_distance if high is None else high
    if shift_first:
        return (offsets + max_distance).clamp(low, high)
    return offsets.clamp(low, high) + (max_distance if shift else 0)


@_public
def check_shaw_index(fn: Callable[..., Any]) -> CheckResult:
    """Check a student's row index of Shaw et al.'s table ``fn(q_len, k_len, max_distance, query_offset=0)``.

    The result is the ``(q_len, k_len)`` integer tensor of the rows that query ``r`` (at position
    ``i = query_offset + r``) and key ``j`` read from a table of ``2c + 1`` rows, ``c`` =
    ``max_distance``: ``clip(j - i, -c, c) + c``, as ``clipped_relative_positions(...) + c`` in
    :mod:`posenc.relative`. The hidden cases cover square and cached (``q_len < k_len`` with
    ``query_offset = k_len - q_len``) shapes, ``c = 0`` and ``c`` beyond every offset.

    Diagnosed mistakes: ``i - j`` instead of ``j - i``; the shift by ``c`` missing (negative
    rows); the shift added before clipping to ``[-c, c]``; clipping to ``[0, 2c]`` before the
    shift; clipping to ``c - 1``; ``query_offset`` ignored; a float dtype, wrong shape; the
    row of a pair named when nothing else is recognised; exceptions.

    Args:
        fn: the student's function.

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable.
    """

    def body(session: _Session) -> list[str]:
        cases = [(6, 6, 2, 0), (10, 10, 3, 0), (1, 1, 0, 0), (5, 5, 0, 0), (4, 4, 16, 0), (3, 9, 2, 6), (1, 12, 4, 11),
                 (5, 9, 3, 4)]
        for q_len, k_len, max_distance, offset in cases:
            tags = {"offset"} if offset else set()
            session.run(partial(_shaw_case, session, q_len, k_len, max_distance, offset), tags)
        if session.only_failed_with("offset"):
            session.problem(
                "offset hint",
                "only the cases with query_offset > 0 failed: query r sits at position i = query_offset + r (in cached "
                "decoding the new queries are the last tokens), so the offset is j - (query_offset + r)",
            )
        return [
            f"matches clipped_relative_positions(...) + max_distance on {session.cases} hidden cases: square and "
            "cached shapes (query_offset > 0), max_distance from 0 to 16",
            "row of pair (i, j) = clip(j - i, -c, c) + c, an integer in [0, 2c]",
        ]

    return _run_checker("Shaw et al.'s row index", fn, body)


def _shaw_case(session: _Session, q_len: int, k_len: int, max_distance: int, offset: int) -> None:
    if offset:
        call = f"fn({q_len}, {k_len}, {max_distance}, query_offset={offset})"
        returned = session.call(call, q_len, k_len, max_distance, query_offset=offset)
    else:
        call = f"fn({q_len}, {k_len}, {max_distance})"
        returned = session.call(call, q_len, k_len, max_distance)
    got = _expect_tensor(returned, "rows", call)
    _expect_shape(got, (q_len, k_len), "rows", call, " (q_len, k_len): one row number per query-key pair")
    _expect_integer(session, got, "rows", call)
    got = got.long()
    expected = _shaw_rows(q_len, k_len, max_distance, offset)
    if torch.equal(got, expected):
        return
    c = max_distance
    r, j = (int(index) for index in (got != expected).nonzero()[0])
    i = offset + r
    text = (
        f"{call}: query {r} (position i = {i}) and key j = {j}, offset j - i = {j - i}, read row "
        f"clip({j - i}, -{c}, {c}) + {c} = {int(expected[r, j])}; got {int(got[r, j])}"
    )
    variants: list[tuple[dict[str, Any], str, str]] = [
        ({"sign": -1}, "sign", "you use i - j; the book's offset is j - i (key minus query), so keys after the query "
         "read the rows above c"),
        ({"shift": False}, "no shift", "the shift by c is missing: offsets run from -c to c, rows from 0 to 2c, "
         f"so add c = {c} after clipping (a negative row would silently index the table from its end)"),
        ({"shift_first": True}, "clip after shift", "you add c before clipping to [-c, c]: clip the offset first, "
         "then add c, clip(j - i, -c, c) + c (or clip j - i + c to [0, 2c])"),
        ({"low": 0, "high": 2 * c}, "clip to rows", "you clip the offset to [0, 2c] and then add c: [0, 2c] is the "
         "range of the rows; the offset is clipped to [-c, c]"),
        ({"low": -c + 1, "high": c - 1}, "c - 1", "you clip to [-(c - 1), c - 1]: Shaw et al. clip to [-c, c], and "
         "the table has 2c + 1 rows"),
        ({"low": -c, "high": c - 1}, "c - 1", "you clip the positive offsets to c - 1: the range is [-c, c], both "
         "ends included"),
    ]
    for knobs, key, explanation in variants:
        if torch.equal(got, _shaw_rows(q_len, k_len, c, offset, **knobs)):
            raise _Problem(key, f"{text}: {explanation}")
        if offset and torch.equal(got, _shaw_rows(q_len, k_len, c, 0, **knobs)):
            raise _Problem(f"offset + {key}", f"{text}: query_offset is ignored (query r sits at query_offset + r); "
                           f"and {explanation}")
    if offset and torch.equal(got, _shaw_rows(q_len, k_len, c, 0)):
        raise _Problem("offset", f"{text}: query_offset is ignored: query r sits at position query_offset + r, so "
                       "in cached decoding the newest keys are the nearest, not the farthest")
    raise _Problem("rows", f"{text}. The row of pair (i, j) is clip(j - i, -c, c) + c")


# --------------------------------------------------------------------------- the relative shift


def _shift_reference(rel_logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``out[..., r, j] = rel_logits[..., r, j + Lq - 1 - r]`` by a gather, and where that column exists."""
    q_len, k_len = rel_logits.shape[-2:]
    columns = torch.arange(k_len)[None, :] + (q_len - 1 - torch.arange(q_len))[:, None]
    visible = columns <= k_len - 1
    gathered = torch.gather(rel_logits, -1, columns.clamp(max=k_len - 1).expand(*rel_logits.shape[:-2], -1, -1))
    return gathered, visible


def _shift_variant(rel_logits: torch.Tensor, kind: str) -> torch.Tensor | None:
    """The typical wrong relative shifts (reshape tricks that keep the wrong rows or pad the wrong side)."""
    *batch, q_len, k_len = rel_logits.shape
    if kind == "first rows":
        padded = torch.nn.functional.pad(rel_logits, (1, 0))
        return padded.reshape(*batch, k_len + 1, q_len)[..., :-1, :].reshape(*batch, q_len, k_len)
    if kind == "pad right":
        padded = torch.nn.functional.pad(rel_logits, (0, 1))
        return padded.reshape(*batch, k_len + 1, q_len)[..., 1:, :].reshape(*batch, q_len, k_len)
    if kind == "unshifted":
        return rel_logits
    if kind == "flipped":
        return _shift_reference(rel_logits.flip(-1))[0]
    return None


@_public
def check_relative_shift(fn: Callable[..., Any]) -> CheckResult:
    """Check a student's relative shift (skew) ``fn(rel_logits) -> (..., Lq, Lk)``, with a memory.

    ``rel_logits`` has shape ``(..., Lq, Lk)``, ``Lq <= Lk``: ``Lq`` queries at the *last*
    positions ``i = Lk - Lq + r`` of ``Lk`` keys (the keys of the segment and, before them, a
    cached memory, as in Transformer-XL), and column ``c`` holds ``q_r · a_δ`` for the offset
    ``δ = c - (Lk - 1)``, from ``-(Lk - 1)`` to 0. The result must hold ``q_r · a_(j - i)`` at
    ``(r, j)`` for every visible key, ``j <= i``: ``rel_logits[..., r, j + Lq - 1 - r]``. Entries
    above (future keys, hidden by the causal mask) are not checked. The hidden cases have square
    and non-square shapes, leading batch and head dimensions, float32 and float64 inputs.

    Diagnosed mistakes: the first ``Lq`` rows of the reshaped matrix kept instead of the last
    (every row moved up by one); the zero column padded on the right; no shift at all; the table
    read backwards; a reshape that assumes ``Lq == Lk``; dtype or shape changed; the input
    modified in place; otherwise, the entry the wrong value was taken from; exceptions.

    Args:
        fn: the student's function.

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable.
    """

    def body(session: _Session) -> list[str]:
        generator = torch.Generator().manual_seed(_SEED)
        shapes = [((6, 6), torch.float64), ((2, 3, 5, 5), torch.float32), ((1, 1), torch.float64),
                  ((3, 8), torch.float64), ((2, 4, 4, 7), torch.float32), ((1, 5), torch.float64),
                  ((2, 7, 12), torch.float64)]
        failures: list[tuple[str, set[str]]] = []
        for shape, dtype in shapes:
            rel_logits = torch.randn(*shape, generator=generator, dtype=torch.float64).to(dtype)
            tags = {"memory"} if shape[-2] != shape[-1] else set()
            session.run(partial(_shift_case, session, rel_logits, failures), tags)
        # A mistake is named only when it explains every case whose values were wrong.
        common = set.intersection(*(kinds for _, kinds in failures)) if failures else set()
        named = [kind for kind in _SHIFT_EXPLANATIONS if kind in common]
        if named:
            for key in [key for key in session.problems if key == "shift" or key in _SHIFT_EXPLANATIONS]:
                del session.problems[key]
            session.problems[named[0]] = f"{failures[0][0]}: {_SHIFT_EXPLANATIONS[named[0]]}"
        if session.failed_exactly_with("memory"):
            session.problem(
                "memory hint",
                "your shift works when Lq == Lk but not with a memory (Lq < Lk): pad to (..., Lq, Lk + 1), read the "
                "same memory as (..., Lk + 1, Lq), drop the first row and read the rest as (..., Lq, Lk)",
            )
        return [
            f"entry (r, j) holds q_r · a_(j - i), i = Lk - Lq + r, for every visible key j <= i, in {session.cases} "
            "hidden cases: square and with a memory (Lq < Lk), with batch and head dimensions, float32 and float64",
            "keeps the dtype and leaves rel_logits unchanged",
        ]

    return _run_checker("relative shift (skew)", fn, body)


_SHIFT_EXPLANATIONS = {
    "first rows": "you keep the first Lq rows of the (..., Lk + 1, Lq) view; drop the first row instead "
    "([..., 1:, :]): keeping the first moves every row up by one, so entry (r, j) holds the previous query with "
    "the offset one step too near",
    "pad right": "the zero column goes on the left, (1, 0) in F.pad: padding on the right shifts every row the "
    "wrong way",
    "unshifted": "these are the unshifted logits: column c of row r holds offset c - (Lk - 1), and row r must move "
    "left by Lq - 1 - r places so that column j holds offset j - i",
    "flipped": "you read the table backwards: column c of rel_logits holds the offset δ = c - (Lk - 1) (the "
    "most negative first, offset 0 last), not -δ",
}


def _shift_case(session: _Session, rel_logits: torch.Tensor, failures: list[tuple[str, set[str]]]) -> None:
    *batch, q_len, k_len = rel_logits.shape
    given = rel_logits.clone()
    call = f"fn({_describe('rel_logits', rel_logits)}) with Lq = {q_len}, Lk = {k_len}"
    returned = session.call(call, given)
    _unchanged(session, {"rel_logits": rel_logits}, {"rel_logits": given}, call)
    got = _expect_tensor(returned, "shifted logits", call)
    _expect_shape(got, tuple(rel_logits.shape), "shifted logits", call, " (..., Lq, Lk), the shape of rel_logits")
    if got.dtype != rel_logits.dtype:
        session.problem("dtype", f"{call} returned dtype {_dtype(got.dtype)}; expected {_dtype(rel_logits.dtype)}, the "
                        "dtype of rel_logits: the shift only moves entries")
    expected, visible = _shift_reference(rel_logits)
    visible = visible.expand_as(expected)
    if torch.equal(got.to(rel_logits.dtype)[visible], expected[visible]):
        return
    wrong = visible & (got.to(rel_logits.dtype) != expected)
    index = tuple(int(i) for i in wrong.nonzero()[0])
    r, j = index[-2:]
    i = k_len - q_len + r
    text = (
        f"{call}: entry (r = {r}, j = {j}), query at position i = {i}, offset j - i = {j - i}, should be "
        f"rel_logits[..., {r}, {j - i + k_len - 1}] = {_num(float(expected[index]))}, got {_num(float(got[index]))}"
    )
    kinds = set()
    for kind in _SHIFT_EXPLANATIONS:
        candidate = _shift_variant(rel_logits, kind)
        if candidate is not None and not torch.equal(candidate[visible], expected[visible]) and torch.equal(
            got.to(rel_logits.dtype)[visible], candidate[visible]
        ):
            kinds.add(kind)
    failures.append((text, kinds))
    value = got.to(rel_logits.dtype)[index]
    sources = (rel_logits[index[:-2]] == value).nonzero() if value != 0 else torch.empty(0, 2)
    if value == 0:
        where = "0, the value of the zero padding"
    elif len(sources):
        source_r, source_c = (int(v) for v in sources[0])
        where = f"rel_logits[..., {source_r}, {source_c}] (query {source_r}, offset {source_c - k_len + 1})"
    else:
        where = "a value that is not an entry of rel_logits: the shift should only move entries"
    raise _Problem("shift", f"{text}, which is {where}")


# --------------------------------------------------------------------------- T5 buckets


def _t5_variant(
    relative_position: torch.Tensor,
    bidirectional: bool,
    num_buckets: int,
    max_distance: int,
    *,
    sign: int = 1,
    exact_shift: int = 0,
    cap: bool = True,
    rounding: str = "floor",
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """T5's buckets with knobs for the typical deviations (the reference when all are default)."""
    relative_position = relative_position.long() * sign
    buckets = torch.zeros_like(relative_position)
    per_direction = num_buckets
    if bidirectional:
        per_direction //= 2
        buckets = buckets + (relative_position > 0).long() * per_direction
        distance = relative_position.abs()
    else:
        distance = (-relative_position).clamp(min=0)
    max_exact = max(per_direction // 2 + exact_shift, 1)
    ratio = (
        torch.log(distance.clamp(min=1).to(dtype) / max_exact)
        / math.log(max_distance / max_exact)
        * (per_direction - max_exact)
    )
    if rounding == "round":
        ratio = ratio.round()
    elif rounding == "ceil":
        ratio = ratio.ceil()
    large = max_exact + ratio.long()
    if cap:
        large = large.clamp(max=per_direction - 1)
    return buckets + torch.where(distance < max_exact, distance, large)


def _t5_matches(got: torch.Tensor, relative_position: torch.Tensor, *args: Any, **kwargs: Any) -> bool:
    """Whether ``got`` equals the variant, computed in float32 or float64 (entry by entry)."""
    single = _t5_variant(relative_position, *args, **kwargs)
    double = _t5_variant(relative_position, *args, **kwargs, dtype=torch.float64)
    return bool(((got == single) | (got == double)).all())


def _t5_region(offset: int, bidirectional: bool, num_buckets: int, max_distance: int) -> str:
    per_direction = num_buckets // 2 if bidirectional else num_buckets
    max_exact = per_direction // 2
    if not bidirectional and offset > 0:
        return "a future key, which the causal setting puts in bucket 0"
    distance = abs(offset)
    side = ("key after the query" if offset > 0 else "key before the query") if offset else "the query itself"
    if distance < max_exact:
        return f"{side}, exact range: distance {distance} < max_exact = {max_exact}"
    if distance < max_distance:
        return f"{side}, logarithmic range: max_exact = {max_exact} <= distance {distance} < max_distance"
    return f"{side}, distance {distance} >= max_distance = {max_distance}: last bucket of its direction"


@_public
def check_t5_bucket(fn: Callable[..., Any]) -> CheckResult:
    """Check a student's T5 bucketing ``fn(relative_position, bidirectional=True, num_buckets=32, max_distance=128)``.

    ``relative_position`` holds ``j - i`` (key minus query); the result must be the tensor of
    buckets of :func:`posenc.relative.t5_relative_position_bucket` (integers of the same shape). The hidden
    cases use 1-D and 2-D offsets up to ±1000, bidirectional and causal settings, the default
    ``num_buckets=32, max_distance=128`` and other values. Buckets computed with a float64
    logarithm are accepted where they differ from T5's float32 at exact bucket boundaries.

    Diagnosed mistakes: sign convention ``i - j`` (past and future swapped); ``bidirectional``
    ignored; ``num_buckets`` or ``max_distance`` ignored; exact range off by one; no cap at the last
    bucket beyond ``max_distance``; rounding (or ceiling) instead of flooring the logarithmic part;
    wrong shape or dtype; exceptions. Each message names the setting, the offset, the expected and
    the returned bucket.

    Args:
        fn: the student's function.

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable.
    """

    def body(session: _Session) -> list[str]:
        generator = torch.Generator().manual_seed(_SEED)
        span = torch.arange(-160, 161)
        cases: list[tuple[torch.Tensor, dict[str, Any]]] = [
            (span, {}),
            (torch.randint(-400, 401, (6, 25), generator=generator), {"bidirectional": True}),
            (span, {"bidirectional": False}),
            (torch.arange(-120, 121), {"bidirectional": True, "num_buckets": 16, "max_distance": 50}),
            (torch.arange(-120, 121), {"bidirectional": False, "num_buckets": 12, "max_distance": 40}),
            (torch.randint(-1000, 1001, (3, 30), generator=generator),
             {"bidirectional": True, "num_buckets": 64, "max_distance": 256}),
            (torch.arange(-30, 31).reshape(1, 61), {"bidirectional": False, "num_buckets": 32, "max_distance": 20}),
        ]
        for relative_position, kwargs in cases:
            session.run(partial(_t5_case, session, relative_position, kwargs))
        return [
            f"matches posenc.t5_relative_position_bucket on {session.cases} hidden cases: bidirectional and causal, "
            "num_buckets from 12 to 64, max_distance from 20 to 256, offsets up to ±1000, 1-D and 2-D inputs",
            "sign convention j - i (keys after the query go to the upper half), exact buckets for small distances, "
            "floored logarithmic buckets, and the last bucket for every distance beyond max_distance",
        ]

    return _run_checker("T5 relative position buckets", fn, body)


def _t5_case(session: _Session, relative_position: torch.Tensor, kwargs: dict[str, Any]) -> None:
    bidirectional = kwargs.get("bidirectional", True)
    num_buckets = kwargs.get("num_buckets", 32)
    max_distance = kwargs.get("max_distance", 128)
    shown = ", ".join(f"{name}={value}" for name, value in kwargs.items())
    given = relative_position.clone()
    call = f"fn(relative_position of shape {tuple(relative_position.shape)}{', ' + shown if shown else ''})"
    returned = session.call(call, given, **kwargs)
    _unchanged(session, {"relative_position": relative_position}, {"relative_position": given}, call)
    got = _expect_tensor(returned, "buckets", call)
    _expect_shape(got, tuple(relative_position.shape), "buckets", call, " (the shape of relative_position)")
    _expect_integer(session, got, "buckets", call)
    got = got.long()
    setting = (bidirectional, num_buckets, max_distance)
    if _t5_matches(got, relative_position, *setting):
        return
    expected = t5_relative_position_bucket(relative_position, *setting)
    setting_text = f"bidirectional={bidirectional}, num_buckets={num_buckets}, max_distance={max_distance}"
    per_direction = num_buckets // 2 if bidirectional else num_buckets
    max_exact = per_direction // 2

    accepted = (got == expected) | (got == _t5_variant(relative_position, *setting, dtype=torch.float64))

    def showcase() -> str:
        wrong = (~accepted).flatten()
        offsets = relative_position.flatten()[wrong].tolist()
        offset = min(offsets, key=lambda value: (abs(value), value))
        index = int((relative_position.flatten() == offset).logical_and(wrong).nonzero()[0])
        region = _t5_region(offset, bidirectional, num_buckets, max_distance)
        expected_bucket, got_bucket = int(expected.flatten()[index]), int(got.flatten()[index])
        return (
            f"setting {setting_text}: offset j - i = {offset} ({region}): expected bucket {expected_bucket}, "
            f"got {got_bucket}"
        )

    text = showcase()
    variants: list[tuple[tuple[Any, ...], dict[str, Any], str, str]] = []
    if bidirectional:
        sign_text = (
            "past and future are swapped: you seem to use i - j, but relative_position is already j - i (key "
            f"minus query): positive offsets are keys after the query and go to the upper half of the buckets "
            f"(from num_buckets // 2 = {num_buckets // 2} on)"
        )
    else:
        sign_text = (
            "past and future are swapped: you seem to use i - j, but relative_position is already j - i (key "
            "minus query): in the causal setting the distance is max(-(j - i), 0), so past keys (negative "
            "offsets) get distance buckets and every future key bucket 0"
        )
    variants.append(((bidirectional, num_buckets, max_distance), {"sign": -1}, "sign", sign_text))
    variants.append((
        (not bidirectional, num_buckets, max_distance), {}, "bidirectional",
        f"the bidirectional argument is ignored: called with bidirectional={bidirectional}, your buckets are "
        f"those of bidirectional={not bidirectional} (bidirectional: half the buckets for each direction; causal: "
        "all buckets for the past, bucket 0 for every future key)",
    ))
    for wrong_buckets, wrong_distance, name in (
        (32, max_distance, "num_buckets"), (num_buckets, 128, "max_distance"), (32, 128, "num_buckets and max_distance")
    ):
        if (wrong_buckets, wrong_distance) != (num_buckets, max_distance):
            defaults = " and ".join(
                f"{argument}={value}" for argument, value, asked in
                (("num_buckets", 32, num_buckets), ("max_distance", 128, max_distance)) if argument in name
                and value != asked
            )
            variants.append((
                (bidirectional, wrong_buckets, wrong_distance), {}, f"ignored {name}",
                f"the {name} argument{'s are' if ' and ' in name else ' is'} ignored: your buckets are those for "
                f"the default {defaults}",
            ))
    for shift in (1, -1):
        variants.append((
            setting, {"exact_shift": shift}, "exact range",
            f"the exact range is off by one: distances 0 .. max_exact - 1 get a bucket each, with max_exact = "
            f"n // 2 = {max_exact} (n = {per_direction} buckets per direction); yours ends at "
            f"{max_exact + shift - 1} instead of {max_exact - 1} (is_small = distance < max_exact)",
        ))
    variants.append((
        setting, {"cap": False}, "cap",
        f"the last bucket is not capped: every distance beyond max_distance = {max_distance} must share the last "
        f"bucket of its direction (n - 1 = {per_direction - 1}, n = buckets per direction); clamp the logarithmic "
        "bucket with .clamp(max=n - 1) or torch.min",
    ))
    for rounding in ("round", "ceil"):
        variants.append((
            setting, {"rounding": rounding}, "rounding",
            f"you {'round' if rounding == 'round' else 'take the ceiling of'} the logarithmic part; T5 floors it "
            "(truncates with .long() / .to(torch.long)), so some distances land one bucket too high",
        ))
    for args, knobs, key, explanation in variants:
        if _t5_matches(got, relative_position, *args, **knobs):
            session.problem(key, f"{text}: {explanation}")
            return
    difference = got - expected
    mismatch = ~accepted
    distance = (relative_position.abs() if bidirectional else (-relative_position).clamp(min=0))
    in_log_range = (distance >= max_exact) & (distance < max_distance)
    if bool((difference[mismatch] == 1).all()) and bool(in_log_range[mismatch].all()):
        session.problem(
            "rounding",
            f"{text}: one bucket too high at some distances in the logarithmic range: T5 floors (truncates) the "
            "logarithmic part, max_exact + floor(log(distance / max_exact) / log(max_distance / max_exact) * "
            "(n - max_exact))",
        )
    elif bool(((got < 0) | (got >= num_buckets)).any()):
        session.problem(
            "out of range",
            f"{text}: buckets must lie in [0, num_buckets) = [0, {num_buckets}); check the cap at the last bucket "
            "and the offset of the upper half",
        )
    else:
        session.problem(
            "buckets",
            f"{text}. Check the three ranges: exact buckets below max_exact, logarithmic buckets up to "
            "max_distance, the last bucket beyond",
        )


# --------------------------------------------------------------------------- ALiBi slopes


def _alibi_variant(
    num_heads: int, *, factor: float = 8.0, first: int = 1, construction: str = "reference", reverse: bool = False
) -> list[float]:
    """ALiBi slopes with knobs for the typical deviations (the reference when all are default)."""

    def geometric(count: int) -> list[float]:
        return [2.0 ** (-factor * (head + first) / count) for head in range(count)]

    power = 2 ** math.floor(math.log2(num_heads))
    if construction == "geometric":
        slopes = geometric(num_heads)
    elif construction == "truncated":
        slopes = geometric(2 ** math.ceil(math.log2(num_heads)))[:num_heads]
    else:
        extra = geometric(2 * power)[1::2] if construction == "odd" else geometric(2 * power)[0::2]
        slopes = geometric(power) + extra[: num_heads - power]
    return slopes[::-1] if reverse else slopes


def _power_text(slope: float) -> str:
    return f"{_num(slope)} = 2^({_num(math.log2(slope))})" if slope > 0 else _num(slope)


@_public
def check_alibi_slopes(fn: Callable[..., Any]) -> CheckResult:
    """Check a student's ALiBi slopes ``fn(num_heads) -> (num_heads,)`` tensor (or list).

    The slopes must be those of :func:`posenc.relative.alibi_slopes`: for ``n`` a power of two, the
    geometric sequence ``2^(-8h/n)``, ``h = 1 .. n``; otherwise the slopes of the largest power of
    two ``m < n`` followed by every other slope of ``2m`` heads. Powers of two are checked first,
    then ``n`` = 3, 5, 6, 12, 20, 24 and a random one.

    Diagnosed mistakes: the plain geometric sequence for a non-power of two; the first ``n`` slopes
    of the next power of two; the odd-indexed instead of even-indexed slopes of ``2m`` heads; slopes
    in reverse order; ``2^(-h/n)`` (factor 8 missing); heads numbered from 0; wrong length or type;
    exceptions.

    Args:
        fn: the student's function.

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable.
    """

    def body(session: _Session) -> list[str]:
        generator = torch.Generator().manual_seed(_SEED)
        random_heads = int(torch.randint(33, 64, (1,), generator=generator))
        powers = [8, 1, 2, 4, 16, 32]
        others = [6, 3, 12, 5, 20, 24, random_heads]
        for heads in powers + others:
            tags = {"power"} if heads in powers else {"non-power"}
            session.run(partial(_alibi_case, session, heads), tags)
        if session.only_failed_with("non-power"):
            session.problem(
                "non-power hint",
                "your slopes are right for powers of two but not for the other head counts: for n heads, n not a "
                "power of two, take the m slopes of the largest power of two m < n, then every other slope "
                "([0::2]) of 2m heads, n - m of them",
            )
        return [
            f"matches posenc.alibi_slopes for num_heads = {', '.join(map(str, powers + others))} "
            f"({session.cases} hidden cases)",
            "powers of two: the geometric sequence 2^(-8h/n), h = 1 .. n; other head counts: the slopes of the "
            "largest power of two below, then every other slope of twice as many heads",
        ]

    return _run_checker("ALiBi slopes", fn, body)


def _alibi_case(session: _Session, num_heads: int) -> None:
    call = f"fn({num_heads})"
    returned = session.call(call, num_heads)
    if isinstance(returned, torch.Tensor):
        got = returned.detach().cpu()
        if got.dim() != 1:
            raise _Problem(
                "shape", f"{call} returned a tensor of shape {tuple(got.shape)}; expected a 1-D tensor of "
                f"{num_heads} slopes, shape ({num_heads},)",
            )
        if not got.is_floating_point():
            raise _Problem("dtype", f"{call} returned dtype {_dtype(got.dtype)}; slopes are real numbers: use float32")
        got = got.double()
    elif isinstance(returned, (list, tuple, np.ndarray)):
        try:
            got = torch.tensor([float(value) for value in returned], dtype=torch.float64)
        except (TypeError, ValueError):
            raise _Problem(
                "type", f"{call} returned a {type(returned).__name__} whose items are not all numbers",
            ) from None
    else:
        raise _Problem(
            "type", f"{call} returned {_type_name(returned)}; expected a 1-D tensor (or list) of {num_heads} slopes",
        )
    if got.numel() != num_heads:
        raise _Problem("length", f"{call} returned {got.numel()} slopes; expected one per head, {num_heads}")
    expected = alibi_slopes(num_heads).double()
    if bool(torch.allclose(got, expected, rtol=1e-5, atol=0.0)):
        return

    def shown(slopes: torch.Tensor) -> str:
        return _values(slopes, limit=num_heads if num_heads <= 8 else 6)

    head = int(_first_difference(got, expected, atol=1e-6 * float(expected.min()))[0])
    text = (
        f"num_heads = {num_heads}: expected {shown(expected)}, got {shown(got)} (first difference at head {head + 1} "
        f"of {num_heads}: expected {_power_text(float(expected[head]))}, got {_power_text(float(got[head]))})"
    )
    power = 2 ** math.floor(math.log2(num_heads))
    explanations = {
        "reverse": "your slopes are in reverse order: the first head gets the largest slope 2^(-8/n) and the last "
        "head the smallest",
        "factor": "your slopes look like 2^(-h/n): the exponent is missing the factor 8 (the slopes for n heads "
        "go from 2^(-8/n) down to 2^(-8))",
        "first": "your heads are numbered from 0, so your first slope is 2^0 = 1; ALiBi numbers heads h = 1 .. n: "
        "the first slope is 2^(-8/n) and the last 2^(-8)",
        "geometric": f"for {num_heads} heads, not a power of two, you used the geometric sequence 2^(-8h/n) "
        f"directly; ALiBi takes the {power} slopes of {power} heads, then every other slope of {2 * power} heads "
        f"([0::2]), {num_heads - power} of them",
        "truncated": f"for {num_heads} heads you took the first {num_heads} slopes of "
        f"{2 ** math.ceil(math.log2(num_heads))} heads; ALiBi takes the {power} slopes of {power} heads, then every "
        f"other slope of {2 * power} heads ([0::2]), {num_heads - power} of them",
        "odd": f"for {num_heads} heads you added the odd-indexed slopes [1::2] of {2 * power} heads, which repeat "
        f"those of {power} heads; take the even-indexed ones, [0::2]",
    }
    knobs: list[tuple[dict[str, Any], list[str]]] = []
    for reverse, factor, first, construction in itertools.product(
        (False, True), (8.0, 1.0), (1, 0), ("reference", "geometric", "truncated", "odd")
    ):
        keys = (["reverse"] if reverse else []) + (["factor"] if factor != 8 else []) + (
            ["first"] if first != 1 else []
        ) + ([construction] if construction != "reference" else [])
        if keys:
            knobs.append(({"reverse": reverse, "factor": factor, "first": first, "construction": construction}, keys))
    for kwargs, keys in sorted(knobs, key=lambda item: len(item[1])) if num_heads > 1 else ():
        candidate = torch.tensor(_alibi_variant(num_heads, **kwargs), dtype=torch.float64)
        if bool(torch.allclose(got, candidate, rtol=1e-5, atol=0.0)):
            raise _Problem(" + ".join(keys), f"{text}: " + "; ".join(explanations[key] for key in keys))
    raise _Problem(
        "slopes",
        f"{text}. For n heads, n a power of two, the slopes are 2^(-8h/n) for h = 1 .. n; otherwise the m slopes of "
        "the largest power of two m < n come first, then every other slope of 2m heads",
    )
