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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

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
# Curves against position or offset, several per panel, and the windowed summaries of a curve
# that oscillates too fast to read (a band between its extremes around its window average).

Vector = torch.Tensor | np.ndarray | Sequence[float]
_SCALES = ("linear", "log", "log2", "symlog")


def _as_vector(name: str, values: object) -> np.ndarray:
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    if isinstance(values, (list, tuple)):
        values = np.asarray(values, dtype=float)
    if not isinstance(values, np.ndarray):
        raise TypeError(f"{name} must be a tensor, an array or a sequence of numbers, got {type(values).__name__}")
    if values.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {values.shape}")
    return values


@dataclass(frozen=True)
class Curve:
    """One line of a :class:`LinePanel`: ``y`` against ``x``, drawn with matplotlib's ``style``.

    ``style`` is passed to ``Axes.plot`` (``color``, ``linewidth``, ``linestyle``, ``marker``,
    ``drawstyle="steps-post"`` for a step curve, ...); ``label`` names the curve in the legend.
    """

    x: Vector
    y: Vector
    label: str | None = None
    style: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Reference:
    """A reference line across a panel: horizontal at ``y = value`` or vertical at ``x = value``.

    ``text`` is written next to the line (at the left end of a horizontal one, at the top of a
    vertical one); ``label`` names it in the legend instead.
    """

    value: float
    axis: str = "y"
    text: str | None = None
    label: str | None = None
    style: Mapping[str, Any] = field(default_factory=lambda: {"color": "0.5", "linestyle": "--", "linewidth": 1})


@dataclass(frozen=True)
class LinePanel:
    """One axes of :func:`line_panels`: its curves, reference lines, labels and scales.

    ``xscale``/``yscale`` are ``"linear"``, ``"log"`` (base 10), ``"log2"`` or ``"symlog"``;
    ``legend`` is the legend's location (``None``: no legend; it is drawn only if something
    has a label); ``title_size`` and ``legend_size`` are font sizes (default: the book style's
    title size, 8 points for the legend).
    """

    curves: Sequence[Curve]
    title: str | None = None
    xlabel: str = ""
    ylabel: str = ""
    xscale: str = "linear"
    yscale: str = "linear"
    xlim: tuple[float, float] | None = None
    ylim: tuple[float, float] | None = None
    references: Sequence[Reference] = ()
    legend: str | None = "best"
    title_size: float | None = None
    legend_size: float = 8


def _set_scale(ax: Axes, axis: str, scale: str) -> None:
    if scale not in _SCALES:
        raise ValueError(f"{axis}scale must be one of {_SCALES}, got {scale!r}")
    setter = getattr(ax, f"set_{axis}scale")
    setter("log", base=2) if scale == "log2" else setter(scale)


def _draw_panel(ax: Axes, panel: LinePanel, index: int) -> None:
    if not isinstance(panel, LinePanel):
        raise TypeError(f"panels[{index}] must be a LinePanel, got {type(panel).__name__}")
    for number, curve in enumerate(panel.curves):
        x = _as_vector(f"panels[{index}].curves[{number}].x", curve.x)
        y = _as_vector(f"panels[{index}].curves[{number}].y", curve.y)
        if x.shape != y.shape:
            raise ValueError(f"panels[{index}].curves[{number}]: x and y differ in length, {len(x)} and {len(y)}")
        ax.plot(x, y, label=curve.label, **curve.style)
    for reference in panel.references:
        if reference.axis not in ("x", "y"):
            raise ValueError(f"a Reference's axis must be 'x' or 'y', got {reference.axis!r}")
        line = ax.axhline if reference.axis == "y" else ax.axvline
        line(reference.value, label=reference.label, **reference.style)
    _set_scale(ax, "x", panel.xscale)
    _set_scale(ax, "y", panel.yscale)
    ax.set(title=panel.title, xlabel=panel.xlabel, ylabel=panel.ylabel)
    if panel.xlim is not None:
        ax.set_xlim(panel.xlim)
    if panel.ylim is not None:
        ax.set_ylim(panel.ylim)
    for reference in panel.references:  # after the limits, so the text sits inside the axes
        if reference.text is not None:
            if reference.axis == "y":
                ax.text(ax.get_xlim()[0], reference.value, reference.text, va="bottom", color="0.3")
            else:
                ax.text(reference.value, ax.get_ylim()[1], reference.text, ha="right", va="top", color="0.3")
    if panel.title_size is not None:
        ax.title.set_fontsize(panel.title_size)
    if panel.legend is not None and ax.get_legend_handles_labels()[1]:
        ax.legend(loc=cast(Any, panel.legend), fontsize=panel.legend_size)


