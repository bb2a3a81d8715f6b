"""The output readings of the generic catalogue: the right answer transformed, a part wrong, a property broken.

Part of the catalogue described in ``posenc.exercises._transforms`` (which reads the arguments and runs the whole
catalogue): each function here takes the failed cases (``_Failure``: the case, the answer and the expected value, both
as compared) and says, in the student's terms, the one transformation of the expected value that gives the answer on
every failed case, or None: ``a · R + b`` with ``a`` and ``b`` constants or expressions of the arguments (``_affine``),
a power (``_power``), a shift along an axis (``_shift``), a permutation of an axis (``_permuted``), the opposite sign or
0 on one part of an axis (``_part``), a factor per index (``_index_factor``), wrong entries in one part of an axis only
(``_confined``), and the properties of the right answer the answer breaks (``_property_reading``: a function of
``j - i``, rows that sum to 1). Entries agree to the checkers' tolerance: float32 rounding is not read as a slip.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from ._readings import _Case
from .checking import _close, _num, _runs_text

__all__: list[str] = []

_ATOL, _RTOL = 1e-5, 1e-4
"""The tolerance of the output readings: the checkers' own, so that float32 rounding is not read as a slip."""


@dataclass(frozen=True)
class _Failure:
    """A hidden case the answer failed: what it returned, and what was expected (both as compared)."""

    case: _Case
    got: torch.Tensor
    expected: torch.Tensor
    atol: float = _ATOL  # the checker's absolute tolerance (0 for frequencies, whose slow pairs are tiny)


# --------------------------------------------------------------------------- 2. the output transformed

_SIMPLE = {2.0: "2", 0.5: "1/2", 3.0: "3", 1 / 3: "1/3", 4.0: "4", 0.25: "1/4", -1.0: "-1", -2.0: "-2", -0.5: "-1/2",
           1.5: "3/2", 2 / 3: "2/3", math.pi: "π", 1 / math.pi: "1/π", 2 * math.pi: "2π", 1 / (2 * math.pi): "1/(2π)"}


def _sizes(case: _Case, names: Sequence[str]) -> list[tuple[str, float]]:
    """The numbers a factor may be made of in this case: the scalar arguments, and the sizes of the tensors' axes."""
    found: list[tuple[str, float]] = []
    items = [*zip(names, case.args, strict=False), *(case.kwargs or {}).items()]
    for name, value in items:
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)) and value not in (0, 1):
            found.append((name, float(value)))
        elif isinstance(value, torch.Tensor) and value.dim() >= 1:
            last = value.shape[-1]
            if last > 1:
                found.append((f"{name}.shape[-1]", float(last)))
            if value.dim() >= 2 and value.shape[-2] > 1 and value.shape[-2] != last:
                found.append((f"{name}.shape[-2]", float(value.shape[-2])))
    return found


def _expressions(case: _Case, names: Sequence[str]) -> dict[str, float]:
    """Simple expressions in one number of the case (``√d``, ``1/s``, ``L - 1``) and their values."""
    found: dict[str, float] = {}
    for name, v in _sizes(case, names):
        candidates = {name: v, f"1/{name}": 1 / v, f"{name}²": v * v, f"-{name}": -v, f"{name} - 1": v - 1,
                      f"{name} + 1": v + 1, f"2·{name}": 2 * v, f"{name}/2": v / 2}
        if v > 0:
            candidates |= {f"√{name}": math.sqrt(v), f"1/√{name}": 1 / math.sqrt(v)}
        if v != 1:
            candidates[f"1/({name} - 1)"] = 1 / (v - 1)
        for text, value in candidates.items():
            found.setdefault(text, value)
    return found


def _linear_in_small(case: _Case, names: Sequence[str]) -> dict[str, float]:
    """``n``, ``-n``, ``n ± 1`` and ``2·n`` for the integer arguments that ``_sizes`` leaves out for being 0 or 1."""
    found: dict[str, float] = {}
    for name, value in [*zip(names, case.args, strict=False), *(case.kwargs or {}).items()]:
        if isinstance(value, int) and not isinstance(value, bool) and value in (0, 1):
            found |= {name: value, f"-{name}": -value, f"{name} - 1": value - 1, f"{name} + 1": value + 1,
                      f"2·{name}": 2 * value}
    return found


