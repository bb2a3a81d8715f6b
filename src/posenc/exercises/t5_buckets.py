"""Checker of T5's relative position buckets.

:func:`~posenc.exercises.check_t5_bucket` checks the buckets region by region (sign, exact small offsets,
logarithmic large ones, the clamp at ``num_buckets - 1``), bidirectional and causal.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any

import torch

from ..relative import t5_relative_position_bucket
from ._readings import _Case
from ._t5_readings import _t5_normaliser_reading
from ._transforms import _probing
from .checking import (
    _SEED,
    CheckResult,
    _expect_integer,
    _expect_shape,
    _expect_tensor,
    _public,
    _run_checker,
    _Session,
    _unchanged,
)

__all__ = ["check_t5_bucket"]


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
    cap_shift: int = 0,
    halve: bool = True,
    rounding: str = "floor",
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """T5's buckets with knobs for the typical deviations (the reference when all are default).

    ``cap_shift`` moves the cap from ``n - 1`` to ``n - 1 + cap_shift``; ``halve=False`` gives each direction of the
    bidirectional setting all ``num_buckets`` buckets instead of half of them.
    """
    relative_position = relative_position.long() * sign
    buckets = torch.zeros_like(relative_position)
    per_direction = num_buckets
    if bidirectional:
        per_direction //= 2 if halve else 1
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
        large = large.clamp(max=per_direction - 1 + cap_shift)
    return buckets + torch.where(distance < max_exact, distance, large)


def _t5_matches(got: torch.Tensor, relative_position: torch.Tensor, *args: Any, **kwargs: Any) -> bool:
    """Whether ``got`` equals the variant, computed in float32 or float64 (entry by entry)."""
    single = _t5_variant(relative_position, *args, **kwargs)
    double = _t5_variant(relative_position, *args, **kwargs, dtype=torch.float64)
    return bool(((got == single) | (got == double)).all())


@dataclass(frozen=True)
class _Reading:
    """A mistake model that gives a failed case's buckets: its problem key, the mistakes it stands for (several when
    the case cannot tell them apart), the case's showcase and the explanation."""

    key: str
    covers: frozenset[str]
    text: str
    explanation: str

    @property
    def message(self) -> str:
        return f"{self.text}: {self.explanation}"


def _reconcile(session: _Session, readings: list[list[_Reading]]) -> None:
    """Keep, of the mistakes said case by case, the one that fits every failed case the models read.

    Each case was said provisionally by its first matching model; a model can fit a case by coincidence (no cap and a
    cap at n agree below the distance where they part; a direction without halving looks like the default
    ``num_buckets``). A mistake that fits every such case is said once, from the case that shows it alone; when no
    case separates two of them, both are offered.
    """
    if not readings:
        return
    common = frozenset.intersection(*(frozenset().union(*(reading.covers for reading in case)) for case in readings))
    if not common:
        return  # no one mistake fits every case: each case keeps its own reading

    def candidates(case: list[_Reading]) -> list[_Reading]:
        return [reading for reading in case if reading.covers & common]

    best = candidates(min(readings, key=lambda case: (len(candidates(case)),
                                                       min(len(reading.covers) for reading in candidates(case)))))
    message = best[0].message if len(best) == 1 else f"{best[0].text}: " + "; or, equally on this setting, ".join(
        reading.explanation for reading in best)
    provisional = {(case[0].key, case[0].message) for case in readings}  # not another problem under the same key
    kept: dict[str, str] = {}
    for key, text in session.problems.items():
        if (key, text) not in provisional:
            kept[key] = text
        elif best[0].key not in kept:
            kept[best[0].key] = message
    session.problems.clear()
    session.problems.update(kept)


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
    ignored; each direction given all ``num_buckets`` buckets (no halving); ``num_buckets`` or
    ``max_distance`` ignored; exact range off by one; no cap at the last bucket beyond
    ``max_distance``, or a cap at ``n`` or ``n - 2`` instead of ``n - 1``; rounding (or ceiling)
    instead of flooring the logarithmic part; wrong shape; a float or boolean dtype (another integer
    dtype, such as int32, passes with a note); exceptions. A mistake is named only if it fits every
    failed case its models read (no cap and a cap at ``n`` agree on short offsets; no halving and
    the default ``num_buckets`` agree at 16 buckets); where no case separates two, both are offered.
    Each message names the setting, the offset, the expected and the returned bucket.

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
        readings: list[list[_Reading]] = []
        for relative_position, kwargs in cases:
            session.run(partial(_t5_case, session, relative_position, kwargs, readings),
                        {"bidirectional" if kwargs.get("bidirectional", True) else "causal"})
        _reconcile(session, readings)
        if "sign" in session.problems and session.passed_tags:
            # A negated j - i would fail in both settings: the setting that passed rules that reading out.
            session.problems["sign"] = session.problems["sign"].replace(
                "so either your code negates it (i - j) or it sends the wrong sign to",
                "and some settings of yours are right (a negated j - i would break them all): your code sends the "
                "wrong sign to")
        ignored = [key for key in session.problems if key.startswith("ignored ")]
        if ignored and len(session.problems) > len(ignored):  # another setting fails otherwise: nothing is ignored
            for key in ignored:
                session.problems[key] = re.sub(
                    r"the [a-z_ ]+ arguments? (is|are) ignored: your buckets are those for",
                    r"on this setting your buckets happen to equal those for", session.problems[key])
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


