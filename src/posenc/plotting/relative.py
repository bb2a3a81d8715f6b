"""The figures of Part III (chapter 4: relative encodings): the stages of Transformer-XL's relative
shift, matrices indexed by offset, curves by offset, and ALiBi's and T5's biases head by head."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .._validation import check_int
from .core import Matrix, _as_matrix, _as_vector, heatmap

__all__ = ["SkewStages", "bias_by_head_slider", "curves_by_offset", "offset_matrices", "skew_diagram", "skew_stages"]


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
    from ..interactive import _plotly_graph_objects, slider_figure

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


def t5_bucket_panels(
    offsets: Matrix,
    bidirectional: Matrix,
    causal: Matrix,
    *,
    exact: tuple[float, float] = (8, 16),
    last: tuple[float, float] = (91, 113),
    num_buckets: int = 32,
    max_distance: int = 128,
) -> tuple[Figure, np.ndarray]:
    """T5's bucket of every offset, bidirectional (left) and causal (right), as step curves.

    Dotted grey lines mark where the exact buckets end, dashed ones where the last bucket
    starts; the causal panel marks only the past (negative offsets).

    Args:
        offsets: ``(N,)`` offsets ``j - i``.
        bidirectional, causal: ``(N,)`` bucket of each offset in the two settings.
        exact: the distance where the exact range ends, bidirectional and causal.
        last: the distance where the last bucket starts, bidirectional and causal.
        num_buckets, max_distance: the setting, for the panel titles.

    Returns:
        ``(fig, axes)``, two axes.

    Raises:
        TypeError, ValueError: as :func:`curves_by_offset` (a bucket map whose length differs
            from that of ``offsets``).
    """
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), layout="constrained")
    panels = [(axes[0], bidirectional, True, exact[0], last[0]), (axes[1], causal, False, exact[1], last[1])]
    for ax, buckets, both_sides, exact_end, last_start in panels:
        marks = {-last_start: "--", -exact_end: ":"}
        marks |= {exact_end: ":", last_start: "--"} if both_sides else {}
        mode = "bidirectional" if both_sides else "causal"
        curves_by_offset(
            offsets,
            {"bucket": buckets},
            ax,
            steps=True,
            marks=marks,
            ylabel="bucket",
            title=f"{mode}, {num_buckets} buckets, max_distance {max_distance}",
        )
    return fig, axes


def alibi_weight_curves(weights: Matrix, *, title: str = "ALiBi weights of the last query, no content") -> Axes:
    """The last query's attention weights by distance, one curve per head, on a log axis.

    Args:
        weights: ``(H, L)`` weights of the last query of an ``L``-token sequence on keys
            ``0 .. L - 1`` (so key ``j`` is at distance ``L - 1 - j``), head ``r`` in row ``r``.
        title: title of the plot.

    Returns:
        The axes, y from 1e-6 to 1.5, curves labelled "head 1", "head 2", ...

    Raises:
        TypeError, ValueError: if ``weights`` is not a 2-D tensor or array.
    """
    rows = _as_matrix("weights", weights)
    length = rows.shape[1]
    ax = curves_by_offset(
        np.arange(length - 1, -1, -1),
        {f"head {h + 1}": w for h, w in enumerate(rows)},
        logy=True,
        xlabel="distance i - j",
        ylabel="weight (log axis)",
        title=title,
    )
    ax.set_ylim(1e-6, 1.5)
    return ax
