"""The figures of chapter 3 (Part II, the sinusoidal encoding) beyond those in ``absolute``.

The encoding as a heatmap and a few of its columns as curves, and the wavelengths of the pairs
for several widths, a geometric progression between ``2π`` and ``2πb``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from itertools import cycle

import torch
from matplotlib.axes import Axes

from .._validation import check_int
from .core import Matrix, Vector, _as_matrix, _as_vector, heatmap, xy_curves

__all__ = ["encoding_columns", "encoding_heatmap", "wavelength_progression"]


def wavelength_progression(wavelengths: Mapping[str, Vector], base: float) -> Axes:
    """The wavelengths ``λ_ℓ`` of the pairs of encodings of several widths, on a log scale.

    Curve ``k`` of width ``d = 2 len(λ)`` is drawn against ``2ℓ / d`` (so every width spans
    ``[0, 1)``), with dashed levels at ``2π`` (the first wavelength) and ``2πb``.

    Args:
        wavelengths: label -> the ``(d/2,)`` wavelengths of one width, in the order of the pairs.
        base: the base ``b`` of the encodings.

    Returns:
        The axes drawn on.

    Raises:
        TypeError: if a curve is not numeric.
        ValueError: if ``wavelengths`` is empty or ``base`` is not greater than 1.
    """
    if not wavelengths:
        raise ValueError("wavelengths must hold at least one curve, got none")
    if not base > 1.0:
        raise ValueError(f"base must be greater than 1, got {base}")
    widths = {label: 2 * len(_as_vector(f"wavelengths[{label!r}]", curve)) for label, curve in wavelengths.items()}
    markers = cycle(["o", "s", "."])
    return xy_curves(
        {label: torch.arange(0, d, 2) / d for label, d in widths.items()},
        wavelengths,
        styles=[next(markers) for _ in widths],
        logy=True,
        xlabel=r"$2\ell / d$",
        ylabel=r"wavelength $\lambda_\ell$ (positions)",
        legend="lower right",
        title="Wavelengths form a geometric progression",
        levels={r"$2\pi$": 2 * math.pi, r"$2\pi b$": 2 * math.pi * base},
    )


def encoding_heatmap(table: Matrix) -> Axes:
    """A sinusoidal table as a heatmap: positions down, columns across, on the fixed scale ``[-1, 1]``.

    Args:
        table: ``(N, d)`` encoding, row ``i`` the vector of position ``i`` (sine in the even
            columns, cosine in the odd ones).

    Returns:
        The axes drawn on, titled with ``N`` and ``d``.

    Raises:
        TypeError, ValueError: if ``table`` is not a 2-D tensor or array.
    """
    values = _as_matrix("table", table)
    rows, width = values.shape
    return heatmap(
        values,
        title=f"Sinusoidal encoding, {rows} positions, d = {width}",
        xlabel=r"column ($2\ell$: sine, $2\ell + 1$: cosine)",
        ylabel="position i",
        cmap="RdBu_r",
        vmin=-1.0,
        vmax=1.0,
    )


def encoding_columns(table: Matrix, columns: Iterable[int]) -> Axes:
    """Consecutive columns of a sinusoidal table against the position: sines solid, cosines dashed.

    Column ``c`` is the sine (``c`` even) or cosine (``c`` odd) of pair ``c // 2``; the legend,
    outside the axes, says which.

    Args:
        table: ``(N, d)`` encoding with interleaved sine and cosine columns.
        columns: the columns to draw, e.g. ``range(6, 10)``, in drawing order.

    Returns:
        The axes drawn on, titled with the first and last column and ``d``.

    Raises:
        TypeError: if ``table`` is not a tensor or array, or a column is not an integer.
        ValueError: if ``table`` is not 2-D, ``columns`` is empty, or a column is out of range.
    """
    values = _as_matrix("table", table)
    rows, width = values.shape
    chosen = [check_int("column", column, minimum=0) for column in columns]
    if not chosen:
        raise ValueError("columns must name at least one column, got none")
    if max(chosen) >= width:
        raise ValueError(f"columns must be below the table's width {width}, got {max(chosen)}")
    series = {f"column {c}: {['sin', 'cos'][c % 2]}, pair {c // 2}": values[:, c] for c in chosen}
    return xy_curves(
        torch.arange(rows),
        series,
        styles=[".--" if c % 2 else ".-" for c in chosen],
        xlabel="position i",
        ylabel="value",
        legend="outside",
        title=f"Columns {chosen[0]} to {chosen[-1]} of the encoding (d = {width})",
    )
