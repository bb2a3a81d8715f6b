"""Axial two-dimensional RoPE for grids of positions (image patches).

The head is split into two halves: the first half is rotated by one-dimensional RoPE of
dimension ``d/2`` at the row position, the second half at the column position. Then
``R(i1, i2)^T R(j1, j2) = R(j1 - i1, j2 - i2)``: scores depend on the 2-D offset only.

Shape legend: ``n`` number of tokens (grid cells), ``d`` head dimension (a multiple of 4);
``...`` any leading (batch, head) dimensions.
"""

from __future__ import annotations

import numbers

import torch

from ._validation import check_floating, check_positive_float, check_tensor
from .rotary import apply_rope, rope_matrix

__all__ = ["apply_rope_2d", "rope_matrix_2d"]


def _check_dim(dim: int, what: str) -> None:
    if dim <= 0 or dim % 4:
        raise ValueError(
            f"{what} must be a positive multiple of 4 (two halves, each rotated in pairs), got {dim}"
        )


def apply_rope_2d(
    x: torch.Tensor,
    rows: torch.Tensor,
    columns: torch.Tensor,
    *,
    base: float = 10000.0,
) -> torch.Tensor:
    """Rotate tokens at grid positions ``(rows[t], columns[t])`` with axial 2-D RoPE.

    Args:
        x: ``(..., n, d)`` queries or keys, ``d`` a multiple of 4.
        rows: ``(n,)`` row positions, or per-sample ``(B, n)`` (as ``positions`` of
            :func:`~posenc.rotary.apply_rope`).
        columns: column positions, shaped like ``rows``.
        base: frequency base (> 0) of each half's one-dimensional RoPE.

    Returns:
        Tensor of the same shape and dtype as ``x``: the first ``d/2`` coordinates rotated by
        ``apply_rope`` at ``rows``, the last ``d/2`` at ``columns`` (interleaved pairs).

    Raises:
        TypeError: if ``x`` is not a floating tensor, or ``rows``/``columns`` not tensors of
            positions (boolean ones are refused).
        ValueError: if ``d`` is not a multiple of 4, ``rows``/``columns`` do not have one entry
            per token, or ``base <= 0``.
    """
    x = check_floating("x", check_tensor("x", x, min_dim=2))
    _check_dim(x.shape[-1], "the last dimension of x")
    base = check_positive_float("base", base)
    for name, grid in (("rows", rows), ("columns", columns)):
        grid = check_tensor(name, grid, min_dim=1)
        if grid.shape[-1] != x.shape[-2]:
            raise ValueError(
                f"{name} must have one entry per token ({x.shape[-2]}, the second-to-last dimension "
                f"of x), got shape {tuple(grid.shape)}"
            )
    first, second = x.chunk(2, dim=-1)
    return torch.cat(
        (apply_rope(first, rows, base=base), apply_rope(second, columns, base=base)), dim=-1
    )


def rope_matrix_2d(
    row: float,
    column: float,
    dim: int,
    base: float = 10000.0,
    *,
    dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    """The dense ``(d, d)`` matrix ``R(row, column) = diag(R^{(d/2)}_row, R^{(d/2)}_column)``.

    Args:
        row: row position (a real number).
        column: column position (a real number).
        dim: head dimension ``d``, a multiple of 4.
        base: frequency base (> 0).
        dtype: dtype of the result.

    Returns:
        Tensor of shape ``(dim, dim)``, block diagonal with the two RoPE matrices of size ``d/2``.

    Raises:
        TypeError: if ``dim`` is not an integer or a position is not a real number.
        ValueError: if ``dim`` is not a positive multiple of 4 or ``base <= 0``.
    """
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"dim must be an integer, got {type(dim).__name__} {dim!r}")
    _check_dim(int(dim), "dim")
    half = int(dim) // 2
    return torch.block_diag(
        rope_matrix(row, half, base, dtype=dtype), rope_matrix(column, half, base, dtype=dtype)
    )
