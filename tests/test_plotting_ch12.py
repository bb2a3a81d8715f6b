"""The figure kinds of chapters 1–2 in ``posenc.plotting``: what each one draws.

The Agg backend is selected in ``conftest.py``; every figure is closed after each test.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from matplotlib.colors import to_rgba

from posenc import curves, histograms, pair_walk, similarity_heatmaps, table_profile

# --------------------------------------------------------------------------- curves


def test_curves_draw_each_series_at_its_x_with_its_label():
    y = torch.tensor([1.0, 0.5, 0.25])
    ax = curves({"halves": y, "pairs": ([0, 2], [3.0, 4.0])}, xlabel="distance", ylabel="cosine", title="t")
    halves, pairs = ax.get_lines()
    np.testing.assert_array_equal(halves.get_xdata(), [0, 1, 2])
    np.testing.assert_array_equal(halves.get_ydata(), y.numpy())
    np.testing.assert_array_equal(pairs.get_xdata(), [0, 2])
    np.testing.assert_array_equal(pairs.get_ydata(), [3.0, 4.0])
    assert [line.get_label() for line in (halves, pairs)] == ["halves", "pairs"]
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("distance", "cosine", "t")
    assert [text.get_text() for text in ax.get_legend().get_texts()] == ["halves", "pairs"]


def test_curves_marks_lines_and_baselines():
    fig, ax = plt.subplots()
    out = curves(
        {"r = 3": [1.0, 0.2, -0.1], "r = 6": [1.0, 0.6, 0.1]},
        ax,
        xlabel="x",
        ylabel="y",
        vlines={"r = 6": 2.0},
        hlines=[0.0],
        baselines={"chance": 0.3},
        styles={"r = 3": {"color": "0.6", "marker": ""}},
    )
    assert out is ax
    r3, r6, zero, chance, mark = ax.get_lines()
    assert to_rgba(r3.get_color()) == to_rgba("0.6") and r3.get_marker() in ("", "None")
    assert r6.get_marker() == "."
    assert list(zero.get_ydata()) == [0.0, 0.0] and zero.get_linestyle() == "-"
    assert list(chance.get_ydata()) == [0.3, 0.3] and chance.get_linestyle() == ":"
    assert chance.get_label() == "chance"
    # the mark of "r = 6" is drawn at x = 2 in that curve's colour
    assert list(mark.get_xdata()) == [2.0, 2.0] and mark.get_color() == r6.get_color()
    assert "chance" in [text.get_text() for text in ax.get_legend().get_texts()]


def test_curves_single_series_black_marks_log_axis_and_no_legend():
    ax = curves({"norms": [1.0, 10.0, 100.0]}, xlabel="row", ylabel="norm", vlines=[1.5], logy=True)
    assert ax.get_yscale() == "log"
    assert ax.get_legend() is None
    mark = ax.get_lines()[-1]
    assert list(mark.get_xdata()) == [1.5, 1.5] and to_rgba(mark.get_color()) == to_rgba("black")


def test_curves_validate_their_arguments():
    with pytest.raises(ValueError, match="at least one curve"):
        curves({}, xlabel="x", ylabel="y")
    with pytest.raises(ValueError, match="x has 2 values and y has 3"):
        curves({"a": ([0, 1], [1, 2, 3])}, xlabel="x", ylabel="y")
    with pytest.raises(ValueError, match="unknown labels"):
        curves({"a": [1.0]}, xlabel="x", ylabel="y", vlines={"b": 1.0})
    with pytest.raises(ValueError, match="1-D"):
        curves({"a": [[1.0, 2.0]]}, xlabel="x", ylabel="y")
    with pytest.raises(TypeError, match="sequence of numbers"):
        curves({"a": ["one", "two"]}, xlabel="x", ylabel="y")


# --------------------------------------------------------------------------- histograms


def test_histograms_draw_a_density_per_sample_on_shared_bins():
    samples = {"narrow": torch.zeros(100), "wide": torch.linspace(-1, 1, 100)}
    ax = histograms(samples, bins=torch.linspace(-1, 1, 5), xlabel="cosine")
    narrow, wide = ax.patches
    assert [text.get_text() for text in ax.get_legend().get_texts()] == ["narrow", "wide"]
    assert ax.get_xlabel() == "cosine" and ax.get_ylabel() == "density"
    # a density integrates to one: all of "narrow" lies in the bin [0, 0.5) of width 0.5
    assert narrow.get_path().vertices[:, 1].max() == pytest.approx(2.0)
    assert wide.get_path().vertices[:, 1].max() == pytest.approx(0.5, abs=0.05)
    with pytest.raises(ValueError, match="at least one"):
        histograms({}, xlabel="x")


# --------------------------------------------------------------------------- similarity heatmaps


def test_similarity_heatmaps_show_the_cosines_of_rows_on_a_fixed_scale():
    table = torch.tensor([[1.0, 0.0], [3.0, 0.0], [0.0, 2.0], [-1.0, -1.0]])
    fig = similarity_heatmaps([torch.eye(3), table], ["one-hot", "table"], boundary=3)
    one_hot_ax, table_ax = fig.axes[:2]
    np.testing.assert_allclose(one_hot_ax.images[0].get_array(), np.eye(3))
    expected = np.array(
        [[1, 1, 0, -(0.5**0.5)], [1, 1, 0, -(0.5**0.5)], [0, 0, 1, -(0.5**0.5)], [-(0.5**0.5)] * 3 + [1]]
    )
    np.testing.assert_allclose(table_ax.images[0].get_array(), expected, atol=1e-12)
    assert table_ax.images[0].get_clim() == (-1.0, 1.0)
    assert (one_hot_ax.get_title(), table_ax.get_title()) == ("one-hot", "table")
    # the boundary is drawn only where the table is longer than it
    assert one_hot_ax.get_lines() == []
    horizontal, vertical = table_ax.get_lines()
    assert list(horizontal.get_ydata()) == [2.5, 2.5] and list(vertical.get_xdata()) == [2.5, 2.5]


def test_similarity_heatmaps_validate_their_arguments():
    with pytest.raises(ValueError, match="at least one table"):
        similarity_heatmaps([])
    with pytest.raises(ValueError, match="2-D"):
        similarity_heatmaps([torch.ones(3)])
    with pytest.raises(ValueError, match="boundary"):
        similarity_heatmaps([torch.eye(2)], boundary=0)


# --------------------------------------------------------------------------- pair walk


def test_pair_walk_draws_windows_of_rows_with_their_turning_angles():
    angles = torch.arange(10) * 1.0
    points = torch.stack([torch.cos(angles), torch.sin(angles)], dim=1)
    figure = pair_walk(points, window=4)
    # three slider steps (rows 0-3, 4-7, 8-9), each a grey ring of all rows and a walk
    steps = figure.layout.sliders[0].steps
    assert [step.label for step in steps] == ["0-3", "4-7", "8-9"]
    assert len(figure.data) == 6
    ring, walk = figure.data[2], figure.data[3]
    np.testing.assert_allclose(ring.x, points[:, 0].numpy(), atol=1e-7)
    np.testing.assert_allclose(walk.y, points[4:8, 1].numpy(), atol=1e-7)
    assert walk.text[0] == "row 4: turned 1.00 rad since row 3"
    assert figure.data[1].text[0] == "row 0"
    assert walk.visible is False and figure.data[1].visible is True
    with pytest.raises(ValueError, match=r"\(N, 2\)"):
        pair_walk(torch.ones(5, 3))
    with pytest.raises(ValueError, match="at most the number of rows"):
        pair_walk(points, window=11)


# --------------------------------------------------------------------------- table profile


def test_table_profile_draws_cosines_curves_and_norms_of_the_rows():
    table = torch.tensor([[1.0, 0.0], [3.0, 0.0], [0.0, 2.0], [-1.0, -1.0]])
    curve = torch.tensor([1.0, 0.5, -0.25])
    fig = table_profile(table, {"part": curve, "other": [1.0, 0.0]}, title="tiny", boundary=2)
    gram_ax, curve_ax, norm_ax = fig.axes[:3]
    expected = np.array(
        [[1, 1, 0, -(0.5**0.5)], [1, 1, 0, -(0.5**0.5)], [0, 0, 1, -(0.5**0.5)], [-(0.5**0.5)] * 3 + [1]]
    )
    np.testing.assert_allclose(gram_ax.images[0].get_array(), expected, atol=1e-12)
    assert gram_ax.images[0].get_clim() == (-1.0, 1.0) and gram_ax.get_title() == "tiny"
    horizontal, vertical = gram_ax.get_lines()
    assert list(horizontal.get_ydata()) == [1.5, 1.5] and list(vertical.get_xdata()) == [1.5, 1.5]
    part, other, zero = curve_ax.get_lines()
    np.testing.assert_array_equal(part.get_ydata(), curve.numpy())
    assert (part.get_label(), other.get_label(), list(zero.get_ydata())) == ("part", "other", [0.0, 0.0])
    assert (curve_ax.get_xlabel(), curve_ax.get_ylabel()) == ("distance |i - j|", "mean cosine similarity")
    norms, mark = norm_ax.get_lines()
    np.testing.assert_allclose(norms.get_ydata(), [1.0, 3.0, 2.0, 2**0.5])
    assert list(mark.get_xdata()) == [1.5, 1.5] and norm_ax.get_yscale() == "log"
    labels = (norm_ax.get_xlabel(), norm_ax.get_ylabel(), norm_ax.get_title())
    assert labels == ("position i", "norm of p_i", "row norms")


def test_table_profile_without_boundary_draws_no_marks_and_validates():
    gram_ax, _, norm_ax = table_profile(torch.eye(3), {"c": [1.0]}, title="t").axes[:3]
    assert gram_ax.get_lines() == [] and len(norm_ax.get_lines()) == 1
    with pytest.raises(ValueError, match="2-D"):
        table_profile(torch.ones(3), {"c": [1.0]}, title="t")
    with pytest.raises(ValueError, match="boundary"):
        table_profile(torch.eye(3), {"c": [1.0]}, title="t", boundary=3)
    with pytest.raises(ValueError, match="at least one curve"):
        table_profile(torch.eye(3), {}, title="t")
