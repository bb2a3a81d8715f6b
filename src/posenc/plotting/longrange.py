"""The figures of chapter 7 (Part IV: RoPE at long range): the windowed summary of a curve that
oscillates too fast to read (a band between its extremes around its window average), and one
function per kind of figure: the all-ones score in panels, the decay sliders, the Abel-summation
bound, the wavelength ladders and the errors of low-precision angles."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.figure import Figure

from .._validation import check_int
from .core import Vector, _as_vector
from .panels import Curve, LinePanel, Reference, line_panels

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = [
    "WindowSummary",
    "band_traces",
    "bound_panels",
    "decay_slider",
    "log_windows",
    "precision_panels",
    "score_panels",
    "wavelength_ladders",
]


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
        ncols, figsize, suptitle: as for :func:`~posenc.plotting.panels.line_panels`.
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
    from ..interactive import grid_slider_figure

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
    level_label: str | None = None,
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
        level_label: the reference level's name in both legends (None: the level is unnamed).

    Returns:
        The figure, bounds on ``fig.axes[0]`` and octaves on ``fig.axes[1]``.

    Raises:
        ValueError: if ``bounds`` and ``octaves`` do not have the same labels, or an octave
            summary's means and maxima differ in length.
        TypeError: if ``level_label`` is neither a string nor None.
    """
    if level_label is not None and not isinstance(level_label, str):
        raise TypeError(f"level_label must be a string or None, got {type(level_label).__name__}")
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
    reference = [Reference(level, label=level_label, style={"color": "0.4", "ls": "--"})]
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
    rounding: Mapping[str, Vector] | None = None,
    limit: float = 65504.0,
) -> Figure:
    """Errors of angles formed in low precision (left) and of the scores they give (right).

    Args:
        positions: the positions, x values of both log-log panels.
        angle_errors: the largest angle error at each position, per number format (label).
        score_errors: the largest score error at each position, per format (the same labels).
        extra_scores: further score-error curves, drawn dashed in black (e.g. another library's).
        rounding: reference score errors, drawn dash-dotted in grey and labelled "q, k rounded to
            <label>" (e.g. the error of rounding query and key to a 16-bit format), lighter for
            each further one.
        limit: a vertical dotted line on both panels (default: the largest float16, 65 504).

    Returns:
        The figure, angles on ``fig.axes[0]`` (with a line at π: no information left) and
        scores on ``fig.axes[1]``; each panel's legend names every curve and line in it (the
        score curves as "<label> angles").

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
        right.append(Curve(x, score_errors[label], f"{label} angles", style))
    for label, values in (extra_scores or {}).items():
        right.append(Curve(x, values, label, {"color": "k", "linestyle": "--"}))
    for number, (label, values) in enumerate((rounding or {}).items()):
        grey = f"{min(0.3 + 0.25 * number, 0.8):.2f}"
        right.append(Curve(x, values, f"q, k rounded to {label}", {"color": grey, "linestyle": "-."}))
    pi_line = Reference(float(np.pi), label="π: no information left")
    fig = line_panels(
        [
            LinePanel(left, "Angle error vs float64", "position", "max angle error (rad)", "log", "log",
                      references=[pi_line, edge]),
            LinePanel(right, "Score error vs float64 (keys at m - 0..255)", "query position m", "max |score error|",
                      "log", "log", references=[edge], legend=None),
        ],
        figsize=(11, 3.8),
    )
    # Every curve of the right panel crosses it from side to side: its legend goes below it.
    fig.axes[1].legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, fontsize=8)
    return fig


def slow_centre(offsets: Vector, score: Vector, slow: Vector, dim: int, fast_limit: float) -> Figure:
    """A score against distance, thin, with the part of its slow pairs drawn over it in red.

    Args:
        offsets: the distances ``|j - i|``.
        score: the score at each distance (all pairs).
        slow: the part of the score from the pairs whose wavelength exceeds ``fast_limit``.
        dim: the head dimension ``d`` (for the title).
        fast_limit: the wavelength that separates fast pairs from slow ones (for the legend).

    Returns:
        The figure (one panel; the score is ``lines[0]``, the slow part ``lines[1]``; the score
        axis is cut at -60 and 160).

    Raises:
        ValueError: if the three vectors differ in length.
    """
    x, total, part = (_as_vector(name, v) for name, v in [("offsets", offsets), ("score", score), ("slow", slow)])
    if not len(x) == len(total) == len(part):
        raise ValueError(f"offsets, score and slow must have one length, got {len(x)}, {len(total)}, {len(part)}")
    return line_panels([LinePanel(
        [Curve(x, total, "score (all pairs)", {"linewidth": 0.2}),
         Curve(x, part, f"slow pairs only (wavelength > {fast_limit:g})", {"color": "C3", "linewidth": 1.5})],
        title=f"d = {dim}: the slow pairs draw the drifting centre of the tail",
        xlabel="distance |j - i|", ylabel="score", ylim=(-60, 160), legend="upper right")], figsize=(8, 3.4))


def positional_profiles(offsets: Vector, baseline: Vector, profiles: Mapping[int, Vector], dim: int) -> Figure:
    """Position profiles of heads built to peak at chosen offsets, beside the all-ones curve.

    Args:
        offsets: the offsets ``δ = j - i``.
        baseline: the all-ones score divided by ``d`` at each offset, drawn in grey.
        profiles: for each target offset ``δ*``, the profile ``c^T R_(δ-δ*) c / |c|^2`` at each
            offset; each is labelled with the offset where it peaks (blue, then red, ...).
        dim: the head dimension ``d`` (for the title).

    Returns:
        The figure, one panel (``lines[0]`` the baseline, then one line per profile).

    Raises:
        ValueError: if ``profiles`` is empty or a curve differs in length from ``offsets``.
    """
    if not profiles:
        raise ValueError("profiles must contain at least one profile")
    x = _as_vector("offsets", offsets)
    curves = [Curve(x, baseline, "all-ones (the 'decay' curve)", {"color": "0.5"})]
    for number, (target, profile) in enumerate(profiles.items()):
        y = _as_vector(f"profile {target}", profile)
        if len(y) != len(x):
            raise ValueError(f"profile {target} has {len(y)} values for {len(x)} offsets")
        peak = int(x[y.argmax()])
        curves.append(Curve(x, y, f"c^T R_(δ-δ*) c with δ* = {target} (peak at {peak})",
                            {"color": ["C0", "C3", "C2", "C1"][number % 4]}))
    panel = LinePanel(curves, f"d = {dim}: the profile is chosen by q and k", "offset δ = j - i", "score / maximum",
                      legend="lower left")
    return line_panels([panel], figsize=(8, 3.6))


__all__ += ["positional_profiles", "slow_centre"]
