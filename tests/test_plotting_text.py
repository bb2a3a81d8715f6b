"""Chapter 8's real-text figure: loss by position over seeds, binned, with its spread."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from posenc import loss_by_position, loss_by_position_over_seeds


def test_bins_average_positions_and_the_band_spans_the_seeds():
    seeds = np.array([[1.0, 3.0, 2.0, 2.0, 5.0, 5.0], [3.0, 3.0, 2.0, 4.0, 1.0, 1.0]])
    fig, ax = loss_by_position_over_seeds({"RoPE": seeds, "NoPE": torch.ones(3, 6)}, train_len=2, width=2)
    # bin means per seed: [2, 2, 5] and [3, 3, 1]; mean over seeds [2.5, 2.5, 3] at centres 0.5, 2.5, 4.5
    np.testing.assert_allclose(ax.lines[0].get_xydata(), [[0.5, 2.5], [2.5, 2.5], [4.5, 3.0]])
    band = ax.collections[0].get_paths()[0].vertices
    assert band[:, 1].min() == pytest.approx(1.0) and band[:, 1].max() == pytest.approx(5.0)
    np.testing.assert_allclose(ax.lines[1].get_ydata(), [1, 1, 1])
    assert ax.lines[-1].get_xdata()[0] == pytest.approx(2)  # the training length
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["RoPE", "NoPE"]  # no floor drawn
    assert ax.get_xscale() == "log" and ax.get_ylabel() == "loss at position t (nats)"


def test_loss_by_position_without_a_floor_draws_none():
    fig, ax = loss_by_position({"a": ([1, 2], [1.0, 2.0], [1.0, 2.0], [1.0, 2.0])}, train_len=2)
    assert len(ax.lines) == 2  # the curve and the training length


def test_bad_input():
    with pytest.raises(ValueError, match="empty"):
        loss_by_position_over_seeds({}, train_len=4)
    with pytest.raises(ValueError, match="multiple of width"):
        loss_by_position_over_seeds({"a": np.ones((2, 7))}, train_len=4, width=2)
    with pytest.raises(ValueError, match="2-D"):
        loss_by_position_over_seeds({"a": np.ones(8)}, train_len=4)
    with pytest.raises(TypeError, match="Tensor"):
        loss_by_position_over_seeds({"a": [[1.0, 2.0]]}, train_len=4)  # type: ignore[dict-item]
