"""The figures of chapters 5–6 (Part IV: rotary embeddings): vectors on a plane, score profiles by
offset, the rotating query and key pairs (interactive), frequency bands, attention maps with their
difference, and the orbit of a pair beside the terms of a score."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .._validation import check_int
from .core import Matrix, Vector, _as_matrix, _as_vector, heatmap, xy_curves

__all__ = [
    "frequency_bands",
    "offset_profiles",
    "orbit_and_terms",
    "plane_vectors",
    "rotating_pairs_figure",
    "scores_beside_profiles",
    "weight_maps_with_difference",
]


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
        TypeError, ValueError: as :func:`~posenc.plotting.core.heatmap` and :func:`offset_profiles`.
    """
    grid = _as_matrix("score_grid", score_grid).astype(float)
    fig, (ax_grid, ax_curve) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
    limit = float(np.abs(grid).max()) or 1.0
    heatmap(grid, ax_grid, title=grid_title, cmap="RdBu_r", vmin=-limit, vmax=limit)
    offset_profiles(offsets, profiles, ax_curve, title=profile_title, ylabel=ylabel)
    return fig


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
    from ..interactive import _plotly_graph_objects, grid_slider_figure

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
