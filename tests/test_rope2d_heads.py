"""Axial 2-D RoPE and head splitting: checked against dense matrices and explicit loops."""

from __future__ import annotations

import math

import pytest
import torch

from posenc import apply_rope_2d, merge_heads, rope_matrix_2d, split_heads
from posenc.multihead import MultiHeadSelfAttention


def _block(angle: float) -> torch.Tensor:
    c, s = math.cos(angle), math.sin(angle)
    return torch.tensor([[c, -s], [s, c]], dtype=torch.float64)


def _reference_matrix(row: float, column: float, dim: int, base: float) -> torch.Tensor:
    """diag of 2x2 blocks written out from the definition, independent of posenc.rope_matrix."""
    half = dim // 2
    theta = [base ** (-2 * k / half) for k in range(half // 2)]
    blocks = [_block(row * t) for t in theta] + [_block(column * t) for t in theta]
    return torch.block_diag(*blocks)


@pytest.mark.parametrize("dim", [4, 8, 32])
def test_matrix_matches_definition(dim: int) -> None:
    for row, column in [(0, 0), (3, -7), (12.5, 40)]:
        expected = _reference_matrix(row, column, dim, 100.0)
        assert torch.allclose(rope_matrix_2d(row, column, dim, 100.0), expected, atol=1e-12)


def test_apply_matches_dense_and_is_relative() -> None:
    generator = torch.Generator().manual_seed(0)
    dim, n = 16, 30
    x = torch.randn(2, n, dim, dtype=torch.float64, generator=generator)
    rows = torch.randint(-50, 50, (n,), generator=generator)
    columns = torch.randint(-50, 50, (n,), generator=generator)
    rotated = apply_rope_2d(x, rows, columns)
    matrices = [rope_matrix_2d(int(r), int(c), dim) for r, c in zip(rows, columns, strict=True)]
    dense = torch.stack([torch.stack([m @ x[b, t] for t, m in enumerate(matrices)]) for b in range(2)])
    assert torch.allclose(rotated, dense, atol=1e-12)
    # Scores depend only on the 2-D offset: shifting every row and column changes nothing.
    scores = rotated[0] @ rotated[1].T
    shifted = apply_rope_2d(x, rows + 17, columns - 90)
    assert torch.allclose(shifted[0] @ shifted[1].T, scores, atol=1e-10)
    # ...and R(i)^T R(j) = R(j - i) as matrices.
    left = rope_matrix_2d(3, 7, dim).T @ rope_matrix_2d(10, -2, dim)
    assert torch.allclose(left, rope_matrix_2d(7, -9, dim), atol=1e-12)


def test_axial_all_ones_score_is_separable() -> None:
    dim = 8
    ones = torch.ones(1, dim, dtype=torch.float64)
    query = apply_rope_2d(ones, torch.tensor([0]), torch.tensor([0]))[0]
    half_theta = torch.tensor([10000.0 ** (-2 * k / (dim // 2)) for k in range(dim // 4)], dtype=torch.float64)
    for row, column in [(1, 0), (0, 1), (5, 9), (-3, 4)]:
        key = apply_rope_2d(ones, torch.tensor([row]), torch.tensor([column]))[0]
        expected = 2 * torch.cos(row * half_theta).sum() + 2 * torch.cos(column * half_theta).sum()
        assert torch.isclose(query @ key, expected, atol=1e-12)


def test_apply_rope_2d_validates() -> None:
    with pytest.raises(ValueError, match="multiple of 4"):
        apply_rope_2d(torch.randn(3, 6), torch.arange(3), torch.arange(3))
    with pytest.raises(TypeError, match="floating"):
        apply_rope_2d(torch.ones(3, 8, dtype=torch.long), torch.arange(3), torch.arange(3))
    with pytest.raises(ValueError, match="rows must have one entry per token"):
        apply_rope_2d(torch.randn(3, 8), torch.arange(4), torch.arange(3))
    with pytest.raises(ValueError, match="columns must have one entry per token"):
        apply_rope_2d(torch.randn(3, 8), torch.arange(3), torch.arange(2))
    with pytest.raises(TypeError, match="columns must be a torch.Tensor"):
        apply_rope_2d(torch.randn(3, 8), torch.arange(3), [0, 1, 2])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="bool"):
        apply_rope_2d(torch.randn(3, 8), torch.ones(3, dtype=torch.bool), torch.arange(3))
    # per-sample grids, as apply_rope's per-sample positions
    x, rows, columns = torch.randn(2, 4, 8), torch.tensor([[0, 0, 1, 1]] * 2), torch.tensor([[0, 1, 0, 1]] * 2)
    assert torch.equal(apply_rope_2d(x, rows, columns)[1], apply_rope_2d(x[1], rows[1], columns[1]))
    with pytest.raises(ValueError, match="multiple of 4"):
        rope_matrix_2d(0, 0, 6)
    with pytest.raises(TypeError, match="integer"):
        rope_matrix_2d(0, 0, 8.0)  # type: ignore[arg-type]


def test_split_heads_gives_each_head_its_block_and_merge_inverts() -> None:
    x = torch.randn(2, 5, 12)
    heads = split_heads(x, 3)
    assert heads.shape == (2, 3, 5, 4)
    for r in range(3):
        assert torch.equal(heads[:, r], x[..., 4 * r : 4 * (r + 1)])
    assert torch.equal(merge_heads(heads), x)


def test_split_heads_matches_multihead_layer() -> None:
    torch.manual_seed(0)
    layer = MultiHeadSelfAttention(16, 4, position="none").eval()
    tokens = torch.randn(7, 16)
    q, k, v = (split_heads(t, 4) for t in layer.qkv(tokens).chunk(3, dim=-1))
    weights = torch.softmax(q @ k.transpose(-1, -2) / 2.0, dim=-1)
    with torch.no_grad():
        expected, expected_weights = layer(tokens)
        output = layer.out(merge_heads(weights @ v))
    assert torch.allclose(weights, expected_weights, atol=1e-6)
    assert torch.allclose(output, expected, atol=1e-6)


def test_split_heads_validates() -> None:
    with pytest.raises(ValueError, match="divide"):
        split_heads(torch.randn(3, 10), 4)
    with pytest.raises(TypeError, match="integer"):
        split_heads(torch.randn(3, 8), 2.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least 3"):
        merge_heads(torch.randn(3, 8))
