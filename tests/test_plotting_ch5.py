"""Chapter 5's figure kinds: arrows in the plane, curves by offset, rotary pairs under two sliders.

Each test checks what the function draws (arrow tips, circle, texts, curve data, slider traces)
against an independent computation; the Agg backend is selected in ``conftest.py``.
"""

from __future__ import annotations

import math
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from posenc import (
    offset_profiles,
    plane_vectors,
    rope_frequencies,
    rope_matrix,
    rotating_pairs_figure,
)
from posenc.interactive import GRID_META_KEY

# --------------------------------------------------------------------------- plane_vectors


def _arrow_tips(ax):
    return np.array([[float(q.U[0]), float(q.V[0])] for q in ax.collections])


def test_plane_vectors_draws_one_arrow_per_row_on_the_circle_of_the_longest():
    vectors = torch.tensor([[1.0, 0.35], [0.0, -0.5]], dtype=torch.float64)
    ax = plane_vectors(vectors, labels=["$x$", "$y$"], title="two")
    np.testing.assert_allclose(_arrow_tips(ax), vectors.numpy())
    assert all(np.allclose(q.X, 0) and np.allclose(q.Y, 0) for q in ax.collections)  # from the origin
    (circle,) = [line for line in ax.lines if line.get_linestyle() == "--"]
    radii = np.hypot(circle.get_xdata(), circle.get_ydata())
    np.testing.assert_allclose(radii, math.hypot(1.0, 0.35))
    assert ax.get_xlim() == pytest.approx((-1.3 * math.hypot(1.0, 0.35), 1.3 * math.hypot(1.0, 0.35)))
    assert [text.get_text() for text in ax.get_legend().get_texts()] == ["$x$", "$y$"]
    assert ax.get_title() == "two"


def test_plane_vectors_writes_a_text_beyond_each_tip_and_uses_given_axes():
    angles = 0.5 * np.arange(8)
    vectors = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    fig, ax = plt.subplots()
    assert plane_vectors(vectors, ax, tip_text=[str(m) for m in range(8)]) is ax
    assert ax.get_legend() is None
    texts = {text.get_text(): text.get_position() for text in ax.texts}
    assert list(texts) == [str(m) for m in range(8)]
    np.testing.assert_allclose(np.array(list(texts.values())), 1.15 * vectors)
    colours = {tuple(np.round(q.get_facecolor()[0], 6)) for q in ax.collections}
    assert len(colours) == 8  # one colour per position


@pytest.mark.parametrize(
    ("vectors", "kwargs", "error"),
    [
        (np.ones((3, 3)), {}, ValueError),
        (np.zeros((2, 2)), {}, ValueError),
        (np.ones((2, 2)), {"labels": ["one"]}, ValueError),
        (np.ones((2, 2)), {"tip_text": ["a", "b", "c"]}, ValueError),
        ([[1.0, 0.0]], {}, TypeError),
    ],
)
def test_plane_vectors_rejects_bad_input(vectors, kwargs, error):
    with pytest.raises(error):
        plane_vectors(vectors, **kwargs)


# --------------------------------------------------------------------------- offset_profiles


def test_offset_profiles_draws_each_curve_against_the_offsets():
    offsets = torch.arange(-4, 5)
    curves = {"cos": torch.cos(offsets.double()), "line": np.linspace(0, 1, 9)}
    ax = offset_profiles(offsets, curves, ylabel="score / norms", title="profiles")
    drawn = [line for line in ax.lines if line.get_label() in curves]
    assert [line.get_label() for line in drawn] == ["cos", "line"]
    for line, values in zip(drawn, curves.values(), strict=True):
        np.testing.assert_array_equal(line.get_xdata(), offsets.numpy())
        np.testing.assert_allclose(line.get_ydata(), np.asarray(values))
    (zero,) = [line for line in ax.lines if line not in drawn]
    assert list(zero.get_xdata()) == [0, 0]  # the vertical line at offset 0
    assert ax.get_xlabel() == r"offset $\delta = j - i$" and ax.get_ylabel() == "score / norms"
    assert [text.get_text() for text in ax.get_legend().get_texts()] == ["cos", "line"]


