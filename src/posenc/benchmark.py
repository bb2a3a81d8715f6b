"""Timing of the RoPE implementations, for ``benchmarks/rope_speed.py`` and the book.

Every row times one way of rotating the same fp32 tensor of shape ``(batch, heads, L, d)``
on the CPU and reports the median over repeated runs, after a warm-up. The numbers describe
the machine that runs this code, and only that machine.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from ._validation import check_int, check_positive_float
from .rotary import RotaryEmbedding, apply_rope, apply_rope_complex, rope_frequencies, rope_matrix, rotate_half

__all__ = ["Timing", "format_timings", "median_time", "rope_timings"]


@dataclass(frozen=True)
class Timing:
    """Median time of one implementation, in milliseconds, and its ratio to the reference.

    Attributes:
        name: the implementation, as it is labelled in the table.
        median_ms: median time of one call, in milliseconds.
        relative: ``median_ms`` divided by that of the reference implementation (the first row).
    """

    name: str
    median_ms: float
    relative: float


def _rotate_half_reference(x: torch.Tensor) -> torch.Tensor:
    """The GPT-NeoX / Hugging Face formulation: ``x * cos + rotate_half(x) * sin``."""
    positions = torch.arange(x.shape[-2], dtype=torch.float32)
    freqs = torch.outer(positions, rope_frequencies(x.shape[-1]).float())
    angles = torch.cat((freqs, freqs), dim=-1)
    return x * angles.cos() + rotate_half(x) * angles.sin()


def median_time(function: Callable[[], object], *, min_run_time: float = 1.0) -> float:
    """Median wall-clock seconds of one call of ``function``, measured for about ``min_run_time`` s.

    Calls are timed in blocks (sized so a block lasts about 10 ms) after one warm-up call, and
    the median per-call time over the blocks is returned, which ignores occasional stalls.
    """
    function()
    start = time.perf_counter()
    function()
    once = max(time.perf_counter() - start, 1e-7)
    calls_per_block = max(1, int(0.01 / once))
    per_call: list[float] = []
    deadline = time.perf_counter() + min_run_time
    while time.perf_counter() < deadline or len(per_call) < 5:
        start = time.perf_counter()
        for _ in range(calls_per_block):
            function()
        per_call.append((time.perf_counter() - start) / calls_per_block)
    return statistics.median(per_call)


def rope_timings(
    shape: tuple[int, int, int, int] = (4, 8, 1024, 64), *, min_run_time: float = 1.0
) -> list[Timing]:
    """Time each RoPE implementation on a random fp32 tensor of ``shape``.

    Rows: the ``rotate_half`` formulation (reference, ratio 1.0), :func:`~posenc.rotary.apply_rope`
    in both layouts, the cached :class:`~posenc.rotary.RotaryEmbedding` module,
    :func:`~posenc.rotary.apply_rope_complex`, and the product with dense per-position matrices
    from :func:`~posenc.rotary.rope_matrix` (built outside the timing).

    Args:
        shape: ``(batch, heads, L, d)``; ``d`` even.
        min_run_time: seconds spent measuring each implementation (> 0).

    Returns:
        One :class:`Timing` per implementation, in the order above.

    Raises:
        ValueError: if ``shape`` is not four positive integers with an even last one.
    """
    if len(shape) != 4:
        raise ValueError(f"shape must be (batch, heads, seq_len, dim), got {shape}")
    for name, size in zip(("batch", "heads", "seq_len", "dim"), shape, strict=True):
        check_int(f"shape's {name}", size, minimum=1)
    if shape[-1] % 2:
        raise ValueError(f"shape's dim must be even, got {shape[-1]}")
    check_positive_float("min_run_time", min_run_time)
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0))
    seq_len, dim = shape[-2], shape[-1]
    dense = torch.stack([rope_matrix(position, dim) for position in range(seq_len)])
    module = RotaryEmbedding(dim, initial_len=seq_len)
    candidates: list[tuple[str, Callable[[], torch.Tensor]]] = [
        ("rotate_half formulation (reference)", lambda: _rotate_half_reference(x)),
        ('apply_rope, layout="half"', lambda: apply_rope(x, layout="half")),
        ('apply_rope, layout="interleaved"', lambda: apply_rope(x)),
        ("RotaryEmbedding (cached cos/sin)", lambda: module(x)),
        ("apply_rope_complex", lambda: apply_rope_complex(x)),
        ("dense rope_matrix product", lambda: torch.einsum("lij,...lj->...li", dense, x)),
    ]
    medians = [median_time(function, min_run_time=min_run_time) * 1e3 for _, function in candidates]
    return [Timing(name, median, median / medians[0]) for (name, _), median in zip(candidates, medians, strict=True)]


def format_timings(timings: list[Timing]) -> str:
    """Render timings as a Markdown table (implementation, median ms, time relative to reference).

    Raises:
        ValueError: if ``timings`` is empty.
    """
    if not timings:
        raise ValueError("timings must hold at least one Timing, got an empty list")
    width = max(len(timing.name) for timing in timings)
    lines = [
        f"| {'implementation':<{width}} | median (ms) | relative |",
        f"|{'-' * (width + 2)}|------------:|---------:|",
    ]
    lines += [f"| {t.name:<{width}} | {t.median_ms:11.3f} | {t.relative:8.2f} |" for t in timings]
    return "\n".join(lines)
