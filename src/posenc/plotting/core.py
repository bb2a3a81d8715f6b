"""The core of the book's figures: the book style, the converters of the data a chapter passes in,
and the generic figures that every part draws with (heatmaps of matrices, labelled curves).

Shape legend:
    - ``R``, ``C``: rows and columns of a matrix shown as a heatmap
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .._validation import check_int

__all__ = ["curves", "heatmap", "heatmaps", "use_book_style", "xy_curves"]


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


# A 1-D series of numbers (a tensor, an array, or a list, tuple or range).
Vector = torch.Tensor | np.ndarray | Sequence[float]


def _as_vector(name: str, values: object) -> np.ndarray:
    """``values`` as a 1-D float array (the one converter of every module of this package).

    Raises:
        TypeError: if ``values`` is not a tensor, an array or a sequence of numbers.
        ValueError: if it is not 1-D.
    """
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().double().numpy()
    if isinstance(values, (list, tuple, range)):
        try:
            values = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a tensor, an array or a sequence of numbers") from None
    if not isinstance(values, np.ndarray):
        raise TypeError(f"{name} must be a tensor, an array or a sequence of numbers, got {type(values).__name__}")
    if values.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {values.shape}")
    try:
        return values.astype(float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a tensor, an array or a sequence of numbers") from None


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

# matplotlib's diverging colour maps, and their reversals: heatmaps centres them on 0 by default.
_DIVERGING_NAMES = "BrBG PRGn PiYG PuOr RdBu RdGy RdYlBu RdYlGn Spectral berlin bwr coolwarm managua seismic vanimo"
_DIVERGING_COLOUR_MAPS = frozenset(name + suffix for name in _DIVERGING_NAMES.split() for suffix in ("", "_r"))


def _is_diverging(cmap: object) -> bool:
    """Whether ``cmap`` (a name or a matplotlib colour map) is one of matplotlib's diverging maps."""
    return getattr(cmap, "name", cmap) in _DIVERGING_COLOUR_MAPS