@pytest.mark.parametrize(
    ("offsets", "curves", "error"),
    [
        (range(3), {}, ValueError),
        (range(3), {"short": [1.0, 2.0]}, ValueError),
        (np.ones((2, 3)), {"a": [1.0, 2.0, 3.0]}, ValueError),
        (range(3), {"a": "abc"}, TypeError),
    ],
)
def test_offset_profiles_rejects_bad_input(offsets, curves, error):
    with pytest.raises(error):
        offset_profiles(offsets, curves)


# --------------------------------------------------------------------------- rotating_pairs_figure


def _group(figure, pairs, positions, i_index, j_index):
    """The traces shown when the sliders are at (i_index, j_index)."""
    owners = figure.layout.meta[GRID_META_KEY]
    return [trace for trace, owner in zip(figure.data, owners, strict=True) if owner == [i_index, j_index]]


def test_rotating_pairs_figure_draws_the_rotated_pairs_and_the_scores():
    pytest.importorskip("plotly")
    dim, pairs, positions = 16, [0, 3, 7], [0, 2, 5, 9]
    q, k = torch.from_numpy(np.random.default_rng(1).normal(size=(2, dim)))
    theta = rope_frequencies(dim)
    figure = rotating_pairs_figure(q, k, theta, pairs=pairs, positions=positions, active=(1, 2))
    assert len(figure.data) == len(positions) ** 2 * (2 * len(pairs) + 1)
    assert [slider.currentvalue.prefix for slider in figure.layout.sliders] == [
        "query position i = ",
        "key position j = ",
    ]
    for a, i in enumerate(positions):
        for b, j in enumerate(positions):
            traces = _group(figure, pairs, positions, a, b)
            assert all(trace.visible == ((a, b) == (1, 2)) for trace in traces)
            rotated_q, rotated_k = (
                rope_matrix(i, dim, dtype=torch.float64) @ q,
                rope_matrix(j, dim, dtype=torch.float64) @ k,
            )
            for panel, pair in enumerate(pairs):
                q_trace, k_trace = traces[2 * panel], traces[2 * panel + 1]
                assert q_trace.xaxis == k_trace.xaxis == ("x" if panel == 0 else f"x{panel + 1}")
                for trace, rotated in ((q_trace, rotated_q), (k_trace, rotated_k)):
                    tip = rotated[2 * pair : 2 * pair + 2].numpy()
                    np.testing.assert_allclose([trace.x[1], trace.y[1]], tip, atol=1e-4)
                share = float(rotated_q[2 * pair : 2 * pair + 2] @ rotated_k[2 * pair : 2 * pair + 2])
                assert k_trace.text[3] == f"score {share:.3f}"
            full = float(q @ rope_matrix(j - i, dim, dtype=torch.float64) @ k)  # q^T R_(j-i) k
            (score,) = re.findall(r"= (-?\d+\.\d{3})$", traces[-1].text[0])
            assert float(score) == pytest.approx(full, abs=1e-3)
            assert f"offset j − i = {j - i}" in traces[-1].text[0]
    titles = [annotation.text for annotation in figure.layout.annotations]
    assert titles == [f"pair ℓ = {pair}<br>θ = {float(theta[pair]):.4g}" for pair in pairs]


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"k": torch.ones(6)}, ValueError),
        ({"q": torch.ones(7), "k": torch.ones(7)}, ValueError),
        ({"theta": torch.ones(3)}, ValueError),
        ({"pairs": []}, ValueError),
        ({"pairs": [4]}, ValueError),
        ({"positions": []}, ValueError),
        ({"positions": [0.5]}, TypeError),
        ({"active": (0, 5)}, ValueError),
    ],
)
def test_rotating_pairs_figure_rejects_bad_input(kwargs, error):
    pytest.importorskip("plotly")
    arguments = {
        "q": torch.ones(8),
        "k": torch.ones(8),
        "theta": rope_frequencies(8),
        "pairs": [0],
        "positions": [0, 1],
    }
    arguments.update(kwargs)
    q, k, theta = arguments.pop("q"), arguments.pop("k"), arguments.pop("theta")
    with pytest.raises(error):
        rotating_pairs_figure(q, k, theta, **arguments)


