"""posenc.measure.longrange: each measurement against an independent computation, and bad inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from posenc.measure.longrange import (
    cohere2_layer_probe,
    decay_sweep,
    first_position_staying_above,
    float_formats,
    hf_inv_freq_dtypes,
    low_precision_errors,
    low_precision_score_errors,
    low_precision_table,
    monte_carlo_z,
    octave_summary,
    random_phase_level,
    scores_nearby,
    scores_with_tables,
)
from posenc.rotary import apply_rope, rope_matrix


def _samples(n: int = 500, dim: int = 8) -> tuple[torch.Tensor, torch.Tensor]:
    queries = torch.randn(n, dim, dtype=torch.float64)
    return queries, queries + 0.5 * torch.randn_like(queries)


def test_monte_carlo_z_is_zero_at_the_sample_means_and_counts_standard_errors():
    queries, keys = _samples()
    offsets = [-7, 0, 3, 40]
    # q^T R_delta k with the dense matrix, not apply_rope
    per_offset = [queries @ rope_matrix(d, 8, dtype=torch.float64) @ keys.T for d in offsets]
    samples = [torch.diagonal(s) for s in per_offset]
    means = torch.stack([s.mean() for s in samples])
    assert monte_carlo_z(queries, keys, offsets, means) == pytest.approx(0, abs=1e-9)
    stderr = samples[2].std().item() / math.sqrt(len(queries))
    moved = means.clone()
    moved[2] += 2.5 * stderr
    assert monte_carlo_z(queries, keys, offsets, moved) == pytest.approx(2.5, rel=1e-9)


def test_monte_carlo_z_validates():
    queries, keys = _samples()
    with pytest.raises(ValueError, match="same shape"):
        monte_carlo_z(queries, keys[:, :4], [0], [0.0])
    with pytest.raises(ValueError, match="one length"):
        monte_carlo_z(queries, keys, [0, 1], [0.0])
    with pytest.raises(TypeError):
        monte_carlo_z(queries.numpy(), keys, [0], [0.0])
    with pytest.raises(ValueError, match="even"):
        monte_carlo_z(queries[:, :3], keys[:, :3], [0], [0.0])


def _exponential(offsets: torch.Tensor, dim: int, base: float) -> torch.Tensor:
    return dim * torch.exp(-offsets.double() / base) * torch.cos(offsets.double())


def test_decay_sweep_matches_a_direct_computation():
    offsets = torch.arange(1, 3000)
    summaries, crossings, ripple = decay_sweep(_exponential, [10.0, 100.0], [4, 8], offsets, far=1000)
    assert set(crossings) == {(10.0, 4), (10.0, 8), (100.0, 4), (100.0, 8)}
    for (base, dim), first in crossings.items():
        relative = (_exponential(offsets, dim, base) / dim).numpy()
        assert first == int(offsets[np.flatnonzero(relative < 0.5)[0]])
        assert ripple[base, dim] == pytest.approx(np.abs(relative[offsets.numpy() >= 1000]).max())
        assert summaries[base, dim].mean.shape == summaries[base, dim].high.shape
        assert np.all(summaries[base, dim].low <= summaries[base, dim].high)


def test_decay_sweep_validates():
    offsets = torch.arange(1, 100)
    with pytest.raises(ValueError, match="reaches"):
        decay_sweep(_exponential, [10.0], [4], offsets, far=1000)
    with pytest.raises(ValueError, match="never falls"):
        decay_sweep(lambda o, d, b: torch.full(o.shape, float(d)), [10.0], [4], offsets, far=50)
    with pytest.raises(ValueError, match="empty"):
        decay_sweep(_exponential, [], [4], offsets, far=50)


def test_octave_summary_is_the_mean_and_maximum_of_each_octave():
    curve = torch.rand(70, dtype=torch.float64)
    summary = octave_summary(curve, 6)
    assert summary.shape == (2, 6)
    values = curve.numpy()
    for e in range(6):
        octave = values[2**e : 2 ** (e + 1)]
        assert summary[0, e].item() == pytest.approx(octave.mean())
        assert summary[1, e].item() == octave.max()
    with pytest.raises(ValueError, match="at least 2"):
        octave_summary(curve, 7)
    with pytest.raises(ValueError):
        octave_summary(curve, 0)


def test_float_formats_knows_the_mantissas_and_spacings():
    rows, lost = float_formats([torch.float16, torch.bfloat16, torch.float32])
    assert [row[:3] for row in rows] == [("float16", 10, 2049), ("bfloat16", 7, 257), ("float32", 23, 16777217)]
    assert [row[3] for row in rows] == ["32", "256", "0.00390625"]  # spacing near 50 000: 2^(15 - p)
    assert rows[0][4] == "65504"
    assert lost == [[False, False, True]] * 3
    with pytest.raises(ValueError, match="floating-point"):
        float_formats([torch.int32])
    with pytest.raises(ValueError):
        float_formats([])


def test_scores_nearby_against_a_loop_over_positions_and_offsets():
    query, key = torch.randn(2, 8, dtype=torch.float64).unbind(0)
    positions = torch.tensor([10, 100])
    scores = scores_nearby(query, key, positions, apply_rope, window=5)
    assert scores.shape == (2, 5) and scores.dtype == torch.float64
    for row, m in enumerate(positions.tolist()):
        for t in range(5):
            expected = (rope_matrix(m, 8, dtype=torch.float64) @ query) @ (
                rope_matrix(m - t, 8, dtype=torch.float64) @ key) / math.sqrt(8)
            assert scores[row, t].item() == pytest.approx(expected.item(), abs=1e-12)
    with pytest.raises(ValueError, match="vectors"):
        scores_nearby(query[None], key[None], positions, apply_rope)
    with pytest.raises(ValueError):
        scores_nearby(query, key, positions, apply_rope, window=0)


def test_low_precision_errors_bounds_apply_rope_and_measures_the_naive_rotation():
    x, positions = torch.randn(3, 16), torch.tensor([5, 3000, 60000])
    exact = low_precision_errors(x, positions, torch.bfloat16, lambda v, p: apply_rope(v.double(), p))
    assert exact["dtype"] == "torch.bfloat16"
    assert exact["over_half_ulp"] <= 1e-5
    assert exact["naive"] == [0.0, 0.0, 0.0]  # the same rounded inputs, rotated exactly
    assert all(e <= h + 1e-5 for e, h in zip(exact["error"], exact["half_ulp"], strict=True))
    x_low = x.bfloat16().double()
    bound = (torch.finfo(torch.bfloat16).eps / 2 * apply_rope(x_low, positions).abs()).amax(-1)
    np.testing.assert_allclose(exact["half_ulp"], bound.numpy())
    with pytest.raises(ValueError, match="one position per row|positions"):
        low_precision_errors(x, positions[:2], torch.bfloat16, apply_rope)
    with pytest.raises(ValueError, match="floating-point"):
        low_precision_errors(x, positions, torch.int8, apply_rope)


def _angles_in(dtype: torch.dtype):
    """A rotation whose angles are formed in dtype, written with the dense matrix otherwise."""

    def rotate(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        theta = (10000.0 ** (-torch.arange(0, x.shape[-1], 2, dtype=torch.float64) / x.shape[-1])).to(dtype)
        angles = (positions.to(dtype)[:, None] * theta).double()
        pairs = torch.complex(x[..., 0::2].double(), x[..., 1::2].double()) * torch.exp(1j * angles)
        return torch.stack((pairs.real, pairs.imag), -1).flatten(-2)

    return rotate


def test_low_precision_score_errors_against_direct_computations():
    query, key = torch.randn(2, 16, dtype=torch.float64).unbind(0)
    positions = torch.tensor([100.0, 3000.0, 40000.0], dtype=torch.float64)
    exact_half = lambda x, m: apply_rope(x.double(), m, layout="half")  # noqa: E731
    errors = low_precision_score_errors(query, key, positions, _angles_in, exact_half,
                                        [torch.float16, torch.float32], window=8)
    exact = scores_nearby(query, key, positions, apply_rope, window=8)
    np.testing.assert_allclose(errors["exact"], exact, atol=1e-10)
    assert set(errors["angles"]) == {torch.float16, torch.float32}
    assert errors["angles"][torch.float16].shape == (3,)
    # float16 angles are far worse than float32 ones, and float16's error grows with the position
    assert (errors["angles"][torch.float16] > 100 * errors["angles"][torch.float32]).all()
    # rounding the inputs and rotating exactly: the error depends on the offsets only
    for dtype in (torch.float16, torch.bfloat16):
        expected = scores_nearby(query.to(dtype).double(), key.to(dtype).double(), positions, apply_rope, 8)
        np.testing.assert_allclose(errors["rounding"][dtype], (expected - exact).abs().amax(-1), atol=1e-10)
        assert errors["rounding"][dtype].std() < 1e-9
    assert errors["rounding"][torch.bfloat16].mean() > errors["rounding"][torch.float16].mean()
    # an exact "bf16 rotation" of the rounded inputs has no error at all
    assert errors["bf16_rotation"].shape == (3, 8) and errors["bf16_rotation"].abs().max() < 1e-10
    with pytest.raises(ValueError, match="formats"):
        low_precision_score_errors(query, key, positions, _angles_in, exact_half, [])


def test_first_position_staying_above():
    positions = torch.tensor([10.0, 20.0, 30.0, 40.0])
    assert first_position_staying_above(positions, torch.tensor([2.0, 0.0, 2.0, 3.0]), torch.ones(4)) == 30.0
    assert first_position_staying_above(positions, torch.full((4,), 2.0), 1.0) == 10.0
    assert first_position_staying_above(positions, torch.tensor([2.0, 2.0, 2.0, 0.0]), 1.0) == math.inf
    with pytest.raises(ValueError, match="one length"):
        first_position_staying_above(positions, torch.ones(3), 0.0)


def test_low_precision_table_flattens_low_precision_errors():
    x, positions = torch.randn(3, 16), torch.tensor([5, 3000, 60000])
    naive_for = _angles_in
    table = low_precision_table(x, positions, [torch.float16, torch.bfloat16], naive_for)
    per_dtype = [low_precision_errors(x, positions, t, naive_for(t)) for t in (torch.float16, torch.bfloat16)]
    assert table["dtypes"] == ["torch.float16", "torch.bfloat16"]
    assert table["over_half_ulp"] == [e["over_half_ulp"] for e in per_dtype]
    ratios = [n / h for e in per_dtype for n, h in zip(e["naive"], e["half_ulp"], strict=True)]
    assert table["naive_over_half_ulp"] == ratios
    assert len(table["rows"]) == 6 and len(table["columns"]) == 5
    assert table["rows"][4] == ("torch.bfloat16", 3000, per_dtype[1]["error"][1], per_dtype[1]["half_ulp"][1],
                                per_dtype[1]["naive"][1])
    with pytest.raises(ValueError, match="at least one"):
        low_precision_table(x, positions, [], naive_for)


def test_random_phase_level_is_the_mean_of_a_random_walk():
    torch.manual_seed(0)
    level = random_phase_level(64, samples=2000)
    # E|σ_l| = sqrt(π l) / 2 for large l (a Rayleigh variable); the mean over l = 1..64
    expected = np.mean([math.sqrt(math.pi * ell) / 2 for ell in range(1, 65)])
    assert level == pytest.approx(expected, rel=0.03)
    with pytest.raises(ValueError):
        random_phase_level(0)


def test_scores_with_tables_matches_apply_rope_with_exact_tables():
    dim = 8
    theta = 10000.0 ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)

    def tables(positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        angles = positions.double()[:, None] * theta
        return angles.cos(), angles.sin()

    query, keys = torch.randn(1, dim, dtype=torch.float64), torch.randn(5, dim, dtype=torch.float64)
    key_positions, query_at = torch.tensor([0, 3, 7, 100, 2000]), torch.tensor([50])
    expected = (apply_rope(keys, key_positions) @ apply_rope(query, query_at).T)[:, 0]
    np.testing.assert_allclose(scores_with_tables(tables, query, keys, key_positions, query_at), expected, atol=1e-12)
    with pytest.raises(ValueError, match="query must be"):
        scores_with_tables(tables, query[0], keys, key_positions, query_at)
    with pytest.raises(TypeError, match="callable"):
        scores_with_tables(None, query, keys, key_positions, query_at)  # type: ignore[arg-type]


def test_cohere2_layer_probe_finds_the_nope_layer():
    torch.manual_seed(0)
    layer_types, moved = cohere2_layer_probe(num_layers=4)
    assert layer_types == ["sliding_attention"] * 3 + ["full_attention"]
    assert moved == [True, True, True, False]
    with pytest.raises(ValueError):
        cohere2_layer_probe(num_layers=0)


def test_hf_inv_freq_dtypes_separates_loading_from_converting():
    from transformers import LlamaConfig
    from transformers.utils import logging as hf_logging

    tiny = LlamaConfig(hidden_size=16, intermediate_size=32, vocab_size=32, num_hidden_layers=1,
                       num_attention_heads=2)
    bar_before = hf_logging.is_progress_bar_enabled()
    assert hf_inv_freq_dtypes(tiny) == ["torch.float32", "torch.float32", "torch.bfloat16"]
    assert hf_logging.is_progress_bar_enabled() == bar_before  # the setting is restored
    with pytest.raises(TypeError, match="LlamaConfig"):
        hf_inv_freq_dtypes({"hidden_size": 16})
