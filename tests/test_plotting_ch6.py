"""Figure kinds of chapter 6 (posenc.plotting, section "chapter 6"): what each one draws.

The Agg backend is selected in ``conftest.py``; every figure is closed after each test.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from posenc import complex_orbits, frequency_bands, offset_curves, rotating_pairs_slider, weight_maps_with_difference

# --------------------------------------------------------------------------- frequency_bands


def test_frequency_bands_draws_one_scatter_per_axis_with_the_pairs_it_owns():
    wavelengths = {"sections": torch.tensor([6.0, 60.0, 600.0, 6000.0]), "mixed": np.array([1.0, 2.0, 3.0, 4.0])}
    owners = {"sections": torch.tensor([0, 0, 1, 2]), "mixed": np.array([0, 1, 2, 0])}
    fig = frequency_bands(wavelengths, owners, ["t", "h", "w"])
    assert [ax.get_title() for ax in fig.axes] == ["sections", "mixed"]
    first, second = fig.axes
    assert first.get_yscale() == "log"
    offsets = [collection.get_offsets() for collection in first.collections]
    np.testing.assert_array_equal(offsets[0], [[0, 6.0], [1, 60.0]])
    np.testing.assert_array_equal(offsets[1], [[2, 600.0]])
    np.testing.assert_array_equal(offsets[2], [[3, 6000.0]])
    assert [text.get_text() for text in first.get_legend().get_texts()] == ["t (2 pairs)", "h (1 pairs)", "w (1 pairs)"]
    np.testing.assert_array_equal(second.collections[0].get_offsets(), [[0, 1.0], [3, 4.0]])
    assert "wavelength" in first.get_ylabel() and "pair" in second.get_xlabel()


def test_frequency_bands_validates_its_arguments():
    good = {"a": torch.ones(3)}
    with pytest.raises(ValueError, match="same panels"):
        frequency_bands(good, {"b": torch.zeros(3)}, ["t"])
    with pytest.raises(ValueError, match="same panels"):
        frequency_bands({}, {}, ["t"])
    with pytest.raises(ValueError, match="3 wavelengths but 2 owners"):
        frequency_bands(good, {"a": torch.zeros(2)}, ["t"])
    with pytest.raises(ValueError, match="index axis_names"):
        frequency_bands(good, {"a": torch.tensor([0, 1, 2])}, ["t", "h"])
    with pytest.raises(TypeError, match="a tensor, an array or a sequence"):
        frequency_bands({"a": "wavelengths"}, {"a": torch.zeros(2)}, ["t"])
    with pytest.raises(ValueError, match="1-D"):
        frequency_bands({"a": torch.ones(2, 2)}, {"a": torch.zeros(2, 2)}, ["t"])


# --------------------------------------------------------------------------- complex_orbits


def test_complex_orbits_draws_each_orbit_on_its_circle_with_labels():
    turns = torch.exp(1j * torch.arange(4) * 0.5)
    orbits = {"fast": turns, "slow": 2 * torch.exp(1j * torch.arange(4) * 0.1)}
    ax = complex_orbits(orbits, labelled={"fast": [0, 3]}, title="orbits")
    fast, slow = ax.lines
    np.testing.assert_allclose(fast.get_xdata(), turns.real.numpy())
    np.testing.assert_allclose(fast.get_ydata(), turns.imag.numpy())
    assert [patch.get_radius() for patch in ax.patches] == pytest.approx([1.0, 2.0])
    assert sorted(text.get_text() for text in ax.texts) == ["m=0", "m=3"]
    assert ax.get_title() == "orbits" and ax.get_xlabel() == "real part"
    assert [text.get_text() for text in ax.get_legend().get_texts()] == ["fast", "slow"]
    assert ax.get_xlim() == pytest.approx((-2.5, 2.5))


def test_complex_orbits_rejects_real_tensors():
    with pytest.raises(ValueError, match="complex"):
        complex_orbits({"real": torch.ones(3)})
    with pytest.raises(TypeError, match="complex torch.Tensor"):
        complex_orbits({"list": [1j, 2j]})


# --------------------------------------------------------------------------- offset_curves


def test_offset_curves_draws_curves_styles_and_points():
    offsets = torch.arange(-2, 3)
    curves = {"a": offsets.float() ** 2, "b": torch.zeros(5)}
    ax = offset_curves(
        offsets,
        curves,
        styles={"b": {"color": "black", "lw": 2}},
        points={"dots": (torch.tensor([0, 2]), torch.tensor([0.0, 4.0]))},
        title="t",
    )
    a, b, dots = ax.lines
    np.testing.assert_array_equal(a.get_xdata(), offsets.numpy())
    np.testing.assert_array_equal(a.get_ydata(), curves["a"].numpy())
    assert b.get_color() == "black" and b.get_linewidth() == 2
    np.testing.assert_array_equal(dots.get_ydata(), [0.0, 4.0])
    assert dots.get_marker() == "o" and dots.get_linestyle() == "None"
    assert [text.get_text() for text in ax.get_legend().get_texts()] == ["a", "b", "dots"]
    assert ax.get_xlabel() == "offset $j - i$" and ax.get_title() == "t"


def test_offset_curves_checks_lengths():
    with pytest.raises(ValueError, match="3 values for 2 offsets"):
        offset_curves(torch.arange(2), {"a": torch.zeros(3)})
    with pytest.raises(ValueError, match="1 x values but 2 y values"):
        offset_curves(torch.arange(2), {}, points={"p": (torch.zeros(1), torch.zeros(2))})


# --------------------------------------------------------------------------- weight_maps_with_difference


def test_weight_maps_with_difference_draws_maps_and_their_difference():
    first, second = torch.eye(3), torch.full((3, 3), 1 / 3)
    fig = weight_maps_with_difference([first, second], ["a", "b"], "b minus a")
    images = [ax.images[0] for ax in fig.axes if ax.images]
    assert [ax.get_title() for ax in fig.axes if ax.images] == ["a", "b", "b minus a"]
    np.testing.assert_allclose(np.asarray(images[2].get_array()), (second - first).numpy())
    assert images[0].get_clim() == (0.0, 1.0)
    assert images[2].get_clim() == pytest.approx((-2 / 3, 2 / 3))  # symmetric around zero
    assert images[2].get_cmap().name == "coolwarm"


def test_weight_maps_with_difference_validates():
    with pytest.raises(ValueError, match="at least two"):
        weight_maps_with_difference([torch.eye(2)], ["a"], "d")
    with pytest.raises(ValueError, match="one title per map"):
        weight_maps_with_difference([torch.eye(2), torch.eye(2)], ["a"], "d")


# --------------------------------------------------------------------------- rotating_pairs_slider


def test_rotating_pairs_slider_shows_the_pairs_of_each_step():
    pytest.importorskip("plotly")
    angles = torch.tensor([[0.0, 0.5], [1.0, 0.6]])  # (steps, pairs)
    query = torch.polar(torch.ones(2, 2), angles)
    key = torch.polar(torch.full((2, 2), 2.0), angles + 0.3)
    figure = rotating_pairs_slider(query, key, [0, 1], [3, 4], title="score")
    assert len(figure.layout.sliders[0].steps) == 2
    assert [step.label for step in figure.layout.sliders[0].steps] == ["0", "1"]
    assert len(figure.data) == 2 * 2 * 2 * 2  # steps x pairs x (query, key) x (arrow, point)
    visible = [trace for trace in figure.data if trace.visible]
    assert len(visible) == 8
    query_point = next(t for t in visible if t.name == "query pair 1")
    assert query_point.x[0] == pytest.approx(float(query[0, 1].real))
    assert "at position 0" in query_point.hovertemplate
    key_point = next(t for t in figure.data if t.name == "key pair 0" and not t.visible)
    assert key_point.y[0] == pytest.approx(float(key[1, 0].imag)) and "at position 4" in key_point.hovertemplate
    term = float((query[0, 0].conj() * key[0, 0]).real)
    assert figure.layout.annotations[0].text == f"ℓ = 0: term {term:+.3f}"
    assert figure.layout.title.text == "score"
    assert len(figure.layout.shapes) == 4  # a circle for the query and the key of each pair


def test_rotating_pairs_slider_validates():
    pytest.importorskip("plotly")
    pairs = torch.ones(2, 3, dtype=torch.complex64)
    with pytest.raises(ValueError, match="one shape"):
        rotating_pairs_slider(pairs, pairs[:, :2], [0, 1], [0, 1])
    with pytest.raises(ValueError, match="one entry per step"):
        rotating_pairs_slider(pairs, pairs, [0], [0, 1])
    with pytest.raises(ValueError, match="2-D complex"):
        rotating_pairs_slider(torch.ones(2, 3), pairs, [0, 1], [0, 1])
