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


def test_complex_pairs_reads_each_pair_as_one_complex_number():
    from posenc import complex_pairs

    x = torch.tensor([[1.0, 2.0, 3.0, 4.0]], dtype=torch.float64)
    assert complex_pairs(x).tolist() == [[1 + 2j, 3 + 4j]]
    assert complex_pairs(x.float()).dtype == torch.complex64
    assert complex_pairs(torch.arange(12.0).view(2, 6)[:, 1:5]).tolist() == [[1 + 2j, 3 + 4j], [7 + 8j, 9 + 10j]]
    # the complex form of the score: Re sum conj(a) c e^(i (n - m) theta) = (R_m q)^T (R_n k)
    q, k = torch.randn(2, 16, dtype=torch.float64)
    complex_form = (complex_pairs(q).conj() * complex_pairs(k) * torch.exp(1j * 7 * rope_angles(torch.tensor(1), 16)))
    rotated = apply_rope(q[None], torch.tensor([3]))[0] @ apply_rope(k[None], torch.tensor([10]))[0]
    assert complex_form.sum().real.item() == pytest.approx(rotated.item(), abs=1e-12)


def test_complex_pairs_validates():
    from posenc import complex_pairs

    with pytest.raises(TypeError, match="float32 or float64"):
        complex_pairs(torch.arange(4))
    with pytest.raises(ValueError, match="even"):
        complex_pairs(torch.zeros(3))
    with pytest.raises(TypeError):
        complex_pairs([1.0, 2.0])  # type: ignore[arg-type]
