"""Reproducibility and reporting helpers used by the notebooks and the benchmarks."""

from __future__ import annotations

import numbers
import os
import platform
import random
import textwrap
from collections.abc import Callable, Mapping

import numpy as np
import torch

from ._validation import check_int

__all__ = [
    "SEED_OFFSET_VARIABLE",
    "check_gaps",
    "describe_machine",
    "max_abs_diff",
    "report",
    "seed_everything",
    "seed_offset",
    "show_error",
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


def check_gaps(gaps: Mapping[str, float | torch.Tensor], below: float, width: int = 44) -> None:
    """Report every gap of ``gaps`` with :func:`report`, then check that each is below ``below``.

    The chapters' checks of the form "these computations agree to rounding" in one call::

        check_gaps({"ours vs posenc": max_abs_diff(a, b), "ours vs PyTorch": max_abs_diff(a, c)}, 1e-5)

    Args:
        gaps: labels and gaps, in the order to print them; a gap is a real number or a
            one-element tensor.
        below: the tolerance, a finite number > 0; every gap must be strictly smaller.
        width: width of the label column, as in :func:`report`.

    Raises:
        TypeError: if ``gaps`` is not a mapping of strings to numbers, or ``below`` is not a number.
        ValueError: if ``gaps`` is empty, a gap is NaN, or ``below`` is not a finite number > 0.
        AssertionError: if a gap is not below ``below`` (the message names every such gap).
    """
    if not isinstance(gaps, Mapping):
        raise TypeError(f"gaps must be a mapping of labels to numbers, got {type(gaps).__name__}")
    if not gaps:
        raise ValueError("gaps is empty: there is nothing to check")
    if isinstance(below, bool) or not isinstance(below, numbers.Real):
        raise TypeError(f"below must be a real number, got {type(below).__name__} {below!r}")
    if not 0 < below < float("inf"):
        raise ValueError(f"below must be a finite number > 0, got {below}")
    values = {}
    for label, gap in gaps.items():
        if not isinstance(label, str):
            raise TypeError(f"every label of gaps must be a string, got {type(label).__name__} {label!r}")
        if isinstance(gap, torch.Tensor) and gap.numel() == 1:
            gap = gap.item()
        if isinstance(gap, bool) or not isinstance(gap, numbers.Real):
            raise TypeError(f"the gap of {label!r} must be a real number, got {type(gap).__name__}")
        if gap != gap:
            raise ValueError(f"the gap of {label!r} is NaN")
        values[label] = float(gap)
    for label, gap in values.items():
        report(label, gap, width)
    too_large = [f"{label} = {gap:.1e}" for label, gap in values.items() if not gap < below]
    if too_large:
        raise AssertionError(f"not below {below:.1e}: " + "; ".join(too_large))


def show_error(
    expected: type[BaseException] | tuple[type[BaseException], ...],
    function: Callable[..., object],
    /,
    *args: object,
    **kwargs: object,
) -> None:
    """Call ``function(*args, **kwargs)``, check that it raises ``expected``, and print the error.

    The chapters show how code refuses bad input (a position beyond a table, a shape that does not
    fit) with one line, ``show_error(ValueError, table, too_long)``, instead of a ``try`` block.
    The first line of the message is printed as ``TypeName: message``, wrapped to the 79
    characters of the book's code boxes.

    Args:
        expected: the exception class (or a tuple of classes) the call must raise.
        function: the callable to call with ``args`` and ``kwargs``.
        *args: positional arguments of the call.
        **kwargs: keyword arguments of the call.

    Raises:
        TypeError: if ``expected`` is not an exception class or a tuple of them, or ``function``
            is not callable.
        AssertionError: if the call returns without raising.
        BaseException: any exception the call raises that is not ``expected`` propagates.
    """
    classes = expected if isinstance(expected, tuple) else (expected,)
    if not classes or not all(isinstance(c, type) and issubclass(c, BaseException) for c in classes):
        raise TypeError(f"expected must be an exception class or a tuple of them, got {expected!r}")
    if not callable(function):
        raise TypeError(f"function must be callable, got {type(function).__name__}")
    try:
        function(*args, **kwargs)
    except classes as error:
        first_line = (str(error).splitlines() or [""])[0]
        print(textwrap.fill(f"{type(error).__name__}: {first_line}", width=79))
        return
    names = " or ".join(c.__name__ for c in classes)
    raise AssertionError(f"{getattr(function, '__name__', repr(function))} raised no {names}")


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
