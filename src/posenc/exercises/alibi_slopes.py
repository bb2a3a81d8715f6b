"""Checker of ALiBi's per-head slopes.

:func:`~posenc.exercises.check_alibi_slopes` checks the geometric sequence of slopes, including head counts that
are not powers of two (the interleaved completion of ALiBi's reference code).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import torch

from ..relative import alibi_slopes
from ._readings import _Case
from ._transforms import _probing
from .checking import (
    _SEED,
    CheckResult,
    _dtype,
    _first_difference,
    _num,
    _Problem,
    _public,
    _run_checker,
    _Session,
    _type_name,
    _values,
)

__all__ = ["check_alibi_slopes"]

# --------------------------------------------------------------------------- ALiBi slopes


def _alibi_variant(
    num_heads: int, *, factor: float = 8.0, first: int = 1, construction: str = "reference", reverse: bool = False,
    first_extra: int | None = None,
) -> list[float]:
    """ALiBi slopes with knobs for the typical deviations (the reference when all are default).

    ``first_extra``, when given, numbers the extra slopes of ``2m`` heads apart from the ``m`` of the power of two
    (heads numbered from 0 in one part only).
    """

    def geometric(count: int, start: int = first) -> list[float]:
        return [2.0 ** (-factor * (head + start) / count) for head in range(count)]

    power = 2 ** math.floor(math.log2(num_heads))
    if construction == "geometric":
        slopes = geometric(num_heads)
    elif construction == "truncated":
        slopes = geometric(2 ** math.ceil(math.log2(num_heads)))[:num_heads]
    else:
        doubled = geometric(2 * power, first if first_extra is None else first_extra)
        extra = doubled[1::2] if construction == "odd" else doubled[0::2]
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
    in reverse order; ``2^(-h/n)`` (factor 8 missing); heads numbered from 0 (in both parts, or in
    the power-of-two part only); wrong length or type; exceptions. A combination of these is named
    only where each part it blames is wrong (the extra slopes are not called odd-indexed when they
    are right).

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
    if power < num_heads:
        explanations["first part"] = (
            f"your first {power} heads (those of {power} heads, a power of two) are numbered from 0, so your first "
            f"slope is 2^0 = 1; ALiBi numbers them h = 1 .. {power}, 2^(-8h/{power}): the first slope is "
            f"2^(-{_num(8 / power)}) and the {power}th 2^(-8) (your {num_heads - power} extra slopes, every other "
            f"slope of {2 * power} heads, are right)")
    knobs: list[tuple[dict[str, Any], list[str]]] = []
    for reverse, factor, first, construction in itertools.product(
        (False, True), (8.0, 1.0), (1, 0), ("reference", "geometric", "truncated", "odd")
    ):
        keys = (["reverse"] if reverse else []) + (["factor"] if factor != 8 else []) + (
            ["first"] if first != 1 else []
        ) + ([construction] if construction != "reference" else [])
        if keys:
            knobs.append(({"reverse": reverse, "factor": factor, "first": first, "construction": construction}, keys))
    # Heads numbered from 0 in the power-of-two part only: the extra slopes, numbered apart, stay right.
    knobs.append(({"reverse": False, "factor": 8.0, "first": 0, "construction": "reference", "first_extra": 1},
                  ["first part"]))
    extra_right = bool(torch.allclose(got[power:], expected[power:], rtol=1e-5, atol=0.0))
    for kwargs, keys in sorted(knobs, key=lambda item: len(item[1])) if num_heads > 1 else ():
        candidate = torch.tensor(_alibi_variant(num_heads, **kwargs), dtype=torch.float64)
        if ("odd" in keys or "first part" in keys) and (power == num_heads or extra_right != ("odd" not in keys)):
            continue  # a model is said only where each part it blames is wrong: "odd" blames the extra slopes
        if bool(torch.allclose(got, candidate, rtol=1e-5, atol=0.0)) and _variant_elsewhere(session.fn, kwargs,
                                                                                            num_heads):
            raise _Problem(" + ".join(keys).replace("first part", "first"),
                           f"{text}: " + "; ".join(explanations[key] for key in keys))
    ladder = (_geometric_text(got, num_heads) or _fixed_step_text(got, num_heads, session.fn)
              or _fixed_ends_text(session.fn))
    raise _Problem(
        "slopes",
        f"{text}{': ' + ladder if ladder else ''}. For n heads, n a power of two, the slopes are 2^(-8h/n) for "
        "h = 1 .. n; otherwise the m slopes of the largest power of two m < n come first, then every other slope of "
        "2m heads",
    )