def test_rotating_pairs_figure_is_a_grid_slider_figure():
    go = pytest.importorskip("plotly.graph_objects")
    figure = rotating_pairs_figure(torch.ones(4), torch.ones(4), rope_frequencies(4), pairs=[1], positions=[0, 1])
    assert isinstance(figure, go.Figure)
    assert len(figure.layout.meta[GRID_META_KEY]) == len(figure.data) == 4 * 3


# --------------------------------------------------------------------------- scores_beside_profiles


def test_scores_beside_profiles_draws_the_matrix_centred_on_zero_and_the_profiles():
    from posenc.plotting import scores_beside_profiles

    grid = torch.tensor([[1.0, -3.0], [0.5, 1.0]])
    offsets = torch.arange(-2, 3)
    profiles = {"a": offsets.double() ** 2, "b": -offsets.double()}
    fig = scores_beside_profiles(grid, offsets, profiles, grid_title="S", profile_title="P", ylabel="s / max")
    matrix_ax, curve_ax = fig.axes[0], fig.axes[1]
    image = matrix_ax.images[0]
    np.testing.assert_array_equal(np.asarray(image.get_array()), grid.numpy())
    assert image.get_clim() == (-3.0, 3.0) and image.get_cmap().name == "RdBu_r"
    assert matrix_ax.get_title() == "S" and curve_ax.get_title() == "P" and curve_ax.get_ylabel() == "s / max"
    lines = {line.get_label(): line for line in curve_ax.lines}
    np.testing.assert_array_equal(lines["a"].get_ydata(), [4, 1, 0, 1, 4])
    np.testing.assert_array_equal(lines["b"].get_xdata(), [-2, -1, 0, 1, 2])
    with pytest.raises(ValueError, match="3 values for 5 offsets"):
        scores_beside_profiles(grid, offsets, {"a": [1.0, 2.0, 3.0]})


def test_rotation_panels_draw_the_vector_its_turn_and_its_orbit():
    from posenc import rotation_panels

    x = torch.tensor([1.0, 0.35], dtype=torch.float64)
    angles = torch.arange(8) * 0.5
    orbit = torch.stack([angles.cos() * x[0] - angles.sin() * x[1], angles.sin() * x[0] + angles.cos() * x[1]], -1)
    turn = math.pi / 4
    turned = torch.tensor([math.cos(turn) - 0.35 * math.sin(turn), math.sin(turn) + 0.35 * math.cos(turn)]).double()
    fig = rotation_panels(x, turned, orbit)
    left, right = fig.axes
    assert left.get_title() == "one rotation by 45°"
    assert [t.get_text() for t in left.get_legend().get_texts()] == ["$x$", r"$B(\pi/4)\,x$"]
    assert right.get_title() == r"$B(m\theta)\,x$ at positions $m = 0, \dots, 7$"
    assert [t.get_text() for t in right.texts] == [str(m) for m in range(8)]
    # the arrows are the inputs: x and its turn on the left, the orbit on the right
    left_tips = np.array([(q.U[0], q.V[0]) for q in left.collections if hasattr(q, "U")])
    np.testing.assert_allclose(left_tips, torch.stack([x, turned]).numpy())
    right_tips = np.array([(q.U[0], q.V[0]) for q in right.collections if hasattr(q, "U")])
    np.testing.assert_allclose(right_tips, orbit.numpy())
    # the numbers sit just beyond the tips, on the rays of the orbit
    np.testing.assert_allclose([t.get_position() for t in right.texts], 1.15 * orbit.numpy())
    with pytest.raises(ValueError):
        rotation_panels(x, turned, torch.zeros(3, 3))
