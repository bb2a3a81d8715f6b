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

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ._validation import check_int

if TYPE_CHECKING:
    import plotly.graph_objects as go

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
# Chapters 1–2: labelled curves, histograms of samples, cosine-similarity heatmaps of position
# tables, and the walk of a table's rows on a plane (interactive).

__all__ += ["curves", "histograms", "pair_walk", "similarity_heatmaps"]

Vector = Sequence[float] | torch.Tensor | np.ndarray


def _as_vector(name: str, values: object) -> np.ndarray:
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a sequence of numbers, a tensor or an array") from None
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence, got shape {array.shape}")
    return array


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


def histograms(
    samples: Mapping[str, Vector],
    ax: Axes | None = None,
    *,
    bins: Vector | int = 40,
    xlabel: str,
    ylabel: str = "density",
) -> Axes:
    """Draw one step histogram (a density) per labelled sample, on shared bins.

    Args:
        samples: ``label -> values``.
        ax: axes to draw on (default: a new figure).
        bins: the bin edges, or a number of equal bins over the range of all samples.
        xlabel, ylabel: axis labels.

    Returns:
        The axes drawn on, with a legend.

    Raises:
        TypeError: if a sample is not numeric.
        ValueError: if ``samples`` is empty or a sample is not a non-empty 1-D sequence.
    """
    if not samples:
        raise ValueError("samples must hold at least one labelled sample, got none")
    values = {label: _as_vector(f"samples[{label!r}]", sample) for label, sample in samples.items()}
    if isinstance(bins, int):
        edges = np.linspace(min(v.min() for v in values.values()), max(v.max() for v in values.values()), bins + 1)
    else:
        edges = _as_vector("bins", bins)
    if ax is None:
        _, ax = plt.subplots()
    for label, sample in values.items():
        ax.hist(sample, bins=list(edges), density=True, histtype="step", label=label)
    ax.set(xlabel=xlabel, ylabel=ylabel)
    ax.legend(fontsize="small")
    return ax


def similarity_heatmaps(
    tables: Sequence[Matrix],
    titles: Sequence[str] | None = None,
    *,
    boundary: int | None = None,
    figsize: tuple[float, float] | None = None,
) -> Figure:
    """Cosine similarities of all pairs of rows of position tables, side by side on one scale.

    Panel ``k`` shows the ``(N_k, N_k)`` matrix ``cos(p_i, p_j)`` of table ``k`` on a diverging
    scale from -1 to 1.

    Args:
        tables: ``(N_k, d_k)`` position tables, one row per position.
        titles: one title per table.
        boundary: a number of rows ``B`` (e.g. the training length): dashed lines between rows
            ``B - 1`` and ``B`` on every panel whose table has more than ``B`` rows.
        figsize: figure size (default: 3.8 inches per panel).

    Returns:
        The figure.

    Raises:
        TypeError: if a table is not a tensor or array.
        ValueError: if ``tables`` is empty, a table is not 2-D, or ``boundary`` is not positive.
    """
    grams = []
    for index, table in enumerate(tables):
        rows = torch.as_tensor(_as_matrix(f"tables[{index}]", table), dtype=torch.float64)
        unit = torch.nn.functional.normalize(rows, dim=-1)
        grams.append(unit @ unit.T)
    if not grams:
        raise ValueError("tables must contain at least one table")
    if boundary is not None:
        boundary = check_int("boundary", boundary, minimum=1)
    fig = heatmaps(
        grams,
        titles,
        figsize=figsize or (3.8 * len(grams), 3.6),
        cmap="RdBu_r",
        vmin=-1.0,
        vmax=1.0,
        xlabel="position j",
        ylabel="position i",
    )
    for ax, gram in zip(fig.axes, grams, strict=False):
        if boundary is not None and len(gram) > boundary:
            ax.axhline(boundary - 0.5, color="black", linestyle="--", linewidth=0.8)
            ax.axvline(boundary - 0.5, color="black", linestyle="--", linewidth=0.8)
    return fig


def pair_walk(
    points: Matrix,
    *,
    window: int = 32,
    xlabel: str = "first direction",
    ylabel: str = "second direction",
) -> go.Figure:
    """An interactive walk through the rows of a table projected on a plane, ``window`` at a time.

    Every row is a grey dot; a slider selects ``window`` consecutive rows, drawn as a path of
    points coloured from dark to light. Hovering over a point shows its row and the angle it has
    turned about the origin since the row before, wrapped into ``[-pi, pi)``.

    Args:
        points: ``(N, 2)`` coordinates of the rows on the plane (e.g. on two principal
            directions of the table).
        window: rows per slider step, ``1 <= window <= N``; the last step may hold fewer.
        xlabel, ylabel: axis titles.

    Returns:
        A ``plotly.graph_objects.Figure`` (wrap it with :func:`posenc.interactive_figure`).

    Raises:
        TypeError: if ``points`` is not a tensor or array, or ``window`` not an int.
        ValueError: if ``points`` is not ``(N, 2)`` or ``window`` is out of range.
    """
    from .interactive import _plotly_graph_objects, slider_figure

    coordinates = _as_matrix("points", points).astype(float)
    if coordinates.shape[1] != 2 or len(coordinates) < 2:
        raise ValueError(f"points must have shape (N, 2) with N >= 2, got {coordinates.shape}")
    window = check_int("window", window, minimum=1)
    if window > len(coordinates):
        raise ValueError(f"window must be at most the number of rows ({len(coordinates)}), got {window}")
    go_module = _plotly_graph_objects()
    angles = np.arctan2(coordinates[:, 1], coordinates[:, 0])
    turns = np.remainder(np.diff(angles) + np.pi, 2 * np.pi) - np.pi
    reach = 1.1 * float(np.abs(coordinates).max())
    ring = go_module.Scatter(
        x=coordinates[:, 0], y=coordinates[:, 1], mode="markers",
        marker={"size": 3, "color": "lightgrey"}, hoverinfo="skip",
    )  # fmt: skip
    steps = []
    for start in range(0, len(coordinates), window):
        rows = range(start, min(start + window, len(coordinates)))
        labels = [
            f"row {row}" + (f": turned {turns[row - 1]:.2f} rad since row {row - 1}" if row else "") for row in rows
        ]
        walk = go_module.Scatter(
            x=coordinates[rows.start : rows.stop, 0],
            y=coordinates[rows.start : rows.stop, 1],
            mode="lines+markers",
            line={"width": 1, "color": "grey"},
            marker={"size": 7, "color": list(rows), "colorscale": "Viridis"},
            text=labels,
            hovertemplate="%{text}<extra></extra>",
        )
        steps.append((f"{rows.start}-{rows.stop - 1}", [ring, walk]))
    return slider_figure(
        steps,
        slider_label="rows ",
        layout={
            "template": "plotly_white",
            "margin": {"l": 60, "r": 20, "t": 20, "b": 40},
            "showlegend": False,
            "xaxis": {"title": {"text": xlabel}, "range": [-reach, reach]},
            "yaxis": {"title": {"text": ylabel}, "range": [-reach, reach], "scaleanchor": "x"},
        },
    )


# ---- chapter 4 (Part III) ----


# ---- chapter 5 ----


# ---- chapter 6 ----


# ---- chapter 7 ----


# ---- chapters 8–9 (Part V) ----
