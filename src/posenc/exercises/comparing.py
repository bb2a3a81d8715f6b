"""Comparing a student's answers with a reference, and naming the mistake that explains them.

The checkers made of hidden cases and typical mistakes (:mod:`posenc.exercises.foundations`,
:mod:`posenc.exercises.biases`, :mod:`posenc.exercises.rotations`, :mod:`posenc.exercises.longrange`,
:mod:`posenc.exercises.extrapolation`) describe each case (``_Case``), the reference and the mistakes
(``_Mistake``); ``_compare_cases`` runs them with the machinery of
:mod:`posenc.exercises.checking` and reports, for a wrong answer:

- the mistake that explains every failed case: one whose model equals the answer, or, failing that,
  one whose model reproduces every entry the answer has wrong (the same slip written another way is
  often right where the model's slip has no effect); a mistake that leaves a failed case
  unexplained is never named, nor one that would have shown in a case the answer got right;
- when no mistake is named, the property the answer breaks (``properties``: "the rows do not sum
  to 1"), read off the largest failed case, then the first wrong entry; the frequency ladders that
  every RoPE exercise can get wrong (``_ladder_slip``) are one such property;
- for a nan or an inf, where it is and what usually produces it (an empty sum, a division by zero).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import torch

from .checking import (
    _SEED,
    CheckResult,
    _close,
    _distinct,
    _dtype,
    _first_difference,
    _Problem,
    _run_checker,
    _Session,
    _type_name,
    _unchanged,
)

__all__: list[str] = []


# --------------------------------------------------------------------------- comparing with a reference, naming mista


@dataclass(frozen=True)
class _Mistake:
    """A typical wrong answer: what it computes, and the message that names it.

    ``wrong`` takes the same arguments as the reference and returns what a function with this
    mistake returns. A student's answer is said to have the mistake when, on *every* hidden case it
    failed, it agrees with ``wrong`` exactly, or failing that when ``wrong`` reproduces every entry
    the answer has wrong (the mistake's characteristic entries: the same slip written another way
    is often right where the model's mistake has no effect). A mistake that agrees exactly is
    preferred; none is named that leaves a failed case unexplained, so that no message names a
    mistake the student did not make.

    A mistake whose model differs from the reference on a case the answer got right is not named either:
    the answer shows there that it does not have it.

    ``tolerance``, when given, is how close an answer must be to ``wrong`` to have the mistake: for a
    mistake of precision (float32 arithmetic), which every rendering rounds differently, so that
    agreeing with one rendering to the last digit means nothing; the answer's error is of the
    mistake's size, far larger than the checker's tolerance.
    """

    key: str
    message: str
    wrong: Callable[..., Any]
    tolerance: float | None = None


@dataclass(frozen=True)
class _Case:
    """One hidden input: arguments and how the report shows the call."""

    args: tuple[Any, ...]
    shown: str
    kwargs: dict[str, Any] | None = None


def _as_values(value: object, what: str, call: str) -> torch.Tensor:
    """A student's return value (tensor, number, NumPy array, tuple of numbers) as a float64 tensor."""
    if isinstance(value, torch.Tensor):
        tensor = value.detach().cpu()
    elif isinstance(value, bool) or value is None:
        raise _Problem("return type", f"{call} returned {_type_name(value)}; expected {what}")
    elif isinstance(value, (int, float)):
        tensor = torch.tensor(float(value), dtype=torch.float64)
    elif type(value).__module__ == "numpy":
        try:
            tensor = torch.as_tensor(value)
        except (TypeError, ValueError, RuntimeError):
            raise _Problem("return type", f"{call} returned {_type_name(value)}; expected {what}") from None
    elif isinstance(value, (list, tuple)):
        try:
            tensor = torch.tensor([float(item) for item in value], dtype=torch.float64)  # type: ignore[arg-type]
        except (TypeError, ValueError, RuntimeError):
            raise _Problem(
                "return type", f"{call} returned {_type_name(value)} that is not a sequence of numbers; expected {what}"
            ) from None
    else:
        raise _Problem("return type", f"{call} returned {_type_name(value)}; expected {what}")
    if tensor.is_complex() or tensor.dtype == torch.bool:
        raise _Problem("dtype", f"{call} returned values of dtype {_dtype(tensor.dtype)}; expected "
            f"{what} (real numbers)")
    return tensor.double()


def _shown_pair(expected: float, got: float) -> tuple[str, str]:
    if all(math.isfinite(v) and v == int(v) and abs(v) < 1e15 for v in (expected, got)):
        return f"{int(expected):,}", f"{int(got):,}"
    return _distinct(expected, got)


def _index_text(index: tuple[int, ...]) -> str:
    return f"index {index}" if len(index) != 1 else f"index {index[0]}"


def _compare_cases(
    session: _Session,
    cases: Sequence[_Case],
    reference: Callable[..., Any],
    mistakes: Sequence[_Mistake],
    *,
    what: str,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    hint: str = "",
    accept: Callable[[torch.Tensor, torch.Tensor, _Case], bool] | None = None,
    view: Callable[[torch.Tensor, _Case], torch.Tensor] | None = None,
    describe: Callable[[torch.Tensor, _Case], str] | None = None,
    properties: Sequence[Callable[[torch.Tensor, torch.Tensor, _Case], str | None]] = (),
    axes: str = "",
) -> None:
    """Run ``cases``, compare with ``reference``, and name a mistake that explains every failure.

    Each failed case is first reported as "differs, first at index ..."; when one mistake of
    ``mistakes`` reproduces the answer on every case that failed on its values, that report is
    replaced by the mistake's message followed by the first differing input. ``accept``, when
    given, decides instead of closeness whether an answer is right (answers that are not unique);
    ``view``, when given, selects what is compared (e.g. the entries a mask leaves visible).
    ``properties`` are tests of the property a wrong answer breaks, ``(got, expected, case) -> sentence or
    None``: when no mistake is named, the first sentence found ("the rows do not sum to 1") is said
    before the first wrong entry, so that an unknown mistake is still described by its effect. ``axes``, when
    given, says what the answer's axes are and how to build them; it follows a shape error raised by the
    student's code (a broadcast of the wrong axes) and an answer with an axis missing, extra or permuted.
    """
    value_failures: list[set[str]] = []
    explained: list[set[str]] = []
    first: list[str] = []
    described: list[tuple[int, str]] = []  # the failed cases whose broken property was found, with their size
    passed: list[_Case] = []

    def contradicted(mistake: _Mistake) -> bool:
        """Whether the answer is right on a case where this mistake shows: then the answer does not have it."""
        for case in passed:
            wrong = outputs(mistake.wrong, case)
            expected = outputs(reference, case)
            if wrong is None or expected is None or wrong.shape != expected.shape:
                continue
            if not (accept(wrong, expected, case) if accept is not None else _close(wrong, expected, atol, rtol)):
                return True
        return False

    def outputs(fn: Callable[..., Any], case: _Case) -> torch.Tensor | None:
        try:
            values = _as_values(fn(*_copies(case.args), **(case.kwargs or {})), what, case.shown)
            return values if view is None else view(values, case)
        except Exception:  # a mistake model that does not apply to this case
            return None

    def one(case: _Case) -> None:
        originals = {
            f"argument {i + 1}": arg.clone() for i, arg in enumerate(case.args) if isinstance(arg, torch.Tensor)
        }
        given = _copies(case.args)
        try:
            raw = session.call(case.shown, *given, **(case.kwargs or {}))
        except _Problem as problem:
            if axes and "a shape mismatch" in problem.message:
                raise _Problem(problem.key, f"{problem.message}\n{axes}") from None
            raise
        got = _as_values(raw, what, case.shown)
        expected = _as_values(reference(*_copies(case.args), **(case.kwargs or {})), what, case.shown)
        if view is not None:
            expected = view(expected, case)
            try:
                got = view(got, case)
            except Exception:  # noqa: S110 (a shape the view cannot read: compared as returned)
                pass
        _unchanged(session, originals, {f"argument {i + 1}": arg for i, arg in enumerate(given)
                                        if isinstance(arg, torch.Tensor)}, case.shown)
        right = accept(got, expected, case) if accept is not None and got.shape == expected.shape else (
            _close(got, expected, atol, rtol) and bool(torch.isfinite(got).all()))
        if right:
            passed.append(case)
            return
        matching, explaining = set(), set()
        for mistake in mistakes:
            wrong = outputs(mistake.wrong, case)
            if wrong is None:
                matching.add(f"n/a {mistake.key}")  # the mistake cannot be evaluated here: no evidence either way
                explaining.add(f"n/a {mistake.key}")
            elif not _close(wrong, expected, atol, rtol):
                near = (mistake.tolerance, 0.0) if mistake.tolerance is not None else (atol, rtol)
                if _close(got, wrong, *near):
                    matching.add(mistake.key)
                if _explains(got, wrong, expected, atol, rtol, near):
                    explaining.add(mistake.key)
        value_failures.append(matching)
        explained.append(explaining)
        if describe is not None and got.shape == expected.shape:
            message = describe(got, case)
        elif got.shape != expected.shape:
            shape_hint = _shape_hint(tuple(got.shape), tuple(expected.shape))
            message = (f"{case.shown} returned {what} of shape {tuple(got.shape)}; expected shape "
                       f"{tuple(expected.shape)}{shape_hint}" + (f"\n{axes}" if axes and "axis" in shape_hint else ""))
        elif not bool(torch.isfinite(got).all()):
            message = f"{case.shown} returned {_nonfinite(got, what)}"
        elif got.dim() == 0:
            shown = _shown_pair(float(expected), float(got))
            message = f"{case.shown} should return {shown[0]}, yours returned {shown[1]}"
        else:
            index = _first_difference(got, expected, atol)
            shown = _shown_pair(float(expected[index]), float(got[index]))
            message = (f"{case.shown}: first wrong entry of {what} at {_index_text(index)}: expected {shown[0]}, "
                       f"got {shown[1]}")
        broken = None
        if got.shape == expected.shape:
            tests: list[Callable[[torch.Tensor, torch.Tensor, _Case], str | None]] = [
                *properties, partial(_constant_change, what=what)]
            for test in tests:
                try:
                    broken = test(got, expected, case)
                except Exception:  # noqa: S112 (a property that cannot be read off this answer)
                    continue
                if broken:
                    break
        if broken:
            first.append(message)
            described.append((got.numel(), f"{broken}\n{message}" + (f"\n{hint}" if hint else "")))
            raise _Problem("values", described[-1][1])
        first.append(message)
        raise _Problem("values", message + (f"\n{hint}" if hint else ""))

    for case in cases:
        session.run(partial(one, case))
    if value_failures:
        mistakes = [mistake for mistake in mistakes if not contradicted(mistake)]
        named = _named_mistake(mistakes, value_failures) or _named_mistake(mistakes, explained)
        if named:
            session.problems.pop("values", None)
            session.problems[named.key] = f"{named.message}\nfirst differing input: {first[0]}"
            return
        # A mistake that explains most failed cases, said with the cases it does not explain: the answer has it,
        # and something else as well (often a second slip that only a realistic input reveals).
        for mistake in mistakes:
            covered = [mistake.key in matching for matching in explained]
            if len(covered) >= 2 and 2 * sum(covered) > len(covered):
                other = first[covered.index(False)]
                session.problems.pop("values", None)
                session.problems[mistake.key] = (
                    f"{mistake.message}\nfirst differing input: {first[covered.index(True)]}\n"
                    f"your answer equals this mistake on {sum(covered)} of the {len(covered)} failed cases; the "
                    f"others differ in another way too, first: {other}")
                return
        if described and "values" in session.problems:
            # The largest failed case tells most about the slip (a list of one position cannot show that all
            # positions are equal): its broken property is the one reported.
            session.problems["values"] = max(described, key=lambda item: item[0])[1]


def _named_mistake(mistakes: Sequence[_Mistake], failures: list[set[str]]) -> _Mistake | None:
    """The first mistake that explains every failed case (``n/a`` where it cannot be evaluated), if any."""
    return next((
        mistake for mistake in mistakes
        if all(mistake.key in matching or f"n/a {mistake.key}" in matching for matching in failures)
        and any(mistake.key in matching for matching in failures)
    ), None)


def _explains(
    got: torch.Tensor, wrong: torch.Tensor, expected: torch.Tensor, atol: float, rtol: float,
    near: tuple[float, float] | None = None,
) -> bool:
    """Whether ``wrong`` reproduces every entry of ``got`` that differs from ``expected``, and most of its own.

    "Its own" are the mistake's characteristic entries, where ``wrong`` differs from ``expected``: more than
    half of them must agree with ``got``, so that a different mistake that shares a few wrong
    entries with the model is not named after it.
    """
    if got.shape != expected.shape or wrong.shape != expected.shape or got.dim() == 0:
        return False
    if not bool(torch.isfinite(got).all()):
        return False
    got, wrong, expected = got.double(), wrong.double(), expected.double()
    bad = ~torch.isclose(got, expected, atol=atol, rtol=rtol)
    if not bool(bad.any()):
        return False
    agree_atol, agree_rtol = near if near is not None else (atol, rtol)
    agree = torch.isclose(got, wrong, atol=agree_atol, rtol=agree_rtol)
    characteristic = ~torch.isclose(wrong, expected, atol=atol, rtol=rtol)
    return bool(agree[bad].all()) and 2 * int((agree & characteristic).sum()) > int(characteristic.sum())


_FACTORS = {2.0: "2", 0.5: "1/2", math.pi: "π", 1 / math.pi: "1/π", 2 * math.pi: "2π", 1 / (2 * math.pi): "1/(2π)",
            3.0: "3", 1 / 3: "1/3", 4.0: "4", 0.25: "1/4"}


def _constant_change(got: torch.Tensor, expected: torch.Tensor, case: _Case, what: str) -> str | None:
    """The same factor or the same offset on every entry: a missing factor, a sign, a start off by some amount."""
    if not bool(torch.isfinite(got).all()) or got.numel() < 1:
        return None
    where = "" if got.numel() == 1 else " on every entry"
    what = what.removeprefix("the ")
    verb, one = ("are", "ones") if what.endswith("s") and not what.endswith("bias") else ("is", "one")
    got, expected = got.double().flatten(), expected.double().flatten()
    big = expected.abs() > 1e-9
    if bool(big.any()) and bool((got[~big].abs() < 1e-9).all()):
        ratios = got[big] / expected[big]
        ratio = float(ratios[0])
        if bool((got.abs() < 1e-12).all()):
            return f"your {what} {verb} 0{where}: a term that should remain cancels out, or nothing was computed"
        if bool(torch.allclose(ratios, torch.full_like(ratios, ratio), rtol=1e-6, atol=0.0)) and abs(ratio - 1) > 1e-6:
            if math.isclose(ratio, -1.0, rel_tol=1e-6):
                have = "have" if verb == "are" else "has"
                return f"your {what} {have} the opposite sign of the expected {one}{where}: a sign is flipped"
            size = abs(ratio)
            named = next((text for value, text in _FACTORS.items() if math.isclose(size, value, rel_tol=1e-6)), None)
            sign = " and the opposite sign" if ratio < 0 else ""
            if named is None:
                return f"your {what} {verb} {ratio:.6g} times the expected {one}{where}: a constant factor is wrong"
            how = (f"a factor {named} too many" if size > 1 else
                   f"a factor {_FACTORS[next(v for v in _FACTORS if math.isclose(v, 1 / size, rel_tol=1e-6))]} "
                   "missing")
            return f"your {what} {verb} {named} times the expected {one}{where}{sign}: {how}"
    if got.numel() >= 2:
        shift = float(got[0] - expected[0])
        if abs(shift) > 1e-9 and bool(torch.allclose(got - expected, torch.full_like(got, shift), atol=1e-9,
                                                           rtol=0.0)):
            shown = f"{shift:+.6g}"
            return f"every entry of your {what} is off by the same amount, {shown}: a start or an offset is wrong"
    return None


def _shape_hint(got: tuple[int, ...], expected: tuple[int, ...]) -> str:
    """What a wrong shape says about the slip: axes in another order, one missing or extra, one too long."""
    if sorted(got) == sorted(expected) and len(got) > 1:
        return ": the same sizes in another order, so your axes are permuted (check which axis each index runs over)"
    if len(got) == len(expected) - 1 and any(got == expected[:i] + expected[i + 1:] for i in range(len(expected))):
        return ": one axis is missing (a reduction or an indexing that drops it, or a broadcast that never added it)"
    if len(got) == len(expected) + 1 and any(got[:i] + got[i + 1:] == expected for i in range(len(got))):
        return ": one axis too many (an unsqueeze, a stack or a broadcast that should have been merged or summed)"
    if len(got) == len(expected):
        wrong = [i for i, (a, b) in enumerate(zip(got, expected, strict=True)) if a != b]
        if len(wrong) == 1:
            axis = wrong[0] - len(expected)
            return (f": only axis {axis} differs ({got[wrong[0]]} instead of {expected[wrong[0]]}), the size of "
                    "something you count, repeat or project along that axis")
    return ""


def _nonfinite(got: torch.Tensor, what: str) -> str:
    """Where an answer is nan or inf, and what usually makes it so (an empty sum, a division by zero)."""
    bad = ~torch.isfinite(got)
    index = tuple(int(i) for i in bad.nonzero()[0])
    value = float(got[index])
    where = f"{value} at {_index_text(index)} of {what}"
    if got.dim() >= 2:
        row = index[:-1]
        count = int(bad[row].sum())
        where += f" ({count} of {got.shape[-1]} entries of row {row[0] if len(row) == 1 else row} are not finite)"
    if math.isnan(value):
        cause = ("a nan comes from 0/0, inf - inf or 0 · inf: typically a softmax or an average over an empty "
                 "set (every score of the row -inf, a causal sum that starts after its own position, a count of 0)")
    else:
        cause = "an inf comes from a division by zero, the log of 0, or an exp that overflows"
    return f"{where}: {cause}"


def _copies(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(arg.clone() if isinstance(arg, torch.Tensor) else arg for arg in args)


def _simple_checker(
    exercise: str,
    fn: Callable[..., Any],
    cases: Callable[[torch.Generator], Sequence[_Case]],
    reference: Callable[..., Any],
    mistakes: Sequence[_Mistake],
    verified: Sequence[str],
    **options: Any,
) -> CheckResult:
    """A checker made of ``_compare_cases`` on cases drawn from the private generator."""

    def body(session: _Session) -> list[str]:
        _compare_cases(session, cases(_generator()), reference, mistakes, **options)
        return list(verified)

    return _run_checker(exercise, fn, body)


def _generator() -> torch.Generator:
    return torch.Generator().manual_seed(_SEED)


# --------------------------------------------------------------------------- frequency ladders


def _ladder(dim: int, base: float, exponent: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
    return base ** exponent(torch.arange(dim // 2, dtype=torch.float64))


_WRONG_LADDERS: tuple[tuple[str, Callable[[int, float], torch.Tensor]], ...] = (
    ("the exponent has lost its minus sign: your frequencies are base^(+2ℓ/d), which grow with ℓ (an angle m / θ_ℓ "
     "instead of m θ_ℓ does the same); RoPE's θ_ℓ = base^(-2ℓ/d) falls from 1",
     lambda d, b: _ladder(d, b, lambda ell: 2 * ell / d)),
    ("your exponent is ℓ/d instead of 2ℓ/d: the frequencies θ_ℓ = base^(-2ℓ/d) need the factor 2 "
     "(torch.arange(0, d, 2) / d), so yours fall half as fast",
     lambda d, b: _ladder(d, b, lambda ell: -ell / d)),
    ("your exponent uses d/2 as the dimension, base^(-4ℓ/d): the head dimension d is twice the number of pairs, "
     "θ_ℓ = base^(-2ℓ/d)",
     lambda d, b: _ladder(d, b, lambda ell: -4 * ell / d)),
    ("your pair index ℓ counts from 1: it runs from 0 to d/2 - 1, so the first pair has θ_0 = 1",
     lambda d, b: _ladder(d, b, lambda ell: -2 * (ell + 1) / d)),
)
"""Frequency ladders with a typical slip, and what each says: the same slips recur in every RoPE exercise."""


def _ladder_slip(
    got: torch.Tensor, dim: int, base: float, answer: Callable[[torch.Tensor], torch.Tensor]
) -> str | None:
    """The slip whose ladder, given to ``answer`` (which computes the exercise from frequencies), gives ``got``."""
    for message, wrong in _WRONG_LADDERS:
        try:
            value = answer(wrong(dim, base))
        except (RuntimeError, ValueError):  # noqa: PERF203 (a ladder this exercise cannot use)
            continue
        if value.shape == got.shape and bool(torch.allclose(value.double(), got.double(), atol=1e-5, rtol=1e-4)):
            return message
    return None
