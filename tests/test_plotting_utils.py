"""Figure helpers, reproducibility helpers and the RoPE timing table.

The Agg backend is selected in ``conftest.py``; every figure is closed after each test.
The timing tests check the *structure* of the results (names, ratios, table rows), never speed.
"""

from __future__ import annotations

import platform
import random

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

import posenc
from posenc import (
    Timing,
    describe_machine,
    format_timings,
    heatmap,
    heatmaps,
    max_abs_diff,
    median_time,
    report,
    rope_timings,
    seed_everything,
    use_book_style,
)

# --------------------------------------------------------------------------- heatmap(s)


def test_heatmap_draws_the_matrix_values():
    matrix = torch.arange(12.0).reshape(3, 4) / 7
    ax = heatmap(matrix, title="weights")
    (image,) = ax.images
    np.testing.assert_array_equal(np.asarray(image.get_array()), matrix.numpy())
    assert image.get_clim() == (0.0, pytest.approx(11 / 7))  # data range by default
    assert ax.get_title() == "weights"
    assert ax.get_xlabel() == "key position j" and ax.get_ylabel() == "query position i"
    assert len(ax.figure.axes) == 2  # the axes and its colour bar


def test_heatmap_accepts_numpy_and_tensors_requiring_grad():
    values = np.random.default_rng(0).normal(size=(2, 5))
    ax = heatmap(values, colorbar=False)
    np.testing.assert_array_equal(np.asarray(ax.images[0].get_array()), values)
    assert len(ax.figure.axes) == 1
    tensor = torch.ones(2, 2, requires_grad=True) * 3
    ax = heatmap(tensor, colorbar=False)
    np.testing.assert_array_equal(np.asarray(ax.images[0].get_array()), np.full((2, 2), 3.0))


def test_heatmap_tick_labels_annotations_and_given_axes():
    fig, ax = plt.subplots()
    tokens = ["the", "cat", "sat"]
    matrix = np.array([[0.5, 0.25, 0.25], [0.1, 0.2, 0.7]])
    returned = heatmap(matrix, ax, xticklabels=tokens, yticklabels=["q0", "q1"], annotate=True, vmin=0, vmax=1)
    assert returned is ax
    assert [label.get_text() for label in ax.get_xticklabels()] == tokens
    assert [label.get_text() for label in ax.get_yticklabels()] == ["q0", "q1"]
    assert list(ax.get_xticks()) == [0, 1, 2] and list(ax.get_yticks()) == [0, 1]
    assert sorted(text.get_text() for text in ax.texts) == sorted(f"{v:.2f}" for v in matrix.ravel())
    assert ax.images[0].get_clim() == (0, 1)


def test_heatmaps_share_one_colour_scale():
    matrices = [torch.zeros(2, 2), torch.full((3, 2), 5.0), torch.tensor([[-1.0, 2.0]])]
    fig = heatmaps(matrices, titles=["a", "b", "c"], colorbar=False)
    images = [ax.images[0] for ax in fig.axes if ax.images]
    assert len(images) == 3
    for image, matrix in zip(images, matrices, strict=True):
        np.testing.assert_array_equal(np.asarray(image.get_array()), matrix.numpy())
        assert image.get_clim() == (-1.0, 5.0)
    assert [ax.get_title() for ax in fig.axes if ax.images] == ["a", "b", "c"]


def test_heatmaps_without_shared_scale_and_grid_layout():
    fig = heatmaps([np.array([[0.0, 1.0]])] * 3, ncols=2, share_scale=False, colorbar=False)
    panels = list(fig.axes)
    assert len(panels) == 4  # a 2 x 2 grid for 3 matrices
    assert sum(1 for ax in panels if ax.images) == 3
    assert not panels[-1].axison  # the unused panel is hidden
    fig = heatmaps([np.array([[0.0, 1.0]]), np.array([[10.0, 30.0]])], share_scale=False, colorbar=False)
    assert [ax.images[0].get_clim() for ax in fig.axes] == [(0.0, 1.0), (10.0, 30.0)]


def test_heatmaps_centre_a_diverging_map_on_zero():
    skewed = [np.array([[-1.0, 3.0]]), np.array([[0.5, -6.0], [2.0, 1.0]])]
    for cmap in ("RdBu_r", "coolwarm", plt.get_cmap("bwr")):
        shared = heatmaps(skewed, cmap=cmap, colorbar=False)
        assert [ax.images[0].get_clim() for ax in shared.axes] == [(-6.0, 6.0)] * 2, "±max|value| of all panels"
    own = heatmaps(skewed, cmap="RdBu_r", share_scale=False, colorbar=False)
    assert [ax.images[0].get_clim() for ax in own.axes] == [(-3.0, 3.0), (-6.0, 6.0)], "±max|value| of each panel"
    for ax in own.axes:  # 0 is drawn in the middle colour of the map
        image = ax.images[0]
        assert np.allclose(image.to_rgba(0.0), image.cmap(0.5))
    nan_and_zero = heatmaps([np.array([[np.nan, -2.0]]), np.zeros((2, 2))], cmap="RdBu", share_scale=False)
    assert [ax.images[0].get_clim() for ax in nan_and_zero.axes if ax.images] == [(-2.0, 2.0), (-1.0, 1.0)]