def _said(values: list[float], cases: list[_Case], names: Sequence[str]) -> str | None:
    """A number per failed case said as one constant or one expression of the arguments, if one fits them all."""
    if all(math.isclose(v, values[0], rel_tol=1e-4, abs_tol=1e-12) for v in values):
        simple = next((text for number, text in _SIMPLE.items() if math.isclose(values[0], number, rel_tol=1e-4)), None)
        if simple is not None:
            return simple
    per_case = [_expressions(case, names) for case in cases]
    fitting = [text for text in per_case[0] if all(
        text in table and math.isclose(table[text], v, rel_tol=1e-4, abs_tol=1e-9)
        for table, v in zip(per_case, values, strict=True))]
    if not fitting and len({round(v, 9) for v in values}) >= 2:
        # An argument that is 0 or 1 on some cases (padding_idx) names a number that varies with it on the others.
        small = [{**table, **_linear_in_small(case, names)} for table, case in zip(per_case, cases, strict=True)]
        fitting = [text for text in small[0] if all(
            text in table and math.isclose(table[text], v, rel_tol=1e-4, abs_tol=1e-9)
            for table, v in zip(small, values, strict=True))]
    if fitting:  # two expressions that agree on every failed case are both said: the inputs cannot tell them apart
        return fitting[0] if len(fitting) == 1 else f"{fitting[0]} (or {fitting[1]}: equal on every failed input)"
    if len(values) >= 2 and all(math.isclose(v, values[0], rel_tol=1e-4, abs_tol=1e-12) for v in values):
        return f"{values[0]:.6g}"
    return None


def _affine(failed: Sequence[_Failure], names: Sequence[str], *, factor_only: bool = False) -> str | None:
    """``got = a · expected + b`` on every failed case, with ``a`` and ``b`` said as constants or expressions.

    An offset alone (``a = 1``) and a factor alone (``b = 0``) are tried first, case by case, so that cases of one
    entry count too; then a whole line ``a · R + b`` on cases of several distinct entries. ``factor_only`` tries the
    factor alone.
    """
    cases = [failure.case for failure in failed]
    flat = [(f.got.double().flatten(), f.expected.double().flatten()) for f in failed]
    offsets = [got - expected for got, expected in flat]
    if not factor_only and all(bool(torch.allclose(d, d[:1].expand_as(d), atol=_ATOL, rtol=0.0)) for d in offsets):
        said = _said([float(d[0]) for d in offsets], cases, names)
        if said is not None and said not in ("0", "-0"):
            return (f"your answer is the right one plus {said} on every entry of every failed input: an offset, a "
                    "start or a count off by that amount")
    # A factor is read where the right entries are not 0 (a mask's zeros stay 0 whatever the factor).
    if all(bool((expected.abs() > 1e-12).any()) and bool((got[expected.abs() <= 1e-12].abs() <= _ATOL).all())
           for got, expected in flat):
        ratios = [got[expected.abs() > 1e-12] / expected[expected.abs() > 1e-12] for got, expected in flat]
        if all(bool(torch.allclose(r, r[:1].expand_as(r), rtol=_RTOL, atol=0.0)) for r in ratios):
            said = _said([float(r[0]) for r in ratios], cases, names)
            if said is not None and said != "-1":  # the opposite sign: said by the readings of a sign
                return (f"your answer is {said} times the right one on every entry of every failed input: a factor "
                        f"{said} too many (or its reciprocal missing): look for where that number enters your formula")
    if factor_only:
        return None
    lines = []
    for got, expected in flat:
        if expected.numel() < 2 or float(expected.max() - expected.min()) < 1e-9:
            return None
        design = torch.stack((expected, torch.ones_like(expected)), -1)
        a, b = (float(v) for v in torch.linalg.lstsq(design, got[:, None]).solution.flatten())
        if not bool(torch.allclose(a * expected + b, got, atol=_ATOL, rtol=_RTOL)):
            return None
        lines.append((a, b))
    # A factor alone or an offset alone is said above; one case may lack the offset (-padding_idx at padding_idx 0).
    if all(math.isclose(a, 1.0) for a, _ in lines) or all(abs(b) < 1e-9 for _, b in lines):
        return None
    factor = _said([a for a, _ in lines], cases, names) or (f"{lines[0][0]:.4g}" if len(set(lines)) == 1 else None)
    offset = _said([b for _, b in lines], cases, names) or (f"{lines[0][1]:.4g}" if len(set(lines)) == 1 else None)
    if factor is None or offset is None:
        return None
    return (f"your answer is {factor} × (the right one) + {offset} on every entry of every failed input: a factor and "
            "an offset are wrong, as when a count or a step is scaled and its start kept")


