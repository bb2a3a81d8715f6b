"""Chapter 4's figure kinds in ``posenc.plotting``: what they draw (panels, labels, data).

The Agg backend is selected in ``conftest.py``; every figure is closed after each test.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from posenc import bias_by_head_slider, curves_by_offset, offset_matrices, skew_diagram, skew_stages


def skew(rel_logits: torch.Tensor) -> torch.Tensor:
    """The chapter's relative shift: pad one zero column, read as (L + 1, L), drop row 0."""
    *batch, length, _ = rel_logits.shape
    padded = torch.nn.functional.pad(rel_logits, (1, 0))
    return padded.reshape(*batch, length + 1, length)[..., 1:, :]


def keep_first_rows(rel_logits: torch.Tensor) -> torch.Tensor:
    """A shift off by one row: keeps rows 0..L-1 instead of dropping row 0."""
    *batch, length, _ = rel_logits.shape
    padded = torch.nn.functional.pad(rel_logits, (1, 0))
    return padded.reshape(*batch, length + 1, length)[..., :-1, :]


@pytest.mark.parametrize("length", [2, 3, 6])
def test_skew_stages_follow_the_index_arithmetic(length):
    stages = skew_stages(skew, length)
    rows, columns = np.indices((length, length))
    query, offset = stages.logits
    np.testing.assert_array_equal(query, rows)  # row i holds query i
    np.testing.assert_array_equal(offset, columns - (length - 1))  # column delta + L - 1
    padded_query, padded_offset = stages.padded
    assert padded_query.shape == (length, length + 1)
    assert (padded_query[:, 0] == -1).all() and (padded_offset[:, 0] == 0).all()
    # Reading the padded memory with rows of length L: cell (r, c) is flat entry r L + c.
    flat_query = padded_query.reshape(-1)
    np.testing.assert_array_equal(stages.reshaped[0].reshape(-1), flat_query)
    # Below and on the diagonal the result holds q_i . a_(j - i); above it, leftovers.
    result_query, result_offset = stages.result
    below = columns <= rows
    np.testing.assert_array_equal(result_query[below], rows[below])
    np.testing.assert_array_equal(result_offset[below], (columns - rows)[below])
    assert (result_query[~below] != rows[~below]).all()


def test_skew_stages_expose_a_wrong_shift():
    result_query, result_offset = skew_stages(keep_first_rows, 4).result
    rows, columns = np.indices((4, 4))
    # entry (i, j) holds query i - 1 with offset j - i + 1, and the diagonal the pad
    assert (np.diagonal(result_query) == -1).all()
    strictly_below = columns < rows
    np.testing.assert_array_equal(result_query[strictly_below], (rows - 1)[strictly_below])
    np.testing.assert_array_equal(result_offset[strictly_below], (columns - rows + 1)[strictly_below])


def test_skew_stages_validate_their_arguments():
    with pytest.raises(TypeError, match="shift must be a function"):
        skew_stages("skew", 4)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="length"):
        skew_stages(skew, 1)
    with pytest.raises(ValueError, match="shape"):
        skew_stages(lambda logits: logits[1:], 4)
    with pytest.raises(TypeError, match="return a tensor"):
        skew_stages(lambda logits: logits.numpy(), 4)


def _texts(ax) -> np.ndarray:
    """The cell texts of a panel as a (rows, columns) array of strings."""
    cells = {(round(t.get_position()[1]), round(t.get_position()[0])): t for t in ax.texts}
    rows = 1 + max(r for r, _ in cells)
    columns = 1 + max(c for _, c in cells)
    return np.array([[cells[r, c].get_text() for c in range(columns)] for r in range(rows)])


def _grey(ax) -> np.ndarray:
    """Whether each cell's text is drawn faded (dropped row or leftover)."""
    cells = {(round(t.get_position()[1]), round(t.get_position()[0])): t for t in ax.texts}
    rows = 1 + max(r for r, _ in cells)
    columns = 1 + max(c for _, c in cells)
    return np.array([[cells[r, c].get_color() == "0.6" for c in range(columns)] for r in range(rows)])