def test_heatmaps_centre_only_where_asked_or_diverging():
    skewed = [np.array([[-1.0, 3.0]])]
    assert heatmaps(skewed, colorbar=False).axes[0].images[0].get_clim() == (-1.0, 3.0), "viridis: data range"
    assert heatmaps(skewed, centre=True, colorbar=False).axes[0].images[0].get_clim() == (-3.0, 3.0)
    assert heatmaps(skewed, cmap="RdBu_r", centre=False, colorbar=False).axes[0].images[0].get_clim() == (-1.0, 3.0)
    given = heatmaps(skewed, cmap="RdBu_r", vmin=-1.0, vmax=1.0, colorbar=False)
    assert given.axes[0].images[0].get_clim() == (-1.0, 1.0), "limits given by the caller win"
    with pytest.raises(ValueError, match="centre"):
        heatmaps(skewed, centre=True, vmin=0.0)


def test_heatmaps_per_panel_tick_labels_and_one_colour_bar():
    sentences = [["the", "dog", "bit"], ["the", "man", "ran"]]
    fig = heatmaps([torch.rand(3, 3), torch.rand(3, 3)], xticklabels=sentences, yticklabels=["a", "b", "c"])
    panels = [ax for ax in fig.axes if ax.images]
    for ax, sentence in zip(panels, sentences, strict=True):
        assert [label.get_text() for label in ax.get_xticklabels()] == sentence
        assert [label.get_text() for label in ax.get_yticklabels()] == ["a", "b", "c"]
    assert len(fig.axes) == len(panels) + 1, "a shared scale gets exactly one colour bar"
    unshared = heatmaps([torch.rand(2, 2), torch.rand(2, 2)], share_scale=False)
    assert len(unshared.axes) == 4, "separate scales get one colour bar per panel"
    with pytest.raises(ValueError, match="xticklabels"):
        heatmaps([torch.rand(3, 3), torch.rand(3, 3)], xticklabels=[["a", "b", "c"]])


def test_rejected_tick_labels_leave_no_figure_open():
    before = plt.get_fignums()
    with pytest.raises(ValueError, match="xticklabels"):
        heatmap(torch.zeros(2, 3), xticklabels=["a", "b"])
    assert plt.get_fignums() == before


def test_heatmap_rejects_bad_input():
    with pytest.raises(ValueError, match="matrix"):
        heatmap(torch.zeros(2, 3, 4))
    with pytest.raises(ValueError, match="matrix"):
        heatmap(np.zeros(3))
    with pytest.raises(TypeError, match="matrix"):
        heatmap([[1.0, 2.0]])
    with pytest.raises(ValueError, match="xticklabels"):
        heatmap(torch.zeros(2, 3), xticklabels=["a", "b"])
    with pytest.raises(ValueError, match="yticklabels"):
        heatmap(torch.zeros(2, 3), yticklabels=["a", "b", "c"])


def test_heatmaps_rejects_bad_input():
    with pytest.raises(ValueError, match="matrices"):
        heatmaps([])
    with pytest.raises(ValueError, match="titles"):
        heatmaps([torch.zeros(2, 2), torch.zeros(2, 2)], titles=["only one"])
    with pytest.raises(ValueError, match=r"matrices\[1\]"):
        heatmaps([torch.zeros(2, 2), torch.zeros(2, 2, 2)])
    with pytest.raises(ValueError, match="ncols"):
        heatmaps([torch.zeros(2, 2)], ncols=0)


def test_use_book_style_sets_rcparams():
    with matplotlib.rc_context():
        use_book_style()
        assert matplotlib.rcParams["figure.dpi"] == 110
        assert tuple(matplotlib.rcParams["figure.figsize"]) == (6.0, 4.0)
        assert matplotlib.rcParams["image.cmap"] == "viridis"


# --------------------------------------------------------------------------- utils


def test_max_abs_diff_is_the_largest_entrywise_gap():
    a = torch.tensor([[1.0, -2.0], [3.0, 4.0]])
    b = torch.tensor([[1.0, 2.0], [3.5, 4.0]])
    assert max_abs_diff(a, b) == 4.0  # |-2 - 2| beats |3 - 3.5|
    assert max_abs_diff(a, a) == 0.0
    assert max_abs_diff(a, torch.tensor(1.0)) == 3.0  # broadcasting: |4 - 1|
    with pytest.raises(ValueError, match="broadcast"):
        max_abs_diff(torch.zeros(2), torch.zeros(3))
    with pytest.raises(ValueError, match="empty"):
        max_abs_diff(torch.zeros(0), torch.zeros(0))
    with pytest.raises(TypeError, match="b must be a torch.Tensor"):
        max_abs_diff(a, [1.0])


def test_report_prints_an_aligned_row(capsys):
    report("gap", 1.5e-7)
    report("a longer label", 3.0, 20)
    first, second = capsys.readouterr().out.splitlines()
    assert first == f"{'gap':<44}{'1.5e-07':>10}"
    assert second == f"{'a longer label':<20}{'3.0e+00':>10}"