def _power(failed: Sequence[_Failure]) -> str | None:
    """``got = c · expected^p`` with one ``p ≠ 1`` on every failed case: an exponent scaled by ``p``."""
    powers, constants = [], []
    for failure in failed:
        got, expected = failure.got.double().flatten(), failure.expected.double().flatten()
        if expected.numel() < 3 or not bool((got > 0).all()) or not bool((expected > 0).all()):
            return None
        x, y = expected.log(), got.log()
        if float(x.max() - x.min()) < 1e-6:
            return None
        design = torch.stack((x, torch.ones_like(x)), -1)
        p, log_c = (float(v) for v in torch.linalg.lstsq(design, y[:, None]).solution.flatten())
        if not bool(torch.allclose(log_c + p * x, y, atol=_RTOL, rtol=0.0)) or math.isclose(p, 1.0, rel_tol=1e-4):
            return None
        powers.append(p)
        constants.append(math.exp(log_c))
    if not all(math.isclose(p, powers[0], rel_tol=1e-4) for p in powers):
        return None
    p = powers[0]
    shown = next((text for number, text in _SIMPLE.items() if math.isclose(p, number, rel_tol=1e-4)), f"{p:.4g}")
    times = "" if all(math.isclose(c, 1.0, rel_tol=1e-4) for c in constants) else " times a constant"
    bases = {"e": math.e, "2": 2.0, "10": 10.0}
    swapped = next(((mine, right) for mine, right in itertools.permutations(bases, 2)
                    if math.isclose(p, math.log(bases[mine]) / math.log(bases[right]), rel_tol=1e-4)), None)
    if swapped is not None:  # b^x computed as c^x: the power is log c / log b
        mine, right = swapped
        how = {"e": "math.exp or torch.exp", "2": "2 ** x", "10": "10 ** x"}[mine]
        return (f"your values are the right ones raised to the power {shown}{times} = log {mine} / log {right}, on "
                f"every failed input: a power of {mine} ({how}) where a power of {right} belongs, the same exponent "
                "in another base")
    if math.isclose(p, 2.0, rel_tol=1e-4) or math.isclose(p, 0.5, rel_tol=1e-4):
        causes = "a factor 2 missing or extra in an exponent, a dimension d/2 for d, a square or a root too many"
    elif any(math.isclose(v, round(v), rel_tol=1e-6) and 2 <= round(v) <= 16 for v in (p, 1 / p)):  # 3, 1/8, ...
        causes = f"a factor {shown} in an exponent" if p > 1 else f"a factor {1 / p:.4g} missing from an exponent"
    else:  # no simple slip gives such a power: the relation is said, not a cause
        return f"your values are the right ones raised to the power {shown}{times}, on every failed input"
    return (f"your values are the right ones raised to the power {shown}{times}, on every failed input: an exponent "
            f"is {shown} times what it should be ({causes})")


def _shift(failed: Sequence[_Failure]) -> str | None:
    """Every entry holds the right value of its neighbour one or two steps along one axis."""
    first = failed[0]
    for axis in range(-first.got.dim(), 0):
        for step in (1, -1, 2, -2):
            if all(_shifted(f.got, f.expected, axis, step) for f in failed):
                which = "next" if step > 0 else "previous"
                count = "one step" if abs(step) == 1 else "two steps"
                return (f"your answer is shifted by {count} along axis {axis}: each entry holds the right value of the "
                        f"{which} one{' but one' if abs(step) == 2 else ''} (index i holds what belongs at i "
                        f"{'+' if step > 0 else '-'} {abs(step)}): an off-by-one in a position, a start, a window or a "
                        "range")
    return None


