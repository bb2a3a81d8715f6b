"""Checker of chapter 8's learned table past its last row (ex-trained-2).

:func:`~posenc.exercises.check_extended_rows`: position vectors for ``0, ..., L'-1`` from an
``(L, D)`` table by clipping, copying rows periodically, or linear interpolation at
``m (L - 1)/(L' - 1)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from .checking import CheckResult, _public
from .comparing import _Case, _Mistake, _simple_checker

__all__ = ["check_extended_rows"]


def reference_extended_rows(table, length, option):
    """Rows for positions 0..length-1: "clip", "copy" (m mod L) or "interpolate" (at m (L-1)/(length-1))."""
    rows = table.shape[0]
    if option == "clip":
        return table[torch.arange(length).clamp(max=rows - 1)]
    if option == "copy":
        return table[torch.arange(length) % rows]
    where = torch.linspace(0, rows - 1, length, dtype=torch.float64)
    low = where.floor().long().clamp(max=rows - 2)
    fraction = (where - low).to(table.dtype)[:, None]
    return (1 - fraction) * table[low] + fraction * table[low + 1]


def _interpolate(table, length, where, swap=False):
    rows = table.shape[0]
    where = where.double()
    low = where.floor().long().clamp(max=rows - 2)
    fraction = (where - low)[:, None]
    if swap:
        fraction = 1 - fraction
    t = table.double()
    return (1 - fraction) * t[low] + fraction * t[low + 1]


def _variant(table, length, option, copy=None, interpolate=None):
    if option == "copy" and copy is not None:
        return copy(table, length)
    if option == "interpolate" and interpolate is not None:
        return interpolate(table, length)
    return reference_extended_rows(table.double(), length, option)


_ROWS_MISTAKES = [
    _Mistake("rows copy clipped", "your \"copy\" clips to the last row: copying reads row m mod L, so position L "
             "reads row 0 again",
             lambda t, n, o: _variant(t, n, o, copy=lambda t_, n_: t_.double()[
                 torch.arange(n_).clamp(max=len(t_) - 1)])),
    _Mistake("rows interpolate bound", "your interpolation points run from 0 to L (m L/(L'-1), or linspace(0, L, "
             "L')): the last position must land on the last row, L - 1, so they run from 0 to L - 1",
             lambda t, n, o: _variant(t, n, o, interpolate=lambda t_, n_: _interpolate(
                 t_, n_, torch.linspace(0, len(t_), n_, dtype=torch.float64)))),
    _Mistake("rows interpolate ratio", "your interpolation points are m L/L' (the ratio of the lengths): the "
             "exercise squeezes 0..L'-1 onto 0..L-1, at m (L - 1)/(L' - 1)",
             lambda t, n, o: _variant(t, n, o, interpolate=lambda t_, n_: _interpolate(
                 t_, n_, torch.arange(n_, dtype=torch.float64) * len(t_) / n_))),
    _Mistake("rows nearest", "your interpolation reads the nearest row: blend the two neighbouring rows "
             "linearly, (1 - f) row[⌊x⌋] + f row[⌊x⌋ + 1]",
             lambda t, n, o: _variant(t, n, o, interpolate=lambda t_, n_: t_.double()[
                 torch.linspace(0, len(t_) - 1, n_, dtype=torch.float64).round().long()])),
    _Mistake("rows floor", "your interpolation reads the row below (⌊x⌋) without blending: add the fraction f of "
             "the next row, (1 - f) row[⌊x⌋] + f row[⌊x⌋ + 1]",
             lambda t, n, o: _variant(t, n, o, interpolate=lambda t_, n_: t_.double()[
                 torch.linspace(0, len(t_) - 1, n_, dtype=torch.float64).floor().long()])),
    _Mistake("rows weights swapped", "your interpolation weights are swapped: the row below gets 1 - f and the row "
             "above f, where f is the fractional part",
             lambda t, n, o: _variant(t, n, o, interpolate=lambda t_, n_: _interpolate(
                 t_, n_, torch.linspace(0, len(t_) - 1, n_, dtype=torch.float64), swap=True))),
    *(_Mistake("rows one option", f"your rows are those of {fixed!r} whatever the option: the option argument never "
               "reaches its own branch: it is ignored, or a condition is always true, as option == 'a' or 'b' is "
               "(a non-empty string is true: write option in ('a', 'b'))",
               lambda t, n, o, fixed=fixed: reference_extended_rows(t.double(), n, fixed))
      for fixed in ("clip", "copy", "interpolate")),
    _Mistake("rows copy repeat", "your \"copy\" repeats each row (repeat_interleave): copying tiles the whole "
             "table, row m mod L",
             lambda t, n, o: _variant(t, n, o, copy=lambda t_, n_: t_.double()[
                 torch.arange(len(t_)).repeat_interleave(-(-n_ // len(t_)))[:n_]])),
]


def _reading(row: torch.Tensor, table: torch.Tensor) -> float | None:
    """Where in the table ``row`` was read: k for row k, k + f for (1 - f) row k + f row k + 1, else None."""
    for k in range(table.shape[0] - 1):
        step = table[k + 1] - table[k]
        f = float(((row - table[k]) @ step) / (step @ step))
        if -1e-6 <= f <= 1 + 1e-6 and torch.allclose(row, table[k] + f * step, atol=1e-5):
            return k + f
    return None


def _rows_property(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
    """Which point of the table each wrong position reads, against the rule of its option."""
    table, length, option = case.args
    table = table.double()
    rules = {"clip": "min(m, L - 1)", "copy": "m mod L", "interpolate": "m (L - 1) / (length - 1)"}
    law = _read_law(got, table, length) if got.shape[0] == length else None
    if law is not None and law != rules[option]:
        return (f"every position m of yours reads the table at {law}, where {option!r} reads it at {rules[option]} "
                f"(L = {table.shape[0]} rows, length = {length})")
    for m in range(min(length, got.shape[0])):
        if torch.allclose(got[m], expected[m], atol=1e-5):
            continue
        should = _reading(expected[m], table)
        read = _reading(got[m], table)
        if read is None or should is None:
            return (f"your position m = {m} is not a row of the table nor a blend of two neighbouring rows: "
                    f"{option!r} reads the table at {rules[option]}")
        return (f"your position m = {m} reads the table at {_shown(read)}, where {option!r} reads it at "
                f"{rules[option]} = {_shown(should)} (L = {table.shape[0]} rows, length = {length})")
    return None


def _read_law(got: torch.Tensor, table: torch.Tensor, length: int) -> str | None:
    """The rule by which the answer reads the table, when every position reads one point of it by one simple rule."""
    read = [_reading(row, table) for row in got.double()]
    if any(where is None for where in read):
        return None
    rows = table.shape[0]
    laws = {"min(m, L - 1)": lambda m: min(m, rows - 1), "m mod L": lambda m: m % rows,
            "m (L - 1) / (length - 1)": lambda m: m * (rows - 1) / (length - 1),
            "m // L (a floor division where the remainder m mod L belongs)": lambda m: m // rows,
            "m mod (L - 1)": lambda m: m % (rows - 1), "min(m, L - 2)": lambda m: min(m, rows - 2),
            "m L / (length - 1), up to the last row (the points run to L, not L - 1)":
                lambda m: min(m * rows / (length - 1), rows - 1),
            "m L / length, up to the last row (the ratio of the lengths)": lambda m: min(m * rows / length, rows - 1),
            "m (L - 1) / length (the points stop short of the last row)": lambda m: m * (rows - 1) / length,
            "L - 1 - m (L - 1) / (length - 1) (the points run backwards)":
                lambda m: rows - 1 - m * (rows - 1) / (length - 1)}
    for text, rule in laws.items():
        if all(abs(where - rule(m)) < 1e-6 for m, where in enumerate(read)):  # type: ignore[operator]
            return text
    return None


def _shown(where: float) -> str:
    return f"row {round(where)}" if abs(where - round(where)) < 1e-6 else f"x = {where:.4g} (between rows " \
        f"{int(where)} and {int(where) + 1})"


def _rows_cases(generator: torch.Generator) -> list[_Case]:
    cases = []
    for rows, width, length in [(8, 4, 16), (5, 3, 23), (16, 2, 64)]:
        table = torch.randn(rows, width, generator=generator)
        for option in ("clip", "copy", "interpolate"):
            cases.append(_Case((table, length, option), f"fn(table: ({rows}, {width}), "
                f"length={length}, option={option!r})"))
    return cases


@_public
def check_extended_rows(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(table, length, option)``: ``(length, D)`` position vectors from an ``(L, D)`` table.

    ``option`` is ``"clip"`` (row ``min(m, L-1)``), ``"copy"`` (row ``m mod L``) or ``"interpolate"``
    (linear interpolation at ``m (L-1)/(length-1)``), within 1e-5. Named mistakes: copy clipped or
    repeated, interpolation points with the wrong bound or ratio, nearest or lower row, weights swapped.
    Any other wrong position is described by the point of the table it reads (a row, or a blend of
    two rows) against the rule of its option.
    """
    return _simple_checker(
        "learned table past its last row", fn, _rows_cases, reference_extended_rows, _ROWS_MISTAKES,
        ["clip, copy and interpolate are right for 3 hidden tables and lengths"],
        what="the rows", atol=1e-5, properties=[_rows_property], sizes=_rows_sizes,
    )


def _rows_sizes(shape: tuple[int, ...], case: _Case) -> str | None:
    """A number of rows that is a multiple of the table's: whole copies, the remainder missing."""
    table, length, _ = case.args
    rows = table.shape[0]
    if not shape or shape[0] == length or shape[0] % rows:
        return None
    return (f"your {shape[0]} rows are {shape[0] // rows} whole copies of the {rows}-row table: the last length mod L "
            f"= {length % rows} rows are missing; index the table with arange(length) % L instead of repeating it")
