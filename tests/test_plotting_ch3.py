"""Chapter 3's figure kinds in ``posenc.plotting``: each test checks what is drawn (data, labels).

The Agg backend is selected in ``conftest.py``; every figure is closed after each test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from posenc import (
    bits_as_sine_signs,
    curve_slider,
    encoding_columns,
    encoding_heatmap,
    extrapolation_panels,
    gram_by_offset,
    pair_on_circle,
    sinusoidal_encoding,
    wavelength_progression,
    xy_curves,
)


def test_curves_draws_each_curve_with_its_label_levels_and_marks():
    x = torch.arange(5)
    ax = xy_curves(
        x,
        {"square": x**2, "line": [1.0, 2.0, 3.0, 4.0, 5.0]},
        xlabel="i",
        ylabel="value",
        title="two",
        styles=["o", "--"],
        logy=True,
        levels={"ten": 10.0},
        vlines=[2.5],
    )
    data = [line for line in ax.get_lines() if line.get_label() in ("square", "line")]
    np.testing.assert_array_equal(data[0].get_xdata(), np.arange(5))
    np.testing.assert_array_equal(data[0].get_ydata(), np.arange(5) ** 2)
    np.testing.assert_array_equal(data[1].get_ydata(), [1, 2, 3, 4, 5])
    assert data[0].get_marker() == "o" and data[1].get_linestyle() == "--"
    assert ax.get_yscale() == "log"
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("i", "value", "two")
    assert [text.get_text() for text in ax.texts] == ["ten"]
    flat = [line for line in ax.get_lines() if line not in data]
    assert {tuple(line.get_ydata()) for line in flat if len(set(line.get_ydata())) == 1} == {(10.0, 10.0)}
    assert {tuple(line.get_xdata()) for line in flat if len(set(line.get_xdata())) == 1} == {(2.5, 2.5)}
    assert [text.get_text() for text in ax.get_legend().get_texts()] == ["square", "line"]


def test_curves_takes_one_x_per_curve_and_validates():
    ax = xy_curves({"a": [0, 1], "b": [0, 1, 2]}, {"a": [5, 6], "b": [1, 2, 3]}, xlabel="x", ylabel="y", legend=None)
    assert [len(line.get_xdata()) for line in ax.get_lines()] == [2, 3]
    assert ax.get_legend() is None
    ax = xy_curves([0, 1], {"a": [1, 2]}, xlabel="x", ylabel="y", legend="outside")
    assert ax.get_legend().get_bbox_to_anchor().x0 > ax.get_window_extent().x1 - 1
    with pytest.raises(ValueError, match="at least one curve"):
        xy_curves([0], {}, xlabel="x", ylabel="y")
    with pytest.raises(ValueError, match="3 values for 2 abscissae"):
        xy_curves([0, 1], {"a": [1, 2, 3]}, xlabel="x", ylabel="y")
    with pytest.raises(ValueError, match="no abscissae"):
        xy_curves({"a": [0]}, {"b": [1]}, xlabel="x", ylabel="y")
    with pytest.raises(ValueError, match="one format per curve"):
        xy_curves([0], {"a": [1]}, xlabel="x", ylabel="y", styles=["o", "s"])
    with pytest.raises(TypeError, match="ys\\['a'\\] must be"):
        xy_curves([0], {"a": "1"}, xlabel="x", ylabel="y")
    with pytest.raises(ValueError, match="1-D"):
        xy_curves([0], {"a": torch.ones(1, 1)}, xlabel="x", ylabel="y")


def test_gram_by_offset_puts_every_entry_at_its_offset():
    table = sinusoidal_encoding(6, 4, dtype=torch.float64)
    gram = table @ table.T
    offsets = torch.arange(-5, 6)
    profile = torch.randn(11)
    fig = gram_by_offset(gram, offsets, profile, profile_label="formula")
    ax_gram, ax_curve = fig.axes[:2]
    np.testing.assert_allclose(np.asarray(ax_gram.images[0].get_array()), gram.numpy())
    line, dots = ax_curve.get_lines()[:2]
    np.testing.assert_array_equal(line.get_xdata(), offsets.numpy())
    np.testing.assert_allclose(line.get_ydata(), profile.numpy())
    rows, columns = np.indices((6, 6))
    np.testing.assert_array_equal(dots.get_xdata(), (columns - rows).ravel())
    np.testing.assert_allclose(dots.get_ydata(), gram.numpy().ravel())
    assert ax_curve.get_xlabel() == "offset j - i"
    assert [text.get_text() for text in ax_curve.get_legend().get_texts()][0] == "formula"
    with pytest.raises(ValueError, match="square"):
        gram_by_offset(torch.zeros(2, 3), offsets, profile, profile_label="x")


def test_pair_on_circle_splits_seen_and_unseen_positions():
    angles = torch.arange(10.0)
    ax = pair_on_circle(angles.sin(), angles.cos(), 4, pair=3)
    unseen, seen = ax.get_lines()
    np.testing.assert_allclose(seen.get_xdata(), angles[:4].sin().numpy())
    np.testing.assert_allclose(unseen.get_ydata(), angles[4:].cos().numpy())
    assert (seen.get_label(), unseen.get_label()) == ("training", "test only")
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("column 6 (sin)", "column 7 (cos)")
    assert ax.get_aspect() == 1.0
    with pytest.raises(ValueError, match="at most the number of positions"):
        pair_on_circle(angles, angles, 11, pair=0)
    with pytest.raises(ValueError, match="differ in length"):
        pair_on_circle(angles, angles[:3], 1, pair=0)


def test_extrapolation_panels_draw_coverage_circle_and_distance():
    coverage = {"test": torch.tensor([1.0, 0.5]), "training": torch.tensor([1.0, 0.25])}
    angles = torch.arange(8.0) / 3
    distance = torch.linspace(0, 1, 8)
    fig = extrapolation_panels(coverage, angles.sin(), angles.cos(), distance, train_len=5, pair=1, level=math.sqrt(2))
    left, middle, right = fig.axes
    assert [tuple(line.get_ydata()) for line in left.get_lines()] == [(1.0, 0.5), (1.0, 0.25)]
    assert middle.get_title() == "Pair 1 on its circle"
    assert len(middle.get_lines()[1].get_xdata()) == 5
    curve = right.get_lines()[0]
    np.testing.assert_allclose(curve.get_ydata(), distance.numpy())
    assert [text.get_text() for text in right.texts] == ["orthogonal"]
    assert right.get_title() == "Distance to the nearest training row"


def test_extrapolation_panels_draw_several_named_distances_with_a_legend():
    angles = torch.arange(8.0) / 3
    distances = {"all pairs": torch.linspace(0, 1, 8), "slow pairs": torch.linspace(0, 0.5, 8)}
    fig = extrapolation_panels({"test": [1.0]}, angles.sin(), angles.cos(), distances, train_len=5, pair=0, level=1.0)
    right = fig.axes[2]
    for line, curve in zip(right.get_lines()[:2], distances.values(), strict=True):
        np.testing.assert_allclose(line.get_ydata(), curve.numpy())
    assert [text.get_text() for text in right.get_legend().get_texts()] == ["all pairs", "slow pairs"]
    dashed = [line for line in right.get_lines()[2:] if line.get_linestyle() == "--"]
    assert len(dashed) == 2  # the orthogonal level and the training length are both dashed


def test_bits_as_sine_signs_draws_each_bit_as_the_sign_of_its_sine():
    ladders = {"bits": 2.0 ** torch.arange(1, 6), "pairs": [6.3, 11.2, 20.0]}
    fig = bits_as_sine_signs(32, 4, ladders)
    *wave_axes, ladder_ax = fig.axes
    assert len(wave_axes) == 4
    positions = np.arange(32)
    for bit, ax in enumerate(wave_axes):
        step, sine = ax.get_lines()[:2]
        square = step.get_ydata()[:-1]
        np.testing.assert_array_equal(square, (-1.0) ** ((positions >> bit) & 1))
        # the square wave is the sign of the sine of period 2^(bit + 1), at the middle of each step
        middle = positions + 0.5
        np.testing.assert_array_equal(square, np.sign(np.sin(np.pi * middle / 2**bit)))
        x, y = sine.get_xdata(), sine.get_ydata()
        np.testing.assert_allclose(y, np.sin(np.pi * x / 2**bit))
        assert ax.get_ylabel() == f"bit {bit}"
    assert wave_axes[-1].get_xlabel() == "position i"
    assert ladder_ax.get_yscale() == "log"
    ticks = ladder_ax.get_xticks()  # the index axis: whole numbers only
    np.testing.assert_array_equal(ticks, np.round(ticks))
    bits_line, pairs_line = ladder_ax.get_lines()[:2]
    np.testing.assert_allclose(bits_line.get_ydata(), ladders["bits"].numpy())
    np.testing.assert_allclose(pairs_line.get_ydata(), ladders["pairs"])
    with pytest.raises(ValueError, match="at least one ladder"):
        bits_as_sine_signs(32, 4, {})
    with pytest.raises(ValueError, match="positive"):
        bits_as_sine_signs(32, 4, {"bad": [1.0, 0.0]})
    with pytest.raises(ValueError):
        bits_as_sine_signs(1, 4, ladders)
    with pytest.raises(TypeError):
        bits_as_sine_signs(32, 2.0, ladders)


def test_curve_slider_draws_curves_and_marks_on_fixed_axes():
    pytest.importorskip("plotly")
    x = torch.arange(-3, 4)
    ys = {"a": x.double() ** 2, "b": -x.double()}
    figure = curve_slider(
        x,
        ys,
        {"a": [1, -1], "b": [2]},
        mark_label="first",
        slider_label="s = ",
        active="a",
        xlabel="offset",
        ylabel="y",
    )
    line_a, dots_a, line_b, dots_b = figure.data
    np.testing.assert_allclose(line_b.y, ys["b"].numpy())
    assert list(dots_a.x) == [1, -1] and list(dots_a.y) == [0.0, 0.0] and list(dots_b.x) == [2]
    assert [trace.visible for trace in figure.data] == [True, True, False, False]
    assert list(figure.layout.xaxis.range) == [-3.0, 3.0]
    assert list(figure.layout.yaxis.range) == [-4.0, 10.0]
    assert figure.layout.xaxis.title.text == "offset"
    with pytest.raises(ValueError, match="marks has no entry"):
        curve_slider(x, ys, {"a": []}, mark_label="m", slider_label="s", active="a", xlabel="x", ylabel="y")


def test_wavelength_progression_draws_each_width_on_its_own_grid_with_both_levels():
    base = 10000.0
    wavelengths = {
        f"d = {d}": 2 * math.pi * base ** (torch.arange(0, d, 2, dtype=torch.float64) / d) for d in (8, 32)
    }
    ax = wavelength_progression(wavelengths, base)
    curves = [line for line in ax.get_lines() if line.get_label() in wavelengths]
    assert [line.get_label() for line in curves] == ["d = 8", "d = 32"]
    for line, values in zip(curves, wavelengths.values(), strict=True):
        d = 2 * len(values)
        np.testing.assert_allclose(line.get_xdata(), np.arange(0, d, 2) / d, rtol=1e-6)
        np.testing.assert_allclose(line.get_ydata(), values.numpy())
    assert [line.get_marker() for line in curves] == ["o", "s"]
    assert ax.get_yscale() == "log"
    heights = sorted(float(line.get_ydata()[0]) for line in ax.get_lines() if line not in curves)
    np.testing.assert_allclose(heights, [2 * math.pi, 2 * math.pi * base])
    assert ax.get_title() == "Wavelengths form a geometric progression"


def test_wavelength_progression_validates_its_arguments():
    with pytest.raises(ValueError, match="at least one"):
        wavelength_progression({}, 10000.0)
    with pytest.raises(ValueError, match="greater than 1"):
        wavelength_progression({"d = 4": [1.0, 2.0]}, 1.0)
    with pytest.raises(TypeError):
        wavelength_progression({"d = 4": "not numbers"}, 10.0)


def test_encoding_heatmap_shows_the_table_on_the_fixed_scale_with_its_size():
    table = sinusoidal_encoding(20, 8)
    ax = encoding_heatmap(table)
    image = ax.get_images()[0]
    np.testing.assert_array_equal(image.get_array(), table.numpy())
    assert image.get_clim() == (-1.0, 1.0)
    assert image.get_cmap().name == "RdBu_r"
    assert ax.get_title() == "Sinusoidal encoding, 20 positions, d = 8"
    assert ax.get_ylabel() == "position i"
    with pytest.raises(ValueError):
        encoding_heatmap(torch.zeros(3))


def test_encoding_columns_draw_sines_solid_and_cosines_dashed_with_their_pairs():
    table = sinusoidal_encoding(30, 16)
    ax = encoding_columns(table, range(5, 8))
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == [
        "column 5: cos, pair 2",
        "column 6: sin, pair 3",
        "column 7: cos, pair 3",
    ]
    for line, column in zip(lines, range(5, 8), strict=True):
        np.testing.assert_array_equal(line.get_xdata(), np.arange(30))
        np.testing.assert_allclose(line.get_ydata(), table[:, column].numpy())
    assert [line.get_linestyle() for line in lines] == ["--", "-", "--"]
    assert ax.get_title() == "Columns 5 to 7 of the encoding (d = 16)"


def test_encoding_columns_validate_the_columns():
    table = sinusoidal_encoding(10, 8)
    with pytest.raises(ValueError, match="at least one"):
        encoding_columns(table, [])
    with pytest.raises(ValueError, match="width 8"):
        encoding_columns(table, [7, 8])
    with pytest.raises(TypeError):
        encoding_columns(table, [1.5])