def _shifted(got: torch.Tensor, expected: torch.Tensor, axis: int, step: int) -> bool:
    size = got.shape[axis] if got.dim() else 0
    if size < abs(step) + 2:
        return False
    got, expected = got.double(), expected.double()
    if size - abs(step) < 3 and got.dim() == 1 and torch.equal(got.sort().values, expected.sort().values):
        return False  # on so few entries a shift and a reordering of the right values cannot be told apart
    if step > 0:
        mine, theirs = got.narrow(axis, 0, size - step), expected.narrow(axis, step, size - step)
    else:
        mine, theirs = got.narrow(axis, -step, size + step), expected.narrow(axis, 0, size + step)
    overlap_right = bool(torch.allclose(mine, theirs, atol=_ATOL, rtol=_RTOL))
    moved = not bool(torch.allclose(theirs, expected.narrow(axis, 0 if step > 0 else -step, size - abs(step)),
                                    atol=_ATOL, rtol=_RTOL))
    return overlap_right and moved


def _permutation(got: torch.Tensor, expected: torch.Tensor, axis: int) -> list[int] | None:
    """``order`` with ``got``'s slice ``i`` equal to ``expected``'s slice ``order[i]`` along ``axis``, if one exists.

    Only for distinct slices (a permutation of equal ones says nothing) and axes of at most 1024 entries.
    """
    size = got.shape[axis]
    if size > 1024:
        return None
    mine = got.double().movedim(axis, 0).reshape(size, -1)
    theirs = expected.double().movedim(axis, 0).reshape(size, -1)
    reach = _ATOL * math.sqrt(mine.shape[1]) + _RTOL * theirs.norm(dim=1)
    if bool((torch.cdist(theirs, theirs) <= reach[None, :]).sum(0).gt(1).any()):
        return None
    close = torch.cdist(mine, theirs) <= reach[None, :]
    if not bool((close.sum(1) == 1).all()):
        return None
    order = [int(j) for j in close.to(torch.uint8).argmax(1)]
    return order if len(set(order)) == size else None


def _order_words(order: list[int]) -> str | None:
    n = len(order)
    half = n // 2
    if n >= 4 and n % 2 == 0:
        if order == [*range(0, n, 2), *range(1, n, 2)]:
            return ("the even-indexed entries first, then the odd ones: the halves layout (x[..., :d/2], x[..., d/2:]) "
                    "where interleaved pairs (x[..., 0::2], x[..., 1::2]) are expected")
        if order == [i for pair in zip(range(half), range(half, n), strict=True) for i in pair]:
            return ("the two halves interleaved: pairs (2ℓ, 2ℓ + 1) where the halves layout pairs ℓ with ℓ + d/2 "
                    "(x[..., :d/2] and x[..., d/2:])")
        if order == [i ^ 1 for i in range(n)]:
            return "each pair's two entries swapped (2ℓ + 1 first, then 2ℓ): sine and cosine, or the two coordinates"
        if order == [*range(half, n), *range(half)]:
            return "the two halves swapped: the second half first"
    if n >= 3:
        shift = order[0]
        if shift and order == [(i + shift) % n for i in range(n)]:
            return f"rolled by {shift}: entry i holds the right entry (i + {shift}) mod {n}"
    return None


def _permuted(failed: Sequence[_Failure]) -> str | None:
    """The right entries in another order along one axis, the same order on every failed case."""
    first = failed[0]
    for axis in range(-first.got.dim(), 0):  # reversed first: it holds even where equal slices hide an order
        if all(_close(f.got, f.expected.flip(axis), _ATOL, _RTOL) for f in failed):
            return (f"your answer has the right entries in reverse order along axis {axis}: an index runs backwards "
                    "(a flip, a count from the end, arange(n - 1, -1, -1))")
    for axis in range(-first.got.dim(), 0):
        if first.got.shape[axis] < 2:
            continue
        orders = [_permutation(f.got, f.expected, axis) for f in failed]
        if any(order is None or order == sorted(order) for order in orders):
            continue
        words = [_order_words(order) for order in orders if order is not None]
        if words[0] is not None and all(w == words[0] for w in words):
            return f"your answer has the right entries in another order along axis {axis}: {words[0]}"
        if all(order == orders[0] for order in orders) and orders[0] is not None:
            shown = ", ".join(str(i) for i in orders[0][:8]) + (", ..." if len(orders[0]) > 8 else "")
            return (f"your answer has the right entries in another order along axis {axis}: your entries 0, 1, 2, ... "
                    f"are the right entries {shown}: an index or a layout is permuted")
    return None


