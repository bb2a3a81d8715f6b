"""The figures of Part I (chapter 1: permutation equivariance of self-attention).

The three attention maps of the equivariance theorem side by side, and the two panels of a
causal layer counting positions through a marker channel.

Shape legend:
    - ``n``: number of tokens (queries and keys) of a sequence
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure

from .core import Matrix, Vector, _as_matrix, _as_vector, curves, heatmaps

__all__ = ["counting_panels", "permuted_maps"]


def permuted_maps(
    weights: Matrix,
    permuted_weights: Matrix,
    weights_of_permuted: Matrix,
    perm: torch.Tensor | Sequence[int],
) -> Figure:
    """Attention weights of a sequence and of its reordering, on one scale: A(X), Π A(X) Πᵀ, A(Π X).

    The tokens are named ``x0, x1, ...`` in the order of ``X``; the last two panels label
    their rows and columns in the permuted order ``x_perm[0], x_perm[1], ...``.

    Args:
        weights: ``(n, n)`` weights ``A(X)`` of the sequence.
        permuted_weights: ``(n, n)`` the same weights reordered, ``Π A(X) Πᵀ``.
        weights_of_permuted: ``(n, n)`` weights ``A(Π X)`` of the reordered sequence.
        perm: the permutation, ``(n,)``: row ``i`` of ``Π X`` is row ``perm[i]`` of ``X``.

    Returns:
        The figure, three heatmaps (key by query) on one colour scale from 0.

    Raises:
        TypeError: if a matrix is not a tensor or array, or ``perm`` is not numeric.
        ValueError: if a matrix is not ``(n, n)`` or ``perm`` is not a permutation of
            ``0, ..., n - 1``.
    """
    matrices = [
        _as_matrix(name, matrix)
        for name, matrix in [
            ("weights", weights),
            ("permuted_weights", permuted_weights),
            ("weights_of_permuted", weights_of_permuted),
        ]
    ]
    order = _as_vector("perm", perm)
    n = len(order)
    if any(matrix.shape != (n, n) for matrix in matrices):
        raise ValueError(f"every matrix must be ({n}, {n}) for a permutation of {n}, got {[m.shape for m in matrices]}")
    if sorted(order.tolist()) != list(range(n)):
        raise ValueError(f"perm must be a permutation of 0, ..., {n - 1}, got {order.tolist()}")
    names = [f"x{i}" for i in range(n)]
    names_p = [names[int(i)] for i in order]
    return heatmaps(
        matrices,
        [r"$A(X)$", r"$\Pi A(X) \Pi^\top$", r"$A(\Pi X)$"],
        xticklabels=[names, names_p, names_p],
        yticklabels=[names, names_p, names_p],
        xlabel="key",
        ylabel="query",
        vmin=0.0,
    )


def counting_panels(positions: Vector, causal_outputs: Vector, unmasked_outputs: Vector, recovered: Vector) -> Figure:
    """A causal layer counting: the marker channel's output by query, and the position read off it.

    Left: the outputs ``o_i`` with and without the causal mask beside the curve ``1/(i+1)``
    (grey); right: the positions ``1/o_i - 1`` recovered from the causal outputs beside the
    ideal ``i`` (grey).

    Args:
        positions: the query positions ``i = 0, 1, ...``, ``(n,)``.
        causal_outputs: ``(n,)`` outputs of the marker channel with the causal mask.
        unmasked_outputs: ``(n,)`` the same without a mask.
        recovered: ``(n,)`` the positions read off the causal outputs.

    Returns:
        The figure, two axes side by side.

    Raises:
        TypeError: if a series is not numeric.
        ValueError: if the series differ in length.
    """
    series = {
        "positions": _as_vector("positions", positions),
        "causal_outputs": _as_vector("causal_outputs", causal_outputs),
        "unmasked_outputs": _as_vector("unmasked_outputs", unmasked_outputs),
        "recovered": _as_vector("recovered", recovered),
    }
    lengths = {name: len(values) for name, values in series.items()}
    if len(set(lengths.values())) != 1:
        raise ValueError(f"every series must have one value per position, got lengths {lengths}")
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4), layout="constrained")
    grey = {"color": "0.6", "marker": ""}
    # 1/(i+1) in the positions' own arithmetic (float32 for integer tensors), as the chapter's.
    reference = 1.0 / (torch.as_tensor(positions) + 1.0)
    curves(
        {"$1/(i+1)$": reference, "causal mask": causal_outputs, "no mask": unmasked_outputs},
        left,
        xlabel="query position i",
        ylabel="output $o_i$",
        title="Output of the marker channel",
        styles={"$1/(i+1)$": grey},
    )
    curves(
        {"ideal": positions, "$1/o_i - 1$ (causal)": recovered},
        right,
        xlabel="query position i",
        ylabel="recovered position",
        title="Position read off the output",
        styles={"ideal": grey},
    )
    return fig