def test_seed_everything_makes_random_draws_reproducible():
    generator = seed_everything(123)
    first = (torch.randn(5), np.random.rand(3), random.random(), torch.randn(2, generator=generator))
    generator = seed_everything(123)
    second = (torch.randn(5), np.random.rand(3), random.random(), torch.randn(2, generator=generator))
    assert torch.equal(first[0], second[0]) and torch.equal(first[3], second[3])
    np.testing.assert_array_equal(first[1], second[1])
    assert first[2] == second[2]
    # The returned generator is an ordinary one seeded with the same seed.
    assert torch.equal(
        torch.randn(4, generator=seed_everything(7)), torch.randn(4, generator=torch.Generator().manual_seed(7))
    )
    seed_everything(124)
    assert not torch.equal(torch.randn(5), first[0])


def test_seed_everything_rejects_bad_seeds():
    with pytest.raises(ValueError, match="seed"):
        seed_everything(-1)
    with pytest.raises(TypeError, match="seed"):
        seed_everything(1.5)


def test_describe_machine_names_python_and_pytorch():
    line = describe_machine()
    assert f"PyTorch {torch.__version__}" in line
    assert f"Python {platform.python_version()}" in line
    assert "\n" not in line


# --------------------------------------------------------------------------- benchmark


def test_median_time_calls_the_function_repeatedly():
    calls = []
    seconds = median_time(lambda: calls.append(None), min_run_time=0.001)
    assert seconds > 0
    assert len(calls) >= 2 + 5  # warm-up, calibration, at least five timed blocks


def test_rope_timings_rows_cover_every_implementation():
    timings = rope_timings((1, 2, 4, 8), min_run_time=0.001)
    assert all(isinstance(timing, Timing) for timing in timings)
    names = [timing.name for timing in timings]
    assert len(names) == len(set(names)) == 6
    assert "reference" in names[0]
    assert timings[0].relative == 1.0
    assert any('layout="half"' in name for name in names)
    assert any('layout="interleaved"' in name for name in names)
    assert any("complex" in name for name in names)
    assert any("dense" in name for name in names)
    assert any("RotaryEmbedding" in name for name in names)
    for timing in timings:
        assert timing.median_ms > 0
        assert timing.relative == pytest.approx(timing.median_ms / timings[0].median_ms)


def test_format_timings_renders_one_markdown_row_per_timing():
    timings = [Timing("reference", 2.0, 1.0), Timing("a much longer name", 3.25, 1.625), Timing("x", 0.5, 0.25)]
    lines = format_timings(timings).splitlines()
    assert len(lines) == 2 + len(timings)
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert header == ["implementation", "median (ms)", "relative"]
    assert set(lines[1]) <= set("|-:")  # the separator row
    assert len({len(line) for line in lines}) == 1  # columns line up
    for line, timing in zip(lines[2:], timings, strict=True):
        name, median, relative = (cell.strip() for cell in line.strip("|").split("|"))
        assert name == timing.name
        assert float(median) == pytest.approx(timing.median_ms, abs=5e-4)
        assert float(relative) == pytest.approx(timing.relative, abs=5e-3)


def test_format_timings_rejects_an_empty_list():
    with pytest.raises(ValueError, match="timings"):
        format_timings([])


@pytest.mark.parametrize(
    ("shape", "name"),
    [
        ((1, 2, 4), "shape"),
        ((1, 2, 4, 8, 1), "shape"),
        ((1, 2, 4, 7), "dim"),
        ((0, 2, 4, 8), "batch"),
        ((1, 2, 0, 8), "seq_len"),
    ],
)
def test_rope_timings_rejects_bad_shapes(shape, name):
    with pytest.raises(ValueError, match=name):
        rope_timings(shape, min_run_time=0.001)


def test_rope_timings_rejects_bad_min_run_time():
    with pytest.raises(ValueError, match="min_run_time"):
        rope_timings((1, 1, 2, 2), min_run_time=0)
    with pytest.raises(TypeError, match="heads"):
        rope_timings((1, 2.0, 2, 2), min_run_time=0.001)


def test_seed_offset_shifts_every_seed(monkeypatch):
    monkeypatch.setenv(posenc.SEED_OFFSET_VARIABLE, "3")
    assert posenc.seed_offset() == 3
    shifted = torch.randn(4, generator=seed_everything(4))
    assert torch.equal(shifted, torch.randn(4, generator=torch.Generator().manual_seed(7)))
    monkeypatch.delenv(posenc.SEED_OFFSET_VARIABLE)
    assert posenc.seed_offset() == 0


@pytest.mark.parametrize("raw", ["-1", "one", "1.5"])
def test_seed_offset_rejects_what_is_not_a_non_negative_integer(monkeypatch, raw):
    monkeypatch.setenv(posenc.SEED_OFFSET_VARIABLE, raw)
    with pytest.raises(ValueError, match="POSENC_SEED_OFFSET must be a non-negative integer"):
        posenc.seed_offset()
