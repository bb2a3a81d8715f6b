"""Figure kinds of chapter 7 (posenc.plotting, section "chapter 7"): what they draw, not how it looks.

The Agg backend is selected in ``conftest.py``; every figure is closed after each test.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from posenc import Curve, LinePanel, Reference, WindowSummary, band_traces, line_panels, log_windows
from posenc.plotting import positional_profiles, slow_centre


def test_line_panels_draws_every_curve_with_its_data_labels_and_style():
    x = torch.arange(5)
    panels = [
        LinePanel([Curve(x, x**2, "square", {"color": "C3", "linewidth": 2})], title="a", xlabel="j", ylabel="s"),
        LinePanel([Curve([1, 2, 4], np.array([1.0, 0.5, 0.25])), Curve([1, 2], [3.0, 4.0], "b")], yscale="log"),
        LinePanel([Curve(x, -x, style={"drawstyle": "steps-post"})], xscale="log2", legend=None),
    ]
    fig = line_panels(panels, ncols=2, suptitle="all")
    assert len(fig.axes) == 3  # the fourth cell of the 2 x 2 grid is removed
    first, second, third = fig.axes
    (line,) = first.lines
    np.testing.assert_array_equal(line.get_xdata(), x.numpy())
    np.testing.assert_array_equal(line.get_ydata(), (x**2).numpy())
    assert line.get_color() == "C3" and line.get_linewidth() == 2
    assert (first.get_title(), first.get_xlabel(), first.get_ylabel()) == ("a", "j", "s")
    assert [t.get_text() for t in first.get_legend().get_texts()] == ["square"]
    assert len(second.lines) == 2 and second.get_yscale() == "log"
    np.testing.assert_array_equal(second.lines[0].get_ydata(), [1.0, 0.5, 0.25])
    assert [t.get_text() for t in second.get_legend().get_texts()] == ["b"]  # unlabelled curves stay out
    assert third.get_xscale() == "log" and third.xaxis.get_transform().base == 2
    assert third.get_legend() is None and third.lines[0].get_drawstyle() == "steps-post"
    assert fig.get_suptitle() == "all"


def test_line_panels_reference_lines_limits_and_text():
    panel = LinePanel(
        [Curve([0, 10], [0, 5])],
        xlim=(0, 10),
        ylim=(-1, 6),
        references=[Reference(3.0, text="context"), Reference(7.0, axis="x", label="limit", style={"color": "r"})],
    )
    (ax,) = line_panels([panel]).axes
    horizontal, vertical = ax.lines[1], ax.lines[2]
    assert list(horizontal.get_ydata()) == [3.0, 3.0] and list(vertical.get_xdata()) == [7.0, 7.0]
    assert horizontal.get_linestyle() == "--" and vertical.get_color() == "r"
    assert ax.get_xlim() == (0, 10) and ax.get_ylim() == (-1, 6)
    (text,) = ax.texts
    assert text.get_text() == "context" and text.get_position() == (0, 3.0)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["limit"]


def test_line_panels_rejects_bad_input():
    with pytest.raises(ValueError, match="at least one"):
        line_panels([])
    with pytest.raises(TypeError, match="LinePanel"):
        line_panels([Curve([0], [0])])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="differ in length"):
        line_panels([LinePanel([Curve([0, 1, 2], [0, 1])])])
    with pytest.raises(ValueError, match="1-D"):
        line_panels([LinePanel([Curve(torch.zeros(2, 2), torch.zeros(2, 2))])])
    with pytest.raises(TypeError, match="tensor"):
        line_panels([LinePanel([Curve("abc", [0, 1, 2])])])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="xscale"):
        line_panels([LinePanel([Curve([1], [1])], xscale="ln")])
    with pytest.raises(ValueError, match="axis"):
        line_panels([LinePanel([Curve([1], [1])], references=[Reference(1.0, axis="z")])])
    with pytest.raises(ValueError, match="ncols"):
        line_panels([LinePanel([Curve([1], [1])])], ncols=0)


def test_log_windows_matches_a_direct_computation_of_each_window():
    x = torch.arange(1, 1001)
    y = torch.sin(x.double())
    summary = log_windows(x, y, per_decade=4)
    # 3 decades, 4 windows each, on edges 1, 10^(1/4), ..., 1000 rounded to integers.
    edges = np.append(np.unique(np.round(np.logspace(0, 3, 13))), np.inf)
    assert len(summary.centres) == len(edges) - 1  # the last edge (1000) opens a one-point window
    for k, (start, stop) in enumerate(zip(edges[:-1], edges[1:], strict=True)):
        inside = (x.numpy() >= start) & (x.numpy() < stop)
        assert summary.centres[k] == pytest.approx(x.numpy()[inside].mean())
        assert summary.mean[k] == pytest.approx(y.numpy()[inside].mean())
        assert summary.low[k] == y.numpy()[inside].min() and summary.high[k] == y.numpy()[inside].max()
    assert bool(np.all(summary.low <= summary.mean)) and bool(np.all(summary.mean <= summary.high))


def test_log_windows_rejects_bad_input():
    with pytest.raises(ValueError, match="equal length"):
        log_windows([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="positive and increasing"):
        log_windows([0, 1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="positive and increasing"):
        log_windows([3, 2, 1], [1, 2, 3])
    with pytest.raises(ValueError, match="per_decade"):
        log_windows([1, 2], [1, 2], per_decade=0)


def test_band_traces_draw_the_band_the_mean_and_the_marker():
    summary = WindowSummary(
        centres=np.array([1.0, 2.0, 3.0]),
        mean=np.array([0.5, 0.4, 0.3]),
        low=np.array([0.1, 0.0, -0.1]),
        high=np.array([0.9, 0.8, 0.7]),
    )
    band, mean, marker = band_traces(summary, marker=(2.0, 0.5), colour="#ff0000", marker_name="first drop")
    assert list(band.x) == [1.0, 2.0, 3.0, 3.0, 2.0, 1.0]
    assert list(band.y) == [0.9, 0.8, 0.7, -0.1, 0.0, 0.1]  # up along the top, back along the bottom
    assert band.fill == "toself" and band.fillcolor == "rgba(255, 0, 0, 0.25)"
    assert list(mean.y) == [0.5, 0.4, 0.3] and mean.line.color == "#ff0000"
    assert (list(marker.x), list(marker.y)) == ([2.0], [0.5]) and "first drop" in marker.hovertemplate
    assert len(band_traces(summary)) == 2


# --------------------------------------------------------------------------- chapter 7's figure kinds


def test_score_panels_draws_one_curve_per_panel_thin_when_long():
    from posenc.plotting import score_panels

    long_x = torch.arange(2000)
    fig = score_panels([("(a) short", [0, 1, 2], [3.0, 2.0, 1.0]), ("(b) long", long_x, long_x.double().cos())],
                       ncols=1, xlabel="j", suptitle="all")
    first, second = fig.axes
    assert [ax.get_title() for ax in fig.axes] == ["(a) short", "(b) long"]
    np.testing.assert_array_equal(first.lines[0].get_ydata(), [3.0, 2.0, 1.0])
    np.testing.assert_allclose(second.lines[0].get_ydata(), np.cos(np.arange(2000)))
    assert first.lines[0].get_linewidth() == 0.8 and second.lines[0].get_linewidth() == 0.25
    assert first.get_xlabel() == "j" and first.get_ylabel() == "score" and fig.get_suptitle() == "all"
    with pytest.raises(ValueError, match="at least one"):
        score_panels([])
    with pytest.raises(ValueError, match="triple"):
        score_panels([("a", [1, 2])])  # type: ignore[list-item]


def test_decay_slider_puts_each_base_and_dimension_in_its_grid_cell():
    from posenc.interactive import GRID_META_KEY
    from posenc.plotting import decay_slider

    def summary(shift: float) -> WindowSummary:
        return WindowSummary(np.array([1.0, 10.0, 100.0]), np.array([1.0, 0.5, 0.2]) - shift,
                             np.array([0.9, 0.3, -0.2]) - shift, np.array([1.0, 0.7, 0.4]) - shift)

    bases, dims = {"10³": 1e3, "10⁴": 1e4}, [16, 32]
    summaries = {(b, d): summary(0.1 * k) for k, (b, d) in enumerate([(b, d) for b in (1e3, 1e4) for d in dims])}
    crossings = {key: 5.0 * (k + 1) for k, key in enumerate(summaries)}
    fig = decay_slider(summaries, crossings, bases, dims)
    assert len(fig.data) == 4 * 3  # band, mean and dot per combination
    dots = [trace for trace in fig.data if trace.mode == "markers"]
    assert [float(dot.x[0]) for dot in dots] == [5.0, 10.0, 15.0, 20.0] and all(d.y[0] == 0.5 for d in dots)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.range == (-0.5, 1.05)  # the lowest minimum
    assert GRID_META_KEY in fig.layout.meta
    assert [step.label for step in fig.layout.sliders[0].steps] == ["10³", "10⁴"]
    assert [step.label for step in fig.layout.sliders[1].steps] == ["16", "32"]
    with pytest.raises(ValueError, match="no summary"):
        decay_slider(summaries, crossings, bases, [16, 64])
    with pytest.raises(ValueError, match="empty"):
        decay_slider(summaries, crossings, {}, dims)


def test_bound_panels_draws_the_bounds_and_their_octave_steps():
    from posenc.plotting import bound_panels

    offsets = torch.arange(8)
    bounds = {"b1": torch.linspace(1, 0, 8), "b2": torch.linspace(2, 1, 8)}
    octaves = {
        "b1": (torch.tensor([0.9, 0.5, 0.2]), torch.tensor([1.0, 0.7, 0.3])),
        "b2": ([2.0, 1.5, 1.2], [2.0, 1.8, 1.3]),
    }
    fig = bound_panels(offsets, bounds, octaves, level=0.4, shown=5)
    left, right = fig.axes
    curves = [line for line in left.lines if line.get_label() in bounds]
    np.testing.assert_allclose(curves[0].get_ydata(), np.linspace(1, 0, 8)[:5])
    assert [line.get_label() for line in curves] == ["b1", "b2"]
    steps = [line for line in right.lines if line.get_drawstyle() == "steps-post"]
    assert [line.get_label() for line in steps] == ["mean, b1", "max, b1", "mean, b2", "max, b2"]
    np.testing.assert_array_equal(steps[0].get_xdata(), [1, 2, 4])
    np.testing.assert_allclose(steps[3].get_ydata(), [2.0, 1.8, 1.3])
    assert right.get_xscale() == "log" and right.xaxis.get_transform().base == 2
    assert any(list(line.get_ydata()) == [0.4, 0.4] for line in left.lines)  # the reference level
    assert [text.get_text() for text in left.get_legend().get_texts()] == ["b1", "b2"]  # unnamed by default
    named = bound_panels(offsets, bounds, octaves, level=0.4, shown=5, level_label="random phases")
    for ax in named.axes:  # named in both legends, drawn at the level
        (line,) = [line for line in ax.lines if line.get_label() == "random phases"]
        assert list(line.get_ydata()) == [0.4, 0.4] and line.get_linestyle() == "--"
        assert "random phases" in [text.get_text() for text in ax.get_legend().get_texts()]
    with pytest.raises(TypeError, match="level_label"):
        bound_panels(offsets, bounds, octaves, 0.4, level_label=1)
    with pytest.raises(ValueError, match="same labels"):
        bound_panels(offsets, bounds, {"b1": octaves["b1"]}, 0.4)
    with pytest.raises(ValueError, match="2 octave means but 3 maxima"):
        bound_panels(offsets, {"b1": bounds["b1"]}, {"b1": ([1.0, 2.0], [1.0, 2.0, 3.0])}, 0.4)


def test_wavelength_ladders_draws_two_pi_over_theta_and_the_contexts():
    from posenc.plotting import wavelength_ladders

    theta = torch.tensor([1.0, 0.1, 0.01])
    fig = wavelength_ladders({"a": theta, "b": theta / 2}, {"context 2K": 2047.0}, title="t")
    (ax,) = fig.axes
    first, second = ax.lines[:2]
    np.testing.assert_allclose(first.get_ydata(), 2 * np.pi / theta.numpy(), rtol=1e-6)
    np.testing.assert_array_equal(first.get_xdata(), [0, 1, 2])
    assert (first.get_marker(), second.get_marker()) == ("o", "s") and first.get_linestyle() == "None"
    assert ax.get_yscale() == "log" and ax.get_title() == "t"
    assert [text.get_text() for text in ax.texts] == ["context 2K"]
    assert any(list(line.get_ydata()) == [2047.0, 2047.0] for line in ax.lines)
    with pytest.raises(ValueError, match="positive"):
        wavelength_ladders({"a": torch.tensor([1.0, 0.0])}, {})
    with pytest.raises(ValueError, match="at least one"):
        wavelength_ladders({}, {})


def test_precision_panels_draws_angle_and_score_errors_per_format():
    from posenc.plotting import precision_panels

    positions = [1e3, 1e4, 1e5]
    angles = {"float16": [0.1, 1.0, np.nan], "float32": [1e-5, 1e-4, 1e-3]}
    scores = {"float16": [0.2, 2.0, np.nan], "float32": [1e-6, 1e-5, 1e-4]}
    fig = precision_panels(positions, angles, scores, extra_scores={"HF": [0.01, 0.01, 0.01]})
    left, right = fig.axes
    labelled = {line.get_label(): line for line in left.lines}
    np.testing.assert_array_equal(labelled["float32 angles"].get_ydata(), angles["float32"])
    assert labelled["float16 angles"].get_color() == "C3"
    assert any(list(line.get_ydata()) == [np.pi, np.pi] for line in left.lines)  # the π line
    assert any(list(line.get_xdata()) == [65504.0, 65504.0] for line in right.lines)  # float16's limit
    hf = [line for line in right.lines if line.get_label() == "HF"]
    assert hf and hf[0].get_linestyle() == "--" and hf[0].get_color() == "k"
    np.testing.assert_array_equal(right.lines[1].get_ydata(), scores["float32"])
    assert left.get_xscale() == left.get_yscale() == right.get_yscale() == "log"
    with pytest.raises(ValueError, match="same labels"):
        precision_panels(positions, angles, {"float16": scores["float16"]})


def test_precision_panels_draws_the_rounding_yardstick_and_a_full_legend_on_each_panel():
    from posenc.plotting import precision_panels

    positions = [1e3, 1e4, 1e5]
    angles = {"float16": [0.1, 1.0, np.nan], "float32": [1e-5, 1e-4, 1e-3]}
    scores = {"float16": [0.2, 2.0, np.nan], "float32": [1e-6, 1e-5, 1e-4]}
    rounding = {"float16": [5e-4] * 3, "bfloat16": [4e-3] * 3}
    left, right = precision_panels(positions, angles, scores, extra_scores={"HF": [0.01] * 3},
                                   rounding=rounding).axes
    labelled = {line.get_label(): line for line in right.lines}
    for label, values in rounding.items():
        line = labelled[f"q, k rounded to {label}"]
        np.testing.assert_array_equal(line.get_ydata(), values)
        assert line.get_linestyle() == "-."
    assert labelled["q, k rounded to float16"].get_color() != labelled["q, k rounded to bfloat16"].get_color()
    np.testing.assert_array_equal(labelled["float32 angles"].get_ydata(), scores["float32"])
    # each legend names every curve and reference line of its panel
    for ax in (left, right):
        legend = [text.get_text() for text in ax.get_legend().get_texts()]
        drawn = [line.get_label() for line in ax.lines if not line.get_label().startswith("_")]
        assert legend == drawn and len(drawn) == len(ax.lines)
    assert "q, k rounded to bfloat16" in [t.get_text() for t in right.get_legend().get_texts()]
    # without rounding curves the right panel is as before (no grey dash-dotted line)
    plain = precision_panels(positions, angles, scores).axes[1]
    assert not any(line.get_linestyle() == "-." for line in plain.lines)


# --------------------------------------------------------------------------- slow_centre, positional_profiles


def test_slow_centre_draws_the_score_and_its_slow_part():
    offsets, score, slow = torch.arange(50), torch.randn(50), torch.randn(50)
    ax = slow_centre(offsets, score, slow, 256, 2000.0).axes[0]
    assert len(ax.lines) == 2
    np.testing.assert_allclose(ax.lines[0].get_ydata(), score.numpy(), rtol=1e-6)
    np.testing.assert_allclose(ax.lines[1].get_ydata(), slow.numpy(), rtol=1e-6)
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), offsets.numpy())
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "score (all pairs)", "slow pairs only (wavelength > 2000)"]
    assert ax.get_ylim() == (-60, 160) and ax.get_title().startswith("d = 256:")
    with pytest.raises(ValueError, match="one length"):
        slow_centre(offsets, score, slow[:10], 256, 2000.0)


def test_positional_profiles_labels_each_profile_with_its_peak():
    offsets = torch.arange(-5, 6)
    profiles = {-1: -(offsets + 1.0).abs(), 3: -(offsets - 3.0).abs()}
    ax = positional_profiles(offsets, torch.ones(11), profiles, 64).axes[0]
    assert len(ax.lines) == 3
    for line, values in zip(ax.lines[1:], profiles.values(), strict=True):
        np.testing.assert_array_equal(line.get_ydata(), values.numpy())
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[1:] == ["c^T R_(δ-δ*) c with δ* = -1 (peak at -1)", "c^T R_(δ-δ*) c with δ* = 3 (peak at 3)"]
    assert ax.get_title() == "d = 64: the profile is chosen by q and k"
    with pytest.raises(ValueError, match="at least one"):
        positional_profiles(offsets, torch.ones(11), {}, 64)
    with pytest.raises(ValueError, match="values for"):
        positional_profiles(offsets, torch.ones(11), {0: torch.ones(3)}, 64)
