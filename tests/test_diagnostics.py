"""Relativity checks: a Toeplitz gap for score matrices and a shift test for encodings."""

from __future__ import annotations

import pytest
import torch
from conftest import randn

from posenc import (
    alibi_bias,
    apply_rope,
    relativity_gap,
    score_terms,
    similarity_by_distance,
    sinusoidal_encoding,
    toeplitz_gap,
)
from posenc.diagnostics import toeplitz_gap as toeplitz_gap_in_module


def toeplitz_from_offsets(values: torch.Tensor, size: int) -> torch.Tensor:
    """Independent construction: entry (i, j) = values[j - i + size - 1]."""
    return torch.stack([torch.stack([values[j - i + size - 1] for j in range(size)]) for i in range(size)])


def test_toeplitz_gap_is_zero_exactly_for_offset_only_matrices():
    values = randn(2 * 6 - 1, seed=1)
    toeplitz = toeplitz_from_offsets(values, 6)
    assert toeplitz_gap(toeplitz) == 0.0
    assert toeplitz_gap(alibi_bias(4, 9)) == 0.0
    bumped = toeplitz.clone()
    bumped[3, 2] += 0.25
    assert toeplitz_gap(bumped) == pytest.approx(0.25)
    assert toeplitz_gap_in_module is toeplitz_gap


def test_toeplitz_gap_of_single_rows_and_batches():
    assert toeplitz_gap(torch.ones(1, 5)) == 0.0
    batch = torch.stack((toeplitz_from_offsets(randn(7, seed=2), 4), randn(4, 4, seed=3)))
    assert toeplitz_gap(batch) == toeplitz_gap(batch[1]) > 0


def test_relativity_gap_separates_rope_from_absolute_addition():
    q, k = randn(2, 12, 16, seed=4), randn(2, 12, 16, seed=5)
    assert relativity_gap(apply_rope, q, k) < 1e-10
    assert relativity_gap(lambda x, p: apply_rope(x, p, layout="half"), q, k, shifts=[3, 5000]) < 1e-9

    def add_sinusoid(x, positions):
        return x + sinusoidal_encoding(int(positions.max()) + 1, 16, dtype=x.dtype)[positions]

    assert relativity_gap(add_sinusoid, q, k) > 0.1


def test_relativity_gap_detects_the_seed_000_bug():
    # Evens and odds paired with cat(freqs, freqs): not a rotation, so scores move with a shift.
    def buggy(x, positions):
        angles = positions.double()[:, None] * 10000.0 ** (-torch.arange(0, 16, 2, dtype=torch.float64) / 16)
        angles = torch.cat((angles, angles), -1)
        turned = torch.cat((-x[..., 1::2], x[..., 0::2]), -1)
        return x * angles.cos() + turned * angles.sin()

    q, k = randn(10, 16, seed=6), randn(10, 16, seed=7)
    assert relativity_gap(buggy, q, k) > 1e-2


def test_rejects_bad_arguments():
    q = randn(4, 8, seed=8)
    with pytest.raises(TypeError, match="encode must be a callable"):
        relativity_gap("rope", q, q)
    with pytest.raises(ValueError, match="same shape"):
        relativity_gap(apply_rope, q, q[:3])
    with pytest.raises(TypeError, match="queries must be a floating-point"):
        relativity_gap(apply_rope, q.long(), q.long())
    with pytest.raises(ValueError, match="positions must have shape"):
        relativity_gap(apply_rope, q, q, torch.arange(3))
    with pytest.raises(ValueError, match="at least one shift"):
        relativity_gap(apply_rope, q, q, shifts=[])
    with pytest.raises(ValueError, match="matrix"):
        toeplitz_gap(torch.ones(4))
    with pytest.raises(TypeError, match="real numbers"):
        toeplitz_gap(torch.ones(3, 3, dtype=torch.bool))


def test_score_terms_are_the_four_products_and_add_up_to_the_score():
    x, p, w = randn(2, 6, 4, seed=3), randn(2, 6, 4, seed=4), randn(4, 4, seed=5)
    terms = score_terms(x, p, w)
    assert list(terms) == ["content-content", "content-position", "position-content", "position-position"]
    expected = [x @ w @ x.mT, x @ w @ p.mT, p @ w @ x.mT, p @ w @ p.mT]
    for term, product in zip(terms.values(), expected, strict=True):
        assert term.shape == (2, 6, 6) and torch.equal(term, product)
    torch.testing.assert_close(sum(terms.values()), (x + p) @ w @ (x + p).mT, rtol=0, atol=1e-5)
    # With p = 0 only the content-content term is left.
    zero = score_terms(x, torch.zeros_like(x), w)
    assert all(zero[name].abs().max() == 0 for name in list(zero)[1:])


@pytest.mark.parametrize(
    ("x", "p", "w", "error"),
    [
        (torch.zeros(3, 4), torch.zeros(3, 5), torch.zeros(4, 4), ValueError),
        (torch.zeros(3, 4), torch.zeros(3, 4), torch.zeros(4, 3), ValueError),
        (torch.zeros(4), torch.zeros(4), torch.zeros(4, 4), ValueError),
        ([[0.0]], torch.zeros(1, 1), torch.zeros(1, 1), TypeError),
    ],
)
def test_score_terms_rejects_bad_arguments(x, p, w, error):
    with pytest.raises(error):
        score_terms(x, p, w)


def test_similarity_by_distance_averages_the_cosines_on_each_diagonal():
    table = randn(7, 5, seed=6)
    unit = table / table.norm(dim=-1, keepdim=True)
    expected = [sum(float(unit[i] @ unit[i + r]) for i in range(7 - r)) / (7 - r) for r in range(7)]
    torch.testing.assert_close(similarity_by_distance(table), torch.tensor(expected, dtype=torch.float64))
    # Rescaling rows changes nothing; one-hot rows are orthogonal at every distance but 0.
    torch.testing.assert_close(similarity_by_distance(3.0 * table), similarity_by_distance(table))
    assert similarity_by_distance(torch.eye(4)).tolist() == [1.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize(
    ("table", "error"), [(torch.ones(3), ValueError), (torch.zeros(2, 3), ValueError), ([[1.0]], TypeError)]
)
def test_similarity_by_distance_rejects_bad_tables(table, error):
    with pytest.raises(error):
        similarity_by_distance(table)