def _largest_magnitude(values: np.ndarray) -> float:
    """``max |value|`` ignoring NaNs; 1 for a matrix of zeros or NaNs (a colour scale needs a width)."""
    finite = np.abs(values[np.isfinite(values)])
    reach = float(finite.max()) if finite.size else 0.0
    return reach if reach > 0 else 1.0


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
    centre: bool | None = None,
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
        centre: put 0 at the middle colour of the map, with the symmetric limits
            ``±max |value|`` over all panels (``share_scale``) or of each panel. By default
            exactly when ``cmap`` is one of matplotlib's diverging maps (``RdBu_r``,
            ``coolwarm``, ``bwr``, ``seismic``, ...) and no ``vmin`` or ``vmax`` is given: a
            diverging map reads as "negative, zero, positive" only if 0 sits at its middle.
        figsize: figure size (default: 3.6 inches per panel, 3.2 per row).
        xticklabels, yticklabels: one list of labels for all panels, or one list per panel
            (e.g. the tokens of each sentence).
        **heatmap_kwargs: passed on to :func:`heatmap` (``cmap``, ``vmin``, ``vmax``, ...).

    Returns:
        The figure.

    Raises:
        ValueError: if ``matrices`` is empty, ``titles`` or the per-panel tick labels have the
            wrong length, or ``centre=True`` comes with a ``vmin`` or ``vmax``.
    """
    values = [_as_matrix(f"matrices[{index}]", matrix) for index, matrix in enumerate(matrices)]
    if not values:
        raise ValueError("matrices must contain at least one matrix")
    if titles is not None and len(titles) != len(values):
        raise ValueError(f"titles must have one title per matrix ({len(values)}), got {len(titles)}")
    limits_given = heatmap_kwargs.get("vmin") is not None or heatmap_kwargs.get("vmax") is not None
    if centre and limits_given:
        raise ValueError("centre=True sets the colour limits itself: give it without vmin and vmax")
    if centre is None:
        centre = _is_diverging(heatmap_kwargs.get("cmap")) and not limits_given
    x_labels = _per_panel("xticklabels", xticklabels, len(values))
    y_labels = _per_panel("yticklabels", yticklabels, len(values))
    ncols = len(values) if ncols is None else check_int("ncols", ncols, minimum=1)
    nrows = -(-len(values) // ncols)
    figsize = figsize or (3.6 * ncols, 3.2 * nrows)
    fig, axes = plt.subplots(nrows, ncols, figsize=figsize, squeeze=False, layout="constrained")
    colorbar = bool(heatmap_kwargs.pop("colorbar", True))
    panel_limits: list[dict[str, float]] = [{} for _ in values]
    if centre:
        reaches = [_largest_magnitude(v) for v in values]
        if share_scale:
            reaches = [max(reaches)] * len(values)
        panel_limits = [{"vmin": -reach, "vmax": reach} for reach in reaches]
    elif share_scale:
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
            **{**heatmap_kwargs, **panel_limits[index]},  # type: ignore[arg-type]
        )
    if colorbar and share_scale:
        fig.colorbar(axes.flat[0].images[0], ax=axes.ravel().tolist())
    return fig


def curves(
    series: Mapping[str, Vector | tuple[Vector, Vector]],
    ax: Axes | None = None,
    *,
    xlabel: str,
    ylabel: str,
    title: str | None = None,
    marker: str = ".",
    styles: Mapping[str, Mapping[str, object]] | None = None,
    vlines: Sequence[float] | Mapping[str, float] = (),
    hlines: Sequence[float] = (),
    baselines: Mapping[str, float] | None = None,
    logy: bool = False,
) -> Axes:
    """Draw labelled curves on one axes: a quantity by position, by distance, by step ...

    Args:
        series: ``label -> y`` (drawn at x = 0, 1, ...) or ``label -> (x, y)``, in drawing order.
        ax: axes to draw on (default: a new figure).
        xlabel, ylabel, title: text of the plot.
        marker: marker of every curve (``""`` for none).
        styles: extra matplotlib keyword arguments for some curves, by label (e.g. a grey
            reference curve without markers: ``{"1/(i+1)": {"color": "0.6", "marker": ""}}``).
        vlines: x positions of dashed vertical marks (a training length, a distance 2r): black,
            or, given as ``label -> x``, in the colour of the curve of that label.
        hlines: y values of thin grey horizontal lines (e.g. 0).
        baselines: ``label -> y`` of dotted, labelled horizontal lines (e.g. a chance level).
        logy: logarithmic y axis.

    Returns:
        The axes drawn on, with a legend when there is more than one labelled line.

    Raises:
        TypeError: if a series is not numeric.
        ValueError: if ``series`` is empty, a curve's x and y differ in length, or a label of
            ``styles`` or of ``vlines`` names no curve.
    """
    if not series:
        raise ValueError("series must hold at least one curve, got none")
    styles = dict(styles or {})
    unknown = [label for label in [*styles, *(vlines if isinstance(vlines, Mapping) else ())] if label not in series]
    if unknown:
        raise ValueError(f"styles and vlines may only name curves of series, got unknown labels {unknown}")
    if ax is None:
        _, ax = plt.subplots()
    colours: dict[str, object] = {}
    for label, values in series.items():
        if isinstance(values, tuple):
            x, y = _as_vector(f"x of {label!r}", values[0]), _as_vector(f"y of {label!r}", values[1])
            if len(x) != len(y):
                raise ValueError(f"curve {label!r}: x has {len(x)} values and y has {len(y)}")
        else:
            y = _as_vector(f"series[{label!r}]", values)
            x = np.arange(len(y))
        keywords: dict[str, object] = {"marker": marker, "label": label, **styles.get(label, {})}
        (line,) = ax.plot(x, y, **keywords)  # type: ignore[arg-type]
        colours[label] = line.get_color()
    for value in hlines:
        ax.axhline(value, color="grey", linewidth=0.8)
    for label, value in (baselines or {}).items():
        ax.axhline(value, color="grey", linestyle=":", label=label)
    marks: list[tuple[object, float]] = (
        [(colours[label], value) for label, value in vlines.items()]
        if isinstance(vlines, Mapping)
        else [("black", value) for value in vlines]
    )
    for colour, value in marks:
        ax.axvline(value, color=colour, linestyle="--", linewidth=0.8)
    if logy:
        ax.set_yscale("log")
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    if len(series) + len(baselines or {}) > 1:
        ax.legend(fontsize="small")
    return ax


def xy_curves(
    x: Vector | Mapping[str, Vector],
    ys: Mapping[str, Vector],
    ax: Axes | None = None,
    *,
    xlabel: str,
    ylabel: str,
    title: str | None = None,
    styles: Sequence[str] | None = None,
    logy: bool = False,
    levels: Mapping[str, float] | None = None,
    vlines: Sequence[float] = (),
    legend: str | None = "best",
) -> Axes:
    """Draw named curves against one shared ``x``, or each against its own (d2l's ``plot``).

    Args:
        x: the ``(P,)`` abscissae of every curve, or a mapping with one ``x`` per curve label.
        ys: label -> ``(P,)`` values; the label goes into the legend.
        ax: axes to draw on (default: a new figure).
        xlabel, ylabel, title: text of the plot.
        styles: one matplotlib format string per curve (e.g. ``"o"``, ``"--"``).
        logy: logarithmic vertical axis.
        levels: label -> height of a dashed horizontal reference line, labelled at its left end.
        vlines: positions of dashed vertical reference lines (e.g. the training length).
        legend: legend location (``"outside"``: to the right of the axes), or ``None`` for none.

    Returns:
        The axes drawn on.

    Raises:
        TypeError: if a vector is not a tensor, array or sequence of numbers.
        ValueError: if ``ys`` is empty, a curve and its ``x`` differ in length, ``x`` lacks a
            label of ``ys``, or ``styles`` does not have one entry per curve.
    """
    if not ys:
        raise ValueError("ys must hold at least one curve")
    if styles is not None and len(styles) != len(ys):
        raise ValueError(f"styles must have one format per curve ({len(ys)}), got {len(styles)}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 3.4), layout="constrained")
    for index, (label, values) in enumerate(ys.items()):
        y_values = _as_vector(f"ys[{label!r}]", values)
        if isinstance(x, Mapping):
            if label not in x:
                raise ValueError(f"x has no abscissae for the curve {label!r}")
            x_values = _as_vector(f"x[{label!r}]", x[label])
        else:
            x_values = _as_vector("x", x)
        if len(x_values) != len(y_values):
            raise ValueError(f"curve {label!r} has {len(y_values)} values for {len(x_values)} abscissae")
        style = styles[index] if styles is not None else "-"
        ax.plot(x_values, y_values, style, markersize=4, label=label)
    if logy:
        ax.set_yscale("log")
    for name, level in (levels or {}).items():
        ax.axhline(level, color="0.6", linestyle="--", linewidth=1)
        ax.annotate(
            name,
            (0.01, level),
            xycoords=("axes fraction", "data"),
            color="0.4",
            textcoords="offset points",
            xytext=(0, 3),
        )
    for position in vlines:
        ax.axvline(position, color="0.5", linestyle="--", linewidth=1)
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    if legend == "outside":
        ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8)
    elif legend is not None:
        ax.legend(loc=legend, fontsize=8)  # type: ignore[call-overload]
    return ax


def _panel_grid(count: int, columns: int | None) -> tuple[Figure, np.ndarray, np.ndarray]:
    """A constrained grid for ``count`` accuracy panels, ``columns`` per row (default: one row), sharing y.

    Returns ``(fig, grid, axes)``: the 2-D grid and its panels as a 1-D array (the spare ones included).
    """
    columns = check_int("columns", columns if columns is not None else count, minimum=1)
    rows = -(-count // columns)
    fig, grid = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.4 * rows), sharey=True,
                             layout="constrained", squeeze=False)
    return fig, grid, grid.ravel()


def _finish_panels(fig: Figure, grid: np.ndarray, count: int, ylabel: str, handles: dict[str, Any],
                   legend_columns: int) -> np.ndarray:
    """Hide the spare panels, label the first column and put one legend below them all; return the panels."""
    axes = grid.ravel()
    for ax in axes[count:]:
        ax.set_visible(False)
    for ax in grid[:, 0]:
        ax.set_ylabel(ylabel)
    fig.legend(list(handles.values()), list(handles), loc="outside lower center",
               ncol=min(len(handles), legend_columns), fontsize=8)
    return axes[:count]
