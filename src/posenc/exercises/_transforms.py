"""Generic readings, shared by every checker: the transformation of the right answer that gives a wrong one.

A mistake changes an answer in a way that has a shape, whatever the exercise: an argument used one off, doubled,
squared, inverted or with the opposite sign; the output scaled, shifted along an axis, permuted, signed or zeroed in
part. This module tries a fixed catalogue of such transformations on a wrong answer and its reference, on every
hidden case the answer failed, and says the one that reproduces the answer *exactly* (to the checker's tolerance, on
every failed case, and without contradicting a case the answer got right): a fact about the answer, said with the
property it breaks and how to look for the slip. When none does, two properties of the expected answer are tested:
a function of ``j - i`` (Toeplitz in its last two axes), and rows that sum to 1.

The catalogue, in the order it is tried:

1. **an argument transformed** (``_argument_reading``): the answer is the right one for one argument changed alone:
   one more or one less (an off-by-one), doubled, tripled or halved (an integer division too), squared or its square
   root, its reciprocal, the opposite sign, ``ln`` of it, reversed along an axis, transposed, or another argument of
   the same kind in its place;
2. **the output transformed** (``_output_reading``): ``a · R + b`` with ``a`` and ``b`` the same on every failed case or
   written in the arguments' terms (``√d``, ``1/s``, ``-padding_idx``); a power ``c · R^p`` (an exponent off); a shift
   by one or two along an axis (an off-by-one in a position or a window); a permutation of one axis (the halves layout
   for the interleaved one, each pair's coordinates swapped, a roll); the opposite sign, or 0, on part of one axis (odd
   entries, a half, a block: a sign slip, a missing term); a factor that depends on one index only (a missing or wrong
   normalisation, ``1/(i + 1)``);
3. **a part or a property** (``_confined``, ``_causal_reading``, ``_property_reading``): the wrong entries all lie in
   one part of one axis (the first entry, the odd ones, a half: a special case computed apart); an output that changes
   with the later rows of an argument where the right one is causal (a mask missing: the student's function is run
   again); the expected answer is a function of ``j - i`` and the answer is not; the expected rows sum to 1 and the
   answer's do not;
4. **structural readings** (``posenc.exercises._structure``), which need no model of the slip: the relation of the
   answer to the right one (its absolute value, clamped, transposed, off by a term of ``j - i`` or of one index, a
   factor of ``j - i``, the right values in other places, the right magnitudes with some signs flipped), the region
   that holds every wrong entry (a diagonal and what lies above or below it, the indices from some k on, a parity,
   where an argument or the right value is negative, positive or beyond a level, where one position follows another),
   said with what the answer holds there, one factor or offset per input (a normalisation by another quantity), and
   an error that grows with an index. Among the argument slips of 1., a
   tensor with the sign of its odd coordinates (or of its second half) flipped reads a reflection in place of a
   rotation of pairs.

:mod:`posenc.exercises.comparing` reads the hidden cases of the checkers made of cases with these readings when no
typical mistake explains the answer (after the exercise's own properties); :func:`_probe_reading` does the same for
the checkers with their own diagnosis, on a few probe inputs chosen to separate mistakes. The output readings live in
``posenc.exercises._output_readings``; every function of both modules is private: the checkers of
:mod:`posenc.exercises` are the interface.
"""

from __future__ import annotations

import math
import re
import textwrap
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch

from ._output_readings import (
    _ATOL,
    _RTOL,
    _affine,
    _confined,
    _Failure,
    _index_factor,
    _part,
    _permuted,
    _power,
    _property_reading,
    _shift,
)
from ._readings import _as_values, _Case, _copies
from ._structure import _growing_error, _moved_or_signed, _per_input_constant, _ratio_law, _region, _relation
from .checking import _close

__all__: list[str] = []

_BUDGET = 1.5
"""Seconds the argument reading may spend calling the reference before it gives up (a slow reference, many cases)."""

