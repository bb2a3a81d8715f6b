"""Checks that a score depends on positions only through their offset.

Shape legend:
    - ``Lq``, ``Lk``: numbers of queries and keys
    - ``L``: sequence length; ``d``: vector dimension
    - ``...``: any leading dimensions (batch, heads)

A score matrix ``S`` (rows are queries ``i``, columns keys ``j``) depends on the positions only
through the offset ``j - i`` exactly when it is constant along each diagonal, i.e. when it is a
Toeplitz matrix. :func:`toeplitz_gap` measures the distance from that; :func:`relativity_gap`
measures the same property for a position encoding that rotates (or otherwise transforms)
queries and keys, by shifting every position and comparing the scores.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch

from ._validation import check_tensor

__all__ = ["relativity_gap", "toeplitz_gap"]


def toeplitz_gap(matrix: torch.Tensor) -> float:
    """Largest change along a diagonal: ``max |S[..., i+1, j+1] - S[..., i, j]|``.

    It is zero exactly when every matrix in the batch is Toeplitz, i.e. when entry ``(i, j)``
    depends on ``j - i`` only.

    Args:
        matrix: ``(..., Lq, Lk)`` real tensor (scores, a bias, attention weights).

    Returns:
        The gap as a Python float (0.0 for a matrix with a single row or column).

    Raises:
        TypeError: if ``matrix`` is not a real floating or integer tensor.
        ValueError: if ``matrix`` has fewer than 2 dimensions.
    """
    matrix = check_tensor("matrix", matrix, min_dim=2)
    if matrix.dtype == torch.bool or matrix.is_complex():
        raise TypeError(f"matrix must hold real numbers, got dtype {matrix.dtype}")
    steps = matrix[..., 1:, 1:] - matrix[..., :-1, :-1]
    return float(steps.abs().max()) if steps.numel() else 0.0


def relativity_gap(
    encode: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    queries: torch.Tensor,
    keys: torch.Tensor,
    positions: torch.Tensor | None = None,
    *,
    shifts: Iterable[int | float] = (1, 37, 1000),
) -> float:
    """How much the scores of an encoding change when every position is shifted by the same amount.

    With ``S(p) = encode(queries, p) @ encode(keys, p).T``, returns
    ``max over shifts of max |S(p + shift) - S(p)|``. An encoding whose scores depend on
    positions only through offsets (RoPE) gives zero up to rounding; an absolute one does not.

    Args:
        encode: ``encode(x, positions)`` maps ``(..., L, d)`` vectors and ``(L,)`` positions to
            encoded vectors of shape ``(..., L, d')``, e.g. :func:`posenc.rotary.apply_rope`.
        queries: ``(..., L, d)`` floating tensor.
        keys: ``(..., L, d)`` floating tensor of the same shape.
        positions: ``(L,)`` positions; default ``arange(L)``.
        shifts: the common shifts to try (at least one).

    Returns:
        The largest absolute change of any score, as a Python float.

    Raises:
        TypeError: if ``encode`` is not callable or the inputs are not floating tensors.
        ValueError: if ``queries`` and ``keys`` differ in shape, ``positions`` has the wrong
            shape, or ``shifts`` is empty.
    """
    if not callable(encode):
        raise TypeError(f"encode must be a callable encode(x, positions), got {type(encode).__name__}")
    queries = check_tensor("queries", queries, min_dim=2)
    keys = check_tensor("keys", keys, min_dim=2)
    for name, value in (("queries", queries), ("keys", keys)):
        if not value.is_floating_point():
            raise TypeError(f"{name} must be a floating-point tensor, got dtype {value.dtype}")
    if queries.shape != keys.shape:
        raise ValueError(
            f"queries and keys must have the same shape, got {tuple(queries.shape)} and {tuple(keys.shape)}"
        )
    seq_len = queries.shape[-2]
    if positions is None:
        positions = torch.arange(seq_len)
    positions = check_tensor("positions", positions)
    if positions.shape != (seq_len,):
        raise ValueError(f"positions must have shape (L,) = ({seq_len},), got {tuple(positions.shape)}")
    shifts = list(shifts)
    if not shifts:
        raise ValueError("shifts must contain at least one shift")

    def scores(at: torch.Tensor) -> torch.Tensor:
        return encode(queries, at) @ encode(keys, at).transpose(-2, -1)

    reference = scores(positions)
    return max(float((scores(positions + shift) - reference).abs().max()) for shift in shifts)