def _index_set(indices: list[int], size: int) -> str:
    half = size // 2
    if indices == [0]:
        return "index 0 (the first entry)"
    if indices == [size - 1]:
        return "the last index"
    if size >= 4 and indices == list(range(1, size, 2)):
        return "the odd indices"
    if size >= 4 and indices == list(range(0, size, 2)):
        return "the even indices"
    if size >= 4 and size % 2 == 0 and indices == list(range(half, size)):
        return "the second half"
    if size >= 4 and size % 2 == 0 and indices == list(range(half)):
        return "the first half"
    return f"the indices {_runs_text(indices)}"


def _part(failed: Sequence[_Failure], kind: str) -> str | None:
    """The opposite sign (``kind`` "sign") or 0 (``kind`` "zero") on the same part of one axis, right elsewhere."""
    first = failed[0]
    for axis in range(-first.got.dim(), 0):
        sets: list[tuple[list[int], int]] = []
        for failure in failed:
            got, expected = failure.got.double().movedim(axis, 0), failure.expected.double().movedim(axis, 0)
            target = -expected if kind == "sign" else torch.zeros_like(expected)
            hit: list[int] = []
            for index in range(got.shape[0]):
                if bool(torch.allclose(got[index], expected[index], atol=_ATOL, rtol=_RTOL)):
                    continue
                if not bool(torch.allclose(got[index], target[index], atol=_ATOL, rtol=_RTOL)):
                    hit = []
                    break
                hit.append(index)
            if not hit:
                break
            sets.append((hit, got.shape[0]))
        else:
            parts = {_index_set(*found) for found in sets}
            if len(parts) == 1 and all(len(hit) < size for hit, size in sets):
                part = parts.pop()
                if kind == "sign":
                    return (f"your answer has the opposite sign at {part} along axis {axis}, and is right elsewhere: a "
                            "minus sign slipped into that part of the formula (or is missing there)")
                return (f"your answer is 0 at {part} along axis {axis}, where the right values are not, and right "
                        "elsewhere: a term is missing there, or those entries are never filled")
    return None


def _index_factor(failed: Sequence[_Failure]) -> str | None:
    """``got = f(i) · expected`` with ``f`` depending on the index along one axis only and not constant."""
    first = failed[0]
    for axis in range(-first.got.dim(), 0):
        factors = []
        for failure in failed:
            got, expected = failure.got.double().movedim(axis, 0), failure.expected.double().movedim(axis, 0)
            per_index: list[float] = []
            if got[0].numel() < 2:
                break
            for index in range(got.shape[0]):
                big = expected[index].abs() > 1e-9
                if not bool(big.any()) or not bool((got[index][~big].abs() < 1e-9).all()):
                    per_index = []
                    break
                ratios = got[index][big] / expected[index][big]
                if not bool(torch.allclose(ratios, ratios[0].expand_as(ratios), rtol=_RTOL, atol=1e-9)):
                    per_index = []
                    break
                per_index.append(float(ratios[0]))
            if len(per_index) < 2 or all(math.isclose(f, per_index[0], rel_tol=1e-4) for f in per_index):
                break
            if all(any(math.isclose(f, v, rel_tol=1e-4, abs_tol=1e-12) for v in (0.0, 1.0, -1.0)) for f in per_index):
                break  # factors of 1, 0 and -1: some slices zeroed or negated, which the readings of a part say
            factors.append(per_index)
        else:
            if factors:
                return _factor_words(factors, axis, failed)
    return None


def _factor_words(factors: list[list[float]], axis: int, failed: Sequence[_Failure]) -> str:
    laws = {"1/(i + 1)": lambda i, n: 1 / (i + 1), "i + 1": lambda i, n: i + 1.0, "1/(n - i)": lambda i, n: 1 / (n - i),
            "n - i": lambda i, n: float(n - i), "i": lambda i, n: float(i)}
    for text, law in laws.items():
        if all(all(math.isclose(f, law(i, len(row)), rel_tol=1e-4, abs_tol=1e-12) for i, f in enumerate(row))
               for row in factors):
            if text == "1/(i + 1)":
                return (f"entry i along axis {axis} of your answer is the right one divided by i + 1: an average over "
                        "the first i + 1 entries where their sum is due, or a division by a count")
            return f"entry i along axis {axis} of your answer is the right one times {text}, with n = its length"
    shown = ", ".join(_num(f) for f in factors[0][:6]) + (", ..." if len(factors[0]) > 6 else "")
    sums = failed[0].expected.double().sum(-1)
    normalised = bool(torch.allclose(sums, torch.ones_like(sums), atol=1e-6)) and axis == -2
    tail = (": your rows do not sum to 1, so the normalisation (a softmax, a division by the row's sum) runs over "
            "another set or axis") if normalised else (
        ": something that depends on that index multiplies it (a per-slice constant such as a slope or a scale, a "
        "normalisation or a count): compare what each slice is multiplied by with what it should be")
    return f"each slice i along axis {axis} of your answer is the right one times its own factor ({shown}){tail}"


