"""Checker of the 2-D RoPE exercise: axial rotary embedding on a grid of patches.

:func:`~posenc.exercises.check_apply_rope_2d` compares the student's rotation with
:func:`posenc.rope2d.apply_rope_2d` and recognises both halves rotated by the same positions, rows and columns
swapped, and the frequencies of the wrong dimension.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import torch

from ..rotary import apply_rope, rope_frequencies
from ._angles import (
    _halves_positions,
)
from ._probes import _rope_2d_probe_reference, _rope_2d_probes
from ._transforms import _probing
from .checking import (
    _SEED,
    CheckResult,
    _close,
    _describe,
    _distinct,
    _dtype,
    _expect_floating,
    _expect_shape,
    _expect_tensor,
    _first_difference,
    _num,
    _Problem,
    _public,
    _run_checker,
    _Session,
    _unchanged,
    _values,
)

__all__ = ["check_apply_rope_2d"]

# --------------------------------------------------------------------------- 2-D RoPE


def _rope_2d_variant(
    x: torch.Tensor, rows: torch.Tensor, columns: torch.Tensor, base: float, kind: str | None = None
) -> torch.Tensor:
    """Axial 2-D RoPE (the reference when ``kind`` is None) or one of its typical mistakes."""
    dim = x.shape[-1]
    first_positions, second_positions = rows, columns
    frequencies = None
    if kind == "rows twice":
        second_positions = rows
    elif kind == "columns twice":
        first_positions = columns
    elif kind == "swapped":
        first_positions, second_positions = columns, rows
    elif kind == "full dim":
        frequencies = rope_frequencies(dim, base)[: dim // 4]
    elif kind == "base":
        base = 10000.0
    if kind == "strided":
        evens = apply_rope(x[..., 0::2], rows, base=base)
        odds = apply_rope(x[..., 1::2], columns, base=base)
        return torch.stack((evens, odds), dim=-1).flatten(-2)
    layout = "half" if kind == "half" else "interleaved"
    first, second = x.chunk(2, dim=-1)
    if frequencies is not None:
        rotated = (apply_rope(first, first_positions, frequencies=frequencies, layout=layout),
                   apply_rope(second, second_positions, frequencies=frequencies, layout=layout))
    else:
        rotated = (apply_rope(first, first_positions, base=base, layout=layout),
                   apply_rope(second, second_positions, base=base, layout=layout))
    return torch.cat(rotated, dim=-1)


@_public
def check_apply_rope_2d(fn: Callable[..., Any]) -> CheckResult:
    """Check a student's axial 2-D RoPE ``fn(x, rows, columns, base=10000.0) -> tensor like x``.

    ``x`` has shape ``(..., n, d)``, ``d`` a multiple of 4; ``rows`` and ``columns`` are 1-D
    tensors of the ``n`` grid positions. The result must equal
    :func:`posenc.rope2d.apply_rope_2d`: the first ``d/2`` coordinates rotated by 1-D RoPE of
    dimension ``d/2`` (interleaved pairs) at the rows, the last ``d/2`` at the columns; keep the
    shape and dtype of ``x``; and leave ``x`` unchanged. The hidden cases include grids of
    patches, shuffled and real-valued positions, batch and head dimensions, float32 and base
    100; a property case checks that scores depend only on the 2-D offset.

    Diagnosed mistakes: both halves rotated by the rows (or by the columns); rows and columns
    swapped; each half given the frequencies of the full dimension ``d`` instead of ``d/2``;
    even and odd coordinates split instead of halves; the half layout inside each half; the
    base ignored; one half at the default base (the argument not passed on), at ``base²`` or at
    ``√base`` (told apart by a probe at base 500 where they coincide); one 1-D RoPE on the whole
    vector at the rows, the columns or a raster index; dtype or shape changed; ``x`` modified in
    place; exceptions.

    Args:
        fn: the student's function.

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable.
    """

    def body(session: _Session) -> list[str]:
        generator = torch.Generator().manual_seed(_SEED)

        def grid(height: int, width: int) -> tuple[torch.Tensor, torch.Tensor]:
            cells = torch.arange(height * width)
            return cells // width, cells % width

        shuffled = torch.randperm(6, generator=generator)
        cases = [
            (torch.randn(6, 8, generator=generator, dtype=torch.float64), *grid(2, 3), None),
            (torch.randn(2, 3, 12, 16, generator=generator).float(), *grid(3, 4), None),
            (torch.randn(6, 4, generator=generator, dtype=torch.float64), shuffled, (shuffled * 7) % 5, None),
            (torch.randn(5, 32, generator=generator, dtype=torch.float64),
             torch.tensor([0.5, 2.0, 9.0, -3.0, 40.0], dtype=torch.float64),
             torch.tensor([1.0, 0.25, 31.0, 6.0, -2.0], dtype=torch.float64), 100.0),
            (torch.randn(1, 9, 8, generator=generator, dtype=torch.float64), *grid(3, 3), 100.0),
        ]
        for x, rows, columns, base in cases:
            session.run(partial(_rope_2d_case, session, x, rows, columns, base))
        session.run(partial(_rope_2d_relative_case, session, generator))
        return [
            f"matches posenc.apply_rope_2d on {session.cases - 1} hidden cases: grids of patches, shuffled and "
            "real-valued positions, batch and head dimensions, float32 and float64, base 100",
            "scores between rotated queries and keys depend only on the 2-D offset (row and column differences)",
            "keeps the shape and dtype of x and leaves x unchanged",
        ]

    return _run_checker("axial 2-D rotary position embedding", fn, body,
                        reading=_probing(fn, ("rope 2d values",), _rope_2d_probe_reference, _rope_2d_probes(),
                                         "the rotated vectors", ("x", "rows", "columns"), atol=1e-3, rtol=1e-3))


def _rope_2d_call(
    session: _Session, x: torch.Tensor, rows: torch.Tensor, columns: torch.Tensor, base: float | None
) -> tuple[Any, str]:
    given = x.clone()
    parts = [_describe("x", x), f"rows={_values(rows, limit=6)}", f"columns={_values(columns, limit=6)}"]
    kwargs = {} if base is None else {"base": base}
    if base is not None:
        parts.append(f"base={base:g}")
    call = f"fn({', '.join(parts)})"
    returned = session.call(call, given, rows.clone(), columns.clone(), **kwargs)
    _unchanged(session, {"x": x}, {"x": given}, call)
    return returned, call


def _rope_2d_case(
    session: _Session, x: torch.Tensor, rows: torch.Tensor, columns: torch.Tensor, base: float | None
) -> None:
    returned, call = _rope_2d_call(session, x, rows, columns, base)
    got = _expect_tensor(returned, "a tensor like x", call)
    _expect_shape(got, tuple(x.shape), "a tensor", call, " (the shape of x)")
    if got.dtype != x.dtype:
        session.problem("dtype", f"{call} returned dtype {_dtype(got.dtype)}; expected {_dtype(x.dtype)}, the dtype "
                        "of x: cast the result back with .to(x.dtype)")
    _expect_floating(got, "a tensor", call, f"{_dtype(x.dtype)}, the dtype of x")
    got = got.double()
    actual_base = 10000.0 if base is None else base
    expected = _rope_2d_variant(x.double(), rows, columns, actual_base)
    tolerance = 1e-5 if x.dtype == torch.float32 else 1e-9
    if _close(got, expected, atol=tolerance, rtol=tolerance):
        return
    dim = x.shape[-1]
    explanations = {
        "rows twice": "both halves are rotated by the rows: the second half (the last d/2 coordinates) must be "
        "rotated by the columns",
        "columns twice": "both halves are rotated by the columns: the first half must be rotated by the rows",
        "swapped": "rows and columns are swapped: the first half is rotated by the rows, the second by the columns",
        "full dim": f"each half uses the frequencies of the full dimension d = {dim}, base^(-2ℓ/d), ℓ < d/4: each half "
        f"is a 1-D RoPE of dimension d/2 = {dim // 2}, with θ_ℓ = base^(-2ℓ/(d/2)) = base^(-4ℓ/d)",
        "strided": "you split the coordinates into evens and odds; axial RoPE splits them into halves, "
        "x[..., :d/2] (rows) and x[..., d/2:] (columns), each with interleaved pairs",
        "half": "inside each half you pair (ℓ, ℓ + d/4), the half layout; this exercise uses interleaved pairs "
        "(2ℓ, 2ℓ+1) in each half, as posenc.apply_rope does by default",
        "base": f"your function ignores its base argument: called with base={actual_base:g}, it uses base 10000",
    }
    for kind, explanation in explanations.items():
        if kind == "base" and actual_base == 10000.0:
            continue
        candidate = _rope_2d_variant(x.double(), rows, columns, actual_base, kind)
        if _close(got, candidate, atol=tolerance, rtol=tolerance):
            raise _Problem(kind, f"in {call}: {explanation}")
    for name, integer in (("truncated", torch.trunc), ("floored", torch.floor), ("rounded", torch.round)):
        exact = torch.equal(integer(rows), rows) and torch.equal(integer(columns), columns)
        if rows.is_floating_point() and not exact:
            candidate = _rope_2d_variant(x.double(), integer(rows), integer(columns), actual_base)
            if _close(got, candidate, atol=tolerance, rtol=tolerance):
                raise _Problem("integer positions", f"in {call}: your rotation uses the positions {name} to integers: "
                               "rows and columns may be real numbers (interpolated grids); keep them in floating point")
    both = apply_rope(apply_rope(x.double(), rows, base=actual_base), columns, base=actual_base)
    if _close(got, both, atol=tolerance, rtol=tolerance):
        raise _Problem("both on whole", f"in {call}: you rotated the whole vector twice, at the row and then at the "
                       "column (R_column R_row x): the two rotations add their angles in every pair, so only row + "
                       "column counts; rotate the first d/2 coordinates at the row and the last d/2 at the column")
    whole = {"the rows": rows, "the columns": columns, "the token index (raster order)": torch.arange(x.shape[-2])}
    if len(columns):  # a raster index read off the grid: row · width + column, the width one past the last column
        width = int(columns.max()) + 1
        whole[f"the raster index row · {width} + column (a grid {width} columns wide)"] = rows * width + columns
    for name, positions in whole.items():
        if _close(got, apply_rope(x.double(), positions, base=actual_base), atol=tolerance, rtol=tolerance):
            raise _Problem("1-D", f"in {call}: you applied one 1-D RoPE of dimension d = {dim} to the whole vector, at "
                           f"{name}: axial RoPE rotates the first d/2 coordinates at the row and the last d/2 at the "
                           "column, each half a 1-D RoPE of dimension d/2, so that both the row and the column "
                           "enter")
    halves = {"first half (the rows)": slice(0, dim // 2), "second half (the columns)": slice(dim // 2, dim)}
    for (name, part), where in zip(halves.items(), (rows, columns), strict=True):
        theta = actual_base ** (-4 * torch.arange(dim // 4, dtype=torch.float64) / dim)
        for factor in (0.5, 2.0):
            if not _close(got[..., part], expected[..., part], atol=tolerance, rtol=tolerance) and _close(
                    got[..., part], apply_rope(x.double()[..., part], where, frequencies=factor * theta),
                    atol=tolerance, rtol=tolerance):
                raise _Problem("half frequencies", f"in {call}: your {name} turns at {factor:g} times the frequencies "
                               "of 1-D RoPE of dimension d/2, base^(-2ℓ/(d/2)): use them as they are")
        if not _close(got[..., part], expected[..., part], atol=tolerance, rtol=tolerance):
            fitting = [reading for reading, rule in _HALF_BASES.items() if rule(actual_base) != actual_base and _close(
                got[..., part], apply_rope(x.double()[..., part], where, base=rule(actual_base)), atol=tolerance,
                rtol=tolerance)]
            if fitting:
                raise _Problem("half base", f"in {call}: " + _half_base_text(
                    name, actual_base, _separate_bases(session.fn, part, fitting)))
    for name, part in halves.items():
        if not _close(got[..., part], expected[..., part], atol=tolerance, rtol=tolerance) and _close(
            got[..., part], x.double()[..., part], atol=tolerance, rtol=tolerance
        ):
            raise _Problem(f"unrotated {name}", f"in {call}: the {name} is not rotated, it equals x's own coordinates: "
                           "rotate x[..., :d/2] at the rows and x[..., d/2:] at the columns, each a 1-D RoPE of "
                           "dimension d/2, and concatenate the two")
    read = _halves_positions(got, x.double(), rows, columns, actual_base)
    index = _first_difference(got, expected, atol=tolerance)
    coordinate, token = index[-1], index[-2]
    half = "first half (rows)" if coordinate < dim // 2 else "second half (columns)"
    should, was = _distinct(float(expected[index]), float(got[index]))
    raise _Problem(
        "rope 2d values", (f"{read}\n" if read else "") +
        f"in {call}: token {token} (row {_num(float(rows[token]))}, column {_num(float(columns[token]))}), coordinate "
        f"{coordinate}, in the {half}, should be {should}, got {was}; the first d/2 coordinates are rotated by 1-D "
        "RoPE of dimension d/2 at the row, the last d/2 at the column",
    )


_HALF_BASES: dict[str, Callable[[float], float]] = {
    "default": lambda base: 10000.0, "squared": lambda base: base ** 2, "root": lambda base: base ** 0.5}
"""The bases one half can rotate with by mistake: the default (base not passed on), base², √base."""

_BASE_NAMES = {"default": "the default 10000", "squared": "base²", "root": "√base"}

_PROBE_BASE = 500.0  # its square and its root are not 10000: the three readings part


def _separate_bases(fn: Callable[..., Any], part: slice, fitting: list[str]) -> list[str]:
    """Of the readings of a half's base that fit a case, those that also fit a probe at base 500, where they part.

    At base 100 the default base 10000 is also base²: one more call tells an argument not passed on from a squared
    base. When the probe cannot be read, every reading that fit is kept (and said as such).
    """
    if len(fitting) < 2:
        return fitting
    generator = torch.Generator().manual_seed(_SEED + 3)
    x = torch.randn(4, 16, generator=generator, dtype=torch.float64)
    rows, columns = torch.tensor([0, 1, 2, 3]), torch.tensor([3, 1, 0, 2])
    where, half = (rows, slice(0, 8)) if part.start == 0 else (columns, slice(8, 16))  # the same half of the probe
    try:
        got = torch.as_tensor(fn(x.clone(), rows.clone(), columns.clone(), base=_PROBE_BASE)).double()[..., half]
    except Exception:  # noqa: BLE001 (a probe the answer cannot take says nothing)
        return fitting
    kept = [reading for reading in fitting if _close(got, apply_rope(x[..., half], where, base=_HALF_BASES[reading](
        _PROBE_BASE)), atol=1e-9, rtol=1e-9)]
    return kept or fitting


def _half_base_text(name: str, base: float, readings: list[str]) -> str:
    said = {
        "default": ("the default base 10000", "the base argument does not reach this half: pass base=base to both "
                    "halves"),
        "squared": (f"the base base² = {base ** 2:g}", "both halves use the base given, unchanged"),
        "root": (f"the base √base = {base ** 0.5:g}", "both halves use the base given, unchanged"),
    }
    if len(readings) == 1:
        what, fix = said[readings[0]]
        return f"your {name} rotates with {what}, not the base {base:g} given: {fix}"
    values = " and ".join(_BASE_NAMES[reading] for reading in readings)
    return (f"your {name} rotates with the base {_HALF_BASES[readings[0]](base):g}, not the base {base:g} given; here "
            f"{values} are the same number, so either " + ", or ".join(
                f"{said[reading][0]} ({said[reading][1]})" for reading in readings))


def _rope_2d_relative_case(session: _Session, generator: torch.Generator) -> None:
    dim, side = 8, 4
    q, k = (torch.randn(dim, generator=generator, dtype=torch.float64) for _ in range(2))
    cells = torch.arange(side * side)
    rows, columns = cells // side, cells % side
    rotated = []
    for vector in (q, k):
        x = vector.expand(side * side, -1).clone()
        call = (
            f"fn(x of shape ({side * side}, {dim}) (float64) holding the same vector at every cell of a "
            f"{side}x{side} grid)"
        )
        returned = session.call(call, x, rows.clone(), columns.clone())
        got = _expect_tensor(returned, "a tensor like x", call)
        _expect_shape(got, tuple(x.shape), "a tensor", call, " (the shape of x)")
        _expect_floating(got, "a tensor", call, "float64, the dtype of x")
        rotated.append(got.double())
    scores = rotated[0] @ rotated[1].T
    row_offset = rows[None, :] - rows[:, None]
    column_offset = columns[None, :] - columns[:, None]
    for a in range(side * side):
        for b in range(side * side):
            same = (row_offset == row_offset[a, b]) & (column_offset == column_offset[a, b])
            spread = float(scores[same].max() - scores[same].min())
            if spread > 1e-6 * (1 + float(scores.abs().max())):
                session.problem(
                    "relative 2d",
                    "scores are not relative: with the same query vector at every cell and the same key vector at "
                    f"every cell, the pairs of cells with 2-D offset ({int(row_offset[a, b])}, "
                    f"{int(column_offset[a, b])}) get scores from {_num(float(scores[same].min()))} to "
                    f"{_num(float(scores[same].max()))}; axial RoPE gives R(i)ᵀR(j) = R(j - i) for each half",
                )
                return
