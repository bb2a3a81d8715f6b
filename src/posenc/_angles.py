"""Frequencies, angles and 2x2 rotation blocks shared by the sinusoidal and rotary encodings.

Both families use the same geometric ladder of frequencies ``theta_j = base^(-2j/dim)``.
Angles ``position * theta_j`` are formed in float64: in float16 or bfloat16 a position such
as 2049 is not even representable, and in float32 the angle of a far position loses its
last digits, which the sine of a fast frequency turns into a visible error.
"""

from __future__ import annotations

import torch

from ._validation import check_even, check_positive_float


def frequencies(dim: int, base: float) -> torch.Tensor:
    """Return ``theta_j = base ** (-2j / dim)`` for ``j = 0 .. dim/2 - 1`` in float64.

    Raises:
        ValueError: if ``dim`` is not a positive even integer or ``base <= 0``.
    """
    dim = check_even("dim", dim)
    base = check_positive_float("base", base)
    exponents = torch.arange(0, dim, 2, dtype=torch.float64) / dim
    return base**-exponents


def angles(positions: torch.Tensor, dim: int, base: float) -> torch.Tensor:
    """Return the float64 angle table ``positions[:, None] * theta[None, :]`` of shape ``(n, dim/2)``."""
    theta = frequencies(dim, base).to(positions.device)
    return positions.to(torch.float64)[:, None] * theta[None, :]


def block_diagonal(blocks: torch.Tensor) -> torch.Tensor:
    """Assemble ``(k, 2, 2)`` blocks into a ``(2k, 2k)`` block-diagonal matrix.

    Block ``j`` acts on coordinates ``(2j, 2j + 1)``.
    """
    return torch.block_diag(*blocks.unbind(0))
