"""Figure kinds of chapter 6 (posenc.plotting, section "chapter 6"): what each one draws.

The Agg backend is selected in ``conftest.py``; every figure is closed after each test.
"""

from __future__ import annotations

import matplotlib.colors
import numpy as np
import pytest
import torch

from posenc import frequency_bands, weight_maps_with_difference
from posenc.plotting import layout_permutation, offset_score_maps, partial_rotary_parts

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


# --------------------------------------------------------------------------- orbit_and_terms


def test_orbit_and_terms_draws_the_pairs_the_terms_and_both_scores():
    from posenc.plotting import orbit_and_terms

    orbit = torch.polar(torch.tensor([[1.0, 1.5]]).expand(4, 2), torch.arange(4.0)[:, None] * torch.tensor([1.0, 0.1]))
    offsets = torch.arange(-2, 3)
    terms = torch.stack([offsets.double().cos(), 2 * (0.1 * offsets.double()).cos()], -1)
    fig = orbit_and_terms(orbit, offsets, terms, (offsets[::2], terms.sum(-1)[::2]), title="pairs")
    plane, score = fig.axes[0], fig.axes[1]
    assert plane.get_title() == "pairs" and len(plane.collections) >= 8  # one arrow per position and pair
    assert [t.get_text() for t in plane.texts] == ["0", "1", "2", "3", "0", "", "", "3"]
    lines = {line.get_label(): line for line in score.lines}
    np.testing.assert_allclose(lines[r"term $\ell=1$"].get_ydata(), terms[:, 1].numpy())
    np.testing.assert_allclose(lines["score (complex formula)"].get_ydata(), terms.sum(-1).numpy())
    dots = lines["score (real arithmetic)"]
    np.testing.assert_array_equal(dots.get_xdata(), [-2, 0, 2])
    assert dots.get_marker() == "o" and "offset" in score.get_xlabel()
    with pytest.raises(TypeError, match="complex"):
        orbit_and_terms(orbit.real, offsets, terms, (offsets, terms.sum(-1)))
    with pytest.raises(ValueError, match="one row per offset"):
        orbit_and_terms(orbit, offsets[:3], terms, (offsets, terms.sum(-1)))


# --------------------------------------------------------------------------- layout_permutation


def test_layout_permutation_draws_the_three_matrices_on_one_scale():
    rotation, permutation = torch.randn(4, 4), torch.eye(4)[[0, 2, 1, 3]]
    half = permutation @ rotation @ permutation.T
    fig = layout_permutation(rotation, permutation, half, 10)
    panels = [ax for ax in fig.axes if ax.images]
    assert len(panels) == 3
    for ax, matrix in zip(panels, [rotation, permutation, half], strict=True):
        np.testing.assert_allclose(ax.images[0].get_array(), matrix.numpy())
        assert ax.images[0].get_clim() == (-1, 1)
        assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1", "2", "3"]
    assert panels[0].get_title() == "$R_{10}$ (interleaved)"
    assert panels[2].get_title().endswith("R^{\\mathrm{half}}_{10}$")


def test_layout_permutation_validates():
    with pytest.raises(ValueError, match="square"):
        layout_permutation(torch.eye(3), torch.eye(4), torch.eye(4), 1)


# --------------------------------------------------------------------------- partial_rotary_parts


def test_partial_rotary_parts_draws_each_part_with_its_style():
    offsets = torch.arange(-3, 4)
    parts = {f"{kind}, i = {i}": torch.randn(7) for i in (1, 2, 3) for kind in ("rotated", "pass")}
    ax = partial_rotary_parts(offsets, parts, 8, 32)
    assert len(ax.lines) == 6
    for line, values in zip(ax.lines, parts.values(), strict=True):
        np.testing.assert_allclose(line.get_ydata(), values.numpy(), rtol=1e-6)
        np.testing.assert_array_equal(line.get_xdata(), offsets.numpy())
    colours = [matplotlib.colors.to_hex(line.get_color()) for line in ax.lines]
    assert colours == [matplotlib.colors.to_hex(c) for c in ["C0", "C1"] * 3]
    assert [line.get_linestyle() for line in ax.lines] == ["-", "-", "--", "--", ":", ":"]
    assert ax.get_title() == "partial rotary, 8 of 32 coordinates rotated: the three starts coincide"
    with pytest.raises(ValueError, match="pairs"):
        partial_rotary_parts(offsets, {"one": torch.zeros(7)}, 8, 32)


# --------------------------------------------------------------------------- offset_score_maps


def test_offset_score_maps_labels_every_fifth_offset_and_keeps_the_maps():
    maps = {"a": torch.randn(11, 11), "b": torch.randn(11, 11)}
    fig = offset_score_maps(maps, 32)
    panels = [ax for ax in fig.axes if ax.images]
    assert [ax.get_title() for ax in panels] == ["a", "b"]
    for ax, matrix in zip(panels, maps.values(), strict=True):
        np.testing.assert_allclose(ax.images[0].get_array(), matrix.numpy())
    labels = [t.get_text() for t in panels[0].get_xticklabels()]
    assert labels == ["-5", "", "", "", "", "0", "", "", "", "", "5"]
    assert fig.get_suptitle() == "all-ones score / d around a query, d = 32"
    with pytest.raises(ValueError, match="odd"):
        offset_score_maps({"even": torch.zeros(4, 4)}, 8)
    with pytest.raises(ValueError, match="at least one"):
        offset_score_maps({}, 8)