def _confined(failed: Sequence[_Failure], names: Sequence[str] = ()) -> str | None:
    """The wrong entries all lie in the same part of one axis (the first entry, the odd ones, a half, the first k)."""
    first = failed[0]
    for axis in range(-first.got.dim(), 0):
        found: list[tuple[list[int], int]] = []
        for failure in failed:
            wrong = ~torch.isclose(failure.got.double(), failure.expected.double(), atol=_ATOL, rtol=_RTOL)
            along = wrong.movedim(axis, 0).reshape(wrong.shape[axis], -1).any(-1)
            indices = [int(i) for i in along.nonzero().flatten()]
            if not indices or 2 * len(indices) > along.numel() or along.numel() < 3:
                break
            found.append((indices, along.numel()))
        else:
            parts = {_index_set(*item) for item in found}
            part = parts.pop() if len(parts) == 1 else _counted_part(found, [f.case for f in failed], names)
            if part:
                return (f"your answer is right everywhere except at {part} along axis {axis}, on every failed input: "
                        "that part is computed apart (a special case, an edge, a slice or a loop bound) and "
                        "differently from the rest")
    return None


def _counted_part(found: list[tuple[list[int], int]], cases: list[_Case], names: Sequence[str]) -> str | None:
    """The first (or last) k entries on every case, with k said in the arguments' terms ("the first sinks entries")."""
    for where in ("first", "last"):
        counts = [len(indices) for indices, size in found
                  if indices == (list(range(len(indices))) if where == "first" else list(range(size - len(indices),
                                                                                                 size)))]
        if len(counts) == len(found):
            said = _said([float(count) for count in counts], cases, names)
            if said is not None and not said[0].isdigit():
                return f"the {where} {said} entries"
    return None


# --------------------------------------------------------------------------- 3. a property broken


def _property_reading(failed: Sequence[_Failure], which: str) -> str | None:
    """A property of the expected answer that the answer breaks: a function of j - i, or rows that sum to 1."""
    for failure in failed:
        got, expected = failure.got.double(), failure.expected.double()
        square = got.dim() >= 2 and min(got.shape[-2:]) >= 3
        if which == "toeplitz" and square and _toeplitz(expected) and not _toeplitz(got):
            rows, columns = got.shape[-2:]
            for offset in range(-(rows - 1), columns):
                diagonal = got.diagonal(offset, -2, -1)
                if diagonal.shape[-1] >= 2 and not bool(torch.allclose(diagonal, diagonal[..., :1].expand_as(diagonal),
                                                                        atol=_ATOL, rtol=_RTOL)):
                    return (f"your answer is not a function of j - i (the column minus the row), as it must be: along "
                            f"the diagonal j - i = {offset} its entries differ, so it depends on the positions "
                            "themselves (an absolute index, a clamp or a mask on one axis)")
        if which == "sums" and got.dim() >= 1 and got.shape[-1] >= 2:
            sums = expected.sum(-1)
            mine = got.sum(-1)
            if bool(torch.allclose(sums, torch.ones_like(sums), atol=1e-6)) and not bool(
                    torch.allclose(mine, torch.ones_like(mine), atol=1e-4)):
                index = int(torch.argmax(((mine - 1).abs() > 1e-4).flatten().to(torch.uint8)))
                total = _num(float(mine.flatten()[index]))
                return (f"the rows of your answer do not sum to 1 (row {index} sums to {total}): the normalisation (a "
                        "softmax, a division by a sum) is missing or runs over another axis")
    return None


def _toeplitz(tensor: torch.Tensor) -> bool:
    return bool(torch.allclose(tensor[..., 1:, 1:], tensor[..., :-1, :-1], atol=_ATOL, rtol=_RTOL)) and not bool(
        torch.allclose(tensor, tensor.flatten()[0].expand_as(tensor), atol=1e-9))
