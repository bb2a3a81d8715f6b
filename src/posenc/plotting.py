"""Plotting helpers shared by the chapters, so every figure of a kind looks the same.

The book's figure-code convention (README, "Writing a chapter"): a chapter's figure is one call
to a function of this module, d2l-style; the notebook keeps only what it derives or measures.
Each function draws one *kind* of figure (a heatmap of a table, a curve by offset, a bias panel
per head, ...), takes data computed by the chapter, returns the matplotlib objects it made so a
chapter can annotate them, and is tested for what it draws (axes, labels, data).

Shape legend:
    - ``R``, ``C``: rows and columns of a matrix shown as a heatmap
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ._validation import check_int

__all__ = ["heatmap", "heatmaps", "use_book_style"]

Matrix = torch.Tensor | np.ndarray


def use_book_style() -> None:
    """Set the matplotlib defaults used by every figure of the book (size, resolution, fonts)."""
    plt.rcParams.update(
        {
            "figure.figsize": (6.0, 4.0),
            "figure.dpi": 110,
            "savefig.dpi": 110,
            "font.size": 10,
            "axes.titlesize": 11,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "image.cmap": "viridis",
        }
    )


def _as_matrix(name: str, matrix: object) -> np.ndarray:
    if isinstance(matrix, torch.Tensor):
        matrix = matrix.detach().cpu().numpy()
    if not isinstance(matrix, np.ndarray):
        raise TypeError(f"{name} must be a torch.Tensor or numpy.ndarray, got {type(matrix).__name__}")
    if matrix.ndim != 2:
        raise ValueError(f"{name} must be 2-D (rows, columns), got shape {matrix.shape}")
    return matrix


def heatmap(
    matrix: Matrix,
    ax: Axes | None = None,
    *,
    title: str | None = None,
    xlabel: str = "key position j",
    ylabel: str = "query position i",
    xticklabels: Sequence[str] | None = None,
    yticklabels: Sequence[str] | None = None,
    cmap: str | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    colorbar: bool = True,
    annotate: bool = False,
) -> Axes:
    """Draw one ``(R, C)`` matrix, e.g. attention weights with queries as rows and keys as columns.

    Args:
        matrix: ``(R, C)`` tensor or array.
        ax: axes to draw on (default: a new figure).
        title, xlabel, ylabel: text of the plot.
        xticklabels, yticklabels: one label per column / row (e.g. the tokens).
        cmap, vmin, vmax: colour map and range (default: matplotlib's, data range).
        colorbar: whether to add a colour bar.
        annotate: whether to print each value in its cell (for small matrices).

    Returns:
        The axes drawn on.

    Raises:
        TypeError: if ``matrix`` is not a tensor or array.
        ValueError: if ``matrix`` is not 2-D, or a list of tick labels does not have one label
            per row/column.
    """
    values = _as_matrix("matrix", matrix)
    ticks = ((xticklabels, values.shape[1], "x"), (yticklabels, values.shape[0], "y"))
    for labels, size, axis in ticks:
        if labels is not None and len(labels) != size:
            unit = "column" if axis == "x" else "row"
            raise ValueError(f"{axis}ticklabels must have {size} labels (one per {unit}), got {len(labels)}")
    if ax is None:
        _, ax = plt.subplots()
    image = ax.imshow(values, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest")
    for labels, size, axis in ticks:
        if labels is None:
            continue
        getattr(ax, f"set_{axis}ticks")(range(size))
        getattr(ax, f"set_{axis}ticklabels")(labels, rotation=45 if axis == "x" else 0)
    if annotate:
        middle = (np.nanmax(values) + np.nanmin(values)) / 2
        for (row, column), value in np.ndenumerate(values):
            colour = "black" if value > middle else "white"
            ax.text(column, row, f"{value:.2f}", ha="center", va="center", fontsize=8, color=colour)
    if colorbar:
        ax.figure.colorbar(image, ax=ax)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    return ax


TickLabels = Sequence[str] | Sequence[Sequence[str]] | None


def _per_panel(name: str, labels: TickLabels, count: int) -> list[Sequence[str] | None]:
    """Tick labels for each of ``count`` panels: one shared list, or one list per panel."""
    if labels is None:
        return [None] * count
    if all(isinstance(label, str) for label in labels):
        return [labels] * count  # type: ignore[list-item]
    if len(labels) != count:
        raise ValueError(
            f"{name} must be one list of labels for every panel or one list per panel ({count}), "
            f"got {len(labels)} lists"
        )
    return list(labels)  # type: ignore[arg-type]


def heatmaps(
    matrices: Sequence[Matrix],
    titles: Sequence[str] | None = None,
    *,
    ncols: int | None = None,
    share_scale: bool = True,
    figsize: tuple[float, float] | None = None,
    xticklabels: TickLabels = None,
    yticklabels: TickLabels = None,
    **heatmap_kwargs: object,
) -> Figure:
    """Draw several matrices side by side, optionally on one shared colour scale.

    Args:
        matrices: the ``(R, C)`` matrices.
        titles: one title per matrix.
        ncols: number of columns of the grid (default: all in one row).
        share_scale: use one ``vmin``/``vmax`` for all panels, so colours are comparable, and
            draw a single colour bar for the figure instead of one per panel.
        figsize: figure size (default: 3.6 inches per panel, 3.2 per row).
        xticklabels, yticklabels: one list of labels for all panels, or one list per panel
            (e.g. the tokens of each sentence).
        **heatmap_kwargs: passed on to :func:`heatmap`.

    Returns:
        The figure.

    Raises:
        ValueError: if ``matrices`` is empty, or ``titles`` or the per-panel tick labels have
            the wrong length.
    """
    values = [_as_matrix(f"matrices[{index}]", matrix) for index, matrix in enumerate(matrices)]
    if not values:
        raise ValueError("matrices must contain at least one matrix")
    if titles is not None and len(titles) != len(values):
        raise ValueError(f"titles must have one title per matrix ({len(values)}), got {len(titles)}")
    x_labels = _per_panel("xticklabels", xticklabels, len(values))
    y_labels = _per_panel("yticklabels", yticklabels, len(values))
    ncols = len(values) if ncols is None else check_int("ncols", ncols, minimum=1)
    nrows = -(-len(values) // ncols)
    figsize = figsize or (3.6 * ncols, 3.2 * nrows)
    fig, axes = plt.subplots(nrows, ncols, figsize=figsize, squeeze=False, layout="constrained")
    colorbar = bool(heatmap_kwargs.pop("colorbar", True))
    if share_scale:
        heatmap_kwargs.setdefault("vmin", min(float(np.nanmin(v)) for v in values))
        heatmap_kwargs.setdefault("vmax", max(float(np.nanmax(v)) for v in values))
    for index, ax in enumerate(axes.flat):
        if index >= len(values):
            ax.set_axis_off()
            continue
        title = titles[index] if titles is not None else None
        heatmap(
            values[index],
            ax,
            title=title,
            xticklabels=x_labels[index],
            yticklabels=y_labels[index],
            colorbar=colorbar and not share_scale,
            **heatmap_kwargs,  # type: ignore[arg-type]
        )
    if colorbar and share_scale:
        fig.colorbar(axes.flat[0].images[0], ax=axes.ravel().tolist())
    return fig


# ---- figure kinds added by the third editions -------------------------------------------------
# One section per part of the book, so that the editions add their functions without touching
# each other's lines. A function reused by a later part stays where it was first written.

# ---- chapters 1–3 (Parts I–II) ----


# ---- chapter 4 (Part III) ----


# ---- chapter 5 ----


# ---- chapter 6 ----


# ---- chapter 7 ----


# ---- chapters 8–9 (Part V) ----


def accuracy_by_length(
    panels: dict[str, dict[str, tuple[Sequence[float], Sequence[float], Sequence[float]]]],
    scales: Sequence[int],
    *,
    chance: float,
    ylabel: str = "accuracy beyond L",
    ncols: int | None = None,
) -> tuple[Figure, np.ndarray]:
    """Small multiples of a metric against the evaluation length, one panel per task.

    Args:
        panels: ``{title: {series: (mean, low, high)}}``, each sequence with one value per scale;
            the band between ``low`` and ``high`` is drawn around the mean.
        scales: the evaluation lengths as multiples ``s`` of the training length (x axis, log 2).
        chance: the chance level, drawn as a dotted line in every panel.
        ylabel: label of the y axis.
        ncols: panels per row (default: all in one row).

    Returns:
        ``(fig, axes)`` with ``axes`` a 1-D array of the panels.

    Raises:
        ValueError: if there is no panel, or a series does not have one value per scale.
    """
    if not panels:
        raise ValueError("panels must not be empty")
    ncols = check_int("ncols", ncols if ncols is not None else len(panels), minimum=1)
    nrows = -(-len(panels) // ncols)
    fig, grid = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.4 * nrows), sharey=True,
                             squeeze=False, layout="constrained")
    axes = grid.ravel()
    for ax, (title, series) in zip(axes, panels.items(), strict=False):
        for name, (mean, low, high) in series.items():
            if not len(mean) == len(low) == len(high) == len(scales):
                raise ValueError(f"series {name!r} of {title!r} needs {len(scales)} values per statistic")
            (line,) = ax.plot(scales, mean, marker="o", markersize=3, label=name)
            ax.fill_between(scales, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
        ax.axhline(chance, color="gray", linestyle=":", linewidth=1, label="chance")
        ax.set_xscale("log", base=2)
        ax.set_xticks(list(scales), [f"{s}L" if s > 1 else "L" for s in scales])
        ax.set(title=title, xlabel="evaluation length")
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    for ax in grid[:, 0]:
        ax.set_ylabel(ylabel)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 8), fontsize=8)
    return fig, axes


def loss_curves(
    curves: dict[str, list[Sequence[float]]],
    *,
    every: int,
    converged: dict[str, list[bool]] | None = None,
    ncols: int = 4,
    title: str | None = None,
) -> tuple[Figure, np.ndarray]:
    """Small multiples of training-loss curves: one panel per model family, one line per seed.

    Args:
        curves: ``{panel title: [loss curve of each seed]}``; point ``i`` of a curve is the mean
            loss of steps ``i * every + 1 .. (i + 1) * every``.
        every: steps per point (>= 1).
        converged: optional ``{panel title: [converged?]}``; a seed that did not converge is
            drawn dashed and counted in the panel's title.
        ncols: panels per row.
        title: optional title of the figure.

    Returns:
        ``(fig, axes)`` with ``axes`` a 1-D array of the panels (log-scale loss).

    Raises:
        ValueError: if ``curves`` is empty or ``converged`` does not match it.
    """
    if not curves:
        raise ValueError("curves must not be empty")
    every = check_int("every", every, minimum=1)
    ncols = check_int("ncols", min(ncols, len(curves)), minimum=1)
    nrows = -(-len(curves) // ncols)
    fig, grid = plt.subplots(nrows, ncols, figsize=(2.6 * ncols, 2.1 * nrows), sharex=True, sharey=True,
                             squeeze=False, layout="constrained")
    axes = grid.ravel()
    for ax, (name, seeds) in zip(axes, curves.items(), strict=False):
        flags = converged.get(name, [True] * len(seeds)) if converged is not None else [True] * len(seeds)
        if len(flags) != len(seeds):
            raise ValueError(f"converged[{name!r}] needs one flag per seed ({len(seeds)})")
        for curve, done in zip(seeds, flags, strict=True):
            steps = every * (np.arange(len(curve)) + 1)
            ax.plot(steps, curve, linewidth=1, linestyle="-" if done else "--")
        failed = flags.count(False)
        ax.set_title(name + (f" ({failed} not converged)" if failed else ""), fontsize=9)
        ax.set_yscale("log")
    for ax in axes[len(curves):]:
        ax.set_visible(False)
    for ax in grid[-1]:
        ax.set_xlabel("step")
    for ax in grid[:, 0]:
        ax.set_ylabel("training loss")
    if title:
        fig.suptitle(title)
    return fig, axes


def loss_by_position(
    curves: dict[str, tuple[Sequence[float], Sequence[float], Sequence[float], Sequence[float]]],
    *,
    floor: float,
    train_len: int,
    ylabel: str = "loss at position t (nats)",
) -> tuple[Figure, Axes]:
    """A metric along the positions of long sequences, one line (and band) per model family.

    Args:
        curves: ``{name: (positions, mean, low, high)}``, equal lengths within each entry.
        floor: the best achievable value, drawn dashed (e.g. the entropy of a language).
        train_len: the training length, drawn as a dotted vertical line.
        ylabel: label of the y axis.

    Returns:
        ``(fig, ax)``; the x axis (positions) is logarithmic, base 2.

    Raises:
        ValueError: if ``curves`` is empty or an entry's sequences differ in length.
    """
    if not curves:
        raise ValueError("curves must not be empty")
    train_len = check_int("train_len", train_len, minimum=1)
    fig, ax = plt.subplots(figsize=(9, 3.8), layout="constrained")
    for name, (positions, mean, low, high) in curves.items():
        if not len(positions) == len(mean) == len(low) == len(high):
            raise ValueError(f"the sequences of {name!r} must have equal lengths")
        (line,) = ax.plot(positions, mean, label=name)
        ax.fill_between(positions, low, high, color=line.get_color(), alpha=0.15, linewidth=0)
    ax.axhline(floor, color="black", linestyle="--", linewidth=1, label="best possible")
    ax.axvline(train_len, color="gray", linestyle=":", linewidth=1)
    ax.set_xscale("log", base=2)
    ax.set(xlabel=f"position t (dotted: training length L = {train_len})", ylabel=ylabel)
    ax.legend(fontsize=8, ncol=2)
    return fig, ax


__all__ += ["accuracy_by_length", "loss_by_position", "loss_curves"]
