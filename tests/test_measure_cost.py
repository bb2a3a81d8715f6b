"""posenc.measure.cost: chapter 4's cost table, against counts and sizes worked out by hand."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from posenc.measure.cost import mebibytes, parameter_count, position_method_costs


class XLScores(nn.Module):
    """One head's Transformer-XL position parameters: W_{K,R} (d, d_h), u and v (d_h)."""

    def __init__(self, model_dim: int, head_dim: int) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.zeros(model_dim, head_dim))
        self.u = nn.Parameter(torch.zeros(head_dim))
        self.v = nn.Parameter(torch.zeros(head_dim))


def test_mebibytes_and_parameter_count():
    assert mebibytes(1024, 256) == 1.0  # 2**18 float32 entries
    assert mebibytes(2**20, bytes_per_entry=8) == 8.0
    assert parameter_count(nn.Linear(3, 4)) == 16
    with pytest.raises(ValueError):
        mebibytes(-1, 2)
    with pytest.raises(TypeError):
        mebibytes(2.5)
    with pytest.raises(TypeError):
        parameter_count("linear")


def test_costs_match_hand_counts():
    d, h, d_h, c, n, layers = 32, 4, 8, 3, 64, 2
    rows = position_method_costs(d, h, d_h, c, n, layers, xl_scores=XLScores, learned_length=40, t5_buckets=16)
    assert list(rows) == ["learned absolute", "Shaw et al.", "Transformer-XL", "T5", "ALiBi"]
    scores = h * n * n * 4 / 2**20  # the (h, n, n) float32 logits
    index = n * n * 8 / 2**20
    assert [row[0] for row in rows.values()] == [
        40 * d,
        layers * 2 * (2 * c + 1) * d_h,
        layers * h * (d * d_h + 2 * d_h),
        16 * h,
        0,
    ]
    assert rows["learned absolute"][1:4] == (None, None, "none: no row beyond 39")
    assert rows["Shaw et al."][1:3] == pytest.approx(
        (2 * n * n * d_h * 4 / 2**20 + index + scores, h * n * (2 * c + 1) * 4 / 2**20 + index + scores)
    )
    assert rows["T5"][1:3] == pytest.approx((index + scores, index + scores))
    assert rows["ALiBi"][1:3] == pytest.approx((scores, scores))
    # the efficient forms all hold about one (h, n, n) tensor at long lengths
    long_rows = position_method_costs(512, 8, 64, 16, 2048, 6, xl_scores=XLScores)
    long_scores = mebibytes(8, 2048, 2048)
    assert all(1 <= row[2] / long_scores <= 1.5 for row in list(long_rows.values())[1:])


@pytest.mark.parametrize("bad", [{"clip": 0}, {"layers": -1}, {"length": 2.0}])
def test_costs_reject_bad_sizes(bad):
    sizes = {"model_dim": 8, "num_heads": 2, "head_dim": 4, "clip": 2, "length": 8, "layers": 1} | bad
    with pytest.raises((TypeError, ValueError)):
        position_method_costs(**sizes, xl_scores=XLScores)