def test_skew_diagram_draws_the_four_stages():
    length = 5
    fig = skew_diagram(skew, length)
    logits_ax, padded_ax, reshaped_ax, result_ax = fig.axes[:4]
    assert [ax.get_title()[:2] for ax in fig.axes[:4]] == ["1.", "2.", "3.", "4."]
    assert "6 × 5" in reshaped_ax.get_title()
    assert result_ax.get_xlabel() == "key $j$" and result_ax.get_ylabel() == "query $i$"
    # Panel 1: every row shows the offsets -(L - 1) .. 0; panel 2 adds the pad column.
    expected = [str(d) for d in range(-(length - 1), 1)]
    assert (_texts(logits_ax) == expected).all()
    assert (_texts(padded_ax)[:, 0] == "pad").all()
    # Panel 3: the first row, which the trick drops, is faded and nothing else is.
    assert _grey(reshaped_ax)[0].all() and not _grey(reshaped_ax)[1:].any()
    # Panel 4: (i, j) shows j - i on and below the diagonal; only the cells above are faded.
    rows, columns = np.indices((length, length))
    below = columns <= rows
    assert (_texts(result_ax)[below] == (columns - rows)[below].astype(str)).all()
    np.testing.assert_array_equal(_grey(result_ax), ~below)
    # One image per panel, coloured by query: row i of panel 1 has one colour.
    image = np.asarray(logits_ax.images[0].get_array())
    assert image.shape == (length, length, 4)
    assert all((image[i] == image[i, 0]).all() for i in range(length))
    assert len({tuple(image[i, 0]) for i in range(length)}) == length
    legend_labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend_labels == [f"$q_{{{i}}}$" for i in range(length)] + ["pad"]


def test_skew_diagram_fades_what_a_wrong_shift_misplaces():
    fig = skew_diagram(keep_first_rows, 4)
    faded = _grey(fig.axes[3])
    assert faded.diagonal().all()  # the diagonal reads the pad


# --------------------------------------------------------------------------- offset_matrices


def test_offset_matrices_write_every_value_on_a_symmetric_scale():
    offsets = torch.arange(4)[None, :] - torch.arange(3)[:, None]
    clipped = offsets.clamp(-1, 1)
    fig = offset_matrices([offsets, clipped], ["j - i", "clipped"])
    for ax, matrix, title in zip(fig.axes, [offsets, clipped], ["j - i", "clipped"], strict=True):
        assert ax.get_title() == title
        (image,) = ax.images
        np.testing.assert_array_equal(np.asarray(image.get_array()), matrix.numpy())
        limit = max(int(matrix.abs().max()), 1)
        assert image.get_clim() == (-limit, limit)
        assert sorted(t.get_text() for t in ax.texts) == sorted(str(int(v)) for v in matrix.flatten())


def test_offset_matrices_validate_titles():
    with pytest.raises(ValueError, match="one title per matrix"):
        offset_matrices([torch.zeros(2, 2)], ["a", "b"])


# --------------------------------------------------------------------------- curves_by_offset


def test_curves_by_offset_draws_curves_marks_and_axes():
    x = torch.arange(-3, 4)
    buckets = x.abs()
    ax = curves_by_offset(x, {"bucket": buckets}, steps=True, marks={-2: ":", 2: "--"}, ylabel="bucket", title="t")
    (line,) = [line for line in ax.lines if line.get_label() == "bucket"]
    np.testing.assert_array_equal(line.get_xdata(), x.numpy())
    np.testing.assert_array_equal(line.get_ydata(), buckets.numpy())
    assert line.get_drawstyle() == "steps-mid"
    vertical = [line for line in ax.lines if line.get_label() != "bucket"]
    assert sorted(line.get_xdata()[0] for line in vertical) == [-2, 2]
    assert sorted(line.get_linestyle() for line in vertical) == ["--", ":"]
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("offset j - i", "bucket", "t")
    assert ax.get_legend() is None  # one curve: no legend


def test_curves_by_offset_log_axis_and_legend():
    x = torch.arange(5)
    ax = curves_by_offset(x, {"a": torch.ones(5), "b": torch.full((5,), 0.5)}, logy=True)
    assert ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b"]


def test_curves_by_offset_validates_shapes():
    with pytest.raises(ValueError, match="3 values for 4 offsets"):
        curves_by_offset(torch.arange(4), {"a": torch.zeros(3)})
    with pytest.raises(ValueError, match="at least one curve"):
        curves_by_offset(torch.arange(4), {})
    with pytest.raises(TypeError, match="sequence of numbers"):
        curves_by_offset("01", {"a": torch.zeros(2)})  # type: ignore[arg-type]


