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
from dataclasses import dataclass
from typing import Any

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

__all__ += ["SkewStages", "skew_diagram", "skew_stages"]

_PAD = -1  # query index of the zero padding in SkewStages


@dataclass(frozen=True)
class SkewStages:
    """Where every entry of the relative logits sits at each stage of the skew.

    Each stage is a pair of integer arrays of the stage's shape: ``query[r, c]`` is the query
    ``i`` whose product ``q_i . a_delta`` sits in cell ``(r, c)`` (``-1`` for the zero pad) and
    ``offset[r, c]`` its offset ``delta`` (``0`` for the pad).

    Attributes:
        logits: ``(L, L)``: ``Q E^T``, offset ``delta`` in column ``delta + L - 1``.
        padded: ``(L, L + 1)``: one zero column on the left.
        reshaped: ``(L + 1, L)``: the same memory read with rows of length ``L``.
        result: ``(L, L)``: what the shift returns.
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

    Entry ``(i, delta + L - 1)`` of an ``(L, L)`` matrix is given a unique label; the stages
    ``padded`` and ``reshaped`` apply the trick's pad and reshape to the labels, and ``result``
    is ``shift`` applied to them, so a wrong shift shows up as entries in the wrong cells.

    Args:
        shift: the function under study, ``(L, L) -> (L, L)`` (e.g. the chapter's ``skew``).
        length: ``L`` (>= 2).

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
    ``delta``. Panels: ``Q E^T``; padded; read as ``(L + 1, L)``, with the dropped first row
    faded; the result, with every cell that does not hold ``q_i . a_(j - i)`` faded (for a
    correct shift: the leftovers above the diagonal, which a causal mask hides).

    Args:
        shift: the function under study, ``(L, L) -> (L, L)``.
        length: ``L`` (>= 2; small values read best).

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
        (stages.logits, np.zeros((length, length), dtype=bool), "1. $QE^T$: column $\\delta + L - 1$"),
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


def _as_vector(name: str, values: object) -> np.ndarray:
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    if not isinstance(values, np.ndarray):
        raise TypeError(f"{name} must be a torch.Tensor or numpy.ndarray, got {type(values).__name__}")
    if values.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {values.shape}")
    return values


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


__all__ += ["accuracy_by_length", "loss_curves"]
