"""Reproducibility and reporting helpers used by the notebooks and the benchmarks."""

from __future__ import annotations

import os
import platform
import random
import textwrap
from collections.abc import Callable

import numpy as np
import torch

from ._validation import check_int

__all__ = [
    "SEED_OFFSET_VARIABLE",
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