# --------------------------------------------------------------------------- bias_by_head_slider


def test_bias_by_head_slider_has_one_step_per_head_with_the_data():
    pytest.importorskip("plotly")
    offsets = torch.arange(-5, 6)
    slopes = torch.tensor([0.5, 0.25])
    alibi = -slopes[:, None] * offsets.abs()
    t5 = torch.randn(2, 11)
    buckets = offsets.abs()
    fig = bias_by_head_slider(offsets, alibi, t5, buckets, slopes, edges=(-4, 4))
    (slider,) = fig.layout.sliders
    assert [step.label for step in slider.steps] == ["1 (m = 1/2)", "2 (m = 1/4)"]
    assert len(fig.data) == 3 * 2
    for head in range(2):
        past, future, t5_trace = fig.data[3 * head : 3 * head + 3]
        assert list(past.x) == list(range(-5, 1)) and list(future.x) == list(range(0, 6))
        np.testing.assert_allclose(past.y, alibi[head, :6].numpy(), atol=1e-4)
        np.testing.assert_allclose(t5_trace.y, t5[head].numpy(), atol=1e-4)
        assert list(t5_trace.customdata) == buckets.tolist()
        assert future.line.dash == "dot" and t5_trace.line.shape == "hvh"
    assert [shape.x0 for shape in fig.layout.shapes] == [-4, 4]


def test_bias_by_head_slider_validates_shapes():
    pytest.importorskip("plotly")
    offsets = torch.arange(3)
    with pytest.raises(ValueError, match="alibi_rows must have shape"):
        bias_by_head_slider(offsets, torch.zeros(2, 4), torch.zeros(2, 3), offsets, torch.ones(2))
    with pytest.raises(ValueError, match="one bucket per offset"):
        bias_by_head_slider(offsets, torch.zeros(2, 3), torch.zeros(2, 3), torch.arange(2), torch.ones(2))


def test_t5_bucket_panels_draw_the_bucket_maps_and_their_edges():
    from posenc import t5_bucket_panels, t5_relative_position_bucket

    offsets = torch.arange(-160, 161)
    both, causal = (t5_relative_position_bucket(offsets, bidirectional=mode) for mode in (True, False))
    fig, axes = t5_bucket_panels(offsets, both, causal, exact=(8, 16), last=(91, 113))
    assert len(fig.axes) == 2
    for ax, buckets in zip(axes, (both, causal), strict=True):
        (line,) = [line for line in ax.get_lines() if line.get_label() == "bucket"]
        np.testing.assert_array_equal(line.get_xdata(), offsets.numpy())
        np.testing.assert_array_equal(line.get_ydata(), buckets.numpy())
        assert line.get_drawstyle() == "steps-mid"
    marks = [sorted(line.get_xdata()[0] for line in ax.get_lines() if line.get_label() != "bucket") for ax in axes]
    assert marks == [[-91, -8, 8, 91], [-113, -16]]  # the causal panel marks the past only
    assert axes[0].get_title() == "bidirectional, 32 buckets, max_distance 128"
    assert axes[1].get_title().startswith("causal")
    with pytest.raises(ValueError):
        t5_bucket_panels(offsets, both[:-1], causal)


def test_alibi_weight_curves_draw_one_curve_per_head_by_distance():
    from posenc import alibi_bias, alibi_weight_curves

    weights = alibi_bias(4, 64)[:, -1].softmax(-1)
    ax = alibi_weight_curves(weights)
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["head 1", "head 2", "head 3", "head 4"]
    for line, row in zip(lines, weights, strict=True):
        np.testing.assert_array_equal(line.get_xdata(), np.arange(63, -1, -1))  # key j at distance 63 - j
        np.testing.assert_allclose(line.get_ydata(), row.numpy())
    # the nearest key (distance 0) gets the largest weight in every head
    assert all(line.get_ydata()[-1] == line.get_ydata().max() for line in lines)
    assert ax.get_yscale() == "log" and ax.get_ylim() == (1e-6, 1.5)
    with pytest.raises(ValueError):
        alibi_weight_curves(torch.zeros(2, 3, 4))
