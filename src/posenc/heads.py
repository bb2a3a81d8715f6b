"""Splitting features into attention heads and merging them back.

Shape legend: ``L`` sequence length, ``h`` number of heads, ``d_h`` head dimension,
``D = h * d_h`` model dimension; ``...`` any leading (batch) dimensions.
"""

from __future__ import annotations

import torch

from ._validation import check_int, check_tensor

__all__ = ["merge_heads", "split_heads"]


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """Give every head its own block of features: ``(..., L, h * d_h) -> (..., h, L, d_h)``.

    Head ``r`` receives features ``r * d_h`` to ``(r + 1) * d_h - 1`` of every token, the
    convention of :class:`torch.nn.MultiheadAttention` and of Hugging Face's Llama.

    Args:
        x: ``(..., L, D)`` projected queries, keys or values.
        num_heads: number of heads ``h``; must divide ``D``.

    Returns:
        Tensor of shape ``(..., h, L, D / h)`` (a view of ``x`` where possible).

    Raises:
        TypeError: if ``x`` is not a tensor or ``num_heads`` is not an integer.
        ValueError: if ``x`` has fewer than 2 dimensions or ``num_heads`` does not divide ``D``.
    """
    x = check_tensor("x", x, min_dim=2)
    num_heads = check_int("num_heads", num_heads, minimum=1)
    if x.shape[-1] % num_heads:
        raise ValueError(
            f"num_heads={num_heads} must divide the last dimension of x, got x of shape {tuple(x.shape)}"
        )
    return x.unflatten(-1, (num_heads, x.shape[-1] // num_heads)).transpose(-3, -2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """Concatenate the heads again: ``(..., h, L, d_h) -> (..., L, h * d_h)``; inverts :func:`split_heads`.

    Args:
        x: ``(..., h, L, d_h)`` per-head outputs.

    Returns:
        Tensor of shape ``(..., L, h * d_h)``.

    Raises:
        TypeError: if ``x`` is not a tensor.
        ValueError: if ``x`` has fewer than 3 dimensions.
    """
    x = check_tensor("x", x, min_dim=3)
    return x.transpose(-3, -2).flatten(-2)
