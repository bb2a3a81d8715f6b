"""Argument checks shared by every module of :mod:`posenc`.

Each check raises :class:`ValueError` or :class:`TypeError` with a message that names the
argument, says what was expected and shows what was received.
"""

from __future__ import annotations

import numbers

import torch


def check_int(name: str, value: object, *, minimum: int | None = None) -> int:
    """Return ``value`` as an ``int`` after checking it is an integer ``>= minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def check_even(name: str, value: object) -> int:
    """Return ``value`` after checking it is a positive even integer (dimensions split in pairs)."""
    value = check_int(name, value, minimum=2)
    if value % 2:
        raise ValueError(
            f"{name} must be even because dimensions are used in (sin, cos) or rotation pairs, got {value}"
        )
    return value


def check_positive_float(name: str, value: object) -> float:
    """Return ``value`` as a ``float`` after checking it is a finite real number ``> 0``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    value = float(value)
    if not value > 0 or value == float("inf"):
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    """Return ``value`` after checking it is one of ``choices``."""
    if value not in choices:
        expected = ", ".join(repr(choice) for choice in choices)
        raise ValueError(f"{name} must be one of {expected}, got {value!r}")
    return value  # type: ignore[return-value]


def check_tensor(name: str, value: object, *, min_dim: int = 0) -> torch.Tensor:
    """Return ``value`` after checking it is a tensor with at least ``min_dim`` dimensions."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if value.dim() < min_dim:
        raise ValueError(
            f"{name} must have at least {min_dim} dimension(s), got shape {tuple(value.shape)}"
        )
    return value


def check_floating(name: str, value: torch.Tensor) -> torch.Tensor:
    """Return ``value`` after checking it holds floating-point numbers."""
    if not value.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {value.dtype}")
    return value


def resolve_positions(
    positions: torch.Tensor | None, seq_len: int, *, device: torch.device
) -> torch.Tensor:
    """Return the positions of a sequence: ``arange(seq_len)`` or the checked ``positions``.

    Raises:
        TypeError: if ``positions`` is not an integer or floating tensor.
        ValueError: if ``positions`` is not 1-D or its length differs from ``seq_len``.
    """
    if positions is None:
        return torch.arange(seq_len, device=device)
    positions = check_tensor("positions", positions)
    if positions.dtype == torch.bool or positions.is_complex():
        raise TypeError(f"positions must hold integers or real numbers, got dtype {positions.dtype}")
    if positions.dim() != 1:
        raise ValueError(
            f"positions must be a 1-D tensor of length seq_len={seq_len}, "
            f"got shape {tuple(positions.shape)}"
        )
    if positions.numel() != seq_len:
        raise ValueError(
            f"positions has length {positions.numel()} but the input has seq_len={seq_len}; "
            "give one position per token"
        )
    return positions.to(device)


def resolve_sample_positions(positions: torch.Tensor | None, x: torch.Tensor) -> torch.Tensor:
    """Positions of ``x`` (``(..., L, d)``): ``arange(L)``, a checked ``(L,)`` or a per-sample ``(B, L)``.

    Per-sample positions (packed sequences, left padding) give one row per sequence of the
    batch, the first dimension of ``x``, which then has at least 3 dimensions.

    Raises:
        TypeError: if ``positions`` is not an integer or floating tensor.
        ValueError: if ``positions`` is neither ``(L,)`` nor ``(B, L)`` matching ``x``.
    """
    seq_len = x.shape[-2]
    if positions is None or not isinstance(positions, torch.Tensor) or positions.dim() != 2:
        return resolve_positions(positions, seq_len, device=x.device)
    if positions.dtype == torch.bool or positions.is_complex():
        raise TypeError(f"positions must hold integers or real numbers, got dtype {positions.dtype}")
    if x.dim() < 3 or positions.shape != (x.shape[0], seq_len):
        raise ValueError(
            "per-sample positions of shape (B, L) need x of shape (B, L, d) or (B, h, L, d) with the "
            f"same B and L, got positions of shape {tuple(positions.shape)} and x of shape {tuple(x.shape)}"
        )
    return positions.to(x.device)


def align_to_input(table: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Give a per-sample ``(B, L, k)`` table singleton axes for the middle dimensions of ``x``.

    A shared ``(L, k)`` table broadcasts against ``x`` as it is and is returned unchanged.
    """
    if table.dim() == 3:
        return table.view(table.shape[0], *([1] * (x.dim() - 3)), *table.shape[1:])
    return table
