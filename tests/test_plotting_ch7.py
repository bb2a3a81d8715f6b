"""Figure kinds of chapter 7 (posenc.plotting, section "chapter 7"): what they draw, not how it looks.

The Agg backend is selected in ``conftest.py``; every figure is closed after each test.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from posenc import Curve, LinePanel, Reference, WindowSummary, band_traces, line_panels, log_windows


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
