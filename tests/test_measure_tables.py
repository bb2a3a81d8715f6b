"""``posenc.measure.tables``: the energy of one table in the leading principal span of another."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from posenc.measure.tables import decoding_errors, distance_to_training_rows, energy_in_leading_span


def test_dims_and_energy_match_an_independent_svd_computation():
    generator = torch.Generator().manual_seed(0)
    # Decreasing scales: the leading directions are well separated.
    source = torch.randn(200, 8, generator=generator, dtype=torch.float64) * torch.linspace(3.0, 0.2, 8)
    target = torch.randn(50, 8, generator=generator, dtype=torch.float64)
    result = energy_in_leading_span(source, target, shares=(0.5, 0.9, 1.0))
    # Independent route: numpy's SVD of the source, singular values squared are the variances.
    _, singular, right = np.linalg.svd(source.numpy(), full_matrices=False)
    carried = np.cumsum(singular**2) / np.sum(singular**2)
    for share, k, energy in zip((0.5, 0.9, 1.0), result.dims, result.energy, strict=True):
        expected_k = min(int(np.searchsorted(carried, share - 1e-12)) + 1, 8)
        assert k == expected_k
        inside = target.numpy() @ right[:k].T
        assert energy == pytest.approx(np.sum(inside**2) / np.sum(target.numpy() ** 2), rel=1e-9)
    assert result.random_share == [k / 8 for k in result.dims]
    assert result.energy[-1] == pytest.approx(1.0)  # all d directions span everything


def test_a_target_inside_the_leading_span_has_all_its_energy_there():
    source = torch.diag(torch.tensor([10.0, 1.0, 0.1]))
    target = torch.tensor([[2.0, 0.0, 0.0], [-1.0, 0.0, 0.0]])
    result = energy_in_leading_span(source, target, shares=[0.5])
    assert result.dims == [1]
    assert result.energy[0] == pytest.approx(1.0)
    orthogonal = energy_in_leading_span(source, torch.tensor([[0.0, 0.0, 3.0]]), shares=[0.5])
    assert orthogonal.energy[0] == pytest.approx(0.0, abs=1e-12)


def test_bad_arguments_are_named():
    table = torch.randn(5, 4)
    with pytest.raises(TypeError, match="torch.Tensor"):
        energy_in_leading_span(table.numpy(), table)
    with pytest.raises(TypeError, match="floating"):
        energy_in_leading_span(table, torch.ones(5, 4, dtype=torch.long))
    with pytest.raises(ValueError, match="2-D"):
        energy_in_leading_span(table, torch.randn(2, 5, 4))
    with pytest.raises(ValueError, match="same width"):
        energy_in_leading_span(table, torch.randn(5, 3))
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        energy_in_leading_span(table, table, shares=[0.0])
    with pytest.raises(ValueError, match="no energy"):
        energy_in_leading_span(table, torch.zeros(3, 4))


def test_distance_to_training_rows_matches_a_brute_force_loop():
    table = torch.randn(12, 6, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    distances = distance_to_training_rows(table, 5)
    norm = table[0].norm().item()
    for i, row in enumerate(table):
        nearest = min((row - table[j]).norm().item() for j in range(5))
        assert distances[i].item() == pytest.approx(nearest / norm, rel=1e-12, abs=1e-15)
    assert torch.all(distances[:5] == 0)


def test_distance_to_training_rows_validates_its_arguments():
    with pytest.raises(ValueError, match="at most"):
        distance_to_training_rows(torch.randn(4, 2), 5)
    with pytest.raises(ValueError, match=">= 1"):
        distance_to_training_rows(torch.randn(4, 2), 0)
    with pytest.raises(ValueError, match="row 0 is zero"):
        distance_to_training_rows(torch.zeros(4, 2), 2)
    with pytest.raises(ValueError, match="2-D"):
        distance_to_training_rows(torch.randn(2, 4, 2), 2)
    with pytest.raises(TypeError):
        distance_to_training_rows(torch.ones(4, 2, dtype=torch.long), 2)


def test_decoding_errors_match_an_independent_decoding_of_the_same_draws():
    torch.manual_seed(0)  # a fixed draw, checked to have no near-ties
    state = torch.random.get_rng_state()
    alone, mixed = decoding_errors(8, 30, 20, 200)
    torch.random.set_rng_state(state)
    tokens = (torch.randn(30, 8) / np.sqrt(8)).double().numpy()
    positions = (torch.randn(20, 8) / np.sqrt(8)).double().numpy()
    ids = torch.randint(30, (200,)).numpy()
    where = torch.randint(20, (200,)).numpy()
    # Independent route: for each sample, the nearest token by dot product, in float64 numpy.
    expected = [
        np.mean([np.argmax(tokens @ (tokens[i] + shift)) != i for i, shift in zip(ids, shifts, strict=True)])
        for shifts in (np.zeros((200, 8)), positions[where])
    ]
    # The float32 share of 200 samples against numpy's float64 count (no near-ties in this draw).
    assert alone == pytest.approx(expected[0], abs=1e-6)
    assert mixed == pytest.approx(expected[1], abs=1e-6)
    assert 0.0 < alone < mixed  # narrow: random tokens are confusable, positions make it worse


def test_wide_tables_decode_without_errors_and_bad_arguments_are_named():
    assert decoding_errors(512, 50, 16, 300) == (0.0, 0.0)
    with pytest.raises(ValueError, match="vocab_size"):
        decoding_errors(8, 1, 4, 10)
    with pytest.raises(TypeError, match="width"):
        decoding_errors(8.0, 10, 4, 10)
    with pytest.raises(ValueError, match="num_samples"):
        decoding_errors(8, 10, 4, 0)
