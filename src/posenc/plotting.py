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


# ---- chapter 5 ----


# ---- chapter 6 ----
__all__ += [
    "complex_orbits",
    "frequency_bands",
    "offset_curves",
    "rotating_pairs_slider",
    "weight_maps_with_difference",
]


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
        The figure: per panel, one scatter (pair index, wavelength) per axis, on a log scale.

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
        lengths_np, owner_np = _ch6_vector("wavelengths", lengths), _ch6_vector("owners", owners[title])
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


def _ch6_complex(name: str, values: object, ndim: int) -> torch.Tensor:
    if not isinstance(values, torch.Tensor):
        raise TypeError(f"{name} must be a complex torch.Tensor, got {type(values).__name__}")
    if not values.is_complex() or values.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D complex tensor, got {values.dtype} of shape {tuple(values.shape)}")
    return values.detach().cpu()


def complex_orbits(
    orbits: Mapping[str, torch.Tensor],
    ax: Axes | None = None,
    *,
    labelled: Mapping[str, Sequence[int]] | None = None,
    title: str | None = None,
) -> Axes:
    """Complex coordinates ``z_m`` at successive positions ``m``, each on its own dotted circle.

    Args:
        orbits: legend label -> ``(S,)`` complex tensor, the coordinate at positions ``0..S-1``;
            the circle has radius ``|z_0|``.
        ax: axes to draw on (default: a new figure).
        labelled: legend label -> the indices ``m`` to annotate ``"m=..."`` (default: every point).
        title: title of the plot.

    Returns:
        The axes, square, with one ``Line2D`` of points and one circle patch per orbit.

    Raises:
        TypeError, ValueError: if an orbit is not a 1-D complex tensor.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(4.4, 4.4))
    limit = 0.0
    for index, (label, values) in enumerate(orbits.items()):
        points = _ch6_complex(f"orbits[{label!r}]", values, 1)
        colour = f"C{index}"
        radius = float(points[0].abs()) if len(points) else 0.0
        limit = max(limit, radius)
        ax.add_patch(plt.Circle((0, 0), radius, fill=False, ls=":", color=colour))
        ax.plot(points.real.numpy(), points.imag.numpy(), "o", color=colour, ms=5, label=label)
        chosen = range(len(points)) if labelled is None else labelled.get(label, [])
        for m in chosen:
            outward = points[m] / points[m].abs() if points[m].abs() > 0 else torch.tensor(1 + 0j)
            ax.annotate(
                f"m={m}",
                (float(points[m].real), float(points[m].imag)),
                textcoords="offset points",
                xytext=(14 * float(outward.real), 14 * float(outward.imag)),
                ha="center",
                va="center",
                fontsize=8,
                color=colour,
            )
    span = 1.25 * limit or 1.0
    ax.set(xlim=(-span, span), ylim=(-span, span), aspect="equal", xlabel="real part", ylabel="imaginary part")
    if title is not None:
        ax.set_title(title)
    ax.legend(loc="lower left", fontsize=8)
    return ax


def offset_curves(
    offsets: torch.Tensor | np.ndarray,
    curves: Mapping[str, torch.Tensor | np.ndarray],
    ax: Axes | None = None,
    *,
    styles: Mapping[str, Mapping[str, object]] | None = None,
    points: Mapping[str, tuple[torch.Tensor | np.ndarray, torch.Tensor | np.ndarray]] | None = None,
    xlabel: str = "offset $j - i$",
    ylabel: str = "contribution to the score",
    title: str | None = None,
    legend_columns: int = 3,
) -> Axes:
    """Curves against the offset (terms of a score, parts of a score), with optional dots.

    Args:
        offsets: ``(N,)`` offsets, the x values of every curve.
        curves: legend label -> ``(N,)`` values.
        ax: axes to draw on (default: a new figure).
        styles: legend label -> keyword arguments of ``ax.plot`` for that curve (colour, style).
        points: legend label -> ``(x, y)`` drawn as black dots (e.g. values computed another way).
        xlabel, ylabel, title: text of the plot.
        legend_columns: columns of the legend, placed below the axes.

    Returns:
        The axes, with one ``Line2D`` per curve, then one per set of points.

    Raises:
        ValueError: if a curve or a set of points does not match its x values in length.
    """
    x = _ch6_vector("offsets", offsets)
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 4.2), layout="constrained")
    for label, values in curves.items():
        y = _ch6_vector(f"curves[{label!r}]", values)
        if y.shape != x.shape:
            raise ValueError(f"curve {label!r} has {y.shape[0]} values for {x.shape[0]} offsets")
        ax.plot(x, y, label=label, **dict((styles or {}).get(label, {"lw": 1})))  # type: ignore[arg-type]
    for label, (px, py) in (points or {}).items():
        px_np, py_np = _ch6_vector(f"points[{label!r}] x", px), _ch6_vector(f"points[{label!r}] y", py)
        if px_np.shape != py_np.shape:
            raise ValueError(f"points {label!r}: {px_np.shape[0]} x values but {py_np.shape[0]} y values")
        ax.plot(px_np, py_np, "o", color="black", ms=4, label=label)
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.legend(
        fontsize=8,
        ncol=check_int("legend_columns", legend_columns, minimum=1),
        loc="upper center",
        bbox_to_anchor=(0.5, -0.15),
    )
    return ax


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


def rotating_pairs_slider(
    query_pairs: torch.Tensor,
    key_pairs: torch.Tensor,
    query_positions: Sequence[int],
    key_positions: Sequence[int],
    *,
    title: str | None = None,
    ncols: int = 2,
) -> Any:
    """A slider over positions showing each pair of a query and a key as arrows in the complex plane.

    Panel ``l`` shows the query's pair ``l`` (blue) and the key's (red) at the slider's step, on
    dotted circles of their radii; its title gives the pair's term ``Re(conj(q_l) k_l)`` at the
    first step and the figure's title the score (their sum), which is the same at every step when
    the encoding is relative. Hovering over a point shows its angle and the angle from query to key.

    Args:
        query_pairs, key_pairs: ``(S, K)`` complex coordinates of the query and the key at the
            ``S`` steps of the slider.
        query_positions, key_positions: the ``S`` positions of the query and of the key, for the
            slider's labels (the query's) and the hover text.
        title: the figure's title (default: the score at the first step).
        ncols: panels per row.

    Returns:
        A ``plotly.graph_objects.Figure`` (wrap it with :func:`posenc.interactive_figure`).

    Raises:
        TypeError, ValueError: if the pairs are not 2-D complex tensors of one shape, or the
            positions do not have one entry per step.
    """
    from plotly.subplots import make_subplots

    from .interactive import _plotly_graph_objects, slider_figure

    go_module = _plotly_graph_objects()
    q_points = _ch6_complex("query_pairs", query_pairs, 2)
    k_points = _ch6_complex("key_pairs", key_pairs, 2)
    if q_points.shape != k_points.shape:
        raise ValueError(
            f"query_pairs and key_pairs must have one shape, got {tuple(q_points.shape)} and {tuple(k_points.shape)}"
        )
    steps_count, pairs = q_points.shape
    if len(query_positions) != steps_count or len(key_positions) != steps_count:
        raise ValueError(f"query_positions and key_positions must have one entry per step ({steps_count})")
    ncols = check_int("ncols", ncols, minimum=1)
    terms = (q_points.conj() * k_points).real
    between = torch.angle(k_points / q_points)
    panels = make_subplots(
        rows=-(-pairs // ncols),
        cols=ncols,
        subplot_titles=[f"ℓ = {p}: term {float(terms[0, p]):+.3f}" for p in range(pairs)],
    )
    layout = panels.layout.to_plotly_json()
    layout.update(
        template="plotly_white",
        height=260 * -(-pairs // ncols),
        showlegend=False,
        margin={"l": 10, "r": 10, "t": 70, "b": 10},
        title={"text": title or f"score {float(terms[0].sum()):.3f} at the first step", "x": 0.5},
    )
    colours = {"query": "#1f77b4", "key": "#d62728"}
    shapes = []
    for pair in range(pairs):
        axis = "" if pair == 0 else str(pair + 1)
        radii = float(q_points[0, pair].abs()), float(k_points[0, pair].abs())
        limit = 1.15 * max(radii) or 1.0
        square = {"range": [-limit, limit], "showgrid": False, "showticklabels": False, "zeroline": True}
        layout[f"xaxis{axis}"].update(square)
        layout[f"yaxis{axis}"].update(square, scaleanchor=f"x{axis}")
        for radius, colour in zip(radii, colours.values(), strict=True):
            shapes.append(
                {
                    "type": "circle",
                    "xref": f"x{axis}",
                    "yref": f"y{axis}",
                    "x0": -radius,
                    "y0": -radius,
                    "x1": radius,
                    "y1": radius,
                    "line": {"color": colour, "dash": "dot", "width": 1},
                }
            )
    layout["shapes"] = shapes
    steps = []
    for step in range(steps_count):
        traces = []
        for pair in range(pairs):
            axis = "" if pair == 0 else str(pair + 1)
            for who, point, where in [
                ("query", q_points[step, pair], query_positions[step]),
                ("key", k_points[step, pair], key_positions[step]),
            ]:
                x, y = float(point.real), float(point.imag)
                common = {"xaxis": f"x{axis}", "yaxis": f"y{axis}", "showlegend": False}
                traces.append(
                    go_module.Scatter(
                        x=[0, x],
                        y=[0, y],
                        mode="lines",
                        hoverinfo="skip",
                        line={"color": colours[who], "width": 3},
                        **common,
                    )
                )
                traces.append(
                    go_module.Scatter(
                        x=[x],
                        y=[y],
                        mode="markers",
                        marker={"color": colours[who], "size": 11},
                        name=f"{who} pair {pair}",
                        **common,
                        hovertemplate=(
                            f"{who} pair ℓ = {pair} at position {where}<br>angle {float(torch.angle(point)):+.2f} "
                            f"rad<br>angle from query to key: {float(between[step, pair]):+.2f} rad<extra></extra>"
                        ),
                    )
                )
        steps.append((str(query_positions[step]), traces))
    return slider_figure(steps, slider_label="query position m = ", layout=layout)


def _ch6_vector(name: str, values: object) -> np.ndarray:
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    if not isinstance(values, np.ndarray):
        raise TypeError(f"{name} must be a torch.Tensor or numpy.ndarray, got {type(values).__name__}")
    if values.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {values.shape}")
    return values


# ---- chapter 7 ----


# ---- chapters 8–9 (Part V) ----
