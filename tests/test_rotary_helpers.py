"""posenc.rope_angles and posenc.rotate_pairs: the angle table and the interleaved quarter turn."""

from __future__ import annotations

import pytest
import torch

from posenc import apply_rope, rope_angles, rotate_pairs


def test_rope_angles_is_position_times_base_power():
    positions = torch.tensor([[0, 3], [70000, -2]])
    angles = rope_angles(positions, 8, base=100.0)
    assert angles.shape == (2, 2, 4) and angles.dtype == torch.float64
    for (row, column), m in [((0, 1), 3), ((1, 0), 70000), ((1, 1), -2)]:
        expected = [m * 100.0 ** (-2 * ell / 8) for ell in range(4)]
        assert angles[row, column].tolist() == pytest.approx(expected, rel=1e-15)
    assert rope_angles(torch.tensor([0.5]), 2)[0, 0].item() == 0.5


def test_rope_angles_validates():
    with pytest.raises(TypeError, match="torch.Tensor"):
        rope_angles([1, 2], 8)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        rope_angles(torch.arange(3), 7)
    with pytest.raises(ValueError):
        rope_angles(torch.arange(3), 8, base=0.0)


def test_rotate_pairs_is_the_quarter_turn_of_every_pair():
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    quarter = torch.block_diag(*[torch.tensor([[0.0, -1.0], [1.0, 0.0]], dtype=torch.float64)] * 4)
    torch.testing.assert_close(rotate_pairs(x), x @ quarter.T)
    assert rotate_pairs(torch.tensor([1.0, 2.0, 3.0, 4.0])).tolist() == [-2.0, 1.0, -4.0, 3.0]
    # with it, the interleaved rotation is x cos + rotate_pairs(x) sin, angles repeated in place
    angles = rope_angles(torch.arange(5), 8).repeat_interleave(2, -1)
    torch.testing.assert_close(x * angles.cos() + rotate_pairs(x) * angles.sin(), apply_rope(x))


def test_rotate_pairs_validates():
    with pytest.raises(ValueError, match="even"):
        rotate_pairs(torch.zeros(3))
    with pytest.raises(TypeError):
        rotate_pairs([1.0, 2.0])  # type: ignore[arg-type]
