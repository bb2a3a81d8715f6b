"""Figure kinds of chapter 6 (posenc.plotting, section "chapter 6"): what each one draws.

The Agg backend is selected in ``conftest.py``; every figure is closed after each test.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from posenc import frequency_bands, weight_maps_with_difference

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
