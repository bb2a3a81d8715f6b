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
  every exercise with the frequencies θ_ℓ can get wrong (``_ladder_slip``) are one such property;
- for a nan or an inf, where it is and what usually produces it (an empty sum, a division by zero);
- the readings that need no mistake model (a private module, ``posenc.exercises._readings``): the arguments
  the answer does not use (a probe of the student's function, each argument changed alone), two arguments used in
  each other's place, a constant factor, an average where a sum is due, a reversed order, a block of the opposite
  sign, three significant digits only, and the sizes of a PyTorch shape error named as axes of the arguments;
- for the first shape error, the matrices the answer reads transposed (``x @ w.T`` for a ``w`` stored ``(in, out)``):
  the one smallest set of 2-D arguments that, passed transposed, gives the right answer;
- last, the catalogue of generic readings of ``posenc.exercises._transforms``, read once over every failed case:
  the transformation of the right answer (an argument changed, the output scaled, shifted, permuted or signed in
  part) that reproduces the answer exactly, or the property of the right answer it breaks.

When several failed cases are described, the largest one read by an exercise's own property is said (its terms are the
exercise's), before the largest one read by a generic reading.

A mistake named from its characteristic entries alone (the answer right where the slip would also be wrong) is
said as such: "your wrong entries are exactly this slip's".
"""

from __future__ import annotations

import inspect
import itertools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import torch

from ._output_readings import _Failure
from ._readings import (  # noqa: F401 (_Case and _reduction are imported from here by the family modules)
    _argument_use,
    _as_values,
    _Case,
    _constant_change,
    _copies,
    _index_text,
    _low_precision,
    _nonfinite,
    _order_and_sign,
    _reduction,
    _shape_values,
    _sizes_of_arguments,
    _swapped_arguments,
    _unused_arguments,
)
from ._structure import _which_inputs, _which_ranks
from ._transforms import _read_answer
from .checking import (
    _DIAGNOSIS,
    _SEED,
    CheckResult,
    _close,
    _distinct,
    _first_difference,
    _Problem,
    _run_checker,
    _Session,
    _shape_hint,
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


def _shown_pair(expected: float, got: float) -> tuple[str, str]:
    if all(math.isfinite(v) and v == int(v) and abs(v) < 1e15 for v in (expected, got)):
        return f"{int(expected):,}", f"{int(got):,}"
    return _distinct(expected, got)


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
    sizes: Callable[[tuple[int, ...], _Case], str | None] | None = None,
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
    ``sizes``, when given, reads a wrong shape in the exercise's terms (``(shape, case) -> sentence or None``: "your
    cache keeps 4 sinks, the argument asks for 2").
    """
    value_failures: list[set[str]] = []
    negated: list[set[str]] = []  # the mistakes whose opposite the answer is, per failed case
    explained: list[set[str]] = []
    closely: list[set[str]] = []  # the mistakes the answer equals to a hundredth of the tolerance, per failed case
    first: list[str] = []
    # The failed cases whose broken property was found: (read by an exercise's own property, size, sentence).
    described: list[tuple[bool, int, str]] = []
    own: set[str] = set()  # the sentences that an exercise's own property gave
    passed: list[_Case] = []
    pending: list[tuple[torch.Tensor, torch.Tensor, _Case, str]] = []  # failed cases whose values can be read

    usage: dict[str, bool] = {}

    def unused_everywhere() -> dict[str, bool]:
        """For each argument, whether no hidden case shows the answer using it (computed once, on demand)."""
        if not usage:
            usage["-"] = True
            for case in cases:
                for name, used in _argument_use(session.fn, reference, case, what).items():
                    usage[name] = usage.get(name, True) and not used
        return usage

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

    parameters = list(inspect.signature(reference).parameters)
    probed: list[_Case] = []

    def argument(index: int) -> str:  # named as the exercise's signature names it
        return parameters[index] if index < len(parameters) else f"argument {index + 1}"

    def one(case: _Case) -> None:
        originals = {argument(i): arg.clone() for i, arg in enumerate(case.args) if isinstance(arg, torch.Tensor)}
        given = _copies(case.args)
        try:
            raw = session.call(case.shown, *given, **(case.kwargs or {}))
        except _Problem as problem:
            if "a shape mismatch" in problem.message and not probed:
                probed.append(case)  # one probe per checker: the first shape error is the one said
                transposed = _transposed_arguments(session.fn, reference, parameters, case, what, atol, rtol)
                if transposed:
                    raise _Problem(problem.key, f"{_TWICE.sub('', problem.message)}\n{transposed}") from None
            if "a shape mismatch" in problem.message:
                sizes_named = _sizes_of_arguments(problem.message, reference, case)
                extra = "".join(f"\n{text}" for text in (sizes_named, axes) if text)
                raise _Problem(problem.key, f"{problem.message}{extra}") from None
            raise
        got = _as_values(raw, what, case.shown)
        expected = _as_values(reference(*_copies(case.args), **(case.kwargs or {})), what, case.shown)
        if view is not None:
            expected = view(expected, case)
            try:
                got = view(got, case)
            except Exception:  # noqa: S110 (a shape the view cannot read: compared as returned)
                pass
        _unchanged(session, originals, {argument(i): arg for i, arg in enumerate(given)
                                        if isinstance(arg, torch.Tensor)}, case.shown)
        right = accept(got, expected, case) if accept is not None and got.shape == expected.shape else (
            _close(got, expected, atol, rtol) and bool(torch.isfinite(got).all()))
        if right:
            passed.append(case)
            return
        if not _DIAGNOSIS["on"]:  # a verdict only: the case failed
            raise _Problem("values", f"{case.shown}: wrong {what}")
        matching, explaining, close = set(), set(), set()
        for mistake in mistakes:
            wrong = outputs(mistake.wrong, case)
            if wrong is None:
                matching.add(f"n/a {mistake.key}")  # the mistake cannot be evaluated here: no evidence either way
                explaining.add(f"n/a {mistake.key}")
            elif not _close(wrong, expected, atol, rtol):
                near = (mistake.tolerance, 0.0) if mistake.tolerance is not None else (atol, rtol)
                if _close(got, wrong, *near):
                    matching.add(mistake.key)
                if mistake.key in matching and (mistake.tolerance is not None or _close(got, wrong, atol / 100,
                                                                                        rtol / 100)):
                    close.add(mistake.key)
                if _explains(got, wrong, expected, atol, rtol, near):
                    explaining.add(mistake.key)
        value_failures.append(matching)
        explained.append(explaining)
        closely.append(close)
        negated.append({mistake.key for mistake in mistakes
                        if (wrong := outputs(mistake.wrong, case)) is not None and wrong.shape == got.shape
                        and not _close(wrong, expected, atol, rtol) and _close(got, -wrong, atol, rtol)})
        if describe is not None and got.shape == expected.shape:
            message = describe(got, case)
        elif got.shape != expected.shape:
            read = sizes(tuple(got.shape), case) if sizes is not None else None
            if read:  # the exercise's own reading of the sizes says more than the generic one: it alone is said
                shape_hint = f": {read}"
            else:
                shape_hint = _shape_hint(tuple(got.shape), tuple(expected.shape))
                read = _shape_values(got, expected, case, parameters, what)
                shape_hint += f"; {read}" if read else ""
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
        if got.shape == expected.shape:
            pending.append((got, expected, case, message))  # its broken property is read only if no slip is named
        first.append(message)
        raise _Problem("values", message + (f"\n{hint}" if hint else ""))

    read: dict[bool, str | None] = {}

    def transformation(got: torch.Tensor, expected: torch.Tensor, case: _Case, exact_only: bool = False) -> str | None:
        """The catalogue of posenc.exercises._transforms, read once per ``exact_only`` over every failed case."""
        if exact_only not in read:
            def values(args: tuple[Any, ...], kwargs: dict[str, Any], case: _Case) -> torch.Tensor:
                computed = _as_values(reference(*args, **kwargs), what, case.shown)
                return computed if view is None else view(computed, case)

            def agree(answer: torch.Tensor, value: torch.Tensor, case: _Case) -> bool:
                return accept(answer, value, case) if accept is not None else _close(answer, value, atol, rtol)

            def answer(args: tuple[Any, ...], kwargs: dict[str, Any], case: _Case) -> torch.Tensor | None:
                try:
                    computed = _as_values(session.fn(*args, **kwargs), what, case.shown)
                    return computed if view is None else view(computed, case)
                except Exception:  # noqa: BLE001 (the answer cannot take these arguments: no evidence)
                    return None

            failures = [_Failure(case, got, expected, min(atol, 1e-5)) for got, expected, case, _ in pending]
            right = [(case, outputs(reference, case)) for case in passed]
            read[exact_only] = _read_answer(failures, [(c, e) for c, e in right if e is not None], values, agree,
                                            parameters, answer, exact_only=exact_only)
        return read[exact_only]

    def constant(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
        """A constant factor or offset, said only when every failed case has the same one (not a coincidence)."""
        found = _constant_change(got, expected, case, what)
        same = all(_constant_change(other, wanted, each, what) == found for other, wanted, each, _ in pending)
        return found if same else None

    def swapped(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
        """Two arguments used in each other's place, said only when that explains every failed case."""
        found = _swapped_arguments(reference, got, expected, case, what)
        same = all(_swapped_arguments(reference, other, wanted, each, what) == found
                   for other, wanted, each, _ in pending)
        return found if same else None

    def broken_property(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
        """The exercise's own reading, and before it the transformation of the right answer that gives the answer.

        An exercise's property locates a slip ("your denominator is not the causal sum"); a transformation that
        reproduces the answer on every failed case ("1/2 times the right one"), or an answer right to three digits on
        every failed case (a precision), says it: when both are found, both are said, the transformation first.
        """
        tests: list[Callable[[torch.Tensor, torch.Tensor, _Case], str | None]] = [
            *properties, swapped,
            partial(_unused_arguments, unused_everywhere, what=what), constant,
            _order_and_sign, _low_precision, transformation]
        for test in tests:
            try:
                broken = test(got, expected, case)
            except Exception:  # noqa: S112 (a property that cannot be read off this answer)
                continue
            if broken:
                break
        else:
            return None
        if test in properties:
            own.add(broken)
            try:
                # Integers off by one are a formula's slip, not a rounding: only real values are read for precision.
                precision = [_low_precision(other, wanted, each) for other, wanted, each, _ in pending
                             if not torch.equal(wanted, wanted.round())]
                exact = precision[0] if precision and len(precision) == len(pending) and all(precision) else (
                    transformation(got, expected, case, exact_only=True))
            except Exception:  # noqa: BLE001 (a reading is a help, never a reason to fail differently)
                exact = None
            if exact and exact not in broken:
                own.add(f"{exact}\n{broken}")
                return f"{exact}\n{broken}"
        return broken

    for case in cases:
        session.run(partial(one, case))
    failed_inputs = [case for case in cases if not any(case is other for other in passed)]
    if value_failures and _DIAGNOSIS["on"]:
        mistakes = [mistake for mistake in mistakes if not contradicted(mistake)]
        exact = _named_mistake(mistakes, value_failures)
        named = exact or _named_mistake(mistakes, explained)
        if named:
            # Named by its characteristic entries only: the answer agrees with the slip where it is wrong, and may be
            # right where the slip would not be, so the slip is said as what the wrong entries show.
            partial_match = "" if exact else (
                "your wrong entries are exactly this slip's (elsewhere your answer may be right): ")
            session.problems.pop("values", None)
            session.problems[named.key] = f"{partial_match}{named.message}\nfirst differing input: {first[0]}"
            return
        # A mistake that explains most failed cases, said with the cases it does not explain: the answer has it,
        # and something else as well (often a second slip that only a realistic input reveals). An answer that equals
        # the mistake only to the tolerance must equal it far within it: another slip can come within the tolerance
        # on a few cases (a decay (1 - lr wd / T)^T is within 1e-4 of one step, 1 - lr wd, when lr wd is small).
        for mistake in mistakes:
            covered = [mistake.key in why and (mistake.key in close or mistake.key not in matching)
                       for why, close, matching in zip(explained, closely, value_failures, strict=True)]
            if len(covered) >= 2 and 2 * sum(covered) > len(covered):
                other = first[covered.index(False)]
                session.problems.pop("values", None)
                session.problems[mistake.key] = (
                    f"{mistake.message}\nfirst differing input: {first[covered.index(True)]}\n"
                    f"your answer equals this mistake on {sum(covered)} of the {len(covered)} failed cases; the "
                    f"others differ in another way too, first: {other}")
                return
        # A typical slip and a sign as well: the answer is minus a mistake's model on every failed case.
        for mistake in mistakes:
            if negated and all(mistake.key in keys for keys in negated):
                session.problems.pop("values", None)
                session.problems[f"minus {mistake.key}"] = (
                    f"your answer is the opposite (minus) of this slip's: {mistake.message}; and a sign is flipped as "
                    f"well\nfirst differing input: {first[0]}")
                return
        if "values" in session.problems:
            for got, expected, case, message in pending:
                broken = broken_property(got, expected, case)
                if broken:
                    described.append((broken in own, got.numel(),
                                      f"{broken}\n{message}" + (f"\n{hint}" if hint else "")))
        if described and "values" in session.problems:
            # The largest failed case tells most about the slip (a list of one position cannot show that all
            # positions are equal): its broken property is the one reported.
            # A wrong shape elsewhere that reads as axes in another order says more than a property of the cases
            # where the sizes happen to agree: both are said, the shape first.
            permuted = next((text for text in first if "of shape" in text and "axes are permuted" in text), None)
            # An exercise's own reading, where one case has it, says the slip in the exercise's terms.
            largest = max(described, key=lambda item: item[:2])[2]
            session.problems["values"] = f"{permuted}\n{largest}" if permuted else largest
        if "values" in session.problems:  # no slip named: which hidden inputs fail may still locate it
            which = _which_inputs(failed_inputs, passed, parameters)
            if which:
                session.problems["values"] += f"\n{which}"
    elif _DIAGNOSIS["on"] and session.failed_cases and len(session.problems) == 1:
        # One error, raised on some hidden inputs only: their number of axes may say where it comes from.
        ranks = _which_ranks(failed_inputs, passed, parameters)
        if ranks:
            key = next(iter(session.problems))
            session.problems[key] += f"\n{ranks}"


_TWICE = re.compile(r"; \d+ is twice \d+: if one side counts the d coordinates.*?in a dimension d\)")
"""The frequency-ladder hint of a shape error, which a transposed matrix makes irrelevant."""


def _transposed_arguments(fn: Callable[..., Any], reference: Callable[..., Any], names: Sequence[str], case: _Case,
                          what: str, atol: float, rtol: float) -> str | None:
    """The matrices an answer that raised reads transposed: the one smallest set that, passed transposed, gives the
    right answer (x @ w.T for a w stored (in, out), nn.Linear's habit). None when no set, or several, do."""
    slots = [index for index, arg in enumerate(case.args) if isinstance(arg, torch.Tensor) and arg.dim() == 2]
    if not slots or len(slots) > 6 or len(names) < len(case.args):
        return None
    kwargs = case.kwargs or {}
    expected = _as_values(reference(*_copies(case.args), **kwargs), what, case.shown)
    for size in range(1, len(slots) + 1):
        found = []
        for subset in itertools.combinations(slots, size):
            args = [arg.T.contiguous() if index in subset else arg for index, arg in enumerate(_copies(case.args))]
            try:
                got = _as_values(fn(*args, **kwargs), what, case.shown)
            except Exception:  # noqa: BLE001, S112 (this set does not make the answer run)
                continue
            if _close(got, expected, atol, rtol):
                found.append(subset)
        if len(found) > 1:
            return None  # two sets that both work: the probe does not say which
        if found:
            chosen = [names[index] for index in found[0]]
            listed = " and ".join(", ".join(chosen).rsplit(", ", 1))
            shapes = "; ".join(f"{name} has shape {tuple(case.args[index].shape)}"
                               for name, index in zip(chosen, found[0], strict=True))
            weights = all(name.startswith("w") for name in chosen)
            return (f"your function reads {listed} transposed: given {', '.join(f'{n}.T' for n in chosen)} instead, it "
                    f"returns {what} right. Here {shapes}: use {'them' if len(chosen) > 1 else 'it'} as given, "
                    "without .T" + (" (x @ w, not x @ w.T or F.linear(x, w): nn.Linear stores its weight as "
                                    "(out_features, in_features) and applies x @ W.T; these are stored (in, out))"
                                    if weights else ""))
    return None


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
     "instead of m θ_ℓ does the same); the frequencies θ_ℓ = base^(-2ℓ/d) fall from 1",
     lambda d, b: _ladder(d, b, lambda ell: 2 * ell / d)),
    ("your exponent is ℓ/d instead of 2ℓ/d (or the base is its square root, (√base)^(-2ℓ/d): both give these "
     "numbers): the frequencies θ_ℓ = base^(-2ℓ/d) need the factor 2 "
     "(torch.arange(0, d, 2) / d), so yours fall half as fast",
     lambda d, b: _ladder(d, b, lambda ell: -ell / d)),
    ("your ladder is base^(-4ℓ/d) = (base²)^(-2ℓ/d): either your exponent uses d/2 as the dimension, or the base "
     "is squared (both give these numbers): the head dimension d is twice the number of pairs, θ_ℓ = base^(-2ℓ/d)",
     lambda d, b: _ladder(d, b, lambda ell: -4 * ell / d)),
    ("your pair index ℓ counts from 1: it runs from 0 to d/2 - 1, so the first pair has θ_0 = 1",
     lambda d, b: _ladder(d, b, lambda ell: -2 * (ell + 1) / d)),
    ("your exponent is 2ℓ/(d - 2), as torch.linspace(0, 1, d/2) gives: the last pair gets base^(-1) instead of "
     "base^(-(d - 2)/d); the exponents are torch.arange(0, d, 2) / d, which stop short of 1",
     lambda d, b: _ladder(d, b, lambda ell: -2 * ell / (d - 2))),
    ("your angles are 2π times too large, 2π m θ_ℓ: θ_ℓ = base^(-2ℓ/d) is already in radians per position; the 2π "
     "belongs to a wavelength, λ_ℓ = 2π/θ_ℓ, not to the angle",
     lambda d, b: 2 * math.pi * _ladder(d, b, lambda ell: -2 * ell / d)),
    ("your frequencies run in reverse order, the slowest pair first: pair ℓ = 0 has θ_0 = 1 and the ladder falls "
     "with ℓ, θ_ℓ = base^(-2ℓ/d) (a flip, or an exponent counted from the end)",
     lambda d, b: _ladder(d, b, lambda ell: -2 * ell / d).flip(0)),
    ("every pair turns at the frequency 1: the frequencies θ_ℓ = base^(-2ℓ/d) are missing, so the angle of pair ℓ "
     "is δ θ_ℓ (m θ_ℓ), not δ",
     lambda d, b: torch.ones(d // 2, dtype=torch.float64)),
)
"""Frequency ladders with a typical slip, and what each says: the same slips recur in every exercise with θ_ℓ."""


def _ladder_slip(
    got: torch.Tensor, dim: int, base: float, answer: Callable[[torch.Tensor], torch.Tensor]
) -> str | None:
    """The slip whose ladder, given to ``answer`` (which computes the exercise from frequencies), gives ``got``.

    With two pairs (d = 4) a ladder is one number, base^(-c), shared by many formulas (4ℓ/d is 2ℓ/(d - 2) there):
    nothing is named then.
    """
    if dim <= 4:
        return None
    for message, wrong in _WRONG_LADDERS:
        try:
            value = answer(wrong(dim, base))
        except (RuntimeError, ValueError):  # noqa: PERF203 (a ladder this exercise cannot use)
            continue
        if value.shape == got.shape and bool(torch.allclose(value.double(), got.double(), atol=1e-5, rtol=1e-4)):
            default = _ladder(dim, 10000.0, lambda ell: -2 * ell / dim)
            if base != 10000.0 and bool(torch.allclose(wrong(dim, base), default, rtol=1e-9)):
                # A base whose square (or root) is 10000: the slip and an ignored base give the same ladder.
                return (f"{message} (or, as this ladder is also that of base 10000, your function ignores its base "
                        f"argument: with base = {base:g} both give these numbers)")
            return message
    return None
