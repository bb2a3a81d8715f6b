"""Measurements on embedding tables: the span of one in another's leading directions, nearest rows.

Chapter 2 asks whether a trained model keeps its position vectors out of the directions its
token vectors use (the premise of its concatenation proposition): it takes the few principal
directions that carry a share of one table's variance and measures the share of the other
table's energy inside their span, against the share a random subspace of that size would hold
(:func:`energy_in_leading_span`), and how often a token is misread once a random position vector
is added to it (:func:`decoding_errors`). Chapter 3 measures how far each row of a sinusoidal table
lies from the rows seen in training (:func:`distance_to_training_rows`).

Shape legend:
    - ``N``, ``M``: numbers of rows of the two tables; ``d``: their common width
    - ``k``: number of principal directions kept; ``n``: number of training rows
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from .._validation import check_floating, check_int, check_tensor

__all__ = ["SpanEnergy", "decoding_errors", "distance_to_training_rows", "energy_in_leading_span"]


@dataclass(frozen=True)
class SpanEnergy:
    """The leading spans of a source table and the energy of a target table inside them.

    Attributes:
        dims: for each share, the smallest number ``k`` of principal directions of the source
            that carry at least that share of its variance.
        energy: for each share, the fraction of the target's energy ``sum ||t_m||^2`` inside
            the span of those ``k`` directions.
        random_share: for each share, ``k / d``, the expected fraction of a random subspace of
            dimension ``k`` (an isotropic target's energy spreads evenly over the ``d`` axes).
        axes: ``(d, d)`` the source's principal axes as columns, by ascending variance (the
            last ``k`` columns span the leading directions).
    """

    dims: list[int]
    energy: list[float]
    random_share: list[float]
    axes: torch.Tensor


def energy_in_leading_span(
    source: torch.Tensor, target: torch.Tensor, shares: Sequence[float] = (0.5, 0.9)
) -> SpanEnergy:
    """The share of ``target``'s energy in the span of the principal directions of ``source``.

    The principal directions are the eigenvectors of ``sourceᵀ source`` (centre ``source``
    first for variance about the mean); the ``k`` leading ones carry the share
    ``(λ_1 + ... + λ_k) / Σ λ`` of its variance.

    Args:
        source: ``(N, d)`` table whose principal directions are taken.
        target: ``(M, d)`` table whose energy is measured in their span.
        shares: the shares of the source's variance to carry, each in ``(0, 1]``.

    Returns:
        A :class:`SpanEnergy`, one entry per share in its lists.

    Raises:
        TypeError: if a table is not a real floating tensor.
        ValueError: if a table is not 2-D, the widths differ, ``target`` has no energy, or a
            share is outside ``(0, 1]``.
    """
    source = check_floating("source", check_tensor("source", source, min_dim=2))
    target = check_floating("target", check_tensor("target", target, min_dim=2))
    if source.dim() != 2 or target.dim() != 2:
        raise ValueError(f"source and target must be 2-D, got shapes {tuple(source.shape)} and {tuple(target.shape)}")
    if source.shape[1] != target.shape[1]:
        raise ValueError(f"source and target must have the same width, got {source.shape[1]} and {target.shape[1]}")
    if not shares or any(not 0.0 < float(share) <= 1.0 for share in shares):
        raise ValueError(f"every share must be in (0, 1], got {list(shares)}")
    total = target.pow(2).sum().item()
    if total == 0.0:
        raise ValueError("target has no energy (every entry is zero)")
    variance, axes = torch.linalg.eigh(source.T @ source)
    carried = variance.flip(0).cumsum(0) / variance.sum()
    # The cumulative share can miss 1.0 by a rounding error: never keep more than d directions.
    dims = [min(int((carried < share).sum()) + 1, len(variance)) for share in shares]
    energy = [(target @ axes[:, -k:]).pow(2).sum().item() / total for k in dims]
    return SpanEnergy(dims, energy, [k / source.shape[1] for k in dims], axes)


def distance_to_training_rows(rows: torch.Tensor, train_len: int) -> torch.Tensor:
    """Each row's Euclidean distance to the nearest of the first ``train_len`` rows, over ``|row 0|``.

    The distances are exact (``torch.cdist`` without its matrix-product shortcut, which is off
    by about ``1e-3`` here); the training rows are at distance 0 from themselves.

    Args:
        rows: ``(N, d)`` table, its first ``train_len`` rows those seen in training; row 0 not
            zero (the sinusoidal table's row 0 has norm ``sqrt(d/2)``).
        train_len: the number ``n`` of training rows, ``1 <= n <= N``.

    Returns:
        ``(N,)`` the distances relative to the norm of row 0.

    Raises:
        TypeError: if ``rows`` is not a floating tensor or ``train_len`` not an integer.
        ValueError: if ``rows`` is not 2-D, ``train_len`` is out of range, or row 0 is zero.
    """
    rows = check_floating("rows", check_tensor("rows", rows, min_dim=2))
    if rows.dim() != 2:
        raise ValueError(f"rows must be 2-D (N, d), got shape {tuple(rows.shape)}")
    train_len = check_int("train_len", train_len, minimum=1)
    if train_len > len(rows):
        raise ValueError(f"train_len must be at most the {len(rows)} rows, got {train_len}")
    if not rows[0].any():
        raise ValueError("row 0 is zero: the distances cannot be relative to its norm")
    nearest = torch.cdist(rows, rows[:train_len], compute_mode="donot_use_mm_for_euclid_dist").min(1).values
    return nearest / rows[0].norm()


def decoding_errors(width: int, vocab_size: int, table_len: int, num_samples: int) -> tuple[float, float]:
    """How often a random token is misread, alone and with a random position vector added.

    Draws, from PyTorch's global generator and in this order, a token table and a position
    table with independent ``N(0, 1/d)`` entries, ``num_samples`` token ids and as many
    positions (all uniform). A vector ``h`` is decoded as the token whose embedding has the
    largest dot product with it, for ``h = x`` (the token alone) and ``h = x + p``.

    Args:
        width: the common width ``d`` of the tables.
        vocab_size: number of token rows.
        table_len: number of position rows.
        num_samples: number of decoded (token, position) samples.

    Returns:
        The share of misread tokens ``(alone, with the position added)``.

    Raises:
        TypeError: if an argument is not an integer.
        ValueError: if an argument is below 1 (``vocab_size`` below 2).
    """
    width = check_int("width", width, minimum=1)
    vocab_size = check_int("vocab_size", vocab_size, minimum=2)
    table_len = check_int("table_len", table_len, minimum=1)
    num_samples = check_int("num_samples", num_samples, minimum=1)
    token_table = torch.randn(vocab_size, width) / math.sqrt(width)
    position_table = torch.randn(table_len, width) / math.sqrt(width)
    token_ids = torch.randint(vocab_size, (num_samples,))
    alone = token_table[token_ids]
    mixed = alone + position_table[torch.randint(table_len, (num_samples,))]
    alone_errors, mixed_errors = (
        ((h @ token_table.T).argmax(-1) != token_ids).float().mean().item() for h in (alone, mixed)
    )
    return alone_errors, mixed_errors
