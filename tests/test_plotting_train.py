"""Figure kinds of Part V (chapters 8–9): accuracy against length, and loss curves."""

from __future__ import annotations

import numpy as np
import pytest

from posenc import accuracy_panels, loss_by_position, loss_curves

LENGTHS = (32, 64, 128, 256)


def test_accuracy_panels_draw_the_mean_over_seeds_in_a_band_from_worst_to_best():
    rope = np.array([[1.0, 0.9, 0.5, 0.1], [0.8, 0.7, 0.3, 0.1]])
    panels = {"lookback": {"RoPE": rope, "ALiBi": np.ones((2, 4))}, "recall": {"RoPE": rope}}
    fig, axes = accuracy_panels(LENGTHS, panels, chance=1 / 16, marks={"L": 32, "L'": 128},
                                tick_labels=["L", "2L", "4L", "8L"], ylabel="accuracy beyond L")
    assert [ax.get_title() for ax in axes] == ["lookback", "recall"]
    first = axes[0]
    lines = {line.get_label(): line for line in first.get_lines()}
    np.testing.assert_allclose(lines["RoPE"].get_xydata(), np.column_stack([LENGTHS, [0.9, 0.8, 0.4, 0.1]]))
    np.testing.assert_allclose(lines["chance"].get_ydata(), [1 / 16, 1 / 16])
    band = first.collections[0].get_paths()[0].vertices
    assert band[:, 1].min() == pytest.approx(0.1) and band[:, 1].max() == pytest.approx(1.0)
    assert len(first.collections) == 2  # one band per series
    verticals = [line.get_xdata()[0] for line in first.get_lines() if line.get_linestyle() == "--"]
    assert verticals == [32, 128]
    assert [t.get_text() for t in first.get_xticklabels()] == ["L", "2L", "4L", "8L"]
    assert first.get_xscale() == "log" and first.get_ylabel() == "accuracy beyond L"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["RoPE", "ALiBi", "chance"]


def test_a_series_keeps_its_colour_in_every_panel_and_its_legend_entry():
    # the second panel lacks a series of the first and adds one of its own
    panels = {"lookback": {"NoPE": np.ones((1, 4)), "Shaw": np.ones((1, 4))},
              "recall": {"NoPE": np.ones((1, 4)), "ALiBi": np.ones((1, 4)), "Shaw": np.ones((1, 4))}}
    fig, axes = accuracy_panels(LENGTHS, panels, chance=0.1)
    colour = [{line.get_label(): line.get_color() for line in ax.get_lines()} for ax in axes]
    assert colour[0]["NoPE"] == colour[1]["NoPE"] and colour[0]["Shaw"] == colour[1]["Shaw"]
    assert len({colour[1]["NoPE"], colour[1]["ALiBi"], colour[1]["Shaw"]}) == 3
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["NoPE", "Shaw", "ALiBi", "chance"]


def test_accuracy_panels_hide_unused_panels_and_label_ticks_by_length():
    fig, axes = accuracy_panels(LENGTHS, {f"p{i}": {"rope": np.ones((1, 4))} for i in range(3)},
                                chance=0.1, columns=2)
    assert len(axes) == 3 and sum(ax.get_visible() for ax in fig.axes) == 3
    assert [t.get_text() for t in axes[0].get_xticklabels()] == ["32", "64", "128", "256"]


def test_accuracy_panels_reject_bad_input():
    with pytest.raises(ValueError, match="at least one panel"):
        accuracy_panels(LENGTHS, {}, chance=0.1)
    with pytest.raises(ValueError, match=r"\(seeds, 4\)"):
        accuracy_panels(LENGTHS, {"p": {"rope": np.ones((2, 3))}}, chance=0.1)
    with pytest.raises(ValueError, match="one label per length"):
        accuracy_panels(LENGTHS, {"p": {"rope": np.ones((2, 4))}}, chance=0.1, tick_labels=["L"])


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


def test_accuracy_panels_draw_fine_tune_steps_on_a_linear_axis_from_zero():
    steps = (0, 10, 25, 50, 100)
    fig, axes = accuracy_panels(steps, {"recall": {"PI": np.array([[0.1, 0.5, 0.8, 0.9, 1.0]])}},
                                chance=1 / 16, xscale="linear", xlabel="fine-tune step")
    assert axes[0].get_xscale() == "linear" and axes[0].get_xlabel() == "fine-tune step"
    np.testing.assert_allclose(axes[0].get_lines()[0].get_xdata(), steps)
    with pytest.raises(ValueError, match="xscale"):
        accuracy_panels(steps, {"p": {"PI": np.ones((1, 5))}}, chance=0.1, xscale="log")
