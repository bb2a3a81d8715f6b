"""Shared helpers for the posenc test suite.

The Agg backend is selected before anything imports ``matplotlib.pyplot`` (``posenc`` does, via
``posenc.plotting``), so the plotting tests never need a display.
"""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def make_generator(seed: int) -> torch.Generator:
    """A CPU generator seeded with ``seed`` (the only source of randomness in the tests)."""
    return torch.Generator().manual_seed(seed)


def randn(*shape: int, seed: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """Seeded standard normal tensor (float64 by default, for tight comparisons)."""
    return torch.randn(*shape, generator=make_generator(seed), dtype=dtype)


@pytest.fixture(autouse=True)
def _seed_torch_and_close_figures():
    """Seed torch's global generator (module initialisation uses it) and close every figure."""
    torch.manual_seed(0)
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


#: Seeds drawn by hypothesis tests, so every example is reproducible from its seed.
seeds = st.integers(min_value=0, max_value=2**31 - 1)
#: Small even dimensions for pair-based encodings.
even_dims = st.integers(min_value=1, max_value=16).map(lambda half: 2 * half)
#: Small batch-like leading shapes, including none at all.
leading_shapes = st.lists(st.integers(min_value=1, max_value=3), min_size=0, max_size=2).map(tuple)


# Independent references re-typed from the original code, shared by test_relative and test_exercises.


def hf_t5_relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """Hugging Face ``T5Attention._relative_position_bucket``, re-typed from transformers' T5 code."""
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    relative_position_if_large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
    )
    relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets


def paper_alibi_slopes(n):
    """``get_slopes`` from the reference code of Press et al. (ALiBi), verbatim in spirit."""

    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (
        get_slopes_power_of_2(closest_power_of_2)
        + paper_alibi_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]
    )
