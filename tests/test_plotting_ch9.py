"""posenc.plotting, chapter 9: what the stretch panels draw."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from posenc.plotting import stretch_accuracy_panels  # noqa: E402

LENGTHS = (32, 64, 128, 256)


def test_each_curve_is_the_mean_over_seeds_with_the_spread_as_a_band() -> None:
    pi = torch.tensor([[1.0, 0.9, 0.5, 0.1], [0.8, 0.7, 0.3, 0.1]])
    rope = np.ones((2, 4))
    fig = stretch_accuracy_panels(LENGTHS, {"recall, zero-shot": {"pi": pi, "rope": rope}, "recall, tuned": {"pi": pi}},
                                  chance=1 / 16, train_len=32, target_len=128)
    first, second = fig.axes
    assert first.get_title() == "recall, zero-shot" and second.get_title() == "recall, tuned"
    lines = {line.get_label(): line for line in first.get_lines()}
    np.testing.assert_allclose(lines["pi"].get_ydata(), [0.9, 0.8, 0.4, 0.1])
    np.testing.assert_allclose(lines["pi"].get_xdata(), LENGTHS)
    np.testing.assert_allclose(lines["chance"].get_ydata(), [1 / 16, 1 / 16])
    band = first.collections[0].get_paths()[0].vertices
    assert band[:, 1].min() == pytest.approx(0.1) and band[:, 1].max() == pytest.approx(1.0)
    verticals = [line.get_xdata()[0] for line in first.get_lines() if line.get_linestyle() == "--"]
    assert verticals == [32, 128]
    assert first.get_xscale() == "log" and first.get_ylabel() == "accuracy"
    plt.close(fig)


def test_unused_panels_are_removed_and_bad_tables_refused() -> None:
    fig = stretch_accuracy_panels(LENGTHS, {f"p{i}": {"rope": np.ones((1, 4))} for i in range(3)},
                                  chance=0.1, train_len=32, target_len=128)
    assert len(fig.axes) == 3
    plt.close(fig)
    with pytest.raises(ValueError, match=r"\(seeds, 4\)"):
        stretch_accuracy_panels(LENGTHS, {"p": {"rope": np.ones((2, 3))}}, chance=0.1, train_len=32, target_len=128)
    with pytest.raises(ValueError, match="at least one panel"):
        stretch_accuracy_panels(LENGTHS, {}, chance=0.1, train_len=32, target_len=128)
    plt.close("all")
