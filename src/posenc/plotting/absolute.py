"""The figures of Parts I–II (chapters 2–3: absolute encodings).

Chapter 2: histograms of samples, cosine-similarity heatmaps of position tables, the walk of a
table's rows on a plane (interactive) and a table beside its similarity profile. Chapter 3: a pair
on its circle, the Gram matrix beside its profile by offset, the extrapolation panels, binary
counting beside the sinusoidal table, bits as square waves over sines with the ladders of periods, and
the two slider figures (a table per base, a curve per base).

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
from matplotlib.ticker import MaxNLocator

from .._validation import check_int
from .core import Matrix, Vector, _as_matrix, _as_vector, curves, heatmap, heatmaps, xy_curves

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = [
    "bits_as_sine_signs",
    "curve_slider",
    "extrapolation_panels",
    "gram_by_offset",
    "histograms",
    "pair_on_circle",
    "pair_walk",
    "similarity_heatmaps",
    "table_profile",
]


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
    from ..interactive import _plotly_graph_objects, slider_figure

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
    distance: Vector | Mapping[str, Vector],
    *,
    train_len: int,
    pair: int,
    level: float,
) -> Figure:
    """Three panels on a table used beyond its training length.

    Left: the fraction of its circle each pair sweeps (one curve per label of ``coverage``).
    Middle: :func:`pair_on_circle` for ``pair``. Right: the distance of every position's row
    from the nearest training row, with the training length and ``level`` (labelled
    "orthogonal") marked by dashed lines.

    Args:
        coverage: label -> ``(d/2,)`` fraction of its circle each pair sweeps.
        sines, cosines: the ``(N,)`` columns of ``pair``.
        distance: the ``(N,)`` distances, or label -> ``(N,)`` distances (e.g. over all pairs
            and over some of them), drawn with a legend.
        train_len: the training length; pair: the pair drawn in the middle; level: the
            reference height on the right.

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
    named = dict(distance) if isinstance(distance, Mapping) else {"distance": distance}
    values = {label: _as_vector(f"distance[{label!r}]", curve) for label, curve in named.items()}
    xy_curves(
        {label: range(len(curve)) for label, curve in values.items()},
        values,
        axes[2],
        xlabel="position i",
        ylabel="relative distance",
        title="Distance to the nearest training row",
        levels={"orthogonal": level},
        vlines=[train_len],
        legend=None if not isinstance(distance, Mapping) else "lower right",
    )
    return fig


def bits_as_sine_signs(n_positions: int, n_bits: int, ladders: Mapping[str, Vector]) -> Figure:
    """Bit ``t`` of the position as a square wave over the sine of the same period; then ladders of periods.

    Left, one row per bit ``t = 0 .. n_bits - 1``: ``(-1)`` to the power of bit ``t`` of ``i``, for
    ``i = 0 .. n_positions - 1``, as a step over ``[i, i + 1)``, and ``sin(pi x / 2^t)``, the sine of
    period ``2^(t+1)`` whose sign that square wave is. Right: each ladder of periods against its
    index on a logarithmic axis, where a geometric ladder is a straight line.

    Args:
        n_positions: how many positions the waves cover, at least 2.
        n_bits: how many bits are drawn, at least 1.
        ladders: label -> ``(K,)`` positive periods (e.g. ``2^(t+1)`` of the bits and the
            wavelengths of an encoding).

    Returns:
        The figure, whose axes are the ``n_bits`` waves from the lowest bit down, then the ladders.

    Raises:
        TypeError: if ``n_positions`` or ``n_bits`` is not an integer, or a ladder is not numeric.
        ValueError: if ``n_positions`` or ``n_bits`` is too small, ``ladders`` is empty or a period
            is not positive.
    """
    n_positions = check_int("n_positions", n_positions, minimum=2)
    n_bits = check_int("n_bits", n_bits, minimum=1)
    if not ladders:
        raise ValueError("ladders must hold at least one ladder of periods, got none")
    periods = {label: _as_vector(f"ladders[{label!r}]", values) for label, values in ladders.items()}
    if any((values <= 0).any() for values in periods.values()):
        raise ValueError("every period in ladders must be positive")
    fig = plt.figure(figsize=(12.0, 1.1 * n_bits + 1.0), layout="constrained")
    grid = fig.add_gridspec(n_bits, 2, width_ratios=[2.2, 1])
    edges, smooth = np.arange(n_positions + 1), np.linspace(0, n_positions, 40 * n_positions + 1)
    for bit in range(n_bits):
        ax = fig.add_subplot(grid[bit, 0])
        square = (-1.0) ** ((edges[:-1] >> bit) & 1)
        ax.step(edges, np.append(square, square[-1]), where="post", color="black", label="bit, as $(-1)^{bit}$")
        ax.plot(smooth, np.sin(np.pi * smooth / 2**bit), color="C0", label="sine of the same period")
        ax.set(xlim=(0, n_positions), ylim=(-1.4, 1.4), yticks=[-1, 1], ylabel=f"bit {bit}")
        ax.tick_params(labelbottom=bit == n_bits - 1)
        if bit == 0:
            ax.set_title(r"bit $t$ of $i$: the sign of a sine of period $2^{t+1}$", loc="left")
            ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), fontsize=8, ncols=2, frameon=False)
    ax.set_xlabel("position i")
    ladder_ax = fig.add_subplot(grid[:, 1])
    xy_curves(
        {label: range(len(values)) for label, values in periods.items()},
        periods,
        ladder_ax,
        styles=["o-"] * len(periods),
        logy=True,
        xlabel=r"index ($t$ or $\ell$)",
        ylabel="period (positions)",
        title="Ladders of periods",
        legend="upper left",
    )
    ladder_ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # an index has no fractions
    return fig


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
    from ..interactive import _plotly_graph_objects, slider_figure

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
