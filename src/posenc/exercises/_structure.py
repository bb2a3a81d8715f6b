"""Structural readings of a wrong answer: where it is wrong, and how it relates to the right one.

Part of the catalogue of ``posenc.exercises._transforms``, read when no transformation of the right answer reproduces
the answer exactly. These readings need no model of the slip: they say what the answer shows on the failed cases, in
the terms of its indices and of the arguments, so that a slip inside a formula (a per-entry rule, a normalisation by
another quantity, a reflection) is still located:

- **the relation to the right answer** (``_relation``, said as exact): the absolute value of the right answer (a sign
  lost where the right value is negative), the right answer clamped at a value, transposed in its last two axes, turned
  by half a turn; a difference that depends on ``j - i`` only (where the right answer does not), or on one index only (a
  term per row or per column, a step ``c·k``);
- **the region of the wrong entries** (``_region``): one diagonal, the entries above or below one, the indices from some
  k on (or the first k) along one axis, the odd or the even ones, the entries where the right value (or an argument of
  the same shape) is negative, positive or beyond a level, the pairs of positions with ``p_j > p_i``; bounds said in the
  arguments' terms where one expression fits every case (``_bound_said``), and what the answer holds there (0, one
  value, the opposite sign, a factor, an offset, the mirror image of the other side);
- **other relations** (``_per_input_constant``, ``_ratio_law``, ``_moved_or_signed``): one factor or one offset per
  input that no expression of the arguments gives (a normalisation by another quantity), a factor of ``j - i``, the
  right values in other places, the right magnitudes with scattered signs;
- **an error that grows with an index** (``_growing_error``): every entry close, the error growing along one axis (a
  precision lost on large values, or a constant slightly off that multiplies the index: both are said);
- **which hidden inputs fail** (``_which_inputs``, for the checkers made of cases): one setting that every failed
  input has and no passed one ("cache_len ≥ 12").

Every sentence is a fact about the failed cases, said only when every failed case shows it; a region right at one entry
only, or only where the right value is 0, is no region (position 0 and pair 0 are right under most slips).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from ._output_readings import _ATOL, _RTOL, _Failure, _said
from ._readings import _Case
from .checking import _num

__all__: list[str] = []


def _near(a: torch.Tensor, b: torch.Tensor, atol: float = _ATOL) -> torch.Tensor:
    return torch.isclose(a.double(), b.double(), atol=atol, rtol=_RTOL)


def _all_near(a: torch.Tensor, b: torch.Tensor, atol: float = _ATOL) -> bool:
    return a.shape == b.shape and bool(_near(a, b, atol).all())


def _wrong(failure: _Failure) -> torch.Tensor:
    return ~_near(failure.got, failure.expected, failure.atol)


# --------------------------------------------------------------------------- the relation to the right answer


def _relation(failed: Sequence[_Failure], names: Sequence[str]) -> str | None:
    """An exact relation of the answer to the right one that is no transformation of the catalogue."""
    if all(_all_near(f.got, f.expected.abs(), f.atol) for f in failed):
        return ("your answer is the absolute value of the right one, on every failed input: right where the right "
                "value is positive, its opposite where it is negative: an abs() (or |j - i|, a distance) where the "
                "sign must be kept")
    if all(_all_near(f.got, -f.expected.abs(), f.atol) for f in failed):
        return ("your answer is minus the absolute value of the right one, on every failed input: right where the "
                "right value is negative, its opposite where it is positive: a -|...| (a distance) where a signed "
                "value belongs")
    clamp = _clamp(failed, names)
    if clamp:
        return clamp
    if all(f.got.dim() >= 2 and f.got.shape[-1] == f.got.shape[-2]
           and _all_near(f.got, f.expected.transpose(-2, -1), f.atol) for f in failed):
        return ("your answer is the right one transposed, on every failed input: entry (i, j) holds the right value of "
                "(j, i): the row index and the column index (a query and a key, i and j) are used in each other's "
                "place, or the result is built the other way round and needs .transpose(-2, -1)")
    if all(f.got.dim() >= 2 and _all_near(f.got, f.expected.flip(-2, -1), f.atol) for f in failed):
        return ("your answer is the right one turned by half a turn, on every failed input: entry (i, j) holds the "
                "right value of (n - 1 - i, m - 1 - j): both indices run backwards")
    return _law_of_difference(failed)


def _per_input_constant(failed: Sequence[_Failure]) -> str | None:
    """One factor (or one offset) on every entry of a failed case, a number that is not one expression of the cases.

    Each case must have at least two distinct right values, so that a constant is evidence (any wrong number is a
    constant times the right one), and the right answer must not be a constant times an argument (rows decayed by one
    factor: any wrong factor is a constant per input, and says nothing more).
    """
    factors, offsets = [], []
    for failure in failed:
        got, expected = failure.got.double().flatten(), failure.expected.double().flatten()
        for value in failure.case.args:
            if isinstance(value, torch.Tensor) and value.numel() == expected.numel() and value.is_floating_point():
                base = value.double().flatten()
                if bool((base.abs() > 1e-12).all()) and float((expected / base).std()) < 1e-9:
                    return None
        nonzero = expected.abs() > 1e-12
        if len(set(expected[nonzero].tolist())) < 2:
            return None
        ratio = got[nonzero] / expected[nonzero]
        zeros_kept = bool((got[~nonzero].abs() <= failure.atol).all())
        factors.append(float(ratio[0]) if zeros_kept and bool(torch.allclose(
            ratio, ratio[:1].expand_as(ratio), rtol=_RTOL, atol=0.0)) else None)
        offset = got - expected
        offsets.append(float(offset[0]) if bool(torch.allclose(offset, offset[:1].expand_as(offset), atol=failure.atol,
                                                               rtol=0.0)) else None)
    scaled = [f for f in factors if f is not None]
    moved = [o for o in offsets if o is not None]
    if len(scaled) == len(failed) and all(math.isclose(f, scaled[0], rel_tol=_RTOL) for f in scaled):
        return (f"your answer is {_num(scaled[0])} times the right one on every entry of every failed input (no simple "
                "number or expression of the arguments): a factor that should not be there, or a wrong one (a "
                "normalisation, a division or a scale)")
    if len(scaled) == len(failed):
        return (f"your answer is the right one times one constant per input ({', '.join(map(_num, scaled[:4]))}, from "
                "the first failed input on): every entry of an input is scaled alike, by a number that changes with "
                "the input: a factor that should not be there, or a wrong one (a normalisation, a division or a "
                "scale by a quantity of the input)")
    if len(moved) == len(failed):
        return (f"your answer is the right one plus one constant per input ({', '.join(map(_num, moved[:4]))}, from "
                "the first failed input on): every entry of an input is moved alike, by a number that changes with the "
                "input: a term added (or missing) that depends on the input as a whole")
    return None


def _clamp(failed: Sequence[_Failure], names: Sequence[str]) -> str | None:
    """The right answer clamped from below or above at one value per case, with at least two entries changed."""
    for side in ("below", "above"):
        limits, passed_through = [], False
        for failure in failed:
            wrong = _wrong(failure)
            if int(wrong.sum()) < 2 or bool(wrong.all()):  # one entry, or every entry: no clamp can be told
                return None
            held = failure.got.double()[wrong]
            limit = float(held[0])
            if not bool(torch.allclose(held, torch.full_like(held, limit), atol=_ATOL, rtol=_RTOL)):
                return None
            clamped = failure.expected.double().clamp(**({"min": limit} if side == "below" else {"max": limit}))
            if not _all_near(failure.got, clamped, failure.atol):
                break
            limits.append(limit)
            # A clamp is seen only where a right value beyond the limit came through unchanged; if none did, every
            # wrong entry merely equals the largest (smallest) right one, which many slips give.
            beyond = failure.expected.double()[~wrong]
            free = beyond > limit + _ATOL if side == "below" else beyond < limit - _ATOL
            passed_through |= bool(free.any())
        else:
            if not passed_through:
                continue
            said = _said(limits, [f.case for f in failed], names) or ", ".join(_num(v) for v in limits[:3])
            bound = "below" if side == "below" else "above"
            return (f"your answer is the right one clamped at {said}: every right value {bound} {said} became {said} "
                    "and the others are right, on every failed input: a clamp, a max/min or a limit that the formula "
                    "does not have (or at another value)")
    return None


def _law_of_difference(failed: Sequence[_Failure]) -> str | None:
    """The difference to the right answer is a function of ``j - i`` only, or of one index only (not a constant)."""
    differences = [f.got.double() - f.expected.double() for f in failed]
    if not all(d.dim() >= 1 and d.shape[-1] >= 2 for d in differences):
        return None
    for axis in range(-differences[0].dim(), 0):
        if not all(d.dim() == differences[0].dim() and d.shape[axis] >= 2 and _depends_on_axis_only(d, axis)
                   for d in differences):
            continue
        word = {-2: "row", -1: "column"}.get(axis, f"axis {axis}") if differences[0].dim() >= 2 else "entry"
        rows = [d.movedim(axis, -1).reshape(-1, d.shape[axis])[0] for d in differences]
        shown = ", ".join(_num(float(v)) for v in rows[0][:6]) + (", ..." if rows[0].numel() > 6 else "")
        slopes = [float(row[1] - row[0]) for row in rows]
        linear = all(bool(torch.allclose(row, row[0] + slope * torch.arange(row.numel(), dtype=torch.float64),
                                         atol=_ATOL, rtol=_RTOL)) for row, slope in zip(rows, slopes, strict=True))
        same = linear and all(math.isclose(v, slopes[0], rel_tol=_RTOL) for v in slopes) and all(
            math.isclose(float(row[0]), float(rows[0][0]), rel_tol=_RTOL, abs_tol=_ATOL) for row in rows)
        if not same and any(d.numel() == d.shape[axis] for d in differences):
            continue  # with no other axis, any difference depends on this index alone: only a linear law says more
        law = ""
        if same:
            start = float(rows[0][0])
            law = (f": exactly {_num(slopes[0])}·k" + (f" + {_num(start)}" if abs(start) > _ATOL else "")
                   + " at index k, a step (a spacing, a stride, a slope) off by " + _num(slopes[0]))
        where = {"row": "the row index (axis -2)", "column": "the column index (axis -1)", "entry": "the index"}.get(
            word, f"the index along {word}")
        return (f"your answer is off by an amount that depends only on {where} ({shown} at indices 0, 1, ... of the "
                f"first failed input{law}): a term that depends on that index alone is wrong, added or missing")
    # A difference of two functions of j - i is one too: the law says something only where the right answer is not.
    if all(d.dim() >= 2 and min(d.shape[-2:]) >= 2 and _toeplitz(d) for d in differences) and not all(
            _toeplitz(f.expected.double()) for f in failed):
        d = differences[0].reshape(-1, *differences[0].shape[-2:])[0]
        offsets = range(-(d.shape[0] - 1), d.shape[1])
        values = {k: float(d.diagonal(k)[0]) for k in offsets}
        slope = values.get(1, 0.0) - values.get(0, 0.0)
        linear = all(math.isclose(v, values[0] + slope * k, rel_tol=_RTOL, abs_tol=_ATOL) for k, v in values.items())
        shown = ", ".join(f"{_num(values[k])} at j - i = {k}" for k in list(offsets)[:5])
        law = (f": exactly {_num(slope)}·(j - i)" + (f" + {_num(values[0])}" if abs(values[0]) > _ATOL else "")
               if linear else "")
        return (f"your answer is off by an amount that depends on j - i only ({shown}, ...{law}), on every failed "
                "input: a term of your formula in the offset j - i is wrong, added or missing")
    return None


def _ratio_law(failed: Sequence[_Failure]) -> str | None:
    """The answer is the right one times a factor that depends on ``j - i`` only (not a constant)."""
    ratios = []
    for failure in failed:
        expected = failure.expected.double()
        if expected.dim() < 2 or min(expected.shape[-2:]) < 2 or not bool((expected.abs() > 1e-9).all()):
            return None
        ratios.append(failure.got.double() / expected)
    if not all(_toeplitz(r) for r in ratios):
        return None
    ratio = ratios[0].reshape(-1, *ratios[0].shape[-2:])[0]
    shown = ", ".join(f"{_num(float(ratio.diagonal(k)[0]))} at j - i = {k}"
                      for k in range(-(ratio.shape[0] - 1), ratio.shape[1])[:5])
    return (f"your answer is the right one times a factor that depends on j - i only ({shown}, ...), on every failed "
            "input: a factor of your formula that depends on the offset j - i is wrong, added or missing")


def _depends_on_axis_only(d: torch.Tensor, axis: int) -> bool:
    """Whether ``d`` is constant along every axis but ``axis`` (within the tolerance), and not constant."""
    moved = d.movedim(axis, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    if not bool(torch.allclose(flat, flat[:1].expand_as(flat), atol=_ATOL, rtol=_RTOL)):
        return False
    return not bool(torch.allclose(flat[0], flat[0, :1].expand_as(flat[0]), atol=_ATOL, rtol=_RTOL))


def _toeplitz(d: torch.Tensor) -> bool:
    constant = bool(torch.allclose(d, d.flatten()[0].expand_as(d), atol=_ATOL, rtol=_RTOL))
    return not constant and bool(torch.allclose(d[..., 1:, 1:], d[..., :-1, :-1], atol=_ATOL, rtol=_RTOL))


# --------------------------------------------------------------------------- the region of the wrong entries

def _regions(failure: _Failure, names: Sequence[str]) -> dict[str, tuple[str, float]]:
    """The regions of one failed case that hold exactly its wrong entries, each said in words.

    Each family (a diagonal, the entries above one, an index from some k on along an axis, a parity, a sign or a level
    of the right value or of an argument of the same shape) has one candidate that can fit: the one whose bound is read
    off the wrong entries; it is kept when its mask is exactly the wrong entries.
    """
    wrong = _wrong(failure)
    shape = wrong.shape
    found: dict[str, tuple[str, float]] = {}  # family -> (words with {k} for the bound, the bound)

    def fits(family: str, words: str, mask: torch.Tensor, bound: float = 0.0,
             against: torch.Tensor | None = None) -> None:
        target = wrong if against is None else against  # the wrong entries, or the indices along an axis that hold one
        if family not in found and torch.equal(mask.expand(target.shape), target):
            found[family] = (words, bound)

    if wrong.dim() >= 2 and min(shape[-2:]) >= 2:
        offset = torch.arange(shape[-1])[None, :] - torch.arange(shape[-2])[:, None]
        seen = offset.expand(shape)[wrong]
        low, high = int(seen.min()), int(seen.max())
        if low == high:
            fits("diagonal", "the diagonal column - row = {k} of the last two axes", offset == low, low)
        above = ", above the diagonal" if low == 1 else ""
        fits("above", "the entries with column - row ≥ {k} (last two axes" + above + ")", offset >= low, low)
        below = ", below the diagonal" if high == -1 else ""
        fits("below", "the entries with column - row ≤ {k} (last two axes" + below + ")", offset <= high, high)
    sources = [(name, value.double()) for name, value in zip(names, failure.case.args, strict=False)
               if isinstance(value, torch.Tensor) and value.shape == shape and not value.is_complex()
               and value.dtype != torch.bool]
    sources.append(("the right value", failure.expected.double()))
    if wrong.dim() >= 2 and shape[-1] == shape[-2]:  # positions, one per row and one per column
        for name, value in zip(names, failure.case.args, strict=False):
            if "position" in name and isinstance(value, torch.Tensor) and value.dim() == 1 and (
                    value.shape[0] == shape[-1] and value.dtype != torch.bool and not value.is_complex()):
                gap = (value.double()[None, :] - value.double()[:, None]).expand(shape)
                seen = gap[wrong]
                fits(f"pair > {name}", f"the pairs with {name}[j] > {name}[i] (column j after row i)", gap > 0)
                fits(f"pair < {name}", f"the pairs with {name}[j] < {name}[i] (column j before row i)", gap < 0)
                fits(f"pair = {name}", f"the pairs with {name}[j] = {name}[i]", gap == 0)
                level = float(seen.abs().min())
                if level > 0:
                    far = f"the pairs with |{name}[j] - {name}[i]| ≥ {{k}}"
                    fits(f"pair || {name}", far, gap.abs() >= level, level)
    for name, value in sources:
        seen = value[wrong]
        fits(f"< 0 {name}", f"the entries where {name} is negative", value < 0)
        fits(f"> 0 {name}", f"the entries where {name} is positive", value > 0)
        fits(f"= 0 {name}", f"the entries where {name} is 0", value == 0)
        fits(f"!= 0 {name}", f"the entries where {name} is not 0", value != 0)
        level = float(seen.abs().min())
        if level > 0 and bool((value < 0).any()):  # |v| ≥ t is v ≥ t when no value is negative
            fits(f"|| {name}", f"the entries where |{name}| ≥ {{k}}", value.abs() >= level, level)
        fits(f">= {name}", f"the entries where {name} ≥ {{k}}", value >= float(seen.min()), float(seen.min()))
        fits(f"<= {name}", f"the entries where {name} ≤ {{k}}", value <= float(seen.max()), float(seen.max()))
    # Along one axis, a region is a set of indices: each of them holds a wrong entry, every other index none (an index
    # may also hold right entries, a coordinate the slip leaves as it was).
    for axis in range(-wrong.dim(), 0):
        size = shape[axis]
        if size < 3:
            continue
        along = wrong.movedim(axis, 0).reshape(size, -1).any(-1)
        index = torch.arange(size)
        seen = index[along]
        low, high = int(seen.min()), int(seen.max())
        # Right at one index only (often index 0, a trivial case: position 0, a frequency of 1) is no region, nor right
        # at the first pair of coordinates only (pair 0 turns at θ_0 = 1 in every ladder, whatever the slip).
        if low >= 2 and not (axis == -1 and low == 2 and size % 2 == 0 and wrong.dim() >= 2):
            fits(f"from {axis}", f"the indices from {{k}} on along axis {axis}", index >= low, low, along)
        if high <= size - 3:
            first = (f"index 0 along axis {axis} (the first entry only)" if high == 0 else
                     f"the first {{k}} indices along axis {axis}")
            fits(f"to {axis}", first, index <= high, high + 1, along)
        if size >= 4:
            fits(f"odd {axis}", f"the odd indices along axis {axis}", index % 2 == 1, 0.0, along)
            fits(f"even {axis}", f"the even indices along axis {axis}", index % 2 == 0, 0.0, along)
    return found


def _region(failed: Sequence[_Failure], names: Sequence[str]) -> str | None:
    """The one region that holds exactly the wrong entries of every failed case, said with what the answer holds there.

    A region is one of a family (the entries from index k on along an axis): the members may differ from case to case
    (k an argument), and are then said with their numbers per case. The wrong entries must fill the region
    exactly, and leave part of the answer right.
    """
    per_case: list[dict[str, tuple[str, float]]] = []
    for failure in failed:
        wrong = _wrong(failure)
        if bool(wrong.all()) or not bool(wrong.any()):
            return None
        if int((~wrong & (failure.expected.abs() > 1e-12)).sum()) < 2:
            # Right only where the right value is 0 (a masked part), or at one entry (often a trivial one: position 0,
            # a frequency of 1 in any ladder): wrong everywhere that counts, no region.
            return None
        per_case.append(_regions(failure, names))
    families = [family for family in per_case[0] if all(family in found for found in per_case)]
    if not families:
        return None
    said = []
    argument = [name for name in names if any(family.endswith(f" {name}") for family in families)]
    if argument:  # a region of an argument's values says more than indices do
        families = [family for family in families if not family.startswith(("from", "to", "odd", "even"))]
    cases = [failure.case for failure in failed]
    for family in families[:2]:  # two regions that fit every case are both said: the inputs cannot tell them apart
        words = per_case[0][family][0]
        bounds = [found[family][1] for found in per_case]
        if all(bound == bounds[0] for bound in bounds):
            said.append(words.format(k=_num(bounds[0])))
            continue
        expression = _bound_said(bounds, cases, names) if all(bound == int(bound) for bound in bounds) else None
        if expression is not None and not expression[0].isdigit():
            said.append(words.format(k=expression))
        else:
            others = ", ".join(dict.fromkeys(_num(bound) for bound in bounds[1:]))
            said.append(f"{words.format(k=_num(bounds[0]))} on the first failed input ({others} on the others)")
    where = said[0] if len(said) == 1 else f"{said[0]} (equally: {said[1]})"
    return (f"your answer is wrong only at {where}, and right everywhere else, on every failed input"
            f"{_held(failed)}: your formula goes wrong there only, so look at what it computes for those entries and "
            "not for the others")


def _bound_said(bounds: list[float], cases: list[_Case], names: Sequence[str]) -> str | None:
    """Integer bounds, one per case, said in the arguments' terms: one number (``_said``) or a difference of two sizes.

    The differences are of two integer arguments (``k_len - q_len``) or of a tensor's last two axes (``Lk - Lq``), give
    or take 2; said only when one expression fits every case.
    """
    single = _said(bounds, cases, names)
    if single is not None and not single[0].isdigit():
        return single

    def sizes(case: _Case) -> dict[str, float]:
        found = {}
        items = [*zip(names, case.args, strict=False), *(case.kwargs or {}).items()]
        integers = [(name, float(v)) for name, v in items if isinstance(v, int) and not isinstance(v, bool)]
        for first, a in integers:
            found[f"{first}/4"] = a / 4  # a quarter: half the pairs, d/4 of the coordinates
            for second, b in integers:
                if first != second:
                    found[f"{first} - {second}"] = a - b
        for name, v in items:
            if isinstance(v, torch.Tensor) and v.dim() >= 2:
                found[f"{name}.shape[-1] - {name}.shape[-2]"] = float(v.shape[-1] - v.shape[-2])
        return found

    tables = [sizes(case) for case in cases]
    for text in tables[0]:
        for shift in (0, -1, 1, -2, 2):
            if all(text in table and table[text] + shift == bound for table, bound in zip(tables, bounds, strict=True)):
                return text if shift == 0 else f"{text} {'+' if shift > 0 else '-'} {abs(shift)}"
    return None


def _held(failed: Sequence[_Failure]) -> str:
    """What the answer holds on its wrong entries, when one description fits every failed case."""
    held = [(f.got.double()[_wrong(f)], f.expected.double()[_wrong(f)], f) for f in failed]
    if all(bool((got.abs() <= _ATOL).all()) for got, _, _ in held):
        return " (there your answer is 0)"
    if all(bool(torch.allclose(got, -expected, atol=_ATOL, rtol=_RTOL)) for got, expected, _ in held):
        return " (there your answer has the opposite sign)"
    values = [float(got[0]) for got, _, _ in held]
    if all(bool(torch.allclose(got, torch.full_like(got, v), atol=_ATOL, rtol=_RTOL))
           for (got, _, _), v in zip(held, values, strict=True)) and all(int(g.numel()) >= 2 for g, _, _ in held):
        return f" (there your answer holds {_num(values[0])} everywhere)"
    if all(bool((expected.abs() > 1e-9).all()) for _, expected, _ in held):
        ratios = [got / expected for got, expected, _ in held]
        if all(bool(torch.allclose(r, r[:1].expand_as(r), rtol=_RTOL, atol=1e-9)) for r in ratios):
            return f" (there your answer is {_num(float(ratios[0][0]))} times the right one)"
    offsets = [got - expected for got, expected, _ in held]
    if all(bool(torch.allclose(o, o[:1].expand_as(o), atol=_ATOL, rtol=0.0)) for o in offsets):
        return f" (there your answer is the right one plus {_num(float(offsets[0][0]))})"
    if all(f.got.dim() >= 2 and f.got.shape[-1] == f.got.shape[-2] and bool(
            _near(f.got, f.expected.transpose(-2, -1), f.atol)[_wrong(f)].all()) for f in failed):
        return " (there entry (i, j) holds the right value of (j, i): the mirror image of the other side)"
    return ""


def _moved_or_signed(failed: Sequence[_Failure]) -> str | None:
    """The right values in other places, or the right magnitudes with some signs flipped, on every failed case."""
    if all(f.got.numel() >= 4 and _all_near(f.got.flatten().sort().values, f.expected.flatten().sort().values,
                                             f.atol) for f in failed):
        moved = [int(_wrong(f).sum()) for f in failed]
        return (f"your answer holds exactly the right values, but {moved[0]} of its {failed[0].got.numel()} entries "
                "hold a value that belongs elsewhere (on the first failed input): an index is wrong (a position, a "
                "row or a column read from the wrong place), not the values themselves")
    if all(_all_near(f.got.abs(), f.expected.abs(), f.atol) for f in failed):
        flipped = [int(_wrong(f).sum()) for f in failed]
        return (f"your answer has the right magnitudes everywhere, but {flipped[0]} of its {failed[0].got.numel()} "
                "entries have the opposite sign (on the first failed input): a sign that depends on the entry (a "
                "difference taken the other way round, a sine of the opposite angle) is wrong there")
    return None


# --------------------------------------------------------------------------- an error that grows with an index


def _growing_error(failed: Sequence[_Failure]) -> str | None:
    """Close to the right answer everywhere, with an error that grows with the index along one axis."""
    for axis in range(-failed[0].got.dim(), 0):
        ends = []
        for failure in failed:
            error = (failure.got.double() - failure.expected.double()).abs()
            scale = float(failure.expected.double().abs().max())
            size = error.shape[axis]
            # Close entry by entry: tiny right values (slow frequencies) far off are no precision question.
            wrong = _wrong(failure)
            relative = error[wrong] / failure.expected.double().abs()[wrong]
            if scale == 0 or not bool(wrong.any()) or float(relative.median()) > 0.05:
                return None
            if size < 4:
                break
            per = error.movedim(axis, 0).reshape(size, -1).amax(-1)
            quarter = max(size // 4, 1)
            # Rounding errors scatter: the quarters' means, not single entries, show a growth (7 times if linear).
            start, end = float(per[:quarter].mean()), float(per[-quarter:].mean())
            if end < 3 * max(start, _ATOL / 10) or not bool(_wrong(failure).movedim(axis, 0)[-quarter:].any()):
                break
            ends.append((start, end))
        else:
            start, end = max(s for s, _ in ends), max(e for _, e in ends)
            return (f"your answer is close to the right one, but its error grows with the index along axis {axis} "
                    f"({end:.1e} on average over the last quarter, {start:.1e} over the first), on every failed input: "
                    "a precision lost on large values (positions or angles in float32 or float16: compute them in "
                    "float64), or a constant slightly off that multiplies the index")
    return None


# --------------------------------------------------------------------------- which hidden inputs fail


def _features(case: _Case, names: Sequence[str]) -> dict[str, object]:
    """What may set a case apart, by name: its scalar arguments, and its tensors' dtypes, ranks, sizes and, for
    positions and integers, largest magnitude (far positions)."""
    found: dict[str, object] = {}
    for name, value in [*zip(names, case.args, strict=False), *(case.kwargs or {}).items()]:
        if isinstance(value, (bool, int, float)):
            found[name] = value
        elif isinstance(value, torch.Tensor) and value.numel():
            found[f"{name}.dtype"] = str(value.dtype).replace("torch.", "")
            found[f"{name}.dim()"] = value.dim()
            for axis in (-1, -2)[: value.dim()]:
                found[f"{name}.shape[{axis}]"] = value.shape[axis]
            if "position" in name or not (value.is_floating_point() or value.is_complex() or value.dtype == torch.bool):
                found[f"{name}.abs().max()"] = float(value.abs().max())  # far positions, large ids (not random data)
    return found


def _which_inputs(failed: Sequence[_Case], passed: Sequence[_Case], names: Sequence[str]) -> str | None:
    """A property that every failed hidden input has and no passed one has: a threshold or one value of a feature.

    Said only with at least two cases on each side and when one feature alone sets them apart (two that do are a
    coincidence of few cases); None otherwise.
    """
    if (ranks := _which_ranks(failed, passed, names)) is not None:
        return ranks
    if len(failed) < 2 or len(passed) < 2:  # one case on either side is set apart by almost any feature
        return None
    bad = [_features(case, names) for case in failed]
    good = [_features(case, names) for case in passed]
    said: list[str] = []
    for feature in bad[0]:
        if not all(feature in each for each in (*bad, *good)):
            continue
        mine, theirs = [each[feature] for each in bad], [each[feature] for each in good]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (*mine, *theirs)):
            low, high = [float(v) for v in mine], [float(v) for v in theirs]  # type: ignore[arg-type]
            if min(low) > max(high):
                said.append(f"{feature} ≥ {_num(min(low))}")
                continue
            if max(low) < min(high):
                said.append(f"{feature} ≤ {_num(max(low))}")
                continue
        if len(set(map(str, mine))) == 1 and str(mine[0]) not in set(map(str, theirs)):
            said.append(f"{feature} = {mine[0]}")
    if len(said) != 1:  # two features that set the same cases apart: the cases cannot tell which one matters
        return None
    return f"the failed hidden inputs are exactly those with {said[0]}; the {len(passed)} others passed"


def _which_ranks(failed: Sequence[_Case], passed: Sequence[_Case], names: Sequence[str]) -> str | None:
    """The failed inputs set apart by their number of axes: an axis counted from the front.

    The hidden inputs vary the number of leading axes on purpose, so one failed case whose tensor has a number of
    axes no passed case has (with at least two passed) is evidence enough.
    """
    if not failed or len(passed) < 2:
        return None
    for name in names:
        bad = {_rank(case, name, names) for case in failed}
        good = {_rank(case, name, names) for case in passed}
        if None in bad or None in good or bad & good:
            continue
        shown = " or ".join(str(rank) for rank in sorted(bad))  # type: ignore[type-var]
        others = " or ".join(str(rank) for rank in sorted(good))  # type: ignore[type-var]
        return (f"the failed hidden inputs are exactly those whose {name} has {shown} axes (the {len(passed)} that "
                f"passed have {others}): a step that depends on the number of leading axes, usually an axis counted "
                "from the front (dim=1, shape[1], x[:, a:b]) that is the right one at one rank only; count axes from "
                "the end (dim=-3, shape[-2], x[..., a:b, :]), so that leading batch axes may be there or not")
    return None


def _rank(case: _Case, name: str, names: Sequence[str]) -> int | None:
    values = dict(zip(names, case.args, strict=False)) | (case.kwargs or {})
    value = values.get(name)
    return value.dim() if isinstance(value, torch.Tensor) else None