def line_panels(
    panels: Sequence[LinePanel],
    *,
    ncols: int | None = None,
    figsize: tuple[float, float] | None = None,
    suptitle: str | None = None,
) -> Figure:
    """Draw a grid of panels of curves, e.g. scores against the key position for several heads.

    Args:
        panels: the :class:`LinePanel` of every axes, row by row.
        ncols: number of columns of the grid (default: all in one row).
        figsize: figure size (default: 3.7 inches per column, 3.2 per row).
        suptitle: title of the whole figure.

    Returns:
        The figure; ``fig.axes[k]`` is panel ``k`` (unused cells of the grid are hidden).

    Raises:
        ValueError: if ``panels`` is empty, a curve's ``x`` and ``y`` differ in length or are
            not 1-D, a scale is unknown, or a reference line's axis is not ``"x"``/``"y"``.
        TypeError: if a panel is not a :class:`LinePanel` or a curve's data is not numeric.
    """
    panels = list(panels)
    if not panels:
        raise ValueError("panels must contain at least one LinePanel")
    ncols = len(panels) if ncols is None else check_int("ncols", ncols, minimum=1)
    nrows = -(-len(panels) // ncols)
    figsize = figsize or (3.7 * ncols, 3.2 * nrows)
    fig, axes = plt.subplots(nrows, ncols, figsize=figsize, squeeze=False, layout="constrained")
    for index, ax in enumerate(axes.flat):
        if index < len(panels):
            _draw_panel(ax, panels[index], index)
        else:
            ax.remove()
    if suptitle is not None:
        fig.suptitle(suptitle)
    return fig


@dataclass(frozen=True)
class WindowSummary:
    """A curve summarised over windows of its ``x``: centre, mean, minimum and maximum of each."""

    centres: np.ndarray
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray


def log_windows(x: Vector, y: Vector, *, per_decade: int = 20) -> WindowSummary:
    """Summarise ``y(x)`` over windows of equal width on a logarithmic ``x`` axis.

    A curve that oscillates faster than a figure can show (a score against distances up to
    10^5) is drawn as its window average with a band between its window extremes.

    Args:
        x: positive, increasing positions (e.g. distances ``1 .. N``).
        y: the values at ``x``.
        per_decade: number of windows per factor of 10 of ``x`` (>= 1); windows that contain
            no integer ``x`` are dropped.

    Returns:
        A :class:`WindowSummary` with one entry per non-empty window.

    Raises:
        ValueError: if ``x`` and ``y`` differ in length, are empty, or ``x`` is not positive
            and increasing.
    """
    per_decade = check_int("per_decade", per_decade, minimum=1)
    xs, ys = _as_vector("x", x).astype(float), _as_vector("y", y).astype(float)
    if xs.shape != ys.shape or xs.size == 0:
        raise ValueError(f"x and y must be non-empty and of equal length, got {xs.size} and {ys.size}")
    if xs[0] <= 0 or np.any(np.diff(xs) <= 0):
        raise ValueError("x must be positive and increasing (windows are taken on a log scale)")
    decades = np.log10(xs[-1] / xs[0]) if xs[-1] > xs[0] else 0.0
    count = max(1, int(np.ceil(decades * per_decade)))
    edges = np.unique(np.round(xs[0] * np.logspace(0, decades, count + 1)))
    window = np.clip(np.searchsorted(edges, xs, side="right") - 1, 0, None)
    used = np.unique(window)
    reduce: list[tuple[Callable[[np.ndarray], Any], np.ndarray]] = [
        (np.mean, xs),
        (np.mean, ys),
        (np.min, ys),
        (np.max, ys),
    ]
    centres, mean, low, high = (np.array([f(v[window == w]) for w in used]) for f, v in reduce)
    return WindowSummary(centres=centres, mean=mean, low=low, high=high)


def band_traces(
    summary: WindowSummary,
    *,
    marker: tuple[float, float] | None = None,
    colour: str = "#1f77b4",
    marker_name: str = "marker",
) -> list[Any]:
    """Plotly traces of a :class:`WindowSummary`: the band between its extremes, its mean, a marker.

    Args:
        summary: the windowed curve (see :func:`log_windows`).
        marker: optional ``(x, y)`` point drawn as a red dot (e.g. where the curve first falls
            below a level).
        colour: colour of the mean line and (translucent) of the band.
        marker_name: hover text of the marker.

    Returns:
        ``[band, mean]`` or ``[band, mean, marker]`` plotly ``Scatter`` traces.
    """
    import plotly.graph_objects as go

    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    x = summary.centres.round(1)
    traces = [
        go.Scatter(
            x=[*x, *x[::-1]],
            y=[*summary.high.round(4), *summary.low.round(4)[::-1]],
            fill="toself",
            fillcolor=f"rgba({red}, {green}, {blue}, 0.25)",
            line={"width": 0},
            hoverinfo="skip",
            name="range in a window",
        ),
        go.Scatter(
            x=x,
            y=summary.mean.round(4),
            name="window average",
            line={"color": colour, "width": 2.5},
            customdata=np.stack((summary.low, summary.high), -1).round(4),
            hovertemplate="x ≈ %{x:,.0f}<br>average: %{y:.3f}<br>range: %{customdata[0]:.3f} "
            "to %{customdata[1]:.3f}<extra></extra>",
        ),
    ]
    if marker is not None:
        traces.append(
            go.Scatter(
                x=[marker[0]],
                y=[marker[1]],
                mode="markers",
                name=marker_name,
                marker={"color": "#d62728", "size": 10},
                hovertemplate=f"{marker_name} at %{{x:,}}<extra></extra>",
            )
        )
    return traces


__all__ += ["Curve", "LinePanel", "Reference", "WindowSummary", "band_traces", "line_panels", "log_windows"]


# ---- chapters 8–9 (Part V) ----
