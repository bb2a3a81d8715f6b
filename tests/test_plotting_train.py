"""Figure kinds of Part V (chapters 8–9): accuracy against length, and loss curves."""

from __future__ import annotations

import numpy as np
import pytest

from posenc import accuracy_by_length, loss_by_position, loss_curves


def test_accuracy_by_length_draws_each_series_its_band_and_chance():
    panels = {
        "lookback": {
            "RoPE": ([0.9, 0.5, 0.2], [0.8, 0.4, 0.1], [1.0, 0.6, 0.3]),
            "ALiBi": ([1, 1, 1], [1, 1, 1], [1, 1, 1]),
        },
        "recall": {"RoPE": ([0.7, 0.3, 0.1], [0.6, 0.2, 0.05], [0.8, 0.4, 0.2])},
    }
    fig, axes = accuracy_by_length(panels, [2, 4, 8], chance=1 / 16)
    assert [ax.get_title() for ax in axes] == ["lookback", "recall"]
    first = axes[0]
    np.testing.assert_allclose(first.lines[0].get_xydata(), [[2, 0.9], [4, 0.5], [8, 0.2]])
    assert first.lines[-1].get_ydata()[0] == pytest.approx(1 / 16)  # the chance line
    assert len(first.collections) == 2  # one band per series
    assert [t.get_text() for t in first.get_xticklabels()] == ["2L", "4L", "8L"]
    assert first.get_ylabel() == "accuracy beyond L"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["RoPE", "ALiBi", "chance"]


def test_accuracy_by_length_rejects_bad_input():
    with pytest.raises(ValueError, match="empty"):
        accuracy_by_length({}, [2], chance=0.1)
    with pytest.raises(ValueError, match="values per statistic"):
        accuracy_by_length({"a": {"b": ([1], [1], [1])}}, [2, 4], chance=0.1)


def test_loss_curves_draw_one_line_per_seed_and_mark_non_converged():
    curves = {"NoPE": [[3.0, 2.0, 1.0], [3.0, 2.5]], "RoPE": [[3.0, 0.1]]}
    fig, axes = loss_curves(curves, every=10, converged={"NoPE": [True, False], "RoPE": [True]}, ncols=2)
    nope = axes[0]
    assert nope.get_title() == "NoPE (1 not converged)" and axes[1].get_title() == "RoPE"
    np.testing.assert_allclose(nope.lines[0].get_xydata(), [[10, 3.0], [20, 2.0], [30, 1.0]])
    assert [line.get_linestyle() for line in nope.lines] == ["-", "--"]
    assert nope.get_yscale() == "log" and nope.get_ylabel() == "training loss"


def test_loss_curves_reject_bad_input():
    with pytest.raises(ValueError, match="empty"):
        loss_curves({}, every=10)
    with pytest.raises(ValueError, match="one flag per seed"):
        loss_curves({"a": [[1.0]]}, every=10, converged={"a": [True, False]})


def test_loss_by_position_draws_lines_bands_floor_and_training_length():
    curves = {"ALiBi": ([4, 8, 16], [1.0, 1.1, 1.2], [0.9, 1.0, 1.1], [1.1, 1.2, 1.3])}
    fig, ax = loss_by_position(curves, floor=0.8, train_len=8)
    np.testing.assert_allclose(ax.lines[0].get_xydata(), [[4, 1.0], [8, 1.1], [16, 1.2]])
    assert ax.lines[1].get_ydata()[0] == pytest.approx(0.8)  # the floor
    assert ax.lines[2].get_xdata()[0] == pytest.approx(8)  # the training length
    assert len(ax.collections) == 1 and ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["ALiBi", "best possible"]
    with pytest.raises(ValueError, match="equal lengths"):
        loss_by_position({"a": ([1, 2], [1], [1], [1])}, floor=0, train_len=2)
    with pytest.raises(ValueError, match="empty"):
        loss_by_position({}, floor=0, train_len=2)