_Values = Callable[[tuple[Any, ...], dict[str, Any], _Case], "torch.Tensor | None"]
"""The reference's answer (as compared) for transformed arguments of a case, or None where it cannot be computed."""
_Agree = Callable[[torch.Tensor, torch.Tensor, _Case], bool]
"""Whether an answer agrees with a value, to the checker's tolerance."""


# --------------------------------------------------------------------------- 1. an argument transformed


def _variants(value: object) -> list[tuple[str, str, object]]:
    """``(how, why, new value)``: the typical slips of one argument, ``how`` with ``{n}`` for its name."""
    if isinstance(value, bool):
        return [("not {n}", "the opposite setting", not value)]
    if not isinstance(value, (int, float, torch.Tensor)):
        return []
    off = [("{n} - 1", "one less: an off-by-one (a range or a count that stops one short, an index from 1)"),
           ("{n} + 1", "one more: an off-by-one (a count from 1, a range that includes its end)")]
    if isinstance(value, int):
        found: list[tuple[str, str, object]] = [(off[0][0], off[0][1], value - 1), (off[1][0], off[1][1], value + 1),
                                                ("2·{n}", "doubled", 2 * value)]
        if value >= 2:
            found.append(("{n} // 2", "halved", value // 2))
        return found
    if isinstance(value, float):
        found = [("-{n}", "the opposite sign: a sign slip", -value), ("2·{n}", "doubled", 2 * value),
                 ("{n}/2", "halved", value / 2), ("{n}²", "squared", value * value), ("3·{n}", "tripled", 3 * value),
                 (off[0][0], off[0][1], value - 1), (off[1][0], off[1][1], value + 1)]
        if value != 0:
            found.append(("1/{n}", "its reciprocal: a division where the formula multiplies, or the reverse",
                          1 / value))
        if value > 0:
            found += [("√{n}", "its square root", math.sqrt(value)), ("ln {n}", "its logarithm", math.log(value))]
        return found
    if value.dtype == torch.bool or value.is_complex() or value.numel() < 2:
        return []
    tensor = value
    found = [("-{n}", "the opposite sign: a sign slip", -tensor), ("2·{n}", "doubled", 2 * tensor),
             ("3·{n}", "tripled", 3 * tensor),
             ("{n} + 1", "every entry one more: an off-by-one (positions counted from 1?)", tensor + 1),
             ("{n} - 1", "every entry one less: an off-by-one", tensor - 1),
             ("{n} in reverse order", "reversed along its last axis", tensor.flip(-1))]
    if tensor.is_floating_point():
        found += [("{n}/2", "halved", tensor / 2), ("{n}²", "squared entry by entry", tensor * tensor)]
        if tensor.dim() >= 1 and tensor.shape[-1] >= 2 and tensor.shape[-1] % 2 == 0:
            half = tensor.shape[-1] // 2
            reflect = ("a sign slip on those coordinates; for a rotation of pairs, a reflection [[cos, sin], [sin, "
                       "-cos]] in place of the rotation [[cos, -sin], [sin, cos]]")
            found += [("{n} with the sign of its odd coordinates flipped", reflect,
                       torch.stack((tensor[..., 0::2], -tensor[..., 1::2]), -1).flatten(-2)),
                      ("{n} with the sign of its second half flipped", reflect,
                       torch.cat((tensor[..., :half], -tensor[..., half:]), -1))]
        if bool((tensor != 0).all()):
            found.append(("1/{n}", "its reciprocal: a division where the formula multiplies, or the reverse",
                          1 / tensor))
    else:
        found.append(("{n} // 2", "halved by an integer division", tensor // 2))
    if tensor.dim() >= 2 and tensor.shape[-1] == tensor.shape[-2]:
        found.append(("{n} transposed", "its last two axes exchanged", tensor.transpose(-2, -1)))
    if tensor.dim() >= 2 and tensor.shape[-2] > 1:
        found.append(("{n} with its rows in reverse order", "reversed along its second-last axis", tensor.flip(-2)))
    return found


def _substitutes(args: tuple[Any, ...], names: Sequence[str], index: int) -> list[tuple[str, str, object]]:
    """Another argument of the same kind in the place of argument ``index``: ``{n}`` used where it does not belong."""
    value = args[index]
    found = []
    for other, candidate in enumerate(args):
        if other == index:
            continue
        same = (isinstance(value, torch.Tensor) and isinstance(candidate, torch.Tensor)
                and value.shape == candidate.shape and value.dtype == candidate.dtype
                and not torch.equal(value, candidate)) or (
            type(value) in (int, float) and type(value) is type(candidate) and value != candidate)
        if same:
            found.append((names[other], f"{names[other]} used where {{n}} belongs", candidate))
    return found


def _argument_reading(
    failed: Sequence[_Failure], passed: Sequence[tuple[_Case, torch.Tensor]], values: _Values, agree: _Agree,
    names: Sequence[str],
) -> str | None:
    """The argument whose transformation makes the reference give the answer on every case.

    Every slip of every argument is tried (within ``_BUDGET`` seconds): when two of them give the answer on every case,
    both are said, since the hidden inputs cannot tell them apart.
    """
    start = time.perf_counter()
    cases = [failure.case for failure in failed]
    args0 = cases[0].args
    kwargs0 = cases[0].kwargs or {}
    slots: list[int | str] = [*range(len(args0)), *kwargs0]
    found: list[tuple[str, str, str]] = []
    for slot in slots:
        name = (names[slot] if slot < len(names) else f"argument {slot + 1}") if isinstance(slot, int) else slot
        catalogue = _variants(args0[slot] if isinstance(slot, int) else kwargs0[slot])
        if isinstance(slot, int):
            catalogue += _substitutes(args0, names, slot)
        for how, why, _ in catalogue:
            if time.perf_counter() - start > _BUDGET or len(found) == 2:
                break
            if _explains_everywhere(failed, passed, values, agree, slot, how, names):
                found.append((name, how.format(n=name), why.format(n=name)))
    if not found:
        return None
    name, said, why = found[0]
    ladders = {"base²": "the same ladder as an exponent twice as large, base^(-4ℓ/d) = (base²)^(-2ℓ/d)",
               "√base": "the same ladder as an exponent half as large, base^(-ℓ/d) = (√base)^(-2ℓ/d)"}
    if said in ladders:  # a base squared and an exponent doubled give the same frequencies: both are said
        why = f"{why}; {ladders[said]}"
    other = (f" (or for {found[1][1]} in place of {found[1][0]}: the same on every hidden input that failed)"
             if len(found) > 1 else "")
    return (f"your answer is exactly the right one for {said} in place of {name} ({why}){other}, on every hidden input "
            f"that failed: check how your code uses {name}")


def _changed(case: _Case, slot: int | str, how: str, names: Sequence[str]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments of ``case`` with the argument at ``slot`` transformed as ``how`` says (looked up by ``how``)."""
    args, kwargs = list(_copies(case.args)), dict(case.kwargs or {})
    value = args[slot] if isinstance(slot, int) else kwargs[slot]
    options = _variants(value) + (_substitutes(tuple(args), names, slot) if isinstance(slot, int) else [])
    new = next((candidate for text, _, candidate in options if text == how), None)
    if new is None:
        raise LookupError(how)
    if isinstance(slot, int):
        args[slot] = new
    else:
        kwargs[slot] = new
    return tuple(args), kwargs


def _explains_everywhere(
    failed: Sequence[_Failure], passed: Sequence[tuple[_Case, torch.Tensor]], values: _Values, agree: _Agree,
    slot: int | str, how: str, names: Sequence[str],
) -> bool:
    for failure in failed:
        try:
            value = values(*_changed(failure.case, slot, how, names), failure.case)
        except Exception:  # noqa: BLE001 (a transformation the reference cannot take: no evidence)
            return False
        if value is None or value.shape != failure.got.shape or not agree(failure.got, value, failure.case):
            return False
    for case, expected in passed:  # a slip that would have shown where the answer is right is not the answer's
        try:
            value = values(*_changed(case, slot, how, names), case)
        except Exception:  # noqa: BLE001, S112 (this case cannot show the slip)
            continue
        if value is not None and value.shape == expected.shape and not agree(expected, value, case):
            return False
    return True


_Answer = Callable[[tuple[Any, ...], dict[str, Any], _Case], "torch.Tensor | None"]
"""The student's answer (as compared) for other arguments of a case."""


def _moved_row(value: torch.Tensor, row: int, generator: torch.Generator) -> torch.Tensor:
    """``value`` with only its row ``row`` (along the second-last axis) changed."""
    noise = torch.randn(value.shape[:-2] + (1, value.shape[-1]), generator=generator, dtype=value.dtype)
    changed = value.clone()
    row %= value.shape[-2]
    changed[..., row: row + 1, :] += 1 + noise
    return changed


def _causal_reading(failed: Sequence[_Failure], values: _Values, answer: _Answer, names: Sequence[str]) -> str | None:
    """An output row that must not depend on an argument's later rows (or on its other rows) and does.

    The reference is probed first: when a change of the argument's last row leaves every earlier output row as it
    was, the exercise is causal in that argument (or row by row, when a change of the first row moves output row 0
    only); the answer breaks that when its earlier rows move with the last row.
    """
    generator = torch.Generator().manual_seed(7)
    for failure in failed[:2]:
        case = failure.case
        kwargs = dict(case.kwargs or {})
        for index, value in enumerate(case.args):
            if not isinstance(value, torch.Tensor) or not value.is_floating_point() or value.dim() < 2 or (
                    value.shape[-2] < 3):
                continue
            changed = list(_copies(case.args))
            changed[index] = _moved_row(value, -1, generator)
            before, after = failure.expected, values(tuple(changed), kwargs, case)
            if after is None or after.dim() < 2 or after.shape != before.shape or after.shape[-2] != value.shape[-2]:
                continue
            earlier = (slice(None),) * (after.dim() - 2) + (slice(0, -1),)
            if not _close(after[earlier], before[earlier], _ATOL, _RTOL) or _close(after, before, _ATOL, _RTOL):
                continue  # the reference is not causal in this argument, or does not use its last row
            mine = answer(tuple(changed), kwargs, case)
            if mine is None or mine.shape != failure.got.shape or _close(mine[earlier], failure.got[earlier], _ATOL,
                                                                          _RTOL):
                continue
            name = names[index] if index < len(names) else f"argument {index + 1}"
            first = list(_copies(case.args))
            first[index] = _moved_row(value, 0, generator)
            moved = values(tuple(first), kwargs, case)
            later = (slice(None),) * (before.dim() - 2) + (slice(1, None),)
            if moved is not None and moved.shape == before.shape and _close(moved[later], before[later], _ATOL, _RTOL):
                return (f"your output row for one position changes when only another row of {name} changes (the "
                        f"last): each output row must use its own row of {name} only, so a sum, a mean or a "
                        f"product over the rows of {name} mixes them (or {name} stands where another argument "
                        "belongs)")
            return (f"your output at the earlier positions changes when only the last row of {name} changes: each "
                    f"position may use only the rows of {name} up to its own (a causal sum), so a mask "
                    "(torch.tril, a cumulative sum) is missing or covers the later rows too")
    return None


# --------------------------------------------------------------------------- entry points


def _read_answer(
    failed: Sequence[_Failure], passed: Sequence[tuple[_Case, torch.Tensor]], values: _Values, agree: _Agree,
    names: Sequence[str], answer: _Answer | None = None, *, exact_only: bool = False,
) -> str | None:
    """The first reading of the catalogue that explains every failed case exactly, or None.

    ``answer``, when given, runs the student's function on other arguments: the causal reading needs it.
    ``exact_only`` keeps the transformations that reproduce the answer (an argument or the output transformed, a row
    that sees other rows) and leaves out the readings of a part or a property, which locate a slip without saying it.
    """
    failed = [f for f in failed if f.got.shape == f.expected.shape and bool(torch.isfinite(f.got).all())
              and bool(torch.isfinite(f.expected).all())]
    if not failed:
        return None
    # The output scaled comes first: when an argument scaled gives the same answer (the output is linear in it), the
    # factor on the output is the plainer statement of the two.
    readings: list[Callable[[], str | None]] = [lambda: _affine(failed, names, factor_only=True),
                                                lambda: _argument_reading(failed, passed, values, agree, names)]
    if all(_rounding_only(f) for f in failed):  # an answer right to a few digits is read for its precision
        readings.append(lambda: _precision_words(failed))
    else:
        readings += [
            lambda: _affine(failed, names), lambda: _power(failed), lambda: _shift(failed), lambda: _permuted(failed),
            lambda: _part(failed, "sign"), lambda: _part(failed, "zero"), lambda: _index_factor(failed),
            lambda: _relation(failed, names)]
        if not exact_only:
            readings += [lambda: _growing_error(failed), lambda: _located(failed, names),
                         lambda: _per_input_constant(failed), lambda: _ratio_law(failed),
                         lambda: _moved_or_signed(failed), lambda: _confined(failed, names),
                         lambda: _property_reading(failed, "sums")]
        if answer is not None:
            readings.insert(1, lambda: _causal_reading(failed, values, answer, names))
    for reading in readings:
        try:
            found = reading()
        except Exception:  # noqa: BLE001, S112 (a reading that cannot be made of this answer)
            continue
        if found:
            return found
    return None


def _located(failed: Sequence[_Failure], names: Sequence[str]) -> str | None:
    """A function of ``j - i`` broken, and the region of the wrong entries: both when both are found."""
    found = [text for text in (_property_reading(failed, "toeplitz"), _region(failed, names)) if text]
    return "\n".join(found) or None


def _precision_words(failed: Sequence[_Failure]) -> str | None:
    """An answer right to about three significant digits on every failed input, said with the largest error.

    An error below 1e-5 of the values is float32 rounding or a tolerance question, not half precision: nothing is said.
    """
    worst = max(float((f.got.double() - f.expected.double()).abs().max()) for f in failed)
    scale = max(float(f.expected.double().abs().max()) for f in failed)
    if worst <= 1e-5 * scale or all(torch.equal(f.expected, f.expected.round()) for f in failed):
        return None  # float32 rounding; or integers, which a rounding does not move by one
    return (f"your answer is right to about three significant digits only, on every failed input (error up to "
            f"{worst:.1e}, for values up to {scale:.3g}), what half precision (float16, bfloat16) gives: if you "
            "compute in it (a .half() or a float16 tensor somewhere), use float32 or float64; if not, a small term is "
            "off")


def _rounding_only(failure: _Failure) -> bool:
    """Whether the answer is right to three significant digits everywhere: a precision, not a formula, is wrong."""
    expected = failure.expected.double()
    error = (failure.got.double() - expected).abs()
    return bool((error <= 2e-3 * expected.abs().clamp(min=float(expected.abs().max()) * 1e-3)).all())


def _probe_reading(
    fn: Callable[..., Any], reference: Callable[..., Any], cases: Sequence[_Case], what: str, names: Sequence[str],
    *, atol: float = 1e-5, rtol: float = 1e-4, output: Callable[[Any], Any] | None = None,
) -> str | None:
    """Run ``fn`` and ``reference`` on the probe ``cases`` and read the answer with the catalogue.

    For the checkers with their own diagnosis: ``output`` selects what is compared in what the function returns (the
    frequencies of a pair (frequencies, attention factor)). The student's function is called once per case; a case it
    cannot run, or whose answer is not a tensor of numbers, is left out.
    """
    select = output or (lambda value: value)
    failed: list[_Failure] = []
    passed: list[tuple[_Case, torch.Tensor]] = []

    def values(args: tuple[Any, ...], kwargs: dict[str, Any], case: _Case) -> torch.Tensor:
        return _as_values(select(reference(*args, **kwargs)), what, case.shown)

    for case in cases:
        try:
            got = _as_values(select(fn(*_copies(case.args), **(case.kwargs or {}))), what, case.shown)
            expected = values(_copies(case.args), dict(case.kwargs or {}), case)
        except Exception:  # noqa: BLE001, S112 (a case the answer cannot run: no evidence here)
            continue
        if got.shape == expected.shape and _close(got, expected, atol, rtol):
            passed.append((case, expected))
        else:
            failed.append(_Failure(case, got, expected, min(atol, _ATOL)))
    if not failed:
        return None

    def answer(args: tuple[Any, ...], kwargs: dict[str, Any], case: _Case) -> torch.Tensor | None:
        try:
            return _as_values(select(fn(*args, **kwargs)), what, case.shown)
        except Exception:  # noqa: BLE001 (the answer cannot take these arguments: no evidence)
            return None

    return _read_answer(failed, passed, values, lambda got, value, case: _close(got, value, atol, rtol), names,
                        answer)


def _probing(
    fn: Callable[..., Any], keys: Sequence[str], reference: Callable[..., Any], cases: Sequence[_Case], what: str,
    names: Sequence[str], **options: Any,
) -> tuple[Sequence[str], Callable[[], str | None]]:
    """The ``reading`` argument of ``posenc.exercises.checking._run_checker``: the catalogue on these probe inputs."""
    return keys, lambda: _probe_reading(fn, reference, cases, what, names, **options)


_CALL = re.compile(r"``fn\(([^)]*)\)")


def _readings_paragraph(doc: str, where: str) -> str:
    """The paragraph that lists a checker's generic readings, for the checker's docstring (``where`` they are read)."""
    match = _CALL.search(doc)
    names = [part.split("=")[0].strip() for part in match[1].split(",")] if match else []
    arguments = ", ".join(f"``{name}``" for name in names if name) or "its arguments"
    return (
        "Generic readings (``posenc.exercises._transforms``), said when no typical mistake explains the answer, "
        f"{where}: the right answer for one of {arguments} changed (one more or one less, doubled, tripled or halved, "
        "squared or its square root, its reciprocal, the opposite sign, reversed, transposed, another argument in its"
        " place); an output that changes with the later rows of an argument (a causal mask missing); the right answer"
        " scaled or offset by a constant or an expression of the arguments, raised to a power, shifted by one or two "
        "along an axis, permuted along an axis (the halves layout for interleaved pairs, swapped pairs, a roll), of "
        "the opposite sign or 0 on part of an axis, or scaled per index (a normalisation); an answer that is not a "
        "function of ``j - i``, or whose rows do not sum to 1, where the right one is; wrong on one part of an axis "
        "only. Structural readings (``posenc.exercises._structure``), which need no model of the slip: the absolute "
        "value of the right answer, the right answer clamped, transposed, or off by a term of ``j - i`` or of one "
        "index only (a step); the region that holds every wrong entry (above or below a diagonal, from some index on,"
        " where an argument or the right value is negative, positive or beyond a level, where one position follows "
        "another); one factor or offset per input, a factor of ``j - i``; the right values in other places, or the "
        "right magnitudes with some signs flipped; an error that grows with an index (a precision lost, or a constant "
        "slightly off); for the checkers made of cases, the one setting that sets the failed inputs apart."
    )


def _document_readings(checker: Callable[..., Any], where: str) -> None:
    """Insert the paragraph of generic readings into ``checker``'s docstring, before its ``Args:`` section."""
    doc = checker.__doc__ or ""
    lines = textwrap.wrap(_readings_paragraph(doc, where), 112, break_on_hyphens=False)
    paragraph = "\n".join(f"    {line}" for line in lines)
    if "\n    Args:" in doc:
        checker.__doc__ = doc.replace("\n    Args:", f"\n{paragraph}\n\n    Args:", 1)
    else:
        checker.__doc__ = f"{doc.rstrip()}\n\n{paragraph}\n    "
