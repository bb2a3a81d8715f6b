"""Checkers of the relative methods that add a scalar to each score: T5's buckets, ALiBi's slopes.

- :func:`~posenc.exercises.check_t5_bucket`: T5's relative position buckets, region by region
  (sign, exact small offsets, logarithmic large ones, the clamp at ``num_buckets - 1``);
- :func:`~posenc.exercises.check_alibi_slopes`: ALiBi's per-head slopes, including head counts
  that are not powers of two.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import torch

from ..relative import alibi_slopes, t5_relative_position_bucket
from ._readings import _Case
from ._t5_readings import _t5_normaliser_reading
from ._transforms import _probing
from .checking import (
    _SEED,
    CheckResult,
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

__all__ = ["check_t5_bucket", "check_alibi_slopes"]


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
    wrong shape; a float or boolean dtype (another integer dtype, such as int32, passes with a note);
    exceptions. Each message names the setting, the offset, the expected and
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
        ignored = [key for key in session.problems if key.startswith("ignored ")]
        if ignored and len(session.problems) > len(ignored):  # another setting fails otherwise: nothing is ignored
            for key in ignored:
                session.problems[key] = re.sub(r"the [a-z_ ]+ arguments? (is|are) ignored: your buckets are those for",
                                               r"on this setting your buckets are those for", session.problems[key])
        return [
            f"matches posenc.t5_relative_position_bucket on {session.cases} hidden cases: bidirectional and causal, "
            "num_buckets from 12 to 64, max_distance from 20 to 256, offsets up to ±1000, 1-D and 2-D inputs",
            "sign convention j - i (keys after the query go to the upper half), exact buckets for small distances, "
            "floored logarithmic buckets, and the last bucket for every distance beyond max_distance",
        ]

    offsets = torch.arange(-300, 301)
    return _run_checker("T5 relative position buckets", fn, body, reading=_probing(
        fn, ("buckets",), t5_relative_position_bucket,
        [_Case((offsets,), "probe", {"bidirectional": bidirectional, "num_buckets": buckets, "max_distance": distance})
         for bidirectional, buckets, distance in ((True, 32, 128), (False, 32, 128), (True, 16, 64), (False, 8, 20))],
        "the buckets", ("relative_position",)))


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
    sign_text = "past and future are swapped: " + (
        "your buckets put the keys before the query (j < i) in the upper half and the keys after it in the lower half; "
        if bidirectional else "your causal buckets give the keys after the query (j > i) distance buckets and the "
        "keys before it bucket 0; ") + (
        "relative_position is already j - i (key minus query), so either your code negates it (i - j) or it sends "
        "the wrong sign to " + (f"the upper half: keys after the query (j - i > 0) go there, from num_buckets // 2 = "
                                f"{num_buckets // 2} on" if bidirectional else "the distance: it is max(-(j - i), 0), "
                                "so past keys get distance buckets and every future key bucket 0"))
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
    for wrong_exact, how in ((per_direction // 4, "n // 4, half of T5's"), (per_direction, "n, twice T5's")):
        if wrong_exact >= 1 and abs(wrong_exact - max_exact) > 1:
            variants.append((
                setting, {"exact_shift": wrong_exact - max_exact}, "max_exact",
                f"your max_exact is {wrong_exact} ({how} n // 2 = {max_exact}, n = {per_direction} buckets per "
                "direction): the exact buckets cover distances 0 .. max_exact - 1 and the logarithmic ones start at "
                f"max_exact = n // 2, with n = num_buckets // 2 when bidirectional and num_buckets when causal",
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
    # A mistake written another way: the variant reproduces every wrong bucket and most of its own wrong buckets.
    for args, knobs, key, explanation in variants:
        for candidate in (_t5_variant(relative_position, *args, **knobs),
                          _t5_variant(relative_position, *args, **knobs, dtype=torch.float64)):
            characteristic = candidate != expected
            agree = got == candidate
            if bool(agree[~accepted].all()) and 2 * int((agree & characteristic).sum()) > int(
                    characteristic.sum()) > 0:
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
    elif (normaliser := _t5_normaliser_reading(got, relative_position, *setting)) is not None:
        session.problem("buckets", f"{text}: {normaliser}")
    elif (region := _t5_wrong_region(mismatch, relative_position, distance, in_log_range, setting)) is not None:
        session.problem("buckets", f"{text}: every wrong bucket is {region}")
    else:
        session.problem(
            "buckets",
            f"{text}. Check the three ranges: exact buckets below max_exact, logarithmic buckets up to "
            "max_distance, the last bucket beyond",
        )


def _t5_wrong_region(
    mismatch: torch.Tensor, relative_position: torch.Tensor, distance: torch.Tensor, in_log_range: torch.Tensor,
    setting: tuple[bool, int, int],
) -> str | None:
    """The one range of offsets where every wrong bucket lies, said with the rule that holds there."""
    bidirectional, num_buckets, max_distance = setting
    per_direction = num_buckets // 2 if bidirectional else num_buckets
    max_exact = per_direction // 2
    after = relative_position > 0
    regions = [
        (~torch.tensor(bidirectional) & after,
         "a future key (j > i) of the causal setting: every future key goes to bucket 0 (distance = "
         "max(-(j - i), 0))"),
        (distance >= max_distance,
         f"at a distance >= max_distance = {max_distance}: every such distance shares the last bucket of its "
         f"direction, n - 1 = {per_direction - 1} (plus the offset of the upper half for keys after the query)"),
        (distance < max_exact,
         f"in the exact range, distance < max_exact = {max_exact}: there the bucket is the distance itself (plus "
         f"num_buckets // 2 = {num_buckets // 2} for keys after the query in the bidirectional setting)"),
        (in_log_range,
         f"in the logarithmic range, max_exact = {max_exact} <= distance < max_distance = {max_distance}: the "
         "bucket is max_exact + floor(log(distance / max_exact) / log(max_distance / max_exact) * (n - max_exact)), "
         "with n the buckets per direction"),
        (distance >= max_exact,
         f"at a distance >= max_exact = {max_exact}, in the logarithmic range and beyond it, while the exact buckets "
         "are right: the logarithmic bucket max_exact + floor(log(distance / max_exact) / log(max_distance / "
         "max_exact) * (n - max_exact)) reaches n - 1 just below max_distance (the log is normalised by "
         "log(max_distance / max_exact)), and min(., n - 1) caps it beyond"),
        (torch.tensor(bidirectional) & after,
         f"a key after the query (j > i): in the bidirectional setting these take the upper half, the bucket of "
         f"their distance plus num_buckets // 2 = {num_buckets // 2}"),
        (torch.tensor(bidirectional) & ~after,
         "a key before the query (j < i) or the query itself: in the bidirectional setting these take the lower "
         "half, the bucket of their distance |j - i|"),
    ]
    for region, text in regions:
        if bool(region[mismatch].all()):
            return text
    return None


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


def _variant_elsewhere(fn: Callable[..., Any], knobs: dict[str, Any], num_heads: int) -> bool:
    """Whether the slip ``knobs`` also gives the answer for the other head counts of a probe.

    Two slips can agree at one head count and not at another (heads numbered from 0 and slopes doubled agree at 8
    heads: 2^(-(h - 1)) = 2 · 2^(-h)), so a slip is named only when the answer follows it at 4, 6, 12 and 16 heads
    as well, wherever it shows. Only the exponent's slips (the heads' numbering, the factor 8) are confirmed so: an
    order or a construction is a fact about the slopes shown, and may come with another slip elsewhere.
    """
    if knobs["first"] == 1 and knobs["factor"] == 8.0:
        return True
    for heads in (4, 6, 12, 16):
        if heads == num_heads:
            continue
        candidates = [torch.tensor(_alibi_variant(heads, **{**knobs, "construction": kind, "reverse": reverse}),
                                   dtype=torch.float64)
                      for kind in ("reference", "geometric", "truncated", "odd") for reverse in (False, True)]
        if all(bool(torch.allclose(c, alibi_slopes(heads).double(), rtol=1e-5, atol=0.0)) for c in candidates):
            continue  # the slip does not show at this head count: no evidence either way
        try:
            answer = torch.as_tensor(fn(heads), dtype=torch.float64).flatten()
        except Exception:  # noqa: BLE001 (an answer that fails here cannot confirm the slip)
            return False
        if not any(answer.shape == c.shape and bool(torch.allclose(answer, c, rtol=1e-5, atol=0.0))
                   for c in candidates):
            return False
    return True


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

    return _run_checker("ALiBi slopes", fn, body, reading=_probing(
        fn, ("slopes",), alibi_slopes, [_Case((n,), "probe") for n in (8, 16, 12, 6)], "the slopes", ("num_heads",)))


def _fixed_ends_text(fn: Callable[..., Any]) -> str | None:
    """Slopes whose exponents are evenly spaced between the same two ends for every head count (a logspace)."""
    ends = set()
    for heads in (4, 6, 16):
        try:
            exponents = -torch.log2(torch.as_tensor(fn(heads), dtype=torch.float64).flatten())
        except Exception:  # noqa: BLE001 (an answer that fails here has no ends to read)
            return None
        if exponents.shape != (heads,) or not bool(torch.isfinite(exponents).all()) or not bool(torch.allclose(
                exponents, torch.linspace(float(exponents[0]), float(exponents[-1]), heads, dtype=torch.float64),
                atol=1e-6)):
            return None
        ends.add((round(float(exponents[0]), 6), round(float(exponents[-1]), 6)))
    if len(ends) != 1:
        return None
    first, last = ends.pop()
    return (f"for every number of heads your slopes run from 2^(-{first:g}) to 2^(-{last:g}), their exponents evenly "
            "spaced between those two ends (a torch.logspace, or a linspace of the exponents): ALiBi's first slope "
            "depends on n, 2^(-8/n), and the exponents step by 8/n, 2^(-8h/n) for h = 1 .. n")


def _fixed_step_text(got: torch.Tensor, num_heads: int, fn: Callable[..., Any]) -> str | None:
    """Slopes 2^(-c h), h = 1 .. n, with a step c that is not 8/n: the step does not shrink with the number of heads.

    "Whatever n" is a claim about every head count: the answer must follow 2^(-c h) with the same c at 4 and 16 heads
    too (logspace(-1, -8, n) gives 2^(-h) at one head and the right slopes at eight).
    """
    if not bool((got > 0).all()):
        return None
    exponents = -torch.log2(got)
    step = float(exponents[0])
    heads = torch.arange(1, num_heads + 1, dtype=torch.float64)
    if math.isclose(step, 8 / num_heads, abs_tol=1e-6) or not bool(torch.allclose(exponents, step * heads, atol=1e-6)):
        return None
    for other in (4, 16):
        try:
            slopes = torch.as_tensor(fn(other), dtype=torch.float64).flatten()
            fixed = torch.exp2(-step * torch.arange(1, other + 1, dtype=torch.float64))
            if slopes.shape != fixed.shape or not bool(torch.allclose(slopes, fixed, rtol=1e-5, atol=0.0)):
                return None
        except Exception:  # noqa: BLE001 (an answer that fails here cannot confirm the claim)
            return None
    return (f"your slopes are 2^(-{step:.4g} h), h = 1 .. n, with a step of {step:.4g} whatever n: ALiBi's step is 8/n "
            f"(here {8 / num_heads:.4g}), so that the last head always gets 2^(-8), whatever the number of heads")


def _geometric_text(got: torch.Tensor, num_heads: int) -> str | None:
    """The answer as a geometric sequence, said by its first slope and its ratio, when it is one (n a power of 2)."""
    if num_heads < 3 or num_heads & (num_heads - 1) or not bool((got > 0).all()):
        return None
    exponents = -torch.log2(got)
    steps = exponents.diff()
    step = float(steps[0])
    if not bool(torch.allclose(steps, torch.full_like(steps, step), atol=1e-6)):
        return None
    right = 8 / num_heads
    first = float(exponents[0])
    parts = []
    if not math.isclose(step, right, abs_tol=1e-6):
        parts.append(f"they fall by the ratio 2^({-step + 0.0:.4g}) per head, where ALiBi's fall by 2^(-8/n) = "
                     f"2^(-{right:.4g})")
    if not math.isclose(first, right, abs_tol=1e-6):
        parts.append(f"the first is 2^({-first + 0.0:.4g}), where ALiBi's is 2^(-8/n) = 2^(-{right:.4g})")
    return "your slopes are a geometric sequence, but " + " and ".join(parts) if parts else None


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
    if bool(torch.allclose(got, torch.log2(expected), rtol=1e-6, atol=1e-9)):
        raise _Problem("exponents", f"{text}: you returned the exponents -8h/n, not the slopes: each slope is 2 to "
                       "that power, 2^(-8h/n)")
    if bool(torch.allclose(got, expected, rtol=2e-3, atol=0.0)):
        raise _Problem("slopes precision", f"{text}: your slopes are right to about three digits only, the precision "
                       "of float16 or bfloat16: compute and return them in float32 (or float64)")
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
        "truncated": f"for {num_heads} heads your slopes are 2^(-{_num(8 / 2 ** math.ceil(math.log2(num_heads)))} h): "
        f"the first {num_heads} slopes of {2 ** math.ceil(math.log2(num_heads))} heads, or a fixed step (halving, or "
        f"another) written for any n; ALiBi takes the {power} slopes of {power} heads, then every other slope of "
        f"{2 * power} heads ([0::2]), {num_heads - power} of them",
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
        if bool(torch.allclose(got, candidate, rtol=1e-5, atol=0.0)) and _variant_elsewhere(session.fn, kwargs,
                                                                                            num_heads):
            raise _Problem(" + ".join(keys), f"{text}: " + "; ".join(explanations[key] for key in keys))
    ladder = (_geometric_text(got, num_heads) or _fixed_step_text(got, num_heads, session.fn)
              or _fixed_ends_text(session.fn))
    raise _Problem(
        "slopes",
        f"{text}{': ' + ladder if ladder else ''}. For n heads, n a power of two, the slopes are 2^(-8h/n) for "
        "h = 1 .. n; otherwise the m slopes of the largest power of two m < n come first, then every other slope of "
        "2m heads",
    )
