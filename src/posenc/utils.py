"""Reproducibility and reporting helpers used by the notebooks and the benchmarks."""

from __future__ import annotations

import os
import platform
import random

import numpy as np
import torch

from ._validation import check_int

__all__ = ["describe_machine", "seed_everything"]


def seed_everything(seed: int = 0) -> torch.Generator:
    """Seed Python's, NumPy's and PyTorch's random generators so a notebook reruns identically.

    Args:
        seed: non-negative integer seed.

    Returns:
        A ``torch.Generator`` seeded with ``seed``, for code that prefers an explicit generator.

    Raises:
        ValueError: if ``seed`` is negative.
    """
    seed = check_int("seed", seed, minimum=0)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


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
