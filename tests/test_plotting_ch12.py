"""The figure kinds of chapters 1–2 in ``posenc.plotting``: what each one draws.

The Agg backend is selected in ``conftest.py``; every figure is closed after each test.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from matplotlib.colors import to_rgba

from posenc import (
    counting_panels,
    curves,
    histograms,
    moved_rows_and_accuracy,
    pair_walk,
    permuted_maps,
    similarity_heatmaps,
    table_profile,
)

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


# --------------------------------------------------------------------------- chapter 1 and the window counter


def test_permuted_maps_draw_the_three_maps_with_token_names_in_each_order():
    weights = torch.softmax(torch.randn(4, 4), dim=-1)
    perm = torch.tensor([2, 0, 3, 1])
    permuted = weights[perm][:, perm]
    fig = permuted_maps(weights, permuted, permuted + 0.01, perm)
    panels = [ax for ax in fig.axes if ax.get_images()]
    assert [ax.get_title() for ax in panels] == [r"$A(X)$", r"$\Pi A(X) \Pi^\top$", r"$A(\Pi X)$"]
    for ax, matrix in zip(panels, [weights, permuted, permuted + 0.01], strict=True):
        np.testing.assert_allclose(ax.get_images()[0].get_array(), matrix.numpy())
        assert (ax.get_xlabel(), ax.get_ylabel()) == ("key", "query")
    names = [[text.get_text() for text in ax.get_xticklabels()] for ax in panels]
    assert names == [["x0", "x1", "x2", "x3"], ["x2", "x0", "x3", "x1"], ["x2", "x0", "x3", "x1"]]
    assert [text.get_text() for text in panels[1].get_yticklabels()] == names[1]
    assert {ax.get_images()[0].get_clim()[0] for ax in panels} == {0.0}


def test_permuted_maps_validate_shapes_and_the_permutation():
    square = torch.rand(3, 3)
    with pytest.raises(ValueError, match="permutation"):
        permuted_maps(square, square, square, [0, 0, 1])
    with pytest.raises(ValueError, match=r"\(3, 3\)"):
        permuted_maps(square, torch.rand(3, 4), square, [0, 1, 2])
    with pytest.raises(TypeError):
        permuted_maps(square, square, "not a matrix", [0, 1, 2])


def test_counting_panels_draw_the_outputs_and_the_recovered_positions():
    positions = torch.arange(6)
    causal = 1.0 / (positions + 1.0)
    unmasked = torch.full((6,), 1 / 6)
    recovered = 1.0 / causal - 1.0
    fig = counting_panels(positions, causal, unmasked, recovered)
    left, right = fig.axes
    reference, causal_line, unmasked_line = left.get_lines()
    assert [line.get_label() for line in left.get_lines()] == ["$1/(i+1)$", "causal mask", "no mask"]
    np.testing.assert_allclose(reference.get_ydata(), 1.0 / (np.arange(6) + 1.0), rtol=1e-6)
    np.testing.assert_allclose(causal_line.get_ydata(), causal.numpy(), rtol=1e-6)
    np.testing.assert_allclose(unmasked_line.get_ydata(), unmasked.numpy(), rtol=1e-6)
    assert to_rgba(reference.get_color()) == to_rgba("0.6")
    ideal, recovered_line = right.get_lines()
    np.testing.assert_array_equal(ideal.get_ydata(), np.arange(6))
    np.testing.assert_allclose(recovered_line.get_ydata(), recovered.numpy(), rtol=1e-6)
    assert (left.get_title(), right.get_title()) == ("Output of the marker channel", "Position read off the output")
    assert right.get_ylabel() == "recovered position"


def test_counting_panels_need_one_value_per_position():
    with pytest.raises(ValueError, match="one value per position"):
        counting_panels(torch.arange(5), torch.rand(5), torch.rand(4), torch.rand(5))


def test_moved_rows_and_accuracy_draws_both_panels_with_marks_and_baseline():
    change = torch.cat([torch.rand(8) + 0.5, torch.zeros(4)])
    accuracy = torch.linspace(1.0, 0.3, 12 - 2 * 2)
    fig = moved_rows_and_accuracy(change, accuracy, radius=2, train_len=8, baseline=0.375)
    left, right = fig.axes
    np.testing.assert_allclose(left.get_lines()[0].get_ydata(), change.numpy(), rtol=1e-6)
    curve = right.get_lines()[0]
    np.testing.assert_array_equal(curve.get_xdata(), np.arange(2, 10))
    np.testing.assert_allclose(curve.get_ydata(), accuracy.numpy(), rtol=1e-6)
    for ax in (left, right):
        assert any(np.allclose(line.get_xdata(), 7.5) for line in ax.get_lines()[1:])
    assert any(np.allclose(line.get_ydata(), 0.375) for line in right.get_lines()[1:])
    assert right.get_title() == "Accuracy on sequences of length 12"
    assert [text.get_text() for text in right.get_legend().get_texts()] == ["accuracy", "most frequent count"]


def test_moved_rows_and_accuracy_validates_its_arguments():
    with pytest.raises(ValueError, match="one per window centre"):
        moved_rows_and_accuracy(torch.rand(12), torch.rand(9), radius=2, train_len=8, baseline=0.4)
    with pytest.raises(TypeError):
        moved_rows_and_accuracy(torch.rand(12), torch.rand(8), radius=2.0, train_len=8, baseline=0.4)
