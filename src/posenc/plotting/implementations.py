"""The figures of chapter 6 (Part IV: RoPE implementations): the permutation between the two
pair layouts, the two parts of a partial rotary score, and score maps of 2-D rotary embeddings
around a query."""

from __future__ import annotations

from collections.abc import Mapping

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .core import Matrix, Vector, _as_matrix, heatmaps, xy_curves

__all__ = ["layout_permutation", "offset_score_maps", "partial_rotary_parts"]


def layout_permutation(rotation: Matrix, permutation: Matrix, rotation_half: Matrix, position: int) -> Figure:
    """The interleaved rotation ``R_m``, the permutation ``Π`` and ``Π R_m Πᵀ = R^half_m``, side by side.

    Args:
        rotation: ``R_m`` in the interleaved layout, shape ``(d, d)``.
        permutation: ``Π``, shape ``(d, d)``, from the interleaved to the half layout.
        rotation_half: ``R^half_m``, shape ``(d, d)``.
        position: the position ``m`` (for the titles).

    Returns:
        The figure, three heatmaps on one scale from -1 to 1, coordinates as tick labels.

    Raises:
        ValueError: if a matrix is not square or the three differ in size.
    """
    matrices = [_as_matrix(name, m) for name, m in
                [("rotation", rotation), ("permutation", permutation), ("rotation_half", rotation_half)]]
    if len({m.shape for m in matrices}) != 1 or matrices[0].shape[0] != matrices[0].shape[1]:
        raise ValueError(f"the three matrices must be square and of one size, got {[m.shape for m in matrices]}")
    coordinates = [str(c) for c in range(matrices[0].shape[0])]
    titles = [rf"$R_{{{position}}}$ (interleaved)", r"$\Pi$ (interleaved $\to$ half)",
              rf"$\Pi R_{{{position}}} \Pi^\top = R^{{\mathrm{{half}}}}_{{{position}}}$"]
    return heatmaps(matrices, titles, xticklabels=coordinates, yticklabels=coordinates, cmap="coolwarm",
                    xlabel="input coordinate", ylabel="output coordinate", vmin=-1, vmax=1)


def partial_rotary_parts(offsets: Vector, parts: Mapping[str, Vector], rotary_dim: int, head_dim: int) -> Axes:
    """The rotated and the pass-through part of a partial rotary score against the offset.

    Args:
        offsets: the offsets ``j - i``.
        parts: the curves by label, in pairs (rotated part, pass-through part) for each query
            position; one colour per pair of curves, one line style per position (solid,
            dashed, dotted, then again).
        rotary_dim: the number of rotated coordinates (for the title).
        head_dim: the head dimension (for the title).

    Returns:
        The axes, one line per curve, the legend outside on the right.

    Raises:
        ValueError: if ``parts`` does not hold an even number of curves.
    """
    if not parts or len(parts) % 2:
        raise ValueError(f"parts must hold curves in (rotated, pass-through) pairs, got {len(parts)}")
    styles = [f"C{k % 2}{['-', '--', ':'][k // 2 % 3]}" for k in range(len(parts))]
    return xy_curves(offsets, parts, styles=styles, legend="outside", xlabel="offset $j - i$",
                     ylabel="contribution to the score",
                     title=f"partial rotary, {rotary_dim} of {head_dim} coordinates rotated: the three starts coincide")


def offset_score_maps(maps: Mapping[str, Matrix], dim: int) -> Figure:
    """Score maps around a query at the centre of a square grid of 2-D offsets, side by side.

    Args:
        maps: the ``(S, S)`` maps by title, ``S`` odd, row and column offsets ``-(S-1)/2 ..
            (S-1)/2``; every fifth offset is labelled.
        dim: the head dimension ``d`` (for the title).

    Returns:
        The figure, one heatmap per map, titled "all-ones score / d around a query, d = ...".

    Raises:
        ValueError: if ``maps`` is empty or a map is not square with an odd side.
    """
    if not maps:
        raise ValueError("maps must contain at least one score map")
    matrices = [_as_matrix(title, m) for title, m in maps.items()]
    side = matrices[0].shape[0]
    if any(m.shape != (side, side) for m in matrices) or side % 2 == 0:
        raise ValueError(f"every map must be square with one odd side, got {[m.shape for m in matrices]}")
    labels = [str(o) if o % 5 == 0 else "" for o in range(-(side // 2), side // 2 + 1)]
    fig = heatmaps(matrices, list(maps), xlabel="column offset", ylabel="row offset", figsize=(9, 4),
                   xticklabels=labels, yticklabels=labels)
    fig.suptitle(f"all-ones score / d around a query, d = {dim}")
    return fig
