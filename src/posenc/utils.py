"""Reproducibility and reporting helpers used by the notebooks and the benchmarks."""

from __future__ import annotations

import os
import platform
import random
from collections.abc import Mapping

import numpy as np
import torch

from ._validation import check_int

__all__ = [
    "SEED_OFFSET_VARIABLE",
    "describe_machine",
    "max_abs_diff",
    "report",
    "report_gaps",
    "seed_everything",
    "seed_offset",
]

#: Environment variable that shifts every seed the chapters set (``make seeds-test``): an asserted
#: claim must hold for any seed, not only for the one the text was written with.
SEED_OFFSET_VARIABLE = "POSENC_SEED_OFFSET"


def seed_offset() -> int:
    """The shift added to every seed, read from ``POSENC_SEED_OFFSET`` (0 when it is unset).

    Raises:
        ValueError: if the variable is set but is not a non-negative integer.
    """
    raw = os.environ.get(SEED_OFFSET_VARIABLE, "").strip()
    if not raw:
        return 0
    if not raw.isdigit():
        raise ValueError(f"{SEED_OFFSET_VARIABLE} must be a non-negative integer, got {raw!r}")
    return int(raw)


def seed_everything(seed: int = 0) -> torch.Generator:
    """Seed Python's, NumPy's and PyTorch's random generators so a notebook reruns identically.

    The seed actually used is ``seed + seed_offset()``: ``make seeds-test`` reruns every chapter
    with the offset set, so that a claim asserted in a chapter is tested on other seeds too.

    Args:
        seed: non-negative integer seed.

    Returns:
        A ``torch.Generator`` seeded with the (shifted) seed, for code that prefers an explicit
        generator. Chapters that need a second independent stream call ``seed_everything`` with
        another seed rather than ``torch.Generator().manual_seed``, so the offset reaches it too.

    Raises:
        ValueError: if ``seed`` is negative.
    """
    seed = check_int("seed", seed, minimum=0) + seed_offset()
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


def max_abs_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    """Largest absolute entrywise difference ``max |a - b|``: how far two computations disagree.

    Args:
        a, b: tensors of broadcastable shapes.

    Returns:
        The maximum as a Python float (0.0 for identical tensors).

    Raises:
        TypeError: if ``a`` or ``b`` is not a tensor.
        ValueError: if their shapes do not broadcast or they are empty.
    """
    for name, value in (("a", a), ("b", b)):
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    try:
        difference = (a - b).abs()
    except RuntimeError as error:
        raise ValueError(f"a {tuple(a.shape)} and b {tuple(b.shape)} do not broadcast together") from error
    if difference.numel() == 0:
        raise ValueError("a and b are empty: there is no difference to measure")
    return float(difference.max())


def report(label: str, value: float, width: int = 44) -> None:
    """Print one row of an aligned two-column table: a description and a number in ``.1e`` format.

    Chapters use it to print checks such as ``report("max |A - B|", max_abs_diff(A, B))``.
    """
    print(f"{label:<{width}}{value:>10.1e}")


def report_gaps(gaps: Mapping[str, float], below: float, width: int = 44) -> None:
    """Print each gap with :func:`report`, then check that every one is below ``below``.

    The chapters' checker for a block of claims of the form "these computations agree":
    ``report_gaps({"max |ours - theirs|": max_abs_diff(ours, theirs), ...}, below=1e-6)``.

    Args:
        gaps: one non-negative number per label, in the order to print them.
        below: the tolerance, a positive number; every gap must be strictly smaller.
        width: width of the label column, as for :func:`report`.

    Raises:
        TypeError: if ``gaps`` is not a mapping of strings to real numbers.
        ValueError: if ``gaps`` is empty, a gap is negative or NaN, or ``below`` is not positive.
        AssertionError: if a gap is not below ``below`` (the claim fails); the message names it.
    """
    if not isinstance(gaps, Mapping):
        raise TypeError(f"gaps must be a mapping of labels to numbers, got {type(gaps).__name__}")
    if not gaps:
        raise ValueError("gaps is empty: there is nothing to check")
    if isinstance(below, bool) or not isinstance(below, (int, float)) or not below > 0:
        raise ValueError(f"below must be a positive number, got {below!r}")
    for label, gap in gaps.items():
        if not isinstance(label, str):
            raise TypeError(f"gap labels must be strings, got {type(label).__name__}")
        if isinstance(gap, bool) or not isinstance(gap, (int, float)):
            raise TypeError(f"the gap of {label!r} must be a real number, got {type(gap).__name__}")
        if not gap >= 0:
            raise ValueError(f"the gap of {label!r} must be non-negative, got {gap!r}")
    for label, gap in gaps.items():
        report(label, gap, width)
    failed = [f"{label} = {gap:.1e}" for label, gap in gaps.items() if not gap < below]
    if failed:
        raise AssertionError(f"not below {below:.1e}: " + "; ".join(failed))


def describe_machine() -> str:
    """One line naming the machine that runs the code: CPU, cores, threads, Python and PyTorch.

    The book quotes timings only together with this line ("this build").
    """
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores, {torch.get_num_threads()} PyTorch threads, "
        f"Python {platform.python_version()}, PyTorch {torch.__version__}, {platform.system()}"
    )
