"""``posenc.measure.toeplitz``: the Toeplitz defect of matrices and of trained first layers."""

from __future__ import annotations

import pytest
import torch

from posenc import alibi_bias, causal_mask, store
from posenc.measure.toeplitz import causal_toeplitz_defects, first_layer_defects, toeplitz_defect


def _loop_defect(matrix: torch.Tensor) -> float:
    """The defect by an explicit loop over the diagonals (an independent formulation)."""
    rows, cols = matrix.shape
    steps = [abs(matrix[i + 1, j + 1] - matrix[i, j]).item() for i in range(rows - 1) for j in range(cols - 1)]
    return max(steps) / (matrix.max() - matrix.min()).item()


def test_toeplitz_defect_is_zero_on_toeplitz_matrices_and_matches_a_loop():
    offsets = torch.arange(6)[None, :] - torch.arange(6)[:, None]
    assert toeplitz_defect(torch.sin(offsets.double())) == 0.0
    matrix = torch.randn(5, 7, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    assert toeplitz_defect(matrix) == pytest.approx(_loop_defect(matrix), rel=1e-12)


def test_toeplitz_defect_rejects_constant_and_bad_matrices():
    with pytest.raises(ValueError, match="constant"):
        toeplitz_defect(torch.ones(3, 3))
    with pytest.raises(ValueError):
        toeplitz_defect(torch.ones(3))
    with pytest.raises(TypeError):
        toeplitz_defect(torch.ones(3, 3, dtype=torch.bool))


def test_causal_defects_vanish_for_a_bias_of_the_offset_and_not_otherwise():
    length = 8
    # Scores that depend on j - i only (ALiBi's bias), plus a key-dependent term for head 1.
    bias = alibi_bias(2, length).double()  # (h, L, L)
    keyed = bias.clone()
    keyed[1] += torch.linspace(0.0, 3.0, length, dtype=torch.float64)[None, :]
    mask = causal_mask(length)
    weights = torch.softmax(keyed.masked_fill(~mask, float("-inf")), dim=-1)[None].expand(3, -1, -1, -1)
    defects = causal_toeplitz_defects(weights)
    assert defects[0] == pytest.approx(0.0, abs=1e-9)
    # Head 1: s_ij - s_ii = bias(j - i) + 3 j / 7 - 3 i / 7 depends on j - i only too ...
    assert defects[1] == pytest.approx(0.0, abs=1e-9)
    # ... while a term of the query's position alone, added to every key but the query's own, does not.
    skewed = keyed[1] + torch.diag(torch.linspace(0.0, 2.0, length, dtype=torch.float64))
    weights = torch.softmax(skewed.masked_fill(~mask, float("-inf")), dim=-1)[None, None]
    relative = weights.log()[0, 0]
    relative = (relative - relative.diagonal()[:, None]).tril()
    assert causal_toeplitz_defects(weights)[0] == pytest.approx(_loop_defect(relative), rel=1e-9)
    assert causal_toeplitz_defects(weights)[0] > 0.05


def test_causal_defects_validate_the_weights():
    with pytest.raises(ValueError, match="at least 4 dimension"):
        causal_toeplitz_defects(torch.rand(2, 3, 4))
    with pytest.raises(ValueError, match=r"\(B, h, L, L\)"):
        causal_toeplitz_defects(torch.rand(1, 1, 4, 5))
    with pytest.raises(TypeError, match="floating"):
        causal_toeplitz_defects(torch.ones(1, 1, 3, 3, dtype=torch.long))


def test_first_layer_defects_of_a_stored_model_are_those_of_its_weights():
    name, seed = "ch8-lookback-rope", store.spec("ch8-lookback-rope").seeds[0]
    defects = first_layer_defects(name, seed, num_sequences=4)
    config = store.spec(name).config
    generator = torch.Generator().manual_seed(300 + seed)
    tokens = torch.randint(config.vocab_size, (4, config.train_len), generator=generator)
    with torch.no_grad():
        weights = store.load(name, seed).attention_weights(tokens)[0]
    assert defects == causal_toeplitz_defects(weights)
    assert len(defects) == weights.shape[1]
    with pytest.raises(ValueError):
        first_layer_defects(name, seed, num_sequences=0)
    with pytest.raises(KeyError):
        first_layer_defects("no-such-family", 0)