def _t5_case(session: _Session, relative_position: torch.Tensor, kwargs: dict[str, Any],
             readings: list[list[_Reading]]) -> None:
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
    covers: dict[str, frozenset[str]] = {}  # the mistakes a reading stands for, when it cannot tell several apart
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
    if bidirectional:
        variants.append((
            setting, {"halve": False}, "halving",
            f"each direction gets all num_buckets = {num_buckets} buckets: the bidirectional setting gives each "
            f"direction num_buckets // 2 = {num_buckets // 2} (the keys before the query buckets 0 .. "
            f"{num_buckets // 2 - 1}, the keys after it the upper half from {num_buckets // 2} on), and max_exact, "
            "the logarithmic range and the cap count from that half: set n = num_buckets // 2 before the rest",
        ))
    no_halving = _t5_variant(relative_position, *setting, halve=False) if bidirectional else None
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
                f"the default {defaults}" + ("" if no_halving is not None and torch.equal(  # then not a scaling
                    no_halving, _t5_variant(relative_position, bidirectional, wrong_buckets, wrong_distance))
                    else _scaled_reading(
                        ((argument, value, asked) for argument, value, asked in
                         (("num_buckets", 32, num_buckets), ("max_distance", 128, max_distance)) if argument in name))),
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
    last = per_direction - 1
    uncapped = (f"the last bucket is not capped: every distance beyond max_distance = {max_distance} must share the "
                f"last bucket of its direction (n - 1 = {last}, n = buckets per direction); clamp the logarithmic "
                "bucket with .clamp(max=n - 1) or torch.min")
    if torch.equal(_t5_variant(relative_position, *setting, cap=False),
                   _t5_variant(relative_position, *setting, cap_shift=1)):
        # Here no cap and a cap at n give the same buckets: only what both share is certain.
        variants.append((
            setting, {"cap": False}, "cap past the last",
            f"beyond max_distance = {max_distance} your buckets go past the last bucket of their direction, n - 1 = "
            f"{last} (n = buckets per direction), to {last + 1}: every distance beyond max_distance must share bucket "
            f"n - 1; clamp the logarithmic bucket at n - 1 with .clamp(max=n - 1) (on this setting no cap at all and a "
            f"cap at n = {last + 1} give the same buckets)",
        ))
        covers["cap past the last"] = frozenset({"cap", "cap at n"})
    else:
        variants.append((setting, {"cap": False}, "cap", uncapped))
    for shift, how in ((1, "one too high"), (-1, "one too low")):
        if shift == 1 and "cap past the last" in covers:
            continue
        variants.append((
            setting, {"cap_shift": shift}, "cap at n" if shift == 1 else "cap at n - 2",
            f"your far buckets are capped at {last + shift}, {how}: the last bucket of each direction is n - 1 = "
            f"{last} (n = {per_direction} buckets per direction, numbered 0 .. n - 1), so clamp the logarithmic bucket "
            f"with .clamp(max=n - 1), not .clamp(max={'n' if shift == 1 else 'n - 2'})",
        ))
    for rounding in ("round", "ceil"):
        variants.append((
            setting, {"rounding": rounding}, "rounding",
            f"you {'round' if rounding == 'round' else 'take the ceiling of'} the logarithmic part; T5 floors it "
            "(truncates with .long() / .to(torch.long)), so some distances land one bucket too high",
        ))
    matching = [_Reading(key, covers.get(key, frozenset({key})), text, explanation)
                for args, knobs, key, explanation in variants if _t5_matches(got, relative_position, *args, **knobs)]
    if matching:  # said provisionally; check_t5_bucket keeps the reading that fits every failed case
        readings.append(matching)
        session.problem(matching[0].key, matching[0].message)
        return
    # A mistake written another way: the variant reproduces every wrong bucket and most of its own wrong buckets.
    for args, knobs, key, explanation in variants:
        for candidate in (_t5_variant(relative_position, *args, **knobs),
                          _t5_variant(relative_position, *args, **knobs, dtype=torch.float64)):
            characteristic = candidate != expected
            agree = got == candidate
            if bool(agree[~accepted].all()) and 2 * int((agree & characteristic).sum()) > int(
                    characteristic.sum()) > 0:
                readings.append([_Reading(key, covers.get(key, frozenset({key})), text, explanation)])
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


def _scaled_reading(arguments: Iterable[tuple[str, int, int]]) -> str:
    """The other reading of buckets made with a default that is a multiple of the value given: a scaled argument."""
    readings = []
    for argument, default, asked in arguments:
        if default != asked and max(default, asked) % min(default, asked) == 0:
            factor = max(default, asked) // min(default, asked)
            scaled = f"{factor} · {argument}" if default > asked else f"{argument} // {factor}"
            readings.append(f"{argument}={default} is also {scaled} (you were given {argument}={asked})")
    if not readings:
        return ""
    return (" — or, as " + " and ".join(readings) + ", your code scales the argument: the two readings give the "
            "same buckets here; use the value given, unchanged")


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
