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
__all__ += ["offset_profiles", "plane_vectors", "rotating_pairs_figure"]


def _as_vector(name: str, values: object) -> np.ndarray:
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    if isinstance(values, (list, tuple, range)):
        values = np.asarray(values, dtype=float)
    if not isinstance(values, np.ndarray):
        raise TypeError(f"{name} must be a torch.Tensor, numpy.ndarray or sequence, got {type(values).__name__}")
    if values.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {values.shape}")
    return values.astype(float)


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
    ``i`` and ``j`` among ``positions`` (:func:`posenc.grid_slider_figure`).

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


# ---- chapter 7 ----


# ---- chapters 8–9 (Part V) ----
