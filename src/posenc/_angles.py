"""Frequencies, angles and 2x2 rotation blocks shared by the sinusoidal and rotary encodings.

Both families use the same geometric ladder of frequencies ``theta_l = base^(-2l/dim)``.
Angles ``position * theta_l`` are formed in float64: in float16 or bfloat16 a position such
as 2049 is not even representable, and in float32 the angle of a far position loses its
last digits, which the sine of a fast frequency turns into a visible error.
"""

from __future__ import annotations

import torch

from ._validation import check_even, check_positive_float


def frequencies(dim: int, base: float) -> torch.Tensor:
    """Return ``theta_l = base ** (-2l / dim)`` for ``l = 0 .. dim/2 - 1`` in float64.

    Raises:
        ValueError: if ``dim`` is not a positive even integer or ``base <= 0``.
    """
    dim = check_even("dim", dim)
    base = check_positive_float("base", base)
    exponents = torch.arange(0, dim, 2, dtype=torch.float64) / dim
    return base**-exponents


def angles(positions: torch.Tensor, dim: int, base: float) -> torch.Tensor:
    """Return the float64 angle table ``positions[..., None] * theta`` of shape ``(..., dim/2)``."""
    return angles_from_frequencies(positions, frequencies(dim, base))


def angles_from_frequencies(positions: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """Return the float64 angle table ``positions[..., None] * theta`` for given frequencies."""
    return positions.to(torch.float64)[..., None] * theta.to(positions.device, torch.float64)


def block_diagonal(blocks: torch.Tensor) -> torch.Tensor:
    """Assemble ``(n, 2, 2)`` blocks into a ``(2n, 2n)`` block-diagonal matrix.

    Block ``l`` acts on coordinates ``(2l, 2l + 1)``.
    """
    return torch.block_diag(*blocks.unbind(0))
