"""Probe inputs for the checkers with their own diagnosis, chosen to separate mistakes, and their references.

The checkers of :mod:`posenc.exercises.rotary` and :mod:`posenc.exercises.rotary_2d` diagnose their hidden cases
themselves; when that diagnosis names no mistake, the generic readings of ``posenc.exercises._transforms`` are read
on these few inputs instead: far and real-valued positions (where float32 angles and rounded positions show), bases
other than the default (where an ignored or squared base shows), batches and grids that are not square (where an
axis slip shows). Each reference takes the student's arguments and computes in float64.
"""

from __future__ import annotations

import torch

from ..rope2d import apply_rope_2d
from ..rotary import apply_rope
from ._readings import _Case
from .checking import _SEED

__all__: list[str] = []


def _rope_probe_reference(x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0, *,
                          layout: str = "interleaved") -> torch.Tensor:
    return apply_rope(x.double(), positions, base=base, layout=layout)


def _rope_probes() -> list[_Case]:
    """Probe inputs that separate mistakes: far and real-valued positions, a base other than the default, a batch."""
    generator = torch.Generator().manual_seed(_SEED + 2)
    x = torch.randn(2, 5, 16, generator=generator, dtype=torch.float64)
    y = torch.randn(6, 8, generator=generator, dtype=torch.float64)
    return [_Case((x, torch.arange(3, 8)), "probe", {"base": 100.0}),
            _Case((y, torch.tensor([0.0, 0.5, 7.0, 40.0, 1000.0, 4001.0])), "probe", {"base": 10000.0}),
            _Case((y[:4], torch.tensor([2, 3, 5, 11])), "probe", {"base": 500.0})]


def _rope_2d_probe_reference(x: torch.Tensor, rows: torch.Tensor, columns: torch.Tensor,
                             base: float = 10000.0) -> torch.Tensor:
    return apply_rope_2d(x.double(), rows, columns, base=base)


def _rope_2d_probes() -> list[_Case]:
    generator = torch.Generator().manual_seed(_SEED + 2)
    grid = torch.arange(12)
    return [_Case((torch.randn(12, 16, generator=generator, dtype=torch.float64), grid // 4, grid % 4), "probe",
                  {"base": 100.0}),
            _Case((torch.randn(2, 6, 8, generator=generator, dtype=torch.float64), torch.tensor([0, 0, 0, 5, 5, 5]),
                   torch.tensor([0, 7, 30, 0, 7, 30])), "probe", {"base": 10000.0})]
