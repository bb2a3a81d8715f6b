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
from typing import TYPE_CHECKING, Any, cast

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


# A 1-D series of numbers (a tensor, an array, or a list, tuple or range).
Vector = torch.Tensor | np.ndarray | Sequence[float]


def _as_vector(name: str, values: object) -> np.ndarray:
    """``values`` as a 1-D float array (the one converter of every section of this module).

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
        A ``plotly.graph_objects.Figure`` (wrap it with :func:`posenc.interactive.interactive_figure`).

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

# Chapter 3 (sinusoidal encoding): curves against a position, offset or column; a pair on its
# circle; the Gram matrix beside its profile by offset; the extrapolation panels; and the two
# slider figures (a table per base, a curve per base).





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


def gram_by_offset(gram: Matrix, offsets: Vector, profile: Vector, *, profile_label: str) -> Figure:
    """The Gram matrix of a table (left) and its entries against the offset ``j - i`` (right).

    Args:
        gram: the ``(R, R)`` matrix of dot products of rows ``i`` and ``j``.
        offsets: the ``(P,)`` offsets at which ``profile`` is given (any range).
        profile: the ``(P,)`` predicted dot product at each offset, drawn as a line; the
            entries of ``gram`` are drawn as dots at their offsets on top of it.
        profile_label: legend label of the line.

    Returns:
        The figure, with the heatmap axes first.

    Raises:
        ValueError: if ``gram`` is not square, or ``offsets`` and ``profile`` differ in length.
    """
    values = _as_matrix("gram", gram)
    if values.shape[0] != values.shape[1]:
        raise ValueError(f"gram must be square, got shape {values.shape}")
    size = values.shape[0]
    fig, (ax_gram, ax_curve) = plt.subplots(1, 2, figsize=(11.0, 4.0), width_ratios=[1, 1.4], layout="constrained")
    spread = float(np.abs(values).max())
    heatmap(values, ax_gram, title=r"$P P^\top$", cmap="RdBu_r", vmin=-spread, vmax=spread)
    rows, columns = np.indices(values.shape)
    xy_curves(offsets, {profile_label: profile}, ax_curve, xlabel="offset j - i", ylabel="dot product", legend=None)
    ax_curve.plot(
        (columns - rows).ravel(),
        values.ravel(),
        ".",
        color="C1",
        markersize=2,
        label=rf"$p_i^\top p_j$, all pairs, n = {size}",
    )
    ax_curve.axhline(0, color="0.5", linewidth=0.8)
    ax_curve.set_title("Dot product against the offset")
    ax_curve.legend(loc="lower center", fontsize=8)
    return fig


def pair_on_circle(sines: Vector, cosines: Vector, seen: int, ax: Axes | None = None, *, pair: int) -> Axes:
    """One sine-cosine pair of a table as points on its circle, the first ``seen`` rows highlighted.

    Args:
        sines, cosines: the ``(P,)`` columns ``2 pair`` and ``2 pair + 1`` of the table.
        seen: how many leading positions were seen in training, in ``[0, P]``.
        ax: axes to draw on (default: a new figure).
        pair: the pair's index, for the labels.

    Returns:
        The axes, with the unseen positions drawn first and the seen ones on top.

    Raises:
        ValueError: if the columns differ in length or ``seen`` is out of range.
    """
    sin_values, cos_values = _as_vector("sines", sines), _as_vector("cosines", cosines)
    if len(sin_values) != len(cos_values):
        raise ValueError(f"sines and cosines differ in length: {len(sin_values)} and {len(cos_values)}")
    seen = check_int("seen", seen, minimum=0)
    if seen > len(sin_values):
        raise ValueError(f"seen must be at most the number of positions ({len(sin_values)}), got {seen}")
    if ax is None:
        _, ax = plt.subplots(figsize=(4.0, 4.0))
    ax.plot(sin_values[seen:], cos_values[seen:], ".", markersize=2, color="C0", label="test only")
    ax.plot(sin_values[:seen], cos_values[:seen], ".", markersize=4, color="C1", label="training")
    ax.set(
        xlabel=f"column {2 * pair} (sin)",
        ylabel=f"column {2 * pair + 1} (cos)",
        aspect="equal",
        title=f"Pair {pair} on its circle",
    )
    ax.legend(fontsize=8, loc="center")
    return ax


def extrapolation_panels(
    coverage: Mapping[str, Vector],
    sines: Vector,
    cosines: Vector,
    distance: Vector,
    *,
    train_len: int,
    pair: int,
    level: float,
) -> Figure:
    """Three panels on a table used beyond its training length.

    Left: the fraction of its circle each pair sweeps (one curve per label of ``coverage``).
    Middle: :func:`pair_on_circle` for ``pair``. Right: ``distance`` of every position's row
    from the nearest training row, with the training length and ``level`` (labelled
    "orthogonal") marked.

    Returns:
        The figure, its three axes in that order.
    """
    fig, axes = plt.subplots(1, 3, figsize=(13.0, 3.8), layout="constrained", width_ratios=[1.2, 1, 1.2])
    xy_curves(
        {label: range(len(_as_vector(label, values))) for label, values in coverage.items()},
        coverage,
        axes[0],
        xlabel="pair (fast to slow)",
        ylabel="fraction of the circle",
        title="Angles seen, per pair",
    )
    pair_on_circle(sines, cosines, train_len, axes[1], pair=pair)
    values = _as_vector("distance", distance)
    xy_curves(
        range(len(values)),
        {"distance": values},
        axes[2],
        xlabel="position i",
        ylabel="relative distance",
        title="Distance to the nearest training row",
        levels={"orthogonal": level},
        vlines=[train_len],
        legend=None,
    )
    return fig


def binary_beside_table(bits: Matrix, table: Matrix) -> Figure:
    """The bits of positions ``0 .. R-1`` (lowest first) beside the same rows of an encoding table."""
    bit_values, table_values = _as_matrix("bits", bits), _as_matrix("table", table)
    if bit_values.shape[0] != table_values.shape[0]:
        counts = (bit_values.shape[0], table_values.shape[0])
        raise ValueError(f"bits and table must have the same number of rows, got {counts[0]} and {counts[1]}")
    fig, (ax_bits, ax_table) = plt.subplots(1, 2, figsize=(10.0, 3.4), width_ratios=[1, 3], layout="constrained")
    rows = [str(row) for row in range(bit_values.shape[0])]
    heatmap(
        bit_values,
        ax_bits,
        title="bits of i",
        xlabel="bit (lowest first)",
        ylabel="position i",
        xticklabels=[str(bit) for bit in range(bit_values.shape[1])],
        yticklabels=rows,
        cmap="Greys",
        colorbar=False,
    )
    heatmap(
        table_values,
        ax_table,
        title=f"sinusoidal encoding, d = {table_values.shape[1]}",
        xlabel="column",
        ylabel="",
        yticklabels=rows,
        cmap="RdBu_r",
        vmin=-1.0,
        vmax=1.0,
    )
    return fig


def table_slider(
    tables: Mapping[str, Matrix],
    periods: Mapping[str, Vector],
    *,
    slider_label: str,
    active: str,
) -> go.Figure:
    """An interactive heatmap of one ``(R, C)`` table per slider step; hovering shows a cell's
    position, column, value and the period of its column (``periods[label]``, ``(C,)``)."""
    from .interactive import _plotly_graph_objects, slider_figure

    go_module = _plotly_graph_objects()
    if active not in tables:
        raise ValueError(f"active must be one of the labels {list(tables)}, got {active!r}")
    steps = []
    for label, table in tables.items():
        values = _as_matrix(f"tables[{label!r}]", table)
        if label not in periods:
            raise ValueError(f"periods has no entry for the table {label!r}")
        period = _as_vector(f"periods[{label!r}]", periods[label])
        if len(period) != values.shape[1]:
            raise ValueError(f"periods[{label!r}] must have one period per column ({values.shape[1]})")
        trace = go_module.Heatmap(
            z=values,
            customdata=np.broadcast_to(period, values.shape),
            colorscale="RdBu_r",
            zmin=-1.0,
            zmax=1.0,
            hovertemplate="position %{y}, column %{x}<br>value %{z:.3f}<br>period %{customdata:.1f} positions"
            "<extra></extra>",
        )
        steps.append((label, [trace]))
    layout = {
        "template": "plotly_white",
        "margin": {"l": 60, "r": 20, "t": 20, "b": 40},
        "xaxis": {"title": {"text": "column"}},
        "yaxis": {"title": {"text": "position i"}, "autorange": "reversed"},
    }
    return slider_figure(steps, slider_label=slider_label, active=list(tables).index(active), layout=layout)


def curve_slider(
    x: Vector,
    ys: Mapping[str, Vector],
    marks: Mapping[str, Sequence[float]],
    *,
    mark_label: str,
    slider_label: str,
    active: str,
    xlabel: str,
    ylabel: str,
) -> go.Figure:
    """An interactive curve ``ys[label]`` against ``x`` per slider step, with dots on the zero
    line at the abscissae ``marks[label]`` (hover text ``mark_label``); the axes stay fixed
    across the steps."""
    from .interactive import _plotly_graph_objects, slider_figure

    go_module = _plotly_graph_objects()
    if active not in ys:
        raise ValueError(f"active must be one of the labels {list(ys)}, got {active!r}")
    x_values = _as_vector("x", x)
    steps, lowest, highest = [], np.inf, -np.inf
    for label, values in ys.items():
        y_values = _as_vector(f"ys[{label!r}]", values)
        if len(y_values) != len(x_values):
            raise ValueError(f"ys[{label!r}] has {len(y_values)} values for {len(x_values)} abscissae")
        lowest, highest = min(lowest, y_values.min()), max(highest, y_values.max())
        line = go_module.Scatter(
            x=x_values,
            y=y_values,
            mode="lines",
            line={"width": 1},
            hovertemplate=xlabel + " %{x}: %{y:.2f}<extra></extra>",
        )
        if label not in marks:
            raise ValueError(f"marks has no entry for the curve {label!r}")
        dots = go_module.Scatter(
            x=list(marks[label]),
            y=[0.0] * len(marks[label]),
            mode="markers",
            marker={"size": 9},
            hovertemplate=mark_label + " at %{x}<extra></extra>",
        )
        steps.append((label, [line, dots]))
    layout = {
        "template": "plotly_white",
        "margin": {"l": 60, "r": 20, "t": 20, "b": 40},
        "showlegend": False,
        "xaxis": {"title": {"text": xlabel}, "range": [float(x_values.min()), float(x_values.max())]},
        "yaxis": {"title": {"text": ylabel}, "range": [float(lowest) - 1, float(highest) + 1]},
    }
    return slider_figure(steps, slider_label=slider_label, active=list(ys).index(active), layout=layout)


def table_profile(
    table: Matrix,
    similarity_curves: Mapping[str, Vector],
    *,
    title: str,
    boundary: int | None = None,
    figsize: tuple[float, float] = (12.5, 3.8),
) -> Figure:
    """Three panels on one position table: cosines of all pairs of rows, cosine by distance, row norms.

    Left, the ``(N, N)`` matrix ``cos(p_i, p_j)`` on a diverging scale from -1 to 1; middle, the
    given curves of mean cosine similarity against the distance ``|i - j|`` (e.g. of parts of
    the table, or of another table), with a grey line at 0; right, the norm of every row on a
    log axis.

    Args:
        table: ``(N, d)`` position table, one row per position.
        similarity_curves: ``label -> mean cosine similarity at distance 0, 1, ...``.
        title: title of the left panel (the table's name).
        boundary: a number of rows ``B``: dashed lines between rows ``B - 1`` and ``B`` on the
            left and right panels (e.g. where a table's behaviour changes).
        figsize: size of the figure.

    Returns:
        The figure; its first three axes are the panels, left to right.

    Raises:
        TypeError: if ``table`` or a curve is not numeric.
        ValueError: if ``table`` is not 2-D, ``similarity_curves`` is empty, or ``boundary`` is
            not a positive integer below the number of rows.
    """
    rows = torch.as_tensor(_as_matrix("table", table), dtype=torch.float64)
    if boundary is not None and not 1 <= check_int("boundary", boundary, minimum=1) < len(rows):
        raise ValueError(f"boundary must lie between 1 and {len(rows) - 1} (the table has {len(rows)} rows)")
    unit = torch.nn.functional.normalize(rows, dim=-1)
    fig, (gram_ax, curve_ax, norm_ax) = plt.subplots(1, 3, figsize=figsize, layout="constrained")
    heatmap(unit @ unit.T, gram_ax, title=title, cmap="RdBu_r", vmin=-1.0, vmax=1.0,
            xlabel="position j", ylabel="position i")
    curves(similarity_curves, curve_ax, xlabel="distance |i - j|", ylabel="mean cosine similarity", hlines=[0.0])
    marks = [] if boundary is None else [boundary - 0.5]
    curves({"norm": rows.norm(dim=-1)}, norm_ax, xlabel="position i", ylabel="norm of p_i", title="row norms",
           marker="", logy=True, vlines=marks)
    for value in marks:
        gram_ax.axhline(value, color="black", linestyle="--", linewidth=0.8)
        gram_ax.axvline(value, color="black", linestyle="--", linewidth=0.8)
    return fig


__all__ += ["table_profile"]


__all__ += [
    "binary_beside_table",
    "curve_slider",
    "extrapolation_panels",
    "gram_by_offset",
    "pair_on_circle",
    "table_slider",
    "xy_curves",
]


# ---- chapter 4 (Part III) ----

__all__ += ["SkewStages", "skew_diagram", "skew_stages"]

_PAD = -1  # query index of the zero padding in SkewStages


@dataclass(frozen=True)
class SkewStages:
    """Where every entry of the relative logits sits at each stage of the skew.

    Each stage is a pair of integer arrays of the stage's shape: ``query[r, c]`` is the query
    ``i`` whose product ``q_i . a_delta`` sits in cell ``(r, c)`` (``-1`` for the zero pad) and
    ``offset[r, c]`` its offset ``delta`` (``0`` for the pad).

    Attributes:
        logits: ``(n, n)``: ``Q E^T``, offset ``delta`` in column ``delta + n - 1``.
        padded: ``(n, n + 1)``: one zero column on the left.
        reshaped: ``(n + 1, n)``: the same memory read with rows of length ``n``.
        result: ``(n, n)``: what the shift returns.
    """

    logits: tuple[np.ndarray, np.ndarray]
    padded: tuple[np.ndarray, np.ndarray]
    reshaped: tuple[np.ndarray, np.ndarray]
    result: tuple[np.ndarray, np.ndarray]


def _decode(codes: torch.Tensor, length: int) -> tuple[np.ndarray, np.ndarray]:
    flat = codes.round().long() - 1  # the pad (0) becomes -1
    query = torch.where(flat < 0, _PAD, flat // length)
    offset = torch.where(flat < 0, 0, flat % length - (length - 1))
    return query.numpy(), offset.numpy()


def skew_stages(shift: Callable[[torch.Tensor], torch.Tensor], length: int) -> SkewStages:
    """Run the skew (relative shift) on labelled entries and record where each one lands.

    Entry ``(i, delta + n - 1)`` of an ``(n, n)`` matrix is given a unique label; the stages
    ``padded`` and ``reshaped`` apply the trick's pad and reshape to the labels, and ``result``
    is ``shift`` applied to them, so a wrong shift shows up as entries in the wrong cells.

    Args:
        shift: the function under study, ``(n, n) -> (n, n)`` (e.g. the chapter's ``skew``).
        length: ``n`` (>= 2).

    Returns:
        The :class:`SkewStages`.

    Raises:
        TypeError: if ``shift`` is not callable or does not return a tensor.
        ValueError: if ``length < 2`` or ``shift`` returns the wrong shape.
    """
    if not callable(shift):
        raise TypeError(f"shift must be a function of one tensor, got {type(shift).__name__}")
    length = check_int("length", length, minimum=2)
    codes = 1 + torch.arange(length * length, dtype=torch.float64).reshape(length, length)
    padded = torch.nn.functional.pad(codes, (1, 0))
    result = shift(codes)
    if not isinstance(result, torch.Tensor):
        raise TypeError(f"shift must return a tensor, got {type(result).__name__}")
    if tuple(result.shape) != (length, length):
        raise ValueError(f"shift must return shape {(length, length)}, got {tuple(result.shape)}")
    return SkewStages(
        logits=_decode(codes, length),
        padded=_decode(padded, length),
        reshaped=_decode(padded.reshape(length + 1, length), length),
        result=_decode(result.detach().double(), length),
    )


def _draw_stage(
    ax: Axes,
    stage: tuple[np.ndarray, np.ndarray],
    faded: np.ndarray,
    title: str,
) -> None:
    query, offset = stage
    colours = plt.get_cmap("tab10")
    rgba = np.ones((*query.shape, 4))
    for (row, column), i in np.ndenumerate(query):
        colour = np.array((0.85, 0.85, 0.85, 1.0)) if i == _PAD else np.array(colours(i % 10))
        if faded[row, column]:
            colour = 0.3 * colour + 0.7  # mixed with white
        rgba[row, column] = colour
        text = "pad" if i == _PAD else str(offset[row, column])
        ax.text(column, row, text, ha="center", va="center", fontsize=8, color="0.6" if faded[row, column] else "black")
    ax.imshow(rgba, interpolation="nearest", aspect="equal")
    ax.set_xticks(range(query.shape[1]))
    ax.set_yticks(range(query.shape[0]))
    ax.tick_params(length=0, labelsize=7)
    ax.set_title(title, fontsize=9)


def skew_diagram(shift: Callable[[torch.Tensor], torch.Tensor], length: int = 5) -> Figure:
    """Draw the skew (relative shift) in four panels, computed by :func:`skew_stages`.

    Every cell is coloured by its query ``i`` (grey for the zero pad) and shows its offset
    ``delta``. Panels: ``Q E^T``; padded; read as ``(n + 1, n)``, with the dropped first row
    faded; the result, with every cell that does not hold ``q_i . a_(j - i)`` faded (for a
    correct shift: the leftovers above the diagonal, which a causal mask hides).

    Args:
        shift: the function under study, ``(n, n) -> (n, n)``.
        length: ``n`` (>= 2; small values read best).

    Returns:
        The figure, with the four panels as ``fig.axes[:4]`` and the query legend.

    Raises:
        TypeError, ValueError: as :func:`skew_stages`.
    """
    stages = skew_stages(shift, length)
    rows, columns = np.indices((length, length))
    reshaped_faded = np.zeros((length + 1, length), dtype=bool)
    reshaped_faded[0] = True
    result_query, result_offset = stages.result
    wrong = (result_query != rows) | (result_offset != columns - rows)
    fig, axes = plt.subplots(
        1,
        4,
        figsize=(11, 3.4),
        layout="constrained",
        gridspec_kw={"width_ratios": [length, length + 1, length, length]},
    )
    panels = [
        (stages.logits, np.zeros((length, length), dtype=bool), "1. $QE^T$: column $\\delta + n - 1$"),
        (stages.padded, np.zeros((length, length + 1), dtype=bool), "2. pad one zero column"),
        (stages.reshaped, reshaped_faded, f"3. read as {length + 1} × {length}, drop row 0"),
        (stages.result, wrong, "4. result: $(i, j)$ holds $q_i \\cdot a_{j-i}$"),
    ]
    for ax, (stage, faded, title) in zip(axes, panels, strict=True):
        _draw_stage(ax, stage, faded, title)
    axes[0].set(xlabel="column ($\\delta$ shown)", ylabel="row")
    axes[0].set_xticklabels([str(c - (length - 1)) for c in range(length)])
    axes[3].set(xlabel="key $j$", ylabel="query $i$")
    handles = [
        plt.Rectangle((0, 0), 1, 1, color=plt.get_cmap("tab10")(i % 10), label=f"$q_{{{i}}}$") for i in range(length)
    ]
    handles.append(plt.Rectangle((0, 0), 1, 1, color="0.85", label="pad"))
    fig.legend(
        handles=handles,
        loc="outside lower center",
        ncols=length + 1,
        fontsize=8,
        title="colour: query; number: offset $\\delta$ (faded: dropped or leftover)",
        title_fontsize=8,
    )
    return fig


__all__ += ["bias_by_head_slider", "curves_by_offset", "offset_matrices"]




def offset_matrices(
    matrices: Sequence[Matrix], titles: Sequence[str], *, figsize: tuple[float, float] = (8, 3.8)
) -> Figure:
    """Draw integer matrices (offsets ``j - i``, clipped offsets, buckets) with every value written in its cell.

    One panel per matrix, on a blue-white-red scale symmetric about zero.

    Args:
        matrices: ``(R, C)`` integer-valued matrices.
        titles: one title per matrix.
        figsize: size of the figure.

    Returns:
        The figure; its first ``len(matrices)`` axes are the panels.

    Raises:
        TypeError, ValueError: if a matrix is not a 2-D tensor or array, or the titles do not
            match the matrices.
    """
    values = [_as_matrix(f"matrices[{index}]", matrix) for index, matrix in enumerate(matrices)]
    if not values or len(titles) != len(values):
        raise ValueError(f"need one title per matrix, got {len(values)} matrices and {len(titles)} titles")
    fig, axes = plt.subplots(1, len(values), figsize=figsize, squeeze=False, layout="constrained")
    for ax, matrix, title in zip(axes.flat, values, titles, strict=True):
        limit = max(float(np.abs(matrix).max()), 1.0)
        heatmap(matrix, ax, title=title, cmap="coolwarm", vmin=-limit, vmax=limit, colorbar=False)
        for (row, column), value in np.ndenumerate(matrix):
            ax.text(column, row, str(int(value)), ha="center", va="center", fontsize=8)
    return fig


def curves_by_offset(
    offsets: Matrix,
    curves: Mapping[str, Matrix],
    ax: Axes | None = None,
    *,
    title: str | None = None,
    xlabel: str = "offset j - i",
    ylabel: str = "",
    steps: bool = False,
    logy: bool = False,
    marks: Mapping[float, str] | None = None,
) -> Axes:
    """Draw one or more curves against an offset or a distance (a bucket map, weights by distance).

    Args:
        offsets: ``(N,)`` x values.
        curves: label -> ``(N,)`` y values; a legend is drawn when there is more than one.
        ax: axes to draw on (default: a new figure).
        title, xlabel, ylabel: text of the plot.
        steps: draw step functions (``drawstyle="steps-mid"``), e.g. for buckets.
        logy: logarithmic y axis.
        marks: x position -> matplotlib line style of a grey vertical line (e.g. where a
            bucket range ends).

    Returns:
        The axes drawn on.

    Raises:
        TypeError, ValueError: if an input is not a 1-D tensor or array, or a curve's length
            differs from that of ``offsets``.
    """
    x = _as_vector("offsets", offsets)
    if not curves:
        raise ValueError("curves must contain at least one curve")
    if ax is None:
        _, ax = plt.subplots()
    for label, y in curves.items():
        values = _as_vector(f"curves[{label!r}]", y)
        if values.shape != x.shape:
            raise ValueError(f"curve {label!r} has {values.shape[0]} values for {x.shape[0]} offsets")
        ax.plot(x, values, label=label, drawstyle="steps-mid" if steps else "default")
    for position, style in (marks or {}).items():
        ax.axvline(position, color="gray", linestyle=style, linewidth=0.8)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel, yscale="log" if logy else "linear")
    if len(curves) > 1:
        ax.legend(ncols=2, fontsize=8)
    return ax


def bias_by_head_slider(
    offsets: Matrix,
    alibi_rows: Matrix,
    t5_rows: Matrix,
    t5_buckets: Matrix,
    slopes: Matrix,
    *,
    edges: Sequence[float] = (),
) -> Any:
    """Two stacked Plotly panels, ALiBi's and T5's bias against the offset, one head per slider step.

    ALiBi's line is solid for the keys a causal model sees (offset <= 0) and dotted for the
    rest; T5's bias is drawn as steps, with dashed vertical lines at ``edges``.

    Args:
        offsets: ``(N,)`` offsets ``j - i``.
        alibi_rows, t5_rows: ``(H, N)`` bias of each head at each offset.
        t5_buckets: ``(N,)`` T5 bucket of each offset (shown on hover).
        slopes: ``(H,)`` ALiBi slopes (shown in the slider's labels).
        edges: offsets where T5's last buckets start.

    Returns:
        A ``plotly.graph_objects.Figure`` with a slider of ``H`` steps, three traces each.

    Raises:
        TypeError, ValueError: if an input has the wrong type or shape.
    """
    from .interactive import _plotly_graph_objects, slider_figure

    go = _plotly_graph_objects()
    x = _as_vector("offsets", offsets)
    buckets = _as_vector("t5_buckets", t5_buckets)
    slope_values = _as_vector("slopes", slopes)
    alibi, t5 = _as_matrix("alibi_rows", alibi_rows), _as_matrix("t5_rows", t5_rows)
    heads = len(slope_values)
    for name, rows in (("alibi_rows", alibi), ("t5_rows", t5)):
        if rows.shape != (heads, len(x)):
            raise ValueError(f"{name} must have shape {(heads, len(x))} (heads, offsets), got {rows.shape}")
    if buckets.shape != x.shape:
        raise ValueError(f"t5_buckets must have one bucket per offset ({len(x)}), got {buckets.shape[0]}")

    def trace(keep: np.ndarray, y: np.ndarray, custom: np.ndarray, panel: str, dash: str, hover: str) -> Any:
        top = panel == "alibi"
        return go.Scatter(
            x=x[keep].tolist(),
            y=[round(float(v), 4) for v in y[keep]],
            customdata=custom[keep].tolist(),
            mode="lines",
            line_shape="linear" if top else "hvh",
            line={"color": "#1f77b4" if top else "#d62728", "dash": dash},
            xaxis="x" if top else "x2",
            yaxis="y" if top else "y2",
            hovertemplate=hover,
        )

    alibi_hover = "offset j − i = %{x}<br>distance %{customdata}<br>ALiBi bias %{y:.3f}<extra></extra>"
    t5_hover = "offset j − i = %{x}<br>bucket %{customdata}<br>T5 bias %{y:.3f}<extra></extra>"
    past, future, every = x <= 0, x >= 0, np.ones_like(x, dtype=bool)
    distance = np.abs(x)
    steps = [
        (
            f"{head + 1} (m = 1/{1 / slope_values[head]:.0f})",
            [
                trace(past, alibi[head], distance, "alibi", "solid", alibi_hover),
                trace(future, alibi[head], distance, "alibi", "dot", alibi_hover),
                trace(every, t5[head], buckets, "t5", "solid", t5_hover),
            ],
        )
        for head in range(heads)
    ]
    reach = [float(x.min()), float(x.max())]
    t5_limit = float(np.abs(t5).max()) * 1.1
    alibi_low = float(alibi.min()) * 1.05
    edge = {
        "type": "line",
        "xref": "x2",
        "yref": "y2 domain",
        "y0": 0,
        "y1": 1,
        "line": {"color": "grey", "dash": "dash", "width": 1},
    }
    panel_title = {"xref": "paper", "yref": "paper", "x": 0, "showarrow": False, "xanchor": "left", "yanchor": "bottom"}
    return slider_figure(
        steps,
        slider_label="head r = ",
        active=0,
        layout={
            "template": "plotly_white",
            "height": 560,
            "showlegend": False,
            "margin": {"l": 60, "r": 45, "t": 30, "b": 20},
            "xaxis": {"range": reach, "anchor": "y", "matches": "x2", "showticklabels": False},
            "yaxis": {"domain": [0.6, 1], "range": [alibi_low, -0.05 * alibi_low], "title": {"text": "ALiBi bias"}},
            "xaxis2": {"range": reach, "anchor": "y2", "title": {"text": "offset j − i"}},
            "yaxis2": {"domain": [0.12, 0.5], "range": [-t5_limit, t5_limit], "title": {"text": "T5 bias"}},
            "shapes": [{**edge, "x0": float(e), "x1": float(e)} for e in edges],
            "annotations": [
                {**panel_title, "y": 1.0, "text": "ALiBi: −m·|j − i|"},
                {**panel_title, "y": 0.5, "text": "T5: a number per bucket"},
            ],
        },
    )


# ---- chapter 5 ----
__all__ += ["offset_profiles", "plane_vectors", "rotating_pairs_figure"]


def _check_texts(name: str, texts: Sequence[str] | None, count: int) -> None:
    if texts is not None and len(texts) != count:
        raise ValueError(f"{name} must have one entry per vector ({count}), got {len(texts)}")


def plane_vectors(
    vectors: Matrix,
    ax: Axes | None = None,
    *,
    labels: Sequence[str] | None = None,
    tip_text: Sequence[str] | None = None,
    title: str | None = None,
) -> Axes:
    """Draw ``(N, 2)`` vectors as arrows from the origin, on the dashed circle of the longest one.

    Rotated copies of one vector all end on that circle, e.g. ``B(m theta) x`` at positions ``m``.

    Args:
        vectors: ``(N, 2)`` tensor or array, one arrow per row.
        ax: axes to draw on (default: a new figure).
        labels: one legend entry per arrow (arrows then take the default colour cycle and a
            legend is drawn); without labels the arrows run through viridis in order.
        tip_text: one text per arrow, written just beyond its tip (e.g. the position).
        title: title of the plot.

    Returns:
        The axes drawn on, with equal aspect and both limits at 1.3 times the circle's radius.

    Raises:
        TypeError: if ``vectors`` is not a tensor or array.
        ValueError: if ``vectors`` is not ``(N, 2)`` with ``N >= 1`` and a non-zero row, or
            ``labels`` or ``tip_text`` does not have one entry per vector.
    """
    values = _as_matrix("vectors", vectors).astype(float)
    if values.shape[0] == 0 or values.shape[1] != 2:
        raise ValueError(f"vectors must have shape (N, 2) with N >= 1, got {values.shape}")
    radius = float(np.linalg.norm(values, axis=1).max())
    if radius == 0:
        raise ValueError("vectors must contain a non-zero vector (the circle's radius)")
    _check_texts("labels", labels, len(values))
    _check_texts("tip_text", tip_text, len(values))
    if ax is None:
        _, ax = plt.subplots()
    circle = np.linspace(0, 2 * np.pi, 200)
    ax.plot(radius * np.cos(circle), radius * np.sin(circle), ls="--", lw=0.8, color="grey")
    ax.axhline(0, color="lightgrey", lw=0.6)
    ax.axvline(0, color="lightgrey", lw=0.6)
    if labels is None:
        colours = list(plt.get_cmap("viridis")(np.linspace(0, 0.9, len(values))))
    else:
        colours = [f"C{index % 10}" for index in range(len(values))]
    for index, (x, y) in enumerate(values):
        label = None if labels is None else labels[index]
        ax.quiver(0, 0, x, y, color=colours[index], angles="xy", scale_units="xy", scale=1, width=0.012, label=label)
        if tip_text is not None:
            ax.text(1.15 * x, 1.15 * y, tip_text[index], ha="center", va="center")
    reach = 1.3 * radius
    ax.set(xlim=(-reach, reach), ylim=(-reach, reach), aspect="equal", title=title)
    if labels is not None:
        ax.legend(loc="lower left")
    return ax


def offset_profiles(
    offsets: object,
    curves: Mapping[str, object],
    ax: Axes | None = None,
    *,
    xlabel: str = r"offset $\delta = j - i$",
    ylabel: str = "score",
    title: str | None = None,
) -> Axes:
    """Draw one curve per entry of ``curves`` against the offsets, with a thin line at offset 0.

    Args:
        offsets: ``(S,)`` offsets (tensor, array or sequence), the x values.
        curves: legend label -> ``(S,)`` values, one curve each.
        ax: axes to draw on (default: a new figure).
        xlabel, ylabel, title: text of the plot.

    Returns:
        The axes drawn on, with a legend.

    Raises:
        TypeError: if the offsets or a curve is not a tensor, array or sequence.
        ValueError: if ``curves`` is empty, or the offsets or a curve is not 1-D of length ``S``.
    """
    x = _as_vector("offsets", offsets)
    if not curves:
        raise ValueError("curves must contain at least one curve")
    values = {label: _as_vector(f"curves[{label!r}]", curve) for label, curve in curves.items()}
    for label, y in values.items():
        if len(y) != len(x):
            raise ValueError(f"curves[{label!r}] has {len(y)} values for {len(x)} offsets")
    if ax is None:
        _, ax = plt.subplots()
    ax.axvline(0, color="grey", lw=0.6)
    for label, y in values.items():
        ax.plot(x, y, label=label, lw=1.2)
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.legend(loc="upper right")
    return ax


def scores_beside_profiles(
    score_grid: Matrix,
    offsets: Vector,
    profiles: Mapping[str, Vector],
    *,
    grid_title: str | None = None,
    profile_title: str | None = None,
    ylabel: str = "score",
) -> Figure:
    """A matrix of scores (queries as rows, keys as columns) beside score profiles by offset.

    The matrix is drawn with a diverging colour map centred on zero (white), so a constant
    diagonal, a score that depends on ``j - i`` only, shows as stripes; the profiles are drawn
    with :func:`offset_profiles`.

    Args:
        score_grid: ``(n, n)`` scores, row ``i`` for the query at ``i``, column ``j`` for the key at ``j``.
        offsets: ``(S,)`` offsets, the x values of the profiles.
        profiles: label -> ``(S,)`` score at each offset.
        grid_title, profile_title: titles of the two panels.
        ylabel: label of the profiles' vertical axis.

    Returns:
        The figure, the matrix on ``fig.axes[0]``, the profiles on ``fig.axes[1]`` (the colour
        bar follows).

    Raises:
        TypeError, ValueError: as :func:`heatmap` and :func:`offset_profiles`.
    """
    grid = _as_matrix("score_grid", score_grid).astype(float)
    fig, (ax_grid, ax_curve) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
    limit = float(np.abs(grid).max()) or 1.0
    heatmap(grid, ax_grid, title=grid_title, cmap="RdBu_r", vmin=-limit, vmax=limit)
    offset_profiles(offsets, profiles, ax_curve, title=profile_title, ylabel=ylabel)
    return fig


__all__ += ["scores_beside_profiles"]


_PAIR_COLOURS = {"q": "#1f77b4", "k": "#ff7f0e"}


def _rotate_pair(pair: np.ndarray, angle: float) -> np.ndarray:
    cos, sin = np.cos(angle), np.sin(angle)
    return np.array([cos * pair[0] - sin * pair[1], sin * pair[0] + cos * pair[1]])


def _arrow_trace(go_module: Any, tip: np.ndarray, panel: int, who: str, note: str, text: str, below: float) -> Any:
    """An arrow from the origin to ``tip`` labelled ``who``, and ``text`` under the panel's centre."""
    x, y = round(float(tip[0]), 4), round(float(tip[1]), 4)
    hover = f"{note}: ({x}, {y})"
    return go_module.Scatter(
        x=[0.0, x, None, 0.0],
        y=[0.0, y, None, -below],
        mode="lines+markers+text",
        text=["", who, "", text],
        textposition="top center",
        hovertext=[hover, hover, "", ""],
        hoverinfo="text",
        line={"color": _PAIR_COLOURS[who], "width": 3},
        marker={"symbol": "arrow", "angleref": "previous", "size": [0, 14, 0, 0], "color": _PAIR_COLOURS[who]},
        xaxis=f"x{panel}",
        yaxis=f"y{panel}",
    )


def _pairs_layout(q: np.ndarray, k: np.ndarray, theta: np.ndarray, pairs: Sequence[int]) -> dict[str, Any]:
    layout: dict[str, Any] = {
        "template": "plotly_white",
        "height": 560,
        "showlegend": False,
        "margin": {"l": 10, "r": 10, "t": 10, "b": 10},
        "annotations": [],
        "shapes": [],
    }
    for panel, pair in enumerate(pairs, start=1):
        lengths = {"q": float(np.linalg.norm(q[pair])), "k": float(np.linalg.norm(k[pair]))}
        reach = 1.3 * max(lengths.values())
        left = (panel - 1) / len(pairs)
        width = 0.85 / len(pairs)
        axis = {"range": [-reach, reach], "showticklabels": False, "zeroline": True, "fixedrange": True}
        layout[f"xaxis{panel}"] = {**axis, "domain": [left, left + width], "anchor": f"y{panel}"}
        layout[f"yaxis{panel}"] = {**axis, "domain": [0.0, 0.78], "anchor": f"x{panel}", "scaleanchor": f"x{panel}"}
        layout["annotations"].append(
            {
                "x": left + width / 2,
                "y": 0.79,
                "xref": "paper",
                "yref": "paper",
                "showarrow": False,
                "yanchor": "bottom",
                "text": f"pair ℓ = {pair}<br>θ = {theta[pair]:.4g}",
            }
        )
        for who, length in lengths.items():
            layout["shapes"].append(
                {
                    "type": "circle",
                    "xref": f"x{panel}",
                    "yref": f"y{panel}",
                    "x0": -length,
                    "x1": length,
                    "y0": -length,
                    "y1": length,
                    "line": {"color": _PAIR_COLOURS[who], "dash": "dot", "width": 1},
                }
            )
    text_axis = {"domain": [0, 1], "range": [0, 1], "visible": False, "fixedrange": True}
    text = len(pairs) + 1
    layout[f"xaxis{text}"] = {**text_axis, "anchor": f"y{text}"}
    layout[f"yaxis{text}"] = {**text_axis, "domain": [0.9, 1], "anchor": f"x{text}"}
    return layout


def rotating_pairs_figure(
    q: object,
    k: object,
    theta: object,
    *,
    pairs: Sequence[int],
    positions: Sequence[int],
    active: tuple[int, int] = (0, 0),
) -> Any:
    """Interactive figure: some rotary pairs of a query and a key, turned to positions ``i`` and ``j``.

    One panel per pair ``l`` of ``pairs``: pair ``l`` of the query, ``(q[2l], q[2l+1])``, turned by
    ``i * theta[l]`` (blue arrow "q") and pair ``l`` of the key turned by ``j * theta[l]`` (orange
    arrow "k"), each on the dotted circle of its length, with the pair's share of the score,
    ``(B(i theta_l) q_l) . (B(j theta_l) k_l)``, under it; a line above gives ``i``, ``j``,
    ``j - i`` and the full score ``(R_i q) . (R_j k)`` over all ``d/2`` pairs. Two sliders choose
    ``i`` and ``j`` among ``positions`` (:func:`posenc.interactive.grid_slider_figure`).

    Args:
        q, k: ``(d,)`` query and key, interleaved pairs ``(2l, 2l+1)``, ``d`` even.
        theta: ``(d/2,)`` frequencies.
        pairs: the pairs drawn, one panel each (at least one, each in ``[0, d/2)``).
        positions: the positions the sliders offer (at least one int).
        active: the slider steps ``(i_index, j_index)`` shown first.

    Returns:
        A ``plotly.graph_objects.Figure``: for each combination of positions, two traces per
        pair (query, key) and one text trace, in the order of ``pairs``.

    Raises:
        TypeError: if an argument is not a tensor, array or sequence, or a pair or position is
            not an int.
        ValueError: if ``q`` and ``k`` are not 1-D of one even length ``d``, ``theta`` does not
            have ``d/2`` entries, ``pairs`` or ``positions`` is empty or a pair is out of range,
            or ``active`` is not a combination of steps.
    """
    from .interactive import _plotly_graph_objects, grid_slider_figure

    q_values, k_values, freq = _as_vector("q", q), _as_vector("k", k), _as_vector("theta", theta)
    dim = len(q_values)
    if dim == 0 or dim % 2 or len(k_values) != dim:
        raise ValueError(f"q and k must be 1-D of one even length d, got {len(q_values)} and {len(k_values)}")
    if len(freq) != dim // 2:
        raise ValueError(f"theta must have d/2 = {dim // 2} frequencies, got {len(freq)}")
    if len(pairs) == 0 or len(positions) == 0:
        raise ValueError("pairs and positions must each contain at least one entry")
    pairs = [check_int("pair", pair, minimum=0) for pair in pairs]
    positions = [check_int("position", position) for position in positions]
    if max(pairs) >= dim // 2:
        raise ValueError(f"every pair must be in [0, {dim // 2}), got {max(pairs)}")
    go_module = _plotly_graph_objects()
    q_pairs, k_pairs = q_values.reshape(-1, 2), k_values.reshape(-1, 2)
    reach = {pair: 1.3 * float(max(np.linalg.norm(q_pairs[pair]), np.linalg.norm(k_pairs[pair]))) for pair in pairs}
    grid = {}
    for a, i in enumerate(positions):
        for b, j in enumerate(positions):
            q_turned = np.array([_rotate_pair(q_pairs[p], i * freq[p]) for p in range(dim // 2)])
            k_turned = np.array([_rotate_pair(k_pairs[p], j * freq[p]) for p in range(dim // 2)])
            traces = []
            for panel, pair in enumerate(pairs, start=1):
                share = f"score {float(q_turned[pair] @ k_turned[pair]):.3f}"
                for who, position, tip, text, below in (
                    ("q", i, q_turned[pair], "", reach[pair]),
                    ("k", j, k_turned[pair], share, 0.95 * reach[pair]),
                ):
                    angle = position * freq[pair]
                    note = f"pair ℓ = {pair}, {who} at position {position}<br>rotated by {angle:.3f} rad"
                    traces.append(_arrow_trace(go_module, tip, panel, who, note, text, below))
            full = float((q_turned * k_turned).sum())
            text = f"i = {i}, j = {j}, offset j − i = {j - i}<br>all {dim // 2} pairs: (R_i q)·(R_j k) = {full:.3f}"
            text_axes = {"xaxis": f"x{len(pairs) + 1}", "yaxis": f"y{len(pairs) + 1}"}
            traces.append(go_module.Scatter(x=[0.5], y=[0.5], mode="text", hoverinfo="skip", text=[text], **text_axes))
            grid[a, b] = traces
    labels = [str(position) for position in positions]
    return grid_slider_figure(
        grid,
        first=("query position i = ", labels),
        second=("key position j = ", labels),
        active=active,
        layout=_pairs_layout(q_pairs, k_pairs, freq, pairs),
    )


# ---- chapter 6 ----
__all__ += ["frequency_bands", "weight_maps_with_difference"]


def frequency_bands(
    wavelengths: Mapping[str, torch.Tensor],
    owners: Mapping[str, torch.Tensor],
    axis_names: Sequence[str],
    *,
    figsize: tuple[float, float] | None = None,
) -> Figure:
    """Which position axis turns each frequency pair, one panel per model (e.g. M-RoPE's t/h/w).

    Args:
        wavelengths: panel title -> ``(K,)`` wavelengths ``2 pi / theta_l`` of the ``K`` pairs.
        owners: panel title -> ``(K,)`` integer index into ``axis_names`` of the axis that turns
            each pair; same titles as ``wavelengths``.
        axis_names: the position axes (e.g. ``["time", "height", "width"]``), one colour each.
        figsize: figure size (default: 4.6 inches per panel by 3.6).

    Returns:
        The figure, per panel one scatter (pair index, wavelength) per axis, on a log scale.

    Raises:
        ValueError: if the two mappings have different titles or are empty, a panel's tensors
            differ in length, or an owner is not an index of ``axis_names``.
    """
    if not wavelengths or list(wavelengths) != list(owners):
        raise ValueError(
            f"wavelengths and owners must name the same panels in the same order, got "
            f"{list(wavelengths)} and {list(owners)}"
        )
    fig, axes = plt.subplots(
        1,
        len(wavelengths),
        figsize=figsize or (4.6 * len(wavelengths), 3.6),
        squeeze=False,
        layout="constrained",
        sharey=True,
    )
    for ax, (title, lengths) in zip(axes.flat, wavelengths.items(), strict=True):
        lengths_np, owner_np = _as_vector("wavelengths", lengths), _as_vector("owners", owners[title])
        if lengths_np.shape != owner_np.shape:
            raise ValueError(f"panel {title!r}: {lengths_np.shape[0]} wavelengths but {owner_np.shape[0]} owners")
        if owner_np.size and not set(owner_np.astype(int).tolist()) <= set(range(len(axis_names))):
            raise ValueError(f"panel {title!r}: owners must index axis_names (0..{len(axis_names) - 1})")
        pairs = np.arange(lengths_np.shape[0])
        for index, name in enumerate(axis_names):
            chosen = owner_np == index
            ax.scatter(
                pairs[chosen], lengths_np[chosen], s=14, color=f"C{index}", label=f"{name} ({int(chosen.sum())} pairs)"
            )
        ax.set(yscale="log", title=title, xlabel=r"frequency pair $\ell$")
        ax.legend(fontsize=8, loc="upper left")
    axes.flat[0].set_ylabel(r"wavelength $2\pi/\theta_\ell$ (positions)")
    return fig


def weight_maps_with_difference(
    weight_maps: Sequence[Matrix],
    titles: Sequence[str],
    difference_title: str,
) -> Figure:
    """Attention-weight maps on one 0..1 scale, then the last map minus the first (symmetric scale).

    Args:
        weight_maps: ``(L, L)`` weight matrices, queries as rows; at least two.
        titles: one title per map.
        difference_title: title of the last panel, ``weight_maps[-1] - weight_maps[0]``.

    Returns:
        The figure, with ``len(weight_maps) + 1`` heatmap panels.

    Raises:
        ValueError: if fewer than two maps are given or ``titles`` has the wrong length.
    """
    maps = [_as_matrix(f"weight_maps[{index}]", matrix) for index, matrix in enumerate(weight_maps)]
    if len(maps) < 2:
        raise ValueError(f"weight_maps must hold at least two maps to compare, got {len(maps)}")
    if len(titles) != len(maps):
        raise ValueError(f"titles must have one title per map ({len(maps)}), got {len(titles)}")
    count = len(maps)
    labels = [str(t) for t in range(maps[0].shape[-1])]
    fig, axes = plt.subplots(1, count + 1, figsize=(3.3 * (count + 1), 3.2), layout="constrained")
    common: dict[str, object] = {"xticklabels": labels, "yticklabels": labels}
    for index, (weights, title) in enumerate(zip(maps, titles, strict=True)):
        heatmap(weights, axes[index], title=title, vmin=0.0, vmax=1.0, colorbar=index == count - 1, **common)  # type: ignore[arg-type]
    difference = maps[-1] - maps[0]
    limit = float(np.abs(difference).max()) or 1.0
    heatmap(difference, axes[-1], title=difference_title, cmap="coolwarm", vmin=-limit, vmax=limit, **common)  # type: ignore[arg-type]
    return fig


def orbit_and_terms(
    orbit: torch.Tensor,
    offsets: Vector,
    terms: Matrix,
    checked: tuple[Vector, Vector],
    *,
    title: str | None = None,
) -> Figure:
    """A rotary pair on its circle (left) and a score as a sum of cosine terms of the offset (right).

    Args:
        orbit: ``(M, P)`` complex tensor: row ``m`` holds pairs ``0 .. P-1`` of a vector rotated
            to position ``m``. Pair 0 is labelled at every position, the others at the first and
            last only.
        offsets: ``(S,)`` offsets, the x values of the terms.
        terms: ``(S, L)`` real contributions of the ``L`` pairs at each offset; their sum is drawn
            as a black line ("score (complex formula)").
        checked: ``(x, y)`` of the same score computed another way, drawn as black dots
            ("score (real arithmetic)").
        title: title of the left panel.

    Returns:
        The figure, the circle on ``fig.axes[0]`` and the terms on ``fig.axes[1]``.

    Raises:
        TypeError: if ``orbit`` is not a complex tensor.
        ValueError: if ``orbit`` or ``terms`` is not 2-D, or ``terms`` has not one row per offset.
    """
    if not isinstance(orbit, torch.Tensor) or not orbit.is_complex():
        raise TypeError("orbit must be a complex tensor, one row per position")
    if orbit.ndim != 2:
        raise ValueError(f"orbit must be (positions, pairs), got shape {tuple(orbit.shape)}")
    values = _as_matrix("terms", terms).astype(float)
    x = _as_vector("offsets", offsets)
    if values.shape[0] != len(x):
        raise ValueError(f"terms must have one row per offset ({len(x)}), got shape {values.shape}")
    fig, (ax_plane, ax_score) = plt.subplots(
        1, 2, figsize=(11, 4.4), layout="constrained", gridspec_kw={"width_ratios": [1, 1.5]}
    )
    count = orbit.shape[0]
    for pair in range(orbit.shape[1]):
        points = torch.stack((orbit[:, pair].real, orbit[:, pair].imag), -1)
        tips = [str(m) if pair == 0 or m in (0, count - 1) else "" for m in range(count)]
        plane_vectors(points, ax_plane, tip_text=tips)
    ax_plane.set(title=title)
    curves: dict[str, Vector] = {rf"term $\ell={p}$": values[:, p] for p in range(values.shape[1])}
    curves["score (complex formula)"] = values.sum(1)
    curves["score (real arithmetic)"] = _as_vector("checked y", checked[1])
    abscissae: dict[str, Vector] = {name: x for name in curves}
    abscissae["score (real arithmetic)"] = checked[0]
    xy_curves(abscissae, curves, ax_score, styles=["-"] * values.shape[1] + ["k-", "ko"], legend="outside",
              xlabel="offset $n - m$", ylabel="contribution to the score", title="score = sum of cosines of the offset")
    return fig


__all__ += ["orbit_and_terms"]


# ---- chapter 7 ----
# Curves against position or offset, several per panel, and the windowed summaries of a curve
# that oscillates too fast to read (a band between its extremes around its window average).

_SCALES = ("linear", "log", "log2", "symlog")


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


# Chapter 7's figures, one function per kind: the all-ones score in panels, the decay sliders,
# the Abel-summation bound, the wavelength ladders and the errors of low-precision angles.


def score_panels(
    panels: Sequence[tuple[str, Vector, Vector]],
    *,
    ncols: int | None = None,
    xlabel: str = "key position j",
    ylabel: str = "score",
    figsize: tuple[float, float] | None = None,
    suptitle: str | None = None,
) -> Figure:
    """One curve per panel, e.g. the score of one query against every key for several settings.

    Args:
        panels: ``(title, x, y)`` of each panel, row by row; a curve of more than 1 000 points is
            drawn with a thin line (0.25 instead of 0.8) so that its oscillation reads as a band.
        ncols, figsize, suptitle: as for :func:`line_panels`.
        xlabel, ylabel: axis labels of every panel.

    Returns:
        The figure; ``fig.axes[k]`` is panel ``k``.

    Raises:
        ValueError: if ``panels`` is empty or a panel is not a ``(title, x, y)`` triple.
    """
    if not panels:
        raise ValueError("panels must contain at least one (title, x, y) triple")
    drawn = []
    for index, panel in enumerate(panels):
        if not isinstance(panel, tuple) or len(panel) != 3:
            raise ValueError(f"panels[{index}] must be a (title, x, y) triple, got {panel!r}")
        title, x, y = panel
        width = 0.25 if len(_as_vector(f"panels[{index}] x", x)) > 1000 else 0.8
        drawn.append(LinePanel([Curve(x, y, style={"linewidth": width})], title, xlabel, ylabel, title_size=9))
    return line_panels(drawn, ncols=ncols, figsize=figsize, suptitle=suptitle)


def decay_slider(
    summaries: Mapping[tuple[float, int], WindowSummary],
    crossings: Mapping[tuple[float, int], float],
    bases: Mapping[str, float],
    dims: Sequence[int],
    *,
    level: float = 0.5,
    active: tuple[int, int] | None = None,
) -> go.Figure:
    """Two sliders, base and head dimension, over windowed curves of a relative score against distance.

    Args:
        summaries: the :class:`WindowSummary` (see :func:`log_windows`) of every ``(base, dim)``.
        crossings: the first distance at which the curve of ``(base, dim)`` falls below ``level``,
            drawn as a red dot at height ``level``.
        bases: slider label of each base, e.g. ``{"10⁴": 1e4}``.
        dims: the head dimensions, the second slider.
        level: height of the dots.
        active: slider steps shown first (default: the second base, the largest dimension).

    Returns:
        A :func:`~posenc.interactive.grid_slider_figure` with a log distance axis and a y axis
        fixed from the lowest window minimum to 1.05.

    Raises:
        ValueError: if ``bases`` or ``dims`` is empty, or a ``(base, dim)`` has no summary or crossing.
    """
    from .interactive import grid_slider_figure

    if not bases or not dims:
        raise ValueError("bases and dims must not be empty")
    keys = [(base, dim) for base in bases.values() for dim in dims]
    missing = [key for key in keys if key not in summaries or key not in crossings]
    if missing:
        raise ValueError(f"no summary or crossing for (base, dim) = {missing}")
    grid = {
        (i, j): band_traces(
            summaries[base, dim], marker=(crossings[base, dim], level), marker_name=f"first below {level:g}"
        )
        for i, base in enumerate(bases.values())
        for j, dim in enumerate(dims)
    }
    lowest = min(float(summaries[key].low.min()) for key in keys)
    right = max(float(summaries[key].centres.max()) for key in keys)
    layout = {
        "template": "plotly_white",
        "height": 560,
        "showlegend": False,
        "margin": {"l": 60, "r": 20, "t": 20, "b": 20},
        "xaxis": {
            "type": "log",
            "range": [0, float(np.log10(right)) + 0.05],
            "title": {"text": "distance |j − i| (log scale)"},
        },
        "yaxis": {"range": [float(np.floor(lowest * 10) / 10), 1.05], "title": {"text": "score / d"}},
    }
    return grid_slider_figure(
        grid,
        first=("base b = ", list(bases)),
        second=("head dimension d = ", [str(dim) for dim in dims]),
        active=active if active is not None else (min(1, len(bases) - 1), len(dims) - 1),
        layout=layout,
    )


def bound_panels(
    offsets: Vector,
    bounds: Mapping[str, Vector],
    octaves: Mapping[str, tuple[Vector, Vector]],
    level: float,
    *,
    shown: int = 4097,
) -> Figure:
    """A bound against the distance (left) and its mean and maximum over octaves (right).

    Args:
        offsets: distances ``0, 1, ...``, the x values of the left panel.
        bounds: one curve per label (e.g. per base), aligned with ``offsets``; the left panel
            shows the first ``shown`` points.
        octaves: ``(means, maxima)`` per label, entry ``e`` over distances ``[2^e, 2^(e+1))``;
            drawn as steps on a base-2 log axis, means solid and maxima dotted.
        level: a reference level drawn dashed on both panels (e.g. the random-phase level).
        shown: number of points of the left panel.

    Returns:
        The figure, bounds on ``fig.axes[0]`` and octaves on ``fig.axes[1]``.

    Raises:
        ValueError: if ``bounds`` and ``octaves`` do not have the same labels, or an octave
            summary's means and maxima differ in length.
    """
    if not bounds or set(bounds) != set(octaves):
        raise ValueError(f"bounds and octaves must have the same labels, got {list(bounds)} and {list(octaves)}")
    x = _as_vector("offsets", offsets)[:shown]
    left, right = [], []
    for number, (label, curve) in enumerate(bounds.items()):
        colour = f"C{number % 10}"
        left.append(Curve(x, _as_vector(label, curve)[:shown], label, {"color": colour, "linewidth": 0.3}))
        means, maxima = (_as_vector(f"{label} octaves", v) for v in octaves[label])
        if means.shape != maxima.shape:
            raise ValueError(f"{label}: {len(means)} octave means but {len(maxima)} maxima")
        starts = 2.0 ** np.arange(len(means))
        right += [
            Curve(starts, values, f"{name}, {label}", {"color": colour, "ls": ls, "drawstyle": "steps-post"})
            for values, name, ls in [(means, "mean", "-"), (maxima, "max", ":")]
        ]
    reference = [Reference(level, style={"color": "0.4", "ls": "--"})]
    return line_panels(
        [
            LinePanel(
                left, f"U(δ) up to {shown - 1}", "distance |j - i|", "relative upper bound U", references=reference
            ),
            LinePanel(
                right, "Octave means and maxima", "distance |j - i| (octaves, log scale)", "U", xscale="log2",
                references=reference,
            ),
        ],
        figsize=(11, 3.8),
    )


def wavelength_ladders(
    ladders: Mapping[str, Vector], contexts: Mapping[str, float], *, title: str | None = None
) -> Figure:
    """The wavelength ``2π/θ_ℓ`` of every pair ``ℓ``, one marker style per ladder of frequencies.

    Args:
        ladders: the frequencies ``θ_ℓ`` of each ladder (positive), by label.
        contexts: horizontal dashed lines, ``{text: length}``: pairs below a line complete a
            full turn within that length.
        title: title of the panel.

    Returns:
        The figure (one log-scale panel).

    Raises:
        ValueError: if ``ladders`` is empty or a frequency is not positive.
    """
    if not ladders:
        raise ValueError("ladders must contain at least one ladder of frequencies")
    curves = []
    for number, (label, theta) in enumerate(ladders.items()):
        values = _as_vector(label, theta)
        if not np.all(values > 0):
            raise ValueError(f"the frequencies of {label!r} must be positive")
        style = {"marker": "os^vD<>"[number % 7], "markersize": 3, "linestyle": "none"}
        curves.append(Curve(np.arange(len(values)), 2 * np.pi / values, label, style))
    references = [Reference(length, text=text) for text, length in contexts.items()]
    panel = LinePanel(curves, title, "pair index ℓ", "wavelength λ_ℓ (tokens)", yscale="log", references=references,
                      legend="lower right")
    return line_panels([panel], figsize=(7, 4))


def precision_panels(
    positions: Vector,
    angle_errors: Mapping[str, Vector],
    score_errors: Mapping[str, Vector],
    *,
    extra_scores: Mapping[str, Vector] | None = None,
    limit: float = 65504.0,
) -> Figure:
    """Errors of angles formed in low precision (left) and of the scores they give (right).

    Args:
        positions: the positions, x values of both log-log panels.
        angle_errors: the largest angle error at each position, per number format (label).
        score_errors: the largest score error at each position, per format (the same labels).
        extra_scores: further score-error curves, drawn dashed in black (e.g. another library's).
        limit: a vertical dotted line on both panels (default: the largest float16, 65 504).

    Returns:
        The figure, angles on ``fig.axes[0]`` (with a line at π: no information left) and
        scores on ``fig.axes[1]``.

    Raises:
        ValueError: if ``angle_errors`` is empty or the two mappings differ in labels.
    """
    if not angle_errors or set(angle_errors) != set(score_errors):
        raise ValueError(
            "angle_errors and score_errors must have the same labels, "
            f"got {list(angle_errors)} and {list(score_errors)}"
        )
    x = _as_vector("positions", positions)
    edge = Reference(limit, axis="x", label=f"largest float16 ({limit:,.0f})".replace(",", " "),
                     style={"color": "C3", "ls": ":", "linewidth": 1})
    left, right = [], []
    for number, label in enumerate(angle_errors):
        style = {"color": ["C3", "C1", "C0", "C2", "C4"][number % 5], "marker": "o", "markersize": 3}
        left.append(Curve(x, angle_errors[label], f"{label} angles", style))
        right.append(Curve(x, score_errors[label], style=style))
    for label, values in (extra_scores or {}).items():
        right.append(Curve(x, values, label, {"color": "k", "linestyle": "--"}))
    pi_line = Reference(float(np.pi), label="π: no information left")
    return line_panels(
        [
            LinePanel(left, "Angle error vs float64", "position", "max angle error (rad)", "log", "log",
                      references=[pi_line, edge]),
            LinePanel(right, "Score error vs float64 (keys at m - 0..255)", "query position m", "max |score error|",
                      "log", "log", references=[edge]),
        ],
        figsize=(11, 3.8),
    )


__all__ += ["bound_panels", "decay_slider", "precision_panels", "score_panels", "wavelength_ladders"]


# ---- chapters 8–9 (Part V) ----

# Chapter 9 (stretching trained RoPE models): accuracy by evaluated length, one panel per task and
# regime, one curve per rule with its spread over seeds.


def accuracy_panels(
    lengths: Sequence[float],
    panels: Mapping[str, Mapping[str, Matrix]],
    *,
    chance: float,
    tick_labels: Sequence[str] | None = None,
    marks: Mapping[str, float] | None = None,
    columns: int | None = None,
    ylabel: str = "accuracy",
    xlabel: str = "evaluated length",
) -> tuple[Figure, np.ndarray]:
    """Accuracy against the evaluated length: a panel per entry of ``panels``, a curve per series.

    Each curve is the mean over seeds, in a band from the worst seed to the best.

    Args:
        lengths: the ``N`` evaluated lengths (drawn on a log2 axis).
        panels: panel title -> series name -> ``(seeds, N)`` accuracies.
        chance: the chance level, drawn as a dotted line in every panel.
        tick_labels: ``N`` labels of the length ticks (default: the lengths).
        marks: label -> length, each drawn as a dashed vertical line (e.g. ``{"L": 32}``).
        columns: panels per row (default: all in one row).
        ylabel, xlabel: the axis labels.

    Returns:
        ``(fig, axes)`` with ``axes`` a 1-D array of the panels, in the order of ``panels``. A
        series keeps its colour in every panel, and the figure has one legend below the panels,
        with every series of any panel.

    Raises:
        ValueError: if ``panels`` is empty, an accuracy table is not ``(seeds, N)`` or the tick
            labels are not ``N``.
    """
    if not panels:
        raise ValueError("panels must name at least one panel")
    x = _as_vector("lengths", lengths)
    if tick_labels is not None and len(tick_labels) != x.size:
        raise ValueError(f"tick_labels must have one label per length ({x.size}), got {len(tick_labels)}")
    columns = check_int("columns", columns if columns is not None else len(panels), minimum=1)
    rows = -(-len(panels) // columns)
    fig, grid = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.4 * rows), sharey=True,
                             layout="constrained", squeeze=False)
    axes = grid.ravel()
    # one colour per series name in every panel, and one legend entry for it
    names = list(dict.fromkeys(name for curves in panels.values() for name in curves))
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colors = {name: cycle[index % len(cycle)] for index, name in enumerate(names)}
    handles: dict[str, Any] = {}
    for ax, (title, curves) in zip(axes, panels.items(), strict=False):
        for name, table in curves.items():
            values = _as_matrix(f"accuracy of {name!r}", table)
            if values.shape[1] != x.size:
                raise ValueError(f"accuracy of {name!r} must be (seeds, {x.size}), got {values.shape}")
            (handles[name],) = ax.plot(x, values.mean(0), marker="o", markersize=3, color=colors[name],
                                       label=name)
            ax.fill_between(x, values.min(0), values.max(0), color=colors[name], alpha=0.2, linewidth=0)
        chance_line = ax.axhline(chance, color="gray", linestyle=":", linewidth=1, label="chance")
        for text, length in (marks or {}).items():
            ax.axvline(length, color="black", linewidth=0.8, linestyle="--")
            ax.annotate(text, (length, 1.02), ha="center", fontsize=8, annotation_clip=False)
        ax.set_xscale("log", base=2)
        ax.set_xticks(x, list(tick_labels) if tick_labels is not None else [f"{n:g}" for n in x])
        ax.set_ylim(0, 1.05)
        ax.set(title=title, xlabel=xlabel)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    for ax in grid[:, 0]:
        ax.set_ylabel(ylabel)
    handles["chance"] = chance_line
    fig.legend(list(handles.values()), list(handles), loc="outside lower center", ncol=min(len(handles), 8),
               fontsize=8)
    return fig, axes[: len(panels)]


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
    floor: float | None = None,
    train_len: int,
    ylabel: str = "loss at position t (nats)",
) -> tuple[Figure, Axes]:
    """A metric along the positions of long sequences, one line (and band) per model family.

    Args:
        curves: ``{name: (positions, mean, low, high)}``, equal lengths within each entry.
        floor: the best achievable value, drawn dashed (e.g. the entropy of a language); none
            is drawn if ``None`` (real text has no known floor).
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
    if floor is not None:
        ax.axhline(floor, color="black", linestyle="--", linewidth=1, label="best possible")
    ax.axvline(train_len, color="gray", linestyle=":", linewidth=1)
    ax.set_xscale("log", base=2)
    ax.set(xlabel=f"position t (dotted: training length L = {train_len})", ylabel=ylabel)
    ax.legend(fontsize=8, ncol=2)
    return fig, ax


def loss_by_position_over_seeds(
    losses: Mapping[str, Matrix], *, train_len: int, width: int = 8, ylabel: str = "loss at position t (nats)"
) -> tuple[Figure, Axes]:
    """Loss by position of several seeds per family: the mean over seeds and the band from the
    lowest to the highest seed, each averaged over consecutive bins of ``width`` positions.

    Args:
        losses: ``{name: (seeds, T) loss at positions 0 .. T - 1}``; ``T`` must be a multiple
            of ``width``. Bin ``b`` covers positions ``b * width .. (b + 1) * width - 1`` and is
            drawn at its centre.
        train_len: the training length, drawn as a dotted vertical line.
        width: positions per bin (>= 1).
        ylabel: label of the y axis.

    Returns:
        ``(fig, ax)`` as :func:`loss_by_position` (log2 position axis, no floor).

    Raises:
        TypeError: if a table is not a tensor or array.
        ValueError: if ``losses`` is empty, a table is not 2-D or its length is not a multiple
            of ``width``.
    """
    if not losses:
        raise ValueError("losses must not be empty")
    width = check_int("width", width, minimum=1)
    curves: dict[str, tuple[Sequence[float], Sequence[float], Sequence[float], Sequence[float]]] = {}
    for name, table in losses.items():
        values = _as_matrix(f"losses[{name!r}]", table).astype(float)
        if values.shape[1] % width:
            raise ValueError(f"losses[{name!r}] has {values.shape[1]} positions, not a multiple of width={width}")
        binned = values.reshape(values.shape[0], -1, width).mean(-1)  # (seeds, bins)
        centres = width * np.arange(binned.shape[1]) + (width - 1) / 2
        curves[name] = (list(centres), list(binned.mean(0)), list(binned.min(0)), list(binned.max(0)))
    return loss_by_position(curves, train_len=train_len, ylabel=ylabel)


__all__ += ["accuracy_panels", "loss_by_position", "loss_by_position_over_seeds", "loss_curves"]
