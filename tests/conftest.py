"""Shared helpers for the posenc test suite.

The Agg backend is selected before anything imports ``matplotlib.pyplot`` (``posenc`` does, via
``posenc.plotting``), so the plotting tests never need a display.
"""

from __future__ import annotations

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
